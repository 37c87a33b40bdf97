/*
 * src/git/worktrees.c against the real git: a run's worktree made and
 * finished on a loop in a temporary repository, including what a hostile CLI
 * could do to it meanwhile (rewrite its .git file, switch its branch, delete
 * it). Test setup shells out to git; the code under test runs git only
 * through the supervisor. Skipped (77) without git.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/internal.h"
#include "git/worktrees.h"
#include "proc/proc.h"

static char tmp[256], repo[300], dir[300];

static void sh(const char *fmt, ...) AR_PRINTF(1, 2);
static void sh(const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", repo);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
    va_end(ap);
    if (system(cmd) != 0)
        fail_msg("fixture command failed: %s", cmd);
}

/* The first line git prints for a command run in the repository ("" when none). */
static void out(char *buf, size_t n, const char *fmt, ...) AR_PRINTF(3, 4);
static void out(char *buf, size_t n, const char *fmt, ...)
{
    char cmd[4096];
    int k = snprintf(cmd, sizeof(cmd), "cd '%s' && ", repo);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + k, sizeof(cmd) - (size_t)k, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    buf[0] = '\0';
    if (fgets(buf, (int)n, p))
        buf[strcspn(buf, "\n")] = '\0';
    pclose(p);
}

/* A repository with a.txt and sub/b.txt committed, and a main checkout made dirty
 * (a.txt changed, u.txt untracked) that no worktree may touch. */
static int make_repo(void **state)
{
    snprintf(tmp, sizeof(tmp), "%s/agentrun-test-worktrees-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp))
        return -1;
    char real[256];
    if (!realpath(tmp, real))
        return -1;
    snprintf(tmp, sizeof(tmp), "%s", real);
    snprintf(repo, sizeof(repo), "%s/repo", tmp);
    snprintf(dir, sizeof(dir), "%s/trees", tmp);
    if (mkdir(repo, 0700) != 0)
        return -1;
    sh("git init -q -b main . && printf 'a\\n' > a.txt && mkdir sub && printf 'b\\n' > sub/b.txt "
       "&& git add -A && git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false "
       "commit -q -m init && printf 'dirty\\n' >> a.txt && printf 'u\\n' > u.txt");
    return 0;
}

static int remove_repo(void **state)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", tmp, tmp);
    return system(cmd) == 0 ? 0 : -1;
}

struct made {
    int done;
    struct ar_git_tree *tree;
    struct ar_error err;
};

static void on_made(struct ar_git_tree *tree, const struct ar_error *err, void *arg)
{
    struct made *m = arg;
    m->done++;
    m->tree = tree;
    if (err)
        m->err = *err;
}

static void on_finished(struct ar_git_tree *tree, const struct ar_error *err, void *arg)
{
    struct made *m = arg;
    m->done++;
    if (err)
        m->err = *err;
}

static void cancel_now(void *arg, int cancelled)
{
    (void)cancelled;
    ar_loop_cancel_all(arg);
}

/* Makes a worktree (cwd NULL: the repository's top) and runs the loop until it is made;
 * cancel_ms > 0: a Ctrl-C that many milliseconds after it started. */
static struct ar_git_tree *make(const char *cwd, const char *base, const char *branch,
                                int cancel_ms, struct ar_error *err)
{
    struct ar_error e = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&e);
    assert_non_null(loop);
    struct made m = { 0, NULL, AR_ERROR_INIT };
    struct ar_git_tree_spec spec = { cwd ? cwd : repo, base, branch, dir };
    assert_int_equal(ar_git_tree_make(loop, &spec, on_made, &m, &e), 0);
    assert_int_equal(m.done, 0); /* never from inside */
    if (cancel_ms)
        assert_int_equal(ar_wait_start(loop, (uint64_t)cancel_ms, cancel_now, loop, NULL), 0);
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(m.done, 1);
    *err = m.err;
    assert_true(!m.tree == !!m.err.code);
    return m.tree;
}

static void finish(struct ar_git_tree *t, int commit, int keep, struct ar_error *err)
{
    struct ar_error e = AR_ERROR_INIT;
    struct ar_loop *loop = ar_loop_create(&e);
    struct made m = { 0, NULL, AR_ERROR_INIT };
    struct ar_git_tree_end end = { commit, "agentrun: t1\n\nA test.\n", keep };
    assert_int_equal(ar_git_tree_finish(loop, t, &end, on_finished, &m, &e), 0);
    assert_int_equal(m.done, 0);
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(m.done, 1);
    *err = m.err;
}

