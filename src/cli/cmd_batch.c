/*
 * agentrun batch: many jobs from JSON Lines, N at a time, one RunResult line
 * per job as each finishes.
 *
 * The library schedules (include/agentrun/batch.h: concurrency, budget, edit
 * jobs one per work tree, rate-limit pauses, resume); this command reads the
 * options and the input, writes each record with one write(), keeps the
 * status line and the summary, and picks the exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentrun/batch.h"
#include "cli/commands.h"
#include "cli/failure.h"
#include "cli/merge.h"
#include "cli/session.h"
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
    KEY_WORKTREES,
    KEY_BASE,
    KEY_COMMIT,
    KEY_KEEP_WORKTREES,
    KEY_MERGE,
    KEY_CHECK,
    KEY_CHECK_TIMEOUT,
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
    { "worktrees", KEY_WORKTREES, NULL,
      "run every edit job in a git worktree of its own, on a branch agentrun/ID/JOB, side by "
      "side (a job may say \"worktree\" itself; default: edit jobs of one work tree run one at "
      "a time in it)",
      NULL },
    { "base", KEY_BASE, "REV", "the revision worktrees start from (default: HEAD)", NULL },
    { "commit", KEY_COMMIT, NULL,
      "commit each worktree job's changes on its branch when it succeeds (a job may say so "
      "itself; default: leave them uncommitted in its worktree)",
      NULL },
    { "keep-worktrees", KEY_KEEP_WORKTREES, NULL,
      "leave every worktree in place (default: removed unless it holds uncommitted changes)",
      NULL },
    { "merge", KEY_MERGE, NULL,
      "with --commit: at the end, merge the jobs' branches into agentrun/ID/merged as "
      "'agentrun worktrees merge' does (default: leave them apart)",
      NULL },
    { "check", KEY_CHECK, "CMD",
      "with --merge: run CMD (sh -c) on each branch's merge in a scratch worktree; a branch "
      "whose merge fails it is left out",
      NULL },
    { "check-timeout", KEY_CHECK_TIMEOUT, "SECS",
      "with --check: end a check after SECS (default: 600)", NULL },
    { "no-files", KEY_NO_FILES, NULL, "skip the git snapshots of every job", NULL },
    { "track-files", KEY_TRACK_FILES, NULL,
      "take the git snapshots also for jobs that cannot edit (a job may say so itself)", NULL },
    { "output", 'o', "FILE", "write the records to FILE instead of stdout (appended)", "@file" },
    AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

struct batch {
    struct ar_cli_session s;
    struct ar_batch *b; /* until its done callback */
    struct ar_batch_stats end;
    unsigned max_running;
    double max_cost;
    int worst;        /* the worst exit status so far */
    int cancelled;    /* a signal (or a failed write) cancelled the batch */
    int write_failed; /* a record could not be written: exit 2, as run does */
    int out;          /* where records go: stdout, or -o FILE */
    int out_locked;   /* -o FILE is ours alone: a record cut by a full disk is taken back */
    /* The status line's ETA: the finished jobs' time, and the estimate made at the
     * last end (estimate()). */
    uint64_t job_ms;
    size_t timed_jobs;
    uint64_t eta_ms, eta_from;
    size_t bad_lines; /* input lines that were no job (their records say why) */
    /* What failed, said on stderr (cli/failure.h): each cause once (with -v, each job),
     * one line a job or bad line, a screenful of them, then counts. */
    struct ar_cli_lines fail_lines;
    uint64_t said_causes[AR_CLI_SCREENFUL]; /* cause_hash() of each said */
    int said_codes[AR_CLI_SCREENFUL];       /* and its error code */
    size_t n_said_causes;
    size_t same_cause; /* failed jobs whose cause was said for an earlier one */
    /* --merge: the options, and the branches that hold a job's commit. */
    int merge;
    struct ar_worktree_merge_options merge_opts;
    struct ar_cli_batch_branches branches;
    struct input *in; /* the input as it streams in (NULL: read whole, or at its end) */
};

/* The library's longest line (16 MiB): one byte more is enough for its error record. */
#define LINE_MAX_BYTES ((size_t)16 << 20)

