/*
 * The supervisor against real processes: the fake CLI (tests/fake) run under
 * every behaviour the issue names. Each loop test ends with
 * ar_loop_destroy() == 0, i.e. uv_loop_close() found no handle left open.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "proc/proc.h"
#include "fixture.h"

#ifndef AR_FAKE_CLI
#error "AR_FAKE_CLI: the path of the fake CLI, set by tests/proc/meson.build"
#endif

#define MIB           ((size_t)1 << 20)
#define AR_MIN_(a, b) ((a) < (b) ? (a) : (b))

static char tmpdir[256];

/* ---- Helpers ------------------------------------------------------------- */

struct rec {
    int done;
    struct ar_child_result res;
    char *tail;
    char *out;
    int64_t pid;
    size_t lines;
    size_t line_bytes;
    size_t max_line;
    int bad_nul;           /* a line without its NUL at line[len] */
    unsigned long next_no; /* flood lines must arrive numbered 0, 1, 2 … */
    int bad_order;
    int check_flood;
    int busy_first_ms; /* sleep in the first on_line call: a reader that is busy */
    const char *final_marker;
    char first[256];
    char last[256];
};

static void on_line(struct ar_child *c, const char *line, size_t len, void *arg)
{
    struct rec *r = arg;
    if (line[len] != '\0' || memchr(line, '\n', len))
        r->bad_nul = 1;
    if (r->lines == 0) {
        snprintf(r->first, sizeof(r->first), "%.*s", (int)AR_MIN_(len, 255), line);
        if (r->busy_first_ms)
            usleep((useconds_t)r->busy_first_ms * 1000);
    }
    snprintf(r->last, sizeof(r->last), "%.*s", (int)AR_MIN_(len, 255), line);
    r->lines++;
    r->line_bytes += len;
    if (len > r->max_line)
        r->max_line = len;
    if (r->check_flood) {
        if (len != 99 || strtoul(line, NULL, 10) != r->next_no)
            r->bad_order = 1;
        r->next_no++;
    }
    if (r->final_marker && strstr(line, r->final_marker))
        ar_child_final_seen(c);
}

static char *dup_n(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static void on_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct rec *r = arg;
    r->done++;
    r->res = *res;
    r->pid = res->pid;
    r->tail = dup_n(res->stderr_tail, res->stderr_tail_len);
    r->out = res->stdout_data ? dup_n(res->stdout_data, res->stdout_len) : NULL;
    r->res.stderr_tail = r->tail;
    r->res.stdout_data = r->out;
}

static void rec_finish(struct rec *r)
{
    free(r->tail);
    free(r->out);
}

static const char *fake_argv[] = { AR_FAKE_CLI, "-p", "--output-format", "stream-json", NULL };

static void opts_init(struct ar_child_opts *o, const char *const *env, struct rec *r)
{
    memset(o, 0, sizeof(*o));
    memset(r, 0, sizeof(*r));
    o->argv = fake_argv;
    o->env = env;
    o->on_line = on_line;
    o->on_done = on_done;
    o->arg = r;
    o->kill_grace_ms = 300;
}

/* Spawns one child on a fresh loop, runs it to its end and checks the loop closes clean. */
static void run_one(struct ar_child_opts *o, struct rec *r)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    assert_non_null(loop);
    struct ar_child *c = NULL;
    int rc = ar_child_spawn(loop, o, &c, &err);
    if (rc)
        fail_msg("spawn: %s", err.msg);
    assert_non_null(c);
    r->pid = ar_child_pid(c);
    assert_true(r->pid > 0);
    assert_int_equal(ar_loop_run(loop), 0);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(r->done, 1);
}

/* A process counts as gone when kill() cannot find it or it is a zombie nobody reaped yet. */
static int pid_gone(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    return rp && (rp[2] == 'Z' || rp[2] == 'X');
}

static void assert_group_gone(pid_t pgid)
{
    /* Same rule as pid_gone(), for every process that still carries the group id. */
    if (kill(-pgid, 0) != 0 && errno == ESRCH)
        return;
    assert_true(pid_gone(pgid));
}

static void assert_pidfile_gone(const char *pidfile, int expect)
{
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    long pid;
    int n = 0;
    while (fscanf(f, "%ld", &pid) == 1) {
        n++;
        if (!pid_gone((pid_t)pid))
            fail_msg("grandchild %ld survived", pid);
    }
    fclose(f);
    assert_int_equal(n, expect);
}

static char *tmp_path(const char *name)
{
    static char paths[8][512];
    static int k;
    char *p = paths[k++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    unlink(p);
    return p;
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* The last JSON record of the fake's log. */
static json_t *last_log(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL, *keep = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        free(keep);
        keep = strdup(line);
    }
    free(line);
    fclose(f);
    assert_non_null(keep);
    json_error_t je;
    json_t *j = json_loads(keep, 0, &je);
    if (!j)
        fail_msg("log line is not JSON: %s", je.text);
    free(keep);
    return j;
}

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/*
 * Peak RSS of this process in KiB: VmHWM, which starts afresh at exec.
 * getrusage()'s ru_maxrss does not: under meson it reports the Python that
 * forked us (~28 MiB) and would hide any growth below that.
 */
static long max_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    if (kib < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kib = ru.ru_maxrss;
    }
    return kib;
}

/* ---- Memory first: these check the peak RSS, which later tests would raise ---- */

static void test_cap_fires_and_memory_stays_bounded(void **state)
{
    long before = max_rss_kib();
    const char *env[] = { "FAKE_CLI_FLOOD_STDOUT=209715200", "FAKE_CLI_FLOOD_STDERR=20971520",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.output_cap = 4 * MIB;
    o.capture_stdout = 1;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_TOOBIG);
    assert_int_equal(r.res.err.code, AR_ETOOBIG);
    assert_true(r.res.stdout_bytes <= 4 * MIB);
    assert_true(r.res.stdout_len <= 4 * MIB);
    assert_int_equal(r.bad_nul, 0);
    assert_group_gone((pid_t)r.pid);
    long grew = max_rss_kib() - before;
    if (grew > 24 * 1024)
        fail_msg("peak RSS grew by %ld KiB for a 4 MiB cap", grew);
    rec_finish(&r);
}

/* stderr is kept only as a bounded tail: a flood there costs no memory and
 * must not end a good run as too big. */
