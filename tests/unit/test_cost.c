/* Unit tests of src/cost: the table's order, model matching, formulas, sources, the override file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentrun/error.h"
#include "cost/cost.h"
#include "result/result.h"

static void test_builtin_table_is_sorted_unique_and_sane(void **state)
{
    size_t n;
    const struct ar_price *v = ar_prices_builtin(&n);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n)
            assert_true(strcmp(v[i].model, v[i + 1].model) < 0);
        assert_true(v[i].input > 0 && v[i].output >= v[i].input);
        assert_true(v[i].cache_read > 0 && v[i].cache_read < v[i].input);
        if (v[i].long_threshold)
            assert_true(v[i].long_input > v[i].input);
    }
}

static void test_lookup_exact_bracket_stamp_and_prefix_rules(void **state)
{
    static const struct {
        const char *model;
        const char *want; /* NULL: unknown */
    } cases[] = {
        { "gpt-5.5", "gpt-5.5" },
        { "gpt-5", "gpt-5" },
        { "gpt-5.5-2026-04-23", "gpt-5.5" },
        { "openai/gpt-5.5", "gpt-5.5" },
        { "gpt-5.7", NULL },   /* "gpt-5" must not price it */
        { "gpt-5-pro", NULL }, /* nor this */
        { "gpt-5-codex", "gpt-5-codex" },
        { "claude-opus-4-8[1m]", "claude-opus-4-8" },
        { "claude-opus-4-7-20260416", "claude-opus-4-7" },
        { "claude-opus-4", NULL },
        { "claude-opus-5", "claude-opus-5" },
        { "claude-opus-5-5", "claude-opus-5-5" },
        { "claude-opus-5-5[1m]", "claude-opus-5-5" },
        { "claude-fable-5-1", "claude-fable-5-1" },
        { "gemini-2.5-pro", "gemini-2.5-pro" },
        { "models/gemini-2.5-flash", "gemini-2.5-flash" },
        { "gemini-2.5-flash-lite", "gemini-2.5-flash-lite" },
        { "gemini-3.8-flash", NULL }, /* the router's pick in e2e runs: not in the table */
        { "", NULL },
        { NULL, NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct ar_price *p = ar_prices_find(NULL, cases[i].model);
        if (!cases[i].want) {
            assert_null(p);
        } else {
            assert_non_null(p);
            assert_string_equal(p->model, cases[i].want);
        }
    }
}

static void test_formulas_per_million_and_long_context(void **state)
{
    const struct ar_price *p = ar_prices_find(NULL, "gpt-5.5");
    /* codex json-text: 1200 uncached + 300 cached in, 42 out */
    struct ar_usage u = { 1200, 300, 0, 42, 0 };
    double want = (1200 * 5.0 + 300 * 0.5 + 42 * 30.0) / 1e6;
    assert_float_equal(ar_price_apply(p, &u), want, 1e-12);
    /* above 272k prompt tokens every token is at the long rate */
    struct ar_usage big = { 272001, 0, 0, 1000, 0 };
    assert_float_equal(ar_price_apply(p, &big), (272001 * 10.0 + 1000 * 45.0) / 1e6, 1e-9);
    struct ar_usage edge = { 272000, 0, 0, 0, 0 };
    assert_float_equal(ar_price_apply(p, &edge), 272000 * 5.0 / 1e6, 1e-9);
    /* claude: cache writes at the 5-minute rate; matches the CLI's own figure for opus 4.8 */
    const struct ar_price *c = ar_prices_find(NULL, "claude-opus-4-8[1m]");
    struct ar_usage cu = { 1900, 900, 100, 37, 0 };
    assert_float_equal(ar_price_apply(c, &cu), (1900 * 5 + 900 * 0.5 + 100 * 6.25 + 37 * 25) / 1e6,
                       1e-12);
    struct ar_usage fx = { 1900, 900, 0, 37,
                           0 }; /* claude stream-tool-write: total_cost_usd 0.010875 */
    assert_float_equal(ar_price_apply(c, &fx), 0.010875, 1e-9);
    /* claude 2.1.332's default: its own total_cost_usd at the mock was $0.0057 for 1,200 in,
     * 300 cache read and 42 out (shared PRICES.md) */
    struct ar_usage o55 = { 1200, 300, 0, 42, 0 };
    assert_float_equal(ar_price_apply(ar_prices_find(NULL, "claude-opus-5-5"), &o55), 0.0057, 1e-9);
    /* gemini pro: tier at 200k */
    const struct ar_price *g = ar_prices_find(NULL, "gemini-2.5-pro");
    struct ar_usage gu = { 150000, 60000, 0, 10, 0 };
    assert_float_equal(ar_price_apply(g, &gu), (150000 * 2.5 + 60000 * 0.25 + 10 * 15.0) / 1e6,
                       1e-9);
}

