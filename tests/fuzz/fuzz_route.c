/*
 * libFuzzer target for src/route and src/prioritize's validate hook. The
 * input up to the first NUL byte is a route manifest; the rest is a query
 * and, read as JSON, a model's answer. A manifest that does not load is
 * replaced by a fixed one so the answer is always interpreted. The answer
 * also goes through prioritize's checks and ranking against a fixed PRD set.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prioritize/prioritize.h"
#include "route/route.h"
#include "util/buf.h"
#include "util/strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_manifest[] =
    "{\"tasks\":[{\"name\":\"deploy\",\"description\":\"ship it\",\"aliases\":[\"ship\"],"
    "\"keywords\":[\"release\"]},{\"name\":\"test\",\"description\":\"run tests\"}],"
    "\"skills\":[{\"name\":\"review\",\"description\":\"review a diff\"}]}";

static void count_msg(void *sink, const char *msg)
{
    (void)strlen(msg);
    ++*(size_t *)sink;
}

static void check_route(const struct ar_route *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (!r->matches[i].name)
            abort();
        if (!(r->matches[i].confidence >= 0 && r->matches[i].confidence <= 1))
            abort();
    }
    if ((r->kind == AR_ROUTE_ERROR) != (r->error != NULL))
        abort();
}

static void route(const char *mtext, size_t mlen, const char *rest, size_t rlen, json_t *answer)
{
    struct ar_manifest m;
    ar_manifest_init(&m);
    struct ar_error err = AR_ERROR_INIT;
    if (ar_manifest_parse(&m, mtext, mlen, "m.json", &err) != 0) {
        if (err.code == 0)
            abort();
        ar_manifest_finish(&m);
        ar_manifest_init(&m);
        if (ar_manifest_parse(&m, fixed_manifest, sizeof(fixed_manifest) - 1, "m.json", NULL))
            abort();
    }
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (ar_manifest_render(&m, &b) != 0)
        abort();
    ar_buf_finish(&b);

    char *query = strndup(rest, rlen);
    if (!query)
        abort();
    struct ar_route r;
    ar_route_init(&r);
    if (ar_route_local(&m, query, AR_ROUTE_DEFAULT_MIN_SCORE, &r) < 0)
        abort();
    check_route(&r);
    ar_route_finish(&r);
    for (size_t i = 0; i < m.n; i++) {
        double s = ar_route_score(&m.items[i], query, NULL);
        if (!(s >= 0 && s <= 1))
            abort();
        (void)ar_manifest_find(&m, m.items[i].type, m.items[i].name);
    }
    free(query);

    if (answer) {
        size_t n = 0;
        ar_route_validate(NULL, answer, count_msg, &n);
        ar_route_init(&r);
        if (ar_route_from_answer(&m, answer, "why", &r) != 0)
            abort();
        check_route(&r);
        ar_route_finish(&r);
    }
    ar_route_init(&r);
    if (ar_route_from_answer(&m, NULL, NULL, &r) != 0 || r.n != 1 || !r.fallback)
        abort();
    ar_route_finish(&r);
    ar_manifest_finish(&m);
}

static void prioritize(json_t *answer)
{
    static const char *const ids[] = { "auth", "billing", "search/deep" };
    struct ar_prd_set set;
    ar_prd_set_init(&set);
    set.v = calloc(3, sizeof(*set.v));
    if (!set.v)
        abort();
    set.cap = 3;
    for (size_t i = 0; i < 3; i++) {
        if (ar_prd_init(&set.v[i], ids[i], ids[i], "text", 4, 4, 0) != 0)
            abort();
        set.n++;
    }
    size_t n = 0;
    ar_prioritize_validate(&set, answer, count_msg, &n);
    struct ar_strv msgs;
    ar_strv_init(&msgs);
    if (ar_prioritize_check(&set, answer, &msgs) != 0 || msgs.n != n)
        abort();
    ar_strv_finish(&msgs);
    for (size_t top = 0; top < 3; top += 2) {
        struct ar_ranking rk;
        memset(&rk, 0, sizeof(rk));
        ar_strv_init(&rk.unranked);
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_ranking_build(&rk, &set, answer, top, &err);
        if (rc != 0 && rc != AR_ECONTRACT)
            abort();
        ar_ranking_finish(&rk);
    }
    ar_prd_set_finish(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *sep = memchr(text, '\0', size);
    size_t mlen = sep ? (size_t)(sep - text) : size;
    const char *rest = sep ? sep + 1 : text;
    size_t rlen = sep ? size - mlen - 1 : size;

    json_t *answer = json_loadb(rest, rlen, JSON_DECODE_ANY, NULL);
    route(text, mlen, rest, rlen, answer);
    if (answer)
        prioritize(answer);
    json_decref(answer);
    return 0;
}
