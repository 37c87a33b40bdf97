/*
 * route: what `agentrun route` does, through the public headers alone
 * (docs/library.md, "Route and prioritize"). Built and run by the suite
 * (tests/cli/test_capi_route.py).
 *
 *     route MANIFEST QUERY…        the agentrun.route/1 document on stdout
 *
 * Runs the route on its own libuv loop and cancels the model's call on
 * Ctrl-C; exits with agentrun route's status (0 a route, 3 none or error).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <agentrun/route.h>

struct app {
    struct ar_route_run *rt;
    struct ar_route_result *res;
    uv_signal_t sigint;
};

static void on_done(struct ar_route_run *rt, struct ar_route_result *res, void *arg)
{
    struct app *app = arg;
    (void)rt;
    app->rt = NULL;
    app->res = res; /* yours: ar_route_result_destroy() */
    uv_close((uv_handle_t *)&app->sigint, NULL);
}

static void on_sigint(uv_signal_t *h, int signum)
{
    struct app *app = h->data;
    (void)signum;
    if (app->rt)
        ar_route_cancel(app->rt); /* done still comes: error "interrupted" */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: route MANIFEST QUERY...\n");
        return 2;
    }
    char query[4096] = "";
    for (int i = 2; i < argc; i++) {
        strncat(query, argv[i], sizeof(query) - strlen(query) - 2);
        if (i + 1 < argc)
            strcat(query, " ");
    }
    struct ar_route_options o;
    ar_route_options_init(&o); /* the library's defaults */
    o.manifest_path = argv[1];
    o.query = query;

    uv_loop_t loop;
    uv_loop_init(&loop);
    struct app app = { 0 };
    struct ar_error err = AR_ERROR_INIT;
    if (ar_route_start(&loop, &o, on_done, &app, &app.rt, &err) < 0) {
        fprintf(stderr, "route: %s\n", err.msg);
        uv_loop_close(&loop);
        return ar_error_exit_status(err.code);
    }
    uv_signal_init(&loop, &app.sigint);
    app.sigint.data = &app;
    uv_signal_start(&app.sigint, on_sigint, SIGINT);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);

    struct ar_route_result *res = app.res;
    for (size_t i = 0; i < res->n_matches; i++)
        fprintf(stderr, "%s %s %s %.2f\n", ar_route_kind_name(res->kind),
                ar_route_type_name(res->matches[i].type), res->matches[i].name,
                res->matches[i].confidence);
    if (res->error)
        fprintf(stderr, "route: %s\n", res->error);
    char *doc = ar_route_result_to_json(res, 0);
    if (doc)
        puts(doc);
    free(doc);
    int status = res->exit_status;
    ar_route_result_destroy(res);
    return status;
}
