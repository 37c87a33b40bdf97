/*
 * The block walker (src/json/scan_blocks.c) only spares the byte scanner the
 * plain stretches: every answer of ar_json_scan() with the walker taking over
 * at once (ar_json_walk_after = 0) is the answer without it (SIZE_MAX), to
 * the field: status, stop, open containers and their kinds, whitespace seen,
 * kind seen, reason, its byte, in a string or not. Checked on a corpus of
 * values where a walk must hand back (escapes, UTF-8, control bytes, errors,
 * the end of the range, deep nesting), each moved across the 64-byte blocks
 * and cut at every length; fuzz_scan checks the rule on what it generates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/scan.h"
#include "json/scan_blocks.h"
#include "util/buf.h"
#include "util/cpu.h"

struct answer {
    int rc;
    size_t stop, depth;
    int spaced, saw, in_string;
    const char *why;
    size_t why_at;
    uint64_t kinds[2];
};

static struct answer scan(const char *s, size_t n, int want, size_t after)
{
    struct answer a;
    struct ar_json_scanner sc;
    memset(&a, 0, sizeof(a));
    ar_json_walk_after = after;
    ar_json_scanner_init(&sc, want, 0);
    a.rc = ar_json_scan(&sc, s, 0, n, &a.stop);
    a.depth = sc.depth;
    a.spaced = sc.spaced;
    a.saw = sc.saw_want;
    a.in_string = sc.fail_in_string;
    a.why = sc.why;
    a.why_at = sc.why_at;
    for (size_t d = 0; d < sc.depth && d < 128; d++)
        a.kinds[d / 64] |= ((sc.kinds[d / 64] >> (d % 64)) & 1) << (d % 64);
    ar_json_scanner_finish(&sc);
    ar_json_walk_after = 256;
    return a;
}

static void same(const char *s, size_t n)
{
    static const int wants[] = { AR_KIND_OBJECT, AR_KIND_ARRAY, AR_KIND_OBJECT | AR_KIND_ARRAY };
    for (size_t w = 0; w < 3; w++) {
        struct answer a = scan(s, n, wants[w], 0), b = scan(s, n, wants[w], SIZE_MAX);
        int ok = a.rc == b.rc && a.stop == b.stop && a.depth == b.depth && a.spaced == b.spaced &&
                 a.saw == b.saw && a.in_string == b.in_string && a.why_at == b.why_at &&
                 (a.why == b.why || (a.why && b.why && strcmp(a.why, b.why) == 0)) &&
                 a.kinds[0] == b.kinds[0] && a.kinds[1] == b.kinds[1];
        if (!ok)
            fail_msg("walked and byte scans differ on %.*s (%zu bytes, want %d): rc %d/%d stop "
                     "%zu/%zu why %s/%s at %zu/%zu spaced %d/%d",
                     (int)(n < 200 ? n : 200), s, n, wants[w], a.rc, b.rc, a.stop, b.stop,
                     a.why ? a.why : "-", b.why ? b.why : "-", a.why_at, b.why_at, a.spaced,
                     b.spaced);
    }
}

/* Values whose walk must hand back somewhere: the body follows an opening
 * bracket and a run of spaces that moves it across the blocks. */
