/*
 * The contract validator. A schema is compiled once into a tree of nodes
 * (types as a bit mask, patterns as regex_t) so that checking a value never
 * re-reads the schema's keywords and never fails on the schema itself.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "util/array.h"
#include "util/macros.h"

enum {
    T_NULL = 1 << 0,
    T_BOOLEAN = 1 << 1,
    T_OBJECT = 1 << 2,
    T_ARRAY = 1 << 3,
    T_NUMBER = 1 << 4,
    T_STRING = 1 << 5,
    T_INTEGER = 1 << 6,
};

static const struct {
    const char *name;
    unsigned bit;
} type_names[] = {
    { "array", T_ARRAY },   { "boolean", T_BOOLEAN }, { "integer", T_INTEGER }, { "null", T_NULL },
    { "number", T_NUMBER }, { "object", T_OBJECT },   { "string", T_STRING },
};

enum {
    HAS_MIN = 1 << 0,
    HAS_MAX = 1 << 1,
    HAS_XMIN = 1 << 2,
    HAS_XMAX = 1 << 3,
    HAS_MINLEN = 1 << 4,
    HAS_MAXLEN = 1 << 5,
    HAS_MINITEMS = 1 << 6,
    HAS_MAXITEMS = 1 << 7,
    HAS_CONST = 1 << 8,
    HAS_PATTERN = 1 << 9,
};

enum addl_mode { ADDL_ANY, ADDL_NONE, ADDL_SCHEMA };

struct node;

struct prop {
    const char *name; /* borrowed from the schema */
    struct node *schema;
};

struct node {
    int boolean; /* -1: an object schema; 0 / 1: the schema `false` / `true` */
    unsigned types;
    json_t *type_json; /* borrowed: the "type" value, for messages */
    struct prop *props;
    size_t nprops;
    json_t *required; /* borrowed array of strings, or NULL */
    enum addl_mode addl;
    struct node *addl_schema;
    struct node *items;
    json_t *enum_values; /* borrowed array, or NULL */
    json_t *const_value; /* borrowed */
    unsigned has;
    double min, max, xmin, xmax;
    size_t min_len, max_len, min_items, max_items;
    const char *pattern; /* borrowed */
    regex_t re;
    struct node *next_alloc; /* every node of a contract, for freeing */
};

struct ar_contract {
    json_t *schema;
    struct node *root;
    struct node *nodes;
};

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

static int violations_addv(struct ar_violations *vs, const char *path, json_t *value,
                           const char *fmt, va_list ap)
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
    int rc = violations_addv(vs, path, value, fmt, ap);
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

static void format_number(char *dst, size_t n, double d)
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
        format_number(num, sizeof(num), json_real_value(v));
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
static void preview(char *dst, size_t dstlen, json_t *v, size_t limit)
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

static const char *kind_of(json_t *v)
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
        return "null";
    }
    return "value";
}

/* --------------------------------------------------------------- loading */

#define PREVIEW_MAX (AR_CONTRACT_PREVIEW_BYTES + 8)

struct loader {
    struct ar_contract *c;
    struct ar_buf path; /* JSON Pointer of the schema being compiled */
    struct ar_error *err;
};

static const char *display_pointer(const char *p)
{
    return p[0] ? p : "(root)";
}

/* Sets err for keyword `kw` of the schema at the loader's current path. */
static int load_error(struct loader *ld, const char *kw, const char *fmt, ...) AR_PRINTF(3, 4);

