/*
 * The public batch API (include/agentrun/batch.h) on a libuv loop this test
 * owns, against the fake CLI (tests/fake) standing in for claude: jobs from
 * lines and from options, the budget, resume, cancel. Each test ends with
 * uv_loop_close() == 0: the batch left no handle behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "agentrun/batch.h"
#include "fixture.h"

#ifndef AR_FAKE_BIN_DIR
#error "AR_FAKE_BIN_DIR: the fake CLI's bin directory, set by tests/proc/meson.build"
#endif

static char tmpdir[256];
static char fixture[300];

/* A claude stream answering `text` at `cost` USD. */
static void write_fixture(const char *text, double cost)
{
    FILE *f = fopen(fixture, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":"
            "\"claude-opus-4-8\",\"tools\":[],\"permissionMode\":\"default\"}\n"
            "{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"type\":\"message\",\"role\":"
            "\"assistant\",\"model\":\"claude-opus-4-8\",\"content\":[{\"type\":\"text\","
            "\"text\":\"%s\"}],\"usage\":{\"input_tokens\":100,\"output_tokens\":5}},"
            "\"session_id\":\"s1\"}\n"
            "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\","
            "\"session_id\":\"s1\",\"total_cost_usd\":%g,\"usage\":{\"input_tokens\":100,"
            "\"output_tokens\":5},\"num_turns\":1}\n",
            text, text, cost);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    ar_test_env_scrub();
    if (ar_test_tmpdir_make(tmpdir, sizeof(tmpdir), "agentrun-batch") != 0)
        return -1;
    snprintf(fixture, sizeof(fixture), "%s/answer.jsonl", tmpdir);
    write_fixture("done", 0.4);
    setenv("AGENTRUN_CLAUDE_BIN", AR_FAKE_BIN_DIR "/claude", 1);
    setenv("FAKE_CLI_FIXTURE", fixture, 1);
    char log[300];
    snprintf(log, sizeof(log), "%s/calls.jsonl", tmpdir);
    setenv("FAKE_CLI_LOG", log, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return ar_test_tmpdir_remove(tmpdir);
}

/* What the callbacks saw. */
struct seen {
    struct ar_batch *b;
    char ids[16][32];
    enum ar_batch_outcome outcome[16];
    int ok[16];
    int error[16]; /* the result's error code */
    char lines[4096];
    size_t n;
    size_t finished; /* FINISHED records */
    int done;
    struct ar_batch_stats st;
    int cancel_after;       /* cancel from the record callback of this many records (0: never) */
    char call_jobs[16][40]; /* "<job> started" / "<job> finished", from defaults.on_call */
    size_t n_calls;
};

static void on_call(void *arg, const char *job, enum ar_call_event ev,
                    const struct ar_call_record *call)
{
    struct seen *s = arg;
    assert_non_null(job);
    assert_true(s->n_calls < 16);
    snprintf(s->call_jobs[s->n_calls++], sizeof(s->call_jobs[0]), "%s %s", job,
             ev == AR_CALL_STARTED ? "started" : "finished");
    assert_string_equal(call->kind, "main");
}

/* How many of the calls seen were `what` ("a started"). */
static int calls_seen(const struct seen *s, const char *what)
{
    int n = 0;
    for (size_t i = 0; i < s->n_calls; i++)
        n += strcmp(s->call_jobs[i], what) == 0;
    return n;
}

static void on_record(struct ar_batch *b, const struct ar_batch_record *rec, void *arg)
{
    struct seen *s = arg;
    assert_false(s->done);
    assert_true(s->n < 16);
    snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", rec->id);
    s->outcome[s->n] = rec->outcome;
    if (rec->outcome == AR_BATCH_FINISHED) {
        assert_non_null(rec->result);
        assert_non_null(rec->json);
        assert_int_equal(rec->json[rec->json_len - 1], '\n');
        assert_int_equal(strlen(rec->json), rec->json_len);
        s->ok[s->n] = rec->result->ok;
        s->error[s->n] = rec->result->error.code;
        strncat(s->lines, rec->json, sizeof(s->lines) - strlen(s->lines) - 1);
    } else {
        assert_null(rec->result);
        assert_null(rec->json);
    }
    s->n++;
    /* The numbers a status line reads agree with the records so far. */
    struct ar_batch_stats st;
    ar_batch_get_stats(b, &st);
    s->finished += rec->outcome == AR_BATCH_FINISHED;
    assert_int_equal(st.ok + st.failed, s->finished);
    assert_true(st.running <= st.jobs);
    assert_true(s->n <= st.added);
    if (s->cancel_after && s->n == (size_t)s->cancel_after)
        ar_batch_cancel(b);
}

static void on_done(struct ar_batch *b, const struct ar_batch_stats *st, void *arg)
{
    struct seen *s = arg;
    assert_ptr_equal(b, s->b);
    s->done++;
    s->st = *st;
}

static struct ar_batch *start(uv_loop_t *loop, struct ar_batch_options *o, struct seen *s)
{
    struct ar_error err = AR_ERROR_INIT;
    o->defaults.provider = "claude";
    o->defaults.cwd = tmpdir;
    assert_int_equal(ar_batch_start(loop, o, on_record, on_done, s, &s->b, &err), 0);
    assert_non_null(s->b);
    return s->b;
}

static void add_line(struct ar_batch *b, const char *line)
{
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_batch_add_line(b, line, strlen(line), &err), 0);
}

