/*
 * What the files of src/contract share: the compiled schema (a graph of nodes,
 * one per subschema, $ref and $dynamicRef resolved to nodes at load), the
 * documents and resources it came from, and the value previews used in
 * messages. Nothing outside src/contract includes this.
 */
#ifndef AR_CONTRACT_INTERNAL_H
#define AR_CONTRACT_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "contract/contract.h"
#include "contract/pattern.h"

enum {
    T_NULL = 1 << 0,
    T_BOOLEAN = 1 << 1,
    T_OBJECT = 1 << 2,
    T_ARRAY = 1 << 3,
    T_NUMBER = 1 << 4,
    T_STRING = 1 << 5,
    T_INTEGER = 1 << 6,
};

/* The counted keywords, indexes of node.count[]. */
enum {
    C_MIN_LENGTH,
    C_MAX_LENGTH,
    C_MIN_ITEMS,
    C_MAX_ITEMS,
    C_MIN_PROPS,
    C_MAX_PROPS,
    C_MIN_CONTAINS,
    C_MAX_CONTAINS,
    C_COUNT
};

/* The bounds, indexes of node.bound[]. */
enum { B_MIN, B_MAX, B_XMIN, B_XMAX, B_MULTIPLE, B_COUNT };

struct node;
struct resource;

/* A JSON document schemas were read from (the root schema's, or one $ref named). */
struct schema_doc {
    struct ar_json_doc doc; /* value and number spellings; doc.value is NULL for a json_t root */
    json_t *root;           /* borrowed from doc, or a reference of its own */
    char *uri;              /* where it was found */
    struct schema_doc *next;
};

/* A number of the schema, with its spelling. */
struct number {
    json_t *json; /* borrowed from the schema */
    const struct ar_json_doc *doc;
};

struct named_node {
    const char *name; /* borrowed from the schema */
    struct node *schema;
};

struct pattern_node {
    const char *src; /* borrowed */
    struct ar_pattern *re;
    struct node *schema;
};

struct node {
    json_t *json;                  /* the subschema (borrowed) */
    const struct ar_json_doc *doc; /* its document's spellings, or NULL */
    char *pointer;                 /* where it is: "#/properties/a" of its document, for messages */
    struct resource *res;          /* the schema resource it belongs to */
    int boolean;                   /* -1: an object schema; 0 / 1: the schema false / true */
    int draft7;                    /* read as draft-07 ($ref alone, items as a tuple) */
    int needs_annotations;         /* it or a schema it applies in place has unevaluated* */

    unsigned types;
    json_t *type_json; /* borrowed: the "type" value, for messages */
    json_t *enum_values;
    json_t *const_value;
    int has_const;
    unsigned has_count; /* bits of C_* */
    size_t count[C_COUNT];
    unsigned has_bound; /* bits of B_* */
    struct number bound[B_COUNT];
    const char *pattern_src;
    struct ar_pattern *pattern;
    int unique_items;
    json_t *required;           /* array of strings */
    json_t *dependent_required; /* object of arrays of strings */
    const char *format;         /* borrowed; asserted when the contract says so */

    struct node **all_of, **any_of, **one_of, **prefix_items;
    size_t n_all_of, n_any_of, n_one_of, n_prefix_items;
    struct node *not_, *if_, *then_, *else_;
    struct named_node *props, *dep_schemas;
    size_t n_props, n_dep_schemas;
    struct pattern_node *pattern_props;
    size_t n_pattern_props;
    struct node *additional_props, *property_names, *items, *contains;
    struct node *unevaluated_props, *unevaluated_items;

    char *ref_uri; /* $ref as written, resolved against the base URI */
    struct node *ref;
    char *dyn_uri; /* $dynamicRef, resolved */
    struct node *dyn_ref;
    const char *dyn_name; /* its anchor when that is dynamic: resolved at check time */

    json_t *owned[2];        /* what draft-07's dependencies was split into */
    struct node *next_alloc; /* every node of a contract, for freeing */
};

/* A schema resource: a document root or a subschema with $id. */
struct resource {
    char *uri; /* absolute, no fragment */
    json_t *root;
    struct named_node *dyn_anchors; /* $dynamicAnchor names and their subschemas */
    size_t n_dyn_anchors, cap_dyn_anchors;
    struct resource *next;
};

struct ar_contract {
    json_t *schema; /* the root schema (a reference) */
    struct node *root;
    struct node *nodes;
    struct schema_doc *docs;
    struct resource *resources;
    char *text;     /* the root schema's compact text, when no document holds it */
    unsigned flags; /* AR_CONTRACT_FORMAT_ASSERT… */
    int draft7;     /* the root's dialect */
};

#define PREVIEW_MAX (AR_CONTRACT_PREVIEW_BYTES + 8)

/* A number as a message shows it: integers without a fraction, else the shortest form. */
void ar_contract_format_number(char *dst, size_t n, double d);

/* v as a message quotes it, cut to about `limit` bytes. */
void ar_contract_preview(char *dst, size_t dstlen, json_t *v, size_t limit);

/* ar_violations_add() with a va_list. */
int ar_violations_addv(struct ar_violations *vs, const char *path, json_t *value, const char *fmt,
                       va_list ap);

/* 1 when v is a number with no fractional part (3 and 3.0 alike). */
int ar_contract_is_integral(json_t *v);

/*
 * The decimal spelling of the number v: its lexeme in doc when there is one, the
 * digits of an integer, else the shortest spelling that reads back as the double
 * (1.1, not 1.100000000000000088…). `buf` holds at least 40 bytes; returns the
 * spelling (in buf or doc) and its length in *len.
 */
const char *ar_contract_number_text(const struct ar_json_doc *doc, json_t *v, char *buf,
                                    size_t *len);

/*
 * 1 when the number spelled a is an integer multiple of the one spelled d
 * (positive, at most 18 significant digits: the loader checks), exactly.
 */
int ar_number_is_multiple(const char *a, size_t an, const char *d, size_t dn);

/* A hash of the number spelled s[0..n): numbers equal by value hash alike. */
uint64_t ar_number_hash(const char *s, size_t n);

/* The significant digits of the number spelled s (123 for 1.230e5): what the loader
 * limits for multipleOf. */
size_t ar_number_digits(const char *s, size_t n);

/* Format assertion: 1 valid, 0 not, -1 a format agentrun does not check (an annotation). */
int ar_format_check(const char *format, const char *s, size_t len);

/* URIs (RFC 3986): ref resolved against base, new string (NULL when out of memory). */
char *ar_uri_resolve(const char *base, const char *ref);

/* The part of uri before '#', new string; *frag (may be NULL) gets the fragment or NULL. */
char *ar_uri_split(const char *uri, const char **frag);

#endif
