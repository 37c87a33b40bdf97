/* Unit tests of src/mcp: the line framing, the message parse, the arguments' schemas and refusals,
 * and the server's dispatch driven through a pipe on a loop of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentrun/share.h"
#include "mcp/call.h"
#include "mcp/jsonrpc.h"
#include "mcp/mcp.h"

/* ---- the framing ---- */

struct got {
    char lines[16][64];
    int too_long[16];
    int n;
};

static void on_line(void *arg, const char *line, size_t len, int too_long)
{
    struct got *g = arg;
    assert_true(g->n < 16);
    g->too_long[g->n] = too_long;
    if (!too_long)
        snprintf(g->lines[g->n], sizeof(g->lines[0]), "%.*s", (int)len, line);
    g->n++;
}

static void feed(struct ar_rpc_lines *l, const char *s, struct got *g)
{
    assert_int_equal(ar_rpc_lines_feed(l, s, strlen(s), on_line, g), 0);
}

static void test_lines_split_across_reads_are_one_line(void **state)
{
    (void)state;
    struct ar_rpc_lines l;
    struct got g = { 0 };
    ar_rpc_lines_init(&l, 100);
    feed(&l, "{\"a\":", &g);
    assert_int_equal(g.n, 0);
    feed(&l, "1}\r\n{\"b\":2}\n{\"c\"", &g);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.lines[0], "{\"a\":1}");
    assert_string_equal(g.lines[1], "{\"b\":2}");
    ar_rpc_lines_end(&l, on_line, &g);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.lines[2], "{\"c\"");
    ar_rpc_lines_finish(&l);
}

static void test_lines_past_the_bound_are_reported_once_and_skipped(void **state)
{
    (void)state;
    struct ar_rpc_lines l;
    struct got g = { 0 };
    ar_rpc_lines_init(&l, 8);
    feed(&l, "12345678\n", &g); /* exactly the bound: taken */
    feed(&l, "123456789", &g);  /* one more: reported */
    feed(&l, "more and more", &g);
    feed(&l, "still\nok\n", &g);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.lines[0], "12345678");
    assert_true(g.too_long[1]);
    assert_false(g.too_long[2]);
    assert_string_equal(g.lines[2], "ok");
    assert_true(l.buf.cap <= 9 + 64); /* never grew with the long line */
    feed(&l, "toolongagain", &g);
    ar_rpc_lines_end(&l, on_line, &g); /* a dropped line is not handed on at the end */
    assert_int_equal(g.n, 4);
    assert_true(g.too_long[3]);
    ar_rpc_lines_finish(&l);
}

/* ---- the parse ---- */

static int parse(const char *s, struct ar_rpc_message *m)
{
    return ar_rpc_message_parse(s, strlen(s), m);
}

static void test_parse_tells_requests_notifications_and_responses(void **state)
{
    (void)state;
    struct ar_rpc_message m;
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &m), 0);
    assert_int_equal(m.kind, AR_RPC_REQUEST);
    assert_string_equal(m.method, "ping");
    assert_int_equal(json_integer_value(m.id), 1);
    assert_null(m.params);
    ar_rpc_message_finish(&m);
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"a\":1}}", &m), 0);
    assert_int_equal(m.kind, AR_RPC_NOTIFICATION);
    assert_non_null(m.params);
    ar_rpc_message_finish(&m);
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", &m), 0);
    assert_int_equal(m.kind, AR_RPC_RESPONSE);
    ar_rpc_message_finish(&m);
}

