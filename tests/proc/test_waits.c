/*
 * A rate limit's wait and the pause it puts on the provider's other runs (the retry of
 * src/run/pipeline.c, the shared pause of src/run/backoff.c), on a loop whose clock the
 * test moves (ar_loop_clock_manual(), proc.h): a wait of a minute takes no time, and a
 * run is seen waiting at 59.999 s and calling at 60 s. ar_loop_run() returns whenever
 * nothing but waits is left, so each step is: move the clock, settle, look.
 *
 * Every run is of the fake CLI named codex, in a directory of its own, where its calls
 * are answered in turn by call0.jsonl, call1.jsonl, … (relative paths: the fake reads
 * them from its working directory and counts its calls in ./state), so runs that call at
 * the same time never take each other's answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agentrun/agentrun.h"
#include "agentrun/share.h"
#include "proc/proc.h"
#include "run/run.h"
#include "fixture.h"

#ifndef AR_FAKE_BIN_DIR
#error "AR_FAKE_BIN_DIR: the fake CLI's bin directory, set by tests/proc/meson.build"
#endif

#define MAX_CALLS 3
/* Where the clock starts: far from 0, so a pause computed from 0 would show. */
#define T0 ((uint64_t)1000000)

static char tmpdir[256];

/* One run: its directory, options, and what it did. */
struct job {
    char dir[320];
    struct ar_run_options o;
    int started; /* calls started (on_call STARTED) */
    int done;
    struct ar_result *res;
};

/*
 * A codex turn (the shapes of tests/fixtures/codex): `items` (item.completed events),
 * then the answer "done", or, when limited_for is not NULL, the rate limit "Please try
 * again in <limited_for>".
 */
static char *codex_turn(const char *items, const char *limited_for)
{
    static const char answer[] =
        "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":"
        "\"agent_message\",\"text\":\"done\"}}\n"
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":100,"
        "\"cached_input_tokens\":0,\"output_tokens\":5}}\n";
    char *end = NULL, *s = NULL;
    if (limited_for)
        assert_true(asprintf(&end,
                             "{\"type\":\"error\",\"message\":\"Rate limit reached. Please "
                             "try again in %s.\"}\n{\"type\":\"turn.failed\",\"error\":{"
                             "\"message\":\"Rate limit reached. Please try again in %s.\"}}\n",
                             limited_for, limited_for) > 0);
    assert_true(asprintf(&s,
                         "{\"type\":\"thread.started\",\"thread_id\":\"01a201a4-e6d7\"}\n"
                         "{\"type\":\"turn.started\"}\n%s%s",
                         items, end ? end : answer) > 0);
    free(end);
    return s;
}

static char *limited(const char *after)
{
    return codex_turn("", after);
}

static char *answered(void)
{
    return codex_turn("", NULL);
}

/* A shell command that ran to the end: under a writable sandbox it may have changed
 * anything, though no file shows it. */
static const char ran_a_command[] =
    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":"
    "\"command_execution\",\"command\":\"/bin/bash -lc 'make install'\","
    "\"aggregated_output\":\"\",\"exit_code\":0,\"status\":\"completed\"}}\n";

static void on_call(void *arg, const char *job, enum ar_call_event ev,
                    const struct ar_call_record *call)
{
    struct job *j = arg;
    (void)job;
    (void)call;
    j->started += ev == AR_CALL_STARTED;
}

static void on_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    struct job *j = arg;
    (void)run;
    j->done++;
    j->res = res;
}

/* A run named `name` whose calls get answers[0], answers[1], … (the last repeats); takes
 * the answers. */