/* Lines "j0", "j1", … "j<n-1>", each a prompt "x". */
static void add_numbered_jobs(struct ar_batch *b, int n)
{
    for (int i = 0; i < n; i++) {
        char line[64];
        snprintf(line, sizeof(line), "{\"id\": \"j%d\", \"prompt\": \"x\"}", i);
        add_line(b, line);
    }
}

static void run_to_end(uv_loop_t *loop, struct seen *s)
{
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(s->done, 1);
    assert_int_equal(uv_loop_close(loop), 0);
}

static void test_batch_runs_lines_and_option_jobs_and_reports_each_once(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct seen s = { 0 };
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    o.jobs = 2;
    o.defaults.on_call = on_call;
    o.defaults.call_arg = &s;
    struct ar_batch *b = start(&loop, &o, &s);
    add_line(b, "{\"id\": \"a\", \"prompt\": \"one\"}");
    add_line(b, "   ");
    add_line(b, "{\"id\": 7, \"prompt\": \"two\"}");
    add_line(b, "{\"id\": \"bad\", \"promt\": \"typo\"}");
    /* ar_batch_add() copies the options' strings: the caller's may go away. */
    char prompt[32] = "third job";
    struct ar_run_options r = o.defaults;
    r.prompt = prompt;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_batch_add(b, "c", &r, &err), 0);
    assert_int_equal(ar_batch_add(b, "c", &r, &err), AR_EUSAGE);
    memset(prompt, 'X', sizeof(prompt) - 1);
    add_line(b, "{\"id\": \"c\", \"prompt\": \"again\"}");
    ar_batch_close(b);
    /* Nothing before the loop runs. */
    assert_int_equal(s.n, 0);
    assert_int_equal(ar_batch_add_line(b, "{}", 2, &err), AR_EUSAGE);
    run_to_end(&loop, &s);

    assert_int_equal(s.n, 5);
    assert_int_equal(s.st.added, 5);
    assert_int_equal(s.st.ok, 3);
    assert_int_equal(s.st.failed, 2);
    assert_int_equal(s.st.running, 0);
    assert_int_equal(s.st.usage.input, 300);
    assert_true(s.st.cost_usd > 1.19 && s.st.cost_usd < 1.21);
    for (size_t i = 0; i < s.n; i++) {
        assert_int_equal(s.outcome[i], AR_BATCH_FINISHED);
        if (strcmp(s.ids[i], "bad") == 0 || strcmp(s.ids[i], "line 5") == 0)
            assert_int_equal(s.error[i], AR_EUSAGE);
        else
            assert_true(s.ok[i]);
    }
    /* An integer id stays a number in its record; a line's failure names its line. */
    assert_non_null(strstr(s.lines, "{\"id\":7,"));
    assert_non_null(strstr(s.lines, "line 4: unknown key 'promt'"));
    assert_non_null(strstr(s.lines, "line 5: id 'c' is used twice (first by ar_batch_add())"));
    char log[300], buf[8192] = "";
    snprintf(log, sizeof(log), "%s/calls.jsonl", tmpdir);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
    fclose(f);
    assert_non_null(strstr(buf, "third job"));
    assert_null(strstr(buf, "XXXX"));
    /* Each call's events name its job; lines that cannot run make no call. */
    assert_int_equal(s.n_calls, 6);
    const char *want[] = { "a started",  "a finished", "7 started",
                           "7 finished", "c started",  "c finished" };
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(calls_seen(&s, want[i]), 1);
}

