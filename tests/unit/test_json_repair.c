/* Unit tests of src/json/repair: each rule alone, combined, and valid JSON untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "json/doc.h"
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

/*
 * A corpus per class of broken JSON that models write, written for agentrun
 * (none copied from other suites): the input, the value a careful reader
 * would take from it as compact JSON (or NULL when repair must not guess:
 * ar_json_repair_value() then returns AR_ENOJSON or output that does not
 * parse), and exactly the fixes that must be named.
 */
struct class_case {
    const char *in;
    const char *want;
    unsigned fixes;
};

static const struct class_case classes[] = {
    /* unquoted values */
    { "[a, b]", "[\"a\",\"b\"]", AR_FIX_UNQUOTED_VALUES },
    { "{url: https://example.com/x?y=1}", "{\"url\":\"https://example.com/x?y=1\"}",
      AR_FIX_UNQUOTED_KEYS | AR_FIX_UNQUOTED_VALUES },
    { "{\"status\": ok, \"n\": 2}", "{\"status\":\"ok\",\"n\":2}", AR_FIX_UNQUOTED_VALUES },
    { "{\"msg\": hello world\n}", "{\"msg\":\"hello world\"}", AR_FIX_UNQUOTED_VALUES },
    { "{\"t\": x\ty}", "{\"t\":\"x\\u0009y\"}", AR_FIX_UNQUOTED_VALUES },
    { "[see below]", NULL, 0 },
    { "{I cannot}", NULL, 0 },
    /* an unbalanced quote mid-document */
    { "{\"a\":\"b,\"c\":\"d\"}", "{\"a\":\"b\",\"c\":\"d\"}", AR_FIX_MISSING_QUOTE },
    { "{\"x\": \"one, \"y\": 2}", "{\"x\":\"one\",\"y\":2}", AR_FIX_MISSING_QUOTE },
    /* numbers JSON forbids */
    { "[.25, -.5, +1, 1.]", "[0.25,-0.5,1,1]", AR_FIX_NUMBER_FORMAT },
    { "{\"pop\": 82_461_110}", "{\"pop\":82461110}", AR_FIX_NUMBER_FORMAT },
    { "{\"zip\": 0789}", "{\"zip\":\"0789\"}", AR_FIX_NUMBER_FORMAT },
    /* a missing closing quote */
    { "{\"a\":\"b}", "{\"a\":\"b\"}", AR_FIX_MISSING_QUOTE },
    { "{\"a\": [\"x\", \"y]}", "{\"a\":[\"x\",\"y\"]}", AR_FIX_MISSING_QUOTE },
    { "{\"a\": \"cut", "{\"a\":\"cut\"}", AR_FIX_TRUNCATION },
    /* an ellipsis standing for more items */
    { "[1, 2, 3, ...]", "[1,2,3]", AR_FIX_ELLIPSIS },
    { "{\"a\": 1, ...}", "{\"a\":1}", AR_FIX_ELLIPSIS },
    { "[\"x\", \xe2\x80\xa6]", "[\"x\"]", AR_FIX_ELLIPSIS },
    /* JavaScript, Python and Mongo syntax */
    { "[undefined, TRUE, FALSE, Null]", "[null,true,false,null]", AR_FIX_JS_SYNTAX },
    { "{\"_id\": ObjectId(\"5f1\"), \"n\": NumberLong(7)}", "{\"_id\":\"5f1\",\"n\":7}",
      AR_FIX_JS_SYNTAX },
    { "{\"d\": new Date(\"2024-01-02\")}", "{\"d\":\"2024-01-02\"}", AR_FIX_JS_SYNTAX },
    { "{\"s\": \"ab\" + \"cd\" +\n 'ef'}", "{\"s\":\"abcdef\"}",
      AR_FIX_JS_SYNTAX | AR_FIX_SINGLE_QUOTES },
    { "{\"a\": Foo(bar)}", NULL, 0 },
    { "[None, True]", "[null,true]", AR_FIX_PYTHON_LITERALS },
    /* missing colons */
    { "{\"a\" 1, \"b\" \"x\"}", "{\"a\":1,\"b\":\"x\"}", AR_FIX_MISSING_COLON },
    /* unescaped inner quotes */
    { "{\"q\": \"she said \"hi\" twice\"}", "{\"q\":\"she said \\\"hi\\\" twice\"}",
      AR_FIX_INNER_QUOTES },
    { "{ \"content\": \"[LINK](\"https://a.example\")\" }",
      "{\"content\":\"[LINK](\\\"https://a.example\\\")\"}", AR_FIX_INNER_QUOTES },
    /* mismatched brackets */
    { "{\"a\":2]", "{\"a\":2}", AR_FIX_BRACKETS },
    { "{\"a\": [1, 2}", "{\"a\":[1,2]}", AR_FIX_BRACKETS },
    { "[{\"a\": 1]]", "[{\"a\":1}]", AR_FIX_BRACKETS },
    /* a closer that does not match is read so that nothing of the value is lost */
    { "[{\"a\": 1}}, {\"b\": 2}]", "[{\"a\":1},{\"b\":2}]", AR_FIX_BRACKETS },
    { "{\"k\": [1, 2}, \"l\": [3]}", "{\"k\":[1,2],\"l\":[3]}", AR_FIX_BRACKETS },
    { "[[1, 2}, [3]]", "[[1,2],[3]]", AR_FIX_BRACKETS },
    { "{\"k\": {\"a\": [1}, \"b\": 2}", "{\"k\":{\"a\":[1]},\"b\":2}", AR_FIX_BRACKETS },
    /* members after an object's close */
    { "{\"a\": 1}, \"b\": 2}", "{\"a\":1,\"b\":2}", AR_FIX_MEMBERS_AFTER_CLOSE },
    { "{\"a\": 1} \"b\": 2, \"c\": 3}", "{\"a\":1,\"b\":2,\"c\":3}", AR_FIX_MEMBERS_AFTER_CLOSE },
    { "{}}, \"a\": [1]}", "{\"a\":[1]}", AR_FIX_MEMBERS_AFTER_CLOSE },
    /* a bare word in braces is prose, not a key */
    { "{like}", NULL, 0 },
    { "{ placeholder }", NULL, 0 },
    /* non-ASCII whitespace between tokens (NBSP, em space, ideographic space) */
    { "{\xc2\xa0\"a\":\xe2\x80\x83 1,\xe3\x80\x80\"b\": 2}", "{\"a\":1,\"b\":2}",
      AR_FIX_UNICODE_SPACE },
    { "{\"a\": \"x\xc2\xa0y\"}", "{\"a\":\"x\xc2\xa0y\"}", 0 }, /* inside a string: kept */
    /* escaped JSON */
    { "{\\\"k\\\": 1, \\\"s\\\": \\\"a\\\\nb\\\"}", "{\"k\":1,\"s\":\"a\\nb\"}",
      AR_FIX_ESCAPED_JSON },
    /* missing values */
    { "{\"a\":}", "{\"a\":null}", AR_FIX_MISSING_VALUE },
    { "{\"a\":, \"b\": 1}", "{\"a\":null,\"b\":1}", AR_FIX_MISSING_VALUE },
    { "{\"a\"}", "{\"a\":null}", AR_FIX_MISSING_VALUE },
    /* valid JSON is never touched */
    { "{\"n\": 12345678901234567890, \"z\": -0, \"r\": 1.50}",
      "{\"n\":12345678901234567890,\"z\":-0,\"r\":1.50}", 0 },
};

