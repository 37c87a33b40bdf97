/*
 * Cassettes: one recorded CLI call per file (docs/record-replay.md).
 *
 * The replay match key is what decides the CLI's answer and is the same on
 * every machine: the provider, argv without the binary's path (temporary file
 * names and the paths an adapter marks as local replaced, also inside an argument), the SHA-256 of
 * stdin (the prompt) and of the contract. The CLI's identity and timings are recorded but never
 * matched: a replay runs where the CLI is not installed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ar_config.h"
#include "proc/proc.h"
#include "record/record.h"
#include "util/base64.h"
#include "util/file.h"
#include "util/utf8.h"

#define CASSETTE_SCHEMA "agentrun.cassette/1"
#define MAX_CASSETTE    ((size_t)256 << 20)

static const char *const end_names[] = { "exited",  "timeout",     "idle_timeout",
                                         "too_big", "final_grace", "cancelled" };

const char *ar_cassette_end_name(int end)
{
    return end >= 0 && end < (int)(sizeof(end_names) / sizeof(end_names[0])) ? end_names[end]
                                                                             : "exited";
}

int ar_cassette_end_from_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof(end_names) / sizeof(end_names[0]); i++)
        if (strcmp(end_names[i], name) == 0)
            return (int)i;
    return -1;
}

void ar_cli_identity_of(const char *bin, struct ar_cli_identity *out)
{
    memset(out, 0, sizeof(*out));
    out->path = bin ? ar_path_search(bin) : NULL;
    struct stat st;
    if (out->path && stat(out->path, &st) == 0) {
        out->size = (uint64_t)st.st_size;
        out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
}

void ar_cli_identity_finish(struct ar_cli_identity *id)
{
    free(id->path);
    memset(id, 0, sizeof(*id));
}

void ar_cassette_init(struct ar_cassette *c)
{
    memset(c, 0, sizeof(*c));
    ar_strv_init(&c->argv);
    ar_buf_init(&c->out, MAX_CASSETTE);
    ar_buf_init(&c->err, MAX_CASSETTE);
}

void ar_cassette_finish(struct ar_cassette *c)
{
    free(c->provider);
    free(c->model);
    ar_strv_finish(&c->argv);
    ar_cli_identity_finish(&c->cli);
    ar_buf_finish(&c->out);
    ar_buf_finish(&c->err);
    ar_cassette_init(c);
}

/* Appends arg to b with every temporary file name in it replaced by "@tmpfile" and every
 * path of this machine the adapter named (setup->local_paths, longest first) by "@path":
 * what a call's answer does not depend on. */
static int normalize_arg(const struct ar_call_setup *setup, const char *arg, struct ar_buf *b)
{
    int rc = 0;
    while (*arg && !rc) {
        const char *best = NULL, *with = NULL;
        size_t best_len = 0;
        const struct ar_strv *lists[2] = { &setup->tmpfiles, &setup->local_paths };
        const char *names[2] = { "@tmpfile", "@path" };
        for (int l = 0; l < 2; l++)
            for (size_t i = 0; i < lists[l]->n; i++) {
                size_t n = strlen(lists[l]->v[i]);
                if (n > best_len && strncmp(arg, lists[l]->v[i], n) == 0) {
                    best = lists[l]->v[i];
                    best_len = n;
                    with = names[l];
                }
            }
        if (best) {
            rc = ar_buf_puts(b, with);
            arg += best_len;
        } else {
            rc = ar_buf_append(b, arg, 1);
            arg++;
        }
    }
    return rc;
}

int ar_cassette_set_request(struct ar_cassette *c, const char *provider,
                            const struct ar_call_setup *setup, const void *in, size_t in_len,
                            const char *contract, const char *model, const struct ar_redactor *rd)
{
    int rc = 0;
    c->provider = strdup(provider);
    c->model = model ? strdup(model) : NULL;
    rc |= !c->provider || (model && !c->model);
    for (size_t i = 1; i < setup->argv.n; i++) {
        struct ar_buf norm, b;
        ar_buf_init(&norm, AR_BUF_UNLIMITED);
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        rc |= normalize_arg(setup, setup->argv.v[i], &norm);
        rc |= ar_redact(rd, norm.data ? norm.data : "", norm.len, &b);
        rc |= ar_strv_push_take(&c->argv, ar_buf_detach(&b, NULL));
        ar_buf_finish(&b);
        ar_buf_finish(&norm);
    }
    ar_sha256_hex_of(in, in_len, c->stdin_sha256);
    c->stdin_bytes = in_len;
    if (contract)
        ar_sha256_hex_of(contract, strlen(contract), c->contract_sha256);
    else
        c->contract_sha256[0] = '\0';
    return rc ? AR_ENOMEM : 0;
}

