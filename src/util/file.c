/* File helpers: whole-file reads with a cap, atomic writes, temp files. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/array.h"
#include "util/file.h"
#include "util/temp.h"

int ar_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return AR_EIO;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int ar_file_read_fd(int fd, const char *name, struct ar_buf *out, struct ar_error *err)
{
#ifdef F_SETPIPE_SZ
    /* A pipe's writer fills 64 KiB at a time by default: let it run ahead. */
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
    for (;;) {
        int rc = ar_buf_reserve(out, 65536);
        if (rc == AR_ETOOBIG) {
            /* The last stretch below the cap may still fit. A pipe hands out
             * only what was written so far, so read until the cap or EOF. */
            if (out->len < out->max && ar_buf_reserve(out, out->max - out->len) == 0) {
                ssize_t n = 1;
                while (out->len < out->max) {
                    n = read(fd, out->data + out->len, out->max - out->len);
                    if (n < 0 && errno == EINTR)
                        continue;
                    if (n <= 0)
                        break;
                    out->len += (size_t)n;
                    out->data[out->len] = '\0';
                }
                if (n == 0)
                    return 0;
                char probe;
                while (n > 0 && (n = read(fd, &probe, 1)) < 0 && errno == EINTR)
                    ;
                if (n == 0)
                    return 0;
                if (n < 0)
                    return ar_error_set_sys(err, AR_EIO, errno, name, "cannot read '%s': %s", name,
                                            strerror(errno));
            }
            return ar_error_set(err, AR_ETOOBIG, name, "'%s' is larger than %zu bytes", name,
                                out->max);
        }
        if (rc)
            return ar_error_set(err, rc, name, "cannot read '%s': out of memory", name);
        /* All the room there is, up to the limit: fewer calls as the buffer doubles. */
        size_t room = out->cap - out->len - 1;
        if (room > out->max - out->len)
            room = out->max - out->len;
        ssize_t n =
            read(fd, out->data + out->len, room < ((size_t)1 << 30) ? room : (size_t)1 << 30);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return ar_error_set_sys(err, AR_EIO, errno, name, "cannot read '%s': %s", name,
                                    strerror(errno));
        }
        if (n == 0)
            return 0;
        out->len += (size_t)n;
        out->data[out->len] = '\0';
    }
}

/* How a file that is not a regular one is named in a message. */
static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* fd, opened O_NONBLOCK (a FIFO must not block the open), checked to be a regular file
 * and made blocking again. Returns 0, or -1 with *why (a kind) or errno set. */
