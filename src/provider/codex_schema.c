/*
 * codex's structured output: the contract rewritten for OpenAI's strict mode
 * (--output-schema), and the answer's forced nulls taken out again.
 */
#include <string.h>

#include <jansson.h>

#include "provider/codex_schema.h"
#include "provider/common.h"
#include "util/json_dump.h"

/* Keywords OpenAI's strict structured outputs accept; everything else is dropped. */
static const char *const strict_keywords[] = {
    "$defs",
    "$ref",
    "additionalProperties",
    "anyOf",
    "const",
    "definitions",
    "description",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "items",
    "maxItems",
    "maximum",
    "minItems",
    "minimum",
    "multipleOf",
    "pattern",
    "properties",
    "required",
    "title",
    "type",
    NULL,
};

static int in_list(const char *const *list, const char *k);

static int is_strict_keyword(const char *k)
{
    return in_list(strict_keywords, k);
}

/* The formats strict mode checks; another format is left out (it is an annotation). */
static const char *const strict_formats[] = { "date-time", "time", "date", "duration", "email",
                                              "hostname",  "ipv4", "ipv6", "uuid",     NULL };

/* Keywords that assert and that the strict copy leaves out: the copy then accepts more
 * than the contract, and the prompt must still state the contract. */
static const char *const lost_assertions[] = {
    "contains",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "else",
    "if",
    "maxContains",
    "maxLength",
    "maxProperties",
    "minContains",
    "minLength",
    "minProperties",
    "not",
    "oneOf",
    "prefixItems",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "uniqueItems",
    NULL,
};

static int in_list(const char *const *list, const char *k)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(list[i], k) == 0)
            return 1;
    return 0;
}

/*
 * Whether strict mode can carry the contract at all, and whether the copy says all of it
 * (*lossless). A map of names the contract leaves open (additionalProperties or
 * unevaluatedProperties with a schema, patternProperties) would become an empty object
 * under strict mode's additionalProperties false, and allOf's properties would be lost:
 * the model could not give the answer, so such a contract gets no strict copy. Nor does
 * one whose references strict mode cannot follow (an anchor, another document,
 * $dynamicRef). Keyword values that are data (const, enum, default, examples) are not
 * walked.
 */
static int expressible(const json_t *s, int depth, int *lossless)
{
    if (!json_is_object(s) || depth > 64)
        return 1;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v)
    {
        if (!strcmp(k, "const") || !strcmp(k, "enum") || !strcmp(k, "default") ||
            !strcmp(k, "examples"))
            continue;
        if (!strcmp(k, "patternProperties") || !strcmp(k, "allOf") || !strcmp(k, "$dynamicRef") ||
            ((!strcmp(k, "additionalProperties") || !strcmp(k, "unevaluatedProperties")) &&
             json_is_object(v)))
            return 0;
        if (!strcmp(k, "$ref")) {
            const char *r = json_string_value(v);
            if (!r || r[0] != '#' || (r[1] && r[1] != '/'))
                return 0;
        }
        if (in_list(lost_assertions, k))
            *lossless = 0;
        if (!strcmp(k, "format") && json_is_string(v) &&
            !in_list(strict_formats, json_string_value(v)))
            continue;
        if (!strcmp(k, "properties") || !strcmp(k, "$defs") || !strcmp(k, "definitions") ||
            !strcmp(k, "dependentSchemas")) {
            const char *pk;
            json_t *pv;
            json_object_foreach(v, pk, pv) if (!expressible(pv, depth + 1, lossless)) return 0;
        } else if (json_is_array(v)) {
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) if (!expressible(e, depth + 1, lossless)) return 0;
        } else if (json_is_object(v) && !expressible(v, depth + 1, lossless)) {
            return 0;
        }
    }
    return 1;
}

static json_t *sanitize(const json_t *s, int depth);

/*
 * Strict mode wants a `type` beside a `const` or `enum` (issue 46: a `const` without one is
 * refused). The values say which types they are: one type becomes "type": T, several a union
 * (integer folds into number when both occur).
 */
static void add_type_from_values(json_t *out)
{
    if (json_object_get(out, "type"))
        return;
    json_t *types = json_array();
    const json_t *c = json_object_get(out, "const");
    const json_t *en = json_object_get(out, "enum");
    json_t *vals = json_array();
    if (c)
        json_array_append(vals, (json_t *)c);
    size_t i;
    json_t *v;
    json_array_foreach(en, i, v) json_array_append(vals, v);
    int has_number = 0;
    json_array_foreach(vals, i, v) has_number |= json_is_real(v);
    json_array_foreach(vals, i, v)
    {
        const char *t = json_is_integer(v) && has_number ? "number" : ar_json_type_name(v);
        size_t j;
        json_t *have;
        int seen = 0;
        json_array_foreach(types, j, have) seen |= !strcmp(json_string_value(have), t);
        if (!seen)
            json_array_append_new(types, json_string(t));
    }
    json_decref(vals);
    if (json_array_size(types) == 1)
        json_object_set(out, "type", json_array_get(types, 0));
    else if (json_array_size(types) > 1)
        json_object_set(out, "type", types);
    json_decref(types);
}

