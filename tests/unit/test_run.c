/* src/run without processes: reading an answer, the repair prompt, the RunResult JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "prompt/prompt.h"
#include "json/repair.h"
#include "run/answer.h"
#include "cost/cost.h"
#include "result/result.h"
#include "run/run.h"
#include "agentrun/batch.h"
#include "agentrun/review.h"
#include <uv.h>

static const char schema[] = "{\"type\":\"object\",\"required\":[\"n\"],"
                             "\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":1}}}";

static struct ar_contract *contract(void)
{
    struct ar_contract *c = NULL;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_contract_parse(schema, strlen(schema), &c, &err), 0);
    return c;
}

static void test_answer_first_candidate_satisfying_the_contract_wins(void **state)
{
    struct ar_contract *c = contract();
    struct ar_answer_rules rules = { c, AR_EXPECT_OBJECT, 1, NULL, NULL, NULL };
    struct ar_strv details = AR_STRV_INIT;
    struct ar_json_doc v;
    struct ar_extract_fixes fixes;
    assert_int_equal(
        ar_answer_check(&rules, "first {\"n\": 0} then {\"n\": 3,}", &v, &fixes, &details), 1);
    assert_int_equal(json_integer_value(json_object_get(v.value, "n")), 3);
    assert_true(fixes.bits & AR_FIX_TRAILING_COMMA);
    /* …and the first object, which the contract refused, is named */
    assert_true(fixes.bits & AR_FIX_EXTRA_VALUES);
    assert_int_equal(fixes.extra.count, 1);
    assert_int_equal(fixes.extra.at, 6);
    assert_int_equal(details.n, 0);
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    ar_contract_destroy(c);
}

static void test_answer_violations_are_listed_with_pointers(void **state)
{
    struct ar_contract *c = contract();
    struct ar_answer_rules rules = { c, AR_EXPECT_OBJECT, 1, NULL, NULL, NULL };
    struct ar_strv details = AR_STRV_INIT;
    struct ar_json_doc v;
    struct ar_extract_fixes fixes;
    assert_int_equal(ar_answer_check(&rules, "{\"n\": \"3\"}", &v, &fixes, &details), 0);
    assert_non_null(v.value); /* JSON was found: a contract failure, not no_json */
    assert_int_equal(details.n, 1);
    assert_non_null(strstr(details.v[0], "/n"));
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);

    assert_int_equal(ar_answer_check(&rules, "no json here", &v, &fixes, &details), 0);
    assert_null(v.value);
    assert_int_equal(details.n, 1);
    ar_strv_finish(&details);
    ar_contract_destroy(c);
}

/* {"ok": true, "issues": [n items that each violate the contract]} in b (reset first). */
static void bad_items(struct ar_buf *b, int n)
{
    ar_buf_reset(b);
    ar_buf_puts(b, "{\"ok\": true, \"issues\": [");
    for (int i = 0; i < n; i++)
        ar_buf_puts(b, i ? ",{\"line\": 0}" : "{\"line\": 0}");
    ar_buf_puts(b, "]}");
}

/* Issue 26 #4: violations inside an element of the independent array do not make the
 * answer unusable (the review salvages that finding alone); any other still does. */
