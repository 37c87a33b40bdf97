/*
 * The checks of `agentrun doctor`: the binaries, their --version (all at once
 * on one loop), credentials by name, the postures as the adapters build them,
 * git, and the prompt override directories.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentrun/agentrun.h"
#include "doctor/doctor.h"
#include "proc/proc.h"
#include "prompt/prompt.h"
#include "provider/provider.h"
#include "util/buf.h"
#include "util/file.h"

/* The longest --version line kept. */
#define VERSION_MAX 200

const char *ar_doctor_posture_name(enum ar_doctor_posture p)
{
    static const char *const names[] = { "text", "read", "edit" };
    return p < AR_DOCTOR_N_POSTURES ? names[p] : "?";
}

/* One `<path> ARGS…` run for doctor (--version, a status command): what it printed and
 * how it ended, kept until the report is filled. */
struct probe {
    const char *path;        /* borrowed; NULL: not found, nothing to run */
    const char *const *args; /* after the binary, NULL-terminated */
    int status;              /* exit status; -1: it could not run, was killed or timed out */
    const char *why;         /* static; with status != 0: what went wrong */
    struct ar_buf out, err;  /* stdout, and stderr's tail */
};

/* The first non-empty line of s[0..n), trimmed, at most VERSION_MAX bytes, or NULL. */
static char *first_line(const char *s, size_t n)
{
    const char *end = s + n;
    while (s && s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        const char *b = s;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        const char *t = e;
        while (t > b && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
            t--;
        if (t > b && !memchr(b, '\0', (size_t)(t - b)))
            return strndup(b, (size_t)(t - b) > VERSION_MAX ? VERSION_MAX : (size_t)(t - b));
        s = nl ? nl + 1 : end;
    }
    return NULL;
}

static void on_probe_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct probe *pr = arg;
    (void)c;
    if (res->end == AR_CHILD_TIMEOUT) {
        pr->status = -1;
        pr->why = "timed out";
        return;
    }
    pr->status = res->end == AR_CHILD_EXITED ? res->status : -1;
    pr->why = pr->status ? "failed" : NULL;
    ar_buf_append(&pr->out, res->stdout_data ? res->stdout_data : "", res->stdout_len);
    ar_buf_append(&pr->err, res->stderr_tail ? res->stderr_tail : "", res->stderr_tail_len);
}

static void probe_start(struct ar_loop *loop, struct probe *pr)
{
    pr->status = -1;
    pr->why = "cannot run it";
    if (!pr->path)
        return;
    const char *argv[8] = { pr->path };
    for (size_t i = 0; pr->args[i] && i + 2 < sizeof(argv) / sizeof(argv[0]); i++)
        argv[i + 1] = pr->args[i];
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    /* What every CLI agentrun starts inherits, a --version too (src/provider/env.c). */
    struct ar_strv env = AR_STRV_INIT;
    o.argv = argv;
    o.env = ar_provider_env_withhold(&env) == 0 ? ar_strv_get(&env) : NULL;
    o.timeout_ms = AR_DOCTOR_VERSION_TIMEOUT_MS;
    o.kill_grace_ms = 1000;
    o.capture_stdout = 1;
    o.output_cap = 1 << 20;
    o.on_done = on_probe_done;
    o.arg = pr;
    struct ar_error err = AR_ERROR_INIT;
    if (loop && o.env)
        ar_child_spawn(loop, &o, NULL, &err);
    ar_strv_finish(&env);
}

/* Every probe at once; a probe that cannot start keeps status -1. */
static void probe_all(struct probe *probes, size_t n)
{
    struct ar_loop *loop = ar_loop_create(NULL);
    for (size_t i = 0; i < n; i++)
        probe_start(loop, &probes[i]);
    if (loop) {
        ar_loop_run(loop);
        ar_loop_destroy(loop);
    }
}

/* The version a --version probe found, or NULL with *why set. */
static char *version_of(const struct probe *pr, const char **why)
{
    char *v = NULL;
    if (pr->status == 0) {
        v = first_line(pr->out.data, pr->out.len);
        if (!v)
            v = first_line(pr->err.data, pr->err.len);
        if (!v)
            *why = "--version printed nothing";
    } else {
        *why = pr->why && !strcmp(pr->why, "timed out") ? "--version timed out"
               : pr->why && !strcmp(pr->why, "failed")  ? "--version failed"
                                                        : "cannot run it";
    }
    return v;
}