static void test_stderr_flood_does_not_count_against_the_cap(void **state)
{
    long before = max_rss_kib();
    const char *env[] = { "FAKE_CLI_FLOOD_STDERR=20971520", "FAKE_CLI_STDOUT_TEXT=answer\\n",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.output_cap = 4 * MIB;
    o.timeout_ms = 20000;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.res.err.code, 0);
    assert_int_equal(r.res.stderr_bytes, 20971520);
    assert_int_equal(r.res.stdout_bytes, 7);
    assert_int_equal(r.res.stderr_tail_len, AR_CHILD_DEFAULT_STDERR_TAIL);
    long grew = max_rss_kib() - before;
    if (grew > 16 * 1024)
        fail_msg("peak RSS grew by %ld KiB for a 20 MiB stderr flood", grew);
    rec_finish(&r);
}

static void test_line_longer_than_cap_is_too_big(void **state)
{
    long before = max_rss_kib();
    const char *env[] = { "FAKE_CLI_LONG_LINE=104857600", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.output_cap = 2 * MIB;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_TOOBIG);
    assert_int_equal(r.lines, 0);
    long grew = max_rss_kib() - before;
    if (grew > 16 * 1024)
        fail_msg("peak RSS grew by %ld KiB for a 2 MiB cap", grew);
    rec_finish(&r);
}

/* The cap is a limit the output may reach: exactly cap bytes is a normal exit, one more is not. */
static void test_output_of_exactly_the_cap_is_not_too_big(void **state)
{
    static const char *at[] = { "FAKE_CLI_FLOOD_STDOUT=65536", NULL };
    static const char *past[] = { "FAKE_CLI_FLOOD_STDOUT=65537", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, at, &r);
    o.output_cap = 65536;
    o.capture_stdout = 1;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.res.err.code, 0);
    assert_int_equal(r.res.status, 0);
    assert_int_equal(r.res.stdout_bytes, 65536);
    assert_int_equal(r.res.stdout_len, 65536);
    rec_finish(&r);

    opts_init(&o, past, &r);
    o.output_cap = 65536;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_TOOBIG);
    assert_int_equal(r.res.err.code, AR_ETOOBIG);
    rec_finish(&r);
}

/*
 * A CLI that writes far past the cap and exits before the next poll: its exit is
 * seen first, then the final read finds the excess. That is too big, not a normal
 * exit with the output silently cut at the cap. Repeated, as a poll may also win.
 */
static void test_output_past_the_cap_after_exit_is_still_too_big(void **state)
{
    static const char *env[] = { "FAKE_CLI_FLOOD_STDOUT=1048576", NULL };
    for (int i = 0; i < 5; i++) {
        struct ar_child_opts o;
        struct rec r;
        opts_init(&o, env, &r);
        o.output_cap = 64 * 1024;
        o.capture_stdout = 1;
        run_one(&o, &r);
        assert_int_equal(r.res.end, AR_CHILD_TOOBIG);
        assert_int_equal(r.res.err.code, AR_ETOOBIG);
        assert_true(r.res.stdout_len <= 64 * 1024);
        rec_finish(&r);
    }
}

/* ---- Exit ----------------------------------------------------------------- */

static void test_exit_codes(void **state)
{
    static const char *codes[] = { "0", "1", "3", "42", "255" };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        char var[64];
        snprintf(var, sizeof(var), "FAKE_CLI_EXIT=%s", codes[i]);
        const char *env[] = { var, NULL };
        struct ar_child_opts o;
        struct rec r;
        opts_init(&o, env, &r);
        run_one(&o, &r);
        assert_int_equal(r.res.status, atoi(codes[i]));
        assert_int_equal(r.res.term_signal, 0);
        assert_int_equal(r.res.end, AR_CHILD_EXITED);
        assert_int_equal(r.res.err.code, 0);
        assert_int_equal(r.res.pid, r.pid);
        rec_finish(&r);
    }
}

static void test_death_by_signal_is_128_plus_n(void **state)
{
    static const int sigs[] = { SIGKILL, SIGTERM, SIGSEGV, SIGABRT };
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        char var[64];
        snprintf(var, sizeof(var), "FAKE_CLI_SIGNAL=%d", sigs[i]);
        const char *env[] = { var, NULL };
        struct ar_child_opts o;
        struct rec r;
        opts_init(&o, env, &r);
        run_one(&o, &r);
        assert_int_equal(r.res.status, 128 + sigs[i]);
        assert_int_equal(r.res.term_signal, sigs[i]);
        assert_int_equal(r.res.end, AR_CHILD_EXITED);
        rec_finish(&r);
    }
}

/* ---- Output ------------------------------------------------------------- */

