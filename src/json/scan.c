/* The strict JSON recognizer behind extraction, repair and documents (see scan.h). */
#include "json/scan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "json/bytes.h"
#include "json/scan_blocks.h"
#include "json/token.h"
#include "util/cpu.h"
#include "util/utf8.h"

void ar_json_scanner_init(struct ar_json_scanner *sc, int want, int scalars)
{
    memset(sc, 0, sizeof(*sc));
    sc->want = want;
    sc->scalars = scalars;
}

void ar_json_scanner_finish(struct ar_json_scanner *sc)
{
    free(sc->kinds);
    memset(sc, 0, sizeof(*sc));
}

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
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
        ar_block_mask m = ar_block_bits(ar_block_or(
            ar_block_or(ar_block_eq(v, '"'), ar_block_eq(v, '\\')), ar_block_ctrl_or_high(v)));
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

/* Whether the block at s[i] holds a closing quote with nothing special
 * before it (*end is then at that quote): the one test most keys and short
 * values need, outside the loop of ar_bytes_string_end(). */
static inline __attribute__((always_inline)) int short_string(const unsigned char *s, size_t i,
                                                              size_t hi, size_t *end)
{
#if AR_BLOCK
    if (i + AR_BLOCK <= hi) {
        ar_block v = ar_block_load(s + i);
        ar_block q = ar_block_eq(v, '"');
        ar_block_mask m = ar_block_bits(
            ar_block_or(ar_block_or(q, ar_block_eq(v, '\\')), ar_block_ctrl_or_high(v)));
        if (ar_block_bits(q) & m & (0 - m)) {
            *end = i + ar_block_first(m);
            return 1;
        }
    }
#else
    (void)s, (void)i, (void)hi, (void)end;
#endif
    return 0;
}

/*
 * The string whose opening quote is at s[i]: most are plain to their closing
 * quote, and `i` moves past it. Otherwise string_rest() reads on; rc is set
 * to what it says, and *rest to the byte after the string, the offending
 * byte or hi (a separate variable, so that `i` can stay in a register).
 */
#define SCAN_STRING()                                      \
    do {                                                   \
        int quote_;                                        \
        size_t end_;                                       \
        if (short_string(s, i + 1, hi, &end_)) {           \
            i = end_ + 1;                                  \
            break;                                         \
        }                                                  \
        end_ = ar_bytes_string_end(s, i + 1, hi, &quote_); \
        if (quote_) {                                      \
            i = end_ + 1;                                  \
            break;                                         \
        }                                                  \
        rc = string_rest(s, end_, hi, &rest, &why, &inv);  \
        if (rc != AR_SCAN_COMPLETE) {                      \
            next = rest;                                   \
            goto sub;                                      \
        }                                                  \
        i = rest;                                          \
    } while (0)

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

/* Whether p[0..2) are the two bytes of `two`, in one comparison. */
static inline int pair_is(const unsigned char *p, const char *two)
{
    uint16_t a, b;
    memcpy(&a, p, sizeof(a));
    memcpy(&b, two, sizeof(b));
    return a == b;
}

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

int ar_json_scan(struct ar_json_scanner *sc, const char *text, size_t start, size_t hi,
                 size_t *stop)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = start, next = start, rest = start, depth = 0;
    int rc, spaced = 0, array = 0; /* array: the innermost container is one */
    unsigned char c;
    const char *why = NULL;
    struct invalid inv = { NULL, 0 };
    /* sc's fields in locals: a store into kinds could otherwise be sc's. */
    uint64_t *kinds = sc->kinds;
    size_t room = sc->words * 64; /* depths kinds has room for */
    const int want = sc->want;
    /* Where a long value is handed over to the block walker (scan_blocks.h). */
    size_t walk_at = ar_json_walk_after > SIZE_MAX - start || !ar_cpu_avx2()
                         ? SIZE_MAX
                         : start + ar_json_walk_after;

    sc->saw_want = 0;
    sc->why = NULL;
    sc->why_at = 0;
    sc->fail_in_string = 0;

value:
    SKIP_WS();
