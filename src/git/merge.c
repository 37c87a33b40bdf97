/*
 * Merging a batch's branches back into one integration branch
 * (agentrun/merge.h, `agentrun worktrees merge`, docs/worktrees.md).
 *
 * Nothing here checks out, stages or resets anything in a checkout of the
 * user's, and no branch but the integration branch moves:
 *
 *   1. The branches: those named, or agentrun/<session>/… of a session (the
 *      latest by default). Each one's base is what its branch was made at,
 *      the oldest entry of its reflog (worktrees.c makes every branch with
 *      `update-ref -m`), else its tip's first parent; the batch's base is the
 *      merge base of those. The integration branch starts there when it does
 *      not exist, at its tip when it does.
 *   2. A branch whose tip the start has already is `empty`. Every pair of the
 *      others is merged in trial (`git merge-tree --write-tree`, which writes
 *      trees and blobs to the object store and nothing else): a pair that
 *      conflicts is an edge of the conflict graph.
 *   3. The order: greedy by (conflicts in the graph, name), a branch is taken
 *      into the first group when it conflicts with none taken before it; then
 *      the rest by name. The same branches at the same commits give the same
 *      order, and the first group, an independent set of the graph, is
 *      maximal: each branch it leaves out conflicts with one it has.
 *   4. In that order each branch is merged, in trial, into what is merged so
 *      far: a conflict leaves it out (with the paths, and the merged branches
 *      it conflicts with in the graph); a clean result becomes a commit
 *      (`git commit-tree`, parents: the merge so far and the branch), and with
 *      a check, the check runs on a checkout of that commit in a scratch
 *      worktree (`git worktree add --detach --lock`, removed with `--force
 *      --force` right after); a check that fails leaves the branch out.
 *   5. The integration branch moves once, at the end: `git update-ref` from
 *      the value read in 1 ("" when it is made), so a branch that moved
 *      meanwhile is not overwritten, and an interrupted merge leaves no
 *      half-made branch.
 *
 * A cancel (o->cancel non-zero, from a signal handler) is looked at between
 * git commands and every 100 ms while a check runs: the check's process
 * group is ended, its worktree removed, and nothing is updated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentrun/merge.h"
#include "git/internal.h"
#include "git/run.h"
#include "git/worktrees.h"
#include "proc/proc.h"
#include "util/array.h"
#include "util/strv.h"

#define GIT_TIMEOUT_MS       120000
#define SLOW_TIMEOUT_MS      600000
#define CHECK_TIMEOUT_MS     600000
#define CHECK_POLL_MS        100
#define CHECK_KILL_GRACE_MS  2000
#define CHECK_TAIL_BYTES     2000
#define PAIRWISE_MAX         64
#define HEADS                "refs/heads/"
#define SESSION_LEN          20 /* "20261125-143001-3fa2" */
#define MERGE_TREE_MIN_MAJOR 2
#define MERGE_TREE_MIN_MINOR 38

struct cand {
    struct ar_worktree_merge_branch *b; /* its row of the result */
    char base[AR_GIT_HEX_SIZE];
    int degree;
    int picked;
};

struct merge {
    const struct ar_worktree_merge_options *o;
    struct ar_worktree_merge_result *r;
    struct ar_error *err;
    char *dir;                   /* the scratch worktrees' folder */
    char start[AR_GIT_HEX_SIZE]; /* the integration branch's tip before, or base */
    char old[AR_GIT_HEX_SIZE];   /* its value read in 1, "" when it does not exist */
    struct cand *c;              /* r->v's rows, in the order found */
    unsigned char *edge;         /* n * n: the pair conflicts */
    size_t n;
};

static int oom(struct ar_error *err)
{
    return ar_error_set(err, AR_ENOMEM, "git", "out of memory");
}

static int cancelled(const struct merge *m)
{
    return m->o->cancel && *m->o->cancel;
}

/* Runs git in the repository to its end. Returns 0 when it ran (*out to finish; *status
 * its exit status, or -1 when it did not exit on its own; why its first stderr line), or
 * the spawn's error. */
static int git_as(const char *cwd, const char *const *args, const void *in, size_t in_len,
                  unsigned flags, struct ar_child_sync *out, int *status, char *why, size_t n,
                  struct ar_error *err)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.args = args;
    cmd.cwd = cwd;
    cmd.stdin_data = in;
    cmd.stdin_len = in_len;
    cmd.timeout_ms = SLOW_TIMEOUT_MS;
    /* `worktree list/add/remove` meet the worktrees a batch's jobs make beside it. */
    cmd.flags = AR_GIT_NO_HOOKS | AR_GIT_RETRY_WORKTREE_RACE | flags;
    int rc = ar_git_run(&cmd, out, err);
    if (rc < 0)
        return rc;
    *status = out->res.end == AR_CHILD_EXITED ? out->res.status : -1;
    if (*status != 0 &&
        !*ar_git_stderr_line(out->res.stderr_tail, out->res.stderr_tail_len, why, n))
        snprintf(why, n, "git exited with status %d", out->res.status);
    return 0;
}

static int git(const char *cwd, const char *const *args, const void *in, size_t in_len,
               struct ar_child_sync *out, int *status, char *why, size_t n, struct ar_error *err)
{
    return git_as(cwd, args, in, in_len, 0, out, status, why, n, err);
}

/* git args in top; on success the first line of its output into line (size n). Returns 0,
 * AR_EIO with err naming what (exit status other than 0), or the spawn's error. */
