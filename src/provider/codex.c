/*
 * The codex adapter (Codex CLI 0.169): `codex exec --json … -`, prompt on
 * stdin (which is closed: codex waits forever on an open stdin). See shared
 * FORMATS.md for the events read here.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "provider/codex.h"
#include "provider/codex_rollout.h"
#include "provider/codex_schema.h"
#include "provider/common.h"
#include "provider/provider.h"
#include "util/file.h"
#include "util/macros.h"

static const char *const codex_auth_env[] = { "OPENAI_API_KEY", "CODEX_API_KEY", NULL };
static const char *const codex_auth_files[] = { ".codex/auth.json", NULL };
static const char *const codex_login_argv[] = { "login", "status", NULL };

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
    /* codex's events never name the model; the rollout file does, but an ephemeral call
     * (no session kept) writes none. Its telemetry does, on stderr, when asked
     * (RUST_LOG target codex_otel.trace_safe: "… model=gpt-5.5 slug=gpt-5.5", about eight
     * lines a turn; no prompt text): what prices a call that asked for no model. */
    if (spec->no_session && !spec->resume && !spec->model) {
        const char *log = getenv("RUST_LOG");
        rc |= ar_strv_pushf(&out->env, "RUST_LOG=%s,%s=info", log && *log ? log : "error",
                            AR_CODEX_TELEMETRY);
    }
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

/* One call's stream state: the common part and what only codex's stream needs. */
struct codex_unwrap {
    struct ar_unwrap u;
    int edits;    /* the call may edit files: a shell command may have changed the tree */
    char *schema; /* the contract, to undo strict mode's nulls; NULL without one */
    /* A resumed thread: its running total before this call, read from the rollout. */
    int resumed;
    int has_base;
    struct ar_usage base;
};

static struct codex_unwrap *codex_of(struct ar_unwrap *u)
{
    return ar_container_of(u, struct codex_unwrap, u);
}

static void codex_unwrap_free(struct ar_unwrap *u)
{
    if (!u)
        return;
    struct codex_unwrap *c = codex_of(u);
    free(c->schema);
    ar_pv_unwrap_finish(&c->u);
    free(c);
}

