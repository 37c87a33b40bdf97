/*
 * The MCP server: stdin in, newline-delimited JSON-RPC messages out, tool
 * calls on the loop.
 *
 * The life of the server, in words before the code:
 *   - the input (a pipe, a terminal, a socket, or a file read through libuv's
 *     thread pool) feeds the line framing (jsonrpc.c); each line is parsed
 *     and dispatched by the method table below; every request gets exactly
 *     one answer, a result or a JSON-RPC error, and nothing else is ever
 *     written to the output;
 *   - the output (output.c) is written from the loop, never waited for: while
 *     the client lags behind it, no new request is read and progress
 *     notifications are left out; a client that reads nothing for a minute is
 *     taken for gone (the server stops); a result too long for a client is
 *     cut to fit, the rest written to files (result.c);
 *   - initialize must come first (ping may come any time); the protocol
 *     version is the client's when it is one of ours, else our latest;
 *   - tools/call checks the arguments against the tool's inputSchema, reads
 *     them into the library's run options (args.c) and starts the call: what
 *     it may do, spend and read, and how many CLIs run at once, are the
 *     share's rules (run.share), which the library keeps; at most jobs + 256
 *     calls are open;
 *   - notifications/cancelled ends that call's work (its CLI's process group
 *     gets SIGTERM) and the call is never answered, as the spec asks;
 *   - the end of the input, or ar_mcp_server_stop() (a signal), stops the
 *     reading and cancels every call; when the last call's CLI is gone and
 *     the output is written, every handle is closed, and the last close
 *     callback runs done and frees the server (start's failure path closes
 *     what it opened the same way, without done).
 *
 * Who owns what: the server's list owns each call until the call is over
 * (ar_mcp_call_done() unlinks it), and every function of this file that calls
 * out while it uses a call (a tool's start, the posture) holds it across:
 * the last hold frees it, so nothing up the stack is left with a freed call.
 * The task store owns each task (tasks.h); a call borrows its task until it
 * hands the result over, in ar_mcp_call_done().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/extract.h"
#include "mcp/call.h"
#include "mcp/jsonrpc.h"
#include "mcp/mcp.h"
#include "mcp/output.h"
#include "mcp/result.h"
#include "mcp/tasks.h"
#include "util/buf.h"
#include "util/json_dump.h"

/* The versions we speak, the latest first (the answer to one we do not know). */
static const char *const versions[] = { "2025-11-25", "2025-06-18", NULL };

#define NTOOLS 5

/* The most calls waiting for a job slot; more are refused. */
#define MAX_WAITING 256

struct ar_mcp_server {
    uv_loop_t *loop;
    struct ar_mcp_options o;
    struct ar_contract *input[NTOOLS]; /* each tool's inputSchema, as a contract */
    char *schema[NTOOLS];              /* ... as JSON text (ar_mcp_tool_input_schema()) */
    char *cwd;                         /* the server's directory (real path): results' files */

    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tty_t tty;
    } in;
    int in_file; /* the input is a regular file (or /dev/null): read with uv_fs_read */
    int in_open; /* the input handle, or a file read in flight */
    int reading; /* still reading (no EOF, no stop) */
    int paused;  /* reading held back while the client lags behind the output */
    uv_fs_t fs;
    char fsbuf[64 << 10];
    struct ar_rpc_lines lines;

    struct ar_mcp_out out;

    int initialized;
    const char *version; /* the negotiated protocol version */
    int stopping;        /* the input ended or stop: no new calls */
    int stops;

    struct ar_mcp_call *calls; /* every call not yet over, queued first-in first */
    unsigned running;
    int pumping;
    unsigned long serial;
    struct ar_mcp_tasks tasks; /* 2025-11-25 task-augmented calls */

    struct ar_mcp_results results; /* the files of results too long for a client */

    int open_handles; /* handles not yet closed; the last close callback frees the server */
    int closing;      /* every handle is being closed */
    int started;      /* ar_mcp_server_start() succeeded: done comes */
    ar_mcp_done_fn *done;
    void *done_arg;
};

/* ---- output and logs ------------------------------------------------------------------- */

static void logf_(struct ar_mcp_server *s, enum ar_log_level level, const char *fmt, ...)
    AR_PRINTF(3, 4);

static void logf_(struct ar_mcp_server *s, enum ar_log_level level, const char *fmt, ...)
{
    const struct ar_logger *l = &s->o.run.logger;
    if (!l->fn || level > l->level)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    l->fn(l->arg, level, NULL, NULL, msg);
}

static void stop(struct ar_mcp_server *s);
static void maybe_finish(struct ar_mcp_server *s);
static void input_pause(struct ar_mcp_server *s, int pause);

static void send_msg(struct ar_mcp_server *s, json_t *msg)
{
    ar_mcp_out_send(&s->out, msg, 0);
}

/* The output's news, from the loop. */
static void on_out_broken(void *arg)
{
    struct ar_mcp_server *s = arg;
    if (!s->stopping)
        stop(s);
    maybe_finish(s);
}

