/*
 * The gemini adapter (Gemini CLI 0.61): `gemini -o stream-json`, prompt on
 * stdin (headless because stdin is not a terminal). See shared FORMATS.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/common.h"
#include "provider/gemini.h"
#include "provider/provider.h"
#include "util/buf.h"
#include "util/macros.h"

static const char *const gemini_auth_env[] = { "GEMINI_API_KEY", "GOOGLE_API_KEY",
                                               "GOOGLE_APPLICATION_CREDENTIALS", NULL };
static const char *const gemini_auth_files[] = { ".gemini/oauth_creds.json", NULL };

static int gemini_prepare(const struct ar_call_spec *spec, struct ar_call_setup *out,
                          struct ar_error *err)
{
    struct ar_strv *a = &out->argv;
    int rc = ar_strv_push(a, ar_provider_bin(&ar_provider_gemini));
    rc |= ar_strv_pushv(a, (const char *const[]){ "-o", "stream-json", NULL });
    /* default does not even offer write tools; auto_edit allows edits but not shell. */
    rc |= ar_strv_pushv(a,
                        (const char *const[]){ "--approval-mode",
                                               spec->allow_edits ? "auto_edit" : "default", NULL });
    if (spec->resume)
        rc |= ar_strv_pushv(a, (const char *const[]){ "--resume", spec->resume, NULL });
    if (rc)
        return ar_error_set(err, AR_ENOMEM, "gemini", "out of memory");
    /* The workspace's trust, a private home, the tools and the model (gemini_posture.c).
     * GEMINI_CLI_NO_RELAUNCH is left alone: the supervisor signals the whole
     * process group, which reaches the relaunched child, and the relaunch sets
     * node's heap size for big contexts. */
    return ar_gemini_posture(spec, out, err);
}

/*
 * A prompt as data (the rule of every call). Headless gemini 0.61 takes a prompt whose first
 * byte is '/' for one of its commands, the checkout's own .gemini/commands among them even
 * untrusted, whose body then replaces the prompt: a newline in front keeps it text, and the
 * model reads the same words. Its `@path` file mentions are kept from reading anything by
 * where an untrusted text call runs (gemini_posture.c).
 */
static int gemini_deliver(const struct ar_call_spec *spec, const char *prompt, size_t len,
                          struct ar_buf *out, struct ar_error *err)
{
    (void)spec;
    if (!len || prompt[0] != '/')
        return 0;
    int rc = ar_buf_reserve(out, len + 1);
    rc = rc ? rc : ar_buf_putc(out, '\n');
    rc = rc ? rc : ar_buf_append(out, prompt, len);
    return rc ? ar_error_set(err, AR_ENOMEM, "gemini", "out of memory") : 0;
}

/* One call's stream state: the common part and what only gemini's stream needs. */
struct gemini_unwrap {
    struct ar_unwrap u;
    struct ar_buf text; /* the assistant's message deltas, concatenated */
    json_t *pending;    /* tool id -> path of a write tool awaiting its tool_result */
};

static struct gemini_unwrap *gemini_of(struct ar_unwrap *u)
{
    return ar_container_of(u, struct gemini_unwrap, u);
}

static struct ar_unwrap *gemini_unwrap_new(const struct ar_call_spec *spec)
{
    (void)spec;
    struct gemini_unwrap *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    ar_pv_unwrap_init(&g->u, &ar_provider_gemini);
    ar_buf_init(&g->text, AR_BUF_UNLIMITED);
    return &g->u;
}

static void gemini_unwrap_free(struct ar_unwrap *u)
{
    if (!u)
        return;
    struct gemini_unwrap *g = gemini_of(u);
    ar_buf_finish(&g->text);
    json_decref(g->pending);
    ar_pv_unwrap_finish(&g->u);
    free(g);
}

