/* review: diff parsing and chunking, the merge, the verdict, degraded results, formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "review/format.h"
#include "review/diff.h"
#include "review/review.h"
#include "result/result.h"
#include "util/macros.h"

static const char two_files[] = "diff --git a/src/a.c b/src/a.c\n"
                                "index 1111111..2222222 100644\n"
                                "--- a/src/a.c\n"
                                "+++ b/src/a.c\n"
                                "@@ -1,3 +1,3 @@\n"
                                " one\n"
                                "-two\n"
                                "+TWO\n"
                                " three\n"
                                "@@ -10,2 +10,3 @@\n"
                                " ten\n"
                                "+ten and a half\n"
                                " eleven\n"
                                "diff --git a/doc/b.md b/doc/b.md\n"
                                "new file mode 100644\n"
                                "index 0000000..3333333\n"
                                "--- /dev/null\n"
                                "+++ b/doc/b.md\n"
                                "@@ -0,0 +1 @@\n"
                                "+hello\n";

static void test_parse_finds_files_and_hunks(void **state)
{
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(two_files, strlen(two_files), &d, NULL), 0);
    assert_int_equal(d.n_files, 2);
    assert_int_equal(d.preamble, 0);
    assert_string_equal(d.files[0].path, "src/a.c");
    assert_null(d.files[0].old_path);
    assert_int_equal(d.files[0].n_hunks, 2);
    assert_memory_equal(two_files + d.files[0].hunks[1], "@@ -10,2", 8);
    assert_string_equal(d.files[1].path, "doc/b.md");
    assert_int_equal(d.files[1].n_hunks, 1);
    assert_int_equal(d.files[1].end, strlen(two_files));
    assert_false(d.files[0].binary);
    ar_diff_finish(&d);
}

/* Places len bytes right before an inaccessible page, so reading one byte past
 * them faults even without a sanitizer. Returns the copy; *map, *map_len for munmap. */
static char *before_guard_page(const char *text, size_t len, void **map, size_t *map_len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (len + page - 1) / page * page + page;
    char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m + n - page, page, PROT_NONE), 0);
    char *p = m + n - page - len;
    memcpy(p, text, len);
    *map = m;
    *map_len = n;
    return p;
}

static void test_parse_hunk_header_at_end_of_unterminated_text(void **state)
{
    /* Found by tests/fuzz/fuzz_review: the hunk counts were read with strtol(),
     * which ran past the end of a text that is not NUL-terminated. */
    static const char text[] = "--- a/x\n+++ b/x\n@@ -1,2 +1";
    void *map;
    size_t map_len;
    char *p = before_guard_page(text, sizeof(text) - 1, &map, &map_len);
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(p, sizeof(text) - 1, &d, NULL), 0);
    assert_int_equal(d.n_files, 1);
    assert_int_equal(d.files[0].n_hunks, 1);
    ar_diff_finish(&d);
    munmap(map, map_len);
}

static void test_parse_removed_dashes_line_is_not_a_new_file(void **state)
{
    /* A removed line "-- x" reads "--- x" and an added "++ y" reads "+++ y":
     * the hunk's line counts say they belong to the hunk. */
    static const char text[] = "--- a/sig.txt\n"
                               "+++ b/sig.txt\n"
                               "@@ -1,2 +1,2 @@\n"
                               "--- x\n"
                               "+++ y\n"
                               " end\n"
                               "--- a/other.txt\t2024-01-01 10:00:00\n"
                               "+++ b/other.txt\t2024-01-02 10:00:00\n"
                               "@@ -1 +1 @@\n"
                               "-a\n"
                               "+b\n";
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    assert_int_equal(d.n_files, 2);
    assert_string_equal(d.files[0].path, "sig.txt");
    assert_int_equal(d.files[0].n_hunks, 1);
    assert_string_equal(d.files[1].path, "other.txt");
    ar_diff_finish(&d);
}

static void test_parse_renames_deletions_and_quoted_paths(void **state)
{
    static const char text[] = "From 123 Mon Sep 17 00:00:00 2001\n"
                               "Subject: [PATCH] move\n"
                               "\n"
                               "diff --git a/old name.c b/new name.c\n"
                               "similarity index 100%\n"
                               "rename from old name.c\n"
                               "rename to new name.c\n"
                               "diff --git a/gone.c b/gone.c\n"
                               "deleted file mode 100644\n"
                               "--- a/gone.c\n"
                               "+++ /dev/null\n"
                               "@@ -1 +0,0 @@\n"
                               "-x\n"
                               "diff --git \"a/tab\\there.c\" \"b/tab\\there.c\"\n"
                               "--- \"a/tab\\there.c\"\n"
                               "+++ \"b/tab\\there.c\"\n"
                               "@@ -1 +1 @@\n"
                               "-a\n"
                               "+b\n";
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    assert_int_equal(d.n_files, 3);
    assert_true(d.preamble > 0);
    assert_string_equal(d.files[0].path, "new name.c");
    assert_string_equal(d.files[0].old_path, "old name.c");
    assert_int_equal(d.files[0].n_hunks, 0);
    assert_string_equal(d.files[1].path, "gone.c");
    assert_string_equal(d.files[2].path, "tab\there.c");
    assert_true(ar_diff_has_file(&d, "old name.c"));
    assert_true(ar_diff_has_file(&d, "gone.c"));
    assert_true(ar_diff_has_file(&d, "new name.c"));
    assert_false(ar_diff_has_file(&d, "b/gone.c"));
    assert_false(ar_diff_has_file(&d, "other.c"));
    ar_diff_finish(&d);
}

static void test_binary_sections_are_told_apart(void **state)
{
    static const char text[] = "diff --git a/logo.png b/logo.png\n"
                               "index 1111111..2222222 100644\n"
                               "Binary files a/logo.png and b/logo.png differ\n"
                               "diff --git a/icon.bin b/icon.bin\n"
                               "new file mode 100644\n"
                               "index 0000000..3333333\n"
                               "GIT binary patch\n"
                               "literal 12\n"
                               "TcmZQzU|?ooU|?WmU|?Vg00002\n"
                               "\n"
                               "literal 0\n"
                               "HcmV?d00001\n";
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    assert_int_equal(d.n_files, 2);
    assert_int_equal(d.files[0].binary, AR_DIFF_BINARY_SAID);
    assert_int_equal(d.files[1].binary, AR_DIFF_BINARY_PATCH);
    assert_string_equal(d.files[1].path, "icon.bin");
    ar_diff_finish(&d);

    assert_int_equal(ar_diff_parse("", 0, &d, NULL), 0);
    assert_int_equal(d.n_files, 0);
    ar_diff_finish(&d);

    /* A Git LFS pointer added is not the file's content; one removed, or prose that
     * quotes only the version line, is text. */
    static const char lfs[] =
        "diff --git a/big.c b/big.c\n"
        "--- a/big.c\n"
        "+++ b/big.c\n"
        "@@ -1 +1,3 @@\n"
        "-int x;\n"
        "+version https://git-lfs.github.com/spec/v1\n"
        "+oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "+size 12345\n"
        "diff --git a/gone.c b/gone.c\n"
        "--- a/gone.c\n"
        "+++ b/gone.c\n"
        "@@ -1,2 +1 @@\n"
        "-version https://git-lfs.github.com/spec/v1\n"
        "-oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "+int y;\n"
        "diff --git a/doc.md b/doc.md\n"
        "--- a/doc.md\n"
        "+++ b/doc.md\n"
        "@@ -0,0 +1 @@\n"
        "+version https://git-lfs.github.com/spec/v1 is the first line\n";
    assert_int_equal(ar_diff_parse(lfs, strlen(lfs), &d, NULL), 0);
    assert_int_equal(d.n_files, 3);
    assert_int_equal(d.files[0].binary, AR_DIFF_BINARY_LFS);
    assert_int_equal(d.files[0].binary_at, d.files[0].body);
    assert_int_equal(d.files[1].binary, 0);
    assert_int_equal(d.files[2].binary, 0);
    ar_diff_finish(&d);
}

/* agentrun decides what is text from the content (issue 26 #2, #3). */
#define TEXT(s, b)          \
    {                       \
        s, sizeof(s) - 1, b \
    }