static void test_batch_budget_stops_starting_jobs_and_fails_the_rest(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct seen s = { 0 };
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    o.jobs = 1;
    o.max_cost_usd = 1.0;
    struct ar_batch *b = start(&loop, &o, &s);
    add_numbered_jobs(b, 5);
    ar_batch_close(b);
    run_to_end(&loop, &s);

    /* $0.40 a job, $1 in all: the third would pass the budget. */
    assert_int_equal(s.n, 5);
    assert_int_equal(s.st.ok, 2);
    assert_int_equal(s.st.failed, 3);
    assert_int_equal(s.st.budget_stopped, 3);
    for (size_t i = 2; i < 5; i++)
        assert_int_equal(s.error[i], AR_EBUDGET);
    assert_true(s.st.cost_usd <= 1.0);
}

static void test_batch_resume_skips_done_ids_and_compacts_the_records(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct seen s = { 0 };
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    struct ar_batch *b = start(&loop, &o, &s);
    const char *earlier = "{\"id\":\"a\",\"ok\":true,\"n\":1}\n"
                          "{\"id\":\"b\",\"ok\":false,\"n\":2}\n"
                          "{\"id\":\"c\",\"ok\":false,\"n\":3}\n"
                          "{\"id\":\"a\",\"ok\":false,\"n\":4}\n"
                          "{\"id\":\"cut";
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_batch_resume(b, earlier, strlen(earlier), &err), 0);
    add_line(b, "{\"id\": \"a\", \"prompt\": \"x\"}");
    add_line(b, "{\"id\": \"b\", \"prompt\": \"x\"}");
    ar_batch_close(b);

    /* a is done (its ok record stays); b runs again (its old record goes); c is not
     * in this batch (its last record stays); the cut line goes. */
    size_t len = 0;
    char *text = ar_batch_compact_records(b, earlier, strlen(earlier), &len);
    assert_non_null(text);
    assert_string_equal(text, "{\"id\":\"a\",\"ok\":true,\"n\":1}\n"
                              "{\"id\":\"c\",\"ok\":false,\"n\":3}\n");
    assert_int_equal(len, strlen(text));
    free(text);

    run_to_end(&loop, &s);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.ids[0], "a");
    assert_int_equal(s.outcome[0], AR_BATCH_SKIPPED);
    assert_string_equal(s.ids[1], "b");
    assert_int_equal(s.outcome[1], AR_BATCH_FINISHED);
    assert_int_equal(s.st.skipped, 1);
    assert_int_equal(s.st.ok, 1);
}

static void on_timer(uv_timer_t *t)
{
    struct seen *s = t->data;
    ar_batch_cancel(s->b);
    uv_close((uv_handle_t *)t, NULL);
}

static void test_batch_cancel_ends_running_jobs_and_never_starts_the_rest(void **state)
{
    (void)state;
    setenv("FAKE_CLI_HANG", "1", 1);
    unsetenv("FAKE_CLI_FIXTURE");
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct seen s = { 0 };
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    o.jobs = 2;
    o.defaults.kill_grace_ms = 200;
    struct ar_batch *b = start(&loop, &o, &s);
    add_numbered_jobs(b, 5);
    ar_batch_close(b);
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    t.data = &s;
    uv_timer_start(&t, on_timer, 300, 0);
    uint64_t t0 = uv_hrtime();
    run_to_end(&loop, &s);

    assert_true(uv_hrtime() - t0 < 10ULL * 1000000000ULL);
    assert_int_equal(s.n, 5);
    assert_true(s.st.cancelled);
    assert_int_equal(s.st.failed, 2);
    assert_int_equal(s.st.not_started, 3);
    for (size_t i = 0; i < s.n; i++) {
        if (s.outcome[i] == AR_BATCH_FINISHED)
            assert_int_equal(s.error[i], AR_EINTERRUPTED);
        else
            assert_int_equal(s.outcome[i], AR_BATCH_NOT_STARTED);
    }
}