static void test_repair_classes(void **state)
{
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        const struct class_case *c = &classes[i];
        struct ar_buf b;
        unsigned fixes = 0;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        int rc = ar_json_repair_value(c->in, strlen(c->in), &b, &fixes, NULL, NULL);
        struct ar_json_doc d;
        int parsed = rc == 0 && ar_json_doc_parse(&d, b.data ? b.data : "", b.len, NULL) == 0;
        if (!c->want) {
            if (parsed)
                fail_msg("case %zu '%s': guessed '%s'", i, c->in, d.text);
        } else {
            if (!parsed)
                fail_msg("case %zu '%s': rc %d, output '%s' does not parse", i, c->in, rc,
                         ar_buf_cstr(&b));
            if (strcmp(d.text, c->want) != 0 || fixes != c->fixes) {
                struct ar_buf names;
                ar_buf_init(&names, 1000);
                ar_json_fixes_format(fixes, ",", &names);
                fail_msg("case %zu '%s': got '%s' fixes %s, want '%s'", i, c->in, d.text,
                         ar_buf_cstr(&names), c->want);
            }
        }
        if (parsed)
            ar_json_doc_finish(&d);
        ar_buf_finish(&b);
    }
}

/* What the repair of a value took, and which members it merged. */
static void test_repair_value_reports_what_it_took(void **state)
{
    const char *in = "{\"a\": 1}, \"b\": 2, \"c\": 3} and prose {\"d\": 4}";
    struct ar_buf b;
    unsigned fixes = 0;
    struct ar_json_repair_info info;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_json_repair_value(in, strlen(in), &b, &fixes, &info, NULL), 0);
    assert_string_equal(ar_buf_cstr(&b), "{\"a\": 1,\"b\": 2, \"c\": 3}");
    assert_int_equal(fixes, AR_FIX_MEMBERS_AFTER_CLOSE);
    assert_int_equal(info.consumed, 25);
    assert_int_equal(info.members, 2);
    assert_int_equal(info.members_at, 10);
    ar_buf_finish(&b);
}

static void test_repair_fix_names(void **state)
{
    assert_string_equal(ar_json_fix_name(AR_FIX_TRAILING_COMMA), "trailing_comma");
    assert_string_equal(ar_json_fix_name(AR_FIX_TRUNCATION), "truncation");
    assert_null(ar_json_fix_name(AR_FIX_COMMENTS | AR_FIX_TRUNCATION));
    assert_string_equal(ar_json_fix_name(AR_FIX_EXTRA_VALUES), "extra_values");
    assert_string_equal(ar_json_fix_name(AR_FIX_MEMBERS_AFTER_CLOSE), "members_after_close");
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
        cmocka_unit_test(test_repair_classes),
        cmocka_unit_test(test_repair_value_reports_what_it_took),
        cmocka_unit_test(test_repair_fix_names),
        cmocka_unit_test(test_repair_deep_truncation_is_iterative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
