/* A JSON value as the model wrote it (see doc.h). */
#include "json/doc.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* ---- the value, built from valid compact text ---------------------------------------- */

struct frame {
    json_t *container; /* borrowed: its parent (or the document) holds it */
    char *key;         /* objects: the pending member's key, decoded */
    size_t key_len;
};

struct builder {
    const unsigned char *s; /* valid compact JSON */
    size_t n, i;
    struct ar_buf scratch; /* a decoded string */
    struct frame *stack;
    size_t depth, cap;
    struct ar_json_lexeme *nums;
    size_t nnums, numcap;
    json_t *root;
};

static unsigned hex4(const unsigned char *h)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++)
        v = v * 16 + (unsigned)(is_digit(h[k]) ? h[k] - '0' : (h[k] | 0x20) - 'a' + 10);
    return v;
}

static int put_utf8(struct ar_buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return ar_buf_append(b, u, n);
}

/* Decodes the string whose quote is at s[i] into b->scratch. */
static int decode_string(struct builder *b)
{
    const unsigned char *s = b->s;
    size_t i = b->i + 1;
    int rc = 0;
    ar_buf_reset(&b->scratch);
    for (;;) {
        size_t run = i;
        i = ar_json_string_stop((const char *)s, i, b->n);
        if (rc == 0)
            rc = ar_buf_append(&b->scratch, s + run, i - run);
        if (s[i] == '"')
            break;
        unsigned char e = s[i + 1];
        char simple = e == 'b'   ? '\b'
                      : e == 'f' ? '\f'
                      : e == 'n' ? '\n'
                      : e == 'r' ? '\r'
                      : e == 't' ? '\t'
                                 : (char)e;
        if (e != 'u') {
            if (rc == 0)
                rc = ar_buf_putc(&b->scratch, simple);
            i += 2;
            continue;
        }
        unsigned cp = hex4(s + i + 2);
        i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* the scan saw its low half */
            cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(s + i + 2) - 0xDC00);
            i += 6;
        }
        if (rc == 0)
            rc = put_utf8(&b->scratch, cp);
    }
    b->i = i + 1;
    return rc;
}

static size_t number_end(const unsigned char *s, size_t i, size_t n)
{
    while (i < n && (is_digit(s[i]) || s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == 'e' ||
                     s[i] == 'E'))
        i++;
    return i;
}

/* An integer spelled s[0..n) that fits json_int_t, into *out. "-0" is not one:
 * jansson's 0 would lose its sign. */
static int small_integer(const unsigned char *s, size_t n, json_int_t *out)
{
    size_t i = s[0] == '-';
    if (n - i == 1 && s[i] == '0' && i)
        return 0;
    uint64_t v = 0, limit = i ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (size_t k = i; k < n; k++) {
        if (!is_digit(s[k]))
            return 0;
        unsigned dgt = (unsigned)(s[k] - '0');
        if (v > (limit - dgt) / 10)
            return 0;
        v = v * 10 + dgt;
    }
    if (sizeof(json_int_t) < sizeof(int64_t) && v > (uint64_t)LONG_MAX)
        return 0;
    *out = i ? (json_int_t)(0 - v) : (json_int_t)v;
    return 1;
}

static json_t *make_number(struct builder *b)
{
    size_t off = b->i, end = number_end(b->s, off, b->n), len = end - off;
    const unsigned char *lex = b->s + off;
    b->i = end;
    json_int_t iv;
    if (small_integer(lex, len, &iv))
        return json_integer(iv);
    /* strtod stops at the ',', '}' or ']' after the number (or the text's NUL). */
    double d = strtod((const char *)lex, NULL);
    if (d > DBL_MAX)
        d = DBL_MAX;
    else if (d < -DBL_MAX)
        d = -DBL_MAX;
    json_t *v = json_real(d);
    if (!v || ar_array_reserve(&b->nums, &b->numcap, b->nnums + 1, sizeof(*b->nums), 16) < 0) {
        json_decref(v);
        return NULL;
    }
    b->nums[b->nnums].node = v;
    b->nums[b->nnums].off = off;
    b->nums[b->nnums].len = len;
    b->nnums++;
    return v;
}

/* Adds v (a new reference, stolen) to the innermost container, or makes it the root. */
static int attach(struct builder *b, json_t *v)
{
    if (!v)
        return -1;
    if (!b->depth) {
        b->root = v;
        return 0;
    }
    struct frame *f = &b->stack[b->depth - 1];
    int rc;
    if (json_is_array(f->container)) {
        rc = json_array_append_new(f->container, v);
    } else {
        rc = json_object_setn_new_nocheck(f->container, f->key, f->key_len, v);
        free(f->key);
        f->key = NULL;
    }
    return rc;
}

