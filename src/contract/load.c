/*
 * Loading a contract: JSON Schema draft 2020-12 (and draft-07), checked keyword by
 * keyword and compiled once into a graph of nodes, so that checking a value never
 * re-reads the schema and never fails on it.
 *
 * 1. The root document is read with its number spellings kept (doc.h), so bounds,
 *    multipleOf, const and enum compare exactly as written.
 * 2. Every subschema under a keyword that holds schemas is compiled (the walk of
 *    the applicators): its $id makes a schema resource with a base URI, $anchor and
 *    $dynamicAnchor name it, patterns are compiled (pattern.h), and every keyword is
 *    checked. A keyword agentrun knows but cannot honour, or one of another dialect
 *    that would change the meaning, is refused here, by name.
 * 3. Every $ref and $dynamicRef is resolved to a node: inside the documents already
 *    read (by base URI and JSON Pointer or anchor), else in a document the caller
 *    registered (ar_contract_options.refs), an embedded metaschema, or a file beside
 *    the schema's own file. Never the network. A reference that stays unresolved is
 *    a load error.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "contract/internal.h"
#include "contract/metaschemas.h"
#include "util/array.h"
#include "util/file.h"
#include "util/json_dump.h"
#include "util/macros.h"

#define DEFAULT_BASE  "https://agentrun.invalid/schema.json"
#define MAX_DOC_BYTES (16u << 20)

static const struct {
    const char *name;
    unsigned bit;
} type_names[] = {
    { "array", T_ARRAY },   { "boolean", T_BOOLEAN }, { "integer", T_INTEGER }, { "null", T_NULL },
    { "number", T_NUMBER }, { "object", T_OBJECT },   { "string", T_STRING },
};

/* ---- the loader ---------------------------------------------------------------------- */

struct anchor {
    char *uri; /* absolute URI with the anchor as fragment */
    struct node *node;
};

struct loader {
    struct ar_contract *c;
    const struct ar_contract_options *o;
    struct ar_error *err;
    struct ar_buf path; /* JSON Pointer of the schema being compiled */
    /* json_t * -> node, open addressing */
    const json_t **keys;
    struct node **vals;
    size_t mapcap, mapn;
    struct anchor *anchors;
    size_t nanchors, capanchors;
    char *schema_dir; /* realpath of the schema file's directory, or NULL */
};

/* What compile() carries down the tree. */
struct scope {
    const char *base;              /* base URI */
    struct resource *res;          /* the resource being compiled */
    const struct ar_json_doc *doc; /* spellings */
    int draft7;
    int depth;
};

static const char *display_pointer(const char *p)
{
    return p[0] ? p : "(root)";
}

static const char *here(const struct loader *ld)
{
    return display_pointer(ar_buf_cstr(&ld->path));
}

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

static int oom(struct loader *ld)
{
    return ar_error_set(ld->err, AR_ENOMEM, NULL, "out of memory");
}

static size_t ptr_hash(const json_t *p, size_t cap)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 7) & (cap - 1);
}

static struct node *map_get(const struct loader *ld, const json_t *k)
{
    if (!ld->mapcap)
        return NULL;
    for (size_t i = ptr_hash(k, ld->mapcap);; i = (i + 1) & (ld->mapcap - 1)) {
        if (!ld->keys[i])
            return NULL;
        if (ld->keys[i] == k)
            return ld->vals[i];
    }
}

static int map_put(struct loader *ld, const json_t *k, struct node *v)
{
    if ((ld->mapn + 1) * 2 > ld->mapcap) {
        size_t cap = ld->mapcap ? ld->mapcap * 2 : 64;
        const json_t **keys = calloc(cap, sizeof(*keys));
        struct node **vals = calloc(cap, sizeof(*vals));
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return -1;
        }
        for (size_t i = 0; i < ld->mapcap; i++)
            if (ld->keys[i]) {
                size_t j = ptr_hash(ld->keys[i], cap);
                while (keys[j])
                    j = (j + 1) & (cap - 1);
                keys[j] = ld->keys[i];
                vals[j] = ld->vals[i];
            }
        free(ld->keys);
        free(ld->vals);
        ld->keys = keys;
        ld->vals = vals;
        ld->mapcap = cap;
    }
    size_t i = ptr_hash(k, ld->mapcap);
    while (ld->keys[i])
        i = (i + 1) & (ld->mapcap - 1);
    ld->keys[i] = k;
    ld->vals[i] = v;
    ld->mapn++;
    return 0;
}

static struct resource *resource_find(const struct ar_contract *c, const char *uri)
{
    for (struct resource *r = c->resources; r; r = r->next)
        if (strcmp(r->uri, uri) == 0)
            return r;
    return NULL;
}

static struct resource *resource_add(struct loader *ld, const char *uri, json_t *root)
{
    struct resource *r = resource_find(ld->c, uri);
    if (r)
        return r;
    r = calloc(1, sizeof(*r));
    if (!r || !(r->uri = strdup(uri))) {
        free(r);
        return NULL;
    }
    r->root = root;
    r->next = ld->c->resources;
    ld->c->resources = r;
    return r;
}

static struct node *anchor_find(const struct loader *ld, const char *uri)
{
    for (size_t i = 0; i < ld->nanchors; i++)
        if (strcmp(ld->anchors[i].uri, uri) == 0)
            return ld->anchors[i].node;
    return NULL;
}

static int anchor_add(struct loader *ld, const char *res_uri, const char *name, struct node *n)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_printf(&b, "%s#%s", res_uri, name);
    char *uri = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    if (!uri || ar_array_reserve(&ld->anchors, &ld->capanchors, ld->nanchors + 1,
                                 sizeof(*ld->anchors), 16) < 0) {
        free(uri);
        return oom(ld);
    }
    if (anchor_find(ld, uri)) {
        free(uri);
        return 0; /* the first one stands */
    }
    ld->anchors[ld->nanchors++] = (struct anchor){ uri, n };
    return 0;
}

/* ---- keyword helpers ------------------------------------------------------------------- */

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
        return load_error(ld, kw, "'%s' at %s must be a non-negative integer", kw, here(ld));
    double d = json_number_value(v);
    if (json_is_integer(v))
        *out = (size_t)json_integer_value(v);
    else
        *out = d >= (double)SIZE_MAX ? SIZE_MAX : (size_t)d;
    return 0;
}

static int compile(struct loader *ld, json_t *schema, const struct scope *sc, struct node **out);

