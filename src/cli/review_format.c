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
#include "json/dump.h"
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
    json_object_set_new(o, "line", json_integer(is->line));
    json_object_set_new(o, "severity", json_string(ar_severity_name(is->severity)));
    json_object_set_new(o, "message", text_value(is->message));
    if (is->suggestion)
        json_object_set_new(o, "suggestion", text_value(is->suggestion));
    json_object_set_new(o, "outside_diff", json_boolean(is->outside_diff));
    if (is->fingerprint[0])
        json_object_set_new(o, "fingerprint", json_string(is->fingerprint));
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
    json_object_set_new(o, "suppressed", json_integer((json_int_t)rv->suppressed));
    json_object_set_new(o, "dropped", json_integer((json_int_t)rv->dropped));
    json_t *excluded = json_array();
    for (size_t i = 0; i < rep->n_excluded; i++)
        json_array_append_new(excluded, text_value(rep->excluded[i]));
    json_object_set_new(o, "excluded", excluded);
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

static json_t *sarif_result(const struct ar_review_issue *is)
{
    struct ar_buf uri;
    ar_buf_init(&uri, AR_BUF_UNLIMITED);
    ar_uri_encode_path(is->file, &uri);
    /* Paths are located: relative to the repository root, never absolute. */
    json_t *loc =
        json_pack("{s{soss}s{sI}}", "artifactLocation", "uri", text_value(ar_buf_cstr(&uri)),
                  "uriBaseId", "%SRCROOT%", "region", "startLine", (json_int_t)is->line);
    ar_buf_finish(&uri);
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
        ar_github_escape_property(is->file, out);
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

static json_t *rdjson_diagnostic(const struct ar_review_issue *is)
{
    char *code = ar_suggestion_code(is->suggestion);
    char rule[32];
    snprintf(rule, sizeof(rule), "review/%s", ar_severity_name(is->severity));
    /* A suggestion that is code becomes reviewdog's replacement of the line;
     * one in words stays in the message, where nobody can apply it by a click. */
    json_t *d =
        json_pack("{sos{sos{so}}sss{ssss}s{ss}}", "message", message_value(is, !code), "location",
                  "path", text_value(is->file), "range", "start", rd_position(is->line), "severity",
                  severity_out[is->severity].rdjson_severity, "source", "name", "agentrun", "url",
                  AR_REVIEW_INFO_URI, "code", "value", rule);
    if (d && code)
        json_object_set_new(d, "suggestions",
                            json_pack("[{s{soso}so}]", "range", "start", rd_position(is->line),
                                      "end", rd_position(is->line), "text", text_value(code)));
    free(code);
    return d;
}

static int render_rdjsonl(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    for (size_t i = 0; i < rv->n_issues; i++) {
        json_t *d = rdjson_diagnostic(&rv->issues[i]);
        char *s = d ? json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(d);
        int rc = s ? ar_buf_puts(out, s) : AR_ENOMEM;
        if (!rc)
            rc = ar_buf_putc(out, '\n');
        free(s);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- GitLab Code Quality ---- */

json_t *ar_review_to_gitlab(const struct ar_review_report *rep)
{
    const struct ar_review *rv = rep->rv;
    json_t *a = json_array();
    for (size_t i = 0; a && i < rv->n_issues; i++) {
        const struct ar_review_issue *is = &rv->issues[i];
        char check[40];
        snprintf(check, sizeof(check), "agentrun/review/%s", ar_severity_name(is->severity));
        json_t *o = json_pack("{sosssssss{sos{sI}}}", "description", message_value(is, 1),
                              "check_name", check, "fingerprint", is->fingerprint, "severity",
                              severity_out[is->severity].gitlab_severity, "location", "path",
                              text_value(is->file), "lines", "begin", (json_int_t)is->line);
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

static void render_checkstyle(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    ar_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<checkstyle version=\"8.0\">\n");
    for (size_t i = 0; i < rv->n_issues; i++) {
        const struct ar_review_issue *is = &rv->issues[i];
        if (i == 0 || strcmp(rv->issues[i - 1].file, is->file) != 0) {
            if (i)
                ar_buf_puts(out, "  </file>\n");
            ar_buf_puts(out, "  <file name=\"");
            ar_xml_escape(is->file, out);
            ar_buf_puts(out, "\">\n");
        }
        ar_buf_printf(out, "    <error line=\"%lld\" severity=\"%s\" message=\"",
                      (long long)is->line, severity_out[is->severity].checkstyle_severity);
        ar_xml_escape(is->message, out);
        if (is->suggestion) {
            ar_xml_escape("\n\nSuggestion: ", out);
            ar_xml_escape(is->suggestion, out);
        }
        ar_buf_printf(out, "\" source=\"agentrun.review.%s\"/>\n", ar_severity_name(is->severity));
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
