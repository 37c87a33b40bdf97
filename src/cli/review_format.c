/*
 * The four review formats. A CI consumer reads them unattended, so each is a
 * complete, valid document in every case: a review, a degraded review, a
 * failed one, and nothing to review.
 */
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/review_format.h"
#include "cost/cost.h"
#include "run/run.h"
#include "util/macros.h"

static const char *const format_names[] = {
    [AR_REVIEW_FORMAT_TEXT] = "text",
    [AR_REVIEW_FORMAT_JSON] = "json",
    [AR_REVIEW_FORMAT_SARIF] = "sarif",
    [AR_REVIEW_FORMAT_GITHUB] = "github",
};

int ar_review_format_parse(const char *s)
{
    for (size_t i = 0; s && i < AR_ARRAY_SIZE(format_names); i++)
        if (strcmp(s, format_names[i]) == 0)
            return (int)i;
    return -1;
}

/* How each severity shows in SARIF and GitHub. */
static const struct {
    const char *sarif_level;
    const char *github_command;
    const char *rule_name;
    const char *rule_text;
} severity_out[AR_SEV_COUNT] = {
    [AR_SEV_CRITICAL] = { "error", "error", "CriticalFinding",
                          "A critical problem: the change must not be merged as is" },
    [AR_SEV_HIGH] = { "error", "error", "HighFinding", "A serious problem that should be fixed" },
    [AR_SEV_MEDIUM] = { "warning", "warning", "MediumFinding", "A problem worth fixing" },
    [AR_SEV_LOW] = { "warning", "warning", "LowFinding", "A minor problem" },
    [AR_SEV_INFO] = { "note", "notice", "InfoFinding", "A remark, not a problem" },
};

static const char *const cost_source_names[] = {
    [AR_COST_UNKNOWN] = "unknown",
    [AR_COST_CLI] = "cli",
    [AR_COST_TABLE] = "price_table",
    [AR_COST_CACHE] = "cache",
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
    json_object_set_new(o, "line", json_integer(is->line));
    json_object_set_new(o, "severity", json_string(ar_severity_name(is->severity)));
    json_object_set_new(o, "message", text_value(is->message));
    if (is->suggestion)
        json_object_set_new(o, "suggestion", text_value(is->suggestion));
    json_object_set_new(o, "outside_diff", json_boolean(is->outside_diff));
    return o;
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
    json_object_set_new(o, "provider", text_value(rv->provider));
    json_object_set_new(o, "model", text_value(rv->model));
    json_object_set_new(o, "tokens", usage_value(&rv->usage));
    if (!rep->reviewed) {
        /* No call was made: the cost is known to be nothing. */
        json_object_set_new(o, "cost_usd", json_real(0));
        json_object_set_new(o, "cost_source", json_string("none"));
    } else {
        json_object_set_new(o, "cost_usd",
                            rv->cost_source == AR_COST_UNKNOWN
                                ? json_null()
                                : json_real(ar_cost_round(rv->cost_usd)));
        json_object_set_new(o, "cost_source", json_string(cost_source_names[rv->cost_source]));
    }
    json_object_set_new(o, "cached", json_boolean(rv->cached));
    if (rv->n_cached)
        json_object_set_new(
            o, "cached_from",
            json_pack("{s:o,s:o,s:s,s:I}", "tokens", usage_value(&rv->cached_usage), "cost_usd",
                      rv->cached_cost_source == AR_COST_UNKNOWN ? json_null()
                                                                : json_real(rv->cached_cost_usd),
                      "cost_source", cost_source_names[rv->cached_cost_source], "calls",
                      (json_int_t)rv->n_cached));
    else
        json_object_set_new(o, "cached_from", json_null());
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)rv->duration_ms));
    json_object_set_new(o, "calls", rv->calls ? json_incref(rv->calls) : json_array());
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
        json_array_append_new(
            rules, json_pack("{sssss{ss}s{ss}s{ss}}", "id", id, "name", severity_out[s].rule_name,
                             "shortDescription", "text", severity_out[s].rule_text,
                             "defaultConfiguration", "level", severity_out[s].sarif_level,
                             "properties", "severity", ar_severity_name(s)));
    }
    return rules;
}

static json_t *sarif_message(const struct ar_review_issue *is)
{
    if (!is->suggestion)
        return json_pack("{so}", "text", text_value(is->message));
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_printf(&b, "%s\n\nSuggestion: %s", is->message, is->suggestion);
    json_t *m = json_pack("{so}", "text", text_value(ar_buf_cstr(&b)));
    ar_buf_finish(&b);
    return m;
}

