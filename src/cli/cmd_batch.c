/*
 * agentrun batch: many jobs from JSON Lines, N at a time on one loop, one
 * RunResult line per job as each finishes.
 *
 * Scheduling is a small loop of its own rather than the FIFO pool: a job may
 * have to wait while another edit job holds its work tree (git status cannot
 * tell two writers apart), and the budget decides before each start whether
 * a job may start at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch/job.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cost/cost.h"
#include "json/dump.h"
#include "proc/proc.h"
#include "run/run.h"
#include "util/buf.h"
#include "util/file.h"

enum {
    KEY_JOBS = 'j',
    KEY_RESUME_FROM = AR_CLI_KEY_COMMAND,
    KEY_MAX_COST,
    KEY_ALLOW_EDITS,
    KEY_NO_FILES,
    KEY_TRACK_FILES,
    KEY_OUTPUT,
    KEY_RESUME,
    KEY_ALLOW_DENIED,
    KEY_EXPECT_CHANGES,
};

static const struct ar_cli_opt opts[] = {
    { "jobs", 'j', "N", "run N jobs at once (default: 4)", NULL },
    { "resume-from", KEY_RESUME_FROM, "FILE",
      "skip the ids FILE (an earlier batch's output) holds with \"ok\": true; a missing FILE "
      "holds none",
      "@file" },
    { "resume", KEY_RESUME, NULL,
      "with -o FILE: skip the ids FILE already holds as ok and keep one final record per id "
      "there, so the same command resumes until done",
      NULL },
    { "max-cost", KEY_MAX_COST, "USD",
      "stop starting jobs once spent + a reservation per running job (the dearest job so far) "
      "would pass USD; the rest fail with error budget (exit 6)",
      NULL },
    { "allow-edits", KEY_ALLOW_EDITS, NULL, "let every job edit files (a job may say so itself)",
      NULL },
    { "allow-denied", KEY_ALLOW_DENIED, NULL,
      "a tool call the CLI refused does not fail a job (a job may say so itself)", NULL },
    { "expect-changes", KEY_EXPECT_CHANGES, NULL,
      "a job that changed no file fails with no_effect (a job may say so itself)", NULL },
    { "no-files", KEY_NO_FILES, NULL, "skip the git snapshots of every job", NULL },
    { "track-files", KEY_TRACK_FILES, NULL,
      "take the git snapshots also for jobs that cannot edit (a job may say so itself)", NULL },
    { "output", 'o', "FILE", "write the records to FILE instead of stdout (appended)", "@file" },
    AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

struct job_state {
    struct ar_batch_job job;
    int state;  /* PENDING, RUNNING, DONE */
    int waited; /* held back at least once: another edit job had its work tree */
    struct batch *b;
};

enum { PENDING, RUNNING, DONE };

struct batch {
    struct ar_cli_session s;
    struct job_state *jobs;
    size_t n;
    size_t first_pending; /* every job before it has started or ended */
    unsigned max_running;
    unsigned running;
    size_t ok, failed, skipped, budget_stopped, not_started;
    size_t waited; /* edit jobs that waited for their work tree */
    struct ar_usage usage;
    double cost;
    size_t unknown_cost;
    double max_cost;
    double max_seen_cost; /* the dearest finished job: each running job's reservation */
    int stop;             /* 1: budget, 2: signal or broken output */
    int worst;            /* the worst exit status so far */
    int serial_said;
    FILE *out;
    uint64_t t0;
    int write_failed;           /* a record could not be written: exit 2, as run does */
    struct ar_backoff *backoff; /* one rate-limit pause per provider for all jobs */
};

/* Exit statuses by how bad they are for a batch: the worst one is the exit. */
static int rank(int status)
{
    switch (status) {
    case 0:
        return 0;
    case AR_EXIT_USAGE:
        return 1;
    case AR_EXIT_OUTPUT:
        return 2;
    case AR_EXIT_PROVIDER:
        return 3;
    case AR_EXIT_TIMEOUT:
        return 4;
    case AR_EXIT_BUDGET:
        return 5;
    default:
        return 6;
    }
}