static void hash_str(struct ar_sha256 *h, const char *s)
{
    /* Length-prefixed, so ("ab","c") and ("a","bc") differ. */
    char len[24];
    int n = snprintf(len, sizeof(len), "%zu:", s ? strlen(s) : (size_t)0);
    ar_sha256_update(h, len, (size_t)n);
    if (s)
        ar_sha256_update(h, s, strlen(s));
}

void ar_cassette_key(const struct ar_cassette *c, char out[AR_SHA256_HEX])
{
    struct ar_sha256 h;
    ar_sha256_init(&h);
    hash_str(&h, CASSETTE_SCHEMA);
    hash_str(&h, c->provider);
    for (size_t i = 0; i < c->argv.n; i++)
        hash_str(&h, c->argv.v[i]);
    hash_str(&h, "stdin");
    hash_str(&h, c->stdin_sha256);
    hash_str(&h, c->contract_sha256);
    ar_sha256_hex(&h, out);
}

void ar_cassette_file_name(const struct ar_cassette *c, char *out, size_t size)
{
    char key[AR_SHA256_HEX];
    ar_cassette_key(c, key);
    snprintf(out, size, "%s-%.16s.json", c->provider ? c->provider : "call", key);
}

/* Text as a JSON string when it is UTF-8 without NUL, else base64 under name_b64. */
static void set_bytes(json_t *o, const char *name, const char *name_b64, const struct ar_buf *b)
{
    const char *s = b->data ? b->data : "";
    if (ar_utf8_valid(s, b->len) && !memchr(s, '\0', b->len)) {
        json_object_set_new(o, name, json_stringn(s, b->len));
        return;
    }
    char *enc = ar_base64_encode(s, b->len, NULL);
    json_object_set_new(o, name_b64, enc ? json_string(enc) : json_null());
    free(enc);
}

static int get_bytes(const json_t *o, const char *name, const char *name_b64, struct ar_buf *b)
{
    const json_t *v = json_object_get(o, name);
    if (json_is_string(v))
        return ar_buf_append(b, json_string_value(v), json_string_length(v));
    v = json_object_get(o, name_b64);
    if (!json_is_string(v))
        return -1;
    size_t n;
    char *dec = ar_base64_decode(json_string_value(v), json_string_length(v), &n);
    if (!dec)
        return -1;
    int rc = ar_buf_append(b, dec, n);
    free(dec);
    return rc;
}

json_t *ar_cassette_to_json(const struct ar_cassette *c)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "schema", json_string(CASSETTE_SCHEMA));
    json_object_set_new(o, "agentrun", json_string(AR_VERSION));
    json_object_set_new(o, "provider", json_string(c->provider ? c->provider : ""));
    json_object_set_new(o, "model", c->model ? json_string(c->model) : json_null());
    json_t *cli = json_object();
    json_object_set_new(cli, "path", c->cli.path ? json_string(c->cli.path) : json_null());
    json_object_set_new(cli, "size", json_integer((json_int_t)c->cli.size));
    json_object_set_new(cli, "mtime_ns", json_integer((json_int_t)c->cli.mtime_ns));
    json_object_set_new(o, "cli", cli);
    json_t *argv = json_array();
    for (size_t i = 0; i < c->argv.n; i++)
        json_array_append_new(argv, json_string(c->argv.v[i]));
    json_object_set_new(o, "argv", argv);
    json_object_set_new(o, "stdin_sha256", json_string(c->stdin_sha256));
    json_object_set_new(o, "stdin_bytes", json_integer((json_int_t)c->stdin_bytes));
    json_object_set_new(o, "contract_sha256",
                        c->contract_sha256[0] ? json_string(c->contract_sha256) : json_null());
    json_object_set_new(o, "exit_code", json_integer(c->exit_code));
    json_object_set_new(o, "signal", c->term_signal ? json_integer(c->term_signal) : json_null());
    json_object_set_new(o, "end", json_string(ar_cassette_end_name(c->end)));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)c->duration_ms));
    json_object_set_new(o, "recorded_at", json_integer((json_int_t)c->recorded_at));
    set_bytes(o, "stdout", "stdout_base64", &c->out);
    set_bytes(o, "stderr", "stderr_base64", &c->err);
    return o;
}

