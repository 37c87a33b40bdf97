/*
 * Checks of a prioritization beyond its contract, and the ranking built from
 * an accepted one. The messages go to the one repair call, so each names the
 * recommendation by index (and id when it has one) and says what was wanted.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prioritize/prioritize.h"
#include "util/array.h"

/* Past this many ids the "known ids" list is cut: the message must stay readable. */
#define KNOWN_IDS_SHOWN 40

struct check {
    const struct ar_prd_set *set;
    void (*add)(void *sink, const char *msg);
    void *sink;
    int failed; /* out of memory while formatting */
};

static void report(struct check *c, const char *fmt, ...) AR_PRINTF(2, 3);

static void report(struct check *c, const char *fmt, ...)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    va_list ap;
    va_start(ap, fmt);
    int rc = ar_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (rc == 0)
        c->add(c->sink, ar_buf_cstr(&b));
    else
        c->failed = 1;
    ar_buf_finish(&b);
}

/* The set's ids as "auth, billing, search" (cut after KNOWN_IDS_SHOWN). */
static char *known_ids(const struct ar_prd_set *set)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < set->n && i < KNOWN_IDS_SHOWN; i++)
        rc = ar_buf_printf(&b, "%s%s", i ? ", " : "", set->v[i].id);
    if (rc == 0 && set->n > KNOWN_IDS_SHOWN)
        rc = ar_buf_printf(&b, ", \xe2\x80\xa6 (%zu more)", set->n - KNOWN_IDS_SHOWN);
    char *s = rc == 0 ? ar_buf_detach(&b, NULL) : NULL;
    ar_buf_finish(&b);
    return s;
}

/* A value as it appears in JSON, cut short, for "got …" parts of messages. */
static char *preview(json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s && strlen(s) > 60)
        strcpy(s + 57, "...");
    return s;
}

/* " (\"billing\")" when the recommendation has a usable id, else "". */
static void id_label(char *out, size_t n, const char *id)
{
    if (id)
        snprintf(out, n, " (\"%s\")", id);
    else
        out[0] = '\0';
}

static const char *rec_id(json_t *rec)
{
    const char *id = json_string_value(json_object_get(rec, "prd_id"));
    return id && *id ? id : NULL;
}

static int valid_priority(json_t *p)
{
    if (json_is_integer(p))
        return json_integer_value(p) >= 1;
    /* JSON has one number type: 3.0 is the integer 3 (the contract agrees). */
    if (json_is_real(p)) {
        double d = json_real_value(p);
        /* floor(), not a cast: converting 1e300 to an integer is undefined. */
        return d >= 1 && d == floor(d);
    }
    return 0;
}

static void check_depends(struct check *c, size_t i, const char *label, const char *id,
                          json_t *deps, const char *known)
{
    if (!deps)
        return;
    if (!json_is_array(deps)) {
        char *got = preview(deps);
        report(c, "recommendation %zu%s has invalid depends_on: %s, want an array of prd_ids", i,
               label, got ? got : "?");
        free(got);
        return;
    }
    size_t j;
    json_t *d;
    json_array_foreach(deps, j, d)
    {
        const char *dep = json_string_value(d);
        if (!dep) {
            char *got = preview(d);
            report(c, "recommendation %zu%s has invalid depends_on entry %zu: %s, want a prd_id", i,
                   label, j, got ? got : "?");
            free(got);
        } else if (!ar_prd_set_find(c->set, dep))
            report(c, "recommendation %zu%s depends_on unknown prd_id \"%s\"; known ids: %s", i,
                   label, dep, known);
        else if (id && strcmp(dep, id) == 0)
            report(c, "recommendation %zu%s depends on itself", i, label);
    }
}

