/*
 * The result cache (--cache): a text-only call made once is not made again.
 *
 * An entry is a cassette stored under a key that covers everything that
 * decides the CLI's answer: the provider, the model asked for, the CLI's
 * identity (its resolved path, size and modification time: an upgrade
 * changes them, and reading them costs one stat(), where `--version` would
 * cost a process per call), the whole argv (which carries the permissions
 * and the structured-output flags), the exact prompt bytes and the contract.
 *
 * Layout: DIR/calls/<key>.json. Writers replace an entry atomically (temp
 * file + rename), so concurrent jobs sharing DIR never read half an entry;
 * an unreadable entry is a miss and the next put replaces it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"
#include "util/file.h"
#include "util/sha256.h"

#define CACHE_SCHEMA "agentrun.cache/1"

int ar_cache_call_cacheable(const struct ar_call_spec *spec)
{
    /* A text call's whole input is its prompt (DESIGN §4b), unless the checkout is
     * trusted and its context files join in; a resumed session has history. */
    return spec->tools == AR_TOOLS_NONE && !spec->trust_project && !spec->resume;
}

char *ar_cache_default_dir(void)
{
    const char *x = getenv("XDG_CACHE_HOME");
    char *out = NULL;
    if (x && *x && x[0] == '/') {
        size_t n = strlen(x) + sizeof("/agentrun");
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s/agentrun", x);
        return out;
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + sizeof("/.cache/agentrun");
    out = malloc(n);
    if (out)
        snprintf(out, n, "%s/.cache/agentrun", home);
    return out;
}

static void hash_str(struct ar_sha256 *h, const char *s)
{
    char len[24];
    int n = snprintf(len, sizeof(len), "%zu:", s ? strlen(s) : (size_t)0);
    ar_sha256_update(h, len, (size_t)n);
    if (s)
        ar_sha256_update(h, s, strlen(s));
}

void ar_cache_key(const struct ar_cassette *req, const char *bin, char out[AR_SHA256_HEX])
{
    struct ar_sha256 h;
    ar_sha256_init(&h);
    hash_str(&h, CACHE_SCHEMA);
    hash_str(&h, req->provider);
    hash_str(&h, req->model ? req->model : "(default)");
    char id[96];
    snprintf(id, sizeof(id), "%llu:%lld", (unsigned long long)req->cli.size,
             (long long)req->cli.mtime_ns);
    hash_str(&h, req->cli.path ? req->cli.path : "(not found)");
    hash_str(&h, id);
    hash_str(&h, bin);
    for (size_t i = 0; i < req->argv.n; i++)
        hash_str(&h, req->argv.v[i]);
    hash_str(&h, "stdin");
    hash_str(&h, req->stdin_sha256);
    hash_str(&h, req->contract_sha256);
    ar_sha256_hex(&h, out);
}

static char *entry_path(const char *dir, const char *key)
{
    size_t n = strlen(dir) + strlen(key) + sizeof("/calls/.json");
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/calls/%s.json", dir, key);
    return p;
}

/* ---- trust: the directory is this user's alone, the entries carry a MAC ---- */

/* A directory this user owns and no one else may write; one that does not exist yet
 * is fine (it is made 0700). Returns 0 or AR_EUSAGE. */
static int check_dir(const char *path, const char *dir, struct ar_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return ar_error_set(err, AR_EUSAGE, "--cache-dir", "cache directory '%s' is not a folder",
                            path);
    if (st.st_uid != geteuid())
        return ar_error_set(err, AR_EUSAGE, "--cache-dir",
                            "cache directory '%s' is owned by another user (uid %lu): its "
                            "entries could be anyone's answers; use a directory of your own "
                            "(--cache-dir)",
                            path, (unsigned long)st.st_uid);
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return ar_error_set(err, AR_EUSAGE, "--cache-dir",
                            "cache directory '%s' is writable by others (mode %03o): anyone who "
                            "can write it could plant answers; chmod go-w '%s' (agentrun makes "
                            "it 0700), or use another --cache-dir",
                            path, (unsigned)(st.st_mode & 0777), path);
    (void)dir;
    return 0;
}

/* The MAC key's file: $XDG_CONFIG_HOME/agentrun/cache.key, else ~/.config/…; NULL
 * when there is no HOME. */
static int key_file(char *out, size_t n)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    int w;
    if (xdg && xdg[0] == '/')
        w = snprintf(out, n, "%s/agentrun/cache.key", xdg);
    else if (home && *home)
        w = snprintf(out, n, "%s/.config/agentrun/cache.key", home);
    else
        return -1;
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Reads the key file: this user's, readable by no one else, 32 bytes or more. */
static int read_key(const char *path, unsigned char secret[AR_CACHE_SECRET_LEN],
                    struct ar_error *err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT
                   ? 1
                   : ar_error_set_sys(err, AR_EIO, errno, path,
                                      "cannot read the cache key '%s': %s", path, strerror(errno));
    struct stat st;
    char buf[512];
    ssize_t got = -1;
    int rc = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = ar_error_set(err, AR_EUSAGE, path, "the cache key '%s' is not a regular file", path);
    else if (st.st_uid != geteuid() || (st.st_mode & 077))
        rc = ar_error_set(err, AR_EUSAGE, path,
                          "the cache key '%s' is another user's or readable by others (mode "
                          "%03o): chmod 600 it, or remove it to make a new one",
                          path, (unsigned)(st.st_mode & 0777));
    else if ((got = read(fd, buf, sizeof(buf))) < 32)
        rc = ar_error_set(err, AR_EUSAGE, path,
                          "the cache key '%s' is too short: remove it to make a new one", path);
    close(fd);
    if (!rc)
        ar_sha256_digest(buf, (size_t)got, secret);
    memset(buf, 0, sizeof(buf));
    return rc;
}

/* Makes the key file: 32 random bytes, hex, 0600, linked into place only whole (a
 * concurrent agentrun that made it first wins, and its key is read). */
static int make_key(const char *path, struct ar_error *err)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    *strrchr(dir, '/') = '\0';
    int rc = ar_record_make_dirs(dir, err);
    if (rc)
        return rc;
    unsigned char raw[32];
    size_t have = 0;
    while (have < sizeof(raw)) {
        ssize_t n = getrandom(raw + have, sizeof(raw) - have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ar_error_set_sys(err, AR_EIO, errno, path, "getrandom: %s", strerror(errno));
        have += (size_t)n;
    }
    char hex[2 * sizeof(raw) + 2];
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    hex[2 * sizeof(raw)] = '\n';
    hex[2 * sizeof(raw) + 1] = '\0';
    memset(raw, 0, sizeof(raw));
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return ar_error_set_sys(err, AR_EIO, errno, path, "cannot create the cache key '%s': %s",
                                path, strerror(errno));
    size_t len = strlen(hex);
    int ok = fchmod(fd, 0600) == 0 && write(fd, hex, len) == (ssize_t)len && fsync(fd) == 0;
    int e = errno;
    close(fd);
    memset(hex, 0, sizeof(hex));
    if (ok && link(tmp, path) != 0 && errno != EEXIST) {
        e = errno;
        ok = 0;
    }
    unlink(tmp);
    if (!ok)
        return ar_error_set_sys(err, AR_EIO, e, path, "cannot create the cache key '%s': %s", path,
                                strerror(e));
    return 0;
}

int ar_cache_prepare(const char *dir, unsigned char secret[AR_CACHE_SECRET_LEN],
                     struct ar_error *err)
{
    char calls[4200];
    snprintf(calls, sizeof(calls), "%s/calls", dir);
    int rc = check_dir(dir, dir, err);
    if (!rc)
        rc = check_dir(calls, dir, err);
    if (rc)
        return rc;
    const char *env = getenv("AGENTRUN_CACHE_KEY");
    if (env && *env) {
        if (strlen(env) < 16)
            return ar_error_set(err, AR_EUSAGE, "AGENTRUN_CACHE_KEY",
                                "AGENTRUN_CACHE_KEY is too short: 16 bytes or more (a random "
                                "secret of the repository)");
        ar_sha256_digest(env, strlen(env), secret);
        return 0;
    }
    char path[4096];
    if (key_file(path, sizeof(path)) != 0)
        return ar_error_set(err, AR_EUSAGE, "--cache",
                            "no key to check cache entries with: set AGENTRUN_CACHE_KEY, or "
                            "HOME or XDG_CONFIG_HOME for a key file");
    rc = read_key(path, secret, err);
    if (rc == 1) {
        rc = make_key(path, err);
        if (!rc)
            rc = read_key(path, secret, err);
        if (rc == 1)
            rc = ar_error_set(err, AR_EIO, path, "cannot read the cache key '%s'", path);
    }
    return rc;
}

/* The MAC of an entry: HMAC-SHA256 over the schema, the key it is filed under and its
 * canonical JSON (sorted keys, compact, without "mac"), in hex. Returns 0 or -1. */
static int entry_mac(const unsigned char secret[AR_CACHE_SECRET_LEN], const char *key,
                     json_t *entry, char out[AR_SHA256_HEX])
{
    char *text = json_dumps(entry, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!text)
        return -1;
    struct ar_hmac_sha256 m;
    ar_hmac_sha256_init(&m, secret, AR_CACHE_SECRET_LEN);
    ar_hmac_sha256_update(&m, CACHE_SCHEMA, sizeof(CACHE_SCHEMA));
    ar_hmac_sha256_update(&m, key, strlen(key) + 1);
    ar_hmac_sha256_update(&m, text, strlen(text));
    ar_hmac_sha256_hex(&m, out);
    free(text);
    return 0;
}

/* Compares two hex MACs in time that does not depend on where they differ. */
static int same_mac(const char *a, const char *b)
{
    unsigned char d = 0;
    for (size_t i = 0; i < AR_SHA256_HEX - 1; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* Reads the entry at path into c when its MAC holds. Returns 1, or 0 (a miss). */
static int load_entry(const char *path, const unsigned char secret[AR_CACHE_SECRET_LEN],
                      const char *key, struct ar_cassette *c)
{
    struct ar_buf b;
    ar_buf_init(&b, (size_t)256 << 20);
    int ok = ar_file_read(path, &b, NULL) == 0;
    json_t *v = ok ? json_loadb(ar_buf_cstr(&b), b.len, 0, NULL) : NULL;
    ar_buf_finish(&b);
    const char *mac = json_string_value(json_object_get(v, "mac"));
    char want[AR_SHA256_HEX], got[AR_SHA256_HEX];
    ok = mac && strlen(mac) == AR_SHA256_HEX - 1;
    if (ok) {
        snprintf(got, sizeof(got), "%s", mac);
        json_object_del(v, "mac");
        ok = entry_mac(secret, key, v, want) == 0 && same_mac(want, got);
    }
    ok = ok && ar_cassette_from_json(v, c, NULL) == 0;
    json_decref(v);
    return ok;
}

int ar_cache_get(const char *dir, const unsigned char secret[AR_CACHE_SECRET_LEN], const char *key,
                 const char *bin, uint64_t ttl_s, struct ar_cassette *hit)
{
    char *path = entry_path(dir, key);
    if (!path)
        return 0;
    struct ar_cassette c;
    ar_cassette_init(&c);
    int ok = ar_is_file(path) && load_entry(path, secret, key, &c);
    free(path);
    if (ok) {
        /* An entry answers only the request it was stored for: its own request must
         * hash to the key it is filed under (a file copied over another key, or one
         * whose request was edited, is a miss). */
        char own[AR_SHA256_HEX];
        ar_cache_key(&c, bin, own);
        ok = strcmp(own, key) == 0;
    }
    if (ok && ttl_s) {
        int64_t age = (int64_t)time(NULL) - c.recorded_at;
        ok = age >= 0 && (uint64_t)age < ttl_s;
    }
    if (!ok) {
        ar_cassette_finish(&c);
        return 0;
    }
    ar_cassette_finish(hit);
    *hit = c;
    return 1;
}

int ar_cache_put(const char *dir, const unsigned char secret[AR_CACHE_SECRET_LEN], const char *key,
                 const struct ar_cassette *c, struct ar_error *err)
{
    size_t n = strlen(dir) + sizeof("/calls");
    char *calls = malloc(n);
    if (!calls)
        return ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    snprintf(calls, n, "%s/calls", dir);
    int rc = ar_record_make_dirs(calls, err);
    free(calls);
    if (rc < 0)
        return rc;
    char *path = entry_path(dir, key);
    json_t *v = ar_cassette_to_json(c);
    char mac[AR_SHA256_HEX];
    char *text = NULL;
    if (path && v && entry_mac(secret, key, v, mac) == 0 &&
        json_object_set_new(v, "mac", json_string(mac)) == 0)
        text = json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(v);
    rc = text ? ar_file_write_atomic(path, text, strlen(text), 0600, err)
              : ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    free(text);
    free(path);
    return rc;
}

/* An entry's file name: 64 hex digits and ".json"; a writer's leftover: that and ".tmpXXXXXX". */
static int entry_name(const char *name, int *tmp)
{
    size_t n = strlen(name);
    if (n < 69 || strspn(name, "0123456789abcdef") != 64 || strncmp(name + 64, ".json", 5) != 0)
        return 0;
    *tmp = n > 69;
    return n == 69 || strncmp(name + 69, ".tmp", 4) == 0;
}

typedef int each_fn(const char *path, const char *name, int tmp, void *arg);

static int each_entry(const char *dir, each_fn *fn, void *arg, struct ar_error *err)
{
    size_t n = strlen(dir) + sizeof("/calls");
    char *calls = malloc(n);
    if (!calls)
        return ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    snprintf(calls, n, "%s/calls", dir);
    DIR *d = opendir(calls);
    if (!d) {
        int e = errno;
        free(calls);
        if (e == ENOENT)
            return 0; /* nothing cached yet */
        return ar_error_set_sys(err, AR_EIO, e, dir, "cannot read cache directory '%s': %s", dir,
                                strerror(e));
    }
    int rc = 0;
    for (struct dirent *ent; rc == 0 && (ent = readdir(d));) {
        int tmp;
        if (!entry_name(ent->d_name, &tmp))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", calls, ent->d_name);
        rc = fn(path, ent->d_name, tmp, arg);
    }
    closedir(d);
    free(calls);
    return rc;
}

static int stat_one(const char *path, const char *name, int tmp, void *arg)
{
    (void)name;
    struct ar_cache_stats *st = arg;
    struct stat sb;
    if (tmp || stat(path, &sb) != 0)
        return 0;
    struct ar_cassette c;
    ar_cassette_init(&c);
    if (ar_cassette_load(path, &c, NULL) == 0) {
        st->entries++;
        st->bytes += (uint64_t)sb.st_size;
        if (!st->oldest || c.recorded_at < st->oldest)
            st->oldest = c.recorded_at;
        if (c.recorded_at > st->newest)
            st->newest = c.recorded_at;
    } else {
        st->corrupt++;
    }
    ar_cassette_finish(&c);
    return 0;
}

int ar_cache_stats(const char *dir, struct ar_cache_stats *st, struct ar_error *err)
{
    memset(st, 0, sizeof(*st));
    return each_entry(dir, stat_one, st, err);
}

struct clear_ctx {
    uint64_t removed;
    struct ar_error *err;
};

static int clear_one(const char *path, const char *name, int tmp, void *arg)
{
    (void)name;
    struct clear_ctx *cx = arg;
    if (unlink(path) == 0) {
        cx->removed += !tmp;
        return 0;
    }
    if (errno == ENOENT) /* a concurrent clear got there first */
        return 0;
    int e = errno;
    return ar_error_set_sys(cx->err, AR_EIO, e, path, "cannot remove '%s': %s", path, strerror(e));
}

int ar_cache_clear(const char *dir, uint64_t *removed, struct ar_error *err)
{
    struct clear_ctx cx = { 0, err };
    int rc = each_entry(dir, clear_one, &cx, err);
    if (removed)
        *removed = cx.removed;
    return rc;
}