/*
 * The input as it arrives (a pipe, a FIFO, a terminal, a file): lines go to the batch
 * while fewer than `limit` jobs wait for a slot; then reading stops (a producer on a
 * pipe blocks once the pipe is full) until records make room. Jobs start as they come,
 * records go out as they finish, and the batch is closed (the summary follows) at EOF.
 */
struct input {
    struct batch *c;
    int fd, own_fd;
    const char *name;
    uv_poll_t poll; /* a pipe, FIFO, socket or terminal: read when readable */
    uv_idle_t idle; /* a regular file (epoll takes none): read from the loop's idle turn */
    int polled, armed, eof, done;
    int skipping; /* in a line longer than LINE_MAX_BYTES: dropped up to its end */
    char *buf;    /* read, not yet given to the batch: at most a chunk and a line */
    size_t at, len, cap;
    size_t limit;   /* jobs read but not started, at most (2x -j) */
    size_t records; /* records written so far (every outcome) */
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

static void note_status(struct batch *c, int status)
{
    if (rank(status) > rank(c->worst))
        c->worst = status;
}

/*
 * The estimate at a job's end: the jobs not done yet, in waves of -j, each as long as the
 * finished jobs took on average. Between two ends it counts down with the clock (a line
 * redrawn four times a second must not show one frozen figure), and never below a second
 * while jobs are left.
 */
static void estimate(struct batch *c, const struct ar_batch_stats *st)
{
    size_t done = st->ok + st->failed, total = st->added - st->skipped;
    if (!c->timed_jobs || done >= total) {
        c->eta_ms = 0;
        return;
    }
    uint64_t per = c->job_ms / c->timed_jobs;
    size_t slots = st->jobs ? st->jobs : 1, waves = (total - done + slots - 1) / slots;
    c->eta_ms = per * waves;
    c->eta_from = ar_cli_now_ms();
}

static void update_status(struct batch *c, const struct ar_batch *b)
{
    struct ar_batch_stats st;
    ar_batch_get_stats(b, &st);
    size_t done = st.ok + st.failed;
    size_t total = st.added - st.skipped;
    char eta[32] = "";
    if (c->eta_ms && done < total) {
        uint64_t gone = ar_cli_now_ms() - c->eta_from;
        uint64_t left = (c->eta_ms > gone + 1000 ? c->eta_ms - gone : 1000) / 1000;
        snprintf(eta, sizeof(eta), ", ETA %lu:%02lu", (unsigned long)(left / 60),
                 (unsigned long)(left % 60));
    }
    snprintf(c->s.status_extra, sizeof(c->s.status_extra),
             "%zu/%zu done, %zu running, %zu failed, %llu tokens, $%.4f%s", done, total, st.running,
             st.failed,
             (unsigned long long)(st.usage.input + st.usage.cache_read + st.usage.output),
             st.cost_usd, eta);
}

static void input_end(struct batch *c);
static void input_pump(struct batch *c);

/* A cancel stops reading a pipe or terminal (its producer may never end); a file is read
 * on, every job of it marked not started, so the summary counts all it left. */
static void input_cancel(struct batch *c)
{
    if (c->in && c->in->polled)
        input_end(c);
}

static void cancel(void *arg)
{
    struct batch *c = arg;
    c->cancelled = 1;
    input_cancel(c);
    if (c->b)
        ar_batch_cancel(c->b);
}

/* FNV-1a of a failure's code and message: the same cause hashes the same. */
static uint64_t cause_hash(const struct ar_error *e)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(unsigned)e->code;
    for (const unsigned char *p = (const unsigned char *)e->msg; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

/* A job that failed: its cause said on stderr the first time it is seen, with the fix
 * (cli/failure.h); a budget's refusals and an interruption are the summary's to count. */
static void say_job_failure(struct batch *c, const struct ar_batch_record *rec)
{
    const struct ar_result *r = rec->result;
    if (r->error.code == AR_EBUDGET || r->error.code == AR_EINTERRUPTED)
        return;
    uint64_t h = cause_hash(&r->error);
    for (size_t i = 0; i < c->n_said_causes && ar_cli_verbosity <= 0; i++)
        if (c->said_causes[i] == h) {
            c->same_cause++;
            return;
        }
    /* The first failure of each kind is said whatever came before it (a screenful of bad
     * lines must not hide that no CLI can log in); others of a kind said take a line of the
     * screenful. */
    int new_kind = 1;
    for (size_t i = 0; i < c->n_said_causes; i++)
        new_kind &= c->said_codes[i] != r->error.code;
    if (!new_kind && !ar_cli_lines_take(&c->fail_lines))
        return;
    if (c->n_said_causes < AR_CLI_SCREENFUL) {
        c->said_codes[c->n_said_causes] = r->error.code;
        c->said_causes[c->n_said_causes++] = h;
    }
    int called = r->n_cached > 0;
    for (size_t i = 0; i < r->n_calls; i++)
        called |= r->calls[i].exit_code >= 0;
    char hint[160];
    ar_cli_failure_hint(r->error.code, r->provider, called, ar_cli_session_provider_named(&c->s),
                        hint, sizeof(hint));
    ar_cli_errorf("job %s: %s: %s%s", rec->id, ar_strerror_name(r->error.code), r->error.msg, hint);
}

static void on_record(struct ar_batch *b, const struct ar_batch_record *rec, void *arg)
{
    struct batch *c = arg;
    if (c->in)
        c->in->records++;
    if (rec->outcome != AR_BATCH_FINISHED) {
        input_pump(c);
        return;
    }
    note_status(c, ar_result_exit_status(rec->result));
    ar_cli_session_status_clear(&c->s);
    /* A line that is not a job (bad JSON, an unknown key) is the user's to fix: said on
     * stderr, not only in its record ("line 3: unknown key 'promt'…"). */
    if (rec->result->error.code == AR_EUSAGE && !rec->result->n_calls) {
        if (ar_cli_lines_take(&c->fail_lines))
            ar_cli_errorf("%s", rec->result->error.msg);
        c->bad_lines++;
    } else if (rec->result->error.code) {
        say_job_failure(c, rec);
    }
    /* Jobs that ran time the ones to come (the budget's refusals took no time). */
    if (rec->result->n_calls) {
        c->job_ms += rec->result->duration_ms;
        c->timed_jobs++;
    }
    /* Each record whole or not at all in a file of ours (a full disk cuts it back to
     * its last record); elsewhere one write() per record, so batches appending to one
     * file through the shell (>>) never interleave theirs. A consumer can stream, and
     * an interruption keeps every finished record whole. */
    int bad = !rec->json; /* the library ran out of memory building it */
    if (bad)
        errno = ENOMEM;
    else
        bad = (c->out_locked ? ar_file_append_whole(c->out, rec->json, rec->json_len)
                             : ar_write_all(c->out, rec->json, rec->json_len)) != 0;
    if (bad) {
        if (!c->cancelled)
            ar_cli_errorf("cannot write a record: %s; stopping", strerror(errno));
        note_status(c, AR_EXIT_USAGE);
        if (!c->write_failed && !c->cancelled) {
            c->cancelled = 1;
            input_cancel(c);
            ar_batch_cancel(b);
        }
        c->write_failed = 1;
    }
    if (c->merge && ar_cli_batch_branches_add(&c->branches, rec->result) < 0) {
        ar_cli_errorf("out of memory: stopping");
        note_status(c, AR_EXIT_PROVIDER);
        if (!c->cancelled) {
            c->cancelled = 1;
            input_cancel(c);
            ar_batch_cancel(b);
        }
    }
    struct ar_batch_stats st;
    ar_batch_get_stats(b, &st);
    estimate(c, &st);
    /* A slot is free: the next job may be read. */
    input_pump(c);
}

/* Before each draw of the status line: the batch as it is now (running, done, the ETA). */
static void refresh_status(void *arg)
{
    struct batch *c = arg;
    if (c->b)
        update_status(c, c->b);
}

static void on_done(struct ar_batch *b, const struct ar_batch_stats *st, void *arg)
{
    struct batch *c = arg;
    (void)b;
    c->end = *st;
    c->b = NULL;
}

/* The batch's status line shows counts, not one job's tool; but a job waiting out a
 * rate limit (a pause the provider's other jobs share) is shown as a countdown. */
static void on_job_progress(void *arg, const struct ar_run_progress *p)
{
    struct ar_cli_session *s = arg;
    if (!p->wait_ms)
        return;
    uint64_t until = ar_cli_now_ms() + p->wait_ms;
    if (until > s->wait_until_ms) {
        s->wait_until_ms = until;
        snprintf(s->wait_reason, sizeof(s->wait_reason), "%s paused", p->provider);
    }
}

/* Reads an earlier output into *buf. A file that does not exist yet holds none, so
 * the first run of a resumable command line is the same command as the later ones. */
static int load_resume(const struct ar_cli_command *cmd, const char *path, struct ar_buf *buf)
{
    struct ar_error err = AR_ERROR_INIT;
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        ar_cli_notef("'%s' does not exist yet: every job runs", path);
        return 0;
    }
    if (ar_file_read(path, buf, &err) < 0)
        return ar_cli_usage_error(cmd, "--resume-from: %s", err.msg);
    return 0;
}

/*
 * --resume: the output file is both the record of what is done and where the new
 * records go. It is first rewritten (a new file renamed over it, so a crash leaves
 * the old one whole) to hold one record per id (ar_batch_compact_records()), so
 * when the batch ends each id has exactly one record, its final one. The new file
 * is locked before it takes the path: another agentrun never finds it unlocked.
 */
static int compact_output(struct batch *c, const char *path, const struct ar_buf *old)
{
    if (!old->data)
        return 0;
    size_t len = 0;
    char *text = ar_batch_compact_records(c->b, old->data, old->len, &len);
    struct ar_error err = AR_ERROR_INIT;
    int rc = text ? ar_file_replace_locked(path, text, len, &c->out, &err)
                  : ar_error_set(&err, AR_ENOMEM, path, "out of memory");
    if (rc)
        ar_cli_errorf("--resume: %s", err.msg);
    free(text);
    return rc ? -1 : 0;
}

/* Gives the batch every line of the input (blank ones count for the line numbers). */
static int add_lines(struct ar_batch *b, const struct ar_buf *in)
{
    struct ar_error err = AR_ERROR_INIT;
    for (const char *p = in->data, *end = in->data + in->len; p && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (ar_batch_add_line(b, p, len, &err) < 0) {
            ar_cli_errorf("%s", err.msg);
            return -1;
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/* ---- streaming input --------------------------------------------------------------- */

static void input_closed(uv_handle_t *h)
{
    struct input *in = h->data;
    if (--in->done == 0)
        free(in);
}

/* The input is over (EOF, an error, a cancel): no more lines; the batch is closed. */
static void input_end(struct batch *c)
{
    struct input *in = c->in;
    if (!in)
        return;
    c->in = NULL;
    if (in->own_fd)
        close(in->fd);
    free(in->buf);
    in->buf = NULL;
    /* The idle handle always, the poll one when it was set up; the struct goes with the
     * last close. */
    in->done = 1 + in->polled;
    uv_close((uv_handle_t *)&in->idle, input_closed);
    if (in->polled)
        uv_close((uv_handle_t *)&in->poll, input_closed);
    if (c->b)
        ar_batch_close(c->b);
}

/* Jobs read but not started (nor reported): what backpressure counts. */
static size_t input_waiting(const struct batch *c)
{
    struct ar_batch_stats st;
    ar_batch_get_stats(c->b, &st);
    size_t gone = c->in->records + st.running;
    return st.added > gone ? st.added - gone : 0;
}

static int input_add(struct batch *c, const char *line, size_t len)
{
    struct ar_error err = AR_ERROR_INIT;
    if (ar_batch_add_line(c->b, line, len, &err) == 0)
        return 0;
    ar_cli_errorf("%s", err.msg);
    note_status(c, AR_EXIT_PROVIDER);
    return -1;
}

/* Gives the batch the whole lines read, while it has room; 0, or -1 to stop. */
static int input_drain(struct batch *c)
{
    struct input *in = c->in;
    while (in->at < in->len) {
        char *p = in->buf + in->at;
        size_t n = in->len - in->at;
        char *nl = memchr(p, '\n', n);
        if (in->skipping) {
            in->at = nl ? (size_t)(nl + 1 - in->buf) : in->len;
            in->skipping = !nl;
            continue;
        }
        if (!nl && n > LINE_MAX_BYTES) {
            /* Its record says it is too long; the rest of it is read and dropped. */
            if (input_add(c, p, LINE_MAX_BYTES + 1) < 0)
                return -1;
            in->at = in->len;
            in->skipping = 1;
            continue;
        }
        if (!nl && !in->eof)
            break; /* the rest of the line is still to come */
        if (input_waiting(c) >= in->limit)
            break;
        size_t len = nl ? (size_t)(nl - p) : n;
        in->at += nl ? len + 1 : len;
        if (input_add(c, p, len) < 0)
            return -1;
    }
    if (in->at == in->len)
        in->at = in->len = 0;
    return 0;
}

static void input_read(struct batch *c)
{
    struct input *in = c->in;
    if (in->at && in->at + 65536 > in->cap) {
        memmove(in->buf, in->buf + in->at, in->len - in->at);
        in->len -= in->at;
        in->at = 0;
    }
    if (in->len + 65536 > in->cap) {
        size_t cap = in->len + 65536;
        char *b = realloc(in->buf, cap);
        if (!b) {
            ar_cli_errorf("out of memory reading the jobs: no more are read");
            note_status(c, AR_EXIT_PROVIDER);
            in->eof = 1;
            return;
        }
        in->buf = b;
        in->cap = cap;
    }
    ssize_t n = read(in->fd, in->buf + in->len, in->cap - in->len);
    if (n > 0)
        in->len += (size_t)n;
    else if (n == 0)
        in->eof = 1;
    else if (errno != EAGAIN && errno != EINTR) {
        ar_cli_errorf("cannot read '%s': %s; no more jobs are read", in->name, strerror(errno));
        note_status(c, AR_EXIT_USAGE);
        in->eof = 1;
    }
}

static void on_input_poll(uv_poll_t *h, int status, int events)
{
    struct input *in = h->data;
    struct batch *c = in->c;
    (void)events;
    if (!c->in)
        return;
    if (status < 0) {
        ar_cli_errorf("cannot read '%s': %s; no more jobs are read", c->in->name,
                      uv_strerror(status));
        note_status(c, AR_EXIT_USAGE);
        c->in->eof = 1;
    } else {
        input_read(c);
    }
    input_pump(c);
}

static void on_input_idle(uv_idle_t *h)
{
    struct input *in = h->data;
    struct batch *c = in->c;
    if (!c->in)
        return;
    input_read(c);
    input_pump(c);
}

/* After a read or a record: lines to the batch while there is room; reads while it wants
 * more and no whole line waits; the end at EOF once every line is in. */
static void input_pump(struct batch *c)
{
    struct input *in = c->in;
    if (!in)
        return;
    if (input_drain(c) < 0) {
        input_end(c);
        return;
    }
    if (in->eof && in->at == in->len) {
        input_end(c);
        return;
    }
    int want = !in->eof &&
               (in->len == in->at || !memchr(in->buf + in->at, '\n', in->len - in->at)) &&
               input_waiting(c) < in->limit;
    if (want && !in->armed) {
        if (in->polled)
            uv_poll_start(&in->poll, UV_READABLE, on_input_poll);
        else
            uv_idle_start(&in->idle, on_input_idle);
    } else if (!want && in->armed) {
        if (in->polled)
            uv_poll_stop(&in->poll);
        else
            uv_idle_stop(&in->idle);
    }
    in->armed = want;
}

/* Opens the input for streaming ("-": standard input, as it is; a named file by the
 * rules of ar_file_read()). Returns 0, or -1 after saying why. */
static int input_open(struct batch *c, const struct ar_cli_command *cmd, const char *path,
                      unsigned jobs)
{
    struct input *in = calloc(1, sizeof(*in));
    if (!in) {
        ar_cli_errorf("out of memory");
        return -1;
    }
    in->name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    in->fd = STDIN_FILENO;
    if (strcmp(path, "-") != 0) {
        struct ar_error err = AR_ERROR_INIT;
        struct stat st;
        const char *slash = strrchr(path, '/');
        char *dir = !slash          ? strdup(".")
                    : slash == path ? strdup("/")
                                    : strndup(path, (size_t)(slash - path));
        int rc = dir ? ar_file_open_at(dir, slash ? slash + 1 : path, &in->fd, &st, &err)
                     : ar_error_set(&err, AR_ENOMEM, path, "out of memory");
        free(dir);
        if (rc) {
            free(in);
            ar_cli_usage_error(cmd, "%s", err.msg);
            return -1;
        }
        in->own_fd = 1;
    }
    in->limit = 2 * (size_t)jobs;
    c->in = in;
    return 0;
}

/* Arms the reading on the loop (after the batch started). */
static void input_start(struct batch *c)
{
    struct input *in = c->in;
    uv_loop_t *uv = ar_cli_session_uv(&c->s);
    /* A pipe or a terminal is read when readable; epoll refuses a regular file (EPERM),
     * which is read in chunks from the idle turn instead. */
    in->c = c;
    in->polled = uv_poll_init(uv, &in->poll, in->fd) == 0;
    uv_idle_init(uv, &in->idle);
    in->poll.data = in->idle.data = in;
    input_pump(c);
}

static void summary(const struct batch *c)
{
    if (c->same_cause)
        ar_cli_errorf("… and %zu more job%s failed with a cause said above (each record says "
                      "why; -v says each here)",
                      c->same_cause, c->same_cause == 1 ? "" : "s");
    ar_cli_lines_end(&c->fail_lines, "failed jobs and bad lines",
                     "each record says why; -v says each here");
    if (ar_cli_verbosity < 0)
        return;
    const struct ar_batch_stats *b = &c->end;
    double secs = (double)b->duration_ms / 1000.0;
    if (c->s.log_json) {
        /* One more event line, not prose, for a reader of JSON lines. */
        json_t *o =
            json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I},s:o,s:I,s:I}",
                      "level", "info", "event", "batch_finished", "ok", (json_int_t)b->ok, "failed",
                      (json_int_t)b->failed, "skipped", (json_int_t)b->skipped, "not_started",
                      (json_int_t)b->not_started, "budget_stopped", (json_int_t)b->budget_stopped,
                      "edit_jobs_waited", (json_int_t)b->edit_jobs_waited, "tokens", "input",
                      (json_int_t)b->usage.input, "cache_read", (json_int_t)b->usage.cache_read,
                      "cache_write", (json_int_t)b->usage.cache_write, "output",
                      (json_int_t)b->usage.output, "reasoning", (json_int_t)b->usage.reasoning,
                      "cost_usd", json_real(ar_cost_round(b->cost_usd)), "unknown_cost_jobs",
                      (json_int_t)b->unknown_cost, "duration_ms", (json_int_t)b->duration_ms);
        json_object_set_new(o, "worktrees_kept", json_integer((json_int_t)b->worktrees_kept));
        ar_cli_print_json_event(o);
        return;
    }
    char cost[80];
    snprintf(cost, sizeof(cost), "$%.4f", b->cost_usd);
    if (b->unknown_cost)
        snprintf(cost + strlen(cost), sizeof(cost) - strlen(cost), " + %zu job%s of unknown cost",
                 b->unknown_cost, b->unknown_cost == 1 ? "" : "s");
    char failed[64];
    snprintf(failed, sizeof(failed), "%zu failed", b->failed);
    if (b->budget_stopped)
        snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed),
                 " (%zu not started: budget)", b->budget_stopped);
    if (c->bad_lines)
        snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed), " (%zu bad line%s)",
                 c->bad_lines, c->bad_lines == 1 ? "" : "s");
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
    if (b->edit_jobs_waited)
        fprintf(stderr,
                "agentrun batch: edit jobs in one work tree ran one at a time (%zu waited for "
                "theirs)\n",
                b->edit_jobs_waited);
    if (b->worktrees_kept)
        fprintf(stderr,
                "agentrun batch: %zu worktree%s left in place (uncommitted changes, or "
                "--keep-worktrees): the records say where; 'agentrun worktrees list' shows them\n",
                b->worktrees_kept, b->worktrees_kept == 1 ? "" : "s");
}