static int git_line(const char *top, const char *const *args, const char *what, char *line,
                    size_t n, struct ar_error *err)
{
    struct ar_child_sync out;
    char why[200];
    int status, rc = git(top, args, NULL, 0, &out, &status, why, sizeof(why), err);
    if (rc < 0)
        return rc;
    if (status != 0) {
        ar_child_sync_finish(&out);
        return ar_error_set(err, AR_EIO, "git", "%s failed: %s", what, why);
    }
    size_t off = 0;
    char *l = out.stdout_data ? ar_git_next_line(out.stdout_data, out.res.stdout_len, &off) : NULL;
    snprintf(line, n, "%s", l ? l : "");
    free(l);
    ar_child_sync_finish(&out);
    return 0;
}

/* ---- the result -------------------------------------------------------------------- */

const char *ar_worktree_merge_outcome_name(enum ar_worktree_merge_outcome o)
{
    static const char *const names[] = { "merged", "conflict", "check_failed", "empty" };
    return (unsigned)o < sizeof(names) / sizeof(names[0]) ? names[o] : "unknown";
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void ar_worktree_merge_result_finish(struct ar_worktree_merge_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].branch);
        free_strs(r->v[i].with, r->v[i].n_with);
        free_strs(r->v[i].paths, r->v[i].n_paths);
        free(r->v[i].check_tail);
    }
    free(r->v);
    free(r->top);
    free(r->session);
    free(r->into);
    memset(r, 0, sizeof(*r));
}

static int push_str(char ***v, size_t *n, const char *s, size_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen((*v)[i]) == len && memcmp((*v)[i], s, len) == 0)
            return 0;
    char **nv = realloc(*v, (*n + 1) * sizeof(**v));
    if (!nv)
        return AR_ENOMEM;
    *v = nv;
    if (!(nv[*n] = strndup(s, len)))
        return AR_ENOMEM;
    (*n)++;
    return 0;
}

/* ---- 1. the repository, the branches, the base --------------------------------------- */

/* git 2.38 brought `merge-tree --write-tree`: an older one is named, not tried. */
static int check_version(struct ar_error *err)
{
    static const char *const args[] = { "version", NULL };
    char line[200];
    int rc = git_line(NULL, args, "git version", line, sizeof(line), err);
    if (rc < 0)
        return rc;
    int major = 0, minor = 0;
    if (sscanf(line, "git version %d.%d", &major, &minor) == 2 &&
        (major < MERGE_TREE_MIN_MAJOR ||
         (major == MERGE_TREE_MIN_MAJOR && minor < MERGE_TREE_MIN_MINOR)))
        return ar_error_set(err, AR_EUSAGE, "git",
                            "merging needs git 2.38 or later (git merge-tree --write-tree); "
                            "this is %s",
                            line);
    return 0;
}

static int find_top(const char *cwd, struct ar_worktree_merge_result *r, struct ar_error *err)
{
    static const char *const args[] = { "rev-parse", "--path-format=absolute", "--show-toplevel",
                                        NULL };
    struct ar_child_sync out;
    char why[200];
    int status, rc = git(cwd, args, NULL, 0, &out, &status, why, sizeof(why), err);
    if (rc < 0)
        return rc;
    size_t off = 0;
    char *top = status == 0 && out.stdout_data
                    ? ar_git_next_line(out.stdout_data, out.res.stdout_len, &off)
                    : NULL;
    ar_child_sync_finish(&out);
    if (!top || !*top) {
        free(top);
        return ar_error_set(err, AR_EUSAGE, "git", "'%s' is not in a git work tree: %s",
                            cwd ? cwd : ".", status == 0 ? "no top" : why);
    }
    r->top = top;
    return 0;
}

static struct ar_worktree_merge_branch *row_add(struct ar_worktree_merge_result *r)
{
    struct ar_worktree_merge_branch *v = realloc(r->v, (r->n + 1) * sizeof(*v));
    if (!v)
        return NULL;
    r->v = v;
    memset(&v[r->n], 0, sizeof(v[r->n]));
    return &v[r->n++];
}

/* The session of an agentrun branch name into s (SESSION_LEN + 1 bytes), or 0. */
static int session_of(const char *name, char *s)
{
    if (!ar_git_tree_branch_ours(name))
        return 0;
    snprintf(s, SESSION_LEN + 1, "%s", name + strlen("agentrun/"));
    return 1;
}

/* The branches of o: every refs/heads/agentrun/<session>/… of the session asked (or of the
 * latest one), or the ones named, each with its tip. */