/* Compiles the subschema `sub` at ld->path + "/seg" (+ "/seg2" when not NULL). */
static int compile_at(struct loader *ld, json_t *sub, const char *seg, const char *seg2,
                      const struct scope *sc, struct node **out)
{
    size_t saved = ld->path.len;
    int rc = ar_json_pointer_append(&ld->path, seg, strlen(seg));
    if (rc == 0 && seg2)
        rc = ar_json_pointer_append(&ld->path, seg2, strlen(seg2));
    if (rc)
        return oom(ld);
    struct scope down = *sc;
    down.depth++;
    rc = compile(ld, sub, &down, out);
    if (rc == 0) {
        ld->path.len = saved;
        ld->path.data[saved] = '\0';
    }
    return rc;
}

static int compile_list(struct loader *ld, const char *kw, json_t *v, const struct scope *sc,
                        struct node ***out, size_t *n, int allow_empty)
{
    if (!json_is_array(v) || (!allow_empty && json_array_size(v) == 0))
        return load_error(ld, kw, "'%s' at %s must be a non-empty array of schemas", kw, here(ld));
    *out = calloc(json_array_size(v) + 1, sizeof(**out));
    if (!*out)
        return oom(ld);
    for (size_t i = 0; i < json_array_size(v); i++) {
        char idx[24];
        snprintf(idx, sizeof(idx), "%zu", i);
        int rc = compile_at(ld, json_array_get(v, i), kw, idx, sc, &(*out)[i]);
        if (rc)
            return rc;
        (*n)++;
    }
    return 0;
}

static int compile_map(struct loader *ld, const char *kw, json_t *v, const struct scope *sc,
                       struct named_node **out, size_t *n)
{
    if (!json_is_object(v))
        return load_error(ld, kw, "'%s' at %s must be an object of schemas", kw, here(ld));
    *out = calloc(json_object_size(v) + 1, sizeof(**out));
    if (!*out)
        return oom(ld);
    const char *key;
    json_t *sub;
    json_object_foreach(v, key, sub)
    {
        struct named_node *p = &(*out)[*n];
        p->name = key;
        int rc = compile_at(ld, sub, kw, key, sc, &p->schema);
        if (rc)
            return rc;
        (*n)++;
    }
    return 0;
}

/* ---- keywords -------------------------------------------------------------------------- */

typedef int keyword_fn(struct loader *ld, struct node *n, const char *kw, json_t *v,
                       const struct scope *sc);

static int add_type(struct loader *ld, struct node *n, const char *kw, json_t *name)
{
    if (!json_is_string(name))
        return load_error(ld, kw, "'type' at %s must contain only type names", here(ld));
    for (size_t t = 0; t < AR_ARRAY_SIZE(type_names); t++)
        if (strcmp(type_names[t].name, json_string_value(name)) == 0) {
            n->types |= type_names[t].bit;
            return 0;
        }
    return load_error(ld, kw, "'type' at %s names unknown type '%s'", here(ld),
                      json_string_value(name));
}

static int kw_type(struct loader *ld, struct node *n, const char *kw, json_t *v,
                   const struct scope *sc)
{
    n->type_json = v;
    if (json_is_string(v))
        return add_type(ld, n, kw, v);
    if (!json_is_array(v) || json_array_size(v) == 0)
        return load_error(ld, kw, "'type' at %s must be a type name or a non-empty array of them",
                          here(ld));
    for (size_t i = 0; i < json_array_size(v); i++) {
        int rc = add_type(ld, n, kw, json_array_get(v, i));
        if (rc)
            return rc;
    }
    return 0;
}

static int kw_properties(struct loader *ld, struct node *n, const char *kw, json_t *v,
                         const struct scope *sc)
{
    return compile_map(ld, kw, v, sc, &n->props, &n->n_props);
}

static int string_array(struct loader *ld, const char *kw, json_t *v, const char *what)
{
    size_t i;
    json_t *name;
    if (!json_is_array(v))
        return load_error(ld, kw, "'%s' at %s must be an array of %s", kw, here(ld), what);
    json_array_foreach(v, i, name)
    {
        if (!json_is_string(name))
            return load_error(ld, kw, "'%s' at %s must contain only strings", kw, here(ld));
    }
    return 0;
}

static int kw_required(struct loader *ld, struct node *n, const char *kw, json_t *v,
                       const struct scope *sc)
{
    n->required = v;
    return string_array(ld, kw, v, "property names");
}

static int kw_dependent_required(struct loader *ld, struct node *n, const char *kw, json_t *v,
                                 const struct scope *sc)
{
    if (!json_is_object(v))
        return load_error(ld, kw, "'%s' at %s must be an object of arrays of property names", kw,
                          here(ld));
    const char *key;
    json_t *list;
    json_object_foreach(v, key, list)
    {
        int rc = string_array(ld, kw, list, "property names");
        if (rc)
            return rc;
    }
    n->dependent_required = v;
    return 0;
}

/* draft-07's dependencies: each entry an array (dependentRequired) or a schema
 * (dependentSchemas). Taken in 2020-12 too, where it means the same. */
static int kw_dependencies(struct loader *ld, struct node *n, const char *kw, json_t *v,
                           const struct scope *sc)
{
    if (!json_is_object(v))
        return load_error(ld, kw, "'%s' at %s must be an object", kw, here(ld));
    if (n->dependent_required || n->dep_schemas)
        return load_error(ld, kw,
                          "'dependencies' at %s beside 'dependentRequired' or "
                          "'dependentSchemas': write one of them",
                          here(ld));
    json_t *req = json_object(), *schemas = json_object();
    const char *key;
    json_t *e;
    int rc = req && schemas ? 0 : oom(ld);
    json_object_foreach(v, key, e)
    {
        if (rc)
            break;
        if (json_is_array(e))
            rc = string_array(ld, kw, e, "property names");
        if (rc == 0 && json_object_set(json_is_array(e) ? req : schemas, key, e) < 0)
            rc = oom(ld);
    }
    /* The compiled map borrows its keys: `schemas` lives as long as the node. */
    if (rc == 0 && json_object_size(schemas))
        rc = compile_map(ld, kw, schemas, sc, &n->dep_schemas, &n->n_dep_schemas);
    n->owned[0] = req;
    n->owned[1] = schemas;
    if (rc == 0 && json_object_size(req))
        n->dependent_required = req;
    return rc;
}

static int kw_additional(struct loader *ld, struct node *n, const char *kw, json_t *v,
                         const struct scope *sc)
{
    return compile_at(ld, v, kw, NULL, sc, &n->additional_props);
}

