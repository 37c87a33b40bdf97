/* agentrun route: map a request to a task or skill of a manifest, locally when it can. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cli/terminal.h"
#include "agentrun/route.h"
#include "util/buf.h"

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
    AR_CLI_MAX_COST_OPT AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

/* Prints the result. Returns 0, or the exit status of what went wrong (reported). */
static int print_outcome(const struct ar_route_result *res, int json_format)
{
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    int rc = 0;
    if (json_format) {
        char *text = ar_route_result_to_json(res, 0);
        rc = text ? ar_buf_printf(&out, "%s\n", text) : AR_ENOMEM;
        free(text);
    } else {
        /* route, type, name, confidence, reasoning: tab-separated so `cut` works. */
        const char *kind = ar_route_kind_name(res->kind);
        for (size_t i = 0; rc == 0 && i < res->n_matches; i++) {
            const struct ar_route_match *m = &res->matches[i];
            rc = ar_buf_printf(&out, "%s\t%s\t%s\t%.2f\t", kind, ar_route_type_name(m->type),
                               m->name, m->confidence);
            for (const char *c = m->reasoning; rc == 0 && *c; c++)
                rc = ar_buf_putc(&out, *c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c);
            if (rc == 0)
                rc = ar_buf_putc(&out, '\n');
        }
        if (rc == 0)
            rc = ar_cli_layout_neutralize(&out, 0); /* the reasoning is the model's */
    }
    if (rc < 0) {
        rc = ar_cli_out_of_memory();
    } else if (ar_cli_write_stdout(out.data ? out.data : "", out.len) < 0) {
        rc = AR_EXIT_USAGE;
    }
    ar_buf_finish(&out);
    return rc;
}

/* Diagnostics on stderr: what a person reading the terminal should know. */
static void report(const struct ar_cli_session *s, const struct ar_route_result *res)
{
    const struct ar_result *run = res->run;
    if (run && res->fallback)
        for (size_t i = 0; run->error_details[i]; i++)
            ar_cli_notef("%s", run->error_details[i]);
    for (size_t i = 0; i < res->n_notes; i++)
        ar_cli_warnf("%s", res->notes[i]);
    if (res->failed)
        ar_cli_print_result_error(s, run);
    else if (res->kind == AR_ROUTE_ERROR)
        ar_cli_errorf("%s", res->error);
    else if (res->kind == AR_ROUTE_NONE)
        ar_cli_warnf("no task or skill matches '%s'", res->query);
}

static void on_route_done(struct ar_route_run *rt, struct ar_route_result *res, void *arg)
{
    (void)rt;
    *(struct ar_route_result **)arg = res;
}

static void cancel_route(void *arg)
{
    ar_route_cancel(arg);
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
    struct ar_route_result r = { .kind = AR_ROUTE_ERROR, .failed = 1, .exit_status = exit_status };
    r.error = (char *)message;
    char *text = ar_route_result_to_json(&r, 0);
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return doc;
}

static int route_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    struct ar_route_options o;
    struct ar_route_result *res = NULL;
    const char *arg;
    int json_format = 0, rc = AR_EXIT_USAGE, key, began = 0;
    char *query = NULL;

    ar_route_options_init(&o);
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_session_next(&s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        switch (key) {
        case KEY_MANIFEST:
            o.manifest_path = arg;
            break;
        case KEY_MIN_SCORE:
            if (parse_score(arg, &o.min_score) < 0) {
                ar_cli_usage_error(cmd, "invalid --min-score '%s': want a number from 0 to 1", arg);
                goto out;
            }
            break;
        case KEY_NO_LLM:
            o.no_model = 1;
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
    if (!o.manifest_path) {
        ar_cli_usage_error(cmd, "--manifest FILE is required");
        goto out;
    }
    o.query = query;
    if ((rc = ar_cli_session_begin(&s)) != 0)
        goto out;
    began = 1;
    o.run = s.run;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_route_run *rt = NULL;
    if (ar_route_start(ar_cli_session_uv(&s), &o, on_route_done, &res, &rt, &err) < 0) {
        if (err.code == AR_ENOMEM)
            rc = ar_cli_out_of_memory();
        else if (err.code == AR_EUSAGE && strcmp(err.where, "manifest") == 0)
            rc = ar_cli_usage_error(cmd, "%s", err.msg);
        else
            rc = ar_cli_session_start_failed(&err);
        goto out;
    }
    ar_cli_session_wait(&s, cancel_route, rt);
    if (!res) {
        ar_cli_errorf("the route ended without a result");
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    rc = res->exit_status;
    report(&s, res);
    int printed = print_outcome(res, json_format);
    if (printed && rc == AR_EXIT_OK)
        rc = printed;
    ar_cli_session_summary_of(&s, res->run, NULL);
out:
    if (began) {
        ar_cli_session_end(&s);
        rc = ar_cli_session_exit_status(&s, rc);
    }
    ar_route_result_destroy(res);
    ar_cli_parser_finish(&p);
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
