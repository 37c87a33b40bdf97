/*
 * The library's review (agentrun/review.h) on a loop the test owns, against
 * the fake CLI named codex: two chunks merged, a failed chunk failing the
 * review, cancel (and a second cancel that SIGKILLs), nothing to review, and
 * a diff past max_chunks. Each test ends with uv_loop_close() == 0: the
 * review left nothing on the caller's loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "agentrun/review.h"
#include "fixture.h"

#ifndef AR_FAKE_BIN_DIR
#error "AR_FAKE_BIN_DIR: the fake CLI's directory, set by tests/proc/meson.build"
#endif

static char tmpdir[256];

/* Two files of about 90 bytes each: two chunks at max_chunk_bytes 120. */
static const char two_files[] = "diff --git a/a.c b/a.c\n"
                                "--- a/a.c\n"
                                "+++ b/a.c\n"
                                "@@ -1,2 +1,3 @@\n"
                                " int a;\n"
                                "+int b;\n"
                                " int c;\n"
                                "diff --git a/b.c b/b.c\n"
                                "--- a/b.c\n"
                                "+++ b/b.c\n"
                                "@@ -1,2 +1,3 @@\n"
                                " int x;\n"
                                "+int y;\n"
                                " int z;\n";

/* A codex stream answering text, as tests/cli/clitest.py writes it; returns its path. */
static const char *codex_fixture(const char *name, const char *text)
{
    static char paths[4][512];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, 512, "%s/%s.jsonl", tmpdir, name);
    json_t *item = json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "item.completed", "item", "id",
                             "item_0", "type", "agent_message", "text", text);
    char *line = json_dumps(item, JSON_COMPACT);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n"
            "{\"type\":\"turn.started\"}\n%s\n"
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000,"
            "\"cached_input_tokens\":200,\"output_tokens\":50}}\n",
            line);
    fclose(f);
    free(line);
    json_decref(item);
    return path;
}

static void fake_env(const char *fixtures, const char *exits)
{
    char state[512];
    snprintf(state, sizeof(state), "%s/state", tmpdir);
    unlink(state);
    setenv("FAKE_CLI_STATE", state, 1);
    setenv("FAKE_CLI_FIXTURE", fixtures, 1);
    if (exits)
        setenv("FAKE_CLI_EXIT", exits, 1);
    else
        unsetenv("FAKE_CLI_EXIT");
    unsetenv("FAKE_CLI_HANG");
    unsetenv("FAKE_CLI_IGNORE_TERM");
}

struct outcome {
    struct ar_review_run *review;
    struct ar_review_result *res;
    int done_calls;
    int started, finished;
    size_t max_running;
    uv_timer_t timer;
    int cancels; /* how many times the timer cancels */
    uint64_t cancelled_at, done_at;
};

static void on_event(void *arg, const struct ar_review_event *ev)
{
    struct outcome *oc = arg;
    if (ev->kind == AR_REVIEW_CHUNK_STARTED)
        oc->started++;
    else
        oc->finished++;
    if (ev->running > oc->max_running)
        oc->max_running = ev->running;
    assert_true(ev->chunk < ev->n_chunks);
}

static void on_done(struct ar_review_run *review, struct ar_review_result *res, void *arg)
{
    struct outcome *oc = arg;
    assert_ptr_equal(review, oc->review);
    oc->res = res;
    oc->done_calls++;
    oc->done_at = uv_now(oc->timer.loop);
    uv_timer_stop(&oc->timer);
}

static void on_timer(uv_timer_t *t)
{
    struct outcome *oc = t->data;
    if (!oc->done_calls && oc->cancels-- > 0) {
        if (!oc->cancelled_at)
            oc->cancelled_at = uv_now(t->loop);
        ar_review_cancel(oc->review);
    }
}

static struct ar_review_options base_options(void)
{
    struct ar_review_options o;
    ar_review_options_init(&o);
    o.run.provider = "codex";
    o.run.cwd = tmpdir;
    o.run.kill_grace_ms = 500;
    o.run.max_wait_ms = 0;
    o.diff = two_files;
    o.diff_len = strlen(two_files);
    o.label = "two.diff";
    o.max_chunk_bytes = 120;
    o.jobs = 2;
    return o;
}

/* Runs a review on a loop of the test's own; cancels after cancel_ms (< 0: never), cancels
 * times. Checks the loop closes clean. */
