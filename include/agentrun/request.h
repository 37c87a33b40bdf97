/*
 * agentrun: a run request as JSON, read by the library for every door that
 * takes one (a line of `agentrun batch`, the arguments of the MCP server's
 * tools), and the checks every run's options pass whatever door they came by.
 *
 * One table of keys (docs/batch.md, docs/mcp.md list them) says for each its
 * type, its meaning and which doors take it; the MCP tools' input schemas are
 * generated from it (ar_run_request_schema()), so a key means the same at
 * every door and a door cannot forget one.
 */
#ifndef AGENTRUN_REQUEST_H
#define AGENTRUN_REQUEST_H

#include <stddef.h>

#include "agentrun.h"
#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The doors a key is taken at. */
enum ar_request_door {
    AR_REQUEST_BATCH = 1 << 0, /* a line of agentrun batch (with its "id") */
    AR_REQUEST_RUN = 1 << 1,   /* the arguments of the MCP run tool */
    AR_REQUEST_TOOL = 1 << 2,  /* the model keys of every MCP tool that calls a model */
    /* With a door: keys the table does not know are left to the caller (a tool's own
     * arguments: diff, rev, …), not refused. */
    AR_REQUEST_OTHER_KEYS = 1 << 8,
};

struct ar_run_request; /* the options a request gives, and the strings they point to */

/*
 * Reads the request req (a JSON object, borrowed) as door reads it, on top of a copy of
 * defaults (whose strings must outlive the request; NULL: ar_run_options_init()'s).
 * Returns 0 with *out set (ar_run_request_destroy()), or AR_EUSAGE with err.where the key
 * at fault and a message that says what it must be (an unknown key gets a did-you-mean),
 * or AR_ENOMEM. A file named by "schema" is read within defaults->share's directories.
 * The keys are checked one by one here; the rules between them are ar_run_options_check()'s.
 */
AR_API int ar_run_request_parse(const struct json_t *req, unsigned door,
                                const struct ar_run_options *defaults, struct ar_run_request **out,
                                struct ar_error *err);

/* The options the request gives: borrowed, valid until ar_run_request_destroy(); the
 * caller may change them (they stay the request's). */
AR_API struct ar_run_options *ar_run_request_options(struct ar_run_request *rq);

/* Frees rq and the strings its options point to. NULL is fine. */
AR_API void ar_run_request_destroy(struct ar_run_request *rq);

/*
 * The keys door takes as the "properties" of a JSON Schema object: a new string
 * ("{\"prompt\":{\"type\":\"string\",…},…}", free()), or NULL when out of memory.
 */
AR_API char *ar_run_request_schema(unsigned door);

/*
 * The rules between a run's options that every door shares (ar_run_start() checks them
 * too): exactly one of prompt and template; vars only with a template; schema only with a
 * prompt; worktree_base, worktree_commit and keep_worktree only for a run with a worktree
 * of its own; no editing tools when tools is AR_TOOLS_NONE; none at all when the share
 * allows no edits. Returns 0, or AR_EUSAGE with err.where the option's request key
 * ("vars", "base", "allow_edits", …).
 */
AR_API int ar_run_options_check(const struct ar_run_options *o, struct ar_error *err);

/*
 * Seconds as a duration in milliseconds, the one reading of every door (--timeout 1.5,
 * "timeout": 1.5): a finite number from 0 to 10^9; 0 is 0 (none, or never wait), and any
 * other value is rounded up to a whole millisecond, so a tiny timeout never reads as none.
 * Returns 0, or AR_EUSAGE.
 */
AR_API int ar_seconds_to_ms(double seconds, uint64_t *ms, struct ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
