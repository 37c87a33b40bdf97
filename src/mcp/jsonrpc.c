/*
 * JSON-RPC 2.0 over newline-delimited stdio, as MCP's stdio transport frames
 * it: the line framing with its bound, the parse of one message, and the
 * messages the server writes. Pure functions over bytes (jsonrpc.h).
 */
#include "mcp/jsonrpc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/error.h"

void ar_rpc_lines_init(struct ar_rpc_lines *l, size_t max)
{
    memset(l, 0, sizeof(*l));
    l->max = max;
    /* One byte more than a line may hold, so a line at the bound still fits. */
    ar_buf_init(&l->buf, max + 1);
}

void ar_rpc_lines_finish(struct ar_rpc_lines *l)
{
    ar_buf_finish(&l->buf);
    l->skipping = 0;
}

static void hand_on(struct ar_rpc_lines *l, const char *p, size_t n, ar_rpc_line_fn *fn, void *arg)
{
    if (n && p[n - 1] == '\r')
        n--;
    fn(arg, p, n, 0);
}

int ar_rpc_lines_feed(struct ar_rpc_lines *l, const char *data, size_t n, ar_rpc_line_fn *fn,
                      void *arg)
{
    while (n) {
        const char *nl = memchr(data, '\n', n);
        size_t take = nl ? (size_t)(nl - data) : n;
        if (l->skipping) {
            /* The rest of a line already reported as too long. */
        } else if (l->buf.len + take > l->max) {
            ar_buf_reset(&l->buf);
            l->skipping = 1;
            fn(arg, NULL, l->max, 1);
        } else if (nl && !l->buf.len) {
            hand_on(l, data, take, fn, arg); /* a whole line in this read: no copy */
        } else if (ar_buf_append(&l->buf, data, take) < 0) {
            return AR_ENOMEM;
        } else if (nl) {
            hand_on(l, l->buf.data, l->buf.len, fn, arg);
            ar_buf_reset(&l->buf);
        }
        if (!nl)
            break;
        l->skipping = 0;
        data = nl + 1;
        n -= take + 1;
    }
    return 0;
}

void ar_rpc_lines_end(struct ar_rpc_lines *l, ar_rpc_line_fn *fn, void *arg)
{
    if (!l->skipping && l->buf.len)
        hand_on(l, l->buf.data, l->buf.len, fn, arg);
    ar_buf_reset(&l->buf);
    l->skipping = 0;
}

/* ---- numbers jansson cannot hold ------------------------------------------------------- */

/*
 * jansson keeps an integer in 64 bits and a real in a double, and refuses a
 * whole line holding any other number (json_error_numeric_overflow): the
 * request could not even be answered, its id unread. Such a line is read once
 * more with each of those numbers written as a wide number: a string that
 * starts with a NUL, then 'i' (an integer) or 'r' (a real), then the number as
 * written. No string of a client's starts so: jansson refuses a NUL in a
 * string unless told (JSON_ALLOW_NUL), and the second read, which is told, is
 * made only when no string of the line escapes one.
 */

/* 'i' or 'r' when the number token p (n bytes) is one jansson cannot hold, as jansson
 * decides it (strtoll's or strtod's ERANGE), else 0. */
static int number_wide(const char *p, size_t n)
{
    int real = memchr(p, '.', n) || memchr(p, 'e', n) || memchr(p, 'E', n);
    char *t = strndup(p, n);
    int wide = 0;
    if (!t)
        return 0;
    errno = 0;
    if (real) {
        double d = strtod(t, NULL);
        wide = errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL);
    } else {
        (void)strtoll(t, NULL, 10);
        wide = errno == ERANGE;
    }
    free(t);
    return wide ? (real ? 'r' : 'i') : 0;
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The length of the JSON number (RFC 8259's grammar) at p, n bytes at most; 0: none. */
static size_t number_len(const char *p, size_t n)
{
    size_t i = p[0] == '-';
    if (i < n && p[i] == '0')
        i++;
    else if (i < n && digit(p[i]))
        while (i < n && digit(p[i]))
            i++;
    else
        return 0;
    if (i + 1 < n && p[i] == '.' && digit(p[i + 1]))
        for (i++; i < n && digit(p[i]);)
            i++;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (p[j] == '+' || p[j] == '-'))
            j++;
        if (j < n && digit(p[j]))
            for (i = j; i < n && digit(p[i]);)
                i++;
    }
    return i;
}

