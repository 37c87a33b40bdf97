/*
 * The share inside the library (include/agentrun/share.h is its public face):
 * what the pipeline asks before every CLI call, and what the readers of files
 * a request names ask before every read.
 *
 * Life of one call under a share (pipeline.c):
 *   1. ar_share_admit(share, &waiter): START with the budget held and a call
 *      slot taken; WAIT, and waiter->wake comes once there is room (or the
 *      answer turns OVER); OVER with err saying which cap refused;
 *   2. the call runs (a run cancelled while it waits calls ar_share_leave());
 *   3. ar_share_release(): its cost is charged, the slot is free, and the
 *      waiters that fit now are woken, in the order they came.
 */
#ifndef AR_RUN_SHARE_H
#define AR_RUN_SHARE_H

#include <stddef.h>

#include "agentrun/share.h"
#include "run/budget.h"

struct ar_backoff;
struct ar_buf;

/* A call waiting for room. Embedded in its run; the share only links it. */
struct ar_share_waiter {
    struct ar_budget *leaf;      /* the call's own node */
    struct ar_budget_hold *hold; /* filled on START */
    /* From ar_share_release(), at most once after a WAIT: answer START (hold filled, slot
     * taken) or OVER (why). The waiter is no longer linked when it runs. */
    void (*wake)(void *arg, enum ar_budget_answer answer, const struct ar_error *why);
    void *arg;
    struct ar_share_waiter *prev, *next;
    int queued;
};

/* The share's root budget (the caps of the whole share): the parent of its commands'. */
struct ar_budget *ar_share_budget(struct ar_share *s);

/* The rate-limit pauses its runs share (run.h). */
struct ar_backoff *ar_share_backoff(struct ar_share *s);

/* How deep this agentrun is nested: 0 at the top (AGENTRUN_DEPTH). */
unsigned ar_share_depth(const struct ar_share *s);

/*
 * The cap of one command under s, from what it asked (asked <= 0: none): at most
 * max_cost_each, which one naming none gets. Returns 0 with *cap set (0: none), or
 * AR_EUSAGE (err.where "max_cost") when it asked for more than max_cost_each.
 */
int ar_share_command_cap(const struct ar_share *s, double asked, double *cap, struct ar_error *err);

/* Whether provider index i (the registry's order) may be called. */
int ar_share_provider_ok(const struct ar_share *s, size_t i);

/* The providers a run may call, as a bit per registry index (0: all of them). */
unsigned ar_share_providers(const struct ar_share *s);

/* What runs may write (share.h: no_edits, edits_in_worktree); s may be NULL (no rule). */
int ar_share_no_edits(const struct ar_share *s);
int ar_share_edits_in_worktree(const struct ar_share *s);

/* See the life of a call above. */
enum ar_budget_answer ar_share_admit(struct ar_share *s, struct ar_share_waiter *w,
                                     struct ar_error *err);
void ar_share_leave(struct ar_share *s, struct ar_share_waiter *w);
void ar_share_release(struct ar_share *s, struct ar_budget_hold *h, double cost, int known,
                      const char *model);

/* ---- what a request may read (confine.c) ---- */

/* The share's directories: a NULL-terminated list of real paths, or NULL (anywhere). */
char *const *ar_share_dirs(const struct ar_share *s);

/* Whether the share confines reads (it has dirs). */
int ar_share_confined(const struct ar_share *s);

/*
 * A REV:PATH spec (git's object syntax: PATH is relative to the top of the work tree,
 * or to cwd's folder when it starts with ./ or ../, as git resolves it) names a file
 * inside the share's directories. Returns 0, or AR_EUSAGE (err.where "dirs"). A share
 * with no dirs allows everything.
 */
int ar_share_rev_path(const struct ar_share *s, const char *cwd, const char *spec,
                      struct ar_error *err);

/* Reads the file at path (relative to base) into out once ar_share_path() allows it. */
int ar_share_read_file(const struct ar_share *s, const char *base, const char *path,
                       struct ar_buf *out, struct ar_error *err);

#endif