static void test_binary_is_judged_by_content(void **state)
{
    static const struct {
        const char *text;
        size_t len;
        int binary;
    } cases[] = {
        TEXT("@@ -0,0 +1 @@\n+int a; /* \0 */ int b;\n", 0),        /* text apart from a NUL */
        TEXT("@@ -0,0 +1 @@\n+/* caf\xe9 na\xefve */ int x;\n", 0), /* Latin-1 */
        TEXT("@@ -0,0 +1 @@\n+\x1b[1mbold\x1b[0m\t\f\r\n", 0),      /* escape, tab, FF */
        TEXT("@@ -0,0 +1 @@\n+h\0i\0!\0\n", 0),                     /* UTF-16LE ASCII */
        TEXT("@@ -0,0 +1 @@\n+\x89PNG\r\n+\x1a\n+\x00\x00\x00IHDR\n", 1),
        TEXT("@@ -0,0 +1 @@\n+\xff\xfe\xfd\xfc\xfb\xfa ok\n", 1), /* mostly invalid UTF-8 */
        TEXT("@@ -1 +1 @@\n-old\n+\x01\x02\x03\x04 new text here\n", 1),
        TEXT("@@ -0,0 +1 @@\n", 0),
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(ar_diff_text_is_binary(cases[i].text, cases[i].len), cases[i].binary);
    /* One control character in a long text file is not enough. */
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_puts(&b, "@@ -0,0 +1,60 @@\n");
    for (int i = 0; i < 60; i++)
        ar_buf_puts(&b, i == 30 ? "+int x = '\x07';\n" : "+int some_variable_name = 1;\n");
    assert_false(ar_diff_text_is_binary(ar_buf_cstr(&b), b.len));
    ar_buf_finish(&b);
}

static const char coverage_diff[] = "diff --git a/a.c b/a.c\n"
                                    "--- a/a.c\n"
                                    "+++ b/a.c\n"
                                    "@@ -1 +1 @@\n"
                                    "-a\n"
                                    "+b\n"
                                    "diff --git a/yarn.lock b/yarn.lock\n"
                                    "--- a/yarn.lock\n"
                                    "+++ b/yarn.lock\n"
                                    "@@ -1 +1 @@\n"
                                    "-x\n"
                                    "+y\n"
                                    "diff --git a/logo.png b/logo.png\n"
                                    "--- a/logo.png\n"
                                    "+++ b/logo.png\n"
                                    "@@ -0,0 +1 @@\n"
                                    "+\x89PNG\x01\x02\x03\x04\x05\x06\n"
                                    "diff --git a/m.sh b/m.sh\n"
                                    "old mode 100644\n"
                                    "new mode 100755\n";

/* The one place the gate's facts are decided: every changed path, what happened to it. */
static void test_coverage_of_every_changed_path(void **state)
{
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(coverage_diff, strlen(coverage_diff), &d, NULL), 0);
    assert_int_equal(d.files[2].binary, AR_DIFF_BINARY_CONTENT);
    struct ar_path_filter pf = { NULL, 0, NULL, 0, 0 };
    struct ar_diff_gap gap = { (char *)"inner/", (char *)"a nested repository" };
    struct ar_diff_gaps gaps = { &gap, 1 };
    struct ar_review_coverage cov;
    unsigned char *send;
    assert_int_equal(ar_coverage_plan(&d, &pf, 0, 1 << 20, &gaps, &cov, &send, NULL), 0);
    assert_int_equal(cov.n_files, 5);
    assert_int_equal(cov.files[0].status, AR_COVER_QUEUED);
    assert_int_equal(cov.files[1].status, AR_COVER_EXCLUDED);
    assert_string_equal(cov.files[1].rule, "default exclude yarn.lock");
    assert_int_equal(cov.files[2].status, AR_COVER_BINARY);
    assert_null(cov.files[2].rule);
    assert_int_equal(cov.files[3].status, AR_COVER_QUEUED); /* mode only: sent too */
    assert_int_equal(cov.files[4].status, AR_COVER_NOT_SENT);
    assert_string_equal(cov.files[4].path, "inner/");
    assert_int_equal(send[1], AR_DIFF_SEND_NONE);
    assert_int_equal(send[2], AR_DIFF_SEND_STUB);

    struct ar_diff_chunk *c;
    size_t n;
    assert_int_equal(ar_diff_split(&d, 1 << 20, send, &c, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_null(strstr(c[0].text, "yarn.lock"));
    assert_null(strstr(c[0].text, "PNG"));
    assert_non_null(strstr(c[0].text, "diff --git a/logo.png b/logo.png\n--- a/logo.png\n"
                                      "+++ b/logo.png\nBinary files differ\n"));
    assert_non_null(strstr(c[0].text, "new mode 100755"));
    assert_int_equal(ar_coverage_chunks(&cov, send, c, n), 0);
    assert_int_equal(cov.files[0].n_chunks, 1);
    assert_int_equal(cov.files[3].n_chunks, 1);
    assert_int_equal(cov.files[2].n_chunks, 0); /* a stub is not a review */

    /* The chunk came back: reviewed; the binary file and the gap still fail the gate. */
    struct ar_review part;
    ar_review_init(&part);
    part.passed = 1;
    part.chunks = 1;
    assert_int_equal(ar_coverage_finish(&cov, &part, 1, NULL), 0);
    assert_int_equal(cov.files[0].status, AR_COVER_REVIEWED);
    assert_int_equal(cov.n_reviewed, 2);
    assert_int_equal(cov.n_excluded, 1);
    assert_int_equal(cov.n_unreviewed, 2);
    struct ar_review_verdict v;
    ar_review_verdict(&part, &cov, AR_FAIL_ON_NONE, 0, &v);
    assert_int_equal(v.n_unreviewed, 2);
    assert_int_equal(v.exit_status, 1); /* whatever --fail-on says */
    ar_coverage_free(&cov);
    free(send);

    /* --allow-binary is a rule of the user's; the chunk failing leaves its files not sent. */
    assert_int_equal(ar_coverage_plan(&d, &pf, 1, 1 << 20, NULL, &cov, &send, NULL), 0);
    assert_string_equal(cov.files[2].rule, "--allow-binary");
    assert_int_equal(ar_coverage_chunks(&cov, send, c, n), 0);
    part.failed = 1;
    ar_error_set(&part.error, AR_ETIMEOUT, NULL, "timed out");
    assert_int_equal(ar_coverage_finish(&cov, &part, 1, NULL), 0);
    assert_int_equal(cov.files[0].status, AR_COVER_NOT_SENT);
    assert_non_null(strstr(cov.files[0].why, "chunk 1 was not reviewed: timed out"));
    ar_coverage_free(&cov);
    free(send);

    /* A file to send that no chunk holds is not sent: it never passes. */
    assert_int_equal(ar_coverage_plan(&d, &pf, 1, 1 << 20, NULL, &cov, &send, NULL), 0);
    assert_int_equal(ar_coverage_chunks(&cov, send, c, 0), 0);
    assert_int_equal(cov.files[0].status, AR_COVER_NOT_SENT);
    assert_int_equal(cov.n_unreviewed, 2);
    ar_coverage_free(&cov);
    free(send);
    ar_diff_chunks_free(c, n);
    ar_diff_finish(&d);
}

static void test_split_packs_whole_files_up_to_the_limit(void **state)
{
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(two_files, strlen(two_files), &d, NULL), 0);
    struct ar_diff_chunk *c;
    size_t n;
    /* Everything fits: one chunk, the diff as it came. */
    assert_int_equal(ar_diff_split(&d, 1 << 20, NULL, &c, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_string_equal(c[0].text, two_files);
    assert_int_equal(c[0].first_file, 0);
    assert_int_equal(c[0].last_file, 1);
    ar_diff_chunks_free(c, n);
    /* Room for the first file only: a chunk per file, cut at the file boundary. */
    size_t first = d.files[0].end;
    assert_int_equal(ar_diff_split(&d, first + 10, NULL, &c, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_int_equal(c[0].len, first);
    assert_memory_equal(c[0].text, two_files, first);
    assert_string_equal(c[1].text, two_files + first);
    assert_int_equal(c[1].first_file, 1);
    assert_int_equal(c[0].piece, 0);
    ar_diff_chunks_free(c, n);
    ar_diff_finish(&d);
}

static void test_split_large_file_at_hunks_each_piece_keeps_header(void **state)
{
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(two_files, strlen(two_files), &d, NULL), 0);
    struct ar_diff_chunk *c;
    size_t n;
    /* Smaller than the first file: its two hunks go to two pieces. */
    size_t header = d.files[0].body - d.files[0].start;
    assert_int_equal(ar_diff_split(&d, header + 40, NULL, &c, &n, NULL), 0);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 2; i++) {
        assert_memory_equal(c[i].text, two_files, header);
        assert_int_equal(c[i].piece, (int)i + 1);
        assert_int_equal(c[i].n_pieces, 2);
        assert_int_equal(c[i].first_file, 0);
    }
    assert_non_null(strstr(c[0].text, "+TWO\n"));
    assert_null(strstr(c[0].text, "ten and a half"));
    assert_memory_equal(c[1].text + header, "@@ -10,2", 8);
    assert_non_null(strstr(c[2].text, "+++ b/doc/b.md"));
    ar_diff_chunks_free(c, n);
    ar_diff_finish(&d);
}

static void test_split_drops_binary_payload_and_keeps_it_with_text(void **state)
{
    static const char text[] = "diff --git a/a.txt b/a.txt\n"
                               "--- a/a.txt\n"
                               "+++ b/a.txt\n"
                               "@@ -1 +1 @@\n"
                               "-a\n"
                               "+b\n"
                               "diff --git a/icon.bin b/icon.bin\n"
                               "GIT binary patch\n"
                               "literal 12\n"
                               "TcmZQzU|?ooU|?WmU|?Vg00002\n";
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    struct ar_diff_chunk *c;
    size_t n;
    /* Even with a tiny limit, the binary section never makes a chunk alone. */
    assert_int_equal(ar_diff_split(&d, 10, NULL, &c, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_null(strstr(c[0].text, "TcmZQz"));
    assert_non_null(strstr(c[0].text, "diff --git a/icon.bin b/icon.bin\nBinary files differ\n"));
    assert_int_equal(c[0].first_file, 0);
    assert_int_equal(c[0].last_file, 1);
    ar_diff_chunks_free(c, n);
    ar_diff_finish(&d);
}

static void test_split_carries_binary_sections_into_the_first_piece(void **state)
{
    struct ar_buf text;
    ar_buf_init(&text, AR_BUF_UNLIMITED);
    ar_buf_puts(&text, "diff --git a/logo.png b/logo.png\n"
                       "Binary files a/logo.png and b/logo.png differ\n");
    size_t big_start = text.len;
    ar_buf_puts(&text, two_files);
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(ar_buf_cstr(&text), text.len, &d, NULL), 0);
    assert_int_equal(d.n_files, 3);
    struct ar_diff_chunk *c;
    size_t n;
    size_t header = d.files[1].body - d.files[1].start;
    assert_int_equal(ar_diff_split(&d, header + 40, NULL, &c, &n, NULL), 0);
    assert_int_equal(n, 3);
    /* The binary section rides with the first piece of src/a.c, not alone. */
    assert_memory_equal(c[0].text, ar_buf_cstr(&text), big_start + header);
    assert_int_equal(c[0].first_file, 0);
    assert_int_equal(c[0].last_file, 1);
    assert_int_equal(c[0].piece, 1);
    assert_int_equal(c[1].first_file, 1);
    assert_int_equal(c[2].first_file, 2);
    ar_diff_chunks_free(c, n);
    ar_diff_finish(&d);
    ar_buf_finish(&text);
}

static void test_parse_crlf_diff(void **state)
{
    static const char text[] = "diff --git a/w.txt b/w.txt\r\n"
                               "--- a/w.txt\r\n"
                               "+++ b/w.txt\r\n"
                               "@@ -1,2 +1,2 @@\r\n"
                               " keep\r\n"
                               "-old\r\n"
                               "+new\r\n";
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    assert_int_equal(d.n_files, 1);
    assert_string_equal(d.files[0].path, "w.txt");
    assert_int_equal(d.files[0].n_hunks, 1);
    assert_false(d.files[0].binary);
    ar_diff_finish(&d);
}

/* ---- reviews ---- */

static void review_from(const char *json, struct ar_review *rv)
{
    json_error_t jerr;
    json_t *v = json_loads(json, 0, &jerr);
    assert_non_null(v);
    ar_review_init(rv);
    assert_int_equal(ar_review_from_value(v, rv, NULL), 0);
    rv->chunks = 1;
    json_decref(v);
}

static void test_merge_sorts_by_file_then_line_and_flags_outside_diff(void **state)
{
    struct ar_review parts[2];
    review_from("{\"passed\":false,\"summary\":\"first\",\"issues\":["
                "{\"file\":\"src/a.c\",\"line\":10,\"severity\":\"low\",\"message\":\"m1\"},"
                "{\"file\":\"b/doc/b.md\",\"line\":1,\"severity\":\"info\",\"message\":\"m2\"}]}",
                &parts[0]);
    review_from("{\"passed\":true,\"summary\":\"second\",\"issues\":["
                "{\"file\":\"src/a.c\",\"line\":2,\"severity\":\"high\",\"message\":\"m3\","
                "\"suggestion\":\"fix\"},"
                "{\"file\":\"src/a.c\",\"line\":10,\"severity\":\"medium\",\"message\":\"m4\"},"
                "{\"file\":\"./nowhere.c\",\"line\":5,\"severity\":\"low\",\"message\":\"m5\"}]}",
                &parts[1]);
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(two_files, strlen(two_files), &d, NULL), 0);
    struct ar_review m;
    ar_review_init(&m);
    assert_int_equal(ar_review_merge(parts, 2, &d, &m, NULL), 0);
    assert_false(m.passed);
    assert_int_equal(m.chunks, 2);
    assert_string_equal(m.summary, "first\nsecond");
    assert_int_equal(m.n_issues, 5);
    static const char *const order[] = { "m5", "m2", "m3", "m1", "m4" };
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(m.issues[i].message, order[i]);
    assert_true(m.issues[0].outside_diff); /* ./nowhere.c */
    assert_true(m.issues[1].outside_diff); /* b/doc/b.md, until located */
    assert_false(m.issues[2].outside_diff);
    assert_string_equal(m.issues[2].suggestion, "fix");
    /* Located: b/doc/b.md is doc/b.md, the diff's own prefix copied along. */
    assert_int_equal(ar_review_locate(&m, &d, NULL, NULL), 0);
    static const char *const files[] = { "doc/b.md", "nowhere.c", "src/a.c", "src/a.c", "src/a.c" };
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(m.issues[i].file, files[i]);
    assert_false(m.issues[0].outside_diff);
    assert_true(m.issues[1].outside_diff);
    ar_review_finish(&m);
    ar_review_finish(&parts[0]);
    ar_review_finish(&parts[1]);
    ar_diff_finish(&d);
}

static void test_merge_sums_tokens_and_cost_unknown_when_one_is(void **state)
{
    struct ar_review parts[2];
    review_from("{\"passed\":true,\"summary\":\"\",\"issues\":[]}", &parts[0]);
    review_from("{\"passed\":true,\"summary\":\"ok\",\"issues\":[]}", &parts[1]);
    parts[0].usage.input = 100;
    parts[0].usage.output = 7;
    parts[1].usage.input = 50;
    parts[1].usage.cache_read = 3;
    parts[0].cost_usd = 0.25;
    parts[1].cost_usd = 0.5;
    parts[0].cost_source = parts[1].cost_source = AR_COST_CLI;
    parts[0].duration_ms = 10;
    parts[1].duration_ms = 30;
    struct ar_call_record ca = { .kind = "main", .provider = "call-a" };
    struct ar_call_record cb = { .kind = "repair", .provider = "call-b" };
    assert_int_equal(ar_call_records_append(&parts[0].calls, &parts[0].n_calls, &ca, 1), 0);
    assert_int_equal(ar_call_records_append(&parts[1].calls, &parts[1].n_calls, &cb, 1), 0);
    struct ar_review m;
    ar_review_init(&m);
    assert_int_equal(ar_review_merge(parts, 2, NULL, &m, NULL), 0);
    assert_true(m.passed);
    assert_string_equal(m.summary, "ok");
    assert_int_equal(m.usage.input, 150);
    assert_int_equal(m.usage.output, 7);
    assert_int_equal(m.usage.cache_read, 3);
    assert_int_equal(m.cost_source, AR_COST_CLI);
    assert_true(m.cost_usd > 0.749 && m.cost_usd < 0.751);
    assert_int_equal(m.duration_ms, 30);
    assert_int_equal(m.n_calls, 2);
    assert_string_equal(m.calls[1].provider, "call-b");
    assert_string_equal(m.calls[1].kind, "repair");
    ar_review_finish(&m);

    parts[1].cost_source = AR_COST_UNKNOWN;
    ar_review_init(&m);
    assert_int_equal(ar_review_merge(parts, 2, NULL, &m, NULL), 0);
    assert_int_equal(m.cost_source, AR_COST_UNKNOWN);
    ar_review_finish(&m);
    parts[1].cost_source = AR_COST_TABLE;
    ar_review_init(&m);
    assert_int_equal(ar_review_merge(parts, 2, NULL, &m, NULL), 0);
    assert_int_equal(m.cost_source, AR_COST_TABLE);
    ar_review_finish(&m);
    ar_review_finish(&parts[0]);
    ar_review_finish(&parts[1]);
}

static void test_from_value_rejects_a_broken_envelope(void **state)
{
    static const char *const bad[] = {
        "{\"passed\":1,\"summary\":\"\",\"issues\":[]}",
        "{\"passed\":true,\"issues\":[]}",
        "{\"passed\":true,\"summary\":\"\",\"issues\":{}}",
        "[]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *v = json_loads(bad[i], 0, NULL);
        struct ar_review rv;
        struct ar_error err = AR_ERROR_INIT;
        ar_review_init(&rv);
        assert_int_equal(ar_review_from_value(v, &rv, &err), AR_ECONTRACT);
        assert_int_equal(err.code, AR_ECONTRACT);
        ar_review_finish(&rv);
        json_decref(v);
    }
}

/* Issue 26 #4: one finding that breaks the contract is salvaged alone; a critical
 * finding is never lost to another's defect. */
static void test_from_value_salvages_each_finding_alone(void **state)
{
    json_t *v =
        json_loads("{\"passed\":false,\"summary\":\"s\",\"issues\":["
                   "{\"file\":\"a.c\",\"line\":3,\"severity\":\"critical\",\"message\":\"shell\"},"
                   "{\"file\":\"a.c\",\"line\":0,\"severity\":\"low\",\"message\":\"zero\"},"
                   "{\"file\":\"a.c\",\"line\":\"12\",\"severity\":\"High\",\"message\":\"str\"},"
                   "{\"file\":\"a.c\",\"line\":2,\"severity\":\"urgent\",\"message\":\"\","
                   "\"suggestion\":7},"
                   "{\"line\":4,\"severity\":\"high\",\"message\":\"no file\"},"
                   "\"not an object\"]}",
                   0, NULL);
    struct ar_review rv;
    ar_review_init(&rv);
    assert_int_equal(ar_review_from_value(v, &rv, NULL), 0);
    assert_int_equal(rv.n_issues, 4);
    assert_int_equal(rv.issues[0].severity, AR_SEV_CRITICAL);
    assert_int_equal(rv.issues[0].line, 3);
    assert_int_equal(rv.issues[1].line, 0); /* the whole file */
    assert_int_equal(rv.issues[2].line, 12);
    assert_int_equal(rv.issues[2].severity, AR_SEV_HIGH);
    assert_int_equal(rv.issues[3].severity, AR_SEV_HIGH); /* unreadable: counted as high */
    assert_string_equal(rv.issues[3].message, "(no message)");
    assert_null(rv.issues[3].suggestion);
    assert_int_equal(rv.n_unplaced, 1);
    assert_null(rv.unplaced[0].file);
    assert_int_equal(rv.unplaced[0].severity, AR_SEV_HIGH);
    assert_int_equal(rv.dropped, 1);
    /* line 0, severity, message, suggestion, file, not an object */
    assert_int_equal(rv.n_notes, 6);
    assert_non_null(strstr(rv.notes[0], "/issues/1/line"));
    struct ar_review_verdict vd;
    ar_review_verdict(&rv, NULL, AR_SEV_HIGH, 0, &vd);
    assert_int_equal(vd.n_failing, 4); /* the unplaced high one counts */
    assert_int_equal(vd.exit_status, 1);
    ar_review_finish(&rv);
    json_decref(v);

    /* Long text is cut, marked, at a UTF-8 boundary. */
    char *big = malloc(AR_REVIEW_MAX_TEXT * 2 + 1);
    for (size_t i = 0; i < AR_REVIEW_MAX_TEXT; i++)
        memcpy(big + 2 * i, "\xC3\xA9", 2);
    big[AR_REVIEW_MAX_TEXT * 2] = '\0';
    int cut = 0;
    char *c = ar_review_text_cut(big, &cut);
    assert_true(cut);
    assert_true(strlen(c) <= AR_REVIEW_MAX_TEXT);
    assert_non_null(strstr(c, AR_REVIEW_CUT_MARK));
    assert_memory_equal(c + strlen(c) - strlen(AR_REVIEW_CUT_MARK) - 2, "\xC3\xA9", 2);
    free(c);
    free(big);
}

struct verdict_case {
    const char *issues; /* severities, one letter each: c h m l i */
    int passed;
    int fail_on;
    int exit_status;
};

static void test_verdict_per_fail_on(void **state)
{
    static const struct verdict_case cases[] = {
        { "", 1, AR_SEV_LOW, 0 },
        { "i", 1, AR_SEV_LOW, 0 },    /* info never fails at the default */
        { "i", 1, AR_SEV_INFO, 1 },   /* unless asked for */
        { "l", 1, AR_SEV_LOW, 1 },    /* the model's passed does not rescue an issue */
        { "l", 0, AR_SEV_MEDIUM, 0 }, /* below the bar, passed:false with issues: 0 */
        { "m", 1, AR_SEV_MEDIUM, 1 },
        { "mh", 1, AR_SEV_HIGH, 1 },
        { "ml", 0, AR_SEV_HIGH, 0 },
        { "c", 1, AR_SEV_CRITICAL, 1 },
        { "h", 1, AR_SEV_CRITICAL, 0 },
        { "", 0, AR_SEV_LOW, 1 }, /* passed:false without a single issue */
        { "", 0, AR_SEV_CRITICAL, 1 },
        { "", 0, AR_FAIL_ON_NONE, 0 },
        { "c", 0, AR_FAIL_ON_NONE, 0 },
    };
    static const char letters[] = "chmli";
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const struct verdict_case *vc = &cases[k];
        struct ar_review rv;
        ar_review_init(&rv);
        struct ar_review_issue is[8];
        memset(is, 0, sizeof(is));
        rv.n_issues = strlen(vc->issues);
        rv.issues = is;
        for (size_t i = 0; i < rv.n_issues; i++)
            is[i].severity = (enum ar_severity)(strchr(letters, vc->issues[i]) - letters);
        rv.passed = vc->passed;
        struct ar_review_verdict v;
        ar_review_verdict(&rv, NULL, vc->fail_on, 0, &v);
        if (v.exit_status != vc->exit_status)
            fail_msg("case %zu: '%s' passed=%d fail_on=%s: exit %d, want %d", k, vc->issues,
                     vc->passed, ar_severity_name(vc->fail_on), v.exit_status, vc->exit_status);
    }
}

static struct ar_result *result_ok(const char *json, const char *output)
{
    struct ar_result *r = ar_result_new_failed("codex", AR_ECLIFAILED, "x");
    ar_error_clear(&r->error);
    r->ok = 1;
    r->value = json_loads(json, 0, NULL);
    r->json = strdup(json);
    r->output = strdup(output);
    r->usage.input = 10;
    r->cost_source = AR_COST_TABLE;
    r->cost_usd = 0.1;
    return r;
}

static void test_degraded_no_json_passes_unless_strict(void **state)
{
    struct ar_result *r = ar_result_new_failed("claude", AR_ENOJSON, "no JSON object found");
    r->output = strdup("I looked and it is fine.");
    struct ar_review rv;
    ar_review_init(&rv);
    assert_int_equal(ar_review_from_result(r, &rv), 0);
    assert_true(rv.degraded);
    assert_false(rv.failed);
    assert_true(rv.passed);
    assert_int_equal(rv.n_issues, 0);
    assert_string_equal(rv.summary, AR_REVIEW_NO_JSON_SUMMARY);
    assert_string_equal(rv.raw_output, "I looked and it is fine.");
    assert_int_equal(rv.error.code, AR_ENOJSON);
    struct ar_review_verdict v;
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 0, &v);
    assert_int_equal(v.exit_status, 0);
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 1, &v);
    assert_int_equal(v.exit_status, 3);
    ar_review_finish(&rv);
    ar_result_destroy(r);

    r = ar_result_new_failed("claude", AR_ECONTRACT, "/issues/0/line: expected integer");
    ar_review_init(&rv);
    assert_int_equal(ar_review_from_result(r, &rv), 0);
    assert_true(rv.degraded);
    assert_string_equal(rv.summary, AR_REVIEW_CONTRACT_SUMMARY);
    assert_null(rv.raw_output);
    ar_review_finish(&rv);
    ar_result_destroy(r);

    /* Accepted by an override template's looser contract, still not a review. */
    r = result_ok("{\"passed\":true,\"summary\":7,\"issues\":[]}", "raw");
    ar_review_init(&rv);
    assert_int_equal(ar_review_from_result(r, &rv), 0);
    assert_true(rv.degraded);
    assert_string_equal(rv.summary, AR_REVIEW_CONTRACT_SUMMARY);
    assert_string_equal(rv.raw_output, "raw");
    ar_review_finish(&rv);
    ar_result_destroy(r);

    /* A finding with only a file is still a finding: salvaged, not degraded. */
    r = result_ok("{\"passed\":true,\"summary\":\"s\",\"issues\":[{\"file\":\"a\"}]}", "raw");
    ar_review_init(&rv);
    assert_int_equal(ar_review_from_result(r, &rv), 0);
    assert_false(rv.degraded);
    assert_int_equal(rv.n_issues, 1);
    assert_int_equal(rv.issues[0].severity, AR_SEV_HIGH);
    assert_int_equal(rv.n_notes, 3);
    ar_review_finish(&rv);
    ar_result_destroy(r);
}

