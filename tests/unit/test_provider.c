/*
 * Unit tests of src/provider: every recorded fixture of the real CLIs
 * (tests/fixtures/<cli>/, see its index.json) through its adapter, the argv of
 * every option combination, codex's strict schema and resumed usage, gemini's
 * stderr errors, and hostile input (garbage, truncation, huge lines).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agentrun/error.h"
#include "contract/contract.h"
#include "provider/codex.h"
#include "provider/codex_rollout.h"
#include "provider/claude_schema.h"
#include "provider/codex_schema.h"
#include "provider/common.h"
#include "provider/gemini.h"
#include "provider/provider.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/temp.h"

#ifndef AR_SOURCE_ROOT
#define AR_SOURCE_ROOT "."
#endif

static char *slurp(const char *cli, const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/fixtures/%s/%s", AR_SOURCE_ROOT, cli, name);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (ar_file_read(path, &b, NULL) != 0) {
        ar_buf_finish(&b);
        return NULL;
    }
    ar_buf_putc(&b, '\0');
    b.len--;
    return ar_buf_detach(&b, len);
}

/* Feeds data line by line; returns how many lines said "final". tool, path: the last event. */
static int feed(const struct ar_provider *p, struct ar_unwrap *u, const char *data, size_t len,
                char **tool, char **path)
{
    int finals = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        struct ar_progress ev;
        finals += p->unwrap_line(u, data + pos, end - pos, &ev);
        if (ev.tool && tool) {
            free(*tool);
            *tool = strdup(ev.tool);
            free(*path);
            *path = ev.path ? strdup(ev.path) : NULL;
        }
        pos = end + 1;
    }
    return finals;
}

struct fx {
    const char *cli;
    const char *file; /* stdout */
    const char *stderr_file;
    int status; /* exit status */
    int term_signal;
    int captured;     /* through unwrap_captured() instead of the stream */
    const char *text; /* exact final text, or NULL for none */
    int error;
    uint64_t in, cr, cw, out;
    int has_cost;
    int has_session;
    const char *model;       /* expected model, or NULL to skip */
    const char *tool;        /* last progress event's tool, or NULL */
    const char *file_suffix; /* a reported file ends with this, or NULL */
};

static const struct fx fixtures[] = {
    /* claude */
    { "claude", "stream-text.jsonl", "stream-text.stderr", 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 42, 1, 1, "claude-opus-4-8[1m]",
      NULL, NULL },
    { "claude", "json-text.json", NULL, 0, 0, 1, "Hello! This is the mock model answering.", 0,
      1200, 300, 0, 42, 1, 1, "claude-opus-4-8[1m]", NULL, NULL },
    { "claude", "stream-error-401.jsonl", "stream-error-401.stderr", 1, 0, 0, NULL, AR_EAUTH, 0, 0,
      0, 0, 1, 1, NULL, NULL, NULL },
    /* HTTP 403 (a key without access) is an auth failure, not an API error */
    { "claude", "stream-error-403.jsonl", "stream-error-403.stderr", 1, 0, 0, NULL, AR_EAUTH, 0, 0,
      0, 0, 1, 1, NULL, NULL, NULL },
    /* no key, no login: claude's own "authentication_failed", no HTTP status */
    { "claude", "stream-not-logged-in.jsonl", "stream-not-logged-in.stderr", 1, 0, 0, NULL,
      AR_EAUTH, 0, 0, 0, 0, 1, 1, NULL, NULL, NULL },
    /* gemini ends at once with exit status 41 when it has nothing to log in with */
    { "gemini", "stream-no-key.jsonl", "stream-no-key.stderr", 41, 0, 0, NULL, AR_EAUTH, 0, 0, 0, 0,
      0, 0, NULL, NULL, NULL },
    { "gemini", "stream-no-auth-method.jsonl", "stream-no-auth-method.stderr", 41, 0, 0, NULL,
      AR_EAUTH, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL },
    { "claude", "stream-error-429.jsonl", "stream-error-429.stderr", 1, 0, 0, NULL, AR_ERATELIMIT,
      0, 0, 0, 0, 1, 1, NULL, NULL, NULL },
    { "claude", "stream-error-500.jsonl", "stream-error-500.stderr", 1, 0, 0, NULL, AR_EAPI, 0, 0,
      0, 0, 1, 1, NULL, NULL, NULL },
    { "claude", "json-error-500.json", NULL, 1, 0, 1, NULL, AR_EAPI, 0, 0, 0, 0, 1, 1, NULL, NULL,
      NULL },
    { "claude", "stream-fenced-json.jsonl", NULL, 0, 0, 0, NULL, 0, 1200, 300, 0, 42, 1, 1, NULL,
      NULL, NULL },
    /* result.usage is all zero here; modelUsage has the tokens */
    { "claude", "stream-midstream-error.jsonl", NULL, 0, 0, 0, "recovered answer", 0, 1200, 300, 0,
      42, 1, 1, NULL, NULL, NULL },
    { "claude", "stream-resume.jsonl", NULL, 0, 0, 0, "second answer", 0, 1200, 300, 0, 42, 1, 1,
      NULL, NULL, NULL },
    { "claude", "stream-resume-first.jsonl", NULL, 0, 0, 0, "first answer", 0, 900, 100, 0, 25, 1,
      1, NULL, NULL, NULL },
    /* claude 2.1.332 (recorded 2026-11-29): the resumed call's modelUsage is the session's
     * (2,100 in), model_usage_since_last_result this call's */
    { "claude", "stream-resume-since-last.jsonl", NULL, 0, 0, 0, "second answer", 0, 1200, 300, 0,
      42, 1, 1, "claude-opus-5-5", NULL, NULL },
    { "claude", "stream-resume-since-last-first.jsonl", NULL, 0, 0, 0, "first answer", 0, 900, 100,
      0, 25, 1, 1, "claude-opus-5-5", NULL, NULL },
    { "claude", "stream-schema.jsonl", NULL, 0, 0, 0, "{\"verdict\":\"ok\",\"score\":7}", 0, 900,
      100, 0, 25, 1, 1, NULL, NULL, NULL },
    /* recorded: SIGINT to the PID left only the init line and exit 0 (no
     * error_during_execution result), so without agentrun's kill it is truncated */
    { "claude", "stream-sigint.jsonl", "stream-sigint.stderr", 0, 0, 0, NULL, AR_ETRUNCATED, 0, 0,
      0, 0, 0, 1, NULL, NULL, NULL },
    /* recorded by hand from the real claude against the mock: --max-budget-usd 0.01 and a
     * 900k-token first answer; result subtype error_max_budget_usd, usage all zero */
    { "claude", "handmade-budget.jsonl", NULL, 1, 0, 0, NULL, AR_EBUDGET, 900000, 100, 0, 25, 1, 1,
      NULL, NULL, NULL },
    /* issue 56: the prompt as one client_composed stream-json message (2.1.337): the same
     * output as a text prompt's */
    { "claude", "stream-composed-text.jsonl", NULL, 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 42, 1, 1, "claude-opus-5-5",
      NULL, NULL },
    /* issue 59: claude could not start (startup_failure_reason, 2.1.337): a zeroed
     * error_during_execution result, which is no interrupt but cli_failed in claude's words */
    { "claude", "stream-startup-resume-not-found.jsonl", NULL, 1, 0, 0, NULL, AR_ECLIFAILED, 0, 0,
      0, 0, 1, 1, NULL, NULL, NULL },
    /* the same refusal from a claude that says no startup_failure_reason (2.1.332): a zeroed
     * result, no terminal_reason, no turn */
    { "claude", "stream-resume-not-found.jsonl", NULL, 1, 0, 0, NULL, AR_ECLIFAILED, 0, 0, 0, 0, 1,
      1, NULL, NULL, NULL },
    { "claude", "stream-startup-config-invalid.jsonl", NULL, 1, 0, 0, NULL, AR_ECLIFAILED, 0, 0, 0,
      0, 1, 1, NULL, NULL, NULL },
    { "claude", "stream-startup-proxy-invalid.jsonl", NULL, 1, 0, 0, NULL, AR_ECLIFAILED, 0, 0, 0,
      0, 1, 1, NULL, NULL, NULL },
    /* issue 59: a model claude has no price for (costBasis "unknown"): its costUSD is a guess
     * and not taken (the price table decides, else the cost is unknown) */
    { "claude", "stream-cost-basis-unknown.jsonl", NULL, 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 42, 0, 1, "claude-unknown-9",
      NULL, NULL },
    /* The outcomes of SIGINT to claude mid-answer (recorded; tests/e2e/test_clis.py holds the
     * real CLI to one of them): the interrupt turn and a result with terminal_reason
     * aborted_streaming (2.1.337), the interrupt turn and no result at all, exit 0 (2.1.332),
     * killed by the signal before anything was written (2.1.332) */
    { "claude", "stream-sigint-result.jsonl", NULL, 0, 0, 0, NULL, AR_EINTERRUPTED, 0, 0, 0, 0, 1,
      1, NULL, NULL, NULL },
    { "claude", "stream-sigint-no-result.jsonl", NULL, 0, 0, 0, NULL, AR_EINTERRUPTED, 0, 0, 0, 0,
      0, 1, NULL, NULL, NULL },
    { "claude", "stream-sigint-early.jsonl", NULL, 130, 2, 0, NULL, AR_EINTERRUPTED, 0, 0, 0, 0, 0,
      0, NULL, NULL, NULL },
    /* FORMATS.md's SIGINT result: subtype error_during_execution */
    { "claude", "handmade-interrupted.jsonl", NULL, 0, 0, 0, NULL, AR_EINTERRUPTED, 1200, 0, 0, 1,
      1, 1, NULL, NULL, NULL },
    /* recorded by hand from the real claude against the mock: --json-schema and five
     * StructuredOutput calls that fail its own schema check; subtype
     * error_max_structured_output_retries, no api_error_status, no result, errors[] */
    { "claude", "handmade-structured-retries.jsonl", NULL, 1, 0, 0, NULL, AR_ECONTRACT, 40, 0, 0,
      20, 1, 1, NULL, "StructuredOutput", NULL },
    { "claude", "stream-sigterm.jsonl", "stream-sigterm.stderr", 143, 0, 0, NULL, AR_EINTERRUPTED,
      0, 0, 0, 0, 0, 1, NULL, NULL, NULL },
    { "claude", "stream-tool-write.jsonl", NULL, 0, 0, 0, "I wrote hello.txt.", 0, 1900, 900, 0, 37,
      1, 1, NULL, "Write", "/hello.txt" },
    /* a Bash command: a progress event, but no file the CLI itself reports (git sees it) */
    { "claude", "stream-tool-bash.jsonl", NULL, 0, 0, 0, "I ran the command.", 0, 1900, 900, 0, 37,
      1, 1, NULL, "Bash", NULL },
    { "claude", "stream-tool-denied.jsonl", NULL, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 1, 1, NULL, NULL,
      NULL },
    { "claude", "stream-tool-bash-denied.jsonl", NULL, 0, 0, 0, "I ran the command.", 0, 0, 0, 0, 0,
      1, 1, NULL, "Bash", NULL },
    /* acceptEdits refuses a Write out of the working directory: no file reported */
    { "claude", "stream-tool-write-outside.jsonl", NULL, 0, 0, 0, "I wrote ../outside.txt.", 0, 0,
      0, 0, 0, 1, 1, NULL, "Write", NULL },
    { "claude", "stream-error-429-retry-after.jsonl", "stream-error-429-retry-after.stderr", 1, 0,
      0, NULL, AR_ERATELIMIT, 0, 0, 0, 0, 1, 1, NULL, NULL, NULL },
    /* codex */
    { "codex", "json-text.jsonl", "json-text.stderr", 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 42, 0, 1, NULL, NULL, NULL },
    /* an ephemeral call: no rollout, the model named by codex's telemetry on stderr */
    { "codex", "json-ephemeral-telemetry.jsonl", "json-ephemeral-telemetry.stderr", 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 42, 0, 1, "gpt-5.5", NULL,
      NULL },
    { "codex", "json-error-401.jsonl", "json-error-401.stderr", 1, 0, 0, NULL, AR_EAUTH, 0, 0, 0, 0,
      0, 1, NULL, NULL, NULL },
    { "codex", "json-error-403.jsonl", "json-error-403.stderr", 1, 0, 0, NULL, AR_EAUTH, 0, 0, 0, 0,
      0, 1, NULL, NULL, NULL },
    { "codex", "json-error-429.jsonl", "json-error-429.stderr", 1, 0, 0, NULL, AR_ERATELIMIT, 0, 0,
      0, 0, 0, 1, NULL, NULL, NULL },
    { "codex", "json-error-500.jsonl", "json-error-500.stderr", 1, 0, 0, NULL, AR_EAPI, 0, 0, 0, 0,
      0, 1, NULL, NULL, NULL },
    { "codex", "json-fenced-json.jsonl", NULL, 0, 0, 0, NULL, 0, 1200, 300, 0, 42, 0, 1, NULL, NULL,
      NULL },
    { "codex", "json-schema.jsonl", NULL, 0, 0, 0, "{\"verdict\": \"ok\", \"score\": 7}", 0, 1200,
      300, 0, 42, 0, 1, NULL, NULL, NULL },
    { "codex", "json-stream-failed.jsonl", "json-stream-failed.stderr", 1, 0, 0, NULL, AR_EAPI, 0,
      0, 0, 0, 0, 1, NULL, NULL, NULL },
    { "codex", "json-sigterm.jsonl", "json-sigterm.stderr", 128 + 15, 15, 0, NULL, AR_EINTERRUPTED,
      0, 0, 0, 0, 0, 1, NULL, NULL, NULL },
    { "codex", "json-tool-apply-patch.jsonl", NULL, 0, 0, 0, "I wrote hello.txt.", 0, 1900, 900, 0,
      37, 0, 1, NULL, "apply_patch", "/hello.txt" },
    { "codex", "json-tool-shell.jsonl", NULL, 0, 0, 0, "I ran the command.", 0, 1900, 900, 0, 37, 0,
      1, NULL, "shell", NULL },
    { "codex", "json-tool-rejected.jsonl", NULL, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 1, NULL, NULL,
      NULL },
    { "codex", "json-tool-write-outside.jsonl", NULL, 0, 0, 0, "I wrote ../outside.txt.", 0, 0, 0,
      0, 0, 0, 1, NULL, NULL, NULL },
    { "codex", "json-tool-shell-readonly.jsonl", "json-tool-shell-readonly.stderr", 0, 0, 0,
      "I ran the command.", 0, 0, 0, 0, 0, 0, 1, NULL, NULL, NULL },
    { "codex", "json-error-429-usage-limit.jsonl", "json-error-429-usage-limit.stderr", 1, 0, 0,
      NULL, AR_ERATELIMIT, 0, 0, 0, 0, 0, 1, NULL, NULL, NULL },
    { "codex", "json-output-last-message.jsonl", NULL, 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 42, 0, 1, NULL, NULL, NULL },
    { "codex", "json-resume-first.jsonl", NULL, 0, 0, 0, "first answer", 0, 900, 100, 0, 25, 0, 1,
      NULL, NULL, NULL },
    /* gemini */
    { "gemini", "stream-text.jsonl", "stream-text.stderr", 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 42, 0, 1, "gemini-3.8-flash",
      NULL, NULL },
    { "gemini", "json-text.json", NULL, 0, 0, 1, "Hello! This is the mock model answering.", 0,
      1200, 300, 0, 42, 0, 1, NULL, NULL, NULL },
    { "gemini", "stream-error-401.jsonl", "stream-error-401.stderr", 145, 0, 0, NULL, AR_EAUTH, 0,
      0, 0, 0, 0, 1, NULL, NULL, NULL },
    { "gemini", "stream-error-403.jsonl", "stream-error-403.stderr", 147, 0, 0, NULL, AR_EAUTH, 0,
      0, 0, 0, 0, 1, NULL, NULL, NULL },
    /* thinking: output 342 = candidates 42 + thoughts 300 (stream-json derives the thoughts
     * from total_tokens) */
    { "gemini", "stream-thoughts.jsonl", "stream-thoughts.stderr", 0, 0, 0,
      "Hello! This is the mock model answering.", 0, 1200, 300, 0, 342, 0, 1, "gemini-2.5-pro",
      NULL, NULL },
    { "gemini", "json-thoughts.json", NULL, 0, 0, 1, "Hello! This is the mock model answering.", 0,
      1200, 300, 0, 342, 0, 1, "gemini-2.5-pro", NULL, NULL },
    { "gemini", "stream-error-429.jsonl", "stream-error-429.stderr", 173, 0, 0, NULL, AR_ERATELIMIT,
      0, 0, 0, 0, 0, 1, NULL, NULL, NULL },
    { "gemini", "stream-error-500.jsonl", "stream-error-500.stderr", 244, 0, 0, NULL, AR_EAPI, 0, 0,
      0, 0, 0, 1, NULL, NULL, NULL },
    /* -o json errors: stdout empty, the error object at the end of stderr */
    { "gemini", "json-error-401.json", "json-error-401.stderr", 145, 0, 0, NULL, AR_EAUTH, 0, 0, 0,
      0, 0, 1, NULL, NULL, NULL },
    { "gemini", "json-error-500.json", "json-error-500.stderr", 244, 0, 0, NULL, AR_EAPI, 0, 0, 0,
      0, 0, 1, NULL, NULL, NULL },
    { "gemini", "stream-cut.jsonl", "stream-cut.stderr", 0, 0, 0, "partial ans", AR_EAPI, 0, 0, 0,
      0, 0, 1, NULL, NULL, NULL },
    /* refused writes report no file */
    { "gemini", "stream-tool-shell.jsonl", NULL, 0, 0, 0, "I ran the command.", 0, 1900, 900, 0, 37,
      0, 1, NULL, "run_shell_command", NULL },
    { "gemini", "stream-tool-default.jsonl", NULL, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 1, NULL,
      "write_file", NULL },
    { "gemini", "stream-tool-write-outside.jsonl", NULL, 0, 0, 0, "I wrote ../outside.txt.", 0, 0,
      0, 0, 0, 0, 1, NULL, "write_file", NULL },
    { "gemini", "stream-tool-policy-deny.jsonl", NULL, 0, 0, 0, "I wrote hello.txt.", 0, 0, 0, 0, 0,
      0, 1, NULL, "write_file", NULL },
    { "gemini", "stream-tool-shell-default.jsonl", NULL, 0, 0, 0, "I ran the command.", 0, 0, 0, 0,
      0, 0, 1, NULL, "run_shell_command", NULL },
    { "gemini", "stream-error-429-retry-after.jsonl", "stream-error-429-retry-after.stderr", 173, 0,
      0, NULL, AR_ERATELIMIT, 0, 0, 0, 0, 0, 1, NULL, NULL, NULL },
    /* loop detection: warning event, result success, no text, exit 0 */
    { "gemini", "stream-loop-detected.jsonl", "stream-loop-detected.stderr", 0, 0, 0, NULL,
      AR_EEMPTY, 0, 0, 0, 0, 0, 1, NULL, NULL, NULL },
    /* a normal answer after the loop nudge still ends with the warning and no text */
    { "gemini", "stream-loop-nudge.jsonl", NULL, 0, 0, 0, NULL, AR_EEMPTY, 0, 0, 0, 0, 0, 1, NULL,
      NULL, NULL },
    { "gemini", "stream-resume-first.jsonl", NULL, 0, 0, 0, "first answer", 0, 900, 100, 0, 25, 0,
      1, NULL, NULL, NULL },
    { "gemini", "stream-fenced-json.jsonl", NULL, 0, 0, 0, NULL, 0, 1200, 300, 0, 42, 0, 1, NULL,
      NULL, NULL },
    { "gemini", "stream-resume.jsonl", NULL, 0, 0, 0, "second answer", 0, 1200, 300, 0, 42, 0, 1,
      NULL, NULL, NULL },
    { "gemini", "stream-tool-write.jsonl", NULL, 0, 0, 0, "I wrote hello.txt.", 0, 1900, 900, 0, 37,
      0, 1, NULL, "write_file", "/hello.txt" },
    /* the group got SIGINT/SIGTERM: exit 0 and no result, so agentrun (killed) says interrupted */
    { "gemini", "stream-sigterm-group.jsonl", NULL, 0, 0, 0, NULL, AR_ETRUNCATED, 0, 0, 0, 0, 0, 1,
      NULL, NULL, NULL },
};

