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
#include "util/suggest.h"

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

void ar_provider_login_check(const struct ar_provider *p, struct ar_login_state *out)
{
    ar_login_set(out, AR_LOGIN_UNKNOWN, "agentrun cannot tell");
    if (!p->login)
        return;
    p->login(NULL, out);
    if (out->state != AR_LOGIN_UNKNOWN || !p->login_argv)
        return;
    char *path = ar_provider_which(p);
    if (!path)
        return;
    const char *argv[8] = { path };
    for (size_t i = 0; p->login_argv[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++)
        argv[i + 1] = p->login_argv[i];
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    struct ar_strv env = AR_STRV_INIT;
    o.argv = argv;
    o.env = ar_provider_env_withhold(&env) == 0 ? ar_strv_get(&env) : NULL;
    o.timeout_ms = AR_PROVIDER_STATUS_TIMEOUT_MS;
    o.kill_grace_ms = 1000;
    o.capture_stdout = 1;
    o.output_cap = 1 << 20;
    struct ar_child_sync r;
    if (o.env && ar_child_run_sync(&o, &r, NULL) == 0) {
        int ran = r.res.end == AR_CHILD_EXITED;
        struct ar_login_probe probe = { ran ? r.res.status : -1, r.stdout_data ? r.stdout_data : "",
                                        r.stdout_data ? r.res.stdout_len : 0,
                                        r.stderr_tail ? r.stderr_tail : "",
                                        r.stderr_tail ? r.res.stderr_tail_len : 0 };
        p->login(&probe, out);
        ar_child_sync_finish(&r);
    }
    ar_strv_finish(&env);
    free(path);
}

/* Appends "name what" to a sentence being built in buf: whole words or nothing, so a
 * message is never cut mid-word. */
static void say(char *buf, size_t size, const char *name, const char *join, const char *what,
                int what_len)
{
    size_t off = strlen(buf);
    int n =
        snprintf(buf + off, size - off, "%s%s%s%.*s", off ? ", " : "", name, join, what_len, what);
    if (n < 0 || (size_t)n >= size - off)
        buf[off] = '\0';
}

/* The reason of a login state's sentence, up to its first ':' ("not logged in"). */
static int reason_len(const char *how)
{
    size_t n = strcspn(how, ":(");
    while (n && how[n - 1] == ' ')
        n--;
    return (int)(n > 60 ? 0 : n);
}

/* "codex, gemini": the names of the providers in allowed (a bit per index), into buf. */
static const char *allowed_names(unsigned allowed, char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; providers[i]; i++)
        if ((allowed >> i) & 1u)
            say(buf, n, providers[i]->name, "", "", 0);
    return buf;
}

static int index_of(const struct ar_provider *p)
{
    for (size_t i = 0; providers[i]; i++)
        if (providers[i] == p)
            return (int)i;
    return -1;
}

