/*
 * src/git against the real git: temporary repositories (never inside the
 * source tree), a snapshot before and after a simulated run, and the changes
 * reported. Test setup shells out to git for fixtures; the code under test
 * runs git only through the supervisor. Skipped (77) without git.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git.h"
#include "git/run.h"
#include "proc/proc.h"

static char repo[256];

static void sh(const char *fmt, ...) AR_PRINTF(1, 2);
static void sh(const char *fmt, ...)
{
    char cmd[2048];
    int n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", repo);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
    va_end(ap);
    if (system(cmd) != 0)
        fail_msg("fixture command failed: %s", cmd);
}

static void put(const char *name, const void *data, size_t n)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", repo, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void puts_file(const char *name, const char *text)
{
    put(name, text, strlen(text));
}

static void rm_file(const char *name)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", repo, name);
    assert_int_equal(unlink(p), 0);
}

/* A repository with a.txt, b.txt and "sp ace.txt" committed. */
static int make_repo(void **state)
{
    snprintf(repo, sizeof(repo), "%s/agentrun-test-gitrepo-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(repo))
        return -1;
    sh("git init -q . && printf 'a\\n' > a.txt && printf 'b\\n' > b.txt && printf 's\\n' > 'sp "
       "ace.txt' && git add -A && git -c user.name=t -c user.email=t@example.com -c "
       "commit.gpgsign=false commit -q -m init");
    return 0;
}

static int make_plain_dir(void **state)
{
    snprintf(repo, sizeof(repo), "%s/agentrun-test-gitrepo-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(repo) ? 0 : -1;
}

static int remove_repo(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", repo);
    return system(cmd) == 0 ? 0 : -1;
}

static struct ar_git_snapshot *take(const struct ar_git_snapshot *prev)
{
    struct ar_git_snapshot *s = NULL;
    struct ar_error e = AR_ERROR_INIT;
    int rc = ar_git_snapshot_take(repo, prev, &s, &e);
    if (rc)
        fail_msg("snapshot failed: %s", e.msg);
    assert_non_null(s);
    if (!s->tracked)
        fail_msg("not tracked: %s", s->reason);
    return s;
}

/* "op path[<from];…" of what changed between before and now. */
static void changes_string(struct ar_git_snapshot *before, char *out, size_t cap,
                           struct ar_git_changes *keep)
{
    struct ar_git_snapshot *after = take(before);
    struct ar_git_changes ch;
    ar_git_changes_init(&ch);
    assert_int_equal(ar_git_changes_compute(before, after, &ch, NULL), 0);
    out[0] = '\0';
    for (size_t k = 0; k < ch.n; k++) {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s %s%s%s;", ar_git_op_name(ch.v[k].op), ch.v[k].path,
                 ch.v[k].from ? "<" : "", ch.v[k].from ? ch.v[k].from : "");
    }
    if (keep)
        *keep = ch;
    else
        ar_git_changes_finish(&ch);
    ar_git_snapshot_destroy(after);
}

static void expect_changes(struct ar_git_snapshot *before, const char *want)
{
    char got[2048];
    changes_string(before, got, sizeof(got), NULL);
    if (strcmp(got, want) != 0)
        fail_msg("got \"%s\", want \"%s\"", got, want);
}

static void test_clean_repo_has_empty_snapshot_at_its_root(void **state)
{
    struct ar_git_snapshot *s = take(NULL);
    assert_int_equal(s->n, 0);
    char real[4096];
    assert_non_null(realpath(repo, real));
    assert_string_equal(s->root, real);
    ar_git_snapshot_destroy(s);
}

static void test_create_modify_delete(void **state)
{
    struct ar_git_snapshot *before = take(NULL);
    puts_file("a.txt", "a changed\n");
    rm_file("b.txt");
    puts_file("c.txt", "new\n");
    expect_changes(before, "modify a.txt;delete b.txt;create c.txt;");
    ar_git_snapshot_destroy(before);
}

static void test_staged_create_and_subdirectory(void **state)
{
    struct ar_git_snapshot *before = take(NULL);
    sh("mkdir -p d/e && printf x > d/e/f.c && git add d/e/f.c");
    expect_changes(before, "create d/e/f.c;");
    ar_git_snapshot_destroy(before);
}

static void test_git_mv_is_a_rename(void **state)
{
    struct ar_git_snapshot *before = take(NULL);
    sh("mkdir 'new dir' && git mv a.txt 'new dir/moved.txt'");
    expect_changes(before, "rename new dir/moved.txt<a.txt;");
    ar_git_snapshot_destroy(before);
}

static void test_plain_mv_is_a_rename_by_content(void **state)
{
    struct ar_git_snapshot *before = take(NULL);
    sh("mv b.txt b2.txt");
    expect_changes(before, "rename b2.txt<b.txt;");
    ar_git_snapshot_destroy(before);
}

static void test_already_dirty_untouched_is_not_reported(void **state)
{
    puts_file("a.txt", "dirty before\n");
    puts_file("untracked.txt", "u\n");
    sh("printf staged > staged.txt && git add staged.txt && rm b.txt");
    struct ar_git_snapshot *before = take(NULL);
    assert_int_equal(before->n, 4);
    puts_file("z.txt", "the run's only file\n");
    expect_changes(before, "create z.txt;");
    ar_git_snapshot_destroy(before);
}

static void test_already_dirty_modified_again_is_reported(void **state)
{
    puts_file("a.txt", "dirty before\n");
    puts_file("untracked.txt", "u\n");
    struct ar_git_snapshot *before = take(NULL);
    puts_file("a.txt", "dirty again\n");
    puts_file("untracked.txt", "u2\n");
    expect_changes(before, "modify a.txt;modify untracked.txt;");
    ar_git_snapshot_destroy(before);
}

static void test_dirty_file_reverted_is_a_modify_and_removed_untracked_a_delete(void **state)
{
    puts_file("a.txt", "dirty before\n");
    puts_file("untracked.txt", "u\n");
    struct ar_git_snapshot *before = take(NULL);
    puts_file("a.txt", "a\n");
    rm_file("untracked.txt");
    expect_changes(before, "modify a.txt;delete untracked.txt;");
    ar_git_snapshot_destroy(before);
}

static const char *const odd_names[] = {
    "a b.txt",     "\"quoted\".txt", "line\nbreak.txt", "caf\xc3\xa9.txt",
    "bad\xff.txt", "back\\slash",    "tab\tname",
};

/* The second snapshot reads only files whose stat data changed since the first. */
static void test_unchanged_stat_is_not_read_again(void **state)
{
    puts_file("a.txt", "dirty\n");
    puts_file("u.txt", "untracked\n");
    struct ar_git_snapshot *before = take(NULL);
    assert_int_equal(before->n_read, 2);
    /* Just written: too close to the snapshot for timestamps to prove anything. */
    struct ar_git_snapshot *after = take(before);
    assert_int_equal(after->n_read, 2);
    ar_git_snapshot_destroy(after);
    /* As if the files had been written long before the first snapshot. */
    before->hashed_at_ns += (int64_t)60 * 1000000000;
    after = take(before);
    assert_int_equal(after->n_read, 0);
    ar_git_snapshot_destroy(after);
    expect_changes(before, "");
    puts_file("u.txt", "changed, longer\n");
    after = take(before);
    assert_int_equal(after->n_read, 1);
    ar_git_snapshot_destroy(after);
    expect_changes(before, "modify u.txt;");
    ar_git_snapshot_destroy(before);
}

/*
 * An edit that keeps the size and puts the old mtime back (`cp -p`, `touch -d`, a tool
 * that restores timestamps) still shows: the file's ctime moved, and no one can set that.
 */
static void test_a_same_size_edit_with_its_mtime_restored_is_seen(void **state)
{
    puts_file("a.txt", "dirty before\n");
    struct ar_git_snapshot *before = take(NULL);
    /* As if a.txt had been written long before the first snapshot: its stat data is
     * trusted, so only a stat difference makes it read again. */
    before->hashed_at_ns += (int64_t)60 * 1000000000;
    char path[1024];
    snprintf(path, sizeof(path), "%s/a.txt", repo);
    struct stat st0, st;
    assert_int_equal(stat(path, &st0), 0);
    puts_file("a.txt", "DIRTY BEFORE\n");
    const struct timespec times[2] = { st0.st_atim, st0.st_mtim };
    /* Until ctime moved on: within one tick of the file system's clock it cannot. */
    for (int i = 0; i < 400; i++) {
        assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
        assert_int_equal(stat(path, &st), 0);
        if (st.st_ctim.tv_sec != st0.st_ctim.tv_sec || st.st_ctim.tv_nsec != st0.st_ctim.tv_nsec)
            break;
        usleep(5000);
    }
    assert_int_equal(st.st_size, st0.st_size);
    assert_int_equal(st.st_ino, st0.st_ino);
    assert_true(st.st_mtim.tv_sec == st0.st_mtim.tv_sec &&
                st.st_mtim.tv_nsec == st0.st_mtim.tv_nsec);
    assert_false(st.st_ctim.tv_sec == st0.st_ctim.tv_sec &&
                 st.st_ctim.tv_nsec == st0.st_ctim.tv_nsec);
    expect_changes(before, "modify a.txt;");
    ar_git_snapshot_destroy(before);
}

/* A file changed just before the snapshot is read again next time, even when its mtime
 * says long ago: a second write within the same tick of the clock would not show in its
 * stat data, and its ctime says it is that recent. */
static void test_a_file_changed_just_before_the_snapshot_is_read_again(void **state)
{
    puts_file("a.txt", "dirty\n");
    sh("touch -d '2001-01-01 00:00:00' a.txt");
    struct ar_git_snapshot *before = take(NULL);
    /* As if hashing had begun a second after the change, however slow git status was. */
    char path[1024];
    snprintf(path, sizeof(path), "%s/a.txt", repo);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    before->hashed_at_ns =
        (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec + (int64_t)1000000000;
    struct ar_git_snapshot *after = take(before);
    assert_int_equal(after->n_read, 1);
    ar_git_snapshot_destroy(after);
    ar_git_snapshot_destroy(before);
}

static void test_odd_names(void **state)
{
    struct ar_git_snapshot *before = take(NULL);
    for (size_t i = 0; i < sizeof(odd_names) / sizeof(odd_names[0]); i++)
        puts_file(odd_names[i], "odd\n");
    puts_file("sp ace.txt", "changed\n");
    char got[2048];
    changes_string(before, got, sizeof(got), NULL);
    assert_string_equal(got, "create \"quoted\".txt;create a b.txt;create back\\slash;"
                             "create bad\xff.txt;create caf\xc3\xa9.txt;create line\nbreak.txt;"
                             "modify sp ace.txt;create tab\tname;");
    ar_git_snapshot_destroy(before);
}

static void test_odd_names_dirty_before_then_modified(void **state)
{
    for (size_t i = 0; i < sizeof(odd_names) / sizeof(odd_names[0]); i++)
        puts_file(odd_names[i], "odd\n");
    struct ar_git_snapshot *before = take(NULL);
    puts_file("line\nbreak.txt", "changed\n");
    rm_file("bad\xff.txt");
    expect_changes(before, "delete bad\xff.txt;modify line\nbreak.txt;");
    ar_git_snapshot_destroy(before);
}

#define COMMIT "git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false commit -q"

static void test_changes_the_run_committed_are_reported(void **state)
{
    puts_file("dirty.txt", "dirty before, left alone\n");
    struct ar_git_snapshot *before = take(NULL);
    assert_int_equal(strlen(before->head), 40);
    sh("printf 'a2\\n' > a.txt && git rm -q b.txt && printf c > c.txt && git mv 'sp ace.txt' "
       "moved.txt && git add a.txt c.txt && " COMMIT " -m run");
    sh("printf more >> c.txt");
    struct ar_git_snapshot *after = take(before);
    assert_string_not_equal(after->head, before->head);
    ar_git_snapshot_destroy(after);
    expect_changes(before, "modify a.txt;delete b.txt;create c.txt;rename moved.txt<sp ace.txt;");
    ar_git_snapshot_destroy(before);
}

static void test_first_commit_of_an_empty_repository(void **state)
{
    sh("git init -q .");
    puts_file("pre.txt", "untracked before\n");
    struct ar_git_snapshot *before = take(NULL);
    assert_string_equal(before->head, "");
    sh("printf x > x.txt && git add x.txt pre.txt && " COMMIT " -m first");
    expect_changes(before, "create x.txt;");
    ar_git_snapshot_destroy(before);
}

static void test_snapshot_from_a_subdirectory_uses_root_paths(void **state)
{
    sh("mkdir -p sub && printf x > sub/x");
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/sub", repo);
    struct ar_git_snapshot *s = NULL;
    assert_int_equal(ar_git_snapshot_take(sub, NULL, &s, NULL), 0);
    assert_true(s->tracked);
    assert_int_equal(s->n, 1);
    assert_string_equal(s->files[0].path, "sub/x");
    ar_git_snapshot_destroy(s);
}

static void test_not_a_repo_is_untracked_not_an_error(void **state)
{
    struct ar_git_snapshot *s = NULL;
    struct ar_error e = AR_ERROR_INIT;
    assert_int_equal(ar_git_snapshot_take(repo, NULL, &s, &e), 0);
    assert_non_null(s);
    assert_false(s->tracked);
    assert_null(s->root);
    assert_non_null(strstr(s->reason, "not a git work tree"));
    ar_git_snapshot_destroy(s);
}

static void test_git_missing_is_untracked_with_reason(void **state)
{
    char *path = strdup(getenv("PATH"));
    setenv("PATH", repo, 1);
    struct ar_git_snapshot *s = NULL;
    int rc = ar_git_snapshot_take(repo, NULL, &s, NULL);
    setenv("PATH", path, 1);
    free(path);
    assert_int_equal(rc, 0);
    assert_false(s->tracked);
    assert_non_null(strstr(s->reason, "git not found"));
    ar_git_snapshot_destroy(s);
}

static void test_with_content_text_binary_and_cap(void **state)
{
    struct ar_git_snapshot *before = take(NULL);
    puts_file("text.txt", "h\xc3\xa9llo\n");
    put("bin.dat", "\x89PNG\0\x01", 6);
    size_t big = ((size_t)3 << 19) + 7; /* 1.5 MiB */
    char *data = malloc(big);
    memset(data, 'x', big);
    put("big.txt", data, big);
    free(data);
    rm_file("b.txt");
    struct ar_git_changes ch;
    char got[512];
    changes_string(before, got, sizeof(got), &ch);
    assert_string_equal(got, "delete b.txt;create big.txt;create bin.dat;create text.txt;");
    assert_int_equal(ar_git_changes_load_content(&ch, before->root, 0, NULL), 0);
    json_t *j = ar_git_changes_to_json(&ch);
    assert_non_null(j);
    json_t *o = json_array_get(j, 0);
    assert_null(json_object_get(o, "content"));
    o = json_array_get(j, 1);
    assert_int_equal(json_string_length(json_object_get(o, "content")), AR_GIT_CONTENT_MAX);
    assert_string_equal(json_string_value(json_object_get(o, "encoding")), "utf-8");
    assert_true(json_is_true(json_object_get(o, "truncated")));
    o = json_array_get(j, 2);
    assert_string_equal(json_string_value(json_object_get(o, "content")), "iVBORwAB");
    assert_string_equal(json_string_value(json_object_get(o, "encoding")), "base64");
    assert_true(json_is_false(json_object_get(o, "truncated")));
    o = json_array_get(j, 3);
    assert_string_equal(json_string_value(json_object_get(o, "content")), "h\xc3\xa9llo\n");
    assert_string_equal(json_string_value(json_object_get(o, "encoding")), "utf-8");
    json_decref(j);
    ar_git_changes_finish(&ch);
    ar_git_snapshot_destroy(before);
}

static void test_inside_dot_git_is_untracked(void **state)
{
    char dotgit[512];
    snprintf(dotgit, sizeof(dotgit), "%s/.git", repo);
    struct ar_git_snapshot *s = NULL;
    assert_int_equal(ar_git_snapshot_take(dotgit, NULL, &s, NULL), 0);
    assert_false(s->tracked);
    assert_non_null(strstr(s->reason, "not a git work tree"));
    ar_git_snapshot_destroy(s);
}

struct async_slot {
    struct ar_git_snapshot *snap;
    int calls;
};

static void on_snap(struct ar_git_snapshot *snap, int rc, const struct ar_error *err, void *arg)
{
    struct async_slot *slot = arg;
    assert_int_equal(rc, 0);
    slot->snap = snap;
    slot->calls++;
}

static void test_async_snapshots_share_one_loop(void **state)
{
    puts_file("u.txt", "u\n");
    struct ar_loop *loop = ar_loop_create(NULL);
    assert_non_null(loop);
    struct async_slot in_repo = { NULL, 0 }, outside = { NULL, 0 };
    assert_int_equal(ar_git_snapshot_start(loop, repo, NULL, on_snap, &in_repo, NULL), 0);
    assert_int_equal(ar_git_snapshot_start(loop, "/", NULL, on_snap, &outside, NULL), 0);
    assert_int_equal(in_repo.calls + outside.calls, 0); /* never from inside start */
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(in_repo.calls, 1);
    assert_int_equal(outside.calls, 1);
    assert_true(in_repo.snap->tracked);
    assert_int_equal(in_repo.snap->n, 1);
    assert_string_equal(in_repo.snap->files[0].path, "u.txt");
    assert_true(in_repo.snap->files[0].hashed);
    assert_false(outside.snap->tracked);
    ar_git_snapshot_destroy(in_repo.snap);
    ar_git_snapshot_destroy(outside.snap);
}

static void test_async_start_without_git_fails_at_once(void **state)
{
    char *path = strdup(getenv("PATH"));
    setenv("PATH", repo, 1);
    struct ar_loop *loop = ar_loop_create(NULL);
    assert_non_null(loop);
    struct ar_error e = AR_ERROR_INIT;
    struct async_slot slot = { NULL, 0 };
    int rc = ar_git_snapshot_start(loop, repo, NULL, on_snap, &slot, &e);
    setenv("PATH", path, 1);
    free(path);
    assert_int_equal(rc, AR_ENOTFOUND);
    assert_int_equal(e.code, AR_ENOTFOUND);
    assert_non_null(strstr(e.msg, "git"));
    ar_loop_run(loop);
    assert_int_equal(ar_loop_destroy(loop), 0);
    assert_int_equal(slot.calls, 0);
}

/*
 * A repository whose config names programs git would run on our behalf: an
 * fsmonitor, an external diff (global and per driver), a textconv filter for
 * every file (.gitattributes), a pager. Each leaves a line in `marker` when it
 * runs (and passes its input through, so that git would go on). Run without
 * the hardening of git/run.h, every one of them runs.
 */
static void make_hostile(char *marker, size_t n)
{
    char script[512];
    snprintf(marker, n, "%s/.git/programs-ran", repo);
    snprintf(script, sizeof(script), "%s/.git/hostile.sh", repo);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho \"$0 $*\" >> '%s'\ncat \"$1\" 2>/dev/null\nexit 0\n", marker);
    fclose(f);
    assert_int_equal(chmod(script, 0755), 0);
    puts_file(".gitattributes", "* diff=hostile\n");
    sh("git add .gitattributes && " COMMIT " -m attributes");
    /* Last: from here on the fixture's own git commands must say core.fsmonitor=false. */
    sh("git config core.fsmonitor '%s' && git config diff.external '%s' && git config "
       "diff.hostile.textconv '%s' && git config diff.hostile.command '%s' && git config "
       "core.pager '%s'",
       script, script, script, script, script);
}

static void expect_no_program_ran(const char *marker)
{
    char buf[1024] = "";
    FILE *f = fopen(marker, "r");
    if (f) {
        size_t k = fread(buf, 1, sizeof(buf) - 1, f);
        buf[k] = '\0';
        fclose(f);
        fail_msg("a program of the repository's config ran: %s", buf);
    }
}

static void test_hostile_config_runs_no_program(void **state)
{
    char marker[512];
    make_hostile(marker, sizeof(marker));
    puts_file("a.txt", "changed\n");
    puts_file("new.txt", "new\n");
    static const char *const diff[] = { "diff", "HEAD", "--", NULL };
    static const char *const range[] = { "diff", "HEAD~1..HEAD", "--", NULL };
    static const char *const cached[] = { "diff", "--cached", "--", NULL };
    static const char *const noindex[] = {
        "diff", "--no-index", "--", "/dev/null", "new.txt", NULL
    };
    static const char *const show[] = { "show", "HEAD", NULL };
    static const char *const log[] = { "log", "-p", "-1", NULL };
    static const char *const status[] = { "status", "--porcelain=v2", "-z", NULL };
    static const struct {
        const char *const *args;
        int status;
        const char *want; /* in stdout */
    } cases[] = {
        { diff, 0, "+changed\n" },
        { range, 0, "+* diff=hostile\n" },
        { cached, 0, "" },
        { noindex, 1, "+new\n" },
        { show, 0, "+* diff=hostile\n" },
        { log, 0, "+* diff=hostile\n" },
        { status, 0, "a.txt" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
        cmd.args = cases[i].args;
        cmd.cwd = repo;
        cmd.flags = i % 2 ? AR_GIT_PIN_OUTPUT : 0;
        struct ar_child_sync out;
        struct ar_error err = AR_ERROR_INIT;
        assert_int_equal(ar_git_run(&cmd, &out, &err), 0);
        if (out.res.status != cases[i].status || out.res.end != AR_CHILD_EXITED)
            fail_msg("git %s: exit %d: %s", cases[i].args[0], out.res.status, out.stderr_tail);
        if (!strstr(out.stdout_data ? out.stdout_data : "", cases[i].want))
            fail_msg("git %s: no '%s' in: %s", cases[i].args[0], cases[i].want,
                     out.stdout_data ? out.stdout_data : "");
        ar_child_sync_finish(&out);
        expect_no_program_ran(marker);
    }
    /* The snapshots, and the diff of what a run committed. */
    struct ar_git_snapshot *before = take(NULL);
    sh("printf again > a.txt && git -c core.fsmonitor=false add a.txt && git -c "
       "core.fsmonitor=false -c user.name=t -c "
       "user.email=t@example.com -c commit.gpgsign=false commit -q -m run");
    expect_changes(before, "modify a.txt;");
    ar_git_snapshot_destroy(before);
    expect_no_program_ran(marker);
}

int main(void)
{
    if (system("git --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "git not installed: skipped\n");
        return 77;
    }
    /* Fixture repositories must not see a repository above the temp directory. */
    setenv("GIT_CEILING_DIRECTORIES", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_repo, remove_repo)
        T(test_clean_repo_has_empty_snapshot_at_its_root),
        T(test_create_modify_delete),
        T(test_staged_create_and_subdirectory),
        T(test_git_mv_is_a_rename),
        T(test_plain_mv_is_a_rename_by_content),
        T(test_already_dirty_untouched_is_not_reported),
        T(test_already_dirty_modified_again_is_reported),
        T(test_dirty_file_reverted_is_a_modify_and_removed_untracked_a_delete),
        T(test_odd_names),
        T(test_odd_names_dirty_before_then_modified),
        T(test_snapshot_from_a_subdirectory_uses_root_paths),
        T(test_changes_the_run_committed_are_reported),
        T(test_with_content_text_binary_and_cap),
        T(test_async_snapshots_share_one_loop),
        T(test_inside_dot_git_is_untracked),
        T(test_unchanged_stat_is_not_read_again),
        T(test_a_same_size_edit_with_its_mtime_restored_is_seen),
        T(test_a_file_changed_just_before_the_snapshot_is_read_again),
        T(test_hostile_config_runs_no_program),
        cmocka_unit_test_setup_teardown(test_not_a_repo_is_untracked_not_an_error, make_plain_dir,
                                        remove_repo),
        cmocka_unit_test_setup_teardown(test_first_commit_of_an_empty_repository, make_plain_dir,
                                        remove_repo),
        cmocka_unit_test_setup_teardown(test_git_missing_is_untracked_with_reason, make_plain_dir,
                                        remove_repo),
        cmocka_unit_test_setup_teardown(test_async_start_without_git_fails_at_once, make_plain_dir,
                                        remove_repo),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
