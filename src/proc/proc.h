/*
 * The process supervisor: children, waits and signals on one event loop.
 * The only code of the library that includes <uv.h>; everything here is
 * opaque. (The CLI, a client of the public API, runs its own uv loop.)
 *
 * A child runs from an argv (never a shell) in its own session and process
 * group. Its stdin is a pipe fed from a buffer and then closed; its stdout is an
 * unlinked regular file (claude and gemini lose what is queued for a pipe when
 * they exit, see shared FORMATS.md) read as it grows and once more after exit;
 * its stderr is a pipe drained into a bounded tail. Every kill goes to the
 * group: SIGTERM, then SIGKILL after a grace. When the leader exits, whatever
 * is left in its group is ended the same way.
 *
 * Protocol:
 *   1. ar_loop_create();
 *   2. ar_child_spawn() any number of children (many runs on one loop with a cap:
 *      the job set, src/run/jobset.h);
 *   3. ar_loop_run() until nothing is left to do; on_done of each child runs
 *      exactly once, after the process exited and both outputs reached EOF;
 *   4. ar_loop_destroy(), which returns 0 when no handle leaked.
 */
#ifndef AR_PROC_PROC_H
#define AR_PROC_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "agentrun/error.h"

struct ar_loop;
struct ar_child;
struct uv_loop_s;

#define AR_CHILD_DEFAULT_OUTPUT_CAP    ((size_t)64 << 20)
#define AR_CHILD_DEFAULT_STDERR_TAIL   ((size_t)64 << 10)
#define AR_CHILD_DEFAULT_KILL_GRACE_MS 5000

/* How a child's run ended. */
enum ar_child_end {
    AR_CHILD_EXITED = 0,  /* it exited (or died by a signal) on its own */
    AR_CHILD_TIMEOUT,     /* the wall timeout ended it */
    AR_CHILD_IDLE,        /* no byte on stdout or stderr for idle_timeout_ms */
    AR_CHILD_TOOBIG,      /* stdout passed output_cap */
    AR_CHILD_FINAL_GRACE, /* ended after ar_child_final_seen() + final_grace_ms: still a success */
    AR_CHILD_CANCELLED,   /* ar_child_kill() or ar_loop_cancel_all() */
};

struct ar_child_result {
    int status;           /* exit status, or 128 + signal when killed by one */
    int term_signal;      /* the signal that ended it, or 0 */
    int64_t pid;          /* the leader's pid (also its process group id) */
    uint64_t duration_ms; /* spawn to exit, monotonic clock */
    enum ar_child_end end;
    size_t stdout_bytes;
    size_t stderr_bytes;
    /* The last stderr_tail bytes of stderr. Borrowed: valid during on_done only. */
    const char *stderr_tail;
    size_t stderr_tail_len;
    /* With capture_stdout: all of stdout (up to the cap). Borrowed during on_done. */
    const char *stdout_data;
    size_t stdout_len;
    /* Set for every end but EXITED/FINAL_GRACE: AR_ETIMEOUT, AR_EIDLE, AR_ETOOBIG, AR_EINTERRUPTED.
     */
    struct ar_error err;
};

/* One complete stdout line, without its '\n' (a final unterminated line is delivered at exit).
 * `line` is borrowed for the call and NUL-terminated at line[len]. */
typedef void ar_child_line_fn(struct ar_child *c, const char *line, size_t len, void *arg);

/* The child is over. res is borrowed; the child is freed after this returns. */
typedef void ar_child_done_fn(struct ar_child *c, const struct ar_child_result *res, void *arg);

