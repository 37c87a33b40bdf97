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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"
#include "util/file.h"

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

int ar_cache_get(const char *dir, const char *key, const char *bin, uint64_t ttl_s,
                 struct ar_cassette *hit)
{
    char *path = entry_path(dir, key);
    if (!path)
        return 0;
    struct ar_cassette c;
    ar_cassette_init(&c);
    int ok = ar_is_file(path) && ar_cassette_load(path, &c, NULL) == 0;
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

int ar_cache_put(const char *dir, const char *key, const struct ar_cassette *c,
                 struct ar_error *err)
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
    if (!path)
        return ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    rc = ar_cassette_save(c, path, err);
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
