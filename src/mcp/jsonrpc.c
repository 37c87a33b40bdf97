/*
 * JSON-RPC 2.0 over newline-delimited stdio, as MCP's stdio transport frames
 * it: the line framing with its bound, the parse of one message, and the
 * messages the server writes. Pure functions over bytes (jsonrpc.h).
 */
#include "mcp/jsonrpc.h"

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

static int invalid(struct ar_rpc_message *m, const char *why)
{
    snprintf(m->error, sizeof(m->error), "invalid request: %s", why);
    return AR_RPC_INVALID_REQUEST;
}

/* MCP's ids: a string or an integer, never null (the 2025-06-18 base protocol). */
static int id_ok(const json_t *id)
{
    return json_is_string(id) || json_is_integer(id);
}

int ar_rpc_message_parse(const char *line, size_t len, struct ar_rpc_message *m)
{
    json_error_t je;
    memset(m, 0, sizeof(*m));
    m->root = json_loadb(line, len, JSON_DECODE_ANY, &je);
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

char *ar_rpc_encode(const json_t *msg, size_t *len)
{
    /* JSON_COMPACT never writes a raw newline: strings escape theirs. */
    char *s = json_dumps(msg, JSON_COMPACT);
    if (!s)
        return NULL;
    size_t n = strlen(s);
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
