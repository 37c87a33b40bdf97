/*
 * Model text on a terminal or in a CI log: shown, never obeyed. A model (or a
 * checkout it quotes) can put terminal control sequences in its answer — an escape
 * that clears the screen, rewrites the previous line, retitles the window, hides
 * text, or fakes a passing verdict. Every text output (the CLI's run answer and
 * diagnostics, the review's text and github formats, prioritize's text and
 * markdown, route) goes through ar_shown_append(); JSON outputs keep the bytes
 * (their encoder escapes them).
 *
 * The rendering (docs/security.md#terminal-output), as `cat -v` shows bytes:
 *   - the C0 controls but TAB and LF, and CR but before LF: caret notation, ESC "^[",
 *     CR "^M", BEL "^G", BS "^H", NUL "^@";
 *   - DEL: "^?";
 *   - the C1 controls U+0080..U+009F (CSI, OSC…): "M-^[" for U+009B and so on;
 *   - bytes that are not UTF-8: U+FFFD.
 * Everything else, UTF-8 text in any script, passes unchanged.
 */
#ifndef AR_UTIL_SHOWN_H
#define AR_UTIL_SHOWN_H

#include <stddef.h>

#include "util/buf.h"

/* Appends s[0..n) to out as rendered above. Returns 0 or AR_ENOMEM. */
int ar_shown_append(struct ar_buf *out, const char *s, size_t n);

/* Renders b's bytes from `from` on in place. Returns 0 or AR_ENOMEM (b then unchanged). */
int ar_shown_in_place(struct ar_buf *b, size_t from);

/*
 * Untrusted text is data, everywhere it is shown (docs/security.md#terminal-output):
 * the one function every string that came from a change or a model (a file name, a
 * path or message a model wrote, a CLI's or git's message quoting them) goes through
 * before it reaches stderr, the text format or a progress line. A GitHub runner reads
 * workflow commands from both stdout and stderr, a line at a time (split at LF and
 * CR), as "::cmd::" at the start of a line (leading blanks skipped) or "##[cmd]"
 * anywhere in it; so on top of ar_shown_append():
 *   - a line break never passes: CR is "^M" (before LF too), LF is "^J", or with
 *     `cont` (continuation lines of a multi-line message) LF and then cont, which
 *     must hold a character that is not blank, so no line the text wrote starts
 *     with "::";
 *   - "##[" is shown "# #[".
 * Appends s[0..n) to out so rendered. Returns 0 or AR_ENOMEM.
 */
int ar_shown_data(struct ar_buf *out, const char *s, size_t n, const char *cont);

/*
 * The same rule for text agentrun laid out in lines itself with untrusted words in it
 * (a table of a model's rationales, wrapped to a column; a list of a model's routes):
 * the line breaks are the layout's and stay (LF, CR LF), a lone CR is "^M", "##[" is
 * "# #[", and a line that starts, after blanks, with "::" shows it ": :" (the layout's
 * own lines never do). Appends s[0..n) so rendered. Returns 0 or AR_ENOMEM.
 */
int ar_shown_layout(struct ar_buf *out, const char *s, size_t n);

/* ar_shown_layout() of b's bytes from `from` on, in place. Returns 0 or AR_ENOMEM (b then
 * unchanged). */
int ar_shown_layout_in_place(struct ar_buf *b, size_t from);

#endif
