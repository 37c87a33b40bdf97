/*
 * Reading the work tree: the content hash of every path a snapshot lists, and
 * the bytes of a changed file for --with-content.
 *
 * The hash is the git blob id (SHA-1 of "blob <size>\0" and the content), so
 * a work-tree file can be matched against the HEAD object that status names
 * (hH): that is how `mv a b` without `git mv` is still seen as a rename.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "git/git.h"
#include "git/internal.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/macros.h"

#define CHUNK 65536

static char *join(const char *root, const char *path)
{
    size_t a = strlen(root), b = strlen(path);
    char *s = malloc(a + b + 2);
    if (!s)
        return NULL;
    memcpy(s, root, a);
    s[a] = '/';
    memcpy(s + a + 1, path, b + 1);
    return s;
}

static void blob_oid(const void *data, size_t n, unsigned char out[AR_GIT_OID_LEN])
{
    struct ar_sha1 s;
    char hdr[32];
    int h = snprintf(hdr, sizeof(hdr), "blob %zu", n);
    ar_sha1_init(&s);
    ar_sha1_update(&s, hdr, (size_t)h + 1);
    ar_sha1_update(&s, data, n);
    ar_sha1_final(&s, out);
}

/*
 * A symlink's target as git stores it. readlink() does not say how long the
 * target is, so grow until it fits.
 */
static char *read_link(const char *full, size_t *len)
{
    size_t cap = 256;
    for (;;) {
        char *buf = malloc(cap);
        if (!buf)
            return NULL;
        ssize_t n = readlink(full, buf, cap);
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            *len = (size_t)n;
            return buf;
        }
        free(buf);
        cap *= 2;
    }
}

/*
 * O_NONBLOCK and the fstat() check keep a path that turned into a FIFO
 * between lstat() and open() from blocking the loop forever.
 */
static int open_regular(const char *full, struct stat *st)
{
    int fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Timestamps this close to the start of hashing cannot prove a file unchanged (see git.h). */
#define RACY_NS ((int64_t)2000000000)

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void stat_keep(struct ar_git_stat *d, const struct stat *st)
{
    d->dev = (uint64_t)st->st_dev;
    d->ino = (uint64_t)st->st_ino;
    d->size = (uint64_t)st->st_size;
    d->mtime_ns = ns_of(st->st_mtim);
    d->ctime_ns = ns_of(st->st_ctim);
    d->mode = (uint32_t)st->st_mode;
}

/*
 * Whether f (just lstat()ed) is what prev's entry p saw: same stat data, and
 * p's timestamps far enough before prev's hashing that a later write within
 * the same timestamp tick is impossible. ctime cannot be set by a user, so a
 * write that restored mtime and size still shows.
 */
static int unchanged(const struct ar_git_file *f, const struct ar_git_file *p,
                     const struct ar_git_snapshot *prev)
{
    if (!p || !p->has_stat || !f->has_stat)
        return 0;
    const struct ar_git_stat *a = &f->st, *b = &p->st;
    if (a->dev != b->dev || a->ino != b->ino || a->size != b->size || a->mode != b->mode ||
        a->mtime_ns != b->mtime_ns || a->ctime_ns != b->ctime_ns)
        return 0;
    int64_t limit = prev->hashed_at_ns - RACY_NS;
    return b->mtime_ns < limit && b->ctime_ns < limit;
}

/* Returns 0 or AR_ENOMEM; sets exists/hashed/oid/st of f. p: prev's entry for the path, or NULL. */
static int hash_file(const char *root, struct ar_git_file *f, const struct ar_git_file *p,
                     const struct ar_git_snapshot *prev, size_t *n_read)
{
    char *full = join(root, f->path);
    if (!full)
        return AR_ENOMEM;
    f->exists = f->hashed = f->has_stat = 0;
    struct stat st;
    if (lstat(full, &st) != 0) {
        free(full);
        return 0;
    }
    f->exists = 1;
    f->has_stat = 1;
    stat_keep(&f->st, &st);
    if (unchanged(f, p, prev)) {
        f->hashed = p->hashed;
        memcpy(f->oid, p->oid, AR_GIT_OID_LEN);
        free(full);
        return 0;
    }
    (*n_read)++;
    if (S_ISLNK(st.st_mode)) {
        size_t n;
        char *target = read_link(full, &n);
        if (target) {
            blob_oid(target, n, f->oid);
            f->hashed = 1;
            free(target);
        }
    } else if (S_ISREG(st.st_mode)) {
        int fd = open_regular(full, &st);
        char *buf = fd >= 0 ? malloc(CHUNK) : NULL;
        if (buf) {
            struct ar_sha1 s;
            char hdr[48];
            int h = snprintf(hdr, sizeof(hdr), "blob %jd", (intmax_t)st.st_size);
            ar_sha1_init(&s);
            ar_sha1_update(&s, hdr, (size_t)h + 1);
            int ok = 1;
            for (;;) {
                ssize_t n = read(fd, buf, CHUNK);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n < 0)
                    ok = 0;
                if (n <= 0)
                    break;
                ar_sha1_update(&s, buf, (size_t)n);
            }
            ar_sha1_final(&s, f->oid);
            f->hashed = (unsigned)ok;
        }
        free(buf);
        if (fd >= 0)
            close(fd);
    }
    /* Directories (submodules, nested repositories) and special files exist
     * but have no content hash: the diff cannot see changes inside them. */
    free(full);
    return 0;
}