static void test_4mib_and_exit_at_once_while_reader_busy_loses_nothing(void **state)
{
    /* 41,943 numbered lines of 100 bytes; the reader sleeps on the first one while the child
     * writes everything and exits: through a pipe this is where claude loses its tail. */
    const char *env[] = { "FAKE_CLI_FLOOD_STDOUT=4194300", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.check_flood = 1;
    r.busy_first_ms = 300;
    o.capture_stdout = 1;
    run_one(&o, &r);
    assert_int_equal(r.res.status, 0);
    assert_int_equal(r.res.stdout_bytes, 4194300);
    assert_int_equal(r.res.stdout_len, 4194300);
    assert_int_equal(r.lines, 41943);
    assert_int_equal(r.bad_order, 0);
    assert_int_equal(r.bad_nul, 0);
    rec_finish(&r);
}

static void test_stdout_and_stderr_floods_at_once_without_deadlock(void **state)
{
    const char *env[] = { "FAKE_CLI_FLOOD_STDOUT=30000000", "FAKE_CLI_FLOOD_STDERR=30000000",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.check_flood = 1;
    o.timeout_ms = 20000;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.res.stdout_bytes, 30000000);
    assert_int_equal(r.res.stderr_bytes, 30000000);
    assert_int_equal(r.lines, 300000);
    assert_int_equal(r.bad_order, 0);
    /* The tail is the last 64 KiB, ending with the last numbered line. */
    assert_int_equal(r.res.stderr_tail_len, AR_CHILD_DEFAULT_STDERR_TAIL);
    const char *last = r.tail + r.res.stderr_tail_len - 100;
    assert_int_equal(strtoul(last, NULL, 10), 299999);
    rec_finish(&r);
}

static void test_stderr_tail_keeps_the_last_bytes(void **state)
{
    const char *env[] = { "FAKE_CLI_FLOOD_STDERR=1000000", "FAKE_CLI_EXIT=1", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.stderr_tail = 250;
    run_one(&o, &r);
    assert_int_equal(r.res.status, 1);
    assert_int_equal(r.res.stderr_bytes, 1000000);
    assert_int_equal(r.res.stderr_tail_len, 250);
    /* 1,000,000 bytes of 100-byte lines: the tail ends exactly with line 9999. */
    assert_memory_equal(r.tail + 150, "000009999 ", 10);
    assert_int_equal(r.tail[249], '\n');
    rec_finish(&r);
}

static void test_10mib_line_arrives_whole(void **state)
{
    const char *env[] = { "FAKE_CLI_LONG_LINE=10485760", "FAKE_CLI_STDOUT_TEXT=after\\n", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.lines, 2);
    assert_int_equal(r.max_line, 10485760);
    /* The fake writes its text before the long line. */
    assert_string_equal(r.first, "after");
    assert_memory_equal(r.last, "abcdefghijklmnopqrstuvwxyzabc", 29);
    assert_int_equal(r.bad_nul, 0);
    rec_finish(&r);
}

static void test_final_unterminated_line_is_delivered(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT=one\\n\\ntwo\\nthree", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.capture_stdout = 1;
    run_one(&o, &r);
    assert_int_equal(r.lines, 4); /* "one", "", "two", "three" */
    assert_string_equal(r.first, "one");
    assert_string_equal(r.last, "three");
    assert_string_equal(r.out, "one\n\ntwo\nthree");
    rec_finish(&r);
}

static void test_child_that_closes_stdout_early_still_completes_at_exit(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT=early\\n", "FAKE_CLI_CLOSE_STDOUT=1",
                          "FAKE_CLI_SLEEP_MS=300", "FAKE_CLI_EXIT=7", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    run_one(&o, &r);
    assert_int_equal(r.res.status, 7);
    assert_true(r.res.duration_ms >= 250);
    assert_string_equal(r.first, "early");
    rec_finish(&r);
}

/* ---- stdin ---------------------------------------------------------------- */

static void test_10mib_stdin_delivered_whole(void **state)
{
    size_t n = 10 * MIB;
    char *data = malloc(n);
    assert_non_null(data);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        data[i] = (char)(x >> 16);
    }
    char logvar[600];
    const char *log = tmp_path("stdin.log");
    snprintf(logvar, sizeof(logvar), "FAKE_CLI_LOG=%s", log);
    const char *env[] = { logvar, "FAKE_CLI_LOG_STDIN_MAX=16", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.stdin_data = data;
    o.stdin_len = n;
    run_one(&o, &r);
    assert_int_equal(r.res.status, 0);
    json_t *j = last_log(log);
    assert_int_equal(json_integer_value(json_object_get(j, "stdin_bytes")), (json_int_t)n);
    char hex[32];
    snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)fnv1a(data, n));
    assert_string_equal(json_string_value(json_object_get(j, "stdin_fnv1a")), hex);
    json_decref(j);
    free(data);
    rec_finish(&r);
}

static void test_child_that_never_reads_stdin_does_not_hurt_us(void **state)
{
    /* Our write gets EPIPE when it exits: tolerated, and SIGPIPE does not kill the test. */
    size_t n = 4 * MIB;
    char *data = calloc(1, n);
    assert_non_null(data);
    const char *env[] = { "FAKE_CLI_READ_STDIN=0", "FAKE_CLI_EXIT=5", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.stdin_data = data;
    o.stdin_len = n;
    run_one(&o, &r);
    assert_int_equal(r.res.status, 5);
    free(data);
    rec_finish(&r);
}

static void test_empty_stdin_is_closed_not_left_open(void **state)
{
    /* Reads stdin to EOF (like codex): with nothing to send it must still see EOF at once. */
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT=ok\\n", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.timeout_ms = 5000;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_string_equal(r.first, "ok");
    rec_finish(&r);
}

/* ---- argv, PATH, env, cwd --------------------------------------------------- */

static void test_path_lookup_env_and_cwd(void **state)
{
    char logvar[600], pathvar[4096];
    const char *log = tmp_path("argv.log");
    snprintf(logvar, sizeof(logvar), "FAKE_CLI_LOG=%s", log);
    snprintf(pathvar, sizeof(pathvar), "PATH=%s:%s", AR_FAKE_BIN_DIR, getenv("PATH"));
    setenv("AR_TEST_REMOVED", "should not be seen", 1);
    setenv("AR_TEST_KEPT", "kept", 1);
    const char *env[] = { logvar,
                          pathvar,
                          "FAKE_CLI_LOG_ENV=AR_TEST_ADDED,AR_TEST_REMOVED,AR_TEST_KEPT",
                          "AR_TEST_ADDED=added",
                          "AR_TEST_REMOVED",
                          "FAKE_CLI_WRITE_FILES=out/made.txt=made by fake",
                          NULL };
    const char *argv[] = { "claude", "-p", "two words", NULL };
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/cwd", tmpdir);
    mkdir(dir, 0700);
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.argv = argv;
    o.cwd = dir;
    o.stdin_data = "the prompt";
    o.stdin_len = 10;
    run_one(&o, &r);
    assert_int_equal(r.res.status, 0);
    json_t *j = last_log(log);
    assert_string_equal(json_string_value(json_object_get(j, "argv0")), "claude");
    json_t *av = json_object_get(j, "argv");
    assert_int_equal(json_array_size(av), 3);
    assert_string_equal(json_string_value(json_array_get(av, 2)), "two words");
    json_t *env_j = json_object_get(j, "env");
    assert_string_equal(json_string_value(json_object_get(env_j, "AR_TEST_ADDED")), "added");
    assert_true(json_is_null(json_object_get(env_j, "AR_TEST_REMOVED")));
    assert_string_equal(json_string_value(json_object_get(env_j, "AR_TEST_KEPT")), "kept");
    assert_string_equal(json_string_value(json_object_get(j, "stdin")), "the prompt");
    char real[512];
    assert_non_null(realpath(dir, real));
    assert_string_equal(json_string_value(json_object_get(j, "cwd")), real);
    /* Its own session and group: it leads the group. */
    assert_int_equal(json_integer_value(json_object_get(j, "pgid")),
                     json_integer_value(json_object_get(j, "pid")));
    json_decref(j);
    char made[600];
    snprintf(made, sizeof(made), "%s/out/made.txt", dir);
    struct stat st;
    assert_int_equal(stat(made, &st), 0);
    assert_int_equal(st.st_size, 12);
    unsetenv("AR_TEST_REMOVED");
    unsetenv("AR_TEST_KEPT");
    rec_finish(&r);
}

/* A child starts with every signal at its default and none blocked, whatever its parent
 * ignores or blocks: a signal ignored before the first spawn (SIGPROF, in main()) and
 * commonly ignored ones set since (SIGPIPE, SIGUSR2), read in the child's own status. */
static void test_the_child_ignores_and_blocks_no_signal(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR2, SIG_IGN);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &old);
    const char *argv[] = { "/bin/sh", "-c", "exec grep -E '^Sig(Blk|Ign):' /proc/self/status",
                           NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, NULL, &r);
    o.argv = argv;
    run_one(&o, &r);
    sigprocmask(SIG_SETMASK, &old, NULL);
    signal(SIGUSR2, SIG_DFL);
    assert_int_equal(r.res.status, 0);
    assert_int_equal(r.lines, 2);
    /* The standard signals, 1 to 31 (the C library keeps a few real-time ones of its own,
     * which a runner above us may have set, and no program can reset). */
    unsigned long long blk = 0, ign = 0;
    assert_int_equal(sscanf(r.first, "SigBlk: %llx", &blk), 1);
    assert_int_equal(sscanf(r.last, "SigIgn: %llx", &ign), 1);
    assert_int_equal(blk & 0x7fffffffULL, 0);
    assert_int_equal(ign & 0x7fffffffULL, 0);
    rec_finish(&r);
}

