/* agentrun: normalized token usage (DESIGN §4). */
#ifndef AGENTRUN_USAGE_H
#define AGENTRUN_USAGE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * input:       uncached input tokens (cache reads and writes excluded);
 * cache_read:  input tokens served from the cache;
 * cache_write: input tokens written to the cache;
 * output:      output tokens, reasoning included;
 * reasoning:   the reasoning part of output (informational).
 */
struct ar_usage {
    uint64_t input;
    uint64_t cache_read;
    uint64_t cache_write;
    uint64_t output;
    uint64_t reasoning;
};

#define AR_USAGE_INIT \
    {                 \
        0, 0, 0, 0, 0 \
    }

#ifdef __cplusplus
}
#endif

#endif
