/*
 * agentrun: rank a folder of product requirement documents (PRDs) with a
 * model, on the caller's libuv loop (what `agentrun prioritize` does;
 * docs/prioritize.md). The ranking is checked hard against the folder (every
 * prd_id known, priorities integers >= 1, no PRD twice, depends_on known), and
 * what fails goes to the one repair call.
 *
 * Protocol, as review.h's:
 *   1. struct ar_prioritize_options o; ar_prioritize_options_init(&o); set dir;
 *   2. ar_prioritize_start(loop, &o, done, arg, &pr, &err): the PRDs are read
 *      before it returns (a missing or empty folder fails here), and
 *      ar_prioritize_input(pr) says what was read;
 *   3. the caller runs its loop; ar_prioritize_cancel() ends the call;
 *   4. done(pr, result, arg) exactly once, from the loop;
 *   5. ar_prioritize_result_destroy(result).
 * ar_prioritize() does all of it on a private loop. Nothing here prints.
 */
#ifndef AGENTRUN_PRIORITIZE_H
#define AGENTRUN_PRIORITIZE_H

#include <stddef.h>
#include <stdint.h>

#include "agentrun.h"
#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uv_loop_s; /* libuv's uv_loop_t: the caller's, borrowed */

struct ar_prioritize_options {
    /*
     * The model call: provider, fallback, model, timeouts, logger, progress,
     * on_call, cache, record and replay. The rest is the ranking's (its
     * template with the PRDs and the context, a text call, no edits, no
     * session, no git snapshots).
     */
    struct ar_run_options run;

    const char *dir;      /* the folder of PRDs: *.md, *.markdown, *.txt (required) */
    int recursive;        /* its subfolders too (ids keep the path: "team/auth") */
    size_t max_prd_bytes; /* each PRD cut to this many bytes, visibly (default 32 KiB) */
    const char *context;  /* strategy, constraints or capacity to weigh, or NULL */
    size_t top;           /* keep the top highest priorities; 0: all */

    void *reserved[8]; /* zero: members added later come out of it (docs/library.md#abi) */
};

/* Sets *o to the defaults: ar_run_options_init(&o->run), 32 KiB per PRD, the rest zero. */
AR_API void ar_prioritize_options_init(struct ar_prioritize_options *o);

/* One PRD as it was read. */
struct ar_prd_info {
    char *id;       /* its path relative to dir without the extension, '/'-separated */
    char *path;     /* the path as opened */
    size_t size;    /* the file's size */
    size_t shown;   /* the bytes the model saw (size unless truncated) */
    int truncated;  /* cut to max_prd_bytes */
    size_t invalid; /* invalid UTF-8 sequences and NUL bytes sent as U+FFFD */
    void *reserved[2];
};

/* What was read, known once ar_prioritize_start() returns. Borrowed from the run. */
struct ar_prioritize_input {
    const struct ar_prd_info *prds; /* sorted by id */
    size_t n_prds;
    const char *const *warnings; /* about the input ("'x.md' is not valid UTF-8: …") */
    size_t n_warnings;
};

/* One recommendation of the ranking. */
struct ar_recommendation {
    char *prd_id;
    int64_t priority; /* >= 1; 1 first */
    char *rationale;
    char *effort;      /* "S", "M", "L", "XL", or NULL */
    char **depends_on; /* prd ids */
    size_t n_depends_on;
    void *reserved[2];
};

/* The outcome. Everything is owned by the result; handed out by pointer only (it grows
 * at its end, docs/library.md#abi). */
struct ar_prioritize_result {
    int ranked; /* the model's answer made a ranking (the run is ok) */
    struct ar_recommendation *recommendations; /* by priority (stable), cut to top */
    size_t n_recommendations;
    size_t total;    /* recommendations before the cut */
    char *summary;   /* the model's, or NULL */
    char **unranked; /* ids of PRDs no recommendation names, in id order */
    size_t n_unranked;
    struct ar_result *run; /* the model's run (never NULL): error, error_details, usage, cost */
    char *error;           /* why there is no ranking though the run is ok, or NULL */
    int exit_status;       /* agentrun prioritize's: 0, 3 no usable ranking, else the run's */
    /* Added in 0.2.0 (issue 57): the rankings the model's reply held (1; more when it
     * repeated itself: every answer counts, and rankings that disagree are no ranking,
     * exit 3, error says how). */
    size_t answers;
};

struct ar_prioritize_run;

typedef void ar_prioritize_done_fn(struct ar_prioritize_run *pr, struct ar_prioritize_result *res,
                                   void *arg);

/*
 * Starts a ranking on the caller's loop. o is copied; the callbacks of o->run and
 * their args must stay valid until done. Returns 0 (done will be called), or a
 * negative AR_E… code with err set, done never called: AR_EUSAGE when dir is
 * missing, not a folder, empty or holds no PRD, or two files give one id; AR_EIO
 * when a PRD cannot be read (for these err.where is "dir"); AR_ENOMEM; an
 * unknown provider or template as ar_run_start().
 * Watches no signal for you (SIGPIPE, SIGCHLD: agentrun.h).
 */
AR_API int ar_prioritize_start(struct uv_loop_s *loop, const struct ar_prioritize_options *o,
                               ar_prioritize_done_fn *done, void *arg,
                               struct ar_prioritize_run **out, struct ar_error *err);

/* What was read. Borrowed from pr: valid until done returns. */
AR_API const struct ar_prioritize_input *ar_prioritize_input(const struct ar_prioritize_run *pr);

/* Ends the call (as ar_run_cancel()); done still comes, with error "interrupted". */
AR_API void ar_prioritize_cancel(struct ar_prioritize_run *pr);

/* ar_prioritize_start() on a private loop, run until done. */
AR_API int ar_prioritize(const struct ar_prioritize_options *o, struct ar_prioritize_result **out,
                         struct ar_error *err);

/* Frees res and everything it holds. NULL is fine. */
AR_API void ar_prioritize_result_destroy(struct ar_prioritize_result *res);

/*
 * The agentrun.prioritize/1 document of res (docs/prioritize.md): the model's
 * ranking in its key order, unranked, total, and the run's provider, model,
 * repair, tokens, cost, duration, calls and error. Compact on one line unless
 * pretty. A string the caller free()s, or NULL when out of memory.
 */
AR_API char *ar_prioritize_result_to_json(const struct ar_prioritize_result *res, int pretty);

#ifdef __cplusplus
}
#endif

#endif
