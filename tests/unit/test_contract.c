/* Unit tests of src/contract: every keyword, all violations with their pointers, load errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contract/contract.h"

/* Checks `value` against `schema` and returns the formatted violations (caller frees). */
static char *violations_of(const char *schema, const char *value)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_contract *c;
    int rc = ar_contract_parse(schema, strlen(schema), &c, &err);
    if (rc) {
        fprintf(stderr, "schema %s: %s (%s)\n", schema, err.msg, err.where);
        fail();
    }
    json_error_t jerr;
    json_t *v = json_loads(value, JSON_DECODE_ANY, &jerr);
    assert_non_null(v);
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    int n = ar_contract_check(c, v, &vs);
    assert_true(n >= 0);
    assert_int_equal((size_t)n, vs.n + vs.omitted);
    assert_int_equal(ar_contract_accepts(c, v), n == 0);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_violations_format(&vs, &b), 0);
    ar_violations_finish(&vs);
    json_decref(v);
    ar_contract_destroy(c);
    return ar_buf_detach(&b, NULL);
}

struct check_case {
    const char *what;
    const char *schema;
    const char *value;
    const char *want; /* formatted violations, "" when the value satisfies the schema */
};

static const struct check_case check_cases[] = {
    /* type */
    { "string ok", "{\"type\":\"string\"}", "\"x\"", "" },
    { "string vs number", "{\"type\":\"string\"}", "3",
      "(root): expected string, got integer 3\n" },
    { "integer accepts 3.0", "{\"type\":\"integer\"}", "3.0", "" },
    { "integer rejects 3.5", "{\"type\":\"integer\"}", "3.5",
      "(root): expected integer, got number 3.5\n" },
    { "integer rejects string", "{\"type\":\"integer\"}", "\"3\"",
      "(root): expected integer, got string \"3\"\n" },
    { "number accepts integer", "{\"type\":\"number\"}", "7", "" },
    { "null", "{\"type\":\"null\"}", "false", "(root): expected null, got boolean false\n" },
    { "got null", "{\"type\":\"boolean\"}", "null", "(root): expected boolean, got null\n" },
    { "union ok", "{\"type\":[\"string\",\"null\"]}", "null", "" },
    { "union of three", "{\"type\":[\"object\",\"array\",\"null\"]}", "1",
      "(root): expected object, array or null, got integer 1\n" },
    { "object preview", "{\"type\":\"array\"}", "{\"a\":[1,2]}",
      "(root): expected array, got object {\"a\":[1,2]}\n" },
    /* properties, required, additionalProperties */
    { "required missing listed each", "{\"required\":[\"a\",\"b\",\"c\"]}", "{\"b\":1}",
      "/a: required property missing\n/c: required property missing\n" },
    { "properties checked", "{\"properties\":{\"a\":{\"type\":\"string\"}}}", "{\"a\":1,\"b\":2}",
      "/a: expected string, got integer 1\n" },
    { "additional false", "{\"properties\":{\"a\":{},\"b\":{}},\"additionalProperties\":false}",
      "{\"a\":1,\"x\":2}", "/x: property not allowed (allowed: a, b)\n" },
    { "additional false no properties", "{\"additionalProperties\":false}", "{\"x\":2}",
      "/x: property not allowed (no properties are allowed here)\n" },
    { "additional schema",
      "{\"properties\":{\"a\":{}},\"additionalProperties\":{\"type\":\"integer\"}}",
      "{\"a\":\"s\",\"b\":2,\"c\":\"no\"}", "/c: expected integer, got string \"no\"\n" },
    { "additional true", "{\"additionalProperties\":true}", "{\"x\":2}", "" },
    { "properties ignore non-objects",
      "{\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\"]}", "[1]", "" },
    /* items, minItems, maxItems */
    { "items every element", "{\"items\":{\"type\":\"integer\"}}", "[1,\"2\",3,null]",
      "/1: expected integer, got string \"2\"\n/3: expected integer, got null\n" },
    { "min items", "{\"minItems\":2}", "[1]", "(root): expected at least 2 items, got 1\n" },
    { "max items", "{\"maxItems\":1}", "[1,2]", "(root): expected at most 1 item, got 2\n" },
    { "items ok", "{\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":3}", "[1,2]", "" },
    /* enum, const */
    { "enum ok", "{\"enum\":[\"low\",\"high\"]}", "\"high\"", "" },
    { "enum miss", "{\"enum\":[\"low\",\"high\"]}", "\"urgent\"",
      "(root): expected one of [\"low\",\"high\"], got \"urgent\"\n" },
    { "enum numeric equality", "{\"enum\":[1,2]}", "2.0", "" },
    { "enum objects ignore key order", "{\"enum\":[{\"a\":1,\"b\":2}]}", "{\"b\":2,\"a\":1}", "" },
    { "const miss", "{\"const\":\"x\"}", "\"y\"", "(root): expected \"x\", got \"y\"\n" },
    { "const null ok", "{\"const\":null}", "null", "" },
    /* numbers */
    { "minimum", "{\"minimum\":1}", "0", "(root): expected a number >= 1, got 0\n" },
    { "minimum inclusive", "{\"minimum\":1}", "1", "" },
    { "maximum", "{\"maximum\":1.5}", "2", "(root): expected a number <= 1.5, got 2\n" },
    { "exclusive minimum", "{\"exclusiveMinimum\":0}", "0",
      "(root): expected a number > 0, got 0\n" },
    { "exclusive maximum", "{\"exclusiveMaximum\":1}", "1.0",
      "(root): expected a number < 1, got 1.0\n" },
    { "exclusive ok", "{\"exclusiveMinimum\":0,\"exclusiveMaximum\":1}", "0.5", "" },
    { "bounds ignore strings", "{\"minimum\":5}", "\"1\"", "" },
    /* strings */
    { "min length counts code points", "{\"minLength\":3}", "\"\xc3\xa9\xc3\xa9\"",
      "(root): expected at least 3 characters, got 2: \"\xc3\xa9\xc3\xa9\"\n" },
    { "max length counts code points", "{\"maxLength\":2}", "\"\xc3\xa9\xc3\xa9\"", "" },
    { "max length", "{\"maxLength\":1}", "\"ab\"",
      "(root): expected at most 1 character, got 2: \"ab\"\n" },
    { "pattern ok (unanchored)", "{\"pattern\":\"[0-9]+\"}", "\"ab12\"", "" },
    { "pattern miss", "{\"pattern\":\"^[a-z]+$\"}", "\"ABC\"",
      "(root): expected a match for pattern \"^[a-z]+$\", got \"ABC\"\n" },
    /* booleans and annotations */
    { "true schema", "true", "{\"a\":1}", "" },
    { "false schema", "{\"properties\":{\"a\":false}}", "{\"a\":1}",
      "/a: no value is allowed here, got 1\n" },
    { "annotations ignored",
      "{\"title\":\"t\",\"description\":\"d\",\"examples\":[1],\"default\":1,"
      "\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
      "\"$comment\":\"c\",\"type\":\"integer\"}",
      "1", "" },
    /* a type mismatch is reported alone */
    { "type mismatch alone", "{\"type\":\"string\",\"enum\":[\"a\"],\"minLength\":3}", "1",
      "(root): expected string, got integer 1\n" },
    /* pointers */
    { "pointer escapes tilde and slash",
      "{\"properties\":{\"a/b\":{\"type\":\"string\"},"
      "\"m~n\":{\"type\":\"string\"}}}",
      "{\"a/b\":1,\"m~n\":2}",
      "/a~1b: expected string, got integer 1\n/m~0n: expected string, got integer 2\n" },
    { "pointer empty key", "{\"additionalProperties\":{\"type\":\"string\"}}", "{\"\":1}",
      "/: expected string, got integer 1\n" },
};

