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
#include "mcp/output.h"
#include "mcp/tasks.h"

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

static void test_parse_reads_numbers_past_64_bits_and_answers_with_the_id(void **state)
{
    (void)state;
    struct ar_rpc_message m;
    const char *text;
    char where[64] = "";
    /* jansson alone refuses the whole line: no id to answer with. */
    assert_null(json_loads("{\"id\":18446744073709551616}", 0, NULL));
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"method\":"
                           "\"ping\",\"params\":{\"a\":[1,-1e999],\"b\":\"9e999\"}}",
                           &m),
                     0);
    assert_int_equal(m.kind, AR_RPC_REQUEST);
    assert_true(ar_rpc_is_wide(m.id, &text));
    assert_string_equal(text, "18446744073709551616");
    assert_true(ar_rpc_wide_find(m.params, where, sizeof(where)));
    assert_string_equal(where, "/a/1");
    assert_false(ar_rpc_is_wide(json_object_get(m.params, "b"), NULL)); /* a string stays */
    size_t len;
    json_t *answer = ar_rpc_result_new(m.id, json_object());
    char *line = ar_rpc_encode(answer, &len);
    assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"result\":{}}\n");
    free(line);
    json_decref(answer);
    ar_rpc_message_finish(&m);
    /* Numbers jansson holds stay what they were; a wide one is as written, sign and all. */
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":-99999999999999999999,\"method\":"
                           "\"x\",\"params\":{\"n\":9223372036854775807,\"r\":1.5e300}}",
                           &m),
                     0);
    assert_true(ar_rpc_is_wide(m.id, &text));
    assert_string_equal(text, "-99999999999999999999");
    assert_int_equal(json_integer_value(json_object_get(m.params, "n")), INT64_MAX);
    where[0] = '\0';
    assert_false(ar_rpc_wide_find(m.params, where, sizeof(where)));
    ar_rpc_message_finish(&m);
    /* A wide real is no id; a NUL escaped in a string keeps the line unread. */
    static const struct {
        const char *text;
        int code;
    } bad[] = {
        { "{\"jsonrpc\":\"2.0\",\"id\":1e999,\"method\":\"ping\"}", AR_RPC_INVALID_REQUEST },
        { "{\"jsonrpc\":\"2.0\",\"id\":1e999999999999999999999,\"method\":\"ping\"}",
          AR_RPC_INVALID_REQUEST },
        { "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"p\",\"s\":\"\\u0000\"}",
          AR_RPC_PARSE_ERROR },
        { "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"p\",}",
          AR_RPC_PARSE_ERROR },
        { "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999-1,\"method\":\"p\"}",
          AR_RPC_PARSE_ERROR },
        { "[99999999999999999999]", AR_RPC_INVALID_REQUEST },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = parse(bad[i].text, &m);
        if (rc != bad[i].code || m.id)
            fail_msg("%s: got %d (id %s)", bad[i].text, rc, m.id ? "set" : "none");
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

/* ---- the task store ---- */

static void test_a_task_is_dropped_only_once_its_call_handed_the_result_over(void **state)
{
    (void)state;
    struct ar_mcp_tasks ts = { 0 };
    struct ar_mcp_task *t = ar_mcp_task_create(&ts, 0), *kept = ar_mcp_task_create(&ts, -1);
    assert_non_null(t);
    assert_int_equal(strlen(t->id), 32);
    char id[33];
    snprintf(id, sizeof(id), "%s", t->id);
    usleep(2000); /* its ttl (0) has passed */
    ar_mcp_task_set(t, AR_TASK_CANCELLED, "cancelled by the client");
    ar_mcp_tasks_expire(&ts);
    assert_ptr_equal(ar_mcp_task_find(&ts, id), t); /* its call still runs: kept */
    json_array_append_new(t->waiters, json_integer(7));
    ar_mcp_task_over(t, json_pack("{s:b}", "isError", 0));
    assert_int_equal(t->status, AR_TASK_CANCELLED); /* a cancelled task stays cancelled */
    assert_ptr_equal(ar_mcp_task_find(&ts, id), t); /* someone waits on it: kept */
    json_array_clear(t->waiters);
    assert_null(ar_mcp_task_find(&ts, id)); /* now it goes */
    assert_int_equal(ts.n, 1);
    ar_mcp_task_over(kept, json_pack("{s:b}", "isError", 1));
    assert_int_equal(kept->status, AR_TASK_FAILED);
    ar_mcp_tasks_expire(&ts);
    assert_int_equal(ts.n, 1); /* no ttl: kept until the server ends */
    ar_mcp_tasks_finish(&ts);
}

static void test_task_pages_follow_their_cursor_and_refuse_others(void **state)
{
    (void)state;
    struct ar_mcp_tasks ts = { 0 };
    for (int i = 0; i < AR_MCP_TASKS_PAGE + 3; i++)
        assert_non_null(ar_mcp_task_create(&ts, -1));
    int bad = -1;
    json_t *page = ar_mcp_tasks_page(&ts, NULL, &bad);
    assert_int_equal(json_array_size(json_object_get(page, "tasks")), AR_MCP_TASKS_PAGE);
    json_t *next = json_object_get(page, "nextCursor");
    assert_true(json_is_string(next));
    json_t *rest = ar_mcp_tasks_page(&ts, next, &bad);
    assert_int_equal(json_array_size(json_object_get(rest, "tasks")), 3);
    assert_null(json_object_get(rest, "nextCursor"));
    const struct ar_mcp_task *oldest = ts.head;
    while (oldest->next)
        oldest = oldest->next;
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(rest, "tasks"), 2), "taskId")),
                        oldest->id); /* newest first, to the oldest */
    json_decref(page);
    json_decref(rest);
    const char *const bads[] = { "", "0", "x1", "01", "104", "18446744073709551617", "1 " };
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        json_t *c = json_string(bads[i]);
        assert_null(ar_mcp_tasks_page(&ts, c, &bad));
        if (!bad)
            fail_msg("cursor '%s' was taken", bads[i]);
        json_decref(c);
    }
    json_t *num = json_integer(3);
    assert_null(ar_mcp_tasks_page(&ts, num, &bad));
    assert_true(bad);
    json_decref(num);
    ar_mcp_tasks_finish(&ts);
}

