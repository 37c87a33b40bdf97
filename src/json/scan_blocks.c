/* The block walker: the strict scan's fast path for plain stretches (see scan_blocks.h). */
#include "json/scan_blocks.h"

#include <string.h>

#include "json/bytes.h"
#include "json/scan.h"
#include "json/token.h"
#include "util/cpu.h"

size_t ar_json_walk_after = 256;

#ifdef AR_AVX2
#define WALK AR_AVX2

/* The blocks walked so far, bit k for byte k of a block. */
struct blocks {
    size_t at;          /* the block's first byte */
    uint64_t tokens;    /* its tokens' first bytes: brackets, ':', ',', opening quotes, scalars */
    uint64_t ws;        /* its whitespace outside strings */
    uint64_t in_string; /* all ones when it ends inside a string */
    uint64_t scalars;   /* its bytes of numbers and literals (and of what is neither) */
    uint64_t digits;    /* its digits */
    uint64_t dots;      /* its '.' */
    uint64_t ws_before; /* whitespace outside strings met in the blocks before */
};

/* A byte may end a number or a literal: whitespace, a bracket, ':', ',' or '"'
 * (anything else there is the byte scanner's to judge). */
static const unsigned char token_end[256] = {
    [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [','] = 1, [':'] = 1,
    ['{'] = 1, ['}'] = 1,  ['['] = 1,  [']'] = 1,  ['"'] = 1,
};

/* When s[i] starts a number or a literal that the walker took: 1, with *end
 * one past it. */
static int scalar_end(const unsigned char *s, size_t i, size_t hi, size_t *end)
{
    if (s[i] == '-' || is_digit(s[i]))
        return ar_json_scan_number(s, i, hi, end) == AR_SCAN_COMPLETE;
    if (s[i] == 't' || s[i] == 'f' || s[i] == 'n')
        return ar_json_scan_literal(s, i, hi, end) == AR_SCAN_COMPLETE;
    return 0;
}

/* Bytes equal to the entry of a table indexed by their low nibble (bytes from
 * 0x80 index nothing: the shuffle gives them 0). */
WALK static inline uint64_t nibble64(__m256i lo, __m256i hi, __m256i table, __m256i lo_cmp,
                                     __m256i hi_cmp)
{
    return ar_bits64(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, lo), lo_cmp),
                     _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, hi), hi_cmp));
}

/*
 * Classifies the 64 bytes at p into b, as the block after the one b holds.
 * Returns 0, with b untouched, when the block is not plain: a string in it
 * holds a backslash, a control byte (a tab or a line break too) or a byte
 * from 0x80. Outside strings such a byte is no token's, and the grammar
 * hands it back where it stands.
 */
WALK static inline __attribute__((always_inline)) int classify(const unsigned char *p,
                                                               struct blocks *b)
{
#define X (char)0x80 /* matches no byte below 0x80 */
    const __m256i ws_table =
        _mm256_setr_epi8(' ', X, X, X, X, X, X, X, X, '\t', '\n', X, X, '\r', X, X, ' ', X, X, X, X,
                         X, X, X, X, '\t', '\n', X, X, '\r', X, X);
    /* '[' and ']' are '{' and '}' without 0x20: or-ed in, they meet the same
     * entries (as do two control bytes, which are no token's anyway). */
    const __m256i op_table =
        _mm256_setr_epi8(X, X, X, X, X, X, X, X, X, X, ':', '{', ',', '}', X, X, X, X, X, X, X, X,
                         X, X, X, X, ':', '{', ',', '}', X, X);
#undef X
    const __m256i k20 = _mm256_set1_epi8(0x20);
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i backslash = _mm256_set1_epi8('\\');
    __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
    __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    uint64_t q = ar_bits64(_mm256_cmpeq_epi8(v0, quote), _mm256_cmpeq_epi8(v1, quote));
    /* A backslash, a byte below 0x20 or from 0x80 (a signed comparison). */
    uint64_t rare =
        ar_bits64(_mm256_or_si256(_mm256_cmpeq_epi8(v0, backslash), _mm256_cmpgt_epi8(k20, v0)),
                  _mm256_or_si256(_mm256_cmpeq_epi8(v1, backslash), _mm256_cmpgt_epi8(k20, v1)));

