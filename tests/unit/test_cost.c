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
        /* A cache read is cheaper than input, or its price is not known (never a 0). */
        assert_true(isnan(v[i].cache_read) ||
                    (v[i].cache_read > 0 && v[i].cache_read < v[i].input));
        assert_true(isnan(v[i].cache_write) || v[i].cache_write >= 0);
        if (v[i].long_threshold)
            assert_true(v[i].long_input > v[i].input && v[i].long_output >= v[i].output);
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
        { "gemini-3.8-flash", "gemini-3.8-flash" }, /* the router's pick in e2e runs */
        { "claude-haiku-5-5[1m]", "claude-haiku-5-5" },
        { "claude-mythos-5-2", "claude-mythos-5-2" },
        { "gpt-6-sol", "gpt-6-sol" },
        { "gpt-6", NULL },
        { "gpt-6.2-sol", NULL }, /* codex 0.171's default: no price found, never a guess */
        { "gpt-6-sol-2026-11-01", "gpt-6-sol" },
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

/* cost of usage u for model at the built-in table */
static double usd(const char *model, uint64_t in, uint64_t cached, uint64_t written, uint64_t out)
{
    const struct ar_price *p = ar_prices_find(NULL, model);
    assert_non_null(p);
    struct ar_usage u = { in, cached, written, out, 0 };
    return ar_price_apply(p, &u);
}

/*
 * Each row of shared PRICES.md's "Additions of 2026-12-07" (issue 59). The claude rows are
 * held to claude 2.1.337's own costUSD at the mock for the same tokens (measured: uncached
 * input 1,200, cache read 300, output 42; haiku-5-5 and sonnet-5-5 also 150,000 / 20,000 /
 * 1,000, where haiku's tier above 100k prompt tokens applies to the whole call).
 */
