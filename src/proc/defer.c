/* One-shot callbacks from the loop: how a run that needs no child still ends asynchronously. */
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
    uv_timer_init(&loop->uv, &d->timer);
    uv_timer_start(&d->timer, on_timer, 0, 0);
    return 0;
}