const struct ar_provider *ar_provider_resolve_within(const char *name, unsigned allowed, char *note,
                                                     size_t size, struct ar_error *err)
{
    if (note && size)
        note[0] = '\0';
    const char *from = "--provider";
    if (!name || !*name) {
        name = getenv("AGENTRUN_PROVIDER");
        from = "AGENTRUN_PROVIDER";
        if (!name || !*name)
            name = "auto";
    }
    char list[128];
    if (strcmp(name, "auto") != 0) {
        const struct ar_provider *p = ar_provider_find(name);
        if (!p) {
            char msg[256];
            ar_provider_unknown_text(name, strlen(name), 1, msg, sizeof(msg));
            ar_error_set(err, AR_EUSAGE, from, "%s", msg);
        } else if (allowed && !((allowed >> index_of(p)) & 1u)) {
            ar_error_set(err, AR_EUSAGE, "providers",
                         "provider '%s' is not allowed here (allowed: %s)", name,
                         allowed_names(allowed, list, sizeof(list)));
            return NULL;
        }
        return p;
    }
    /* The first installed CLI that agentrun starts and that can log in (doctor's "usable");
     * one that is too old or cannot log in is said, and passed. */
    char skipped[192] = "", fix[256] = "";
    int installed = 0, too_old = 0;
    const struct ar_provider *oldest = NULL;
    for (size_t i = 0; providers[i]; i++) {
        const struct ar_provider *p = providers[i];
        if (allowed && !((allowed >> i) & 1u))
            continue;
        if (!ar_provider_installed(p)) {
            say(fix, sizeof(fix), p->name, " ", "not found", 9);
            continue;
        }
        installed++;
        char *bin = p->min_version ? ar_provider_which(p) : NULL;
        int old = bin && ar_provider_check_version(p, bin, NULL) < 0;
        free(bin);
        if (old) {
            if (!too_old++)
                oldest = p;
            say(skipped, sizeof(skipped), p->name, ": ", "too old", 7);
            say(fix, sizeof(fix), p->name, " ", "too old (update it)", 19);
            continue;
        }
        struct ar_login_state st;
        ar_provider_login_check(p, &st);
        if (st.state != AR_LOGIN_NO) {
            if (note && size && skipped[0])
                snprintf(note, size, "%s, using %s; pass -p to choose", skipped, p->name);
            return p;
        }
        int n = reason_len(st.how);
        const char *why = n ? st.how : "cannot log in";
        n = n ? n : (int)strlen(why);
        char what[160];
        /* "not logged in (set ANTHROPIC_API_KEY)": the first thing auth_help says to do. */
        snprintf(what, sizeof(what), "%.*s (%.*s)", n, why, (int)strcspn(p->auth_help, ","),
                 p->auth_help);
        say(skipped, sizeof(skipped), p->name, ": ", why, n);
        say(fix, sizeof(fix), p->name, " ", what, (int)strlen(what));
    }
    /* Only CLIs too old to start: the first is taken, and its call says so (a RunResult
     * whose error names the version needed). */
    if (installed && installed == too_old)
        return oldest;
    if (installed) {
        ar_error_set(err, AR_EAUTH, "--provider",
                     "no CLI can log in: %s; more: agentrun doctor, " AR_PROVIDER_AUTH_DOCS, fix);
        return NULL;
    }
    ar_error_set(err, AR_ENOTFOUND, "--provider",
                 "no CLI found: install claude (%s), codex (%s) or gemini (%s), or point "
                 "AGENTRUN_CLAUDE_BIN, AGENTRUN_CODEX_BIN or AGENTRUN_GEMINI_BIN at one",
                 ar_provider_claude.install_hint, ar_provider_codex.install_hint,
                 ar_provider_gemini.install_hint);
    return NULL;
}

const struct ar_provider *ar_provider_resolve_noted(const char *name, char *note, size_t size,
                                                    struct ar_error *err)
{
    return ar_provider_resolve_within(name, 0, note, size, err);
}

const struct ar_provider *ar_provider_resolve(const char *name, struct ar_error *err)
{
    return ar_provider_resolve_noted(name, NULL, 0, err);
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

int ar_provider_list_parse(const char *list, const struct ar_provider **out, size_t max,
                           struct ar_error *err)
{
    size_t n = 0;
    for (const char *t = list; t && *t;) {
        t += strspn(t, ", \t");
        size_t len = strcspn(t, ", \t");
        if (!len)
            break;
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1), t);
        const struct ar_provider *p = len < sizeof(name) ? ar_provider_find(name) : NULL;
        if (!p) {
            char msg[256];
            ar_provider_unknown_text(t, len, 0, msg, sizeof(msg));
            return ar_error_set(err, AR_EUSAGE, "fallback", "%s", msg);
        }
        if (out && n < max)
            out[n] = p;
        n++;
        t += len;
    }
    return (int)n;
}

void ar_provider_unknown_text(const char *name, size_t len, int with_auto, char *buf, size_t size)
{
    char names[160], word[64], near[32];
    snprintf(names, sizeof(names), "%s%s", ar_provider_names(), with_auto ? ", auto" : "");
    snprintf(word, sizeof(word), "%.*s", (int)(len < sizeof(word) ? len : sizeof(word) - 1), name);
    if (len < sizeof(word) && ar_suggest_in_list(word, names, near, sizeof(near)))
        snprintf(buf, size, "unknown provider '%.*s' (%s); did you mean '%s'?", (int)len, name,
                 names, near);
    else
        snprintf(buf, size, "unknown provider '%.*s' (%s)", (int)len, name, names);
}

int ar_provider_check_list(const char *list, struct ar_error *err)
{
    int n = ar_provider_list_parse(list, NULL, 0, err);
    return n < 0 ? n : 0;
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
    out->key_only = 0;
    vsnprintf(out->how, sizeof(out->how), fmt, ap);
    va_end(ap);
}

void ar_login_set_key(struct ar_login_state *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out->state = AR_LOGIN_YES;
    out->key_only = 1;
    vsnprintf(out->how, sizeof(out->how), fmt, ap);
    va_end(ap);
}