static void test_provider_failure_and_timeout_are_never_degraded(void **state)
{
    static const struct {
        int code;
        int exit_status;
    } cases[] = {
        { AR_EAUTH, 4 },    { AR_ECLIFAILED, 4 }, { AR_ENOTFOUND, 4 },
        { AR_ETIMEOUT, 5 }, { AR_EIDLE, 5 },      { AR_EINTERRUPTED, 130 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_result *r = ar_result_new_failed("codex", cases[i].code, "boom");
        struct ar_review rv;
        ar_review_init(&rv);
        assert_int_equal(ar_review_from_result(r, &rv), 0);
        assert_true(rv.failed);
        assert_false(rv.degraded);
        assert_false(rv.passed);
        struct ar_review_verdict v;
        ar_review_verdict(&rv, NULL, AR_FAIL_ON_NONE, 0, &v);
        assert_int_equal(v.exit_status, cases[i].exit_status);
        /* Merged with a good chunk, the failure still wins. */
        struct ar_review parts[2];
        review_from("{\"passed\":true,\"summary\":\"fine\",\"issues\":[]}", &parts[0]);
        parts[1] = rv;
        struct ar_review m;
        ar_review_init(&m);
        assert_int_equal(ar_review_merge(parts, 2, NULL, &m, NULL), 0);
        assert_true(m.failed);
        assert_false(m.passed);
        assert_int_equal(m.error.code, cases[i].code);
        ar_review_finish(&m);
        ar_review_finish(&parts[0]);
        ar_review_finish(&rv);
        ar_result_destroy(r);
    }
}

static void test_ok_result_becomes_the_review(void **state)
{
    struct ar_result *r =
        result_ok("{\"passed\":false,\"summary\":\"bad\",\"issues\":[{\"file\":\"a.c\",\"line\":3,"
                  "\"severity\":\"critical\",\"message\":\"boom\"}]}",
                  "```json …```");
    struct ar_call_record call = { .kind = "main", .provider = "codex", .exit_code = 0 };
    assert_int_equal(ar_call_records_append(&r->calls, &r->n_calls, &call, 1), 0);
    struct ar_review rv;
    ar_review_init(&rv);
    assert_int_equal(ar_review_from_result(r, &rv), 0);
    assert_false(rv.degraded);
    assert_false(rv.failed);
    assert_false(rv.passed);
    assert_int_equal(rv.n_issues, 1);
    assert_int_equal(rv.issues[0].severity, AR_SEV_CRITICAL);
    assert_null(rv.raw_output);
    assert_int_equal(rv.usage.input, 10);
    assert_string_equal(rv.provider, "codex");
    assert_int_equal(rv.n_calls, 1);
    assert_string_equal(rv.calls[0].provider, "codex");
    ar_review_finish(&rv);
    ar_result_destroy(r);
}

/* ---- formats ---- */

static void test_github_escaping(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_github_escape_data("100% a:b,c\r\nnext", &b), 0);
    assert_string_equal(ar_buf_cstr(&b), "100%25 a:b,c%0D%0Anext");
    ar_buf_reset(&b);
    assert_int_equal(ar_github_escape_property("dir,x/a:b%\n.c", &b), 0);
    assert_string_equal(ar_buf_cstr(&b), "dir%2Cx/a%3Ab%25%0A.c");
    ar_buf_finish(&b);
}

