/*
 * The run-request table (src/run/request.c): one reading of every key for every door,
 * the rules between options, the durations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/request.h"
#include "agentrun/share.h"
#include "run/request.h"

static void test_keys_are_sorted_and_unique(void **state)
{
    (void)state;
    for (size_t i = 1; ar_run_request_key_name(i); i++)
        if (strcmp(ar_run_request_key_name(i - 1), ar_run_request_key_name(i)) >= 0)
            fail_msg("'%s' before '%s'", ar_run_request_key_name(i - 1),
                     ar_run_request_key_name(i));
}

/* Parses text at door; returns the error code, err filled. */
static int parse(const char *text, unsigned door, struct ar_run_request **rq, struct ar_error *err)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    assert_non_null(v);
    *err = (struct ar_error)AR_ERROR_INIT;
    int rc = ar_run_request_parse(v, door, NULL, rq, err);
    json_decref(v);
    return rc;
}

static void test_a_key_means_the_same_at_every_door(void **state)
{
    (void)state;
    const char *req = "{\"prompt\":\"hi\",\"expect\":\"array\",\"timeout\":0.0004,"
                      "\"fallback\":[\"codex\",\"gemini\"],\"no_repair\":true,\"max_cost\":0.5,"
                      "\"vars\":{}}";
    unsigned doors[] = { AR_REQUEST_BATCH, AR_REQUEST_RUN };
    for (size_t i = 0; i < 2; i++) {
        struct ar_run_request *rq = NULL;
        struct ar_error err;
        assert_int_equal(parse(req, doors[i], &rq, &err), 0);
        const struct ar_run_options *o = ar_run_request_options(rq);
        assert_string_equal(o->prompt, "hi");
        assert_int_equal(o->expect, AR_EXPECT_ARRAY);
        assert_true(o->want_json); /* expect asks for extraction, at every door */
        assert_int_equal(o->timeout_ms, 1);
        assert_string_equal(o->fallback, "codex,gemini");
        assert_int_equal(o->model_repair, 0);
        assert_true(o->max_cost_usd > 0.49 && o->max_cost_usd < 0.51);
        ar_run_request_destroy(rq);
    }
}

static void test_doors_take_their_keys_only_and_say_the_near_one(void **state)
{
    (void)state;
    struct ar_run_request *rq = NULL;
    struct ar_error err;
    assert_int_equal(parse("{\"prompt\":\"x\",\"trust_project\":true}", AR_REQUEST_RUN, &rq, &err),
                     AR_EUSAGE);
    assert_string_equal(err.where, "trust_project");
    assert_int_equal(parse("{\"prompt\":\"x\",\"provder\":\"codex\"}", AR_REQUEST_BATCH, &rq, &err),
                     AR_EUSAGE);
    assert_non_null(strstr(err.msg, "did you mean 'provider'"));
    /* A tool's own keys are the tool's. */
    assert_int_equal(parse("{\"diff\":\"x\",\"model\":\"m\"}",
                           AR_REQUEST_TOOL | AR_REQUEST_OTHER_KEYS, &rq, &err),
                     0);
    assert_string_equal(ar_run_request_options(rq)->model, "m");
    ar_run_request_destroy(rq);
    assert_int_equal(parse("{\"prompt\":\"x\"}", AR_REQUEST_TOOL, &rq, &err), AR_EUSAGE);
}