static int find_branches(struct merge *m)
{
    const struct ar_worktree_merge_options *o = m->o;
    struct ar_worktree_merge_result *r = m->r;
    if (o->branches && o->branches[0]) {
        char common[SESSION_LEN + 1] = "", s[SESSION_LEN + 1];
        int one = 1;
        for (size_t i = 0; o->branches[i]; i++) {
            const char *name = o->branches[i];
            if (strncmp(name, HEADS, strlen(HEADS)) == 0)
                name += strlen(HEADS);
            if (!ar_git_branch_name_ok(name))
                return ar_error_set(m->err, AR_EUSAGE, "branch", "'%s' is no branch name", name);
            char ref[1100], tip[AR_GIT_HEX_SIZE];
            snprintf(ref, sizeof(ref), HEADS "%s^{commit}", name);
            const char *args[] = {
                "rev-parse", "--verify", "--quiet", "--end-of-options", ref, NULL
            };
            if (git_line(r->top, args, "rev-parse", tip, sizeof(tip), m->err) < 0 ||
                !ar_git_is_oid(tip))
                return m->err->code == AR_ENOMEM || m->err->code == AR_ENOTFOUND
                           ? m->err->code
                           : ar_error_set(m->err, AR_EUSAGE, "branch", "no branch '%s'", name);
            int dup = 0;
            for (size_t k = 0; k < r->n; k++)
                dup |= strcmp(r->v[k].branch, name) == 0;
            if (dup)
                continue;
            struct ar_worktree_merge_branch *b = row_add(r);
            if (!b || !(b->branch = strdup(name)))
                return oom(m->err);
            snprintf(b->tip, sizeof(b->tip), "%s", tip);
            if (!session_of(name, s) || (*common && strcmp(common, s) != 0))
                one = 0;
            else
                snprintf(common, sizeof(common), "%s", s);
        }
        if (one && *common && !(r->session = strdup(common)))
            return oom(m->err);
        return 0;
    }
    static const char *const args[] = { "for-each-ref", "--format=%(objectname) %(refname)",
                                        "refs/heads/agentrun/", NULL };
    struct ar_child_sync out;
    char why[200];
    int status, rc = git(r->top, args, NULL, 0, &out, &status, why, sizeof(why), m->err);
    if (rc < 0)
        return rc;
    if (status != 0) {
        ar_child_sync_finish(&out);
        return ar_error_set(m->err, AR_EIO, "git", "git for-each-ref failed: %s", why);
    }
    char want[SESSION_LEN + 1] = "";
    if (o->session)
        snprintf(want, sizeof(want), "%s", o->session);
    /* Two passes: the latest session first (when none is asked), then its branches. */
    for (int pass = o->session ? 1 : 0; pass < 2 && rc == 0; pass++) {
        size_t off = 0;
        char *line;
        while (rc == 0 && out.stdout_data &&
               (line = ar_git_next_line(out.stdout_data, out.res.stdout_len, &off))) {
            char s[SESSION_LEN + 1];
            /* "OID refs/heads/NAME": a ref name has no space. */
            char *sp = strchr(line, ' ');
            const char *oid = line, *ref = sp ? sp + 1 : "", *name = ref + strlen(HEADS);
            if (sp)
                *sp = '\0';
            if (strncmp(ref, HEADS, strlen(HEADS)) == 0 && session_of(name, s)) {
                if (pass == 0 && strcmp(s, want) > 0) {
                    snprintf(want, sizeof(want), "%s", s);
                } else if (pass == 1 && strcmp(s, want) == 0 &&
                           strcmp(name + strlen("agentrun/") + SESSION_LEN + 1,
                                  AR_GIT_MERGED_COMPONENT) != 0) {
                    struct ar_worktree_merge_branch *b = row_add(r);
                    if (!b || !(b->branch = strdup(name)))
                        rc = oom(m->err);
                    else
                        snprintf(b->tip, sizeof(b->tip), "%s", oid);
                }
            }
            free(line);
        }
    }
    ar_child_sync_finish(&out);
    if (rc < 0)
        return rc;
    if (r->n == 0)
        return ar_error_set(m->err, AR_EUSAGE, "session",
                            *want ? "session '%s' has no agentrun/%s/ branches"
                                  : "no agentrun/SESSION/JOB branches in this repository%s%s",
                            want, want);
    for (size_t i = 0; i < r->n; i++)
        if (!ar_git_is_oid(r->v[i].tip))
            return ar_error_set(m->err, AR_EIO, "git", "no commit for '%s'", r->v[i].branch);
    return (r->session = strdup(want)) ? 0 : oom(m->err);
}

static int by_branch(const void *a, const void *b)
{
    const struct ar_worktree_merge_branch *x = a, *y = b;
    return strcmp(x->branch, y->branch);
}

/* Each branch's base: the value its reflog began with, else its tip's first parent. */
static int find_bases(struct merge *m)
{
    struct ar_worktree_merge_result *r = m->r;
    if (!(m->c = calloc(r->n, sizeof(*m->c))))
        return oom(m->err);
    m->n = r->n;
    for (size_t i = 0; i < r->n; i++) {
        struct cand *c = &m->c[i];
        c->b = &r->v[i];
        char ref[1100];
        snprintf(ref, sizeof(ref), HEADS "%s", c->b->branch);
        const char *args[] = { "log", "-g", "--reverse", "--format=%H", "--end-of-options",
                               ref,   NULL };
        struct ar_child_sync out;
        char why[200];
        int status, rc = git(r->top, args, NULL, 0, &out, &status, why, sizeof(why), m->err);
        if (rc < 0)
            return rc;
        size_t off = 0;
        char *first = status == 0 && out.stdout_data
                          ? ar_git_next_line(out.stdout_data, out.res.stdout_len, &off)
                          : NULL;
        if (first && ar_git_is_oid(first))
            snprintf(c->base, sizeof(c->base), "%s", first);
        free(first);
        ar_child_sync_finish(&out);
        if (!*c->base) {
            char parent[AR_GIT_HEX_SIZE + 8];
            snprintf(parent, sizeof(parent), "%s^1", c->b->tip);
            const char *pa[] = { "rev-parse",        "--verify", "--quiet",
                                 "--end-of-options", parent,     NULL };
            char line[AR_GIT_HEX_SIZE] = "";
            if ((rc = git_line(r->top, pa, "rev-parse", line, sizeof(line), m->err)) < 0 &&
                m->err->code != AR_EIO)
                return rc;
            /* A root commit: its own base. */
            snprintf(c->base, sizeof(c->base), "%s", ar_git_is_oid(line) ? line : c->b->tip);
        }
    }
    /* The batch's base: the merge base of the branches' bases. */
    struct ar_strv args = AR_STRV_INIT;
    int rc = ar_strv_push(&args, "merge-base") || ar_strv_push(&args, "--octopus") ? AR_ENOMEM : 0;
    for (size_t i = 0; i < m->n && rc == 0; i++)
        rc = ar_strv_push(&args, m->c[i].base);
    if (rc < 0) {
        ar_strv_finish(&args);
        return oom(m->err);
    }
    if (m->n == 1)
        snprintf(r->base, sizeof(r->base), "%s", m->c[0].base);
    else
        rc = git_line(r->top, ar_strv_get(&args), "git merge-base", r->base, sizeof(r->base),
                      m->err);
    ar_strv_finish(&args);
    if (rc == 0 && !ar_git_is_oid(r->base))
        rc = ar_error_set(m->err, AR_EUSAGE, "base", "the branches have no commit in common");
    return rc;
}

