/* Merging a batch's branches back: the call with Ctrl-C watched, and its text and JSON
 * output, shared by `agentrun worktrees merge` and `agentrun batch --merge`. */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/merge.h"
#include "cli/session.h"
#include "cli/terminal.h"
#include "util/json_dump.h"

/* Set by the handler, polled by the library (merge.h: o->cancel). */
static volatile int merge_cancel;

static void on_signal(int signum)
{
    merge_cancel = signum;
}

int ar_cli_merge(struct ar_worktree_merge_options *o, struct ar_worktree_merge_result *out,
                 int *signum, struct ar_error *err)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    merge_cancel = 0;
    for (size_t i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    o->cancel = &merge_cancel;
    int rc = ar_worktree_merge(o, out, err);
    for (size_t i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    o->cancel = NULL;
    *signum = merge_cancel;
    return rc;
}

/* Untrusted text (a branch name, a path) on one line: shown as git quotes a path, in
 * double quotes with C escapes, when it holds a control character, a quote or a
 * backslash; then rendered as data (ar_cli_line_append: the one neutraliser every
 * string from a change or a model passes, "##[" included), on stdout and stderr alike. */
static int put_name(struct ar_buf *b, const char *s)
{
    int plain = 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
            plain = 0;
    if (plain)
        return ar_cli_line_append(b, s, strlen(s));
    struct ar_buf q;
    ar_buf_init(&q, AR_BUF_UNLIMITED);
    int rc = ar_buf_putc(&q, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p && rc == 0; p++) {
        if (*p == '\n')
            rc = ar_buf_puts(&q, "\\n");
        else if (*p == '\t')
            rc = ar_buf_puts(&q, "\\t");
        else if (*p == '"' || *p == '\\')
            rc = ar_buf_printf(&q, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            rc = ar_buf_printf(&q, "\\%03o", *p);
        else
            rc = ar_buf_putc(&q, (char)*p);
    }
    if (rc == 0)
        rc = ar_buf_putc(&q, '"');
    if (rc == 0)
        rc = ar_cli_line_append(b, q.data, q.len);
    ar_buf_finish(&q);
    return rc;
}

/* The check's output (the tests of a model-written change: hostile text): its last
 * lines, each indented behind "    | " and rendered as data (no line break, no "##[",
 * no control character passes). */
static int put_tail(struct ar_buf *b, const char *prefix, const char *tail)
{
    enum { LINES = 10 };
    size_t len = strlen(tail);
    while (len && tail[len - 1] == '\n')
        len--;
    const char *start = tail;
    int lines = 0;
    for (const char *p = tail + len; p > tail; p--)
        if (p[-1] == '\n' && ++lines == LINES) {
            start = p;
            break;
        }
    int rc = 0;
    for (const char *p = start; p < tail + len && rc == 0;) {
        const char *nl = memchr(p, '\n', (size_t)(tail + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(tail + len - p);
        rc = ar_buf_printf(b, "%s    | ", prefix);
        if (rc == 0)
            rc = ar_cli_line_append(b, p, n);
        if (rc == 0)
            rc = ar_buf_putc(b, '\n');
        p += n + 1;
    }
    return rc;
}

static int put_row(struct ar_buf *b, const char *prefix, const struct ar_worktree_merge_branch *v)
{
    int rc = ar_buf_printf(b, "%s%-12s  ", prefix, ar_worktree_merge_outcome_name(v->outcome));
    if (rc == 0)
        rc = put_name(b, v->branch);
    switch (v->outcome) {
    case AR_WORKTREE_MERGE_MERGED:
        if (rc == 0)
            rc = ar_buf_printf(b, "  %.12s", v->commit);
        break;
    case AR_WORKTREE_MERGE_EMPTY:
        if (rc == 0)
            rc = ar_buf_puts(b, "  nothing to merge");
        break;
    case AR_WORKTREE_MERGE_CONFLICT:
        if (rc == 0)
            rc = ar_buf_puts(b, "  with ");
        for (size_t i = 0; i < v->n_with && rc == 0; i++) {
            rc = i ? ar_buf_puts(b, ", ") : 0;
            if (rc == 0)
                rc = put_name(b, v->with[i]);
        }
        if (rc == 0 && !v->n_with)
            rc = ar_buf_puts(b, "the branches merged before it");
        if (rc == 0)
            rc = ar_buf_puts(b, ": ");
        for (size_t i = 0; i < v->n_paths && rc == 0; i++) {
            rc = i ? ar_buf_puts(b, ", ") : 0;
            if (rc == 0)
                rc = put_name(b, v->paths[i]);
        }
        break;
    case AR_WORKTREE_MERGE_CHECK_FAILED:
        if (rc == 0)
            rc = v->check_status < 0 ? ar_buf_puts(b, "  the check timed out")
                                     : ar_buf_printf(b, "  the check exited %d", v->check_status);
        break;
    }
    if (rc == 0)
        rc = ar_buf_putc(b, '\n');
    if (rc == 0 && v->outcome == AR_WORKTREE_MERGE_CHECK_FAILED && v->check_tail)
        rc = put_tail(b, prefix, v->check_tail);
    return rc;
}

int ar_cli_merge_text(const struct ar_worktree_merge_result *r, const char *prefix,
                      struct ar_buf *b)
{
    int rc = 0;
    for (size_t i = 0; i < r->n && rc == 0; i++)
        rc = put_row(b, prefix, &r->v[i]);
    if (rc == 0)
        rc = ar_buf_printf(b, "%s", prefix);
    if (rc == 0)
        rc = put_name(b, r->into);
    if (rc == 0)
        rc = ar_buf_printf(b, "  %s  %zu of %zu merged, %zu left out (%s from %.12s)\n", r->head,
                           r->merged, r->n, r->left_out, r->created ? "made" : "extended", r->base);
    return rc < 0 ? AR_ENOMEM : 0;
}

static json_t *text_or_null(const char *s)
{
    return s ? ar_json_text(s, strlen(s)) : json_null();
}

static json_t *strs(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, ar_json_text(v[i], strlen(v[i])));
    return a;
}

int ar_cli_merge_json(const struct ar_worktree_merge_result *r, struct ar_buf *b)
{
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < r->n; i++) {
        const struct ar_worktree_merge_branch *v = &r->v[i];
        int failed = v->outcome == AR_WORKTREE_MERGE_CHECK_FAILED;
        json_array_append_new(
            rows,
            json_pack("{s:o,s:s,s:s,s:o,s:o,s:o,s:o,s:b,s:o}", "branch", text_or_null(v->branch),
                      "tip", v->tip, "outcome", ar_worktree_merge_outcome_name(v->outcome),
                      "commit", *v->commit ? json_string(v->commit) : json_null(), "conflicts_with",
                      strs(v->with, v->n_with), "paths", strs(v->paths, v->n_paths), "check_status",
                      failed && v->check_status >= 0 ? json_integer(v->check_status) : json_null(),
                      "check_timed_out", failed && v->check_status < 0, "check_output",
                      failed ? text_or_null(v->check_tail) : json_null()));
    }
    json_t *o = json_pack(
        "{s:o,s:o,s:o,s:b,s:s,s:s,s:I,s:I,s:o}", "repository", text_or_null(r->top), "session",
        r->session && *r->session ? text_or_null(r->session) : json_null(), "into",
        text_or_null(r->into), "created", r->created, "base", r->base, "head", r->head, "merged",
        (json_int_t)r->merged, "left_out", (json_int_t)r->left_out, "branches", rows);
    char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT) : NULL;
    int rc = s ? ar_buf_printf(b, "%s\n", s) : AR_ENOMEM;
    free(s);
    json_decref(o);
    return rc < 0 ? AR_ENOMEM : 0;
}

int ar_cli_merge_exit_status(int rc, const struct ar_worktree_merge_result *r, int signum)
{
    if (rc == AR_EINTERRUPTED)
        return signum ? 128 + signum : AR_EXIT_SIGINT;
    if (rc == AR_EUSAGE)
        return AR_EXIT_USAGE;
    if (rc < 0)
        return AR_EXIT_PROVIDER;
    return r->left_out ? 1 : AR_EXIT_OK;
}

/* A session id's shape, "20261125-143001-3fa2": an operand of that shape is a session. */
static int session_shaped(const char *s)
{
    static const char shape[] = "dddddddd-dddddd-xxxx";
    if (strlen(s) != sizeof(shape) - 1)
        return 0;
    for (size_t i = 0; shape[i]; i++) {
        char c = s[i];
        int ok = shape[i] == 'd'   ? (c >= '0' && c <= '9')
                 : shape[i] == 'x' ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
                                   : c == shape[i];
        if (!ok)
            return 0;
    }
    return 1;
}

int ar_cli_worktrees_merge(const struct ar_cli_command *cmd, struct ar_worktree_merge_options *o,
                           int json_format, int argc, char **argv, int ind)
{
    int n = argc - ind;
    if (n == 1 && session_shaped(argv[ind]))
        o->session = argv[ind];
    else if (n > 0)
        o->branches = (const char *const *)(argv + ind); /* argv[argc] is NULL */
    struct ar_worktree_merge_result r;
    struct ar_error err = AR_ERROR_INIT;
    int signum = 0;
    int rc = ar_cli_merge(o, &r, &signum, &err);
    if (rc < 0) {
        if (rc == AR_ENOMEM)
            return ar_cli_out_of_memory();
        if (rc == AR_EINTERRUPTED)
            ar_cli_errorf("interrupted: nothing merged, no branch changed, no scratch worktree "
                          "left");
        else if (rc == AR_EUSAGE)
            return ar_cli_usage_error(cmd, "%s", err.msg);
        else
            ar_cli_errorf("%s", err.msg);
        return ar_cli_merge_exit_status(rc, NULL, signum);
    }
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    int status = ar_cli_merge_exit_status(0, &r, 0);
    if ((json_format ? ar_cli_merge_json(&r, &out) : ar_cli_merge_text(&r, "", &out)) < 0)
        status = ar_cli_out_of_memory();
    else if (ar_cli_write_stdout(out.data, out.len) != 0)
        status = AR_EXIT_USAGE;
    ar_buf_finish(&out);
    ar_worktree_merge_result_finish(&r);
    return status;
}

int ar_cli_batch_branches_add(struct ar_cli_batch_branches *b, const struct ar_result *result)
{
    const struct ar_result_worktree *w = result ? result->worktree : NULL;
    if (!w || !w->branch || !w->commit)
        return 0;
    return ar_strv_push(&b->v, w->branch) < 0 ? AR_ENOMEM : 0;
}

void ar_cli_batch_branches_finish(struct ar_cli_batch_branches *b)
{
    ar_strv_finish(&b->v);
}

int ar_cli_batch_merge(struct ar_worktree_merge_options *o, struct ar_cli_batch_branches *b,
                       int log_json)
{
    if (b->v.n == 0) {
        if (ar_cli_verbosity >= 0 && !log_json)
            fprintf(stderr, "agentrun batch: no branch holds a commit: nothing to merge\n");
        return AR_EXIT_OK;
    }
    o->branches = ar_strv_get(&b->v);
    struct ar_worktree_merge_result r;
    struct ar_error err = AR_ERROR_INIT;
    int signum = 0;
    int rc = ar_cli_merge(o, &r, &signum, &err);
    o->branches = NULL;
    if (rc < 0) {
        if (rc == AR_EINTERRUPTED)
            ar_cli_errorf("merge interrupted: no branch changed, no scratch worktree left");
        else
            ar_cli_errorf("cannot merge the branches: %s", err.msg);
        return ar_cli_merge_exit_status(rc, NULL, signum);
    }
    int status = ar_cli_merge_exit_status(0, &r, 0);
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    if (log_json) {
        json_t *e = json_pack("{s:s,s:s,s:o,s:s,s:I,s:I,s:I}", "level", "info", "event",
                              "batch_merged", "into", ar_json_text(r.into, strlen(r.into)), "head",
                              r.head, "branches", (json_int_t)r.n, "merged", (json_int_t)r.merged,
                              "left_out", (json_int_t)r.left_out);
        ar_cli_print_json_event(e);
    } else if (ar_cli_verbosity >= 0) {
        if (ar_cli_merge_text(&r, "agentrun batch: ", &out) < 0 ||
            ar_buf_printf(&out, "agentrun batch: %zu of %zu branch%s merged\n", r.merged, r.n,
                          r.n == 1 ? "" : "es") < 0)
            status = ar_cli_out_of_memory();
        else
            fputs(ar_buf_cstr(&out), stderr);
    }
    ar_buf_finish(&out);
    ar_worktree_merge_result_finish(&r);
    return status;
}
