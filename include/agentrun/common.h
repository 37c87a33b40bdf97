/* agentrun: shared macros of the public API. */
#ifndef AGENTRUN_COMMON_H
#define AGENTRUN_COMMON_H

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

#endif
