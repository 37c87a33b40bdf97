/*
 * Paths in a review: what a model's path means in the repository, and which
 * files of a diff the review skips (--include, --exclude, the lockfile
 * defaults).
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "review/diff.h"
#include "util/buf.h"

const char *const ar_path_default_excludes[] = {
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "Cargo.lock",
    "go.sum",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "composer.lock",
    "Gemfile.lock",
    "Podfile.lock",
    "Package.resolved",
    "pubspec.lock",
    "mix.lock",
    "flake.lock",
    "gradle.lockfile",
    "packages.lock.json",
    NULL,
};

/*
 * The path with "./", empty and "." components dropped, in a new string;
 * NULL with *outside set when it is absolute, starts with "~" or has a ".."
 * component (NULL with *outside clear: out of memory).
 */
static char *clean_path(const char *path, int *outside)
{
    *outside = 0;
    if (path[0] == '/' || path[0] == '~' || path[0] == '\\') {
        *outside = 1;
        return NULL;
    }
    size_t n = strlen(path);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            free(out);
            *outside = 1;
            return NULL;
        }
        if (len && !(len == 1 && p[0] == '.')) {
            if (o)
                out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p += len;
        while (*p == '/')
            p++;
    }
    out[o] = '\0';
    if (!o) {
        free(out);
        *outside = 1; /* "." or "./": the repository itself is no file */
        return NULL;
    }
    return out;
}

static int exists_under(const char *root, const char *path)
{
    if (!root)
        return 0;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int rc = ar_buf_printf(&b, "%s/%s", root, path);
    struct stat st;
    int yes = rc == 0 && lstat(ar_buf_cstr(&b), &st) == 0;
    ar_buf_finish(&b);
    return yes;
}

/* The rest of path after prefix, when that is a file of the diff. */
static const char *after_prefix(const struct ar_diff *d, const char *path, const char *prefix)
{
    size_t n = prefix ? strlen(prefix) : 0;
    if (!n || strncmp(path, prefix, n) != 0 || !path[n])
        return NULL;
    return ar_diff_has_file(d, path + n) ? path + n : NULL;
}

/* The one file of the diff whose path ends with "/" + path, or NULL. */
static const char *unique_suffix(const struct ar_diff *d, const char *path)
{
    const char *found = NULL;
    size_t wn = strlen(path);
    for (size_t i = 0; i < d->n_files; i++) {
        const char *names[2] = { d->files[i].path, d->files[i].old_path };
        for (int k = 0; k < 2; k++) {
            const char *p = names[k];
            size_t pn = p ? strlen(p) : 0;
            if (pn > wn && p[pn - wn - 1] == '/' && strcmp(p + pn - wn, path) == 0) {
                if (found && strcmp(found, p) != 0)
                    return NULL;
                found = p;
            }
        }
    }
    return found;
}

int ar_diff_locate(const struct ar_diff *d, const char *root, const char *path, char **out)
{
    *out = NULL;
    int outside;
    char *clean = clean_path(path, &outside);
    if (!clean)
        return outside ? AR_PATH_OUTSIDE : AR_ENOMEM;
    if (ar_diff_has_file(d, clean) || exists_under(root, clean)) {
        *out = clean;
        return ar_diff_has_file(d, clean) ? AR_PATH_IN_DIFF : AR_PATH_ELSEWHERE;
    }
    /* The model copied the diff's prefix along with the name. */
    const char *rest = after_prefix(d, clean, d->dst_prefix ? d->dst_prefix : "b/");
    if (!rest)
        rest = after_prefix(d, clean, d->src_prefix ? d->src_prefix : "a/");
    if (!rest)
        rest = unique_suffix(d, clean);
    if (rest) {
        char *r = strdup(rest);
        free(clean);
        if (!r)
            return AR_ENOMEM;
        *out = r;
        return AR_PATH_IN_DIFF;
    }
    *out = clean;
    return AR_PATH_ELSEWHERE;
}

int ar_path_glob_match(const char *glob, const char *path)
{
    if (!glob || !*glob || !path)
        return 0;
    size_t gn = strlen(glob);
    if (glob[gn - 1] == '/') {
        /* "vendor/": everything under that folder. */
        return strncmp(path, glob, gn) == 0 && path[gn] != '\0';
    }
    if (!strchr(glob, '/')) {
        const char *base = strrchr(path, '/');
        return fnmatch(glob, base ? base + 1 : path, 0) == 0;
    }
    return fnmatch(glob, path, 0) == 0;
}

static int any_match(const char *const *globs, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (ar_path_glob_match(globs[i], path))
            return 1;
    return 0;
}

/* 1, with "what glob" appended to rule when there is one; or the append's error. */
static int skipped_by(struct ar_buf *rule, const char *what, const char *glob)
{
    if (!rule)
        return 1;
    int rc = glob ? ar_buf_printf(rule, "%s %s", what, glob) : ar_buf_puts(rule, what);
    return rc ? rc : 1;
}

int ar_path_filter_rule(const struct ar_path_filter *pf, const char *path, struct ar_buf *rule)
{
    if (!pf || !path)
        return 0;
    if (pf->n_include && !any_match(pf->include, pf->n_include, path))
        return skipped_by(rule, "--include: no GLOB matches", NULL);
    for (size_t i = 0; i < pf->n_exclude; i++)
        if (ar_path_glob_match(pf->exclude[i], path))
            return skipped_by(rule, "--exclude", pf->exclude[i]);
    if (!pf->no_defaults)
        for (size_t i = 0; ar_path_default_excludes[i]; i++)
            if (ar_path_glob_match(ar_path_default_excludes[i], path))
                return skipped_by(rule, "default exclude", ar_path_default_excludes[i]);
    return 0;
}

int ar_path_filter_skips(const struct ar_path_filter *pf, const char *path)
{
    return ar_path_filter_rule(pf, path, NULL) == 1;
}
