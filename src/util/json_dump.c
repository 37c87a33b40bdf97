/* Compact JSON output faithful to the model's text (see dump.h). */
#include "util/json_dump.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

int ar_json_dump_string(const char *s, size_t n, struct ar_buf *out)
{
    int rc = ar_buf_putc(out, '"');
    size_t run = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        rc = ar_buf_append(out, s + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"':
            memcpy(esc, "\\\"", 3);
            break;
        case '\\':
            memcpy(esc, "\\\\", 3);
            break;
        case '\n':
            memcpy(esc, "\\n", 3);
            break;
        case '\r':
            memcpy(esc, "\\r", 3);
            break;
        case '\t':
            memcpy(esc, "\\t", 3);
            break;
        case '\b':
            memcpy(esc, "\\b", 3);
            break;
        case '\f':
            memcpy(esc, "\\f", 3);
            break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04x", c);
        }
        if (rc == 0)
            rc = ar_buf_puts(out, esc);
    }
    if (rc == 0)
        rc = ar_buf_append(out, s + run, n - run);
    if (rc == 0)
        rc = ar_buf_putc(out, '"');
    return rc;
}

static int dump_real(double d, struct ar_buf *out)
{
    char tmp[40];
    if (!isfinite(d))
        return ar_buf_puts(out, "null");
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    /* Keep it a real on the way back in: "1" would read as an integer. */
    if (!strpbrk(tmp, ".eEn"))
        strcat(tmp, ".0");
    return ar_buf_puts(out, tmp);
}

static int dump(const json_t *v, const json_t *raw, const char *raw_text, struct ar_buf *out)
{
    int rc = 0;
    if (raw && v == raw)
        return ar_buf_puts(out, raw_text);
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        size_t key_len;
        json_t *member;
        int first = 1;
        rc = ar_buf_putc(out, '{');
        json_object_keylen_foreach((json_t *)v, key, key_len, member)
        {
            if (rc == 0 && !first)
                rc = ar_buf_putc(out, ',');
            if (rc == 0)
                rc = ar_json_dump_string(key, key_len, out);
            if (rc == 0)
                rc = ar_buf_putc(out, ':');
            if (rc == 0)
                rc = dump(member, raw, raw_text, out);
            first = 0;
        }
        return rc ? rc : ar_buf_putc(out, '}');
    }
    case JSON_ARRAY:
        rc = ar_buf_putc(out, '[');
        for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
            if (i)
                rc = ar_buf_putc(out, ',');
            if (rc == 0)
                rc = dump(json_array_get(v, i), raw, raw_text, out);
        }
        return rc ? rc : ar_buf_putc(out, ']');
    case JSON_STRING:
        return ar_json_dump_string(json_string_value(v), json_string_length(v), out);
    case JSON_INTEGER:
        return ar_buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        return dump_real(json_real_value(v), out);
    case JSON_TRUE:
        return ar_buf_puts(out, "true");
    case JSON_FALSE:
        return ar_buf_puts(out, "false");
    case JSON_NULL:
        return ar_buf_puts(out, "null");
    }
    return 0;
}

int ar_json_dump_compact(const json_t *v, struct ar_buf *out)
{
    return dump(v, NULL, NULL, out);
}

int ar_json_dump_compact_raw(const json_t *v, const json_t *raw, const char *raw_text,
                             struct ar_buf *out)
{
    return dump(v, raw_text ? raw : NULL, raw_text, out);
}

static int newline(struct ar_buf *out, size_t depth, int indent)
{
    int rc = ar_buf_putc(out, '\n');
    for (size_t k = 0; k < depth * (size_t)indent && rc == 0; k++)
        rc = ar_buf_putc(out, ' ');
    return rc;
}

int ar_json_text_indent(const char *s, size_t n, int indent, struct ar_buf *out)
{
    size_t depth = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != '"')
                j += s[j] == '\\' ? 2 : 1;
            if (j >= n)
                j = n - 1;
            rc = ar_buf_append(out, s + i, j + 1 - i);
            i = j;
        } else if (c == '{' || c == '[') {
            size_t j = i + 1;
            while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
                j++;
            rc = ar_buf_putc(out, c);
            if (j < n && (s[j] == '}' || s[j] == ']')) {
                if (rc == 0)
                    rc = ar_buf_putc(out, s[j]);
                i = j;
            } else if (rc == 0) {
                rc = newline(out, ++depth, indent);
            }
        } else if (c == '}' || c == ']') {
            rc = newline(out, depth ? --depth : 0, indent);
            if (rc == 0)
                rc = ar_buf_putc(out, c);
        } else if (c == ',') {
            rc = ar_buf_putc(out, ',');
            if (rc == 0)
                rc = newline(out, depth, indent);
        } else if (c == ':') {
            rc = ar_buf_puts(out, ": ");
        } else {
            rc = ar_buf_putc(out, c);
        }
    }
    return rc;
}

json_t *ar_json_text(const char *s, size_t n)
{
    if (!s)
        return json_null();
    json_t *v = json_stringn(s, n);
    if (v)
        return v;
    /* jansson refuses invalid UTF-8; model and CLI text can hold anything, so
     * the field keeps a lossy copy rather than disappearing. */
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    v = ar_utf8_append_lossy(&b, s, n, NULL) ? NULL : json_stringn(ar_buf_cstr(&b), b.len);
    ar_buf_finish(&b);
    return v ? v : json_null();
}

const char *ar_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        break;
    }
    return "null";
}
