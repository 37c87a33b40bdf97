/*
 * The tools: run, review, prioritize, route (extract, which calls no model, is
 * extract.c), and the table of all five. Each row of the table
 * is a name, the JSON Schemas of its arguments and of its structuredContent,
 * and a start function that turns the checked arguments into the library's
 * options, starts the work on the server's loop and hands the result's
 * document back as structuredContent, with a few lines of text for a
 * calling model that reads only `content`.
 *
 * The arguments mirror the command's options (docs/mcp.md lists them): the
 * same names with '_' for '-', a value where the command reads a file
 * (schema, vars) and a path, under the allowed directories, where the
 * command's input is a file of the checkout (instructions, baseline, a PRD
 * folder, a manifest).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/agentrun.h"
#include "agentrun/prioritize.h"
#include "agentrun/review.h"
#include "agentrun/route.h"
#include "mcp/call.h"
#include "util/buf.h"
#include "util/json_dump.h"

/* The text content carries the answer, cut here: structuredContent has all of it. */

/* ---- the schemas ---------------------------------------------------------------------- */

/* A tool's own arguments; the library's request keys of its door are added to the
 * properties (ar_mcp_tool_input_schema(): the run tool's are all request keys). */
static const char run_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}";

static const char run_output[] =
    "{\"type\":\"object\",\"required\":[\"schema\",\"ok\"],\"properties\":{"
    "\"schema\":{\"type\":\"string\"},\"ok\":{\"type\":\"boolean\"},"
    "\"provider\":{\"type\":[\"string\",\"null\"]},\"output\":{\"type\":[\"string\",\"null\"]},"
    "\"cost_usd\":{\"type\":[\"number\",\"null\"]},\"calls\":{\"type\":\"array\"},"
    "\"files\":{\"type\":\"array\"},\"error\":{\"type\":[\"object\",\"null\"]}}}";

static const char review_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"diff\":{\"type\":\"string\",\"description\":\"a unified diff to review\"},"
    "\"rev\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a revision or range in cwd: "
    "R, R^!, A..B, A...B\"},"
    "\"staged\":{\"type\":\"boolean\",\"description\":\"the index against HEAD\"},"
    "\"instructions\":{\"type\":\"string\",\"minLength\":1,\"description\":\"review "
    "guidelines: REV:PATH from git, or a file under cwd\"},"
    "\"context_tools\":{\"type\":\"boolean\",\"description\":\"the model may read files "
    "beyond the diff\"},"
    "\"fail_on\":{\"type\":\"string\",\"enum\":[\"critical\",\"high\",\"medium\",\"low\","
    "\"info\",\"none\"]},"
    "\"strict\":{\"type\":\"boolean\"},"
    "\"max_chunk_bytes\":{\"type\":\"integer\",\"minimum\":1},"
    "\"max_chunks\":{\"type\":\"integer\",\"minimum\":1},"
    "\"jobs\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":64},"
    "\"include\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1}},"
    "\"exclude\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1}},"
    "\"no_default_excludes\":{\"type\":\"boolean\"},"
    "\"allow_binary\":{\"type\":\"boolean\"},"
    "\"baseline\":{\"type\":\"string\",\"minLength\":1,\"description\":\"a previous json, "
    "sarif or gitlab output: REV:PATH from git, or a file under cwd\"},"
    "\"panel\":{\"type\":\"string\",\"minLength\":1,\"description\":\"several providers "
    "review at once and their findings are matched: claude,codex,gemini (a model each: "
    "codex=MODEL), within the operator's --providers; not with provider, model or fallback\"},"
    "\"quorum\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":8,\"description\":\"with "
    "panel: only findings at least this many members reported count (a critical one always "
    "does), and a file is reviewed only when this many members reviewed it\"},"
    "\"escalate\":{\"type\":\"string\",\"enum\":[\"critical\",\"high\",\"medium\",\"low\","
    "\"info\"],\"description\":\"with panel: the first member reviews every chunk, the others "
    "only the chunks where it found something at or above this severity\"},"
    "\"escalate_files\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1},"
    "\"description\":\"with panel: globs of the diff's paths (as include); the other members "
    "also review every chunk holding a matching file (alone: only those)\"}}}";

