/*
 * The share and its budget (src/run/share.c, budget.c, confine.c): what a call may
 * spend, which providers it may call, where it may read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentrun/share.h"
#include "run/budget.h"
#include "run/share.h"
#include "util/buf.h"

/* ---- the budget --------------------------------------------------------------------- */

/* Before any call has a price the first one runs alone and holds all that is left; the
 * next one waits for it. */
static void test_budget_first_call_runs_alone_with_everything_left(void **state)
{
    (void)state;
    struct ar_budget root, run;
    ar_budget_init(&root, NULL, 0, "root");
    ar_budget_init(&run, &root, 0.10, "this run's cap");
    struct ar_budget_hold a, b;
    assert_int_equal(ar_budget_reserve(&run, &a, NULL), AR_BUDGET_START);
    assert_true(a.allow > 0.0999 && a.allow < 0.1001);
    assert_int_equal(ar_budget_reserve(&run, &b, NULL), AR_BUDGET_WAIT);
    assert_int_equal(b.n, 0);
    ar_budget_settle(&a, 0.03, 1, NULL);
    assert_true(root.spent > 0.0299 && root.spent < 0.0301);
    /* Now priced: two more fit ($0.07 left, $0.03 each), a third waits for them. */
    struct ar_budget_hold c, d, e;
    assert_int_equal(ar_budget_reserve(&run, &c, NULL), AR_BUDGET_START);
    assert_int_equal(ar_budget_reserve(&run, &d, NULL), AR_BUDGET_START);
    assert_int_equal(ar_budget_reserve(&run, &e, NULL), AR_BUDGET_WAIT);
    ar_budget_settle(&c, 0.03, 1, NULL);
    ar_budget_settle(&d, 0.03, 1, NULL);
    /* $0.01 left, less than the dearest call ($0.03), nothing running: refused for good. */
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_budget_reserve(&run, &e, &err), AR_BUDGET_OVER);
    assert_int_equal(err.code, AR_EBUDGET);
    assert_non_null(strstr(err.msg, "this run's cap of $0.1000 has $0.0100 left"));
    assert_int_equal(run.refused, 1);
}

/* A repair call after a main call that cost more than half the cap is not made:
 * the cap covers every call of the run. */
static void test_budget_repair_call_does_not_pass_the_runs_cap(void **state)
{
    (void)state;
    struct ar_budget root, run;
    ar_budget_init(&root, NULL, 0, "root");
    ar_budget_init(&run, &root, 0.02, "this run's cap");
    struct ar_budget_hold h;
    assert_int_equal(ar_budget_reserve(&run, &h, NULL), AR_BUDGET_START);
    ar_budget_settle(&h, 0.0123, 1, NULL);
    assert_int_equal(ar_budget_reserve(&run, &h, NULL), AR_BUDGET_OVER);
}

/* An unknown cost stops every capped node above the call, and only those. */
static void test_budget_unknown_cost_stops_the_caps_above(void **state)
{
    (void)state;
    struct ar_budget root, capped, free_run, other;
    ar_budget_init(&root, NULL, 0, "root");
    ar_budget_init(&capped, &root, 1.0, "capped");
    ar_budget_init(&free_run, &root, 0, "free");
    ar_budget_init(&other, &root, 1.0, "other");
    struct ar_budget_hold h;
    assert_int_equal(ar_budget_reserve(&capped, &h, NULL), AR_BUDGET_START);
    ar_budget_settle(&h, 0, 0, "gpt-unknown");
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_budget_reserve(&capped, &h, &err), AR_BUDGET_OVER);
    assert_non_null(strstr(err.msg, "gpt-unknown"));
    assert_int_equal(ar_budget_reserve(&free_run, &h, NULL), AR_BUDGET_START);
    ar_budget_settle(&h, 0.5, 1, NULL);
    assert_int_equal(ar_budget_reserve(&other, &h, NULL), AR_BUDGET_START);
    ar_budget_settle(&h, 0.5, 1, NULL);
}

/* A call waits while calls under the node that refuses it run; one above it with room to
 * spare does not let it through. */