static void note_status(struct batch *b, int status)
{
    if (rank(status) > rank(b->worst))
        b->worst = status;
}

static void emit(struct batch *b, const struct ar_batch_job *job, struct ar_result *r)
{
    json_t *rec = json_object();
    /* The id as the input gave it: 7 stays a number, so `.id == 7` finds it. */
    json_object_set_new(rec, "id",
                        job->id_is_integer ? json_integer(strtoll(job->id, NULL, 10))
                                           : json_string(job->id));
    json_t *v = ar_result_to_value(r);
    json_object_update(rec, v);
    json_decref(v);
    struct ar_buf line;
    ar_buf_init(&line, AR_BUF_UNLIMITED);
    /* "json" as the model wrote it: r->json, not the jansson value (json/doc.h). */
    if (ar_json_dump_compact_raw(rec, r->value, r->json, &line) == 0)
        ar_buf_putc(&line, '\n');
    json_decref(rec);
    ar_cli_session_status_clear(&b->s);
    /* One write() per record (stdio would cut a large one into several), so two
     * batches appending to one file (O_APPEND) never interleave their records; a
     * consumer can stream, and an interruption keeps every finished record whole. */
    if (fflush(b->out) != 0 || ar_write_all(fileno(b->out), line.data, line.len) != 0) {
        if (b->stop != 2)
            ar_cli_errorf("cannot write a record: %s; stopping", strerror(errno));
        b->stop = 2;
        b->write_failed = 1;
        note_status(b, AR_EXIT_USAGE);
        ar_loop_cancel_all(b->s.loop);
    }
    ar_buf_finish(&line);

    if (r->ok)
        b->ok++;
    else
        b->failed++;
    note_status(b, ar_result_exit_status(r));
    b->usage.input += r->usage.input;
    b->usage.cache_read += r->usage.cache_read;
    b->usage.cache_write += r->usage.cache_write;
    b->usage.output += r->usage.output;
    b->usage.reasoning += r->usage.reasoning;
    if (r->n_calls && r->cost_source == AR_COST_UNKNOWN)
        b->unknown_cost++;
    else if (r->n_calls)
        b->cost += r->cost_usd;
}

static void emit_failed(struct batch *b, struct job_state *js, int code, const char *msg)
{
    struct ar_result *r = ar_result_new_failed(NULL, code, msg);
    if (!r)
        return;
    emit(b, &js->job, r);
    ar_result_destroy(r);
    js->state = DONE;
}

static void update_status(struct batch *b)
{
    size_t done = b->ok + b->failed;
    size_t total = b->n - b->skipped;
    char eta[32] = "";
    if (done && done < total) {
        uint64_t per = (ar_now_ms() - b->t0) / done;
        uint64_t left = per * (total - done) / (b->max_running ? b->max_running : 1) / 1000;
        snprintf(eta, sizeof(eta), ", ETA %lu:%02lu", (unsigned long)(left / 60),
                 (unsigned long)(left % 60));
    }
    snprintf(b->s.status_extra, sizeof(b->s.status_extra),
             "%zu/%zu done, %u running, %zu failed, %llu tokens, $%.4f%s", done, total, b->running,
             b->failed,
             (unsigned long long)(b->usage.input + b->usage.cache_read + b->usage.output), b->cost,
             eta);
}

static void pump(struct batch *b);

/* The batch's status line shows counts, not one job's tool; but a job waiting out a
 * rate limit (a pause the provider's other jobs share) is shown as a countdown. */
static void on_job_progress(void *arg, const struct ar_run_progress *p)
{
    struct ar_cli_session *s = arg;
    if (!p->wait_ms)
        return;
    uint64_t until = ar_now_ms() + p->wait_ms;
    if (until > s->wait_until_ms) {
        s->wait_until_ms = until;
        snprintf(s->wait_reason, sizeof(s->wait_reason), "%s paused", p->provider);
    }
}

