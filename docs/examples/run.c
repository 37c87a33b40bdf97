/*
 * The agentrun C API in one page: ask a model for JSON that matches a
 * contract, and read the checked result.
 *
 *   cc run.c $(pkg-config --cflags --libs agentrun) -o run
 *   ./run "List two colours"
 */
#include <stdio.h>
#include <stdlib.h>

#include <agentrun/agentrun.h>

int main(int argc, char **argv)
{
    struct ar_run_options opts;
    ar_run_options_init(&opts);
    opts.prompt = argc > 1 ? argv[1] : "List two colours as JSON";
    opts.schema = "{\"type\": \"object\", \"required\": [\"colours\"],"
                  " \"properties\": {\"colours\": {\"type\": \"array\","
                  " \"items\": {\"type\": \"string\"}, \"minItems\": 2}}}";
    opts.track_files = 0; /* this example changes no files */

    struct ar_result *res = NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_run(&opts, &res, &err) < 0) {
        /* The run could not start: a bad option, template or schema. */
        fprintf(stderr, "run: %s\n", err.msg);
        return 2;
    }
    int status = ar_result_exit_status(res);
    if (res->ok) {
        printf("%s\n", res->json); /* the checked JSON, compact */
        fprintf(stderr, "%s, %llu output tokens, %zu call(s)\n", res->provider,
                (unsigned long long)res->usage.output, res->n_calls);
    } else {
        fprintf(stderr, "run: %s: %s\n", ar_strerror_name(res->error.code), res->error.msg);
        for (char **d = res->error_details; *d; d++)
            fprintf(stderr, "  %s\n", *d);
    }
    ar_result_destroy(res);
    return status;
}
