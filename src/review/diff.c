/*
 * Where a review's diff comes from: a file, stdin, or git. git runs only
 * through git/run.h (the supervisor, argv, never a shell, no program the
 * repository's config names), with the output configuration pinned so that
 * user settings cannot change what the parser sees.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git.h"
#include "git/run.h"
#include "review/diff.h"
#include "run/share.h"
#include "util/file.h"
#include "util/strv.h"

struct git_out {
    struct ar_child_sync s;
    int status;
};

/* Runs git (git/run.h, with the output pinned for the diff parser) and `args`
 * in cwd; captures stdout (up to AR_DIFF_MAX_BYTES). A non-zero exit is not an
 * error here: callers decide. */
static int git_run(const char *cwd, const char *const *args, const char *stdin_data,
                   struct git_out *out, struct ar_error *err)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.args = args;
    cmd.cwd = cwd;
    cmd.stdin_data = stdin_data;
    cmd.stdin_len = stdin_data ? strlen(stdin_data) : 0;
    cmd.output_cap = AR_DIFF_MAX_BYTES;
    cmd.flags = AR_GIT_PIN_OUTPUT;
    int rc = ar_git_run(&cmd, &out->s, err);
    if (rc)
        return rc;
    if (out->s.res.end == AR_CHILD_TOOBIG) {
        ar_child_sync_finish(&out->s);
        return ar_error_set(err, AR_ETOOBIG, "git", "the diff is larger than %zu bytes",
                            AR_DIFF_MAX_BYTES);
    }
    out->status = out->s.res.status;
    return 0;
}

/* The first line of git's stderr, for messages. */
static const char *git_reason(const struct git_out *g, char *buf, size_t n)
{
    ar_git_stderr_line(g->s.res.stderr_tail, g->s.res.stderr_tail_len, buf, n);
    return buf[0] ? buf : "git failed";
}

/* 1 when cwd is inside a git work tree, 0 when not. */
static int in_work_tree(const char *cwd, struct ar_error *err)
{
    static const char *const args[] = { "rev-parse", "--is-inside-work-tree", NULL };
    struct git_out g;
    int rc = git_run(cwd, args, NULL, &g, err);
    if (rc)
        return rc;
    int yes = g.status == 0 && g.s.stdout_data && strncmp(g.s.stdout_data, "true", 4) == 0;
    ar_child_sync_finish(&g.s);
    return yes;
}

/* 1 when rev names a commit, 0 when not, or an error. */
static int rev_exists(const char *cwd, const char *rev, struct ar_error *err)
{
    char *spec = malloc(strlen(rev) + sizeof("^{commit}"));
    if (!spec)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    strcpy(spec, rev);
    strcat(spec, "^{commit}");
    const char *args[] = { "rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL };
    struct git_out g;
    int rc = git_run(cwd, args, NULL, &g, err);
    free(spec);
    if (rc)
        return rc;
    ar_child_sync_finish(&g.s);
    return g.status == 0;
}

/*
 * Appends git's stdout to out; a non-zero exit (other than ok_status) is
 * AR_EIO. With ok_status (git diff --no-index exits 1 when the files differ,
 * and also when it could not read one), an error on stderr or no output at
 * all is a failure too: a file git could not read is never a shorter diff.
 */
static int git_diff_into(const char *cwd, const char *const *args, int ok_status,
                         struct ar_buf *out, struct ar_diff_names *names, struct ar_error *err)
{
    struct git_out g;
    int rc = git_run(cwd, args, NULL, &g, err);
    if (rc)
        return rc;
    int quiet_fail = ok_status && (g.s.res.stderr_tail_len || !g.s.res.stdout_len);
    if ((g.status != 0 && g.status != ok_status) || quiet_fail) {
        char why[200];
        rc = ar_error_set(err, AR_EIO, "git", "git %s failed: %s", args[0],
                          git_reason(&g, why, sizeof(why)));
    } else if (g.s.res.stdout_len) {
        /* --patch-with-raw -z: git's names of the paths, then the patch. */
        size_t at = 0;
        if (names)
            rc = ar_diff_names_parse_raw(g.s.stdout_data, g.s.res.stdout_len, names, &at, err);
        if (!rc && (rc = ar_buf_append(out, g.s.stdout_data + at, g.s.res.stdout_len - at)))
            rc = ar_error_set(err, rc, "git", "the diff is larger than %zu bytes", out->max);
    }
    ar_child_sync_finish(&g.s);
    return rc;
}

static int usage_not_repo(const char *what, struct ar_error *err)
{
    return ar_error_set(err, AR_EUSAGE, NULL,
                        "%s needs a git work tree: not a git repository (give a diff file or "
                        "'-' for stdin)",
                        what);
}

/* The empty tree's id in this repository's hash (SHA-1 or SHA-256). */
static int empty_tree(const char *cwd, char *oid, size_t n, struct ar_error *err)
{
    static const char *const args[] = { "hash-object", "-t", "tree", "--stdin", NULL };
    struct git_out g;
    int rc = git_run(cwd, args, "", &g, err);
    if (rc)
        return rc;
    size_t len = g.s.stdout_data ? strcspn(g.s.stdout_data, "\n") : 0;
    if (g.status != 0 || len == 0 || len >= n) {
        ar_child_sync_finish(&g.s);
        return ar_error_set(err, AR_EIO, "git", "cannot compute the empty tree id");
    }
    memcpy(oid, g.s.stdout_data, len);
    oid[len] = '\0';
    ar_child_sync_finish(&g.s);
    return 0;
}

void ar_diff_gaps_finish(struct ar_diff_gaps *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++) {
        free(g->v[i].path);
        free(g->v[i].why);
    }
    free(g->v);
    g->v = NULL;
    g->n = 0;
}

