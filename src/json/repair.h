/*
 * Local repair of almost-JSON that models emit (DESIGN §5): deterministic,
 * one pass, linear time, no recursion. Each rule fires only on text that is
 * not valid JSON, so valid JSON comes back byte for byte with no fixes.
 */
#ifndef AR_JSON_REPAIR_H
#define AR_JSON_REPAIR_H

#include <stddef.h>

#include "agentrun/error.h"
#include "util/buf.h"

enum ar_json_fix {
    AR_FIX_TRAILING_COMMA = 1 << 0,   /* [1,2,] {"a":1,} and doubled commas */
    AR_FIX_COMMENTS = 1 << 1,         /* // line and block comments dropped */
    AR_FIX_SINGLE_QUOTES = 1 << 2,    /* 'text' -> "text" */
    AR_FIX_CURLY_QUOTES = 1 << 3,     /* “text” and ‘text’ as delimiters -> "text" */
    AR_FIX_UNQUOTED_KEYS = 1 << 4,    /* {a: 1} -> {"a": 1} */
    AR_FIX_PYTHON_LITERALS = 1 << 5,  /* True False None -> true false null */
    AR_FIX_NAN_INFINITY = 1 << 6,     /* NaN Infinity -Infinity -> null */
    AR_FIX_RAW_NEWLINES = 1 << 7,     /* raw newline, tab, control bytes in strings escaped */
    AR_FIX_MISSING_COMMA = 1 << 8,    /* {"a":1 "b":2} [1 2] */
    AR_FIX_TRUNCATION = 1 << 9,       /* open string, value, arrays and objects closed */
    AR_FIX_MISSING_QUOTE = 1 << 10,   /* {"a":"b,"c":1} {"a":"b} : the closing quote supplied */
    AR_FIX_INNER_QUOTES = 1 << 11,    /* "say "hi" now" -> "say \"hi\" now" */
    AR_FIX_UNQUOTED_VALUES = 1 << 12, /* [a, b] {url: https://x} -> strings */
    AR_FIX_NUMBER_FORMAT = 1 << 13,   /* .25 +1 82_461_110 -> 0.25 1 82461110; 0789 -> "0789" */
    AR_FIX_ELLIPSIS = 1 << 14,        /* [1, 2, ...] -> [1, 2] */
    AR_FIX_JS_SYNTAX = 1 << 15,       /* undefined TRUE ObjectId("1") new Date("x") "a" + "b" */
    AR_FIX_MISSING_COLON = 1 << 16,   /* {"a" 1} -> {"a": 1} */
    AR_FIX_BRACKETS = 1 << 17,        /* {"a": 2] -> {"a": 2}, {"a": [1} -> {"a": [1]} */
    AR_FIX_UNICODE_SPACE = 1 << 18,   /* NBSP and other non-ASCII spaces between tokens */
    AR_FIX_ESCAPED_JSON = 1 << 19,    /* {\"k\": 1} -> {"k": 1} */
    AR_FIX_MISSING_VALUE = 1 << 20,   /* {"a":} {"a":,"b":1} -> null */
    /* Not a repair: the text held other values besides the answer (extract.h
     * says how many and where); the answer is still the text's own bytes. */
    AR_FIX_EXTRA_VALUES = 1 << 21,
    AR_FIX_MEMBERS_AFTER_CLOSE = 1 << 22, /* {"a":1}, "b":2} -> {"a":1,"b":2} */
};

#define AR_FIX_COUNT 23

/* The fix bits that name a choice, not a change: an answer with only these is
 * still the text's own bytes. */
#define AR_FIX_NOTES AR_FIX_EXTRA_VALUES

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
