/*
 * A JSON value as the model wrote it (docs/decisions.md, "The model's bytes
 * are the answer"). jansson holds the value for reading and checking, but it
 * cannot hold an integer past 64 bits, a number's spelling (-0, 1.50, 20e1)
 * or an object key with a NUL byte. So a document keeps both:
 *
 *   - value: the jansson value. A number is a json_integer when it is written
 *     as an integer that fits json_int_t (and is not -0), otherwise a
 *     json_real, the nearest double (clamped to +-DBL_MAX past its range);
 *   - text: the value as compact JSON, every string and number byte for byte
 *     as written, only the whitespace between tokens dropped. This is what
 *     agentrun prints;
 *   - lexemes: for every number that is a json_real, where its spelling lies
 *     in `text`, so that checks can compare it exactly.
 *
 * The value must not be modified while lexemes are looked up (they are found
 * by node address).
 */
#ifndef AR_JSON_DOC_H
#define AR_JSON_DOC_H

#include <jansson.h>
#include <stddef.h>

#include "agentrun/error.h"
#include "json/scan.h"
#include "util/buf.h"

struct ar_json_lexeme {
    const json_t *node;
    size_t off, len; /* the spelling: text[off, off + len) */
};

struct ar_json_doc {
    json_t *value; /* new reference owned by the document, NULL when empty */
    char *text;    /* NUL-terminated compact JSON (JSON text never holds a raw NUL) */
    size_t len;
    struct ar_json_lexeme *nums; /* sorted by node address */
    size_t nnums;
};

#define AR_JSON_DOC_INIT       \
    {                          \
        NULL, NULL, 0, NULL, 0 \
    }

/*
 * Parses s[0..n): exactly one JSON value (any kind) with optional surrounding
 * whitespace, strictly (json/scan.h says what is accepted). On success fills
 * *doc (finish it) and returns 0. Otherwise returns AR_ENOJSON with err->msg
 * saying what is wrong and at which byte, or AR_ENOMEM. Iterative: no
 * recursion on the input's nesting.
 */
int ar_json_doc_parse(struct ar_json_doc *doc, const char *s, size_t n, struct ar_error *err);

/*
 * Fills *doc from s[0..n), one value ar_json_scan() found whole and valid (any
 * layout; nothing is checked again): its compact text and, when `with_value`,
 * the jansson value and lexemes (else doc->value stays NULL). Returns 0 or
 * AR_ENOMEM.
 */
int ar_json_doc_from_valid(struct ar_json_doc *doc, const char *s, size_t n, int with_value);

/*
 * The compact text of valid JSON (what a document's `text` is), written
 * piece by piece: feed the value's bytes in order, in as many calls as suit
 * the caller (a piece may end anywhere, inside a string too); the state
 * carries what a piece boundary splits. Appends to `out`; returns 0,
 * AR_ETOOBIG or AR_ENOMEM.
 */
struct ar_json_compactor {
    int in_string; /* inside a string */
    int escaped;   /* in a string, the bytes fed so far end in an odd run of backslashes */
};

#define AR_JSON_COMPACTOR_INIT \
    {                          \
        0, 0                   \
    }

int ar_json_compact(struct ar_json_compactor *st, const char *s, size_t n, struct ar_buf *out);

/*
 * Whether ar_json_compact() takes its AVX2 path where the machine runs it
 * (it does by default): 0 keeps it to the portable one, so that tests can
 * compare the two. Returns whether the AVX2 path is now taken.
 */
int ar_json_compact_use_avx2(int on);

/* Frees everything; the document is empty (AR_JSON_DOC_INIT) afterwards. */
void ar_json_doc_finish(struct ar_json_doc *doc);

/*
 * The spelling of the number `num` (borrowed, a node of doc->value), or NULL
 * when it has none recorded (a json_integer, whose digits are exact). Valid
 * while the document lives. `doc` may be NULL.
 */
const char *ar_json_doc_lexeme(const struct ar_json_doc *doc, const json_t *num, size_t *len);

/*
 * Compares two JSON numbers exactly, each given by its spelling (RFC 8259
 * number syntax; any length, any exponent): -1, 0 or 1. 0.0 and -0 are equal.
 */
int ar_json_number_cmp(const char *a, size_t an, const char *b, size_t bn);

/*
 * Writes the exact decimal spelling of the jansson number `v` to dst (at
 * least AR_JSON_NUMBER_EXACT bytes): the digits of an integer, or every digit
 * of a double's binary value. Returns the length.
 */
#define AR_JSON_NUMBER_EXACT 1100
size_t ar_json_number_exact(const json_t *v, char *dst);

/* 1 when the number spelled s[0..n) has no fractional part (3, 3.0, 2e3, -0). */
int ar_json_number_is_integral(const char *s, size_t n);

#endif
