/* Shared internals of the provider adapters: state, JSON helpers, the common finish. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cost/cost.h"
#include "provider/common.h"
#include "util/buf.h"
#include "util/temp.h"
#include "util/utf8.h"

void ar_call_setup_init(struct ar_call_setup *s)
{
    ar_strv_init(&s->argv);
    ar_strv_init(&s->env);
    ar_strv_init(&s->tmpfiles);
    ar_strv_init(&s->tmpdirs);
    ar_strv_init(&s->local_paths);
    s->project_config = 0;
    s->context_files = 0;
    s->cwd = NULL;
    s->stdin_data = NULL;
    s->stdin_len = 0;
    ar_buf_init(&s->stdin_buf, AR_BUF_UNLIMITED);
}

int ar_provider_prepare_call(const struct ar_provider *p, const struct ar_call_spec *spec,
                             const char *prompt, size_t len, struct ar_call_setup *setup,
                             struct ar_error *err)
{
    int rc = p->prepare(spec, setup, err);
    if (rc < 0)
        return rc;
    if (ar_provider_env_withhold(&setup->env) < 0)
        return ar_error_set(err, AR_ENOMEM, p->name, "out of memory");
    if (p->deliver &&
        (rc = p->deliver(spec, prompt ? prompt : "", len, &setup->stdin_buf, err)) < 0)
        return rc;
    if (setup->stdin_buf.len) {
        setup->stdin_data = setup->stdin_buf.data;
        setup->stdin_len = setup->stdin_buf.len;
    } else {
        setup->stdin_data = prompt ? prompt : "";
        setup->stdin_len = len;
    }
    return 0;
}

int ar_pv_object_schema(const json_t *schema)
{
    const json_t *type = json_object_get(schema, "type");
    return json_is_object(schema) &&
           ((!type && json_object_get(schema, "properties")) ||
            (json_is_string(type) && !strcmp(json_string_value(type), "object")));
}

int ar_pv_object_contract(const char *schema)
{
    json_t *s = schema ? json_loads(schema, 0, NULL) : NULL;
    int yes = ar_pv_object_schema(s);
    json_decref(s);
    return yes;
}

enum ar_tools ar_pv_tools(const struct ar_call_spec *spec)
{
    if (spec->tools == AR_TOOLS_AUTO)
        return spec->allow_edits ? AR_TOOLS_EDIT : AR_TOOLS_READ;
    return spec->tools;
}

void ar_call_setup_finish(struct ar_call_setup *s)
{
    for (size_t i = 0; i < s->tmpfiles.n; i++)
        unlink(s->tmpfiles.v[i]);
    for (size_t i = 0; i < s->tmpdirs.n; i++)
        ar_remove_tree(s->tmpdirs.v[i]);
    ar_strv_finish(&s->argv);
    ar_strv_finish(&s->env);
    ar_strv_finish(&s->tmpfiles);
    ar_strv_finish(&s->tmpdirs);
    ar_strv_finish(&s->local_paths);
    free(s->cwd);
    s->cwd = NULL;
    s->stdin_data = NULL;
    s->stdin_len = 0;
    ar_buf_finish(&s->stdin_buf);
}

void ar_reply_init(struct ar_reply *r)
{
    memset(r, 0, sizeof(*r));
    ar_strv_init(&r->files);
    ar_strv_init(&r->denied);
    r->retry_after_s = -1;
}

void ar_reply_finish(struct ar_reply *r)
{
    free(r->text);
    free(r->session_id);
    free(r->model);
    free(r->error_msg);
    free(r->cli_version);
    free(r->rate_limit.status);
    free(r->rate_limit.window);
    free(r->rate_limit.source);
    ar_strv_finish(&r->files);
    ar_strv_finish(&r->denied);
    ar_reply_init(r);
}

void ar_pv_unwrap_init(struct ar_unwrap *u, const struct ar_provider *p)
{
    memset(u, 0, sizeof(*u));
    u->p = p;
    ar_reply_init(&u->r);
}

void ar_pv_unwrap_finish(struct ar_unwrap *u)
{
    ar_reply_finish(&u->r);
    free(u->ev_tool);
    free(u->ev_path);
    free(u->partial_id);
    json_decref(u->tools);
    memset(u, 0, sizeof(*u));
}

/* Replaces the NULs inside v's strings with U+FFFD; returns how many. Every
 * consumer of the text takes it as a C string: a NUL would cut the answer there. */
