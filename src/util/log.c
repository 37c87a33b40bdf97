/* Internal logging helpers over the public logger callback. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

int ar_log_enabled(const struct ar_logger *lg, enum ar_log_level level)
{
    return lg && lg->fn && level <= lg->level;
}

void ar_log_at(const struct ar_logger *lg, enum ar_log_level level, const char *file, int line,
               const char *fmt, ...)
{
    if (!ar_log_enabled(lg, level))
        return;
    char msg[1024];
    int off = 0;
    if (level == AR_LOG_DEBUG) {
        const char *base = strrchr(file, '/');
        off = snprintf(msg, sizeof(msg), "[%s:%d] ", base ? base + 1 : file, line);
        if (off < 0 || (size_t)off >= sizeof(msg))
            off = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + off, sizeof(msg) - (size_t)off, fmt, ap);
    va_end(ap);
    lg->fn(lg->arg, level, NULL, NULL, msg);
}

void ar_log_event(const struct ar_logger *lg, enum ar_log_level level, const char *event,
                  json_t *fields, const char *fmt, ...)
{
    if (!ar_log_enabled(lg, level)) {
        json_decref(fields);
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char *text = fields ? json_dumps(fields, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    lg->fn(lg->arg, level, event, text, msg);
    free(text);
    json_decref(fields);
}
