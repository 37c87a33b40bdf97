/* agentrun run: one prompt (free-form or a template) through one CLI, to a RunResult. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_config.h"
#include "agentrun/request.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cli/terminal.h"
#include "util/json_dump.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/utf8.h"

enum {
    KEY_VAR = AR_CLI_KEY_COMMAND,
    KEY_SCHEMA,
    KEY_JSON,
    KEY_EXPECT,
    KEY_ALLOW_EDITS,
    KEY_NO_TOOLS,
    KEY_RESUME,
    KEY_NO_LOCAL_REPAIR,
    KEY_WITH_CONTENT,
    KEY_NO_FILES,
    KEY_TRACK_FILES,
    KEY_FORMAT,
    KEY_ALLOW_DENIED,
    KEY_EXPECT_CHANGES,
    KEY_WORKTREE,
    KEY_BASE,
    KEY_COMMIT,
    KEY_KEEP_WORKTREE,
};

static const struct ar_cli_opt opts[] = {
    { "file", 'f', "FILE", "read the prompt from FILE ('-': standard input)", "@file" },
    { "template", 't', "NAME", "render the prompt template NAME (see 'agentrun prompts list')",
      "@prompt" },
    { "var", KEY_VAR, "KEY=VALUE", "set a template variable; KEY=@FILE reads the value from FILE",
      NULL },
    { "schema", KEY_SCHEMA, "FILE",
      "require JSON matching this JSON Schema (subset) file, without a template", "@file" },
    { "json", KEY_JSON, NULL, "extract a JSON object from the answer even without a contract",
      NULL },
    { "expect", KEY_EXPECT, "KIND", "the JSON value wanted: object, array or any (default: object)",
      "object|array|any" },
    { "allow-edits", KEY_ALLOW_EDITS, NULL,
      "let the CLI use its editing tools (default: read-only tools: read, grep, glob)", NULL },
    { "no-tools", KEY_NO_TOOLS, NULL,
      "a text call: no tools at all, the CLI's agent prompt replaced where it allows", NULL },
    { "allow-denied", KEY_ALLOW_DENIED, NULL,
      "a tool call the CLI refused does not fail the run (default: error denied, exit 4)", NULL },
    { "expect-changes", KEY_EXPECT_CHANGES, NULL,
      "fail with error no_effect (exit 4) when no file changed (default: any outcome)", NULL },
    { "resume", KEY_RESUME, "ID", "continue the CLI session ID", NULL },
    { "no-local-repair", KEY_NO_LOCAL_REPAIR, NULL,
      "do not fix trailing commas, quotes, truncation… locally (default: fix)", NULL },
    { "with-content", KEY_WITH_CONTENT, NULL,
      "add each created or modified file's content to the result (1 MiB cap)", NULL },
    { "no-files", KEY_NO_FILES, NULL, "skip the git snapshots (files_tracked: false)", NULL },
    { "track-files", KEY_TRACK_FILES, NULL,
      "take the git snapshots also without --allow-edits, to prove nothing changed (default: "
      "only with --allow-edits)",
      NULL },
    { "worktree", KEY_WORKTREE, NULL,
      "run in a git worktree of its own, on a new branch agentrun/ID/run; the checkout in -C "
      "is never touched (default: run in it)",
      NULL },
    { "base", KEY_BASE, "REV", "with --worktree: the revision it starts from (default: HEAD)",
      NULL },
    { "commit", KEY_COMMIT, NULL,
      "with --worktree: commit the run's changes on its branch when it succeeds (default: "
      "leave them uncommitted in the worktree)",
      NULL },
    { "keep-worktree", KEY_KEEP_WORKTREE, NULL,
      "with --worktree: leave the worktree in place (default: removed unless it holds "
      "uncommitted changes)",
      NULL },
    AR_CLI_MAX_COST_OPT{
        "format", KEY_FORMAT, "FORMAT",
        "text: the answer on stdout and a summary on stderr; json: the RunResult (default: text)",
        "text|json" },
    AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

struct vars {
    struct ar_var *v;
    size_t n;
    struct ar_strv storage;
};

/*
 * The prompt travels on as a C string: a NUL would silently end it there. Each
 * NUL becomes U+FFFD, and the user is told. Returns 0, or the exit status of
 * out of memory (reported).
 */
