/* The strict JSON recognizer behind extraction and repair (see scan.h). */
#include "json/scan.h"

#include <stdlib.h>
#include <string.h>

/* Both gcc and clang read this; clang ignores a comment. */
#define FALLTHROUGH __attribute__((fallthrough))

enum { ST_VALUE, ST_AFTER, ST_OBJ_FIRST, ST_KEY, ST_COLON, ST_ARR_FIRST };

/* Byte classes for the string fast path: 1 for bytes that end a run of plain
 * string characters (quote, backslash, control characters). */
static const unsigned char str_special[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, ['\\'] = 1,
};

void ar_json_scanner_init(struct ar_json_scanner *sc, int want)
{
    memset(sc, 0, sizeof(*sc));
    sc->want = want;
}

void ar_json_scanner_finish(struct ar_json_scanner *sc)
{
    free(sc->stack);
    free(sc->subs);
    memset(sc, 0, sizeof(*sc));
}

static int push(struct ar_json_scanner *sc, size_t v)
{
    if (sc->depth == sc->cap) {
        size_t ncap = sc->cap ? sc->cap * 2 : 64;
        size_t *n = realloc(sc->stack, ncap * sizeof(*n));
        if (!n)
            return -1;
        sc->stack = n;
        sc->cap = ncap;
    }
    sc->stack[sc->depth++] = v;
    return 0;
}

/* Records [start, end) as a complete wanted sub-value, replacing those it encloses
 * (inner containers complete first), so the list stays maximal and disjoint. */
static int record_sub(struct ar_json_scanner *sc, size_t start, size_t end)
{
    while (sc->nsubs && sc->subs[sc->nsubs - 1].start >= start)
        sc->nsubs--;
    if (sc->nsubs == sc->subcap) {
        size_t ncap = sc->subcap ? sc->subcap * 2 : 16;
        struct ar_json_span *n = realloc(sc->subs, ncap * sizeof(*n));
        if (!n)
            return -1;
        sc->subs = n;
        sc->subcap = ncap;
    }
    sc->subs[sc->nsubs].start = start;
    sc->subs[sc->nsubs].end = end;
    sc->nsubs++;
    return 0;
}

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Scans the string whose opening quote is at s[i]. Returns AR_SCAN_* and sets
 * *next to the byte after the closing quote, the offending byte or hi. */
static int scan_string(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    i++;
    for (;;) {
        while (i < hi && !str_special[s[i]])
            i++;
        if (i >= hi)
            break;
        if (s[i] == '"') {
            *next = i + 1;
            return AR_SCAN_COMPLETE;
        }
        if (s[i] != '\\') {
            *next = i;
            return AR_SCAN_FAIL;
        }
        if (i + 1 >= hi)
            break;
        unsigned char e = s[i + 1];
        if (e == 'u') {
            for (size_t k = 2; k < 6; k++) {
                if (i + k >= hi) {
                    *next = hi;
                    return AR_SCAN_EOF;
                }
                if (!is_hex(s[i + k])) {
                    *next = i + k;
                    return AR_SCAN_FAIL;
                }
            }
            i += 6;
        } else if (strchr("\"\\/bfnrt", e) && e) {
            i += 2;
        } else {
            *next = i + 1;
            return AR_SCAN_FAIL;
        }
    }
    *next = hi;
    return AR_SCAN_EOF;
}

static int scan_number(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    if (s[i] == '-')
        i++;
    if (i >= hi)
        goto eof;
    if (s[i] == '0') {
        i++;
    } else if (is_digit(s[i])) {
        while (i < hi && is_digit(s[i]))
            i++;
    } else {
        *next = i;
        return AR_SCAN_FAIL;
    }
    if (i < hi && s[i] == '.') {
        i++;
        if (i >= hi)
            goto eof;
        if (!is_digit(s[i])) {
            *next = i;
            return AR_SCAN_FAIL;
        }
        while (i < hi && is_digit(s[i]))
            i++;
    }
    if (i < hi && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < hi && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= hi)
            goto eof;
        if (!is_digit(s[i])) {
            *next = i;
            return AR_SCAN_FAIL;
        }
        while (i < hi && is_digit(s[i]))
            i++;
    }
    *next = i;
    return AR_SCAN_COMPLETE;
