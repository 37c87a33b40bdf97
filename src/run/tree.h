/*
 * The first and the last stage of a run with a git worktree of its own
 * (options.worktree, git/worktrees.h): which branch it gets, and at the end
 * what is committed, what is removed, and where the result says the work is.
 * The pipeline sequences them; this is what they do.
 */
#ifndef AR_RUN_TREE_H
#define AR_RUN_TREE_H

#include "agentrun/agentrun.h"
#include "git/worktrees.h"
#include "result/result.h"

struct ar_loop;

/*
 * Makes the worktree for a run with options o (borrowed for the call): from
 * o->worktree_base, on o->worktree_branch or agentrun/<session>/<job_id or
 * "run">. done as ar_git_tree_make(). Returns 0 or AR_ENOMEM.
 */
int ar_run_tree_make(struct ar_loop *loop, const struct ar_run_options *o,
                     ar_git_tree_made_fn *done, void *arg, struct ar_error *err);

typedef void ar_run_tree_done_fn(void *arg);

/*
 * Finishes tree (borrowed until done) for the run whose result d is drafting:
 * commits what it holds when o->worktree_commit and the run succeeded; removes it
 * unless o->keep_worktree (git keeps it when something is uncommitted: a warning
 * to o->logger says so); deletes an empty branch; records all of it in d (the
 * result's `worktree`), and a commit that failed as the run's error. o and d are
 * borrowed until done(arg) runs, once, from the loop. Returns 0, or -1 when it
 * could not start (d then says so: the worktree is recorded as kept).
 */
int ar_run_tree_finish(struct ar_loop *loop, struct ar_git_tree *tree,
                       const struct ar_run_options *o, struct ar_result_draft *d,
                       ar_run_tree_done_fn *done, void *arg);

#endif
