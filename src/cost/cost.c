/* Price lookup, the override file and the cost of a call. */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/file.h"

struct ar_prices {
    struct ar_price *v; /* sorted by model; names owned */
    size_t n;
};

static const struct ar_price *exact(const struct ar_price *v, size_t n, const char *model,
                                    size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(v[mid].model, model, len);
        if (c == 0 && v[mid].model[len] != '\0')
            c = 1;
        if (c == 0)
            return &v[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* '-' followed only by digits and dashes: a date or version stamp. */
static int is_stamp(const char *s)
{
    if (*s != '-' || !isdigit((unsigned char)s[1]))
        return 0;
    for (s++; *s; s++)
        if (!isdigit((unsigned char)*s) && *s != '-')
            return 0;
    return 1;
}

const struct ar_price *ar_prices_find(const struct ar_prices *t, const char *model)
{
    if (!model || !*model)
        return NULL;
    size_t n;
    const struct ar_price *v = t ? t->v : ar_prices_builtin(&n);
    if (t)
        n = t->n;
    const char *slash = strrchr(model, '/');
    if (slash)
        model = slash + 1;
    size_t len = strlen(model);
    const char *bracket = strchr(model, '[');
    const struct ar_price *p = exact(v, n, model, len);
    if (!p && bracket)
        p = exact(v, n, model, len = (size_t)(bracket - model));
    if (p)
        return p;
    const struct ar_price *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(v[i].model);
        if (l < len && l > best_len && strncmp(v[i].model, model, l) == 0) {
            char rest[64];
            size_t rl = len - l < sizeof(rest) - 1 ? len - l : sizeof(rest) - 1;
            memcpy(rest, model + l, rl);
            rest[rl] = '\0';
            if (is_stamp(rest)) {
                best = &v[i];
                best_len = l;
            }
        }
    }
    return best;
}

/* tokens at rate: 0 for no tokens whatever the rate, NaN for some at an unknown rate. */
static double at(uint64_t tokens, double rate)
{
    return tokens ? (double)tokens * rate : 0;
}

double ar_price_apply(const struct ar_price *p, const struct ar_usage *u)
{
    uint64_t prompt = u->input + u->cache_read + u->cache_write;
    int lng = p->long_threshold && prompt > p->long_threshold;
    double in = lng ? p->long_input : p->input;
    double out = lng ? p->long_output : p->output;
    double cr = lng ? p->long_cache_read : p->cache_read;
    double cw = lng ? p->long_cache_write : p->cache_write;
    return (at(u->input, in) + at(u->cache_read, cr) + at(u->cache_write, cw) +
            at(u->output, out)) /
           1e6;
}

int ar_cost_cli_valid(double usd)
{
    return isfinite(usd) && usd >= 0;
}

struct ar_cost ar_cost_compute(const struct ar_prices *t, const char *model,
                               const struct ar_usage *usage, int has_cli_cost, double cli_cost)
{
    struct ar_cost c = { 0, AR_COST_UNKNOWN };
    /* A negative cost would pay for other jobs under a budget: a figure that
     * cannot be right is dropped, and the price table decides (or unknown). */
    if (has_cli_cost && ar_cost_cli_valid(cli_cost)) {
        c.usd = cli_cost;
        c.source = AR_COST_CLI;
        return c;
    }
    const struct ar_price *p = usage ? ar_prices_find(t, model) : NULL;
    double usd = p ? ar_price_apply(p, usage) : NAN;
    /* A price the table does not know for tokens the call used: unknown, not a part. */
    if (isfinite(usd)) {
        c.usd = usd;
        c.source = AR_COST_TABLE;
    }
    return c;
}

void ar_cost_add(struct ar_cost *a, const struct ar_cost *b)
{
    /* A cached call spent a known nothing: it changes neither the sum nor its source. */
    if (b->source == AR_COST_CACHE)
        return;
    if (a->source == AR_COST_CACHE) {
        *a = *b;
        return;
    }
    if (a->source == AR_COST_UNKNOWN || b->source == AR_COST_UNKNOWN) {
        a->usd = 0;
        a->source = AR_COST_UNKNOWN;
        return;
    }
    a->usd += b->usd;
    if (b->source != AR_COST_CLI)
        a->source = AR_COST_TABLE;
}

double ar_usage_cache_read_share(const struct ar_usage *u)
{
    /* Summed as doubles: three counts near UINT64_MAX would wrap as integers. */
    double all = (double)u->input + (double)u->cache_read + (double)u->cache_write;
    return all > 0 ? (double)u->cache_read / all : -1;
}

double ar_cost_round(double usd)
{
    return isfinite(usd) ? round(usd * 1e10) / 1e10 : usd;
}

void ar_prices_destroy(struct ar_prices *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free((char *)t->v[i].model);
    free(t->v);
    free(t);
}

static int cmp_price(const void *a, const void *b)
{
    return strcmp(((const struct ar_price *)a)->model, ((const struct ar_price *)b)->model);
}

static int rate(const json_t *o, const char *key, double *out)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        *out = 0;
        return 0;
    }
    if (json_is_null(v)) {
        *out = AR_PRICE_NONE;
        return 0;
    }
    if (!json_is_number(v) || json_number_value(v) < 0)
        return -1;
    *out = json_number_value(v);
    return 0;
}

