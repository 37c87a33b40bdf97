/*
 * Batch records: the JSON line of one finished job ({"id": …} followed by its
 * RunResult), and reading earlier records back for a resumed batch.
 */
#ifndef AR_BATCH_RECORD_H
#define AR_BATCH_RECORD_H

#include <jansson.h>
#include <stddef.h>

#include "agentrun/agentrun.h"
#include "util/buf.h"

/*
 * Appends the record of r under id to out: one compact JSON line with its '\n'.
 * The id goes out as the input gave it (id_is_integer: 7 stays a number, so
 * `.id == 7` finds it); "json" as the model wrote it. Returns 0 or AR_ENOMEM.
 */
int ar_batch_record_line(const char *id, int id_is_integer, const struct ar_result *r,
                         struct ar_buf *out);

/*
 * Calls fn(arg, key, ok, offset, len) for every line of text[0..len) that is a
 * record: key is its id as the job list keys it ("7" for 7; borrowed for the
 * call), ok whether it says "ok": true, offset/len where its line is (without
 * the '\n'). Blank lines and lines that are not records (cut off by an
 * interruption) are passed over. Returns 0, or the first non-zero fn returned.
 */
typedef int ar_batch_record_each_fn(void *arg, const char *key, int ok, size_t offset, size_t len);
int ar_batch_record_each(const char *text, size_t len, ar_batch_record_each_fn *fn, void *arg);

#endif