static int check_regular(int fd, struct stat *st, const char **why)
{
    if (fstat(fd, st) != 0)
        return -1;
    if (!S_ISREG(st->st_mode)) {
        *why = kind_of(st->st_mode);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return -1;
    return 0;
}

#define MAX_LINKS 40

/* The directories walked into: stack[0] is the folder itself (borrowed). */
struct beneath {
    int *fd;
    size_t depth, cap;
    const char *dir;
    char *dir_real; /* realpath(dir), for absolute links; computed when first needed */
};

static int beneath_push(struct beneath *b, int fd)
{
    if (ar_array_reserve(&b->fd, &b->cap, b->depth + 2, sizeof(*b->fd), 16) < 0)
        return -1;
    b->fd[++b->depth] = fd;
    return 0;
}

static void beneath_pop_to(struct beneath *b, size_t depth)
{
    while (b->depth > depth)
        close(b->fd[b->depth--]);
}

/*
 * A link's target as a path relative to the folder's current position: a relative
 * target as it is, an absolute one only when it names a place inside the folder (the
 * walk then restarts at the folder). NULL when it leads out.
 */
static const char *link_inside(struct beneath *b, const char *target)
{
    if (target[0] != '/')
        return target;
    if (!b->dir_real && !(b->dir_real = realpath(b->dir, NULL)))
        return NULL;
    size_t n = strlen(b->dir_real);
    if (n == 1)
        n = 0; /* the folder is "/": every absolute path is inside */
    if (strncmp(target, b->dir_real, n) != 0 || (target[n] != '/' && target[n] != '\0'))
        return NULL;
    beneath_pop_to(b, 0);
    return target + n;
}

/*
 * Opens rel beneath the directory b->fd[0]. Each component is looked at without
 * following it; a symbolic link is replaced by its target, which must stay inside
 * the folder, and ".." never climbs above it. Returns a regular file's descriptor,
 * or -1 with *why (a reason) or errno set.
 */
static int open_beneath(struct beneath *b, const char *rel, struct stat *st, const char **why)
{
    char *todo = strdup(rel);
    int links = 0, fd = -1;
    size_t pos = 0;
    if (!todo) {
        errno = ENOMEM;
        return -1;
    }
    for (;;) {
        while (todo[pos] == '/')
            pos++;
        if (!todo[pos]) {
            *why = "a directory";
            break;
        }
        size_t end = pos;
        while (todo[end] && todo[end] != '/')
            end++;
        size_t next = end;
        while (todo[next] == '/')
            next++;
        int last = !todo[next];
        char saved = todo[end];
        todo[end] = '\0';
        const char *comp = todo + pos;
        int cur = b->fd[b->depth];
        if (!strcmp(comp, ".")) {
            pos = next;
            continue;
        }
        if (!strcmp(comp, "..")) {
            if (b->depth == 0) {
                *why = links ? "a link out of its folder" : "a '..' out of its folder";
                break;
            }
            beneath_pop_to(b, b->depth - 1);
            pos = next;
            continue;
        }
        if (fstatat(cur, comp, st, AT_SYMLINK_NOFOLLOW) != 0)
            break;
        if (S_ISLNK(st->st_mode)) {
            char target[4096];
            ssize_t n =
                ++links > MAX_LINKS ? -1 : readlinkat(cur, comp, target, sizeof(target) - 1);
            if (n < 0 || (size_t)n >= sizeof(target) - 1) {
                errno = ELOOP;
                break;
            }
            target[n] = '\0';
            const char *inside = link_inside(b, target);
            if (!inside) {
                *why = "a link out of its folder";
                break;
            }
            todo[end] = saved;
            char *rest = NULL;
            if (asprintf(&rest, "%s/%s", inside, todo + next) < 0) {
                errno = ENOMEM;
                break;
            }
            free(todo);
            todo = rest;
            pos = 0;
            continue;
        }
        if (!last) {
            int d = S_ISDIR(st->st_mode)
                        ? openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                        : (errno = ENOTDIR, -1);
            if (d < 0)
                break;
            if (beneath_push(b, d) < 0) {
                close(d);
                errno = ENOMEM;
                break;
            }
            pos = next;
            continue;
        }
        if (!S_ISREG(st->st_mode)) {
            *why = kind_of(st->st_mode);
            break;
        }
        fd = openat(cur, comp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0 && check_regular(fd, st, why) != 0) {
            int e = errno;
            close(fd);
            fd = -1;
            errno = e;
        }
        break;
    }
    free(todo);
    return fd;
}

/* "dir/rel" for messages (rel alone when dir is "."). Caller free()s. */
static char *display_name(const char *dir, const char *rel)
{
    char *s = NULL;
    if (!strcmp(dir, "."))
        return strdup(rel);
    size_t n = strlen(dir);
    return asprintf(&s, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", rel) < 0 ? NULL : s;
}

static int open_failed(const char *name, const char *why, struct ar_error *err)
{
    if (why)
        return ar_error_set(err, AR_EIO, name, "cannot read '%s': %s", name, why);
    int e = errno;
    return ar_error_set_sys(err, e == ENOMEM ? AR_ENOMEM : AR_EIO, e, name, "cannot read '%s': %s",
                            name, strerror(e));
}

/* ar_file_open_at() with the name messages use. */
static int open_in(const char *dir, const char *rel, const char *name, int *fd, struct stat *st,
                   struct ar_error *err)
{
    struct beneath b = { NULL, 0, 0, dir, NULL };
    const char *why = NULL;
    int rc = 0;
    *fd = -1;
    b.cap = 16;
    if (!(b.fd = malloc(b.cap * sizeof(*b.fd)))) {
        errno = ENOMEM;
        return open_failed(name, NULL, err);
    }
    b.fd[0] = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (b.fd[0] < 0)
        rc = open_failed(name, NULL, err);
    else if ((*fd = open_beneath(&b, rel, st, &why)) < 0) {
        /* A link the walk could not find may be a kernel's (/dev/fd/63 of a shell's
         * "<(…)" names "pipe:[…]"): say what it leads to. Looked at, never opened. */
        struct stat to;
        int e = errno;
        if (!why && e == ENOENT && stat(name, &to) == 0 && !S_ISREG(to.st_mode))
            why = kind_of(to.st_mode);
        errno = e;
        rc = open_failed(name, why, err);
    }
    beneath_pop_to(&b, 0);
    if (b.fd[0] >= 0)
        close(b.fd[0]);
    free(b.fd);
    free(b.dir_real);
    return rc;
}

int ar_file_open_at(const char *dir, const char *rel, int *fd, struct stat *st,
                    struct ar_error *err)
{
    char *name = display_name(dir, rel);
    if (!name)
        return ar_error_set(err, AR_ENOMEM, rel, "out of memory");
    int rc = open_in(dir, rel, name, fd, st, err);
    free(name);
    return rc;
}

/* Reads the regular file open on fd, whose size is st's, under the cap. */
static int read_regular(int fd, const char *name, const struct stat *st, struct ar_buf *out,
                        struct ar_error *err)
{
    size_t room = out->max - out->len;
    if (room > AR_FILE_MAX_BYTES)
        room = AR_FILE_MAX_BYTES;
    if ((uint64_t)st->st_size > room)
        return ar_error_set(err, AR_ETOOBIG, name, "'%s' is larger than %zu bytes", name, room);
    return ar_file_read_fd(fd, name, out, err);
}

int ar_file_read_at(const char *dir, const char *rel, struct ar_buf *out, struct ar_error *err)
{
    int fd;
    struct stat st;
    int rc = ar_file_open_at(dir, rel, &fd, &st, err);
    if (rc)
        return rc;
    char *name = display_name(dir, rel);
    rc = name ? read_regular(fd, name, &st, out, err)
              : ar_error_set(err, AR_ENOMEM, rel, "out of memory");
    free(name);
    close(fd);
    return rc;
}

/* Opens the file a user named by the rules above: its folder is the name's directory
 * part, as given ("/" for "/x", "." for "x"). */
static int open_named(const char *path, int *fd, struct stat *st, struct ar_error *err)
{
    const char *slash = strrchr(path, '/');
    char *dir = !slash          ? strdup(".")
                : slash == path ? strdup("/")
                                : strndup(path, (size_t)(slash - path));
    if (!dir)
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    int rc = open_in(dir, slash ? slash + 1 : path, path, fd, st, err);
    free(dir);
    return rc;
}

int ar_file_read(const char *path, struct ar_buf *out, struct ar_error *err)
{
    if (strcmp(path, "-") == 0)
        return ar_file_read_fd(STDIN_FILENO, "<stdin>", out, err);
    int fd;
    struct stat st;
    int rc = open_named(path, &fd, &st, err);
    if (rc == 0) {
        rc = read_regular(fd, path, &st, out, err);
        close(fd);
    }
    return rc;
}

int ar_file_read_own(const char *path, struct ar_buf *out, struct ar_error *err)
{
    const char *why = NULL;
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || check_regular(fd, &st, &why) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        return open_failed(path, why, err);
    }
    int rc = read_regular(fd, path, &st, out, err);
    close(fd);
    return rc;
}

/* ---- one writer per output file ---------------------------------------------------- */

/* flock()s fd for writing, at once or not at all: 0, or AR_EIO naming who has it. */
static int lock_writer(int fd, const char *path, struct ar_error *err)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    int e = errno;
    if (e == EWOULDBLOCK)
        return ar_error_set(err, AR_EIO, path,
                            "'%s' is being written by another agentrun: one writer per output "
                            "file",
                            path);
    return ar_error_set_sys(err, AR_EIO, e, path, "cannot lock '%s': %s", path, strerror(e));
}

