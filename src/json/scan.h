/*
 * The strict JSON recognizer: the one place that says what JSON agentrun
 * accepts (RFC 8259: UTF-8 strings, no lone surrogate escapes, containers
 * nested at most AR_JSON_MAX_DEPTH deep). For the value that starts at a given
 * byte it says where the value ends, where it stops being JSON, or that the
 * text ended first. Extraction, repair and documents share it; it is not
 * public.
 *
 * It is iterative (the nesting is a bit stack on the heap), so no input can
 * overflow the C stack; it reads each byte once, plain string bytes eight at
 * a time, and copies nothing.
 */
#ifndef AR_JSON_SCAN_H
#define AR_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Containers nested deeper than this are refused, as jansson's own parser
 * does (JSON_PARSER_MAX_DEPTH): code that walks values recurses. */
#define AR_JSON_MAX_DEPTH 2048

enum ar_json_scan_status {
    AR_SCAN_COMPLETE = 0, /* a whole value: *stop is one past its last byte */
    AR_SCAN_FAIL = 1,     /* not JSON: *stop is the offending byte (> start) */
    AR_SCAN_EOF = 2,      /* a valid prefix cut off: *stop is the end of the range */
    AR_SCAN_NOMEM = 3,
    /* The syntax is whole (*stop is one past the value) but the value is not
     * JSON agentrun accepts: a string that is not UTF-8, a lone surrogate
     * escape, nesting past AR_JSON_MAX_DEPTH. */
    AR_SCAN_INVALID = 4,
};

/* Container kinds, also the bits of "wanted kind" masks. */
enum ar_json_kind_bits {
    AR_KIND_OBJECT = 1 << 0,
    AR_KIND_ARRAY = 1 << 1,
};

struct ar_json_scanner {
    uint64_t *kinds; /* one bit per open container: set for an array */
    size_t words;    /* allocated words of kinds */
    size_t depth;    /* containers open where the scan stopped */
    int want;        /* AR_KIND_* bits */
    int saw_want;    /* set when a container of a wanted kind was opened */
    int scalars;     /* a scalar is a whole value at the top (documents) */
    int spaced;      /* whitespace between tokens was met: the compact text differs */
    /* FAIL and INVALID: what is wrong ("expected ':'", "invalid UTF-8 in a
     * string") and the byte it is at; NULL otherwise. */
    const char *why;
    size_t why_at;
    int fail_in_string; /* FAIL: the offending byte is inside a string */
};

/* Starts a scanner noting containers of the kinds in `want`; a top-level
 * scalar is a value only when `scalars` is set. */
void ar_json_scanner_init(struct ar_json_scanner *sc, int want, int scalars);
void ar_json_scanner_finish(struct ar_json_scanner *sc);

/*
 * Recognizes the value that starts at s[start] ('{' or '[', or any value with
 * `scalars`) within s[0..hi). Returns an enum ar_json_scan_status and sets
 * *stop as documented there.
 */
int ar_json_scan(struct ar_json_scanner *sc, const char *s, size_t start, size_t hi, size_t *stop);

/*
 * Where a value ends that broke at `from` (in a string when the scan that
 * stopped there says so) with the containers sc holds open there: brackets are paired by kind
 * outside double-quoted strings; a closer that matches an outer container closes up to it, one that
 * matches nothing open is passed over. When an object closes the last container and members follow
 * (ar_json_members_follow()), it closed early and the value goes on. Returns hi when it never ends;
 * sc's containers are used up. AR_SCAN_NOMEM cannot happen: SIZE_MAX then.
 */
size_t ar_json_broken_end(struct ar_json_scanner *sc, const char *s, size_t from, size_t hi);

/* Opens a container of `kind` (AR_KIND_*) in sc, as if the scan had met its
 * bracket. Returns 0 or -1 (out of memory). */
int ar_json_scanner_open(struct ar_json_scanner *sc, int kind);

/*
 * After an object that closed just before s[i]: when members follow it
 * (`, "key":` or `"key":`, keys in double or single quotes, maybe after more
 * '}'; or `, "key" value`, a member that lost its colon: a value starts right
 * after the key), the object closed too early; returns the offset of the first
 * key, else SIZE_MAX.
 */
size_t ar_json_members_follow(const char *s, size_t i, size_t n);

/*
 * The rule for what an answer may not leave out unnamed (docs/extract.md, "More
 * than one value"): after a value that ends just before s[i], where another value
 * starts that belongs with it, else SIZE_MAX. That is a '{', '[' or '"' first
 * on the rest of its line, past spaces and code fences with their info string (a
 * second value on the same line, maybe in a block of its own), or after a ',' (and
 * any whitespace, newlines included) anything that starts a JSON value: a string,
 * a number, an object, an array, true, false or null. It reads only that: the
 * whitespace after the value and at most one token's first bytes.
 */
size_t ar_json_value_follows(const char *s, size_t i, size_t n);

/* 1 when s[0..len) is exactly one JSON object or array with optional
 * surrounding whitespace, else 0. */
int ar_json_is_valid(const char *s, size_t len);

/* The offset of the first byte of s[i..n) that is not JSON whitespace, or n. */
size_t ar_json_skip_ws(const char *s, size_t i, size_t n);

/* The first '"' or '\\' of s[i..n) (in a string, where it ends or escapes), or n. */
size_t ar_json_string_stop(const char *s, size_t i, size_t n);

#endif
