/* Internal logging helpers over the public logger callback. */
#ifndef AR_UTIL_LOG_H
#define AR_UTIL_LOG_H

#include <jansson.h>

#include "agentrun/log.h"

/* A plain diagnostic line; debug lines get a "[file:line] " prefix. lg may be NULL. */
void ar_log_at(const struct ar_logger *lg, enum ar_log_level level, const char *file, int line,
               const char *fmt, ...) AR_PRINTF(5, 6);

#define ar_log(lg, level, ...) ar_log_at((lg), (level), __FILE__, __LINE__, __VA_ARGS__)
#define ar_warn(lg, ...) ar_log_at((lg), AR_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define ar_debug(lg, ...) ar_log_at((lg), AR_LOG_DEBUG, __FILE__, __LINE__, __VA_ARGS__)

/*
 * A structured event. `fields` is a JSON object and is stolen (decref'd here,
 * may be NULL). The message is formatted from fmt.
 */
void ar_log_event(const struct ar_logger *lg, enum ar_log_level level, const char *event,
                  json_t *fields, const char *fmt, ...) AR_PRINTF(5, 6);

/* Non-zero when a record at `level` would be delivered. */
int ar_log_enabled(const struct ar_logger *lg, enum ar_log_level level);

#endif
