/*
 * One child: spawned in its own process group, stdin from a buffer, stdout
 * through an unlinked file read as it grows, stderr through a pipe into a
 * bounded tail, three clocks, and kills that go to its whole family (family.c:
 * its group, and whatever left it).
 *
 * Every callback records a fact; maybe_finish() decides. The child is over
 * when the leader has exited, its family is gone (or was SIGKILLed), stderr is
 * at EOF and the stdout file was read to its end. Then every handle is closed
 * and on_done runs from the last close callback, so it runs exactly once and
 * never from the exit callback.
 */
#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/internal.h"
#include "util/file.h"
#include "util/buf.h"
#include "util/macros.h"

/* The stdout file is polled every POLL_MIN_MS while it grows, backing off to POLL_MAX_MS. */
#define POLL_MIN_MS 10
#define POLL_MAX_MS 50
/* How much one poll reads before yielding to the loop (the final read has no limit). */
#define POLL_BUDGET ((size_t)4 << 20)
/* After the leader exits, the family is checked this often (backing off to GROUP_MAX_MS). */
#define GROUP_MIN_MS 5
#define GROUP_MAX_MS 100
/* After SIGKILL, how long we wait for the family to vanish before giving up on it. */
#define KILL_WAIT_MS 2000
/* A line buffer that grew past this is freed once its line was delivered. */
#define LINE_KEEP ((size_t)1 << 20)

enum kill_stage { KILL_NONE, KILL_TERM, KILL_KILL };

struct ar_child {
    struct ar_loop *loop;
    struct ar_child *prev, *next; /* loop->children while live */

    pid_t pid; /* the leader, also the process group id */
    struct ar_family fam;
    uv_pipe_t in, err;
    uv_timer_t clock;  /* wall, idle and final-grace deadlines; then the stderr drain */
    uv_timer_t killer; /* SIGTERM to SIGKILL, and watching the group after the leader */
    uv_timer_t poll;   /* reads the stdout file as it grows */
    uv_write_t wreq;
    int open_handles; /* on_done runs when the last one is closed */
    int kept;         /* the keeper lists its group (keeper.c) until the child is freed */

    char *name;             /* argv[0] as given, for messages */
    const char *stdin_data; /* borrowed from the caller until on_done (ar_child_opts) */
    size_t stdin_len;
    int out_fd;
    uint64_t out_off;
    uint64_t poll_ms;
    uint64_t group_ms;

    uint64_t timeout_ms, idle_ms, kill_grace_ms, final_grace_ms;
    size_t cap, tail_max;
    int capture;
    int finish_on_cancel;
    ar_child_line_fn *on_line;
    ar_child_done_fn *on_done;
    void *arg;

    uint64_t start_hr;
    uint64_t start_ms, activity_ms, final_at_ms, term_at_ms, kill_at_ms;
    int exited, err_eof, family_gone, finishing, toobig, draining;
    enum kill_stage kill;
    enum ar_child_end end;
    int64_t exit_status;
    int term_signal;
    uint64_t duration_ms;
    size_t stdout_bytes, stderr_bytes;
    struct ar_buf line, captured, tail;
};

static void maybe_finish(struct ar_child *c);
static void arm_clock(struct ar_child *c);

struct ar_child *ar_child_next_live(struct ar_child *c)
{
    return c->next;
}

static void link_child(struct ar_child *c)
{
    struct ar_loop *loop = c->loop;
    c->prev = NULL;
    c->next = loop->children;
    if (loop->children)
        loop->children->prev = c;
    loop->children = c;
    loop->nchildren++;
}

static void unlink_child(struct ar_child *c)
{
    struct ar_loop *loop = c->loop;
    if (c->prev)
        c->prev->next = c->next;
    else
        loop->children = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    loop->nchildren--;
}

static uint64_t now_ms(struct ar_child *c)
{
    return uv_now(c->loop->uv);
}

/* Sends sig to the family (0: only asks); returns how many of it still run. */
static int signal_family(struct ar_child *c, int sig)
{
    return ar_family_end(&c->fam, sig);
}

/* ---- Ending the family ----------------------------------------------------- */

static void on_killer(uv_timer_t *t);

