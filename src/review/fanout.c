/*
 * A review of one diff on the caller's loop (agentrun/review.h): the diff read
 * and cut into chunks, the chunks reviewed concurrently by a job set
 * (src/run/jobset.h: the loop attached to the caller's, the cap, the shared
 * rate-limit backoff, cancel), in order, the chunk reviews merged, located and
 * judged, and the result handed to the done callback.
 *
 * The blocking ar_review() runs it on a private loop, like ar_run().
 *
 * Ownership: the review run owns its copy of the options, the diff, its chunks
 * and the job set, and frees them after done returns; the result it hands to
 * done belongs to the caller from then on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prompt/prompt.h"
#include "proc/proc.h"
#include "review/diff.h"
#include "result/result.h"
#include "review/review.h"
#include "run/budget.h"
#include "run/jobset.h"
#include "run/run.h"
#include "run/share.h"
#include "run/start.h"
#include "util/log.h"
#include "util/macros.h"
#include "util/strv.h"
#include "util/utf8.h"

/* The result and the strings its plan points to. */
struct result_box {
    struct ar_review_result pub;
    char *source;
    const char **excluded; /* borrowed from pub.coverage */
};

/* One chunk's review job: by one member, in a panel. */
struct chunk_job {
    struct ar_review_run *rr;
    size_t index;  /* the chunk */
    size_t member; /* the panel member (0 without a panel) */
    size_t order;  /* its place in the start order: chunk by chunk, each member's in turn */
    int started;   /* its run started */
    int over;      /* its review is in (or it was written off) */
    char job_id[96];
    struct ar_review rv;
};

struct ar_review_run {
    struct ar_jobset *set;   /* the chunks' runs: the loop, the cap, the backoff, cancel */
    struct ar_budget budget; /* the review's cap, over every chunk (below the share's) */
    ar_review_done_fn *done;
    void *arg;
    ar_review_event_fn *on_event;
    void *event_arg;
    int fail_on, strict;

    /* The options' strings, copied. */
    struct ar_run_options run;
    struct ar_strv strings, include, exclude;
    char *instructions;
    char *instructions_from; /* the instructions' name, as the caller read it, or NULL */
    struct ar_baseline baseline;
    int has_baseline;

    /* The diff and what is reviewed of it. */
    struct ar_buf text;
    struct ar_diff diff;
    struct ar_diff_gaps gaps;       /* changed paths the diff could not show */
    struct ar_diff_names names;     /* git's names of its files, when git made the diff */
    struct ar_patch_series patches; /* a patch's files as git apply reads them, else empty */
    unsigned char *send;            /* per file of diff: enum ar_diff_send */
    struct ar_diff_chunk *chunks;
    size_t n_chunks;
    struct chunk_job *jobs; /* n_members × n_chunks: member m's chunk c at m * n_chunks + c */
    size_t n_jobs;
    size_t next;     /* the first job (in start order) not yet started or written off */
    size_t finished; /* jobs whose review is in (or written off) */
    /* A panel (panel.c): its members; without one, n_members is 1 (run.provider). */
    struct ar_panel_spec panel;
    int is_panel;
    size_t n_members;
    unsigned quorum;
    int escalating;           /* the others review only some chunks (escalate, escalate_files) */
    int escalate;             /* a severity: the others review a chunk once the first member found
                                 something at or above it there; -1: no finding asks them */
    unsigned char *escalated; /* per chunk: a file of it matches escalate_files */
    char *root;               /* the repository's top, or NULL */
    uint64_t t0;

    struct result_box *res;
};

/* Points *field at a copy of itself kept in rr->strings. Returns 0 or AR_ENOMEM. */
static int keep_string(struct ar_review_run *rr, const char **field)
{
    if (!*field)
        return 0;
    char *copy = strdup(*field);
    if (!copy || ar_strv_push_take(&rr->strings, copy) != 0)
        return AR_ENOMEM;
    *field = copy;
    return 0;
}

/* Copies the run options a chunk's run uses; the review sets the rest per chunk. */
static int copy_run_options(struct ar_review_run *rr, const struct ar_run_options *o)
{
    rr->run = *o;
    struct ar_run_options *c = &rr->run;
    c->prompt = NULL;
    c->template_name = NULL;
    c->vars = NULL;
    c->n_vars = 0;
    c->schema = NULL;
    c->resume = NULL;
    c->job_id = NULL;
    const char **fields[] = {
        &c->provider,    &c->fallback,        &c->model,      &c->prompts_dir, &c->cwd,
        &c->prices_file, &c->transcript_path, &c->record_dir, &c->replay_dir,  &c->cache_dir,
    };
    for (size_t i = 0; i < AR_ARRAY_SIZE(fields); i++)
        if (keep_string(rr, fields[i]) != 0)
            return AR_ENOMEM;
    return 0;
}

static int copy_globs(struct ar_strv *to, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ar_strv_push(to, v[i]) != 0)
            return AR_ENOMEM;
    return 0;
}

static void run_free(struct ar_review_run *rr)
{
    if (rr->jobs)
        for (size_t i = 0; i < rr->n_jobs; i++)
            ar_review_finish(&rr->jobs[i].rv);
    free(rr->jobs);
    ar_panel_spec_finish(&rr->panel);
    ar_jobset_end(rr->set);
    ar_diff_chunks_free(rr->chunks, rr->n_chunks);
    ar_diff_finish(&rr->diff);
    ar_diff_gaps_finish(&rr->gaps);
    ar_diff_names_finish(&rr->names);
    ar_patch_series_finish(&rr->patches);
    free(rr->send);
    free(rr->escalated);
    ar_buf_finish(&rr->text);
    ar_baseline_finish(&rr->baseline);
    free(rr->instructions);
    free(rr->instructions_from);
    free(rr->root);
    ar_strv_finish(&rr->strings);
    ar_strv_finish(&rr->include);
    ar_strv_finish(&rr->exclude);
    ar_review_result_destroy(rr->res ? &rr->res->pub : NULL);
    free(rr);
}

