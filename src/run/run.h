/*
 * The run pipeline: the one place the stages are sequenced (DESIGN §1).
 *
 *   render -> git snapshot -> call -> unwrap -> extract -> local repair
 *   -> contract check -> (on failure, once) repair call -> extract -> check
 *   -> git snapshot -> RunResult
 *
 * Many runs share one loop: commands that run several jobs at once (review
 * chunks, batch) start each with ar_run_start() from a pool job and release
 * the pool slot in their done callback.
 */
#ifndef AR_RUN_RUN_H
#define AR_RUN_RUN_H

#include <jansson.h>

#include "agentrun/agentrun.h"

struct ar_loop;
struct ar_run;

/* The run is over. res is owned by the callee (ar_result_destroy()). The run
 * object is freed after this returns. */
typedef void ar_run_done_fn(struct ar_run *run, struct ar_result *res, void *arg);

/*
 * Starts a run on loop. Options are copied; the caller's strings may go away
 * after this returns. Returns 0 (done will be called exactly once, from the
 * loop) or a negative AR_E… code with err set when the run cannot be set up
 * (unknown provider or template, bad variables, unreadable schema): done is
 * then never called.
 */
int ar_run_start(struct ar_loop *loop, const struct ar_run_options *opts, ar_run_done_fn *done,
                 void *arg, struct ar_run **out, struct ar_error *err);

/*
 * Rate-limit pauses shared by runs on one loop (batch): when a run of a
 * provider is told to come back later, every run started with the same
 * backoff waits until then before its next call of that provider, so the
 * jobs pause together instead of each running into the limit again.
 */
struct ar_backoff;
struct ar_backoff *ar_backoff_create(void);    /* NULL when out of memory */
void ar_backoff_destroy(struct ar_backoff *b); /* after the runs ended; NULL is fine */

/* ar_run_start() with a backoff shared with other runs (borrowed; it must outlive
 * the run). NULL: the run keeps its own. */
int ar_run_start_shared(struct ar_loop *loop, const struct ar_run_options *opts,
                        struct ar_backoff *backoff, ar_run_done_fn *done, void *arg,
                        struct ar_run **out, struct ar_error *err);

/* Ends the run's current call; the result is error "interrupted". */
void ar_run_cancel(struct ar_run *run);

/*
 * Marks the file open on fd as one agentrun itself writes (its stdout or
 * stderr redirected into the work tree, batch -o FILE): no run ever reports it
 * among the files it changed. Only regular files are kept (by device and
 * inode, so any path to them matches); at most 16. Not thread-safe: call it
 * from the thread that runs the loop, before the runs start.
 */
void ar_run_own_file(int fd);

/* A result that failed before any call (a bad batch line): error code and message. */
struct ar_result *ar_result_new_failed(const char *provider, int code, const char *msg);

/* A JSON string of s[0..len); bytes that are not UTF-8 become U+FFFD. New reference. */
json_t *ar_json_text(const char *s, size_t len);

/* The RunResult's "cached_from" object of r: what its cached calls spent when they
 * were made (tokens, cost_usd, cost_source, calls). New reference. */
json_t *ar_result_cached_from(const struct ar_result *r);

/* The RunResult word for k: "none", "local" or "model". Static storage. */
const char *ar_repair_kind_name(enum ar_repair_kind k);

/* The RunResult object of r (docs/run-result.md). New reference. */
json_t *ar_result_to_value(const struct ar_result *r);

#endif
