/* The review object: from a model's JSON or a run result, and its verdict. */
#include <stdlib.h>
#include <string.h>

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
    for (size_t i = 0; i < rv->n_issues; i++) {
        free(rv->issues[i].file);
        free(rv->issues[i].message);
        free(rv->issues[i].suggestion);
    }
    free(rv->issues);
    free(rv->summary);
    free(rv->raw_output);
    free(rv->provider);
    free(rv->model);
    ar_call_records_free(rv->calls, rv->n_calls);
    ar_review_init(rv);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The contract is enforced by the pipeline; this re-check guards against an
 * override template (--prompts-dir) whose contract says less. */
static int issue_from_value(json_t *v, size_t i, struct ar_review_issue *is, struct ar_error *err)
{
    char where[64];
    if (!json_is_object(v)) {
        snprintf(where, sizeof(where), "/issues/%zu", i);
        return ar_error_set(err, AR_ECONTRACT, where, "%s: expected object", where);
    }
    json_t *file = json_object_get(v, "file"), *line = json_object_get(v, "line");
    json_t *sev = json_object_get(v, "severity"), *msg = json_object_get(v, "message");
    json_t *sugg = json_object_get(v, "suggestion");
    const char *bad = NULL, *why = NULL;
    int s = json_is_string(sev) ? ar_severity_parse(json_string_value(sev), 0) : -1;
    if (!json_is_string(file) || !*json_string_value(file))
        bad = "file", why = "expected a non-empty string";
    else if (!json_is_integer(line) || json_integer_value(line) < 1)
        bad = "line", why = "expected an integer >= 1";
    else if (s < 0)
        bad = "severity", why = "expected critical, high, medium, low or info";
    else if (!json_is_string(msg))
        bad = "message", why = "expected string";
    else if (sugg && !json_is_string(sugg) && !json_is_null(sugg))
        bad = "suggestion", why = "expected string";
    if (bad) {
        snprintf(where, sizeof(where), "/issues/%zu/%s", i, bad);
        return ar_error_set(err, AR_ECONTRACT, where, "%s: %s", where, why);
    }
    is->file = strdup(json_string_value(file));
    is->line = json_integer_value(line);
    is->severity = (enum ar_severity)s;
    is->message = strdup(json_string_value(msg));
    is->suggestion = json_is_string(sugg) ? strdup(json_string_value(sugg)) : NULL;
    if (!is->file || !is->message || (json_is_string(sugg) && !is->suggestion))
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    return 0;
}

int ar_review_from_value(json_t *value, struct ar_review *rv, struct ar_error *err)
{
    if (!json_is_object(value))
        return ar_error_set(err, AR_ECONTRACT, "", "(root): expected object");
    json_t *passed = json_object_get(value, "passed");
    json_t *summary = json_object_get(value, "summary");
    json_t *issues = json_object_get(value, "issues");
    if (!json_is_boolean(passed))
        return ar_error_set(err, AR_ECONTRACT, "/passed", "/passed: expected boolean");
    if (!json_is_string(summary))
        return ar_error_set(err, AR_ECONTRACT, "/summary", "/summary: expected string");
    if (!json_is_array(issues))
        return ar_error_set(err, AR_ECONTRACT, "/issues", "/issues: expected array");
    size_t n = json_array_size(issues);
    struct ar_review_issue *v = n ? calloc(n, sizeof(*v)) : NULL;
    char *sum = strdup(json_string_value(summary));
    if ((n && !v) || !sum) {
        free(v);
        free(sum);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        int rc = issue_from_value(json_array_get(issues, i), i, &v[i], err);
        if (rc) {
            for (size_t k = 0; k <= i; k++) {
                free(v[k].file);
                free(v[k].message);
                free(v[k].suggestion);
            }
            free(v);
            free(sum);
            return rc;
        }
    }
    rv->passed = json_is_true(passed);
    free(rv->summary);
    rv->summary = sum;
    rv->issues = v;
    rv->n_issues = n;
    return 0;
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

void ar_review_verdict(const struct ar_review *rv, int fail_on, int strict,
                       struct ar_review_verdict *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < rv->n_issues; i++) {
        enum ar_severity s = rv->issues[i].severity;
        if (s < AR_SEV_COUNT)
            out->by_severity[s]++;
        if ((int)s <= fail_on && fail_on != AR_FAIL_ON_NONE)
            out->n_failing++;
    }
    if (rv->failed)
        out->exit_status = ar_error_exit_status(rv->error.code ? rv->error.code : AR_ECLIFAILED);
    else if (rv->degraded && strict)
        out->exit_status = ar_error_exit_status(rv->error.code);
    else if (out->n_failing)
        out->exit_status = 1;
    else if (!rv->passed && rv->n_issues == 0 && rv->suppressed == 0 && fail_on != AR_FAIL_ON_NONE)
        out->exit_status = 1;
    else
        out->exit_status = 0;
    out->fails = out->exit_status == 1;
}
