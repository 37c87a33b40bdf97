/*
 * agentrun: the worktrees and branches runs with a worktree of their own
 * (ar_run_options.worktree, a batch's worktrees) left in a repository, and
 * taking them away (docs/worktrees.md). What `agentrun worktrees list|prune`
 * does. A worktree is agentrun's when the repository has it registered and its
 * folder lies in agentrun's worktree folder; a branch is agentrun's when it is
 * named as agentrun names its branches, agentrun/<session>/<job> (session:
 * "20261125-143001-3fa2"; a user's agentrun/mine is not). Neither call touches
 * any other.
 *
 *     struct ar_worktree_list l;
 *     if (ar_worktree_list(NULL, NULL, &l, &err) == 0) {
 *         for (size_t i = 0; i < l.n; i++)
 *             printf("%s %s\n", l.v[i].branch ? l.v[i].branch : "-", l.v[i].head);
 *         ar_worktree_list_finish(&l);
 *     }
 */
#ifndef AGENTRUN_WORKTREES_H
#define AGENTRUN_WORKTREES_H

#include <stddef.h>

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A commit id in hex, SHA-1 or SHA-256, with its NUL. */
#define AR_WORKTREE_HEX_SIZE 65

/* One worktree, or one branch alone. */
struct ar_worktree_entry {
    char *branch; /* "agentrun/…" without refs/heads/, or NULL (a worktree on no branch) */
    char *path;   /* its worktree in the folder, or NULL (a branch alone) */
    char head[AR_WORKTREE_HEX_SIZE]; /* the commit it is at */
    int missing;                     /* a worktree git has registered whose folder is gone */
    int merged;                      /* a branch whose commits are all in HEAD already */
    union {
        struct {
            /* A worktree git has locked: the lock's reason ("" when it gives none), else
             * NULL. A run holds its worktree locked while it lasts ("agentrun pid N start
             * T: …"). Added in issue 45. */
            char *locked;
        };
        void *reserved[4]; /* zero: members added later come out of it (docs/library.md#abi) */
    };
};

struct ar_worktree_list {
    char *top;                   /* the repository's top */
    char *dir;                   /* the worktree folder looked in */
    struct ar_worktree_entry *v; /* worktrees first, then branches alone; each by name */
    size_t n;
    void *reserved[4]; /* zero: members added later come out of it (docs/library.md#abi) */
};

/*
 * What agentrun left in the repository of cwd (NULL: the current directory):
 * the worktrees git has registered whose folder lies in dir (NULL: the
 * default, $AGENTRUN_WORKTREE_DIR, else $XDG_STATE_HOME/agentrun/worktrees,
 * else ~/.local/state/agentrun/worktrees), and every branch named
 * agentrun/<session>/<job>. Blocking (it runs git). Returns 0 with *out filled
 * (ar_worktree_list_finish()), or AR_EUSAGE (not a git work tree), AR_EIO (git
 * failed), AR_ENOMEM with err set.
 */
AR_API int ar_worktree_list(const char *cwd, const char *dir, struct ar_worktree_list *out,
                            struct ar_error *err);
AR_API void ar_worktree_list_finish(struct ar_worktree_list *l);

enum ar_worktree_prune_flags {
    AR_WORKTREE_PRUNE_FORCE = 1 << 0,    /* also worktrees with uncommitted changes */
    AR_WORKTREE_PRUNE_BRANCHES = 1 << 1, /* also branches with commits HEAD does not have */
};

/* What ar_worktree_prune() did with one entry of the list. */
enum ar_worktree_prune_outcome {
    AR_WORKTREE_PRUNE_REMOVED = 0, /* the worktree (and the branch, when it went too) is gone */
    AR_WORKTREE_PRUNE_KEPT,        /* left alone: why says so */
};
typedef void ar_worktree_prune_fn(void *arg, const struct ar_worktree_entry *e,
                                  enum ar_worktree_prune_outcome outcome, int branch_deleted,
                                  const char *why);

/*
 * Removes what l (from ar_worktree_list(), borrowed) lists: each worktree that
 * holds nothing uncommitted (with AR_WORKTREE_PRUNE_FORCE, every one) and is not
 * locked — with or without the flags, a locked worktree and its branch are kept,
 * unless an agentrun process locked it and is gone (then the lock is taken off
 * first) —, and the
 * branch of each removed worktree and each branch alone when its commits are
 * all in HEAD (with AR_WORKTREE_PRUNE_BRANCHES, every one). fn(arg, …) is told
 * about each entry: removed, or kept and why. Blocking. Returns 0, or the
 * error of a git that could not be started (AR_ENOTFOUND, AR_ESPAWN,
 * AR_ENOMEM) with err set.
 */
AR_API int ar_worktree_prune(const struct ar_worktree_list *l, unsigned flags,
                             ar_worktree_prune_fn *fn, void *arg, struct ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
