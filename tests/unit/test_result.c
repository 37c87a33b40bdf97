/* The RunResult draft (src/result): what each stage records, and the finished result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "json/doc.h"
#include "json/extract.h"
#include "json/repair.h"
#include "result/result.h"
#include "util/strv.h"

static const char *const argv[] = { "claude", "-p", NULL };

static void draft_init(struct ar_result_draft *d)
{
    struct ar_posture asked = { AR_TOOLS_READ, 0, 0 };
    assert_int_equal(ar_result_draft_init(d, "claude", &asked), 0);
}

static struct ar_call_record *begin(struct ar_result_draft *d, const char *kind, int main_call)
{
    struct ar_posture got = { AR_TOOLS_EDIT, 1, 0 };
    struct ar_call_record *c =
        ar_result_draft_begin_call(d, kind, "claude", argv, 7, &got, main_call);
    assert_non_null(c);
    return c;
}

static void test_result_draft_records_calls_and_sums_their_cost(void **state)
{
    struct ar_result_draft d;
    draft_init(&d);
    struct ar_call_record *c = begin(&d, "main", 1);
    assert_string_equal(c->argv[1], "-p");
    assert_null(c->argv[2]);
    assert_int_equal(c->exit_code, -1);
    assert_int_equal(c->waited_ms, 7);
    assert_int_equal(d.res->posture.tools, AR_TOOLS_EDIT);

    struct ar_strv denied = AR_STRV_INIT;
    ar_strv_push(&denied, "Write");
    ar_strv_push(&denied, "");
    struct ar_call_end e = { .exit_code = 0,
                             .duration_ms = 40,
                             .stderr_tail = "tail!",
                             .stderr_tail_len = 4,
                             .usage = { .input = 10, .output = 5 },
                             .cost = { 0.25, AR_COST_TABLE },
                             .model = "m1",
                             .session_id = "s1",
                             .main_call = 1,
                             .text = "first",
                             .denied = &denied };
    assert_int_equal(ar_result_draft_end_call(&d, &e), 0);
    ar_strv_finish(&denied);
    assert_string_equal(c->stderr_tail, "tail");
    assert_int_equal(d.res->n_denied, 1);
    assert_string_equal(d.res->denied[0].tool, "Write");
    assert_null(d.res->denied[0].target);

    /* A repair call's session only fills a gap; its text is the run's output. */
    begin(&d, "repair", 0);
    e = (struct ar_call_end){
        .usage = { .input = 1 }, .cost = { 0.5, AR_COST_CLI }, .session_id = "s2", .text = "second"
    };
    assert_int_equal(ar_result_draft_end_call(&d, &e), 0);
    assert_int_equal(ar_result_draft_fail_call(&d, AR_ENOJSON), 0);
    assert_int_equal(d.res->posture.tools, AR_TOOLS_EDIT);

    struct ar_result *r = ar_result_draft_detach(&d, 99);
    assert_null(d.res);
    assert_true(r->ok);
    assert_int_equal(r->duration_ms, 99);
    assert_int_equal(r->n_calls, 2);
    assert_string_equal(r->calls[1].error, "no_json");
    assert_string_equal(r->session_id, "s1");
    assert_string_equal(r->model, "m1");
    assert_string_equal(r->output, "second");
    assert_int_equal(r->usage.input, 11);
    assert_true(r->cost_usd > 0.749 && r->cost_usd < 0.751);
    assert_int_equal(r->cost_source, AR_COST_TABLE); /* not every call's was the CLI's */
    assert_false(r->cached);
    ar_result_destroy(r);
    ar_result_draft_finish(&d); /* after detach: nothing left to free */
}

static void test_result_draft_counts_a_cached_call_apart(void **state)
{
    struct ar_result_draft d;
    draft_init(&d);
    begin(&d, "main", 1);
    struct ar_call_end e = { .usage = { .input = 100, .output = 20 },
                             .cost = { 1.5, AR_COST_TABLE },
                             .cached = 1,
                             .main_call = 1 };
    assert_int_equal(ar_result_draft_end_call(&d, &e), 0);
    struct ar_result *r = ar_result_draft_detach(&d, 1);
    assert_true(r->cached);
    assert_true(r->calls[0].cached);
    assert_int_equal(r->usage.input, 0);
    assert_int_equal(r->cached_usage.input, 100);
    assert_int_equal(r->cost_source, AR_COST_CACHE);
    assert_true(r->cost_usd == 0);
    assert_int_equal(r->n_cached, 1);
    assert_int_equal(r->cached_cost_source, AR_COST_TABLE);
    assert_true(r->cached_cost_usd == 1.5);
    ar_result_destroy(r);
}

static void test_result_draft_switch_provider_forgets_the_last_call(void **state)
{
    struct ar_result_draft d;
    draft_init(&d);
    begin(&d, "main", 1);
    struct ar_call_end e = { .exit_code = 1, .model = "m", .session_id = "s", .text = "t" };
    assert_int_equal(ar_result_draft_end_call(&d, &e), 0);
    ar_result_draft_fail(&d, AR_EAUTH, "%s", "no");
    ar_result_draft_retry_after(&d, 3);
    assert_int_equal(ar_result_draft_switch_provider(&d, "codex"), 0);
    ar_result_draft_clear_error(&d);
    assert_string_equal(d.res->provider, "codex");
    assert_null(d.res->model);
    assert_null(d.res->session_id);
    assert_null(d.res->output);
    assert_int_equal(d.res->exit_code, -1);
    assert_int_equal(d.res->error.code, 0);
    assert_true(d.res->retry_after_s < 0);
    ar_result_draft_finish(&d); /* never detached: freed here */
    assert_null(d.res);
}

