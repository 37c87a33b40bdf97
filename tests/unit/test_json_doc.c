/* Unit tests of src/json/doc: strict parsing, the text as written, exact numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "json/doc.h"
#include "json/scan.h"
#include "util/buf.h"
#include "util/json_dump.h"

/* Valid documents and their compact text: whitespace between tokens goes,
 * every string and number stays as written. Written here in the manner of
 * JSONTestSuite's y_ files. */
static const struct {
    const char *in;
    const char *text;
} valid[] = {
    { "[]", "[]" },
    { " { } ", "{}" },
    { "[12345678901234567890]", "[12345678901234567890]" },
    { "[-12345678901234567890123]", "[-12345678901234567890123]" },
    { "[-0]", "[-0]" },
    { "[-0.0, 0e0, 0E+0, 0e-0]", "[-0.0,0e0,0E+0,0e-0]" },
    { "[20e1, 1.50, 1E400, -1e-400]", "[20e1,1.50,1E400,-1e-400]" },
    { "{\"foo\\u0000bar\": 42}", "{\"foo\\u0000bar\":42}" },
    { "{\"a\": \"\\u00e9\\/\\ud83d\\ude00\"}", "{\"a\":\"\\u00e9\\/\\ud83d\\ude00\"}" },
    { "[\"\xc3\xa9\", true, false, null]", "[\"\xc3\xa9\",true,false,null]" },
    { "{\"z\":1,\"a\":2}", "{\"z\":1,\"a\":2}" },
    { "\t[\r\n1\n,\n2\n]\n", "[1,2]" },
    { "\"scalar\"", "\"scalar\"" },
    { "9223372036854775807", "9223372036854775807" },
};

/* Invalid documents (JSONTestSuite's n_ kind). */
static const char *const invalid[] = {
    "",
    "[",
    "[1,]",
    "[01]",
    "[.5]",
    "[1.]",
    "[1e]",
    "[+1]",
    "[0x1]",
    "[NaN]",
    "[Infinity]",
    "{\"a\" 1}",
    "{'a': 1}",
    "{a: 1}",
    "[\"\\x\"]",
    "[\"\\u12\"]",
    "[\"\\ud800\"]",
    "[\"\\udc00\\ud800\"]",
    "[\"a\nb\"]",
    "[\"\xff\"]",
    "[\"\xc3\"]",
    "[1] x",
    "[1]]",
    "{\"a\": 1]",
    "[tru]",
    "[True]",
    "\xef\xbb\xbf[]",
};

static void test_doc_valid_text_as_written(void **state)
{
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
        struct ar_json_doc d;
        struct ar_error err = AR_ERROR_INIT;
        if (ar_json_doc_parse(&d, valid[i].in, strlen(valid[i].in), &err) != 0)
            fail_msg("'%s': %s", valid[i].in, err.msg);
        if (strcmp(d.text, valid[i].text) != 0 || d.len != strlen(valid[i].text))
            fail_msg("'%s': text '%s'", valid[i].in, d.text);
        ar_json_doc_finish(&d);
    }
}

static void test_doc_invalid_is_refused_with_a_position(void **state)
{
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        struct ar_json_doc d;
        struct ar_error err = AR_ERROR_INIT;
        if (ar_json_doc_parse(&d, invalid[i], strlen(invalid[i]), &err) != AR_ENOJSON)
            fail_msg("'%s' was accepted", invalid[i]);
        assert_non_null(strstr(err.msg, "at byte"));
        assert_null(d.value);
    }
}

