/*
 * One run's worktree on a loop: made before the run, finished after it
 * (git/worktrees.h has the life of one, and why each step is the way it is).
 *
 * Each step is one git command through the runner; its completion callback
 * reads the answer and starts the next, or ends. An operation ends exactly
 * once, in deliver(), from the loop.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/internal.h"
#include "git/run.h"
#include "git/worktrees.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/sha256.h"

/* A checkout of a large repository on a cold cache can take minutes. */
#define SLOW_TIMEOUT_MS 600000
#define GIT_TIMEOUT_MS  120000
/* `git worktree add` and `remove` first read every worktree the repository has, and fail
 * on one that another git is making or removing that moment ("failed to read
 * .git/worktrees/j5/commondir", "Invalid path '/r/.git/worktrees/j4'", git 2.39):
 * before changing anything, so the same command again is safe. Jobs side by side meet it
 * often; it is made again after a short pause, as git/run.c decides
 * (ar_git_worktree_race()). */

struct op {
    struct ar_loop *loop;
    struct ar_git_tree *tree; /* making: owned until handed out; finishing: borrowed */
    ar_git_tree_made_fn *made;
    ar_git_tree_finished_fn *finished;
    void *arg;
    struct ar_error err; /* what went wrong (code 0: nothing) */
    /* making */
    char *spec_cwd, *spec_base, *spec_dir; /* copies of the spec */
    char *asked;                           /* the asked cwd, real path */
    char *dir;                             /* the worktree folder, real path */
    char *prefix;                          /* where asked lies below top ("" at the top) */
    char *rev;                             /* the base revision as given, with ^{commit} */
    /* finishing */
    int commit, keep;
    unsigned flags;               /* more enum ar_git_flags for the next step (the commit's) */
    int feed;                     /* the next step gets the message on its stdin */
    int tries;                    /* `worktree add` or `remove` made again after meeting another */
    void (*again)(struct op *op); /* what the retry's wait ends in */
    char *message;
    char tip[AR_GIT_HEX_SIZE];
};

static void op_free(struct op *op)
{
    if (op->made)
        ar_git_tree_destroy(op->tree);
    free(op->spec_cwd);
    free(op->spec_base);
    free(op->spec_dir);
    free(op->asked);
    free(op->dir);
    free(op->prefix);
    free(op->rev);
    free(op->message);
    free(op);
}

void ar_git_tree_destroy(struct ar_git_tree *t)
{
    if (!t)
        return;
    free(t->top);
    free(t->home);
    free(t->path);
    free(t->cwd);
    free(t->branch);
    free(t->git_dir);
    free(t->common);
    free(t);
}

/* The operation is over: its callback, then it is freed. */
static void deliver(struct op *op)
{
    const struct ar_error *err = op->err.code ? &op->err : NULL;
    if (op->made) {
        struct ar_git_tree *t = err ? NULL : op->tree;
        if (t)
            op->tree = NULL;
        op->made(t, err, op->arg);
    } else {
        /* What the record will say are facts at this moment: a worktree whose folder is gone
         * is not kept, whoever took it away. */
        if (!op->tree->removed && !ar_is_dir(op->tree->path))
            op->tree->removed = 1;
        op->finished(op->tree, err, op->arg);
    }
    op_free(op);
}

static int fail(struct op *op, int code, const char *fmt, ...) AR_PRINTF(3, 4);
static int fail(struct op *op, int code, const char *fmt, ...)
{
    if (op->err.code)
        return op->err.code;
    va_list ap;
    va_start(ap, fmt);
    char msg[sizeof(op->err.msg)];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ar_error_set(&op->err, code, "git", "%s", msg);
}

/* Whether git succeeded; if not, its first stderr line (or how it ended) into buf. */
static int succeeded(const struct ar_child_result *res, char *buf, size_t n)
{
    if ((res->end == AR_CHILD_EXITED || res->end == AR_CHILD_FINAL_GRACE) && res->status == 0)
        return 1;
    if (res->end == AR_CHILD_TIMEOUT || res->end == AR_CHILD_IDLE)
        snprintf(buf, n, "git timed out");
    else if (res->end == AR_CHILD_CANCELLED)
        snprintf(buf, n, "git was stopped");
    else if (!*ar_git_stderr_line(res->stderr_tail, res->stderr_tail_len, buf, n))
        snprintf(buf, n, "git exited with status %d", res->status);
    return 0;
}