int ar_diff_gap_add(struct ar_diff_gaps *g, const char *path, const char *why, struct ar_error *err)
{
    if (!g)
        return ar_error_set(err, AR_EIO, path, "cannot diff '%s': %s", path, why);
    void *nv = realloc(g->v, (g->n + 1) * sizeof(*g->v));
    if (!nv)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    g->v = nv;
    struct ar_diff_gap *gap = &g->v[g->n];
    gap->path = strdup(path);
    gap->why = strdup(why);
    if (!gap->path || !gap->why) {
        free(gap->path);
        free(gap->why);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    g->n++;
    return 0;
}

/*
 * An untracked symlink as git shows a tracked one: a new file of mode 120000 whose
 * content is the link's target. `git diff --no-index` would follow a link to a
 * directory and fail ("Could not access 'link/null'").
 */
static int symlink_diff(const char *path, const char *target, size_t n, struct ar_buf *out,
                        struct ar_diff_names *names)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += target[i] == '\n' || i + 1 == n;
    const char *tab = strchr(path, ' ') ? "\t" : "";
    int rc = ar_buf_puts(out, "diff --git ");
    rc = rc ? rc : ar_diff_quote_name(out, "a/", path);
    rc = rc ? rc : ar_buf_putc(out, ' ');
    rc = rc ? rc : ar_diff_quote_name(out, "b/", path);
    rc = rc ? rc : ar_buf_puts(out, "\nnew file mode 120000\n--- /dev/null\n+++ ");
    rc = rc ? rc : ar_diff_quote_name(out, "b/", path);
    rc = rc ? rc : ar_buf_printf(out, "%s\n", tab);
    if (n) {
        rc = rc ? rc : ar_buf_printf(out, "@@ -0,0 +1%s", lines == 1 ? "" : ",");
        if (!rc && lines != 1)
            rc = ar_buf_printf(out, "%zu", lines);
        rc = rc ? rc : ar_buf_puts(out, " @@\n+");
        for (size_t i = 0; i < n && !rc; i++)
            rc = target[i] == '\n' && i + 1 < n ? ar_buf_puts(out, "\n+")
                                                : ar_buf_putc(out, target[i]);
        if (!rc && target[n - 1] != '\n')
            rc = ar_buf_puts(out, "\n\\ No newline at end of file\n");
    }
    return rc ? rc : ar_diff_names_add(names, 'A', path, NULL);
}