int ar_file_open_writer(const char *path, int *fd, int *locked, struct ar_error *err)
{
    *fd = -1;
    *locked = 0;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A FIFO or a terminal is opened as it always was: no lock, no reading back. */
        *fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (*fd < 0)
            return ar_error_set_sys(err, AR_EIO, errno, path, "cannot open '%s': %s", path,
                                    strerror(errno));
        return 0;
    }
    /* A writer that replaces the file (--resume) renames a new one over the path: a lock
     * taken on the file the path no longer names is no lock. Lock, then check. */
    for (int tries = 0; tries < 16; tries++) {
        int f = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
        if (f < 0)
            return ar_error_set_sys(err, AR_EIO, errno, path, "cannot open '%s': %s", path,
                                    strerror(errno));
        int rc = lock_writer(f, path, err);
        if (rc) {
            close(f);
            return rc;
        }
        struct stat mine;
        if (fstat(f, &mine) == 0 && stat(path, &st) == 0 && mine.st_dev == st.st_dev &&
            mine.st_ino == st.st_ino) {
            *fd = f;
            *locked = 1;
            return 0;
        }
        close(f);
    }
    return ar_error_set(err, AR_EIO, path, "cannot lock '%s': it keeps being replaced", path);
}

int ar_file_replace_locked(const char *path, const void *data, size_t len, int *fd,
                           struct ar_error *err)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.agentrun-XXXXXX", path) < 0)
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    int f = mkostemp(tmp, O_CLOEXEC); /* a name of its own: no two writers share it */
    int rc = 0, e = 0;
    struct stat st;
    if (f < 0) {
        e = errno;
        rc = AR_EIO;
    } else {
        /* Locked before it has the path's name, so the path is never unlocked. */
        if (flock(f, LOCK_EX | LOCK_NB) != 0 || ar_write_all(f, data, len) != 0 ||
            (*fd >= 0 && fstat(*fd, &st) == 0 && fchmod(f, st.st_mode & 07777) != 0) ||
            fsync(f) != 0 || fcntl(f, F_SETFL, O_APPEND) != 0 || rename(tmp, path) != 0) {
            e = errno;
            rc = AR_EIO;
        }
    }
    if (rc) {
        if (f >= 0) {
            close(f);
            unlink(tmp);
        }
        free(tmp);
        return ar_error_set_sys(err, AR_EIO, e, path, "cannot rewrite '%s': %s", path, strerror(e));
    }
    free(tmp);
    if (*fd >= 0)
        close(*fd);
    *fd = f;
    return 0;
}

