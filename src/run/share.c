/*
 * The share (include/agentrun/share.h, run/share.h): one budget root, one call
 * cap, one rate-limit pause, the providers and the directories of every run
 * that names it. What a path may be is confine.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/provider.h"
#include "run/run.h"
#include "run/share.h"
#include "util/log.h"

struct ar_share {
    struct ar_budget root;     /* the share's cap (max_cost_usd, or what a parent had left) */
    struct ar_backoff backoff; /* rate-limit pauses, per provider */
    double max_cost_each;
    unsigned max_calls;
    unsigned providers; /* a bit per registry index; 0: every provider */
    int no_edits, edits_in_worktree;
    unsigned depth;
    char **dirs; /* NULL-terminated real paths; NULL: anywhere */
    struct ar_share_waiter *head, *tail;
};

void ar_share_options_init(struct ar_share_options *o)
{
    memset(o, 0, sizeof(*o));
}

static void free_dirs(char **dirs)
{
    for (size_t i = 0; dirs && dirs[i]; i++)
        free(dirs[i]);
    free(dirs);
}

void ar_share_destroy(struct ar_share *s)
{
    if (!s)
        return;
    free_dirs(s->dirs);
    free(s);
}

/* "codex,gemini" as a bit per registry index. */
static int provider_bits(const char *list, unsigned *bits, struct ar_error *err)
{
    const struct ar_provider *named[32];
    int n = ar_provider_list_parse(list, named, 32, err);
    if (n < 0) {
        snprintf(err->where, sizeof(err->where), "providers");
        return n;
    }
    const struct ar_provider *const *all = ar_providers();
    *bits = 0;
    for (int k = 0; k < n && k < 32; k++)
        for (size_t i = 0; all[i]; i++)
            if (all[i] == named[k])
                *bits |= 1u << i;
    if (!*bits)
        return ar_error_set(err, AR_EUSAGE, "providers", "the provider list names no provider");
    return 0;
}

/*
 * What a parent agentrun passed down (share.h, "Nesting"): its depth, refused past
 * AR_SHARE_MAX_DEPTH, and what the call that started this one may spend. A value that
 * is not a number is refused: a limit that cannot be read cannot be kept.
 */
static int inherit(struct ar_share *s, double *budget, struct ar_error *err)
{
    *budget = -1;
    const char *d = getenv("AGENTRUN_DEPTH");
    if (d && *d) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(d, &end, 10);
        if (errno || *end || d[0] == '-' || v > 1000)
            return ar_error_set(err, AR_EUSAGE, "depth",
                                "AGENTRUN_DEPTH '%.40s' is not a nesting depth (0, 1, 2)", d);
        if (v > AR_SHARE_MAX_DEPTH)
            return ar_error_set(err, AR_EUSAGE, "depth",
                                "agentrun is nested %lu deep (AGENTRUN_DEPTH: started by a CLI "
                                "that an agentrun started, %lu times over); at most %d levels "
                                "may nest, so this call is refused",
                                v, v, AR_SHARE_MAX_DEPTH);
        s->depth = (unsigned)v;
    }
    const char *b = getenv("AGENTRUN_BUDGET_USD");
    if (b && *b) {
        char *end;
        errno = 0;
        double v = strtod(b, &end);
        if (errno || *end || !isfinite(v) || v < 0)
            return ar_error_set(err, AR_EUSAGE, "max_cost_usd",
                                "AGENTRUN_BUDGET_USD '%.40s' is not an amount of dollars", b);
        *budget = v;
    }
    return 0;
}

int ar_share_create(const struct ar_share_options *o, struct ar_share **out, struct ar_error *err)
{
    *out = NULL;
    if (!(o->max_cost_usd >= 0) || !isfinite(o->max_cost_usd) || !(o->max_cost_each >= 0) ||
        !isfinite(o->max_cost_each))
        return ar_error_set(err, AR_EUSAGE, "max_cost_usd",
                            "a budget must be a finite, non-negative amount of dollars");
    struct ar_share *s = calloc(1, sizeof(*s));
    if (!s)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    double inherited;
    int rc = inherit(s, &inherited, err);
    if (!rc && o->providers)
        rc = provider_bits(o->providers, &s->providers, err);
    if (!rc && o->n_dirs) {
        if (!(s->dirs = calloc(o->n_dirs + 1, sizeof(*s->dirs))))
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        for (size_t i = 0; !rc && i < o->n_dirs; i++) {
            if (!o->dirs[i] || !(s->dirs[i] = realpath(o->dirs[i], NULL)))
                rc = ar_error_set(err, AR_EUSAGE, "dirs", "cannot use directory '%s': %s",
                                  o->dirs[i] ? o->dirs[i] : "(null)", strerror(errno));
        }
    }
    if (rc) {
        ar_share_destroy(s);
        return rc;
    }
    double cap = o->max_cost_usd;
    const char *label = "the shared cap";
    if (inherited >= 0 && (!(cap > 0) || inherited < cap)) {
        /* Nothing left is a cap that refuses every call, not "no cap". */
        cap = inherited > 0 ? inherited : 1e-12;
        label = "the budget the parent agentrun passed down (AGENTRUN_BUDGET_USD)";
    }
    ar_budget_init(&s->root, NULL, cap, label);
    s->max_cost_each = o->max_cost_each;
    s->max_calls = o->max_calls;
    s->no_edits = o->no_edits;
    s->edits_in_worktree = o->edits_in_worktree;
    *out = s;
    return 0;
}

