/*
 * Model text on a terminal: shown, never obeyed. A model (or a checkout it quotes) can
 * put terminal control sequences in its answer — an escape that clears the screen,
 * rewrites the previous line, retitles the window, hides text, or fakes a passing
 * verdict. Every text output of the CLI (run's answer, review text and github, prioritize
 * text and markdown, route, and the diagnostics on stderr) goes through
 * ar_cli_text_neutralize(); JSON outputs keep the bytes (their encoder escapes them).
 *
 * The rendering (docs/security.md#terminal-output), as `cat -v` shows bytes:
 *   - the C0 controls but TAB and LF, and CR but before LF: caret notation, ESC "^[",
 *     CR "^M", BEL "^G", BS "^H", NUL "^@";
 *   - DEL: "^?";
 *   - the C1 controls U+0080..U+009F (CSI, OSC…): "M-^[" for U+009B and so on;
 *   - bytes that are not UTF-8: U+FFFD.
 * Everything else, UTF-8 text in any script, passes unchanged.
 */
#ifndef AR_CLI_TERMINAL_H
#define AR_CLI_TERMINAL_H

#include <stddef.h>
#include <stdio.h>

#include "util/buf.h"

/* Appends s[0..n) to out as rendered above. Returns 0 or AR_ENOMEM. */
int ar_cli_text_append(struct ar_buf *out, const char *s, size_t n);

/* Renders b's bytes from `from` on in place. Returns 0 or AR_ENOMEM (b then unchanged). */
int ar_cli_text_neutralize(struct ar_buf *b, size_t from);

/* Writes s[0..n) to stdout as rendered above, and flushes. Returns 0 or -1 (msg.c). */
int ar_cli_write_text(const char *s, size_t n);

/* fputs() of the C string s as rendered above. Returns 0 or EOF. */
int ar_cli_text_fputs(const char *s, FILE *f);

#endif
