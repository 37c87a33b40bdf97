/*
 * Taking a snapshot: `git rev-parse --show-toplevel`, then `git status` in
 * that directory, both through the supervisor, then hashing. The async form
 * is the real one; the sync form runs it on a private loop, so both share
 * every step.
 */
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "git/run.h"

/* Generous: status in a large tree on a cold cache can take many seconds. */
#define GIT_TIMEOUT_MS 120000
/* Status of a tree with very many untracked files can be large. */
#define GIT_OUTPUT_CAP ((size_t)256 << 20)

static const char *const toplevel_args[] = { "rev-parse", "--show-toplevel", NULL };

/*
 * One scan that does as little as it can: --no-renames (a rename is found
 * by content in diff.c, which also catches `mv` without `git mv`, so git's
 * similarity search over every added and deleted path is wasted work);
 * --no-ahead-behind (--branch would otherwise count the commits between
 * HEAD and its upstream); the untracked cache is used where the repository
 * enables it (core.untrackedCache), and fsmonitor is off (git/run.h).
 * --branch: its "# branch.oid" header is HEAD, so a commit made by the run is noticed.
 * GIT_OPTIONAL_LOCKS=0 (git/run.h): status otherwise refreshes the index and
 * takes index.lock, which would make a CLI's own `git add` fail while we look.
 */
static const char *const status_args[] = { "status",
                                           "--porcelain=v2",
                                           "-z",
                                           "--branch",
                                           "--no-ahead-behind",
                                           "--untracked-files=all",
                                           "--no-renames",
                                           NULL };

/* The empty tree: what a repository without commits had before the run. */
#define EMPTY_TREE_SHA1   "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#define EMPTY_TREE_SHA256 "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"

struct snap_job {
    struct ar_loop *loop;
    char *cwd;
    const struct ar_git_snapshot *prev;
    ar_git_snapshot_done_fn *done;
    void *arg;
    char *root;
    struct ar_git_snapshot *snap; /* between status and the commit diff */
    int hash_rc;                  /* the hashing's result, from the worker */
    struct ar_error hash_err;
};

static void job_free(struct snap_job *j)
{
    ar_git_snapshot_destroy(j->snap);
    free(j->cwd);
    free(j->root);
    free(j);
}

static void finish(struct snap_job *j, struct ar_git_snapshot *snap, int rc,
                   const struct ar_error *err)
{
    ar_git_snapshot_done_fn *done = j->done;
    void *arg = j->arg;
    job_free(j);
    done(snap, rc, err, arg);
}

static void finish_oom(struct snap_job *j, const char *where)
{
    struct ar_error e = AR_ERROR_INIT;
    ar_error_set(&e, AR_ENOMEM, where, "out of memory");
    finish(j, NULL, AR_ENOMEM, &e);
}

/* Tracking is off, with a reason; out of memory for the reason is the only failure. */
static void finish_untracked(struct snap_job *j, const char *why, const char *detail)
{
    struct ar_git_snapshot *s = detail && *detail ? ar_git_snapshot_untracked("%s: %s", why, detail)
                                                  : ar_git_snapshot_untracked("%s", why);
    if (!s)
        finish_oom(j, "git snapshot");
    else
        finish(j, s, 0, NULL);
}

/* Why a git child did not succeed, or NULL when it did. */
static const char *failure(const struct ar_child_result *res)
{
    switch (res->end) {
    case AR_CHILD_EXITED:
    case AR_CHILD_FINAL_GRACE:
        return res->status == 0 ? NULL : "";
    case AR_CHILD_TIMEOUT:
    case AR_CHILD_IDLE:
        return "git timed out";
    case AR_CHILD_TOOBIG:
        return "git output too large";
    case AR_CHILD_CANCELLED:
        return "git was cancelled";
    }
    return "";
}

static int spawn_git(struct snap_job *j, const char *const *args, const char *cwd,
                     ar_child_done_fn *on_done, struct ar_error *err)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.args = args;
    cmd.cwd = cwd;
    cmd.timeout_ms = GIT_TIMEOUT_MS;
    cmd.output_cap = GIT_OUTPUT_CAP;
    /* After Ctrl-C the run still reports the files its CLI already changed. */
    cmd.flags = AR_GIT_AFTER_CANCEL;
    return ar_git_start(j->loop, &cmd, on_done, j, err);
}

