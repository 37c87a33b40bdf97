/*
 * agentrun's own git worktrees: a run (a batch job) in a checkout of its own,
 * on a branch of its own, so edit jobs of one repository run side by side and
 * the main checkout is never touched (docs/worktrees.md).
 * (src/git/hash.c, "reading the work tree", is about the files of any checkout.)
 *
 * Where: <dir>/<repo>/<branch>, dir = $AGENTRUN_WORKTREE_DIR, else
 * $XDG_STATE_HOME/agentrun/worktrees, else ~/.local/state/agentrun/worktrees;
 * <repo> is the top folder's name and a hash of the repository's git dir.
 * Outside the repository on purpose: not under .git (claude refuses every
 * write below a directory named .git) and not in the work tree (the main
 * checkout's status would show it). A worktree is agentrun's when the
 * repository has it registered and its folder lies in dir: list and prune
 * touch no other.
 *
 * Names: every branch agentrun makes passes ar_git_branch_name_ok(), git's own
 * rules for a branch name (git check-ref-format --branch). So it is one argv
 * word that git reads as a name, never as an option, and as a path below
 * <dir>/<repo> it has no empty, "." or ".." component and no leading '/': it
 * cannot leave that folder. A batch job's id becomes one such component
 * (ar_git_ref_component()): any bytes in, a safe and distinct name out.
 *
 * The life of one worktree:
 *   1. ar_git_tree_make(): `git rev-parse` (the repository, its top, the base
 *      commit), `git update-ref refs/heads/<branch> <base> ""` (the branch is
 *      made only if it does not exist: never someone else's), `git worktree
 *      add -- <path> <branch>`; when the add fails the branch is deleted again;
 *   2. the run, in ar_git_tree_cwd();
 *   3. ar_git_tree_finish(): with `commit`, `git add -A` and `git commit` on
 *      the branch, run with --git-dir and --work-tree named (a `.git` file the
 *      CLI rewrote cannot send them elsewhere); then `git worktree remove`
 *      without --force, which git refuses while the worktree holds anything
 *      uncommitted, so no work is lost; then, when the worktree is gone and its
 *      branch still at base, `git update-ref -d refs/heads/<branch> <base>`
 *      (deleted only at that value).
 * No git command of a worktree runs a hook (AR_GIT_NO_HOOKS), and the first
 * Ctrl-C lets each one finish (AR_GIT_FINISH_ON_CANCEL): no half-made or
 * half-removed worktree is left for a rerun to trip over.
 */
#ifndef AR_GIT_WORKTREES_H
#define AR_GIT_WORKTREES_H

#include <stddef.h>

#include "agentrun/error.h"
#include "agentrun/worktrees.h"

struct ar_loop;

/* A commit id in hex, SHA-1 or SHA-256, with its NUL. */
#define AR_GIT_HEX_SIZE 65
/* A ref name component made by ar_git_ref_component(), with its NUL. */
#define AR_GIT_COMPONENT_SIZE 64
/* An id of ar_git_tree_session_id() ("20261125-143001-3fa2"), with its NUL. */
#define AR_GIT_SESSION_SIZE 32

/* ---- names (pure) ------------------------------------------------------------ */

/* 1 when refs/heads/<name> is a branch git accepts (check-ref-format --branch), else 0. */
int ar_git_branch_name_ok(const char *name);

/*
 * One component of a branch name for any text (a job id): the text itself
 * when it is short and made of [A-Za-z0-9._-] in a form git accepts, else
 * its letters, digits, '_' and '-' (others become '-'), cut to fit, then
 * '-' and 8 hex digits of its SHA-256: texts that map alike ("a b", "a:b")
 * still differ, and none gives an invalid name. (Only an id crafted to equal
 * another's mapped form collides; its branch then exists and that job fails.)
 * out has AR_GIT_COMPONENT_SIZE bytes.
 */
void ar_git_ref_component(const char *text, char out[AR_GIT_COMPONENT_SIZE]);

/* A new id for the worktrees of one batch or run: UTC time and 16 random bits,
 * "20261125-143001-3fa2". */
void ar_git_tree_session_id(char out[AR_GIT_SESSION_SIZE]);

/* The last component of a session's integration branch, "agentrun/<session>/merged"
 * (merge.c): no job's branch is ever named so (ar_git_tree_branch()). */
#define AR_GIT_MERGED_COMPONENT "merged"

/* "agentrun/<session>/<component of job>" into out (size bytes). job NULL: "run". A job
 * whose component would be AR_GIT_MERGED_COMPONENT, in any case (a file system that
 * folds case stores both refs in one file), gets the hashed form any other text gets
 * ("merged-1a2b3c4d"): a job's branch is never the integration branch. */
void ar_git_tree_branch(const char *session, const char *job, char *out, size_t size);

/* 1 when name has the shape ar_git_tree_branch() gives ("agentrun/<session>/<component>"),
 * the mark of a branch agentrun made: `agentrun worktrees prune` deletes no other
 * (a branch of the user's named agentrun/mine is theirs). */
int ar_git_tree_branch_ours(const char *name);

/* The folder agentrun's worktrees live in (see above), or NULL when neither
 * $AGENTRUN_WORKTREE_DIR, $XDG_STATE_HOME nor $HOME says. Caller free()s. */
char *ar_git_tree_default_dir(void);

/* ---- one run's worktree (on a loop) -------------------------------------------- */

