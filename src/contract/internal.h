/*
 * What the files of src/contract share: the compiled schema (a tree of nodes)
 * and the value previews used in messages. Nothing outside src/contract
 * includes this.
 */
#ifndef AR_CONTRACT_INTERNAL_H
#define AR_CONTRACT_INTERNAL_H

#include <regex.h>
#include <stdarg.h>

#include "contract/contract.h"

enum {
    T_NULL = 1 << 0,
    T_BOOLEAN = 1 << 1,
    T_OBJECT = 1 << 2,
    T_ARRAY = 1 << 3,
    T_NUMBER = 1 << 4,
    T_STRING = 1 << 5,
    T_INTEGER = 1 << 6,
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
    json_t *bound_json[4]; /* borrowed: the same bounds as written, for exact comparison */
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

#endif
