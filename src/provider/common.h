/*
 * Shared internals of the provider adapters: the stream state every adapter
 * fills, JSON line helpers and the common end-of-call classification. Only
 * src/provider/ includes this.
 */
#ifndef AR_PROVIDER_COMMON_H
#define AR_PROVIDER_COMMON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "provider/provider.h"

/* The longest line an adapter parses; longer lines are skipped (counted as garbage). */
#define AR_PV_MAX_LINE ((size_t)256 << 20)

/*
 * The stream state every adapter shares: the reply being filled and what the
 * common helpers below keep. An adapter's own state is its own struct, private
 * to its file, that embeds this one:
 *
 *     struct gemini_unwrap {
 *         struct ar_unwrap u;   (the common state)
 *         struct ar_buf text;   (gemini's own)
 *     };
 *
 * Its unwrap_new() allocates that struct and calls ar_pv_unwrap_init(&g->u, …);
 * its functions get their struct back with ar_container_of(u, struct
 * gemini_unwrap, u); its unwrap_free() calls ar_pv_unwrap_finish(&g->u) before
 * freeing. So adding a provider changes no struct here.
 */
struct ar_unwrap {
    const struct ar_provider *p;
    struct ar_reply r; /* filled as lines arrive; moved out by ar_pv_finish */
    int saw_event;     /* a line of this CLI's stream was recognized */
    int garbage;       /* lines that were not this CLI's JSON */
    char *ev_tool;     /* the last progress event's strings (borrowed out) */
    char *ev_path;
    /* Usage seen before the final event (claude's assistant messages), kept for a
     * call that never gets there (interrupted, timed out): see ar_pv_partial_usage(). */
    int has_partial;
    struct ar_usage partial;
    struct ar_usage partial_last; /* the last message's share, replaced when it repeats */
    char *partial_id;
    json_t *tools; /* tool id -> [name, target] of every tool use seen */
};

/* The posture's tools of spec: NONE, READ or EDIT (AUTO, as a bare spec may say, is READ,
 * or EDIT with allow_edits). */
enum ar_tools ar_pv_tools(const struct ar_call_spec *spec);

/* Non-zero when `schema` describes an object at its root ("type": "object", or no type and
 * "properties"): the only contracts claude's --json-schema (the input schema of a tool) and
 * codex's --output-schema (the Responses API) take. A union that may be an array is not. */
int ar_pv_object_schema(const json_t *schema);

/* ar_pv_object_schema() of a contract given as JSON text (0 when it is not JSON): the
 * native_contract of the CLIs whose structured output takes object schemas. */
int ar_pv_object_contract(const char *schema);

/* Initializes the common state u, embedded in p's own unwrap state, for a call of p
 * (borrowed: static storage). Allocates nothing. */
void ar_pv_unwrap_init(struct ar_unwrap *u, const struct ar_provider *p);

/* Frees what the common state u holds (not u itself). */
void ar_pv_unwrap_finish(struct ar_unwrap *u);

/* Parses one line as a JSON object. NULL when it is not one. New reference. */
json_t *ar_pv_parse_object(const char *line, size_t len);

/*
 * ar_pv_parse_object() for a stdout line of the call u: NULs inside its strings
 * (\u0000) become U+FFFD, counted in the reply's nul_replaced, so the text is
 * never cut at one. New reference or NULL.
 */
json_t *ar_pv_parse_line(struct ar_unwrap *u, const char *line, size_t len);

/* A string member, or NULL. Borrowed from o. */
const char *ar_pv_str(const json_t *o, const char *key);

/* A non-negative integer member (integers, or reals rounded down), else 0. */
uint64_t ar_pv_u64(const json_t *o, const char *key);

/* Replaces *dst with a copy of s (NULL clears it). */
void ar_pv_set(char **dst, const char *s);

/* auth / rate_limit / api_error from an HTTP status (0 if unknown) and the CLI's message. */
int ar_pv_classify(int http_status, const char *msg);

/* Records a progress event into *ev (tool and path copied into u). */
void ar_pv_event(struct ar_unwrap *u, struct ar_progress *ev, const char *tool, const char *path);

