/* Growing arrays. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/error.h"
#include "util/array.h"

int ar_array_reserve(void *array, size_t *cap, size_t need, size_t elem_size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : (first ? first : 8);
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return AR_ENOMEM;
        n *= 2;
    }
    if (n > SIZE_MAX / elem_size)
        return AR_ENOMEM;
    /* The pointer is read and written through memcpy: `array` is a T **, not a void **. */
    void *old;
    memcpy(&old, array, sizeof(old));
    void *p = realloc(old, n * elem_size);
    if (!p)
        return AR_ENOMEM;
    memcpy(array, &p, sizeof(p));
    *cap = n;
    return 0;
}
