/*
 * agentrun batch: many runs on the caller's libuv loop, N at a time, one
 * record per job as each finishes (what `agentrun batch` does).
 *
 * The batch keeps to a budget (max_cost_usd), runs the jobs that edit one git
 * work tree one at a time (git status cannot tell two writers apart) unless
 * each has a worktree of its own (ar_run_options.worktree: then they run side
 * by side, each on its branch agentrun/<batch session>/<job id>), pauses
 * every job of a provider together when that provider says to come back later
 * (a rate limit), hands a job to its fallback providers as a single run would,
 * and skips the jobs an earlier batch finished (resume).
 *
 * Protocol:
 *   1. ar_batch_start() on a libuv loop the caller owns and runs;
 *   2. optionally ar_batch_resume() with an earlier batch's records;
 *   3. ar_batch_add_line() / ar_batch_add() the jobs, then ar_batch_close()
 *      (jobs may be added while the loop runs; the batch ends only after close);
 *   4. run the loop. Nothing starts and no callback runs before it runs. Every
 *      job added gets exactly one record callback: as it finishes, as it is
 *      skipped, or as never started when the batch is cancelled;
 *   5. the done callback runs exactly once, from the loop, after the last
 *      record; the batch is freed when it returns. ar_batch_cancel() ends it
 *      early (a Ctrl-C).
 * Everything is called from the loop's thread.
 *
 * Example (docs/library.md, "Batch"):
 *
 *     struct ar_batch_options o = AR_BATCH_OPTIONS_INIT;
 *     o.jobs = 8;
 *     o.max_cost_usd = 5.0;
 *     struct ar_batch *b;
 *     if (ar_batch_start(uv_default_loop(), &o, on_record, on_done, &state, &b, &err) < 0) …
 *     ar_batch_add_line(b, "{\"id\":\"t1\",\"prompt\":\"…\"}", len, &err);
 *     ar_batch_close(b);
 *     uv_run(uv_default_loop(), UV_RUN_DEFAULT);
 */
#ifndef AGENTRUN_BATCH_H
#define AGENTRUN_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "agentrun.h"
#include "common.h"
#include "error.h"
#include "usage.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uv_loop_s; /* libuv's uv_loop_t */
struct ar_batch;

struct ar_batch_options {
    /*
     * What every job starts from: a line's own fields ("provider", "cwd", …)
     * replace these. Copied by ar_batch_start(), strings and variables included
     * (yours may go away once it returns); the callbacks and their arguments
     * (logger, progress, on_call, validate) must stay valid until done.
     * defaults.logger also gets the batch's own warnings. Every job reports to
     * defaults.progress (p->job is the job's id) and defaults.on_call (its job
     * argument is the job's id); a job of ar_batch_add() may bring callbacks of
     * its own. job_id and max_cost_usd are set per job by the batch.
     */
    struct ar_run_options defaults;
    /* At most this many jobs run at once (default 4). Lowered, with a warning, to
     * what the open file limit (ulimit -n) allows: a job holds several descriptors. */
    unsigned jobs;
    /*
     * > 0: a budget in USD. A job starts only while what was spent plus a
     * reservation for every running job and this one (the dearest job so far)
     * stays within it; until the first cost is known the reservation is the whole
     * remaining budget, so jobs run one at a time. Once a job would pass it, no
     * job starts any more and the rest finish with error "budget". A job whose
     * cost is unknown (a model missing from the price table) stops the batch the
     * same way. 0: no budget.
     */
    double max_cost_usd;
};

#define AR_BATCH_OPTIONS_INIT                                         \
    {                                                                 \
        .defaults = AR_RUN_OPTIONS_INIT, .jobs = 4, .max_cost_usd = 0 \
    }

/* How a job's record came about. */
enum ar_batch_outcome {
    AR_BATCH_FINISHED = 0, /* the job ran or failed (a bad line, the budget): result is set */
    AR_BATCH_SKIPPED,      /* an earlier batch finished its id (ar_batch_resume()) */
    AR_BATCH_NOT_STARTED,  /* the batch was cancelled before the job started */
};

/* One job's record. Every pointer is borrowed for the duration of the callback. */
struct ar_batch_record {
    const char *id;    /* the job's id ("7" for the line's 7), or "line N" for a line without one */
    int id_is_integer; /* the line's id was a JSON integer */
    size_t line;       /* the input line (1-based) of ar_batch_add_line(), 0 for ar_batch_add() */
    enum ar_batch_outcome outcome;
    /* FINISHED: the job's result (error "usage" for a line that cannot run, "budget" for a
     * job the budget kept from starting), else NULL. Copy what you keep. */
    const struct ar_result *result;
    /* FINISHED: the record as one JSON line, '\n' included: {"id": …} followed by the
     * RunResult's members (docs/batch.md), ready for a single write(); NULL when out of
     * memory or not FINISHED. */
    const char *json;
    size_t json_len;
};

