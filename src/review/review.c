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

/* A review read from the output of an answer that failed the contract: 0 when it was
 * one (rv filled, a note says so), 1 when it was not, or AR_ENOMEM. */
static int salvage_output(const struct ar_result *r, struct ar_review *rv)
{
    struct ar_extract_options xo = AR_EXTRACT_OPTIONS_INIT;
    struct ar_extract_result xr = AR_EXTRACT_RESULT_INIT;
    xo.flags = AR_EXTRACT_REPAIR;
    if (ar_json_extract(r->output, strlen(r->output), &xo, &xr, NULL) != 0)
        return 1;
    struct ar_error err = AR_ERROR_INIT;
    int rc = ar_review_salvage_value(xr.value, rv, &err);
    ar_extract_result_finish(&xr);
    if (rc == AR_ECONTRACT)
        return 1;
    if (rc)
        return rc;
    char note[400];
    snprintf(note, sizeof(note),
             "the answer broke the contract (%s); each finding was judged alone",
             r->error.msg[0] ? r->error.msg : "contract");
    return ar_review_add_note(rv, note);
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
    return rc;
}

static void count_issue(const struct ar_review_issue *is, int fail_on,
                        struct ar_review_verdict *out)
{
    enum ar_severity s = is->severity;
    if (s < AR_SEV_COUNT)
        out->by_severity[s]++;
    if ((int)s <= fail_on && fail_on != AR_FAIL_ON_NONE)
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
