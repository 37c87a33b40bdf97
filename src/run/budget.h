/*
 * What calls may spend: one rule, kept here (docs/security.md, "One rulebook").
 *
 * A budget is a tree of nodes. The root is a share's (include/agentrun/share.h:
 * an MCP server's --max-cost-total, what a parent agentrun had left); below it
 * a batch's total; below those, one node per command (a run's cap covers its
 * main, repair and fallback calls; a review's covers every chunk; an MCP tool
 * call's covers whatever the tool does). A node with cap 0 only counts.
 *
 * Every CLI call holds a reservation on every node above it from before it
 * starts until it ends (ar_budget_reserve(), ar_budget_settle()). The rule
 * (the batch's, generalised to every level):
 *
 *   - A call starts only when, at every capped node above it, what is left
 *     (cap - spent - what running calls hold) covers the dearest call made
 *     under that node so far; it then holds that much there.
 *   - Before any call under a node has a price, the call runs alone there and
 *     holds all that is left: the first cost is learnt before calls run side
 *     by side.
 *   - A call that does not fit waits while other calls run under that node
 *     (their cost may come in lower), and is refused when none does: what is
 *     left then stays short of the dearest call for good.
 *   - A call whose cost is unknown (a model with no price) stops every capped
 *     node above it: the cap can no longer be kept, so nothing more starts
 *     under it. A call that never ran cost nothing.
 *   - The call is allowed the least that is left at any capped node (`allow`),
 *     which is passed to a CLI that can stop itself at a budget (claude).
 *
 * So the spending under a node passes its cap only when calls that ran at once
 * each cost more than the dearest call before them, by no more than that excess
 * (and, with claude, by no more than claude's own overshoot of its budget).
 *
 * Nodes are embedded in their owners and live as long as them; a parent
 * outlives its children. Not thread-safe: one thread uses a tree.
 */
#ifndef AR_RUN_BUDGET_H
#define AR_RUN_BUDGET_H

#include <stddef.h>

#include "agentrun/error.h"

struct ar_budget {
    struct ar_budget *parent; /* NULL at the root */
    const char *label;        /* for messages: "this run's cap" (static) */
    double cap;               /* > 0: the most spent under this node; else uncapped */
    double spent;             /* known costs of calls that ended */
    double reserved;          /* held by the calls running under it */
    double dearest;           /* the dearest call that ended under it */
    unsigned running;         /* calls running under it */
    unsigned calls;           /* calls that ended under it */
    unsigned refused;         /* calls it refused */
    int unknown;              /* a call under it cost an unknown amount */
    char unknown_model[64];   /* ... priced by this model (or "") */
};

/* The most levels a call's path may have (root to leaf). */
#define AR_BUDGET_LEVELS 8

/* What one call holds, from ar_budget_reserve() to ar_budget_settle(). */
struct ar_budget_hold {
    struct ar_budget *node[AR_BUDGET_LEVELS]; /* the leaf first, then every parent */
    double amount[AR_BUDGET_LEVELS];          /* held at each */
    size_t n;                                 /* 0: nothing held */
    double allow; /* > 0: the most the call may spend (the least left at a capped node) */
};

enum ar_budget_answer {
    AR_BUDGET_START = 0, /* reserved: the call may start */
    AR_BUDGET_WAIT,      /* not now: calls running under a capped node may leave room */
    AR_BUDGET_OVER,      /* never: err says which cap and why */
};

/* A node under parent (NULL: a root) with cap (<= 0: none) and a label for messages. */
void ar_budget_init(struct ar_budget *b, struct ar_budget *parent, double cap, const char *label);

/*
 * May a call under leaf start now? Fills *h and holds its reservation at every
 * node on the way up when the answer is AR_BUDGET_START; holds nothing
 * otherwise. AR_BUDGET_OVER counts a refusal at the node that refused, and err
 * (may be NULL) gets AR_EBUDGET and a message naming that cap and the amounts.
 */
enum ar_budget_answer ar_budget_reserve(struct ar_budget *leaf, struct ar_budget_hold *h,
                                        struct ar_error *err);

/* The same question without holding anything (a batch's check before a job starts). */
enum ar_budget_answer ar_budget_check(const struct ar_budget *leaf, struct ar_error *err);

/*
 * The call holding h ended, having cost `cost` (known) or an unknown amount
 * (model: the model it was priced by, or NULL). A call that never ran settles
 * with cost 0, known. Releases the reservation; h holds nothing after.
 */
void ar_budget_settle(struct ar_budget_hold *h, double cost, int known, const char *model);

/* What is left under b's cap (cap - spent - reserved), or a negative number when b has none. */
double ar_budget_left(const struct ar_budget *b);

#endif