/* One untracked file (path relative to top) as a new file's diff. */
static int untracked_one(const char *top, const char *path, struct ar_buf *out,
                         struct ar_diff_names *names, struct ar_error *err)
{
    char *full = malloc(strlen(top) + strlen(path) + 2);
    if (!full)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    sprintf(full, "%s/%s", top, path);
    struct stat st;
    int link = lstat(full, &st) == 0 && S_ISLNK(st.st_mode);
    if (link) {
        char target[PATH_MAX + 1];
        ssize_t n = readlink(full, target, sizeof(target) - 1);
        free(full);
        if (n < 0)
            return ar_error_set(err, AR_EIO, path, "cannot read the symlink '%s'", path);
        struct ar_diff_names local = { 0 };
        int rc = symlink_diff(path, target, (size_t)n, out, names ? names : &local);
        ar_diff_names_finish(&local);
        if (rc == AR_ETOOBIG)
            return ar_error_set(err, rc, "git", "the diff is larger than %zu bytes", out->max);
        return rc ? ar_error_set(err, rc, NULL, "out of memory") : 0;
    }
    free(full);
    /* `git diff --no-index` exits 1 when the files differ, which they do. */
    const char *args[] = { "diff",
                           "--patch-with-raw",
                           "-z",
                           "--src-prefix=a/",
                           "--dst-prefix=b/",
                           "--no-index",
                           "--",
                           "/dev/null",
                           path,
                           NULL };
    return git_diff_into(top, args, 1, out, names, err);
}

/*
 * Untracked, not ignored files as "new file" diffs: what `git diff` against
 * the working tree leaves out but a review of the working tree must see.
 * Runs at the top level so the paths match those of `git diff`. git lists an
 * untracked nested repository as "dir/": it has no diff here (its files are
 * another repository's), so it is a gap the review reports, never silence.
 */
static int untracked_into(const char *cwd, struct ar_buf *out, struct ar_diff_gaps *gaps,
                          struct ar_diff_names *names, struct ar_error *err)
{
    static const char *const top_args[] = { "rev-parse", "--show-toplevel", NULL };
    struct git_out g;
    int rc = git_run(cwd, top_args, NULL, &g, err);
    if (rc)
        return rc;
    if (g.status != 0 || !g.s.stdout_data) {
        ar_child_sync_finish(&g.s);
        return ar_error_set(err, AR_EIO, "git", "cannot find the top of the work tree");
    }
    char *top = strndup(g.s.stdout_data, strcspn(g.s.stdout_data, "\n"));
    ar_child_sync_finish(&g.s);
    if (!top)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");

    static const char *const ls_args[] = { "ls-files", "--others", "--exclude-standard", "-z",
                                           NULL };
    rc = git_run(top, ls_args, NULL, &g, err);
    if (rc) {
        free(top);
        return rc;
    }
    if (g.status != 0) {
        char why[200];
        rc = ar_error_set(err, AR_EIO, "git", "git ls-files failed: %s",
                          git_reason(&g, why, sizeof(why)));
    }
    const char *p = g.s.stdout_data ? g.s.stdout_data : "";
    const char *end = p + g.s.res.stdout_len;
    for (; !rc && p < end; p += strlen(p) + 1) {
        size_t n = strlen(p);
        if (n && p[n - 1] == '/') {
            rc = ar_diff_gap_add(gaps, p,
                                 "an untracked nested git repository: its files are not in this "
                                 "repository's diff",
                                 err);
            continue;
        }
        rc = untracked_one(top, p, out, names, err);
    }
    ar_child_sync_finish(&g.s);
    free(top);
    return rc;
}

/* git diff <extra…> (the runner adds --no-color --no-ext-diff --no-textconv);
 * extra is NULL-terminated. */
static int diff_cmd(const char *cwd, const char *const *extra, struct ar_buf *out,
                    struct ar_diff_names *names, struct ar_error *err)
{
    /* The prefixes on the command line: diff.srcPrefix and diff.dstPrefix in a user's
     * configuration cannot change the headers names.c checks. */
    /* --no-abbrev: the raw records name each old side's blob whole (whole.c reads it). */
    static const char *const raw[] = { "diff",        "--patch-with-raw", "-z",
                                       "--no-abbrev", "--src-prefix=a/",  "--dst-prefix=b/",
                                       NULL };
    struct ar_strv a = AR_STRV_INIT;
    int rc = ar_strv_pushv(&a, raw);
    if (!rc)
        rc = ar_strv_pushv(&a, extra);
    if (rc) {
        ar_strv_finish(&a);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    rc = git_diff_into(cwd, ar_strv_get(&a), 0, out, names, err);
    ar_strv_finish(&a);
    return rc;
}

static int set_label(char **label, const char *s)
{
    if (label && !(*label = strdup(s)))
        return AR_ENOMEM;
    return 0;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcasecmp(s + n - m, suf) == 0;
}

/* Checks each non-empty side of a range; the first unknown one is the error. */
static int check_sides(const char *cwd, const char *arg, const char *dots, size_t ndots,
                       struct ar_error *err)
{
    char *left = strndup(arg, (size_t)(dots - arg));
    const char *right = dots + ndots;
    if (!left)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    const char *sides[2] = { left, right };
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++) {
        if (!*sides[i])
            continue; /* git reads an empty side as HEAD */
        int ok = rev_exists(cwd, sides[i], err);
        if (ok < 0)
            rc = ok;
        else if (!ok)
            rc = ar_error_set(err, AR_EUSAGE, sides[i], "unknown revision '%s'", sides[i]);
    }
    free(left);
    return rc;
}

