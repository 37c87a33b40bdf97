/*
 * Model text on a terminal: shown, never obeyed (util/shown.h has the rule and the
 * rendering). run's answer (the product: its line breaks and words are the model's)
 * goes through ar_cli_text_neutralize(); route, prioritize text and markdown and the
 * merge's rows, laid out in lines by agentrun, through ar_cli_layout_neutralize(); every
 * line on stderr through
 * ar_cli_line_neutralize(); the review's text and github formats are rendered so by the
 * library (ar_review_write()).
 */
#ifndef AR_CLI_TERMINAL_H
#define AR_CLI_TERMINAL_H

#include <stddef.h>
#include <stdio.h>

#include "util/buf.h"

/* Appends s[0..n) to out as shown (util/shown.h). Returns 0 or AR_ENOMEM. */
int ar_cli_text_append(struct ar_buf *out, const char *s, size_t n);

/* Renders b's bytes from `from` on in place. Returns 0 or AR_ENOMEM (b then unchanged). */
int ar_cli_text_neutralize(struct ar_buf *b, size_t from);

/* Renders b's bytes from `from` on in place as text laid out in lines that holds a
 * change's or a model's words (route, prioritize, worktrees merge): ar_shown_layout().
 * Returns 0 or AR_ENOMEM (b then unchanged). */
int ar_cli_layout_neutralize(struct ar_buf *b, size_t from);

/* Writes s[0..n) to stdout as shown, and flushes. Returns 0 or -1 (msg.c). */
int ar_cli_write_text(const char *s, size_t n);

/*
 * A diagnostic, a log line, a progress line: one line whatever it quotes (a file
 * name, a model's path or message, a CLI's or git's stderr). Rendered by
 * ar_shown_data() (util/shown.h), so no line a change or a model wrote can start a
 * CI workflow command on stderr.
 */

/* Appends s[0..n) to out as one line. Returns 0 or AR_ENOMEM. */
int ar_cli_line_append(struct ar_buf *out, const char *s, size_t n);

/* Renders b's bytes from `from` on as one line, in place. Returns 0 or AR_ENOMEM. */
int ar_cli_line_neutralize(struct ar_buf *b, size_t from);

/* fputs() of the C string s as one line. Returns 0 or EOF. */
int ar_cli_line_fputs(const char *s, FILE *f);

#endif