static void test_missing_program_is_a_clear_error(void **state)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    assert_non_null(loop);
    struct rec r;
    struct ar_child_opts o;
    opts_init(&o, NULL, &r);

    const char *a1[] = { "no-such-cli-3f9a", "-p", NULL };
    o.argv = a1;
    struct ar_child *c = (struct ar_child *)&r; /* must be reset to NULL */
    assert_int_equal(ar_child_spawn(loop, &o, &c, &err), AR_ENOTFOUND);
    assert_null(c);
    assert_string_equal(err.msg, "cannot run 'no-such-cli-3f9a': not found on PATH");

    const char *a2[] = { "/nonexistent/dir/claude", NULL };
    o.argv = a2;
    assert_int_equal(ar_child_spawn(loop, &o, NULL, &err), AR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "'/nonexistent/dir/claude'"));

    /* A file that exists but may not be executed. */
    const char *noexec = tmp_path("not-executable");
    write_file(noexec, "#!/bin/sh\n", 10);
    chmod(noexec, 0644);
    const char *a3[] = { noexec, NULL };
    o.argv = a3;
    assert_int_equal(ar_child_spawn(loop, &o, NULL, &err), AR_ESPAWN);
    assert_non_null(strstr(err.msg, "Permission denied"));

    /* The same name on PATH only as a non-executable file: EACCES, like execvp. */
    char pathvar[600];
    snprintf(pathvar, sizeof(pathvar), "PATH=%s", tmpdir);
    const char *env[] = { pathvar, NULL };
    const char *a4[] = { "not-executable", NULL };
    o.argv = a4;
    o.env = env;
    assert_int_equal(ar_child_spawn(loop, &o, NULL, &err), AR_ESPAWN);
    assert_string_equal(err.msg, "cannot run 'not-executable': Permission denied");

    o.env = NULL;
    o.argv = fake_argv;
    o.cwd = "/nonexistent/cwd";
    assert_int_equal(ar_child_spawn(loop, &o, NULL, &err), AR_ESPAWN);

    assert_int_equal(ar_loop_run(loop), 0);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(r.done, 0);
}

/* ---- Clocks and the group ------------------------------------------------- */

