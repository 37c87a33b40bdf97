/* Local repair of almost-JSON (see repair.h). */
#include "json/repair.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/scan.h"

static const char *const fix_names[AR_FIX_COUNT] = {
    "trailing_comma",  "comments",     "single_quotes", "curly_quotes",  "unquoted_keys",
    "python_literals", "nan_infinity", "raw_newlines",  "missing_comma", "truncation",
};

const char *ar_json_fix_name(unsigned fix)
{
    for (unsigned i = 0; i < AR_FIX_COUNT; i++)
        if (fix == 1u << i)
            return fix_names[i];
    return NULL;
}

int ar_json_fixes_format(unsigned fixes, const char *sep, struct ar_buf *out)
{
    int first = 1;
    for (unsigned i = 0; i < AR_FIX_COUNT; i++) {
        if (!(fixes & (1u << i)))
            continue;
        int rc = first ? 0 : ar_buf_puts(out, sep);
        if (rc == 0)
            rc = ar_buf_puts(out, fix_names[i]);
        if (rc < 0)
            return rc;
        first = 0;
    }
    return 0;
}

enum { EXPECT_VALUE, EXPECT_KEY, EXPECT_COLON, AFTER_VALUE, DONE };

#define NONE SIZE_MAX

struct repairer {
    const unsigned char *in;
    size_t len;
    struct ar_buf *out;
    unsigned fixes;
    char *stack; /* '{' or '[' per open container */
    size_t depth, cap;
    int state;
    size_t pending_comma; /* output offset of a ',' not yet followed by a value */
    int rc;
};

static void put(struct repairer *r, const void *p, size_t n)
{
    struct ar_buf *b = r->out;
    /* Most writes are a byte or two into room already there: skip the call. */
    if (b->data && b->cap - b->len > n && b->max - b->len >= n) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    if (r->rc == 0)
        r->rc = ar_buf_append(b, p, n);
}

static void putc_(struct repairer *r, char c)
{
    put(r, &c, 1);
}

static int in_object(const struct repairer *r)
{
    return r->depth && r->stack[r->depth - 1] == '{';
}

/* A value or key is starting: settle the comma before it. */
static void value_starts(struct repairer *r)
{
    if (r->state == AFTER_VALUE && r->depth) {
        putc_(r, ',');
        r->fixes |= AR_FIX_MISSING_COMMA;
        r->state = in_object(r) ? EXPECT_KEY : EXPECT_VALUE;
    }
    r->pending_comma = NONE;
}

static void value_ends(struct repairer *r, int was_key)
{
    if (was_key)
        r->state = EXPECT_COLON;
    else
        r->state = r->depth ? AFTER_VALUE : DONE;
}

static void drop_pending_comma(struct repairer *r, unsigned fix)
{
    if (r->pending_comma == NONE || r->rc)
        return;
    struct ar_buf *b = r->out;
    memmove(b->data + r->pending_comma, b->data + r->pending_comma + 1,
            b->len - r->pending_comma - 1);
    b->len--;
    b->data[b->len] = '\0';
    r->pending_comma = NONE;
    r->fixes |= fix;
}

/* The length of the UTF-8 curly quote at in[i] and its kind: 1 for “ ”, 2 for ‘ ’. */
static int curly_at(const struct repairer *r, size_t i, int *kind)
{
    if (i + 2 >= r->len || r->in[i] != 0xE2 || r->in[i + 1] != 0x80)
        return 0;
    unsigned char c = r->in[i + 2];
    if (c == 0x9C || c == 0x9D)
        *kind = 1;
    else if (c == 0x98 || c == 0x99)
        *kind = 2;
    else
        return 0;
    return 3;
}