/* How the adapter builds posture k (in a git work tree); names only for the environment. */
static int check_call(const struct ar_provider *p, enum ar_doctor_posture k, int trust,
                      struct ar_doctor_call *out)
{
    static const enum ar_tools tools[] = { AR_TOOLS_NONE, AR_TOOLS_READ, AR_TOOLS_EDIT };
    struct ar_call_spec spec = { 0 };
    spec.tools = tools[k];
    spec.allow_edits = spec.tools == AR_TOOLS_EDIT;
    spec.trust_project = trust;
    spec.no_session = spec.tools == AR_TOOLS_NONE;
    spec.in_git_repo = 1;
    struct ar_call_setup setup;
    struct ar_error err = AR_ERROR_INIT;
    int rc = 0;
    ar_call_setup_init(&setup);
    if (p->prepare(&spec, &setup, &err) < 0) {
        if (!(out->error = strdup(err.msg)))
            rc = AR_ENOMEM;
    } else {
        for (size_t i = 1; !rc && i < setup.argv.n; i++)
            rc = ar_strv_push(&out->argv, setup.argv.v[i]);
        for (size_t i = 0; !rc && i < setup.env.n; i++) {
            const char *e = setup.env.v[i];
            rc = ar_strv_pushf(&out->env, "%.*s", (int)strcspn(e, "="), e);
        }
        out->project_config = setup.project_config;
        out->context_files = setup.context_files;
    }
    ar_call_setup_finish(&setup);
    return rc;
}

/* Credentials that are present, by name; their values are never read out. */
static int check_auth(const struct ar_provider *p, struct ar_doctor_provider *out)
{
    int rc = 0;
    for (size_t i = 0; !rc && p->auth_env && p->auth_env[i]; i++) {
        const char *v = getenv(p->auth_env[i]);
        if (v && *v)
            rc = ar_strv_push(&out->auth_env, p->auth_env[i]);
    }
    char *f;
    for (size_t i = 0; !rc && (f = ar_provider_auth_file(p, i)) != NULL; i++) {
        if (ar_is_file(f))
            rc = ar_strv_push_take(&out->auth_files, f);
        else
            free(f);
    }
    return rc;
}

/* Whether p can log in: its adapter reads the status command's answer (pr; NULL when it
 * has none or the binary was not found) and what the environment says. */
static int check_login(const struct ar_provider *p, const struct probe *pr,
                       struct ar_doctor_provider *out)
{
    struct ar_login_state st = { AR_LOGIN_UNKNOWN, "", 0 };
    struct ar_login_probe lp = { -1, "", 0, "", 0 };
    if (pr && pr->path) {
        lp = (struct ar_login_probe){ pr->status, pr->out.data ? pr->out.data : "", pr->out.len,
                                      pr->err.data ? pr->err.data : "", pr->err.len };
    }
    if (p->login)
        p->login(pr && pr->path ? &lp : NULL, &st);
    else
        ar_login_set(&st, AR_LOGIN_UNKNOWN, "agentrun cannot tell");
    out->login = st.state;
    out->key_only = st.state == AR_LOGIN_YES && st.key_only;
    return (out->login_how = strdup(st.how)) ? 0 : AR_ENOMEM;
}

/* Everything but the probes' answers, which come in before. */
static int check_provider(const struct ar_provider *p, const struct probe *login,
                          struct ar_doctor_provider *out)
{
    out->name = p->name;
    out->bin_env = p->bin_env;
    out->install_hint = p->install_hint;
    out->posture_note = p->posture_note;
    const char *over = getenv(p->bin_env);
    if (over && *over && !(out->bin_override = strdup(over)))
        return AR_ENOMEM;
    if (out->path && !out->version && !out->version_error)
        out->version_error = "no answer";
    /* A binary that does not even answer --version (it hangs, fails or is
     * broken) will not answer a prompt either. */
    out->installed = out->path && out->version;
    out->tested_min = p->tested_min;
    out->tested_max = p->tested_max;
    out->version_fit = ar_provider_version_fit(p, out->version);
    const char *trust = getenv("AGENTRUN_TRUST_PROJECT");
    out->trust_project = trust && strcmp(trust, "1") == 0;
    int rc = check_auth(p, out);
    if (!rc && out->path)
        rc = check_login(p, login, out);
    /* Installed, and nothing says it cannot log in or that agentrun will not start it: it
     * will likely answer a prompt. */
    out->usable = out->installed && out->login != AR_LOGIN_NO &&
                  !(out->version_fit && !strcmp(out->version_fit, "unsupported"));
    for (int k = 0; !rc && out->path && k < AR_DOCTOR_N_POSTURES; k++)
        rc = check_call(p, (enum ar_doctor_posture)k, out->trust_project, &out->postures[k]);
    return rc;
}

