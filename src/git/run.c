/* Running git with the hardened command line and environment of run.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "git/run.h"

const char *const ar_git_env[] = { "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0",
                                   "LC_ALL=C", NULL };

static const char *const prefix[] = { "git", "-c", "core.fsmonitor=false", NULL };

static const char *const no_hooks[] = { "-c", "core.hooksPath=/dev/null", NULL };

/* Who a commit is by where git knows no one (AR_GIT_FALLBACK_IDENTITY). */
static const char *const fallback_identity[] = { "-c", "user.name=agentrun", "-c",
                                                 "user.email=agentrun@localhost", NULL };

/* diff.autoRefreshIndex=true: a file whose stat data changed but not its content is
 * no change; with it false, git's raw list names the file and its patch does not. */
static const char *const output_pins[] = {
    "-c", "core.quotepath=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.relative=false",  "-c", "color.ui=never",      "-c", "diff.autoRefreshIndex=true",
    NULL,
};

/* The commands that print diffs and honour diff.external and textconv drivers. */
static const char *const diff_commands[] = { "diff", "log", "show", NULL };

/* --text: git never prints "Binary files … differ" for a file its attributes (-diff,
 * binary, a diff driver's binary setting) or its NUL heuristic call binary; agentrun
 * judges the content itself (review/diff.h, ar_diff_text_is_binary()).
 * --ignore-submodules=none: a submodule's "ignore" setting (in the checkout's own
 * .gitmodules, or the config) never hides that the submodule changed. */
static const char *const diff_opts[] = {
    "--no-color", "--no-ext-diff", "--no-textconv", "--text", "--ignore-submodules=none", NULL
};

static int prints_diffs(const char *subcommand)
{
    for (size_t i = 0; diff_commands[i]; i++)
        if (strcmp(subcommand, diff_commands[i]) == 0)
            return 1;
    return 0;
}

static int argv_of(const struct ar_git_cmd *cmd, int identity, struct ar_strv *argv)
{
    const char *const *args = cmd->args;
    int rc = ar_strv_pushv(argv, prefix);
    if (!rc && identity)
        rc = ar_strv_pushv(argv, fallback_identity);
    if (!rc && (cmd->flags & AR_GIT_NO_HOOKS))
        rc = ar_strv_pushv(argv, no_hooks);
    if (!rc && (cmd->flags & AR_GIT_PIN_OUTPUT))
        rc = ar_strv_pushv(argv, output_pins);
    if (!rc && cmd->git_dir)
        rc = ar_strv_pushf(argv, "--git-dir=%s", cmd->git_dir);
    if (!rc && cmd->work_tree)
        rc = ar_strv_pushf(argv, "--work-tree=%s", cmd->work_tree);
    if (!rc && args[0]) {
        rc = ar_strv_push(argv, args[0]);
        if (!rc && prints_diffs(args[0]))
            rc = ar_strv_pushv(argv, diff_opts);
        if (!rc)
            rc = ar_strv_pushv(argv, args + 1);
    }
    return rc ? AR_ENOMEM : 0;
}

int ar_git_argv(const struct ar_git_cmd *cmd, struct ar_strv *argv)
{
    return argv_of(cmd, 0, argv);
}

/* The child's options for cmd, whose argv the caller has built. */
static void child_opts(const struct ar_git_cmd *cmd, const struct ar_strv *argv,
                       struct ar_child_opts *o)
{
    o->argv = ar_strv_get(argv);
    o->cwd = cmd->cwd;
    o->env = ar_git_env;
    o->stdin_data = cmd->stdin_data;
    o->stdin_len = cmd->stdin_data ? cmd->stdin_len : 0;
    o->timeout_ms = cmd->timeout_ms;
    o->output_cap = cmd->output_cap;
    o->capture_stdout = 1;
    o->after_cancel = (cmd->flags & AR_GIT_AFTER_CANCEL) != 0;
    o->finish_on_cancel = (cmd->flags & AR_GIT_FINISH_ON_CANCEL) != 0;
}

/* Whether git knows who a commit where cmd runs would be by: `git var GIT_COMMITTER_IDENT`
 * fails as `git commit` would ("Please tell me who you are"). When git cannot be asked,
 * it is taken to know: the command itself then says what is wrong. */
