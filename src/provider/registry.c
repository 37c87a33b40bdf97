/* The provider table, binary and model lookup, and `--provider auto`. */
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc.h"
#include "provider/common.h"
#include "provider/provider.h"

static const struct ar_provider *const providers[] = {
    &ar_provider_claude,
    &ar_provider_codex,
    &ar_provider_gemini,
    NULL,
};

const struct ar_provider *const *ar_providers(void)
{
    return providers;
}

const struct ar_provider *ar_provider_find(const char *name)
{
    for (size_t i = 0; name && providers[i]; i++)
        if (strcmp(providers[i]->name, name) == 0)
            return providers[i];
    return NULL;
}

const char *ar_provider_bin(const struct ar_provider *p)
{
    const char *v = getenv(p->bin_env);
    return v && *v ? v : p->name;
}

char *ar_provider_which(const struct ar_provider *p)
{
    return ar_path_search(ar_provider_bin(p));
}

char *ar_path_search(const char *bin)
{
    /* The spawn's own search (execvp's rules), so doctor can never say "found"
     * where the spawn would say not_found. */
    char *found = NULL;
    return ar_proc_find_program(bin, NULL, getenv("PATH"), &found, NULL) == 0 ? found : NULL;
}

char *ar_provider_auth_file(const struct ar_provider *p, size_t i)
{
    if (!p->auth_files)
        return NULL;
    for (size_t k = 0; k < i; k++)
        if (!p->auth_files[k])
            return NULL;
    const char *rel = p->auth_files[i];
    if (!rel)
        return NULL;
    char *path = NULL;
    size_t hl = p->home_dir ? strlen(p->home_dir) : 0;
    const char *moved = p->home_env ? getenv(p->home_env) : NULL;
    if (hl && moved && *moved && strncmp(rel, p->home_dir, hl) == 0 && rel[hl] == '/') {
        if (asprintf(&path, "%s%s", moved, rel + hl) < 0)
            return NULL;
        return path;
    }
    const char *home = getenv("HOME");
    if (!home || !*home || asprintf(&path, "%s/%s", home, rel) < 0)
        return NULL;
    return path;
}

int ar_provider_installed(const struct ar_provider *p)
{
    char *where = ar_provider_which(p);
    free(where);
    return where != NULL;
}

const char *ar_provider_model(const struct ar_provider *p, const char *requested)
{
    if (requested && *requested)
        return requested;
    const char *v = getenv("AGENTRUN_MODEL");
    if (v && *v)
        return v;
    if (p->model_env) {
        v = getenv(p->model_env);
        if (v && *v)
            return v;
    }
    return NULL;
}

const struct ar_provider *ar_provider_detect(const char *data, size_t len)
{
    for (size_t i = 0; providers[i]; i++) {
        struct ar_reply r;
        ar_reply_init(&r);
        int rc = providers[i]->unwrap_captured(data, len, &r);
        ar_reply_finish(&r);
        if (rc == 0)
            return providers[i];
    }
    return NULL;
}

const struct ar_provider *ar_provider_resolve(const char *name, struct ar_error *err)
{
    const char *from = "--provider";
    if (!name || !*name) {
        name = getenv("AGENTRUN_PROVIDER");
        from = "AGENTRUN_PROVIDER";
        if (!name || !*name)
            name = "auto";
    }
    if (strcmp(name, "auto") != 0) {
        const struct ar_provider *p = ar_provider_find(name);
        if (!p)
            ar_error_set(err, AR_EUSAGE, from,
                         "unknown provider '%s' (claude, codex, gemini, auto)", name);
        return p;
    }
    for (size_t i = 0; providers[i]; i++)
        if (ar_provider_installed(providers[i]))
            return providers[i];
    ar_error_set(err, AR_ENOTFOUND, "--provider",
                 "no CLI found: install claude (%s), codex (%s) or gemini (%s), or point "
                 "AGENTRUN_CLAUDE_BIN, AGENTRUN_CODEX_BIN or AGENTRUN_GEMINI_BIN at one",
                 ar_provider_claude.install_hint, ar_provider_codex.install_hint,
                 ar_provider_gemini.install_hint);
    return NULL;
}