static void test_answer_independent_items_tolerate_only_their_own_violations(void **state)
{
    static const char items_schema[] =
        "{\"type\":\"object\",\"required\":[\"ok\",\"issues\"],\"properties\":{"
        "\"ok\":{\"type\":\"boolean\"},\"issues\":{\"type\":\"array\",\"maxItems\":500,"
        "\"items\":{\"type\":\"object\",\"required\":[\"line\"],"
        "\"properties\":{\"line\":{\"type\":\"integer\",\"minimum\":1}}}}}}";
    struct ar_contract *c = NULL;
    assert_int_equal(ar_contract_parse(items_schema, strlen(items_schema), &c, NULL), 0);
    struct ar_answer_rules rules = { c, AR_EXPECT_OBJECT, 1, NULL, NULL, "/issues" };
    struct ar_strv details = AR_STRV_INIT;
    struct ar_json_doc v;
    struct ar_extract_fixes fixes;
    const char *good_and_bad = "{\"ok\": false, \"issues\": [{\"line\": 3}, {\"line\": 0}]}";
    assert_int_equal(ar_answer_check(&rules, good_and_bad, &v, &fixes, &details), 1);
    assert_int_equal(details.n, 0);
    assert_int_equal(json_array_size(json_object_get(v.value, "issues")), 2); /* kept as written */
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    /* The envelope is not an item. */
    assert_int_equal(
        ar_answer_check(&rules, "{\"ok\": 1, \"issues\": [{\"line\": 0}]}", &v, &fixes, &details),
        0);
    assert_int_equal(details.n, 1);
    assert_non_null(strstr(details.v[0], "/ok"));
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    /* More bad items than the violations kept: still only theirs. */
    struct ar_buf many;
    ar_buf_init(&many, AR_BUF_UNLIMITED);
    bad_items(&many, 300);
    assert_int_equal(ar_answer_check(&rules, ar_buf_cstr(&many), &v, &fixes, &details), 1);
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    /* ... but not past an array rule of the envelope (maxItems 500). */
    bad_items(&many, 600);
    assert_int_equal(ar_answer_check(&rules, ar_buf_cstr(&many), &v, &fixes, &details), 0);
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    ar_buf_finish(&many);
    /* Without independent items, the same answer fails. */
    rules.independent_items = NULL;
    assert_int_equal(ar_answer_check(&rules, good_and_bad, &v, &fixes, &details), 0);
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    ar_contract_destroy(c);
}

static int hook_calls;

static void hook(void *arg, struct json_t *value, void (*add)(void *, const char *), void *sink)
{
    hook_calls++;
    if (!json_is_integer(json_object_get(value, "n")) ||
        json_integer_value(json_object_get(value, "n")) != 42)
        add(sink, "n must be 42");
}

static void test_validate_hook_runs_on_contract_failures_too(void **state)
{
    struct ar_contract *c = contract();
    struct ar_answer_rules rules = { c, AR_EXPECT_OBJECT, 1, hook, NULL, NULL };
    struct ar_strv details = AR_STRV_INIT;
    struct ar_json_doc v;
    struct ar_extract_fixes fixes;
    hook_calls = 0;
    /* Violates the contract and the hook: the repair call must hear both. */
    assert_int_equal(ar_answer_check(&rules, "{\"n\": 0}", &v, &fixes, &details), 0);
    assert_int_equal(hook_calls, 1);
    assert_int_equal(details.n, 2);
    assert_string_equal(details.v[1], "n must be 42");
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    assert_int_equal(ar_answer_check(&rules, "{\"n\": 42}", &v, &fixes, &details), 1);
    ar_json_doc_finish(&v);
    ar_strv_finish(&details);
    ar_contract_destroy(c);
}

static void test_repair_prompt_carries_violations_contract_and_a_cut_output(void **state)
{
    struct ar_prompt *tpl = NULL;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prompt_load("repair", NULL, &tpl, &err), 0);
    struct ar_contract *c = contract();
    struct ar_strv details = AR_STRV_INIT;
    ar_strv_push(&details, "/n: expected integer, got string \"3\"");

    /* An output far longer than the quote, with a 3-byte character at the cut. */
    size_t n = AR_ANSWER_REPAIR_HEAD + AR_ANSWER_REPAIR_TAIL + 100000;
    char *prev = malloc(n + 1);
    memset(prev, 'a', n);
    memcpy(prev + AR_ANSWER_REPAIR_HEAD - 1, "\xE2\x82\xAC", 3); /* EUR sign across the cut */
    memcpy(prev, "HEAD-MARK", 9);
    memcpy(prev + n - 9, "TAIL-MARK", 9);
    prev[n] = '\0';

    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    assert_int_equal(ar_answer_repair_prompt(tpl, c, AR_EXPECT_OBJECT, &details, prev, &out, &err),
                     0);
    const char *text = ar_buf_cstr(&out);
    assert_non_null(strstr(text, "/n: expected integer"));
    assert_non_null(strstr(text, "\"minimum\": 1"));
    assert_non_null(strstr(text, "HEAD-MARK"));
    assert_non_null(strstr(text, "TAIL-MARK"));
    assert_non_null(strstr(text, "bytes omitted"));
    assert_true(out.len < n);
    /* The cut never splits the character: it is kept whole or dropped whole. */
    const char *eur = strstr(text, "\xE2\x82");
    if (eur)
        assert_int_equal((unsigned char)eur[2], 0xAC);
    assert_null(strstr(text, "a\x82"));

    free(prev);
    ar_buf_finish(&out);
    ar_strv_finish(&details);
    ar_contract_destroy(c);
    ar_prompt_destroy(tpl);
}

