/*
 * The readers of a number and of a literal (true, false, null), shared by the
 * strict scan (scan.c) and its block walker (scan_blocks.c), inline in both:
 * from s[i] within s[0..hi), an enum ar_json_scan_status and *next at the
 * token's end, the offending byte or hi. Internal to src/json.
 */
#ifndef AR_JSON_TOKEN_H
#define AR_JSON_TOKEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json/scan.h"

static inline int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* The end of the run of digits from s[i]: eight bytes at a time where eight
 * remain. A byte is a digit when x = b ^ 0x30 is below 10, that is when x +
 * 0x76 leaves the top bit clear (x below 0x80: an x from 0x80 has it set
 * already). Only the first non-digit counts, and a carry out of a byte only
 * comes from a non-digit, into a later byte. */
static inline uint64_t non_digits(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    v ^= 0x3030303030303030u;
    return ((v + 0x7676767676767676u) | v) & 0x8080808080808080u;
}

static inline __attribute__((always_inline)) size_t digits_end(const unsigned char *s, size_t i,
                                                               size_t hi)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (i + 8 <= hi) { /* most numbers end in their first eight bytes */
        uint64_t other = non_digits(s + i);
        if (other)
            return i + (size_t)__builtin_ctzll(other) / 8;
        for (i += 8; i + 8 <= hi; i += 8) {
            other = non_digits(s + i);
            if (other)
                return i + (size_t)__builtin_ctzll(other) / 8;
        }
    }
#endif
    while (i < hi && is_digit(s[i]))
        i++;
    return i;
}

static inline int ar_json_scan_number(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    if (s[i] == '-')
        i++;
    if (i >= hi)
        goto eof;
    if (s[i] == '0')
        i++;
    else if (is_digit(s[i]))
        i = digits_end(s, i + 1, hi);
    else
        goto fail;
    if (i < hi && s[i] == '.') {
        i++;
        if (i >= hi)
            goto eof;
        if (!is_digit(s[i]))
            goto fail;
        i = digits_end(s, i + 1, hi);
    }
    if (i < hi && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < hi && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= hi)
            goto eof;
        if (!is_digit(s[i]))
            goto fail;
        i = digits_end(s, i + 1, hi);
    }
    *next = i;
    return AR_SCAN_COMPLETE;
fail:
    *next = i;
    return AR_SCAN_FAIL;
eof:
    *next = hi;
    return AR_SCAN_EOF;
}

static inline int ar_json_scan_literal(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    const char *lit = s[i] == 't' ? "true" : s[i] == 'f' ? "false" : "null";
    size_t n = s[i] == 'f' ? 5 : 4;
    if (i + 5 <= hi) { /* a whole literal: its first four bytes as one word */
        uint32_t w, l;
        memcpy(&w, s + i, sizeof(w));
        memcpy(&l, lit, sizeof(l));
        if (w == l && (n == 4 || s[i + 4] == 'e')) {
            *next = i + n;
            return AR_SCAN_COMPLETE;
        }
    }
    for (size_t k = 0; k < n; k++) {
        if (i + k >= hi) {
            *next = hi;
            return AR_SCAN_EOF;
        }
        if (s[i + k] != (unsigned char)lit[k]) {
            *next = i + k;
            return AR_SCAN_FAIL;
        }
    }
    *next = i + n;
    return AR_SCAN_COMPLETE;
}

#endif