/* The flag behind an option the library names (ar_run_options_check()'s err.where). */
static const char *run_flag(const char *where)
{
    static const char *const map[][2] = {
        { "allow_edits", "--allow-edits" },
        { "base", "--base" },
        { "commit", "--commit" },
        { "keep_worktree", "--keep-worktree" },
        { "prompt", "PROMPT" },
        { "schema", "--schema" },
        { "vars", "--var" },
        { "worktree", "--worktree" },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(where, map[i][0]) == 0)
            return map[i][1];
    return where;
}

static int warn_nul(struct ar_buf *b, const char *name)
{
    size_t n = 0;
    if (ar_buf_replace_nul(b, &n) != 0)
        return ar_cli_out_of_memory();
    if (n)
        ar_cli_warnf("%s: %zu NUL byte%s replaced with U+FFFD", strcmp(name, "-") ? name : "stdin",
                     n, n == 1 ? "" : "s");
    return 0;
}

/* Adds --var KEY=VALUE or KEY=@FILE (read as --allow-dir allows), once the options are
 * read. */
static int add_var(struct ar_cli_session *s, struct vars *vars, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return ar_cli_usage_error(s->cmd, "invalid --var '%s': want KEY=VALUE or KEY=@FILE", spec);
    char *name = strndup(spec, (size_t)(eq - spec));
    char *value;
    if (eq[1] == '@') {
        struct ar_buf b;
        ar_buf_init(&b, (size_t)64 << 20);
        char what[96];
        snprintf(what, sizeof(what), "--var %.*s", (int)(eq - spec > 60 ? 60 : eq - spec), spec);
        int read = ar_cli_session_read(s, what, eq + 2, &b);
        if (read) {
            ar_buf_finish(&b);
            free(name);
            return read;
        }
        int rc = warn_nul(&b, eq + 2);
        if (rc) {
            ar_buf_finish(&b);
            free(name);
            return rc;
        }
        value = ar_buf_detach(&b, NULL);
    } else {
        value = strdup(eq + 1);
    }
    struct ar_var *nv = realloc(vars->v, (vars->n + 1) * sizeof(*nv));
    if (nv)
        vars->v = nv;
    if (!nv || !name || !value) {
        free(name);
        free(value);
        return ar_cli_out_of_memory();
    }
    if (ar_strv_push_take(&vars->storage, name) < 0) {
        free(value);
        return ar_cli_out_of_memory();
    }
    if (ar_strv_push_take(&vars->storage, value) < 0)
        return ar_cli_out_of_memory();
    vars->v[vars->n].name = name;
    vars->v[vars->n].value = value;
    vars->n++;
    return 0;
}

static void print_summary(const struct ar_cli_session *s, const struct ar_result *r)
{
    char extra[768];
    if (r->files_tracked)
        snprintf(extra, sizeof(extra), "%zu file%s changed, ", r->n_files,
                 r->n_files == 1 ? "" : "s");
    else
        snprintf(extra, sizeof(extra), "files not tracked, ");
    snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "%zu call%s, repair %s",
             r->n_calls, r->n_calls == 1 ? "" : "s", ar_repair_kind_name(r->repair));
    const struct ar_result_worktree *w = r->worktree;
    if (w && w->branch)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", branch %.200s%s%.12s",
                 w->branch, w->commit ? " at " : "", w->commit ? w->commit : "");
    if (w && w->kept)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", worktree %.300s",
                 w->path);
    ar_cli_session_summary_of(s, r, extra);
}

/* The RunResult of a run that never started (bad options, unreadable input), so a
 * `--format json | jq` pipeline gets an answer with ok false instead of nothing. */
static json_t *failed_result_value(int code, const char *message, int exit_status)
{
    (void)exit_status;
    struct ar_result *r = ar_result_new_failed(NULL, code, message);
    char *text = r ? ar_result_to_json(r, 0) : NULL;
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    ar_result_destroy(r);
    return v;
}

