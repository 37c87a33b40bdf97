/*
 * The RunResult (DESIGN §6, docs/run-result.md): the one record every run
 * ends with. struct ar_result itself is public (include/agentrun/agentrun.h),
 * and so are ar_result_to_json(), ar_result_exit_status() and
 * ar_result_destroy(); this header adds what the library and the CLI share
 * beyond them: a result for a run that never started, the JSON value, the
 * words of its enums, and the draft a run builds its result in.
 */
#ifndef AR_RESULT_RESULT_H
#define AR_RESULT_RESULT_H

#include <jansson.h>

#include "agentrun/agentrun.h"
#include "cost/cost.h"

struct ar_git_changes;
struct ar_json_doc;
struct ar_extract_fixes;
struct ar_strv;

/* ar_result_new_failed(), ar_repair_kind_name(), ar_cost_source_name() are public:
 * agentrun/agentrun.h. */

/* A failed result with error nomem that needs no memory, for where an allocation
 * failed and a result must still be reported (borrowed: never destroy it). */
const struct ar_result *ar_result_nomem(void);

/* The RunResult object of r (docs/run-result.md). New reference, NULL when out of memory. */
json_t *ar_result_to_value(const struct ar_result *r);

/* The RunResult's "calls" array of calls[0..n). New reference, or NULL when out of memory. */
json_t *ar_call_records_value(const struct ar_call_record *calls, size_t n);

/* Appends copies of from[0..m) to *calls (*n of them): 0, or AR_ENOMEM with *n counting
 * every record that holds something to free. */
int ar_call_records_append(struct ar_call_record **calls, size_t *n,
                           const struct ar_call_record *from, size_t m);

/* Frees calls[0..n) and the array. */
void ar_call_records_free(struct ar_call_record *calls, size_t n);

/* The RunResult's "cached_from" object of r: what its cached calls spent when they
 * were made (tokens, cost_usd, cost_source, calls). New reference. */
json_t *ar_result_cached_from(const struct ar_result *r);

/* A cost as every output shows it: null when unknown, else rounded to 1e-10 dollars
 * (ar_cost_round(): 0.01475, not 0.014750000000000001). New reference. */
json_t *ar_cost_value(double usd, enum ar_cost_source src);

/* ---- building a result, call by call ---------------------------------------------
 *
 * The pipeline (src/run/pipeline.c) decides what happens; the draft records it.
 * Protocol:
 *   1. ar_result_draft_init() when the run is set up;
 *   2. per call: ar_result_draft_begin_call() when it starts,
 *      ar_result_draft_end_call() when it ends, ar_result_draft_fail_call()
 *      when it failed; ar_result_draft_switch_provider() before a fallback;
 *   3. the outcome: ar_result_draft_accept() (the answer's JSON), or
 *      ar_result_draft_fail() and ar_result_draft_take_details();
 *      ar_result_draft_take_files() (what the git snapshots saw);
 *   4. ar_result_draft_detach() hands the finished result out;
 *      ar_result_draft_finish() frees what was not handed out.
 * Functions that allocate return 0 or AR_ENOMEM; after AR_ENOMEM the draft is
 * still whole (it can be detached), only the fact being recorded is missing.
 */
struct ar_result_draft {
    struct ar_result *res; /* owned until detached; read it, change it through these functions */
    struct ar_cost cost;   /* summed over the calls that ended */
    int cost_started; /* a call ended: `cost` holds its cost (one that never ran cost nothing) */
    struct ar_cost cached_cost; /* what the cached calls cost when they were made */
};

/* A draft of a run of `provider` (borrowed) whose main call asks for `posture`:
 * no error yet, exit_code -1. Returns 0 or AR_ENOMEM (d->res is then NULL). */
int ar_result_draft_init(struct ar_result_draft *d, const char *provider,
                         const struct ar_posture *posture);

/* Frees the result unless it was detached. Afterwards init works again. */
void ar_result_draft_finish(struct ar_result_draft *d);

/* The run moves on to fallback provider `provider` (borrowed): the last call's
 * session, model, text and exit code describe the failed provider and are
 * dropped. Returns 0 or AR_ENOMEM. */
int ar_result_draft_switch_provider(struct ar_result_draft *d, const char *provider);

/*
 * A call starts: a new record of `kind` ("main", "repair") by `provider`, with
 * a copy of argv (NULL-terminated, borrowed), the wait before it and the
 * posture its adapter arranged; a main call's posture is also the run's.
 * Returns the record (owned by the draft, valid until the next begin_call),
 * or NULL when out of memory.
 */
