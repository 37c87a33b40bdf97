/*
 * What a file's diff shows, and when that is not enough (issue 57 #1; DESIGN §7b).
 *
 * A diff shows what changed against the old side. That is a review of the file only
 * when the old side was itself reviewable: then the model has read the rest before,
 * or could have. A rename breaks it: pull request 1 puts C code into Cargo.lock (a
 * default exclude, left out as designed), pull request 2 renames Cargo.lock to
 * helper.c and changes one line; git shows a 99% rename and one hunk, and helper.c's
 * system() line was never in front of a model. The same holds for an old side that
 * is binary, a Git LFS pointer, too big to send, or left out by any rule of the
 * caller's, and for a modification as much as a rename or copy. So, one rule:
 *
 *   a file counts as reviewed only if the model saw all of its new content, or its
 *   old content was itself reviewable and the diff shows the rest.
 *
 * "Reviewable" is judged as an addition of the old content would be: its old name
 * left out by no rule (exclude, include, the default excludes), and its content
 * (git's blob, by the id git's raw record names) neither binary nor a Git LFS pointer
 * nor larger than one call can hold. A file whose old side fails that and whose new
 * name no rule leaves out is sent whole: git is asked for its new side as an addition
 * (ar_diff_whole(): the empty tree against the same new side) and that section
 * replaces the diff's, so the gate then judges the new content as it judges any
 * added file (binary, too big…). In a patch (stdin, a file) git's blobs are not at
 * hand and the new side is not in the text: such a file cannot count as reviewed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review/diff.h"
#include "util/buf.h"
#include "util/utf8.h"

/* The size of an addition of content of n bytes in m lines: its hunk's bytes. */
static size_t addition_size(const char *p, size_t n)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += p[i] == '\n';
    return n + lines + 1 + 64; /* a '+' per line, the last line's, the "@@" line */
}

struct old_judge {
    const struct ar_diff *d;
    const size_t *files; /* the diff's files whose blob is read, in order */
    size_t max_hunk;
    char **why; /* per file of the diff: why its old side is not reviewable, or NULL */
    int nomem;
};

static int set_why(char **slot, const char *fmt, const char *a, const char *b)
{
    char buf[600];
    snprintf(buf, sizeof(buf), fmt, a, b);
    free(*slot);
    *slot = strdup(buf);
    return *slot ? 0 : AR_ENOMEM;
}

static const char *old_name(const struct ar_diff_file *f)
{
    return f->old_path ? f->old_path : f->path;
}

static int judge_blob(void *arg, size_t i, const char *data, size_t size)
{
    struct old_judge *j = arg;
    size_t k = j->files[i];
    const struct ar_diff_file *f = &j->d->files[k];
    const char *name = old_name(f);
    const char *what = NULL;
    if (!data && !size)
        what = "its content is not in the repository";
    else if (!data || addition_size(data, size) > j->max_hunk)
        what = "too big to send";
    else if (ar_diff_content_is_lfs_pointer(data, size))
        what = "a Git LFS pointer";
    else if (ar_diff_content_is_binary(data, size))
        what = "binary content";
    if (what &&
        set_why(&j->why[k], "its old side '%s' could not have been reviewed (%s)", name, what) != 0)
        return j->nomem = AR_ENOMEM;
    return 0;
}

/* 1 when f has an old side the diff compares against and a new one (M, R, C). */
static int has_both_sides(const struct ar_diff_file *f)
{
    return f->status == 'M' || f->status == 'R' || f->status == 'C' || (!f->status && f->old_path);
}

/* Points file k of d at the section src (of sub, whose text starts at byte base of
 * d's text), keeping k's names. */
static void take_section(struct ar_diff_file *dst, struct ar_diff_file *src, size_t base)
{
    dst->start = src->start + base;
    dst->end = src->end + base;
    dst->body = src->body + base;
    free(dst->hunks);
    dst->hunks = src->hunks;
    src->hunks = NULL;
    dst->n_hunks = src->n_hunks;
    for (size_t h = 0; h < dst->n_hunks; h++)
        dst->hunks[h] += base;
    src->n_hunks = 0;
    dst->binary = src->binary;
    dst->binary_at = src->binary_at + base;
    dst->largest_hunk = src->largest_hunk;
}

