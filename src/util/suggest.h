/*
 * "Did you mean": the nearest of a few known names to a mistyped one. One
 * function for every lookup of a name, in the library (job keys, providers,
 * templates) and in the CLI (commands, options, their values), so a typo gets
 * the same answer wherever it is made.
 */
#ifndef AR_UTIL_SUGGEST_H
#define AR_UTIL_SUGGEST_H

#include <stddef.h>

/*
 * The one of candidates[0..n) a mistyped word most likely meant ("verison" ->
 * "version"), by optimal string alignment distance (Levenshtein plus adjacent
 * swaps, as git's help.c weighs typos): at most a third of the word may be
 * wrong, and at least one letter. NULL when none is near enough, or two are
 * equally near (naming one would be a guess). Borrowed from candidates.
 */
const char *ar_suggest(const char *word, const char *const *candidates, size_t n);

/*
 * The same over a list written as text: names separated by '|', ',' or spaces
 * ("claude, codex, gemini", "text|json"). The name found is copied into buf
 * (size bytes); returns buf, or NULL (none near enough, or buf too small).
 */
const char *ar_suggest_in_list(const char *word, const char *list, char *buf, size_t size);

#endif
