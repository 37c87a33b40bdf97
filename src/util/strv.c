/* A NULL-terminated vector of owned strings. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/error.h"
#include "util/strv.h"

void ar_strv_init(struct ar_strv *sv)
{
    sv->v = NULL;
    sv->n = 0;
    sv->cap = 0;
}

void ar_strv_finish(struct ar_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    ar_strv_init(sv);
}

int ar_strv_push_take(struct ar_strv *sv, char *s)
{
    if (!s)
        return AR_ENOMEM;
    if (sv->n + 2 > sv->cap) {
        size_t cap = sv->cap ? sv->cap * 2 : 8;
        char **v = realloc(sv->v, cap * sizeof(*v));
        if (!v) {
            free(s);
            return AR_ENOMEM;
        }
        sv->v = v;
        sv->cap = cap;
    }
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
    return 0;
}

int ar_strv_push(struct ar_strv *sv, const char *s)
{
    return ar_strv_push_take(sv, strdup(s));
}

int ar_strv_pushf(struct ar_strv *sv, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return AR_ENOMEM;
    return ar_strv_push_take(sv, s);
}

int ar_strv_pushv(struct ar_strv *sv, const char *const *v)
{
    for (; v && *v; v++) {
        int rc = ar_strv_push(sv, *v);
        if (rc)
            return rc;
    }
    return 0;
}

const char *const *ar_strv_get(const struct ar_strv *sv)
{
    static const char *const empty[] = {NULL};
    return sv->v ? (const char *const *)sv->v : empty;
}
