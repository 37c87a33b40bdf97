/*
 * A NULL-terminated vector of owned strings: argv and environment builder
 * (git's strvec).
 */
#ifndef AR_UTIL_STRV_H
#define AR_UTIL_STRV_H

#include <stddef.h>

#include "agentrun/common.h"

/* struct ar_strv is public (agentrun/common.h): the doctor report holds some. */

#define AR_STRV_INIT \
    {                \
        NULL, 0, 0   \
    }

void ar_strv_init(struct ar_strv *sv);

/* Frees every string and the vector; afterwards ar_strv_init() works again. */
void ar_strv_finish(struct ar_strv *sv);

/* Appends a copy of s. Returns 0 or AR_ENOMEM. */
int ar_strv_push(struct ar_strv *sv, const char *s);

/* Appends s and takes ownership of it (freed even on failure). Returns 0 or AR_ENOMEM. */
int ar_strv_push_take(struct ar_strv *sv, char *s);

/* Appends a formatted string. Returns 0 or AR_ENOMEM. */
int ar_strv_pushf(struct ar_strv *sv, const char *fmt, ...) AR_PRINTF(2, 3);

/* Appends every string of a NULL-terminated array. Returns 0 or AR_ENOMEM. */
int ar_strv_pushv(struct ar_strv *sv, const char *const *v);

/* The vector, borrowed; a static empty vector when nothing was pushed. */
const char *const *ar_strv_get(const struct ar_strv *sv);

#endif