/*
 * The commit diff is best effort: when it fails (the old commit was pruned),
 * the snapshot still stands, and only changes that commits hid are missed.
 */
static void on_commits(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct snap_job *j = arg;
    struct ar_git_snapshot *snap = j->snap;
    j->snap = NULL;
    if (!failure(res) && res->stdout_data) {
        struct ar_error e = AR_ERROR_INIT;
        if (ar_git_snapshot_parse_commits(snap, res->stdout_data, res->stdout_len, &e) ==
            AR_ENOMEM) {
            ar_git_snapshot_destroy(snap);
            finish(j, NULL, AR_ENOMEM, &e);
            return;
        }
    }
    finish(j, snap, 0, NULL);
}

static void hash_work(void *arg);
static void on_hashed(void *arg);

static void on_status(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct snap_job *j = arg;
    char line[200];
    const char *why = failure(res);
    if (why) {
        ar_git_stderr_line(res->stderr_tail, res->stderr_tail_len, line, sizeof(line));
        finish_untracked(j, *why ? why : "git status failed", line);
        return;
    }
    struct ar_error e = AR_ERROR_INIT;
    struct ar_git_snapshot *snap = NULL;
    int rc = ar_git_snapshot_parse(j->root, res->stdout_data ? res->stdout_data : "",
                                   res->stdout_data ? res->stdout_len : 0, &snap, &e);
    if (rc == AR_EIO) {
        finish_untracked(j, "unexpected git status output", e.msg);
        return;
    }
    if (!rc) {
        /* Set before queueing: the worker may start at once. */
        j->snap = snap;
        if ((rc = ar_loop_work(j->loop, hash_work, on_hashed, j)) == 0)
            return;
        j->snap = NULL;
    }
    ar_git_snapshot_destroy(snap);
    if (rc == AR_ENOMEM && !e.code)
        ar_error_set(&e, AR_ENOMEM, "git snapshot", "out of memory");
    finish(j, NULL, rc, &e);
}

/* On a pool thread: reads only the work tree, j->snap and j->prev. */
static void hash_work(void *arg)
{
    struct snap_job *j = arg;
    j->hash_rc = ar_git_snapshot_hash(j->snap, j->prev, &j->hash_err);
}

static void on_hashed(void *arg)
{
    struct snap_job *j = arg;
    struct ar_git_snapshot *snap = j->snap;
    j->snap = NULL;
    if (j->hash_rc) {
        struct ar_error e = j->hash_err;
        ar_git_snapshot_destroy(snap);
        finish(j, NULL, j->hash_rc, &e);
        return;
    }
    struct ar_error e = AR_ERROR_INIT;
    const struct ar_git_snapshot *prev = j->prev;
    if (!prev || !prev->tracked || !snap->head[0] || strcmp(prev->head, snap->head) == 0) {
        finish(j, snap, 0, NULL);
        return;
    }
    /* HEAD moved during the run: what the commits changed is part of the run's work. */
    const char *old = prev->head[0]              ? prev->head
                      : strlen(snap->head) == 40 ? EMPTY_TREE_SHA1
                                                 : EMPTY_TREE_SHA256;
    /* The runner adds --no-color --no-ext-diff --no-textconv --text to every diff. */
    const char *args[] = { "diff", "--name-status", "-z", "-M", old, snap->head, "--", NULL };
    j->snap = snap;
    if (spawn_git(j, args, j->root, on_commits, &e)) {
        if (e.code == AR_ENOMEM) {
            finish(j, NULL, AR_ENOMEM, &e);
            return;
        }
        snap = j->snap;
        j->snap = NULL;
        finish(j, snap, 0, NULL);
    }
}

/*
 * The top of the work tree found without a git process (one snapshot, one
 * git), or NULL when git itself must say: GIT_DIR or GIT_WORK_TREE point
 * elsewhere, no .git above cwd, or cwd inside a .git directory (where git
 * sees no work tree at all).
 */
static char *known_root(const char *cwd)
{
    if (getenv("GIT_DIR") || getenv("GIT_WORK_TREE"))
        return NULL;
    char *path = realpath(cwd ? cwd : ".", NULL);
    char *root = path ? ar_git_find_root(path) : NULL;
    if (root) {
        size_t n = strlen(root);
        const char *rest = path + n;
        if (n > 1 && *rest == '/')
            rest++;
        else if (n == 1)
            rest = path + 1; /* the root is "/" */
        if (strncmp(rest, ".git", 4) == 0 && (rest[4] == '/' || rest[4] == '\0')) {
            free(root);
            root = NULL;
        }
    }
    free(path);
    return root;
}