static void test_doc_values_and_lexemes(void **state)
{
    const char *t = "{\"big\": 12345678901234567890, \"neg0\": -0, \"i\": 7, \"r\": 1.50,"
                    " \"huge\": 1e400, \"k\\u0000\": 1}";
    struct ar_json_doc d;
    assert_int_equal(ar_json_doc_parse(&d, t, strlen(t), NULL), 0);
    size_t n;
    json_t *big = json_object_get(d.value, "big");
    assert_true(json_is_real(big));
    const char *lex = ar_json_doc_lexeme(&d, big, &n);
    assert_non_null(lex);
    assert_int_equal(n, 20);
    assert_memory_equal(lex, "12345678901234567890", 20);
    json_t *neg0 = json_object_get(d.value, "neg0");
    assert_true(json_is_real(neg0));
    lex = ar_json_doc_lexeme(&d, neg0, &n);
    assert_int_equal(n, 2);
    assert_memory_equal(lex, "-0", 2);
    /* An integer jansson holds exactly has no recorded spelling. */
    json_t *i = json_object_get(d.value, "i");
    assert_true(json_is_integer(i));
    assert_null(ar_json_doc_lexeme(&d, i, &n));
    assert_true(json_real_value(json_object_get(d.value, "huge")) == DBL_MAX);
    /* The NUL-bearing key is held whole. */
    assert_non_null(json_object_getn(d.value, "k\0", 2));
    assert_null(json_object_get(d.value, "k"));
    ar_json_doc_finish(&d);
    ar_json_doc_finish(&d); /* finish twice is harmless */
}

static void test_doc_depth_is_bounded(void **state)
{
    size_t depth = AR_JSON_MAX_DEPTH + 1;
    char *t = malloc(2 * depth);
    memset(t, '[', depth);
    memset(t + depth, ']', depth);
    struct ar_json_doc d;
    assert_int_equal(ar_json_doc_parse(&d, t, 2 * depth, NULL), AR_ENOJSON);
    assert_int_equal(ar_json_doc_parse(&d, t + 1, 2 * depth - 2, NULL), 0);
    ar_json_doc_finish(&d);
    free(t);
}

/* The compact text comes out the same however the value is cut into pieces:
 * strings with escaped quotes, spaces in and out of strings, runs long enough
 * for the block-wise paths, a cut after a backslash. */
static void test_compact_in_any_pieces(void **state)
{
    static const char *const docs[] = {
        "{ \"a b\" : [ 1 , 2 ] ,\n  \"q\\\"x\\\\\" : \"  spaces  inside  \" }",
        "[\n    {\"id\": 1, \"text\": \"a long string with \\\" quotes \\\\ and spaces in it\"},\n"
        "    {\"id\": 2,\t\"ok\": true , \"none\" : null}\r\n]",
        "{\"k\":\"\\u00e9\\n\",\"v\":[[],{},\"}{][\"]}",
        /* Longer than four blocks: strings with spaces across block edges,
         * whitespace runs across them, an escape here and there. */
        "[\n  {\"id\": 100000, \"rank\": 5, \"score\": 0.1234, \"ok\": true, \"label\": "
        "\"ranked item   with   spaces   that runs over the edge of a block\"},\n  {\"id\": "
        "100001, \"rank\": 6, \"score\": 0.5678, \"ok\": false, \"label\": \"a \\\" b\"},"
        "\n      \t  {\"s\": \"                                                                 "
        "     \", \"t\" :   [ 1 ,   2 ]   }\n]",
    };
    for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
        struct ar_json_doc doc;
        size_t n = strlen(docs[d]);
        assert_int_equal(ar_json_doc_parse(&doc, docs[d], n, NULL), 0);
        for (size_t piece = 1; piece <= n; piece++) {
            struct ar_json_compactor st = AR_JSON_COMPACTOR_INIT;
            struct ar_buf b;
            ar_buf_init(&b, AR_BUF_UNLIMITED);
            for (size_t at = 0; at < n; at += piece)
                assert_int_equal(
                    ar_json_compact(&st, docs[d] + at, n - at < piece ? n - at : piece, &b), 0);
            if (strcmp(ar_buf_cstr(&b), doc.text) != 0)
                fail_msg("doc %zu in pieces of %zu: '%s', want '%s'", d, piece, ar_buf_cstr(&b),
                         doc.text);
            ar_buf_finish(&b);
        }
        ar_json_doc_finish(&doc);
    }
}

/* ---- the AVX2 compactor against the portable one ------------------------------------- */

static unsigned rnd(unsigned *seed, unsigned n)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) % n;
}

/* Whitespace between tokens: none, each kind, and runs long enough to fill
 * a 64-byte block or to cross one. */