static void run_fixture(const struct fx *f)
{
    const struct ar_provider *p = ar_provider_find(f->cli);
    assert_non_null(p);
    size_t len = 0, elen = 0;
    char *data = slurp(f->cli, f->file, &len);
    if (!data) {
        /* Tolerated only while the recording that adds it is not in index.json yet. */
        char ipath[512];
        snprintf(ipath, sizeof(ipath), "%s/tests/fixtures/%s/index.json", AR_SOURCE_ROOT, f->cli);
        json_t *idx = json_load_file(ipath, 0, NULL);
        int listed = json_object_get(json_object_get(idx, "files"), f->file) != NULL;
        json_decref(idx);
        print_message("fixture %s/%s missing%s\n", f->cli, f->file,
                      listed ? "" : " (not indexed yet)");
        assert_false(listed);
        return;
    }
    char *err = f->stderr_file ? slurp(f->cli, f->stderr_file, &elen) : NULL;
    struct ar_reply r;
    ar_reply_init(&r);
    char *tool = NULL, *path = NULL;
    if (f->captured) {
        assert_int_equal(p->unwrap_captured(data, len, &r), 0);
        assert_ptr_equal(ar_provider_detect(data, len), p);
    } else {
        struct ar_call_spec spec = { 0 };
        struct ar_unwrap *u = p->unwrap_new(&spec);
        assert_non_null(u);
        int finals = feed(p, u, data, len, &tool, &path);
        struct ar_exit_info ex = { f->status, f->term_signal, 0, err, elen };
        p->unwrap_finish(u, &ex, &r);
        p->unwrap_free(u);
        assert_int_equal(finals, r.final_seen ? 1 : 0);
        if (len)
            assert_ptr_equal(ar_provider_detect(data, len), p);
    }
    /* No other adapter takes this CLI's output for its own. */
    for (const struct ar_provider *const *o = ar_providers(); *o && len; o++) {
        if (*o == p)
            continue;
        struct ar_reply other;
        ar_reply_init(&other);
        assert_int_equal((*o)->unwrap_captured(data, len, &other), AR_ENOJSON);
        ar_reply_finish(&other);
    }
    print_message("%s/%s: error %s text %.40s\n", f->cli, f->file, ar_strerror_name(r.error),
                  r.text ? r.text : "(null)");
    assert_int_equal(r.error, f->error);
    if (f->text) {
        assert_non_null(r.text);
        assert_string_equal(r.text, f->text);
    }
    if (!f->error)
        assert_true(r.text && *r.text && r.final_seen);
    if (f->error)
        assert_true(r.error_msg && *r.error_msg);
    if (f->in || f->out) {
        assert_true(r.has_usage);
        assert_int_equal(r.usage.input, f->in);
        assert_int_equal(r.usage.cache_read, f->cr);
        assert_int_equal(r.usage.cache_write, f->cw);
        assert_int_equal(r.usage.output, f->out);
    }
    assert_int_equal(r.has_cost, f->has_cost);
    if (f->has_cost && !f->error)
        assert_true(r.cost_usd > 0);
    if (f->has_session)
        assert_true(r.session_id && strlen(r.session_id) >= 8);
    if (f->model) {
        assert_non_null(r.model);
        assert_string_equal(r.model, f->model);
    }
    if (f->tool) {
        assert_non_null(tool);
        assert_string_equal(tool, f->tool);
        if (f->file_suffix)
            assert_non_null(path);
    }
    if (f->file_suffix) {
        assert_int_equal(r.files.n, 1);
        size_t n = strlen(r.files.v[0]), sl = strlen(f->file_suffix);
        assert_true(n >= sl && strcmp(r.files.v[0] + n - sl, f->file_suffix) == 0);
    } else {
        assert_int_equal(r.files.n, 0);
    }
    ar_reply_finish(&r);
    free(tool);
    free(path);
    free(data);
    free(err);
}

static void test_every_fixture_through_its_adapter(void **state)
{
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
        run_fixture(&fixtures[i]);
}

/* Every fixture file listed in each index.json is covered by the table or by a test below. */
static void test_fixture_index_is_covered(void **state)
{
    static const char *const elsewhere[] = {
        /* test_plain_modes_are_not_wrappers, test_codex_plain_stderr_gives_tokens_and_session */
        "plain-text.stdout",
        "plain-error-500.stdout",
        /* test_codex_resume_usage_is_per_call */
        "json-resume.jsonl",
        /* test_killed_without_final_event_is_interrupted */
        "json-sigint.jsonl",
        "stream-sigint-group.jsonl",
        "stream-sigterm-pid.jsonl",
        NULL,
    };
    const char *clis[] = { "claude", "codex", "gemini" };
    for (size_t c = 0; c < 3; c++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/tests/fixtures/%s/index.json", AR_SOURCE_ROOT, clis[c]);
        json_t *idx = json_load_file(path, 0, NULL);
        assert_non_null(idx);
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(idx, "files"), name, v)
        {
            int found = 0;
            for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]) && !found; i++)
                found = !strcmp(fixtures[i].cli, clis[c]) && !strcmp(fixtures[i].file, name);
            for (size_t i = 0; elsewhere[i] && !found; i++)
                found = !strcmp(elsewhere[i], name);
            if (!found)
                print_message("not covered: %s/%s\n", clis[c], name);
            assert_true(found);
        }
        json_decref(idx);
    }
}

static void test_killed_without_final_event_is_interrupted(void **state)
{
    const char *cases[][2] = { { "gemini", "stream-sigint-group.jsonl" },
                               { "codex", "json-sigint.jsonl" },
                               { "gemini", "stream-sigterm-pid.jsonl" },
                               { "claude", "stream-sigint.jsonl" } };
    for (size_t i = 0; i < 4; i++) {
        const struct ar_provider *p = ar_provider_find(cases[i][0]);
        size_t len;
        char *data = slurp(cases[i][0], cases[i][1], &len);
        assert_non_null(data);
        struct ar_unwrap *u = p->unwrap_new(NULL);
        assert_int_equal(feed(p, u, data, len, NULL, NULL), 0);
        struct ar_exit_info ex = { 1, 0, 1, NULL, 0 };
        struct ar_reply r;
        p->unwrap_finish(u, &ex, &r);
        p->unwrap_free(u);
        assert_int_equal(r.error, AR_EINTERRUPTED);
        assert_false(r.final_seen);
        ar_reply_finish(&r);
        free(data);
    }
}

/* The reply of one claude result line (and the init line before it). */
static void claude_reply_of(const char *result_line, int status, struct ar_reply *r)
{
    const struct ar_provider *p = ar_provider_find("claude");
    struct ar_unwrap *u = p->unwrap_new(NULL);
    static const char init[] = "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\","
                               "\"model\":\"claude-opus-5-5\"}";
    p->unwrap_line(u, init, sizeof(init) - 1, NULL);
    p->unwrap_line(u, result_line, strlen(result_line), NULL);
    struct ar_exit_info ex = { status, 0, 0, NULL, 0 };
    p->unwrap_finish(u, &ex, r);
    p->unwrap_free(u);
}

/*
 * Why claude stopped (issue 59): startup_failure_reason (2.1.3xx, with
 * CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1, which every call sets) and terminal_reason map onto
 * agentrun's error classes, in claude's words; neither reads as an interrupt any more.
 */
static void test_claude_says_why_it_stopped(void **state)
{
    (void)state;
    static const struct {
        const char *fixture, *starts;
    } recorded[] = {
        { "stream-startup-resume-not-found.jsonl",
          "No conversation found with session ID: 00000000-0000-4000-8000-000000000000" },
        { "stream-startup-config-invalid.jsonl", "Configuration error in " },
        { "stream-startup-proxy-invalid.jsonl", "Invalid proxy URL in HTTPS_PROXY" },
        { "stream-resume-not-found.jsonl",
          "No conversation found with session ID: 00000000-0000-4000-8000-000000000000" },
    };
    for (size_t i = 0; i < sizeof(recorded) / sizeof(recorded[0]); i++) {
        size_t len;
        char *data = slurp("claude", recorded[i].fixture, &len);
        assert_non_null(data);
        struct ar_reply r;
        claude_reply_of(data, 1, &r);
        assert_int_equal(r.error, AR_ECLIFAILED);
        assert_non_null(r.error_msg);
        assert_int_equal(strncmp(r.error_msg, recorded[i].starts, strlen(recorded[i].starts)), 0);
        ar_reply_finish(&r);
        free(data);
    }
#define ZEROED "\"type\":\"result\",\"session_id\":\"s-1\",\"total_cost_usd\":0,\"usage\":{}"
    static const struct {
        const char *line;
        int error;
        const char *msg; /* a part of the message */
        int transient;
    } cases[] = {
        /* the sign-in and the organization's refusals are auth; then agentrun's words */
        { "{" ZEROED ",\"subtype\":\"error_during_execution\",\"is_error\":true,"
          "\"startup_failure_reason\":\"org_signin_ended\",\"errors\":[\"Your sign-in ended\"]}",
          AR_EAUTH, "claude is not logged in", 0 },
        { "{" ZEROED ",\"subtype\":\"error_during_execution\",\"is_error\":true,"
          "\"startup_failure_reason\":\"org_config_required_unavailable\","
          "\"errors\":[\"could not fetch the organization's settings\"]}",
          AR_EAPI, "could not fetch", 0 },
        { "{" ZEROED ",\"subtype\":\"error_during_execution\",\"is_error\":true,"
          "\"startup_failure_reason\":\"a_cause_of_tomorrow\"}",
          AR_ECLIFAILED, "claude could not start", 0 },
        /* an interrupt, and what an error_during_execution says otherwise */
        { "{" ZEROED ",\"subtype\":\"error_during_execution\",\"is_error\":true,"
          "\"terminal_reason\":\"aborted_tools\",\"errors\":[\"[ede_diagnostic] x\"]}",
          AR_EINTERRUPTED, "interrupted", 0 },
        { "{" ZEROED ",\"subtype\":\"error_during_execution\",\"is_error\":true}", AR_EINTERRUPTED,
          "interrupted", 0 },
        { "{" ZEROED ",\"subtype\":\"error_during_execution\",\"is_error\":true,"
          "\"terminal_reason\":\"model_error\",\"errors\":[\"the model broke\"]}",
          AR_EAPI, "the model broke", 0 },
        /* is_error without an HTTP status: the terminal reason says what failed */
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":null,"
          "\"terminal_reason\":\"prompt_too_long\",\"result\":\"Prompt is too long\"}",
          AR_EAPI, "Prompt is too long", 0 },
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":true,"
          "\"terminal_reason\":\"blocking_limit\"}",
          AR_EAPI, "no longer fits the model's context", 0 },
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":true,"
          "\"terminal_reason\":\"malformed_tool_use_exhausted\"}",
          AR_ECLIFAILED, "tool calls could not be read", 0 },
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":true,"
          "\"terminal_reason\":\"hook_stopped\",\"result\":\"Stopped by a hook\"}",
          AR_ECLIFAILED, "Stopped by a hook", 0 },
        /* an HTTP status still classifies an api_error (terminal_reason api_error) */
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":529,"
          "\"terminal_reason\":\"api_error\",\"result\":\"API Error: 529 Overloaded\"}",
          AR_EAPI, "529", 1 },
        /* a failure by its reason that claude did not flag */
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":false,\"result\":\"\","
          "\"terminal_reason\":\"turn_setup_failed\"}",
          AR_ECLIFAILED, "could not set the turn up", 0 },
        /* completed is no failure; a reason not failed by claude's own list neither */
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
          "\"terminal_reason\":\"completed\"}",
          0, NULL, 0 },
        { "{" ZEROED ",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
          "\"terminal_reason\":\"a_reason_of_tomorrow\"}",
          0, NULL, 0 },
    };
#undef ZEROED
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_reply r;
        claude_reply_of(cases[i].line, cases[i].error ? 1 : 0, &r);
        if (r.error != cases[i].error)
            fail_msg("case %zu: %s, want %s (%s)", i, ar_strerror_name(r.error),
                     ar_strerror_name(cases[i].error), r.error_msg ? r.error_msg : "");
        if (cases[i].msg && !strstr(r.error_msg ? r.error_msg : "", cases[i].msg))
            fail_msg("case %zu: message '%s' lacks '%s'", i, r.error_msg, cases[i].msg);
        assert_int_equal(r.transient, cases[i].transient);
        ar_reply_finish(&r);
    }
}

/* costBasis "unknown" (2.1.3xx): claude's figure is its default model's rate applied to a
 * model it has no price for, a guess, whether in modelUsage or in a resumed call's
 * model_usage_since_last_result; a priced one ("list") is taken. */
static void test_claude_cost_basis_unknown_is_not_a_price(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int has_cost;
    } cases[] = {
        { "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
          "\"total_cost_usd\":0.5,\"modelUsage\":{\"m\":{\"inputTokens\":10,\"costUSD\":0.5,"
          "\"costBasis\":\"unknown\"}}}",
          0 },
        { "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
          "\"total_cost_usd\":0.6,\"modelUsage\":{\"a\":{\"inputTokens\":10,\"costUSD\":0.5,"
          "\"costBasis\":\"list\"},\"b\":{\"inputTokens\":1,\"costUSD\":0.1,\"costBasis\":"
          "\"unknown\"}}}",
          0 },
        { "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
          "\"total_cost_usd\":0.9,\"modelUsage\":{\"m\":{\"inputTokens\":99}},"
          "\"model_usage_since_last_result\":{\"m\":{\"inputTokens\":10,\"costUSD\":0.5,"
          "\"costBasis\":\"unknown\"}}}",
          0 },
        { "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
          "\"total_cost_usd\":0.5,\"modelUsage\":{\"m\":{\"inputTokens\":10,\"costUSD\":0.5,"
          "\"costBasis\":\"list\"}}}",
          1 },
        { "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\","
          "\"total_cost_usd\":0.5,\"modelUsage\":{\"m\":{\"inputTokens\":10,\"costUSD\":0.5,"
          "\"costBasis\":\"managed\"}}}",
          1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_reply r;
        claude_reply_of(cases[i].line, 0, &r);
        assert_int_equal(r.error, 0);
        assert_int_equal(r.has_cost, cases[i].has_cost);
        ar_reply_finish(&r);
    }
}

/* claude giving up on its own schema check (error_max_structured_output_retries) is the
 * model failing the contract, not an API failure: contract, with claude's own words
 * from errors[] as the message. */
static void test_claude_giving_up_is_not_an_api_error(void **state)
{
    const struct ar_provider *p = ar_provider_find("claude");
    size_t len;
    char *data = slurp("claude", "handmade-structured-retries.jsonl", &len);
    assert_non_null(data);
    struct ar_call_spec spec = { 0 };
    struct ar_unwrap *u = p->unwrap_new(&spec);
    assert_non_null(u);
    assert_int_equal(feed(p, u, data, len, NULL, NULL), 1);
    struct ar_exit_info ex = { 1, 0, 0, NULL, 0 };
    struct ar_reply r;
    ar_reply_init(&r);
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, AR_ECONTRACT);
    assert_non_null(r.error_msg);
    assert_string_equal(r.error_msg, "Failed to provide valid structured output after 5 attempts");
    assert_true(r.has_cost);
    /* What the model last answered stays the output (a review salvages its findings). */
    assert_string_equal(r.text, "{\"answer\":0,\"unit\":\"miles\"}");
    ar_reply_finish(&r);
    free(data);
}

/* 401 and 403 both mean the key cannot be used: auth (the user must act), never api_error
 * (which a fallback provider or a retry would be tried on). */
static void test_http_403_is_auth_like_401(void **state)
{
    (void)state;
    assert_int_equal(ar_pv_classify(403, NULL), AR_EAUTH);
    assert_int_equal(ar_pv_classify(403, "Project does not have access to model"), AR_EAUTH);
    assert_int_equal(ar_pv_classify(0, "unexpected status 403 Forbidden: no access"), AR_EAUTH);
    assert_int_equal(ar_pv_classify(0, "{\"error\":{\"code\":403,\"message\":\"no\"}}"), AR_EAUTH);
    assert_int_equal(ar_pv_classify(401, NULL), AR_EAUTH);
    /* neighbours stay what they are */
    assert_int_equal(ar_pv_classify(404, NULL), AR_EAPI);
    assert_int_equal(ar_pv_classify(400, NULL), AR_EAPI);
    assert_int_equal(ar_pv_classify(0, "status 4030 items"), AR_EAPI);
}

/* Not logged in is `auth`, whatever word the CLI uses (claude's "Not logged in · Please
 * run /login", no HTTP status; gemini's reason before its advice), and agentrun's own words
 * say what to do headless: the variable, the command, the docs section; never the CLI's
 * interactive /login, never agentrun's private settings directory. */