static int knows_identity(const struct ar_git_cmd *cmd)
{
    static const char *const var[] = { "var", "GIT_COMMITTER_IDENT", NULL };
    struct ar_git_cmd probe = AR_GIT_CMD_INIT;
    probe.args = var;
    probe.cwd = cmd->cwd;
    probe.git_dir = cmd->git_dir;
    probe.work_tree = cmd->work_tree;
    probe.timeout_ms = cmd->timeout_ms;
    probe.flags = cmd->flags & (AR_GIT_NO_HOOKS | AR_GIT_AFTER_CANCEL | AR_GIT_FINISH_ON_CANCEL);
    struct ar_child_sync out;
    if (ar_git_run(&probe, &out, NULL) != 0)
        return 1;
    int known = out.res.end != AR_CHILD_EXITED || out.res.status == 0;
    ar_child_sync_finish(&out);
    return known;
}

/* The command line of cmd, with the fallback identity when it asks and git knows none. */
static int full_argv(const struct ar_git_cmd *cmd, struct ar_strv *argv)
{
    int identity = (cmd->flags & AR_GIT_FALLBACK_IDENTITY) && !knows_identity(cmd);
    return argv_of(cmd, identity, argv);
}

int ar_git_worktree_race(const struct ar_git_cmd *cmd, const struct ar_child_result *res,
                         unsigned tries, uintptr_t seed, uint64_t *wait_ms)
{
    if (res->end != AR_CHILD_EXITED || res->status == 0 || tries >= AR_GIT_RACE_TRIES ||
        !res->stderr_tail)
        return 0;
    char why[1024], mine[1024];
    ar_git_stderr_line(res->stderr_tail, res->stderr_tail_len, why, sizeof(why));
    int met = strstr(why, ".git/worktrees/") != NULL;
    if (!met && cmd->common_dir && *cmd->common_dir) {
        snprintf(mine, sizeof(mine), "%s/worktrees/", cmd->common_dir);
        met = strstr(why, mine) != NULL;
    }
    if (!met)
        return 0;
    *wait_ms = 25 * (uint64_t)(1 + tries % 4) + (seed >> 4) % 20;
    return 1;
}

int ar_git_start(struct ar_loop *loop, const struct ar_git_cmd *cmd, ar_child_done_fn *done,
                 void *arg, struct ar_error *err)
{
    struct ar_strv argv = AR_STRV_INIT;
    if (full_argv(cmd, &argv)) {
        ar_strv_finish(&argv);
        return ar_error_set(err, AR_ENOMEM, "git", "out of memory");
    }
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    child_opts(cmd, &argv, &o);
    o.on_done = done;
    o.arg = arg;
    /* The spawn copies argv into the new process: it is ours to free at once. */
    int rc = ar_child_spawn(loop, &o, NULL, err);
    ar_strv_finish(&argv);
    return rc;
}

int ar_git_run(const struct ar_git_cmd *cmd, struct ar_child_sync *out, struct ar_error *err)
{
    struct ar_strv argv = AR_STRV_INIT;
    if (full_argv(cmd, &argv)) {
        ar_strv_finish(&argv);
        memset(out, 0, sizeof(*out));
        return ar_error_set(err, AR_ENOMEM, "git", "out of memory");
    }
    struct ar_child_opts o = AR_CHILD_OPTS_INIT;
    child_opts(cmd, &argv, &o);
    int rc;
    uint64_t ms;
    for (unsigned tries = 0;; tries++) {
        rc = ar_child_run_sync(&o, out, err);
        if (rc || !(cmd->flags & AR_GIT_RETRY_WORKTREE_RACE) ||
            !ar_git_worktree_race(cmd, &out->res, tries, (uintptr_t)out, &ms))
            break;
        ar_child_sync_finish(out);
        struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
    ar_strv_finish(&argv);
    return rc;
}

const char *ar_git_stderr_line(const char *tail, size_t len, char *buf, size_t n)
{
    size_t k = 0;
    if (tail) {
        const char *nl = memchr(tail, '\n', len);
        k = nl ? (size_t)(nl - tail) : len;
    }
    if (k >= n)
        k = n - 1;
    if (k)
        memcpy(buf, tail, k);
    buf[k] = '\0';
    return buf;
}
