/*
 * The operator's posture: which directories a call may work in, which
 * providers it may call, what it may spend, whether it may edit. Paths are
 * compared as real paths (symlinks and ".." resolved) and contained
 * component by component, so /work/ab is not inside /work/a.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <stdint.h>

#include "mcp/call.h"

static void free_strv(char **v)
{
    if (!v)
        return;
    for (size_t i = 0; v[i]; i++)
        free(v[i]);
    free(v);
}

void ar_mcp_policy_finish(struct ar_mcp_policy *p)
{
    free_strv(p->providers);
    free_strv(p->dirs);
    memset(p, 0, sizeof(*p));
}

/* "codex,gemini" or "codex gemini" as a NULL-terminated list. */
static char **split_names(const char *list)
{
    size_t n = 0, cap = 4;
    char **v = calloc(cap + 1, sizeof(*v));
    const char *s = list;
    while (v && *s) {
        size_t skip = strspn(s, ", \t");
        s += skip;
        size_t len = strcspn(s, ", \t");
        if (!len)
            break;
        if (n == cap) {
            char **nv = realloc(v, (2 * cap + 1) * sizeof(*v));
            if (!nv)
                goto nomem;
            v = nv;
            cap *= 2;
        }
        if (!(v[n] = strndup(s, len)))
            goto nomem;
        v[++n] = NULL;
        s += len;
    }
    return v;
nomem:
    free_strv(v);
    return NULL;
}

int ar_mcp_policy_init(struct ar_mcp_policy *p, int allow_edits, int worktrees,
                       const char *providers, double max_cost_call, double max_cost_total,
                       const char *const *dirs, size_t n_dirs, struct ar_error *err)
{
    memset(p, 0, sizeof(*p));
    p->allow_edits = allow_edits;
    p->worktrees = worktrees;
    p->max_cost_call = max_cost_call;
    p->max_cost_total = max_cost_total;
    if (providers) {
        int rc = ar_provider_check_list(providers, err);
        if (rc < 0)
            return rc;
        if (!(p->providers = split_names(providers)))
            goto nomem;
        if (!p->providers[0]) {
            ar_mcp_policy_finish(p);
            return ar_error_set(err, AR_EUSAGE, "providers", "--providers names no provider");
        }
    }
    size_t n = n_dirs ? n_dirs : 1;
    if (!(p->dirs = calloc(n + 1, sizeof(*p->dirs))))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const char *d = n_dirs ? dirs[i] : ".";
        if (!(p->dirs[i] = realpath(d, NULL))) {
            int e = errno;
            ar_mcp_policy_finish(p);
            if (e == ENOMEM)
                goto nomem;
            return ar_error_set(err, AR_EUSAGE, "allow-dir", "cannot use directory '%s': %s", d,
                                strerror(e));
        }
    }
    return 0;
nomem:
    ar_mcp_policy_finish(p);
    return ar_error_set(err, AR_ENOMEM, "", "out of memory");
}

