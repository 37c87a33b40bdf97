/*
 * libFuzzer target for src/review: the input (after one selector byte) is a
 * unified diff, parsed and split into chunks of a small maximum size the
 * selector picks; the same bytes are also read as a model's review object,
 * which is merged with itself against the diff, located (paths, lines,
 * fingerprints) and given a verdict.
 * Checks that file sections and hunks lie inside the text and chunks are
 * NUL-terminated.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "review/diff.h"
#include "review/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when path has a ".." component. */
static int climbs(const char *path)
{
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

static void check_diff(const struct ar_diff *d, size_t len)
{
    if (d->preamble > len)
        abort();
    for (size_t i = 0; i < d->n_files; i++) {
        const struct ar_diff_file *f = &d->files[i];
        if (f->start > f->body || f->body > f->end || f->end > len)
            abort();
        if (f->binary && (f->binary_at < f->start || f->binary_at >= f->end))
            abort();
        for (size_t h = 0; h < f->n_hunks; h++)
            if (f->hunks[h] < f->body || f->hunks[h] >= f->end)
                abort();
        /* A "diff --git" line whose paths cannot be told apart leaves path NULL,
         * "+++ " with nothing after it makes it "", which has_file never matches. */
        if (f->path && *f->path && !ar_diff_has_file(d, f->path))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t max = 1 + data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    struct ar_diff d = AR_DIFF_INIT;
    if (ar_diff_parse(text, len, &d, NULL) != 0)
        abort();
    check_diff(&d, len);
    (void)ar_diff_reviewable(&d);
    struct ar_diff_chunk *chunks = NULL;
    size_t n = 0;
    if (ar_diff_split(&d, max, &chunks, &n, NULL) != 0)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (!chunks[i].text || chunks[i].text[chunks[i].len] != '\0')
            abort();
        if (chunks[i].n_files && chunks[i].first_file + chunks[i].n_files > d.n_files)
            abort();
        /* A chunk reads back as a diff. */
        struct ar_diff cd = AR_DIFF_INIT;
        if (ar_diff_parse(chunks[i].text, chunks[i].len, &cd, NULL) != 0)
            abort();
        check_diff(&cd, chunks[i].len);
        ar_diff_finish(&cd);
    }
    ar_diff_chunks_free(chunks, n);

    json_t *v = json_loadb(text, len, JSON_DECODE_ANY, NULL);
    if (v) {
        struct ar_review parts[2];
        ar_review_init(&parts[0]);
        ar_review_init(&parts[1]);
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_review_from_value(v, &parts[0], &err);
        if (rc == 0) {
            if (!parts[0].summary)
                abort();
            (void)ar_review_from_value(v, &parts[1], NULL);
            struct ar_review m;
            ar_review_init(&m);
            if (ar_review_merge(parts, 2, &d, &m, NULL) != 0)
                abort();
            if (m.n_issues != 2 * parts[0].n_issues)
                abort();
            /* Located: no path outside the repository survives, every line
             * fits 32 bits, a path in the diff is a file of the diff, and
             * repeats of one finding get their own fingerprints. */
            size_t before = m.n_issues;
            if (ar_review_locate(&m, &d, NULL, NULL) != 0)
                abort();
            if (m.n_issues + m.dropped != before)
                abort();
            for (size_t i = 0; i < m.n_issues; i++) {
                const struct ar_review_issue *is = &m.issues[i];
                if (!is->file[0] || is->file[0] == '/' || climbs(is->file) || is->line < 1 ||
                    is->line > AR_REVIEW_MAX_LINE || strlen(is->fingerprint) != AR_FINGERPRINT_LEN)
                    abort();
                if (!is->outside_diff && !ar_diff_has_file(&d, is->file))
                    abort();
                for (size_t j = 0; j < i; j++)
                    if (strcmp(m.issues[j].fingerprint, is->fingerprint) == 0)
                        abort();
            }
            struct ar_review_verdict vd;
            for (int f = 0; f <= AR_FAIL_ON_NONE; f++)
                ar_review_verdict(&m, f, f & 1, &vd);
            ar_review_finish(&m);
        } else if (err.code == 0) {
            abort();
        }
        ar_review_finish(&parts[0]);
        ar_review_finish(&parts[1]);
        json_decref(v);
    }
    ar_diff_finish(&d);
    return 0;
}