/* The numbers of a batch, so far (ar_batch_get_stats()) or in the end (done). */
struct ar_batch_stats {
    size_t added;            /* jobs added */
    size_t running;          /* jobs running now */
    size_t ok, failed;       /* FINISHED records with ok true / false (failed includes budget) */
    size_t skipped;          /* SKIPPED records: ids done by an earlier batch */
    size_t not_started;      /* NOT_STARTED records: the batch was cancelled first */
    size_t budget_stopped;   /* failed jobs the budget kept from starting */
    size_t edit_jobs_waited; /* jobs held back while another edit job had their work tree */
    size_t worktrees_kept;   /* jobs whose worktree is left in place (uncommitted changes, or
                                keep_worktree): their records say where */
    size_t unknown_cost;     /* jobs that ran whose cost is unknown (not in cost_usd) */
    struct ar_usage usage;   /* tokens, summed over the jobs that ran */
    double cost_usd;         /* summed over the jobs whose cost is known */
    unsigned jobs;           /* jobs at once: ar_batch_options.jobs after the file limit */
    uint64_t duration_ms;    /* since ar_batch_start() */
    int cancelled;           /* ar_batch_cancel() was called */
};

/* A job's record. b is valid (ar_batch_cancel() and ar_batch_get_stats() may be called). */
typedef void ar_batch_record_fn(struct ar_batch *b, const struct ar_batch_record *rec, void *arg);

/* The batch is over: every job had its record. st is borrowed for the call; b is freed
 * after this returns. */
typedef void ar_batch_done_fn(struct ar_batch *b, const struct ar_batch_stats *st, void *arg);

/*
 * Starts an empty batch on loop (borrowed: it must outlive the batch and is run
 * by the caller). o is copied (see ar_batch_options.defaults for what stays
 * borrowed). record (required) and done (required) get arg. On success *out is
 * the batch, owned by the library until done has returned, and 0 is returned;
 * else a negative AR_E… code with err set, and nothing to free.
 */
AR_API int ar_batch_start(struct uv_loop_s *loop, const struct ar_batch_options *o,
                          ar_batch_record_fn *record, ar_batch_done_fn *done, void *arg,
                          struct ar_batch **out, struct ar_error *err);

/*
 * Feeds the records of an earlier batch (text[0..len), JSON Lines as in
 * ar_batch_record.json; borrowed). Every id with a record whose "ok" is true
 * is done: a job added later with that id is skipped (an AR_BATCH_SKIPPED
 * record). Lines that are not records (blank, cut off by an interruption) are
 * ignored. Call before adding the jobs. Returns 0 or AR_ENOMEM.
 */
AR_API int ar_batch_resume(struct ar_batch *b, const char *text, size_t len, struct ar_error *err);

/*
 * Adds the job of one JSON Lines input line (line[0..len), without its '\n';
 * borrowed): {"id", "prompt" | "template" + "vars", "provider", "model", …},
 * docs/batch.md. Each call is the next line of the input, so records name line
 * numbers; a blank line is no job. A line that cannot run (bad JSON, an unknown
 * key, an id used twice) is still a job: it finishes with error "usage" and a
 * message naming the line. Returns 0, or AR_EUSAGE after ar_batch_close(), or
 * AR_ENOMEM.
 */
AR_API int ar_batch_add_line(struct ar_batch *b, const char *line, size_t len,
                             struct ar_error *err);

/*
 * Adds a job with options o under id. Both are copied, o's strings and
 * variables included; o's callbacks and their arguments must stay valid until
 * done. o starts from nothing but itself: take a copy of
 * ar_batch_options.defaults or AR_RUN_OPTIONS_INIT.
 * A job with allow_edits is serialised with the other edit jobs of its work
 * tree, unless it has a worktree of its own (o->worktree). Returns 0; AR_EUSAGE when id is NULL or
 * already used, or after ar_batch_close(); AR_ENOMEM.
 */
AR_API int ar_batch_add(struct ar_batch *b, const char *id, const struct ar_run_options *o,
                        struct ar_error *err);

/* No more jobs: the batch ends once every job added had its record. */
AR_API void ar_batch_close(struct ar_batch *b);

/*
 * The earlier records of ar_batch_resume() (text[0..len), borrowed) reduced to
 * one line per id: its last record with "ok" true, else its last one, and none
 * at all for an id this batch is about to run again (its new record replaces
 * it); lines that are not records are dropped. With the new records appended
 * after it, a resumed output holds exactly one final record per id. Call after
 * the last job was added and before the loop runs. Returns a string the caller
 * free()s (*out_len its length), or NULL when out of memory.
 */
AR_API char *ar_batch_compact_records(const struct ar_batch *b, const char *text, size_t len,
                                      size_t *out_len);

/* The numbers so far (for a status line). st is the caller's. */
AR_API void ar_batch_get_stats(const struct ar_batch *b, struct ar_batch_stats *st);

/*
 * The first call stops starting jobs and ends the running ones (SIGTERM to each
 * CLI's process group, SIGKILL after its grace); they finish with error
 * "interrupted", the jobs not started get NOT_STARTED records. A second call
 * SIGKILLs every group at once. Safe from the record callback.
 */
AR_API void ar_batch_cancel(struct ar_batch *b);

#ifdef __cplusplus
}
#endif

#endif