static void test_cost_sources_cli_table_unknown(void **state)
{
    struct ar_usage u = { 1000, 0, 0, 100, 0 };
    struct ar_cost c = ar_cost_compute(NULL, "claude-opus-4-8", &u, 1, 0.42);
    assert_int_equal(c.source, AR_COST_CLI);
    assert_float_equal(c.usd, 0.42, 1e-12);
    assert_string_equal(ar_cost_source_name(c.source), "cli");
    c = ar_cost_compute(NULL, "gpt-5.5", &u, 0, 0);
    assert_int_equal(c.source, AR_COST_TABLE);
    assert_float_equal(c.usd, (1000 * 5.0 + 100 * 30.0) / 1e6, 1e-12);
    assert_string_equal(ar_cost_source_name(c.source), "price_table");
    c = ar_cost_compute(NULL, "mystery-model", &u, 0, 0);
    assert_int_equal(c.source, AR_COST_UNKNOWN);
    assert_string_equal(ar_cost_source_name(c.source), "unknown");
    /* A CLI's negative or non-finite cost is not believed: the table decides. */
    c = ar_cost_compute(NULL, "gpt-5.5", &u, 1, -100);
    assert_int_equal(c.source, AR_COST_TABLE);
    assert_true(c.usd > 0);
    c = ar_cost_compute(NULL, "mystery-model", &u, 1, -100);
    assert_int_equal(c.source, AR_COST_UNKNOWN);
    c = ar_cost_compute(NULL, "gpt-5.5", &u, 1, NAN);
    assert_int_equal(c.source, AR_COST_TABLE);
    assert_false(ar_cost_cli_valid(-0.01));
    assert_true(ar_cost_cli_valid(0));
    c = ar_cost_compute(NULL, NULL, &u, 0, 0);
    assert_int_equal(c.source, AR_COST_UNKNOWN);
    c = ar_cost_compute(NULL, "gpt-5.5", NULL, 0, 0);
    assert_int_equal(c.source, AR_COST_UNKNOWN);

    struct ar_cost a = { 1.0, AR_COST_CLI }, b = { 0.5, AR_COST_CLI }, t = { 0.25, AR_COST_TABLE },
                   x = { 0, AR_COST_UNKNOWN };
    ar_cost_add(&a, &b);
    assert_int_equal(a.source, AR_COST_CLI);
    assert_float_equal(a.usd, 1.5, 1e-12);
    ar_cost_add(&a, &t);
    assert_int_equal(a.source, AR_COST_TABLE);
    assert_float_equal(a.usd, 1.75, 1e-12);
    ar_cost_add(&a, &x);
    assert_int_equal(a.source, AR_COST_UNKNOWN);
}

