/*
 * The compiled-in price table, USD per million tokens. Source and date: shared
 * PRICES.md (BerriAI/litellm model_prices_and_context_window.json, mid 2026).
 * Columns: model, input, output, cache read, cache write (5-minute), then the
 * long-context tier: prompt-token threshold, input, output, cache read, cache
 * write. Keep it sorted by model (strcmp): a unit test checks, and lookup
 * relies on it.
 *
 * Added 2026-11-29 (issue 46), from shared PRICES.md's rows of that date: claude-opus-5
 * (claude 2.1.260-2.1.270's default) and claude-opus-5-5 (2.1.280+'s default; it matches
 * claude 2.1.332's own total_cost_usd at the mock) and claude-fable-5-1, each from a public
 * price table in code. PRICES.md gives no cache-write price for these three, so theirs is 0
 * here (a cache write is priced as nothing, not guessed); claude reports its own cost, so the
 * table prices them only when it does not.
 *
 * Added 2026-12-07 (issue 59), from shared PRICES.md's "Additions of 2026-12-07": the catalog
 * built into claude 2.1.337 (claude-sonnet-5-5, claude-haiku-5-5 with its tier above 100k
 * prompt tokens, claude-fable-5-2 and claude-mythos-5-2, claude-mythos-5-1, and the cache
 * writes of opus-5-5, opus-5 and fable-5-1), each checked against claude 2.1.337's own
 * costUSD at the mock where claude prices it (tests/unit/test_cost.c names the figures);
 * OpenAI's gpt-6 family and the gpt-5.6 cuts (2026-07-30 and 2026-08-21: gpt-5.6 is
 * gpt-5.6-sol); gemini-3.8-flash and gemini-3.5-flash-lite. A price PRICES.md does not give
 * is AR_PRICE_NONE, not a guess: a call that used that class of tokens has no known cost.
 * gpt-6.2-sol (codex 0.171's default) has no row: no price was found.
 */
#include "cost/cost.h"
#include "util/macros.h"

#define NONE AR_PRICE_NONE

static const struct ar_price builtin[] = {
    { "claude-fable-5", 10.0, 50.0, 1.0, 12.5, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-fable-5-1", 10.0, 50.0, 0.25, 12.5, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-fable-5-2", 8.0, 40.0, 0.2, 10.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-haiku-4-5", 1.0, 5.0, 0.1, 1.25, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-haiku-5-5", 0.1, 0.5, 0.01, 0.125, 100000, 0.5, 2.5, 0.05, 0.625 },
    { "claude-mythos-5-1", 10.0, 50.0, 0.25, 12.5, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-mythos-5-2", 8.0, 40.0, 0.2, 10.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-opus-4-1", 15.0, 75.0, 1.5, 18.75, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-opus-4-5", 5.0, 25.0, 0.5, 6.25, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-opus-4-6", 5.0, 25.0, 0.5, 6.25, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-opus-4-7", 5.0, 25.0, 0.5, 6.25, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-opus-4-8", 5.0, 25.0, 0.5, 6.25, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-opus-5", 5.0, 25.0, 0.5, 6.25, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-opus-5-5", 4.0, 20.0, 0.2, 5.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-sonnet-4-5", 3.0, 15.0, 0.3, 3.75, 200000, 6.0, 22.5, 0.6, 7.5 },
    { "claude-sonnet-4-6", 3.0, 15.0, 0.3, 3.75, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-sonnet-5", 2.0, 10.0, 0.2, 2.5, 0, 0.0, 0.0, 0.0, 0.0 },
    { "claude-sonnet-5-5", 2.0, 10.0, 0.1, 2.5, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-2.5-flash", 0.3, 2.5, 0.03, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-2.5-flash-lite", 0.1, 0.4, 0.01, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-2.5-pro", 1.25, 10.0, 0.125, 0.0, 200000, 2.5, 15.0, 0.25, 0.0 },
    { "gemini-3-flash-preview", 0.5, 3.0, 0.05, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-3-pro-preview", 2.0, 12.0, 0.2, 0.0, 200000, 4.0, 18.0, 0.4, 0.0 },
    { "gemini-3.1-flash-lite", 0.25, 1.5, 0.025, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-3.1-pro-preview", 2.0, 12.0, 0.2, 0.0, 200000, 4.0, 18.0, 0.4, 0.0 },
    { "gemini-3.5-flash", 1.5, 9.0, 0.15, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-3.5-flash-lite", 0.3, 2.5, NONE, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-3.6-flash", 1.5, 7.5, 0.15, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gemini-3.8-flash", 0.75, 3.75, 0.075, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5", 1.25, 10.0, 0.125, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5-codex", 1.25, 10.0, 0.125, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5-mini", 0.25, 2.0, 0.025, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5-nano", 0.05, 0.4, 0.005, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.1", 1.25, 10.0, 0.125, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.1-codex", 1.25, 10.0, 0.125, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.1-codex-max", 1.25, 10.0, 0.125, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.1-codex-mini", 0.25, 2.0, 0.025, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.2", 1.75, 14.0, 0.175, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.2-codex", 1.75, 14.0, 0.175, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.3-codex", 1.75, 14.0, 0.175, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.4", 2.5, 15.0, 0.25, 0.0, 272000, 5.0, 22.5, 0.5, 0.0 },
    { "gpt-5.4-mini", 0.75, 4.5, 0.075, 0.0, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.5", 5.0, 30.0, 0.5, 0.0, 272000, 10.0, 45.0, 1.0, 0.0 },
    { "gpt-5.6", 4.0, 20.0, 0.4, 5.0, 272000, 8.0, 30.0, 0.8, 10.0 },
    { "gpt-5.6-luna", 0.2, 1.2, 0.02, NONE, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-5.6-sol", 4.0, 20.0, 0.4, 5.0, 272000, 8.0, 30.0, 0.8, 10.0 },
    { "gpt-5.6-terra", 2.0, 12.0, 0.2, NONE, 0, 0.0, 0.0, 0.0, 0.0 },
    { "gpt-6-astra", 10.0, 50.0, 1.0, 12.5, 272000, 20.0, 75.0, 2.0, 25.0 },
    { "gpt-6-luna", 0.1, 0.5, NONE, NONE, 272000, 0.2, 0.75, NONE, NONE },
    { "gpt-6-sol", 2.0, 10.0, NONE, NONE, 272000, 4.0, 15.0, NONE, NONE },
};

const struct ar_price *ar_prices_builtin(size_t *n)
{
    *n = AR_ARRAY_SIZE(builtin);
    return builtin;
}
