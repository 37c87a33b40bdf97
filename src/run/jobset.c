/*
 * The job set (jobset.h): the loop, the cap, the shared backoff, a pipeline
 * per job, cancel and the end, for every scheduler of the library.
 */
#include <assert.h>
#include <stdlib.h>

#include "proc/proc.h"
#include "run/jobset.h"
#include "run/run.h"
#include "run/share.h"

struct ar_jobset {
    struct ar_loop *loop;       /* attached to the caller's, ours alone */
    struct ar_share *share;     /* the owner's, or own_share: every job's rules */
    struct ar_share *own_share; /* one for the set when the owner gave none */
    struct ar_kick *kick;       /* the next pump, from the loop */
    const struct ar_jobset_ops *ops;
    void *owner;
    unsigned cap, running, cancelled;
    int kicked;
};

/* What a running job's done callback needs: its set and the owner's job. */
struct slot {
    struct ar_jobset *js;
    void *job;
};

static void on_kick(void *arg)
{
    struct ar_jobset *js = arg;
    js->kicked = 0;
    js->ops->pump(js->owner);
}

struct ar_jobset *ar_jobset_create(struct uv_loop_s *uv, unsigned jobs,
                                   const struct ar_jobset_ops *ops, void *owner,
                                   struct ar_share *share, struct ar_error *err)
{
    struct ar_jobset *js = calloc(1, sizeof(*js));
    if (!js) {
        ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    js->share = share;
    if (!share) {
        struct ar_share_options so;
        ar_share_options_init(&so);
        if (ar_share_create(&so, &js->own_share, err) < 0) {
            free(js);
            return NULL;
        }
        js->share = js->own_share;
    }
    if (!(js->loop = ar_loop_attach(uv, err))) {
        ar_share_destroy(js->own_share);
        free(js);
        return NULL;
    }
    if (!(js->kick = ar_kick_create(js->loop, on_kick, js))) {
        ar_loop_detach(js->loop);
        ar_share_destroy(js->own_share);
        free(js);
        ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    js->ops = ops;
    js->owner = owner;
    js->cap = ar_proc_jobs_within_fd_limit(jobs ? jobs : 1);
    return js;
}

unsigned ar_jobset_cap(const struct ar_jobset *js)
{
    return js->cap;
}

unsigned ar_jobset_running(const struct ar_jobset *js)
{
    return js->running;
}

int ar_jobset_room(const struct ar_jobset *js)
{
    return !js->cancelled && js->running < js->cap;
}

unsigned ar_jobset_cancelled(const struct ar_jobset *js)
{
    return js->cancelled;
}

struct ar_loop *ar_jobset_loop(const struct ar_jobset *js)
{
    return js->loop;
}

static void on_run_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    struct slot *s = arg;
    struct ar_jobset *js = s->js;
    void *job = s->job;
    (void)run;
    free(s);
    js->running--;
    js->ops->done(js->owner, job, res);
    /* The last thing: the pump may end the set. */
    js->ops->pump(js->owner);
}

int ar_jobset_start(struct ar_jobset *js, const struct ar_run_options *o,
                    const struct ar_pipeline_extra *extra, void *job, struct ar_error *err)
{
    if (js->cancelled)
        return ar_error_set(err, AR_EINTERRUPTED, NULL, "interrupted");
    if (js->running >= js->cap)
        return ar_error_set(err, AR_EUSAGE, NULL, "%u jobs already run", js->running);
    struct slot *s = malloc(sizeof(*s));
    if (!s)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    *s = (struct slot){ js, job };
    struct ar_run_options with = *o;
    if (!with.share)
        with.share = js->share;
    int rc = ar_pipeline_start(js->loop, &with, extra, on_run_done, s, NULL, err);
    if (rc < 0) {
        free(s);
        return rc;
    }
    js->running++;
    return 0;
}

void ar_jobset_kick(struct ar_jobset *js)
{
    js->kicked = 1;
    ar_kick(js->kick);
}

int ar_jobset_kicked(const struct ar_jobset *js)
{
    return js->kicked;
}

void ar_jobset_cancel(struct ar_jobset *js)
{
    js->cancelled++;
    /* The first call ends every job's CLI group (SIGTERM, then SIGKILL after the
     * grace); a second one SIGKILLs them at once. */
    ar_loop_cancel_all(js->loop);
    ar_jobset_kick(js);
}

void ar_jobset_end(struct ar_jobset *js)
{
    if (!js)
        return;
    assert(js->running == 0);
    ar_kick_destroy(js->kick);
    ar_loop_detach(js->loop);
    ar_share_destroy(js->own_share);
    free(js);
}

struct ar_share *ar_jobset_share(const struct ar_jobset *js)
{
    return js->share;
}
