/* Merging a batch's branches back (`agentrun worktrees merge`, `batch --merge`): the
 * call with Ctrl-C watched, and its output (docs/worktrees.md). */
#ifndef AR_CLI_MERGE_H
#define AR_CLI_MERGE_H

#include "agentrun/agentrun.h"
#include "agentrun/merge.h"
#include "util/buf.h"
#include "util/strv.h"

/*
 * ar_worktree_merge(o, out, err) with SIGINT, SIGTERM and SIGHUP caught for the
 * call's length: the first one ends the check running, removes its scratch
 * worktree and leaves the integration branch as it was (the call then fails with
 * AR_EINTERRUPTED, and *signum says which). o->cancel is set here.
 */
int ar_cli_merge(struct ar_worktree_merge_options *o, struct ar_worktree_merge_result *out,
                 int *signum, struct ar_error *err);

/* The result as text, a line per branch then the integration branch, into b. Branch
 * names, paths and the check's output are shown, never obeyed: no control character
 * or newline of theirs reaches the terminal. prefix starts every line ("" or
 * "agentrun batch: "). Returns 0 or AR_ENOMEM. */
int ar_cli_merge_text(const struct ar_worktree_merge_result *r, const char *prefix,
                      struct ar_buf *b);

/* The result as one JSON object and a newline (docs/worktrees.md has the schema). */
int ar_cli_merge_json(const struct ar_worktree_merge_result *r, struct ar_buf *b);

/* The exit status of a merge call: 0 every branch merged (or had nothing to merge), 1 some
 * were left out; of a failed call (rc < 0): 2 usage, 130/143/129 a signal, 4 else. */
int ar_cli_merge_exit_status(int rc, const struct ar_worktree_merge_result *r, int signum);

struct ar_cli_command;

/* batch --merge: the branches that hold a job's commit, in the order the jobs ended. */
struct ar_cli_batch_branches {
    struct ar_strv v;
};

/* Adds the branch of result's worktree when it holds a commit. Returns 0 or AR_ENOMEM. */
int ar_cli_batch_branches_add(struct ar_cli_batch_branches *b, const struct ar_result *result);
void ar_cli_batch_branches_finish(struct ar_cli_batch_branches *b);

/* The end of `batch --merge`: the branches merged (o: --check, --check-timeout, cwd) into
 * agentrun/<session>/merged, each branch's line and the count on stderr (a JSON event
 * with log_json). Returns the exit status of the merge (ar_cli_merge_exit_status()). */
int ar_cli_batch_merge(struct ar_worktree_merge_options *o, struct ar_cli_batch_branches *b,
                       int log_json);

/* `agentrun worktrees merge [SESSION | BRANCH...]`: argv[ind..argc) are the operands,
 * o has the options. Prints the result; returns the exit status. */
int ar_cli_worktrees_merge(const struct ar_cli_command *cmd, struct ar_worktree_merge_options *o,
                           int json_format, int argc, char **argv, int ind);

#endif