void ar_review_result_destroy(struct ar_review_result *res)
{
    if (!res)
        return;
    struct result_box *box = ar_container_of(res, struct result_box, pub);
    ar_review_finish(&box->pub.review);
    ar_coverage_free(&box->pub.coverage);
    for (size_t i = 0; i < box->pub.panel.n_members; i++) {
        free(box->pub.panel.members[i].provider);
        free(box->pub.panel.members[i].model);
    }
    free(box->pub.panel.members);
    free(box->excluded);
    free(box->source);
    free(box);
}

int ar_review_result_from_error(const struct ar_error *error, struct ar_review_result **out)
{
    struct result_box *box = calloc(1, sizeof(*box));
    *out = NULL;
    if (!box)
        return AR_ENOMEM;
    struct ar_review_result *res = &box->pub;
    ar_review_init(&res->review);
    res->review.summary = strdup("");
    if (!res->review.summary) {
        ar_review_result_destroy(res);
        return AR_ENOMEM;
    }
    res->review.failed = 1;
    res->review.error = *error;
    res->fail_on = AR_SEV_LOW;
    res->verdict.exit_status = ar_error_exit_status(error->code);
    *out = res;
    return 0;
}

const struct ar_review_plan *ar_review_plan(const struct ar_review_run *rr)
{
    return &rr->res->pub.plan;
}

/* ---- finishing ----------------------------------------------------------- */

/* The review's caps, when any applied: its own over every chunk, what its calls spent, and
 * why a call was refused. */
static void note_budget(struct ar_review_run *rr, struct ar_review *rv)
{
    const struct ar_budget *b = &rr->budget;
    int capped = 0;
    for (const struct ar_budget *p = b; p; p = p->parent)
        capped |= p->cap > 0;
    if (!capped || !(rv->budget = calloc(1, sizeof(*rv->budget))))
        return;
    rv->budget->cap_usd = b->cap;
    rv->budget->spent_usd = b->spent;
    if (rv->failed && rv->error.code == AR_EBUDGET)
        rv->budget->refused = strdup(rv->error.msg);
}

/* Calls done with the result, then frees the run and lets go of the loop. */
static void deliver(struct ar_review_run *rr)
{
    struct result_box *box = rr->res;
    if (rr->set)
        note_budget(rr, &box->pub.review);
    rr->res = NULL;
    rr->done(rr, &box->pub, rr->arg);
    run_free(rr);
}

/* A review that could not be completed: failed with code and msg. */
static void fail_review(struct ar_review *rv, int code, const char *msg)
{
    rv->failed = 1;
    rv->passed = 0;
    ar_error_set(&rv->error, code, NULL, "%s", msg);
}

static void finish_nothing(struct ar_review_run *rr)
{
    struct ar_review_result *res = &rr->res->pub;
    /* Nothing to send: no call, and a document a CI step can parse. It passes only
     * when every changed path was left out by a rule (the coverage decides). */
    res->review.passed = res->coverage.n_unreviewed == 0;
    res->review.summary = strdup("nothing to review");
    if (!res->review.summary)
        fail_review(&res->review, AR_ENOMEM, "out of memory");
    /* No member was asked anything. */
    for (size_t m = 0; m < res->panel.n_members; m++)
        res->panel.members[m].status = AR_MEMBER_NOT_ASKED;
    ar_review_verdict(&res->review, &res->coverage, rr->fail_on, rr->strict, &res->verdict);
    deliver(rr);
}

static void finish_panel(struct ar_review_run *rr);

static void finish_reviewed(struct ar_review_run *rr)
{
    if (rr->is_panel) {
        finish_panel(rr);
        return;
    }
    struct ar_review *merged = &rr->res->pub.review;
    struct ar_review *parts = calloc(rr->n_chunks, sizeof(*parts));
    struct ar_error err = AR_ERROR_INIT;
    int rc = parts ? 0 : ar_error_set(&err, AR_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; !rc && i < rr->n_chunks; i++)
        parts[i] = rr->jobs[i].rv;
    if (!rc)
        rc = ar_review_merge(parts, rr->n_chunks, &rr->diff, merged, &err);
    /* What was reviewed: a file whose chunks all came back with a review. */
    if (!rc && ar_coverage_finish(&rr->res->pub.coverage, parts, rr->n_chunks, merged) != 0)
        rc = ar_error_set(&err, AR_ENOMEM, NULL, "out of memory");
    free(parts);
    if (!rc) {
        merged->duration_ms = ar_now_ms() - rr->t0;
        /* The model's paths are hostile text: resolved against the diff and the
         * repository (those outside it unplaced) before anyone shows them. */
        const char *cwd = rr->run.cwd ? rr->run.cwd : ".";
        rc = ar_review_locate(merged, &rr->diff, rr->root ? rr->root : cwd, &err);
    }
    if (rc) {
        ar_review_finish(merged);
        ar_review_init(merged);
        merged->summary = strdup("");
        fail_review(merged, rc, err.msg);
    } else if (rr->has_baseline) {
        ar_review_apply_baseline(merged, &rr->baseline);
    }
    ar_review_verdict(merged, &rr->res->pub.coverage, rr->fail_on, rr->strict,
                      &rr->res->pub.verdict);
    deliver(rr);
}

/* How many of rv's calls ran (a CLI started). */
static size_t calls_ran(const struct ar_review *rv)
{
    size_t n = 0;
    for (size_t i = 0; i < rv->n_calls; i++)
        n += rv->calls[i].exit_code >= 0;
    return n;
}

/* Member m's chunk reviews, in chunk order (borrowed from the jobs), into parts. A chunk
 * whose call never started (refused for the budget, written off, not asked) spent
 * nothing: its cost is no unknown that would make the panel's total unknown. */
