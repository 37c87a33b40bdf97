/* Unit tests of src/json/extract: which value model text yields, and why not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "json/dump.h"
#include "json/extract.h"
#include "json/repair.h"
#include "util/buf.h"

/* `expect` is the compact JSON wanted, or NULL when nothing may be found;
 * `code` is then the error. len 0 means strlen(text). */
struct extract_case {
    const char *name;
    const char *text;
    size_t len;
    int want;
    unsigned flags;
    const char *expect;
    int code;
};

static char *dump(const json_t *v)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_json_dump_compact(v, &b), 0);
    return ar_buf_detach(&b, NULL);
}

static const struct extract_case cases[] = {
    { "bare", "{\"a\":1}", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0 },
    { "after explanatory text", "Sure! Here is the result:\n{\"ok\": true}", 0, AR_JSON_OBJECT, 0,
      "{\"ok\":true}", 0 },
    { "before trailing text", "{\"ok\": true}\n\nLet me know if you need more.", 0, AR_JSON_OBJECT,
      0, "{\"ok\":true}", 0 },
    { "nested objects", "x {\"a\": {\"b\": {\"c\": [1, {\"d\": null}]}}} y", 0, AR_JSON_OBJECT, 0,
      "{\"a\":{\"b\":{\"c\":[1,{\"d\":null}]}}}", 0 },
    { "json fence", "Result:\n```json\n{\"a\": 1}\n```\n", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0 },
    { "plain fence", "Result:\n```\n{\"a\": 1}\n```\n", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0 },
    { "fence wins over earlier prose", "try {\"draft\": 1} or\n```json\n{\"final\": 2}\n```", 0,
      AR_JSON_OBJECT, 0, "{\"final\":2}", 0 },
    { "tilde fence, long, JSON5 label", "~~~~JSON5\n{\"a\": 1}\n~~~~\n", 0, AR_JSON_OBJECT, 0,
      "{\"a\":1}", 0 },
    { "fence closes only with a long enough run", "````json\n{\"s\": 1}\n```\n{\"t\": 2}\n````\n",
      0, AR_JSON_OBJECT, 0, "{\"s\":1}", 0 },
    { "no JSON", "Nothing to see here.", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON },
    { "empty input", "", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON },
    { "incomplete braces are truncation", "Here: {\"a\": {\"b\": 1}", 0, AR_JSON_OBJECT, 0, NULL,
      AR_ETRUNCATED },
    { "stray closing braces", "}}} ]] no json {{ x }}", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON },
    { "braces inside strings", "{\"s\": \"}{ ] [ \\\" }\", \"t\": 2}", 0, AR_JSON_OBJECT, 0,
      "{\"s\":\"}{ ] [ \\\" }\",\"t\":2}", 0 },
    { "fences inside strings", "```json\n{\"md\": \"```python\\nx=1\\n```\"}\n```\n", 0,
      AR_JSON_OBJECT, 0, "{\"md\":\"```python\\nx=1\\n```\"}", 0 },
    { "placeholders before the answer",
      "Fill {name} and {id} in. Answer: {\"name\": \"x\", \"id\": 1}", 0, AR_JSON_OBJECT, 0,
      "{\"name\":\"x\",\"id\":1}", 0 },
    { "other languages never win over json",
      "```python\nd = {\"a\": 1}\n```\nand\n```json\n{\"b\": 2}\n```", 0, AR_JSON_OBJECT, 0,
      "{\"b\":2}", 0 },
    { "several candidates: the first", "{\"n\": 1} then {\"n\": 2}", 0, AR_JSON_OBJECT, 0,
      "{\"n\":1}", 0 },
    { "citations are not the answer", "As shown [1][2], {\"a\": [3]}", 0, AR_JSON_OBJECT, 0,
      "{\"a\":[3]}", 0 },
    { "array wanted", "See {\"x\": 1} then [1, 2]", 0, AR_JSON_ARRAY, 0, "[1,2]", 0 },
    { "array inside an object is not a top-level array", "{\"x\": [1]}", 0, AR_JSON_ARRAY, 0, NULL,
      AR_ENOJSON },
    { "any takes the first of either", "[1] then {\"a\": 1}", 0, AR_JSON_ANY, 0, "[1]", 0 },
    { "CRLF", "Result:\r\n```json\r\n{\"a\": 1,\r\n \"b\": 2}\r\n```\r\n", 0, AR_JSON_OBJECT, 0,
      "{\"a\":1,\"b\":2}", 0 },
    { "BOM", "\xEF\xBB\xBF{\"a\": 1}", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0 },
    { "invalid UTF-8 in prose", "\xff\xfe bad \xc3 {\"a\": \"\xc3\xa9\"}", 0, AR_JSON_OBJECT, 0,
      "{\"a\":\"\xc3\xa9\"}", 0 },
    { "NUL bytes in prose", "a\0b\0{\"a\": 1}\0", 13, AR_JSON_OBJECT, 0, "{\"a\":1}", 0 },
    { "escaped NUL inside a string", "{\"a\": \"x\\u0000y\"}", 0, AR_JSON_OBJECT, 0,
      "{\"a\":\"x\\u0000y\"}", 0 },
    { "a broken value yields no fragment of itself", "{ \"a\": {\"b\": 1} oops }", 0,
      AR_JSON_OBJECT, 0, NULL, AR_ENOJSON },
    { "a broken value never closed hides what follows", "[{\"i\":1{\"i\":2}]", 0, AR_JSON_OBJECT, 0,
      NULL, AR_ENOJSON },
    { "after a broken value that closes, scanning goes on",
      "draft {\"a\": 1 oops} final {\"a\": 2}", 0, AR_JSON_OBJECT, 0, "{\"a\":2}", 0 },
    { "truncated value is not replaced by its fragment", "{\"r\": {\"a\": 1}, \"s\": [1, 2", 0,
      AR_JSON_OBJECT, 0, NULL, AR_ETRUNCATED },
    { "unclosed fence with a truncated value", "```json\n{\"a\": [1,", 0, AR_JSON_OBJECT, 0, NULL,
      AR_ETRUNCATED },
    { "a truncated JSON block is not replaced by an earlier bare value",
      "e.g. {\"draft\": 1}\n```json\n{\"final\": [1,", 0, AR_JSON_OBJECT, 0, NULL, AR_ETRUNCATED },
    { "truncated array of objects when objects wanted", "[{\"a\":1},{\"b\":", 0, AR_JSON_OBJECT, 0,
      NULL, AR_ETRUNCATED },
    { "truncated citation is not JSON", "as in [1", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON },
    { "keys keep the model's order", "{\"z\": 1, \"a\": 2, \"m\": 3}", 0, AR_JSON_OBJECT, 0,
      "{\"z\":1,\"a\":2,\"m\":3}", 0 },
    { "reals keep their short form", "{\"p\": 0.85, \"q\": 1.0, \"r\": 1e-7}", 0, AR_JSON_OBJECT, 0,
      "{\"p\":0.85,\"q\":1.0,\"r\":1e-7}", 0 },
    { "too deep for the parser is skipped", NULL, 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON },
    { "repair: sloppy candidate", "Answer: {'a': 1, b: True,}", 0, AR_JSON_OBJECT,
      AR_EXTRACT_REPAIR, "{\"a\":1,\"b\":true}", 0 },
    { "repair: truncated value is closed", "Answer: {\"a\": [1, 2", 0, AR_JSON_OBJECT,
      AR_EXTRACT_REPAIR, "{\"a\":[1,2]}", 0 },
    { "repair: valid candidate first", "{\"a\": 1} {'b': 2}", 0, AR_JSON_OBJECT, AR_EXTRACT_REPAIR,
      "{\"a\":1}", 0 },
    { "repair: jsonc fence with comments", "```jsonc\n{\n  // the id\n  \"id\": 7\n}\n```", 0,
      AR_JSON_OBJECT, AR_EXTRACT_REPAIR, "{\"id\":7}", 0 },
    { "repair: prose with an open brace is not closed", "Sorry, I cannot help. Use { carefully.", 0,
      AR_JSON_OBJECT, AR_EXTRACT_REPAIR, NULL, AR_ENOJSON },
    { "repair: brackets alone are not a value", "{{", 0, AR_JSON_ANY, AR_EXTRACT_REPAIR, NULL,
      AR_ETRUNCATED },
    { "repair: a broken value gives no fragment", "[{\"i\":1{\"i\":2}]", 0, AR_JSON_OBJECT,
      AR_EXTRACT_REPAIR, NULL, AR_ENOJSON },
    { "inline citation loses to a block-level array", "As shown in [1], the list:\n[{\"a\": 1}]", 0,
      AR_JSON_ARRAY, 0, "[{\"a\":1}]", 0 },
    { "inline citation loses to a later object", "As shown in [1], the answer: {\"a\": 1}", 0,
      AR_JSON_ANY, 0, "{\"a\":1}", 0 },
    { "an inline array is the answer when nothing else is", "The ids are [3, 4].", 0, AR_JSON_ARRAY,
      0, "[3,4]", 0 },
    { "the first complete value wins", "{\"v\": 1}\nOr, alternatively:\n{\"v\": 2}", 0,
      AR_JSON_OBJECT, 0, "{\"v\":1}", 0 },
    { "a scalar is never the answer", "The answer is 42 and \"yes\".", 0, AR_JSON_ANY, 0, NULL,
      AR_ENOJSON },
    { "numbers as written", "{\"id\": 12345678901234567890, \"z\": -0, \"e\": 20e1, \"r\": 1.50}",
      0, AR_JSON_OBJECT, 0, "{\"id\":12345678901234567890,\"z\":-0,\"e\":20e1,\"r\":1.50}", 0 },
    { "NUL-bearing key", "{\"foo\\u0000bar\": 42}", 0, AR_JSON_OBJECT, 0, "{\"foo\\u0000bar\":42}",
      0 },
    { "without repair, sloppy JSON is not found", "{'a': 1}", 0, AR_JSON_OBJECT, 0, NULL,
      AR_ENOJSON },
};