static void on_job_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    struct job_state *js = arg;
    struct batch *b = js->b;
    js->state = DONE;
    b->running--;
    if (res->cost_source != AR_COST_UNKNOWN && res->cost_usd > b->max_seen_cost)
        b->max_seen_cost = res->cost_usd;
    /* A cost the price table does not know cannot be held against the cap, and
     * counting it as zero would let the batch run past it: stop starting jobs. */
    if (b->max_cost > 0 && res->n_calls && res->cost_source == AR_COST_UNKNOWN && !b->stop) {
        ar_cli_warnf("job '%s' cost an unknown amount (model %s is not in the price table), so "
                     "--max-cost can no longer be kept: no more jobs start; --prices FILE "
                     "prices it",
                     js->job.id, res->model ? res->model : "unknown");
        b->stop = 1;
    }
    emit(b, &js->job, res);
    ar_result_destroy(res);
    update_status(b);
    pump(b);
}

static int tree_busy(const struct batch *b, const char *tree)
{
    for (size_t i = 0; i < b->n; i++) {
        const struct job_state *o = &b->jobs[i];
        if (o->state == RUNNING && o->job.worktree && strcmp(o->job.worktree, tree) == 0)
            return 1;
    }
    return 0;
}

enum { BUDGET_START, BUDGET_WAIT, BUDGET_OVER };

/*
 * May this job start now, as far as the budget goes? Every running job and
 * this one reserve the dearest job's cost so far, recomputed as costs come in.
 * Before any job has cost something the estimate is the whole remaining budget,
 * never $0: jobs then run one at a time until the first cost is known.
 */
static int budget_check(struct batch *b, struct job_state *js)
{
    if (b->max_cost <= 0)
        return BUDGET_START;
    double left = b->max_cost - b->cost;
    if (!(b->max_seen_cost > 0)) {
        if (b->running)
            return BUDGET_WAIT;
        js->job.opts.max_cost_usd = left;
        return BUDGET_START;
    }
    double est = b->max_seen_cost;
    if (b->cost + (b->running + 1) * est > b->max_cost)
        return BUDGET_OVER;
    js->job.opts.max_cost_usd = left - b->running * est;
    return BUDGET_START;
}

static void start(struct batch *b, struct job_state *js)
{
    struct ar_error err = AR_ERROR_INIT;
    js->state = RUNNING;
    b->running++;
    js->job.opts.job_id = js->job.id;
    js->job.opts.progress = on_job_progress;
    js->job.opts.progress_arg = &b->s;
    if (ar_pipeline_start(b->s.loop, &js->job.opts, b->backoff, on_job_done, js, NULL, &err) < 0) {
        b->running--;
        /* Which line, and where in the template ("greet.md:1") when that is the cause. */
        char msg[sizeof(err.msg) + sizeof(err.where) + 48];
        if (err.where[0] && !strstr(err.msg, err.where))
            snprintf(msg, sizeof(msg), "line %zu: %s: %s", js->job.line, err.where, err.msg);
        else
            snprintf(msg, sizeof(msg), "line %zu: %s", js->job.line, err.msg);
        emit_failed(b, js, err.code, msg);
    }
}

