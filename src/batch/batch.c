/*
 * The batch scheduler (include/agentrun/batch.h): jobs in input order, at most
 * N at once on one loop, one record per job as each finishes.
 *
 * The loop, the cap on running jobs, the shared rate-limit backoff, the run
 * per job and cancel are the job set's (src/run/jobset.h); what is the
 * batch's is here: a job may have to wait while another edit job holds its
 * work tree (git status cannot tell two writers apart), and the budget
 * decides before each start whether a job may start at all. pump() is the one
 * place that starts jobs, writes off the ones that will never start and ends
 * the batch; the job set runs it from the loop only (a kick, or a job's done
 * callback), so no user callback ever runs from inside an ar_batch_*() call.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/batch.h"
#include "batch/job.h"
#include "batch/record.h"
#include "cost/cost.h"
#include "git/git.h"
#include "git/worktrees.h"
#include "proc/proc.h"
#include "result/result.h"
#include "run/budget.h"
#include "run/jobset.h"
#include "run/run.h"
#include "run/share.h"
#include "run/start.h"
#include "util/buf.h"
#include "util/log.h"

enum job_state {
    PENDING,
    SKIP, /* an earlier batch did it: reported as skipped when the queue gets there */
    RUNNING,
    DONE, /* reported; what the job owned is freed */
};

struct job {
    struct ar_batch_job job;
    size_t seq; /* its place in the input (0-based): b->jobs[seq - b->base] while queued */
    enum job_state state;
    int waited;              /* held back at least once: another edit job had its work tree */
    struct job *prev, *next; /* the running list, while RUNNING */
};

/*
 * The ids seen so far (to refuse one used twice) and the ids an earlier batch
 * finished (resume), kept as 64-bit hashes in an open-addressing table, with the
 * line an id was first on: 16 bytes a slot, at most half full, so 32-64 bytes a
 * job whatever its id and prompt. Two different ids share a hash with a
 * probability of about n^2 / 2^65 in a batch of n jobs (3e-9 for a million):
 * then the second is refused as used twice, or skipped on resume.
 */
struct idset {
    struct idslot {
        uint64_t hash; /* 0: empty */
        uint64_t line;
    } * slot;
    size_t n, cap; /* cap: a power of two, or 0 */
};