/* 1 when s is a whole object id in hex, as git spells one (40 or 64 digits, any case). */
static int oid_shaped(const char *s)
{
    size_t n = strspn(s, "0123456789abcdefABCDEF");
    return s[n] == '\0' && (n == 40 || n == 64);
}

/*
 * Whether --into's name means one branch and nothing else, to git and to the user
 * (issue 57 #4): merge safety by what refs are, not what they are named. Refused:
 *   - a symbolic ref (refs/heads/master -> refs/heads/main): update-ref would move the
 *     branch it points to, which a worktree may have checked out;
 *   - a name git reads as something else first or as well: "@" (HEAD), a full ref name
 *     ("refs/…"), an object id, a pseudo-ref (FETCH_HEAD…), a tag, a remote-tracking
 *     branch or a remote's default (refs/remotes/NAME/HEAD), refs/NAME, or a name under
 *     a remote's namespace (origin/x: a fetch would make it ambiguous);
 * Returns 0, AR_EUSAGE saying which, or an error running git.
 */
static int check_into_name(struct merge *m, const char *into)
{
    struct ar_worktree_merge_result *r = m->r;
    if (strcmp(into, "@") == 0 || strncmp(into, "refs/", 5) == 0 || oid_shaped(into) ||
        (strspn(into, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(into) && strstr(into, "HEAD")))
        return ar_error_set(m->err, AR_EUSAGE, "into",
                            "'%s' is no name for the integration branch: git reads it as %s", into,
                            strcmp(into, "@") == 0           ? "HEAD"
                            : strncmp(into, "refs/", 5) == 0 ? "a full ref name"
                            : oid_shaped(into)               ? "an object id"
                                                             : "a pseudo-ref");
    char ref[1100];
    snprintf(ref, sizeof(ref), HEADS "%s", into);
    const char *sym[] = { "symbolic-ref", "-q", "--end-of-options", ref, NULL };
    char target[1100] = "";
    int rc = git_line(r->top, sym, "git symbolic-ref", target, sizeof(target), m->err);
    if (rc < 0 && m->err->code != AR_EIO)
        return rc;
    if (rc == 0 && *target)
        return ar_error_set(m->err, AR_EUSAGE, "into",
                            "'%s' is a symbolic ref to '%s': merging into it would move that "
                            "branch; name the branch itself",
                            into, target);
    /* What else the short name could mean, in git's order of reading it (gitrevisions:
     * refs/NAME, refs/tags/NAME, refs/heads/NAME, refs/remotes/NAME, its HEAD). */
    char p1[1100], p2[1100], p3[1100];
    snprintf(p1, sizeof(p1), "refs/%s", into);
    snprintf(p2, sizeof(p2), "refs/tags/%s", into);
    snprintf(p3, sizeof(p3), "refs/remotes/%s", into);
    const char *fer[] = { "for-each-ref", "--format=%(refname)", p1, p2, p3, NULL };
    struct ar_child_sync out;
    char why[200];
    int status;
    if ((rc = git(r->top, fer, NULL, 0, &out, &status, why, sizeof(why), m->err)) < 0)
        return rc;
    char *clash = NULL;
    char remote_head[1120];
    snprintf(remote_head, sizeof(remote_head), "%s/HEAD", p3);
    size_t off = 0;
    for (char *line; !clash && status == 0 && out.stdout_data &&
                     (line = ar_git_next_line(out.stdout_data, out.res.stdout_len, &off));) {
        if (strcmp(line, p1) == 0 || strcmp(line, p2) == 0 || strcmp(line, p3) == 0 ||
            strcmp(line, remote_head) == 0)
            clash = line;
        else
            free(line);
    }
    ar_child_sync_finish(&out);
    if (status != 0)
        return ar_error_set(m->err, AR_EIO, "git", "git for-each-ref failed: %s", why);
    if (clash) {
        rc = ar_error_set(m->err, AR_EUSAGE, "into",
                          "'%s' would shadow '%s': git would read the name as that ref; name "
                          "the integration branch otherwise",
                          into, clash);
        free(clash);
        return rc;
    }
    /* A remote's namespace: "origin/fix" is refs/remotes/origin/fix after the next fetch. */
    static const char *const remotes[] = { "remote", NULL };
    if ((rc = git(r->top, remotes, NULL, 0, &out, &status, why, sizeof(why), m->err)) < 0)
        return rc;
    off = 0;
    for (char *line; !clash && status == 0 && out.stdout_data &&
                     (line = ar_git_next_line(out.stdout_data, out.res.stdout_len, &off));) {
        size_t n = strlen(line);
        if (n && strncmp(into, line, n) == 0 && into[n] == '/')
            clash = line;
        else
            free(line);
    }
    ar_child_sync_finish(&out);
    if (status != 0)
        return ar_error_set(m->err, AR_EIO, "git", "git remote failed: %s", why);
    if (clash) {
        rc = ar_error_set(m->err, AR_EUSAGE, "into",
                          "'%s' would shadow the remote-tracking branches of '%s' "
                          "(refs/remotes/%s); name the integration branch otherwise",
                          into, clash, into);
        free(clash);
    }
    return rc;
}

/* The integration branch: its name, that no worktree has it checked out, and where it is. */
static int find_into(struct merge *m)
{
    struct ar_worktree_merge_result *r = m->r;
    const char *into = m->o->into;
    char name[200];
    if (!into) {
        if (!r->session || !*r->session)
            return ar_error_set(m->err, AR_EUSAGE, "into",
                                "the branches are of no one session: --into names the "
                                "integration branch");
        snprintf(name, sizeof(name), "agentrun/%s/" AR_GIT_MERGED_COMPONENT, r->session);
        into = name;
    } else if (strncmp(into, HEADS, strlen(HEADS)) == 0) {
        into += strlen(HEADS);
    }
    if (!ar_git_branch_name_ok(into))
        return ar_error_set(m->err, AR_EUSAGE, "into", "'%s' is no branch name", into);
    int rc = check_into_name(m, into);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->v[i].branch, into) == 0)
            return ar_error_set(m->err, AR_EUSAGE, "into", "'%s' is one of the branches to merge",
                                into);
    if (!(r->into = strdup(into)))
        return oom(m->err);
    /* A branch checked out anywhere moves that checkout's HEAD under its index: never. */
    static const char *const wl[] = { "worktree", "list", "--porcelain", "-z", NULL };
    struct ar_child_sync out;
    char why[200], ref[1100];
    int status;
    if ((rc = git(r->top, wl, NULL, 0, &out, &status, why, sizeof(why), m->err)) < 0)
        return rc;
    /* git names each worktree's branch resolved (a HEAD at a symbolic ref shows the branch
     * it points to); into is no symbolic ref (above), so the names compare as refs. */
    snprintf(ref, sizeof(ref), "branch " HEADS "%s", into);
    int busy = 0;
    for (const char *p = out.stdout_data, *end = p ? p + out.res.stdout_len : NULL; p && p < end;
         p += strlen(p) + 1)
        busy |= strcmp(p, ref) == 0;
    ar_child_sync_finish(&out);
    if (status != 0)
        return ar_error_set(m->err, AR_EIO, "git", "git worktree list failed: %s", why);
    if (busy)
        return ar_error_set(m->err, AR_EUSAGE, "into",
                            "'%s' is checked out in a worktree: merging into it would change "
                            "that checkout",
                            into);
    snprintf(ref, sizeof(ref), HEADS "%s^{commit}", into);
    const char *args[] = { "rev-parse", "--verify", "--quiet", "--end-of-options", ref, NULL };
    char tip[AR_GIT_HEX_SIZE] = "";
    if ((rc = git_line(r->top, args, "rev-parse", tip, sizeof(tip), m->err)) < 0 &&
        m->err->code != AR_EIO)
        return rc;
    if (ar_git_is_oid(tip)) {
        snprintf(m->old, sizeof(m->old), "%s", tip);
        snprintf(m->start, sizeof(m->start), "%s", tip);
    } else {
        m->old[0] = '\0';
        snprintf(m->start, sizeof(m->start), "%s", r->base);
    }
    *m->err = (struct ar_error)AR_ERROR_INIT;
    return 0;
}

