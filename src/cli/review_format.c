/*
 * The review formats. A CI consumer reads them unattended, so each is a
 * complete, valid document in every case: a review, a degraded review, a
 * failed one, and nothing to review. Paths and lines come located
 * (ar_review_locate()): repository paths, lines that fit 32 bits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/review_format.h"
#include "cli/terminal.h"
#include "cost/cost.h"
#include "util/json_dump.h"
#include "result/result.h"
#include "util/macros.h"
#include "util/utf8.h"

static const char *const format_names[] = {
    [AR_REVIEW_FORMAT_TEXT] = "text",
    [AR_REVIEW_FORMAT_JSON] = "json",
    [AR_REVIEW_FORMAT_SARIF] = "sarif",
    [AR_REVIEW_FORMAT_GITHUB] = "github",
    [AR_REVIEW_FORMAT_RDJSONL] = "rdjsonl",
    [AR_REVIEW_FORMAT_GITLAB] = "gitlab",
    [AR_REVIEW_FORMAT_CHECKSTYLE] = "checkstyle",
};

int ar_review_format_parse(const char *s)
{
    for (size_t i = 0; s && i < AR_ARRAY_SIZE(format_names); i++)
        if (strcmp(s, format_names[i]) == 0)
            return (int)i;
    return -1;
}

/* The SARIF rule and the check name of a changed file the review did not read. */
#define NOT_REVIEWED_RULE "review/not-reviewed"

/* How each severity shows in each format. */
static const struct {
    const char *sarif_level;
    const char *github_command;
    const char *rdjson_severity;
    const char *gitlab_severity;
    const char *checkstyle_severity;
    const char *rule_name;
    const char *rule_text;
    const char *rule_full; /* fullDescription: what the model was asked to report at this level */
} severity_out[AR_SEV_COUNT] = {
    [AR_SEV_CRITICAL] = { "error", "error", "ERROR", "blocker", "error", "CriticalFinding",
                          "A critical problem: the change must not be merged as is",
                          "An exploitable vulnerability, data loss, or a crash on a common path "
                          "that the change introduces or touches." },
    [AR_SEV_HIGH] = { "error", "error", "ERROR", "critical", "error", "HighFinding",
                      "A serious problem that should be fixed",
                      "A bug that users will hit, introduced or touched by the change." },
    [AR_SEV_MEDIUM] = { "warning", "warning", "WARNING", "major", "warning", "MediumFinding",
                        "A problem worth fixing",
                        "A bug in an edge case or a missing check in the changed code." },
    [AR_SEV_LOW] = { "warning", "warning", "WARNING", "minor", "warning", "LowFinding",
                     "A minor problem",
                     "A minor problem in the changed code that is worth fixing." },
    [AR_SEV_INFO] = { "note", "notice", "INFO", "info", "info", "InfoFinding",
                      "A remark, not a problem", "A remark on the change that needs no fix." },
};

const char *ar_review_error_text(const struct ar_review *rv, char *buf, size_t n)
{
    const char *name = ar_strerror_name(rv->error.code);
    if (!rv->error.msg[0] || strcmp(rv->error.msg, name) == 0)
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "%s: %s", name, rv->error.msg);
    return buf;
}

static const char *verdict_name(const struct ar_review_verdict *v)
{
    return v->exit_status == 0 ? "pass" : v->exit_status == 1 ? "fail" : "error";
}

/* Model text can hold anything: a lossy JSON string rather than a lost field. New reference. */
static json_t *text_value(const char *s)
{
    return s ? ar_json_text(s, strlen(s)) : json_null();
}

static json_t *issue_value(const struct ar_review_issue *is)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "file", text_value(is->file));
    /* null: about the whole file (the model gave no usable line) */
    json_object_set_new(o, "line", is->line ? json_integer(is->line) : json_null());
    json_object_set_new(o, "severity", json_string(ar_severity_name(is->severity)));
    json_object_set_new(o, "message", text_value(is->message));
    if (is->suggestion)
        json_object_set_new(o, "suggestion", text_value(is->suggestion));
    json_object_set_new(o, "outside_diff", json_boolean(is->outside_diff));
    if (is->fingerprint[0])
        json_object_set_new(o, "fingerprint", json_string(is->fingerprint));
    if (is->cut)
        json_object_set_new(o, "cut", json_true());
    return o;
}

/* ---- coverage: what every format says about the changed paths ---- */

/* A changed path that fails the review: neither reviewed nor left out by a rule. */
static int blocks(const struct ar_review_file *f)
{
    return f->status != AR_COVER_REVIEWED && !f->rule;
}

static size_t n_cover(const struct ar_review_report *rep)
{
    return rep->coverage ? rep->coverage->n_files : 0;
}

static const struct ar_review_file *cover_at(const struct ar_review_report *rep, size_t i)
{
    return &rep->coverage->files[i];
}

static const char *cover_path(const struct ar_review_file *f)
{
    return f->path && f->path[0] ? f->path : "(unnamed file)";
}

