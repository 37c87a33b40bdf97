/*
 * Contract patterns: ECMA-262 regular expressions (what JSON Schema's `pattern`,
 * `patternProperties` and the `regex` format mean, and what the models, claude's
 * --json-schema and codex's --output-schema read them as), in unicode mode (the
 * `u` flag), matched by PCRE2 on code points, the same in every build.
 *
 * The ECMA-262 text is parsed here by its own grammar and written out as a PCRE2
 * pattern whose meaning is ECMA-262's: `.` takes every code point but the four
 * line terminators, `\s` is ECMA-262's white space and line terminators, `\d` and
 * `\w` are ASCII, `$` is the end of the string only, `\u{1F600}`, `\uD83D\uDE00`,
 * `\cJ`, `\0` and `\xHH` are code points, a back-reference to a group that took
 * no part matches the empty string. What ECMA-262's unicode mode refuses (an
 * unknown escape like `\a`, a lone `{` or `]`, `[[:alnum:]]`-style classes that
 * end early, a quantified lookahead) is a load error, and so is what PCRE2
 * cannot do the same way (a lookbehind of variable length, a bound above 65535).
 *
 * No pattern can run away: a search tries every start within one call to PCRE2,
 * whose step count is limited to AR_PATTERN_STEPS_BASE + AR_PATTERN_STEPS_PER_BYTE
 * per byte of the subject (so the time a search may take grows linearly with the
 * string, whatever the pattern: about 0.1 s plus 2.5 s a MB at worst), with its memory
 * limited too; a pattern with a back-reference searches strings of at most
 * AR_PATTERN_BACKREF_MAX_BYTES. A search that hits
 * a limit is an error, never a match and never a miss. PCRE2 runs without its JIT
 * everywhere, so the count is the same in the glibc build and the musl release
 * binary.
 */
#ifndef AR_CONTRACT_PATTERN_H
#define AR_CONTRACT_PATTERN_H

#include <stddef.h>

#define AR_PATTERN_STEPS_BASE     1000000
#define AR_PATTERN_STEPS_PER_BYTE 20
/* A back-reference compares its group's text without a step: a pattern with one
 * searches strings up to this long only (longer is a limit hit). */
#define AR_PATTERN_BACKREF_MAX_BYTES 65536
#define AR_PATTERN_HEAP_KIB          (64 * 1024)
/* A pattern longer than this many bytes is a load error. */
#define AR_PATTERN_MAX_LEN (64 * 1024)

/* ar_pattern_match()'s answer when a limit stopped the search. */
#define AR_PATTERN_LIMIT (-2)

struct ar_pattern;

/*
 * Compiles the ECMA-262 pattern s[0..len) (UTF-8). Returns 0 with *out set
 * (ar_pattern_destroy()), or -1 with a reason in why ("\\a is not an escape in
 * ECMA-262's unicode mode (at byte 3)") when it is not a pattern agentrun can
 * match as ECMA-262 does, or when out of memory.
 */
int ar_pattern_compile(const char *s, size_t len, struct ar_pattern **out, char *why,
                       size_t whylen);

/*
 * Searches the UTF-8 string s[0..len) (NUL bytes allowed) for a match anywhere:
 * 1 found, 0 not found, AR_PATTERN_LIMIT when the search hit its step or memory
 * limit, -1 on another failure (out of memory, a string that is not UTF-8).
 */
int ar_pattern_match(const struct ar_pattern *p, const char *s, size_t len);

/* NULL does nothing. */
void ar_pattern_destroy(struct ar_pattern *p);

/* 1 when s[0..len) is an ECMA-262 pattern agentrun can match (the `regex` format). */
int ar_pattern_valid(const char *s, size_t len);

/* The PCRE2 pattern a compiled pattern runs (for tests and fuzzing); borrowed. */
const char *ar_pattern_pcre2_text(const struct ar_pattern *p);

#endif