/* ---- 2. trial merges -------------------------------------------------------------- */

/* `git merge-tree --write-tree -z --name-only --no-messages a b`: 0 clean (tree set),
 * 1 conflicts (the paths added to *paths), or an error. Its output is the tree's id
 * and a NUL, then each conflicted path and a NUL. */
static int trial(const struct merge *m, const char *a, const char *b, char *tree, char ***paths,
                 size_t *n_paths)
{
    const char *args[] = { "merge-tree",
                           "--write-tree",
                           "-z",
                           "--name-only",
                           "--no-messages",
                           "--end-of-options",
                           a,
                           b,
                           NULL };
    struct ar_child_sync out;
    char why[200];
    int status, rc = git(m->r->top, args, NULL, 0, &out, &status, why, sizeof(why), m->err);
    if (rc < 0)
        return rc;
    if (status != 0 && status != 1) {
        ar_child_sync_finish(&out);
        return ar_error_set(m->err, AR_EIO, "git", "git merge-tree failed: %s", why);
    }
    const char *p = out.stdout_data, *end = p ? p + out.res.stdout_len : NULL;
    if (!p || !memchr(p, '\0', (size_t)(end - p))) {
        ar_child_sync_finish(&out);
        return ar_error_set(m->err, AR_EIO, "git", "git merge-tree gave no tree");
    }
    snprintf(tree, AR_GIT_HEX_SIZE, "%s", p);
    for (p += strlen(p) + 1; status == 1 && paths && p < end; p += strlen(p) + 1)
        if (*p && push_str(paths, n_paths, p, strlen(p)) < 0) {
            ar_child_sync_finish(&out);
            return oom(m->err);
        }
    ar_child_sync_finish(&out);
    return status;
}

/* Whether commit a is an ancestor of (or is) b. */
static int has(const struct merge *m, const char *b, const char *a, int *yes)
{
    const char *args[] = { "merge-base", "--is-ancestor", "--end-of-options", a, b, NULL };
    struct ar_child_sync out;
    char why[200];
    int status, rc = git(m->r->top, args, NULL, 0, &out, &status, why, sizeof(why), m->err);
    if (rc < 0)
        return rc;
    ar_child_sync_finish(&out);
    if (status != 0 && status != 1)
        return ar_error_set(m->err, AR_EIO, "git", "git merge-base failed: %s", why);
    *yes = status == 0;
    return 0;
}

static int by_degree_then_name(const void *a, const void *b)
{
    const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;
    if (x->degree != y->degree)
        return x->degree < y->degree ? -1 : 1;
    return strcmp(x->b->branch, y->b->branch);
}