static void test_result_json_never_reports_an_unknown_cost_as_zero(void **state)
{
    struct ar_result *r = ar_result_new_failed("codex", AR_ECONTRACT, "bad answer");
    r->n_calls = 0;
    json_t *v = ar_result_to_value(r);
    assert_string_equal(json_string_value(json_object_get(v, "schema")), "agentrun.run/1");
    assert_true(json_is_false(json_object_get(v, "ok")));
    assert_true(json_is_null(json_object_get(v, "cost_usd")));
    assert_string_equal(json_string_value(json_object_get(v, "cost_source")), "unknown");
    json_t *e = json_object_get(v, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "contract");
    assert_string_equal(json_string_value(json_object_get(e, "message")), "bad answer");
    assert_true(json_is_array(json_object_get(e, "details")));
    assert_int_equal(ar_result_exit_status(r), 3);
    json_decref(v);
    ar_result_destroy(r);
}

static void test_result_json_keeps_invalid_utf8_as_replacement_characters(void **state)
{
    struct ar_result *r = ar_result_new_failed("claude", 0, NULL);
    r->error = (struct ar_error)AR_ERROR_INIT;
    r->ok = 1;
    r->output = strdup("ok \xff\xfe done \xE2\x82\xAC");
    r->cost_source = AR_COST_CLI;
    r->cost_usd = 0.85;
    char *text = ar_result_to_json(r, 0);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"output\":\"ok \xEF\xBF\xBD\xEF\xBF\xBD done \xE2\x82\xAC\""));
    assert_non_null(strstr(text, "\"cost_usd\":0.85,"));
    assert_non_null(strstr(text, "\"error\":null"));
    free(text);
    ar_result_destroy(r);
}

static void test_repair_and_cost_source_words_are_the_documented_ones(void **state)
{
    (void)state;
    assert_string_equal(ar_repair_kind_name(AR_REPAIR_NONE), "none");
    assert_string_equal(ar_repair_kind_name(AR_REPAIR_LOCAL), "local");
    assert_string_equal(ar_repair_kind_name(AR_REPAIR_MODEL), "model");
    assert_string_equal(ar_cost_source_name(AR_COST_UNKNOWN), "unknown");
    assert_string_equal(ar_cost_source_name(AR_COST_CLI), "cli");
    assert_string_equal(ar_cost_source_name(AR_COST_TABLE), "price_table");
    assert_string_equal(ar_cost_source_name(AR_COST_CACHE), "cache");
}

static void never_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    fail_msg("done came for a run that did not start");
}

/* A run that cannot start leaves nothing on the caller's loop: it closes at once. */
/* A provider's shared pause only grows: a later limit that says to wait longer extends
 * it, a shorter one leaves it; other providers are not paused; it ends at its time. */