static void on_out_drained(void *arg)
{
    maybe_finish(arg);
}

/* A client that reads no answers gets no more requests read. */
static void on_out_lagging(void *arg, int lagging)
{
    input_pause(arg, lagging);
}

static void send_error(struct ar_mcp_server *s, json_t *id, int code, const char *message,
                       json_t *data)
{
    send_msg(s, ar_rpc_error_new(id, code, message, data));
}

static void send_result(struct ar_mcp_server *s, json_t *id, json_t *result)
{
    send_msg(s, ar_rpc_result_new(id, result));
}

/* ---- the end --------------------------------------------------------------------------- */

static void server_free(struct ar_mcp_server *s)
{
    ar_mcp_results_finish(&s->results);
    for (size_t i = 0; i < NTOOLS; i++) {
        ar_contract_destroy(s->input[i]);
        free(s->schema[i]);
    }
    ar_rpc_lines_finish(&s->lines);
    ar_mcp_tasks_finish(&s->tasks);
    free(s->cwd);
    free(s);
}

/* A handle of the server closed: after the last one, done and the free. */
static void handle_closed(struct ar_mcp_server *s)
{
    if (--s->open_handles > 0 || !s->closing) {
        if (!s->closing)
            maybe_finish(s);
        return;
    }
    if (s->started && s->done)
        s->done(s, s->done_arg);
    server_free(s);
}

static void on_out_closed(void *arg)
{
    handle_closed(arg);
}

static void on_in_closed(uv_handle_t *h)
{
    struct ar_mcp_server *s = h->data;
    s->in_open = 0;
    handle_closed(s);
}

/* Closes every handle still open; the last close callback frees the server. */
static void close_all(struct ar_mcp_server *s)
{
    s->closing = 1;
    ar_mcp_out_close(&s->out);
    if (!s->in_file && s->in_open && !uv_is_closing(&s->in.handle))
        uv_close(&s->in.handle, on_in_closed);
}

/* Everything over: no input, no call, the output written (or broken). The close
 * callbacks run from the loop, so nobody up the stack still holds the server. */
static void maybe_finish(struct ar_mcp_server *s)
{
    if (s->closing || s->reading || s->in_open || s->calls || ar_mcp_out_busy(&s->out))
        return;
    close_all(s);
}

/* ---- calls ----------------------------------------------------------------------------- */

static void call_hold(struct ar_mcp_call *c)
{
    c->holds++;
}

static void call_drop(struct ar_mcp_call *c)
{
    if (--c->holds)
        return;
    json_decref(c->id);
    json_decref(c->args);
    json_decref(c->progress_token);
    ar_run_request_destroy(c->req);
    free(c);
}

/* The call is over: off the server's list, which lets go of it. */
static void call_unlink(struct ar_mcp_call *c)
{
    struct ar_mcp_server *s = c->server;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    call_drop(c);
}

static void pump(struct ar_mcp_server *s);
static void cancel_call(struct ar_mcp_call *c);

static int v2025_11(const struct ar_mcp_server *s)
{
    return strcmp(s->version, "2025-11-25") == 0;
}

/* _meta's io.modelcontextprotocol/related-task, which every message about a task but the
 * tasks/ methods' own carries (2025-11-25, tasks). A new reference. */
static json_t *related_task(const struct ar_mcp_task *t)
{
    return json_pack("{s:{s:s}}", "io.modelcontextprotocol/related-task", "taskId", t->id);
}

static void task_status(struct ar_mcp_server *s, const struct ar_mcp_task *t)
{
    send_msg(s, ar_rpc_notification_new("notifications/tasks/status", ar_mcp_task_json(t)));
}

/* A task's call is over: r (taken) is its CallToolResult, handed to the store for
 * tasks/result and sent to every request already waiting on it. */
static void task_done(struct ar_mcp_server *s, struct ar_mcp_task *t, json_t *r)
{
    if (!r)
        r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", "out of memory",
                      "isError", 1);
    json_t *meta = related_task(t);
    if (r && meta)
        json_object_set_new(r, "_meta", meta);
    else
        json_decref(meta);
    ar_mcp_task_over(t, r);
    task_status(s, t);
    size_t i;
    json_t *id;
    json_array_foreach(t->waiters, i, id)
    {
        json_t *copy = r ? json_deep_copy(r) : NULL;
        if (copy)
            send_result(s, id, copy);
        else
            send_error(s, id, AR_RPC_INTERNAL_ERROR, "out of memory", NULL);
    }
    json_array_clear(t->waiters);
}

/* The answer to a tools/call: the response, or for a task-augmented call its result. */
static void reply_call(struct ar_mcp_server *s, json_t *id, struct ar_mcp_task *t, json_t *r)
{
    if (t)
        task_done(s, t, r);
    else if (r)
        send_result(s, id, r);
    else
        send_error(s, id, AR_RPC_INTERNAL_ERROR, "out of memory", NULL);
}

