/*
 * What the supervisor costs: the fake CLI in its "exit 0 at once" mode run
 * N times (default 1,000) through ar_child_spawn() on one loop, against
 * posix_spawn() + waitpid() of the same binary; and the peak RSS of this
 * process while 64 children run at once.
 *
 *     bench_proc [runs]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentrun/agentrun.h"
#include "proc/proc.h"

#ifndef AR_FAKE_CLI
#error "AR_FAKE_CLI: the path of the fake CLI, set by tests/bench/meson.build"
#endif

extern char **environ;

static const char *fake_argv[] = { AR_FAKE_CLI, NULL };

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

/* CPU time of this process so far, in ms: load on the machine does not inflate it. */
static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static double direct_runs(int runs)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    uint64_t t0 = ar_now_ms();
    for (int i = 0; i < runs; i++) {
        pid_t pid;
        int rc = posix_spawn(&pid, AR_FAKE_CLI, &fa, NULL, (char *const *)fake_argv, environ);
        if (rc != 0) {
            fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
            exit(1);
        }
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "direct run %d failed\n", i);
            exit(1);
        }
    }
    posix_spawn_file_actions_destroy(&fa);
    return (double)(ar_now_ms() - t0) / runs;
}

struct seq {
    struct ar_loop *loop;
    int left;
    int failed;
};

static void seq_next(struct seq *s);

static void seq_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct seq *s = arg;
    if (res->status != 0 || res->end != AR_CHILD_EXITED)
        s->failed++;
    seq_next(s);
}

static void seq_next(struct seq *s)
{
    if (s->left-- <= 0)
        return;
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = fake_argv;
    o.on_done = seq_done;
    o.arg = s;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_child_spawn(s->loop, &o, NULL, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
}

static double supervised_runs(int runs)
{
    struct ar_error err = AR_ERROR_INIT;
    struct seq s = { ar_loop_create(&err), runs, 0 };
    uint64_t t0 = ar_now_ms();
    seq_next(&s);
    ar_loop_run(s.loop);
    double mean = (double)(ar_now_ms() - t0) / runs;
    if (ar_loop_destroy(s.loop) != 0 || s.failed) {
        fprintf(stderr, "supervised runs: %d failed or the loop leaked\n", s.failed);
        exit(1);
    }
    return mean;
}

static int wide_done;
static int wide_failed;

static void wide_cb(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    wide_done++;
    if (res->status != 0)
        wide_failed++;
}

/* 64 children at once, each printing a few lines over ~300 ms. Returns the peak RSS in KiB. */
static long wide_run(void)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    static const char *env[] = { "FAKE_CLI_SLEEP_MS=300",
                                 "FAKE_CLI_STDOUT_TEXT={\"type\":\"x\"}\\n",
                                 "FAKE_CLI_STDERR_TEXT=progress\\n", NULL };
    for (int i = 0; i < 64; i++) {
        struct ar_child_opts o = AR_CHILD_OPTS_INIT;
        o.argv = fake_argv;
        o.env = env;
        o.on_done = wide_cb;
        o.stdin_data = "a prompt of a few bytes";
        o.stdin_len = 23;
        if (ar_child_spawn(loop, &o, NULL, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            exit(1);
        }
    }
    ar_loop_run(loop);
    if (ar_loop_destroy(loop) != 0 || wide_done != 64 || wide_failed) {
        fprintf(stderr, "64 at once: %d done, %d failed\n", wide_done, wide_failed);
        exit(1);
    }
    return max_rss_kib();
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 1000;
    if (runs <= 0)
        runs = 1000;
    /* The trivial mode: do not even wait for stdin. */
    setenv("FAKE_CLI_READ_STDIN", "0", 1);
    /* BENCH_KEEPER=1: as the agentrun command runs, with the keeper (supervisor.md). */
    if (getenv("BENCH_KEEPER") && atoi(getenv("BENCH_KEEPER")))
        ar_end_children_on_exit(1);

    /* The RSS first, before the sequential runs could raise the peak. */
    long base = max_rss_kib();
    long peak = wide_run();
    printf("peak RSS with 64 children at once: %.2f MiB (%.2f MiB before spawning; target < 8)\n",
           peak / 1024.0, base / 1024.0);

    /* Warm both paths (page cache, lazy binding) before timing. */
    direct_runs(20);
    supervised_runs(20);
    /* Alternating rounds, so a change in machine load hits both sides alike. */
    int rounds = runs >= 100 ? 10 : 1, per = runs / rounds;
    double direct = 0, sup = 0, direct_cpu = 0, sup_cpu = 0;
    for (int i = 0; i < rounds; i++) {
        double c0 = cpu_ms();
        direct += direct_runs(per) / rounds;
        double c1 = cpu_ms();
        sup += supervised_runs(per) / rounds;
        double c2 = cpu_ms();
        direct_cpu += c1 - c0;
        sup_cpu += c2 - c1;
    }
    runs = per * rounds;
    printf("runs: %d\n", runs);
    printf("posix_spawn+waitpid: %.3f ms per run\n", direct);
    printf("supervisor:          %.3f ms per run\n", sup);
    printf("overhead:            %.3f ms per run (target < 1)\n", sup - direct);
    printf("our CPU per run:     %.3f ms supervised, %.3f ms direct (not inflated by load)\n",
           sup_cpu / runs, direct_cpu / runs);
    return 0;
}
