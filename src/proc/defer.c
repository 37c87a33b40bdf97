/*
 * One-shot callbacks from the loop: how a run that needs no child still ends
 * asynchronously, and the cancellable waits of a rate limit's backoff.
 */
#include <stdlib.h>

#include "proc/internal.h"
#include "util/macros.h"

struct defer {
    uv_timer_t timer;
    ar_job_fn *fn;
    void *arg;
};

static void on_close(uv_handle_t *h)
{
    free(ar_container_of((uv_timer_t *)h, struct defer, timer));
}

static void on_timer(uv_timer_t *t)
{
    struct defer *d = ar_container_of(t, struct defer, timer);
    uv_close((uv_handle_t *)&d->timer, on_close);
    d->fn(d->arg);
}

int ar_loop_defer(struct ar_loop *loop, ar_job_fn *fn, void *arg)
{
    struct defer *d = malloc(sizeof(*d));
    if (!d)
        return AR_ENOMEM;
    d->fn = fn;
    d->arg = arg;
    uv_timer_init(loop->uv, &d->timer);
    uv_timer_start(&d->timer, on_timer, 0, 0);
    return 0;
}

struct ar_kick {
    uv_timer_t timer;
    ar_job_fn *fn;
    void *arg;
};

static void on_kick(uv_timer_t *t)
{
    struct ar_kick *k = ar_container_of(t, struct ar_kick, timer);
    k->fn(k->arg);
}

struct ar_kick *ar_kick_create(struct ar_loop *loop, ar_job_fn *fn, void *arg)
{
    struct ar_kick *k = malloc(sizeof(*k));
    if (!k)
        return NULL;
    k->fn = fn;
    k->arg = arg;
    uv_timer_init(loop->uv, &k->timer);
    return k;
}

void ar_kick(struct ar_kick *k)
{
    /* Restarting a pending one-shot timer keeps one firing: kicks fold together. */
    uv_timer_start(&k->timer, on_kick, 0, 0);
}

static void on_kick_close(uv_handle_t *h)
{
    free(ar_container_of((uv_timer_t *)h, struct ar_kick, timer));
}

void ar_kick_destroy(struct ar_kick *k)
{
    if (k)
        uv_close((uv_handle_t *)&k->timer, on_kick_close);
}

struct ar_wait {
    uv_timer_t timer;
    struct ar_loop *loop;
    struct ar_wait *prev, *next;
    ar_wait_fn *fn;
    void *arg;
    int cancelled;
    int fired;
    int parked;      /* on a manual clock: the timer is not started until due_ms */
    uint64_t due_ms; /* on a manual clock */
};

static void wait_unlink(struct ar_wait *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        w->loop->waits = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

static void on_wait_close(uv_handle_t *h)
{
    free(ar_container_of((uv_timer_t *)h, struct ar_wait, timer));
}

static void on_wait_timer(uv_timer_t *t)
{
    struct ar_wait *w = ar_container_of(t, struct ar_wait, timer);
    w->fired = 1;
    wait_unlink(w);
    uv_close((uv_handle_t *)&w->timer, on_wait_close);
    w->fn(w->arg, w->cancelled);
}

int ar_wait_start(struct ar_loop *loop, uint64_t ms, ar_wait_fn *fn, void *arg,
                  struct ar_wait **out)
{
    struct ar_wait *w = calloc(1, sizeof(*w));
    if (!w)
        return AR_ENOMEM;
    w->loop = loop;
    w->fn = fn;
    w->arg = arg;
    w->cancelled = loop->cancelled;
    w->next = loop->waits;
    if (w->next)
        w->next->prev = w;
    loop->waits = w;
    uv_timer_init(loop->uv, &w->timer);
    if (loop->manual_clock && !w->cancelled && ms > 0) {
        w->parked = 1; /* ar_loop_clock_advance() starts it */
        w->due_ms = loop->clock_ms + ms;
    } else {
        uv_timer_start(&w->timer, on_wait_timer, w->cancelled ? 0 : ms, 0);
    }
    if (out)
        *out = w;
    return 0;
}

void ar_loop_clock_advance(struct ar_loop *loop, uint64_t ms)
{
    loop->clock_ms += ms;
    for (;;) {
        /* The list is newest first: among waits due together, the last one seen is the
         * oldest. A timer started later fires later among equal timeouts. */
        struct ar_wait *next = NULL;
        for (struct ar_wait *w = loop->waits; w; w = w->next)
            if (w->parked && w->due_ms <= loop->clock_ms && (!next || w->due_ms <= next->due_ms))
                next = w;
        if (!next)
            return;
        next->parked = 0;
        uv_timer_start(&next->timer, on_wait_timer, 0, 0);
    }
}

void ar_wait_cancel(struct ar_wait *w)
{
    if (!w || w->fired || w->cancelled)
        return;
    w->cancelled = 1;
    w->parked = 0;
    /* Restarting the timer at 0 reports from the loop, never from inside this call. */
    uv_timer_start(&w->timer, on_wait_timer, 0, 0);
}

void ar_wait_cancel_all(struct ar_loop *loop)
{
    for (struct ar_wait *w = loop->waits; w; w = w->next)
        ar_wait_cancel(w);
}