/* Builds b->root from the valid compact text. Returns 0 or -1 (out of memory). */
static int build(struct builder *b)
{
    while (b->i < b->n) {
        unsigned char c = b->s[b->i];
        json_t *v;
        if (c == '{' || c == '[') {
            v = c == '{' ? json_object() : json_array();
            if (!v ||
                ar_array_reserve(&b->stack, &b->cap, b->depth + 1, sizeof(*b->stack), 16) < 0) {
                json_decref(v);
                return -1;
            }
            if (attach(b, v) < 0)
                return -1;
            b->stack[b->depth++] = (struct frame){ v, NULL, 0 };
            b->i++;
            continue;
        }
        if (c == '}' || c == ']') {
            b->depth--;
            b->i++;
            continue;
        }
        if (c == ',' || c == ':') {
            b->i++;
            continue;
        }
        if (c == '"') {
            if (decode_string(b) < 0)
                return -1;
            const char *d = b->scratch.data ? b->scratch.data : "";
            struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
            if (f && json_is_object(f->container) && !f->key) {
                f->key = malloc(b->scratch.len + 1);
                if (!f->key)
                    return -1;
                memcpy(f->key, d, b->scratch.len);
                f->key[b->scratch.len] = '\0';
                f->key_len = b->scratch.len;
                continue;
            }
            v = json_stringn_nocheck(d, b->scratch.len);
        } else if (c == 't' || c == 'f' || c == 'n') {
            v = c == 't' ? json_true() : c == 'f' ? json_false() : json_null();
            b->i += c == 'f' ? 5 : 4;
        } else {
            v = make_number(b);
        }
        if (attach(b, v) < 0)
            return -1;
    }
    return 0;
}

static int by_node(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct ar_json_lexeme *)a)->node;
    uintptr_t y = (uintptr_t)((const struct ar_json_lexeme *)b)->node;
    return x < y ? -1 : x > y;
}

int ar_json_doc_from_valid(struct ar_json_doc *doc, const char *s, size_t n, int with_value)
{
    struct ar_json_compactor st = AR_JSON_COMPACTOR_INIT;
    struct ar_buf out;
    memset(doc, 0, sizeof(*doc));
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    if (ar_buf_reserve(&out, n) < 0 || ar_json_compact(&st, s, n, &out) < 0) {
        ar_buf_finish(&out);
        return AR_ENOMEM;
    }
    doc->text = ar_buf_detach(&out, &doc->len);
    if (!with_value)
        return 0;
    struct builder b;
    memset(&b, 0, sizeof(b));
    b.s = (const unsigned char *)doc->text;
    b.n = doc->len;
    ar_buf_init(&b.scratch, AR_BUF_UNLIMITED);
    int rc = build(&b);
    for (size_t k = 0; k < b.depth; k++)
        free(b.stack[k].key);
    free(b.stack);
    ar_buf_finish(&b.scratch);
    if (rc < 0) {
        json_decref(b.root);
        free(b.nums);
        ar_json_doc_finish(doc);
        return AR_ENOMEM;
    }
    ar_sort(b.nums, b.nnums, sizeof(*b.nums), by_node);
    doc->value = b.root;
    doc->nums = b.nums;
    doc->nnums = b.nnums;
    return 0;
}

int ar_json_doc_parse(struct ar_json_doc *doc, const char *s, size_t n, struct ar_error *err)
{
    memset(doc, 0, sizeof(*doc));
    size_t i = ar_json_skip_ws(s, 0, n), stop = n;
    if (i >= n)
        return ar_error_set(err, AR_ENOJSON, NULL, "unexpected end of text at byte %zu", n);
    struct ar_json_scanner sc;
    ar_json_scanner_init(&sc, 0, 1);
    int rc = ar_json_scan(&sc, s, i, n, &stop);
    const char *why = sc.why;
    size_t at = sc.why_at;
    ar_json_scanner_finish(&sc);
    if (rc == AR_SCAN_NOMEM)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (rc == AR_SCAN_EOF)
        return ar_error_set(err, AR_ENOJSON, NULL, "unexpected end of text at byte %zu", n);
    if (rc != AR_SCAN_COMPLETE)
        return ar_error_set(err, AR_ENOJSON, NULL, "%s at byte %zu", why, at);
    size_t end = ar_json_skip_ws(s, stop, n);
    if (end < n)
        return ar_error_set(err, AR_ENOJSON, NULL, "text after the value at byte %zu", end);
    if (ar_json_doc_from_valid(doc, s + i, stop - i, 1) < 0)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    return 0;
}

