/*
 * Numbers decided exactly, on their decimal spellings (the model's and the
 * schema's): what a number is written as is what it is, so 1.1 >= 1.1, 1e-400 is
 * not 0, and 0.0075 is a multiple of 0.0001. Comparison is doc.h's
 * ar_json_number_cmp(); this file adds multiples and the spelling of a number that
 * has none recorded.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/internal.h"

__extension__ typedef unsigned __int128 u128;

/* A spelling as its significant digits and the power of ten of the last one:
 * value = digits * 10^exp. `digits` points into `buf` (NUL-free, no leading or
 * trailing zero); `count` is 0 for zero. */
struct dec {
    char *buf;
    const char *digits;
    size_t count;
    long long exp;
};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int dec_read(struct dec *d, const char *s, size_t n)
{
    memset(d, 0, sizeof(*d));
    d->buf = malloc(n + 1);
    if (!d->buf)
        return -1;
    size_t i = 0, total = 0, int_digits = 0;
    int in_frac = 0;
    if (i < n && s[i] == '-')
        i++;
    for (; i < n && (is_digit(s[i]) || s[i] == '.'); i++) {
        if (s[i] == '.') {
            in_frac = 1;
            continue;
        }
        d->buf[total++] = s[i];
        if (!in_frac)
            int_digits++;
    }
    long long e = 0;
    int eneg = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        for (; i < n && is_digit(s[i]); i++)
            if (e < 1000000000000000LL)
                e = e * 10 + (s[i] - '0');
    }
    if (eneg)
        e = -e;
    size_t first = 0, last = total;
    while (first < total && d->buf[first] == '0')
        first++;
    while (last > first && d->buf[last - 1] == '0')
        last--;
    d->digits = d->buf + first;
    d->count = last - first;
    /* the last significant digit stands at 10^(int_digits - last) */
    d->exp = (long long)int_digits - (long long)last + e;
    return 0;
}

size_t ar_number_digits(const char *s, size_t n)
{
    struct dec d;
    if (dec_read(&d, s, n) < 0)
        return SIZE_MAX;
    free(d.buf);
    return d.count;
}

static uint64_t pow10_mod(long long e, uint64_t m)
{
    u128 result = 1 % m, base = 10 % m;
    while (e > 0) {
        if (e & 1)
            result = result * base % m;
        base = base * base % m;
        e >>= 1;
    }
    return (uint64_t)result;
}

int ar_number_is_multiple(const char *a, size_t an, const char *d, size_t dn)
{
    struct dec x, y;
    int result = 0;
    if (dec_read(&x, a, an) < 0)
        return 0;
    if (dec_read(&y, d, dn) < 0) {
        free(x.buf);
        return 0;
    }
    /* x.digits * 10^x.exp / (y.digits * 10^y.exp): the digits carry no trailing zero,
     * so a negative power of ten left over can never divide out. */
    long long shift = x.exp - y.exp;
    if (x.count == 0) {
        result = 1; /* 0 is a multiple of everything */
    } else if (y.count > 0 && y.count <= 18 && shift >= 0) {
        uint64_t m = 0;
        for (size_t k = 0; k < y.count; k++)
            m = m * 10 + (uint64_t)(y.digits[k] - '0');
        u128 r = 0;
        for (size_t k = 0; k < x.count; k++)
            r = (r * 10 + (u128)(x.digits[k] - '0')) % m;
        r = r * pow10_mod(shift, m) % m;
        result = r == 0;
    }
    free(x.buf);
    free(y.buf);
    return result;
}

const char *ar_contract_number_text(const struct ar_json_doc *doc, json_t *v, char *buf,
                                    size_t *len)
{
    const char *lex = ar_json_doc_lexeme(doc, v, len);
    if (lex)
        return lex;
    /* Written here, then copied: GCC's -Wformat-truncation under the sanitizers takes the
     * caller's buf for one that may be NULL. */
    char text[40];
    int n;
    if (json_is_integer(v)) {
        n = snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else {
        /* The shortest of 15, 16 and 17 significant digits that reads back as the double. */
        double x = json_number_value(v);
        for (int digits = 15;; digits++) {
            n = snprintf(text, sizeof(text), "%.*g", digits, x);
            if (digits == 17 || strtod(text, NULL) == x)
                break;
        }
    }
    *len = n < 0 ? 0 : (size_t)n;
    memcpy(buf, text, *len + 1);
    return buf;
}

uint64_t ar_number_hash(const char *s, size_t n)
{
    struct dec d;
    if (dec_read(&d, s, n) < 0)
        return 0;
    /* FNV-1a over the sign, the significant digits and the exponent: equal numbers
     * (1, 1.0, 10e-1) hash alike, as their spellings compare equal. */
    uint64_t h = 1469598103934665603ull;
    int neg = d.count && n && s[0] == '-';
    h = (h ^ (uint64_t)neg) * 1099511628211ull;
    for (size_t k = 0; k < d.count; k++)
        h = (h ^ (unsigned char)d.digits[k]) * 1099511628211ull;
    if (d.count)
        h = (h ^ (uint64_t)d.exp) * 1099511628211ull;
    free(d.buf);
    return h;
}
