/*
 * Whether gemini can authenticate. gemini 0.61.0 has no status command, so this follows
 * what its headless start does before any request (validateNonInteractiveAuth): the auth
 * method is security.auth.selectedType of the user's settings.json, else the first of
 * GOOGLE_GENAI_USE_GCA=true (Google login), GOOGLE_GENAI_USE_VERTEXAI=true (Vertex AI),
 * GOOGLE_GEMINI_BASE_URL (gateway, refused headless), GEMINI_API_KEY (API key),
 * CLOUD_SHELL=true or GEMINI_CLI_USE_COMPUTE_ADC=true; no method, or a method without
 * what it needs, ends gemini at once with exit status 41 (FATAL_AUTHENTICATION_ERROR).
 * An API key may also come from a .env file or gemini's own key store
 * (~/.gemini/gemini-credentials.json, or the system keychain, which cannot be seen).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/common.h"
#include "provider/gemini.h"
#include "util/file.h"

static int set_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

static int env_is_true(const char *name)
{
    const char *v = getenv(name);
    return v && !strcmp(v, "true");
}

/* The auth method gemini would pick, and from where (static storage), or NULL. */
static const char *auth_method(const json_t *settings, const char **from)
{
    const char *t =
        ar_pv_str(json_object_get(json_object_get(settings, "security"), "auth"), "selectedType");
    if (!t)
        t = ar_pv_str(settings, "selectedAuthType"); /* the settings' older layout */
    *from = "settings.json";
    if (t && *t)
        return t;
    static const struct {
        const char *var, *method;
        int boolean;
    } env[] = {
        { "GOOGLE_GENAI_USE_GCA", "oauth-personal", 1 },
        { "GOOGLE_GENAI_USE_VERTEXAI", "vertex-ai", 1 },
        { "GOOGLE_GEMINI_BASE_URL", "gateway", 0 },
        { "GEMINI_API_KEY", "gemini-api-key", 0 },
        { "CLOUD_SHELL", "compute-default-credentials", 1 },
        { "GEMINI_CLI_USE_COMPUTE_ADC", "compute-default-credentials", 1 },
    };
    for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
        if (env[i].boolean ? env_is_true(env[i].var) : set_env(env[i].var)) {
            *from = env[i].var;
            return env[i].method;
        }
    return NULL;
}

/* Whether user_dir holds `name`. */
static int has_file(const char *user_dir, const char *name)
{
    char *path = NULL;
    int yes = asprintf(&path, "%s/%s", user_dir, name) >= 0 && ar_is_file(path);
    free(path);
    return yes;
}

/* The .env file gemini would load (its findEnvFile: .gemini/.env, then .env, in the
 * current directory and each one above it, then in the home directory), or NULL.
 * Caller free()s. Its variables may hold what the environment lacks. */
static char *env_file(void)
{
    char *dir = getcwd(NULL, 0);
    const char *home = getenv("HOME");
    for (int at_home = 0; at_home < 2; at_home++) {
        if (at_home) {
            free(dir);
            dir = home && *home ? strdup(home) : NULL;
        }
        while (dir) {
            static const char *const names[] = { ".gemini/.env", ".env" };
            for (size_t i = 0; i < 2; i++) {
                char *path = NULL;
                if (asprintf(&path, "%s/%s", strcmp(dir, "/") ? dir : "", names[i]) >= 0 &&
                    ar_is_file(path)) {
                    free(dir);
                    return path;
                }
                free(path);
            }
            char *slash = strrchr(dir, '/');
            if (at_home || !slash || slash == dir)
                break;
            *slash = '\0';
        }
    }
    free(dir);
    return NULL;
}

/* What gemini would refuse for want of a variable (m, from): no, unless a .env file
 * may set it. */
static void missing(struct ar_login_state *out, const char *what)
{
    char *env = env_file();
    if (env)
        ar_login_set(out, AR_LOGIN_UNKNOWN, "%s, unless %s sets it", what, env);
    else
        ar_login_set(out, AR_LOGIN_NO, "%s", what);
    free(env);
}

