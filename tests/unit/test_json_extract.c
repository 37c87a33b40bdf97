/* Unit tests of src/json/extract: which value model text yields, and why not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_dump.h"
#include "json/extract.h"
#include "json/repair.h"
#include "json/scan.h"
#include "util/buf.h"

/* `expect` is the compact JSON wanted, or NULL when nothing may be found;
 * `code` is then the error. len 0 means strlen(text). `extra`: the other
 * values the answer names (extra_values), and where the first starts. */
struct extract_case {
    const char *name;
    const char *text;
    size_t len;
    int want;
    unsigned flags;
    const char *expect;
    int code;
    size_t extra, extra_at;
};

static char *dump(const json_t *v)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_json_dump_compact(v, &b), 0);
    return ar_buf_detach(&b, NULL);
}

static const struct extract_case cases[] = {
    { "bare", "{\"a\":1}", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0, 0, 0 },
    { "after explanatory text", "Sure! Here is the result:\n{\"ok\": true}", 0, AR_JSON_OBJECT, 0,
      "{\"ok\":true}", 0, 0, 0 },
    { "before trailing text", "{\"ok\": true}\n\nLet me know if you need more.", 0, AR_JSON_OBJECT,
      0, "{\"ok\":true}", 0, 0, 0 },
    { "nested objects", "x {\"a\": {\"b\": {\"c\": [1, {\"d\": null}]}}} y", 0, AR_JSON_OBJECT, 0,
      "{\"a\":{\"b\":{\"c\":[1,{\"d\":null}]}}}", 0, 0, 0 },
    { "json fence", "Result:\n```json\n{\"a\": 1}\n```\n", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0, 0,
      0 },
    { "plain fence", "Result:\n```\n{\"a\": 1}\n```\n", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0, 0,
      0 },
    { "fence wins over earlier prose", "try {\"draft\": 1} or\n```json\n{\"final\": 2}\n```", 0,
      AR_JSON_OBJECT, 0, "{\"final\":2}", 0, 1, 4 },
    { "tilde fence, long, JSON5 label", "~~~~JSON5\n{\"a\": 1}\n~~~~\n", 0, AR_JSON_OBJECT, 0,
      "{\"a\":1}", 0, 0, 0 },
    { "fence closes only with a long enough run", "````json\n{\"s\": 1}\n```\n{\"t\": 2}\n````\n",
      0, AR_JSON_OBJECT, 0, "{\"s\":1}", 0, 1, 22 },
    { "no JSON", "Nothing to see here.", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON, 0, 0 },
    { "empty input", "", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON, 0, 0 },
    { "incomplete braces are truncation", "Here: {\"a\": {\"b\": 1}", 0, AR_JSON_OBJECT, 0, NULL,
      AR_ETRUNCATED, 0, 0 },
    { "stray closing braces", "}}} ]] no json {{ x }}", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON, 0,
      0 },
    { "braces inside strings", "{\"s\": \"}{ ] [ \\\" }\", \"t\": 2}", 0, AR_JSON_OBJECT, 0,
      "{\"s\":\"}{ ] [ \\\" }\",\"t\":2}", 0, 0, 0 },
    { "fences inside strings", "```json\n{\"md\": \"```python\\nx=1\\n```\"}\n```\n", 0,
      AR_JSON_OBJECT, 0, "{\"md\":\"```python\\nx=1\\n```\"}", 0, 0, 0 },
    { "placeholders before the answer",
      "Fill {name} and {id} in. Answer: {\"name\": \"x\", \"id\": 1}", 0, AR_JSON_OBJECT, 0,
      "{\"name\":\"x\",\"id\":1}", 0, 0, 0 },
    { "other languages never win over json",
      "```python\nd = {\"a\": 1}\n```\nand\n```json\n{\"b\": 2}\n```", 0, AR_JSON_OBJECT, 0,
      "{\"b\":2}", 0, 1, 14 },
    { "several candidates: the first, the other named", "{\"n\": 1} then {\"n\": 2}", 0,
      AR_JSON_OBJECT, 0, "{\"n\":1}", 0, 1, 14 },
    { "citations are not the answer", "As shown [1][2], {\"a\": [3]}", 0, AR_JSON_OBJECT, 0,
      "{\"a\":[3]}", 0, 0, 0 },
    { "array wanted", "See {\"x\": 1} then [1, 2]", 0, AR_JSON_ARRAY, 0, "[1,2]", 0, 0, 0 },
    { "array inside an object is not a top-level array", "{\"x\": [1]}", 0, AR_JSON_ARRAY, 0, NULL,
      AR_ENOJSON, 0, 0 },
    { "any takes the first of either", "[1] then {\"a\": 1}", 0, AR_JSON_ANY, 0, "[1]", 0, 1, 9 },
    { "CRLF", "Result:\r\n```json\r\n{\"a\": 1,\r\n \"b\": 2}\r\n```\r\n", 0, AR_JSON_OBJECT, 0,
      "{\"a\":1,\"b\":2}", 0, 0, 0 },
    { "BOM", "\xEF\xBB\xBF{\"a\": 1}", 0, AR_JSON_OBJECT, 0, "{\"a\":1}", 0, 0, 0 },
    { "invalid UTF-8 in prose", "\xff\xfe bad \xc3 {\"a\": \"\xc3\xa9\"}", 0, AR_JSON_OBJECT, 0,
      "{\"a\":\"\xc3\xa9\"}", 0, 0, 0 },
    { "NUL bytes in prose", "a\0b\0{\"a\": 1}\0", 13, AR_JSON_OBJECT, 0, "{\"a\":1}", 0, 0, 0 },
    { "escaped NUL inside a string", "{\"a\": \"x\\u0000y\"}", 0, AR_JSON_OBJECT, 0,
      "{\"a\":\"x\\u0000y\"}", 0, 0, 0 },
    { "a broken value yields no fragment of itself", "{ \"a\": {\"b\": 1} oops }", 0,
      AR_JSON_OBJECT, 0, NULL, AR_ENOJSON, 0, 0 },
    { "a broken value never closed hides what follows", "[{\"i\":1{\"i\":2}]", 0, AR_JSON_OBJECT, 0,
      NULL, AR_ENOJSON, 0, 0 },
    { "after a broken value that closes, scanning goes on",
      "draft {\"a\": 1 oops} final {\"a\": 2}", 0, AR_JSON_OBJECT, 0, "{\"a\":2}", 0, 1, 6 },
    { "truncated value is not replaced by its fragment", "{\"r\": {\"a\": 1}, \"s\": [1, 2", 0,
      AR_JSON_OBJECT, 0, NULL, AR_ETRUNCATED, 0, 0 },
    { "unclosed fence with a truncated value", "```json\n{\"a\": [1,", 0, AR_JSON_OBJECT, 0, NULL,
      AR_ETRUNCATED, 0, 0 },
    { "a truncated JSON block is not replaced by an earlier bare value",
      "e.g. {\"draft\": 1}\n```json\n{\"final\": [1,", 0, AR_JSON_OBJECT, 0, NULL, AR_ETRUNCATED, 0,
      0 },
    { "truncated array of objects when objects wanted", "[{\"a\":1},{\"b\":", 0, AR_JSON_OBJECT, 0,
      NULL, AR_ETRUNCATED, 0, 0 },
    { "truncated citation is not JSON", "as in [1", 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON, 0, 0 },
    { "keys keep the model's order", "{\"z\": 1, \"a\": 2, \"m\": 3}", 0, AR_JSON_OBJECT, 0,
      "{\"z\":1,\"a\":2,\"m\":3}", 0, 0, 0 },
    { "reals keep their short form", "{\"p\": 0.85, \"q\": 1.0, \"r\": 1e-7}", 0, AR_JSON_OBJECT, 0,
      "{\"p\":0.85,\"q\":1.0,\"r\":1e-7}", 0, 0, 0 },
    { "too deep for the parser is skipped", NULL, 0, AR_JSON_OBJECT, 0, NULL, AR_ENOJSON, 0, 0 },
    { "repair: sloppy candidate", "Answer: {'a': 1, b: True,}", 0, AR_JSON_OBJECT,
      AR_EXTRACT_REPAIR, "{\"a\":1,\"b\":true}", 0, 0, 0 },
    { "repair: truncated value is closed", "Answer: {\"a\": [1, 2", 0, AR_JSON_OBJECT,
      AR_EXTRACT_REPAIR, "{\"a\":[1,2]}", 0, 0, 0 },
    { "repair: valid candidate first", "{\"a\": 1} {'b': 2}", 0, AR_JSON_OBJECT, AR_EXTRACT_REPAIR,
      "{\"a\":1}", 0, 0, 0 },
    { "repair: jsonc fence with comments", "```jsonc\n{\n  // the id\n  \"id\": 7\n}\n```", 0,
      AR_JSON_OBJECT, AR_EXTRACT_REPAIR, "{\"id\":7}", 0, 0, 0 },
    { "repair: prose with an open brace is not closed", "Sorry, I cannot help. Use { carefully.", 0,
      AR_JSON_OBJECT, AR_EXTRACT_REPAIR, NULL, AR_ENOJSON, 0, 0 },
    { "repair: brackets alone are not a value", "{{", 0, AR_JSON_ANY, AR_EXTRACT_REPAIR, NULL,
      AR_ETRUNCATED, 0, 0 },
    { "repair: a broken value gives no fragment", "[{\"i\":1{\"i\":2}]", 0, AR_JSON_OBJECT,
      AR_EXTRACT_REPAIR, NULL, AR_ENOJSON, 0, 0 },
    { "inline citation loses to a block-level array", "As shown in [1], the list:\n[{\"a\": 1}]", 0,
      AR_JSON_ARRAY, 0, "[{\"a\":1}]", 0, 0, 0 },
    { "inline citation loses to a later object", "As shown in [1], the answer: {\"a\": 1}", 0,
      AR_JSON_ANY, 0, "{\"a\":1}", 0, 0, 0 },
    { "an inline array is the answer when nothing else is", "The ids are [3, 4].", 0, AR_JSON_ARRAY,
      0, "[3,4]", 0, 0, 0 },
    { "the first complete value wins", "{\"v\": 1}\nOr, alternatively:\n{\"v\": 2}", 0,
      AR_JSON_OBJECT, 0, "{\"v\":1}", 0, 1, 28 },
    { "a scalar is never the answer", "The answer is 42 and \"yes\".", 0, AR_JSON_ANY, 0, NULL,
      AR_ENOJSON, 0, 0 },
    { "numbers as written", "{\"id\": 12345678901234567890, \"z\": -0, \"e\": 20e1, \"r\": 1.50}",
      0, AR_JSON_OBJECT, 0, "{\"id\":12345678901234567890,\"z\":-0,\"e\":20e1,\"r\":1.50}", 0, 0,
      0 },
    { "NUL-bearing key", "{\"foo\\u0000bar\": 42}", 0, AR_JSON_OBJECT, 0, "{\"foo\\u0000bar\":42}",
      0, 0, 0 },
    { "without repair, sloppy JSON is not found", "{'a': 1}", 0, AR_JSON_OBJECT, 0, NULL,
      AR_ENOJSON, 0, 0 },
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
        unsigned repairs = r.fixes & ~(unsigned)AR_FIX_NOTES;
        if ((repairs != 0) != ((c->flags & AR_EXTRACT_REPAIR) && strstr(c->name, "valid") == NULL))
            fail_msg("%s: fixes %#x", c->name, r.fixes);
        if (r.extra.count != c->extra || (c->extra && r.extra.at != c->extra_at) ||
            !(r.fixes & AR_FIX_EXTRA_VALUES) != !c->extra)
            fail_msg("%s: extra_values %zu at %zu, want %zu at %zu", c->name, r.extra.count,
                     r.extra.at, c->extra, c->extra_at);
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

/*
 * A corpus of the two shapes where a reply holds more than its answer, written
 * for agentrun (docs/extract.md, "More than one value"): several values, and
 * an object closed before its members. Brackets that a repair could only fix
 * by dropping part of a value, and braces in prose next to a valid value, are
 * here too. Each case runs without and with --repair: the value documented
 * for it with exactly the fixes named (and the count and byte of what was left
 * out or merged), or the error.
 */
struct shape_case {
    const char *text;
    int want;
    unsigned flags;
    const char *expect; /* NULL: the error `code` */
    int code;
    unsigned fixes; /* exactly these */
    size_t extra, extra_at;
    size_t members, members_at;
};

#define S     0
#define R     AR_EXTRACT_REPAIR
#define OBJ   AR_JSON_OBJECT
#define ARR   AR_JSON_ARRAY
#define ANY   AR_JSON_ANY
#define EXTRA AR_FIX_EXTRA_VALUES
#define MERGE AR_FIX_MEMBERS_AFTER_CLOSE

static const struct shape_case shapes[] = {
    /* Issue 58 item 4: a JSON block that is left out is named whatever its kind, one that
     * needs repair (Python's True) too; in the text between fences a broken array stays
     * prose (a citation). */
    { "lorem\n```json\n{\"key\":\"value\"}\n```\nipsum\n```json\n[1,2,3,True]\n```\n42", OBJ, S,
      "{\"key\":\"value\"}", 0, EXTRA, 1, 48, 0, 0 },
    { "lorem\n```json\n{\"key\":\"value\"}\n```\nipsum\n```json\n[1,2,3\n```\n42", OBJ, S,
      "{\"key\":\"value\"}", 0, EXTRA, 1, 48, 0, 0 },
    { "{\"key\":\"value\"} see [1, 2 and 3]", OBJ, S, "{\"key\":\"value\"}", 0, 0, 0, 0, 0, 0 },
    /* Several values: the first is the answer, the others are named. */
    { "{\"status\": \"ok\"}\n\nAlternatively:\n{\"status\": \"retry\"}", OBJ, S,
      "{\"status\":\"ok\"}", 0, EXTRA, 1, 33, 0, 0 },
    { "{\"status\": \"ok\"}\n\nAlternatively:\n{\"status\": \"retry\"}", OBJ, R,
      "{\"status\":\"ok\"}", 0, EXTRA, 1, 33, 0, 0 },
    { "First:\n```json\n{\"v\": 1}\n```\nFixed:\n```json\n{\"v\": 2}\n```\n", OBJ, S, "{\"v\":1}",
      0, EXTRA, 1, 43, 0, 0 },
    { "{\"id\": 1}, {\"id\": 2}, {\"id\": 3}", OBJ, S, "{\"id\":1}", 0, EXTRA, 2, 11, 0, 0 },
    { "{\"id\": 1}, {\"id\": 2}, {\"id\": 3}", OBJ, R, "{\"id\":1}", 0, EXTRA, 2, 11, 0, 0 },
    { "// plan\n{\"step\": 1}\n// then\n{\"step\": 2}", OBJ, S, "{\"step\":1}", 0, EXTRA, 1, 28, 0,
      0 },
    { "[{\"n\": 1}][{\"n\": 2}]", ARR, S, "[{\"n\":1}]", 0, EXTRA, 1, 10, 0, 0 },
    /* Values of another kind than the one wanted are no candidates. */
    { "[1, 2]{\"k\": \"v\"}", OBJ, S, "{\"k\":\"v\"}", 0, 0, 0, 0, 0, 0 },
    { "[1, 2]{\"k\": \"v\"}", ANY, S, "[1,2]", 0, EXTRA, 1, 6, 0, 0 },
    /* A value that began as JSON and broke is named too: it is not prose. */
    { "{\"k\": \"v\"}[1, 2, True]", ANY, S, "{\"k\":\"v\"}", 0, EXTRA, 1, 10, 0, 0 },
    { "{\"k\": \"v\"}[1, 2, True]", ANY, R, "{\"k\":\"v\"}", 0, EXTRA, 1, 10, 0, 0 },
    { "Draft: {\"a\": 1 oops}\nFinal: {\"a\": 2}", OBJ, S, "{\"a\":2}", 0, EXTRA, 1, 7, 0, 0 },
    { "Draft: {\"a\": 1,}\nFinal: {\"a\": 2}", OBJ, R, "{\"a\":2}", 0, EXTRA, 1, 7, 0, 0 },
    { "{\"a\": 1}\nand then {\"b\": [1, 2", OBJ, S, "{\"a\":1}", 0, EXTRA, 1, 18, 0, 0 },
    { "{\"a\": 1}\nand then {\"b\": [1, 2", OBJ, R, "{\"a\":1}", 0, EXTRA, 1, 18, 0, 0 },
    /* An inline citation is prose, not a value left out. */
    { "{\"a\": 1} (see [2])", ANY, S, "{\"a\":1}", 0, 0, 0, 0, 0, 0 },
    /* Only sloppy values: the first is repaired, the others named. */
    { "{'a': 1} and {'b': 2}", OBJ, S, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "{'a': 1} and {'b': 2}", OBJ, R, "{\"a\":1}", 0, AR_FIX_SINGLE_QUOTES | EXTRA, 1, 13, 0, 0 },

    /* An object closed before its members: without repair the answer is
     * exit 3, with repair they are merged and named. */
    { "{\"name\": \"x\"}, \"size\": 3}", OBJ, S, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "{\"name\": \"x\"}, \"size\": 3}", OBJ, R, "{\"name\":\"x\",\"size\":3}", 0, MERGE, 0, 0, 1,
      15 },
    { "{\"name\": \"x\"} \"size\": 3}", OBJ, R, "{\"name\":\"x\",\"size\":3}", 0, MERGE, 0, 0, 1,
      14 },
    { "{\"a\": {\"b\": 1}}, \"c\": 2}", OBJ, R, "{\"a\":{\"b\":1},\"c\":2}", 0, MERGE, 0, 0, 1,
      17 },
    { "{\"a\": 1}, \"b\": 2, \"c\": [3]}", OBJ, R, "{\"a\":1,\"b\":2,\"c\":[3]}", 0, MERGE, 0, 0, 2,
      10 },
    { "{\"a\": 1}}, \"b\": 2}", OBJ, R, "{\"a\":1,\"b\":2}", 0, MERGE, 0, 0, 1, 11 },
    { "{}, \"a\": 1}", OBJ, R, "{\"a\":1}", 0, MERGE, 0, 0, 1, 4 },
    { "{\"a\": 1}, 'b': 2}", OBJ, R, "{\"a\":1,\"b\":2}", 0, MERGE | AR_FIX_SINGLE_QUOTES, 0, 0, 1,
      10 },
    { "{\"a\": 1}, \"b\": 2", OBJ, S, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "{\"a\": 1}, \"b\": 2", OBJ, R, "{\"a\":1,\"b\":2}", 0, MERGE | AR_FIX_TRUNCATION, 0, 0, 1,
      10 },
    { "{\"a\": 1}, \"b\": 2}\n\n{\"c\": 3}", OBJ, S, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "{\"a\": 1}, \"b\": 2}\n\n{\"c\": 3}", OBJ, R, "{\"a\":1,\"b\":2}", 0, MERGE | EXTRA, 1, 19,
      1, 10 },
    { "```json\n{\"a\": 1}, \"b\": 2}\n```", OBJ, R, "{\"a\":1,\"b\":2}", 0, MERGE, 0, 0, 1, 18 },
    /* …after the answer, it is one more value left out. */
    { "{\"x\": 0}\n{\"a\": 1}, \"b\": 2}", OBJ, S, "{\"x\":0}", 0, EXTRA, 1, 9, 0, 0 },
    { "{\"x\": 0}\n{\"a\": 1}, \"b\": 2}", OBJ, R, "{\"x\":0}", 0, EXTRA, 1, 9, 0, 0 },
    /* A quoted string after the object that is no member is a value left out
     * (issue 45: it was dropped unnamed); prose after a member's colon cannot be
     * merged. */
    { "{\"a\": 1}, \"and more\"", OBJ, R, "{\"a\":1}", 0, EXTRA, 1, 10, 0, 0 },
    { "{\"a\": 1}, \"Note\": this is prose", OBJ, R, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },

    /* issue 45: members that lost their colon are members, and whatever follows the
     * answer after a comma, or on its line, is named (ar_json_value_follows()). */
    { "{\"key\": \"value\"}, \"key2\" \"value2\"}", OBJ, S, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "{\"key\": \"value\"}, \"key2\" \"value2\"}", OBJ, R,
      "{\"key\":\"value\",\"key2\":\"value2\"}", 0, MERGE | AR_FIX_MISSING_COLON, 0, 0, 1, 18 },
    { "{\"a\":1}, \"b\" 2}", OBJ, S, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "{\"a\":1}, \"b\" 2}", OBJ, R, "{\"a\":1,\"b\":2}", 0, MERGE | AR_FIX_MISSING_COLON, 0, 0, 1,
      9 },
    { "{\"key\": \"value\"}, [\"abc\"]", OBJ, S, "{\"key\":\"value\"}", 0, EXTRA, 1, 18, 0, 0 },
    { "{\"key\": \"value\"}, [\"abc\"]", OBJ, R, "{\"key\":\"value\"}", 0, EXTRA, 1, 18, 0, 0 },
    { "{\"key\": \"value\"}, [\"abc\"]", ANY, S, "{\"key\":\"value\"}", 0, EXTRA, 1, 18, 0, 0 },
    { "[1], [2]", ARR, S, "[1]", 0, EXTRA, 1, 5, 0, 0 },
    { "{\"a\":1}, 2, 3", OBJ, S, "{\"a\":1}", 0, EXTRA, 1, 9, 0, 0 },
    { "{\"a\":1}, null", OBJ, S, "{\"a\":1}", 0, EXTRA, 1, 9, 0, 0 },
    { "```json {\"a\":1}``` ```json [\"b\"]```", OBJ, S, "{\"a\":1}", 0, EXTRA, 1, 27, 0, 0 },
    { "```json {\"a\":1}``` ```json [\"b\"]```", ANY, S, "{\"a\":1}", 0, EXTRA, 1, 27, 0, 0 },
    { "```json\n{\"a\": 1} [\"b\"]\n```\n", OBJ, S, "{\"a\":1}", 0, EXTRA, 1, 17, 0, 0 },
    /* …and prose after the answer stays prose. */
    { "{\"a\":1}, and then nothing", OBJ, S, "{\"a\":1}", 0, 0, 0, 0, 0, 0 },
    { "{\"a\":1}.\n\n\"Quoted\" prose on a line of its own.", OBJ, S, "{\"a\":1}", 0, 0, 0, 0, 0,
      0 },
    { "{\"a\":1}, nullable fields are fine", OBJ, S, "{\"a\":1}", 0, 0, 0, 0, 0, 0 },
    { "{\"a\": 1} \"quoted\" 2 words", OBJ, S, "{\"a\":1}", 0, EXTRA, 1, 9, 0, 0 },

    /* Brackets: a repair never drops part of a value. */
    { "[{\"id\": 1}}, {\"id\": 2}]", ARR, S, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "[{\"id\": 1}}, {\"id\": 2}]", ARR, R, "[{\"id\":1},{\"id\":2}]", 0, AR_FIX_BRACKETS, 0, 0, 0,
      0 },
    { "[{\"id\": 1}} {\"id\": 2}]", ARR, R, "[{\"id\":1},{\"id\":2}]", 0,
      AR_FIX_BRACKETS | AR_FIX_MISSING_COMMA, 0, 0, 0, 0 },
    { "[{\"id\": 1}}, {\"id\": 2}]", OBJ, R, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
    { "{\"xs\": [1, 2}, \"ys\": [3]}", OBJ, R, "{\"xs\":[1,2],\"ys\":[3]}", 0, AR_FIX_BRACKETS, 0,
      0, 0, 0 },
    { "{\"items\": [{\"a\": 1}, {\"b\": 2}}, \"n\": 2}", OBJ, R,
      "{\"items\":[{\"a\":1},{\"b\":2}],\"n\":2}", 0, AR_FIX_BRACKETS, 0, 0, 0, 0 },
    { "[[1, 2}, [3]]", ARR, R, "[[1,2],[3]]", 0, AR_FIX_BRACKETS, 0, 0, 0, 0 },
    { "{\"a\": [1, 2}]", OBJ, R, "{\"a\":[1,2]}", 0, AR_FIX_BRACKETS, 0, 0, 0, 0 },
    { "[1, 2}, 3]", ARR, R, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },

    /* Braces in prose stay prose: a value that parses beats a repaired one. */
    { "The config uses braces { like } these.\n\n{\"doc\": [1, 2, 3]}", OBJ, R, "{\"doc\":[1,2,3]}",
      0, 0, 0, 0, 0, 0 },
    { "{'a': 1} then {\"b\": 2}", OBJ, R, "{\"b\":2}", 0, 0, 0, 0, 0, 0 },
    { "Use {name} and {id} here: {'a': 1}", OBJ, R, "{\"a\":1}", 0, AR_FIX_SINGLE_QUOTES, 0, 0, 0,
      0 },
    { "Sorry, I cannot do that { like } this.", OBJ, R, NULL, AR_ENOJSON, 0, 0, 0, 0, 0 },
};

#undef S
#undef R

static void test_extract_shapes_corpus(void **state)
{
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        const struct shape_case *c = &shapes[i];
        struct ar_extract_options o = { c->want, c->flags, NULL, NULL };
        struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_json_extract(c->text, strlen(c->text), &o, &r, &err);
        const char *mode = c->flags ? "repair" : "strict";
        if (!c->expect) {
            if (rc != c->code)
                fail_msg("%s '%s': rc %d (%s), want %d", mode, c->text, rc,
                         rc ? err.msg : r.doc.text, c->code);
            continue;
        }
        if (rc != 0)
            fail_msg("%s '%s': %s", mode, c->text, err.msg);
        if (strcmp(r.doc.text, c->expect) != 0 || r.fixes != c->fixes)
            fail_msg("%s '%s': got %s fixes %#x, want %s fixes %#x", mode, c->text, r.doc.text,
                     r.fixes, c->expect, c->fixes);
        if (r.extra.count != c->extra || (c->extra && r.extra.at != c->extra_at))
            fail_msg("%s '%s': extra_values %zu at %zu, want %zu at %zu", mode, c->text,
                     r.extra.count, r.extra.at, c->extra, c->extra_at);
        if ((c->members || r.members.count) &&
            (r.members.count != c->members || r.members.at != c->members_at))
            fail_msg("%s '%s': members_after_close %zu at %zu, want %zu at %zu", mode, c->text,
                     r.members.count, r.members.at, c->members, c->members_at);
        ar_extract_result_finish(&r);
    }
}

/* The case of issue 32: braces in prose, then a valid 5 MB document. Under
 * --repair the document is the answer, not {"like":null}. */
static void test_extract_prose_braces_never_beat_a_valid_document(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_puts(&b,
                "The reply uses braces { like } these, and {placeholder} too.\n\n{\"items\": [");
    for (size_t k = 0; b.len < ((size_t)5 << 20); k++)
        ar_buf_printf(&b, "%s{\"id\": %zu, \"score\": 0.%03zu}", k ? ", " : "", k, k % 1000);
    ar_buf_puts(&b, "]}\n");
    for (unsigned flags = 0; flags <= AR_EXTRACT_REPAIR; flags += AR_EXTRACT_REPAIR) {
        struct ar_extract_options o = { AR_JSON_OBJECT, flags, NULL, NULL };
        struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
        assert_int_equal(ar_json_extract(b.data, b.len, &o, &r, NULL), 0);
        assert_int_equal(r.fixes, 0);
        assert_int_equal(r.start, strchr(b.data, '\n') - b.data + 2);
        assert_int_equal(r.end, b.len - 1);
        ar_extract_result_finish(&r);
    }
    ar_buf_finish(&b);
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
    assert_int_equal(ar_json_extract_all(t, strlen(t), &o, collect_each, &c, NULL, NULL), 3);
    assert_string_equal(c.out, "{\"a\":{\"n\":1}}|{\"b\":2}|{\"c\":3}|");
    o.want = AR_JSON_ANY;
    c.out[0] = '\0';
    assert_int_equal(ar_json_extract_all(t, strlen(t), &o, collect_each, &c, NULL, NULL), 4);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_json_extract_all("none", 4, NULL, collect_each, &c, NULL, &err),
                     AR_ENOJSON);
}

