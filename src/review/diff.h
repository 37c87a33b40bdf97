/*
 * Diffs for `agentrun review`: where the diff comes from, what files it
 * touches, what of them is text, and how a large one is cut into chunks a
 * model can review.
 *
 * Protocol:
 *   1. ar_diff_acquire() reads a diff file, stdin, or asks git (through the
 *      supervisor) for a revision, a range, the index or the working tree;
 *   2. ar_diff_parse() finds the file sections and their hunks, and judges
 *      each file's content: text or binary;
 *   3. the review decides per file what is sent (src/review/coverage.c);
 *   4. ar_diff_split() cuts what is sent into chunks of at most max_bytes at
 *      file boundaries, a single large file at hunk boundaries;
 *   5. ar_diff_chunks_free(), ar_diff_finish().
 */
#ifndef AR_REVIEW_DIFF_H
#define AR_REVIEW_DIFF_H

#include <stddef.h>

#include "agentrun/error.h"
#include "agentrun/review.h"
#include "util/buf.h"

#define AR_DIFF_DEFAULT_MAX_CHUNK ((size_t)200 << 10)

/* The largest diff agentrun reads (a file, stdin or git's output). */
#define AR_DIFF_MAX_BYTES AR_REVIEW_MAX_DIFF

struct ar_diff;

/* Where the diff comes from. */
struct ar_diff_source {
    const char *arg; /* DIFF operand: a file, "-", a revision or a range; NULL: working tree */
    int staged;      /* --staged: the index against HEAD (arg must be NULL) */
    const char *cwd; /* where git runs (-C DIR); NULL: the current directory. Files
                        named by arg are relative to the current directory. */
    int git_only;    /* arg is a revision or a range, never a file or "-" (the library's
                        callers read files themselves) */
};

/* A changed path the diff cannot show (an untracked nested repository). */
struct ar_diff_gap {
    char *path;
    char *why;
};

/* The gaps of one acquisition: owned, freed with ar_diff_gaps_finish(). */
struct ar_diff_gaps {
    struct ar_diff_gap *v;
    size_t n;
};

void ar_diff_gaps_finish(struct ar_diff_gaps *g);

/* Adds path (copied) and why to g; with g NULL, AR_EIO "cannot diff 'path': why".
 * Returns 0, AR_ENOMEM or AR_EIO, with err set. */
int ar_diff_gap_add(struct ar_diff_gaps *g, const char *path, const char *why,
                    struct ar_error *err);

/*
 * The paths are git's (names.c): a changed path as git's own -z output names it,
 * byte for byte, never read back from the patch text.
 */
struct ar_diff_name {
    char status;    /* git's letter: A C D M R T U */
    char *path;     /* owned: the new path; the old one for a deletion */
    char *old_path; /* owned: the source of a rename or copy, else NULL */
    /* The old side's blob as git's raw record names it (hex), "" when there is none
     * (an addition) or it is unknown: what the old content was (whole.c). */
    char old_oid[72];
};

/* Where the new side of a diff git made lies: what ar_diff_whole() diffs against the
 * empty tree to show a file's new content whole. */
enum ar_diff_new_side {
    AR_DIFF_NEW_NONE = 0, /* not a diff git made (a patch file, stdin) */
    AR_DIFF_NEW_WORKTREE, /* the working tree (no DIFF, a single revision) */
    AR_DIFF_NEW_INDEX,    /* the index (--staged) */
    AR_DIFF_NEW_REV,      /* a revision: new_rev (B of A..B and A...B, R of R^!) */
};

/* The names of one acquisition, in the patch's order. given: git made the diff, so
 * these (and nothing read from the text) name its files. */
struct ar_diff_names {
    struct ar_diff_name *v;
    size_t n;
    int given;
    int new_side;  /* enum ar_diff_new_side */
    char *new_rev; /* owned: AR_DIFF_NEW_REV's revision ("HEAD" for an empty side) */
    char *cwd;     /* owned: where git ran (NULL: the current directory) */
};

