/*
 * No process a call started outlives it, whichever group or session it moved
 * to: the fake CLI's grandchildren that call setsid() (codex's shell snapshot
 * does) or daemonize (a middle child that exits at once), with the supervisor
 * walking the tree below the leader (and its census remembering what it saw),
 * and with this process a child subreaper as the agentrun CLI is
 * (ar_adopt_orphans()).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "agentrun/agentrun.h"
#include "proc/proc.h"
#include "fixture.h"

#ifndef AR_FAKE_CLI
#error "AR_FAKE_CLI: the path of the fake CLI, set by tests/proc/meson.build"
#endif

static char tmpdir[256];

static const char *fake_argv[] = { AR_FAKE_CLI, NULL };

struct call {
    int done;
    struct ar_child_result res;
    struct ar_child *c;
    int kill_on_line; /* ar_child_kill() at the first line */
    int cancel_on_line;
    struct ar_loop *loop;
    void (*on_first_line)(struct call *k);
    void *arg;
    size_t lines;
};

static void on_line(struct ar_child *c, const char *line, size_t len, void *arg)
{
    struct call *k = arg;
    if (k->lines++)
        return;
    if (k->kill_on_line)
        ar_child_kill(c);
    if (k->cancel_on_line)
        ar_loop_cancel_all(k->loop);
    if (k->on_first_line)
        k->on_first_line(k);
}

static void (*done_hook)(struct call *k);

static void on_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct call *k = arg;
    k->done++;
    k->res = *res;
    k->res.stderr_tail = NULL;
    k->c = NULL;
    if (done_hook)
        done_hook(k);
}

static void spawn(struct ar_loop *loop, struct call *k, const char *const *env)
{
    struct ar_child_opts o;
    memset(&o, 0, sizeof(o));
    o.argv = fake_argv;
    o.env = env;
    o.on_line = on_line;
    o.on_done = on_done;
    o.arg = k;
    o.kill_grace_ms = 300;
    o.timeout_ms = 20000; /* a supervisor that never ends the call fails, not hangs */
    k->loop = loop;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_child_spawn(loop, &o, &k->c, &err) != 0)
        fail_msg("spawn: %s", err.msg);
}

static char *tmp_path(const char *name)
{
    static char paths[8][512];
    static int n;
    char *p = paths[n++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    unlink(p);
    return p;
}

/* The first pid in a pid file, or 0. */
static pid_t first_pid(const char *pidfile)
{
    FILE *f = fopen(pidfile, "r");
    long pid = 0;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return (pid_t)pid;
}

/* 'R', 'S', 'Z' …: the state /proc gives pid, or 0 when it has no such process. */
static char state_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' ? rp[2] : 0;
}

/* Gone: no such process, or a zombie (not ours to reap when we do not adopt). */
static int gone(pid_t pid)
{
    char s = state_of(pid);
    return s == 0 || s == 'Z' || s == 'X';
}

/* Every pid of the pid file is gone; there were `expect` of them. A survivor is killed. */
static void assert_all_gone(const char *pidfile, int expect)
{
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    long pid;
    int n = 0, left = 0;
    while (fscanf(f, "%ld", &pid) == 1) {
        n++;
        if (!gone((pid_t)pid)) {
            print_error("pid %ld survived its call\n", pid);
            kill((pid_t)pid, SIGKILL);
            left++;
        }
    }
    fclose(f);
    assert_int_equal(left, 0);
    assert_int_equal(n, expect);
}

/* This process has no child left, not even a zombie: adopted orphans were reaped. */
static void assert_no_children(void)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    struct dirent *de;
    int left = 0;
    while ((de = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *rp = strrchr(buf, ')');
        char st;
        long ppid;
        if (rp && sscanf(rp + 1, " %c %ld", &st, &ppid) == 2 && ppid == (long)getpid()) {
            print_error("child %s left (state %c)\n", de->d_name, st);
            left++;
        }
    }
    closedir(d);
    assert_int_equal(left, 0);
}