static int parse_entry(const char *name, const json_t *e, struct ar_price *p)
{
    memset(p, 0, sizeof(*p));
    if (!json_is_object(e))
        return -1;
    if (rate(e, "input", &p->input) || rate(e, "output", &p->output) ||
        rate(e, "cache_read", &p->cache_read) || rate(e, "cache_write", &p->cache_write))
        return -1;
    const json_t *lc = json_object_get(e, "long_context");
    if (lc) {
        const json_t *thr = json_object_get(lc, "threshold");
        if (!json_is_object(lc) || !json_is_integer(thr) || json_integer_value(thr) <= 0)
            return -1;
        p->long_threshold = (uint64_t)json_integer_value(thr);
        if (rate(lc, "input", &p->long_input) || rate(lc, "output", &p->long_output) ||
            rate(lc, "cache_read", &p->long_cache_read) ||
            rate(lc, "cache_write", &p->long_cache_write))
            return -1;
    }
    p->model = strdup(name);
    return p->model ? 0 : -1;
}

int ar_prices_load(const char *path, struct ar_prices **out, struct ar_error *err)
{
    *out = NULL;
    struct ar_buf b;
    ar_buf_init(&b, (size_t)16 << 20);
    int rc = ar_file_read(path, &b, err);
    if (rc) {
        ar_buf_finish(&b);
        return rc;
    }
    json_error_t je;
    json_t *doc = json_loadb(ar_buf_cstr(&b), b.len, 0, &je);
    ar_buf_finish(&b);
    const json_t *models = json_object_get(doc, "models");
    if (!json_is_object(models)) {
        json_decref(doc);
        return ar_error_set(err, AR_EUSAGE, path, "'%s' is not a price file: %s", path,
                            doc ? "no \"models\" object" : je.text);
    }
    size_t nb;
    const struct ar_price *bi = ar_prices_builtin(&nb);
    struct ar_prices *t = calloc(1, sizeof(*t));
    if (t)
        t->v = calloc(nb + json_object_size(models), sizeof(*t->v));
    if (!t || !t->v) {
        free(t);
        json_decref(doc);
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    }
    const char *name;
    const json_t *e;
    json_object_foreach((json_t *)models, name, e)
    {
        if (!*name || parse_entry(name, e, &t->v[t->n]) != 0) {
            /* name belongs to doc: report before letting it go */
            ar_error_set(err, AR_EUSAGE, path,
                         "'%s': bad price entry '%s' (rates are numbers >= 0)", path, name);
            ar_prices_destroy(t);
            json_decref(doc);
            return AR_EUSAGE;
        }
        t->n++;
    }
    json_decref(doc);
    size_t over = t->n;
    for (size_t i = 0; i < nb; i++) {
        int replaced = 0;
        for (size_t j = 0; j < over && !replaced; j++)
            replaced = strcmp(t->v[j].model, bi[i].model) == 0;
        if (replaced)
            continue;
        t->v[t->n] = bi[i];
        t->v[t->n].model = strdup(bi[i].model);
        if (!t->v[t->n].model) {
            ar_prices_destroy(t);
            return ar_error_set(err, AR_ENOMEM, path, "out of memory");
        }
        t->n++;
    }
    ar_sort(t->v, t->n, sizeof(*t->v), cmp_price);
    *out = t;
    return 0;
}

int ar_prices_open(const char *path, struct ar_prices **out, struct ar_error *err)
{
    *out = NULL;
    if (!path || !*path)
        path = getenv("AGENTRUN_PRICES");
    if (!path || !*path)
        return 0;
    return ar_prices_load(path, out, err);
}

void ar_usage_add(struct ar_usage *to, const struct ar_usage *u)
{
    to->input += u->input;
    to->cache_read += u->cache_read;
    to->cache_write += u->cache_write;
    to->output += u->output;
    to->reasoning += u->reasoning;
}