static void test_batch_cancel_from_a_record_callback_stops_the_rest(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct seen s = { 0 };
    s.cancel_after = 1;
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    o.jobs = 1;
    struct ar_batch *b = start(&loop, &o, &s);
    add_numbered_jobs(b, 3);
    ar_batch_close(b);
    run_to_end(&loop, &s);
    assert_int_equal(s.st.ok, 1);
    assert_int_equal(s.st.not_started, 2);
}

static void test_batch_without_jobs_ends_from_the_loop(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct seen s = { 0 };
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    struct ar_batch *b = start(&loop, &o, &s);
    ar_batch_close(b);
    assert_int_equal(s.done, 0);
    run_to_end(&loop, &s);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.st.added, 0);
}

/* Jobs of ar_batch_add() that edit one repository wait for each other in place, and run
 * side by side when each has a worktree of its own, on the batch's branches. */
static void test_batch_edit_jobs_with_worktrees_do_not_wait(void **state)
{
    (void)state;
    char repo[400], trees[400], cmd[1200];
    snprintf(repo, sizeof(repo), "%s/repo", tmpdir);
    snprintf(trees, sizeof(trees), "%s/trees", tmpdir);
    snprintf(cmd, sizeof(cmd),
             "mkdir '%s' && cd '%s' && git init -q && git -c user.name=t -c "
             "user.email=t@example.com commit -q --allow-empty -m init",
             repo, repo);
    if (system(cmd) != 0)
        skip();
    setenv("AGENTRUN_WORKTREE_DIR", trees, 1);
    setenv("FAKE_CLI_SLEEP_MS", "200", 1);
    for (int worktree = 0; worktree <= 1; worktree++) {
        uv_loop_t loop;
        uv_loop_init(&loop);
        struct seen s = { 0 };
        struct ar_batch_options o;
        ar_batch_options_init(&o);
        struct ar_batch *b = start(&loop, &o, &s);
        struct ar_run_options ro;
        ar_run_options_init(&ro);
        ro.provider = "claude";
        ro.prompt = "edit";
        ro.cwd = repo;
        ro.allow_edits = 1;
        ro.worktree = worktree ? AR_WORKTREE_EDITS : AR_WORKTREE_NEVER;
        struct ar_error err = AR_ERROR_INIT;
        assert_int_equal(ar_batch_add(b, "e1", &ro, &err), 0);
        assert_int_equal(ar_batch_add(b, "e2", &ro, &err), 0);
        ar_batch_close(b);
        run_to_end(&loop, &s);
        assert_int_equal(s.st.ok, 2);
        assert_int_equal(s.st.edit_jobs_waited, worktree ? 0 : 1);
        /* Nothing changed: each worktree went, and no branch is left. */
        assert_int_equal(strstr(s.lines, "\"worktree\":{\"path\":") != NULL, worktree);
        assert_int_equal(strstr(s.lines, "\"kept\":false,\"branch\":null") != NULL, worktree);
    }
    snprintf(cmd, sizeof(cmd), "cd '%s' && test -z \"$(git branch --list 'agentrun/*')\"", repo);
    assert_int_equal(system(cmd), 0);
    unsetenv("AGENTRUN_WORKTREE_DIR");
    unsetenv("FAKE_CLI_SLEEP_MS");
}

/* ---- The property: every job once, whatever the order (issue 60 #16, #17) ---------- */

