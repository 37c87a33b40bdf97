/*
 * A strict JSON syntax recognizer for one object or array starting at a given
 * byte: it says where the value ends, where it stops being JSON, or that the
 * text ended first. Extraction and repair share it; it is not public.
 *
 * It is iterative (the nesting stack lives on the heap), so no input can
 * overflow the C stack, and it reads each byte once.
 */
#ifndef AR_JSON_SCAN_H
#define AR_JSON_SCAN_H

#include <stddef.h>

enum ar_json_scan_status {
    AR_SCAN_COMPLETE = 0, /* a whole value: *stop is one past its last byte */
    AR_SCAN_FAIL = 1,     /* not JSON: *stop is the offending byte (> start) */
    AR_SCAN_EOF = 2,      /* a valid prefix cut off: *stop is the end of the range */
    AR_SCAN_NOMEM = 3,
};

/* Container kinds, also the bits of "wanted kind" masks. */
enum ar_json_kind_bits {
    AR_KIND_OBJECT = 1 << 0,
    AR_KIND_ARRAY = 1 << 1,
};

struct ar_json_span {
    size_t start, end;
};

struct ar_json_scanner {
    size_t *stack; /* open containers: start offset * 2 + (1 for an array) */
    size_t depth, cap;
    /* Maximal complete containers of a wanted kind nested inside the scanned
     * value, in document order (filled by every scan, cleared at its start). */
    struct ar_json_span *subs;
    size_t nsubs, subcap;
    int want;     /* AR_KIND_* bits recorded in subs */
    int saw_want; /* set when any container of a wanted kind was opened */
};

/* Starts an empty scanner recording sub-values of the kinds in `want`. */
void ar_json_scanner_init(struct ar_json_scanner *sc, int want);
void ar_json_scanner_finish(struct ar_json_scanner *sc);

/*
 * Recognizes the value that starts at s[start] ('{' or '[') within s[0..hi).
 * Returns an enum ar_json_scan_status and sets *stop as documented there.
 */
int ar_json_scan(struct ar_json_scanner *sc, const char *s, size_t start, size_t hi, size_t *stop);

/* 1 when s[0..len) is exactly one JSON object or array with optional
 * surrounding whitespace, else 0. */
int ar_json_is_valid(const char *s, size_t len);

#endif