void ar_diff_names_finish(struct ar_diff_names *names);

/* Appends an entry (path and old_path copied) and sets given. Returns 0 or AR_ENOMEM. */
int ar_diff_names_add(struct ar_diff_names *names, char status, const char *path,
                      const char *old_path);

/*
 * Reads the raw records at the start of `git diff --patch-with-raw -z` output
 * (data[0..len), borrowed) into names (sets given), and where the patch begins
 * into *patch_at. Returns 0, AR_ENOMEM, or AR_EIO when the records are malformed.
 */
int ar_diff_names_parse_raw(const char *data, size_t len, struct ar_diff_names *names,
                            size_t *patch_at, struct ar_error *err);

/* Appends prefix + name to out as git writes it in a patch with core.quotepath=false:
 * as is, or C-quoted ("a/x\ty") when it holds a control byte, '"' or '\'. */
int ar_diff_quote_name(struct ar_buf *out, const char *prefix, const char *name);

/*
 * Names the file sections of d (parsed from the patch that came with names) with
 * git's names, in order: each entry's section(s) must begin with exactly the
 * "diff --git" line git writes for its names (a type change has two sections); an
 * unmerged path with no section is added to gaps. Nothing to do when !names->given.
 * Returns 0, AR_ENOMEM, or AR_EIO when the list and the patch disagree (err says where).
 */
int ar_diff_names_apply(struct ar_diff *d, const struct ar_diff_names *names,
                        struct ar_diff_gaps *gaps, struct ar_error *err);

/*
 * The new side of each of the n paths (as git names them, borrowed) whole, as
 * additions: `git diff --patch-with-raw -z --no-renames` of the empty tree against
 * the new side names->new_side says, limited to those paths (literal pathspecs from
 * the top), appended to out, and their names to `whole` (each an 'A'). For a file the
 * gate cannot call reviewed from its diff alone (whole.c). Returns 0, AR_EUSAGE when
 * git did not make the diff, AR_ETOOBIG, AR_EIO (git failed), AR_ENOMEM, AR_ENOTFOUND.
 */
int ar_diff_whole(const struct ar_diff_names *names, const char *const *paths, size_t n,
                  struct ar_buf *out, struct ar_diff_names *whole, struct ar_error *err);

/* Called by ar_diff_read_blobs() with each blob's content (borrowed for the call); data
 * is NULL when the blob is larger than the limit (size then its size) or missing (size
 * 0). Returns 0, or non-zero to stop (that value is returned). */
typedef int ar_diff_blob_fn(void *arg, size_t i, const char *data, size_t size);

/*
 * Reads the n blobs oids[] (hex, borrowed) of the repository at cwd with `git
 * cat-file`, the content of none larger than limit, and calls fn(arg, i, …) for each
 * in order. Returns 0, fn's non-zero, AR_EIO (git failed or its output is malformed),
 * AR_ENOMEM, AR_ENOTFOUND.
 */
int ar_diff_read_blobs(const char *cwd, const char *const *oids, size_t n, size_t limit,
                       ar_diff_blob_fn *fn, void *arg, struct ar_error *err);

struct ar_diff;

/*
 * The one rule for what a file's diff shows (whole.c, issue 57 #1): a file counts as
 * reviewed only if the model saw all of its new content, or its old content was
 * itself reviewable and the diff shows the rest. A modification, rename or copy
 * whose old side the review could not have read (left out by a rule of pf by its old
 * name; its old content binary, a Git LFS pointer, or larger than max_hunk as an
 * addition) and whose new name no rule leaves out is, when git made the diff
 * (names->given), sent whole: its section becomes git's addition of its new side
 * (ar_diff_whole()), appended to text (NULs turned to U+FFFD, counted in *nul_bytes),
 * d re-pointed at it (whole 1); in a patch it is marked whole -1. Returns 0,
 * AR_ENOMEM, or git's error (AR_EIO…).
 */
struct ar_path_filter;
int ar_diff_old_sides(struct ar_diff *d, struct ar_buf *text, const struct ar_diff_names *names,
                      const struct ar_path_filter *pf, size_t max_hunk, size_t *nul_bytes,
                      struct ar_error *err);