static const char sample_diff[] = "diff --git a/src/a,b.c b/src/a,b.c\n"
                                  "--- a/src/a,b.c\n"
                                  "+++ b/src/a,b.c\n"
                                  "@@ -7 +7 @@\n"
                                  "-x\n"
                                  "+y\n"
                                  "diff --git a/src/x y.c b/src/x y.c\n"
                                  "--- a/src/x y.c\n"
                                  "+++ b/src/x y.c\n"
                                  "@@ -2 +2 @@\n"
                                  "-x\n"
                                  "+y\n";

/* A located review: "b/src/a,b.c" is the diff's src/a,b.c. */
static void sample_review(struct ar_review *rv)
{
    review_from("{\"passed\":false,\"summary\":\"two things\",\"issues\":["
                "{\"file\":\"b/src/a,b.c\",\"line\":7,\"severity\":\"high\","
                "\"message\":\"50% worse:\\nsee\",\"suggestion\":\"fix it\"},"
                "{\"file\":\"src/x y.c\",\"line\":2,\"severity\":\"info\",\"message\":\"fyi\"}]}",
                rv);
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(sample_diff, strlen(sample_diff), &d, NULL), 0);
    assert_int_equal(ar_review_locate(rv, &d, NULL, NULL), 0);
    ar_diff_finish(&d);
}

/* A document that cannot be made whole is an error, never a shorter document: each
 * format into a buffer that refuses to grow past n bytes, for every n short of it. */
static void test_every_format_fails_rather_than_cut(void **state)
{
    struct ar_review rv;
    sample_review(&rv);
    struct ar_review_verdict v;
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 0, &v);
    struct ar_review_report rep = { &rv,  &v,   AR_SEV_LOW, "HEAD", 1,    NULL,
                                    NULL, NULL, 0,          0,      NULL, NULL };
    for (int f = 0; ar_review_format_name(f); f++) {
        struct ar_buf whole;
        ar_buf_init(&whole, AR_BUF_UNLIMITED);
        assert_int_equal(ar_review_render(&rep, (enum ar_review_format)f, &whole), 0);
        for (size_t n = 0; n < whole.len; n += 1 + n / 8) {
            struct ar_buf b;
            ar_buf_init(&b, n);
            int rc = ar_review_render(&rep, (enum ar_review_format)f, &b);
            if (rc == 0)
                fail_msg("%s: %zu of %zu bytes and no error", ar_review_format_name(f), b.len,
                         whole.len);
            ar_buf_finish(&b);
        }
        ar_buf_finish(&whole);
    }
    ar_review_finish(&rv);
}

static void test_github_format_commands(void **state)
{
    struct ar_review rv;
    sample_review(&rv);
    struct ar_review_verdict v;
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 0, &v);
    struct ar_review_report rep = { &rv,  &v,   AR_SEV_LOW, "HEAD", 1,    NULL,
                                    NULL, NULL, 0,          0,      NULL, NULL };
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_review_render(&rep, AR_REVIEW_FORMAT_GITHUB, &b), 0);
    const char *s = ar_buf_cstr(&b);
    assert_non_null(strstr(s, "::error file=src/a%2Cb.c,line=7,title=agentrun review%3A high::"
                              "50%25 worse:%0Asee%0A%0ASuggestion: fix it\n"));
    assert_non_null(
        strstr(s, "::notice file=src/x y.c,line=2,title=agentrun review%3A info::fyi\n"));
    assert_non_null(strstr(s, "::error title=agentrun review%3A fail::two things\n"));
    ar_buf_finish(&b);
    ar_review_finish(&rv);
}

static void test_sarif_has_the_required_structure(void **state)
{
    struct ar_review rv;
    sample_review(&rv);
    struct ar_review_verdict v;
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 0, &v);
    struct ar_review_report rep = { &rv,  &v,   AR_SEV_LOW, "HEAD", 1,    NULL,
                                    NULL, NULL, 0,          0,      NULL, NULL };
    json_t *log = ar_review_to_sarif(&rep);
    assert_non_null(log);
    assert_string_equal(json_string_value(json_object_get(log, "version")), "2.1.0");
    assert_non_null(json_string_value(json_object_get(log, "$schema")));
    json_t *run = json_array_get(json_object_get(log, "runs"), 0);
    json_t *driver = json_object_get(json_object_get(run, "tool"), "driver");
    assert_string_equal(json_string_value(json_object_get(driver, "name")), "agentrun");
    assert_non_null(json_string_value(json_object_get(driver, "version")));
    assert_non_null(json_string_value(json_object_get(driver, "informationUri")));
    json_t *rules = json_object_get(driver, "rules");
    assert_int_equal(json_array_size(rules), AR_SEV_COUNT + 1); /* + review/not-reviewed */
    json_t *results = json_object_get(run, "results");
    assert_int_equal(json_array_size(results), 2);
    json_t *r0 = json_array_get(results, 0);
    assert_string_equal(json_string_value(json_object_get(r0, "level")), "error");
    assert_string_equal(json_string_value(json_object_get(r0, "ruleId")), "review/high");
    size_t idx = (size_t)json_integer_value(json_object_get(r0, "ruleIndex"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(rules, idx), "id")),
                        "review/high");
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(r0, "message"), "text")), "fix it"));
    json_t *phys =
        json_object_get(json_array_get(json_object_get(r0, "locations"), 0), "physicalLocation");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(phys, "artifactLocation"), "uri")),
        "src/a%2Cb.c");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(phys, "region"), "startLine")), 7);
    json_t *r1 = json_array_get(results, 1);
    assert_string_equal(json_string_value(json_object_get(r1, "level")), "note");
    json_t *phys1 =
        json_object_get(json_array_get(json_object_get(r1, "locations"), 0), "physicalLocation");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(phys1, "artifactLocation"), "uri")),
        "src/x%20y.c");
    json_decref(log);
    ar_review_finish(&rv);
}

static void test_text_and_json_formats(void **state)
{
    struct ar_review rv;
    sample_review(&rv);
    struct ar_review_verdict v;
    ar_review_verdict(&rv, NULL, AR_SEV_MEDIUM, 0, &v);
    struct ar_review_report rep = { &rv, &v, AR_SEV_MEDIUM, "HEAD", 1, NULL, NULL, NULL,
                                    0,   0,  NULL,          NULL };
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_review_render(&rep, AR_REVIEW_FORMAT_TEXT, &b), 0);
    const char *s = ar_buf_cstr(&b);
    /* A line the model wrote never starts a line of its own (util/shown.h). */
    assert_memory_equal(
        s, "src/a,b.c:7: high: 50% worse:\n    | see\n    suggestion: fix it\n",
        strlen("src/a,b.c:7: high: 50% worse:\n    | see\n    suggestion: fix it\n"));
    assert_non_null(strstr(s, "src/x y.c:2: info: fyi\n"));
    assert_non_null(strstr(s, "\ntwo things\n"));
    assert_non_null(strstr(s, "verdict: fail"));
    ar_buf_finish(&b);

    json_t *o = ar_review_to_value(&rep);
    assert_false(json_is_true(json_object_get(o, "passed")));
    assert_false(json_is_true(json_object_get(o, "degraded")));
    assert_null(json_object_get(o, "raw_output"));
    assert_int_equal(json_integer_value(json_object_get(o, "exit_code")), 1);
    assert_string_equal(json_string_value(json_object_get(o, "verdict")), "fail");
    assert_true(json_is_null(json_object_get(o, "error")));
    assert_int_equal(json_array_size(json_object_get(o, "issues")), 2);
    json_decref(o);

    /* Degraded: the raw output and the reason are in the document. */
    ar_review_finish(&rv);
    struct ar_result *r = ar_result_new_failed("claude", AR_ENOJSON, "no JSON");
    r->output = strdup("prose");
    ar_review_init(&rv);
    assert_int_equal(ar_review_from_result(r, &rv), 0);
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 0, &v);
    o = ar_review_to_value(&rep);
    assert_true(json_is_true(json_object_get(o, "degraded")));
    assert_true(json_is_true(json_object_get(o, "passed")));
    assert_string_equal(json_string_value(json_object_get(o, "raw_output")), "prose");
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "error"), "code")),
                        "no_json");
    json_decref(o);
    ar_review_finish(&rv);
    ar_result_destroy(r);
}