/*
 * Jobs come in while the batch runs (a burst, then a few from each record callback), so
 * the queue is compacted under running jobs and waiting ones alike; the fake CLI sleeps a
 * random while per call, so jobs finish in any order; some lines fail before any process
 * (a template that does not exist, an unknown key) and are reported from inside the
 * scheduler between the others. However many ids (past the id table's first 256 slots
 * and its growth), each job gets exactly one record, with the outcome its kind gives, the
 * batch ends once, and nothing is left on the loop.
 */
enum prop_kind { PROP_RUN, PROP_NO_TEMPLATE, PROP_BAD_LINE };

struct prop {
    struct ar_batch *b;
    uint64_t rng;
    size_t n, added, records, ran;
    enum prop_kind *kind;
    unsigned char *got; /* records per job */
    int done;
    struct ar_batch_stats st;
};

static uint64_t prop_next(struct prop *p)
{
    /* xorshift64*: a sequence the seed alone decides. */
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return p->rng * 0x2545F4914F6CDD1DULL;
}

static size_t prop_below(struct prop *p, size_t n)
{
    return n ? (size_t)(prop_next(p) % n) : 0;
}

static void prop_add(struct prop *p)
{
    size_t i = p->added++;
    char line[160];
    /* Every third id an integer: its record carries it as one. */
    char id[32];
    if (i % 3 == 0)
        snprintf(id, sizeof(id), "%zu", i);
    else
        snprintf(id, sizeof(id), "\"p%zu\"", i);
    switch (p->kind[i]) {
    case PROP_RUN:
        snprintf(line, sizeof(line), "{\"id\": %s, \"prompt\": \"job %zu\"}", id, i);
        break;
    case PROP_NO_TEMPLATE:
        snprintf(line, sizeof(line), "{\"id\": %s, \"template\": \"no-such-template\"}", id);
        break;
    case PROP_BAD_LINE:
        snprintf(line, sizeof(line), "{\"id\": %s, \"prompt\": \"x\", \"promt\": 1}", id);
        break;
    }
    add_line(p->b, line);
    if (p->added == p->n)
        ar_batch_close(p->b);
}

static void prop_record(struct ar_batch *b, const struct ar_batch_record *rec, void *arg)
{
    struct prop *p = arg;
    assert_ptr_equal(b, p->b);
    assert_false(p->done);
    const char *digits = rec->id[0] == 'p' ? rec->id + 1 : rec->id;
    char *end = NULL;
    size_t i = strtoul(digits, &end, 10);
    if (!*digits || *end || i >= p->added)
        fail_msg("a record of '%s', which is no job added so far", rec->id);
    assert_int_equal(rec->id_is_integer, i % 3 == 0);
    assert_int_equal(rec->id[0] == 'p', i % 3 != 0);
    if (p->got[i]++)
        fail_msg("job %zu reported twice", i);
    p->records++;
    assert_int_equal(rec->outcome, AR_BATCH_FINISHED);
    assert_non_null(rec->result);
    if (p->kind[i] == PROP_RUN) {
        if (!rec->result->ok)
            fail_msg("job %zu failed: %s", i, rec->result->error.msg);
        p->ran++;
    } else {
        assert_false(rec->result->ok);
        assert_int_equal(rec->result->n_calls, 0);
    }
    /* A few more jobs now, from inside the scheduler's callback; at least one when this
     * was the last record outstanding (nothing else would ask for more). */
    size_t more = prop_below(p, 4);
    if (!more && p->records == p->added)
        more = 1;
    while (more-- && p->added < p->n)
        prop_add(p);
}

static void prop_done(struct ar_batch *b, const struct ar_batch_stats *st, void *arg)
{
    struct prop *p = arg;
    assert_ptr_equal(b, p->b);
    p->done++;
    p->st = *st;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "the batch hung: no record or end for 60 s\n";
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* Ending anyway. */
    }
    _exit(1);
}

