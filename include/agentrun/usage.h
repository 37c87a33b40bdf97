/* agentrun: normalized token usage (DESIGN §4). */
#ifndef AGENTRUN_USAGE_H
#define AGENTRUN_USAGE_H

#include <stdint.h>

#include "common.h"

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

/* The share of u's input tokens that a prompt cache served, cache_read / (input +
 * cache_read + cache_write), in [0, 1] (cached input is billed at a tenth or less of fresh
 * input); -1 when u has no input tokens. */
AR_API double ar_usage_cache_read_share(const struct ar_usage *u);

#ifdef __cplusplus
}
#endif

#endif
