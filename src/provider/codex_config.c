/*
 * codex's config.toml ($CODEX_HOME/config.toml, else ~/.codex/config.toml), read for how
 * codex will authenticate before anything runs: the model provider (of the active
 * profile), its key variable, and where logins are stored. And codex's login check,
 * measured against codex 0.169.0:
 *   - `codex login status` answers from the stored login only (auth.json or the keyring):
 *     exit 0 "Logged in using …", exit 1 "Not logged in"; it calls no model;
 *   - `codex exec` also takes CODEX_API_KEY from the environment, but not OPENAI_API_KEY
 *     (a provider with requires_openai_auth sent no Authorization header with only
 *     OPENAI_API_KEY set);
 *   - a custom [model_providers.X] reads its key from env_key; built-in local providers
 *     (oss, ollama, lmstudio) need none;
 *   - with nothing to log in with, exec does not fail: it retries the websocket and then
 *     "waiting for network" until a timeout ends it, so agentrun must say so first.
 * Only a small part of TOML is read: [table] headers, and key = "string" | 'literal' |
 * true | false lines. Anything else is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/codex.h"
#include "provider/common.h"
#include "util/buf.h"
#include "util/file.h"

/* The longest config.toml read. */
#define MAX_CONFIG ((size_t)4 << 20)

/* One key = value line of the TOML subset: the value unquoted into val (at most n bytes). */
static int parse_pair(const char *line, size_t len, char *key, size_t kn, char *val, size_t vn)
{
    size_t i = 0, k = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    while (i < len && k + 1 < kn &&
           (line[i] == '_' || line[i] == '-' || (line[i] >= 'a' && line[i] <= 'z') ||
            (line[i] >= 'A' && line[i] <= 'Z') || (line[i] >= '0' && line[i] <= '9')))
        key[k++] = line[i++];
    key[k] = '\0';
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (!k || i >= len || line[i] != '=')
        return -1;
    i++;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t v = 0;
    if (i < len && (line[i] == '"' || line[i] == '\'')) {
        char q = line[i++];
        while (i < len && line[i] != q && v + 1 < vn) {
            /* Basic strings may escape a quote; key names and slugs never need more. */
            if (q == '"' && line[i] == '\\' && i + 1 < len)
                i++;
            val[v++] = line[i++];
        }
        if (i >= len || line[i] != q)
            return -1;
    } else {
        while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '#' && v + 1 < vn)
            val[v++] = line[i++];
    }
    val[v] = '\0';
    return 0;
}

/* The table name of a "[a.b]" header line, quotes dropped ("model_providers.my-p"); an
 * array of tables ("[[a]]") gets a name nothing here looks for. */
static int parse_header(const char *line, size_t len, char *name, size_t n)
{
    size_t i = 0, k = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= len || line[i] != '[')
        return -1;
    if (i + 1 < len && line[i + 1] == '[') {
        snprintf(name, n, "[[");
        return 0;
    }
    for (i++; i < len && line[i] != ']' && k + 1 < n; i++)
        if (line[i] != '"' && line[i] != '\'' && line[i] != ' ')
            name[k++] = line[i];
    name[k] = '\0';
    return i < len && line[i] == ']' ? 0 : -1;
}

static void set(char **dst, const char *v)
{
    free(*dst);
    *dst = strdup(v);
}

void ar_codex_config_read(const char *toml, size_t len, struct ar_codex_config *out)
{
    memset(out, 0, sizeof(*out));
    char *model_provider = NULL, *profile = NULL;
    /* Every profile's and provider's keys, as "table\tkey" -> value, for the second look. */
    struct ar_strv kv = AR_STRV_INIT;
    char table[256] = "";
    for (size_t pos = 0; pos < len;) {
        const char *line = toml + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        pos += n + 1;
        char key[128], val[512];
        if (parse_header(line, n, table, sizeof(table)) == 0)
            continue;
        if (parse_pair(line, n, key, sizeof(key), val, sizeof(val)) != 0)
            continue;
        if (!table[0] && !strcmp(key, "model_provider"))
            set(&model_provider, val);
        else if (!table[0] && !strcmp(key, "profile"))
            set(&profile, val);
        else if (!table[0] && !strcmp(key, "cli_auth_credentials_store"))
            set(&out->credentials_store, val);
        else if (table[0]) {
            ar_strv_pushf(&kv, "%s\t%s", table, key);
            ar_strv_push(&kv, val);
        }
    }
    /* The active profile's model_provider wins over the top-level one. */
    char want[300];
    for (size_t i = 0; profile && i + 1 < kv.n; i += 2) {
        snprintf(want, sizeof(want), "profiles.%s\tmodel_provider", profile);
        if (!strcmp(kv.v[i], want))
            set(&model_provider, kv.v[i + 1]);
    }
    out->provider = strdup(model_provider ? model_provider : "openai");
    for (size_t i = 0; out->provider && i + 1 < kv.n; i += 2) {
        snprintf(want, sizeof(want), "model_providers.%s\t", out->provider);
        size_t wl = strlen(want);
        if (strncmp(kv.v[i], want, wl) != 0)
            continue;
        out->provider_defined = 1;
        if (!strcmp(kv.v[i] + wl, "env_key"))
            set(&out->env_key, kv.v[i + 1]);
        else if (!strcmp(kv.v[i] + wl, "requires_openai_auth"))
            out->requires_openai_auth = !strcmp(kv.v[i + 1], "true");
    }
    free(model_provider);
    free(profile);
    ar_strv_finish(&kv);
}