static int check_prompts(const char *prompts_dir, struct ar_doctor_report *out)
{
    struct ar_buf dir;
    ar_buf_init(&dir, AR_BUF_UNLIMITED);
    int rc = ar_prompt_config_dir(&dir);
    if (rc == 0 && !(out->config_dir = strdup(ar_buf_cstr(&dir))))
        rc = AR_ENOMEM;
    ar_buf_finish(&dir);
    if (rc == AR_ENOTFOUND)
        rc = 0; /* no HOME: nowhere to look */
    out->config_dir_exists = out->config_dir && ar_is_dir(out->config_dir);
    out->prompts_dir = prompts_dir;
    out->prompts_dir_exists = prompts_dir && ar_is_dir(prompts_dir);
    return rc;
}

static const char *const version_args[] = { "--version", NULL };

int ar_doctor_check(const char *prompts_dir, struct ar_doctor_report *out, struct ar_error *err)
{
    memset(out, 0, sizeof(*out));
    const struct ar_provider *const *reg = ar_providers();
    size_t n = 0;
    while (reg[n])
        n++;
    /* probes[i]: provider i's --version; probes[n + i]: its status command; probes[2n]: git. */
    size_t np = 2 * n + 1;
    out->providers = calloc(n, sizeof(*out->providers));
    struct probe *probes = calloc(np, sizeof(*probes));
    if (!out->providers || !probes) {
        free(probes);
        return ar_error_set(err, AR_ENOMEM, "doctor", "out of memory");
    }
    out->n_providers = n;
    for (size_t i = 0; i < np; i++) {
        ar_buf_init(&probes[i].out, 1 << 20);
        ar_buf_init(&probes[i].err, 1 << 20);
        probes[i].args = version_args;
    }
    for (size_t i = 0; i < n; i++) {
        struct ar_doctor_provider *d = &out->providers[i];
        for (int k = 0; k < AR_DOCTOR_N_POSTURES; k++) {
            ar_strv_init(&d->postures[k].argv);
            ar_strv_init(&d->postures[k].env);
        }
        ar_strv_init(&d->auth_env);
        ar_strv_init(&d->auth_files);
        d->path = ar_provider_which(reg[i]);
        probes[i].path = d->path;
        if (reg[i]->login_argv) {
            probes[n + i].path = d->path;
            probes[n + i].args = reg[i]->login_argv;
        }
    }
    out->git_path = ar_path_search("git");
    probes[2 * n].path = out->git_path;
    probe_all(probes, np);

    int rc = 0;
    const char *git_why = NULL; /* git's reason is not reported */
    for (size_t i = 0; !rc && i < n; i++) {
        struct ar_doctor_provider *d = &out->providers[i];
        d->version = version_of(&probes[i], &d->version_error);
        rc = check_provider(reg[i], probes[n + i].path ? &probes[n + i] : NULL, d);
        out->ok |= d->usable;
    }
    out->git_version = version_of(&probes[2 * n], &git_why);
    for (size_t i = 0; i < np; i++) {
        ar_buf_finish(&probes[i].out);
        ar_buf_finish(&probes[i].err);
    }
    free(probes);
    if (!rc)
        rc = check_prompts(prompts_dir, out);
    return rc ? ar_error_set(err, AR_ENOMEM, "doctor", "out of memory") : 0;
}

