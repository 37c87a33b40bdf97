/* File helpers: whole-file reads with a cap, atomic writes, temp files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"

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
        ssize_t n = read(fd, out->data + out->len, 65536);
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

int ar_file_read(const char *path, struct ar_buf *out, struct ar_error *err)
{
    if (strcmp(path, "-") == 0)
        return ar_file_read_fd(STDIN_FILENO, "<stdin>", out, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ar_error_set_sys(err, AR_EIO, errno, path, "cannot read '%s': %s", path,
                                strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return ar_error_set(err, AR_EIO, path, "cannot read '%s': is a directory", path);
    }
    int rc = ar_file_read_fd(fd, path, out, err);
    close(fd);
    return rc;
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
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char *path = NULL;
    if (asprintf(&path, "%s/agentrun-%s-XXXXXX", dir, tag) < 0) {
        ar_error_set(err, AR_ENOMEM, tag, "out of memory");
        return NULL;
    }
    int fd = mkstemp(path); /* mkstemp creates the file 0600 */
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

int ar_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
