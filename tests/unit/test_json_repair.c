/* Unit tests of src/json/repair: each rule alone, combined, and valid JSON untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "json/repair.h"
#include "util/buf.h"

struct repair_case {
    const char *in;
    const char *out; /* exact output */
    unsigned fixes;  /* exactly these */
};

static const struct repair_case cases[] = {
    /* valid JSON: byte for byte, no fixes */
    { "{\"a\": 1}", "{\"a\": 1}", 0 },
    { " [1, 2.5e3, \"x\\n\", true, null, {}] ", " [1, 2.5e3, \"x\\n\", true, null, {}] ", 0 },
    { "{\n  \"k\" : [ ]\n}\n", "{\n  \"k\" : [ ]\n}\n", 0 },
    /* each rule alone */
    { "[1, 2,]", "[1, 2]", AR_FIX_TRAILING_COMMA },
    { "{\"a\": 1 , }", "{\"a\": 1  }", AR_FIX_TRAILING_COMMA },
    { "[1,,2]", "[1,2]", AR_FIX_TRAILING_COMMA },
    { "{\"a\": 1 // one\n}", "{\"a\": 1 \n}", AR_FIX_COMMENTS },
    { "{/* c */\"a\": 1}", "{\"a\": 1}", AR_FIX_COMMENTS },
    { "{'a': 'it\\'s \"q\"'}", "{\"a\": \"it's \\\"q\\\"\"}", AR_FIX_SINGLE_QUOTES },
    { "{\xE2\x80\x9C"
      "a\xE2\x80\x9D: \xE2\x80\x98"
      "b\xE2\x80\x99}",
      "{\"a\": \"b\"}", AR_FIX_CURLY_QUOTES },
    { "{a: 1, _b2: 2}", "{\"a\": 1, \"_b2\": 2}", AR_FIX_UNQUOTED_KEYS },
    { "[True, False, None]", "[true, false, null]", AR_FIX_PYTHON_LITERALS },
    { "[NaN, Infinity, -Infinity]", "[null, null, null]", AR_FIX_NAN_INFINITY },
    { "{\"a\": \"x\ny\tz\"}", "{\"a\": \"x\\ny\\tz\"}", AR_FIX_RAW_NEWLINES },
    { "{\"a\": 1\n \"b\": 2}", "{\"a\": 1\n ,\"b\": 2}", AR_FIX_MISSING_COMMA },
    { "[1 2 {} []]", "[1 ,2 ,{} ,[]]", AR_FIX_MISSING_COMMA },
    { "{\"a\": [1, {\"b\": \"te", "{\"a\": [1, {\"b\": \"te\"}]}", AR_FIX_TRUNCATION },
    { "{\"a\": [1, 2,", "{\"a\": [1, 2]}", AR_FIX_TRUNCATION },
    { "{\"a\":", "{\"a\":null}", AR_FIX_TRUNCATION },
    { "{\"a\"", "{\"a\":null}", AR_FIX_TRUNCATION },
    { "[tr", "[true]", AR_FIX_TRUNCATION },
    { "[1.", "[1]", AR_FIX_TRUNCATION },
    /* combined */
    { "{\n  // config\n  name: 'x',\n  ok: True,\n  n: NaN,\n  list: [1 2,],\n}",
      "{\n  \n  \"name\": \"x\",\n  \"ok\": true,\n  \"n\": null,\n  \"list\": [1 ,2]\n}",
      AR_FIX_COMMENTS | AR_FIX_UNQUOTED_KEYS | AR_FIX_SINGLE_QUOTES | AR_FIX_PYTHON_LITERALS |
          AR_FIX_NAN_INFINITY | AR_FIX_MISSING_COMMA | AR_FIX_TRAILING_COMMA },
    { "{'a': \"l1\nl2\", b: [None,", "{\"a\": \"l1\\nl2\", \"b\": [null]}",
      AR_FIX_SINGLE_QUOTES | AR_FIX_RAW_NEWLINES | AR_FIX_UNQUOTED_KEYS | AR_FIX_PYTHON_LITERALS |
          AR_FIX_TRUNCATION },
};

static void test_repair_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct repair_case *c = &cases[i];
        struct ar_buf b;
        unsigned fixes = 0;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        assert_int_equal(ar_json_repair(c->in, strlen(c->in), &b, &fixes, NULL), 0);
        if (strcmp(ar_buf_cstr(&b), c->out) != 0 || fixes != c->fixes)
            fail_msg("case %zu: got '%s' fixes %#x, want '%s' fixes %#x", i, ar_buf_cstr(&b), fixes,
                     c->out, c->fixes);
        json_error_t jerr;
        json_t *v = json_loadb(b.data, b.len, 0, &jerr);
        if (!v)
            fail_msg("case %zu: output does not parse: %s", i, jerr.text);
        json_decref(v);
        ar_buf_finish(&b);
    }
}

static void test_repair_fix_names(void **state)
{
    assert_string_equal(ar_json_fix_name(AR_FIX_TRAILING_COMMA), "trailing_comma");
    assert_string_equal(ar_json_fix_name(AR_FIX_TRUNCATION), "truncation");
    assert_null(ar_json_fix_name(AR_FIX_COMMENTS | AR_FIX_TRUNCATION));
    struct ar_buf b;
    ar_buf_init(&b, 100);
    assert_int_equal(ar_json_fixes_format(AR_FIX_COMMENTS | AR_FIX_CURLY_QUOTES, ",", &b), 0);
    assert_string_equal(ar_buf_cstr(&b), "comments,curly_quotes");
    ar_buf_finish(&b);
}

/* A deep truncated input is closed without recursion. */
static void test_repair_deep_truncation_is_iterative(void **state)
{
    size_t n = 1000000;
    char *in = malloc(n);
    memset(in, '[', n);
    struct ar_buf b;
    unsigned fixes = 0;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_json_repair(in, n, &b, &fixes, NULL), 0);
    assert_int_equal(b.len, 2 * n);
    assert_int_equal(b.data[2 * n - 1], ']');
    assert_int_equal(fixes, AR_FIX_TRUNCATION);
    ar_buf_finish(&b);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repair_table),
        cmocka_unit_test(test_repair_fix_names),
        cmocka_unit_test(test_repair_deep_truncation_is_iterative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
