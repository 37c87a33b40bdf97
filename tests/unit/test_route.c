/* Unit tests of src/route: manifest errors, the local tiers, scoring, the model's answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route/route.h"

#define MANIFEST AR_SOURCE_ROOT "/tests/fixtures/route/manifest.json"

static int load_fixture(void **state)
{
    struct ar_manifest *m = malloc(sizeof(*m));
    assert_non_null(m);
    ar_manifest_init(m);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_manifest_load(m, MANIFEST, &err), 0);
    *state = m;
    return 0;
}

static int free_fixture(void **state)
{
    ar_manifest_finish(*state);
    free(*state);
    return 0;
}

static void expect_manifest_error(const char *text, const char *msg)
{
    struct ar_manifest m;
    ar_manifest_init(&m);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_manifest_parse(&m, text, strlen(text), "m.json", &err), AR_EUSAGE);
    if (strcmp(err.msg, msg) != 0)
        print_message("got: %s\n", err.msg);
    assert_string_equal(err.msg, msg);
    assert_int_equal(m.n, 0);
    assert_null(m.items);
}

static void test_manifest_errors_point_at_the_problem(void **state)
{
    expect_manifest_error("{\"tasks\": [\n  {\"name\": \"a\",}\n]}",
                          "m.json:2:16: invalid JSON: string or '}' expected near '}'");
    expect_manifest_error("[]", "m.json: expected an object with \"tasks\" and \"skills\" arrays");
    expect_manifest_error("{\"tasks\": {}}", "m.json: /tasks: expected an array");
    expect_manifest_error("{\"tasks\": [], \"skills\": []}", "m.json: no tasks and no skills");
    expect_manifest_error("{\"tasks\": [{\"name\":\"a\",\"description\":\"\"},"
                          "{\"name\":\"b\",\"description\":\"\"},{\"description\":\"c\"}]}",
                          "m.json: /tasks/2: missing 'name'");
    expect_manifest_error("{\"skills\": [{\"name\":\"a\"}]}",
                          "m.json: /skills/0: missing 'description'");
    expect_manifest_error("{\"skills\": [{\"name\":\"\",\"description\":\"d\"}]}",
                          "m.json: /skills/0/name: expected a non-empty string");
    expect_manifest_error("{\"skills\": [3]}", "m.json: /skills/0: expected an object");
    expect_manifest_error("{\"tasks\": [{\"name\":\"a\",\"description\":\"d\",\"aliases\":"
                          "[\"x\",1]}]}",
                          "m.json: /tasks/0/aliases/1: expected a non-empty string");
    expect_manifest_error(
        "{\"tasks\": [{\"name\":\"a\",\"description\":\"d\",\"keywords\":\"k\"}]}",
        "m.json: /tasks/0/keywords: expected an array of strings");
    expect_manifest_error("{\"tasks\": [{\"name\":\"Deploy\",\"description\":\"d\"},"
                          "{\"name\":\"deploy\",\"description\":\"d\"}]}",
                          "m.json: /tasks/1/name: 'deploy' is also /tasks/0");
}

static void test_manifest_missing_file_is_a_usage_error(void **state)
{
    struct ar_manifest m;
    ar_manifest_init(&m);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_manifest_load(&m, "/nonexistent/m.json", &err), AR_EUSAGE);
    assert_int_equal(err.code, AR_EUSAGE);
    assert_non_null(strstr(err.msg, "cannot read '/nonexistent/m.json'"));
}

static void test_manifest_loads_in_order_and_finds_case_insensitively(void **state)
{
    const struct ar_manifest *m = *state;
    assert_int_equal(m->n, 8);
    assert_int_equal(m->n_tasks, 4);
    assert_string_equal(m->items[0].name, "customer-portal");
    assert_int_equal(m->items[4].type, AR_ROUTE_SKILL);
    assert_int_equal(m->items[4].index, 0);
    assert_string_equal(m->items[0].aliases.v[1], "customer app");
    const struct ar_route_item *it = ar_manifest_find(m, AR_ROUTE_SKILL, "Auth-Cognito");
    assert_non_null(it);
    assert_string_equal(it->name, "auth-cognito");
    assert_null(ar_manifest_find(m, AR_ROUTE_TASK, "auth-cognito"));
}

static void test_manifest_render_lists_both_sections(void **state)
{
    const char *text = "{\"tasks\":[{\"name\":\"a\",\"description\":\"Alpha\",\"aliases\":[\"x\"],"
                       "\"keywords\":[\"k1\",\"k2\"]}],\"skills\":[]}";
    struct ar_manifest m;
    ar_manifest_init(&m);
    assert_int_equal(ar_manifest_parse(&m, text, strlen(text), "m", NULL), 0);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_manifest_render(&m, &b), 0);
    assert_string_equal(ar_buf_cstr(&b), "Tasks:\n- a: Alpha (aliases: x; keywords: k1, k2)\n"
                                         "\nSkills:\n(none)\n");
    ar_buf_finish(&b);
    ar_manifest_finish(&m);
}

static void test_exact_tier_matches_name_or_alias_trimmed_any_case(void **state)
{
    static const struct {
        const char *query;
        const char *name;
        const char *why;
    } cases[] = {
        { "customer-portal", "customer-portal", "query equals the task name" },
        { "  Customer-PORTAL \n", "customer-portal", "query equals the task name" },
        { "customer   app", "customer-portal", "query equals the alias \"customer app\"" },
        { "COGNITO", "auth-cognito", "query equals the alias \"cognito\"" },
        { "deploy-ecs", "deploy-ecs", "query equals the skill name" },
    };
    const struct ar_manifest *m = *state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_route r;
        ar_route_init(&r);
        assert_int_equal(ar_route_local(m, cases[i].query, 0.5, &r), 1);
        assert_int_equal(r.kind, AR_ROUTE_EXACT);
        assert_int_equal(r.n, 1);
        assert_string_equal(r.matches[0].name, cases[i].name);
        assert_true(r.matches[0].confidence == 1.0);
        assert_string_equal(r.matches[0].reasoning, cases[i].why);
        ar_route_finish(&r);
    }
}

/*
 * Realistic requests against the fixture manifest, with the default
 * threshold: what routes locally, and what is left to the model. This table
 * is how AR_ROUTE_DEFAULT_MIN_SCORE was chosen (docs/route.md).
 */
