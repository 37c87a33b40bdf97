/*
 * The review formats inside the library (the public call is ar_review_write(),
 * agentrun/review.h). format.c names them, holds what they share and writes a
 * document whole; format_json.c (json, sarif), format_text.c (text, github) and
 * format_ci.c (rdjsonl, gitlab, checkstyle) make the documents. No provider
 * knowledge: a review result is all they read.
 */
#ifndef AR_REVIEW_FORMAT_H
#define AR_REVIEW_FORMAT_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "agentrun/review.h"
#include "util/json_dump.h"
#include "review/review.h"
#include "util/buf.h"

#define AR_REVIEW_INFO_URI  "https://github.com/agentrun/agentrun"
#define AR_SARIF_SCHEMA_URI "https://json.schemastore.org/sarif-2.1.0.json"

/* The SARIF automationDetails.id category without a sarif_category. */
#define AR_SARIF_DEFAULT_CATEGORY "agentrun-review"

/* The SARIF rule and the check name of a changed file the review did not read. */
#define AR_NOT_REVIEWED_RULE "review/not-reviewed"

/* Everything a format shows: a result's parts and the write options. Every pointer is
 * borrowed. */
struct ar_review_report {
    const struct ar_review *rv;
    const struct ar_review_verdict *verdict;
    int fail_on;                 /* a severity or AR_FAIL_ON_NONE */
    const char *source;          /* what was reviewed ("HEAD~1", "stdin"), or NULL */
    int reviewed;                /* 0: nothing to review, no model was called */
    const char *why_not;         /* with !reviewed: "the diff is empty", "binary files only"… */
    const char *sarif_category;  /* automationDetails.id is this + "/"; NULL: the default */
    const char *const *excluded; /* the diff's files the review skipped (exclude…) */
    size_t n_excluded;
    int pretty; /* json, sarif, gitlab: indented (default: one line) */
    const struct ar_review_coverage *coverage; /* every changed path, or NULL: none */
    const struct ar_review_panel *panel;       /* the panel, or NULL (n_members 0): none */
};

/* The report of res with opts (NULL: the defaults). */
void ar_review_report_of(const struct ar_review_result *res,
                         const struct ar_review_write_options *opts, struct ar_review_report *rep);

/* Appends the document in format fmt to out: text and github shown, never obeyed
 * (util/shown.h). Returns 0, AR_EUSAGE (no such format) or AR_ENOMEM. */
int ar_review_render(const struct ar_review_report *rep, enum ar_review_format fmt,
                     struct ar_buf *out);

/* The longest rdjsonl line written: reviewdog reads lines of at most 64 KiB and
 * silently drops the rest of the stream after a longer one. */
#define AR_RDJSONL_MAX_LINE ((size_t)60 << 10)

/* GitHub shows at most this many annotations of each level per step. */
#define AR_GITHUB_MAX_ANNOTATIONS 10

/* ---- each format (ar_review_render() dispatches) ---- */

/* The json format's object (docs/review.md). New reference, NULL when out of memory. */
json_t *ar_review_to_value(const struct ar_review_report *rep);

/* The SARIF 2.1.0 log. New reference, NULL when out of memory. */
json_t *ar_review_to_sarif(const struct ar_review_report *rep);

/* The GitLab Code Quality report (an array). New reference, NULL when out of memory. */
json_t *ar_review_to_gitlab(const struct ar_review_report *rep);

/* Each appends its document to out. Returns 0 or AR_ENOMEM (out then holds part of it). */
int ar_rf_render_text(const struct ar_review_report *rep, struct ar_buf *out);
int ar_rf_render_github(const struct ar_review_report *rep, struct ar_buf *out);
int ar_rf_render_rdjsonl(const struct ar_review_report *rep, struct ar_buf *out);
int ar_rf_render_checkstyle(const struct ar_review_report *rep, struct ar_buf *out);

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

/* ---- what the formats share (rf: review format) ---- */

static inline const char *ar_rf_verdict_name(const struct ar_review_verdict *v)
{
    return v->exit_status == 0 ? "pass" : v->exit_status == 1 ? "fail" : "error";
}

/* Model text can hold anything: a lossy JSON string rather than a lost field. New
 * reference. */
static inline json_t *ar_rf_text(const char *s)
{
    return s ? ar_json_text(s, strlen(s)) : json_null();
}

/* The message with the suggestion, if any, after it, and a panel's agreement
 * (ar_rf_agreement()): a JSON string (new reference). */
json_t *ar_rf_message(const struct ar_review_issue *is, int with_suggestion);

/*
 * A panel finding's agreement for people: "Found by claude, codex (2 of 3 panel members)",
 * and when fewer than the quorum reported it "; below the quorum: not counted toward the
 * verdict" (or ", counted: critical"). "" for a finding of no panel. Written to buf (cut
 * to fit); returns buf.
 */
const char *ar_rf_agreement(const struct ar_review_issue *is, char *buf, size_t n);

/* A changed path that fails the review: neither reviewed nor left out by a rule. */
static inline int ar_rf_blocks(const struct ar_review_file *f)
{
    return f->status != AR_COVER_REVIEWED && !f->rule;
}

static inline size_t ar_rf_n_cover(const struct ar_review_report *rep)
{
    return rep->coverage ? rep->coverage->n_files : 0;
}

static inline const struct ar_review_file *ar_rf_cover_at(const struct ar_review_report *rep,
                                                          size_t i)
{
    return &rep->coverage->files[i];
}

static inline const char *ar_rf_cover_path(const struct ar_review_file *f)
{
    return f->path && f->path[0] ? f->path : "(unnamed file)";
}

/* "…did not review this changed file…: binary content": the message of a path that
 * fails the review. */
void ar_rf_cover_message(const struct ar_review_file *f, char *buf, size_t n);

/* The fingerprint of a path not reviewed: the same on every run for that path. */
void ar_rf_cover_fingerprint(const struct ar_review_file *f, char out[AR_FINGERPRINT_LEN + 1]);

#endif
