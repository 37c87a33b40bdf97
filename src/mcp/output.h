/*
 * The MCP server's output: protocol messages, one a line, written from the
 * loop and never waited for. A pipe, a socket or a terminal is written with
 * uv_write on a descriptor of its own; a file is written at once (a file never
 * makes anyone wait).
 *
 * The queue has a bound the server keeps: while more than AR_MCP_OUT_HIGH
 * bytes wait for the client, the server reads no new request (lagging) and
 * optional messages (progress) are left out; nothing else ever is. A client
 * that reads none of what waits for it for AR_MCP_OUT_WAIT_MS is taken for
 * gone, as is one whose pipe fails: nothing more is written and `broken`
 * comes from the loop, never from inside a send.
 *
 * Protocol for the server:
 *   1. ar_mcp_out_open(): 0, or an error (call ar_mcp_out_close() all the
 *      same);
 *   2. ar_mcp_out_send() any number of times;
 *   3. ar_mcp_out_busy() tells whether writes are still in flight (wait for
 *      `drained` before closing, so every answer reaches the client);
 *   4. ar_mcp_out_close(): `closed` comes once its handles are closed, unless
 *      none was open (open_handles 0: only when opening failed at once).
 */
#ifndef AR_MCP_OUTPUT_H
#define AR_MCP_OUTPUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "agentrun/agentrun.h"

/* A client that reads none of what waits for it this long is taken for gone. */
#define AR_MCP_OUT_WAIT_MS 60000

/* While more than this waits for the client, no request is read and no progress sent. */
#define AR_MCP_OUT_HIGH ((size_t)1 << 20)

typedef void ar_mcp_out_fn(void *arg);

struct ar_mcp_out {
    /* Set by the caller before ar_mcp_out_open(); each called from the loop. */
    ar_mcp_out_fn *broken;                   /* nothing more can be written */
    ar_mcp_out_fn *drained;                  /* a write in flight ended */
    void (*lagging)(void *arg, int lagging); /* past AR_MCP_OUT_HIGH (1), all written (0) */
    ar_mcp_out_fn *closed;                   /* ar_mcp_out_close() is over */
    void *arg;
    const struct ar_logger *log; /* borrowed */
    uint64_t wait_ms;            /* how long a client may read nothing (0: AR_MCP_OUT_WAIT_MS) */

    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tty_t tty;
    } h;
    int stream;       /* h is open (a pipe, a socket, a terminal); else fd is a file */
    int fd;           /* the caller's descriptor: a file is written to it */
    uv_timer_t timer; /* the watchdog, and `broken` from the loop */
    int open_handles; /* of h and timer */
    unsigned writes;  /* uv_write requests not yet called back */
    size_t queued;    /* bytes handed to uv_write so far */
    size_t seen;      /* of which written when the watchdog last looked */
    int is_broken;
    int is_lagging;
    int closing;
    unsigned long left_out; /* optional messages left out while the client lagged */
};

/* Opens the output on fd (borrowed: the caller's stays open). Returns 0, or an AR_E…
 * code with err set. */
int ar_mcp_out_open(struct ar_mcp_out *o, uv_loop_t *loop, int fd, struct ar_error *err);

/* Sends msg (taken; NULL: out of memory, logged) as one line. An optional message is
 * left out while the client lags. */
void ar_mcp_out_send(struct ar_mcp_out *o, json_t *msg, int optional);

/* 1 while writes are in flight on an output that is not broken. */
int ar_mcp_out_busy(const struct ar_mcp_out *o);

/* Closes the handles (writes still waiting are dropped); `closed` comes from the loop
 * when any was open. */
void ar_mcp_out_close(struct ar_mcp_out *o);

#endif
