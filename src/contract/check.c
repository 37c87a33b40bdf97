/*
 * Checking a value against a compiled contract (JSON Schema draft 2020-12): every
 * violation, with its JSON Pointer.
 *
 * One walk, eval(), applies a node to a value: its type first (a mismatch is
 * reported alone), then its references, assertions and applicators, then
 * unevaluatedProperties / unevaluatedItems over what the others did not evaluate.
 * What a node evaluated (property names, item indexes) is collected only where an
 * unevaluated* keyword above it needs it (node.needs_annotations), and only from
 * subschemas that passed, as the specification says.
 *
 * Subschemas whose failure is not itself a violation (the branches of anyOf and
 * oneOf, if, not, contains, propertyNames) are evaluated silently first; their
 * violations are collected only to explain a failure, once. A pattern that hits
 * its limit, or a value nested deeper than the check may recurse, stops the whole
 * check with that error: no `not` or `anyOf` can turn it into a pass.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/internal.h"
#include "util/array.h"
#include "util/json_dump.h"
#include "util/macros.h"

/* How deep eval() may recurse (schema levels along the value, references included). */
#define MAX_EVAL_DEPTH 2000
/* Violations of one anyOf/oneOf branch shown to explain its failure. */
#define BRANCH_DETAIL 3

/* What every checker of one check shares. */
struct check_ctx {
    const struct ar_contract *c;
    const struct ar_json_doc *doc; /* the value's spelling of numbers, or NULL */
    struct ar_buf path;
    const struct resource **scope; /* the dynamic scope, outermost first */
    size_t nscope, capscope;
    int depth;
    int aborted;
    char abort_path[256];
    char abort_msg[300];
    json_t *abort_value;
};

struct checker {
    struct ar_violations *out; /* NULL: stop at the first violation, say nothing */
    size_t found;
    int rc;
    struct check_ctx *x;
};

/* What a node evaluated of the value it was applied to. */
struct annot {
    const char **keys; /* property names (borrowed from the value) */
    size_t nkeys, capkeys;
    int all_props;
    size_t items_upto;     /* items [0, items_upto) */
    unsigned char *marked; /* items marked one by one (contains), by index */
    size_t nmarked;
    int all_items;
};

static void annot_finish(struct annot *a)
{
    free(a->keys);
    free(a->marked);
    memset(a, 0, sizeof(*a));
}

static int annot_has_key(const struct annot *a, const char *k)
{
    if (a->all_props)
        return 1;
    for (size_t i = 0; i < a->nkeys; i++)
        if (a->keys[i] == k || strcmp(a->keys[i], k) == 0)
            return 1;
    return 0;
}

static void annot_add_key(struct annot *a, const char *k)
{
    if (!a || a->all_props || annot_has_key(a, k))
        return;
    if (ar_array_reserve(&a->keys, &a->capkeys, a->nkeys + 1, sizeof(*a->keys), 8) == 0)
        a->keys[a->nkeys++] = k;
}

static void annot_mark(struct annot *a, size_t i, size_t count)
{
    if (!a || a->all_items)
        return;
    if (!a->marked) {
        a->marked = calloc(count ? count : 1, 1);
        a->nmarked = count;
    }
    if (a->marked && i < a->nmarked)
        a->marked[i] = 1;
}

static int annot_has_item(const struct annot *a, size_t i)
{
    return a->all_items || i < a->items_upto || (a->marked && i < a->nmarked && a->marked[i]);
}

static void annot_merge(struct annot *into, const struct annot *from)
{
    if (!into)
        return;
    if (from->all_props)
        into->all_props = 1;
    for (size_t i = 0; i < from->nkeys; i++)
        annot_add_key(into, from->keys[i]);
    if (from->all_items)
        into->all_items = 1;
    if (from->items_upto > into->items_upto)
        into->items_upto = from->items_upto;
    for (size_t i = 0; from->marked && i < from->nmarked; i++)
        if (from->marked[i])
            annot_mark(into, i, from->nmarked);
}

/* ---- reporting ------------------------------------------------------------------------- */

static void report(struct checker *ck, json_t *value, const char *fmt, ...) AR_PRINTF(3, 4);

static void report(struct checker *ck, json_t *value, const char *fmt, ...)
{
    ck->found++;
    if (!ck->out || ck->rc)
        return;
    va_list ap;
    va_start(ap, fmt);
    ck->rc = ar_violations_addv(ck->out, ar_buf_cstr(&ck->x->path), value, fmt, ap);
    va_end(ap);
}

/* Stops the whole check: what happened, where. */
static void abort_check(struct checker *ck, json_t *value, const char *fmt, ...) AR_PRINTF(3, 4);

