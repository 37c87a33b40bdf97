/* Rate-limit pauses shared by the runs of one loop (see run.h). */
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

void ar_backoff_extend(struct ar_backoff *b, const char *provider, uint64_t until_ms)
{
    size_t free_slot = AR_BACKOFF_SLOTS;
    for (size_t i = 0; i < AR_BACKOFF_SLOTS; i++) {
        if (!strcmp(b->v[i].name, provider)) {
            if (until_ms > b->v[i].until_ms)
                b->v[i].until_ms = until_ms;
            return;
        }
        if (!b->v[i].name[0] && free_slot == AR_BACKOFF_SLOTS)
            free_slot = i;
    }
    if (free_slot < AR_BACKOFF_SLOTS) {
        snprintf(b->v[free_slot].name, sizeof(b->v[free_slot].name), "%s", provider);
        b->v[free_slot].until_ms = until_ms;
    }
}
