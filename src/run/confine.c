/*
 * What a request may read: the share's directories (share.h). Every file the
 * library reads because a request named it passes here first: a path is
 * resolved as the kernel resolves it (symlinks and "..", realpath()) and must
 * lie inside one of the directories, component by component (/work/ab is not
 * inside /work/a); a REV:PATH is resolved as git resolves it (PATH from the top
 * of the work tree, or from the current folder when it starts with ./ or ../)
 * and must lie inside them too, although git reads it from its objects.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "run/share.h"
#include "util/buf.h"
#include "util/file.h"

/* The share's directories, for messages ("/a, /b"), into buf. */
static const char *dirs_text(char *const *dirs, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; dirs[i] && at < n; i++) {
        int w = snprintf(buf + at, n - at, "%s%s", i ? ", " : "", dirs[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return buf;
}

static int inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int ar_share_confined(const struct ar_share *s)
{
    return s && ar_share_dirs(s) != NULL;
}

static int outside(char *const *dirs, const char *path, const char *real, struct ar_error *err)
{
    char list[512];
    return ar_error_set(err, AR_EUSAGE, "dirs",
                        "'%s' (%s) is outside the directories allowed here (%s)", path, real,
                        dirs_text(dirs, list, sizeof(list)));
}

int ar_share_path(const struct ar_share *s, const char *base, const char *path, char **real,
                  struct ar_error *err)
{
    if (real)
        *real = NULL;
    if (!path || !*path)
        return ar_error_set(err, AR_EUSAGE, NULL, "an empty path");
    struct ar_buf joined;
    ar_buf_init(&joined, AR_BUF_UNLIMITED);
    int rc = path[0] != '/' && base ? ar_buf_printf(&joined, "%s/%s", base, path)
                                    : ar_buf_puts(&joined, path);
    if (rc) {
        ar_buf_finish(&joined);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    char *const *dirs = s ? ar_share_dirs(s) : NULL;
    if (!dirs) {
        if (real)
            *real = ar_buf_detach(&joined, NULL);
        ar_buf_finish(&joined);
        return real && !*real ? ar_error_set(err, AR_ENOMEM, NULL, "out of memory") : 0;
    }
    char *r = realpath(ar_buf_cstr(&joined), NULL);
    int e = errno;
    ar_buf_finish(&joined);
    if (!r)
        return e == ENOMEM ? ar_error_set(err, AR_ENOMEM, NULL, "out of memory")
                           : ar_error_set_sys(err, AR_EUSAGE, e, "dirs", "cannot use '%s': %s",
                                              path, strerror(e));
    for (size_t i = 0; dirs[i]; i++) {
        if (inside(r, dirs[i])) {
            if (real)
                *real = r;
            else
                free(r);
            return 0;
        }
    }
    rc = outside(dirs, path, r, err);
    free(r);
    return rc;
}

/* Appends rel to the absolute path out (n bytes), "." and ".." taken lexically.
 * Returns 0, or -1 when ".." would leave floor (the top of the work tree) or it
 * does not fit. */
static int walk_into(char *out, size_t n, size_t floor, const char *rel)
{
    size_t len = strlen(out);
    while (*rel) {
        size_t k = strcspn(rel, "/");
        if (k == 1 && rel[0] == '.') {
            /* nothing */
        } else if (k == 2 && rel[0] == '.' && rel[1] == '.') {
            if (len <= floor)
                return -1;
            while (len > floor && out[len - 1] != '/')
                len--;
            if (len > floor)
                len--;
            out[len] = '\0';
        } else if (k) {
            if (len + 1 + k + 1 > n)
                return -1;
            if (!(len == 1 && out[0] == '/'))
                out[len++] = '/';
            memcpy(out + len, rel, k);
            len += k;
            out[len] = '\0';
        }
        rel += k;
        rel += *rel == '/';
    }
    return 0;
}

int ar_share_rev_path(const struct ar_share *s, const char *cwd, const char *spec,
                      struct ar_error *err)
{
    char *const *dirs = s ? ar_share_dirs(s) : NULL;
    if (!dirs)
        return 0;
    const char *colon = ar_git_rev_path_colon(spec);
    if (!colon)
        return ar_error_set(err, AR_EUSAGE, "dirs", "'%s' is not REV:PATH", spec);
    const char *rel = colon + 1;
    char *top = ar_git_find_root(cwd);
    char *here = realpath(cwd ? cwd : ".", NULL);
    if (!top || !here) {
        free(top);
        free(here);
        return ar_error_set(err, AR_EUSAGE, "dirs",
                            "'%s' names a file of git's, but '%s' is not in a git work tree", spec,
                            cwd ? cwd : ".");
    }
    /* git: a PATH starting ./ or ../ (or . or ..) is relative to the current folder,
     * any other from the top of the work tree. */
    int relative = strncmp(rel, "./", 2) == 0 || strncmp(rel, "../", 3) == 0 ||
                   strcmp(rel, ".") == 0 || strcmp(rel, "..") == 0;
    char abs[PATH_MAX];
    size_t floor = strlen(top);
    int ok = snprintf(abs, sizeof(abs), "%s", relative ? here : top) < (int)sizeof(abs) &&
             walk_into(abs, sizeof(abs), floor, rel) == 0;
    int rc = 0;
    if (!ok) {
        rc = ar_error_set(err, AR_EUSAGE, "dirs", "'%s' leads out of the work tree %s", spec, top);
    } else {
        rc = -1;
        for (size_t i = 0; dirs[i] && rc; i++)
            if (inside(abs, dirs[i]))
                rc = 0;
        if (rc)
            rc = outside(dirs, spec, abs, err);
    }
    free(top);
    free(here);
    return rc;
}

int ar_share_read_file(const struct ar_share *s, const char *base, const char *path,
                       struct ar_buf *out, struct ar_error *err)
{
    /* Checked where it leads; read by the name it was given, so that the reader's own rule
     * (a link is followed only within the folder of the name: util/file.h) holds too. */
    int rc = ar_share_path(s, base, path, NULL, err);
    if (rc)
        return rc;
    struct ar_buf name;
    ar_buf_init(&name, AR_BUF_UNLIMITED);
    rc = path[0] != '/' && base ? ar_buf_printf(&name, "%s/%s", base, path)
                                : ar_buf_puts(&name, path);
    rc = rc ? ar_error_set(err, AR_ENOMEM, NULL, "out of memory")
            : ar_file_read(ar_buf_cstr(&name), out, err);
    ar_buf_finish(&name);
    return rc;
}