static void arm_killer(struct ar_child *c)
{
    if (c->finishing)
        return;
    uint64_t now = now_ms(c), delay;
    if (!c->exited) {
        /* The exit callback tells us when the leader dies; only the escalation needs a clock. */
        if (c->kill == KILL_TERM)
            delay =
                c->term_at_ms + c->kill_grace_ms > now ? c->term_at_ms + c->kill_grace_ms - now : 0;
        else
            delay = GROUP_MAX_MS;
    } else {
        delay = c->group_ms;
        c->group_ms = AR_MIN(c->group_ms * 2, GROUP_MAX_MS);
        if (c->kill == KILL_TERM && c->term_at_ms + c->kill_grace_ms > now)
            delay = AR_MIN(delay, c->term_at_ms + c->kill_grace_ms - now);
    }
    uv_timer_start(&c->killer, on_killer, delay, 0);
}

static void send_kill(struct ar_child *c)
{
    c->kill = KILL_KILL;
    c->kill_at_ms = now_ms(c);
    signal_family(c, SIGKILL);
}

/* Starts ending the family: SIGTERM now, SIGKILL after the grace. */
static void terminate_family(struct ar_child *c)
{
    if (c->kill != KILL_NONE || c->finishing)
        return;
    c->kill = KILL_TERM;
    c->term_at_ms = now_ms(c);
    c->group_ms = GROUP_MIN_MS;
    signal_family(c, SIGTERM);
    arm_killer(c);
}

static void on_killer(uv_timer_t *t)
{
    struct ar_child *c = ar_container_of(t, struct ar_child, killer);
    ar_child_reap(c);
    if (c->finishing)
        return;
    uint64_t now = now_ms(c);
    /* Each look also sends the stage's signal to members found since (a fork, an orphan
     * another call let go). */
    int alive = signal_family(c, c->kill == KILL_TERM   ? SIGTERM
                                 : c->kill == KILL_KILL ? SIGKILL
                                                        : 0);
    /* A family still there 2 s after SIGKILL is stuck in the kernel: stop waiting for it. */
    if (c->exited && (!alive || (c->kill == KILL_KILL && now >= c->kill_at_ms + KILL_WAIT_MS))) {
        c->family_gone = 1;
        maybe_finish(c);
        return;
    }
    if (c->kill == KILL_TERM && now >= c->term_at_ms + c->kill_grace_ms)
        send_kill(c);
    arm_killer(c);
}

/* The first reason to end the child wins; a leader that already exited keeps AR_CHILD_EXITED. */
static void end_with(struct ar_child *c, enum ar_child_end why)
{
    /* Output past the cap is lost even when the leader already exited: that is too big too. */
    if (c->end == AR_CHILD_EXITED && (!c->exited || why == AR_CHILD_TOOBIG))
        c->end = why;
    terminate_family(c);
}

void ar_child_kill(struct ar_child *c)
{
    end_with(c, AR_CHILD_CANCELLED);
}

int ar_child_finishes_on_cancel(const struct ar_child *c)
{
    return c->finish_on_cancel;
}

void ar_child_kill_now(struct ar_child *c)
{
    if (c->finishing)
        return;
    end_with(c, AR_CHILD_CANCELLED);
    if (c->kill == KILL_TERM) {
        send_kill(c);
        arm_killer(c);
    }
}

void ar_child_final_seen(struct ar_child *c)
{
    if (c->finishing || c->exited || c->final_at_ms)
        return;
    if (c->final_grace_ms == 0) {
        end_with(c, AR_CHILD_FINAL_GRACE);
        return;
    }
    c->final_at_ms = now_ms(c) + c->final_grace_ms;
    arm_clock(c);
}

/* ---- Output ----------------------------------------------------------------- */

/* How many of n new stdout bytes still fit under the cap; past it the child is
 * too big. Only stdout counts: stderr is kept as a bounded tail and costs no memory. */
static size_t admit(struct ar_child *c, size_t n)
{
    size_t used = c->stdout_bytes;
    size_t room = c->cap > used ? c->cap - used : 0;
    if (n <= room)
        return n;
    c->toobig = 1;
    end_with(c, AR_CHILD_TOOBIG);
    return room;
}

static void deliver(struct ar_child *c, const char *line, size_t len)
{
    if (c->on_line)
        c->on_line(c, line, len, c->arg);
}

