/*
 * Extraction of a JSON value from model text (DESIGN §5).
 *
 * Order of candidates: the contents of fenced blocks whose info string is
 * empty or json/jsonc/json5 (any case), in document order; then bare values in
 * the whole text in document order. Only objects and arrays are values here.
 * A bare value is a top-level one: a complete object or array is a candidate
 * if it is of the wanted kind and is skipped whole otherwise, so the "[1]" of
 * a citation never yields its contents and an object inside an array is not
 * picked out of it. An array that shares its line with text before it (an
 * inline citation) only wins when no later candidate does. A bracket whose
 * first token is not JSON is prose and scanning resumes after it ("use
 * {placeholder} then {\"a\":1}" gives {"a":1}); a value that began as JSON
 * and broke is skipped to where its brackets close (to the end when they
 * never do), and nothing inside it is a candidate. A value still open when
 * the text (or an unclosed fence) ends is truncated: it is reported as such,
 * never replaced by a fragment of it. With repair, it is closed only when
 * the text is a JSON prefix with content. A leading UTF-8 BOM is skipped;
 * offsets are into the original text. The value comes with its text as the
 * model wrote it (doc.h).
 *
 * Time is linear in the text: each byte is scanned a bounded number of times
 * and only disjoint regions are handed to the JSON parser. Nothing recurses on
 * the input's nesting (jansson's own parser stops at depth 2048).
 */
#ifndef AR_JSON_EXTRACT_H
#define AR_JSON_EXTRACT_H

#include <jansson.h>
#include <stddef.h>

#include "agentrun/error.h"
#include "json/doc.h"

enum ar_json_want {
    AR_JSON_OBJECT = 1, /* the default: "[1]" in prose is never the answer */
    AR_JSON_ARRAY = 2,
    AR_JSON_ANY = 3, /* an object or an array */
};

enum ar_extract_flags {
    /* A candidate that does not parse is locally repaired (repair.h), and a
     * truncated one is closed, before it is given up. */
    AR_EXTRACT_REPAIR = 1 << 0,
};

/* Contract-aware choice: returns non-zero when the candidate (borrowed; its
 * lexemes let numbers be compared exactly) is acceptable.
 * ar_contract_accept_fn() has this shape. */
typedef int ar_extract_accept_fn(const struct ar_json_doc *doc, void *arg);

struct ar_extract_options {
    int want;       /* enum ar_json_want */
    unsigned flags; /* enum ar_extract_flags */
    /* NULL: the first parseable candidate wins. Otherwise the first candidate
     * it accepts wins; if it accepts none, the first parseable candidate is
     * returned with accepted = 0. */
    ar_extract_accept_fn *accept;
    void *accept_arg;
};

#define AR_EXTRACT_OPTIONS_INIT       \
    {                                 \
        AR_JSON_OBJECT, 0, NULL, NULL \
    }

struct ar_extract_result {
    json_t *value; /* doc.value (borrowed from doc); NULL when nothing was found */
    /* The value and its compact text as the model wrote it (doc.h): print doc.text. */
    struct ar_json_doc doc;
    size_t start; /* the value's bytes in the text: [start, end) */
    size_t end;
    unsigned fixes; /* enum ar_json_fix bits applied by local repair, 0 when none */
    int accepted;   /* 1 when accept approved it (always 1 without accept) */
    int fenced;     /* 1 when it came from a fenced block */
};

#define AR_EXTRACT_RESULT_INIT                \
    {                                         \
        NULL, AR_JSON_DOC_INIT, 0, 0, 0, 0, 0 \
    }

/* Frees the document; the result may be reused afterwards. */
void ar_extract_result_finish(struct ar_extract_result *res);

/*
 * Finds the value in text[0..len) (any bytes, NULs included; need not be
 * NUL-terminated). `opt` may be NULL for the defaults. On success returns 0
 * and fills *res (finish it). Otherwise returns, with err set:
 *   AR_ETRUNCATED  a value was cut off by the end of the text:
 *                  "JSON truncated at byte N" (N = len), err->where "byte S" of its start;
 *   AR_ENOJSON     "no JSON object found" (array, value), with the first parse
 *                  error of a failed candidate after it when there was one;
 *   AR_ENOMEM.
 */
int ar_json_extract(const char *text, size_t len, const struct ar_extract_options *opt,
                    struct ar_extract_result *res, struct ar_error *err);

/* Called for each value by ar_json_extract_all(): `doc` is borrowed for the call
 * (take a reference to doc->value, or copy doc->text, to keep it). Return non-zero to stop. */
typedef int ar_extract_each_fn(const struct ar_json_doc *doc, size_t start, size_t end,
                               unsigned fixes, void *arg);

/*
 * Calls fn for every top-level value of the wanted kind in document order (bare
 * scan only, so a value in a fenced block is reported once; opt->accept is
 * ignored). Returns the number of values (> 0); when there is none, the error
 * ar_json_extract() would give.
 */
int ar_json_extract_all(const char *text, size_t len, const struct ar_extract_options *opt,
                        ar_extract_each_fn *fn, void *arg, struct ar_error *err);

#endif
