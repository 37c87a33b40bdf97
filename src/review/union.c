/*
 * The union of reviews of one change: every answer counts (issue 57 #3).
 *
 * A model's reply can hold more than one review answer (a draft "pass", then the
 * final one with a critical finding); later, several providers review the same
 * change (issue 61). Neither may lose a finding, nor let the most lenient verdict
 * stand for the others. The rule, in one function:
 *
 *   - the findings are the union of the reviews' findings by fingerprint
 *     (ar_review_fingerprint() at occurrence 0: severity, path, normalized
 *     message), as multisets: a finding k reviews share is kept once, in the place
 *     of its first; a finding one review holds twice is kept twice (its repeats are
 *     its own, and a second review that holds it once adds nothing);
 *   - the verdict is the strictest: passed only when each review passed;
 *   - the summaries are joined, each distinct one once; the notes are kept, in order.
 *
 * Findings with no place (unplaced) follow the same rule among themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "review/review.h"
#include "util/array.h"
#include "util/buf.h"

struct entry {
    char fp[AR_FINGERPRINT_LEN + 1];
    const struct ar_review_issue *is;
    size_t part;  /* which review it is of */
    size_t order; /* its place in the concatenation of the reviews, in order */
    int keep;
};

static int by_fp_then_order(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    int c = strcmp(a->fp, b->fp);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int by_order(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    return (a->order > b->order) - (a->order < b->order);
}

/*
 * The multiset union of the findings list `which` (0: issues, 1: unplaced) of the n
 * reviews, in order of first appearance, as new copies in *out (n_out of them).
 * Returns 0 or AR_ENOMEM.
 */
static int union_list(const struct ar_review *parts, size_t n, int which,
                      struct ar_review_issue **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t total = 0;
    for (size_t p = 0; p < n; p++) {
        size_t m;
        ar_review_list(&parts[p], which, &m);
        total += m;
    }
    if (!total)
        return 0;
    struct entry *e = calloc(total, sizeof(*e));
    if (!e)
        return AR_ENOMEM;
    size_t k = 0;
    for (size_t p = 0; p < n; p++) {
        size_t m;
        const struct ar_review_issue *v = ar_review_list(&parts[p], which, &m);
        for (size_t i = 0; i < m; i++, k++) {
            e[k].is = &v[i];
            e[k].part = p;
            e[k].order = k;
            ar_review_fingerprint(&v[i], 0, e[k].fp);
        }
    }
    /* Within one fingerprint, in order: a review's j-th copy is kept when fewer than
     * j + 1 are kept so far, so the kept count is the largest any one review holds. */
    ar_sort(e, total, sizeof(*e), by_fp_then_order);
    size_t kept = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i, in_group = 0, occ = 0;
        for (; j < total && strcmp(e[j].fp, e[i].fp) == 0; j++) {
            occ = j > i && e[j].part == e[j - 1].part ? occ + 1 : 0;
            if (occ >= in_group) {
                e[j].keep = 1;
                in_group++;
            }
        }
        kept += in_group;
        i = j;
    }
    ar_sort(e, total, sizeof(*e), by_order);
    struct ar_review_issue *v = malloc(kept * sizeof(*v));
    int rc = v ? 0 : AR_ENOMEM;
    size_t o = 0;
    for (size_t i = 0; i < total && !rc; i++)
        if (e[i].keep && !(rc = ar_review_issue_copy(&v[o], e[i].is)))
            o++;
    free(e);
    if (rc) {
        for (size_t i = 0; i < o; i++)
            ar_review_issue_free(&v[i]);
        free(v);
        return rc;
    }
    *out = v;
    *n_out = o;
    return 0;
}

int ar_review_union(const struct ar_review *parts, size_t n, struct ar_review *out)
{
    struct ar_review_issue *issues = NULL, *unplaced = NULL;
    size_t n_issues = 0, n_unplaced = 0;
    struct ar_buf summary;
    ar_buf_init(&summary, AR_BUF_UNLIMITED);
    int passed = 1;
    int rc = union_list(parts, n, 0, &issues, &n_issues);
    if (!rc)
        rc = union_list(parts, n, 1, &unplaced, &n_unplaced);
    for (size_t p = 0; p < n && !rc; p++) {
        passed &= parts[p].passed != 0;
        const char *s = parts[p].summary;
        int seen = !s || !*s;
        for (size_t q = 0; q < p && !seen; q++)
            seen = parts[q].summary && strcmp(parts[q].summary, s) == 0;
        if (!seen && summary.len)
            rc = ar_buf_putc(&summary, '\n');
        if (!seen && !rc)
            rc = ar_buf_puts(&summary, s);
    }
    char *joined = rc ? NULL : ar_buf_detach(&summary, NULL);
    if (!rc && !joined)
        rc = AR_ENOMEM;
    ar_buf_finish(&summary);
    /* The notes after everything else: a failure there leaves out as it was. */
    size_t notes_before = out->n_notes;
    for (size_t p = 0; p < n && !rc; p++)
        for (size_t i = 0; i < parts[p].n_notes && !rc; i++)
            rc = ar_review_add_note(out, parts[p].notes[i]);
    if (rc) {
        while (out->n_notes > notes_before)
            free(out->notes[--out->n_notes]);
        for (size_t i = 0; i < n_issues; i++)
            ar_review_issue_free(&issues[i]);
        for (size_t i = 0; i < n_unplaced; i++)
            ar_review_issue_free(&unplaced[i]);
        free(issues);
        free(unplaced);
        free(joined);
        return AR_ENOMEM;
    }
    for (size_t i = 0; i < out->n_issues; i++)
        ar_review_issue_free(&out->issues[i]);
    free(out->issues);
    for (size_t i = 0; i < out->n_unplaced; i++)
        ar_review_issue_free(&out->unplaced[i]);
    free(out->unplaced);
    free(out->summary);
    out->issues = issues;
    out->n_issues = n_issues;
    out->unplaced = unplaced;
    out->n_unplaced = n_unplaced;
    out->dropped = n_unplaced;
    out->summary = joined;
    out->passed = passed;
    return 0;
}