/* Adds path to the reply's files once. */
void ar_pv_add_file(struct ar_unwrap *u, const char *path);

/* Drops path from the reply's files (a tool use that was refused). */
void ar_pv_remove_file(struct ar_unwrap *u, const char *path);

/*
 * Records the usage of one message seen before the final event (id: the
 * message's id; the same id again replaces its earlier share). A call that ends
 * without a final usage reports this sum instead of nothing.
 */
void ar_pv_partial_usage(struct ar_unwrap *u, const char *id, const struct ar_usage *usage);

/* Sets the reply's error (first one wins) and its message. */
void ar_pv_fail(struct ar_unwrap *u, int code, const char *msg);

/* Remembers tool use `id` (its name and target) for a later result. */
void ar_pv_tool_seen(struct ar_unwrap *u, const char *id, const char *name, const char *target);

/* The name and target (borrowed, may be NULL) of tool use `id`; 0 when unknown. */
int ar_pv_tool_lookup(struct ar_unwrap *u, const char *id, const char **name, const char **target);

/*
 * Records what the CLI said about its quota (the last word stands): status "allowed",
 * "allowed_warning" or "rejected" (NULL: nothing recorded), the window it is about (or NULL),
 * the share used in percent (< 0: not said), when it resets (Unix seconds, <= 0: not said) and
 * where it was read ("claude:rate_limit_event"). A failed call whose quota was "rejected" is
 * rate_limit, waiting until resets_at (ar_pv_finish()).
 */
void ar_pv_rate_limit(struct ar_unwrap *u, const char *status, const char *window,
                      double used_percent, long long resets_at, const char *source);

/* Records a refused tool call (target may be NULL) once. */
void ar_pv_deny(struct ar_unwrap *u, const char *tool, const char *target);

/*
 * When a rate-limit or API error message says to come back: "retry after 7s",
 * "Retry-After: 30", "try again in 2 hours 5 minutes", "resets in 1h 30m",
 * "Try again at 5:03 PM." / "at Nov 25th, 2026 11:07 PM", "resets 3pm (UTC)",
 * "usage limit reached|1767225600" (a Unix time), "retryDelayMs: 7000". Clock
 * times are local unless the text says UTC; `now` is the current Unix time.
 * Returns the seconds to wait (>= 0), or -1 when the text says nothing usable. A wait
 * asked for in numbers no clock holds ("1e30 seconds", "retryDelayMs: 1e400", a
 * 20-digit Unix time) is HUGE_VAL: longer than any --max-wait, never 0. This is the one
 * reader of a CLI's waits; whoever turns one into milliseconds compares it as a double
 * first (run/pipeline.c retry_wait()).
 */
double ar_pv_retry_after(const char *msg, long long now);

/* Non-zero when an API failure is worth one retry: HTTP 5xx, or words for overload. */
int ar_pv_transient(int http_status, const char *msg);

/* The last non-empty line of stderr, or NULL. Caller free()s. */
char *ar_pv_last_line(const char *data, size_t len);

/*
 * The common end of a call: no final event → interrupted (agentrun or a
 * signal ended it), cli_failed (non-zero exit, with stderr's last line) or
 * truncated; a success with an empty text → empty. Moves the reply into *out.
 */
void ar_pv_finish(struct ar_unwrap *u, const struct ar_exit_info *exit, struct ar_reply *out);

/*
 * unwrap_captured() for a JSONL stream or one JSON document: feeds each line
 * through p (or the whole of data when it is one multi-line document and
 * `whole` accepts it), on a state from p->unwrap_new(NULL). Returns 0,
 * AR_ENOJSON or AR_ENOMEM.
 */
int ar_pv_captured(const struct ar_provider *p, const char *data, size_t len,
                   int (*whole)(struct ar_unwrap *u, json_t *doc), struct ar_reply *out);

extern const struct ar_provider ar_provider_claude;
extern const struct ar_provider ar_provider_codex;
extern const struct ar_provider ar_provider_gemini;

#endif