/* "not reviewed: binary content…": the message of a path that fails the review. */
static void cover_message(const struct ar_review_file *f, char *buf, size_t n)
{
    snprintf(buf, n,
             "agentrun review did not review this changed file, so the review cannot "
             "pass: %s",
             f->why ? f->why : ar_review_cover_name(f->status));
}

/* The fingerprint of a path not reviewed: the same on every run for that path. */
static void cover_fingerprint(const struct ar_review_file *f, char out[AR_FINGERPRINT_LEN + 1])
{
    struct ar_review_issue is = { 0 };
    is.file = (char *)cover_path(f);
    is.message = (char *)"agentrun: this changed file was not reviewed";
    is.severity = AR_SEV_CRITICAL;
    ar_review_fingerprint(&is, 0, out);
}

static json_t *file_value(const struct ar_review_file *f)
{
    int in_chunk = f->n_chunks && (f->status == AR_COVER_REVIEWED || f->status == AR_COVER_QUEUED);
    return json_pack("{sosososososo}", "path", text_value(f->path), "old_path",
                     text_value(f->old_path), "status",
                     json_string(ar_review_cover_name(f->status)), "rule", text_value(f->rule),
                     "why", text_value(f->why), "chunk",
                     in_chunk ? json_integer((json_int_t)f->chunk + 1) : json_null());
}

/* The coverage's JSON form: {"files": n, "reviewed": n, "excluded": n, "unreviewed": n}. */
static json_t *coverage_counts(const struct ar_review_report *rep)
{
    const struct ar_review_coverage *c = rep->coverage;
    return json_pack("{sIsIsIsI}", "files", (json_int_t)n_cover(rep), "reviewed",
                     (json_int_t)(c ? c->n_reviewed : 0), "excluded",
                     (json_int_t)(c ? c->n_excluded : 0), "unreviewed",
                     (json_int_t)(c ? c->n_unreviewed : 0));
}

static json_t *files_value(const struct ar_review_report *rep)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n_cover(rep); i++)
        json_array_append_new(a, file_value(cover_at(rep, i)));
    return a;
}