static void test_contract_check_table(void **state)
{
    for (size_t i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
        const struct check_case *t = &check_cases[i];
        char *got = violations_of(t->schema, t->value);
        if (strcmp(got, t->want) != 0) {
            fprintf(stderr, "case '%s':\n got: %s\nwant: %s\n", t->what, got, t->want);
            free(got);
            fail();
        }
        free(got);
    }
}

static const char review_schema[] =
    "{\"type\":\"object\",\"required\":[\"passed\",\"summary\",\"issues\"],"
    "\"properties\":{\"passed\":{\"type\":\"boolean\"},\"summary\":{\"type\":\"string\"},"
    "\"issues\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"file\",\"line\",\"severity\",\"message\"],\"additionalProperties\":false,"
    "\"properties\":{\"file\":{\"type\":\"string\"},\"line\":{\"type\":\"integer\",\"minimum\":1},"
    "\"severity\":{\"enum\":[\"critical\",\"high\",\"medium\",\"low\",\"info\"]},"
    "\"message\":{\"type\":\"string\"},\"suggestion\":{\"type\":\"string\"}}}}}}";

static void test_contract_lists_all_violations_with_pointers(void **state)
{
    char *got = violations_of(
        review_schema,
        "{\"summary\":5,\"issues\":[{\"file\":\"a.c\",\"line\":1,\"severity\":\"low\",\"message\":"
        "\"m\"},"
        "{\"file\":\"b.c\",\"line\":0,\"severity\":\"urgent\",\"message\":\"m\",\"extra\":true},"
        "{\"file\":\"c.c\",\"line\":\"3\",\"message\":\"m\"}]}");
    assert_string_equal(
        got,
        "/passed: required property missing\n"
        "/summary: expected string, got integer 5\n"
        "/issues/1/line: expected a number >= 1, got 0\n"
        "/issues/1/severity: expected one of [\"critical\",\"high\",\"medium\",\"low\",\"info\"], "
        "got \"urgent\"\n"
        "/issues/1/extra: property not allowed (allowed: file, line, severity, message, "
        "suggestion)\n"
        "/issues/2/severity: required property missing\n"
        "/issues/2/line: expected integer, got string \"3\"\n");
    free(got);
}

