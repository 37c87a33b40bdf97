/*
 * agentrun doctor: which CLIs are found and usable, their versions, which
 * credentials are present (names only, never values), git, and where prompt
 * overrides are looked for. The checks are src/doctor's; this file only
 * prints its report, as text or as the agentrun.doctor/1 JSON.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "agentrun/agentrun.h"
#include "agentrun/doctor.h"
#include "util/json_dump.h"

#define DOCTOR_SCHEMA "agentrun.doctor/1"

enum { KEY_FORMAT = 512, KEY_PROMPTS_DIR, KEY_PRETTY, KEY_CHECK_AUTH, KEY_TIMEOUT };

static const struct ar_cli_opt doctor_opts[] = {
    { "format", KEY_FORMAT, "FORMAT", "text or json (default: text)", "text|json" },
    { "prompts-dir", KEY_PROMPTS_DIR, "DIR", "also check this prompt override directory", "@dir" },
    { "pretty", KEY_PRETTY, NULL, "indent the JSON (default: one line)", NULL },
    { "check-auth", KEY_CHECK_AUTH, NULL,
      "try each usable CLI's credentials with one tiny call (a one-word answer: a few "
      "thousand input tokens at most); verified, rejected or unreachable",
      NULL },
    { "timeout", KEY_TIMEOUT, "DURATION",
      "with --check-auth: how long each call may take "
      "(default: 30s)",
      "@duration" },
    { NULL, 0, NULL, NULL, NULL },
};

/* A string of a report as JSON: NULL is null, bytes that are not UTF-8 become U+FFFD. */
static json_t *text_or_null(const char *s)
{
    return s ? ar_json_text(s, strlen(s)) : json_null();
}

static json_t *strv_value(const struct ar_strv *v)
{
    json_t *a = json_array();
    for (size_t i = 0; i < v->n; i++)
        json_array_append_new(a, json_string(v->v[i]));
    return a;
}

/* One posture's argv (long values cut: a system prompt or a path in a temporary
 * directory says nothing useful here) and environment names. */
static json_t *call_value(const struct ar_doctor_call *c)
{
    json_t *o = json_object();
    if (c->error) {
        json_object_set_new(o, "error", json_string(c->error));
        return o;
    }
    json_t *argv = json_array();
    for (size_t i = 0; i < c->argv.n; i++) {
        const char *a = c->argv.v[i];
        json_array_append_new(argv, strlen(a) > 48 ? json_sprintf("%.40s…", a) : json_string(a));
    }
    json_object_set_new(o, "argv", argv);
    json_object_set_new(o, "env", strv_value(&c->env));
    json_object_set_new(o, "project_config", json_boolean(c->project_config));
    json_object_set_new(o, "context_files", json_boolean(c->context_files));
    return o;
}

static json_t *postures_value(const struct ar_doctor_provider *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "how", json_string(p->posture_note));
    json_object_set_new(o, "trust_project", json_boolean(p->trust_project));
    for (int k = 0; k < AR_DOCTOR_N_POSTURES; k++)
        json_object_set_new(o, ar_doctor_posture_name((enum ar_doctor_posture)k),
                            call_value(&p->postures[k]));
    return o;
}

