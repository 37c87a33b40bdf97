/*
 * Parsing `git status --porcelain=v2 -z` into a snapshot's file table, and the
 * snapshot's lifecycle.
 *
 * With -z every record ends in NUL and paths are printed raw (no quoting, no
 * escaping), so a path is simply "the rest of the record" after a fixed
 * number of space-separated fields: spaces, quotes, newlines and any other
 * byte but NUL pass through untouched.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "util/array.h"

struct files {
    struct ar_git_file *v;
    size_t n, cap;
};

static struct ar_git_file *files_add(struct files *f)
{
    if (ar_array_reserve(&f->v, &f->cap, f->n + 1, sizeof(*f->v), 16) < 0)
        return NULL;
    struct ar_git_file *e = &f->v[f->n++];
    memset(e, 0, sizeof(*e));
    return e;
}

static void file_free(struct ar_git_file *e)
{
    free(e->path);
    free(e->rename_from);
}

static char *dup_bytes(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A 40-digit SHA-1 object name that is not all zeros; SHA-256 names (64 digits) are not kept. */
static int parse_oid(const char *p, size_t n, unsigned char out[AR_GIT_OID_LEN])
{
    if (n != 2 * AR_GIT_OID_LEN)
        return 0;
    int nonzero = 0;
    for (size_t i = 0; i < AR_GIT_OID_LEN; i++) {
        int hi = hexval(p[2 * i]), lo = hexval(p[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return 0;
        out[i] = (unsigned char)(hi << 4 | lo);
        nonzero |= out[i];
    }
    return nonzero != 0;
}

/* Whether an object name field names an object at all (all zeros: the path is absent there). */
static unsigned names_object(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != '0')
            return 1;
    return 0;
}

struct field {
    const char *p;
    size_t n;
};

/* Splits the first n space-separated fields of rec; returns the rest (the path) or NULL. */
static const char *split_fields(const char *rec, const char *end, struct field *fv, size_t n)
{
    const char *p = rec;
    for (size_t i = 0; i < n; i++) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp)
            return NULL;
        fv[i].p = p;
        fv[i].n = (size_t)(sp - p);
        p = sp + 1;
    }
    return p;
}

static int malformed(struct ar_error *err, size_t off, const char *what)
{
    return ar_error_set(err, AR_EIO, "git status", "cannot parse git status output at byte %zu: %s",
                        off, what);
}

static int path_cmp(const void *a, const void *b)
{
    return strcmp(((const struct ar_git_file *)a)->path, ((const struct ar_git_file *)b)->path);
}

/*
 * One path can come in two records: `git rm --cached f` gives "1 D. … f" and
 * "? f". Merge them so the table has each path once and keeps every fact.
 */
static void merge_duplicates(struct files *f)
{
    if (f->n == 0)
        return;
    size_t w = 0;
    for (size_t r = 1; r < f->n; r++) {
        struct ar_git_file *dst = &f->v[w], *src = &f->v[r];
        if (strcmp(dst->path, src->path) != 0) {
            f->v[++w] = *src;
            continue;
        }
        if (dst->x == '?' && src->x != '?') {
            dst->x = src->x;
            dst->y = src->y;
        }
        dst->in_head |= src->in_head;
        if (!dst->has_head_oid && src->has_head_oid) {
            dst->has_head_oid = 1;
            memcpy(dst->head_oid, src->head_oid, AR_GIT_OID_LEN);
        }
        if (!dst->rename_from) {
            dst->rename_from = src->rename_from;
            src->rename_from = NULL;
        }
        file_free(src);
    }
    f->n = w + 1;
}

/* "# branch.oid <commit>" gives HEAD; "(initial)" means no commit yet. */
static void parse_header(const char *rec, const char *end, char *head, size_t cap)
{
    static const char key[] = "# branch.oid ";
    size_t n = (size_t)(end - rec);
    if (n <= sizeof(key) - 1 || memcmp(rec, key, sizeof(key) - 1) != 0)
        return;
    rec += sizeof(key) - 1;
    n -= sizeof(key) - 1;
    if (n >= cap || rec[0] == '(')
        return;
    memcpy(head, rec, n);
    head[n] = '\0';
}