static const char review_output[] =
    "{\"type\":\"object\",\"required\":[\"schema\"],\"properties\":{"
    "\"schema\":{\"type\":\"string\"},\"passed\":{\"type\":\"boolean\"},"
    "\"issues\":{\"type\":\"array\"}}}";

static const char prioritize_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"dir\"],"
    "\"properties\":{"
    "\"dir\":{\"type\":\"string\",\"minLength\":1,\"description\":\"the folder of PRDs, "
    "under cwd\"},"
    "\"recursive\":{\"type\":\"boolean\"},"
    "\"max_prd_bytes\":{\"type\":\"integer\",\"minimum\":1},"
    "\"context\":{\"type\":\"string\",\"description\":\"strategy, constraints or capacity "
    "the ranking should weigh\"},"
    "\"top\":{\"type\":\"integer\",\"minimum\":1}}}";

static const char prioritize_output[] =
    "{\"type\":\"object\",\"required\":[\"schema\"],\"properties\":{"
    "\"schema\":{\"type\":\"string\"},\"recommendations\":{\"type\":\"array\"}}}";

static const char route_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"query\",\"manifest\"],"
    "\"properties\":{"
    "\"query\":{\"type\":\"string\",\"minLength\":1},"
    "\"manifest\":{\"type\":[\"string\",\"object\"],\"description\":\"the manifest: a file "
    "under cwd, or the manifest itself {tasks, skills}\"},"
    "\"min_score\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1},"
    "\"no_llm\":{\"type\":\"boolean\",\"description\":\"never call the model\"}}}";

static const char route_output[] =
    "{\"type\":\"object\",\"required\":[\"schema\"],\"properties\":{"
    "\"schema\":{\"type\":\"string\"},\"route\":{\"type\":\"string\"},"
    "\"matches\":{\"type\":\"array\"}}}";

/* ---- argument helpers ------------------------------------------------------------------ */

const char *ar_mcp_arg_str(const struct ar_mcp_call *c, const char *key)
{
    return json_string_value(json_object_get(c->args, key));
}

int ar_mcp_arg_bool(const struct ar_mcp_call *c, const char *key)
{
    return json_is_true(json_object_get(c->args, key));
}

/* A document of the library (a string it made) as structuredContent: a new reference.
 * Numbers past 64 bits come back as doubles rather than failing the parse. */
json_t *ar_mcp_parse_doc(const char *text)
{
    if (!text)
        return NULL;
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v)
        v = json_loads(text, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, NULL);
    return v;
}

/* The schema argument as contract text (caller free()s): each number as the shortest
 * decimal that is its double, so a minimum of 1.1 stays 1.1 (json_dumps writes
 * 1.1000000000000001, which 1.1 is below). */
char *ar_mcp_schema_text(const struct ar_mcp_call *c)
{
    json_t *s = json_object_get(c->args, "schema");
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    char *text = s && ar_json_dump_compact(s, &b) == 0 ? ar_buf_detach(&b, NULL) : NULL;
    ar_buf_finish(&b);
    return text;
}

void ar_mcp_put_cut(struct ar_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (n <= AR_MCP_TEXT_MAX) {
        ar_buf_puts(b, s);
        return;
    }
    ar_buf_append(b, s, AR_MCP_TEXT_MAX);
    ar_buf_printf(b, "\n[… %zu more bytes: see structuredContent]", n - AR_MCP_TEXT_MAX);
}

static void put_cost(struct ar_buf *b, double cost, enum ar_cost_source src)
{
    if (src == AR_COST_UNKNOWN)
        ar_buf_puts(b, "cost unknown");
    else
        ar_buf_printf(b, "$%.4f", cost);
}

/* ---- the model tools: shared ------------------------------------------------------------ */

static void cancel_run(void *h)
{
    ar_run_cancel(h);
}

static void cancel_review(void *h)
{
    ar_review_cancel(h);
}

static void cancel_prioritize(void *h)
{
    ar_prioritize_cancel(h);
}

static void cancel_route(void *h)
{
    ar_route_cancel(h);
}

