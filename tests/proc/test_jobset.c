/*
 * The job set (src/run/jobset.h), the scheduler under batch and review, on a libuv
 * loop this test owns, against the fake CLI named codex: the cap is never passed,
 * a cancel ends every running job exactly once and starts none after it (a second
 * cancel SIGKILLs what the first let live), and a rate limit on one job pauses the
 * other jobs' calls (on a clock the test moves: no test sleeps). Each test ends
 * with uv_loop_close() == 0: the set left no handle behind.
 *
 * Every job runs in a directory of its own, where its calls are answered in turn by
 * call0.jsonl, call1.jsonl (relative paths: the fake reads them from its working
 * directory and counts its calls in ./state).
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
#include <uv.h>

#include "agentrun/agentrun.h"
#include "proc/proc.h"
#include "run/jobset.h"
#include "fixture.h"

#ifndef AR_FAKE_BIN_DIR
#error "AR_FAKE_BIN_DIR: the fake CLI's bin directory, set by tests/proc/meson.build"
#endif

#define MAX_JOBS 8
#define T0       ((uint64_t)1000000) /* the manual clock's start, far from 0 */

static char tmpdir[256];

struct set;

struct job {
    struct set *s;
    char dir[320];
    struct ar_run_options o;
    int started; /* calls started (on_call STARTED) */
    int done;    /* done callbacks: exactly 1 in the end */
    struct ar_result *res;
};

/* The owner: starts jobs in order while there is room and the test released them. */
struct set {
    struct ar_jobset *js;
    struct job jobs[MAX_JOBS];
    size_t n;        /* jobs */
    size_t released; /* the pump may start jobs [0, released) */
    size_t next;     /* the first not started (or written off) */
    size_t started;  /* jobs started */
    size_t done;
    unsigned max_running; /* ar_jobset_running() at its highest */
    int live, max_live;   /* calls between STARTED and FINISHED */
    int refused;          /* starts refused after the cancel */
    int cancels;          /* ar_jobset_cancel() calls */
    int ended;
};

static const char answered[] = "{\"type\":\"thread.started\",\"thread_id\":\"01a201a4-e6d7\"}\n"
                               "{\"type\":\"turn.started\"}\n"
                               "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":"
                               "\"agent_message\",\"text\":\"done\"}}\n"
                               "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":100,"
                               "\"cached_input_tokens\":0,\"output_tokens\":5}}\n";

static const char limited_30s[] =
    "{\"type\":\"thread.started\",\"thread_id\":\"01a201a4-e6d7\"}\n"
    "{\"type\":\"turn.started\"}\n"
    "{\"type\":\"error\",\"message\":\"Rate limit reached. Please try again in 30s.\"}\n"
    "{\"type\":\"turn.failed\",\"error\":{\"message\":\"Rate limit reached. Please try "
    "again in 30s.\"}}\n";

static void on_call(void *arg, const char *job, enum ar_call_event ev,
                    const struct ar_call_record *call)
{
    struct job *j = arg;
    (void)job;
    (void)call;
    if (ev == AR_CALL_STARTED) {
        j->started++;
        if (++j->s->live > j->s->max_live)
            j->s->max_live = j->s->live;
    } else {
        j->s->live--;
    }
}

static void pump(void *owner)
{
    struct set *s = owner;
    assert_false(s->ended);
    while (s->next < s->released && ar_jobset_room(s->js)) {
        struct ar_error err = AR_ERROR_INIT;
        struct job *j = &s->jobs[s->next++];
        if (ar_jobset_start(s->js, &j->o, NULL, j, &err) != 0)
            fail_msg("cannot start job %zu: %s", s->next - 1, err.msg);
        s->started++;
        if (ar_jobset_running(s->js) > s->max_running)
            s->max_running = ar_jobset_running(s->js);
    }
    assert_true(ar_jobset_running(s->js) <= ar_jobset_cap(s->js));
    if (ar_jobset_cancelled(s->js) && s->next < s->n) {
        /* No room after a cancel, and a start is refused. */
        struct ar_error err = AR_ERROR_INIT;
        assert_false(ar_jobset_room(s->js));
        assert_int_equal(ar_jobset_start(s->js, &s->jobs[s->next].o, NULL, &s->jobs[s->next], &err),
                         AR_EINTERRUPTED);
        s->refused++;
        s->next = s->n; /* written off */
    }
    if (s->next == s->n && s->done == s->started && !ar_jobset_running(s->js)) {
        s->ended = 1;
        ar_jobset_end(s->js);
    }
}