static size_t scrub_nul(json_t *v, int depth)
{
    size_t n = 0;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        if (strlen(s) == len)
            return 0;
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        if (ar_buf_append(&b, s, len) == 0 && ar_buf_replace_nul(&b, &n) == 0)
            json_string_setn(v, ar_buf_cstr(&b), b.len);
        ar_buf_finish(&b);
        return n;
    }
    if (depth > 4096)
        return 0;
    if (json_is_object(v)) {
        const char *key;
        json_t *m;
        json_object_foreach(v, key, m) n += scrub_nul(m, depth + 1);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m) n += scrub_nul(m, depth + 1);
    }
    return n;
}

json_t *ar_pv_parse_line(struct ar_unwrap *u, const char *line, size_t len)
{
    json_t *o = ar_pv_parse_object(line, len);
    /* jansson decodes \u0000 only into a string: a line without that escape has
     * no NUL to look for. */
    if (o && memmem(line, len, "\\u0000", 6))
        u->r.nul_replaced += scrub_nul(o, 0);
    return o;
}

json_t *ar_pv_parse_object(const char *line, size_t len)
{
    while (len && isspace((unsigned char)*line)) {
        line++;
        len--;
    }
    if (!len || *line != '{' || len > AR_PV_MAX_LINE)
        return NULL;
    json_t *o = json_loadb(line, len, JSON_ALLOW_NUL, NULL);
    if (o && !json_is_object(o)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

const char *ar_pv_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

uint64_t ar_pv_u64(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
    if (json_is_real(v)) {
        /* Converting a double past UINT64_MAX is undefined: saturate instead. */
        double d = json_real_value(v);
        return d >= 0x1p64 ? UINT64_MAX : d > 0 ? (uint64_t)d : 0;
    }
    return 0;
}

void ar_pv_set(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? strdup(s) : NULL;
}

static int contains_ci(const char *hay, const char *needle)
{
    return hay && strcasestr(hay, needle) != NULL;
}

/* The 3-digit number n in s, not part of a longer number. */
static int has_status(const char *s, const char *n)
{
    for (const char *p = s; p && (p = strstr(p, n)) != NULL; p++)
        if ((p == s || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[3]))
            return 1;
    return 0;
}

/* An HTTP status embedded in an error body: "code":401 or "code\":401. */
static int embedded_status(const char *msg)
{
    static const char *const keys[] = { "\"code\":", "\\\"code\\\":", NULL };
    for (size_t k = 0; msg && keys[k]; k++) {
        const char *p = strstr(msg, keys[k]);
        if (!p)
            continue;
        p += strlen(keys[k]);
        while (*p == ' ')
            p++;
        int v = atoi(p);
        if (v >= 400 && v <= 599)
            return v;
    }
    return 0;
}

int ar_pv_classify(int http_status, const char *msg)
{
    if (!http_status)
        http_status = embedded_status(msg);
    if (http_status == 401 || http_status == 403)
        return AR_EAUTH;
    if (http_status == 429)
        return AR_ERATELIMIT;
    if (http_status >= 400)
        return AR_EAPI;
    /* No status: the CLIs' own wording (FORMATS.md "How errors surface"). */
    static const char *const auth[] = {
        "unauthorized",      "unauthenticated",
        "invalid api key",   "api key not valid",
        "permission_denied", "missing environment variable",
        "authentication",    NULL,
    };
    static const char *const rate[] = {
        "too many requests",           "rate limit", "rate_limit",  "resource_exhausted",
        "resource has been exhausted", "quota",      "usage limit", NULL,
    };
    if (msg && (has_status(msg, "401") || has_status(msg, "403")))
        return AR_EAUTH;
    if (msg && has_status(msg, "429"))
        return AR_ERATELIMIT;
    for (size_t i = 0; auth[i]; i++)
        if (contains_ci(msg, auth[i]))
            return AR_EAUTH;
    for (size_t i = 0; rate[i]; i++)
        if (contains_ci(msg, rate[i]))
            return AR_ERATELIMIT;
    return AR_EAPI;
}

void ar_pv_event(struct ar_unwrap *u, struct ar_progress *ev, const char *tool, const char *path)
{
    ar_pv_set(&u->ev_tool, tool);
    ar_pv_set(&u->ev_path, path);
    if (ev) {
        ev->tool = u->ev_tool;
        ev->path = u->ev_path;
    }
}

void ar_pv_add_file(struct ar_unwrap *u, const char *path)
{
    if (!path || !*path)
        return;
    for (size_t i = 0; i < u->r.files.n; i++)
        if (strcmp(u->r.files.v[i], path) == 0)
            return;
    ar_strv_push(&u->r.files, path);
}

void ar_pv_remove_file(struct ar_unwrap *u, const char *path)
{
    for (size_t i = 0; path && i < u->r.files.n; i++) {
        if (strcmp(u->r.files.v[i], path) != 0)
            continue;
        free(u->r.files.v[i]);
        memmove(&u->r.files.v[i], &u->r.files.v[i + 1], (u->r.files.n - i) * sizeof(char *));
        u->r.files.n--;
        return;
    }
}

void ar_pv_fail(struct ar_unwrap *u, int code, const char *msg)
{
    if (u->r.error)
        return;
    u->r.error = code;
    if (msg && *msg && !u->r.error_msg) /* a message noted earlier (gemini's warning) stays */
        ar_pv_set(&u->r.error_msg, msg);
}

void ar_pv_tool_seen(struct ar_unwrap *u, const char *id, const char *name, const char *target)
{
    if (!id || !name)
        return;
    if (!u->tools)
        u->tools = json_object();
    json_object_set_new(u->tools, id, json_pack("[s,s?]", name, target));
}

int ar_pv_tool_lookup(struct ar_unwrap *u, const char *id, const char **name, const char **target)
{
    const json_t *t = id ? json_object_get(u->tools, id) : NULL;
    *name = json_string_value(json_array_get(t, 0));
    *target = json_string_value(json_array_get(t, 1));
    return *name != NULL;
}

void ar_pv_deny(struct ar_unwrap *u, const char *tool, const char *target)
{
    if (!tool || !*tool)
        return;
    if (!target)
        target = "";
    for (size_t i = 0; i + 1 < u->r.denied.n; i += 2)
        if (!strcmp(u->r.denied.v[i], tool) && !strcmp(u->r.denied.v[i + 1], target))
            return;
    ar_strv_push(&u->r.denied, tool);
    ar_strv_push(&u->r.denied, target);
}

int ar_pv_transient(int http_status, const char *msg)
{
    if (http_status >= 500)
        return 1;
    if (http_status)
        return 0;
    static const char *const words[] = {
        "overloaded",  "high demand",         "internal server error", "internal error",
        "unavailable", "stream disconnected", "temporarily",           NULL,
    };
    for (size_t i = 0; words[i]; i++)
        if (contains_ci(msg, words[i]))
            return 1;
    return msg && (has_status(msg, "500") || has_status(msg, "502") || has_status(msg, "503") ||
                   has_status(msg, "504") || has_status(msg, "529"));
}

/* Seconds per unit word at p ("s", "sec", "minutes", "h", …), advancing *end; 0 if none. */
static double unit_at(const char *p, const char **end)
{
    static const struct {
        const char *word;
        double secs;
    } units[] = {
        /* Longer words first: "ms" before "m", "minutes" before "min". */
        { "milliseconds", 0.001 },
        { "millisecond", 0.001 },
        { "ms", 0.001 },
        { "seconds", 1 },
        { "second", 1 },
        { "secs", 1 },
        { "sec", 1 },
        { "s", 1 },
        { "minutes", 60 },
        { "minute", 60 },
        { "mins", 60 },
        { "min", 60 },
        { "m", 60 },
        { "hours", 3600 },
        { "hour", 3600 },
        { "hrs", 3600 },
        { "hr", 3600 },
        { "h", 3600 },
        { "days", 86400 },
        { "day", 86400 },
        { "d", 86400 },
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i].word);
        if (strncasecmp(p, units[i].word, n) == 0 && !isalpha((unsigned char)p[n])) {
            *end = p + n;
            return units[i].secs;
        }
    }
    return 0;
}

