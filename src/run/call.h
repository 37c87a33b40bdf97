/*
 * The call source: where one CLI call's output comes from. The pipeline asks
 * for a call and gets stdout lines and an end, whether the CLI was spawned
 * (src/proc), replayed from a cassette (--replay) or served from the cache
 * (--cache); the provider's unwrapper sees the same lines either way. When
 * recording (--record) or caching, a spawned call is written down as it ends.
 */
#ifndef AR_RUN_CALL_H
#define AR_RUN_CALL_H

#include "agentrun/agentrun.h"
#include "proc/proc.h"
#include "provider/provider.h"
#include "util/sha256.h"

struct ar_call;

/* Where a run's calls come from and go to: resolved once per run from its options and
 * the environment (AGENTRUN_RECORD, AGENTRUN_REPLAY, XDG_CACHE_HOME, HOME). */
struct ar_call_tapes {
    char *record_dir; /* write a cassette of every call here, or NULL */
    char *replay_dir; /* serve every call from here, never spawning, or NULL */
    char *cache_dir;  /* serve and keep cacheable calls here, or NULL */
    unsigned char cache_secret[AR_SHA256_LEN]; /* the entries' MAC key (cache.c) */
    uint64_t cache_ttl_s;                      /* 0: entries never expire */
};

/*
 * Fills t from o. Returns 0, or AR_EUSAGE with err set: --record and --replay
 * together, a replay directory that does not exist, --cache with no directory
 * to put it in; AR_ENOMEM. t needs ar_call_tapes_finish() either way.
 */
int ar_call_tapes_init(struct ar_call_tapes *t, const struct ar_run_options *o,
                       struct ar_error *err);
void ar_call_tapes_finish(struct ar_call_tapes *t);

enum ar_call_origin {
    AR_CALL_SPAWNED = 0, /* the CLI ran */
    AR_CALL_REPLAYED,    /* from a cassette of the replay directory */
    AR_CALL_CACHED,      /* from the cache */
};

typedef void ar_call_line_fn(struct ar_call *call, const char *line, size_t len, void *arg);
/* res is borrowed; the call is freed after this returns. */
typedef void ar_call_done_fn(struct ar_call *call, const struct ar_child_result *res, void *arg);

struct ar_call_opts {
    struct ar_child_opts child; /* argv, env, stdin and limits; its callbacks are ignored */
    const char *provider;
    const struct ar_call_setup *setup; /* what prepare() built (argv, its temporary files) */
    const struct ar_call_spec *spec;
    const struct ar_call_tapes *tapes; /* may be NULL: every call is spawned */
    const struct ar_logger *logger;
    ar_call_line_fn *on_line; /* may be NULL */
    ar_call_done_fn *on_done; /* required */
    void *arg;
};

/*
 * Starts a call. Returns 0 (on_done will run exactly once, from the loop),
 * or: what ar_child_spawn() returns when the CLI cannot start, and
 * AR_EREPLAYMISS (err names the nearest cassette and what differs) when
 * replaying and no cassette matches. on_done is then never called.
 */
int ar_call_start(struct ar_loop *loop, const struct ar_call_opts *o, struct ar_call **out,
                  struct ar_error *err);

/* The final event was seen (a spawned CLI gets its final grace). */
void ar_call_final_seen(struct ar_call *call);

/* Ends the call now; its end is AR_CHILD_CANCELLED. */
void ar_call_kill(struct ar_call *call);

enum ar_call_origin ar_call_origin(const struct ar_call *call);

/* From on_done: the provider found the call successful, so it may be kept in the cache. */
void ar_call_keep(struct ar_call *call);

/*
 * From on_done, for a call whose answer is good only if a later call makes it so (a main
 * call the repair call fixes): the cache entry the call would write, handed to the caller
 * (who owns it), or NULL when the call is not one the cache would keep. The caller writes
 * it with ar_call_held_put() once the run's answer is good, else frees it: a run that
 * ended without a usable answer leaves nothing in the cache.
 */
struct ar_call_held *ar_call_hold(struct ar_call *call);
/* Writes the entry to the cache and frees it (NULL: nothing). Returns 0 or an AR_E… code. */
int ar_call_held_put(struct ar_call_held *h, struct ar_error *err);
void ar_call_held_free(struct ar_call_held *h);

#endif
