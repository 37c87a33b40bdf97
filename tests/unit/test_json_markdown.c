/* Unit tests of src/json/markdown: fenced code blocks and sections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "agentrun/extract.h"
#include "json/markdown.h"

struct blocks {
    char out[512];
    const char *lang;
};

static int collect(const struct ar_md_block *b, const char *text, void *arg)
{
    struct blocks *bs = arg;
    if (!ar_md_block_is_lang(b, text, bs->lang))
        return 0;
    size_t n = strlen(bs->out);
    snprintf(bs->out + n, sizeof(bs->out) - n, "<%.*s|%d|%.*s>", (int)b->lang_len,
             text + b->info_start, b->closed, (int)(b->end - b->start), text + b->start);
    return 0;
}

struct block_case {
    const char *text;
    const char *lang;
    const char *want;
};

static const struct block_case block_cases[] = {
    { "a\n```python\nx = 1\n```\nb\n~~~ JSON {.x}\n{}\n~~~\n", NULL,
      "<python|1|x = 1\n><JSON|1|{}\n>" },
    { "```py\n1\n```\n```python\n2\n```\n", "PYTHON", "<python|1|2\n>" },
    { "  ```\nindented\n  ```\n", NULL, "<|1|indented\n>" },
    { "    ```\nfour spaces is not a fence\n", NULL, "" },
    { "``\nshort\n``\n", NULL, "" },
    { "````md\n```json\n{}\n```\n````\n", NULL, "<md|1|```json\n{}\n```\n>" },
    { "```\r\ncrlf\r\n```\r\n", NULL, "<|1|crlf\r\n>" },
    { "~~~\nnot closed by backticks\n```\n", NULL, "<|0|not closed by backticks\n```\n>" },
    { "inline ```json {\"a\":1}``` is not a fence\n", NULL, "" },
    { "", NULL, "" },
};

static void test_md_blocks_table(void **state)
{
    for (size_t i = 0; i < sizeof(block_cases) / sizeof(block_cases[0]); i++) {
        struct blocks bs = { "", block_cases[i].lang };
        const char *t = block_cases[i].text;
        assert_int_equal(ar_md_blocks_each(t, strlen(t), collect, &bs), 0);
        if (strcmp(bs.out, block_cases[i].want) != 0)
            fail_msg("case %zu: got '%s' want '%s'", i, bs.out, block_cases[i].want);
    }
}

/* The fence rules read line by line, the plain way: the reference the walk
 * that jumps between fence characters must agree with. */
static size_t ref_fence(const char *t, size_t ls, size_t le, char *fc)
{
    size_t i = ls;
    while (i < le && i - ls < 3 && t[i] == ' ')
        i++;
    if (i >= le || (t[i] != '`' && t[i] != '~'))
        return 0;
    size_t n = 0;
    while (i + n < le && t[i + n] == t[i])
        n++;
    if (n < 3)
        return 0;
    *fc = t[i];
    return n;
}

/* The line at `at`: where its content ends (before "\r\n" or "\n") and the next begins. */
static size_t ref_line(const char *t, size_t len, size_t at, size_t *next)
{
    const char *nl = memchr(t + at, '\n', len - at);
    size_t end = nl ? (size_t)(nl - t) : len;
    *next = nl ? end + 1 : len;
    return end > at && t[end - 1] == '\r' ? end - 1 : end;
}

static void ref_blocks(const char *t, size_t len, char *out, size_t cap)
{
    size_t at = 0, next;
    out[0] = '\0';
    while (at < len) {
        char fc;
        size_t flen = ref_fence(t, at, ref_line(t, len, at, &next), &fc);
        at = next;
        if (!flen)
            continue;
        size_t start = at, end = len;
        int closed = 0;
        while (at < len && !closed) {
            size_t e = ref_line(t, len, at, &next), after = at;
            char c;
            size_t n = ref_fence(t, at, e, &c);
            while (after < e && t[after] == ' ')
                after++;
            int blank = 1;
            for (size_t q = after + n; q < e; q++)
                blank &= t[q] == ' ' || t[q] == '\t';
            if (n && c == fc && n >= flen && blank) {
                end = at;
                closed = 1;
            }
            at = next;
        }
        size_t k = strlen(out);
        snprintf(out + k, cap - k, "<%zu-%zu|%d>", start, end, closed);
    }
}