/* The first lines of a model tool's text: what happened, who answered, what it cost. */
static void put_run_line(struct ar_buf *b, const struct ar_result *r)
{
    if (!r)
        return;
    ar_buf_printf(b, "%s", r->provider ? r->provider : "no provider");
    if (r->model)
        ar_buf_printf(b, " (%s)", r->model);
    ar_buf_printf(b, ", %zu call%s, ", r->n_calls, r->n_calls == 1 ? "" : "s");
    put_cost(b, r->cost_usd, r->cost_source);
    ar_buf_printf(b, ", %.1f s", (double)r->duration_ms / 1000.0);
}

static int cost_known(const struct ar_result *r)
{
    return !r || !r->n_calls || r->cost_source != AR_COST_UNKNOWN;
}

/* ---- run -------------------------------------------------------------------------------- */

/* "failed (code: message)" and, when a rule of the share refused it, the operator's flag. */
static void put_failure(struct ar_buf *b, const struct ar_error *e)
{
    char hint[128];
    ar_buf_printf(b, "failed (%s: %s%s): ", ar_strerror_name(e->code),
                  e->msg[0] ? e->msg : ar_strerror(e->code),
                  ar_mcp_refusal_hint(e, hint, sizeof(hint)));
}

static void run_done(struct ar_run *run, struct ar_result *r, void *arg)
{
    (void)run;
    struct ar_mcp_call *c = arg;
    char *text = ar_result_to_json(r, 0);
    json_t *doc = ar_mcp_parse_doc(text);
    free(text);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (r->ok)
        ar_buf_puts(&b, "ok: ");
    else
        put_failure(&b, &r->error);
    put_run_line(&b, r);
    if (r->n_files)
        ar_buf_printf(&b, ", %zu file%s changed", r->n_files, r->n_files == 1 ? "" : "s");
    if (r->session_id)
        ar_buf_printf(&b, ", session %s", r->session_id);
    ar_buf_puts(&b, "\n");
    if (r->json)
        ar_mcp_put_cut(&b, r->json);
    else if (r->output)
        ar_mcp_put_cut(&b, r->output);
    double cost = r->cost_usd;
    int known = cost_known(r);
    ar_mcp_call_done(c, doc, ar_buf_cstr(&b), !r->ok, cost, known);
    ar_buf_finish(&b);
    ar_result_destroy(r);
}

/* Every argument is a request key, read into c->run by the library (args.c); what the
 * call may do is the share's, checked as the run starts. */
static void run_start(struct ar_mcp_call *c)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_run *run = NULL;
    if (ar_run_start(c->loop, &c->run, run_done, c, &run, &err) < 0) {
        ar_mcp_call_refused(c, &err);
        return;
    }
    c->handle = run;
    c->cancel = cancel_run;
}

/* ---- review ----------------------------------------------------------------------------- */

struct review_state {
    const char **include, **exclude, **escalate_files;
};

static void review_state_free(struct review_state *st)
{
    if (!st)
        return;
    free(st->include);
    free(st->exclude);
    free(st->escalate_files);
    free(st);
}

static void review_event(void *arg, const struct ar_review_event *ev)
{
    char msg[160];
    if (ev->member)
        snprintf(msg, sizeof(msg), "%s: call %zu of %zu %s", ev->member, ev->chunk + 1,
                 ev->n_chunks, ev->kind == AR_REVIEW_CHUNK_STARTED ? "started" : "finished");
    else
        snprintf(msg, sizeof(msg), "chunk %zu of %zu %s", ev->chunk + 1, ev->n_chunks,
                 ev->kind == AR_REVIEW_CHUNK_STARTED ? "started" : "finished");
    ar_mcp_call_progress(arg, msg);
}

static int write_buf(void *arg, const char *data, size_t len)
{
    return ar_buf_append(arg, data, len) < 0 ? -1 : 0;
}

static void review_done(struct ar_review_run *rv, struct ar_review_result *res, void *arg)
{
    (void)rv;
    struct ar_mcp_call *c = arg;
    review_state_free(c->tool_state);
    c->tool_state = NULL;
    struct ar_buf js, tx;
    struct ar_review_write_options wo;
    ar_review_write_options_init(&wo);
    ar_buf_init(&js, AR_BUF_UNLIMITED);
    ar_buf_init(&tx, AR_BUF_UNLIMITED);
    ar_review_write(res, AR_REVIEW_FORMAT_JSON, &wo, write_buf, &js, NULL);
    ar_review_write(res, AR_REVIEW_FORMAT_TEXT, &wo, write_buf, &tx, NULL);
    json_t *doc = ar_mcp_parse_doc(ar_buf_cstr(&js));
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_mcp_put_cut(&b, ar_buf_cstr(&tx));
    int status = res->verdict.exit_status;
    ar_mcp_call_done(c, doc, ar_buf_cstr(&b), status != 0 && status != 1, res->review.cost_usd,
                     !res->review.n_calls || res->review.cost_source != AR_COST_UNKNOWN);
    ar_buf_finish(&b);
    ar_buf_finish(&js);
    ar_buf_finish(&tx);
    ar_review_result_destroy(res);
}

