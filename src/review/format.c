/*
 * The review formats (docs/review.md, "Output formats"). A CI consumer reads
 * them unattended, so each is a complete, valid document in every case: a
 * review, a degraded review, a failed one, and nothing to review. Paths and
 * lines come located (ar_review_locate()): repository paths, lines that fit 32
 * bits. This file names the formats, holds what they share, and writes a
 * document whole to the caller's sink (ar_review_write()); format_json.c,
 * format_text.c and format_ci.c make the documents.
 */
#include <stdlib.h>
#include <string.h>

#include "util/json_dump.h"
#include "review/format.h"
#include "util/macros.h"
#include "util/shown.h"

static const char *const format_names[] = {
    [AR_REVIEW_FORMAT_TEXT] = "text",
    [AR_REVIEW_FORMAT_JSON] = "json",
    [AR_REVIEW_FORMAT_SARIF] = "sarif",
    [AR_REVIEW_FORMAT_GITHUB] = "github",
    [AR_REVIEW_FORMAT_RDJSONL] = "rdjsonl",
    [AR_REVIEW_FORMAT_GITLAB] = "gitlab",
    [AR_REVIEW_FORMAT_CHECKSTYLE] = "checkstyle",
};

int ar_review_format_from_name(const char *name)
{
    for (size_t i = 0; name && i < AR_ARRAY_SIZE(format_names); i++)
        if (strcmp(name, format_names[i]) == 0)
            return (int)i;
    return -1;
}

const char *ar_review_format_name(int fmt)
{
    return fmt >= 0 && (size_t)fmt < AR_ARRAY_SIZE(format_names) ? format_names[fmt] : NULL;
}

const char *ar_review_error_text(const struct ar_review *rv, char *buf, size_t n)
{
    const char *name = ar_strerror_name(rv->error.code);
    if (!rv->error.msg[0] || strcmp(rv->error.msg, name) == 0)
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "%s: %s", name, rv->error.msg);
    return buf;
}

/* "not reviewed: binary content…": the message of a path that fails the review. */
void ar_rf_cover_message(const struct ar_review_file *f, char *buf, size_t n)
{
    snprintf(buf, n,
             "agentrun review did not review this changed file, so the review cannot "
             "pass: %s",
             f->why ? f->why : ar_review_cover_name(f->status));
}

/* The fingerprint of a path not reviewed: the same on every run for that path. */
void ar_rf_cover_fingerprint(const struct ar_review_file *f, char out[AR_FINGERPRINT_LEN + 1])
{
    struct ar_review_issue is = { 0 };
    is.file = (char *)ar_rf_cover_path(f);
    is.message = (char *)"agentrun: this changed file was not reviewed";
    is.severity = AR_SEV_CRITICAL;
    ar_review_fingerprint(&is, 0, out);
}

const char *ar_rf_agreement(const struct ar_review_issue *is, char *buf, size_t n)
{
    if (!n)
        return buf;
    buf[0] = '\0';
    if (!is->n_found_by)
        return buf;
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "Found by ");
    for (size_t i = 0; i < is->n_found_by && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", is->found_by[i]);
    if (at < n)
        at += (size_t)snprintf(buf + at, n - at, " (%zu of %u panel members)", is->n_found_by,
                               is->panel_size);
    if (at < n && is->below_quorum)
        snprintf(buf + at, n - at, "; below the quorum: %s",
                 ar_review_counts(is) ? "counted all the same, as critical"
                                      : "not counted toward the verdict");
    return buf;
}

json_t *ar_rf_message(const struct ar_review_issue *is, int with_suggestion)
{
    char agree[300];
    ar_rf_agreement(is, agree, sizeof(agree));
    if ((!is->suggestion || !with_suggestion) && !agree[0])
        return ar_rf_text(is->message);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_puts(&b, is->message);
    if (is->suggestion && with_suggestion)
        ar_buf_printf(&b, "\n\nSuggestion: %s", is->suggestion);
    if (agree[0])
        ar_buf_printf(&b, "\n\n%s", agree);
    json_t *m = ar_rf_text(ar_buf_cstr(&b));
    ar_buf_finish(&b);
    return m;
}

int ar_review_render(const struct ar_review_report *rep, enum ar_review_format fmt,
                     struct ar_buf *out)
{
    json_t *doc = NULL;
    switch (fmt) {
    case AR_REVIEW_FORMAT_TEXT:
    case AR_REVIEW_FORMAT_GITHUB: {
        size_t from = out->len;
        int rc = fmt == AR_REVIEW_FORMAT_TEXT ? ar_rf_render_text(rep, out)
                                              : ar_rf_render_github(rep, out);
        /* a terminal, a CI log: util/shown.h */
        return rc ? rc : ar_shown_in_place(out, from);
    }
    case AR_REVIEW_FORMAT_RDJSONL:
        return ar_rf_render_rdjsonl(rep, out);
    case AR_REVIEW_FORMAT_CHECKSTYLE:
        return ar_rf_render_checkstyle(rep, out);
    case AR_REVIEW_FORMAT_GITLAB:
        doc = ar_review_to_gitlab(rep);
        break;
    case AR_REVIEW_FORMAT_JSON:
        doc = ar_review_to_value(rep);
        break;
    case AR_REVIEW_FORMAT_SARIF:
        doc = ar_review_to_sarif(rep);
        break;
    default:
        return AR_EUSAGE;
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

void ar_review_write_options_init(struct ar_review_write_options *o)
{
    memset(o, 0, sizeof(*o));
}

void ar_review_report_of(const struct ar_review_result *res,
                         const struct ar_review_write_options *opts, struct ar_review_report *rep)
{
    *rep = (struct ar_review_report){
        .rv = &res->review,
        .verdict = &res->verdict,
        .fail_on = res->fail_on,
        .source = res->plan.source,
        .reviewed = res->plan.reviewed,
        .why_not = res->plan.why_not,
        .sarif_category = opts ? opts->sarif_category : NULL,
        .excluded = res->plan.excluded,
        .n_excluded = res->plan.n_excluded,
        .pretty = opts ? opts->pretty : 0,
        .coverage = &res->coverage,
        .panel = &res->panel,
    };
}

/* The whole document is made first: a sink never gets half of one because memory ran
 * out, and a writer that fails stops the writing at once. */
int ar_review_write(const struct ar_review_result *res, enum ar_review_format fmt,
                    const struct ar_review_write_options *opts, ar_review_write_fn *write,
                    void *arg, struct ar_error *err)
{
    if (!res || !write)
        return ar_error_set(err, AR_EUSAGE, NULL, "no review result or no writer");
    if (!ar_review_format_name((int)fmt))
        return ar_error_set(err, AR_EUSAGE, "format", "no review format %d", (int)fmt);
    struct ar_review_report rep;
    ar_review_report_of(res, opts, &rep);
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    int rc = ar_review_render(&rep, fmt, &out);
    if (rc)
        rc = ar_error_set(err, rc, "format", "cannot make the %s document: %s",
                          ar_review_format_name((int)fmt), ar_strerror(rc));
    else if (out.len && write(arg, out.data, out.len) != 0)
        rc = ar_error_set(err, AR_EIO, "write", "the writer refused the %s document",
                          ar_review_format_name((int)fmt));
    ar_buf_finish(&out);
    return rc;
}
