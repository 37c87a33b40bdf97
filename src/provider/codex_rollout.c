/*
 * codex's rollout files, $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl:
 * the record of a thread that codex appends to, read for what its events do not
 * say (a resumed thread's running token total, the model of a turn).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "provider/codex_rollout.h"
#include "provider/common.h"
#include "util/buf.h"
#include "util/file.h"

/* The largest rollout file read: a long thread's record grows with every turn. */
#define MAX_ROLLOUT ((size_t)512 << 20)

/* The token object named `key` anywhere under o (rollout lines nest it in payload/info). */
static const json_t *find_key(const json_t *o, const char *key, int depth)
{
    if (!json_is_object(o) || depth > 6)
        return NULL;
    const json_t *v = json_object_get(o, key);
    if (json_is_object(v))
        return v;
    const char *k;
    json_t *c;
    json_object_foreach((json_t *)o, k, c)
    {
        const json_t *f = find_key(c, key, depth + 1);
        if (f)
            return f;
    }
    return NULL;
}

void ar_codex_token_usage(const json_t *t, struct ar_usage *raw)
{
    raw->input = ar_pv_u64(t, "input_tokens");
    raw->cache_read = ar_pv_u64(t, "cached_input_tokens");
    raw->cache_write = ar_pv_u64(t, "cache_write_input_tokens");
    raw->output = ar_pv_u64(t, "output_tokens");
    raw->reasoning = ar_pv_u64(t, "reasoning_output_tokens");
}

/*
 * Calls fn for each non-empty line of data, last line first (a rollout's
 * newest state is at its end), until fn returns non-zero; returns that value.
 */
static int each_line_backwards(const char *data, size_t len,
                               int (*fn)(const char *line, size_t n, void *arg), void *arg)
{
    size_t end = len;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && data[start - 1] != '\n')
            start--;
        const char *line = data + start;
        /* `line` is never NULL; the test keeps GCC's sanitizer build from thinking so. */
        int rc = end > start && line ? fn(line, end - start, arg) : 0;
        if (rc)
            return rc;
        end = start ? start - 1 : 0;
    }
    return 0;
}

static int total_in_line(const char *line, size_t n, void *arg)
{
    if (!memmem(line, n, "total_token_usage", 17) && !memmem(line, n, "thread_token_usage", 18))
        return 0;
    json_t *o = ar_pv_parse_object(line, n);
    const json_t *t = find_key(o, "thread_token_usage", 0);
    if (!t)
        t = find_key(o, "total_token_usage", 0);
    if (t)
        ar_codex_token_usage(t, arg);
    json_decref(o);
    return t != NULL;
}

int ar_codex_rollout_total(const char *data, size_t len, struct ar_usage *raw)
{
    /* The last line carrying the thread total wins. */
    return each_line_backwards(data, len, total_in_line, raw) ? 0 : AR_ENOJSON;
}

static char *find_rollout(const char *dir, const char *suffix, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *found = NULL;
    struct dirent *e;
    size_t slen = strlen(suffix);
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
            break;
        size_t n = strlen(e->d_name);
        if (!strncmp(e->d_name, "rollout-", 8) && n > slen &&
            !strcmp(e->d_name + n - slen, suffix) && ar_is_file(path)) {
            found = path;
            break;
        }
        if (depth < 4 && ar_is_dir(path))
            found = find_rollout(path, suffix, depth + 1);
        free(path);
    }
    closedir(d);
    return found;
}

/*
 * The day directory a thread's rollout is in, YYYY/MM/DD under sessions: codex names it by
 * the local date when the thread began, and a thread id is a UUIDv7, whose first 48 bits
 * are that time in ms. Writes "<sessions>/YYYY/MM/DD" for the local date (utc: the UTC
 * one) into out; 0, or -1 when the id carries no time.
 */