static void write_in(const char *at, const char *name, const char *text)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", at, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The main checkout as the worktree found it: a.txt dirty, u.txt untracked, on main. */
static void assert_main_untouched(void)
{
    char got[512];
    out(got, sizeof(got), "git status --porcelain | tr '\\n' ';'");
    assert_string_equal(got, " M a.txt;?? u.txt;");
    out(got, sizeof(got), "cat a.txt | tr '\\n' ';'");
    assert_string_equal(got, "a;dirty;");
    out(got, sizeof(got), "git symbolic-ref HEAD");
    assert_string_equal(got, "refs/heads/main");
}

static void assert_no_missing_worktree(void)
{
    char got[512];
    out(got, sizeof(got), "git worktree list --porcelain | grep -c prunable || true");
    assert_string_equal(got, "0");
}

static int branch_exists(const char *b)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "cd '%s' && git rev-parse -q --verify 'refs/heads/%s' >/dev/null",
             repo, b);
    return system(cmd) == 0;
}

static void test_made_from_head_in_the_subdirectory_asked(void **state)
{
    char sub[400], head[100], want[700];
    snprintf(sub, sizeof(sub), "%s/sub", repo);
    struct ar_error err;
    struct ar_git_tree *t = make(sub, NULL, "agentrun/s1/t1", 0, &err);
    assert_non_null(t);
    out(head, sizeof(head), "git rev-parse HEAD");
    assert_string_equal(t->base, head);
    assert_string_equal(t->top, repo);
    assert_string_equal(t->branch, "agentrun/s1/t1");
    /* <dir>/<repo>-<hash>/<branch>, and the run goes to the same subdirectory. */
    snprintf(want, sizeof(want), "%s/repo-", dir);
    assert_memory_equal(t->path, want, strlen(want));
    assert_non_null(strstr(t->path, "/agentrun/s1/t1"));
    snprintf(want, sizeof(want), "%s/sub", t->path);
    assert_string_equal(t->cwd, want);
    /* It holds the base commit, not the main checkout's changes. */
    snprintf(want, sizeof(want), "%s/u.txt", t->path);
    assert_int_equal(access(want, F_OK), -1);
    assert_true(branch_exists("agentrun/s1/t1"));
    assert_main_untouched();

    /* Nothing changed: the worktree and its branch go. */
    finish(t, 1, 0, &err);
    assert_int_equal(err.code, 0);
    assert_true(t->removed);
    assert_true(t->branch_deleted);
    assert_string_equal(t->commit, "");
    assert_int_equal(access(t->path, F_OK), -1);
    assert_false(branch_exists("agentrun/s1/t1"));
    /* Its emptied folders went with it; the worktree folder stays. */
    assert_int_equal(access(dir, F_OK), 0);
    char left[512];
    snprintf(left, sizeof(left), "ls -A '%s' | wc -l", dir);
    out(left, sizeof(left), "ls -A '%s' | wc -l", dir);
    assert_string_equal(left, "0");
    assert_main_untouched();
    assert_no_missing_worktree();
    ar_git_tree_destroy(t);
}

static void test_a_commit_holds_the_change_and_the_worktree_goes(void **state)
{
    struct ar_error err;
    struct ar_git_tree *t = make(NULL, NULL, "agentrun/s1/t2", 0, &err);
    assert_non_null(t);
    write_in(t->cwd, "new.txt", "new\n");
    write_in(t->cwd, "a.txt", "changed\n");
    finish(t, 1, 0, &err);
    assert_int_equal(err.code, 0);
    assert_true(t->removed);
    assert_false(t->branch_deleted);
    assert_int_equal(strlen(t->commit), 40);
    char got[512];
    out(got, sizeof(got), "git diff --name-status %s agentrun/s1/t2 | tr '\\n\\t' '; '", t->base);
    assert_string_equal(got, "M a.txt;A new.txt;");
    out(got, sizeof(got), "git log -1 --format=%%s agentrun/s1/t2");
    assert_string_equal(got, "agentrun: t1");
    out(got, sizeof(got), "git rev-parse agentrun/s1/t2");
    assert_string_equal(got, t->commit);
    assert_main_untouched();
    assert_no_missing_worktree();
    ar_git_tree_destroy(t);
}

