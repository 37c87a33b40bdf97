/*
 * Git change detection: which files did a run create, modify, delete or rename?
 *
 * A snapshot is `git status --porcelain=v2 -z --untracked-files=all` of the
 * work tree plus a content hash (the git blob id, SHA-1) of every path that
 * status lists. Two snapshots, taken before and after a run, are compared so
 * that files already dirty before the run are reported only when the run
 * changed their content again (docs/git-changes.md).
 *
 * Protocol for one run:
 *   1. before = ar_git_snapshot_take(cwd, NULL, …) (or ar_git_snapshot_start());
 *   2. the run;
 *   3. after = ar_git_snapshot_take(cwd, before, …): passing `before` makes the
 *      second snapshot also hash every path that was dirty before and is clean
 *      now, which is how a reverted file is told from an untouched one;
 *   4. ar_git_changes_compute(before, after, &changes);
 *   5. optionally ar_git_changes_load_content(&changes, after->root, …);
 *   6. ar_git_changes_to_json(&changes) for the RunResult `files` field;
 *   7. ar_git_changes_finish(), ar_git_snapshot_destroy() on both.
 * When either snapshot has tracked == 0, the RunResult says
 * `files_tracked: false` and there are no changes to compute.
 *
 * Paths are relative to the repository root and are byte strings: any byte
 * but NUL may occur (git paths cannot hold NUL), they need not be UTF-8.
 * git itself runs only through git/run.h (its hardened argv and environment).
 */
#ifndef AR_GIT_GIT_H
#define AR_GIT_GIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "agentrun/error.h"

struct ar_loop;

#define AR_GIT_OID_LEN 20

/* Per-file cap of ar_git_changes_load_content() in the RunResult (issue 5). */
#define AR_GIT_CONTENT_MAX ((size_t)1 << 20)

/* A file's stat data as git's index keeps it: equal data means an unchanged file. */
struct ar_git_stat {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    uint32_t mode;
};

/* One path that `git status` listed (or that `prev` listed, see revisit). */
struct ar_git_file {
    char *path;        /* owned; relative to the root; "dir/" for an untracked nested repo */
    char *rename_from; /* owned; the source of a staged rename ("2 … R…" record), else NULL */
    char x, y;         /* the XY status letters; '?' '?' for untracked */
    unsigned in_head : 1; /* the path exists in HEAD (so its absence is a deletion) */
    unsigned has_head_oid : 1;
    unsigned revisit : 1; /* not listed by status (clean now): hashed only because prev listed it */
    unsigned exists : 1;  /* present in the work tree when hashed */
    unsigned hashed : 1;  /* `oid` is valid (exists, and the content could be read) */
    unsigned has_stat : 1; /* `st` is valid (exists) */
    struct ar_git_stat st;
    unsigned char head_oid[AR_GIT_OID_LEN]; /* the HEAD blob of the path (hH), when has_head_oid */
    unsigned char oid[AR_GIT_OID_LEN];      /* the content's git blob id (symlink: of its target) */
};

/* A snapshot. Read-only for callers; created by the functions below. */
struct ar_git_snapshot {
    int tracked;               /* 1: inside a git work tree and status worked */
    char reason[256];          /* when !tracked: why ("not a git work tree", "git not found") */
    char *root;                /* owned; the work tree's top directory; NULL when !tracked */
    struct ar_git_file *files; /* owned; sorted by path (bytewise), each path once */
    size_t n;
    char head[72]; /* HEAD commit id in hex; "" before the first commit */
    /* CLOCK_REALTIME (ns) when hashing began: a file changed this close to it may change
     * again within the file system's timestamp granularity, so its stat data proves nothing. */
    int64_t hashed_at_ns;
    size_t n_read; /* files whose content hashing read (the others kept prev's hash) */
    /*
     * Taken with a prev whose HEAD differs (the run committed, or moved HEAD):
     * the paths that differ between prev->head and head, sorted, x = the
     * `git diff --name-status` letter (A M D T; R with rename_from, and a 'D'
     * entry for its source; a copy is 'A'). Owned; NULL/0 otherwise.
     */
    struct ar_git_file *committed;
    size_t n_committed;
};

/* The snapshot is ready. snap is owned by the callee now (ar_git_snapshot_destroy() it);
 * snap is NULL only when rc < 0 (out of memory), with err saying why. */
typedef void ar_git_snapshot_done_fn(struct ar_git_snapshot *snap, int rc,
                                     const struct ar_error *err, void *arg);

/*
 * Takes a snapshot of the work tree containing `cwd` (NULL: the current
 * directory) on a private loop. `prev` (borrowed, may be NULL) is the earlier
 * snapshot of the same tree: every path it lists is hashed again even when
 * status no longer lists it.
 *
 * Not being in a work tree, git missing, git failing or timing out are not
 * errors: *out is then a snapshot with tracked == 0 and `reason` set.
 * Returns 0 with *out owned by the caller, or AR_ENOMEM with err set.
 */
int ar_git_snapshot_take(const char *cwd, const struct ar_git_snapshot *prev,
                         struct ar_git_snapshot **out, struct ar_error *err);

/*
 * The same on `loop` (for the run pipeline): spawns git through the
 * supervisor and calls done(snap, rc, err, arg) exactly once from the loop,
 * never from inside this function. cwd and prev are borrowed and must stay
 * valid until done runs. Hashing runs on libuv's thread pool
 * (ar_loop_work()), so a large dirty file never delays other jobs on the loop.
 *
 * Returns 0 when done will be called. Otherwise done is never called and the
 * return is AR_ENOMEM, or AR_ENOTFOUND (git is not on PATH) or AR_ESPAWN
 * (git cannot be started) with err saying so: for those two the caller has
 * no snapshot to wait for and reports files_tracked false, e.g. with
 * ar_git_snapshot_untracked("%s", err->msg).
 */
