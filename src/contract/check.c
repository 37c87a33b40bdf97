/* Checking a value against a compiled contract: every violation, with its JSON Pointer. */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/internal.h"
#include "util/array.h"
#include "util/json_dump.h"
#include "util/macros.h"

/* -------------------------------------------------------------- checking */

struct checker {
    struct ar_violations *out; /* NULL: stop at the first violation (ar_contract_accepts) */
    struct ar_buf path;
    int found;
    int rc;
    const struct ar_json_doc *doc; /* the value's spelling of numbers, or NULL */
};

static void report(struct checker *ck, json_t *value, const char *fmt, ...) AR_PRINTF(3, 4);

static void report(struct checker *ck, json_t *value, const char *fmt, ...)
{
    ck->found++;
    if (!ck->out || ck->rc)
        return;
    va_list ap;
    va_start(ap, fmt);
    ck->rc = ar_violations_addv(ck->out, ar_buf_cstr(&ck->path), value, fmt, ap);
    va_end(ap);
}

static int stop(const struct checker *ck)
{
    return !ck->out && ck->found;
}

static size_t path_push(struct checker *ck, const char *seg, size_t len)
{
    size_t saved = ck->path.len;
    if (ck->out && ck->rc == 0)
        ck->rc = ar_json_pointer_append(&ck->path, seg, len);
    return saved;
}

static size_t path_push_index(struct checker *ck, size_t i)
{
    char idx[24];
    int n = snprintf(idx, sizeof(idx), "%zu", i);
    return path_push(ck, idx, (size_t)n);
}

static void path_pop(struct checker *ck, size_t saved)
{
    if (ck->path.data && saved <= ck->path.len) {
        ck->path.len = saved;
        ck->path.data[saved] = '\0';
    }
}

/* 1 when the number v has no fractional part, by its spelling when known. */
static int is_integral(const struct checker *ck, json_t *v)
{
    size_t n;
    const char *lex = ar_json_doc_lexeme(ck->doc, v, &n);
    return lex ? ar_json_number_is_integral(lex, n) : ar_contract_is_integral(v);
}

/* v as a message quotes it: a number as written when its spelling is known. */
static void preview(const struct checker *ck, char *dst, size_t dstlen, json_t *v)
{
    size_t n;
    const char *lex = ar_json_doc_lexeme(ck->doc, v, &n);
    if (lex)
        snprintf(dst, dstlen, "%.*s%s",
                 n > AR_CONTRACT_PREVIEW_BYTES ? AR_CONTRACT_PREVIEW_BYTES : (int)n, lex,
                 n > AR_CONTRACT_PREVIEW_BYTES ? "\u2026" : "");
    else
        ar_contract_preview(dst, dstlen, v, AR_CONTRACT_PREVIEW_BYTES);
}

static int type_matches(const struct checker *ck, unsigned types, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return types & T_OBJECT;
    case JSON_ARRAY:
        return types & T_ARRAY;
    case JSON_STRING:
        return types & T_STRING;
    case JSON_INTEGER:
        return types & (T_INTEGER | T_NUMBER);
    case JSON_REAL:
        return (types & T_NUMBER) || ((types & T_INTEGER) && is_integral(ck, v));
    case JSON_TRUE:
    case JSON_FALSE:
        return types & T_BOOLEAN;
    case JSON_NULL:
        return types & T_NULL;
    }
    return 0;
}

/* JSON Schema equality: 1 and 1.0 are equal, objects ignore key order. */
static int values_equal(json_t *a, json_t *b, int depth)
{
    if (depth > AR_CONTRACT_MAX_DEPTH)
        return 0;
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!values_equal(json_array_get(a, i), json_array_get(b, i), depth + 1))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        const char *key;
        json_t *va;
        if (json_object_size(a) != json_object_size(b))
            return 0;
        json_object_foreach(a, key, va)
        {
            json_t *vb = json_object_get(b, key);
            if (!vb || !values_equal(va, vb, depth + 1))
                return 0;
        }
        return 1;
    }
    return json_equal(a, b);
}