/* The change commit R introduced: against its first parent, a root commit
 * against the empty tree. */
static int commit_change(const char *cwd, const char *rev, struct ar_buf *out,
                         struct ar_diff_names *names, struct ar_error *err)
{
    char *parent = malloc(strlen(rev) + 3);
    if (!parent)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    strcpy(parent, rev);
    strcat(parent, "^1");
    int has_parent = rev_exists(cwd, parent, err);
    int rc = has_parent < 0 ? has_parent : 0;
    char oid[128];
    if (!rc && !has_parent) {
        rc = empty_tree(cwd, oid, sizeof(oid), err);
        free(parent);
        parent = rc ? NULL : strdup(oid);
        if (!rc && !parent)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    if (!rc) {
        const char *extra[] = { parent, rev, "--", NULL };
        rc = diff_cmd(cwd, extra, out, names, err);
    }
    free(parent);
    return rc;
}

/* The working tree against base (HEAD, the empty tree or R), untracked files included. */
static int worktree_change(const char *cwd, const char *base, struct ar_buf *out,
                           struct ar_diff_gaps *gaps, struct ar_diff_names *names,
                           struct ar_error *err)
{
    const char *extra[] = { base, "--", NULL };
    int rc = diff_cmd(cwd, extra, out, names, err);
    return rc ? rc : untracked_into(cwd, out, gaps, names, err);
}

/*
 * 1 when s[0..n) can be a revision as git spells one: a ref name (by
 * git-check-ref-format's rules: no component starting with '.', no "//", no
 * leading or trailing '/', no space, control character, '\\', '*', '?' or '[')
 * or a commit id, with ~N, ^N, @{…} (anything inside the braces) after it.
 * "/change.diff" cannot.
 */
static int rev_syntax(const char *s, size_t n)
{
    if (!n || s[0] == '/' || s[0] == '-' || s[0] == '.' || s[n - 1] == '/' || s[n - 1] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *close =
            c == '@' && i + 1 < n && s[i + 1] == '{' ? memchr(s + i, '}', n - i) : NULL;
        if (close) { /* a reflog entry: "main@{1 day ago}" */
            i = (size_t)(close - s);
            continue;
        }
        if (c <= ' ' || c == 0x7f || strchr("\\*?[", c))
            return 0;
        if (c == '/' && (s[i + 1] == '/' || s[i + 1] == '.'))
            return 0;
    }
    return 1;
}

/*
 * The one place that says whether a DIFF operand has the shape of a revision
 * range: "A..B" or "A...B" whose sides are each empty (git reads HEAD) or
 * revision syntax, or "R^!" with R revision syntax. "../change.diff" has not:
 * it is a file, never a range of unknown revisions.
 */
static int range_shape(const char *arg)
{
    size_t n = strlen(arg);
    const char *dots = strstr(arg, "..");
    if (dots) {
        size_t left = (size_t)(dots - arg);
        const char *right = dots + (strncmp(dots, "...", 3) == 0 ? 3 : 2);
        return (!left || rev_syntax(arg, left)) && (!*right || rev_syntax(right, strlen(right)));
    }
    return n > 2 && strcmp(arg + n - 2, "^!") == 0 && rev_syntax(arg, n - 2);
}

/* Says where the new side of the diff git makes lies (names may be NULL); rev[0..n)
 * for AR_DIFF_NEW_REV, "HEAD" when empty. Returns 0 or AR_ENOMEM (err set). */
static int set_new_side(struct ar_diff_names *names, int side, const char *cwd, const char *rev,
                        size_t n, struct ar_error *err)
{
    if (!names)
        return 0;
    names->new_side = side;
    free(names->new_rev);
    free(names->cwd);
    names->new_rev = side == AR_DIFF_NEW_REV ? (n ? strndup(rev, n) : strdup("HEAD")) : NULL;
    names->cwd = cwd ? strdup(cwd) : NULL;
    if ((side == AR_DIFF_NEW_REV && !names->new_rev) || (cwd && !names->cwd))
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    return 0;
}

static int acquire_git(const struct ar_diff_source *src, struct ar_buf *out, char **label,
                       struct ar_diff_gaps *gaps, struct ar_diff_names *names, struct ar_error *err)
{
    const char *cwd = src->cwd;
    const char *arg = src->arg;
    int side = src->staged ? AR_DIFF_NEW_INDEX : AR_DIFF_NEW_WORKTREE;
    const char *new_rev = NULL;
    size_t rev_n = 0;
    if (arg) {
        const char *dots = range_shape(arg) ? strstr(arg, "..") : NULL;
        size_t n = strlen(arg);
        if (dots) {
            side = AR_DIFF_NEW_REV;
            new_rev = dots + (strncmp(dots, "...", 3) == 0 ? 3 : 2);
            rev_n = strlen(new_rev);
        } else if (n > 2 && strcmp(arg + n - 2, "^!") == 0 && range_shape(arg)) {
            side = AR_DIFF_NEW_REV;
            new_rev = arg;
            rev_n = n - 2;
        }
    }
    int set = set_new_side(names, side, cwd, new_rev, rev_n, err);
    if (set)
        return set;
    if (src->staged) {
        int in = in_work_tree(cwd, err);
        if (in <= 0)
            return in < 0 ? in : usage_not_repo("--staged", err);
        const char *extra[] = { "--cached", "--", NULL };
        int rc = diff_cmd(cwd, extra, out, names, err);
        return rc ? rc : set_label(label, "the staged changes");
    }
    if (!arg) {
        int in = in_work_tree(cwd, err);
        if (in <= 0)
            return in < 0 ? in : usage_not_repo("reviewing the working tree", err);
        int born = rev_exists(cwd, "HEAD", err);
        if (born < 0)
            return born;
        char oid[128] = "HEAD";
        if (!born) {
            /* Before the first commit everything in the index and work tree is new. */
            int rc = empty_tree(cwd, oid, sizeof(oid), err);
            if (rc)
                return rc;
        }
        int rc = worktree_change(cwd, oid, out, gaps, names, err);
        return rc ? rc : set_label(label, "the working tree");
    }