static void gen_ws(struct ar_buf *b, unsigned *seed)
{
    static const char *const ws[] = { "", "", " ", "\n", "\t", "\r\n", "\n    ", " \t\r\n" };
    unsigned k = rnd(seed, 10);
    if (k < 8) {
        ar_buf_puts(b, ws[k]);
        return;
    }
    for (unsigned n = 20 + rnd(seed, 120); n; n--)
        ar_buf_puts(b, ws[2 + rnd(seed, 6)]);
}

/* A string whose pieces are what makes the in-string state hard to follow:
 * escaped quotes after runs of escaped backslashes (\\\" and \\\\\\\"), a
 * string ending in an escaped backslash, spaces and whitespace escapes, raw
 * UTF-8, \u escapes, and long plain runs that carry it over block edges. */
static void gen_string(struct ar_buf *b, unsigned *seed)
{
    static const char *const bits[] = { "a",      " ",       "\\\"",     "\\\\",         "\\\\\\\"",
                                        "\\n",    "\\t",     "\xc3\xa9", "\xe2\x82\xac", "\\u00e9",
                                        "{[,:]}", "  \\\\ ", "\\/",      "\\\\\\\\\\\"" };
    ar_buf_putc(b, '"');
    for (unsigned n = rnd(seed, 12); n; n--) {
        unsigned k = rnd(seed, 16);
        if (k < 14) {
            ar_buf_puts(b, bits[k]);
        } else if (k == 14) { /* a run of escaped backslashes, then maybe a quote */
            for (unsigned r = rnd(seed, 70); r; r--)
                ar_buf_puts(b, "\\\\");
            if (rnd(seed, 2))
                ar_buf_puts(b, "\\\"");
        } else {
            for (unsigned r = rnd(seed, 90); r; r--)
                ar_buf_putc(b, (char)(rnd(seed, 2) ? ' ' : 'x'));
        }
    }
    ar_buf_putc(b, '"');
}

static void gen_value(struct ar_buf *b, unsigned *seed, int depth)
{
    static const char *const atoms[] = { "1", "-0.5e+3", "true", "false", "null", "12345678" };
    unsigned k = depth > 4 ? rnd(seed, 3) : rnd(seed, 5);
    if (k == 0) {
        ar_buf_puts(b, atoms[rnd(seed, 6)]);
    } else if (k <= 2) {
        gen_string(b, seed);
    } else {
        int obj = k == 3;
        ar_buf_putc(b, obj ? '{' : '[');
        for (unsigned n = rnd(seed, 6), i = 0; i < n; i++) {
            if (i)
                ar_buf_putc(b, ',');
            gen_ws(b, seed);
            if (obj) {
                gen_string(b, seed);
                gen_ws(b, seed);
                ar_buf_putc(b, ':');
                gen_ws(b, seed);
            }
            gen_value(b, seed, depth + 1);
            gen_ws(b, seed);
        }
        ar_buf_putc(b, obj ? '}' : ']');
    }
}

/* s[0..n) compacted in pieces cut at `cut` and then every `piece` bytes. */
static char *compact_cut(const char *s, size_t n, size_t cut, size_t piece)
{
    struct ar_json_compactor st = AR_JSON_COMPACTOR_INIT;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t at = 0;
    if (cut) {
        assert_int_equal(ar_json_compact(&st, s, cut, &b), 0);
        at = cut;
    }
    for (; at < n; at += piece)
        assert_int_equal(ar_json_compact(&st, s + at, n - at < piece ? n - at : piece, &b), 0);
    return ar_buf_detach(&b, NULL);
}

/* The AVX2 compactor gives what the portable one gives, byte for byte, on
 * random valid documents shifted to every offset of a 64-byte block, whole
 * and cut at every offset (an escape or a quote across a piece's end and a
 * block's), and in pieces of every size around a block's. */