    /* Inside a string: from an opening quote to the byte before its closing
     * one, a prefix xor of the quotes (in a plain block no quote is escaped:
     * a backslash before it would be in a string). */
    uint64_t in = ar_prefix_xor64(q) ^ b->in_string;
    if (rare & in)
        return 0;
    uint64_t ws = nibble64(v0, v1, ws_table, v0, v1);
    uint64_t op = nibble64(v0, v1, op_table, _mm256_or_si256(v0, k20), _mm256_or_si256(v1, k20));
    uint64_t out = ~in;
    /* A scalar is a run of bytes outside strings that are none of the others. */
    uint64_t scalar = out & ~(ws | op | q);
    b->tokens = (op & out) | (q & in) | (scalar & ~(scalar << 1 | b->scalars >> 63));
    b->ws = ws & out;
    b->in_string = (uint64_t)((int64_t)in >> 63);
    b->scalars = scalar;
    b->digits = ar_bits64(_mm256_and_si256(_mm256_cmpgt_epi8(v0, _mm256_set1_epi8('0' - 1)),
                                           _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), v0)),
                          _mm256_and_si256(_mm256_cmpgt_epi8(v1, _mm256_set1_epi8('0' - 1)),
                                           _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), v1)));
    b->dots = ar_bits64(_mm256_cmpeq_epi8(v0, _mm256_set1_epi8('.')),
                        _mm256_cmpeq_epi8(v1, _mm256_set1_epi8('.')));
    return 1;
}

/* Classifies the block at s[at] (the last one from a copy padded with spaces). */
WALK static __attribute__((noinline)) int last_block(const unsigned char *s, size_t at, size_t hi,
                                                     struct blocks *b)
{
    unsigned char pad[64];
    memset(pad, ' ', sizeof(pad));
    memcpy(pad, s + at, hi - at);
    if (!classify(pad, b))
        return 0;
    b->ws &= ((uint64_t)1 << (hi - at)) - 1; /* the padding is not the value's */
    return 1;
}

WALK static inline __attribute__((always_inline)) int load(const unsigned char *s, size_t at,
                                                           size_t hi, struct blocks *b)
{
    if (!(hi - at >= 64 ? classify(s + at, b) : last_block(s, at, hi, b)))
        return 0;
    b->at = at;
    return 1;
}

/* The tokens of the next block that has any, or 0 when the walk stops at the
 * start of a block (b->at + 64): it is not plain, or the range ends. Inline
 * in each state of the walk: a call a block reloaded the classifier's
 * constants and saved registers, 33 instructions of every block. */
WALK static inline __attribute__((always_inline)) uint64_t refill(const unsigned char *s, size_t hi,
                                                                  struct blocks *b)
{
    do {
        b->ws_before |= b->ws;
        if (b->at + 64 >= hi || !load(s, b->at + 64, hi, b))
            return 0;
    } while (!b->tokens);
    return b->tokens;
}