static void job_init(struct job *j, const char *name, char *answers[MAX_CALLS])
{
    static int runs; /* a new directory for every run, whatever its name */
    memset(j, 0, sizeof(*j));
    snprintf(j->dir, sizeof(j->dir), "%s/%d-%s", tmpdir, runs++, name);
    assert_int_equal(mkdir(j->dir, 0700), 0);
    char *last = NULL;
    for (int i = 0; i < MAX_CALLS; i++) {
        if (answers[i])
            last = answers[i];
        char path[400];
        snprintf(path, sizeof(path), "%s/call%d.jsonl", j->dir, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(last, f);
        fclose(f);
    }
    for (int i = 0; i < MAX_CALLS; i++)
        free(answers[i]);
    ar_run_options_init(&j->o);
    j->o.provider = "codex";
    j->o.prompt = "x";
    j->o.cwd = j->dir;
    j->o.on_call = on_call;
    j->o.call_arg = j;
}

/* Starts j under share (NULL: a share of its own). */
static void job_start(struct ar_loop *loop, struct ar_share *share, struct job *j)
{
    struct ar_error err = AR_ERROR_INIT;
    j->o.share = share;
    if (ar_pipeline_start(loop, &j->o, NULL, on_done, j, NULL, &err) != 0)
        fail_msg("cannot start the run: %s", err.msg);
}

/* A share with the defaults: what a batch's jobs share (the rate-limit pause). */
static struct ar_share *new_share(void)
{
    struct ar_share_options so;
    struct ar_share *s = NULL;
    ar_share_options_init(&so);
    assert_int_equal(ar_share_create(&so, &s, NULL), 0);
    return s;
}

static void job_finish(struct job *j)
{
    ar_result_destroy(j->res);
    j->res = NULL;
}

static struct ar_loop *manual_loop(void)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    assert_non_null(loop);
    ar_loop_clock_manual(loop, T0);
    return loop;
}

/* Runs the loop until nothing but waits is left. */
static void settle(struct ar_loop *loop)
{
    ar_loop_run(loop);
}

static void advance(struct ar_loop *loop, uint64_t ms)
{
    ar_loop_clock_advance(loop, ms);
    settle(loop);
}

/* Moves the clock on by ms (> 0) in two steps, the first a millisecond short: the count
 * of what the wait holds back (calls started) moves only with the second. */
static void advance_to_the_millisecond(struct ar_loop *loop, uint64_t ms, const int *count)
{
    int before = *count;
    advance(loop, ms - 1);
    assert_int_equal(*count, before);
    advance(loop, 1);
    assert_int_equal(*count, before + 1);
}

/* A rate limit is waited out, as long as the provider said, when that is within
 * --max-wait (the bound included), then the call is made once more; past it, or with
 * --max-wait 0, the run fails at once. */
static void test_a_rate_limit_within_max_wait_is_waited_out_to_the_millisecond(void **state)
{
    static const struct {
        const char *after;    /* "Please try again in …" */
        uint64_t max_wait_ms; /* --max-wait */
        int64_t wait_ms;      /* the wait before the second call; -1: no second call */
    } cases[] = {
        { "60s", 60000, 60000 }, /* the default --max-wait, and a wait of exactly that */
        { "1.5s", 60000, 1500 }, { "0s", 60000, 0 }, /* a wait of 0 s is said, not the 5 s of
                                                        "nothing said" */
        { "1s", 1000, 1000 },    { "61s", 60000, -1 }, { "1.001s", 1000, -1 },
        { "0s", 0, -1 }, /* --max-wait 0: never wait, never retry */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        print_message("try again in %s, --max-wait %llu ms\n", cases[i].after,
                      (unsigned long long)cases[i].max_wait_ms);
        struct ar_loop *loop = manual_loop();
        struct job j;
        char name[32];
        snprintf(name, sizeof(name), "case%zu", i);
        job_init(&j, name, (char *[MAX_CALLS]){ limited(cases[i].after), answered() });
        j.o.max_wait_ms = cases[i].max_wait_ms;
        job_start(loop, NULL, &j);
        settle(loop);
        if (cases[i].wait_ms < 0) {
            assert_int_equal(j.done, 1);
            assert_int_equal(j.started, 1);
            assert_int_equal(j.res->error.code, AR_ERATELIMIT);
        } else {
            if (cases[i].wait_ms > 0) {
                assert_int_equal(j.done, 0); /* waiting */
                advance_to_the_millisecond(loop, (uint64_t)cases[i].wait_ms, &j.started);
            }
            assert_int_equal(j.done, 1);
            assert_int_equal(j.started, 2);
            assert_true(j.res->ok);
            assert_int_equal(j.res->n_calls, 2);
            assert_string_equal(j.res->calls[0].error, "rate_limit");
            assert_int_equal(j.res->calls[1].waited_ms, cases[i].wait_ms);
        }
        job_finish(&j);
        assert_int_equal(ar_loop_destroy(loop), 0);
    }
}

/* A call that ran a shell command under a writable sandbox may have changed anything,
 * though no file shows: it is never made again after its rate limit, by this provider or
 * by a fallback one. */