static void review(const struct ar_review_options *o, struct outcome *oc, long cancel_ms,
                   int cancels)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_init(&loop, &oc->timer);
    oc->timer.data = oc;
    oc->cancels = cancels;
    struct ar_review_options opts = *o;
    opts.on_event = on_event;
    opts.event_arg = oc;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_review_start(&loop, &opts, on_done, oc, &oc->review, &err), 0);
    assert_non_null(ar_review_plan(oc->review));
    if (cancel_ms >= 0)
        uv_timer_start(&oc->timer, on_timer, (uint64_t)cancel_ms, 1000);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&oc->timer, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(oc->done_calls, 1);
    assert_non_null(oc->res);
}

static void test_two_chunks_merge(void **state)
{
    (void)state;
    char fixtures[1100];
    snprintf(fixtures, sizeof(fixtures), "%s,%s",
             codex_fixture("a", "{\"passed\":false,\"summary\":\"one\",\"issues\":[{\"file\":"
                                "\"a.c\",\"line\":2,\"severity\":\"high\",\"message\":\"a bug\","
                                "\"suggestion\":\"fix it\"}]}"),
             codex_fixture("b",
                           "{\"passed\":false,\"summary\":\"two\",\"issues\":[{\"file\":"
                           "\"b.c\",\"line\":2,\"severity\":\"low\",\"message\":\"a nit\"}]}"));
    fake_env(fixtures, NULL);
    struct ar_review_options o = base_options();
    struct outcome oc = { 0 };
    review(&o, &oc, -1, 0);

    const struct ar_review_result *res = oc.res;
    assert_int_equal(res->plan.n_chunks, 2);
    assert_int_equal(res->plan.reviewed, 1);
    assert_string_equal(res->plan.source, "two.diff");
    assert_int_equal(oc.started, 2);
    assert_int_equal(oc.finished, 2);
    const struct ar_review *rv = &res->review;
    assert_false(rv->failed);
    assert_false(rv->degraded);
    assert_false(rv->passed);
    assert_int_equal(rv->chunks, 2);
    /* Whichever call answered which chunk, the merge sorts by file then line. */
    assert_int_equal(rv->n_issues, 2);
    assert_string_equal(rv->issues[0].file, "a.c");
    assert_int_equal(rv->issues[0].line, 2);
    assert_int_equal(rv->issues[0].severity, AR_SEV_HIGH);
    assert_string_equal(rv->issues[0].message, "a bug");
    assert_string_equal(rv->issues[0].suggestion, "fix it");
    assert_string_equal(rv->issues[1].file, "b.c");
    assert_null(rv->issues[1].suggestion);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(strlen(rv->issues[i].fingerprint), AR_FINGERPRINT_LEN);
        assert_false(rv->issues[i].outside_diff);
    }
    assert_string_not_equal(rv->issues[0].fingerprint, rv->issues[1].fingerprint);
    assert_non_null(strstr(rv->summary, "one"));
    assert_non_null(strstr(rv->summary, "two"));
    /* Both calls' tokens: codex's 1000 input include 200 cached. */
    assert_int_equal(rv->usage.input, 1600);
    assert_int_equal(rv->usage.cache_read, 400);
    assert_int_equal(rv->usage.output, 100);
    assert_int_equal(rv->n_calls, 2);
    /* A high finding at fail_on low: exit 1. */
    assert_int_equal(res->verdict.exit_status, 1);
    assert_int_equal(res->verdict.n_failing, 2);
    assert_int_equal(res->verdict.by_severity[AR_SEV_HIGH], 1);
    char high[AR_FINGERPRINT_LEN + 1];
    memcpy(high, rv->issues[0].fingerprint, sizeof(high));
    ar_review_result_destroy(oc.res);

    /* fail_on high and a baseline holding the high finding: it is left out, the
     * low one does not fail. */
    char base[512];
    snprintf(base, sizeof(base), "%s/baseline.json", tmpdir);
    FILE *f = fopen(base, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\":\"agentrun.review/1\",\"issues\":[{\"fingerprint\":\"%s\"}]}\n", high);
    fclose(f);
    struct ar_review_baseline *bl = NULL;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_review_baseline_load(base, &bl, &err), 0);
    fake_env(fixtures, NULL);
    o.baseline = bl;
    o.fail_on = AR_SEV_HIGH;
    struct outcome oc2 = { 0 };
    review(&o, &oc2, -1, 0);
    ar_review_baseline_destroy(bl);
    assert_int_equal(oc2.res->review.n_issues, 1);
    assert_int_equal(oc2.res->review.suppressed, 1);
    assert_string_equal(oc2.res->review.issues[0].file, "b.c");
    assert_int_equal(oc2.res->verdict.exit_status, 0);
    ar_review_result_destroy(oc2.res);
}