token: /* s[i] is the value's first byte, or what stands in its place */
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
        if (depth >= room) {
            if (grow(sc, depth) < 0)
                return AR_SCAN_NOMEM;
            kinds = sc->kinds;
            room = sc->words * 64;
        }
        uint64_t bit = (uint64_t)1 << (depth % 64);
        kinds[depth / 64] = array ? kinds[depth / 64] | bit : kinds[depth / 64] & ~bit;
        depth++;
        if ((array ? AR_KIND_ARRAY : AR_KIND_OBJECT) & want)
            sc->saw_want = 1;
        i++;
        if (i >= walk_at && depth <= AR_JSON_WALK_DEPTH) {
            /* Plain stretches are the block walker's; it hands back where they end. */
            struct ar_json_walk_state w = { i, depth, kinds[0], spaced, 0 };
            int label = ar_json_walk(text, hi, want, &w);
            i = w.at;
            depth = w.depth;
            kinds[0] = w.kinds;
            array = depth && (int)((kinds[0] >> (depth - 1)) & 1);
            spaced = w.spaced;
            sc->saw_want |= w.saw;
            walk_at = i > SIZE_MAX - ar_json_walk_after ? SIZE_MAX : i + ar_json_walk_after;
            switch (label) {
            case AR_WALK_DONE:
                goto done;
            case AR_WALK_KEY:
                SKIP_WS();
                goto key;
            case AR_WALK_COLON:
                goto colon;
            case AR_WALK_VALUE:
                goto value;
            case AR_WALK_AFTER:
                goto after;
            default: /* AR_WALK_FIRST */
                break;
            }
        }
        SKIP_WS();
        if (s[i] == (array ? ']' : '}')) {
            i++;
            goto closed;
        }
        if (array)
            goto token;
        goto key;
    } else if (!depth && !sc->scalars) {
        goto not_a_container;
    } else if (c == '-' || is_digit(c)) {
        rc = ar_json_scan_number(s, i, hi, &next);
        if (rc != AR_SCAN_COMPLETE) {
            why = "invalid number";
            goto sub;
        }
    } else if (c == 't' || c == 'f' || c == 'n') {
        rc = ar_json_scan_literal(s, i, hi, &next);
        if (rc != AR_SCAN_COMPLETE) {
            why = "invalid literal";
            goto sub;
        }
    } else {
        why = "expected a value";
        goto fail;
    }
    i = next;
    goto after;

key:
    if (s[i] != '"') {
        why = "expected a string key";
        goto fail;
    }
    SCAN_STRING();
