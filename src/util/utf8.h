/* UTF-8: the one check of what a valid sequence is, and the lossy copy that
 * model text, file names and PRDs need before they can become JSON strings. */
#ifndef AR_UTIL_UTF8_H
#define AR_UTIL_UTF8_H

#include <stddef.h>

#include "util/buf.h"

/*
 * The length (1 to 4) of the valid UTF-8 sequence at s[0..n), or 0 when the
 * bytes there are not one: overlong forms, surrogates, code points past
 * U+10FFFF and a sequence cut off by n are all invalid. NUL is valid.
 */
size_t ar_utf8_seq_len(const char *s, size_t n);

/* Non-zero when s[0..n) is valid UTF-8. */
int ar_utf8_valid(const char *s, size_t n);

/*
 * Appends s[0..n) to out with every byte that does not start a valid sequence
 * replaced by U+FFFD (one replacement per bad byte); *replaced (may be NULL)
 * gets how many. Returns 0, AR_ETOOBIG or AR_ENOMEM.
 */
int ar_utf8_append_lossy(struct ar_buf *out, const char *s, size_t n, size_t *replaced);

/*
 * Replaces every NUL byte of b with U+FFFD, in place, so text that travels on as
 * a C string (a prompt, a diff, a template variable) is never cut short at a NUL
 * without anyone knowing. *replaced (may be NULL) gets how many; the caller says
 * so (a warning). b's limit grows by the two extra bytes of each replacement.
 * Returns 0 or AR_ENOMEM (b unchanged).
 */
int ar_buf_replace_nul(struct ar_buf *b, size_t *replaced);

#endif