/* An optional property must still be listed in `required`: it may be null instead. */
static json_t *make_nullable(json_t *s)
{
    /* A const allows one value: as an enum it can take null beside it. */
    json_t *c = json_object_get(s, "const");
    if (c && !json_object_get(s, "enum")) {
        json_object_set_new(s, "enum", json_pack("[O]", c));
        json_object_del(s, "const");
    }
    json_t *type = json_object_get(s, "type");
    if (json_is_string(type)) {
        if (strcmp(json_string_value(type), "null") != 0)
            json_object_set_new(s, "type", json_pack("[s,s]", json_string_value(type), "null"));
    } else if (json_is_array(type)) {
        size_t i;
        json_t *t;
        int has_null = 0;
        json_array_foreach(type, i, t) has_null |=
            json_is_string(t) && !strcmp(json_string_value(t), "null");
        if (!has_null)
            json_array_append_new(type, json_string("null"));
    } else {
        return json_pack("{s:[o,{s:s}]}", "anyOf", s, "type", "null");
    }
    json_t *en = json_object_get(s, "enum");
    if (json_is_array(en)) {
        size_t i;
        json_t *v;
        int has_null = 0;
        json_array_foreach(en, i, v) has_null |= json_is_null(v);
        if (!has_null)
            json_array_append_new(en, json_null());
    }
    return s;
}

static json_t *sanitize_object(const json_t *s, json_t *out, int depth)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *req = json_object_get(s, "required");
    json_t *nprops = json_object();
    json_t *nreq = json_array();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)props, key, v)
    {
        int required = 0;
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r) required |=
            json_is_string(r) && !strcmp(json_string_value(r), key);
        json_t *ns = sanitize(v, depth + 1);
        if (!required)
            ns = make_nullable(ns);
        json_object_set_new(nprops, key, ns);
        json_array_append_new(nreq, json_string(key));
    }
    json_object_set_new(out, "properties", nprops);
    json_object_set_new(out, "required", nreq);
    json_object_set_new(out, "additionalProperties", json_false());
    return out;
}

static json_t *sanitize(const json_t *s, int depth)
{
    if (!json_is_object(s) || depth > 64)
        return json_object();
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)s, key, v)
    {
        if (!strcmp(key, "oneOf")) /* strict mode knows anyOf only */
            key = "anyOf";
        if (!is_strict_keyword(key) || !strcmp(key, "properties") || !strcmp(key, "required") ||
            !strcmp(key, "additionalProperties"))
            continue;
        if (!strcmp(key, "format") &&
            !(json_is_string(v) && in_list(strict_formats, json_string_value(v))))
            continue;
        if (!strcmp(key, "items")) {
            json_object_set_new(out, key, sanitize(v, depth + 1));
        } else if (!strcmp(key, "anyOf") && json_is_array(v)) {
            json_t *arr = json_array();
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) json_array_append_new(arr, sanitize(e, depth + 1));
            json_object_set_new(out, key, arr);
        } else if ((!strcmp(key, "$defs") || !strcmp(key, "definitions")) && json_is_object(v)) {
            json_t *defs = json_object();
            const char *dk;
            json_t *dv;
            json_object_foreach(v, dk, dv) json_object_set_new(defs, dk, sanitize(dv, depth + 1));
            json_object_set_new(out, key, defs);
        } else {
            json_object_set(out, key, v);
        }
    }
    add_type_from_values(out);
    const json_t *type = json_object_get(s, "type");
    int is_object = json_object_get(s, "properties") != NULL ||
                    (json_is_string(type) && !strcmp(json_string_value(type), "object"));
    if (json_is_array(type)) {
        size_t i;
        json_t *t;
        json_array_foreach(type, i, t) is_object |=
            json_is_string(t) && !strcmp(json_string_value(t), "object");
    }
    if (is_object)
        sanitize_object(s, out, depth);
    return out;
}

char *ar_codex_strict_schema(const char *schema)
{
    json_t *s = json_loads(schema, 0, NULL);
    /* The Responses API wants an object at the root; anything else, a union that may
     * be an array included, gets no native schema. */
    int lossless = 1;
    if (!ar_pv_object_schema(s) || !expressible(s, 0, &lossless)) {
        json_decref(s);
        return NULL;
    }
    json_t *out = sanitize(s, 0);
    json_decref(s);
    char *text = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(out);
    return text;
}

static int allows_null(const json_t *schema)
{
    const json_t *type = json_object_get(schema, "type");
    if (json_is_string(type))
        return !strcmp(json_string_value(type), "null");
    size_t i;
    const json_t *t;
    json_array_foreach(type, i,
                       t) if (json_is_string(t) && !strcmp(json_string_value(t), "null")) return 1;
    return !type; /* no type: anything, null included */
}

static int is_required(const json_t *schema, const char *key)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(schema, "required"), i,
                       r) if (json_is_string(r) && !strcmp(json_string_value(r), key)) return 1;
    return 0;
}

/* Drops the nulls strict mode made the model write for optional properties. Returns how many. */
static int prune_nulls(json_t *v, const json_t *schema, int depth)
{
    if (!json_is_object(schema) || depth > 64)
        return 0;
    int n = 0;
    if (json_is_object(v)) {
        const json_t *props = json_object_get(schema, "properties");
        const char *key;
        json_t *child;
        void *tmp;
        json_object_foreach_safe(v, tmp, key, child)
        {
            const json_t *ps = json_object_get(props, key);
            if (!ps)
                continue;
            if (json_is_null(child) && !is_required(schema, key) && !allows_null(ps)) {
                json_object_del(v, key);
                n++;
            } else {
                n += prune_nulls(child, ps, depth + 1);
            }
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) n +=
            prune_nulls(e, json_object_get(schema, "items"), depth + 1);
    }
    return n;
}

char *ar_codex_unstrict(const char *text, const char *schema)
{
    json_t *s = json_loads(schema, 0, NULL);
    json_t *v = s ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    char *out = NULL;
    if (v && prune_nulls(v, s, 0) > 0)
        out = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    json_decref(s);
    return out;
}

int ar_codex_native_contract(const char *schema)
{
    json_t *s = schema ? json_loads(schema, 0, NULL) : NULL;
    int lossless = 1;
    int yes = ar_pv_object_schema(s) && expressible(s, 0, &lossless) && lossless;
    json_decref(s);
    return yes;
}
