/*
 * A result within what clients take (result.h).
 *
 * claude (2.1.332, measured by tests/e2e/test_mcp.py), as an MCP client,
 * hands its model a result's structuredContent whole, as JSON text, up to
 * 50,000 characters; a longer one becomes a file of claude's own with a 2 KB
 * preview, which the calling model may not be allowed to read (a 330 KB review
 * was lost that way). So the server keeps structuredContent within
 * AR_MCP_RESULT_MAX and writes what does not fit, whole, to files under its
 * own directory, where the calling CLI works and can read them: a string as
 * its text (a model reads a file a line at a time; a 330 KB JSON string is one
 * line), anything else as indented JSON. The files live as long as the server.
 */
#include "mcp/result.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp/jsonrpc.h"
#include "util/buf.h"
#include "util/json_dump.h"

/* Room kept for "truncated_result" itself: the paths of the members left out. */
#define NOTE_ROOM ((size_t)8 << 10)

static void warn(const struct ar_mcp_results *rs, const char *msg)
{
    if (rs->log && rs->log->fn && AR_LOG_WARN <= rs->log->level)
        rs->log->fn(rs->log->arg, AR_LOG_WARN, NULL, NULL, msg);
}

void ar_mcp_results_init(struct ar_mcp_results *rs, const char *base, const struct ar_logger *log)
{
    memset(rs, 0, sizeof(*rs));
    rs->base = base;
    rs->log = log;
    rs->fd = -1;
}

void ar_mcp_results_finish(struct ar_mcp_results *rs)
{
    size_t i;
    json_t *name;
    json_array_foreach(rs->files, i, name) unlinkat(rs->fd, json_string_value(name), 0);
    if (rs->fd >= 0)
        close(rs->fd);
    if (rs->dir)
        rmdir(rs->dir);
    free(rs->dir);
    json_decref(rs->files);
    ar_mcp_results_init(rs, rs->base, rs->log);
}

/* The length of v's JSON as the server writes it (SIZE_MAX / 4 when out of memory: too
 * long for anything, and still safe to add to). */
static size_t dumped_len(const json_t *v)
{
    size_t n = 0;
    char *t = ar_rpc_dump(v, &n);
    if (!t)
        return SIZE_MAX / 4;
    free(t);
    return n;
}

/* The directory of the files, made on first use: .agentrun/mcp/PID under the server's
 * directory, each part opened without following a link (the checkout is not trusted),
 * with .agentrun/mcp/.gitignore keeping it all out of git. Its descriptor, or -1 with
 * why (n bytes) set. */
static int results_dir(struct ar_mcp_results *rs, char *why, size_t n)
{
    char pid[24];
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    const char *parts[] = { ".agentrun", "mcp", pid };
    if (rs->fd >= 0)
        return rs->fd;
    int fd = open(rs->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (size_t i = 0; fd >= 0 && i < sizeof(parts) / sizeof(parts[0]); i++) {
        int next = -1;
        if (mkdirat(fd, parts[i], 0700) == 0 || errno == EEXIST)
            next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        if (next >= 0 && i == 1) {
            int g = openat(next, ".gitignore", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           0644);
            if (g >= 0 && write(g, "*\n", 2) != 2)
                warn(rs, "cannot write .agentrun/mcp/.gitignore");
            if (g >= 0)
                close(g);
        }
        close(fd);
        fd = next;
        errno = e;
    }
    if (fd < 0) {
        snprintf(why, n, "cannot make %.200s/.agentrun/mcp/%s: %s", rs->base, pid, strerror(errno));
        return -1;
    }
    size_t len = strlen(rs->base) + sizeof("/.agentrun/mcp/") + strlen(pid);
    if (!(rs->dir = malloc(len)) || !(rs->files || (rs->files = json_array()))) {
        free(rs->dir);
        rs->dir = NULL;
        close(fd);
        snprintf(why, n, "out of memory");
        return -1;
    }
    snprintf(rs->dir, len, "%s/.agentrun/mcp/%s", rs->base, pid);
    return rs->fd = fd;
}

/* The file's content: a string as its text, anything else as indented JSON. */
static int member_text(const json_t *v, struct ar_buf *b)
{
    if (json_is_string(v))
        return ar_buf_append(b, json_string_value(v), json_string_length(v));
    struct ar_buf compact;
    ar_buf_init(&compact, AR_BUF_UNLIMITED);
    int rc = ar_json_dump_compact(v, &compact);
    if (rc == 0)
        rc = ar_json_text_indent(compact.data, compact.len, 2, b);
    if (rc == 0)
        rc = ar_buf_putc(b, '\n');
    ar_buf_finish(&compact);
    return rc;
}

/* Writes member key's whole value v to a file of its own. Its path (a new reference), or
 * NULL with why (n bytes) set. */
static json_t *write_member(struct ar_mcp_results *rs, const char *key, const json_t *v, char *why,
                            size_t n)
{
    int dir = results_dir(rs, why, n);
    if (dir < 0)
        return NULL;
    char name[96], safe[48];
    size_t k = 0;
    for (; key[k] && k < sizeof(safe) - 1; k++) {
        char c = key[k];
        int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        safe[k] = ok ? c : '_';
    }
    safe[k] = '\0';
    snprintf(name, sizeof(name), "%lu-%s.%s", rs->n_cut, safe, json_is_string(v) ? "txt" : "json");
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    json_t *path = NULL;
    int fd = -1;
    if (member_text(v, &b) < 0) {
        snprintf(why, n, "out of memory");
    } else if ((fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                            0600)) < 0) {
        snprintf(why, n, "cannot write %.200s/%s: %s", rs->dir, name, strerror(errno));
    } else {
        json_array_append_new(rs->files, json_string(name));
        size_t at = 0;
        while (at < b.len) {
            ssize_t w = write(fd, b.data + at, b.len - at);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            at += (size_t)w;
        }
        int e = at < b.len ? errno : 0;
        if (close(fd) < 0 && !e)
            e = errno;
        char full[PATH_MAX];
        if (e)
            snprintf(why, n, "cannot write %.200s/%s: %s", rs->dir, name, strerror(e));
        else if (snprintf(full, sizeof(full), "%s/%s", rs->dir, name) >= (int)sizeof(full))
            snprintf(why, n, "the path of %s is too long", name);
        else
            path = ar_json_text(full, strlen(full)); /* a path not UTF-8 keeps U+FFFD */
    }
    ar_buf_finish(&b);
    return path;
}