static void test_nothing_to_review_documents_are_valid(void **state)
{
    struct ar_review rv;
    ar_review_init(&rv);
    rv.passed = 1;
    rv.summary = strdup("nothing to review");
    struct ar_review_verdict v;
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 0, &v);
    struct ar_review_report rep = { &rv,  &v,   AR_SEV_LOW, NULL, 0,    "the diff is empty",
                                    NULL, NULL, 0,          0,    NULL, NULL };
    json_t *o = ar_review_to_value(&rep);
    assert_false(json_is_true(json_object_get(o, "reviewed")));
    assert_int_equal(json_array_size(json_object_get(o, "calls")), 0);
    assert_string_equal(json_string_value(json_object_get(o, "cost_source")), "none");
    json_decref(o);
    json_t *log = ar_review_to_sarif(&rep);
    assert_int_equal(json_array_size(json_object_get(
                         json_array_get(json_object_get(log, "runs"), 0), "results")),
                     0);
    json_decref(log);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_review_render(&rep, AR_REVIEW_FORMAT_TEXT, &b), 0);
    assert_string_equal(ar_buf_cstr(&b), "nothing to review: the diff is empty\n");
    ar_buf_finish(&b);
    ar_review_finish(&rv);
}

/* ---- paths ---- */

static const char ab_repo[] = "diff --git a/b/app.c b/b/app.c\n"
                              "--- a/b/app.c\n"
                              "+++ b/b/app.c\n"
                              "@@ -1 +1 @@\n"
                              "-x\n"
                              "+y\n"
                              "diff --git a/a/lib.c b/a/lib.c\n"
                              "new file mode 100644\n"
                              "--- /dev/null\n"
                              "+++ b/a/lib.c\n"
                              "@@ -0,0 +1 @@\n"
                              "+z\n";

static void test_parse_strips_only_the_diffs_own_prefixes(void **state)
{
    static const struct {
        const char *text;
        const char *path, *old_path, *src, *dst;
    } cases[] = {
        { "diff --git a/b/app.c b/b/app.c\n--- a/b/app.c\n+++ b/b/app.c\n@@ -1 +1 @@\n-x\n+y\n",
          "b/app.c", NULL, "a/", "b/" },
        /* --no-prefix: a real folder a/ is no prefix. */
        { "diff --git a/x.c a/x.c\n--- a/x.c\n+++ a/x.c\n@@ -1 +1 @@\n-x\n+y\n", "a/x.c", NULL, "",
          "" },
        { "diff --git old/src/x.c new/src/x.c\n--- old/src/x.c\n+++ new/src/x.c\n@@ -1 +1 @@\n"
          "-x\n+y\n",
          "src/x.c", NULL, "old/", "new/" },
        /* diff.mnemonicPrefix */
        { "diff --git i/x.c w/x.c\n--- i/x.c\n+++ w/x.c\n@@ -1 +1 @@\n-x\n+y\n", "x.c", NULL, "i/",
          "w/" },
        /* A name with spaces and the " b/" inside it. */
        { "diff --git a/p b/q.c b/p b/q.c\nnew file mode 100644\n--- /dev/null\n+++ b/p b/q.c\n"
          "@@ -0,0 +1 @@\n+z\n",
          "p b/q.c", NULL, "a/", "b/" },
        /* A deletion with --no-prefix. */
        { "diff --git b/gone.c b/gone.c\ndeleted file mode 100644\n--- b/gone.c\n+++ /dev/null\n"
          "@@ -1 +0,0 @@\n-x\n",
          "b/gone.c", NULL, "", "" },
        /* A rename: the bare names of "rename from/to" tell the prefixes. */
        { "diff --git x/a/o.c y/a/n.c\nsimilarity index 90%\nrename from a/o.c\nrename to a/n.c\n"
          "--- x/a/o.c\n+++ y/a/n.c\n@@ -1 +1 @@\n-x\n+y\n",
          "a/n.c", "a/o.c", "x/", "y/" },
        /* diff -u of two files: no common tail, no prefix. */
        { "--- app.c.orig\t2026-01-01\n+++ app.c\t2026-01-02\n@@ -1 +1 @@\n-x\n+y\n", "app.c",
          "app.c.orig", NULL, NULL },
        /* A plain patch that shows nothing: git's default prefixes. */
        { "--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+z\n", "new.c", NULL, NULL, NULL },
    };
    for (size_t i = 0; i < AR_ARRAY_SIZE(cases); i++) {
        struct ar_diff d;
        assert_int_equal(ar_diff_parse(cases[i].text, strlen(cases[i].text), &d, NULL), 0);
        assert_int_equal(d.n_files, 1);
        assert_string_equal(d.files[0].path, cases[i].path);
        if (cases[i].old_path)
            assert_string_equal(d.files[0].old_path, cases[i].old_path);
        else
            assert_null(d.files[0].old_path);
        if (cases[i].src) {
            assert_string_equal(d.src_prefix, cases[i].src);
            assert_string_equal(d.dst_prefix, cases[i].dst);
        } else {
            assert_null(d.src_prefix);
        }
        ar_diff_finish(&d);
    }
}

static void test_parse_git_lines_without_names(void **state)
{
    /* Found by the fuzzer: an empty name list read before its start. */
    static const char *const texts[] = { "diff --cc \n", "diff --git \n", "diff --git x\n",
                                         "diff --git  \n", "diff --git a b\n" };
    for (size_t i = 0; i < AR_ARRAY_SIZE(texts); i++) {
        struct ar_diff d;
        assert_int_equal(ar_diff_parse(texts[i], strlen(texts[i]), &d, NULL), 0);
        assert_int_equal(d.n_files, 1);
        ar_diff_finish(&d);
    }
}

static void test_locate_keeps_real_folders_and_rejects_paths_outside(void **state)
{
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(ab_repo, strlen(ab_repo), &d, NULL), 0);
    assert_string_equal(d.files[0].path, "b/app.c");
    assert_string_equal(d.files[1].path, "a/lib.c");
    char root[] = "/tmp/agentrun-locate-XXXXXX";
    assert_non_null(mkdtemp(root));
    char sub[64], file[96];
    snprintf(sub, sizeof(sub), "%s/b", root);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(file, sizeof(file), "%s/other.c", sub);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    static const struct {
        const char *given, *want;
        int where;
    } cases[] = {
        { "b/app.c", "b/app.c", AR_PATH_IN_DIFF },
        { "./b/./app.c", "b/app.c", AR_PATH_IN_DIFF },
        { "b//app.c", "b/app.c", AR_PATH_IN_DIFF },
        { "b/b/app.c", "b/app.c", AR_PATH_IN_DIFF }, /* the diff's b/ copied along */
        { "a/b/app.c", "b/app.c", AR_PATH_IN_DIFF }, /* its a/ */
        { "b/a/lib.c", "a/lib.c", AR_PATH_IN_DIFF },
        { "app.c", "b/app.c", AR_PATH_IN_DIFF },         /* the one file ending so */
        { "b/other.c", "b/other.c", AR_PATH_ELSEWHERE }, /* exists: never stripped */
        { "nowhere.c", "nowhere.c", AR_PATH_ELSEWHERE },
        { "../etc/passwd", NULL, AR_PATH_OUTSIDE },
        { "b/../../x", NULL, AR_PATH_OUTSIDE },
        { "/etc/passwd", NULL, AR_PATH_OUTSIDE },
        { "~/.ssh/id_rsa", NULL, AR_PATH_OUTSIDE },
        { "./", NULL, AR_PATH_OUTSIDE },
    };
    for (size_t i = 0; i < AR_ARRAY_SIZE(cases); i++) {
        char *out = NULL;
        assert_int_equal(ar_diff_locate(&d, root, cases[i].given, &out), cases[i].where);
        if (cases[i].want)
            assert_string_equal(out, cases[i].want);
        else
            assert_null(out);
        free(out);
    }
    unlink(file);
    rmdir(sub);
    rmdir(root);
    ar_diff_finish(&d);
}

static void test_locate_clamps_drops_and_fingerprints(void **state)
{
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(ab_repo, strlen(ab_repo), &d, NULL), 0);
    struct ar_review a, b;
    review_from(
        "{\"passed\":false,\"summary\":\"\",\"issues\":["
        "{\"file\":\"b/app.c\",\"line\":4294967296,\"severity\":\"low\",\"message\":\"m\"},"
        "{\"file\":\"../x.c\",\"line\":1,\"severity\":\"critical\",\"message\":\"out\"},"
        "{\"file\":\"b/app.c\",\"line\":3,\"severity\":\"high\",\"message\":\"Bad at 3\"},"
        "{\"file\":\"b/app.c\",\"line\":5,\"severity\":\"high\",\"message\":\"bad  at 5\"}]}",
        &a);
    review_from(
        "{\"passed\":false,\"summary\":\"\",\"issues\":["
        "{\"file\":\"b/app.c\",\"line\":13,\"severity\":\"high\",\"message\":\"Bad at 13\"},"
        "{\"file\":\"b/app.c\",\"line\":15,\"severity\":\"high\",\"message\":\"bad at 15\"},"
        "{\"file\":\"a/lib.c\",\"line\":13,\"severity\":\"high\",\"message\":\"Bad at 13\"}]}",
        &b);
    assert_int_equal(ar_review_locate(&a, &d, NULL, NULL), 0);
    assert_int_equal(ar_review_locate(&b, &d, NULL, NULL), 0);
    assert_int_equal(a.n_issues, 3);
    assert_int_equal(a.dropped, 1);
    /* The critical finding outside the repository has no place, but still counts. */
    assert_int_equal(a.n_unplaced, 1);
    assert_int_equal(a.unplaced[0].severity, AR_SEV_CRITICAL);
    assert_int_equal(strlen(a.unplaced[0].fingerprint), AR_FINGERPRINT_LEN);
    assert_int_equal(a.issues[2].line, INT32_MAX);
    /* Moved down ten lines, renumbered in the text: the same fingerprints. The
     * repeat has its own; another file another. */
    assert_int_equal(b.issues[1].line, 13);
    assert_string_equal(a.issues[0].fingerprint, b.issues[1].fingerprint);
    assert_string_equal(a.issues[1].fingerprint, b.issues[2].fingerprint);
    assert_string_not_equal(a.issues[0].fingerprint, a.issues[1].fingerprint);
    assert_string_not_equal(b.issues[0].fingerprint, b.issues[1].fingerprint);
    assert_int_equal(strlen(a.issues[0].fingerprint), AR_FINGERPRINT_LEN);

    /* b's json as a baseline for a: all but the low one go, and do not count. */
    struct ar_review_verdict v;
    ar_review_verdict(&b, NULL, AR_SEV_LOW, 0, &v);
    struct ar_review_report rep = {
        &b, &v, AR_SEV_LOW, NULL, 1, NULL, NULL, NULL, 0, 0, NULL, NULL
    };
    json_t *doc = ar_review_to_value(&rep);
    char path[] = "/tmp/agentrun-baseline-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    json_decref(doc);
    struct ar_baseline base;
    assert_int_equal(ar_baseline_load(NULL, NULL, NULL, path, &base, NULL), 0);
    assert_int_equal(base.n, 3);
    assert_int_equal(ar_review_apply_baseline(&a, &base), 2);
    assert_int_equal(a.n_issues, 1);
    assert_int_equal(a.suppressed, 2);
    assert_int_equal(a.issues[0].severity, AR_SEV_LOW);
    ar_review_verdict(&a, NULL, AR_SEV_HIGH, 0, &v);
    assert_int_equal(v.exit_status, 1); /* the unplaced critical one counts */
    ar_review_verdict(&a, NULL, AR_FAIL_ON_NONE, 0, &v);
    assert_int_equal(v.exit_status, 0); /* passed false, but the findings are known */
    ar_baseline_finish(&base);
    struct ar_error err = AR_ERROR_INIT;
    FILE *f = fopen(path, "w");
    fputs("{\"runs\": 3}", f);
    fclose(f);
    assert_int_equal(ar_baseline_load(NULL, NULL, NULL, path, &base, &err), AR_EUSAGE);
    assert_non_null(strstr(err.msg, "not an agentrun review"));
    unlink(path);
    ar_review_finish(&a);
    ar_review_finish(&b);
    ar_diff_finish(&d);
}