static void pump(struct batch *b)
{
    if (b->s.signal && !b->stop)
        b->stop = 2;
    while (b->first_pending < b->n && b->jobs[b->first_pending].state != PENDING)
        b->first_pending++;
    for (size_t i = b->first_pending; i < b->n && b->running < b->max_running && !b->stop; i++) {
        struct job_state *js = &b->jobs[i];
        if (js->state != PENDING)
            continue;
        if (js->job.error) {
            emit_failed(b, js, AR_EUSAGE, js->job.error);
            continue;
        }
        if (js->job.worktree && tree_busy(b, js->job.worktree)) {
            if (!js->waited) {
                js->waited = 1;
                b->waited++;
            }
            if (!b->serial_said) {
                ar_cli_warnf("jobs that edit the same work tree run one at a time, so that each "
                             "one's files are its own");
                b->serial_said = 1;
            }
            continue;
        }
        int budget = budget_check(b, js);
        if (budget == BUDGET_WAIT)
            break;
        if (budget == BUDGET_OVER) {
            b->stop = 1;
            break;
        }
        start(b, js);
    }
    /* Over budget: nothing more starts; the rest are reported once nothing runs
     * (a running job's cost may still come in). */
    if (b->stop == 1 && b->running == 0) {
        for (size_t i = b->first_pending; i < b->n; i++)
            if (b->jobs[i].state == PENDING) {
                emit_failed(b, &b->jobs[i], AR_EBUDGET,
                            b->unknown_cost
                                ? "not started: an earlier job's cost is unknown, so --max-cost "
                                  "could no longer be kept"
                                : "not started: the batch would pass --max-cost");
                b->budget_stopped++;
            }
    }
}

/* The id of a record as the job list keys it ("7" for 7), or NULL when the line is
 * not a record (a line cut off by an interruption). Borrowed from rec or num. */