static int day_dir(const char *sessions, const char *id, int utc, char *out, size_t size)
{
    static const int at[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12 };
    unsigned long long ms = 0;
    if (strlen(id) < 36 || id[8] != '-' || id[13] != '-' || id[14] != '7')
        return -1;
    for (size_t i = 0; i < 12; i++) {
        char c = id[at[i]];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        ms = ms << 4 | (unsigned)v;
    }
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (!(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)))
        return -1;
    int n = snprintf(out, size, "%s/%04d/%02d/%02d", sessions, tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* Reads the rollout file of a thread, $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl:
 * from the day it began first, so a call reads one directory, not every session the user
 * ever had; the whole tree only when that day does not hold it. */
static int read_rollout(const char *thread_id, struct ar_buf *out)
{
    const char *home = getenv("CODEX_HOME");
    char *sessions = NULL;
    if (home && *home) {
        if (asprintf(&sessions, "%s/sessions", home) < 0)
            return AR_ENOMEM;
    } else {
        const char *h = getenv("HOME");
        if (!h || asprintf(&sessions, "%s/.codex/sessions", h) < 0)
            return AR_ENOJSON;
    }
    char *suffix = NULL;
    int rc = AR_ENOJSON;
    if (!strchr(thread_id, '/') && asprintf(&suffix, "-%s.jsonl", thread_id) >= 0) {
        char *path = NULL;
        char day[PATH_MAX];
        for (int utc = 0; !path && utc < 2; utc++)
            if (day_dir(sessions, thread_id, utc, day, sizeof(day)) == 0)
                path = find_rollout(day, suffix, 4);
        if (!path)
            path = find_rollout(sessions, suffix, 0);
        if (path && ar_file_read_own(path, out, NULL) == 0)
            rc = 0;
        free(path);
        free(suffix);
    }
    free(sessions);
    return rc;
}

int ar_codex_thread_total(const char *thread_id, struct ar_usage *raw)
{
    struct ar_buf b;
    ar_buf_init(&b, MAX_ROLLOUT);
    int rc = read_rollout(thread_id, &b);
    if (rc == 0)
        rc = ar_codex_rollout_total(ar_buf_cstr(&b), b.len, raw);
    ar_buf_finish(&b);
    return rc;
}

static int model_in_line(const char *line, size_t n, void *arg)
{
    if (!memmem(line, n, "\"turn_context\"", 14))
        return 0;
    json_t *o = ar_pv_parse_object(line, n);
    const char *m = ar_pv_str(json_object_get(o, "payload"), "model");
    char **model = arg;
    *model = m && *m ? strdup(m) : NULL;
    json_decref(o);
    return *model != NULL;
}

char *ar_codex_rollout_model(const char *data, size_t len)
{
    char *model = NULL;
    each_line_backwards(data, len, model_in_line, &model);
    return model;
}

char *ar_codex_thread_model(const char *thread_id)
{
    struct ar_buf b;
    ar_buf_init(&b, MAX_ROLLOUT);
    char *model = NULL;
    if (read_rollout(thread_id, &b) == 0)
        model = ar_codex_rollout_model(ar_buf_cstr(&b), b.len);
    ar_buf_finish(&b);
    return model;
}

static int version_in_line(const char *line, size_t n, void *arg)
{
    if (!memmem(line, n, "\"session_meta\"", 14))
        return 0;
    json_t *o = ar_pv_parse_object(line, n);
    const char *v = ar_pv_str(json_object_get(o, "payload"), "cli_version");
    char **version = arg;
    *version = v && *v ? strdup(v) : NULL;
    json_decref(o);
    return *version != NULL;
}

/* The name of a window of window_minutes: claude's words where they fit, else "<N>m". */
static void window_name(long long minutes, char *out, size_t size)
{
    if (minutes == 300)
        snprintf(out, size, "five_hour");
    else if (minutes == 10080)
        snprintf(out, size, "seven_day");
    else
        snprintf(out, size, "%lldm", minutes);
}

static int limits_in_line(const char *line, size_t n, void *arg)
{
    if (!memmem(line, n, "\"rate_limits\"", 13))
        return 0;
    struct ar_codex_rollout_facts *f = arg;
    json_t *o = ar_pv_parse_object(line, n);
    const json_t *rl = json_object_get(json_object_get(o, "payload"), "rate_limits");
    const json_t *best = NULL;
    static const char *const names[] = { "primary", "secondary", NULL };
    for (size_t i = 0; names[i]; i++) {
        const json_t *w = json_object_get(rl, names[i]);
        if (!json_is_object(w))
            continue;
        if (!best || json_number_value(json_object_get(w, "used_percent")) >
                         json_number_value(json_object_get(best, "used_percent")))
            best = w;
    }
    if (best) {
        const json_t *used = json_object_get(best, "used_percent");
        f->has_limits = 1;
        f->used_percent = json_is_number(used) ? json_number_value(used) : -1;
        const json_t *at = json_object_get(best, "resets_at");
        f->resets_at = json_is_number(at) ? (long long)json_number_value(at) : 0;
        window_name((long long)json_number_value(json_object_get(best, "window_minutes")),
                    f->window, sizeof(f->window));
        int reached = ar_pv_str(rl, "rate_limit_reached_type") != NULL ||
                      (json_is_number(used) && json_number_value(used) >= 100);
        snprintf(f->status, sizeof(f->status), "%s", reached ? "rejected" : "allowed");
    }
    json_decref(o);
    return best != NULL;
}

void ar_codex_rollout_facts(const char *data, size_t len, struct ar_codex_rollout_facts *f)
{
    memset(f, 0, sizeof(*f));
    each_line_backwards(data, len, model_in_line, &f->model);
    each_line_backwards(data, len, version_in_line, &f->cli_version);
    each_line_backwards(data, len, limits_in_line, f);
}

int ar_codex_thread_facts(const char *thread_id, struct ar_codex_rollout_facts *f)
{
    memset(f, 0, sizeof(*f));
    struct ar_buf b;
    ar_buf_init(&b, MAX_ROLLOUT);
    int rc = read_rollout(thread_id, &b);
    if (rc == 0)
        ar_codex_rollout_facts(ar_buf_cstr(&b), b.len, f);
    ar_buf_finish(&b);
    return rc;
}

void ar_codex_rollout_facts_finish(struct ar_codex_rollout_facts *f)
{
    free(f->model);
    free(f->cli_version);
    memset(f, 0, sizeof(*f));
}
