/* agentrun mcp: the MCP server on stdin/stdout (src/mcp, docs/mcp.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_config.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "mcp/mcp.h"

enum {
    KEY_ALLOW_EDITS = AR_CLI_KEY_COMMAND,
    KEY_WORKTREES,
    KEY_PROVIDERS,
    KEY_MAX_COST,
    KEY_MAX_COST_TOTAL,
    KEY_MAX_MESSAGE,
};

static const struct ar_cli_opt opts[] = {
    { "allow-edits", KEY_ALLOW_EDITS, NULL,
      "let run calls that ask for it edit files (default: every call is read-only)", NULL },
    { "worktrees", KEY_WORKTREES, NULL,
      "with --allow-edits: each edit run works in a git worktree of its own", NULL },
    { "providers", KEY_PROVIDERS, "LIST",
      "the providers calls may use, \"codex,gemini\" (default: all)", NULL },
    { "max-cost", KEY_MAX_COST, "USD",
      "the most one tool call may spend, every CLI call of it included (a call naming no "
      "max_cost gets this; default: no cap)",
      NULL },
    { "max-cost-total", KEY_MAX_COST_TOTAL, "USD",
      "the most every call together may spend, reserved as each CLI call starts; then calls "
      "are refused (default: no cap)",
      NULL },
    { "jobs", 'j', "N",
      "run up to N CLIs at once over every call; up to 256 more calls may wait (default: 4)",
      NULL },
    { "max-message", KEY_MAX_MESSAGE, "SIZE",
      "the longest message read; a longer one is answered with an error (default: 4M)", NULL },
    AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

static int parse_usd(const struct ar_cli_command *cmd, const char *name, const char *arg,
                     double *out)
{
    if (ar_cli_parse_usd(arg, out) < 0) {
        ar_cli_usage_error(cmd, "invalid --%s '%s': want a positive amount in USD", name, arg);
        return -1;
    }
    return 0;
}

static void on_done(struct ar_mcp_server *server, void *arg)
{
    (void)server;
    *(int *)arg = 1;
}

static void stop_server(void *arg)
{
    ar_mcp_server_stop(arg);
}

static int mcp_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    struct ar_mcp_options o;
    const char *arg;
    int rc = AR_EXIT_USAGE, key, began = 0, worktrees = 0;

    ar_mcp_options_init(&o);
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_session_next(&s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        switch (key) {
        case KEY_ALLOW_EDITS:
            o.allow_edits = 1;
            break;
        case KEY_WORKTREES:
            worktrees = 1;
            break;
        case KEY_PROVIDERS: {
            struct ar_error err = AR_ERROR_INIT;
            if (ar_provider_check_list(arg, &err) < 0) {
                ar_cli_usage_error(cmd, "invalid --providers '%s': %s", arg, err.msg);
                goto out;
            }
            s.share_opts.providers = arg;
            break;
        }
        case KEY_MAX_COST:
            if (parse_usd(cmd, "max-cost", arg, &s.share_opts.max_cost_each) < 0)
                goto out;
            break;
        case KEY_MAX_COST_TOTAL:
            if (parse_usd(cmd, "max-cost-total", arg, &s.share_opts.max_cost_usd) < 0)
                goto out;
            break;
        case 'j': {
            long n;
            if (ar_cli_parse_int(arg, 1, 64, &n) < 0) {
                ar_cli_usage_error(cmd, "invalid --jobs '%s': want 1 to 64", arg);
                goto out;
            }
            o.jobs = (unsigned)n;
            break;
        }
        case KEY_MAX_MESSAGE: {
            unsigned long long n;
            if (ar_cli_parse_size(arg, &n) < 0 || n < 1024 || n > ((size_t)1 << 30)) {
                ar_cli_usage_error(cmd, "invalid --max-message '%s': want 1K to 1G", arg);
                goto out;
            }
            o.max_message = (size_t)n;
            break;
        }
        }
    }
    if (p.ind < argc) {
        ar_cli_usage_error(cmd, "unexpected argument '%s'", argv[p.ind]);
        goto out;
    }
    if (worktrees && !o.allow_edits) {
        ar_cli_usage_error(cmd, "--worktrees needs --allow-edits");
        goto out;
    }
    /* The flags are the share's options (agentrun/share.h): the library keeps every rule.
     * A call works under the working directory unless --allow-dir names others. */
    s.share_opts.no_edits = !o.allow_edits;
    s.share_opts.edits_in_worktree = worktrees;
    s.share_opts.max_calls = o.jobs;
    if (!s.n_dirs)
        s.dirs[s.n_dirs++] = s.run.cwd ? s.run.cwd : ".";
    if ((rc = ar_cli_session_begin(&s)) != 0)
        goto out;
    began = 1;
    o.run = s.run;
    o.version = AR_VERSION;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_mcp_server *server = NULL;
    int finished = 0;
    if (ar_mcp_server_start(ar_cli_session_uv(&s), &o, on_done, &finished, &server, &err) < 0) {
        rc = ar_cli_session_start_failed(&err);
        goto out;
    }
    ar_cli_notef("serving MCP on stdin/stdout");
    /* Started by hand, the server would sit silent: say what it waits for. */
    if (isatty(STDIN_FILENO) && ar_cli_verbosity >= 0)
        fprintf(stderr,
                "agentrun mcp: an MCP server, waiting for JSON-RPC messages on stdin (Ctrl-D "
                "ends it). An MCP client starts it; register it with e.g.\n"
                "  claude mcp add agentrun -- agentrun mcp\n"
                "(%s/mcp.md has Codex and Gemini CLI too)\n",
                ar_cli_docdir() ? ar_cli_docdir() : "docs");
    /* No status line: stderr is the client's log here. */
    ar_cli_session_set_cancel(&s, stop_server, server);
    uv_run(ar_cli_session_uv(&s), UV_RUN_DEFAULT);
    ar_cli_session_set_cancel(&s, NULL, NULL);
    rc = finished ? AR_EXIT_OK : AR_EXIT_PROVIDER;
out:
    if (began) {
        ar_cli_session_end(&s);
        rc = ar_cli_session_exit_status(&s, rc);
    }
    ar_cli_parser_finish(&p);
    return rc;
}

const struct ar_cli_command ar_cmd_mcp = {
    .name = "mcp",
    .synopsis = "[options]",
    .summary = "serve run, review, extract, prioritize and route as MCP tools on stdin/stdout",
    .description =
        "A Model Context Protocol server (protocol 2025-06-18 and 2025-11-25) over stdio:\n"
        "an MCP client (Claude Code, Codex, Gemini CLI) can hand work to another agent and\n"
        "get back a checked result. Only protocol messages go to stdout; diagnostics go to\n"
        "stderr. The flags are the posture: calls are read-only unless --allow-edits, may\n"
        "use only the --providers, spend at most --max-cost each and --max-cost-total in\n"
        "all, and work only under the --allow-dir directories; a call asking for more is\n"
        "refused with the flag it would need. The end of stdin, SIGTERM or SIGINT ends every\n"
        "CLI started and exits (" AR_DOCDIR "/mcp.md).",
    .example = "claude mcp add agentrun -- agentrun mcp --providers codex,gemini --max-cost 0.50",
    .opts = opts,
    .run = mcp_main,
};
