/*
 * libFuzzer target: the strict recognizer (src/json/scan.c) against the one
 * it was before issue 32's speed work (scan_ref.c, a copy kept for this):
 *   - the whole scan from every '{' or '[' (and from the first byte, with
 *     top-level scalars), to the input's end and to ends cut short, for
 *     objects, arrays and both: the same status, stop, open containers and
 *     their kinds, whitespace seen, kind wanted seen, reason, its byte and
 *     whether it is in a string; with the block walker (scan_blocks.c)
 *     taking over at every container, and without it;
 *   - the number and literal readers (digits eight at a time now, a literal
 *     as one word) at every offset, for every end up to 24 bytes on (where the
 *     blocks give way to the byte loop) and the input's end: the same status
 *     and stop.
 * scan.c is compiled in here, so its static readers are reachable.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../../src/json/scan.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int ar_json_scan_ref(struct ar_json_scanner *sc, const char *text, size_t start, size_t hi,
                     size_t *stop);

/* The previous readers (scan_ref.c). */
int ar_json_scan_ref_number(const unsigned char *s, size_t i, size_t hi, size_t *next);
int ar_json_scan_ref_literal(const unsigned char *s, size_t i, size_t hi, size_t *next);

static void same(int (*now)(const unsigned char *, size_t, size_t, size_t *),
                 int (*was)(const unsigned char *, size_t, size_t, size_t *),
                 const unsigned char *s, size_t i, size_t hi)
{
    size_t a = SIZE_MAX, b = SIZE_MAX;
    if (now(s, i, hi, &a) != was(s, i, hi, &b) || a != b)
        abort();
}

static int same_why(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Both scanners on the value at s[i], within s[0..hi), the new one with the
 * block walker taking over at every container or never (after = SIZE_MAX). */
static void scan_both_after(const unsigned char *s, size_t i, size_t hi, int want, int scalars,
                            size_t after)
{
    struct ar_json_scanner a, b;
    size_t sa = SIZE_MAX, sb = SIZE_MAX;
    ar_json_scanner_init(&a, want, scalars);
    ar_json_scanner_init(&b, want, scalars);
    ar_json_walk_after = after;
    int ra = ar_json_scan(&a, (const char *)s, i, hi, &sa);
    int rb = ar_json_scan_ref(&b, (const char *)s, i, hi, &sb);
    if (ra != rb || sa != sb || a.depth != b.depth || a.spaced != b.spaced ||
        a.saw_want != b.saw_want || !same_why(a.why, b.why) || a.why_at != b.why_at ||
        a.fail_in_string != b.fail_in_string)
        abort();
    for (size_t d = 0; d < a.depth; d++)
        if (kind_at(&a, d) != kind_at(&b, d))
            abort();
    ar_json_scanner_finish(&a);
    ar_json_scanner_finish(&b);
}

static void scan_both(const unsigned char *s, size_t i, size_t hi, int want, int scalars)
{
    scan_both_after(s, i, hi, want, scalars, 0);
    scan_both_after(s, i, hi, want, scalars, SIZE_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < size; i++) {
        int number = s[i] == '-' || is_digit(s[i]);
        int literal = s[i] == 't' || s[i] == 'f' || s[i] == 'n';
        if (!number && !literal)
            continue;
        for (size_t hi = i + 1; hi <= size; hi = hi < i + 24 ? hi + 1 : size + (hi == size)) {
            if (number)
                same(ar_json_scan_number, ar_json_scan_ref_number, s, i, hi);
            else
                same(ar_json_scan_literal, ar_json_scan_ref_literal, s, i, hi);
        }
    }
    size_t starts = 0;
    for (size_t i = 0; i < size && starts < 64; i++) {
        if (s[i] != '{' && s[i] != '[' && i > 0)
            continue;
        starts++;
        for (size_t hi = i + 1; hi <= size; hi = hi < i + 40 ? hi + 1 : size + (hi == size)) {
            scan_both(s, i, hi, AR_KIND_OBJECT, i == 0);
            scan_both(s, i, hi, AR_KIND_ARRAY, 0);
            scan_both(s, i, hi, AR_KIND_OBJECT | AR_KIND_ARRAY, 0);
        }
    }
    return 0;
}
