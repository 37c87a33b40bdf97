/*
 * The public run API: one pipeline on an agentrun loop of its own, attached
 * to the caller's libuv loop, and the blocking ar_run() as a thin wrapper
 * that brings a private libuv loop.
 */
#include <uv.h>

#include "proc/proc.h"
#include "run/run.h"

int ar_run_start(struct uv_loop_s *uv, const struct ar_run_options *opts, ar_run_done_fn *done,
                 void *arg, struct ar_run **out, struct ar_error *err)
{
    struct ar_error local = AR_ERROR_INIT;
    if (!err)
        err = &local;
    if (out)
        *out = NULL;
    if (!uv || !opts || !done)
        return ar_error_set(err, AR_EUSAGE, NULL,
                            "ar_run_start() needs a loop, options and a done callback");
    struct ar_loop *loop = ar_loop_attach(uv, err);
    if (!loop)
        return err->code;
    struct ar_run *run = NULL;
    int rc = ar_pipeline_start(loop, opts, NULL, done, arg, &run, err);
    if (rc < 0) {
        ar_loop_detach(loop);
        return rc;
    }
    ar_pipeline_own_loop(run, loop);
    if (out)
        *out = run;
    return 0;
}

void ar_run_cancel(struct ar_run *run)
{
    if (run)
        ar_pipeline_cancel(run);
}

static void on_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    (void)run;
    *(struct ar_result **)arg = res;
}

int ar_run(const struct ar_run_options *opts, struct ar_result **out, struct ar_error *err)
{
    *out = NULL;
    uv_loop_t uv;
    int rc = uv_loop_init(&uv);
    if (rc < 0)
        return ar_error_set_sys(err, AR_ESPAWN, rc, NULL, "cannot create the event loop: %s",
                                uv_strerror(rc));
    struct ar_result *res = NULL;
    rc = ar_run_start(&uv, opts, on_done, &res, NULL, err);
    /* Also after a failed start: the detach of its loop runs from the loop. */
    uv_run(&uv, UV_RUN_DEFAULT);
    uv_loop_close(&uv);
    if (rc < 0)
        return rc;
    *out = res;
    return 0;
}