/* A duration at p: "7s", "2.5 seconds", "1h 30m", "2 hours, 5 minutes"; a bare
 * number is seconds when bare_ok. Returns -1 when p holds none. */
static double duration_at(const char *p, int bare_ok)
{
    double total = 0;
    int parts = 0;
    for (;;) {
        while (*p == ' ' || *p == '"' || *p == '\'' || *p == ':' || *p == '=' ||
               (parts && (*p == ',' || !strncasecmp(p, "and ", 4))))
            p += *p == 'a' || *p == 'A' ? 4 : 1;
        if (!isdigit((unsigned char)*p))
            break;
        char *num_end;
        double v = strtod(p, &num_end);
        const char *q = num_end;
        while (*q == ' ')
            q++;
        const char *unit_end;
        double unit = unit_at(q, &unit_end);
        if (unit == 0) {
            /* strtod gives HUGE_VAL past the double range: a wait, just a long one. */
            if (!parts && bare_ok && v >= 0)
                return v;
            break;
        }
        total += v * unit;
        parts++;
        p = unit_end;
    }
    return parts ? total : -1;
}

static const char *find_ci(const char *hay, const char *needle)
{
    return hay ? strcasestr(hay, needle) : NULL;
}

/* A clock time at p, "5:03 PM", "3pm", "15:00", "Nov 25th, 2026 11:07 PM", as
 * seconds from now; -1 when p holds none. */