static char *write_temp(const char *text)
{
    char *path = strdup("/tmp/ar-test-prices-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_override_file_replaces_and_adds(void **state)
{
    char *path =
        write_temp("{\"models\": {\"gpt-5.5\": {\"input\": 1, \"output\": 2, \"cache_read\": 0.1},"
                   " \"my-local-model\": {\"input\": 0.5, \"output\": 1,"
                   "  \"long_context\": {\"threshold\": 1000, \"input\": 5, \"output\": 10}}}}");
    struct ar_prices *t = NULL;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_prices_load(path, &t, &err), 0);
    const struct ar_price *p = ar_prices_find(t, "gpt-5.5-2026-04-23");
    assert_non_null(p);
    assert_float_equal(p->input, 1, 0);
    assert_float_equal(p->cache_write, 0, 0);
    p = ar_prices_find(t, "my-local-model");
    assert_non_null(p);
    struct ar_usage u = { 2000, 0, 0, 10, 0 };
    assert_float_equal(ar_price_apply(p, &u), (2000 * 5.0 + 10 * 10.0) / 1e6, 1e-12);
    assert_non_null(ar_prices_find(t, "claude-opus-4-8")); /* built-ins stay */
    assert_null(ar_prices_find(NULL, "my-local-model"));
    ar_prices_destroy(t);
    unlink(path);
    free(path);

    /* through $AGENTRUN_PRICES */
    path = write_temp("{\"models\": {\"zz-model\": {\"input\": 3, \"output\": 4}}}");
    setenv("AGENTRUN_PRICES", path, 1);
    assert_int_equal(ar_prices_open(NULL, &t, &err), 0);
    assert_non_null(ar_prices_find(t, "zz-model"));
    ar_prices_destroy(t);
    unsetenv("AGENTRUN_PRICES");
    assert_int_equal(ar_prices_open(NULL, &t, &err), 0);
    assert_null(t);
    unlink(path);
    free(path);

    static const char *const bad[] = {
        "not json",
        "{\"models\": []}",
        "{\"models\": {\"m\": {\"input\": \"1\"}}}",
        "{\"models\": {\"m\": {\"input\": -1}}}",
        "{\"models\": {\"m\": {\"long_context\": {\"input\": 1}}}}",
        NULL,
    };
    for (size_t i = 0; bad[i]; i++) {
        path = write_temp(bad[i]);
        ar_error_clear(&err);
        assert_int_equal(ar_prices_load(path, &t, &err), AR_EUSAGE);
        assert_null(t);
        assert_non_null(strstr(err.msg, path));
        unlink(path);
        free(path);
    }
    assert_int_equal(ar_prices_load("/nonexistent/prices.json", &t, &err), AR_EIO);
    ar_prices_destroy(NULL);
}

/* The share of the input a prompt cache served: what a review reports as cache_read_share. */
static void test_cache_read_share_of_the_input(void **state)
{
    (void)state;
    struct ar_usage none = AR_USAGE_INIT;
    assert_true(ar_usage_cache_read_share(&none) < 0);
    struct ar_usage out_only = { 0, 0, 0, 50, 0 };
    assert_true(ar_usage_cache_read_share(&out_only) < 0);
    struct ar_usage u = { 800, 200, 0, 50, 0 };
    assert_true(fabs(ar_usage_cache_read_share(&u) - 0.2) < 1e-12);
    /* Cache writes are input too, not read from the cache. */
    struct ar_usage w = { 100, 600, 300, 0, 0 };
    assert_true(fabs(ar_usage_cache_read_share(&w) - 0.6) < 1e-12);
    struct ar_usage all = { 0, 7, 0, 0, 0 };
    assert_true(ar_usage_cache_read_share(&all) == 1.0);
    /* Counts a CLI saturated at UINT64_MAX do not wrap into nonsense. */
    struct ar_usage big = { UINT64_MAX, UINT64_MAX, UINT64_MAX, 0, 0 };
    double share = ar_usage_cache_read_share(&big);
    assert_true(share > 0.33 && share < 0.34);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_table_is_sorted_unique_and_sane),
        cmocka_unit_test(test_lookup_exact_bracket_stamp_and_prefix_rules),
        cmocka_unit_test(test_formulas_per_million_and_long_context),
        cmocka_unit_test(test_cost_sources_cli_table_unknown),
        cmocka_unit_test(test_override_file_replaces_and_adds),
        cmocka_unit_test(test_cache_read_share_of_the_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
