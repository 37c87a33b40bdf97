/*
 * The posture promises (DESIGN §4b) that depend on where the call runs and on the user's
 * environment: which home a CLI's settings come from, which directory codex looks its
 * trust up by, when the user's hooks and MCP servers are off, when a session may be
 * dropped. Each test builds a call through the provider's prepare() in temporary homes
 * and checkouts and reads what the CLI would be given (argv, environment, the settings
 * file of gemini's private home). The per-posture argv tables are in test_provider.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider/provider.h"

static char tmp[256]; /* this run's scratch directory */

/* ---- helpers ----------------------------------------------------------------------- */

/* tmp/rel, made with its parents. */
static void make_dir(const char *rel, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", tmp, rel);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", out);
    assert_int_equal(system(cmd), 0);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void prepare(const char *cli, const struct ar_call_spec *spec, struct ar_call_setup *s)
{
    struct ar_error err = AR_ERROR_INIT;
    ar_call_setup_init(s);
    if (ar_provider_find(cli)->prepare(spec, s, &err) != 0)
        fail_msg("%s prepare: %s", cli, err.msg);
}

static int argv_has(const struct ar_call_setup *s, const char *a)
{
    for (size_t i = 0; i < s->argv.n; i++)
        if (!strcmp(s->argv.v[i], a))
            return 1;
    return 0;
}

/* The value of a `-c` option that starts with prefix, or NULL. */
static const char *config_value(const struct ar_call_setup *s, const char *prefix)
{
    for (size_t i = 0; i + 1 < s->argv.n; i++)
        if (!strcmp(s->argv.v[i], "-c") && !strncmp(s->argv.v[i + 1], prefix, strlen(prefix)))
            return s->argv.v[i + 1];
    return NULL;
}

static const char *env_value(const struct ar_call_setup *s, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < s->env.n; i++)
        if (!strncmp(s->env.v[i], name, n) && s->env.v[i][n] == '=')
            return s->env.v[i] + n + 1;
    return NULL;
}

/* Sets name to value, or unsets it when value is NULL. */
static void set_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

/* The settings.json of gemini's private home for this call. */
static json_t *gemini_private_settings(const struct ar_call_setup *s)
{
    const char *home = env_value(s, "GEMINI_CLI_HOME");
    assert_non_null(home);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/.gemini/settings.json", home);
    json_t *v = json_load_file(path, 0, NULL);
    assert_non_null(v);
    return v;
}

/* ---- gemini ------------------------------------------------------------------------ */

/* A user whose ~/.gemini/settings.json turns hooks on, and defines one. */
static void gemini_user_with_hooks(char *home, size_t size)
{
    char dir[PATH_MAX];
    make_dir("hooks-user", home, size);
    make_dir("hooks-user/.gemini", dir, sizeof(dir));
    write_file(dir, "settings.json",
               "{\"hooksConfig\": {\"enabled\": true},\n"
               " \"hooks\": {\"BeforeAgent\": [{\"hooks\": [{\"type\": \"command\","
               " \"command\": \"touch /tmp/hooked\"}]}]}}\n");
}

/* A text call has nothing for a hook to act on: unless the project is trusted, the
 * user's hooks are off too (gemini runs the user's and the checkout's alike). With tools,
 * or trusted, the user's own hooksConfig is left as it is. */