static void member_parts(struct ar_review_run *rr, size_t m, struct ar_review *parts)
{
    for (size_t c = 0; c < rr->n_chunks; c++) {
        struct ar_review *rv = &rr->jobs[m * rr->n_chunks + c].rv;
        if (!calls_ran(rv) && !rv->n_cached && rv->cost_source == AR_COST_UNKNOWN) {
            rv->cost_source = AR_COST_CACHE; /* neutral in the merge: nothing spent */
            rv->cost_usd = 0;
        }
        parts[c] = *rv;
    }
}

/*
 * A panel's end (docs/review.md, "A panel"): each member's chunk reviews merged and
 * located on their own, with the coverage they give; the findings matched across
 * members (panel.c); the accounting of every call summed; a file reviewed when at
 * least the quorum of members reviewed it; the review failed only when fewer members
 * than the quorum answered; then the baseline, the quorum marks and the verdict.
 */
static int panel_end(struct ar_review_run *rr, struct ar_review *mv, struct ar_review_coverage *mc,
                     struct ar_error *err)
{
    struct ar_review_result *res = &rr->res->pub;
    struct ar_review *merged = &res->review;
    size_t n = rr->n_members, C = rr->n_chunks;
    const char *names[AR_REVIEW_MAX_PANEL];
    const char *cwd = rr->run.cwd ? rr->run.cwd : ".";
    struct ar_review *parts = calloc(rr->n_jobs, sizeof(*parts));
    if (!parts)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    int rc = 0;
    for (size_t m = 0; m < n && !rc; m++) {
        names[m] = rr->panel.names[m];
        member_parts(rr, m, parts + m * C);
        rc = ar_review_merge(parts + m * C, C, &rr->diff, &mv[m], err);
        if (!rc)
            rc = ar_coverage_copy(&res->coverage, &mc[m]);
        if (!rc)
            rc = ar_coverage_finish(&mc[m], parts + m * C, C, &mv[m]);
        if (!rc)
            rc = ar_review_locate(&mv[m], &rr->diff, rr->root ? rr->root : cwd, err);
    }
    /* The accounting of every call (tokens, cost, calls, summaries, notes), then the
     * findings matched. */
    if (!rc)
        rc = ar_review_merge(parts, rr->n_jobs, &rr->diff, merged, err);
    free(parts);
    if (!rc)
        rc = ar_panel_match(mv, n, names, merged);
    if (!rc)
        rc = ar_panel_members(&res->panel, mv, mc, n);
    for (size_t m = 0; m < n && !rc; m++) {
        res->panel.members[m].chunks = 0;
        res->panel.members[m].calls = 0;
        for (size_t c = 0; c < C; c++)
            res->panel.members[m].calls +=
                calls_ran(&rr->jobs[m * C + c].rv) + rr->jobs[m * C + c].rv.n_cached;
        for (size_t c = 0; c < C; c++)
            res->panel.members[m].chunks +=
                !rr->jobs[m * C + c].rv.failed && rr->jobs[m * C + c].rv.chunks;
    }
    if (!rc)
        rc = ar_coverage_quorum(&res->coverage, mc, names, n, rr->quorum);
    if (!rc)
        rc = ar_panel_verdict_inputs(merged, &res->panel, mv);
    if (rc && !err->code)
        ar_error_set(err, rc, NULL, "out of memory");
    return rc;
}

static void finish_panel(struct ar_review_run *rr)
{
    struct ar_review_result *res = &rr->res->pub;
    struct ar_review *merged = &res->review;
    size_t n = rr->n_members;
    struct ar_review mv[AR_REVIEW_MAX_PANEL];
    struct ar_review_coverage mc[AR_REVIEW_MAX_PANEL];
    memset(mc, 0, sizeof(mc));
    for (size_t m = 0; m < n; m++)
        ar_review_init(&mv[m]);
    struct ar_error err = AR_ERROR_INIT;
    int rc = panel_end(rr, mv, mc, &err);
    for (size_t m = 0; m < n; m++) {
        ar_review_finish(&mv[m]);
        ar_coverage_free(&mc[m]);
    }
    if (rc) {
        ar_review_finish(merged);
        ar_review_init(merged);
        merged->summary = strdup("");
        fail_review(merged, rc, err.msg);
    } else {
        merged->duration_ms = ar_now_ms() - rr->t0;
        if (rr->has_baseline)
            ar_review_apply_baseline(merged, &rr->baseline);
        ar_panel_quorum(merged, rr->quorum);
    }
    ar_review_verdict(merged, &res->coverage, rr->fail_on, rr->strict, &res->verdict);
    deliver(rr);
}

/* ---- the chunks ---------------------------------------------------------- */

/* index: the job's place in rr->jobs. */
static void emit(struct ar_review_run *rr, enum ar_review_event_kind kind, size_t index,
                 const struct ar_review *rv)
{
    if (!rr->on_event)
        return;
    const struct chunk_job *job = &rr->jobs[index];
    struct ar_review_event ev = {
        .kind = kind,
        .chunk = job->order,
        .n_chunks = rr->n_jobs,
        .running = ar_jobset_running(rr->set),
        .finished = rr->finished,
        .review = rv,
        .member = rr->is_panel ? rr->panel.names[job->member] : NULL,
    };
    rr->on_event(rr->event_arg, &ev);
}

/* The chunk is over with res (taken; NULL: out of memory). */
static void job_finish(struct chunk_job *job, struct ar_result *res)
{
    struct ar_review_run *rr = job->rr;
    ar_review_finish(&job->rv);
    ar_review_init(&job->rv);
    if (!res || ar_review_from_result(res, &job->rv) != 0)
        fail_review(&job->rv, AR_ENOMEM, "out of memory");
    ar_result_destroy(res);
    job->over = 1;
    rr->finished++;
    emit(rr, AR_REVIEW_CHUNK_FINISHED, (size_t)(job - rr->jobs), &job->rv);
}

/* Escalation: the job is not asked for (its chunk's first member found nothing at or above
 * the severity): it is over, reviewed by no call, and neither failed nor reviewed. */
