/* A JSON value as the model wrote it (see doc.h). */
#include "json/doc.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/buf.h"
#include "util/utf8.h"

/* Both gcc and clang read this; clang ignores a comment. */
#define FALLTHROUGH __attribute__((fallthrough))

struct frame {
    json_t *container; /* borrowed: its parent (or the document) holds it */
    char *key;         /* objects: the pending member's key, decoded */
    size_t key_len;
};

struct parser {
    const unsigned char *s;
    size_t n, i;
    struct ar_buf out;     /* the compact text */
    struct ar_buf scratch; /* a decoded string */
    struct frame *stack;
    size_t depth, cap;
    struct ar_json_lexeme *nums;
    size_t nnums, numcap;
    json_t *root;
    int nomem;
    char msg[160];
};

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int fail(struct parser *p, const char *what)
{
    if (!p->msg[0])
        snprintf(p->msg, sizeof(p->msg), "%s at byte %zu", what, p->i);
    return -1;
}

static int nomem(struct parser *p)
{
    p->nomem = 1;
    return -1;
}

static void skip_ws(struct parser *p)
{
    while (p->i < p->n && is_ws(p->s[p->i]))
        p->i++;
}

static int hex4(const unsigned char *h, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = h[k];
        v <<= 4;
        if (is_digit(c))
            v |= (unsigned)(c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            v |= (unsigned)((c | 0x20) - 'a' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
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

/* Decodes the string whose quote is at s[i] into p->scratch and copies its
 * bytes as written to the text. */
static int parse_string(struct parser *p)
{
    const unsigned char *s = p->s;
    size_t start = p->i, i = p->i + 1, run = i;
    struct ar_buf *b = &p->scratch;
    ar_buf_reset(b);
    int rc = 0;
    for (;;) {
        while (i < p->n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\')
            i++;
        if (i >= p->n) {
            p->i = i;
            return fail(p, "unterminated string");
        }
        if (rc == 0)
            rc = ar_buf_append(b, s + run, i - run);
        if (s[i] == '"')
            break;
        if (s[i] < 0x20) {
            p->i = i;
            return fail(p, "control character in a string");
        }
        /* a backslash */
        unsigned char e = i + 1 < p->n ? s[i + 1] : 0;
        char simple = e == '"' || e == '\\' || e == '/' ? (char)e
                      : e == 'b'                        ? '\b'
                      : e == 'f'                        ? '\f'
                      : e == 'n'                        ? '\n'
                      : e == 'r'                        ? '\r'
                      : e == 't'                        ? '\t'
                                                        : 0;
        if (simple) {
            if (rc == 0)
                rc = ar_buf_putc(b, simple);
            i += 2;
        } else if (e == 'u') {
            unsigned cp, lo;
            if (i + 6 > p->n || hex4(s + i + 2, &cp) < 0) {
                p->i = i;
                return fail(p, "invalid \\u escape");
            }
            i += 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                p->i = i - 6;
                return fail(p, "lone low surrogate escape");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (i + 6 > p->n || s[i] != '\\' || s[i + 1] != 'u' || hex4(s + i + 2, &lo) < 0 ||
                    lo < 0xDC00 || lo > 0xDFFF) {
                    p->i = i - 6;
                    return fail(p, "lone high surrogate escape");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
            if (rc == 0)
                rc = put_utf8(b, cp);
        } else {
            p->i = i;
            return fail(p, "invalid escape");
        }
        run = i;
    }
    if (rc < 0)
        return nomem(p);
    if (!ar_utf8_valid(b->data ? b->data : "", b->len)) {
        p->i = start;
        return fail(p, "invalid UTF-8 in a string");
    }
    if (ar_buf_append(&p->out, s + start, i + 1 - start) < 0)
        return nomem(p);
    p->i = i + 1;
    return 0;
}

/* The end of the number at s[i], or 0 when it is not one. */
static size_t number_end(const unsigned char *s, size_t i, size_t n)
{
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || !is_digit(s[i]))
        return 0;
    if (s[i] == '0')
        i++;
    else
        while (i < n && is_digit(s[i]))
            i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !is_digit(s[i]))
            return 0;
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !is_digit(s[i]))
            return 0;
        while (i < n && is_digit(s[i]))
            i++;
    }
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

static json_t *parse_number(struct parser *p)
{
    size_t end = number_end(p->s, p->i, p->n);
    if (!end) {
        fail(p, "invalid number");
        return NULL;
    }
    const unsigned char *lex = p->s + p->i;
    size_t len = end - p->i;
    size_t off = p->out.len;
    if (ar_buf_append(&p->out, lex, len) < 0) {
        nomem(p);
        return NULL;
    }
    p->i = end;
    json_int_t iv;
    if (small_integer(lex, len, &iv)) {
        json_t *v = json_integer(iv);
        if (!v)
            nomem(p);
        return v;
    }
    /* strtod wants a terminated string: the copy just appended is one. */
    double d = strtod(p->out.data + off, NULL);
    if (d > DBL_MAX)
        d = DBL_MAX;
    else if (d < -DBL_MAX)
        d = -DBL_MAX;
    json_t *v = json_real(d);
    if (!v || ar_array_reserve(&p->nums, &p->numcap, p->nnums + 1, sizeof(*p->nums), 16) < 0) {
        json_decref(v);
        nomem(p);
        return NULL;
    }
    p->nums[p->nnums].node = v;
    p->nums[p->nnums].off = off;
    p->nums[p->nnums].len = len;
    p->nnums++;
    return v;
}

static json_t *parse_literal(struct parser *p)
{
    static const char *const lits[] = { "true", "false", "null" };
    for (size_t k = 0; k < 3; k++) {
        size_t len = strlen(lits[k]);
        if (p->n - p->i >= len && memcmp(p->s + p->i, lits[k], len) == 0) {
            if (ar_buf_append(&p->out, lits[k], len) < 0) {
                nomem(p);
                return NULL;
            }
            p->i += len;
            json_t *v = k == 0 ? json_true() : k == 1 ? json_false() : json_null();
            return v;
        }
    }
    fail(p, "invalid literal");
    return NULL;
}

/* Adds v (a new reference, stolen) to the innermost container, or makes it the root. */
static int attach(struct parser *p, json_t *v)
{
    if (!p->depth) {
        p->root = v;
        return 0;
    }
    struct frame *f = &p->stack[p->depth - 1];
    int rc;
    if (json_is_array(f->container)) {
        rc = json_array_append_new(f->container, v);
    } else {
        rc = json_object_setn_new_nocheck(f->container, f->key, f->key_len, v);
        free(f->key);
        f->key = NULL;
    }
    return rc < 0 ? nomem(p) : 0;
}

static int put_byte(struct parser *p, char c)
{
    return ar_buf_putc(&p->out, c) < 0 ? nomem(p) : 0;
}

static int parse(struct parser *p)
{
    enum { VALUE, FIRST_VALUE, KEY, FIRST_KEY, COLON, AFTER } st = VALUE;
    for (;;) {
        skip_ws(p);
        if (p->i >= p->n) {
            if (st == AFTER && !p->depth)
                return 0;
            return fail(p, "unexpected end of text");
        }
        unsigned char c = p->s[p->i];
        if (st == AFTER && !p->depth)
            return fail(p, "text after the value");
        switch (st) {
        case FIRST_KEY:
        case KEY:
            if (c == '}' && st == FIRST_KEY)
                goto close;
            if (c != '"')
                return fail(p, "expected a string key");
            if (parse_string(p) < 0)
                return -1;
            {
                struct frame *f = &p->stack[p->depth - 1];
                f->key_len = p->scratch.len;
                f->key = malloc(f->key_len + 1);
                if (!f->key)
                    return nomem(p);
                memcpy(f->key, p->scratch.data ? p->scratch.data : "", f->key_len);
                f->key[f->key_len] = '\0';
            }
            st = COLON;
            continue;
        case COLON:
            if (c != ':')
                return fail(p, "expected ':'");
            p->i++;
            if (put_byte(p, ':') < 0)
                return -1;
            st = VALUE;
            continue;
        case FIRST_VALUE:
            if (c == ']')
                goto close;
            FALLTHROUGH;
        case VALUE: {
            json_t *v;
            if (c == '{' || c == '[') {
                if (p->depth >= AR_JSON_MAX_DEPTH)
                    return fail(p, "too deeply nested");
                v = c == '{' ? json_object() : json_array();
                if (!v || put_byte(p, (char)c) < 0 ||
                    ar_array_reserve(&p->stack, &p->cap, p->depth + 1, sizeof(*p->stack), 16) < 0) {
                    json_decref(v);
                    return nomem(p);
                }
                if (attach(p, v) < 0)
                    return -1;
                p->stack[p->depth].container = v;
                p->stack[p->depth].key = NULL;
                p->stack[p->depth].key_len = 0;
                p->depth++;
                p->i++;
                st = c == '{' ? FIRST_KEY : FIRST_VALUE;
                continue;
            }
            if (c == '"') {
                if (parse_string(p) < 0)
                    return -1;
                v = json_stringn_nocheck(p->scratch.data ? p->scratch.data : "", p->scratch.len);
                if (!v)
                    return nomem(p);
            } else if (c == '-' || is_digit(c)) {
                v = parse_number(p);
            } else {
                v = parse_literal(p);
            }
            if (!v || attach(p, v) < 0)
                return -1;
            st = AFTER;
            continue;
        }
        case AFTER:
            if (c == ',') {
                p->i++;
                if (put_byte(p, ',') < 0)
                    return -1;
                st = json_is_array(p->stack[p->depth - 1].container) ? VALUE : KEY;
                continue;
            }
            if (c == '}' || c == ']')
                goto close;
            return fail(p, "expected ',' or a closing bracket");
        }
    close:
        if ((c == ']') != json_is_array(p->stack[p->depth - 1].container))
            return fail(p, "mismatched closing bracket");
        p->depth--;
        p->i++;
        if (put_byte(p, (char)c) < 0)
            return -1;
        st = AFTER;
    }
}

static int by_node(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct ar_json_lexeme *)a)->node;
    uintptr_t y = (uintptr_t)((const struct ar_json_lexeme *)b)->node;
    return x < y ? -1 : x > y;
}

