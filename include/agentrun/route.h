/*
 * agentrun: route a request to a task or skill of a manifest, on the caller's
 * libuv loop (what `agentrun route` does; docs/route.md describes the tiers).
 *
 * Cheap local tiers answer when they can; the model is asked only when they
 * cannot, and its answer is checked against the manifest:
 *   exact:     the query equals a name or alias (case-insensitive);
 *   keyword:   a word-overlap score at or above min_score;
 *   discovery: the route template with the manifest, one text call.
 *
 * Protocol, as review.h's:
 *   1. struct ar_route_options o; ar_route_options_init(&o); set manifest and query;
 *   2. ar_route_start(loop, &o, done, arg, &rt, &err): the manifest is read and
 *      the local tiers run before it returns, so a bad manifest fails here;
 *   3. the caller runs its loop; ar_route_cancel() ends the model call;
 *   4. done(rt, result, arg) exactly once, from the loop, also when the local
 *      tiers answered (no call) or the call failed;
 *   5. ar_route_result_destroy(result).
 * ar_route() does all of it on a private loop. Nothing here prints.
 */
#ifndef AGENTRUN_ROUTE_H
#define AGENTRUN_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "agentrun.h"
#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uv_loop_s; /* libuv's uv_loop_t: the caller's, borrowed */

/* What a manifest lists. */
enum ar_route_type {
    AR_ROUTE_TASK = 0,
    AR_ROUTE_SKILL,
};

/* Which tier answered (the "route" of the agentrun.route/1 document). */
enum ar_route_kind {
    AR_ROUTE_NONE = 0,  /* nothing matched (local tiers only, or the model said none) */
    AR_ROUTE_EXACT,     /* a name or alias */
    AR_ROUTE_KEYWORD,   /* the keyword score */
    AR_ROUTE_DISCOVERY, /* the model */
    AR_ROUTE_ERROR,     /* the model named what the manifest lacks, or its call failed */
};

/* "task", "skill"; "unknown" otherwise. Static storage. */
AR_API const char *ar_route_type_name(enum ar_route_type t);

/* "none", "exact", "keyword", "discovery", "error"; "unknown" otherwise. Static storage. */
AR_API const char *ar_route_kind_name(enum ar_route_kind k);

/* One match, best first in ar_route_result.matches. */
struct ar_route_match {
    enum ar_route_type type;
    char *name;        /* the manifest's spelling when known, else the model's */
    double confidence; /* 0..1 */
    char *reasoning;   /* why (the model's words for discovery: hostile text) */
    void *reserved[2]; /* members added later come out of it (docs/library.md#abi) */
};

struct ar_route_options {
    /*
     * The model call of the discovery tier: provider, fallback, model, timeouts,
     * logger, progress, on_call, cache, record and replay. The route sets the
     * rest (its template with the query and the manifest, a text call, no edits,
     * no session, no git snapshots).
     */
    struct ar_run_options run;

    /* The manifest {tasks: [{name, description, aliases?, keywords?}], skills: […]}:
     * the file manifest_path, or manifest_len bytes of text at manifest. */
    const char *manifest_path;
    const char *manifest;
    size_t manifest_len;

    const char *query; /* the request (required, not blank) */
    double min_score;  /* the keyword tier's threshold, 0 to 1 (default 0.5) */
    int no_model;      /* never call the model: no local match gives AR_ROUTE_NONE */

    void *reserved[8]; /* zero: members added later come out of it (docs/library.md#abi) */
};

/* Sets *o to the defaults: ar_run_options_init(&o->run), min_score 0.5, the rest zero. */
AR_API void ar_route_options_init(struct ar_route_options *o);

/* The outcome of a route. Everything is owned by the result; handed out by pointer only
 * (it grows at its end, docs/library.md#abi). */
struct ar_route_result {
    char *query;
    enum ar_route_kind kind;
    struct ar_route_match *matches; /* best first: score, then tasks before skills, then
                                       manifest order; the model's by confidence */
    size_t n_matches;
    int fallback; /* the model's answer stayed malformed after the repair call: the
                     manifest's first task was taken (confidence 0) */
    char *error;  /* kind ERROR: every name the model got wrong, or the failed call's
                     message; else NULL */
    int failed;   /* the model's call failed (run->error says why): kind ERROR */
    char **notes; /* what the caller should know ("match 0 (\"x\") confidence 1.4 clamped
                     to 1", the fallback's why, the violations of a malformed answer) */
    size_t n_notes;
    struct ar_result *run; /* the model's run, or NULL: the local tiers answered, no_model */
    int exit_status;       /* agentrun route's: 0 a route, 3 none or error, else the
                              failed call's (4, 5, 130…) */
    uint64_t duration_ms;
};

struct ar_route_run; /* a route in progress */

/* The route is over: res (never NULL) is the callee's (ar_route_result_destroy()).
 * Called exactly once, from the loop; the handle is freed after it returns. */
typedef void ar_route_done_fn(struct ar_route_run *rt, struct ar_route_result *res, void *arg);

/*
 * Starts a route on the caller's loop. o is copied; the callbacks of o->run and
 * their args must stay valid until done. Returns 0 (done will be called), or a
 * negative AR_E… code with err set, done never called: AR_EUSAGE for a missing
 * or blank query, a min_score outside 0..1, a manifest that cannot be read or
 * is not one (err.where "manifest", err.msg names the file and the place),
 * AR_ENOMEM; an unknown provider or template as ar_run_start(). Watches no
 * signal for you (SIGPIPE, SIGCHLD: agentrun.h).
 */
AR_API int ar_route_start(struct uv_loop_s *loop, const struct ar_route_options *o,
                          ar_route_done_fn *done, void *arg, struct ar_route_run **out,
                          struct ar_error *err);

/* Ends the model's call (as ar_run_cancel()); done still comes, with the call's error
 * "interrupted". Only between ar_route_start() and the return of done. */
AR_API void ar_route_cancel(struct ar_route_run *rt);

/* ar_route_start() on a private loop, run until done. 0 with *out set, or a negative
 * AR_E… code with err set and *out NULL. */
AR_API int ar_route(const struct ar_route_options *o, struct ar_route_result **out,
                    struct ar_error *err);

/* Frees res and everything it holds. NULL is fine. */
AR_API void ar_route_result_destroy(struct ar_route_result *res);

/*
 * The agentrun.route/1 document of res (docs/route.md): query, route, matches,
 * fallback, error, notes, and the run's provider, model, tokens, cost and calls.
 * Compact on one line unless pretty. A string the caller free()s, or NULL when
 * out of memory.
 */
AR_API char *ar_route_result_to_json(const struct ar_route_result *res, int pretty);

#ifdef __cplusplus
}
#endif

#endif