static const char **string_list(json_t *a, size_t *n)
{
    *n = json_array_size(a);
    if (!*n)
        return NULL;
    const char **v = calloc(*n + 1, sizeof(*v)); /* NULL-terminated too */
    for (size_t i = 0; v && i < *n; i++)
        v[i] = json_string_value(json_array_get(a, i));
    return v;
}

static void review_start(struct ar_mcp_call *c)
{
    struct ar_review_options o;
    struct review_state *st = calloc(1, sizeof(*st));
    struct ar_error err = AR_ERROR_INIT;

    if (!st) {
        ar_mcp_call_fail(c, "out of memory");
        return;
    }
    ar_review_options_init(&o);
    o.run = c->run;
    const char *diff = ar_mcp_arg_str(c, "diff"), *rev = ar_mcp_arg_str(c, "rev");
    if ((diff != NULL) + (rev != NULL) + ar_mcp_arg_bool(c, "staged") > 1) {
        ar_mcp_call_fail(c, "give at most one of diff, rev and staged");
        goto fail;
    }
    if (diff) {
        o.diff = diff;
        o.diff_len = json_string_length(json_object_get(c->args, "diff"));
        o.label = "the diff argument";
    }
    o.rev = rev;
    o.staged = ar_mcp_arg_bool(c, "staged");
    if (ar_mcp_arg_bool(c, "context_tools"))
        o.run.tools = AR_TOOLS_READ;
    const char *fail_on = ar_mcp_arg_str(c, "fail_on");
    if (fail_on)
        o.fail_on = ar_severity_parse(fail_on, 1);
    o.strict = ar_mcp_arg_bool(c, "strict");
    json_t *v;
    if ((v = json_object_get(c->args, "max_chunk_bytes")))
        o.max_chunk_bytes = (size_t)json_integer_value(v);
    if ((v = json_object_get(c->args, "max_chunks")))
        o.max_chunks = (size_t)json_integer_value(v);
    if ((v = json_object_get(c->args, "jobs")))
        o.jobs = (unsigned)json_integer_value(v);
    st->include = string_list(json_object_get(c->args, "include"), &o.n_include);
    st->exclude = string_list(json_object_get(c->args, "exclude"), &o.n_exclude);
    o.include = st->include;
    o.exclude = st->exclude;
    o.no_default_excludes = ar_mcp_arg_bool(c, "no_default_excludes");
    o.allow_binary = ar_mcp_arg_bool(c, "allow_binary");
    /* The library reads them (REV:PATH as git resolves it, or a file under cwd), within
     * the share's directories, and holds them against the change: as for the CLI. */
    o.instructions_file = ar_mcp_arg_str(c, "instructions");
    o.baseline_file = ar_mcp_arg_str(c, "baseline");
    /* A panel names its providers: the operator's default provider and model give way
     * to it; a caller's own provider, model or fallback is refused by the library. */
    o.panel = ar_mcp_arg_str(c, "panel");
    if (o.panel) {
        if (!json_object_get(c->args, "provider"))
            o.run.provider = NULL;
        if (!json_object_get(c->args, "model"))
            o.run.model = NULL;
        if (!json_object_get(c->args, "fallback"))
            o.run.fallback = NULL;
    }
    o.escalate = ar_mcp_arg_str(c, "escalate");
    size_t n_escalate_files;
    json_t *globs = json_object_get(c->args, "escalate_files");
    st->escalate_files = string_list(globs, &n_escalate_files);
    if (n_escalate_files && !st->escalate_files) {
        ar_mcp_call_fail(c, "out of memory");
        goto fail;
    }
    o.escalate_files = st->escalate_files;
    if ((v = json_object_get(c->args, "quorum")))
        o.quorum = (unsigned)json_integer_value(v);
    o.on_event = review_event;
    o.event_arg = c;
    c->tool_state = st;
    struct ar_review_run *rv = NULL;
    if (ar_review_start(c->loop, &o, review_done, c, &rv, &err) < 0) {
        c->tool_state = NULL;
        ar_mcp_call_refused(c, &err);
        goto fail;
    }
    c->handle = rv;
    c->cancel = cancel_review;
    return;
fail:
    review_state_free(st);
}