static void test_failed_chunk_fails_the_review(void **state)
{
    (void)state;
    char three[sizeof(two_files) + 100];
    snprintf(three, sizeof(three),
             "%sdiff --git a/c.c b/c.c\n--- a/c.c\n+++ b/c.c\n@@ -1 +1 @@\n-int q;\n+int r;\n",
             two_files);
    const char *ok = codex_fixture("ok", "{\"passed\":true,\"summary\":\"fine\",\"issues\":[]}");
    char fixtures[600];
    snprintf(fixtures, sizeof(fixtures), "%s,", ok);
    /* One at a time: call 0 answers, call 1 prints nothing and exits 1, chunk 3
     * never starts. */
    fake_env(fixtures, "0,1");
    struct ar_review_options o = base_options();
    o.diff = three;
    o.diff_len = strlen(three);
    o.jobs = 1;
    struct outcome oc = { 0 };
    review(&o, &oc, -1, 0);
    const struct ar_review_result *res = oc.res;
    assert_int_equal(res->plan.n_chunks, 3);
    assert_int_equal(oc.started, 2);
    assert_int_equal(oc.finished, 3);
    assert_int_equal(oc.max_running, 1);
    assert_true(res->review.failed);
    assert_false(res->review.passed);
    assert_int_equal(res->review.error.code, AR_ECLIFAILED);
    assert_int_equal(res->verdict.exit_status, 4);
    assert_int_equal(res->review.n_calls, 2);
    ar_review_result_destroy(oc.res);
}

static void test_cancel(void **state)
{
    (void)state;
    fake_env(codex_fixture("never", "{}"), NULL);
    setenv("FAKE_CLI_HANG", "1", 1);
    struct ar_review_options o = base_options();
    o.jobs = 1; /* the second chunk waits in the queue: it never starts */
    struct outcome oc = { 0 };
    review(&o, &oc, 200, 1);
    const struct ar_review_result *res = oc.res;
    assert_true(res->review.failed);
    assert_int_equal(res->review.error.code, AR_EINTERRUPTED);
    assert_int_equal(res->verdict.exit_status, 130);
    assert_int_equal(oc.started, 1);
    assert_int_equal(oc.finished, 2);
    assert_int_equal(res->review.n_calls, 1);
    ar_review_result_destroy(oc.res);

    /* A CLI that ignores SIGTERM, a long grace: the second cancel SIGKILLs at once. */
    fake_env(codex_fixture("never", "{}"), NULL);
    setenv("FAKE_CLI_HANG", "1", 1);
    setenv("FAKE_CLI_IGNORE_TERM", "1", 1);
    o.jobs = 2;
    o.run.kill_grace_ms = 60000;
    struct outcome oc2 = { 0 };
    review(&o, &oc2, 200, 2); /* at 200 ms, then again at 1200 ms */
    assert_true(oc2.res->review.failed);
    assert_int_equal(oc2.res->review.error.code, AR_EINTERRUPTED);
    assert_true(oc2.done_at - oc2.cancelled_at < 10000);
    ar_review_result_destroy(oc2.res);
    unsetenv("FAKE_CLI_IGNORE_TERM");
    unsetenv("FAKE_CLI_HANG");
}

/* A panel's calls are cancelled like a review's chunks: every running CLI ends, none queued
 * starts, and the review fails "interrupted" with every member named as failed. */
