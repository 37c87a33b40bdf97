/*
 * The strict recognizer as it was before issue 32's speed work (main at
 * 89eeffe, src/json/scan.c up to ar_json_scan()), kept for fuzz_scan.c to
 * hold the present one to: on every input both must say the same. Test-only;
 * do not change it to follow the present scanner.
 */
#include <stdlib.h>
#include <string.h>

#include "json/bytes.h"
#include "json/scan.h"
#include "util/utf8.h"

int ar_json_scan_ref(struct ar_json_scanner *sc, const char *text, size_t start, size_t hi,
                     size_t *stop);
int ar_json_scan_ref_number(const unsigned char *s, size_t i, size_t hi, size_t *next);
int ar_json_scan_ref_literal(const unsigned char *s, size_t i, size_t hi, size_t *next);

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* The first reason a syntactically whole value is still refused. */
struct invalid {
    const char *why;
    size_t at;
};

static void note(struct invalid *inv, const char *why, size_t at)
{
    if (!inv->why) {
        inv->why = why;
        inv->at = at;
    }
}

/* The four hex digits of \uXXXX at s[i..i+4): AR_SCAN_COMPLETE with *cp, or
 * FAIL / EOF with *next at the offending byte / hi. */
static int hex4(const unsigned char *s, size_t i, size_t hi, unsigned *cp, size_t *next)
{
    unsigned v = 0;
    for (size_t k = 0; k < 4; k++) {
        if (i + k >= hi) {
            *next = hi;
            return AR_SCAN_EOF;
        }
        unsigned char c = s[i + k];
        if (!is_hex(c)) {
            *next = i + k;
            return AR_SCAN_FAIL;
        }
        v = v * 16 + (unsigned)(is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    *cp = v;
    return AR_SCAN_COMPLETE;
}

/* The two-byte escapes (\" \\ \/ \b \f \n \r \t): the most frequent stop in a long string. */
static const unsigned char simple_escape[256] = {
    ['"'] = 1, ['\\'] = 1, ['/'] = 1, ['b'] = 1, ['f'] = 1, ['n'] = 1, ['r'] = 1, ['t'] = 1,
};

/* The first byte of s[i..hi) that ends a run of plain string bytes and
 * two-byte escapes, or hi: the escapes of a block are passed over from its
 * mask, without loading it again after each. */
static size_t skip_plain(const unsigned char *s, size_t i, size_t hi)
{
#if AR_BLOCK
    while (i + AR_BLOCK <= hi) {
        ar_block v = ar_block_load(s + i);
        ar_block_mask m =
            ar_block_bits(ar_block_or(ar_block_or(ar_block_eq(v, '"'), ar_block_eq(v, '\\')),
                                      ar_block_or(ar_block_le(v, 0x1F), v)));
        size_t past = AR_BLOCK; /* where the next block starts */
        while (m) {
            size_t k = ar_block_first(m), j = i + k;
            if (s[j] != '\\' || j + 1 >= hi || !simple_escape[s[j + 1]])
                return j;
            past = k + 2 > AR_BLOCK ? k + 2 : AR_BLOCK;
            m = ar_block_after(m, k + 1);
        }
        i += past;
    }
#endif
    while (i < hi) {
        if (!ar_byte_string_special(s[i]))
            i++;
        else if (s[i] == '\\' && i + 1 < hi && simple_escape[s[i + 1]])
            i += 2;
        else
            break;
    }
    return i < hi ? i : hi;
}

/* The rest of a string from s[i], a byte that ends a run of plain ones (see
 * scan_string()). */
static __attribute__((noinline)) int string_rest(const unsigned char *s, size_t i, size_t hi,
                                                 size_t *next, const char **why,
                                                 struct invalid *inv)
{
    for (;;) {
        i = skip_plain(s, i, hi);
        if (i >= hi)
            break;
        unsigned char c = s[i];
        if (c == '"') {
            *next = i + 1;
            return AR_SCAN_COMPLETE;
        }
        if (c >= 0x80) {
            size_t k = ar_utf8_seq_len((const char *)s + i, hi - i);
            if (!k) {
                note(inv, "invalid UTF-8 in a string", i);
                k = 1;
            }
            i += k;
            continue;
        }
        if (c != '\\') {
            *why = "control character in a string";
            *next = i;
            return AR_SCAN_FAIL;
        }
        if (i + 1 >= hi)
            break;
        unsigned char e = s[i + 1];
        if (e != 'u') {
            if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' &&
                e != 't') {
                *why = "invalid escape";
                *next = i + 1;
                return AR_SCAN_FAIL;
            }
            i += 2;
            continue;
        }
        unsigned cp, lo;
        int rc = hex4(s, i + 2, hi, &cp, next);
        if (rc != AR_SCAN_COMPLETE) {
            *why = "invalid \\u escape";
            return rc;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            note(inv, "lone low surrogate escape", i);
        } else if (cp >= 0xD800 && cp <= 0xDBFF) {
            /* A pair needs its low half at once; one cut off by hi ends the
             * string as EOF below, which outranks the note. */
            size_t j = i + 6;
            if (j + 1 < hi && s[j] == '\\' && s[j + 1] == 'u' &&
                hex4(s, j + 2, hi, &lo, next) == AR_SCAN_COMPLETE && lo >= 0xDC00 && lo <= 0xDFFF)
                i += 6;
            else
                note(inv, "lone high surrogate escape", i);
        }
        i += 6;
    }
    *next = hi;
    return AR_SCAN_EOF;
}

/*
 * The string whose opening quote is at s[i]: most are plain to their closing
 * quote, and `i` moves past it. Otherwise string_rest() reads on; rc is set
 * to what it says, and *rest to the byte after the string, the offending
 * byte or hi (a separate variable, so that `i` can stay in a register).
 */
#define SCAN_STRING()                                             \
    do {                                                          \
        int quote_;                                               \
        size_t end_ = ar_bytes_string_end(s, i + 1, hi, &quote_); \
        if (quote_) {                                             \
            i = end_ + 1;                                         \
            break;                                                \
        }                                                         \
        rc = string_rest(s, end_, hi, &rest, &why, &inv);         \
        if (rc != AR_SCAN_COMPLETE) {                             \
            next = rest;                                          \
            goto sub;                                             \
        }                                                         \
        i = rest;                                                 \
    } while (0)

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
        goto fail;
    }
    if (i < hi && s[i] == '.') {
        i++;
        if (i >= hi)
            goto eof;
        if (!is_digit(s[i]))
            goto fail;
        while (i < hi && is_digit(s[i]))
            i++;
    }
    if (i < hi && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < hi && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= hi)
            goto eof;
        if (!is_digit(s[i]))
            goto fail;
        while (i < hi && is_digit(s[i]))
            i++;
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

