/* Unit tests of src/prioritize: reading PRDs, the cap, UTF-8 repair, every validation message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prioritize/prioritize.h"

/* A scratch directory per test, removed with everything in it. */
static int make_tmp(void **state)
{
    char tmpl[] = "/tmp/ar-test-prio-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    *state = strdup(d);
    return 0;
}

static int remove_tmp(void **state)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
    assert_int_equal(system(cmd), 0);
    free(*state);
    return 0;
}

static void put(const char *dir, const char *rel, const char *data, size_t len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    /* Create parent directories of rel. */
    for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

#define PUT(dir, rel, s) put((dir), (rel), (s), strlen(s))

static void test_read_takes_prd_extensions_sorted_by_id(void **state)
{
    const char *d = *state;
    PUT(d, "search.md", "# Search\n");
    PUT(d, "billing.txt", "Billing\n");
    PUT(d, "auth.MARKDOWN", "Auth\n");
    PUT(d, "notes.json", "{}");
    PUT(d, ".hidden.md", "secret");
    PUT(d, "sub/deep.md", "deep");
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    struct ar_prd_read_opts o = { 0, 0 };
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), 0);
    assert_int_equal(set.n, 3);
    assert_string_equal(set.v[0].id, "auth");
    assert_string_equal(set.v[1].id, "billing");
    assert_string_equal(set.v[2].id, "search");
    assert_string_equal(set.v[2].text, "# Search\n");
    assert_false(set.v[2].truncated);
    assert_non_null(ar_prd_set_find(&set, "billing"));
    assert_null(ar_prd_set_find(&set, "deep"));
    assert_int_equal(set.warnings.n, 0);
    ar_prd_set_finish(&set);
}

static void test_read_recursive_ids_are_relative_paths(void **state)
{
    const char *d = *state;
    PUT(d, "top.md", "t");
    PUT(d, "team/a/x.md", "x");
    PUT(d, "team/b.txt", "b");
    PUT(d, ".git/HEAD.md", "no");
    PUT(d, "team/.drafts/y.md", "no");
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    struct ar_prd_read_opts o = { 1, 0 };
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), 0);
    assert_int_equal(set.n, 3);
    assert_string_equal(set.v[0].id, "team/a/x");
    assert_string_equal(set.v[1].id, "team/b");
    assert_string_equal(set.v[2].id, "top");
    ar_prd_set_finish(&set);
}

static void test_read_missing_empty_and_no_prd_are_usage_errors(void **state)
{
    const char *d = *state;
    char path[600];
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    struct ar_prd_read_opts o = { 0, 0 };
    struct ar_error err = AR_ERROR_INIT;

    snprintf(path, sizeof(path), "%s/nope", d);
    assert_int_equal(ar_prd_set_read(&set, path, &o, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "cannot read directory"));
    assert_non_null(strstr(err.msg, "No such file"));

    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "is empty"));

    PUT(d, "sub/a.md", "a");
    PUT(d, "readme.rst", "r");
    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "no PRD in"));
    assert_non_null(strstr(err.msg, "use -r"));

    snprintf(path, sizeof(path), "%s/readme.rst", d);
    assert_int_equal(ar_prd_set_read(&set, path, &o, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "is not a directory"));
    assert_int_equal(set.n, 0);
    ar_prd_set_finish(&set);
}

static void test_read_same_id_twice_is_an_error(void **state)
{
    const char *d = *state;
    PUT(d, "a.md", "1");
    PUT(d, "a.txt", "2");
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    struct ar_prd_read_opts o = { 0, 0 };
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "two PRDs have the id 'a'"));
    ar_prd_set_finish(&set);
}

static void test_read_caps_text_with_marker(void **state)
{
    const char *d = *state;
    char big[5000];
    memset(big, 'x', sizeof(big));
    put(d, "big.md", big, sizeof(big));
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    struct ar_prd_read_opts o = { 0, 1000 };
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), 0);
    assert_true(set.v[0].truncated);
    assert_int_equal(set.v[0].size, 5000);
    assert_int_equal(set.v[0].shown, 1000);
    const char *marker = "\n[\xe2\x80\xa6 truncated: 1000 of 5000 bytes shown]";
    assert_int_equal(strlen(set.v[0].text), 1000 + strlen(marker));
    assert_string_equal(set.v[0].text + 1000, marker);
    ar_prd_set_finish(&set);
}

