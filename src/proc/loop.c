/*
 * The loop: one uv_loop_t, the list of live children, the signal watchers and
 * tickers. Children, kicks and tickers hang off it; it outlives them all.
 */
#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proc/internal.h"
#include "util/macros.h"

static const int watched_signals[AR_PROC_NSIGNALS] = { SIGINT, SIGTERM, SIGHUP };

static void ignore_sigpipe(void)
{
    /*
     * A child that closes its stdin early must give us UV_EPIPE, not kill us.
     * The CLI ignores SIGPIPE at startup already; a library caller that left
     * it at the default gets the same, since nothing good comes from dying here.
     */
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
}

/*
 * A loop with its fields zeroed and its two 64 KiB read buffers left as they are: they
 * are written before they are read, and zeroing them touched 32 pages at every start
 * (a quarter of the instructions of an `agentrun run`).
 */
static struct ar_loop *loop_new(void)
{
    struct ar_loop *loop = malloc(sizeof(*loop));
    if (loop)
        memset(loop, 0, offsetof(struct ar_loop, out_scratch));
    return loop;
}

struct ar_loop *ar_loop_create(struct ar_error *err)
{
    ignore_sigpipe();
    struct ar_loop *loop = loop_new();
    if (!loop) {
        ar_error_set(err, AR_ENOMEM, NULL, "cannot create the event loop: out of memory");
        return NULL;
    }
    int rc = uv_loop_init(&loop->own_uv);
    if (rc < 0) {
        ar_error_set_sys(err, AR_ESPAWN, rc, NULL, "cannot create the event loop: %s",
                         uv_strerror(rc));
        free(loop);
        return NULL;
    }
    loop->uv = &loop->own_uv;
    return loop;
}

struct ar_loop *ar_loop_attach(struct uv_loop_s *uv, struct ar_error *err)
{
    ignore_sigpipe();
    struct ar_loop *loop = loop_new();
    if (!loop) {
        ar_error_set(err, AR_ENOMEM, NULL, "cannot attach to the event loop: out of memory");
        return NULL;
    }
    loop->uv = uv;
    loop->attached = 1;
    return loop;
}

int ar_loop_run_private(ar_loop_start_fn *start, void *arg, struct ar_error *err)
{
    uv_loop_t uv;
    int rc = uv_loop_init(&uv);
    if (rc < 0)
        return ar_error_set_sys(err, AR_ESPAWN, rc, NULL, "cannot create the event loop: %s",
                                uv_strerror(rc));
    rc = start(&uv, arg, err);
    uv_run(&uv, UV_RUN_DEFAULT);
    /* Every handle is closed by now (the suites check it on their own loops); were
     * one left open, the loop's memory would only leak, never abort the host. */
    uv_loop_close(&uv);
    return rc;
}

static void on_detach_close(uv_handle_t *h)
{
    struct ar_loop *loop = h->data;
    if (--loop->closing == 0)
        free(loop);
}

static void close_handles(struct ar_loop *loop, uv_close_cb cb)
{
    for (int i = 0; i < loop->sig_watching; i++) {
        if (!uv_is_closing((uv_handle_t *)&loop->sig[i])) {
            loop->closing++;
            uv_close((uv_handle_t *)&loop->sig[i], cb);
        }
    }
    loop->sig_watching = 0;
    if (loop->sigchld_on) {
        loop->closing++;
        uv_close((uv_handle_t *)&loop->sigchld, cb);
    }
    loop->sigchld_on = 0;
}

static void detach_now(void *arg)
{
    struct ar_loop *loop = arg;
    /* A child still finishing keeps the loop: its last callbacks use the list. */
    if (loop->nchildren && ar_loop_defer(loop, detach_now, loop) == 0)
        return;
    close_handles(loop, on_detach_close);
    if (loop->closing == 0)
        free(loop);
}

void ar_loop_detach(struct ar_loop *loop)
{
    if (!loop)
        return;
    assert(loop->attached && !loop->detaching);
    loop->detaching = 1;
    /* It never ran a child, watched a signal or waited: nothing of it is on the
     * caller's loop, so the caller may close that at once (a start that failed). */
    if (!loop->nchildren && !loop->sigchld_on && !loop->sig_watching && !loop->waits) {
        free(loop);
        return;
    }
    /*
     * From the loop's next turn, never from here: the caller is usually inside a
     * callback of the last child, whose own teardown still reaches the loop.
     */
    if (ar_loop_defer(loop, detach_now, loop) != 0)
        detach_now(loop); /* out of memory: the children are gone when done ran */
}

int ar_loop_run(struct ar_loop *loop)
{
    uv_run(loop->uv, UV_RUN_DEFAULT);
    return 0;
}

void ar_loop_cancel_all(struct ar_loop *loop)
{
    if (loop->cancelled) {
        /* A second cancel: the caller is impatient, skip the grace. */
        loop->killed = 1;
        for (struct ar_child *c = loop->children; c; c = ar_child_next_live(c))
            ar_child_kill_now(c);
        return;
    }
    loop->cancelled = 1;
    /* ar_child_kill() only sends signals and arms timers: the list stays as it is. */
    for (struct ar_child *c = loop->children; c; c = ar_child_next_live(c))
        if (!ar_child_finishes_on_cancel(c))
            ar_child_kill(c);
    ar_wait_cancel_all(loop);
}