static int count_each(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                      void *arg)
{
    (*(size_t *)arg)++;
    return 0;
}

/* One reading of the text: the answer, the count of the others and the all
 * mode see the same values, whatever a fence or a string does to the text
 * around them. fuzz_extract found the first: the unclosed block `["]{}` is
 * an array cut off (the {} is inside its string), but the bare scan ran from
 * before the fence into the block and --all listed a second {} that the
 * answer's count never saw. */
static void test_extract_one_reading(void **state)
{
    static const struct {
        const char *text;
        size_t values;
    } texts[] = {
        { "{}[\"\n```\n[\"]{}", 1 }, /* the block is an array cut off: no {} in it */
        { "{}[\"\n```json\n{\"a\": \"]\"}\n```\n{}", 3 },
        { "{\"a\": \"x\n```\n{}\n```\n{}", 2 },
        { "[\"\n```\n{}\n```\n\"]{}", 2 },
        { "{}\n```\n{\"s\": \"\n```\n{}", 2 },
        { "{}\n~~~\n[{}, \"\n~~~\n\"] {\"b\": 1}", 2 },
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        const char *t = texts[i].text;
        struct ar_extract_options o = AR_EXTRACT_OPTIONS_INIT;
        struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
        size_t all = 0;
        int n = ar_json_extract_all(t, strlen(t), &o, count_each, &all, NULL, NULL);
        assert_int_equal(n, (int)all);
        if (all != texts[i].values)
            fail_msg("case %zu: --all gives %zu values, not %zu", i, all, texts[i].values);
        assert_int_equal(ar_json_extract(t, strlen(t), &o, &r, NULL), 0);
        size_t named = r.fixes & AR_FIX_EXTRA_VALUES ? r.extra.count : 0;
        if (named + 1 < all)
            fail_msg("case %zu: the answer names %zu other values, --all gives %zu", i, named, all);
        ar_extract_result_finish(&r);
    }
    /* More blocks than the search keeps (the gaps past them are walked again). */
    struct ar_buf t;
    ar_buf_init(&t, AR_BUF_UNLIMITED);
    for (int k = 0; k < 40; k++)
        ar_buf_printf(&t, "```\n%s\n```\n{\"g\": %d}\n", k % 2 ? "{\"b\": 1}" : "[1]", k);
    struct ar_extract_options o = AR_EXTRACT_OPTIONS_INIT;
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    size_t all = 0;
    assert_int_equal(ar_json_extract_all(t.data, t.len, &o, count_each, &all, NULL, NULL), 60);
    assert_int_equal(all, 60);
    assert_int_equal(ar_json_extract(t.data, t.len, &o, &r, NULL), 0);
    assert_string_equal(r.doc.text, "{\"b\":1}");
    assert_int_equal(r.extra.count, 59);
    ar_extract_result_finish(&r);
    ar_buf_finish(&t);
}