static void test_a_shared_pause_only_grows_and_is_per_provider(void **state)
{
    struct ar_backoff *b = ar_backoff_create();
    assert_non_null(b);
    const uint64_t now = 1000000;
    assert_int_equal(ar_backoff_left(b, "codex", now), 0);
    ar_backoff_extend(b, "codex", now + 2000);
    assert_int_equal(ar_backoff_left(b, "codex", now), 2000);
    ar_backoff_extend(b, "codex", now + 10000); /* longer: extends */
    assert_int_equal(ar_backoff_left(b, "codex", now), 10000);
    ar_backoff_extend(b, "codex", now + 5000); /* shorter: no change */
    assert_int_equal(ar_backoff_left(b, "codex", now), 10000);
    assert_int_equal(ar_backoff_left(b, "claude", now), 0);
    ar_backoff_extend(b, "claude", now + 1);
    assert_int_equal(ar_backoff_left(b, "claude", now), 1);
    assert_int_equal(ar_backoff_left(b, "codex", now + 9999), 1);
    assert_int_equal(ar_backoff_left(b, "codex", now + 10000), 0);
    assert_int_equal(ar_backoff_left(b, "codex", now + 20000), 0);
    ar_backoff_destroy(b);
}

/* A quota refusal (issue 46) holds its provider until its time, apart from the pause:
 * a later reset replaces an earlier one, an earlier one does not; others are not held. */
static void test_a_refused_provider_is_held_until_its_reset(void **state)
{
    (void)state;
    struct ar_backoff *b = ar_backoff_create();
    assert_non_null(b);
    const uint64_t now = 1000000;
    assert_int_equal(ar_backoff_refused(b, "claude", now), 0);
    ar_backoff_refuse(b, "claude", now + 7200000, 1900000000);
    assert_int_equal(ar_backoff_refused(b, "claude", now), 1900000000);
    assert_int_equal(ar_backoff_left(b, "claude", now), 0); /* not a pause to wait out */
    assert_int_equal(ar_backoff_refused(b, "codex", now), 0);
    ar_backoff_refuse(b, "claude", now + 60000, 1800000000); /* sooner: no change */
    assert_int_equal(ar_backoff_refused(b, "claude", now + 7199999), 1900000000);
    assert_int_equal(ar_backoff_refused(b, "claude", now + 7200000), 0);
    ar_backoff_refuse(b, "claude", now + 9000000, 1900001800); /* later: replaces */
    assert_int_equal(ar_backoff_refused(b, "claude", now + 7200000), 1900001800);
    ar_backoff_destroy(b);
}

static void test_run_start_that_fails_leaves_the_loop_closable(void **state)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct ar_run_options o;
    ar_run_options_init(&o);
    o.template_name = "no-such-template";
    o.provider = "codex";
    struct ar_run *run = (struct ar_run *)&loop;
    struct ar_error err = AR_ERROR_INIT;
    assert_true(ar_run_start(&loop, &o, never_done, NULL, &run, &err) < 0);
    assert_null(run);
    assert_non_null(strstr(err.msg, "no-such-template"));
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* The init functions own every default and zero the rest, the reserved tails included:
 * a program built against older headers gets the library's defaults. */
static void test_options_init_sets_the_defaults_and_zeroes_the_rest(void **state)
{
    (void)state;
    struct ar_review_options o;
    memset(&o, 0xa5, sizeof(o));
    ar_review_options_init(&o);
    assert_int_equal(o.run.expect, AR_EXPECT_OBJECT);
    assert_int_equal(o.run.model_repair, 1);
    assert_int_equal(o.run.local_repair, 1);
    assert_int_equal(o.run.track_files, AR_TRACK_FILES_EDITS);
    assert_int_equal(o.run.timeout_ms, 900000);
    assert_int_equal(o.run.idle_timeout_ms, 300000);
    assert_int_equal(o.run.kill_grace_ms, 5000);
    assert_int_equal(o.run.output_cap, (size_t)64 << 20);
    assert_int_equal(o.run.logger.level, AR_LOG_WARN);
    assert_null(o.run.logger.fn);
    assert_null(o.run.provider);
    assert_null(o.run.on_call);
    assert_int_equal(o.max_chunk_bytes, (size_t)200 << 10);
    assert_int_equal(o.max_chunks, 20);
    assert_int_equal(o.jobs, 4);
    assert_int_equal(o.fail_on, AR_SEV_LOW);
    assert_null(o.on_event);
    for (size_t i = 0; i < sizeof(o.reserved) / sizeof(o.reserved[0]); i++)
        assert_null(o.reserved[i]);
    for (size_t i = 0; i < sizeof(o.run.reserved) / sizeof(o.run.reserved[0]); i++)
        assert_null(o.run.reserved[i]);

    struct ar_batch_options b;
    memset(&b, 0xa5, sizeof(b));
    ar_batch_options_init(&b);
    assert_int_equal(b.jobs, 4);
    assert_true(b.max_cost_usd == 0);
    assert_int_equal(b.defaults.final_grace_ms, 3000);
    assert_int_equal(b.defaults.max_wait_ms, 60000);
    for (size_t i = 0; i < sizeof(b.reserved) / sizeof(b.reserved[0]); i++)
        assert_null(b.reserved[i]);
    assert_int_equal(ar_version_number(), AR_VERSION_NUMBER);
}