int ar_loop_cancelled(const struct ar_loop *loop)
{
    return loop->cancelled;
}

static void on_sigchld(uv_signal_t *h, int signum)
{
    struct ar_loop *loop = h->data;
    /*
     * One SIGCHLD may stand for several exits. Reaping only ends the child
     * (on_done comes later, from a close callback), so the list holds still
     * except for the child at hand: take the next one first.
     */
    for (struct ar_child *c = loop->children, *next; c; c = next) {
        next = ar_child_next_live(c);
        ar_child_reap(c);
    }
    /* Or an orphan we adopted died: nobody else will reap it. */
    ar_family_reap_orphans();
}

int ar_loop_watch_children(struct ar_loop *loop, struct ar_error *err)
{
    if (loop->sigchld_on)
        return 0;
    int rc = uv_signal_init(loop->uv, &loop->sigchld);
    if (rc == 0) {
        loop->sigchld.data = loop;
        loop->sigchld_on = 1;
        rc = uv_signal_start(&loop->sigchld, on_sigchld, SIGCHLD);
    }
    if (rc < 0)
        return ar_error_set_sys(err, AR_ESPAWN, rc, NULL, "cannot watch SIGCHLD: %s",
                                uv_strerror(rc));
    /* The children's own handles keep the loop alive, not this. */
    uv_unref((uv_handle_t *)&loop->sigchld);
    return 0;
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct ar_loop *loop = h->data;
    if (loop->sig_seen++ == 0) {
        ar_loop_cancel_all(loop);
        if (loop->sig_fn)
            loop->sig_fn(signum, loop->sig_arg);
        return;
    }
    /* A second signal: the user is impatient, skip the grace. */
    if (!loop->killed)
        ar_loop_cancel_all(loop);
}

int ar_loop_watch_signals(struct ar_loop *loop, ar_signal_fn *fn, void *arg, struct ar_error *err)
{
    assert(!loop->sig_watching);
    loop->sig_fn = fn;
    loop->sig_arg = arg;
    for (int i = 0; i < AR_PROC_NSIGNALS; i++) {
        int rc = uv_signal_init(loop->uv, &loop->sig[i]);
        if (rc < 0)
            goto fail;
        loop->sig[i].data = loop;
        loop->sig_watching = i + 1; /* from here on ar_loop_destroy() closes it */
        rc = uv_signal_start(&loop->sig[i], on_signal, watched_signals[i]);
        if (rc < 0)
            goto fail;
        /* Watching must not keep the loop alive on its own. */
        uv_unref((uv_handle_t *)&loop->sig[i]);
        continue;
    fail:
        return ar_error_set_sys(err, AR_ESPAWN, rc, NULL, "cannot watch signal %d: %s",
                                watched_signals[i], uv_strerror(rc));
    }
    return 0;
}

int ar_loop_destroy(struct ar_loop *loop)
{
    if (!loop)
        return 0;
    assert(!loop->attached);
    if (loop->nchildren)
        return -1;
    close_handles(loop, NULL);
    loop->closing = 0;
    /*
     * Let pending close callbacks run (kicks and tickers stopped after
     * ar_loop_run() returned free their memory there). A handle that is still
     * active (a ticker never stopped) is a bug: a few turns, never forever.
     */
    for (int i = 0; i < 8 && uv_loop_alive(loop->uv); i++)
        uv_run(loop->uv, UV_RUN_NOWAIT);
    if (uv_loop_close(loop->uv) != 0)
        return -1; /* the loop memory stays: freeing it under live handles would be worse */
    free(loop);
    return 0;
}

struct ar_ticker {
    uv_timer_t timer;
    ar_ticker_fn *fn;
    void *arg;
};

static void on_tick(uv_timer_t *t)
{
    struct ar_ticker *tk = ar_container_of(t, struct ar_ticker, timer);
    tk->fn(tk->arg);
}

struct ar_ticker *ar_ticker_start(struct ar_loop *loop, uint64_t every_ms, ar_ticker_fn *fn,
                                  void *arg)
{
    struct ar_ticker *tk = calloc(1, sizeof(*tk));
    if (!tk)
        return NULL;
    tk->fn = fn;
    tk->arg = arg;
    uv_timer_init(loop->uv, &tk->timer);
    if (every_ms == 0)
        every_ms = 1;
    uv_timer_start(&tk->timer, on_tick, every_ms, every_ms);
    /* A status line must not keep the loop running after the last child. */
    uv_unref((uv_handle_t *)&tk->timer);
    return tk;
}

static void free_ticker(uv_handle_t *h)
{
    free(ar_container_of(h, struct ar_ticker, timer));
}

void ar_ticker_stop(struct ar_ticker *tk)
{
    if (!tk || uv_is_closing((uv_handle_t *)&tk->timer))
        return;
    uv_close((uv_handle_t *)&tk->timer, free_ticker);
}

uint64_t ar_now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

uint64_t ar_loop_now_ms(const struct ar_loop *loop)
{
    return loop->manual_clock ? loop->clock_ms : ar_now_ms();
}

void ar_loop_clock_manual(struct ar_loop *loop, uint64_t now_ms)
{
    loop->manual_clock = 1;
    loop->clock_ms = now_ms;
}