static void test_not_logged_in_is_auth_in_agentruns_words(void **state)
{
    (void)state;
    static const struct {
        const char *cli, *out, *err;
        int status;
        const char *msg;
    } cases[] = {
        { "claude", "stream-not-logged-in.jsonl", NULL, 1,
          "claude is not logged in: set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN (a "
          "long-lived token from 'claude setup-token') (docs/providers.md#logging-in-auth)" },
        { "gemini", "stream-no-key.jsonl", "stream-no-key.stderr", 41,
          "gemini is not logged in: set GEMINI_API_KEY, or use Vertex AI" },
        { "gemini", "stream-no-auth-method.jsonl", "stream-no-auth-method.stderr", 41,
          "(docs/providers.md#logging-in-auth)" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct ar_provider *p = ar_provider_find(cases[i].cli);
        size_t olen = 0, elen = 0;
        char *out = slurp(cases[i].cli, cases[i].out, &olen);
        char *err = cases[i].err ? slurp(cases[i].cli, cases[i].err, &elen) : NULL;
        assert_non_null(out);
        struct ar_call_spec spec = { 0 };
        struct ar_unwrap *u = p->unwrap_new(&spec);
        feed(p, u, out, olen, NULL, NULL);
        struct ar_exit_info ex = { cases[i].status, 0, 0, err, elen };
        struct ar_reply r;
        ar_reply_init(&r);
        p->unwrap_finish(u, &ex, &r);
        p->unwrap_free(u);
        assert_int_equal(r.error, AR_EAUTH);
        assert_non_null(r.error_msg);
        assert_non_null(strstr(r.error_msg, cases[i].msg));
        assert_null(strstr(r.error_msg, "/login"));
        assert_null(strstr(r.error_msg, "settings.json"));
        assert_null(strstr(r.error_msg, "agentrun/"));
        assert_int_equal(r.error_msg[strlen(r.error_msg) - 1], ')'); /* whole, not cut */
        ar_reply_finish(&r);
        free(out);
        free(err);
    }
    /* A gemini exit status of 41 is not an HTTP status & 255 (that range is 144..343). */
    const struct ar_provider *g = ar_provider_find("gemini");
    struct ar_unwrap *u = g->unwrap_new(NULL);
    struct ar_exit_info ex = { 41, 0, 0, "", 0 };
    struct ar_reply r;
    ar_reply_init(&r);
    g->unwrap_finish(u, &ex, &r);
    g->unwrap_free(u);
    assert_int_equal(r.error, AR_EAUTH);
    assert_string_equal(r.error_msg,
                        "gemini is not logged in: set GEMINI_API_KEY, or use Vertex AI "
                        "(GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT "
                        "and GOOGLE_CLOUD_LOCATION, or GOOGLE_API_KEY) "
                        "(docs/providers.md#logging-in-auth)");
    ar_reply_finish(&r);
}

/* A claude result without modelUsage (older CLIs, some error results): usage maps field by
 * field, cache reads and cache writes kept apart. */
static void test_claude_usage_without_model_usage(void **state)
{
    (void)state;
    const struct ar_provider *p = ar_provider_find("claude");
    static const char line[] =
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
        "\"result\":\"hi\",\"session_id\":\"a12149e5-57b9-4101-8896-0e79223f8ed2\","
        "\"total_cost_usd\":0.01,\"usage\":{\"input_tokens\":100,"
        "\"cache_read_input_tokens\":30,\"cache_creation_input_tokens\":20,"
        "\"output_tokens\":5}}";
    struct ar_call_spec spec = { 0 };
    struct ar_unwrap *u = p->unwrap_new(&spec);
    assert_int_equal(feed(p, u, line, sizeof(line) - 1, NULL, NULL), 1);
    struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
    struct ar_reply r;
    ar_reply_init(&r);
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, 0);
    assert_true(r.has_usage);
    assert_int_equal(r.usage.input, 100);
    assert_int_equal(r.usage.cache_read, 30);
    assert_int_equal(r.usage.cache_write, 20);
    assert_int_equal(r.usage.output, 5);
    ar_reply_finish(&r);
}

/* modelUsage lists every model the run used (the main one and, e.g., a small one for side
 * tasks): tokens are the sum over all of them, and the dearest names the model. */
static void test_claude_model_usage_sums_every_model(void **state)
{
    (void)state;
    const struct ar_provider *p = ar_provider_find("claude");
    static const char line[] =
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
        "\"result\":\"hi\",\"session_id\":\"a12149e5-57b9-4101-8896-0e79223f8ed2\","
        "\"total_cost_usd\":0.05,\"usage\":{\"input_tokens\":1,\"output_tokens\":1},"
        "\"modelUsage\":{\"claude-opus-4-8\":{\"inputTokens\":1000,\"outputTokens\":50,"
        "\"cacheReadInputTokens\":300,\"cacheCreationInputTokens\":10,\"costUSD\":0.04},"
        "\"claude-haiku-4-5\":{\"inputTokens\":200,\"outputTokens\":7,"
        "\"cacheReadInputTokens\":5,\"cacheCreationInputTokens\":1,\"costUSD\":0.01}}}";
    struct ar_call_spec spec = { 0 };
    struct ar_unwrap *u = p->unwrap_new(&spec);
    assert_int_equal(feed(p, u, line, sizeof(line) - 1, NULL, NULL), 1);
    struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
    struct ar_reply r;
    ar_reply_init(&r);
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, 0);
    assert_int_equal(r.usage.input, 1200);
    assert_int_equal(r.usage.output, 57);
    assert_int_equal(r.usage.cache_read, 305);
    assert_int_equal(r.usage.cache_write, 11);
    assert_non_null(r.model);
    assert_string_equal(r.model, "claude-opus-4-8");
    ar_reply_finish(&r);
}

/* gemini's thinking tokens are output (billed at the output rate) and reasoning. */
static void test_gemini_thoughts_count_as_output_and_reasoning(void **state)
{
    (void)state;
    const struct ar_provider *p = ar_provider_find("gemini");
    const char *files[] = { "stream-thoughts.jsonl", "json-thoughts.json" };
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        char *data = slurp("gemini", files[i], &len);
        assert_non_null(data);
        struct ar_reply r;
        ar_reply_init(&r);
        if (i == 1) {
            assert_int_equal(p->unwrap_captured(data, len, &r), 0);
        } else {
            struct ar_call_spec spec = { 0 };
            struct ar_unwrap *u = p->unwrap_new(&spec);
            assert_int_equal(feed(p, u, data, len, NULL, NULL), 1);
            struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
            p->unwrap_finish(u, &ex, &r);
            p->unwrap_free(u);
        }
        assert_int_equal(r.error, 0);
        assert_int_equal(r.usage.output, 342);
        assert_int_equal(r.usage.reasoning, 300);
        ar_reply_finish(&r);
        free(data);
    }
}

static void test_plain_modes_are_not_wrappers(void **state)
{
    const char *clis[] = { "claude", "codex", "gemini" };
    const char *files[] = { "plain-text.stdout", "plain-error-500.stdout" };
    for (size_t c = 0; c < 3; c++) {
        for (size_t f = 0; f < 2; f++) {
            size_t len;
            char *data = slurp(clis[c], files[f], &len);
            assert_non_null(data);
            struct ar_reply r;
            ar_reply_init(&r);
            for (const struct ar_provider *const *p = ar_providers(); *p; p++)
                assert_int_equal((*p)->unwrap_captured(data, len, &r), AR_ENOJSON);
            assert_null(ar_provider_detect(data, len));
            ar_reply_finish(&r);
            free(data);
        }
    }
}

static void test_codex_plain_stderr_gives_tokens_and_session(void **state)
{
    const struct ar_provider *p = ar_provider_find("codex");
    size_t len;
    char *err = slurp("codex", "plain-text.stderr", &len);
    assert_non_null(err);
    struct ar_reply r;
    ar_reply_init(&r);
    assert_int_equal(p->unwrap_stderr(err, len, &r), 0);
    assert_true(r.has_usage && r.usage_from_stderr);
    assert_int_equal(r.usage.input, 1242); /* "tokens used\n1,242": uncached input + output */
    assert_non_null(r.session_id);
    assert_int_equal(r.error, 0);
    ar_reply_finish(&r);
    free(err);

    err = slurp("codex", "plain-error-500.stderr", &len);
    assert_non_null(err);
    ar_reply_init(&r);
    assert_int_equal(p->unwrap_stderr(err, len, &r), 0);
    assert_int_equal(r.error, AR_EAPI);
    ar_reply_finish(&r);
    free(err);
    ar_reply_init(&r);
    assert_int_equal(p->unwrap_stderr("nothing here\n", 13, &r), AR_ENOJSON);
    ar_reply_finish(&r);
}

static void test_gemini_stderr_error_object_is_the_last_one(void **state)
{
    const char *err = "Warning: 256-color support not detected\n"
                      "{\n  \"error\": {\"message\": \"old\", \"code\": 500}\n}\n"
                      "[STARTUP] noise {not json\n"
                      "{\n  \"session_id\": \"s-1\",\n  \"error\": {\n    \"type\": \"Error\",\n"
                      "    \"message\": \"quota\",\n    \"code\": 429\n  }\n}";
    size_t n = 0;
    const char *o = ar_gemini_find_error(err, strlen(err), &n);
    assert_non_null(o);
    assert_true(strstr(o, "s-1") != NULL && n > 0);
    const struct ar_provider *p = ar_provider_find("gemini");
    struct ar_reply r;
    ar_reply_init(&r);
    assert_int_equal(p->unwrap_stderr(err, strlen(err), &r), 0);
    assert_int_equal(r.error, AR_ERATELIMIT);
    assert_string_equal(r.session_id, "s-1");
    ar_reply_finish(&r);
    assert_null(ar_gemini_find_error("no json at all\n{broken", 23, NULL));

    /* No JSON on stderr: the exit status is the HTTP status & 255. */
    static const struct {
        int status, error;
    } map[] = { { 145, AR_EAUTH }, { 173, AR_ERATELIMIT }, { 244, AR_EAPI }, { 1, AR_ECLIFAILED } };
    for (size_t i = 0; i < 4; i++) {
        struct ar_unwrap *u = p->unwrap_new(NULL);
        struct ar_exit_info ex = { map[i].status, 0, 0, "noise\n", 6 };
        p->unwrap_finish(u, &ex, &r);
        p->unwrap_free(u);
        assert_int_equal(r.error, map[i].error);
        ar_reply_finish(&r);
    }
}

static void test_gemini_loop_detection_is_empty(void **state)
{
    const char *lines[] = {
        "{\"type\":\"init\",\"timestamp\":\"t\",\"session_id\":\"g-1\",\"model\":\"auto\"}",
        "{\"type\":\"error\",\"timestamp\":\"t\",\"severity\":\"warning\",\"message\":\"Loop "
        "detected, stopping execution\"}",
        "{\"type\":\"result\",\"timestamp\":\"t\",\"status\":\"success\",\"stats\":{"
        "\"total_tokens\":0,\"input_tokens\":0,\"output_tokens\":0,\"cached\":0}}",
    };
    const struct ar_provider *p = ar_provider_find("gemini");
    struct ar_unwrap *u = p->unwrap_new(NULL);
    assert_int_equal(p->unwrap_line(u, lines[0], strlen(lines[0]), NULL), 0);
    assert_int_equal(p->unwrap_line(u, lines[1], strlen(lines[1]), NULL), 0);
    assert_int_equal(p->unwrap_line(u, lines[2], strlen(lines[2]), NULL), 1);
    struct ar_reply r;
    struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, AR_EEMPTY);
    assert_true(r.final_seen);
    assert_non_null(strstr(r.error_msg, "Loop detected"));
    ar_reply_finish(&r);
}

static void test_garbage_and_huge_lines_are_skipped(void **state)
{
    size_t big = (size_t)3 << 20;
    char *huge = malloc(big + 1);
    memset(huge, 'x', big);
    huge[0] = '{';
    huge[big] = '\0';
    const char *junk[] = {
        "",         "not json",           "{\"type\":", "[1,2,3]", "{\"type\":42}",
        "\x01\x02", "{\"no_type\":true}", "null"
    };
    for (const struct ar_provider *const *pp = ar_providers(); *pp; pp++) {
        const struct ar_provider *p = *pp;
        struct ar_unwrap *u = p->unwrap_new(NULL);
        for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
            assert_int_equal(p->unwrap_line(u, junk[i], strlen(junk[i]), NULL), 0);
        assert_int_equal(p->unwrap_line(u, huge, big, NULL), 0);
        struct ar_reply r;
        struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
        p->unwrap_finish(u, &ex, &r);
        p->unwrap_free(u);
        assert_int_equal(r.error, AR_ETRUNCATED);
        assert_false(r.final_seen);
        ar_reply_finish(&r);

        /* Non-zero exit, no final event: cli_failed with stderr's last line. */
        u = p->unwrap_new(NULL);
        struct ar_exit_info ex1 = { 1, 0, 0, "warming up\nError: bad flag --x\n\n", 32 };
        p->unwrap_finish(u, &ex1, &r);
        p->unwrap_free(u);
        assert_int_equal(r.error, AR_ECLIFAILED);
        assert_string_equal(r.error_msg, "Error: bad flag --x");
        ar_reply_finish(&r);
        assert_int_equal(p->unwrap_captured("garbage\n", 8, &r), AR_ENOJSON);
    }
    free(huge);
}

static void test_token_counts_past_uint64_saturate(void **state)
{
    /* UBSan in tests/fuzz/fuzz_provider: a real token count too large for
     * uint64_t was converted as is, which is undefined behaviour. */
    static const char out[] = "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                              "\"result\":\"hi\",\"usage\":{\"input_tokens\":1e300,"
                              "\"output_tokens\":2.5,\"cache_read_input_tokens\":-1e300}}";
    const struct ar_provider *p = ar_provider_find("claude");
    struct ar_reply r;
    ar_reply_init(&r);
    assert_int_equal(p->unwrap_captured(out, sizeof(out) - 1, &r), 0);
    assert_true(r.has_usage);
    assert_true(r.usage.input == UINT64_MAX);
    assert_int_equal(r.usage.output, 2);
    assert_int_equal(r.usage.cache_read, 0);
    ar_reply_finish(&r);
}

static void test_truncated_stream_is_truncated(void **state)
{
    /* The claude text fixture without its result line. */
    size_t len;
    char *data = slurp("claude", "stream-text.jsonl", &len);
    assert_non_null(data);
    char *last = strstr(data, "{\"type\":\"result\"");
    assert_non_null(last);
    const struct ar_provider *p = ar_provider_find("claude");
    struct ar_unwrap *u = p->unwrap_new(NULL);
    assert_int_equal(feed(p, u, data, (size_t)(last - data), NULL, NULL), 0);
    struct ar_reply r;
    struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, AR_ETRUNCATED);
    assert_non_null(r.session_id);
    ar_reply_finish(&r);
    free(data);
}

/* ---- argv ---- */

static int argv_has(const struct ar_call_setup *s, const char *a)
{
    for (size_t i = 0; i < s->argv.n; i++)
        if (!strcmp(s->argv.v[i], a))
            return 1;
    return 0;
}

static int argv_pair(const struct ar_call_setup *s, const char *a, const char *b)
{
    for (size_t i = 0; i + 1 < s->argv.n; i++)
        if (!strcmp(s->argv.v[i], a) && !strcmp(s->argv.v[i + 1], b))
            return 1;
    return 0;
}

static int env_has(const struct ar_call_setup *s, const char *a)
{
    for (size_t i = 0; i < s->env.n; i++)
        if (!strcmp(s->env.v[i], a))
            return 1;
    return 0;
}

static void test_argv_for_every_option_combination(void **state)
{
    static const char *schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
                                "\"string\",\"minLength\":1}},\"required\":[\"a\"]}";
    for (const struct ar_provider *const *pp = ar_providers(); *pp; pp++) {
        const struct ar_provider *p = *pp;
        for (int combo = 0; combo < 32; combo++) {
            struct ar_call_spec spec = { 0 };
            spec.model = combo & 1 ? "some-model" : NULL;
            spec.schema = combo & 2 ? schema : NULL;
            spec.resume = combo & 4 ? "sess-123" : NULL;
            spec.allow_edits = !!(combo & 8);
            spec.in_git_repo = !!(combo & 16);
            spec.max_budget_usd = combo & 1 ? 0.5 : 0;
            spec.cwd = "/tmp";
            struct ar_call_setup s;
            ar_call_setup_init(&s);
            struct ar_error err = AR_ERROR_INIT;
            assert_int_equal(p->prepare(&spec, &s, &err), 0);
            assert_string_equal(s.argv.v[0], ar_provider_bin(p));
            assert_null(s.argv.v[s.argv.n]);
            /* Never the prompt, never a permission bypass. */
            for (size_t i = 0; i < s.argv.n; i++) {
                assert_null(strstr(s.argv.v[i], "PROMPT"));
                assert_null(strstr(s.argv.v[i], "dangerously"));
                assert_true(strcmp(s.argv.v[i], "--yolo") != 0);
            }
            const char *name = p->name;
            if (!strcmp(name, "claude")) {
                assert_true(argv_has(&s, "-p") && argv_pair(&s, "--output-format", "stream-json"));
                assert_true(argv_has(&s, "--verbose"));
                assert_true(argv_pair(&s, "--permission-mode",
                                      spec.allow_edits ? "acceptEdits" : "default"));
                assert_int_equal(argv_has(&s, "--json-schema"), spec.schema != NULL);
                assert_int_equal(argv_pair(&s, "--resume", "sess-123"), spec.resume != NULL);
                assert_int_equal(argv_pair(&s, "--model", "some-model"), spec.model != NULL);
                assert_int_equal(argv_pair(&s, "--max-budget-usd", "0.5000"),
                                 spec.max_budget_usd > 0);
                /* A read or edit call's system prompt file. */
                assert_int_equal(s.tmpfiles.n, 1);
                assert_true(argv_pair(&s, "--system-prompt-file", s.tmpfiles.v[0]));
            } else if (!strcmp(name, "codex")) {
                assert_string_equal(s.argv.v[1], "exec");
                assert_true(argv_has(&s, "--json"));
                assert_string_equal(s.argv.v[s.argv.n - 1], "-");
                assert_true(
                    argv_pair(&s, "--sandbox", spec.allow_edits ? "workspace-write" : "read-only"));
                assert_int_equal(argv_has(&s, "--skip-git-repo-check"), !spec.in_git_repo);
                assert_int_equal(argv_pair(&s, "resume", "sess-123"), spec.resume != NULL);
                if (spec.resume) /* exec's options come before the subcommand */
                    assert_string_equal(s.argv.v[s.argv.n - 3], "resume");
                assert_int_equal(argv_pair(&s, "--model", "some-model"), spec.model != NULL);
                assert_int_equal(argv_has(&s, "--output-schema"), spec.schema != NULL);
                /* The instructions file, and the strict schema's. */
                assert_int_equal(s.tmpfiles.n, 1 + (spec.schema != NULL));
                for (size_t i = 0; i < s.tmpfiles.n; i++) {
                    struct stat st;
                    assert_int_equal(stat(s.tmpfiles.v[i], &st), 0);
                    assert_int_equal(st.st_mode & 0777, 0600);
                }
                if (spec.schema)
                    assert_true(argv_pair(&s, "--output-schema", s.tmpfiles.v[1]));
            } else {
                assert_true(argv_pair(&s, "-o", "stream-json"));
                assert_true(
                    argv_pair(&s, "--approval-mode", spec.allow_edits ? "auto_edit" : "default"));
                assert_int_equal(argv_pair(&s, "--resume", "sess-123"), spec.resume != NULL);
                /* Always a model: gemini's "auto" would make a routing request first. */
                assert_true(argv_pair(&s, "-m", spec.model ? "some-model" : "pro"));
                assert_false(argv_has(&s, "-p"));
                assert_true(env_has(&s, "GEMINI_CLI_TRUST_WORKSPACE=false"));
                assert_int_equal(s.tmpdirs.n, 0);
            }
            char *tmp = s.tmpfiles.n ? strdup(s.tmpfiles.v[0]) : NULL;
            ar_call_setup_finish(&s);
            if (tmp) {
                assert_int_equal(access(tmp, F_OK), -1); /* unlinked */
                free(tmp);
            }
        }
    }
}