static void test_budget_the_tightest_cap_decides(void **state)
{
    (void)state;
    struct ar_budget total, a, b;
    ar_budget_init(&total, NULL, 0.05, "total");
    ar_budget_init(&a, &total, 0, "a");
    ar_budget_init(&b, &total, 0.02, "b");
    struct ar_budget_hold h1, h2;
    assert_int_equal(ar_budget_reserve(&a, &h1, NULL), AR_BUDGET_START);
    ar_budget_settle(&h1, 0.01, 1, NULL);
    assert_int_equal(ar_budget_reserve(&b, &h2, NULL), AR_BUDGET_START);
    /* b's own first call: it may spend all b has left, less than what total has. */
    assert_true(h2.allow > 0.0199 && h2.allow < 0.0201);
    ar_budget_settle(&h2, 0.015, 1, NULL);
    assert_int_equal(ar_budget_reserve(&b, &h2, NULL), AR_BUDGET_OVER);
    assert_int_equal(ar_budget_reserve(&a, &h1, NULL), AR_BUDGET_START);
    ar_budget_settle(&h1, 0.01, 1, NULL);
}

/* A deterministic generator, so a failure names its seed. */
static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/*
 * The rule as a property: in any tree, for any order of starts and ends and any costs,
 * what each node spent is at most its cap plus what calls cost past what they held
 * there; so calls that cost no more than they held (the dearest so far, or all that was
 * left for a first call) never spend past any cap, and a CLI kept to `allow` never
 * spends past it when calls run one at a time.
 */
static void test_budget_property_never_spends_past_a_cap_beyond_the_excess(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        uint64_t s = seed * 0x9E3779B97F4A7C15ull;
        struct ar_budget nodes[6];
        double excess[6] = { 0 };
        ar_budget_init(&nodes[0], NULL, rng(&s) % 3 ? 0.5 : 0, "root");
        for (int i = 1; i < 6; i++)
            ar_budget_init(&nodes[i], &nodes[rng(&s) % (unsigned)i],
                           rng(&s) % 2 ? (double)(1 + rng(&s) % 40) / 100.0 : 0, "node");
        struct {
            struct ar_budget_hold h;
        } running[8];
        int n_running = 0;
        int obedient = rng(&s) % 2; /* every call costs at most what it held */
        for (int step = 0; step < 60; step++) {
            if (n_running < 8 && rng(&s) % 2) {
                int leaf = (int)(rng(&s) % 6);
                struct ar_budget_hold h;
                if (ar_budget_reserve(&nodes[leaf], &h, NULL) == AR_BUDGET_START)
                    running[n_running++].h = h;
            } else if (n_running) {
                int k = (int)(rng(&s) % (unsigned)n_running);
                struct ar_budget_hold *h = &running[k].h;
                double held_min = 1e9;
                for (size_t i = 0; i < h->n; i++)
                    if (h->node[i]->cap > 0 && h->amount[i] < held_min)
                        held_min = h->amount[i];
                double cost = (double)(rng(&s) % 1000) / 10000.0;
                if (obedient && held_min < 1e9 && cost > held_min)
                    cost = held_min;
                for (size_t i = 0; i < h->n; i++) {
                    struct ar_budget *b = h->node[i];
                    if (cost > h->amount[i])
                        excess[b - nodes] += cost - h->amount[i];
                }
                ar_budget_settle(h, cost, 1, NULL);
                running[k] = running[--n_running];
            }
            for (int i = 0; i < 6; i++) {
                if (!(nodes[i].cap > 0))
                    continue;
                if (nodes[i].spent > nodes[i].cap + excess[i] + 1e-9)
                    fail_msg("seed %llu: node %d spent %.6f past its cap %.6f + excess %.6f",
                             (unsigned long long)seed, i, nodes[i].spent, nodes[i].cap, excess[i]);
                if (obedient && nodes[i].spent > nodes[i].cap + 1e-9)
                    fail_msg("seed %llu: node %d spent %.6f past its cap %.6f with obedient "
                             "calls",
                             (unsigned long long)seed, i, nodes[i].spent, nodes[i].cap);
            }
        }
        while (n_running) {
            ar_budget_settle(&running[n_running - 1].h, 0, 1, NULL);
            n_running--;
        }
        for (int i = 0; i < 6; i++) {
            assert_int_equal(nodes[i].running, 0);
            assert_true(nodes[i].reserved < 1e-9);
        }
    }
}