static int kw_one(struct loader *ld, struct node *n, const char *kw, json_t *v,
                  const struct scope *sc)
{
    static const struct {
        const char *kw;
        size_t off;
    } map[] = {
        { "contains", offsetof(struct node, contains) },
        { "else", offsetof(struct node, else_) },
        { "if", offsetof(struct node, if_) },
        { "not", offsetof(struct node, not_) },
        { "propertyNames", offsetof(struct node, property_names) },
        { "then", offsetof(struct node, then_) },
        { "unevaluatedItems", offsetof(struct node, unevaluated_items) },
        { "unevaluatedProperties", offsetof(struct node, unevaluated_props) },
    };
    for (size_t i = 0; i < AR_ARRAY_SIZE(map); i++)
        if (strcmp(map[i].kw, kw) == 0)
            return compile_at(ld, v, kw, NULL, sc, (struct node **)((char *)n + map[i].off));
    return 0;
}

static int kw_list(struct loader *ld, struct node *n, const char *kw, json_t *v,
                   const struct scope *sc)
{
    if (strcmp(kw, "allOf") == 0)
        return compile_list(ld, kw, v, sc, &n->all_of, &n->n_all_of, 0);
    if (strcmp(kw, "anyOf") == 0)
        return compile_list(ld, kw, v, sc, &n->any_of, &n->n_any_of, 0);
    if (strcmp(kw, "oneOf") == 0)
        return compile_list(ld, kw, v, sc, &n->one_of, &n->n_one_of, 0);
    return compile_list(ld, kw, v, sc, &n->prefix_items, &n->n_prefix_items, 0);
}

static int kw_items(struct loader *ld, struct node *n, const char *kw, json_t *v,
                    const struct scope *sc)
{
    /* The tuple form is draft-07's (2020-12 has prefixItems for it): it means the
     * same in either, so it is read as draft-07 wrote it, additionalItems with it. */
    if (json_is_array(v)) {
        if (n->n_prefix_items)
            return load_error(ld, kw, "'items' at %s is an array beside 'prefixItems'", here(ld));
        int rc = compile_list(ld, kw, v, sc, &n->prefix_items, &n->n_prefix_items, 1);
        json_t *more = json_object_get(n->json, "additionalItems");
        if (rc == 0 && more)
            rc = compile_at(ld, more, "additionalItems", NULL, sc, &n->items);
        return rc;
    }
    return compile_at(ld, v, kw, NULL, sc, &n->items);
}

static int kw_additional_items(struct loader *ld, struct node *n, const char *kw, json_t *v,
                               const struct scope *sc)
{
    /* Only beside an array 'items' (kw_items took it); alone it is an annotation in
     * 2020-12 and does nothing in draft-07. */
    return 0;
}

static int kw_map(struct loader *ld, struct node *n, const char *kw, json_t *v,
                  const struct scope *sc)
{
    if (strcmp(kw, "dependentSchemas") == 0)
        return compile_map(ld, kw, v, sc, &n->dep_schemas, &n->n_dep_schemas);
    /* $defs, definitions: compiled for their $id and anchors, applied only by $ref */
    struct named_node *defs = NULL;
    size_t ndefs = 0;
    int rc = compile_map(ld, kw, v, sc, &defs, &ndefs);
    free(defs);
    return rc;
}

static int kw_pattern_properties(struct loader *ld, struct node *n, const char *kw, json_t *v,
                                 const struct scope *sc)
{
    if (!json_is_object(v))
        return load_error(ld, kw, "'%s' at %s must be an object of schemas", kw, here(ld));
    n->pattern_props = calloc(json_object_size(v) + 1, sizeof(*n->pattern_props));
    if (!n->pattern_props)
        return oom(ld);
    const char *key;
    json_t *sub;
    json_object_foreach(v, key, sub)
    {
        struct pattern_node *p = &n->pattern_props[n->n_pattern_props];
        char why[256];
        p->src = key;
        if (ar_pattern_compile(key, strlen(key), &p->re, why, sizeof(why)) < 0)
            return load_error(ld, kw,
                              "'patternProperties' at %s: \"%s\" is not an ECMA-262 "
                              "pattern agentrun can match: %s",
                              here(ld), key, why);
        n->n_pattern_props++;
        int rc = compile_at(ld, sub, kw, key, sc, &p->schema);
        if (rc)
            return rc;
    }
    return 0;
}

static int kw_enum(struct loader *ld, struct node *n, const char *kw, json_t *v,
                   const struct scope *sc)
{
    if (!json_is_array(v))
        return load_error(ld, kw, "'enum' at %s must be an array", here(ld));
    n->enum_values = v;
    return 0;
}

static int kw_const(struct loader *ld, struct node *n, const char *kw, json_t *v,
                    const struct scope *sc)
{
    n->const_value = v;
    n->has_const = 1;
    return 0;
}

static int kw_number(struct loader *ld, struct node *n, const char *kw, json_t *v,
                     const struct scope *sc)
{
    static const char *const names[B_COUNT] = { "minimum", "maximum", "exclusiveMinimum",
                                                "exclusiveMaximum", "multipleOf" };
    for (int i = 0; i < B_COUNT; i++) {
        if (strcmp(names[i], kw) != 0)
            continue;
        if (json_is_boolean(v) && i >= B_XMIN && i <= B_XMAX)
            return load_error(ld, kw,
                              "'%s' at %s is a boolean, as draft-04 wrote it: since draft-06 it "
                              "is the bound itself (a number), and draft-04 is not a dialect "
                              "agentrun implements",
                              kw, here(ld));
        if (!json_is_number(v))
            return load_error(ld, kw, "'%s' at %s must be a number", kw, here(ld));
        n->has_bound |= 1u << i;
        n->bound[i].json = v;
        n->bound[i].doc = sc->doc;
        if (i == B_MULTIPLE) {
            char buf[40];
            size_t len;
            const char *t = ar_contract_number_text(sc->doc, v, buf, &len);
            if (json_number_value(v) <= 0 && !(t[0] != '-' && ar_number_digits(t, len) > 0))
                return load_error(ld, kw, "'multipleOf' at %s must be greater than 0", here(ld));
            if (t[0] == '-')
                return load_error(ld, kw, "'multipleOf' at %s must be greater than 0", here(ld));
            if (ar_number_digits(t, len) > 18)
                return load_error(ld, kw,
                                  "'multipleOf' at %s has more than 18 significant digits, "
                                  "which agentrun does not check exactly",
                                  here(ld));
        }
        return 0;
    }
    return 0;
}