static void prepare_posture(const struct ar_provider *p, enum ar_tools tools, int trust,
                            int no_session, struct ar_call_setup *s)
{
    struct ar_call_spec spec = { 0 };
    spec.tools = tools;
    spec.allow_edits = tools == AR_TOOLS_EDIT;
    spec.trust_project = trust;
    spec.no_session = no_session;
    spec.in_git_repo = 1;
    spec.cwd = "/tmp";
    ar_call_setup_init(s);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(p->prepare(&spec, s, &err), 0);
    assert_int_equal(s->project_config, trust);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

static int argv_index(const struct ar_call_setup *s, const char *a)
{
    for (size_t i = 0; i < s->argv.n; i++)
        if (!strcmp(s->argv.v[i], a))
            return (int)i;
    return -1;
}

/* DESIGN §4b for claude: the checkout's settings (hooks, .mcp.json, CLAUDE.md) are never a
 * setting source unless trusted; a text call has no tools, no MCP, no hooks and no CLAUDE.md;
 * every call has agentrun's own system prompt; never --bare (it drops OAuth logins). */
static void test_claude_posture_argv(void **state)
{
    const struct ar_provider *p = ar_provider_find("claude");
    struct ar_call_setup s;
    static const char *const tools[] = { [AR_TOOLS_NONE] = "",
                                         [AR_TOOLS_READ] = "Read,Grep,Glob",
                                         [AR_TOOLS_EDIT] =
                                             "Read,Grep,Glob,Edit,Write,NotebookEdit" };
    for (int t = AR_TOOLS_NONE; t <= AR_TOOLS_EDIT; t++) {
        for (int trust = 0; trust < 2; trust++) {
            prepare_posture(p, (enum ar_tools)t, trust, t == AR_TOOLS_NONE, &s);
            int text = t == AR_TOOLS_NONE;
            assert_true(argv_pair(&s, "--tools", tools[t]));
            assert_int_equal(argv_pair(&s, "--setting-sources", "user"), !trust);
            assert_int_equal(argv_has(&s, "--strict-mcp-config"), text && !trust);
            assert_int_equal(argv_pair(&s, "--settings", "{\"disableAllHooks\":true}"),
                             text && !trust);
            assert_int_equal(env_has(&s, "CLAUDE_CODE_DISABLE_CLAUDE_MDS=1"), text && !trust);
            /* agentrun's system prompt in every call, the same from call to call: nothing
             * of this machine, checkout or prompt in it (the attribution block, memory
             * paths, git status). */
            int sp = argv_index(&s, "--system-prompt");
            int spf = argv_index(&s, "--system-prompt-file");
            assert_int_equal(sp > 0, text);
            assert_int_equal(spf > 0, !text);
            assert_int_equal(s.tmpfiles.n, (size_t)!text);
            char *sys = text ? strdup(s.argv.v[sp + 1]) : read_text(s.argv.v[spf + 1]);
            /* Only its last line names the place: claude's tools want absolute paths. */
            char *where = strstr(sys, "\nWorking directory: ");
            assert_int_equal(where != NULL, !text);
            if (where) {
                assert_string_equal(where, "\nWorking directory: /tmp\n");
                *where = '\0';
            }
            assert_null(strstr(sys, "/tmp"));
            assert_int_equal(strstr(sys, "coding agent") != NULL, !text);
            free(sys);
            assert_true(env_has(&s, "CLAUDE_CODE_ATTRIBUTION_HEADER=0"));
            assert_true(env_has(&s, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1"));
            assert_true(env_has(&s, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1"));
            assert_int_equal(argv_has(&s, "--no-session-persistence"), text);
            assert_false(argv_has(&s, "--bare"));
            assert_int_equal(s.context_files, trust);
            ar_call_setup_finish(&s);
        }
    }
    /* A bare spec (tools AUTO) is read-only, or editing with allow_edits. */
    struct ar_call_spec spec = { 0 };
    ar_call_setup_init(&s);
    assert_int_equal(p->prepare(&spec, &s, NULL), 0);
    assert_true(argv_pair(&s, "--tools", "Read,Grep,Glob"));
    ar_call_setup_finish(&s);
    /* A resumed session is never dropped. */
    spec.tools = AR_TOOLS_NONE;
    spec.no_session = 1;
    spec.resume = "sess-1";
    ar_call_setup_init(&s);
    assert_int_equal(p->prepare(&spec, &s, NULL), 0);
    assert_false(argv_has(&s, "--no-session-persistence"));
    ar_call_setup_finish(&s);
}

/* The -c value that starts with `prefix`, or NULL. */
static const char *codex_config(const struct ar_call_setup *s, const char *prefix)
{
    for (size_t i = 0; i + 1 < s->argv.n; i++)
        if (!strcmp(s->argv.v[i], "-c") && !strncmp(s->argv.v[i + 1], prefix, strlen(prefix)))
            return s->argv.v[i + 1];
    return NULL;
}

/* DESIGN §4b for codex: the checkout's trust is agentrun's per-call word (a directory the
 * user once trusted is untrusted here), AGENTS.md stays out, a text call has its shell,
 * image, MCP and search tools off, and every call has agentrun's instructions file. */
static void test_codex_posture_argv(void **state)
{
    const struct ar_provider *p = ar_provider_find("codex");
    char dir[] = "/tmp/agentrun-codex-home-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cfg[128];
    snprintf(cfg, sizeof(cfg), "%s/config.toml", dir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fputs("model = \"x\"\n[mcp_servers.docs]\ncommand = \"d\"\n  [mcp_servers.docs.env]\n"
          "[mcp_servers.\"odd name\"]\n[mcp_servers.git-tool]\n",
          f);
    fclose(f);
    setenv("CODEX_HOME", dir, 1);
    struct ar_call_setup s;
    for (int t = AR_TOOLS_NONE; t <= AR_TOOLS_EDIT; t++) {
        for (int trust = 0; trust < 2; trust++) {
            prepare_posture(p, (enum ar_tools)t, trust, t == AR_TOOLS_NONE, &s);
            int text = t == AR_TOOLS_NONE;
            const char *projects = codex_config(&s, "projects={\"/tmp\"={trust_level=");
            assert_non_null(projects);
            assert_non_null(strstr(projects, trust ? "\"trusted\"" : "\"untrusted\""));
            assert_int_equal(codex_config(&s, "project_doc_max_bytes=0") != NULL, !trust);
            assert_non_null(codex_config(&s, "web_search=\"disabled\""));
            assert_true(argv_pair(&s, "--disable", "multi_agent"));
            assert_int_equal(argv_pair(&s, "--disable", "shell_tool"), text);
            assert_int_equal(argv_pair(&s, "--disable", "hooks"), text && !trust);
            assert_int_equal(codex_config(&s, "mcp_servers.docs.enabled=false") != NULL,
                             text && !trust);
            assert_int_equal(codex_config(&s, "mcp_servers.git-tool.enabled=false") != NULL,
                             text && !trust);
            assert_null(codex_config(&s, "mcp_servers.odd"));
            assert_int_equal(argv_has(&s, "--ephemeral"), text);
            /* agentrun's instructions replace codex's in every posture: a short one in a
             * text call, a headless agent's in read and edit calls. */
            const char *mi = codex_config(&s, "model_instructions_file=");
            assert_non_null(mi);
            assert_int_equal(s.tmpfiles.n, 1);
            assert_non_null(strstr(mi, s.tmpfiles.v[0]));
            FILE *fi = fopen(s.tmpfiles.v[0], "r");
            assert_non_null(fi);
            char head[256] = "";
            assert_non_null(fgets(head, sizeof(head), fi));
            fclose(fi);
            assert_int_equal(strstr(head, "coding agent") != NULL, !text);
            assert_non_null(codex_config(&s, "skills.bundled.enabled=false"));
            /* Every option comes before the prompt's "-". */
            assert_true(argv_index(&s, "--sandbox") < (int)s.argv.n - 1);
            assert_string_equal(s.argv.v[s.argv.n - 1], "-");
            assert_int_equal(s.context_files, trust);
            ar_call_setup_finish(&s);
        }
    }
    unsetenv("CODEX_HOME");
    unlink(cfg);
    rmdir(dir);
}

/* A file at root/rel (directories made as needed). */
static void put_file(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (char *c = path + strlen(root) + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            mkdir(path, 0700);
            *c = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* codex loads the checkout's skills whatever its trust (the list, and a "$name" in the
 * prompt pastes the body): an untrusted call turns each off by its path, for every skills
 * root from the repository's top down to the cwd, as codex walks them. */
static void test_codex_posture_turns_the_checkouts_skills_off(void **state)
{
    (void)state;
    const struct ar_provider *p = ar_provider_find("codex");
    char root[] = "/tmp/agentrun-test-skills-XXXXXX";
    assert_non_null(mkdtemp(root));
    char *real_root = realpath(root, NULL);
    static const char skill[] = "---\nname: s\ndescription: d\n---\nbody\n";
    put_file(root, ".git/HEAD", "ref: refs/heads/main\n");
    put_file(root, ".codex/skills/a/SKILL.md", skill);
    put_file(root, ".agents/skills/deep/x/SKILL.md", skill);
    put_file(root, ".agents/skills/.hidden/SKILL.md", skill);
    put_file(root, "sub/.agents/skills/b/SKILL.md", skill);
    put_file(root, "elsewhere/l/SKILL.md", skill);
    put_file(root, "other/.codex/skills/c/SKILL.md", skill);
    /* Six directories below its root: the depth codex still loads (issue 50). */
    put_file(root, ".codex/skills/1/2/3/4/5/6/SKILL.md", skill);
    char link[512], cwd[512];
    snprintf(link, sizeof(link), "%s/sub/.agents/skills/linked", root);
    assert_int_equal(symlink("../../../elsewhere", link), 0);
    snprintf(cwd, sizeof(cwd), "%s/sub", root);
    static const char *const off[] = { ".codex/skills/a/SKILL.md", ".agents/skills/deep/x/SKILL.md",
                                       "sub/.agents/skills/b/SKILL.md", "elsewhere/l/SKILL.md",
                                       ".codex/skills/1/2/3/4/5/6/SKILL.md" };
    static const char *const on[] = { ".agents/skills/.hidden/SKILL.md",
                                      "other/.codex/skills/c/SKILL.md" };
    for (int t = AR_TOOLS_NONE; t <= AR_TOOLS_EDIT; t++) {
        for (int trust = 0; trust < 2; trust++) {
            struct ar_call_spec spec = { 0 };
            spec.tools = (enum ar_tools)t;
            spec.allow_edits = t == AR_TOOLS_EDIT;
            spec.trust_project = trust;
            spec.cwd = cwd;
            struct ar_call_setup st;
            ar_call_setup_init(&st);
            struct ar_error err = AR_ERROR_INIT;
            assert_int_equal(p->prepare(&spec, &st, &err), 0);
            const char *cfg = codex_config(&st, "skills.config=[");
            assert_int_equal(cfg != NULL, !trust);
            assert_int_equal(codex_config(&st, "project_root_markers=[\".git\"]") != NULL, !trust);
            for (size_t i = 0; cfg && i < sizeof(off) / sizeof(off[0]); i++) {
                char want[600];
                snprintf(want, sizeof(want), "{path=\"%s/%s\",enabled=false}", real_root, off[i]);
                assert_non_null(strstr(cfg, want));
            }
            for (size_t i = 0; cfg && i < sizeof(on) / sizeof(on[0]); i++)
                assert_null(strstr(cfg, on[i]));
            ar_call_setup_finish(&st);
        }
    }
    ar_remove_tree(root);
    free(real_root);
}

/* A "$name" pastes the body of a skill codex loaded, the user's too (issue 56): an untrusted
 * text call turns the user's skills ($CODEX_HOME/skills, ~/.agents/skills) off by path as
 * well as the checkout's; a read or edit call keeps them, as it keeps their MCP servers. */
static void test_codex_text_calls_turn_the_users_skills_off(void **state)
{
    (void)state;
    const struct ar_provider *p = ar_provider_find("codex");
    char root[] = "/tmp/agentrun-test-user-skills-XXXXXX";
    assert_non_null(mkdtemp(root));
    char *real = realpath(root, NULL);
    static const char skill[] = "---\nname: s\ndescription: d\n---\nbody\n";
    put_file(root, "work/.git/HEAD", "ref: refs/heads/main\n");
    put_file(root, "codex-home/skills/mine/SKILL.md", skill);
    put_file(root, "codex-home/skills/.system/bundled/SKILL.md", skill);
    put_file(root, "home/.agents/skills/also-mine/SKILL.md", skill);
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char *old_codex = getenv("CODEX_HOME") ? strdup(getenv("CODEX_HOME")) : NULL;
    char dir[600], cwd[600];
    snprintf(dir, sizeof(dir), "%s/codex-home", root);
    setenv("CODEX_HOME", dir, 1);
    snprintf(dir, sizeof(dir), "%s/home", root);
    setenv("HOME", dir, 1);
    snprintf(cwd, sizeof(cwd), "%s/work", root);
    for (int t = AR_TOOLS_NONE; t <= AR_TOOLS_EDIT; t++) {
        for (int trust = 0; trust < 2; trust++) {
            struct ar_call_spec spec = { 0 };
            spec.tools = (enum ar_tools)t;
            spec.allow_edits = t == AR_TOOLS_EDIT;
            spec.trust_project = trust;
            spec.cwd = cwd;
            struct ar_call_setup st;
            ar_call_setup_init(&st);
            struct ar_error err = AR_ERROR_INIT;
            assert_int_equal(p->prepare(&spec, &st, &err), 0);
            const char *cfg = codex_config(&st, "skills.config=[");
            int off = t == AR_TOOLS_NONE && !trust;
            char want[700];
            snprintf(want, sizeof(want),
                     "{path=\"%s/codex-home/skills/mine/SKILL.md\",enabled=false}", real);
            assert_int_equal(cfg && strstr(cfg, want), off);
            snprintf(want, sizeof(want),
                     "{path=\"%s/home/.agents/skills/also-mine/SKILL.md\",enabled=false}", real);
            assert_int_equal(cfg && strstr(cfg, want), off);
            /* The bundled ones are off by their own switch (skills.bundled.enabled). */
            assert_true(!cfg || !strstr(cfg, ".system"));
            ar_call_setup_finish(&st);
        }
    }
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    if (old_codex)
        setenv("CODEX_HOME", old_codex, 1);
    else
        unsetenv("CODEX_HOME");
    free(old_home);
    free(old_codex);
    ar_remove_tree(root);
    free(real);
}

/* codex walks each skills root on its own budget: directories that fill one root leave the
 * next root's skills loaded, so they are still turned off; a checkout past agentrun's own
 * budget is refused untrusted, never half walked. */
static void test_codex_posture_walks_every_skills_root(void **state)
{
    (void)state;
    const struct ar_provider *p = ar_provider_find("codex");
    char root[] = "/tmp/agentrun-test-skills-XXXXXX";
    assert_non_null(mkdtemp(root));
    char *real_root = realpath(root, NULL);
    put_file(root, ".git/HEAD", "ref: refs/heads/main\n");
    put_file(root, ".codex/skills/pad/keep", "");
    put_file(root, ".agents/skills/second/SKILL.md", "---\nname: s\ndescription: d\n---\n");
    char dir[512];
    for (int i = 0; i < 8100; i++) {
        snprintf(dir, sizeof(dir), "%s/.codex/skills/pad/d%04d", root, i);
        assert_int_equal(mkdir(dir, 0700), 0);
        if (i != 2100)
            continue;
        /* More directories than codex walks in one root, fewer than agentrun's budget. */
        struct ar_call_spec spec = { 0 };
        spec.cwd = root;
        struct ar_call_setup st;
        ar_call_setup_init(&st);
        struct ar_error err = AR_ERROR_INIT;
        assert_int_equal(p->prepare(&spec, &st, &err), 0);
        const char *cfg = codex_config(&st, "skills.config=[");
        assert_non_null(cfg);
        char want[600];
        snprintf(want, sizeof(want), "{path=\"%s/.agents/skills/second/SKILL.md\",enabled=false}",
                 real_root);
        assert_non_null(strstr(cfg, want));
        ar_call_setup_finish(&st);
    }
    for (int trust = 0; trust < 2; trust++) {
        struct ar_call_spec spec = { 0 };
        spec.cwd = root;
        spec.trust_project = trust;
        struct ar_call_setup st;
        ar_call_setup_init(&st);
        struct ar_error err = AR_ERROR_INIT;
        assert_int_equal(p->prepare(&spec, &st, &err), trust ? 0 : AR_EUSAGE);
        if (!trust)
            assert_non_null(strstr(err.msg, "--trust-project"));
        ar_call_setup_finish(&st);
    }
    ar_remove_tree(root);
    free(real_root);
}

static void test_codex_mcp_names(void **state)
{
    static const char toml[] = "[mcp_servers.a]\n\t[mcp_servers.a.env]\n[mcp_servers.b_2]\n"
                               "[mcp_servers.]\n[mcp_servers.c d]\nx = \"[mcp_servers.e]\"\n"
                               "[mcp_servers.f]";
    struct ar_strv names = AR_STRV_INIT;
    assert_int_equal(ar_codex_mcp_names(toml, sizeof(toml) - 1, &names), 0);
    assert_int_equal(names.n, 3);
    assert_string_equal(names.v[0], "a");
    assert_string_equal(names.v[1], "b_2");
    assert_string_equal(names.v[2], "f");
    ar_strv_finish(&names);
}

static const char *env_value(const struct ar_call_setup *s, const char *name);

/* codex is asked for its telemetry (the model's only witness) exactly where no rollout
 * file will name the model: an ephemeral call that asked for none; the user's RUST_LOG
 * is kept. A telemetry line is never the message of a failure. */
static void test_codex_telemetry_only_where_no_rollout(void **state)
{
    (void)state;
    const struct ar_provider *p = ar_provider_find("codex");
    static const struct {
        int no_session;
        const char *model, *resume, *user_log, *want;
    } cases[] = {
        { 1, NULL, NULL, NULL, "error,codex_otel.trace_safe=info" },
        { 1, NULL, NULL, "warn,codex_core=debug",
          "warn,codex_core=debug,codex_otel.trace_safe=info" },
        { 1, "gpt-5.5", NULL, NULL, NULL },
        { 0, NULL, NULL, NULL, NULL },
        { 1, NULL, "01a201a4-e6d7-7c03-9d63-000000000001", NULL, NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].user_log)
            setenv("RUST_LOG", cases[i].user_log, 1);
        else
            unsetenv("RUST_LOG");
        struct ar_call_spec spec = { 0 };
        spec.tools = AR_TOOLS_NONE;
        spec.no_session = cases[i].no_session;
        spec.model = cases[i].model;
        spec.resume = cases[i].resume;
        spec.in_git_repo = 1;
        struct ar_call_setup setup;
        ar_call_setup_init(&setup);
        struct ar_error err = AR_ERROR_INIT;
        assert_int_equal(p->prepare(&spec, &setup, &err), 0);
        const char *log = env_value(&setup, "RUST_LOG");
        if (cases[i].want)
            assert_string_equal(log, cases[i].want);
        else
            assert_null(log);
        ar_call_setup_finish(&setup);
    }
    unsetenv("RUST_LOG");
    static const char err_text[] =
        "Reading prompt from stdin...\nthread panicked: boom\n"
        "2026-11-25T19:44:27Z  INFO codex_otel.trace_safe: event.name=\"codex.api_request\" "
        "model=gpt-5.5 slug=gpt-5.5\n";
    struct ar_unwrap *u = p->unwrap_new(NULL);
    struct ar_exit_info ex = { 101, 0, 0, err_text, sizeof(err_text) - 1 };
    struct ar_reply r;
    ar_reply_init(&r);
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, AR_ECLIFAILED);
    assert_string_equal(r.error_msg, "thread panicked: boom");
    assert_string_equal(r.model, "gpt-5.5");
    ar_reply_finish(&r);
}

/* codex's config.toml as far as logging in goes: the active profile's provider, that
 * provider's key variable, quotes, comments, and tables that only look alike. */
static void test_codex_config_provider_and_key(void **state)
{
    static const char toml[] =
        "model_provider = \"openai\"\nprofile = 'work' # the active one\n"
        "cli_auth_credentials_store = \"keyring\"\n"
        "[profiles.home]\nmodel_provider = \"other\"\n"
        "[profiles.work]\nmodel_provider = \"my-p\"\n"
        "[model_providers.other]\nenv_key = \"OTHER_KEY\"\n"
        "[model_providers.\"my-p\"]\n  env_key = \"MY_KEY\"   # comment\n"
        "requires_openai_auth = false\n[[array.of.tables]]\nenv_key = \"NO\"\n";
    struct ar_codex_config c;
    ar_codex_config_read(toml, sizeof(toml) - 1, &c);
    assert_string_equal(c.provider, "my-p");
    assert_true(c.provider_defined);
    assert_string_equal(c.env_key, "MY_KEY");
    assert_false(c.requires_openai_auth);
    assert_string_equal(c.credentials_store, "keyring");
    ar_codex_config_finish(&c);
    /* Nothing said: OpenAI's own login. */
    ar_codex_config_read("x = [1, 2]\n[tui]\nmodel_provider = \"not-top\"\n", 44, &c);
    assert_string_equal(c.provider, "openai");
    assert_null(c.env_key);
    assert_false(c.provider_defined);
    ar_codex_config_finish(&c);
    (void)state;
}

static const char *env_value(const struct ar_call_setup *s, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < s->env.n; i++)
        if (!strncmp(s->env.v[i], name, n) && s->env.v[i][n] == '=')
            return s->env.v[i] + n + 1;
    return NULL;
}

/* The private home gemini gets for tools/trust, prepared once (its path: malloc'd). */
static char *gemini_home_of(enum ar_tools t, int trust)
{
    struct ar_call_setup s;
    prepare_posture(ar_provider_find("gemini"), t, trust, 0, &s);
    char *priv = strdup(env_value(&s, "GEMINI_CLI_HOME"));
    ar_call_setup_finish(&s);
    return priv;
}

/* A temporary user home (the template dir, "/tmp/…-XXXXXX") whose ~/.gemini/settings.json
 * holds settings, made $HOME. Returns the previous $HOME (malloc'd, or NULL) for
 * user_home_leave(). */
static char *user_home_enter(char *dir, const char *settings)
{
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/.gemini", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/.gemini/settings.json", dir);
    write_text(path, settings);
    char *old = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", dir, 1);
    unsetenv("GEMINI_CLI_HOME");
    return old;
}

/* Gives $HOME back and removes dir. */
static void user_home_leave(const char *dir, char *old)
{
    if (old) {
        setenv("HOME", old, 1);
        free(old);
    }
    char rm[300];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
}

/* DESIGN §4b for gemini: the workspace is untrusted (no .gemini/settings.json, GEMINI.md,
 * hooks or MCP of the checkout) without being fatal, through a private home whose settings
 * are the user's plus agentrun's overlay, whose other entries link to the user's, and whose
 * system prompt is agentrun's. The home of a posture is the same for every call (gemini puts
 * its path in the session context that opens each request), and outlives the call. */
static void test_gemini_posture_private_home(void **state)
{
    const struct ar_provider *p = ar_provider_find("gemini");
    char home[] = "/tmp/agentrun-gemini-user-XXXXXX";
    /* gemini allows comments; the user's auth choice must survive. */
    char *old_home = user_home_enter(
        home, "{\n  // mine\n  \"security\": {\"auth\": {\"selectedType\": "
              "\"gemini-api-key\"}},\n  \"tools\": {\"core\": [\"run_shell_command\"]}\n}\n");
    char path[512], cache[300];
    snprintf(path, sizeof(path), "%s/.gemini/GEMINI.md", home);
    write_text(path, "");
    snprintf(cache, sizeof(cache), "%s/agentrun/gemini-home/", getenv("XDG_CACHE_HOME"));
    char *homes[AR_TOOLS_EDIT + 1] = { NULL };
    for (int t = AR_TOOLS_NONE; t <= AR_TOOLS_EDIT; t++) {
        for (int trust = 0; trust < 2; trust++) {
            struct ar_call_setup s;
            prepare_posture(p, (enum ar_tools)t, trust, 0, &s);
            int text = t == AR_TOOLS_NONE;
            assert_true(env_has(&s, trust ? "GEMINI_CLI_TRUST_WORKSPACE=true"
                                          : "GEMINI_CLI_TRUST_WORKSPACE=false"));
            assert_true(argv_pair(&s, "-m", "pro"));
            const char *priv = env_value(&s, "GEMINI_CLI_HOME");
            assert_non_null(priv);
            assert_int_equal(strncmp(priv, cache, strlen(cache)), 0);
            assert_int_equal(s.tmpdirs.n, 0);
            /* agentrun's system prompt, in the home: a short one, or a headless agent's. */
            snprintf(path, sizeof(path), "%s/system.md", priv);
            assert_string_equal(env_value(&s, "GEMINI_SYSTEM_MD"), path);
            char *sys = read_text(path);
            assert_int_equal(strstr(sys, "${AvailableTools}") != NULL, !text);
            /* The skills gemini loads are listed only where the checkout's are trusted. */
            assert_int_equal(strstr(sys, "${AgentSkills}") != NULL, !text && trust);
            free(sys);
            snprintf(path, sizeof(path), "%s/.gemini/settings.json", priv);
            json_t *set = json_load_file(path, 0, NULL);
            assert_non_null(set);
            assert_string_equal(
                json_string_value(json_object_get(
                    json_object_get(json_object_get(set, "security"), "auth"), "selectedType")),
                "gemini-api-key");
            assert_true(json_is_false(json_object_get(
                json_object_get(json_object_get(set, "security"), "folderTrust"), "enabled")));
            json_t *core = json_object_get(json_object_get(set, "tools"), "core");
            assert_int_equal(json_array_size(core), text ? 0 : t == AR_TOOLS_READ ? 5 : 7);
            for (size_t i = 0; i < json_array_size(core); i++)
                assert_string_not_equal(json_string_value(json_array_get(core, i)),
                                        "run_shell_command");
            /* A text call does not list the checkout's files. */
            assert_int_equal(json_is_false(json_object_get(json_object_get(set, "context"),
                                                           "includeDirectoryTree")),
                             text);
            json_decref(set);
            /* The user's GEMINI.md is home-level context: read and edit calls keep it. */
            struct stat st;
            snprintf(path, sizeof(path), "%s/.gemini/GEMINI.md", priv);
            assert_int_equal(lstat(path, &st) == 0, !text);
            snprintf(path, sizeof(path), "%s/.gemini/tmp", priv);
            assert_int_equal(lstat(path, &st), 0);
            assert_true(S_ISLNK(st.st_mode));
            char *dir = strdup(priv);
            ar_call_setup_finish(&s);
            assert_int_equal(access(dir, F_OK), 0); /* kept for the next call */
            /* The next call of the posture gets the same home. */
            char *again = gemini_home_of((enum ar_tools)t, trust);
            assert_string_equal(again, dir);
            free(again);
            if (!trust)
                homes[t] = dir;
            else
                free(dir);
        }
    }
    /* One home per posture. */
    assert_string_not_equal(homes[AR_TOOLS_NONE], homes[AR_TOOLS_READ]);
    assert_string_not_equal(homes[AR_TOOLS_READ], homes[AR_TOOLS_EDIT]);
    /* Trusted and untrusted calls of a posture never share a home, nor its system.md: calls
     * at the same time would start with each other's system prompt (issue 50). */
    for (int t = AR_TOOLS_NONE; t <= AR_TOOLS_EDIT; t++) {
        char *trusted = gemini_home_of((enum ar_tools)t, 1);
        assert_string_not_equal(trusted, homes[t]);
        snprintf(path, sizeof(path), "%s/system.md", homes[t]);
        char *sys = read_text(path);
        assert_null(strstr(sys, "${AgentSkills}"));
        free(sys);
        free(trusted);
    }
    /* What the user adds or removes in ~/.gemini reaches the home; a settings.json someone
     * changed there is written again. */
    snprintf(path, sizeof(path), "%s/.gemini/extensions", home);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/.gemini/GEMINI.md", home);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof(path), "%s/.gemini/settings.json", homes[AR_TOOLS_READ]);
    write_text(path, "{}");
    char *again = gemini_home_of(AR_TOOLS_READ, 0);
    assert_string_equal(again, homes[AR_TOOLS_READ]);
    free(again);
    struct stat st;
    snprintf(path, sizeof(path), "%s/.gemini/extensions", homes[AR_TOOLS_READ]);
    assert_int_equal(lstat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/.gemini/GEMINI.md", homes[AR_TOOLS_READ]);
    assert_int_equal(lstat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/.gemini/settings.json", homes[AR_TOOLS_READ]);
    json_t *set = json_load_file(path, 0, NULL);
    assert_non_null(json_object_get(set, "security"));
    json_decref(set);
    /* New settings make a new home; one nobody used for a week is removed then. */
    struct timespec old[2] = { { time(NULL) - 8 * 24 * 3600, 0 },
                               { time(NULL) - 8 * 24 * 3600, 0 } };
    assert_int_equal(utimensat(AT_FDCWD, homes[AR_TOOLS_EDIT], old, 0), 0);
    snprintf(path, sizeof(path), "%s/.gemini/settings.json", home);
    write_text(path, "{\"security\": {\"auth\": {\"selectedType\": \"oauth-personal\"}}}");
    again = gemini_home_of(AR_TOOLS_READ, 0);
    assert_string_not_equal(again, homes[AR_TOOLS_READ]);
    assert_int_equal(access(homes[AR_TOOLS_READ], F_OK), 0);
    assert_int_equal(access(homes[AR_TOOLS_EDIT], F_OK), -1);
    free(again);
    /* The user's own directory is intact (links were removed, not followed). */
    snprintf(path, sizeof(path), "%s/.gemini/extensions", home);
    assert_int_equal(access(path, F_OK), 0);
    for (int i = 0; i <= AR_TOOLS_EDIT; i++)
        free(homes[i]);
    user_home_leave(home, old_home);
}

/* gemini's model routing: a call never leaves the model to "auto", which would make gemini
 * send a classifier request to a second model first; what the user named stays. */
static void test_gemini_model_is_never_routed(void **state)
{
    json_t *none = json_object();
    json_t *flash = json_pack("{s:{s:s}}", "model", "name", "gemini-2.5-flash");
    json_t *autos = json_pack("{s:{s:s}}", "model", "name", "auto-gemini-2.5");
    assert_string_equal(ar_gemini_model(NULL, none), "pro");
    assert_string_equal(ar_gemini_model("", none), "pro");
    assert_string_equal(ar_gemini_model("auto", none), "pro");
    assert_string_equal(ar_gemini_model("auto-gemini-3", none), "gemini-3-pro-preview");
    assert_string_equal(ar_gemini_model("auto-gemini-2.5", none), "gemini-2.5-pro");
    assert_string_equal(ar_gemini_model("gemini-2.5-flash", none), "gemini-2.5-flash");
    assert_string_equal(ar_gemini_model("flash", none), "flash");
    /* The user's settings.json model.name, unless -m (or $GEMINI_MODEL) names one. */
    assert_string_equal(ar_gemini_model(NULL, flash), "gemini-2.5-flash");
    assert_string_equal(ar_gemini_model(NULL, autos), "gemini-2.5-pro");
    assert_string_equal(ar_gemini_model("gemini-3-pro-preview", flash), "gemini-3-pro-preview");
    json_decref(none);
    json_decref(flash);
    json_decref(autos);
    /* $GEMINI_MODEL is gemini's own variable: a fallback provider reads it too. */
    const struct ar_provider *p = ar_provider_find("gemini");
    setenv("GEMINI_MODEL", "gemini-2.5-flash", 1);
    unsetenv("AGENTRUN_MODEL");
    assert_string_equal(ar_provider_model(p, NULL), "gemini-2.5-flash");
    unsetenv("GEMINI_MODEL");
    /* A model from settings.json goes into argv: one that would be a flag is refused. */
    char home[] = "/tmp/agentrun-gemini-model-XXXXXX";
    char *old_home = user_home_enter(home, "{\"model\": {\"name\": \"--yolo\"}}");
    struct ar_call_spec spec = { 0 };
    struct ar_call_setup s;
    ar_call_setup_init(&s);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(p->prepare(&spec, &s, &err), AR_EUSAGE);
    assert_false(argv_has(&s, "--yolo"));
    ar_call_setup_finish(&s);
    user_home_leave(home, old_home);
}

static void test_bin_override_and_bad_schema(void **state)
{
    const struct ar_provider *p = ar_provider_find("claude");
    setenv("AGENTRUN_CLAUDE_BIN", "/opt/x/claude-wrapper", 1);
    assert_string_equal(ar_provider_bin(p), "/opt/x/claude-wrapper");
    assert_false(ar_provider_installed(p));
    unsetenv("AGENTRUN_CLAUDE_BIN");
    assert_string_equal(ar_provider_bin(p), "claude");
    struct ar_call_spec spec = { 0 };
    spec.schema = "{not json";
    struct ar_call_setup s;
    ar_call_setup_init(&s);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(p->prepare(&spec, &s, &err), AR_EUSAGE);
    ar_call_setup_finish(&s);
    /* an array contract, and a union that may be an array (route.md's shape):
     * no native schema for claude or codex */
    static const char *const non_objects[] = {
        "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
        "{\"type\":[\"array\",\"object\"],\"items\":{\"type\":\"object\"},"
        "\"properties\":{\"name\":{\"type\":\"string\"}}}",
    };
    for (int i = 0; i < 4; i++) {
        spec.schema = non_objects[i / 2];
        p = ar_provider_find(i % 2 ? "codex" : "claude");
        ar_call_setup_init(&s);
        assert_int_equal(p->prepare(&spec, &s, &err), 0);
        assert_false(argv_has(&s, "--json-schema"));
        assert_false(argv_has(&s, "--output-schema"));
        assert_int_equal(s.tmpfiles.n, 1); /* only the system prompt's file */
        ar_call_setup_finish(&s);
    }
}

/* Each CLI gets the contract in its own dialect: claude >= 2.1.205 refuses a "$schema" of
 * draft 2020-12 or 2019-09, so no "$schema" reaches it (a property named "$schema" and a
 * const value holding one are data and stay); codex's strict copy has no "$schema" either and
 * gives a const or enum without a type the type of its values. */
static void test_contract_dialect_per_cli(void **state)
{
    (void)state;
    const char *contract =
        "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
        "\"properties\":{\"$schema\":{\"type\":\"string\"},\"kind\":{\"const\":\"review\"},"
        "\"n\":{\"enum\":[1,2.5]},\"items\":{\"type\":\"array\",\"items\":{"
        "\"$schema\":\"https://json-schema.org/draft/2019-09/schema\",\"type\":\"object\","
        "\"properties\":{\"c\":{\"const\":{\"$schema\":1}}}}}},\"required\":[\"kind\"]}";
    const struct ar_provider *p = ar_provider_find("claude");
    struct ar_call_spec spec = { 0 };
    spec.schema = contract;
    struct ar_call_setup s;
    ar_call_setup_init(&s);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(p->prepare(&spec, &s, &err), 0);
    const char *native = NULL;
    for (size_t i = 0; i + 1 < s.argv.n; i++)
        if (!strcmp(s.argv.v[i], "--json-schema"))
            native = s.argv.v[i + 1];
    assert_non_null(native);
    assert_null(strstr(native, "draft"));
    json_t *j = json_loads(native, 0, NULL);
    assert_null(json_object_get(j, "$schema"));
    json_t *props = json_object_get(j, "properties");
    assert_non_null(json_object_get(props, "$schema"));
    json_t *c = json_object_get(
        json_object_get(json_object_get(json_object_get(props, "items"), "items"), "properties"),
        "c");
    assert_non_null(json_object_get(json_object_get(c, "const"), "$schema"));
    json_decref(j);
    ar_call_setup_finish(&s);

    char *strict = ar_codex_strict_schema(contract);
    assert_non_null(strict);
    assert_null(strstr(strict, "draft"));
    j = json_loads(strict, 0, NULL);
    props = json_object_get(j, "properties");
    json_t *kind = json_object_get(props, "kind"); /* required: a typed const */
    assert_string_equal(json_string_value(json_object_get(kind, "type")), "string");
    assert_string_equal(json_string_value(json_object_get(kind, "const")), "review");
    json_t *n = json_object_get(props, "n"); /* optional: number or null, enum with null */
    assert_string_equal(json_string_value(json_array_get(json_object_get(n, "type"), 0)), "number");
    assert_int_equal(json_array_size(json_object_get(n, "enum")), 3);
    json_decref(j);
    free(strict);
    /* an optional const becomes an enum that may be null */
    strict =
        ar_codex_strict_schema("{\"type\":\"object\",\"properties\":{\"k\":{\"const\":true}}}");
    assert_string_equal(strict, "{\"type\":\"object\",\"properties\":{\"k\":{\"type\":["
                                "\"boolean\",\"null\"],\"enum\":[true,null]}},\"required\":["
                                "\"k\"],\"additionalProperties\":false}");
    free(strict);
}

/* A resumed claude call reports its own figures: the since-last-result usage and cost when
 * the result has them (2.1.280+), total_cost_usd and modelUsage otherwise (2.1.197). */
static double claude_fixture_cost(const char *file, struct ar_usage *usage)
{
    size_t len;
    char *data = slurp("claude", file, &len);
    assert_non_null(data);
    struct ar_reply r;
    ar_reply_init(&r);
    assert_int_equal(ar_provider_find("claude")->unwrap_captured(data, len, &r), 0);
    free(data);
    assert_true(r.has_cost);
    double usd = r.cost_usd;
    *usage = r.usage;
    ar_reply_finish(&r);
    return usd;
}

static void test_claude_resumed_call_reports_its_own_usage_and_cost(void **state)
{
    (void)state;
    struct ar_usage u;
    /* 2.1.332: total_cost_usd 0.00982 and modelUsage 2,100 in are the session's */
    assert_float_equal(claude_fixture_cost("stream-resume-since-last.jsonl", &u), 0.0057, 1e-9);
    assert_int_equal(u.input, 1200);
    assert_int_equal(u.cache_read, 300);
    assert_int_equal(u.output, 42);
    assert_float_equal(claude_fixture_cost("stream-resume-since-last-first.jsonl", &u), 0.00412,
                       1e-9);
    assert_int_equal(u.input, 900);
    /* 2.1.197: no since-last field, total_cost_usd is per call */
    double old = claude_fixture_cost("stream-resume.jsonl", &u);
    assert_true(old > 0);
    assert_int_equal(u.input, 1200);
    /* a since-last entry without costUSD: the tokens stand, the cost is left to the table */
    const char *line =
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"x\","
        "\"session_id\":\"s-123456789\",\"total_cost_usd\":9,\"modelUsage\":{\"m\":{"
        "\"inputTokens\":99,\"costUSD\":9}},\"model_usage_since_last_result\":{\"m\":{"
        "\"inputTokens\":5,\"outputTokens\":1}}}";
    struct ar_reply r;
    ar_reply_init(&r);
    assert_int_equal(ar_provider_find("claude")->unwrap_captured(line, strlen(line), &r), 0);
    assert_false(r.has_cost);
    assert_int_equal(r.usage.input, 5);
    ar_reply_finish(&r);
}

/* Feeds lines (NUL-separated list ending in an empty string) to claude's stream and
 * finishes with exit status `status`. */
static void claude_feed(const char *const *lines, int status, struct ar_reply *r)
{
    const struct ar_provider *p = ar_provider_find("claude");
    struct ar_unwrap *u = p->unwrap_new(NULL);
    for (size_t i = 0; lines[i]; i++)
        p->unwrap_line(u, lines[i], strlen(lines[i]), NULL);
    struct ar_exit_info ex = { status, 0, 0, NULL, 0 };
    p->unwrap_finish(u, &ex, r);
    p->unwrap_free(u);
}

/* claude's rate_limit_event (hand-made in the shape claude 2.1.332's bundle declares: it is
 * sent for subscription logins, which the mock cannot be): the reading reaches the reply; a
 * rejected one makes the failed call rate_limit, waiting until resetsAt. A line of claude's
 * of a type the adapter does not know is counted, and init's version is kept. */
static void test_claude_rate_limit_event_and_unknown_events(void **state)
{
    (void)state;
    long long reset = (long long)time(NULL) + 3600;
    char rl[512], rej[512];
    snprintf(rl, sizeof(rl),
             "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":"
             "\"allowed_warning\",\"resetsAt\":%lld,\"rateLimitType\":\"five_hour\","
             "\"utilization\":0.91},\"uuid\":\"u1\",\"session_id\":\"s-123456789\"}",
             reset);
    snprintf(rej, sizeof(rej),
             "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":\"rejected\","
             "\"resetsAt\":%lld,\"rateLimitType\":\"seven_day\",\"unifiedWindows\":{"
             "\"seven_day\":{\"utilization\":1.0,\"resetsAt\":%lld}}},\"uuid\":\"u2\","
             "\"session_id\":\"s-123456789\"}",
             reset, reset);
    const char *init = "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":"
                       "\"s-123456789\",\"model\":\"claude-opus-5-5\",\"claude_code_version\":"
                       "\"2.1.332\"}";
    const char *novel = "{\"type\":\"tool_use_summary\",\"summary\":\"x\",\"session_id\":"
                        "\"s-123456789\"}";
    const char *ok = "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
                     "\"result\":\"hi\",\"session_id\":\"s-123456789\",\"total_cost_usd\":0.1}";
    const char *fail = "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
                       "\"api_error_status\":429,\"result\":\"API Error: Request rejected (429) "
                       "\\u00b7 rate limited\",\"session_id\":\"s-123456789\"}";
    struct ar_reply r;
    const char *a[] = { init, rl, novel, novel, ok, NULL };
    claude_feed(a, 0, &r);
    assert_int_equal(r.error, 0);
    assert_string_equal(r.cli_version, "2.1.332");
    assert_int_equal(r.unknown_events, 2);
    assert_true(r.has_rate_limit);
    assert_string_equal(r.rate_limit.status, "allowed_warning");
    assert_string_equal(r.rate_limit.window, "five_hour");
    assert_float_equal(r.rate_limit.used_percent, 91.0, 1e-9);
    assert_int_equal(r.rate_limit.resets_at, reset);
    assert_string_equal(r.rate_limit.source, "claude:rate_limit_event");
    ar_reply_finish(&r);

    const char *b[] = { init, rej, fail, NULL };
    claude_feed(b, 1, &r);
    assert_int_equal(r.error, AR_ERATELIMIT);
    assert_string_equal(r.rate_limit.status, "rejected");
    assert_string_equal(r.rate_limit.window, "seven_day");
    assert_float_equal(r.rate_limit.used_percent, 100.0, 1e-9);
    assert_true(r.retry_after_s > 3500 && r.retry_after_s <= 3600);
    assert_non_null(strstr(r.error_msg, "rate limited (seven_day limit resets at 20"));
    assert_int_equal(r.unknown_events, 0);
    ar_reply_finish(&r);

    /* 2.1.197's stream: no rate_limit_event, nothing unknown */
    size_t len;
    char *data = slurp("claude", "stream-text.jsonl", &len);
    assert_non_null(data);
    ar_reply_init(&r);
    assert_int_equal(ar_provider_find("claude")->unwrap_captured(data, len, &r), 0);
    free(data);
    assert_false(r.has_rate_limit);
    assert_int_equal(r.unknown_events, 0);
    assert_string_equal(r.cli_version, "2.1.197");
    ar_reply_finish(&r);
}

/* doctor's version line against each CLI's tested range: what --version prints, as is. */
static void test_version_fit_against_the_tested_range(void **state)
{
    (void)state;
    const struct ar_provider *claude = ar_provider_find("claude");
    const struct ar_provider *codex = ar_provider_find("codex");
    const struct ar_provider *gemini = ar_provider_find("gemini");
    assert_string_equal(ar_provider_version_fit(claude, "2.1.248 (Claude Code)"), "tested");
    assert_string_equal(ar_provider_version_fit(claude, "2.1.337 (Claude Code)"), "tested");
    assert_string_equal(ar_provider_version_fit(claude, "2.1.338 (Claude Code)"), "newer");
    assert_string_equal(ar_provider_version_fit(claude, "2.2.0 (Claude Code)"), "newer");
    /* Older than claude's min_version: agentrun does not start it (issue 56). */
    assert_string_equal(ar_provider_version_fit(claude, "2.1.247 (Claude Code)"), "unsupported");
    assert_string_equal(ar_provider_version_fit(claude, "2.1.197 (Claude Code)"), "unsupported");
    assert_string_equal(ar_provider_version_fit(claude, "2.1.96 (Claude Code)"), "unsupported");
    assert_string_equal(ar_provider_version_fit(codex, "codex-cli 0.169.0"), "tested");
    assert_string_equal(ar_provider_version_fit(codex, "codex-cli 0.168.0"), "older");
    assert_string_equal(ar_provider_version_fit(codex, "codex-cli 0.171.0"), "tested");
    assert_string_equal(ar_provider_version_fit(codex, "codex-cli 0.172.0"), "newer");
    assert_string_equal(ar_provider_version_fit(gemini, "0.61.0"), "tested");
    assert_string_equal(ar_provider_version_fit(gemini, "0.62.0-nightly.20261201"), "newer");
    assert_null(ar_provider_version_fit(claude, "Claude Code"));
    assert_null(ar_provider_version_fit(claude, NULL));
}

/* ---- codex strict schema ---- */

static void test_codex_schema_is_made_strict(void **state)
{
    const char *in =
        "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
        "\"properties\":{\"verdict\":{\"type\":\"string\",\"enum\":[\"ok\",\"bad\"],"
        "\"default\":\"ok\"},\"score\":{\"type\":\"integer\",\"minimum\":0},"
        "\"issues\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
        "\"line\":{\"type\":\"integer\"},\"msg\":{\"type\":\"string\",\"maxLength\":80}},"
        "\"required\":[\"msg\"]}},\"note\":{\"description\":\"free\"}},"
        "\"required\":[\"verdict\",\"score\"],\"examples\":[{}]}";
    char *out = ar_codex_strict_schema(in);
    assert_non_null(out);
    json_t *s = json_loads(out, 0, NULL);
    assert_non_null(s);
    assert_null(json_object_get(s, "$schema"));
    assert_null(json_object_get(s, "examples"));
    assert_true(json_is_false(json_object_get(s, "additionalProperties")));
    assert_int_equal(json_array_size(json_object_get(s, "required")), 4);
    json_t *props = json_object_get(s, "properties");
    /* required stays as is; optional becomes nullable */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(props, "verdict"), "type")), "string");
    assert_null(json_object_get(json_object_get(props, "verdict"), "default"));
    json_t *issues = json_object_get(props, "issues");
    assert_true(json_is_array(json_object_get(issues, "type")));
    assert_string_equal(json_string_value(json_array_get(json_object_get(issues, "type"), 1)),
                        "null");
    json_t *item = json_object_get(issues, "items");
    assert_true(json_is_false(json_object_get(item, "additionalProperties")));
    assert_int_equal(json_array_size(json_object_get(item, "required")), 2);
    json_t *line = json_object_get(json_object_get(item, "properties"), "line");
    assert_true(json_is_array(json_object_get(line, "type")));
    json_t *msg = json_object_get(json_object_get(item, "properties"), "msg");
    assert_null(json_object_get(msg, "maxLength"));
    /* no type at all: wrapped in anyOf with null */
    json_t *note = json_object_get(props, "note");
    assert_true(json_is_array(json_object_get(note, "anyOf")));
    json_decref(s);
    free(out);

    /* and back: the nulls strict mode forces on optional properties are dropped
     * ("note" has no type, so its null is allowed and kept) */
    char *fixed = ar_codex_unstrict("{\"verdict\": \"ok\", \"score\": 1, \"note\": null, "
                                    "\"issues\": [{\"msg\": \"m\", \"line\": null}]}",
                                    in);
    assert_non_null(fixed);
    assert_string_equal(
        fixed, "{\"verdict\":\"ok\",\"score\":1,\"note\":null,\"issues\":[{\"msg\":\"m\"}]}");
    free(fixed);
    /* a required null stays (the contract check will report it); nothing to do: NULL */
    assert_null(ar_codex_unstrict("{\"verdict\": null, \"score\": 1}", in));
    assert_null(ar_codex_unstrict("not json", in));
    const char *lines[] = {
        "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}",
        ("{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\","
         "\"text\":\"{\\\"verdict\\\": \\\"ok\\\", \\\"score\\\": 2, \\\"issues\\\": null}\"}}"),
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":2}}",
    };
    const struct ar_provider *codex = ar_provider_find("codex");
    struct ar_call_spec spec = { 0 };
    spec.schema = in;
    spec.model = "gpt-5.5";
    struct ar_unwrap *u = codex->unwrap_new(&spec);
    for (size_t i = 0; i < 3; i++)
        codex->unwrap_line(u, lines[i], strlen(lines[i]), NULL);
    struct ar_reply r;
    struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
    codex->unwrap_finish(u, &ex, &r);
    codex->unwrap_free(u);
    assert_int_equal(r.error, 0);
    assert_string_equal(r.text, "{\"verdict\":\"ok\",\"score\":2}");
    ar_reply_finish(&r);

    assert_null(ar_codex_strict_schema("{\"type\":\"array\",\"items\":{}}"));
    assert_null(ar_codex_strict_schema("not json"));
    out = ar_codex_strict_schema("{\"type\":\"object\",\"properties\":{\"e\":{\"enum\":[1,2]}}}");
    assert_non_null(strstr(out, "null"));
    free(out);
}

/* Issue 58: contracts in full 2020-12. codex gets a strict copy only where strict mode can
 * carry the contract, and the prompt keeps the contract unless the copy says all of it. */
static void test_codex_strict_copy_of_a_2020_12_contract(void **state)
{
    /* A map of names left open, allOf, an anchor or another document: no strict copy. */
    static const char *const none[] = {
        "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}",
        "{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"object\","
        "\"patternProperties\":{\"^x\":{}}}}}",
        "{\"type\":\"object\",\"allOf\":[{\"properties\":{\"a\":{}}}]}",
        "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#node\"}}}",
        "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"other.json\"}}}",
        "{\"type\":\"object\",\"properties\":{\"a\":{\"$dynamicRef\":\"#meta\"}}}",
        "{\"type\":\"object\",\"unevaluatedProperties\":{\"type\":\"string\"}}",
    };
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        char *out = ar_codex_strict_schema(none[i]);
        if (out)
            fail_msg("%s: %s", none[i], out);
        assert_false(ar_codex_native_contract(none[i]));
    }
    /* Formats strict mode does not check are left out; the copy is then still whole. */
    const char *fmt = "{\"type\":\"object\",\"properties\":{\"u\":{\"type\":\"string\","
                      "\"format\":\"uri\"},\"d\":{\"type\":\"string\",\"format\":\"date\"}},"
                      "\"required\":[\"u\",\"d\"]}";
    char *out = ar_codex_strict_schema(fmt);
    assert_non_null(out);
    assert_null(strstr(out, "uri"));
    assert_non_null(strstr(out, "\"format\":\"date\""));
    assert_true(ar_codex_native_contract(fmt));
    free(out);
    /* A copy that leaves an assertion out goes to codex, and the prompt keeps the contract. */
    const char *lossy = "{\"type\":\"object\",\"properties\":{\"t\":{\"type\":\"array\","
                        "\"uniqueItems\":true,\"prefixItems\":[{\"type\":\"string\"}]}},"
                        "\"required\":[\"t\"],\"unevaluatedProperties\":false}";
    out = ar_codex_strict_schema(lossy);
    assert_non_null(out);
    assert_null(strstr(out, "uniqueItems"));
    assert_null(strstr(out, "prefixItems"));
    assert_false(ar_codex_native_contract(lossy));
    free(out);
}

/* claude's validator is draft-07 Ajv in strict mode: the copy is written in draft-07 and
 * holds no keyword it does not know (tests/e2e/test_run.py runs it through claude). */
static void test_claude_schema_is_draft_07_without_unknown_keywords(void **state)
{
    const char *c =
        "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
        "\"$defs\":{\"city\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"string\","
        "\"format\":\"uri\",\"x-ui\":1}}}},"
        "\"properties\":{\"via\":{\"$ref\":\"#/$defs/city\"},"
        "\"pair\":{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"}],\"items\":false},"
        "\"tags\":{\"contains\":{\"const\":\"a\"},\"minContains\":0},"
        "\"when\":{\"deprecated\":true,\"discriminator\":{\"propertyName\":\"k\"}}},"
        "\"dependentRequired\":{\"a\":[\"b\"]},\"dependentSchemas\":{\"c\":{\"required\":[\"d\"]}},"
        "\"unevaluatedProperties\":false}";
    char *out = ar_claude_schema(c);
    assert_non_null(out);
    json_t *s = json_loads(out, 0, NULL);
    assert_non_null(s);
    static const char *const absent[] = { "$schema",          "$defs",
                                          "prefixItems",      "minContains",
                                          "contains",         "dependentRequired",
                                          "dependentSchemas", "unevaluatedProperties",
                                          "format",           "x-ui",
                                          "deprecated",       "discriminator" };
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
        if (strstr(out, absent[i]))
            fail_msg("%s in %s", absent[i], out);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(s, "properties"), "via"), "$ref")),
                        "#/definitions/city");
    json_t *pair = json_object_get(json_object_get(s, "properties"), "pair");
    assert_true(json_is_array(json_object_get(pair, "items")));
    assert_true(json_is_false(json_object_get(pair, "additionalItems")));
    json_t *deps = json_object_get(s, "dependencies");
    assert_true(json_is_array(json_object_get(deps, "a")));
    assert_true(json_is_object(json_object_get(deps, "c")));
    json_decref(s);
    free(out);
    /* It accepts more than the contract (unevaluatedProperties, minContains left out). */
    assert_false(ar_claude_native_contract(c));
    const char *whole = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\","
                        "\"format\":\"int32\"}},\"required\":[\"a\"]}";
    assert_true(ar_claude_native_contract(whole));
    /* References draft-07 cannot follow: no --json-schema. */
    assert_null(ar_claude_schema("{\"type\":\"object\",\"properties\":{\"a\":"
                                 "{\"$dynamicRef\":\"#m\"}}}"));
    assert_null(ar_claude_schema("{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#n\"},"
                                 "\"b\":{\"$anchor\":\"n\"}}}"));
    assert_null(ar_claude_schema("{\"type\":\"object\",\"properties\":{\"a\":"
                                 "{\"$id\":\"https://x.example/a\"}}}"));
    assert_null(ar_claude_schema("{\"type\":\"array\"}"));
}