/* The line into b with every number jansson cannot hold as a wide number's string
 * ("\u0000i123…"). Returns 0, 1 when there is none or a string escapes a NUL (the line
 * stays unreadable), or AR_ENOMEM. */
static int widen(const char *p, size_t n, struct ar_buf *b)
{
    size_t i = 0, from = 0;
    int any = 0;
    while (i < n) {
        if (p[i] == '"') {
            for (i++; i < n && p[i] != '"'; i++) {
                if (p[i] != '\\')
                    continue;
                if (n - i > 5 && memcmp(p + i + 1, "u0000", 5) == 0)
                    return 1;
                i++;
            }
            i++;
        } else if (p[i] == '-' || digit(p[i])) {
            /* Only a whole number by the grammar is rewritten: jansson still judges what
             * follows it, so the wide number's text is always a valid JSON number. */
            size_t at = i, len = number_len(p + i, n - i);
            i += len ? len : 1;
            int kind = len ? number_wide(p + at, len) : 0;
            if (!kind)
                continue;
            char head[8] = "\"\\u0000";
            head[7] = (char)kind;
            if (ar_buf_append(b, p + from, at - from) < 0 || ar_buf_append(b, head, 8) < 0 ||
                ar_buf_append(b, p + at, i - at) < 0 || ar_buf_putc(b, '"') < 0)
                return AR_ENOMEM;
            from = i;
            any = 1;
        } else {
            i++;
        }
    }
    if (ar_buf_append(b, p + from, n - from) < 0)
        return AR_ENOMEM;
    return any ? 0 : 1;
}

static json_t *load_widened(const char *line, size_t len)
{
    struct ar_buf b;
    json_t *root = NULL;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (widen(line, len, &b) == 0)
        root = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    ar_buf_finish(&b);
    return root;
}

/* The kind of a wide number ('i', 'r'), else 0; *text its number as written. */
static int wide_kind(const json_t *v, const char **text)
{
    const char *s = json_string_value(v);
    if (!s || json_string_length(v) < 3 || s[0] != '\0' || (s[1] != 'i' && s[1] != 'r'))
        return 0;
    if (text)
        *text = s + 2;
    return s[1];
}

int ar_rpc_is_wide(const json_t *v, const char **text)
{
    return wide_kind(v, text) != 0;
}

int ar_rpc_wide_find(const json_t *v, char *where, size_t n)
{
    size_t at = strnlen(where, n);
    if (ar_rpc_is_wide(v, NULL))
        return 1;
    if (json_is_object(v)) {
        const char *key;
        json_t *x;
        json_object_foreach((json_t *)v, key, x)
        {
            /* JSON Pointer: '~' as "~0", '/' as "~1". */
            size_t w = at;
            if (w + 1 < n)
                where[w++] = '/';
            for (const char *k = key; *k && w + 2 < n; k++) {
                if (*k == '~' || *k == '/') {
                    where[w++] = '~';
                    where[w++] = *k == '~' ? '0' : '1';
                } else {
                    where[w++] = *k;
                }
            }
            where[w < n ? w : n - 1] = '\0';
            if (ar_rpc_wide_find(x, where, n))
                return 1;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            snprintf(where + at, n - at, "/%zu", i);
            if (ar_rpc_wide_find(x, where, n))
                return 1;
        }
    }
    if (at < n)
        where[at] = '\0';
    return 0;
}

/* ---- one message ---------------------------------------------------------------------- */

static int invalid(struct ar_rpc_message *m, const char *why)
{
    snprintf(m->error, sizeof(m->error), "invalid request: %s", why);
    return AR_RPC_INVALID_REQUEST;
}

/* MCP's ids: a string or an integer (a wide one too), never null (the 2025-06-18 base
 * protocol). */
static int id_ok(const json_t *id)
{
    int wide = wide_kind(id, NULL);
    return (json_is_string(id) && !wide) || json_is_integer(id) || wide == 'i';
}

