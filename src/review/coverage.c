/*
 * The coverage of a review: for every changed path, what happened to it. This
 * is the one place the facts behind the gate are decided (DESIGN §7b): a
 * review passes only when every changed path was sent whole to the model and
 * its chunk's review came back, or was left out by a rule the caller
 * controls. The verdict (review.c) counts what this file says and nothing
 * else, so a path that is neither cannot pass, whatever the diff holds.
 *
 * The life of a coverage:
 *   1. ar_coverage_plan(): one entry per file section of the parsed diff (and
 *      per path the diff could not show, a gap): left out by the filter,
 *      binary, too big, or to be sent whole (QUEUED); and how split.c sends
 *      each section;
 *   2. ar_coverage_chunks(): which chunks hold each queued file; a queued file
 *      no chunk holds is not sent;
 *   3. ar_coverage_finish(): a queued file is reviewed when every chunk that
 *      holds it came back with a review, else it was not sent (its chunk
 *      failed, or never started);
 *   4. ar_coverage_count() after each step; ar_coverage_free().
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review/review.h"
#include "util/buf.h"
#include "util/macros.h"

const char *ar_review_cover_name(int status)
{
    static const char *const names[] = {
        [AR_COVER_QUEUED] = "queued",     [AR_COVER_REVIEWED] = "reviewed",
        [AR_COVER_EXCLUDED] = "excluded", [AR_COVER_BINARY] = "binary",
        [AR_COVER_TOO_BIG] = "too_big",   [AR_COVER_NOT_SENT] = "not_sent",
    };
    if (status < 0 || (size_t)status >= sizeof(names) / sizeof(names[0]))
        return "unknown";
    return names[status];
}

void ar_coverage_free(struct ar_review_coverage *cov)
{
    for (size_t i = 0; i < cov->n_files; i++) {
        struct ar_review_file *f = &cov->files[i];
        free(f->path);
        free(f->old_path);
        free(f->rule);
        free(f->why);
    }
    free(cov->files);
    memset(cov, 0, sizeof(*cov));
}

/* A path counts for the gate when it was reviewed or a rule of the caller's left it out. */
static int covered(const struct ar_review_file *f)
{
    return f->status == AR_COVER_REVIEWED || f->rule != NULL;
}

void ar_coverage_count(struct ar_review_coverage *cov)
{
    cov->n_reviewed = cov->n_excluded = cov->n_unreviewed = 0;
    for (size_t i = 0; i < cov->n_files; i++) {
        const struct ar_review_file *f = &cov->files[i];
        if (f->status == AR_COVER_REVIEWED)
            cov->n_reviewed++;
        else if (covered(f))
            cov->n_excluded++;
        else
            cov->n_unreviewed++;
    }
}

static int set_str(char **slot, const char *s)
{
    free(*slot);
    *slot = s ? strdup(s) : NULL;
    return s && !*slot ? AR_ENOMEM : 0;
}

static int set_why(struct ar_review_file *f, enum ar_review_cover status, const char *fmt, ...)
    AR_PRINTF(3, 4);

static int set_why(struct ar_review_file *f, enum ar_review_cover status, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    f->status = status;
    return set_str(&f->why, buf);
}

static int set_binary(struct ar_review_file *f, int kind)
{
    if (kind == AR_DIFF_BINARY_SAID)
        return set_why(f, AR_COVER_BINARY,
                       "binary: the diff says 'Binary files … differ' and holds no content");
    if (kind == AR_DIFF_BINARY_PATCH)
        return set_why(f, AR_COVER_BINARY, "binary: a GIT binary patch (base85 data, not text)");
    if (kind == AR_DIFF_BINARY_LFS)
        return set_why(f, AR_COVER_BINARY,
                       "a Git LFS pointer: the content a checkout with LFS gets is not in git");
    return set_why(f, AR_COVER_BINARY,
                   "binary content: more than %d%% of its bytes are control characters or "
                   "more than %d%% invalid UTF-8",
                   AR_DIFF_BINARY_CONTROL_PERCENT, AR_DIFF_BINARY_INVALID_PERCENT);
}

