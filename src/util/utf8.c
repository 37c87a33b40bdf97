/* UTF-8 validation and lossy copying. */
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