static void run_case(const struct extract_case *c)
{
    struct ar_extract_options o = AR_EXTRACT_OPTIONS_INIT;
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    struct ar_error err = AR_ERROR_INIT;
    char *deep = NULL;
    const char *text = c->text;
    size_t len = c->len ? c->len : text ? strlen(text) : 0;
    if (!text) {
        /* {"a": then 2995 levels of arrays: past jansson's JSON_PARSER_MAX_DEPTH. */
        size_t d = 2995;
        len = 5 + 2 * d + 1;
        deep = malloc(len);
        memcpy(deep, "{\"a\":", 5);
        memset(deep + 5, '[', d);
        memset(deep + 5 + d, ']', d);
        deep[len - 1] = '}';
        text = deep;
    }
    o.want = c->want;
    o.flags = c->flags;
    int rc = ar_json_extract(text, len, &o, &r, &err);
    if (c->expect) {
        if (rc != 0)
            fail_msg("%s: rc %d: %s", c->name, rc, err.msg);
        char *got = dump(r.value);
        /* What is printed is the text as written; the jansson value agrees
         * with it wherever jansson can hold the numbers. */
        if (strcmp(r.doc.text, c->expect) != 0)
            fail_msg("%s: got %s, want %s", c->name, r.doc.text, c->expect);
        struct ar_json_doc back;
        assert_int_equal(ar_json_doc_parse(&back, got, strlen(got), NULL), 0);
        ar_json_doc_finish(&back);
        assert_true(r.start < r.end && r.end <= len);
        assert_int_equal(r.accepted, 1);
        assert_int_equal(r.fixes != 0,
                         (c->flags & AR_EXTRACT_REPAIR) && strstr(c->name, "valid") == NULL);
        free(got);
    } else {
        if (rc != c->code)
            fail_msg("%s: rc %d (%s), want %d", c->name, rc, err.msg, c->code);
        assert_null(r.value);
        assert_int_equal(err.code, c->code);
    }
    ar_extract_result_finish(&r);
    free(deep);
}

