/*
 * Retry, in one place: whether a failed call is made once more and after how
 * long (ar_retry_wait()), and the rate-limit pauses runs share (ar_backoff).
 * The pipeline asks; the adapters only read what the CLI said (the error
 * class, a transient flag, the provider's retry-after hint).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

struct ar_backoff *ar_backoff_create(void)
{
    return calloc(1, sizeof(struct ar_backoff));
}

void ar_backoff_destroy(struct ar_backoff *b)
{
    free(b);
}

uint64_t ar_backoff_left(const struct ar_backoff *b, const char *provider, uint64_t now_ms)
{
    for (size_t i = 0; i < AR_BACKOFF_SLOTS; i++)
        if (!strcmp(b->v[i].name, provider))
            return b->v[i].until_ms > now_ms ? b->v[i].until_ms - now_ms : 0;
    return 0;
}

/* The provider's slot, taken when it has none; AR_BACKOFF_SLOTS when every slot is taken. */
static size_t slot_of(struct ar_backoff *b, const char *provider)
{
    size_t free_slot = AR_BACKOFF_SLOTS;
    for (size_t i = 0; i < AR_BACKOFF_SLOTS; i++) {
        if (!strcmp(b->v[i].name, provider))
            return i;
        if (!b->v[i].name[0] && free_slot == AR_BACKOFF_SLOTS)
            free_slot = i;
    }
    if (free_slot < AR_BACKOFF_SLOTS)
        snprintf(b->v[free_slot].name, sizeof(b->v[free_slot].name), "%s", provider);
    return free_slot;
}

void ar_backoff_extend(struct ar_backoff *b, const char *provider, uint64_t until_ms)
{
    size_t i = slot_of(b, provider);
    if (i == AR_BACKOFF_SLOTS)
        return;
    if (until_ms > b->v[i].until_ms)
        b->v[i].until_ms = until_ms;
}

void ar_backoff_refuse(struct ar_backoff *b, const char *provider, uint64_t until_ms,
                       int64_t resets_at)
{
    size_t i = slot_of(b, provider);
    if (i < AR_BACKOFF_SLOTS && until_ms > b->v[i].refused_until_ms) {
        b->v[i].refused_until_ms = until_ms;
        b->v[i].refused_resets_at = resets_at;
    }
}

int64_t ar_backoff_refused(const struct ar_backoff *b, const char *provider, uint64_t now_ms)
{
    for (size_t i = 0; i < AR_BACKOFF_SLOTS; i++)
        if (!strcmp(b->v[i].name, provider))
            return b->v[i].refused_until_ms > now_ms ? b->v[i].refused_resets_at : 0;
    return 0;
}

/* The waits before the one retry of a call when the provider did not say how long. */
#define RATE_LIMIT_WAIT_MS 5000
#define TRANSIENT_WAIT_MS  2000

int ar_retry_wait(int code, int transient, double retry_after_s, uint64_t max_wait_ms, uint64_t *ms)
{
    if (!max_wait_ms)
        return 0;
    double want;
    if (code == AR_ERATELIMIT)
        want = retry_after_s >= 0 ? retry_after_s * 1000.0 : RATE_LIMIT_WAIT_MS;
    else if (code == AR_EAPI && transient)
        want = retry_after_s >= 0 ? retry_after_s * 1000.0 : TRANSIENT_WAIT_MS;
    else
        return 0;
    /* Compared as a double before any conversion: a wait no integer holds (1e30 s,
     * HUGE_VAL) is past max_wait_ms, where converting it first gave 0 and an instant
     * retry. NaN fails the comparison too. */
    if (!(want <= (double)max_wait_ms))
        return 0;
    *ms = (uint64_t)(want + 0.999);
    return 1;
}