static double clock_at(const char *p, long long now)
{
    static const char *const months[] = { "jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec" };
    while (*p == ' ')
        p++;
    int mon = -1, mday = 0, year = 0;
    for (int i = 0; i < 12; i++)
        if (!strncasecmp(p, months[i], 3)) {
            mon = i;
            break;
        }
    if (mon >= 0) {
        while (isalpha((unsigned char)*p) || *p == '.')
            p++;
        while (*p == ' ')
            p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        mday = (int)strtol(p, (char **)&p, 10);
        while (isalpha((unsigned char)*p) || *p == ',' || *p == ' ')
            p++;
        if (isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) &&
            isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3])) {
            year = (int)strtol(p, (char **)&p, 10);
            while (*p == ',' || *p == ' ')
                p++;
        }
    }
    if (!isdigit((unsigned char)*p))
        return -1;
    int hour = (int)strtol(p, (char **)&p, 10), min = 0, has_colon = 0;
    if (*p == ':' && isdigit((unsigned char)p[1])) {
        min = (int)strtol(p + 1, (char **)&p, 10);
        has_colon = 1;
    }
    while (*p == ' ')
        p++;
    int pm = -1;
    if ((p[0] == 'a' || p[0] == 'A' || p[0] == 'p' || p[0] == 'P') &&
        (p[1] == 'm' || p[1] == 'M') && !isalpha((unsigned char)p[2])) {
        pm = p[0] == 'p' || p[0] == 'P';
        p += 2;
    }
    if ((!has_colon && pm < 0) || hour > 23 || min > 59 || (pm >= 0 && (hour < 1 || hour > 12)))
        return -1;
    if (pm >= 0)
        hour = hour % 12 + (pm ? 12 : 0);
    while (*p == ' ' || *p == '(')
        p++;
    int utc = !strncasecmp(p, "utc", 3) || !strncasecmp(p, "gmt", 3);
    time_t t = (time_t)now;
    struct tm tm;
    if (utc)
        gmtime_r(&t, &tm);
    else
        localtime_r(&t, &tm);
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = 0;
    tm.tm_isdst = -1;
    if (mon >= 0) {
        tm.tm_mon = mon;
        tm.tm_mday = mday;
        if (year)
            tm.tm_year = year - 1900;
    }
    time_t at = utc ? timegm(&tm) : mktime(&tm);
    if (at == (time_t)-1)
        return -1;
    /* A bare clock time that has passed today means tomorrow. */
    if (mon < 0 && (long long)at <= now)
        at += 86400;
    return (long long)at > now ? (double)((long long)at - now) : 0;
}

