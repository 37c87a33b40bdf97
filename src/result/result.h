/*
 * The RunResult (DESIGN §6, docs/run-result.md): the one record every run
 * ends with. struct ar_result itself is public (include/agentrun/agentrun.h),
 * and so are ar_result_to_json(), ar_result_exit_status() and
 * ar_result_destroy(); this header adds what the library and the CLI share
 * beyond them: a result for a run that never started, the JSON value, and
 * the words of its enums.
 */
#ifndef AR_RESULT_RESULT_H
#define AR_RESULT_RESULT_H

#include <jansson.h>

#include "agentrun/agentrun.h"

/*
 * A result that failed before any call (bad options, a bad batch line):
 * provider (borrowed, may be NULL), the error code and message (msg NULL:
 * ar_strerror(code)). New result (ar_result_destroy()), or NULL when out of
 * memory.
 */
struct ar_result *ar_result_new_failed(const char *provider, int code, const char *msg);

/* The RunResult object of r (docs/run-result.md). New reference, NULL when out of memory. */
json_t *ar_result_to_value(const struct ar_result *r);

/* The RunResult's "cached_from" object of r: what its cached calls spent when they
 * were made (tokens, cost_usd, cost_source, calls). New reference. */
json_t *ar_result_cached_from(const struct ar_result *r);

/* The RunResult word for k: "none", "local" or "model". Static storage. */
const char *ar_repair_kind_name(enum ar_repair_kind k);

/* The RunResult word for s: "cli", "price_table", "cache" or "unknown". Static storage. */
const char *ar_cost_source_name(enum ar_cost_source s);

#endif
