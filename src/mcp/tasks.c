/*
 * The task store (tasks.h): a list, newest first, with lazy expiry. The ids
 * are random, since any client that knows one may read its result. Only
 * this file frees a task, and only once its call handed the result over.
 */
#include "mcp/tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

static const char *const status_names[] = { "working", "completed", "failed", "cancelled" };

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void iso(uint64_t ms, char out[32])
{
    time_t s = (time_t)(ms / 1000u);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03uZ", (unsigned)(ms % 1000u));
}

static void task_free(struct ar_mcp_task *t)
{
    free(t->message);
    json_decref(t->result);
    json_decref(t->waiters);
    free(t);
}

struct ar_mcp_task *ar_mcp_task_create(struct ar_mcp_tasks *ts, int64_t ttl_ms)
{
    ar_mcp_tasks_expire(ts);
    if (ts->n >= AR_MCP_MAX_TASKS)
        return NULL;
    struct ar_mcp_task *t = calloc(1, sizeof(*t));
    unsigned char raw[16];
    if (!t || uv_random(NULL, NULL, raw, sizeof(raw), 0, NULL) != 0 ||
        !(t->waiters = json_array())) {
        free(t);
        return NULL;
    }
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(t->id + 2 * i, 3, "%02x", raw[i]);
    t->status = AR_TASK_WORKING;
    t->created_ms = t->updated_ms = now_ms();
    t->ttl_ms = ttl_ms;
    t->serial = ++ts->serial;
    t->next = ts->head;
    ts->head = t;
    ts->n++;
    return t;
}

void ar_mcp_task_over(struct ar_mcp_task *t, json_t *result)
{
    if (t->status == AR_TASK_WORKING) {
        int failed = !result || json_is_true(json_object_get(result, "isError"));
        ar_mcp_task_set(t, failed ? AR_TASK_FAILED : AR_TASK_COMPLETED,
                        failed ? "the tool call failed: see its result" : NULL);
    }
    json_decref(t->result);
    t->result = result;
    t->over = 1;
}

/* Whether the store may drop t: its ttl passed, and nothing holds it any more (its call
 * handed the result over; no tasks/result waits for it). */
static int expired(const struct ar_mcp_task *t, uint64_t now)
{
    return t->over && !json_array_size(t->waiters) && t->ttl_ms >= 0 &&
           now > t->created_ms + (uint64_t)t->ttl_ms;
}

void ar_mcp_tasks_expire(struct ar_mcp_tasks *ts)
{
    uint64_t now = now_ms();
    for (struct ar_mcp_task **p = &ts->head; *p;) {
        struct ar_mcp_task *t = *p;
        if (expired(t, now)) {
            *p = t->next;
            ts->n--;
            task_free(t);
        } else {
            p = &t->next;
        }
    }
}

struct ar_mcp_task *ar_mcp_task_find(struct ar_mcp_tasks *ts, const char *id)
{
    ar_mcp_tasks_expire(ts);
    for (struct ar_mcp_task *t = ts->head; id && t; t = t->next)
        if (strcmp(t->id, id) == 0)
            return t;
    return NULL;
}

json_t *ar_mcp_task_json(const struct ar_mcp_task *t)
{
    char created[32], updated[32];
    iso(t->created_ms, created);
    iso(t->updated_ms, updated);
    json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:s, s:i}", "taskId", t->id, "status",
                          status_names[t->status], "ttl",
                          t->ttl_ms >= 0 ? json_integer(t->ttl_ms) : json_null(), "createdAt",
                          created, "lastUpdatedAt", updated, "pollInterval", 1000);
    if (o && t->message)
        json_object_set_new(o, "statusMessage", json_string(t->message));
    return o;
}

/* The serial a cursor names, or 0 when it is none this store gave: decimal, from 1 to
 * the last serial given. */
static uint64_t cursor_serial(const struct ar_mcp_tasks *ts, const json_t *cursor)
{
    const char *c = json_string_value(cursor);
    uint64_t v = 0;
    if (!c || !*c || *c == '0' || strlen(c) != json_string_length(cursor) || strlen(c) > 19)
        return 0;
    for (; *c; c++) {
        if (*c < '0' || *c > '9')
            return 0;
        v = v * 10 + (uint64_t)(*c - '0');
    }
    return v <= ts->serial ? v : 0;
}

json_t *ar_mcp_tasks_page(struct ar_mcp_tasks *ts, const json_t *cursor, int *bad)
{
    uint64_t from = UINT64_MAX;
    *bad = 0;
    if (cursor && !(from = cursor_serial(ts, cursor))) {
        *bad = 1;
        return NULL;
    }
    ar_mcp_tasks_expire(ts);
    json_t *tasks = json_array(), *page = json_pack("{s:o}", "tasks", tasks);
    if (!page)
        return NULL;
    size_t n = 0;
    for (struct ar_mcp_task *t = ts->head; t; t = t->next) {
        if (t->serial > from)
            continue;
        if (n++ == AR_MCP_TASKS_PAGE) {
            char next[24];
            snprintf(next, sizeof(next), "%llu", (unsigned long long)t->serial);
            json_object_set_new(page, "nextCursor", json_string(next));
            break;
        }
        json_array_append_new(tasks, ar_mcp_task_json(t));
    }
    return page;
}

void ar_mcp_task_set(struct ar_mcp_task *t, enum ar_mcp_task_status st, const char *message)
{
    t->status = st;
    free(t->message);
    t->message = message ? strdup(message) : NULL;
    t->updated_ms = now_ms();
}

int ar_mcp_task_terminal(const struct ar_mcp_task *t)
{
    return t->status != AR_TASK_WORKING;
}

void ar_mcp_tasks_finish(struct ar_mcp_tasks *ts)
{
    while (ts->head) {
        struct ar_mcp_task *t = ts->head;
        ts->head = t->next;
        task_free(t);
    }
    ts->n = 0;
}
