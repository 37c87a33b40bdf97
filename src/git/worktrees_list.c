/*
 * What agentrun left in a repository, and taking it away (`agentrun worktrees
 * list|prune`): the worktrees git has registered whose folder lies in the
 * worktree folder, and the branches agentrun made: under refs/heads/agentrun/,
 * named as ar_git_tree_branch() names them. Nothing else is listed, and nothing
 * else is touched: a worktree elsewhere is the user's even on an agentrun
 * branch, a branch of the user's named agentrun/mine is theirs, and a branch
 * some worktree has checked out is never deleted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git/internal.h"
#include "git/run.h"
#include "git/worktrees.h"
#include "util/array.h"
#include "util/strv.h"

#define GIT_TIMEOUT_MS  120000
#define SLOW_TIMEOUT_MS 600000
#define BRANCHES        "refs/heads/agentrun/"
#define HEADS           "refs/heads/"

/* Runs git in cwd to its end. Returns 0 when it ran (out to finish, *ok whether it
 * exited 0, why its first stderr line otherwise), or the spawn's error. */
static int git(const char *cwd, const char *const *args, uint64_t timeout_ms,
               struct ar_child_sync *out, int *ok, char *why, size_t n, struct ar_error *err)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.args = args;
    cmd.cwd = cwd;
    cmd.timeout_ms = timeout_ms;
    /* A worktree another git is making that moment makes `worktree list` and `remove`
     * fail before they do anything: the same again, later (git/run.c). */
    cmd.flags = AR_GIT_NO_HOOKS | AR_GIT_RETRY_WORKTREE_RACE;
    int rc = ar_git_run(&cmd, out, err);
    if (rc < 0)
        return rc;
    *ok = out->res.end == AR_CHILD_EXITED && out->res.status == 0;
    if (!*ok && !*ar_git_stderr_line(out->res.stderr_tail, out->res.stderr_tail_len, why, n))
        snprintf(why, n, "git exited with status %d", out->res.status);
    return 0;
}

static int oom(struct ar_error *err)
{
    return ar_error_set(err, AR_ENOMEM, "git", "out of memory");
}

static struct ar_worktree_entry *entry_add(struct ar_worktree_list *l)
{
    struct ar_worktree_entry *v = realloc(l->v, (l->n + 1) * sizeof(*v));
    if (!v)
        return NULL;
    l->v = v;
    memset(&v[l->n], 0, sizeof(v[l->n]));
    return &v[l->n++];
}

void ar_worktree_list_finish(struct ar_worktree_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].branch);
        free(l->v[i].path);
        free(l->v[i].locked);
    }
    free(l->v);
    free(l->top);
    free(l->dir);
    memset(l, 0, sizeof(*l));
}

/* The repository's top, found from cwd. */
static int find_top(const char *cwd, struct ar_worktree_list *l, struct ar_error *err)
{
    static const char *const args[] = { "rev-parse", "--path-format=absolute", "--show-toplevel",
                                        NULL };
    struct ar_child_sync out;
    char why[200];
    int ok = 0, rc = git(cwd, args, GIT_TIMEOUT_MS, &out, &ok, why, sizeof(why), err);
    if (rc < 0)
        return rc;
    size_t off = 0;
    char *top =
        ok && out.stdout_data ? ar_git_next_line(out.stdout_data, out.res.stdout_len, &off) : NULL;
    ar_child_sync_finish(&out);
    if (!ok || !top) {
        free(top);
        return ar_error_set(err, AR_EUSAGE, "git", "'%s' is not in a git work tree: %s",
                            cwd ? cwd : ".", ok ? "no top" : why);
    }
    l->top = realpath(top, NULL);
    free(top);
    return l->top ? 0
                  : ar_error_set(err, AR_EIO, "git", "cannot resolve the work tree: %s",
                                 strerror(errno));
}

/*
 * `git worktree list --porcelain -z`: records of NUL-ended fields ("worktree
 * PATH", "HEAD OID", "branch REF" or "detached", "prunable REASON", …), each
 * record ended by an empty field. Ours go to l; the branch of every other
 * worktree goes to busy, so that prune never deletes it.
 */
