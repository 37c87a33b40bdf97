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
    int git_only;    /* arg is a revision or a range, never a file or "-" (the library's
                        callers read files themselves) */
};

/*
 * Appends the diff to `out` (bounded by out->max). The kinds of source, tried
 * in this order:
 *   - arg "-": standard input (not with git_only);
 *   - arg names an existing regular file: its content (a file wins over a
 *     revision of the same name; not with git_only);
 *   - arg "R^!": the change commit R introduced (against its first parent;
 *     a root commit against the empty tree);
 *   - arg "A..B" / "A...B": `git diff` of the range as given;
 *   - arg "R": `git diff R`, the working tree against R, plus untracked files;
 *   - staged: `git diff --cached`;
 *   - neither: the working tree against HEAD (`git diff HEAD`; the empty tree
 *     before the first commit) plus untracked, not ignored files as new files.
 * git runs only through git/run.h (the supervisor; --no-color --no-ext-diff
 * --no-textconv, core.fsmonitor=false, core.quotepath=false, prefixes pinned). `*label` (may be
 * NULL) receives a description of the source for messages ("HEAD~1", "the working tree"); caller
 * free()s it. Returns 0, AR_EUSAGE (err says "no such file 'x'", "unknown revision 'x'", "not a git
 * repository"), AR_ETOOBIG, AR_EIO, AR_ENOTFOUND (git missing).
 */
int ar_diff_acquire(const struct ar_diff_source *src, struct ar_buf *out, char **label,
                    struct ar_error *err);

/*
 * The top of the git work tree cwd (NULL: the current directory) is in, in
 * *top (a new string), or *top NULL when it is in none or git is missing.
 * Returns 0, or AR_ENOMEM / AR_EIO.
 */
int ar_diff_toplevel(const char *cwd, char **top, struct ar_error *err);

/*
 * Appends the content of "REV:PATH" as committed (git cat-file blob), run in
 * cwd (NULL: the current directory), to out. What a pull request cannot
 * change: its base revision's copy. Returns 0, AR_EUSAGE (not REV:PATH, not
 * a git repository, no such revision or path: err says which), AR_ETOOBIG
 * (past out->max), AR_EIO, AR_ENOTFOUND (git missing).
 */
int ar_diff_read_blob(const char *cwd, const char *spec, struct ar_buf *out, struct ar_error *err);

/* One file of a diff: byte offsets into the parsed text. */
struct ar_diff_file {
    char *path; /* owned: the new path (the diff's prefix removed), the old one for a deletion */
    char *old_path; /* owned: the old path when it differs (rename, copy), else NULL */
    size_t start;   /* the section's first byte */
    size_t end;     /* one past its last byte */
    size_t body;    /* the first hunk's first byte (== end when there is no hunk) */
    size_t *hunks;  /* owned: the first byte of each hunk, n_hunks entries */
    size_t n_hunks;
    int binary;       /* "Binary files … differ" or "GIT binary patch" */
    size_t binary_at; /* with binary: the first byte of that line */
    /* The parser's own: names as the headers write them, prefixes included,
     * NULL once ar_diff_parse() returns. */
    char *hdr_old, *hdr_new; /* "--- X" / "+++ Y" (NULL: /dev/null) */
    char *git_old, *git_new; /* "diff --git X Y" */
    int has_hdr;             /* the section has "---"/"+++" lines */
    int named;               /* "rename from/to" or "copy from/to" named it */
};

struct ar_diff {
    const char *text; /* borrowed from the caller of ar_diff_parse() */
    size_t len;
    size_t preamble; /* bytes before the first file (a commit message, mail headers) */
    struct ar_diff_file *files;
    size_t n_files;
    /* owned: the prefixes the diff's headers show ("a/" and "b/"; "" and ""
     * for --no-prefix), NULL when no file shows them */
    char *src_prefix, *dst_prefix;
};

#define AR_DIFF_INIT                    \
    {                                   \
        NULL, 0, 0, NULL, 0, NULL, NULL \
    }

