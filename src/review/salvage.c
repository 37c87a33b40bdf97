/*
 * Findings one by one. A model's review object is an envelope (passed,
 * summary) around a list of findings, and each finding stands alone: one
 * with a line of 0 or a misspelt severity says nothing about the others. So
 * the pipeline lets violations inside /issues/N through (the review's chunk
 * runs name AR_REVIEW_ITEMS as independent items: no repair call, no
 * degraded review for them), and this file judges each finding against the
 * review contract and keeps what can be kept, saying what it changed:
 *
 *   line not an integer >= 1     kept for the whole file (line 0); a string
 *                                of digits is read as the number it spells
 *   severity not one of the five kept as high: a finding whose severity
 *                                cannot be read must not pass a gate quietly
 *   message missing or empty     kept with "(no message)"
 *   suggestion not a string      kept without it
 *   file missing or empty        unplaced: reported without a location, and
 *                                still counted by the verdict
 *   not an object                left out (nothing to count)
 *
 * Every change is a note in the review (rv->notes). Long text is cut at
 * AR_REVIEW_MAX_TEXT so that every output format fits its consumer.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review/review.h"
#include "util/buf.h"

void ar_review_issue_free(struct ar_review_issue *is)
{
    free(is->file);
    free(is->message);
    free(is->suggestion);
    for (size_t i = 0; i < is->n_found_by; i++)
        free(is->found_by[i]);
    free(is->found_by);
    memset(is, 0, sizeof(*is));
}

int ar_review_issue_copy(struct ar_review_issue *dst, const struct ar_review_issue *src)
{
    *dst = *src;
    dst->file = src->file ? strdup(src->file) : NULL;
    dst->message = src->message ? strdup(src->message) : NULL;
    dst->suggestion = src->suggestion ? strdup(src->suggestion) : NULL;
    dst->found_by = src->n_found_by ? calloc(src->n_found_by, sizeof(*dst->found_by)) : NULL;
    int rc = (src->file && !dst->file) || (src->message && !dst->message) ||
             (src->suggestion && !dst->suggestion) || (src->n_found_by && !dst->found_by);
    for (size_t i = 0; !rc && i < src->n_found_by; i++)
        rc = !(dst->found_by[i] = strdup(src->found_by[i]));
    if (rc) {
        if (!dst->found_by)
            dst->n_found_by = 0;
        ar_review_issue_free(dst);
        return AR_ENOMEM;
    }
    return 0;
}

int ar_review_add_note(struct ar_review *rv, const char *note)
{
    char **nv = realloc(rv->notes, (rv->n_notes + 1) * sizeof(*nv));
    if (!nv)
        return AR_ENOMEM;
    rv->notes = nv;
    if (!(nv[rv->n_notes] = strdup(note)))
        return AR_ENOMEM;
    rv->n_notes++;
    return 0;
}

static int notef(struct ar_review *rv, const char *fmt, ...) AR_PRINTF(2, 3);

static int notef(struct ar_review *rv, const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return ar_review_add_note(rv, buf);
}

char *ar_review_text_cut(const char *s, int *cut)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    if (n <= AR_REVIEW_MAX_TEXT)
        return strdup(s);
    size_t mark = strlen(AR_REVIEW_CUT_MARK);
    size_t keep = AR_REVIEW_MAX_TEXT - mark;
    /* Back to the start of the UTF-8 sequence the cut falls in. */
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--;
    char *out = malloc(keep + mark + 1);
    if (!out)
        return NULL;
    memcpy(out, s, keep);
    memcpy(out + keep, AR_REVIEW_CUT_MARK, mark + 1);
    *cut = 1;
    return out;
}

/* The severity named s in any case, or -1. */
static int severity_of(json_t *sev)
{
    const char *s = json_string_value(sev);
    char low[16];
    size_t n = s ? strlen(s) : 0;
    if (!s || n >= sizeof(low))
        return -1;
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    return ar_severity_parse(low, 0);
}

/* The line a finding names: >= 1, or 0 when it names none (*why says what it was). */
static int64_t line_of(json_t *line, const char **why)
{
    *why = NULL;
    if (json_is_integer(line) && json_integer_value(line) >= 1)
        return json_integer_value(line);
    if (json_is_real(line) && json_real_value(line) >= 1 && json_real_value(line) < 9e18 &&
        json_real_value(line) == (double)(int64_t)json_real_value(line))
        return (int64_t)json_real_value(line);
    const char *s = json_string_value(line);
    if (s && *s && strlen(s) <= 18 && strspn(s, "0123456789") == strlen(s)) {
        int64_t v = strtoll(s, NULL, 10);
        if (v >= 1)
            return v;
    }
    *why = !line                   ? "missing"
           : json_is_integer(line) ? "not 1 or more"
           : json_is_string(line)  ? "a string that is no line number"
                                   : "not an integer";
    return 0;
}

static int append_issue(struct ar_review_issue **v, size_t *n, struct ar_review_issue *is)
{
    struct ar_review_issue *nv = realloc(*v, (*n + 1) * sizeof(*nv));
    if (!nv)
        return AR_ENOMEM;
    *v = nv;
    nv[(*n)++] = *is;
    return 0;
}

int ar_review_salvage_issue(json_t *v, size_t i, struct ar_review *rv)
{
    if (!json_is_object(v))
        return notef(rv, "/issues/%zu: not an object; left out", i);
    json_t *file = json_object_get(v, "file"), *line = json_object_get(v, "line");
    json_t *sev = json_object_get(v, "severity"), *msg = json_object_get(v, "message");
    json_t *sugg = json_object_get(v, "suggestion");
    struct ar_review_issue is = { 0 };
    int rc = 0;

    int s = severity_of(sev);
    if (s < 0) {
        s = AR_SEV_HIGH;
        rc = notef(rv,
                   "/issues/%zu/severity: not one of critical, high, medium, low, info; "
                   "counted as high",
                   i);
    }
    is.severity = (enum ar_severity)s;

    const char *why;
    is.line = line_of(line, &why);
    if (!rc && why)
        rc = notef(rv, "/issues/%zu/line: %s; reported for the whole file", i, why);

    const char *m = json_string_value(msg);
    if (!rc && (!m || !*m)) {
        m = "(no message)";
        rc = notef(rv, "/issues/%zu/message: missing or empty", i);
    }
    if (!rc && !(is.message = ar_review_text_cut(m, &is.cut)))
        rc = AR_ENOMEM;

    if (!rc && json_is_string(sugg) &&
        !(is.suggestion = ar_review_text_cut(json_string_value(sugg), &is.cut)))
        rc = AR_ENOMEM;
    else if (!rc && sugg && !json_is_string(sugg) && !json_is_null(sugg))
        rc = notef(rv, "/issues/%zu/suggestion: not a string; left out", i);

    const char *f = json_string_value(file);
    int placed = f && *f;
    if (!rc && placed && !(is.file = strdup(f)))
        rc = AR_ENOMEM;
    if (!rc && !placed)
        rc = notef(rv,
                   "/issues/%zu/file: missing or empty; reported without a location (it still "
                   "counts)",
                   i);
    if (!rc)
        rc = placed ? append_issue(&rv->issues, &rv->n_issues, &is)
                    : append_issue(&rv->unplaced, &rv->n_unplaced, &is);
    if (rc) {
        ar_review_issue_free(&is);
        return AR_ENOMEM;
    }
    if (!placed)
        rv->dropped++;
    return 0;
}
