/*
 * The review's JSON documents: the json format (agentrun.review/1,
 * docs/review.md) and SARIF 2.1.0 (GitHub code scanning). Both are built as
 * JSON values; format.c dumps them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/version.h"
#include "cost/cost.h"
#include "result/result.h"
#include "review/format.h"

/* How each severity shows in SARIF: its level and its rule. */
static const struct {
    const char *sarif_level;
    const char *rule_name;
    const char *rule_text;
    const char *rule_full; /* fullDescription: what the model was asked to report at this level */
} severity_out[AR_SEV_COUNT] = {
    [AR_SEV_CRITICAL] = { "error", "CriticalFinding",
                          "A critical problem: the change must not be merged as is",
                          "An exploitable vulnerability, data loss, or a crash on a common path "
                          "that the change introduces or touches." },
    [AR_SEV_HIGH] = { "error", "HighFinding", "A serious problem that should be fixed",
                      "A bug that users will hit, introduced or touched by the change." },
    [AR_SEV_MEDIUM] = { "warning", "MediumFinding", "A problem worth fixing",
                        "A bug in an edge case or a missing check in the changed code." },
    [AR_SEV_LOW] = { "warning", "LowFinding", "A minor problem",
                     "A minor problem in the changed code that is worth fixing." },
    [AR_SEV_INFO] = { "note", "InfoFinding", "A remark, not a problem",
                      "A remark on the change that needs no fix." },
};

static json_t *issue_value(const struct ar_review_issue *is)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "file", ar_rf_text(is->file));
    /* null: about the whole file (the model gave no usable line) */
    json_object_set_new(o, "line", is->line ? json_integer(is->line) : json_null());
    json_object_set_new(o, "severity", json_string(ar_severity_name(is->severity)));
    json_object_set_new(o, "message", ar_rf_text(is->message));
    if (is->suggestion)
        json_object_set_new(o, "suggestion", ar_rf_text(is->suggestion));
    json_object_set_new(o, "outside_diff", json_boolean(is->outside_diff));
    if (is->fingerprint[0])
        json_object_set_new(o, "fingerprint", json_string(is->fingerprint));
    if (is->cut)
        json_object_set_new(o, "cut", json_true());
    /* A panel's finding: who reported it, k of n, and whether it counts (the quorum). */
    if (is->n_found_by) {
        json_t *by = json_array();
        for (size_t i = 0; by && i < is->n_found_by; i++)
            json_array_append_new(by, json_string(is->found_by[i]));
        json_object_set_new(o, "found_by", by);
        json_object_set_new(
            o, "agreement",
            json_pack("{sIsI}", "k", (json_int_t)is->n_found_by, "n", (json_int_t)is->panel_size));
        json_object_set_new(o, "counted", json_boolean(ar_review_counts(is)));
    }
    return o;
}

static json_t *usage_value(const struct ar_usage *u);

static json_t *member_value(const struct ar_review_member *mb)
{
    json_t *err = json_null();
    if (mb->status == AR_MEMBER_FAILED)
        err = json_pack("{ssso}", "code", ar_strerror_name(mb->error.code), "message",
                        ar_rf_text(mb->error.msg[0] ? mb->error.msg : ar_strerror(mb->error.code)));
    /* No call started: it spent nothing, as a review with nothing to review. */
    int none = !mb->calls;
    return json_pack("{sssosssIsIsIsIsososssIso}", "provider", mb->provider, "model",
                     ar_rf_text(mb->model), "status", ar_review_member_status_name(mb->status),
                     "chunks", (json_int_t)mb->chunks, "calls", (json_int_t)mb->calls, "findings",
                     (json_int_t)mb->findings, "files_reviewed", (json_int_t)mb->files_reviewed,
                     "tokens", usage_value(&mb->usage), "cost_usd",
                     none ? json_real(0) : ar_cost_value(mb->cost_usd, mb->cost_source),
                     "cost_source", none ? "none" : ar_cost_source_name(mb->cost_source),
                     "duration_ms", (json_int_t)mb->duration_ms, "error", err);
}

