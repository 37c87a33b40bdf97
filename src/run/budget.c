/*
 * The budget (budget.h): a cap per node of a tree, every call reserving before it
 * starts at every node above it.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "run/budget.h"

/* Costs are sums of prices rounded to 1e-10 (ar_cost_round()): a comparison within this
 * is a tie, so $0.02 left covers a $0.02 call however the sums were rounded. */
#define EPSILON 1e-9

void ar_budget_init(struct ar_budget *b, struct ar_budget *parent, double cap, const char *label)
{
    memset(b, 0, sizeof(*b));
    b->parent = parent;
    b->cap = cap > 0 ? cap : 0;
    b->label = label ? label : "the cap";
}

double ar_budget_left(const struct ar_budget *b)
{
    return b->cap > 0 ? b->cap - b->spent - b->reserved : -1;
}

/* What node b says about one more call: the answer, and on START what the call holds
 * there (*need) and what it may spend (*left). */
static enum ar_budget_answer judge(const struct ar_budget *b, double *need, double *left,
                                   struct ar_error *err)
{
    *need = 0;
    *left = 0;
    if (!(b->cap > 0))
        return AR_BUDGET_START;
    if (b->unknown) {
        ar_error_set(err, AR_EBUDGET, "budget",
                     "%s of $%.4f can no longer be kept: a call's cost is unknown (model '%s' has "
                     "no price; --prices FILE prices it)",
                     b->label, b->cap, b->unknown_model[0] ? b->unknown_model : "unknown");
        return AR_BUDGET_OVER;
    }
    *left = b->cap - b->spent - b->reserved;
    /* Before a price is known the call runs alone, holding all that is left. */
    *need = b->dearest > 0 ? b->dearest : *left;
    if (!(b->dearest > 0) && b->running)
        return AR_BUDGET_WAIT;
    if (*left > EPSILON && *left + EPSILON >= *need)
        return AR_BUDGET_START;
    if (b->running)
        return AR_BUDGET_WAIT;
    if (b->dearest > 0)
        ar_error_set(err, AR_EBUDGET, "budget",
                     "%s of $%.4f has $%.4f left ($%.4f spent), less than the dearest call so "
                     "far ($%.4f)",
                     b->label, b->cap, *left > 0 ? *left : 0, b->spent, b->dearest);
    else
        ar_error_set(err, AR_EBUDGET, "budget", "%s of $%.4f is spent ($%.4f)", b->label, b->cap,
                     b->spent);
    return AR_BUDGET_OVER;
}

/* Walks leaf to root: OVER at the first node that refuses for good, else WAIT if one
 * must wait, else START with the amounts each node would hold. */
static enum ar_budget_answer walk(const struct ar_budget *leaf, struct ar_budget_hold *h,
                                  const struct ar_budget **refuser, struct ar_error *err)
{
    enum ar_budget_answer answer = AR_BUDGET_START;
    h->n = 0;
    h->allow = 0;
    for (const struct ar_budget *b = leaf; b; b = b->parent) {
        assert(h->n < AR_BUDGET_LEVELS);
        double need, left;
        enum ar_budget_answer a = judge(b, &need, &left, err);
        if (a == AR_BUDGET_OVER) {
            *refuser = b;
            return a;
        }
        if (a == AR_BUDGET_WAIT)
            answer = a;
        h->node[h->n] = (struct ar_budget *)b;
        h->amount[h->n++] = need;
        if (b->cap > 0 && (h->allow <= 0 || left < h->allow))
            h->allow = left;
    }
    return answer;
}

enum ar_budget_answer ar_budget_check(const struct ar_budget *leaf, struct ar_error *err)
{
    struct ar_budget_hold h;
    const struct ar_budget *refuser = NULL;
    return walk(leaf, &h, &refuser, err);
}

enum ar_budget_answer ar_budget_reserve(struct ar_budget *leaf, struct ar_budget_hold *h,
                                        struct ar_error *err)
{
    const struct ar_budget *refuser = NULL;
    enum ar_budget_answer a = walk(leaf, h, &refuser, err);
    if (a != AR_BUDGET_START) {
        if (refuser)
            ((struct ar_budget *)refuser)->refused++;
        h->n = 0;
        h->allow = 0;
        return a;
    }
    for (size_t i = 0; i < h->n; i++) {
        h->node[i]->reserved += h->amount[i];
        h->node[i]->running++;
    }
    return a;
}

void ar_budget_settle(struct ar_budget_hold *h, double cost, int known, const char *model)
{
    for (size_t i = 0; i < h->n; i++) {
        struct ar_budget *b = h->node[i];
        assert(b->running > 0);
        b->reserved -= h->amount[i];
        if (b->reserved < EPSILON)
            b->reserved = 0; /* no drift below zero from the sums */
        b->running--;
        b->calls++;
        if (!known) {
            if (!b->unknown)
                snprintf(b->unknown_model, sizeof(b->unknown_model), "%s", model ? model : "");
            b->unknown = 1;
        } else if (cost > 0) {
            b->spent += cost;
            if (cost > b->dearest)
                b->dearest = cost;
        }
    }
    h->n = 0;
    h->allow = 0;
}