static void abort_check(struct checker *ck, json_t *value, const char *fmt, ...)
{
    struct check_ctx *x = ck->x;
    if (x->aborted)
        return;
    x->aborted = 1;
    snprintf(x->abort_path, sizeof(x->abort_path), "%s", ar_buf_cstr(&x->path));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->abort_msg, sizeof(x->abort_msg), fmt, ap);
    va_end(ap);
    x->abort_value = json_incref(value);
}

static int stop(const struct checker *ck)
{
    return (!ck->out && ck->found) || ck->x->aborted;
}

static size_t path_push(struct checker *ck, const char *seg, size_t len)
{
    size_t saved = ck->x->path.len;
    if (ck->rc == 0 && ar_json_pointer_append(&ck->x->path, seg, len) < 0)
        ck->rc = AR_ENOMEM;
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
    struct ar_buf *p = &ck->x->path;
    if (p->data && saved <= p->len) {
        p->len = saved;
        p->data[saved] = '\0';
    }
}

/* A child checker that only says yes or no, or collects into `out`. */
static struct checker quiet(const struct checker *ck, struct ar_violations *out)
{
    struct checker q = { out, 0, 0, ck->x };
    return q;
}

/* v as a message quotes it: a number as written when its spelling is known. */
static void preview(const struct checker *ck, char *dst, size_t dstlen, json_t *v)
{
    size_t n;
    const char *lex = ar_json_doc_lexeme(ck->x->doc, v, &n);
    if (lex)
        snprintf(dst, dstlen, "%.*s%s",
                 n > AR_CONTRACT_PREVIEW_BYTES ? AR_CONTRACT_PREVIEW_BYTES : (int)n, lex,
                 n > AR_CONTRACT_PREVIEW_BYTES ? "\u2026" : "");
    else
        ar_contract_preview(dst, dstlen, v, AR_CONTRACT_PREVIEW_BYTES);
}

/* A schema number as a message shows it: as written. */
static void number_text(const struct number *num, char *dst, size_t n)
{
    char buf[40];
    size_t len;
    const char *t = ar_contract_number_text(num->doc, num->json, buf, &len);
    snprintf(dst, n, "%.*s", len > 60 ? 60 : (int)len, t);
}

/* ---- values ---------------------------------------------------------------------------- */

static int is_integral(const struct checker *ck, json_t *v)
{
    char buf[40];
    size_t n;
    const char *t = ar_contract_number_text(ck->x->doc, v, buf, &n);
    return json_is_integer(v) || ar_json_number_is_integral(t, n);
}

static unsigned type_bits(const struct checker *ck, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return T_OBJECT;
    case JSON_ARRAY:
        return T_ARRAY;
    case JSON_STRING:
        return T_STRING;
    case JSON_INTEGER:
        return T_INTEGER | T_NUMBER;
    case JSON_REAL:
        return T_NUMBER | (is_integral(ck, v) ? T_INTEGER : 0);
    case JSON_TRUE:
    case JSON_FALSE:
        return T_BOOLEAN;
    case JSON_NULL:
        return T_NULL;
    }
    return 0;
}

/* JSON Schema equality: numbers by value exactly (1 and 1.0 are equal, 1e-400 is not
 * 0), strings byte for byte, objects ignoring key order. */
static int values_equal(const struct ar_json_doc *da, json_t *a, const struct ar_json_doc *db,
                        json_t *b, int depth)
{
    if (depth > AR_CONTRACT_MAX_DEPTH)
        return 0;
    if (json_is_number(a) && json_is_number(b)) {
        char ba[40], bb[40];
        size_t na, nb;
        const char *ta = ar_contract_number_text(da, a, ba, &na);
        const char *tb = ar_contract_number_text(db, b, bb, &nb);
        return ar_json_number_cmp(ta, na, tb, nb) == 0;
    }
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_string(a))
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!values_equal(da, json_array_get(a, i), db, json_array_get(b, i), depth + 1))
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
            if (!vb || !values_equal(da, va, db, vb, depth + 1))
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