static json_t *provider_value(const struct ar_doctor_provider *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    json_object_set_new(o, "bin_env", json_string(p->bin_env));
    json_object_set_new(o, "bin_override",
                        p->bin_override ? json_string(p->bin_override) : json_null());
    json_object_set_new(o, "found", json_boolean(p->path != NULL));
    json_object_set_new(o, "path", text_or_null(p->path));
    json_object_set_new(o, "install_hint", json_string(p->install_hint));
    json_object_set_new(o, "version", text_or_null(p->version));
    if (p->path && !p->version)
        json_object_set_new(o, "version_error", json_string(p->version_error));
    json_object_set_new(o, "tested",
                        json_pack("{s:s?,s:s?}", "min", p->tested_min, "max", p->tested_max));
    json_object_set_new(o, "version_fit", text_or_null(p->version_fit));
    json_object_set_new(o, "auth_env", strv_value(&p->auth_env));
    json_object_set_new(o, "auth_files", strv_value(&p->auth_files));
    json_object_set_new(o, "auth_found", json_boolean(p->auth_env.n + p->auth_files.n > 0));
    json_object_set_new(o, "installed", json_boolean(p->installed));
    json_object_set_new(o, "logged_in",
                        !p->path || p->login == AR_LOGIN_UNKNOWN
                            ? json_null()
                            : json_boolean(p->login == AR_LOGIN_YES));
    json_object_set_new(o, "login", text_or_null(p->login_how));
    json_object_set_new(o, "key_not_verified", json_boolean(p->key_only));
    if (p->auth_check != AR_AUTH_NOT_CHECKED) {
        json_t *c = json_object();
        json_object_set_new(c, "result", json_string(ar_auth_check_name(p->auth_check)));
        json_object_set_new(c, "message", text_or_null(p->auth_check_how));
        json_object_set_new(c, "cost_usd", json_real(p->auth_check_cost_usd));
        json_object_set_new(o, "auth_check", c);
    }
    json_object_set_new(o, "usable", json_boolean(p->usable));
    if (p->path)
        json_object_set_new(o, "posture", postures_value(p));
    return o;
}

/* The agentrun.doctor/1 document (docs/doctor.md). New reference. */
static json_t *report_value(const struct ar_doctor_report *r)
{
    json_t *doc = json_object();
    json_t *providers = json_array();
    for (size_t i = 0; i < r->n_providers; i++)
        json_array_append_new(providers, provider_value(&r->providers[i]));
    json_object_set_new(doc, "schema", json_string(DOCTOR_SCHEMA));
    json_object_set_new(doc, "ok", json_boolean(r->ok));
    json_object_set_new(doc, "providers", providers);
    json_t *git = json_object();
    json_object_set_new(git, "found", json_boolean(r->git_path != NULL));
    json_object_set_new(git, "path", text_or_null(r->git_path));
    json_object_set_new(git, "version", text_or_null(r->git_version));
    json_object_set_new(doc, "git", git);
    json_t *pr = json_object();
    json_object_set_new(pr, "config_dir", r->config_dir ? json_string(r->config_dir) : json_null());
    json_object_set_new(pr, "config_dir_exists", json_boolean(r->config_dir_exists));
    if (r->prompts_dir) {
        json_object_set_new(pr, "prompts_dir", json_string(r->prompts_dir));
        json_object_set_new(pr, "prompts_dir_exists", json_boolean(r->prompts_dir_exists));
    }
    json_object_set_new(doc, "prompts", pr);
    return doc;
}

static void print_posture(const json_t *pos)
{
    printf("         posture: %s\n", json_string_value(json_object_get(pos, "how")));
    if (json_is_true(json_object_get(pos, "trust_project")))
        printf("         posture: AGENTRUN_TRUST_PROJECT=1: the checkout's settings, hooks, MCP "
               "servers and context files load\n");
    for (int n = 0; n < AR_DOCTOR_N_POSTURES; n++) {
        const char *name = ar_doctor_posture_name((enum ar_doctor_posture)n);
        const json_t *o = json_object_get(pos, name);
        printf("         %s:", name);
        size_t i;
        const json_t *v;
        json_array_foreach(json_object_get(o, "argv"), i, v)
        {
            const char *a = json_string_value(v);
            printf(*a && !strpbrk(a, " '\"{}") ? " %s" : " '%s'", a);
        }
        json_array_foreach(json_object_get(o, "env"), i, v) printf(" $%s", json_string_value(v));
        if (json_object_get(o, "error"))
            printf(" (%s)", json_string_value(json_object_get(o, "error")));
        printf("\n");
    }
}