/*
 * Parses a unified diff: git sections ("diff --git", also --cc/--combined)
 * and plain patches ("--- a/x" then "+++ b/x"). Hunk line counts are
 * honoured, so a removed line that reads "-- x" never starts a new file.
 * File names lose only the diff's own prefixes, as its headers show them:
 * the part in front of the common tail of a file's two names ("a/x" "b/x":
 * a/ and b/; --no-prefix: none; --src-prefix=old/ --dst-prefix=new/: those),
 * or in front of the bare names of "rename from/to". A file whose names show
 * nothing (a new file of a plain patch) takes the prefixes another file
 * showed, or git's default a/ and b/. One limit: identical custom prefixes
 * on both sides (--src-prefix=x/ --dst-prefix=x/) read as none.
 * `text` is borrowed and must outlive `out`. Never fails on odd input (what
 * is not a diff is preamble); returns 0 or AR_ENOMEM.
 */
int ar_diff_parse(const char *text, size_t len, struct ar_diff *out, struct ar_error *err);

void ar_diff_finish(struct ar_diff *d);

/* 1 when some file has a text hunk; 0 for an empty, binary-only or mode-only diff. */
int ar_diff_reviewable(const struct ar_diff *d);

/* 1 when path is exactly a file of the diff, its new or its old name. */
int ar_diff_has_file(const struct ar_diff *d, const char *path);

/* What ar_diff_locate() made of a path a model gave. */
enum ar_path_where {
    AR_PATH_IN_DIFF = 0, /* a file of the diff */
    AR_PATH_ELSEWHERE,   /* a path in the repository, not a file of the diff */
    AR_PATH_OUTSIDE,     /* absolute, or climbing out with "..": never a location */
};

/*
 * Resolves a path a model wrote (hostile text) to the repository path it
 * means, in this order: "./" and empty or "." components dropped; absolute,
 * "~" or ".." anywhere: AR_PATH_OUTSIDE (*out NULL); a file of the diff as
 * written; a file or folder that exists under root (the repository's top;
 * NULL: not checked) as written; the diff's own prefix (dst, then src; git's
 * a/ and b/ when the diff shows none) removed, when that leaves a file of the
 * diff; the one file of the diff whose path ends with "/" + path; else the
 * path as written, AR_PATH_ELSEWHERE. So "b/app.c" stays "b/app.c" when that
 * is a file of the diff or of the tree, and means "app.c" only when it is not.
 * *out is a new string (free()). Returns an ar_path_where, or AR_ENOMEM.
 */
int ar_diff_locate(const struct ar_diff *d, const char *root, const char *path, char **out);

/*
 * Which files a review skips (--exclude, --include). A glob without '/'
 * matches the file name (last component): "*.lock"; one with '/' matches the
 * whole path from the repository root, '*' crossing '/' too: "vendor/x*",
 * "src/gen/x*.c" ("x*": any name starting with x); a trailing '/' means
 * everything under that folder: "vendor/". With includes, only files matching one are reviewed;
 * excludes, and unless no_defaults the lockfiles of ar_path_default_excludes, are then skipped.
 * Every pointer is borrowed.
 */
struct ar_path_filter {
    const char *const *include;
    size_t n_include;
    const char *const *exclude;
    size_t n_exclude;
    int no_defaults;
};

/* The default excludes: lockfiles and other generated dependency pins, NULL-terminated. */
extern const char *const ar_path_default_excludes[];

/* 1 when glob (the forms above) matches path. */
int ar_path_glob_match(const char *glob, const char *path);

/* 1 when the filter skips path. */
int ar_path_filter_skips(const struct ar_path_filter *pf, const char *path);

/*
 * Appends d's text without the sections of the files pf skips (the preamble
 * kept) to out, to be parsed again; *n_skipped (may be NULL) gets how many
 * were left out. Returns 0, AR_ENOMEM or AR_ETOOBIG.
 */
int ar_diff_filter(const struct ar_diff *d, const struct ar_path_filter *pf, struct ar_buf *out,
                   size_t *n_skipped);

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