/* ---- prioritize ------------------------------------------------------------------------- */

static void prioritize_done(struct ar_prioritize_run *pr, struct ar_prioritize_result *res,
                            void *arg)
{
    (void)pr;
    struct ar_mcp_call *c = arg;
    char *text = ar_prioritize_result_to_json(res, 0);
    json_t *doc = ar_mcp_parse_doc(text);
    free(text);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (res->ranked && !res->error)
        ar_buf_puts(&b, "ranked: ");
    else
        ar_buf_printf(&b, "no ranking (%s): ",
                      res->error ? res->error
                                 : (res->run->error.msg[0] ? res->run->error.msg
                                                           : ar_strerror(res->run->error.code)));
    put_run_line(&b, res->run);
    ar_buf_puts(&b, "\n");
    for (size_t i = 0; i < res->n_recommendations; i++) {
        const struct ar_recommendation *r = &res->recommendations[i];
        ar_buf_printf(&b, "%lld. %s", (long long)r->priority, r->prd_id);
        if (r->rationale)
            ar_buf_printf(&b, " — %s", r->rationale);
        ar_buf_puts(&b, "\n");
        if (b.len > AR_MCP_TEXT_MAX)
            break;
    }
    ar_mcp_call_done(c, doc, ar_buf_cstr(&b), res->exit_status != 0, res->run->cost_usd,
                     cost_known(res->run));
    ar_buf_finish(&b);
    ar_prioritize_result_destroy(res);
}

static void prioritize_start(struct ar_mcp_call *c)
{
    struct ar_prioritize_options o;
    struct ar_error err = AR_ERROR_INIT;

    ar_prioritize_options_init(&o);
    o.run = c->run;
    o.dir = ar_mcp_arg_str(c, "dir"); /* under cwd, within the share's directories */
    o.recursive = ar_mcp_arg_bool(c, "recursive");
    json_t *v;
    if ((v = json_object_get(c->args, "max_prd_bytes")))
        o.max_prd_bytes = (size_t)json_integer_value(v);
    if ((v = json_object_get(c->args, "top")))
        o.top = (size_t)json_integer_value(v);
    o.context = ar_mcp_arg_str(c, "context");
    struct ar_prioritize_run *pr = NULL;
    if (ar_prioritize_start(c->loop, &o, prioritize_done, c, &pr, &err) < 0) {
        ar_mcp_call_refused(c, &err);
        return;
    }
    c->handle = pr;
    c->cancel = cancel_prioritize;
}

/* ---- route ------------------------------------------------------------------------------ */

struct route_state {
    char *manifest;
};

static void route_done(struct ar_route_run *rt, struct ar_route_result *res, void *arg)
{
    (void)rt;
    struct ar_mcp_call *c = arg;
    struct route_state *st = c->tool_state;
    free(st->manifest);
    free(st);
    c->tool_state = NULL;
    char *text = ar_route_result_to_json(res, 0);
    json_t *doc = ar_mcp_parse_doc(text);
    free(text);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_printf(&b, "route: %s", ar_route_kind_name(res->kind));
    if (res->error)
        ar_buf_printf(&b, " (%s)", res->error);
    if (res->run) {
        ar_buf_puts(&b, "; ");
        put_run_line(&b, res->run);
    }
    ar_buf_puts(&b, "\n");
    for (size_t i = 0; i < res->n_matches && b.len < AR_MCP_TEXT_MAX; i++)
        ar_buf_printf(&b, "%s %s (%.2f)\n", ar_route_type_name(res->matches[i].type),
                      res->matches[i].name, res->matches[i].confidence);
    ar_mcp_call_done(c, doc, ar_buf_cstr(&b), res->kind == AR_ROUTE_ERROR,
                     res->run ? res->run->cost_usd : 0, cost_known(res->run));
    ar_buf_finish(&b);
    ar_route_result_destroy(res);
}