static int is_write_tool(const char *name)
{
    static const char *const w[] = { "write_file", "replace", "edit", "smart_edit", NULL };
    for (size_t i = 0; w[i]; i++)
        if (!strcmp(w[i], name))
            return 1;
    return 0;
}

/*
 * Whether a tool_result error is gemini refusing the call (DESIGN §4b: denied), not the
 * tool failing at its work (an edit whose old text was not found, a file not found):
 * gemini 0.61's ToolErrorType values for a boundary, read from its bundle. A tool the
 * approval mode or a policy left out (policies remove denied tools) comes back as
 * tool_not_registered, which claims nothing for a tool that would not have changed
 * anything; a write out of the workspace fails the tool's own parameter check, as
 * invalid_tool_params "Path not in workspace: …" (recorded: stream-tool-write-outside).
 */
static int refused(const char *tool, const char *etype, const char *emsg)
{
    static const char *const boundaries[] = { "policy_violation", "path_not_in_workspace",
                                              "sandbox_expansion_required", "permission_denied",
                                              NULL };
    if (!etype)
        return 0;
    for (size_t i = 0; boundaries[i]; i++)
        if (!strcmp(etype, boundaries[i]))
            return 1;
    int acts = is_write_tool(tool) || !strcmp(tool, "run_shell_command");
    if (!strcmp(etype, "tool_not_registered"))
        return acts;
    return !strcmp(etype, "invalid_tool_params") && emsg &&
           (strstr(emsg, "Path not in workspace") || strstr(emsg, "outside the allowed workspace"));
}

/* The main model: the one with a "main" role, else the biggest prompt (the router is tiny). */
static void pick_model(struct ar_unwrap *u, const json_t *models)
{
    const char *key, *best = NULL;
    const json_t *m;
    uint64_t best_in = 0;
    json_object_foreach((json_t *)models, key, m)
    {
        if (json_object_get(json_object_get(m, "roles"), "main")) {
            best = key;
            break;
        }
        const json_t *tok = json_object_get(m, "tokens");
        uint64_t in = tok ? ar_pv_u64(tok, "prompt") : ar_pv_u64(m, "input_tokens");
        if (!best || in > best_in) {
            best = key;
            best_in = in;
        }
    }
    if (best)
        ar_pv_set(&u->r.model, best);
}

static void on_error_object(struct ar_unwrap *u, const json_t *e)
{
    const json_t *code = json_object_get(e, "code");
    int status = json_is_integer(code) ? (int)json_integer_value(code) : 0;
    if (status)
        u->r.http_status = status;
    const char *msg = ar_pv_str(e, "message");
    const char *type = ar_pv_str(e, "type");
    int cls = ar_pv_classify(status, msg);
    if (!status && cls == AR_EAPI && type)
        cls = ar_pv_classify(0, type);
    ar_pv_fail(u, cls, msg ? msg : type ? type : "gemini reported an error");
}

/* stream-json `result` line. */
static void on_result(struct ar_unwrap *u, const json_t *o)
{
    struct ar_reply *r = &u->r;
    r->final_seen = 1;
    struct ar_buf *text = &gemini_of(u)->text;
    if (text->len)
        ar_pv_set(&r->text, ar_buf_cstr(text));
    const json_t *st = json_object_get(o, "stats");
    if (json_is_object(st)) {
        uint64_t prompt = ar_pv_u64(st, "input_tokens");
        uint64_t cached = ar_pv_u64(st, "cached");
        uint64_t output = ar_pv_u64(st, "output_tokens");
        uint64_t total = ar_pv_u64(st, "total_tokens");
        /* total_tokens counts thoughts, which output_tokens leaves out. */
        uint64_t thoughts = json_object_get(st, "thoughts") ? ar_pv_u64(st, "thoughts")
                            : total > prompt + output       ? total - prompt - output
                                                            : 0;
        r->usage.cache_read = cached;
        r->usage.input = json_object_get(st, "input") ? ar_pv_u64(st, "input")
                         : prompt > cached            ? prompt - cached
                                                      : 0;
        r->usage.output = output + thoughts;
        r->usage.reasoning = thoughts;
        r->has_usage = 1;
        pick_model(u, json_object_get(st, "models"));
    }
    const char *status = ar_pv_str(o, "status");
    if (status && strcmp(status, "success") != 0) {
        const json_t *e = json_object_get(o, "error");
        if (json_is_object(e))
            on_error_object(u, e);
        else
            ar_pv_fail(u, AR_EAPI, "gemini ended with an error status");
    }
}