int ar_file_append_whole(int fd, const void *data, size_t len)
{
    struct stat st;
    off_t before = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
    if (ar_write_all(fd, data, len) == 0)
        return 0;
    int e = errno;
    /* A full disk (or a file size limit) took part of it: take that part back, so the
     * file ends with its last whole record. Only its one writer may (ar_file_open_writer). */
    if (before >= 0 && ftruncate(fd, before) != 0)
        e = errno;
    errno = e;
    return AR_EIO;
}

int ar_file_write_atomic(const char *path, const void *data, size_t len, int mode,
                         struct ar_error *err)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return ar_error_set_sys(err, AR_EIO, e, path, "cannot write '%s': %s", path, strerror(e));
    }
    int rc = ar_write_all(fd, data, len);
    if (rc == 0 && fchmod(fd, (mode_t)mode) != 0)
        rc = AR_EIO;
    if (rc == 0 && fsync(fd) != 0)
        rc = AR_EIO;
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        e = errno;
        rc = AR_EIO;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        e = errno;
        rc = AR_EIO;
    }
    if (rc) {
        unlink(tmp);
        free(tmp);
        return ar_error_set_sys(err, AR_EIO, e, path, "cannot write '%s': %s", path, strerror(e));
    }
    free(tmp);
    return 0;
}