WALK int ar_json_walk(const char *text, size_t hi, int want, struct ar_json_walk_state *w)
{
    const unsigned char *s = (const unsigned char *)text;
    struct blocks b;
    size_t at, k = 0, end, depth = w->depth;
    uint64_t tokens, kinds = w->kinds;
    int array, seen = 0, label;
    unsigned char ch;

    if (!ar_cpu_avx2() || w->at >= hi || depth < 1 || depth > AR_JSON_WALK_DEPTH)
        return AR_WALK_FIRST;
    memset(&b, 0, sizeof(b));
    if (!load(s, w->at, hi, &b))
        return AR_WALK_FIRST;
    at = b.at;
    tokens = b.tokens;
    array = (int)((kinds >> (depth - 1)) & 1);

/* The next token's first byte into ch, at s[at + k], in the state `l`. */
#define NEXT(l)                                  \
    do {                                         \
        if (!tokens) {                           \
            if (!(tokens = refill(s, hi, &b))) { \
                label = (l);                     \
                goto block_end;                  \
            }                                    \
            at = b.at;                           \
        }                                        \
        k = (size_t)__builtin_ctzll(tokens);     \
        tokens &= tokens - 1;                    \
        ch = s[at + k];                          \
    } while (0)
/* Stops at the token just read, the byte scanner to read it in the state `l`. */
#define BACK(l)          \
    do {                 \
        label = (l);     \
        goto token_here; \
    } while (0)

    if (array)
        goto array_first;
object_first:
    NEXT(AR_WALK_FIRST);
    if (ch == '}')
        goto close;
    if (ch != '"')
        BACK(AR_WALK_FIRST);
    goto colon;
key:
    NEXT(AR_WALK_KEY);
    if (ch != '"')
        BACK(AR_WALK_KEY);
colon:
    NEXT(AR_WALK_COLON);
    if (ch != ':')
        BACK(AR_WALK_COLON);
value:
    NEXT(AR_WALK_VALUE);
value_here:
    if (ch == '"')
        goto after;
    if (ch == '{' || ch == '[') {
        if (depth >= AR_JSON_WALK_DEPTH)
            BACK(AR_WALK_VALUE);
        array = ch == '[';
        kinds = (kinds & ~((uint64_t)1 << depth)) | (uint64_t)array << depth;
        depth++;
        seen |= want & (array ? AR_KIND_ARRAY : AR_KIND_OBJECT);
        if (array)
            goto array_first;
        goto object_first;
    }
    if (is_digit(ch)) {
        /* Most numbers of a record, 123 or 0.123, read from the masks: the
         * run of scalar bytes from here, when it ends in this block, is all
         * digits but one inner '.', and a leading 0 stands alone. */
        uint64_t first = (uint64_t)1 << k, rest = ~b.scalars & (0 - first);
        uint64_t span = (rest & (0 - rest)) - first, dots = b.dots & span;
        if (rest && ((b.digits & span) | dots) == span &&
            (dots == 0
                 ? ch != '0' || span == first
                 : !(dots & (dots - 1)) && (dots << 1) & span && (ch != '0' || dots == first << 1)))
            goto after;
    }
    if (ch == 't' || ch == 'f' || ch == 'n') {
        /* A literal whose run of scalar bytes ends in this block: its length
         * and its bytes, four at a time (from its second byte for false). */
        uint64_t first = (uint64_t)1 << k, rest = ~b.scalars & (0 - first);
        size_t len = rest ? (size_t)__builtin_ctzll(rest) - k : 0;
        uint32_t word;
        if (len == 4 || len == 5) {
            memcpy(&word, s + at + k + (len == 5), sizeof(word));
            if (len == 4 ? !memcmp(&word, "true", 4) || !memcmp(&word, "null", 4)
                         : ch == 'f' && !memcmp(&word, "alse", 4))
                goto after;
        }
    }
    if (ch == '-' || is_digit(ch)) {
        if (ar_json_scan_number(s, at + k, hi, &end) != AR_SCAN_COMPLETE)
            BACK(AR_WALK_VALUE);
    } else if (ch == 't' || ch == 'f' || ch == 'n') {
        if (ar_json_scan_literal(s, at + k, hi, &end) != AR_SCAN_COMPLETE)
            BACK(AR_WALK_VALUE);
    } else {
        BACK(AR_WALK_VALUE);
    }
    if (end >= hi || !token_end[s[end]])
        BACK(AR_WALK_VALUE);
after:
    NEXT(AR_WALK_AFTER);
    if (ch == ',') {
        if (array)
            goto value;
        goto key;
    }
    if (ch != (array ? ']' : '}'))
        BACK(AR_WALK_AFTER);
close:
    if (--depth) {
        array = (int)((kinds >> (depth - 1)) & 1);
        goto after;
    }
    w->at = at + k + 1;
    w->spaced |= (b.ws_before | (b.ws & (((uint64_t)2 << k) - 1))) != 0; /* k = 63: all */
    label = AR_WALK_DONE;
    goto out;

array_first:
    NEXT(AR_WALK_FIRST);
    if (ch == ']')
        goto close;
    goto value_here;
#undef NEXT
#undef BACK

token_here: /* the token at s[at + k] is the byte scanner's, in `label` */
    w->at = at + k;
    w->spaced |= (b.ws_before | (b.ws & (((uint64_t)1 << k) - 1))) != 0;
    goto out;
block_end: /* the block at b.at + 64 is the byte scanner's, from the state `label` */
    w->at = b.at + 64 < hi ? b.at + 64 : hi;
    if (b.in_string) { /* in a string begun in a plain block: from its quote, the last token */
        w->at = at + k;
        label = label == AR_WALK_COLON ? AR_WALK_KEY : AR_WALK_VALUE;
    } else if (label == AR_WALK_AFTER && scalar_end(s, at + k, hi, &end) && end > w->at) {
        w->at = end; /* a number or literal that ends further on */
    }
    w->spaced |= b.ws_before != 0;
out:
    w->depth = depth;
    w->kinds = kinds;
    w->saw |= seen != 0;
    return label;
}

#else

int ar_json_walk(const char *s, size_t hi, int want, struct ar_json_walk_state *w)
{
    (void)s, (void)hi, (void)want, (void)w;
    return AR_WALK_FIRST;
}

#endif