void ar_mcp_call_done(struct ar_mcp_call *c, json_t *structured, const char *text, int is_error,
                      double cost_usd, int known)
{
    struct ar_mcp_server *s = c->server;
    if (c->finished) {
        json_decref(structured);
        return;
    }
    c->finished = 1;
    /* What it spent is the share's to count (the library's budget): nothing to add here. */
    (void)cost_usd;
    (void)known;
    if (c->cancelled && !c->task) {
        json_decref(structured);
        logf_(s, AR_LOG_INFO, "%s call cancelled by the client: not answered", c->tool->name);
    } else {
        /* The text may hold any bytes a model wrote: not UTF-8 becomes U+FFFD. */
        json_t *r =
            json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text", "text",
                      ar_json_text(text ? text : "", text ? strlen(text) : 0), "isError", is_error);
        if (r && structured)
            json_object_set_new(r, "structuredContent", structured);
        else
            json_decref(structured);
        if (r)
            ar_mcp_result_fit(&s->results, c->tool, r);
        reply_call(s, c->id, c->task, r);
    }
    c->task = NULL; /* handed over: the store may drop it from now on */
    if (c->started && s->running)
        s->running--;
    call_unlink(c);
    pump(s);
    maybe_finish(s);
}

void ar_mcp_call_fail(struct ar_mcp_call *c, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ar_mcp_call_done(c, NULL, msg, 1, 0, 1);
}

void ar_mcp_call_progress(struct ar_mcp_call *c, const char *message)
{
    /* Progress only for a request still active; a task's stops once the task is over
     * (cancelled while its CLI still ends included): 2025-11-25, progress. */
    if (!c->progress_token || c->cancelled || c->finished ||
        (c->task && ar_mcp_task_terminal(c->task)))
        return;
    c->progress += 1;
    /* The message may quote a CLI's tool or path: not UTF-8 becomes U+FFFD. */
    json_t *p = json_pack("{s:O, s:f, s:o}", "progressToken", c->progress_token, "progress",
                          c->progress, "message", ar_json_text(message, strlen(message)));
    if (p && c->task)
        json_object_set_new(p, "_meta", related_task(c->task));
    ar_mcp_out_send(&c->server->out, ar_rpc_notification_new("notifications/progress", p), 1);
}

static void on_call(void *arg, const char *job, enum ar_call_event ev,
                    const struct ar_call_record *rec)
{
    (void)job;
    char msg[256];
    if (ev == AR_CALL_STARTED)
        snprintf(msg, sizeof(msg), "%s %s call started%s", rec->provider, rec->kind,
                 rec->waited_ms ? " (after a wait)" : "");
    else
        snprintf(msg, sizeof(msg), "%s %s call finished: exit %d%s%s", rec->provider, rec->kind,
                 rec->exit_code, rec->error ? ", " : "", rec->error ? rec->error : "");
    ar_mcp_call_progress(arg, msg);
}

static void on_progress(void *arg, const struct ar_run_progress *p)
{
    struct ar_mcp_call *c = arg;
    char msg[400];
    if (p->wait_ms > 0) {
        snprintf(msg, sizeof(msg), "waiting %.0f s before the next call: %s",
                 (double)p->wait_ms / 1000.0, p->wait_reason ? p->wait_reason : "backoff");
        ar_mcp_call_progress(c, msg);
    } else if (p->tool && strcmp(p->tool, c->last_tool) != 0) {
        /* Each new tool once, not every event of it: a CLI reports many. */
        snprintf(c->last_tool, sizeof(c->last_tool), "%s", p->tool);
        snprintf(msg, sizeof(msg), "%s uses %.60s%s%.200s", p->provider ? p->provider : "the CLI",
                 p->tool, p->path ? ": " : "", p->path ? p->path : "");
        ar_mcp_call_progress(c, msg);
    }
}

static void start_call(struct ar_mcp_call *c)
{
    struct ar_mcp_server *s = c->server;
    c->started = 1;
    s->running++;
    call_hold(c);
    c->tool->start(c);
    if (!c->finished && s->stopping)
        cancel_call(c); /* the server stopped while the call started */
    call_drop(c);
}

/* Starts queued calls, oldest first. Each starts at once: how many CLIs run at once is the
 * share's (run.share's max_calls, -j), which every call's CLI calls wait on, so a call the
 * library refuses is answered at once, never after the calls before it. A call may end
 * while it starts (and start the next itself): the walk begins again from the head. */
static void pump(struct ar_mcp_server *s)
{
    if (s->pumping)
        return;
    s->pumping = 1;
    while (!s->stopping) {
        struct ar_mcp_call *c = s->calls;
        while (c && c->started)
            c = c->next;
        if (!c)
            break;
        start_call(c);
    }
    s->pumping = 0;
}

static void cancel_call(struct ar_mcp_call *c)
{
    if (c->started && c->cancel && !c->finished)
        c->cancel(c->handle);
}

/* ---- the methods ----------------------------------------------------------------------- */