static void test_contract_violation_keeps_offending_value(void **state)
{
    struct ar_contract *c;
    assert_int_equal(ar_contract_parse(review_schema, strlen(review_schema), &c, NULL), 0);
    json_t *v = json_loads("{\"passed\":true,\"summary\":\"s\",\"issues\":[{\"file\":\"x\","
                           "\"line\":\"3\",\"severity\":\"low\",\"message\":\"m\"}]}",
                           0, NULL);
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    assert_int_equal(ar_contract_check(c, v, &vs), 1);
    assert_string_equal(vs.v[0].path, "/issues/0/line");
    assert_string_equal(vs.v[0].message, "expected integer, got string \"3\"");
    assert_string_equal(json_string_value(vs.v[0].value), "3");
    json_t *details = ar_violations_to_json(&vs);
    assert_string_equal(json_string_value(json_array_get(details, 0)),
                        "/issues/0/line: expected integer, got string \"3\"");
    json_decref(details);
    ar_violations_finish(&vs);
    json_decref(v);
    ar_contract_destroy(c);
}

static void test_contract_check_appends_to_existing_list(void **state)
{
    struct ar_contract *c;
    assert_int_equal(ar_contract_parse("{\"type\":\"string\"}", 17, &c, NULL), 0);
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    assert_int_equal(
        ar_violations_add(&vs, "/recommendations", NULL, "no recommendations in %s", "response"),
        0);
    json_t *v = json_integer(1);
    assert_int_equal(ar_contract_check(c, v, &vs), 1);
    assert_int_equal(vs.n, 2);
    assert_string_equal(vs.v[0].message, "no recommendations in response");
    assert_null(vs.v[0].value);
    json_decref(v);
    ar_violations_finish(&vs);
    ar_contract_destroy(c);
}

static void test_contract_long_values_are_cut_in_messages(void **state)
{
    char value[600];
    memset(value, 'x', sizeof(value));
    value[0] = '"';
    /* A two-byte character straddles the cut so it must not be split. */
    for (size_t i = 70; i < 90; i += 2) {
        value[i] = (char)0xc3;
        value[i + 1] = (char)0xa9;
    }
    value[sizeof(value) - 2] = '"';
    value[sizeof(value) - 1] = '\0';
    char *got = violations_of("{\"type\":\"integer\"}", value);
    assert_true(strlen(got) < 200);
    assert_non_null(strstr(got, "\xe2\x80\xa6\n")); /* "…" marks the cut */
    json_t *s = json_string(got);                   /* still valid UTF-8 */
    assert_non_null(s);
    json_decref(s);
    free(got);
}

static void test_contract_violations_are_capped_and_counted(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_putc(&b, '[');
    for (int i = 0; i < 250; i++)
        ar_buf_printf(&b, "%s\"s\"", i ? "," : "");
    ar_buf_putc(&b, ']');
    char *got = violations_of("{\"items\":{\"type\":\"integer\"}}", ar_buf_cstr(&b));
    assert_non_null(strstr(got, "/99: expected integer"));
    assert_null(strstr(got, "/100:"));
    assert_non_null(strstr(got, "(150 more violations not shown)\n"));
    free(got);
    ar_buf_finish(&b);
}

static json_t *deep_array(size_t depth)
{
    json_t *v = json_array();
    for (size_t i = 0; i < depth; i++) {
        json_t *outer = json_array();
        json_array_append_new(outer, v);
        v = outer;
    }
    return v;
}

static void test_contract_deep_values_do_not_recurse_without_bound(void **state)
{
    /* Far deeper than any stack could take if checking followed the value. */
    json_t *v = deep_array(200000);
    struct ar_contract *c;
    const char *schema = "{\"type\":\"array\",\"items\":{\"items\":{\"type\":\"string\"}}}";
    assert_int_equal(ar_contract_parse(schema, strlen(schema), &c, NULL), 0);
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    assert_int_equal(ar_contract_check(c, v, &vs), 1);
    assert_string_equal(vs.v[0].path, "/0/0");
    assert_true(strlen(vs.v[0].message) < 200);
    assert_non_null(strstr(vs.v[0].message, "got array [[[["));
    assert_int_equal(ar_contract_accepts(c, v), 0);
    ar_violations_finish(&vs);
    ar_contract_destroy(c);
    /* jansson frees recursively; unwind by hand so the test itself stays bounded. */
    while (json_array_size(v)) {
        json_t *inner = json_incref(json_array_get(v, 0));
        json_decref(v);
        v = inner;
    }
    json_decref(v);
}

