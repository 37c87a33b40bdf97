/*
 * agentrun doctor: which CLIs are found and usable, their versions, which
 * credentials are present (names only, never values), git, and where prompt
 * overrides are looked for.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "proc/proc.h"
#include "provider/provider.h"
#include "run/run.h"
#include "util/file.h"
#include "util/strv.h"

#define VERSION_TIMEOUT_MS 10000

enum { KEY_FORMAT = 512, KEY_PROMPTS_DIR, KEY_PRETTY };

static const struct ar_cli_opt doctor_opts[] = {
    { "format", KEY_FORMAT, "FORMAT", "text or json (default: text)", "text|json" },
    { "prompts-dir", KEY_PROMPTS_DIR, "DIR", "also check this prompt override directory", "@dir" },
    { "pretty", KEY_PRETTY, NULL, "indent the JSON (default: one line)", NULL },
    { NULL, 0, NULL, NULL, NULL },
};

/*
 * One `<path> --version` probe. All of them run at once on one loop: a CLI
 * that hangs costs VERSION_TIMEOUT_MS once, not once per CLI.
 */
struct probe {
    char *path;      /* owned, or NULL: not found, nothing to run */
    char *version;   /* owned: the first non-empty line of stdout, else stderr */
    const char *why; /* static: why there is no version */
};

/* The first non-empty line of s[0..n), at most 200 bytes, or NULL. */
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
            return strndup(b, (size_t)(t - b) > 200 ? 200 : (size_t)(t - b));
        s = nl ? nl + 1 : end;
    }
    return NULL;
}

static void on_version_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct probe *pr = arg;
    if (res->end == AR_CHILD_TIMEOUT) {
        pr->why = "--version timed out";
    } else if (res->status != 0) {
        pr->why = "--version failed";
    } else {
        pr->version = first_line(res->stdout_data, res->stdout_len);
        if (!pr->version)
            pr->version = first_line(res->stderr_tail, res->stderr_tail_len);
        if (!pr->version)
            pr->why = "--version printed nothing";
    }
}

static void probe_start(struct ar_loop *loop, struct probe *pr)
{
    if (!pr->path)
        return;
    const char *argv[] = { pr->path, "--version", NULL };
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = argv;
    o.timeout_ms = VERSION_TIMEOUT_MS;
    o.kill_grace_ms = 1000;
    o.capture_stdout = 1;
    o.output_cap = 1 << 20;
    o.on_done = on_version_done;
    o.arg = pr;
    struct ar_error err = AR_ERROR_INIT;
    if (!loop || ar_child_spawn(loop, &o, NULL, &err) != 0)
        pr->why = "cannot run it";
}

static void probe_finish(struct probe *pr)
{
    free(pr->path);
    free(pr->version);
}

/* One posture's argv (the binary left out, long values cut) and environment names. */
static json_t *posture_value(const struct ar_provider *p, enum ar_tools tools, int trust)
{
    struct ar_call_spec spec = { 0 };
    spec.tools = tools;
    spec.allow_edits = tools == AR_TOOLS_EDIT;
    spec.trust_project = trust;
    spec.no_session = tools == AR_TOOLS_NONE;
    spec.in_git_repo = 1;
    struct ar_call_setup setup;
    struct ar_error err = AR_ERROR_INIT;
    ar_call_setup_init(&setup);
    json_t *o = json_object();
    if (p->prepare(&spec, &setup, &err) < 0) {
        json_object_set_new(o, "error", json_string(err.msg));
    } else {
        json_t *argv = json_array(), *env = json_array();
        for (size_t i = 1; i < setup.argv.n; i++) {
            const char *a = setup.argv.v[i];
            /* A system prompt or a path in a temporary directory says nothing useful here. */
            json_array_append_new(argv,
                                  strlen(a) > 48 ? json_sprintf("%.40s…", a) : json_string(a));
        }
        for (size_t i = 0; i < setup.env.n; i++)
            json_array_append_new(env, json_stringn(setup.env.v[i], strcspn(setup.env.v[i], "=")));
        json_object_set_new(o, "argv", argv);
        json_object_set_new(o, "env", env);
        json_object_set_new(o, "project_config", json_boolean(setup.project_config));
        json_object_set_new(o, "context_files", json_boolean(setup.context_files));
    }
    ar_call_setup_finish(&setup);
    return o;
}