/* ---- the share ---------------------------------------------------------------------- */

static struct ar_share *share_with(const struct ar_share_options *o)
{
    struct ar_share *s = NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_share_create(o, &s, &err) != 0)
        fail_msg("ar_share_create: %s", err.msg);
    return s;
}

static int woken;
static enum ar_budget_answer woken_answer;
static void wake(void *arg, enum ar_budget_answer a, const struct ar_error *why)
{
    (void)arg;
    (void)why;
    woken++;
    woken_answer = a;
}

/* max_calls: a call past the cap waits, and is woken, in order, when one ends. */
static void test_share_max_calls_queues_and_wakes_in_order(void **state)
{
    (void)state;
    struct ar_share_options o;
    ar_share_options_init(&o);
    o.max_calls = 1;
    struct ar_share *s = share_with(&o);
    struct ar_budget leaf1, leaf2;
    ar_budget_init(&leaf1, ar_share_budget(s), 0, "a");
    ar_budget_init(&leaf2, ar_share_budget(s), 0, "b");
    struct ar_budget_hold h1, h2;
    struct ar_share_waiter w1 = { &leaf1, &h1, wake, NULL, NULL, NULL, 0 };
    struct ar_share_waiter w2 = { &leaf2, &h2, wake, NULL, NULL, NULL, 0 };
    woken = 0;
    assert_int_equal(ar_share_admit(s, &w1, NULL), AR_BUDGET_START);
    assert_int_equal(ar_share_admit(s, &w2, NULL), AR_BUDGET_WAIT);
    assert_true(w2.queued);
    ar_share_release(s, &h1, 0.01, 1, NULL);
    assert_int_equal(woken, 1);
    assert_int_equal(woken_answer, AR_BUDGET_START);
    assert_false(w2.queued);
    ar_share_release(s, &h2, 0.01, 1, NULL);
    struct ar_share_stats st;
    ar_share_get_stats(s, &st);
    assert_int_equal(st.calls, 2);
    assert_int_equal(st.running, 0);
    assert_true(st.spent_usd > 0.0199 && st.spent_usd < 0.0201);
    ar_share_destroy(s);
}

/* The total is reserved when a call starts, not when it is asked for: five calls asked at
 * once under a total of $0.02, each costing $0.0123, make two at most. */
static void test_share_total_is_kept_over_calls_asked_at_once(void **state)
{
    (void)state;
    struct ar_share_options o;
    ar_share_options_init(&o);
    o.max_cost_usd = 0.02;
    struct ar_share *s = share_with(&o);
    struct ar_budget leaf[5];
    struct ar_budget_hold h[5];
    struct ar_share_waiter w[5];
    int started = 0, refused = 0;
    for (int i = 0; i < 5; i++) {
        ar_budget_init(&leaf[i], ar_share_budget(s), 0, "call");
        w[i] = (struct ar_share_waiter){ &leaf[i], &h[i], wake, NULL, NULL, NULL, 0 };
    }
    woken = 0;
    for (int i = 0; i < 5; i++) {
        enum ar_budget_answer a = ar_share_admit(s, &w[i], NULL);
        started += a == AR_BUDGET_START;
        refused += a == AR_BUDGET_OVER;
    }
    assert_int_equal(started, 1); /* the first runs alone until its price is known */
    ar_share_release(s, &h[0], 0.0123, 1, NULL);
    /* $0.0077 left < $0.0123: the four waiting calls are refused, none runs. */
    assert_int_equal(woken, 4);
    assert_int_equal(woken_answer, AR_BUDGET_OVER);
    struct ar_share_stats st;
    ar_share_get_stats(s, &st);
    assert_true(st.spent_usd < 0.02);
    assert_int_equal(st.refused, 4);
    ar_share_destroy(s);
}