static struct ar_loop *new_loop(void)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    assert_non_null(loop);
    return loop;
}

static void run_and_destroy(struct ar_loop *loop)
{
    assert_int_equal(ar_loop_run(loop), 0);
    assert_int_equal(ar_loop_destroy(loop), 0);
}

/* "FAKE_CLI_PIDFILE=<a fresh file named name>", with *pidfile its path. */
static const char *pid_env(const char *name, const char **pidfile)
{
    static char vars[4][600];
    static int n;
    char *v = vars[n++ % 4];
    *pidfile = tmp_path(name);
    snprintf(v, 600, "FAKE_CLI_PIDFILE=%s", *pidfile);
    return v;
}

/* One call on a loop of its own, to its end. Returns how long it took, in ms. */
static uint64_t run_call(struct call *k, const char *const *env)
{
    struct ar_loop *loop = new_loop();
    uint64_t t0 = ar_now_ms();
    spawn(loop, k, env);
    run_and_destroy(loop);
    return ar_now_ms() - t0;
}

/* ---- The walk: no adoption, as in a library host ----------------------------- */

/* codex's case: a grandchild in a session of its own is still running when the call
 * is interrupted; the group kill alone leaves it running. */
static void test_cancel_ends_a_grandchild_in_its_own_session(void **state)
{
    const char *pidfile;
    const char *pidvar = pid_env("setsid.pids", &pidfile);
    const char *env[] = { pidvar,
                          "FAKE_CLI_GRANDCHILD=setsid",
                          "FAKE_CLI_GRANDCHILDREN=2",
                          "FAKE_CLI_STDOUT_TEXT=started\\n",
                          "FAKE_CLI_HANG=1",
                          NULL };
    struct call k = { 0 };
    k.cancel_on_line = 1;
    uint64_t took = run_call(&k, env);
    assert_int_equal(k.done, 1);
    assert_int_equal(k.res.end, AR_CHILD_CANCELLED);
    assert_int_equal(k.res.status, 128 + SIGTERM);
    assert_true(took < 3000); /* SIGTERM was enough: no grace sat out */
    assert_all_gone(pidfile, 2);
}

/* One that also ignores SIGTERM gets SIGKILL after the grace, though its parent is long
 * gone by then and it hangs below init. */
static void test_a_term_ignoring_grandchild_that_left_gets_sigkill(void **state)
{
    const char *pidfile;
    const char *pidvar = pid_env("stubborn.pids", &pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=setsid+ignore-term",
                          "FAKE_CLI_STDOUT_TEXT=started\\n", "FAKE_CLI_HANG=1", NULL };
    struct call k = { 0 };
    k.kill_on_line = 1;
    uint64_t took = run_call(&k, env);
    assert_int_equal(k.res.end, AR_CHILD_CANCELLED);
    assert_true(took >= 290); /* done waited for it: the grace, then SIGKILL */
    assert_true(took < 5000);
    assert_all_gone(pidfile, 1);
}

/* The leader exits a while after its grandchild left the session: nothing links the
 * grandchild to the call any more but what the census saw while the leader lived. */