/* What --output-schema is for: an answer that obeys the strict copy of a contract
 * passes the contract itself once un-stricted, so no repair call is spent on the
 * nulls strict mode forced. Checked with agentrun's own contract validator. */
static void test_codex_strict_answer_unstricted_satisfies_the_contract(void **state)
{
    const char *contract =
        "{\"type\":\"object\",\"required\":[\"verdict\",\"findings\"],\"properties\":{"
        "\"verdict\":{\"type\":\"string\",\"enum\":[\"ok\",\"bad\"]},\"note\":{\"type\":\"string\"}"
        ","
        "\"findings\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"line\"],"
        "\"properties\":{\"line\":{\"type\":\"integer\"},\"hint\":{\"type\":\"string\"}}}}}}";
    char *strict_text = ar_codex_strict_schema(contract);
    assert_non_null(strict_text);
    struct ar_contract *orig = NULL, *strict = NULL;
    assert_int_equal(ar_contract_parse(contract, strlen(contract), &orig, NULL), 0);
    assert_int_equal(ar_contract_parse(strict_text, strlen(strict_text), &strict, NULL), 0);

    const char *answer = "{\"verdict\":\"ok\",\"note\":null,\"findings\":"
                         "[{\"line\":3,\"hint\":null},{\"line\":4,\"hint\":\"x\"}]}";
    json_t *v = json_loads(answer, 0, NULL);
    assert_true(ar_contract_accepts(strict, v));
    assert_false(ar_contract_accepts(orig, v)); /* "note": null is not a string */
    json_decref(v);
    /* strict mode lists every property in required: leaving one out is refused */
    v = json_loads("{\"verdict\":\"ok\",\"findings\":[]}", 0, NULL);
    assert_false(ar_contract_accepts(strict, v));
    assert_true(ar_contract_accepts(orig, v));
    json_decref(v);
    /* and no property the contract does not name */
    v = json_loads("{\"verdict\":\"ok\",\"note\":null,\"findings\":[],\"extra\":1}", 0, NULL);
    assert_false(ar_contract_accepts(strict, v));
    json_decref(v);

    char *fixed = ar_codex_unstrict(answer, contract);
    assert_non_null(fixed);
    assert_string_equal(
        fixed, "{\"verdict\":\"ok\",\"findings\":[{\"line\":3},{\"line\":4,\"hint\":\"x\"}]}");
    v = json_loads(fixed, 0, NULL);
    assert_true(ar_contract_accepts(orig, v));
    json_decref(v);
    free(fixed);
    ar_contract_destroy(strict);
    ar_contract_destroy(orig);
    free(strict_text);
}