/* Copies the string whose opening delimiter starts at in[i] as a JSON string. */
static size_t repair_string(struct repairer *r, size_t i, char delim, int curly)
{
    size_t olen = delim ? 1 : 3;
    i += olen;
    putc_(r, '"');
    while (i < r->len) {
        unsigned char c = r->in[i];
        int kind;
        if (delim && c == (unsigned char)delim) {
            putc_(r, '"');
            return i + 1;
        }
        if (!delim && curly_at(r, i, &kind) && kind == curly) {
            putc_(r, '"');
            return i + 3;
        }
        if (c == '\\') {
            if (i + 1 >= r->len) {
                i++; /* a lone backslash cut off at the end is dropped */
                break;
            }
            if (delim == '\'' && r->in[i + 1] == '\'')
                putc_(r, '\'');
            else
                put(r, r->in + i, 2);
            i += 2;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0xE2) {
            /* Plain bytes go out in one run: strings are most of the text. */
            size_t j = i + 1;
            while (j < r->len && r->in[j] >= 0x20 && r->in[j] != '"' && r->in[j] != '\\' &&
                   r->in[j] != 0xE2 && r->in[j] != (unsigned char)delim)
                j++;
            put(r, r->in + i, j - i);
            i = j;
            continue;
        }
        if (c == '"' && delim != '"') {
            put(r, "\\\"", 2);
        } else if (c < 0x20) {
            char esc[8];
            if (c == '\n')
                memcpy(esc, "\\n", 3);
            else if (c == '\r')
                memcpy(esc, "\\r", 3);
            else if (c == '\t')
                memcpy(esc, "\\t", 3);
            else
                snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(r, esc, strlen(esc));
            r->fixes |= AR_FIX_RAW_NEWLINES;
        } else {
            putc_(r, (char)c);
        }
        i++;
    }
    putc_(r, '"');
    r->fixes |= AR_FIX_TRUNCATION;
    return i;
}

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '.' || c == '+' || c == '-';
}

static int is_number(const unsigned char *w, size_t n)
{
    size_t i = 0;
    if (i < n && w[i] == '-')
        i++;
    if (i >= n || w[i] < '0' || w[i] > '9')
        return 0;
    if (w[i] == '0')
        i++;
    else
        while (i < n && w[i] >= '0' && w[i] <= '9')
            i++;
    if (i < n && w[i] == '.') {
        i++;
        if (i >= n || w[i] < '0' || w[i] > '9')
            return 0;
        while (i < n && w[i] >= '0' && w[i] <= '9')
            i++;
    }
    if (i < n && (w[i] == 'e' || w[i] == 'E')) {
        i++;
        if (i < n && (w[i] == '+' || w[i] == '-'))
            i++;
        if (i >= n || w[i] < '0' || w[i] > '9')
            return 0;
        while (i < n && w[i] >= '0' && w[i] <= '9')
            i++;
    }
    return i == n;
}

static int word_is(const unsigned char *w, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(w, s, n) == 0;
}

/* A value word: a JSON literal or number is kept, the rest mapped where a rule says. */
static void repair_value_word(struct repairer *r, const unsigned char *w, size_t n, int at_end)
{
    static const char *const py[][2] = { { "True", "true" },
                                         { "False", "false" },
                                         { "None", "null" } };
    static const char *const nan[] = {
        "NaN", "-NaN", "+NaN", "Infinity", "-Infinity", "+Infinity"
    };
    static const char *const lits[] = { "true", "false", "null" };
    for (size_t k = 0; k < 3; k++)
        if (word_is(w, n, py[k][0])) {
            put(r, py[k][1], strlen(py[k][1]));
            r->fixes |= AR_FIX_PYTHON_LITERALS;
            return;
        }
    for (size_t k = 0; k < sizeof(nan) / sizeof(nan[0]); k++)
        if (word_is(w, n, nan[k])) {
            put(r, "null", 4);
            r->fixes |= AR_FIX_NAN_INFINITY;
            return;
        }
    for (size_t k = 0; k < 3; k++)
        if (word_is(w, n, lits[k]))
            goto copy;
    if (is_number(w, n))
        goto copy;
    if (at_end) {
        /* Cut off inside a literal or a number: complete or trim it. */
        for (size_t k = 0; k < 3; k++)
            if (n < strlen(lits[k]) && memcmp(w, lits[k], n) == 0) {
                put(r, lits[k], strlen(lits[k]));
                r->fixes |= AR_FIX_TRUNCATION;
                return;
            }
        size_t m = n;
        while (m && !is_number(w, m))
            m--;
        if (m && m + 3 > n) {
            put(r, w, m);
            r->fixes |= AR_FIX_TRUNCATION;
            return;
        }
    }
copy:
    put(r, w, n);
}

static int push(struct repairer *r, char c)
{
    if (r->depth == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 64;
        char *n = realloc(r->stack, ncap);
        if (!n)
            return -1;
        r->stack = n;
        r->cap = ncap;
    }
    r->stack[r->depth++] = c;
    return 0;
}