static json_t *sarif_result(const struct ar_review_issue *is)
{
    const char *path = ar_diff_path_normalize(is->file);
    struct ar_buf uri;
    ar_buf_init(&uri, AR_BUF_UNLIMITED);
    /* An absolute path is a file: URI; a relative one is relative to the checkout. */
    if (path[0] == '/')
        ar_buf_puts(&uri, "file://");
    ar_uri_encode_path(path, &uri);
    json_t *loc = json_pack("{s{so}}", "artifactLocation", "uri", text_value(ar_buf_cstr(&uri)));
    ar_buf_finish(&uri);
    if (!loc)
        return NULL;
    if (path[0] != '/')
        json_object_set_new(json_object_get(loc, "artifactLocation"), "uriBaseId",
                            json_string("%SRCROOT%"));
    json_object_set_new(loc, "region", json_pack("{sI}", "startLine", (json_int_t)is->line));
    char rule[32];
    snprintf(rule, sizeof(rule), "review/%s", ar_severity_name(is->severity));
    json_t *props = json_pack("{sssb}", "severity", ar_severity_name(is->severity), "outside_diff",
                              is->outside_diff);
    if (is->suggestion)
        json_object_set_new(props, "suggestion", text_value(is->suggestion));
    return json_pack("{sssIsssos[{so}]so}", "ruleId", rule, "ruleIndex", (json_int_t)is->severity,
                     "level", severity_out[is->severity].sarif_level, "message", sarif_message(is),
                     "locations", "physicalLocation", loc, "properties", props);
}

json_t *ar_review_to_sarif(const struct ar_review_report *rep)
{
    const struct ar_review *rv = rep->rv;
    json_t *results = json_array();
    for (size_t i = 0; i < rv->n_issues; i++)
        json_array_append_new(results, sarif_result(&rv->issues[i]));

    /* Whether the tool did its job, as SARIF says it: a failed review is not
     * a clean one, and a degraded one carries a warning. */
    json_t *inv = json_pack("{sbsi}", "executionSuccessful", !rv->failed, "exitCode",
                            rep->verdict->exit_status);
    if (inv && (rv->failed || rv->degraded)) {
        char text[400];
        ar_review_error_text(rv, text, sizeof(text));
        json_object_set_new(inv, "toolExecutionNotifications",
                            json_pack("[{sss{so}}]", "level", rv->failed ? "error" : "warning",
                                      "message", "text", text_value(text)));
    }
    json_t *run =
        json_pack("{s{s{sssssss o}}sos[o]s{sbsosbsssssi}}", "tool", "driver", "name", "agentrun",
                  "version", AR_VERSION, "informationUri", AR_REVIEW_INFO_URI, "rules",
                  sarif_rules(), "results", results, "invocations", inv, "properties", "passed",
                  rv->passed, "summary", text_value(rv->summary ? rv->summary : ""), "degraded",
                  rv->degraded, "verdict", verdict_name(rep->verdict), "failOn",
                  ar_severity_name(rep->fail_on), "chunks", (int)rv->chunks);
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

static void render_github(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    if (!rep->reviewed) {
        github_command(out, "notice", "agentrun review", "nothing to review");
        return;
    }
    for (size_t i = 0; i < rv->n_issues; i++) {
        const struct ar_review_issue *is = &rv->issues[i];
        char title[96];
        snprintf(title, sizeof(title), "agentrun review: %s%s", ar_severity_name(is->severity),
                 is->outside_diff ? " (outside the diff)" : "");
        ar_buf_printf(out, "::%s file=", severity_out[is->severity].github_command);
        ar_github_escape_property(ar_diff_path_normalize(is->file), out);
        ar_buf_printf(out, ",line=%lld,title=", (long long)is->line);
        ar_github_escape_property(title, out);
        ar_buf_puts(out, "::");
        ar_github_escape_data(is->message, out);
        if (is->suggestion) {
            ar_github_escape_data("\n\nSuggestion: ", out);
            ar_github_escape_data(is->suggestion, out);
        }
        ar_buf_putc(out, '\n');
    }
    char line[400];
    if (rv->failed || rv->degraded) {
        ar_review_error_text(rv, line, sizeof(line));
        github_command(out, rv->failed ? "error" : "warning",
                       rv->failed ? "agentrun review failed" : "agentrun review degraded", line);
    }
    snprintf(line, sizeof(line), "agentrun review: %s", verdict_name(rep->verdict));
    github_command(out, rep->verdict->exit_status == 0 ? "notice" : "error", line,
                   rv->summary && *rv->summary ? rv->summary : verdict_name(rep->verdict));
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

static void render_text(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    const struct ar_review_verdict *v = rep->verdict;
    if (!rep->reviewed) {
        ar_buf_printf(out, "nothing to review%s%s\n", rep->why_not ? ": " : "",
                      rep->why_not ? rep->why_not : "");
        return;
    }
    for (size_t i = 0; i < rv->n_issues; i++) {
        const struct ar_review_issue *is = &rv->issues[i];
        ar_buf_printf(out, "%s:%lld: %s: ", is->file, (long long)is->line,
                      ar_severity_name(is->severity));
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
    if (rv->n_issues)
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
    ar_buf_printf(out, " (%zu issue%s", rv->n_issues, rv->n_issues == 1 ? "" : "s");
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
        render_text(rep, out);
        return 0;
    case AR_REVIEW_FORMAT_GITHUB:
        render_github(rep, out);
        return 0;
    case AR_REVIEW_FORMAT_JSON:
        doc = ar_review_to_value(rep);
        break;
    case AR_REVIEW_FORMAT_SARIF:
        doc = ar_review_to_sarif(rep);
        break;
    }
    char *s = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!s)
        return AR_ENOMEM;
    int rc = ar_buf_puts(out, s);
    if (!rc)
        rc = ar_buf_putc(out, '\n');
    free(s);
    return rc;
}