/* ---- codex rollout files ---- */

/* What a rollout says beyond tokens (lines as codex 0.169.0 and 0.171.0 wrote them at the
 * mock with x-codex-primary-* / x-codex-secondary-* headers, 2026-11-29): the version that
 * wrote it and the window of rate_limits most used. */
static void test_codex_rollout_version_and_rate_limits(void **state)
{
    (void)state;
    const char *data =
        "{\"timestamp\":\"2026-11-29T04:20:00.000Z\",\"type\":\"session_meta\",\"payload\":{"
        "\"id\":\"t-1\",\"cli_version\":\"0.171.0\",\"originator\":\"codex_exec\"}}\n"
        "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5.5\"}}\n"
        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":null,"
        "\"rate_limits\":{\"limit_id\":\"codex\",\"limit_name\":null,\"primary\":{"
        "\"used_percent\":42.5,\"window_minutes\":300,\"resets_at\":1795929447},"
        "\"secondary\":{\"used_percent\":7.0,\"window_minutes\":10080,\"resets_at\":"
        "1796012252},\"credits\":null,\"plan_type\":null,\"rate_limit_reached_type\":null}}}\n"
        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"rate_limits\":{"
        "\"primary\":null,\"secondary\":null}}}\n";
    struct ar_codex_rollout_facts f;
    ar_codex_rollout_facts(data, strlen(data), &f);
    assert_string_equal(f.model, "gpt-5.5");
    assert_string_equal(f.cli_version, "0.171.0");
    assert_true(f.has_limits);
    assert_string_equal(f.status, "allowed");
    assert_string_equal(f.window, "five_hour");
    assert_float_equal(f.used_percent, 42.5, 1e-9);
    assert_int_equal(f.resets_at, 1795929447LL);
    ar_codex_rollout_facts_finish(&f);
    const char *full = "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\","
                       "\"rate_limits\":{\"primary\":{\"used_percent\":60,\"window_minutes\":"
                       "300,\"resets_at\":5},\"secondary\":{\"used_percent\":100.0,"
                       "\"window_minutes\":10080,\"resets_at\":1796012252}}}}\n";
    ar_codex_rollout_facts(full, strlen(full), &f);
    assert_string_equal(f.status, "rejected");
    assert_string_equal(f.window, "seven_day");
    assert_null(f.cli_version);
    ar_codex_rollout_facts_finish(&f);
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(s, f);
    fclose(f);
}

