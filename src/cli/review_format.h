/*
 * Output formats of `agentrun review`: text, json, sarif, github, rdjsonl,
 * gitlab and checkstyle. The
 * renderers build the whole document in a buffer; cmd_review.c prints it.
 */
#ifndef AR_CLI_REVIEW_FORMAT_H
#define AR_CLI_REVIEW_FORMAT_H

#include <jansson.h>

#include "review/review.h"
#include "util/buf.h"

enum ar_review_format {
    AR_REVIEW_FORMAT_TEXT = 0,
    AR_REVIEW_FORMAT_JSON,
    AR_REVIEW_FORMAT_SARIF,
    AR_REVIEW_FORMAT_GITHUB,
    AR_REVIEW_FORMAT_RDJSONL,
    AR_REVIEW_FORMAT_GITLAB,
    AR_REVIEW_FORMAT_CHECKSTYLE,
};

/* The format named s ("text", "json", "sarif", "github", "rdjsonl", "gitlab",
 * "checkstyle"), or -1. */
int ar_review_format_parse(const char *s);

#define AR_REVIEW_SCHEMA    "agentrun.review/1"
#define AR_REVIEW_INFO_URI  "https://github.com/agentrun/agentrun"
#define AR_SARIF_SCHEMA_URI "https://json.schemastore.org/sarif-2.1.0.json"

/* The SARIF automationDetails.id category without --sarif-category. */
#define AR_SARIF_DEFAULT_CATEGORY "agentrun-review"

/* Everything a renderer shows. Every pointer is borrowed. */
struct ar_review_report {
    const struct ar_review *rv;
    const struct ar_review_verdict *verdict;
    int fail_on;                 /* a severity or AR_FAIL_ON_NONE */
    const char *source;          /* what was reviewed ("HEAD~1", "stdin"), or NULL */
    int reviewed;                /* 0: nothing to review, no model was called */
    const char *why_not;         /* with !reviewed: "the diff is empty", "binary files only"… */
    const char *sarif_category;  /* automationDetails.id is this + "/"; NULL: the default */
    const char *const *excluded; /* the diff's files the review skipped (--exclude…) */
    size_t n_excluded;
    int pretty; /* json, sarif, gitlab: indented (default: one line) */
    const struct ar_review_coverage *coverage; /* every changed path, or NULL: none */
};

/* The longest rdjsonl line printed: reviewdog reads lines of at most 64 KiB and
 * silently drops the rest of the stream after a longer one. */
#define AR_RDJSONL_MAX_LINE ((size_t)60 << 10)

/* GitHub shows at most this many annotations of each level per step. */
#define AR_GITHUB_MAX_ANNOTATIONS 10

/* "code: message" of a failed or degraded review's error, or just the code when
 * the message says no more ("interrupted"). Written to buf; returns buf. */
const char *ar_review_error_text(const struct ar_review *rv, char *buf, size_t n);

/* Appends the document in format fmt to out. Returns 0 or AR_ENOMEM. */
int ar_review_render(const struct ar_review_report *rep, enum ar_review_format fmt,
                     struct ar_buf *out);

/* The json format's object (docs/review.md). New reference, NULL when out of memory. */
json_t *ar_review_to_value(const struct ar_review_report *rep);

/* The SARIF 2.1.0 log. New reference, NULL when out of memory. */
json_t *ar_review_to_sarif(const struct ar_review_report *rep);

/* The GitLab Code Quality report (an array). New reference, NULL when out of memory. */
json_t *ar_review_to_gitlab(const struct ar_review_report *rep);

/*
 * Appends s as XML 1.0 attribute text: & < > " ' escaped, tab, newline and
 * carriage return as character references, other control characters, U+FFFE,
 * U+FFFF and invalid UTF-8 as U+FFFD. Returns 0 or AR_ENOMEM.
 */
int ar_xml_escape(const char *s, struct ar_buf *out);

/* The code of the first fenced block (``` or ~~~) in a suggestion, a new
 * string without its final newline, or NULL when it holds none. */
char *ar_suggestion_code(const char *suggestion);

/*
 * GitHub workflow command escaping. A message (data): % -> %25, \r -> %0D,
 * \n -> %0A. A property value (file, title) additionally : -> %3A, , -> %2C.
 * Append to out; return 0 or AR_ENOMEM.
 */
int ar_github_escape_data(const char *s, struct ar_buf *out);
int ar_github_escape_property(const char *s, struct ar_buf *out);

/* A relative path as a URI reference: bytes other than unreserved ones and '/'
 * percent-encoded. Appends to out; returns 0 or AR_ENOMEM. */
int ar_uri_encode_path(const char *path, struct ar_buf *out);

#endif