/* The conflict graph of the candidates (not empty ones) and the order they are tried in.
 * Past PAIRWISE_MAX candidates the pairs are not tried: the order is by name. */
static int plan(struct merge *m, struct cand ***order, size_t *n_order)
{
    size_t n = m->n;
    struct cand **v = calloc(n ? n : 1, sizeof(*v));
    if (!v || !(m->edge = calloc(n ? n * n : 1, 1))) {
        free(v);
        return oom(m->err);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (m->c[i].b->outcome != AR_WORKTREE_MERGE_EMPTY)
            v[k++] = &m->c[i];
    if (k <= PAIRWISE_MAX) {
        for (size_t i = 0; i < k; i++)
            for (size_t j = i + 1; j < k; j++) {
                if (cancelled(m)) {
                    free(v);
                    return ar_error_set(m->err, AR_EINTERRUPTED, "merge", "interrupted");
                }
                char tree[AR_GIT_HEX_SIZE];
                int rc = trial(m, v[i]->b->tip, v[j]->b->tip, tree, NULL, NULL);
                if (rc < 0) {
                    free(v);
                    return rc;
                }
                if (rc == 1) {
                    size_t a = (size_t)(v[i] - m->c), b = (size_t)(v[j] - m->c);
                    m->edge[a * n + b] = m->edge[b * n + a] = 1;
                    v[i]->degree++;
                    v[j]->degree++;
                }
            }
    }
    ar_sort(v, k, sizeof(*v), by_degree_then_name);
    /* Greedy: a branch joins the first group when it conflicts with none in it. */
    struct cand **out = calloc(k ? k : 1, sizeof(*out));
    if (!out) {
        free(v);
        return oom(m->err);
    }
    size_t o = 0;
    for (size_t i = 0; i < k; i++) {
        size_t a = (size_t)(v[i] - m->c);
        int ok = 1;
        for (size_t j = 0; j < o && ok; j++)
            ok = !m->edge[a * n + (size_t)(out[j] - m->c)];
        if (ok) {
            v[i]->picked = 1;
            out[o++] = v[i];
        }
    }
    for (size_t i = 0; i < n; i++) /* m->c is by name */
        if (!m->c[i].picked && m->c[i].b->outcome != AR_WORKTREE_MERGE_EMPTY)
            out[o++] = &m->c[i];
    free(v);
    *order = out;
    *n_order = o;
    return 0;
}

/* ---- 4. one merge: a commit, a check ------------------------------------------------- */

static int commit_tree(const struct merge *m, const char *tree, const char *branch, const char *tip,
                       char *commit)
{
    char msg[1200];
    snprintf(msg, sizeof(msg), "agentrun: merge %s\n", branch);
    const char *args[] = {
        "commit-tree", "-p", m->start, "-p", tip, "--end-of-options", tree, NULL
    };
    struct ar_child_sync out;
    char why[200];
    /* Where git knows no identity for the user (a fresh CI machine), as agentrun. */
    int status, rc = git_as(m->r->top, args, msg, strlen(msg), AR_GIT_FALLBACK_IDENTITY, &out,
                            &status, why, sizeof(why), m->err);
    if (rc < 0)
        return rc;
    size_t off = 0;
    char *line = status == 0 && out.stdout_data
                     ? ar_git_next_line(out.stdout_data, out.res.stdout_len, &off)
                     : NULL;
    snprintf(commit, AR_GIT_HEX_SIZE, "%s", line ? line : "");
    free(line);
    ar_child_sync_finish(&out);
    if (status == 0 && ar_git_is_oid(commit))
        return 0;
    return ar_error_set(m->err, AR_EIO, "git", "cannot make the merge commit: %s",
                        status == 0 ? "git printed no commit" : why);
}

struct check_run {
    struct ar_loop *loop;
    struct ar_wait *wait;
    const volatile int *cancel;
    struct ar_child_result res;
    char *tail;
    int done, nomem;
};

static void check_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct check_run *cr = arg;
    (void)c;
    cr->res = *res;
    cr->res.stderr_tail = NULL;
    cr->res.stdout_data = NULL;
    /* The last lines: from the first line start past CHECK_TAIL_BYTES from the end. */
    const char *t = res->stderr_tail;
    size_t len = res->stderr_tail_len;
    if (t && len > CHECK_TAIL_BYTES) {
        const char *from = t + len - CHECK_TAIL_BYTES;
        const char *nl = memchr(from, '\n', (size_t)(t + len - from));
        from = nl && nl + 1 < t + len ? nl + 1 : from;
        len -= (size_t)(from - t);
        t = from;
    }
    if (t && !(cr->tail = strndup(t, len)))
        cr->nomem = 1;
    cr->done = 1;
    if (cr->wait)
        ar_wait_cancel(cr->wait);
}

static void check_poll(void *arg, int was_cancelled)
{
    struct check_run *cr = arg;
    cr->wait = NULL;
    if (was_cancelled || cr->done)
        return;
    if (cr->cancel && *cr->cancel) {
        ar_loop_cancel_all(cr->loop);
        return;
    }
    if (ar_wait_start(cr->loop, CHECK_POLL_MS, check_poll, cr, &cr->wait) < 0)
        cr->wait = NULL;
}

/* Runs the check in path. Returns 0 with *status (its exit status, -1 timed out) and *tail
 * (owned) set, AR_EINTERRUPTED after a cancel, or an error. */