static void route_start(struct ar_mcp_call *c)
{
    struct ar_route_options o;
    struct ar_error err = AR_ERROR_INIT;
    struct route_state *st = calloc(1, sizeof(*st));

    if (!st) {
        ar_mcp_call_fail(c, "out of memory");
        return;
    }
    ar_route_options_init(&o);
    o.run = c->run;
    o.query = ar_mcp_arg_str(c, "query");
    json_t *m = json_object_get(c->args, "manifest");
    if (json_is_string(m)) {
        o.manifest_path = json_string_value(m); /* under cwd, within the share's directories */
    } else {
        st->manifest = json_dumps(m, JSON_COMPACT);
        o.manifest = st->manifest;
        o.manifest_len = st->manifest ? strlen(st->manifest) : 0;
    }
    json_t *v;
    if ((v = json_object_get(c->args, "min_score")))
        o.min_score = json_number_value(v);
    o.no_model = ar_mcp_arg_bool(c, "no_llm");
    c->tool_state = st;
    struct ar_route_run *rt = NULL;
    if (ar_route_start(c->loop, &o, route_done, c, &rt, &err) < 0) {
        c->tool_state = NULL;
        free(st->manifest);
        free(st);
        ar_mcp_call_refused(c, &err);
        return;
    }
    c->handle = rt;
    c->cancel = cancel_route;
}

/* ---- the table -------------------------------------------------------------------------- */

static const struct ar_mcp_tool tool_prioritize = {
    .name = "prioritize",
    .title = "Rank a folder of PRDs",
    .description = "Ranks the product requirement documents of a folder with a model, as "
                   "`agentrun prioritize` does, and checks the ranking against the folder. "
                   "structuredContent is the agentrun.prioritize/1 document.",
    .input_schema = prioritize_input,
    .door = AR_REQUEST_TOOL,
    .output_schema = prioritize_output,
    .uses_model = 1,
    .start = prioritize_start,
};

static const struct ar_mcp_tool tool_review = {
    .name = "review",
    .title = "Review a diff with another agent",
    .description = "Reviews a diff (the diff text, a revision range in cwd, the staged changes, "
                   "or the working tree) with a model, as `agentrun review` does: chunks, "
                   "merged findings with checked paths, coverage of every changed path and a "
                   "verdict. structuredContent is the agentrun.review/1 document.",
    .input_schema = review_input,
    .door = AR_REQUEST_TOOL,
    .output_schema = review_output,
    .uses_model = 1,
    .start = review_start,
};

static const struct ar_mcp_tool tool_route = {
    .name = "route",
    .title = "Route a request to a task or skill",
    .description = "Matches a request to a task or skill of a manifest: exact, keyword, then "
                   "the model, as `agentrun route` does. structuredContent is the "
                   "agentrun.route/1 document.",
    .input_schema = route_input,
    .door = AR_REQUEST_TOOL,
    .output_schema = route_output,
    .uses_model = 1,
    .start = route_start,
};

static const struct ar_mcp_tool tool_run = {
    .name = "run",
    .title = "Run another coding agent",
    .description = "Runs Claude Code, Codex or Gemini CLI headlessly on a prompt, as `agentrun "
                   "run` does, and returns the checked RunResult (agentrun.run/1): the answer, "
                   "the JSON it satisfied a schema with, tokens, cost, the files changed, each "
                   "CLI call. Read-only unless the server allows edits.",
    .input_schema = run_input,
    .door = AR_REQUEST_RUN,
    .output_schema = run_output,
    .uses_model = 1,
    .may_edit = 1,
    .start = run_start,
};

const struct ar_mcp_tool *const ar_mcp_tools[] = {
    &tool_run, &tool_review, &ar_mcp_tool_extract, &tool_prioritize, &tool_route, NULL,
};

const struct ar_mcp_tool *ar_mcp_tool_find(const char *name)
{
    for (size_t i = 0; ar_mcp_tools[i]; i++)
        if (strcmp(ar_mcp_tools[i]->name, name) == 0)
            return ar_mcp_tools[i];
    return NULL;
}