static void test_the_rows_of_2026_12_07(void **state)
{
    (void)state;
    /* Anthropic, against claude's own figure */
    assert_float_equal(usd("claude-opus-5-5", 1200, 300, 0, 42), 0.0057, 1e-12);
    assert_float_equal(usd("claude-sonnet-5-5", 1200, 300, 0, 42), 0.00285, 1e-12);
    assert_float_equal(usd("claude-haiku-5-5", 1200, 300, 0, 42), 0.000144, 1e-12);
    assert_float_equal(usd("claude-fable-5-2", 1200, 300, 0, 42), 0.01134, 1e-12);
    assert_float_equal(usd("claude-haiku-5-5", 150000, 20000, 0, 1000), 0.0785, 1e-12);
    assert_float_equal(usd("claude-sonnet-5-5", 150000, 20000, 0, 1000), 0.312, 1e-12);
    /* haiku-5-5's tier: above 100,000 prompt tokens (input + cache read + cache write), the
     * whole call at 0.50 / 2.50 / 0.05 / 0.625; at exactly 100,000 not yet */
    assert_float_equal(usd("claude-haiku-5-5", 100000, 0, 0, 1000),
                       (100000 * 0.1 + 1000 * 0.5) / 1e6, 1e-12);
    assert_float_equal(usd("claude-haiku-5-5", 99000, 1000, 1, 1000),
                       (99000 * 0.5 + 1000 * 0.05 + 1 * 0.625 + 1000 * 2.5) / 1e6, 1e-12);
    assert_float_equal(usd("claude-haiku-5-5", 1000, 0, 1000, 0), (1000 * 0.1 + 1000 * 0.125) / 1e6,
                       1e-12);
    assert_float_equal(usd("claude-mythos-5-2", 1000, 1000, 1000, 1000),
                       (1000 * 8.0 + 1000 * 0.2 + 1000 * 10.0 + 1000 * 40.0) / 1e6, 1e-12);
    assert_float_equal(usd("claude-mythos-5-1", 1000, 1000, 1000, 1000),
                       (1000 * 10.0 + 1000 * 0.25 + 1000 * 12.5 + 1000 * 50.0) / 1e6, 1e-12);
    /* the cache writes PRICES.md now gives */
    assert_float_equal(usd("claude-opus-5-5", 0, 0, 1000, 0), 1000 * 5.0 / 1e6, 1e-12);
    assert_float_equal(usd("claude-opus-5", 0, 0, 1000, 0), 1000 * 6.25 / 1e6, 1e-12);
    assert_float_equal(usd("claude-fable-5-1", 0, 0, 1000, 0), 1000 * 12.5 / 1e6, 1e-12);

    /* OpenAI: gpt-6-astra, cache writes at 1.25x input, tier above 272k */
    assert_float_equal(usd("gpt-6-astra", 1000, 1000, 1000, 1000),
                       (1000 * 10.0 + 1000 * 1.0 + 1000 * 12.5 + 1000 * 50.0) / 1e6, 1e-12);
    assert_float_equal(usd("gpt-6-astra", 272000, 1, 0, 1000),
                       (272000 * 20.0 + 1 * 2.0 + 1000 * 75.0) / 1e6, 1e-12);
    /* gpt-6-sol and -luna: no cached or cache-write price published: priced without them,
     * unknown with them; above 272k 2x input, 1.5x output */
    assert_float_equal(usd("gpt-6-sol", 1000, 0, 0, 1000), (1000 * 2.0 + 1000 * 10.0) / 1e6, 1e-12);
    assert_float_equal(usd("gpt-6-sol", 300000, 0, 0, 1000), (300000 * 4.0 + 1000 * 15.0) / 1e6,
                       1e-12);
    assert_true(isnan(usd("gpt-6-sol", 1000, 10, 0, 1000)));
    assert_true(isnan(usd("gpt-6-sol", 1000, 0, 10, 1000)));
    assert_float_equal(usd("gpt-6-luna", 1000, 0, 0, 1000), (1000 * 0.1 + 1000 * 0.5) / 1e6, 1e-12);
    assert_float_equal(usd("gpt-6-luna", 300000, 0, 0, 1000), (300000 * 0.2 + 1000 * 0.75) / 1e6,
                       1e-12);
    assert_true(isnan(usd("gpt-6-luna", 300000, 5, 0, 0)));
    /* the gpt-5.6 cuts: gpt-5.6 is gpt-5.6-sol */
    for (int i = 0; i < 2; i++) {
        const char *m = i ? "gpt-5.6-sol" : "gpt-5.6";
        assert_float_equal(usd(m, 1000, 1000, 1000, 1000),
                           (1000 * 4.0 + 1000 * 0.4 + 1000 * 5.0 + 1000 * 20.0) / 1e6, 1e-12);
        assert_float_equal(usd(m, 272000, 1000, 1000, 1000),
                           (272000 * 8.0 + 1000 * 0.8 + 1000 * 10.0 + 1000 * 30.0) / 1e6, 1e-12);
    }
    assert_float_equal(usd("gpt-5.6-terra", 1000, 1000, 0, 1000),
                       (1000 * 2.0 + 1000 * 0.2 + 1000 * 12.0) / 1e6, 1e-12);
    assert_true(isnan(usd("gpt-5.6-terra", 1000, 0, 1, 0)));
    assert_float_equal(usd("gpt-5.6-luna", 1000, 1000, 0, 1000),
                       (1000 * 0.2 + 1000 * 0.02 + 1000 * 1.2) / 1e6, 1e-12);
    assert_true(isnan(usd("gpt-5.6-luna", 1000, 0, 1, 0)));

    /* Google */
    assert_float_equal(usd("gemini-3.8-flash", 1000, 1000, 0, 1000),
                       (1000 * 0.75 + 1000 * 0.075 + 1000 * 3.75) / 1e6, 1e-12);
    assert_float_equal(usd("gemini-3.5-flash-lite", 1000, 0, 0, 1000),
                       (1000 * 0.30 + 1000 * 2.50) / 1e6, 1e-12);
    assert_true(isnan(usd("gemini-3.5-flash-lite", 1000, 1, 0, 1000)));

    /* A price the table does not know makes the call's cost unknown, not a part of it. */
    struct ar_usage cached = { 1000, 10, 0, 1000, 0 };
    struct ar_cost c = ar_cost_compute(NULL, "gpt-6-sol", &cached, 0, 0);
    assert_int_equal(c.source, AR_COST_UNKNOWN);
    struct ar_usage plain = { 1000, 0, 0, 1000, 0 };
    c = ar_cost_compute(NULL, "gpt-6-sol", &plain, 0, 0);
    assert_int_equal(c.source, AR_COST_TABLE);
    assert_float_equal(c.usd, 0.012, 1e-12);
    c = ar_cost_compute(NULL, "gpt-6.2-sol", &plain, 0, 0);
    assert_int_equal(c.source, AR_COST_UNKNOWN);
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

    /* A null rate is one nobody published: tokens of it make the cost unknown. */
    path = write_temp("{\"models\": {\"n-model\": {\"input\": 1, \"output\": 2, "
                      "\"cache_read\": null}}}");
    assert_int_equal(ar_prices_load(path, &t, &err), 0);
    p = ar_prices_find(t, "n-model");
    assert_non_null(p);
    assert_true(isnan(p->cache_read));
    struct ar_usage nu = { 10, 0, 0, 10, 0 };
    assert_float_equal(ar_price_apply(p, &nu), 30 / 1e6, 1e-15);
    nu.cache_read = 1;
    assert_int_equal(ar_cost_compute(t, "n-model", &nu, 0, 0).source, AR_COST_UNKNOWN);
    ar_prices_destroy(t);
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
        cmocka_unit_test(test_the_rows_of_2026_12_07),
        cmocka_unit_test(test_cost_sources_cli_table_unknown),
        cmocka_unit_test(test_override_file_replaces_and_adds),
        cmocka_unit_test(test_cache_read_share_of_the_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
