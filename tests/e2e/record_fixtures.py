#!/usr/bin/env python3
"""Re-record tests/fixtures/<cli>/ from the real CLIs run against the loopback mock.

    AGENTRUN_E2E_BIN_DIR=/path/to/node_modules/.bin python3 tests/e2e/record_fixtures.py \
        [--out DIR] [CASE-PREFIX...]        (prefix e.g. "claude/" or "gemini/stream-error")

Each case runs one real CLI in a fresh isolated run root (see harness.py) with the
prompt on stdin and stdout/stderr to regular files, and writes
  tests/fixtures/<cli>/<name>.<ext>     stdout (jsonl, json or stdout)
  tests/fixtures/<cli>/<name>.stderr    stderr
  tests/fixtures/<cli>/index.json       per file: argv, exit status, the mock script
                                        (with the scripted usage), what it shows
The run root's path is replaced by /var/tmp/agentrun-e2e-FIXTURE (and claude's
project slug of it by -var-tmp-agentrun-e2e-FIXTURE-work) so re-recording gives
stable diffs; ids, timestamps and durations are kept as the CLI printed them.
"""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import Mock, RunRoot, run_cli  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures")
PLACEHOLDER = "/var/tmp/agentrun-e2e-FIXTURE"
PROMPT = "Say hello in one short sentence.\n"

CLAUDE_STREAM = ["-p", "--output-format", "stream-json", "--verbose"]
# How agentrun calls claude since issue 56: the prompt as one stream-json user message marked
# client_composed (options "composed": True sends PROMPT that way).
CLAUDE_IN = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
STARTUP_RESULTS = {"CLAUDE_CODE_STARTUP_FAILURE_RESULTS": "1"}
CLAUDE_JSON = ["-p", "--output-format", "json"]
CODEX_JSON = ["exec", "--json"]
GEMINI_STREAM = ["-o", "stream-json"]
GEMINI_JSON = ["-o", "json"]

U_MAIN = {"input": 1200, "cached": 300, "cache_write": 0, "output": 42}
U_TOOL1 = {"input": 900, "cached": 100, "output": 25}
U_TOOL2 = {"input": 1000, "cached": 800, "output": 12}
# A thinking model: output 342 of which 300 are thoughts (gemini: candidates 42 + thoughts 300).
U_THOUGHTS = {"input": 1200, "cached": 300, "cache_write": 0, "output": 342, "reasoning": 300}
TEXT = "Hello! This is the mock model answering."
FENCED = {"verdict": "ok", "issues": [], "score": 7}
SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string"},
                                           "score": {"type": "integer"}},
          "required": ["verdict", "score"], "additionalProperties": False}


def text(t=TEXT, usage=U_MAIN, **kw):
    return dict(kind="text", text=t, usage=usage, **kw)


def tool_then_text():
    return [dict(kind="tool_write", path="hello.txt", content="hello from the mock\n",
                 usage=U_TOOL1), text("I wrote hello.txt.", U_TOOL2)]


def write_outside_then_text():
    """A write the workspace does not hold: ../outside.txt from the work tree."""
    return [dict(kind="tool_write", path="../outside.txt", content="escaped\n",
                 usage=U_TOOL1), text("I wrote ../outside.txt.", U_TOOL2)]


# A user policy (~/.gemini/policies) that denies write_file.
GEMINI_DENY_WRITES = {".gemini/policies/deny-writes.toml":
                      '[[rule]]\ntoolName = "write_file"\ndecision = "deny"\npriority = 500\n'}


def shell_then_text():
    return [dict(kind="shell", command="echo shell-made > shell.txt && echo done",
                 usage=U_TOOL1), text("I ran the command.", U_TOOL2)]


ERR = {401: "auth", 403: "forbidden: a key without access", 429: "rate limit", 500: "server error"}