/* The panel object (docs/review.md, "A panel"), or null without a panel. */
static json_t *panel_value(const struct ar_review_report *rep)
{
    const struct ar_review_panel *p = rep->panel;
    if (!p || !p->n_members)
        return json_null();
    json_t *members = json_array();
    for (size_t m = 0; members && m < p->n_members; m++)
        json_array_append_new(members, member_value(&p->members[m]));
    size_t below = 0;
    const struct ar_review *rv = rep->rv;
    for (size_t i = 0; i < rv->n_issues; i++)
        below += !ar_review_counts(&rv->issues[i]);
    for (size_t i = 0; i < rv->n_unplaced; i++)
        below += !ar_review_counts(&rv->unplaced[i]);
    return json_pack("{sosIsIsIsI}", "members", members, "answered", (json_int_t)p->answered, "of",
                     (json_int_t)p->n_members, "quorum", (json_int_t)p->quorum, "not_counted",
                     (json_int_t)below);
}

static json_t *file_value(const struct ar_review_file *f)
{
    int in_chunk = f->n_chunks && (f->status == AR_COVER_REVIEWED || f->status == AR_COVER_QUEUED);
    return json_pack("{sosososososo}", "path", ar_rf_text(f->path), "old_path",
                     ar_rf_text(f->old_path), "status",
                     json_string(ar_review_cover_name(f->status)), "rule", ar_rf_text(f->rule),
                     "why", ar_rf_text(f->why), "chunk",
                     in_chunk ? json_integer((json_int_t)f->chunk + 1) : json_null());
}

/* The coverage's JSON form: {"files": n, "reviewed": n, "excluded": n, "unreviewed": n}. */
static json_t *coverage_counts(const struct ar_review_report *rep)
{
    const struct ar_review_coverage *c = rep->coverage;
    return json_pack("{sIsIsIsI}", "files", (json_int_t)ar_rf_n_cover(rep), "reviewed",
                     (json_int_t)(c ? c->n_reviewed : 0), "excluded",
                     (json_int_t)(c ? c->n_excluded : 0), "unreviewed",
                     (json_int_t)(c ? c->n_unreviewed : 0));
}

static json_t *files_value(const struct ar_review_report *rep)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < ar_rf_n_cover(rep); i++)
        json_array_append_new(a, file_value(ar_rf_cover_at(rep, i)));
    return a;
}

static json_t *notes_value(const struct ar_review *rv)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < rv->n_notes; i++)
        json_array_append_new(a, ar_rf_text(rv->notes[i]));
    return a;
}

static json_t *usage_value(const struct ar_usage *u)
{
    return json_pack("{sIsIsIsIsI}", "input", (json_int_t)u->input, "cache_read",
                     (json_int_t)u->cache_read, "cache_write", (json_int_t)u->cache_write, "output",
                     (json_int_t)u->output, "reasoning", (json_int_t)u->reasoning);
}

static json_t *error_value(const struct ar_review *rv)
{
    if (!rv->failed && !rv->degraded)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "code", json_string(ar_strerror_name(rv->error.code)));
    json_object_set_new(o, "message",
                        ar_rf_text(rv->error.msg[0] ? rv->error.msg : ar_strerror(rv->error.code)));
    return o;
}