static int scan_literal(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    const char *lit = s[i] == 't' ? "true" : s[i] == 'f' ? "false" : "null";
    size_t n = s[i] == 'f' ? 5 : 4;
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

/* Whitespace between tokens: most tokens have none before them, or one space. */
#define SKIP_WS()                                            \
    do {                                                     \
        if (i < hi && s[i] <= ' ') {                         \
            spaced = 1;                                      \
            if (s[i] == ' ' && i + 1 < hi && s[i + 1] > ' ') \
                i++;                                         \
            else                                             \
                i = ar_bytes_skip_ws(s, i, hi);              \
        }                                                    \
        if (i >= hi)                                         \
            goto eof;                                        \
    } while (0)

/* Makes room in sc->kinds for a container at `depth`. */
static int grow(struct ar_json_scanner *sc, size_t depth)
{
    if (depth / 64 < sc->words)
        return 0;
    size_t n = sc->words ? sc->words * 2 : 4;
    uint64_t *k = realloc(sc->kinds, n * sizeof(*k));
    if (!k)
        return -1;
    sc->kinds = k;
    sc->words = n;
    return 0;
}

static int kind_at(const struct ar_json_scanner *sc, size_t d)
{
    return (int)((sc->kinds[d / 64] >> (d % 64)) & 1);
}

int ar_json_scan_ref(struct ar_json_scanner *sc, const char *text, size_t start, size_t hi,
                     size_t *stop)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = start, next = start, rest = start, depth = 0;
    int rc, spaced = 0, array = 0; /* array: the innermost container is one */
    unsigned char c;
    const char *why = NULL;
    struct invalid inv = { NULL, 0 };

    sc->saw_want = 0;
    sc->why = NULL;
    sc->why_at = 0;
    sc->fail_in_string = 0;

value:
    SKIP_WS();
    c = s[i];
    if (c == '"') {
        if (!depth && !sc->scalars)
            goto not_a_container;
        SCAN_STRING();
        goto after;
    } else if (c == '{' || c == '[') {
        array = c == '[';
        if (depth >= AR_JSON_MAX_DEPTH)
            note(&inv, "too deeply nested", i);
        if (grow(sc, depth) < 0)
            return AR_SCAN_NOMEM;
        uint64_t bit = (uint64_t)1 << (depth % 64);
        sc->kinds[depth / 64] = array ? sc->kinds[depth / 64] | bit : sc->kinds[depth / 64] & ~bit;
        depth++;
        if ((array ? AR_KIND_ARRAY : AR_KIND_OBJECT) & sc->want)
            sc->saw_want = 1;
        i++;
        SKIP_WS();
        if (s[i] == (array ? ']' : '}')) {
            i++;
            goto closed;
        }
        if (array)
            goto value;
        goto key;
    } else if (!depth && !sc->scalars) {
        goto not_a_container;
    } else if (c == '-' || is_digit(c)) {
        why = "invalid number";
        rc = scan_number(s, i, hi, &next);
    } else if (c == 't' || c == 'f' || c == 'n') {
        why = "invalid literal";
        rc = scan_literal(s, i, hi, &next);
    } else {
        why = "expected a value";
        goto fail;
    }
    if (rc != AR_SCAN_COMPLETE)
        goto sub;
    i = next;
    goto after;

key:
    if (s[i] != '"') {
        why = "expected a string key";
        goto fail;
    }
    SCAN_STRING();
    SKIP_WS();
    if (s[i] != ':') {
        why = "expected ':'";
        goto fail;
    }
    i++;
    goto value;

after:
    if (!depth)
        goto done;
    SKIP_WS();
    c = s[i];
    if (c == ',') {
        i++;
        SKIP_WS();
        if (array)
            goto value;
        goto key;
    }
    if (c != '}' && c != ']') {
        why = "expected ',' or a closing bracket";
        goto fail;
    }
    if ((c == ']') != array) {
        why = "mismatched closing bracket";
        goto fail;
    }
    i++;
closed:
    depth--;
    array = depth && kind_at(sc, depth - 1);
    goto after;

done:
    sc->depth = depth;
    sc->spaced = spaced;
    *stop = i;
    if (!inv.why)
        return AR_SCAN_COMPLETE;
    sc->why = inv.why;
    sc->why_at = inv.at;
    return AR_SCAN_INVALID;
sub:
    sc->depth = depth;
    sc->spaced = spaced;
    *stop = next;
    if (rc == AR_SCAN_FAIL) {
        sc->why = why;
        sc->why_at = next;
        sc->fail_in_string = s[i] == '"';
    }
    return rc;
not_a_container:
    why = "expected '{' or '['";
fail:
    sc->depth = depth;
    sc->spaced = spaced;
    sc->why = why;
    sc->why_at = i;
    *stop = i;
    return AR_SCAN_FAIL;
eof:
    sc->depth = depth;
    sc->spaced = spaced;
    *stop = hi;
    return AR_SCAN_EOF;
}

/* The number and literal readers as they were, for fuzz_scan.c's check of
 * the present ones at every offset. */
int ar_json_scan_ref_number(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    return scan_number(s, i, hi, next);
}

int ar_json_scan_ref_literal(const unsigned char *s, size_t i, size_t hi, size_t *next)
{
    return scan_literal(s, i, hi, next);
}