static void test_wall_timeout_ends_the_group_with_a_term_ignoring_grandchild(void **state)
{
    char pidvar[600];
    const char *pidfile = tmp_path("wall.pids");
    snprintf(pidvar, sizeof(pidvar), "FAKE_CLI_PIDFILE=%s", pidfile);
    const char *env[] = { pidvar,
                          "FAKE_CLI_GRANDCHILD=ignore-term",
                          "FAKE_CLI_GRANDCHILDREN=2",
                          "FAKE_CLI_IGNORE_TERM=1",
                          "FAKE_CLI_STDOUT_TEXT=started\\n",
                          "FAKE_CLI_HANG=1",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.timeout_ms = 300;
    o.kill_grace_ms = 200;
    uint64_t t0 = ar_now_ms();
    run_one(&o, &r);
    uint64_t took = ar_now_ms() - t0;
    assert_int_equal(r.res.end, AR_CHILD_TIMEOUT);
    assert_int_equal(r.res.err.code, AR_ETIMEOUT);
    assert_int_equal(r.res.status, 128 + SIGKILL); /* SIGTERM was ignored */
    assert_string_equal(r.first, "started");
    assert_true(took >= 480 && took < 3000);
    assert_group_gone((pid_t)r.pid);
    assert_pidfile_gone(pidfile, 2);
    rec_finish(&r);
}

static void test_idle_timeout_ends_the_group(void **state)
{
    char pidvar[600];
    const char *pidfile = tmp_path("idle.pids");
    snprintf(pidvar, sizeof(pidvar), "FAKE_CLI_PIDFILE=%s", pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=keep-pipes", "FAKE_CLI_STDOUT_TEXT=hi\\n",
                          "FAKE_CLI_HANG=1", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.idle_timeout_ms = 300;
    o.timeout_ms = 10000;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_IDLE);
    assert_int_equal(r.res.err.code, AR_EIDLE);
    assert_int_equal(r.res.status, 128 + SIGTERM);
    assert_true(r.res.duration_ms >= 290 && r.res.duration_ms < 2000);
    assert_group_gone((pid_t)r.pid);
    assert_pidfile_gone(pidfile, 1);
    rec_finish(&r);
}

static void test_output_keeps_the_idle_timeout_away(void **state)
{
    /* Eight lines 120 ms apart: 840 ms in all, never 300 ms silent. */
    const char *fixture = tmp_path("slow.jsonl");
    const char *text = "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n{\"n\":5}\n{\"n\":6}\n"
                       "{\"n\":7}\n{\"n\":8}\n";
    write_file(fixture, text, strlen(text));
    char fxvar[600];
    snprintf(fxvar, sizeof(fxvar), "FAKE_CLI_FIXTURE=%s", fixture);
    const char *env[] = { fxvar, "FAKE_CLI_DELAY_MS=120", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.idle_timeout_ms = 300;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.lines, 8);
    assert_true(r.res.duration_ms >= 800);
    rec_finish(&r);
}

static void test_stderr_counts_as_activity(void **state)
{
    /* Silent on stdout, but a stderr line every 100 ms for 500 ms. */
    const char *fixture = tmp_path("progress.txt");
    const char *text = "a\nb\nc\nd\ne\nf\n";
    write_file(fixture, text, strlen(text));
    char fxvar[600];
    snprintf(fxvar, sizeof(fxvar), "FAKE_CLI_STDERR_FIXTURE=%s", fixture);
    const char *env[] = { fxvar, "FAKE_CLI_DELAY_MS=100", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.idle_timeout_ms = 250;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_true(r.res.duration_ms >= 450);
    assert_string_equal(r.tail, text);
    rec_finish(&r);
}

static void test_final_event_grace_ends_a_lingering_child_as_success(void **state)
{
    const char *env[] = {
        "FAKE_CLI_STDOUT_TEXT={\"type\":\"assistant\"}\\n{\"type\":\"result\"}\\n",
        "FAKE_CLI_HANG=1", NULL
    };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.final_marker = "\"result\"";
    o.final_grace_ms = 200;
    o.timeout_ms = 10000;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_FINAL_GRACE);
    assert_int_equal(r.res.err.code, 0);
    assert_int_equal(r.lines, 2);
    assert_true(r.res.duration_ms >= 190 && r.res.duration_ms < 2000);
    assert_group_gone((pid_t)r.pid);
    rec_finish(&r);
}

/* The answer is complete once the final event came: a wall or idle deadline
 * that falls inside the grace must not turn it into a timeout. */
static void test_deadline_inside_the_final_grace_is_still_a_success(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT={\"type\":\"result\"}\\n", "FAKE_CLI_HANG=1",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.final_marker = "result";
    o.final_grace_ms = 3000;
    o.timeout_ms = 300;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_FINAL_GRACE);
    assert_int_equal(r.res.err.code, 0);
    assert_true(r.res.duration_ms < 2000);
    assert_group_gone((pid_t)r.pid);
    rec_finish(&r);
}

static void test_final_event_grace_zero_ends_at_once(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT={\"type\":\"result\"}\\n", "FAKE_CLI_HANG=1",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.final_marker = "result";
    o.timeout_ms = 10000;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_FINAL_GRACE);
    assert_true(r.res.duration_ms < 1000);
    rec_finish(&r);
}

static void test_exit_within_final_grace_is_a_plain_exit(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT={\"type\":\"result\"}\\n", "FAKE_CLI_SLEEP_MS=50",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.final_marker = "result";
    o.final_grace_ms = 5000;
    run_one(&o, &r);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.res.status, 0);
    rec_finish(&r);
}

static void test_leftovers_of_an_exited_leader_are_ended(void **state)
{
    /* The leader exits 0 at once; a grandchild holding stderr and ignoring SIGTERM remains.
     * done must come after it was SIGKILLed, and the run still counts as exited. */
    char pidvar[600];
    const char *pidfile = tmp_path("left.pids");
    snprintf(pidvar, sizeof(pidvar), "FAKE_CLI_PIDFILE=%s", pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=ignore-term", "FAKE_CLI_STDOUT_TEXT=bye\\n",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.kill_grace_ms = 200;
    uint64_t t0 = ar_now_ms();
    run_one(&o, &r);
    uint64_t took = ar_now_ms() - t0;
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.res.status, 0);
    assert_int_equal(r.res.err.code, 0);
    assert_string_equal(r.first, "bye");
    assert_true(took >= 190 && took < 3000);
    assert_group_gone((pid_t)r.pid);
    assert_pidfile_gone(pidfile, 1);
    rec_finish(&r);
}

static void test_leftovers_holding_pipes_die_on_term(void **state)
{
    char pidvar[600];
    const char *pidfile = tmp_path("keep.pids");
    snprintf(pidvar, sizeof(pidvar), "FAKE_CLI_PIDFILE=%s", pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=keep-pipes", "FAKE_CLI_GRANDCHILDREN=3",
                          NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    o.kill_grace_ms = 5000;
    uint64_t t0 = ar_now_ms();
    run_one(&o, &r);
    /* SIGTERM was enough: no need to wait for the 5 s grace. */
    assert_true(ar_now_ms() - t0 < 2000);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_pidfile_gone(pidfile, 3);
    rec_finish(&r);
}

static void test_kill_cancels_the_child(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT=x\\n", "FAKE_CLI_HANG=1", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.final_marker = NULL;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    struct ar_child *c;
    assert_int_equal(ar_child_spawn(loop, &o, &c, &err), 0);
    ar_child_kill(c);
    ar_child_kill(c); /* twice is harmless */
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(r.done, 1);
    assert_int_equal(r.res.end, AR_CHILD_CANCELLED);
    assert_int_equal(r.res.err.code, AR_EINTERRUPTED);
    rec_finish(&r);
}

/* After a cancel no model call may start, but bookkeeping (git status) still runs. */
static void test_after_cancel_only_bookkeeping_spawns(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT=status\\n", NULL };
    struct ar_child_opts o;
    struct rec r;
    opts_init(&o, env, &r);
    r.final_marker = NULL;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    ar_loop_cancel_all(loop);
    assert_int_equal(ar_child_spawn(loop, &o, NULL, &err), AR_EINTERRUPTED);
    o.after_cancel = 1;
    assert_int_equal(ar_child_spawn(loop, &o, NULL, &err), 0);
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(r.done, 1);
    assert_int_equal(r.res.end, AR_CHILD_EXITED);
    assert_int_equal(r.res.status, 0);
    rec_finish(&r);
}

/* A child started with finish_on_cancel (a git worktree being made) outlives the first
 * cancel and ends on its own; the second cancel ends it too. */
static void test_finish_on_cancel_outlives_the_first_cancel(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT=made\\n", "FAKE_CLI_SLEEP_MS=300", NULL };
    const char *hang[] = { "FAKE_CLI_HANG=1", NULL };
    struct ar_child_opts o1, o2, o3;
    struct rec r1, r2, r3;
    opts_init(&o1, env, &r1);
    opts_init(&o2, env, &r2);
    r1.final_marker = r2.final_marker = NULL;
    o1.finish_on_cancel = o2.finish_on_cancel = 1;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    assert_int_equal(ar_child_spawn(loop, &o1, NULL, &err), 0);
    ar_loop_cancel_all(loop);
    /* Like after_cancel, it may still start once the loop is cancelled. */
    assert_int_equal(ar_child_spawn(loop, &o2, NULL, &err), 0);
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    for (struct rec *r = &r1; r; r = r == &r1 ? &r2 : NULL) {
        assert_int_equal(r->done, 1);
        assert_int_equal(r->res.end, AR_CHILD_EXITED);
        assert_int_equal(r->res.status, 0);
        assert_string_equal(r->out ? r->out : r->first, "made");
        rec_finish(r);
    }

    opts_init(&o3, hang, &r3);
    r3.final_marker = NULL;
    o3.finish_on_cancel = 1;
    loop = ar_loop_create(&err);
    assert_int_equal(ar_child_spawn(loop, &o3, NULL, &err), 0);
    ar_loop_cancel_all(loop);
    ar_loop_cancel_all(loop);
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(r3.done, 1);
    assert_int_equal(r3.res.end, AR_CHILD_CANCELLED);
    rec_finish(&r3);
}

/* ---- The sync runner ------------------------------------------------------ */

static void test_sync_runner_captures_stdout(void **state)
{
    const char *env[] = { "FAKE_CLI_STDOUT_TEXT=line 1\\nline 2\\n", "FAKE_CLI_STDERR_TEXT=warn",
                          "FAKE_CLI_EXIT=2", NULL };
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = fake_argv;
    o.env = env;
    o.capture_stdout = 1;
    struct ar_child_sync s;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_child_run_sync(&o, &s, &err), 0);
    assert_int_equal(s.res.status, 2);
    assert_string_equal(s.stdout_data, "line 1\nline 2\n");
    assert_int_equal(s.res.stdout_len, 14);
    assert_string_equal(s.stderr_tail, "warn");
    ar_child_sync_finish(&s);

    const char *hang[] = { "FAKE_CLI_HANG=1", NULL };
    o.env = hang;
    o.timeout_ms = 200;
    o.kill_grace_ms = 200;
    /* It ran: 0, and the result says a limit ended it. */
    assert_int_equal(ar_child_run_sync(&o, &s, &err), 0);
    assert_int_equal(s.res.end, AR_CHILD_TIMEOUT);
    assert_int_equal(s.res.err.code, AR_ETIMEOUT);
    assert_non_null(s.stderr_tail);
    ar_child_sync_finish(&s);

    const char *missing[] = { "no-such-cli-3f9a", NULL };
    o.argv = missing;
    assert_int_equal(ar_child_run_sync(&o, &s, &err), AR_ENOTFOUND);
    ar_child_sync_finish(&s);
}

static void test_fake_picks_the_nth_fixture_per_call(void **state)
{
    /* The pipeline's main call then repair call: different fixtures and exits per call. */
    const char *a = tmp_path("main.jsonl"), *b = tmp_path("repair.jsonl");
    write_file(a, "main\n", 5);
    write_file(b, "repair\n", 7);
    char statevar[600], fxvar[1200];
    const char *calls = tmp_path("calls");
    snprintf(statevar, sizeof(statevar), "FAKE_CLI_STATE=%s", calls);
    snprintf(fxvar, sizeof(fxvar), "FAKE_CLI_FIXTURE=%s,%s", a, b);
    const char *env[] = { statevar, fxvar, "FAKE_CLI_EXIT=3,4", "FAKE_CLI_STDERR_TEXT_1=only 1",
                          NULL };
    static const char *want_out[] = { "main\n", "repair\n", "repair\n" };
    static const int want_status[] = { 3, 4, 4 };
    static const char *want_err[] = { "", "only 1", "" };
    for (int i = 0; i < 3; i++) {
        struct ar_child_opts o = AR_CHILD_OPTS_INIT;
        o.argv = fake_argv;
        o.env = env;
        o.capture_stdout = 1;
        struct ar_child_sync s;
        assert_int_equal(ar_child_run_sync(&o, &s, NULL), 0);
        assert_string_equal(s.stdout_data, want_out[i]);
        assert_int_equal(s.res.status, want_status[i]);
        assert_string_equal(s.stderr_tail, want_err[i]);
        ar_child_sync_finish(&s);
    }
    FILE *f = fopen(calls, "r");
    assert_non_null(f);
    int n = 0;
    assert_int_equal(fscanf(f, "%d", &n), 1);
    fclose(f);
    assert_int_equal(n, 3);
}

/* ---- Signals ---------------------------------------------------------------- */

struct sig_test {
    struct ar_ticker *ticker;
    int raise_sig;
    int got_sig;
    int calls;
    int ticks;
    int done;
    struct rec recs[3];
    char pidfiles[3][600];
};

static void sig_fn(int signum, void *arg)
{
    struct sig_test *t = arg;
    t->got_sig = signum;
    t->calls++;
}

static void sig_tick(void *arg)
{
    struct sig_test *t = arg;
    if (++t->ticks == 3) {
        raise(t->raise_sig);
        ar_ticker_stop(t->ticker);
        t->ticker = NULL;
    }
}

static struct sig_test *sig_current;
static struct ar_loop *sig_loop;

static void sig_job_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    on_done(c, res, arg);
    sig_current->done++;
}