static void test_extract_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

static void test_extract_truncation_message_names_the_byte(void **state)
{
    const char *t = "ok {\"a\": [1, 2";
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_json_extract(t, strlen(t), NULL, &r, &err), AR_ETRUNCATED);
    assert_string_equal(err.msg, "JSON truncated at byte 14");
    assert_string_equal(err.where, "byte 3");
}

static void test_extract_span_points_into_the_text(void **state)
{
    const char *t = "pre ```json\n{\"a\": 1}\n``` post";
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    assert_int_equal(ar_json_extract(t, strlen(t), NULL, &r, NULL), 0);
    assert_int_equal(r.start, 12);
    assert_int_equal(r.end, 20);
    ar_extract_result_finish(&r);
}

static int has_key_b(const struct ar_json_doc *doc, void *arg)
{
    int *calls = arg;
    (*calls)++;
    return json_object_get(doc->value, "b") != NULL;
}

static void test_extract_accept_picks_first_satisfying(void **state)
{
    const char *t = "{\"a\": 1} {\"b\": 2} {\"b\": 3}";
    int calls = 0;
    struct ar_extract_options o = { AR_JSON_OBJECT, 0, has_key_b, &calls };
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    assert_int_equal(ar_json_extract(t, strlen(t), &o, &r, NULL), 0);
    assert_int_equal(r.accepted, 1);
    assert_int_equal(json_integer_value(json_object_get(r.value, "b")), 2);
    assert_int_equal(calls, 2);
    ar_extract_result_finish(&r);
}

