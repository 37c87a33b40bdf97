/*
 * The strict scan's fast path for long values: 64 bytes are classified at a
 * time with AVX2 (where the CPU has it: ar_cpu_avx2()), into the first bytes
 * of tokens and the whitespace outside strings, and the grammar walks the
 * tokens from one bit to the next. It takes only plain blocks: none holds a
 * backslash, a byte from 0x80, or a control byte other than whitespace
 * between tokens. Everything else (escapes, UTF-8, errors, the end of the
 * range, nesting past 63 levels) it hands back to ar_json_scan() at the
 * token or block where it stopped, with the state the byte scanner goes on
 * from; so every answer, with its reason and byte, is the byte scanner's,
 * and the walker only spares it the plain stretches. Internal to src/json.
 */
#ifndef AR_JSON_SCAN_BLOCKS_H
#define AR_JSON_SCAN_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

/* Containers the walker takes over: its stack is one word. */
#define AR_JSON_WALK_DEPTH 63

/* Bytes a value's byte scan reads before it hands over to the walker: short
 * values, and the many false starts in prose, stay on the byte scanner.
 * SIZE_MAX never hands over; tests set 0, to hand over at every container. */
extern size_t ar_json_walk_after;

/* Where the walk stopped: the byte scanner goes on from there. */
enum ar_json_walk_label {
    AR_WALK_DONE,  /* the outermost container closed: at is one past it */
    AR_WALK_FIRST, /* after an opening bracket */
    AR_WALK_KEY,   /* a key is next (after ',' in an object) */
    AR_WALK_COLON, /* ':' is next */
    AR_WALK_VALUE, /* a value is next */
    AR_WALK_AFTER, /* ',' or a closing bracket is next */
};

struct ar_json_walk_state {
    size_t at;      /* where the scan goes on; only whitespace before it is unread */
    size_t depth;   /* open containers, 1..AR_JSON_WALK_DEPTH (0 when done) */
    uint64_t kinds; /* bit d set when the container at depth d is an array */
    int spaced;     /* set when whitespace stood between tokens */
    int saw;        /* set when a container of a kind in want (AR_KIND_*) opened */
};

/*
 * Walks on from w->at, the byte after the bracket that opened the innermost
 * of w->depth containers, within s[0..hi). Returns where it stopped, with w
 * updated (spaced and saw are or-ed in).
 */
int ar_json_walk(const char *s, size_t hi, int want, struct ar_json_walk_state *w);

#endif
