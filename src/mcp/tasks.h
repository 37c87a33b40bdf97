/*
 * The task store of protocol 2025-11-25: a tools/call sent with params.task
 * is answered at once with a task, which the client polls (tasks/get), waits
 * on (tasks/result), lists (tasks/list) or cancels (tasks/cancel). The store
 * keeps each task's state and, once the call is over, its result, for the
 * task's ttl (from its creation) or, without one, until the server ends.
 */
#ifndef AR_MCP_TASKS_H
#define AR_MCP_TASKS_H

#include <jansson.h>
#include <stdint.h>

/* The most tasks kept at once: creating one more fails (the client may wait). */
#define AR_MCP_MAX_TASKS 1024

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
    json_t *result;                  /* the CallToolResult once over (own reference) */
    json_t *waiters;                 /* ids of tasks/result requests waiting (array) */
    void *call;                      /* the call while it runs (struct ar_mcp_call *) */
    struct ar_mcp_task *next;
};

struct ar_mcp_tasks {
    struct ar_mcp_task *head;
    size_t n;
};

/* A new working task (ttl_ms < 0: none), first in the store; NULL when out of memory or
 * the store is full. */
struct ar_mcp_task *ar_mcp_task_create(struct ar_mcp_tasks *ts, int64_t ttl_ms);

/* The task named id, or NULL (also once its ttl passed: it is then dropped). */
struct ar_mcp_task *ar_mcp_task_find(struct ar_mcp_tasks *ts, const char *id);

/* Drops the tasks whose ttl passed (not a working one). */
void ar_mcp_tasks_expire(struct ar_mcp_tasks *ts);

/* The Task object: taskId, status, ttl, createdAt, lastUpdatedAt, pollInterval,
 * statusMessage. A new reference. */
json_t *ar_mcp_task_json(const struct ar_mcp_task *t);

/* Sets the status (and message, copied; NULL: none); updates lastUpdatedAt. */
void ar_mcp_task_set(struct ar_mcp_task *t, enum ar_mcp_task_status st, const char *message);

/* 1 when the task is over (completed, failed, cancelled). */
int ar_mcp_task_terminal(const struct ar_mcp_task *t);

void ar_mcp_tasks_finish(struct ar_mcp_tasks *ts);

#endif
