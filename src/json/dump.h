/*
 * Compact JSON output that keeps what the model wrote: object keys in their
 * order, UTF-8 as it is (only '"', '\\' and control characters are escaped),
 * and real numbers in the shortest form that reads back to the same double
 * (0.85 stays 0.85, where jansson's fixed 17 digits print 0.84999999999999998).
 */
#ifndef AR_JSON_DUMP_H
#define AR_JSON_DUMP_H

#include <jansson.h>

#include "util/buf.h"

/*
 * Appends `v` (borrowed) to `out` as compact JSON. Recursion follows the
 * value's nesting, which jansson's parser bounds at JSON_PARSER_MAX_DEPTH for
 * parsed values. Returns 0, AR_ETOOBIG or AR_ENOMEM.
 */
int ar_json_dump_compact(const json_t *v, struct ar_buf *out);

#endif