/* Splits stdout into lines. p has one writable byte past n (the scratch's +1). */
static void split_lines(struct ar_child *c, char *p, size_t n)
{
    while (n) {
        char *nl = memchr(p, '\n', n);
        if (!nl) {
            /* Cannot fail: the line buffer's limit is the cap, and admit() kept us under it. */
            ar_buf_append(&c->line, p, n);
            return;
        }
        size_t k = (size_t)(nl - p);
        if (c->line.len == 0) {
            /* The common case: the whole line is in this chunk, no copy. */
            *nl = '\0';
            deliver(c, p, k);
        } else {
            ar_buf_append(&c->line, p, k);
            deliver(c, c->line.data, c->line.len);
            if (c->line.cap > LINE_KEEP)
                ar_buf_finish(&c->line);
            else
                ar_buf_reset(&c->line);
        }
        p = nl + 1;
        n -= k + 1;
    }
}

static void took_stdout(struct ar_child *c, char *p, size_t n)
{
    n = admit(c, n);
    if (n == 0)
        return;
    c->stdout_bytes += n;
    c->activity_ms = now_ms(c);
    if (c->capture)
        ar_buf_append(&c->captured, p, n);
    if (c->on_line)
        split_lines(c, p, n);
}

/* Reads what the stdout file gained, up to budget bytes. Returns the bytes read. */
static size_t read_stdout(struct ar_child *c, size_t budget)
{
    char *buf = c->loop->out_scratch;
    size_t total = 0;
    while (!c->toobig && total < budget) {
        ssize_t n = pread(c->out_fd, buf, AR_PROC_CHUNK, (off_t)c->out_off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        c->out_off += (uint64_t)n;
        total += (size_t)n;
        took_stdout(c, buf, (size_t)n);
    }
    return total;
}

static void on_poll(uv_timer_t *t)
{
    struct ar_child *c = ar_container_of(t, struct ar_child, poll);
    size_t got = read_stdout(c, POLL_BUDGET);
    /* SIGCHLD tells us of the exit; asking here too costs one syscall and fears no lost signal. */
    ar_child_reap(c);
    if (c->finishing)
        return;
    /* The family learns who is in it while the links still show it. */
    ar_family_census(now_ms(c));
    if (got >= POLL_BUDGET)
        c->poll_ms = 0;
    else if (got)
        c->poll_ms = POLL_MIN_MS;
    else
        c->poll_ms = AR_MIN(AR_MAX(c->poll_ms * 2, POLL_MIN_MS), POLL_MAX_MS);
    uv_timer_start(&c->poll, on_poll, c->poll_ms, 0);
}

/* Keeps the last tail_max bytes of stderr in at most twice that much memory. */
static void keep_tail(struct ar_child *c, const char *p, size_t n)
{
    if (n >= c->tail_max) {
        ar_buf_reset(&c->tail);
        ar_buf_append(&c->tail, p + n - c->tail_max, c->tail_max);
        return;
    }
    if (c->tail.len + n > c->tail.max)
        ar_buf_consume(&c->tail, c->tail.len + n - c->tail_max);
    ar_buf_append(&c->tail, p, n);
}

static void on_err_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct ar_child *c = h->data;
    *buf = uv_buf_init(c->loop->err_scratch, (unsigned)AR_PROC_CHUNK);
}

static void on_close(uv_handle_t *h);

static void err_done(struct ar_child *c)
{
    c->err_eof = 1;
    if (!uv_is_closing((uv_handle_t *)&c->err))
        uv_close((uv_handle_t *)&c->err, on_close);
    maybe_finish(c);
}

static void on_err_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct ar_child *c = s->data;
    if (nread < 0) {
        /* UV_EOF, or an error that ends the stream just the same. */
        err_done(c);
        return;
    }
    if (nread == 0 || c->toobig)
        return; /* nothing read; past the cap we only drain so the child cannot block */
    size_t n = (size_t)nread;
    c->stderr_bytes += n;
    c->activity_ms = now_ms(c);
    keep_tail(c, buf->base, n);
}

/* ---- The clocks ------------------------------------------------------------- */

static void on_clock(uv_timer_t *t);

