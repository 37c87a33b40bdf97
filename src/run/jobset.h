/*
 * A job set: many runs on one agentrun loop attached to the caller's libuv loop,
 * the one scheduler under the batch (src/batch/batch.c) and the review's chunks
 * (src/review/fanout.c). It owns what every such scheduler needs and nothing of
 * what one of them decides:
 *
 *   - the agentrun loop, attached at create and detached at end;
 *   - the cap: at most `jobs` runs at once, lowered to what the open file limit
 *     allows (ar_proc_jobs_within_fd_limit());
 *   - one rate-limit backoff (run.h) that every run it starts shares, so that a
 *     rate limit on one job pauses the others' calls of that provider;
 *   - a run pipeline per job, and its done callback routed back to the owner;
 *   - cancel: the first ends every running job's CLI group (SIGTERM, then SIGKILL
 *     after the grace), a second SIGKILLs them at once; no job starts after it;
 *   - the pump: the owner's callback that starts what may start, run from the loop
 *     (a kick, after each job's done, after a cancel), never from inside an
 *     ar_jobset_*() call, so no user callback runs from inside a public call.
 *
 * Which job starts next, and what a job's end means, is the owner's: the batch
 * keeps input order, budget reservations and one edit job per work tree; the
 * review its chunks, their merge and the verdict.
 *
 * Protocol: ar_jobset_create(); ar_jobset_kick() when there is something to start;
 * in pump, ar_jobset_start() while ar_jobset_room(); in done, take the result;
 * once nothing runs and nothing is left, ar_jobset_end() from pump (never from
 * done: the pump still follows it).
 */
#ifndef AR_RUN_JOBSET_H
#define AR_RUN_JOBSET_H

#include "agentrun/agentrun.h"

struct ar_jobset;
struct ar_loop;
struct ar_share;
struct ar_pipeline_extra;
struct uv_loop_s;

struct ar_jobset_ops {
    /* Starts what may start (ar_jobset_start() while ar_jobset_room()), writes off
     * what never will, and ends the set when all is over. From the loop only. */
    void (*pump)(void *owner);
    /* The job started with `job` is over with res (taken: ar_result_destroy()). It no
     * longer counts as running; the pump runs right after this returns. */
    void (*done)(void *owner, void *job, struct ar_result *res);
};

/*
 * A job set on the caller's libuv loop uv (borrowed: it must outlive the set) for
 * at most `jobs` runs at once (0 counts as 1). ops and owner are borrowed. Every job
 * runs under share (borrowed; the owner's options' share), or, when it is NULL, under
 * one the set makes for its jobs alone, so that they pause together for a rate limit.
 * Returns NULL with err set when out of memory. Nothing runs until the first kick.
 */
struct ar_jobset *ar_jobset_create(struct uv_loop_s *uv, unsigned jobs,
                                   const struct ar_jobset_ops *ops, void *owner,
                                   struct ar_share *share, struct ar_error *err);

/* The share the set's jobs run under (borrowed from the set). */
struct ar_share *ar_jobset_share(const struct ar_jobset *js);

/* How many run at once: `jobs`, or fewer when the open file limit allows no more. */
unsigned ar_jobset_cap(const struct ar_jobset *js);

/* The jobs started whose done has not run yet. */
unsigned ar_jobset_running(const struct ar_jobset *js);

/* Whether a job may start now: fewer than the cap run, and no cancel came. */
int ar_jobset_room(const struct ar_jobset *js);

/* How many times ar_jobset_cancel() was called. */
unsigned ar_jobset_cancelled(const struct ar_jobset *js);

/*
 * Starts a run of o (copied; extra may be NULL) on the set's loop with its shared
 * backoff; done(owner, job, result) follows exactly once, from the loop. Returns 0,
 * or a negative AR_E… code with err set (done is then never called): the run
 * cannot be set up (ar_pipeline_start()), out of memory, AR_EINTERRUPTED after a
 * cancel, AR_EUSAGE when there is no room.
 */
int ar_jobset_start(struct ar_jobset *js, const struct ar_run_options *o,
                    const struct ar_pipeline_extra *extra, void *job, struct ar_error *err);

/* The pump soon, from the loop; kicks before it runs fold into one. Never fails. */
void ar_jobset_kick(struct ar_jobset *js);

/* Whether a kick is on its way (the pump that ends the set waits for it). */
int ar_jobset_kicked(const struct ar_jobset *js);

/* Cancels the running jobs (first call: their groups end; second: SIGKILL) and
 * refuses new ones; then kicks the pump, which writes off what never started. */
void ar_jobset_cancel(struct ar_jobset *js);

/* Frees the set and lets go of the loop; only when nothing runs. NULL is fine. */
void ar_jobset_end(struct ar_jobset *js);

/* The agentrun loop the jobs run on (a deferred call; a test's manual clock). */
struct ar_loop *ar_jobset_loop(const struct ar_jobset *js);

#endif