static void check(const char *user_dir, const json_t *settings, struct ar_login_state *out)
{
    const char *from, *m = auth_method(settings, &from);
    char what[300];
    if (!m) {
        snprintf(what, sizeof(what),
                 "no auth method: set GEMINI_API_KEY, or log in once with 'gemini' "
                 "(security.auth.selectedType in %s/settings.json)",
                 user_dir);
        missing(out, what);
    } else if (!strcmp(m, "gemini-api-key")) {
        /* gemini also reads a key it stored itself (a file, or the system keychain). */
        if (set_env("GEMINI_API_KEY"))
            ar_login_set_key(out, "$GEMINI_API_KEY is set");
        else
            ar_login_set(out, AR_LOGIN_UNKNOWN,
                         "GEMINI_API_KEY is not set (auth method gemini-api-key, from %s); "
                         "gemini may have the key stored (%s/gemini-credentials.json or the "
                         "system keychain)%s",
                         from, user_dir,
                         has_file(user_dir, "gemini-credentials.json") ? ": the file exists" : "");
    } else if (!strcmp(m, "vertex-ai")) {
        if (set_env("GOOGLE_API_KEY") ||
            (set_env("GOOGLE_CLOUD_PROJECT") && set_env("GOOGLE_CLOUD_LOCATION")))
            ar_login_set_key(out, "Vertex AI (%s)",
                             set_env("GOOGLE_API_KEY") ? "$GOOGLE_API_KEY"
                                                       : "$GOOGLE_CLOUD_PROJECT");
        else
            missing(out, "Vertex AI needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or "
                         "GOOGLE_API_KEY");
    } else if (!strcmp(m, "oauth-personal")) {
        /* Since 2026-06 gemini serves a Google login only with a Code Assist licence (whose
         * project GOOGLE_CLOUD_PROJECT names); a personal account's first request fails with
         * IneligibleTierError. The login file cannot say which of the two it is. */
        int project = set_env("GOOGLE_CLOUD_PROJECT") || set_env("GOOGLE_CLOUD_PROJECT_ID");
        if (has_file(user_dir, "oauth_creds.json") && project)
            ar_login_set(out, AR_LOGIN_YES,
                         "Google login (%s/oauth_creds.json) with a Code "
                         "Assist project ($GOOGLE_CLOUD_PROJECT)",
                         user_dir);
        else if (has_file(user_dir, "oauth_creds.json"))
            ar_login_set(out, AR_LOGIN_UNKNOWN,
                         "Google login (%s/oauth_creds.json): since 2026-06 gemini serves it "
                         "only with a Code Assist licence (set GOOGLE_CLOUD_PROJECT to its "
                         "project); a personal account fails with IneligibleTierError: set "
                         "GEMINI_API_KEY or use Vertex AI",
                         user_dir);
        else
            ar_login_set(out, AR_LOGIN_UNKNOWN,
                         "Google login, but no %s/oauth_creds.json (the system keychain may "
                         "hold it; else run 'gemini' and log in)",
                         user_dir);
    } else if (!strcmp(m, "compute-default-credentials")) {
        ar_login_set(out, AR_LOGIN_YES, "compute default credentials (%s)", from);
    } else if (!strcmp(m, "gateway")) {
        ar_login_set(out, AR_LOGIN_NO,
                     "GOOGLE_GEMINI_BASE_URL selects the gateway method, which gemini refuses "
                     "headless: set security.auth.selectedType in %s/settings.json",
                     user_dir);
    } else {
        ar_login_set(out, AR_LOGIN_UNKNOWN, "auth method '%s' (from %s)", m, from);
    }
}

void ar_gemini_login(const struct ar_login_probe *probe, struct ar_login_state *out)
{
    (void)probe; /* gemini has no status command */
    char *user_dir = ar_gemini_user_dir();
    json_t *settings = user_dir ? ar_gemini_user_settings(user_dir) : NULL;
    if (user_dir)
        check(user_dir, settings, out);
    else
        ar_login_set(out, AR_LOGIN_UNKNOWN, "out of memory");
    json_decref(settings);
    free(user_dir);
}
