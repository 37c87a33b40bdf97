/*
 * Loading a contract: the schema is checked keyword by keyword and compiled
 * once into a tree of nodes (types as a bit mask, patterns as regex_t), so
 * that checking a value never re-reads the schema and never fails on it.
 */
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

static const struct {
    const char *name;
    unsigned bit;
} type_names[] = {
    { "array", T_ARRAY },   { "boolean", T_BOOLEAN }, { "integer", T_INTEGER }, { "null", T_NULL },
    { "number", T_NUMBER }, { "object", T_OBJECT },   { "string", T_STRING },
};

/* --------------------------------------------------------------- loading */

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

int ar_contract_is_integral(json_t *v)
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
    if (!ar_contract_is_integral(v) || json_number_value(v) < 0)
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
            n->bound_json[i] = v;
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
 * regcomp(). A group adds its open and close, a '?' or '*' one node: both
 * lengthen the closure of every copy a bound makes, which is what costs
 * ("^(a?){1,300}$" took 150 MB, "^(a){1,300}$" a few). Bracket expressions
 * and escapes count as one atom; the estimate only needs to be right about
 * bounds. SIZE_MAX when groups nest deeper than
 * AR_CONTRACT_MAX_PATTERN_DEPTH or a repetition is repeated. *max_bound
 * becomes the largest bound written, if larger ({m,} counts m).
 */
static size_t pattern_size(const char *p, int *plain_only, unsigned long *max_bound)
{
    struct {
        size_t sum;  /* the size of the sequence so far */
        size_t last; /* the size of its last atom, which a bound repeats */
    } st[AR_CONTRACT_MAX_PATTERN_DEPTH + 1] = { { 0, 0 } };
    size_t depth = 0;
    int quantified = 0; /* the last thing read was a repetition */
    while (*p) {
        size_t atom = 1;
        /* POSIX leaves "a+*", "a?+", "a{2}*" undefined, and glibc's regcomp()
         * takes minutes over a few of them in a row ("1++++*+++++++"). */
        if (quantified &&
            (*p == '*' || *p == '?' || *p == '+' || (*p == '{' && p[1] >= '0' && p[1] <= '9')))
            return SIZE_MAX;
        if (*p == '(') {
            /* glibc's regcomp() recurses per group: 100000 of them overflow the stack. */
            if (depth == AR_CONTRACT_MAX_PATTERN_DEPTH)
                return SIZE_MAX;
            st[++depth].sum = 0;
            st[depth].last = 0;
            quantified = 0;
            p++;
            continue;
        }
        if (*p == ')' && depth > 0) {
            atom = add_sat(st[depth--].sum, 2); /* and the group's open and close */
            p++;
        } else if (*p == ')') {
            /* An unmatched ')' is a literal: wrapped in a group it would close it. */
            *plain_only = 1;
            p++;
        } else if (*p == '*' || *p == '?') {
            /* No copies, one node more: optional, the operand's closure grows. */
            st[depth].sum = add_sat(st[depth].sum, 1);
            st[depth].last = add_sat(st[depth].last, 1);
            quantified = 1;
            p++;
            continue;
        } else if (*p == '+') {
            /* x+ is built as x x*: one copy, so "a++++…" doubles each time. */
            st[depth].sum = add_sat(st[depth].sum, st[depth].last);
            st[depth].last = add_sat(st[depth].last, st[depth].last);
            quantified = 1;
            p++;
            continue;
        } else if (*p == '{' && p[1] >= '0' && p[1] <= '9') {
            char *end;
            unsigned long m = strtoul(p + 1, &end, 10), n = m, written = m;
            if (end > p + 1 && *end == ',' && end[1] >= '0' && end[1] <= '9')
                n = written = strtoul(end + 1, &end, 10);
            else if (end > p + 1 && *end == ',')
                n = m + 1, end++; /* {m,}: costs about one copy more than {m} */
            if (end > p + 1 && *end == '}') {
                unsigned long top = m > written ? m : written;
                if (top > *max_bound)
                    *max_bound = top;
                size_t extra = mul_sat(st[depth].last, n > 0 ? n - 1 : 0);
                st[depth].sum = add_sat(st[depth].sum, extra);
                st[depth].last = add_sat(st[depth].last, extra);
                quantified = 1;
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
            /* glibc lets a '^' inside the wrapper match after a newline:
             * "^[a-z]+$" would accept "ABC\nabc". Anchored patterns are tried
             * at the start only anyway. */
            if (*p == '^')
                *plain_only = 1;
            atom = *p != '|';
            p++;
        }
        st[depth].sum = add_sat(st[depth].sum, atom);
        st[depth].last = atom;
        quantified = 0;
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
    unsigned long max_bound = 0;
    size_t size = pattern_size(pattern, &plain_only, &max_bound);
    if (size > AR_CONTRACT_MAX_PATTERN_SIZE)
        return load_error(ld, kw,
                          "'pattern' at %s is too complex to compile (groups nested deeper than "
                          "%d, a repetition repeated like \"a+*\", or bounds that expand it "
                          "past about %d regex nodes, like {1,5000} or (a?){1,300}); use "
                          "maxLength for lengths",
                          display_pointer(ar_buf_cstr(&ld->path)), AR_CONTRACT_MAX_PATTERN_DEPTH,
                          AR_CONTRACT_MAX_PATTERN_SIZE);
    if (max_bound > AR_CONTRACT_MAX_PATTERN_BOUND)
        return load_error(ld, kw,
                          "'pattern' at %s repeats something %lu times: a bound {m,n} above %d "
                          "(POSIX's RE_DUP_MAX) is refused by some C libraries; use maxLength "
                          "for lengths",
                          display_pointer(ar_buf_cstr(&ld->path)), max_bound,
                          AR_CONTRACT_MAX_PATTERN_BOUND);
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
                          display_pointer(ar_buf_cstr(&ld->path)), ar_json_type_name(schema));
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
