/* Small macros shared by every module. */
#ifndef AR_UTIL_MACROS_H
#define AR_UTIL_MACROS_H

#include <stddef.h>

#define AR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ar_container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#define AR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define AR_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