static size_t utf8_length(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static void types_text(char *dst, size_t n, json_t *type_json)
{
    if (json_is_string(type_json)) {
        snprintf(dst, n, "%s", json_string_value(type_json));
        return;
    }
    size_t count = json_array_size(type_json), used = 0;
    dst[0] = '\0';
    for (size_t i = 0; i < count && used < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
        int w = snprintf(dst + used, n - used, "%s%s", sep,
                         json_string_value(json_array_get(type_json, i)));
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static void check_node(struct checker *ck, const struct node *n, json_t *v);

static void check_object(struct checker *ck, const struct node *n, json_t *v)
{
    size_t i;
    json_t *name;
    json_array_foreach(n->required, i, name)
    {
        if (stop(ck))
            return;
        const char *key = json_string_value(name);
        if (!json_object_get(v, key)) {
            size_t saved = path_push(ck, key, json_string_length(name));
            report(ck, NULL, "required property missing");
            path_pop(ck, saved);
        }
    }
    for (size_t p = 0; p < n->nprops && !stop(ck); p++) {
        json_t *val = json_object_get(v, n->props[p].name);
        if (!val)
            continue;
        size_t saved = path_push(ck, n->props[p].name, strlen(n->props[p].name));
        check_node(ck, n->props[p].schema, val);
        path_pop(ck, saved);
    }
    if (n->addl == ADDL_ANY)
        return;
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val)
    {
        if (stop(ck))
            return;
        int known = 0;
        for (size_t p = 0; p < n->nprops && !known; p++)
            known = strcmp(n->props[p].name, key) == 0;
        if (known)
            continue;
        size_t saved = path_push(ck, key, strlen(key));
        if (n->addl == ADDL_SCHEMA) {
            check_node(ck, n->addl_schema, val);
        } else if (ck->out) {
            char allowed[160] = "";
            size_t used = 0;
            for (size_t p = 0; p < n->nprops && used < sizeof(allowed); p++) {
                int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%s", p ? ", " : "",
                                 n->props[p].name);
                used += w > 0 ? (size_t)w : 0;
            }
            if (n->nprops)
                report(ck, val, "property not allowed (allowed: %s)", allowed);
            else
                report(ck, val, "property not allowed (no properties are allowed here)");
        } else {
            report(ck, val, "property not allowed");
        }
        path_pop(ck, saved);
    }
}

static void check_array(struct checker *ck, const struct node *n, json_t *v)
{
    size_t count = json_array_size(v);
    if ((n->has & HAS_MINITEMS) && count < n->min_items)
        report(ck, v, "expected at least %zu item%s, got %zu", n->min_items,
               n->min_items == 1 ? "" : "s", count);
    if ((n->has & HAS_MAXITEMS) && count > n->max_items)
        report(ck, v, "expected at most %zu item%s, got %zu", n->max_items,
               n->max_items == 1 ? "" : "s", count);
    if (!n->items)
        return;
    for (size_t i = 0; i < count && !stop(ck); i++) {
        size_t saved = path_push_index(ck, i);
        check_node(ck, n->items, json_array_get(v, i));
        path_pop(ck, saved);
    }
}

/*
 * A JSON string may hold NUL bytes (extraction allows them), and what follows
 * one must not escape the pattern: "abc\u0000; rm -rf /" is not ^[a-z]+$.
 * REG_STARTEND gives regexec the whole length; without it, such a string
 * matches no pattern.
 */
static int pattern_matches(const regex_t *re, json_t *v)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
#ifdef REG_STARTEND
    regmatch_t m[1] = { { 0, (regoff_t)len } };
    return regexec(re, s, 0, m, REG_STARTEND) == 0;
#else
    return memchr(s, '\0', len) == NULL && regexec(re, s, 0, NULL, 0) == 0;
#endif
}

static void check_string(struct checker *ck, const struct node *n, json_t *v)
{
    char pv[PREVIEW_MAX];
    if (n->has & (HAS_MINLEN | HAS_MAXLEN)) {
        size_t len = utf8_length(json_string_value(v), json_string_length(v));
        if ((n->has & HAS_MINLEN) && len < n->min_len) {
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected at least %zu character%s, got %zu: %s", n->min_len,
                   n->min_len == 1 ? "" : "s", len, pv);
        }
        if ((n->has & HAS_MAXLEN) && len > n->max_len) {
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected at most %zu character%s, got %zu: %s", n->max_len,
                   n->max_len == 1 ? "" : "s", len, pv);
        }
    }
    if ((n->has & HAS_PATTERN) && !pattern_matches(&n->re, v)) {
        preview(ck, pv, sizeof(pv), v);
        report(ck, v, "expected a match for pattern \"%s\", got %s", n->pattern, pv);
    }
}

/* v compared with a bound: -1, 0 or 1. Exact when v's spelling is known or
 * either side is an integer doubles cannot hold. */
static int compare_bound(const struct checker *ck, json_t *v, json_t *bound)
{
    const double two53 = 9007199254740992.0;
    size_t vn;
    const char *lex = ar_json_doc_lexeme(ck->doc, v, &vn);
    int exact = lex || (json_is_integer(v) && fabs((double)json_integer_value(v)) >= two53) ||
                (json_is_integer(bound) && fabs((double)json_integer_value(bound)) >= two53);
    if (!exact) {
        double d = json_number_value(v), b = json_number_value(bound);
        return d < b ? -1 : d > b;
    }
    char vbuf[AR_JSON_NUMBER_EXACT], bbuf[AR_JSON_NUMBER_EXACT];
    if (!lex) {
        vn = ar_json_number_exact(v, vbuf);
        lex = vbuf;
    }
    size_t bn = ar_json_number_exact(bound, bbuf);
    return ar_json_number_cmp(lex, vn, bbuf, bn);
}