static void job_not_asked(struct chunk_job *job)
{
    struct ar_review_run *rr = job->rr;
    ar_review_finish(&job->rv);
    ar_review_init(&job->rv);
    job->rv.passed = 1;
    if (!(job->rv.summary = strdup("")))
        fail_review(&job->rv, AR_ENOMEM, "out of memory");
    job->over = 1;
    rr->finished++;
    emit(rr, AR_REVIEW_CHUNK_FINISHED, (size_t)(job - rr->jobs), &job->rv);
}

/* Whether a review asks the other members: a finding at or above the escalation's
 * severity, or no review at all (a failed or degraded one says nothing either way). */
static int escalates(const struct ar_review *rv, int sev)
{
    if (rv->failed || rv->degraded)
        return 1;
    for (size_t i = 0; i < rv->n_issues; i++)
        if ((int)rv->issues[i].severity <= sev)
            return 1;
    for (size_t i = 0; i < rv->n_unplaced; i++)
        if ((int)rv->unplaced[i].severity <= sev)
            return 1;
    return 0;
}

/* The job that starts order-th: chunk by chunk, every member's call of a chunk in turn. */
static struct chunk_job *job_at(struct ar_review_run *rr, size_t order)
{
    size_t chunk = order / rr->n_members, member = order % rr->n_members;
    return &rr->jobs[member * rr->n_chunks + chunk];
}

/* The provider a job calls. */
static const char *job_provider(const struct ar_review_run *rr, const struct chunk_job *job)
{
    return rr->is_panel ? rr->panel.names[job->member] : rr->run.provider;
}

/* Writes off every job not started yet: after a cancel (member is then SIZE_MAX), or
 * once one of member's failed (a provider failure fails that member's review: no
 * more of its calls are spent on it; without a panel, the review's). */
static void skip_rest(struct ar_review_run *rr, size_t member)
{
    const char *why = ar_jobset_cancelled(rr->set) ? "interrupted"
                      : rr->is_panel ? "not reviewed: another chunk of this member failed"
                                     : "not reviewed: another chunk failed";
    for (size_t k = rr->next; k < rr->n_jobs; k++) {
        struct chunk_job *job = job_at(rr, k);
        if (job->started || job->over || (member != SIZE_MAX && job->member != member))
            continue;
        job_finish(job, ar_result_new_failed(job_provider(rr, job), AR_EINTERRUPTED, why));
    }
}

static void on_chunk_done(void *owner, void *arg, struct ar_result *res)
{
    struct ar_review_run *rr = owner;
    struct chunk_job *job = arg;
    job_finish(job, res);
    if (job->rv.failed)
        skip_rest(rr, job->member);
    /* The first member's review of a chunk decides whether the others are asked (a chunk
     * escalated by its files they review anyway). */
    if (rr->escalating && job->member == 0 && !(rr->escalated && rr->escalated[job->index]) &&
        !escalates(&job->rv, rr->escalate))
        for (size_t m = 1; m < rr->n_members; m++) {
            struct chunk_job *other = &rr->jobs[m * rr->n_chunks + job->index];
            if (!other->started && !other->over)
                job_not_asked(other);
        }
}

/* Whether a job may start: escalation holds the others back until the chunk's first
 * member's review is in, unless the chunk's files escalate it from the start. */
static int job_ready(const struct ar_review_run *rr, const struct chunk_job *job)
{
    return !rr->escalating || job->member == 0 || (rr->escalated && rr->escalated[job->index]) ||
           rr->jobs[job->index].over;
}

/* Starts a chunk's run; one that cannot start fails the review. */
static void chunk_start(struct chunk_job *job)
{
    struct ar_review_run *rr = job->rr;
    const struct ar_diff_chunk *c = &rr->chunks[job->index];
    /* The chunk goes into the prompt as a C string: one that would not arrive
     * whole is never reviewed (and so never passes). */
    job->started = 1;
    if (strlen(c->text) != c->len) {
        job_finish(job,
                   ar_result_new_failed(job_provider(rr, job), AR_EUSAGE,
                                        "the chunk holds a NUL byte and cannot be sent whole"));
        skip_rest(rr, job->member);
        return;
    }
    struct ar_var vars[2] = {
        { "diff", c->text },
        { "instructions", rr->instructions ? rr->instructions : "" },
    };
    struct ar_run_options o = rr->run;
    o.template_name = "review";
    o.vars = vars;
    o.n_vars = 2;
    o.allow_edits = 0;
    /* The review's cap covers every chunk: the chunks' runs reserve under its node. */
    o.max_cost_usd = 0;
    /* A text call: the diff is in the prompt (DESIGN §4b). */
    o.tools = o.tools == AR_TOOLS_READ ? AR_TOOLS_READ : AR_TOOLS_NONE;
    o.no_session = 1;
    /* A review changes nothing: the git snapshots would only cost time. */
    o.track_files = 0;
    o.job_id = rr->n_jobs > 1 ? job->job_id : NULL;
    if (rr->is_panel) {
        /* A member is its provider: its own model, and no fallback to another. */
        o.provider = rr->panel.names[job->member];
        o.model = rr->panel.models[job->member];
        o.fallback = NULL;
    }
    /* Each finding is judged alone (salvage.c): one that breaks the contract never
     * costs the others a repair call or a degraded review. */
    struct ar_pipeline_extra extra = { AR_REVIEW_ITEMS, &rr->budget };
    struct ar_error err = AR_ERROR_INIT;
    if (ar_jobset_start(rr->set, &o, &extra, job, &err) < 0) {
        job_finish(job, ar_result_new_failed(o.provider, err.code ? err.code : AR_EUSAGE, err.msg));
        skip_rest(rr, job->member);
        return;
    }
    emit(rr, AR_REVIEW_CHUNK_STARTED, (size_t)(job - rr->jobs), NULL);
}

/* From the loop: the chunks in order while there is room, the rest written off after
 * a cancel (the running calls end: the loop kills their groups), the end once every
 * chunk is in. */
