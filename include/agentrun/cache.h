/*
 * agentrun: the result cache (--cache, docs/record-replay.md): where it is,
 * what it holds, and emptying it. What `agentrun cache stats|clear` does.
 *
 *     char *dir = ar_cache_default_dir();
 *     struct ar_cache_stats st;
 *     if (dir && ar_cache_stats(dir, &st, &err) == 0)
 *         printf("%llu entries\n", (unsigned long long)st.entries);
 *     free(dir);
 */
#ifndef AGENTRUN_CACHE_H
#define AGENTRUN_CACHE_H

#include <stdint.h>

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a cache directory holds. Filled whole by ar_cache_stats(). */
struct ar_cache_stats {
    uint64_t entries;
    uint64_t bytes;
    uint64_t corrupt; /* files that are not entries (kept until a put or clear replaces them) */
    int64_t oldest;   /* Unix seconds of the oldest entry's recording, 0 when none */
    int64_t newest;
    void *reserved[4]; /* zero: members added later come out of it (docs/library.md#abi) */
};

/* The default directory: $XDG_CACHE_HOME/agentrun, else $HOME/.cache/agentrun. The caller
 * free()s it; NULL when neither variable is set (or out of memory). */
AR_API char *ar_cache_default_dir(void);

/* Counts the entries of dir (a missing dir is an empty cache). Returns 0, or AR_EIO with err
 * set. */
AR_API int ar_cache_stats(const char *dir, struct ar_cache_stats *st, struct ar_error *err);

/* Removes every entry (and leftover temp file) of dir; *removed (may be NULL) gets how many,
 * also when it fails part way. Returns 0, or AR_EIO with err set. */
AR_API int ar_cache_clear(const char *dir, uint64_t *removed, struct ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