struct ar_child_opts {
    const char *const *argv; /* argv[0]: a name looked up on PATH, or a path containing '/' */
    const char *cwd;         /* NULL: agentrun's own */
    /* "NAME=VALUE" entries that add to or override agentrun's environment;
     * a bare "NAME" removes NAME. NULL-terminated, may be NULL. */
    const char *const *env;
    /* Written to the child's stdin, which is then closed. Borrowed, not copied:
     * it must stay valid and unchanged until on_done has returned. */
    const void *stdin_data;
    size_t stdin_len;
    uint64_t timeout_ms;       /* wall clock; 0 = none */
    uint64_t idle_timeout_ms;  /* 0 = none */
    uint64_t kill_grace_ms;    /* SIGTERM to SIGKILL; 0 = AR_CHILD_DEFAULT_KILL_GRACE_MS */
    uint64_t final_grace_ms;   /* after ar_child_final_seen(); 0 = end at once */
    size_t output_cap;         /* stdout bytes; 0 = AR_CHILD_DEFAULT_OUTPUT_CAP */
    size_t stderr_tail;        /* 0 = AR_CHILD_DEFAULT_STDERR_TAIL */
    int capture_stdout;        /* keep stdout whole in the result (bounded by output_cap) */
    int after_cancel;          /* may start after ar_loop_cancel_all(): short bookkeeping such
                                  as git status, never a model call */
    int finish_on_cancel;      /* the first ar_loop_cancel_all() lets it run to its end (a git
                                  worktree being made or removed, which a kill would leave half
                                  done); a second one ends it with the rest. Implies after_cancel */
    ar_child_line_fn *on_line; /* may be NULL */
    ar_child_done_fn *on_done; /* required */
    void *arg;
};

#define AR_CHILD_OPTS_INIT \
    {                      \
        0                  \
    }

/* A new loop, or NULL with err set. */
struct ar_loop *ar_loop_create(struct ar_error *err);

/*
 * An agentrun loop on the caller's libuv loop (borrowed: it must outlive the
 * returned loop), for the public async API: one per run, batch or review, so
 * cancelling one ends only its own children. The caller runs uv itself;
 * ar_loop_run() and ar_loop_destroy() are not for an attached loop.
 * Returns NULL with err set when out of memory.
 */
struct ar_loop *ar_loop_attach(struct uv_loop_s *uv, struct ar_error *err);

/*
 * The blocking form of a public start function (AR_DEFINE_BLOCKING, run/start.h): a
 * private libuv loop, start(uv, arg) on it, then the loop run until nothing is
 * left on it (also when start failed: what it attached still detaches), and
 * closed. Returns start's value, or AR_ESPAWN with err set when no loop could
 * be made (start is then not called).
 */
typedef int ar_loop_start_fn(struct uv_loop_s *uv, void *arg, struct ar_error *err);
int ar_loop_run_private(ar_loop_start_fn *start, void *arg, struct ar_error *err);

/*
 * Ends an attached loop once the work on it is over (no child, wait or work
 * left; call it from the last completion callback). It closes its handles on
 * the loop's next turn and frees itself from their close callbacks, so the
 * caller's loop only has to keep running. NULL is fine.
 */
void ar_loop_detach(struct ar_loop *loop);

/* Runs until no child, timer or job is left. Returns 0. */
int ar_loop_run(struct ar_loop *loop);

/*
 * Ends every live child's group (SIGTERM, then SIGKILL after its grace), but
 * for the ones started with finish_on_cancel. From then on ar_child_spawn()
 * on this loop fails with AR_EINTERRUPTED, so a completion callback cannot
 * start new work (a repair call) after a Ctrl-C.
 * A second call SIGKILLs every group at once (a second Ctrl-C), those too.
 */
void ar_loop_cancel_all(struct ar_loop *loop);

/* Non-zero once ar_loop_cancel_all() ran (directly or through a watched signal). */
int ar_loop_cancelled(const struct ar_loop *loop);

typedef void ar_signal_fn(int signum, void *arg);