eof:
    *next = hi;
    return AR_SCAN_EOF;
}

static int scan_literal(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    const char *lit = s[i] == 't' ? "true" : s[i] == 'f' ? "false" : "null";
    size_t n = strlen(lit);
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

int ar_json_scan(struct ar_json_scanner *sc, const char *text, size_t start, size_t hi,
                 size_t *stop)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = start;
    int st = ST_VALUE;
    int rc;
    size_t next;

    sc->depth = 0;
    sc->nsubs = 0;
    sc->saw_want = 0;
    for (;;) {
        while (i < hi && is_ws(s[i]))
            i++;
        if (i >= hi) {
            *stop = hi;
            return AR_SCAN_EOF;
        }
        unsigned char c = s[i];
        switch (st) {
        case ST_OBJ_FIRST:
            if (c == '}')
                goto close;
            FALLTHROUGH;
        case ST_KEY:
            if (c != '"')
                goto fail;
            rc = scan_string(s, i, hi, &next);
            if (rc != AR_SCAN_COMPLETE)
                goto sub_status;
            i = next;
            st = ST_COLON;
            continue;
        case ST_COLON:
            if (c != ':')
                goto fail;
            i++;
            st = ST_VALUE;
            continue;
        case ST_ARR_FIRST:
            if (c == ']')
                goto close;
            st = ST_VALUE;
            FALLTHROUGH;
        case ST_VALUE:
            if (c == '{' || c == '[') {
                int kind = c == '{' ? AR_KIND_OBJECT : AR_KIND_ARRAY;
                if (push(sc, i * 2 + (c == '[')) < 0)
                    return AR_SCAN_NOMEM;
                if (kind & sc->want)
                    sc->saw_want = 1;
                i++;
                st = c == '{' ? ST_OBJ_FIRST : ST_ARR_FIRST;
                continue;
            }
            if (sc->depth == 0)
                goto fail; /* only containers start a scan */
            if (c == '"')
                rc = scan_string(s, i, hi, &next);
            else if (c == '-' || is_digit(c))
                rc = scan_number(s, i, hi, &next);
            else if (c == 't' || c == 'f' || c == 'n')
                rc = scan_literal(s, i, hi, &next);
            else
                goto fail;
            if (rc != AR_SCAN_COMPLETE)
                goto sub_status;
            i = next;
            st = ST_AFTER;
            continue;
        case ST_AFTER:
            if (c == ',') {
                i++;
                st = (sc->stack[sc->depth - 1] & 1) ? ST_VALUE : ST_KEY;
                continue;
            }
            if (c == '}' || c == ']')
                goto close;
            goto fail;
        }
    close : {
        size_t top = sc->stack[sc->depth - 1];
        int is_array = (int)(top & 1);
        if ((c == ']') != is_array)
            goto fail;
        sc->depth--;
        i++;
        if (sc->depth == 0) {
            *stop = i;
            return AR_SCAN_COMPLETE;
        }
        if ((is_array ? AR_KIND_ARRAY : AR_KIND_OBJECT) & sc->want)
            if (record_sub(sc, top / 2, i) < 0)
                return AR_SCAN_NOMEM;
        st = ST_AFTER;
        continue;
    }
    }
sub_status:
    *stop = next;
    return rc;
fail:
    *stop = i;
    return AR_SCAN_FAIL;
}

int ar_json_is_valid(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && is_ws((unsigned char)s[i]))
        i++;
    if (i >= len || (s[i] != '{' && s[i] != '['))
        return 0;
    struct ar_json_scanner sc;
    ar_json_scanner_init(&sc, 0);
    size_t stop;
    int rc = ar_json_scan(&sc, s, i, len, &stop);
    ar_json_scanner_finish(&sc);
    if (rc != AR_SCAN_COMPLETE)
        return 0;
    while (stop < len && is_ws((unsigned char)s[stop]))
        stop++;
    return stop == len;
}