/* Arms the clock for the nearest of the wall, idle and final-grace deadlines. */
static void arm_clock(struct ar_child *c)
{
    if (c->finishing || c->exited || c->kill != KILL_NONE)
        return;
    uint64_t next = UINT64_MAX;
    if (c->timeout_ms)
        next = c->start_ms + c->timeout_ms;
    if (c->idle_ms)
        next = AR_MIN(next, c->activity_ms + c->idle_ms);
    if (c->final_at_ms)
        next = AR_MIN(next, c->final_at_ms);
    if (next == UINT64_MAX)
        return;
    uint64_t now = now_ms(c);
    uv_timer_start(&c->clock, on_clock, next > now ? next - now : 0, 0);
}

static void on_clock(uv_timer_t *t)
{
    struct ar_child *c = ar_container_of(t, struct ar_child, clock);
    if (c->finishing || c->exited || c->kill != KILL_NONE)
        return;
    /* Output may sit in the file since the last poll: it counts as activity. */
    read_stdout(c, POLL_BUDGET);
    if (c->kill != KILL_NONE)
        return;
    uint64_t now = now_ms(c);
    int timed_out = c->timeout_ms && now >= c->start_ms + c->timeout_ms;
    int idle = c->idle_ms && now >= c->activity_ms + c->idle_ms;
    /* After the final event the answer is complete: a deadline inside the
     * grace only ends the lingering process, as the grace would. */
    if (c->final_at_ms && (now >= c->final_at_ms || timed_out || idle))
        end_with(c, AR_CHILD_FINAL_GRACE);
    else if (timed_out)
        end_with(c, AR_CHILD_TIMEOUT);
    else if (idle)
        end_with(c, AR_CHILD_IDLE);
    else
        arm_clock(c);
}

/* The group is gone but something outside it still holds stderr: give it the grace, then stop. */
static void on_drain(uv_timer_t *t)
{
    struct ar_child *c = ar_container_of(t, struct ar_child, clock);
    if (!c->err_eof)
        err_done(c);
}

/* ---- Exit and completion ------------------------------------------------------ */

/* The leader was reaped: record how it ended, then see to the rest of its group. */
static void leader_exited(struct ar_child *c, int wstatus)
{
    c->duration_ms = (uv_hrtime() - c->start_hr) / 1000000u;
    c->exited = 1;
    c->exit_status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    c->term_signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    uv_timer_stop(&c->clock);
    read_stdout(c, POLL_BUDGET);
    /* Whatever the leader left behind (MCP servers, shells, in its group or not) is ended too. */
    if (signal_family(c, 0)) {
        if (c->kill == KILL_NONE)
            terminate_family(c);
        else {
            c->group_ms = GROUP_MIN_MS;
            arm_killer(c);
        }
        return;
    }
    c->family_gone = 1;
    maybe_finish(c);
}

void ar_child_reap(struct ar_child *c)
{
    if (c->exited)
        return;
    int st;
    pid_t r;
    while ((r = waitpid(c->pid, &st, WNOHANG)) < 0 && errno == EINTR)
        ;
    if (r == c->pid) {
        ar_family_reaped(&c->fam);
        leader_exited(c, st);
    } else if (r < 0 && errno == ECHILD) {
        /* Someone else reaped it (a waitpid(-1) elsewhere in the process): the status is lost. */
        ar_family_reaped(&c->fam);
        leader_exited(c, 255 << 8);
    }
}

static void fill_error(struct ar_child *c, struct ar_child_result *r)
{
    switch (c->end) {
    case AR_CHILD_TIMEOUT:
        ar_error_set(&r->err, AR_ETIMEOUT, c->name, "'%s' timed out after %llu ms", c->name,
                     (unsigned long long)c->timeout_ms);
        break;
    case AR_CHILD_IDLE:
        ar_error_set(&r->err, AR_EIDLE, c->name, "'%s' printed nothing for %llu ms", c->name,
                     (unsigned long long)c->idle_ms);
        break;
    case AR_CHILD_TOOBIG:
        ar_error_set(&r->err, AR_ETOOBIG, c->name, "'%s' printed more than %zu bytes", c->name,
                     c->cap);
        break;
    case AR_CHILD_CANCELLED:
        ar_error_set(&r->err, AR_EINTERRUPTED, c->name, "'%s' was interrupted", c->name);
        break;
    case AR_CHILD_EXITED:
    case AR_CHILD_FINAL_GRACE:
        break;
    }
}

