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

/* Containers nested deeper than this are refused, as jansson's own parser
 * does (JSON_PARSER_MAX_DEPTH): code that walks values recurses. */
#define AR_JSON_MAX_DEPTH 2048

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
 * whitespace, strictly (RFC 8259: UTF-8 strings, no lone surrogate escapes).
 * On success fills *doc (finish it) and returns 0. Otherwise returns AR_ENOJSON
 * with err->msg saying what is wrong and at which byte, or AR_ENOMEM. Iterative:
 * no recursion on the input's nesting.
 */
int ar_json_doc_parse(struct ar_json_doc *doc, const char *s, size_t n, struct ar_error *err);

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