static void types_text(char *dst, size_t n, unsigned types)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = { { T_OBJECT, "object" },   { T_ARRAY, "array" },   { T_STRING, "string" },
                  { T_INTEGER, "integer" }, { T_NUMBER, "number" }, { T_BOOLEAN, "boolean" },
                  { T_NULL, "null" } };
    size_t count = 0, used = 0, total = 0;
    for (size_t i = 0; i < AR_ARRAY_SIZE(names); i++)
        total += (types & names[i].bit) != 0;
    dst[0] = '\0';
    for (size_t i = 0; i < AR_ARRAY_SIZE(names) && used < n; i++) {
        if (!(types & names[i].bit))
            continue;
        const char *sep = count == 0 ? "" : count + 1 == total ? " or " : ", ";
        int w = snprintf(dst + used, n - used, "%s%s", sep, names[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
        count++;
    }
}

/* ---- the walk -------------------------------------------------------------------------- */

static int eval(struct checker *ck, const struct node *n, json_t *v, struct annot *an);

/* Evaluates n on v quietly; when it passes, what it evaluated joins `an`. */
static int eval_quiet(struct checker *ck, const struct node *n, json_t *v, struct annot *an)
{
    struct checker q = quiet(ck, NULL);
    struct annot sub;
    memset(&sub, 0, sizeof(sub));
    int ok = eval(&q, n, v, an ? &sub : NULL);
    if (ok && an)
        annot_merge(an, &sub);
    annot_finish(&sub);
    return ok;
}

/* The types a schema admits, looking through a $ref that stands alone: 0 when any. */
static unsigned admitted_types(const struct node *n, int hops)
{
    if (n->boolean >= 0)
        return n->boolean ? 0 : ~0u;
    if (n->types || !n->ref || hops > 8)
        return n->types;
    return admitted_types(n->ref, hops + 1);
}

/* Explains a failed anyOf / oneOf: one line, then what each branch found. */
static void explain_branches(struct checker *ck, const char *kw, struct node **list, size_t count,
                             json_t *v)
{
    char pv[PREVIEW_MAX];
    if (!ck->out) {
        report(ck, v, "%s", kw);
        return;
    }
    /* When every branch wants another type, say which types: "expected string or null". */
    unsigned all = 0;
    int typed = 1;
    for (size_t i = 0; i < count && typed; i++) {
        unsigned t = admitted_types(list[i], 0);
        typed = t != 0 && t != ~0u;
        all |= t;
    }
    if (typed && !(all & type_bits(ck, v))) {
        char want[128];
        types_text(want, sizeof(want), all);
        preview(ck, pv, sizeof(pv), v);
        if (json_is_null(v))
            report(ck, v, "expected %s, got null", want);
        else
            report(ck, v, "expected %s, got %s %s", want, ar_json_type_name(v), pv);
        return;
    }
    preview(ck, pv, sizeof(pv), v);
    report(ck, v, "expected a value matching %s of the %zu schemas of %s, got %s",
           strcmp(kw, "oneOf") == 0 ? "exactly one" : "at least one", count, kw, pv);
    for (size_t i = 0; i < count && ck->rc == 0; i++) {
        struct ar_violations tmp = AR_VIOLATIONS_INIT;
        struct checker q = quiet(ck, &tmp);
        eval(&q, list[i], v, NULL);
        for (size_t k = 0; k < tmp.n && k < BRANCH_DETAIL && ck->rc == 0; k++)
            ck->rc = ar_violations_add(ck->out, tmp.v[k].path, tmp.v[k].value, "%s/%zu: %s", kw, i,
                                       tmp.v[k].message);
        ar_violations_finish(&tmp);
    }
}

static void check_combinators(struct checker *ck, const struct node *n, json_t *v, struct annot *an)
{
    for (size_t i = 0; i < n->n_all_of && !stop(ck); i++)
        eval(ck, n->all_of[i], v, an);
    if (n->n_any_of && !stop(ck)) {
        int any = 0;
        for (size_t i = 0; i < n->n_any_of && !ck->x->aborted; i++) {
            if (eval_quiet(ck, n->any_of[i], v, an)) {
                any = 1;
                if (!an)
                    break; /* the others matter only for what they evaluate */
            }
        }
        if (!any && !ck->x->aborted)
            explain_branches(ck, "anyOf", n->any_of, n->n_any_of, v);
    }
    if (n->n_one_of && !stop(ck)) {
        size_t hits = 0, first = 0, second = 0;
        struct annot sub;
        memset(&sub, 0, sizeof(sub));
        for (size_t i = 0; i < n->n_one_of && !ck->x->aborted && hits < 2; i++) {
            struct annot one;
            memset(&one, 0, sizeof(one));
            if (eval_quiet(ck, n->one_of[i], v, an ? &one : NULL)) {
                if (hits++ == 0) {
                    first = i;
                    annot_merge(&sub, &one);
                } else {
                    second = i;
                }
            }
            annot_finish(&one);
        }
        if (hits == 1)
            annot_merge(an, &sub);
        annot_finish(&sub);
        if (hits == 0 && !ck->x->aborted)
            explain_branches(ck, "oneOf", n->one_of, n->n_one_of, v);
        else if (hits > 1)
            report(ck, v,
                   "expected a value matching exactly one of the %zu schemas of oneOf, "
                   "got one matching oneOf/%zu and oneOf/%zu",
                   n->n_one_of, first, second);
    }
    if (n->not_ && !stop(ck)) {
        if (eval_quiet(ck, n->not_, v, NULL) && !ck->x->aborted) {
            char pv[PREVIEW_MAX];
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected a value the schema under 'not' rejects, got %s", pv);
        }
    }
    if (n->if_ && !stop(ck)) {
        if (eval_quiet(ck, n->if_, v, an)) {
            if (n->then_)
                eval(ck, n->then_, v, an);
        } else if (n->else_ && !ck->x->aborted) {
            eval(ck, n->else_, v, an);
        }
    }
}

static void check_object(struct checker *ck, const struct node *n, json_t *v, struct annot *an)
{
    size_t i;
    json_t *name;
    size_t count = json_object_size(v);
    json_array_foreach(n->required, i, name)
    {
        if (stop(ck))
            return;
        const char *key = json_string_value(name);
        if (!json_object_getn(v, key, json_string_length(name))) {
            size_t saved = path_push(ck, key, json_string_length(name));
            report(ck, NULL, "required property missing");
            path_pop(ck, saved);
        }
    }
    if (n->dependent_required) {
        const char *dkey;
        json_t *list;
        json_object_foreach(n->dependent_required, dkey, list)
        {
            if (stop(ck) || !json_object_get(v, dkey))
                continue;
            json_array_foreach(list, i, name)
            {
                const char *key = json_string_value(name);
                if (json_object_getn(v, key, json_string_length(name)))
                    continue;
                size_t saved = path_push(ck, key, json_string_length(name));
                report(ck, NULL, "required property missing (required when '%s' is present)", dkey);
                path_pop(ck, saved);
            }
        }
    }
    if ((n->has_count & (1u << C_MIN_PROPS)) && count < n->count[C_MIN_PROPS])
        report(ck, v, "expected at least %zu propert%s, got %zu", n->count[C_MIN_PROPS],
               n->count[C_MIN_PROPS] == 1 ? "y" : "ies", count);
    if ((n->has_count & (1u << C_MAX_PROPS)) && count > n->count[C_MAX_PROPS])
        report(ck, v, "expected at most %zu propert%s, got %zu", n->count[C_MAX_PROPS],
               n->count[C_MAX_PROPS] == 1 ? "y" : "ies", count);
    const char *key;
    json_t *val;
    for (size_t p = 0; p < n->n_props && !stop(ck); p++) {
        json_t *pv = json_object_get(v, n->props[p].name);
        if (!pv)
            continue;
        size_t saved = path_push(ck, n->props[p].name, strlen(n->props[p].name));
        eval(ck, n->props[p].schema, pv, NULL);
        path_pop(ck, saved);
        annot_add_key(an, n->props[p].name);
    }
    if (!n->n_pattern_props && !n->additional_props && !n->property_names) {
        for (size_t d = 0; d < n->n_dep_schemas && !stop(ck); d++)
            if (json_object_get(v, n->dep_schemas[d].name))
                eval(ck, n->dep_schemas[d].schema, v, an);
        return;
    }
    json_t *declared = json_object_get(n->json, "properties");
    json_object_foreach(v, key, val)
    {
        if (stop(ck))
            return;
        int known = n->n_props && json_object_get(declared, key) != NULL;
        size_t saved = path_push(ck, key, strlen(key));
        size_t klen = strlen(key);
        for (size_t p = 0; p < n->n_pattern_props && !stop(ck); p++) {
            int m = ar_pattern_match(n->pattern_props[p].re, key, klen);
            if (m == AR_PATTERN_LIMIT || m < 0) {
                abort_check(ck, val, "patternProperties \"%s\" gave up on this property's name: %s",
                            n->pattern_props[p].src,
                            m == AR_PATTERN_LIMIT
                                ? "the pattern hit its step limit (write a simpler pattern)"
                                : "the name could not be matched");
                break;
            }
            if (m) {
                known = 1;
                eval(ck, n->pattern_props[p].schema, val, NULL);
            }
        }
        if (!known && n->additional_props && !stop(ck)) {
            if (n->additional_props->boolean == 0) {
                if (ck->out) {
                    char allowed[160] = "";
                    size_t used = 0;
                    for (size_t p = 0; p < n->n_props && used < sizeof(allowed); p++) {
                        int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%s",
                                         p ? ", " : "", n->props[p].name);
                        used += w > 0 ? (size_t)w : 0;
                    }
                    if (n->n_props)
                        report(ck, val, "property not allowed (allowed: %s)", allowed);
                    else if (n->n_pattern_props)
                        report(ck, val,
                               "property not allowed (its name matches no "
                               "patternProperties)");
                    else
                        report(ck, val, "property not allowed (no properties are allowed here)");
                } else {
                    report(ck, val, "property not allowed");
                }
            } else {
                eval(ck, n->additional_props, val, NULL);
            }
            known = 1;
        }
        if (known)
            annot_add_key(an, key);
        if (n->property_names && !stop(ck)) {
            json_t *kv = json_stringn(key, klen);
            if (kv && !eval_quiet(ck, n->property_names, kv, NULL) && !ck->x->aborted) {
                struct ar_violations tmp = AR_VIOLATIONS_INIT;
                if (ck->out) {
                    struct checker q = quiet(ck, &tmp);
                    eval(&q, n->property_names, kv, NULL);
                }
                report(ck, NULL, "property name \"%s\" is not allowed by propertyNames%s%s", key,
                       tmp.n ? ": " : "", tmp.n ? tmp.v[0].message : "");
                ar_violations_finish(&tmp);
            }
            json_decref(kv);
        }
        path_pop(ck, saved);
    }
    for (size_t d = 0; d < n->n_dep_schemas && !stop(ck); d++)
        if (json_object_get(v, n->dep_schemas[d].name))
            eval(ck, n->dep_schemas[d].schema, v, an);
}

