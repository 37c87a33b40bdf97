/*
 * The synchronous runner: one child on a private loop, run to its end (git's
 * run_command() = start_command() + finish_command()). The result outlives
 * the loop, so the borrowed buffers of on_done are copied out.
 */
#include <stdlib.h>
#include <string.h>

#include "proc/proc.h"

struct sync_state {
    struct ar_child_sync *out;
    ar_child_line_fn *user_line;
    void *user_arg;
    int nomem;
};

static void sync_line(struct ar_child *c, const char *line, size_t len, void *arg)
{
    struct sync_state *st = arg;
    st->user_line(c, line, len, st->user_arg);
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static void sync_done(struct ar_child *c, const struct ar_child_result *res, void *arg)
{
    struct sync_state *st = arg;
    struct ar_child_sync *out = st->out;
    out->res = *res;
    out->stderr_tail = dup_bytes(res->stderr_tail, res->stderr_tail_len);
    if (!out->stderr_tail)
        st->nomem = 1;
    if (res->stdout_data) {
        out->stdout_data = dup_bytes(res->stdout_data, res->stdout_len);
        if (!out->stdout_data)
            st->nomem = 1;
    }
    out->res.stderr_tail = out->stderr_tail;
    out->res.stdout_data = out->stdout_data;
    if (!out->stderr_tail)
        out->res.stderr_tail_len = 0;
    if (!out->stdout_data)
        out->res.stdout_len = 0;
}

int ar_child_run_sync(const struct ar_child_opts *opts, struct ar_child_sync *out,
                      struct ar_error *err)
{
    memset(out, 0, sizeof(*out));
    struct ar_loop *loop = ar_loop_create(err);
    if (!loop)
        return err ? err->code : AR_ENOMEM;

    struct sync_state st = { out, opts->on_line, opts->arg, 0 };
    struct ar_child_opts o = *opts;
    o.on_line = opts->on_line ? sync_line : NULL;
    o.on_done = sync_done;
    o.arg = &st;
    int rc = ar_child_spawn(loop, &o, NULL, err);
    if (rc == 0)
        ar_loop_run(loop);
    /* A private loop has nothing else on it: a handle left open here is a bug in this module. */
    int closed = ar_loop_destroy(loop);
    (void)closed;
    if (rc)
        return rc;
    if (st.nomem) {
        ar_child_sync_finish(out);
        return ar_error_set(err, AR_ENOMEM, opts->argv[0], "cannot keep the output of '%s'",
                            opts->argv[0]);
    }
    /* A limit that ended it is in out->res.end and out->res.err: the callers decide. */
    return 0;
}

void ar_child_sync_finish(struct ar_child_sync *s)
{
    if (!s)
        return;
    free(s->stdout_data);
    free(s->stderr_tail);
    memset(s, 0, sizeof(*s));
}