json_t *ar_review_to_value(const struct ar_review_report *rep)
{
    const struct ar_review *rv = rep->rv;
    json_t *o = json_object();
    json_t *issues = json_array();
    if (!o || !issues) {
        json_decref(o);
        json_decref(issues);
        return NULL;
    }
    for (size_t i = 0; i < rv->n_issues; i++)
        json_array_append_new(issues, issue_value(&rv->issues[i]));
    json_object_set_new(o, "schema", json_string(AR_REVIEW_SCHEMA));
    json_object_set_new(o, "passed", json_boolean(rv->passed));
    json_object_set_new(o, "summary", ar_rf_text(rv->summary ? rv->summary : ""));
    json_object_set_new(o, "issues", issues);
    json_object_set_new(o, "degraded", json_boolean(rv->degraded));
    if (rv->degraded)
        json_object_set_new(o, "raw_output", ar_rf_text(rv->raw_output));
    json_object_set_new(o, "verdict", json_string(ar_rf_verdict_name(rep->verdict)));
    json_object_set_new(o, "exit_code", json_integer(rep->verdict->exit_status));
    json_object_set_new(o, "fail_on", json_string(ar_severity_name(rep->fail_on)));
    json_object_set_new(o, "reviewed", json_boolean(rep->reviewed));
    json_object_set_new(o, "source", ar_rf_text(rep->source));
    json_object_set_new(o, "chunks", json_integer((json_int_t)rv->chunks));
    json_object_set_new(o, "answers", json_integer((json_int_t)rv->answers));
    json_object_set_new(o, "suppressed", json_integer((json_int_t)rv->suppressed));
    json_object_set_new(o, "dropped", json_integer((json_int_t)rv->dropped));
    json_t *excluded = json_array();
    for (size_t i = 0; i < rep->n_excluded; i++)
        json_array_append_new(excluded, ar_rf_text(rep->excluded[i]));
    json_object_set_new(o, "excluded", excluded);
    json_object_set_new(o, "coverage", coverage_counts(rep));
    json_object_set_new(o, "files", files_value(rep));
    json_t *unplaced = json_array();
    for (size_t i = 0; unplaced && i < rv->n_unplaced; i++)
        json_array_append_new(unplaced, issue_value(&rv->unplaced[i]));
    json_object_set_new(o, "unplaced", unplaced);
    json_object_set_new(o, "notes", notes_value(rv));
    json_object_set_new(o, "provider", ar_rf_text(rv->provider));
    json_object_set_new(o, "model", ar_rf_text(rv->model));
    json_object_set_new(o, "tokens", usage_value(&rv->usage));
    double share = ar_usage_cache_read_share(&rv->usage);
    json_object_set_new(o, "cache_read_share",
                        share < 0 ? json_null() : json_real(round(share * 1000) / 1000));
    if (!rep->reviewed) {
        /* No call was made: the cost is known to be nothing. */
        json_object_set_new(o, "cost_usd", json_real(0));
        json_object_set_new(o, "cost_source", json_string("none"));
    } else {
        json_object_set_new(o, "cost_usd", ar_cost_value(rv->cost_usd, rv->cost_source));
        json_object_set_new(o, "cost_source", json_string(ar_cost_source_name(rv->cost_source)));
    }
    json_object_set_new(o, "cached", json_boolean(rv->cached));
    if (rv->n_cached)
        json_object_set_new(o, "cached_from",
                            json_pack("{s:o,s:o,s:s,s:I}", "tokens", usage_value(&rv->cached_usage),
                                      "cost_usd",
                                      ar_cost_value(rv->cached_cost_usd, rv->cached_cost_source),
                                      "cost_source", ar_cost_source_name(rv->cached_cost_source),
                                      "calls", (json_int_t)rv->n_cached));
    else
        json_object_set_new(o, "cached_from", json_null());
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)rv->duration_ms));
    json_object_set_new(o, "calls", ar_call_records_value(rv->calls, rv->n_calls));
    const struct ar_run_budget *b = rv->budget;
    json_object_set_new(o, "budget",
                        b ? json_pack("{s:o,s:o,s:o}", "cap_usd",
                                      b->cap_usd > 0 ? json_real(b->cap_usd) : json_null(),
                                      "spent_usd", json_real(ar_cost_round(b->spent_usd)),
                                      "refused", ar_rf_text(b->refused))
                          : json_null());
    json_object_set_new(o, "error", error_value(rv));
    json_object_set_new(o, "panel", panel_value(rep));
    return o;
}

/* ---- SARIF 2.1.0 ---- */

int ar_uri_encode_path(const char *path, struct ar_buf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        int keep = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                   (*p >= '0' && *p <= '9') || strchr("-._~/", *p);
        int rc = keep ? ar_buf_putc(out, (char)*p)
                      : ar_buf_printf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
        if (rc)
            return rc;
    }
    return 0;
}

static json_t *sarif_rules(void)
{
    json_t *rules = json_array();
    for (int s = 0; s < AR_SEV_COUNT; s++) {
        char id[32];
        snprintf(id, sizeof(id), "review/%s", ar_severity_name(s));
        struct ar_buf help;
        ar_buf_init(&help, AR_BUF_UNLIMITED);
        ar_buf_printf(&help,
                      "A model reviewing the change with agentrun review reported a %s finding: "
                      "%s Read the message and the code at the location; fix the problem, or "
                      "dismiss the alert when the model is wrong (it can be). The finding's "
                      "suggestion, when there is one, is part of the message.",
                      ar_severity_name(s), severity_out[s].rule_full);
        json_array_append_new(rules,
                              json_pack("{sssss{ss}s{ss}s{so}s{ss}s{ss}}", "id", id, "name",
                                        severity_out[s].rule_name, "shortDescription", "text",
                                        severity_out[s].rule_text, "fullDescription", "text",
                                        severity_out[s].rule_full, "help", "text",
                                        ar_rf_text(ar_buf_cstr(&help)), "defaultConfiguration",
                                        "level", severity_out[s].sarif_level, "properties",
                                        "severity", ar_severity_name(s)));
        ar_buf_finish(&help);
    }
    /* Index AR_SEV_COUNT: a changed file the review did not read. */
    json_array_append_new(
        rules,
        json_pack("{sssss{ss}s{ss}s{ss}s{ss}}", "id", AR_NOT_REVIEWED_RULE, "name", "NotReviewed",
                  "shortDescription", "text", "A changed file was not reviewed", "fullDescription",
                  "text",
                  "agentrun review did not send this changed file whole to the model (binary "
                  "content, too large, or its chunk failed), and no rule of yours left it out: "
                  "the review cannot pass.",
                  "help", "text",
                  "Review the file yourself; or leave it out on purpose with --exclude GLOB "
                  "(or --allow-binary for binary files) if it needs no review.",
                  "defaultConfiguration", "level", "error"));
    return rules;
}