static void test_globs_filters_and_default_excludes(void **state)
{
    assert_true(ar_path_glob_match("*.lock", "deep/dir/yarn.lock"));
    assert_false(ar_path_glob_match("*.lock", "yarn.lock.c"));
    assert_true(ar_path_glob_match("vendor/", "vendor/a/b.c"));
    assert_false(ar_path_glob_match("vendor/", "src/vendor/b.c"));
    assert_true(ar_path_glob_match("vendor/*", "vendor/a/b.c"));
    assert_true(ar_path_glob_match("*/gen/*.c", "src/gen/x.c"));
    assert_false(ar_path_glob_match("src/*.c", "lib/x.c"));
    const char *ex[] = { "*.md" };
    const char *in[] = { "src/*" };
    struct ar_path_filter pf = { NULL, 0, ex, 1, 0 };
    assert_true(ar_path_filter_skips(&pf, "Cargo.lock"));
    assert_true(ar_path_filter_skips(&pf, "web/package-lock.json"));
    assert_true(ar_path_filter_skips(&pf, "README.md"));
    assert_false(ar_path_filter_skips(&pf, "src/a.c"));
    pf.no_defaults = 1;
    assert_false(ar_path_filter_skips(&pf, "Cargo.lock"));
    pf.include = in;
    pf.n_include = 1;
    assert_true(ar_path_filter_skips(&pf, "lib/a.c"));
    assert_false(ar_path_filter_skips(&pf, "src/a.c"));
    assert_true(ar_path_filter_skips(&pf, "src/a.md"));

    /* The rule that skips a path, as the user gave it. */
    struct ar_buf rule;
    ar_buf_init(&rule, AR_BUF_UNLIMITED);
    assert_int_equal(ar_path_filter_rule(&pf, "src/a.md", &rule), 1);
    assert_string_equal(ar_buf_cstr(&rule), "--exclude *.md");
    ar_buf_reset(&rule);
    assert_int_equal(ar_path_filter_rule(&pf, "lib/a.c", &rule), 1);
    assert_string_equal(ar_buf_cstr(&rule), "--include: no GLOB matches");
    ar_buf_reset(&rule);
    pf.no_defaults = 0;
    pf.n_include = 0;
    assert_int_equal(ar_path_filter_rule(&pf, "web/yarn.lock", &rule), 1);
    assert_string_equal(ar_buf_cstr(&rule), "default exclude yarn.lock");
    assert_int_equal(ar_path_filter_rule(&pf, "src/a.c", NULL), 0);
    ar_buf_finish(&rule);

    /* Skipped sections are not sent at all: the chunk holds the kept ones whole. */
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(two_files, strlen(two_files), &d, NULL), 0);
    unsigned char send[2] = { AR_DIFF_SEND_WHOLE, AR_DIFF_SEND_NONE };
    struct ar_diff_chunk *c;
    size_t n;
    assert_int_equal(ar_diff_split(&d, 1 << 20, send, &c, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_null(strstr(c[0].text, "doc/b.md"));
    assert_int_equal(c[0].len, d.files[0].end);
    assert_int_equal(c[0].last_file, 0);
    ar_diff_chunks_free(c, n);
    ar_diff_finish(&d);
}

static void test_xml_escape_and_suggestion_code(void **state)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_xml_escape("a<b>&\"c'\n\t\x01\xff\xef\xbf\xbe.", &b), 0);
    assert_string_equal(ar_buf_cstr(&b), "a&lt;b&gt;&amp;&quot;c&apos;&#10;&#9;\xEF\xBF\xBD"
                                         "\xEF\xBF\xBD\xEF\xBF\xBD.");
    ar_buf_finish(&b);
    char *code = ar_suggestion_code("Free it:\n```c\nfree(p);\nreturn 0;\n```\nthen go on");
    assert_string_equal(code, "free(p);\nreturn 0;");
    free(code);
    code = ar_suggestion_code("~~~~\nx = 1;\n~~~~");
    assert_string_equal(code, "x = 1;");
    free(code);
    assert_null(ar_suggestion_code("Return early when `n == 0`."));
    assert_null(ar_suggestion_code("```\nnever closed"));
    assert_null(ar_suggestion_code(NULL));
}

static void test_rdjsonl_gitlab_and_checkstyle_formats(void **state)
{
    struct ar_review rv;
    sample_review(&rv);
    struct ar_review_verdict v;
    ar_review_verdict(&rv, NULL, AR_SEV_LOW, 0, &v);
    struct ar_review_report rep = { &rv,  &v,   AR_SEV_LOW, "HEAD", 1,    NULL,
                                    NULL, NULL, 0,          0,      NULL, NULL };
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_review_render(&rep, AR_REVIEW_FORMAT_RDJSONL, &b), 0);
    const char *s = ar_buf_cstr(&b);
    const char *nl = strchr(s, '\n');
    assert_non_null(nl);
    json_t *d = json_loadb(s, (size_t)(nl - s), 0, NULL);
    assert_non_null(d);
    assert_string_equal(json_string_value(json_object_get(json_object_get(d, "location"), "path")),
                        "src/a,b.c");
    assert_string_equal(json_string_value(json_object_get(d, "severity")), "ERROR");
    assert_non_null(strstr(json_string_value(json_object_get(d, "message")), "Suggestion: fix it"));
    assert_null(json_object_get(d, "suggestions")); /* words, not code */
    json_decref(d);
    assert_int_equal(strchr(nl + 1, '\n')[1], '\0'); /* two lines */

    json_t *gl = ar_review_to_gitlab(&rep);
    assert_int_equal(json_array_size(gl), 2);
    json_t *g0 = json_array_get(gl, 0);
    assert_string_equal(json_string_value(json_object_get(g0, "severity")), "critical");
    assert_string_equal(json_string_value(json_object_get(g0, "fingerprint")),
                        rv.issues[0].fingerprint);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(g0, "location"), "lines"), "begin")),
                     7);
    json_decref(gl);

    ar_buf_reset(&b);
    assert_int_equal(ar_review_render(&rep, AR_REVIEW_FORMAT_CHECKSTYLE, &b), 0);
    s = ar_buf_cstr(&b);
    assert_non_null(strstr(s, "<file name=\"src/a,b.c\">\n    <error line=\"7\" severity=\"error\" "
                              "message=\"50% worse:&#10;see&#10;&#10;Suggestion: fix it\" "
                              "source=\"agentrun.review.high\"/>\n  </file>\n"));
    assert_non_null(
        strstr(s, "<file name=\"src/x y.c\">\n    <error line=\"2\" severity=\"info\""));
    ar_buf_finish(&b);
    ar_review_finish(&rv);
}

static void test_severity_names_round_trip(void **state)
{
    for (int s = 0; s < AR_SEV_COUNT; s++)
        assert_int_equal(ar_severity_parse(ar_severity_name(s), 0), s);
    assert_int_equal(ar_severity_parse("none", 0), -1);
    assert_int_equal(ar_severity_parse("none", 1), AR_FAIL_ON_NONE);
    assert_int_equal(ar_severity_parse("High", 1), -1);
    assert_int_equal(ar_review_format_from_name("sarif"), AR_REVIEW_FORMAT_SARIF);
    assert_int_equal(ar_review_format_from_name("xml"), -1);
    assert_int_equal(ar_review_format_from_name(NULL), -1);
    int n = 0;
    for (; ar_review_format_name(n); n++)
        assert_int_equal(ar_review_format_from_name(ar_review_format_name(n)), n);
    assert_int_equal(n, AR_REVIEW_FORMAT_CHECKSTYLE + 1);
    assert_null(ar_review_format_name(-1));
}

/* A writer that takes at most `room` bytes, then refuses. */
struct sink {
    struct ar_buf got;
    size_t room;
    int calls;
};

static int sink_write(void *arg, const char *data, size_t n)
{
    struct sink *k = arg;
    k->calls++;
    if (k->got.len + n > k->room)
        return -1;
    return ar_buf_append(&k->got, data, n);
}

static void test_write_hands_the_whole_document_to_the_writer(void **state)
{
    struct ar_error e = AR_ERROR_INIT;
    ar_error_set(&e, AR_ETIMEOUT, NULL, "the model took too long");
    struct ar_review_result *res = NULL;
    assert_int_equal(ar_review_result_from_error(&e, &res), 0);
    assert_int_equal(res->verdict.exit_status, ar_error_exit_status(AR_ETIMEOUT));
    assert_true(res->review.failed);

    struct sink k = { .room = SIZE_MAX };
    ar_buf_init(&k.got, AR_BUF_UNLIMITED);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_review_write(res, AR_REVIEW_FORMAT_TEXT, NULL, sink_write, &k, &err), 0);
    assert_string_equal(ar_buf_cstr(&k.got), "verdict: error (timeout: the model took too long)\n");
    assert_int_equal(k.calls, 1);

    /* json: the failure, with the caller's exit status. */
    res->verdict.exit_status = 2;
    k.got.len = 0;
    assert_int_equal(ar_review_write(res, AR_REVIEW_FORMAT_JSON, NULL, sink_write, &k, &err), 0);
    json_t *doc = json_loadb(k.got.data, k.got.len, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "error");
    assert_int_equal(json_integer_value(json_object_get(doc, "exit_code")), 2);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "error"), "code")),
                        "timeout");
    json_decref(doc);

    /* sarif with options: pretty and the caller's category. */
    struct ar_review_write_options wo;
    ar_review_write_options_init(&wo);
    wo.pretty = 1;
    wo.sarif_category = "lint/c";
    k.got.len = 0;
    assert_int_equal(ar_review_write(res, AR_REVIEW_FORMAT_SARIF, &wo, sink_write, &k, &err), 0);
    assert_non_null(strstr(ar_buf_cstr(&k.got), "\n  \"version\": \"2.1.0\""));
    assert_non_null(strstr(ar_buf_cstr(&k.got), "\"id\": \"lint/c/\""));

    /* A writer that refuses: AR_EIO, said where. */
    k.got.len = 0;
    k.room = 10;
    assert_int_equal(ar_review_write(res, AR_REVIEW_FORMAT_JSON, NULL, sink_write, &k, &err),
                     AR_EIO);
    assert_string_equal(err.where, "write");
    assert_int_equal(k.got.len, 0);

    /* No such format, no result: AR_EUSAGE, nothing written. */
    k.calls = 0;
    assert_int_equal(ar_review_write(res, (enum ar_review_format)99, NULL, sink_write, &k, &err),
                     AR_EUSAGE);
    assert_int_equal(ar_review_write(NULL, AR_REVIEW_FORMAT_TEXT, NULL, sink_write, &k, &err),
                     AR_EUSAGE);
    assert_int_equal(k.calls, 0);
    ar_buf_finish(&k.got);
    ar_review_result_destroy(res);
}

