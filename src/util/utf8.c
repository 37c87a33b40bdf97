/* UTF-8 validation and lossy copying. */
#include <string.h>

#include "agentrun/error.h"
#include "util/utf8.h"

size_t ar_utf8_seq_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    unsigned lo = 0x80, hi = 0xbf; /* the second byte's range, narrowed to refuse
                                      overlongs, surrogates and past U+10FFFF */
    size_t len;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        lo = c == 0xe0 ? 0xa0 : lo;
        hi = c == 0xed ? 0x9f : hi;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        lo = c == 0xf0 ? 0x90 : lo;
        hi = c == 0xf4 ? 0x8f : hi;
    } else {
        return 0;
    }
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return len;
}

int ar_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = ar_utf8_seq_len(s + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

int ar_utf8_append_lossy(struct ar_buf *out, const char *s, size_t n, size_t *replaced)
{
    size_t bad = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t k = ar_utf8_seq_len(s + i, n - i);
        if (k) {
            rc = ar_buf_append(out, s + i, k);
            i += k;
        } else {
            rc = ar_buf_append(out, "\xEF\xBF\xBD", 3);
            bad++;
            i++;
        }
    }
    if (replaced)
        *replaced = bad;
    return rc;
}

int ar_buf_replace_nul(struct ar_buf *b, size_t *replaced)
{
    size_t count = 0;
    for (const char *p = b->data, *end = p + b->len; p && p < end; p++) {
        p = memchr(p, '\0', (size_t)(end - p));
        if (!p)
            break;
        count++;
    }
    if (replaced)
        *replaced = count;
    if (!count)
        return 0;
    /* Each NUL grows by two bytes: the limit grows by exactly that, so text that
     * fitted still fits, and nothing else can slip past it. */
    size_t max = b->max == AR_BUF_UNLIMITED ? AR_BUF_UNLIMITED : b->max + 2 * count;
    struct ar_buf out;
    ar_buf_init(&out, max);
    int rc = ar_buf_reserve(&out, b->len + 2 * count);
    for (size_t i = 0; rc == 0 && i < b->len;) {
        const char *nul = memchr(b->data + i, '\0', b->len - i);
        size_t k = nul ? (size_t)(nul - (b->data + i)) : b->len - i;
        rc = ar_buf_append(&out, b->data + i, k);
        i += k;
        if (rc == 0 && nul) {
            rc = ar_buf_append(&out, "\xEF\xBF\xBD", 3);
            i++;
        }
    }
    if (rc) {
        ar_buf_finish(&out);
        return rc;
    }
    ar_buf_finish(b);
    *b = out;
    return 0;
}