static void test_keyword_tier_on_realistic_queries(void **state)
{
    static const struct {
        const char *query;
        const char *name; /* NULL: left to the model */
        double score;
    } cases[] = {
        { "set up user login", "auth-cognito", 0.6 },
        { "deploy the customer portal to staging", "customer-portal", 0.5 },
        { "fix the refunds page in the admin dashboard", "admin-dashboard", 0.56 },
        { "add stripe subscriptions", "billing-service", 0.533 },
        { "export the monthly report as pdf", "pdf-reports", 0.7 },
        { "customer portal", "customer-portal", 1.0 },
        { "login", "auth-cognito", 0.8 },
        { "rollout new docker image", "deploy-ecs", 0.5 },
        { "nightly etl job is failing", NULL, 0 },
        { "add a column to the users table", NULL, 0 },
        { "where do our clients see their invoices", NULL, 0 },
        { "reset password flow broken", NULL, 0 },
        { "the and of to", NULL, 0 },
        { "", NULL, 0 },
    };
    const struct ar_manifest *m = *state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_route r;
        ar_route_init(&r);
        int rc = ar_route_local(m, cases[i].query, AR_ROUTE_DEFAULT_MIN_SCORE, &r);
        print_message("%s -> %s %.3f\n", cases[i].query, r.n ? r.matches[0].name : "-",
                      r.n ? r.matches[0].confidence : 0.0);
        if (!cases[i].name) {
            assert_int_equal(rc, 0);
            assert_int_equal(r.kind, AR_ROUTE_NONE);
            assert_int_equal(r.n, 0);
        } else {
            assert_int_equal(rc, 1);
            assert_int_equal(r.kind, AR_ROUTE_KEYWORD);
            assert_string_equal(r.matches[0].name, cases[i].name);
            assert_float_equal(r.matches[0].confidence, cases[i].score, 0.001);
            assert_int_equal(strncmp(r.matches[0].reasoning, "keyword score ", 14), 0);
            assert_non_null(strstr(r.matches[0].reasoning, ": matched "));
        }
        ar_route_finish(&r);
    }
}