static void test_parse_names_the_error_each_bad_message_deserves(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        int has_id;
    } cases[] = {
        { "{", AR_RPC_PARSE_ERROR, 0 },
        { "", AR_RPC_PARSE_ERROR, 0 },
        { "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", AR_RPC_INVALID_REQUEST, 0 },
        { "\"ping\"", AR_RPC_INVALID_REQUEST, 0 },
        { "{\"id\":1,\"method\":\"ping\"}", AR_RPC_INVALID_REQUEST, 1 },
        { "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", AR_RPC_INVALID_REQUEST, 0 },
        { "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", AR_RPC_INVALID_REQUEST, 0 },
        { "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"\"}", AR_RPC_INVALID_REQUEST, 1 },
        { "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":7}", AR_RPC_INVALID_REQUEST, 1 },
        { "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"params\":3}", AR_RPC_INVALID_REQUEST,
          1 },
        { "{\"jsonrpc\":\"2.0\",\"id\":2}", AR_RPC_INVALID_REQUEST, 1 },
        { "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":1,\"error\":{}}", AR_RPC_INVALID_REQUEST, 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_rpc_message m;
        int rc = parse(cases[i].text, &m);
        if (rc != cases[i].code || (m.id != NULL) != cases[i].has_id)
            fail_msg("%s: got %d (id %s)", cases[i].text, rc, m.id ? "set" : "none");
        assert_true(m.error[0] != '\0');
        ar_rpc_message_finish(&m);
    }
}

static void test_encode_is_one_line(void **state)
{
    (void)state;
    json_t *id = json_integer(3);
    json_t *msg = ar_rpc_result_new(id, json_pack("{s:s}", "text", "a\nb"));
    size_t len;
    char *s = ar_rpc_encode(msg, &len);
    assert_string_equal(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"a\\nb\"}}\n");
    assert_int_equal(len, strlen(s));
    free(s);
    json_decref(msg);
    msg = ar_rpc_error_new(NULL, AR_RPC_PARSE_ERROR, "bad", NULL);
    s = ar_rpc_encode(msg, &len);
    assert_string_equal(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                           "\"message\":\"bad\"}}\n");
    free(s);
    json_decref(msg);
    json_decref(id);
}

/* ---- the arguments: the library's request table ---- */

/* Every tool's inputSchema is made from the library's table: a key means what it means in
 * a batch line, and the MCP cannot forget one. */
static void test_input_schemas_come_from_the_librarys_table(void **state)
{
    (void)state;
    char *run_keys = ar_run_request_schema(AR_REQUEST_RUN);
    char *tool_keys = ar_run_request_schema(AR_REQUEST_TOOL);
    json_t *want_run = json_loads(run_keys, 0, NULL), *want_tool = json_loads(tool_keys, 0, NULL);
    assert_non_null(want_run);
    assert_non_null(want_tool);
    for (size_t i = 0; ar_mcp_tools[i]; i++) {
        const struct ar_mcp_tool *t = ar_mcp_tools[i];
        char *text = ar_mcp_tool_input_schema(t);
        json_t *schema = json_loads(text, 0, NULL);
        assert_non_null(schema);
        json_t *props = json_object_get(schema, "properties");
        json_t *want = t->door == AR_REQUEST_RUN ? want_run : t->door ? want_tool : NULL;
        const char *k;
        json_t *v;
        json_object_foreach(want_tool, k, v)
        {
            /* The model keys are in every model tool, and in no other. */
            assert_int_equal(json_object_get(props, k) != NULL, want != NULL);
        }
        if (want)
            json_object_foreach(want, k, v) assert_true(json_equal(json_object_get(props, k), v));
        assert_true(json_is_false(json_object_get(schema, "additionalProperties")));
        json_decref(schema);
        free(text);
    }
    json_decref(want_run);
    json_decref(want_tool);
    free(run_keys);
    free(tool_keys);
}