const char *ar_auth_check_name(enum ar_auth_check c)
{
    static const char *const names[] = { "not checked", "verified", "rejected", "unreachable" };
    return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

/* The prompt of the credentials check: a few words, a one-word answer. */
#define AUTH_CHECK_PROMPT "Reply with the single word OK."

struct auth_checks {
    struct ar_doctor_report *r;
    uint64_t timeout_ms;
    const char *cwd; /* an empty directory: nothing of a checkout loads */
    int nomem;
};

struct auth_check {
    struct auth_checks *all;
    struct ar_doctor_provider *d;
};

static void auth_found(struct auth_check *c, enum ar_auth_check found, const char *how, double cost)
{
    c->d->auth_check = found;
    c->d->auth_check_cost_usd = cost;
    free(c->d->auth_check_how);
    if (!(c->d->auth_check_how = strdup(how)))
        c->all->nomem = 1;
}

static void on_auth_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    struct auth_check *c = arg;
    (void)run;
    char how[320];
    enum ar_auth_check found = res->ok                       ? AR_AUTH_VERIFIED
                               : res->error.code == AR_EAUTH ? AR_AUTH_REJECTED
                                                             : AR_AUTH_UNREACHABLE;
    if (res->ok)
        snprintf(how, sizeof(how), "one call answered in %.1f s", res->duration_ms / 1000.0);
    else
        snprintf(how, sizeof(how), "%s: %s", ar_strerror_name(res->error.code), res->error.msg);
    auth_found(c, found, how, res->cost_usd);
    ar_result_destroy(res);
    free(c);
}

static int start_auth_checks(struct uv_loop_s *uv, void *arg, struct ar_error *err)
{
    struct auth_checks *all = arg;
    (void)err;
    for (size_t i = 0; i < all->r->n_providers; i++) {
        struct ar_doctor_provider *d = &all->r->providers[i];
        if (!d->usable)
            continue;
        struct auth_check *c = calloc(1, sizeof(*c));
        if (!c) {
            all->nomem = 1;
            break;
        }
        c->all = all;
        c->d = d;
        struct ar_run_options o;
        ar_run_options_init(&o);
        o.provider = d->name;
        o.prompt = AUTH_CHECK_PROMPT;
        o.cwd = all->cwd;
        o.tools = AR_TOOLS_NONE;
        o.no_session = 1;
        o.timeout_ms = all->timeout_ms;
        o.idle_timeout_ms = all->timeout_ms;
        o.max_wait_ms = 0; /* no retry: one call */
        o.track_files = AR_TRACK_FILES_NEVER;
        struct ar_error e = AR_ERROR_INIT;
        if (ar_run_start(uv, &o, on_auth_done, c, NULL, &e) < 0) {
            auth_found(c, AR_AUTH_UNREACHABLE, e.msg, 0);
            free(c);
        }
    }
    return 0;
}

int ar_doctor_check_auth(struct ar_doctor_report *r, uint64_t timeout_ms, struct ar_error *err)
{
    const char *tmp = getenv("TMPDIR");
    char *path = NULL;
    if (asprintf(&path, "%s/agentrun-auth-check-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
        return ar_error_set(err, AR_ENOMEM, "doctor", "out of memory");
    if (!mkdtemp(path)) {
        free(path);
        return ar_error_set(err, AR_ESPAWN, "doctor", "cannot make a temporary directory");
    }
    struct auth_checks all = { r, timeout_ms ? timeout_ms : AR_DOCTOR_AUTH_TIMEOUT_MS, path, 0 };
    int rc = ar_loop_run_private(start_auth_checks, &all, err);
    rmdir(path);
    free(path);
    r->ok = 0;
    for (size_t i = 0; i < r->n_providers; i++) {
        struct ar_doctor_provider *d = &r->providers[i];
        if (d->auth_check == AR_AUTH_REJECTED)
            d->usable = 0;
        r->ok |= d->usable;
    }
    if (!rc && all.nomem)
        rc = ar_error_set(err, AR_ENOMEM, "doctor", "out of memory");
    return rc;
}

void ar_doctor_report_finish(struct ar_doctor_report *r)
{
    for (size_t i = 0; i < r->n_providers; i++) {
        struct ar_doctor_provider *d = &r->providers[i];
        free(d->bin_override);
        free(d->path);
        free(d->version);
        free(d->login_how);
        free(d->auth_check_how);
        ar_strv_finish(&d->auth_env);
        ar_strv_finish(&d->auth_files);
        for (int k = 0; k < AR_DOCTOR_N_POSTURES; k++) {
            free(d->postures[k].error);
            ar_strv_finish(&d->postures[k].argv);
            ar_strv_finish(&d->postures[k].env);
        }
    }
    free(r->providers);
    free(r->git_path);
    free(r->git_version);
    free(r->config_dir);
    memset(r, 0, sizeof(*r));
}
