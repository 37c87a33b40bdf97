/*
 * What a CLI inherits of agentrun's own environment: one table, one rule. A CLI runs with
 * agentrun's environment plus what its adapter adds (src/proc builds it), so everything
 * agentrun itself was given would reach the CLI, its shell and whatever that starts; a
 * secret among it (AGENTRUN_CACHE_KEY, the cache's MAC key) would let an edit run's shell
 * forge cache entries. So an AGENTRUN_* variable reaches a CLI only when its row here says
 * AR_ENV_PASS; one with no row is withheld, which makes a variable a later version adds a
 * secret until someone decides otherwise. tests/unit/test_provider_env.c holds every
 * AGENTRUN_* name of the sources to a row, so a new one cannot be forgotten.
 *
 * ar_provider_prepare_call() applies it to every model call; the other programs the
 * provider layer starts (the version probe, the login status commands) get it too.
 */
#include <stdlib.h>
#include <string.h>

#include "provider/provider.h"

extern char **environ;

#define PREFIX "AGENTRUN_"

/* Alphabetical (a unit test checks), NULL-terminated. */
const struct ar_env_var ar_provider_env_rules[] = {
    { "AGENTRUN_BUDGET_USD", AR_ENV_WITHHOLD,
      "what this agentrun may spend: each call passes on its own allowance instead (share.h, "
      "Nesting)" },
    { "AGENTRUN_CACHE_KEY", AR_ENV_WITHHOLD,
      "the result cache's MAC key: with it a CLI's shell could forge cache entries" },
    { "AGENTRUN_CLAUDE_BIN", AR_ENV_PASS,
      "where claude is: an agentrun the CLI starts finds the same one" },
    { "AGENTRUN_CODEX_BIN", AR_ENV_PASS, "where codex is, likewise" },
    { "AGENTRUN_DEPTH", AR_ENV_WITHHOLD,
      "how deep this agentrun is: each call passes on one more (share.h, Nesting)" },
    { "AGENTRUN_GEMINI_BIN", AR_ENV_PASS, "where gemini is, likewise" },
    { "AGENTRUN_MODEL", AR_ENV_PASS, "the user's default model" },
    { "AGENTRUN_PRICES", AR_ENV_PASS, "the user's price table" },
    { "AGENTRUN_PROVIDER", AR_ENV_PASS, "the user's default provider" },
    { "AGENTRUN_RECORD", AR_ENV_WITHHOLD,
      "this run's recording: an agentrun the CLI starts would add its own calls to it" },
    { "AGENTRUN_REPLAY", AR_ENV_WITHHOLD, "this run's replay, likewise" },
    { "AGENTRUN_TRUST_PROJECT", AR_ENV_WITHHOLD,
      "the user's trust in this run's checkout: an agentrun that the checkout's own shell or "
      "an MCP tool starts does not inherit it" },
    { "AGENTRUN_WORKTREE_DIR", AR_ENV_PASS, "where the user's agentrun worktrees go" },
    { NULL, AR_ENV_WITHHOLD, NULL },
};

static size_t name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* The rule of the variable named by the first n bytes of name. */
static enum ar_env_rule rule_of(const char *name, size_t n)
{
    if (n < sizeof(PREFIX) - 1 || strncmp(name, PREFIX, sizeof(PREFIX) - 1) != 0)
        return AR_ENV_PASS; /* not agentrun's: the adapters and the user decide */
    for (const struct ar_env_var *v = ar_provider_env_rules; v->name; v++)
        if (strlen(v->name) == n && strncmp(v->name, name, n) == 0)
            return v->rule;
    return AR_ENV_WITHHOLD;
}

enum ar_env_rule ar_provider_env_rule(const char *name)
{
    return rule_of(name, strlen(name));
}

int ar_provider_env_withhold(struct ar_strv *env)
{
    for (char **e = environ; e && *e; e++) {
        size_t n = name_len(*e);
        if (rule_of(*e, n) != AR_ENV_WITHHOLD)
            continue;
        if (ar_strv_push_take(env, strndup(*e, n)) < 0)
            return AR_ENOMEM;
    }
    return 0;
}
