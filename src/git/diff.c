/*
 * Comparing two snapshots: what did the run change?
 *
 * Each path of either snapshot is in one of three states on each side:
 * unlisted (clean, or absent, before the run), present with a content hash,
 * or missing from the work tree. The after snapshot has an entry for every
 * path the before snapshot listed (revisit entries), so both states are known
 * for every path that was dirty before; for a path that was clean before, the
 * status letters of the after snapshot say what happened to it.
 */
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "util/array.h"

struct cand {
    const char *path;
    const char *from;
    enum ar_git_op op;
    const unsigned char *old_oid; /* the content before a delete, when known */
    const unsigned char *new_oid; /* the content after a create, when known */
    int dropped;
};

struct cands {
    struct cand *v;
    size_t n, cap;
};

static int cand_add(struct cands *c, const char *path, enum ar_git_op op)
{
    if (ar_array_reserve(&c->v, &c->cap, c->n + 1, sizeof(*c->v), 16) < 0)
        return AR_ENOMEM;
    c->v[c->n++] = (struct cand){ path, NULL, op, NULL, NULL, 0 };
    return 0;
}

static int same_content(const struct ar_git_file *b, const struct ar_git_file *a)
{
    if (b->hashed != a->hashed)
        return 0;
    /* Two directories (submodules, nested repositories): no content to compare. */
    if (!b->hashed)
        return 1;
    return memcmp(b->oid, a->oid, AR_GIT_OID_LEN) == 0;
}

/* A path listed before the run; a is its after entry (NULL when after lacked prev). */
static int judge_dirty_before(struct cands *c, const struct ar_git_file *b,
                              const struct ar_git_file *a)
{
    int rc = 0;
    if (!a) {
        /* after was taken without prev: the path is clean now, content unknown. */
        if (b->in_head)
            rc = cand_add(c, b->path, b->exists ? AR_GIT_MODIFY : AR_GIT_CREATE);
        else if (b->exists)
            rc = cand_add(c, b->path, AR_GIT_DELETE);
        return rc;
    }
    if (b->exists && a->exists) {
        if (!same_content(b, a))
            rc = cand_add(c, b->path, AR_GIT_MODIFY);
    } else if (b->exists) {
        rc = cand_add(c, b->path, AR_GIT_DELETE);
        if (!rc && b->hashed)
            c->v[c->n - 1].old_oid = b->oid;
    } else if (a->exists) {
        rc = cand_add(c, b->path, AR_GIT_CREATE);
        if (!rc && a->hashed)
            c->v[c->n - 1].new_oid = a->oid;
    }
    return rc;
}

/*
 * A path clean (or absent) before the run that status lists after it (a) or
 * that commits made during the run changed (c), or both. With a commit, HEAD
 * moved, so "clean after" means "as in the new HEAD" and status letters are
 * relative to the new HEAD: the commit's letter says whether the path existed
 * before, a (or the commit) whether it exists now.
 */
static int judge_clean_before(struct cands *c, const struct ar_git_file *a,
                              const struct ar_git_file *cm)
{
    int rc = 0;
    const char *path = a ? a->path : cm->path;
    const char *from = a && a->rename_from ? a->rename_from : NULL;
    int was, is;
    if (cm) {
        was = cm->x != 'A' && cm->x != 'R';
        is = a ? a->exists : cm->x != 'D';
        if (!from && cm->x == 'R')
            from = cm->rename_from;
    } else {
        was = a->in_head;
        is = a->exists;
    }
    if (is && from && !was) {
        rc = cand_add(c, path, AR_GIT_RENAME);
        if (!rc)
            c->v[c->n - 1].from = from;
    } else if (is && was) {
        rc = cand_add(c, path, AR_GIT_MODIFY);
    } else if (is) {
        rc = cand_add(c, path, AR_GIT_CREATE);
        if (!rc && a && a->hashed)
            c->v[c->n - 1].new_oid = a->oid;
    } else if (was) {
        rc = cand_add(c, path, AR_GIT_DELETE);
        if (!rc && !cm && a->has_head_oid)
            c->v[c->n - 1].old_oid = a->head_oid;
    }
    return rc;
}

static struct cand *find_cand(struct cands *c, const char *path)
{
    for (size_t i = 0; i < c->n; i++)
        if (!c->v[i].dropped && strcmp(c->v[i].path, path) == 0)
            return &c->v[i];
    return NULL;
}

/*
 * The source of a staged rename shows up as a deletion of its own; drop it.
 * Then pair what is left: `mv a b` without git shows as "a deleted, b
 * untracked", and when b holds exactly a's old content it is a rename.
 */
