/*
 * Output formats of `agentrun prioritize`: text (a ranked table wrapped to
 * the terminal), markdown (a table to paste into a doc or PR) and json. The
 * renderers build the whole document in a buffer; cmd_prioritize.c prints it.
 */
#ifndef AR_CLI_PRIORITIZE_FORMAT_H
#define AR_CLI_PRIORITIZE_FORMAT_H

#include <jansson.h>

#include "agentrun/agentrun.h"
#include "prioritize/prioritize.h"
#include "util/buf.h"

#define AR_PRIORITIZE_SCHEMA "agentrun.prioritize/1"

enum ar_prioritize_format {
    AR_PRIORITIZE_FORMAT_TEXT = 0,
    AR_PRIORITIZE_FORMAT_MARKDOWN,
    AR_PRIORITIZE_FORMAT_JSON,
};

/* The format named s ("text", "markdown", "json"), or -1. */
int ar_prioritize_format_parse(const char *s);

/* The width to wrap text to: $COLUMNS, else the terminal on stdout, else 80. */
int ar_prioritize_term_width(void);

/*
 * Appends the ranking (borrowed) in `fmt` to out. The text table is `width`
 * columns wide (the rationale column never narrower than 20). For json, res
 * (borrowed) adds the run's provider, model, tokens, cost, duration and
 * calls; rk may be NULL when the run failed (then "ok": false and "error").
 * Returns 0 or AR_ENOMEM.
 */
int ar_prioritize_render(const struct ar_ranking *rk, const struct ar_result *res,
                         enum ar_prioritize_format fmt, int width, struct ar_buf *out);

#endif