static void on_toplevel(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct snap_job *j = arg;
    char line[200];
    const char *why = failure(res);
    if (why) {
        ar_git_stderr_line(res->stderr_tail, res->stderr_tail_len, line, sizeof(line));
        /* rev-parse fails with 128 outside a work tree: the common, expected case. */
        finish_untracked(j, *why ? why : "not a git work tree", line);
        return;
    }
    size_t n = res->stdout_data ? res->stdout_len : 0;
    /* The path may itself contain newlines: strip only the one git adds. */
    if (n && res->stdout_data[n - 1] == '\n')
        n--;
    if (n == 0) {
        finish_untracked(j, "not a git work tree", NULL);
        return;
    }
    if (!(j->root = malloc(n + 1))) {
        finish_oom(j, "git snapshot");
        return;
    }
    memcpy(j->root, res->stdout_data, n);
    j->root[n] = '\0';
    struct ar_error e = AR_ERROR_INIT;
    /* Status in the top directory: every path comes out relative to it. */
    if (spawn_git(j, status_args, j->root, on_status, &e)) {
        if (e.code == AR_ENOMEM)
            finish(j, NULL, AR_ENOMEM, &e);
        else
            finish_untracked(j, "cannot run git", e.msg);
    }
}

int ar_git_snapshot_start(struct ar_loop *loop, const char *cwd, const struct ar_git_snapshot *prev,
                          ar_git_snapshot_done_fn *done, void *arg, struct ar_error *err)
{
    struct snap_job *j = calloc(1, sizeof(*j));
    if (!j || (cwd && !(j->cwd = strdup(cwd)))) {
        free(j);
        return ar_error_set(err, AR_ENOMEM, "git snapshot", "out of memory");
    }
    j->loop = loop;
    j->prev = prev;
    j->done = done;
    j->arg = arg;
    int rc;
    if (prev && prev->tracked)
        j->root = strdup(prev->root); /* the same tree: its top has not moved */
    else
        j->root = known_root(cwd);
    if (j->root)
        rc = spawn_git(j, status_args, j->root, on_status, err);
    else if (prev && prev->tracked)
        rc = ar_error_set(err, AR_ENOMEM, "git snapshot", "out of memory");
    else
        rc = spawn_git(j, toplevel_args, j->cwd, on_toplevel, err);
    if (rc)
        job_free(j);
    return rc;
}

struct sync_state {
    struct ar_git_snapshot *snap;
    int rc;
    struct ar_error err;
};

static void on_sync_done(struct ar_git_snapshot *snap, int rc, const struct ar_error *err,
                         void *arg)
{
    struct sync_state *st = arg;
    st->snap = snap;
    st->rc = rc;
    if (err)
        st->err = *err;
}

int ar_git_snapshot_take(const char *cwd, const struct ar_git_snapshot *prev,
                         struct ar_git_snapshot **out, struct ar_error *err)
{
    struct ar_error e = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&e);
    if (!loop) {
        if (e.code == AR_ENOMEM)
            return ar_error_set(err, AR_ENOMEM, "git snapshot", "out of memory");
        *out = ar_git_snapshot_untracked("cannot run git: %s", e.msg);
        return *out ? 0 : ar_error_set(err, AR_ENOMEM, "git snapshot", "out of memory");
    }
    struct sync_state st = { NULL, 0, AR_ERROR_INIT };
    int rc = ar_git_snapshot_start(loop, cwd, prev, on_sync_done, &st, &e);
    if (rc == 0) {
        ar_loop_run(loop);
        rc = st.rc;
        e = st.err;
    } else if (rc != AR_ENOMEM) {
        /* git is not installed, or cannot be started here: not an error of the run. */
        const char *why = rc == AR_ENOTFOUND ? "git not found" : "cannot run git";
        st.snap = ar_git_snapshot_untracked("%s: %s", why, e.msg);
        rc = st.snap ? 0 : AR_ENOMEM;
    }
    ar_loop_destroy(loop);
    if (rc) {
        ar_git_snapshot_destroy(st.snap);
        if (err)
            *err = e;
        return rc;
    }
    *out = st.snap;
    return 0;
}
