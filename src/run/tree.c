/* A run's own worktree: its branch, and its end (run/tree.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc.h"
#include "run/tree.h"
#include "util/log.h"

int ar_run_tree_make(struct ar_loop *loop, const struct ar_run_options *o,
                     ar_git_tree_made_fn *done, void *arg, struct ar_error *err)
{
    char branch[256];
    if (!o->worktree_branch) {
        char session[AR_GIT_SESSION_SIZE];
        ar_git_tree_session_id(session);
        ar_git_tree_branch(session, o->job_id, branch, sizeof(branch));
    }
    struct ar_git_tree_spec spec = { o->cwd, o->worktree_base,
                                     o->worktree_branch ? o->worktree_branch : branch, NULL };
    return ar_git_tree_make(loop, &spec, done, arg, err);
}

struct finish {
    const struct ar_run_options *o;
    struct ar_result_draft *d;
    ar_run_tree_done_fn *done;
    void *arg;
};

/* Where the worktree left the run's work, into the result. */
static void record(struct ar_result_draft *d, const struct ar_git_tree *t)
{
    if (ar_result_draft_worktree(d, t->path, !t->removed, t->branch_deleted ? NULL : t->branch,
                                 t->base, *t->commit ? t->commit : NULL) < 0)
        ar_result_draft_fail(d, AR_ENOMEM, "%s", "out of memory");
}

static void on_finished(struct ar_git_tree *t, const struct ar_error *err, void *arg)
{
    struct finish *f = arg;
    if (err)
        ar_result_draft_fail(f->d, err->code, "%s; the run's changes are in '%s'", err->msg,
                             t->path);
    /* Uncommitted changes are the usual reason, and the result says where they are;
     * anything else keeping it is worth a warning. */
    if (!t->removed && !f->o->keep_worktree)
        ar_log(&f->o->logger,
               strcmp(t->kept_why, AR_GIT_TREE_UNCOMMITTED) == 0 ? AR_LOG_INFO : AR_LOG_WARN,
               "the worktree '%s' is kept: %s", t->path, t->kept_why);
    record(f->d, t);
    struct finish copy = *f;
    free(f);
    copy.done(copy.arg);
}

/* The commit message: the job, and who made it from what. */
static void commit_message(const struct ar_run_options *o, const struct ar_result *r,
                           const struct ar_git_tree *t, char *out, size_t size)
{
    char job[101];
    const char *id = o->job_id ? o->job_id : "run";
    size_t n = 0;
    /* One line: a control character in the id would start another. */
    for (; id[n] && n < sizeof(job) - 1; n++)
        job[n] = (unsigned char)id[n] < 0x20 || id[n] == 0x7f ? '?' : id[n];
    job[n] = '\0';
    snprintf(out, size, "agentrun: %s\n\nMade by agentrun with %s%s%s%s from %.12s.\n", job,
             r->provider ? r->provider : "a CLI", r->model ? " (" : "", r->model ? r->model : "",
             r->model ? ")" : "", t->base);
}

int ar_run_tree_finish(struct ar_loop *loop, struct ar_git_tree *tree,
                       const struct ar_run_options *o, struct ar_result_draft *d,
                       ar_run_tree_done_fn *done, void *arg)
{
    char msg[512];
    struct ar_error err = AR_ERROR_INIT;
    struct finish *f = calloc(1, sizeof(*f));
    commit_message(o, d->res, tree, msg, sizeof(msg));
    /* Only a run that did what was asked commits: a failed one's changes stay
     * uncommitted in its worktree, which is then kept for a look. */
    struct ar_git_tree_end end = { o->worktree_commit && !d->res->error.code, msg,
                                   o->keep_worktree };
    if (f) {
        *f = (struct finish){ o, d, done, arg };
        if (ar_git_tree_finish(loop, tree, &end, on_finished, f, &err) == 0)
            return 0;
    } else {
        ar_error_set(&err, AR_ENOMEM, NULL, "out of memory");
    }
    free(f);
    ar_result_draft_fail(d, err.code, "%s", err.msg);
    tree->removed = 0;
    record(d, tree);
    return -1;
}
