/*
 * Finding the next byte of a class, a block of bytes at a time: 16 with SSE2
 * (every x86-64), 8 in a 64-bit word on other little-endian machines, one at
 * a time elsewhere. The scanner and the compactor spend most of their time in
 * these searches; everything else in src/json goes a byte at a time.
 *
 * A class test gives a block that marks its bytes (all bits of a byte with
 * SSE2, the top bit of a byte in a word); ar_block_bits() turns marks into a
 * mask whose first set bit is the first marked byte. Internal to src/json.
 */
#ifndef AR_JSON_BYTES_H
#define AR_JSON_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>

#define AR_BLOCK 16
typedef __m128i ar_block;
typedef unsigned ar_block_mask;

static inline ar_block ar_block_load(const unsigned char *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

static inline void ar_block_store(unsigned char *p, ar_block v)
{
    _mm_storeu_si128((__m128i *)(void *)p, v);
}

/* Marks the bytes equal to c. */
static inline ar_block ar_block_eq(ar_block v, unsigned char c)
{
    return _mm_cmpeq_epi8(v, _mm_set1_epi8((char)c));
}

/* Marks the bytes <= c (c < 0x80). */
static inline ar_block ar_block_le(ar_block v, unsigned char c)
{
    __m128i k = _mm_set1_epi8((char)c);
    return _mm_cmpeq_epi8(_mm_max_epu8(v, k), k);
}

static inline ar_block ar_block_or(ar_block a, ar_block b)
{
    return _mm_or_si128(a, b);
}

/* Marks the bytes below 0x20 or from 0x80: one signed comparison, as bytes
 * from 0x80 are negative. */
static inline ar_block ar_block_ctrl_or_high(ar_block v)
{
    return _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
}

/* The marks as a mask, bit k for byte k. A block's own bytes >= 0x80 count
 * as marked: or the block itself in to find them. */
static inline ar_block_mask ar_block_bits(ar_block marks)
{
    return (ar_block_mask)_mm_movemask_epi8(marks);
}

/* The index of the first marked byte of a non-zero mask. */
static inline size_t ar_block_first(ar_block_mask m)
{
    return (size_t)__builtin_ctz(m);
}

/* The mask without the marks of bytes 0..k. */
static inline ar_block_mask ar_block_after(ar_block_mask m, size_t k)
{
    return k + 1 >= AR_BLOCK ? 0 : m & (~0u << (k + 1));
}

#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__

#define AR_BLOCK 8
typedef uint64_t ar_block;
typedef uint64_t ar_block_mask;

#define AR_BLOCK_ONES  0x0101010101010101u
#define AR_BLOCK_LOWS  0x7F7F7F7F7F7F7F7Fu
#define AR_BLOCK_HIGHS 0x8080808080808080u

static inline ar_block ar_block_load(const unsigned char *p)
{
    ar_block v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void ar_block_store(unsigned char *p, ar_block v)
{
    memcpy(p, &v, sizeof(v));
}

/* Exact per byte: adding within the low seven bits never carries into the next byte. */
static inline ar_block ar_block_eq(ar_block v, unsigned char c)
{
    ar_block x = v ^ (AR_BLOCK_ONES * c);
    return ~(((x & AR_BLOCK_LOWS) + AR_BLOCK_LOWS) | x) & AR_BLOCK_HIGHS;
}

static inline ar_block ar_block_le(ar_block v, unsigned char c)
{
    return ~(((v & AR_BLOCK_LOWS) + AR_BLOCK_ONES * (0x7Fu - c)) | v) & AR_BLOCK_HIGHS;
}

static inline ar_block ar_block_or(ar_block a, ar_block b)
{
    return a | b;
}

/* Marks the bytes below 0x20 or from 0x80 (the top bit of a byte is its mark). */
static inline ar_block ar_block_ctrl_or_high(ar_block v)
{
    return ar_block_le(v, 0x1F) | v;
}

static inline ar_block_mask ar_block_bits(ar_block marks)
{
    return marks & AR_BLOCK_HIGHS;
}

static inline size_t ar_block_first(ar_block_mask m)
{
    return (size_t)__builtin_ctzll(m) / 8;
}

static inline ar_block_mask ar_block_after(ar_block_mask m, size_t k)
{
    return k + 1 >= AR_BLOCK ? 0 : m & (~(uint64_t)0 << (8 * (k + 1)));
}

#else
#define AR_BLOCK 0
#endif

/* The bytes that end a run of plain string characters: a quote, a backslash,
 * a control byte, or a byte of a multi-byte UTF-8 sequence. */
static inline int ar_byte_string_special(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

static inline int ar_byte_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The first byte of s[i..n) that is special in a string (above), or n. */
static inline size_t ar_bytes_string_special(const unsigned char *s, size_t i, size_t n)
{
#if AR_BLOCK
    for (; i + AR_BLOCK <= n; i += AR_BLOCK) {
        ar_block v = ar_block_load(s + i);
        ar_block_mask m = ar_block_bits(ar_block_or(
            ar_block_or(ar_block_eq(v, '"'), ar_block_eq(v, '\\')), ar_block_ctrl_or_high(v)));
        if (m)
            return i + ar_block_first(m);
    }
#endif
    while (i < n && !ar_byte_string_special(s[i]))
        i++;
    return i;
}

/* The first byte of s[i..n) that is special in a string, or n; *quote is set
 * when that byte is the closing quote (told from the masks, not read again:
 * short strings are most of a record's tokens). */
static inline size_t ar_bytes_string_end(const unsigned char *s, size_t i, size_t n, int *quote)
{
#if AR_BLOCK
    for (; i + AR_BLOCK <= n; i += AR_BLOCK) {
        ar_block v = ar_block_load(s + i);
        ar_block q = ar_block_eq(v, '"');
        ar_block_mask m = ar_block_bits(
            ar_block_or(ar_block_or(q, ar_block_eq(v, '\\')), ar_block_ctrl_or_high(v)));
        if (m) {
            *quote = (ar_block_bits(q) & m & (0 - m)) != 0;
            return i + ar_block_first(m);
        }
    }
#endif
    while (i < n && !ar_byte_string_special(s[i]))
        i++;
    *quote = i < n && s[i] == '"';
    return i;
}

/* The first byte of s[i..n) that is a or b, or n: one pass for two characters
 * (memchr would make two). */
static inline size_t ar_bytes_find2(const unsigned char *s, size_t i, size_t n, unsigned char a,
                                    unsigned char b)
{
#if AR_BLOCK
    /* Long prose mostly holds neither: four blocks a test. */
    for (; i + 4 * AR_BLOCK <= n; i += 4 * AR_BLOCK) {
        ar_block v0 = ar_block_load(s + i), v1 = ar_block_load(s + i + AR_BLOCK);
        ar_block v2 = ar_block_load(s + i + 2 * AR_BLOCK), v3 = ar_block_load(s + i + 3 * AR_BLOCK);
        ar_block m01 = ar_block_or(ar_block_or(ar_block_eq(v0, a), ar_block_eq(v0, b)),
                                   ar_block_or(ar_block_eq(v1, a), ar_block_eq(v1, b)));
        ar_block m23 = ar_block_or(ar_block_or(ar_block_eq(v2, a), ar_block_eq(v2, b)),
                                   ar_block_or(ar_block_eq(v3, a), ar_block_eq(v3, b)));
        if (ar_block_bits(ar_block_or(m01, m23)))
            break;
    }
    for (; i + AR_BLOCK <= n; i += AR_BLOCK) {
        ar_block v = ar_block_load(s + i);
        ar_block_mask m = ar_block_bits(ar_block_or(ar_block_eq(v, a), ar_block_eq(v, b)));
        if (m)
            return i + ar_block_first(m);
    }
#endif
    while (i < n && s[i] != a && s[i] != b)
        i++;
    return i;
}

/* The first '"' or '\\' of s[i..n), or n. */
static inline size_t ar_bytes_quote_or_backslash(const unsigned char *s, size_t i, size_t n)
{
#if AR_BLOCK
    for (; i + AR_BLOCK <= n; i += AR_BLOCK) {
        ar_block v = ar_block_load(s + i);
        ar_block_mask m = ar_block_bits(ar_block_or(ar_block_eq(v, '"'), ar_block_eq(v, '\\')));
        if (m)
            return i + ar_block_first(m);
    }
#endif
    while (i < n && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

/* The first byte of s[i..n) that is not JSON whitespace, or n. Runs between
 * tokens are short, and mostly spaces after a newline (an indent): eight
 * bytes are compared with eight spaces at once. */
static inline size_t ar_bytes_skip_ws(const unsigned char *s, size_t i, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (i + 8 <= n) {
        uint64_t v;
        memcpy(&v, s + i, sizeof(v));
        v ^= 0x2020202020202020u; /* a space becomes a zero byte */
        if (!v) {
            i += 8;
            continue;
        }
        i += (size_t)__builtin_ctzll(v) / 8;
        if (!ar_byte_ws(s[i]))
            return i;
        i++; /* a newline, a tab or a carriage return */
    }
#endif
    while (i < n && ar_byte_ws(s[i]))
        i++;
    return i;
}

/*
 * 64 bytes at a time with AVX2, for the paths a caller takes where
 * ar_cpu_avx2() says the CPU runs them (the build stays baseline x86-64):
 * functions that use these carry AR_AVX2, the features that check asks for.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AR_AVX2 __attribute__((target("avx2,bmi,bmi2,pclmul,popcnt")))

/* The marks of the 64 bytes lo and hi hold, as a mask: bit k for byte k. */
AR_AVX2 static inline uint64_t ar_bits64(__m256i lo, __m256i hi)
{
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(lo) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32;
}

/* Bit k set when an odd number of bits 0..k of m are (with m the quotes: the
 * bytes from an opening quote to the one before its closing quote), by a
 * carry-less multiplication by all ones. */
AR_AVX2 static inline uint64_t ar_prefix_xor64(uint64_t m)
{
    return (uint64_t)_mm_cvtsi128_si64(
        _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)m), _mm_set1_epi8(-1), 0));
}
#endif

#endif
