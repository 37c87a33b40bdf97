/*
 * libFuzzer target for src/mcp/jsonrpc.c: the input is fed to the line framing
 * in pieces its first byte decides, with a small bound; every line is parsed
 * as a message and answered as the server would (result or error), and the
 * answer encoded. Checks: no line handed on is longer than the bound or holds
 * a newline; a parse either succeeds with a method or response kind, or gives
 * one of JSON-RPC's codes; an encoded answer is one line ending in "\n" that
 * parses back, to a response with the very id it answers (a number past 64
 * bits included: jsonrpc.h's wide numbers); the first wide number inside a
 * message is found where a JSON Pointer says.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX 256

/* msg (taken) answers the request whose id is id (NULL: id null). */
static void check_answer(json_t *msg, json_t *id)
{
    size_t len = 0;
    char *text = ar_rpc_encode(msg, &len);
    json_decref(msg);
    if (!text)
        return;
    if (!len || text[len - 1] != '\n' || memchr(text, '\n', len - 1))
        abort();
    if (!id) {
        json_t *back = json_loadb(text, len - 1, 0, NULL);
        if (!back)
            abort();
        json_decref(back);
    } else {
        struct ar_rpc_message back;
        if (ar_rpc_message_parse(text, len - 1, &back) != 0 || back.kind != AR_RPC_RESPONSE ||
            !json_equal(back.id, id))
            abort();
        ar_rpc_message_finish(&back);
    }
    free(text);
}

/* Where ar_rpc_wide_find() points in v, a wide number is. */
static void check_wide(json_t *v)
{
    char where[256] = "";
    if (!v || !ar_rpc_wide_find(v, where, sizeof(where)))
        return;
    json_t *at = v;
    /* Keys here hold no '~' or '/' escapes only when short enough to fit: walk what we can. */
    if (strlen(where) >= sizeof(where) - 2 || strchr(where, '~'))
        return;
    for (char *p = where; at && *p == '/';) {
        char *end = strchr(p + 1, '/');
        size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)n, p + 1);
        at = json_is_array(at) ? json_array_get(at, strtoul(key, NULL, 10))
                               : json_object_get(at, key);
        p += n + 1;
    }
    if (!at || !ar_rpc_is_wide(at, NULL))
        abort();
}

static void on_line(void *arg, const char *line, size_t len, int too_long)
{
    (void)arg;
    if (too_long) {
        if (line || len != MAX)
            abort();
        check_answer(ar_rpc_error_new(NULL, AR_RPC_INVALID_REQUEST, "too long", NULL), NULL);
        return;
    }
    if (len > MAX || memchr(line, '\n', len))
        abort();
    struct ar_rpc_message m;
    int rc = ar_rpc_message_parse(line, len, &m);
    if (rc < 0) {
        if (rc != AR_RPC_PARSE_ERROR && rc != AR_RPC_INVALID_REQUEST)
            abort();
        if (m.id && !json_is_string(m.id) && !json_is_integer(m.id))
            abort();
        check_answer(ar_rpc_error_new(m.id, rc, m.error, NULL), m.id);
    } else if (m.kind == AR_RPC_RESPONSE) {
        if (!m.id || m.method)
            abort();
    } else {
        if (!m.method || !*m.method || (m.kind == AR_RPC_REQUEST) != (m.id != NULL))
            abort();
        if (m.params && !json_is_object(m.params) && !json_is_array(m.params))
            abort();
        check_wide(m.params);
        if (m.id)
            check_answer(ar_rpc_result_new(m.id, json_pack("{s:s}", "method", m.method)), m.id);
    }
    ar_rpc_message_finish(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    size_t piece = (size_t)data[0] % 64 + 1;
    data++;
    size--;
    struct ar_rpc_lines l;
    ar_rpc_lines_init(&l, MAX);
    for (size_t at = 0; at < size; at += piece) {
        size_t n = size - at < piece ? size - at : piece;
        if (ar_rpc_lines_feed(&l, (const char *)data + at, n, on_line, NULL) < 0)
            abort();
    }
    ar_rpc_lines_end(&l, on_line, NULL);
    ar_rpc_lines_finish(&l);
    return 0;
}
