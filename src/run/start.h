/*
 * The shape every public start function of the library shares (ar_run_start(),
 * ar_batch_start(), ar_review_start(), ar_route_start(), ar_prioritize_start()),
 * written once: the checks of its arguments, and its blocking form on a private
 * loop.
 */
#ifndef AR_RUN_START_H
#define AR_RUN_START_H

#include "agentrun/error.h"
#include "proc/proc.h"

/*
 * The first statement of a public start function `name(uv, opts, ..., out, err)`:
 * err may be NULL (a local error then takes the message), *out is NULL until the
 * start succeeds (out may be NULL), and when `given` (the arguments it cannot do
 * without) is false it returns AR_EUSAGE, "name() needs <what>".
 */
#define AR_START_ARGS(name, err, out, given, what)                                 \
    struct ar_error name##_err_ = AR_ERROR_INIT;                                   \
    if (!(err))                                                                    \
        (err) = &name##_err_;                                                      \
    if (out)                                                                       \
        *(out) = NULL;                                                             \
    if (!(given))                                                                  \
        return ar_error_set((err), AR_EUSAGE, NULL, "%s() needs %s", #name, what); \
    (void)0

/*
 * Defines `int name(const opts_t *opts, result_t **out, struct ar_error *err)`,
 * the blocking form of a public start function `start(uv, opts, done, arg,
 * handle_out, err)` whose done is `done(handle_t *, result_t *, arg)`:
 * ar_loop_run_private() around it. 0 with *out the result done handed over, or
 * start's error with *out NULL. (ar_run(), ar_review(), ar_route(), ar_prioritize().)
 */
#define AR_DEFINE_BLOCKING(name, start, opts_t, handle_t, result_t)                 \
    static void name##_done_(handle_t *h, result_t *res, void *arg)                 \
    {                                                                               \
        (void)h;                                                                    \
        *(result_t **)arg = res;                                                    \
    }                                                                               \
    struct name##_blocking_ {                                                       \
        const opts_t *opts;                                                         \
        result_t *res;                                                              \
    };                                                                              \
    static int name##_start_(struct uv_loop_s *uv, void *arg, struct ar_error *err) \
    {                                                                               \
        struct name##_blocking_ *b = arg;                                           \
        return start(uv, b->opts, name##_done_, &b->res, NULL, err);                \
    }                                                                               \
    int name(const opts_t *opts, result_t **out, struct ar_error *err)              \
    {                                                                               \
        struct name##_blocking_ b = { opts, NULL };                                 \
        *out = NULL;                                                                \
        int rc = ar_loop_run_private(name##_start_, &b, err);                       \
        if (rc < 0)                                                                 \
            return rc;                                                              \
        *out = b.res;                                                               \
        return 0;                                                                   \
    }

#endif