static void pump(void *owner)
{
    struct ar_review_run *rr = owner;
    if (!rr->res->pub.plan.reviewed) {
        finish_nothing(rr);
        return;
    }
    if (ar_jobset_cancelled(rr->set))
        skip_rest(rr, SIZE_MAX);
    /* In start order; a job held back (escalation) keeps its place. */
    while (rr->next < rr->n_jobs) {
        struct chunk_job *job = job_at(rr, rr->next);
        if (!job->started && !job->over)
            break;
        rr->next++;
    }
    for (size_t k = rr->next; k < rr->n_jobs && ar_jobset_room(rr->set); k++) {
        struct chunk_job *job = job_at(rr, k);
        if (!job->started && !job->over && job_ready(rr, job))
            chunk_start(job);
    }
    if (rr->finished == rr->n_jobs && !ar_jobset_running(rr->set))
        finish_reviewed(rr);
}

void ar_review_cancel(struct ar_review_run *rr)
{
    ar_jobset_cancel(rr->set);
}

/* ---- the start ----------------------------------------------------------- */

static int check_options(const struct ar_review_options *o, struct ar_error *err)
{
    if (o->diff && (o->rev || o->staged))
        return ar_error_set(err, AR_EUSAGE, NULL,
                            "give the diff text, a revision or staged, "
                            "not several");
    if (o->jobs < 1 || o->jobs > AR_REVIEW_MAX_JOBS)
        return ar_error_set(err, AR_EUSAGE, "jobs", "jobs must be 1 to %d, not %u",
                            AR_REVIEW_MAX_JOBS, o->jobs);
    if (o->max_chunk_bytes == 0)
        return ar_error_set(err, AR_EUSAGE, "max_chunk_bytes", "max_chunk_bytes must be > 0");
    if (o->max_chunks == 0)
        return ar_error_set(err, AR_EUSAGE, "max_chunks", "max_chunks must be > 0");
    if (o->fail_on < 0 || o->fail_on > AR_FAIL_ON_NONE)
        return ar_error_set(err, AR_EUSAGE, "fail_on", "fail_on must be a severity or none");
    for (size_t i = 0; i < o->n_include + o->n_exclude; i++) {
        const char *g = i < o->n_include ? o->include[i] : o->exclude[i - o->n_include];
        if (!g || !*g)
            return ar_error_set(err, AR_EUSAGE, NULL, "a glob of include or exclude is empty");
    }
    return 0;
}

static int copy_options(struct ar_review_run *rr, const struct ar_review_options *o,
                        struct ar_error *err)
{
    rr->fail_on = o->fail_on;
    rr->strict = o->strict;
    rr->on_event = o->on_event;
    rr->event_arg = o->event_arg;
    int rc = copy_run_options(rr, &o->run);
    if (!rc)
        rc = copy_globs(&rr->include, o->include, o->n_include);
    if (!rc)
        rc = copy_globs(&rr->exclude, o->exclude, o->n_exclude);
    if (!rc && o->instructions && !(rr->instructions = strdup(o->instructions)))
        rc = AR_ENOMEM;
    if (!rc && o->instructions_from && !(rr->instructions_from = strdup(o->instructions_from)))
        rc = AR_ENOMEM;
    const struct ar_baseline *b = ar_review_baseline_get(o->baseline);
    if (!rc && b) {
        rr->has_baseline = 1;
        rr->baseline.n = b->n;
        if (b->n && !(rr->baseline.fp = malloc(b->n * sizeof(*b->fp))))
            rc = AR_ENOMEM;
        else if (b->n)
            memcpy(rr->baseline.fp, b->fp, b->n * sizeof(*b->fp));
        if (rc)
            rr->baseline.n = 0;
        if (!rc && b->file && !(rr->baseline.file = strdup(b->file)))
            rc = AR_ENOMEM;
    }
    return rc ? ar_error_set(err, rc, NULL, "out of memory") : 0;
}

/* Reads the diff into rr->text; the plan's source gets its label. */
static int read_diff(struct ar_review_run *rr, const struct ar_review_options *o,
                     struct ar_error *err)
{
    struct result_box *box = rr->res;
    if (o->diff) {
        int rc = ar_buf_append(&rr->text, o->diff, o->diff_len);
        if (rc == AR_ETOOBIG)
            return ar_error_set(err, rc, NULL, "the diff is larger than %zu bytes",
                                AR_DIFF_MAX_BYTES);
        if (rc || (o->label && !(box->source = strdup(o->label))))
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        return 0;
    }
    struct ar_diff_source src = { o->rev, o->staged, rr->run.cwd, 1 };
    return ar_diff_acquire(&src, &rr->text, &box->source, &rr->gaps, &rr->names, err);
}

/* Why no call is made, from the coverage of a diff that sends nothing whole. */
static const char *why_nothing(const struct ar_review_coverage *cov)
{
    size_t binary = 0;
    for (size_t i = 0; i < cov->n_files; i++)
        binary += cov->files[i].status == AR_COVER_BINARY;
    if (!cov->n_files)
        return "the diff is empty";
    if (cov->n_excluded == cov->n_files && !binary)
        return "every changed file is excluded";
    if (binary == cov->n_files)
        return "binary files only";
    return "no changed file can be sent";
}

/* Text that is not blank but holds no file section is not a diff (a wrong path in CI):
 * it must not pass as an empty one. */
static int not_a_diff(const struct ar_review_run *rr, const char *source, size_t read,
                      struct ar_error *err)
{
    const char *t = ar_buf_cstr(&rr->text);
    size_t n = rr->text.len, shown = 0, i = 0;
    char head[48];
    /* Its first bytes, printable ASCII only: the text is hostile, stderr a terminal.
     * A line break is one space, so the words of two lines stay apart. */
    for (; i < n && shown + 1 < sizeof(head); i++) {
        if (t[i] == '\r' || (t[i] == '\n' && (!shown || head[shown - 1] == ' ')))
            continue;
        head[shown++] = t[i] == '\n' ? ' ' : t[i] >= 0x20 && t[i] < 0x7f ? t[i] : '?';
    }
    while (shown && head[shown - 1] == ' ')
        shown--;
    head[shown] = '\0';
    return ar_error_set(err, AR_EUSAGE, "diff",
                        "%s is not a diff: %zu bytes without a file header ('diff --git' or "
                        "'--- '/'+++ '), starting '%s%s'",
                        source ? source : "the input", read, head, i < n ? "…" : "");
}

