/* The review object: from a model's JSON or a run result, and its verdict. */
#include <stdlib.h>
#include <string.h>

#include "json/extract.h"
#include "result/result.h"
#include "review/review.h"
#include "util/macros.h"

static const char *const severity_names[AR_SEV_COUNT + 1] = {
    [AR_SEV_CRITICAL] = "critical", [AR_SEV_HIGH] = "high", [AR_SEV_MEDIUM] = "medium",
    [AR_SEV_LOW] = "low",           [AR_SEV_INFO] = "info", [AR_SEV_COUNT] = "none",
};

const char *ar_severity_name(int sev)
{
    if (sev < 0 || sev > AR_SEV_COUNT)
        return "unknown";
    return severity_names[sev];
}

int ar_severity_parse(const char *s, int allow_none)
{
    int last = allow_none ? AR_SEV_COUNT : AR_SEV_COUNT - 1;
    for (int i = 0; s && i <= last; i++)
        if (strcmp(s, severity_names[i]) == 0)
            return i;
    return -1;
}

void ar_review_init(struct ar_review *rv)
{
    memset(rv, 0, sizeof(*rv));
    rv->cost_source = AR_COST_UNKNOWN;
}

void ar_review_finish(struct ar_review *rv)
{
    for (size_t i = 0; i < rv->n_issues; i++)
        ar_review_issue_free(&rv->issues[i]);
    free(rv->issues);
    for (size_t i = 0; i < rv->n_unplaced; i++)
        ar_review_issue_free(&rv->unplaced[i]);
    free(rv->unplaced);
    for (size_t i = 0; i < rv->n_notes; i++)
        free(rv->notes[i]);
    free(rv->notes);
    free(rv->summary);
    free(rv->raw_output);
    free(rv->provider);
    free(rv->model);
    ar_call_records_free(rv->calls, rv->n_calls);
    if (rv->budget)
        free(rv->budget->refused);
    free(rv->budget);
    ar_review_init(rv);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* 1 when the array a holds an object. */
static int any_object(json_t *a)
{
    for (size_t i = 0; i < json_array_size(a); i++)
        if (json_is_object(json_array_get(a, i)))
            return 1;
    return 0;
}

/*
 * ar_review_from_value(), or with `salvage` the envelope read as far as it goes: an
 * answer that broke the contract but holds findings keeps them, since each finding
 * stands alone. A `passed` that is no boolean is false (the findings decide the
 * verdict), a `summary` that is no string is empty, each with a note; an answer
 * with no finding to keep (no object in `issues`) is still no review (AR_ECONTRACT).
 */
static int from_value(json_t *value, int salvage, struct ar_review *rv, struct ar_error *err)
{
    if (!json_is_object(value))
        return ar_error_set(err, AR_ECONTRACT, "", "(root): expected object");
    json_t *passed = json_object_get(value, "passed");
    json_t *summary = json_object_get(value, "summary");
    json_t *issues = json_object_get(value, "issues");
    if (!salvage && !json_is_boolean(passed))
        return ar_error_set(err, AR_ECONTRACT, "/passed", "/passed: expected boolean");
    if (!salvage && !json_is_string(summary))
        return ar_error_set(err, AR_ECONTRACT, "/summary", "/summary: expected string");
    if (!json_is_array(issues))
        return ar_error_set(err, AR_ECONTRACT, "/issues", "/issues: expected array");
    if (salvage && !any_object(issues))
        return ar_error_set(err, AR_ECONTRACT, "/issues", "/issues: no finding to keep");
    struct ar_review got;
    ar_review_init(&got);
    got.passed = json_is_true(passed);
    int cut = 0;
    const char *sum = json_is_string(summary) ? json_string_value(summary) : "";
    got.summary = ar_review_text_cut(sum, &cut);
    int rc = got.summary ? 0 : AR_ENOMEM;
    if (!rc && !json_is_boolean(passed))
        rc = ar_review_add_note(&got, "/passed: not a boolean; the findings decide the verdict");
    if (!rc && !json_is_string(summary))
        rc = ar_review_add_note(&got, "/summary: not a string; left out");
    for (size_t i = 0; !rc && i < json_array_size(issues); i++)
        rc = ar_review_salvage_issue(json_array_get(issues, i), i, &got);
    if (rc) {
        ar_review_finish(&got);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    /* Only the model's part of rv is replaced: its accounting stays. */
    free(rv->summary);
    rv->summary = got.summary;
    rv->passed = got.passed;
    rv->issues = got.issues;
    rv->n_issues = got.n_issues;
    rv->unplaced = got.unplaced;
    rv->n_unplaced = got.n_unplaced;
    rv->dropped = got.dropped;
    rv->notes = got.notes;
    rv->n_notes = got.n_notes;
    return 0;
}

int ar_review_from_value(json_t *value, struct ar_review *rv, struct ar_error *err)
{
    return from_value(value, 0, rv, err);
}

int ar_review_salvage_value(json_t *value, struct ar_review *rv, struct ar_error *err)
{
    return from_value(value, 1, rv, err);
}

static int make_degraded(const struct ar_result *r, int code, const char *detail,
                         struct ar_review *rv)
{
    rv->degraded = 1;
    rv->passed = 1;
    free(rv->summary);
    rv->summary =
        strdup(code == AR_ENOJSON ? AR_REVIEW_NO_JSON_SUMMARY : AR_REVIEW_CONTRACT_SUMMARY);
    rv->raw_output = dup_or_null(r->output);
    ar_error_set(&rv->error, code, NULL, "%s", detail);
    if (!rv->summary || (r->output && !rv->raw_output))
        return AR_ENOMEM;
    return 0;
}

/*
 * Every answer of a reply (issue 57 #3): the values of the model's text, read as the
 * pipeline reads them (ar_json_extract_all(): fenced blocks first, then bare values,
 * repaired only when none parses), each judged as a review. A value that fits the
 * contract is an answer; one that breaks it but holds findings is an answer too,
 * each finding judged alone (a critical finding is never lost to its envelope);
 * anything else is another value, named in a note, never dropped in silence.
 */
struct answers {
    struct ar_review *v; /* the answers, in the reply's order */
    json_t **src;        /* the value each was read from (a reference each) */
    size_t n, cap;
    size_t salvaged; /* of them, those that broke the contract as a whole */
    size_t others;   /* values that are no review */
    int nomem;
};

static void answers_finish(struct answers *a)
{
    for (size_t i = 0; i < a->n; i++) {
        ar_review_finish(&a->v[i]);
        json_decref(a->src[i]);
    }
    free(a->v);
    free(a->src);
    memset(a, 0, sizeof(*a));
}

static int each_value(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                      void *arg)
{
    struct answers *a = arg;
    (void)start, (void)end, (void)fixes;
    if (a->n == a->cap) {
        size_t ncap = a->cap ? a->cap * 2 : 4;
        void *nv = realloc(a->v, ncap * sizeof(*a->v));
        if (nv)
            a->v = nv;
        void *ns = nv ? realloc(a->src, ncap * sizeof(*a->src)) : NULL;
        if (!ns)
            return a->nomem = 1;
        a->src = ns;
        a->cap = ncap;
    }
    struct ar_review *rv = &a->v[a->n];
    ar_review_init(rv);
    struct ar_error err = AR_ERROR_INIT;
    int salvaged = 0, rc = ar_review_from_value(doc->value, rv, &err);
    if (rc == AR_ECONTRACT) {
        salvaged = 1;
        rc = ar_review_salvage_value(doc->value, rv, &err);
    }
    if (rc == AR_ECONTRACT) {
        ar_review_finish(rv);
        a->others++;
        return 0;
    }
    if (rc) {
        ar_review_finish(rv);
        return a->nomem = 1;
    }
    a->salvaged += salvaged;
    a->src[a->n++] = json_incref(doc->value);
    return 0;
}

/* Makes sure the run's own answer (value, borrowed; the pipeline's choice, which may be
 * a repaired value no plain reading gives) is one of a's, first when it was not there.
 * Returns 0 or AR_ENOMEM. */
static int keep_chosen(struct answers *a, json_t *value)
{
    for (size_t i = 0; i < a->n; i++)
        if (json_equal(a->src[i], value))
            return 0;
    struct ar_json_doc doc = AR_JSON_DOC_INIT;
    doc.value = value;
    size_t before = a->n;
    if (each_value(&doc, 0, 0, 0, a) != 0 || a->n == before)
        return a->nomem ? AR_ENOMEM : 0;
    /* It came first: the pipeline chose it over the others. */
    struct ar_review rv = a->v[a->n - 1];
    json_t *src = a->src[a->n - 1];
    memmove(&a->v[1], &a->v[0], (a->n - 1) * sizeof(*a->v));
    memmove(&a->src[1], &a->src[0], (a->n - 1) * sizeof(*a->src));
    a->v[0] = rv;
    a->src[0] = src;
    return 0;
}

/* Reads every answer of output into a. Returns 0 or AR_ENOMEM. */
static int read_answers(const char *output, struct answers *a)
{
    struct ar_extract_options xo = AR_EXTRACT_OPTIONS_INIT;
    xo.flags = AR_EXTRACT_REPAIR;
    struct ar_extract_note left = { 0, 0 };
    int rc = ar_json_extract_all(output, strlen(output), &xo, each_value, a, &left, NULL);
    if (a->nomem || rc == AR_ENOMEM)
        return AR_ENOMEM;
    a->others += left.count;
    return 0;
}

/* Says that the reply held n values that are no answer. Returns 0 or AR_ENOMEM. */
static int note_others(struct ar_review *rv, size_t n)
{
    char note[300];
    snprintf(note, sizeof(note),
             "the reply also held %zu JSON value%s that %s no review answer (neither passed, "
             "summary and issues nor a finding, or it did not parse): left out",
             n, n == 1 ? "" : "s", n == 1 ? "is" : "are");
    return ar_review_add_note(rv, note);
}

/* Prefixes each of rv's notes with "answer K: ". Returns 0 or AR_ENOMEM. */
static int prefix_notes(struct ar_review *rv, size_t k)
{
    for (size_t i = 0; i < rv->n_notes; i++) {
        char *s = NULL;
        if (asprintf(&s, "answer %zu: %s", k, rv->notes[i]) < 0)
            return AR_ENOMEM;
        free(rv->notes[i]);
        rv->notes[i] = s;
    }
    return 0;
}

/*
 * rv's findings and verdict from the answers of a (n >= 1), with the notes that say
 * what was read: several answers are one review, their union (ar_review_union(): by
 * fingerprint, the strictest verdict); values that are no review are named. Returns 0
 * or AR_ENOMEM.
 */
static int from_answers(struct answers *a, struct ar_review *rv)
{
    int rc = 0;
    for (size_t i = 0; a->n > 1 && i < a->n && !rc; i++)
        rc = prefix_notes(&a->v[i], i + 1);
    if (!rc)
        rc = ar_review_union(a->v, a->n, rv);
    char note[300];
    if (!rc && a->n > 1) {
        snprintf(note, sizeof(note),
                 "the reply held %zu answers that fit the review contract: every answer counts "
                 "(their findings are merged, by fingerprint, and the strictest verdict kept)",
                 a->n);
        rc = ar_review_add_note(rv, note);
    }
    if (!rc && a->others)
        rc = note_others(rv, a->others);
    rv->answers = a->n;
    return rc;
}

/* A review read from the output of an answer that failed the contract: 0 when it
 * held one (rv filled, a note says so), 1 when it did not, or AR_ENOMEM. */
static int salvage_output(const struct ar_result *r, struct ar_review *rv)
{
    struct answers a = { 0 };
    int rc = read_answers(r->output, &a);
    if (!rc && !a.n)
        rc = 1;
    if (!rc)
        rc = from_answers(&a, rv);
    answers_finish(&a);
    if (rc)
        return rc;
    char note[400];
    snprintf(note, sizeof(note),
             "the answer broke the contract (%s); each finding was judged alone",
             r->error.msg[0] ? r->error.msg : "contract");
    return ar_review_add_note(rv, note);
}

/* 1 when the run's answer left other values of the text out (extra_values). */
static int left_values_out(const struct ar_result *r)
{
    for (size_t i = 0; i < r->n_fix_details; i++)
        if (r->fix_details[i].fix && strcmp(r->fix_details[i].fix, "extra_values") == 0)
            return 1;
    return 0;
}

int ar_review_from_result(const struct ar_result *r, struct ar_review *rv)
{
    rv->chunks = 1;
    rv->usage = r->usage;
    rv->cost_usd = r->cost_usd;
    rv->cost_source = r->cost_source;
    rv->duration_ms = r->duration_ms;
    rv->cached = r->cached;
    rv->n_cached = r->n_cached;
    rv->cached_usage = r->cached_usage;
    rv->cached_cost_usd = r->cached_cost_usd;
    rv->cached_cost_source = r->cached_cost_source;
    rv->provider = dup_or_null(r->provider);
    rv->model = dup_or_null(r->model);
    if ((r->provider && !rv->provider) || (r->model && !rv->model) ||
        ar_call_records_append(&rv->calls, &rv->n_calls, r->calls, r->n_calls) != 0)
        return AR_ENOMEM;

    int code = r->error.code;
    if (code == AR_ECONTRACT && r->output) {
        /* The answer broke the contract as a whole (claude's own schema check gave up
         * on it, say), yet it may still be a review: each finding is judged alone
         * rather than all of them lost to a degraded pass. */
        int rc = salvage_output(r, rv);
        if (rc <= 0)
            return rc;
    }
    if (code == AR_ENOJSON || code == AR_ECONTRACT)
        return make_degraded(r, code, r->error.msg[0] ? r->error.msg : ar_strerror(code), rv);
    if (code != 0 || !r->ok) {
        rv->failed = 1;
        rv->passed = 0;
        if (code)
            rv->error = r->error;
        else
            ar_error_set(&rv->error, AR_ECLIFAILED, NULL, "the run failed without an error");
        rv->summary = strdup("");
        return rv->summary ? 0 : AR_ENOMEM;
    }
    struct ar_error verr = AR_ERROR_INIT;
    int rc = ar_review_from_value(r->value, rv, &verr);
    if (rc == AR_ECONTRACT)
        return make_degraded(r, AR_ECONTRACT, verr.msg, rv);
    if (rc)
        return rc;
    rv->answers = 1;
    /* The pipeline chose one value and named the others: each of them that is an
     * answer counts too. */
    if (!r->output || !left_values_out(r))
        return 0;
    struct answers a = { 0 };
    rc = read_answers(r->output, &a);
    if (!rc && a.n)
        rc = keep_chosen(&a, r->value);
    if (!rc && a.n > 1) {
        /* The union replaces what the chosen answer alone gave, its notes included. */
        for (size_t i = 0; i < rv->n_notes; i++)
            free(rv->notes[i]);
        free(rv->notes);
        rv->notes = NULL;
        rv->n_notes = 0;
        rc = from_answers(&a, rv);
    } else if (!rc && a.others) {
        rc = note_others(rv, a.others);
    }
    answers_finish(&a);
    return rc;
}

static void count_issue(const struct ar_review_issue *is, int fail_on,
                        struct ar_review_verdict *out)
{
    enum ar_severity s = is->severity;
    if (s < AR_SEV_COUNT)
        out->by_severity[s]++;
    /* A panel's quorum: a finding too few members reported is shown, not counted
     * (a critical one still counts: ar_review_counts()). */
    if ((int)s <= fail_on && fail_on != AR_FAIL_ON_NONE && ar_review_counts(is))
        out->n_failing++;
}

void ar_review_verdict(const struct ar_review *rv, const struct ar_review_coverage *cov,
                       int fail_on, int strict, struct ar_review_verdict *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < rv->n_issues; i++)
        count_issue(&rv->issues[i], fail_on, out);
    /* A finding with no place to show it still counts: never lost to a bad path. */
    for (size_t i = 0; i < rv->n_unplaced; i++)
        count_issue(&rv->unplaced[i], fail_on, out);
    /* Counted from the entries, not taken from a total someone kept: the gate's one rule. */
    for (size_t i = 0; cov && i < cov->n_files; i++)
        if (cov->files[i].status != AR_COVER_REVIEWED && !cov->files[i].rule)
            out->n_unreviewed++;
    if (rv->failed)
        out->exit_status = ar_error_exit_status(rv->error.code ? rv->error.code : AR_ECLIFAILED);
    else if (rv->degraded && strict)
        out->exit_status = ar_error_exit_status(rv->error.code);
    else if (out->n_failing || out->n_unreviewed)
        out->exit_status = 1;
    else if (!rv->passed && rv->n_issues == 0 && rv->n_unplaced == 0 && rv->suppressed == 0 &&
             fail_on != AR_FAIL_ON_NONE)
        out->exit_status = 1;
    else
        out->exit_status = 0;
    out->fails = out->exit_status == 1;
}
