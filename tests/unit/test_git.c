/*
 * Unit tests of src/git without git: porcelain v2 -z parsing on canned output,
 * the before/after comparison table, hashing and content capture of files in
 * a temporary directory, and the JSON of the `files` field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git.h"
#include "util/utf8.h"
#include "git/internal.h"
#include "git/run.h"
#include "git/worktrees.h"

#define HH   "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
#define HH24 "0123456789abcdef01234567"
#define ZERO "0000000000000000000000000000000000000000"

/* Canned output is written with explicit "\0" separators; sizeof - 1 drops the literal's own NUL.
 */
#define PARSE(lit, snap) \
    assert_int_equal(ar_git_snapshot_parse("/r", lit, sizeof(lit) - 1, &(snap), NULL), 0)

static void hex(const unsigned char *oid, char out[41])
{
    for (int i = 0; i < 20; i++)
        sprintf(out + 2 * i, "%02x", oid[i]);
}

static void test_sha1_known_vectors(void **state)
{
    static const struct {
        const char *in;
        const char *hex;
    } v[] = {
        { "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
        { "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        struct ar_sha1 s;
        unsigned char out[20];
        char h[41];
        ar_sha1_init(&s);
        /* Byte by byte, so the block-boundary path is exercised too. */
        for (const char *p = v[i].in; *p; p++)
            ar_sha1_update(&s, p, 1);
        ar_sha1_final(&s, out);
        hex(out, h);
        assert_string_equal(h, v[i].hex);
    }
    struct ar_sha1 s;
    unsigned char out[20];
    char h[41];
    char *mil = malloc(1000000);
    memset(mil, 'a', 1000000);
    ar_sha1_init(&s);
    ar_sha1_update(&s, mil, 1000000);
    ar_sha1_final(&s, out);
    free(mil);
    hex(out, h);
    assert_string_equal(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

static void test_parse_ordinary_modified_in_head(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("1 .M N... 100644 100644 100644 " HH " " HH " src/a.c\0", s);
    assert_true(s->tracked);
    assert_string_equal(s->root, "/r");
    assert_int_equal(s->n, 1);
    assert_string_equal(s->files[0].path, "src/a.c");
    assert_int_equal(s->files[0].x, '.');
    assert_int_equal(s->files[0].y, 'M');
    assert_true(s->files[0].in_head);
    assert_true(s->files[0].has_head_oid);
    assert_int_equal(s->files[0].head_oid[0], 0xe6);
    assert_null(s->files[0].rename_from);
    ar_git_snapshot_destroy(s);
}

static void test_parse_sha256_names_still_mark_head(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("1 .M N... 100644 100644 100644 " HH HH24 " " HH HH24 " x\0", s);
    assert_true(s->files[0].in_head);
    assert_false(s->files[0].has_head_oid);
    ar_git_snapshot_destroy(s);
}

static void test_parse_added_is_not_in_head(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("1 A. N... 000000 100644 100644 " ZERO " " HH " new.c\0"
          "1 .A N... 000000 000000 100644 " ZERO " " ZERO " intent.c\0",
          s);
    assert_int_equal(s->n, 2);
    assert_string_equal(s->files[0].path, "intent.c");
    assert_false(s->files[0].in_head);
    assert_string_equal(s->files[1].path, "new.c");
    assert_false(s->files[1].in_head);
    assert_false(s->files[1].has_head_oid);
    ar_git_snapshot_destroy(s);
}

static void test_parse_rename_gives_target_and_deleted_source(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("2 R. N... 100644 100644 100644 " HH " " HH " R100 new name.txt\0old name.txt\0", s);
    assert_int_equal(s->n, 2);
    assert_string_equal(s->files[0].path, "new name.txt");
    assert_string_equal(s->files[0].rename_from, "old name.txt");
    assert_false(s->files[0].in_head);
    assert_string_equal(s->files[1].path, "old name.txt");
    assert_null(s->files[1].rename_from);
    assert_true(s->files[1].in_head);
    assert_true(s->files[1].has_head_oid);
    assert_int_equal(s->files[1].x, 'D');
    ar_git_snapshot_destroy(s);
}

static void test_parse_copy_is_not_a_rename(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("2 C. N... 100644 100644 100644 " HH " " HH " C75 copy.c\0orig.c\0", s);
    assert_int_equal(s->n, 2);
    assert_string_equal(s->files[0].path, "copy.c");
    assert_null(s->files[0].rename_from);
    assert_string_equal(s->files[1].path, "orig.c");
    assert_int_equal(s->files[1].x, '.');
    ar_git_snapshot_destroy(s);
}

static void test_parse_unmerged_uses_stage_two_as_head(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("u UU N... 100644 100644 100644 100644 " HH " " HH " " HH " conflict.c\0", s);
    assert_int_equal(s->n, 1);
    assert_int_equal(s->files[0].x, 'U');
    assert_true(s->files[0].in_head);
    ar_git_snapshot_destroy(s);
    PARSE("u DU N... 100644 000000 100644 100644 " HH " " ZERO " " HH " theirs.c\0", s);
    assert_false(s->files[0].in_head);
    ar_git_snapshot_destroy(s);
}

static void test_parse_odd_names_pass_through_raw(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("? a b\0? \"quoted\"\0? line\nbreak\0? caf\xc3\xa9\0? bad\xff\0? tab\there\0"
          "? dir/sub dir/x y\0",
          s);
    assert_int_equal(s->n, 7);
    /* Sorted bytewise. */
    assert_string_equal(s->files[0].path, "\"quoted\"");
    assert_string_equal(s->files[1].path, "a b");
    assert_string_equal(s->files[2].path, "bad\xff");
    assert_string_equal(s->files[3].path, "caf\xc3\xa9");
    assert_string_equal(s->files[4].path, "dir/sub dir/x y");
    assert_string_equal(s->files[5].path, "line\nbreak");
    assert_string_equal(s->files[6].path, "tab\there");
    for (size_t i = 0; i < s->n; i++) {
        assert_int_equal(s->files[i].x, '?');
        assert_false(s->files[i].in_head);
    }
    assert_non_null(ar_git_snapshot_find(s, "line\nbreak"));
    assert_null(ar_git_snapshot_find(s, "line"));
    ar_git_snapshot_destroy(s);
}

static void test_parse_ordinary_path_with_spaces_keeps_them(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("1 .M N... 100644 100644 100644 " HH " " HH "  lead and trail  \0", s);
    assert_string_equal(s->files[0].path, " lead and trail  ");
    ar_git_snapshot_destroy(s);
}

static void test_parse_merges_a_path_listed_twice(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("1 D. N... 100644 000000 000000 " HH " " ZERO " f\0? f\0", s);
    assert_int_equal(s->n, 1);
    assert_int_equal(s->files[0].x, 'D');
    assert_true(s->files[0].in_head);
    ar_git_snapshot_destroy(s);
}

static void test_parse_skips_headers_and_ignored(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("# branch.oid " HH "\0# branch.head main\0! build/x\0? kept\0", s);
    assert_int_equal(s->n, 1);
    assert_string_equal(s->files[0].path, "kept");
    ar_git_snapshot_destroy(s);
    PARSE("", s);
    assert_int_equal(s->n, 0);
    assert_true(s->tracked);
    ar_git_snapshot_destroy(s);
}

static void test_parse_rejects_malformed_output(void **state)
{
    static const struct {
        const char *data;
        size_t len; /* 0: up to and including the first NUL */
    } bad[] = {
        { "? no terminator", 15 },
        { "X what\0", 0 },
        { "1 .M N... 100644 short\0", 0 },
        { "2 R. N... 100644 100644 100644 " HH " " HH " R100 new\0", 0 },
        { "? \0", 0 },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ar_git_snapshot *s = NULL;
        struct ar_error e = AR_ERROR_INIT;
        size_t len = bad[i].len ? bad[i].len : strlen(bad[i].data) + 1;
        assert_int_equal(ar_git_snapshot_parse("/r", bad[i].data, len, &s, &e), AR_EIO);
        assert_null(s);
        assert_int_equal(e.code, AR_EIO);
        assert_non_null(strstr(e.msg, "cannot parse git status output"));
    }
}

static void test_parse_branch_header_gives_head(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("# branch.oid " HH "\0# branch.head main\0", s);
    assert_string_equal(s->head, HH);
    ar_git_snapshot_destroy(s);
    PARSE("# branch.oid (initial)\0# branch.head main\0? x\0", s);
    assert_string_equal(s->head, "");
    assert_int_equal(s->n, 1);
    ar_git_snapshot_destroy(s);
}

static void test_parse_commit_name_status(void **state)
{
    struct ar_git_snapshot *s;
    PARSE("", s);
    static const char out[] = "M\0a b\0R087\0old\0new\nname\0A\0caf\xc3\xa9\0D\0gone\0"
                              "C075\0src\0copy\0T\0link\0";
    assert_int_equal(ar_git_snapshot_parse_commits(s, out, sizeof(out) - 1, NULL), 0);
    assert_int_equal(s->n_committed, 7);
    static const char *const want[][3] = {
        { "a b", "M", NULL },  { "caf\xc3\xa9", "A", NULL }, { "copy", "A", NULL },
        { "gone", "D", NULL }, { "link", "T", NULL },        { "new\nname", "R", "old" },
        { "old", "D", NULL },
    };
    for (size_t i = 0; i < 7; i++) {
        const struct ar_git_file *f = &s->committed[i];
        assert_string_equal(f->path, want[i][0]);
        assert_int_equal(f->x, want[i][1][0]);
        if (want[i][2])
            assert_string_equal(f->rename_from, want[i][2]);
        else
            assert_null(f->rename_from);
    }
    static const char *const bad[] = { "Z\0a\0", "M\0", "M\0a", "R100\0old\0", "M\0\0" };
    static const size_t bad_len[] = { 4, 2, 3, 9, 3 };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(ar_git_snapshot_parse_commits(s, bad[i], bad_len[i], NULL), AR_EIO);
    assert_int_equal(s->n_committed, 7); /* a failed parse leaves the old list */
    ar_git_snapshot_destroy(s);
}

/* Garbage in: either a clean AR_EIO or a snapshot whose every path is a real string. */
static void test_parsers_survive_random_bytes(void **state)
{
    static const char alphabet[] = "12u?#! RC.MADU0\0\n";
    unsigned seed = 12345;
    char buf[256];
    int parsed = 0;
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(round % 255) + 1;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
        }
        struct ar_git_snapshot *s = NULL;
        int rc = ar_git_snapshot_parse("/r", buf, n, &s, NULL);
        assert_true(rc == 0 || rc == AR_EIO);
        if (rc == 0) {
            parsed++;
            for (size_t i = 0; i < s->n; i++)
                assert_true(strlen(s->files[i].path) > 0);
            rc = ar_git_snapshot_parse_commits(s, buf, n, NULL);
            assert_true(rc == 0 || rc == AR_EIO);
            ar_git_snapshot_destroy(s);
        }
    }
    assert_true(parsed > 0);
}

/* ---- the comparison table ---- */

struct fspec {
    const char *path;
    unsigned in_head, exists;
    int hash; /* content id byte; 0: not hashed */
    int head; /* HEAD blob id byte; 0: none */
    unsigned revisit;
    const char *from;
    char x; /* for commits: the name-status letter */
};

static struct ar_git_file *build_files(const struct fspec *spec, size_t *n_out)
{
    size_t n = 0;
    while (spec[n].path)
        n++;
    struct ar_git_file *v = calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        struct ar_git_file *f = &v[i];
        f->path = strdup(spec[i].path);
        f->rename_from = spec[i].from ? strdup(spec[i].from) : NULL;
        f->in_head = spec[i].in_head;
        f->exists = spec[i].exists;
        f->revisit = spec[i].revisit;
        f->x = spec[i].x;
        if (spec[i].hash) {
            f->hashed = 1;
            memset(f->oid, spec[i].hash, sizeof(f->oid));
        }
        if (spec[i].head) {
            f->has_head_oid = 1;
            memset(f->head_oid, spec[i].head, sizeof(f->head_oid));
        }
    }
    *n_out = n;
    return v;
}

static struct ar_git_snapshot *build(const struct fspec *spec, const struct fspec *committed)
{
    struct ar_git_snapshot *s = calloc(1, sizeof(*s));
    s->tracked = 1;
    s->root = strdup("/r");
    s->files = build_files(spec, &s->n);
    if (committed)
        s->committed = build_files(committed, &s->n_committed);
    return s;
}

#define MAXF 6
struct diff_case {
    const char *name;
    struct fspec before[MAXF];
    struct fspec after[MAXF];
    const char *expect;
    struct fspec committed[MAXF];
    /* after->committed: HEAD moved during the run */ /* "op path[<from];…", "" for no change */
};

static const struct diff_case diff_cases[] = {
    { "untracked file created",
      { { 0 } },
      { { "new", 0, 1, 1, 0, 0, 0, 0 }, { 0 } },
      "create new;",
      { { 0 } } },
    { "clean tracked file modified",
      { { 0 } },
      { { "a", 1, 1, 1, 9, 0, 0, 0 }, { 0 } },
      "modify a;",
      { { 0 } } },
    { "clean tracked file deleted",
      { { 0 } },
      { { "a", 1, 0, 0, 9, 0, 0, 0 }, { 0 } },
      "delete a;",
      { { 0 } } },
    { "already dirty and untouched",
      { { "a", 1, 1, 1, 9, 0, 0, 0 }, { "u", 0, 1, 2, 0, 0, 0, 0 }, { 0 } },
      { { "a", 1, 1, 1, 9, 0, 0, 0 }, { "u", 0, 1, 2, 0, 0, 0, 0 }, { 0 } },
      "",
      { { 0 } } },
    { "already dirty and modified again",
      { { "a", 1, 1, 1, 9, 0, 0, 0 }, { 0 } },
      { { "a", 1, 1, 2, 9, 0, 0, 0 }, { 0 } },
      "modify a;",
      { { 0 } } },
    { "already dirty untracked file modified again",
      { { "u", 0, 1, 1, 0, 0, 0, 0 }, { 0 } },
      { { "u", 0, 1, 3, 0, 0, 0, 0 }, { 0 } },
      "modify u;",
      { { 0 } } },
    { "dirty file reverted to clean",
      { { "a", 1, 1, 1, 9, 0, 0, 0 }, { 0 } },
      { { "a", 1, 1, 9, 0, 1, 0, 0 }, { 0 } },
      "modify a;",
      { { 0 } } },
    { "dirty file committed unchanged",
      { { "a", 1, 1, 1, 9, 0, 0, 0 }, { 0 } },
      { { "a", 1, 1, 1, 0, 1, 0, 0 }, { 0 } },
      "",
      { { 0 } } },
    { "untracked file removed",
      { { "u", 0, 1, 1, 0, 0, 0, 0 }, { 0 } },
      { { "u", 0, 0, 0, 0, 1, 0, 0 }, { 0 } },
      "delete u;",
      { { 0 } } },
    { "file deleted before and restored",
      { { "a", 1, 0, 0, 9, 0, 0, 0 }, { 0 } },
      { { "a", 1, 1, 9, 0, 1, 0, 0 }, { 0 } },
      "create a;",
      { { 0 } } },
    { "file deleted before stays deleted",
      { { "a", 1, 0, 0, 9, 0, 0, 0 }, { 0 } },
      { { "a", 1, 0, 0, 9, 0, 0, 0 }, { 0 } },
      "",
      { { 0 } } },
    { "staged rename",
      { { 0 } },
      { { "new", 0, 1, 4, 0, 0, "old", 0 }, { "old", 1, 0, 0, 4, 0, 0, 0 }, { 0 } },
      "rename new<old;",
      { { 0 } } },
    { "plain mv of a tracked file",
      { { 0 } },
      { { "a/new", 0, 1, 5, 0, 0, 0, 0 }, { "old", 1, 0, 0, 5, 0, 0, 0 }, { 0 } },
      "rename a/new<old;",
      { { 0 } } },
    { "plain mv of an untracked file",
      { { "x", 0, 1, 3, 0, 0, 0, 0 }, { 0 } },
      { { "x", 0, 0, 0, 0, 1, 0, 0 }, { "y", 0, 1, 3, 0, 0, 0, 0 }, { 0 } },
      "rename y<x;",
      { { 0 } } },
    { "delete and create with other content",
      { { 0 } },
      { { "new", 0, 1, 6, 0, 0, 0, 0 }, { "old", 1, 0, 0, 5, 0, 0, 0 }, { 0 } },
      "create new;delete old;",
      { { 0 } } },
    { "one old content pairs with one new file only",
      { { 0 } },
      { { "b1", 0, 1, 5, 0, 0, 0, 0 },
        { "b2", 0, 1, 5, 0, 0, 0, 0 },
        { "old", 1, 0, 0, 5, 0, 0, 0 },
        { 0 } },
      "rename b1<old;create b2;",
      { { 0 } } },
    { "added then removed from the work tree",
      { { 0 } },
      { { "tmp", 0, 0, 0, 0, 0, 0, 0 }, { 0 } },
      "",
      { { 0 } } },
    { "after taken without prev: tracked dirty file now clean",
      { { "a", 1, 1, 1, 9, 0, 0, 0 }, { "u", 0, 1, 1, 0, 0, 0, 0 }, { 0 } },
      { { 0 } },
      "modify a;delete u;",
      { { 0 } } },
    { "submodule directories without hashes are not compared",
      { { "sub", 1, 1, 0, 0, 0, 0, 0 }, { 0 } },
      { { "sub", 1, 1, 0, 0, 0, 0, 0 }, { 0 } },
      "",
      { { 0 } } },
    { "results sorted by path",
      { { "m", 1, 1, 1, 0, 0, 0, 0 }, { 0 } },
      { { "c", 0, 1, 7, 0, 0, 0, 0 },
        { "m", 1, 1, 2, 0, 0, 0, 0 },
        { "z", 1, 0, 0, 8, 0, 0, 0 },
        { 0 } },
      "create c;modify m;delete z;",
      { { 0 } } },
};

static void test_diff_table(void **state)
{
    for (size_t i = 0; i < sizeof(diff_cases) / sizeof(diff_cases[0]); i++) {
        const struct diff_case *dc = &diff_cases[i];
        struct ar_git_snapshot *b = build(dc->before, NULL);
        struct ar_git_snapshot *a = build(dc->after, dc->committed);
        struct ar_git_changes ch;
        ar_git_changes_init(&ch);
        assert_int_equal(ar_git_changes_compute(b, a, &ch, NULL), 0);
        char got[512] = "";
        for (size_t k = 0; k < ch.n; k++) {
            size_t l = strlen(got);
            snprintf(got + l, sizeof(got) - l, "%s %s%s%s;", ar_git_op_name(ch.v[k].op),
                     ch.v[k].path, ch.v[k].from ? "<" : "", ch.v[k].from ? ch.v[k].from : "");
            assert_int_equal(ch.v[k].op == AR_GIT_RENAME, ch.v[k].from != NULL);
        }
        if (strcmp(got, dc->expect) != 0)
            fail_msg("%s: got \"%s\", want \"%s\"", dc->name, got, dc->expect);
        ar_git_changes_finish(&ch);
        assert_int_equal(ch.n, 0);
        ar_git_snapshot_destroy(b);
        ar_git_snapshot_destroy(a);
    }
}

static void test_op_names(void **state)
{
    assert_string_equal(ar_git_op_name(AR_GIT_CREATE), "create");
    assert_string_equal(ar_git_op_name(AR_GIT_MODIFY), "modify");
    assert_string_equal(ar_git_op_name(AR_GIT_DELETE), "delete");
    assert_string_equal(ar_git_op_name(AR_GIT_RENAME), "rename");
}

/* ---- the work tree: hashing and content ---- */

static char tmpdir[256];

static int make_tmp(void **state)
{
    snprintf(tmpdir, sizeof(tmpdir), "%s/agentrun-test-git-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmp(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *name, const void *data, size_t n)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void test_hash_is_git_blob_id_and_revisits_prev(void **state)
{
    put("hello", "hello\n", 6);
    put("empty", "", 0);
    char link[512];
    snprintf(link, sizeof(link), "%s/link", tmpdir);
    assert_int_equal(symlink("hello", link), 0);
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/dir", tmpdir);
    assert_int_equal(mkdir(sub, 0755), 0);

    struct ar_git_snapshot *prev, *s;
    assert_int_equal(ar_git_snapshot_parse(tmpdir, "? gone\0? empty\0", 15, &prev, NULL), 0);
    static const char now[] = "? hello\0? link\0? dir/\0? missing\0";
    assert_int_equal(ar_git_snapshot_parse(tmpdir, now, sizeof(now) - 1, &s, NULL), 0);
    assert_int_equal(ar_git_snapshot_hash(s, prev, NULL), 0);
    assert_int_equal(s->n, 6);

    char h[41];
    const struct ar_git_file *f = ar_git_snapshot_find(s, "hello");
    assert_true(f->exists && f->hashed && !f->revisit);
    hex(f->oid, h);
    assert_string_equal(h, "ce013625030ba8dba906f756967f9e9ca394464a");

    f = ar_git_snapshot_find(s, "link");
    assert_true(f->exists && f->hashed);
    hex(f->oid, h);
    assert_string_equal(h, "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0"); /* blob "hello" */

    f = ar_git_snapshot_find(s, "dir/");
    assert_true(f->exists);
    assert_false(f->hashed);

    f = ar_git_snapshot_find(s, "missing");
    assert_false(f->exists);
    assert_false(f->hashed);

    f = ar_git_snapshot_find(s, "empty");
    assert_true(f->revisit && f->exists && f->in_head && f->hashed);
    hex(f->oid, h);
    assert_string_equal(h, HH);

    f = ar_git_snapshot_find(s, "gone");
    assert_true(f->revisit);
    assert_false(f->exists);
    assert_false(f->in_head);

    ar_git_snapshot_destroy(prev);
    ar_git_snapshot_destroy(s);
}

static void test_utf8_validation(void **state)
{
    assert_true(ar_utf8_valid("", 0));
    assert_true(ar_utf8_valid("plain", 5));
    assert_true(ar_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14));
    assert_false(ar_utf8_valid("\xc0\x80", 2));         /* overlong NUL */
    assert_false(ar_utf8_valid("\xe0\x80\xaf", 3));     /* overlong '/' */
    assert_false(ar_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
    assert_false(ar_utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
    assert_false(ar_utf8_valid("\xff", 1));
    assert_false(ar_utf8_valid("\xe2\x82", 2)); /* cut short */
    assert_false(ar_utf8_valid("\x80", 1));
}

static struct ar_git_change *add_change(struct ar_git_changes *ch, const char *path,
                                        enum ar_git_op op, const char *from)
{
    ch->v = realloc(ch->v, (ch->n + 1) * sizeof(*ch->v));
    struct ar_git_change *c = &ch->v[ch->n++];
    memset(c, 0, sizeof(*c));
    c->path = strdup(path);
    c->from = from ? strdup(from) : NULL;
    c->op = op;
    return c;
}

static void test_content_encodings_and_cap(void **state)
{
    put("text.txt", "caf\xc3\xa9\n", 6);
    put("bin", "\x00\x01\x02", 3);
    put("latin1", "caf\xe9", 4);
    put("long", "0123456789abcdef", 16);
    put("cut", "aaaaaaaa\xe2\x82\xac", 11); /* the euro sign straddles the cap of 10 */
    char link[512];
    snprintf(link, sizeof(link), "%s/link", tmpdir);
    assert_int_equal(symlink("target path", link), 0);

    struct ar_git_changes ch;
    ar_git_changes_init(&ch);
    add_change(&ch, "bin", AR_GIT_CREATE, NULL);
    add_change(&ch, "cut", AR_GIT_MODIFY, NULL);
    add_change(&ch, "gone", AR_GIT_DELETE, NULL);
    add_change(&ch, "latin1", AR_GIT_MODIFY, NULL);
    add_change(&ch, "link", AR_GIT_CREATE, NULL);
    add_change(&ch, "long", AR_GIT_RENAME, "old");
    add_change(&ch, "missing", AR_GIT_CREATE, NULL);
    add_change(&ch, "text.txt", AR_GIT_CREATE, NULL);
    assert_int_equal(ar_git_changes_load_content(&ch, tmpdir, 10, NULL), 0);

    assert_true(ch.v[0].has_content && !ch.v[0].utf8 && !ch.v[0].truncated);
    assert_int_equal(ch.v[0].content_len, 3);
    assert_true(ch.v[1].has_content && ch.v[1].utf8 && ch.v[1].truncated);
    assert_string_equal(ch.v[1].content, "aaaaaaaa");
    assert_false(ch.v[2].has_content);
    assert_true(ch.v[3].has_content && !ch.v[3].utf8);
    assert_true(ch.v[4].has_content && ch.v[4].utf8);
    assert_string_equal(ch.v[4].content, "target pat");
    assert_true(ch.v[4].truncated);
    assert_true(ch.v[5].has_content && ch.v[5].utf8 && ch.v[5].truncated);
    assert_string_equal(ch.v[5].content, "0123456789");
    assert_false(ch.v[6].has_content);
    assert_true(ch.v[7].has_content && ch.v[7].utf8 && !ch.v[7].truncated);

    json_t *j = ar_git_changes_to_json(&ch);
    assert_non_null(j);
    assert_int_equal(json_array_size(j), 8);
    json_t *o = json_array_get(j, 0);
    assert_string_equal(json_string_value(json_object_get(o, "path")), "bin");
    assert_string_equal(json_string_value(json_object_get(o, "op")), "create");
    assert_true(json_is_null(json_object_get(o, "from")));
    assert_string_equal(json_string_value(json_object_get(o, "content")), "AAEC");
    assert_string_equal(json_string_value(json_object_get(o, "encoding")), "base64");
    assert_true(json_is_false(json_object_get(o, "truncated")));
    o = json_array_get(j, 2);
    assert_string_equal(json_string_value(json_object_get(o, "op")), "delete");
    assert_null(json_object_get(o, "content"));
    assert_null(json_object_get(o, "encoding"));
    o = json_array_get(j, 3);
    assert_string_equal(json_string_value(json_object_get(o, "content")), "Y2Fm6Q==");
    o = json_array_get(j, 5);
    assert_string_equal(json_string_value(json_object_get(o, "op")), "rename");
    assert_string_equal(json_string_value(json_object_get(o, "from")), "old");
    assert_true(json_is_true(json_object_get(o, "truncated")));
    o = json_array_get(j, 7);
    assert_string_equal(json_string_value(json_object_get(o, "content")), "caf\xc3\xa9\n");
    assert_string_equal(json_string_value(json_object_get(o, "encoding")), "utf-8");
    json_decref(j);
    ar_git_changes_finish(&ch);
}

static void test_json_paths_not_utf8_get_replacement_chars(void **state)
{
    struct ar_git_changes ch;
    ar_git_changes_init(&ch);
    add_change(&ch, "bad\xff.txt", AR_GIT_RENAME, "caf\xc3\xa9\n\"q\"");
    json_t *j = ar_git_changes_to_json(&ch);
    assert_non_null(j);
    json_t *o = json_array_get(j, 0);
    assert_string_equal(json_string_value(json_object_get(o, "path")), "bad\xef\xbf\xbd.txt");
    assert_string_equal(json_string_value(json_object_get(o, "from")), "caf\xc3\xa9\n\"q\"");
    json_decref(j);
    ar_git_changes_finish(&ch);

    j = ar_git_changes_to_json(&ch);
    assert_int_equal(json_array_size(j), 0);
    json_decref(j);
}

static void test_find_root_walks_up_to_a_dot_git_entry(void **state)
{
    char p[512], real[4096];
    assert_non_null(realpath(tmpdir, real));
    snprintf(p, sizeof(p), "%s/w/a/b", tmpdir);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s/w/.git' '%s/w/a/sub'", p, tmpdir, tmpdir);
    assert_int_equal(system(cmd), 0);
    put("w/a/sub/.git", "gitdir: ../../.git/modules/sub\n", 31); /* a submodule's .git file */

    char want[4200];
    snprintf(want, sizeof(want), "%s/w", real);
    char *root = ar_git_find_root(p);
    assert_non_null(root);
    assert_string_equal(root, want);
    free(root);

    snprintf(p, sizeof(p), "%s/w/a/sub", tmpdir);
    snprintf(want, sizeof(want), "%s/w/a/sub", real);
    root = ar_git_find_root(p);
    assert_non_null(root);
    assert_string_equal(root, want);
    free(root);

    snprintf(p, sizeof(p), "%s/nonexistent", tmpdir);
    assert_null(ar_git_find_root(p));
}

/* git does not look in or above a proper ancestor named in GIT_CEILING_DIRECTORIES. */
static void test_find_root_stops_below_a_ceiling_directory(void **state)
{
    char p[512], real[4096], ceil[1200], want[4200];
    assert_non_null(realpath(tmpdir, real));
    snprintf(p, sizeof(p), "%s/w/a/b", tmpdir);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s/w/.git'", p, tmpdir);
    assert_int_equal(system(cmd), 0);
    snprintf(want, sizeof(want), "%s/w", real);

    struct {
        const char *fmt; /* %s: tmpdir */
        int found;
    } cases[] = {
        { "%s/w", 0 },        /* the repository's top is the ceiling: not looked in */
        { "rel:%s/w/a/", 0 }, /* below it, with a trailing slash, after a relative entry */
        { "%s", 1 },          /* above the top: the top is still below the ceiling */
        { "%s/w/a/b", 1 },    /* the start directory itself is not a proper ancestor */
        { "w:%s/w/a/bb", 1 }, /* a sibling's prefix is not an ancestor */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(ceil, sizeof(ceil), cases[i].fmt, tmpdir);
        setenv("GIT_CEILING_DIRECTORIES", ceil, 1);
        char *root = ar_git_find_root(p);
        if (cases[i].found) {
            assert_non_null(root);
            assert_string_equal(root, want);
        } else if (root) {
            fail_msg("GIT_CEILING_DIRECTORIES=%s: found %s", ceil, root);
        }
        free(root);
    }
    unsetenv("GIT_CEILING_DIRECTORIES");
}

static void test_untracked_snapshot_has_reason(void **state)
{
    struct ar_git_snapshot *s = ar_git_snapshot_untracked("git not found: %s", "x");
    assert_false(s->tracked);
    assert_null(s->root);
    assert_int_equal(s->n, 0);
    assert_string_equal(s->reason, "git not found: x");
    ar_git_snapshot_destroy(s);
    ar_git_snapshot_destroy(NULL);
}

/* The whole command line of args (NULL-terminated) under flags, words joined by ' '. */
static void git_line(const char *const *args, unsigned flags, char *out, size_t cap)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.args = args;
    cmd.flags = flags;
    struct ar_strv argv = AR_STRV_INIT;
    assert_int_equal(ar_git_argv(&cmd, &argv), 0);
    out[0] = '\0';
    for (size_t i = 0; i < argv.n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", i ? " " : "", argv.v[i]);
    }
    ar_strv_finish(&argv);
}

/* Every git command is hardened; a caller cannot leave the diff options out. */
static void test_git_argv_is_hardened(void **state)
{
    char got[1024];
    static const char *const status[] = { "status", "-z", NULL };
    git_line(status, 0, got, sizeof(got));
    assert_string_equal(got, "git -c core.fsmonitor=false status -z");

    static const char *const diff[] = { "diff", "--name-status", "A", "B", "--", NULL };
    git_line(diff, 0, got, sizeof(got));
    assert_string_equal(got, "git -c core.fsmonitor=false diff --no-color --no-ext-diff "
                             "--no-textconv --text --ignore-submodules=none --name-status A B --");

    static const char *const noindex[] = { "diff", "--no-index", "--", "/dev/null", "x", NULL };
    git_line(noindex, AR_GIT_PIN_OUTPUT, got, sizeof(got));
    assert_string_equal(got,
                        "git -c core.fsmonitor=false -c core.quotepath=false -c "
                        "diff.noprefix=false -c diff.mnemonicPrefix=false -c "
                        "diff.relative=false -c color.ui=never -c diff.autoRefreshIndex=true "
                        "diff --no-color "
                        "--no-ext-diff --no-textconv --text --ignore-submodules=none --no-index -- "
                        "/dev/null x");

    static const char *const show[] = { "show", "HEAD", NULL }, *const log[] = { "log", "-p",
                                                                                 NULL };
    git_line(show, 0, got, sizeof(got));
    assert_string_equal(got, "git -c core.fsmonitor=false show --no-color --no-ext-diff "
                             "--no-textconv --text --ignore-submodules=none HEAD");
    git_line(log, 0, got, sizeof(got));
    assert_string_equal(got, "git -c core.fsmonitor=false log --no-color --no-ext-diff "
                             "--no-textconv --text --ignore-submodules=none -p");

    /* A word that only starts like a diff command is not one. */
    static const char *const other[] = { "diff-tree", "x", NULL };
    git_line(other, 0, got, sizeof(got));
    assert_string_equal(got, "git -c core.fsmonitor=false diff-tree x");

    /* A worktree's commands name their repository and run no hook. */
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    static const char *const add[] = { "add", "-A", NULL };
    cmd.args = add;
    cmd.flags = AR_GIT_NO_HOOKS;
    cmd.git_dir = "/r/.git/worktrees/t1";
    cmd.work_tree = "/w/t1";
    struct ar_strv argv = AR_STRV_INIT;
    assert_int_equal(ar_git_argv(&cmd, &argv), 0);
    static const char *const want_add[] = { "git",
                                            "-c",
                                            "core.fsmonitor=false",
                                            "-c",
                                            "core.hooksPath=/dev/null",
                                            "--git-dir=/r/.git/worktrees/t1",
                                            "--work-tree=/w/t1",
                                            "add",
                                            "-A",
                                            NULL };
    for (size_t i = 0; want_add[i] || i < argv.n; i++)
        assert_string_equal(i < argv.n ? argv.v[i] : "(end)", want_add[i] ? want_add[i] : "(end)");
    ar_strv_finish(&argv);

    static const char *const want_env[] = { "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat",
                                            "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", NULL };
    for (size_t i = 0; want_env[i]; i++) {
        size_t k = 0;
        while (ar_git_env[k] && strcmp(ar_git_env[k], want_env[i]) != 0)
            k++;
        if (!ar_git_env[k])
            fail_msg("%s is missing from git's environment", want_env[i]);
    }
}

/* ar_git_branch_name_ok() says what `git check-ref-format --branch` says, on a corpus
 * recorded from git (tests/fixtures/git/branch-names.jsonl; test_worktrees.py checks it
 * against the installed git). */
static void test_branch_names_as_git_judges_them(void **state)
{
    FILE *f = fopen(AR_SOURCE_ROOT "/tests/fixtures/git/branch-names.jsonl", "r");
    assert_non_null(f);
    char line[4096];
    size_t n = 0, ok = 0;
    while (fgets(line, sizeof(line), f)) {
        json_error_t jerr;
        json_t *v = json_loads(line, 0, &jerr);
        assert_non_null(v);
        const char *name = json_string_value(json_object_get(v, "name"));
        int want = json_is_true(json_object_get(v, "ok"));
        if (ar_git_branch_name_ok(name) != want)
            fail_msg("'%s': git says %s", name, want ? "valid" : "invalid");
        n++;
        ok += (size_t)want;
        json_decref(v);
    }
    fclose(f);
    assert_true(n > 400 && ok > 40);
}

/* A valid name as a path below a folder has no empty, "." or ".." part and is no option. */
static void assert_stays_below(const char *name)
{
    assert_true(ar_git_branch_name_ok(name));
    assert_true(name[0] != '-' && name[0] != '/');
    for (const char *p = name;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        assert_true(len > 0 && p[0] != '.');
        if (!slash)
            break;
        p = slash + 1;
    }
}

/* Any job id becomes one component of a valid branch; ids that map alike stay apart. */
static void test_any_job_id_gives_a_safe_distinct_component(void **state)
{
    static const char *const plain[] = { "t1", "fix-lint_3", "a.b", "7", NULL };
    char part[AR_GIT_COMPONENT_SIZE], branch[256];
    for (size_t i = 0; plain[i]; i++) {
        ar_git_ref_component(plain[i], part);
        assert_string_equal(part, plain[i]);
    }
    static const char *const hostile[] = { "../../etc",   "-b",        "--upload-pack=x",
                                           "a b",         "a:b",       "a-b",
                                           "x.lock",      ".hidden",   "a..b",
                                           "HEAD",        "",          "/",
                                           "@{-1}",       "é",         "a/b",
                                           "line\nbreak", "trailing.", "~^:?*[",
                                           NULL };
    char seen[32][AR_GIT_COMPONENT_SIZE];
    size_t k = 0;
    for (size_t i = 0; hostile[i]; i++, k++) {
        ar_git_ref_component(hostile[i], part);
        assert_null(strchr(part, '/'));
        ar_git_tree_branch("20261125-143001-3fa2", hostile[i], branch, sizeof(branch));
        assert_stays_below(branch);
        assert_true(ar_git_tree_branch_ours(branch));
        for (size_t j = 0; j < k; j++)
            if (strcmp(seen[j], part) == 0)
                fail_msg("'%s' and another id both give '%s'", hostile[i], part);
        snprintf(seen[k], sizeof(seen[k]), "%s", part);
    }
    /* A long id is cut, and still told apart from one that shares its start. */
    char a[300], b[300];
    memset(a, 'x', 299);
    a[299] = '\0';
    memcpy(b, a, sizeof(b));
    b[298] = 'y';
    char pa[AR_GIT_COMPONENT_SIZE], pb[AR_GIT_COMPONENT_SIZE];
    ar_git_ref_component(a, pa);
    ar_git_ref_component(b, pb);
    assert_true(strlen(pa) < AR_GIT_COMPONENT_SIZE);
    assert_string_not_equal(pa, pb);
    char session[AR_GIT_SESSION_SIZE];
    ar_git_tree_session_id(session);
    assert_int_equal(strlen(session), 20);
    ar_git_tree_branch(session, NULL, branch, sizeof(branch));
    assert_stays_below(branch);
    assert_non_null(strstr(branch, "/run"));
    assert_true(ar_git_tree_branch_ours(branch));
    /* The integration branch's name is never a job's (issue 57 #6), in any case: a file
     * system that folds case keeps both refs in one file. */
    static const char *const reserved[] = { "merged", "MERGED", "Merged", NULL };
    char into[256];
    snprintf(into, sizeof(into), "agentrun/%s/" AR_GIT_MERGED_COMPONENT, session);
    for (size_t i = 0; reserved[i]; i++) {
        ar_git_tree_branch(session, reserved[i], branch, sizeof(branch));
        assert_true(strcasecmp(branch, into) != 0);
        assert_true(ar_git_tree_branch_ours(branch));
        assert_int_equal(strncmp(branch + strlen(into) - strlen("merged"), reserved[i], 6), 0);
    }
    ar_git_tree_branch(session, "merged-2", branch, sizeof(branch));
    assert_non_null(strstr(branch, "/merged-2"));
}

/* A branch is agentrun's by its shape alone: agentrun/<session>/<one component>. A user's
 * branch under agentrun/ of any other shape is theirs (`agentrun worktrees prune`). */
static void test_only_agentrun_s_own_branch_shape_is_ours(void **state)
{
    static const char *const ours[] = { "agentrun/20261125-143001-3fa2/t7",
                                        "agentrun/20261125-143001-3fa2/run",
                                        "agentrun/20261125-143001-3fa2/etc-x-56da1a2e", NULL };
    static const char *const theirs[] = { "agentrun/mine",
                                          "agentrun/users/own",
                                          "agentrun/20261125-143001-3fa2",
                                          "agentrun/20261125-143001-3fa2/",
                                          "agentrun/20261125-143001-3fa2/a/b",
                                          "agentrun/20261125-143001-3FA2/a",
                                          "agentrun/2026112-143001-3fa2/a",
                                          "agentrun/20261125-143001-3fa/a",
                                          "agentrun/20261125_143001-3fa2/a",
                                          "agentrun/20261125-143001-3fa2/x.lock",
                                          "agentrun/20261125-143001-3fa2/a..b",
                                          "agentrunx/20261125-143001-3fa2/a",
                                          "refs/heads/agentrun/20261125-143001-3fa2/a",
                                          "feature",
                                          "",
                                          NULL };
    for (size_t i = 0; ours[i]; i++)
        if (!ar_git_tree_branch_ours(ours[i]))
            fail_msg("'%s' is agentrun's", ours[i]);
    for (size_t i = 0; theirs[i]; i++)
        if (ar_git_tree_branch_ours(theirs[i]))
            fail_msg("'%s' is not agentrun's", theirs[i]);
}

static void test_git_stderr_line(void **state)
{
    char buf[8];
    assert_string_equal(ar_git_stderr_line(NULL, 0, buf, sizeof(buf)), "");
    assert_string_equal(ar_git_stderr_line("fatal: x\nmore", 14, buf, sizeof(buf)), "fatal: ");
    assert_string_equal(ar_git_stderr_line("ab\ncd", 5, buf, sizeof(buf)), "ab");
    assert_string_equal(ar_git_stderr_line("abc", 3, buf, sizeof(buf)), "abc");
}

/* A failed result of git with stderr text. */
static struct ar_child_result failed(const char *stderr_text)
{
    struct ar_child_result r;
    memset(&r, 0, sizeof(r));
    r.end = AR_CHILD_EXITED;
    r.status = 128;
    r.stderr_tail = stderr_text;
    r.stderr_tail_len = strlen(stderr_text);
    return r;
}

/* The one rule of "another git is making a worktree": git names a worktree's admin folder
 * (relative, or under the common dir the caller knows); every other failure, a success, a
 * kill and the last try are not it; the pause is short and differs between callers. */
static void test_worktree_race_rule(void **state)
{
    (void)state;
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    uint64_t ms = 0;
    struct ar_child_result r = failed("fatal: failed to read .git/worktrees/j5/commondir\n");
    assert_true(ar_git_worktree_race(&cmd, &r, 0, 0, &ms));
    assert_true(ms >= 25 && ms < 25 * 4 + 20);
    uint64_t other = 0;
    assert_true(ar_git_worktree_race(&cmd, &r, 0, 16 * 7, &other));
    assert_true(other != ms);
    assert_false(ar_git_worktree_race(&cmd, &r, AR_GIT_RACE_TRIES, 0, &ms));
    assert_true(ar_git_worktree_race(&cmd, &r, AR_GIT_RACE_TRIES - 1, 0, &ms));

    /* A bare repository's admin folders, named absolute: only with the common dir. */
    r = failed("fatal: Invalid path '/srv/repo/worktrees/j4': No such file\n");
    assert_false(ar_git_worktree_race(&cmd, &r, 0, 0, &ms));
    cmd.common_dir = "/srv/repo";
    assert_true(ar_git_worktree_race(&cmd, &r, 0, 0, &ms));
    cmd.common_dir = "/srv/other";
    assert_false(ar_git_worktree_race(&cmd, &r, 0, 0, &ms));

    /* Not a race: another message (on a later line too), success, a kill. */
    r = failed("fatal: 'x' is not a working tree\nhint: .git/worktrees/x\n");
    assert_false(ar_git_worktree_race(&cmd, &r, 0, 0, &ms));
    r = failed("fatal: failed to read .git/worktrees/j5/commondir\n");
    r.status = 0;
    assert_false(ar_git_worktree_race(&cmd, &r, 0, 0, &ms));
    r.status = 128;
    r.end = AR_CHILD_TIMEOUT;
    assert_false(ar_git_worktree_race(&cmd, &r, 0, 0, &ms));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1_known_vectors),
        cmocka_unit_test(test_parse_ordinary_modified_in_head),
        cmocka_unit_test(test_parse_added_is_not_in_head),
        cmocka_unit_test(test_parse_sha256_names_still_mark_head),
        cmocka_unit_test(test_parse_rename_gives_target_and_deleted_source),
        cmocka_unit_test(test_parse_copy_is_not_a_rename),
        cmocka_unit_test(test_parse_unmerged_uses_stage_two_as_head),
        cmocka_unit_test(test_parse_odd_names_pass_through_raw),
        cmocka_unit_test(test_parse_ordinary_path_with_spaces_keeps_them),
        cmocka_unit_test(test_parse_merges_a_path_listed_twice),
        cmocka_unit_test(test_parse_skips_headers_and_ignored),
        cmocka_unit_test(test_parse_rejects_malformed_output),
        cmocka_unit_test(test_parse_branch_header_gives_head),
        cmocka_unit_test(test_parse_commit_name_status),
        cmocka_unit_test(test_parsers_survive_random_bytes),
        cmocka_unit_test(test_diff_table),
        cmocka_unit_test(test_op_names),
        cmocka_unit_test_setup_teardown(test_hash_is_git_blob_id_and_revisits_prev, make_tmp,
                                        remove_tmp),
        cmocka_unit_test(test_utf8_validation),
        cmocka_unit_test_setup_teardown(test_content_encodings_and_cap, make_tmp, remove_tmp),
        cmocka_unit_test(test_json_paths_not_utf8_get_replacement_chars),
        cmocka_unit_test(test_untracked_snapshot_has_reason),
        cmocka_unit_test(test_git_argv_is_hardened),
        cmocka_unit_test(test_git_stderr_line),
        cmocka_unit_test(test_worktree_race_rule),
        cmocka_unit_test(test_branch_names_as_git_judges_them),
        cmocka_unit_test(test_any_job_id_gives_a_safe_distinct_component),
        cmocka_unit_test(test_only_agentrun_s_own_branch_shape_is_ours),
        cmocka_unit_test_setup_teardown(test_find_root_walks_up_to_a_dot_git_entry, make_tmp,
                                        remove_tmp),
        cmocka_unit_test_setup_teardown(test_find_root_stops_below_a_ceiling_directory, make_tmp,
                                        remove_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