static json_t *postures_value(const struct ar_provider *p, int trust)
{
    static const char *const names[] = { NULL, "text", "read", "edit" };
    json_t *o = json_object();
    json_object_set_new(o, "how", json_string(p->posture_note));
    json_object_set_new(o, "trust_project", json_boolean(trust));
    for (int t = AR_TOOLS_NONE; t <= AR_TOOLS_EDIT; t++)
        json_object_set_new(o, names[t], posture_value(p, (enum ar_tools)t, trust));
    return o;
}

static json_t *check_provider(const struct ar_provider *p, const struct probe *pr)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    const char *over = getenv(p->bin_env);
    json_object_set_new(o, "bin_env", json_string(p->bin_env));
    json_object_set_new(o, "bin_override", over && *over ? json_string(over) : json_null());
    json_object_set_new(o, "found", json_boolean(pr->path != NULL));
    json_object_set_new(o, "path",
                        pr->path ? ar_json_text(pr->path, strlen(pr->path)) : json_null());
    json_object_set_new(o, "install_hint", json_string(p->install_hint));
    json_object_set_new(o, "version",
                        pr->version ? ar_json_text(pr->version, strlen(pr->version)) : json_null());
    if (pr->path && !pr->version)
        json_object_set_new(o, "version_error", json_string(pr->why ? pr->why : "no answer"));

    /* Names of the credentials that are present; their values are never read out. */
    json_t *env = json_array(), *files = json_array();
    for (size_t i = 0; p->auth_env && p->auth_env[i]; i++) {
        const char *v = getenv(p->auth_env[i]);
        if (v && *v)
            json_array_append_new(env, json_string(p->auth_env[i]));
    }
    char *f;
    for (size_t i = 0; (f = ar_provider_auth_file(p, i)) != NULL; i++) {
        if (ar_is_file(f))
            json_array_append_new(files, json_string(f));
        free(f);
    }
    int auth_known = json_array_size(env) + json_array_size(files) > 0;
    json_object_set_new(o, "auth_env", env);
    json_object_set_new(o, "auth_files", files);
    json_object_set_new(o, "auth_found", json_boolean(auth_known));
    /* A binary that does not even answer --version (it hangs, fails or is
     * broken) will not answer a prompt either. */
    json_object_set_new(o, "usable", json_boolean(pr->path && pr->version));
    const char *trust = getenv("AGENTRUN_TRUST_PROJECT");
    if (pr->path)
        json_object_set_new(o, "posture", postures_value(p, trust && !strcmp(trust, "1")));
    return o;
}

static json_t *check_git(const struct probe *pr)
{
    json_t *o = json_object();
    json_object_set_new(o, "found", json_boolean(pr->path != NULL));
    json_object_set_new(o, "path",
                        pr->path ? ar_json_text(pr->path, strlen(pr->path)) : json_null());
    json_object_set_new(o, "version",
                        pr->version ? ar_json_text(pr->version, strlen(pr->version)) : json_null());
    return o;
}

static json_t *check_prompts(const char *dir_opt)
{
    json_t *o = json_object();
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    char *dir = NULL;
    /* The XDG spec says a relative XDG_CONFIG_HOME is invalid and ignored. */
    if (xdg && xdg[0] == '/') {
        if (asprintf(&dir, "%s/agentrun/prompts", xdg) < 0)
            dir = NULL;
    } else if (home && *home) {
        if (asprintf(&dir, "%s/.config/agentrun/prompts", home) < 0)
            dir = NULL;
    }
    json_object_set_new(o, "config_dir", dir ? json_string(dir) : json_null());
    json_object_set_new(o, "config_dir_exists", json_boolean(dir && ar_is_dir(dir)));
    if (dir_opt) {
        json_object_set_new(o, "prompts_dir", json_string(dir_opt));
        json_object_set_new(o, "prompts_dir_exists", json_boolean(ar_is_dir(dir_opt)));
    }
    free(dir);
    return o;
}