/*
 * Watches SIGINT, SIGTERM and SIGHUP while the loop runs: on the first one,
 * every child group is ended (ar_loop_cancel_all) and fn(signum, arg) runs
 * (fn may be NULL); a second one SIGKILLs every group at once. The watchers do
 * not keep the loop alive; ar_loop_destroy() removes them (the default
 * dispositions come back). Call at most once per loop. Returns 0 or AR_ESPAWN.
 */
int ar_loop_watch_signals(struct ar_loop *loop, ar_signal_fn *fn, void *arg, struct ar_error *err);

/* Closes the loop and frees it. Returns 0, or -1 when handles were still open (a bug). */
int ar_loop_destroy(struct ar_loop *loop);

/*
 * Starts a child. On success *out (may be NULL) is the child, owned by the
 * loop until on_done has returned. On failure nothing is left running,
 * on_done is never called, and err says why: AR_ENOTFOUND or AR_ESPAWN with
 * the program named ("cannot run 'claude': No such file or directory").
 */
int ar_child_spawn(struct ar_loop *loop, const struct ar_child_opts *opts, struct ar_child **out,
                   struct ar_error *err);

/* The final event was seen: end the group after final_grace_ms; the run still counts as done. */
void ar_child_final_seen(struct ar_child *c);

/* Ends the child's group now (SIGTERM, then SIGKILL); its end is AR_CHILD_CANCELLED. */
void ar_child_kill(struct ar_child *c);

/* The leader's pid, which is also its process group id. */
int64_t ar_child_pid(const struct ar_child *c);

/* A periodic timer on the loop (for live status lines); stop it before the loop ends. */
struct ar_ticker;
typedef void ar_ticker_fn(void *arg);
struct ar_ticker *ar_ticker_start(struct ar_loop *loop, uint64_t every_ms, ar_ticker_fn *fn,
                                  void *arg);
void ar_ticker_stop(struct ar_ticker *t); /* NULL is fine; frees t */

/*
 * Runs one child to completion on a private loop. opts->on_done and
 * opts->arg are ignored (on_line, if set, gets opts->arg). Returns:
 *   0 when the child ran, however it ended: out->res.status is its exit
 *     status, out->res.end and out->res.err say whether a limit (timeout,
 *     idle, too_big) ended it; free out with ar_child_sync_finish();
 *   AR_ENOTFOUND, AR_ESPAWN, AR_ENOMEM when it could not run or its output
 *     could not be kept (err says why; out is zeroed, nothing to free).
 */
struct ar_child_sync {
    struct ar_child_result res; /* stderr_tail/stdout_data point into the buffers below */
    char *stdout_data;          /* with capture_stdout; owned, NUL-terminated; else NULL */
    char *stderr_tail;          /* owned, NUL-terminated */
};
int ar_child_run_sync(const struct ar_child_opts *opts, struct ar_child_sync *out,
                      struct ar_error *err);
void ar_child_sync_finish(struct ar_child_sync *s); /* NULL is fine; *s is zeroed */

/* Monotonic milliseconds. */
uint64_t ar_now_ms(void);

/*
 * When process pid started, in clock ticks since boot (/proc/PID/stat), or 0 when that
 * cannot be read (no such process, no /proc). A pid and its start time name one process
 * for good: a pid reused later has another start time.
 */
unsigned long long ar_proc_start_time(long pid);

/*
 * The loop's clock, on which rate-limit waits and pauses are measured: ar_now_ms(),
 * unless a test took it over with ar_loop_clock_manual(). From then on the clock reads
 * now_ms and stands still; a wait (ar_wait_start) of more than 0 ms never ends by itself
 * and does not keep the loop alive, so ar_loop_run() returns once nothing but such waits
 * is left; ar_loop_clock_advance() moves the clock on by ms, and every wait it reached
 * then ends from the loop's next turn, earliest first (those due together in the order
 * they were started). A wait still pending at ar_loop_destroy() makes it fail: advance
 * or cancel first. Children's timeouts keep to real time.
 */
