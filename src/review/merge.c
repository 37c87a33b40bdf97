/* The merge of chunk reviews into one review. */
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"
#include "result/result.h"
#include "review/review.h"
#include "util/array.h"
#include "util/buf.h"

struct sort_entry {
    struct ar_review_issue issue;
    size_t order; /* qsort is not stable: the original position breaks ties */
};

static int cmp_issue(const void *pa, const void *pb)
{
    const struct sort_entry *a = pa, *b = pb;
    int c = strcmp(a->issue.file, b->issue.file);
    if (c)
        return c;
    if (a->issue.line != b->issue.line)
        return a->issue.line < b->issue.line ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static void free_entries(struct sort_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ar_review_issue_free(&e[i].issue);
    free(e);
}

/* Appends copies of part's notes and unplaced findings to out. Returns 0 or AR_ENOMEM. */
static int merge_leftovers(struct ar_review *out, const struct ar_review *part)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < part->n_notes; i++)
        rc = ar_review_add_note(out, part->notes[i]);
    if (rc || !part->n_unplaced)
        return rc;
    struct ar_review_issue *nv =
        realloc(out->unplaced, (out->n_unplaced + part->n_unplaced) * sizeof(*nv));
    if (!nv)
        return AR_ENOMEM;
    out->unplaced = nv;
    for (size_t i = 0; !rc && i < part->n_unplaced; i++)
        if (!(rc = ar_review_issue_copy(&nv[out->n_unplaced], &part->unplaced[i])))
            out->n_unplaced++;
    out->dropped += part->dropped;
    return rc;
}

static enum ar_cost_source merge_cost_source(enum ar_cost_source a, enum ar_cost_source b)
{
    if (a == AR_COST_UNKNOWN || b == AR_COST_UNKNOWN)
        return AR_COST_UNKNOWN;
    /* A cached part spent nothing: it leaves the other's source as it is. */
    if (a == AR_COST_CACHE || b == AR_COST_CACHE)
        return a == AR_COST_CACHE ? b : a;
    /* Some of it estimated makes the whole an estimate. */
    return (a == AR_COST_CLI && b == AR_COST_CLI) ? AR_COST_CLI : AR_COST_TABLE;
}

static int join(struct ar_buf *b, const char *s, const char *sep)
{
    if (!s || !*s)
        return 0;
    int rc = b->len ? ar_buf_puts(b, sep) : 0;
    return rc ? rc : ar_buf_puts(b, s);
}

int ar_review_merge(const struct ar_review *parts, size_t n, const struct ar_diff *diff,
                    struct ar_review *out, struct ar_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += parts[i].n_issues;
    struct sort_entry *e = total ? calloc(total, sizeof(*e)) : NULL;
    struct ar_buf summary, raw;
    ar_buf_init(&summary, AR_BUF_UNLIMITED);
    ar_buf_init(&raw, AR_BUF_UNLIMITED);
    int rc = (total && !e) ? AR_ENOMEM : 0;
    size_t k = 0;

    out->passed = 1;
    out->cost_source = n ? AR_COST_CACHE : AR_COST_UNKNOWN;
    out->cached = n > 0;
    out->cached_cost_source = AR_COST_UNKNOWN;
    for (size_t i = 0; i < n && !rc; i++) {
        const struct ar_review *p = &parts[i];
        out->passed &= p->passed;
        out->chunks += p->chunks;
        out->answers += p->answers;
        for (size_t j = 0; j < p->n_issues && !rc; j++, k++) {
            rc = ar_review_issue_copy(&e[k].issue, &p->issues[j]);
            e[k].order = k;
        }
        if (!rc)
            rc = join(&summary, p->summary, "\n");
        if (!rc)
            rc = merge_leftovers(out, p);
        if (!rc && p->degraded) {
            if (!out->degraded)
                out->error = p->error;
            out->degraded = 1;
            rc = join(&raw, p->raw_output, "\n\n");
        }
        if (p->failed && !out->failed) {
            out->failed = 1;
            out->error = p->error; /* a failure outranks a degraded chunk's error */
        }
        ar_usage_add(&out->usage, &p->usage);
        out->cost_usd += p->cost_usd;
        out->cost_source = merge_cost_source(out->cost_source, p->cost_source);
        out->cached &= p->cached;
        if (p->n_cached) {
            out->cached_cost_source =
                out->n_cached ? merge_cost_source(out->cached_cost_source, p->cached_cost_source)
                              : p->cached_cost_source;
            out->n_cached += p->n_cached;
            ar_usage_add(&out->cached_usage, &p->cached_usage);
            out->cached_cost_usd += p->cached_cost_usd;
        }
        if (p->duration_ms > out->duration_ms)
            out->duration_ms = p->duration_ms;
        if (!out->provider && p->provider && !(out->provider = strdup(p->provider)))
            rc = AR_ENOMEM;
        if (!out->model && p->model && !(out->model = strdup(p->model)))
            rc = AR_ENOMEM;
        if (!rc)
            rc = ar_call_records_append(&out->calls, &out->n_calls, p->calls, p->n_calls);
    }
    if (out->failed)
        out->passed = 0;
    if (out->cost_source == AR_COST_UNKNOWN)
        out->cost_usd = 0;
    if (rc) {
        free_entries(e, k);
        ar_buf_finish(&summary);
        ar_buf_finish(&raw);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory merging reviews");
    }
    if (total)
        ar_sort(e, total, sizeof(*e), cmp_issue);
    struct ar_review_issue *issues = total ? malloc(total * sizeof(*issues)) : NULL;
    if (total && !issues) {
        free_entries(e, total);
        ar_buf_finish(&summary);
        ar_buf_finish(&raw);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory merging reviews");
    }
    for (size_t i = 0; i < total; i++) {
        issues[i] = e[i].issue;
        issues[i].outside_diff = diff ? !ar_diff_has_file(diff, issues[i].file) : 0;
    }
    free(e);
    out->issues = issues;
    out->n_issues = total;
    free(out->summary);
    out->summary = ar_buf_detach(&summary, NULL);
    if (out->degraded && raw.len)
        out->raw_output = ar_buf_detach(&raw, NULL);
    ar_buf_finish(&raw);
    ar_buf_finish(&summary);
    if (!out->summary)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory merging reviews");
    return 0;
}

