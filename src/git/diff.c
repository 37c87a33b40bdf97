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
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct cand *v = realloc(c->v, cap * sizeof(*v));
        if (!v)
            return AR_ENOMEM;
        c->v = v;
        c->cap = cap;
    }
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

/* A path clean (or absent) before the run that status lists after it. */
static int judge_clean_before(struct cands *c, const struct ar_git_file *a)
{
    int rc = 0;
    if (a->exists) {
        if (a->rename_from) {
            rc = cand_add(c, a->path, AR_GIT_RENAME);
            if (!rc)
                c->v[c->n - 1].from = a->rename_from;
        } else if (a->in_head) {
            rc = cand_add(c, a->path, AR_GIT_MODIFY);
        } else {
            rc = cand_add(c, a->path, AR_GIT_CREATE);
            if (!rc && a->hashed)
                c->v[c->n - 1].new_oid = a->oid;
        }
    } else if (a->in_head) {
        rc = cand_add(c, a->path, AR_GIT_DELETE);
        if (!rc && a->has_head_oid)
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

int ar_git_changes_compute(const struct ar_git_snapshot *before,
                           const struct ar_git_snapshot *after, struct ar_git_changes *out,
                           struct ar_error *err)
{
    struct cands c = { NULL, 0, 0 };
    size_t i = 0, j = 0;
    int rc = 0;
    /* A merge walk over the two sorted tables visits the union of paths in order. */
    while (!rc && (i < before->n || j < after->n)) {
        const struct ar_git_file *b = i < before->n ? &before->files[i] : NULL;
        const struct ar_git_file *a = j < after->n ? &after->files[j] : NULL;
        int cmp = !b ? 1 : !a ? -1 : strcmp(b->path, a->path);
        if (cmp < 0) {
            rc = judge_dirty_before(&c, b, NULL);
            i++;
        } else if (cmp > 0) {
            if (!a->revisit)
                rc = judge_clean_before(&c, a);
            j++;
        } else {
            rc = judge_dirty_before(&c, b, a);
            i++;
            j++;
        }
    }
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