struct ar_call_record *ar_result_draft_begin_call(struct ar_result_draft *d, const char *kind,
                                                  const char *provider, const char *const *argv,
                                                  uint64_t waited_ms,
                                                  const struct ar_posture *posture, int main_call);

/* How the call begun last ended (every pointer borrowed for the call). */
struct ar_call_end {
    int exit_code; /* exit status or 128 + signal */
    int signal;
    uint64_t duration_ms;
    int timed_out;
    const char *stderr_tail; /* stderr_tail_len bytes, may be NULL */
    size_t stderr_tail_len;
    struct ar_usage usage;
    int usage_cumulative;
    struct ar_cost cost;
    int cached;             /* served from the cache: usage and cost count apart, as cached_* */
    const char *model;      /* NULL: keep the run's */
    const char *session_id; /* NULL: keep the run's */
    int main_call;          /* its session replaces the run's; a repair call's only fills a gap */
    const char *text;       /* the final text, the run's `output` (NULL: none) */
    const struct ar_strv *denied; /* refused tool calls as (tool, target) pairs; may be NULL */
    const char *cli_version;      /* the CLI's version as its output said, or NULL */
    size_t unknown_events;        /* stream lines of a kind the adapter does not know */
    const struct ar_rate_limit *rate_limit; /* the call's quota reading, or NULL */
};

/* Records e in the call begun last and in the run's totals. Returns 0 or AR_ENOMEM. */
int ar_result_draft_end_call(struct ar_result_draft *d, const struct ar_call_end *e);

/* The call begun last failed with `code` (its record's "error"). Returns 0 or AR_ENOMEM. */
int ar_result_draft_fail_call(struct ar_result_draft *d, int code);

/* The run's error: code and a formatted message (truncated, never allocates). Returns code. */
int ar_result_draft_fail(struct ar_result_draft *d, int code, const char *fmt, ...) AR_PRINTF(3, 4);

/* The run's error, copied from *err. */
void ar_result_draft_fail_with(struct ar_result_draft *d, const struct ar_error *err);

/* The provider asked to come back after s seconds (reported with the error). */
void ar_result_draft_retry_after(struct ar_result_draft *d, double s);

/* No error after all (the call is made again, or by another provider). */
void ar_result_draft_clear_error(struct ar_result_draft *d);

/* A repair call was asked for: `repair` says "model" whatever comes of it. */
void ar_result_draft_repairing(struct ar_result_draft *d);

/*
 * The answer: takes doc's value and text (doc is finished), the local fixes
 * (their names, and the details of those that have a count and a place) and
 * how it was repaired. Returns 0 or AR_ENOMEM.
 */
int ar_result_draft_accept(struct ar_result_draft *d, struct ar_json_doc *doc,
                           const struct ar_extract_fixes *fixes, enum ar_repair_kind repair);

/* The error's details (the violations): takes the strings of *details, which is left empty. */
int ar_result_draft_take_details(struct ar_result_draft *d, struct ar_strv *details);

/* Why files are not tracked (files_untracked_reason). */
void ar_result_draft_untracked(struct ar_result_draft *d, enum ar_files_untracked why);

/*
 * The files the run changed (files_tracked becomes true). With with_content,
 * each change's content is taken from *ch (its text as it is when UTF-8, else
 * base64), not copied. Returns 0 or AR_ENOMEM.
 */
int ar_result_draft_take_files(struct ar_result_draft *d, struct ar_git_changes *ch,
                               int with_content);

/*
 * Where the run's worktree left its work (every string borrowed, copied; branch and
 * commit may be NULL). Returns 0 or AR_ENOMEM.
 */
int ar_result_draft_worktree(struct ar_result_draft *d, const char *path, int kept,
                             const char *branch, const char *base, const char *commit);

/*
 * The finished result: ok, the run's duration, the summed and cached costs.
 * The caller owns it (ar_result_destroy()); the draft is empty afterwards.
 */
/* The caps the run lived under: its own (0: none), what its calls spent, why a call was
 * refused (borrowed; copied) or NULL. */
int ar_result_draft_budget(struct ar_result_draft *d, double cap_usd, double spent_usd,
                           const char *refused);

struct ar_result *ar_result_draft_detach(struct ar_result_draft *d, uint64_t duration_ms);

#endif
