/*
 * Diffs for `agentrun review`: where the diff comes from, what files it
 * touches, and how a large one is cut into chunks a model can review.
 *
 * Protocol:
 *   1. ar_diff_acquire() reads a diff file, stdin, or asks git (through the
 *      supervisor) for a revision, a range, the index or the working tree;
 *   2. ar_diff_parse() finds the file sections and their hunks;
 *   3. ar_diff_reviewable() says whether there is anything to review at all
 *      (an empty or binary-only diff is not);
 *   4. ar_diff_split() cuts the diff into chunks of at most max_bytes at file
 *      boundaries, a single large file at hunk boundaries;
 *   5. ar_diff_chunks_free(), ar_diff_finish().
 */
#ifndef AR_REVIEW_DIFF_H
#define AR_REVIEW_DIFF_H

#include <stddef.h>

#include "agentrun/error.h"
#include "util/buf.h"

#define AR_DIFF_DEFAULT_MAX_CHUNK ((size_t)200 << 10)

/* The largest diff agentrun reads (a file, stdin or git's output). */
#define AR_DIFF_MAX_BYTES ((size_t)256 << 20)

/* Where the diff comes from. */
struct ar_diff_source {
    const char *arg; /* DIFF operand: a file, "-", a revision or a range; NULL: working tree */
    int staged;      /* --staged: the index against HEAD (arg must be NULL) */
    const char *cwd; /* where git runs (-C DIR); NULL: the current directory. Files
                        named by arg are relative to the current directory. */
};

/*
 * Appends the diff to `out` (bounded by out->max). The kinds of source, tried
 * in this order:
 *   - arg "-": standard input;
 *   - arg names an existing regular file: its content (a file wins over a
 *     revision of the same name);
 *   - arg "R^!": the change commit R introduced (against its first parent;
 *     a root commit against the empty tree);
 *   - arg "A..B" / "A...B": `git diff` of the range as given;
 *   - arg "R": `git diff R`, the working tree against R, plus untracked files;
 *   - staged: `git diff --cached`;
 *   - neither: the working tree against HEAD (`git diff HEAD`; the empty tree
 *     before the first commit) plus untracked, not ignored files as new files.
 * git runs only through the supervisor, with --no-color --no-ext-diff
 * --no-textconv, core.fsmonitor=false and core.quotepath=false. `*label` (may be NULL) receives a description of the
 * source for messages ("HEAD~1", "the working tree"); caller free()s it.
 * Returns 0, AR_EUSAGE (err says "no such file 'x'", "unknown revision 'x'",
 * "not a git repository"), AR_ETOOBIG, AR_EIO, AR_ENOTFOUND (git missing).
 */
int ar_diff_acquire(const struct ar_diff_source *src, struct ar_buf *out, char **label,
                    struct ar_error *err);

/* One file of a diff: byte offsets into the parsed text. */
struct ar_diff_file {
    char *path;     /* owned: the new path ("b/" prefix removed), the old one for a deletion */
    char *old_path; /* owned: the old path when it differs (rename, copy, deletion), else NULL */
    size_t start;   /* the section's first byte */
    size_t end;     /* one past its last byte */
    size_t body;    /* the first hunk's first byte (== end when there is no hunk) */
    size_t *hunks;  /* owned: the first byte of each hunk, n_hunks entries */
    size_t n_hunks;
    int binary;       /* "Binary files … differ" or "GIT binary patch" */
    size_t binary_at; /* with binary: the first byte of that line */
};

struct ar_diff {
    const char *text; /* borrowed from the caller of ar_diff_parse() */
    size_t len;
    size_t preamble; /* bytes before the first file (a commit message, mail headers) */
    struct ar_diff_file *files;
    size_t n_files;
};

#define AR_DIFF_INIT        \
    {                       \
        NULL, 0, 0, NULL, 0 \
    }

/*
 * Parses a unified diff: git sections ("diff --git", also --cc/--combined)
 * and plain patches ("--- a/x" then "+++ b/x"). Hunk line counts are
 * honoured, so a removed line that reads "-- x" never starts a new file.
 * `text` is borrowed and must outlive `out`. Never fails on odd input (what
 * is not a diff is preamble); returns 0 or AR_ENOMEM.
 */
int ar_diff_parse(const char *text, size_t len, struct ar_diff *out, struct ar_error *err);

void ar_diff_finish(struct ar_diff *d);

/* 1 when some file has a text hunk; 0 for an empty, binary-only or mode-only diff. */
int ar_diff_reviewable(const struct ar_diff *d);

/* 1 when path (normalized: "./", "a/", "b/" prefixes dropped) is a file of the diff,
 * old or new name, or a diff path ends with "/" + path. */
int ar_diff_has_file(const struct ar_diff *d, const char *path);

/* A path with a leading "./" (repeated) and then one "a/" or "b/" removed. Borrowed
 * from `path`. */
const char *ar_diff_path_normalize(const char *path);

struct ar_diff_chunk {
    char *text; /* owned, NUL-terminated */
    size_t len;
    size_t first_file; /* index of its first file in the diff */
    size_t n_files;    /* files (or pieces of one file) it holds */
    int piece;         /* a piece of one large file: 1..n_pieces; 0 when whole files */
    int n_pieces;
};

/*
 * Cuts the reviewable part of d into chunks of at most max_bytes (> 0):
 * whole file sections packed in order; a file larger than max_bytes becomes
 * pieces cut at hunk boundaries, each repeating the file's header (a single
 * hunk larger than max_bytes stays whole: a hunk is never cut). Sections
 * without a text hunk (binary, mode-only) never make a chunk of their own:
 * they ride with the next text chunk, or the last one. A "GIT binary patch"
 * payload is replaced by "Binary files differ"; "Binary files … differ" lines
 * stay. The preamble goes with the first chunk. *out is a new array
 * (ar_diff_chunks_free()). Returns 0 or AR_ENOMEM.
 */
int ar_diff_split(const struct ar_diff *d, size_t max_bytes, struct ar_diff_chunk **out,
                  size_t *n_out, struct ar_error *err);

void ar_diff_chunks_free(struct ar_diff_chunk *chunks, size_t n);

#endif
