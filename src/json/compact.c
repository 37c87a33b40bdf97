/* The compact text of valid JSON (see doc.h, ar_json_compact()). */
#include "json/doc.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "json/bytes.h"
#include "util/cpu.h"

/* ---- the compact text ---------------------------------------------------------------- */

#if AR_BLOCK == 16
/* Bit k set when an odd number of bits 0..k of m are: the bytes after an
 * opening quote and before its closing one. */
static unsigned prefix_xor16(unsigned m)
{
    m ^= m << 1;
    m ^= m << 2;
    m ^= m << 4;
    m ^= m << 8;
    return m & 0xFFFF;
}
#endif

#if AR_BLOCK == 16
/*
 * Sixteen bytes at s, with no backslash, to o: the quotes say which bytes are
 * in strings (*in_string: the block starts in one), and the whitespace
 * outside them goes. The block is stored whole, then each run of kept bytes
 * after a dropped one is stored again where it belongs, so s[0..32) must be
 * readable and o[0..32) writable. Returns how many bytes were kept.
 */
static size_t compact_block(const unsigned char *s, ar_block v, unsigned char *o, int *in_string)
{
    unsigned in = prefix_xor16(ar_block_bits(ar_block_eq(v, '"')));
    if (*in_string)
        in ^= 0xFFFF;
    *in_string = (int)(in >> 15);
    /* Outside strings a byte <= ' ' in valid JSON is whitespace (and inside
     * one it can only be a space, which stays). */
    unsigned drop = ar_block_bits(ar_block_le(v, ' ')) & ~in;
    ar_block_store(o, v);
    size_t kept = 0, k = 0; /* bytes s[k..) are at o + kept */
    while (drop) {
        size_t a = ar_block_first(drop);                 /* a dropped run starts */
        unsigned rest = ~drop & 0xFFFF & (0xFFFFu << a); /* kept bytes after it */
        size_t b = rest ? ar_block_first(rest) : AR_BLOCK;
        kept += a - k;
        k = b;
        if (k < AR_BLOCK)
            ar_block_store(o + kept, ar_block_load(s + k));
        drop &= b < AR_BLOCK ? 0xFFFFu << b : 0;
    }
    return kept + AR_BLOCK - k;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <tmmintrin.h>
#define AR_PACK_SHUFFLE 1
/*
 * The same with SSSE3's byte shuffle, which every x86-64 of the last fifteen
 * years has (checked at start): the kept bytes of each half block are
 * gathered to its front in one instruction, where the loop above stores once
 * per dropped run (a record's `"id": 1, "ok": true` drops one run in every
 * few bytes).
 */
/* Per half of a block (0: bytes 0-7, 1: bytes 8-15) and mask of its kept
 * bytes: their indices in the block, in order. */
static unsigned char pack_index[2][256][8];
static int pack_ok;
/* Filled at the first compaction, not at every start of the program (most never compact). */
static pthread_once_t pack_once = PTHREAD_ONCE_INIT;

static void pack_init(void)
{
    for (unsigned m = 0; m < 256; m++)
        for (unsigned b = 0, k = 0; b < 8; b++)
            if (m >> b & 1) {
                pack_index[0][m][k] = (unsigned char)b;
                pack_index[1][m][k++] = (unsigned char)(b + 8);
            }
    pack_ok = ar_cpu_ssse3();
}

/* The kept bytes of v that `keep` marks, to o. */
__attribute__((target("ssse3,popcnt"), always_inline)) static inline size_t
pack_shuffle(ar_block v, unsigned keep, unsigned char *o)
{
    unsigned lo = keep & 0xFF, hi = keep >> 8;
    __m128i ilo = _mm_loadl_epi64((const __m128i *)(const void *)pack_index[0][lo]);
    __m128i ihi = _mm_loadl_epi64((const __m128i *)(const void *)pack_index[1][hi]);
    size_t nlo = (size_t)__builtin_popcount(lo);
    _mm_storel_epi64((__m128i *)(void *)o, _mm_shuffle_epi8(v, ilo));
    _mm_storel_epi64((__m128i *)(void *)(o + nlo), _mm_shuffle_epi8(v, ihi));
    return nlo + (size_t)__builtin_popcount(hi);
}

__attribute__((target("ssse3,popcnt"), always_inline)) static inline size_t
compact_block_shuffle(ar_block v, unsigned char *o, int *in_string)
{
    unsigned in = prefix_xor16(ar_block_bits(ar_block_eq(v, '"')));
    if (*in_string)
        in ^= 0xFFFF;
    *in_string = (int)(in >> 15);
    return pack_shuffle(v, ~(ar_block_bits(ar_block_le(v, ' ')) & ~in) & 0xFFFF, o);
}
#endif

/* Compacts the blocks from s[i] on, outside a string, up to the first
 * backslash (*bytewise: where the bytewise walk that handles it ends) or to
 * where two blocks no longer fit; returns where it stopped. */
#define COMPACT_BLOCKS(BLOCK)                                         \
    do {                                                              \
        unsigned char *o_ = *op;                                      \
        while (i + 2 * AR_BLOCK <= n) {                               \
            ar_block v = ar_block_load(s + i);                        \
            ar_block_mask esc = ar_block_bits(ar_block_eq(v, '\\'));  \
            if (esc) { /* an escaped quote would mislead the count */ \
                *bytewise = i + ar_block_first(esc) + 2;              \
                break;                                                \
            }                                                         \
            o_ += BLOCK;                                              \
            i += AR_BLOCK;                                            \
        }                                                             \
        *op = o_;                                                     \
        return i;                                                     \
    } while (0)

static size_t compact_blocks(const unsigned char *s, size_t i, size_t n, unsigned char **op,
                             int *in_string, size_t *bytewise)
{
    COMPACT_BLOCKS(compact_block(s + i, v, o_, in_string));
}

#ifdef AR_PACK_SHUFFLE
#if defined(__clang__)
#define AR_UNROLL4 _Pragma("clang loop unroll(full)")
#else
#define AR_UNROLL4 _Pragma("GCC unroll 4")
#endif

/* Four blocks at a time while none holds a backslash (a record's blocks
 * mostly do not): their masks are joined, so the string state is worked
 * out once for all four; the block loop takes over at a backslash. */
__attribute__((target("ssse3,popcnt"))) static size_t
compact_blocks_shuffle(const unsigned char *s, size_t i, size_t n, unsigned char **op,
                       int *in_string, size_t *bytewise)
{
    unsigned char *o = *op;
    uint64_t ins = *in_string ? ~(uint64_t)0 : 0;
    while (i + 4 * AR_BLOCK <= n) {
        ar_block v[4];
        uint64_t q = 0, ws = 0;
        AR_UNROLL4
        for (unsigned j = 0; j < 4; j++)
            v[j] = ar_block_load(s + i + AR_BLOCK * j);
        if (ar_block_bits(
                ar_block_or(ar_block_or(ar_block_eq(v[0], '\\'), ar_block_eq(v[1], '\\')),
                            ar_block_or(ar_block_eq(v[2], '\\'), ar_block_eq(v[3], '\\')))))
            break;
        AR_UNROLL4
        for (unsigned j = 0; j < 4; j++) {
            q |= (uint64_t)ar_block_bits(ar_block_eq(v[j], '"')) << (AR_BLOCK * j);
            ws |= (uint64_t)ar_block_bits(ar_block_le(v[j], ' ')) << (AR_BLOCK * j);
        }
        q ^= q << 1; /* bit k: an odd number of quotes at 0..k */
        q ^= q << 2;
        q ^= q << 4;
        q ^= q << 8;
        q ^= q << 16;
        q ^= q << 32;
        uint64_t in = q ^ ins;
        ins = (uint64_t)((int64_t)in >> 63);
        uint64_t keep = ~(ws & ~in);
        AR_UNROLL4
        for (unsigned j = 0; j < 4; j++) {
            unsigned k = (unsigned)(keep >> (AR_BLOCK * j)) & 0xFFFF;
            if (k == 0xFFFF) {
                ar_block_store(o, v[j]);
                o += AR_BLOCK;
            } else {
                o += pack_shuffle(v[j], k, o);
            }
        }
        i += 4 * AR_BLOCK;
    }
    *in_string = ins != 0;
    *op = o;
    COMPACT_BLOCKS(compact_block_shuffle(v, o_, in_string));
}
#endif
#endif

/* s[0..n) as one piece (see ar_json_compact()) to o, with the blocks of this
 * file; returns where the output ends. */
static unsigned char *compact_piece(struct ar_json_compactor *st, const unsigned char *s, size_t n,
                                    unsigned char *o)
{
    size_t i = 0;
#if AR_BLOCK == 16
    size_t bytewise = 0; /* up to `bytewise`, a byte or a token at a time */
#endif
    while (i < n) {
#if AR_BLOCK == 16
        if (i >= bytewise && !st->in_string) {
            /* Copies, so that o and bytewise stay in registers in the loops below. */
            unsigned char *ob = o;
            size_t bw = bytewise;
#ifdef AR_PACK_SHUFFLE
            if (pack_ok)
                i = compact_blocks_shuffle(s, i, n, &ob, &st->in_string, &bw);
            else
#endif
                i = compact_blocks(s, i, n, &ob, &st->in_string, &bw);
            o = ob;
            bytewise = bw;
            if (i + 2 * AR_BLOCK > n)
                bytewise = n;
            continue;
        }
#endif
        if (st->in_string) {
            /* Copy through the closing quote: the next '"' after an even run of
             * backslashes (escapes need no stop: nothing in a string goes). */
            for (;;) {
#if AR_BLOCK
                for (; i + AR_BLOCK <= n; i += AR_BLOCK, o += AR_BLOCK) {
                    ar_block v = ar_block_load(s + i);
                    ar_block_store(o, v);
                    ar_block_mask m = ar_block_bits(ar_block_eq(v, '"'));
                    if (m) {
                        i += ar_block_first(m);
                        o += ar_block_first(m);
                        break;
                    }
                }
#endif
                while (i < n && s[i] != '"')
                    *o++ = s[i++];
                size_t k = i, run = 0;
                while (k > 0 && s[k - 1] == '\\')
                    k--, run++;
                if (k == 0) /* the run began in an earlier piece */
                    run += (size_t)st->escaped;
                if (i >= n) { /* the piece ends in the string */
                    st->escaped = (int)(run & 1);
                    break;
                }
                *o++ = s[i++];
                if (!(run & 1)) {
                    st->in_string = 0;
                    st->escaped = 0;
                    break;
                }
            }
        } else if (s[i] == '"') {
            *o++ = s[i++];
            st->in_string = 1;
        } else if (ar_byte_ws(s[i])) {
            i = ar_bytes_skip_ws(s, i, n);
        } else {
            while (i < n && s[i] > ' ' && s[i] != '"')
                *o++ = s[i++];
        }
    }
    return o;
}

/* ---- 64 bytes at a time, with AVX2 ----------------------------------------------------- */

#if defined(AR_PACK_SHUFFLE) && defined(AR_AVX2)
#define AR_COMPACT_AVX2 1
#define AVX2_TARGET     AR_AVX2

static int avx2_off; /* set by tests: ar_json_compact() keeps to the portable path */

/*
 * The bytes a backslash escapes, given the backslashes `bs` of a block and
 * *odd: the block before ended in an odd run of backslashes (byte 0 is
 * escaped). A run escapes the byte after it when its length is odd. Runs
 * starting on an even byte are found with one subtraction, which borrows
 * through a run to the byte after it; xor with the odd bits turns that
 * into the escaping backslashes and escaped bytes of every run (simdjson's
 * way). Sets *odd for the next block.
 */
AVX2_TARGET static inline uint64_t escaped_bytes(uint64_t bs, uint64_t *odd)
{
    const uint64_t odd_bits = 0xAAAAAAAAAAAAAAAAu;
    uint64_t starts = bs & ~*odd; /* a backslash the block before escapes escapes nothing */
    uint64_t code = (((starts << 1) | odd_bits) - starts) ^ odd_bits;
    uint64_t escaped = code ^ (bs | *odd);
    *odd = (code & bs) >> 63;
    return escaped;
}

/* The bytes of the 64 in v0 and v1 that `keep` marks, to o; returns where
 * the output ends. A shuffle per eight bytes, as the 16-byte path packs (a
 * bit extract, pext, per eight bytes took fewer instructions but more time:
 * its masks have to come out of the vectors one by one). */
AVX2_TARGET static inline unsigned char *pack64(__m256i v0, __m256i v1, uint64_t keep,
                                                unsigned char *o)
{
    o += pack_shuffle(_mm256_castsi256_si128(v0), (unsigned)keep & 0xFFFF, o);
    o += pack_shuffle(_mm256_extracti128_si256(v0, 1), (unsigned)(keep >> 16) & 0xFFFF, o);
    o += pack_shuffle(_mm256_castsi256_si128(v1), (unsigned)(keep >> 32) & 0xFFFF, o);
    o += pack_shuffle(_mm256_extracti128_si256(v1, 1), (unsigned)(keep >> 48), o);
    return o;
}

/*
 * The whole blocks of 64 bytes of s[0..n) to o; returns where the output
 * ends and leaves the state for the bytes after them. Per block: the
 * backslashes say which bytes are escaped, the quotes that are not say where
 * strings are (bit k set for the bytes after an odd number of them: a
 * carry-less multiplication by all ones), and the whitespace outside them
 * goes. In valid JSON a byte below '!' outside a string is whitespace, and
 * no byte from 0x80 is outside one: a signed comparison finds them.
 */
AVX2_TARGET static unsigned char *compact_avx2(struct ar_json_compactor *st, const unsigned char *s,
                                               size_t n, unsigned char *o)
{
    uint64_t in_string = st->in_string ? ~(uint64_t)0 : 0, odd = (uint64_t)st->escaped;
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
    __m256i space = _mm256_set1_epi8('!');
    /* Hidden from the compiler, which would otherwise make the one signed
     * comparison below into two (a minimum and an equality). */
    __asm__("" : "+x"(space));
    for (size_t i = 0; i + 64 <= n; i += 64) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32));
        __m256i b0 = _mm256_cmpeq_epi8(v0, backslash), b1 = _mm256_cmpeq_epi8(v1, backslash);
        uint64_t escaped = odd;
        if (_mm256_testz_si256(_mm256_or_si256(b0, b1), _mm256_or_si256(b0, b1)))
            odd = 0;
        else
            escaped = escaped_bytes(ar_bits64(b0, b1), &odd);
        uint64_t q =
            ar_bits64(_mm256_cmpeq_epi8(v0, quote), _mm256_cmpeq_epi8(v1, quote)) & ~escaped;
        uint64_t in = ar_prefix_xor64(q) ^ in_string;
        in_string = (uint64_t)((int64_t)in >> 63);
        uint64_t drop = ar_bits64(_mm256_cmpgt_epi8(space, v0), _mm256_cmpgt_epi8(space, v1)) & ~in;
        if (!drop) {
            _mm256_storeu_si256((__m256i *)(void *)o, v0);
            _mm256_storeu_si256((__m256i *)(void *)(o + 32), v1);
            o += 64;
        } else {
            o = pack64(v0, v1, ~drop, o);
        }
    }
    st->in_string = in_string != 0;
    st->escaped = (int)odd;
    return o;
}
#endif