/* Moves is (taken) to rv->unplaced, with a note saying why. Returns 0 or AR_ENOMEM. */
static int unplace(struct ar_review *rv, struct ar_review_issue *is, const char *why)
{
    char note[400];
    snprintf(note, sizeof(note),
             "a %s finding on '%.200s': %s; reported without a location (it "
             "still counts)",
             ar_severity_name(is->severity), is->file, why);
    struct ar_review_issue *nv = realloc(rv->unplaced, (rv->n_unplaced + 1) * sizeof(*nv));
    if (!nv || ar_review_add_note(rv, note) != 0) {
        if (nv)
            rv->unplaced = nv;
        ar_review_issue_free(is);
        return AR_ENOMEM;
    }
    rv->unplaced = nv;
    is->outside_diff = 0;
    nv[rv->n_unplaced++] = *is;
    rv->dropped++;
    return 0;
}

struct fp_entry {
    const char *fp;
    size_t pos;
};

static int cmp_fp(const void *pa, const void *pb)
{
    const struct fp_entry *a = pa, *b = pb;
    int c = strcmp(a->fp, b->fp);
    return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* Fingerprints for rv's issues, in order: the k-th repeat of one finding
 * (the same fingerprint at occurrence 0) gets occurrence k, so each is unique. */
static int number_repeats(struct ar_review *rv)
{
    size_t n = rv->n_issues;
    for (size_t i = 0; i < n; i++)
        ar_review_fingerprint(&rv->issues[i], 0, rv->issues[i].fingerprint);
    if (n < 2)
        return 0;
    struct fp_entry *e = malloc(n * sizeof(*e));
    unsigned *occ = calloc(n, sizeof(*occ));
    if (!e || !occ) {
        free(e);
        free(occ);
        return AR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        e[i] = (struct fp_entry){ rv->issues[i].fingerprint, i };
    ar_sort(e, n, sizeof(*e), cmp_fp);
    for (size_t k = 1; k < n; k++)
        if (strcmp(e[k - 1].fp, e[k].fp) == 0)
            occ[e[k].pos] = occ[e[k - 1].pos] + 1;
    free(e);
    for (size_t i = 0; i < n; i++)
        if (occ[i])
            ar_review_fingerprint(&rv->issues[i], occ[i], rv->issues[i].fingerprint);
    free(occ);
    return 0;
}

int ar_review_fingerprint_all(struct ar_review *rv)
{
    int rc = number_repeats(rv);
    /* Findings with no place get fingerprints too (a baseline can know them). */
    for (size_t i = 0; i < rv->n_unplaced; i++) {
        unsigned repeat = 0;
        char first[AR_FINGERPRINT_LEN + 1], other[AR_FINGERPRINT_LEN + 1];
        ar_review_fingerprint(&rv->unplaced[i], 0, first);
        for (size_t j = 0; j < i; j++) {
            ar_review_fingerprint(&rv->unplaced[j], 0, other);
            repeat += strcmp(first, other) == 0;
        }
        ar_review_fingerprint(&rv->unplaced[i], repeat, rv->unplaced[i].fingerprint);
    }
    return rc;
}

int ar_review_locate(struct ar_review *rv, const struct ar_diff *diff, const char *root,
                     struct ar_error *err)
{
    size_t n = rv->n_issues, kept = 0;
    struct sort_entry *e = n ? calloc(n, sizeof(*e)) : NULL;
    if (n && !e)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory locating findings");
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct ar_review_issue *is = &rv->issues[i];
        char *path = NULL;
        int where = AR_PATH_ELSEWHERE;
        if (!rc && strlen(is->file) > AR_REVIEW_MAX_PATH) {
            where = AR_PATH_OUTSIDE;
        } else if (!rc && diff) {
            where = ar_diff_locate(diff, root, is->file, &path);
            if (where < 0)
                rc = where;
        } else if (!rc && !(path = strdup(is->file))) {
            rc = AR_ENOMEM;
        }
        if (rc) {
            free(path);
            ar_review_issue_free(is);
            continue;
        }
        if (where == AR_PATH_OUTSIDE) {
            /* A path outside the repository is no place to annotate, but the
             * finding still counts. */
            free(path);
            rc = unplace(rv, is,
                         strlen(is->file) > AR_REVIEW_MAX_PATH
                             ? "the path is too long"
                             : "the path is outside the repository");
            continue;
        }
        free(is->file);
        is->file = path;
        if (is->line > AR_REVIEW_MAX_LINE)
            is->line = AR_REVIEW_MAX_LINE;
        if (is->line < 0)
            is->line = 0; /* 0: the whole file */
        is->outside_diff = diff ? where != AR_PATH_IN_DIFF : 0;
        e[kept].issue = *is;
        e[kept].order = kept;
        kept++;
    }
    if (kept)
        ar_sort(e, kept, sizeof(*e), cmp_issue);
    for (size_t i = 0; i < kept; i++)
        rv->issues[i] = e[i].issue;
    rv->n_issues = kept;
    free(e);
    if (!rc)
        rc = ar_review_fingerprint_all(rv);
    if (rc)
        return ar_error_set(err, rc, NULL, "out of memory locating findings");
    return 0;
}