static void free_child(struct ar_child *c)
{
    ar_family_leave(&c->fam);
    if (c->kept)
        ar_keeper_drop(c->pid);
    if (c->out_fd >= 0)
        close(c->out_fd);
    ar_buf_finish(&c->line);
    ar_buf_finish(&c->captured);
    ar_buf_finish(&c->tail);
    free(c->name);
    free(c);
}

static void report(struct ar_child *c)
{
    struct ar_child_result r;
    memset(&r, 0, sizeof(r));
    r.term_signal = c->term_signal;
    r.status = c->term_signal ? 128 + c->term_signal : (int)c->exit_status;
    r.pid = c->pid;
    r.duration_ms = c->duration_ms;
    r.end = c->end;
    r.stdout_bytes = c->stdout_bytes;
    r.stderr_bytes = c->stderr_bytes;
    size_t tl = AR_MIN(c->tail.len, c->tail_max);
    r.stderr_tail = ar_buf_cstr(&c->tail) + (c->tail.len - tl);
    r.stderr_tail_len = tl;
    if (c->capture) {
        r.stdout_data = ar_buf_cstr(&c->captured);
        r.stdout_len = c->captured.len;
    }
    fill_error(c, &r);
    c->on_done(c, &r, c->arg);
}

static void on_close(uv_handle_t *h)
{
    struct ar_child *c = h->data;
    if (--c->open_handles > 0)
        return;
    report(c);
    free_child(c);
}

static void close_handle(struct ar_child *c, void *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_close);
}

static void finish(struct ar_child *c)
{
    c->finishing = 1;
    /* The last bytes: written before the group ended, or by the leader just before exit. */
    read_stdout(c, SIZE_MAX);
    if (!c->toobig && c->line.len)
        deliver(c, ar_buf_cstr(&c->line), c->line.len);
    unlink_child(c);
    close_handle(c, &c->in);
    close_handle(c, &c->err);
    close_handle(c, &c->clock);
    close_handle(c, &c->killer);
    close_handle(c, &c->poll);
}

static void maybe_finish(struct ar_child *c)
{
    if (c->finishing || !c->exited || !c->family_gone)
        return;
    if (!c->err_eof) {
        if (!c->draining) {
            c->draining = 1;
            uv_timer_start(&c->clock, on_drain, c->kill_grace_ms, 0);
        }
        return;
    }
    finish(c);
}

/* ---- Spawning ------------------------------------------------------------------- */

static void on_write(uv_write_t *req, int status)
{
    struct ar_child *c = req->data;
    /* status < 0 (UV_EPIPE: the child closed stdin early) changes nothing: stdin is done. */
    c->stdin_data = NULL;
    close_handle(c, &c->in);
}

static void init_handle(struct ar_child *c, void *h)
{
    ((uv_handle_t *)h)->data = c;
    c->open_handles++;
}

int ar_child_spawn(struct ar_loop *loop, const struct ar_child_opts *opts, struct ar_child **out,
                   struct ar_error *err)
{
    assert(opts && opts->argv && opts->on_done);
    if (out)
        *out = NULL;
    const char *argv0 = opts->argv[0];
    if (!argv0)
        return ar_error_set(err, AR_ESPAWN, NULL, "cannot run a program: empty argv");
    if (loop->cancelled && !opts->after_cancel && !opts->finish_on_cancel)
        return ar_error_set(err, AR_EINTERRUPTED, argv0, "cannot run '%s': interrupted", argv0);
    if (opts->cwd && !ar_is_dir(opts->cwd))
        return ar_error_set_sys(err, AR_ESPAWN, ENOENT, argv0,
                                "cannot run '%s': '%s' is not a directory", argv0, opts->cwd);

    int rc;
    char **env = NULL, *file = NULL;
    const char *path_env = getenv("PATH");
    if (opts->env && opts->env[0] && (rc = ar_proc_build_env(opts->env, &env, &path_env, err)))
        return rc;
    if ((rc = ar_proc_find_program(argv0, opts->cwd, path_env, &file, err)))
        goto out_env;