static void find_renames(struct cands *c)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i].op != AR_GIT_RENAME)
            continue;
        struct cand *src = find_cand(c, c->v[i].from);
        if (src && src->op == AR_GIT_DELETE)
            src->dropped = 1;
    }
    for (size_t i = 0; i < c->n; i++) {
        struct cand *cr = &c->v[i];
        if (cr->dropped || cr->op != AR_GIT_CREATE || !cr->new_oid)
            continue;
        for (size_t j = 0; j < c->n; j++) {
            struct cand *del = &c->v[j];
            if (del->dropped || del->op != AR_GIT_DELETE || !del->old_oid ||
                memcmp(del->old_oid, cr->new_oid, AR_GIT_OID_LEN) != 0)
                continue;
            cr->op = AR_GIT_RENAME;
            cr->from = del->path;
            del->dropped = 1;
            break;
        }
    }
}

static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = 1;
    return d;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const struct ar_git_file *find_committed(const struct ar_git_snapshot *after,
                                                const char *path)
{
    struct ar_git_snapshot view = { 0 };
    view.files = after->committed;
    view.n = after->n_committed;
    return ar_git_snapshot_find(&view, path);
}

/* Every path of before, after and after's commits, sorted, each once (borrowed strings). */
static const char **all_paths(const struct ar_git_snapshot *before,
                              const struct ar_git_snapshot *after, size_t *n_out)
{
    size_t n = before->n + after->n + after->n_committed, k = 0;
    const char **v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < before->n; i++)
        v[k++] = before->files[i].path;
    for (size_t i = 0; i < after->n; i++)
        v[k++] = after->files[i].path;
    for (size_t i = 0; i < after->n_committed; i++)
        v[k++] = after->committed[i].path;
    ar_sort(v, n, sizeof(*v), str_cmp);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || strcmp(v[w - 1], v[i]) != 0)
            v[w++] = v[i];
    *n_out = w;
    return v;
}

int ar_git_changes_compute(const struct ar_git_snapshot *before,
                           const struct ar_git_snapshot *after, struct ar_git_changes *out,
                           struct ar_error *err)
{
    struct cands c = { NULL, 0, 0 };
    size_t n;
    const char **paths = all_paths(before, after, &n);
    if (!paths)
        return ar_error_set(err, AR_ENOMEM, "git changes", "out of memory");
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const struct ar_git_file *b = ar_git_snapshot_find(before, paths[i]);
        const struct ar_git_file *a = ar_git_snapshot_find(after, paths[i]);
        const struct ar_git_file *cm = find_committed(after, paths[i]);
        /* A path dirty before is judged by content alone, commits or not. */
        if (b)
            rc = judge_dirty_before(&c, b, a);
        else if ((a && !a->revisit) || cm)
            rc = judge_clean_before(&c, a && !a->revisit ? a : NULL, cm);
    }
    free(paths);
    if (rc)
        goto error_cands;
    find_renames(&c);

    size_t keep = 0;
    for (size_t k = 0; k < c.n; k++)
        keep += !c.v[k].dropped;
    out->v = keep ? calloc(keep, sizeof(*out->v)) : NULL;
    if (keep && !out->v) {
        rc = AR_ENOMEM;
        goto error_cands;
    }
    int oom = 0;
    for (size_t k = 0; k < c.n; k++) {
        if (c.v[k].dropped)
            continue;
        struct ar_git_change *ch = &out->v[out->n++];
        ch->path = dup_or_null(c.v[k].path, &oom);
        ch->from = dup_or_null(c.v[k].from, &oom);
        ch->op = c.v[k].op;
    }
    free(c.v);
    if (oom) {
        ar_git_changes_finish(out);
        return ar_error_set(err, AR_ENOMEM, "git changes", "out of memory");
    }
    return 0;

error_cands:
    free(c.v);
    return ar_error_set(err, AR_ENOMEM, "git changes", "out of memory");
}

const char *ar_git_op_name(enum ar_git_op op)
{
    static const char *const names[] = {
        [AR_GIT_CREATE] = "create",
        [AR_GIT_MODIFY] = "modify",
        [AR_GIT_DELETE] = "delete",
        [AR_GIT_RENAME] = "rename",
    };
    return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "unknown";
}

void ar_git_changes_init(struct ar_git_changes *ch)
{
    ch->v = NULL;
    ch->n = 0;
}

void ar_git_changes_finish(struct ar_git_changes *ch)
{
    for (size_t i = 0; i < ch->n; i++) {
        free(ch->v[i].path);
        free(ch->v[i].from);
        free(ch->v[i].content);
    }
    free(ch->v);
    ar_git_changes_init(ch);
}
