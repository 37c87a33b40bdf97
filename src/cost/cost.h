/*
 * Cost of a call: the CLI's own figure when it gives one (claude), else a
 * price table (compiled in, overridable by a JSON file), else unknown —
 * never a silent 0 (DESIGN §4).
 *
 * Matching a model id to a price (ar_prices_find):
 *   1. a provider prefix up to the last '/' is dropped ("openai/gpt-5.5");
 *   2. an exact entry wins;
 *   3. a trailing "[...]" tag is dropped and 2. retried ("claude-opus-4-8[1m]");
 *   4. else the longest entry that is a prefix of the id, when what follows is
 *      a date or version stamp: '-' then only digits and '-'
 *      ("claude-opus-4-7-20260416", "gpt-5.5-2026-04-23"). So "gpt-5" never
 *      prices "gpt-5.5" or "gpt-5-pro".
 */
#ifndef AR_COST_COST_H
#define AR_COST_COST_H

#include <stddef.h>
#include <stdint.h>

#include "agentrun/agentrun.h"
#include "agentrun/error.h"
#include "agentrun/usage.h"

/* A rate nobody published (PRICES.md's "—"): tokens of that class make the cost unknown. */
#define AR_PRICE_NONE (__builtin_nan(""))

/* USD per million tokens (AR_PRICE_NONE: not known). */
struct ar_price {
    const char *model;
    double input, output, cache_read, cache_write;
    /* Above this many prompt tokens (input + cache read + cache write) the
     * long_* rates apply to the whole call; 0 = no long-context tier. */
    uint64_t long_threshold;
    double long_input, long_output, long_cache_read, long_cache_write;
};

/* The compiled-in table, sorted by model (strcmp). *n gets its length. Static storage. */
const struct ar_price *ar_prices_builtin(size_t *n);

/* A price table: the compiled-in one plus the entries of an override file. */
struct ar_prices;

/*
 * Loads an override file, shape:
 *   {"models": {"gpt-5.5": {"input": 5, "output": 30, "cache_read": 0.5,
 *                           "cache_write": 0,
 *                           "long_context": {"threshold": 272000, "input": 10,
 *                                            "output": 45, "cache_read": 1,
 *                                            "cache_write": 0}}}}
 * Its entries replace built-in ones of the same name or add new ones; omitted
 * rates are 0, a null rate is not known (AR_PRICE_NONE). Returns 0 with *out (caller
 * ar_prices_destroy()s) or AR_EUSAGE / AR_EIO with err naming the file.
 */
int ar_prices_load(const char *path, struct ar_prices **out, struct ar_error *err);

/* Like ar_prices_load() with the path from --prices (may be NULL) or else
 * $AGENTRUN_PRICES; *out is NULL (the built-in table) when neither is set. */
int ar_prices_open(const char *path, struct ar_prices **out, struct ar_error *err);

void ar_prices_destroy(struct ar_prices *t); /* NULL is fine */

/* The price of `model` in t (NULL: the built-in table), or NULL. Borrowed from t. */
const struct ar_price *ar_prices_find(const struct ar_prices *t, const char *model);

/* USD for usage at price p, choosing the long-context rates past the threshold; NaN when
 * usage has tokens of a class whose rate is AR_PRICE_NONE (the cost is not known). */
double ar_price_apply(const struct ar_price *p, const struct ar_usage *u);

/* Adds every count of u to *to: the one place usage is summed (calls, runs, chunks, jobs). */
void ar_usage_add(struct ar_usage *to, const struct ar_usage *u);

/* ar_usage_cache_read_share() is public: include/agentrun/usage.h. */

/* enum ar_cost_source (unknown, cli, table, cache) is public: include/agentrun/agentrun.h;
 * its words are the RunResult's (ar_cost_source_name(), src/result/result.h). */

struct ar_cost {
    double usd; /* meaningful unless source is AR_COST_UNKNOWN */
    enum ar_cost_source source;
};

/* Non-zero when a cost a CLI reported can be believed: finite and not negative. */
int ar_cost_cli_valid(double usd);

/*
 * The cost of one call: the CLI's own cost when has_cli_cost and it is valid
 * (ar_cost_cli_valid()), else the table's price of `model` (NULL or unknown
 * model → AR_COST_UNKNOWN) applied to usage (NULL → unknown).
 */
struct ar_cost ar_cost_compute(const struct ar_prices *t, const char *model,
                               const struct ar_usage *usage, int has_cli_cost, double cli_cost);

/* Adds b into a, for a run's total (start a from the first call's cost):
 * unknown if either is unknown; "cli" only while every call's was; a cached
 * call (0, "cache") adds nothing, and only cached calls give "cache". */
void ar_cost_add(struct ar_cost *a, const struct ar_cost *b);

/* ar_cost_round() is public: agentrun/agentrun.h. */

#endif