/* A list's cursor: absent (or null), else what the client sent, to be checked. */
static const json_t *cursor_of(const struct ar_rpc_message *m)
{
    const json_t *c = json_object_get(m->params, "cursor");
    return json_is_null(c) ? NULL : c;
}

static void m_initialize(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    json_t *v = json_object_get(m->params, "protocolVersion");
    const char *asked = ar_rpc_is_wide(v, NULL) ? NULL : json_string_value(v);
    if (!asked) {
        send_error(s, m->id, AR_RPC_INVALID_PARAMS,
                   "invalid params: \"protocolVersion\" must be a string", NULL);
        return;
    }
    if (s->initialized) {
        send_error(s, m->id, AR_RPC_INVALID_REQUEST, "invalid request: already initialized", NULL);
        return;
    }
    s->version = versions[0];
    for (size_t i = 0; versions[i]; i++)
        if (strcmp(asked, versions[i]) == 0)
            s->version = versions[i];
    s->initialized = 1;
    logf_(s, AR_LOG_INFO, "client asked for protocol %s; speaking %s", asked, s->version);
    json_t *r = json_pack(
        "{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", s->version, "capabilities",
        "tools", "listChanged", 0, "serverInfo", "name", "agentrun", "title", "agentrun", "version",
        s->o.version ? s->o.version : ar_version(), "instructions",
        "agentrun runs Claude Code, Codex and Gemini CLI headlessly and returns a checked "
        "result. Use `run` to hand a task to another agent, `review` for a diff, `extract` "
        "to pull JSON from text (no model), `prioritize` for PRDs and `route` for a manifest. "
        "Each result's structuredContent is the agentrun document (RunResult for run); what "
        "a call may do (edits, providers, cost, directories) is the operator's choice.");
    if (r && v2025_11(s))
        json_object_set_new(
            json_object_get(r, "capabilities"), "tasks",
            json_pack("{s:{}, s:{}, s:{s:{s:{}}}}", "list", "cancel", "requests", "tools", "call"));
    send_result(s, m->id, r);
}

static void m_ping(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    send_result(s, m->id, json_object());
}

static void m_tools_list(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    if (cursor_of(m)) {
        /* Every tool fits one page: no cursor was ever given, so none is valid. */
        send_error(s, m->id, AR_RPC_INVALID_PARAMS,
                   "invalid params: \"cursor\" is no cursor this server gave (tools/list has "
                   "one page)",
                   NULL);
        return;
    }
    json_t *tools = json_array();
    for (size_t i = 0; ar_mcp_tools[i]; i++) {
        const struct ar_mcp_tool *t = ar_mcp_tools[i];
        int ro = !t->uses_model || !(s->o.allow_edits && t->may_edit);
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:b, s:b, s:b}}", "name", t->name, "title", t->title,
            "description", t->description, "inputSchema", json_loads(s->schema[i], 0, NULL),
            "outputSchema", json_loads(t->output_schema, 0, NULL), "annotations", "title", t->title,
            "readOnlyHint", ro, "idempotentHint", !t->uses_model, "openWorldHint", t->uses_model);
        if (o && v2025_11(s))
            json_object_set_new(o, "execution", json_pack("{s:s}", "taskSupport", "optional"));
        json_array_append_new(tools, o);
    }
    send_result(s, m->id, json_pack("{s:o}", "tools", tools));
}

/* The arguments against the tool's inputSchema, checked by the library's contract
 * checker (the subset docs/prompts.md lists). Returns NULL when they hold, else the
 * violations (a new reference: an array of strings). */
