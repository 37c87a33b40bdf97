/* The error table: codes, result names, exit statuses and messages from one X-macro. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agentrun/error.h"

struct entry {
    int code;
    const char *name;
    int exit_status;
    const char *msg;
};

static const struct entry table[] = {
#define AR_X_(n, c, e, m) {AR_E##n, c, e, m},
    AR_ERRNO_MAP(AR_X_)
#undef AR_X_
};

static const struct entry *lookup(int code)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (table[i].code == code)
            return &table[i];
    return NULL;
}

const char *ar_strerror_name(int code)
{
    const struct entry *e = lookup(code);
    return e ? e->name : "unknown";
}

const char *ar_strerror(int code)
{
    const struct entry *e = lookup(code);
    if (code == 0)
        return "success";
    return e ? e->msg : "unknown error";
}

int ar_error_exit_status(int code)
{
    const struct entry *e = lookup(code);
    if (code == 0)
        return 0;
    return e ? e->exit_status : 4;
}

int ar_error_from_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].code;
    return 0;
}

static int vset(struct ar_error *err, int code, int sys, const char *where, const char *fmt,
                va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->sys = sys;
    snprintf(err->where, sizeof(err->where), "%s", where ? where : "");
    if (fmt)
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    else
        snprintf(err->msg, sizeof(err->msg), "%s", ar_strerror(code));
    return code;
}

int ar_error_set(struct ar_error *err, int code, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, 0, where, fmt, ap);
    va_end(ap);
    return code;
}

int ar_error_set_sys(struct ar_error *err, int code, int sys, const char *where, const char *fmt,
                     ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, sys, where, fmt, ap);
    va_end(ap);
    return code;
}

void ar_error_clear(struct ar_error *err)
{
    if (err)
        *err = (struct ar_error)AR_ERROR_INIT;
}