/* Decides one section: its entry and how split.c sends it. */
static int plan_file(const struct ar_diff_file *df, const struct ar_path_filter *pf,
                     int allow_binary, size_t max_hunk, struct ar_review_file *f,
                     unsigned char *send)
{
    int rc = set_str(&f->path, df->path ? df->path : "");
    if (!rc)
        rc = set_str(&f->old_path, df->old_path);
    if (rc)
        return rc;
    struct ar_buf rule;
    ar_buf_init(&rule, AR_BUF_UNLIMITED);
    int skipped = df->path ? ar_path_filter_rule(pf, df->path, &rule) : 0;
    if (skipped == 1) {
        f->status = AR_COVER_EXCLUDED;
        f->rule = ar_buf_detach(&rule, NULL);
        *send = AR_DIFF_SEND_NONE;
        rc = f->rule ? 0 : AR_ENOMEM;
    } else if (skipped < 0) {
        rc = skipped;
    } else if (df->whole < 0) {
        /* Its diff alone is no review of it, and its new side is not at hand (whole.c). */
        *send = AR_DIFF_SEND_NONE;
        rc = set_why(f, AR_COVER_NOT_SENT, "%s", df->whole_why ? df->whole_why : "not whole");
    } else if (df->binary) {
        *send = AR_DIFF_SEND_STUB;
        rc = set_binary(f, df->binary);
        if (!rc && allow_binary)
            rc = set_str(&f->rule, "--allow-binary");
    } else if (df->largest_hunk > max_hunk) {
        *send = AR_DIFF_SEND_STUB;
        rc =
            set_why(f, AR_COVER_TOO_BIG, "a hunk of %zu bytes: larger than one call can hold (%zu)",
                    df->largest_hunk, max_hunk);
    } else {
        f->status = AR_COVER_QUEUED;
        *send = AR_DIFF_SEND_WHOLE;
    }
    /* A file sent whole in place of its diff (whole.c) says so, reviewed or not. */
    if (!rc && df->whole > 0 && df->whole_why) {
        char *why = NULL;
        if (asprintf(&why, "%s%s%s", f->why ? f->why : "", f->why ? "; " : "", df->whole_why) < 0)
            rc = AR_ENOMEM;
        else {
            free(f->why);
            f->why = why;
        }
    }
    ar_buf_finish(&rule);
    return rc;
}

int ar_coverage_plan(const struct ar_diff *d, const struct ar_path_filter *pf, int allow_binary,
                     size_t max_chunk_bytes, const struct ar_diff_gaps *gaps,
                     struct ar_review_coverage *cov, unsigned char **send, struct ar_error *err)
{
    size_t n_gaps = gaps ? gaps->n : 0, n = d->n_files + n_gaps;
    memset(cov, 0, sizeof(*cov));
    *send = NULL;
    cov->files = n ? calloc(n, sizeof(*cov->files)) : NULL;
    unsigned char *s = calloc(d->n_files + 1, 1);
    if ((n && !cov->files) || !s) {
        free(cov->files);
        free(s);
        cov->files = NULL;
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    cov->n_files = n;
    size_t max_hunk = AR_MAX(max_chunk_bytes, AR_REVIEW_MAX_HUNK);
    int rc = 0;
    for (size_t i = 0; !rc && i < d->n_files; i++)
        rc = plan_file(&d->files[i], pf, allow_binary, max_hunk, &cov->files[i], &s[i]);
    /* What the diff could not show (an untracked nested repository): never sent. */
    for (size_t i = 0; !rc && i < n_gaps; i++) {
        struct ar_review_file *f = &cov->files[d->n_files + i];
        rc = set_str(&f->path, gaps->v[i].path);
        if (!rc)
            rc = set_why(f, AR_COVER_NOT_SENT, "%s", gaps->v[i].why);
    }
    if (rc) {
        ar_coverage_free(cov);
        free(s);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    ar_coverage_count(cov);
    *send = s;
    return 0;
}

int ar_coverage_chunks(struct ar_review_coverage *cov, const unsigned char *send,
                       const struct ar_diff_chunk *chunks, size_t n_chunks)
{
    for (size_t c = 0; c < n_chunks; c++)
        for (size_t i = chunks[c].first_file; i <= chunks[c].last_file && i < cov->n_files; i++) {
            struct ar_review_file *f = &cov->files[i];
            if (send[i] != AR_DIFF_SEND_WHOLE || f->status != AR_COVER_QUEUED)
                continue;
            if (!f->n_chunks)
                f->chunk = c;
            f->n_chunks++;
        }
    /* A file to send that no chunk holds was not sent: it never passes. */
    int rc = 0;
    for (size_t i = 0; !rc && i < cov->n_files; i++) {
        struct ar_review_file *f = &cov->files[i];
        if (f->status == AR_COVER_QUEUED && !f->n_chunks)
            rc = set_why(f, AR_COVER_NOT_SENT, "in no chunk");
    }
    ar_coverage_count(cov);
    return rc;
}

int ar_coverage_finish(struct ar_review_coverage *cov, const struct ar_review *parts, size_t n,
                       const struct ar_review *merged)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < cov->n_files; i++) {
        struct ar_review_file *f = &cov->files[i];
        if (f->status != AR_COVER_QUEUED)
            continue;
        const struct ar_review *bad = NULL;
        size_t bad_at = 0;
        for (size_t c = f->chunk; c < f->chunk + f->n_chunks && !bad; c++)
            if (c >= n || parts[c].failed || !parts[c].chunks)
                bad = c < n ? &parts[c] : NULL, bad_at = c + 1;
        if (!bad_at)
            f->status = AR_COVER_REVIEWED;
        else if (bad && bad->error.msg[0] && merged && merged->failed &&
                 merged->error.code == bad->error.code &&
                 strcmp(merged->error.msg, bad->error.msg) == 0)
            rc = set_why(f, AR_COVER_NOT_SENT, "chunk %zu was not reviewed (%s)", bad_at,
                         ar_strerror_name(bad->error.code));
        else if (bad && bad->error.msg[0])
            rc = set_why(f, AR_COVER_NOT_SENT, "chunk %zu was not reviewed: %s", bad_at,
                         bad->error.msg);
        else
            rc = set_why(f, AR_COVER_NOT_SENT, "chunk %zu was not reviewed", bad_at);
    }
    ar_coverage_count(cov);
    return rc;
}

