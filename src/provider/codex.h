/* codex's posture (codex_posture.c), for the adapter (codex.c) and the unit tests. */
#ifndef AR_PROVIDER_CODEX_H
#define AR_PROVIDER_CODEX_H

#include <stddef.h>

#include "provider/provider.h"
#include "util/strv.h"

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
