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
      "/a: no value is allowed here\n" },
    { "annotations ignored",
      "{\"title\":\"t\",\"description\":\"d\",\"examples\":[1],\"$schema\":\"x\",\"default\":1,"
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
      "unsupported keyword 'oneOf' at /properties/x" },
    { "{\"$ref\":\"#\"}", "/$ref", "unsupported keyword '$ref' at (root)" },
    { "{\"properties\":{\"a/b\":{\"format\":\"date\"}}}", "/properties/a~1b/format",
      "unsupported keyword 'format' at /properties/a~1b" },
    { "{\"type\":\"float\"}", "/type", "'type' at (root) names unknown type 'float'" },
    { "{\"type\":[]}", "/type",
      "'type' at (root) must be a type name or a non-empty array of them" },
    { "{\"minimum\":\"1\"}", "/minimum", "'minimum' at (root) must be a number (draft 6+ style)" },
    { "{\"exclusiveMinimum\":true}", "/exclusiveMinimum",
      "'exclusiveMinimum' at (root) must be a number (draft 6+ style)" },
    { "{\"minLength\":-1}", "/minLength", "'minLength' at (root) must be a non-negative integer" },
    { "{\"maxItems\":1.5}", "/maxItems", "'maxItems' at (root) must be a non-negative integer" },
    { "{\"required\":[1]}", "/required", "'required' at (root) must contain only strings" },
    { "{\"enum\":[]}", "/enum", "'enum' at (root) must be a non-empty array" },
    { "{\"items\":[{}]}", "/items",
      "'items' at (root) must be a single schema (tuple form is not supported)" },
    { "{\"items\":3}", "/items", "schema at /items must be an object or a boolean, not integer" },
    { "{\"properties\":[]}", "/properties", "'properties' at (root) must be an object" },
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
        assert_string_equal(err.msg, load_cases[i].msg);
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

static void test_contract_bad_pattern_is_a_load_error(void **state)
{
    struct ar_contract *c;
    struct ar_error err = AR_ERROR_INIT;
    const char *s = "{\"properties\":{\"id\":{\"pattern\":\"a(b\"}}}";
    assert_int_equal(ar_contract_parse(s, strlen(s), &c, &err), AR_EUSAGE);
    assert_string_equal(err.where, "/properties/id/pattern");
    assert_non_null(strstr(err.msg, "'pattern' at /properties/id is not a valid POSIX extended"));
}

/* Loads {"pattern": pattern} and returns ar_contract_parse()'s code. */
static int load_pattern(const char *pattern, struct ar_error *err)
{
    json_t *schema = json_pack("{s:s}", "pattern", pattern);
    assert_non_null(schema);
    char *text = json_dumps(schema, 0);
    assert_non_null(text);
    struct ar_contract *c = NULL;
    int rc = ar_contract_parse(text, strlen(text), &c, err);
    ar_contract_destroy(c);
    free(text);
    json_decref(schema);
    return rc;
}

/* A bound above POSIX's RE_DUP_MAX (255) loads nowhere: glibc takes up to 32767,
 * musl (the release binary's C library) refuses it, and a template must load alike
 * with every build. What the message says, and that 255 itself is fine. */
static void test_contract_pattern_bound_past_re_dup_max_is_a_load_error(void **state)
{
    (void)state;
    static const char *const big[] = { "^[]a{]{1,998}$", "a{2}|b{990}", "^[a-z]{256}$",
                                       "x{0,256}",       "x{300,}",     "(a){256,256}" };
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        struct ar_error err = AR_ERROR_INIT;
        assert_int_equal(load_pattern(big[i], &err), AR_EUSAGE);
        assert_string_equal(err.where, "/pattern");
        if (!strstr(err.msg, "above 255 (POSIX's RE_DUP_MAX)"))
            fail_msg("%s: %s", big[i], err.msg);
    }
    static const char *const fine[] = { "^[a-z]{255}$", "x{0,255}", "x{255,}", "\\{256\\}",
                                        "[{]256}" };
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
        struct ar_error err = AR_ERROR_INIT;
        if (load_pattern(fine[i], &err) != 0)
            fail_msg("%s: %s", fine[i], err.msg);
    }
}