int ar_coverage_copy(const struct ar_review_coverage *src, struct ar_review_coverage *dst)
{
    memset(dst, 0, sizeof(*dst));
    if (!src->n_files)
        return 0;
    dst->files = calloc(src->n_files, sizeof(*dst->files));
    if (!dst->files)
        return AR_ENOMEM;
    dst->n_files = src->n_files;
    int rc = 0;
    for (size_t i = 0; i < src->n_files && !rc; i++) {
        const struct ar_review_file *s = &src->files[i];
        struct ar_review_file *d = &dst->files[i];
        d->status = s->status;
        d->chunk = s->chunk;
        d->n_chunks = s->n_chunks;
        rc = set_str(&d->path, s->path);
        if (!rc && s->old_path)
            rc = set_str(&d->old_path, s->old_path);
        if (!rc && s->rule)
            rc = set_str(&d->rule, s->rule);
        if (!rc && s->why)
            rc = set_str(&d->why, s->why);
    }
    ar_coverage_count(dst);
    if (rc)
        ar_coverage_free(dst);
    return rc;
}

int ar_coverage_quorum(struct ar_review_coverage *cov, const struct ar_review_coverage *members,
                       const char *const *names, size_t n, unsigned quorum)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < cov->n_files; i++) {
        struct ar_review_file *f = &cov->files[i];
        if (f->status != AR_COVER_QUEUED)
            continue;
        size_t got = 0;
        for (size_t m = 0; m < n; m++)
            got += i < members[m].n_files && members[m].files[i].status == AR_COVER_REVIEWED;
        if (got >= quorum) {
            f->status = AR_COVER_REVIEWED;
            continue;
        }
        /* Who did not review it, and why (each member's own coverage says). */
        struct ar_buf why;
        ar_buf_init(&why, 480);
        for (size_t m = 0; m < n; m++) {
            const struct ar_review_file *mf = i < members[m].n_files ? &members[m].files[i] : NULL;
            if (mf && mf->status == AR_COVER_REVIEWED)
                continue;
            if (why.len)
                ar_buf_puts(&why, "; ");
            ar_buf_puts(&why, names[m]);
            ar_buf_puts(&why, ": ");
            ar_buf_puts(&why, mf && mf->why ? mf->why : "not reviewed");
        }
        rc = set_why(f, AR_COVER_NOT_SENT,
                     "reviewed by %zu of %zu panel members, fewer than the quorum of %u (%s)", got,
                     n, quorum, ar_buf_cstr(&why));
        ar_buf_finish(&why);
    }
    ar_coverage_count(cov);
    return rc;
}