/* One trial: n jobs, a run of them among the others, run_per_8 in 8; -j from the seed. */
static void prop_trial(uint64_t seed, size_t n, size_t run_per_8)
{
    struct prop p;
    memset(&p, 0, sizeof(p));
    p.rng = seed ? seed : 1;
    p.n = n;
    p.kind = calloc(n, sizeof(*p.kind));
    p.got = calloc(n, 1);
    assert_non_null(p.kind);
    assert_non_null(p.got);
    size_t want_ran = 0;
    /* The fake's calls in start order; each sleeps 0-19 ms (the last value repeats). */
    size_t cap = n * 4 + 8, len = 0;
    char *sleeps = malloc(cap);
    assert_non_null(sleeps);
    sleeps[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t r = prop_below(&p, 8);
        p.kind[i] = r < run_per_8 ? PROP_RUN : r % 2 ? PROP_NO_TEMPLATE : PROP_BAD_LINE;
        want_ran += p.kind[i] == PROP_RUN;
        len += (size_t)snprintf(sleeps + len, cap - len, "%s%zu", i ? "," : "", prop_below(&p, 20));
    }
    char state_file[300];
    snprintf(state_file, sizeof(state_file), "%s/prop-%016llx.state", tmpdir,
             (unsigned long long)seed);
    setenv("FAKE_CLI_STATE", state_file, 1);
    setenv("FAKE_CLI_SLEEP_MS", sleeps, 1);
    unsetenv("FAKE_CLI_LOG");
    free(sleeps);

    uv_loop_t loop;
    uv_loop_init(&loop);
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    o.jobs = 1 + (unsigned)prop_below(&p, 12);
    o.defaults.provider = "claude";
    o.defaults.cwd = tmpdir;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_batch_start(&loop, &o, prop_record, prop_done, &p, &p.b, &err), 0);
    for (size_t k = 1 + prop_below(&p, n < 8 ? n : n / 4); k-- && p.added < n;)
        prop_add(&p);
    alarm(60);
    uv_run(&loop, UV_RUN_DEFAULT);
    alarm(0);
    if (!p.done)
        fail_msg("seed %016llx: the batch did not end: %zu of %zu jobs added, %zu reported",
                 (unsigned long long)seed, p.added, n, p.records);
    assert_int_equal(p.done, 1);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(p.added, n);
    assert_int_equal(p.records, n);
    for (size_t i = 0; i < n; i++)
        if (p.got[i] != 1)
            fail_msg("seed %016llx: job %zu has %d records", (unsigned long long)seed, i, p.got[i]);
    assert_int_equal(p.ran, want_ran);
    assert_int_equal(p.st.added, n);
    assert_int_equal(p.st.ok, want_ran);
    assert_int_equal(p.st.failed, n - want_ran);
    assert_int_equal(p.st.running, 0);
    unsetenv("FAKE_CLI_STATE");
    unsetenv("FAKE_CLI_SLEEP_MS");
    free(p.kind);
    free(p.got);
}

static void test_batch_reports_every_job_once_in_any_order_and_any_number(void **state)
{
    (void)state;
    const char *env = getenv("AR_TEST_SEED");
    uint64_t seed =
        env && *env ? strtoull(env, NULL, 16) : (uint64_t)time(NULL) ^ (uint64_t)getpid();
    print_message("seed %016llx (AR_TEST_SEED=%016llx repeats it)\n", (unsigned long long)seed,
                  (unsigned long long)seed);
    signal(SIGALRM, on_alarm);
    struct prop g = { .rng = seed ? seed : 1 };
    /* Small batches, mostly of running jobs; then past the id table's first 256 slots and
     * past its second growth (512), mostly of jobs that fail before any process. */
    for (int t = 0; t < 4; t++)
        prop_trial(prop_next(&g), 1 + prop_below(&g, 40), 5);
    prop_trial(prop_next(&g), 257 + prop_below(&g, 100), 1);
    prop_trial(prop_next(&g), 513 + prop_below(&g, 200), 1);
    signal(SIGALRM, SIG_DFL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_batch_runs_lines_and_option_jobs_and_reports_each_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_budget_stops_starting_jobs_and_fails_the_rest,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_resume_skips_done_ids_and_compacts_the_records,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_batch_cancel_ends_running_jobs_and_never_starts_the_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_cancel_from_a_record_callback_stops_the_rest,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_without_jobs_ends_from_the_loop, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_batch_edit_jobs_with_worktrees_do_not_wait, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_batch_reports_every_job_once_in_any_order_and_any_number, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