static int read_worktrees(struct ar_worktree_list *l, struct ar_strv *busy, struct ar_error *err)
{
    static const char *const args[] = { "worktree", "list", "--porcelain", "-z", NULL };
    struct ar_child_sync out;
    char why[200];
    int ok = 0, rc = git(l->top, args, GIT_TIMEOUT_MS, &out, &ok, why, sizeof(why), err);
    if (rc < 0)
        return rc;
    if (!ok) {
        ar_child_sync_finish(&out);
        return ar_error_set(err, AR_EIO, "git", "git worktree list failed: %s", why);
    }
    const char *p = out.stdout_data, *end = p + out.res.stdout_len;
    struct ar_worktree_entry cur = { 0 };
    for (; p < end; p += strlen(p) + 1) {
        if (strncmp(p, "worktree ", 9) == 0) {
            free(cur.path);
            cur.path = strdup(p + 9);
        } else if (strncmp(p, "HEAD ", 5) == 0) {
            snprintf(cur.head, sizeof(cur.head), "%s", p + 5);
        } else if (strncmp(p, "branch " HEADS, 7 + strlen(HEADS)) == 0) {
            free(cur.branch);
            cur.branch = strdup(p + 7 + strlen(HEADS));
        } else if (strncmp(p, "prunable", 8) == 0) {
            cur.missing = 1;
        } else if (strncmp(p, "locked", 6) == 0 && (p[6] == '\0' || p[6] == ' ')) {
            /* "locked REASON", or "locked" alone for a lock given no reason: "". */
            free(cur.locked);
            cur.locked = strdup(p[6] ? p + 7 : "");
        } else if (*p == '\0' && cur.path) {
            /* A record ends: a worktree in agentrun's folder is agentrun's. */
            char *real = realpath(cur.path, NULL);
            int ours =
                ar_git_path_within(real ? real : cur.path, l->dir) && strcmp(cur.path, l->top) != 0;
            free(real);
            struct ar_worktree_entry *e = ours ? entry_add(l) : NULL;
            if (ours && !e)
                rc = oom(err);
            else if (e)
                *e = cur;
            else if (cur.branch && ar_strv_push(busy, cur.branch) < 0)
                rc = oom(err);
            if (!e) {
                free(cur.path);
                free(cur.branch);
                free(cur.locked);
            }
            if (e && access(e->path, F_OK) != 0)
                e->missing = 1;
            memset(&cur, 0, sizeof(cur));
            if (rc < 0)
                break;
        }
    }
    free(cur.path);
    free(cur.branch);
    free(cur.locked);
    ar_child_sync_finish(&out);
    return rc;
}

/* The agentrun branches (merged: only those whose commits HEAD has) as lines
 * "refs/heads/… OID" (a ref name has no space), into *out (ar_child_sync_finish() it). */
static int read_branches(const char *top, int merged, struct ar_child_sync *out, int *ok,
                         struct ar_error *err)
{
    static const char *const all[] = { "for-each-ref", "--format=%(refname) %(objectname)",
                                       BRANCHES, NULL };
    static const char *const in_head[] = { "for-each-ref", "--merged=HEAD",
                                           "--format=%(refname) %(objectname)", BRANCHES, NULL };
    char why[200];
    return git(top, merged ? in_head : all, GIT_TIMEOUT_MS, out, ok, why, sizeof(why), err);
}

static struct ar_worktree_entry *find_branch(struct ar_worktree_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].branch && strcmp(l->v[i].branch, name) == 0)
            return &l->v[i];
    return NULL;
}

static int in_strv(const struct ar_strv *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return 1;
    return 0;
}

/* Adds each agentrun branch no worktree of ours holds (one that another worktree has
 * checked out, busy, is left out), and marks the ones whose commits HEAD has. */
static int add_branches(struct ar_worktree_list *l, const struct ar_strv *busy,
                        struct ar_error *err)
{
    int rc = 0;
    for (int merged = 0; merged <= 1 && rc == 0; merged++) {
        struct ar_child_sync out;
        int ok = 0;
        if ((rc = read_branches(l->top, merged, &out, &ok, err)) < 0)
            return rc;
        /* --merged=HEAD fails before the first commit: then nothing is merged. */
        size_t off = 0;
        char *line;
        while (rc == 0 && ok && out.stdout_data &&
               (line = ar_git_next_line(out.stdout_data, out.res.stdout_len, &off))) {
            char *sp = strrchr(line, ' ');
            if (sp && strncmp(line, HEADS, strlen(HEADS)) == 0) {
                *sp = '\0';
                const char *name = line + strlen(HEADS);
                struct ar_worktree_entry *e = find_branch(l, name);
                if (merged && e) {
                    e->merged = 1;
                } else if (!merged && !e && !in_strv(busy, name) && ar_git_tree_branch_ours(name)) {
                    if (!(e = entry_add(l)) || !(e->branch = strdup(name)))
                        rc = oom(err);
                    else
                        snprintf(e->head, sizeof(e->head), "%s", sp + 1);
                }
            }
            free(line);
        }
        ar_child_sync_finish(&out);
    }
    return rc;
}

static int by_path_then_branch(const void *a, const void *b)
{
    const struct ar_worktree_entry *x = a, *y = b;
    if (!x->path != !y->path)
        return x->path ? -1 : 1;
    if (x->path)
        return strcmp(x->path, y->path);
    return strcmp(x->branch, y->branch);
}