/* Asks git for the new sides of the files marked in why, and puts them in place. */
static int fetch_whole(struct ar_diff *d, struct ar_buf *text, const struct ar_diff_names *names,
                       char **why, size_t *nul_bytes, struct ar_error *err)
{
    const char **paths = calloc(d->n_files + 1, sizeof(*paths));
    if (!paths)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < d->n_files; i++)
        if (why[i])
            paths[n++] = d->files[i].path;
    struct ar_buf more;
    ar_buf_init(&more, text->max > text->len ? text->max - text->len : 1);
    struct ar_diff_names whole = { 0 };
    struct ar_diff sub = AR_DIFF_INIT;
    size_t nuls = 0;
    int rc = ar_diff_whole(names, paths, n, &more, &whole, err);
    if (!rc && ar_buf_replace_nul(&more, &nuls) != 0)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    size_t base = text->len;
    if (!rc && (rc = ar_buf_append(text, more.data ? more.data : "", more.len)) != 0)
        rc = ar_error_set(err, rc, "git", "the diff is larger than %zu bytes", text->max);
    if (!rc)
        rc = ar_diff_parse(ar_buf_cstr(text) + base, text->len - base, &sub, err);
    if (!rc)
        rc = ar_diff_names_apply(&sub, &whole, NULL, err);
    d->text = ar_buf_cstr(text);
    d->len = text->len;
    for (size_t s = 0; !rc && s < sub.n_files; s++) {
        size_t k = 0;
        while (k < d->n_files &&
               !(why[k] && !d->files[k].whole && strcmp(d->files[k].path, sub.files[s].path) == 0))
            k++;
        if (k == d->n_files) {
            rc = ar_error_set(err, AR_EIO, "git", "git showed '%s', which was not asked for",
                              sub.files[s].path);
            break;
        }
        struct ar_diff_file *f = &d->files[k];
        take_section(f, &sub.files[s], base);
        f->whole = 1;
        char note[700];
        snprintf(note, sizeof(note), "sent whole, as an addition: %s", why[k]);
        free(f->whole_why);
        if (!(f->whole_why = strdup(note)))
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    /* A file git did not show whole (it has no new content: an empty file) keeps a
     * reason, and so is never counted reviewed from its diff alone. */
    for (size_t k = 0; !rc && k < d->n_files; k++)
        if (why[k] && !d->files[k].whole) {
            d->files[k].whole = -1;
            char note[700];
            snprintf(note, sizeof(note), "%s, and git did not show its new side whole", why[k]);
            if (!(d->files[k].whole_why = strdup(note)))
                rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
    if (!rc && nul_bytes)
        *nul_bytes += nuls;
    ar_diff_finish(&sub);
    ar_diff_names_finish(&whole);
    ar_buf_finish(&more);
    free(paths);
    return rc;
}

int ar_diff_old_sides(struct ar_diff *d, struct ar_buf *text, const struct ar_diff_names *names,
                      const struct ar_path_filter *pf, size_t max_hunk, size_t *nul_bytes,
                      struct ar_error *err)
{
    if (!d->n_files)
        return 0;
    char **why = calloc(d->n_files, sizeof(*why));
    size_t *read = calloc(d->n_files, sizeof(*read));
    const char **oids = calloc(d->n_files, sizeof(*oids));
    int rc = why && read && oids ? 0 : AR_ENOMEM;
    size_t n_read = 0, n_why = 0;
    struct ar_buf rule;
    ar_buf_init(&rule, AR_BUF_UNLIMITED);
    for (size_t i = 0; !rc && i < d->n_files; i++) {
        const struct ar_diff_file *f = &d->files[i];
        if (!f->path || !has_both_sides(f) || ar_path_filter_skips(pf, f->path))
            continue;
        /* Its old name, under the caller's rules. */
        rule.len = 0;
        int skipped = ar_path_filter_rule(pf, old_name(f), &rule);
        if (skipped < 0) {
            rc = skipped;
        } else if (skipped) {
            rc = set_why(&why[i], "its old side '%s' could not have been reviewed (%s)",
                         old_name(f), ar_buf_cstr(&rule));
        } else if (f->old_oid[0]) {
            read[n_read] = i;
            oids[n_read++] = f->old_oid;
        } else if (f->status) {
            /* git names every old side it compares against; none named is no review. */
            rc = set_why(&why[i], "its old side '%s' could not have been reviewed (%s)",
                         old_name(f), "git named no content for it");
        }
    }
    ar_buf_finish(&rule);
    struct old_judge j = { d, read, max_hunk, why, 0 };
    if (!rc && n_read && names && names->given)
        rc = ar_diff_read_blobs(names->cwd, oids, n_read, max_hunk, judge_blob, &j, err);
    else if (rc)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (j.nomem)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; !rc && i < d->n_files; i++)
        n_why += why[i] != NULL;
    if (!rc && n_why && names && names->given) {
        rc = fetch_whole(d, text, names, why, nul_bytes, err);
    } else if (!rc && n_why) {
        /* A patch: the new side is not in the text, and git's blobs are not at hand. */
        for (size_t i = 0; !rc && i < d->n_files; i++) {
            if (!why[i])
                continue;
            char note[700];
            snprintf(note, sizeof(note),
                     "%s, and the patch does not hold its new content whole (review the "
                     "revisions instead, where git has it)",
                     why[i]);
            d->files[i].whole = -1;
            free(d->files[i].whole_why);
            if (!(d->files[i].whole_why = strdup(note)))
                rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
    }
    for (size_t i = 0; why && i < d->n_files; i++)
        free(why[i]);
    free(why);
    free(read);
    free(oids);
    return rc;
}
