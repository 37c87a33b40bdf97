/*
 * agentrun: the JSON value, a fenced code block or a section in model text,
 * and the final text in a CLI's captured output (docs/extract.md). What
 * `agentrun extract` does, on a byte buffer you hold:
 *
 *     struct ar_extraction_options o;
 *     ar_extraction_options_init(&o);
 *     o.repair = 1;
 *     struct ar_extraction *x;
 *     if (ar_extract_json(text, len, &o, &x, &err) == 0) {
 *         ar_extraction_write(x, text, write_fn, stdout); // one line of compact JSON
 *         ar_extraction_destroy(x);
 *     }
 *
 * The text is any bytes (NULs included, need not be NUL-terminated) and is
 * only read: the value comes back as the model wrote it (keys in their order,
 * numbers as spelled), compacted, or repaired where `repair` allowed it.
 */
#ifndef AGENTRUN_EXTRACT_H
#define AGENTRUN_EXTRACT_H

#include <stddef.h>

#include "common.h"
#include "error.h"
#include "usage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a local repair did, or what the answer left out: bits of ar_extraction.fixes. Their
 * names (ar_extract_fix_names()) are the RunResult's local_fixes words. */
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
    /* Not a repair: the text held other values besides the answer (extra_count
     * says how many and extra_at where); the answer is still the text's own bytes. */
    AR_FIX_EXTRA_VALUES = 1 << 21,
    AR_FIX_MEMBERS_AFTER_CLOSE = 1 << 22, /* {"a":1}, "b":2} -> {"a":1,"b":2} */
};

/* The fix bits that name a choice, not a change: an answer with only these is
 * still the text's own bytes. */
#define AR_FIX_NOTES AR_FIX_EXTRA_VALUES

/* The names of the fixes in `fixes` ("trailing_comma, comments"), separated by sep, in the
 * order of enum ar_json_fix. The caller free()s it; NULL when out of memory. */
AR_API char *ar_extract_fix_names(unsigned fixes, const char *sep);

/* ---- the JSON value ------------------------------------------------------------------ */

/* Which values count (ar_extraction_options.want). */
enum ar_extract_want {
    AR_WANT_OBJECT = 1, /* the default: "[1]" in prose is never the answer */
    AR_WANT_ARRAY = 2,
    AR_WANT_ANY = 3, /* an object or an array */
    /* The whole text is one JSON value of any kind, scalars included (surrounding
     * whitespace allowed): checked as it is, never searched for (`extract --value`). */
    AR_WANT_VALUE = 4,
};

/* A contract: a JSON Schema, draft 2020-12 or draft-07 (docs/prompts.md says what is
 * supported and what is refused at load). */
struct ar_contract;

/* ar_contract_options.flags */
enum ar_contract_flags {
    /* `format` asserts (docs/prompts.md lists the formats checked); by default it is an
     * annotation, as draft 2020-12 says. */
    AR_CONTRACT_FORMAT_ASSERT = 1 << 0,
};

/* How a contract is loaded. Borrowed for the call. */
struct ar_contract_options {
    /* The schema's own file, or NULL: a $ref may then name files beside it (in its
     * directory or below, by a relative reference or a file: URI). */
    const char *path;
    /* Other documents a $ref may name, never fetched from the network: "FILE" (named by
     * its $id), "URI=FILE" (that URI), or "PREFIX/=DIR" (every URI under the prefix,
     * from the directory). */
    const char *const *refs;
    size_t nrefs;
    unsigned flags;    /* enum ar_contract_flags */
    void *reserved[8]; /* zero: members added later come out of it */
};

/* Sets the defaults (no file, no other documents, format as an annotation). */
AR_API void ar_contract_options_init(struct ar_contract_options *o);

/*
 * Loads a contract from JSON Schema text (len bytes, need not be NUL-terminated),
 * with `o` (NULL: the defaults). Numbers keep their spelling (bounds, multipleOf,
 * const and enum are exact). Returns 0 with *out set (ar_contract_destroy()), or
 * AR_EUSAGE (err->where is the JSON Pointer of a bad keyword, or empty for text that
 * is no JSON; err->msg names the keyword, the dialect or the document refused),
 * AR_ENOMEM with err set.
 */
AR_API int ar_contract_load(const char *text, size_t len, const struct ar_contract_options *o,
                            struct ar_contract **out, struct ar_error *err);

/* ar_contract_load() with the defaults. */
AR_API int ar_contract_parse(const char *text, size_t len, struct ar_contract **out,
                             struct ar_error *err);

/* Frees the contract. NULL does nothing. */
AR_API void ar_contract_destroy(struct ar_contract *c);

struct ar_extraction_options {
    int want;   /* enum ar_extract_want (default AR_WANT_OBJECT) */
    int repair; /* repair a candidate that does not parse, and close a truncated one,
                   before giving up on it (default 0) */
    /* NULL (the default), or: the first value valid against it is the answer; when none
     * is, the first value comes back with valid 0 and its violations. Borrowed for the
     * call. Not with ar_extract_json_all(). */
    const struct ar_contract *contract;
    void *reserved[8]; /* zero: members added later come out of it (docs/library.md#abi) */
};

/* Sets the defaults (owned by the library). */
AR_API void ar_extraction_options_init(struct ar_extraction_options *o);