static void sig_job_start(struct rec *r)
{
    int i = (int)(r - sig_current->recs);
    static char pidvars[3][700];
    snprintf(pidvars[i], sizeof(pidvars[i]), "FAKE_CLI_PIDFILE=%s", sig_current->pidfiles[i]);
    const char *env[] = { pidvars[i], "FAKE_CLI_GRANDCHILD=ignore-term", "FAKE_CLI_HANG=1", NULL };
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = fake_argv;
    o.env = env;
    o.kill_grace_ms = 200;
    o.timeout_ms = 20000;
    o.on_done = sig_job_done;
    o.arg = r;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_child_spawn(sig_loop, &o, NULL, &err), 0);
}

static void run_signal(int signum)
{
    struct sig_test *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    sig_current = t;
    t->raise_sig = signum;
    struct ar_error err = AR_ERROR_INIT;
    sig_loop = ar_loop_create(&err);
    assert_int_equal(ar_loop_watch_signals(sig_loop, sig_fn, t, &err), 0);
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof(name), "sig%d-%d.pids", signum, i);
        snprintf(t->pidfiles[i], sizeof(t->pidfiles[i]), "%s", tmp_path(name));
        sig_job_start(&t->recs[i]);
    }
    t->ticker = ar_ticker_start(sig_loop, 100, sig_tick, t);
    ar_loop_run(sig_loop);
    assert_int_equal(t->calls, 1);
    assert_int_equal(t->got_sig, signum);
    assert_int_equal(t->done, 3);
    assert_int_equal(ar_loop_cancelled(sig_loop), 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(t->recs[i].res.end, AR_CHILD_CANCELLED);
        assert_int_equal(t->recs[i].res.err.code, AR_EINTERRUPTED);
        assert_group_gone((pid_t)t->recs[i].pid);
        assert_pidfile_gone(t->pidfiles[i], 1);
        rec_finish(&t->recs[i]);
    }
    /* After the signal nothing new may start on this loop. */
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = fake_argv;
    o.on_done = on_done;
    struct rec r;
    memset(&r, 0, sizeof(r));
    o.arg = &r;
    assert_int_equal(ar_child_spawn(sig_loop, &o, NULL, &err), AR_EINTERRUPTED);
    assert_int_equal(ar_loop_destroy(sig_loop), 0);
    /* The watchers are gone: the default disposition is back. */
    struct sigaction sa;
    sigaction(signum, NULL, &sa);
    assert_true(sa.sa_handler == SIG_DFL);
    free(t);
}

