/* Unit tests of src/util: the capped buffer, the string vector, the error table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agentrun/error.h"
#include "ar_config.h"
#include "util/buf.h"
#include "util/cpu.h"
#include "util/file.h"
#include "util/strv.h"
#include "util/suggest.h"
#include "util/temp.h"
#include "util/utf8.h"

static void test_buf_append_and_cstr(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, 100);
    assert_string_equal(ar_buf_cstr(&b), "");
    assert_int_equal(ar_buf_puts(&b, "hello"), 0);
    assert_int_equal(ar_buf_printf(&b, " %d", 42), 0);
    assert_string_equal(ar_buf_cstr(&b), "hello 42");
    assert_int_equal(b.len, 8);
    ar_buf_consume(&b, 6);
    assert_string_equal(ar_buf_cstr(&b), "42");
    ar_buf_finish(&b);
}

static void test_buf_refuses_past_max(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, 8);
    assert_int_equal(ar_buf_puts(&b, "12345678"), 0);
    assert_int_equal(ar_buf_putc(&b, '9'), AR_ETOOBIG);
    assert_int_equal(b.len, 8);
    assert_int_equal(ar_buf_printf(&b, "%s", "x"), AR_ETOOBIG);
    assert_string_equal(ar_buf_cstr(&b), "12345678");
    ar_buf_finish(&b);
}

static void test_buf_detach_hands_out_and_resets(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t len = 99;
    char *p = ar_buf_detach(&b, &len);
    assert_non_null(p);
    assert_int_equal(len, 0);
    free(p);
    ar_buf_append(&b, "a\0b", 3);
    p = ar_buf_detach(&b, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(p, "a\0b", 3);
    assert_int_equal(b.len, 0);
    free(p);
}

static void test_strv_builds_null_terminated_vector(void **state)
{
    struct ar_strv sv = AR_STRV_INIT;
    assert_null(ar_strv_get(&sv)[0]);
    for (int i = 0; i < 20; i++)
        assert_int_equal(ar_strv_pushf(&sv, "arg%d", i), 0);
    assert_int_equal(sv.n, 20);
    assert_string_equal(sv.v[19], "arg19");
    assert_null(sv.v[20]);
    ar_strv_finish(&sv);
    assert_int_equal(sv.n, 0);
}

/* A pipe hands out what has been written so far: input under the cap that
 * arrives in pieces near the cap must still be read whole. */
static void test_file_read_fd_pipe_in_pieces_under_the_cap(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char chunk[100];
        memset(chunk, 'x', sizeof(chunk));
        close(fds[0]);
        if (write(fds[1], chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
            _exit(1);
        usleep(100 * 1000);
        if (write(fds[1], chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&b, 250);
    int rc = ar_file_read_fd(fds[0], "pipe", &b, &err);
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_int_equal(rc, 0);
    assert_int_equal(b.len, 200);
    ar_buf_finish(&b);
}

/* An empty pipe still leaves a C string: the first reserve allocates, nothing is
 * read, and the bytes after it must not be whatever malloc returned. */
static void test_file_read_fd_empty_pipe_is_an_empty_string(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[1]);
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&b, 1 << 20);
    assert_int_equal(ar_file_read_fd(fds[0], "pipe", &b, &err), 0);
    close(fds[0]);
    assert_int_equal(b.len, 0);
    assert_string_equal(ar_buf_cstr(&b), "");
    ar_buf_finish(&b);
}

static void test_file_read_fd_past_the_cap_is_too_big(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    char data[300];
    memset(data, 'y', sizeof(data));
    assert_int_equal(write(fds[1], data, sizeof(data)), (ssize_t)sizeof(data));
    close(fds[1]);
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&b, 250);
    assert_int_equal(ar_file_read_fd(fds[0], "pipe", &b, &err), AR_ETOOBIG);
    close(fds[0]);
    ar_buf_finish(&b);
}

/* ---- reading files on the user's behalf: links, kinds, the cap ------------------------ */

/* A temporary tree: ROOT/folder (where the named files are) and ROOT/outside/secret. */
struct tree {
    char root[64];
    char folder[96];
    char secret[128];
};