static void test_gemini_text_posture_turns_user_hooks_off_unless_trusted(void **state)
{
    char home[PATH_MAX];
    gemini_user_with_hooks(home, sizeof(home));
    set_env("HOME", home);
    set_env("GEMINI_CLI_HOME", NULL);
    static const struct {
        enum ar_tools tools;
        int trust;
        int hooks_on;
    } cases[] = {
        { AR_TOOLS_NONE, 0, 0 }, { AR_TOOLS_NONE, 1, 1 }, { AR_TOOLS_READ, 0, 1 },
        { AR_TOOLS_READ, 1, 1 }, { AR_TOOLS_EDIT, 0, 1 }, { AR_TOOLS_EDIT, 1, 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_call_spec spec = { 0 };
        spec.tools = cases[i].tools;
        spec.allow_edits = cases[i].tools == AR_TOOLS_EDIT;
        spec.trust_project = cases[i].trust;
        spec.cwd = tmp;
        struct ar_call_setup s;
        prepare("gemini", &spec, &s);
        json_t *set = gemini_private_settings(&s);
        json_t *enabled = json_object_get(json_object_get(set, "hooksConfig"), "enabled");
        print_message("tools %d trust %d: hooksConfig.enabled %s\n", cases[i].tools, cases[i].trust,
                      json_is_true(enabled) ? "true" : "false");
        assert_true(json_is_boolean(enabled));
        assert_int_equal(json_is_true(enabled), cases[i].hooks_on);
        /* The user's hook definitions are kept: only the switch says whether they run. */
        assert_non_null(json_object_get(set, "hooks"));
        json_decref(set);
        ar_call_setup_finish(&s);
    }
}

/* gemini reads its settings and credentials from $GEMINI_CLI_HOME/.gemini when set, else
 * from $HOME/.gemini: the private home is made from the same one. */
static void test_gemini_private_home_is_made_from_gemini_cli_home_before_home(void **state)
{
    char home[PATH_MAX], cli_home[PATH_MAX], dir[PATH_MAX];
    make_dir("plain-home/.gemini", dir, sizeof(dir));
    write_file(dir, "settings.json", "{\"security\": {\"auth\": {\"selectedType\": \"home\"}}}");
    write_file(dir, "oauth_creds.json", "{\"from\": \"home\"}");
    make_dir("plain-home", home, sizeof(home));
    make_dir("cli-home/.gemini", dir, sizeof(dir));
    write_file(dir, "settings.json",
               "{\"security\": {\"auth\": {\"selectedType\": \"cli-home\"}}}");
    write_file(dir, "oauth_creds.json", "{\"from\": \"cli-home\"}");
    make_dir("cli-home", cli_home, sizeof(cli_home));
    static const struct {
        int set_cli_home; /* 1: GEMINI_CLI_HOME is the cli-home, 2: set but empty */
        const char *from;
    } cases[] = { { 1, "cli-home" }, { 0, "home" }, { 2, "home" } };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        set_env("HOME", home);
        set_env("GEMINI_CLI_HOME", cases[i].set_cli_home == 1   ? cli_home
                                   : cases[i].set_cli_home == 2 ? ""
                                                                : NULL);
        struct ar_call_spec spec = { 0 };
        spec.tools = AR_TOOLS_READ;
        spec.cwd = tmp;
        struct ar_call_setup s;
        prepare("gemini", &spec, &s);
        json_t *set = gemini_private_settings(&s);
        const char *auth = json_string_value(json_object_get(
            json_object_get(json_object_get(set, "security"), "auth"), "selectedType"));
        print_message("GEMINI_CLI_HOME case %d: settings of %s\n", cases[i].set_cli_home, auth);
        assert_non_null(auth);
        assert_string_equal(auth, cases[i].from);
        json_decref(set);
        /* The credentials are the same home's, linked. */
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/.gemini/oauth_creds.json",
                 env_value(&s, "GEMINI_CLI_HOME"));
        json_t *creds = json_load_file(path, 0, NULL);
        assert_non_null(creds);
        assert_string_equal(json_string_value(json_object_get(creds, "from")), cases[i].from);
        json_decref(creds);
        ar_call_setup_finish(&s);
    }
    set_env("GEMINI_CLI_HOME", NULL);
}

/* ---- codex ------------------------------------------------------------------------- */

/*
 * codex looks a project's trust up by its repository's top directory, whatever
 * subdirectory it runs in: the per-call override names the top as well as the cwd, so
 * a repository the user once trusted is untrusted here from any of its subdirectories.
 */
static void test_codex_trust_names_the_repository_top_from_a_subdirectory(void **state)
{
    char top[PATH_MAX], dir[PATH_MAX], real_top[PATH_MAX];
    make_dir("repo/.git", dir, sizeof(dir));
    make_dir("repo/src/deep", dir, sizeof(dir));
    make_dir("repo", top, sizeof(top));
    assert_non_null(realpath(top, real_top));
    static const struct {
        const char *cwd; /* under tmp */
        int names_top;   /* the repository's top is named besides the cwd */
    } cases[] = { { "repo/src/deep", 1 }, { "repo/src", 1 }, { "repo", 0 } };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int trust = 0; trust < 2; trust++) {
            char cwd[PATH_MAX], real_cwd[PATH_MAX];
            snprintf(cwd, sizeof(cwd), "%s/%s", tmp, cases[i].cwd);
            assert_non_null(realpath(cwd, real_cwd));
            struct ar_call_spec spec = { 0 };
            spec.tools = AR_TOOLS_READ;
            spec.cwd = cwd;
            spec.trust_project = trust;
            spec.in_git_repo = 1;
            struct ar_call_setup s;
            prepare("codex", &spec, &s);
            const char *level = trust ? "{trust_level=\"trusted\"}" : "{trust_level=\"untrusted\"}";
            char want[3 * PATH_MAX];
            if (cases[i].names_top)
                snprintf(want, sizeof(want), "projects={\"%s\"=%s,\"%s\"=%s}", real_cwd, level,
                         real_top, level);
            else
                snprintf(want, sizeof(want), "projects={\"%s\"=%s}", real_cwd, level);
            const char *got = config_value(&s, "projects=");
            print_message("cwd %s: %s\n", cases[i].cwd, got ? got : "(none)");
            assert_non_null(got);
            assert_string_equal(got, want);
            /* Both paths are this machine's: a recorded call matches elsewhere. */
            assert_int_equal(s.local_paths.n, cases[i].names_top ? 2 : 1);
            ar_call_setup_finish(&s);
        }
    }
}