void ar_json_doc_finish(struct ar_json_doc *doc)
{
    json_decref(doc->value);
    free(doc->text);
    free(doc->nums);
    memset(doc, 0, sizeof(*doc));
}

const char *ar_json_doc_lexeme(const struct ar_json_doc *doc, const json_t *num, size_t *len)
{
    if (!doc || !doc->nnums || !json_is_real(num))
        return NULL;
    struct ar_json_lexeme key = { num, 0, 0 };
    const struct ar_json_lexeme *hit =
        bsearch(&key, doc->nums, doc->nnums, sizeof(*doc->nums), by_node);
    if (!hit)
        return NULL;
    *len = hit->len;
    return doc->text + hit->off;
}

/* ---- exact comparison ---------------------------------------------------------------- */

/* A number as sign, significant digits d1 d2 … dk (no leading or trailing
 * zeros) and exponent e: the value is 0.d1d2…dk * 10^e. k == 0 for zero. */
struct decimal {
    int neg;
    const char *int_part, *frac_part; /* digit runs of the spelling */
    size_t int_len, frac_len;
    size_t first, count; /* significant digits: indexes into int_part ++ frac_part */
    long long exp;
};

static char digit_at(const struct decimal *d, size_t k)
{
    k += d->first;
    return k < d->int_len ? d->int_part[k] : d->frac_part[k - d->int_len];
}

static void decimal_read(struct decimal *d, const char *s, size_t n)
{
    size_t i = 0;
    memset(d, 0, sizeof(*d));
    if (i < n && s[i] == '-') {
        d->neg = 1;
        i++;
    }
    d->int_part = s + i;
    while (i < n && is_digit((unsigned char)s[i]))
        i++, d->int_len++;
    d->frac_part = s + i;
    if (i < n && s[i] == '.') {
        i++;
        d->frac_part = s + i;
        while (i < n && is_digit((unsigned char)s[i]))
            i++, d->frac_len++;
    }
    long long e = 0;
    int eneg = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        /* Saturate: any exponent past 10^15 dwarfs every spelling's length. */
        while (i < n && is_digit((unsigned char)s[i])) {
            if (e < 1000000000000000LL)
                e = e * 10 + (s[i] - '0');
            i++;
        }
    }
    if (eneg)
        e = -e;
    size_t total = d->int_len + d->frac_len, first = 0;
    while (first < total && digit_at(d, first) == '0')
        first++;
    size_t last = total;
    while (last > first && digit_at(d, last - 1) == '0')
        last--;
    d->first = first;
    d->count = last - first;
    d->exp = (long long)d->int_len - (long long)first + e;
}

int ar_json_number_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    struct decimal x, y;
    decimal_read(&x, a, an);
    decimal_read(&y, b, bn);
    if (!x.count || !y.count) {
        if (!x.count && !y.count)
            return 0;
        if (!x.count)
            return y.neg ? 1 : -1;
        return x.neg ? -1 : 1;
    }
    if (x.neg != y.neg)
        return x.neg ? -1 : 1;
    int sign = x.neg ? -1 : 1;
    if (x.exp != y.exp)
        return x.exp < y.exp ? -sign : sign;
    size_t k = 0;
    for (; k < x.count && k < y.count; k++) {
        char cx = digit_at(&x, k), cy = digit_at(&y, k);
        if (cx != cy)
            return cx < cy ? -sign : sign;
    }
    if (x.count == y.count)
        return 0;
    return x.count < y.count ? -sign : sign;
}

size_t ar_json_number_exact(const json_t *v, char *dst)
{
    int n;
    if (json_is_integer(v))
        n = snprintf(dst, AR_JSON_NUMBER_EXACT, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else /* a double has at most 767 significant decimal digits */
        n = snprintf(dst, AR_JSON_NUMBER_EXACT, "%.770e", json_number_value(v));
    return n < 0 ? 0 : (size_t)n;
}

int ar_json_number_is_integral(const char *s, size_t n)
{
    struct decimal d;
    decimal_read(&d, s, n);
    return d.count == 0 || (long long)d.count <= d.exp;
}
