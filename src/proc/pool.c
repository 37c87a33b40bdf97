/*
 * The job pool: at most max_running jobs at once, the rest waiting in order.
 *
 * Jobs are started from an idle handle, never from inside ar_pool_submit() or
 * ar_pool_release(): a job that ends synchronously (its spawn failed) would
 * otherwise start the next one from inside its own completion, and a long
 * queue of failures would recurse as deep as it is long.
 */
#include <assert.h>
#include <stdlib.h>

#include "proc/internal.h"
#include "util/macros.h"

struct ar_job {
    ar_job_fn *start;
    ar_job_fn *cancel;
    void *arg;
    struct ar_job *next;
};

struct ar_pool {
    struct ar_loop *loop;
    uv_idle_t idle; /* active only while a queued job could start */
    unsigned max_running;
    unsigned running;
    struct ar_job *head, *tail;
    size_t queued;
};

static void on_idle(uv_idle_t *h)
{
    struct ar_pool *pool = ar_container_of(h, struct ar_pool, idle);
    /* A start() that releases at once frees its slot for the next turn of this loop. */
    while (pool->head && pool->running < pool->max_running) {
        struct ar_job *job = pool->head;
        pool->head = job->next;
        if (!pool->head)
            pool->tail = NULL;
        pool->queued--;
        pool->running++;
        ar_job_fn *start = job->start;
        void *arg = job->arg;
        free(job);
        start(arg);
    }
    if (!pool->head || pool->running >= pool->max_running)
        uv_idle_stop(&pool->idle);
}

static void kick(struct ar_pool *pool)
{
    if (pool->head && pool->running < pool->max_running)
        uv_idle_start(&pool->idle, on_idle); /* a no-op when already active */
}

struct ar_pool *ar_pool_create(struct ar_loop *loop, unsigned max_running)
{
    struct ar_pool *pool = calloc(1, sizeof(*pool));
    if (!pool)
        return NULL;
    pool->loop = loop;
    pool->max_running = max_running ? max_running : 1;
    uv_idle_init(loop->uv, &pool->idle);
    return pool;
}

int ar_pool_submit(struct ar_pool *pool, ar_job_fn *start, ar_job_fn *cancel, void *arg)
{
    assert(start);
    struct ar_job *job = calloc(1, sizeof(*job));
    if (!job)
        return AR_ENOMEM;
    job->start = start;
    job->cancel = cancel;
    job->arg = arg;
    if (pool->tail)
        pool->tail->next = job;
    else
        pool->head = job;
    pool->tail = job;
    pool->queued++;
    kick(pool);
    return 0;
}

void ar_pool_release(struct ar_pool *pool)
{
    assert(pool->running > 0);
    pool->running--;
    kick(pool);
}

void ar_pool_cancel_queued(struct ar_pool *pool)
{
    /* Detached first: a cancel callback may submit again, and that job is not cancelled. */
    struct ar_job *job = pool->head;
    pool->head = pool->tail = NULL;
    pool->queued = 0;
    while (job) {
        struct ar_job *next = job->next;
        if (job->cancel)
            job->cancel(job->arg);
        free(job);
        job = next;
    }
}

unsigned ar_pool_running(const struct ar_pool *pool)
{
    return pool->running;
}

size_t ar_pool_queued(const struct ar_pool *pool)
{
    return pool->queued;
}

static void free_pool(uv_handle_t *h)
{
    free(ar_container_of(h, struct ar_pool, idle));
}

void ar_pool_destroy(struct ar_pool *pool)
{
    if (!pool)
        return;
    assert(pool->running == 0 && pool->queued == 0);
    /* Freed in the close callback: the next turn of the loop, or ar_loop_destroy(). */
    uv_close((uv_handle_t *)&pool->idle, free_pool);
}
