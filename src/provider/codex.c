/*
 * The codex adapter (Codex CLI 0.169): `codex exec --json … -`, prompt on
 * stdin (which is closed: codex waits forever on an open stdin). See shared
 * FORMATS.md for the events read here.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/codex.h"
#include "provider/common.h"
#include "provider/provider.h"
#include "util/file.h"
#include "util/macros.h"

static const char *const codex_auth_env[] = { "OPENAI_API_KEY", "CODEX_API_KEY", NULL };
static const char *const codex_auth_files[] = { ".codex/auth.json", NULL };

/* Keywords OpenAI's strict structured outputs accept; everything else is dropped. */
static const char *const strict_keywords[] = {
    "$defs",
    "$ref",
    "additionalProperties",
    "anyOf",
    "const",
    "definitions",
    "description",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "items",
    "maxItems",
    "maximum",
    "minItems",
    "minimum",
    "multipleOf",
    "pattern",
    "properties",
    "required",
    "title",
    "type",
    NULL,
};

static int is_strict_keyword(const char *k)
{
    for (size_t i = 0; strict_keywords[i]; i++)
        if (strcmp(strict_keywords[i], k) == 0)
            return 1;
    return 0;
}

static json_t *sanitize(const json_t *s, int depth);

/* An optional property must still be listed in `required`: it may be null instead. */
static json_t *make_nullable(json_t *s)
{
    json_t *type = json_object_get(s, "type");
    if (json_is_string(type)) {
        if (strcmp(json_string_value(type), "null") != 0)
            json_object_set_new(s, "type", json_pack("[s,s]", json_string_value(type), "null"));
    } else if (json_is_array(type)) {
        size_t i;
        json_t *t;
        int has_null = 0;
        json_array_foreach(type, i, t) has_null |=
            json_is_string(t) && !strcmp(json_string_value(t), "null");
        if (!has_null)
            json_array_append_new(type, json_string("null"));
    } else {
        return json_pack("{s:[o,{s:s}]}", "anyOf", s, "type", "null");
    }
    json_t *en = json_object_get(s, "enum");
    if (json_is_array(en)) {
        size_t i;
        json_t *v;
        int has_null = 0;
        json_array_foreach(en, i, v) has_null |= json_is_null(v);
        if (!has_null)
            json_array_append_new(en, json_null());
    }
    return s;
}

static json_t *sanitize_object(const json_t *s, json_t *out, int depth)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *req = json_object_get(s, "required");
    json_t *nprops = json_object();
    json_t *nreq = json_array();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)props, key, v)
    {
        int required = 0;
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r) required |=
            json_is_string(r) && !strcmp(json_string_value(r), key);
        json_t *ns = sanitize(v, depth + 1);
        if (!required)
            ns = make_nullable(ns);
        json_object_set_new(nprops, key, ns);
        json_array_append_new(nreq, json_string(key));
    }
    json_object_set_new(out, "properties", nprops);
    json_object_set_new(out, "required", nreq);
    json_object_set_new(out, "additionalProperties", json_false());
    return out;
}

static json_t *sanitize(const json_t *s, int depth)
{
    if (!json_is_object(s) || depth > 64)
        return json_object();
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)s, key, v)
    {
        if (!strcmp(key, "oneOf")) /* strict mode knows anyOf only */
            key = "anyOf";
        if (!is_strict_keyword(key) || !strcmp(key, "properties") || !strcmp(key, "required") ||
            !strcmp(key, "additionalProperties"))
            continue;
        if (!strcmp(key, "items")) {
            json_object_set_new(out, key, sanitize(v, depth + 1));
        } else if (!strcmp(key, "anyOf") && json_is_array(v)) {
            json_t *arr = json_array();
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) json_array_append_new(arr, sanitize(e, depth + 1));
            json_object_set_new(out, key, arr);
        } else if ((!strcmp(key, "$defs") || !strcmp(key, "definitions")) && json_is_object(v)) {
            json_t *defs = json_object();
            const char *dk;
            json_t *dv;
            json_object_foreach(v, dk, dv) json_object_set_new(defs, dk, sanitize(dv, depth + 1));
            json_object_set_new(out, key, defs);
        } else {
            json_object_set(out, key, v);
        }
    }
    const json_t *type = json_object_get(s, "type");
    int is_object = json_object_get(s, "properties") != NULL ||
                    (json_is_string(type) && !strcmp(json_string_value(type), "object"));
    if (json_is_array(type)) {
        size_t i;
        json_t *t;
        json_array_foreach(type, i, t) is_object |=
            json_is_string(t) && !strcmp(json_string_value(t), "object");
    }
    if (is_object)
        sanitize_object(s, out, depth);
    return out;
}