static void test_share_command_cap_within_each(void **state)
{
    (void)state;
    struct ar_share_options o;
    ar_share_options_init(&o);
    o.max_cost_each = 0.02;
    struct ar_share *s = share_with(&o);
    double cap;
    assert_int_equal(ar_share_command_cap(s, 0, &cap, NULL), 0);
    assert_true(cap > 0.0199 && cap < 0.0201); /* none named: the share's */
    assert_int_equal(ar_share_command_cap(s, 0.01, &cap, NULL), 0);
    assert_true(cap > 0.0099 && cap < 0.0101);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_share_command_cap(s, 0.05, &cap, &err), AR_EUSAGE);
    assert_string_equal(err.where, "max_cost");
    ar_share_destroy(s);
}

static void test_share_providers_and_nesting(void **state)
{
    (void)state;
    struct ar_share_options o;
    ar_share_options_init(&o);
    o.providers = "codex gemini";
    struct ar_share *s = share_with(&o);
    assert_false(ar_share_provider_ok(s, 0));
    assert_true(ar_share_provider_ok(s, 1));
    assert_true(ar_share_provider_ok(s, 2));
    ar_share_destroy(s);
    struct ar_error err = AR_ERROR_INIT;
    o.providers = "codex,claud";
    assert_int_equal(ar_share_create(&o, &s, &err), AR_EUSAGE);
    assert_string_equal(err.where, "providers");

    ar_share_options_init(&o);
    o.max_cost_usd = 1;
    setenv("AGENTRUN_DEPTH", "2", 1);
    setenv("AGENTRUN_BUDGET_USD", "0.25", 1);
    s = share_with(&o);
    struct ar_share_stats st;
    ar_share_get_stats(s, &st);
    assert_int_equal(st.depth, 2);
    assert_true(st.cap_usd > 0.2499 && st.cap_usd < 0.2501); /* the parent had less left */
    ar_share_destroy(s);
    setenv("AGENTRUN_DEPTH", "3", 1);
    err = (struct ar_error)AR_ERROR_INIT;
    assert_int_equal(ar_share_create(&o, &s, &err), AR_EUSAGE);
    assert_string_equal(err.where, "depth");
    setenv("AGENTRUN_DEPTH", "1", 1);
    setenv("AGENTRUN_BUDGET_USD", "lots", 1);
    assert_int_equal(ar_share_create(&o, &s, &err), AR_EUSAGE);
    setenv("AGENTRUN_BUDGET_USD", "0", 1); /* nothing left: every call refused */
    s = share_with(&o);
    struct ar_budget leaf;
    struct ar_budget_hold h;
    ar_budget_init(&leaf, ar_share_budget(s), 0, "run");
    assert_int_equal(ar_budget_reserve(&leaf, &h, NULL), AR_BUDGET_OVER);
    ar_share_destroy(s);
    unsetenv("AGENTRUN_DEPTH");
    unsetenv("AGENTRUN_BUDGET_USD");
}

/* ---- confinement -------------------------------------------------------------------- */

static char tmp[PATH_MAX];

static void touch(const char *rel)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", tmp, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("x\n", f);
    fclose(f);
}

static int setup_tree(void **state)
{
    (void)state;
    snprintf(tmp, sizeof(tmp), "%s/agentrun-share-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(tmp));
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/.git", tmp);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/sub", tmp);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/subway", tmp);
    assert_int_equal(mkdir(p, 0700), 0);
    touch("secret.txt");
    touch("sub/ok.txt");
    touch("subway/no.txt");
    snprintf(p, sizeof(p), "%s/sub/link", tmp);
    char target[PATH_MAX + 64];
    snprintf(target, sizeof(target), "%s/secret.txt", tmp);
    assert_int_equal(symlink(target, p), 0);
    return 0;
}