static void test_score_weights_and_explains(void **state)
{
    const struct ar_manifest *m = *state;
    const struct ar_route_item *portal = ar_manifest_find(m, AR_ROUTE_TASK, "customer-portal");
    struct ar_buf why;
    ar_buf_init(&why, AR_BUF_UNLIMITED);
    /* customer (name 1.0) + react (keyword 0.8) + manage (description 0.4) + x (0) = 2.2 / 4 */
    assert_float_equal(ar_route_score(portal, "Customer REACT manage xyzzy", &why), 0.55, 1e-9);
    assert_string_equal(ar_buf_cstr(&why),
                        "matched customer (name); react (keyword); manage (description)");
    /* Plurals fold both ways, repeated words count once, stopwords are dropped. */
    assert_float_equal(ar_route_score(portal, "the portals portal", NULL), 1.0, 1e-9);
    assert_float_equal(ar_route_score(portal, "the and", NULL), 0.0, 1e-9);
    ar_buf_finish(&why);
}

static void test_keyword_ties_prefer_tasks_then_manifest_order(void **state)
{
    const char *text =
        "{\"skills\":[{\"name\":\"s1\",\"description\":\"\",\"keywords\":[\"cache\"]}],"
        "\"tasks\":[{\"name\":\"t1\",\"description\":\"\",\"keywords\":[\"other\"]},"
        "{\"name\":\"t2\",\"description\":\"\",\"keywords\":[\"cache\"]},"
        "{\"name\":\"t3\",\"description\":\"\",\"keywords\":[\"cache\"]}]}";
    struct ar_manifest m;
    ar_manifest_init(&m);
    assert_int_equal(ar_manifest_parse(&m, text, strlen(text), "m", NULL), 0);
    struct ar_route r;
    ar_route_init(&r);
    assert_int_equal(ar_route_local(&m, "cache", 0.5, &r), 1);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.matches[0].name, "t2");
    assert_string_equal(r.matches[1].name, "t3");
    assert_string_equal(r.matches[2].name, "s1");
    assert_int_equal(r.matches[2].type, AR_ROUTE_SKILL);
    ar_route_finish(&r);
    /* A higher threshold turns the same query away. */
    ar_route_init(&r);
    assert_int_equal(ar_route_local(&m, "cache", 0.9, &r), 0);
    ar_route_finish(&r);
    ar_manifest_finish(&m);
}

static void collect(void *sink, const char *msg)
{
    assert_int_equal(ar_strv_push(sink, msg), 0);
}

static void expect_violations(const char *json, const char *const *want)
{
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    struct ar_strv got = AR_STRV_INIT;
    ar_route_validate(NULL, v, collect, &got);
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
}

