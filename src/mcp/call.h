/*
 * One tool call, between the server (server.c: the request, its progress
 * token, the queue and cancel) and the tools (tools.c: what the call does with
 * the library); args.c reads its arguments into the library's options.
 *
 * Life of a call:
 *   1. the server checks the arguments against the tool's inputSchema, fills
 *      `run` from them (args.c: the library's request table), and queues it;
 *   2. when a job slot is free, tool->start(c) runs: it starts the library's
 *      work on c->loop and sets c->cancel/c->handle, or answers at once;
 *   3. the tool calls ar_mcp_call_done() exactly once (from start, or from
 *      the library's done callback) and never touches c after it; the server
 *      writes the result (not for a call the client cancelled) and lets go of
 *      the call (freed once nobody up the stack still holds it).
 */
#ifndef AR_MCP_CALL_H
#define AR_MCP_CALL_H

#include <jansson.h>
#include <stddef.h>
#include <uv.h>

#include "agentrun/agentrun.h"
#include "agentrun/request.h"
#include "util/buf.h"

struct ar_mcp_call;
struct ar_mcp_task;

struct ar_mcp_tool {
    const char *name;
    const char *title;
    const char *description;
    /* JSON Schema text of the tool's own arguments (docs/prompts.md); the request keys
     * of `door` are added to its properties (ar_mcp_tool_input_schema()). */
    const char *input_schema;
    unsigned door;             /* AR_REQUEST_RUN, AR_REQUEST_TOOL, or 0: none */
    const char *output_schema; /* JSON Schema text of structuredContent */
    int uses_model;            /* calls a CLI: the share's rules apply */
    int may_edit;              /* may edit files where the share allows it (readOnlyHint) */
    /* Starts the call; ends by calling ar_mcp_call_done() once, now or from the loop. */
    void (*start)(struct ar_mcp_call *c);
};

struct ar_mcp_call {
    struct ar_mcp_server *server;
    uv_loop_t *loop;
    const struct ar_mcp_tool *tool;
    json_t *id;             /* the request's id (own reference) */
    json_t *args;           /* the arguments, checked against input_schema (own reference) */
    json_t *progress_token; /* own reference, or NULL: no progress notifications */
    double progress;        /* the last progress value sent */
    char last_tool[64];     /* the CLI's tool last reported in progress */
    /* The run options the tool starts from: the server's defaults (its share included)
     * with the call's request keys read, and the progress and on_call hooks set to the
     * server's. Strings borrowed from req. */
    struct ar_run_options run;
    struct ar_run_request *req; /* owns the strings of run (agentrun/request.h) */
    /* Set by the tool: what cancels its work (the library's ar_*_cancel()). */
    void (*cancel)(void *handle);
    void *handle;
    void *tool_state; /* the tool's own (freed by the tool before done) */
    /* A task-augmented call's task (2025-11-25), borrowed from the server's task store
     * until ar_mcp_call_done() hands the result over (then NULL); else NULL. */
    struct ar_mcp_task *task;
    int cancelled; /* the client cancelled the request (notifications/cancelled): no answer */
    int started;   /* it holds one of the server's job slots (tool->start ran) */
    int finished;  /* ar_mcp_call_done() ran: the call is over and off the server's list */
    /* Who holds the call's memory (server.c): the server's list until the call is over,
     * and each server function that calls out while it uses the call. The last to let
     * go frees it, so no caller ever holds a freed call. */
    unsigned holds;
    struct ar_mcp_call *prev, *next;
};

/* The tools, in tools/list order; NULL-terminated (tools.c; extract is extract.c). */
extern const struct ar_mcp_tool ar_mcp_tool_extract;
extern const struct ar_mcp_tool *const ar_mcp_tools[];
const struct ar_mcp_tool *ar_mcp_tool_find(const char *name);

/*
 * The call is over: structured (taken, may be NULL) is its structuredContent,
 * text its text content, is_error whether the call failed. cost_usd is what
 * it spent, known tells whether that is known (a call that made no model call
 * spent 0, known). Exactly once per call.
 */
void ar_mcp_call_done(struct ar_mcp_call *c, json_t *structured, const char *text, int is_error,
                      double cost_usd, int known);

/* The call fails before any work, with message as the text a calling model reads. */
void ar_mcp_call_fail(struct ar_mcp_call *c, const char *fmt, ...) AR_PRINTF(2, 3);

/* A progress notification (when the client asked for them): message for people. */
void ar_mcp_call_progress(struct ar_mcp_call *c, const char *message);

/* ---- what the tools share (tools.c) ---- */

/* A text content carries the answer cut here: structuredContent has all of it. */
#define AR_MCP_TEXT_MAX ((size_t)32 << 10)

/* The longest structuredContent (its JSON) a result carries: claude 2.1.332 hands its
 * model 50,000 characters of it whole and no more (server.c, fit_result: what goes past
 * it is written to files the result names). */
#define AR_MCP_RESULT_MAX ((size_t)48 << 10)

/* The argument key as a string (borrowed from c->args), or NULL. */
const char *ar_mcp_arg_str(const struct ar_mcp_call *c, const char *key);
/* 1 when the argument key is true. */
int ar_mcp_arg_bool(const struct ar_mcp_call *c, const char *key);
/* A document of the library (JSON text) as a value: a new reference, or NULL. Numbers
 * past 64 bits come back as doubles rather than failing the parse. */
json_t *ar_mcp_parse_doc(const char *text);
/* The schema argument as contract text (the caller free()s), or NULL. */
char *ar_mcp_schema_text(const struct ar_mcp_call *c);
/* Appends s to b, cut at AR_MCP_TEXT_MAX with a note of what was left out. */
void ar_mcp_put_cut(struct ar_buf *b, const char *s);

/* ---- the arguments as the library's options (args.c) ---- */

/*
 * Fills c->run from defaults and the arguments the library's request table reads for
 * the tool (c->tool->door: every key of a run call, or the model keys of the others),
 * keeping the strings in c->req. What is allowed is not decided here: the library
 * refuses what the share does not allow when the tool starts its work. Returns 0, or -1
 * after answering the call with the refusal (ar_mcp_call_refused()).
 */
int ar_mcp_call_args(struct ar_mcp_call *c, const struct ar_run_options *defaults);

/*
 * The call fails with the library's err: its message, and when a rule of the share
 * refused it, the flag the operator would need ("--allow-dir", "--providers", …).
 */
void ar_mcp_call_refused(struct ar_mcp_call *c, const struct ar_error *err);

/* "; the operator would need to start agentrun mcp with --allow-dir" when a rule of
 * the share refused err (into buf, n bytes), else "". */
const char *ar_mcp_refusal_hint(const struct ar_error *err, char *buf, size_t n);

/* The tool's inputSchema as JSON text: its own arguments and the request keys of its
 * door (agentrun/request.h), made from the library's table. A new string, or NULL. */
char *ar_mcp_tool_input_schema(const struct ar_mcp_tool *t);

#endif