static void test_contract_pattern_too_complex_to_compile_is_a_load_error(void **state)
{
    /* Found by tests/fuzz/fuzz_contract: nested bounds made regcomp() take
     * gigabytes and half a minute; 100000 nested groups overflowed its stack. */
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(load_pattern("((a{1,1000}){1,1000})", &err), AR_EUSAGE);
    assert_string_equal(err.where, "/pattern");
    assert_non_null(strstr(err.msg, "is too complex to compile"));

    size_t n = 100000;
    char *deep = malloc(2 * n + 2);
    assert_non_null(deep);
    memset(deep, '(', n);
    deep[n] = 'a';
    memset(deep + n + 1, ')', n);
    deep[2 * n + 1] = '\0';
    err = (struct ar_error)AR_ERROR_INIT;
    assert_int_equal(load_pattern(deep, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "is too complex to compile"));
    free(deep);

    /* Found by tests/fuzz/fuzz_contract: regcomp() copies the operand of each
     * '+', so 46 of them in a row ran out of memory. */
    err = (struct ar_error)AR_ERROR_INIT;
    assert_int_equal(load_pattern("^null++++++++++++++++++++++++++++++++++++++++++++++", &err),
                     AR_EUSAGE);
    assert_non_null(strstr(err.msg, "is too complex to compile"));
    /* tests/fuzz/fuzz_pattern: regcomp() took minutes over "1++++*+++++++" and
     * 37 s over "t?" and 13 '+'. POSIX leaves repeated repetitions undefined. */
    static const char *const stacked[] = { "1++++*+++++++", "t?+++++++++++++", "a+*",
                                           "a{2}*",         "a*{2}",           "(a?+){1,4}" };
    for (size_t i = 0; i < sizeof(stacked) / sizeof(stacked[0]); i++)
        assert_int_equal(load_pattern(stacked[i], NULL), AR_EUSAGE);
    /*
     * Found by tests/fuzz/fuzz_pattern running out of memory: what a bound
     * repeats costs glibc more than its copies. Each optional or group among
     * them makes every copy's closure longer: "^(a?){1,1000}$" was not done
     * in two minutes, "^(a?b?){1,500}$" took 2 GB, "^[a-z]{1,16000}$" 2 GB,
     * and "^(a{1,100}){1,100}$" took 3 GB and 34 s to match 10 KB of "a"
     * (all loaded before: they were under 16,384 copies). Each of these
     * families just under the limit now costs at most about 90 MB and
     * 0.6 s a MB of string (docs/prompts.md).
     */
    static const char *const costly[] = {
        "^(a?){1,1000}$",  "^(a?b?){1,500}$", "^[a-z]{1,16000}$",    "(a{1,100}){1,100}",
        "^[]a{]{1,9999}$", "a{2}|b{16000}",   "^(a?){1,250}$",       "^(a*){1,250}$",
        "^[a-z]{1,1001}$", "^(a|b){1,250}$",  "^(a{0,30}b?){1,30}$", "^((a?){1,10}){1,24}$",
    };
    for (size_t i = 0; i < sizeof(costly) / sizeof(costly[0]); i++) {
        err = (struct ar_error)AR_ERROR_INIT;
        assert_int_equal(load_pattern(costly[i], &err), AR_EUSAGE);
        assert_non_null(strstr(err.msg, "is too complex to compile"));
    }

    /* Ordinary bounds, classes and escapes stay allowed. */
    static const char *const fine[] = {
        "^[a-z]{1,64}$",
        "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        "(a{1,30}){1,30}",
        "[[:alpha:]]{3,}",
        "^[]a{]{1,255}$",
        "\\{1000000\\}",
        "(((((x)))))+",
        "a{2}|b{255}",
        "(a+)+",
        "(a*)?b+c?d{2}",
        "^(a?){1,249}$",
        "^[0-9a-f]{128}$",
        "^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$",
        "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    };
    /*
     * glibc's regcomp() grows its node sets with realloc(); where the heap
     * has a large free chunk (the tests above leave one), each growth splits
     * it and frees the remainder, and under MALLOC_PERTURB_ (which meson sets
     * at random) every such free memsets megabytes: "(a{1,100}){1,100}" took
     * 75 s instead of 0.06 s. This loop checks our limits, not glibc's
     * allocator, so perturbing is off for it alone.
     */
#ifdef M_PERTURB
    const char *perturb = getenv("MALLOC_PERTURB_");
    mallopt(M_PERTURB, 0);
#endif
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
        assert_int_equal(load_pattern(fine[i], NULL), 0);
#ifdef M_PERTURB
    if (perturb)
        mallopt(M_PERTURB, atoi(perturb));
#endif
}

/* 1 when the string value `json` (JSON text) satisfies {"pattern": pattern}. */
static int pattern_accepts(const char *pattern, const char *json)
{
    json_t *schema = json_pack("{s:s}", "pattern", pattern);
    assert_non_null(schema);
    struct ar_contract *c = NULL;
    assert_int_equal(ar_contract_from_json(schema, &c, NULL), 0);
    json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    assert_non_null(v);
    int ok = ar_contract_accepts(c, v);
    json_decref(v);
    ar_contract_destroy(c);
    json_decref(schema);
    return ok;
}

static void test_contract_unanchored_pattern_on_a_long_string_is_linear(void **state)
{
    /* regexec() retried "[a-z]+b" at each of 200000 starts, each running to
     * the end: about a minute. Now one pass. */
    size_t n = 200000;
    char *json = malloc(n + 3);
    assert_non_null(json);
    json[0] = '"';
    memset(json + 1, 'a', n);
    json[n + 1] = '"';
    json[n + 2] = '\0';
    /* CPU time, not the wall clock: on a loaded machine the wall clock says nothing. */
    clock_t t0 = clock();
    assert_false(pattern_accepts("[a-z]+b", json));
    json[n] = 'b';
    assert_true(pattern_accepts("[a-z]+b", json));
    assert_true(clock() - t0 < 5 * CLOCKS_PER_SEC);
    free(json);

    /* Matching means the same as before. */
    static const struct {
        const char *pattern, *json;
        int ok;
    } cases[] = {
        { "b", "\"a\\u0000b\"", 1 },
        { "^b", "\"ab\"", 0 },
        { "^a", "\"ab\"", 1 },
        { "a$", "\"ab\"", 0 },
        { "x|^a", "\"ab\"", 1 },
        { "x|^b", "\"ab\"", 0 },
        { "(a)(b)\\2", "\"zabb\"", 1 },
        { "(a)(b)\\2", "\"zab\"", 0 },
        { "[)]", "\"a)\"", 1 },
        { "[0-9]{3}", "\"x12y345\"", 1 },
        { "^[a-z]+$", "\"abc\\n\"", 0 },
        { "c\\)", "\"abc)\"", 1 },
        /* tests/fuzz/fuzz_pattern: '^' must not match after a newline. */
        { "^[a-z]+$", "\"ABC\\nabc\"", 0 },
        { "x|^b", "\"a\\nb\"", 0 },
        { "^.", "\"\\u0000\\nb\"", 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        print_message("%s ~ %s\n", cases[i].pattern, cases[i].json);
        assert_int_equal(pattern_accepts(cases[i].pattern, cases[i].json), cases[i].ok);
    }
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
        cmocka_unit_test(test_contract_pattern_too_complex_to_compile_is_a_load_error),
        cmocka_unit_test(test_contract_pattern_bound_past_re_dup_max_is_a_load_error),
        cmocka_unit_test(test_contract_unanchored_pattern_on_a_long_string_is_linear),
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
