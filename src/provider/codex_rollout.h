/*
 * codex's rollout files (codex_rollout.c): the record codex keeps of each
 * thread, $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl
 * ($HOME/.codex without CODEX_HOME). The adapter reads them for what codex's
 * events do not say. Only src/provider/ and the unit tests include this.
 */
#ifndef AR_PROVIDER_CODEX_ROLLOUT_H
#define AR_PROVIDER_CODEX_ROLLOUT_H

#include <stddef.h>

#include "agentrun/usage.h"

struct json_t;

/*
 * The raw counts of one of codex's token objects (turn.completed's usage, a
 * rollout's total_token_usage) into *raw: input includes the cached tokens,
 * as OpenAI counts them. t is borrowed; missing members are 0.
 */
void ar_codex_token_usage(const struct json_t *t, struct ar_usage *raw);

/*
 * The thread's running token total in a rollout file (the last
 * thread_token_usage / total_token_usage), raw codex counts: input includes
 * cached. Returns 0 or AR_ENOJSON.
 */
int ar_codex_rollout_total(const char *data, size_t len, struct ar_usage *raw);

/* The model of the last turn_context in a rollout file, or NULL. Caller free()s. */
char *ar_codex_rollout_model(const char *data, size_t len);

/*
 * The running total of thread `thread_id` (borrowed) as its rollout file has it
 * now. codex reports a resumed thread's usage as the total of the whole thread
 * (FORMATS.md): read before the CLI starts, this is what the call's own usage is
 * measured from. Returns 0, AR_ENOJSON when there is no such file or total (a
 * thread id holding '/' is never looked up), or AR_ENOMEM.
 */
int ar_codex_thread_total(const char *thread_id, struct ar_usage *raw);

/* The model of thread `thread_id`'s last turn, from its rollout file, or NULL.
 * Caller free()s. */
char *ar_codex_thread_model(const char *thread_id);

/* What a rollout file says beyond tokens. */
struct ar_codex_rollout_facts {
    char *model;       /* the last turn_context's model, or NULL (owned) */
    char *cli_version; /* session_meta's cli_version ("0.171.0"), or NULL (owned) */
    /* The last token_count's rate_limits (codex 0.169-0.171: primary and secondary windows
     * {used_percent, window_minutes, resets_at}), the window most used of the two: */
    int has_limits;
    char status[16];     /* "rejected" when rate_limit_reached_type is set or 100 % is used,
                            else "allowed" */
    char window[24];     /* "five_hour" (300 minutes), "seven_day" (10,080), else "<N>m" */
    double used_percent; /* < 0: not said */
    long long resets_at; /* Unix seconds; 0: not said */
};

/* The facts of a rollout file into *f (ar_codex_rollout_facts_finish() it). */
void ar_codex_rollout_facts(const char *data, size_t len, struct ar_codex_rollout_facts *f);

/* The facts of thread `thread_id`'s rollout file into *f (zeroed when there is none; finish
 * it either way). Returns 0 or AR_ENOJSON (no such file). */
int ar_codex_thread_facts(const char *thread_id, struct ar_codex_rollout_facts *f);

void ar_codex_rollout_facts_finish(struct ar_codex_rollout_facts *f);

#endif
