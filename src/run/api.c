/*
 * The public run API: one pipeline on an agentrun loop of its own, attached
 * to the caller's libuv loop, and the blocking ar_run() as a thin wrapper on
 * a private loop (ar_loop_run_private()).
 */
#include <string.h>

#include "proc/proc.h"
#include "run/run.h"
#include "run/start.h"

/* The defaults of a run: the one place they are written (the supervisor owns its
 * kill grace and output cap, proc.h). */
void ar_run_options_init(struct ar_run_options *o)
{
    memset(o, 0, sizeof(*o));
    o->expect = AR_EXPECT_OBJECT;
    o->model_repair = 1;
    o->local_repair = 1;
    o->track_files = AR_TRACK_FILES_EDITS;
    o->max_wait_ms = 60000;
    o->timeout_ms = 900000;
    o->idle_timeout_ms = 300000;
    o->final_grace_ms = 3000;
    o->kill_grace_ms = AR_CHILD_DEFAULT_KILL_GRACE_MS;
    o->output_cap = AR_CHILD_DEFAULT_OUTPUT_CAP;
    o->logger = (struct ar_logger)AR_LOGGER_INIT;
}

int ar_run_start(struct uv_loop_s *uv, const struct ar_run_options *opts, ar_run_done_fn *done,
                 void *arg, struct ar_run **out, struct ar_error *err)
{
    AR_START_ARGS(ar_run_start, err, out, uv && opts && done,
                  "a loop, options and a done callback");
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

AR_DEFINE_BLOCKING(ar_run, ar_run_start, struct ar_run_options, struct ar_run, struct ar_result)