static void test_contract_deep_schema_is_a_load_error(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    for (int i = 0; i < AR_CONTRACT_MAX_DEPTH + 2; i++)
        ar_buf_puts(&b, "{\"items\":");
    ar_buf_puts(&b, "{}");
    for (int i = 0; i < AR_CONTRACT_MAX_DEPTH + 2; i++)
        ar_buf_putc(&b, '}');
    struct ar_contract *c = (struct ar_contract *)&b;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_contract_parse(b.data, b.len, &c, &err), AR_EUSAGE);
    assert_null(c);
    assert_non_null(strstr(err.msg, "nests deeper than 512 levels"));
    ar_buf_finish(&b);
}

struct load_case {
    const char *schema;
    const char *where;
    const char *msg;
};

static const struct load_case load_cases[] = {
    { "{\"properties\":{\"x\":{\"oneOf\":[]}}}", "/properties/x/oneOf",
      "'oneOf' at /properties/x must be a non-empty array of schemas" },
    { "{\"$ref\":\"https://example.com/s.json\"}", "/$ref",
      "'$ref' at (root) names 'https://example.com/s.json', a document agentrun does not have: "
      "it never fetches schemas" },
    { "{\"$ref\":\"#/$defs/missing\"}", "/$ref",
      "'$ref' at (root) names 'https://agentrun.invalid/schema.json#/$defs/missing', which is "
      "not a schema in its document" },
    { "{\"properties\":{\"a/b\":{\"maxlength\":3}}}", "/properties/a~1b/maxlength",
      "unknown keyword 'maxlength' at /properties/a~1b: did you mean 'maxLength'?" },
    { "{\"$schema\":\"http://json-schema.org/draft-04/schema#\"}", "/$schema",
      "'$schema' at (root) names 'http://json-schema.org/draft-04/schema#', a dialect agentrun "
      "does not implement" },
    { "{\"$schema\":\"https://json-schema.org/draft/2019-09/schema\"}", "/$schema",
      "'$schema' at (root) names 'https://json-schema.org/draft/2019-09/schema', a dialect" },
    { "{\"$recursiveRef\":\"#\"}", "/$recursiveRef",
      "'$recursiveRef' at (root) is draft 2019-09's" },
    { "{\"$id\":\"https://x.example/a#frag\"}", "/$id", "'$id' at (root) holds a fragment" },
    { "{\"type\":\"float\"}", "/type", "'type' at (root) names unknown type 'float'" },
    { "{\"type\":[]}", "/type",
      "'type' at (root) must be a type name or a non-empty array of them" },
    { "{\"minimum\":\"1\"}", "/minimum", "'minimum' at (root) must be a number" },
    { "{\"exclusiveMinimum\":true}", "/exclusiveMinimum",
      "'exclusiveMinimum' at (root) is a boolean, as draft-04 wrote it" },
    { "{\"multipleOf\":0}", "/multipleOf", "'multipleOf' at (root) must be greater than 0" },
    { "{\"multipleOf\":1.0000000000000000001}", "/multipleOf",
      "'multipleOf' at (root) has more than 18 significant digits" },
    { "{\"minLength\":-1}", "/minLength", "'minLength' at (root) must be a non-negative integer" },
    { "{\"maxItems\":1.5}", "/maxItems", "'maxItems' at (root) must be a non-negative integer" },
    { "{\"required\":[1]}", "/required", "'required' at (root) must contain only strings" },
    { "{\"items\":3}", "/items", "schema at /items must be an object or a boolean, not integer" },
    { "{\"properties\":[]}", "/properties", "'properties' at (root) must be an object of schemas" },
    { "{\"pattern\":\"[[:alnum:]_]\"}", "/pattern",
      "'pattern' at (root) is not an ECMA-262 pattern agentrun can match: a lone ']'" },
};

static void test_contract_bad_schema_names_keyword_and_pointer(void **state)
{
    for (size_t i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
        struct ar_contract *c;
        struct ar_error err = AR_ERROR_INIT;
        const char *s = load_cases[i].schema;
        assert_int_equal(ar_contract_parse(s, strlen(s), &c, &err), AR_EUSAGE);
        assert_null(c);
        assert_int_equal(err.code, AR_EUSAGE);
        assert_string_equal(err.where, load_cases[i].where);
        if (strncmp(err.msg, load_cases[i].msg, strlen(load_cases[i].msg)) != 0)
            fail_msg("%s: got '%s'", s, err.msg);
    }
}