static json_t *sarif_message(const struct ar_review_issue *is)
{
    return json_pack("{so}", "text", ar_rf_message(is, 1));
}

/* A physicalLocation in the repository: the file, and the line unless line is 0. */
static json_t *sarif_location(const char *path, int64_t line)
{
    struct ar_buf uri;
    ar_buf_init(&uri, AR_BUF_UNLIMITED);
    ar_uri_encode_path(path, &uri);
    /* Paths are located: relative to the repository root, never absolute. */
    json_t *loc = json_pack("{s{soss}}", "artifactLocation", "uri", ar_rf_text(ar_buf_cstr(&uri)),
                            "uriBaseId", "%SRCROOT%");
    ar_buf_finish(&uri);
    if (loc && line)
        json_object_set_new(loc, "region", json_pack("{sI}", "startLine", (json_int_t)line));
    return loc;
}

static json_t *sarif_result(const struct ar_review_issue *is)
{
    json_t *loc = sarif_location(is->file, is->line);
    if (!loc)
        return NULL;
    char rule[32];
    snprintf(rule, sizeof(rule), "review/%s", ar_severity_name(is->severity));
    json_t *props = json_pack("{sssb}", "severity", ar_severity_name(is->severity), "outside_diff",
                              is->outside_diff);
    if (is->suggestion)
        json_object_set_new(props, "suggestion", ar_rf_text(is->suggestion));
    if (is->n_found_by) {
        json_t *by = json_array();
        for (size_t i = 0; by && i < is->n_found_by; i++)
            json_array_append_new(by, json_string(is->found_by[i]));
        json_object_set_new(props, "foundBy", by);
        json_object_set_new(
            props, "agreement",
            json_pack("{sIsI}", "k", (json_int_t)is->n_found_by, "n", (json_int_t)is->panel_size));
        json_object_set_new(props, "counted", json_boolean(ar_review_counts(is)));
    }
    json_t *res =
        json_pack("{sssIsssos[{so}]so}", "ruleId", rule, "ruleIndex", (json_int_t)is->severity,
                  "level", severity_out[is->severity].sarif_level, "message", sarif_message(is),
                  "locations", "physicalLocation", loc, "properties", props);
    if (res && is->fingerprint[0])
        json_object_set_new(res, "partialFingerprints",
                            json_pack("{ss}", AR_FINGERPRINT_KEY, is->fingerprint));
    /* SARIF's rank (0 to 100, the result's priority): the share of the panel that
     * reported it. */
    if (res && is->n_found_by && is->panel_size)
        json_object_set_new(
            res, "rank", json_real(round(1000.0 * (double)is->n_found_by / is->panel_size) / 10.0));
    return res;
}

/* A result for a changed file the review did not read: at the file, level error. */
static json_t *sarif_not_reviewed(const struct ar_review_file *f)
{
    char msg[700], fp[AR_FINGERPRINT_LEN + 1];
    ar_rf_cover_message(f, msg, sizeof(msg));
    ar_rf_cover_fingerprint(f, fp);
    return json_pack("{sssIsss{so}s[{so}]s{ss}s{ssso}}", "ruleId", AR_NOT_REVIEWED_RULE,
                     "ruleIndex", (json_int_t)AR_SEV_COUNT, "level", "error", "message", "text",
                     ar_rf_text(msg), "locations", "physicalLocation",
                     sarif_location(ar_rf_cover_path(f), 0), "partialFingerprints",
                     AR_FINGERPRINT_KEY, fp, "properties", "status",
                     ar_review_cover_name(f->status), "why", ar_rf_text(f->why));
}

