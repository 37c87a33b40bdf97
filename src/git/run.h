/*
 * Running git: the one place agentrun builds a git command line and starts it.
 *
 * Every git process agentrun starts (the change-detection snapshots of
 * git.h, the diffs and blobs `review` reads) goes through these functions,
 * so the hardening is written once and cannot be forgotten by a caller:
 *
 *   - `-c core.fsmonitor=false`: a configured fsmonitor is a program git
 *     would start (and a daemon it may leave behind) on our behalf;
 *   - the commands that print diffs (diff, log, show) get `--no-color
 *     --no-ext-diff --no-textconv --text` right after the subcommand: no
 *     external diff program (diff.external, diff.<driver>.command) and no
 *     textconv filter runs on file content, and no attribute of the checkout
 *     (-diff, binary, a driver's binary setting, a macro of those) turns a
 *     file's content into "Binary files … differ": what is text is decided
 *     by agentrun from the content;
 *   - the environment: GIT_OPTIONAL_LOCKS=0 (no index.lock taken behind a
 *     CLI's own `git add`), GIT_PAGER=cat and GIT_TERMINAL_PROMPT=0 (git
 *     never waits on a pager or a terminal), LC_ALL=C (messages in one
 *     language);
 *   - argv only, never a shell, through the supervisor (src/proc): its own
 *     process group, killed as a group.
 *
 * With AR_GIT_NO_HOOKS no hook runs; with git_dir and work_tree the
 * repository is named, not discovered. With AR_GIT_PIN_OUTPUT the
 * configuration that changes the shape of text output is pinned as well (core.quotepath, the diff
 * prefixes, diff.relative, colour), for output that is parsed as a diff.
 *
 * Protocol: fill a struct ar_git_cmd (AR_GIT_CMD_INIT), then either
 * ar_git_start() on a loop (the result comes to a ar_child_done_fn) or
 * ar_git_run() to wait for it here.
 */
#ifndef AR_GIT_RUN_H
#define AR_GIT_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "agentrun/error.h"
#include "proc/proc.h"
#include "util/strv.h"

enum ar_git_flags {
    /* core.quotepath=false, diff.noprefix=false, diff.mnemonicPrefix=false,
     * diff.relative=false, color.ui=never, diff.autoRefreshIndex=true: user
     * settings cannot change what a diff parser reads. */
    AR_GIT_PIN_OUTPUT = 1 << 0,
    /* May start after ar_loop_cancel_all() (ar_child_opts.after_cancel): short
     * bookkeeping, such as the snapshot that reports what an interrupted run changed. */
    AR_GIT_AFTER_CANCEL = 1 << 1,
    /* As AR_GIT_AFTER_CANCEL, and the first cancel lets it run to its end
     * (ar_child_opts.finish_on_cancel): a worktree being made, committed or
     * removed, which a kill would leave half done. */
    AR_GIT_FINISH_ON_CANCEL = 1 << 2,
    /* core.hooksPath=/dev/null: no hook runs (post-checkout after `worktree add`,
     * the commit hooks): a hook is a program, and the checkout may name it. */
    AR_GIT_NO_HOOKS = 1 << 3,
    /* A command that makes a commit (commit, commit-tree) where git knows no identity for
     * the user (a fresh CI machine): decided by `git var GIT_COMMITTER_IDENT` failing
     * where the command runs (never by reading git's prose), it is made as
     * agentrun <agentrun@localhost>. A user's own identity is always kept. The probe is one
     * short git run, made before the command starts (on the caller's thread). */
    AR_GIT_FALLBACK_IDENTITY = 1 << 4,
    /* ar_git_run() only: another git making or removing a worktree of the same repository
     * at that moment makes `worktree add/list/remove` (and what reads a worktree's admin
     * folder) fail before changing anything; the same command is run again after a short
     * pause (ar_git_worktree_race()). An asynchronous caller asks ar_git_worktree_race()
     * itself and starts the command again on its own timer. */
    AR_GIT_RETRY_WORKTREE_RACE = 1 << 5,
};