/* $CODEX_HOME, else ~/.codex; NULL without either. Caller free()s. */
static char *codex_home(void)
{
    const char *home = getenv("CODEX_HOME");
    char *dir = NULL;
    if (home && *home)
        return strdup(home);
    home = getenv("HOME");
    if (home && *home && asprintf(&dir, "%s/.codex", home) < 0)
        dir = NULL;
    return dir;
}

void ar_codex_config_load(struct ar_codex_config *out)
{
    char *dir = codex_home(), *path = NULL;
    struct ar_buf b;
    ar_buf_init(&b, MAX_CONFIG);
    if (dir && asprintf(&path, "%s/config.toml", dir) >= 0 && ar_file_read(path, &b, NULL) == 0)
        ar_codex_config_read(b.data ? b.data : "", b.len, out);
    else
        ar_codex_config_read("", 0, out);
    ar_buf_finish(&b);
    free(path);
    free(dir);
}

void ar_codex_config_finish(struct ar_codex_config *c)
{
    free(c->provider);
    free(c->env_key);
    free(c->credentials_store);
    memset(c, 0, sizeof(*c));
}

/* The first line of what `codex login status` printed that is not one of codex's
 * start-up warnings ("WARNING: proceeding, even though …"), or NULL. Caller free()s. */
static char *first_said(const char *s, size_t n)
{
    for (const char *end = s + n; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
        if (len && strncmp(s, "WARNING", 7) != 0)
            return strndup(s, len > 120 ? 120 : len);
        s += len + 1;
    }
    return NULL;
}

/* Whether the provider logs in as OpenAI does (codex login, CODEX_API_KEY). */
static int openai_auth(const struct ar_codex_config *c)
{
    return !c->provider || !strcmp(c->provider, "openai") || c->requires_openai_auth;
}

void ar_codex_login(const struct ar_login_probe *probe, struct ar_login_state *out)
{
    struct ar_codex_config c;
    ar_codex_config_load(&c);
    const char *v;
    if (!openai_auth(&c)) {
        if (!c.env_key)
            ar_login_set(out, AR_LOGIN_YES, "model provider '%s' needs no key", c.provider);
        else if ((v = getenv(c.env_key)) && *v)
            ar_login_set_key(out, "$%s is set (model provider '%s')", c.env_key, c.provider);
        else
            ar_login_set(out, AR_LOGIN_NO,
                         "model provider '%s' reads its key from $%s, which is not set", c.provider,
                         c.env_key);
        ar_codex_config_finish(&c);
        return;
    }
    char *file = ar_provider_auth_file(&ar_provider_codex, 0);
    char *said = probe ? first_said(probe->err, probe->err_len) : NULL;
    if (!said && probe)
        said = first_said(probe->out, probe->out_len);
    if ((v = getenv("CODEX_API_KEY")) && *v)
        ar_login_set_key(out, "$CODEX_API_KEY is set");
    else if (probe && probe->status == 0)
        ar_login_set(out, AR_LOGIN_YES, "logged in (codex login status: %s)", said ? said : "ok");
    else if (!probe && file && ar_is_file(file))
        ar_login_set(out, AR_LOGIN_YES, "login file %s", file);
    else if (!probe && c.credentials_store && strcmp(c.credentials_store, "file") != 0)
        ar_login_set(out, AR_LOGIN_UNKNOWN,
                     "no login file, and logins may be in the keyring "
                     "(cli_auth_credentials_store = \"%s\"): 'codex login status' tells",
                     c.credentials_store);
    else if (probe && probe->status < 0)
        ar_login_set(out, AR_LOGIN_UNKNOWN, "'codex login status' did not answer");
    else
        ar_login_set(out, AR_LOGIN_NO,
                     "not logged in: %s (codex exec does not read "
                     "OPENAI_API_KEY itself)",
                     ar_provider_codex.auth_help);
    free(said);
    free(file);
    ar_codex_config_finish(&c);
}