/* The outputSchema's required members (a new reference: an array), or NULL. */
static json_t *required_of(const struct ar_mcp_tool *t)
{
    json_t *schema = json_loads(t->output_schema, 0, NULL);
    json_t *req = json_incref(json_object_get(schema, "required"));
    json_decref(schema);
    return req;
}

static int is_required(const json_t *required, const char *key)
{
    size_t i;
    json_t *v;
    json_array_foreach(required, i, v)
    {
        if (strcmp(json_string_value(v), key) == 0)
            return 1;
    }
    return 0;
}

/* Of the array v that does not fit, the first items that do, counted into *used. */
static json_t *array_part(const json_t *v, size_t *used, size_t budget)
{
    json_t *part = json_array(), *item;
    size_t i;
    json_array_foreach(v, i, item)
    {
        size_t len = dumped_len(item) + 1;
        if (!part || *used + len > budget)
            break;
        json_array_append(part, item);
        *used += len;
    }
    return part;
}

void ar_mcp_result_fit(struct ar_mcp_results *rs, const struct ar_mcp_tool *tool, json_t *r)
{
    json_t *sc = json_object_get(r, "structuredContent");
    size_t total = sc ? dumped_len(sc) : 0;
    if (total <= AR_MCP_RESULT_MAX)
        return;
    rs->n_cut++;
    json_t *required = required_of(tool), *kept = json_object(), *left = json_object();
    struct ar_buf note;
    ar_buf_init(&note, AR_BUF_UNLIMITED);
    size_t used = 2, budget = AR_MCP_RESULT_MAX - NOTE_ROOM;
    const char *key;
    json_t *v;
    json_object_foreach(sc, key, v)
    {
        size_t len = dumped_len(v) + strlen(key) + 4; /* "key":v, */
        if (used + len <= budget || is_required(required, key)) {
            json_object_set(kept, key, v);
            used += len;
            continue;
        }
        json_t *entry = json_object(), *part = NULL;
        if (json_is_array(v)) {
            used += strlen(key) + 6;
            if ((part = array_part(v, &used, budget))) {
                json_object_set(kept, key, part);
                json_object_set_new(entry, "kept", json_integer((json_int_t)json_array_size(part)));
                json_object_set_new(entry, "of", json_integer((json_int_t)json_array_size(v)));
            }
        }
        char why[320] = "out of memory";
        json_t *path = write_member(rs, key, v, why, sizeof(why));
        /* The message may quote a directory's name: not UTF-8 becomes U+FFFD. */
        json_t *where = path ? path : ar_json_text(why, strlen(why));
        size_t bytes = json_is_string(v) ? json_string_length(v) : dumped_len(v);
        json_object_set_new(entry, "bytes", json_integer((json_int_t)bytes));
        json_object_set_new(entry, "file", path ? json_incref(path) : json_null());
        if (!path)
            json_object_set(entry, "error", where);
        ar_buf_printf(&note, "%s%s", note.len ? "; " : "", key);
        if (part)
            ar_buf_printf(&note, " (%zu of %zu items here)", json_array_size(part),
                          json_array_size(v));
        ar_buf_printf(&note, path ? ", whole in %s" : ", lost: %s", json_string_value(where));
        json_object_set_new(left, key, entry);
        json_decref(where);
        json_decref(part);
    }
    json_object_set_new(kept, "truncated_result",
                        json_pack("{s:I, s:I, s:o}", "bytes", (json_int_t)total, "limit",
                                  (json_int_t)AR_MCP_RESULT_MAX, "left_out", left));
    json_object_set_new(r, "structuredContent", kept);
    json_t *text = json_object_get(json_array_get(json_object_get(r, "content"), 0), "text");
    struct ar_buf t;
    ar_buf_init(&t, AR_BUF_UNLIMITED);
    if (json_is_string(text) &&
        ar_buf_printf(&t, "%s\n[the result (%zu bytes) is cut to fit the client: %s]",
                      json_string_value(text), total, ar_buf_cstr(&note)) == 0)
        json_string_setn(text, t.data, t.len);
    ar_buf_finish(&t);
    ar_buf_finish(&note);
    json_decref(required);
}