/* How often a command that met another git's worktree is made again (AR_GIT_RETRY_WORKTREE_RACE):
 * jobs side by side meet it often, and each pause differs between callers. */
#define AR_GIT_RACE_TRIES 40

struct ar_git_cmd {
    /* The subcommand and its arguments, without "git": { "status", "-z", NULL }.
     * Borrowed for the call (ar_git_start() copies what it needs). */
    const char *const *args;
    const char *cwd; /* where git runs; NULL: agentrun's own directory */
    /* --git-dir and --work-tree: the repository is this one, whatever a `.git`
     * file in cwd says (a worktree whose `.git` file a CLI could rewrite). NULL: found
     * from cwd as git does. */
    const char *git_dir;
    const char *work_tree;
    const void *stdin_data; /* written to git's stdin, which is then closed; NULL: empty */
    size_t stdin_len;
    uint64_t timeout_ms; /* wall clock; 0: none */
    size_t output_cap;   /* stdout bytes kept; 0: AR_CHILD_DEFAULT_OUTPUT_CAP */
    unsigned flags;      /* enum ar_git_flags */
    /* The repository's common git dir when the caller knows it: git may name a worktree's
     * admin folder by it rather than as .git/worktrees/… (ar_git_worktree_race()). */
    const char *common_dir;
};

#define AR_GIT_CMD_INIT \
    {                   \
        0               \
    }

/*
 * The environment every git command gets ("NAME=VALUE", NULL-terminated,
 * static storage), in the form of ar_child_opts.env.
 */
extern const char *const ar_git_env[];

/*
 * Appends the whole command line of cmd ("git", the hardening options,
 * --git-dir and --work-tree, then cmd->args with the diff options after the
 * subcommand) to argv (initialised
 * by the caller, who finishes it). Returns 0 or AR_ENOMEM. The fallback identity
 * (AR_GIT_FALLBACK_IDENTITY) is not in it: ar_git_start() and ar_git_run() ask git first.
 */
int ar_git_argv(const struct ar_git_cmd *cmd, struct ar_strv *argv);

/*
 * Whether git's failure res (of cmd, the tries-th time it ran, from 0) was meeting
 * another git's worktree of the same repository (its stderr names a worktree's admin
 * folder: .git/worktrees/… or cmd->common_dir/worktrees/…), and the command should be made
 * again after *wait_ms (which differs with seed, so that callers side by side part).
 * 0: it was not, or the tries are spent (AR_GIT_RACE_TRIES).
 */
int ar_git_worktree_race(const struct ar_git_cmd *cmd, const struct ar_child_result *res,
                         unsigned tries, uintptr_t seed, uint64_t *wait_ms);

/*
 * Starts git on loop, stdout captured. done(child, res, arg) runs exactly
 * once from the loop after git ended (res and its buffers are borrowed for
 * the call), never from inside this function. Returns 0 when done will be
 * called; else done is never called and the return is AR_ENOMEM, AR_ENOTFOUND
 * (git is not on PATH), AR_ESPAWN (it cannot be started) or AR_EINTERRUPTED
 * (the loop was cancelled, without AR_GIT_AFTER_CANCEL), with err saying so.
 */
int ar_git_start(struct ar_loop *loop, const struct ar_git_cmd *cmd, ar_child_done_fn *done,
                 void *arg, struct ar_error *err);

/*
 * Runs git to its end on a private loop, stdout captured. Returns 0 when git
 * ran, however it ended (out->res.status, out->res.end: a non-zero exit is
 * the caller's to judge; free out with ar_child_sync_finish()), or
 * AR_ENOMEM, AR_ENOTFOUND, AR_ESPAWN with err set and nothing to free.
 */
int ar_git_run(const struct ar_git_cmd *cmd, struct ar_child_sync *out, struct ar_error *err);

/*
 * The first line of git's stderr tail (tail[0..len), may be NULL), where its
 * "fatal: …" message is, copied into buf (n > 0 bytes, cut to fit). Returns
 * buf, "" when stderr was empty.
 */
const char *ar_git_stderr_line(const char *tail, size_t len, char *buf, size_t n);

#endif
