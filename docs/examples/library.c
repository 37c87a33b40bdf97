/*
 * The agentrun library on your own libuv loop: runs with events and cancel.
 * (docs/library.md walks through it.)
 *
 *   cc library.c $(pkg-config --cflags --libs agentrun libuv) -o library
 *   ./library run "List two colours"       # one run: call events, then the JSON
 *   ./library cancel "Write a novel" 500   # a run cancelled after 500 ms
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <agentrun/agentrun.h>
#include <uv.h>

static const char *schema = "{\"type\": \"object\", \"required\": [\"colours\"],"
                            " \"properties\": {\"colours\": {\"type\": \"array\","
                            " \"items\": {\"type\": \"string\"}}}}";

/* ---- a run, with its events ------------------------------------------------------------ */

struct job {
    struct ar_run *run; /* valid from ar_run_start() until done returns */
    uv_timer_t timer;   /* the cancel timer of `library cancel` */
    int status;         /* the exit status, set by done */
};

static void on_call(void *arg, const char *job, enum ar_call_event ev,
                    const struct ar_call_record *call)
{
    (void)arg;
    (void)job; /* options.job_id: NULL here, a batch job's id in a batch */
    if (ev == AR_CALL_STARTED)
        fprintf(stderr, "%s call to %s started\n", call->kind, call->provider);
    else
        fprintf(stderr, "%s call to %s finished: exit %d, %llu output tokens%s%s\n", call->kind,
                call->provider, call->exit_code, (unsigned long long)call->usage.output,
                call->error ? ", error " : "", call->error ? call->error : "");
}

static void on_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    (void)run;
    struct job *job = arg;
    job->run = NULL;
    job->status = ar_result_exit_status(res);
    if (res->ok)
        printf("%s\n", res->json);
    else
        fprintf(stderr, "run: %s: %s\n", ar_strerror_name(res->error.code), res->error.msg);
    ar_result_destroy(res); /* the result is ours */
    if (uv_is_active((uv_handle_t *)&job->timer))
        uv_timer_stop(&job->timer);
}

static void on_timer(uv_timer_t *t)
{
    struct job *job = t->data;
    if (job->run) {
        fprintf(stderr, "cancelling\n");
        ar_run_cancel(job->run); /* done still comes, with error "interrupted" */
    }
}

static int run_one(uv_loop_t *loop, const char *prompt, long cancel_after_ms)
{
    struct ar_run_options o;
    ar_run_options_init(&o);
    o.prompt = prompt;
    o.schema = schema;
    o.track_files = AR_TRACK_FILES_NEVER;
    o.on_call = on_call;

    struct job job = { .status = 0 };
    uv_timer_init(loop, &job.timer);
    job.timer.data = &job;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_run_start(loop, &o, on_done, &job, &job.run, &err) < 0) {
        fprintf(stderr, "run: %s\n", err.msg); /* bad options: done never comes */
        job.status = 2;
    } else if (cancel_after_ms >= 0) {
        uv_timer_start(&job.timer, on_timer, (uint64_t)cancel_after_ms, 0);
    }
    uv_run(loop, UV_RUN_DEFAULT); /* until the run is done */
    uv_close((uv_handle_t *)&job.timer, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    return job.status;
}

/* ---- main ------------------------------------------------------------------------------- */

static int usage(void)
{
    fputs("usage: library run PROMPT\n"
          "       library cancel PROMPT MILLISECONDS\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0)
        return 2;
    int status;
    if (strcmp(argv[1], "run") == 0)
        status = run_one(&loop, argv[2], -1);
    else if (strcmp(argv[1], "cancel") == 0 && argc == 4)
        status = run_one(&loop, argv[2], strtol(argv[3], NULL, 10));
    else
        status = usage();
    if (uv_loop_close(&loop) != 0) {
        fprintf(stderr, "library: the loop still had open handles\n");
        status = 2;
    }
    return status;
}