static int parse_records(struct files *f, const char *data, size_t len, char *head, size_t head_cap,
                         struct ar_error *err)
{
    size_t pos = 0;
    while (pos < len) {
        const char *rec = data + pos;
        const char *nul = memchr(rec, '\0', len - pos);
        if (!nul)
            return malformed(err, pos, "record without its NUL terminator");
        const char *end = nul;
        size_t next = (size_t)(nul - data) + 1;
        if (end == rec) {
            pos = next;
            continue;
        }
        struct field fv[10];
        const char *path = NULL;
        const char *orig = NULL;
        size_t orig_len = 0;
        char kind = rec[0];
        switch (kind) {
        case '#':
            parse_header(rec, end, head, head_cap);
            pos = next;
            continue;
        case '!': /* ignored files are not part of what a run reports */
            pos = next;
            continue;
        case '?':
            path = split_fields(rec, end, fv, 1);
            break;
        case '1':
            path = split_fields(rec, end, fv, 8);
            break;
        case '2':
            path = split_fields(rec, end, fv, 9);
            if (path) {
                /* The rename source is the next NUL-terminated field. */
                if (next >= len)
                    return malformed(err, pos, "rename record without its source path");
                orig = data + next;
                const char *onul = memchr(orig, '\0', len - next);
                if (!onul)
                    return malformed(err, next, "rename source without its NUL terminator");
                orig_len = (size_t)(onul - orig);
                next = (size_t)(onul - data) + 1;
            }
            break;
        case 'u':
            path = split_fields(rec, end, fv, 10);
            break;
        default:
            return malformed(err, pos, "unknown record type");
        }
        if (!path || path == end || fv[0].n != 1 || (kind != '?' && fv[1].n != 2))
            return malformed(err, pos, "too few fields");

        struct ar_git_file *e = files_add(f);
        if (!e || !(e->path = dup_bytes(path, (size_t)(end - path))))
            return ar_error_set(err, AR_ENOMEM, "git status", "out of memory");
        if (kind == '?') {
            e->x = e->y = '?';
        } else {
            e->x = fv[1].p[0];
            e->y = fv[1].p[1];
        }
        if (kind == '1') {
            /* hH, the object in HEAD, is all zeros when HEAD lacks the path. */
            e->in_head = names_object(fv[6].p, fv[6].n);
            e->has_head_oid = (unsigned)parse_oid(fv[6].p, fv[6].n, e->head_oid);
        } else if (kind == 'u') {
            /* Stage 2 ("ours") is what HEAD holds during a merge. */
            e->in_head = names_object(fv[8].p, fv[8].n);
            e->has_head_oid = (unsigned)parse_oid(fv[8].p, fv[8].n, e->head_oid);
        } else if (kind == '2') {
            /* hH names the source in HEAD; the new path is not in HEAD. */
            if (!(e->rename_from = dup_bytes(orig, orig_len)))
                return ar_error_set(err, AR_ENOMEM, "git status", "out of memory");
            int is_rename = fv[8].n > 0 && fv[8].p[0] == 'R';
            struct ar_git_file *o = files_add(f);
            if (!o)
                return ar_error_set(err, AR_ENOMEM, "git status", "out of memory");
            e = &f->v[f->n - 2]; /* files_add() may have moved the table */
            if (!(o->path = dup_bytes(orig, orig_len)))
                return ar_error_set(err, AR_ENOMEM, "git status", "out of memory");
            o->x = is_rename ? 'D' : '.';
            o->y = '.';
            o->in_head = names_object(fv[6].p, fv[6].n);
            o->has_head_oid = (unsigned)parse_oid(fv[6].p, fv[6].n, o->head_oid);
            if (!is_rename) {
                /* A copy leaves its source in place: the new path is a creation. */
                free(e->rename_from);
                e->rename_from = NULL;
            }
        }
        pos = next;
    }
    return 0;
}

