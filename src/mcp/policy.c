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