/* A patch's files are git apply's list (issue 57 #2): a section git lists keeps its
 * place with git's names; a file git lists that no section is becomes a gap; a section
 * git does not list names no file and its bytes join its neighbour. */
static void test_patch_sections_are_named_by_gits_list(void **state)
{
    (void)state;
    static const char text[] = "intro\n"
                               "--- a/ghost.c\n+++ b/ghost.c\n"
                               "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-a\n+b\n"
                               "diff --git a/old.c b/new.c\nsimilarity index 90%\n"
                               "rename from old.c\nrename to new.c\n";
    struct ar_diff d = AR_DIFF_INIT;
    assert_int_equal(ar_diff_parse(text, sizeof(text) - 1, &d, NULL), 0);
    assert_int_equal(d.n_files, 3);
    struct ar_patch_series ps = { 0 };
    ps.v = calloc(1, sizeof(*ps.v));
    assert_non_null(ps.v);
    ps.n = 1;
    ps.v[0].start = 0;
    ps.v[0].end = sizeof(text) - 1;
    assert_int_equal(ar_diff_names_add(&ps.v[0].names, 'M', "a.c", NULL), 0);
    assert_int_equal(ar_diff_names_add(&ps.v[0].names, 'R', "new.c", "old.c"), 0);
    assert_int_equal(ar_diff_names_add(&ps.v[0].names, 'M', "b.c", NULL), 0);
    struct ar_diff_gaps gaps = { 0 };
    assert_int_equal(ar_patch_apply(&d, &ps, &gaps, NULL), 0);
    assert_int_equal(d.n_files, 2);
    assert_string_equal(d.files[0].path, "a.c");
    assert_null(d.files[0].old_path);
    assert_string_equal(d.files[1].path, "new.c");
    assert_string_equal(d.files[1].old_path, "old.c");
    /* The ghost's bytes are the preamble's now: still sent, naming nothing. */
    assert_int_equal(d.preamble, d.files[0].start);
    assert_int_equal(memcmp(text + d.preamble - 14, "+++ b/ghost.c\n", 14), 0);
    assert_int_equal(gaps.n, 1);
    assert_string_equal(gaps.v[0].path, "b.c");
    assert_non_null(strstr(gaps.v[0].why, "git apply would change it"));
    ar_diff_gaps_finish(&gaps);
    ar_patch_series_finish(&ps);
    ar_diff_finish(&d);
}

/* The paths are git's (issue 44): the raw records of --patch-with-raw -z, git's
 * quoting, and names given to the sections by git's list, never read from the text. */
static void test_names_come_from_gits_raw_output(void **state)
{
    (void)state;
    static const char out[] = ":100644 100644 1 2 M\0Cargo.lock \0"
                              ":100644 100644 3 4 R090\0old name\0new\tname\0"
                              ":000000 100644 0 5 A\0x\n::stop-commands::t\0"
                              "\0diff --git a/Cargo.lock  b/Cargo.lock \n";
    struct ar_diff_names names = { 0 };
    size_t at = 0;
    assert_int_equal(ar_diff_names_parse_raw(out, sizeof(out) - 1, &names, &at, NULL), 0);
    assert_int_equal(names.n, 3);
    assert_true(names.given);
    assert_string_equal(names.v[0].path, "Cargo.lock ");
    assert_int_equal(names.v[1].status, 'R');
    assert_string_equal(names.v[1].path, "new\tname");
    assert_string_equal(names.v[1].old_path, "old name");
    assert_string_equal(names.v[2].path, "x\n::stop-commands::t");
    assert_string_equal(out + at, "diff --git a/Cargo.lock  b/Cargo.lock \n");
    ar_diff_names_finish(&names);
    /* An empty diff; a record cut short. */
    assert_int_equal(ar_diff_names_parse_raw("", 0, &names, &at, NULL), 0);
    assert_int_equal(at, 0);
    ar_diff_names_finish(&names);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(
        ar_diff_names_parse_raw(":100644 100644 1 2 R1\0only\0", 26, &names, &at, &err), AR_EIO);
    ar_diff_names_finish(&names);

    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_diff_quote_name(&b, "a/", "plain name -> x b/y "), 0);
    assert_int_equal(ar_diff_quote_name(&b, "|b/", "t\tq\"b\\n\n\x01\x7f\xc3\xa9"), 0);
    assert_string_equal(ar_buf_cstr(&b),
                        "a/plain name -> x b/y \"|b/t\\tq\\\"b\\\\n\\n\\001\\177\xc3\xa9\"");
    ar_buf_finish(&b);
}

static void test_names_name_the_sections_exactly(void **state)
{
    (void)state;
    /* A type change is two sections; an unmerged path has none (a gap). */
    static const char text[] = "diff --git a/ lead b/ lead\n"
                               "deleted file mode 100644\n"
                               "--- a/ lead\t\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
                               "diff --git a/ lead b/ lead\n"
                               "new file mode 120000\n"
                               "--- /dev/null\n+++ b/ lead\t\n@@ -0,0 +1 @@\n+t\n"
                               "diff --git \"a/n\\nl\" \"b/r\\tx\"\n"
                               "similarity index 100%\nrename from \"n\\nl\"\nrename to \"r\\tx\"\n"
                               "* Unmerged path u\n";
    struct ar_diff d = AR_DIFF_INIT;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    assert_int_equal(d.n_files, 3);
    assert_string_equal(d.files[2].path, "r\tx");
    assert_string_equal(d.files[2].old_path, "n\nl");
    struct ar_diff_names names = { 0 };
    assert_int_equal(ar_diff_names_add(&names, 'T', " lead", NULL), 0);
    assert_int_equal(ar_diff_names_add(&names, 'R', "r\tx", "n\nl"), 0);
    assert_int_equal(ar_diff_names_add(&names, 'U', "u", NULL), 0);
    struct ar_diff_gaps gaps = { 0 };
    assert_int_equal(ar_diff_names_apply(&d, &names, &gaps, NULL), 0);
    assert_string_equal(d.files[0].path, " lead");
    assert_string_equal(d.files[1].path, " lead");
    assert_int_equal(gaps.n, 1);
    assert_string_equal(gaps.v[0].path, "u");
    ar_diff_gaps_finish(&gaps);
    /* A list that names a file the patch does not hold is an error, never a guess. */
    ar_diff_names_finish(&names);
    assert_int_equal(ar_diff_names_add(&names, 'M', " lead ", NULL), 0);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_diff_names_apply(&d, &names, &gaps, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "disagree"));
    ar_diff_names_finish(&names);
    ar_diff_gaps_finish(&gaps);
    ar_diff_finish(&d);
}

/* A patch file's names as git writes them: nothing but git's own tab and quotes come
 * off. */
static void test_parse_names_exactly_as_git_writes_them(void **state)
{
    (void)state;
    static const char text[] = "diff --git a/Cargo.lock  b/Cargo.lock \n"
                               "--- a/Cargo.lock \t\n+++ b/Cargo.lock \t\n@@ -1 +1 @@\n-a\n+b\n"
                               "diff --git \"a/x y\\n\" \"b/x y\\n\"\n"
                               "--- \"a/x y\\n\"\t\n+++ \"b/x y\\n\"\t\n@@ -1 +1 @@\n-a\n+b\n"
                               "diff --git a/lat\351n b/lat\351n\n"
                               "--- \"a/lat\\351n\"\n+++ \"b/lat\\351n\"\n@@ -1 +1 @@\n-a\n+b\n"
                               "--- old.c\t2020-01-01 00:00:00\n+++ new.c\t2020-01-02\n"
                               "@@ -1 +1 @@\n-a\n+b\n";
    struct ar_diff d = AR_DIFF_INIT;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    assert_int_equal(d.n_files, 4);
    assert_string_equal(d.files[0].path, "Cargo.lock ");
    assert_string_equal(d.files[1].path, "x y\n");
    assert_string_equal(d.files[2].path, "lat\351n");
    assert_string_equal(d.files[3].path, "new.c");
    /* The default exclude is about the lockfile, not a file named like it. */
    struct ar_path_filter pf = { 0 };
    assert_false(ar_path_filter_skips(&pf, d.files[0].path));
    assert_true(ar_path_filter_skips(&pf, "Cargo.lock"));
    ar_diff_finish(&d);
}

/* A Git LFS pointer modified: only oid and size change, the version line is context
 * or out of the hunk. */
static void test_a_modified_lfs_pointer_is_not_text(void **state)
{
    (void)state;
    static const char text[] =
        "diff --git a/big.c b/big.c\n--- a/big.c\n+++ b/big.c\n@@ -1,3 +1,3 @@\n"
        " version https://git-lfs.github.com/spec/v1\n"
        "-oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "-size 1\n"
        "+oid sha256:5d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "+size 2\n"
        "diff --git a/deep.c b/deep.c\n--- a/deep.c\n+++ b/deep.c\n@@ -4,3 +4,3 @@\n"
        " ext-2-x sha256:00\n"
        "-oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "-size 1\n"
        "+oid sha256:5d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "+size 2\n"
        "diff --git a/notes.md b/notes.md\n--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n"
        "-x\n+oid sha256:short\n";
    struct ar_diff d = AR_DIFF_INIT;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    assert_int_equal(d.n_files, 3);
    assert_int_equal(d.files[0].binary, AR_DIFF_BINARY_LFS);
    assert_int_equal(d.files[1].binary, AR_DIFF_BINARY_LFS);
    assert_int_equal(d.files[2].binary, 0);
    ar_diff_finish(&d);
}

/* ---- Issue 50: the rules of the gate, held over many sizes (deterministic seed) ---- */

static uint64_t prop_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A diff of 1-4 files of 1-6 hunks each, every hunk of a size of its own, each holding a
 * line found nowhere else ("+H f<file> h<hunk>"). */