static void test_cap_never_splits_a_character(void **state)
{
    /* "é" is two bytes: a cap of 4 falls inside the third one. */
    struct ar_prd p;
    const char *s = "\xc3\xa9\xc3\xa9\xc3\xa9";
    assert_int_equal(ar_prd_init(&p, "x", "x.md", s, 6, 6, 5), 0);
    assert_true(p.truncated);
    assert_int_equal(p.shown, 4);
    assert_string_equal(p.text, "\xc3\xa9\xc3\xa9\n[\xe2\x80\xa6 truncated: 4 of 6 bytes shown]");
    assert_int_equal(p.invalid, 0);
    ar_prd_finish(&p);
    /* A four-byte emoji straddling the cap is left out whole. */
    const char *e = "ab\xf0\x9f\x98\x80";
    assert_int_equal(ar_prd_init(&p, "x", "x.md", e, 6, 6, 4), 0);
    assert_int_equal(p.shown, 2);
    assert_int_equal(strncmp(p.text, "ab\n[", 4), 0);
    ar_prd_finish(&p);
}

static void test_invalid_utf8_is_replaced_and_warned(void **state)
{
    const char *d = *state;
    put(d, "latin1.md", "caf\xe9 \xff ok\0z", 11);
    PUT(d, "good.md", "caf\xc3\xa9");
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    struct ar_prd_read_opts o = { 0, 0 };
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), 0);
    const struct ar_prd *p = ar_prd_set_find(&set, "latin1");
    assert_non_null(p);
    assert_string_equal(p->text, "caf\xef\xbf\xbd \xef\xbf\xbd ok\xef\xbf\xbdz");
    assert_int_equal(p->invalid, 3);
    assert_int_equal(set.warnings.n, 1);
    assert_non_null(strstr(set.warnings.v[0], "latin1.md' is not valid UTF-8: 3 bytes replaced"));
    assert_int_equal(ar_prd_set_find(&set, "good")->invalid, 0);
    ar_prd_set_finish(&set);
}

static void test_overlong_and_surrogates_are_invalid(void **state)
{
    struct ar_prd p;
    /* overlong '/', a UTF-16 surrogate, past U+10FFFF, a lone continuation byte */
    const char *s = "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\x80";
    assert_int_equal(ar_prd_init(&p, "x", "x.md", s, strlen(s), strlen(s), 0), 0);
    assert_int_equal(p.invalid, 2 + 3 + 4 + 1);
    assert_false(p.truncated);
    ar_prd_finish(&p);
}

static void test_render_delimits_each_prd(void **state)
{
    const char *d = *state;
    PUT(d, "a.md", "Alpha\n");
    PUT(d, "b.md", "Beta");
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    struct ar_prd_read_opts o = { 0, 0 };
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prd_set_read(&set, d, &o, &err), 0);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_prd_set_render(&set, &b), 0);
    assert_string_equal(ar_buf_cstr(&b),
                        "<prd id=\"a\">\nAlpha\n</prd>\n\n<prd id=\"b\">\nBeta\n</prd>\n");
    ar_buf_finish(&b);
    ar_prd_set_finish(&set);
}

/* A set of three PRDs without touching the disk. */
static void three_prds(struct ar_prd_set *set)
{
    static const char *const ids[] = { "auth", "billing", "search" };
    ar_prd_set_init(set);
    set->v = calloc(3, sizeof(*set->v));
    assert_non_null(set->v);
    set->cap = 3;
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(ar_prd_init(&set->v[set->n++], ids[i], ids[i], "t", 1, 1, 0), 0);
}