/* A hash of v under JSON Schema equality: equal values hash alike (numbers by value,
 * objects whatever their key order). */
static uint64_t value_hash(const struct ar_json_doc *doc, json_t *v, int depth)
{
    const uint64_t prime = 1099511628211ull;
    uint64_t h = 1469598103934665603ull ^ (uint64_t)json_typeof(v);
    if (json_is_number(v)) {
        char buf[40];
        size_t n;
        const char *t = ar_contract_number_text(doc, v, buf, &n);
        return ar_number_hash(t, n) ^ 0x9e3779b97f4a7c15ull;
    }
    if (depth > AR_CONTRACT_MAX_DEPTH)
        return h;
    if (json_is_string(v)) {
        const unsigned char *s = (const unsigned char *)json_string_value(v);
        for (size_t i = 0; i < json_string_length(v); i++)
            h = (h ^ s[i]) * prime;
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            h = (h ^ value_hash(doc, json_array_get(v, i), depth + 1)) * prime;
    } else if (json_is_object(v)) {
        const char *key;
        json_t *m;
        uint64_t sum = 0;
        json_object_foreach(v, key, m)
        {
            uint64_t kh = 1469598103934665603ull;
            for (const unsigned char *k = (const unsigned char *)key; *k; k++)
                kh = (kh ^ *k) * prime;
            sum += (kh ^ value_hash(doc, m, depth + 1)) * prime;
        }
        h ^= sum;
    }
    return h;
}