static const char *const bodies[] = {
    "\"a\": 1, \"b\": [1, 2.5, -3e2, true, false, null], \"c\": {\"d\": \"e\"}}",
    "\"k\": \"with \\\"escapes\\\" and \\\\ and \\u00e9 and \\ud83d\\ude00\"}",
    "\"k\": \"lone \\ud800 surrogate\"}",
    "\"k\": \"lone \\udc00 low\"}",
    "\"k\": \"bad \\x escape\"}",
    "\"k\": \"cut \\u12",
    "\"k\": \"caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80\"}",
    "\"k\": \"bad \xc3\x28 utf8\"}",
    "\"k\": \"overlong \xc0\xaf\"}",
    "\"k\": \"a\ttab\"}",
    "\"k\": \"a\nbreak\"}",
    "\"k\": \"ctrl \x01\"}",
    "\"k\":\t1,\r\n\"j\": 2}",
    "\"k\": 1 \x01}",
    "\"k\": 1,}",
    "\"k\" 1}",
    "\"k\": 1 2}",
    "\"k\": tru}",
    "\"k\": truex}",
    "\"k\": [true, false, null, nulls, falsey, trUe, talse, fals, nul, nulx]}",
    "\"k\": talse}",
    "\"k\": nulll}",
    "\"k\": fals}",
    "\"k\": 01}",
    "\"k\": 01.5}",
    "\"k\": 00.5}",
    "\"k\": 0.5, \"j\": 10.25, \"i\": 0, \"h\": 7}",
    "\"k\": 1.2.3}",
    "\"k\": 1..2}",
    "\"k\": .5}",
    "\"k\": 0.}",
    "\"k\": 1.5e3, \"j\": -0.5}",
    "\"k\": 1.}",
    "\"k\": -}",
    "\"k\": 1e5x}",
    "\"k\": [1, 2,]}",
    "\"k\": [1, 2}",
    "\"k\": {\"a\": 1]}",
    "1: 2}",
    "\"k\": \"v\"\"w\"}",
    "\"k\": \"v\" 3}",
    "\"k\": 3\"v\"}",
    "\"k\": /x/}",
    "\"k\": \"unterminated",
    "\"k\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]"
    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
    "\"k\": "
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]",
    "\"k\": \"v\"} trailing prose with caf\xc3\xa9 and a \\ backslash",
    "\"k\": \"v\"}} \"x\": 1}",
    "\"\xc3\xa9\": 1, \"k\": 2}",
    "\"k\": 12345678901234567890123, \"j\": 0.000000000000000000001}",
    "}",
    "\"k\": []}",
    "\"k\": {}}",
    "\"k\": [{}, [], [[]], {\"a\": {}}]}",
};

static void test_corpus_across_blocks(void **state)
{
    (void)state;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    for (size_t i = 0; i < sizeof(bodies) / sizeof(*bodies); i++) {
        for (size_t pad = 0; pad < 70; pad++) {
            ar_buf_reset(&b);
            ar_buf_puts(&b, "{");
            for (size_t p = 0; p < pad; p++)
                ar_buf_puts(&b, " ");
            ar_buf_puts(&b, bodies[i]);
            for (size_t n = 1; n <= b.len; n++) /* every cut, the whole last */
                same(b.data, n);
        }
    }
    ar_buf_finish(&b);
}

/* Records like a batch's, a rare byte planted at every offset of a block. */
static void test_records_with_planted_bytes(void **state)
{
    (void)state;
    static const char *const planted[] = { "\\n", "\xc3\xa9", "\\u00e9", "\t", "\x01", "\"",
                                           "\\",  "}",        "]",       ",",  " ",    "x" };
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    for (size_t p = 0; p < sizeof(planted) / sizeof(*planted); p++) {
        for (size_t at = 600; at < 600 + 130; at++) {
            ar_buf_reset(&b);
            ar_buf_puts(&b, "[\n");
            for (size_t k = 0; k < 20; k++)
                ar_buf_printf(&b,
                              "%s  {\"id\": %zu, \"score\": 0.%04zu, \"ok\": %s, \"label\": "
                              "\"item-%zu\", \"tags\": [\"a\", \"b\"]}",
                              k ? ",\n" : "", 100000 + k, k * 7919 % 10000,
                              k % 3 ? "true" : "false", k);
            ar_buf_puts(&b, "\n]");
            char *s = b.data;
            size_t len = strlen(planted[p]);
            if (at + len < b.len)
                memcpy(s + at, planted[p], len);
            same(s, b.len);
            same(s, at + len < b.len ? at + len : b.len); /* cut just after it */
        }
    }
    ar_buf_finish(&b);
}

/* The walker does take plain values to their end: it is not a byte scanner
 * that always hands back. */
static void test_walker_takes_plain_values(void **state)
{
    (void)state;
    if (!ar_cpu_avx2())
        skip();
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_puts(&b, "[");
    for (size_t k = 0; k < 100; k++)
        ar_buf_printf(&b, "%s{\"id\": %zu, \"ok\": true, \"no\": false, \"tags\": [\"x\", null]}",
                      k ? ", " : "", k);
    ar_buf_puts(&b, "] and then prose");
    struct ar_json_walk_state w = { 1, 1, 1, 0, 0 };
    assert_int_equal(ar_json_walk(b.data, b.len, AR_KIND_OBJECT, &w), AR_WALK_DONE);
    assert_int_equal(w.at, b.len - strlen(" and then prose"));
    assert_int_equal(w.depth, 0);
    assert_true(w.spaced);
    assert_true(w.saw);
    ar_buf_finish(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_across_blocks),
        cmocka_unit_test(test_records_with_planted_bytes),
        cmocka_unit_test(test_walker_takes_plain_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