static json_t *check_args(struct ar_mcp_server *s, size_t tool, json_t *args)
{
    char *text = json_dumps(args, JSON_COMPACT);
    struct ar_extraction_options xo;
    struct ar_extraction *x = NULL;
    struct ar_error err = AR_ERROR_INIT;
    json_t *bad = NULL;
    char where[256] = "";
    ar_extraction_options_init(&xo);
    xo.contract = s->input[tool];
    if (ar_rpc_wide_find(args, where, sizeof(where))) {
        /* The tools read numbers as 64-bit integers and doubles: a number past them would
         * be taken for another. */
        bad = json_pack("[s+]", where, ": a number past a 64-bit integer or a double");
    } else if (!text || ar_extract_json(text, strlen(text), &xo, &x, &err) < 0) {
        bad = json_pack("[s]", text ? err.msg : "out of memory");
    } else if (x->start != 0 || x->end != strlen(text)) {
        /* Only the arguments object itself may pass, never a value inside it. */
        bad = json_pack("[s]", "the arguments were not checked as a whole");
    } else if (!x->valid) {
        bad = json_array();
        char *v = strdup(x->violations), *save = NULL;
        for (char *l = v ? strtok_r(v, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
            json_array_append_new(bad, json_string(l));
        free(v);
    }
    ar_extraction_destroy(x);
    free(text);
    return bad;
}

static void m_tools_call(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    const char *name = json_string_value(json_object_get(m->params, "name"));
    json_t *args = json_object_get(m->params, "arguments");
    char msg[1024];
    if (!name) {
        send_error(s, m->id, AR_RPC_INVALID_PARAMS, "invalid params: \"name\" must be a string",
                   NULL);
        return;
    }
    if (args && !json_is_object(args)) {
        send_error(s, m->id, AR_RPC_INVALID_PARAMS,
                   "invalid params: \"arguments\" must be an object", NULL);
        return;
    }
    size_t ti = 0;
    while (ar_mcp_tools[ti] && strcmp(ar_mcp_tools[ti]->name, name) != 0)
        ti++;
    if (!ar_mcp_tools[ti]) {
        snprintf(msg, sizeof(msg), "unknown tool '%s' (run, review, extract, prioritize, route)",
                 name);
        send_error(s, m->id, AR_RPC_INVALID_PARAMS, msg, NULL);
        return;
    }
    /* A task-augmented call (2025-11-25) is answered at once with its task; what
     * follows, a refusal included, is the task's result. */
    struct ar_mcp_task *task = NULL;
    json_t *tp = json_object_get(m->params, "task");
    if (tp && v2025_11(s)) {
        if (!json_is_object(tp)) {
            send_error(s, m->id, AR_RPC_INVALID_PARAMS,
                       "invalid params: \"task\" must be an object", NULL);
            return;
        }
        json_t *ttl = json_object_get(tp, "ttl");
        double t = json_number_value(ttl);
        task = ar_mcp_task_create(&s->tasks,
                                  json_is_number(ttl) && t >= 0 && t < 9e15 ? (int64_t)t : -1);
        if (!task) {
            send_error(s, m->id, AR_RPC_INTERNAL_ERROR,
                       "cannot create a task: out of memory, or too many tasks kept", NULL);
            return;
        }
        send_result(s, m->id, json_pack("{s:o}", "task", ar_mcp_task_json(task)));
    }
    json_t *own_args = args ? json_incref(args) : json_object();
    json_t *bad = check_args(s, ti, own_args);
    if (bad) {
        /* 2025-06-18 lists invalid arguments among the protocol errors; 2025-11-25 makes
         * them tool errors, which the calling model sees and can correct. */
        snprintf(msg, sizeof(msg), "invalid arguments for tool '%s': %s", name,
                 json_string_value(json_array_get(bad, 0)));
        if (!v2025_11(s)) {
            send_error(s, m->id, AR_RPC_INVALID_PARAMS, msg, json_pack("{s:o}", "errors", bad));
        } else {
            struct ar_buf b;
            ar_buf_init(&b, AR_BUF_UNLIMITED);
            ar_buf_puts(&b, msg);
            for (size_t i = 1; i < json_array_size(bad); i++)
                ar_buf_printf(&b, "\n%s", json_string_value(json_array_get(bad, i)));
            json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
                                  ar_buf_cstr(&b), "isError", 1);
            ar_buf_finish(&b);
            json_decref(bad);
            reply_call(s, m->id, task, r);
        }
        json_decref(own_args);
        return;
    }
    /* Open calls beyond the -j whose CLIs may run are the ones waiting. */
    size_t open = 0;
    for (struct ar_mcp_call *o = s->calls; o; o = o->next)
        open += o->tool->uses_model && !o->finished;
    size_t waiting = open > s->o.jobs ? open - s->o.jobs : 0;
    if (ar_mcp_tools[ti]->uses_model && waiting >= MAX_WAITING) {
        /* A client that floods the queue gets told, not a server that grows. */
        snprintf(msg, sizeof(msg),
                 "%zu calls are waiting already (%u run at once: -j); try "
                 "again when some are over",
                 waiting, s->o.jobs);
        json_decref(own_args);
        reply_call(s, m->id, task,
                   json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", msg,
                             "isError", 1));
        return;
    }
    for (struct ar_mcp_call *o = s->calls; !task && o; o = o->next)
        if (!o->task && json_equal(o->id, m->id) && !o->finished) {
            json_decref(own_args);
            send_error(s, m->id, AR_RPC_INVALID_REQUEST,
                       "invalid request: a call with this id is still running", NULL);
            return;
        }
    struct ar_mcp_call *c = calloc(1, sizeof(*c));
    if (!c) {
        json_decref(own_args);
        if (task)
            task_done(s, task, NULL);
        else
            send_error(s, m->id, AR_RPC_INTERNAL_ERROR, "out of memory", NULL);
        return;
    }
    c->server = s;
    c->task = task;
    c->loop = s->loop;
    c->tool = ar_mcp_tools[ti];
    c->id = json_incref(m->id);
    c->args = own_args;
    json_t *tok = json_object_get(json_object_get(m->params, "_meta"), "progressToken");
    if (json_is_string(tok) || json_is_integer(tok))
        c->progress_token = json_incref(tok);
    /* Linked at the tail before anything can answer it, so done finds it. */
    struct ar_mcp_call **tail = &s->calls, *prev = NULL;
    while (*tail) {
        prev = *tail;
        tail = &(*tail)->next;
    }
    c->prev = prev;
    *tail = c;
    c->holds = 1; /* the list's, until the call is over */
    s->serial++;
    call_hold(c); /* this function's, while it uses c */
    int rc = ar_mcp_call_args(c, &s->o.run);
    c->run.progress = on_progress;
    c->run.progress_arg = c;
    c->run.on_call = on_call;
    c->run.call_arg = c;
    if (rc < 0 || c->finished) {
        call_drop(c);
        return;
    }
    logf_(s, AR_LOG_INFO, "tools/call %s (call %lu)", name, s->serial);
    if (!c->tool->uses_model) {
        /* No CLI: not a job. It answers before this returns. */
        c->tool->start(c);
    } else {
        ar_mcp_call_progress(c, "queued");
        pump(s);
    }
    call_drop(c);
}