int ar_git_snapshot_start(struct ar_loop *loop, const char *cwd, const struct ar_git_snapshot *prev,
                          ar_git_snapshot_done_fn *done, void *arg, struct ar_error *err);

/*
 * Pure part of a snapshot, for tests and for the functions above: parses
 * porcelain v2 -z output (`data`, `len` bytes, borrowed) into a new snapshot
 * with root = a copy of `root` and tracked = 1. Nothing is hashed yet.
 * Returns 0 with *out owned by the caller, AR_ENOMEM, or AR_EIO when the
 * output is malformed (err says where).
 */
int ar_git_snapshot_parse(const char *root, const char *data, size_t len,
                          struct ar_git_snapshot **out, struct ar_error *err);

/*
 * Pure: parses `git diff --name-status -z` output (borrowed) into
 * snap->committed, replacing what was there. Returns 0, AR_ENOMEM, or AR_EIO
 * when the output is malformed.
 */
int ar_git_snapshot_parse_commits(struct ar_git_snapshot *snap, const char *data, size_t len,
                                  struct ar_error *err);

/*
 * Adds a revisit entry for every path of prev (borrowed, may be NULL) that
 * snap lacks, then lstat()s and hashes every file of snap under snap->root.
 * A file whose stat data equals what prev recorded for it is not read again:
 * it keeps prev's hash, unless prev saw it change within 2 s of hashing (too
 * close for timestamps to tell). An unreadable file is left with hashed == 0.
 * Touches nothing but snap (prev is only read): safe on a worker thread.
 * Returns 0 or AR_ENOMEM.
 */
int ar_git_snapshot_hash(struct ar_git_snapshot *snap, const struct ar_git_snapshot *prev,
                         struct ar_error *err);

/* A snapshot with tracked == 0 and reason (printf-style); NULL when out of memory. */
struct ar_git_snapshot *ar_git_snapshot_untracked(const char *fmt, ...) AR_PRINTF(1, 2);

/* The entry for path, borrowed from snap, or NULL. */
const struct ar_git_file *ar_git_snapshot_find(const struct ar_git_snapshot *snap,
                                               const char *path);

/* Frees snap; NULL is fine. */
void ar_git_snapshot_destroy(struct ar_git_snapshot *snap);

enum ar_git_op {
    AR_GIT_CREATE,
    AR_GIT_MODIFY,
    AR_GIT_DELETE,
    AR_GIT_RENAME,
};

/* The RunResult word for op: "create", "modify", "delete", "rename". Static storage. */
const char *ar_git_op_name(enum ar_git_op op);

struct ar_git_change {
    char *path; /* owned */
    char *from; /* owned; the old path of a rename, else NULL */
    enum ar_git_op op;
    /* Filled by ar_git_changes_load_content() for create, modify and rename: */
    unsigned has_content : 1;
    unsigned truncated : 1; /* the file was longer than the cap */
    unsigned utf8 : 1;      /* content is valid UTF-8 without NUL; else base64 in JSON */
    char *content;          /* owned; content_len bytes (NUL-terminated for convenience) */
    size_t content_len;
};

/* What a run changed, sorted by path. Embed it and ar_git_changes_init() it. */
struct ar_git_changes {
    struct ar_git_change *v;
    size_t n;
};

void ar_git_changes_init(struct ar_git_changes *ch);

/* Frees every change; afterwards ar_git_changes_init() works again. */
void ar_git_changes_finish(struct ar_git_changes *ch);

/*
 * Compares two hashed snapshots of the same tree (both borrowed; after taken
 * with prev = before) and fills out (initialized, empty) with what changed
 * between them. A deletion and a creation with the same content become one
 * rename. Both snapshots must be tracked. Returns 0 or AR_ENOMEM.
 */
int ar_git_changes_compute(const struct ar_git_snapshot *before,
                           const struct ar_git_snapshot *after, struct ar_git_changes *out,
                           struct ar_error *err);

/*
 * Reads the current content of every created, modified or renamed file
 * under root (borrowed), at most max bytes each (0: AR_GIT_CONTENT_MAX);
 * a symlink's content is its target. A file that cannot be read is left
 * without content. Returns 0 or AR_ENOMEM.
 */
int ar_git_changes_load_content(struct ar_git_changes *ch, const char *root, size_t max,
                                struct ar_error *err);

/*
 * The RunResult `files` array: [{"path","op","from"}] plus "content",
 * "encoding" ("utf-8" or "base64") and "truncated" for changes with content.
 * A path that is not valid UTF-8 cannot be a JSON string as it is: its
 * invalid bytes are replaced by U+FFFD. New reference, or NULL when out of memory.
 */
json_t *ar_git_changes_to_json(const struct ar_git_changes *ch);

/*
 * The top of the git work tree containing dir (NULL: the current directory),
 * found by looking for a .git entry upwards without running git, or NULL
 * when there is none. Like git, it does not look in or above a proper
 * ancestor named in GIT_CEILING_DIRECTORIES. Caller free()s. Cheap enough
 * to call per job.
 */
char *ar_git_find_root(const char *dir);

/*
 * The colon that ends REV in a REV:PATH object name, found as git finds it
 * (get_oid_with_context(): not one inside a {...} of REV, as in HEAD^{/fix: typo}:a.c),
 * or NULL when spec has none. The one reading of that syntax in agentrun.
 */
const char *ar_git_rev_path_colon(const char *spec);

#endif