char *ar_codex_strict_schema(const char *schema)
{
    json_t *s = json_loads(schema, 0, NULL);
    const json_t *type = json_object_get(s, "type");
    /* The Responses API wants an object at the root; anything else, a union that may
     * be an array included, gets no native schema. */
    if (!json_is_object(s) ||
        !((!type && json_object_get(s, "properties")) ||
          (json_is_string(type) && !strcmp(json_string_value(type), "object")))) {
        json_decref(s);
        return NULL;
    }
    json_t *out = sanitize(s, 0);
    json_decref(s);
    char *text = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(out);
    return text;
}

static int allows_null(const json_t *schema)
{
    const json_t *type = json_object_get(schema, "type");
    if (json_is_string(type))
        return !strcmp(json_string_value(type), "null");
    size_t i;
    const json_t *t;
    json_array_foreach(type, i,
                       t) if (json_is_string(t) && !strcmp(json_string_value(t), "null")) return 1;
    return !type; /* no type: anything, null included */
}

static int is_required(const json_t *schema, const char *key)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(schema, "required"), i,
                       r) if (json_is_string(r) && !strcmp(json_string_value(r), key)) return 1;
    return 0;
}

/* Drops the nulls strict mode made the model write for optional properties. Returns how many. */
static int prune_nulls(json_t *v, const json_t *schema, int depth)
{
    if (!json_is_object(schema) || depth > 64)
        return 0;
    int n = 0;
    if (json_is_object(v)) {
        const json_t *props = json_object_get(schema, "properties");
        const char *key;
        json_t *child;
        void *tmp;
        json_object_foreach_safe(v, tmp, key, child)
        {
            const json_t *ps = json_object_get(props, key);
            if (!ps)
                continue;
            if (json_is_null(child) && !is_required(schema, key) && !allows_null(ps)) {
                json_object_del(v, key);
                n++;
            } else {
                n += prune_nulls(child, ps, depth + 1);
            }
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) n +=
            prune_nulls(e, json_object_get(schema, "items"), depth + 1);
    }
    return n;
}

char *ar_codex_unstrict(const char *text, const char *schema)
{
    json_t *s = json_loads(schema, 0, NULL);
    json_t *v = s ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    char *out = NULL;
    if (v && prune_nulls(v, s, 0) > 0)
        out = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    json_decref(s);
    return out;
}

static int codex_prepare(const struct ar_call_spec *spec, struct ar_call_setup *out,
                         struct ar_error *err)
{
    struct ar_strv *a = &out->argv;
    int rc = ar_strv_push(a, ar_provider_bin(&ar_provider_codex));
    rc |= ar_strv_pushv(a, (const char *const[]){ "exec", "--json", NULL });
    if (spec->model)
        rc |= ar_strv_pushv(a, (const char *const[]){ "--model", spec->model, NULL });
    /* Explicit even when read-only, so a user config cannot widen a read-only call. */
    rc |= ar_strv_pushv(
        a, (const char *const[]){ "--sandbox", spec->allow_edits ? "workspace-write" : "read-only",
                                  NULL });
    if (!spec->in_git_repo)
        rc |= ar_strv_push(a, "--skip-git-repo-check");
    if (!rc && (rc = ar_codex_posture(spec, out, err)) < 0)
        return rc;
    if (spec->schema) {
        char *strict = ar_codex_strict_schema(spec->schema);
        if (strict) {
            char *path = ar_file_write_temp("schema", strict, strlen(strict), err);
            free(strict);
            if (!path)
                return err ? err->code : AR_EIO;
            rc |= ar_strv_push(&out->tmpfiles, path);
            rc |= ar_strv_pushv(a, (const char *const[]){ "--output-schema", path, NULL });
            free(path);
        }
    }
    /* Options stay before `resume`: --sandbox belongs to `exec` only. "-" reads
     * the prompt from stdin and keeps a prompt like "review" from being taken
     * as a subcommand. */
    if (spec->resume)
        rc |= ar_strv_pushv(a, (const char *const[]){ "resume", spec->resume, NULL });
    rc |= ar_strv_push(a, "-");
    if (rc)
        return ar_error_set(err, AR_ENOMEM, "codex", "out of memory");
    return 0;
}

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