static int kw_count(struct loader *ld, struct node *n, const char *kw, json_t *v,
                    const struct scope *sc)
{
    static const char *const names[C_COUNT] = { "minLength",   "maxLength",     "minItems",
                                                "maxItems",    "minProperties", "maxProperties",
                                                "minContains", "maxContains" };
    for (int i = 0; i < C_COUNT; i++)
        if (strcmp(names[i], kw) == 0) {
            n->has_count |= 1u << i;
            return get_count(ld, kw, v, &n->count[i]);
        }
    return 0;
}

static int kw_unique(struct loader *ld, struct node *n, const char *kw, json_t *v,
                     const struct scope *sc)
{
    if (!json_is_boolean(v))
        return load_error(ld, kw, "'uniqueItems' at %s must be a boolean", here(ld));
    n->unique_items = json_is_true(v);
    return 0;
}

static int kw_pattern(struct loader *ld, struct node *n, const char *kw, json_t *v,
                      const struct scope *sc)
{
    if (!json_is_string(v))
        return load_error(ld, kw, "'pattern' at %s must be a string", here(ld));
    char why[256];
    if (ar_pattern_compile(json_string_value(v), json_string_length(v), &n->pattern, why,
                           sizeof(why)) < 0)
        return load_error(ld, kw,
                          "'pattern' at %s is not an ECMA-262 pattern agentrun can match: %s",
                          here(ld), why);
    n->pattern_src = json_string_value(v);
    return 0;
}

static int kw_format(struct loader *ld, struct node *n, const char *kw, json_t *v,
                     const struct scope *sc)
{
    if (!json_is_string(v))
        return load_error(ld, kw, "'format' at %s must be a string", here(ld));
    n->format = json_string_value(v);
    return 0;
}

static int kw_ref(struct loader *ld, struct node *n, const char *kw, json_t *v,
                  const struct scope *sc)
{
    if (!json_is_string(v))
        return load_error(ld, kw, "'%s' at %s must be a string (a URI reference)", kw, here(ld));
    char *uri = ar_uri_resolve(sc->base, json_string_value(v));
    if (!uri)
        return oom(ld);
    if (strcmp(kw, "$ref") == 0)
        n->ref_uri = uri;
    else
        n->dyn_uri = uri;
    return 0;
}

static int kw_string(struct loader *ld, struct node *n, const char *kw, json_t *v,
                     const struct scope *sc)
{
    if (!json_is_string(v))
        return load_error(ld, kw, "'%s' at %s must be a string", kw, here(ld));
    return 0;
}

static int kw_refused(struct loader *ld, struct node *n, const char *kw, json_t *v,
                      const struct scope *sc)
{
    if (strcmp(kw, "$recursiveRef") == 0 || strcmp(kw, "$recursiveAnchor") == 0)
        return load_error(ld, kw,
                          "'%s' at %s is draft 2019-09's, a dialect agentrun does not implement: "
                          "write $dynamicRef and $dynamicAnchor (2020-12)",
                          kw, here(ld));
    return load_error(ld, kw, "'%s' at %s is not supported", kw, here(ld));
}

static int kw_vocabulary(struct loader *ld, struct node *n, const char *kw, json_t *v,
                         const struct scope *sc)
{
    if (!json_is_object(v))
        return load_error(ld, kw, "'$vocabulary' at %s must be an object", here(ld));
    return 0;
}

/* Sorted by name (a unit test checks). A NULL handler marks an annotation, or a
 * keyword compile() reads itself ($id, $schema, $anchor, $dynamicAnchor). */