static void test_bad_values_name_their_key(void **state)
{
    (void)state;
    const char *bad[][2] = {
        { "{\"timeout\":-1}", "timeout" },
        { "{\"timeout\":\"5\"}", "timeout" },
        { "{\"max_cost\":0}", "max_cost" },
        { "{\"provider\":\"claud\"}", "provider" },
        { "{\"fallback\":\"x\"}", "fallback" },
        { "{\"expect\":\"set\"}", "expect" },
        { "{\"vars\":{\"a\":[]}}", "vars" },
        { "{\"prompt\":\"\"}", "prompt" },
        { "{\"no_files\":true,\"track_files\":true}", "track_files" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ar_run_request *rq = NULL;
        struct ar_error err;
        if (parse(bad[i][0], AR_REQUEST_BATCH, &rq, &err) != AR_EUSAGE)
            fail_msg("%s was taken", bad[i][0]);
        assert_string_equal(err.where, bad[i][1]);
        assert_null(rq);
    }
}

static void test_rules_between_options(void **state)
{
    (void)state;
    static const struct {
        const char *req;
        const char *where; /* NULL: fine */
    } cases[] = {
        { "{\"prompt\":\"x\"}", NULL },
        { "{}", "prompt" },
        { "{\"prompt\":\"x\",\"template\":\"review\"}", "prompt" },
        { "{\"prompt\":\"x\",\"vars\":{\"a\":\"b\"}}", "vars" },
        { "{\"template\":\"review\",\"schema\":{}}", "schema" },
        { "{\"prompt\":\"x\",\"allow_edits\":true,\"no_tools\":true}", "allow_edits" },
        { "{\"prompt\":\"x\",\"base\":\"HEAD\"}", "base" },
        { "{\"prompt\":\"x\",\"commit\":true,\"allow_edits\":true}", "commit" },
        { "{\"prompt\":\"x\",\"commit\":true,\"worktree\":true}", NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_run_request *rq = NULL;
        struct ar_error err;
        assert_int_equal(parse(cases[i].req, AR_REQUEST_BATCH, &rq, &err), 0);
        err = (struct ar_error)AR_ERROR_INIT;
        int rc = ar_run_options_check(ar_run_request_options(rq), &err);
        if (cases[i].where) {
            if (rc != AR_EUSAGE)
                fail_msg("%s passed", cases[i].req);
            assert_string_equal(err.where, cases[i].where);
        } else if (rc) {
            fail_msg("%s: %s", cases[i].req, err.msg);
        }
        ar_run_request_destroy(rq);
    }
    /* The share decides what may be written. */
    struct ar_share_options so;
    struct ar_share *s = NULL;
    ar_share_options_init(&so);
    so.no_edits = 1;
    assert_int_equal(ar_share_create(&so, &s, NULL), 0);
    struct ar_run_options o;
    ar_run_options_init(&o);
    o.prompt = "x";
    o.share = s;
    assert_int_equal(ar_run_options_check(&o, NULL), 0);
    o.allow_edits = 1;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_run_options_check(&o, &err), AR_EUSAGE);
    assert_string_equal(err.where, "allow_edits");
    ar_share_destroy(s);
    so.no_edits = 0;
    so.edits_in_worktree = 1;
    assert_int_equal(ar_share_create(&so, &s, NULL), 0);
    o.share = s;
    o.worktree_commit = 1; /* an edit run under a worktree rule has one */
    assert_int_equal(ar_run_options_check(&o, NULL), 0);
    ar_share_destroy(s);
}

static void test_seconds_are_read_once_and_never_round_to_none(void **state)
{
    (void)state;
    static const struct {
        double s;
        uint64_t ms;
    } ok[] = { { 0, 0 },      { 0.0004, 1 },    { 0.007, 7 },
               { 1.5, 1500 }, { 1.0011, 1002 }, { 900, 900000 } };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t ms = 99;
        assert_int_equal(ar_seconds_to_ms(ok[i].s, &ms, NULL), 0);
        assert_int_equal(ms, ok[i].ms);
    }
    uint64_t ms;
    assert_int_equal(ar_seconds_to_ms(-0.5, &ms, NULL), AR_EUSAGE);
    assert_int_equal(ar_seconds_to_ms(1e10, &ms, NULL), AR_EUSAGE);
}

static void test_schema_is_json_and_lists_the_doors_keys(void **state)
{
    (void)state;
    char *run = ar_run_request_schema(AR_REQUEST_RUN);
    char *tool = ar_run_request_schema(AR_REQUEST_TOOL);
    json_t *r = json_loads(run, 0, NULL), *t = json_loads(tool, 0, NULL);
    assert_non_null(r);
    assert_non_null(t);
    assert_non_null(json_object_get(r, "prompt"));
    assert_null(json_object_get(r, "trust_project"));
    assert_null(json_object_get(r, "id"));
    assert_non_null(json_object_get(t, "max_cost"));
    assert_null(json_object_get(t, "prompt"));
    /* Every key the door takes is in its schema. */
    for (size_t i = 0; ar_run_request_key_name(i); i++) {
        struct ar_run_request *rq = NULL;
        json_t *one = json_object();
        json_object_set_new(one, ar_run_request_key_name(i), json_true());
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_run_request_parse(one, AR_REQUEST_RUN, NULL, &rq, &err);
        int known = !(rc == AR_EUSAGE && strstr(err.msg, "unknown key"));
        assert_int_equal(known, json_object_get(r, ar_run_request_key_name(i)) != NULL);
        ar_run_request_destroy(rq);
        json_decref(one);
    }
    json_decref(r);
    json_decref(t);
    free(run);
    free(tool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_are_sorted_and_unique),
        cmocka_unit_test(test_a_key_means_the_same_at_every_door),
        cmocka_unit_test(test_doors_take_their_keys_only_and_say_the_near_one),
        cmocka_unit_test(test_bad_values_name_their_key),
        cmocka_unit_test(test_rules_between_options),
        cmocka_unit_test(test_seconds_are_read_once_and_never_round_to_none),
        cmocka_unit_test(test_schema_is_json_and_lists_the_doors_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