static void n_cancelled(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    json_t *id = json_object_get(m->params, "requestId");
    for (struct ar_mcp_call *c = s->calls; id && c; c = c->next) {
        /* A task is cancelled with tasks/cancel: its request was answered long ago. */
        if (c->task || !json_equal(c->id, id))
            continue;
        logf_(s, AR_LOG_INFO, "the client cancelled its %s call", c->tool->name);
        c->cancelled = 1; /* so it is never answered */
        if (c->started)
            cancel_call(c);
        else
            ar_mcp_call_fail(c, "cancelled before it started");
        return;
    }
}

static struct ar_mcp_task *task_of(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    const char *id = json_string_value(json_object_get(m->params, "taskId"));
    struct ar_mcp_task *t = ar_mcp_task_find(&s->tasks, id);
    if (!t)
        send_error(s, m->id, AR_RPC_INVALID_PARAMS,
                   id ? "invalid params: no such task (unknown, or its ttl passed)"
                      : "invalid params: \"taskId\" must be a string",
                   NULL);
    return t;
}

static void m_tasks_get(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    struct ar_mcp_task *t = task_of(s, m);
    if (t)
        send_result(s, m->id, ar_mcp_task_json(t));
}

static void m_tasks_result(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    struct ar_mcp_task *t = task_of(s, m);
    if (!t)
        return;
    if (!t->over)
        json_array_append(t->waiters, m->id); /* answered when the call is over */
    else if (t->result)
        send_result(s, m->id, json_deep_copy(t->result));
    else
        send_error(s, m->id, AR_RPC_INTERNAL_ERROR, "the task's result was lost: out of memory",
                   NULL);
}

static void m_tasks_list(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    int bad;
    json_t *page = ar_mcp_tasks_page(&s->tasks, cursor_of(m), &bad);
    if (page)
        send_result(s, m->id, page);
    else if (bad)
        send_error(s, m->id, AR_RPC_INVALID_PARAMS,
                   "invalid params: \"cursor\" is no cursor this server gave", NULL);
    else
        send_error(s, m->id, AR_RPC_INTERNAL_ERROR, "out of memory", NULL);
}

/* The call of a task that is still working on it, or NULL. */
static struct ar_mcp_call *call_of(struct ar_mcp_server *s, const struct ar_mcp_task *t)
{
    for (struct ar_mcp_call *c = s->calls; c; c = c->next)
        if (c->task == t)
            return c;
    return NULL;
}

static void m_tasks_cancel(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    struct ar_mcp_task *t = task_of(s, m);
    if (!t)
        return;
    if (ar_mcp_task_terminal(t)) {
        send_error(s, m->id, AR_RPC_INVALID_PARAMS, "invalid params: the task is already over",
                   NULL);
        return;
    }
    ar_mcp_task_set(t, AR_TASK_CANCELLED, "cancelled by the client");
    send_result(s, m->id, ar_mcp_task_json(t));
    struct ar_mcp_call *c = call_of(s, t);
    if (c && c->started)
        cancel_call(c); /* its result (interrupted) still comes, for tasks/result */
    else if (c)
        ar_mcp_call_fail(c, "cancelled before it started");
}

static void n_ignore(struct ar_mcp_server *s, struct ar_rpc_message *m)
{
    (void)s;
    (void)m;
}

struct method {
    const char *name;
    void (*fn)(struct ar_mcp_server *s, struct ar_rpc_message *m);
    int notification;
    int before_init; /* allowed before initialize */
};

static const struct method methods[] = {
    { "initialize", m_initialize, 0, 1 },
    { "notifications/cancelled", n_cancelled, 1, 1 },
    { "notifications/initialized", n_ignore, 1, 1 },
    { "notifications/progress", n_ignore, 1, 1 },
    { "notifications/roots/list_changed", n_ignore, 1, 1 },
    { "ping", m_ping, 0, 1 },
    { "tasks/cancel", m_tasks_cancel, 0, 0 },
    { "tasks/get", m_tasks_get, 0, 0 },
    { "tasks/list", m_tasks_list, 0, 0 },
    { "tasks/result", m_tasks_result, 0, 0 },
    { "tools/call", m_tools_call, 0, 0 },
    { "tools/list", m_tools_list, 0, 0 },
};