double ar_pv_retry_after(const char *msg, long long now)
{
    if (!msg)
        return -1;
    const char *p;
    /* gemini's error dump: "retryDelayMs: 7000". */
    if ((p = find_ci(msg, "retryDelayMs")) != NULL) {
        p += 12;
        while (*p == ' ' || *p == ':' || *p == '"' || *p == '=')
            p++;
        if (isdigit((unsigned char)*p))
            return strtod(p, NULL) / 1000.0;
    }
    /* claude's subscription limit: "usage limit reached|<Unix time>". */
    if ((p = find_ci(msg, "limit reached|")) != NULL && isdigit((unsigned char)p[14])) {
        errno = 0;
        long long at = strtoll(p + 14, NULL, 10);
        if (errno == ERANGE)
            return HUGE_VAL; /* a time past what any clock holds */
        if (at > 1000000000LL)
            return at > now ? (double)(at - now) : 0;
    }
    static const char *const durations[] = {
        "retry-after", "retry after", "retrydelay",  "retry in", "try again in",
        "resets in",   "reset in",    "retry_after", "wait for", NULL,
    };
    for (size_t i = 0; durations[i]; i++) {
        if ((p = find_ci(msg, durations[i])) == NULL)
            continue;
        double d = duration_at(p + strlen(durations[i]), 1);
        if (d >= 0)
            return d;
    }
    static const char *const clocks[] = { "try again at", "resets at", "reset at", "resets", NULL };
    for (size_t i = 0; clocks[i]; i++) {
        if ((p = find_ci(msg, clocks[i])) == NULL)
            continue;
        double d = clock_at(p + strlen(clocks[i]), now);
        if (d >= 0)
            return d;
    }
    return -1;
}

char *ar_pv_last_line(const char *data, size_t len)
{
    if (!data)
        return NULL;
    while (len) {
        while (len && isspace((unsigned char)data[len - 1]))
            len--;
        if (!len)
            return NULL;
        size_t start = len;
        while (start && data[start - 1] != '\n')
            start--;
        size_t n = len - start;
        if (n > 240)
            n = 240;
        return strndup(data + start, n);
    }
    return NULL;
}

void ar_pv_partial_usage(struct ar_unwrap *u, const char *id, const struct ar_usage *usage)
{
    struct ar_usage *p = &u->partial, *last = &u->partial_last;
    if (id && u->partial_id && strcmp(id, u->partial_id) == 0) {
        p->input -= last->input;
        p->cache_read -= last->cache_read;
        p->cache_write -= last->cache_write;
        p->output -= last->output;
        p->reasoning -= last->reasoning;
    } else {
        ar_pv_set(&u->partial_id, id);
    }
    ar_usage_add(p, usage);
    *last = *usage;
    u->has_partial = 1;
}

void ar_pv_rate_limit(struct ar_unwrap *u, const char *status, const char *window,
                      double used_percent, long long resets_at, const char *source)
{
    struct ar_rate_limit *rl = &u->r.rate_limit;
    if (!status)
        return;
    ar_pv_set(&rl->status, status);
    ar_pv_set(&rl->window, window);
    ar_pv_set(&rl->source, source);
    rl->used_percent = used_percent;
    rl->resets_at = resets_at > 0 ? resets_at : 0;
    u->r.has_rate_limit = 1;
}

