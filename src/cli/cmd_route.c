/* agentrun route: map a request to a task or skill of a manifest, locally when it can. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cli/terminal.h"
#include "route/route.h"
#include "result/result.h"

#define AR_ROUTE_SCHEMA "agentrun.route/1"

enum {
    KEY_MANIFEST = AR_CLI_KEY_COMMAND,
    KEY_MIN_SCORE,
    KEY_NO_LLM,
    KEY_FORMAT,
};

static const struct ar_cli_opt opts[] = {
    { "manifest", KEY_MANIFEST, "FILE",
      "the tasks and skills, JSON (see route.md in the docs); required", "@file" },
    { "min-score", KEY_MIN_SCORE, "X",
      "the keyword tier's threshold, 0 to 1 (default: 0.5; see route.md in the docs)", NULL },
    { "no-llm", KEY_NO_LLM, NULL,
      "never call the model: no exact or keyword match gives route none, exit 3", NULL },
    { "format", KEY_FORMAT, "FORMAT", "text (one line per match) or json (default: text)",
      "text|json" },
    AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

/* What the outcome shows besides the route itself. */
struct outcome {
    const char *query;
    const struct ar_route *route;
    const struct ar_result *res; /* the model run, or NULL when the local tiers answered */
    const char *error;           /* a failure of the run itself, or NULL */
    uint64_t duration_ms;
};

static json_t *render_json(const struct outcome *oc)
{
    const struct ar_route *r = oc->route;
    json_t *doc = json_object();
    json_t *matches = json_array();
    json_t *notes = json_array();
    json_t *rv = oc->res ? ar_result_to_value(oc->res) : NULL;
    if (!doc || !matches || !notes || (oc->res && !rv)) {
        json_decref(doc);
        json_decref(matches);
        json_decref(notes);
        json_decref(rv);
        return NULL;
    }
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(
            matches, json_pack("{s:s,s:s,s:f,s:s}", "type", ar_route_type_name(r->matches[i].type),
                               "name", r->matches[i].name, "confidence", r->matches[i].confidence,
                               "reasoning", r->matches[i].reasoning));
    for (size_t i = 0; i < r->notes.n; i++)
        json_array_append_new(notes, json_string(r->notes.v[i]));
    const char *error = r->error ? r->error : oc->error;
    json_object_set_new(doc, "schema", json_string(AR_ROUTE_SCHEMA));
    json_object_set_new(doc, "query", oc->query ? json_string(oc->query) : json_null());
    json_object_set_new(doc, "route",
                        json_string(oc->error ? "error" : ar_route_kind_name(r->kind)));
    json_object_set_new(doc, "matches", matches);
    json_object_set_new(doc, "fallback", json_boolean(r->fallback));
    json_object_set_new(doc, "error", error ? json_string(error) : json_null());
    json_object_set_new(doc, "notes", notes);
    if (rv) {
        static const char *const run_keys[] = { "provider", "model",       "tokens",
                                                "cost_usd", "cost_source", "calls" };
        for (size_t i = 0; i < sizeof(run_keys) / sizeof(run_keys[0]); i++) {
            json_t *v = json_object_get(rv, run_keys[i]);
            json_object_set(doc, run_keys[i], v ? v : json_null());
        }
        json_decref(rv);
    } else {
        /* No call was made: nothing was spent, which is known, not unknown. */
        json_object_set_new(doc, "provider", json_null());
        json_object_set_new(doc, "model", json_null());
        json_object_set_new(doc, "tokens",
                            json_pack("{s:i,s:i,s:i,s:i,s:i}", "input", 0, "cache_read", 0,
                                      "cache_write", 0, "output", 0, "reasoning", 0));
        json_object_set_new(doc, "cost_usd", json_real(0));
        json_object_set_new(doc, "cost_source", json_string("none"));
        json_object_set_new(doc, "calls", json_array());
    }
    json_object_set_new(doc, "duration_ms", json_integer((json_int_t)oc->duration_ms));
    return doc;
}

