/*
 * The task store of protocol 2025-11-25: a tools/call sent with params.task
 * is answered at once with a task, which the client polls (tasks/get), waits
 * on (tasks/result), lists (tasks/list) or cancels (tasks/cancel). The store
 * keeps each task's state and, once the call is over, its result, for the
 * task's ttl (from its creation) or, without one, until the server ends.
 *
 * Ownership: the store owns every task, and only the store frees one
 * (ar_mcp_tasks_expire(), ar_mcp_tasks_finish()). A task's call borrows it
 * from ar_mcp_task_create() until it hands its result over
 * (ar_mcp_task_over()), and the store never drops a task before that: a
 * cancelled task, or one whose ttl passed, stays while its call is still
 * ending, so the call never writes to a freed task and its result is kept
 * for tasks/result (MCP lets a receiver delete a task once its ttl passed; it
 * does not have to before the result is in).
 */
#ifndef AR_MCP_TASKS_H
#define AR_MCP_TASKS_H

#include <jansson.h>
#include <stdint.h>

/* The most tasks kept at once: creating one more fails (the client may wait). */
#define AR_MCP_MAX_TASKS 1024

/* The most tasks one tasks/list answer holds; nextCursor leads on. */
#define AR_MCP_TASKS_PAGE 100

enum ar_mcp_task_status {
    AR_TASK_WORKING = 0,
    AR_TASK_COMPLETED,
    AR_TASK_FAILED,
    AR_TASK_CANCELLED,
};

struct ar_mcp_task {
    char id[33]; /* 128 random bits in hex: a task id is not guessable */
    enum ar_mcp_task_status status;
    char *message;                   /* statusMessage, or NULL */
    uint64_t created_ms, updated_ms; /* wall clock */
    int64_t ttl_ms;                  /* < 0: none (null) */
    uint64_t serial;                 /* 1, 2, … in creation order: the list's cursor */
    int over;                        /* the call handed its result over: the task may go */
    json_t *result;                  /* the CallToolResult once over (own reference) */
    json_t *waiters;                 /* ids of tasks/result requests waiting (array) */
    struct ar_mcp_task *next;
};

struct ar_mcp_tasks {
    struct ar_mcp_task *head; /* newest first */
    size_t n;
    uint64_t serial; /* the last one given */
};

/* A new working task (ttl_ms < 0: none), first in the store, borrowed by the caller (its
 * call) until ar_mcp_task_over(); NULL when out of memory or the store is full. */
struct ar_mcp_task *ar_mcp_task_create(struct ar_mcp_tasks *ts, int64_t ttl_ms);

/* The call is over: result (taken, may be NULL when out of memory) is its CallToolResult.
 * A working task becomes completed, or failed when the result is an error; a cancelled
 * one stays cancelled. The caller lets go of t: from now on the store may drop it. */
void ar_mcp_task_over(struct ar_mcp_task *t, json_t *result);

/* The task named id, or NULL (also once it expired: it is then dropped). Borrowed until
 * the store is next used. */
struct ar_mcp_task *ar_mcp_task_find(struct ar_mcp_tasks *ts, const char *id);

/* Drops the tasks whose ttl passed, once their call is over and nobody waits on them. */
void ar_mcp_tasks_expire(struct ar_mcp_tasks *ts);

/* The Task object: taskId, status, ttl, createdAt, lastUpdatedAt, pollInterval,
 * statusMessage. A new reference. */
json_t *ar_mcp_task_json(const struct ar_mcp_task *t);

/*
 * One page of tasks/list, newest first: {"tasks": [...]} with "nextCursor" when more
 * follow. cursor is the client's (NULL: from the newest); a cursor this store did not
 * give is refused. Returns a new reference, or NULL with *bad set (1: the cursor is
 * invalid, 0: out of memory).
 */
json_t *ar_mcp_tasks_page(struct ar_mcp_tasks *ts, const json_t *cursor, int *bad);

/* Sets the status (and message, copied; NULL: none); updates lastUpdatedAt. */
void ar_mcp_task_set(struct ar_mcp_task *t, enum ar_mcp_task_status st, const char *message);

/* 1 when the task is over (completed, failed, cancelled). */
int ar_mcp_task_terminal(const struct ar_mcp_task *t);

/* Frees every task: the server's end, when no call is left. */
void ar_mcp_tasks_finish(struct ar_mcp_tasks *ts);

#endif