static void test_validate_requires_every_field(void **state)
{
    static const char *const none[] = { NULL };
    expect_violations("{\"type\":\"task\",\"name\":\"a\",\"confidence\":0.9,\"reasoning\":\"r\"}",
                      none);
    expect_violations("[]", none);
    static const char *const missing[] = {
        "match 1 missing reasoning",  "match 2 missing type",      "match 2 missing name",
        "match 2 missing confidence", "match 2 missing reasoning", NULL
    };
    expect_violations("[{\"type\":\"task\",\"name\":\"a\",\"confidence\":1,\"reasoning\":\"r\"},"
                      "{\"type\":\"skill\",\"name\":\"b\",\"confidence\":2},{}]",
                      missing);
    static const char *const bad[] = {
        "match 0 has invalid type: \"app\", want \"task\" or \"skill\"",
        "match 0 has invalid name: \"\", want a non-empty string",
        "match 0 has invalid confidence: \"high\", want a number from 0 to 1",
        "match 0 has invalid reasoning: null, want a string", NULL
    };
    expect_violations("{\"type\":\"app\",\"name\":\"\",\"confidence\":\"high\",\"reasoning\":null}",
                      bad);
    static const char *const kinds[] = { "match 0 is not an object: \"customer-portal\"", NULL };
    expect_violations("[\"customer-portal\"]", kinds);
    static const char *const scalar[] = {
        "response is neither a match object nor an array of matches", NULL
    };
    expect_violations("42", scalar);
}

static void answer(const struct ar_manifest *m, const char *json, struct ar_route *r)
{
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    ar_route_init(r);
    assert_int_equal(ar_route_from_answer(m, v, NULL, r), 0);
    json_decref(v);
}

static void test_answer_single_object_is_one_match(void **state)
{
    struct ar_route r;
    answer(*state,
           "{\"type\":\"skill\",\"name\":\"Auth-Cognito\",\"confidence\":0.92,\"reasoning\":"
           "\"login\"}",
           &r);
    assert_int_equal(r.kind, AR_ROUTE_DISCOVERY);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.matches[0].type, AR_ROUTE_SKILL);
    /* The manifest's spelling wins. */
    assert_string_equal(r.matches[0].name, "auth-cognito");
    assert_float_equal(r.matches[0].confidence, 0.92, 1e-9);
    assert_string_equal(r.matches[0].reasoning, "login");
    assert_null(r.error);
    assert_false(r.fallback);
    ar_route_finish(&r);
}

static void test_answer_array_sorted_stably_with_clamping_noted(void **state)
{
    struct ar_route r;
    answer(
        *state,
        "[{\"type\":\"task\",\"name\":\"admin-dashboard\",\"confidence\":0.3,\"reasoning\":\"a\"},"
        "{\"type\":\"task\",\"name\":\"customer-portal\",\"confidence\":1.7,\"reasoning\":\"b\"},"
        "{\"type\":\"skill\",\"name\":\"deploy-ecs\",\"confidence\":0.3,\"reasoning\":\"c\"},"
        "{\"type\":\"task\",\"name\":\"data-pipeline\",\"confidence\":-0.2,\"reasoning\":\"d\"},"
        "{\"type\":\"skill\",\"name\":\"pdf-reports\",\"confidence\":0.8,\"reasoning\":\"e\"}]",
        &r);
    assert_int_equal(r.kind, AR_ROUTE_DISCOVERY);
    assert_int_equal(r.n, 5);
    static const char *const order[] = { "customer-portal", "pdf-reports", "admin-dashboard",
                                         "deploy-ecs", "data-pipeline" };
    static const double conf[] = { 1.0, 0.8, 0.3, 0.3, 0.0 };
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(r.matches[i].name, order[i]);
        assert_float_equal(r.matches[i].confidence, conf[i], 1e-9);
    }
    assert_int_equal(r.notes.n, 2);
    assert_string_equal(r.notes.v[0], "match 1 (\"customer-portal\") confidence 1.7 clamped to 1");
    assert_string_equal(r.notes.v[1], "match 3 (\"data-pipeline\") confidence -0.2 clamped to 0");
    ar_route_finish(&r);
}

static void test_answer_empty_array_is_no_route(void **state)
{
    struct ar_route r;
    answer(*state, "[]", &r);
    assert_int_equal(r.kind, AR_ROUTE_NONE);
    assert_int_equal(r.n, 0);
    assert_null(r.error);
    ar_route_finish(&r);
}