int ar_git_snapshot_parse(const char *root, const char *data, size_t len,
                          struct ar_git_snapshot **out, struct ar_error *err)
{
    struct files f = { NULL, 0, 0 };
    struct ar_git_snapshot *s = calloc(1, sizeof(*s));
    if (!s || !(s->root = strdup(root ? root : "."))) {
        free(s);
        return ar_error_set(err, AR_ENOMEM, "git status", "out of memory");
    }
    int rc = parse_records(&f, data, len, s->head, sizeof(s->head), err);
    if (rc) {
        for (size_t i = 0; i < f.n; i++)
            file_free(&f.v[i]);
        free(f.v);
        free(s->root);
        free(s);
        return rc;
    }
    if (f.n)
        ar_sort(f.v, f.n, sizeof(*f.v), path_cmp);
    merge_duplicates(&f);
    s->tracked = 1;
    s->files = f.v;
    s->n = f.n;
    *out = s;
    return 0;
}

/*
 * `git diff --name-status -z A B` records: "M\0path\0", and for renames and
 * copies "R100\0old\0new\0". A rename source becomes a 'D' entry of its own,
 * as in status, so the comparison treats both sources alike.
 */
int ar_git_snapshot_parse_commits(struct ar_git_snapshot *snap, const char *data, size_t len,
                                  struct ar_error *err)
{
    struct files f = { NULL, 0, 0 };
    size_t pos = 0;
    int rc = 0;
    while (!rc && pos < len) {
        const char *tok[3];
        size_t tlen[3];
        int ntok = 1;
        for (int t = 0; t < ntok; t++) {
            const char *nul = pos < len ? memchr(data + pos, '\0', len - pos) : NULL;
            if (!nul) {
                rc = malformed(err, pos, "diff record without its NUL terminator");
                break;
            }
            tok[t] = data + pos;
            tlen[t] = (size_t)(nul - tok[t]);
            pos = (size_t)(nul - data) + 1;
            if (t == 0) {
                if (tlen[0] == 0 || !strchr("ACDMRTUX", tok[0][0])) {
                    rc = malformed(err, (size_t)(tok[0] - data), "unknown diff status");
                    break;
                }
                ntok = tok[0][0] == 'R' || tok[0][0] == 'C' ? 3 : 2;
            } else if (tlen[t] == 0) {
                rc = malformed(err, (size_t)(tok[t] - data), "empty path");
                break;
            }
        }
        if (rc)
            break;
        char letter = tok[0][0];
        struct ar_git_file *e = files_add(&f);
        if (!e || !(e->path = dup_bytes(tok[ntok - 1], tlen[ntok - 1]))) {
            rc = ar_error_set(err, AR_ENOMEM, "git diff", "out of memory");
            break;
        }
        e->x = letter == 'C' ? 'A' : letter;
        e->y = '.';
        if (letter != 'R')
            continue;
        if (!(e->rename_from = dup_bytes(tok[1], tlen[1])) || !(e = files_add(&f)) ||
            !(e->path = dup_bytes(tok[1], tlen[1]))) {
            rc = ar_error_set(err, AR_ENOMEM, "git diff", "out of memory");
            break;
        }
        e->x = 'D';
        e->y = '.';
    }
    if (rc) {
        for (size_t i = 0; i < f.n; i++)
            file_free(&f.v[i]);
        free(f.v);
        return rc;
    }
    if (f.n)
        ar_sort(f.v, f.n, sizeof(*f.v), path_cmp);
    merge_duplicates(&f);
    for (size_t i = 0; i < snap->n_committed; i++)
        file_free(&snap->committed[i]);
    free(snap->committed);
    snap->committed = f.v;
    snap->n_committed = f.n;
    return 0;
}

struct ar_git_snapshot *ar_git_snapshot_untracked(const char *fmt, ...)
{
    struct ar_git_snapshot *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
    va_end(ap);
    return s;
}

const struct ar_git_file *ar_git_snapshot_find(const struct ar_git_snapshot *snap, const char *path)
{
    size_t lo = 0, hi = snap->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(path, snap->files[mid].path);
        if (c == 0)
            return &snap->files[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

void ar_git_snapshot_destroy(struct ar_git_snapshot *snap)
{
    if (!snap)
        return;
    for (size_t i = 0; i < snap->n; i++)
        file_free(&snap->files[i]);
    free(snap->files);
    for (size_t i = 0; i < snap->n_committed; i++)
        file_free(&snap->committed[i]);
    free(snap->committed);
    free(snap->root);
    free(snap);
}