static int path_cmp(const void *a, const void *b)
{
    return strcmp(((const struct ar_git_file *)a)->path, ((const struct ar_git_file *)b)->path);
}

/*
 * A path prev listed that status no longer lists is clean now (or gone, or
 * ignored): add it so its content can be compared with what prev saw.
 */
static int add_revisits(struct ar_git_snapshot *snap, const struct ar_git_snapshot *prev)
{
    size_t extra = 0;
    for (size_t i = 0; i < prev->n; i++)
        if (!ar_git_snapshot_find(snap, prev->files[i].path))
            extra++;
    if (!extra)
        return 0;
    struct ar_git_file *v = realloc(snap->files, (snap->n + extra) * sizeof(*v));
    if (!v)
        return AR_ENOMEM;
    snap->files = v;
    size_t sorted = snap->n;
    for (size_t i = 0; i < prev->n; i++) {
        struct ar_git_snapshot head = *snap;
        head.n = sorted; /* the appended tail is not sorted yet */
        if (ar_git_snapshot_find(&head, prev->files[i].path))
            continue;
        struct ar_git_file *e = &v[snap->n];
        memset(e, 0, sizeof(*e));
        if (!(e->path = strdup(prev->files[i].path)))
            return AR_ENOMEM;
        e->x = e->y = '.';
        e->revisit = 1;
        snap->n++;
    }
    ar_sort(snap->files, snap->n, sizeof(*snap->files), path_cmp);
    return 0;
}

int ar_git_snapshot_hash(struct ar_git_snapshot *snap, const struct ar_git_snapshot *prev,
                         struct ar_error *err)
{
    if (!snap->tracked)
        return 0;
    if (prev && !prev->tracked)
        prev = NULL;
    if (prev && add_revisits(snap, prev))
        return ar_error_set(err, AR_ENOMEM, "git snapshot", "out of memory");
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snap->hashed_at_ns = ns_of(now);
    for (size_t i = 0; i < snap->n; i++) {
        struct ar_git_file *f = &snap->files[i];
        const struct ar_git_file *p = prev ? ar_git_snapshot_find(prev, f->path) : NULL;
        if (hash_file(snap->root, f, p, prev, &snap->n_read))
            return ar_error_set(err, AR_ENOMEM, "git snapshot", "out of memory");
        /* A clean path that exists is exactly what HEAD holds. */
        if (f->revisit)
            f->in_head = f->exists;
    }
    return 0;
}

int ar_git_path_read(const char *root, const char *path, size_t max, struct ar_buf *out,
                     int *truncated, int *is_dir)
{
    *truncated = 0;
    if (is_dir)
        *is_dir = 0;
    char *full = join(root, path);
    if (!full)
        return AR_ENOMEM;
    struct stat st;
    int rc = -1;
    if (lstat(full, &st) != 0) {
        rc = errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    } else if (S_ISLNK(st.st_mode)) {
        size_t n;
        char *target = read_link(full, &n);
        if (target) {
            if (n > max) {
                n = max;
                *truncated = 1;
            }
            rc = ar_buf_append(out, target, n) ? AR_ENOMEM : 1;
            free(target);
        }
    } else if (S_ISDIR(st.st_mode)) {
        if (is_dir)
            *is_dir = 1;
    } else if (S_ISREG(st.st_mode)) {
        int fd = open_regular(full, &st);
        if (fd >= 0) {
            rc = 1;
            while (out->len < max) {
                size_t want = AR_MIN(max - out->len, (size_t)CHUNK);
                if (ar_buf_reserve(out, want)) {
                    rc = AR_ENOMEM;
                    break;
                }
                ssize_t n = read(fd, out->data + out->len, want);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n < 0)
                    rc = -1;
                if (n <= 0)
                    break;
                out->len += (size_t)n;
                out->data[out->len] = '\0';
            }
            char probe;
            if (rc == 1 && out->len >= max && read(fd, &probe, 1) == 1)
                *truncated = 1;
            close(fd);
        }
    }
    free(full);
    return rc;
}