static json_t *notification(const char *level, const char *text)
{
    return json_pack("{sss{so}}", "level", level, "message", "text", ar_rf_text(text));
}

/* What SARIF viewers show of the run itself: a failure or a degraded answer,
 * each finding with no place in the repository, each file not reviewed. */
static json_t *sarif_notifications(const struct ar_review_report *rep)
{
    const struct ar_review *rv = rep->rv;
    json_t *a = json_array();
    char text[800];
    if (a && (rv->failed || rv->degraded))
        json_array_append_new(a, notification(rv->failed ? "error" : "warning",
                                              ar_review_error_text(rv, text, sizeof(text))));
    for (size_t i = 0; a && i < rv->n_unplaced; i++) {
        const struct ar_review_issue *is = &rv->unplaced[i];
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        ar_buf_printf(&b, "A %s finding with no place in the repository (file: %s): %s",
                      ar_severity_name(is->severity), is->file ? is->file : "none", is->message);
        json_array_append_new(
            a, notification(severity_out[is->severity].sarif_level, ar_buf_cstr(&b)));
        ar_buf_finish(&b);
    }
    for (size_t i = 0; a && i < ar_rf_n_cover(rep); i++)
        if (ar_rf_blocks(ar_rf_cover_at(rep, i))) {
            snprintf(text, sizeof(text), "not reviewed: %s: %s",
                     ar_rf_cover_path(ar_rf_cover_at(rep, i)),
                     ar_rf_cover_at(rep, i)->why ? ar_rf_cover_at(rep, i)->why : "");
            json_array_append_new(a, notification("error", text));
        }
    return a;
}

json_t *ar_review_to_sarif(const struct ar_review_report *rep)
{
    const struct ar_review *rv = rep->rv;
    json_t *results = json_array();
    for (size_t i = 0; i < ar_rf_n_cover(rep); i++)
        if (ar_rf_blocks(ar_rf_cover_at(rep, i)))
            json_array_append_new(results, sarif_not_reviewed(ar_rf_cover_at(rep, i)));
    for (size_t i = 0; i < rv->n_issues; i++)
        json_array_append_new(results, sarif_result(&rv->issues[i]));

    /* Whether the tool did its job, as SARIF says it: a failed review is not
     * a clean one, and a degraded one carries a warning. */
    json_t *inv = json_pack("{sbsi}", "executionSuccessful", !rv->failed, "exitCode",
                            rep->verdict->exit_status);
    json_t *notes = sarif_notifications(rep);
    if (inv && json_array_size(notes))
        json_object_set_new(inv, "toolExecutionNotifications", json_incref(notes));
    json_decref(notes);
    json_t *run =
        json_pack("{s{s{sssssss o}}sos[o]s{sbsosbsssssi}}", "tool", "driver", "name", "agentrun",
                  "version", AR_VERSION_STRING, "informationUri", AR_REVIEW_INFO_URI, "rules",
                  sarif_rules(), "results", results, "invocations", inv, "properties", "passed",
                  rv->passed, "summary", ar_rf_text(rv->summary ? rv->summary : ""), "degraded",
                  rv->degraded, "verdict", ar_rf_verdict_name(rep->verdict), "failOn",
                  ar_severity_name(rep->fail_on), "chunks", (int)rv->chunks);
    if (run) {
        /* Code scanning keeps one set of alerts per category: each review job
         * with its own category keeps its own. */
        char id[256];
        snprintf(id, sizeof(id), "%s/",
                 rep->sarif_category ? rep->sarif_category : AR_SARIF_DEFAULT_CATEGORY);
        json_object_set_new(run, "automationDetails", json_pack("{so}", "id", ar_rf_text(id)));
        json_object_set_new(run, "originalUriBaseIds",
                            json_pack("{s{s{ss}}}", "%SRCROOT%", "description", "text",
                                      "The root of the repository the review ran in"));
        json_t *props = json_object_get(run, "properties");
        json_object_set_new(props, "coverage", coverage_counts(rep));
        json_object_set_new(props, "answers", json_integer((json_int_t)rv->answers));
        json_object_set_new(props, "files", files_value(rep));
        json_object_set_new(props, "notes", notes_value(rv));
        if (rep->panel && rep->panel->n_members)
            json_object_set_new(props, "panel", panel_value(rep));
    }
    return json_pack("{sssss[o]}", "$schema", AR_SARIF_SCHEMA_URI, "version", "2.1.0", "runs", run);
}