/* One value found. Allocated by the library (ar_extraction_destroy()); it grows at its end. */
struct ar_extraction {
    size_t start; /* the value's bytes in the text: [start, end) */
    size_t end;
    unsigned fixes;       /* enum ar_json_fix bits: what repair did, and the notes */
    size_t extra_count;   /* AR_FIX_EXTRA_VALUES: the other values the text holds */
    size_t extra_at;      /* the byte where the first of them starts */
    size_t members_count; /* AR_FIX_MEMBERS_AFTER_CLOSE: the members merged */
    size_t members_at;    /* the byte where the first of them starts */
    int fenced;           /* it came from a fenced ```json (or unlabelled) block */
    int valid;            /* 1; 0 when a contract was given and no value met it */
    /* !valid: what the value breaks of the contract, as `agentrun extract --schema`
     * prints it: a "path: message" line per violation ("/issues/2/line: expected
     * integer, got string \"3\""), then "(N more violations not shown)" when some were
     * left out; else NULL. */
    const char *violations;
};

/*
 * Finds the value in text[0..len): fenced ```json (or unlabelled) blocks
 * first, then bare values in document order (docs/extract.md has the rules).
 * Returns 0 with *out set, or, with err set and *out NULL:
 *   AR_ENOJSON     no value of the wanted kind (err->msg says why: "no JSON
 *                  object found", the first parse error of a broken one, or an
 *                  answer that closed before its members without repair);
 *   AR_ETRUNCATED  a value was cut off by the end of the text;
 *   AR_ENOMEM.
 */
AR_API int ar_extract_json(const char *text, size_t len, const struct ar_extraction_options *o,
                           struct ar_extraction **out, struct ar_error *err);

/* Receives output in pieces; returns 0, or non-zero to stop (that value is returned). */
typedef int ar_write_fn(void *arg, const char *data, size_t len);

/*
 * Writes the value of x as one line of compact JSON, without a newline, to
 * fn in pieces of at most 64 KiB (a large value is never held twice). `text`
 * is the text x was found in. Returns 0, fn's non-zero, or AR_ENOMEM.
 */
AR_API int ar_extraction_write(const struct ar_extraction *x, const char *text, ar_write_fn *fn,
                               void *arg);

/* Frees x. NULL is fine. */
AR_API void ar_extraction_destroy(struct ar_extraction *x);

/* Called by ar_extract_json_all() for each value; x is borrowed for the call. Return non-zero
 * to stop. */
typedef int ar_extraction_fn(const struct ar_extraction *x, const char *text, void *arg);

/*
 * Calls fn for every top-level value of the wanted kind in document order:
 * the values that parse as they are, or when there are none and `repair` is
 * on, the repaired ones (o->contract must be NULL). Returns the number of
 * values (> 0), or the error ar_extract_json() would give. *left_count and
 * *left_at (each may be NULL) get how many values were met but not given
 * (broken, cut off) and where the first starts.
 */
AR_API int ar_extract_json_all(const char *text, size_t len, const struct ar_extraction_options *o,
                               ar_extraction_fn *fn, void *arg, size_t *left_count, size_t *left_at,
                               struct ar_error *err);

/* ---- markdown ------------------------------------------------------------------------ */

/*
 * Calls fn(arg, text + start, end - start) with the contents of each fenced
 * code block of text[0..len) whose language (the info string's first word) is
 * lang, any case (lang NULL: every block), in document order; a block the text
 * ends inside runs to the end. fn returns 0, or a negative value to stop the
 * walk. Returns how many blocks there were, or fn's negative value.
 */
AR_API int ar_markdown_blocks(const char *text, size_t len, const char *lang, ar_write_fn *fn,
                              void *arg);

/*
 * The text under the markdown heading `heading` (any level; case and spacing
 * as docs/extract.md says), up to the next heading of its level or above:
 * [*start, *end) of text. Returns 0, or AR_ENOJSON with err saying the
 * heading was not found.
 */
AR_API int ar_markdown_section(const char *text, size_t len, const char *heading, size_t *start,
                               size_t *end, struct ar_error *err);

/* ---- a CLI's captured output ------------------------------------------------------------ */

/* What ar_captured_unwrap() read. Allocated by the library; it grows at its end. */
struct ar_captured {
    const char *provider;   /* the CLI whose output it is: "claude" (static storage) */
    const char *text;       /* its final text, or NULL when it holds none */
    const char *session_id; /* or NULL */
    struct ar_usage usage;
    int error;             /* an error the CLI reported in it (AR_EAUTH, AR_ERATELIMIT…), or 0 */
    const char *error_msg; /* the CLI's own words for it, or NULL */
};

/*
 * Reads data[0..len), the json or stream-json output a CLI printed (claude -p
 * --output-format json, codex exec --json, gemini -o json): `provider` names
 * the CLI, or is "auto" (the first whose output it is). Returns 0 with *out
 * set (ar_captured_destroy()); or AR_EUSAGE for a provider name that is none,
 * AR_ENOJSON when data is not that output, AR_ENOMEM, with err set.
 */
AR_API int ar_captured_unwrap(const char *provider, const char *data, size_t len,
                              struct ar_captured **out, struct ar_error *err);

/* Frees c. NULL is fine. */
AR_API void ar_captured_destroy(struct ar_captured *c);

#ifdef __cplusplus
}
#endif

#endif