static const struct method *method_find(const char *name, int notification)
{
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (methods[i].notification == notification && strcmp(methods[i].name, name) == 0)
            return &methods[i];
    return NULL;
}

static void on_line(void *arg, const char *line, size_t len, int too_long)
{
    struct ar_mcp_server *s = arg;
    char msg[160];
    if (too_long) {
        snprintf(msg, sizeof(msg), "invalid request: a message longer than %zu bytes", len);
        logf_(s, AR_LOG_WARN, "%s: dropped", msg);
        send_error(s, NULL, AR_RPC_INVALID_REQUEST, msg, NULL);
        return;
    }
    if (len == strspn(line, " \t\r") && !memchr(line, '\0', len))
        return; /* an empty line is no message */
    struct ar_rpc_message m;
    int rc = ar_rpc_message_parse(line, len, &m);
    if (rc < 0) {
        send_error(s, m.id, rc, m.error, NULL);
    } else if (m.kind == AR_RPC_RESPONSE) {
        /* We send no requests; a stray answer is dropped. */
    } else if (m.kind == AR_RPC_NOTIFICATION) {
        const struct method *f = method_find(m.method, 1);
        if (f)
            f->fn(s, &m);
    } else {
        const struct method *f = method_find(m.method, 0);
        if (!f) {
            snprintf(msg, sizeof(msg), "method not found: %.100s", m.method);
            send_error(s, m.id, AR_RPC_METHOD_NOT_FOUND, msg, NULL);
        } else if (s->stopping) {
            send_error(s, m.id, AR_RPC_INVALID_REQUEST,
                       "invalid request: the server is shutting down", NULL);
        } else if (!s->initialized && !f->before_init) {
            send_error(s, m.id, AR_RPC_INVALID_REQUEST,
                       "invalid request: the server is not initialized (send initialize first)",
                       NULL);
        } else if (m.params && !json_is_object(m.params)) {
            send_error(s, m.id, AR_RPC_INVALID_PARAMS, "invalid params: must be an object", NULL);
        } else {
            f->fn(s, &m);
        }
    }
    ar_rpc_message_finish(&m);
}

/* ---- the input ------------------------------------------------------------------------- */

static void input_ended(struct ar_mcp_server *s)
{
    if (!s->reading)
        return;
    s->reading = 0;
    ar_rpc_lines_end(&s->lines, on_line, s);
    if (!s->in_file && s->in_open && !uv_is_closing(&s->in.handle))
        uv_close(&s->in.handle, on_in_closed);
    stop(s);
}