/* A rule of the share that refused a call names the operator's flag. */
static void test_refusals_name_the_operators_flag(void **state)
{
    (void)state;
    static const struct {
        int code;
        const char *where, *flag;
    } cases[] = {
        { AR_EUSAGE, "dirs", "--allow-dir" },          { AR_EUSAGE, "providers", "--providers" },
        { AR_EUSAGE, "allow_edits", "--allow-edits" }, { AR_EUSAGE, "max_cost", "--max-cost" },
        { AR_EBUDGET, "budget", "--max-cost-total" },  { AR_EUSAGE, "prompt", NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_error e = AR_ERROR_INIT;
        ar_error_set(&e, cases[i].code, cases[i].where, "x");
        char buf[128];
        const char *hint = ar_mcp_refusal_hint(&e, buf, sizeof(buf));
        if (cases[i].flag)
            assert_non_null(strstr(hint, cases[i].flag));
        else
            assert_string_equal(hint, "");
    }
}

/* ---- the server, through a pipe ---- */

static void on_done(struct ar_mcp_server *s, void *arg)
{
    (void)s;
    *(int *)arg = 1;
}

/* Serves `input` (then EOF) and returns what the server wrote (free()). */
static char *serve(const char *input)
{
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    assert_int_equal((ssize_t)strlen(input), write(in[1], input, strlen(input)));
    close(in[1]);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    struct ar_mcp_options o;
    ar_mcp_options_init(&o);
    o.in_fd = in[0];
    o.out_fd = out[1];
    o.version = "test";
    o.max_message = 1024;
    /* The rules agentrun mcp makes by default: calls work under its directory. */
    struct ar_share_options so;
    ar_share_options_init(&so);
    const char *here[] = { "." };
    so.dirs = here;
    so.n_dirs = 1;
    so.no_edits = 1;
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_share_create(&so, &o.run.share, &err), 0);
    int done = 0;
    assert_int_equal(ar_mcp_server_start(&loop, &o, on_done, &done, NULL, &err), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(done);
    assert_int_equal(uv_loop_close(&loop), 0);
    ar_share_destroy(o.run.share);
    close(out[1]);
    close(in[0]);
    char *buf = calloc(1, 1 << 20);
    size_t n = 0;
    ssize_t r;
    while ((r = read(out[0], buf + n, (1 << 20) - 1 - n)) > 0)
        n += (size_t)r;
    close(out[0]);
    return buf;
}

#define INIT                                                                                   \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":" \
    "\"2025-06-18\"}}\n"

static void test_server_answers_every_request_once_in_order(void **state)
{
    (void)state;
    char *out = serve("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n" INIT
                      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"extract\",\"arguments\":{\"text\":\"x {\\\"a\\\": 1} y\"}}}\n"
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}\n"
                      "not json\n"
                      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
    const char *expect[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,",
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\",",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
        "\"{\\\"a\\\":1}\"}],\"isError\":false,\"structuredContent\":{\"json\":\"{\\\"a\\\":1}\"",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,",
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}",
    };
    char *line = out, *save = NULL;
    size_t i = 0;
    for (char *l = strtok_r(line, "\n", &save); l; l = strtok_r(NULL, "\n", &save), i++) {
        assert_true(i < sizeof(expect) / sizeof(expect[0]));
        if (strncmp(l, expect[i], strlen(expect[i])) != 0)
            fail_msg("line %zu: %s\nwanted: %s", i, l, expect[i]);
    }
    assert_int_equal(i, sizeof(expect) / sizeof(expect[0]));
    free(out);
}

static void test_server_refuses_a_model_call_outside_its_directory(void **state)
{
    (void)state;
    char *out = serve(INIT "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
                           "{\"name\":\"run\",\"arguments\":{\"prompt\":\"x\",\"cwd\":\"/\"}}}\n");
    assert_non_null(strstr(out, "\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
                                "\"'/' (/) is outside"));
    assert_non_null(strstr(out, "--allow-dir"));
    assert_non_null(strstr(out, "\"isError\":true"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_split_across_reads_are_one_line),
        cmocka_unit_test(test_lines_past_the_bound_are_reported_once_and_skipped),
        cmocka_unit_test(test_parse_tells_requests_notifications_and_responses),
        cmocka_unit_test(test_parse_names_the_error_each_bad_message_deserves),
        cmocka_unit_test(test_encode_is_one_line),
        cmocka_unit_test(test_input_schemas_come_from_the_librarys_table),
        cmocka_unit_test(test_refusals_name_the_operators_flag),
        cmocka_unit_test(test_server_answers_every_request_once_in_order),
        cmocka_unit_test(test_server_refuses_a_model_call_outside_its_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
