/*
 * A call's arguments as the library's options, and the library's refusals in the
 * words a calling model can act on.
 *
 * Nothing here decides what a call may do: the operator's flags made the share
 * (agentrun/share.h) in every call's defaults, the library's request table reads
 * the arguments as a batch line is read (agentrun/request.h), and the library
 * refuses, when the work starts, what the share does not allow. This file only
 * names the flag the operator would need for a refusal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/call.h"

/* The operator's flag behind a rule of the share, by the library's err.where. */
static const char *operator_flag(const struct ar_error *err)
{
    static const char *const flags[][2] = {
        { "allow_edits", "--allow-edits" }, { "budget", "a higher --max-cost-total or --max-cost" },
        { "dirs", "--allow-dir" },          { "max_cost", "a higher --max-cost" },
        { "providers", "--providers" },     { "worktree", "--allow-edits" },
    };
    if (err->code == AR_EBUDGET)
        return flags[1][1];
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strcmp(err->where, flags[i][0]) == 0)
            return flags[i][1];
    return NULL;
}

const char *ar_mcp_refusal_hint(const struct ar_error *err, char *buf, size_t n)
{
    const char *flag = operator_flag(err);
    if (!flag)
        return "";
    snprintf(buf, n, "; the operator would need to start agentrun mcp with %s", flag);
    return buf;
}

void ar_mcp_call_refused(struct ar_mcp_call *c, const struct ar_error *err)
{
    char hint[128];
    /* Name the argument unless the message does. */
    int named = err->where[0] && !strstr(err->msg, err->where) && !operator_flag(err);
    ar_mcp_call_fail(c, "%s%s%s%s", named ? err->where : "", named ? ": " : "", err->msg,
                     ar_mcp_refusal_hint(err, hint, sizeof(hint)));
}

int ar_mcp_call_args(struct ar_mcp_call *c, const struct ar_run_options *defaults)
{
    c->run = *defaults;
    if (!c->tool->door)
        return 0;
    /* A run call's arguments are all request keys; another tool has its own too. */
    unsigned door = c->tool->door;
    if (door != AR_REQUEST_RUN)
        door |= AR_REQUEST_OTHER_KEYS;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_run_request_parse(c->args, door, defaults, &c->req, &err) < 0) {
        ar_mcp_call_refused(c, &err);
        return -1;
    }
    c->run = *ar_run_request_options(c->req);
    return 0;
}

char *ar_mcp_tool_input_schema(const struct ar_mcp_tool *t)
{
    json_t *schema = json_loads(t->input_schema, 0, NULL);
    json_t *props = json_object_get(schema, "properties");
    char *keys = t->door ? ar_run_request_schema(t->door) : NULL;
    json_t *add = keys ? json_loads(keys, 0, NULL) : NULL;
    free(keys);
    char *text = NULL;
    if (props && (!t->door || add) && (!add || json_object_update(props, add) == 0))
        text = json_dumps(schema, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(add);
    json_decref(schema);
    return text;
}
