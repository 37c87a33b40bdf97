/*
 * prioritize: what `agentrun prioritize` does, through the public headers
 * alone (docs/library.md, "Route and prioritize"). Built and run by the suite
 * (tests/cli/test_capi_route.py).
 *
 *     prioritize DIR [TOP]     the ranking, one "priority id effort" line each
 *
 * The blocking form: ar_prioritize() runs the ranking on a loop of its own.
 * Exits with agentrun prioritize's status (0, 3 no usable ranking, 4…).
 */
#include <stdio.h>
#include <stdlib.h>

#include <agentrun/prioritize.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: prioritize DIR [TOP]\n");
        return 2;
    }
    struct ar_prioritize_options o;
    ar_prioritize_options_init(&o);
    o.dir = argv[1];
    o.top = argc > 2 ? (size_t)atoi(argv[2]) : 0;

    struct ar_prioritize_result *res = NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_prioritize(&o, &res, &err) < 0) { /* could not start: a bad folder */
        fprintf(stderr, "prioritize: %s\n", err.msg);
        return ar_error_exit_status(err.code);
    }
    if (!res->ranked)
        fprintf(stderr, "prioritize: %s\n",
                res->error ? res->error : res->run->error.msg); /* the run says why */
    for (size_t i = 0; i < res->n_recommendations; i++) {
        const struct ar_recommendation *r = &res->recommendations[i];
        printf("%lld %s %s", (long long)r->priority, r->prd_id, r->effort ? r->effort : "-");
        for (size_t k = 0; k < r->n_depends_on; k++)
            printf("%s%s", k ? "," : " after ", r->depends_on[k]);
        putchar('\n');
    }
    if (res->total > res->n_recommendations)
        printf("(%zu more)\n", res->total - res->n_recommendations);
    for (size_t i = 0; i < res->n_unranked; i++)
        printf("unranked %s\n", res->unranked[i]);
    printf("cost %s %.4f\n", res->run->provider, res->run->cost_usd);
    int status = res->exit_status;
    ar_prioritize_result_destroy(res);
    return status;
}
