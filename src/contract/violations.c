/* Violations: the list a check fills, its text forms, and the value previews in messages. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/internal.h"
#include "util/array.h"
#include "util/macros.h"

/* ---------------------------------------------------------------- violations */

void ar_violations_init(struct ar_violations *vs)
{
    *vs = (struct ar_violations)AR_VIOLATIONS_INIT;
}

void ar_violations_finish(struct ar_violations *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        free(vs->v[i].path);
        free(vs->v[i].message);
        json_decref(vs->v[i].value);
    }
    free(vs->v);
    ar_violations_init(vs);
}

int ar_violations_addv(struct ar_violations *vs, const char *path, json_t *value, const char *fmt,
                       va_list ap)
{
    if (vs->n >= AR_CONTRACT_MAX_VIOLATIONS) {
        vs->omitted++;
        return 0;
    }
    if (ar_array_reserve(&vs->v, &vs->cap, vs->n + 1, sizeof(*vs->v), 8) < 0)
        return AR_ENOMEM;
    struct ar_buf msg;
    ar_buf_init(&msg, AR_BUF_UNLIMITED);
    if (ar_buf_vprintf(&msg, fmt, ap) < 0) {
        ar_buf_finish(&msg);
        return AR_ENOMEM;
    }
    char *m = ar_buf_detach(&msg, NULL);
    char *p = strdup(path);
    if (!m || !p) {
        free(m);
        free(p);
        return AR_ENOMEM;
    }
    vs->v[vs->n].path = p;
    vs->v[vs->n].message = m;
    vs->v[vs->n].value = json_incref(value);
    vs->n++;
    return 0;
}

int ar_violations_add(struct ar_violations *vs, const char *path, json_t *value, const char *fmt,
                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = ar_violations_addv(vs, path, value, fmt, ap);
    va_end(ap);
    return rc;
}

int ar_violation_format(const struct ar_violation *v, struct ar_buf *out)
{
    return ar_buf_printf(out, "%s: %s", v->path[0] ? v->path : "(root)", v->message);
}

int ar_violations_format(const struct ar_violations *vs, struct ar_buf *out)
{
    for (size_t i = 0; i < vs->n; i++) {
        int rc = ar_violation_format(&vs->v[i], out);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
        if (rc)
            return rc;
    }
    if (vs->omitted)
        return ar_buf_printf(out, "(%zu more violation%s not shown)\n", vs->omitted,
                             vs->omitted == 1 ? "" : "s");
    return 0;
}

json_t *ar_violations_to_json(const struct ar_violations *vs)
{
    json_t *arr = json_array();
    struct ar_buf line;
    ar_buf_init(&line, AR_BUF_UNLIMITED);
    for (size_t i = 0; arr && i < vs->n; i++) {
        ar_buf_reset(&line);
        if (ar_violation_format(&vs->v[i], &line) ||
            json_array_append_new(arr, json_stringn(line.data, line.len)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    if (arr && vs->omitted) {
        ar_buf_reset(&line);
        if (ar_buf_printf(&line, "(%zu more violation%s not shown)", vs->omitted,
                          vs->omitted == 1 ? "" : "s") ||
            json_array_append_new(arr, json_stringn(line.data, line.len)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    ar_buf_finish(&line);
    return arr;
}

int ar_json_pointer_append(struct ar_buf *out, const char *seg, size_t len)
{
    int rc = ar_buf_putc(out, '/');
    for (size_t i = 0; rc == 0 && i < len; i++) {
        if (seg[i] == '~')
            rc = ar_buf_puts(out, "~0");
        else if (seg[i] == '/')
            rc = ar_buf_puts(out, "~1");
        else
            rc = ar_buf_putc(out, seg[i]);
    }
    return rc;
}

/* ------------------------------------------------------------------ previews */

void ar_contract_format_number(char *dst, size_t n, double d)
{
    if (!isfinite(d)) {
        snprintf(dst, n, "%s", isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    /* The shortest of %.15g and %.17g that reads back exactly: 0.1, not 0.10000000000000001. */
    snprintf(dst, n, "%.15g", d);
    if (strtod(dst, NULL) != d)
        snprintf(dst, n, "%.17g", d);
}

static void preview_string(struct ar_buf *b, const char *s, size_t len, size_t limit)
{
    ar_buf_putc(b, '"');
    for (size_t i = 0; i < len && b->len < limit; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            ar_buf_puts(b, "\\\"");
            break;
        case '\\':
            ar_buf_puts(b, "\\\\");
            break;
        case '\n':
            ar_buf_puts(b, "\\n");
            break;
        case '\r':
            ar_buf_puts(b, "\\r");
            break;
        case '\t':
            ar_buf_puts(b, "\\t");
            break;
        default:
            if (c < 0x20)
                ar_buf_printf(b, "\\u%04x", c);
            else
                ar_buf_putc(b, (char)c);
        }
    }
    ar_buf_putc(b, '"');
}

/*
 * Writes compact JSON until about `limit` bytes. Every container writes a
 * byte before descending, so the recursion depth is bounded by the limit
 * even on a value nested a million levels deep.
 */
static void preview_value(struct ar_buf *b, json_t *v, size_t limit)
{
    char num[40];
    if (b->len >= limit)
        return;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        int first = 1;
        ar_buf_putc(b, '{');
        json_object_foreach(v, key, val)
        {
            if (b->len >= limit)
                return;
            if (!first)
                ar_buf_putc(b, ',');
            first = 0;
            preview_string(b, key, strlen(key), limit);
            ar_buf_putc(b, ':');
            preview_value(b, val, limit);
        }
        ar_buf_putc(b, '}');
        break;
    }
    case JSON_ARRAY:
        ar_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (b->len >= limit)
                return;
            if (i)
                ar_buf_putc(b, ',');
            preview_value(b, json_array_get(v, i), limit);
        }
        ar_buf_putc(b, ']');
        break;
    case JSON_STRING:
        preview_string(b, json_string_value(v), json_string_length(v), limit);
        break;
    case JSON_INTEGER:
        ar_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        ar_contract_format_number(num, sizeof(num), json_real_value(v));
        ar_buf_puts(b, num);
        if (!strpbrk(num, ".eEIN"))
            ar_buf_puts(b, ".0");
        break;
    case JSON_TRUE:
        ar_buf_puts(b, "true");
        break;
    case JSON_FALSE:
        ar_buf_puts(b, "false");
        break;
    case JSON_NULL:
        ar_buf_puts(b, "null");
        break;
    }
}

/* A value as compact JSON cut to `limit` bytes on a UTF-8 boundary, "…" marking the cut. */
void ar_contract_preview(char *dst, size_t dstlen, json_t *v, size_t limit)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    preview_value(&b, v, limit + 1);
    const char *s = ar_buf_cstr(&b);
    size_t n = b.len;
    int cut = 0;
    if (n > limit) {
        n = limit;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        cut = 1;
    }
    snprintf(dst, dstlen, "%.*s%s", (int)n, s, cut ? "\u2026" : "");
    ar_buf_finish(&b);
}