static int run_check(const struct merge *m, const char *path, int *status, char **tail)
{
    char *script = NULL;
    /* Its stdout and stderr, in order, in one tail. */
    if (asprintf(&script, "exec 1>&2\n%s", m->o->check) < 0)
        return oom(m->err);
    const char *argv[] = { "sh", "-c", script, NULL };
    /* The check runs in the scratch worktree as its own repository, whatever agentrun's
     * environment says. */
    static const char *const env[] = { "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
                                       "GIT_COMMON_DIR", NULL };
    struct check_run cr = { 0 };
    cr.cancel = m->o->cancel;
    struct ar_error lerr = AR_ERROR_INIT;
    if (!(cr.loop = ar_loop_create(&lerr))) {
        free(script);
        return ar_error_set(m->err, lerr.code, "check", "%s", lerr.msg);
    }
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = argv;
    o.cwd = path;
    o.env = env;
    o.timeout_ms = m->o->check_timeout_ms ? m->o->check_timeout_ms : CHECK_TIMEOUT_MS;
    o.kill_grace_ms = CHECK_KILL_GRACE_MS;
    o.stderr_tail = CHECK_TAIL_BYTES * 2;
    o.on_done = check_done;
    o.arg = &cr;
    int rc = ar_child_spawn(cr.loop, &o, NULL, m->err);
    if (rc == 0) {
        if (ar_wait_start(cr.loop, CHECK_POLL_MS, check_poll, &cr, &cr.wait) < 0)
            cr.wait = NULL;
        ar_loop_run(cr.loop);
    }
    ar_loop_destroy(cr.loop);
    free(script);
    if (rc < 0) {
        free(cr.tail);
        return rc;
    }
    if (cr.nomem)
        return oom(m->err);
    if (cr.res.end == AR_CHILD_CANCELLED || cancelled(m)) {
        free(cr.tail);
        return ar_error_set(m->err, AR_EINTERRUPTED, "check", "interrupted");
    }
    *status = cr.res.end == AR_CHILD_TIMEOUT ? -1 : cr.res.status;
    *tail = cr.tail;
    return 0;
}

/* Removes a scratch worktree, locked or not, and its folder. */
static void scratch_remove(const struct merge *m, const char *path)
{
    const char *args[] = { "worktree", "remove", "--force", "--force", "--", path, NULL };
    struct ar_child_sync out;
    struct ar_error lerr = AR_ERROR_INIT;
    char why[200];
    int status;
    if (git(m->r->top, args, NULL, 0, &out, &status, why, sizeof(why), &lerr) == 0)
        ar_child_sync_finish(&out);
    /* A folder git did not register (the add failed) is ours still. */
    rmdir(path);
}

/* The check on commit: 0 with the status and tail set (status 0: passed), or an error. */
static int check(struct merge *m, const char *commit, int *status, char **tail)
{
    char *path = NULL;
    if (asprintf(&path, "%s/merge-check-XXXXXX", m->dir) < 0)
        return oom(m->err);
    if (!mkdtemp(path)) {
        int e = errno;
        free(path);
        return ar_error_set(m->err, AR_EIO, "check", "cannot make a scratch worktree in '%s': %s",
                            m->dir, strerror(e));
    }
    const char *args[] = { "worktree", "add",      "--detach",
                           "--lock",   "--reason", "agentrun worktrees merge: a check runs in it",
                           "--",       path,       commit,
                           NULL };
    struct ar_child_sync out;
    char why[200];
    int st, rc = git(m->r->top, args, NULL, 0, &out, &st, why, sizeof(why), m->err);
    if (rc == 0) {
        ar_child_sync_finish(&out);
        if (st != 0)
            rc = ar_error_set(m->err, AR_EIO, "git", "cannot make a scratch worktree: %s", why);
        else if (cancelled(m))
            rc = ar_error_set(m->err, AR_EINTERRUPTED, "check", "interrupted");
        else
            rc = run_check(m, path, status, tail);
    }
    scratch_remove(m, path);
    free(path);
    return rc;
}

/* Merges candidate c into m->start: its row's outcome set, m->start advanced when merged. */
static int merge_one(struct merge *m, struct cand *c)
{
    struct ar_worktree_merge_branch *b = c->b;
    char tree[AR_GIT_HEX_SIZE], commit[AR_GIT_HEX_SIZE];
    int rc = trial(m, m->start, b->tip, tree, &b->paths, &b->n_paths);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        b->outcome = AR_WORKTREE_MERGE_CONFLICT;
        size_t n = m->n, a = (size_t)(c - m->c);
        for (size_t j = 0; j < n; j++)
            if (m->edge[a * n + j] && m->c[j].b->outcome == AR_WORKTREE_MERGE_MERGED &&
                *m->c[j].b->commit &&
                push_str(&b->with, &b->n_with, m->c[j].b->branch, strlen(m->c[j].b->branch)) < 0)
                return oom(m->err);
        return 0;
    }
    /* A clean merge that adds nothing: the branch's change is there already. */
    char spec[AR_GIT_HEX_SIZE + 8], start_tree[AR_GIT_HEX_SIZE];
    snprintf(spec, sizeof(spec), "%s^{tree}", m->start);
    const char *args[] = { "rev-parse", "--verify", "--end-of-options", spec, NULL };
    if ((rc = git_line(m->r->top, args, "rev-parse", start_tree, sizeof(start_tree), m->err)) < 0)
        return rc;
    if (strcmp(start_tree, tree) == 0) {
        b->outcome = AR_WORKTREE_MERGE_EMPTY;
        return 0;
    }
    if ((rc = commit_tree(m, tree, b->branch, b->tip, commit)) < 0)
        return rc;
    if (m->o->check) {
        int status = 0;
        char *tail = NULL;
        if ((rc = check(m, commit, &status, &tail)) < 0)
            return rc;
        if (status != 0) {
            b->outcome = AR_WORKTREE_MERGE_CHECK_FAILED;
            b->check_status = status;
            b->check_tail = tail;
            return 0;
        }
        free(tail);
    }
    b->outcome = AR_WORKTREE_MERGE_MERGED;
    snprintf(b->commit, sizeof(b->commit), "%s", commit);
    snprintf(m->start, sizeof(m->start), "%s", commit);
    return 0;
}