struct hashed {
    uint64_t h;
    size_t i;
};

static int by_hash(const void *a, const void *b)
{
    const struct hashed *x = a, *y = b;
    return x->h < y->h ? -1 : x->h > y->h ? 1 : x->i < y->i ? -1 : x->i > y->i;
}

/* uniqueItems in n log n: only items whose hashes match are compared. Reports the first
 * item (by index) that equals an earlier one. */
static void check_unique(struct checker *ck, json_t *v, size_t count)
{
    struct hashed *hs = malloc(count * sizeof(*hs));
    if (!hs) {
        ck->rc = AR_ENOMEM;
        return;
    }
    for (size_t i = 0; i < count; i++)
        hs[i] = (struct hashed){ value_hash(ck->x->doc, json_array_get(v, i), 0), i };
    qsort(hs, count, sizeof(*hs), by_hash);
    size_t first = SIZE_MAX, second = SIZE_MAX;
    for (size_t a = 0; a < count; a++)
        for (size_t b = a + 1; b < count && hs[b].h == hs[a].h; b++)
            if (hs[b].i < second && values_equal(ck->x->doc, json_array_get(v, hs[a].i), ck->x->doc,
                                                 json_array_get(v, hs[b].i), 0)) {
                first = hs[a].i;
                second = hs[b].i;
            }
    free(hs);
    if (second != SIZE_MAX)
        report(ck, v, "expected unique items, got item %zu equal to item %zu", second, first);
}