/* Prints the outcome. Returns 0, or the exit status of what went wrong (reported). */
static int print_outcome(const struct outcome *oc, int json_format)
{
    const struct ar_route *r = oc->route;
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    int rc = 0;
    if (json_format) {
        json_t *doc = render_json(oc);
        char *text =
            doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
                : NULL;
        rc = text ? ar_buf_printf(&out, "%s\n", text) : AR_ENOMEM;
        free(text);
        json_decref(doc);
    } else {
        /* route, type, name, confidence, reasoning: tab-separated so `cut` works. */
        const char *kind = ar_route_kind_name(r->kind);
        for (size_t i = 0; rc == 0 && i < r->n; i++) {
            const struct ar_route_match *m = &r->matches[i];
            rc = ar_buf_printf(&out, "%s\t%s\t%s\t%.2f\t", kind, ar_route_type_name(m->type),
                               m->name, m->confidence);
            for (const char *c = m->reasoning; rc == 0 && *c; c++)
                rc = ar_buf_putc(&out, *c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c);
            if (rc == 0)
                rc = ar_buf_putc(&out, '\n');
        }
    }
    if (rc == 0 && !json_format)
        rc = ar_cli_text_neutralize(&out, 0); /* the reasoning is the model's */
    if (rc < 0) {
        rc = ar_cli_out_of_memory();
    } else if (ar_cli_write_stdout(out.data ? out.data : "", out.len) < 0) {
        rc = AR_EXIT_USAGE;
    }
    ar_buf_finish(&out);
    return rc;
}

/* Diagnostics on stderr: what a person reading the terminal should know. */
static void report(const struct outcome *oc)
{
    const struct ar_route *r = oc->route;
    for (size_t i = 0; i < r->notes.n; i++)
        ar_cli_warnf("%s", r->notes.v[i]);
    if (r->kind == AR_ROUTE_ERROR)
        ar_cli_errorf("%s", r->error);
    else if (r->kind == AR_ROUTE_NONE && !oc->error)
        ar_cli_warnf("no task or skill matches '%s'", oc->query);
}

static int parse_score(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0 && v <= 1))
        return -1;
    *out = v;
    return 0;
}

/* The query: the operands joined by spaces, so quoting is optional. */
static char *join_query(int argc, char **argv, int from)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    for (int i = from; i < argc; i++)
        ar_buf_printf(&b, "%s%s", i > from ? " " : "", argv[i]);
    char *q = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    return q;
}

/* The route document of a route that never ran (a bad flag, an unreadable manifest). */
static json_t *failure_value(int code, const char *message, int exit_status)
{
    (void)code;
    (void)exit_status;
    struct ar_route r;
    ar_route_init(&r);
    struct outcome oc = { NULL, &r, NULL, message, 0 };
    json_t *doc = render_json(&oc);
    ar_route_finish(&r);
    return doc;
}

