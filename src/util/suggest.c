/* "Did you mean" (suggest.h): the nearest of a few known names to a mistyped one. */
#include <string.h>

#include "util/suggest.h"

enum { SUGGEST_MAX_LEN = 64 };

/* The edit distance of a and b, each at most SUGGEST_MAX_LEN bytes. */
static size_t osa_distance(const char *a, size_t n, const char *b, size_t m)
{
    size_t row[3][SUGGEST_MAX_LEN + 1];
    size_t *prev2 = row[0], *prev = row[1], *cur = row[2];
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (prev[j - 1] + cost < d)
                d = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[m];
}

const char *ar_suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strlen(word);
    if (len == 0 || len > SUGGEST_MAX_LEN)
        return NULL;
    /* A third of the word may be wrong, and at least one letter: "rn" is not "run"'s typo
     * of choice, but "reveiw" is "review"'s. */
    size_t best_d = len / 3 > 1 ? len / 3 : 1;
    const char *best = NULL;
    int tie = 0;
    for (size_t i = 0; i < n; i++) {
        size_t m = strlen(candidates[i]);
        if (m > SUGGEST_MAX_LEN)
            continue;
        size_t d = osa_distance(word, len, candidates[i], m);
        if (d < best_d || (d == best_d && !best)) {
            best_d = d;
            best = candidates[i];
            tie = 0;
        } else if (d == best_d && best) {
            tie = 1;
        }
    }
    /* Two equally near words: naming one would be a guess. */
    return tie ? NULL : best;
}

/* The most names a list given as text is read for. */
enum { SUGGEST_MAX_WORDS = 64 };

const char *ar_suggest_in_list(const char *word, const char *list, char *buf, size_t size)
{
    char words[SUGGEST_MAX_WORDS][SUGGEST_MAX_LEN + 1];
    const char *v[SUGGEST_MAX_WORDS];
    size_t n = 0;
    for (const char *t = list; t && *t && n < SUGGEST_MAX_WORDS;) {
        t += strspn(t, "|, ");
        size_t k = strcspn(t, "|, ");
        if (k && k <= SUGGEST_MAX_LEN) {
            memcpy(words[n], t, k);
            words[n][k] = '\0';
            v[n] = words[n];
            n++;
        }
        t += k;
    }
    const char *near = ar_suggest(word, v, n);
    if (!near || strlen(near) >= size)
        return NULL;
    memcpy(buf, near, strlen(near) + 1);
    return buf;
}
