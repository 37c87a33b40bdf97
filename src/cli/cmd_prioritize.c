/* agentrun prioritize: rank a folder of PRDs with a model, checked against the folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/commands.h"
#include "cli/failure.h"
#include "cli/terminal.h"
#include "cli/prioritize_format.h"
#include "cli/session.h"
#include "util/file.h"
#include "util/utf8.h"

/* --context is strategy and constraints, not a corpus. */
#define CONTEXT_MAX_BYTES ((size_t)1 << 20)

enum {
    KEY_MAX_PRD_BYTES = AR_CLI_KEY_COMMAND,
    KEY_CONTEXT,
    KEY_TOP,
    KEY_FORMAT,
};

/* At most this many unranked ids are named in the warning. */
#define UNRANKED_SHOWN 10

static const struct ar_cli_opt opts[] = {
    { "recursive", 'r', NULL, "read PRDs in subdirectories too (ids keep the path: team/auth)",
      NULL },
    { "max-prd-bytes", KEY_MAX_PRD_BYTES, "SIZE",
      "cut each PRD to SIZE bytes with a visible marker: 32K, 1M (default: 32K)", NULL },
    { "context", KEY_CONTEXT, "FILE", "strategy, constraints or capacity the ranking should weigh",
      "@file" },
    { "top", KEY_TOP, "N", "show only the N highest priorities (default: all)", NULL },
    { "format", KEY_FORMAT, "FORMAT",
      "text (a ranked table), markdown (a table) or json (default: text)", "text|markdown|json" },
    AR_CLI_MAX_COST_OPT AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

static int print_buf(struct ar_buf *b)
{
    return ar_cli_write_stdout(b->data ? b->data : "", b->len);
}

/*
 * A failed run: the error and every violation, not a sample — the user fixes
 * the template or the PRDs from this list, and the answer is already lost.
 */
static void print_failure(const struct ar_cli_session *s, const struct ar_result *r)
{
    char hint[160];
    int called = r->n_cached > 0;
    for (size_t i = 0; i < r->n_calls; i++)
        called |= r->calls[i].exit_code >= 0;
    ar_cli_failure_hint(r->error.code, r->provider, called, ar_cli_session_provider_named(s), hint,
                        sizeof(hint));
    ar_cli_errorf("%s: %s%s", ar_strerror_name(r->error.code), r->error.msg, hint);
    for (size_t i = 0; r->error_details[i]; i++) {
        fputs("  ", stderr);
        ar_cli_line_fputs(r->error_details[i], stderr); /* cli/terminal.h */
        fputc('\n', stderr);
    }
}

/* Tells the user what they should know about the input before the model sees it. */
static void report_input(const struct ar_prioritize_input *in)
{
    for (size_t i = 0; i < in->n_warnings; i++)
        ar_cli_warnf("%s", in->warnings[i]);
    for (size_t i = 0; i < in->n_prds; i++)
        if (in->prds[i].truncated)
            ar_cli_notef("'%s' cut to %zu of %zu bytes (--max-prd-bytes)", in->prds[i].path,
                         in->prds[i].shown, in->prds[i].size);
    ar_cli_notef("%zu PRD%s read", in->n_prds, in->n_prds == 1 ? "" : "s");
}

/* The PRDs the model left out: the first few name the problem; --format json lists all. */
static void report_unranked(const struct ar_prioritize_result *pr)
{
    struct ar_buf ids;
    ar_buf_init(&ids, AR_BUF_UNLIMITED);
    size_t show = pr->n_unranked > UNRANKED_SHOWN ? UNRANKED_SHOWN : pr->n_unranked;
    for (size_t i = 0; i < show; i++)
        ar_buf_printf(&ids, "%s%s", i ? ", " : "", pr->unranked[i]);
    if (show < pr->n_unranked)
        ar_buf_printf(&ids, " and %zu more (--format json lists them all)", pr->n_unranked - show);
    ar_cli_warnf("%zu PRD%s left unranked by the model: %s", pr->n_unranked,
                 pr->n_unranked == 1 ? "" : "s", ar_buf_cstr(&ids));
    ar_buf_finish(&ids);
}

static void on_prioritize_done(struct ar_prioritize_run *pr, struct ar_prioritize_result *res,
                               void *arg)
{
    (void)pr;
    *(struct ar_prioritize_result **)arg = res;
}

static void cancel_prioritize(void *arg)
{
    ar_prioritize_cancel(arg);
}

static int prioritize_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    struct ar_prioritize_options o;
    struct ar_prioritize_result *res = NULL;
    struct ar_buf context, out;
    const char *context_file = NULL, *arg;
    enum ar_prioritize_format fmt = AR_PRIORITIZE_FORMAT_TEXT;
    long top = 0;
    int rc = AR_EXIT_USAGE, key, began = 0;

    ar_prioritize_options_init(&o);
    ar_buf_init(&context, CONTEXT_MAX_BYTES);
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_session_next(&s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        switch (key) {
        case 'r':
            o.recursive = 1;
            break;
        case KEY_MAX_PRD_BYTES: {
            unsigned long long v;
            if (ar_cli_parse_size(arg, &v) < 0 || v == 0 || v > ((size_t)1 << 30)) {
                ar_cli_usage_error(cmd, "invalid --max-prd-bytes '%s': want a size from 1 to 1G",
                                   arg);
                goto out;
            }
            o.max_prd_bytes = (size_t)v;
            break;
        }
        case KEY_CONTEXT:
            context_file = arg;
            break;
        case KEY_TOP:
            if (ar_cli_parse_int(arg, 1, 1000000, &top) < 0) {
                ar_cli_usage_error(cmd, "invalid --top '%s': want a number >= 1", arg);
                goto out;
            }
            break;
        case KEY_FORMAT: {
            int f = ar_prioritize_format_parse(arg);
            if (f < 0) {
                ar_cli_invalid_value(cmd, "format", arg, "text|markdown|json");
                goto out;
            }
            fmt = (enum ar_prioritize_format)f;
            break;
        }
        }
    }
    if (argc - p.ind == 0) {
        ar_cli_usage_error(cmd, "no PRD directory given");
        goto out;
    }
    if (argc - p.ind > 1) {
        ar_cli_usage_error(cmd, "one PRD directory expected, got %d", argc - p.ind);
        goto out;
    }
    o.dir = argv[p.ind];
    o.top = (size_t)top;

    struct ar_error err = AR_ERROR_INIT;
    if (context_file && (rc = ar_cli_session_read(&s, "--context", context_file, &context)) != 0)
        goto out;
    rc = AR_EXIT_USAGE;
    /* The context goes into the prompt as a C string: a NUL must not end it there. */
    size_t nuls = 0;
    if (ar_buf_replace_nul(&context, &nuls) != 0) {
        rc = ar_cli_out_of_memory();
        goto out;
    }
    if (nuls)
        ar_cli_warnf("%s: %zu NUL byte%s replaced with U+FFFD", context_file, nuls,
                     nuls == 1 ? "" : "s");
    o.context = context_file ? ar_buf_cstr(&context) : NULL;

    if ((rc = ar_cli_session_begin(&s)) != 0)
        goto out;
    began = 1;
    o.run = s.run;
    struct ar_prioritize_run *pr = NULL;
    if (ar_prioritize_start(ar_cli_session_uv(&s), &o, on_prioritize_done, &res, &pr, &err) < 0) {
        if (err.code == AR_ENOMEM)
            rc = ar_cli_out_of_memory();
        else if (strcmp(err.where, "dir") == 0)
            rc = ar_cli_usage_error(cmd, "%s", err.msg);
        else
            rc = ar_cli_session_start_failed(&err);
        goto out;
    }
    report_input(ar_prioritize_input(pr));
    ar_cli_session_wait(&s, cancel_prioritize, pr);
    if (!res) {
        ar_cli_errorf("the ranking ended without a result");
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    rc = res->exit_status;
    if (res->error)
        ar_cli_errorf("%s", res->error);
    else if (res->answers > 1)
        ar_cli_warnf("the reply held %zu answers, all the same ranking", res->answers);
    if (res->ranked && res->n_unranked)
        report_unranked(res);
    if (!res->run->ok)
        print_failure(&s, res->run);
    if (res->ranked || fmt == AR_PRIORITIZE_FORMAT_JSON) {
        if (ar_prioritize_render(res, fmt, ar_prioritize_term_width(), &out) < 0)
            rc = ar_cli_out_of_memory();
        else if (print_buf(&out) < 0)
            rc = AR_EXIT_USAGE;
    }
    ar_cli_session_summary_of(&s, res->run, NULL);
out:
    if (began) {
        ar_cli_session_end(&s);
        rc = ar_cli_session_exit_status(&s, rc);
    }
    ar_cli_session_finish(&s);
    ar_prioritize_result_destroy(res);
    ar_cli_parser_finish(&p);
    ar_buf_finish(&out);
    ar_buf_finish(&context);
    return rc;
}

const struct ar_cli_command ar_cmd_prioritize = {
    .name = "prioritize",
    .synopsis = "[options] DIR",
    .summary = "rank the PRDs in DIR (*.md, *.markdown, *.txt) by priority with a model",
    .description =
        "Each PRD's id is its path relative to DIR without the extension. The model's ranking is\n"
        "checked hard: every prd_id must name a PRD read, priorities are integers >= 1, no PRD\n"
        "twice, depends_on names known PRDs. What fails goes to one repair call; an answer that\n"
        "stays invalid exits 3 with every problem listed. PRDs the model leaves out are listed\n"
        "as unranked (" AR_DOCDIR "/prioritize.md).",
    .example = "agentrun prioritize -r prds/ --context strategy.md --top 5 --format markdown",
    .opts = opts,
    .run = prioritize_main,
    .json_schema = AR_PRIORITIZE_SCHEMA,
};
