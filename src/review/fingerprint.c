/*
 * Fingerprints of findings and baselines of earlier reviews. One function
 * makes every fingerprint agentrun prints (json, sarif, gitlab), so a
 * baseline written in one format suppresses findings in any other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git/internal.h"
#include "review/diff.h"
#include "review/review.h"
#include "util/array.h"
#include "util/file.h"

/* The largest baseline read: far more than any review prints. */
#define BASELINE_MAX_BYTES ((size_t)64 << 20)

/* Hashes s with ASCII case folded, each run of whitespace as one space (none
 * at the ends) and each run of digits as "0": the same finding worded the same
 * way keeps its fingerprint when the model renumbers lines in the text. */
static void hash_normalized(struct ar_sha1 *h, const char *s)
{
    int space = 0, digits = 0, any = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            space = any;
            digits = 0;
            continue;
        }
        if (space) {
            ar_sha1_update(h, " ", 1);
            space = 0;
        }
        any = 1;
        if (c >= '0' && c <= '9') {
            if (!digits)
                ar_sha1_update(h, "0", 1);
            digits = 1;
            continue;
        }
        digits = 0;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        ar_sha1_update(h, &c, 1);
    }
}

void ar_review_fingerprint(const struct ar_review_issue *is, unsigned occurrence,
                           char out[AR_FINGERPRINT_LEN + 1])
{
    /* SHA-1 needs no collision resistance here: a fingerprint only tells
     * findings apart for deduplication. The NULs keep the fields apart. */
    struct ar_sha1 h;
    ar_sha1_init(&h);
    ar_sha1_update(&h, "agentrun-finding/1", sizeof("agentrun-finding/1"));
    const char *sev = ar_severity_name(is->severity);
    ar_sha1_update(&h, sev, strlen(sev) + 1);
    const char *file = is->file ? is->file : "";
    ar_sha1_update(&h, file, strlen(file) + 1);
    hash_normalized(&h, is->message);
    if (occurrence) {
        char n[16];
        int len = snprintf(n, sizeof(n), "%u", occurrence);
        ar_sha1_update(&h, "", 1);
        ar_sha1_update(&h, n, (size_t)len);
    }
    unsigned char d[20];
    ar_sha1_final(&h, d);
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < AR_FINGERPRINT_LEN / 2; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[AR_FINGERPRINT_LEN] = '\0';
}

static int is_fingerprint(json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || strlen(s) != AR_FINGERPRINT_LEN)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

static int add(struct ar_baseline *b, size_t *cap, json_t *v)
{
    if (!is_fingerprint(v))
        return 0;
    if (b->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        void *nv = realloc(b->fp, ncap * sizeof(*b->fp));
        if (!nv)
            return AR_ENOMEM;
        b->fp = nv;
        *cap = ncap;
    }
    memcpy(b->fp[b->n++], json_string_value(v), AR_FINGERPRINT_LEN + 1);
    return 0;
}

static int cmp_fp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The fingerprints of one of agentrun's documents; 1 when doc is none of them. */
static int collect(json_t *doc, struct ar_baseline *b, size_t *cap)
{
    int rc = 0;
    size_t i, j;
    json_t *v, *run, *res;
    if (json_is_array(doc)) { /* gitlab */
        json_array_foreach(doc, i, v) if (!rc) rc = add(b, cap, json_object_get(v, "fingerprint"));
        return rc;
    }
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    if (schema && strncmp(schema, "agentrun.review/", 16) == 0) {
        json_array_foreach(json_object_get(doc, "issues"), i, v) if (!rc) rc =
            add(b, cap, json_object_get(v, "fingerprint"));
        json_array_foreach(json_object_get(doc, "unplaced"), i, v) if (!rc) rc =
            add(b, cap, json_object_get(v, "fingerprint"));
        return rc;
    }
    json_t *runs = json_object_get(doc, "runs");
    if (!json_is_array(runs) || !json_is_string(json_object_get(doc, "version")))
        return 1;
    json_array_foreach(runs, i, run)
        json_array_foreach(json_object_get(run, "results"), j, res) if (!rc) rc =
            add(b, cap,
                json_object_get(json_object_get(res, "partialFingerprints"), AR_FINGERPRINT_KEY));
    return rc;
}

