/*
 * gemini's posture levers (DESIGN §4b), measured against gemini 0.61.0 with a hostile
 * checkout (docs/providers.md#posture).
 *
 * A trusted workspace's .gemini/settings.json overrides the user's settings and can run
 * code by itself (mcpServers, hooks, tools.discoveryCommand, …); no flag overrides all of
 * that. An untrusted one (GEMINI_CLI_TRUST_WORKSPACE=false) loads no workspace settings,
 * no GEMINI.md of the checkout, no hooks and no stdio MCP server — the user's own
 * included: gemini treats them all alike. Headless, an untrusted folder is fatal unless
 * security.folderTrust.enabled is false in the user's settings (the system settings file
 * must be owned by root, so it is no way out). So each call gets a private home
 * (GEMINI_CLI_HOME) whose .gemini/settings.json is the user's with agentrun's overlay
 * (folder trust off, the posture's tools in tools.core), and whose other entries are
 * symbolic links to the user's ~/.gemini (credentials, sessions, extensions; GEMINI.md
 * except in text calls). A text call also replaces the system prompt (GEMINI_SYSTEM_MD).
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json/repair.h"
#include "provider/common.h"
#include "provider/gemini.h"
#include "provider/provider.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/temp.h"

/* Replaces gemini's ≈ 32 KB system instruction in text calls. */
static const char gemini_text_prompt[] =
    "You are a language model called by agentrun, a command-line program. You have no tools: "
    "everything you need is in the user's message. Answer it directly, in the form it asks "
    "for.\n";

static const char *const gemini_read_tools[] = { "read_file",   "list_directory",  "glob",
                                                 "grep_search", "read_many_files", NULL };
static const char *const gemini_edit_tools[] = { "write_file", "replace", NULL };

char *ar_gemini_user_dir(void)
{
    const char *home = getenv("GEMINI_CLI_HOME");
    if (!home || !*home)
        home = getenv("HOME");
    char *dir = NULL;
    return asprintf(&dir, "%s/.gemini", home && *home ? home : "/nonexistent") < 0 ? NULL : dir;
}

json_t *ar_gemini_user_settings(const char *user_dir)
{
    char *path = NULL;
    if (asprintf(&path, "%s/settings.json", user_dir) < 0)
        return json_object();
    struct ar_buf b, fixed;
    ar_buf_init(&b, (size_t)4 << 20);
    ar_buf_init(&fixed, (size_t)8 << 20);
    json_t *v = NULL;
    if (ar_file_read_own(path, &b, NULL) == 0 && b.len) {
        v = json_loadb(b.data, b.len, 0, NULL);
        if (!v && ar_json_repair(b.data, b.len, &fixed, NULL, NULL) == 0)
            v = json_loadb(fixed.data ? fixed.data : "", fixed.len, 0, NULL);
    }
    ar_buf_finish(&b);
    ar_buf_finish(&fixed);
    free(path);
    if (!json_is_object(v)) {
        json_decref(v);
        v = json_object();
    }
    return v;
}

/* o[key] as an object, created (or replaced when not an object). Borrowed. */
static json_t *child(json_t *o, const char *key)
{
    json_t *c = json_object_get(o, key);
    if (!json_is_object(c)) {
        c = json_object();
        json_object_set_new(o, key, c);
    }
    return c;
}

json_t *ar_gemini_settings(json_t *user, enum ar_tools tools, int trust_project)
{
    json_t *s = json_deep_copy(user);
    if (!s)
        return NULL;
    /* Untrusted (by agentrun's word, in the environment) without being fatal. */
    json_object_set_new(child(child(s, "security"), "folderTrust"), "enabled", json_false());
    json_t *core = json_array();
    if (tools != AR_TOOLS_NONE)
        for (size_t i = 0; gemini_read_tools[i]; i++)
            json_array_append_new(core, json_string(gemini_read_tools[i]));
    if (tools == AR_TOOLS_EDIT)
        for (size_t i = 0; gemini_edit_tools[i]; i++)
            json_array_append_new(core, json_string(gemini_edit_tools[i]));
    json_object_set_new(child(s, "tools"), "core", core);
    if (tools == AR_TOOLS_NONE && !trust_project)
        json_object_set_new(child(s, "hooksConfig"), "enabled", json_false());
    return s;
}