/*
 * A patch on stdin or in a file, as git would apply it (patch.c): the parts of the
 * review's text that are patches (one per message of a mailbox, or the whole input),
 * each with the files git apply lists for it (path; old_path for a rename or copy).
 */
struct ar_patch_part {
    size_t start, end; /* the part's patch in the (rewritten) text */
    struct ar_diff_names names;
};

struct ar_patch_series {
    struct ar_patch_part *v;
    size_t n;
    int mailbox; /* the input was mail: split and decoded as git am does */
};

void ar_patch_series_finish(struct ar_patch_series *ps);

/*
 * Reads the patch text (borrowed; rewritten in place) as git does, running git in cwd
 * (NULL: the current directory): a mailbox is split and decoded (git mailsplit, git
 * mailinfo) and text becomes what the model reads of it (each message's headers,
 * text, "---" and patch); each patch's files come from `git apply --numstat -z` (and
 * -R for the old names) into ps. NULs in text become U+FFFD, counted in *nul_bytes.
 * Returns 0, AR_EUSAGE (input git cannot read, a transfer encoding git cannot decode,
 * a multipart MIME message: err says which), AR_ETOOBIG, AR_EIO, AR_ENOMEM,
 * AR_ENOTFOUND (no git).
 */
int ar_patch_read(struct ar_buf *text, const char *cwd, struct ar_patch_series *ps,
                  size_t *nul_bytes, struct ar_error *err);

/*
 * Names the file sections of d (parsed from the text ar_patch_read() made) by git's
 * lists: each file git lists is the next section of its part with that path (the old
 * name set from git's), one that no section is becomes a gap in gaps; a section git
 * does not list changes no file, and its bytes join the section before it (or the
 * preamble). Returns 0, AR_ENOMEM.
 */
int ar_patch_apply(struct ar_diff *d, const struct ar_patch_series *ps, struct ar_diff_gaps *gaps,
                   struct ar_error *err);

/*
 * Appends the diff to `out` (bounded by out->max). The kinds of source, tried
 * in this order:
 *   - arg "-": standard input (not with git_only);
 *   - arg names an existing regular file: its content (not with git_only; a
 *     caller that takes a file refuses first a name that is also a revision,
 *     ar_review_is_revision(), as `agentrun review` does: the checkout cannot
 *     choose);
 *   - arg "R^!": the change commit R introduced (against its first parent;
 *     a root commit against the empty tree);
 *   - arg "A..B" / "A...B": `git diff` of the range as given;
 *   - arg "R": `git diff R`, the working tree against R, plus untracked files;
 *   - staged: `git diff --cached`;
 *   - neither: the working tree against HEAD (`git diff HEAD`; the empty tree
 *     before the first commit) plus untracked, not ignored files as new files.
 * git runs only through git/run.h (the supervisor; --no-color --no-ext-diff
 * --no-textconv --text, core.fsmonitor=false, core.quotepath=false, prefixes
 * pinned), so no attribute, driver or filter of the checkout's decides what
 * is shown or run. An untracked path git cannot diff (a nested repository)
 * is added to `gaps` (may be NULL: then it is an error). When git made the
 * diff, `names` (may be NULL) receives git's own names of its files
 * (ar_diff_names_apply()); a file, stdin or "-" leave it untouched. An
 * untracked symlink is shown as git shows a tracked one: its target, as the
 * content of a new file of mode 120000. A git that fails,
 * or that says it failed on stderr, is AR_EIO: never a shorter diff.
 * `*label` (may be NULL) receives a description of the source for messages
 * ("HEAD~1", "the working tree"); caller free()s it. Returns 0, AR_EUSAGE (err
 * says "no such file 'x'", "unknown revision 'x'", "not a git repository"),
 * AR_ETOOBIG, AR_EIO, AR_ENOTFOUND (git missing).
 */
