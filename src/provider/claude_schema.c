/*
 * claude's --json-schema (claude_schema.h). Measured with claude 2.1.337 at the loopback
 * mock: its validator is Ajv in draft-07 strict mode. A "$schema" of 2020-12 or 2019-09
 * is refused ("no schema with key or ref"), and so is any keyword it does not know
 * ("strict mode: unknown keyword: \"dependentRequired\"") — exit 1 before any request.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "provider/claude_schema.h"
#include "provider/common.h"

/* Keywords draft-07 gives the same meaning; copied as they are (their subschemas
 * translated). */
static const char *const kept[] = {
    "$comment",
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "const",
    "contains",
    "default",
    "description",
    "else",
    "enum",
    "examples",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "if",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "properties",
    "propertyNames",
    "readOnly",
    "required",
    "then",
    "title",
    "type",
    "uniqueItems",
    "writeOnly",
    NULL,
};

static int is_kept(const char *k)
{
    for (size_t i = 0; kept[i]; i++)
        if (!strcmp(kept[i], k))
            return 1;
    return 0;
}

/* Keywords whose value is data, not a schema. */
static int is_value(const char *k)
{
    return !strcmp(k, "const") || !strcmp(k, "enum") || !strcmp(k, "default") ||
           !strcmp(k, "examples") || !strcmp(k, "required") || !strcmp(k, "type");
}

/* Keywords whose value maps names to schemas. */
static int is_map(const char *k)
{
    return !strcmp(k, "properties") || !strcmp(k, "patternProperties") ||
           !strcmp(k, "definitions") || !strcmp(k, "$defs") || !strcmp(k, "dependentSchemas");
}

/* *ok: 1 while the copy can be given; 2 bits: LOSSY when it accepts more than the
 * contract (a keyword that asserts was left out). */
#define LOSSY 2

static json_t *translate(json_t *s, int depth, int *ok);

static json_t *translate_map(json_t *m, int depth, int *ok)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v) json_object_set_new(out, k, translate(v, depth + 1, ok));
    return out;
}

static json_t *translate_list(json_t *a, int depth, int *ok)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) json_array_append_new(out, translate(v, depth + 1, ok));
    return out;
}

/* A $ref draft-07 resolves the same way: a JSON Pointer from the root ("#", "#/..."). */
static json_t *translate_ref(json_t *ref, int *ok)
{
    const char *r = json_string_value(ref);
    if (!r || r[0] != '#' || (r[1] && r[1] != '/')) {
        *ok &= ~1;
        return json_string("#");
    }
    if (!strncmp(r, "#/$defs/", 8)) {
        size_t n = strlen(r);
        char *w = malloc(n + 8);
        if (!w)
            return json_string(r);
        memcpy(w, "#/definitions/", 14);
        memcpy(w + 14, r + 8, n - 8 + 1);
        json_t *out = json_string(w);
        free(w);
        return out;
    }
    return json_string(r);
}

static json_t *translate(json_t *s, int depth, int *ok)
{
    if (json_is_boolean(s))
        return json_incref(s);
    if (!json_is_object(s) || depth > 64) {
        *ok &= ~1;
        return json_object();
    }
    json_t *out = json_object();
    json_t *deps = NULL;
    const char *k;
    json_t *v;
    json_object_foreach(s, k, v)
    {
        if (!strcmp(k, "$ref")) {
            json_object_set_new(out, "$ref", translate_ref(v, ok));
        } else if (!strcmp(k, "$dynamicRef") || !strcmp(k, "$recursiveRef") ||
                   (!strcmp(k, "$id") && depth > 0)) {
            *ok &= ~1;
        } else if (!strcmp(k, "$defs") || !strcmp(k, "definitions")) {
            json_t *defs = json_object_get(out, "definitions");
            json_t *more = translate_map(v, depth, ok);
            if (defs)
                json_object_update(defs, more);
            else
                json_object_set(out, "definitions", more);
            json_decref(more);
        } else if (!strcmp(k, "prefixItems")) {
            json_object_set_new(out, "items", translate_list(v, depth, ok));
            json_t *rest = json_object_get(s, "items");
            if (rest && !json_is_array(rest))
                json_object_set_new(out, "additionalItems", translate(rest, depth + 1, ok));
        } else if (!strcmp(k, "items") && json_object_get(s, "prefixItems")) {
            /* written as additionalItems above */
        } else if (!strcmp(k, "dependentRequired") || !strcmp(k, "dependentSchemas") ||
                   !strcmp(k, "dependencies")) {
            if (!deps)
                deps = json_object();
            const char *dk;
            json_t *dv;
            json_object_foreach(v, dk, dv) json_object_set_new(
                deps, dk, json_is_array(dv) ? json_incref(dv) : translate(dv, depth + 1, ok));
        } else if (!strcmp(k, "contains") && json_object_get(s, "minContains")) {
            /* minContains 0 would make it optional: without it, contains asks more */
            *ok |= LOSSY;
        } else if (!strcmp(k, "unevaluatedProperties") || !strcmp(k, "unevaluatedItems") ||
                   !strcmp(k, "minContains") || !strcmp(k, "maxContains")) {
            *ok |= LOSSY;
        } else if (!is_kept(k)) {
            /* format (an annotation), $anchor, annotations: out */
        } else if (is_value(k)) {
            json_object_set(out, k, v);
        } else if (is_map(k) && json_is_object(v)) {
            json_object_set_new(out, k, translate_map(v, depth, ok));
        } else if (json_is_array(v)) {
            json_object_set_new(out, k, translate_list(v, depth, ok));
        } else if (json_is_object(v) || json_is_boolean(v)) {
            json_object_set_new(out, k, translate(v, depth + 1, ok));
        } else {
            json_object_set(out, k, v);
        }
    }
    if (deps)
        json_object_set_new(out, "dependencies", deps);
    return out;
}

static char *claude_schema(const char *contract, int *lossless)
{
    json_t *s = contract ? json_loads(contract, 0, NULL) : NULL;
    char *text = NULL;
    if (ar_pv_object_schema(s)) {
        int ok = 1;
        json_t *out = translate(s, 0, &ok);
        if (ok & 1)
            text = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (lossless)
            *lossless = !(ok & LOSSY);
        json_decref(out);
    }
    json_decref(s);
    return text;
}

char *ar_claude_schema(const char *contract)
{
    return claude_schema(contract, NULL);
}

int ar_claude_native_contract(const char *contract)
{
    int lossless = 0;
    char *text = claude_schema(contract, &lossless);
    free(text);
    return text != NULL && lossless;
}
