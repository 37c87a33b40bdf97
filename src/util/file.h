/* File helpers: whole-file reads with a cap, atomic writes, temp files. */
#ifndef AR_UTIL_FILE_H
#define AR_UTIL_FILE_H

#include <stddef.h>

#include "agentrun/error.h"
#include "util/buf.h"

/*
 * Appends the whole of `path` ("-" means standard input) to `out`. Fails with
 * AR_ETOOBIG when it would pass out->max, AR_EIO (err names the file) when it
 * cannot be read. Bytes are kept as they are (NULs included).
 */
int ar_file_read(const char *path, struct ar_buf *out, struct ar_error *err);

/* Reads an open descriptor to EOF into `out`; same errors as ar_file_read(). */
int ar_file_read_fd(int fd, const char *name, struct ar_buf *out, struct ar_error *err);

/*
 * Writes data to `path` atomically: a temporary file in the same directory,
 * fsync'd and renamed over path, so a reader never sees half a file. `mode`
 * is used for a new file (e.g. 0644). Returns 0 or AR_EIO.
 */
int ar_file_write_atomic(const char *path, const void *data, size_t len, int mode,
                         struct ar_error *err);

/* Writes all of data to fd, retrying short writes and EINTR. Returns 0 or AR_EIO. */
int ar_write_all(int fd, const void *data, size_t len);

/*
 * Creates a new file 0600 under $TMPDIR (or /tmp) named agentrun-<tag>-XXXXXX
 * holding data. Returns the path (caller unlink()s and free()s) or NULL with err set.
 */
char *ar_file_write_temp(const char *tag, const void *data, size_t len, struct ar_error *err);

/* Non-zero when path exists and is a directory / a regular file. */
int ar_is_dir(const char *path);

/*
 * 0 when path is a directory this process can enter; else AR_EUSAGE with err
 * saying which: "no such directory 'x'", "'x' is not a directory" or "cannot
 * enter directory 'x': Permission denied".
 */
int ar_dir_check(const char *path, struct ar_error *err);
int ar_is_file(const char *path);

#endif