static void print_posture(const json_t *pos)
{
    printf("         posture: %s\n", json_string_value(json_object_get(pos, "how")));
    if (json_is_true(json_object_get(pos, "trust_project")))
        printf("         posture: AGENTRUN_TRUST_PROJECT=1: the checkout's settings, hooks, MCP "
               "servers and context files load\n");
    static const char *const names[] = { "text", "read", "edit" };
    for (size_t n = 0; n < 3; n++) {
        const json_t *o = json_object_get(pos, names[n]);
        printf("         %s:", names[n]);
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
        if (json_is_string(json_object_get(p, "bin_override")))
            printf("         from %s\n", json_string_value(json_object_get(p, "bin_env")));
        size_t k;
        const json_t *v;
        if (!json_is_true(json_object_get(p, "auth_found")))
            printf("         auth: no credential variable or login file found "
                   "(the CLI may still have its own)\n");
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
    printf("%s\n", json_is_true(json_object_get(doc, "ok"))
                       ? "ok: at least one CLI is usable"
                       : "not ok: no usable CLI (none found, or none answered --version)");
}

static int doctor_run(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_parser ps;
    ar_cli_parser_init(&ps, cmd, argc, argv);
    const char *arg, *prompts_dir = NULL;
    int json = 0, pretty = 0, key;
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
        }
    }
    int status = ps.status, ind = ps.ind;
    ar_cli_parser_finish(&ps);
    if (key == -2)
        return status;
    if (ind < argc)
        return ar_cli_usage_error(cmd, "unexpected argument '%s'", argv[ind]);

    /* Every --version at once: the providers', then git's (the last probe). */
    struct probe probes[8];
    size_t n = 0;
    memset(probes, 0, sizeof(probes));
    for (const struct ar_provider *const *p = ar_providers(); *p && n + 1 < 8; p++)
        probes[n++].path = ar_provider_which(*p);
    probes[n++].path = ar_path_search("git");
    struct ar_error err = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&err);
    for (size_t i = 0; i < n; i++)
        probe_start(loop, &probes[i]);
    if (loop) {
        ar_loop_run(loop);
        ar_loop_destroy(loop);
    }

    json_t *doc = json_object();
    json_t *providers = json_array();
    int usable = 0;
    size_t i = 0;
    for (const struct ar_provider *const *p = ar_providers(); *p && i + 1 < n; p++, i++) {
        json_t *o = check_provider(*p, &probes[i]);
        usable |= json_is_true(json_object_get(o, "usable"));
        json_array_append_new(providers, o);
    }
    json_object_set_new(doc, "schema", json_string("agentrun.doctor/1"));
    json_object_set_new(doc, "ok", json_boolean(usable));
    json_object_set_new(doc, "providers", providers);
    json_object_set_new(doc, "git", check_git(&probes[n - 1]));
    for (size_t k = 0; k < n; k++)
        probe_finish(&probes[k]);
    json_object_set_new(doc, "prompts", check_prompts(prompts_dir));
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
    .synopsis = "[--format text|json] [--pretty] [--prompts-dir DIR]",
    .summary = "check which CLIs, credentials, git and prompt overrides agentrun can use",
    .description = "For claude, codex and gemini: whether the binary is found (PATH, or "
                   "AGENTRUN_<NAME>_BIN), its --version, and which credential variables or "
                   "login files are present (names only, never values), and how each posture "
                   "(text, read, edit) is run: the argv and environment agentrun passes. Also "
                   "git and the prompt override directory. Exits 0 when at least one CLI is usable "
                   "(found, and "
                   "its --version answered within 10 s; all are asked at once), 4 otherwise; "
                   "missing credentials are a warning, not a failure.",
    .example = "agentrun doctor --format json",
    .opts = doctor_opts,
    .run = doctor_run,
};