static void mkdirs(const char *root, const char *rel)
{
    char path[512];
    for (const char *p = rel;; p++) {
        if (*p != '/' && *p)
            continue;
        snprintf(path, sizeof(path), "%s/%.*s", root, (int)(p - rel), rel);
        mkdir(path, 0700);
        if (!*p)
            return;
    }
}

/*
 * A thread id is a UUIDv7, whose first 48 bits are when it began: its rollout is looked
 * for in that day's directory first (codex names it by the local date), so a call reads
 * one directory and not every session the user ever had. Here a same-named file in the
 * UTC day (a day earlier, at UTC+14) is not the one read; a day that holds no such file
 * leaves the whole tree to search.
 */
static void test_codex_rollout_is_looked_for_in_the_day_its_thread_began(void **state)
{
    (void)state;
    char dir[] = "/tmp/ar-test-rollout-XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* 2026-11-29T12:00:00Z: 2026-11-30 at UTC+14 ("XYZ-14": no tz database needed) */
    const char *id = "01a2272d-2600-7abc-8def-0123456789ab";
    char *tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
    setenv("TZ", "XYZ-14", 1);
    tzset();
    mkdirs(dir, "sessions/2026/11/30");
    mkdirs(dir, "sessions/2026/11/29");
    mkdirs(dir, "sessions/2025/01/01");
    char path[512];
    snprintf(path, sizeof(path), "%s/sessions/2026/11/30/rollout-2026-11-30T02-00-00-%s.jsonl", dir,
             id);
    write_file(path, "{\"type\":\"turn_context\",\"payload\":{\"model\":\"that-day\"}}\n");
    snprintf(path, sizeof(path), "%s/sessions/2026/11/29/rollout-2026-11-29T12-00-00-%s.jsonl", dir,
             id);
    write_file(path, "{\"type\":\"turn_context\",\"payload\":{\"model\":\"utc-day\"}}\n");
    setenv("CODEX_HOME", dir, 1);
    char *m = ar_codex_thread_model(id);
    assert_string_equal(m, "that-day");
    free(m);
    /* Not in its day: the walk of the whole tree still finds it. */
    const char *moved = "01a2272d-2600-7abc-8def-0123456789ac";
    snprintf(path, sizeof(path), "%s/sessions/2025/01/01/rollout-2025-01-01T00-00-00-%s.jsonl", dir,
             moved);
    write_file(path, "{\"type\":\"turn_context\",\"payload\":{\"model\":\"elsewhere\"}}\n");
    m = ar_codex_thread_model(moved);
    assert_string_equal(m, "elsewhere");
    free(m);
    unsetenv("CODEX_HOME");
    if (tz) {
        setenv("TZ", tz, 1);
        free(tz);
    } else {
        unsetenv("TZ");
    }
    tzset();
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A thread's rollout file is found by its id under $CODEX_HOME/sessions/YYYY/MM/DD, else
 * under $HOME/.codex/sessions: the model codex's events never name and a resumed thread's
 * running total come from there. */
static void test_codex_thread_rollout_is_found_by_id(void **state)
{
    char dir[] = "/tmp/ar-test-rollout-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *id = "019a7c3e-1111-7222-8333-444455556666";
    const char *other = "019a7c3e-9999-7222-8333-444455556666";
    mkdirs(dir, "ch/sessions/2026/11/23");
    mkdirs(dir, "home/.codex/sessions/2026/11/22");
    char path[512], path2[512], path3[512];
    snprintf(path, sizeof(path), "%s/ch/sessions/2026/11/23/rollout-2026-11-23T10-00-00-%s.jsonl",
             dir, id);
    write_file(path,
               "{\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n"
               "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5.5\"}}\n"
               "{\"type\":\"event_msg\",\"payload\":{\"info\":{\"total_token_usage\":"
               "{\"input_tokens\":900,\"cached_input_tokens\":100,\"output_tokens\":20}}}}\n");
    snprintf(path2, sizeof(path2), "%s/ch/sessions/2026/11/23/rollout-2026-11-23T11-00-00-%s.jsonl",
             dir, other);
    write_file(path2, "{\"type\":\"turn_context\",\"payload\":{\"model\":\"other\"}}\n");
    snprintf(path3, sizeof(path3),
             "%s/home/.codex/sessions/2026/11/22/rollout-2026-11-22T09-00-00-%s.jsonl", dir, id);
    write_file(path3, "{\"type\":\"turn_context\",\"payload\":{\"model\":\"from-home\"}}\n");

    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char env[512];
    snprintf(env, sizeof(env), "%s/ch", dir);
    setenv("CODEX_HOME", env, 1);
    char *m = ar_codex_thread_model(id);
    assert_string_equal(m, "gpt-5.5");
    free(m);
    m = ar_codex_thread_model(other);
    assert_string_equal(m, "other");
    free(m);
    struct ar_usage raw = AR_USAGE_INIT;
    assert_int_equal(ar_codex_thread_total(id, &raw), 0);
    assert_int_equal(raw.input, 900);
    assert_int_equal(raw.cache_read, 100);
    assert_int_equal(raw.output, 20);
    /* no total in the file, no file, or an id that is a path: nothing */
    assert_int_equal(ar_codex_thread_total(other, &raw), AR_ENOJSON);
    assert_null(ar_codex_thread_model("019a7c3e-0000-7222-8333-444455556666"));
    assert_null(ar_codex_thread_model("23/rollout-2026-11-23T10-00-00-019a7c3e"));

    unsetenv("CODEX_HOME");
    snprintf(env, sizeof(env), "%s/home", dir);
    setenv("HOME", env, 1);
    m = ar_codex_thread_model(id);
    assert_string_equal(m, "from-home");
    free(m);
    if (home)
        setenv("HOME", home, 1);
    else
        unsetenv("HOME");
    free(home);
    ar_remove_tree(dir);
}

/* ---- codex resumed usage ---- */

static void test_codex_resume_usage_is_per_call(void **state)
{
    size_t len;
    char *data = slurp("codex", "json-resume.jsonl", &len);
    assert_non_null(data);
    const char *tid = strstr(data, "\"thread_id\":\"");
    assert_non_null(tid);
    tid += 13;
    char id[128];
    size_t n = strcspn(tid, "\"");
    assert_true(n < sizeof(id));
    memcpy(id, tid, n);
    id[n] = '\0';

    char dir[] = "/tmp/ar-test-codexhome-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof(path), "%s/sessions", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/sessions/2026", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/sessions/2026/rollout-2026-11-22T05-00-00-%s.jsonl", dir, id);
    /* the thread's total after call 1 (json-resume-first.jsonl's turn.completed) */
    write_file(path, "{\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n"
                     "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{"
                     "\"total_token_usage\":{\"input_tokens\":1000,\"cached_input_tokens\":100,"
                     "\"output_tokens\":25,\"reasoning_output_tokens\":0,\"total_tokens\":1025},"
                     "\"last_token_usage\":{\"input_tokens\":1000}}}}\n"
                     "{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_complete\"}}\n");
    setenv("CODEX_HOME", dir, 1);

    const struct ar_provider *p = ar_provider_find("codex");
    struct ar_call_spec spec = { 0 };
    spec.resume = id;
    struct ar_unwrap *u = p->unwrap_new(&spec);
    /* What codex appends during the call: the baseline must have been read before. */
    FILE *rf = fopen(path, "a");
    assert_non_null(rf);
    fputs("{\"type\":\"turn_context\",\"payload\":{\"cwd\":\"/w\",\"model\":\"gpt-5.5\"}}\n"
          "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{"
          "\"total_token_usage\":{\"input_tokens\":2500,\"cached_input_tokens\":400,"
          "\"output_tokens\":67}}}}\n",
          rf);
    fclose(rf);
    assert_int_equal(feed(p, u, data, len, NULL, NULL), 1);
    struct ar_reply r;
    struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, 0);
    assert_string_equal(r.text, "second answer");
    assert_false(r.usage_cumulative);
    assert_int_equal(r.usage.input, 1200);
    assert_int_equal(r.usage.cache_read, 300);
    assert_int_equal(r.usage.output, 42);
    assert_string_equal(r.model, "gpt-5.5");
    ar_reply_finish(&r);

    unlink(path);
    /* No rollout: the cumulative numbers are reported, flagged. */
    u = p->unwrap_new(&spec);
    feed(p, u, data, len, NULL, NULL);
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_true(r.usage_cumulative);
    assert_int_equal(r.usage.input, 2100);
    assert_null(r.model);
    ar_reply_finish(&r);

    snprintf(path, sizeof(path), "%s/sessions/2026", dir);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/sessions", dir);
    rmdir(path);
    rmdir(dir);
    unsetenv("CODEX_HOME");
    free(data);

    struct ar_usage raw;
    const char *rollout = "{\"type\":\"token_usage_record\",\"payload\":{\"turn_token_usage\":{"
                          "\"input_tokens\":5},\"thread_token_usage\":{\"input_tokens\":77,"
                          "\"output_tokens\":3}}}\nnot json\n";
    assert_int_equal(ar_codex_rollout_total(rollout, strlen(rollout), &raw), 0);
    assert_int_equal(raw.input, 77);
    assert_int_equal(raw.output, 3);
    assert_int_equal(ar_codex_rollout_total("x\ny\n", 4, &raw), AR_ENOJSON);
    const char *ctx =
        "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5.4\"}}\n"
        "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5.5\"}}\n{\"x\":1}\n";
    char *m = ar_codex_rollout_model(ctx, strlen(ctx));
    assert_string_equal(m, "gpt-5.5");
    free(m);
    assert_null(ar_codex_rollout_model("", 0));
}

/* ---- registry ---- */

static void test_registry_order_find_resolve_and_model(void **state)
{
    const struct ar_provider *const *v = ar_providers();
    assert_string_equal(v[0]->name, "claude");
    assert_string_equal(v[1]->name, "codex");
    assert_string_equal(v[2]->name, "gemini");
    assert_null(v[3]);
    assert_null(ar_provider_find("gpt"));
    struct ar_error err = AR_ERROR_INIT;
    assert_null(ar_provider_resolve("gpt", &err));
    assert_int_equal(err.code, AR_EUSAGE);
    assert_non_null(strstr(err.msg, "unknown provider 'gpt'"));
    assert_ptr_equal(ar_provider_resolve("codex", NULL), ar_provider_find("codex"));

    /* auto with a PATH holding only a fake gemini */
    char dir[] = "/tmp/ar-test-path-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/gemini", dir);
    write_file(bin, "#!/bin/sh\necho 1\n");
    chmod(bin, 0755);
    char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", dir, 1);
    unsetenv("AGENTRUN_PROVIDER");
    unsetenv("AGENTRUN_CLAUDE_BIN");
    unsetenv("AGENTRUN_CODEX_BIN");
    unsetenv("AGENTRUN_GEMINI_BIN");
    /* Installed is not enough: a gemini with no auth method is passed over, and with no
     * other CLI, the error names what to set. */
    char *old_key = getenv("GEMINI_API_KEY") ? strdup(getenv("GEMINI_API_KEY")) : NULL;
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", dir, 1);
    unsetenv("GEMINI_API_KEY");
    unsetenv("GOOGLE_GENAI_USE_VERTEXAI");
    unsetenv("GOOGLE_GENAI_USE_GCA");
    unsetenv("GOOGLE_GEMINI_BASE_URL");
    unsetenv("GEMINI_CLI_HOME");
    ar_error_clear(&err);
    assert_null(ar_provider_resolve("auto", &err));
    assert_int_equal(err.code, AR_EAUTH);
    assert_non_null(strstr(err.msg, "claude not found"));
    assert_non_null(strstr(err.msg, "gemini no auth method (set GEMINI_API_KEY)"));
    assert_non_null(strstr(err.msg, "docs/providers.md#logging-in-auth"));
    setenv("GEMINI_API_KEY", "k", 1);
    assert_ptr_equal(ar_provider_resolve("auto", NULL), ar_provider_find("gemini"));
    assert_ptr_equal(ar_provider_resolve(NULL, NULL), ar_provider_find("gemini"));
    setenv("AGENTRUN_PROVIDER", "codex", 1);
    assert_ptr_equal(ar_provider_resolve(NULL, NULL), ar_provider_find("codex"));
    unsetenv("AGENTRUN_PROVIDER");
    char *w = ar_provider_which(ar_provider_find("gemini"));
    assert_string_equal(w, bin);
    free(w);
    if (old_key)
        setenv("GEMINI_API_KEY", old_key, 1);
    else
        unsetenv("GEMINI_API_KEY");
    if (old_home)
        setenv("HOME", old_home, 1);
    free(old_key);
    free(old_home);
    chmod(bin, 0644); /* not executable: not installed */
    ar_error_clear(&err);
    assert_null(ar_provider_resolve("auto", &err));
    assert_int_equal(err.code, AR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "AGENTRUN_CLAUDE_BIN"));
    assert_non_null(strstr(err.msg, "npm install"));
    unlink(bin);
    rmdir(dir);
    if (old_path) {
        setenv("PATH", old_path, 1);
        free(old_path);
    }

    const struct ar_provider *codex = ar_provider_find("codex");
    unsetenv("AGENTRUN_MODEL");
    unsetenv("CODEX_MODEL");
    assert_null(ar_provider_model(codex, NULL));
    setenv("CODEX_MODEL", "gpt-5.4", 1);
    assert_string_equal(ar_provider_model(codex, NULL), "gpt-5.4");
    assert_null(ar_provider_model(ar_provider_find("claude"), NULL));
    setenv("AGENTRUN_MODEL", "m2", 1);
    assert_string_equal(ar_provider_model(codex, NULL), "m2");
    assert_string_equal(ar_provider_model(codex, "m1"), "m1");
    unsetenv("AGENTRUN_MODEL");
    unsetenv("CODEX_MODEL");

    setenv("CODEX_HOME", "/x/ch", 1);
    char *f = ar_provider_auth_file(codex, 0);
    assert_string_equal(f, "/x/ch/auth.json");
    free(f);
    assert_null(ar_provider_auth_file(codex, 1));
    unsetenv("CODEX_HOME");
}

static void test_classification_of_cli_messages(void **state)
{
    struct ar_reply r;
    const struct ar_provider *codex = ar_provider_find("codex");
    static const struct {
        const char *msg;
        int error;
    } cases[] = {
        { "unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:40100/v1", AR_EAUTH },
        { "exceeded retry limit, last status: 429 Too Many Requests", AR_ERATELIMIT },
        { "stream disconnected before completion: boom", AR_EAPI },
        { "Missing environment variable: `MOCK_API_KEY`.", AR_EAUTH },
        { "request id 14012 failed", AR_EAPI },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_unwrap *u = codex->unwrap_new(NULL);
        char line[512];
        json_t *o =
            json_pack("{s:s,s:{s:s}}", "type", "turn.failed", "error", "message", cases[i].msg);
        char *s = json_dumps(o, JSON_COMPACT);
        snprintf(line, sizeof(line), "%s", s);
        free(s);
        json_decref(o);
        assert_int_equal(codex->unwrap_line(u, line, strlen(line), NULL), 1);
        struct ar_exit_info ex = { 1, 0, 0, NULL, 0 };
        codex->unwrap_finish(u, &ex, &r);
        codex->unwrap_free(u);
        assert_int_equal(r.error, cases[i].error);
        /* A login failure is said in agentrun's words (ar_provider_auth_message()). */
        if (r.error == AR_EAUTH)
            assert_non_null(strstr(r.error_msg, "(docs/providers.md#logging-in-auth)"));
        else
            assert_string_equal(r.error_msg, cases[i].msg);
        ar_reply_finish(&r);
    }
}

/* One recorded call through its adapter, with the spec's edit permission. */
static void replay(const char *cli, const char *file, const char *stderr_file, int status,
                   int allow_edits, struct ar_reply *r)
{
    const struct ar_provider *p = ar_provider_find(cli);
    size_t len = 0, elen = 0;
    char *data = slurp(cli, file, &len);
    char *err = stderr_file ? slurp(cli, stderr_file, &elen) : NULL;
    assert_non_null(data);
    struct ar_call_spec spec = { 0 };
    spec.allow_edits = allow_edits;
    struct ar_unwrap *u = p->unwrap_new(&spec);
    feed(p, u, data, len, NULL, NULL);
    struct ar_exit_info ex = { status, 0, 0, err, elen };
    ar_reply_init(r);
    p->unwrap_finish(u, &ex, r);
    p->unwrap_free(u);
    free(data);
    free(err);
}