static void test_a_call_that_ran_a_tool_is_neither_retried_nor_handed_on(void **state)
{
    struct ar_loop *loop = manual_loop();
    struct job j;
    job_init(&j, "tool", (char *[MAX_CALLS]){ codex_turn(ran_a_command, "0s"), answered() });
    j.o.allow_edits = 1;
    j.o.fallback = "gemini";
    job_start(loop, NULL, &j);
    settle(loop);
    assert_int_equal(j.done, 1);
    assert_int_equal(j.started, 1);
    assert_int_equal(j.res->n_calls, 1);
    assert_int_equal(j.res->error.code, AR_ERATELIMIT);
    assert_non_null(strstr(j.res->error.msg, "not retried or handed to a fallback provider"));
    job_finish(&j);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

/* claude's turns (the shapes of tests/fixtures/claude): an answer that is no JSON, and
 * one that ran a shell command, then hit a rate limit. */
static char *claude_no_json(void)
{
    return strdup("{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                  "\"result\":\"no JSON here\",\"session_id\":\"5a\"}\n");
}

static char *claude_ran_a_command_then_limited(void)
{
    return strdup(
        "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":"
        "\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{\"command\":\"make "
        "install\"}}]},\"session_id\":\"5a\"}\n"
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":"
        "\"toolu_1\",\"type\":\"tool_result\",\"content\":\"done\",\"is_error\":false}]},"
        "\"session_id\":\"5a\"}\n"
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":"
        "429,\"result\":\"API Error: Request rejected (429) \\u00b7 rate limited\","
        "\"session_id\":\"5a\"}\n");
}

/* The call's own effects decide, whatever call it is: a repair call (a text call, but
 * the CLI's word is what counts) that ran a command is not made again either. */
static void test_a_repair_call_that_ran_a_tool_is_not_retried(void **state)
{
    struct ar_loop *loop = manual_loop();
    struct job j;
    job_init(&j, "repair",
             (char *[MAX_CALLS]){ claude_no_json(), claude_ran_a_command_then_limited(),
                                  claude_no_json() });
    j.o.provider = "claude";
    j.o.want_json = 1;
    job_start(loop, NULL, &j);
    settle(loop);
    assert_int_equal(j.done, 1); /* not waiting for a retry */
    assert_int_equal(j.started, 2);
    assert_int_equal(j.res->n_calls, 2);
    assert_int_equal(j.res->error.code, AR_ERATELIMIT);
    job_finish(&j);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

/*
 * Runs sharing a share (a batch's jobs) pause together: a second rate limit that says
 * to wait longer than the first extends the pause, and a run started meanwhile sits out
 * all of it, to the millisecond.
 */
static void test_a_longer_second_rate_limit_extends_the_shared_pause(void **state)
{
    struct ar_loop *loop = manual_loop();
    struct ar_share *backoff = new_share();
    struct job a, b, c;
    job_init(&a, "a", (char *[MAX_CALLS]){ limited("2s"), answered() });
    job_init(&b, "b", (char *[MAX_CALLS]){ limited("10s"), answered() });
    job_init(&c, "c", (char *[MAX_CALLS]){ answered() });

    /* 0 s: a is limited for 2 s; b, started then, sits out that pause. */
    job_start(loop, backoff, &a);
    settle(loop);
    assert_int_equal(a.started, 1);
    job_start(loop, backoff, &b);
    settle(loop);
    assert_int_equal(b.started, 0);
    /* 2 s: a's second call answers; b's first is limited for 10 s more. */
    advance(loop, 2000);
    assert_int_equal(a.done, 1);
    assert_true(a.res->ok);
    assert_int_equal(b.started, 1);
    assert_int_equal(b.done, 0);
    /* c, started at 2 s, waits until 12 s. */
    job_start(loop, backoff, &c);
    settle(loop);
    assert_int_equal(c.started, 0);
    advance_to_the_millisecond(loop, 10000, &c.started);
    assert_int_equal(b.done, 1);
    assert_int_equal(c.done, 1);
    assert_true(b.res->ok);
    assert_true(c.res->ok);
    assert_int_equal(b.res->calls[0].waited_ms, 2000);
    assert_int_equal(b.res->calls[1].waited_ms, 10000);
    assert_int_equal(c.res->n_calls, 1);
    assert_int_equal(c.res->calls[0].waited_ms, 10000);
    job_finish(&a);
    job_finish(&b);
    job_finish(&c);
    ar_share_destroy(backoff);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

/* A run with --max-wait 0 asked for no waiting: it calls at once, even while the
 * provider is paused for the other runs. */
static void test_max_wait_0_calls_at_once_through_another_runs_pause(void **state)
{
    struct ar_loop *loop = manual_loop();
    struct ar_share *backoff = new_share();
    struct job a, now;
    job_init(&a, "a", (char *[MAX_CALLS]){ limited("30s"), answered() });
    job_init(&now, "now", (char *[MAX_CALLS]){ answered() });
    now.o.max_wait_ms = 0;
    job_start(loop, backoff, &a);
    settle(loop);
    assert_int_equal(a.done, 0); /* waiting: the provider is paused for 30 s */
    job_start(loop, backoff, &now);
    settle(loop);
    assert_int_equal(now.done, 1);
    assert_true(now.res->ok);
    assert_int_equal(now.res->calls[0].waited_ms, 0);
    assert_int_equal(a.done, 0);
    advance(loop, 30000);
    assert_int_equal(a.done, 1);
    assert_true(a.res->ok);
    job_finish(&a);
    job_finish(&now);
    ar_share_destroy(backoff);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

/* The manual clock itself: waits end when the clock reaches them, earliest first, and
 * not before; ar_loop_now_ms() reads it; a cancel ends a wait at once, as on the real
 * clock. */
struct waiter {
    int id;
    int *order, *n; /* the ids in the order they ended; a cancelled one as -id */
};

static void on_waited(void *arg, int cancelled)
{
    struct waiter *w = arg;
    w->order[(*w->n)++] = cancelled ? -w->id : w->id;
}

static void test_a_manual_clock_ends_waits_in_order_when_reached(void **state)
{
    struct ar_loop *loop = manual_loop();
    assert_int_equal(ar_loop_now_ms(loop), T0);
    int order[5] = { 0 }, n = 0;
    static const uint64_t ms[5] = { 300, 100, 0, 100, 60000 };
    struct waiter w[5];
    struct ar_wait *last = NULL;
    for (int i = 0; i < 5; i++) {
        w[i] = (struct waiter){ i, order, &n };
        assert_int_equal(ar_wait_start(loop, ms[i], on_waited, &w[i], &last), 0);
    }
    settle(loop); /* the 0 ms wait only */
    assert_int_equal(n, 1);
    assert_int_equal(order[0], 2);
    advance(loop, 99);
    assert_int_equal(n, 1);
    advance(loop, 1000); /* due: earliest first, the two of 100 ms as started */
    assert_int_equal(ar_loop_now_ms(loop), T0 + 1099);
    assert_int_equal(n, 4);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 3);
    assert_int_equal(order[3], 0);
    ar_wait_cancel(last);
    settle(loop);
    assert_int_equal(n, 5);
    assert_int_equal(order[4], -4);
    assert_int_equal(ar_loop_now_ms(loop), T0 + 1099);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

static int setup(void **state)
{
    (void)state;
    ar_test_env_scrub();
    if (ar_test_tmpdir_make(tmpdir, sizeof(tmpdir), "agentrun-waits") != 0)
        return -1;
    setenv("AGENTRUN_CODEX_BIN", AR_FAKE_BIN_DIR "/codex", 1);
    setenv("AGENTRUN_GEMINI_BIN", AR_FAKE_BIN_DIR "/gemini", 1);
    setenv("AGENTRUN_CLAUDE_BIN", AR_FAKE_BIN_DIR "/claude", 1);
    setenv("FAKE_CLI_STATE", "state", 1);
    setenv("FAKE_CLI_FIXTURE", "call0.jsonl,call1.jsonl,call2.jsonl", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return ar_test_tmpdir_remove(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_manual_clock_ends_waits_in_order_when_reached),
        cmocka_unit_test(test_a_rate_limit_within_max_wait_is_waited_out_to_the_millisecond),
        cmocka_unit_test(test_a_call_that_ran_a_tool_is_neither_retried_nor_handed_on),
        cmocka_unit_test(test_a_repair_call_that_ran_a_tool_is_not_retried),
        cmocka_unit_test(test_a_longer_second_rate_limit_extends_the_shared_pause),
        cmocka_unit_test(test_max_wait_0_calls_at_once_through_another_runs_pause),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