void ar_pv_finish(struct ar_unwrap *u, const struct ar_exit_info *exit, struct ar_reply *out)
{
    static const struct ar_exit_info clean = { 0 };
    if (!exit)
        exit = &clean;
    struct ar_reply *r = &u->r;
    if (!r->final_seen && !r->error) {
        int sig = exit->term_signal;
        /* 128 + SIGINT/SIGTERM/SIGHUP: the CLI caught the signal and exited with it. */
        int st = exit->status;
        if (exit->killed || sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGKILL ||
            st == 128 + SIGINT || st == 128 + SIGTERM || st == 128 + SIGHUP) {
            ar_pv_fail(u, AR_EINTERRUPTED, "the CLI was ended before its final event");
        } else if (exit->status != 0) {
            char *line = ar_pv_last_line(exit->stderr_tail, exit->stderr_len);
            if (line) {
                ar_pv_fail(u, AR_ECLIFAILED, line);
            } else {
                char msg[96];
                snprintf(msg, sizeof(msg), "exit status %d without a final event", exit->status);
                ar_pv_fail(u, u->saw_event ? AR_ETRUNCATED : AR_ECLIFAILED, msg);
            }
            free(line);
        } else {
            ar_pv_fail(u, AR_ETRUNCATED, "the output ended without a final event");
        }
    }
    if (!r->error && (!r->text || !*r->text))
        ar_pv_fail(u, AR_EEMPTY, "the final text is empty");
    /* Tokens already spent are reported even when the final usage never came. */
    if (!r->has_usage && u->has_partial) {
        r->usage = u->partial;
        r->has_usage = 1;
    }
    /* A call the quota refused failed for that, whatever its error line looked like, and
     * the CLI said exactly when the quota comes back: the wait is until then (the pipeline
     * waits when that is within --max-wait, else fails with it), and the message says so. */
    long long now = (long long)time(NULL);
    if (r->error && r->error != AR_EINTERRUPTED && r->has_rate_limit && r->rate_limit.status &&
        !strcmp(r->rate_limit.status, "rejected")) {
        r->error = AR_ERATELIMIT;
        if (r->rate_limit.resets_at > 0) {
            r->retry_after_s =
                r->rate_limit.resets_at > now ? (double)(r->rate_limit.resets_at - now) : 0;
            char when[32];
            time_t t = (time_t)r->rate_limit.resets_at;
            struct tm tm;
            char *msg = NULL;
            if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) &&
                asprintf(&msg, "%s (%s%slimit resets at %s)",
                         r->error_msg ? r->error_msg : "the usage limit was reached",
                         r->rate_limit.window ? r->rate_limit.window : "",
                         r->rate_limit.window ? " " : "", when) >= 0) {
                free(r->error_msg);
                r->error_msg = msg;
            }
        }
    }
    if (r->error == AR_EAUTH) {
        /* The CLI's words name an interactive login (claude's "/login"), or agentrun's
         * private settings directory (gemini's): agentrun's own words replace them. */
        char msg[256];
        ar_provider_auth_message(u->p, r->http_status, msg, sizeof(msg));
        ar_pv_set(&r->error_msg, msg);
    }
    if (r->error == AR_ERATELIMIT || r->error == AR_EAPI) {
        if (r->retry_after_s < 0)
            r->retry_after_s = ar_pv_retry_after(r->error_msg, now);
        if (r->retry_after_s < 0 && exit->stderr_tail) {
            char *tail = strndup(exit->stderr_tail, exit->stderr_len);
            r->retry_after_s = ar_pv_retry_after(tail, now);
            free(tail);
        }
        r->transient = r->error == AR_EAPI && ar_pv_transient(r->http_status, r->error_msg);
    }
    *out = *r;
    ar_reply_init(r);
}

static int feed_lines(const struct ar_provider *p, struct ar_unwrap *u, const char *data,
                      size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        struct ar_progress ev = { 0 };
        p->unwrap_line(u, data + pos, end - pos, &ev);
        pos = end + 1;
    }
    return u->saw_event;
}

int ar_pv_captured(const struct ar_provider *p, const char *data, size_t len,
                   int (*whole)(struct ar_unwrap *u, json_t *doc), struct ar_reply *out)
{
    struct ar_unwrap *u = p->unwrap_new(NULL);
    if (!u)
        return AR_ENOMEM;
    int ok = 0;
    if (whole) {
        json_t *doc = ar_pv_parse_object(data, len);
        if (doc) {
            ok = whole(u, doc);
            json_decref(doc);
        }
    }
    if (!ok)
        ok = feed_lines(p, u, data, len);
    if (!ok) {
        p->unwrap_free(u);
        return AR_ENOJSON;
    }
    struct ar_exit_info exit = { 0 };
    p->unwrap_finish(u, &exit, out);
    p->unwrap_free(u);
    return 0;
}