/* Starts one git command of op; its answer goes to next. Returns 0, or the code of
 * op->err when git could not start (the caller delivers). */
static int step(struct op *op, const char *const *args, const char *cwd, int in_tree,
                uint64_t timeout_ms, ar_child_done_fn *next)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.args = args;
    cmd.cwd = cwd;
    if (in_tree) {
        cmd.git_dir = op->tree->git_dir;
        cmd.work_tree = op->tree->path;
    }
    cmd.timeout_ms = timeout_ms;
    cmd.flags = AR_GIT_NO_HOOKS | AR_GIT_FINISH_ON_CANCEL | op->flags;
    if (op->feed) {
        cmd.stdin_data = op->message;
        cmd.stdin_len = strlen(op->message);
    }
    struct ar_error err = AR_ERROR_INIT;
    if (ar_git_start(op->loop, &cmd, next, op, &err) == 0)
        return 0;
    if (!op->err.code)
        op->err = err;
    return err.code;
}

/* ---- making ------------------------------------------------------------------------ */

/* Removes the worktree's emptied folders up to the worktree folder (kept). */
static void tidy(const struct ar_git_tree *t)
{
    char *dir = strdup(t->home);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash) {
        *slash = '\0';
        ar_git_remove_empty_parents(t->path, dir);
    }
    free(dir);
}

static void on_race_wait(void *arg, int cancelled)
{
    struct op *op = arg;
    (void)cancelled; /* the worktree must be finished all the same: go on at once */
    op->again(op);
}

/* Makes the same command again after a short pause that differs between jobs, when git
 * met another git's worktree (git/run.c decides when, and how long to wait). Returns 1
 * when it will, 0 when it was no race, the tries are spent or the wait cannot be made. */
static int retry(struct op *op, const struct ar_child_result *res, void (*again)(struct op *op))
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.common_dir = op->tree->common;
    uint64_t ms;
    if (!ar_git_worktree_race(&cmd, res, op->tries, (uintptr_t)op, &ms))
        return 0;
    op->tries++;
    op->again = again;
    return ar_wait_start(op->loop, ms, on_race_wait, op, NULL) == 0;
}