def cases():
    """(cli, name, ext, args, script, shows, options)"""
    c = []
    # ---------------------------------------------------------------- claude
    c += [
        ("claude", "stream-text", "jsonl", CLAUDE_STREAM, {"claude": [text()]},
         "text answer; scripted usage input 1200 (uncached), cache_read 300, output 42", {}),
        ("claude", "json-text", "json", CLAUDE_JSON, {"claude": [text()]},
         "json wrapper of a text answer", {}),
        ("claude", "stream-tool-write-outside", "jsonl",
         CLAUDE_STREAM + ["--permission-mode", "acceptEdits"],
         {"claude": write_outside_then_text()},
         "acceptEdits: Write of ../outside.txt (outside the working directory) is refused: "
         "permission_denials, exit 0", {}),
        ("claude", "plain-text", "stdout", ["-p"], {"claude": [text()]},
         "text mode: final text plus newline", {}),
        ("claude", "stream-fenced-json", "jsonl", CLAUDE_STREAM,
         {"claude": [dict(kind="json", value=FENCED, usage=U_MAIN)]},
         "answer is a ```json fenced block", {}),
        ("claude", "stream-schema", "jsonl", CLAUDE_STREAM + ["--json-schema", json.dumps(SCHEMA)],
         {"claude": [dict(kind="structured", value={"verdict": "ok", "score": 7}, usage=U_TOOL1),
                     text("done", U_TOOL2)]},
         "--json-schema: the model calls StructuredOutput; result has structured_output", {}),
        ("claude", "stream-tool-write", "jsonl", CLAUDE_STREAM + ["--permission-mode", "acceptEdits"],
         {"claude": tool_then_text()},
         "Write tool_use creating hello.txt, tool_result, then final text (2 turns); "
         "usage summed: input 1900, cache_read 900, output 37", {}),
        ("claude", "stream-tool-bash", "jsonl", CLAUDE_STREAM + ["--allowedTools", "Bash"],
         {"claude": shell_then_text()},
         "Bash tool_use running a command that writes shell.txt, tool_result, final text", {}),
        ("claude", "stream-tool-denied", "jsonl", CLAUDE_STREAM,
         {"claude": tool_then_text()},
         "default permission mode refuses Write: permission_denials[], is_error false, exit 0", {}),
        ("claude", "stream-tool-bash-denied", "jsonl", CLAUDE_STREAM,
         {"claude": shell_then_text()},
         "default permission mode refuses Bash: permission_denials[] names the command", {}),
        ("claude", "stream-error-429-retry-after", "jsonl", CLAUDE_STREAM,
         {"claude": [dict(kind="error", status=429, retry_after=7)]},
         "HTTP 429 with Retry-After: 7, CLAUDE_CODE_MAX_RETRIES=0: claude does not pass the "
         "wait on (the same text as without the header)", {}),
        ("claude", "stream-midstream-error", "jsonl", CLAUDE_STREAM,
         {"claude": [dict(kind="stream_error", text="partial ans", message="Overloaded"),
                     text("recovered answer", U_MAIN)]},
         "an SSE error event mid-stream after partial text: claude retries once without "
         "streaming (request 2 has no stream key) and gets the answer; NOTE the result's "
         "usage is all 0 while total_cost_usd counts the tokens", {}),
    ]
    c.append(("claude", "stream-not-logged-in", "jsonl", CLAUDE_STREAM, {"claude": [text()]},
              "no ANTHROPIC_API_KEY and no login: no model request; the assistant message has "
              "error authentication_failed and the text 'Not logged in · Please run /login', "
              "the result is_error with api_error_status null, exit 1",
              {"unset": ["ANTHROPIC_API_KEY"]}))
    for st in (401, 403, 429, 500):
        c.append(("claude", "stream-error-%d" % st, "jsonl", CLAUDE_STREAM,
                  {"claude": [dict(kind="error", status=st)]},
                  "HTTP %d (%s), CLAUDE_CODE_MAX_RETRIES=0" % (st, ERR[st]), {}))
    c += [
        ("claude", "json-error-500", "json", CLAUDE_JSON, {"claude": [dict(kind="error", status=500)]},
         "json wrapper of HTTP 500, no retries", {}),
        ("claude", "plain-error-500", "stdout", ["-p"], {"claude": [dict(kind="error", status=500)]},
         "text mode HTTP 500: the error goes to stdout, exit 1", {}),
        ("claude", "stream-sigint", "jsonl", CLAUDE_STREAM,
         {"claude": [dict(kind="hang", text="partial ans", usage=U_MAIN)]},
         "SIGINT to the CLI's PID while the stream hangs after partial text",
         {"signal": signal.SIGINT}),
        ("claude", "stream-sigterm", "jsonl", CLAUDE_STREAM,
         {"claude": [dict(kind="hang", text="partial ans", usage=U_MAIN)]},
         "SIGTERM to the CLI's PID while the stream hangs after partial text",
         {"signal": signal.SIGTERM}),
        ("claude", "stream-resume", "jsonl", CLAUDE_STREAM,
         {"claude": [text("first answer", U_TOOL1), text("second answer", U_MAIN)]},
         "second call with --resume <session id of the first> (stream-resume-first.jsonl); "
         "usage is per call", {"resume": True}),
        # issue 56 and 59, recorded with claude 2.1.337 (each entry's cli_version)
        ("claude", "stream-composed-text", "jsonl", CLAUDE_IN, {"claude": [text()]},
         "the prompt as one stream-json user message marked client_composed (agentrun's way "
         "since issue 56): the same output as a text prompt's", {"composed": True}),
        ("claude", "stream-startup-resume-not-found", "jsonl",
         CLAUDE_IN + ["--resume", "00000000-0000-4000-8000-000000000000"], {"claude": []},
         "--resume of a session that is not there: a zeroed error_during_execution result with "
         "startup_failure_reason resume_target_not_found, errors[] in claude's words, exit 1 "
         "(written with or without CLAUDE_CODE_STARTUP_FAILURE_RESULTS)",
         {"composed": True, "set_env": STARTUP_RESULTS}),
        ("claude", "stream-resume-not-found", "jsonl",
         CLAUDE_IN + ["--resume", "00000000-0000-4000-8000-000000000000"], {"claude": []},
         "--resume of a session that is not there, by a claude that has no "
         "startup_failure_reason (2.1.332): a zeroed error_during_execution result, num_turns 0, "
         "no terminal_reason, errors[] in claude's words, exit 1", {"composed": True}),
        ("claude", "stream-startup-config-invalid", "jsonl", CLAUDE_IN, {"claude": []},
         "~/.claude.json that does not parse: startup_failure_reason config_file_invalid and "
         "invalid_config_file {path, backup_path}, exit 1",
         {"composed": True, "set_env": STARTUP_RESULTS,
          "home_files": {".claude.json": "{not json"}}),
        ("claude", "stream-startup-proxy-invalid", "jsonl", CLAUDE_IN, {"claude": []},
         "HTTPS_PROXY that is not a URL, CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1: "
         "startup_failure_reason proxy_invalid (without the variable: stderr alone, exit 1)",
         {"composed": True, "set_env": dict(STARTUP_RESULTS, HTTPS_PROXY="::not a url::")}),
        ("claude", "stream-cost-basis-unknown", "jsonl", CLAUDE_IN + ["--model", "claude-unknown-9"],
         {"claude": [text()]},
         "a model claude has no price for: modelUsage[...].costBasis \"unknown\", its costUSD "
         "the default model's rate (a guess)", {"composed": True}),
        ("claude", "stream-sigint-result", "jsonl", CLAUDE_IN,
         {"claude": [dict(kind="hang", text="partial ans", usage=U_MAIN)]},
         "SIGINT to the PID 1.5 s into a stalled answer: the interrupt turn "
         "\"[Request interrupted by user]\", then a result error_during_execution, "
         "terminal_reason aborted_streaming, exit 0 (most runs)",
         {"composed": True, "signal": signal.SIGINT, "signal_after": 1.5,
          "until": lambda out: b'"type":"result"' in out}),
        ("claude", "stream-sigint-no-result", "jsonl", CLAUDE_IN,
         {"claude": [dict(kind="hang", text="partial ans", usage=U_MAIN)]},
         "SIGINT to the PID 1.5 s into a stalled answer: the interrupt turn and no result at "
         "all, exit 0 (about one run in six to twenty, 2.1.332 and 2.1.337)",
         {"composed": True, "signal": signal.SIGINT, "signal_after": 1.5, "tries": 60,
          "until": lambda out: b'"type":"result"' not in out and
          b"[Request interrupted by user" in out}),
        ("claude", "stream-sigint-early", "jsonl", CLAUDE_IN,
         {"claude": [dict(kind="hang", text="partial ans", usage=U_MAIN)]},
         "SIGINT to the PID 0.2 s after the start, before claude has set up: killed by the "
         "signal (exit_status -2), nothing on stdout",
         {"composed": True, "signal": signal.SIGINT, "signal_after": 0.2, "no_wait": True}),
    ]
    # ---------------------------------------------------------------- codex
    c += [
        ("codex", "json-text", "jsonl", CODEX_JSON, {"codex": [text()]},
         "text answer; scripted usage uncached 1200 + cached 300 -> input_tokens 1500", {}),
        ("codex", "json-ephemeral-telemetry", "jsonl", CODEX_JSON + ["--ephemeral"],
         {"codex": [text()]},
         "--ephemeral (no rollout file) with RUST_LOG=error,codex_otel.trace_safe=info: the "
         "events name no model, the telemetry lines on stderr do (model=gpt-5.5, from "
         "config.toml)", {"set_env": {"RUST_LOG": "error,codex_otel.trace_safe=info"}}),
        ("codex", "plain-text", "stdout", ["exec"], {"codex": [text()]},
         "plain mode: stdout only the final message; banner and 'tokens used' on stderr", {}),
        ("codex", "json-fenced-json", "jsonl", CODEX_JSON,
         {"codex": [dict(kind="json", value=FENCED, usage=U_MAIN)]},
         "answer is a ```json fenced block", {}),
        ("codex", "json-schema", "jsonl", CODEX_JSON + ["--output-schema", "@SCHEMA"],
         {"codex": [text(json.dumps({"verdict": "ok", "score": 7}))]},
         "--output-schema FILE: agent_message text is the JSON string", {}),
        ("codex", "json-tool-apply-patch", "jsonl", CODEX_JSON + ["--sandbox", "workspace-write"],
         {"codex": tool_then_text()},
         "apply_patch (custom tool) adding hello.txt: file_change item, then final text; "
         "usage summed over 2 requests", {}),
        ("codex", "json-tool-shell", "jsonl", CODEX_JSON + ["--sandbox", "workspace-write"],
         {"codex": shell_then_text()},
         "exec_command writing shell.txt: command_execution items (no file_change), final text",
         {}),
        ("codex", "json-tool-rejected", "jsonl", CODEX_JSON,
         {"codex": tool_then_text()},
         "read-only sandbox rejects the patch; exit 0", {}),
        ("codex", "json-tool-write-outside", "jsonl", CODEX_JSON + ["--sandbox", "workspace-write"],
         {"codex": write_outside_then_text()},
         "workspace-write sandbox: a patch adding ../outside.txt (outside the workspace) is "
         "rejected; exit 0", {}),
        ("codex", "json-tool-shell-readonly", "jsonl", CODEX_JSON,
         {"codex": shell_then_text()},
         "read-only sandbox: the command writing shell.txt fails (Read-only file system); "
         "neither stdout nor stderr records it, exit 0", {}),
        ("codex", "json-error-429-usage-limit", "jsonl", CODEX_JSON,
         {"codex": [dict(kind="error", status=429, resets_in_seconds=5400)]},
         "HTTP 429 usage_limit_reached with resets_in_seconds 5400: 'Try again at H:MM PM.' "
         "(local time, the recorder's TZ was UTC)", {}),
        ("codex", "json-stream-failed", "jsonl", CODEX_JSON,
         {"codex": [dict(kind="stream_error", text="partial ans", message="mock stream failure")]},
         "response.failed after partial text", {}),
        ("codex", "plain-error-500", "stdout", ["exec"], {"codex": [dict(kind="error", status=500)]},
         "plain mode HTTP 500: stdout empty, ERROR on stderr", {}),
        ("codex", "json-output-last-message", "jsonl", CODEX_JSON + ["-o", "@LASTMSG"],
         {"codex": [text()]},
         "-o FILE: the file (json-output-last-message.txt) holds the final message", {}),
        ("codex", "json-sigterm", "jsonl", CODEX_JSON,
         {"codex": [dict(kind="hang", text="partial ans")]},
         "SIGTERM to the CLI's PID while the stream hangs", {"signal": signal.SIGTERM}),
        ("codex", "json-sigint", "jsonl", CODEX_JSON,
         {"codex": [dict(kind="hang", text="partial ans")]},
         "SIGINT to the CLI's PID while the stream hangs", {"signal": signal.SIGINT}),
        ("codex", "json-resume", "jsonl", CODEX_JSON,
         {"codex": [text("first answer", U_TOOL1), text("second answer", U_MAIN)]},
         "exec resume <thread id> (json-resume-first.jsonl is call 1): usage is cumulative "
         "over the thread", {"resume": True}),
    ]
    for st in (401, 403, 429, 500):
        c.append(("codex", "json-error-%d" % st, "jsonl", CODEX_JSON,
                  {"codex": [dict(kind="error", status=st)]},
                  "HTTP %d (%s), request_max_retries=0 stream_max_retries=0" % (st, ERR[st]), {}))
    # ---------------------------------------------------------------- gemini
    c += [
        ("gemini", "stream-text", "jsonl", GEMINI_STREAM, {"gemini": [text()]},
         "text answer; scripted usage uncached 1200 + cached 300 -> input_tokens 1500; "
         "router call (gemini-3.5-flash-lite) scripted with 0 tokens", {}),
        ("gemini", "json-text", "json", GEMINI_JSON, {"gemini": [text()]},
         "json object of a text answer (no trailing newline)", {}),
        ("gemini", "stream-thoughts", "jsonl", GEMINI_STREAM + ["-m", "gemini-2.5-pro"],
         {"gemini": [text(usage=U_THOUGHTS)]},
         "a thinking answer: scripted candidates 42 + thoughts 300 (output 342), uncached 1200 "
         "+ cached 300; -m gemini-2.5-pro (no router call, a priced model)", {}),
        ("gemini", "json-thoughts", "json", GEMINI_JSON + ["-m", "gemini-2.5-pro"],
         {"gemini": [text(usage=U_THOUGHTS)]},
         "json object of a thinking answer: tokens.candidates 42, tokens.thoughts 300", {}),
        ("gemini", "plain-text", "stdout", [], {"gemini": [text()]},
         "text mode", {}),
        ("gemini", "stream-fenced-json", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="json", value=FENCED, usage=U_MAIN)]},
         "answer is a ```json fenced block", {}),
        ("gemini", "stream-tool-write", "jsonl", GEMINI_STREAM + ["--approval-mode", "auto_edit"],
         {"gemini": tool_then_text()},
         "write_file functionCall creating hello.txt, then final text", {}),
        ("gemini", "stream-tool-shell", "jsonl", GEMINI_STREAM + ["--yolo"],
         {"gemini": shell_then_text()},
         "run_shell_command writing shell.txt (--yolo), then final text", {}),
        ("gemini", "stream-tool-write-outside", "jsonl",
         GEMINI_STREAM + ["--approval-mode", "auto_edit"],
         {"gemini": write_outside_then_text()},
         "auto_edit: write_file of ../outside.txt is refused as invalid_tool_params 'Path not "
         "in workspace'; result success, exit 0", {}),
        ("gemini", "stream-tool-policy-deny", "jsonl",
         GEMINI_STREAM + ["--approval-mode", "auto_edit"],
         {"gemini": tool_then_text()},
         "a user policy (~/.gemini/policies) denies write_file: policy_violation; result "
         "success, exit 0", {"home_files": GEMINI_DENY_WRITES}),
        ("gemini", "stream-tool-default", "jsonl", GEMINI_STREAM,
         {"gemini": tool_then_text()},
         "default approval mode: write_file is not offered; the model is told it is not found", {}),
        ("gemini", "stream-tool-shell-default", "jsonl", GEMINI_STREAM,
         {"gemini": shell_then_text()},
         "default approval mode: run_shell_command is not offered (tool_not_registered)", {}),
        ("gemini", "stream-error-429-retry-after", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="error", status=429, retry_after=7)]},
         "HTTP 429 with Retry-After: 7 and a RetryInfo retryDelay '7s', maxAttempts 1: the "
         "result's message says 'Suggested retry after 7s.'", {}),
        ("gemini", "stream-loop-detected", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="repetitive", bytes=65536, usage=U_MAIN, times=2)]},
         "a repetitive answer trips loop detection; gemini re-asks once with a 'System: "
         "Potential loop detected' nudge; the second repetitive answer ends the run: warning "
         "event 'Loop detected, stopping execution', result success, no text, 0 tokens, exit 0",
         {}),
        ("gemini", "stream-loop-nudge", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="repetitive", bytes=65536, usage=U_MAIN), text()]},
         "loop detected on the first answer; the nudged second request gets a normal answer, "
         "yet the run still ends with 'Loop detected, stopping execution', no text, 0 tokens, "
         "status success, exit 0", {}),
        ("gemini", "stream-cut", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="stream_error", text="partial ans")]},
         "the SSE stream ends after partial text without finishReason", {}),
        ("gemini", "stream-no-key", "jsonl", GEMINI_STREAM, {"gemini": [text()]},
         "auth method gemini-api-key (settings.json) but no GEMINI_API_KEY: no request, "
         "nothing on stdout, the reason on stderr, exit 41 (FATAL_AUTHENTICATION_ERROR)",
         {"unset": ["GEMINI_API_KEY"]}),
        ("gemini", "stream-no-auth-method", "jsonl", GEMINI_STREAM, {"gemini": [text()]},
         "no settings.json and no auth variable (a fresh HOME): no request, 'Please set an "
         "Auth method' on stderr, exit 41",
         {"unset": ["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"], "no_gemini_settings": True}),
        ("gemini", "json-error-401", "json", GEMINI_JSON, {"gemini": [dict(kind="error", status=401)]},
         "HTTP 401: stdout empty, error JSON at the end of stderr, exit 401&255", {}),
        ("gemini", "json-error-500", "json", GEMINI_JSON, {"gemini": [dict(kind="error", status=500)]},
         "HTTP 500 with maxAttempts 1", {}),
        ("gemini", "plain-error-500", "stdout", [], {"gemini": [dict(kind="error", status=500)]},
         "text mode HTTP 500", {}),
        ("gemini", "stream-sigterm-group", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="hang", text="partial ans")]},
         "SIGTERM to the process group (parent + relaunched child) while the stream hangs",
         {"signal": signal.SIGTERM, "group": True}),
        ("gemini", "stream-sigint-group", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="hang", text="partial ans")]},
         "SIGINT to the process group while the stream hangs",
         {"signal": signal.SIGINT, "group": True}),
        ("gemini", "stream-sigterm-pid", "jsonl", GEMINI_STREAM,
         {"gemini": [dict(kind="hang", text="partial ans")]},
         "SIGTERM to the parent PID only: ignored; the harness SIGKILLs the group after 5 s "
         "(exit_status 'timeout')", {"signal": signal.SIGTERM, "timeout": 5}),
        ("gemini", "stream-resume", "jsonl", GEMINI_STREAM,
         {"gemini": [text("first answer", U_TOOL1), text("second answer", U_MAIN)]},
         "--resume <session id> (stream-resume-first.jsonl is call 1): usage per call",
         {"resume": True}),
    ]
    for st in (401, 403, 429, 500):
        c.append(("gemini", "stream-error-%d" % st, "jsonl", GEMINI_STREAM,
                  {"gemini": [dict(kind="error", status=st)]},
                  "HTTP %d (%s), maxAttempts 1" % (st, ERR[st]), {}))
    return c