    struct ar_child *c = calloc(1, sizeof(*c));
    if (!c || !(c->name = strdup(argv0))) {
        free(c);
        rc = ar_error_set(err, AR_ENOMEM, argv0, "cannot run '%s': out of memory", argv0);
        goto out_file;
    }
    c->loop = loop;
    c->out_fd = -1;
    c->timeout_ms = opts->timeout_ms;
    c->idle_ms = opts->idle_timeout_ms;
    c->kill_grace_ms = opts->kill_grace_ms ? opts->kill_grace_ms : AR_CHILD_DEFAULT_KILL_GRACE_MS;
    c->final_grace_ms = opts->final_grace_ms;
    c->cap = opts->output_cap ? opts->output_cap : AR_CHILD_DEFAULT_OUTPUT_CAP;
    c->tail_max = opts->stderr_tail ? opts->stderr_tail : AR_CHILD_DEFAULT_STDERR_TAIL;
    c->capture = opts->capture_stdout;
    c->finish_on_cancel = opts->finish_on_cancel;
    c->on_line = opts->on_line;
    c->on_done = opts->on_done;
    c->arg = opts->arg;
    ar_buf_init(&c->line, c->cap);
    ar_buf_init(&c->captured, c->cap);
    ar_buf_init(&c->tail, 2 * c->tail_max);
    if (opts->stdin_len > UINT32_MAX) {
        free_child(c);
        rc =
            ar_error_set(err, AR_ETOOBIG, argv0, "cannot run '%s': stdin larger than 4 GiB", argv0);
        goto out_file;
    }
    /* Borrowed, not copied: a prompt can be tens of MiB, and the caller keeps it
     * until on_done anyway (the pipeline's rendered prompt lives as long as the run). */
    c->stdin_data = opts->stdin_data;
    c->stdin_len = opts->stdin_data ? opts->stdin_len : 0;
    if ((c->out_fd = ar_proc_open_stdout_file(err)) < 0) {
        rc = err ? err->code : AR_ESPAWN;
        free_child(c);
        goto out_file;
    }

    uv_loop_t *uv = loop->uv;
    int in_w, err_r;
    /* Before the spawn, so an exit at once cannot come before anyone listens for SIGCHLD. */
    if ((rc = ar_loop_watch_children(loop, err)))
        goto out_child;
    c->start_hr = uv_hrtime();
    uv_update_time(uv);
    c->start_ms = c->activity_ms = uv_now(uv);
    ar_family_lock();
    unsigned long long born = ar_family_clock();
    rc = ar_proc_launch(file, argv0, opts->argv, env, opts->cwd, c->out_fd, &in_w, &err_r, &c->pid,
                        err);
    if (rc == 0) {
        ar_family_join(&c->fam, c->pid, born, c->start_ms);
        ar_keeper_add(c->pid);
        c->kept = 1;
    }
    ar_family_unlock();
    if (rc)
        goto out_child;

    uv_pipe_init(uv, &c->in, 0);
    init_handle(c, &c->in);
    uv_pipe_open(&c->in, in_w);
    uv_pipe_init(uv, &c->err, 0);
    init_handle(c, &c->err);
    uv_pipe_open(&c->err, err_r);
    uv_timer_init(uv, &c->clock);
    init_handle(c, &c->clock);
    uv_timer_init(uv, &c->killer);
    init_handle(c, &c->killer);
    uv_timer_init(uv, &c->poll);
    init_handle(c, &c->poll);
    link_child(c);

    uv_read_start((uv_stream_t *)&c->err, on_err_alloc, on_err_read);
    if (c->stdin_len) {
        c->wreq.data = c;
        /* libuv takes a char *, and only reads it. */
        uv_buf_t b = uv_buf_init((char *)c->stdin_data, (unsigned)c->stdin_len);
        if (uv_write(&c->wreq, (uv_stream_t *)&c->in, &b, 1, on_write) < 0)
            close_handle(c, &c->in);
    } else {
        /* An empty prompt is still an EOF: codex waits forever on an open stdin. */
        close_handle(c, &c->in);
    }
    c->poll_ms = POLL_MIN_MS;
    uv_timer_start(&c->poll, on_poll, c->poll_ms, 0);
    arm_clock(c);
    if (out)
        *out = c;
    rc = 0;
    goto out_file;

out_child:
    free_child(c);
out_file:
    free(file);
out_env:
    ar_proc_free_env(env);
    return rc;
}

int64_t ar_child_pid(const struct ar_child *c)
{
    return c->pid;
}