/*
 * A batch killed in the middle of a record leaves a line without its newline.
 * Appending straight after it would glue the next record onto that garbage, and
 * --resume-from could not count it: end the cut line first.
 */
static int end_line(int fd)
{
    /* Only a regular file is read back (a FIFO is not ours to read). */
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    char ch;
    if (pread(fd, &ch, 1, st.st_size - 1) != 1 || ch == '\n')
        return 0;
    return ar_write_all(fd, "\n", 1) == 0 ? 0 : -1;
}

/* Opens -o FILE as its one writer, before anything reads it for --resume. Returns 0, or the
 * exit status after printing why not. */
static int open_output(struct batch *c, const char *output)
{
    struct ar_error err = AR_ERROR_INIT;
    int fd, locked;
    if (ar_file_open_writer(output, &fd, &locked, &err) < 0) {
        ar_cli_errorf("%s", err.msg);
        return AR_EXIT_USAGE;
    }
    c->out = fd;
    c->out_locked = locked;
    return 0;
}

/* The output as a batch finds it: the cut line of a killed batch ended, and it is one of
 * agentrun's own files (never a job's change). */
static int ready_output(struct batch *c, const char *output)
{
    ar_ignore_own_file(c->out);
    if (end_line(c->out) < 0) {
        ar_cli_errorf("cannot write '%s': %s", output, strerror(errno));
        return AR_EXIT_USAGE;
    }
    return 0;
}