/*
 * A text call turns off every MCP server of the user's config.toml, read from
 * $CODEX_HOME, or from ~/.codex when CODEX_HOME is unset or empty (codex's own rule),
 * never from a config.toml lying in $HOME itself.
 */
static void test_codex_text_posture_turns_off_the_mcp_servers_of_the_users_codex_home(void **state)
{
    char home[PATH_MAX], dot_codex[PATH_MAX], codex_home[PATH_MAX];
    make_dir("codex-user", home, sizeof(home));
    make_dir("codex-user/.codex", dot_codex, sizeof(dot_codex));
    make_dir("codex-elsewhere", codex_home, sizeof(codex_home));
    write_file(dot_codex, "config.toml", "[mcp_servers.in_dot_codex]\ncommand = \"x\"\n");
    write_file(home, "config.toml", "[mcp_servers.in_home]\ncommand = \"x\"\n");
    write_file(codex_home, "config.toml", "[mcp_servers.in_codex_home]\ncommand = \"x\"\n");
    static const struct {
        int codex_home; /* 1: CODEX_HOME is codex-elsewhere, 2: set but empty, 0: unset */
        const char *server;
    } cases[] = { { 0, "in_dot_codex" }, { 2, "in_dot_codex" }, { 1, "in_codex_home" } };
    static const char *const servers[] = { "in_dot_codex", "in_home", "in_codex_home" };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        set_env("HOME", home);
        set_env("CODEX_HOME", cases[i].codex_home == 1   ? codex_home
                              : cases[i].codex_home == 2 ? ""
                                                         : NULL);
        for (int trust = 0; trust < 2; trust++) {
            struct ar_call_spec spec = { 0 };
            spec.tools = AR_TOOLS_NONE;
            spec.trust_project = trust;
            spec.cwd = tmp;
            struct ar_call_setup s;
            prepare("codex", &spec, &s);
            for (size_t k = 0; k < sizeof(servers) / sizeof(servers[0]); k++) {
                char off[128];
                snprintf(off, sizeof(off), "mcp_servers.%s.enabled=false", servers[k]);
                int want = !trust && !strcmp(servers[k], cases[i].server);
                if ((config_value(&s, off) != NULL) != want)
                    fail_msg("CODEX_HOME case %d, trust %d: %s %s", cases[i].codex_home, trust, off,
                             want ? "missing" : "unexpected");
            }
            ar_call_setup_finish(&s);
        }
    }
    set_env("CODEX_HOME", NULL);
}

/* A call that resumes a session is never told to drop it, whatever no_session says: a
 * session the caller continues must keep the new turn. */
static void test_a_resumed_call_never_drops_its_session(void **state)
{
    static const struct {
        const char *cli, *drop; /* the option that drops the session */
    } clis[] = { { "claude", "--no-session-persistence" }, { "codex", "--ephemeral" } };
    for (size_t c = 0; c < sizeof(clis) / sizeof(clis[0]); c++) {
        for (int no_session = 0; no_session < 2; no_session++) {
            for (int resume = 0; resume < 2; resume++) {
                struct ar_call_spec spec = { 0 };
                spec.tools = AR_TOOLS_NONE;
                spec.no_session = no_session;
                spec.resume = resume ? "019a0000-0000-7000-8000-000000000001" : NULL;
                spec.cwd = tmp;
                struct ar_call_setup s;
                prepare(clis[c].cli, &spec, &s);
                if (argv_has(&s, clis[c].drop) != (no_session && !resume))
                    fail_msg("%s, no_session %d, resume %d: %s %s", clis[c].cli, no_session, resume,
                             clis[c].drop, argv_has(&s, clis[c].drop) ? "given" : "missing");
                ar_call_setup_finish(&s);
            }
        }
    }
}

/* ---- setup ------------------------------------------------------------------------- */

static char *saved_home;

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmp, sizeof(tmp), "%s/agentrun-posture-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp))
        return -1;
    saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    unsetenv("CODEX_HOME");
    unsetenv("GEMINI_CLI_HOME");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    set_env("HOME", saved_home);
    free(saved_home);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemini_text_posture_turns_user_hooks_off_unless_trusted),
        cmocka_unit_test(test_gemini_private_home_is_made_from_gemini_cli_home_before_home),
        cmocka_unit_test(test_codex_trust_names_the_repository_top_from_a_subdirectory),
        cmocka_unit_test(test_codex_text_posture_turns_off_the_mcp_servers_of_the_users_codex_home),
        cmocka_unit_test(test_a_resumed_call_never_drops_its_session),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