static void on_undone(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void on_added(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void add(struct op *op);
static void remove_fresh(struct op *op);
static void on_added_removed(struct ar_child *c, const struct ar_child_result *res, void *arg);

/* Making failed after the branch was made: the branch goes again (only at base, so a
 * branch of the same name made meanwhile is left alone), then the error is delivered. */
static void undo(struct op *op)
{
    struct ar_git_tree *t = op->tree;
    char ref[1024];
    snprintf(ref, sizeof(ref), "refs/heads/%s", t->branch);
    const char *args[] = { "update-ref", "-d", ref, t->base, NULL };
    if (step(op, args, t->top, 0, GIT_TIMEOUT_MS, on_undone) != 0)
        deliver(op);
}

static void on_undone(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    (void)c;
    (void)res;
    if (op->tree->home && op->tree->path)
        tidy(op->tree);
    deliver(op);
}

static void on_branch(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    char why[200];
    (void)c;
    if (!succeeded(res, why, sizeof(why))) {
        if (strstr(why, "exists"))
            fail(op, AR_EUSAGE, "cannot make branch '%s': it exists already", t->branch);
        else
            fail(op, AR_EIO, "cannot make branch '%s': %s", t->branch, why);
        deliver(op);
        return;
    }
    add(op);
}

static void add(struct op *op)
{
    struct ar_git_tree *t = op->tree;
    /* Locked from the start, with a reason naming us: `worktree prune` (git's or ours) leaves a
     * worktree a run is using alone until ar_git_tree_finish() unlocks it. */
    char reason[AR_GIT_LOCK_REASON_SIZE];
    ar_git_tree_lock_reason(reason);
    const char *args[] = { "worktree", "add", "--quiet", "--lock",  "--reason",
                           reason,     "--",  t->path,   t->branch, NULL };
    if (step(op, args, t->top, 0, SLOW_TIMEOUT_MS, on_added) != 0)
        undo(op);
}

/* The worktree's own git dir, from the `.git` file `worktree add` just wrote. */
static char *read_git_dir(const char *path)
{
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    char *file = NULL, *dir = NULL;
    ar_buf_init(&b, 8192);
    if (asprintf(&file, "%s/.git", path) >= 0 && ar_file_read(file, &b, &err) == 0 && b.len > 8 &&
        memcmp(b.data, "gitdir: ", 8) == 0) {
        size_t n = b.len - 8;
        while (n && (b.data[8 + n - 1] == '\n' || b.data[8 + n - 1] == '\r'))
            n--;
        dir = strndup(b.data + 8, n);
    }
    free(file);
    ar_buf_finish(&b);
    return dir;
}

static void on_added(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    char why[200];
    (void)c;
    if (!succeeded(res, why, sizeof(why))) {
        if (retry(op, res, add))
            return;
        fail(op, AR_EIO, "cannot make the worktree '%s': %s", t->path, why);
        undo(op);
        return;
    }
    t->git_dir = read_git_dir(t->path);
    if (!t->git_dir ||
        asprintf(&t->cwd, "%s%s%s", t->path, *op->prefix ? "/" : "", op->prefix) < 0) {
        t->cwd = NULL;
        fail(op, AR_ENOMEM, "out of memory");
    } else if (!ar_is_dir(t->cwd)) {
        /* The asked directory holds nothing committed at base (only untracked files). */
        fail(op, AR_EUSAGE,
             "'%s' does not exist at %.12s, so the run has nowhere to go in its worktree",
             op->prefix, t->base);
    }
    if (!op->err.code) {
        deliver(op);
        return;
    }
    remove_fresh(op);
}

/* A fresh worktree holds nothing of the run's: it goes, then the branch (a locked worktree
 * takes --force twice). */
static void remove_fresh(struct op *op)
{
    const char *args[] = { "worktree", "remove", "--force", "--force", "--", op->tree->path, NULL };
    if (step(op, args, op->tree->top, 0, SLOW_TIMEOUT_MS, on_added_removed) != 0)
        undo(op);
}

static void on_added_removed(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    char why[200];
    (void)c;
    if (!succeeded(res, why, sizeof(why)) && retry(arg, res, remove_fresh))
        return;
    undo(arg);
}

/* <dir>/<repo>: the top folder's name (as a safe component) and a hash of the git dir,
 * so two clones named alike keep apart. */
static char *repo_home(const char *dir, const char *top, const char *common)
{
    const char *base = strrchr(top, '/');
    char name[AR_GIT_COMPONENT_SIZE], hex[AR_SHA256_HEX], *out = NULL;
    ar_git_ref_component(base && base[1] ? base + 1 : "repo", name);
    ar_sha256_hex_of(common, strlen(common), hex);
    if (asprintf(&out, "%s/%.30s-%.8s", dir, name, hex) < 0)
        return NULL;
    return out;
}

static void on_revparse(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    char why[200];
    (void)c;
    size_t off = 0;
    char *common = NULL, *top = NULL, *oid = NULL;
    if (res->stdout_data) {
        common = ar_git_next_line(res->stdout_data, res->stdout_len, &off);
        top = ar_git_next_line(res->stdout_data, res->stdout_len, &off);
        oid = ar_git_next_line(res->stdout_data, res->stdout_len, &off);
    }
    int more = res->stdout_data && off < res->stdout_len; /* a range gives a second line */
    int ok = succeeded(res, why, sizeof(why));
    if (!ok && res->end == AR_CHILD_EXITED && res->status == 1 && top)
        /* --verify: the repository is there, the revision is not one commit. */
        fail(op, AR_EUSAGE, "the base '%s' does not name a commit",
             op->spec_base ? op->spec_base : "HEAD");
    else if (!ok && res->end == AR_CHILD_EXITED && res->status == 128)
        fail(op, AR_EUSAGE,
             "'%s' is not in a git work tree, so a run cannot have a worktree "
             "of its own: %s",
             op->asked, why);
    else if (!ok)
        fail(op, AR_EIO, "git rev-parse failed in '%s': %s", op->asked, why);
    else if (!common || !top || !oid || !ar_git_is_oid(oid) || top[0] != '/' || more)
        fail(op, AR_EIO, "git rev-parse said what agentrun cannot read in '%s'", op->asked);
    if (op->err.code)
        goto out;
    snprintf(t->base, sizeof(t->base), "%s", oid);
    t->common = common;
    common = NULL;
    char *real_top = realpath(top, NULL);
    if (!real_top) {
        fail(op, AR_EIO, "cannot resolve '%s': %s", top, strerror(errno));
        goto out;
    }
    t->top = real_top;
    op->prefix = strdup(ar_git_path_within(op->asked, real_top) && op->asked[strlen(real_top)]
                            ? op->asked + strlen(real_top) + (strcmp(real_top, "/") != 0)
                            : "");
    if (ar_git_path_within(op->dir, real_top)) {
        fail(op, AR_EUSAGE,
             "the worktree folder '%s' lies inside the work tree '%s', where "
             "its status would show every worktree; set AGENTRUN_WORKTREE_DIR elsewhere",
             op->dir, real_top);
        goto out;
    }
    if (!op->prefix || !(t->home = repo_home(op->dir, real_top, t->common)) ||
        asprintf(&t->path, "%s/%s", t->home, t->branch) < 0) {
        t->path = NULL;
        fail(op, AR_ENOMEM, "out of memory");
        goto out;
    }
    /*
     * The worktree's own folder is made here, empty (git takes an empty one): from now
     * on its parents are not empty, so a job that finishes meanwhile and tidies its own
     * emptied folders (tidy()) cannot take them away under `git worktree add`. An
     * existing one is never reused.
     */
    char *parent = strdup(t->path);
    char *slash = parent ? strrchr(parent, '/') : NULL;
    if (slash)
        *slash = '\0';
    int made = -1;
    /* Another agentrun may remove an emptied parent between two mkdir()s: again, then. */
    for (int tries = 0; parent && made != 0 && tries < 5; tries++) {
        made = ar_git_make_dirs(parent) == 0 ? mkdir(t->path, 0700) : -1;
        if (made != 0 && errno != ENOENT)
            break;
    }
    if (!parent)
        fail(op, AR_ENOMEM, "out of memory");
    else if (made != 0)
        fail(op, errno == EEXIST ? AR_EUSAGE : AR_EIO, "cannot make '%s': %s", t->path,
             errno == EEXIST ? "it exists already" : strerror(errno));
    free(parent);
    if (op->err.code)
        goto out;
    char ref[1024];
    snprintf(ref, sizeof(ref), "refs/heads/%s", t->branch);
    /* "" as the old value: made only if no such branch exists. */
    const char *args[] = { "update-ref", "-m", "agentrun: a worktree's branch", ref, t->base,
                           "",           NULL };
    step(op, args, t->top, 0, GIT_TIMEOUT_MS, on_branch);
out:
    free(common);
    free(top);
    free(oid);
    if (op->err.code)
        deliver(op);
}

static void make_begin(void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    const char *base = op->spec_base ? op->spec_base : "HEAD";
    char *dir = op->spec_dir ? strdup(op->spec_dir) : ar_git_tree_default_dir();
    if (asprintf(&op->rev, "%s^{commit}", base) < 0) {
        op->rev = NULL;
        fail(op, AR_ENOMEM, "out of memory");
    } else if (!ar_git_branch_name_ok(t->branch)) {
        fail(op, AR_EUSAGE, "'%s' is not a valid branch name", t->branch);
    } else if (!(op->asked = realpath(op->spec_cwd ? op->spec_cwd : ".", NULL))) {
        fail(op, AR_EUSAGE, "cannot use '%s': %s", op->spec_cwd ? op->spec_cwd : ".",
             strerror(errno));
    } else if (strchr(op->asked, '\n')) {
        fail(op, AR_EUSAGE, "'%s' has a newline in its path", op->asked);
    } else if (!dir) {
        fail(op, AR_EUSAGE,
             "no folder for worktrees: set AGENTRUN_WORKTREE_DIR, XDG_STATE_HOME or HOME");
    } else if (ar_git_make_dirs(dir) != 0 || !(op->dir = realpath(dir, NULL))) {
        fail(op, AR_EIO, "cannot make the worktree folder '%s': %s", dir, strerror(errno));
    } else {
        const char *args[] = { "rev-parse",
                               "--path-format=absolute",
                               "--git-common-dir",
                               "--show-toplevel",
                               "--verify",
                               "--quiet",
                               "--end-of-options",
                               op->rev,
                               NULL };
        step(op, args, op->asked, 0, GIT_TIMEOUT_MS, on_revparse);
    }
    free(dir);
    if (op->err.code)
        deliver(op);
}

int ar_git_tree_make(struct ar_loop *loop, const struct ar_git_tree_spec *spec,
                     ar_git_tree_made_fn *done, void *arg, struct ar_error *err)
{
    struct op *op = calloc(1, sizeof(*op));
    struct ar_git_tree *t = calloc(1, sizeof(*t));
    if (op && t) {
        op->loop = loop;
        op->tree = t;
        op->made = done;
        op->arg = arg;
        t = NULL;
        if ((op->tree->branch = strdup(spec->branch)) &&
            (!spec->cwd || (op->spec_cwd = strdup(spec->cwd))) &&
            (!spec->base || (op->spec_base = strdup(spec->base))) &&
            (!spec->dir || (op->spec_dir = strdup(spec->dir))) &&
            ar_loop_defer(loop, make_begin, op) == 0)
            return 0;
    }
    if (op)
        op_free(op);
    free(t);
    return ar_error_set(err, AR_ENOMEM, "git", "out of memory");
}

/* ---- finishing ----------------------------------------------------------------------- */

static void on_staged(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void on_diffed(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void on_committed(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void on_tip(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void on_removed(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void on_unlocked(struct ar_child *c, const struct ar_child_result *res, void *arg);
static void unlock_tree(struct op *op);
static void remove_tree(struct op *op);
static void on_branch_deleted(struct ar_child *c, const struct ar_child_result *res, void *arg);

/* The tip of the branch: what the run leaves on it. */
static void read_tip(struct op *op)
{
    char ref[1024];
    snprintf(ref, sizeof(ref), "refs/heads/%s", op->tree->branch);
    const char *args[] = { "rev-parse", "--verify", "--quiet", ref, NULL };
    if (step(op, args, op->tree->top, 0, GIT_TIMEOUT_MS, on_tip) != 0)
        deliver(op);
}

/*
 * Whether the worktree's HEAD is still its branch, read from its git dir: the
 * commit goes on that branch or nowhere (a CLI that switched the worktree to
 * another branch gets nothing committed on that one).
 */
static int on_its_branch(const struct ar_git_tree *t)
{
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    char *file = NULL, *want = NULL;
    ar_buf_init(&b, 4096);
    int yes = asprintf(&file, "%s/HEAD", t->git_dir) >= 0 &&
              asprintf(&want, "ref: refs/heads/%s\n", t->branch) >= 0 &&
              ar_file_read(file, &b, &err) == 0 && b.len == strlen(want) &&
              memcmp(b.data, want, b.len) == 0;
    free(file);
    free(want);
    ar_buf_finish(&b);
    return yes;
}

static void on_staged(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    char why[200];
    (void)c;
    if (!succeeded(res, why, sizeof(why))) {
        fail(op, AR_EIO, "cannot stage the changes in '%s': %s", op->tree->path, why);
        read_tip(op);
        return;
    }
    const char *args[] = { "diff", "--cached", "--quiet", NULL };
    if (step(op, args, op->tree->path, 1, GIT_TIMEOUT_MS, on_diffed) != 0)
        deliver(op);
}

static void commit(struct op *op)
{
    /* No gc or maintenance after the commit: many worktrees commit at once, and that
     * is the user's own git's business later. */
    static const char *const head[] = { "-c", "gc.auto=0", "-c", "maintenance.auto=false" };
    static const char *const tail[] = { "commit", "--no-verify", "--no-gpg-sign", "--quiet", "-F",
                                        "-",      NULL };
    const char *args[16];
    size_t n = 0;
    for (size_t i = 0; i < 4; i++)
        args[n++] = head[i];
    for (size_t i = 0; i < 7; i++)
        args[n++] = tail[i];
    /* Where git knows no identity for the user (a fresh CI machine), as agentrun. */
    op->feed = 1;
    op->flags = AR_GIT_FALLBACK_IDENTITY;
    int rc = step(op, args, op->tree->path, 1, GIT_TIMEOUT_MS, on_committed);
    op->feed = 0;
    op->flags = 0;
    if (rc != 0)
        deliver(op);
}

static void on_diffed(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    (void)c;
    /* 1: something is staged; 0: nothing to commit (the run's own commits stand). */
    if (res->end == AR_CHILD_EXITED && res->status == 1)
        commit(op);
    else
        read_tip(op);
}

static void on_committed(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    char why[200];
    (void)c;
    if (!succeeded(res, why, sizeof(why)))
        fail(op, AR_EIO, "cannot commit on '%s': %s", op->tree->branch, why);
    read_tip(op);
}

static void on_tip(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    char why[200];
    (void)c;
    int ok = succeeded(res, why, sizeof(why));
    if (!ok && res->end == AR_CHILD_EXITED && res->status == 1) {
        /* `rev-parse --verify --quiet` found no such branch: someone deleted it. The record
         * then names none. */
        t->branch_deleted = 1;
    } else if (ok && res->stdout_data) {
        size_t off = 0;
        char *tip = ar_git_next_line(res->stdout_data, res->stdout_len, &off);
        if (tip && ar_git_is_oid(tip))
            snprintf(op->tip, sizeof(op->tip), "%s", tip);
        free(tip);
    }
    if (*op->tip && strcmp(op->tip, t->base) != 0)
        snprintf(t->commit, sizeof(t->commit), "%s", op->tip);
    unlock_tree(op);
}

/* The run is over: the lock goes, whether the worktree goes or stays (a kept one is the
 * user's to look at and prune). */
static void unlock_tree(struct op *op)
{
    const char *args[] = { "worktree", "unlock", "--", op->tree->path, NULL };
    if (step(op, args, op->tree->top, 0, GIT_TIMEOUT_MS, on_unlocked) != 0)
        deliver(op);
}

static void on_unlocked(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    char why[200];
    (void)c;
    /* Not locked any more (someone took the lock off) is no reason to keep the worktree;
     * meeting another git's worktree being made is one to try again. */
    if (!succeeded(res, why, sizeof(why)) && retry(op, res, unlock_tree))
        return;
    if (op->keep) {
        snprintf(t->kept_why, sizeof(t->kept_why), "kept as asked");
        deliver(op);
        return;
    }
    remove_tree(op);
}

static void remove_tree(struct op *op)
{
    /* No --force: git keeps a worktree that holds anything uncommitted. */
    const char *args[] = { "worktree", "remove", "--", op->tree->path, NULL };
    if (step(op, args, op->tree->top, 0, SLOW_TIMEOUT_MS, on_removed) != 0)
        deliver(op);
}

static void on_removed(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    (void)c;
    if (!succeeded(res, t->kept_why, sizeof(t->kept_why))) {
        if (retry(op, res, remove_tree))
            return;
        if (strstr(t->kept_why, "modified or untracked"))
            snprintf(t->kept_why, sizeof(t->kept_why), "%s", AR_GIT_TREE_UNCOMMITTED);
        deliver(op);
        return;
    }
    t->removed = 1;
    tidy(t);
    /* Nothing on the branch: it goes too (only at base: never a commit made meanwhile). */
    if (strcmp(op->tip, t->base) != 0) {
        deliver(op);
        return;
    }
    char ref[1024];
    snprintf(ref, sizeof(ref), "refs/heads/%s", t->branch);
    const char *args[] = { "update-ref", "-d", ref, t->base, NULL };
    if (step(op, args, t->top, 0, GIT_TIMEOUT_MS, on_branch_deleted) != 0)
        deliver(op);
}

static void on_branch_deleted(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct op *op = arg;
    char why[200];
    (void)c;
    op->tree->branch_deleted = succeeded(res, why, sizeof(why));
    deliver(op);
}

static void finish_begin(void *arg)
{
    struct op *op = arg;
    struct ar_git_tree *t = op->tree;
    /* A worktree the run deleted holds nothing to commit; its registration still goes. */
    if (!op->commit || !ar_is_dir(t->path)) {
        read_tip(op);
    } else if (!on_its_branch(t)) {
        fail(op, AR_EIO, "nothing committed: the worktree '%s' is no longer on its branch '%s'",
             t->path, t->branch);
        read_tip(op);
    } else {
        const char *args[] = { "add", "-A", NULL };
        if (step(op, args, t->path, 1, SLOW_TIMEOUT_MS, on_staged) != 0)
            deliver(op);
    }
}

int ar_git_tree_finish(struct ar_loop *loop, struct ar_git_tree *tree,
                       const struct ar_git_tree_end *end, ar_git_tree_finished_fn *done, void *arg,
                       struct ar_error *err)
{
    struct op *op = calloc(1, sizeof(*op));
    if (!op || (end->message && !(op->message = strdup(end->message)))) {
        free(op);
        return ar_error_set(err, AR_ENOMEM, "git", "out of memory");
    }
    op->loop = loop;
    op->tree = tree;
    op->finished = done;
    op->arg = arg;
    op->commit = end->commit && end->message;
    op->keep = end->keep;
    tree->commit[0] = tree->kept_why[0] = '\0';
    tree->removed = tree->branch_deleted = 0;
    if (ar_loop_defer(loop, finish_begin, op) < 0) {
        op_free(op);
        return ar_error_set(err, AR_ENOMEM, "git", "out of memory");
    }
    return 0;
}