static void check_array(struct checker *ck, const struct node *n, json_t *v, struct annot *an)
{
    size_t count = json_array_size(v);
    if ((n->has_count & (1u << C_MIN_ITEMS)) && count < n->count[C_MIN_ITEMS])
        report(ck, v, "expected at least %zu item%s, got %zu", n->count[C_MIN_ITEMS],
               n->count[C_MIN_ITEMS] == 1 ? "" : "s", count);
    if ((n->has_count & (1u << C_MAX_ITEMS)) && count > n->count[C_MAX_ITEMS])
        report(ck, v, "expected at most %zu item%s, got %zu", n->count[C_MAX_ITEMS],
               n->count[C_MAX_ITEMS] == 1 ? "" : "s", count);
    if (n->unique_items && count > 1)
        check_unique(ck, v, count);
    size_t prefix = n->n_prefix_items < count ? n->n_prefix_items : count;
    for (size_t i = 0; i < prefix && !stop(ck); i++) {
        size_t saved = path_push_index(ck, i);
        eval(ck, n->prefix_items[i], json_array_get(v, i), NULL);
        path_pop(ck, saved);
    }
    if (an && prefix > an->items_upto)
        an->items_upto = prefix;
    if (n->items && count > n->n_prefix_items) {
        if (n->items->boolean == 0) {
            report(ck, v, "expected at most %zu item%s, got %zu", n->n_prefix_items,
                   n->n_prefix_items == 1 ? "" : "s", count);
        } else {
            for (size_t i = n->n_prefix_items; i < count && !stop(ck); i++) {
                size_t saved = path_push_index(ck, i);
                eval(ck, n->items, json_array_get(v, i), NULL);
                path_pop(ck, saved);
            }
        }
    }
    if (an && n->items)
        an->all_items = 1;
    if (n->contains && !stop(ck)) {
        size_t hits = 0;
        for (size_t i = 0; i < count && !ck->x->aborted; i++) {
            size_t saved = path_push_index(ck, i);
            if (eval_quiet(ck, n->contains, json_array_get(v, i), NULL)) {
                hits++;
                annot_mark(an, i, count);
            }
            path_pop(ck, saved);
        }
        size_t least = (n->has_count & (1u << C_MIN_CONTAINS)) ? n->count[C_MIN_CONTAINS] : 1;
        if (hits < least && !ck->x->aborted)
            report(ck, v, "expected at least %zu item%s matching 'contains', got %zu", least,
                   least == 1 ? "" : "s", hits);
        if ((n->has_count & (1u << C_MAX_CONTAINS)) && hits > n->count[C_MAX_CONTAINS])
            report(ck, v, "expected at most %zu item%s matching 'contains', got %zu",
                   n->count[C_MAX_CONTAINS], n->count[C_MAX_CONTAINS] == 1 ? "" : "s", hits);
    }
}

static void check_string(struct checker *ck, const struct node *n, json_t *v)
{
    char pv[PREVIEW_MAX];
    const char *s = json_string_value(v);
    size_t bytes = json_string_length(v);
    if (n->has_count & ((1u << C_MIN_LENGTH) | (1u << C_MAX_LENGTH))) {
        size_t len = utf8_length(s, bytes);
        if ((n->has_count & (1u << C_MIN_LENGTH)) && len < n->count[C_MIN_LENGTH]) {
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected at least %zu character%s, got %zu: %s", n->count[C_MIN_LENGTH],
                   n->count[C_MIN_LENGTH] == 1 ? "" : "s", len, pv);
        }
        if ((n->has_count & (1u << C_MAX_LENGTH)) && len > n->count[C_MAX_LENGTH]) {
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected at most %zu character%s, got %zu: %s", n->count[C_MAX_LENGTH],
                   n->count[C_MAX_LENGTH] == 1 ? "" : "s", len, pv);
        }
    }
    if (n->pattern) {
        int m = ar_pattern_match(n->pattern, s, bytes);
        if (m == AR_PATTERN_LIMIT || m < 0) {
            abort_check(ck, v, "pattern \"%s\" gave up on this string: %s", n->pattern_src,
                        m == AR_PATTERN_LIMIT ? "it hit its step limit (write a simpler pattern)"
                                              : "the string could not be matched");
        } else if (!m) {
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected a match for pattern \"%s\", got %s", n->pattern_src, pv);
        }
    }
    if (n->format && (ck->x->c->flags & AR_CONTRACT_FORMAT_ASSERT) &&
        ar_format_check(n->format, s, bytes) == 0) {
        preview(ck, pv, sizeof(pv), v);
        report(ck, v, "expected a string in format %s, got %s", n->format, pv);
    }
}