static void tree_make(struct tree *t)
{
    snprintf(t->root, sizeof(t->root), "/tmp/ar-test-file-XXXXXX");
    assert_non_null(mkdtemp(t->root));
    snprintf(t->folder, sizeof(t->folder), "%s/folder", t->root);
    assert_int_equal(mkdir(t->folder, 0700), 0);
    char d[128];
    snprintf(d, sizeof(d), "%s/folder/sub", t->root);
    assert_int_equal(mkdir(d, 0700), 0);
    snprintf(d, sizeof(d), "%s/outside", t->root);
    assert_int_equal(mkdir(d, 0700), 0);
    snprintf(t->secret, sizeof(t->secret), "%s/outside/secret", t->root);
    FILE *f = fopen(t->secret, "w");
    assert_non_null(f);
    fputs("SECRET-BYTES", f);
    fclose(f);
    snprintf(d, sizeof(d), "%s/folder/sub/plan.md", t->root);
    f = fopen(d, "w");
    assert_non_null(f);
    fputs("the plan", f);
    fclose(f);
}

static void tree_link(const struct tree *t, const char *target, const char *name)
{
    char p[160];
    snprintf(p, sizeof(p), "%s/%s", t->folder, name);
    assert_int_equal(symlink(target, p), 0);
}

static void tree_remove(struct tree *t)
{
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
}

/* ar_file_read() of FOLDER/name: 0 and the bytes, or the error. */
static int read_named(const struct tree *t, const char *name, struct ar_buf *b,
                      struct ar_error *err)
{
    char p[160];
    snprintf(p, sizeof(p), "%s/%s", t->folder, name);
    ar_buf_init(b, AR_BUF_UNLIMITED);
    *err = (struct ar_error)AR_ERROR_INIT;
    return ar_file_read(p, b, err);
}

static void test_file_read_follows_a_link_that_stays_in_its_folder(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    char abs_inside[160];
    snprintf(abs_inside, sizeof(abs_inside), "%s/sub/plan.md", t.folder);
    tree_link(&t, "sub/plan.md", "current.md");
    tree_link(&t, "sub/../sub/plan.md", "roundabout.md");
    tree_link(&t, abs_inside, "absolute.md");
    tree_link(&t, "current.md", "chain.md");
    static const char *const names[] = { "current.md", "roundabout.md", "absolute.md", "chain.md",
                                         "sub/plan.md" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct ar_buf b;
        struct ar_error err;
        assert_int_equal(read_named(&t, names[i], &b, &err), 0);
        assert_string_equal(ar_buf_cstr(&b), "the plan");
        ar_buf_finish(&b);
    }
    tree_remove(&t);
}

static void test_file_read_refuses_a_link_out_of_its_folder(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    tree_link(&t, "../outside/secret", "up.md");
    tree_link(&t, t.secret, "absolute.md");
    tree_link(&t, "/proc/self/environ", "env.txt");
    tree_link(&t, "sub/../../outside/secret", "climb.md");
    tree_link(&t, "up.md", "via-link.md");
    char subdir_link[160];
    snprintf(subdir_link, sizeof(subdir_link), "%s/outside", t.root);
    tree_link(&t, subdir_link, "out");
    static const char *const names[] = { "up.md", "absolute.md", "env.txt", "climb.md",
                                         "via-link.md" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct ar_buf b;
        struct ar_error err;
        assert_int_equal(read_named(&t, names[i], &b, &err), AR_EIO);
        assert_null(strstr(ar_buf_cstr(&b), "SECRET"));
        assert_non_null(strstr(err.msg, "out of its folder"));
        assert_non_null(strstr(err.msg, names[i]));
        ar_buf_finish(&b);
    }
    /* Beneath a folder (a PRD folder's entries, a prompts directory's templates), a link
     * or ".." in the middle of the name does not lead out either. */
    static const char *const rels[] = { "out/secret", "../outside/secret", "sub/../up.md" };
    for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++) {
        struct ar_buf b;
        struct ar_error err = AR_ERROR_INIT;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        assert_int_equal(ar_file_read_at(t.folder, rels[i], &b, &err), AR_EIO);
        assert_non_null(strstr(err.msg, "out of its folder"));
        ar_buf_finish(&b);
    }
    tree_remove(&t);
}

