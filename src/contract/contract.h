/*
 * Contracts: validation of a JSON value against a JSON Schema (draft 2020-12, and
 * draft-07 where the schema says so), with every violation reported as a JSON
 * Pointer (RFC 6901), a message and the offending value.
 *
 * The keywords, what is refused at load and why, are in docs/prompts.md
 * ("Contracts"): every applicator, $ref / $defs / $id / $anchor / $dynamicRef,
 * every validation keyword with numbers decided exactly on their spellings
 * (number.c), patterns as ECMA-262 (pattern.h), `format` as an annotation unless
 * AR_CONTRACT_FORMAT_ASSERT (format.c), unevaluatedProperties / unevaluatedItems.
 * A keyword agentrun does not know is an annotation, as 2020-12 says, unless it is
 * a known one written in another case ("maxlength"), which is refused.
 *
 * Protocol:
 *   1. ar_contract_load() (or ar_contract_parse(), ar_contract_from_json())
 *      validates the schema, reads the documents its references name, and compiles
 *      it once;
 *   2. ar_contract_check() appends every violation of a value to a
 *      struct ar_violations, ar_contract_accepts() only says yes or no;
 *   3. ar_violations_format() / ar_violations_to_json() render the list
 *      ("/issues/2/line: expected integer, got string \"3\"");
 *   4. ar_violations_finish(), ar_contract_destroy().
 */
#ifndef AR_CONTRACT_CONTRACT_H
#define AR_CONTRACT_CONTRACT_H

#include <jansson.h>
#include <stddef.h>

#include "agentrun/error.h"
#include "agentrun/extract.h"
#include "json/doc.h"
#include "util/buf.h"

/* Subschemas nested deeper than this are a load error. Checking recursion
 * follows the schema, never the value alone, so this also bounds the stack
 * used on arbitrarily deep values. */
#define AR_CONTRACT_MAX_DEPTH 512

/* ar_contract_check() stores at most this many violations; the rest are counted. */
#define AR_CONTRACT_MAX_VIOLATIONS 100

/* Offending values are quoted in messages cut to about this many bytes. */
#define AR_CONTRACT_PREVIEW_BYTES 80

struct ar_contract;

struct ar_violation {
    char *path;    /* JSON Pointer of the offending value; "" is the whole value */
    char *message; /* "expected integer, got string \"3\"", no path, no final period */
    json_t *value; /* the offending value (a reference owned by the list), NULL when
                      the value is absent (a missing required property) */
};

struct ar_violations {
    struct ar_violation *v;
    size_t n;
    size_t cap;
    size_t omitted; /* violations past AR_CONTRACT_MAX_VIOLATIONS, counted, not stored */
};

#define AR_VIOLATIONS_INIT \
    {                      \
        NULL, 0, 0, 0      \
    }

void ar_violations_init(struct ar_violations *vs);

/* Frees every entry and drops the value references; init works again afterwards. */
void ar_violations_finish(struct ar_violations *vs);

/*
 * Appends one violation, for checks beyond the schema (prioritize's unknown
 * prd_id…). `path` is a JSON Pointer ("" for the whole value), copied;
 * `value` is borrowed (a reference is taken), may be NULL. Past
 * AR_CONTRACT_MAX_VIOLATIONS only vs->omitted grows. Returns 0 or AR_ENOMEM.
 */
int ar_violations_add(struct ar_violations *vs, const char *path, json_t *value, const char *fmt,
                      ...) AR_PRINTF(4, 5);

/* Appends one line "path: message" (no newline); the whole value's path shows as "(root)". */
int ar_violation_format(const struct ar_violation *v, struct ar_buf *out);

/*
 * Appends every violation as "path: message\n", then "(N more violations not
 * shown)\n" when some were omitted. Returns 0, AR_ETOOBIG or AR_ENOMEM.
 */
int ar_violations_format(const struct ar_violations *vs, struct ar_buf *out);

/* New reference: a JSON array of the formatted lines (RunResult error.details), NULL
 * when out of memory. */
json_t *ar_violations_to_json(const struct ar_violations *vs);

/*
 * Appends `seg` to the JSON Pointer in `out` as one reference token: "/" then
 * the segment with "~" written "~0" and "/" written "~1" (RFC 6901).
 */
int ar_json_pointer_append(struct ar_buf *out, const char *seg, size_t len);

/* ar_contract_parse() and ar_contract_destroy() are public: agentrun/extract.h. */

/*
 * Like ar_contract_parse() from a parsed schema. `schema` is borrowed: the
 * contract takes its own reference, so the caller must not modify it later. Its
 * numbers have no spelling: each is read as the shortest decimal that is its double
 * (1.1 as 1.1); parse the text with ar_contract_parse() to keep them as written.
 */
int ar_contract_from_json(json_t *schema, struct ar_contract **out, struct ar_error *err);

/*
 * Borrowed reference to the schema as loaded, valid until
 * ar_contract_destroy(). Do not modify it: provider adapters that sanitize it
 * for a CLI's structured-output flag work on json_deep_copy().
 */
json_t *ar_contract_schema_json(const struct ar_contract *c);

/*
 * The schema as loaded, as compact JSON text with every number spelled as the schema
 * wrote it (0.1 stays 0.1; the JSON jansson would write says 0.10000000000000001): what a
 * prompt or a CLI's structured-output flag is given. Borrowed, valid until
 * ar_contract_destroy(); *len (may be NULL) gets its length. Indent it with
 * ar_json_text_indent() (util/json_dump.h).
 */
const char *ar_contract_schema_text(const struct ar_contract *c, size_t *len);

/*
 * Checks `value` (borrowed) and appends every violation to `out` (which is not
 * cleared first, so callers may add their own). Within one value, a type
 * mismatch is reported alone: the other keywords of that schema are not
 * evaluated. Returns the number of violations found (stored or omitted), or
 * AR_ENOMEM.
 */
int ar_contract_check(const struct ar_contract *c, json_t *value, struct ar_violations *out);

/*
 * 1 when `value` satisfies the contract, 0 when not. Stops at the first
 * violation and allocates nothing. The signature fits an extraction accept
 * callback through a small adapter: accept(v, arg) = ar_contract_accepts(arg, v).
 */
int ar_contract_accepts(const struct ar_contract *c, json_t *value);

/*
 * ar_contract_check() and ar_contract_accepts() on a parsed document (doc.h,
 * borrowed): its numbers are compared as written, exactly, so that
 * 12345678901234567890 is an integer above a maximum of 12345678901234567889
 * and 1e-400 is not 0.
 */
int ar_contract_check_doc(const struct ar_contract *c, const struct ar_json_doc *doc,
                          struct ar_violations *out);
int ar_contract_accepts_doc(const struct ar_contract *c, const struct ar_json_doc *doc);

/* ar_contract_accepts_doc() as an extraction accept callback: `arg` is the
 * const struct ar_contract *. */
int ar_contract_accept_fn(const struct ar_json_doc *doc, void *arg);

#endif