/* Links every entry of the user's ~/.gemini into dir, but settings.json (written here) and,
 * in a text call, GEMINI.md. */
static int link_user_dir(const char *user_dir, const char *dir, int text)
{
    /* Sessions must outlive the private home: --resume looks for them under tmp/. */
    char *tmp = NULL;
    if (asprintf(&tmp, "%s/tmp", user_dir) >= 0) {
        mkdir(user_dir, 0700);
        mkdir(tmp, 0700);
        free(tmp);
    }
    DIR *d = opendir(user_dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "settings.json") ||
            (text && !strcmp(n, "GEMINI.md")))
            continue;
        char *from = NULL, *to = NULL;
        if (asprintf(&from, "%s/%s", user_dir, n) < 0 || asprintf(&to, "%s/%s", dir, n) < 0)
            rc = AR_ENOMEM;
        else if (symlink(from, to) != 0)
            rc = AR_EIO;
        free(from);
        free(to);
    }
    closedir(d);
    return rc;
}

int ar_gemini_posture(const struct ar_call_spec *spec, struct ar_call_setup *out,
                      struct ar_error *err)
{
    enum ar_tools tools = ar_pv_tools(spec);
    int text = tools == AR_TOOLS_NONE;
    char *root = NULL, *dir = NULL, *user_dir = ar_gemini_user_dir(), *settings_path = NULL;
    int rc = 0;
    if (!user_dir) {
        rc = ar_error_set(err, AR_ENOMEM, "gemini", "out of memory");
        goto out;
    }
    /* 0700, and swept by a later agentrun when this one is killed (util/temp.h): it
     * holds a copy of the user's settings. */
    if (!(root = ar_temp_dir_make("gemini", err))) {
        rc = err && err->code ? err->code : AR_EIO;
        goto out;
    }
    if (ar_strv_push(&out->tmpdirs, root) < 0 || asprintf(&dir, "%s/.gemini", root) < 0 ||
        mkdir(dir, 0700) != 0 || asprintf(&settings_path, "%s/settings.json", dir) < 0) {
        rc = ar_error_set(err, AR_EIO, "gemini", "cannot prepare a private gemini home");
        goto out;
    }
    json_t *user = ar_gemini_user_settings(user_dir);
    json_t *s = ar_gemini_settings(user, tools, spec->trust_project);
    json_decref(user);
    char *text_settings = s ? json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(s);
    if (!text_settings ||
        ar_file_write_atomic(settings_path, text_settings, strlen(text_settings), 0600, err) < 0) {
        free(text_settings);
        rc = err && err->code ? err->code : AR_EIO;
        goto out;
    }
    free(text_settings);
    if (link_user_dir(user_dir, dir, text) != 0) {
        rc = ar_error_set(err, AR_EIO, "gemini", "cannot link '%s' into a private gemini home",
                          user_dir);
        goto out;
    }
    rc = ar_strv_pushf(&out->env, "GEMINI_CLI_HOME=%s", root);
    rc |= ar_strv_push(&out->env, spec->trust_project ? "GEMINI_CLI_TRUST_WORKSPACE=true"
                                                      : "GEMINI_CLI_TRUST_WORKSPACE=false");
    if (text) {
        char *file =
            ar_file_write_temp("system", gemini_text_prompt, sizeof(gemini_text_prompt) - 1, err);
        if (!file) {
            rc = err && err->code ? err->code : AR_EIO;
            goto out;
        }
        rc |= ar_strv_push(&out->tmpfiles, file);
        rc |= ar_strv_pushf(&out->env, "GEMINI_SYSTEM_MD=%s", file);
        free(file);
    }
    if (rc)
        rc = ar_error_set(err, AR_ENOMEM, "gemini", "out of memory");
    out->project_config = out->context_files = spec->trust_project;
out:
    free(root);
    free(dir);
    free(user_dir);
    free(settings_path);
    return rc;
}