/* The text after a NUL byte is part of the string: a pattern must judge it too. */
static void test_contract_pattern_sees_past_a_nul_byte(void **state)
{
    (void)state;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_contract *c;
    const char *schema = "{\"pattern\":\"^[a-z]+$\"}";
    assert_int_equal(ar_contract_parse(schema, strlen(schema), &c, &err), 0);
    json_t *v = json_loads("\"abc\\u0000; rm -rf /\"", JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    assert_non_null(v);
    assert_false(ar_contract_accepts(c, v));
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    assert_int_equal(ar_contract_check(c, v, &vs), 1);
    ar_violations_finish(&vs);
    json_decref(v);
    ar_contract_destroy(c);
}

/* What ECMA-262's unicode mode refuses, and what PCRE2 cannot match as ECMA-262 does,
 * is a load error that says why. */
static void test_contract_bad_pattern_is_a_load_error(void **state)
{
    struct ar_contract *c;
    struct ar_error err = AR_ERROR_INIT;
    const char *s = "{\"properties\":{\"id\":{\"pattern\":\"a(b\"}}}";
    assert_int_equal(ar_contract_parse(s, strlen(s), &c, &err), AR_EUSAGE);
    assert_string_equal(err.where, "/properties/id/pattern");
    assert_non_null(strstr(err.msg, "'pattern' at /properties/id is not an ECMA-262 pattern"));
    assert_non_null(strstr(err.msg, "'(' is not closed"));
    static const struct {
        const char *pattern, *why;
    } bad[] = {
        { "\\a", "\\a is not an escape" },
        { "[[:alnum:]_]", "a lone ']'" },
        { "a**", "nothing to repeat" },
        { "(?=a)*", "an assertion cannot take a quantifier" },
        { "a{2,1}", "out of order" },
        { "x{70000}", "a bound above 65535" },
        { "\\2(a)", "refers to a group the pattern does not have" },
        { "\\k<x>(?<y>a)", "names no group" },
        { "(?<n>a)(?<n>b)", "two groups are named 'n'" },
        { "[z-a]", "a range out of order" },
        { "[\\d-z]", "a range cannot start or end with a class escape" },
        { "(?<=a+)b", "lookbehind" },
        { "\\p{Nonsense}", "PCRE2 cannot match it" },
        { "\\u{110000}", "above U+10FFFF" },
        { "a{", "a lone '{'" },
        { "(?i)a", "'(?' must be followed by" },
        { "a)", "closes no group" },
        { "\\", "lone backslash" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = (struct ar_error)AR_ERROR_INIT;
        json_t *schema = json_pack("{s:s}", "pattern", bad[i].pattern);
        char *text = json_dumps(schema, 0);
        c = NULL;
        if (ar_contract_parse(text, strlen(text), &c, &err) != AR_EUSAGE ||
            !strstr(err.msg, bad[i].why))
            fail_msg("%s: %s", bad[i].pattern, err.msg);
        free(text);
        json_decref(schema);
    }
    /* Deep nesting is refused before PCRE2 sees it; long patterns too. */
    size_t n = 100000;
    char *deep = malloc(2 * n + 2);
    assert_non_null(deep);
    memset(deep, '(', n);
    deep[n] = 'a';
    memset(deep + n + 1, ')', n);
    deep[2 * n + 1] = '\0';
    json_t *schema = json_pack("{s:s}", "pattern", deep);
    c = NULL;
    assert_int_equal(ar_contract_from_json(schema, &c, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "longer than"));
    json_decref(schema);
    deep[300] = '\0';
    memset(deep + 1, '(', 298);
    deep[299] = 'a';
    schema = json_pack("{s:s}", "pattern", deep);
    assert_int_equal(ar_contract_from_json(schema, &c, &err), AR_EUSAGE);
    json_decref(schema);
    free(deep);
}

/* 1 when the string value `json` (JSON text) satisfies {"pattern": pattern}. */
static int pattern_accepts(const char *pattern, const char *json)
{
    json_t *schema = json_pack("{s:s}", "pattern", pattern);
    assert_non_null(schema);
    struct ar_contract *c = NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_contract_from_json(schema, &c, &err) != 0)
        fail_msg("%s: %s", pattern, err.msg);
    json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    assert_non_null(v);
    int ok = ar_contract_accepts(c, v);
    json_decref(v);
    ar_contract_destroy(c);
    json_decref(schema);
    return ok;
}

/* Patterns mean what ECMA-262 (unicode mode) says, which is what the models and the
 * CLIs' structured output read them as; the glibc build and the musl release binary
 * run the same engine (tests/schema runs the official suite through both). */
static void test_contract_patterns_are_ecma_262(void **state)
{
    static const struct {
        const char *pattern, *json;
        int ok;
    } cases[] = {
        { "^\\d{4}-\\d{2}-\\d{2}$", "\"2024-01-31\"", 1 },
        { "^\\d{4}-\\d{2}-\\d{2}$", "\"dddd-dd-dd\"", 0 },
        { "^\\d{5}(-\\d{4})?$", "\"12345-6789\"", 1 }, /* zod's ZIP code */
        { "^\\d$", "\"\\u0660\"", 0 },                 /* \d is ASCII */
        { "^\\w+$", "\"caf\\u00e9\"", 0 },             /* \w is ASCII */
        { "^[\\w.-]+$", "\"a.b-c_d\"", 1 },            /* a class, not "\ w . -" */
        { "^[\\w.-]+$", "\"a b\"", 0 },
        { "^\\s$", "\"\\u00a0\"", 1 }, /* ECMA-262's white space */
        { "^\\s$", "\"\\ufeff\"", 1 },
        { "^\\S$", "\"\\u2003\"", 0 },
        { "^.$", "\"\\u00e9\"", 1 }, /* a code point, not a byte */
        { "^.$", "\"\\ud83d\\ude00\"", 1 },
        { "^.$", "\"\\n\"", 0 }, /* not a line terminator */
        { "^.$", "\"\\u2028\"", 0 },
        { "^.$", "\"\\u000b\"", 1 },
        { "^.$", "\"\\u0000\"", 1 },
        { "^abc$", "\"abc\\n\"", 0 }, /* $ is the end, not before a newline */
        { "^\\u00e9$", "\"\\u00e9\"", 1 },
        { "^\\u{1F600}$", "\"\\ud83d\\ude00\"", 1 },
        { "^\\uD83D\\uDE00$", "\"\\ud83d\\ude00\"", 1 }, /* a pair is one code point */
        { "^\\ud83d\\ude00*$", "\"\\ud83d\\ude00\\ud83d\\ude00\"", 1 },
        { "^\\x41\\cJ\\t\\0$", "\"A\\n\\t\\u0000\"", 1 },
        { "^\\p{L}+$", "\"\\u00e9t\\u00e9\"", 1 },
        { "^\\p{Letter}+$", "\"\\u00e9t\\u00e9\"", 1 },
        { "^\\p{Script=Greek}$", "\"\\u03b1\"", 1 },
        { "^\\P{Lu}$", "\"A\"", 0 },
        { "^(a)?b\\1$", "\"b\"", 1 }, /* an unset group matches empty */
        { "^(a)b\\1$", "\"aba\"", 1 },
        { "^(?<y>[0-9]{4})-\\k<y>$", "\"2024-2024\"", 1 },
        { "^[^]$", "\"\\n\"", 1 },
        { "[]", "\"a\"", 0 },
        { "^[\\b]$", "\"\\b\"", 1 },
        { "(?<=\\$)\\d+", "\"cost: $42\"", 1 },
        { "(?<!\\$)\\b\\d+", "\"cost: $42\"", 0 },
        { "b", "\"a\\u0000b\"", 1 },
        { "^b", "\"ab\"", 0 },
        { "x|^b", "\"a\\nb\"", 0 },
        { "^[a-z]+$", "\"ABC\\nabc\"", 0 },
        { "\\{\\}\\[\\]\\/", "\"{}[]/\"", 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (pattern_accepts(cases[i].pattern, cases[i].json) != cases[i].ok)
            fail_msg("%s ~ %s: want %d", cases[i].pattern, cases[i].json, cases[i].ok);
}

/* No pattern runs away: a search's steps are bounded by the string's length, and a
 * search that hits the bound is an error that no `not` or `anyOf` turns into a pass. */
static void test_contract_pattern_limit_is_an_error_never_a_pass(void **state)
{
    const char *text = "{\"pattern\":\"^(a+)+$\"}";
    const char *negated = "{\"not\":{\"pattern\":\"^(a+)+$\"}}";
    const char *either = "{\"anyOf\":[{\"pattern\":\"^(a+)+$\"},{\"type\":\"string\"}]}";
    json_t *v =
        json_string("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab");
    const char *const schemas[] = { text, negated, either };
    for (size_t i = 0; i < 3; i++) {
        struct ar_contract *c;
        assert_int_equal(ar_contract_parse(schemas[i], strlen(schemas[i]), &c, NULL), 0);
        clock_t t0 = clock();
        assert_false(ar_contract_accepts(c, v));
        struct ar_violations vs = AR_VIOLATIONS_INIT;
        assert_true(ar_contract_check(c, v, &vs) >= 1);
        assert_true(vs.n >= 1);
        assert_non_null(strstr(vs.v[vs.n - 1].message, "step limit"));
        assert_true(clock() - t0 < 10 * CLOCKS_PER_SEC);
        ar_violations_finish(&vs);
        ar_contract_destroy(c);
    }
    json_decref(v);

    /* A linear pattern over a long string is answered, both ways. */
    size_t n = 1 << 20;
    char *json = malloc(n + 3);
    assert_non_null(json);
    json[0] = '"';
    memset(json + 1, 'a', n);
    json[n + 1] = '"';
    json[n + 2] = '\0';
    clock_t t0 = clock();
    assert_true(pattern_accepts("^[a-z]+$", json));
    assert_true(pattern_accepts("a{3}", json));
    json[n] = 'A';
    assert_false(pattern_accepts("^[a-z]+$", json));
    assert_true(pattern_accepts("A$", json));
    assert_true(clock() - t0 < 10 * CLOCKS_PER_SEC);
    free(json);
}

static void test_contract_invalid_json_reports_line_and_column(void **state)
{
    struct ar_contract *c;
    struct ar_error err = AR_ERROR_INIT;
    const char *s = "{\n  \"type\": \"string\",\n}";
    assert_int_equal(ar_contract_parse(s, strlen(s), &c, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "invalid JSON at line 3"));
}

static void test_contract_schema_json_is_the_loaded_schema(void **state)
{
    struct ar_contract *c;
    assert_int_equal(ar_contract_parse(review_schema, strlen(review_schema), &c, NULL), 0);
    json_t *want = json_loads(review_schema, 0, NULL);
    assert_true(json_equal(ar_contract_schema_json(c), want));
    json_decref(want);
    ar_contract_destroy(c);
    ar_contract_destroy(NULL);
}

static void test_contract_accept_fn_adapts_to_extract_callback(void **state)
{
    struct ar_contract *c;
    assert_int_equal(ar_contract_parse(review_schema, strlen(review_schema), &c, NULL), 0);
    int (*accept)(const struct ar_json_doc *, void *) = ar_contract_accept_fn;
    struct ar_json_doc good, bad;
    const char *g = "{\"passed\":true,\"summary\":\"ok\",\"issues\":[]}", *b = "{\"passed\":true}";
    assert_int_equal(ar_json_doc_parse(&good, g, strlen(g), NULL), 0);
    assert_int_equal(ar_json_doc_parse(&bad, b, strlen(b), NULL), 0);
    assert_int_equal(accept(&good, c), 1);
    assert_int_equal(accept(&bad, c), 0);
    ar_json_doc_finish(&good);
    ar_json_doc_finish(&bad);
    ar_contract_destroy(c);
}

/* Numbers are compared as the model wrote them, not as the nearest double. */
static void test_contract_doc_compares_numbers_exactly(void **state)
{
    static const struct {
        const char *value;
        int ok;
    } cases[] = {
        { "{\"id\": 9223372036854775807}", 1 },
        { "{\"id\": 9223372036854775808}", 0 },  /* past the maximum by one */
        { "{\"id\": 12345678901234567890}", 0 }, /* and an integer all the same */
        { "{\"id\": 9007199254740993}", 1 },
        { "{\"id\": 1.5}", 0 },
        { "{\"id\": 15e-1}", 0 },
        { "{\"id\": 2.0e0, \"x\": 1e-400}", 1 }, /* 1e-400 is above 0 */
        { "{\"id\": 2, \"x\": 0e5}", 0 },
        { "{\"id\": 2, \"x\": -0}", 0 },
        { "{\"id\": -9007199254740993}", 0 }, /* below the minimum */
    };
    const char *schema = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\","
                         "\"maximum\":9223372036854775807,\"minimum\":-9007199254740992},"
                         "\"x\":{\"exclusiveMinimum\":0}}}";
    struct ar_contract *c;
    assert_int_equal(ar_contract_parse(schema, strlen(schema), &c, NULL), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_json_doc d;
        struct ar_violations vs = AR_VIOLATIONS_INIT;
        assert_int_equal(ar_json_doc_parse(&d, cases[i].value, strlen(cases[i].value), NULL), 0);
        if (ar_contract_accepts_doc(c, &d) != cases[i].ok ||
            (ar_contract_check_doc(c, &d, &vs) == 0) != cases[i].ok)
            fail_msg("%s: want ok=%d", cases[i].value, cases[i].ok);
        ar_violations_finish(&vs);
        ar_json_doc_finish(&d);
    }
    /* The message quotes the number as written. */
    struct ar_json_doc d;
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    const char *big = "{\"id\": 12345678901234567890}";
    assert_int_equal(ar_json_doc_parse(&d, big, strlen(big), NULL), 0);
    assert_int_equal(ar_contract_check_doc(c, &d, &vs), 1);
    assert_string_equal(vs.v[0].message,
                        "expected a number <= 9223372036854775807, got 12345678901234567890");
    ar_violations_finish(&vs);
    ar_json_doc_finish(&d);
    ar_contract_destroy(c);
}

static unsigned rnd(unsigned *seed, unsigned n)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) % n;
}

static json_t *random_value(unsigned *seed, int depth)
{
    switch (rnd(seed, depth > 3 ? 6 : 8)) {
    case 0:
        return json_null();
    case 1:
        return json_boolean(rnd(seed, 2));
    case 2:
        return json_integer((json_int_t)rnd(seed, 7) - 2);
    case 3:
        return json_real(rnd(seed, 5) / 2.0);
    case 4:
        return json_string(rnd(seed, 2) ? "a"
                                        : "\xc3\xa9"
                                          "bc");
    case 5:
        return json_string("");
    case 6: {
        json_t *a = json_array();
        for (unsigned i = rnd(seed, 4); i > 0; i--)
            json_array_append_new(a, random_value(seed, depth + 1));
        return a;
    }
    default: {
        static const char *const keys[] = { "a", "b", "a/b", "~" };
        json_t *o = json_object();
        for (unsigned i = rnd(seed, 4); i > 0; i--)
            json_object_set_new(o, keys[rnd(seed, 4)], random_value(seed, depth + 1));
        return o;
    }
    }
}

static json_t *random_schema(unsigned *seed, int depth)
{
    static const char *const types[] = { "null",   "boolean", "integer", "number",
                                         "string", "array",   "object" };
    json_t *s = json_object();
    for (unsigned i = rnd(seed, 4); i > 0; i--) {
        switch (rnd(seed, depth > 2 ? 9 : 12)) {
        case 0:
            json_object_set_new(s, "type", json_string(types[rnd(seed, 7)]));
            break;
        case 1:
            json_object_set_new(s, "type",
                                json_pack("[ss]", types[rnd(seed, 7)], types[rnd(seed, 7)]));
            break;
        case 2:
            json_object_set_new(s, "required", json_pack("[s]", rnd(seed, 2) ? "a" : "~"));
            break;
        case 3:
            json_object_set_new(s, "enum",
                                json_pack("[io]", (json_int_t)rnd(seed, 3), random_value(seed, 3)));
            break;
        case 4:
            json_object_set_new(s, "const", random_value(seed, 2));
            break;
        case 5:
            json_object_set_new(s, rnd(seed, 2) ? "minimum" : "exclusiveMaximum",
                                json_integer((json_int_t)rnd(seed, 3)));
            break;
        case 6:
            json_object_set_new(s, rnd(seed, 2) ? "minLength" : "maxItems",
                                json_integer((json_int_t)rnd(seed, 3)));
            break;
        case 7:
            json_object_set_new(s, "pattern", json_string(rnd(seed, 2) ? "^a" : "b|c"));
            break;
        case 8:
            json_object_set_new(s, "additionalProperties", json_boolean(rnd(seed, 2)));
            break;
        case 9:
            json_object_set_new(s, "items", random_schema(seed, depth + 1));
            break;
        case 10:
            json_object_set_new(s, "additionalProperties", random_schema(seed, depth + 1));
            break;
        default:
            json_object_set_new(s, "properties",
                                json_pack("{soso}", "a", random_schema(seed, depth + 1), "a/b",
                                          random_schema(seed, depth + 1)));
            break;
        }
    }
    return s;
}

/* Random schemas against random values: check and accepts always agree, every stored
 * violation has a pointer into the value, and nothing leaks or crashes. */
static void test_contract_random_schemas_check_and_accept_agree(void **state)
{
    unsigned seed = 42;
    for (int round = 0; round < 3000; round++) {
        json_t *schema = random_schema(&seed, 0);
        struct ar_contract *c;
        assert_int_equal(ar_contract_from_json(schema, &c, NULL), 0);
        for (int k = 0; k < 5; k++) {
            json_t *v = random_value(&seed, 0);
            struct ar_violations vs = AR_VIOLATIONS_INIT;
            int n = ar_contract_check(c, v, &vs);
            assert_true(n >= 0);
            assert_int_equal(ar_contract_accepts(c, v), n == 0);
            for (size_t i = 0; i < vs.n; i++) {
                assert_true(vs.v[i].path[0] == '\0' || vs.v[i].path[0] == '/');
                assert_true(strlen(vs.v[i].message) > 0);
            }
            ar_violations_finish(&vs);
            json_decref(v);
        }
        ar_contract_destroy(c);
        json_decref(schema);
    }
}

static void test_json_pointer_escapes_per_rfc6901(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_json_pointer_append(&b, "a~/b", 4), 0);
    assert_int_equal(ar_json_pointer_append(&b, "", 0), 0);
    assert_string_equal(ar_buf_cstr(&b), "/a~0~1b/");
    ar_buf_finish(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract_check_table),
        cmocka_unit_test(test_contract_lists_all_violations_with_pointers),
        cmocka_unit_test(test_contract_violation_keeps_offending_value),
        cmocka_unit_test(test_contract_check_appends_to_existing_list),
        cmocka_unit_test(test_contract_long_values_are_cut_in_messages),
        cmocka_unit_test(test_contract_violations_are_capped_and_counted),
        cmocka_unit_test(test_contract_deep_values_do_not_recurse_without_bound),
        cmocka_unit_test(test_contract_deep_schema_is_a_load_error),
        cmocka_unit_test(test_contract_bad_schema_names_keyword_and_pointer),
        cmocka_unit_test(test_contract_bad_pattern_is_a_load_error),
        cmocka_unit_test(test_contract_patterns_are_ecma_262),
        cmocka_unit_test(test_contract_pattern_limit_is_an_error_never_a_pass),
        cmocka_unit_test(test_contract_pattern_sees_past_a_nul_byte),
        cmocka_unit_test(test_contract_invalid_json_reports_line_and_column),
        cmocka_unit_test(test_contract_schema_json_is_the_loaded_schema),
        cmocka_unit_test(test_contract_accept_fn_adapts_to_extract_callback),
        cmocka_unit_test(test_contract_doc_compares_numbers_exactly),
        cmocka_unit_test(test_contract_random_schemas_check_and_accept_agree),
        cmocka_unit_test(test_json_pointer_escapes_per_rfc6901),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