int ar_json_compact_use_avx2(int on)
{
#ifdef AR_COMPACT_AVX2
    avx2_off = !on;
    return on && ar_cpu_avx2();
#else
    (void)on;
    return 0;
#endif
}

int ar_json_compact(struct ar_json_compactor *st, const char *text, size_t n, struct ar_buf *out)
{
    /* The output never runs ahead of the input, so a whole block may be
     * stored before its tail is known: room for n bytes is enough. */
    int rc = ar_buf_reserve(out, n);
    if (rc)
        return rc;
    const unsigned char *s = (const unsigned char *)text;
    unsigned char *o0 = (unsigned char *)out->data + out->len, *o = o0;
    size_t i = 0;
#ifdef AR_PACK_SHUFFLE
    /* Before any path: the AVX2 one packs with the table too. */
    pthread_once(&pack_once, pack_init);
#endif
#ifdef AR_COMPACT_AVX2
    if (n >= 64 && !avx2_off && ar_cpu_avx2()) {
        o = compact_avx2(st, s, n, o);
        i = n & ~(size_t)63;
    }
#endif
    /* The rest as a piece of its own: the state says how it begins. */
    o = compact_piece(st, s + i, n - i, o);
    out->len += (size_t)(o - o0);
    out->data[out->len] = '\0';
    return 0;
}