int ar_json_doc_parse(struct ar_json_doc *doc, const char *s, size_t n, struct ar_error *err)
{
    struct parser p;
    memset(&p, 0, sizeof(p));
    memset(doc, 0, sizeof(*doc));
    p.s = (const unsigned char *)s;
    p.n = n;
    ar_buf_init(&p.out, AR_BUF_UNLIMITED);
    ar_buf_init(&p.scratch, AR_BUF_UNLIMITED);
    int rc = parse(&p);
    for (size_t k = 0; k < p.depth; k++)
        free(p.stack[k].key);
    free(p.stack);
    ar_buf_finish(&p.scratch);
    if (rc == 0 && !p.out.data && ar_buf_reserve(&p.out, 1) < 0)
        rc = nomem(&p);
    if (rc < 0) {
        json_decref(p.root);
        ar_buf_finish(&p.out);
        free(p.nums);
        if (p.nomem)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        return ar_error_set(err, AR_ENOJSON, NULL, "%s", p.msg);
    }
    if (p.nnums) /* qsort(NULL, 0, …) is undefined: glibc declares the array non-null */
        qsort(p.nums, p.nnums, sizeof(*p.nums), by_node);
    doc->value = p.root;
    doc->text = ar_buf_detach(&p.out, &doc->len);
    doc->nums = p.nums;
    doc->nnums = p.nnums;
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
