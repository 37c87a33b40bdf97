/*
 * Extraction of a JSON value from model text (DESIGN §5; docs/extract.md has
 * the rules with examples).
 *
 * One reading of the text: it is cut into the contents of the fenced blocks
 * whose info string is empty or json/jsonc/json5 (any case) and the text
 * between them, and each part is read on its own: no value, string or broken
 * value runs across a fence. The answer, the count of the others and
 * ar_json_extract_all() all come from that reading, so they cannot disagree.
 * Candidates, in order: the values of the fenced blocks in document order;
 * then the bare values between them in document order. Only objects and arrays are values
 * here. A bare value is a top-level one: a complete object or array is a
 * candidate if it is of the wanted kind and is skipped whole otherwise, so the
 * "[1]" of a citation never yields its contents and an object inside an
 * array is not picked out of it. An array that shares its line with text
 * before it (an inline citation) only wins when no other candidate does. A
 * bracket whose first token is not JSON is prose and scanning resumes after it
 * ("use {placeholder} then {\"a\":1}" gives {"a":1}); a value that began as
 * JSON and broke is skipped to where its brackets close (to the end when they
 * never do), and nothing inside it is a candidate. A value still open when the
 * text (or an unclosed fence) ends is truncated: it is reported as such, never
 * replaced by a fragment of it.
 *
 * A value that parses as it is always beats one that needed repair: the text
 * is searched strictly first, and repaired only when that found no answer (so
 * repair on valid input costs what the strict search costs, and braces in
 * prose stay prose). An object followed by more members (`{"a":1}, "b":2}`)
 * closed too early: with repair they are merged (members_after_close), without
 * it the answer is that error. A repair that would drop part of a value (what
 * follows a closer it moved) is refused.
 *
 * Never silent: every other value the search met (that parsed, that began as
 * JSON and broke, or was cut off; with repair also one that repair made
 * usable) is counted, and the answer names them (AR_FIX_EXTRA_VALUES with
 * their count and where the first one starts). So is a value right after the
 * answer that belongs with it by ar_json_value_follows() (a string or a value
 * after a comma, a second value on its line), even one the search does not
 * count; members after a comma, with or without their colon, are members.
 *
 * A leading UTF-8 BOM is skipped; offsets are into the original text. The
 * value comes with its text as the model wrote it (doc.h).
 *
 * Time is linear in the text: each byte is scanned a bounded number of times
 * and repairs never overlap. Nothing recurses on the input's nesting.
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
    /* When no candidate parses as it is, candidates are locally repaired
     * (repair.h) and a truncated one is closed before they are given up. */
    AR_EXTRACT_REPAIR = 1 << 0,
    /* The caller only prints the answer: no jansson value is built (value and
     * doc.value stay NULL; `accept` is then not allowed), and an answer that
     * is the text's own bytes comes as its span only (doc.text NULL: print
     * text[start, end) with ar_json_compact()). */
    AR_EXTRACT_TEXT_ONLY = 1 << 1,
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

/* A fix with a count and a place: how many, and the byte of the text where the first one starts. */
struct ar_extract_note {
    size_t count;
    size_t at;
};

struct ar_extract_result {
    json_t *value; /* doc.value (borrowed from doc); NULL when nothing was found */
    /* The value and its compact text as the model wrote it (doc.h): print doc.text. */
    struct ar_json_doc doc;
    size_t start; /* the value's bytes in the text: [start, end) */
    size_t end;
    unsigned fixes; /* enum ar_json_fix bits: what local repair did, and the notes */
    int accepted;   /* 1 when accept approved it (always 1 without accept) */
    int fenced;     /* 1 when it came from a fenced block */
    /* 1 when text[start, end) has no whitespace between tokens: it is its own
     * compact text (print it as it is) */
    int compact;
    struct ar_extract_note extra;   /* AR_FIX_EXTRA_VALUES: the other values left out */
    struct ar_extract_note members; /* AR_FIX_MEMBERS_AFTER_CLOSE: the members merged */
};

/* An answer's fixes with their details: what a RunResult records of them. */
struct ar_extract_fixes {
    unsigned bits; /* enum ar_json_fix */
    struct ar_extract_note extra, members;
};

#define AR_EXTRACT_RESULT_INIT                              \
    {                                                       \
        NULL, AR_JSON_DOC_INIT, 0, 0, 0, 0, 0, 0, { 0, 0 }, \
        {                                                   \
            0, 0                                            \
        }                                                   \
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
 *                  error of a failed candidate after it when there was one; or,
 *                  without repair, the answer closed before its members
 *                  ("... members follow at byte M; --repair merges them");
 *   AR_ENOMEM.
 */
int ar_json_extract(const char *text, size_t len, const struct ar_extract_options *opt,
                    struct ar_extract_result *res, struct ar_error *err);

/* Called for each value by ar_json_extract_all(): `doc` is borrowed for the call
 * (take a reference to doc->value, or copy doc->text, to keep it; with
 * AR_EXTRACT_TEXT_ONLY doc->text may be NULL: the value is text[start, end)).
 * Return non-zero to stop. */
typedef int ar_extract_each_fn(const struct ar_json_doc *doc, size_t start, size_t end,
                               unsigned fixes, void *arg);

/*
 * Calls fn for every top-level value of the wanted kind in document order
 * (the same reading as ar_json_extract(), fenced blocks and the text between
 * them; opt->accept is ignored). The values that parse as they are, or when there are none and
 * repair is on, the repaired ones. Returns the number of values (> 0); when
 * there is none, the error ar_json_extract() would give. *left (may be NULL)
 * counts the values met that were not given (broken, cut off).
 */
int ar_json_extract_all(const char *text, size_t len, const struct ar_extract_options *opt,
                        ar_extract_each_fn *fn, void *arg, struct ar_extract_note *left,
                        struct ar_error *err);

#endif
