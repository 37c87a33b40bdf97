/* agentrun worktrees: what runs with a worktree of their own left in a repository, and
 * taking it away (git/worktrees.h decides what is agentrun's). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "agentrun/worktrees.h"
#include "cli/merge.h"
#include "cli/terminal.h"
#include "util/json_dump.h"
#include "util/buf.h"

enum {
    OPT_FORMAT = 256,
    OPT_FORCE,
    OPT_BRANCHES,
    OPT_INTO,
    OPT_CHECK,
    OPT_CHECK_TIMEOUT,
};

static const struct ar_cli_opt worktrees_opts[] = {
    { "directory", 'C', "DIR", "the repository (default: the current directory)", "@dir" },
    { "format", OPT_FORMAT, "FORMAT", "list and merge output: text or json (default: text)",
      "text|json" },
    { "force", OPT_FORCE, NULL,
      "prune: also remove worktrees that hold uncommitted changes (default: keep them)", NULL },
    { "branches", OPT_BRANCHES, NULL,
      "prune: also delete agentrun branches whose commits HEAD does not have (default: only "
      "the ones HEAD has, merged or never moved)",
      NULL },
    { "quiet", 'q', NULL, "prune: say nothing but errors", NULL },
    { "into", OPT_INTO, "BRANCH",
      "merge: the integration branch, made from the branches' base or extended, never reset "
      "(default: agentrun/ID/merged)",
      NULL },
    { "check", OPT_CHECK, "CMD",
      "merge: run CMD (sh -c) on each branch's merge in a scratch worktree; a branch whose "
      "merge fails it is left out (default: no check)",
      NULL },
    { "check-timeout", OPT_CHECK_TIMEOUT, "SECS",
      "merge: end a check after SECS (s, m, h suffixes; default: 600)", NULL },
    { NULL, 0, NULL, NULL, NULL },
};

static json_t *entry_value(const struct ar_worktree_entry *e)
{
    return json_pack("{s:o,s:s,s:o,s:b,s:b,s:o}", "branch",
                     e->branch ? ar_json_text(e->branch, strlen(e->branch)) : json_null(), "commit",
                     e->head, "worktree",
                     e->path ? ar_json_text(e->path, strlen(e->path)) : json_null(), "missing",
                     e->missing, "merged", e->merged, "locked",
                     e->locked ? ar_json_text(e->locked, strlen(e->locked)) : json_null());
}

static int list(const struct ar_worktree_list *l, int json_format)
{
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    int rc = 0;
    if (json_format) {
        json_t *v = json_array();
        for (size_t i = 0; i < l->n; i++)
            json_array_append_new(v, entry_value(&l->v[i]));
        json_t *o = json_pack("{s:o,s:o,s:o}", "repository", ar_json_text(l->top, strlen(l->top)),
                              "folder", ar_json_text(l->dir, strlen(l->dir)), "entries", v);
        char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT) : NULL;
        rc = s ? ar_buf_printf(&out, "%s\n", s) : AR_ENOMEM;
        free(s);
        json_decref(o);
    } else {
        int w = 0;
        for (size_t i = 0; i < l->n; i++)
            if (l->v[i].branch && (int)strlen(l->v[i].branch) > w)
                w = (int)strlen(l->v[i].branch);
        for (size_t i = 0; i < l->n && rc == 0; i++) {
            const struct ar_worktree_entry *e = &l->v[i];
            char lock[160] = "";
            if (e->locked)
                snprintf(lock, sizeof(lock), "  (locked%s%.120s)", *e->locked ? ": " : "",
                         e->locked);
            size_t from = out.len;
            rc = ar_buf_printf(&out, "%-*s  %.12s  %s%s%s%s", w,
                               e->branch ? e->branch : "(no branch)", e->head,
                               e->path ? e->path : "-", e->missing ? "  (folder gone)" : "",
                               e->merged ? "  (in HEAD)" : "", lock);
            /* Names and a lock's reason are data: one line, shown as such (util/shown.h). */
            if (rc == 0)
                rc = ar_cli_line_neutralize(&out, from);
            if (rc == 0)
                rc = ar_buf_putc(&out, '\n');
        }
    }
    if (rc < 0) {
        ar_buf_finish(&out);
        return ar_cli_out_of_memory();
    }
    int status = ar_cli_write_stdout(out.data, out.len) == 0 ? AR_EXIT_OK : AR_EXIT_USAGE;
    if (status)
        ar_cli_errorf("cannot write to stdout");
    ar_buf_finish(&out);
    /* An empty list is an answer too: said where a person reads it, stdout left empty
     * for a script that counts lines. */
    if (!json_format && l->n == 0 && ar_cli_verbosity >= 0)
        fprintf(stderr,
                "agentrun: no agentrun worktrees or branches in %s (runs with "
                "--worktree make them in %s)\n",
                l->top, l->dir);
    return status;
}

struct prune_count {
    size_t removed, kept;
};

