/*
 * The checks of `agentrun doctor`: the binaries, their --version (all at once
 * on one loop), credentials by name, the postures as the adapters build them,
 * git, and the prompt override directories.
 */
#include <stdlib.h>
#include <string.h>

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

/* One `<path> --version`; the answer goes straight into the report. */
struct probe {
    const char *path; /* borrowed; NULL: not found, nothing to run */
    char **version;
    const char **why;
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

static void on_version_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct probe *pr = arg;
    if (res->end == AR_CHILD_TIMEOUT) {
        *pr->why = "--version timed out";
    } else if (res->status != 0) {
        *pr->why = "--version failed";
    } else {
        *pr->version = first_line(res->stdout_data, res->stdout_len);
        if (!*pr->version)
            *pr->version = first_line(res->stderr_tail, res->stderr_tail_len);
        if (!*pr->version)
            *pr->why = "--version printed nothing";
    }
}

static void probe_start(struct ar_loop *loop, struct probe *pr)
{
    if (!pr->path)
        return;
    const char *argv[] = { pr->path, "--version", NULL };
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = argv;
    o.timeout_ms = AR_DOCTOR_VERSION_TIMEOUT_MS;
    o.kill_grace_ms = 1000;
    o.capture_stdout = 1;
    o.output_cap = 1 << 20;
    o.on_done = on_version_done;
    o.arg = pr;
    struct ar_error err = AR_ERROR_INIT;
    if (!loop || ar_child_spawn(loop, &o, NULL, &err) != 0)
        *pr->why = "cannot run it";
}

/* Every probe at once; a probe that cannot start says so in its why. */
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

/* Everything but the --version answer, which the probes fill in before. */
static int check_provider(const struct ar_provider *p, struct ar_doctor_provider *out)
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
    out->usable = out->path && out->version;
    const char *trust = getenv("AGENTRUN_TRUST_PROJECT");
    out->trust_project = trust && strcmp(trust, "1") == 0;
    int rc = check_auth(p, out);
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

int ar_doctor_check(const char *prompts_dir, struct ar_doctor_report *out, struct ar_error *err)
{
    memset(out, 0, sizeof(*out));
    const struct ar_provider *const *reg = ar_providers();
    size_t n = 0;
    while (reg[n])
        n++;
    out->providers = calloc(n, sizeof(*out->providers));
    struct probe *probes = calloc(n + 1, sizeof(*probes));
    if (!out->providers || !probes) {
        free(probes);
        return ar_error_set(err, AR_ENOMEM, "doctor", "out of memory");
    }
    out->n_providers = n;
    const char *git_why = NULL; /* git's reason is not reported */
    for (size_t i = 0; i < n; i++) {
        struct ar_doctor_provider *d = &out->providers[i];
        for (int k = 0; k < AR_DOCTOR_N_POSTURES; k++) {
            ar_strv_init(&d->postures[k].argv);
            ar_strv_init(&d->postures[k].env);
        }
        ar_strv_init(&d->auth_env);
        ar_strv_init(&d->auth_files);
        d->path = ar_provider_which(reg[i]);
        probes[i] = (struct probe){ d->path, &d->version, &d->version_error };
    }
    out->git_path = ar_path_search("git");
    probes[n] = (struct probe){ out->git_path, &out->git_version, &git_why };
    probe_all(probes, n + 1);
    free(probes);

    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        rc = check_provider(reg[i], &out->providers[i]);
        out->ok |= out->providers[i].usable;
    }
    if (!rc)
        rc = check_prompts(prompts_dir, out);
    return rc ? ar_error_set(err, AR_ENOMEM, "doctor", "out of memory") : 0;
}

void ar_doctor_report_finish(struct ar_doctor_report *r)
{
    for (size_t i = 0; i < r->n_providers; i++) {
        struct ar_doctor_provider *d = &r->providers[i];
        free(d->bin_override);
        free(d->path);
        free(d->version);
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