static struct ar_unwrap *codex_unwrap_new(const struct ar_call_spec *spec)
{
    struct codex_unwrap *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    ar_pv_unwrap_init(&c->u, &ar_provider_codex);
    if (!spec)
        return &c->u;
    c->edits = spec->allow_edits;
    c->resumed = spec->resume != NULL;
    if (spec->schema)
        c->schema = strdup(spec->schema);
    if (spec->resume && ar_codex_thread_total(spec->resume, &c->base) == 0)
        c->has_base = 1;
    /* codex's events never name the model: the one asked for is the first answer. */
    if (spec->model)
        ar_pv_set(&c->u.r.model, spec->model);
    return &c->u;
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
        else if (completed && codex_of(u)->edits)
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
    struct codex_unwrap *c = codex_of(u);
    struct ar_usage raw;
    ar_codex_token_usage(usage, &raw);
    if (c->resumed) {
        if (c->has_base && raw.input >= c->base.input && raw.output >= c->base.output) {
            raw.input -= c->base.input;
            raw.cache_read -= AR_MIN(raw.cache_read, c->base.cache_read);
            raw.cache_write -= AR_MIN(raw.cache_write, c->base.cache_write);
            raw.output -= c->base.output;
            raw.reasoning -= AR_MIN(raw.reasoning, c->base.reasoning);
        } else if (!c->has_base) {
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
    } else if (strchr(type, '.') && json_is_object(o)) {
        /* An event in codex's naming (thread.*, turn.*, item.*) this adapter does not know:
         * a newer codex's, counted in the call's unknown_events. */
        u->r.unknown_events++;
    } else {
        u->garbage++;
    }
    json_decref(o);
    return final;
}

/* The model codex's telemetry names last on stderr (see codex_prepare()), or NULL.
 * Caller free()s. */
static char *model_in_telemetry(const char *data, size_t len)
{
    static const char key[] = " model=";
    char *model = NULL;
    for (const char *p = data, *end = data + len; p && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *m =
            memmem(p, (size_t)(e - p), AR_CODEX_TELEMETRY ":", sizeof(AR_CODEX_TELEMETRY));
        if (m && (m = memmem(m, (size_t)(e - m), key, sizeof(key) - 1)) != NULL) {
            m += sizeof(key) - 1;
            size_t n = 0;
            while (m + n < e && m[n] != ' ' && m[n] != '"' && n < 128)
                n++;
            if (n) {
                free(model);
                model = strndup(m, n);
            }
        }
        p = nl ? nl + 1 : end;
    }
    return model;
}

/* The last line of stderr that is not codex's telemetry, or NULL. Caller free()s. */
static char *last_said(const char *data, size_t len)
{
    while (data && len) {
        char *line = ar_pv_last_line(data, len);
        if (!line || !strstr(line, AR_CODEX_TELEMETRY ":"))
            return line;
        free(line);
        const char *at = data + len;
        while (at > data && (at[-1] == '\n' || at[-1] == '\r'))
            at--;
        while (at > data && at[-1] != '\n')
            at--;
        len = (size_t)(at - data);
    }
    return NULL;
}

static void codex_unwrap_finish(struct ar_unwrap *u, const struct ar_exit_info *exit,
                                struct ar_reply *out)
{
    if (exit && exit->stderr_tail)
        denials_in_stderr(u, exit->stderr_tail, exit->stderr_len);
    /* codex's events never name the model; the thread's rollout does (turn_context), and
     * for an ephemeral call its telemetry on stderr. */
    if (u->r.session_id) {
        /* The rollout also says which codex wrote it and the quota's state (rate_limits). */
        struct ar_codex_rollout_facts f;
        ar_codex_thread_facts(u->r.session_id, &f);
        if (!u->r.model && f.model) {
            u->r.model = f.model;
            f.model = NULL;
        }
        if (f.cli_version && !u->r.cli_version) {
            u->r.cli_version = f.cli_version;
            f.cli_version = NULL;
        }
        if (f.has_limits)
            ar_pv_rate_limit(u, f.status, f.window, f.used_percent, f.resets_at, "codex:rollout");
        ar_codex_rollout_facts_finish(&f);
    }
    if (!u->r.model && exit && exit->stderr_tail)
        u->r.model = model_in_telemetry(exit->stderr_tail, exit->stderr_len);
    /* A codex that ended without its final event is explained by its last words, which
     * are never a telemetry line. */
    if (!u->r.final_seen && !u->r.error && exit && !exit->killed && !exit->term_signal &&
        exit->status != 0) {
        char *line = last_said(exit->stderr_tail, exit->stderr_len);
        if (line)
            ar_pv_fail(u, AR_ECLIFAILED, line);
        free(line);
    }
    /* With --output-schema, strict mode made optional properties nullable; the
     * contract itself does not allow those nulls, so they are taken out again. */
    const char *schema = codex_of(u)->schema;
    if (schema && u->r.text) {
        char *fixed = ar_codex_unstrict(u->r.text, schema);
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
    .auth_help = "set CODEX_API_KEY, or store OPENAI_API_KEY with 'printenv OPENAI_API_KEY | codex "
                 "login --with-api-key'",
    .posture_note =
        "-c overrides (per-call project trust, project_doc_max_bytes=0, model_instructions_file) "
        "and --disable FEATURE; the user's config.toml and its model providers stay",
    .tested_min = "0.169.0",
    .tested_max = "0.171.0",
    .login_argv = codex_login_argv,
    .login = ar_codex_login,
    .login_before_call = 1,
    .prepare = codex_prepare,
    .native_contract = ar_codex_native_contract,
    .unwrap_new = codex_unwrap_new,
    .unwrap_line = codex_unwrap_line,
    .unwrap_finish = codex_unwrap_finish,
    .unwrap_free = codex_unwrap_free,
    .unwrap_captured = codex_unwrap_captured,
    .unwrap_stderr = codex_unwrap_stderr,
};