static int load_error(struct loader *ld, const char *kw, const char *fmt, ...)
{
    struct ar_buf where;
    ar_buf_init(&where, AR_BUF_UNLIMITED);
    ar_buf_puts(&where, ar_buf_cstr(&ld->path));
    if (kw)
        ar_json_pointer_append(&where, kw, strlen(kw));
    char msg[sizeof(ld->err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ar_error_set(ld->err, AR_EUSAGE, ar_buf_cstr(&where), "%s", msg);
    ar_buf_finish(&where);
    return AR_EUSAGE;
}

static int is_integral(json_t *v)
{
    if (json_is_integer(v))
        return 1;
    if (!json_is_real(v))
        return 0;
    double d = json_real_value(v);
    return isfinite(d) && floor(d) == d;
}

static int get_count(struct loader *ld, const char *kw, json_t *v, size_t *out)
{
    if (!is_integral(v) || json_number_value(v) < 0)
        return load_error(ld, kw, "'%s' at %s must be a non-negative integer", kw,
                          display_pointer(ar_buf_cstr(&ld->path)));
    double d = json_number_value(v);
    *out = d >= (double)SIZE_MAX ? SIZE_MAX : (size_t)d;
    return 0;
}

static int get_bound(struct loader *ld, const char *kw, json_t *v, double *out)
{
    if (!json_is_number(v))
        return load_error(ld, kw, "'%s' at %s must be a number (draft 6+ style)", kw,
                          display_pointer(ar_buf_cstr(&ld->path)));
    *out = json_number_value(v);
    return 0;
}

static int compile(struct loader *ld, json_t *schema, int depth, struct node **out);

/* Compiles the subschema `sub` found at ld->path + "/seg" (+ "/seg2" when not NULL). */
static int compile_at(struct loader *ld, json_t *sub, const char *seg, const char *seg2, int depth,
                      struct node **out)
{
    size_t saved = ld->path.len;
    int rc = ar_json_pointer_append(&ld->path, seg, strlen(seg));
    if (rc == 0 && seg2)
        rc = ar_json_pointer_append(&ld->path, seg2, strlen(seg2));
    if (rc == 0)
        rc = compile(ld, sub, depth + 1, out);
    else
        rc = ar_error_set(ld->err, AR_ENOMEM, NULL, "out of memory");
    if (rc == 0) {
        ld->path.len = saved;
        ld->path.data[saved] = '\0';
    }
    return rc;
}

static int add_type(struct loader *ld, struct node *n, const char *kw, json_t *name)
{
    if (!json_is_string(name))
        return load_error(ld, kw, "'type' at %s must contain only type names",
                          display_pointer(ar_buf_cstr(&ld->path)));
    for (size_t t = 0; t < AR_ARRAY_SIZE(type_names); t++)
        if (strcmp(type_names[t].name, json_string_value(name)) == 0) {
            n->types |= type_names[t].bit;
            return 0;
        }
    return load_error(ld, kw, "'type' at %s names unknown type '%s'",
                      display_pointer(ar_buf_cstr(&ld->path)), json_string_value(name));
}

static int kw_type(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    n->type_json = v;
    if (json_is_string(v))
        return add_type(ld, n, kw, v);
    if (!json_is_array(v) || json_array_size(v) == 0)
        return load_error(ld, kw, "'type' at %s must be a type name or a non-empty array of them",
                          display_pointer(ar_buf_cstr(&ld->path)));
    for (size_t i = 0; i < json_array_size(v); i++) {
        int rc = add_type(ld, n, kw, json_array_get(v, i));
        if (rc)
            return rc;
    }
    return 0;
}

static int kw_properties(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    if (!json_is_object(v))
        return load_error(ld, kw, "'properties' at %s must be an object",
                          display_pointer(ar_buf_cstr(&ld->path)));
    n->props = calloc(json_object_size(v) + 1, sizeof(*n->props));
    if (!n->props)
        return ar_error_set(ld->err, AR_ENOMEM, NULL, "out of memory");
    const char *key;
    json_t *sub;
    json_object_foreach(v, key, sub)
    {
        struct prop *p = &n->props[n->nprops];
        p->name = key;
        int rc = compile_at(ld, sub, kw, key, depth, &p->schema);
        if (rc)
            return rc;
        n->nprops++;
    }
    return 0;
}

static int kw_required(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    size_t i;
    json_t *name;
    if (!json_is_array(v))
        return load_error(ld, kw, "'required' at %s must be an array of property names",
                          display_pointer(ar_buf_cstr(&ld->path)));
    json_array_foreach(v, i, name)
    {
        if (!json_is_string(name))
            return load_error(ld, kw, "'required' at %s must contain only strings",
                              display_pointer(ar_buf_cstr(&ld->path)));
    }
    n->required = v;
    return 0;
}

static int kw_additional(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    if (json_is_boolean(v)) {
        n->addl = json_is_true(v) ? ADDL_ANY : ADDL_NONE;
        return 0;
    }
    n->addl = ADDL_SCHEMA;
    return compile_at(ld, v, kw, NULL, depth, &n->addl_schema);
}

static int kw_items(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    if (json_is_array(v))
        return load_error(ld, kw,
                          "'items' at %s must be a single schema (tuple form is not supported)",
                          display_pointer(ar_buf_cstr(&ld->path)));
    return compile_at(ld, v, kw, NULL, depth, &n->items);
}

static int kw_enum(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return load_error(ld, kw, "'enum' at %s must be a non-empty array",
                          display_pointer(ar_buf_cstr(&ld->path)));
    n->enum_values = v;
    return 0;
}

static int kw_const(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    n->const_value = v;
    n->has |= HAS_CONST;
    return 0;
}

static int kw_number(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    static const struct {
        const char *kw;
        unsigned flag;
        size_t off;
    } map[] = {
        { "minimum", HAS_MIN, offsetof(struct node, min) },
        { "maximum", HAS_MAX, offsetof(struct node, max) },
        { "exclusiveMinimum", HAS_XMIN, offsetof(struct node, xmin) },
        { "exclusiveMaximum", HAS_XMAX, offsetof(struct node, xmax) },
    };
    for (size_t i = 0; i < AR_ARRAY_SIZE(map); i++)
        if (strcmp(map[i].kw, kw) == 0) {
            n->has |= map[i].flag;
            return get_bound(ld, kw, v, (double *)((char *)n + map[i].off));
        }
    return 0;
}

static int kw_count(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    static const struct {
        const char *kw;
        unsigned flag;
        size_t off;
    } map[] = {
        { "minLength", HAS_MINLEN, offsetof(struct node, min_len) },
        { "maxLength", HAS_MAXLEN, offsetof(struct node, max_len) },
        { "minItems", HAS_MINITEMS, offsetof(struct node, min_items) },
        { "maxItems", HAS_MAXITEMS, offsetof(struct node, max_items) },
    };
    for (size_t i = 0; i < AR_ARRAY_SIZE(map); i++)
        if (strcmp(map[i].kw, kw) == 0) {
            n->has |= map[i].flag;
            return get_count(ld, kw, v, (size_t *)((char *)n + map[i].off));
        }
    return 0;
}

static size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t mul_sat(size_t a, size_t b)
{
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

/*
 * About how many nodes regcomp() builds for an ERE: it copies the operand of
 * a bound {m,n} n times and that of '+' once, so nested bounds multiply. "((a{1,1000}){1,1000})"
 * is 25 bytes but a million nodes, gigabytes and half a minute of glibc's
 * regcomp(). Bracket expressions and escapes count as one atom; the estimate
 * only needs to be right about bounds. SIZE_MAX when groups nest deeper than
 * AR_CONTRACT_MAX_PATTERN_DEPTH.
 */
static size_t pattern_size(const char *p, int *plain_only)
{
    struct {
        size_t sum;  /* the size of the sequence so far */
        size_t last; /* the size of its last atom, which a bound repeats */
    } st[AR_CONTRACT_MAX_PATTERN_DEPTH + 1] = { { 0, 0 } };
    size_t depth = 0;
    while (*p) {
        size_t atom = 1;
        if (*p == '(') {
            /* glibc's regcomp() recurses per group: 100000 of them overflow the stack. */
            if (depth == AR_CONTRACT_MAX_PATTERN_DEPTH)
                return SIZE_MAX;
            st[++depth].sum = 0;
            st[depth].last = 0;
            p++;
            continue;
        }
        if (*p == ')' && depth > 0) {
            atom = st[depth--].sum;
            p++;
        } else if (*p == ')') {
            /* An unmatched ')' is a literal: wrapped in a group it would close it. */
            *plain_only = 1;
            p++;
        } else if (*p == '*' || *p == '?') {
            /* No copies; a bound that follows still repeats the last atom. */
            p++;
            continue;
        } else if (*p == '+') {
            /* x+ is built as x x*: one copy, so "a++++…" doubles each time. */
            st[depth].sum = add_sat(st[depth].sum, st[depth].last);
            st[depth].last = add_sat(st[depth].last, st[depth].last);
            p++;
            continue;
        } else if (*p == '{' && p[1] >= '0' && p[1] <= '9') {
            char *end;
            unsigned long m = strtoul(p + 1, &end, 10), n = m;
            if (end > p + 1 && *end == ',' && end[1] >= '0' && end[1] <= '9')
                n = strtoul(end + 1, &end, 10);
            else if (end > p + 1 && *end == ',')
                n = m + 1, end++;
            if (end > p + 1 && *end == '}') {
                size_t extra = mul_sat(st[depth].last, n > 0 ? n - 1 : 0);
                st[depth].sum = add_sat(st[depth].sum, extra);
                st[depth].last = add_sat(st[depth].last, extra);
                p = end + 1;
                continue;
            }
            p++;
        } else if (*p == '[') {
            /* "[]a]" and "[^]a]" hold a ']'; "[:alpha:]" and friends hold one too. */
            const char *q = p + 1;
            if (*q == '^')
                q++;
            if (*q == ']')
                q++;
            while (*q && *q != ']') {
                if (*q == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
                    const char *close = strchr(q + 2, q[1]);
                    q = close && close[1] == ']' ? close + 2 : q + 1;
                } else {
                    q++;
                }
            }
            p = *q ? q + 1 : q;
        } else if (*p == '\\' && p[1]) {
            /* A back-reference would need renumbering inside a wrapper. */
            if (p[1] >= '1' && p[1] <= '9')
                *plain_only = 1;
            p += 2;
        } else {
            atom = *p != '|';
            p++;
        }
        st[depth].sum = add_sat(st[depth].sum, atom);
        st[depth].last = atom;
    }
    size_t total = 0;
    for (size_t d = 0; d <= depth; d++)
        total = add_sat(total, st[d].sum);
    return total;
}

static int kw_pattern(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth)
{
    if (!json_is_string(v))
        return load_error(ld, kw, "'pattern' at %s must be a string",
                          display_pointer(ar_buf_cstr(&ld->path)));
    const char *pattern = json_string_value(v);
    int plain_only = 0;
    if (pattern_size(pattern, &plain_only) > AR_CONTRACT_MAX_PATTERN_SIZE)
        return load_error(ld, kw,
                          "'pattern' at %s is too complex to compile (groups nested deeper than "
                          "%d, or bounds like {1,1000} nested); use maxLength for lengths",
                          display_pointer(ar_buf_cstr(&ld->path)), AR_CONTRACT_MAX_PATTERN_DEPTH);
    int rc = regcomp(&n->re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char why[128];
        regerror(rc, &n->re, why, sizeof(why));
        return load_error(ld, kw,
                          "'pattern' at %s is not a valid POSIX extended regular expression: %s",
                          display_pointer(ar_buf_cstr(&ld->path)), why);
    }
    /*
     * regexec() tries an unanchored pattern at each start in turn, each try
     * running on to the end: "[a-z]+b" against 100 KB of "a" takes 15 s.
     * "^(.|[^.])*(P)" says the same in one pass from the start ('.' takes
     * every byte but NUL, "[^.]" the rest). The pattern as written was
     * compiled above for its error message; the wrapped one replaces it.
     */
    if (!plain_only) {
        struct ar_buf w;
        regex_t wre;
        ar_buf_init(&w, AR_BUF_UNLIMITED);
        if (ar_buf_printf(&w, "^(.|[^.])*(%s)", pattern) == 0 &&
            regcomp(&wre, ar_buf_cstr(&w), REG_EXTENDED | REG_NOSUB) == 0) {
            regfree(&n->re);
            n->re = wre;
        }
        ar_buf_finish(&w);
    }
    n->pattern = json_string_value(v);
    n->has |= HAS_PATTERN;
    return 0;
}

typedef int keyword_fn(struct loader *ld, struct node *n, const char *kw, json_t *v, int depth);

/* Sorted by name. A NULL handler marks an annotation, accepted and ignored. */
static const struct {
    const char *name;
    keyword_fn *fn;
} keywords[] = {
    { "$comment", NULL },
    { "$schema", NULL },
    { "additionalProperties", kw_additional },
    { "const", kw_const },
    { "default", NULL },
    { "description", NULL },
    { "enum", kw_enum },
    { "examples", NULL },
    { "exclusiveMaximum", kw_number },
    { "exclusiveMinimum", kw_number },
    { "items", kw_items },
    { "maxItems", kw_count },
    { "maxLength", kw_count },
    { "maximum", kw_number },
    { "minItems", kw_count },
    { "minLength", kw_count },
    { "minimum", kw_number },
    { "pattern", kw_pattern },
    { "properties", kw_properties },
    { "required", kw_required },
    { "title", NULL },
    { "type", kw_type },
};

static int find_keyword(const char *name)
{
    size_t lo = 0, hi = AR_ARRAY_SIZE(keywords);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, keywords[mid].name);
        if (c == 0)
            return (int)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

static int compile(struct loader *ld, json_t *schema, int depth, struct node **out)
{
    if (depth > AR_CONTRACT_MAX_DEPTH)
        return load_error(ld, NULL, "schema nests deeper than %d levels", AR_CONTRACT_MAX_DEPTH);
    if (!json_is_object(schema) && !json_is_boolean(schema))
        return load_error(ld, NULL, "schema at %s must be an object or a boolean, not %s",
                          display_pointer(ar_buf_cstr(&ld->path)), kind_of(schema));
    struct node *n = calloc(1, sizeof(*n));
    if (!n)
        return ar_error_set(ld->err, AR_ENOMEM, NULL, "out of memory");
    n->next_alloc = ld->c->nodes;
    ld->c->nodes = n;
    *out = n;
    n->boolean = json_is_boolean(schema) ? json_is_true(schema) : -1;
    if (n->boolean >= 0)
        return 0;
    const char *key;
    json_t *v;
    json_object_foreach(schema, key, v)
    {
        int k = find_keyword(key);
        if (k < 0)
            return load_error(ld, key, "unsupported keyword '%s' at %s", key,
                              display_pointer(ar_buf_cstr(&ld->path)));
        if (keywords[k].fn) {
            int rc = keywords[k].fn(ld, n, key, v, depth);
            if (rc)
                return rc;
        }
    }
    return 0;
}

void ar_contract_destroy(struct ar_contract *c)
{
    if (!c)
        return;
    for (struct node *n = c->nodes, *next; n; n = next) {
        next = n->next_alloc;
        if (n->has & HAS_PATTERN)
            regfree(&n->re);
        free(n->props);
        free(n);
    }
    json_decref(c->schema);
    free(c);
}

int ar_contract_from_json(json_t *schema, struct ar_contract **out, struct ar_error *err)
{
    *out = NULL;
    struct ar_contract *c = calloc(1, sizeof(*c));
    if (!c)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    c->schema = json_incref(schema);
    struct loader ld = { c, { NULL, 0, 0, AR_BUF_UNLIMITED }, err };
    int rc = compile(&ld, schema, 0, &c->root);
    ar_buf_finish(&ld.path);
    if (rc) {
        ar_contract_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

int ar_contract_parse(const char *text, size_t len, struct ar_contract **out, struct ar_error *err)
{
    json_error_t jerr;
    *out = NULL;
    json_t *schema = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!schema)
        return ar_error_set(err, AR_EUSAGE, NULL, "invalid JSON at line %d column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    int rc = ar_contract_from_json(schema, out, err);
    json_decref(schema);
    return rc;
}

json_t *ar_contract_schema_json(const struct ar_contract *c)
{
    return c->schema;
}

/* -------------------------------------------------------------- checking */

struct checker {
    struct ar_violations *out; /* NULL: stop at the first violation (ar_contract_accepts) */
    struct ar_buf path;
    int found;
    int rc;
};

static void report(struct checker *ck, json_t *value, const char *fmt, ...) AR_PRINTF(3, 4);

static void report(struct checker *ck, json_t *value, const char *fmt, ...)
{
    ck->found++;
    if (!ck->out || ck->rc)
        return;
    va_list ap;
    va_start(ap, fmt);
    ck->rc = violations_addv(ck->out, ar_buf_cstr(&ck->path), value, fmt, ap);
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

static int type_matches(unsigned types, json_t *v)
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
        return (types & T_NUMBER) || ((types & T_INTEGER) && is_integral(v));
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
            preview(pv, sizeof(pv), v, AR_CONTRACT_PREVIEW_BYTES);
            report(ck, v, "expected at least %zu character%s, got %zu: %s", n->min_len,
                   n->min_len == 1 ? "" : "s", len, pv);
        }
        if ((n->has & HAS_MAXLEN) && len > n->max_len) {
            preview(pv, sizeof(pv), v, AR_CONTRACT_PREVIEW_BYTES);
            report(ck, v, "expected at most %zu character%s, got %zu: %s", n->max_len,
                   n->max_len == 1 ? "" : "s", len, pv);
        }
    }
    if ((n->has & HAS_PATTERN) && !pattern_matches(&n->re, v)) {
        preview(pv, sizeof(pv), v, AR_CONTRACT_PREVIEW_BYTES);
        report(ck, v, "expected a match for pattern \"%s\", got %s", n->pattern, pv);
    }
}

static void check_number(struct checker *ck, const struct node *n, json_t *v)
{
    static const struct {
        unsigned flag;
        const char *op;
    } bounds[] = { { HAS_MIN, ">=" }, { HAS_MAX, "<=" }, { HAS_XMIN, ">" }, { HAS_XMAX, "<" } };
    double d = json_number_value(v);
    const double limit[] = { n->min, n->max, n->xmin, n->xmax };
    const int ok[] = { d >= n->min, d <= n->max, d > n->xmin, d < n->xmax };
    for (size_t i = 0; i < AR_ARRAY_SIZE(bounds); i++) {
        if (!(n->has & bounds[i].flag) || ok[i])
            continue;
        char lim[40], pv[PREVIEW_MAX];
        format_number(lim, sizeof(lim), limit[i]);
        preview(pv, sizeof(pv), v, AR_CONTRACT_PREVIEW_BYTES);
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
    if (n->types && !type_matches(n->types, v)) {
        if (ck->out) {
            char want[128];
            types_text(want, sizeof(want), n->type_json);
            if (json_is_null(v)) {
                report(ck, v, "expected %s, got null", want);
            } else {
                preview(pv, sizeof(pv), v, AR_CONTRACT_PREVIEW_BYTES);
                report(ck, v, "expected %s, got %s %s", want, kind_of(v), pv);
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
            preview(want, sizeof(want), n->enum_values, 2 * AR_CONTRACT_PREVIEW_BYTES);
            preview(pv, sizeof(pv), v, AR_CONTRACT_PREVIEW_BYTES);
            report(ck, v, "expected one of %s, got %s", want, pv);
        }
    }
    if ((n->has & HAS_CONST) && !values_equal(n->const_value, v, 0)) {
        char want[PREVIEW_MAX];
        preview(want, sizeof(want), n->const_value, AR_CONTRACT_PREVIEW_BYTES);
        preview(pv, sizeof(pv), v, AR_CONTRACT_PREVIEW_BYTES);
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
    struct checker ck = { out, { NULL, 0, 0, AR_BUF_UNLIMITED }, 0, 0 };
    check_node(&ck, c->root, value);
    ar_buf_finish(&ck.path);
    return ck.rc ? ck.rc : ck.found;
}

int ar_contract_accepts(const struct ar_contract *c, json_t *value)
{
    struct checker ck = { NULL, { NULL, 0, 0, AR_BUF_UNLIMITED }, 0, 0 };
    check_node(&ck, c->root, value);
    return ck.found == 0;
}

int ar_contract_accept_fn(json_t *value, void *arg)
{
    return ar_contract_accepts(arg, value);
}