static void test_panel_cancel(void **state)
{
    (void)state;
    fake_env(codex_fixture("never", "{}"), NULL);
    setenv("FAKE_CLI_HANG", "1", 1);
    setenv("AGENTRUN_GEMINI_BIN", AR_FAKE_BIN_DIR "/gemini", 1);
    /* A gemini call makes ~/.gemini/tmp (its sessions outlive the private home): the
     * test's own directory is its home. */
    const char *home = getenv("HOME");
    char *saved_home = home ? strdup(home) : NULL;
    setenv("HOME", tmpdir, 1);
    struct ar_review_options o = base_options();
    o.run.provider = NULL;
    o.panel = "codex,gemini";
    o.jobs = 2; /* 2 chunks x 2 members: the first chunk's two calls run, two wait */
    struct outcome oc = { 0 };
    review(&o, &oc, 200, 1);
    const struct ar_review_result *res = oc.res;
    assert_true(res->review.failed);
    assert_int_equal(res->review.error.code, AR_EINTERRUPTED);
    assert_int_equal(res->verdict.exit_status, 130);
    assert_int_equal(oc.started, 2);
    assert_int_equal(oc.finished, 4);
    assert_int_equal(oc.max_running, 2);
    assert_int_equal(res->panel.n_members, 2);
    assert_int_equal(res->panel.answered, 0);
    assert_string_equal(res->panel.members[0].provider, "codex");
    assert_string_equal(res->panel.members[1].provider, "gemini");
    for (size_t m = 0; m < 2; m++) {
        assert_int_equal(res->panel.members[m].status, AR_MEMBER_FAILED);
        assert_int_equal(res->panel.members[m].error.code, AR_EINTERRUPTED);
        assert_int_equal(res->panel.members[m].calls, 1);
    }
    assert_int_equal(res->review.n_calls, 2);
    ar_review_result_destroy(oc.res);
    unsetenv("FAKE_CLI_HANG");
    unsetenv("AGENTRUN_GEMINI_BIN");
    if (saved_home)
        setenv("HOME", saved_home, 1);
    else
        unsetenv("HOME");
    free(saved_home);
}

static void test_nothing_to_review(void **state)
{
    (void)state;
    fake_env(codex_fixture("unused", "{}"), NULL);
    struct ar_review_options o = base_options();
    o.diff = "";
    o.diff_len = 0;
    struct outcome oc = { 0 };
    review(&o, &oc, -1, 0);
    assert_false(oc.res->plan.reviewed);
    assert_string_equal(oc.res->plan.why_not, "the diff is empty");
    assert_true(oc.res->review.passed);
    assert_int_equal(oc.res->verdict.exit_status, 0);
    assert_int_equal(oc.res->review.n_calls, 0);
    assert_int_equal(oc.started + oc.finished, 0);
    ar_review_result_destroy(oc.res);
}

static void test_start_errors(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct outcome oc = { 0 };
    struct ar_review_options o = base_options();
    o.max_chunks = 1;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_review_run *r = NULL;
    assert_int_equal(ar_review_start(&loop, &o, on_done, &oc, &r, &err), AR_EUSAGE);
    assert_string_equal(err.where, "max_chunks");
    assert_non_null(strstr(err.msg, "needs 2 chunks"));
    assert_null(r);

    o = base_options();
    o.rev = "HEAD";
    err = (struct ar_error)AR_ERROR_INIT;
    assert_int_equal(ar_review_start(&loop, &o, on_done, &oc, &r, &err), AR_EUSAGE);

    o = base_options();
    o.jobs = 0;
    assert_int_equal(ar_review_start(&loop, &o, on_done, &oc, &r, NULL), AR_EUSAGE);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(oc.done_calls, 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_blocking(void **state)
{
    (void)state;
    fake_env(codex_fixture("pass", "{\"passed\":true,\"summary\":\"fine\",\"issues\":[]}"), NULL);
    struct ar_review_options o = base_options();
    struct ar_review_result *res = NULL;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_review(&o, &res, &err), 0);
    assert_true(res->review.passed);
    assert_int_equal(res->verdict.exit_status, 0);
    assert_int_equal(res->review.chunks, 2);
    ar_review_result_destroy(res);
}

static int setup(void **state)
{
    (void)state;
    ar_test_env_scrub();
    if (ar_test_tmpdir_make(tmpdir, sizeof(tmpdir), "agentrun-review-api") != 0)
        return -1;
    setenv("AGENTRUN_CODEX_BIN", AR_FAKE_BIN_DIR "/codex", 1);
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
    setenv("XDG_CACHE_HOME", tmpdir, 1);
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
        cmocka_unit_test(test_two_chunks_merge),
        cmocka_unit_test(test_failed_chunk_fails_the_review),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_panel_cancel),
        cmocka_unit_test(test_nothing_to_review),
        cmocka_unit_test(test_start_errors),
        cmocka_unit_test(test_blocking),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