static void test_extract_accept_falls_back_to_first_parseable(void **state)
{
    const char *t = "{\"a\": 1} {\"c\": 2}";
    int calls = 0;
    struct ar_extract_options o = { AR_JSON_OBJECT, 0, has_key_b, &calls };
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    assert_int_equal(ar_json_extract(t, strlen(t), &o, &r, NULL), 0);
    assert_int_equal(r.accepted, 0);
    assert_int_equal(json_integer_value(json_object_get(r.value, "a")), 1);
    ar_extract_result_finish(&r);
}

struct collect {
    char out[256];
};

static int collect_each(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                        void *arg)
{
    struct collect *c = arg;
    strcat(c->out, doc->text);
    strcat(c->out, "|");
    return 0;
}

static void test_extract_all_lists_top_level_values(void **state)
{
    const char *t = "[1] {\"a\": {\"n\": 1}} text {\"b\": 2}\n```json\n{\"c\": 3}\n```";
    struct collect c = { "" };
    struct ar_extract_options o = AR_EXTRACT_OPTIONS_INIT;
    assert_int_equal(ar_json_extract_all(t, strlen(t), &o, collect_each, &c, NULL), 3);
    assert_string_equal(c.out, "{\"a\":{\"n\":1}}|{\"b\":2}|{\"c\":3}|");
    o.want = AR_JSON_ANY;
    c.out[0] = '\0';
    assert_int_equal(ar_json_extract_all(t, strlen(t), &o, collect_each, &c, NULL), 4);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_json_extract_all("none", 4, NULL, collect_each, &c, &err), AR_ENOJSON);
}

/* Adversarial inputs finish (a quadratic scan would take minutes at this size). */
static void test_extract_adversarial_inputs_finish(void **state)
{
    size_t n = 100000, unit = 5;
    char *t = malloc(n * unit);
    for (size_t i = 0; i < n; i++)
        memcpy(t + i * unit, "{\"a\":", unit);
    struct ar_error err = AR_ERROR_INIT;
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    assert_int_equal(ar_json_extract(t, n * unit, NULL, &r, &err), AR_ETRUNCATED);
    struct ar_extract_options o = { AR_JSON_OBJECT, AR_EXTRACT_REPAIR, NULL, NULL };
    assert_int_equal(ar_json_extract(t, n * unit, &o, &r, &err), AR_ETRUNCATED);
    for (size_t i = 0; i < n; i++)
        memcpy(t + i * unit, "{\"a\" ", unit);
    /* Every start fails late on the next one; the last would be truncated, so end in prose. */
    t[n * unit - 1] = 'x';
    assert_int_equal(ar_json_extract(t, n * unit, &o, &r, &err), AR_ENOJSON);
    memset(t, '{', n * unit);
    t[n * unit - 1] = 'x';
    assert_int_equal(ar_json_extract(t, n * unit, &o, &r, &err), AR_ENOJSON);
    free(t);
}

/* Every prefix of a valid document that holds more than brackets is closed
 * by --repair into a value that parses, cuts inside a \uXXXX escape, a
 * number, a literal or just after a '-' included. */
static void test_extract_repair_closes_every_prefix(void **state)
{
    static const char *const docs[] = {
        "{\"a\": [1, -2.5e+3, true, null, \"x\\u00e9y\\n\"], \"b\": {\"c\": -0}}",
        "[{\"k\": \"\\ud83d\\ude00\"}, [false, 12345678901234567890], -1]",
    };
    for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
        size_t n = strlen(docs[d]);
        for (size_t cut = 2; cut < n; cut++) {
            if (strspn(docs[d], "[{") >= cut)
                continue; /* brackets alone are no value (docs/extract.md) */
            struct ar_extract_options o = { AR_JSON_ANY, AR_EXTRACT_REPAIR, NULL, NULL };
            struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
            struct ar_error err = AR_ERROR_INIT;
            int rc = ar_json_extract(docs[d], cut, &o, &r, &err);
            if (rc != 0)
                fail_msg("prefix '%.*s': %s", (int)cut, docs[d], err.msg);
            assert_true(r.fixes & AR_FIX_TRUNCATION);
            ar_extract_result_finish(&r);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extract_table),
        cmocka_unit_test(test_extract_truncation_message_names_the_byte),
        cmocka_unit_test(test_extract_span_points_into_the_text),
        cmocka_unit_test(test_extract_accept_picks_first_satisfying),
        cmocka_unit_test(test_extract_accept_falls_back_to_first_parseable),
        cmocka_unit_test(test_extract_all_lists_top_level_values),
        cmocka_unit_test(test_extract_adversarial_inputs_finish),
        cmocka_unit_test(test_extract_repair_closes_every_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