int ar_rpc_message_parse(const char *line, size_t len, struct ar_rpc_message *m)
{
    json_error_t je;
    memset(m, 0, sizeof(*m));
    m->root = json_loadb(line, len, JSON_DECODE_ANY, &je);
    if (!m->root && json_error_code(&je) == json_error_numeric_overflow)
        m->root = load_widened(line, len);
    if (!m->root) {
        snprintf(m->error, sizeof(m->error), "parse error: %.100s at byte %d", je.text,
                 je.position);
        return AR_RPC_PARSE_ERROR;
    }
    if (json_is_array(m->root))
        return invalid(m, "batches are not supported (one message a line)");
    if (!json_is_object(m->root))
        return invalid(m, "a message is a JSON object");
    json_t *id = json_object_get(m->root, "id");
    if (id && id_ok(id))
        m->id = id;
    json_t *v = json_object_get(m->root, "jsonrpc");
    if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
        return invalid(m, "\"jsonrpc\" must be \"2.0\"");
    if (id && !id_ok(id))
        return invalid(m, "\"id\" must be a string or an integer");
    json_t *method = json_object_get(m->root, "method");
    if (!method) {
        int has_result = json_object_get(m->root, "result") != NULL;
        int has_error = json_object_get(m->root, "error") != NULL;
        if (!id || has_result == has_error)
            return invalid(m, "no \"method\"");
        m->kind = AR_RPC_RESPONSE;
        return 0;
    }
    if (!json_is_string(method) || !*json_string_value(method))
        return invalid(m, "\"method\" must be a non-empty string");
    m->method = json_string_value(method);
    json_t *params = json_object_get(m->root, "params");
    if (params && !json_is_object(params) && !json_is_array(params))
        return invalid(m, "\"params\" must be an object or an array");
    m->params = params;
    m->kind = id ? AR_RPC_REQUEST : AR_RPC_NOTIFICATION;
    return 0;
}

void ar_rpc_message_finish(struct ar_rpc_message *m)
{
    json_decref(m->root);
    memset(m, 0, sizeof(*m));
}

json_t *ar_rpc_result_new(json_t *id, json_t *result)
{
    /* "o" takes result, also when the pack fails (jansson 2.11 and later). */
    if (!result)
        return NULL;
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result",
                     result);
}

json_t *ar_rpc_error_new(json_t *id, int code, const char *message, json_t *data)
{
    json_t *e = json_pack("{s:i, s:s}", "code", code, "message", message);
    if (e && data)
        json_object_set(e, "data", data);
    json_decref(data);
    if (!e)
        return NULL;
    json_t *o =
        json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", e);
    return o;
}

json_t *ar_rpc_notification_new(const char *method, json_t *params)
{
    if (!params)
        return NULL;
    return json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params);
}

/* Writes each wide number of the dump s (n bytes) back as its number, in place (its
 * string is longer than the number). Returns the new length. */
static size_t unwiden(char *s, size_t n)
{
    size_t r = 0, w = 0;
    while (r < n) {
        if (s[r] != '"') {
            s[w++] = s[r++];
        } else if (n - r > 8 && memcmp(s + r, "\"\\u0000", 7) == 0 &&
                   (s[r + 7] == 'i' || s[r + 7] == 'r')) {
            /* A number's characters hold no quote and no backslash. */
            for (r += 8; r < n && s[r] != '"';)
                s[w++] = s[r++];
            r++;
        } else {
            s[w++] = s[r++];
            while (r < n && s[r] != '"') {
                if (s[r] == '\\' && r + 1 < n)
                    s[w++] = s[r++];
                s[w++] = s[r++];
            }
            if (r < n)
                s[w++] = s[r++];
        }
    }
    s[w] = '\0';
    return w;
}

char *ar_rpc_dump(const json_t *v, size_t *len)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    if (memmem(s, n, "\"\\u0000", 7))
        n = unwiden(s, n);
    *len = n;
    return s;
}

char *ar_rpc_encode(const json_t *msg, size_t *len)
{
    size_t n;
    char *s = ar_rpc_dump(msg, &n);
    if (!s)
        return NULL;
    char *out = realloc(s, n + 2);
    if (!out) {
        free(s);
        return NULL;
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    *len = n + 1;
    return out;
}