static void test_uncommitted_changes_keep_the_worktree(void **state)
{
    struct ar_error err;
    struct ar_git_tree *t = make(NULL, NULL, "agentrun/s1/t3", 0, &err);
    assert_non_null(t);
    write_in(t->cwd, "new.txt", "new\n");
    finish(t, 0, 0, &err);
    assert_int_equal(err.code, 0);
    assert_false(t->removed);
    assert_string_equal(t->kept_why, AR_GIT_TREE_UNCOMMITTED);
    assert_false(t->branch_deleted);
    assert_string_equal(t->commit, "");
    char p[700];
    snprintf(p, sizeof(p), "%s/new.txt", t->path);
    assert_int_equal(access(p, F_OK), 0);
    assert_main_untouched();
    ar_git_tree_destroy(t);

    /* keep: a worktree with nothing in it stays too, and so does its branch. */
    t = make(NULL, NULL, "agentrun/s1/t4", 0, &err);
    assert_non_null(t);
    finish(t, 1, 1, &err);
    assert_false(t->removed);
    assert_false(t->branch_deleted);
    assert_int_equal(access(t->path, F_OK), 0);
    ar_git_tree_destroy(t);
}

/* A CLI that points the worktree's .git file at the main repository cannot make the
 * commit land there: the commit names its own git dir and work tree. */
static void test_a_rewritten_dot_git_file_redirects_nothing(void **state)
{
    struct ar_error err;
    struct ar_git_tree *t = make(NULL, NULL, "agentrun/s1/t5", 0, &err);
    assert_non_null(t);
    char before[100], after[100], line[700];
    out(before, sizeof(before), "git rev-parse main");
    snprintf(line, sizeof(line), "gitdir: %s/.git\n", repo);
    write_in(t->path, ".git", line);
    write_in(t->path, "evil.txt", "x\n");
    finish(t, 1, 0, &err);
    assert_int_equal(err.code, 0);
    out(after, sizeof(after), "git rev-parse main");
    assert_string_equal(before, after);
    assert_main_untouched(); /* the main index has no evil.txt staged either */
    assert_int_equal(strlen(t->commit), 40);
    char got[512];
    out(got, sizeof(got), "git diff --name-only %s agentrun/s1/t5 | tr '\\n' ';'", t->base);
    assert_string_equal(got, "evil.txt;"); /* git never tracks a .git */
    /* git will not remove a worktree whose .git does not point back: it is kept. */
    assert_false(t->removed);
    ar_git_tree_destroy(t);
}

/* A CLI that switched the worktree to another branch gets nothing committed there. */
static void test_no_commit_on_another_branch(void **state)
{
    struct ar_error err;
    sh("git branch other");
    char other[100];
    out(other, sizeof(other), "git rev-parse other");
    struct ar_git_tree *t = make(NULL, NULL, "agentrun/s1/t6", 0, &err);
    assert_non_null(t);
    char cmd[800];
    snprintf(cmd, sizeof(cmd), "cd '%s' && git checkout -q other && echo x > x.txt", t->path);
    assert_int_equal(system(cmd), 0);
    finish(t, 1, 0, &err);
    assert_int_equal(err.code, AR_EIO);
    assert_non_null(strstr(err.msg, "no longer on its branch"));
    char now[100];
    out(now, sizeof(now), "git rev-parse other");
    assert_string_equal(now, other);
    assert_false(t->removed);
    ar_git_tree_destroy(t);
}

/* A CLI that deleted its whole worktree leaves no registration behind. */
static void test_a_deleted_worktree_leaves_nothing_registered(void **state)
{
    struct ar_error err;
    struct ar_git_tree *t = make(NULL, NULL, "agentrun/s1/t7", 0, &err);
    assert_non_null(t);
    char cmd[800];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->path);
    assert_int_equal(system(cmd), 0);
    finish(t, 1, 0, &err);
    assert_true(t->removed);
    assert_true(t->branch_deleted);
    assert_no_missing_worktree();
    char got[100];
    out(got, sizeof(got), "git worktree list | wc -l");
    assert_string_equal(got, "1");
    ar_git_tree_destroy(t);
}