static int gemini_unwrap_line(struct ar_unwrap *u, const char *line, size_t len,
                              struct ar_progress *ev)
{
    if (ev)
        memset(ev, 0, sizeof(*ev));
    struct gemini_unwrap *g = gemini_of(u);
    json_t *o = ar_pv_parse_line(u, line, len);
    const char *type = ar_pv_str(o, "type");
    int final = 0;
    if (!type || (!json_object_get(o, "timestamp") && strcmp(type, "result") != 0)) {
        /* gemini prints noise; every event of its stream has a timestamp. */
        u->garbage++;
    } else if (!strcmp(type, "init")) {
        u->saw_event = 1;
        if (ar_pv_str(o, "session_id"))
            ar_pv_set(&u->r.session_id, ar_pv_str(o, "session_id"));
    } else if (!strcmp(type, "message")) {
        u->saw_event = 1;
        const char *role = ar_pv_str(o, "role");
        const char *content = ar_pv_str(o, "content");
        if (role && !strcmp(role, "assistant") && content)
            ar_buf_puts(&g->text, content);
    } else if (!strcmp(type, "tool_use")) {
        u->saw_event = 1;
        const char *name = ar_pv_str(o, "tool_name");
        const json_t *par = json_object_get(o, "parameters");
        const char *path = ar_pv_str(par, "file_path");
        if (!path)
            path = ar_pv_str(par, "absolute_path");
        if (!path)
            path = ar_pv_str(par, "path");
        ar_pv_event(u, ev, name, path);
        /* The file counts once its tool_result says success: the default
         * approval mode answers "Tool not found". */
        const char *id = ar_pv_str(o, "tool_id");
        const char *target = path ? path : ar_pv_str(par, "command");
        ar_pv_tool_seen(u, id, name, target);
        if (name && is_write_tool(name) && path && id) {
            if (!g->pending)
                g->pending = json_object();
            json_object_set_new(g->pending, id, json_string(path));
        }
    } else if (!strcmp(type, "tool_result")) {
        u->saw_event = 1;
        const char *id = ar_pv_str(o, "tool_id");
        const char *status = ar_pv_str(o, "status");
        const char *path = id ? json_string_value(json_object_get(g->pending, id)) : NULL;
        if (path && status && !strcmp(status, "success"))
            ar_pv_add_file(u, path);
        if (path)
            json_object_del(g->pending, id);
        const char *name, *target;
        if (ar_pv_tool_lookup(u, id, &name, &target)) {
            if (status && !strcmp(status, "success") &&
                (is_write_tool(name) || !strcmp(name, "run_shell_command")))
                u->r.acted = 1;
            const json_t *e = json_object_get(o, "error");
            if (status && !strcmp(status, "error") &&
                refused(name, ar_pv_str(e, "type"), ar_pv_str(e, "message")))
                ar_pv_deny(u, name, target);
        }
    } else if (!strcmp(type, "error")) {
        /* A warning such as "Loop detected, stopping execution": kept as the
         * message should the call end without text. */
        u->saw_event = 1;
        if (ar_pv_str(o, "message") && !u->r.error_msg)
            ar_pv_set(&u->r.error_msg, ar_pv_str(o, "message"));
    } else if (!strcmp(type, "result") &&
               (json_object_get(o, "status") || json_object_get(o, "stats"))) {
        u->saw_event = 1;
        on_result(u, o);
        final = 1;
    } else {
        /* A timestamped event of a kind this adapter does not know (a newer gemini's). */
        u->r.unknown_events++;
    }
    json_decref(o);
    return final;
}