static void test_a_grandchild_whose_parent_exited_later_ends_with_the_call(void **state)
{
    const char *pidfile;
    const char *pidvar = pid_env("census.pids", &pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=setsid", "FAKE_CLI_SLEEP_MS=400", NULL };
    struct call k = { 0 };
    run_call(&k, env);
    assert_int_equal(k.done, 1);
    assert_int_equal(k.res.end, AR_CHILD_EXITED);
    assert_int_equal(k.res.status, 0);
    assert_all_gone(pidfile, 1);
}

/* ---- Adoption, as in the agentrun CLI ----------------------------------------- */

static int adopt_setup(void **state)
{
    if (ar_adopt_orphans(1) != 0)
        skip();
    return 0;
}

static int adopt_teardown(void **state)
{
    ar_adopt_orphans(0);
    return 0;
}

/* A daemon whose parent exited before the leader did: nothing links it to the call when
 * the leader exits 0, yet it ends with the call, and is reaped. */
static void test_a_daemon_of_an_exited_leader_is_ended_and_reaped(void **state)
{
    const char *pidfile;
    const char *pidvar = pid_env("daemon.pids", &pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=daemon", "FAKE_CLI_GRANDCHILDREN=2",
                          "FAKE_CLI_STDOUT_TEXT=bye\\n", NULL };
    struct call k = { 0 };
    run_call(&k, env);
    assert_int_equal(k.done, 1);
    assert_int_equal(k.res.end, AR_CHILD_EXITED);
    assert_int_equal(k.res.status, 0);
    assert_all_gone(pidfile, 2);
    assert_no_children();
}

/* The same daemon ignoring SIGTERM: SIGKILL after the grace, and done only then. */
static void test_a_term_ignoring_daemon_gets_sigkill(void **state)
{
    const char *pidfile;
    const char *pidvar = pid_env("daemon-stubborn.pids", &pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=daemon+ignore-term", NULL };
    struct call k = { 0 };
    uint64_t took = run_call(&k, env);
    assert_int_equal(k.res.end, AR_CHILD_EXITED);
    assert_true(took >= 290);
    assert_all_gone(pidfile, 1);
    assert_no_children();
}

/*
 * Two calls, A and B, both running when B's daemon is born: nothing says which made
 * it. A ends first and must leave it alone (B may need it); B's end ends it.
 */
struct two {
    struct call a, b;
    const char *pidfile;
    pid_t daemon;
    char daemon_after_a; /* its state when A was done */
};

static struct two *two_now;

static void b_started(struct call *b)
{
    two_now->daemon = first_pid(two_now->pidfile);
    ar_child_kill(two_now->a.c);
}

static void two_done(struct call *k)
{
    struct two *t = two_now;
    if (k == &t->a) {
        t->daemon_after_a = state_of(t->daemon);
        ar_child_kill(t->b.c);
    }
}

static void test_an_orphan_two_running_calls_may_own_outlives_the_first_to_end(void **state)
{
    struct two t;
    memset(&t, 0, sizeof(t));
    const char *pidvar = pid_env("two.pids", &t.pidfile);
    const char *env_a[] = { "FAKE_CLI_HANG=1", NULL };
    const char *env_b[] = { pidvar, "FAKE_CLI_GRANDCHILD=daemon", "FAKE_CLI_STDOUT_TEXT=started\\n",
                            "FAKE_CLI_HANG=1", NULL };
    two_now = &t;
    done_hook = two_done;
    t.b.on_first_line = b_started;
    struct ar_loop *loop = new_loop();
    spawn(loop, &t.a, env_a);
    spawn(loop, &t.b, env_b);
    run_and_destroy(loop);
    done_hook = NULL;
    assert_true(t.daemon > 0);
    assert_int_equal(t.a.res.end, AR_CHILD_CANCELLED);
    assert_int_equal(t.b.res.end, AR_CHILD_CANCELLED);
    if (t.daemon_after_a == 0 || t.daemon_after_a == 'Z')
        fail_msg("the first call to end took an orphan the running one may own");
    assert_all_gone(t.pidfile, 1);
    assert_no_children();
}

/*
 * Issue 60 #13: a multi-threaded CLI (node) whose worker thread forks a helper that
 * leaves for a session of its own. The kernel lists that child under the thread, not
 * the main thread; it is the call's all the same, and ends with it. B, started first,
 * runs on: once the helper's parent is gone nothing else links it to A (B could have
 * made it as well), so only the walk while A lives can tell it is A's.
 */
struct thread_child {
    struct call a, b;
    const char *pidfile;
    pid_t helper;
    char helper_after_a; /* its state when A was done */
};

static struct thread_child *thread_child_now;

static void a_started(struct call *a)
{
    thread_child_now->helper = first_pid(thread_child_now->pidfile);
    ar_child_kill(a->c);
}

static void a_done(struct call *k)
{
    struct thread_child *t = thread_child_now;
    if (k == &t->a) {
        t->helper_after_a = state_of(t->helper);
        ar_child_kill(t->b.c);
    }
}

static void test_a_child_a_worker_thread_forked_ends_with_its_call(void **state)
{
    struct thread_child t;
    memset(&t, 0, sizeof(t));
    const char *pidvar = pid_env("thread.pids", &t.pidfile);
    const char *env_a[] = { pidvar,
                            "FAKE_CLI_GRANDCHILD=setsid",
                            "FAKE_CLI_GRANDCHILD_THREAD=1",
                            "FAKE_CLI_STDOUT_TEXT=started\\n",
                            "FAKE_CLI_HANG=1",
                            NULL };
    const char *env_b[] = { "FAKE_CLI_HANG=1", NULL };
    thread_child_now = &t;
    done_hook = a_done;
    t.a.on_first_line = a_started;
    struct ar_loop *loop = new_loop();
    spawn(loop, &t.b, env_b);
    spawn(loop, &t.a, env_a);
    run_and_destroy(loop);
    done_hook = NULL;
    assert_true(t.helper > 0);
    assert_int_equal(t.a.res.end, AR_CHILD_CANCELLED);
    assert_int_equal(t.b.res.end, AR_CHILD_CANCELLED);
    if (t.helper_after_a != 0 && t.helper_after_a != 'Z')
        fail_msg("the helper a worker thread of the call forked outlived the call (state %c)",
                 t.helper_after_a);
    assert_all_gone(t.pidfile, 1);
    assert_no_children();
}

/* An adopted orphan that dies while its call still runs is reaped at once (SIGCHLD),
 * not left a zombie until the call ends. */
struct reap {
    struct call k;
    const char *pidfile;
    pid_t daemon;
    struct ar_ticker *tick;
    uint64_t deadline;
    int reaped;
};

static struct reap *reap_now;

static void reap_tick(void *arg)
{
    struct reap *r = arg;
    if (state_of(r->daemon) == 0 || ar_now_ms() > r->deadline) {
        r->reaped = state_of(r->daemon) == 0;
        ar_ticker_stop(r->tick);
        ar_child_kill(r->k.c);
    }
}

static void reap_started(struct call *k)
{
    struct reap *r = reap_now;
    r->daemon = first_pid(r->pidfile);
    assert_true(r->daemon > 0);
    kill(r->daemon, SIGKILL);
    r->deadline = ar_now_ms() + 5000;
    r->tick = ar_ticker_start(k->loop, 10, reap_tick, r);
}

static void test_an_adopted_orphan_that_dies_is_reaped_while_its_call_runs(void **state)
{
    struct reap r;
    memset(&r, 0, sizeof(r));
    const char *pidvar = pid_env("reap.pids", &r.pidfile);
    const char *env[] = { pidvar, "FAKE_CLI_GRANDCHILD=daemon", "FAKE_CLI_STDOUT_TEXT=started\\n",
                          "FAKE_CLI_HANG=1", NULL };
    reap_now = &r;
    r.k.on_first_line = reap_started;
    run_call(&r.k, env);
    assert_true(r.reaped);
    assert_int_equal(r.k.res.end, AR_CHILD_CANCELLED);
    assert_no_children();
}

/* With adoption the walk still does its part: interrupted mid-call, as in the e2e test. */
static void test_cancel_ends_a_grandchild_in_its_own_session_when_adopting(void **state)
{
    test_cancel_ends_a_grandchild_in_its_own_session(state);
    assert_no_children();
}

static int setup(void **state)
{
    (void)state;
    ar_test_env_scrub();
    return ar_test_tmpdir_make(tmpdir, sizeof(tmpdir), "ar-orphan-test");
}

/* ---- Killed by SIGKILL: the keeper (issue 45) ------------------------------- */

/* How the holder below lives before it is killed. */
enum holder {
    HOLD_OFF_AFTER_SPAWN = 1 << 0, /* ar_end_children_on_exit(0) once the CLI runs */
    HOLD_ADOPT = 1 << 1,           /* a child subreaper, as the agentrun command is */
    HOLD_CALL_FIRST = 1 << 2,      /* one call made and ended before the hanging one */
};

/*
 * A process like the agentrun command (ar_end_children_on_exit(1)) starts a CLI
 * that hangs after forking a grandchild, and is killed by SIGKILL, which it cannot
 * handle: within a second the CLI and the grandchild are gone. `how` is the
 * grandchild's FAKE_CLI_GRANDCHILD mode; `flags` the holder's life (enum holder).
 */
static void killed_holder_leaves_nothing(const char *how, int flags)
{
    const char *pidfile;
    char mode[64];
    snprintf(mode, sizeof(mode), "FAKE_CLI_GRANDCHILD=%s", how);
    const char *env[] = { "FAKE_CLI_HANG=1", mode, pid_env("killed.pids", &pidfile), NULL };
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        close(p[0]);
        if ((flags & HOLD_ADOPT) && ar_adopt_orphans(1) != 0)
            _exit(2);
        ar_end_children_on_exit(1);
        struct ar_loop *loop = new_loop();
        struct call k;
        memset(&k, 0, sizeof(k));
        if (flags & HOLD_CALL_FIRST) {
            /* A call to its end first: its family's end must leave the keeper alone. */
            spawn(loop, &k, NULL);
            ar_loop_run(loop);
            if (!k.done || k.res.status != 0)
                _exit(3);
            memset(&k, 0, sizeof(k));
        }
        spawn(loop, &k, env);
        /* Turned off while a child runs: the guard stays for that child. */
        if (flags & HOLD_OFF_AFTER_SPAWN)
            ar_end_children_on_exit(0);
        int64_t pid = ar_child_pid(k.c);
        if (write(p[1], &pid, sizeof(pid)) != (ssize_t)sizeof(pid))
            _exit(1);
        ar_loop_run(loop);
        _exit(0);
    }
    close(p[1]);
    int64_t cli = 0;
    assert_int_equal(read(p[0], &cli, sizeof(cli)), (ssize_t)sizeof(cli));
    close(p[0]);
    pid_t grandchild = 0;
    for (int i = 0; i < 500 && !(grandchild = first_pid(pidfile)); i++)
        usleep(10000);
    assert_true(grandchild > 0);
    assert_false(gone((pid_t)cli));
    assert_false(gone(grandchild));
    kill(holder, SIGKILL);
    assert_int_equal(waitpid(holder, NULL, 0), holder);
    uint64_t t0 = ar_now_ms();
    while ((!gone((pid_t)cli) || !gone(grandchild)) && ar_now_ms() - t0 < 1000)
        usleep(10000);
    int left = !gone((pid_t)cli) + !gone(grandchild);
    if (left) {
        print_error("%d process(es) outlived a killed agentrun\n", left);
        kill((pid_t)cli, SIGKILL);
        kill(grandchild, SIGKILL);
    }
    assert_int_equal(left, 0);
}

static void test_a_cli_and_its_grandchild_end_when_the_process_is_killed(void **state)
{
    (void)state;
    killed_holder_leaves_nothing("keep-pipes+ignore-term", 0);
}

static void test_a_grandchild_in_a_session_of_its_own_ends_when_the_process_is_killed(void **state)
{
    (void)state;
    killed_holder_leaves_nothing("setsid+ignore-term", 0);
}

static void test_turned_off_while_a_cli_runs_the_keeper_still_ends_it(void **state)
{
    (void)state;
    killed_holder_leaves_nothing("keep-pipes+ignore-term", HOLD_OFF_AFTER_SPAWN);
}

/*
 * Issue 60 #11: a process the keeper finds below a group it was told of, in no group
 * the keeper can signal by its id (a shell job whose first command ended: its group has
 * no leader), is stopped with the rest and then killed on its own, not left stopped.
 */
static void
test_a_grandchild_in_a_group_without_leader_ends_when_the_process_is_killed(void **state)
{
    (void)state;
    killed_holder_leaves_nothing("pgrp+ignore-term", 0);
}

/*
 * Issue 60 #12: the keeper is a child of the process, so where it adopts orphans the
 * keeper looks like one the first call may have started. Ending that call must not end
 * the keeper: a CLI started after it is still ended when the process is killed.
 */
static void test_the_keeper_outlives_the_first_call_and_guards_the_next(void **state)
{
    (void)state;
    killed_holder_leaves_nothing("setsid+ignore-term", HOLD_ADOPT | HOLD_CALL_FIRST);
}

/*
 * Turned off once its calls are over (what `agentrun run` does before it writes the
 * result), the keeper exits then, not when the process does: the holder's only child
 * left, the keeper, is there to be reaped within a second, while the holder lives on.
 */
static void test_turned_off_after_the_calls_the_keeper_exits_at_once(void **state)
{
    (void)state;
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        ar_end_children_on_exit(1);
        struct ar_loop *loop = new_loop();
        struct call k;
        memset(&k, 0, sizeof(k));
        spawn(loop, &k, NULL);
        ar_loop_run(loop);
        if (!k.done || k.res.status != 0)
            _exit(3);
        ar_end_children_on_exit(0);
        alarm(1); /* a keeper still waiting for us would block this wait: SIGALRM */
        int st;
        pid_t keeper = waitpid(-1, &st, 0);
        _exit(keeper > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 4);
    }
    int st;
    assert_int_equal(waitpid(holder, &st, 0), holder);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static int teardown(void **state)
{
    (void)state;
    return ar_test_tmpdir_remove(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_ends_a_grandchild_in_its_own_session),
        cmocka_unit_test(test_a_term_ignoring_grandchild_that_left_gets_sigkill),
        cmocka_unit_test(test_a_grandchild_whose_parent_exited_later_ends_with_the_call),
        cmocka_unit_test_setup_teardown(test_a_daemon_of_an_exited_leader_is_ended_and_reaped,
                                        adopt_setup, adopt_teardown),
        cmocka_unit_test_setup_teardown(test_a_term_ignoring_daemon_gets_sigkill, adopt_setup,
                                        adopt_teardown),
        cmocka_unit_test_setup_teardown(
            test_an_orphan_two_running_calls_may_own_outlives_the_first_to_end, adopt_setup,
            adopt_teardown),
        cmocka_unit_test_setup_teardown(
            test_an_adopted_orphan_that_dies_is_reaped_while_its_call_runs, adopt_setup,
            adopt_teardown),
        cmocka_unit_test_setup_teardown(test_a_child_a_worker_thread_forked_ends_with_its_call,
                                        adopt_setup, adopt_teardown),
        cmocka_unit_test_setup_teardown(
            test_cancel_ends_a_grandchild_in_its_own_session_when_adopting, adopt_setup,
            adopt_teardown),
        cmocka_unit_test(test_a_cli_and_its_grandchild_end_when_the_process_is_killed),
        cmocka_unit_test(test_a_grandchild_in_a_session_of_its_own_ends_when_the_process_is_killed),
        cmocka_unit_test(test_turned_off_while_a_cli_runs_the_keeper_still_ends_it),
        cmocka_unit_test(
            test_a_grandchild_in_a_group_without_leader_ends_when_the_process_is_killed),
        cmocka_unit_test(test_the_keeper_outlives_the_first_call_and_guards_the_next),
        cmocka_unit_test(test_turned_off_after_the_calls_the_keeper_exits_at_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