static void test_what_cannot_be_made_is_told_and_left_clean(void **state)
{
    struct ar_error err;
    sh("git branch agentrun/s1/taken");
    char taken[100];
    out(taken, sizeof(taken), "git rev-parse agentrun/s1/taken");

    assert_null(make(NULL, "no-such-rev", "agentrun/s1/t8", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_non_null(strstr(err.msg, "does not name a commit"));
    assert_null(make(NULL, "main..main", "agentrun/s1/t8", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_null(make(NULL, "--output=/tmp/x", "agentrun/s1/t8", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_null(make(NULL, NULL, "-b", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_null(make(NULL, NULL, "agentrun/../../x", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    /* An existing branch is never taken over, nor deleted. */
    assert_null(make(NULL, NULL, "agentrun/s1/taken", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_non_null(strstr(err.msg, "exists"));
    char now[100];
    out(now, sizeof(now), "git rev-parse agentrun/s1/taken");
    assert_string_equal(now, taken);
    /* A directory with only untracked files is not at base: worktree and branch go again. */
    sh("mkdir -p only-untracked && echo x > only-untracked/x");
    char there[400];
    snprintf(there, sizeof(there), "%s/only-untracked", repo);
    assert_null(make(there, NULL, "agentrun/s1/t9", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_false(branch_exists("agentrun/s1/t9"));
    assert_no_missing_worktree();
    char got[100];
    out(got, sizeof(got), "git worktree list | wc -l");
    assert_string_equal(got, "1");
    /* Outside a repository. */
    assert_null(make(tmp, NULL, "agentrun/s1/t10", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    sh("rm -rf only-untracked");
    assert_main_untouched();
}

static void test_a_folder_inside_the_work_tree_is_refused(void **state)
{
    snprintf(dir, sizeof(dir), "%s/repo/.trees", tmp);
    struct ar_error err;
    assert_null(make(NULL, NULL, "agentrun/s1/t11", 0, &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_non_null(strstr(err.msg, "inside the work tree"));
    assert_false(branch_exists("agentrun/s1/t11"));
    snprintf(dir, sizeof(dir), "%s/trees", tmp);
}

/* A Ctrl-C while `git worktree add` checks the files out (slowed down by a smudge filter)
 * lets it finish: the worktree is made whole, and finishing it then removes it, so nothing
 * half made is left. */
static void test_a_cancel_while_making_leaves_it_whole(void **state)
{
    struct ar_error err;
    sh("git config filter.slow.smudge 'sleep 0.5; cat' && echo '*.txt filter=slow' > "
       ".gitattributes && git add .gitattributes && git -c user.name=t -c user.email=t@example.com "
       "commit -q -m slow");
    struct ar_git_tree *t = make(NULL, NULL, "agentrun/s1/t12", 400, &err);
    if (!t)
        fail_msg("not made: %s", err.msg);
    char p[700];
    snprintf(p, sizeof(p), "%s/a.txt", t->path);
    assert_int_equal(access(p, F_OK), 0);
    finish(t, 1, 0, &err);
    assert_true(t->removed);
    assert_true(t->branch_deleted);
    assert_no_missing_worktree();
    ar_git_tree_destroy(t);
}

/* Inside a folder means the folder itself or below it: a name that only starts with the
 * folder's (/x/wt-old for /x/wt) is beside it (issue 50). */
static void test_within_a_folder_is_not_a_string_prefix(void **state)
{
    (void)state;
    static const struct {
        const char *path, *dir;
        int within;
    } cases[] = {
        { "/x/wt", "/x/wt", 1 },          { "/x/wt/a", "/x/wt", 1 },
        { "/x/wt/a/b", "/x/wt", 1 },      { "/x/wt-old", "/x/wt", 0 },
        { "/x/wt-old/a", "/x/wt", 0 },    { "/x/wtx", "/x/wt", 0 },
        { "/src/app-wt", "/src/app", 0 }, { "/x", "/x/wt", 0 },
        { "/anything", "/", 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (ar_git_path_within(cases[i].path, cases[i].dir) != cases[i].within)
            fail_msg("'%s' within '%s': want %d", cases[i].path, cases[i].dir, cases[i].within);
}

int main(void)
{
    if (system("git --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "git not installed: skipped\n");
        return 77;
    }
    setenv("GIT_CEILING_DIRECTORIES", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    /* Commits need an identity; a machine without one is covered by the fallback. */
    setenv("GIT_AUTHOR_NAME", "t", 1);
    setenv("GIT_AUTHOR_EMAIL", "t@example.com", 1);
    setenv("GIT_COMMITTER_NAME", "t", 1);
    setenv("GIT_COMMITTER_EMAIL", "t@example.com", 1);
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_repo, remove_repo)
        T(test_made_from_head_in_the_subdirectory_asked),
        T(test_a_commit_holds_the_change_and_the_worktree_goes),
        T(test_uncommitted_changes_keep_the_worktree),
        T(test_a_rewritten_dot_git_file_redirects_nothing),
        T(test_no_commit_on_another_branch),
        T(test_a_deleted_worktree_leaves_nothing_registered),
        T(test_what_cannot_be_made_is_told_and_left_clean),
        T(test_a_folder_inside_the_work_tree_is_refused),
        T(test_a_cancel_while_making_leaves_it_whole),
#undef T
        cmocka_unit_test(test_within_a_folder_is_not_a_string_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
