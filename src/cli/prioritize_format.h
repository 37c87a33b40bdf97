/*
 * Output formats of `agentrun prioritize`: text (a ranked table wrapped to
 * the terminal), markdown (a table to paste into a doc or PR) and json. The
 * renderers build the whole document in a buffer; cmd_prioritize.c prints it.
 */
#ifndef AR_CLI_PRIORITIZE_FORMAT_H
#define AR_CLI_PRIORITIZE_FORMAT_H

#include "agentrun/prioritize.h"
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
 * Appends the result (borrowed) in `fmt` to out: text and markdown show the
 * ranking (nothing when there is none), json is ar_prioritize_result_to_json()
 * and a newline. The text table is `width` columns wide (the rationale column
 * never narrower than 20). Returns 0 or AR_ENOMEM.
 */
int ar_prioritize_render(const struct ar_prioritize_result *pr, enum ar_prioritize_format fmt,
                         int width, struct ar_buf *out);

#endif