int ar_baseline_load(const struct ar_share *share, const char *cwd, const char *base,
                     const char *path, struct ar_baseline *b, struct ar_error *err)
{
    memset(b, 0, sizeof(*b));
    struct ar_buf text;
    ar_buf_init(&text, BASELINE_MAX_BYTES);
    char *file = NULL;
    int rc = ar_review_read_spec(share, cwd, base, path, &text, &file, err);
    if (rc) {
        ar_buf_finish(&text);
        if (rc == AR_ENOMEM)
            return rc;
        if (err)
            err->code = AR_EUSAGE;
        return AR_EUSAGE;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(text.data ? text.data : "", text.len, 0, &jerr);
    ar_buf_finish(&text);
    if (!doc) {
        free(file);
        return ar_error_set(err, AR_EUSAGE, path, "'%s' is not JSON: %s (line %d)", path, jerr.text,
                            jerr.line);
    }
    size_t cap = 0;
    rc = collect(doc, b, &cap);
    json_decref(doc);
    if (rc) {
        free(file);
        file = NULL;
    }
    if (rc == 1) {
        ar_baseline_finish(b);
        return ar_error_set(err, AR_EUSAGE, path,
                            "'%s' is not an agentrun review (json, sarif or gitlab format)", path);
    }
    if (rc) {
        ar_baseline_finish(b);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory reading the baseline");
    }
    if (b->n)
        ar_sort(b->fp, b->n, sizeof(*b->fp), cmp_fp);
    /* A file of the checkout: the review checks that the change does not write it. */
    b->file = file;
    return 0;
}

void ar_baseline_finish(struct ar_baseline *b)
{
    free(b->fp);
    free(b->file);
    memset(b, 0, sizeof(*b));
}

/* Removes from v the issues whose fingerprint b holds; returns how many. */
static size_t drop_known(struct ar_review_issue *v, size_t *n, const struct ar_baseline *b)
{
    size_t kept = 0, removed = 0;
    for (size_t i = 0; i < *n; i++) {
        struct ar_review_issue *is = &v[i];
        if (b->n && bsearch(is->fingerprint, b->fp, b->n, sizeof(*b->fp), cmp_fp)) {
            ar_review_issue_free(is);
            removed++;
            continue;
        }
        v[kept++] = *is;
    }
    *n = kept;
    return removed;
}

size_t ar_review_apply_baseline(struct ar_review *rv, const struct ar_baseline *b)
{
    size_t removed = drop_known(rv->issues, &rv->n_issues, b);
    size_t unplaced = drop_known(rv->unplaced, &rv->n_unplaced, b);
    rv->dropped -= unplaced;
    rv->suppressed += removed + unplaced;
    return removed + unplaced;
}

/* The public baseline (agentrun/review.h) is the internal one behind an opaque name. */
struct ar_review_baseline {
    struct ar_baseline b;
};

int ar_review_baseline_load(const char *path, struct ar_review_baseline **out, struct ar_error *err)
{
    return ar_review_baseline_read(NULL, path, out, err);
}

int ar_review_baseline_read(const char *cwd, const char *path, struct ar_review_baseline **out,
                            struct ar_error *err)
{
    *out = NULL;
    struct ar_review_baseline *rb = calloc(1, sizeof(*rb));
    if (!rb)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory reading the baseline");
    int rc = ar_baseline_load(NULL, cwd, NULL, path, &rb->b, err);
    if (rc) {
        free(rb);
        return rc;
    }
    *out = rb;
    return 0;
}

void ar_review_baseline_destroy(struct ar_review_baseline *rb)
{
    if (!rb)
        return;
    ar_baseline_finish(&rb->b);
    free(rb);
}

const struct ar_baseline *ar_review_baseline_get(const struct ar_review_baseline *rb)
{
    return rb ? &rb->b : NULL;
}