static void check_number(struct checker *ck, const struct node *n, json_t *v)
{
    static const struct {
        int which;
        const char *op;
        int lo, hi; /* the comparison results that pass */
    } bounds[] = { { B_MIN, ">=", 0, 1 },
                   { B_MAX, "<=", -1, 0 },
                   { B_XMIN, ">", 1, 1 },
                   { B_XMAX, "<", -1, -1 } };
    char vb[40];
    size_t vn;
    const char *vt = ar_contract_number_text(ck->x->doc, v, vb, &vn);
    for (size_t i = 0; i < AR_ARRAY_SIZE(bounds); i++) {
        int w = bounds[i].which;
        if (!(n->has_bound & (1u << w)))
            continue;
        char bb[40];
        size_t bn;
        const char *bt = ar_contract_number_text(n->bound[w].doc, n->bound[w].json, bb, &bn);
        int cmp = ar_json_number_cmp(vt, vn, bt, bn);
        if (cmp >= bounds[i].lo && cmp <= bounds[i].hi)
            continue;
        char lim[64], pv[PREVIEW_MAX];
        number_text(&n->bound[w], lim, sizeof(lim));
        preview(ck, pv, sizeof(pv), v);
        report(ck, v, "expected a number %s %s, got %s", bounds[i].op, lim, pv);
    }
    if (n->has_bound & (1u << B_MULTIPLE)) {
        char bb[40];
        size_t bn;
        const char *bt =
            ar_contract_number_text(n->bound[B_MULTIPLE].doc, n->bound[B_MULTIPLE].json, bb, &bn);
        if (!ar_number_is_multiple(vt, vn, bt, bn)) {
            char lim[64], pv[PREVIEW_MAX];
            number_text(&n->bound[B_MULTIPLE], lim, sizeof(lim));
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected a multiple of %s, got %s", lim, pv);
        }
    }
}

/* The node a $dynamicRef lands on: the outermost dynamic anchor of its name in scope. */
static const struct node *dynamic_target(const struct checker *ck, const struct node *n)
{
    if (!n->dyn_name)
        return n->dyn_ref;
    for (size_t i = 0; i < ck->x->nscope; i++) {
        const struct resource *r = ck->x->scope[i];
        for (size_t k = 0; k < r->n_dyn_anchors; k++)
            if (strcmp(r->dyn_anchors[k].name, n->dyn_name) == 0)
                return r->dyn_anchors[k].schema;
    }
    return n->dyn_ref;
}

static void check_unevaluated(struct checker *ck, const struct node *n, json_t *v, struct annot *an)
{
    if (n->unevaluated_props && json_is_object(v)) {
        const char *key;
        json_t *val;
        json_object_foreach(v, key, val)
        {
            if (stop(ck))
                return;
            if (annot_has_key(an, key))
                continue;
            size_t saved = path_push(ck, key, strlen(key));
            if (n->unevaluated_props->boolean == 0)
                report(ck, val,
                       "property not allowed (unevaluatedProperties: no schema here "
                       "evaluates it)");
            else
                eval(ck, n->unevaluated_props, val, NULL);
            path_pop(ck, saved);
        }
        an->all_props = 1;
    }
    if (n->unevaluated_items && json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v) && !stop(ck); i++) {
            if (annot_has_item(an, i))
                continue;
            size_t saved = path_push_index(ck, i);
            if (n->unevaluated_items->boolean == 0)
                report(ck, json_array_get(v, i),
                       "item not allowed (unevaluatedItems: no schema here evaluates it)");
            else
                eval(ck, n->unevaluated_items, json_array_get(v, i), NULL);
            path_pop(ck, saved);
        }
        an->all_items = 1;
    }
}

