/*
 * agentrun: merging the branches of a batch's worktrees back into one
 * integration branch (`agentrun worktrees merge`, `batch --merge`;
 * docs/worktrees.md#merging-the-branches-back).
 *
 * No checkout is touched: every trial merge is `git merge-tree --write-tree`
 * (git 2.38 or later), every merge commit `git commit-tree`, and the
 * integration branch moves once, at the end, with `git update-ref` from the
 * value it had (compare and swap). Only a check (options.check) checks
 * anything out: in a scratch worktree of its own, locked while in use and
 * removed after, whatever happened.
 *
 *     struct ar_worktree_merge_options o = AR_WORKTREE_MERGE_OPTIONS_INIT;
 *     struct ar_worktree_merge_result r;
 *     o.check = "make test";
 *     if (ar_worktree_merge(&o, &r, &err) == 0) {
 *         for (size_t i = 0; i < r.n; i++)
 *             printf("%s %s\n", ar_worktree_merge_outcome_name(r.v[i].outcome), r.v[i].branch);
 *         ar_worktree_merge_result_finish(&r);
 *     }
 */
#ifndef AGENTRUN_MERGE_H
#define AGENTRUN_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A commit id in hex, SHA-1 or SHA-256, with its NUL. */
#define AR_WORKTREE_MERGE_HEX_SIZE 65

struct ar_worktree_merge_options {
    const char *cwd; /* in the repository; NULL: the current directory */
    /* What to merge: branches (NULL-terminated, names without refs/heads/), else the
     * branches agentrun/<session>/… of session, else (both NULL) those of the latest
     * session (sessions are UTC times: the greatest). */
    const char *session;
    const char *const *branches;
    /* The integration branch; NULL: agentrun/<session>/merged (a usage error when the
     * branches are of no one session). Made from the base when it does not exist,
     * extended from its tip when it does; never reset, never one a worktree has
     * checked out, never one of the branches merged. */
    const char *into;
    const char *check; /* run with `sh -c` in each candidate's scratch worktree; NULL: none */
    uint64_t check_timeout_ms; /* per check; 0: 10 minutes */
    const char *dir;           /* the scratch worktrees' folder; NULL: agentrun's worktree folder */
    /* Polled while the merge runs (may be NULL): once non-zero (a signal handler sets it),
     * the check running is ended (its process group), its scratch worktree removed, the
     * integration branch left as it was, and the call returns AR_EINTERRUPTED. */
    const volatile int *cancel;
    void *reserved[4]; /* zero: members added later come out of it (docs/library.md#abi) */
};

#define AR_WORKTREE_MERGE_OPTIONS_INIT \
    {                                  \
        0                              \
    }

enum ar_worktree_merge_outcome {
    AR_WORKTREE_MERGE_MERGED = 0,   /* on the integration branch (commit) */
    AR_WORKTREE_MERGE_CONFLICT,     /* conflicts with what was merged before it (with, paths) */
    AR_WORKTREE_MERGE_CHECK_FAILED, /* its merge failed the check (check_status, check_tail) */
    AR_WORKTREE_MERGE_EMPTY,        /* nothing to merge: its commits are there already */
};

/* "merged", "conflict", "check_failed", "empty"; static storage. */
AR_API const char *ar_worktree_merge_outcome_name(enum ar_worktree_merge_outcome o);

/* One branch, as it went. */
struct ar_worktree_merge_branch {
    char *branch;                         /* without refs/heads/ */
    char tip[AR_WORKTREE_MERGE_HEX_SIZE]; /* its commit (never changed by the merge) */
    enum ar_worktree_merge_outcome outcome;
    char commit[AR_WORKTREE_MERGE_HEX_SIZE]; /* merged: the merge commit made for it */
    char **with;                             /* conflict: the merged branches it conflicts with */
    size_t n_with;                           /* (0: with their merge only, not one alone) */
    char **paths;                            /* conflict: the conflicted paths */
    size_t n_paths;
    int check_status;  /* check_failed: exit status (128 + signal), or -1 when it timed out */
    char *check_tail;  /* check_failed: the last lines of its output (stdout and stderr) */
    void *reserved[4]; /* zero: members added later come out of it (docs/library.md#abi) */
};

struct ar_worktree_merge_result {
    char *top;     /* the repository's top */
    char *session; /* the branches' session, or NULL (branches of several or none) */
    char *into;    /* the integration branch */
    char base[AR_WORKTREE_MERGE_HEX_SIZE]; /* where the branches started (merge base of theirs) */
    char head[AR_WORKTREE_MERGE_HEX_SIZE]; /* the integration branch's tip now */
    int created;                           /* this call made the integration branch */
    struct ar_worktree_merge_branch *v;    /* in the order they were tried */
    size_t n;
    size_t merged, left_out; /* left out: conflict or check_failed */
    void *reserved[4];       /* zero: members added later come out of it (docs/library.md#abi) */
};

/*
 * Merges the branches o names (borrowed for the call) into the integration
 * branch, as above. Order: the branches that conflict with no other (git
 * merge-tree of each pair) first, then a deterministic maximal set of those
 * that do (fewest conflicts first, then by name), then the rest by name;
 * each is merged into what is merged so far, and left out when that merge
 * conflicts or fails the check. Blocking (it runs git and the check).
 * Returns 0 with *out filled (ar_worktree_merge_result_finish()), whether or
 * not some branches were left out; or, with err set and nothing to finish:
 * AR_EUSAGE (not a git work tree, no such session or branch, a bad --into,
 * git older than 2.38), AR_EIO (git failed, or the integration branch moved
 * meanwhile), AR_EINTERRUPTED (o->cancel), AR_ENOMEM, AR_ENOTFOUND (no git).
 */
AR_API int ar_worktree_merge(const struct ar_worktree_merge_options *o,
                             struct ar_worktree_merge_result *out, struct ar_error *err);
AR_API void ar_worktree_merge_result_finish(struct ar_worktree_merge_result *r);

#ifdef __cplusplus
}
#endif

#endif