static const char *record_key(const json_t *rec, char num[32])
{
    const json_t *id = json_object_get(rec, "id");
    if (json_is_integer(id)) {
        snprintf(num, 32, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        return num;
    }
    return json_string_value(id);
}

/*
 * Reads an earlier output into *buf and marks in done_ids every id it holds a
 * record with "ok": true for. A file that does not exist yet holds none, so the
 * first run of a resumable command line is the same command as the later ones.
 */
static int load_resume(const struct ar_cli_command *cmd, const char *path, json_t *done_ids,
                       struct ar_buf *buf)
{
    struct ar_error err = AR_ERROR_INIT;
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        ar_cli_notef("'%s' does not exist yet: every job runs", path);
        return 0;
    }
    if (ar_file_read(path, buf, &err) < 0)
        return ar_cli_usage_error(cmd, "--resume-from: %s", err.msg);
    for (const char *p = buf->data, *end = buf->data + buf->len; p && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!ar_batch_line_blank(p, len)) {
            json_t *rec = json_loadb(p, len, 0, NULL);
            char num[32];
            const char *key = record_key(rec, num);
            if (key && json_is_true(json_object_get(rec, "ok")))
                json_object_set_new(done_ids, key, json_true());
            json_decref(rec);
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/*
 * --resume: the output file is both the record of what is done and where the new
 * records go. It is first rewritten (a new file renamed over it, so a crash leaves
 * the old one whole) to hold one record per id: the last ok one, else the last one
 * of an id this run does not retry. Cut lines and the failed records of the jobs
 * about to run again are dropped, so when the batch ends each id has exactly one
 * record, its final one.
 */
static int compact_output(struct batch *b, const char *path, const struct ar_buf *old)
{
    if (!old->data)
        return 0;
    json_t *best = json_object(); /* id -> [line offset, ok] */
    for (const char *p = old->data, *end = old->data + old->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_t *rec = ar_batch_line_blank(p, len) ? NULL : json_loadb(p, len, 0, NULL);
        char num[32];
        const char *key = record_key(rec, num);
        if (key) {
            int ok = json_is_true(json_object_get(rec, "ok"));
            json_t *cur = json_object_get(best, key);
            if (ok || !cur || !json_is_true(json_array_get(cur, 1)))
                json_object_set_new(best, key, json_pack("[Ib]", (json_int_t)(p - old->data), ok));
        }
        json_decref(rec);
        p = nl ? nl + 1 : end;
    }
    for (size_t i = 0; i < b->n; i++)
        if (b->jobs[i].state == PENDING && !b->jobs[i].job.error)
            json_object_del(best, b->jobs[i].job.id);

    char *tmp = NULL;
    int rc = -1;
    if (asprintf(&tmp, "%s.agentrun-tmp", path) < 0) {
        tmp = NULL;
        goto out;
    }
    FILE *f = fopen(tmp, "w");
    if (!f)
        goto out;
    int bad = 0;
    for (const char *p = old->data, *end = old->data + old->len; p < end && !bad;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_t *rec = ar_batch_line_blank(p, len) ? NULL : json_loadb(p, len, 0, NULL);
        char num[32];
        const char *key = record_key(rec, num);
        json_t *keep = key ? json_object_get(best, key) : NULL;
        if (keep && json_integer_value(json_array_get(keep, 0)) == (json_int_t)(p - old->data))
            bad = fwrite(p, 1, len, f) != len || fputc('\n', f) == EOF;
        json_decref(rec);
        p = nl ? nl + 1 : end;
    }
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (!bad && rename(tmp, path) == 0)
        rc = 0;
    else
        unlink(tmp);
out:
    if (rc < 0)
        ar_cli_errorf("cannot rewrite '%s' for --resume: %s", path, strerror(errno));
    free(tmp);
    json_decref(best);
    return rc;
}

static int load_jobs(struct batch *b, const char *input, const json_t *done_ids)
{
    struct ar_buf buf;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&buf, AR_BUF_UNLIMITED);
    if (ar_file_read(input, &buf, &err) < 0) {
        ar_buf_finish(&buf);
        return ar_cli_usage_error(b->s.cmd, "%s", err.msg);
    }
    size_t cap = 0, lineno = 0;
    json_t *seen = json_object();
    for (const char *p = buf.data, *end = buf.data + buf.len; p && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        if (!ar_batch_line_blank(p, len)) {
            if (b->n == cap) {
                cap = cap ? cap * 2 : 64;
                struct job_state *v = realloc(b->jobs, cap * sizeof(*v));
                if (!v)
                    abort();
                b->jobs = v;
            }
            struct job_state *js = &b->jobs[b->n];
            memset(js, 0, sizeof(*js));
            js->b = b;
            if (ar_batch_job_parse(p, len, lineno, &b->s.run, &js->job) < 0)
                abort();
            b->n++;
            json_t *first = js->job.error ? NULL : json_object_get(seen, js->job.id);
            if (first) {
                /* Its record is keyed by its line, as for a line without an id, so
                 * the output never holds two records of one id. */
                char msg[200];
                snprintf(msg, sizeof(msg),
                         "line %zu: id '%.100s' is used twice (first on line %" JSON_INTEGER_FORMAT
                         ")",
                         lineno, js->job.id, json_integer_value(first));
                js->job.error = strdup(msg);
                free(js->job.id);
                if (asprintf(&js->job.id, "line %zu", lineno) < 0)
                    abort();
                js->job.id_is_integer = 0;
            } else if (!js->job.error) {
                json_object_set_new(seen, js->job.id, json_integer((json_int_t)lineno));
            }
            if (!js->job.error && json_object_get(done_ids, js->job.id)) {
                js->state = DONE;
                b->skipped++;
            }
        }
        p = nl ? nl + 1 : end;
    }
    json_decref(seen);
    ar_buf_finish(&buf);
    return 0;
}

static void summary(struct batch *b)
{
    if (ar_cli_verbosity < 0)
        return;
    double secs = (double)(ar_now_ms() - b->t0) / 1000.0;
    if (b->s.log_json) {
        /* One more event line, not prose, for a reader of JSON lines. */
        json_t *o =
            json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I},s:o,s:I,s:I}",
                      "level", "info", "event", "batch_finished", "ok", (json_int_t)b->ok, "failed",
                      (json_int_t)b->failed, "skipped", (json_int_t)b->skipped, "not_started",
                      (json_int_t)b->not_started, "budget_stopped", (json_int_t)b->budget_stopped,
                      "edit_jobs_waited", (json_int_t)b->waited, "tokens", "input",
                      (json_int_t)b->usage.input, "cache_read", (json_int_t)b->usage.cache_read,
                      "cache_write", (json_int_t)b->usage.cache_write, "output",
                      (json_int_t)b->usage.output, "reasoning", (json_int_t)b->usage.reasoning,
                      "cost_usd", json_real(ar_cost_round(b->cost)), "unknown_cost_jobs",
                      (json_int_t)b->unknown_cost, "duration_ms", (json_int_t)(secs * 1000));
        ar_cli_print_json_event(o);
        return;
    }
    char cost[80];
    snprintf(cost, sizeof(cost), "$%.4f", b->cost);
    if (b->unknown_cost)
        snprintf(cost + strlen(cost), sizeof(cost) - strlen(cost), " + %zu job%s of unknown cost",
                 b->unknown_cost, b->unknown_cost == 1 ? "" : "s");
    char failed[64];
    snprintf(failed, sizeof(failed), "%zu failed", b->failed);
    if (b->budget_stopped)
        snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed),
                 " (%zu not started: budget)", b->budget_stopped);
    char pending[48] = "";
    if (b->not_started)
        snprintf(pending, sizeof(pending), ", %zu not started", b->not_started);
    fprintf(stderr,
            "agentrun batch: %zu ok, %s, %zu skipped%s; %llu input + %llu cached + %llu output "
            "tokens; %s; %.1f s\n",
            b->ok, failed, b->skipped, pending, (unsigned long long)b->usage.input,
            (unsigned long long)(b->usage.cache_read + b->usage.cache_write),
            (unsigned long long)b->usage.output, cost, secs);
    /* Until jobs get work trees of their own, git cannot tell two writers apart. */
    if (b->waited)
        fprintf(stderr,
                "agentrun batch: edit jobs in one work tree ran one at a time (%zu waited for "
                "theirs)\n",
                b->waited);
}