static int run_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    struct vars vars = { NULL, 0, AR_STRV_INIT };
    /* --var values, read once every option is (--allow-dir may come after them). */
    const char **var_specs = calloc((size_t)argc + 1, sizeof(*var_specs));
    size_t n_var_specs = 0;
    struct ar_buf prompt, schema;
    const char *prompt_file = NULL, *schema_file = NULL;
    int json_format = 0, rc = AR_EXIT_USAGE, auto_stdin = 0;
    const char *arg;
    int key;

    ar_buf_init(&prompt, (size_t)64 << 20);
    ar_buf_init(&schema, (size_t)1 << 20);
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    if (!var_specs) {
        rc = ar_cli_out_of_memory();
        goto out;
    }
    while ((key = ar_cli_session_next(&s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        switch (key) {
        case 'f':
            prompt_file = arg;
            break;
        case 't':
            s.run.template_name = arg;
            break;
        case KEY_VAR:
            if (n_var_specs < (size_t)argc)
                var_specs[n_var_specs++] = arg;
            break;
        case KEY_SCHEMA:
            schema_file = arg;
            break;
        case KEY_JSON:
            s.run.want_json = 1;
            break;
        case KEY_EXPECT: {
            /* The values are listed in enum ar_expect's order. */
            int kind = ar_cli_choice(cmd, KEY_EXPECT, arg);
            if (kind < 0)
                goto out;
            s.run.expect = (enum ar_expect)kind;
            s.run.want_json = 1;
            break;
        }
        case KEY_ALLOW_EDITS:
            s.run.allow_edits = 1;
            break;
        case KEY_NO_TOOLS:
            s.run.tools = AR_TOOLS_NONE;
            break;
        case KEY_ALLOW_DENIED:
            s.run.allow_denied = 1;
            break;
        case KEY_EXPECT_CHANGES:
            s.run.expect_changes = 1;
            break;
        case KEY_WORKTREE:
            s.run.worktree = AR_WORKTREE_ALWAYS;
            break;
        case KEY_BASE:
            s.run.worktree_base = arg;
            break;
        case KEY_COMMIT:
            s.run.worktree_commit = 1;
            break;
        case KEY_KEEP_WORKTREE:
            s.run.keep_worktree = 1;
            break;
        case KEY_RESUME:
            s.run.resume = arg;
            break;
        case KEY_NO_LOCAL_REPAIR:
            s.run.local_repair = 0;
            break;
        case KEY_WITH_CONTENT:
            s.run.with_content = 1;
            break;
        case KEY_NO_FILES:
            s.run.track_files = AR_TRACK_FILES_NEVER;
            break;
        case KEY_TRACK_FILES:
            s.run.track_files = AR_TRACK_FILES_ALWAYS;
            break;
        case KEY_FORMAT:
            if ((json_format = ar_cli_choice(cmd, KEY_FORMAT, arg)) < 0)
                goto out;
            break;
        }
    }

    /* The prompt: one positional argument, -f FILE, '-' (stdin), or a template. */
    int nargs = argc - p.ind;
    if (nargs > 1) {
        ar_cli_usage_error(cmd, "one prompt expected, got %d arguments (quote the prompt)", nargs);
        goto out;
    }
    const char *positional = nargs == 1 ? argv[p.ind] : NULL;
    if (positional && strcmp(positional, "-") == 0) {
        prompt_file = prompt_file ? prompt_file : "-";
        positional = NULL;
    }
    int sources = !!positional + !!prompt_file + !!s.run.template_name;
    if (sources == 0 && !isatty(STDIN_FILENO)) {
        /* `echo hi | agentrun run`: a filter reads the pipe it is given. */
        prompt_file = "-";
        sources = 1;
        auto_stdin = 1;
    }
    if (sources == 0) {
        ar_cli_usage_error(cmd, "no prompt: give PROMPT, -f FILE, '-' or -t TEMPLATE");
        goto out;
    }
    if (sources > 1) {
        ar_cli_usage_error(cmd, "give only one of PROMPT, -f FILE and -t TEMPLATE");
        goto out;
    }
    for (size_t i = 0; i < n_var_specs; i++)
        if ((rc = add_var(&s, &vars, var_specs[i])) != 0)
            goto out;
    rc = AR_EXIT_USAGE;
    /* Only a text call's whole input is its prompt (record-replay.md): say so rather
     * than let --cache do nothing. */
    if (s.run.cache && (s.run.tools != AR_TOOLS_NONE || s.run.trust_project || s.run.resume))
        ar_cli_warnf("--cache: this run's call is not cached (%s); only a repair call would be",
                     s.run.resume          ? "--resume continues a session"
                     : s.run.trust_project ? "--trust-project lets the checkout in"
                                           : "it may read the checkout: add --no-tools");
    struct ar_error err = AR_ERROR_INIT;
    /* Inputs are never outputs: the transcript appended to the prompt file or the
     * schema would change what the next run reads. */
    const char *ins[] = { prompt_file, schema_file, s.run.prices_file };
    if (ar_file_check_output("--transcript", s.run.transcript_path, ins, 3, &err) < 0) {
        ar_cli_usage_error(cmd, "%s", err.msg);
        goto out;
    }
    if (prompt_file) {
        if ((rc = ar_cli_session_read(&s, "-f", prompt_file, &prompt)) != 0)
            goto out;
        if ((rc = warn_nul(&prompt, prompt_file)) != 0)
            goto out;
        rc = AR_EXIT_USAGE;
        s.run.prompt = ar_buf_cstr(&prompt);
    } else if (positional) {
        s.run.prompt = positional;
    }
    if (s.run.prompt && !*s.run.prompt) {
        ar_cli_usage_error(cmd, auto_stdin ? "no prompt: give PROMPT, -f FILE, '-' or -t TEMPLATE "
                                             "(standard input was empty)"
                                           : "the prompt is empty");
        goto out;
    }
    if (schema_file) {
        if ((rc = ar_cli_session_read(&s, "--schema", schema_file, &schema)) != 0)
            goto out;
        if ((rc = warn_nul(&schema, schema_file)) != 0)
            goto out;
        rc = AR_EXIT_USAGE;
        s.run.schema = ar_buf_cstr(&schema);
    }
    s.run.vars = vars.v;
    s.run.n_vars = vars.n;
    /* The rules between options are the library's (every door's): checked before any CLI
     * is looked for, and named by their flag. */
    if (ar_run_options_check(&s.run, &err) < 0) {
        ar_cli_usage_error(cmd, "%s: %s", run_flag(err.where), err.msg);
        goto out;
    }

    if ((rc = ar_cli_session_begin(&s)) != 0)
        goto out;
    struct ar_result *res = NULL;
    rc = ar_cli_session_run(&s, &s.run, &res);
    if (res) {
        rc = ar_result_exit_status(res);
        if (json_format) {
            char *text = ar_result_to_json(res, 0);
            if (!text)
                rc = ar_cli_out_of_memory();
            else if (ar_cli_write_stdout(text, strlen(text)) < 0 ||
                     ar_cli_write_stdout("\n", 1) < 0)
                rc = AR_EXIT_USAGE;
            free(text);
        } else if (res->ok) {
            const char *out = res->json ? res->json : res->output ? res->output : "";
            size_t n = strlen(out);
            if (ar_cli_write_text(out, n) < 0 ||
                ((n == 0 || out[n - 1] != '\n') && ar_cli_write_stdout("\n", 1) < 0))
                rc = AR_EXIT_USAGE;
        }
        if (!res->ok)
            ar_cli_print_result_error(&s, res);
        if (!json_format)
            print_summary(&s, res);
        ar_result_destroy(res);
    }
    ar_cli_session_end(&s);
    rc = ar_cli_session_exit_status(&s, rc);
out:
    ar_cli_session_finish(&s);
    ar_cli_parser_finish(&p);
    ar_buf_finish(&prompt);
    ar_buf_finish(&schema);
    free(var_specs);
    free(vars.v);
    ar_strv_finish(&vars.storage);
    return rc;
}

const struct ar_cli_command ar_cmd_run = {
    .name = "run",
    .synopsis = "[options] [PROMPT | -f FILE | - | -t TEMPLATE --var KEY=VALUE…]",
    .summary = "run one prompt through " AR_PROVIDERS_OR " and report a RunResult",
    .description =
        "The prompt goes to the CLI on standard input. With no PROMPT, -f or -t and standard\n"
        "input not a terminal, the prompt is read from it (echo hi | agentrun run). With a "
        "contract (a template's json-schema\n"
        "block, or --schema) the answer's JSON is extracted, repaired locally if needed, checked,\n"
        "and at most one repair call is made. --format json prints the RunResult\n"
        "(" AR_DOCDIR
        "/run-result.md): tokens, cost, session, duration, calls and the files the run "
        "changed.",
    .example =
        "agentrun run -p codex --schema answer.json --format json 'List three risks as JSON'",
    .opts = opts,
    .run = run_main,
    .json_schema = "agentrun.run/1",
    .failure_value = failed_result_value,
};