/* Valid JSON s[0..n) minus the whitespace between tokens, a byte at a time. */
static char *naive_compact(const char *s, size_t n)
{
    char *o = malloc(n + 1), *w = o;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        if (in) {
            *w++ = s[i];
            if (s[i] == '\\')
                *w++ = s[++i];
            else if (s[i] == '"')
                in = 0;
        } else if (!strchr(" \t\r\n", s[i])) {
            *w++ = s[i];
            in = s[i] == '"';
        }
    }
    *w = '\0';
    return o;
}

/* The answer's compact text is the model's bytes minus the whitespace between
 * tokens, whichever way the block-wise compaction takes them: records with
 * every spacing, strings holding spaces, quotes and escapes at every offset
 * of a block. */
static void test_extract_compacts_like_a_byte_loop(void **state)
{
    static const char *const gaps[] = { "", " ", "  ", "\n  ", "\t", " \r\n    " };
    struct ar_buf t;
    ar_buf_init(&t, AR_BUF_UNLIMITED);
    ar_buf_puts(&t, "Here:\n[");
    for (size_t k = 0; k < 400; k++) {
        const char *g = gaps[k % 6], *h = gaps[(k / 6) % 6];
        ar_buf_printf(&t,
                      "%s%s{%s\"id\"%s:%s%zu,%s\"s\":%s\"%.*s a \\\" b\\\\%s\"%s,\"ok\":%strue}",
                      k ? "," : "", g, h, g, h, k, g, h, (int)(k % 17), "xxxxxxxxxxxxxxxxx",
                      k % 2 ? " " : "", g, h);
    }
    ar_buf_puts(&t, "\n]\nDone.");
    size_t start = strlen("Here:\n"), end = t.len - strlen("\nDone.");
    char *want = naive_compact(t.data + start, end - start);
    for (int only = 0; only <= 1; only++) {
        struct ar_extract_options o = { AR_JSON_ARRAY, only ? AR_EXTRACT_TEXT_ONLY : 0, NULL,
                                        NULL };
        struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
        assert_int_equal(ar_json_extract(t.data, t.len, &o, &r, NULL), 0);
        assert_int_equal(r.start, start);
        assert_int_equal(r.end, end);
        if (!only) {
            assert_string_equal(r.doc.text, want);
        } else {
            struct ar_json_compactor st = AR_JSON_COMPACTOR_INIT;
            struct ar_buf b;
            ar_buf_init(&b, AR_BUF_UNLIMITED);
            assert_int_equal(ar_json_compact(&st, t.data + start, end - start, &b), 0);
            assert_string_equal(ar_buf_cstr(&b), want);
            ar_buf_finish(&b);
        }
        ar_extract_result_finish(&r);
    }
    free(want);
    ar_buf_finish(&t);
}