int ar_worktree_list(const char *cwd, const char *dir, struct ar_worktree_list *out,
                     struct ar_error *err)
{
    memset(out, 0, sizeof(*out));
    struct ar_strv busy = AR_STRV_INIT;
    char *d = dir ? strdup(dir) : ar_git_tree_default_dir();
    int rc = 0;
    if (!d) {
        rc = dir ? oom(err)
                 : ar_error_set(err, AR_EUSAGE, "git",
                                "no folder for worktrees: set AGENTRUN_WORKTREE_DIR, "
                                "XDG_STATE_HOME or HOME");
    } else {
        /* A folder that does not exist yet holds no worktree: its name still does. */
        out->dir = realpath(d, NULL);
        if (!out->dir && !(out->dir = strdup(d)))
            rc = oom(err);
    }
    free(d);
    if (rc == 0)
        rc = find_top(cwd, out, err);
    if (rc == 0)
        rc = read_worktrees(out, &busy, err);
    if (rc == 0)
        rc = add_branches(out, &busy, err);
    ar_strv_finish(&busy);
    if (rc < 0) {
        ar_worktree_list_finish(out);
        return rc;
    }
    ar_sort(out->v, out->n, sizeof(*out->v), by_path_then_branch);
    return 0;
}

/* Deletes refs/heads/<branch> at head (only at that value). Returns 1 when it is gone. */
static int delete_branch(const char *top, const char *branch, const char *head, char *why, size_t n,
                         struct ar_error *err)
{
    char ref[1024];
    snprintf(ref, sizeof(ref), HEADS "%s", branch);
    const char *args[] = { "update-ref", "-d", ref, head, NULL };
    struct ar_child_sync out;
    int ok = 0;
    if (git(top, args, GIT_TIMEOUT_MS, &out, &ok, why, n, err) < 0)
        return 0;
    ar_child_sync_finish(&out);
    return ok;
}

int ar_worktree_prune(const struct ar_worktree_list *l, unsigned flags, ar_worktree_prune_fn *fn,
                      void *arg, struct ar_error *err)
{
    struct ar_error local = AR_ERROR_INIT;
    if (!err)
        err = &local;
    for (size_t i = 0; i < l->n; i++) {
        const struct ar_worktree_entry *e = &l->v[i];
        char why[200] = "";
        int gone = 1, branch_gone = 0;
        /* A locked worktree is in use (a run of a live agentrun works in it) or the user's
         * to keep: it stays, and so does its branch, whatever the flags say. A lock whose
         * agentrun is gone (killed) protects nothing: it is taken off. */
        int live = e->path && e->locked ? ar_git_tree_lock_live(e->locked) : 0;
        if (live == 1 || live == -1) {
            if (live == 1)
                snprintf(why, sizeof(why), "in use: %s", e->locked);
            else
                snprintf(why, sizeof(why), "locked%s%s ('git worktree unlock' lifts it)",
                         *e->locked ? ": " : "", e->locked);
            fn(arg, e, AR_WORKTREE_PRUNE_KEPT, 0, why);
            continue;
        }
        struct ar_error unlock_err = AR_ERROR_INIT;
        if (e->path && e->locked && ar_git_tree_unlock(l->top, e->path, &unlock_err) < 0 &&
            unlock_err.code != AR_EIO) {
            *err = unlock_err;
            return err->code;
        }
        if (e->path) {
            /* A worktree whose folder is gone needs no --force; one that holds
             * uncommitted work gets it only when asked. */
            const char *force = (flags & AR_WORKTREE_PRUNE_FORCE) && !e->missing ? "--force" : NULL;
            const char *args[] = { "worktree",
                                   "remove",
                                   force ? force : "--",
                                   force ? "--" : e->path,
                                   force ? e->path : NULL,
                                   NULL };
            struct ar_child_sync out;
            if (git(l->top, args, SLOW_TIMEOUT_MS, &out, &gone, why, sizeof(why), err) < 0)
                return err->code;
            ar_child_sync_finish(&out);
            if (gone)
                ar_git_remove_empty_parents(e->path, l->dir);
            else if (strstr(why, "modified or untracked"))
                snprintf(why, sizeof(why), "%s (--force removes it)", AR_GIT_TREE_UNCOMMITTED);
        }
        /* A branch goes with its worktree, or alone: when HEAD has its commits already,
         * or when asked. Only agentrun's, at the commit listed. */
        int wanted = e->merged || (flags & AR_WORKTREE_PRUNE_BRANCHES);
        if (gone && e->branch && wanted && ar_git_tree_branch_ours(e->branch) &&
            ar_git_is_oid(e->head)) {
            char bwhy[200] = "";
            branch_gone = delete_branch(l->top, e->branch, e->head, bwhy, sizeof(bwhy), err);
            if (!branch_gone && err->code == AR_ENOMEM)
                return err->code;
            if (!branch_gone)
                snprintf(why, sizeof(why), "%s", bwhy);
        } else if (gone && e->branch && !e->path) {
            snprintf(why, sizeof(why), "its commits are not in HEAD (--branches deletes it)");
        }
        fn(arg, e,
           gone && (e->path || branch_gone) ? AR_WORKTREE_PRUNE_REMOVED : AR_WORKTREE_PRUNE_KEPT,
           branch_gone, why);
    }
    return 0;
}