def scrub(data, root, port=None):
    slug = root.root.replace("/", "-").replace("_", "-").replace(".", "-")
    data = data.replace(root.root.encode(), PLACEHOLDER.encode())
    data = data.replace(slug.encode(), PLACEHOLDER.replace("/", "-").encode())
    if port:
        data = data.replace(b"127.0.0.1:%d" % port, b"127.0.0.1:PORT")
    nm = os.path.dirname(os.path.realpath(harness.bin_dir()))
    data = data.replace(nm.encode(), b"NODE_MODULES")
    return data


def session_of(cli, out):
    for line in out.decode(errors="replace").splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if cli == "codex" and o.get("type") == "thread.started":
            return o["thread_id"]
        if cli != "codex" and o.get("session_id"):
            return o["session_id"]
    return None


def record(case, index):
    cli, name, ext, args, script, shows, opt = case
    outdir = os.path.join(FIXTURES, cli)
    os.makedirs(outdir, exist_ok=True)
    mock = Mock(script).start()
    root = RunRoot(mock.port)
    try:
        for rel, content in opt.get("home_files", {}).items():
            path = os.path.join(root.home, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(content)
        args = list(args)
        extra = {}
        for i, a in enumerate(args):
            if a == "@SCHEMA":
                p = os.path.join(root.root, "schema.json")
                with open(p, "w") as f:
                    json.dump(SCHEMA, f)
                args[i] = p
            if a == "@LASTMSG":
                args[i] = os.path.join(root.root, "last-message.txt")
                extra["lastmsg"] = args[i]
        kw = {"timeout": 60}
        if opt.get("unset") or opt.get("set_env"):
            kw["env"] = {k: v for k, v in root.env(cli).items()
                         if k not in opt.get("unset", [])}
            kw["env"].update(opt.get("set_env", {}))
        if opt.get("no_gemini_settings"):
            os.remove(os.path.join(root.home, ".gemini", "settings.json"))
        if opt.get("signal"):
            # The signal goes signal_after seconds after this run's first model request (the
            # log holds earlier tries' too), or after the start with no_wait.
            seen = [0]
            kw.update(sig=opt["signal"], signal_group=opt.get("group", False),
                      signal_after=opt.get("signal_after", 0.5),
                      wait_for=(lambda: True) if opt.get("no_wait")
                      else (lambda: len(mock.model_requests(cli)) > seen[0]))
            if opt.get("timeout"):
                # signal, then wait at most `timeout` s more before the group is killed
                kw["timeout"] = opt["timeout"] + 30
        if opt.get("resume"):
            first = run_cli(cli, args, root, stdin=PROMPT, **kw)
            sid = session_of(cli, first.stdout)
            write(outdir, name + "-first." + ext, scrub(first.stdout, root, mock.port))
            write(outdir, name + "-first.stderr", scrub(first.stderr, root, mock.port))
            index[name + "-first." + ext] = entry(cli, args, first, script, "call 1 of " + name, root)
            if cli == "claude":
                args = args + ["--resume", sid]
            elif cli == "codex":
                args = ["exec", "resume", "--json", sid, "-"]
            else:
                args = args + ["--resume", sid]
        stdin = "Second question.\n" if opt.get("resume") else PROMPT
        if opt.get("composed"):
            stdin = json.dumps({"type": "user", "message": {"role": "user", "content": stdin},
                                "client_composed": True}) + "\n"
        # A timing-dependent outcome: again, on a fresh script, until it shows.
        for tries in range(opt.get("tries", 20) if opt.get("until") else 1):
            if tries:
                mock.set_script(script)
            if opt.get("signal"):
                seen[0] = len(mock.model_requests(cli))
            if opt.get("timeout") and opt.get("signal"):
                r = run_cli_sig_timeout(cli, args, root, mock, opt)
            else:
                r = run_cli(cli, args, root, stdin=stdin, **kw)
            if not opt.get("until") or opt["until"](r.stdout):
                break
        else:
            raise SystemExit("%s/%s: the outcome did not show in %d tries" % (cli, name, tries + 1))
        write(outdir, name + "." + ext, scrub(r.stdout, root, mock.port))
        write(outdir, name + ".stderr", scrub(r.stderr, root, mock.port))
        index[name + "." + ext] = entry(cli, args, r, script, shows, root, opt.get("composed"))
        if extra.get("lastmsg") and os.path.exists(extra["lastmsg"]):
            with open(extra["lastmsg"], "rb") as f:
                write(outdir, name + ".txt", f.read())
        left = harness.leftover_processes(root)
        if left:
            index[name + "." + ext]["leftover_processes"] = [c for _, c in left]
            harness.kill_leftovers(root)
        print("%-7s %-28s exit %-8s %.1fs" % (cli, name, r.status, r.duration), flush=True)
    finally:
        mock.stop()
        harness.kill_leftovers(root)
        root.cleanup()
        mock.cleanup()


def run_cli_sig_timeout(cli, args, root, mock, opt):
    """Signal the PID, then give the CLI opt['timeout'] seconds before killing the group."""
    import subprocess
    import tempfile
    argv = [harness.cli_path(cli)] + list(args)
    d = tempfile.mkdtemp(dir=root.root)
    fi = open(os.path.join(d, "in"), "w+b")
    fi.write(PROMPT.encode())
    fi.seek(0)
    fo, fe = open(os.path.join(d, "out"), "w+b"), open(os.path.join(d, "err"), "w+b")
    t0 = time.time()
    p = subprocess.Popen(argv, cwd=root.work, env=root.env(cli), stdin=fi, stdout=fo, stderr=fe,
                         start_new_session=True)
    while not mock.model_requests(cli) and time.time() - t0 < 30:
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(opt["signal"])
    # Reaped after the group kill (see harness.run_cli): the kill cannot reach another
    # process that got the number.
    done = harness.wait_exited(p, opt["timeout"])
    harness.kill_group(p.pid)
    rc = p.wait()
    status = rc if done else "timeout"
    fo.seek(0)
    fe.seek(0)
    return harness.Result(argv, status, fo.read(), fe.read(), time.time() - t0)


VERSIONS = {}


def entry(cli, args, r, script, shows, root, composed=False):
    return {"argv": [cli] + [a.replace(root.root, PLACEHOLDER) for a in args],
            "stdin": "the prompt as one stream-json user message, client_composed"
            if composed else "prompt on stdin (a regular file)",
            "exit_status": r.status,
            "script": script,
            "shows": shows,
            "cli_version": (VERSIONS.get(cli) or [None])[0]}


def write(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    global FIXTURES
    want = sys.argv[1:]
    if want[:1] == ["--out"]:
        FIXTURES, want = os.path.abspath(want[1]), want[2:]
    harness.require_clis()
    versions = {}
    for cli in harness.CLIS:
        import subprocess
        root = RunRoot(1)
        v = subprocess.run([harness.cli_path(cli), "--version"], env=root.env(cli), cwd=root.work,
                           capture_output=True, text=True, timeout=60)
        versions[cli] = (v.stdout.strip() or v.stderr.strip()).splitlines()[-1:]
        root.cleanup()
    VERSIONS.update(versions)
    indexes = {}
    for case in cases():
        cli, name = case[0], case[1]
        if want and not any((cli + "/" + name).startswith(w) for w in want):
            continue
        path = os.path.join(FIXTURES, cli, "index.json")
        if cli not in indexes:
            indexes[cli] = json.load(open(path)) if os.path.exists(path) else {}
        files = indexes[cli].setdefault("files", {})
        record(case, files)
        # The version of the first recordings; an entry recorded since names its own.
        indexes[cli].setdefault("cli_version", versions[cli][0] if versions[cli] else None)
        indexes[cli]["recorded"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        indexes[cli]["files"] = dict(sorted(files.items()))
        with open(path, "w") as f:
            json.dump(indexes[cli], f, indent=2, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