static void check_number(struct checker *ck, const struct node *n, json_t *v)
{
    static const struct {
        unsigned flag;
        const char *op;
        int lo, hi; /* the comparison results that pass */
    } bounds[] = { { HAS_MIN, ">=", 0, 1 },
                   { HAS_MAX, "<=", -1, 0 },
                   { HAS_XMIN, ">", 1, 1 },
                   { HAS_XMAX, "<", -1, -1 } };
    const double limit[] = { n->min, n->max, n->xmin, n->xmax };
    for (size_t i = 0; i < AR_ARRAY_SIZE(bounds); i++) {
        if (!(n->has & bounds[i].flag))
            continue;
        int cmp = compare_bound(ck, v, n->bound_json[i]);
        if (cmp >= bounds[i].lo && cmp <= bounds[i].hi)
            continue;
        char lim[40], pv[PREVIEW_MAX];
        if (json_is_integer(n->bound_json[i]))
            snprintf(lim, sizeof(lim), "%" JSON_INTEGER_FORMAT,
                     json_integer_value(n->bound_json[i]));
        else
            ar_contract_format_number(lim, sizeof(lim), limit[i]);
        preview(ck, pv, sizeof(pv), v);
        report(ck, v, "expected a number %s %s, got %s", bounds[i].op, lim, pv);
    }
}

static void check_node(struct checker *ck, const struct node *n, json_t *v)
{
    char pv[PREVIEW_MAX];
    if (n->boolean == 1)
        return;
    if (n->boolean == 0) {
        report(ck, v, "no value is allowed here");
        return;
    }
    if (n->types && !type_matches(ck, n->types, v)) {
        if (ck->out) {
            char want[128];
            types_text(want, sizeof(want), n->type_json);
            if (json_is_null(v)) {
                report(ck, v, "expected %s, got null", want);
            } else {
                preview(ck, pv, sizeof(pv), v);
                report(ck, v, "expected %s, got %s %s", want, ar_json_type_name(v), pv);
            }
        } else {
            report(ck, v, "type");
        }
        return;
    }
    if (n->enum_values) {
        int hit = 0;
        for (size_t i = 0; i < json_array_size(n->enum_values) && !hit; i++)
            hit = values_equal(json_array_get(n->enum_values, i), v, 0);
        if (!hit) {
            char want[2 * PREVIEW_MAX];
            ar_contract_preview(want, sizeof(want), n->enum_values, 2 * AR_CONTRACT_PREVIEW_BYTES);
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected one of %s, got %s", want, pv);
        }
    }
    if ((n->has & HAS_CONST) && !values_equal(n->const_value, v, 0)) {
        char want[PREVIEW_MAX];
        ar_contract_preview(want, sizeof(want), n->const_value, AR_CONTRACT_PREVIEW_BYTES);
        preview(ck, pv, sizeof(pv), v);
        report(ck, v, "expected %s, got %s", want, pv);
    }
    if (stop(ck))
        return;
    if (json_is_object(v))
        check_object(ck, n, v);
    else if (json_is_array(v))
        check_array(ck, n, v);
    else if (json_is_string(v))
        check_string(ck, n, v);
    else if (json_is_number(v))
        check_number(ck, n, v);
}

int ar_contract_check(const struct ar_contract *c, json_t *value, struct ar_violations *out)
{
    struct checker ck = { out, { NULL, 0, 0, AR_BUF_UNLIMITED }, 0, 0, NULL };
    check_node(&ck, c->root, value);
    ar_buf_finish(&ck.path);
    return ck.rc ? ck.rc : ck.found;
}

int ar_contract_accepts(const struct ar_contract *c, json_t *value)
{
    struct checker ck = { NULL, { NULL, 0, 0, AR_BUF_UNLIMITED }, 0, 0, NULL };
    check_node(&ck, c->root, value);
    return ck.found == 0;
}

int ar_contract_check_doc(const struct ar_contract *c, const struct ar_json_doc *doc,
                          struct ar_violations *out)
{
    struct checker ck = { out, { NULL, 0, 0, AR_BUF_UNLIMITED }, 0, 0, doc };
    check_node(&ck, c->root, doc->value);
    ar_buf_finish(&ck.path);
    return ck.rc ? ck.rc : ck.found;
}

int ar_contract_accepts_doc(const struct ar_contract *c, const struct ar_json_doc *doc)
{
    struct checker ck = { NULL, { NULL, 0, 0, AR_BUF_UNLIMITED }, 0, 0, doc };
    check_node(&ck, c->root, doc->value);
    return ck.found == 0;
}

int ar_contract_accept_fn(const struct ar_json_doc *doc, void *arg)
{
    return ar_contract_accepts_doc(arg, doc);
}