/*
 * A batch killed in the middle of a record leaves a line without its newline.
 * Appending straight after it would glue the next record onto that garbage, and
 * --resume-from could not count it: end the cut line first.
 */
static int end_line(FILE *f, const char *path)
{
    /* Only a regular file is read back: a FIFO opened for reading too would
     * keep our writes blocking after its reader has gone. */
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0; /* write-only for us: nothing to check */
    char c;
    ssize_t n = pread(fd, &c, 1, st.st_size - 1);
    close(fd);
    if (n != 1 || c == '\n')
        return 0;
    if (fputc('\n', f) == EOF || fflush(f) != 0)
        return -1;
    return 0;
}

static int batch_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct batch b;
    struct ar_cli_parser p;
    const char *resume = NULL, *output = NULL;
    const char *arg;
    int key, rc = AR_EXIT_USAGE, resume_output = 0;
    json_t *done_ids = json_object();
    struct ar_buf previous;
    ar_buf_init(&previous, AR_BUF_UNLIMITED);

    memset(&b, 0, sizeof(b));
    b.max_running = 4;
    b.out = stdout;
    ar_cli_session_init(&b.s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_session_next(&b.s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        long n;
        switch (key) {
        case KEY_JOBS:
            if (ar_cli_parse_int(arg, 1, 1024, &n) < 0) {
                ar_cli_usage_error(cmd, "invalid -j '%s': want 1 to 1024", arg);
                goto out;
            }
            b.max_running = (unsigned)n;
            break;
        case KEY_RESUME_FROM:
            resume = arg;
            break;
        case KEY_RESUME:
            resume_output = 1;
            break;
        case KEY_MAX_COST: {
            char *end;
            b.max_cost = strtod(arg, &end);
            if (end == arg || *end || !(b.max_cost > 0) || !isfinite(b.max_cost)) {
                ar_cli_usage_error(cmd, "invalid --max-cost '%s': want a positive amount in USD",
                                   arg);
                goto out;
            }
            break;
        }
        case KEY_ALLOW_EDITS:
            b.s.run.allow_edits = 1;
            break;
        case KEY_ALLOW_DENIED:
            b.s.run.allow_denied = 1;
            break;
        case KEY_EXPECT_CHANGES:
            b.s.run.expect_changes = 1;
            break;
        case KEY_NO_FILES:
            b.s.run.track_files = AR_TRACK_FILES_NEVER;
            break;
        case KEY_TRACK_FILES:
            b.s.run.track_files = AR_TRACK_FILES_ALWAYS;
            break;
        case 'o':
            output = arg;
            break;
        }
    }
    if (argc - p.ind > 1) {
        ar_cli_usage_error(cmd, "one input file expected, got %d", argc - p.ind);
        goto out;
    }
    const char *input = argc - p.ind == 1 ? argv[p.ind] : "-";
    if (resume_output && (!output || resume)) {
        ar_cli_usage_error(cmd, output ? "give --resume or --resume-from FILE, not both"
                                       : "--resume needs -o FILE, the output it resumes");
        goto out;
    }
    if (resume_output)
        resume = output;
    if (resume && load_resume(cmd, resume, done_ids, &previous))
        goto out;
    if (load_jobs(&b, input, done_ids))
        goto out;
    if (resume_output && compact_output(&b, output, &previous) < 0)
        goto out;
    if (output) {
        b.out = fopen(output, "a");
        if (!b.out) {
            ar_cli_usage_error(cmd, "cannot open '%s': %s", output, strerror(errno));
            b.out = stdout;
            goto out;
        }
        ar_ignore_own_file(fileno(b.out));
        if (end_line(b.out, output) < 0) {
            ar_cli_errorf("cannot write '%s': %s", output, strerror(errno));
            goto out;
        }
    }
    unsigned fit = ar_proc_jobs_within_fd_limit(b.max_running);
    if (fit < b.max_running) {
        ar_cli_warnf("-j %u lowered to %u: the open file limit (ulimit -n) allows no more",
                     b.max_running, fit);
        b.max_running = fit;
    }
    if (ar_cli_session_begin(&b.s) < 0) {
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    b.backoff = ar_backoff_create();
    if (!b.backoff) {
        ar_cli_errorf("out of memory");
        ar_cli_session_end(&b.s);
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    b.t0 = ar_now_ms();
    b.s.run.progress = NULL; /* the status line shows the batch, not one job's tool */
    update_status(&b);
    ar_cli_session_status_start(&b.s);
    pump(&b);
    ar_loop_run(b.s.loop);
    /* Jobs still pending here were never started (an interruption). */
    for (size_t i = 0; i < b.n; i++)
        b.not_started += b.jobs[i].state == PENDING;
    ar_cli_session_end(&b.s);
    summary(&b);
    /* Output that cannot be written (EPIPE, a full disk) exits 2 as in run; the
     * jobs it cancelled are not an interruption by a signal. */
    rc = ar_cli_session_exit_status(&b.s, b.write_failed ? AR_EXIT_USAGE : b.worst);
out:
    if (b.out && b.out != stdout)
        fclose(b.out);
    for (size_t i = 0; i < b.n; i++)
        ar_batch_job_finish(&b.jobs[i].job);
    free(b.jobs);
    json_decref(done_ids);
    ar_buf_finish(&previous);
    ar_backoff_destroy(b.backoff);
    ar_cli_parser_finish(&p);
    return rc;
}

const struct ar_cli_command ar_cmd_batch = {
    .name = "batch",
    .synopsis = "[options] [FILE | -]",
    .summary = "run many jobs from JSON Lines, N at a time, one RunResult line per job",
    .description =
        "Each input line is a job: {\"id\", \"prompt\" | \"template\" + \"vars\", \"provider\",\n"
        "\"model\", \"schema\", \"cwd\", \"allow_edits\", \"track_files\", \"trust_project\",\n"
        "\"timeout\", \"idle_timeout\", \"fallback\", \"json\", \"expect\", \"expect_changes\",\n"
        "\"allow_denied\"}. Each output line is the job's RunResult with its \"id\", written as\n"
        "the job finishes. A rate limit pauses every job of that provider together.\n"
        "Exit 0 when every job succeeded, else the worst failure's status.",
    .example = "agentrun batch -j 8 --max-cost 5 jobs.jsonl > results.jsonl",
    .opts = opts,
    .run = batch_main,
};
