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
#include "util/file.h"
#include "util/strv.h"

#define VERSION_TIMEOUT_MS 20000

enum { KEY_FORMAT = 512, KEY_PROMPTS_DIR, KEY_PRETTY };

static const struct ar_cli_opt doctor_opts[] = {
    { "format", KEY_FORMAT, "FORMAT", "text or json (default: text)", "text|json" },
    { "prompts-dir", KEY_PROMPTS_DIR, "DIR", "also check this prompt override directory", "@dir" },
    { "pretty", KEY_PRETTY, NULL, "indent the JSON (default: one line)", NULL },
    { NULL, 0, NULL, NULL, NULL },
};

/* The first non-empty line of `<path> --version` (stdout, else stderr), or NULL with *why set. */
static char *run_version(const char *path, const char **why)
{
    const char *argv[] = { path, "--version", NULL };
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    o.argv = argv;
    o.timeout_ms = VERSION_TIMEOUT_MS;
    o.capture_stdout = 1;
    o.output_cap = 1 << 20;
    struct ar_child_sync s;
    struct ar_error err = AR_ERROR_INIT;
    *why = NULL;
    if (ar_child_run_sync(&o, &s, &err) != 0) {
        ar_child_sync_finish(&s);
        *why = "cannot run it";
        return NULL;
    }
    char *version = NULL;
    if (s.res.end == AR_CHILD_TIMEOUT) {
        *why = "--version timed out";
    } else if (s.res.status != 0) {
        *why = "--version failed";
    } else {
        const char *texts[] = { s.stdout_data, s.stderr_tail };
        for (size_t t = 0; t < 2 && !version; t++) {
            const char *p = texts[t];
            while (p && *p) {
                size_t n = strcspn(p, "\r\n");
                while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                    n--;
                size_t skip = strspn(p, " \t");
                if (n > skip) {
                    version = strndup(p + skip, n - skip > 200 ? 200 : n - skip);
                    break;
                }
                p += strcspn(p, "\n");
                if (*p)
                    p++;
            }
        }
        if (!version)
            *why = "--version printed nothing";
    }
    ar_child_sync_finish(&s);
    return version;
}

static json_t *check_provider(const struct ar_provider *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    const char *over = getenv(p->bin_env);
    json_object_set_new(o, "bin_env", json_string(p->bin_env));
    json_object_set_new(o, "bin_override", over && *over ? json_string(over) : json_null());
    char *path = ar_provider_which(p);
    json_object_set_new(o, "found", json_boolean(path != NULL));
    json_object_set_new(o, "path", path ? json_string(path) : json_null());
    json_object_set_new(o, "install_hint", json_string(p->install_hint));
    json_t *version = json_null();
    if (path) {
        const char *why = NULL;
        char *v = run_version(path, &why);
        if (v)
            version = json_string(v);
        else
            json_object_set_new(o, "version_error", json_string(why));
        free(v);
    }
    json_object_set_new(o, "version", version);

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
    json_object_set_new(o, "usable", json_boolean(path != NULL));
    free(path);
    return o;
}

static json_t *check_git(void)
{
    json_t *o = json_object();
    char *path = ar_path_search("git");
    json_object_set_new(o, "found", json_boolean(path != NULL));
    json_object_set_new(o, "path", path ? json_string(path) : json_null());
    json_t *version = json_null();
    if (path) {
        const char *why = NULL;
        char *v = run_version(path, &why);
        if (v)
            version = json_string(v);
        free(v);
    }
    json_object_set_new(o, "version", version);
    free(path);
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
    printf("%s\n", json_is_true(json_object_get(doc, "ok")) ? "ok: at least one CLI is usable"
                                                            : "not ok: no CLI found");
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

    json_t *doc = json_object();
    json_t *providers = json_array();
    int usable = 0;
    for (const struct ar_provider *const *p = ar_providers(); *p; p++) {
        json_t *o = check_provider(*p);
        usable |= json_is_true(json_object_get(o, "usable"));
        json_array_append_new(providers, o);
    }
    json_object_set_new(doc, "schema", json_string("agentrun.doctor/1"));
    json_object_set_new(doc, "ok", json_boolean(usable));
    json_object_set_new(doc, "providers", providers);
    json_object_set_new(doc, "git", check_git());
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
                   "login files are present (names only, never values). Also git and the "
                   "prompt override directory. Exits 0 when at least one CLI is usable, 4 "
                   "otherwise; missing credentials are a warning, not a failure.",
    .example = "agentrun doctor --format json",
    .opts = doctor_opts,
    .run = doctor_run,
};