uint64_t ar_loop_now_ms(const struct ar_loop *loop);
void ar_loop_clock_manual(struct ar_loop *loop, uint64_t now_ms);
void ar_loop_clock_advance(struct ar_loop *loop, uint64_t ms);

/* A piece of work for the loop (a deferred call, a kick, work off the loop thread). */
typedef void ar_job_fn(void *arg);

/*
 * Calls fn(arg) once from the loop, on its next iteration (never from inside
 * this function), so a caller can finish asynchronously without a child.
 * Returns 0 or AR_ENOMEM.
 */
int ar_loop_defer(struct ar_loop *loop, ar_job_fn *fn, void *arg);

/*
 * How many of `want` jobs can run at once under the open file limit: each
 * running job holds up to AR_PROC_FDS_PER_JOB descriptors (the CLI's pipes and
 * output file, its git snapshots), beyond AR_PROC_FDS_RESERVED for the loop
 * and agentrun itself. The soft limit is raised towards the hard one first.
 * Returns want when it fits, else the smaller number that does (at least 1),
 * so a large -j throttles instead of failing jobs with EMFILE.
 */
#define AR_PROC_FDS_PER_JOB  8
#define AR_PROC_FDS_RESERVED 32
unsigned ar_proc_jobs_within_fd_limit(unsigned want);

/*
 * Runs work(arg) on libuv's thread pool, then done(arg) on the loop thread
 * (never from inside this function). work must not touch the loop or any
 * handle, and arg must stay valid and untouched by the loop until done runs.
 * For blocking file work (hashing) that must not stall the other jobs on the
 * loop. The pool has UV_THREADPOOL_SIZE threads (libuv's default: 4); the
 * request keeps the loop alive until done has run. Returns 0 or AR_ENOMEM.
 */
int ar_loop_work(struct ar_loop *loop, ar_job_fn *work, ar_job_fn *done, void *arg);

/*
 * A wake-up made ahead, for work that must come back to the loop where an
 * allocation could fail and no caller could be told (a scheduler's next
 * round, the end of a review): ar_kick() makes fn(arg) run once from the
 * loop's next turn and never fails; kicks before it runs fold into one. A
 * pending kick keeps the loop alive. ar_kick_create() returns NULL when out
 * of memory; ar_kick_destroy() (NULL is fine) drops a pending kick and frees
 * it from its close callback, so the loop must run once more.
 */
struct ar_kick;
struct ar_kick *ar_kick_create(struct ar_loop *loop, ar_job_fn *fn, void *arg);
void ar_kick(struct ar_kick *k);
void ar_kick_destroy(struct ar_kick *k);

/*
 * A cancellable wait (a rate limit's backoff): fn(arg, 0) runs once from the loop
 * after ms, or fn(arg, 1) soon after ar_wait_cancel() or ar_loop_cancel_all()
 * (a Ctrl-C must not sit out the wait). Started on a cancelled loop it reports
 * cancelled at once (from the loop). *out (may be NULL) is valid until fn runs.
 * The wait keeps the loop alive. Returns 0 or AR_ENOMEM.
 */
struct ar_wait;
typedef void ar_wait_fn(void *arg, int cancelled);
int ar_wait_start(struct ar_loop *loop, uint64_t ms, ar_wait_fn *fn, void *arg,
                  struct ar_wait **out);
void ar_wait_cancel(struct ar_wait *w);

/*
 * Finds the program to run: argv0 as a path when it contains '/', else the
 * first executable match on path_env (the child's PATH; NULL: a default
 * of /usr/local/bin:/usr/bin:/bin). The one search agentrun has: the spawn and
 * `doctor` use it alike. cwd resolves a relative argv0 (NULL: the current
 * directory). On success *out is
 * the file to execute (caller free()s). Fails with AR_ENOTFOUND or AR_ESPAWN,
 * the message naming argv0.
 */
int ar_proc_find_program(const char *argv0, const char *cwd, const char *path_env, char **out,
                         struct ar_error *err);

#endif