static void test_result_draft_accept_takes_the_document_and_names_the_fixes(void **state)
{
    struct ar_result_draft d;
    draft_init(&d);
    struct ar_json_doc doc = AR_JSON_DOC_INIT;
    assert_int_equal(ar_json_doc_parse(&doc, "{\"a\":1.50}", 10, NULL), 0);
    const char *text = doc.text;
    struct ar_extract_fixes fixes = { AR_FIX_TRAILING_COMMA | AR_FIX_COMMENTS | AR_FIX_EXTRA_VALUES,
                                      { 2, 57 },
                                      { 0, 0 } };
    assert_int_equal(ar_result_draft_accept(&d, &doc, &fixes, AR_REPAIR_LOCAL), 0);
    assert_null(doc.text);
    assert_ptr_equal(d.res->json, text); /* taken, not copied */
    assert_string_equal(d.res->json, "{\"a\":1.50}");
    assert_string_equal(d.res->local_fixes[0], ar_json_fix_name(AR_FIX_TRAILING_COMMA));
    assert_string_equal(d.res->local_fixes[1], ar_json_fix_name(AR_FIX_COMMENTS));
    assert_string_equal(d.res->local_fixes[2], "extra_values");
    assert_null(d.res->local_fixes[3]);
    /* The fix with a count and a place carries them. */
    assert_int_equal(d.res->n_fix_details, 1);
    assert_string_equal(d.res->fix_details[0].fix, "extra_values");
    assert_int_equal(d.res->fix_details[0].count, 2);
    assert_int_equal(d.res->fix_details[0].byte, 57);
    assert_int_equal(d.res->repair, AR_REPAIR_LOCAL);

    struct ar_strv details = AR_STRV_INIT;
    ar_strv_push(&details, "/a: expected string");
    assert_int_equal(ar_result_draft_take_details(&d, &details), 0);
    assert_int_equal(details.n, 0);
    assert_string_equal(d.res->error_details[0], "/a: expected string");
    ar_result_draft_finish(&d);
}

static void add_change(struct ar_git_changes *ch, const char *path, enum ar_git_op op,
                       const char *content, size_t len, int utf8)
{
    ch->v = realloc(ch->v, (ch->n + 1) * sizeof(*ch->v));
    assert_non_null(ch->v);
    struct ar_git_change *g = &ch->v[ch->n++];
    memset(g, 0, sizeof(*g));
    g->path = strdup(path);
    g->op = op;
    if (content) {
        g->has_content = 1;
        g->utf8 = (unsigned)utf8;
        g->content = malloc(len + 1);
        memcpy(g->content, content, len);
        g->content[len] = '\0';
        g->content_len = len;
    }
}

static void test_result_draft_takes_file_content_without_a_json_round_trip(void **state)
{
    struct ar_git_changes ch;
    ar_git_changes_init(&ch);
    add_change(&ch, "a.txt", AR_GIT_CREATE, "héllo", 6, 1);
    add_change(&ch, "b.bin", AR_GIT_MODIFY, "\xff\xfe\0a", 4, 0);
    add_change(&ch, "c.txt", AR_GIT_DELETE, NULL, 0, 0);
    char *a_content = ch.v[0].content;

    struct ar_result_draft d;
    draft_init(&d);
    assert_int_equal(ar_result_draft_take_files(&d, &ch, 1), 0);
    struct ar_result *r = d.res;
    assert_true(r->files_tracked);
    assert_int_equal(r->n_files, 3);
    assert_ptr_equal(r->files[0].content, a_content); /* UTF-8 text: taken, not copied */
    assert_null(ch.v[0].content);
    assert_int_equal(r->files[0].content_len, 6);
    assert_false(r->files[0].base64);
    assert_int_equal(r->files[1].op, AR_FILE_MODIFY);
    assert_true(r->files[1].base64);
    assert_string_equal(r->files[1].content, "//4AYQ==");
    assert_int_equal(r->files[1].content_len, 8);
    assert_int_equal(r->files[2].op, AR_FILE_DELETE);
    assert_null(r->files[2].content);
    ar_git_changes_finish(&ch);
    ar_result_draft_finish(&d);

    /* Without --with-content: paths and operations only. */
    ar_git_changes_init(&ch);
    add_change(&ch, "a.txt", AR_GIT_CREATE, "x", 1, 1);
    draft_init(&d);
    assert_int_equal(ar_result_draft_take_files(&d, &ch, 0), 0);
    assert_null(d.res->files[0].content);
    assert_non_null(ch.v[0].content);
    ar_git_changes_finish(&ch);
    ar_result_draft_finish(&d);
}

/* The result a batch reports when even a failed result cannot be allocated: a RunResult
 * like any other, error nomem, exit status 4. */
static void test_result_nomem_is_a_complete_failed_result(void **state)
{
    const struct ar_result *r = ar_result_nomem();
    assert_false(r->ok);
    assert_int_equal(r->error.code, AR_ENOMEM);
    assert_int_equal(ar_result_exit_status(r), 4);
    assert_null(r->local_fixes[0]);
    assert_null(r->error_details[0]);
    char *json = ar_result_to_json(r, 0);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"code\":\"nomem\""));
    assert_non_null(strstr(json, "\"ok\":false"));
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_draft_records_calls_and_sums_their_cost),
        cmocka_unit_test(test_result_nomem_is_a_complete_failed_result),
        cmocka_unit_test(test_result_draft_counts_a_cached_call_apart),
        cmocka_unit_test(test_result_draft_switch_provider_forgets_the_last_call),
        cmocka_unit_test(test_result_draft_accept_takes_the_document_and_names_the_fixes),
        cmocka_unit_test(test_result_draft_takes_file_content_without_a_json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
