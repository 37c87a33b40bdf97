/*
 * A code review with the agentrun library on your own libuv loop: findings,
 * a verdict, and Ctrl-C that cancels the model calls. (docs/library.md,
 * "Review", walks through it.)
 *
 *   cc review.c $(pkg-config --cflags --libs agentrun libuv) -o review
 *   ./review                 # the working tree against HEAD
 *   ./review main...HEAD     # a range
 *   git diff | ./review -    # a diff on standard input
 *   ./review --format sarif main...HEAD > review.sarif
 *
 * With --format NAME (text, json, sarif, github, rdjsonl, gitlab, checkstyle) the
 * result is written by the library, as `agentrun review --format NAME` writes it.
 *
 * Exit status: the verdict's (0 pass, 1 findings at or above medium, 4 the
 * provider failed, 130 interrupted), 2 when the review could not start.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <agentrun/review.h>
#include <uv.h>

struct app {
    struct ar_review_run *review; /* valid from ar_review_start() until done returns */
    uv_signal_t sigint;
    int format; /* an enum ar_review_format, or -1: print the findings ourselves */
    int status;
};

static void on_event(void *arg, const struct ar_review_event *ev)
{
    (void)arg;
    if (ev->kind == AR_REVIEW_CHUNK_FINISHED)
        fprintf(stderr, "chunk %zu of %zu reviewed\n", ev->chunk + 1, ev->n_chunks);
}

/* Where ar_review_write() puts the document: standard output, all of it or an error. */
static int write_stdout(void *arg, const char *data, size_t n)
{
    (void)arg;
    return fwrite(data, 1, n, stdout) == n && fflush(stdout) == 0 ? 0 : -1;
}

/* The whole result in one of the formats of `agentrun review --format`. */
static int write_format(const struct ar_review_result *res, int format)
{
    struct ar_review_write_options wo;
    ar_review_write_options_init(&wo);
    struct ar_error err = AR_ERROR_INIT;
    if (ar_review_write(res, (enum ar_review_format)format, &wo, write_stdout, NULL, &err) != 0) {
        fprintf(stderr, "review: cannot write the review: %s\n", err.msg);
        return 2;
    }
    return res->verdict.exit_status;
}

static void on_done(struct ar_review_run *review, struct ar_review_result *res, void *arg)
{
    (void)review;
    struct app *app = arg;
    app->review = NULL;
    if (app->format >= 0) {
        app->status = write_format(res, app->format);
        ar_review_result_destroy(res);
        uv_close((uv_handle_t *)&app->sigint, NULL);
        return;
    }
    const struct ar_review *rv = &res->review;
    if (!res->plan.reviewed)
        printf("nothing to review: %s\n", res->plan.why_not);
    else if (rv->failed)
        fprintf(stderr, "review failed: %s: %s\n", ar_strerror_name(rv->error.code), rv->error.msg);
    for (size_t i = 0; i < rv->n_issues; i++) {
        const struct ar_review_issue *is = &rv->issues[i];
        printf("%s:%lld: %s: %s\n", is->file, (long long)is->line,
               ar_severity_name((int)is->severity), is->message);
    }
    /* A changed file neither reviewed nor left out by a rule of ours fails the review. */
    for (size_t i = 0; i < res->coverage.n_files; i++) {
        const struct ar_review_file *f = &res->coverage.files[i];
        if (f->status != AR_COVER_REVIEWED && !f->rule)
            printf("not reviewed: %s: %s\n", f->path, f->why ? f->why : "");
    }
    if (rv->summary && *rv->summary)
        printf("%s\n", rv->summary);
    fprintf(stderr, "%zu chunk(s), %llu output tokens\n", rv->chunks,
            (unsigned long long)rv->usage.output);
    app->status = res->verdict.exit_status;
    ar_review_result_destroy(res); /* the result is ours */
    uv_close((uv_handle_t *)&app->sigint, NULL);
}

/* Ctrl-C: the first cancels (SIGTERM to the CLIs), a second one SIGKILLs them. */
static void on_sigint(uv_signal_t *h, int signum)
{
    (void)signum;
    struct app *app = h->data;
    if (app->review)
        ar_review_cancel(app->review);
}

/* Reads all of standard input. Returns a new string, its length in *len. */
static char *read_stdin(size_t *len)
{
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger)
                free(buf);
            buf = bigger;
        }
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    struct ar_review_options o;
    ar_review_options_init(&o);
    int format = -1;
    if (argc > 2 && strcmp(argv[1], "--format") == 0) {
        if ((format = ar_review_format_from_name(argv[2])) < 0) {
            fprintf(stderr, "review: no format '%s'\n", argv[2]);
            return 2;
        }
        argc -= 2;
        argv += 2;
    }
    char *text = NULL;
    if (argc > 1 && strcmp(argv[1], "-") == 0) {
        text = read_stdin(&o.diff_len);
        if (!text)
            return 2;
        o.diff = text;
        o.label = "stdin";
    } else if (argc > 1) {
        o.rev = argv[1]; /* a revision or a range */
    }
    o.fail_on = AR_SEV_MEDIUM; /* low and info findings do not fail */
    o.run.timeout_ms = 600000; /* per chunk */
    o.on_event = on_event;

    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0)
        return 2;
    struct app app = { .format = format, .status = 2 };
    uv_signal_init(&loop, &app.sigint);
    app.sigint.data = &app;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_review_start(&loop, &o, on_done, &app, &app.review, &err) < 0) {
        /* A bad revision, not a git repository, too many chunks: no call was made. */
        fprintf(stderr, "review: %s\n", err.msg);
        uv_close((uv_handle_t *)&app.sigint, NULL);
    } else {
        const struct ar_review_plan *plan = ar_review_plan(app.review);
        fprintf(stderr, "reviewing %s: %zu file(s) in %zu chunk(s)\n",
                plan->source ? plan->source : "the diff", plan->n_files, plan->n_chunks);
        uv_signal_start(&app.sigint, on_sigint, SIGINT);
    }
    uv_run(&loop, UV_RUN_DEFAULT); /* until the review is done */
    free(text);                    /* the review copied it at the start */
    if (uv_loop_close(&loop) != 0) {
        fprintf(stderr, "review: the loop still had open handles\n");
        return 2;
    }
    return app.status;
}