static int teardown_tree(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* Paths out of the allowed folder are refused whatever the spelling: "..", a link, a
 * sibling whose name starts alike, an absolute path; git's REV:PATH is resolved as git
 * resolves it (from the top unless it starts ./ or ../). */
static void test_confinement_holds_for_every_spelling(void **state)
{
    (void)state;
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof(sub), "%s/sub", tmp);
    const char *dirs[] = { sub };
    struct ar_share_options o;
    ar_share_options_init(&o);
    o.dirs = dirs;
    o.n_dirs = 1;
    struct ar_share *s = share_with(&o);
    char abs_secret[PATH_MAX + 16];
    snprintf(abs_secret, sizeof(abs_secret), "%s/secret.txt", tmp);
    const char *refused[] = { "../secret.txt", "link", "../subway/no.txt", abs_secret, ".." };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        struct ar_error err = AR_ERROR_INIT;
        if (ar_share_path(s, sub, refused[i], NULL, &err) != AR_EUSAGE)
            fail_msg("'%s' was allowed", refused[i]);
        assert_string_equal(err.where, "dirs");
    }
    char *real = NULL;
    assert_int_equal(ar_share_path(s, sub, "ok.txt", &real, NULL), 0);
    assert_non_null(strstr(real, "/sub/ok.txt"));
    free(real);
    assert_int_equal(ar_share_path(s, sub, ".", NULL, NULL), 0);

    const char *rev_refused[] = { "HEAD:../secret.txt",   "HEAD:secret.txt",
                                  "HEAD:subway/no.txt",   "HEAD^{/fix: x}:secret.txt",
                                  "HEAD:./../secret.txt", "HEAD:sub/../secret.txt",
                                  "HEAD:../../etc/passwd" };
    for (size_t i = 0; i < sizeof(rev_refused) / sizeof(rev_refused[0]); i++)
        if (ar_share_rev_path(s, sub, rev_refused[i], NULL) == 0)
            fail_msg("'%s' was allowed", rev_refused[i]);
    const char *rev_ok[] = { "HEAD:sub/ok.txt", "HEAD:./ok.txt", "HEAD^{/a: b}:sub/x",
                             "origin/main:sub/deep/x.md" };
    for (size_t i = 0; i < sizeof(rev_ok) / sizeof(rev_ok[0]); i++) {
        struct ar_error err = AR_ERROR_INIT;
        if (ar_share_rev_path(s, sub, rev_ok[i], &err) != 0)
            fail_msg("'%s' was refused: %s", rev_ok[i], err.msg);
    }
    struct ar_buf b;
    ar_buf_init(&b, 1 << 10);
    assert_int_equal(ar_share_read_file(s, sub, "link", &b, NULL), AR_EUSAGE);
    assert_int_equal(b.len, 0);
    assert_int_equal(ar_share_read_file(s, sub, "ok.txt", &b, NULL), 0);
    assert_int_equal(b.len, 2);
    ar_buf_finish(&b);
    ar_share_destroy(s);

    /* No dirs: anywhere. */
    ar_share_options_init(&o);
    s = share_with(&o);
    assert_int_equal(ar_share_path(s, sub, "../secret.txt", NULL, NULL), 0);
    assert_int_equal(ar_share_rev_path(s, sub, "HEAD:../secret.txt", NULL), 0);
    ar_share_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_first_call_runs_alone_with_everything_left),
        cmocka_unit_test(test_budget_repair_call_does_not_pass_the_runs_cap),
        cmocka_unit_test(test_budget_unknown_cost_stops_the_caps_above),
        cmocka_unit_test(test_budget_the_tightest_cap_decides),
        cmocka_unit_test(test_budget_property_never_spends_past_a_cap_beyond_the_excess),
        cmocka_unit_test(test_share_max_calls_queues_and_wakes_in_order),
        cmocka_unit_test(test_share_total_is_kept_over_calls_asked_at_once),
        cmocka_unit_test(test_share_command_cap_within_each),
        cmocka_unit_test(test_share_providers_and_nesting),
        cmocka_unit_test_setup_teardown(test_confinement_holds_for_every_spelling, setup_tree,
                                        teardown_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