/* Each CLI's own record of a refused tool call, from the recordings (FORMATS.md). */
static void test_refused_tool_calls_from_recordings(void **state)
{
    static const struct {
        const char *cli, *file, *stderr_file;
        const char *tool;   /* the one denial expected, or NULL for none */
        const char *target; /* its target's suffix, or NULL when unnamed */
        int allow_edits;
        int acted;
    } cases[] = {
        /* claude: the result's permission_denials */
        { "claude", "stream-tool-denied.jsonl", NULL, "Write", "/hello.txt", 0, 0 },
        { "claude", "stream-tool-bash-denied.jsonl", NULL, "Bash",
          "echo shell-made > shell.txt && echo done", 0, 0 },
        { "claude", "stream-tool-write.jsonl", NULL, NULL, NULL, 1, 1 },
        { "claude", "stream-tool-bash.jsonl", NULL, NULL, NULL, 1, 1 },
        { "claude", "stream-text.jsonl", NULL, NULL, NULL, 0, 0 },
        /* codex: only stderr says the sandbox rejected the patch; the file is not named */
        { "codex", "json-tool-rejected.jsonl", "json-tool-rejected.stderr", "apply_patch", NULL, 0,
          0 },
        { "codex", "json-tool-apply-patch.jsonl", "json-tool-apply-patch.stderr", NULL, NULL, 1,
          1 },
        { "codex", "json-tool-shell.jsonl", "json-tool-shell.stderr", NULL, NULL, 1, 1 },
        /* a read-only sandbox's failed shell write leaves no trace codex prints */
        { "codex", "json-tool-shell-readonly.jsonl", "json-tool-shell-readonly.stderr", NULL, NULL,
          0, 0 },
        /* gemini: a tool the approval mode did not offer */
        { "gemini", "stream-tool-default.jsonl", NULL, "write_file", "/hello.txt", 0, 0 },
        { "gemini", "stream-tool-shell-default.jsonl", NULL, "run_shell_command",
          "echo shell-made > shell.txt && echo done", 0, 0 },
        { "gemini", "stream-tool-write.jsonl", NULL, NULL, NULL, 1, 1 },
        { "gemini", "stream-tool-shell.jsonl", NULL, NULL, NULL, 1, 1 },
        /* A write out of the workspace, allowed edits or not: each CLI's refusal */
        { "claude", "stream-tool-write-outside.jsonl", NULL, "Write", "/outside.txt", 1, 0 },
        { "codex", "json-tool-write-outside.jsonl", "json-tool-write-outside.stderr", "apply_patch",
          NULL, 1, 0 },
        { "gemini", "stream-tool-write-outside.jsonl", NULL, "write_file", "/outside.txt", 1, 0 },
        /* gemini: a user policy that denies write_file takes it out of the registry */
        { "gemini", "stream-tool-policy-deny.jsonl", NULL, "write_file", "/hello.txt", 1, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_reply r;
        replay(cases[i].cli, cases[i].file, cases[i].stderr_file, 0, cases[i].allow_edits, &r);
        print_message("%s/%s: %zu denied, acted %d\n", cases[i].cli, cases[i].file, r.denied.n / 2,
                      r.acted);
        assert_int_equal(r.error, 0);
        assert_int_equal(r.acted, cases[i].acted);
        if (!cases[i].tool) {
            assert_int_equal(r.denied.n, 0);
        } else {
            assert_int_equal(r.denied.n, 2);
            assert_string_equal(r.denied.v[0], cases[i].tool);
            const char *t = r.denied.v[1];
            if (!cases[i].target) {
                assert_string_equal(t, "");
            } else {
                size_t n = strlen(t), sl = strlen(cases[i].target);
                assert_true(n >= sl && !strcmp(t + n - sl, cases[i].target));
            }
        }
        ar_reply_finish(&r);
    }
}

/* A gemini tool_use of `tool` on /w/a and its tool_result failing with error `type`. */
#define GEMINI_TOOL(tool, type, msg)                                                              \
    "{\"type\":\"tool_use\",\"timestamp\":\"t\",\"tool_name\":\"" tool "\",\"tool_id\":\"g1\","   \
    "\"parameters\":{\"file_path\":\"/w/a\"}}\n{\"type\":\"tool_result\",\"timestamp\":\"t\","    \
    "\"tool_id\":\"g1\",\"status\":\"error\",\"error\":{\"type\":\"" type "\",\"message\":\"" msg \
    "\"}}\n"

/* A missing tool that changes nothing (a read tool, claude's StructuredOutput without
 * --json-schema) is not a refusal; a missing write or shell tool is, and so is what the
 * policy engine refused. */
static void test_only_missing_tools_that_act_are_refusals(void **state)
{
    static const struct {
        const char *cli;
        const char *lines;
        int denied;
    } cases[] = {
        { "claude",
          "{\"type\":\"assistant\",\"session_id\":\"s\",\"message\":{\"content\":[{\"type\":"
          "\"tool_use\",\"id\":\"t1\",\"name\":\"StructuredOutput\",\"input\":{}}]}}\n"
          "{\"type\":\"user\",\"session_id\":\"s\",\"message\":{\"content\":[{\"type\":"
          "\"tool_result\",\"tool_use_id\":\"t1\",\"is_error\":true,\"content\":\"<tool_use_"
          "error>Error: No such tool available: StructuredOutput</tool_use_error>\"}]}}\n",
          0 },
        { "claude",
          "{\"type\":\"assistant\",\"session_id\":\"s\",\"message\":{\"content\":[{\"type\":"
          "\"tool_use\",\"id\":\"t1\",\"name\":\"Write\",\"input\":{\"file_path\":\"/w/a\"}}]}}\n"
          "{\"type\":\"user\",\"session_id\":\"s\",\"message\":{\"content\":[{\"type\":"
          "\"tool_result\",\"tool_use_id\":\"t1\",\"is_error\":true,\"content\":[{\"type\":"
          "\"text\",\"text\":\"Error: No such tool available: Write\"}]}]}}\n",
          1 },
        { "gemini",
          "{\"type\":\"tool_use\",\"timestamp\":\"t\",\"tool_name\":\"google_web_search\","
          "\"tool_id\":\"g1\",\"parameters\":{\"query\":\"x\"}}\n"
          "{\"type\":\"tool_result\",\"timestamp\":\"t\",\"tool_id\":\"g1\",\"status\":"
          "\"error\",\"error\":{\"type\":\"tool_not_registered\",\"message\":\"no\"}}\n",
          0 },
        { "gemini",
          "{\"type\":\"tool_use\",\"timestamp\":\"t\",\"tool_name\":\"read_file\","
          "\"tool_id\":\"g1\",\"parameters\":{\"file_path\":\"/w/a\"}}\n"
          "{\"type\":\"tool_result\",\"timestamp\":\"t\",\"tool_id\":\"g1\",\"status\":"
          "\"error\",\"error\":{\"type\":\"policy_violation\",\"message\":\"denied\"}}\n",
          1 },
        /* gemini's boundaries are refusals whatever the tool; a tool failing at its own
         * work (a bad parameter, text not found) is not */
        { "gemini", GEMINI_TOOL("replace", "path_not_in_workspace", "Path not in workspace"), 1 },
        { "gemini", GEMINI_TOOL("run_shell_command", "sandbox_expansion_required", "{}"), 1 },
        { "gemini", GEMINI_TOOL("write_file", "permission_denied", "EACCES"), 1 },
        { "gemini",
          GEMINI_TOOL("write_file", "invalid_tool_params",
                      "Path not in workspace: Attempted path \\\"/x\\\" resolves outside the "
                      "allowed workspace directories: /w"),
          1 },
        { "gemini", GEMINI_TOOL("write_file", "invalid_tool_params", "params must have content"),
          0 },
        { "gemini", GEMINI_TOOL("replace", "edit_no_occurrence_found", "0 occurrences"), 0 },
        { "gemini", GEMINI_TOOL("read_file", "file_not_found", "no such file"), 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct ar_provider *p = ar_provider_find(cases[i].cli);
        struct ar_unwrap *u = p->unwrap_new(NULL);
        feed(p, u, cases[i].lines, strlen(cases[i].lines), NULL, NULL);
        struct ar_reply r;
        struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
        p->unwrap_finish(u, &ex, &r);
        p->unwrap_free(u);
        assert_int_equal(r.denied.n / 2, cases[i].denied);
        ar_reply_finish(&r);
    }
}

/* What each CLI says about when to come back after a rate limit, and whether an API
 * failure is worth one more try, from the recordings. */
static void test_come_back_times_from_recordings(void **state)
{
    static const struct {
        const char *cli, *file, *stderr_file;
        int status, error;
        double retry_after; /* -1: the CLI did not say; -2: a positive time (clock-dependent) */
        int transient;
    } cases[] = {
        /* claude does not pass Retry-After on (CLAUDE_CODE_MAX_RETRIES=0) */
        { "claude", "stream-error-429-retry-after.jsonl", NULL, 1, AR_ERATELIMIT, -1, 0 },
        { "claude", "stream-error-500.jsonl", NULL, 1, AR_EAPI, -1, 1 },
        { "claude", "stream-error-401.jsonl", NULL, 1, AR_EAUTH, -1, 0 },
        /* codex: a plain 429 says nothing; a usage limit names a clock time */
        { "codex", "json-error-429.jsonl", NULL, 1, AR_ERATELIMIT, -1, 0 },
        { "codex", "json-error-429-usage-limit.jsonl", NULL, 1, AR_ERATELIMIT, -2, 0 },
        { "codex", "json-error-500.jsonl", NULL, 1, AR_EAPI, -1, 1 },
        /* gemini: "Suggested retry after 7s." from the API's RetryInfo */
        { "gemini", "stream-error-429-retry-after.jsonl", "stream-error-429-retry-after.stderr",
          173, AR_ERATELIMIT, 7, 0 },
        { "gemini", "stream-error-429.jsonl", "stream-error-429.stderr", 173, AR_ERATELIMIT, -1,
          0 },
        { "gemini", "stream-error-500.jsonl", "stream-error-500.stderr", 244, AR_EAPI, -1, 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ar_reply r;
        replay(cases[i].cli, cases[i].file, cases[i].stderr_file, cases[i].status, 0, &r);
        print_message("%s/%s: %s retry_after %.1f transient %d\n", cases[i].cli, cases[i].file,
                      ar_strerror_name(r.error), r.retry_after_s, r.transient);
        assert_int_equal(r.error, cases[i].error);
        if (cases[i].retry_after == -2)
            assert_true(r.retry_after_s > 0 && r.retry_after_s <= 86400);
        else
            assert_true(r.retry_after_s == cases[i].retry_after);
        assert_int_equal(r.transient, cases[i].transient);
        ar_reply_finish(&r);
    }
}

/* The wording of each CLI's limits, at a fixed time (2026-11-23 15:42:00 UTC), in UTC. */
/* The names built into the CLI's help are the registry's (one owner: the registry). */
static void test_provider_names_in_help_are_the_registry(void **state)
{
    (void)state;
    const struct ar_provider *const *p = ar_providers();
    char list[128] = "", or_[128] = "", and_[128] = "", choices[128] = "";
    size_t n = 0;
    while (p[n])
        n++;
    for (size_t i = 0; i < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 < n ? ", " : NULL;
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 p[i]->name);
        snprintf(or_ + strlen(or_), sizeof(or_) - strlen(or_), "%s%s", sep ? sep : " or ",
                 p[i]->name);
        snprintf(and_ + strlen(and_), sizeof(and_) - strlen(and_), "%s%s", sep ? sep : " and ",
                 p[i]->name);
        snprintf(choices + strlen(choices), sizeof(choices) - strlen(choices), "%s%s", i ? "|" : "",
                 p[i]->name);
    }
    assert_string_equal(ar_provider_names(), list);
    assert_string_equal(ar_provider_names_or(), or_);
    assert_string_equal(AR_PROVIDERS_OR, or_);
    assert_string_equal(AR_PROVIDERS_AND, and_);
    assert_string_equal(AR_PROVIDER_CHOICES, choices);
    assert_true(ar_provider_known("codex"));
    assert_false(ar_provider_known("auto"));
    assert_false(ar_provider_known(NULL));
}

static void test_retry_after_wordings(void **state)
{
    setenv("TZ", "UTC", 1);
    tzset();
    const long long now = 1795448520LL; /* 2026-11-23T15:42:00Z */
    static const struct {
        const char *msg;
        double want;
    } cases[] = {
        /* gemini, recorded: the RetryInfo retryDelay in its words, and its error dump */
        { "[API Error: Resource has been exhausted (e.g. check quota).\nSuggested retry after 7s.]",
          7 },
        { "  retryDelayMs: 7000,\n  status: 429", 7 },
        { "Please retry in 2.5s.", 2.5 },
        /* codex, recorded: usage limits name a local clock time */
        { "You\u2019ve hit your usage limit. Try again at 5:12 PM.", 5400 },
        { "You've hit your usage limit. Try again at Nov 25th, 2026 11:07 PM.",
          2 * 86400 + 7 * 3600 + 25 * 60 },
        { "Try again at 3:00 PM.", 23 * 3600 + 18 * 60 }, /* passed today: tomorrow */
        { "rate limited, try again in 2 hours 5 minutes", 2 * 3600 + 5 * 60 },
        /* claude's subscription limits */
        { "Claude AI usage limit reached|1795452120", 3600 },
        { "You've hit your limit \u00b7 resets 5pm (UTC)", 3600 + 18 * 60 },
        { "5-hour limit reached \u00b7 resets in 1h 30m", 5400 },
        { "Retry-After: 30", 30 },
        { "retry_after 1500ms", 1.5 },
        /* Edges: a wait of 0 is a wait of 0, not "nothing said"; a reset time that is not
         * after now is now for a Unix or a dated time, and tomorrow's for a bare clock time
         * (as one a minute earlier is). */
        { "Rate limit reached for gpt-5.5. Please try again in 0s.", 0 },
        { "Please retry in 0 seconds", 0 },
        { "  retryDelayMs: 0,\n  status: 429", 0 },
        { "Claude AI usage limit reached|1795448520", 0 }, /* now */
        { "Claude AI usage limit reached|1795448400", 0 }, /* two minutes ago */
        { "Claude AI usage limit reached|1795448521", 1 },
        { "You've hit your usage limit. Try again at Nov 23rd, 2026 3:42 PM.", 0 },
        { "You've hit your usage limit. Try again at Nov 23rd, 2026 3:30 PM.", 0 },
        { "You've hit your usage limit. Try again at 3:42 PM.", 86400 },
        { "You've hit your usage limit. Try again at 3:41 PM.", 86400 - 60 },
        { "You've hit your usage limit. Try again at 3:43 PM.", 60 },
        { "You've hit your limit \u00b7 resets 3:42pm (UTC)", 86400 },
        /* waits no clock holds: longer than any --max-wait, never 0 */
        { "Please retry after 1e30 seconds.", 1e30 },
        { "  retryDelayMs: 1e400,\n  status: 429", HUGE_VAL },
        { "Claude AI usage limit reached|99999999999999999999", HUGE_VAL },
        { "Retry-After: 1e999", HUGE_VAL },
        { "try again in 1e308 hours", HUGE_VAL },
        /* nothing to go by */
        { "exceeded retry limit, last status: 429 Too Many Requests", -1 },
        { "You\u2019ve hit your usage limit. Try again later.", -1 },
        { "resets 3 times a day", -1 },
        { "try again at the top of the hour", -1 },
        { "", -1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double got = ar_pv_retry_after(cases[i].msg, now);
        print_message("%s -> %.3f\n", cases[i].msg, got);
        assert_true(got == cases[i].want);
    }
    assert_true(ar_pv_retry_after(NULL, now) == -1);
    assert_true(ar_pv_transient(503, NULL));
    assert_false(ar_pv_transient(400, "overloaded"));
    assert_true(ar_pv_transient(0, "We\u2019re currently experiencing high demand"));
    assert_true(ar_pv_transient(0, "Overloaded"));
    assert_false(ar_pv_transient(0, "invalid request"));
}

/* codex says "declined" of a command its approval policy refused (CommandExecutionStatus in
 * codex-rs/exec/src/exec_events.rs): a refused shell call, never an action. */
static void test_codex_declined_command_is_a_refused_shell_call(void **state)
{
    static const char lines[] =
        "{\"type\":\"thread.started\",\"thread_id\":\"01a201a4-e6d7\"}\n"
        "{\"type\":\"turn.started\"}\n"
        "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"command_execution\","
        "\"command\":\"/bin/bash -lc 'rm -rf build'\",\"aggregated_output\":\"\","
        "\"exit_code\":null,\"status\":\"declined\"}}\n"
        "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":\"agent_message\","
        "\"text\":\"I removed build.\"}}\n"
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":0,"
        "\"output_tokens\":5}}\n";
    struct ar_call_spec spec = { 0 };
    spec.tools = AR_TOOLS_EDIT;
    spec.allow_edits = 1;
    const struct ar_provider *p = ar_provider_find("codex");
    struct ar_unwrap *u = p->unwrap_new(&spec);
    feed(p, u, lines, sizeof(lines) - 1, NULL, NULL);
    struct ar_reply r;
    struct ar_exit_info ex = { 0, 0, 0, NULL, 0 };
    p->unwrap_finish(u, &ex, &r);
    p->unwrap_free(u);
    assert_int_equal(r.error, 0);
    assert_int_equal(r.denied.n, 2);
    assert_string_equal(r.denied.v[0], "shell");
    assert_string_equal(r.denied.v[1], "/bin/bash -lc 'rm -rf build'");
    assert_false(r.acted);
    ar_reply_finish(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture_through_its_adapter),
        cmocka_unit_test(test_fixture_index_is_covered),
        cmocka_unit_test(test_killed_without_final_event_is_interrupted),
        cmocka_unit_test(test_claude_says_why_it_stopped),
        cmocka_unit_test(test_claude_cost_basis_unknown_is_not_a_price),
        cmocka_unit_test(test_claude_giving_up_is_not_an_api_error),
        cmocka_unit_test(test_plain_modes_are_not_wrappers),
        cmocka_unit_test(test_http_403_is_auth_like_401),
        cmocka_unit_test(test_not_logged_in_is_auth_in_agentruns_words),
        cmocka_unit_test(test_claude_usage_without_model_usage),
        cmocka_unit_test(test_claude_model_usage_sums_every_model),
        cmocka_unit_test(test_gemini_thoughts_count_as_output_and_reasoning),
        cmocka_unit_test(test_codex_plain_stderr_gives_tokens_and_session),
        cmocka_unit_test(test_gemini_stderr_error_object_is_the_last_one),
        cmocka_unit_test(test_gemini_loop_detection_is_empty),
        cmocka_unit_test(test_garbage_and_huge_lines_are_skipped),
        cmocka_unit_test(test_token_counts_past_uint64_saturate),
        cmocka_unit_test(test_truncated_stream_is_truncated),
        cmocka_unit_test(test_argv_for_every_option_combination),
        cmocka_unit_test(test_claude_posture_argv),
        cmocka_unit_test(test_codex_posture_argv),
        cmocka_unit_test(test_codex_mcp_names),
        cmocka_unit_test(test_codex_config_provider_and_key),
        cmocka_unit_test(test_codex_telemetry_only_where_no_rollout),
        cmocka_unit_test(test_codex_posture_turns_the_checkouts_skills_off),
        cmocka_unit_test(test_codex_posture_walks_every_skills_root),
        cmocka_unit_test(test_codex_text_calls_turn_the_users_skills_off),
        cmocka_unit_test(test_gemini_posture_private_home),
        cmocka_unit_test(test_gemini_model_is_never_routed),
        cmocka_unit_test(test_bin_override_and_bad_schema),
        cmocka_unit_test(test_claude_resumed_call_reports_its_own_usage_and_cost),
        cmocka_unit_test(test_contract_dialect_per_cli),
        cmocka_unit_test(test_claude_rate_limit_event_and_unknown_events),
        cmocka_unit_test(test_codex_rollout_version_and_rate_limits),
        cmocka_unit_test(test_version_fit_against_the_tested_range),
        cmocka_unit_test(test_codex_schema_is_made_strict),
        cmocka_unit_test(test_codex_strict_answer_unstricted_satisfies_the_contract),
        cmocka_unit_test(test_codex_strict_copy_of_a_2020_12_contract),
        cmocka_unit_test(test_claude_schema_is_draft_07_without_unknown_keywords),
        cmocka_unit_test(test_codex_resume_usage_is_per_call),
        cmocka_unit_test(test_codex_thread_rollout_is_found_by_id),
        cmocka_unit_test(test_codex_rollout_is_looked_for_in_the_day_its_thread_began),
        cmocka_unit_test(test_registry_order_find_resolve_and_model),
        cmocka_unit_test(test_classification_of_cli_messages),
        cmocka_unit_test(test_refused_tool_calls_from_recordings),
        cmocka_unit_test(test_come_back_times_from_recordings),
        cmocka_unit_test(test_only_missing_tools_that_act_are_refusals),
        cmocka_unit_test(test_retry_after_wordings),
        cmocka_unit_test(test_provider_names_in_help_are_the_registry),
        cmocka_unit_test(test_codex_declined_command_is_a_refused_shell_call),
    };
    /* gemini's private homes are kept under $XDG_CACHE_HOME: here, not the user's; and
     * the user's ~/.gemini/tmp they link to (gemini_posture.c) in a HOME of the test's. */
    char cache[] = "/tmp/agentrun-test-cache-XXXXXX";
    if (!mkdtemp(cache))
        return 1;
    setenv("XDG_CACHE_HOME", cache, 1);
    char home[sizeof(cache) + 8];
    snprintf(home, sizeof(home), "%s/home", cache);
    if (mkdir(home, 0700) != 0)
        return 1;
    setenv("HOME", home, 1);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char rm[128];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", cache);
    if (system(rm) != 0)
        rc = 1;
    return rc;
}