int ar_diff_acquire(const struct ar_diff_source *src, struct ar_buf *out, char **label,
                    struct ar_diff_gaps *gaps, struct ar_diff_names *names, struct ar_error *err);

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

/*
 * 1 when spec has the form REV:PATH (REV not starting with '-', '.' or '/')
 * and cwd is in a git work tree: git's objects, never a file of the checkout,
 * are what it means, whether or not REV exists (a missing one is an error of
 * ar_diff_read_blob(), not a fall back to a file of that name; a file is
 * named ./REV:PATH). 0 when not, or a negative AR_E… code (git missing: 0).
 */
int ar_diff_is_blob_spec(const char *cwd, const char *spec, struct ar_error *err);

/*
 * The one reader of a review control (the instructions, a baseline): spec is
 * REV:PATH (ar_diff_is_blob_spec(), or a name with a colon that is no file) read
 * from git's objects, else a file (relative to base; NULL: the process's
 * directory). Either must lie within share's directories (share.h; NULL or none:
 * anywhere): PATH as git resolves it, the file as the kernel does. Appends it to
 * out; *file (may be NULL) gets the file's name as read (base and spec joined, not
 * resolved: the controls check follows its links itself; free()), or NULL when it
 * came from git. Returns 0 or a negative AR_E… code as ar_diff_read_blob() and
 * ar_file_read(), or AR_EUSAGE (err.where "dirs") outside the directories.
 */
struct ar_share;
int ar_review_read_spec(const struct ar_share *share, const char *cwd, const char *base,
                        const char *spec, struct ar_buf *out, char **file, struct ar_error *err);

/* 1 when ar_review_read_spec() reads spec from git's objects, 0 when from a file,
 * or a negative AR_E… code. */
int ar_review_spec_is_git(const char *cwd, const char *spec, struct ar_error *err);

/* Whether a name is a revision: ar_review_is_revision() (public, agentrun/review.h). */

/* Why a file of a diff is binary (ar_diff_file.binary). */
enum ar_diff_binary {
    AR_DIFF_BINARY_SAID = 1, /* "Binary files … differ": the diff holds no content */
    AR_DIFF_BINARY_PATCH,    /* "GIT binary patch": base85 data, not text */
    AR_DIFF_BINARY_CONTENT,  /* its hunks' content is binary (ar_diff_text_is_binary()) */
    AR_DIFF_BINARY_LFS,      /* its new content is a Git LFS pointer: the content is not in git */
};

/*
 * 1 when the new content the hunk text p (n bytes) shows is a Git LFS pointer, added
 * or modified: its '+' and ' ' lines hold "oid sha256:<64 hex>" and the "version
 * https://git-lfs.github.com/spec/…" line or a "size N" line. The file's content
 * lives on an LFS server: the diff shows a pointer, never what a checkout with LFS
 * gets, so the file cannot be reviewed.
 */
int ar_diff_new_is_lfs_pointer(const char *p, size_t n);

/* The same judges of a file's whole content (not hunk lines): binary as
 * ar_diff_text_is_binary() counts it, a Git LFS pointer as above. */
int ar_diff_content_is_binary(const char *p, size_t n);
int ar_diff_content_is_lfs_pointer(const char *p, size_t n);

/*
 * What is text, decided by agentrun rather than by the checkout: the content
 * of a file's hunk lines (what follows each line's ' ', '+' or '-') is binary
 * when more than AR_DIFF_BINARY_CONTROL_PERCENT percent of its bytes are
 * control characters (C0 other than tab, line feed, vertical tab, form feed,
 * carriage return and escape; DEL), or more than
 * AR_DIFF_BINARY_INVALID_PERCENT percent are bytes of invalid UTF-8 (text in
 * a legacy encoding, Latin-1, stays text). NUL bytes (and U+FFFD, which a NUL
 * becomes) count for nothing either way, so a file that is text apart from
 * NULs is text. p[0..n) is the file's section from its first hunk. Returns 1
 * for binary, 0 for text.
 */