static void test_file_read_refuses_what_is_not_a_regular_file(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    char fifo[160];
    snprintf(fifo, sizeof(fifo), "%s/pipe.md", t.folder);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    tree_link(&t, "pipe.md", "to-pipe.md");
    struct {
        const char *path, *kind;
    } cases[] = {
        { fifo, "a FIFO" },          { NULL, "a FIFO" },          { "/dev/zero", "a device" },
        { "/dev/null", "a device" }, { t.folder, "a directory" },
    };
    char to_pipe[160];
    snprintf(to_pipe, sizeof(to_pipe), "%s/to-pipe.md", t.folder);
    cases[1].path = to_pipe;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_buf b;
        struct ar_error err = AR_ERROR_INIT;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        /* A FIFO without a writer would block open() forever: this returns at once. */
        assert_int_equal(ar_file_read(cases[i].path, &b, &err), AR_EIO);
        assert_non_null(strstr(err.msg, cases[i].kind));
        ar_buf_finish(&b);
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        assert_int_equal(ar_file_read_own(cases[i].path, &b, &err), AR_EIO);
        assert_non_null(strstr(err.msg, cases[i].kind));
        ar_buf_finish(&b);
    }
    /* A shell's "<(…)" is /dev/fd/N, a link to "pipe:[…]" that no walk finds: it is
     * named for what it is, not "No such file or directory". */
    int p[2];
    assert_int_equal(pipe(p), 0);
    char dev_fd[64];
    snprintf(dev_fd, sizeof(dev_fd), "/dev/fd/%d", p[0]);
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_file_read(dev_fd, &b, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "a FIFO"));
    ar_buf_finish(&b);
    close(p[0]);
    close(p[1]);
    tree_remove(&t);
}

static void test_file_read_has_a_size_cap(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    char big[160];
    snprintf(big, sizeof(big), "%s/big.md", t.folder);
    int fd = open(big, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    /* Sparse: the cap is checked before a byte is read. */
    assert_int_equal(ftruncate(fd, (off_t)AR_FILE_MAX_BYTES + 1), 0);
    close(fd);
    struct ar_buf b;
    struct ar_error err;
    assert_int_equal(read_named(&t, "big.md", &b, &err), AR_ETOOBIG);
    assert_non_null(strstr(err.msg, "larger than"));
    assert_int_equal(b.len, 0);
    ar_buf_finish(&b);
    /* Exactly the cap is read. */
    fd = open(big, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 100), 0);
    close(fd);
    ar_buf_init(&b, 100);
    err = (struct ar_error)AR_ERROR_INIT;
    assert_int_equal(ar_file_read(big, &b, &err), 0);
    assert_int_equal(b.len, 100);
    ar_buf_finish(&b);
    ar_buf_init(&b, 99);
    assert_int_equal(ar_file_read(big, &b, &err), AR_ETOOBIG);
    ar_buf_finish(&b);
    tree_remove(&t);
}

static void test_file_read_own_follows_links_anywhere(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    tree_link(&t, "../outside/secret", "settings.json");
    char p[160];
    snprintf(p, sizeof(p), "%s/settings.json", t.folder);
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_file_read_own(p, &b, &err), 0);
    assert_string_equal(ar_buf_cstr(&b), "SECRET-BYTES");
    ar_buf_finish(&b);
    tree_remove(&t);
}

static void test_file_read_a_link_loop_ends(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    tree_link(&t, "b.md", "a.md");
    tree_link(&t, "a.md", "b.md");
    struct ar_buf b;
    struct ar_error err;
    assert_int_equal(read_named(&t, "a.md", &b, &err), AR_EIO);
    ar_buf_finish(&b);
    tree_remove(&t);
}

/* ---- temporary files: what a killed process left is swept ------------------------------ */

static void touch_in(const char *dir, const char *name, int is_dir)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    if (is_dir) {
        assert_int_equal(mkdir(p, 0700), 0);
    } else {
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fclose(f);
    }
}