/* The retry policy, in one place: which failures are made again, after how long, and
 * never past max_wait (also for a wait no integer holds); a NaN hint is no hint. */
static void test_retry_policy(void **state)
{
    (void)state;
    uint64_t ms = 0;
    assert_int_equal(ar_retry_wait(AR_ERATELIMIT, 0, 1.5, 60000, &ms), 1);
    assert_int_equal(ms, 1500);
    assert_int_equal(ar_retry_wait(AR_ERATELIMIT, 0, -1, 60000, &ms), 1);
    assert_int_equal(ms, 5000); /* the provider did not say */
    assert_int_equal(ar_retry_wait(AR_EAPI, 1, -1, 60000, &ms), 1);
    assert_int_equal(ms, 2000);
    assert_int_equal(ar_retry_wait(AR_EAPI, 1, 0.0004, 60000, &ms), 1);
    assert_int_equal(ms, 1); /* rounded up, never 0 */
    ms = 7;
    assert_int_equal(ar_retry_wait(AR_EAPI, 0, 1, 60000, &ms), 0); /* not transient */
    assert_int_equal(ar_retry_wait(AR_EAUTH, 1, 1, 60000, &ms), 0);
    assert_int_equal(ar_retry_wait(AR_ETIMEOUT, 1, 1, 60000, &ms), 0);
    assert_int_equal(ar_retry_wait(AR_ERATELIMIT, 0, 61, 60000, &ms), 0); /* past max_wait */
    assert_int_equal(ar_retry_wait(AR_ERATELIMIT, 0, 1e30, 60000, &ms), 0);
    assert_int_equal(ar_retry_wait(AR_ERATELIMIT, 0, HUGE_VAL, UINT64_MAX, &ms), 0);
    assert_int_equal(ar_retry_wait(AR_ERATELIMIT, 0, 1, 0, &ms), 0); /* max_wait 0: never */
    assert_int_equal(ms, 7);
    assert_int_equal(ar_retry_wait(AR_ERATELIMIT, 0, NAN, 60000, &ms), 1); /* no hint */
    assert_int_equal(ms, 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_shared_pause_only_grows_and_is_per_provider),
        cmocka_unit_test(test_a_refused_provider_is_held_until_its_reset),
        cmocka_unit_test(test_run_start_that_fails_leaves_the_loop_closable),
        cmocka_unit_test(test_options_init_sets_the_defaults_and_zeroes_the_rest),
        cmocka_unit_test(test_retry_policy),
        cmocka_unit_test(test_repair_and_cost_source_words_are_the_documented_ones),
        cmocka_unit_test(test_answer_first_candidate_satisfying_the_contract_wins),
        cmocka_unit_test(test_answer_violations_are_listed_with_pointers),
        cmocka_unit_test(test_validate_hook_runs_on_contract_failures_too),
        cmocka_unit_test(test_answer_independent_items_tolerate_only_their_own_violations),
        cmocka_unit_test(test_repair_prompt_carries_violations_contract_and_a_cut_output),
        cmocka_unit_test(test_result_json_never_reports_an_unknown_cost_as_zero),
        cmocka_unit_test(test_result_json_keeps_invalid_utf8_as_replacement_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