static void test_sigint_ends_every_group_and_calls_back(void **state)
{
    run_signal(SIGINT);
}

static void test_sigterm_ends_every_group_and_calls_back(void **state)
{
    run_signal(SIGTERM);
}

static void test_sighup_ends_every_group_and_calls_back(void **state)
{
    run_signal(SIGHUP);
}

/* ---- Waits (a rate limit's backoff) ------------------------------------------------- */

struct wait_test {
    int fired, cancelled;
    uint64_t at_ms;
    struct ar_wait *w;
};

static void on_wait(void *arg, int cancelled)
{
    struct wait_test *t = arg;
    t->fired++;
    t->cancelled = cancelled;
    t->at_ms = ar_now_ms();
}

static struct ar_loop *wait_loop;

static void raise_sigint(void *arg)
{
    raise(SIGINT);
}

static void test_wait_runs_after_its_time_and_keeps_the_loop_alive(void **state)
{
    struct ar_error err = AR_ERROR_INIT;
    /* Before the loop: its timers count from the loop's clock, read when it is created. */
    uint64_t t0 = ar_now_ms();
    struct ar_loop *loop = ar_loop_create(&err);
    struct wait_test t = { 0 };
    assert_int_equal(ar_wait_start(loop, 300, on_wait, &t, &t.w), 0);
    ar_loop_run(loop);
    assert_int_equal(t.fired, 1);
    assert_int_equal(t.cancelled, 0);
    assert_true(t.at_ms - t0 >= 300);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

/* A Ctrl-C during a long wait ends it at once, reported as cancelled, and a wait
 * started after the signal does not wait at all. */
static void test_sigint_ends_a_wait_at_once(void **state)
{
    struct ar_error err = AR_ERROR_INIT;
    wait_loop = ar_loop_create(&err);
    assert_int_equal(ar_loop_watch_signals(wait_loop, NULL, NULL, &err), 0);
    struct wait_test t = { 0 }, late = { 0 };
    uint64_t t0 = ar_now_ms();
    assert_int_equal(ar_wait_start(wait_loop, 60000, on_wait, &t, &t.w), 0);
    assert_int_equal(ar_loop_defer(wait_loop, raise_sigint, NULL), 0);
    ar_loop_run(wait_loop);
    assert_int_equal(t.fired, 1);
    assert_int_equal(t.cancelled, 1);
    assert_true(t.at_ms - t0 < 2000);
    uint64_t t1 = ar_now_ms();
    assert_int_equal(ar_wait_start(wait_loop, 60000, on_wait, &late, NULL), 0);
    ar_loop_run(wait_loop);
    assert_int_equal(late.fired, 1);
    assert_int_equal(late.cancelled, 1);
    assert_true(late.at_ms - t1 < 2000);
    assert_int_equal(ar_loop_destroy(wait_loop), 0);
}

struct kick_test {
    struct ar_kick *k;
    int runs;
    int again; /* kick once more from the callback */
};

static void on_kick_test(void *arg)
{
    struct kick_test *t = arg;
    t->runs++;
    if (t->again-- > 0)
        ar_kick(t->k);
}

/* Kicks before the loop turns fold into one run; a kick from the callback runs once more;
 * a destroyed kick never runs, and the loop closes clean. */
static void test_kicks_fold_and_a_destroyed_kick_never_runs(void **state)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    struct kick_test t = { 0 }, dropped = { 0 };
    t.k = ar_kick_create(loop, on_kick_test, &t);
    dropped.k = ar_kick_create(loop, on_kick_test, &dropped);
    assert_non_null(t.k);
    assert_non_null(dropped.k);
    ar_kick(t.k);
    ar_kick(t.k);
    ar_kick(t.k);
    t.again = 1;
    ar_kick(dropped.k);
    ar_kick_destroy(dropped.k);
    ar_loop_run(loop);
    assert_int_equal(t.runs, 2);
    assert_int_equal(dropped.runs, 0);
    ar_kick_destroy(t.k);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

static void test_wait_cancel_reports_once(void **state)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    struct wait_test a = { 0 }, b = { 0 };
    assert_int_equal(ar_wait_start(loop, 60000, on_wait, &a, &a.w), 0);
    assert_int_equal(ar_wait_start(loop, 50, on_wait, &b, &b.w), 0);
    ar_wait_cancel(a.w);
    ar_wait_cancel(a.w);          /* twice: still one report */
    assert_int_equal(a.fired, 0); /* never from inside the call */
    ar_loop_run(loop);
    assert_int_equal(a.fired, 1);
    assert_int_equal(a.cancelled, 1);
    assert_int_equal(b.fired, 1);
    assert_int_equal(b.cancelled, 0);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

/* ---- Setup ---------------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    ar_test_env_scrub();
    return ar_test_tmpdir_make(tmpdir, sizeof(tmpdir), "ar-proc-test");
}

static int teardown(void **state)
{
    (void)state;
    return ar_test_tmpdir_remove(tmpdir);
}

/* ---- Work on the thread pool --------------------------------------------------- */

struct pool_work {
    struct rec r;          /* the child that must finish while the work blocks */
    volatile int released; /* set by the child's completion, on the loop thread */
    int saw_release;       /* the work saw it (else it gave up after 10 s) */
    int work_on_loop;      /* the work ran on the loop thread */
    int done_on_loop;
    pthread_t loop_thread;
};

static void on_work_child_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct pool_work *w = arg;
    on_done(c, res, &w->r);
    __atomic_store_n(&w->released, 1, __ATOMIC_SEQ_CST);
}

