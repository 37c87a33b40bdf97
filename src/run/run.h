/*
 * The run pipeline: the one place the stages are sequenced (DESIGN §1).
 *
 *   render -> git snapshot -> call -> unwrap -> extract -> local repair
 *   -> contract check -> (on failure, once) repair call -> extract -> check
 *   -> git snapshot -> RunResult
 *
 * Many runs share one loop: the library's batch and review start each job
 * through their job set (jobset.h), which starts its pipeline with the set's
 * shared backoff. The public ar_run_start() (api.c) is one pipeline on a loop
 * of its own, attached to the caller's libuv loop.
 */
#ifndef AR_RUN_RUN_H
#define AR_RUN_RUN_H

#include <stdint.h>

#include "agentrun/agentrun.h"

struct ar_budget;
struct ar_loop;
struct ar_run;

/*
 * The retry policy (retry.c, the one place it is decided): a call that failed
 * with a rate limit (code AR_ERATELIMIT) is made once more after the wait the
 * provider asked for (retry_after_s >= 0; a negative or NaN hint is none) or 5 s, a transient API
 * error (AR_EAPI with transient) after that wait or 2 s; never when the wait is past max_wait_ms,
 * or max_wait_ms is 0. Returns 1 with *ms the wait, or 0: no retry. (The caller adds what only it
 * knows: a call that changed something, or was already retried, or was cancelled, is never made
 * again.)
 */
int ar_retry_wait(int code, int transient, double retry_after_s, uint64_t max_wait_ms,
                  uint64_t *ms);

/*
 * Rate-limit pauses shared by runs on one loop (a job set's): when a run of a
 * provider is told to come back later, every run started with the same
 * backoff waits until then before its next call of that provider, so the
 * jobs pause together instead of each running into the limit again.
 */
#define AR_BACKOFF_SLOTS 8 /* providers; a ninth is never paused */
struct ar_backoff {
    struct {
        char name[32]; /* the provider, "" for a free slot */
        uint64_t until_ms;
        uint64_t refused_until_ms; /* the quota refused a call: no call before this */
        int64_t refused_resets_at; /* ... the quota's reset, Unix seconds */
    } v[AR_BACKOFF_SLOTS];
};
struct ar_backoff *ar_backoff_create(void);    /* NULL when out of memory */
void ar_backoff_destroy(struct ar_backoff *b); /* after the runs ended; NULL is fine */

/* How long calls of `provider` still wait at now_ms (the loop's clock, ar_loop_now_ms());
 * 0: not paused. */
uint64_t ar_backoff_left(const struct ar_backoff *b, const char *provider, uint64_t now_ms);

/* Pauses `provider` until until_ms (never shortens a pause). */
void ar_backoff_extend(struct ar_backoff *b, const char *provider, uint64_t until_ms);

/*
 * The provider's quota refused a call and resets at resets_at (Unix seconds), past what
 * the run may wait: no run sharing this backoff calls `provider` before until_ms (the
 * loop's clock) — each fails rate_limit without a call, or moves on to its fallback
 * provider. A job set's runs share one backoff, so the rule is the batch's.
 */
void ar_backoff_refuse(struct ar_backoff *b, const char *provider, uint64_t until_ms,
                       int64_t resets_at);

/* The reset (Unix seconds) while `provider` is refused at now_ms, else 0. */
int64_t ar_backoff_refused(const struct ar_backoff *b, const char *provider, uint64_t now_ms);

/*
 * What a caller inside the library adds to a run's public options.
 *
 * independent_items: a JSON Pointer to a top-level array of the answer
 * ("/issues", one key, no escapes) whose elements the caller judges one by one. A contract
 * violation inside one element does not make the answer unusable (no repair call, no contract
 * error): the caller keeps, fixes or drops that element alone (review: src/review/salvage.c).
 * Violations anywhere else still do. NULL: every violation counts.
 */
struct ar_pipeline_extra {
    const char *independent_items;
    /* The budget node of the command the run is part of (budget.h: a batch's total, a
     * review's cap over its chunks), borrowed: it must outlive the run. The run's own node
     * hangs below it with opts->max_cost_usd (usually 0). NULL: below opts->share's root,
     * with opts->max_cost_usd within the share's max_cost_each. */
    struct ar_budget *budget;
};

/*
 * Starts a run on loop. Options are copied; the caller's strings may go away
 * after this returns; extra may be NULL (borrowed; copied). Every call of the run
 * asks its share first (share.h: options.share, or one of the run's own): the budget,
 * the cap on calls at once, the shared rate-limit pause. Returns 0 (done will be
 * called exactly once, from the loop; *out, when out is not NULL, is valid
 * until done returns) or a negative AR_E… code with err set when the run
 * cannot be set up (unknown provider or template, bad variables, unreadable
 * schema, a provider or cwd the share does not allow): done is then never called.
 */
int ar_pipeline_start(struct ar_loop *loop, const struct ar_run_options *opts,
                      const struct ar_pipeline_extra *extra, ar_run_done_fn *done, void *arg,
                      struct ar_run **out, struct ar_error *err);

/* Whether a run with options o gets a git worktree of its own: o->worktree is
 * AR_WORKTREE_ALWAYS, or AR_WORKTREE_EDITS and the run can edit files. (The batch
 * runs such edit jobs side by side; the others of one work tree one at a time.) */
int ar_run_uses_worktree(const struct ar_run_options *o);

/* Ends the run's current call or wait; the result is error "interrupted". With a
 * loop of its own (ar_pipeline_own_loop) every child of that loop is ended, and a
 * second cancel SIGKILLs them at once. */
void ar_pipeline_cancel(struct ar_run *run);

/* Gives the run the loop it alone runs on (attached by ar_run_start()): the run
 * detaches it after its done callback returned. */
void ar_pipeline_own_loop(struct ar_run *run, struct ar_loop *loop);

#endif