/* ---- the output ---- */

struct out_news {
    struct ar_mcp_out *out;
    uv_pipe_t *reader; /* NULL: the client reads nothing */
    int broken, lag_on, lag_off, closed;
};

static void news_broken(void *arg)
{
    struct out_news *n = arg;
    n->broken++;
    ar_mcp_out_close(n->out);
    if (n->reader)
        uv_close((uv_handle_t *)n->reader, NULL);
}

static void news_drained(void *arg)
{
    struct out_news *n = arg;
    if (!ar_mcp_out_busy(n->out) && n->reader) {
        ar_mcp_out_close(n->out);
        uv_close((uv_handle_t *)n->reader, NULL);
    }
}

static void news_lagging(void *arg, int lagging)
{
    struct out_news *n = arg;
    if (lagging)
        n->lag_on++;
    else
        n->lag_off++;
}

static void news_closed(void *arg)
{
    ((struct out_news *)arg)->closed++;
}

static char sink[65536];

static void sink_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
    (void)h;
    (void)size;
    *buf = uv_buf_init(sink, sizeof(sink));
}

static void sink_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    (void)st;
    (void)n;
    (void)buf;
}

/* 40 messages of 60 KB: past what the output lets wait (AR_MCP_OUT_HIGH). */
static void flood(struct ar_mcp_out *o)
{
    char *x = malloc(60000);
    memset(x, 'x', 59999);
    x[59999] = '\0';
    for (int i = 0; i < 40; i++)
        ar_mcp_out_send(o, json_pack("{s:s}", "x", x), 0);
    free(x);
}