static int bad(struct ar_error *err, const char *what)
{
    return ar_error_set(err, AR_EIO, NULL, "not a cassette: %s", what);
}

static int copy_hash(const json_t *o, const char *name, char out[AR_SHA256_HEX], int nullable)
{
    const json_t *v = json_object_get(o, name);
    if (nullable && (!v || json_is_null(v))) {
        out[0] = '\0';
        return 0;
    }
    const char *s = json_string_value(v);
    if (!s || strlen(s) != AR_SHA256_HEX - 1)
        return -1;
    memcpy(out, s, AR_SHA256_HEX);
    return 0;
}

int ar_cassette_from_json(const json_t *v, struct ar_cassette *c, struct ar_error *err)
{
    if (!json_is_object(v))
        return bad(err, "not a JSON object");
    const char *schema = json_string_value(json_object_get(v, "schema"));
    if (!schema || strcmp(schema, CASSETTE_SCHEMA) != 0)
        return bad(err, "schema is not " CASSETTE_SCHEMA);
    const char *prov = json_string_value(json_object_get(v, "provider"));
    if (!prov)
        return bad(err, "no provider");
    c->provider = strdup(prov);
    const char *model = json_string_value(json_object_get(v, "model"));
    c->model = model ? strdup(model) : NULL;
    const json_t *cli = json_object_get(v, "cli");
    const char *path = json_string_value(json_object_get(cli, "path"));
    c->cli.path = path ? strdup(path) : NULL;
    c->cli.size = (uint64_t)json_integer_value(json_object_get(cli, "size"));
    c->cli.mtime_ns = (int64_t)json_integer_value(json_object_get(cli, "mtime_ns"));
    const json_t *argv = json_object_get(v, "argv");
    if (!json_is_array(argv))
        return bad(err, "no argv");
    for (size_t i = 0; i < json_array_size(argv); i++) {
        const char *a = json_string_value(json_array_get(argv, i));
        if (!a)
            return bad(err, "argv holds a non-string");
        if (ar_strv_push(&c->argv, a) < 0)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    if (copy_hash(v, "stdin_sha256", c->stdin_sha256, 0) < 0 ||
        copy_hash(v, "contract_sha256", c->contract_sha256, 1) < 0)
        return bad(err, "bad hash");
    c->stdin_bytes = (uint64_t)json_integer_value(json_object_get(v, "stdin_bytes"));
    if (!json_is_integer(json_object_get(v, "exit_code")))
        return bad(err, "no exit_code");
    c->exit_code = (int)json_integer_value(json_object_get(v, "exit_code"));
    c->term_signal = (int)json_integer_value(json_object_get(v, "signal"));
    c->end = ar_cassette_end_from_name(json_string_value(json_object_get(v, "end")));
    if (c->end < 0)
        return bad(err, "unknown end");
    c->duration_ms = (uint64_t)json_integer_value(json_object_get(v, "duration_ms"));
    c->recorded_at = (int64_t)json_integer_value(json_object_get(v, "recorded_at"));
    if (get_bytes(v, "stdout", "stdout_base64", &c->out) < 0 ||
        get_bytes(v, "stderr", "stderr_base64", &c->err) < 0)
        return bad(err, "no stdout or stderr");
    return 0;
}

int ar_cassette_load(const char *path, struct ar_cassette *c, struct ar_error *err)
{
    /* A cassette directory may be part of a checkout: read by util/file.h's rules. */
    struct ar_buf b;
    ar_buf_init(&b, MAX_CASSETTE);
    int rc = ar_file_read(path, &b, err);
    if (rc) {
        ar_buf_finish(&b);
        if (rc == AR_ENOMEM)
            return rc;
        if (err)
            err->code = AR_EIO;
        return AR_EIO;
    }
    json_error_t je;
    json_t *v = json_loadb(ar_buf_cstr(&b), b.len, 0, &je);
    ar_buf_finish(&b);
    if (!v)
        return ar_error_set(err, AR_EIO, path, "cannot read cassette '%s': %s", path, je.text);
    rc = ar_cassette_from_json(v, c, err);
    json_decref(v);
    if (rc < 0) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        ar_error_set(err, rc, path, "'%s': %s", path, msg);
    }
    return rc;
}

int ar_cassette_save(const struct ar_cassette *c, const char *path, struct ar_error *err)
{
    json_t *v = ar_cassette_to_json(c);
    char *text = v ? json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(v);
    if (!text)
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    size_t n = strlen(text);
    int rc = ar_file_write_atomic(path, text, n, 0600, err);
    free(text);
    return rc;
}