static void on_pruned(void *arg, const struct ar_worktree_entry *e,
                      enum ar_worktree_prune_outcome outcome, int branch_deleted, const char *why)
{
    struct prune_count *c = arg;
    const char *what = e->path ? e->path : e->branch;
    int removed = outcome == AR_WORKTREE_PRUNE_REMOVED;
    c->removed += removed;
    c->kept += !removed;
    if (ar_cli_verbosity < 0)
        return;
    /* Paths, branches and git's reasons are data: one line each (util/shown.h). */
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int rc = removed
                 ? ar_buf_printf(&b, "removed %s%s%s%s", e->path ? "worktree " : "branch ", what,
                                 e->path && branch_deleted ? " and its branch " : "",
                                 e->path && branch_deleted ? e->branch : "")
                 : ar_buf_printf(&b, "kept %s%s: %s", e->path ? "worktree " : "branch ", what, why);
    if (rc == 0 && ar_cli_line_neutralize(&b, 0) == 0)
        fprintf(stderr, "agentrun: %s\n", ar_buf_cstr(&b));
    ar_buf_finish(&b);
}

static int run_worktrees(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_parser ps;
    const char *dir = NULL, *arg;
    int json_format = 0, key, merge_opts = 0;
    unsigned flags = 0;
    struct ar_worktree_merge_options mo = AR_WORKTREE_MERGE_OPTIONS_INIT;
    unsigned long long ms;
    ar_cli_parser_init(&ps, cmd, argc, argv);
    while ((key = ar_cli_next(&ps, &arg)) >= 0) {
        switch (key) {
        case 'C':
            dir = arg;
            break;
        case OPT_FORMAT:
            if ((json_format = ar_cli_choice(cmd, OPT_FORMAT, arg)) < 0) {
                ar_cli_parser_finish(&ps);
                return AR_EXIT_USAGE;
            }
            break;
        case OPT_FORCE:
            flags |= AR_WORKTREE_PRUNE_FORCE;
            break;
        case OPT_BRANCHES:
            flags |= AR_WORKTREE_PRUNE_BRANCHES;
            break;
        case 'q':
            ar_cli_verbosity = -1;
            break;
        case OPT_INTO:
            mo.into = arg;
            merge_opts = 1;
            break;
        case OPT_CHECK:
            mo.check = arg;
            merge_opts = 1;
            break;
        case OPT_CHECK_TIMEOUT:
            if (ar_cli_parse_duration_ms(arg, &ms) < 0 || ms == 0) {
                ar_cli_parser_finish(&ps);
                return ar_cli_usage_error(cmd, "invalid --check-timeout '%s'", arg);
            }
            mo.check_timeout_ms = ms;
            merge_opts = 1;
            break;
        }
    }
    int ind = ps.ind;
    ar_cli_parser_finish(&ps);
    if (key == -2)
        return ps.status;
    if (ind < argc && strcmp(argv[ind], "merge") == 0) {
        if (flags)
            return ar_cli_usage_error(cmd, "--force and --branches go with prune");
        mo.cwd = dir;
        return ar_cli_worktrees_merge(cmd, &mo, json_format, argc, argv, ind + 1);
    }
    if (merge_opts)
        return ar_cli_usage_error(cmd, "--into, --check and --check-timeout go with merge");
    int prune = ar_cli_subcommand(cmd, argc, argv, ind, "list|prune|merge");
    if (prune < 0)
        return AR_EXIT_USAGE;
    if (!prune && flags)
        return ar_cli_usage_error(cmd, "--force and --branches go with prune");
    struct ar_worktree_list l;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_worktree_list(dir, NULL, &l, &err) < 0) {
        if (err.code == AR_ENOMEM)
            return ar_cli_out_of_memory();
        ar_cli_errorf("%s", err.msg);
        return ar_error_exit_status(err.code);
    }
    int status;
    if (!prune) {
        status = list(&l, json_format);
    } else {
        struct prune_count c = { 0, 0 };
        status = AR_EXIT_OK;
        if (ar_worktree_prune(&l, flags, on_pruned, &c, &err) < 0) {
            ar_cli_errorf("%s", err.msg);
            status = ar_error_exit_status(err.code);
        } else if (ar_cli_verbosity >= 0) {
            fprintf(stderr, "agentrun: %zu removed, %zu kept\n", c.removed, c.kept);
        }
    }
    ar_worktree_list_finish(&l);
    return status;
}

const struct ar_cli_command ar_cmd_worktrees = {
    .name = "worktrees",
    .synopsis = "[options] list | prune | merge [SESSION | BRANCH...]",
    .summary = "list, remove or merge back the worktrees and branches runs with --worktree left",
    .description =
        "A run or batch job with a worktree of its own (run --worktree, batch --worktrees) "
        "works in a git worktree in agentrun's folder ($AGENTRUN_WORKTREE_DIR, else "
        "$XDG_STATE_HOME/agentrun/worktrees, else ~/.local/state/agentrun/worktrees) on a branch "
        "agentrun/ID/JOB. 'list' shows the repository's worktrees in that folder and its "
        "agentrun/ID/JOB branches; 'prune' removes those worktrees that hold nothing uncommitted, "
        "and the branches whose commits HEAD has. No other worktree or branch is touched. "
        "'merge' merges a batch's branches (default: the latest ID's) into one integration "
        "branch without touching any checkout: a branch that conflicts with what is merged, or "
        "whose merge fails --check, is left out and named with why. Exit 0 when every branch "
        "merged, 1 when some were left out, 2 usage, 4 git failed. "
        "See " AR_DOCDIR "/worktrees.md.",
    .example = "agentrun worktrees merge --check 'make test'",
    .opts = worktrees_opts,
    .run = run_worktrees,
};