/* ---- 5. the integration branch --------------------------------------------------------- */

static int update_into(struct merge *m)
{
    char ref[1100];
    snprintf(ref, sizeof(ref), HEADS "%s", m->r->into);
    if (*m->old && strcmp(m->old, m->start) == 0) {
        snprintf(m->r->head, sizeof(m->r->head), "%s", m->start);
        return 0;
    }
    /* --no-deref: the ref itself moves, never a branch it may have been made to point to
     * since find_into() looked (a symbolic ref's value is no commit, so the compare and
     * swap then fails). */
    const char *args[] = { "update-ref", "--no-deref", "-m",   "agentrun: worktrees merge",
                           ref,          m->start,     m->old, NULL };
    struct ar_child_sync out;
    char why[200];
    int status, rc = git(m->r->top, args, NULL, 0, &out, &status, why, sizeof(why), m->err);
    if (rc < 0)
        return rc;
    ar_child_sync_finish(&out);
    if (status != 0)
        return ar_error_set(m->err, AR_EIO, "git", "cannot move '%s' (it %s meanwhile): %s",
                            m->r->into, *m->old ? "moved" : "was made", why);
    m->r->created = !*m->old;
    snprintf(m->r->head, sizeof(m->r->head), "%s", m->start);
    return 0;
}

static int run_merge(struct merge *m)
{
    const struct ar_worktree_merge_options *o = m->o;
    int rc;
    if ((rc = check_version(m->err)) < 0 || (rc = find_top(o->cwd, m->r, m->err)) < 0 ||
        (rc = find_branches(m)) < 0)
        return rc;
    ar_sort(m->r->v, m->r->n, sizeof(*m->r->v), by_branch);
    if ((rc = find_bases(m)) < 0 || (rc = find_into(m)) < 0)
        return rc;
    if (o->check) {
        char *d = o->dir ? strdup(o->dir) : ar_git_tree_default_dir();
        if (!d)
            return o->dir ? oom(m->err)
                          : ar_error_set(m->err, AR_EUSAGE, "git",
                                         "no folder for scratch worktrees: set "
                                         "AGENTRUN_WORKTREE_DIR, XDG_STATE_HOME or HOME");
        if (ar_git_make_dirs(d) != 0 || !(m->dir = realpath(d, NULL))) {
            rc = ar_error_set(m->err, AR_EIO, "check", "cannot make the folder '%s': %s", d,
                              strerror(errno));
            free(d);
            return rc;
        }
        free(d);
    }
    for (size_t i = 0; i < m->n; i++) {
        int yes = 0;
        if ((rc = has(m, m->start, m->c[i].b->tip, &yes)) < 0)
            return rc;
        if (yes)
            m->c[i].b->outcome = AR_WORKTREE_MERGE_EMPTY;
    }
    struct cand **order = NULL;
    size_t n_order = 0;
    if ((rc = plan(m, &order, &n_order)) < 0)
        return rc;
    for (size_t i = 0; i < n_order && rc == 0; i++) {
        if (cancelled(m))
            rc = ar_error_set(m->err, AR_EINTERRUPTED, "merge", "interrupted");
        else
            rc = merge_one(m, order[i]);
    }
    if (rc == 0 && cancelled(m))
        rc = ar_error_set(m->err, AR_EINTERRUPTED, "merge", "interrupted");
    if (rc == 0)
        rc = update_into(m);
    if (rc == 0) {
        /* The rows in the order tried: the empty ones (never tried) first. */
        struct ar_worktree_merge_branch *v = malloc((m->n ? m->n : 1) * sizeof(*v));
        if (!v) {
            rc = oom(m->err);
        } else {
            size_t k = 0;
            for (size_t i = 0; i < m->n; i++) {
                int tried = 0;
                for (size_t j = 0; j < n_order; j++)
                    tried |= order[j] == &m->c[i];
                if (!tried)
                    v[k++] = *m->c[i].b;
            }
            for (size_t j = 0; j < n_order; j++)
                v[k++] = *order[j]->b;
            memcpy(m->r->v, v, m->n * sizeof(*v));
            free(v);
            for (size_t i = 0; i < m->r->n; i++) {
                enum ar_worktree_merge_outcome oc = m->r->v[i].outcome;
                m->r->merged += oc == AR_WORKTREE_MERGE_MERGED;
                m->r->left_out +=
                    oc == AR_WORKTREE_MERGE_CONFLICT || oc == AR_WORKTREE_MERGE_CHECK_FAILED;
            }
        }
    }
    free(order);
    return rc;
}

int ar_worktree_merge(const struct ar_worktree_merge_options *o,
                      struct ar_worktree_merge_result *out, struct ar_error *err)
{
    struct ar_error local = AR_ERROR_INIT;
    memset(out, 0, sizeof(*out));
    struct merge m = { 0 };
    m.o = o;
    m.r = out;
    m.err = err ? err : &local;
    int rc = run_merge(&m);
    free(m.c);
    free(m.edge);
    free(m.dir);
    if (rc < 0)
        ar_worktree_merge_result_finish(out);
    else if (err) /* a git that said "no" on the way (no such branch yet) was no failure */
        *err = (struct ar_error)AR_ERROR_INIT;
    return rc;
}