static void blocking_work(void *arg)
{
    struct pool_work *w = arg;
    w->work_on_loop = pthread_equal(pthread_self(), w->loop_thread);
    for (int i = 0; i < 1000 && !__atomic_load_n(&w->released, __ATOMIC_SEQ_CST); i++)
        usleep(10000);
    w->saw_release = __atomic_load_n(&w->released, __ATOMIC_SEQ_CST);
}

static void work_done(void *arg)
{
    struct pool_work *w = arg;
    w->done_on_loop = pthread_equal(pthread_self(), w->loop_thread);
}

/* Work that blocks (a large file being hashed) leaves the loop free: a child started after it
 * is reaped while the work still waits, and the completion comes back on the loop thread. */
static void test_work_runs_off_the_loop_thread(void **state)
{
    struct pool_work w;
    memset(&w, 0, sizeof(w));
    w.loop_thread = pthread_self();
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    assert_non_null(loop);
    assert_int_equal(ar_loop_work(loop, blocking_work, work_done, &w), 0);
    struct ar_child_opts o;
    opts_init(&o, NULL, &w.r);
    o.on_done = on_work_child_done;
    o.arg = &w;
    assert_int_equal(ar_child_spawn(loop, &o, NULL, &err), 0);
    assert_int_equal(ar_loop_run(loop), 0);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(w.r.done, 1);
    assert_false(w.work_on_loop);
    assert_true(w.saw_release);
    assert_true(w.done_on_loop);
    rec_finish(&w.r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_work_runs_off_the_loop_thread),
        cmocka_unit_test(test_wait_runs_after_its_time_and_keeps_the_loop_alive),
        cmocka_unit_test(test_sigint_ends_a_wait_at_once),
        cmocka_unit_test(test_wait_cancel_reports_once),
        cmocka_unit_test(test_kicks_fold_and_a_destroyed_kick_never_runs),
        cmocka_unit_test(test_cap_fires_and_memory_stays_bounded),
        cmocka_unit_test(test_stderr_flood_does_not_count_against_the_cap),
        cmocka_unit_test(test_line_longer_than_cap_is_too_big),
        cmocka_unit_test(test_output_of_exactly_the_cap_is_not_too_big),
        cmocka_unit_test(test_output_past_the_cap_after_exit_is_still_too_big),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_death_by_signal_is_128_plus_n),
        cmocka_unit_test(test_4mib_and_exit_at_once_while_reader_busy_loses_nothing),
        cmocka_unit_test(test_stdout_and_stderr_floods_at_once_without_deadlock),
        cmocka_unit_test(test_stderr_tail_keeps_the_last_bytes),
        cmocka_unit_test(test_10mib_line_arrives_whole),
        cmocka_unit_test(test_final_unterminated_line_is_delivered),
        cmocka_unit_test(test_child_that_closes_stdout_early_still_completes_at_exit),
        cmocka_unit_test(test_10mib_stdin_delivered_whole),
        cmocka_unit_test(test_child_that_never_reads_stdin_does_not_hurt_us),
        cmocka_unit_test(test_empty_stdin_is_closed_not_left_open),
        cmocka_unit_test(test_path_lookup_env_and_cwd),
        cmocka_unit_test(test_the_child_ignores_and_blocks_no_signal),
        cmocka_unit_test(test_missing_program_is_a_clear_error),
        cmocka_unit_test(test_wall_timeout_ends_the_group_with_a_term_ignoring_grandchild),
        cmocka_unit_test(test_idle_timeout_ends_the_group),
        cmocka_unit_test(test_output_keeps_the_idle_timeout_away),
        cmocka_unit_test(test_stderr_counts_as_activity),
        cmocka_unit_test(test_final_event_grace_ends_a_lingering_child_as_success),
        cmocka_unit_test(test_final_event_grace_zero_ends_at_once),
        cmocka_unit_test(test_deadline_inside_the_final_grace_is_still_a_success),
        cmocka_unit_test(test_exit_within_final_grace_is_a_plain_exit),
        cmocka_unit_test(test_leftovers_of_an_exited_leader_are_ended),
        cmocka_unit_test(test_leftovers_holding_pipes_die_on_term),
        cmocka_unit_test(test_kill_cancels_the_child),
        cmocka_unit_test(test_after_cancel_only_bookkeeping_spawns),
        cmocka_unit_test(test_finish_on_cancel_outlives_the_first_cancel),
        cmocka_unit_test(test_sync_runner_captures_stdout),
        cmocka_unit_test(test_fake_picks_the_nth_fixture_per_call),
        cmocka_unit_test(test_sigint_ends_every_group_and_calls_back),
        cmocka_unit_test(test_sigterm_ends_every_group_and_calls_back),
        cmocka_unit_test(test_sighup_ends_every_group_and_calls_back),
    };
    /* Ignored before any spawn, and no signal a host is expected to ignore: the child must
     * get it back at its default all the same. */
    signal(SIGPROF, SIG_IGN);
    return cmocka_run_group_tests(tests, setup, teardown);
}