static void check_node(struct checker *ck, const struct node *n, json_t *v, struct annot *an)
{
    char pv[PREVIEW_MAX];
    if (n->types && !(type_bits(ck, v) & n->types)) {
        if (ck->out) {
            char want[128];
            types_text(want, sizeof(want), n->types);
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
    if (n->ref)
        eval(ck, n->ref, v, an);
    if (n->dyn_ref && !stop(ck))
        eval(ck, dynamic_target(ck, n), v, an);
    if (n->enum_values && !stop(ck)) {
        int hit = 0;
        for (size_t i = 0; i < json_array_size(n->enum_values) && !hit; i++)
            hit = values_equal(n->doc, json_array_get(n->enum_values, i), ck->x->doc, v, 0);
        if (!hit) {
            char want[2 * PREVIEW_MAX];
            ar_contract_preview(want, sizeof(want), n->enum_values, 2 * AR_CONTRACT_PREVIEW_BYTES);
            preview(ck, pv, sizeof(pv), v);
            report(ck, v, "expected one of %s, got %s", want, pv);
        }
    }
    if (n->has_const && !stop(ck) && !values_equal(n->doc, n->const_value, ck->x->doc, v, 0)) {
        char want[PREVIEW_MAX];
        ar_contract_preview(want, sizeof(want), n->const_value, AR_CONTRACT_PREVIEW_BYTES);
        preview(ck, pv, sizeof(pv), v);
        report(ck, v, "expected %s, got %s", want, pv);
    }
    if (stop(ck))
        return;
    if (json_is_object(v))
        check_object(ck, n, v, an);
    else if (json_is_array(v))
        check_array(ck, n, v, an);
    else if (json_is_string(v))
        check_string(ck, n, v);
    else if (json_is_number(v))
        check_number(ck, n, v);
    if (!stop(ck))
        check_combinators(ck, n, v, an);
}

static int eval(struct checker *ck, const struct node *n, json_t *v, struct annot *an)
{
    struct check_ctx *x = ck->x;
    if (x->aborted)
        return 0;
    if (n->boolean == 1)
        return 1;
    size_t before = ck->found;
    if (n->boolean == 0) {
        char pv[PREVIEW_MAX];
        preview(ck, pv, sizeof(pv), v);
        report(ck, v, "no value is allowed here, got %s", pv);
        return 0;
    }
    if (x->depth >= MAX_EVAL_DEPTH) {
        abort_check(ck, v,
                    "the check recursed deeper than %d levels here (a value nested that deep, "
                    "or a schema that refers to itself without descending into the value)",
                    MAX_EVAL_DEPTH);
        return 0;
    }
    x->depth++;
    int pushed = 0;
    if (n->res && (!x->nscope || x->scope[x->nscope - 1] != n->res)) {
        if (ar_array_reserve(&x->scope, &x->capscope, x->nscope + 1, sizeof(*x->scope), 16) == 0) {
            x->scope[x->nscope++] = n->res;
            pushed = 1;
        }
    }
    struct annot local;
    memset(&local, 0, sizeof(local));
    int own = n->unevaluated_props || n->unevaluated_items;
    struct annot *use = own ? &local : an;
    check_node(ck, n, v, use);
    if (own && !stop(ck) && ck->found == before)
        check_unevaluated(ck, n, v, &local);
    else if (own && !stop(ck)) {
        /* the node failed already: report what is unevaluated too, for the repair */
        check_unevaluated(ck, n, v, &local);
    }
    int ok = ck->found == before && !x->aborted;
    if (own && ok)
        annot_merge(an, &local);
    annot_finish(&local);
    if (pushed)
        x->nscope--;
    x->depth--;
    return ok;
}

/* ---- the calls ------------------------------------------------------------------------- */

static int run_check(const struct ar_contract *c, const struct ar_json_doc *doc, json_t *value,
                     struct ar_violations *out)
{
    struct check_ctx x;
    memset(&x, 0, sizeof(x));
    x.c = c;
    x.doc = doc;
    ar_buf_init(&x.path, AR_BUF_UNLIMITED);
    struct checker ck = { out, 0, 0, &x };
    eval(&ck, c->root, value, NULL);
    /* Stopped anywhere (in a quiet branch too): the value fails, with that reason. */
    if (x.aborted) {
        ck.found++;
        if (out && ck.rc == 0)
            ck.rc = ar_violations_add(out, x.abort_path, x.abort_value, "%s", x.abort_msg);
    }
    json_decref(x.abort_value);
    free(x.scope);
    ar_buf_finish(&x.path);
    if (ck.rc)
        return ck.rc;
    return ck.found > INT32_MAX ? INT32_MAX : (int)ck.found;
}

int ar_contract_check(const struct ar_contract *c, json_t *value, struct ar_violations *out)
{
    return run_check(c, NULL, value, out);
}

int ar_contract_accepts(const struct ar_contract *c, json_t *value)
{
    return run_check(c, NULL, value, NULL) == 0;
}

int ar_contract_check_doc(const struct ar_contract *c, const struct ar_json_doc *doc,
                          struct ar_violations *out)
{
    return run_check(c, doc, doc->value, out);
}

int ar_contract_accepts_doc(const struct ar_contract *c, const struct ar_json_doc *doc)
{
    return run_check(c, doc, doc->value, NULL) == 0;
}

int ar_contract_accept_fn(const struct ar_json_doc *doc, void *arg)
{
    return ar_contract_accepts_doc(arg, doc);
}