/* The registry's names joined for messages, made once (pthread_once: the library's
 * callers may be threads). */
static char names_list[128], names_or[128];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void join_names(char *out, size_t size, const char *last_sep)
{
    const struct ar_provider *const *p = ar_providers();
    size_t off = 0;
    for (size_t i = 0; p[i] && off < size; i++)
        off += (size_t)snprintf(out + off, size - off, "%s%s",
                                i == 0     ? ""
                                : p[i + 1] ? ", "
                                           : last_sep,
                                p[i]->name);
}

static void make_names(void)
{
    join_names(names_list, sizeof(names_list), ", ");
    join_names(names_or, sizeof(names_or), " or ");
}

const char *ar_provider_names(void)
{
    pthread_once(&names_once, make_names);
    return names_list;
}

const char *ar_provider_names_or(void)
{
    pthread_once(&names_once, make_names);
    return names_or;
}

int ar_provider_check_list(const char *list, struct ar_error *err)
{
    for (const char *t = list; t && *t;) {
        size_t n = strcspn(t, ", ");
        if (n) {
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), t);
            if (n >= sizeof(name) || !ar_provider_find(name))
                return ar_error_set(err, AR_EUSAGE, "fallback", "unknown provider '%.*s' (%s)",
                                    (int)n, t, ar_provider_names());
        }
        t += n;
        t += strspn(t, ", ");
    }
    return 0;
}

int ar_provider_check_arg(const char *what, const char *value, struct ar_error *err)
{
    if (!value)
        return 0;
    if (!*value)
        return ar_error_set(err, AR_EUSAGE, what, "the %s is empty", what);
    if (*value == '-')
        return ar_error_set(err, AR_EUSAGE, what,
                            "invalid %s '%.64s': it must not start with '-' (the CLI would take "
                            "it for an option)",
                            what, value);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return ar_error_set(err, AR_EUSAGE, what,
                                "invalid %s: it holds a control character (0x%02x)", what, *p);
    return 0;
}

void ar_login_set(struct ar_login_state *out, enum ar_login state, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out->state = state;
    vsnprintf(out->how, sizeof(out->how), fmt, ap);
    va_end(ap);
}

const char *ar_provider_auth_env_set(const struct ar_provider *p)
{
    for (size_t i = 0; p->auth_env && p->auth_env[i]; i++) {
        const char *v = getenv(p->auth_env[i]);
        if (v && *v)
            return p->auth_env[i];
    }
    return NULL;
}

int ar_provider_known(const char *name)
{
    return name && ar_provider_find(name) != NULL;
}

/* The first run of digits and dots in s that holds a dot, as up to three numbers; 0 when
 * there is none. */
static int parse_version(const char *s, long v[3])
{
    for (const char *p = s; p && *p; p++) {
        if (!isdigit((unsigned char)*p) ||
            (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.')))
            continue;
        char *end;
        v[0] = v[1] = v[2] = 0;
        const char *q = p;
        int n = 0;
        while (n < 3 && isdigit((unsigned char)*q)) {
            v[n++] = strtol(q, &end, 10);
            q = end;
            if (*q != '.' || !isdigit((unsigned char)q[1]))
                break;
            q++;
        }
        if (n >= 2)
            return 1;
    }
    return 0;
}

static int version_cmp(const long a[3], const long b[3])
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

const char *ar_provider_version_fit(const struct ar_provider *p, const char *version)
{
    long v[3], lo[3], hi[3];
    if (!version || !p->tested_min || !p->tested_max || !parse_version(version, v) ||
        !parse_version(p->tested_min, lo) || !parse_version(p->tested_max, hi))
        return NULL;
    if (version_cmp(v, hi) > 0)
        return "newer";
    if (version_cmp(v, lo) < 0)
        return "older";
    return "tested";
}