static const struct {
    const char *name;
    keyword_fn *fn;
} keywords[] = {
    { "$anchor", NULL },
    { "$comment", kw_string },
    { "$defs", kw_map },
    { "$dynamicAnchor", NULL },
    { "$dynamicRef", kw_ref },
    { "$id", NULL },
    { "$recursiveAnchor", kw_refused },
    { "$recursiveRef", kw_refused },
    { "$ref", kw_ref },
    { "$schema", NULL },
    { "$vocabulary", kw_vocabulary },
    { "additionalItems", kw_additional_items },
    { "additionalProperties", kw_additional },
    { "allOf", kw_list },
    { "anyOf", kw_list },
    { "const", kw_const },
    { "contains", kw_one },
    { "contentEncoding", kw_string },
    { "contentMediaType", kw_string },
    { "contentSchema", NULL },
    { "default", NULL },
    { "definitions", kw_map },
    { "dependencies", kw_dependencies },
    { "dependentRequired", kw_dependent_required },
    { "dependentSchemas", kw_map },
    { "deprecated", NULL },
    { "description", NULL },
    { "else", kw_one },
    { "enum", kw_enum },
    { "examples", NULL },
    { "exclusiveMaximum", kw_number },
    { "exclusiveMinimum", kw_number },
    { "format", kw_format },
    { "if", kw_one },
    { "items", kw_items },
    { "maxContains", kw_count },
    { "maxItems", kw_count },
    { "maxLength", kw_count },
    { "maxProperties", kw_count },
    { "maximum", kw_number },
    { "minContains", kw_count },
    { "minItems", kw_count },
    { "minLength", kw_count },
    { "minProperties", kw_count },
    { "minimum", kw_number },
    { "multipleOf", kw_number },
    { "not", kw_one },
    { "oneOf", kw_list },
    { "pattern", kw_pattern },
    { "patternProperties", kw_pattern_properties },
    { "prefixItems", kw_list },
    { "properties", kw_properties },
    { "propertyNames", kw_one },
    { "readOnly", NULL },
    { "required", kw_required },
    { "then", kw_one },
    { "title", NULL },
    { "type", kw_type },
    { "unevaluatedItems", kw_one },
    { "unevaluatedProperties", kw_one },
    { "uniqueItems", kw_unique },
    { "writeOnly", NULL },
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

int ar_contract_keywords_sorted(void);
int ar_contract_keywords_sorted(void)
{
    for (size_t i = 1; i < AR_ARRAY_SIZE(keywords); i++)
        if (strcmp(keywords[i - 1].name, keywords[i].name) >= 0)
            return 0;
    return 1;
}

/* An unknown keyword is an annotation (2020-12), unless it is a known one misspelt
 * in its case ("maxlength"): that one would silently check nothing. */
static int unknown_keyword(struct loader *ld, const char *key)
{
    for (size_t k = 0; k < AR_ARRAY_SIZE(keywords); k++)
        if (strcasecmp(keywords[k].name, key) == 0)
            return load_error(ld, key, "unknown keyword '%s' at %s: did you mean '%s'?", key,
                              here(ld), keywords[k].name);
    return 0;
}

/* The dialect a $schema names: 0 for 2020-12, 1 for draft-07, -1 for another. */
static int dialect(const char *s)
{
    static const char *const d2020[] = { "https://json-schema.org/draft/2020-12/schema",
                                         "https://json-schema.org/draft/2020-12/schema#",
                                         "http://json-schema.org/draft/2020-12/schema",
                                         "http://json-schema.org/draft/2020-12/schema#" };
    static const char *const d07[] = { "http://json-schema.org/draft-07/schema#",
                                       "http://json-schema.org/draft-07/schema",
                                       "https://json-schema.org/draft-07/schema#",
                                       "https://json-schema.org/draft-07/schema" };
    for (size_t i = 0; i < AR_ARRAY_SIZE(d2020); i++)
        if (strcmp(s, d2020[i]) == 0)
            return 0;
    for (size_t i = 0; i < AR_ARRAY_SIZE(d07); i++)
        if (strcmp(s, d07[i]) == 0)
            return 1;
    return -1;
}

static int valid_anchor(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

/* $id, $anchor, $dynamicAnchor and $schema of an object schema: the scope its
 * keywords are compiled in. */
static int identify(struct loader *ld, struct node *n, json_t *schema, struct scope *sc,
                    char **base_owned)
{
    json_t *v = json_object_get(schema, "$schema");
    if (v) {
        if (!json_is_string(v))
            return load_error(ld, "$schema", "'$schema' at %s must be a string", here(ld));
        int d = dialect(json_string_value(v));
        if (d < 0)
            return load_error(ld, "$schema",
                              "'$schema' at %s names '%s', a dialect agentrun does not "
                              "implement: it implements JSON Schema draft 2020-12 "
                              "(https://json-schema.org/draft/2020-12/schema) and draft-07 "
                              "(http://json-schema.org/draft-07/schema#)",
                              here(ld), json_string_value(v));
        sc->draft7 = d;
    }
    v = json_object_get(schema, "$id");
    int id_is_anchor = 0;
    if (v) {
        if (!json_is_string(v))
            return load_error(ld, "$id", "'$id' at %s must be a string", here(ld));
        const char *id = json_string_value(v);
        const char *hash = strchr(id, '#');
        if (sc->draft7 && id[0] == '#') {
            id_is_anchor = 1;
        } else if (!(sc->draft7 && json_object_get(schema, "$ref"))) {
            if (hash && hash[1] && !sc->draft7)
                return load_error(ld, "$id",
                                  "'$id' at %s holds a fragment ('%s'): in 2020-12 name a "
                                  "subschema with $anchor",
                                  here(ld), hash);
            char *resolved = ar_uri_resolve(sc->base, id);
            char *abs = resolved ? ar_uri_split(resolved, NULL) : NULL;
            free(resolved);
            if (!abs)
                return oom(ld);
            *base_owned = abs;
            sc->base = abs;
            if (!(sc->res = resource_add(ld, abs, schema)))
                return oom(ld);
            if (hash && hash[1] && anchor_add(ld, abs, hash + 1, n) < 0)
                return AR_ENOMEM;
        }
    }
    n->res = sc->res;
    if (id_is_anchor) {
        const char *name = json_string_value(v) + 1;
        if (valid_anchor(name) && anchor_add(ld, sc->res->uri, name, n) < 0)
            return AR_ENOMEM;
    }
    for (int dyn = 0; dyn < 2; dyn++) {
        const char *kw = dyn ? "$dynamicAnchor" : "$anchor";
        v = json_object_get(schema, kw);
        if (!v)
            continue;
        if (!json_is_string(v) || !valid_anchor(json_string_value(v)))
            return load_error(ld, kw,
                              "'%s' at %s must be a name: a letter or '_', then letters, "
                              "digits, '-', '_' and '.'",
                              kw, here(ld));
        if (anchor_add(ld, sc->res->uri, json_string_value(v), n) < 0)
            return AR_ENOMEM;
        if (dyn) {
            struct resource *r = sc->res;
            if (ar_array_reserve(&r->dyn_anchors, &r->cap_dyn_anchors, r->n_dyn_anchors + 1,
                                 sizeof(*r->dyn_anchors), 4) < 0)
                return oom(ld);
            r->dyn_anchors[r->n_dyn_anchors++] = (struct named_node){ json_string_value(v), n };
        }
    }
    return 0;
}

static int compile(struct loader *ld, json_t *schema, const struct scope *sc_in, struct node **out)
{
    struct node *seen = map_get(ld, schema);
    if (seen) {
        *out = seen;
        return 0;
    }
    if (sc_in->depth > AR_CONTRACT_MAX_DEPTH)
        return load_error(ld, NULL, "schema nests deeper than %d levels", AR_CONTRACT_MAX_DEPTH);
    if (!json_is_object(schema) && !json_is_boolean(schema))
        return load_error(ld, NULL, "schema at %s must be an object or a boolean, not %s", here(ld),
                          ar_json_type_name(schema));
    struct node *n = calloc(1, sizeof(*n));
    if (!n)
        return oom(ld);
    n->next_alloc = ld->c->nodes;
    ld->c->nodes = n;
    *out = n;
    n->json = schema;
    n->doc = sc_in->doc;
    n->res = sc_in->res;
    n->draft7 = sc_in->draft7;
    if (map_put(ld, schema, n) < 0 || !(n->pointer = strdup(ar_buf_cstr(&ld->path))))
        return oom(ld);
    n->boolean = json_is_boolean(schema) ? json_is_true(schema) : -1;
    if (n->boolean >= 0)
        return 0;
    struct scope sc = *sc_in;
    char *base_owned = NULL;
    int rc = identify(ld, n, schema, &sc, &base_owned);
    n->draft7 = sc.draft7;
    /* draft-07: a $ref stands alone, its siblings are ignored (but $id and the
     * definitions they hold can still be named). */
    int ref_alone = sc.draft7 && json_object_get(schema, "$ref");
    const char *key;
    json_t *v;
    json_object_foreach(schema, key, v)
    {
        if (rc)
            break;
        int k = find_keyword(key);
        if (k < 0) {
            rc = unknown_keyword(ld, key);
            continue;
        }
        if (ref_alone && strcmp(key, "$ref") != 0 && strcmp(key, "definitions") != 0 &&
            strcmp(key, "$defs") != 0)
            continue;
        if (keywords[k].fn)
            rc = keywords[k].fn(ld, n, key, v, &sc);
    }
    free(base_owned);
    return rc;
}

/* ---- documents and references ---------------------------------------------------------- */

static struct schema_doc *doc_new(struct loader *ld, const char *uri)
{
    struct schema_doc *d = calloc(1, sizeof(*d));
    if (!d || !(d->uri = strdup(uri))) {
        free(d);
        return NULL;
    }
    d->next = ld->c->docs;
    ld->c->docs = d;
    return d;
}

/* Reads JSON text with its spellings; duplicate keys are refused. */
static int doc_parse(struct loader *ld, struct schema_doc *d, const char *text, size_t len,
                     const char *name)
{
    struct ar_error e = AR_ERROR_INIT;
    if (ar_json_doc_parse(&d->doc, text, len, &e) < 0) {
        if (e.code == AR_ENOMEM)
            return oom(ld);
        json_error_t jerr;
        json_t *j = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
        json_decref(j);
        if (!j)
            return ar_error_set(ld->err, AR_EUSAGE, NULL, "%sinvalid JSON at line %d column %d: %s",
                                name ? name : "", jerr.line, jerr.column, jerr.text);
        return ar_error_set(ld->err, AR_EUSAGE, NULL, "%sinvalid JSON: %s", name ? name : "",
                            e.msg);
    }
    json_error_t jerr;
    json_t *j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!j && strstr(jerr.text, "duplicate"))
        return ar_error_set(ld->err, AR_EUSAGE, NULL, "%sinvalid JSON at line %d column %d: %s",
                            name ? name : "", jerr.line, jerr.column, jerr.text);
    json_decref(j);
    d->root = d->doc.value;
    return 0;
}

/* Compiles a whole document found at `uri` (its retrieval URI). */
static int compile_doc(struct loader *ld, struct schema_doc *d, int draft7, struct node **out)
{
    struct scope sc = { d->uri, NULL, d->doc.value ? &d->doc : NULL, draft7, 0 };
    if (!(sc.res = resource_add(ld, d->uri, d->root)))
        return oom(ld);
    ar_buf_reset(&ld->path);
    struct node *n;
    int rc = compile(ld, d->root, &sc, &n);
    if (out)
        *out = n;
    return rc;
}

static int file_uri(const char *path, char **out)
{
    char *real = realpath(path, NULL);
    if (!real)
        return -1;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_puts(&b, "file://");
    ar_buf_puts(&b, real);
    free(real);
    *out = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    return *out ? 0 : -1;
}

/* Reads the file `path` as the document at `uri`. */
static int load_file(struct loader *ld, const char *path, const char *uri, struct schema_doc **out)
{
    struct ar_buf b;
    struct ar_error e = AR_ERROR_INIT;
    ar_buf_init(&b, MAX_DOC_BYTES);
    int rc = ar_file_read(path, &b, &e);
    if (rc < 0) {
        ar_buf_finish(&b);
        return ar_error_set(ld->err, rc == AR_ENOMEM ? AR_ENOMEM : AR_EUSAGE, NULL, "%s", e.msg);
    }
    struct schema_doc *d = doc_new(ld, uri);
    char name[300];
    snprintf(name, sizeof(name), "'%s': ", path);
    rc = d ? doc_parse(ld, d, ar_buf_cstr(&b), b.len, name) : oom(ld);
    ar_buf_finish(&b);
    if (rc == 0)
        rc = compile_doc(ld, d, ld->c->draft7, NULL);
    if (out)
        *out = d;
    return rc;
}

/* A document named by an absolute URI: the caller's, a metaschema, or a file beside the
 * schema. 0 when found and compiled, 1 when none is known, < 0 on error. */
static int load_external(struct loader *ld, const char *uri)
{
    const struct ar_contract_options *o = ld->o;
    for (size_t i = 0; o && i < o->nrefs; i++) {
        const char *eq = strchr(o->refs[i], '=');
        if (!eq)
            continue;
        size_t plen = (size_t)(eq - o->refs[i]);
        const char *path = eq + 1;
        if (plen && o->refs[i][plen - 1] == '/' && strncmp(uri, o->refs[i], plen) == 0) {
            struct ar_buf p;
            ar_buf_init(&p, AR_BUF_UNLIMITED);
            ar_buf_printf(&p, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", uri + plen);
            int rc = ar_is_file(ar_buf_cstr(&p)) ? load_file(ld, ar_buf_cstr(&p), uri, NULL) : 1;
            ar_buf_finish(&p);
            if (rc <= 0)
                return rc;
        } else if (strlen(uri) == plen && strncmp(uri, o->refs[i], plen) == 0) {
            return load_file(ld, path, uri, NULL);
        }
    }
    const char *text = ar_metaschema_text(uri);
    if (text) {
        struct schema_doc *d = doc_new(ld, uri);
        int rc = d ? doc_parse(ld, d, text, strlen(text), NULL) : oom(ld);
        return rc ? rc : compile_doc(ld, d, 0, NULL);
    }
    if (ld->schema_dir && strncmp(uri, "file://", 7) == 0) {
        const char *path = uri + 7;
        char *real = realpath(path, NULL);
        size_t dl = strlen(ld->schema_dir);
        int inside = real && strncmp(real, ld->schema_dir, dl) == 0 && real[dl] == '/';
        free(real);
        if (inside)
            return load_file(ld, path, uri, NULL);
    }
    return 1;
}

/* "a%25b~1c" of a fragment to the token "a%b/c" ... decoded in place. */
static void percent_decode(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        int h1, h2;
        if (r[0] == '%' && r[1] && r[2] &&
            (h1 = (r[1] >= 'a'   ? r[1] - 'a' + 10
                   : r[1] >= 'A' ? r[1] - 'A' + 10
                                 : r[1] - '0')) >= 0 &&
            h1 < 16 &&
            (h2 = (r[2] >= 'a'   ? r[2] - 'a' + 10
                   : r[2] >= 'A' ? r[2] - 'A' + 10
                                 : r[2] - '0')) >= 0 &&
            h2 < 16) {
            *w++ = (char)(h1 * 16 + h2);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* The value at JSON Pointer `ptr` (decoded) under root, or NULL. */
static json_t *pointer_get(json_t *root, const char *ptr, struct ar_buf *walked)
{
    json_t *v = root;
    const char *p = ptr;
    while (*p == '/' && v) {
        p++;
        size_t n = strcspn(p, "/");
        char *tok = malloc(n + 1);
        if (!tok)
            return NULL;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
                tok[k++] = p[i + 1] == '0' ? '~' : '/';
                i++;
            } else {
                tok[k++] = p[i];
            }
        }
        tok[k] = '\0';
        ar_json_pointer_append(walked, tok, k);
        if (json_is_object(v)) {
            v = json_object_get(v, tok);
        } else if (json_is_array(v)) {
            char *end;
            unsigned long idx = strtoul(tok, &end, 10);
            v = *end || !k || (tok[0] == '0' && k > 1) ? NULL : json_array_get(v, idx);
        } else {
            v = NULL;
        }
        free(tok);
        p += n;
    }
    return *p ? NULL : v;
}

/* The node a reference names, compiling what it names when nothing compiled it yet. */
static int resolve(struct loader *ld, const struct node *from, const char *kw, const char *uri,
                   struct node **out)
{
    const char *frag;
    char *abs = ar_uri_split(uri, &frag);
    if (!abs)
        return oom(ld);
    struct resource *r = resource_find(ld->c, abs);
    int rc = 0;
    if (!r) {
        rc = load_external(ld, abs);
        if (rc < 0) {
            free(abs);
            return rc;
        }
        r = resource_find(ld->c, abs);
    }
    if (!r) {
        ar_buf_reset(&ld->path);
        ar_buf_puts(&ld->path, from->pointer);
        rc = load_error(ld, kw,
                        "'%s' at %s names '%s', a document agentrun does not have: it never "
                        "fetches schemas; register it (extract --schema-ref URI=FILE, or a file "
                        "beside the schema's own file)",
                        kw, here(ld), abs);
        free(abs);
        return rc;
    }
    free(abs);
    struct node *n = NULL;
    if (!frag || !frag[0] || frag[0] == '/') {
        char *ptr = strdup(frag ? frag : "");
        if (!ptr)
            return oom(ld);
        percent_decode(ptr);
        struct ar_buf walked;
        ar_buf_init(&walked, AR_BUF_UNLIMITED);
        json_t *target = pointer_get(r->root, ptr, &walked);
        free(ptr);
        if (target)
            n = map_get(ld, target);
        if (target && !n) {
            /* Reached through a place no keyword compiled (an unknown keyword): compile it
             * there now, in its resource. */
            struct node *rn = map_get(ld, r->root);
            struct scope sc = { r->uri, r, rn ? rn->doc : NULL, rn ? rn->draft7 : 0, 1 };
            ar_buf_reset(&ld->path);
            ar_buf_append(&ld->path, walked.data ? walked.data : "", walked.len);
            rc = compile(ld, target, &sc, &n);
        }
        ar_buf_finish(&walked);
        if (rc)
            return rc;
    } else {
        n = anchor_find(ld, uri);
    }
    if (!n) {
        ar_buf_reset(&ld->path);
        ar_buf_puts(&ld->path, from->pointer);
        return load_error(ld, kw, "'%s' at %s names '%s', which is not a schema in its document",
                          kw, here(ld), uri);
    }
    *out = n;
    return 0;
}

/* Resolves every reference; compiling what they name may add nodes, which are
 * resolved in turn (they are put at the list's head, so the walk restarts). */
static int resolve_all(struct loader *ld)
{
    int again = 1;
    while (again) {
        again = 0;
        for (struct node *n = ld->c->nodes; n; n = n->next_alloc) {
            struct node *head = ld->c->nodes;
            int rc = 0;
            if (n->ref_uri && !n->ref)
                rc = resolve(ld, n, "$ref", n->ref_uri, &n->ref);
            if (rc == 0 && n->dyn_uri && !n->dyn_ref) {
                rc = resolve(ld, n, "$dynamicRef", n->dyn_uri, &n->dyn_ref);
                /* Dynamic only when the fragment is an anchor the target declares dynamic
                 * (the "bookend"); otherwise a plain $ref. */
                const char *frag = strchr(n->dyn_uri, '#');
                if (rc == 0 && frag && frag[1] && frag[1] != '/' && n->dyn_ref->res) {
                    const struct resource *r = n->dyn_ref->res;
                    for (size_t i = 0; i < r->n_dyn_anchors; i++)
                        if (strcmp(r->dyn_anchors[i].name, frag + 1) == 0 &&
                            r->dyn_anchors[i].schema == n->dyn_ref)
                            n->dyn_name = r->dyn_anchors[i].name;
                }
            }
            if (rc)
                return rc;
            if (ld->c->nodes != head) {
                again = 1;
                break;
            }
        }
    }
    return 0;
}

/* Whether each node must collect what its in-place subschemas evaluated: a node
 * with unevaluated* does, and so does every node it applies in place, transitively
 * (through references too). Iterated to a fixed point. */
static void mark_annotations(struct ar_contract *c)
{
    for (struct node *n = c->nodes; n; n = n->next_alloc)
        n->needs_annotations = n->unevaluated_items || n->unevaluated_props;
    int changed = 1;
    while (changed) {
        changed = 0;
        for (struct node *n = c->nodes; n; n = n->next_alloc) {
            if (!n->needs_annotations)
                continue;
            struct node *in_place[8] = { n->ref, n->dyn_ref, n->if_, n->then_, n->else_ };
            size_t k = 5;
            for (size_t i = 0; i < k; i++)
                if (in_place[i] && !in_place[i]->needs_annotations)
                    in_place[i]->needs_annotations = changed = 1;
            struct node **lists[] = { n->all_of, n->any_of, n->one_of };
            size_t counts[] = { n->n_all_of, n->n_any_of, n->n_one_of };
            for (size_t l = 0; l < 3; l++)
                for (size_t i = 0; i < counts[l]; i++)
                    if (!lists[l][i]->needs_annotations)
                        lists[l][i]->needs_annotations = changed = 1;
            for (size_t i = 0; i < n->n_dep_schemas; i++)
                if (!n->dep_schemas[i].schema->needs_annotations)
                    n->dep_schemas[i].schema->needs_annotations = changed = 1;
        }
    }
    /* Dynamic references may land on any dynamic anchor of their name. */
    for (struct node *n = c->nodes; n; n = n->next_alloc)
        if (n->dyn_name && n->needs_annotations)
            for (struct resource *r = c->resources; r; r = r->next)
                for (size_t i = 0; i < r->n_dyn_anchors; i++)
                    if (strcmp(r->dyn_anchors[i].name, n->dyn_name) == 0)
                        r->dyn_anchors[i].schema->needs_annotations = 1;
}

/* ---- the public calls ------------------------------------------------------------------ */

void ar_contract_destroy(struct ar_contract *c)
{
    if (!c)
        return;
    for (struct node *n = c->nodes, *next; n; n = next) {
        next = n->next_alloc;
        ar_pattern_destroy(n->pattern);
        for (size_t i = 0; i < n->n_pattern_props; i++)
            ar_pattern_destroy(n->pattern_props[i].re);
        json_decref(n->owned[0]);
        json_decref(n->owned[1]);
        free(n->pattern_props);
        free(n->props);
        free(n->dep_schemas);
        free(n->all_of);
        free(n->any_of);
        free(n->one_of);
        free(n->prefix_items);
        free(n->ref_uri);
        free(n->dyn_uri);
        free(n->pointer);
        free(n);
    }
    for (struct resource *r = c->resources, *next; r; r = next) {
        next = r->next;
        free(r->uri);
        free(r->dyn_anchors);
        free(r);
    }
    for (struct schema_doc *d = c->docs, *next; d; d = next) {
        next = d->next;
        if (!d->doc.value)
            json_decref(d->root);
        ar_json_doc_finish(&d->doc);
        free(d->uri);
        free(d);
    }
    json_decref(c->schema);
    free(c->text);
    free(c);
}

void ar_contract_options_init(struct ar_contract_options *o)
{
    memset(o, 0, sizeof(*o));
}

static void loader_finish(struct loader *ld)
{
    ar_buf_finish(&ld->path);
    free(ld->keys);
    free(ld->vals);
    for (size_t i = 0; i < ld->nanchors; i++)
        free(ld->anchors[i].uri);
    free(ld->anchors);
    free(ld->schema_dir);
}

/* Documents registered by file alone: read now, so their $id names them. */
static int preload(struct loader *ld)
{
    const struct ar_contract_options *o = ld->o;
    for (size_t i = 0; o && i < o->nrefs; i++) {
        if (strchr(o->refs[i], '='))
            continue;
        char *uri;
        if (file_uri(o->refs[i], &uri) < 0)
            return ar_error_set(ld->err, AR_EUSAGE, NULL, "cannot read '%s': %s", o->refs[i],
                                strerror(errno));
        int rc = load_file(ld, o->refs[i], uri, NULL);
        free(uri);
        if (rc)
            return rc;
    }
    return 0;
}

/* Loads the root document d (already parsed) and everything it references. */
static int load_root(struct loader *ld, struct schema_doc *d)
{
    json_t *sv = json_is_object(d->root) ? json_object_get(d->root, "$schema") : NULL;
    if (sv && json_is_string(sv) && dialect(json_string_value(sv)) == 1)
        ld->c->draft7 = 1;
    int rc = preload(ld);
    if (rc == 0)
        rc = compile_doc(ld, d, ld->c->draft7, &ld->c->root);
    if (rc == 0)
        rc = resolve_all(ld);
    if (rc == 0)
        mark_annotations(ld->c);
    return rc;
}

static int loader_init(struct loader *ld, struct ar_contract **out,
                       const struct ar_contract_options *o, struct ar_error *err)
{
    memset(ld, 0, sizeof(*ld));
    *out = NULL;
    ld->o = o;
    ld->err = err;
    ar_buf_init(&ld->path, AR_BUF_UNLIMITED);
    ld->c = calloc(1, sizeof(*ld->c));
    if (!ld->c)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    ld->c->flags = o ? o->flags : 0;
    return 0;
}

static int finish(struct loader *ld, int rc, struct ar_contract **out)
{
    if (rc) {
        ar_contract_destroy(ld->c);
    } else {
        ld->c->schema = json_incref(ld->c->root->json);
        *out = ld->c;
    }
    loader_finish(ld);
    return rc;
}

int ar_contract_load(const char *text, size_t len, const struct ar_contract_options *o,
                     struct ar_contract **out, struct ar_error *err)
{
    struct loader ld;
    int rc = loader_init(&ld, out, o, err);
    if (rc)
        return rc;
    char *uri = NULL;
    if (o && o->path) {
        if (file_uri(o->path, &uri) < 0) {
            rc = ar_error_set(err, AR_EUSAGE, NULL, "cannot read '%s': %s", o->path,
                              strerror(errno));
            return finish(&ld, rc, out);
        }
        ld.schema_dir = strdup(uri + 7);
        char *slash = ld.schema_dir ? strrchr(ld.schema_dir, '/') : NULL;
        if (slash)
            *slash = '\0';
    }
    struct schema_doc *d = doc_new(&ld, uri ? uri : DEFAULT_BASE);
    free(uri);
    rc = d ? doc_parse(&ld, d, text, len, NULL) : oom(&ld);
    if (rc == 0)
        rc = load_root(&ld, d);
    return finish(&ld, rc, out);
}

int ar_contract_parse(const char *text, size_t len, struct ar_contract **out, struct ar_error *err)
{
    return ar_contract_load(text, len, NULL, out, err);
}

int ar_contract_from_json(json_t *schema, struct ar_contract **out, struct ar_error *err)
{
    struct loader ld;
    int rc = loader_init(&ld, out, NULL, err);
    if (rc)
        return rc;
    struct schema_doc *d = doc_new(&ld, DEFAULT_BASE);
    if (!d)
        return finish(&ld, oom(&ld), out);
    d->root = json_incref(schema);
    rc = load_root(&ld, d);
    /* No spelling to keep: each number as the shortest decimal that is its double. */
    if (rc == 0) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        if (ar_json_dump_compact(schema, &b) < 0 || !(ld.c->text = ar_buf_detach(&b, NULL)))
            rc = oom(&ld);
        ar_buf_finish(&b);
    }
    return finish(&ld, rc, out);
}

json_t *ar_contract_schema_json(const struct ar_contract *c)
{
    return c->schema;
}

const char *ar_contract_schema_text(const struct ar_contract *c, size_t *len)
{
    const struct schema_doc *d = c->docs;
    while (d && d->root != c->schema)
        d = d->next;
    const char *t = d && d->doc.text ? d->doc.text : c->text;
    if (len)
        *len = d && d->doc.text ? d->doc.len : strlen(c->text);
    return t;
}
