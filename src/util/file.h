/* File helpers: whole-file reads with a cap, atomic writes, temp files. */
#ifndef AR_UTIL_FILE_H
#define AR_UTIL_FILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "agentrun/error.h"
#include "util/buf.h"

/*
 * Files agentrun reads on the user's behalf (PRDs, manifests, instructions, prompt
 * templates, schemas, inputs…) are read by the three functions below (or mapped by
 * ar_file_view_open()), and by no other open(): whatever names them, a checkout can
 * have put a link or a FIFO at that name.
 *
 *   - only a regular file is read: a FIFO, a device, a socket or a directory is refused
 *     (a FIFO without a writer would block agentrun, /dev/zero would never end);
 *   - a symbolic link is followed only while it stays inside the folder of the name
 *     (for "prds/key.md", the folder is "prds"): "notes.md -> v2/notes.md" is read,
 *     "key.md -> ~/.ssh/id_rsa", "env.txt -> /proc/self/environ" and "x.md -> ../x.md"
 *     are refused. The folder part of the name is taken as the user wrote it;
 *   - at most AR_FILE_MAX_BYTES (and no more than out->max allows).
 *
 * Errors: AR_EIO with err saying "cannot read 'prds/key.md': a link out of its folder"
 * (or "a FIFO", "a device", "a directory", the system's reason), AR_ETOOBIG ("'x' is
 * larger than N bytes"), AR_ENOMEM. Bytes are kept as they are (NULs included).
 */
#define AR_FILE_MAX_BYTES ((size_t)256 << 20)

/* Appends the whole of `path` ("-" means standard input, read as it is) to `out`. */
int ar_file_read(const char *path, struct ar_buf *out, struct ar_error *err);

/* Appends the file `rel` (which may hold '/') of the folder `dir` to `out`; messages name
 * it "dir/rel". A PRD folder's files, a prompts directory's templates. */
int ar_file_read_at(const char *dir, const char *rel, struct ar_buf *out, struct ar_error *err);

/* Opens `rel` of the folder `dir` by the same rules and fills *st: for a reader that
 * reads a part itself. The caller close()s *fd (-1 on failure). */
int ar_file_open_at(const char *dir, const char *rel, int *fd, struct stat *st,
                    struct ar_error *err);

/*
 * The user's own configuration (~/.gemini/settings.json, $CODEX_HOME/config.toml, a
 * CLI's session files): a regular file under the cap, but its links are followed
 * wherever they lead (dotfiles are often links into a dotfiles repository).
 */
int ar_file_read_own(const char *path, struct ar_buf *out, struct ar_error *err);
/*
 * A whole file held for reading: a named file by the rules above (only a regular
 * file, links kept inside its folder, at most AR_FILE_MAX_BYTES) is mapped, not
 * copied; standard input ("-") is taken as it is, mapped when it is redirected
 * from a file, else read (past a MiB into memory offered for huge pages).
 * `data` is not NUL-terminated. A mapped file that another process truncates
 * while it is read raises SIGBUS: a caller says so on it.
 */
struct ar_file_view {
    const char *data; /* the bytes */
    size_t len;
    void *map; /* the file's mapping, or the memory a long pipe was read into; or NULL */
    size_t map_len;
    struct ar_buf buf; /* the bytes read, when not mapped */
};

/* Opens `path` ("-" means standard input) as a view. Errors as ar_file_read(). */
int ar_file_view_open(const char *path, struct ar_file_view *v, struct ar_error *err);
void ar_file_view_close(struct ar_file_view *v);

/* Reads an open descriptor to EOF into `out`; same errors as ar_file_read(). */
int ar_file_read_fd(int fd, const char *name, struct ar_buf *out, struct ar_error *err);

/*
 * An output file has one writer (batch -o FILE): opens `path` for appending (created
 * 0666 & ~umask) and takes an exclusive lock at once, or fails at once with AR_EIO
 * "'FILE' is being written by another agentrun: one writer per output file". The lock
 * (flock) lives as long as *fd. A path that exists and is not a regular file (a FIFO,
 * /dev/stdout) is opened as it is, unlocked (*locked 0). Returns 0 or AR_EIO.
 */
int ar_file_open_writer(const char *path, int *fd, int *locked, struct ar_error *err);

/*
 * Replaces the file the locked writer *fd holds with `data`: a temporary file of a
 * unique name in the same directory, locked before it is renamed over `path` (so the
 * path is never unlocked), fsync'd, with the old file's mode. *fd is then the new
 * file's, open for appending. On failure the old file and *fd are untouched. 0 or AR_EIO.
 */
int ar_file_replace_locked(const char *path, const void *data, size_t len, int *fd,
                           struct ar_error *err);

/*
 * Appends all of data to fd, or nothing: when a write fails part way (a full disk, a file
 * size limit), a regular file is cut back to its size before. For the file's one writer.
 * Returns 0, or AR_EIO with errno set.
 */
int ar_file_append_whole(int fd, const void *data, size_t len);

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
 * Creates a new file 0600 named by ar_temp_template(tag) (util/temp.h: under $TMPDIR,
 * swept when a killed process left it) holding data. Returns the path (caller
 * unlink()s and free()s) or NULL with err set.
 */
char *ar_file_write_temp(const char *tag, const void *data, size_t len, struct ar_error *err);

/*
 * Inputs are never outputs: the one check before agentrun writes a file (or a folder of
 * files) it may also read. `out` (named `out_opt` in the message: "-o", "--transcript")
 * is compared with each of the n names in `in` by device and inode, so any path, link or
 * "-" (standard input, when it is a file) to the same file matches; NULL entries and
 * names that do not exist (yet) match nothing. Returns 0, or AR_EUSAGE with err saying
 * "-o 'out.jsonl' is the input 'jobs.jsonl' (the same file): an output is never one of
 * the inputs". Nothing is opened, read or written.
 */
int ar_file_check_output(const char *out_opt, const char *out, const char *const *in, size_t n,
                         struct ar_error *err);

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