/* Runs the checks on `json` and compares the messages with the NULL-terminated `want`. */
static void expect_messages(const char *json, const char *const *want)
{
    struct ar_prd_set set;
    three_prds(&set);
    json_error_t jerr;
    json_t *v = json_loads(json, JSON_DECODE_ANY, &jerr);
    assert_non_null(v);
    struct ar_strv got = AR_STRV_INIT;
    assert_int_equal(ar_prioritize_check(&set, v, &got), 0);
    size_t n = 0;
    while (want[n])
        n++;
    for (size_t i = 0; i < got.n; i++)
        print_message("got: %s\n", got.v[i]);
    assert_int_equal(got.n, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(got.v[i], want[i]);
    ar_strv_finish(&got);
    json_decref(v);
    ar_prd_set_finish(&set);
}

static void test_validate_accepts_a_good_ranking(void **state)
{
    static const char *const none[] = { NULL };
    expect_messages("{\"recommendations\":[{\"prd_id\":\"auth\",\"priority\":1,\"rationale\":\"r\","
                    "\"depends_on\":[\"billing\"]},{\"prd_id\":\"billing\",\"priority\":2.0,"
                    "\"rationale\":\"r\"}]}",
                    none);
}

static void test_validate_no_recommendations(void **state)
{
    static const char *const want[] = { "no recommendations in response", NULL };
    expect_messages("{\"recommendations\":[]}", want);
    static const char *const want2[] = { "response has no \"recommendations\" array", NULL };
    expect_messages("[{\"prd_id\":\"auth\"}]", want2);
}

static void test_validate_missing_prd_id(void **state)
{
    static const char *const want[] = { "recommendation 2 missing prd_id",
                                        "recommendation 3 missing prd_id", NULL };
    expect_messages("{\"recommendations\":[{\"prd_id\":\"auth\",\"priority\":1},"
                    "{\"prd_id\":\"billing\",\"priority\":2},{\"priority\":3},"
                    "{\"prd_id\":\"\",\"priority\":4}]}",
                    want);
}

static void test_validate_unknown_prd_id_lists_known_ids(void **state)
{
    static const char *const want[] = {
        "recommendation 1 names unknown prd_id \"auth2\"; known ids: auth, billing, search", NULL
    };
    expect_messages("{\"recommendations\":[{\"prd_id\":\"auth\",\"priority\":1},"
                    "{\"prd_id\":\"auth2\",\"priority\":2}]}",
                    want);
}

static void test_validate_invalid_priority(void **state)
{
    static const char *const want[] = {
        "recommendation 0 (\"billing\") has invalid priority: 0, want an integer >= 1",
        "recommendation 1 (\"auth\") has invalid priority: -2, want an integer >= 1",
        "recommendation 2 (\"search\") has invalid priority: \"high\", want an integer >= 1",
        "recommendation 3 missing prd_id",
        "recommendation 3 has invalid priority: 1.5, want an integer >= 1",
        "recommendation 4 missing prd_id",
        "recommendation 4 missing priority, want an integer >= 1",
        NULL
    };
    expect_messages("{\"recommendations\":[{\"prd_id\":\"billing\",\"priority\":0},"
                    "{\"prd_id\":\"auth\",\"priority\":-2},"
                    "{\"prd_id\":\"search\",\"priority\":\"high\"},"
                    "{\"prd_id\":null,\"priority\":1.5},{}]}",
                    want);
}

static void test_validate_duplicate_prd_id(void **state)
{
    static const char *const want[] = {
        "recommendation 2 repeats prd_id \"auth\" of recommendation 0", NULL
    };
    expect_messages(
        "{\"recommendations\":[{\"prd_id\":\"auth\",\"priority\":1},"
        "{\"prd_id\":\"billing\",\"priority\":2},{\"prd_id\":\"auth\",\"priority\":3}]}",
        want);
}

/* A duplicate right after its twin is a duplicate too (the check must not skip the neighbour). */
static void test_validate_duplicate_prd_id_next_to_its_twin(void **state)
{
    static const char *const want[] = {
        "recommendation 1 repeats prd_id \"auth\" of recommendation 0", NULL
    };
    expect_messages(
        "{\"recommendations\":[{\"prd_id\":\"auth\",\"priority\":1},"
        "{\"prd_id\":\"auth\",\"priority\":2},{\"prd_id\":\"billing\",\"priority\":3}]}",
        want);
}

static void test_validate_depends_on(void **state)
{
    static const char *const want[] = {
        "recommendation 0 (\"auth\") depends_on unknown prd_id \"x\"; known ids: auth, billing, "
        "search",
        "recommendation 0 (\"auth\") depends on itself",
        "recommendation 1 (\"billing\") has invalid depends_on: \"auth\", want an array of "
        "prd_ids",
        "recommendation 2 (\"search\") has invalid depends_on entry 1: 7, want a prd_id", NULL
    };
    expect_messages(
        "{\"recommendations\":[{\"prd_id\":\"auth\",\"priority\":1,\"depends_on\":"
        "[\"x\",\"auth\"]},{\"prd_id\":\"billing\",\"priority\":2,\"depends_on\":"
        "\"auth\"},{\"prd_id\":\"search\",\"priority\":3,\"depends_on\":[\"auth\",7]}]}",
        want);
}

static void collect(void *sink, const char *msg)
{
    assert_int_equal(ar_strv_push(sink, msg), 0);
}

static void test_validate_hook_reports_through_add(void **state)
{
    struct ar_prd_set set;
    three_prds(&set);
    json_t *v = json_pack("{s:[]}", "recommendations");
    struct ar_strv got = AR_STRV_INIT;
    ar_prioritize_validate(&set, v, collect, &got);
    assert_int_equal(got.n, 1);
    assert_string_equal(got.v[0], "no recommendations in response");
    ar_strv_finish(&got);
    json_decref(v);
    ar_prd_set_finish(&set);
}

static void test_priority_past_integer_range_is_valid_and_sorts_last(void **state)
{
    /* UBSan in tests/fuzz/fuzz_route: "priority": 1e300 was converted to an
     * integer, which is undefined. It is an integer >= 1 and ranks last. */
    static const char json[] = "{\"recommendations\":[{\"prd_id\":\"auth\",\"priority\":1e300},"
                               "{\"prd_id\":\"search\",\"priority\":2.0},"
                               "{\"prd_id\":\"billing\",\"priority\":1e19}]}";
    static const char *const none[] = { NULL };
    expect_messages(json, none);

    struct ar_prd_set set;
    three_prds(&set);
    json_t *v = json_loads(json, 0, NULL);
    assert_non_null(v);
    struct ar_ranking rk;
    assert_int_equal(ar_ranking_build(&rk, &set, v, 0, NULL), 0);
    json_t *recs = json_object_get(rk.value, "recommendations");
    static const char *const order[] = { "search", "auth", "billing" };
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(recs, i), "prd_id")),
                            order[i]);
    ar_ranking_finish(&rk);
    json_decref(v);
    ar_prd_set_finish(&set);
}

