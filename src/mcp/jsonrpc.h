/*
 * MCP's stdio transport: newline-delimited JSON-RPC 2.0 (one message a line,
 * no embedded newline). The framing cuts bytes into lines, each at most a
 * bound; the parser turns one line into a request, a notification or a
 * response, or says which JSON-RPC error it deserves. Nothing here touches a
 * file descriptor or the loop, so the unit tests and the fuzz target drive it
 * with bytes alone.
 */
#ifndef AR_MCP_JSONRPC_H
#define AR_MCP_JSONRPC_H

#include <jansson.h>
#include <stddef.h>

#include "util/buf.h"

/* JSON-RPC 2.0's error codes (the spec's section 5.1). */
enum {
    AR_RPC_PARSE_ERROR = -32700,
    AR_RPC_INVALID_REQUEST = -32600,
    AR_RPC_METHOD_NOT_FOUND = -32601,
    AR_RPC_INVALID_PARAMS = -32602,
    AR_RPC_INTERNAL_ERROR = -32603,
};

/* ---- the framing ---------------------------------------------------------------------- */

/*
 * A complete line (without its "\n" and a "\r" before it), borrowed for the
 * call; or, with too_long set, the news that a line passed the bound (line is
 * then NULL, len the bound): its bytes were dropped up to its newline.
 */
typedef void ar_rpc_line_fn(void *arg, const char *line, size_t len, int too_long);

struct ar_rpc_lines {
    struct ar_buf buf; /* the start of the line not yet ended */
    size_t max;        /* the longest line taken */
    int skipping;      /* inside a line past max: dropping up to its newline */
};

/* Sets up l for lines of at most max bytes (> 0). */
void ar_rpc_lines_init(struct ar_rpc_lines *l, size_t max);

/*
 * Feeds n bytes: fn gets every line they complete, in order. A line past the
 * bound is reported once (too_long) and its bytes are not kept, so memory
 * stays within max whatever comes. Returns 0, or AR_ENOMEM.
 */
int ar_rpc_lines_feed(struct ar_rpc_lines *l, const char *data, size_t n, ar_rpc_line_fn *fn,
                      void *arg);

/* The input ended: a last line without its newline is handed to fn. */
void ar_rpc_lines_end(struct ar_rpc_lines *l, ar_rpc_line_fn *fn, void *arg);

void ar_rpc_lines_finish(struct ar_rpc_lines *l);

/* ---- one message ---------------------------------------------------------------------- */

enum ar_rpc_kind {
    AR_RPC_REQUEST = 0,  /* method and id */
    AR_RPC_NOTIFICATION, /* method, no id */
    AR_RPC_RESPONSE,     /* id with result or error (an answer to a request of ours) */
};

struct ar_rpc_message {
    enum ar_rpc_kind kind;
    json_t *root;       /* the message: a new reference, released by ar_rpc_message_finish() */
    json_t *id;         /* borrowed from root: a string, an integer or a wide integer (below);
                           NULL for a notification (and for an invalid message whose id could
                           not be read) */
    const char *method; /* borrowed from root, or NULL for a response */
    json_t *params;     /* borrowed from root: an object, or NULL when absent */
    char error[160];    /* when ar_rpc_message_parse() fails: the message for the error */
};

/*
 * Parses one line. Returns 0 with *m filled, or the JSON-RPC error code the
 * line deserves with m->error saying why: AR_RPC_PARSE_ERROR (not JSON),
 * AR_RPC_INVALID_REQUEST (JSON, but no JSON-RPC 2.0 message: not an object, a
 * batch, no "jsonrpc": "2.0", a bad id or method, params neither object nor
 * array), in which case m->id is the id when one could be read (answer with
 * it), else NULL (answer with id null). Either way call ar_rpc_message_finish().
 *
 * A number jansson cannot hold (an integer past 64 bits, a real past a
 * double's range) does not make the line unreadable: it is read as a wide
 * number, a string value that keeps the number as written (ar_rpc_is_wide()).
 * A wide integer is a valid id, and ar_rpc_encode() writes it back as the same
 * number, so such a request is answered with its own id.
 */
int ar_rpc_message_parse(const char *line, size_t len, struct ar_rpc_message *m);

/* 1 when v is a wide number of ar_rpc_message_parse(); *text (may be NULL) gets the number
 * as written, borrowed from v. No string a client sends is one: those never hold a NUL. */
int ar_rpc_is_wide(const json_t *v, const char **text);

/* The first wide number inside v (v itself included) as a JSON Pointer into where (n
 * bytes, "" for v itself): 1, or 0 when v holds none. */
int ar_rpc_wide_find(const json_t *v, char *where, size_t n);

void ar_rpc_message_finish(struct ar_rpc_message *m);

/* ---- what the server writes ----------------------------------------------------------- */

/* {"jsonrpc":"2.0","id":id,"result":result}: a new reference; result is taken, id borrowed
 * (copied). NULL when out of memory. */
json_t *ar_rpc_result_new(json_t *id, json_t *result);

/* {"jsonrpc":"2.0","id":id or null,"error":{"code","message"[,"data"]}}: a new reference;
 * id borrowed (NULL: null), data taken (may be NULL). */
json_t *ar_rpc_error_new(json_t *id, int code, const char *message, json_t *data);

/* {"jsonrpc":"2.0","method":method,"params":params}: a new reference; params taken. */
json_t *ar_rpc_notification_new(const char *method, json_t *params);

/*
 * v as compact JSON text, non-ASCII as UTF-8, wide numbers written as the numbers they
 * were: a string the caller free()s (*len its length), or NULL when out of memory.
 */
char *ar_rpc_dump(const json_t *v, size_t *len);

/*
 * The message as one line: ar_rpc_dump()'s text, then "\n" (JSON_COMPACT never writes
 * a raw newline: strings escape theirs). A string the caller free()s (*len its length),
 * or NULL when out of memory.
 */
char *ar_rpc_encode(const json_t *msg, size_t *len);

#endif
