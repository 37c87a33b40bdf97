/*
 * agentrun: the logger callback. Library code prints nothing; it reports
 * through this (dav1d's Dav1dLogger). A NULL fn disables logging.
 */
#ifndef AGENTRUN_LOG_H
#define AGENTRUN_LOG_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ar_log_level {
    AR_LOG_ERROR = 0,
    AR_LOG_WARN = 1,
    AR_LOG_INFO = 2,
    AR_LOG_DEBUG = 3,
};

/*
 * One log record.
 *   event:  a structured event name (DESIGN §8: "run_started", "repair_attempt", …)
 *           or NULL for a plain diagnostic line;
 *   fields: a compact JSON object text with the event's fields ("provider",
 *           "job", "duration_ms", …), or NULL;
 *   msg:    a human-readable line without a trailing newline.
 * Every pointer is borrowed for the duration of the call.
 */
typedef void ar_log_fn(void *arg, enum ar_log_level level, const char *event, const char *fields,
                       const char *msg);

struct ar_logger {
    ar_log_fn *fn;
    void *arg;
    enum ar_log_level level; /* records above this level are not produced */
};

#define AR_LOGGER_INIT          \
    {                           \
        NULL, NULL, AR_LOG_WARN \
    }

#ifdef __cplusplus
}
#endif

#endif