static int batch_main(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct batch c;
    struct ar_cli_parser p;
    const char *resume = NULL, *output = NULL;
    const char *arg;
    int key, rc = AR_EXIT_USAGE, resume_output = 0;
    struct ar_buf previous, input_buf;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&previous, AR_BUF_UNLIMITED);
    ar_buf_init(&input_buf, AR_BUF_UNLIMITED);

    memset(&c, 0, sizeof(c));
    c.max_running = 4;
    c.out = STDOUT_FILENO;
    ar_cli_session_init(&c.s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_session_next(&c.s, &p, &arg)) != -1) {
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
            c.max_running = (unsigned)n;
            break;
        case KEY_RESUME_FROM:
            resume = arg;
            break;
        case KEY_RESUME:
            resume_output = 1;
            break;
        case KEY_MAX_COST:
            if (ar_cli_parse_usd(arg, &c.max_cost) < 0) {
                ar_cli_usage_error(cmd, "invalid --max-cost '%s': want a positive amount in USD",
                                   arg);
                goto out;
            }
            break;
        case KEY_ALLOW_EDITS:
            c.s.run.allow_edits = 1;
            break;
        case KEY_ALLOW_DENIED:
            c.s.run.allow_denied = 1;
            break;
        case KEY_EXPECT_CHANGES:
            c.s.run.expect_changes = 1;
            break;
        case KEY_WORKTREES:
            c.s.run.worktree = AR_WORKTREE_EDITS;
            break;
        case KEY_BASE:
            c.s.run.worktree_base = arg;
            break;
        case KEY_COMMIT:
            c.s.run.worktree_commit = 1;
            break;
        case KEY_KEEP_WORKTREES:
            c.s.run.keep_worktree = 1;
            break;
        case KEY_MERGE:
            c.merge = 1;
            break;
        case KEY_CHECK:
            c.merge_opts.check = arg;
            break;
        case KEY_CHECK_TIMEOUT: {
            unsigned long long ms;
            if (ar_cli_parse_duration_ms(arg, &ms) < 0 || ms == 0) {
                ar_cli_usage_error(cmd, "invalid --check-timeout '%s'", arg);
                goto out;
            }
            c.merge_opts.check_timeout_ms = ms;
            break;
        }
        case KEY_NO_FILES:
            c.s.run.track_files = AR_TRACK_FILES_NEVER;
            break;
        case KEY_TRACK_FILES:
            c.s.run.track_files = AR_TRACK_FILES_ALWAYS;
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
    /* Inputs are never outputs: records appended to the job file would be read as jobs
     * by the next run, and --resume would replace it with records. Said before anything
     * is opened, read or written. */
    const char *ins[] = { input, c.s.run.prices_file, resume, output };
    if (ar_file_check_output("-o", output, ins, 2, &err) < 0 ||
        (!output && ar_file_check_output("standard output", "/dev/stdout", ins, 2, &err) < 0) ||
        ar_file_check_output("--transcript", c.s.run.transcript_path, ins, 4, &err) < 0) {
        ar_cli_usage_error(cmd, "%s", err.msg);
        goto out;
    }
    if (resume_output)
        resume = output;
    if (c.merge && !c.s.run.worktree_commit) {
        ar_cli_usage_error(cmd, "--merge needs --commit: a branch holds a job's work once it "
                                "is committed");
        goto out;
    }
    if (!c.merge && (c.merge_opts.check || c.merge_opts.check_timeout_ms)) {
        ar_cli_usage_error(cmd, "--check and --check-timeout go with --merge");
        goto out;
    }
    /* The lock first: a second agentrun on this file stops here, before it reads or runs. */
    if (output && (rc = open_output(&c, output)) != 0)
        goto out;
    rc = AR_EXIT_USAGE;
    if (resume && load_resume(cmd, resume, &previous))
        goto out;
    /* Jobs stream in as they are read, except with --resume: the output is rewritten
     * to one record per id first, which needs every job's id. */
    int streaming = !resume_output;
    if (streaming ? input_open(&c, cmd, input, c.max_running) < 0
                  : ar_file_read(input, &input_buf, &err) < 0) {
        if (!streaming)
            ar_cli_usage_error(cmd, "%s", err.msg);
        goto out;
    }
    if ((rc = ar_cli_session_begin(&c.s)) != 0)
        goto out;
    struct ar_batch_options o;
    ar_batch_options_init(&o);
    o.defaults = c.s.run;
    /* The status line shows the batch, not one job's tool. */
    o.defaults.progress = on_job_progress;
    o.defaults.progress_arg = &c.s;
    o.jobs = c.max_running;
    o.max_cost_usd = c.max_cost;
    if (ar_batch_start(ar_cli_session_uv(&c.s), &o, on_record, on_done, &c, &c.b, &err) < 0) {
        ar_cli_errorf("%s", err.msg);
        ar_cli_session_end(&c.s);
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    ar_cli_session_set_cancel(&c.s, cancel, &c);
    int setup = 0;
    if (previous.data && ar_batch_resume(c.b, previous.data, previous.len, &err) < 0) {
        ar_cli_errorf("%s", err.msg);
        setup = AR_EXIT_PROVIDER;
    }
    if (!setup && !streaming && add_lines(c.b, &input_buf) < 0)
        setup = AR_EXIT_PROVIDER;
    if (!streaming)
        ar_batch_close(c.b);
    if (!setup && resume_output && compact_output(&c, output, &previous) < 0)
        setup = AR_EXIT_USAGE;
    if (!setup && output)
        setup = ready_output(&c, output);
    /* Set up wrong: no job starts; the loop only lets the batch end. */
    if (setup) {
        c.cancelled = 1;
        ar_batch_cancel(c.b);
        if (streaming) {
            if (c.in->own_fd)
                close(c.in->fd);
            free(c.in);
            c.in = NULL;
            ar_batch_close(c.b);
        }
    } else {
        c.s.status_refresh = refresh_status;
        c.s.status_refresh_arg = &c;
        ar_cli_session_status_start(&c.s);
        if (streaming)
            input_start(&c);
    }
    uv_run(ar_cli_session_uv(&c.s), UV_RUN_DEFAULT);
    ar_cli_session_end(&c.s);
    if (setup) {
        rc = setup;
        goto out;
    }
    summary(&c);
    /* Output that cannot be written (EPIPE, a full disk) exits 2 as in run; the
     * jobs it cancelled are not an interruption by a signal. */
    rc = ar_cli_session_exit_status(&c.s, c.write_failed ? AR_EXIT_USAGE : c.worst);
    /* An interrupted batch is not merged: what it left is for the user to look at. */
    if (c.merge && !c.cancelled && !c.s.signal) {
        c.merge_opts.cwd = c.s.run.cwd;
        int merged = ar_cli_batch_merge(&c.merge_opts, &c.branches, c.s.log_json);
        if (merged != 0 && (rc == 0 || merged >= 128))
            rc = merged;
    }
out:
    if (c.in) {
        /* Opened, never started: nothing on the loop holds it. */
        if (c.in->own_fd)
            close(c.in->fd);
        free(c.in);
    }
    ar_cli_batch_branches_finish(&c.branches);
    if (c.out != STDOUT_FILENO)
        close(c.out);
    ar_buf_finish(&previous);
    ar_buf_finish(&input_buf);
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
        "\"allow_denied\", \"worktree\", \"base\", \"commit\"}. Each output line is the job's "
        "RunResult with its \"id\", written as\n"
        "the job finishes. A rate limit pauses every job of that provider together.\n"
        "Exit 0 when every job succeeded, else the worst failure's status; with --merge, 1 "
        "when every job succeeded but some branches were left out.",
    .example = "agentrun batch -j 8 --max-cost 5 jobs.jsonl > results.jsonl",
    .opts = opts,
    .run = batch_main,
};
