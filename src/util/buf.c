/* A growable byte buffer with a hard limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/error.h"
#include "util/buf.h"

void ar_buf_init(struct ar_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void ar_buf_finish(struct ar_buf *b)
{
    free(b->data);
    ar_buf_init(b, b->max);
}

void ar_buf_reset(struct ar_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

int ar_buf_reserve(struct ar_buf *b, size_t n)
{
    if (n > b->max || b->len > b->max - n)
        return AR_ETOOBIG;
    size_t need = b->len + n + 1; /* + NUL */
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return AR_ENOMEM;
    b->data = p;
    b->cap = cap;
    /* Keep the buffer a C string even when nothing is written after the
     * reserve (a read of an empty pipe): ar_buf_cstr() must not hand out
     * uninitialised bytes. */
    b->data[b->len] = '\0';
    return 0;
}

int ar_buf_append(struct ar_buf *b, const void *p, size_t n)
{
    int rc = ar_buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int ar_buf_puts(struct ar_buf *b, const char *s)
{
    return ar_buf_append(b, s, strlen(s));
}

int ar_buf_putc(struct ar_buf *b, char c)
{
    return ar_buf_append(b, &c, 1);
}

int ar_buf_vprintf(struct ar_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return AR_EIO;
    int rc = ar_buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int ar_buf_printf(struct ar_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ar_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void ar_buf_consume(struct ar_buf *b, size_t n)
{
    if (n >= b->len) {
        ar_buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

const char *ar_buf_cstr(const struct ar_buf *b)
{
    return b->data ? b->data : "";
}

char *ar_buf_detach(struct ar_buf *b, size_t *len_out)
{
    char *p = b->data;
    size_t len = b->len;
    if (!p) {
        p = calloc(1, 1);
        len = 0;
    }
    if (len_out)
        *len_out = len;
    ar_buf_init(b, b->max);
    return p;
}
