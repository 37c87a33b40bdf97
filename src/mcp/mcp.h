/*
 * agentrun as a Model Context Protocol server on stdin/stdout (docs/mcp.md):
 * what `agentrun mcp` runs. A client of the public library, as the CLI is:
 * every tool call is a run, review, extraction, ranking or route of
 * include/agentrun, started on the caller's libuv loop.
 *
 * What a call may spend, read, call and write is the library's rule
 * (agentrun/share.h): the operator's flags make the share in run.share, every
 * call's run options hold it, and the library refuses what it does not allow;
 * the calling model's arguments can ask for less, never more.
 *
 * Protocol for the caller:
 *   1. struct ar_mcp_options o; ar_mcp_options_init(&o); set the posture and
 *      o.run (every call's defaults: provider, model, timeouts, logger…);
 *   2. ar_mcp_server_start(loop, &o, done, arg, &server, &err);
 *   3. run the loop; on a signal call ar_mcp_server_stop(server) (a second
 *      stop SIGKILLs the CLIs at once);
 *   4. done(server, arg) comes once, when the input ended (or stop), every
 *      call's CLI is gone and every answer is written (or the client is gone),
 *      from the last of the server's close callbacks; the server is freed when
 *      it returns.
 */
#ifndef AR_MCP_MCP_H
#define AR_MCP_MCP_H

#include <stddef.h>
#include <uv.h>

#include "agentrun/agentrun.h"

/* The longest message (one line) by default: 4 MiB. */
#define AR_MCP_MAX_MESSAGE ((size_t)4 << 20)

struct ar_mcp_options {
    /* Every call's defaults (provider, model, fallback, timeouts, prompts_dir, prices,
     * record/replay, cache, logger) and run.share, the rules every call lives under
     * (budget, CLIs at once, providers, directories, edits). Copied; its strings and the
     * share must outlive the server. */
    struct ar_run_options run;
    int allow_edits;     /* the share lets runs edit: only what tools/list says (readOnlyHint) */
    unsigned jobs;       /* calls whose CLIs may run at once: the share's max_calls, which the
                            caller sets alike; jobs + 256 calls may be open (default 4) */
    size_t max_message;  /* the longest line read (default AR_MCP_MAX_MESSAGE) */
    int in_fd, out_fd;   /* default 0 and 1 */
    const char *version; /* serverInfo.version */
};

void ar_mcp_options_init(struct ar_mcp_options *o);

struct ar_mcp_server;
typedef void ar_mcp_done_fn(struct ar_mcp_server *server, void *arg);

/*
 * Starts serving on loop: reads in_fd (a pipe, a terminal, a socket or a
 * file), writes protocol messages only to out_fd (on a descriptor of its own:
 * out_fd stays the caller's; in_fd, once a pipe or terminal handle holds it, is
 * closed with it). Returns 0 (done will come), or a negative AR_E… code with
 * err set: done never comes, and the handles opened so far are closing on the
 * loop (run it before uv_loop_close(); their last callback frees the server).
 * It never runs the loop itself.
 */
int ar_mcp_server_start(uv_loop_t *loop, const struct ar_mcp_options *o, ar_mcp_done_fn *done,
                        void *arg, struct ar_mcp_server **out, struct ar_error *err);

/* Stops reading and cancels every call (their CLIs get SIGTERM; called again, SIGKILL). */
void ar_mcp_server_stop(struct ar_mcp_server *s);

#endif