    int in = in_work_tree(cwd, err);
    if (in < 0)
        return in;
    /* A directory is neither a patch file nor a revision: say what it is (the patch
     * file test above ran relative to the current directory too). */
    if (!in && ar_is_dir(arg))
        return ar_error_set(err, AR_EUSAGE, arg,
                            "'%s' is a directory, not a patch file or a revision (to review the "
                            "changes of a repository there: -C '%s')",
                            arg, arg);
    if (!in)
        return ar_error_set(err, AR_EUSAGE, arg,
                            "not a git repository, and no such file '%s' (a revision needs a "
                            "git work tree; -C DIR names one)",
                            arg);
    if (has_suffix(arg, ".diff") || has_suffix(arg, ".patch"))
        return ar_error_set(err, AR_EUSAGE, arg, "no such file '%s'", arg);

    int rc;
    const char *dots = range_shape(arg) ? strstr(arg, "..") : NULL;
    size_t n = strlen(arg);
    if (dots) {
        size_t ndots = strncmp(dots, "...", 3) == 0 ? 3 : 2;
        rc = check_sides(cwd, arg, dots, ndots, err);
        if (!rc) {
            const char *extra[] = { arg, "--", NULL };
            rc = diff_cmd(cwd, extra, out, names, err);
        }
    } else if (n > 2 && strcmp(arg + n - 2, "^!") == 0 && range_shape(arg)) {
        char *rev = strndup(arg, n - 2);
        if (!rev)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        int ok = rev_exists(cwd, rev, err);
        if (ok < 0)
            rc = ok;
        else if (!ok)
            rc = ar_error_set(err, AR_EUSAGE, rev, "unknown revision '%s'", rev);
        else
            rc = commit_change(cwd, rev, out, names, err);
        free(rev);
    } else {
        int ok = rev_exists(cwd, arg, err);
        if (ok < 0)
            return ok;
        if (!ok)
            return ar_error_set(err, AR_EUSAGE, arg, "unknown revision '%s' (and no such file)",
                                arg);
        rc = worktree_change(cwd, arg, out, gaps, names, err);
    }
    return rc ? rc : set_label(label, arg);
}

/* The revision part of arg ("R" of "R^!", each side of "A..B"), checked; 1 when known. */
static int revision_known(const char *cwd, const char *arg, struct ar_error *err)
{
    int shaped = range_shape(arg);
    const char *dots = shaped ? strstr(arg, "..") : NULL;
    size_t n = strlen(arg);
    if (dots) {
        struct ar_error quiet = AR_ERROR_INIT;
        size_t ndots = strncmp(dots, "...", 3) == 0 ? 3 : 2;
        int rc = check_sides(cwd, arg, dots, ndots, &quiet);
        if (rc == AR_EUSAGE)
            return 0;
        return rc ? ar_error_set(err, rc, quiet.where, "%s", quiet.msg) : 1;
    }
    if (shaped) {
        char *rev = strndup(arg, n - 2);
        if (!rev)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        int ok = rev_exists(cwd, rev, err);
        free(rev);
        return ok;
    }
    return rev_exists(cwd, arg, err);
}

/* in_work_tree(), with a missing git as "no" (nothing else can name a revision then). */
static int in_work_tree_or_no_git(const char *cwd, struct ar_error *err)
{
    struct ar_error local = AR_ERROR_INIT;
    int in = in_work_tree(cwd, &local);
    if (in == AR_ENOTFOUND)
        return 0;
    if (in < 0 && err)
        *err = local;
    return in;
}

int ar_review_is_revision(const char *cwd, const char *arg, struct ar_error *err)
{
    if (!arg || !*arg || arg[0] == '-')
        return 0;
    int in = in_work_tree_or_no_git(cwd, err);
    int rc = in <= 0 ? in : revision_known(cwd, arg, err);
    if (rc == 0 && in > 0 && range_shape(arg))
        return 2;
    return rc;
}

int ar_diff_acquire(const struct ar_diff_source *src, struct ar_buf *out, char **label,
                    struct ar_diff_gaps *gaps, struct ar_diff_names *names, struct ar_error *err)
{
    if (label)
        *label = NULL;
    if (src->staged && src->arg)
        return ar_error_set(err, AR_EUSAGE, NULL, "--staged takes no DIFF argument");
    if (src->arg && !*src->arg)
        return ar_error_set(err, AR_EUSAGE, NULL, "the DIFF argument is empty");
    if (src->arg && src->arg[0] == '-' && src->arg[1])
        return ar_error_set(err, AR_EUSAGE, src->arg, "unknown option '%s'", src->arg);
    if (src->arg && !src->git_only && (strcmp(src->arg, "-") == 0 || ar_is_file(src->arg))) {
        int rc = ar_file_read(src->arg, out, err);
        /* Unreadable input is a usage error (DESIGN §7). */
        if (rc == AR_EIO && err)
            err->code = AR_EUSAGE;
        if (rc)
            return rc == AR_EIO ? AR_EUSAGE : rc;
        return set_label(label, strcmp(src->arg, "-") == 0 ? "stdin" : src->arg);
    }
    return acquire_git(src, out, label, gaps, names, err);
}

int ar_diff_toplevel(const char *cwd, char **top, struct ar_error *err)
{
    *top = NULL;
    static const char *const args[] = { "rev-parse", "--show-toplevel", NULL };
    struct git_out g;
    int rc = git_run(cwd, args, NULL, &g, err);
    if (rc == AR_ENOTFOUND)
        return 0; /* no git: paths are checked against cwd */
    if (rc)
        return rc;
    if (g.status == 0 && g.s.stdout_data && g.s.res.stdout_len) {
        *top = strndup(g.s.stdout_data, strcspn(g.s.stdout_data, "\n"));
        if (!*top)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    ar_child_sync_finish(&g.s);
    return rc;
}

int ar_diff_is_blob_spec(const char *cwd, const char *spec, struct ar_error *err)
{
    const char *colon = ar_git_rev_path_colon(spec);
    if (!colon || colon == spec || !colon[1] || strchr("-./", spec[0]))
        return 0;
    /* Whether REV exists does not matter: a base revision a shallow clone lacks must
     * fail, not fall back to a file the change may have planted under that name. */
    return in_work_tree_or_no_git(cwd, err);
}

int ar_diff_read_blob(const char *cwd, const char *spec, struct ar_buf *out, struct ar_error *err)
{
    const char *colon = ar_git_rev_path_colon(spec);
    if (!colon || colon == spec || !colon[1] || spec[0] == '-')
        return ar_error_set(err, AR_EUSAGE, NULL, "'%s' is not REV:PATH", spec);
    int rc = in_work_tree(cwd, err);
    if (rc < 0)
        return rc;
    if (!rc)
        return usage_not_repo("REV:PATH", err);
    /* cat-file reads the blob as committed: no textconv, no filters, no work tree. */
    const char *args[] = { "cat-file", "blob", spec, NULL };
    struct git_out g;
    rc = git_run(cwd, args, NULL, &g, err);
    if (rc)
        return rc;
    if (g.status != 0) {
        char why[200];
        rc = ar_error_set(err, AR_EUSAGE, "git",
                          "cannot read '%s' from git: %s (a file of that name: './%s')", spec,
                          git_reason(&g, why, sizeof(why)), spec);
    } else if (g.s.res.stdout_len) {
        rc = ar_buf_append(out, g.s.stdout_data, g.s.res.stdout_len);
        if (rc)
            rc = ar_error_set(err, rc, "git", "'%s' is larger than %zu bytes", spec, out->max);
    }
    ar_child_sync_finish(&g.s);
    return rc;
}

int ar_review_read_spec(const struct ar_share *share, const char *cwd, const char *base,
                        const char *spec, struct ar_buf *out, char **file, struct ar_error *err)
{
    if (file)
        *file = NULL;
    int git = ar_review_spec_is_git(cwd, spec, err);
    if (git < 0)
        return git;
    if (git) {
        int rc = ar_share_rev_path(share, cwd, spec, err);
        return rc ? rc : ar_diff_read_blob(cwd, spec, out, err);
    }
    int rc = ar_share_read_file(share, base, spec, out, err);
    if (!rc && file) {
        struct ar_buf name;
        ar_buf_init(&name, AR_BUF_UNLIMITED);
        rc = spec[0] != '/' && base ? ar_buf_printf(&name, "%s/%s", base, spec)
                                    : ar_buf_puts(&name, spec);
        if (rc || !(*file = ar_buf_detach(&name, NULL)))
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        ar_buf_finish(&name);
    }
    return rc;
}

int ar_review_spec_is_git(const char *cwd, const char *spec, struct ar_error *err)
{
    int rc = ar_diff_is_blob_spec(cwd, spec, err);
    if (rc < 0)
        return rc;
    return rc || (!ar_is_file(spec) && ar_git_rev_path_colon(spec));
}

int ar_review_read_instructions(const char *cwd, const char *spec, char **out, size_t *len,
                                struct ar_error *err)
{
    *out = NULL;
    *len = 0;
    struct ar_buf b;
    ar_buf_init(&b, AR_REVIEW_MAX_INSTRUCTIONS);
    int rc = ar_review_read_spec(NULL, cwd, NULL, spec, &b, NULL, err);
    if (!rc && !(*out = ar_buf_detach(&b, len)))
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    ar_buf_finish(&b);
    return rc;
}

int ar_diff_whole(const struct ar_diff_names *names, const char *const *paths, size_t n,
                  struct ar_buf *out, struct ar_diff_names *whole, struct ar_error *err)
{
    if (!names || !names->new_side)
        return ar_error_set(err, AR_EUSAGE, NULL, "the new side of a patch is not in git");
    char oid[128];
    int rc = empty_tree(names->cwd, oid, sizeof(oid), err);
    /* A bounded argv per git: the paths in batches. */
    enum { BATCH = 256 };
    for (size_t from = 0; !rc && from < n; from += BATCH) {
        struct ar_strv a = AR_STRV_INIT;
        rc = ar_strv_push(&a, "--no-renames");
        if (!rc && names->new_side == AR_DIFF_NEW_INDEX)
            rc = ar_strv_push(&a, "--cached");
        if (!rc)
            rc = ar_strv_push(&a, oid);
        if (!rc && names->new_side == AR_DIFF_NEW_REV)
            rc = ar_strv_push(&a, names->new_rev);
        if (!rc)
            rc = ar_strv_push(&a, "--");
        /* Literal, from the top: no byte of a name is a glob, and -C DIR changes nothing. */
        for (size_t i = from; !rc && i < n && i < from + BATCH; i++)
            rc = ar_strv_pushf(&a, ":(top,literal)%s", paths[i]);
        if (rc)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        else
            rc = diff_cmd(names->cwd, ar_strv_get(&a), out, whole, err);
        ar_strv_finish(&a);
    }
    return rc;
}

/* Sizes of the n blobs (git cat-file --batch-check): sizes[i], or SIZE_MAX when missing. */
static int blob_sizes(const char *cwd, const char *const *oids, size_t n, size_t *sizes,
                      struct ar_error *err)
{
    struct ar_buf in;
    ar_buf_init(&in, AR_BUF_UNLIMITED);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = ar_buf_printf(&in, "%s\n", oids[i]);
    if (rc) {
        ar_buf_finish(&in);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    static const char *const args[] = { "cat-file", "--batch-check", NULL };
    struct git_out g;
    rc = git_run(cwd, args, ar_buf_cstr(&in), &g, err);
    ar_buf_finish(&in);
    if (rc)
        return rc;
    const char *p = g.s.stdout_data ? g.s.stdout_data : "";
    const char *end = p + g.s.res.stdout_len;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t olen = strlen(oids[i]);
        if (g.status != 0 || !nl || (size_t)(nl - p) < olen || memcmp(p, oids[i], olen) != 0) {
            char why[200];
            rc = ar_error_set(err, AR_EIO, "git", "git cat-file --batch-check failed: %s",
                              git_reason(&g, why, sizeof(why)));
            break;
        }
        const char *f = p + olen;
        unsigned long long size = 0;
        if (strncmp(f, " blob ", 6) == 0 && sscanf(f + 6, "%llu", &size) == 1)
            sizes[i] = (size_t)size;
        else
            sizes[i] = SIZE_MAX; /* missing, or not a blob */
        p = nl + 1;
    }
    ar_child_sync_finish(&g.s);
    return rc;
}

int ar_diff_read_blobs(const char *cwd, const char *const *oids, size_t n, size_t limit,
                       ar_diff_blob_fn *fn, void *arg, struct ar_error *err)
{
    if (!n)
        return 0;
    size_t *sizes = calloc(n, sizeof(*sizes));
    if (!sizes)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    int rc = blob_sizes(cwd, oids, n, sizes, err);
    /* The contents in batches that git's output cap holds. */
    for (size_t from = 0; !rc && from < n;) {
        struct ar_buf in;
        ar_buf_init(&in, AR_BUF_UNLIMITED);
        size_t to = from, total = 0;
        for (; !rc && to < n; to++) {
            if (sizes[to] > limit)
                continue;
            if (total && total + sizes[to] + 128 > AR_DIFF_MAX_BYTES / 2)
                break;
            total += sizes[to] + 128;
            rc = ar_buf_printf(&in, "%s\n", oids[to]);
        }
        if (rc) {
            ar_buf_finish(&in);
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
            break;
        }
        struct git_out g;
        static const char *const args[] = { "cat-file", "--batch", NULL };
        int asked = in.len > 0;
        int ran = asked ? git_run(cwd, args, ar_buf_cstr(&in), &g, err) : 0;
        ar_buf_finish(&in);
        if (ran) {
            rc = ran;
            break;
        }
        const char *p = asked && g.s.stdout_data ? g.s.stdout_data : NULL;
        const char *end = p ? p + g.s.res.stdout_len : NULL;
        if (asked && g.status != 0) {
            char why[200];
            rc = ar_error_set(err, AR_EIO, "git", "git cat-file --batch failed: %s",
                              git_reason(&g, why, sizeof(why)));
        }
        for (size_t i = from; !rc && i < to; i++) {
            if (sizes[i] > limit) {
                rc = fn(arg, i, NULL, sizes[i] == SIZE_MAX ? 0 : sizes[i]);
                continue;
            }
            /* "<oid> blob <size>\n<content>\n" */
            const char *nl = p ? memchr(p, '\n', (size_t)(end - p)) : NULL;
            size_t olen = strlen(oids[i]);
            if (!nl || (size_t)(nl - p) < olen || memcmp(p, oids[i], olen) != 0 ||
                (size_t)(end - (nl + 1)) < sizes[i] + 1) {
                rc = ar_error_set(err, AR_EIO, "git", "git cat-file --batch output is malformed");
                break;
            }
            rc = fn(arg, i, nl + 1, sizes[i]);
            p = nl + 1 + sizes[i] + 1;
        }
        if (asked)
            ar_child_sync_finish(&g.s);
        from = to;
    }
    free(sizes);
    return rc;
}