static int spans(const struct ar_md_block *b, const char *text, void *arg)
{
    char *out = arg;
    size_t n = strlen(out);
    snprintf(out + n, 4096 - n, "<%zu-%zu|%d>", b->start, b->end, b->closed);
    return 0;
}

/* Random texts of fence-like lines: the fast walk finds what a line-by-line
 * walk finds. */
static void test_md_blocks_agree_with_a_line_walk(void **state)
{
    static const char *const pieces[] = { "```", "~~~", "````", "  ```", "   ~~~~", "    ```",
                                          "x ```", "``", "text", "`", "~", " ", "json", "\r", "\n",
                                          "\n", "\n", "{}",
                                          /* prose longer than the blocks the search reads */
                                          "The answer is below: it keeps the whole map.",
                                          "{\"id\": 1, \"rank\": 2, \"label\": \"ranked-item\"}, "
                                          "{\"id\": 2, \"rank\": 3, \"label\": \"ranked-item\"}, "
                                          "{\"id\": 3, \"rank\": 4, \"label\": \"ranked-item\"}" };
    unsigned seed = 32;
    char text[1024], want[4096], got[4096];
    for (int round = 0; round < 40000; round++) {
        size_t len = 0;
        int n = (int)(seed % 40);
        for (int k = 0; k < n; k++) {
            seed = seed * 1103515245u + 12345u;
            const char *p = pieces[(seed >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
            size_t pl = strlen(p);
            if (len + pl >= sizeof(text))
                break;
            memcpy(text + len, p, pl);
            len += pl;
        }
        seed = seed * 1103515245u + 12345u;
        /* Backtick info strings cannot hold a backtick: keep them out of fence lines. */
        int skip = 0;
        for (size_t q = 0; q + 3 < len && !skip; q++)
            skip = text[q] == '`' && text[q + 1] == '`' && text[q + 2] == '`' &&
                   memchr(text + q + 3, '`', strcspn(text + q + 3, "\n")) != NULL;
        if (skip)
            continue;
        ref_blocks(text, len, want, sizeof(want));
        got[0] = '\0';
        ar_md_blocks_each(text, len, spans, got);
        if (strcmp(got, want) != 0)
            fail_msg("'%.*s': got %s want %s", (int)len, text, got, want);
    }
}

static int json_flag(const struct ar_md_block *b, const char *text, void *arg)
{
    *(int *)arg = ar_md_block_is_json(b, text);
    return 0;
}

static void test_md_block_is_json(void **state)
{
    const char *labels[] = { "```\n",      "```json\n",   "```JSONC\n", "```Json5 x\n",
                             "```jsonl\n", "```python\n", "```{r}\n" };
    int want[] = { 1, 1, 1, 1, 0, 0, 0 };
    for (size_t i = 0; i < 7; i++) {
        int is = -1;
        ar_md_blocks_each(labels[i], strlen(labels[i]), json_flag, &is);
        assert_int_equal(is, want[i]);
    }
}

struct section_case {
    const char *heading;
    const char *want; /* NULL: not found */
};

static const char *doc = "intro\n"
                         "# Summary\n"
                         "All good.\n"
                         "## Details #\n"
                         "More.\n"
                         "```md\n"
                         "# Not a heading\n"
                         "```\n"
                         "# Next Steps\n"
                         "Ship it.\n"
                         "### Deep\n"
                         "x\n"
                         "#nospace\n";

static const struct section_case section_cases[] = {
    { "summary", "All good.\n## Details #\nMore.\n```md\n# Not a heading\n```\n" },
    { "DETAILS", "More.\n```md\n# Not a heading\n```\n" },
    { "Next Steps", "Ship it.\n### Deep\nx\n#nospace\n" },
    { "## Deep ", "x\n#nospace\n" },
    { "Not a heading", NULL },
    { "nospace", NULL },
};

static void test_md_section_table(void **state)
{
    for (size_t i = 0; i < sizeof(section_cases) / sizeof(section_cases[0]); i++) {
        size_t s = 0, e = 0;
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_md_section_find(doc, strlen(doc), section_cases[i].heading, &s, &e, &err);
        if (!section_cases[i].want) {
            assert_int_equal(rc, AR_ENOJSON);
            assert_non_null(strstr(err.msg, "no section"));
            continue;
        }
        assert_int_equal(rc, 0);
        if (strlen(section_cases[i].want) != e - s ||
            memcmp(doc + s, section_cases[i].want, e - s) != 0)
            fail_msg("case %zu: got '%.*s'", i, (int)(e - s), doc + s);
    }
}

struct stopper {
    int calls, stop_at;
};

static int stop_at(const struct ar_md_block *b, const char *text, void *arg)
{
    (void)b;
    (void)text;
    struct stopper *s = arg;
    return ++s->calls == s->stop_at ? 7 : 0;
}

/* A writer that asks to stop (a non-zero return) is not called again, and its value is what
 * ar_md_blocks_each() returns. */
static void test_md_blocks_each_stops_when_asked(void **state)
{
    (void)state;
    static const char t[] = "```\none\n```\n```\ntwo\n```\n```\nthree\n```\n";
    for (int at = 1; at <= 3; at++) {
        struct stopper s = { 0, at };
        assert_int_equal(ar_md_blocks_each(t, strlen(t), stop_at, &s), 7);
        assert_int_equal(s.calls, at);
    }
    struct stopper never = { 0, 0 };
    assert_int_equal(ar_md_blocks_each(t, strlen(t), stop_at, &never), 0);
    assert_int_equal(never.calls, 3);
}

struct writer {
    int calls, stop_at;
    char seen[64];
};

static int write_block(void *arg, const char *data, size_t len)
{
    struct writer *w = arg;
    size_t n = strlen(w->seen);
    snprintf(w->seen + n, sizeof(w->seen) - n, "%.*s", (int)len, data);
    return ++w->calls == w->stop_at ? -5 : 0;
}

/* The public walk (issue 60 #25): a writer that asks to stop is not called again, and its
 * value is what ar_markdown_blocks() returns, not a later writer's; blocks of another
 * language are neither written nor counted. */
static void test_markdown_blocks_stops_when_the_writer_asks(void **state)
{
    (void)state;
    static const char t[] = "```sh\none\n```\n```py\nskip\n```\n```SH\ntwo\n```\n"
                            "```sh\nthree\n```\n";
    static const char *const want[] = { "", "one\n", "one\ntwo\n", "one\ntwo\nthree\n" };
    for (int at = 1; at <= 3; at++) {
        struct writer w = { 0, at, "" };
        assert_int_equal(ar_markdown_blocks(t, strlen(t), "sh", write_block, &w), -5);
        assert_int_equal(w.calls, at);
        assert_string_equal(w.seen, want[at]);
    }
    struct writer all = { 0, 0, "" };
    assert_int_equal(ar_markdown_blocks(t, strlen(t), "sh", write_block, &all), 3);
    assert_string_equal(all.seen, want[3]);
    struct writer any = { 0, 0, "" };
    assert_int_equal(ar_markdown_blocks(t, strlen(t), NULL, write_block, &any), 4);
    assert_string_equal(any.seen, "one\nskip\ntwo\nthree\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md_blocks_table),
        cmocka_unit_test(test_md_blocks_each_stops_when_asked),
        cmocka_unit_test(test_markdown_blocks_stops_when_the_writer_asks),
        cmocka_unit_test(test_md_blocks_agree_with_a_line_walk),
        cmocka_unit_test(test_md_block_is_json),
        cmocka_unit_test(test_md_section_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
