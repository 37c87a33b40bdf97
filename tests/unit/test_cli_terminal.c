/* Unit tests of src/cli/terminal.c: model text on a terminal is shown, never obeyed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cli/terminal.h"
#include "util/shown.h"

static char *rendered(const char *s, size_t n)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_cli_text_append(&b, s, n), 0);
    char *out = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    return out;
}

#define IN(s) s, sizeof(s) - 1

static void test_terminal_controls_are_shown_in_caret_notation(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t n;
        const char *out;
    } cases[] = {
        /* colours, a clear screen, a window title (OSC … BEL), a cursor move up */
        { IN("\x1b[31mred\x1b[0m"), "^[[31mred^[[0m" },
        { IN("\x1b[2J\x1b[H"), "^[[2J^[[H" },
        { IN("\x1b]0;pwned\x07"), "^[]0;pwned^G" },
        { IN("verdict: fail\r\x1b[1Averdict: pass"), "verdict: fail^M^[[1Averdict: pass" },
        /* a lone CR overwrites a line; CR LF ends one */
        { IN("a\rb\r\nc"), "a^Mb\r\nc" },
        { IN("bs\b\x7f nul"), "bs^H^? nul" },
        { IN("x\0y"), "x^@y" },
        /* C1: CSI as U+009B, and the 8-bit byte that is not UTF-8 */
        { IN("\xc2\x9b"
             "31m"),
          "M-^[31m" },
        { IN("\x9b"
             "31m"),
          "\xef\xbf\xbd"
          "31m" },
        /* text passes: tabs, newlines, any script, an emoji */
        { IN("a\tb\nc"), "a\tb\nc" },
        { IN("d\xc3\xa9j\xc3\xa0 \xe2\x9c\x93 \xf0\x9f\x98\x80"),
          "d\xc3\xa9j\xc3\xa0 \xe2\x9c\x93 \xf0\x9f\x98\x80" },
        { IN("\xc2\xa0nbsp"), "\xc2\xa0nbsp" },
        { IN(""), "" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = rendered(cases[i].in, cases[i].n);
        assert_string_equal(got, cases[i].out);
        free(got);
    }
}

static void test_terminal_neutralize_keeps_what_came_before(void **state)
{
    (void)state;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_buf_puts(&b, "head\x1b "), 0);
    size_t from = b.len;
    assert_int_equal(ar_buf_puts(&b, "tail\x1b[0m"), 0);
    assert_int_equal(ar_cli_text_neutralize(&b, from), 0);
    assert_string_equal(ar_buf_cstr(&b), "head\x1b tail^[[0m");
    ar_buf_finish(&b);
}

/* Untrusted text on stderr and in the text format (issue 44): one line, or
 * continuation lines; no workflow command of a CI runner can start. */
static void test_untrusted_text_never_starts_a_line(void **state)
{
    (void)state;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_cli_line_append(&b, IN("x\n::stop-commands::tok\r\nz\r::e::\x1b[2J")), 0);
    assert_string_equal(ar_buf_cstr(&b), "x^J::stop-commands::tok^M^Jz^M::e::^[[2J");
    b.len = 0;
    assert_int_equal(ar_cli_line_append(&b, IN("a ##[stop-commands]t ###[x")), 0);
    assert_string_equal(ar_buf_cstr(&b), "a # #[stop-commands]t ## #[x");
    b.len = 0;
    assert_int_equal(ar_shown_data(&b, IN("m\n  ::error::x\n"), "    | "), 0);
    assert_string_equal(ar_buf_cstr(&b), "m\n    |   ::error::x\n    | ");
    b.len = 0;
    assert_int_equal(ar_buf_puts(&b, "agentrun: "), 0);
    assert_int_equal(ar_buf_puts(&b, "not reviewed: a\nb"), 0);
    assert_int_equal(ar_cli_line_neutralize(&b, 10), 0);
    assert_string_equal(ar_buf_cstr(&b), "agentrun: not reviewed: a^Jb");
    ar_buf_finish(&b);
}

/* Text agentrun laid out in lines with a model's words in it (issue 57 #5): the same
 * neutraliser, the layout's line breaks kept, and no line reads as a workflow command. */
static void test_laid_out_text_keeps_its_lines_and_starts_no_command(void **state)
{
    (void)state;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_shown_layout(&b, IN("PRI  ID\n  1  a  fine\n       ::error::x\r\n"
                                            "::warning::y a::b ##[group]z\rq\x1b[2J")),
                     0);
    assert_string_equal(ar_buf_cstr(&b), "PRI  ID\n  1  a  fine\n       : :error::x\r\n"
                                         ": :warning::y a::b # #[group]z^Mq^[[2J");
    b.len = 0;
    assert_int_equal(ar_buf_puts(&b, "keep\n"), 0);
    assert_int_equal(ar_buf_puts(&b, "::x\n"), 0);
    assert_int_equal(ar_cli_layout_neutralize(&b, 5), 0);
    assert_string_equal(ar_buf_cstr(&b), "keep\n: :x\n");
    ar_buf_finish(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untrusted_text_never_starts_a_line),
        cmocka_unit_test(test_laid_out_text_keeps_its_lines_and_starts_no_command),
        cmocka_unit_test(test_terminal_controls_are_shown_in_caret_notation),
        cmocka_unit_test(test_terminal_neutralize_keeps_what_came_before),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
