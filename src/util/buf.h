/*
 * A growable byte buffer with a hard limit (curl's dynbuf). The data is always
 * NUL-terminated so it can be used as a C string when it holds text.
 *
 *     struct ar_buf b;
 *     ar_buf_init(&b, AR_MAX_STDOUT);
 *     if (ar_buf_append(&b, p, n) == AR_ETOOBIG) …
 *     ar_buf_finish(&b);
 */
#ifndef AR_UTIL_BUF_H
#define AR_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "agentrun/common.h"

struct ar_buf {
    char *data; /* NULL until the first append; ar_buf_cstr() never returns NULL */
    size_t len;
    size_t cap;
    size_t max; /* appends that would pass this many bytes fail with AR_ETOOBIG */
};

#define AR_BUF_UNLIMITED ((size_t)-1)

/* Starts an empty buffer that refuses to grow past `max` bytes. Allocates nothing. */
void ar_buf_init(struct ar_buf *b, size_t max);

/* Frees the memory; afterwards ar_buf_init() works again. */
void ar_buf_finish(struct ar_buf *b);

/* Empties the buffer and keeps its memory. */
void ar_buf_reset(struct ar_buf *b);

/* Appends n bytes. Returns 0, AR_ETOOBIG (nothing appended) or AR_ENOMEM. */
int ar_buf_append(struct ar_buf *b, const void *p, size_t n);
int ar_buf_puts(struct ar_buf *b, const char *s);
int ar_buf_putc(struct ar_buf *b, char c);
int ar_buf_printf(struct ar_buf *b, const char *fmt, ...) AR_PRINTF(2, 3);
int ar_buf_vprintf(struct ar_buf *b, const char *fmt, va_list ap);

/* Makes room for n more bytes without changing len. Returns 0, AR_ETOOBIG or AR_ENOMEM. */
int ar_buf_reserve(struct ar_buf *b, size_t n);

/* Drops the first n bytes (n <= len). */
void ar_buf_consume(struct ar_buf *b, size_t n);

/* The contents as a C string, borrowed until the next change; "" when empty. */
const char *ar_buf_cstr(const struct ar_buf *b);

/*
 * Hands out the contents (caller free()s; never NULL unless out of memory) and
 * leaves the buffer empty and initialized with the same max. *len_out may be NULL.
 */
char *ar_buf_detach(struct ar_buf *b, size_t *len_out);

#endif
