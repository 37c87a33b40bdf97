/* The command and option tables: sorted, unique, and parsed as declared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "agentrun/error.h"
#include "cli/cli.h"

static void test_commands_are_sorted_and_unique(void **state)
{
    for (size_t i = 0; ar_cli_commands[i] && ar_cli_commands[i + 1]; i++)
        assert_true(strcmp(ar_cli_commands[i]->name, ar_cli_commands[i + 1]->name) < 0);
}

static void test_every_option_has_help_and_unique_keys(void **state)
{
    for (size_t i = 0; ar_cli_commands[i]; i++) {
        const struct ar_cli_command *c = ar_cli_commands[i];
        assert_non_null(c->summary);
        assert_non_null(c->example);
        for (const struct ar_cli_opt *a = c->opts; a && a->name; a++) {
            assert_non_null(a->help);
            assert_true(a->key != 'h');
            for (const struct ar_cli_opt *b = a + 1; b->name; b++) {
                assert_true(a->key != b->key);
                assert_true(strcmp(a->name, b->name) != 0);
            }
        }
    }
}

static void test_durations_and_sizes_parse_with_units(void **state)
{
    unsigned long long v;
    assert_int_equal(ar_cli_parse_duration_ms("90", &v), 0);
    assert_int_equal(v, 90000);
    assert_int_equal(ar_cli_parse_duration_ms("250ms", &v), 0);
    assert_int_equal(v, 250);
    assert_int_equal(ar_cli_parse_duration_ms("1.5s", &v), 0);
    assert_int_equal(v, 1500);
    assert_int_equal(ar_cli_parse_duration_ms("5m", &v), 0);
    assert_int_equal(v, 300000);
    /* The library's reading: never rounded down to 0 (none). */
    assert_int_equal(ar_cli_parse_duration_ms("0.0004", &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(ar_cli_parse_duration_ms("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(ar_cli_parse_duration_ms("-1", &v), -1);
    assert_int_equal(ar_cli_parse_duration_ms("ten", &v), -1);
    assert_int_equal(ar_cli_parse_duration_ms("10x", &v), -1);
    assert_int_equal(ar_cli_parse_duration_ms("nan", &v), -1);
    assert_int_equal(ar_cli_parse_duration_ms("inf", &v), -1);
    assert_int_equal(ar_cli_parse_duration_ms("0x10", &v), -1);
    assert_int_equal(ar_cli_parse_duration_ms("1e30", &v), -1);
    assert_int_equal(ar_cli_parse_size("200K", &v), 0);
    assert_int_equal(v, 204800);
    assert_int_equal(ar_cli_parse_size("64MiB", &v), 0);
    assert_int_equal(v, 64ULL << 20);
    assert_int_equal(ar_cli_parse_size("12", &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(ar_cli_parse_size("12q", &v), -1);
    long l;
    assert_int_equal(ar_cli_parse_int("8", 1, 64, &l), 0);
    assert_int_equal(l, 8);
    assert_int_equal(ar_cli_parse_int("0", 1, 64, &l), -1);
}

static void test_choice_maps_values_to_their_index_and_refuses_others(void **state)
{
    const struct ar_cli_command *run = ar_cli_command_find("run");
    assert_non_null(run);
    const struct ar_cli_opt *o = run->opts;
    while (o->name && strcmp(o->name, "expect") != 0)
        o++;
    assert_non_null(o->name);
    assert_int_equal(ar_cli_choice(run, o->key, "object"), 0);
    assert_int_equal(ar_cli_choice(run, o->key, "array"), 1);
    assert_int_equal(ar_cli_choice(run, o->key, "any"), 2);
    assert_int_equal(ar_cli_choice(run, o->key, "arr"), -1);
    assert_int_equal(ar_cli_choice(run, o->key, "anything"), -1);
    assert_int_equal(ar_cli_choice(run, o->key, ""), -1);
}

/* One out-of-memory policy for every command (docs/architecture.md): the status of error
 * nomem, 4, whatever command ran out; never the usage status. */
static void test_out_of_memory_is_exit_4_for_every_command(void **state)
{
    assert_int_equal(ar_cli_out_of_memory(), 4);
    assert_int_equal(ar_cli_out_of_memory(), ar_error_exit_status(AR_ENOMEM));
    assert_string_equal(ar_cli_last_error(), "out of memory");
    assert_int_equal(ar_cli_last_error_code(), AR_ENOMEM);
    assert_int_equal(ar_cli_usage_error(NULL, "bad"), AR_EXIT_USAGE);
    assert_int_equal(ar_cli_last_error_code(), AR_EUSAGE);
    ar_cli_errorf("something else");
    assert_int_equal(ar_cli_last_error_code(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands_are_sorted_and_unique),
        cmocka_unit_test(test_every_option_has_help_and_unique_keys),
        cmocka_unit_test(test_durations_and_sizes_parse_with_units),
        cmocka_unit_test(test_choice_maps_values_to_their_index_and_refuses_others),
        cmocka_unit_test(test_out_of_memory_is_exit_4_for_every_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