#define AR_DIFF_BINARY_CONTROL_PERCENT 2
#define AR_DIFF_BINARY_INVALID_PERCENT 30
int ar_diff_text_is_binary(const char *p, size_t n);

/* One file of a diff: byte offsets into the parsed text. */
struct ar_diff_file {
    char *path; /* owned: the new path (the diff's prefix removed), the old one for a deletion */
    char *old_path; /* owned: the old path when it differs (rename, copy), else NULL */
    size_t start;   /* the section's first byte */
    size_t end;     /* one past its last byte */
    size_t body;    /* the first hunk's first byte (== end when there is no hunk) */
    size_t *hunks;  /* owned: the first byte of each hunk, n_hunks entries */
    size_t n_hunks;
    int binary;          /* enum ar_diff_binary: 0 for text */
    size_t binary_at;    /* with binary: the first byte not sent (that line, or the first hunk) */
    size_t largest_hunk; /* the size of its largest hunk, in bytes */
    /* The parser's own: names as the headers write them, prefixes included,
     * NULL once ar_diff_parse() returns. */
    char *hdr_old, *hdr_new; /* "--- X" / "+++ Y" (NULL: /dev/null) */
    char *git_old, *git_new; /* "diff --git X Y" */
    int has_hdr;             /* the section has "---"/"+++" lines */
    int named;               /* "rename from/to" or "copy from/to" named it */
    /* git's names (names.c): its status letter ('\0' for a patch) and its old side's
     * blob ("" when there is none or it is unknown). */
    char status;
    char old_oid[72];
    /* whole.c: 0, the section as the diff gave it; 1, the new side sent whole, as an
     * addition, in place of it (its old side could not have been reviewed); -1, it
     * cannot count as reviewed (the same, in a patch that does not hold the new side
     * whole). whole_why (owned) says why, or is NULL. */
    int whole;
    char *whole_why;
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
 * Whether the filter skips path, and by which rule: 0 when it does not; 1
 * when it does, with the rule appended to `rule` (may be NULL) as the user
 * gave it: "--exclude vendor/", "--include: no GLOB matches", "default
 * exclude package-lock.json"; a negative AR_E… code when appending failed.
 */
int ar_path_filter_rule(const struct ar_path_filter *pf, const char *path, struct ar_buf *rule);

/* How ar_diff_split() treats one file's section. */
enum ar_diff_send {
    AR_DIFF_SEND_WHOLE = 0, /* every byte of it; it needs a model call */
    AR_DIFF_SEND_STUB,      /* its header and one "Binary files … differ" line (a binary
                               or too large file the model is told about, never a call of
                               its own) */
    AR_DIFF_SEND_NONE,      /* nothing: left out by the filter */
};

struct ar_diff_chunk {
    char *text; /* owned, NUL-terminated */
    size_t len;
    size_t first_file; /* the diff's files in the chunk are the sent ones of */
    size_t last_file;  /* first_file..last_file (indices into the diff) */
    int piece;         /* a piece of one large file: 1..n_pieces; 0 when whole files */
    int n_pieces;
};

/*
 * Cuts what d sends into chunks of at most max_bytes (> 0). send[i] says how
 * file i is sent (NULL: every file whole, but a binary one as a stub):
 * whole sections packed in order; a file larger than max_bytes becomes pieces
 * cut at hunk boundaries, each repeating the file's header (a single hunk
 * larger than max_bytes stays whole: a hunk is never cut). Every byte of a
 * whole section goes into the chunks, header and hunks, nothing else of it.
 * Stub sections never make a chunk: they ride with the next chunk that holds
 * a whole section, or the last one, and there is no chunk at all when no
 * section is sent whole. The preamble goes with the first chunk. *out is a
 * new array (ar_diff_chunks_free()). Returns 0 or AR_ENOMEM.
 */
int ar_diff_split(const struct ar_diff *d, size_t max_bytes, const unsigned char *send,
                  struct ar_diff_chunk **out, size_t *n_out, struct ar_error *err);

void ar_diff_chunks_free(struct ar_diff_chunk *chunks, size_t n);

#endif