char *ar_file_write_temp(const char *tag, const void *data, size_t len, struct ar_error *err)
{
    char *path = ar_temp_template(tag);
    if (!path) {
        ar_error_set(err, AR_ENOMEM, tag, "out of memory");
        return NULL;
    }
    int fd = mkostemp(path, O_CLOEXEC); /* created 0600 */
    if (fd < 0) {
        ar_error_set_sys(err, AR_EIO, errno, path, "cannot create '%s': %s", path, strerror(errno));
        free(path);
        return NULL;
    }
    int rc = ar_write_all(fd, data, len);
    if (close(fd) != 0)
        rc = AR_EIO;
    if (rc) {
        ar_error_set_sys(err, AR_EIO, errno, path, "cannot write '%s': %s", path, strerror(errno));
        unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

int ar_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ar_dir_check(const char *path, struct ar_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return ar_error_set(err, AR_EUSAGE, path, "no such directory '%s'", path);
        return ar_error_set_sys(err, AR_EUSAGE, errno, path, "cannot use directory '%s': %s", path,
                                strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return ar_error_set(err, AR_EUSAGE, path, "'%s' is not a directory", path);
    if (access(path, X_OK) != 0)
        return ar_error_set_sys(err, AR_EUSAGE, errno, path, "cannot enter directory '%s': %s",
                                path, strerror(errno));
    return 0;
}

/* The file a name stands for: "-" is standard input, when it is a file of its own. */
static int stat_name(const char *name, struct stat *st)
{
    if (strcmp(name, "-") == 0)
        return fstat(STDIN_FILENO, st) == 0 && (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)) ? 0
                                                                                              : -1;
    return stat(name, st);
}

int ar_file_check_output(const char *out_opt, const char *out, const char *const *in, size_t n,
                         struct ar_error *err)
{
    struct stat o, i;
    if (!out || stat_name(out, &o) != 0)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (in[k] && stat_name(in[k], &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino)
            return ar_error_set(err, AR_EUSAGE, out,
                                "%s '%s' is the input '%s' (the same file): an output is never "
                                "one of the inputs",
                                out_opt, out, strcmp(in[k], "-") ? in[k] : "standard input");
    return 0;
}

int ar_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * Reads a pipe. The first 64 KiB go into v->buf (a short reply stays there);
 * a longer input moves on to anonymous memory of its own, grown by doubling
 * (mremap, no copy) and offered to the kernel for huge pages: each fresh
 * 4 KiB page costs a fault, and a reply of megabytes is thousands of them
 * (a first stage of a MiB was 256 of them, and a MiB copied). Returns 0 or an
 * error.
 */
static int read_pipe(int fd, const char *name, struct ar_file_view *v, struct ar_error *err)
{
    const size_t small = (size_t)64 << 10;
#ifdef F_SETPIPE_SZ
    (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20); /* let the writer run ahead */
#endif
    int rc = ar_buf_reserve(&v->buf, small);
    while (rc == 0 && v->buf.len < small) {
        ssize_t n = read(fd, v->buf.data + v->buf.len, small - v->buf.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ar_error_set_sys(err, AR_EIO, errno, name, "cannot read '%s': %s", name,
                                    strerror(errno));
        if (n == 0) {
            v->buf.data[v->buf.len] = '\0';
            return 0;
        }
        v->buf.len += (size_t)n;
    }
    if (rc)
        return ar_error_set(err, rc, name, "cannot read '%s': out of memory", name);
#if defined(MADV_HUGEPAGE) && defined(MREMAP_MAYMOVE)
    size_t cap = (size_t)8 << 20, len = v->buf.len; /* whole huge pages */
    char *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
        (void)madvise(p, cap, MADV_HUGEPAGE);
        memcpy(p, v->buf.data, len);
        ar_buf_finish(&v->buf);
        for (;;) {
            if (len == cap) {
                char *q = mremap(p, cap, cap * 2, MREMAP_MAYMOVE);
                if (q == MAP_FAILED) {
                    munmap(p, cap);
                    return ar_error_set(err, AR_ENOMEM, name, "cannot read '%s': out of memory",
                                        name);
                }
                p = q;
                (void)madvise(p + cap, cap, MADV_HUGEPAGE);
                cap *= 2;
            }
            ssize_t n = read(fd, p + len, cap - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                int e = errno;
                munmap(p, cap);
                return ar_error_set_sys(err, AR_EIO, e, name, "cannot read '%s': %s", name,
                                        strerror(e));
            }
            if (n == 0)
                break;
            len += (size_t)n;
        }
        v->map = p;
        v->map_len = cap;
        v->data = p;
        v->len = len;
        return 0;
    }
#endif
    return ar_file_read_fd(fd, name, &v->buf, err);
}

/* Maps the regular file open on fd from `at` on. 0, or 1 when it cannot be mapped. */
static int map_regular(int fd, const struct stat *st, off_t at, struct ar_file_view *v)
{
    if (st->st_size <= 0 || (uint64_t)st->st_size >= SIZE_MAX || at < 0 || at >= st->st_size)
        return 1;
    size_t size = (size_t)st->st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED)
        return 1;
    v->map = map;
    v->map_len = size;
    v->data = (const char *)map + at;
    v->len = size - (size_t)at;
    return 0;
}

int ar_file_view_open(const char *path, struct ar_file_view *v, struct ar_error *err)
{
    memset(v, 0, sizeof(*v));
    ar_buf_init(&v->buf, AR_BUF_UNLIMITED);
    struct stat st;
    int rc = 0, fd;
    if (strcmp(path, "-") == 0) { /* read as it is: a file it was redirected from, a pipe */
        off_t at = lseek(STDIN_FILENO, 0, SEEK_CUR); /* a shell may have read part of it */
        if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
            map_regular(STDIN_FILENO, &st, at, v) == 0)
            (void)lseek(STDIN_FILENO, 0, SEEK_END); /* read, as a read would leave it */
        else
            rc = read_pipe(STDIN_FILENO, "<stdin>", v, err);
    } else if ((rc = open_named(path, &fd, &st, err)) == 0) {
        if ((uint64_t)st.st_size > AR_FILE_MAX_BYTES)
            rc = ar_error_set(err, AR_ETOOBIG, path, "'%s' is larger than %zu bytes", path,
                              (size_t)AR_FILE_MAX_BYTES);
        else if (map_regular(fd, &st, 0, v) != 0)
            rc = ar_file_read_fd(fd, path, &v->buf, err);
        close(fd);
    }
    if (rc == 0 && !v->map) {
        v->data = ar_buf_cstr(&v->buf);
        v->len = v->buf.len;
    }
    if (rc < 0)
        ar_file_view_close(v);
    return rc;
}

void ar_file_view_close(struct ar_file_view *v)
{
    if (v->map)
        munmap(v->map, v->map_len);
    ar_buf_finish(&v->buf);
    memset(v, 0, sizeof(*v));
}