void ar_share_get_stats(const struct ar_share *s, struct ar_share_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->spent_usd = s->root.spent;
    st->reserved_usd = s->root.reserved;
    st->cap_usd = s->root.cap;
    st->cost_unknown = s->root.unknown;
    st->calls = s->root.calls;
    st->running = s->root.running;
    st->refused = s->root.refused;
    st->depth = s->depth;
}

struct ar_budget *ar_share_budget(struct ar_share *s)
{
    return &s->root;
}

struct ar_backoff *ar_share_backoff(struct ar_share *s)
{
    return &s->backoff;
}

unsigned ar_share_depth(const struct ar_share *s)
{
    return s->depth;
}

int ar_share_no_edits(const struct ar_share *s)
{
    return s && s->no_edits;
}

int ar_share_edits_in_worktree(const struct ar_share *s)
{
    return s && s->edits_in_worktree;
}

char *const *ar_share_dirs(const struct ar_share *s)
{
    return s->dirs;
}

unsigned ar_share_providers(const struct ar_share *s)
{
    return s->providers;
}

int ar_share_provider_ok(const struct ar_share *s, size_t i)
{
    return !s->providers || (i < 32 && (s->providers >> i) & 1u);
}

int ar_share_command_cap(const struct ar_share *s, double asked, double *cap, struct ar_error *err)
{
    *cap = 0;
    if (!(asked >= 0) || !isfinite(asked))
        return ar_error_set(err, AR_EUSAGE, "max_cost",
                            "a cost cap must be a finite, non-negative amount of dollars");
    if (s->max_cost_each > 0 && asked > s->max_cost_each)
        return ar_error_set(err, AR_EUSAGE, "max_cost",
                            "a cap of $%.4f is more than one command may spend here ($%.4f)", asked,
                            s->max_cost_each);
    *cap = asked > 0 ? asked : s->max_cost_each;
    return 0;
}

/* ---- calls --------------------------------------------------------------------------- */

static int slot_free(const struct ar_share *s)
{
    return !s->max_calls || s->root.running < s->max_calls;
}

static void unlink_waiter(struct ar_share *s, struct ar_share_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        s->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        s->tail = w->prev;
    w->prev = w->next = NULL;
    w->queued = 0;
}

static enum ar_budget_answer try_admit(struct ar_share *s, struct ar_share_waiter *w,
                                       struct ar_error *err)
{
    /* The budget first: a call refused for good is told so even when no slot is free. */
    enum ar_budget_answer a = ar_budget_check(w->leaf, err);
    if (a != AR_BUDGET_START)
        return a == AR_BUDGET_OVER ? ar_budget_reserve(w->leaf, w->hold, err) : a;
    if (!slot_free(s))
        return AR_BUDGET_WAIT;
    return ar_budget_reserve(w->leaf, w->hold, err);
}

enum ar_budget_answer ar_share_admit(struct ar_share *s, struct ar_share_waiter *w,
                                     struct ar_error *err)
{
    /* No waiter is passed over for a call slot: a slot frees only in ar_share_release(),
     * which hands it to the waiters first. */
    enum ar_budget_answer a = try_admit(s, w, err);
    if (a == AR_BUDGET_WAIT) {
        w->prev = s->tail;
        w->next = NULL;
        if (s->tail)
            s->tail->next = w;
        else
            s->head = w;
        s->tail = w;
        w->queued = 1;
    }
    return a;
}

void ar_share_leave(struct ar_share *s, struct ar_share_waiter *w)
{
    if (w->queued)
        unlink_waiter(s, w);
}

void ar_share_release(struct ar_share *s, struct ar_budget_hold *h, double cost, int known,
                      const char *model)
{
    ar_budget_settle(h, cost, known, model);
    /* Wake, in order, every waiter that fits now or never will. */
    for (struct ar_share_waiter *w = s->head, *next; w; w = next) {
        next = w->next;
        struct ar_error why = AR_ERROR_INIT;
        enum ar_budget_answer a = try_admit(s, w, &why);
        if (a == AR_BUDGET_WAIT) {
            if (!slot_free(s))
                break;
            continue;
        }
        unlink_waiter(s, w);
        w->wake(w->arg, a, &why);
    }
}