void ar_provider_auth_message(const struct ar_provider *p, int http_status, char *buf, size_t size)
{
    if (http_status == 401 || http_status == 403)
        snprintf(buf, size, "%s rejected the credentials (HTTP %d): %s (%s)", p->name, http_status,
                 p->auth_help, AR_PROVIDER_AUTH_DOCS);
    else
        snprintf(buf, size, "%s is not logged in: %s (%s)", p->name, p->auth_help,
                 AR_PROVIDER_AUTH_DOCS);
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
    long v[3], lo[3], hi[3], min[3];
    if (version && p->min_version && parse_version(version, v) &&
        parse_version(p->min_version, min) && version_cmp(v, min) < 0)
        return "unsupported";
    if (!version || !p->tested_min || !p->tested_max || !parse_version(version, v) ||
        !parse_version(p->tested_min, lo) || !parse_version(p->tested_max, hi))
        return NULL;
    if (version_cmp(v, hi) > 0)
        return "newer";
    if (version_cmp(v, lo) < 0)
        return "older";
    return "tested";
}

/* ---- the oldest version agentrun starts ------------------------------------------------- */

/*
 * What `--version` said of one binary, kept for the process: a CLI is asked once, not once a
 * call (claude answers in about 0.2 s), and asked again when it was replaced (another size or
 * modification time at that path). A batch's jobs may start from several threads' loops.
 */
struct known_version {
    char *path;
    off_t size;
    struct timespec mtime;
    char version[64]; /* its first line, or "" when it gave none */
};
#define KNOWN_VERSIONS 8
static struct known_version known[KNOWN_VERSIONS];
static size_t known_next;
static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;

/* How long a CLI may take to say its version. */
#define VERSION_TIMEOUT_MS 20000

/* bin's first line of `--version` into out (size > 0), "" when it printed none. Returns 0,
 * or -1 when it could not be run (the spawn of the call will say why). */
static int ask_version(const char *bin, char *out, size_t size)
{
    const char *argv[] = { bin, "--version", NULL };
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    struct ar_strv env = AR_STRV_INIT;
    o.argv = argv;
    o.env = ar_provider_env_withhold(&env) == 0 ? ar_strv_get(&env) : NULL;
    o.timeout_ms = VERSION_TIMEOUT_MS;
    o.kill_grace_ms = 1000;
    o.capture_stdout = 1;
    o.output_cap = 1 << 16;
    struct ar_child_sync r;
    int rc = -1;
    out[0] = '\0';
    if (o.env && ar_child_run_sync(&o, &r, NULL) == 0) {
        const char *s = r.stdout_data ? r.stdout_data : "";
        while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
            s++;
        size_t n = strcspn(s, "\r\n");
        snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), s);
        rc = 0;
        ar_child_sync_finish(&r);
    }
    ar_strv_finish(&env);
    return rc;
}

int ar_provider_check_version(const struct ar_provider *p, const char *bin, struct ar_error *err)
{
    if (!p->min_version || !bin)
        return 0;
    char *path = ar_path_search(bin);
    struct stat st;
    if (!path || stat(path, &st) != 0) {
        free(path);
        return 0;
    }
    char version[64] = "";
    int found = 0;
    pthread_mutex_lock(&known_lock);
    for (size_t i = 0; i < KNOWN_VERSIONS && !found; i++) {
        struct known_version *k = &known[i];
        if (k->path && !strcmp(k->path, path) && k->size == st.st_size &&
            k->mtime.tv_sec == st.st_mtim.tv_sec && k->mtime.tv_nsec == st.st_mtim.tv_nsec) {
            memcpy(version, k->version, sizeof(version));
            found = 1;
        }
    }
    pthread_mutex_unlock(&known_lock);
    if (!found) {
        if (ask_version(path, version, sizeof(version)) < 0) {
            free(path);
            return 0;
        }
        pthread_mutex_lock(&known_lock);
        struct known_version *k = &known[known_next++ % KNOWN_VERSIONS];
        free(k->path);
        k->path = strdup(path);
        k->size = st.st_size;
        k->mtime = st.st_mtim;
        memcpy(k->version, version, sizeof(version));
        pthread_mutex_unlock(&known_lock);
    }
    free(path);
    long v[3], min[3];
    int parsed = parse_version(version, v);
    if (parsed && parse_version(p->min_version, min) && version_cmp(v, min) >= 0)
        return 0;
    if (!parsed)
        return ar_error_set(err, AR_ECLIFAILED, p->name,
                            "cannot tell which %s '%s' is ('--version' said '%s'): agentrun "
                            "starts %s %s or later, which takes a prompt as data (%s)",
                            p->name, bin, version, p->name, p->min_version,
                            AR_PROVIDER_VERSION_DOCS);
    return ar_error_set(err, AR_ECLIFAILED, p->name,
                        "%s %s is too old: agentrun starts %s %s or later, which takes a prompt "
                        "as data (an older one reads the files a prompt names with '@'); update "
                        "it with '%s' (%s)",
                        p->name, version, p->name, p->min_version, p->install_hint,
                        AR_PROVIDER_VERSION_DOCS);
}