static int route_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    struct ar_manifest m;
    struct ar_route r;
    struct ar_buf rendered;
    const char *manifest_file = NULL, *arg;
    double min_score = AR_ROUTE_DEFAULT_MIN_SCORE;
    int no_llm = 0, json_format = 0, rc = AR_EXIT_USAGE, key, began = 0;
    char *query = NULL;
    uint64_t start = ar_cli_now_ms();

    ar_manifest_init(&m);
    ar_route_init(&r);
    ar_buf_init(&rendered, AR_BUF_UNLIMITED);
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_session_next(&s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        switch (key) {
        case KEY_MANIFEST:
            manifest_file = arg;
            break;
        case KEY_MIN_SCORE:
            if (parse_score(arg, &min_score) < 0) {
                ar_cli_usage_error(cmd, "invalid --min-score '%s': want a number from 0 to 1", arg);
                goto out;
            }
            break;
        case KEY_NO_LLM:
            no_llm = 1;
            break;
        case KEY_FORMAT:
            if ((json_format = ar_cli_choice(cmd, KEY_FORMAT, arg)) < 0)
                goto out;
            break;
        }
    }
    query = join_query(argc, argv, p.ind);
    if (!query || !query[strspn(query, " \t\r\n")]) {
        ar_cli_usage_error(cmd, "no query given");
        goto out;
    }
    if (!manifest_file) {
        ar_cli_usage_error(cmd, "--manifest FILE is required");
        goto out;
    }
    struct ar_error err = AR_ERROR_INIT;
    if (ar_manifest_load(&m, manifest_file, &err) < 0) {
        ar_cli_usage_error(cmd, "%s", err.msg);
        goto out;
    }

    struct outcome oc = { query, &r, NULL, NULL, 0 };
    int found = ar_route_local(&m, query, min_score, &r);
    struct ar_result *res = NULL;
    if (found < 0) {
        rc = ar_cli_out_of_memory();
        goto out;
    }
    if (!found && !no_llm) {
        if (ar_manifest_render(&m, &rendered) < 0) {
            rc = ar_cli_out_of_memory();
            goto out;
        }
        const struct ar_var vars[] = {
            { AR_ROUTE_VAR_QUERY, query },
            { AR_ROUTE_VAR_MANIFEST, ar_buf_cstr(&rendered) },
        };
        struct ar_run_options o = s.run;
        o.template_name = AR_ROUTE_TEMPLATE;
        o.vars = vars;
        o.n_vars = 2;
        o.expect = AR_EXPECT_ANY;
        o.validate = ar_route_validate;
        o.allow_edits = 0;
        /* A text call: the documents are in the prompt (DESIGN §4b). */
        o.tools = AR_TOOLS_NONE;
        o.no_session = 1;
        /* The prompt is the whole input: the call may be cached (--cache). */
        o.track_files = 0; /* routing reads; nothing to attribute */
        if (ar_cli_session_begin(&s) < 0) {
            rc = AR_EXIT_PROVIDER;
            goto out;
        }
        began = 1;
        /* o was copied before ar_cli_session_begin() set the status line's callback. */
        o.progress = s.run.progress;
        o.progress_arg = s.run.progress_arg;
        rc = ar_cli_session_run(&s, &o, &res);
        if (!res)
            goto out;
        oc.res = res;
        int malformed = res->error.code == AR_ENOJSON || res->error.code == AR_ECONTRACT;
        if (res->ok || malformed) {
            /* A format problem that outlived the repair call is not worth
             * failing the workflow over: the first task is a usable default,
             * flagged as a fallback so the caller can tell. */
            for (size_t i = 0; !res->ok && res->error_details[i]; i++)
                ar_cli_notef("%s", res->error_details[i]);
            found = ar_route_from_answer(&m, res->ok ? res->value : NULL,
                                         res->ok ? NULL : res->error.msg, &r);
            if (found < 0) {
                rc = ar_cli_out_of_memory();
                ar_result_destroy(res);
                goto out;
            }
            rc = r.kind == AR_ROUTE_DISCOVERY ? AR_EXIT_OK : AR_EXIT_OUTPUT;
        } else {
            ar_cli_print_result_error(res);
            oc.error = res->error.msg[0] ? res->error.msg : ar_strerror(res->error.code);
            rc = ar_result_exit_status(res);
        }
    } else
        rc = found ? AR_EXIT_OK : AR_EXIT_OUTPUT;

    oc.duration_ms = ar_cli_now_ms() - start;
    report(&oc);
    int printed = print_outcome(&oc, json_format);
    if (printed && rc == AR_EXIT_OK)
        rc = printed;
    ar_cli_session_summary_of(&s, res, NULL);
    ar_result_destroy(res);
out:
    if (began) {
        ar_cli_session_end(&s);
        rc = ar_cli_session_exit_status(&s, rc);
    }
    ar_cli_parser_finish(&p);
    ar_buf_finish(&rendered);
    ar_route_finish(&r);
    ar_manifest_finish(&m);
    free(query);
    return rc;
}

const struct ar_cli_command ar_cmd_route = {
    .name = "route",
    .synopsis = "[options] --manifest FILE QUERY…",
    .summary = "route a request to a task or skill of a manifest: exact, keyword, then the model",
    .description =
        "Tier 1 (exact): the query equals a name or alias. Tier 2 (keyword): a word-overlap score\n"
        "at or above --min-score. Tier 3 (discovery): the model picks from the manifest; its\n"
        "answer is checked, and a name the manifest lacks gives route \"error\" (exit 3). An\n"
        "answer still malformed after the repair call falls back to the first task\n"
        "(fallback: true). Exit 0 on a route, 3 on none or error (" AR_DOCDIR "/route.md).",
    .example = "agentrun route --manifest manifest.json --format json 'set up user login'",
    .opts = opts,
    .run = route_main,
    .json_schema = AR_ROUTE_SCHEMA,
    .failure_value = failure_value,
};
