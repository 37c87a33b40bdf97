/*
 * A batch with the agentrun library on your own libuv loop (docs/library.md, "Batch").
 *
 *   cc batch.c $(pkg-config --cflags --libs agentrun libuv) -o batch
 *   ./batch jobs.jsonl 8 5.00     # the JSON Lines jobs of a file, 8 at once, at most $5
 *   ./batch - 2 < jobs.jsonl      # from stdin
 *   ./batch --prompts "Name a colour" "Name a fruit"   # jobs built in C, ids p1, p2
 *
 * Prints one record per finished job on stdout (what `agentrun batch` writes), a
 * summary on stderr, and exits with the number of failed jobs (at most 100).
 * Ctrl-C cancels: the running jobs are ended, the others never start; a second
 * Ctrl-C kills at once.
 */
#define _POSIX_C_SOURCE 200809L /* getline() */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <agentrun/batch.h>
#include <uv.h>

struct app {
    struct ar_batch *batch; /* valid from ar_batch_start() until done returns */
    uv_signal_t sigint;
    struct ar_batch_stats end;
};

static void on_record(struct ar_batch *b, const struct ar_batch_record *rec, void *arg)
{
    (void)b;
    (void)arg;
    switch (rec->outcome) {
    case AR_BATCH_FINISHED:
        /* rec->result is the job's struct ar_result; rec->json its record, '\n' included. */
        if (rec->json)
            fwrite(rec->json, 1, rec->json_len, stdout);
        fflush(stdout);
        if (!rec->result->ok)
            fprintf(stderr, "job %s failed: %s\n", rec->id, rec->result->error.msg);
        break;
    case AR_BATCH_SKIPPED:
        fprintf(stderr, "job %s: done by an earlier batch\n", rec->id);
        break;
    case AR_BATCH_NOT_STARTED:
        fprintf(stderr, "job %s: never started\n", rec->id);
        break;
    }
}

static void on_done(struct ar_batch *b, const struct ar_batch_stats *st, void *arg)
{
    struct app *app = arg;
    (void)b;
    app->end = *st;
    app->batch = NULL;
    /* The batch is over: the signal watcher must not keep the loop alive. */
    uv_close((uv_handle_t *)&app->sigint, NULL);
}

static void on_sigint(uv_signal_t *h, int signum)
{
    struct app *app = h->data;
    (void)signum;
    if (app->batch)
        ar_batch_cancel(app->batch); /* the second Ctrl-C: SIGKILL at once */
}

/* Adds every line of f as a job. Returns 0 or an AR_E… code. */
static int add_lines(struct ar_batch *b, FILE *f, struct ar_error *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n')
            n--;
        rc = ar_batch_add_line(b, line, (size_t)n, err);
    }
    free(line);
    return rc;
}

/* Adds one job per prompt, built in C from the batch's defaults. */
static int add_prompts(struct ar_batch *b, const struct ar_run_options *defaults, int n,
                       char **prompts, struct ar_error *err)
{
    for (int i = 0; i < n; i++) {
        struct ar_run_options o = *defaults;
        o.prompt = prompts[i]; /* copied by ar_batch_add() */
        char id[32];
        snprintf(id, sizeof(id), "p%d", i + 1);
        int rc = ar_batch_add(b, id, &o, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: batch FILE|- [JOBS [MAX_USD]] | batch --prompts PROMPT...\n");
        return 100;
    }
    int prompts = strcmp(argv[1], "--prompts") == 0;
    FILE *in = NULL;
    if (!prompts) {
        in = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "r");
        if (!in) {
            perror(argv[1]);
            return 100;
        }
    }

    uv_loop_t loop;
    uv_loop_init(&loop);
    struct app app = { 0 };
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    if (!prompts && argc > 2)
        o.jobs = (unsigned)atoi(argv[2]);
    if (!prompts && argc > 3)
        o.max_cost_usd = atof(argv[3]);
    o.defaults.want_json = 1; /* each answer's JSON is checked and in its record */

    struct ar_error err = AR_ERROR_INIT;
    if (ar_batch_start(&loop, &o, on_record, on_done, &app, &app.batch, &err) < 0) {
        fprintf(stderr, "cannot start the batch: %s\n", err.msg);
        return 100;
    }
    uv_signal_init(&loop, &app.sigint);
    app.sigint.data = &app;
    uv_signal_start(&app.sigint, on_sigint, SIGINT);

    int rc = prompts ? add_prompts(app.batch, &o.defaults, argc - 2, argv + 2, &err)
                     : add_lines(app.batch, in, &err);
    if (rc < 0) {
        fprintf(stderr, "cannot add a job: %s\n", err.msg);
        ar_batch_cancel(app.batch); /* nothing starts; the batch still ends from the loop */
    }
    ar_batch_close(app.batch);
    uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0)
        fprintf(stderr, "the loop still had open handles\n");
    if (in && in != stdin)
        fclose(in);

    const struct ar_batch_stats *st = &app.end;
    fprintf(stderr, "%zu ok, %zu failed (%zu over budget), %zu skipped, %zu never started; $%.4f",
            st->ok, st->failed, st->budget_stopped, st->skipped, st->not_started, st->cost_usd);
    if (st->unknown_cost)
        fprintf(stderr, " + %zu jobs of unknown cost", st->unknown_cost);
    fprintf(stderr, "; %llu output tokens\n", (unsigned long long)st->usage.output);
    if (rc < 0)
        return 100;
    return st->failed + st->not_started > 99 ? 99 : (int)(st->failed + st->not_started);
}