static void prop_diff(uint64_t *seed, struct ar_buf *b)
{
    size_t n_files = 1 + prop_next(seed) % 4;
    for (size_t f = 0; f < n_files; f++) {
        ar_buf_printf(b, "diff --git a/f%zu.c b/f%zu.c\n--- a/f%zu.c\n+++ b/f%zu.c\n", f, f, f, f);
        size_t n_hunks = 1 + prop_next(seed) % 6;
        for (size_t h = 0; h < n_hunks; h++) {
            size_t pad = prop_next(seed) % 9;
            ar_buf_printf(b, "@@ -%zu,0 +%zu,%zu @@\n+H f%zu h%zu\n", h * 100 + 1, h * 100 + 1,
                          pad + 1, f, h);
            for (size_t p = 0; p < pad; p++)
                ar_buf_printf(b, "+pad line %zu of hunk %zu\n", p, h);
        }
    }
}

static size_t count_in(const char *hay, size_t n, const char *needle)
{
    size_t count = 0, k = strlen(needle);
    for (const char *p = hay; (p = memmem(p, n - (size_t)(p - hay), needle, k)) != NULL; p += k)
        count++;
    return count;
}

/*
 * Whatever the sizes of files, hunks and chunks: every hunk of every file is in exactly one
 * chunk, and that chunk says it holds the file (a piece of a large file holds all of its
 * hunks, not only its first). And a file counts as reviewed exactly when every chunk that
 * holds it came back with a review: a piece that failed, or that never ran (no review, no
 * failure), leaves it not reviewed, in its status and in the counts.
 */
static void test_property_every_hunk_in_one_chunk_and_reviewed_only_whole(void **state)
{
    (void)state;
    uint64_t seed = 0x50a11ce5eedULL;
    size_t split_files = 0, caught_later_piece = 0;
    for (int round = 0; round < 400; round++) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        prop_diff(&seed, &b);
        size_t max = 60 + prop_next(&seed) % 500;
        struct ar_diff d;
        assert_int_equal(ar_diff_parse(ar_buf_cstr(&b), b.len, &d, NULL), 0);
        struct ar_path_filter pf = { NULL, 0, NULL, 0, 0 };
        struct ar_review_coverage cov;
        unsigned char *send;
        assert_int_equal(ar_coverage_plan(&d, &pf, 0, max, NULL, &cov, &send, NULL), 0);
        struct ar_diff_chunk *c;
        size_t n;
        assert_int_equal(ar_diff_split(&d, max, send, &c, &n, NULL), 0);
        for (size_t i = 0; i < d.n_files; i++) {
            const struct ar_diff_file *f = &d.files[i];
            size_t holders = 0;
            for (size_t k = 0; k < n; k++)
                holders += c[k].first_file <= i && i <= c[k].last_file;
            split_files += holders > 1;
            for (size_t h = 0; h < f->n_hunks; h++) {
                char mark[64];
                snprintf(mark, sizeof(mark), "+H f%zu h%zu\n", i, h);
                size_t hend = h + 1 < f->n_hunks ? f->hunks[h + 1] : f->end;
                size_t seen = 0;
                for (size_t k = 0; k < n; k++) {
                    size_t here = count_in(c[k].text, c[k].len, mark);
                    if (!here)
                        continue;
                    seen += here;
                    assert_true(c[k].first_file <= i && i <= c[k].last_file);
                    /* the whole hunk, not only its marker line */
                    assert_non_null(
                        memmem(c[k].text, c[k].len, d.text + f->hunks[h], hend - f->hunks[h]));
                }
                if (seen != 1)
                    fail_msg("round %d (max %zu): hunk %zu of f%zu is in %zu chunks", round, max, h,
                             i, seen);
            }
        }
        ar_coverage_free(&cov);
        free(send);

        /* Each chunk came back (0), failed (1) or never ran (2). */
        for (int trial = 0; trial < 4; trial++) {
            assert_int_equal(ar_coverage_plan(&d, &pf, 0, max, NULL, &cov, &send, NULL), 0);
            assert_int_equal(ar_coverage_chunks(&cov, send, c, n), 0);
            struct ar_review *parts = calloc(n + 1, sizeof(*parts));
            int *fate = calloc(n + 1, sizeof(*fate));
            assert_non_null(parts);
            assert_non_null(fate);
            for (size_t k = 0; k < n; k++) {
                ar_review_init(&parts[k]);
                fate[k] = trial == 0 ? 0 : (int)(prop_next(&seed) % 4 == 0 ? 1 + k % 2 : 0);
                if (fate[k] == 0) {
                    parts[k].passed = 1;
                    parts[k].chunks = 1;
                } else if (fate[k] == 1) {
                    parts[k].failed = 1;
                    ar_error_set(&parts[k].error, AR_ETIMEOUT, NULL, "timed out");
                }
            }
            assert_int_equal(ar_coverage_finish(&cov, parts, n, NULL), 0);
            size_t reviewed = 0;
            for (size_t i = 0; i < d.n_files; i++) {
                int whole = 1, first = 1, later_bad = 0;
                for (size_t k = 0; k < n; k++)
                    if (c[k].first_file <= i && i <= c[k].last_file) {
                        later_bad |= !first && fate[k] != 0;
                        whole &= fate[k] == 0;
                        first = 0;
                    }
                caught_later_piece += later_bad;
                reviewed += whole;
                if (cov.files[i].status != (whole ? AR_COVER_REVIEWED : AR_COVER_NOT_SENT))
                    fail_msg("round %d trial %d: f%zu is %s, its chunks say %s", round, trial, i,
                             ar_review_cover_name(cov.files[i].status),
                             whole ? "reviewed" : "not_sent");
            }
            assert_int_equal(cov.n_reviewed, reviewed);
            assert_int_equal(cov.n_unreviewed, d.n_files - reviewed);
            for (size_t k = 0; k < n; k++)
                ar_review_finish(&parts[k]);
            free(parts);
            free(fate);
            ar_coverage_free(&cov);
            free(send);
        }
        ar_diff_chunks_free(c, n);
        ar_diff_finish(&d);
        ar_buf_finish(&b);
    }
    /* The sizes did make pieces, and later pieces that failed. */
    assert_true(split_files > 100);
    assert_true(caught_later_piece > 50);
}

/* A model's bare file name that ends two files of the diff names neither: never the first. */
static void test_locate_an_ambiguous_name_stays_unlocated(void **state)
{
    (void)state;
    static const char text[] = "diff --git a/src/a/util.c b/src/a/util.c\n"
                               "--- a/src/a/util.c\n"
                               "+++ b/src/a/util.c\n"
                               "@@ -1 +1 @@\n"
                               "-x\n"
                               "+y\n"
                               "diff --git a/src/b/util.c b/src/b/util.c\n"
                               "--- a/src/b/util.c\n"
                               "+++ b/src/b/util.c\n"
                               "@@ -1 +1 @@\n"
                               "-x\n"
                               "+y\n";
    struct ar_diff d;
    assert_int_equal(ar_diff_parse(text, strlen(text), &d, NULL), 0);
    static const struct {
        const char *given, *want;
        int where;
    } cases[] = {
        { "util.c", "util.c", AR_PATH_ELSEWHERE },
        { "./util.c", "util.c", AR_PATH_ELSEWHERE },
        { "a/util.c", "src/a/util.c", AR_PATH_IN_DIFF }, /* one file ends so */
        { "b/util.c", "src/b/util.c", AR_PATH_IN_DIFF },
    };
    for (size_t i = 0; i < AR_ARRAY_SIZE(cases); i++) {
        char *out = NULL;
        assert_int_equal(ar_diff_locate(&d, NULL, cases[i].given, &out), cases[i].where);
        assert_string_equal(out, cases[i].want);
        free(out);
    }
    ar_diff_finish(&d);
}

/* A suggestion fenced with four backticks holds a three-backtick line: it is part of the
 * code (a replacement cut there would be applied by reviewdog as it stands). */
static void test_suggestion_code_closes_only_at_a_fence_as_long(void **state)
{
    (void)state;
    char *code = ar_suggestion_code("Use this:\n````md\nText\n```c\nx();\n```\nmore\n````\nok");
    assert_string_equal(code, "Text\n```c\nx();\n```\nmore");
    free(code);
    code = ar_suggestion_code("~~~~~\na\n~~~\nb\n~~~~~");
    assert_string_equal(code, "a\n~~~\nb");
    free(code);
    /* Never closed by the shorter fence: no code block. */
    assert_null(ar_suggestion_code("````\nx\n```\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_come_from_gits_raw_output),
        cmocka_unit_test(test_patch_sections_are_named_by_gits_list),
        cmocka_unit_test(test_names_name_the_sections_exactly),
        cmocka_unit_test(test_parse_names_exactly_as_git_writes_them),
        cmocka_unit_test(test_a_modified_lfs_pointer_is_not_text),
        cmocka_unit_test(test_write_hands_the_whole_document_to_the_writer),
        cmocka_unit_test(test_every_format_fails_rather_than_cut),
        cmocka_unit_test(test_parse_finds_files_and_hunks),
        cmocka_unit_test(test_parse_hunk_header_at_end_of_unterminated_text),
        cmocka_unit_test(test_parse_removed_dashes_line_is_not_a_new_file),
        cmocka_unit_test(test_parse_renames_deletions_and_quoted_paths),
        cmocka_unit_test(test_binary_sections_are_told_apart),
        cmocka_unit_test(test_binary_is_judged_by_content),
        cmocka_unit_test(test_coverage_of_every_changed_path),
        cmocka_unit_test(test_split_packs_whole_files_up_to_the_limit),
        cmocka_unit_test(test_split_large_file_at_hunks_each_piece_keeps_header),
        cmocka_unit_test(test_split_drops_binary_payload_and_keeps_it_with_text),
        cmocka_unit_test(test_split_carries_binary_sections_into_the_first_piece),
        cmocka_unit_test(test_parse_crlf_diff),
        cmocka_unit_test(test_merge_sorts_by_file_then_line_and_flags_outside_diff),
        cmocka_unit_test(test_merge_sums_tokens_and_cost_unknown_when_one_is),
        cmocka_unit_test(test_from_value_rejects_a_broken_envelope),
        cmocka_unit_test(test_from_value_salvages_each_finding_alone),
        cmocka_unit_test(test_verdict_per_fail_on),
        cmocka_unit_test(test_degraded_no_json_passes_unless_strict),
        cmocka_unit_test(test_provider_failure_and_timeout_are_never_degraded),
        cmocka_unit_test(test_ok_result_becomes_the_review),
        cmocka_unit_test(test_github_escaping),
        cmocka_unit_test(test_github_format_commands),
        cmocka_unit_test(test_sarif_has_the_required_structure),
        cmocka_unit_test(test_text_and_json_formats),
        cmocka_unit_test(test_nothing_to_review_documents_are_valid),
        cmocka_unit_test(test_severity_names_round_trip),
        cmocka_unit_test(test_parse_strips_only_the_diffs_own_prefixes),
        cmocka_unit_test(test_parse_git_lines_without_names),
        cmocka_unit_test(test_locate_keeps_real_folders_and_rejects_paths_outside),
        cmocka_unit_test(test_locate_clamps_drops_and_fingerprints),
        cmocka_unit_test(test_globs_filters_and_default_excludes),
        cmocka_unit_test(test_xml_escape_and_suggestion_code),
        cmocka_unit_test(test_rdjsonl_gitlab_and_checkstyle_formats),
        cmocka_unit_test(test_property_every_hunk_in_one_chunk_and_reviewed_only_whole),
        cmocka_unit_test(test_locate_an_ambiguous_name_stays_unlocated),
        cmocka_unit_test(test_suggestion_code_closes_only_at_a_fence_as_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