static size_t skip_comment(struct repairer *r, size_t i)
{
    const unsigned char *in = r->in;
    r->fixes |= AR_FIX_COMMENTS;
    if (in[i + 1] == '/') {
        while (i < r->len && in[i] != '\n')
            i++;
        return i; /* the newline is kept as whitespace */
    }
    for (i += 2; i + 1 < r->len; i++)
        if (in[i] == '*' && in[i + 1] == '/')
            return i + 2;
    return r->len;
}

int ar_json_repair(const char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                   struct ar_error *err)
{
    if (ar_json_is_valid(in, len)) {
        int rc = ar_buf_append(out, in, len);
        return rc < 0 ? ar_error_set(err, rc, NULL, "%s", ar_strerror(rc)) : 0;
    }
    struct repairer r = {
        (const unsigned char *)in, len, out, 0, NULL, 0, 0, EXPECT_VALUE, NONE, 0
    };
    size_t i = 0;
    while (i < len && r.rc == 0) {
        unsigned char c = r.in[i];
        int kind;
        if (r.state == DONE) {
            put(&r, in + i, len - i);
            break;
        }
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            putc_(&r, (char)c);
            i++;
        } else if (c == '/' && i + 1 < len && (in[i + 1] == '/' || in[i + 1] == '*')) {
            i = skip_comment(&r, i);
        } else if (c == '{' || c == '[') {
            value_starts(&r);
            if (push(&r, (char)c) < 0) {
                r.rc = AR_ENOMEM;
                break;
            }
            putc_(&r, (char)c);
            r.state = c == '{' ? EXPECT_KEY : EXPECT_VALUE;
            i++;
        } else if (c == '}' || c == ']') {
            if (!r.depth) {
                put(&r, in + i, len - i);
                break;
            }
            drop_pending_comma(&r, AR_FIX_TRAILING_COMMA);
            putc_(&r, r.stack[--r.depth] == '{' ? '}' : ']');
            value_ends(&r, 0);
            i++;
        } else if (c == ',') {
            if (r.state == AFTER_VALUE) {
                r.pending_comma = out->len;
                putc_(&r, ',');
                r.state = in_object(&r) ? EXPECT_KEY : EXPECT_VALUE;
            } else {
                r.fixes |= AR_FIX_TRAILING_COMMA; /* a doubled or leading comma */
            }
            i++;
        } else if (c == ':') {
            putc_(&r, ':');
            if (r.state == EXPECT_COLON)
                r.state = EXPECT_VALUE;
            i++;
        } else if (c == '"' || c == '\'' || curly_at(&r, i, &kind)) {
            int was_key = (r.state == EXPECT_KEY) || (r.state == AFTER_VALUE && in_object(&r));
            value_starts(&r);
            if (c == '"') {
                i = repair_string(&r, i, '"', 0);
            } else if (c == '\'') {
                r.fixes |= AR_FIX_SINGLE_QUOTES;
                i = repair_string(&r, i, '\'', 0);
            } else {
                r.fixes |= AR_FIX_CURLY_QUOTES;
                i = repair_string(&r, i, 0, kind);
            }
            value_ends(&r, was_key);
        } else if (is_word(c)) {
            size_t s = i;
            while (i < len && is_word(r.in[i]))
                i++;
            int was_key = (r.state == EXPECT_KEY) || (r.state == AFTER_VALUE && in_object(&r));
            value_starts(&r);
            if (was_key) {
                putc_(&r, '"');
                put(&r, in + s, i - s);
                putc_(&r, '"');
                r.fixes |= AR_FIX_UNQUOTED_KEYS;
            } else {
                repair_value_word(&r, r.in + s, i - s, i == len);
            }
            value_ends(&r, was_key);
        } else {
            putc_(&r, (char)c);
            i++;
        }
    }
    if (r.rc == 0 && r.depth) {
        /* The text ended inside the value: finish the member, then close. */
        drop_pending_comma(&r, AR_FIX_TRUNCATION);
        if (r.state == EXPECT_COLON)
            put(&r, ":null", 5);
        else if (r.state == EXPECT_VALUE && in_object(&r))
            put(&r, "null", 4);
        while (r.depth)
            putc_(&r, r.stack[--r.depth] == '{' ? '}' : ']');
        r.fixes |= AR_FIX_TRUNCATION;
    }
    free(r.stack);
    if (fixes)
        *fixes |= r.fixes;
    if (r.rc < 0)
        return ar_error_set(err, r.rc, NULL, "%s", ar_strerror(r.rc));
    return 0;
}