static int blank(const struct ar_buf *b)
{
    const char *t = ar_buf_cstr(b);
    return strspn(t, " \t\r\n") == b->len;
}

/*
 * Every file of the checkout the verdict depends on (control.c): the
 * instructions' and the baseline's when they were read from a file rather than
 * REV:PATH, and the folders prompt templates are looked for in. Returns 0, or
 * AR_EUSAGE when the change writes one.
 */
static int check_controls(struct ar_review_run *rr, const struct ar_review_options *o,
                          struct ar_error *err)
{
    struct ar_review_control c[4];
    size_t n = 0;
    int rc = 0;
    if (rr->instructions_from) {
        rc = ar_review_spec_is_git(rr->run.cwd, rr->instructions_from, err);
        if (rc < 0)
            return rc;
        if (!rc)
            c[n++] = (struct ar_review_control){ "instructions", "instructions",
                                                 rr->instructions_from, 0 };
    }
    if (rr->baseline.file)
        c[n++] = (struct ar_review_control){ "baseline", "baseline", rr->baseline.file, 0 };
    if (rr->run.prompts_dir)
        c[n++] =
            (struct ar_review_control){ "prompt templates", "prompts_dir", rr->run.prompts_dir, 1 };
    struct ar_buf config;
    ar_buf_init(&config, AR_BUF_UNLIMITED);
    if (ar_prompt_config_dir(&config) == 0)
        c[n++] = (struct ar_review_control){ "prompt templates", "prompts_dir",
                                             ar_buf_cstr(&config), 1 };
    const char *root = rr->root ? rr->root : rr->run.cwd ? rr->run.cwd : ".";
    rc = ar_review_check_controls(&rr->res->pub.coverage, root, c, n, o->rev, o->diff != NULL, err);
    ar_buf_finish(&config);
    return rc;
}

/* The chunks the panel's other members review from the start: those holding a file that
 * matches escalate_files (the diff's paths, as --include reads them). */
static int mark_escalated(struct ar_review_run *rr, const struct ar_review_options *o,
                          struct ar_error *err)
{
    if (!o->escalate_files || !o->escalate_files[0] || !rr->n_chunks)
        return 0;
    rr->escalated = calloc(rr->n_chunks, 1);
    if (!rr->escalated)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    for (size_t c = 0; c < rr->n_chunks; c++) {
        const struct ar_diff_chunk *ch = &rr->chunks[c];
        for (size_t f = ch->first_file; f <= ch->last_file && !rr->escalated[c]; f++) {
            const char *path = rr->diff.files[f].path;
            if (!path || (rr->send && rr->send[f] == AR_DIFF_SEND_NONE))
                continue;
            for (size_t g = 0; o->escalate_files[g] && !rr->escalated[c]; g++)
                rr->escalated[c] = (unsigned char)ar_path_glob_match(o->escalate_files[g], path);
        }
    }
    return 0;
}

/*
 * Parses the diff, decides what happens to every changed path (coverage.c:
 * excluded, binary and too big files never reach the model whole; the plan
 * lists them), and cuts what is sent into chunks.
 */
static int plan_review(struct ar_review_run *rr, const struct ar_review_options *o,
                       struct ar_error *err)
{
    struct result_box *box = rr->res;
    struct ar_review_plan *plan = &box->pub.plan;
    struct ar_review_coverage *cov = &box->pub.coverage;
    plan->source = box->source;
    plan->coverage = cov;
    /* git calls a file text when its first 8,000 bytes hold no NUL: a NUL further
     * down reaches the diff, and the prompt (a C string) would end there, hiding
     * every file after it from the model. */
    int rc = 0;
    if (rr->names.given) {
        if (ar_buf_replace_nul(&rr->text, &plan->nul_bytes) != 0)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    } else {
        /* A patch: git's parsers say what it changes, and a mailbox is read as git am
         * reads it (patch.c). */
        rc = ar_patch_read(&rr->text, rr->run.cwd, &rr->patches, &plan->nul_bytes, err);
    }
    if (!rc)
        rc = ar_diff_parse(ar_buf_cstr(&rr->text), rr->text.len, &rr->diff, err);
    /* The paths are git's when git made the diff (names.c), never read from its text;
     * a patch's files are the ones git apply lists (patch.c). */
    if (!rc)
        rc = ar_diff_names_apply(&rr->diff, &rr->names, &rr->gaps, err);
    if (!rc)
        rc = ar_patch_apply(&rr->diff, &rr->patches, &rr->gaps, err);
    if (rc)
        return rc;
    /* Each NUL read became the three bytes of U+FFFD. */
    if (!rr->diff.n_files && !rr->names.given && !blank(&rr->text))
        return not_a_diff(rr, box->source, rr->text.len - 2 * plan->nul_bytes, err);

