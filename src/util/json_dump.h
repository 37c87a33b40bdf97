/*
 * Compact JSON output that keeps what the model wrote: object keys in their
 * order, UTF-8 as it is (only '"', '\\' and control characters are escaped),
 * and real numbers in the shortest form that reads back to the same double
 * (0.85 stays 0.85, where jansson's fixed 17 digits print 0.84999999999999998).
 */
#ifndef AR_UTIL_JSON_DUMP_H
#define AR_UTIL_JSON_DUMP_H

#include <jansson.h>

#include "util/buf.h"

/*
 * Appends `v` (borrowed) to `out` as compact JSON. Recursion follows the
 * value's nesting, which jansson's parser bounds at JSON_PARSER_MAX_DEPTH for
 * parsed values. Returns 0, AR_ETOOBIG or AR_ENOMEM.
 */
int ar_json_dump_compact(const json_t *v, struct ar_buf *out);

/*
 * Appends s[0..n) (any bytes) to out as one JSON string: quotes around it, '"', '\\' and
 * control characters escaped, every other byte as it is (UTF-8 stays UTF-8; a byte that is
 * not UTF-8 stays too, for the reader to decode). Returns 0, AR_ETOOBIG or AR_ENOMEM.
 */
int ar_json_dump_string(const char *s, size_t n, struct ar_buf *out);

/*
 * Like ar_json_dump_compact(), but wherever the node `raw` (borrowed, found by
 * address) occurs, `raw_text` (compact JSON text, NUL-terminated) is written
 * in its place: how a RunResult carries the model's value as the model wrote
 * it (json/doc.h) inside a document agentrun builds. `raw` or `raw_text` NULL:
 * plain ar_json_dump_compact().
 */
/* The JSON Schema type name of v ("object", "array", "string", "integer", "number",
 * "boolean", "null"): what contract messages say a value is and what codex's strict
 * schema copy declares. */
const char *ar_json_type_name(const json_t *v);

int ar_json_dump_compact_raw(const json_t *v, const json_t *raw, const char *raw_text,
                             struct ar_buf *out);

/*
 * Appends the JSON text s[0..n) (valid JSON, any layout) indented the way
 * json_dumps(JSON_INDENT(indent)) lays values out: one member or element per
 * line, ": " after keys, empty containers as {} and []. Tokens are copied as
 * they are. Returns 0, AR_ETOOBIG or AR_ENOMEM.
 */
int ar_json_text_indent(const char *s, size_t n, int indent, struct ar_buf *out);

/* A JSON string of s[0..len) (s may be NULL: JSON null); bytes that are not
 * UTF-8 become U+FFFD. New reference; JSON null when out of memory. */
json_t *ar_json_text(const char *s, size_t len);

#endif
