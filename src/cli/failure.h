/*
 * What a failure says on stderr: its cause once, first, with the fix; then one
 * line per thing it left (a changed file not reviewed, a job that failed, a bad
 * input line) at most, a screenful of them (all with -v), and past that a count.
 * review, batch, prioritize and run say their failures through here.
 */
#ifndef AR_CLI_FAILURE_H
#define AR_CLI_FAILURE_H

#include <stddef.h>

/* The lines a failure lists before it counts instead. */
#define AR_CLI_SCREENFUL 20

/*
 * The fix of a failure beyond the cause's own words, into buf ("" when there
 * is none): a CLI that cannot log in (auth: a call it refused, or the one the
 * user named) or a CLI named that is not installed (not_found) can be swapped
 * for another: "; or use another CLI: -p codex or -p gemini". `provider` is the
 * one that failed; `called` whether a call of it ran; `named` whether the user
 * chose it (-p, AGENTRUN_PROVIDER, a job's "provider"), not auto.
 */
void ar_cli_failure_hint(int code, const char *provider, int called, int named, char *buf,
                         size_t size);

/* A list of lines that stops at a screenful: zero-initialize. */
struct ar_cli_lines {
    size_t said;    /* lines printed */
    size_t counted; /* items past the screenful, counted instead */
};

/* Whether the next item gets its line (the first AR_CLI_SCREENFUL, every one with -v);
 * else it is counted. */
int ar_cli_lines_take(struct ar_cli_lines *l);

/* When items were counted: "agentrun: error: … and N more WHAT (WHERE)", what and where
 * as the caller words them ("changed files not reviewed", "the review on stdout lists
 * each"). */
void ar_cli_lines_end(const struct ar_cli_lines *l, const char *what, const char *where);

/* Whether stdout and stderr are one terminal: what a command prints on stdout is read
 * there beside its diagnostics (so these need not repeat it). */
int ar_cli_stdout_shares_terminal(void);

#endif