static void print_text(const json_t *doc)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(doc, "providers"), i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        if (!json_is_true(json_object_get(p, "found"))) {
            printf("%-8s not found (install: %s; or set %s)\n", name,
                   json_string_value(json_object_get(p, "install_hint")),
                   json_string_value(json_object_get(p, "bin_env")));
            continue;
        }
        const char *ver = json_string_value(json_object_get(p, "version"));
        printf("%-8s %s  %s\n", name, json_string_value(json_object_get(p, "path")),
               ver ? ver : json_string_value(json_object_get(p, "version_error")));
        /* Newer than tested is a warning, never a failure: agentrun counts what it does
         * not know (a call's unknown_events) rather than refusing the CLI. */
        const char *fit = json_string_value(json_object_get(p, "version_fit"));
        const json_t *tested = json_object_get(p, "tested");
        if (fit && !strcmp(fit, "unsupported"))
            printf("         version: error: too old, agentrun does not start it (it would act "
                   "on a prompt's words); tested: %s to %s\n",
                   json_string_value(json_object_get(tested, "min")),
                   json_string_value(json_object_get(tested, "max")));
        else if (fit)
            printf("         version: %s %s to %s\n",
                   !strcmp(fit, "newer")   ? "warning: newer than the tested range,"
                   : !strcmp(fit, "older") ? "warning: older than the tested range,"
                                           : "within the tested range,",
                   json_string_value(json_object_get(tested, "min")),
                   json_string_value(json_object_get(tested, "max")));
        if (json_is_string(json_object_get(p, "bin_override")))
            printf("         from %s\n", json_string_value(json_object_get(p, "bin_env")));
        size_t k;
        const json_t *v, *in = json_object_get(p, "logged_in");
        const json_t *check = json_object_get(p, "auth_check");
        int unverified = json_is_true(json_object_get(p, "key_not_verified"));
        printf("         login: %s (%s%s)\n",
               unverified          ? "key set, not verified"
               : json_is_true(in)  ? "yes"
               : json_is_false(in) ? "no"
                                   : "unknown",
               json_string_value(json_object_get(p, "login")),
               unverified && !check ? "; --check-auth tries it" : "");
        if (check)
            printf("         auth check: %s (%s; $%.4f)\n",
                   json_string_value(json_object_get(check, "result")),
                   json_string_value(json_object_get(check, "message")),
                   json_real_value(json_object_get(check, "cost_usd")));
        json_array_foreach(json_object_get(p, "auth_env"), k, v)
            printf("         auth: $%s is set\n", json_string_value(v));
        json_array_foreach(json_object_get(p, "auth_files"), k, v)
            printf("         auth: %s\n", json_string_value(v));
        print_posture(json_object_get(p, "posture"));
    }
    const json_t *git = json_object_get(doc, "git");
    if (json_is_true(json_object_get(git, "found")))
        printf("%-8s %s  %s\n", "git", json_string_value(json_object_get(git, "path")),
               json_is_string(json_object_get(git, "version"))
                   ? json_string_value(json_object_get(git, "version"))
                   : "(version unknown)");
    else
        printf("%-8s not found (file changes cannot be tracked)\n", "git");
    const json_t *pr = json_object_get(doc, "prompts");
    const char *cd = json_string_value(json_object_get(pr, "config_dir"));
    printf("%-8s %s (%s)\n", "prompts", cd ? cd : "(no HOME)",
           json_is_true(json_object_get(pr, "config_dir_exists"))
               ? "exists"
               : "absent: the built-in prompts are used");
    if (json_object_get(pr, "prompts_dir"))
        printf("         --prompts-dir %s (%s)\n",
               json_string_value(json_object_get(pr, "prompts_dir")),
               json_is_true(json_object_get(pr, "prompts_dir_exists")) ? "exists" : "missing");
    /* The verdict names each CLI: usable, or why not. */
    printf("%s:", json_is_true(json_object_get(doc, "ok")) ? "ok" : "not ok: no usable CLI");
    json_array_foreach(json_object_get(doc, "providers"), i, p)
    {
        const json_t *in = json_object_get(p, "logged_in");
        printf("%s %s %s", i ? "," : "", json_string_value(json_object_get(p, "name")),
               json_is_true(json_object_get(p, "usable"))       ? "usable"
               : !json_is_true(json_object_get(p, "found"))     ? "not found"
               : !json_is_true(json_object_get(p, "installed")) ? "does not answer --version"
               : json_is_string(json_object_get(p, "version_fit")) &&
                       !strcmp(json_string_value(json_object_get(p, "version_fit")), "unsupported")
                   ? "too old"
               : json_is_false(in)                ? "not logged in"
               : json_object_get(p, "auth_check") ? "credentials rejected"
                                                  : "?");
        if (json_is_true(json_object_get(p, "usable")) && !json_is_true(in))
            printf(" (login not confirmed)");
    }
    printf("\n");
}

