/* agentrun prioritize: rank a folder of PRDs with a model, checked against the folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/commands.h"
#include "cli/terminal.h"
#include "cli/prioritize_format.h"
#include "cli/session.h"
#include "prioritize/prioritize.h"
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
    AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

static int print_buf(struct ar_buf *b)
{
    return ar_cli_write_stdout(b->data ? b->data : "", b->len);
}

/*
 * A failed run: the error and every violation, not a sample — the user fixes
 * the template or the PRDs from this list, and the answer is already lost.
 */
static void print_failure(const struct ar_result *r)
{
    ar_cli_errorf("%s: %s", ar_strerror_name(r->error.code), r->error.msg);
    for (size_t i = 0; r->error_details[i]; i++) {
        fputs("  ", stderr);
        ar_cli_text_fputs(r->error_details[i], stderr); /* cli/terminal.h */
        fputc('\n', stderr);
    }
}

/* Tells the user what they should know about the input before the model sees it. */
static void report_input(const struct ar_prd_set *set)
{
    for (size_t i = 0; i < set->warnings.n; i++)
        ar_cli_warnf("%s", set->warnings.v[i]);
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].truncated)
            ar_cli_notef("'%s' cut to %zu of %zu bytes (--max-prd-bytes)", set->v[i].path,
                         set->v[i].shown, set->v[i].size);
    ar_cli_notef("%zu PRD%s read", set->n, set->n == 1 ? "" : "s");
}

static int prioritize_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    struct ar_prd_set set;
    struct ar_prd_read_opts ro = { 0, AR_PRD_DEFAULT_MAX_BYTES };
    struct ar_buf prds, context, out;
    struct ar_ranking rk;
    const char *context_file = NULL, *arg;
    enum ar_prioritize_format fmt = AR_PRIORITIZE_FORMAT_TEXT;
    long top = 0;
    int rc = AR_EXIT_USAGE, key;

    ar_prd_set_init(&set);
    ar_buf_init(&prds, AR_BUF_UNLIMITED);
    ar_buf_init(&context, CONTEXT_MAX_BYTES);
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    memset(&rk, 0, sizeof(rk));
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_session_next(&s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        switch (key) {
        case 'r':
            ro.recursive = 1;
            break;
        case KEY_MAX_PRD_BYTES: {
            unsigned long long v;
            if (ar_cli_parse_size(arg, &v) < 0 || v == 0 || v > ((size_t)1 << 30)) {
                ar_cli_usage_error(cmd, "invalid --max-prd-bytes '%s': want a size from 1 to 1G",
                                   arg);
                goto out;
            }
            ro.max_bytes = (size_t)v;
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
                ar_cli_usage_error(cmd, "invalid --format '%s' (text, markdown, json)", arg);
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

    struct ar_error err = AR_ERROR_INIT;
    if (ar_prd_set_read(&set, argv[p.ind], &ro, &err) < 0) {
        if (err.code == AR_ENOMEM)
            rc = ar_cli_out_of_memory();
        else
            ar_cli_usage_error(cmd, "%s", err.msg);
        goto out;
    }
    report_input(&set);
    if (context_file && ar_file_read(context_file, &context, &err) < 0) {
        if (err.code == AR_ENOMEM)
            rc = ar_cli_out_of_memory();
        else
            ar_cli_usage_error(cmd, "--context: %s", err.msg);
        goto out;
    }
    /* The context goes into the prompt as a C string: a NUL must not end it there. */
    size_t nuls = 0;
    if (ar_buf_replace_nul(&context, &nuls) != 0) {
        rc = ar_cli_out_of_memory();
        goto out;
    }
    if (nuls)
        ar_cli_warnf("%s: %zu NUL byte%s replaced with U+FFFD", context_file, nuls,
                     nuls == 1 ? "" : "s");
    if (ar_prd_set_render(&set, &prds) < 0) {
        rc = ar_cli_out_of_memory();
        goto out;
    }
    /* The template shows its context section only when the variable is set. */
    const struct ar_var vars[] = {
        { AR_PRIORITIZE_VAR_PRDS, ar_buf_cstr(&prds) },
        { AR_PRIORITIZE_VAR_CONTEXT, context_file ? ar_buf_cstr(&context) : NULL },
    };
    struct ar_run_options o = s.run;
    o.template_name = AR_PRIORITIZE_TEMPLATE;
    o.vars = vars;
    o.n_vars = context_file ? 2 : 1;
    o.expect = AR_EXPECT_OBJECT;
    o.validate = ar_prioritize_validate;
    o.validate_arg = &set;
    o.allow_edits = 0;
    /* A text call: the documents are in the prompt (DESIGN §4b). */
    o.tools = AR_TOOLS_NONE;
    o.no_session = 1;
    /* The prompt is the whole input: the call may be cached (--cache). */
    /* Ranking reads; it changes nothing, so the git snapshots would only cost time. */
    o.track_files = 0;

    if (ar_cli_session_begin(&s) < 0) {
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    /* o was copied before ar_cli_session_begin() set the status line's callback. */
    o.progress = s.run.progress;
    o.progress_arg = s.run.progress_arg;
    struct ar_result *res = NULL;
    rc = ar_cli_session_run(&s, &o, &res);
    if (res) {
        rc = ar_result_exit_status(res);
        int ranked = 0;
        if (res->ok && res->value) {
            if (ar_ranking_build(&rk, &set, res->value, (size_t)top, &err) < 0) {
                ar_cli_errorf("%s", err.msg);
                rc = AR_EXIT_OUTPUT;
            } else
                ranked = 1;
        }
        if (ranked && rk.unranked.n) {
            struct ar_buf ids;
            ar_buf_init(&ids, AR_BUF_UNLIMITED);
            /* The first few name the problem; the full list is in the JSON output. */
            size_t show = rk.unranked.n > UNRANKED_SHOWN ? UNRANKED_SHOWN : rk.unranked.n;
            for (size_t i = 0; i < show; i++)
                ar_buf_printf(&ids, "%s%s", i ? ", " : "", rk.unranked.v[i]);
            if (show < rk.unranked.n)
                ar_buf_printf(&ids, " and %zu more (--format json lists them all)",
                              rk.unranked.n - show);
            ar_cli_warnf("%zu PRD%s left unranked by the model: %s", rk.unranked.n,
                         rk.unranked.n == 1 ? "" : "s", ar_buf_cstr(&ids));
            ar_buf_finish(&ids);
        }
        if (!res->ok)
            print_failure(res);
        if (ranked || fmt == AR_PRIORITIZE_FORMAT_JSON) {
            if (ar_prioritize_render(ranked ? &rk : NULL, res, fmt, ar_prioritize_term_width(),
                                     &out) < 0) {
                rc = ar_cli_out_of_memory();
            } else if (print_buf(&out) < 0)
                rc = AR_EXIT_USAGE;
        }
        ar_cli_session_summary_of(&s, res, NULL);
        ar_result_destroy(res);
    }
    ar_cli_session_end(&s);
    rc = ar_cli_session_exit_status(&s, rc);
out:
    ar_cli_parser_finish(&p);
    ar_ranking_finish(&rk);
    ar_buf_finish(&out);
    ar_buf_finish(&context);
    ar_buf_finish(&prds);
    ar_prd_set_finish(&set);
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