static void test_ranking_sorts_stably_cuts_top_and_lists_unranked(void **state)
{
    struct ar_prd_set set;
    three_prds(&set);
    json_t *v = json_loads("{\"recommendations\":[{\"prd_id\":\"search\",\"priority\":2},"
                           "{\"prd_id\":\"auth\",\"priority\":1},"
                           "{\"prd_id\":\"x\",\"priority\":2}],\"summary\":\"s\"}",
                           0, NULL);
    assert_non_null(v);
    struct ar_ranking rk;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_ranking_build(&rk, &set, v, 0, &err), 0);
    assert_int_equal(rk.total, 3);
    json_t *recs = json_object_get(rk.value, "recommendations");
    assert_int_equal(json_array_size(recs), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(recs, 0), "prd_id")),
                        "auth");
    assert_string_equal(json_string_value(json_object_get(json_array_get(recs, 1), "prd_id")),
                        "search");
    assert_string_equal(json_string_value(json_object_get(json_array_get(recs, 2), "prd_id")), "x");
    assert_string_equal(json_string_value(json_object_get(rk.value, "summary")), "s");
    assert_int_equal(rk.unranked.n, 1);
    assert_string_equal(rk.unranked.v[0], "billing");
    ar_ranking_finish(&rk);

    assert_int_equal(ar_ranking_build(&rk, &set, v, 1, &err), 0);
    assert_int_equal(json_array_size(json_object_get(rk.value, "recommendations")), 1);
    assert_int_equal(rk.total, 3);
    /* The cut does not make PRDs unranked: the model did rank them. */
    assert_int_equal(rk.unranked.n, 1);
    ar_ranking_finish(&rk);
    /* The original value is untouched. */
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(v, "recommendations"), 0), "prd_id")),
                        "search");
    json_decref(v);
    ar_prd_set_finish(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_takes_prd_extensions_sorted_by_id, make_tmp,
                                        remove_tmp),
        cmocka_unit_test_setup_teardown(test_read_recursive_ids_are_relative_paths, make_tmp,
                                        remove_tmp),
        cmocka_unit_test_setup_teardown(test_read_missing_empty_and_no_prd_are_usage_errors,
                                        make_tmp, remove_tmp),
        cmocka_unit_test_setup_teardown(test_read_same_id_twice_is_an_error, make_tmp, remove_tmp),
        cmocka_unit_test_setup_teardown(test_read_caps_text_with_marker, make_tmp, remove_tmp),
        cmocka_unit_test(test_cap_never_splits_a_character),
        cmocka_unit_test_setup_teardown(test_invalid_utf8_is_replaced_and_warned, make_tmp,
                                        remove_tmp),
        cmocka_unit_test(test_overlong_and_surrogates_are_invalid),
        cmocka_unit_test_setup_teardown(test_render_delimits_each_prd, make_tmp, remove_tmp),
        cmocka_unit_test(test_validate_accepts_a_good_ranking),
        cmocka_unit_test(test_validate_no_recommendations),
        cmocka_unit_test(test_validate_missing_prd_id),
        cmocka_unit_test(test_validate_unknown_prd_id_lists_known_ids),
        cmocka_unit_test(test_validate_invalid_priority),
        cmocka_unit_test(test_validate_duplicate_prd_id),
        cmocka_unit_test(test_validate_duplicate_prd_id_next_to_its_twin),
        cmocka_unit_test(test_validate_depends_on),
        cmocka_unit_test(test_validate_hook_reports_through_add),
        cmocka_unit_test(test_ranking_sorts_stably_cuts_top_and_lists_unranked),
        cmocka_unit_test(test_priority_past_integer_range_is_valid_and_sorts_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