const char *ar_gemini_find_error(const char *data, size_t len, size_t *obj_len)
{
    /* The error object is the last JSON object on stderr, pretty-printed and
     * mixed with noise: try each '{' that starts a line, from the end. */
    int tries = 0;
    for (size_t i = len; i-- > 0 && tries < 64;) {
        if (data[i] != '{' || (i > 0 && data[i - 1] != '\n'))
            continue;
        tries++;
        json_error_t je;
        json_t *o = json_loadb(data + i, len - i, JSON_DISABLE_EOF_CHECK, &je);
        int ok = json_is_object(o) && json_is_object(json_object_get(o, "error"));
        json_decref(o);
        if (ok) {
            if (obj_len)
                *obj_len = je.position;
            return data + i;
        }
    }
    return NULL;
}

static int apply_stderr(struct ar_unwrap *u, const char *data, size_t len)
{
    size_t n = 0;
    const char *p = data ? ar_gemini_find_error(data, len, &n) : NULL;
    if (!p)
        return 0;
    json_t *o = json_loadb(p, n, JSON_DISABLE_EOF_CHECK, NULL);
    if (ar_pv_str(o, "session_id") && !u->r.session_id)
        ar_pv_set(&u->r.session_id, ar_pv_str(o, "session_id"));
    on_error_object(u, json_object_get(o, "error"));
    json_decref(o);
    return 1;
}

/* gemini's exit status when it cannot authenticate, before any request
 * (ExitCodes.FATAL_AUTHENTICATION_ERROR, 0.61.0): no auth method, no key. */
#define GEMINI_EXIT_AUTH 41

/*
 * The line of a fatal start-up message that says what is wrong: the last line of stderr
 * that is not its advice or a bullet ("When using Gemini API, you must specify the
 * GEMINI_API_KEY environment variable." before "Update your environment and try
 * again…"). Caller free()s; NULL when stderr is empty.
 */
static char *fatal_message(const char *data, size_t len)
{
    while (data && len) {
        char *line = ar_pv_last_line(data, len);
        if (!line)
            return NULL;
        if (strncmp(line, "Update your environment", 23) != 0 &&
            strncmp(line, "\xe2\x80\xa2", 3) != 0 /* a bullet */)
            return line;
        free(line);
        const char *at = data + len;
        while (at > data && (at[-1] == '\n' || at[-1] == '\r' || at[-1] == ' '))
            at--;
        while (at > data && at[-1] != '\n')
            at--;
        len = (size_t)(at - data);
    }
    return NULL;
}

static void gemini_unwrap_finish(struct ar_unwrap *u, const struct ar_exit_info *exit,
                                 struct ar_reply *out)
{
    if (!u->r.final_seen && !u->r.error && exit && !exit->killed && !exit->term_signal &&
        exit->status == GEMINI_EXIT_AUTH) {
        char *msg = fatal_message(exit->stderr_tail, exit->stderr_len);
        ar_pv_fail(u, AR_EAUTH, msg ? msg : "gemini could not authenticate (exit status 41)");
        free(msg);
    }
    if (!u->r.final_seen && !u->r.error && exit && !exit->killed && !exit->term_signal &&
        !apply_stderr(u, exit->stderr_tail, exit->stderr_len)) {
        /* The exit status is the HTTP status & 255 (401 → 145, 429 → 173, 500 → 244). */
        if (exit->status >= 400 - 256 && exit->status <= 599 - 256) {
            char msg[64];
            snprintf(msg, sizeof(msg), "gemini exited with %d (HTTP %d)", exit->status,
                     exit->status + 256);
            u->r.http_status = exit->status + 256;
            ar_pv_fail(u, ar_pv_classify(exit->status + 256, NULL), msg);
        }
    }
    ar_pv_finish(u, exit, out);
}

