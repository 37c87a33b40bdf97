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

#endif