static void on_done(void *owner, void *job, struct ar_result *res)
{
    struct set *s = owner;
    struct job *j = job;
    j->done++;
    s->done++;
    j->res = res;
}

static const struct ar_jobset_ops ops = { pump, on_done };

/* n jobs, each in a directory of its own answered by first, then `then`. */
static void set_init(struct set *s, uv_loop_t *uv, unsigned cap, size_t n, const char *first,
                     const char *then)
{
    static int sets;
    memset(s, 0, sizeof(*s));
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        struct job *j = &s->jobs[i];
        j->s = s;
        snprintf(j->dir, sizeof(j->dir), "%s/%d-%zu", tmpdir, sets, i);
        assert_int_equal(mkdir(j->dir, 0700), 0);
        for (int k = 0; k < 2; k++) {
            char path[400];
            snprintf(path, sizeof(path), "%s/call%d.jsonl", j->dir, k);
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            fputs(k == 0 && i == 0 ? first : then, f);
            fclose(f);
        }
        ar_run_options_init(&j->o);
        j->o.provider = "codex";
        j->o.prompt = "x";
        j->o.cwd = j->dir;
        j->o.on_call = on_call;
        j->o.call_arg = j;
    }
    sets++;
    struct ar_error err = AR_ERROR_INIT;
    s->js = ar_jobset_create(uv, cap, &ops, s, NULL, &err);
    assert_non_null(s->js);
    assert_int_equal(ar_jobset_cap(s->js), cap);
}