static int inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const char *ar_mcp_policy_dirs_text(const struct ar_mcp_policy *p)
{
    static char text[1024];
    size_t at = 0;
    text[0] = '\0';
    for (size_t i = 0; p->dirs && p->dirs[i] && at < sizeof(text); i++) {
        int w = snprintf(text + at, sizeof(text) - at, "%s%s", i ? ", " : "", p->dirs[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return text;
}

int ar_mcp_policy_path(const struct ar_mcp_policy *p, const char *base, const char *path,
                       char **out, char *why, size_t n)
{
    char *joined = NULL;
    *out = NULL;
    if (path[0] != '/' && base) {
        size_t len = strlen(base) + strlen(path) + 2;
        if (!(joined = malloc(len))) {
            snprintf(why, n, "out of memory");
            return -1;
        }
        snprintf(joined, len, "%s/%s", base, path);
    }
    char *real = realpath(joined ? joined : path, NULL);
    int e = errno;
    free(joined);
    if (!real) {
        snprintf(why, n, "cannot use '%s': %s", path, strerror(e));
        return -1;
    }
    for (size_t i = 0; p->dirs && p->dirs[i]; i++) {
        if (inside(real, p->dirs[i])) {
            *out = real;
            return 0;
        }
    }
    snprintf(why, n,
             "'%s' (%s) is outside the directories this server allows (%s); the operator "
             "would need to start agentrun mcp with --allow-dir for it",
             path, real, ar_mcp_policy_dirs_text(p));
    free(real);
    return -1;
}

int ar_mcp_policy_provider_ok(const struct ar_mcp_policy *p, const char *name)
{
    if (!p->providers)
        return 1;
    for (size_t i = 0; p->providers[i]; i++)
        if (strcmp(p->providers[i], name) == 0)
            return 1;
    return 0;
}

/* ---- the posture, applied to one call ---------------------------------------------------- */

static int name_list_ok(const struct ar_mcp_policy *p, const char *list, char *bad, size_t n)
{
    char *copy = strdup(list), *save = NULL;
    int ok = 1;
    for (char *t = copy ? strtok_r(copy, ", \t", &save) : NULL; t;
         t = strtok_r(NULL, ", \t", &save))
        if (!ar_mcp_policy_provider_ok(p, t)) {
            snprintf(bad, n, "%s", t);
            ok = 0;
            break;
        }
    free(copy);
    return ok;
}

static const char *allowed_text(const struct ar_mcp_policy *p)
{
    static char t[256];
    size_t at = 0;
    t[0] = '\0';
    for (size_t i = 0; p->providers && p->providers[i] && at < sizeof(t); i++) {
        int w = snprintf(t + at, sizeof(t) - at, "%s%s", i ? ", " : "", p->providers[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return t;
}

static uint64_t seconds_ms(json_t *v)
{
    double d = json_number_value(v) * 1000.0;
    return d > 1e15 ? (uint64_t)1e15 : (uint64_t)d;
}

int ar_mcp_call_posture(struct ar_mcp_call *c, const struct ar_run_options *defaults,
                        const char *server_cwd, double spent, int spent_unknown)
{
    const struct ar_mcp_policy *p = c->policy;
    char why[1024];
    json_t *v;

    c->run = (*defaults);
    if (!c->tool->uses_model)
        return 0; /* no CLI, no directory, no cost */
    const char *cwd = json_string_value(json_object_get(c->args, "cwd"));
    if (ar_mcp_policy_path(p, server_cwd, cwd ? cwd : server_cwd, &c->cwd, why, sizeof(why)) < 0) {
        ar_mcp_call_fail(c, "cwd: %s", why);
        return -1;
    }
    c->run.cwd = c->cwd;

    /* The call's own provider must be allowed; the server's default (-p, else
     * $AGENTRUN_PROVIDER, else auto) gives way to the first allowed one, since auto
     * could pick any. */
    const char *prov = json_string_value(json_object_get(c->args, "provider"));
    int asked = prov && strcmp(prov, "auto") != 0;
    if (!asked) {
        prov = (*defaults).provider ? (*defaults).provider : getenv("AGENTRUN_PROVIDER");
        if (!prov || !*prov)
            prov = "auto";
        if (p->providers && !ar_mcp_policy_provider_ok(p, prov))
            prov = p->providers[0];
    }
    if (!ar_mcp_policy_provider_ok(p, prov)) {
        ar_mcp_call_fail(c,
                         "provider '%s' is not allowed by this server (allowed: %s); the "
                         "operator would need to add it to --providers",
                         prov, allowed_text(p));
        return -1;
    }
    c->provider = strdup(prov);
    c->run.provider = c->provider;
    const char *fb = json_string_value(json_object_get(c->args, "fallback"));
    if (fb) {
        struct ar_error err = AR_ERROR_INIT;
        if (ar_provider_check_list(fb, &err) < 0) {
            ar_mcp_call_fail(c, "fallback: %s", err.msg);
            return -1;
        }
        c->run.fallback = fb;
    }
    char bad[64];
    if (c->run.fallback && !name_list_ok(p, c->run.fallback, bad, sizeof(bad))) {
        ar_mcp_call_fail(c,
                         "fallback provider '%s' is not allowed by this server (allowed: %s); "
                         "the operator would need to add it to --providers",
                         bad, allowed_text(p));
        return -1;
    }

    double cap = 0;
    if ((v = json_object_get(c->args, "max_cost"))) {
        cap = json_number_value(v);
        if (p->max_cost_call > 0 && cap > p->max_cost_call) {
            ar_mcp_call_fail(c,
                             "max_cost $%.4f is more than this server allows a call ($%.4f); "
                             "the operator would need a higher --max-cost",
                             cap, p->max_cost_call);
            return -1;
        }
    }
    if (p->max_cost_call > 0 && (cap <= 0 || cap > p->max_cost_call))
        cap = p->max_cost_call;
    if (p->max_cost_total > 0) {
        double left = p->max_cost_total - spent;
        if (spent_unknown || left <= 0) {
            ar_mcp_call_fail(c,
                             "this server's budget is spent ($%.4f of $%.4f%s); the operator "
                             "would need a higher --max-cost-total",
                             spent, p->max_cost_total,
                             spent_unknown ? ", and a call's cost is unknown" : "");
            return -1;
        }
        if (cap <= 0 || cap > left)
            cap = left;
    }
    c->max_cost = cap;
    if (cap > 0)
        c->run.max_cost_usd = cap;

    if ((v = json_object_get(c->args, "model")))
        c->run.model = json_string_value(v);
    if ((v = json_object_get(c->args, "timeout")))
        c->run.timeout_ms = seconds_ms(v);
    if ((v = json_object_get(c->args, "idle_timeout")))
        c->run.idle_timeout_ms = seconds_ms(v);
    if ((v = json_object_get(c->args, "max_wait")))
        c->run.max_wait_ms = seconds_ms(v);
    if (json_is_true(json_object_get(c->args, "no_repair")))
        c->run.model_repair = 0;
    /* The tools decide edits (run only) and worktrees; nothing else may edit. */
    c->run.allow_edits = 0;
    c->run.worktree = AR_WORKTREE_NEVER;
    return 0;
}