static void run_checks(struct check *c, json_t *value)
{
    json_t *recs = json_object_get(value, "recommendations");
    if (!json_is_object(value) || !json_is_array(recs)) {
        /* The contract normally catches this first; a template override
         * without one must still not pass an unusable answer. */
        report(c, "response has no \"recommendations\" array");
        return;
    }
    if (json_array_size(recs) == 0) {
        report(c, "no recommendations in response");
        return;
    }
    char *known = known_ids(c->set);
    if (!known) {
        c->failed = 1;
        return;
    }
    size_t i;
    json_t *rec;
    json_array_foreach(recs, i, rec)
    {
        if (!json_is_object(rec)) {
            char *got = preview(rec);
            report(c, "recommendation %zu is not an object: %s", i, got ? got : "?");
            free(got);
            continue;
        }
        const char *id = rec_id(rec);
        char label[160];
        if (!id)
            report(c, "recommendation %zu missing prd_id", i);
        else if (!ar_prd_set_find(c->set, id))
            report(c, "recommendation %zu names unknown prd_id \"%s\"; known ids: %s", i, id,
                   known);
        else {
            /* Only the first occurrence of an id is the reference point. */
            for (size_t k = 0; k < i; k++) {
                const char *prev = rec_id(json_array_get(recs, k));
                if (prev && strcmp(prev, id) == 0) {
                    report(c, "recommendation %zu repeats prd_id \"%s\" of recommendation %zu", i,
                           id, k);
                    break;
                }
            }
        }
        id_label(label, sizeof(label), id);
        json_t *p = json_object_get(rec, "priority");
        if (!p)
            report(c, "recommendation %zu%s missing priority, want an integer >= 1", i, label);
        else if (!valid_priority(p)) {
            char *got = preview(p);
            report(c, "recommendation %zu%s has invalid priority: %s, want an integer >= 1", i,
                   label, got ? got : "?");
            free(got);
        }
        check_depends(c, i, label, id, json_object_get(rec, "depends_on"), known);
    }
    free(known);
}

void ar_prioritize_validate(void *arg, json_t *value, void (*add)(void *sink, const char *msg),
                            void *sink)
{
    struct check c = { arg, add, sink, 0 };
    run_checks(&c, value);
}

static void add_to_strv(void *sink, const char *msg)
{
    struct check *c = sink;
    if (ar_strv_push(c->sink, msg) < 0)
        c->failed = 1;
}

int ar_prioritize_check(const struct ar_prd_set *set, json_t *value, struct ar_strv *out)
{
    /* The same check struct serves as the sink so a failed push is seen. */
    struct check c = { set, NULL, out, 0 };
    struct check outer = { set, add_to_strv, &c, 0 };
    run_checks(&outer, value);
    return c.failed || outer.failed ? AR_ENOMEM : 0;
}

static json_int_t priority_of(json_t *rec)
{
    json_t *p = json_object_get(rec, "priority");
    if (json_is_integer(p))
        return json_integer_value(p);
    if (json_is_real(p)) {
        /* Saturate: a double past the integer range does not convert. */
        double d = json_real_value(p);
        return d >= 0x1p63 ? LLONG_MAX : d < -0x1p63 ? LLONG_MIN : (json_int_t)d;
    }
    return 0;
}

struct ranked {
    json_t *rec;
    json_int_t priority;
    size_t index;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void ar_ranking_finish(struct ar_ranking *rk)
{
    json_decref(rk->value);
    ar_strv_finish(&rk->unranked);
    memset(rk, 0, sizeof(*rk));
}

int ar_ranking_build(struct ar_ranking *rk, const struct ar_prd_set *set, json_t *value, size_t top,
                     struct ar_error *err)
{
    memset(rk, 0, sizeof(*rk));
    ar_strv_init(&rk->unranked);
    json_t *recs = json_object_get(value, "recommendations");
    if (!json_is_array(recs))
        return ar_error_set(err, AR_ECONTRACT, "/recommendations",
                            "response has no \"recommendations\" array");
    size_t n = json_array_size(recs);
    struct ranked *r = calloc(n ? n : 1, sizeof(*r));
    json_t *copy = json_deep_copy(value);
    json_t *sorted = json_array();
    if (!r || !copy || !sorted)
        goto error_nomem;
    for (size_t i = 0; i < n; i++) {
        r[i].rec = json_array_get(recs, i);
        r[i].priority = priority_of(r[i].rec);
        r[i].index = i;
    }
    /* qsort is not stable; the index tiebreak makes it so. */
    ar_sort(r, n, sizeof(*r), cmp_ranked);
    for (size_t i = 0; i < n && (top == 0 || i < top); i++)
        if (json_array_append_new(sorted, json_deep_copy(r[i].rec)) < 0)
            goto error_nomem;
    if (json_object_set_new(copy, "recommendations", sorted) < 0) {
        sorted = NULL;
        goto error_nomem;
    }
    sorted = NULL;
    for (size_t k = 0; k < set->n; k++) {
        int named = 0;
        for (size_t i = 0; i < n && !named; i++) {
            const char *id = rec_id(r[i].rec);
            named = id && strcmp(id, set->v[k].id) == 0;
        }
        if (!named && ar_strv_push(&rk->unranked, set->v[k].id) < 0)
            goto error_nomem;
    }
    free(r);
    rk->value = copy;
    rk->total = n;
    return 0;

error_nomem:
    json_decref(sorted);
    json_decref(copy);
    free(r);
    ar_strv_finish(&rk->unranked);
    return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
}