static uint64_t id_hash(const char *id)
{
    /* FNV-1a, then a final mix (splitmix64) so the low bits index the table well. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h ? h : 1;
}

static struct idslot *idset_find(const struct idset *set, uint64_t h)
{
    if (!set->cap)
        return NULL;
    for (size_t i = (size_t)h & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
        if (set->slot[i].hash == h)
            return &set->slot[i];
        if (!set->slot[i].hash)
            return NULL;
    }
}

/* The line id was first added on (0 for a job built in C), or -1 when it is not in set. */
static long long idset_get(const struct idset *set, const char *id)
{
    const struct idslot *s = idset_find(set, id_hash(id));
    return s ? (long long)s->line : -1;
}

/* Adds id (first seen on `line`) unless it is there. 0, or AR_ENOMEM. */
static int idset_add(struct idset *set, const char *id, size_t line)
{
    uint64_t h = id_hash(id);
    if (idset_find(set, h))
        return 0;
    if ((set->n + 1) * 2 > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 256;
        struct idslot *v = calloc(cap, sizeof(*v));
        if (!v)
            return AR_ENOMEM;
        for (size_t i = 0; i < set->cap; i++) {
            if (!set->slot[i].hash)
                continue;
            size_t k = (size_t)set->slot[i].hash & (cap - 1);
            while (v[k].hash)
                k = (k + 1) & (cap - 1);
            v[k] = set->slot[i];
        }
        free(set->slot);
        set->slot = v;
        set->cap = cap;
    }
    size_t k = (size_t)h & (set->cap - 1);
    while (set->slot[k].hash)
        k = (k + 1) & (set->cap - 1);
    set->slot[k] = (struct idslot){ h, line };
    set->n++;
    return 0;
}

enum stop {
    GOING = 0,
    STOP_BUDGET, /* no job starts; the rest fail with error budget once none runs */
    STOP_CANCEL, /* ar_batch_cancel(): the rest are never started */
};

struct ar_batch {
    struct ar_jobset *set; /* the loop, the cap, the shared backoff, cancel */
    struct ar_batch_options o;
    struct ar_batch_job defaults; /* owns the strings of o.defaults */
    ar_batch_record_fn *record;
    ar_batch_done_fn *done;
    void *arg;

    /* The jobs not started yet, in input order, from the first one not started
     * (jobs[i] is the job of seq base + i; NULL once reported). A job is freed when its
     * record is out: what a finished job leaves is its id's slot in `seen`. */
    struct job **jobs;
    size_t base, n, cap;   /* n: entries in jobs; base + n jobs were added */
    size_t first_pending;  /* every job before it has started or been reported */
    size_t reported;       /* jobs whose record went out */
    size_t lineno;         /* lines given to ar_batch_add_line() */
    struct job *running;   /* the running jobs, for the work tree check */
    struct idset seen;     /* every id, with its line: to refuse an id used twice */
    struct idset done_ids; /* ids an earlier batch finished (ar_batch_resume()) */

    struct ar_budget budget; /* --max-cost over every job, below the share's: each call of each
                                job reserves under it (budget.h) */
    enum stop stop;
    int closed;
    int in_pump;
    int serial_said;
    char session[AR_GIT_SESSION_SIZE]; /* the worktree branches' agentrun/<session>/<job> */
    uint64_t t0;
    struct ar_batch_stats st;
};

/* ---- records --------------------------------------------------------------------------- */

static void report(struct ar_batch *b, struct job *j, enum ar_batch_outcome outcome,
                   const struct ar_result *r)
{
    struct ar_batch_record rec = {
        j->job.id, j->job.id_is_integer, j->job.line, outcome, r, NULL, 0
    };
    struct ar_buf line;
    ar_buf_init(&line, AR_BUF_UNLIMITED);
    if (r) {
        if (r->ok)
            b->st.ok++;
        else
            b->st.failed++;
        ar_usage_add(&b->st.usage, &r->usage);
        if (r->worktree && r->worktree->kept)
            b->st.worktrees_kept++;
        if (r->n_calls && r->cost_source == AR_COST_UNKNOWN)
            b->st.unknown_cost++;
        else if (r->n_calls)
            b->st.cost_usd += r->cost_usd;
        if (ar_batch_record_line(j->job.id, j->job.id_is_integer, r, &line) == 0) {
            rec.json = line.data;
            rec.json_len = line.len;
        }
    } else if (outcome == AR_BATCH_NOT_STARTED) {
        b->st.not_started++;
    }
    j->state = DONE;
    b->reported++;
    b->record(b, &rec, b->arg);
    ar_buf_finish(&line);
    /* Its record is out: a batch of a million jobs keeps none of its jobs. */
    if (j->seq >= b->base && j->seq - b->base < b->n)
        b->jobs[j->seq - b->base] = NULL;
    ar_batch_job_finish(&j->job);
    free(j);
}

static void report_failed(struct ar_batch *b, struct job *j, int code, const char *msg)
{
    struct ar_result *r = ar_result_new_failed(NULL, code, msg);
    /* Out of memory: the job still gets its record, error nomem (docs/architecture.md). */
    report(b, j, AR_BATCH_FINISHED, r ? r : ar_result_nomem());
    ar_result_destroy(r);
}

/* ---- running jobs ---------------------------------------------------------------------- */

static void running_add(struct ar_batch *b, struct job *j)
{
    j->state = RUNNING;
    j->prev = NULL;
    j->next = b->running;
    if (b->running)
        b->running->prev = j;
    b->running = j;
}

static void running_remove(struct ar_batch *b, struct job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        b->running = j->next;
    if (j->next)
        j->next->prev = j->prev;
    j->prev = j->next = NULL;
}

static int tree_busy(const struct ar_batch *b, const char *tree)
{
    for (const struct job *o = b->running; o; o = o->next)
        if (o->job.worktree && strcmp(o->job.worktree, tree) == 0)
            return 1;
    return 0;
}

/* A job is over (the job set runs pump() next). */
static void on_job_done(void *owner, void *job, struct ar_result *res)
{
    struct ar_batch *b = owner;
    struct job *j = job;
    running_remove(b, j);
    /* A cost the price table does not know cannot be held against the cap, and
     * counting it as zero would let the batch run past it: no job starts (the budget's
     * rule, budget.h; said here once, with the job). */
    if (!b->stop && res->n_calls && res->cost_source == AR_COST_UNKNOWN &&
        ar_budget_check(&b->budget, NULL) == AR_BUDGET_OVER) {
        ar_log_event(&b->o.defaults.logger, AR_LOG_WARN, "batch_cost_unknown",
                     json_pack("{s:s,s:s?}", "id", j->job.id, "model", res->model),
                     "job '%s' cost an unknown amount (model %s is not in the price table), so "
                     "--max-cost can no longer be kept: no more jobs start; --prices FILE "
                     "prices it",
                     j->job.id, res->model ? res->model : "unknown");
        b->stop = STOP_BUDGET;
    }
    report(b, j, AR_BATCH_FINISHED, res);
    ar_result_destroy(res);
}

enum { BUDGET_START, BUDGET_WAIT, BUDGET_OVER };

/*
 * May this job start now, as far as the budget goes? The budget's own answer for one
 * more call (budget.h: what is left covers the dearest call so far; before a price is
 * known, one at a time): asked before the job starts, so that a job that could make no
 * call takes no worktree or snapshot; each of its calls then reserves for itself.
 */
static int budget_check(struct ar_batch *b)
{
    switch (ar_budget_check(&b->budget, NULL)) {
    case AR_BUDGET_START:
        return BUDGET_START;
    case AR_BUDGET_WAIT:
        return BUDGET_WAIT;
    default:
        return BUDGET_OVER;
    }
}

/* A job with a worktree of its own gets the batch's branch for its id, unless it names one. */
static int name_branch(struct ar_batch *b, struct job *j)
{
    struct ar_run_options *o = &j->job.opts;
    if (o->worktree_branch || !ar_run_uses_worktree(o))
        return 0;
    char branch[256];
    ar_git_tree_branch(b->session, j->job.id, branch, sizeof(branch));
    if (ar_strv_push(&j->job.storage, branch) < 0)
        return AR_ENOMEM;
    o->worktree_branch = j->job.storage.v[j->job.storage.n - 1];
    return 0;
}

static void start(struct ar_batch *b, struct job *j)
{
    struct ar_error err = AR_ERROR_INIT;
    j->job.opts.job_id = j->job.id;
    if (name_branch(b, j) < 0) {
        report_failed(b, j, AR_ENOMEM, "out of memory");
        return;
    }
    running_add(b, j);
    struct ar_pipeline_extra extra = { NULL, &b->budget };
    if (ar_jobset_start(b->set, &j->job.opts, &extra, j, &err) == 0)
        return;
    running_remove(b, j);
    /* Which line, and where in the template ("greet.md:1") when that is the cause. */
    char msg[sizeof(err.msg) + sizeof(err.where) + 48];
    const char *where = err.where[0] && !strstr(err.msg, err.where) ? err.where : NULL;
    if (j->job.line)
        snprintf(msg, sizeof(msg), "line %zu: %s%s%s", j->job.line, where ? where : "",
                 where ? ": " : "", err.msg);
    else
        snprintf(msg, sizeof(msg), "%s%s%s", where ? where : "", where ? ": " : "", err.msg);
    report_failed(b, j, err.code, msg);
}

/* ---- the scheduler --------------------------------------------------------------------- */

static void finish(struct ar_batch *b);

static void write_off_rest(struct ar_batch *b)
{
    for (size_t i = b->first_pending; i < b->n; i++) {
        struct job *j = b->jobs[i];
        if (!j)
            continue;
        if (j->state == SKIP)
            report(b, j, AR_BATCH_SKIPPED, NULL);
        else if (j->state != PENDING)
            continue;
        else if (b->stop == STOP_CANCEL)
            report(b, j, AR_BATCH_NOT_STARTED, NULL);
        else {
            b->st.budget_stopped++; /* counted before its record, as ok and failed are */
            report_failed(b, j, AR_EBUDGET,
                          b->st.unknown_cost
                              ? "not started: an earlier job's cost is unknown, so --max-cost "
                                "could no longer be kept"
                              : "not started: the batch would pass --max-cost");
        }
    }
}

static void pump(void *owner)
{
    struct ar_batch *b = owner;
    /* Never re-entered: the record callbacks run in here, and what they may call
     * (ar_batch_add*(), ar_batch_cancel()) only kicks a later pump. */
    assert(!b->in_pump);
    b->in_pump = 1;
    while (b->first_pending < b->n &&
           (!b->jobs[b->first_pending] || (b->jobs[b->first_pending]->state != PENDING &&
                                           b->jobs[b->first_pending]->state != SKIP)))
        b->first_pending++;
    /* The started and reported ones out of the queue (running ones live on in the
     * running list): it holds the jobs waiting, not every job so far. */
    if (b->first_pending && b->first_pending * 2 >= b->n) {
        memmove(b->jobs, b->jobs + b->first_pending, (b->n - b->first_pending) * sizeof(*b->jobs));
        b->base += b->first_pending;
        b->n -= b->first_pending;
        b->first_pending = 0;
    }
    for (size_t i = b->first_pending; i < b->n && ar_jobset_room(b->set) && b->stop == GOING; i++) {
        struct job *j = b->jobs[i];
        if (!j)
            continue;
        if (j->state == SKIP) {
            report(b, j, AR_BATCH_SKIPPED, NULL);
            continue;
        }
        if (j->state != PENDING)
            continue;
        if (j->job.error) {
            report_failed(b, j, AR_EUSAGE, j->job.error);
            continue;
        }
        if (j->job.worktree && tree_busy(b, j->job.worktree)) {
            if (!j->waited) {
                j->waited = 1;
                b->st.edit_jobs_waited++;
            }
            if (!b->serial_said) {
                ar_warn(&b->o.defaults.logger, "jobs that edit the same work tree run one at a "
                                               "time, so that each one's files are its own");
                b->serial_said = 1;
            }
            continue;
        }
        int budget = budget_check(b);
        if (budget == BUDGET_WAIT)
            break;
        if (budget == BUDGET_OVER) {
            b->stop = STOP_BUDGET;
            break;
        }
        start(b, j);
    }
    /* Stopped: nothing more starts; the rest are written off once nothing runs
     * (a running job's cost may still come in). */
    if (b->stop != GOING && !ar_jobset_running(b->set))
        write_off_rest(b);
    b->in_pump = 0;
    /* A kick on its way (ar_batch_close(), ar_batch_add()) is the one that ends it. */
    if (b->closed && !ar_jobset_running(b->set) && b->reported == b->base + b->n &&
        !ar_jobset_kicked(b->set))
        finish(b);
}

/* ---- the public API -------------------------------------------------------------------- */

static void destroy(struct ar_batch *b)
{
    /* Running jobs are out of the queue (a batch ends with none running). */
    for (struct job *j = b->running, *next; j; j = next) {
        next = j->next;
        if (j->seq < b->base || j->seq - b->base >= b->n) {
            ar_batch_job_finish(&j->job);
            free(j);
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        if (!b->jobs[i])
            continue;
        ar_batch_job_finish(&b->jobs[i]->job);
        free(b->jobs[i]);
    }
    free(b->jobs);
    ar_batch_job_finish(&b->defaults);
    free(b->seen.slot);
    free(b->done_ids.slot);
    free(b);
}

static void finish(struct ar_batch *b)
{
    struct ar_batch_stats st;
    ar_batch_get_stats(b, &st);
    b->done(b, &st, b->arg);
    ar_jobset_end(b->set);
    destroy(b);
}

/* The defaults of a batch: the one place they are written. */
void ar_batch_options_init(struct ar_batch_options *o)
{
    memset(o, 0, sizeof(*o));
    ar_run_options_init(&o->defaults);
    o->jobs = 4;
}

int ar_batch_start(struct uv_loop_s *loop, const struct ar_batch_options *o,
                   ar_batch_record_fn *record, ar_batch_done_fn *done, void *arg,
                   struct ar_batch **out, struct ar_error *err)
{
    AR_START_ARGS(ar_batch_start, err, out, loop && o && record && done && out,
                  "a loop, options, record and done callbacks and somewhere to put the batch");
    struct ar_batch *b = calloc(1, sizeof(*b));
    if (!b)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    b->o = *o;
    if (ar_batch_job_copy_options(&b->defaults, &o->defaults) < 0) {
        destroy(b);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    b->o.defaults = b->defaults.opts;
    b->record = record;
    b->done = done;
    b->arg = arg;
    static const struct ar_jobset_ops ops = { pump, on_job_done };
    unsigned want = o->jobs ? o->jobs : 1;
    if (!(b->set = ar_jobset_create(loop, want, &ops, b, o->defaults.share, err))) {
        int rc = err->code;
        destroy(b);
        return rc;
    }
    ar_budget_init(&b->budget, ar_share_budget(ar_jobset_share(b->set)), o->max_cost_usd,
                   "the batch's cap");
    b->st.jobs = ar_jobset_cap(b->set);
    if (b->st.jobs < want)
        ar_warn(&b->o.defaults.logger,
                "-j %u lowered to %u: the open file limit (ulimit -n) allows no more", want,
                b->st.jobs);
    ar_git_tree_session_id(b->session);
    b->t0 = ar_now_ms();
    *out = b;
    return 0;
}

static int mark_done(void *arg, const char *key, int ok, size_t offset, size_t len)
{
    (void)offset;
    (void)len;
    if (ok && idset_add(arg, key, 0) < 0)
        return AR_ENOMEM;
    return 0;
}

int ar_batch_resume(struct ar_batch *b, const char *text, size_t len, struct ar_error *err)
{
    int rc = ar_batch_record_each(text, len, mark_done, &b->done_ids);
    if (rc < 0)
        return ar_error_set(err, rc, NULL, "out of memory");
    return 0;
}

/* Appends j to the queue and kicks the scheduler. Takes j. */
static int enqueue(struct ar_batch *b, struct job *j, struct ar_error *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        struct job **v = realloc(b->jobs, cap * sizeof(*v));
        if (!v)
            goto nomem;
        b->jobs = v;
        b->cap = cap;
    }
    ar_jobset_kick(b->set);
    j->seq = b->base + b->n;
    b->jobs[b->n++] = j;
    b->st.added++;
    if (!j->job.error && idset_get(&b->done_ids, j->job.id) >= 0) {
        j->state = SKIP;
        b->st.skipped++;
    }
    return 0;
nomem:
    ar_batch_job_finish(&j->job);
    free(j);
    return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
}

int ar_batch_add_line(struct ar_batch *b, const char *line, size_t len, struct ar_error *err)
{
    if (b->closed)
        return ar_error_set(err, AR_EUSAGE, NULL, "the batch is closed: no job can be added");
    size_t lineno = ++b->lineno;
    if (ar_batch_line_blank(line, len))
        return 0;
    struct job *j = calloc(1, sizeof(*j));
    if (!j || ar_batch_job_parse(line, len, lineno, &b->o.defaults, &j->job) < 0) {
        if (j)
            ar_batch_job_finish(&j->job);
        free(j);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    long long first = j->job.error ? -1 : idset_get(&b->seen, j->job.id);
    if (first >= 0) {
        /* Its record is keyed by its line, as for a line without an id, so the
         * output never holds two records of one id. */
        char msg[200], id[32], where[48] = "by ar_batch_add()"; /* a line 0: a job built in C */
        if (first > 0)
            snprintf(where, sizeof(where), "on line %lld", first);
        snprintf(msg, sizeof(msg), "line %zu: id '%.100s' is used twice (first %s)", lineno,
                 j->job.id, where);
        snprintf(id, sizeof(id), "line %zu", lineno);
        free(j->job.id);
        j->job.id = strdup(id);
        j->job.error = strdup(msg);
        j->job.id_is_integer = 0;
        if (!j->job.id || !j->job.error) {
            ar_batch_job_finish(&j->job);
            free(j);
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
    } else if (!j->job.error && idset_add(&b->seen, j->job.id, lineno) < 0) {
        ar_batch_job_finish(&j->job);
        free(j);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    return enqueue(b, j, err);
}

int ar_batch_add(struct ar_batch *b, const char *id, const struct ar_run_options *o,
                 struct ar_error *err)
{
    if (b->closed)
        return ar_error_set(err, AR_EUSAGE, NULL, "the batch is closed: no job can be added");
    if (!id)
        return ar_error_set(err, AR_EUSAGE, NULL, "a job needs an id");
    if (idset_get(&b->seen, id) >= 0)
        return ar_error_set(err, AR_EUSAGE, NULL, "id '%.100s' is used twice", id);
    struct job *j = calloc(1, sizeof(*j));
    if (!j)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    j->job.id = strdup(id);
    int rc = ar_batch_job_copy_options(&j->job, o);
    if (rc == 0)
        j->job.worktree = ar_batch_job_work_tree(o);
    if (rc < 0 || !j->job.id || idset_add(&b->seen, id, 0) < 0) {
        ar_batch_job_finish(&j->job);
        free(j);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    return enqueue(b, j, err);
}

void ar_batch_close(struct ar_batch *b)
{
    b->closed = 1;
    ar_jobset_kick(b->set); /* an empty batch ends from there */
}

struct compact {
    const struct ar_batch *b;
    json_t *best; /* id -> [line offset, ok] */
    struct ar_buf *out;
    const char *text;
};

static int pick_best(void *arg, const char *key, int ok, size_t offset, size_t len)
{
    struct compact *c = arg;
    (void)len;
    json_t *cur = json_object_get(c->best, key);
    if (ok || !cur || !json_is_true(json_array_get(cur, 1))) {
        json_t *v = json_pack("[Ib]", (json_int_t)offset, ok);
        if (!v || json_object_set_new(c->best, key, v) < 0)
            return AR_ENOMEM;
    }
    return 0;
}

static int keep_best(void *arg, const char *key, int ok, size_t offset, size_t len)
{
    struct compact *c = arg;
    (void)ok;
    json_t *keep = json_object_get(c->best, key);
    if (keep && json_integer_value(json_array_get(keep, 0)) == (json_int_t)offset)
        if (ar_buf_append(c->out, c->text + offset, len) < 0 || ar_buf_putc(c->out, '\n') < 0)
            return AR_ENOMEM;
    return 0;
}

char *ar_batch_compact_records(const struct ar_batch *b, const char *text, size_t len,
                               size_t *out_len)
{
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    struct compact c = { b, json_object(), &out, text };
    int rc = c.best ? ar_batch_record_each(text, len, pick_best, &c) : AR_ENOMEM;
    /* Every line about to get a record, a job that runs again or a bad line that is
     * reported again: its new record is its final one. A bad line is never skipped, so
     * keeping its old record too would leave one more copy of it per resume. */
    for (size_t i = 0; rc == 0 && i < b->n; i++)
        if (b->jobs[i] && b->jobs[i]->state == PENDING)
            json_object_del(c.best, b->jobs[i]->job.id);
    if (rc == 0)
        rc = ar_batch_record_each(text, len, keep_best, &c);
    json_decref(c.best);
    if (rc < 0) {
        ar_buf_finish(&out);
        return NULL;
    }
    return ar_buf_detach(&out, out_len);
}

void ar_batch_get_stats(const struct ar_batch *b, struct ar_batch_stats *st)
{
    *st = b->st;
    st->running = ar_jobset_running(b->set);
    st->cancelled = ar_jobset_cancelled(b->set) != 0;
    st->duration_ms = ar_now_ms() - b->t0;
}

void ar_batch_cancel(struct ar_batch *b)
{
    if (b->stop == GOING)
        b->stop = STOP_CANCEL;
    ar_jobset_cancel(b->set);
}
