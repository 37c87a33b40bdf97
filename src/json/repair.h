/*
 * Local repair of almost-JSON that models emit (DESIGN §5): deterministic,
 * one pass, linear time, no recursion. Each rule fires only on text that is
 * not valid JSON, so valid JSON comes back byte for byte with no fixes.
 */
#ifndef AR_JSON_REPAIR_H
#define AR_JSON_REPAIR_H

#include <stddef.h>

#include "agentrun/error.h"
#include "agentrun/extract.h"
#include "util/buf.h"

/* enum ar_json_fix (AR_FIX_*) and AR_FIX_NOTES are public: agentrun/extract.h. */

#define AR_FIX_COUNT 23

/* The fix's name ("trailing_comma"), or NULL for a value that is not one fix bit. */
const char *ar_json_fix_name(unsigned fix);

/*
 * Appends to `out` the names of the fixes in `fixes`, separated by `sep`, in the
 * order of enum ar_json_fix. Returns 0, AR_ETOOBIG or AR_ENOMEM.
 */
int ar_json_fixes_format(unsigned fixes, const char *sep, struct ar_buf *out);

/*
 * Repairs in[0..len), one object or array with optional surrounding
 * whitespace, appending the result to `out` and the fixes made to *fixes (may
 * be NULL). Text after the value is copied unchanged. The output is not
 * guaranteed to parse (the input may be beyond these rules): parse it.
 * Returns 0, AR_ETOOBIG, AR_ENOMEM, or AR_ENOJSON when repairing would mean
 * guessing structure (prose such as "{I cannot}" or "[see below]", a missing
 * colon after an unquoted key, a call that is not Name("x") or Name(1)).
 */
int ar_json_repair(const char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                   struct ar_error *err);

/* What ar_json_repair_value() took from its input. */
struct ar_json_repair_info {
    size_t consumed; /* input bytes the value took */
    /* members_after_close: how many members were merged, and the input
     * offset of the first one's key */
    size_t members, members_at;
};

/*
 * ar_json_repair() that stops after the value: text after it is not copied,
 * and *info (may be NULL) says what the value took.
 */
int ar_json_repair_value(const char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                         struct ar_json_repair_info *info, struct ar_error *err);

#endif
