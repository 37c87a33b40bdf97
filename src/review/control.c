/*
 * The rules a review is judged by come from a place the change cannot write
 * (docs/review.md, "The rules come from the base"). A baseline, instructions
 * or prompt templates read from a file of the checkout are the change's to
 * rewrite: a pull request that adds its own finding's fingerprint to the
 * baseline turns a fail into a pass. REV:PATH reads them from git's objects
 * instead; a file of the checkout that the change under review adds,
 * modifies, deletes or renames, or a folder on its way (a link the change
 * points elsewhere), fails the review before any call, saying how to read it
 * from the base.
 *
 * This is the one place the rule is kept: ar_review_start() hands it every
 * control it knows of (the instructions' file, the baseline's, the prompt
 * folders) and the coverage, whose paths are git's.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "review/diff.h"
#include "review/review.h"

/* abs under root: the path from root ("" for root itself), else NULL. */
static const char *under(const char *root, const char *abs)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return abs + 1;
    if (strncmp(abs, root, n) != 0)
        return NULL;
    if (!abs[n])
        return abs + n;
    return abs[n] == '/' ? abs + n + 1 : NULL;
}

/*
 * Whether a change to `changed` (a path of the diff; a trailing '/' names a
 * folder) writes what rel names: the same path, a path under it (rel is a
 * folder), or a folder on the way to it (a link the change retargets).
 */
static int touches(const char *rel, const char *changed)
{
    size_t n = strlen(changed), m = strlen(rel);
    while (n && changed[n - 1] == '/')
        n--;
    if (!n)
        return 0;
    if (!m)
        return 1;
    size_t k = n < m ? n : m;
    if (memcmp(rel, changed, k) != 0)
        return 0;
    if (n == m)
        return 1;
    return n < m ? rel[n] == '/' : changed[m] == '/';
}

/* The changed path of cov that writes rel, or NULL. */
static const char *writer(const struct ar_review_coverage *cov, const char *rel)
{
    for (size_t i = 0; i < cov->n_files; i++) {
        const struct ar_review_file *f = &cov->files[i];
        if (f->path && touches(rel, f->path))
            return f->path;
        if (f->old_path && touches(rel, f->old_path))
            return f->old_path;
    }
    return NULL;
}

/*
 * Two more names of path on disk: its folder resolved and its last component
 * as written (the link itself, if it is one), and the whole path resolved
 * (where a link leads). Either may be "" when it cannot be resolved (the file
 * is missing: then nothing was read from it).
 */
static void names(const char *path, char lexical[PATH_MAX], char physical[PATH_MAX])
{
    lexical[0] = physical[0] = '\0';
    if (!realpath(path, physical))
        physical[0] = '\0';
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return;
    char dir[PATH_MAX], real[PATH_MAX];
    size_t dn = slash ? (size_t)(slash - path) : 0;
    if (dn >= sizeof(dir))
        return;
    if (slash && dn == 0)
        strcpy(dir, "/");
    else if (slash) {
        memcpy(dir, path, dn);
        dir[dn] = '\0';
    } else
        strcpy(dir, ".");
    if (!realpath(dir, real))
        return;
    int w = snprintf(lexical, PATH_MAX, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
    if (w < 0 || w >= PATH_MAX)
        lexical[0] = '\0';
}

/*
 * path as an absolute name without resolving a link: the process's directory
 * (physical, as getcwd() gives it) and path's components, "." and ".." taken
 * lexically. A folder on the way that is a link the change retargets shows
 * here under its own name, where realpath() would have followed it. "" when it
 * does not fit.
 */
static void plain(const char *path, char out[PATH_MAX])
{
    char buf[PATH_MAX];
    out[0] = '\0';
    if (path[0] == '/')
        snprintf(buf, sizeof(buf), "%s", path);
    else if (getcwd(buf, sizeof(buf))) {
        size_t n = strlen(buf);
        if (snprintf(buf + n, sizeof(buf) - n, "/%s", path) >= (int)(sizeof(buf) - n))
            return;
    } else
        return;
    size_t len = 0;
    for (char *save = NULL, *part = strtok_r(buf, "/", &save); part;
         part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0) {
            while (len && out[len - 1] != '/')
                len--;
            if (len)
                len--;
            out[len] = '\0';
            continue;
        }
        size_t pn = strlen(part);
        if (len + 1 + pn + 1 > PATH_MAX) {
            out[0] = '\0';
            return;
        }
        out[len++] = '/';
        memcpy(out + len, part, pn);
        len += pn;
        out[len] = '\0';
    }
    if (!len)
        strcpy(out, "/");
}

/* The revision a fix should read the control from: the base of what is reviewed. */
static void base_of(const char *rev, int from_text, char *out, size_t n)
{
    if (from_text) {
        snprintf(out, n, "origin/main");
        return;
    }
    if (!rev || !*rev) {
        snprintf(out, n, "HEAD");
        return;
    }
    const char *dots = strstr(rev, "..");
    size_t len = strlen(rev);
    if (dots)
        snprintf(out, n, "%.*s", dots == rev ? 4 : (int)(dots - rev), dots == rev ? "HEAD" : rev);
    else if (len > 2 && strcmp(rev + len - 2, "^!") == 0)
        snprintf(out, n, "%.*s^", (int)(len - 2), rev);
    else
        snprintf(out, n, "%s", rev);
}

int ar_review_check_controls(const struct ar_review_coverage *cov, const char *root,
                             const struct ar_review_control *controls, size_t n, const char *rev,
                             int from_text, struct ar_error *err)
{
    char top[PATH_MAX];
    if (!root || !realpath(root, top))
        return 0;
    for (size_t i = 0; i < n; i++) {
        const struct ar_review_control *c = &controls[i];
        if (!c->path || !*c->path)
            continue;
        char lexical[PATH_MAX], physical[PATH_MAX], unresolved[PATH_MAX];
        names(c->path, lexical, physical);
        plain(c->path, unresolved);
        const char *cand[3] = { unresolved, lexical, physical };
        for (size_t j = 0; j < 3; j++) {
            const char *rel = cand[j][0] ? under(top, cand[j]) : NULL;
            const char *by = rel ? writer(cov, rel) : NULL;
            if (!by)
                continue;
            char base[256];
            base_of(rev, from_text, base, sizeof(base));
            if (c->folder)
                return ar_error_set(err, AR_EUSAGE, c->where,
                                    "the %s folder '%s' is in the checkout, and the change under "
                                    "review changes '%s' in it: a change cannot choose the %s it "
                                    "is reviewed by; use a folder outside the repository",
                                    c->what, c->path, by, c->what);
            /* The fix first, and the file as the checkout names it: the message has 255
             * bytes (struct ar_error), an absolute path under a deep TMPDIR would cut it. */
            const char *shown = unresolved[0] ? under(top, unresolved) : NULL;
            return ar_error_set(err, AR_EUSAGE, c->where,
                                "the %s '%s' is a file the change under review changes "
                                "('%s'); read it from the base revision, %s:%s (a change "
                                "cannot choose the %s it is reviewed by)",
                                c->what, shown && *shown ? shown : c->path, by, base,
                                *rel ? rel : ".", c->what);
        }
    }
    return 0;
}