    struct ar_path_filter filter = { ar_strv_get(&rr->include), o->n_include,
                                     ar_strv_get(&rr->exclude), o->n_exclude,
                                     o->no_default_excludes };
    /* A file whose old side the review could not have read is sent whole (whole.c). */
    rc = ar_diff_old_sides(&rr->diff, &rr->text, &rr->names, &filter,
                           AR_MAX(o->max_chunk_bytes, AR_REVIEW_MAX_HUNK), &plan->nul_bytes, err);
    if (!rc)
        rc = ar_coverage_plan(&rr->diff, &filter, o->allow_binary, o->max_chunk_bytes, &rr->gaps,
                              cov, &rr->send, err);
    /* Where the model's paths are resolved and the controls are checked: the
     * repository's top, found now so that the end of the review runs no git. */
    if (!rc)
        rc = ar_diff_toplevel(rr->run.cwd, &rr->root, err);
    if (!rc)
        rc = check_controls(rr, o, err);
    if (rc)
        return rc;
    box->excluded = calloc(cov->n_files + 1, sizeof(*box->excluded));
    if (!box->excluded)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < cov->n_files; i++)
        if (cov->files[i].status == AR_COVER_EXCLUDED)
            box->excluded[plan->n_excluded++] = cov->files[i].path;
    plan->excluded = box->excluded;
    rc = ar_diff_split(&rr->diff, o->max_chunk_bytes, rr->send, &rr->chunks, &rr->n_chunks, err);
    if (!rc && ar_coverage_chunks(cov, rr->send, rr->chunks, rr->n_chunks) != 0)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (rc)
        return rc;
    for (size_t i = 0; i < cov->n_files; i++)
        plan->n_files += cov->files[i].status == AR_COVER_QUEUED;
    for (size_t i = 0; i < rr->n_chunks; i++)
        plan->bytes += rr->chunks[i].len;
    if (!rr->n_chunks) {
        plan->why_not = why_nothing(cov);
        return 0;
    }
    plan->reviewed = 1;
    /* Each chunk is a paid call: a huge diff costs only what the caller agreed to. */
    if (rr->n_chunks > o->max_chunks)
        return ar_error_set(err, AR_EUSAGE, "max_chunks",
                            "%s needs %zu chunks of at most %zu bytes (%zu bytes), more than "
                            "max_chunks %zu",
                            plan->source ? plan->source : "the diff", rr->n_chunks,
                            o->max_chunk_bytes, rr->text.len, o->max_chunks);
    plan->n_chunks = rr->n_chunks;
    return mark_escalated(rr, o, err);
}

/*
 * The review's place under its share (share.h): one cap over every chunk (run.max_cost_usd,
 * within max_cost_each), and a cwd inside the share's directories.
 */
static int join_share(struct ar_review_run *rr, struct ar_error *err)
{
    struct ar_share *share = ar_jobset_share(rr->set);
    double cap;
    int rc = ar_share_command_cap(share, rr->run.max_cost_usd, &cap, err);
    if (rc)
        return rc;
    ar_budget_init(&rr->budget, ar_share_budget(share), cap, "this review's cap");
    return ar_share_confined(share)
               ? ar_share_path(share, NULL, rr->run.cwd ? rr->run.cwd : ".", NULL, err)
               : 0;
}

/*
 * The controls the library reads itself (instructions_file, baseline_file): from git's
 * objects or a file, within the share's directories (ar_review_read_spec()); a file is
 * remembered as such, for check_controls() to hold against the change. Whatever door
 * the review came by, the rule is the same, and no field a caller may leave unset
 * decides it.
 */