colon:
    /* Most keys are followed by ": " and the value, or ':' and the value. */
    if (i + 2 < hi) {
        if (pair_is(s + i, ": ") && s[i + 2] > ' ') {
            spaced = 1;
            i += 2;
            goto token;
        }
        if (s[i] == ':' && s[i + 1] > ' ') {
            i++;
            goto token;
        }
    }
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
        if (i + 2 < hi && pair_is(s + i, ", ") && s[i + 2] > ' ') { /* ", " and the next token */
            spaced = 1;
            i += 2;
        } else {
            i++;
            SKIP_WS();
        }
        if (array)
            goto token;
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
    array = depth && (int)((kinds[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1);
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

static int push(struct ar_json_scanner *sc, int array)
{
    if (grow(sc, sc->depth) < 0)
        return -1;
    uint64_t bit = (uint64_t)1 << (sc->depth % 64), *w = &sc->kinds[sc->depth / 64];
    *w = array ? *w | bit : *w & ~bit;
    sc->depth++;
    return 0;
}

static int top_is_array(const struct ar_json_scanner *sc)
{
    return kind_at(sc, sc->depth - 1);
}

int ar_json_scanner_open(struct ar_json_scanner *sc, int kind)
{
    return push(sc, kind == AR_KIND_ARRAY);
}

/* 1 when a JSON value starts at s[i]: a string, a number, an object, an array, or one of
 * the literals as a whole word. */
static int value_starts(const unsigned char *s, size_t i, size_t n)
{
    if (i >= n)
        return 0;
    unsigned char c = s[i];
    if (c == '"' || c == '{' || c == '[' || c == '-' || (c >= '0' && c <= '9'))
        return 1;
    static const char *const words[] = { "true", "false", "null" };
    for (size_t w = 0; w < 3; w++) {
        size_t len = strlen(words[w]);
        if (n - i >= len && memcmp(s + i, words[w], len) == 0 &&
            (n - i == len || !((s[i + len] | 0x20) >= 'a' && (s[i + len] | 0x20) <= 'z')))
            return 1;
    }
    return 0;
}

size_t ar_json_members_follow(const char *text, size_t i, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    i = ar_json_skip_ws(text, i, n);
    while (i < n && s[i] == '}') /* closed twice over */
        i = ar_json_skip_ws(text, i + 1, n);
    int comma = i < n && s[i] == ',';
    if (comma)
        i = ar_json_skip_ws(text, i + 1, n);
    if (i >= n || (s[i] != '"' && s[i] != '\''))
        return SIZE_MAX;
    size_t k = i + 1;
    while (k < n && s[k] != s[i] && s[k] != '\n')
        k += s[k] == '\\' ? 2 : 1;
    if (k >= n || s[k] != s[i])
        return SIZE_MAX;
    k = ar_json_skip_ws(text, k + 1, n);
    if (k < n && s[k] == ':')
        return i;
    /* `, "key" "value"`, `, "b" 2`: a member without its colon. Only after a comma:
     * `{"a": 1} "quoted" 2 words` is prose. */
    return comma && value_starts(s, k, n) ? i : SIZE_MAX;
}

size_t ar_json_value_follows(const char *text, size_t i, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    for (;;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i >= n || (s[i] != '`' && s[i] != '~'))
            break;
        /* A fence on the value's line (a closing one, then another block opened on the
         * same line): its run and its info string are no text between two values. */
        while (i < n && (s[i] == '`' || s[i] == '~'))
            i++;
        while (i < n && (isalnum(s[i]) || s[i] == '_' || s[i] == '-' || s[i] == '+'))
            i++;
    }
    if (i < n && (s[i] == '{' || s[i] == '[' || s[i] == '"'))
        return i;
    if (i >= n || s[i] != ',')
        return SIZE_MAX;
    i = ar_json_skip_ws(text, i + 1, n);
    return value_starts(s, i, n) ? i : SIZE_MAX;
}

size_t ar_json_broken_end(struct ar_json_scanner *sc, const char *text, size_t from, size_t hi)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t open[2] = { 0, 0 }; /* open objects, arrays */
    for (size_t d = 0; d < sc->depth; d++)
        open[(sc->kinds[d / 64] >> (d % 64)) & 1]++;
    if (sc->fail_in_string) { /* the rest of that string first */
        from = ar_json_string_stop(text, from, hi);
        while (from < hi && s[from] == '\\')
            from = ar_json_string_stop(text, from + 2 < hi ? from + 2 : hi, hi);
        from++;
        sc->fail_in_string = 0;
    }
    for (size_t i = from; i < hi; i++) {
        unsigned char c = s[i];
        if (c == '"') {
            i = ar_json_string_stop(text, i + 1, hi);
            while (i < hi && s[i] == '\\')
                i = ar_json_string_stop(text, i + 2 < hi ? i + 2 : hi, hi);
        } else if (c == '{' || c == '[') {
            if (push(sc, c == '[') < 0)
                return SIZE_MAX;
            open[c == '[']++;
        } else if ((c == '}' || c == ']') && open[c == ']']) {
            /* Close up to the nearest open container of its kind. */
            int top;
            do {
                top = top_is_array(sc);
                open[top]--;
                sc->depth--;
            } while (top != (c == ']'));
            if (sc->depth)
                continue;
            size_t key = c == '}' ? ar_json_members_follow(text, i + 1, hi) : SIZE_MAX;
            if (key == SIZE_MAX)
                return i + 1;
            if (push(sc, 0) < 0)
                return SIZE_MAX;
            open[0]++;
            i = key - 1;
        }
    }
    return hi;
}

size_t ar_json_skip_ws(const char *s, size_t i, size_t n)
{
    return ar_bytes_skip_ws((const unsigned char *)s, i, n);
}

int ar_json_is_valid(const char *s, size_t len)
{
    size_t i = ar_json_skip_ws(s, 0, len);
    if (i >= len || (s[i] != '{' && s[i] != '['))
        return 0;
    struct ar_json_scanner sc;
    ar_json_scanner_init(&sc, 0, 0);
    size_t stop;
    int rc = ar_json_scan(&sc, s, i, len, &stop);
    ar_json_scanner_finish(&sc);
    return rc == AR_SCAN_COMPLETE && ar_json_skip_ws(s, stop, len) == len;
}

size_t ar_json_string_stop(const char *s, size_t i, size_t n)
{
    return ar_bytes_quote_or_backslash((const unsigned char *)s, i, n);
}