struct ar_git_tree {
    char *top;     /* the main checkout's top */
    char *home;    /* <dir>/<repo>: emptied folders below it are removed with the worktree */
    char *path;    /* the worktree's top: <dir>/<repo>/<branch> */
    char *cwd;     /* where the run goes: path plus where the asked cwd lies below top */
    char *branch;  /* its branch, without refs/heads/ */
    char *git_dir; /* its own git dir (<common>/worktrees/<name>), read right after it was made */
    char *common;  /* the repository's git dir, where every worktree's own one lives */
    char base[AR_GIT_HEX_SIZE];
    /* Set by ar_git_tree_finish(): */
    char commit[AR_GIT_HEX_SIZE]; /* the branch's tip when it moved past base, else "" */
    int removed;                  /* the worktree is gone */
    int branch_deleted;           /* the branch is gone (it was still at base) */
    char kept_why[200];           /* !removed: why, AR_GIT_TREE_UNCOMMITTED or git's words */
};

/* kept_why of a worktree git would not remove: the run's work is in it, uncommitted. */
#define AR_GIT_TREE_UNCOMMITTED "it holds uncommitted changes"

struct ar_git_tree_spec {
    const char *cwd;    /* the run's directory in the main checkout; NULL: the current one */
    const char *base;   /* the revision the worktree starts from; NULL: HEAD */
    const char *branch; /* the branch to make (ar_git_branch_name_ok()) */
    const char *dir;    /* the worktree folder; NULL: ar_git_tree_default_dir() */
};

/*
 * The worktree is made (tree, owned by the callee from here: ar_git_tree_destroy()),
 * or not (tree NULL, err says why: AR_EUSAGE for what the caller asked — not a git work
 * tree, a base that names no commit, a branch that exists or is no valid name, a folder
 * inside the work tree —, AR_EIO for git or the file system failing, AR_EINTERRUPTED
 * after a cancel, AR_ENOMEM).
 */
typedef void ar_git_tree_made_fn(struct ar_git_tree *tree, const struct ar_error *err, void *arg);

/*
 * Makes a worktree per spec (borrowed for the call) on loop. done runs once,
 * from the loop, never from inside this function. Returns 0 when it will, or
 * AR_ENOMEM with err set.
 */
int ar_git_tree_make(struct ar_loop *loop, const struct ar_git_tree_spec *spec,
                     ar_git_tree_made_fn *done, void *arg, struct ar_error *err);

struct ar_git_tree_end {
    int commit;          /* commit what the worktree holds on its branch */
    const char *message; /* the commit message (borrowed for the call) */
    int keep;            /* leave the worktree in place */
};

/* Finished: tree's commit, removed, branch_deleted and kept_why are set. err is
 * NULL, or says why the commit asked for could not be made (the changes are then
 * still in the worktree, which is kept). */
typedef void ar_git_tree_finished_fn(struct ar_git_tree *tree, const struct ar_error *err,
                                     void *arg);

/*
 * Finishes tree (borrowed; it must stay until done) per end (borrowed for the
 * call): the commit, the removal and the branch, as above. done runs once,
 * from the loop. Returns 0 when it will, or AR_ENOMEM with err set.
 */
int ar_git_tree_finish(struct ar_loop *loop, struct ar_git_tree *tree,
                       const struct ar_git_tree_end *end, ar_git_tree_finished_fn *done, void *arg,
                       struct ar_error *err);

/* Frees tree; NULL is fine. (The worktree itself stays as it is.) */
void ar_git_tree_destroy(struct ar_git_tree *tree);

/* ---- locks: a worktree in use is locked (worktrees_lock.c) ----------------------- */

/*
 * While a run works in a worktree (from `worktree add` to its finish), git has it
 * locked, with a reason naming this process: "agentrun pid 4242 start 91734: a run is
 * using it". `git worktree prune` and `remove` then leave it alone, and `agentrun
 * worktrees prune` does too, unless the process that locked it is gone. Anything of
 * agentrun's that works in a worktree of its own (a scratch worktree) locks it the same
 * way, with these functions.
 */
#define AR_GIT_LOCK_REASON_SIZE 96

/* This process's lock reason, as above, into out. */
void ar_git_tree_lock_reason(char out[AR_GIT_LOCK_REASON_SIZE]);

/*
 * Whose lock `reason` (git's `locked` reason, "" for a lock without one) is: 1 when an
 * agentrun process wrote it and still runs (the same pid with the same start time; where
 * the start time cannot be read, a live pid), 0 when that process is gone, -1 when the
 * lock is not agentrun's (the user's own `git worktree lock`).
 */
int ar_git_tree_lock_live(const char *reason);

/*
 * `git worktree lock --reason <ar_git_tree_lock_reason()> -- path` and `git worktree unlock
 * -- path`, blocking, in the repository of top (for a worktree used outside a loop; a
 * run's own worktree is locked as it is made and unlocked as it is finished, by
 * ar_git_tree_make() and ar_git_tree_finish()). Return 0, or AR_EIO (git said no: why in
 * err), AR_ENOTFOUND / AR_ESPAWN (no git), AR_ENOMEM.
 */
int ar_git_tree_lock(const char *top, const char *path, struct ar_error *err);
int ar_git_tree_unlock(const char *top, const char *path, struct ar_error *err);

/* What agentrun left in a repository (`agentrun worktrees`): ar_worktree_list() and
 * ar_worktree_prune(), public in agentrun/worktrees.h. */

#endif