/* gemini -o json: one pretty-printed object. */
static int whole_json(struct ar_unwrap *u, json_t *doc)
{
    const json_t *models = json_object_get(json_object_get(doc, "stats"), "models");
    if (!json_object_get(doc, "session_id") ||
        !(json_object_get(doc, "response") || json_object_get(doc, "error") || models))
        return 0;
    struct ar_reply *r = &u->r;
    u->saw_event = 1;
    ar_pv_set(&r->session_id, ar_pv_str(doc, "session_id"));
    if (ar_pv_str(doc, "response")) {
        ar_pv_set(&r->text, ar_pv_str(doc, "response"));
        r->final_seen = 1;
    }
    const char *key;
    const json_t *m;
    json_object_foreach((json_t *)models, key, m)
    {
        const json_t *t = json_object_get(m, "tokens");
        uint64_t prompt = ar_pv_u64(t, "prompt"), cached = ar_pv_u64(t, "cached");
        uint64_t thoughts = ar_pv_u64(t, "thoughts");
        r->usage.input += json_object_get(t, "input") ? ar_pv_u64(t, "input")
                          : prompt > cached           ? prompt - cached
                                                      : 0;
        r->usage.cache_read += cached;
        r->usage.output += ar_pv_u64(t, "candidates") + thoughts;
        r->usage.reasoning += thoughts;
        r->has_usage = 1;
    }
    pick_model(u, models);
    if (json_is_object(json_object_get(doc, "error"))) {
        r->final_seen = 1;
        on_error_object(u, json_object_get(doc, "error"));
    }
    return 1;
}

static int gemini_unwrap_captured(const char *data, size_t len, struct ar_reply *out)
{
    return ar_pv_captured(&ar_provider_gemini, data, len, whole_json, out);
}

static int gemini_unwrap_stderr(const char *data, size_t len, struct ar_reply *out)
{
    struct ar_unwrap *u = gemini_unwrap_new(NULL);
    if (!u)
        return AR_ENOMEM;
    int found = apply_stderr(u, data, len);
    if (found) {
        if (!out->session_id) {
            out->session_id = u->r.session_id;
            u->r.session_id = NULL;
        }
        out->error = u->r.error;
        free(out->error_msg);
        out->error_msg = u->r.error_msg;
        u->r.error_msg = NULL;
    }
    gemini_unwrap_free(u);
    return found ? 0 : AR_ENOJSON;
}

const struct ar_provider ar_provider_gemini = {
    .name = "gemini",
    .bin_env = "AGENTRUN_GEMINI_BIN",
    .install_hint = "npm install -g @google/gemini-cli",
    .model_env = "GEMINI_MODEL",
    .auth_env = gemini_auth_env,
    .auth_files = gemini_auth_files,
    .auth_help = "set GEMINI_API_KEY, or use Vertex AI (GOOGLE_GENAI_USE_VERTEXAI=true with "
                 "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or GOOGLE_API_KEY)",
    .posture_note = "an untrusted workspace through a private GEMINI_CLI_HOME: the user's settings "
                    "plus tools.core, links to the rest of ~/.gemini; the user's own hooks and "
                    "stdio MCP servers are off too unless --trust-project",
    .tested_min = "0.61.0",
    .tested_max = "0.61.0",
    .login = ar_gemini_login,
    .prepare = gemini_prepare,
    .deliver = gemini_deliver,
    .unwrap_new = gemini_unwrap_new,
    .unwrap_line = gemini_unwrap_line,
    .unwrap_finish = gemini_unwrap_finish,
    .unwrap_free = gemini_unwrap_free,
    .unwrap_captured = gemini_unwrap_captured,
    .unwrap_stderr = gemini_unwrap_stderr,
};
