/* agentrun: shared macros of the public API. */
#ifndef AGENTRUN_COMMON_H
#define AGENTRUN_COMMON_H

#include <stddef.h>

#if defined(_WIN32)
#define AR_API __declspec(dllexport)
#elif defined(__GNUC__)
#define AR_API __attribute__((visibility("default")))
#else
#define AR_API
#endif

#if defined(__GNUC__)
#define AR_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define AR_PRINTF(fmt, args)
#endif

/*
 * A list of strings the library owns (in a doctor report): read v[0..n).
 * v is NULL-terminated once it holds anything, NULL while n is 0; cap is the
 * library's. Freed with the struct that holds it.
 */
struct ar_strv {
    char **v;
    size_t n;
    size_t cap;
};

#endif
