/*
 * Work off the loop thread: libuv's thread pool runs a blocking function
 * (reading and hashing files) while the loop goes on serving every other
 * child, and the completion comes back on the loop thread.
 */
#include <stdlib.h>

#include "proc/internal.h"
#include "util/macros.h"

struct work {
    uv_work_t req;
    ar_job_fn *work;
    ar_job_fn *done;
    void *arg;
};

static void on_work(uv_work_t *req)
{
    struct work *w = ar_container_of(req, struct work, req);
    w->work(w->arg);
}

static void on_after_work(uv_work_t *req, int status)
{
    struct work *w = ar_container_of(req, struct work, req);
    (void)status; /* never cancelled: uv_cancel() is not used on these requests */
    ar_job_fn *done = w->done;
    void *arg = w->arg;
    free(w);
    done(arg);
}

int ar_loop_work(struct ar_loop *loop, ar_job_fn *work, ar_job_fn *done, void *arg)
{
    struct work *w = malloc(sizeof(*w));
    if (!w)
        return AR_ENOMEM;
    w->work = work;
    w->done = done;
    w->arg = arg;
    int rc = uv_queue_work(loop->uv, &w->req, on_work, on_after_work);
    /* uv_queue_work() fails only for a NULL work callback, which cannot happen here. */
    if (rc < 0) {
        free(w);
        return AR_ENOMEM;
    }
    return 0;
}