static void
test_the_output_holds_back_for_a_lagging_client_and_gives_up_on_a_silent_one(void **state)
{
    (void)state;
    for (int reads = 0; reads < 2; reads++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        uv_loop_t loop;
        assert_int_equal(uv_loop_init(&loop), 0);
        struct ar_mcp_out o;
        uv_pipe_t reader;
        memset(&o, 0, sizeof(o));
        struct out_news n = { .out = &o, .reader = reads ? &reader : NULL };
        o.broken = news_broken;
        o.drained = news_drained;
        o.lagging = news_lagging;
        o.closed = news_closed;
        o.arg = &n;
        o.wait_ms = reads ? 30000 : 100; /* a reader never stalls a whole period */
        assert_int_equal(ar_mcp_out_open(&o, &loop, p[1], NULL), 0);
        flood(&o);
        assert_int_equal(n.lag_on, 1); /* the server reads no request meanwhile */
        size_t queued = o.queued;
        ar_mcp_out_send(&o, json_pack("{s:s}", "method", "notifications/progress"), 1);
        assert_int_equal(o.queued, queued); /* progress is left out; nothing else is */
        assert_int_equal(o.left_out, 1);
        assert_true(ar_mcp_out_busy(&o));
        if (reads) {
            assert_int_equal(uv_pipe_init(&loop, &reader, 0), 0);
            assert_int_equal(uv_pipe_open(&reader, p[0]), 0);
            uv_read_start((uv_stream_t *)&reader, sink_alloc, sink_read);
        }
        uv_run(&loop, UV_RUN_DEFAULT);
        /* A client that reads gets everything, and requests again; one that reads
         * nothing is given up after wait_ms, from the loop. */
        assert_int_equal(n.broken, !reads);
        assert_int_equal(n.lag_off, reads);
        assert_int_equal(n.closed, 1);
        assert_int_equal(uv_loop_close(&loop), 0);
        if (!reads)
            close(p[0]);
        close(p[1]); /* the output wrote to a descriptor of its own */
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

static int idled;

static void on_idle(uv_idle_t *h)
{
    idled++;
    uv_close((uv_handle_t *)h, NULL);
}

static void test_a_failed_start_closes_its_handles_on_the_loop_and_never_runs_it(void **state)
{
    (void)state;
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    uv_loop_t loop;
    uv_idle_t idle;
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_idle_init(&loop, &idle);
    uv_idle_start(&idle, on_idle); /* the caller's own work on its loop */
    struct ar_mcp_options o;
    ar_mcp_options_init(&o);
    o.in_fd = in[1]; /* a pipe's write end: its handle opens, and cannot be read */
    o.out_fd = out[1];
    struct ar_error err = AR_ERROR_INIT;
    int done = 0;
    assert_int_equal(ar_mcp_server_start(&loop, &o, on_done, &done, NULL, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "cannot read the input"));
    assert_int_equal(idled, 0); /* start did not run the caller's loop */
    /* The handles it opened close on the loop, and the last frees the server. */
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(idled, 1);
    assert_false(done);
    assert_int_equal(uv_loop_close(&loop), 0);
    close(in[0]); /* in[1] went with its handle */
    close(out[0]);
    close(out[1]);
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
        cmocka_unit_test(test_parse_reads_numbers_past_64_bits_and_answers_with_the_id),
        cmocka_unit_test(test_encode_is_one_line),
        cmocka_unit_test(test_input_schemas_come_from_the_librarys_table),
        cmocka_unit_test(test_refusals_name_the_operators_flag),
        cmocka_unit_test(test_a_task_is_dropped_only_once_its_call_handed_the_result_over),
        cmocka_unit_test(test_task_pages_follow_their_cursor_and_refuse_others),
        cmocka_unit_test(
            test_the_output_holds_back_for_a_lagging_client_and_gives_up_on_a_silent_one),
        cmocka_unit_test(test_server_answers_every_request_once_in_order),
        cmocka_unit_test(test_server_refuses_a_model_call_outside_its_directory),
        cmocka_unit_test(test_a_failed_start_closes_its_handles_on_the_loop_and_never_runs_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