static void test_answer_unknown_names_are_a_route_error(void **state)
{
    struct ar_route r;
    answer(*state,
           "[{\"type\":\"task\",\"name\":\"mobile-app\",\"confidence\":0.9,\"reasoning\":\"a\"},"
           "{\"type\":\"task\",\"name\":\"auth-cognito\",\"confidence\":0.5,\"reasoning\":\"b\"},"
           "{\"type\":\"skill\",\"name\":\"deploy-ecs\",\"confidence\":0.4,\"reasoning\":\"c\"}]",
           &r);
    assert_int_equal(r.kind, AR_ROUTE_ERROR);
    assert_int_equal(r.n, 3);
    assert_string_equal(
        r.error, "the model named unknown task \"mobile-app\"; unknown task \"auth-cognito\" "
                 "(a skill has that name); known tasks: customer-portal, admin-dashboard, "
                 "billing-service, data-pipeline; known skills: auth-cognito, deploy-ecs, "
                 "db-migrations, pdf-reports");
    ar_route_finish(&r);

    answer(*state,
           "{\"type\":\"skill\",\"name\":\"auth-okta\",\"confidence\":0.9,\"reasoning\":\"a\"}",
           &r);
    assert_int_equal(r.kind, AR_ROUTE_ERROR);
    assert_non_null(strstr(r.error, "the model named unknown skill \"auth-okta\""));
    ar_route_finish(&r);
}

static void test_malformed_answer_falls_back_to_the_first_task(void **state)
{
    struct ar_route r;
    ar_route_init(&r);
    assert_int_equal(ar_route_from_answer(*state, NULL, "no JSON found", &r), 0);
    assert_int_equal(r.kind, AR_ROUTE_DISCOVERY);
    assert_true(r.fallback);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.matches[0].name, "customer-portal");
    assert_int_equal(r.matches[0].type, AR_ROUTE_TASK);
    assert_null(r.error);
    assert_int_equal(r.notes.n, 1);
    assert_non_null(strstr(r.notes.v[0], "no JSON found"));
    ar_route_finish(&r);

    /* Without tasks, the first skill. */
    const char *text = "{\"skills\":[{\"name\":\"s\",\"description\":\"\"}]}";
    struct ar_manifest m;
    ar_manifest_init(&m);
    assert_int_equal(ar_manifest_parse(&m, text, strlen(text), "m", NULL), 0);
    ar_route_init(&r);
    assert_int_equal(ar_route_from_answer(&m, NULL, NULL, &r), 0);
    assert_string_equal(r.matches[0].name, "s");
    assert_int_equal(r.matches[0].type, AR_ROUTE_SKILL);
    ar_route_finish(&r);
    ar_manifest_finish(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_errors_point_at_the_problem),
        cmocka_unit_test(test_manifest_missing_file_is_a_usage_error),
        cmocka_unit_test_setup_teardown(test_manifest_loads_in_order_and_finds_case_insensitively,
                                        load_fixture, free_fixture),
        cmocka_unit_test(test_manifest_render_lists_both_sections),
        cmocka_unit_test_setup_teardown(test_exact_tier_matches_name_or_alias_trimmed_any_case,
                                        load_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(test_keyword_tier_on_realistic_queries, load_fixture,
                                        free_fixture),
        cmocka_unit_test_setup_teardown(test_score_weights_and_explains, load_fixture,
                                        free_fixture),
        cmocka_unit_test(test_keyword_ties_prefer_tasks_then_manifest_order),
        cmocka_unit_test(test_validate_requires_every_field),
        cmocka_unit_test_setup_teardown(test_answer_single_object_is_one_match, load_fixture,
                                        free_fixture),
        cmocka_unit_test_setup_teardown(test_answer_array_sorted_stably_with_clamping_noted,
                                        load_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(test_answer_empty_array_is_no_route, load_fixture,
                                        free_fixture),
        cmocka_unit_test_setup_teardown(test_answer_unknown_names_are_a_route_error, load_fixture,
                                        free_fixture),
        cmocka_unit_test_setup_teardown(test_malformed_answer_falls_back_to_the_first_task,
                                        load_fixture, free_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