/* mkdir -p, for a cassette or cache directory. */
static int make_dirs(const char *dir, struct ar_error *err)
{
    char *p = strdup(dir);
    if (!p)
        return ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    for (char *s = p + 1;; s++) {
        if (*s == '/' || !*s) {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                int e = errno;
                free(p);
                return ar_error_set_sys(err, AR_EIO, e, dir, "cannot create '%s': %s", dir,
                                        strerror(e));
            }
            *s = c;
            if (!c)
                break;
        }
    }
    free(p);
    return 0;
}

int ar_record_make_dirs(const char *dir, struct ar_error *err)
{
    return make_dirs(dir, err);
}

int ar_cassette_record(const struct ar_cassette *c, const char *dir, struct ar_error *err)
{
    if (make_dirs(dir, err) < 0)
        return err ? err->code : AR_EIO;
    char name[128];
    ar_cassette_file_name(c, name, sizeof(name));
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (!path)
        return ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    int rc = ar_cassette_save(c, path, err);
    free(path);
    return rc;
}

/* ---- replay lookup ---------------------------------------------------------------------- */

/* Up to three arguments from argv[i], for a message ("--model x --sandbox"). */
static void argv_window(const struct ar_strv *v, size_t i, char *out, size_t size)
{
    size_t off = 0;
    out[0] = '\0';
    for (size_t k = i; k < v->n && k < i + 3 && off < size; k++)
        off += (size_t)snprintf(out + off, size - off, "%s%.40s", k > i ? " " : "", v->v[k]);
    if (i >= v->n)
        snprintf(out, size, "(end)");
}

/* How far b is from a: a score (lower is nearer) and the first field that differs. */
static int distance(const struct ar_cassette *a, const struct ar_cassette *b, char *what,
                    size_t size)
{
    int d = 0;
    what[0] = '\0';
    if (strcmp(a->provider, b->provider) != 0) {
        d += 100;
        snprintf(what, size, "provider '%s' (this call: '%s')", b->provider, a->provider);
    }
    size_t n = a->argv.n > b->argv.n ? a->argv.n : b->argv.n;
    for (size_t i = 0; i < n; i++) {
        const char *x = i < a->argv.n ? a->argv.v[i] : NULL;
        const char *y = i < b->argv.n ? b->argv.v[i] : NULL;
        if (x && y && strcmp(x, y) == 0)
            continue;
        if (!what[0]) {
            char mine[120], theirs[120];
            argv_window(&a->argv, i, mine, sizeof(mine));
            argv_window(&b->argv, i, theirs, sizeof(theirs));
            snprintf(what, size, "argv[%zu…] '%s' (this call: '%s')", i + 1, theirs, mine);
        }
        d += 10;
    }
    if (strcmp(a->stdin_sha256, b->stdin_sha256) != 0) {
        if (!what[0])
            snprintf(what, size,
                     "another prompt (%llu bytes, sha256 %.12s; this call: %llu bytes, %.12s)",
                     (unsigned long long)b->stdin_bytes, b->stdin_sha256,
                     (unsigned long long)a->stdin_bytes, a->stdin_sha256);
        d += 5;
    }
    if (strcmp(a->contract_sha256, b->contract_sha256) != 0) {
        if (!what[0])
            snprintf(what, size, "another contract (sha256 %.12s; this call: %.12s)",
                     b->contract_sha256[0] ? b->contract_sha256 : "none",
                     a->contract_sha256[0] ? a->contract_sha256 : "none");
        d += 5;
    }
    return d;
}

static int is_cassette_name(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".json") == 0 && name[0] != '.';
}

int ar_cassette_find(const char *dir, const struct ar_cassette *want, struct ar_cassette *found,
                     struct ar_error *err)
{
    char name[128];
    ar_cassette_file_name(want, name, sizeof(name));
    size_t n = strlen(dir) + sizeof(name) + 2;
    char *path = malloc(n);
    if (!path)
        return ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    struct ar_error e = AR_ERROR_INIT;
    if (ar_is_file(path) && ar_cassette_load(path, found, &e) == 0) {
        char a[AR_SHA256_HEX], b[AR_SHA256_HEX];
        ar_cassette_key(want, a);
        ar_cassette_key(found, b);
        free(path);
        if (strcmp(a, b) == 0)
            return 0;
        ar_cassette_finish(found);
        return ar_error_set(err, AR_EREPLAYMISS, name,
                            "cassette '%s' in '%s' was edited: its request no longer matches "
                            "its file name",
                            name, dir);
    }
    free(path);
    ar_cassette_finish(found);
    if (e.code)
        return ar_error_set(err, AR_EREPLAYMISS, name, "%s", e.msg);