static void set_finish(struct set *s, uv_loop_t *uv)
{
    assert_true(s->ended);
    for (size_t i = 0; i < s->n; i++)
        ar_result_destroy(s->jobs[i].res);
    assert_int_equal(uv_run(uv, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(uv), 0);
}

/* Six jobs, three at a time: never more run or call at once, and each ends once. */
static void test_the_cap_is_never_passed(void **state)
{
    (void)state;
    uv_loop_t uv;
    assert_int_equal(uv_loop_init(&uv), 0);
    struct set s;
    setenv("FAKE_CLI_SLEEP_MS", "100", 1); /* so that the jobs overlap */
    set_init(&s, &uv, 3, 6, answered, answered);
    s.released = s.n;
    ar_jobset_kick(s.js);
    assert_int_equal(uv_run(&uv, UV_RUN_DEFAULT), 0);
    unsetenv("FAKE_CLI_SLEEP_MS");
    assert_int_equal(s.max_running, 3);
    assert_true(s.max_live <= 3);
    assert_int_equal(s.done, 6);
    for (size_t i = 0; i < s.n; i++) {
        assert_int_equal(s.jobs[i].done, 1);
        assert_int_equal(s.jobs[i].started, 1);
        assert_true(s.jobs[i].res->ok);
    }
    set_finish(&s, &uv);
}

/* Whether job i's CLI ignores SIGTERM by now: it wrote ./ready after it set SIG_IGN. */
static int ignores_term(const struct set *s, size_t i)
{
    char path[400];
    struct stat st;
    snprintf(path, sizeof(path), "%s/ready", s->jobs[i].dir);
    return stat(path, &st) == 0;
}

/* Cancels (twice) once three CLIs run and ignore SIGTERM: the kill grace is an hour, so
 * only the second cancel's SIGKILL ends them. */
static void cancel_when_three_run(uv_timer_t *t)
{
    struct set *s = t->data;
    if (!s->cancels && !(ignores_term(s, 0) && ignores_term(s, 1) && ignores_term(s, 2)))
        return;
    ar_jobset_cancel(s->js);
    assert_int_equal(ar_jobset_cancelled(s->js), ++s->cancels);
    if (s->cancels == 2)
        uv_timer_stop(t);
}

static void test_a_cancel_ends_every_job_once_and_starts_none(void **state)
{
    (void)state;
    uv_loop_t uv;
    assert_int_equal(uv_loop_init(&uv), 0);
    struct set s;
    setenv("FAKE_CLI_HANG", "1", 1);
    setenv("FAKE_CLI_IGNORE_TERM", "1", 1);
    setenv("FAKE_CLI_WRITE_FILES", "ready=1", 1);
    set_init(&s, &uv, 3, 5, answered, answered);
    for (size_t i = 0; i < s.n; i++)
        s.jobs[i].o.kill_grace_ms = 3600000;
    s.released = s.n;
    ar_jobset_kick(s.js);
    uv_timer_t t;
    uv_timer_init(&uv, &t);
    t.data = &s;
    uv_timer_start(&t, cancel_when_three_run, 10, 10);
    uv_unref((uv_handle_t *)&t);
    assert_int_equal(uv_run(&uv, UV_RUN_DEFAULT), 0);
    unsetenv("FAKE_CLI_HANG");
    unsetenv("FAKE_CLI_IGNORE_TERM");
    unsetenv("FAKE_CLI_WRITE_FILES");
    assert_int_equal(s.cancels, 2);
    uv_close((uv_handle_t *)&t, NULL);
    assert_int_equal(s.refused, 1);
    assert_int_equal(s.done, 3);
    for (size_t i = 0; i < s.n; i++) {
        struct job *j = &s.jobs[i];
        assert_int_equal(j->done, i < 3);
        assert_int_equal(j->started, i < 3);
        if (i < 3)
            assert_int_equal(j->res->error.code, AR_EINTERRUPTED);
    }
    set_finish(&s, &uv);
}

/* Job 0 is told to come back in 30 s; job 1, started meanwhile, sits out the same
 * pause, to the millisecond: the set's jobs share one backoff. */
static void test_a_rate_limit_on_one_job_pauses_the_others(void **state)
{
    (void)state;
    uv_loop_t uv;
    assert_int_equal(uv_loop_init(&uv), 0);
    struct set s;
    set_init(&s, &uv, 2, 2, limited_30s, answered);
    struct ar_loop *loop = ar_jobset_loop(s.js);
    ar_loop_clock_manual(loop, T0);
    s.released = 1;
    ar_jobset_kick(s.js);
    assert_int_equal(uv_run(&uv, UV_RUN_DEFAULT), 0); /* until only the wait is left */
    assert_int_equal(s.jobs[0].started, 1);
    assert_int_equal(s.jobs[0].done, 0);
    s.released = 2;
    ar_jobset_kick(s.js);
    assert_int_equal(uv_run(&uv, UV_RUN_DEFAULT), 0);
    assert_int_equal(ar_jobset_running(s.js), 2);
    assert_int_equal(s.jobs[1].started, 0); /* paused with job 0 */
    ar_loop_clock_advance(loop, 29999);
    assert_int_equal(uv_run(&uv, UV_RUN_DEFAULT), 0);
    assert_int_equal(s.jobs[0].started, 1);
    assert_int_equal(s.jobs[1].started, 0);
    ar_loop_clock_advance(loop, 1);
    assert_int_equal(uv_run(&uv, UV_RUN_DEFAULT), 0);
    assert_int_equal(s.done, 2);
    assert_true(s.jobs[0].res->ok);
    assert_true(s.jobs[1].res->ok);
    assert_int_equal(s.jobs[0].res->n_calls, 2);
    assert_int_equal(s.jobs[1].res->n_calls, 1);
    assert_int_equal(s.jobs[1].res->calls[0].waited_ms, 30000);
    set_finish(&s, &uv);
}

static int setup(void **state)
{
    (void)state;
    ar_test_env_scrub();
    if (ar_test_tmpdir_make(tmpdir, sizeof(tmpdir), "agentrun-jobset") != 0)
        return -1;
    setenv("AGENTRUN_CODEX_BIN", AR_FAKE_BIN_DIR "/codex", 1);
    setenv("FAKE_CLI_STATE", "state", 1);
    setenv("FAKE_CLI_FIXTURE", "call0.jsonl,call1.jsonl", 1);
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
        cmocka_unit_test(test_the_cap_is_never_passed),
        cmocka_unit_test(test_a_cancel_ends_every_job_once_and_starts_none),
        cmocka_unit_test(test_a_rate_limit_on_one_job_pauses_the_others),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
