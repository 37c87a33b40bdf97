/* Growing arrays: the one copy of the doubling realloc every module needs. */
#ifndef AR_UTIL_ARRAY_H
#define AR_UTIL_ARRAY_H

#include <stddef.h>
#include <stdlib.h>

/*
 * Makes room for at least `need` elements of elem_size bytes in the array
 * whose pointer is at `array` (a T **, passed as void *) and whose capacity
 * is *cap, doubling from `first`. Returns 0, or AR_ENOMEM with the array and
 * *cap unchanged.
 *
 *     if (ar_array_reserve(&set->v, &set->cap, set->n + 1, sizeof(*set->v), 16) < 0)
 *         return AR_ENOMEM;
 */
int ar_array_reserve(void *array, size_t *cap, size_t need, size_t elem_size, size_t first);

/*
 * qsort() of n elements, where an empty array may be NULL: qsort(NULL, 0, …) is
 * undefined (glibc declares the array non-null, and UBSan says so), and an array
 * nothing was added to is NULL. Every sort goes through here.
 */
static inline void ar_sort(void *base, size_t n, size_t elem_size,
                           int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, elem_size, cmp);
}

#endif