    /* A miss: name the nearest cassette and what differs. */
    DIR *d = opendir(dir);
    if (!d)
        return ar_error_set(err, AR_EREPLAYMISS, dir,
                            "no recorded %s call: cannot open replay directory '%s': %s",
                            want->provider, dir, strerror(errno));
    int best = -1;
    char best_name[256] = "", best_what[320] = "";
    size_t count = 0;
    for (struct dirent *ent; (ent = readdir(d));) {
        if (!is_cassette_name(ent->d_name))
            continue;
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, ent->d_name);
        struct ar_cassette c;
        ar_cassette_init(&c);
        if (ar_cassette_load(p, &c, NULL) == 0) {
            count++;
            char what[320];
            int dist = distance(want, &c, what, sizeof(what));
            if (best < 0 || dist < best || (dist == best && strcmp(ent->d_name, best_name) < 0)) {
                best = dist;
                snprintf(best_name, sizeof(best_name), "%s", ent->d_name);
                snprintf(best_what, sizeof(best_what), "%s", what);
            }
        }
        ar_cassette_finish(&c);
    }
    closedir(d);
    if (!count)
        return ar_error_set(err, AR_EREPLAYMISS, dir, "no recorded %s call: '%s' holds no cassette",
                            want->provider, dir);
    return ar_error_set(err, AR_EREPLAYMISS, best_name,
                        "no cassette for this %s call in '%s'; the nearest, %s, has %s",
                        want->provider, dir, best_name, best_what);
}

/* The provider of a cassette's file name "<provider>-<16 hex>.json" into out, or 0. */
static int cassette_provider(const char *name, char *out, size_t size)
{
    size_t n = strlen(name), tail = 1 + 16 + 5;
    if (n <= tail || strcmp(name + n - 5, ".json") != 0 || name[n - tail] != '-')
        return 0;
    for (size_t i = n - tail + 1; i < n - 5; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return 0;
    size_t k = n - tail;
    if (k >= size)
        return 0;
    for (size_t i = 0; i < k; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_", name[i]))
            return 0;
    memcpy(out, name, k);
    out[k] = '\0';
    return 1;
}

int ar_replay_needs_provider(const char *dir, struct ar_error *err)
{
    enum { MAX_SEEN = 8 };
    char seen[MAX_SEEN][33];
    size_t n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *ent; d && (ent = readdir(d));) {
        char p[33];
        if (!cassette_provider(ent->d_name, p, sizeof(p)))
            continue;
        size_t i = 0;
        while (i < n && strcmp(seen[i], p) != 0)
            i++;
        if (i == n && n < MAX_SEEN)
            memcpy(seen[n++], p, sizeof(p));
    }
    if (d)
        closedir(d);
    /* In name order, so the message is the same on every file system. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(seen[j - 1], seen[j]) > 0; j--) {
            char t[33];
            memcpy(t, seen[j], sizeof(t));
            memcpy(seen[j], seen[j - 1], sizeof(t));
            memcpy(seen[j - 1], t, sizeof(t));
        }
    if (n == 1)
        return ar_error_set(err, AR_EUSAGE, "--replay",
                            "the calls in '%s' were recorded with %s: pass -p %s (or "
                            "AGENTRUN_PROVIDER=%s); --replay starts no CLI, so --provider auto "
                            "has none to pick",
                            dir, seen[0], seen[0], seen[0]);
    if (n > 1) {
        char list[MAX_SEEN * 40] = "";
        size_t off = 0;
        for (size_t i = 0; i < n; i++)
            off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
                                    i == 0      ? ""
                                    : i + 1 < n ? ", "
                                                : " and ",
                                    seen[i]);
        return ar_error_set(err, AR_EUSAGE, "--replay",
                            "the calls in '%s' were recorded with %s: pass -p with the one to "
                            "replay (or AGENTRUN_PROVIDER); --replay starts no CLI, so "
                            "--provider auto has none to pick",
                            dir, list);
    }
    return ar_error_set(err, AR_EUSAGE, "--replay",
                        "'%s' holds no cassette (--record DIR makes them), and --replay needs "
                        "the provider the calls were recorded with (-p, or AGENTRUN_PROVIDER)",
                        dir);
}
