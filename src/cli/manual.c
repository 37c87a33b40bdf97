/* The exit statuses and environment variables of agentrun, for --help and the man pages. */
#include "cli/manual.h"

#include "cli/cli.h"

const struct ar_cli_exit_status ar_cli_exit_statuses[] = {
    { AR_EXIT_OK, "success (review: every changed file read, no issue at or above --fail-on)" },
    { AR_EXIT_FINDINGS, "review: an issue at or above --fail-on, or a changed file not reviewed" },
    { AR_EXIT_USAGE, "usage error: bad option, unreadable input or output, bad template" },
    { AR_EXIT_OUTPUT, "model output unusable after the repair call; route: no route" },
    { AR_EXIT_PROVIDER,
      "CLI missing, auth, rate limit, API error, replay_miss, denied, no_effect" },
    { AR_EXIT_TIMEOUT, "timeout: the wall-clock or the idle limit" },
    { AR_EXIT_BUDGET, "budget exhausted (--max-cost)" },
    { 129, "interrupted by SIGHUP" },
    { AR_EXIT_SIGINT, "interrupted by SIGINT" },
    { AR_EXIT_SIGTERM, "interrupted by SIGTERM" },
    { 0, NULL },
};

const struct ar_cli_env_var ar_cli_env_vars[] = {
    { "AGENTRUN_PROVIDER", "the provider when -p is not given: claude, codex, gemini or auto" },
    { "AGENTRUN_MODEL", "the model when -m is not given" },
    { "AGENTRUN_CLAUDE_BIN", "the claude executable (default: claude on PATH)" },
    { "AGENTRUN_CODEX_BIN", "the codex executable (default: codex on PATH)" },
    { "AGENTRUN_GEMINI_BIN", "the gemini executable (default: gemini on PATH)" },
    { "AGENTRUN_PRICES", "a JSON price table overriding the built-in one (like --prices)" },
    { "AGENTRUN_RECORD", "write a cassette of every CLI call into this directory (like --record)" },
    { "AGENTRUN_REPLAY", "answer every call from the cassettes in this directory (like --replay)" },
    { "AGENTRUN_CACHE_KEY",
      "the secret the result cache's entries are checked with (16 bytes or more; in CI, a "
      "repository secret; default: the key file $XDG_CONFIG_HOME/agentrun/cache.key)" },
    { "AGENTRUN_WORKTREE_DIR",
      "where runs with --worktree get their git worktrees (default: "
      "$XDG_STATE_HOME/agentrun/worktrees, else ~/.local/state/agentrun/worktrees)" },
    { "XDG_CACHE_HOME",
      "the result cache (--cache) lives in $XDG_CACHE_HOME/agentrun (default: ~/.cache/agentrun)" },
    { "XDG_CONFIG_HOME",
      "prompt overrides are read from $XDG_CONFIG_HOME/agentrun/prompts, the result cache's "
      "key from $XDG_CONFIG_HOME/agentrun/cache.key (default: ~/.config/agentrun/…)" },
    { "TMPDIR", "where the CLIs' output files are created (unlinked at once)" },
    { NULL, NULL },
};

void ar_cli_print_exit_statuses(FILE *f)
{
    fprintf(f, "exit status:\n");
    for (const struct ar_cli_exit_status *e = ar_cli_exit_statuses; e->meaning; e++)
        fprintf(f, "  %-4d %s\n", e->status, e->meaning);
}