static int exists_in(const char *dir, const char *name)
{
    char p[256];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

static void test_temp_sweep_removes_only_what_dead_processes_left(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t); /* t.secret: a file outside, which a link in a swept home points to */
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    assert_true(dead > 0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    char home[64], schema[64], mine[64], init[64], link[256];
    snprintf(home, sizeof(home), "agentrun-gemini-%ld-a1B2c3", (long)dead);
    snprintf(schema, sizeof(schema), "agentrun-schema-%ld-Zz9Yy8", (long)dead);
    snprintf(mine, sizeof(mine), "agentrun-gemini-%ld-q0Q0q0", (long)getpid());
    snprintf(init, sizeof(init), "agentrun-system-1-x1X1x1"); /* pid 1 lives */
    touch_in(t.folder, home, 1);
    touch_in(t.folder, schema, 0);
    touch_in(t.folder, mine, 1);
    touch_in(t.folder, init, 0);
    touch_in(t.folder, "agentrun-gemini-Ab12Cd", 1); /* no pid: not one this sweep can judge */
    touch_in(t.folder, "other-7-abcdef", 0);
    snprintf(link, sizeof(link), "%s/%s/settings-link", t.folder, home);
    assert_int_equal(symlink(t.secret, link), 0);
    assert_int_equal(ar_temp_sweep(t.folder), 2);
    assert_false(exists_in(t.folder, home));
    assert_false(exists_in(t.folder, schema));
    assert_true(exists_in(t.folder, mine));
    assert_true(exists_in(t.folder, init));
    assert_true(exists_in(t.folder, "agentrun-gemini-Ab12Cd"));
    assert_true(exists_in(t.folder, "other-7-abcdef"));
    struct stat st;
    assert_int_equal(stat(t.secret, &st), 0); /* the link was removed, not followed */
    tree_remove(&t);
}

/* A sweep is due when this user has not begun one in the folder for a minute; a stamp
 * from the future, another user's, or a link does not stop it, and a link is not followed. */
/* ar_cpu_probe(), what the musl release binary asks the CPU, says what glibc says:
 * the 64-byte JSON paths are taken on the same machines whichever C library. */
static void test_cpu_probe_agrees_with_glibc(void **state)
{
    (void)state;
#if defined(__x86_64__) && defined(AR_HAVE_GLIBC_X86_H)
    int have = ar_cpu_probe();
    assert_int_equal(!!(have & AR_CPU_AVX2), !!ar_cpu_avx2());
    assert_int_equal(!!(have & AR_CPU_SSSE3), !!ar_cpu_ssse3());
    assert_int_equal(ar_cpu_probe(), have); /* the same answer when asked again */
#else
    skip();
#endif
}

static void test_temp_sweep_is_due_once_a_minute(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    char stamp[512];
    snprintf(stamp, sizeof(stamp), "%s/agentrun-swept-%ld", t.folder, (long)getuid());
    assert_true(ar_temp_sweep_due(t.folder));
    ar_temp_sweep_stamp(t.folder);
    struct stat st;
    assert_int_equal(lstat(stamp, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_false(ar_temp_sweep_due(t.folder));
    /* The stamp is no entry of a process's: a sweep leaves it. */
    assert_int_equal(ar_temp_sweep(t.folder), 0);
    assert_true(exists_in(t.folder, strrchr(stamp, '/') + 1));
    time_t now = time(NULL);
    struct timespec ts[2] = { { now - 61, 0 }, { now - 61, 0 } };
    assert_int_equal(utimensat(AT_FDCWD, stamp, ts, 0), 0);
    assert_true(ar_temp_sweep_due(t.folder));
    ts[0].tv_sec = ts[1].tv_sec = now + 3600;
    assert_int_equal(utimensat(AT_FDCWD, stamp, ts, 0), 0);
    assert_true(ar_temp_sweep_due(t.folder));
    ar_temp_sweep_stamp(t.folder);
    assert_false(ar_temp_sweep_due(t.folder));
    if (getuid() == 0) {
        assert_int_equal(chown(stamp, 12345, 12345), 0);
        assert_true(ar_temp_sweep_due(t.folder));
    }
    /* A link in its place: due, and stamping neither follows it nor touches its target. */
    assert_int_equal(unlink(stamp), 0);
    assert_int_equal(symlink(t.secret, stamp), 0);
    struct stat before, after;
    assert_int_equal(stat(t.secret, &before), 0);
    assert_true(ar_temp_sweep_due(t.folder));
    ar_temp_sweep_stamp(t.folder);
    assert_int_equal(stat(t.secret, &after), 0);
    assert_int_equal(before.st_mtime, after.st_mtime);
    assert_int_equal(lstat(stamp, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    tree_remove(&t);
}

static void test_temp_names_carry_the_pid_and_are_private(void **state)
{
    (void)state;
    struct tree t;
    tree_make(&t);
    setenv("TMPDIR", t.folder, 1);
    struct ar_error err = AR_ERROR_INIT;
    char *dir = ar_temp_dir_make("gemini", &err);
    char *file = ar_file_write_temp("schema", "{}", 2, &err);
    assert_non_null(dir);
    assert_non_null(file);
    char want[160];
    snprintf(want, sizeof(want), "%s/agentrun-gemini-%ld-", t.folder, (long)getpid());
    assert_memory_equal(dir, want, strlen(want));
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    ar_remove_tree(dir);
    unlink(file);
    free(dir);
    free(file);
    unsetenv("TMPDIR");
    tree_remove(&t);
}

/* A regular file is mapped, not copied; an empty one, a pipe and a directory
 * are what they would be read as. */
static void test_file_view_maps_a_regular_file(void **state)
{
    (void)state;
    char path[] = "/tmp/agentrun-view-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    struct ar_file_view v;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_file_view_open(path, &v, &err), 0);
    assert_null(v.map);
    assert_int_equal(v.len, 0);
    ar_file_view_close(&v);
    assert_int_equal(write(fd, "{\"a\": 1}\n", 9), 9);
    close(fd);
    assert_int_equal(ar_file_view_open(path, &v, &err), 0);
    assert_non_null(v.map);
    assert_int_equal(v.len, 9);
    assert_memory_equal(v.data, "{\"a\": 1}\n", 9);
    ar_file_view_close(&v);
    unlink(path);
    assert_int_equal(ar_file_view_open("/tmp", &v, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "a directory"));
    /* A named file is opened by the rules of every file agentrun reads: no FIFO. */
    char fifo[] = "/tmp/agentrun-view-fifo-XXXXXX";
    int tmp = mkstemp(fifo);
    assert_true(tmp >= 0);
    close(tmp);
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(ar_file_view_open(fifo, &v, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "a FIFO"));
    unlink(fifo);
    assert_int_equal(ar_file_view_open("/nonexistent/x", &v, &err), AR_EIO);
}

/* The view keeps the rules of every file agentrun reads: a link inside its folder is
 * mapped, a link out of it is refused before a byte is read. */
static void test_file_view_keeps_links_inside_the_folder(void **state)
{
    (void)state;
    char dir[] = "/tmp/agentrun-view-dir-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], in[256], out[256], secret[] = "/tmp/agentrun-view-secret-XXXXXX";
    int fd = mkstemp(secret);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "{\"secret\": 1}", 13), 13);
    close(fd);
    snprintf(path, sizeof(path), "%s/reply.md", dir);
    snprintf(in, sizeof(in), "%s/in.md", dir);
    snprintf(out, sizeof(out), "%s/out.md", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_int_equal(write(fd, "{\"a\": 1}", 8), 8);
    close(fd);
    assert_int_equal(symlink("reply.md", in), 0);
    assert_int_equal(symlink(secret, out), 0);
    struct ar_file_view v;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_file_view_open(in, &v, &err), 0);
    assert_int_equal(v.len, 8);
    assert_memory_equal(v.data, "{\"a\": 1}", 8);
    ar_file_view_close(&v);
    assert_int_equal(ar_file_view_open(out, &v, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "a link out of its folder"));
    assert_null(v.data);
    unlink(in);
    unlink(out);
    unlink(path);
    unlink(secret);
    rmdir(dir);
}

/* Standard input from a pipe: a short input and a long one (past the first MiB,
 * into memory of its own) come whole. */
static void test_file_view_reads_a_pipe_whole(void **state)
{
    (void)state;
    static const size_t sizes[] = { 10, (size_t)3 << 20 };
    for (size_t k = 0; k < 2; k++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            char chunk[4096];
            for (size_t at = 0; at < sizes[k]; at += sizeof(chunk)) {
                size_t n = sizes[k] - at < sizeof(chunk) ? sizes[k] - at : sizeof(chunk);
                for (size_t i = 0; i < n; i++)
                    chunk[i] = (char)('a' + (at + i) % 26);
                if (write(fds[1], chunk, n) != (ssize_t)n)
                    _exit(1);
            }
            _exit(0);
        }
        close(fds[1]);
        int saved = dup(0);
        dup2(fds[0], 0);
        close(fds[0]);
        struct ar_file_view v;
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_file_view_open("-", &v, &err);
        dup2(saved, 0);
        close(saved);
        int st;
        waitpid(pid, &st, 0);
        assert_int_equal(rc, 0);
        assert_int_equal(v.len, sizes[k]);
        for (size_t i = 0; i < v.len; i += 4099)
            assert_int_equal(v.data[i], 'a' + i % 26);
        ar_file_view_close(&v);
    }
}

static void test_error_table_maps_names_and_exit_statuses(void **state)
{
    assert_string_equal(ar_strerror_name(AR_ECONTRACT), "contract");
    assert_int_equal(ar_error_exit_status(AR_ECONTRACT), 3);
    assert_int_equal(ar_error_exit_status(AR_ENOJSON), 3);
    assert_int_equal(ar_error_exit_status(AR_EUSAGE), 2);
    assert_int_equal(ar_error_exit_status(AR_ETIMEOUT), 5);
    assert_int_equal(ar_error_exit_status(AR_EIDLE), 5);
    assert_int_equal(ar_error_exit_status(AR_EAUTH), 4);
    assert_int_equal(ar_error_exit_status(0), 0);
    assert_int_equal(ar_error_from_name("rate_limit"), AR_ERATELIMIT);
    assert_int_equal(ar_error_from_name("nope"), 0);

    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_error_set(&err, AR_EIO, "x.md", "cannot read '%s'", "x.md"), AR_EIO);
    assert_string_equal(err.msg, "cannot read 'x.md'");
    assert_string_equal(err.where, "x.md");
    assert_int_equal(ar_error_set(NULL, AR_EIO, NULL, "ignored"), AR_EIO);
}

static void test_error_message_is_truncated_not_overflowed(void **state)
{
    struct ar_error err = AR_ERROR_INIT;
    char big[1000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ar_error_set(&err, AR_EUSAGE, big, "%s", big);
    assert_int_equal(strlen(err.msg), sizeof(err.msg) - 1);
    assert_int_equal(strlen(err.where), sizeof(err.where) - 1);
}

static void test_utf8_lossy_copy_replaces_each_bad_byte(void **state)
{
    assert_int_equal(ar_utf8_seq_len("\xe2\x82\xac", 3), 3);
    assert_int_equal(ar_utf8_seq_len("\xe2\x82\xac", 2), 0); /* cut short */
    assert_int_equal(ar_utf8_seq_len("\xc0\x80", 2), 0);     /* overlong NUL */
    assert_int_equal(ar_utf8_seq_len("\xed\xa0\x80", 3), 0); /* surrogate */
    assert_int_equal(ar_utf8_seq_len("\xf4\x90\x80\x80", 4), 0);
    assert_int_equal(ar_utf8_seq_len("\0", 1), 1);
    assert_true(ar_utf8_valid("caf\xc3\xa9", 5));
    assert_false(ar_utf8_valid("caf\xc3", 4));

    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t bad = 99;
    assert_int_equal(ar_utf8_append_lossy(&b, "ok \xff\xfe \xe2\x82\xac", 9, &bad), 0);
    assert_int_equal(bad, 2);
    assert_string_equal(ar_buf_cstr(&b), "ok \xef\xbf\xbd\xef\xbf\xbd \xe2\x82\xac");
    ar_buf_finish(&b);
}

static void test_buf_replace_nul_keeps_what_follows_the_nul(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, 7);
    assert_int_equal(ar_buf_append(&b, "abc\0def", 7), 0);
    size_t n = 99;
    assert_int_equal(ar_buf_replace_nul(&b, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(b.len, 9);
    assert_string_equal(ar_buf_cstr(&b), "abc\xef\xbf\xbd"
                                         "def");
    assert_int_equal(strlen(ar_buf_cstr(&b)), b.len);
    assert_int_equal(ar_buf_replace_nul(&b, &n), 0);
    assert_int_equal(n, 0);
    ar_buf_finish(&b);
}

/* ---- did you mean (util/suggest.h) ---- */

static void test_suggest_names_the_near_word(void **state)
{
    (void)state;
    const char *commands[] = { "run",    "review",  "prioritize", "route", "batch", "extract",
                               "doctor", "prompts", "worktrees",  "mcp",   "cache" };
    size_t n = sizeof(commands) / sizeof(commands[0]);
    assert_string_equal(ar_suggest("reveiw", commands, n), "review");
    assert_string_equal(ar_suggest("promts", commands, n), "prompts");
    assert_string_equal(ar_suggest("worktree", commands, n), "worktrees");
    assert_string_equal(ar_suggest("bacth", commands, n), "batch");
    /* Too far, empty, or too long to weigh: nothing. */
    assert_null(ar_suggest("deploy", commands, n));
    assert_null(ar_suggest("", commands, n));
    char longer[200];
    memset(longer, 'r', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_null(ar_suggest(longer, commands, n));
    assert_null(ar_suggest("review", commands, 0));
}

static void test_suggest_names_none_of_two_equally_near(void **state)
{
    (void)state;
    const char *words[] = { "bat", "hat" };
    assert_null(ar_suggest("cat", words, 2));
    const char *one[] = { "bat", "hatch" };
    assert_string_equal(ar_suggest("cat", one, 2), "bat");
}

/* Whether b is a and one edit: a letter replaced, added or taken away, or two
 * neighbours swapped (the oracle: written apart from the distance it checks). */
static int one_edit(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), i = 0;
    while (i < n && i < m && a[i] == b[i])
        i++;
    if (n == m)
        return i < n && (strcmp(a + i + 1, b + i + 1) == 0 ||
                         (i + 1 < n && a[i] == b[i + 1] && a[i + 1] == b[i] &&
                          strcmp(a + i + 2, b + i + 2) == 0));
    if (n + 1 == m)
        return strcmp(a + i, b + i + 1) == 0;
    if (m + 1 == n)
        return strcmp(a + i + 1, b + i) == 0;
    return 0;
}

/* Every one-edit typo of a known name of three letters or more gets that name back,
 * unless another name is one edit from the typo too (then none). */
static void test_suggest_a_one_edit_typo_gets_its_word(void **state)
{
    (void)state;
    const char *words[] = { "allow_denied", "allow_edits",  "base",           "commit",
                            "cwd",          "expect",       "expect_changes", "fallback",
                            "id",           "idle_timeout", "json",           "model",
                            "prompt",       "provider",     "schema",         "template",
                            "timeout",      "track_files",  "trust_project",  "vars",
                            "worktree",     "claude",       "codex",          "gemini",
                            "auto",         "text",         "sarif",          "github" };
    size_t n = sizeof(words) / sizeof(words[0]), checked = 0;
    const char letters[] = "abcdeimoprstuvwxz_";
    for (size_t w = 0; w < n; w++) {
        size_t len = strlen(words[w]);
        if (len < 3)
            continue;
        char typo[64];
        for (size_t at = 0; at <= len; at++)
            for (int kind = 0; kind < 4; kind++)
                for (size_t l = 0; l < sizeof(letters) - 1; l++) {
                    if (kind == 0 && at < len) { /* replaced */
                        memcpy(typo, words[w], len + 1);
                        typo[at] = letters[l];
                    } else if (kind == 1) { /* added */
                        memcpy(typo, words[w], at);
                        typo[at] = letters[l];
                        memcpy(typo + at + 1, words[w] + at, len - at + 1);
                    } else if (kind == 2 && at < len && l == 0) { /* taken away */
                        memcpy(typo, words[w], at);
                        memcpy(typo + at, words[w] + at + 1, len - at);
                    } else if (kind == 3 && at + 1 < len && l == 0) { /* swapped */
                        memcpy(typo, words[w], len + 1);
                        typo[at] = words[w][at + 1];
                        typo[at + 1] = words[w][at];
                    } else {
                        continue;
                    }
                    int known = 0, near = 0;
                    for (size_t k = 0; k < n; k++) {
                        known |= strcmp(typo, words[k]) == 0;
                        near += k != w && one_edit(words[k], typo);
                    }
                    if (known || strlen(typo) < 3)
                        continue;
                    const char *got = ar_suggest(typo, words, n);
                    if (near)
                        assert_true(got == NULL || one_edit(got, typo));
                    else if (!got || strcmp(got, words[w]) != 0)
                        fail_msg("'%s' (a typo of '%s') suggested '%s'", typo, words[w],
                                 got ? got : "(none)");
                    checked++;
                }
    }
    assert_true(checked > 5000);
}

static void test_suggest_in_list_reads_a_list_as_text(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(ar_suggest_in_list("jsno", "text|json|sarif", buf, sizeof(buf)), "json");
    assert_string_equal(
        ar_suggest_in_list("clade", "claude, codex, gemini, auto", buf, sizeof(buf)), "claude");
    assert_string_equal(ar_suggest_in_list("shwo", "list show", buf, sizeof(buf)), "show");
    assert_null(ar_suggest_in_list("xml", "text|json", buf, sizeof(buf)));
    assert_null(ar_suggest_in_list("jsno", "", buf, sizeof(buf)));
    assert_null(ar_suggest_in_list("jsno", "text|json", buf, 4)); /* "json" needs 5 bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_append_and_cstr),
        cmocka_unit_test(test_buf_refuses_past_max),
        cmocka_unit_test(test_buf_detach_hands_out_and_resets),
        cmocka_unit_test(test_file_read_fd_empty_pipe_is_an_empty_string),
        cmocka_unit_test(test_strv_builds_null_terminated_vector),
        cmocka_unit_test(test_error_table_maps_names_and_exit_statuses),
        cmocka_unit_test(test_error_message_is_truncated_not_overflowed),
        cmocka_unit_test(test_utf8_lossy_copy_replaces_each_bad_byte),
        cmocka_unit_test(test_buf_replace_nul_keeps_what_follows_the_nul),
        cmocka_unit_test(test_file_read_fd_pipe_in_pieces_under_the_cap),
        cmocka_unit_test(test_file_read_fd_past_the_cap_is_too_big),
        cmocka_unit_test(test_file_read_follows_a_link_that_stays_in_its_folder),
        cmocka_unit_test(test_file_read_refuses_a_link_out_of_its_folder),
        cmocka_unit_test(test_file_read_refuses_what_is_not_a_regular_file),
        cmocka_unit_test(test_file_read_has_a_size_cap),
        cmocka_unit_test(test_file_read_own_follows_links_anywhere),
        cmocka_unit_test(test_file_read_a_link_loop_ends),
        cmocka_unit_test(test_temp_sweep_removes_only_what_dead_processes_left),
        cmocka_unit_test(test_temp_sweep_is_due_once_a_minute),
        cmocka_unit_test(test_cpu_probe_agrees_with_glibc),
        cmocka_unit_test(test_temp_names_carry_the_pid_and_are_private),
        cmocka_unit_test(test_file_view_maps_a_regular_file),
        cmocka_unit_test(test_file_view_keeps_links_inside_the_folder),
        cmocka_unit_test(test_file_view_reads_a_pipe_whole),
        cmocka_unit_test(test_suggest_names_the_near_word),
        cmocka_unit_test(test_suggest_names_none_of_two_equally_near),
        cmocka_unit_test(test_suggest_a_one_edit_typo_gets_its_word),
        cmocka_unit_test(test_suggest_in_list_reads_a_list_as_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
