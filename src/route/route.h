/*
 * Route: map a request to a task or skill of a manifest. Cheap local tiers
 * answer when they can; the model is asked only when they cannot, and its
 * answer is parsed strictly and checked against the manifest. Nothing here
 * prints.
 *
 *   tier 1 "exact":     the query equals a name or alias (case-insensitive,
 *                       trimmed, inner whitespace collapsed);
 *   tier 2 "keyword":   a token-overlap score >= min_score (see ar_route_score);
 *   tier 3 "discovery": prompts/route.md with the manifest; the answer is one
 *                       match object or an array of them.
 *
 * Protocol:
 *   1. ar_manifest_load() (or _parse());
 *   2. ar_route_local() runs tiers 1 and 2 into a struct ar_route;
 *   3. when it found nothing and the model may be asked: run the template
 *      AR_ROUTE_TEMPLATE with the variables "query" and "manifest"
 *      (ar_manifest_render()), expect AR_EXPECT_ANY, validate hook
 *      ar_route_validate; then ar_route_from_answer() with the run's outcome;
 *   4. ar_route_finish(), ar_manifest_finish().
 */
#ifndef AR_ROUTE_ROUTE_H
#define AR_ROUTE_ROUTE_H

#include <jansson.h>
#include <stddef.h>

#include "agentrun/error.h"
#include "agentrun/route.h"
#include "util/buf.h"
#include "util/strv.h"

#define AR_ROUTE_TEMPLATE     "route"
#define AR_ROUTE_VAR_QUERY    "query"
#define AR_ROUTE_VAR_MANIFEST "manifest"

/* The default of --min-score: see docs/route.md for how it was chosen. */
#define AR_ROUTE_DEFAULT_MIN_SCORE 0.5

struct ar_route_item {
    enum ar_route_type type;
    char *name;
    char *description; /* "" when absent */
    struct ar_strv aliases;
    struct ar_strv keywords;
    size_t index; /* position within its list (tasks or skills) */
};

struct ar_manifest {
    struct ar_route_item *items; /* every task in manifest order, then every skill */
    size_t n;
    size_t n_tasks;
};

void ar_manifest_init(struct ar_manifest *m);
void ar_manifest_finish(struct ar_manifest *m);

/*
 * Parses a manifest {tasks: [{name, description, aliases?, keywords?}],
 * skills: [ … ]} from len bytes of text. `name` is the file name used in
 * messages. Returns 0, or AR_EUSAGE with err pointing at the problem:
 *   "m.json:3:14: invalid JSON: …" (jansson's line and column),
 *   "m.json: /tasks/2: missing 'name'", "m.json: /skills/0/aliases/1: expected a string",
 *   "m.json: /tasks/1/name: 'deploy' is also /tasks/0",
 *   "m.json: no tasks and no skills".
 * Either list may be absent or empty, not both. AR_ENOMEM.
 */
int ar_manifest_parse(struct ar_manifest *m, const char *text, size_t len, const char *name,
                      struct ar_error *err);

/* Reads and parses path. AR_EUSAGE also when it cannot be read. */
int ar_manifest_load(struct ar_manifest *m, const char *path, struct ar_error *err);

/* The item of this type and name (case-insensitive), or NULL. Borrowed from m. */
const struct ar_route_item *ar_manifest_find(const struct ar_manifest *m, enum ar_route_type type,
                                             const char *name);

/*
 * Appends the manifest as the model sees it: a "Tasks:" and a "Skills:"
 * section, one "- name: description (aliases: …; keywords: …)" line per
 * item. Returns 0, AR_ENOMEM or AR_ETOOBIG.
 */
int ar_manifest_render(const struct ar_manifest *m, struct ar_buf *out);

/*
 * The keyword score of item for query, 0..1: the query's words (lowercase
 * letters and digits, a short stopword list dropped, a plural 's' folded)
 * each weigh what their best place in the item gives — name or alias 1.0,
 * keyword 0.8, description 0.4 — and the sum is divided by the number of
 * query words. So 0.5 needs half the words in a name, or most of them among
 * the keywords. `why` (may be NULL) receives "matched customer, portal
 * (name); deploy (description)".
 */
double ar_route_score(const struct ar_route_item *item, const char *query, struct ar_buf *why);

/* The route's enums, its match and its public API are in agentrun/route.h; this is the
 * working state of the tiers (api.c turns it into a struct ar_route_result). */
struct ar_route {
    enum ar_route_kind kind;
    struct ar_route_match *matches; /* best first */
    size_t n;
    size_t cap;
    int fallback;         /* the first task was taken because the answer stayed malformed */
    char *error;          /* with AR_ROUTE_ERROR: what the model named wrongly, else NULL */
    struct ar_strv notes; /* "match 0 (\"x\") confidence 1.4 clamped to 1", the fallback's why */
};

void ar_route_init(struct ar_route *r);
void ar_route_finish(struct ar_route *r);

/*
 * Tiers 1 and 2. Fills r (which must be fresh) and returns 1 when one of
 * them matched (r->kind EXACT or KEYWORD, every match above min_score sorted
 * by score, then tasks before skills, then manifest order), 0 when neither
 * did (r->kind NONE, no matches), or AR_ENOMEM.
 */
int ar_route_local(const struct ar_manifest *m, const char *query, double min_score,
                   struct ar_route *r);

/*
 * The run's validate hook (ar_validate_fn) for the model's answer: arg is
 * unused. An object is one match, an array a list of them; each must have
 * type "task" or "skill", a non-empty string name, a number confidence and a
 * string reasoning: "match 1 missing reasoning", "match 0 has invalid type:
 * \"app\", want \"task\" or \"skill\"". Unknown names are not checked here:
 * that is an answer, not a format problem, and goes to
 * ar_route_from_answer().
 */
void ar_route_validate(void *arg, json_t *value, void (*add)(void *sink, const char *msg),
                       void *sink);

/*
 * Interprets the model's accepted answer (borrowed, NULL when the run ended
 * without a usable one). With value: the matches, confidence clamped to 0..1
 * (noted), sorted by confidence descending (stable); kind DISCOVERY, or NONE
 * for an empty array; ERROR with r->error naming every unknown task or skill.
 * Without value (the answer stayed unusable after the repair call): the
 * manifest's first task (its first skill when it has no task) with
 * confidence 0, kind DISCOVERY, fallback 1 and a note saying why (`why`,
 * may be NULL).
 * Returns 0 or AR_ENOMEM.
 */
int ar_route_from_answer(const struct ar_manifest *m, json_t *value, const char *why,
                         struct ar_route *r);

#endif
