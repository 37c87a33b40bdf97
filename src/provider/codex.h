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

/* The tracing target whose lines name the model of a turn (codex 0.169.0). */
#define AR_CODEX_TELEMETRY "codex_otel.trace_safe"

/* What codex's config.toml says about logging in (codex_config.c). */
struct ar_codex_config {
    char *provider;           /* the model provider of the active profile ("openai" by default) */
    int provider_defined;     /* a [model_providers.<provider>] table defines it */
    char *env_key;            /* that table's env_key (the variable holding its key), or NULL */
    int requires_openai_auth; /* that table logs in as OpenAI does */
    char *credentials_store;  /* cli_auth_credentials_store ("file", "keyring", "auto"), or NULL */
};

/* Reads the TOML text toml[0..len) into *out (zeroed first; ar_codex_config_finish() it). */
void ar_codex_config_read(const char *toml, size_t len, struct ar_codex_config *out);

/* ar_codex_config_read() of $CODEX_HOME/config.toml (else ~/.codex/config.toml); a
 * missing or unreadable file reads as an empty one. */
void ar_codex_config_load(struct ar_codex_config *out);
void ar_codex_config_finish(struct ar_codex_config *c);

/* codex's ar_provider.login (codex_config.c). */
void ar_codex_login(const struct ar_login_probe *probe, struct ar_login_state *out);

#endif