/* Escapes at every offset of a block, and across blocks: the scanner passes
 * two-byte escapes over from a block's mask (an escaped quote or backslash
 * included), and stops where one is not valid or the text ends in one. */
static void test_scan_escapes_at_every_offset(void **state)
{
    static const struct {
        const char *esc; /* put in at each offset */
        int rc;          /* what the scan of ["<pad><esc>tail"] gives */
        size_t fail;     /* FAIL: the offending byte, from the escape's start */
    } escapes[] = {
        { "\\\"", AR_SCAN_COMPLETE, 0 },    { "\\\\", AR_SCAN_COMPLETE, 0 },
        { "\\n\\t", AR_SCAN_COMPLETE, 0 },  { "\\\\\\\"", AR_SCAN_COMPLETE, 0 },
        { "\\u00e9", AR_SCAN_COMPLETE, 0 }, { "\\x", AR_SCAN_FAIL, 1 },
        { "\\\\\\x", AR_SCAN_FAIL, 3 },     { "\x01", AR_SCAN_FAIL, 0 },
        { "\\\x01", AR_SCAN_FAIL, 1 },
    };
    char t[128];
    for (size_t c = 0; c < sizeof(escapes) / sizeof(escapes[0]); c++)
        for (size_t pad = 0; pad < 80; pad++) {
            size_t n = 0;
            t[n++] = '[';
            t[n++] = '"';
            if (pad >= 40) { /* an escape first: the blocks start at it */
                t[n++] = '\\';
                t[n++] = 'n';
            }
            memset(t + n, 'a', pad % 40);
            n += pad % 40;
            size_t at = n;
            n += (size_t)sprintf(t + n, "%s%s\"]", escapes[c].esc, "0123456789abcdefghij");
            struct ar_json_scanner sc;
            ar_json_scanner_init(&sc, AR_KIND_ARRAY, 0);
            size_t stop = 0;
            int rc = ar_json_scan(&sc, t, 0, n, &stop);
            if (rc != escapes[c].rc || (rc == AR_SCAN_COMPLETE && stop != n) ||
                (rc == AR_SCAN_FAIL && stop != at + escapes[c].fail))
                fail_msg("escape %zu at offset %zu: rc %d stop %zu", c, pad, rc, stop);
            /* Cut off right after the escape's backslash: the text ended in the string. */
            rc = ar_json_scan(&sc, t, 0, at + 1, &stop);
            if (escapes[c].esc[0] == '\\' && (rc != AR_SCAN_EOF || stop != at + 1))
                fail_msg("escape %zu at offset %zu cut after '\\': rc %d", c, pad, rc);
            ar_json_scanner_finish(&sc);
        }
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

/*
 * The tail rule as a rule, not a list (issue 45): every answer followed by a value that
 * belongs with it — after a comma, or first on its line, maybe past a fence — of any
 * kind, wanted or not, strict or repaired, is never an answer that names nothing: it is
 * an error (members without --repair), merged, or named among the values left out.
 */
static void test_extract_never_drops_a_tail_unnamed(void **state)
{
    static const char *const answers[] = { "{\"a\": 1}", "{\"k\": [1, {\"x\": \"y\"}]}", "[1, 2]",
                                           "[{\"n\": 1}]" };
    static const char *const joins[] = { ", ", ",\n", " ", "", "``` ```json ", "\t,  " };
    static const char *const tails[] = {
        "\"v\"", "\"k\" \"v\"}",  "\"k\" 2}",    "[\"abc\"]", "{\"b\": 2}",
        "[3]",   "\"k\": 1}",     "7",           "-1.5",      "true",
        "null",  "{\"b\": [1, 2", "[{\"z\": 0}]"
    };
    static const int wants[] = { AR_JSON_OBJECT, AR_JSON_ARRAY, AR_JSON_ANY };
    (void)state;
    char text[256];
    for (size_t a = 0; a < sizeof(answers) / sizeof(*answers); a++)
        for (size_t j = 0; j < sizeof(joins) / sizeof(*joins); j++)
            for (size_t t = 0; t < sizeof(tails) / sizeof(*tails); t++)
                for (size_t w = 0; w < 3; w++)
                    for (unsigned f = 0; f <= AR_EXTRACT_REPAIR; f += AR_EXTRACT_REPAIR) {
                        int n =
                            snprintf(text, sizeof(text), "%s%s%s", answers[a], joins[j], tails[t]);
                        /* A scalar is a value of its own only after a comma. */
                        if (!strchr(joins[j], ',') && strchr("-0123456789tn", tails[t][0]))
                            continue;
                        struct ar_extract_options o = { wants[w], f, NULL, NULL };
                        struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
                        int rc = ar_json_extract(text, (size_t)n, &o, &r, NULL);
                        if (rc == 0 && r.start == 0 &&
                            !(r.fixes & (AR_FIX_EXTRA_VALUES | AR_FIX_MEMBERS_AFTER_CLOSE |
                                         AR_FIX_TRUNCATION)))
                            fail_msg("%s '%s' (want %d): %s names nothing of what follows",
                                     f ? "repair" : "strict", text, wants[w], r.doc.text);
                        ar_extract_result_finish(&r);
                    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extract_table),
        cmocka_unit_test(test_extract_shapes_corpus),
        cmocka_unit_test(test_extract_never_drops_a_tail_unnamed),
        cmocka_unit_test(test_extract_prose_braces_never_beat_a_valid_document),
        cmocka_unit_test(test_extract_truncation_message_names_the_byte),
        cmocka_unit_test(test_extract_span_points_into_the_text),
        cmocka_unit_test(test_extract_accept_picks_first_satisfying),
        cmocka_unit_test(test_extract_accept_falls_back_to_first_parseable),
        cmocka_unit_test(test_extract_all_lists_top_level_values),
        cmocka_unit_test(test_extract_one_reading),
        cmocka_unit_test(test_extract_compacts_like_a_byte_loop),
        cmocka_unit_test(test_scan_escapes_at_every_offset),
        cmocka_unit_test(test_extract_adversarial_inputs_finish),
        cmocka_unit_test(test_extract_repair_closes_every_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