static void raw_usage(const json_t *t, struct ar_usage *raw)
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
        raw_usage(t, arg);
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

/* Reads the rollout file of a thread, $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl. */
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
        char *path = find_rollout(sessions, suffix, 0);
        if (path && ar_file_read(path, out, NULL) == 0)
            rc = 0;
        free(path);
        free(suffix);
    }
    free(sessions);
    return rc;
}

/*
 * codex reports a resumed thread's usage as the running total of the whole
 * thread (FORMATS.md). The thread's rollout file holds that total as of the
 * previous call; it is read before the CLI starts and subtracted.
 */
static int read_base(const char *thread_id, struct ar_usage *raw)
{
    struct ar_buf b;
    ar_buf_init(&b, (size_t)512 << 20);
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

static struct ar_unwrap *codex_unwrap_new(const struct ar_call_spec *spec)
{
    struct ar_unwrap *u = ar_pv_unwrap_new(&ar_provider_codex, spec);
    if (u && spec && spec->schema)
        u->schema = strdup(spec->schema);
    if (u && spec && spec->resume && read_base(spec->resume, &u->base) == 0)
        u->has_base = 1;
    if (u && u->spec_model)
        ar_pv_set(&u->r.model, u->spec_model);
    return u;
}

static void on_item(struct ar_unwrap *u, const char *type, const json_t *item,
                    struct ar_progress *ev)
{
    const char *itype = ar_pv_str(item, "type");
    if (!itype)
        return;
    int completed = !strcmp(type, "item.completed");
    if (!strcmp(itype, "agent_message")) {
        if (completed && ar_pv_str(item, "text"))
            ar_pv_set(&u->r.text, ar_pv_str(item, "text"));
    } else if (!strcmp(itype, "file_change")) {
        const json_t *changes = json_object_get(item, "changes");
        size_t i;
        const json_t *c;
        const char *first = ar_pv_str(json_array_get(changes, 0), "path");
        ar_pv_event(u, ev, "apply_patch", first);
        const char *status = ar_pv_str(item, "status");
        if (completed && !(status && !strcmp(status, "failed"))) {
            json_array_foreach(changes, i, c) ar_pv_add_file(u, ar_pv_str(c, "path"));
            u->r.acted = 1;
        }
    } else if (!strcmp(itype, "command_execution")) {
        ar_pv_event(u, ev, "shell", NULL); /* item.started may be missing */
        const char *status = ar_pv_str(item, "status");
        /* An approval policy that refused the command says "declined". */
        if (status && !strcmp(status, "declined"))
            ar_pv_deny(u, "shell", ar_pv_str(item, "command"));
        /* Under a read-only sandbox a command cannot change the work tree. */
        else if (completed && u->edits)
            u->r.acted = 1;
    } else if (!strcmp(itype, "mcp_tool_call")) {
        if (!completed)
            ar_pv_event(u, ev, ar_pv_str(item, "tool") ? ar_pv_str(item, "tool") : "mcp", NULL);
    } else if (!strcmp(itype, "web_search")) {
        if (!completed)
            ar_pv_event(u, ev, "web_search", NULL);
    }
}

static void on_usage(struct ar_unwrap *u, const json_t *usage)
{
    struct ar_usage raw;
    raw_usage(usage, &raw);
    if (u->resumed) {
        if (u->has_base && raw.input >= u->base.input && raw.output >= u->base.output) {
            raw.input -= u->base.input;
            raw.cache_read -= AR_MIN(raw.cache_read, u->base.cache_read);
            raw.cache_write -= AR_MIN(raw.cache_write, u->base.cache_write);
            raw.output -= u->base.output;
            raw.reasoning -= AR_MIN(raw.reasoning, u->base.reasoning);
        } else if (!u->has_base) {
            u->r.usage_cumulative = 1;
        }
        /* A total below the baseline means this codex counts per call already. */
    }
    /* OpenAI's input_tokens include the cached (and cache-written) ones. */
    uint64_t cached = raw.cache_read + raw.cache_write;
    u->r.usage.input = raw.input > cached ? raw.input - cached : 0;
    u->r.usage.cache_read = raw.cache_read;
    u->r.usage.cache_write = raw.cache_write;
    u->r.usage.output = raw.output;
    u->r.usage.reasoning = raw.reasoning;
    u->r.has_usage = 1;
}

/* The HTTP status codex quotes: "last status: 429 Too Many Requests", "unexpected
 * status 401 Unauthorized: …"; 0 when none. */
static int status_in(const char *msg)
{
    static const char *const keys[] = { "last status: ", "unexpected status ", NULL };
    for (size_t i = 0; msg && keys[i]; i++) {
        const char *p = strstr(msg, keys[i]);
        if (!p)
            continue;
        int v = atoi(p + strlen(keys[i]));
        if (v >= 100 && v <= 599)
            return v;
    }
    return 0;
}

/*
 * codex tells nothing on stdout when its sandbox refuses a patch: its stderr logs
 * "error=patch rejected: writing is blocked by read-only sandbox; …" (and the
 * model is told). Each such line is a refused apply_patch; the patch's file is not named.
 */
static void denials_in_stderr(struct ar_unwrap *u, const char *data, size_t len)
{
    static const char needle[] = "patch rejected";
    for (const char *p = data, *end = data + len;
         p && p < end && (p = memmem(p, (size_t)(end - p), needle, sizeof(needle) - 1)) != NULL;
         p += sizeof(needle) - 1)
        ar_pv_deny(u, "apply_patch", NULL);
}

static int codex_unwrap_line(struct ar_unwrap *u, const char *line, size_t len,
                             struct ar_progress *ev)
{
    if (ev)
        memset(ev, 0, sizeof(*ev));
    json_t *o = ar_pv_parse_line(u, line, len);
    const char *type = ar_pv_str(o, "type");
    int final = 0;
    if (!type) {
        u->garbage++;
    } else if (!strcmp(type, "thread.started")) {
        u->saw_event = 1;
        if (ar_pv_str(o, "thread_id"))
            ar_pv_set(&u->r.session_id, ar_pv_str(o, "thread_id"));
    } else if (!strcmp(type, "turn.started")) {
        u->saw_event = 1;
    } else if (!strncmp(type, "item.", 5) && json_is_object(json_object_get(o, "item"))) {
        u->saw_event = 1;
        on_item(u, type, json_object_get(o, "item"), ev);
    } else if (!strcmp(type, "turn.completed")) {
        u->saw_event = 1;
        u->r.final_seen = 1;
        if (json_is_object(json_object_get(o, "usage")))
            on_usage(u, json_object_get(o, "usage"));
        final = 1;
    } else if (!strcmp(type, "turn.failed")) {
        u->saw_event = 1;
        u->r.final_seen = 1;
        const char *msg = ar_pv_str(json_object_get(o, "error"), "message");
        u->r.http_status = status_in(msg);
        ar_pv_fail(u, ar_pv_classify(u->r.http_status, msg),
                   msg ? msg : "codex reported a failed turn");
        final = 1;
    } else if (!strcmp(type, "error") && ar_pv_str(o, "message") &&
               !json_object_get(o, "timestamp")) { /* gemini's error events carry one */
        /* Transient ("Reconnecting... 1/5") or the one before turn.failed: not final. */
        u->saw_event = 1;
    } else {
        u->garbage++;
    }
    json_decref(o);
    return final;
}

static void codex_unwrap_finish(struct ar_unwrap *u, const struct ar_exit_info *exit,
                                struct ar_reply *out)
{
    if (exit && exit->stderr_tail)
        denials_in_stderr(u, exit->stderr_tail, exit->stderr_len);
    /* codex's events never name the model; the thread's rollout does (turn_context). */
    if (!u->r.model && u->r.session_id) {
        struct ar_buf b;
        ar_buf_init(&b, (size_t)512 << 20);
        if (read_rollout(u->r.session_id, &b) == 0)
            u->r.model = ar_codex_rollout_model(ar_buf_cstr(&b), b.len);
        ar_buf_finish(&b);
    }
    /* With --output-schema, strict mode made optional properties nullable; the
     * contract itself does not allow those nulls, so they are taken out again. */
    if (u->schema && u->r.text) {
        char *fixed = ar_codex_unstrict(u->r.text, u->schema);
        if (fixed) {
            free(u->r.text);
            u->r.text = fixed;
        }
    }
    ar_pv_finish(u, exit, out);
}

static int codex_unwrap_captured(const char *data, size_t len, struct ar_reply *out)
{
    /* Plain mode (stdout = the final message only) is not a wrapper: AR_ENOJSON,
     * and the caller takes stdout as the text and unwrap_stderr() for tokens. */
    return ar_pv_captured(&ar_provider_codex, data, len, NULL, out);
}

static int codex_unwrap_stderr(const char *data, size_t len, struct ar_reply *out)
{
    int found = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        const char *l = data + pos;
        size_t n = end - pos;
        if (n >= 11 && !strncmp(l, "tokens used", 11)) {
            /* The figure is on the next line, with thousands separators. */
            size_t p = end + 1;
            uint64_t v = 0;
            int digits = 0;
            while (p < len && data[p] != '\n') {
                if (isdigit((unsigned char)data[p])) {
                    v = v * 10 + (uint64_t)(data[p] - '0');
                    digits++;
                } else if (data[p] != ',' && data[p] != ' ' && data[p] != '\r') {
                    break;
                }
                p++;
            }
            if (digits) {
                /* codex prints one figure (uncached input + output): it is kept as
                 * input, and marked as read from stderr. */
                out->usage = (struct ar_usage)AR_USAGE_INIT;
                out->usage.input = v;
                out->has_usage = 1;
                out->usage_from_stderr = 1;
                found = 1;
            }
        } else if (n > 12 && !strncmp(l, "session id: ", 12)) {
            char *id = strndup(l + 12, n - 12);
            free(out->session_id);
            out->session_id = id;
            found = 1;
        } else if (n > 7 && !strncmp(l, "ERROR: ", 7) && !out->error) {
            char *msg = strndup(l + 7, n - 7);
            out->error = ar_pv_classify(0, msg);
            free(out->error_msg);
            out->error_msg = msg;
            found = 1;
        }
        pos = end + 1;
    }
    return found ? 0 : AR_ENOJSON;
}

const struct ar_provider ar_provider_codex = {
    .name = "codex",
    .bin_env = "AGENTRUN_CODEX_BIN",
    .install_hint = "npm install -g @openai/codex",
    .model_env = "CODEX_MODEL",
    .auth_env = codex_auth_env,
    .auth_files = codex_auth_files,
    .home_env = "CODEX_HOME",
    .home_dir = ".codex",
    .posture_note =
        "-c overrides (per-call project trust, project_doc_max_bytes=0, model_instructions_file) "
        "and --disable FEATURE; the user's config.toml and its model providers stay",
    .prepare = codex_prepare,
    .unwrap_new = codex_unwrap_new,
    .unwrap_line = codex_unwrap_line,
    .unwrap_finish = codex_unwrap_finish,
    .unwrap_free = ar_pv_unwrap_free,
    .unwrap_captured = codex_unwrap_captured,
    .unwrap_stderr = codex_unwrap_stderr,
};