static json_t *notes_value(const struct ar_review *rv)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < rv->n_notes; i++)
        json_array_append_new(a, text_value(rv->notes[i]));
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
                        text_value(rv->error.msg[0] ? rv->error.msg : ar_strerror(rv->error.code)));
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
    json_object_set_new(o, "summary", text_value(rv->summary ? rv->summary : ""));
    json_object_set_new(o, "issues", issues);
    json_object_set_new(o, "degraded", json_boolean(rv->degraded));
    if (rv->degraded)
        json_object_set_new(o, "raw_output", text_value(rv->raw_output));
    json_object_set_new(o, "verdict", json_string(verdict_name(rep->verdict)));
    json_object_set_new(o, "exit_code", json_integer(rep->verdict->exit_status));
    json_object_set_new(o, "fail_on", json_string(ar_severity_name(rep->fail_on)));
    json_object_set_new(o, "reviewed", json_boolean(rep->reviewed));
    json_object_set_new(o, "source", text_value(rep->source));
    json_object_set_new(o, "chunks", json_integer((json_int_t)rv->chunks));
    json_object_set_new(o, "suppressed", json_integer((json_int_t)rv->suppressed));
    json_object_set_new(o, "dropped", json_integer((json_int_t)rv->dropped));
    json_t *excluded = json_array();
    for (size_t i = 0; i < rep->n_excluded; i++)
        json_array_append_new(excluded, text_value(rep->excluded[i]));
    json_object_set_new(o, "excluded", excluded);
    json_object_set_new(o, "coverage", coverage_counts(rep));
    json_object_set_new(o, "files", files_value(rep));
    json_t *unplaced = json_array();
    for (size_t i = 0; unplaced && i < rv->n_unplaced; i++)
        json_array_append_new(unplaced, issue_value(&rv->unplaced[i]));
    json_object_set_new(o, "unplaced", unplaced);
    json_object_set_new(o, "notes", notes_value(rv));
    json_object_set_new(o, "provider", text_value(rv->provider));
    json_object_set_new(o, "model", text_value(rv->model));
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
    json_object_set_new(o, "error", error_value(rv));
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
                                        text_value(ar_buf_cstr(&help)), "defaultConfiguration",
                                        "level", severity_out[s].sarif_level, "properties",
                                        "severity", ar_severity_name(s)));
        ar_buf_finish(&help);
    }
    /* Index AR_SEV_COUNT: a changed file the review did not read. */
    json_array_append_new(
        rules,
        json_pack("{sssss{ss}s{ss}s{ss}s{ss}}", "id", NOT_REVIEWED_RULE, "name", "NotReviewed",
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

/* The message with the suggestion, if any, after it: a JSON string (new reference). */
static json_t *message_value(const struct ar_review_issue *is, int with_suggestion)
{
    if (!is->suggestion || !with_suggestion)
        return text_value(is->message);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_printf(&b, "%s\n\nSuggestion: %s", is->message, is->suggestion);
    json_t *m = text_value(ar_buf_cstr(&b));
    ar_buf_finish(&b);
    return m;
}

static json_t *sarif_message(const struct ar_review_issue *is)
{
    return json_pack("{so}", "text", message_value(is, 1));
}

/* A physicalLocation in the repository: the file, and the line unless line is 0. */
static json_t *sarif_location(const char *path, int64_t line)
{
    struct ar_buf uri;
    ar_buf_init(&uri, AR_BUF_UNLIMITED);
    ar_uri_encode_path(path, &uri);
    /* Paths are located: relative to the repository root, never absolute. */
    json_t *loc = json_pack("{s{soss}}", "artifactLocation", "uri", text_value(ar_buf_cstr(&uri)),
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
        json_object_set_new(props, "suggestion", text_value(is->suggestion));
    json_t *res =
        json_pack("{sssIsssos[{so}]so}", "ruleId", rule, "ruleIndex", (json_int_t)is->severity,
                  "level", severity_out[is->severity].sarif_level, "message", sarif_message(is),
                  "locations", "physicalLocation", loc, "properties", props);
    if (res && is->fingerprint[0])
        json_object_set_new(res, "partialFingerprints",
                            json_pack("{ss}", AR_FINGERPRINT_KEY, is->fingerprint));
    return res;
}

/* A result for a changed file the review did not read: at the file, level error. */
static json_t *sarif_not_reviewed(const struct ar_review_file *f)
{
    char msg[700], fp[AR_FINGERPRINT_LEN + 1];
    cover_message(f, msg, sizeof(msg));
    cover_fingerprint(f, fp);
    return json_pack("{sssIsss{so}s[{so}]s{ss}s{ssso}}", "ruleId", NOT_REVIEWED_RULE, "ruleIndex",
                     (json_int_t)AR_SEV_COUNT, "level", "error", "message", "text", text_value(msg),
                     "locations", "physicalLocation", sarif_location(cover_path(f), 0),
                     "partialFingerprints", AR_FINGERPRINT_KEY, fp, "properties", "status",
                     ar_review_cover_name(f->status), "why", text_value(f->why));
}

static json_t *notification(const char *level, const char *text)
{
    return json_pack("{sss{so}}", "level", level, "message", "text", text_value(text));
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
    for (size_t i = 0; a && i < n_cover(rep); i++)
        if (blocks(cover_at(rep, i))) {
            snprintf(text, sizeof(text), "not reviewed: %s: %s", cover_path(cover_at(rep, i)),
                     cover_at(rep, i)->why ? cover_at(rep, i)->why : "");
            json_array_append_new(a, notification("error", text));
        }
    return a;
}

json_t *ar_review_to_sarif(const struct ar_review_report *rep)
{
    const struct ar_review *rv = rep->rv;
    json_t *results = json_array();
    for (size_t i = 0; i < n_cover(rep); i++)
        if (blocks(cover_at(rep, i)))
            json_array_append_new(results, sarif_not_reviewed(cover_at(rep, i)));
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
                  "version", AR_VERSION, "informationUri", AR_REVIEW_INFO_URI, "rules",
                  sarif_rules(), "results", results, "invocations", inv, "properties", "passed",
                  rv->passed, "summary", text_value(rv->summary ? rv->summary : ""), "degraded",
                  rv->degraded, "verdict", verdict_name(rep->verdict), "failOn",
                  ar_severity_name(rep->fail_on), "chunks", (int)rv->chunks);
    if (run) {
        /* Code scanning keeps one set of alerts per category: each review job
         * with its own category keeps its own. */
        char id[256];
        snprintf(id, sizeof(id), "%s/",
                 rep->sarif_category ? rep->sarif_category : AR_SARIF_DEFAULT_CATEGORY);
        json_object_set_new(run, "automationDetails", json_pack("{so}", "id", text_value(id)));
        json_object_set_new(run, "originalUriBaseIds",
                            json_pack("{s{s{ss}}}", "%SRCROOT%", "description", "text",
                                      "The root of the repository the review ran in"));
        json_t *props = json_object_get(run, "properties");
        json_object_set_new(props, "coverage", coverage_counts(rep));
        json_object_set_new(props, "files", files_value(rep));
        json_object_set_new(props, "notes", notes_value(rv));
    }
    return json_pack("{sssss[o]}", "$schema", AR_SARIF_SCHEMA_URI, "version", "2.1.0", "runs", run);
}

/* ---- GitHub workflow commands ---- */

static int github_escape(const char *s, struct ar_buf *out, int property)
{
    for (; s && *s; s++) {
        int rc;
        switch (*s) {
        case '%':
            rc = ar_buf_puts(out, "%25");
            break;
        case '\r':
            rc = ar_buf_puts(out, "%0D");
            break;
        case '\n':
            rc = ar_buf_puts(out, "%0A");
            break;
        case ':':
            rc = property ? ar_buf_puts(out, "%3A") : ar_buf_putc(out, *s);
            break;
        case ',':
            rc = property ? ar_buf_puts(out, "%2C") : ar_buf_putc(out, *s);
            break;
        default:
            rc = ar_buf_putc(out, *s);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int ar_github_escape_data(const char *s, struct ar_buf *out)
{
    return github_escape(s, out, 0);
}

int ar_github_escape_property(const char *s, struct ar_buf *out)
{
    return github_escape(s, out, 1);
}

static void github_command(struct ar_buf *out, const char *cmd, const char *title, const char *data)
{
    ar_buf_printf(out, "::%s title=", cmd);
    ar_github_escape_property(title, out);
    ar_buf_puts(out, "::");
    ar_github_escape_data(data, out);
    ar_buf_putc(out, '\n');
}

/* One finding; one with no place in the repository (placed 0) has no file=. */
static void github_finding(struct ar_buf *out, const struct ar_review_issue *is, int placed)
{
    char title[96];
    snprintf(title, sizeof(title), "agentrun review: %s%s%s", ar_severity_name(is->severity),
             is->outside_diff ? " (outside the diff)" : "",
             !placed     ? " (no location)"
             : !is->line ? " (whole file)"
                         : "");
    ar_buf_printf(out, "::%s ", severity_out[is->severity].github_command);
    if (placed) {
        ar_buf_puts(out, "file=");
        ar_github_escape_property(is->file, out);
        if (is->line)
            ar_buf_printf(out, ",line=%lld", (long long)is->line);
        ar_buf_putc(out, ',');
    }
    ar_buf_puts(out, "title=");
    ar_github_escape_property(title, out);
    ar_buf_puts(out, "::");
    ar_github_escape_data(is->message, out);
    if (is->suggestion) {
        ar_github_escape_data("\n\nSuggestion: ", out);
        ar_github_escape_data(is->suggestion, out);
    }
    ar_buf_putc(out, '\n');
}

/*
 * GitHub shows at most AR_GITHUB_MAX_ANNOTATIONS annotations of each level per
 * step, and drops the rest without a word. So what decides the gate comes
 * first: the verdict, a failure, each changed file not reviewed, the findings
 * with no location; then the findings, most severe first.
 */
static void render_github(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    const struct ar_review_verdict *v = rep->verdict;
    char line[800];
    size_t errors = rv->n_unplaced + v->by_severity[AR_SEV_CRITICAL] + v->by_severity[AR_SEV_HIGH];
    for (size_t i = 0; i < n_cover(rep); i++)
        errors += blocks(cover_at(rep, i));
    snprintf(line, sizeof(line), "agentrun review: %s", verdict_name(v));
    if (!rep->reviewed && v->exit_status == 0) {
        github_command(out, "notice", "agentrun review", "nothing to review");
    } else {
        const char *summary = rv->summary && *rv->summary ? rv->summary : verdict_name(v);
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        ar_buf_puts(&b, summary);
        if (v->n_unreviewed)
            ar_buf_printf(&b, "\n%zu changed file%s not reviewed: the review cannot pass.",
                          v->n_unreviewed, v->n_unreviewed == 1 ? "" : "s");
        if (errors + 1 > AR_GITHUB_MAX_ANNOTATIONS)
            ar_buf_printf(&b,
                          "\n%zu error annotations: GitHub shows %d per step; the json or "
                          "sarif output has them all.",
                          errors, AR_GITHUB_MAX_ANNOTATIONS);
        github_command(out, v->exit_status == 0 ? "notice" : "error", line, ar_buf_cstr(&b));
        ar_buf_finish(&b);
    }
    if (rv->failed || rv->degraded) {
        ar_review_error_text(rv, line, sizeof(line));
        github_command(out, rv->failed ? "error" : "warning",
                       rv->failed ? "agentrun review failed" : "agentrun review degraded", line);
    }
    for (size_t i = 0; i < n_cover(rep); i++) {
        const struct ar_review_file *f = cover_at(rep, i);
        if (!blocks(f))
            continue;
        cover_message(f, line, sizeof(line));
        ar_buf_puts(out, "::error file=");
        ar_github_escape_property(cover_path(f), out);
        ar_buf_puts(out, ",title=agentrun review%3A not reviewed::");
        ar_github_escape_data(line, out);
        ar_buf_putc(out, '\n');
    }
    if (rep->coverage && rep->coverage->n_excluded) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        const char *sep = "";
        for (size_t i = 0; i < n_cover(rep); i++) {
            const struct ar_review_file *f = cover_at(rep, i);
            if (f->status != AR_COVER_REVIEWED && f->rule) {
                ar_buf_printf(&b, "%s%s (%s)", sep, cover_path(f), f->rule);
                sep = ", ";
            }
        }
        github_command(out, "notice", "agentrun review: left out by your rules", ar_buf_cstr(&b));
        ar_buf_finish(&b);
    }
    for (size_t i = 0; i < rv->n_unplaced; i++)
        github_finding(out, &rv->unplaced[i], 0);
    for (int sev = 0; sev < AR_SEV_COUNT; sev++)
        for (size_t i = 0; i < rv->n_issues; i++)
            if ((int)rv->issues[i].severity == sev)
                github_finding(out, &rv->issues[i], 1);
}

/* ---- reviewdog rdjsonl ---- */

char *ar_suggestion_code(const char *suggestion)
{
    if (!suggestion)
        return NULL;
    /* An opening fence starts a line: ``` or ~~~, at least three, an info string after. */
    for (const char *line = suggestion; line && *line;) {
        const char *nl = strchr(line, '\n');
        char fc = line[0];
        size_t run = 0;
        while ((fc == '`' || fc == '~') && line[run] == fc)
            run++;
        if (run >= 3 && nl) {
            const char *body = nl + 1;
            for (const char *l = body; *l;) {
                const char *e = strchr(l, '\n');
                size_t k = 0;
                while (l[k] == fc)
                    k++;
                if (k >= run) {
                    size_t n = (size_t)(l - body);
                    if (n && body[n - 1] == '\n')
                        n--;
                    return strndup(body, n);
                }
                if (!e)
                    break;
                l = e + 1;
            }
            return NULL; /* not closed: not a code block */
        }
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

static json_t *rd_position(int64_t line)
{
    return json_pack("{sI}", "line", (json_int_t)line);
}

/* reviewdog's location: the path, and the line unless the finding is about the
 * whole file (0); none at all without a path. */
static json_t *rd_location(const char *path, int64_t line)
{
    if (!path)
        return NULL;
    json_t *loc = json_pack("{so}", "path", text_value(path));
    if (loc && line)
        json_object_set_new(loc, "range", json_pack("{so}", "start", rd_position(line)));
    return loc;
}

/* One diagnostic; with `room`, the message is cut to that many bytes (marked). A
 * finding with no place in the repository (placed 0) has no location. */
static json_t *rdjson_diagnostic(const struct ar_review_issue *is, int placed, size_t room)
{
    char *code = ar_suggestion_code(is->suggestion);
    char rule[32];
    snprintf(rule, sizeof(rule), "review/%s", ar_severity_name(is->severity));
    /* A suggestion that is code becomes reviewdog's replacement of the line;
     * one in words stays in the message, where nobody can apply it by a click. */
    json_t *msg = message_value(is, !code);
    if (room && msg && strlen(json_string_value(msg)) > room) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        size_t keep = room;
        const char *m = json_string_value(msg);
        while (keep > 0 && ((unsigned char)m[keep] & 0xC0) == 0x80)
            keep--;
        ar_buf_append(&b, m, keep);
        ar_buf_puts(&b, AR_REVIEW_CUT_MARK);
        json_decref(msg);
        msg = text_value(ar_buf_cstr(&b));
        ar_buf_finish(&b);
        free(code);
        code = NULL; /* a cut line has no room for a replacement either */
    }
    json_t *d = json_pack("{sosss{ssss}s{ss}}", "message", msg, "severity",
                          severity_out[is->severity].rdjson_severity, "source", "name", "agentrun",
                          "url", AR_REVIEW_INFO_URI, "code", "value", rule);
    json_t *loc = placed ? rd_location(is->file, is->line) : NULL;
    if (d && loc)
        json_object_set_new(d, "location", loc);
    if (d && code && placed && is->line)
        json_object_set_new(d, "suggestions",
                            json_pack("[{s{soso}so}]", "range", "start", rd_position(is->line),
                                      "end", rd_position(is->line), "text", text_value(code)));
    free(code);
    return d;
}

/* Appends d as one line, compact. Returns 0 or AR_ENOMEM; *len gets the line's length. */
static int rd_line(json_t *d, struct ar_buf *out, size_t *len)
{
    char *s = d ? json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    int rc = s ? 0 : AR_ENOMEM;
    *len = s ? strlen(s) : 0;
    if (!rc && *len < AR_RDJSONL_MAX_LINE)
        rc = ar_buf_puts(out, s);
    if (!rc && *len < AR_RDJSONL_MAX_LINE)
        rc = ar_buf_putc(out, '\n');
    free(s);
    return rc;
}

/* What stands in for a diagnostic that cannot fit one line even cut (its path alone is
 * too long): never nothing. */
static int rd_too_long(const char *severity, struct ar_buf *out)
{
    size_t len;
    json_t *d =
        json_pack("{sssss{ssss}}", "message",
                  "agentrun review: a diagnostic too long for one rdjsonl line (see the "
                  "json or sarif output)",
                  "severity", severity, "source", "name", "agentrun", "url", AR_REVIEW_INFO_URI);
    int rc = rd_line(d, out, &len);
    json_decref(d);
    return rc;
}

/*
 * Every line under AR_RDJSONL_MAX_LINE: reviewdog reads at most 64 KiB a line
 * and loses that diagnostic and every later one after a longer line. A line
 * that would be longer (messages are capped at AR_REVIEW_MAX_TEXT, but JSON
 * escapes can multiply a control character by six) is written again with
 * its message cut shorter, until it fits.
 */
static int rd_issue(const struct ar_review_issue *is, int placed, struct ar_buf *out)
{
    size_t len = 0, room = 0;
    json_t *d = rdjson_diagnostic(is, placed, 0);
    int rc = rd_line(d, out, &len);
    json_decref(d);
    for (room = AR_REVIEW_MAX_TEXT / 2; !rc && len >= AR_RDJSONL_MAX_LINE && room >= 16;
         room /= 2) {
        d = rdjson_diagnostic(is, placed, room);
        rc = rd_line(d, out, &len);
        json_decref(d);
    }
    if (!rc && len >= AR_RDJSONL_MAX_LINE)
        rc = rd_too_long(severity_out[is->severity].rdjson_severity, out);
    return rc;
}

static int render_rdjsonl(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    int rc = 0;
    for (size_t i = 0; !rc && i < n_cover(rep); i++) {
        const struct ar_review_file *f = cover_at(rep, i);
        if (!blocks(f))
            continue;
        char msg[700];
        cover_message(f, msg, sizeof(msg));
        size_t len;
        json_t *d =
            json_pack("{sss{so}sss{ssss}s{ss}}", "message", msg, "location", "path",
                      text_value(cover_path(f)), "severity", "ERROR", "source", "name", "agentrun",
                      "url", AR_REVIEW_INFO_URI, "code", "value", NOT_REVIEWED_RULE);
        rc = rd_line(d, out, &len);
        json_decref(d);
        if (!rc && len >= AR_RDJSONL_MAX_LINE)
            rc = rd_too_long("ERROR", out);
    }
    for (size_t i = 0; !rc && i < rv->n_unplaced; i++)
        rc = rd_issue(&rv->unplaced[i], 0, out);
    for (size_t i = 0; !rc && i < rv->n_issues; i++)
        rc = rd_issue(&rv->issues[i], 1, out);
    return rc;
}

/* ---- GitLab Code Quality ---- */

/* GitLab reads a location's line as lines.begin: a finding about the whole file
 * (line 0) and a file not reviewed are put on line 1. */
static json_t *gitlab_item(json_t *description, const char *check, const char *fingerprint,
                           const char *severity, const char *path, int64_t line)
{
    return json_pack("{sosssssss{sos{sI}}}", "description", description, "check_name", check,
                     "fingerprint", fingerprint, "severity", severity, "location", "path",
                     text_value(path), "lines", "begin", (json_int_t)(line ? line : 1));
}

/* Where gitlab and checkstyle put a finding with no place in the repository: at the
 * repository itself (".", line 1), the message saying it has no location. Like github's,
 * never the path the model wrote, which may climb out of the repository. */
#define UNPLACED_PATH "."

static char *unplaced_message(const struct ar_review_issue *is, int with_suggestion)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_printf(&b, "(no location) %s", is->message);
    if (is->suggestion && with_suggestion)
        ar_buf_printf(&b, "\n\nSuggestion: %s", is->suggestion);
    return ar_buf_detach(&b, NULL);
}

static json_t *gitlab_finding(const struct ar_review_issue *is, int placed)
{
    char check[40];
    snprintf(check, sizeof(check), "agentrun/review/%s", ar_severity_name(is->severity));
    const char *severity = severity_out[is->severity].gitlab_severity;
    if (placed)
        return gitlab_item(message_value(is, 1), check, is->fingerprint, severity, is->file,
                           is->line);
    char *msg = unplaced_message(is, 1);
    json_t *o =
        msg ? gitlab_item(text_value(msg), check, is->fingerprint, severity, UNPLACED_PATH, 0)
            : NULL;
    free(msg);
    return o;
}

/*
 * GitLab validates each entry (app/validators/json_schemas/codeclimate.json)
 * and stops reading the report at the first invalid one, and keeps one entry
 * per fingerprint: every entry here is complete and has its own fingerprint.
 * A finding with no place in the repository is written at "." (the repository),
 * line 1, its message saying it has no location: it is never left out.
 */
json_t *ar_review_to_gitlab(const struct ar_review_report *rep)
{
    const struct ar_review *rv = rep->rv;
    json_t *a = json_array();
    for (size_t i = 0; a && i < n_cover(rep); i++) {
        const struct ar_review_file *f = cover_at(rep, i);
        if (!blocks(f))
            continue;
        char msg[700], fp[AR_FINGERPRINT_LEN + 1];
        cover_message(f, msg, sizeof(msg));
        cover_fingerprint(f, fp);
        json_t *o = gitlab_item(text_value(msg), "agentrun/" NOT_REVIEWED_RULE, fp, "blocker",
                                cover_path(f), 0);
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    size_t n = rv->n_unplaced + rv->n_issues;
    for (size_t i = 0; a && i < n; i++) {
        int placed = i >= rv->n_unplaced;
        json_t *o =
            gitlab_finding(placed ? &rv->issues[i - rv->n_unplaced] : &rv->unplaced[i], placed);
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* ---- Checkstyle XML ---- */

int ar_xml_escape(const char *s, struct ar_buf *out)
{
    struct ar_buf clean;
    ar_buf_init(&clean, AR_BUF_UNLIMITED);
    int rc = ar_utf8_append_lossy(&clean, s ? s : "", s ? strlen(s) : 0, NULL);
    const unsigned char *p = (const unsigned char *)ar_buf_cstr(&clean);
    for (size_t i = 0; !rc && i < clean.len; i++) {
        unsigned char c = p[i];
        switch (c) {
        case '&':
            rc = ar_buf_puts(out, "&amp;");
            break;
        case '<':
            rc = ar_buf_puts(out, "&lt;");
            break;
        case '>':
            rc = ar_buf_puts(out, "&gt;");
            break;
        case '"':
            rc = ar_buf_puts(out, "&quot;");
            break;
        case '\'':
            rc = ar_buf_puts(out, "&apos;");
            break;
        case '\t':
        case '\n':
        case '\r':
            /* Attribute values normalize raw whitespace: references keep it. */
            rc = ar_buf_printf(out, "&#%d;", c);
            break;
        default:
            if (c < 0x20) {
                rc = ar_buf_puts(out, "\xEF\xBF\xBD");
            } else if (c == 0xEF && i + 2 < clean.len && p[i + 1] == 0xBF &&
                       (p[i + 2] == 0xBE || p[i + 2] == 0xBF)) {
                /* U+FFFE and U+FFFF are not XML characters. */
                rc = ar_buf_puts(out, "\xEF\xBF\xBD");
                i += 2;
            } else {
                rc = ar_buf_putc(out, (char)c);
            }
        }
    }
    ar_buf_finish(&clean);
    return rc;
}

static void checkstyle_error(struct ar_buf *out, int64_t line, const char *severity,
                             const char *message, const char *suggestion, const char *source)
{
    /* line 0 (the whole file) is written as 1: checkstyle readers want a line. */
    ar_buf_printf(out, "    <error line=\"%lld\" severity=\"%s\" message=\"",
                  (long long)(line ? line : 1), severity);
    ar_xml_escape(message, out);
    if (suggestion) {
        ar_xml_escape("\n\nSuggestion: ", out);
        ar_xml_escape(suggestion, out);
    }
    ar_buf_printf(out, "\" source=\"%s\"/>\n", source);
}

static void render_checkstyle(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    ar_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<checkstyle version=\"8.0\">\n");
    /* Each changed file not reviewed fails the review: it comes first, as an error. */
    for (size_t i = 0; i < n_cover(rep); i++) {
        const struct ar_review_file *f = cover_at(rep, i);
        if (!blocks(f))
            continue;
        char msg[700];
        cover_message(f, msg, sizeof(msg));
        ar_buf_puts(out, "  <file name=\"");
        ar_xml_escape(cover_path(f), out);
        ar_buf_puts(out, "\">\n");
        checkstyle_error(out, 0, "error", msg, NULL, "agentrun.review.not-reviewed");
        ar_buf_puts(out, "  </file>\n");
    }
    /* A finding with no place in the repository: at ".", saying it has none. */
    for (size_t i = 0; i < rv->n_unplaced; i++) {
        const struct ar_review_issue *is = &rv->unplaced[i];
        char source[48], *msg = unplaced_message(is, 0);
        snprintf(source, sizeof(source), "agentrun.review.%s", ar_severity_name(is->severity));
        ar_buf_puts(out, "  <file name=\"");
        ar_xml_escape(UNPLACED_PATH, out);
        ar_buf_puts(out, "\">\n");
        checkstyle_error(out, 0, severity_out[is->severity].checkstyle_severity,
                         msg ? msg : is->message, is->suggestion, source);
        ar_buf_puts(out, "  </file>\n");
        free(msg);
    }
    for (size_t i = 0; i < rv->n_issues; i++) {
        const struct ar_review_issue *is = &rv->issues[i];
        if (i == 0 || strcmp(rv->issues[i - 1].file, is->file) != 0) {
            if (i)
                ar_buf_puts(out, "  </file>\n");
            ar_buf_puts(out, "  <file name=\"");
            ar_xml_escape(is->file, out);
            ar_buf_puts(out, "\">\n");
        }
        char source[48];
        snprintf(source, sizeof(source), "agentrun.review.%s", ar_severity_name(is->severity));
        checkstyle_error(out, is->line, severity_out[is->severity].checkstyle_severity, is->message,
                         is->suggestion, source);
    }
    if (rv->n_issues)
        ar_buf_puts(out, "  </file>\n");
    ar_buf_puts(out, "</checkstyle>\n");
}

/* ---- text ---- */

/* Continuation lines of a multi-line message are indented under it. */
static void put_indented(struct ar_buf *out, const char *s)
{
    for (; *s; s++) {
        ar_buf_putc(out, *s);
        if (*s == '\n' && s[1])
            ar_buf_puts(out, "    ");
    }
}

static void text_finding(struct ar_buf *out, const struct ar_review_issue *is, int placed)
{
    if (!placed)
        ar_buf_printf(out, "(no location: %s): ", is->file ? is->file : "no file");
    else if (is->line)
        ar_buf_printf(out, "%s:%lld: ", is->file, (long long)is->line);
    else
        ar_buf_printf(out, "%s: ", is->file);
    ar_buf_printf(out, "%s: ", ar_severity_name(is->severity));
    put_indented(out, is->message);
    if (is->outside_diff)
        ar_buf_puts(out, " (outside the diff)");
    ar_buf_putc(out, '\n');
    if (is->suggestion) {
        ar_buf_puts(out, "    suggestion: ");
        put_indented(out, is->suggestion);
        ar_buf_putc(out, '\n');
    }
}

/* The changed paths not reviewed: those that fail the review, then those a rule left
 * out. Returns how many lines it wrote. */
static size_t text_coverage(const struct ar_review_report *rep, struct ar_buf *out)
{
    size_t shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n_cover(rep); i++) {
            const struct ar_review_file *f = cover_at(rep, i);
            if (f->status == AR_COVER_REVIEWED || blocks(f) != !pass)
                continue;
            if (pass == 0)
                ar_buf_printf(out, "not reviewed: %s: %s\n", cover_path(f),
                              f->why ? f->why : ar_review_cover_name(f->status));
            else
                ar_buf_printf(out, "left out: %s (%s)\n", cover_path(f), f->rule);
            shown++;
        }
    return shown;
}

static void render_text(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    const struct ar_review_verdict *v = rep->verdict;
    if (!rep->reviewed) {
        ar_buf_printf(out, "nothing to review%s%s\n", rep->why_not ? ": " : "",
                      rep->why_not ? rep->why_not : "");
        if (n_cover(rep))
            ar_buf_putc(out, '\n');
        text_coverage(rep, out);
        if (v->n_unreviewed)
            ar_buf_printf(out, "\nverdict: %s (%zu changed file%s not reviewed)\n", verdict_name(v),
                          v->n_unreviewed, v->n_unreviewed == 1 ? "" : "s");
        return;
    }
    for (size_t i = 0; i < rv->n_issues; i++)
        text_finding(out, &rv->issues[i], 1);
    for (size_t i = 0; i < rv->n_unplaced; i++)
        text_finding(out, &rv->unplaced[i], 0);
    if (rv->n_issues || rv->n_unplaced)
        ar_buf_putc(out, '\n');
    if (text_coverage(rep, out))
        ar_buf_putc(out, '\n');
    if (rv->summary && *rv->summary) {
        ar_buf_puts(out, rv->summary);
        ar_buf_puts(out, "\n\n");
    }
    ar_buf_printf(out, "verdict: %s", verdict_name(v));
    if (rv->failed) {
        char why[400];
        ar_buf_printf(out, " (%s)\n", ar_review_error_text(rv, why, sizeof(why)));
        return;
    }
    size_t n = rv->n_issues + rv->n_unplaced;
    ar_buf_printf(out, " (%zu issue%s", n, n == 1 ? "" : "s");
    const char *sep = ": ";
    for (int s = 0; s < AR_SEV_COUNT; s++)
        if (v->by_severity[s]) {
            ar_buf_printf(out, "%s%zu %s", sep, v->by_severity[s], ar_severity_name(s));
            sep = ", ";
        }
    if (rep->fail_on == AR_FAIL_ON_NONE)
        ar_buf_puts(out, "; --fail-on none");
    else
        ar_buf_printf(out, "; %zu at or above %s", v->n_failing, ar_severity_name(rep->fail_on));
    if (v->n_unreviewed)
        ar_buf_printf(out, "; %zu changed file%s not reviewed", v->n_unreviewed,
                      v->n_unreviewed == 1 ? "" : "s");
    if (!rv->passed)
        ar_buf_puts(out, "; the model did not pass it");
    if (rv->degraded)
        ar_buf_printf(out, "; degraded: %s",
                      rv->error.code == AR_ENOJSON ? AR_REVIEW_NO_JSON_SUMMARY
                                                   : AR_REVIEW_CONTRACT_SUMMARY);
    ar_buf_puts(out, ")\n");
}

int ar_review_render(const struct ar_review_report *rep, enum ar_review_format fmt,
                     struct ar_buf *out)
{
    json_t *doc = NULL;
    switch (fmt) {
    case AR_REVIEW_FORMAT_TEXT:
    case AR_REVIEW_FORMAT_GITHUB: {
        size_t from = out->len;
        if (fmt == AR_REVIEW_FORMAT_TEXT)
            render_text(rep, out);
        else
            render_github(rep, out);
        return ar_cli_text_neutralize(out, from); /* a terminal, a CI log: cli/terminal.h */
    }
    case AR_REVIEW_FORMAT_RDJSONL:
        return render_rdjsonl(rep, out);
    case AR_REVIEW_FORMAT_CHECKSTYLE:
        render_checkstyle(rep, out);
        return 0;
    case AR_REVIEW_FORMAT_GITLAB:
        doc = ar_review_to_gitlab(rep);
        break;
    case AR_REVIEW_FORMAT_JSON:
        doc = ar_review_to_value(rep);
        break;
    case AR_REVIEW_FORMAT_SARIF:
        doc = ar_review_to_sarif(rep);
        break;
    }
    if (!doc)
        return AR_ENOMEM;
    int rc;
    if (rep->pretty) {
        char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
        rc = s ? ar_buf_puts(out, s) : AR_ENOMEM;
        free(s);
    } else {
        /* One line, numbers in their shortest form (0.06, not 0.059999999999999998). */
        rc = ar_json_dump_compact(doc, out);
    }
    json_decref(doc);
    if (!rc)
        rc = ar_buf_putc(out, '\n');
    return rc;
}