static void feed(struct ar_mcp_server *s, const char *data, size_t n)
{
    if (ar_rpc_lines_feed(&s->lines, data, n, on_line, s) < 0) {
        logf_(s, AR_LOG_ERROR, "out of memory reading a message");
        input_ended(s);
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct ar_mcp_server *s = h->data;
    *buf = uv_buf_init(s->fsbuf, sizeof(s->fsbuf));
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct ar_mcp_server *s = st->data;
    if (nread > 0 && s->reading)
        feed(s, buf->base, (size_t)nread);
    else if (nread < 0) {
        if (nread != UV_EOF)
            logf_(s, AR_LOG_WARN, "cannot read the input: %s", uv_strerror((int)nread));
        input_ended(s);
    }
}

static void on_fs_read(uv_fs_t *req);

/* The next read of a file input; 0, or a libuv error. */
static int read_file(struct ar_mcp_server *s)
{
    uv_buf_t b = uv_buf_init(s->fsbuf, sizeof(s->fsbuf));
    s->fs.data = s;
    int rc = uv_fs_read(s->loop, &s->fs, s->o.in_fd, &b, 1, -1, on_fs_read);
    s->in_open = rc == 0;
    return rc;
}

static void on_fs_read(uv_fs_t *req)
{
    struct ar_mcp_server *s = req->data;
    ssize_t n = req->result;
    uv_fs_req_cleanup(req);
    s->in_open = 0;
    if (n > 0 && s->reading) {
        feed(s, s->fsbuf, (size_t)n);
        if (!s->reading || s->paused || read_file(s) == 0)
            goto out;
    } else if (n < 0) {
        logf_(s, AR_LOG_WARN, "cannot read the input: %s", uv_strerror((int)n));
    }
    input_ended(s);
out:
    maybe_finish(s);
}

/* Holds the reading back while the client lags behind the output, and takes it up again
 * once the output is written: a client that reads no answers gets no more requests read. */
static void input_pause(struct ar_mcp_server *s, int pause)
{
    if (s->paused == pause || !s->reading)
        return;
    s->paused = pause;
    int rc = 0;
    if (s->in_file)
        rc = pause || s->in_open ? 0 : read_file(s);
    else if (pause)
        uv_read_stop(&s->in.stream);
    else
        rc = uv_read_start(&s->in.stream, on_alloc, on_read);
    if (rc < 0) {
        logf_(s, AR_LOG_WARN, "cannot read the input: %s", uv_strerror(rc));
        input_ended(s);
    }
}

static int open_input(struct ar_mcp_server *s, struct ar_error *err)
{
    int rc;
    switch (uv_guess_handle(s->o.in_fd)) {
    case UV_TTY:
        if ((rc = uv_tty_init(s->loop, &s->in.tty, s->o.in_fd, 1)) < 0)
            break;
        s->in.handle.data = s;
        s->in_open = 1;
        s->open_handles++;
        break;
    case UV_NAMED_PIPE:
    case UV_TCP:
        if ((rc = uv_pipe_init(s->loop, &s->in.pipe, 0)) < 0)
            break;
        s->in.handle.data = s;
        s->in_open = 1;
        s->open_handles++;
        rc = uv_pipe_open(&s->in.pipe, s->o.in_fd);
        break;
    default:
        s->in_file = 1;
        s->reading = 1;
        if ((rc = read_file(s)) < 0)
            s->reading = 0;
        break;
    }
    if (rc == 0 && !s->in_file) {
        s->reading = 1;
        if ((rc = uv_read_start(&s->in.stream, on_alloc, on_read)) < 0)
            s->reading = 0;
    }
    if (rc < 0)
        return ar_error_set_sys(err, AR_EIO, rc, "stdin", "cannot read the input: %s",
                                uv_strerror(rc));
    return 0;
}

/* ---- start and stop -------------------------------------------------------------------- */

static void stop(struct ar_mcp_server *s)
{
    s->stops++;
    s->stopping = 1;
    if (s->reading) {
        s->reading = 0;
        if (!s->in_file && s->in_open && !uv_is_closing(&s->in.handle))
            uv_close(&s->in.handle, on_in_closed);
    }
    /* Ending c can end c alone: no call starts while the server stops, so next stays. */
    for (struct ar_mcp_call *c = s->calls, *next; c; c = next) {
        next = c->next;
        if (c->started)
            cancel_call(c);
        else
            ar_mcp_call_fail(c, "the server is shutting down: the call never started");
    }
    maybe_finish(s);
}

void ar_mcp_server_stop(struct ar_mcp_server *s)
{
    stop(s);
}

void ar_mcp_options_init(struct ar_mcp_options *o)
{
    memset(o, 0, sizeof(*o));
    ar_run_options_init(&o->run);
    o->jobs = 4;
    o->max_message = AR_MCP_MAX_MESSAGE;
    o->in_fd = 0;
    o->out_fd = 1;
}

int ar_mcp_server_start(uv_loop_t *loop, const struct ar_mcp_options *o, ar_mcp_done_fn *done,
                        void *arg, struct ar_mcp_server **out, struct ar_error *err)
{
    struct ar_mcp_server *s = calloc(1, sizeof(*s));
    int rc;
    if (!s)
        return ar_error_set(err, AR_ENOMEM, "", "out of memory");
    s->loop = loop;
    s->o = *o;
    if (!s->o.jobs)
        s->o.jobs = 4;
    if (!s->o.max_message)
        s->o.max_message = AR_MCP_MAX_MESSAGE;
    s->version = versions[0];
    s->done = done;
    s->done_arg = arg;
    ar_rpc_lines_init(&s->lines, s->o.max_message);
    ar_mcp_results_init(&s->results, NULL, &s->o.run.logger);
    /* The server's directory (-C's, else the working directory): where a result too long
     * for the client is written (result.c). What a call may read is the share's. */
    const char *here = o->run.cwd ? o->run.cwd : ".";
    if (!(s->cwd = realpath(here, NULL))) {
        rc = ar_error_set(err, AR_EUSAGE, "cwd", "cannot use directory '%s': %s", here,
                          strerror(errno));
        goto fail;
    }
    /* Each tool's inputSchema: its own arguments and the library's request keys. */
    for (size_t i = 0; i < NTOOLS; i++) {
        const char *t = s->schema[i] = ar_mcp_tool_input_schema(ar_mcp_tools[i]);
        if (!t) {
            rc = ar_error_set(err, AR_ENOMEM, "", "out of memory");
            goto fail;
        }
        if ((rc = ar_contract_parse(t, strlen(t), &s->input[i], err)) < 0)
            goto fail;
    }
    s->results.base = s->cwd;
    s->out.broken = on_out_broken;
    s->out.drained = on_out_drained;
    s->out.lagging = on_out_lagging;
    s->out.closed = on_out_closed;
    s->out.arg = s;
    s->out.log = &s->o.run.logger;
    rc = ar_mcp_out_open(&s->out, loop, s->o.out_fd, err);
    if (!s->out.open_handles)
        goto fail;
    s->open_handles = 1; /* the output's, which closes as one */
    /* From here the handles opened are closed on the loop, whose last close callback
     * frees the server: nothing runs the caller's loop from in here. */
    if (rc < 0 || (rc = open_input(s, err)) < 0) {
        s->reading = 0;
        close_all(s);
        return rc;
    }
    s->started = 1;
    if (out)
        *out = s;
    return 0;
fail:
    server_free(s);
    return rc;
}