static int read_controls(struct ar_review_run *rr, const struct ar_review_options *o,
                         struct ar_error *err)
{
    const struct ar_share *share = ar_jobset_share(rr->set);
    const char *cwd = rr->run.cwd;
    if (o->instructions_file) {
        if (o->instructions)
            return ar_error_set(err, AR_EUSAGE, "instructions",
                                "give the instructions or a file to read them from, not both");
        struct ar_buf text;
        ar_buf_init(&text, AR_REVIEW_MAX_INSTRUCTIONS);
        char *file = NULL;
        size_t nul = 0;
        int rc = ar_review_read_spec(share, cwd, cwd, o->instructions_file, &text, &file, err);
        if (!rc && ar_buf_replace_nul(&text, &nul) != 0)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        if (rc) {
            ar_buf_finish(&text);
            free(file);
            if (rc != AR_ENOMEM && rc != AR_ENOTFOUND) {
                rc = rc == AR_EIO ? AR_EIO : AR_EUSAGE;
                err->code = rc;
            }
            if (strcmp(err->where, "dirs") != 0)
                snprintf(err->where, sizeof(err->where), "instructions");
            return rc;
        }
        if (nul)
            ar_warn(&rr->run.logger,
                    "the instructions '%s' hold %zu NUL byte%s, each sent as U+FFFD",
                    o->instructions_file, nul, nul == 1 ? "" : "s");
        free(rr->instructions);
        rr->instructions = ar_buf_detach(&text, NULL);
        ar_buf_finish(&text);
        free(rr->instructions_from);
        rr->instructions_from = file;
        if (!rr->instructions)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    if (o->baseline_file) {
        if (o->baseline)
            return ar_error_set(err, AR_EUSAGE, "baseline",
                                "give a baseline or a file to read it from, not both");
        int rc = ar_baseline_load(share, cwd, cwd, o->baseline_file, &rr->baseline, err);
        if (rc) {
            if (strcmp(err->where, "dirs") != 0)
                snprintf(err->where, sizeof(err->where), "baseline");
            return rc;
        }
        rr->has_baseline = 1;
    }
    return 0;
}

/* The chunks' jobs (each member's, in a panel), none started yet. */
static int make_jobs(struct ar_review_run *rr, struct ar_error *err)
{
    rr->n_jobs = rr->n_chunks * rr->n_members;
    if (rr->n_jobs && !(rr->jobs = calloc(rr->n_jobs, sizeof(*rr->jobs))))
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    for (size_t k = 0; k < rr->n_jobs; k++) {
        struct chunk_job *job = job_at(rr, k);
        job->rr = rr;
        job->index = k / rr->n_members;
        job->member = k % rr->n_members;
        job->order = k;
        const char *name = rr->is_panel ? rr->panel.names[job->member] : NULL;
        if (name && rr->n_chunks > 1)
            snprintf(job->job_id, sizeof(job->job_id), "%s chunk %zu/%zu", name, job->index + 1,
                     rr->n_chunks);
        else if (name)
            snprintf(job->job_id, sizeof(job->job_id), "%s", name);
        else
            snprintf(job->job_id, sizeof(job->job_id), "chunk %zu/%zu", job->index + 1,
                     rr->n_chunks);
        ar_review_init(&job->rv);
    }
    return 0;
}

/*
 * The panel (options.panel), read within the share's providers, and its quorum. A
 * member is its provider: a review-wide model or fallback would blur who answered.
 */
static int read_panel(struct ar_review_run *rr, const struct ar_review_options *o,
                      struct ar_error *err)
{
    rr->n_members = 1;
    rr->quorum = o->quorum ? o->quorum : 1;
    rr->escalate = -1;
    int by_files = o->escalate_files && o->escalate_files[0];
    rr->escalating = o->escalate || by_files;
    for (size_t i = 0; by_files && o->escalate_files[i]; i++)
        if (!*o->escalate_files[i])
            return ar_error_set(err, AR_EUSAGE, "escalate_files",
                                "escalate_files holds an empty glob");
    if (rr->escalating && !o->escalate) {
        if (!o->panel)
            return ar_error_set(err, AR_EUSAGE, "escalate_files", "escalate_files needs a panel");
        if (rr->quorum > 1)
            return ar_error_set(err, AR_EUSAGE, "escalate_files",
                                "escalate_files asks the other members only for some files: "
                                "not with a quorum above 1");
    }
    if (o->escalate) {
        if (!o->panel)
            return ar_error_set(err, AR_EUSAGE, "escalate", "escalate needs a panel");
        if ((rr->escalate = ar_severity_parse(o->escalate, 0)) < 0)
            return ar_error_set(err, AR_EUSAGE, "escalate",
                                "escalate must be a severity (critical, high, medium, low, "
                                "info), not '%.64s'",
                                o->escalate);
        if (rr->quorum > 1)
            return ar_error_set(err, AR_EUSAGE, "escalate",
                                "escalate asks the other members only where the first found "
                                "something: not with a quorum above 1");
    }
    if (!o->panel) {
        if (o->quorum > 1)
            return ar_error_set(err, AR_EUSAGE, "quorum",
                                "a quorum of %u needs a panel of at least %u members", o->quorum,
                                o->quorum);
        return 0;
    }
    if (o->run.provider && *o->run.provider)
        return ar_error_set(err, AR_EUSAGE, "panel",
                            "give a panel or a provider, not both: the panel names its providers");
    if (o->run.model)
        return ar_error_set(err, AR_EUSAGE, "panel",
                            "a panel names each member's model (codex=MODEL), not one model for "
                            "every member");
    if (o->run.fallback)
        return ar_error_set(err, AR_EUSAGE, "panel",
                            "a panel member is its provider: no fallback to another");
    int rc =
        ar_panel_parse(o->panel, ar_share_providers(ar_jobset_share(rr->set)), &rr->panel, err);
    if (rc)
        return rc;
    if (rr->quorum > rr->panel.n)
        return ar_error_set(err, AR_EUSAGE, "quorum",
                            "a quorum of %u is more than the panel's %zu member%s", rr->quorum,
                            rr->panel.n, rr->panel.n == 1 ? "" : "s");
    rr->is_panel = 1;
    rr->n_members = rr->panel.n;
    struct ar_review_panel *pp = &rr->res->pub.panel;
    pp->quorum = rr->quorum;
    pp->members = calloc(rr->panel.n, sizeof(*pp->members));
    if (!pp->members)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    pp->n_members = rr->panel.n;
    for (size_t m = 0; m < rr->panel.n; m++) {
        struct ar_review_member *mb = &pp->members[m];
        mb->cost_source = AR_COST_UNKNOWN;
        if (!(mb->provider = strdup(rr->panel.names[m])) ||
            (rr->panel.models[m] && !(mb->model = strdup(rr->panel.models[m]))))
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    return 0;
}

int ar_review_start(struct uv_loop_s *loop, const struct ar_review_options *o,
                    ar_review_done_fn *done, void *arg, struct ar_review_run **out,
                    struct ar_error *err)
{
    AR_START_ARGS(ar_review_start, err, out, loop && o && done,
                  "a loop, options and a done callback");
    int rc = check_options(o, err);
    if (rc)
        return rc;
    struct ar_review_run *rr = calloc(1, sizeof(*rr));
    if (!rr || !(rr->res = calloc(1, sizeof(*rr->res)))) {
        free(rr);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    rr->done = done;
    rr->arg = arg;
    ar_strv_init(&rr->strings);
    ar_strv_init(&rr->include);
    ar_strv_init(&rr->exclude);
    ar_buf_init(&rr->text, AR_DIFF_MAX_BYTES);
    rr->diff = (struct ar_diff)AR_DIFF_INIT;
    ar_review_init(&rr->res->pub.review);
    rr->res->pub.fail_on = o->fail_on;

    rc = copy_options(rr, o, err);
    static const struct ar_jobset_ops ops = { pump, on_chunk_done };
    if (!rc && !(rr->set = ar_jobset_create(loop, o->jobs, &ops, rr, o->run.share, err)))
        rc = err->code ? err->code : AR_ENOMEM;
    if (!rc)
        rc = join_share(rr, err);
    if (!rc)
        rc = read_panel(rr, o, err);
    if (!rc)
        rc = read_controls(rr, o, err);
    if (!rc)
        rc = read_diff(rr, o, err);
    if (!rc)
        rc = plan_review(rr, o, err);
    if (!rc)
        rc = make_jobs(rr, err);
    if (rc) {
        run_free(rr);
        return rc;
    }
    struct ar_review_plan *plan = &rr->res->pub.plan;
    if (plan->reviewed)
        plan->jobs = ar_jobset_cap(rr->set);
    rr->t0 = ar_now_ms();
    ar_jobset_kick(rr->set); /* the first chunks, or the end of a review of nothing */
    if (out)
        *out = rr;
    return 0;
}

AR_DEFINE_BLOCKING(ar_review, ar_review_start, struct ar_review_options, struct ar_review_run,
                   struct ar_review_result)
