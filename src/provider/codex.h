/* codex internals exposed for the unit tests. */
#ifndef AR_PROVIDER_CODEX_H
#define AR_PROVIDER_CODEX_H

#include <stddef.h>

#include "agentrun/usage.h"
#include "provider/provider.h"
#include "util/strv.h"

/*
 * The contract rewritten for OpenAI strict structured outputs: every object
 * gets additionalProperties false and lists all its properties in required
 * (optional ones become nullable); keywords strict mode rejects are dropped;
 * oneOf becomes anyOf. NULL when the root is not an object schema (then no
 * --output-schema is passed) or the text is not JSON. Caller free()s.
 */
char *ar_codex_strict_schema(const char *schema);

/*
 * The thread's running token total in a rollout file (the last
 * thread_token_usage / total_token_usage), raw codex counts: input includes
 * cached. Returns 0 or AR_ENOJSON.
 */
int ar_codex_rollout_total(const char *data, size_t len, struct ar_usage *raw);

/*
 * The answer to a strict-mode call with the nulls taken out that strict mode
 * forced on optional properties the contract does not allow to be null; NULL
 * when nothing changed (or text is not JSON). Caller free()s.
 */
char *ar_codex_unstrict(const char *text, const char *schema);

/* The model of the last turn_context in a rollout file, or NULL. Caller free()s. */
char *ar_codex_rollout_model(const char *data, size_t len);

/*
 * The names of the MCP servers a config.toml defines as [mcp_servers.NAME] tables (bare
 * keys only), appended to names once each. Returns 0 or AR_ENOMEM.
 */
int ar_codex_mcp_names(const char *toml, size_t len, struct ar_strv *names);

/* Appends the posture's argv (DESIGN §4b) for spec to out: trust, AGENTS.md, tools, the
 * text call's instructions file (a temp file in out->tmpfiles). Returns 0 or an AR_E… code. */
int ar_codex_posture(const struct ar_call_spec *spec, struct ar_call_setup *out,
                     struct ar_error *err);

#endif
