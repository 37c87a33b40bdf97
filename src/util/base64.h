/* Base64 (RFC 4648, with padding): bytes that are not UTF-8 text inside JSON. */
#ifndef AR_UTIL_BASE64_H
#define AR_UTIL_BASE64_H

#include <stddef.h>

/* The encoding of data[0..n), NUL-terminated; *out_len (may be NULL) its length.
 * Caller free()s; NULL when out of memory. */
char *ar_base64_encode(const void *data, size_t n, size_t *out_len);

/* The bytes of s[0..n), NUL-terminated for convenience; *out_len their count.
 * NULL when s is not base64 (or out of memory). Caller free()s. */
char *ar_base64_decode(const char *s, size_t n, size_t *out_len);

#endif