static int doctor_run(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_parser ps;
    ar_cli_parser_init(&ps, cmd, argc, argv);
    const char *arg, *prompts_dir = NULL;
    int json = 0, pretty = 0, check_auth = 0, key;
    unsigned long long timeout_ms = 0;
    while ((key = ar_cli_next(&ps, &arg)) >= 0) {
        switch (key) {
        case KEY_FORMAT:
            if ((json = ar_cli_choice(cmd, KEY_FORMAT, arg)) < 0) {
                ar_cli_parser_finish(&ps);
                return AR_EXIT_USAGE;
            }
            break;
        case KEY_PROMPTS_DIR:
            prompts_dir = arg;
            break;
        case KEY_PRETTY:
            pretty = 1;
            break;
        case KEY_CHECK_AUTH:
            check_auth = 1;
            break;
        case KEY_TIMEOUT:
            if (ar_cli_parse_duration_ms(arg, &timeout_ms) < 0 || timeout_ms == 0) {
                ar_cli_parser_finish(&ps);
                return ar_cli_usage_error(cmd,
                                          "invalid --timeout '%s': want seconds (30, "
                                          "30s), 2m or 500ms",
                                          arg);
            }
            break;
        }
    }
    int status = ps.status, ind = ps.ind;
    ar_cli_parser_finish(&ps);
    if (key == -2)
        return status;
    if (ind < argc)
        return ar_cli_usage_error(cmd, "unexpected argument '%s'", argv[ind]);

    struct ar_doctor_report report;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_doctor_check(prompts_dir, &report, &err) < 0 ||
        (check_auth && ar_doctor_check_auth(&report, timeout_ms, &err) < 0)) {
        ar_doctor_report_finish(&report);
        ar_cli_errorf("%s", err.msg);
        return AR_EXIT_USAGE; /* as when the output cannot be made, below */
    }
    int usable = report.ok;
    json_t *doc = report_value(&report);
    ar_doctor_report_finish(&report);
    int rc = AR_EXIT_OK;
    if (json) {
        char *s = json_dumps(doc, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER);
        if (!s || ar_cli_write_stdout(s, strlen(s)) != 0 || ar_cli_write_stdout("\n", 1) != 0)
            rc = AR_EXIT_USAGE;
        free(s);
    } else {
        print_text(doc);
    }
    json_decref(doc);
    if (rc == AR_EXIT_OK && !usable)
        rc = AR_EXIT_PROVIDER;
    return rc;
}

const struct ar_cli_command ar_cmd_doctor = {
    .name = "doctor",
    .synopsis = "[--format text|json] [--pretty] [--prompts-dir DIR] [--check-auth [--timeout "
                "DURATION]]",
    .summary = "check which CLIs, credentials, git and prompt overrides agentrun can use",
    .description =
        "For " AR_PROVIDERS_AND ": whether the binary is found (PATH, or "
        "AGENTRUN_<NAME>_BIN) and answers --version (installed); whether it is logged "
        "in, by its own status command where it has one (claude auth status, codex "
        "login status; never a model call), else by what the environment and its "
        "files show; which credential variables or login files are present (names "
        "only, never values); and how each posture (text, read, edit) is run: the "
        "argv and environment agentrun passes. Also git and the prompt override "
        "directory. A key found in the environment is \"key set, not verified\": "
        "--check-auth tries the credentials of each usable CLI with one tiny call "
        "(the prompt 'Reply with the single word OK.', no tools, from an empty "
        "directory; the CLI's own request is a few thousand input tokens at most, "
        "a fraction of a cent) and says verified, rejected or unreachable; each "
        "call ends after --timeout (default 30 s), so a wrong key with no network "
        "cannot hang it. A CLI is usable when it is installed and nothing says it "
        "cannot log in (and, with --check-auth, its credentials were not "
        "rejected). Exits 0 when at least one CLI is usable (all are asked at once, each "
        "within 30 s), 4 otherwise.",
    .example = "agentrun doctor --format json",
    .opts = doctor_opts,
    .run = doctor_run,
    .json_schema = DOCTOR_SCHEMA,
};