static void test_compact_avx2_is_the_portable_one(void **state)
{
    if (!ar_json_compact_use_avx2(1))
        skip(); /* nothing to compare on this machine */
    unsigned seed = 32;
    struct ar_buf doc;
    ar_buf_init(&doc, AR_BUF_UNLIMITED);
    for (int round = 0; round < 1000; round++) {
        ar_buf_reset(&doc);
        for (unsigned shift = rnd(&seed, 64); shift; shift--)
            ar_buf_putc(&doc, ' ');
        gen_value(&doc, &seed, 0);
        gen_ws(&doc, &seed);
        struct ar_json_doc d;
        if (ar_json_doc_parse(&d, doc.data, doc.len, NULL) != 0)
            fail_msg("the generator wrote invalid JSON: %s", doc.data);
        ar_json_doc_finish(&d);
        size_t n = doc.len;
        static const size_t pieces[] = { 1, 31, 63, 64, 65, 100, 127, 128, 129, 65536 };
        for (size_t c = 0; c <= n + sizeof(pieces) / sizeof(pieces[0]); c++) {
            /* every cut with the rest whole, then every size of piece */
            size_t cut = c <= n ? c : 0, piece = c <= n ? n : pieces[c - n - 1];
            if (c <= n && (round >= 100 || n > 4000) && c % 61 != 0)
                continue; /* every cut of the first documents, a sample of the others */
            ar_json_compact_use_avx2(0);
            char *want = compact_cut(doc.data, n, cut, piece);
            ar_json_compact_use_avx2(1);
            char *got = compact_cut(doc.data, n, cut, piece);
            if (strcmp(got, want) != 0)
                fail_msg("round %d, cut %zu, pieces of %zu: '%s', want '%s' (from '%s')", round,
                         cut, piece, got, want, doc.data);
            free(want);
            free(got);
        }
    }
    ar_buf_finish(&doc);
}

/* Runs of backslashes of every length ending at every offset of a block
 * and across blocks, in pieces or not: an odd run escapes the quote after
 * it, an even one does not. */
static void test_compact_avx2_backslash_runs(void **state)
{
    if (!ar_json_compact_use_avx2(1))
        skip();
    struct ar_buf doc;
    ar_buf_init(&doc, AR_BUF_UNLIMITED);
    for (size_t pad = 0; pad < 64; pad++)
        for (size_t run = 0; run < 140; run++) {
            ar_buf_reset(&doc);
            ar_buf_puts(&doc, "[\"");
            for (size_t k = 0; k < pad; k++)
                ar_buf_putc(&doc, 'x');
            for (size_t k = 0; k < 2 * run; k++)
                ar_buf_putc(&doc, '\\');
            ar_buf_puts(&doc, run % 2 ? "\\\"  \" ,  1 ]" : "\\\\\"  ,  \" a \" ]");
            for (size_t k = 0; k < 64; k++)
                ar_buf_putc(&doc, ' ');
            static const size_t pieces[] = { 64, 65, 65536 };
            for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++) {
                size_t piece = pieces[p];
                ar_json_compact_use_avx2(0);
                char *want = compact_cut(doc.data, doc.len, 0, piece);
                ar_json_compact_use_avx2(1);
                char *got = compact_cut(doc.data, doc.len, 0, piece);
                if (strcmp(got, want) != 0)
                    fail_msg("pad %zu, run %zu: '%s', want '%s'", pad, run, got, want);
                free(want);
                free(got);
            }
        }
    ar_buf_finish(&doc);
}

/* What the recognizer says of a value whose syntax is whole but that is not
 * JSON agentrun accepts: where it ends, and why it is refused. */
static void test_scan_whole_but_invalid(void **state)
{
    static const struct {
        const char *in;
        const char *why;
    } cases[] = {
        { "[\"\xff\", 1] x", "invalid UTF-8 in a string" },
        { "[\"\\ud800\", 1] x", "lone high surrogate escape" },
        { "{\"\\udc00\": 1} x", "lone low surrogate escape" },
    };
    struct ar_json_scanner sc;
    ar_json_scanner_init(&sc, AR_KIND_OBJECT, 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t stop, n = strlen(cases[i].in);
        assert_int_equal(ar_json_scan(&sc, cases[i].in, 0, n, &stop), AR_SCAN_INVALID);
        assert_int_equal(stop, n - 2);
        assert_string_equal(sc.why, cases[i].why);
    }
    /* A raw newline in a string fails inside the string. */
    size_t stop;
    assert_int_equal(ar_json_scan(&sc, "{\"a\": \"x\ny\"}", 0, 12, &stop), AR_SCAN_FAIL);
    assert_int_equal(stop, 8);
    assert_true(sc.fail_in_string);
    ar_json_scanner_finish(&sc);
}

