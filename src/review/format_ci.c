/*
 * The review formats of other tools: reviewdog's rdjsonl, GitLab Code Quality
 * and Checkstyle XML. Each keeps what its consumer needs to read all of it: a
 * line reviewdog can read, an entry GitLab validates, an attribute XML allows.
 */
#include <stdlib.h>
#include <string.h>

#include "review/format.h"
#include "util/utf8.h"

/* How each severity shows in each of these formats. */
static const struct {
    const char *rdjson_severity;
    const char *gitlab_severity;
    const char *checkstyle_severity;
} severity_out[AR_SEV_COUNT] = {
    [AR_SEV_CRITICAL] = { "ERROR", "blocker", "error" },
    [AR_SEV_HIGH] = { "ERROR", "critical", "error" },
    [AR_SEV_MEDIUM] = { "WARNING", "major", "warning" },
    [AR_SEV_LOW] = { "WARNING", "minor", "warning" },
    [AR_SEV_INFO] = { "INFO", "info", "info" },
};

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
    json_t *loc = json_pack("{so}", "path", ar_rf_text(path));
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
    json_t *msg = ar_rf_message(is, !code);
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
        msg = ar_rf_text(ar_buf_cstr(&b));
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
                                      "end", rd_position(is->line), "text", ar_rf_text(code)));
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

int ar_rf_render_rdjsonl(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review *rv = rep->rv;
    int rc = 0;
    for (size_t i = 0; !rc && i < ar_rf_n_cover(rep); i++) {
        const struct ar_review_file *f = ar_rf_cover_at(rep, i);
        if (!ar_rf_blocks(f))
            continue;
        char msg[700];
        ar_rf_cover_message(f, msg, sizeof(msg));
        size_t len;
        json_t *d =
            json_pack("{sss{so}sss{ssss}s{ss}}", "message", msg, "location", "path",
                      ar_rf_text(ar_rf_cover_path(f)), "severity", "ERROR", "source", "name",
                      "agentrun", "url", AR_REVIEW_INFO_URI, "code", "value", AR_NOT_REVIEWED_RULE);
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
                     ar_rf_text(path), "lines", "begin", (json_int_t)(line ? line : 1));
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
    char agree[300];
    if (ar_rf_agreement(is, agree, sizeof(agree))[0])
        ar_buf_printf(&b, "\n\n%s", agree);
    return ar_buf_detach(&b, NULL);
}

static json_t *gitlab_finding(const struct ar_review_issue *is, int placed)
{
    char check[40];
    snprintf(check, sizeof(check), "agentrun/review/%s", ar_severity_name(is->severity));
    const char *severity = severity_out[is->severity].gitlab_severity;
    if (placed)
        return gitlab_item(ar_rf_message(is, 1), check, is->fingerprint, severity, is->file,
                           is->line);
    char *msg = unplaced_message(is, 1);
    json_t *o =
        msg ? gitlab_item(ar_rf_text(msg), check, is->fingerprint, severity, UNPLACED_PATH, 0)
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
    for (size_t i = 0; a && i < ar_rf_n_cover(rep); i++) {
        const struct ar_review_file *f = ar_rf_cover_at(rep, i);
        if (!ar_rf_blocks(f))
            continue;
        char msg[700], fp[AR_FINGERPRINT_LEN + 1];
        ar_rf_cover_message(f, msg, sizeof(msg));
        ar_rf_cover_fingerprint(f, fp);
        json_t *o = gitlab_item(ar_rf_text(msg), "agentrun/" AR_NOT_REVIEWED_RULE, fp, "blocker",
                                ar_rf_cover_path(f), 0);
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

static int checkstyle_error(struct ar_buf *out, int64_t line, const char *severity,
                            const char *message, const char *suggestion, const char *source,
                            const char *agreement)
{
    int fail = 0;
    /* line 0 (the whole file) is written as 1: checkstyle readers want a line. */
    fail |= ar_buf_printf(out, "    <error line=\"%lld\" severity=\"%s\" message=\"",
                          (long long)(line ? line : 1), severity);
    fail |= ar_xml_escape(message, out);
    if (suggestion) {
        fail |= ar_xml_escape("\n\nSuggestion: ", out);
        fail |= ar_xml_escape(suggestion, out);
    }
    if (agreement && *agreement) {
        fail |= ar_xml_escape("\n\n", out);
        fail |= ar_xml_escape(agreement, out);
    }
    fail |= ar_buf_printf(out, "\" source=\"%s\"/>\n", source);
    return fail;
}

int ar_rf_render_checkstyle(const struct ar_review_report *rep, struct ar_buf *out)
{
    int fail = 0;
    const struct ar_review *rv = rep->rv;
    fail |= ar_buf_puts(
        out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<checkstyle version=\"8.0\">\n");
    /* Each changed file not reviewed fails the review: it comes first, as an error. */
    for (size_t i = 0; i < ar_rf_n_cover(rep); i++) {
        const struct ar_review_file *f = ar_rf_cover_at(rep, i);
        if (!ar_rf_blocks(f))
            continue;
        char msg[700];
        ar_rf_cover_message(f, msg, sizeof(msg));
        fail |= ar_buf_puts(out, "  <file name=\"");
        fail |= ar_xml_escape(ar_rf_cover_path(f), out);
        fail |= ar_buf_puts(out, "\">\n");
        fail |= checkstyle_error(out, 0, "error", msg, NULL, "agentrun.review.not-reviewed", NULL);
        fail |= ar_buf_puts(out, "  </file>\n");
    }
    /* A finding with no place in the repository: at ".", saying it has none. */
    for (size_t i = 0; i < rv->n_unplaced; i++) {
        const struct ar_review_issue *is = &rv->unplaced[i];
        char source[48], *msg = unplaced_message(is, 0);
        fail |= !msg;
        snprintf(source, sizeof(source), "agentrun.review.%s", ar_severity_name(is->severity));
        fail |= ar_buf_puts(out, "  <file name=\"");
        fail |= ar_xml_escape(UNPLACED_PATH, out);
        fail |= ar_buf_puts(out, "\">\n");
        fail |= checkstyle_error(out, 0, severity_out[is->severity].checkstyle_severity,
                                 msg ? msg : is->message, is->suggestion, source, NULL);
        fail |= ar_buf_puts(out, "  </file>\n");
        free(msg);
    }
    for (size_t i = 0; i < rv->n_issues; i++) {
        const struct ar_review_issue *is = &rv->issues[i];
        if (i == 0 || strcmp(rv->issues[i - 1].file, is->file) != 0) {
            if (i)
                fail |= ar_buf_puts(out, "  </file>\n");
            fail |= ar_buf_puts(out, "  <file name=\"");
            fail |= ar_xml_escape(is->file, out);
            fail |= ar_buf_puts(out, "\">\n");
        }
        char source[48], agree[300];
        snprintf(source, sizeof(source), "agentrun.review.%s", ar_severity_name(is->severity));
        fail |= checkstyle_error(out, is->line, severity_out[is->severity].checkstyle_severity,
                                 is->message, is->suggestion, source,
                                 ar_rf_agreement(is, agree, sizeof(agree)));
    }
    if (rv->n_issues)
        fail |= ar_buf_puts(out, "  </file>\n");
    fail |= ar_buf_puts(out, "</checkstyle>\n");
    return fail ? AR_ENOMEM : 0;
}