/* Numbers and literals (read eight digits and one word at a time) and the
 * ": " and ", " between tokens (taken in one test): what the recognizer says
 * where the blocks end, where the range is cut and where a byte just outside
 * the digits' range follows. The expectations are what the byte-at-a-time
 * recognizer said (tests/fuzz/scan_ref.c; fuzz_scan compares the two). */
static void test_scan_numbers_and_separators(void **state)
{
    static const struct {
        const char *in;
        int rc;
        size_t stop;
        int spaced;
        const char *why;
    } cases[] = {
        { "[12345678]", AR_SCAN_COMPLETE, 10, 0, NULL },
        { "[123456789012345678,1]", AR_SCAN_COMPLETE, 22, 0, NULL },
        { "[12345678:", AR_SCAN_FAIL, 9, 0, "expected ',' or a closing bracket" },
        { "[1234567/]", AR_SCAN_FAIL, 8, 0, "expected ',' or a closing bracket" },
        { "[0.12345678\xb9]", AR_SCAN_FAIL, 11, 0, "expected ',' or a closing bracket" },
        { "[12345678", AR_SCAN_EOF, 9, 0, NULL },
        { "[1.", AR_SCAN_EOF, 3, 0, NULL },
        { "[1.x]", AR_SCAN_FAIL, 3, 0, "invalid number" },
        { "[-]", AR_SCAN_FAIL, 2, 0, "invalid number" },
        { "[1e+]", AR_SCAN_FAIL, 4, 0, "invalid number" },
        { "[1E-123456789]", AR_SCAN_COMPLETE, 14, 0, NULL },
        { "[tru", AR_SCAN_EOF, 4, 0, NULL },
        { "[trux]", AR_SCAN_FAIL, 4, 0, "invalid literal" },
        { "[fals]", AR_SCAN_FAIL, 5, 0, "invalid literal" },
        { "[false,null]", AR_SCAN_COMPLETE, 12, 0, NULL },
        { "[truefalse]", AR_SCAN_FAIL, 5, 0, "expected ',' or a closing bracket" },
        { "{\"a\": 1}", AR_SCAN_COMPLETE, 8, 1, NULL },
        { "{\"a\":1}", AR_SCAN_COMPLETE, 7, 0, NULL },
        { "{\"a\": ", AR_SCAN_EOF, 6, 1, NULL },
        { "{\"a\":  1}", AR_SCAN_COMPLETE, 9, 1, NULL },
        { "{\"a\": \x01}", AR_SCAN_FAIL, 6, 1, "expected a value" },
        { "[1, 2]", AR_SCAN_COMPLETE, 6, 1, NULL },
        { "[1,2]", AR_SCAN_COMPLETE, 5, 0, NULL },
        { "[1, ]", AR_SCAN_FAIL, 4, 1, "expected a value" },
        { "{\"a\":1, }", AR_SCAN_FAIL, 8, 1, "expected a string key" },
        { "[1, ", AR_SCAN_EOF, 4, 1, NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_json_scanner sc;
        size_t stop = 0, n = strlen(cases[i].in);
        ar_json_scanner_init(&sc, AR_KIND_OBJECT | AR_KIND_ARRAY, 0);
        int rc = ar_json_scan(&sc, cases[i].in, 0, n, &stop);
        if (rc != cases[i].rc || stop != cases[i].stop || sc.spaced != cases[i].spaced ||
            (cases[i].why ? !sc.why || strcmp(sc.why, cases[i].why) != 0 : sc.why != NULL))
            fail_msg("'%s': %d at %zu spaced %d (%s), want %d at %zu spaced %d (%s)", cases[i].in,
                     rc, stop, sc.spaced, sc.why ? sc.why : "-", cases[i].rc, cases[i].stop,
                     cases[i].spaced, cases[i].why ? cases[i].why : "-");
        ar_json_scanner_finish(&sc);
    }
}

static int cmp(const char *a, const char *b)
{
    return ar_json_number_cmp(a, strlen(a), b, strlen(b));
}

static void test_number_cmp_is_exact(void **state)
{
    assert_int_equal(cmp("12345678901234567890", "12345678901234567889"), 1);
    assert_int_equal(cmp("12345678901234567889", "12345678901234567890"), -1);
    assert_int_equal(cmp("1.50", "15e-1"), 0);
    assert_int_equal(cmp("-0", "0.0"), 0);
    assert_int_equal(cmp("1e-400", "0"), 1);
    assert_int_equal(cmp("-1e-400", "0"), -1);
    assert_int_equal(cmp("-2", "-10"), 1);
    assert_int_equal(cmp("100", "1e2"), 0);
    assert_int_equal(cmp("0.001", "1e-3"), 0);
    assert_int_equal(cmp("9007199254740993", "9007199254740992"), 1);
    assert_int_equal(cmp("1e99999999999999999999999", "1e400"), 1);
    assert_int_equal(cmp("0.1", "0.1000000000000000055511151231257827"), -1);
    json_t *third = json_real(0.1);
    char exact[AR_JSON_NUMBER_EXACT];
    size_t n = ar_json_number_exact(third, exact);
    /* 0.1 as a double is a little more than 0.1. */
    assert_int_equal(ar_json_number_cmp("0.1", 3, exact, n), -1);
    json_decref(third);
}

static void test_number_integral(void **state)
{
    assert_true(ar_json_number_is_integral("3", 1));
    assert_true(ar_json_number_is_integral("3.0", 3));
    assert_true(ar_json_number_is_integral("25e-1", 5) == 0);
    assert_true(ar_json_number_is_integral("2.5e1", 5));
    assert_true(ar_json_number_is_integral("-0", 2));
    assert_true(ar_json_number_is_integral("1e-400", 6) == 0);
    assert_true(ar_json_number_is_integral("12345678901234567890", 20));
}

/* The RunResult's pretty form is its compact text indented as jansson would,
 * with the model's value spliced in as written. */
static void test_dump_raw_and_indent(void **state)
{
    const char *t = "{\"a\":[1,{\"b\":[]},{}],\"c\":\"x,:{}\\\"\",\"d\":{\"e\":null}}";
    json_t *v = json_loads(t, 0, NULL);
    char *want = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_json_text_indent(t, strlen(t), 2, &b), 0);
    assert_string_equal(ar_buf_cstr(&b), want);
    free(want);

    struct ar_json_doc d;
    const char *model = "[12345678901234567890, -0]";
    assert_int_equal(ar_json_doc_parse(&d, model, strlen(model), NULL), 0);
    json_t *outer = json_pack("{s:O,s:i}", "json", d.value, "n", 1);
    ar_buf_reset(&b);
    assert_int_equal(ar_json_dump_compact_raw(outer, d.value, d.text, &b), 0);
    assert_string_equal(ar_buf_cstr(&b), "{\"json\":[12345678901234567890,-0],\"n\":1}");
    json_decref(outer);
    json_decref(v);
    ar_json_doc_finish(&d);
    ar_buf_finish(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_valid_text_as_written),
        cmocka_unit_test(test_doc_invalid_is_refused_with_a_position),
        cmocka_unit_test(test_doc_values_and_lexemes),
        cmocka_unit_test(test_doc_depth_is_bounded),
        cmocka_unit_test(test_compact_in_any_pieces),
        cmocka_unit_test(test_compact_avx2_is_the_portable_one),
        cmocka_unit_test(test_compact_avx2_backslash_runs),
        cmocka_unit_test(test_scan_whole_but_invalid),
        cmocka_unit_test(test_scan_numbers_and_separators),
        cmocka_unit_test(test_number_cmp_is_exact),
        cmocka_unit_test(test_number_integral),
        cmocka_unit_test(test_dump_raw_and_indent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
