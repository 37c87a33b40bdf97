"""agentrun mcp (docs/mcp.md): the MCP server driven over pipes, as a client would, with
the fake CLI standing in for the real ones."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, Sandbox, alive, claude_stream  # noqa: E402

TOOLS = ["run", "review", "extract", "prioritize", "route"]


class Server:
    """agentrun mcp ARGS in the sandbox's work tree, spoken to line by line."""

    def __init__(self, sb, *args, env=None, cwd=None, provider="codex"):
        e = dict(sb.env)
        if provider:
            e["AGENTRUN_PROVIDER"] = provider
        e.update(env or {})
        self.p = subprocess.Popen([AGENTRUN, "mcp", *args], cwd=cwd or sb.work, env=e,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.buf = b""
        self.seen = []  # every message read, in order
        self.next_id = 100

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def recv(self, timeout=20):
        m = self.poll(timeout)
        if m is None:
            raise AssertionError("no message from the server in %s s" % timeout)
        return m

    def poll(self, timeout=0):
        """The next message, or None when none came within timeout seconds (0: only one
        that is already there)."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], max(0, end - time.monotonic()))
            if not r:
                if time.monotonic() >= end:
                    return None
                continue
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError("the server closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)  # anything on stdout that is not JSON fails here
        self.assertish(msg)
        self.seen.append(msg)
        return msg

    @staticmethod
    def assertish(msg):
        if msg.get("jsonrpc") != "2.0":
            raise AssertionError("not a JSON-RPC 2.0 message: %r" % msg)

    def request(self, method, params=None, timeout=20):
        self.next_id += 1
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.answer(rid, timeout)

    def answer(self, rid, timeout=20):
        """The response to rid; notifications before it are kept in self.seen."""
        while True:
            m = self.recv(timeout)
            if m.get("id") == rid and ("result" in m or "error" in m):
                return m

    def initialize(self, version="2025-06-18"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def call(self, name, args, meta=None, timeout=30):
        params = {"name": name, "arguments": args}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params, timeout)

    def close(self, timeout=20):
        self.p.stdin.close()
        out = self.p.stdout.read()
        err = self.p.stderr.read()
        rc = self.p.wait(timeout)
        return rc, out, err.decode(errors="replace")

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def wait_for(pred, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


class McpCase(unittest.TestCase):
    def server(self, sb, *args, **kw):
        s = Server(sb, *args, **kw)
        self.addCleanup(s.kill)
        return s


class Lifecycle(McpCase):
    def test_initialize_negotiates_either_version_and_answers_others_with_the_latest(self):
        with Sandbox(git=False) as sb:
            for asked, got in [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
                               ("2024-11-05", "2025-11-25")]:
                s = self.server(sb)
                r = s.initialize(asked)["result"]
                self.assertEqual(r["protocolVersion"], got)
                self.assertEqual(r["serverInfo"]["name"], "agentrun")
                self.assertIn("tools", r["capabilities"])
                rc, out, err = s.close()
                self.assertEqual((rc, out), (0, b""), err)

    def test_started_in_a_terminal_it_says_what_it_waits_for(self):
        # Issue 59: `agentrun mcp` typed at a terminal printed nothing and seemed to hang.
        import pty
        with Sandbox(git=False) as sb:
            master, slave = pty.openpty()
            self.addCleanup(os.close, master)
            p = subprocess.Popen([AGENTRUN, "mcp"], cwd=sb.work, env=sb.env, stdin=slave,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            os.close(slave)
            self.addCleanup(p.kill)
            err = b""
            end = time.monotonic() + 20
            while b"claude mcp add agentrun -- agentrun mcp" not in err:
                r, _, _ = select.select([p.stderr], [], [], max(0, end - time.monotonic()))
                self.assertTrue(r, "no word on stderr: %r" % err)
                err += os.read(p.stderr.fileno(), 4096)
            self.assertIn(b"waiting for JSON-RPC messages on stdin", err)
            # It still serves the terminal's lines, and Ctrl-D ends it.
            os.write(master, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
            r, _, _ = select.select([p.stdout], [], [], 20)
            self.assertTrue(r)
            self.assertEqual(json.loads(os.read(p.stdout.fileno(), 4096)),
                             {"jsonrpc": "2.0", "id": 1, "result": {}})
            os.write(master, b"\x04")
            self.assertEqual(p.wait(timeout=20), 0)
            p.stdout.close()
            p.stderr.close()
        # Over a pipe, as a client starts it, stderr stays the client's log: no such note.
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize()
            rc, out, err = s.close()
            self.assertNotIn("waiting for JSON-RPC", err)

    def test_tools_list_has_exactly_the_five_tools_with_both_schemas(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize()
            tools = s.request("tools/list")["result"]["tools"]
            self.assertEqual([t["name"] for t in tools], TOOLS)
            for t in tools:
                self.assertEqual(t["inputSchema"]["type"], "object")
                self.assertEqual(t["outputSchema"]["type"], "object")
                self.assertTrue(t["description"])
                self.assertNotIn("trust_project", t["inputSchema"]["properties"])
            self.assertTrue(tools[0]["annotations"]["readOnlyHint"])

    def test_requests_before_initialize_are_refused_but_ping_answers(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            self.assertEqual(s.request("ping")["result"], {})
            e = s.request("tools/list")["error"]
            self.assertEqual(e["code"], -32600)
            self.assertIn("not initialized", e["message"])
            s.initialize()
            self.assertEqual(s.request("initialize", {"protocolVersion": "2025-06-18"})
                             ["error"]["code"], -32600)
            self.assertIn("tools", s.request("tools/list")["result"])

    def test_a_tool_call_before_initialize_is_refused_and_runs_nothing(self):
        # MCP's lifecycle: a client sends nothing but ping before initialize's answer; the
        # spec names no error for one that does, and the official SDKs answer -32600
        # (python-sdk #2411, java-sdk #1054), as this server does for every method.
        with Sandbox() as sb:
            sb.answers("codex", ["fine"])
            s = self.server(sb)
            for params in [{"name": "run", "arguments": {"prompt": "x"}},
                           {"name": "extract", "arguments": {"text": '{"a": 1}'}},
                           {"name": "run", "arguments": {"prompt": "x"}, "task": {}}]:
                e = s.request("tools/call", params)
                self.assertEqual(e.get("error", {}).get("code"), -32600, e)
                self.assertIn("not initialized", e["error"]["message"])
            for method in ["tasks/list", "tasks/get", "tasks/result", "tasks/cancel"]:
                self.assertEqual(s.request(method, {"taskId": "x"})["error"]["code"], -32600)
            time.sleep(0.3)
            self.assertEqual(sb.calls(), [])  # no CLI was started
            s.initialize()
            self.assertFalse(s.call("run", {"prompt": "x"})["result"]["isError"])
            self.assertEqual(len(sb.calls()), 1)


class Extract(McpCase):
    def test_extract_gives_the_value_as_written(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize()
            text = 'Here it is:\n```json\n{"price": 1.50, "big": 12345678901234567890}\n```\n'
            r = s.call("extract", {"text": text})["result"]
            self.assertFalse(r["isError"])
            sc = r["structuredContent"]
            self.assertTrue(sc["found"])
            self.assertEqual(sc["json"], '{"price":1.50,"big":12345678901234567890}')
            self.assertEqual(sc["value"]["price"], 1.5)
            self.assertTrue(sc["fenced"])
            self.assertEqual(r["content"], [{"type": "text", "text": sc["json"]}])

    def test_extract_repairs_code_blocks_and_sections(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize()
            r = s.call("extract", {"text": "{'a': 1,}", "repair": True})["result"]
            self.assertEqual(r["structuredContent"]["json"], '{"a":1}')
            self.assertIn("single_quotes", r["structuredContent"]["fixes"])
            r = s.call("extract", {"text": "x\n```sh\nls\n```\n", "code": True})["result"]
            self.assertEqual(r["structuredContent"]["blocks"], ["ls\n"])
            r = s.call("extract", {"text": "# A\none\n# B\ntwo\n", "section": "B"})["result"]
            self.assertEqual(r["structuredContent"]["section"], "two\n")
            r = s.call("extract", {"text": '[1] {"a": 2} {"a": "x"}', "all": True})["result"]
            self.assertEqual([v["json"] for v in r["structuredContent"]["values"]],
                             ['{"a":2}', '{"a":"x"}'])

    def test_extract_with_a_schema_and_nothing_found_are_error_results(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize()
            schema = {"type": "object", "required": ["n"],
                      "properties": {"n": {"type": "integer"}}}
            r = s.call("extract", {"text": '{"n": "x"} then {"n": 3}', "schema": schema})
            self.assertEqual(r["result"]["structuredContent"]["json"], '{"n":3}')
            r = s.call("extract", {"text": '{"n": "x"}', "schema": schema})["result"]
            self.assertTrue(r["isError"])
            self.assertIn("/n", r["content"][0]["text"])
            r = s.call("extract", {"text": "no json at all"})["result"]
            self.assertTrue(r["isError"])
            self.assertFalse(r["structuredContent"]["found"])


class Run(McpCase):
    def test_run_returns_the_run_result_with_progress(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"answer": 42}'])
            s = self.server(sb)
            s.initialize()
            r = s.call("run", {"prompt": "the answer?", "json": True},
                       meta={"progressToken": "tok"})["result"]
            self.assertFalse(r["isError"], r)
            sc = r["structuredContent"]
            self.assertEqual(sc["schema"], "agentrun.run/1")
            self.assertTrue(sc["ok"])
            self.assertEqual(sc["json"], {"answer": 42})
            self.assertEqual(sc["provider"], "codex")
            self.assertEqual(sc["posture"]["tools"], "read")
            self.assertFalse(sc["posture"]["project_config"])
            self.assertTrue(r["content"][0]["text"].startswith("ok: codex"))
            self.assertIn('{"answer":42}', r["content"][0]["text"])
            progress = [m["params"] for m in s.seen if m.get("method") == "notifications/progress"]
            self.assertTrue(progress)
            self.assertTrue(all(p["progressToken"] == "tok" for p in progress))
            values = [p["progress"] for p in progress]
            self.assertEqual(values, sorted(set(values)))
            self.assertTrue(any("call started" in p["message"] for p in progress), progress)
            call = sb.calls()[0]
            self.assertEqual(call["argv0"], "codex")
            self.assertEqual(call["stdin"].strip()[-11:], "the answer?")

    def test_progress_names_each_tool_the_cli_uses_once(self):
        with Sandbox() as sb:
            sid = "a12149e5-57b9-4101-8896-0e79223f8ed2"
            use = {"type": "assistant", "session_id": sid, "message": {
                "id": "m0", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
                "content": [{"type": "tool_use", "id": "t1", "name": "Read",
                             "input": {"file_path": "/x/README"}}],
                "usage": {"input_tokens": 1, "output_tokens": 1}}}
            stream = claude_stream("done").splitlines(True)
            sb.env["FAKE_CLI_FIXTURE"] = sb.fixture(
                stream[0] + json.dumps(use) + "\n" + json.dumps(use) + "\n" + "".join(stream[1:]))
            s = self.server(sb, provider="claude")
            s.initialize()
            r = s.call("run", {"prompt": "x"}, meta={"progressToken": 9})["result"]
            self.assertFalse(r["isError"], r)
            messages = [m["params"]["message"] for m in s.seen
                        if m.get("method") == "notifications/progress"]
            self.assertEqual(messages, ["queued", "claude main call started",
                                        "claude uses Read: /x/README",
                                        "claude main call finished: exit 0"])

    def test_a_failed_run_is_an_error_result_holding_the_run_result(self):
        with Sandbox() as sb:
            s = self.server(sb, env={"AGENTRUN_CODEX_BIN": "/nonexistent/codex"})
            s.initialize()
            r = s.call("run", {"prompt": "x"})["result"]
            self.assertTrue(r["isError"])
            self.assertEqual(r["structuredContent"]["error"]["code"], "not_found")
            self.assertTrue(r["content"][0]["text"].startswith("failed (not_found"))

    def test_calls_run_side_by_side_up_to_jobs(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"a": 1}'])
            s = self.server(sb, "-j", "2", env={"FAKE_CLI_SLEEP_MS": "1500"})
            s.initialize()
            t0 = time.monotonic()
            for i in range(2):
                s.send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                        "params": {"name": "run", "arguments": {"prompt": "p%d" % i}}})
            answers = {}
            while len(answers) < 2:
                m = s.recv(30)
                if "id" in m:
                    answers[m["id"]] = m
            took = time.monotonic() - t0
            self.assertTrue(all(not a["result"]["isError"] for a in answers.values()), answers)
            self.assertLess(took, 2.9, "two 1.5 s calls with -j 2 ran one after the other")


class OtherTools(McpCase):
    def test_review_of_a_diff_revision_and_instructions_from_git(self):
        with Sandbox() as sb:
            sb.write("app.c", "int main(void)\n{\n    return 0;\n}\n")
            sb.write("REVIEW.md", "Check null pointers.\n")
            sb.git("add", "app.c", "REVIEW.md")
            sb.git("commit", "-q", "-m", "app")
            sb.write("app.c", "int main(void)\n{\n    char *p = 0;\n    return *p;\n}\n")
            finding = {"file": "app.c", "line": 3, "severity": "high", "message": "null deref"}
            sb.answers("codex", ["```json\n" + json.dumps(
                {"passed": False, "summary": "one bug", "issues": [finding]}) + "\n```"])
            s = self.server(sb)
            s.initialize()
            r = s.call("review", {"instructions": "HEAD:REVIEW.md", "fail_on": "high"},
                       meta={"progressToken": 1})["result"]
            self.assertFalse(r["isError"], r)  # findings are a result, not an error
            sc = r["structuredContent"]
            self.assertEqual(sc["schema"], "agentrun.review/1")
            self.assertEqual([i["file"] for i in sc["issues"]], ["app.c"])
            self.assertIn("null deref", r["content"][0]["text"])
            self.assertIn("Check null pointers.", sb.calls()[0]["stdin"])
            self.assertTrue(any("chunk 1 of 1" in m["params"]["message"] for m in s.seen
                                if m.get("method") == "notifications/progress"))
            # The instructions as a file outside the allowed directories are refused.
            outside = sb.write("outside.md", "x", base=sb.root)
            r = s.call("review", {"instructions": outside})["result"]
            self.assertTrue(r["isError"])
            self.assertIn("--allow-dir", r["content"][0]["text"])
            self.assertEqual(len(sb.calls()), 1)

    def test_review_of_diff_text(self):
        with Sandbox() as sb:
            sb.answers("codex", ["```json\n" + json.dumps(
                {"passed": True, "summary": "fine", "issues": []}) + "\n```"])
            s = self.server(sb)
            s.initialize()
            diff = ("diff --git a/x.txt b/x.txt\nnew file mode 100644\n--- /dev/null\n"
                    "+++ b/x.txt\n@@ -0,0 +1 @@\n+hello\n")
            r = s.call("review", {"diff": diff})["result"]
            self.assertFalse(r["isError"], r)
            self.assertTrue(r["structuredContent"]["passed"])
            self.assertIn("+hello", sb.calls()[0]["stdin"])

    def test_prioritize_and_route(self):
        with Sandbox(git=False) as sb:
            sb.write("prds/auth.md", "# Auth\nLogin.\n")
            sb.write("prds/billing.md", "# Billing\nInvoices.\n")
            sb.answers("codex", [json.dumps({"recommendations": [
                {"prd_id": "auth", "priority": 1, "rationale": "first"},
                {"prd_id": "billing", "priority": 2, "rationale": "then"}]})])
            s = self.server(sb)
            s.initialize()
            r = s.call("prioritize", {"dir": "prds"})["result"]
            self.assertFalse(r["isError"], r)
            self.assertEqual([x["prd_id"] for x in r["structuredContent"]["recommendations"]],
                             ["auth", "billing"])
            self.assertIn("1. auth", r["content"][0]["text"])
            manifest = {"tasks": [{"name": "login", "description": "set up user login"}],
                        "skills": []}
            r = s.call("route", {"query": "login", "manifest": manifest, "no_llm": True})
            r = r["result"]
            self.assertFalse(r["isError"], r)
            self.assertEqual(r["structuredContent"]["route"], "exact")
            self.assertEqual(len(sb.calls()), 1)  # the exact tier: no model call


class Cancel(McpCase):
    def test_cancelled_leaves_no_process_and_no_answer(self):
        with Sandbox() as sb:
            pidfile = os.path.join(sb.root, "grandchildren")
            s = self.server(sb, env={"FAKE_CLI_HANG": "1", "FAKE_CLI_GRANDCHILD": "keep-pipes",
                                     "FAKE_CLI_PIDFILE": pidfile})
            s.initialize()
            s.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "run", "arguments": {"prompt": "hang"}}})
            self.assertTrue(wait_for(lambda: sb.calls() and os.path.exists(pidfile)),
                            "the fake CLI never started")
            pids = [sb.calls()[0]["pid"]] + [int(x) for x in open(pidfile).read().split()]
            t0 = time.monotonic()
            s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "user"}})
            self.assertTrue(wait_for(lambda: not any(alive(p) for p in pids), 10),
                            "a process of the cancelled call is still there")
            self.assertLess(time.monotonic() - t0, 5)
            # The server goes on, and never answers the cancelled call.
            self.assertEqual(s.request("ping")["result"], {})
            rc, out, err = s.close()
            self.assertEqual(rc, 0, err)
            self.assertFalse([m for m in s.seen if m.get("id") == 7])
            for line in out.splitlines():
                self.assertNotEqual(json.loads(line).get("id"), 7)

    def test_eof_and_sigterm_end_every_cli(self):
        with Sandbox() as sb:
            for how in ("eof", "term"):
                log = sb.log
                if os.path.exists(log):
                    os.unlink(log)
                s = self.server(sb, env={"FAKE_CLI_HANG": "1"})
                s.initialize()
                s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "run", "arguments": {"prompt": "hang"}}})
                self.assertTrue(wait_for(lambda: sb.calls()), "the fake CLI never started")
                pid = sb.calls()[0]["pid"]
                if how == "term":
                    s.p.send_signal(signal.SIGTERM)
                    s.p.stdin.close()
                    rc = s.p.wait(20)
                    self.assertEqual(rc, 143)
                else:
                    rc, out, err = s.close()
                    self.assertEqual(rc, 0, err)
                self.assertTrue(wait_for(lambda: not alive(pid), 5), how)


class Tasks(McpCase):
    def test_a_task_is_created_polled_and_its_result_waited_for(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"a": 1}'])
            s = self.server(sb, env={"FAKE_CLI_SLEEP_MS": "800"})
            caps = s.initialize("2025-11-25")["result"]["capabilities"]
            self.assertEqual(caps["tasks"], {"list": {}, "cancel": {},
                                             "requests": {"tools": {"call": {}}}})
            tools = s.request("tools/list")["result"]["tools"]
            self.assertTrue(all(t["execution"]["taskSupport"] == "optional" for t in tools))
            created = s.request("tools/call", {"name": "run", "arguments": {"prompt": "p", "json": True},
                                               "task": {"ttl": 60000}})["result"]["task"]
            self.assertEqual(created["status"], "working")
            self.assertEqual(created["ttl"], 60000)
            self.assertEqual(len(created["taskId"]), 32)
            tid = created["taskId"]
            self.assertEqual(s.request("tasks/get", {"taskId": tid})["result"]["status"],
                             "working")
            r = s.request("tasks/result", {"taskId": tid}, timeout=30)["result"]
            self.assertFalse(r["isError"], r)
            self.assertEqual(r["structuredContent"]["json"], {"a": 1})
            self.assertEqual(r["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], tid)
            self.assertTrue(any(m.get("method") == "notifications/tasks/status" and
                                m["params"]["status"] == "completed" for m in s.seen))
            listed = s.request("tasks/list")["result"]["tasks"]
            self.assertEqual([(t["taskId"], t["status"]) for t in listed], [(tid, "completed")])
            self.assertEqual(s.request("tasks/result", {"taskId": tid})["result"]
                             ["structuredContent"]["json"], {"a": 1})
            self.assertEqual(s.request("tasks/cancel", {"taskId": tid})["error"]["code"], -32602)
            self.assertEqual(s.request("tasks/get", {"taskId": "nope"})["error"]["code"], -32602)

    def test_tasks_cancel_ends_the_cli_and_a_refusal_is_the_tasks_result(self):
        with Sandbox() as sb:
            s = self.server(sb, env={"FAKE_CLI_HANG": "1"})
            s.initialize("2025-11-25")
            tid = s.request("tools/call", {"name": "run", "arguments": {"prompt": "p"},
                                           "task": {}})["result"]["task"]["taskId"]
            self.assertTrue(wait_for(lambda: sb.calls()), "the fake CLI never started")
            pid = sb.calls()[0]["pid"]
            r = s.request("tasks/cancel", {"taskId": tid})["result"]
            self.assertEqual(r["status"], "cancelled")
            self.assertTrue(wait_for(lambda: not alive(pid), 10))
            r = s.request("tasks/result", {"taskId": tid}, timeout=20)["result"]
            self.assertEqual(r["structuredContent"]["error"]["code"], "interrupted")
            self.assertEqual(s.request("tasks/get", {"taskId": tid})["result"]["status"],
                             "cancelled")
            t2 = s.request("tools/call", {"name": "run", "task": {},
                                          "arguments": {"prompt": "p", "allow_edits": True}})
            t2 = t2["result"]["task"]["taskId"]
            r = s.request("tasks/result", {"taskId": t2})["result"]
            self.assertTrue(r["isError"])
            self.assertIn("--allow-edits", r["content"][0]["text"])
            self.assertEqual(s.request("tasks/get", {"taskId": t2})["result"]["status"], "failed")


    def task(self, s, args, ttl="none", meta=None, name="run"):
        params = {"name": name, "arguments": args, "task": {} if ttl == "none" else {"ttl": ttl}}
        if meta:
            params["_meta"] = meta
        return s.request("tools/call", params)["result"]["task"]["taskId"]

    def test_a_cancelled_task_past_its_ttl_stays_until_its_call_has_ended(self):
        # Issue 56: tasks/cancel of a task with ttl 0 while its CLI was still ending, then
        # tasks/list, freed the task, and the call's end wrote to it (heap-use-after-free).
        # The store keeps a task until its call has handed the result over.
        with Sandbox() as sb:
            s = self.server(sb, env={"FAKE_CLI_HANG": "1", "FAKE_CLI_IGNORE_TERM": "1"})
            s.initialize("2025-11-25")
            tid = self.task(s, {"prompt": "p"}, ttl=0)
            self.assertTrue(wait_for(lambda: sb.calls()), "the fake CLI never started")
            pid = sb.calls()[0]["pid"]
            # Both in one write: read together, before the CLI's end can be seen.
            s.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in [
                {"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": {"taskId": tid}},
                {"jsonrpc": "2.0", "id": 2, "method": "tasks/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": tid}}]))
            self.assertEqual(s.answer(1)["result"]["status"], "cancelled")
            self.assertEqual([(t["taskId"], t["status"]) for t in s.answer(2)["result"]["tasks"]],
                             [(tid, "cancelled")])
            self.assertEqual(s.answer(3)["result"]["status"], "cancelled")
            # SIGTERM is ignored: the CLI ends at the kill grace (SIGKILL); meanwhile the
            # task is still there, and tasks/result waits for the call's result.
            self.assertTrue(alive(pid))
            self.assertEqual(s.request("tasks/get", {"taskId": tid})["result"]["status"],
                             "cancelled")
            r = s.request("tasks/result", {"taskId": tid}, timeout=30)["result"]
            self.assertEqual(r["structuredContent"]["error"]["code"], "interrupted")
            self.assertEqual(r["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], tid)
            self.assertFalse(alive(pid))
            # Its call over and its ttl long passed: now it may go, and it does.
            self.assertEqual(s.request("tasks/list")["result"]["tasks"], [])
            self.assertEqual(s.request("tasks/get", {"taskId": tid})["error"]["code"], -32602)
            self.assertEqual(s.request("ping")["result"], {})
            rc, out, err = s.close()
            self.assertEqual(rc, 0, err)
            self.assertNotIn("AddressSanitizer", err)

    def test_a_working_task_past_its_ttl_keeps_its_call_and_result(self):
        # Issue 60 item 10: a task still working when its ttl passes is not dropped while
        # its call runs (its result would be lost, then written to freed memory).
        with Sandbox() as sb:
            sb.answers("codex", ['{"late": true}'])
            go = os.path.join(sb.root, "go")
            s = self.server(sb, env={"FAKE_CLI_WAIT_FOR": go})
            s.initialize("2025-11-25")
            tid = self.task(s, {"prompt": "p", "json": True}, ttl=50)
            self.assertTrue(wait_for(lambda: sb.calls()), "the fake CLI never started")
            time.sleep(0.2)  # the ttl has passed; the call still runs
            self.assertEqual(s.request("tasks/get", {"taskId": tid})["result"]["status"],
                             "working")
            self.assertEqual([t["taskId"] for t in s.request("tasks/list")["result"]["tasks"]],
                             [tid])
            s.send({"jsonrpc": "2.0", "id": 9, "method": "tasks/result",
                    "params": {"taskId": tid}})
            open(go, "w").close()
            r = s.answer(9, timeout=30)["result"]
            self.assertEqual(r["structuredContent"]["json"], {"late": True})
            self.assertEqual(s.request("tasks/get", {"taskId": tid})["error"]["code"], -32602)

    def test_a_tasks_progress_carries_its_task_and_stops_once_it_is_over(self):
        # 2025-11-25: every notification about a task carries
        # _meta["io.modelcontextprotocol/related-task"] (tasks, "Associating Task-Related
        # Messages"), and a task's progress stops once it is terminal (progress, 3).
        with Sandbox() as sb:
            go = os.path.join(sb.root, "go")
            s = self.server(sb, env={"FAKE_CLI_WAIT_FOR": go})
            s.initialize("2025-11-25")
            tid = self.task(s, {"prompt": "p"}, meta={"progressToken": "tok"})
            self.assertTrue(wait_for(lambda: sb.calls()), "the fake CLI never started")
            self.assertEqual(s.request("tasks/cancel", {"taskId": tid})["result"]["status"],
                             "cancelled")
            at_cancel = len(s.seen)
            open(go, "w").close()
            s.request("tasks/result", {"taskId": tid}, timeout=30)
            progress = [m for m in s.seen if m.get("method") == "notifications/progress"]
            self.assertTrue(progress)
            for m in progress:
                self.assertEqual(m["params"]["progressToken"], "tok")
                self.assertEqual(m["params"]["_meta"],
                                 {"io.modelcontextprotocol/related-task": {"taskId": tid}})
            # "codex main call finished" happened after the cancel: not sent.
            self.assertFalse([m for m in s.seen[at_cancel:]
                              if m.get("method") == "notifications/progress"])
            status = [m for m in s.seen if m.get("method") == "notifications/tasks/status"]
            self.assertTrue(status)
            self.assertTrue(all("_meta" not in m["params"] for m in status))
            # A call that is no task carries no task _meta.
            sb.answers("codex", ["fine"])
            s.call("run", {"prompt": "x"}, meta={"progressToken": "plain"})
            plain = [m for m in s.seen if m.get("method") == "notifications/progress" and
                     m["params"]["progressToken"] == "plain"]
            self.assertTrue(plain)
            self.assertTrue(all("_meta" not in m["params"] for m in plain))

    def test_lists_page_with_cursors_and_refuse_one_never_given(self):
        # A bad cursor is -32602 (2025-11-25: tasks, "Protocol Errors"; pagination).
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize("2025-11-25")
            ids = [self.task(s, {"text": '{"n": %d}' % i}, name="extract") for i in range(105)]
            page = s.request("tasks/list")["result"]
            self.assertEqual(len(page["tasks"]), 100)
            rest = s.request("tasks/list", {"cursor": page["nextCursor"]})["result"]
            self.assertNotIn("nextCursor", rest)
            listed = [t["taskId"] for t in page["tasks"] + rest["tasks"]]
            self.assertEqual(listed, ids[::-1])  # newest first, each once
            self.assertEqual(s.request("tasks/list", {"cursor": None})["result"]["tasks"][0]
                             ["taskId"], ids[-1])
            for bad in ["x", "", "0", "106", "99999999999999999999", 5, {}, "05"]:
                e = s.request("tasks/list", {"cursor": bad})
                self.assertEqual(e.get("error", {}).get("code"), -32602, (bad, e))
                self.assertIn("cursor", e["error"]["message"])
                e = s.request("tools/list", {"cursor": bad})
                self.assertEqual(e.get("error", {}).get("code"), -32602, (bad, e))
            self.assertEqual(len(s.request("tools/list", {"cursor": None})["result"]["tools"]),
                             len(TOOLS))


class TaskRaces(McpCase):
    """A property: random sequences of task creation, cancel, get, list, result,
    notifications/cancelled and the calls' ends (each fake CLI waits for a file of its own)
    keep the protocol's promises: every request answered once; a terminal status never
    changes; a task goes only after its call handed its result over and its ttl passed;
    tasks/result comes after that status; a task's progress carries it and stops once it is
    terminal; the server ends cleanly, every CLI gone. CI runs this again under ASan."""

    SEEDS = [int(x) for x in os.environ.get("AGENTRUN_MCP_SEEDS", "1,2,3,4").split(",")]

    def test_random_task_sequences_keep_the_protocol(self):
        for seed in self.SEEDS:
            with self.subTest(seed=seed):
                self.sequence(seed)

    def sequence(self, seed, steps=70):
        rng = random.Random(seed)
        with Sandbox() as sb:
            sb.answers("codex", ["done"])
            gates = [os.path.join(sb.root, "go.%d" % i) for i in range(64)]
            s = self.server(sb, "-j", "2", env={"FAKE_CLI_WAIT_FOR": ",".join(gates)})
            s.initialize("2025-11-25")
            model = Model(self, s, seed)
            for _ in range(steps):
                op = rng.choice(["create"] * 4 + ["cancel"] * 2 + ["get", "list", "result",
                                                                   "finish", "finish",
                                                                   "notify", "sleep"])
                tasks = list(model.tasks.values())
                if op == "create" and len(tasks) < 30:
                    model.create(rng.choice([0, 20, 200, None, 60000]), rng.random() < 0.5,
                                 "extract" if rng.random() < 0.2 else "run")
                elif op in ("cancel", "get", "result", "notify") and tasks:
                    getattr(model, op)(rng.choice(tasks))
                elif op == "list":
                    model.send("tasks/list", {})
                elif op == "finish":
                    started = [c["call"] for c in sb.calls() if not os.path.exists(gates[c["call"]])]
                    if started:
                        open(gates[rng.choice(started)], "w").close()
                elif op == "sleep":
                    time.sleep(rng.choice([0.01, 0.05, 0.25]))
                model.drain(0.01)
            for g in gates:
                open(g, "w").close()
            for t in model.tasks.values():
                model.result(t)
            model.drain_until_answered(60)
            pids = [c["pid"] for c in sb.calls()]
            rc, out, err = s.close()
            self.assertEqual(rc, 0, err)
            self.assertNotIn("AddressSanitizer", err)
            self.assertNotIn("runtime error", err)
            for line in out.splitlines():
                model.check(json.loads(line))
            self.assertFalse([p for p in pids if alive(p)])
            self.assertEqual(model.pending, {})


class Model:
    """What the client of TaskRaces has sent and seen, checking each message as it comes."""

    TERMINAL = ("completed", "failed", "cancelled")

    def __init__(self, test, server, seed):
        self.t, self.s, self.seed = test, server, seed
        self.tasks = {}    # tid -> {"sent", "ttl", "token", "status", "over", "label"}
        self.pending = {}  # request id -> (method, tid)
        self.creating = {}
        self.answered = set()
        self.label = 0
        self.next_id = 1000

    def fail(self, why, msg=None):
        self.t.fail("seed %d: %s: %r" % (self.seed, why, msg))

    def send(self, method, params, tid=None):
        self.next_id += 1
        self.pending[self.next_id] = (method, tid)
        self.s.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def create(self, ttl, progress, tool):
        self.label += 1
        args = ({"prompt": "job-%d-end" % self.label} if tool == "run"
                else {"text": '{"job": %d}' % self.label})
        params = {"name": tool, "arguments": args, "task": {} if ttl is None else {"ttl": ttl}}
        if progress:
            params["_meta"] = {"progressToken": "tok-%d" % self.label}
        rid = self.send("tools/call", params)
        self.creating[rid] = {"sent": time.monotonic(), "ttl": ttl, "rid": rid,
                              "token": progress and "tok-%d" % self.label, "status": "working",
                              "over": False}

    def cancel(self, t):
        self.send("tasks/cancel", {"taskId": t["tid"]}, t["tid"])

    def get(self, t):
        self.send("tasks/get", {"taskId": t["tid"]}, t["tid"])

    def result(self, t):
        self.send("tasks/result", {"taskId": t["tid"]}, t["tid"])

    def notify(self, t):
        # notifications/cancelled does not apply to a task: its request was answered.
        self.s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": t["rid"]}})

    def status(self, tid, status, msg):
        t = self.tasks[tid]
        if t["status"] in self.TERMINAL and status != t["status"]:
            self.fail("a terminal status changed (%s to %s)" % (t["status"], status), msg)
        t["status"] = status

    def gone(self, tid, msg):
        """The server said the task is unknown: only after its call was over and its ttl
        passed (the server made it after we sent, and answered before we read)."""
        t = self.tasks[tid]
        if not t["over"] or t["ttl"] is None or time.monotonic() - t["sent"] <= t["ttl"] / 1000:
            self.fail("a task went before its call was over and its ttl passed", (t, msg))

    def check(self, m):
        method, params = m.get("method"), m.get("params") or {}
        if method == "notifications/tasks/status":
            tid = params["taskId"]
            self.status(tid, params["status"], m)
            if params["status"] in self.TERMINAL:
                self.tasks[tid]["over"] = True
            if "_meta" in params:
                self.fail("a task status carries related-task", m)
            return
        if method == "notifications/progress":
            tok = params["progressToken"]
            owner = [t for t in self.tasks.values() if t["token"] == tok]
            if not owner:
                self.fail("progress for no task", m)
            t = owner[0]
            if params.get("_meta") != {"io.modelcontextprotocol/related-task": {"taskId": t["tid"]}}:
                self.fail("progress without its task", m)
            if t["status"] in self.TERMINAL:
                self.fail("progress after the task was terminal", m)
            return
        rid = m.get("id")
        if rid in self.answered:
            self.fail("a request answered twice", m)
        self.answered.add(rid)
        method, tid = self.pending.pop(rid, (None, None))
        if method is None:
            self.fail("an answer to no request", m)
        if method == "tools/call":
            t = self.creating.pop(rid)
            t["tid"] = m["result"]["task"]["taskId"]
            self.tasks[t["tid"]] = t
            self.status(t["tid"], m["result"]["task"]["status"], m)
        elif "error" in m:
            if m["error"]["code"] != -32602:
                self.fail("an unexpected error", m)
            if "already over" in m["error"]["message"]:
                if self.tasks[tid]["status"] not in self.TERMINAL:
                    self.fail("cancel refused for a task not known terminal", m)
            elif method == "tasks/list" or "no such task" not in m["error"]["message"]:
                self.fail("an unexpected error", m)
            else:
                self.gone(tid, m)
        elif method in ("tasks/get", "tasks/cancel"):
            self.status(tid, m["result"]["status"], m)
        elif method == "tasks/list":
            for x in m["result"]["tasks"]:
                self.status(x["taskId"], x["status"], m)
        elif method == "tasks/result":
            if not self.tasks[tid]["over"]:
                self.fail("tasks/result before the task's final status", m)
            if m["result"].get("_meta") != {
                    "io.modelcontextprotocol/related-task": {"taskId": tid}}:
                self.fail("a task's result without related-task", m)

    def drain(self, timeout):
        m = self.s.poll(timeout)
        while m is not None:
            self.check(m)
            m = self.s.poll(0)

    def drain_until_answered(self, timeout):
        end = time.monotonic() + timeout
        while self.pending and time.monotonic() < end:
            self.drain(0.2)


class Posture(McpCase):
    def refused(self, s, tool, args, flag):
        r = s.call(tool, args)["result"]
        self.assertTrue(r["isError"], r)
        self.assertIn(flag, r["content"][0]["text"])
        return r["content"][0]["text"]

    def test_edits_are_refused_unless_the_server_allows_them(self):
        with Sandbox() as sb:
            sb.answers("codex", ["done"])
            s = self.server(sb)
            s.initialize()
            self.refused(s, "run", {"prompt": "edit", "allow_edits": True}, "--allow-edits")
            self.refused(s, "run", {"prompt": "edit", "worktree": True}, "--allow-edits")
            self.assertEqual(sb.calls(), [])
            s2 = self.server(sb, "--allow-edits",
                             env={"FAKE_CLI_WRITE_FILES": "new.txt=hello"})
            s2.initialize()
            r = s2.call("run", {"prompt": "edit", "allow_edits": True})["result"]
            self.assertFalse(r["isError"], r)
            self.assertEqual(r["structuredContent"]["posture"]["tools"], "edit")
            self.assertEqual([f["path"] for f in r["structuredContent"]["files"]], ["new.txt"])

    def test_a_cwd_outside_the_allowed_directories_is_refused(self):
        with Sandbox() as sb:
            sb.answers("codex", ["fine"])
            sibling = sb.work + "2"  # shares the prefix, not the directory
            os.mkdir(sibling)
            os.symlink("/", os.path.join(sb.work, "root-link"))
            os.mkdir(os.path.join(sb.work, "sub"))
            s = self.server(sb)
            s.initialize()
            for cwd in ["/", sibling, "..", "root-link", "sub/../../work2"]:
                self.refused(s, "run", {"prompt": "x", "cwd": cwd}, "--allow-dir")
            self.refused(s, "run", {"prompt": "x", "cwd": "/nonexistent"}, "No such file")
            self.assertEqual(sb.calls(), [])
            r = s.call("run", {"prompt": "x", "cwd": "sub"})["result"]
            self.assertFalse(r["isError"], r)
            self.assertEqual(sb.calls()[0]["cwd"], os.path.realpath(os.path.join(sb.work, "sub")))
            # Paths a call names are held to the same rule.
            self.refused(s, "prioritize", {"dir": "/etc"}, "--allow-dir")
            self.refused(s, "route", {"query": "q", "manifest": "/etc/passwd"}, "--allow-dir")
            # --allow-dir replaces the default.
            s2 = self.server(sb, "--allow-dir", sibling)
            s2.initialize()
            self.refused(s2, "run", {"prompt": "x"}, "--allow-dir")
            # extract works in no directory: never refused for one.
            self.assertFalse(s2.call("extract", {"text": "{}"})["result"]["isError"])
            r = s2.call("run", {"prompt": "x", "cwd": sibling})["result"]
            self.assertFalse(r["isError"], r)

    def test_providers_and_cost_caps_name_the_flag(self):
        with Sandbox() as sb:
            sb.answers("gemini", ["fine"])
            # auto picks among the allowed providers the first that can log in.
            s = self.server(sb, "--providers", "gemini", "--max-cost", "0.5",
                            env={"GEMINI_API_KEY": "key"})
            s.initialize()
            self.refused(s, "run", {"prompt": "x", "provider": "claude"}, "--providers")
            self.refused(s, "run", {"prompt": "x", "fallback": "codex"}, "--providers")
            self.refused(s, "run", {"prompt": "x", "max_cost": 2}, "--max-cost")
            self.assertEqual(sb.calls(), [])
            r = s.call("run", {"prompt": "x", "provider": "auto"})["result"]
            self.assertFalse(r["isError"], r)
            self.assertEqual(r["structuredContent"]["provider"], "gemini")

    def test_the_total_budget_refuses_calls_once_spent(self):
        with Sandbox() as sb:
            sb.answers("claude", ["fine"], cost=0.25)
            s = self.server(sb, "--max-cost-total", "0.2", provider="claude")
            s.initialize()
            self.assertFalse(s.call("run", {"prompt": "x"})["result"]["isError"])
            self.refused(s, "run", {"prompt": "x"}, "--max-cost-total")
            self.assertEqual(len(sb.calls()), 1)
            # extract calls no model: never refused by the budget.
            self.assertFalse(s.call("extract", {"text": "{}"})["result"]["isError"])


def budget_arg(call):
    """The --max-budget-usd claude was given, or None."""
    argv = call["argv"]
    return float(argv[argv.index("--max-budget-usd") + 1]) if "--max-budget-usd" in argv else None


class Money(McpCase):
    """What a server's calls may spend (issue 60, items 1-7 and 9): the library's budget,
    reserved as each CLI call starts (docs/security.md, "What a call may spend")."""

    def run_calls(self, s, n, args=None):
        return [s.call("run", dict(args or {"prompt": "p%d" % i}))["result"] for i in range(n)]

    def test_a_call_naming_no_max_cost_gets_the_servers(self):
        with Sandbox() as sb:
            sb.write("c.json", "{}")
            sb.answers("claude", ["not json", '{"ok": true}'], cost=0.0123)
            s = self.server(sb, "--max-cost", "0.02", provider="claude")
            s.initialize()
            r = s.call("run", {"prompt": "x", "schema": {"type": "object",
                                                         "required": ["ok"]}})["result"]
            # The repair call would pass the call's cap: not made.
            self.assertEqual(r["structuredContent"]["error"]["code"], "budget", r)
            self.assertEqual(len(sb.calls()), 1)
            self.assertAlmostEqual(budget_arg(sb.calls()[0]), 0.02, places=6)
            self.assertEqual(r["structuredContent"]["budget"]["cap_usd"], 0.02)

    def test_an_unknown_cost_stops_the_total(self):
        with Sandbox() as sb:
            # codex's model is not in the price table: its cost is unknown, never $0.
            sb.answers("codex", ['{"a": 1}'])
            s = self.server(sb, "--max-cost-total", "5", env={"AGENTRUN_MODEL": "gpt-unpriced"})
            s.initialize()
            first, second = self.run_calls(s, 2)
            self.assertFalse(first["isError"], first)
            self.assertIsNone(first["structuredContent"]["cost_usd"])
            self.assertTrue(second["isError"])
            self.assertEqual(second["structuredContent"]["error"]["code"], "budget")
            self.assertIn("gpt-unpriced", second["content"][0]["text"])
            self.assertEqual(len(sb.calls()), 1)

    def test_a_calls_own_cap_above_what_is_left_gets_what_is_left(self):
        with Sandbox() as sb:
            sb.answers("claude", ['{"a": 1}'], cost=0.0123)
            s = self.server(sb, "--max-cost-total", "0.03", provider="claude")
            s.initialize()
            r = s.call("run", {"prompt": "x", "max_cost": 0.5})["result"]
            self.assertFalse(r["isError"], r)
            # The first call runs alone with all that is left of the total, not its own 0.5.
            self.assertAlmostEqual(budget_arg(sb.calls()[0]), 0.03, places=6)
            r = s.call("run", {"prompt": "x", "max_cost": 0.5})["result"]
            self.assertFalse(r["isError"], r)
            self.assertAlmostEqual(budget_arg(sb.calls()[1]), 0.03 - 0.0123, places=6)

    def test_the_total_is_the_sum_of_every_call(self):
        with Sandbox() as sb:
            sb.answers("claude", ['{"a": 1}'], cost=0.0123)
            s = self.server(sb, "--max-cost-total", "0.03", provider="claude")
            s.initialize()
            results = self.run_calls(s, 3)
            # $0.0246 spent: $0.0054 left, short of the $0.0123 a call costs.
            self.assertEqual([r["isError"] for r in results], [False, False, True])
            self.assertEqual(len(sb.calls()), 2)

    def test_the_servers_fallback_is_held_to_providers(self):
        with Sandbox() as sb:
            sb.answers("gemini", ["fine"])
            s = self.server(sb, "--providers", "gemini", "--fallback", "codex",
                            provider="gemini")
            s.initialize()
            r = s.call("run", {"prompt": "x"})["result"]
            self.assertTrue(r["isError"])
            self.assertIn("--providers", r["content"][0]["text"])
            self.assertEqual(sb.calls(), [])

    def test_worktrees_give_every_edit_run_one(self):
        with Sandbox() as sb:
            sb.answers("codex", ["done"])
            s = self.server(sb, "--allow-edits", "--worktrees",
                            env={"FAKE_CLI_WRITE_FILES": "new.txt=hello"})
            s.initialize()
            r = s.call("run", {"prompt": "edit", "allow_edits": True})["result"]
            self.assertFalse(r["isError"], r)
            w = r["structuredContent"]["worktree"]
            self.assertIsNotNone(w, "an edit run under --worktrees edited the checkout")
            self.assertNotEqual(sb.calls()[0]["cwd"], os.path.realpath(sb.work))
            self.assertFalse(os.path.exists(os.path.join(sb.work, "new.txt")))

    def test_a_refused_call_takes_no_slot_and_never_more_than_j_clis_run(self):
        with Sandbox() as sb:
            go = os.path.join(sb.root, "go")
            sb.answers("codex", ['{"a": 1}'])
            s = self.server(sb, "-j", "1", "--providers", "codex",
                            env={"FAKE_CLI_WAIT_FOR": go})
            s.initialize()
            ids = [1, 2, 3, 4]
            args = [{"prompt": "a"}, {"prompt": "b", "provider": "claude"}, {"prompt": "c"},
                    {"prompt": "d"}]
            for i, a in zip(ids, args):
                s.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "run", "arguments": a}})
            refused = s.answer(2)
            self.assertTrue(refused["result"]["isError"])
            time.sleep(1.5)
            self.assertEqual(len(sb.calls()), 1, "more than -j CLIs ran at once")
            open(go, "w").close()
            for i in (1, 3, 4):
                self.assertFalse(s.answer(i, 60)["result"]["isError"])
            self.assertEqual(len(sb.calls()), 3)


class Hostile(McpCase):
    def test_bad_messages_get_their_errors_and_the_server_keeps_going(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb, "--max-message", "2K")
            s.initialize()
            cases = [
                (b"{not json\n", None, -32700),
                (b"[1, 2]\n", None, -32600),
                (b"42\n", None, -32600),
                (b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}\n', 3, -32600),
                (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}\n', None, -32600),
                (b'{"jsonrpc": "2.0", "id": 4, "method": "tools/nope"}\n', 4, -32601),
                (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": [1]}\n', 5, -32602),
                (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {}}\n', 6, -32602),
                (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": '
                 b'{"name": "nope", "arguments": {}}}\n', 7, -32602),
                (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": '
                 b'{"name": "extract", "arguments": {"text": 1}}}\n', 8, -32602),
                (b'{"jsonrpc": "2.0", "id": 9, "method": "ping"' + b" " * 5000 + b"}\n", None,
                 -32600),
                (b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": "x"}\n', 10, -32600),
                (b"\xff\xfe\x00garbage\n", None, -32700),
            ]
            for raw, rid, code in cases:
                s.send_raw(raw)
                m = s.recv()
                self.assertEqual((m.get("id"), m["error"]["code"]), (rid, code), (raw[:60], m))
            self.assertIn("/text", s.seen[-4]["error"]["message"])
            self.assertIn("longer than 2048 bytes", s.seen[-3]["error"]["message"])
            # Notifications and responses are never answered; blank lines are no message.
            s.send_raw(b'\n  \n{"jsonrpc": "2.0", "method": "notifications/whatever"}\n'
                       b'{"jsonrpc": "2.0", "id": 99, "result": {}}\n')
            self.assertEqual(s.request("ping")["result"], {})
            # A line split across writes is one message.
            s.send_raw(b'{"jsonrpc": "2.0", "id": 11, ')
            time.sleep(0.1)
            s.send_raw(b'"method": "ping"}\n')
            self.assertEqual(s.recv()["id"], 11)
            rc, out, err = s.close()
            self.assertEqual(rc, 0, err)

    def test_a_number_past_64_bits_is_answered_with_its_id(self):
        # jansson refuses such a line outright; the server reads the number as written and
        # answers the request with its own id (issue 56).
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize()
            big = 18446744073709551621  # 2^64 + 5
            for rid, params in [(big, None), (-big, None), (4, {"x": 1e400}),
                                (5, {"_meta": {"n": -big}, "y": [1, big]})]:
                msg = '{"jsonrpc": "2.0", "id": %s, "method": "ping"%s}' % (
                    rid, ', "params": ' + json.dumps(params).replace("Infinity", "1e400")
                    if params else "")
                s.send_raw(msg.encode() + b"\n")
                m = s.recv()
                self.assertEqual((m["id"], m.get("result")), (rid, {}), msg)
            self.assertIn(b'"id":-18446744073709551621,', b"".join(
                json.dumps(m).replace(" ", "").encode() for m in s.seen))
            # In a tool's arguments it is refused by name, with the id.
            s.send_raw(b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": '
                       b'{"name": "run", "arguments": {"prompt": "x", "timeout": 1e999}}}\n')
            m = s.recv()
            self.assertEqual((m["id"], m["error"]["code"]), (6, -32602))
            self.assertIn("/timeout: a number past", m["error"]["message"])
            # As a real id it is no valid id; with a NUL escaped in a string the line is
            # no JSON the server reads.
            for raw, code in [(b'{"jsonrpc": "2.0", "id": 1e999, "method": "ping"}', -32600),
                              (b'{"jsonrpc": "2.0", "id": 99999999999999999999, "method": '
                               b'"ping", "params": {"s": "\\u0000"}}', -32700)]:
                s.send_raw(raw + b"\n")
                m = s.recv()
                self.assertEqual((m["id"], m["error"]["code"]), (None, code), raw)
    def test_a_call_whose_id_is_past_64_bits_is_answered_and_cancelled_by_it(self):
        with Sandbox() as sb:
            s = self.server(sb, env={"FAKE_CLI_HANG": "1"})
            s.initialize()
            s.send_raw(b'{"jsonrpc": "2.0", "id": 99999999999999999999, "method": "tools/call",'
                       b' "params": {"name": "extract", "arguments": {"text": "[1]"}}}\n')
            self.assertEqual(s.recv()["id"], 99999999999999999999)
            s.send_raw(b'{"jsonrpc": "2.0", "id": 99999999999999999998, "method": "tools/call",'
                       b' "params": {"name": "run", "arguments": {"prompt": "hang"}}}\n')
            self.assertTrue(wait_for(lambda: sb.calls()), "the fake CLI never started")
            pid = sb.calls()[0]["pid"]
            s.send_raw(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": '
                       b'{"requestId": 99999999999999999998}}\n')
            self.assertTrue(wait_for(lambda: not alive(pid), 10), "the call was not cancelled")
            self.assertEqual(s.request("ping")["result"], {})
            rc, out, err = s.close()
            self.assertEqual(rc, 0, err)
            self.assertNotIn(b"99999999999999999998", out)  # a cancelled call is not answered

    def test_a_client_that_reads_nothing_does_not_stop_the_calls_supervision(self):
        # The output is written from the loop: while the client reads nothing, a running
        # call's clock still ends its CLI (a blocking write held the loop up to a minute).
        with Sandbox() as sb:
            s = self.server(sb, env={"FAKE_CLI_HANG": "1"})
            s.initialize()
            s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "run", "arguments": {"prompt": "p", "timeout": 1}}})
            self.assertTrue(wait_for(lambda: sb.calls()), "the fake CLI never started")
            pid = sb.calls()[0]["pid"]
            # ~300 KB of answers the client does not read: more than a pipe holds.
            for i in range(30):
                s.send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/list"})
            self.assertTrue(wait_for(lambda: not alive(pid), 15),
                            "the CLI outlived its timeout while the client read nothing")
            answers = {}
            while len(answers) < 31:
                m = s.recv(30)
                if "id" in m:
                    answers[m["id"]] = m
            self.assertEqual(answers[1]["result"]["structuredContent"]["error"]["code"],
                             "timeout")
            self.assertEqual(sorted(answers), [1] + list(range(100, 130)))
            rc, out, err = s.close()
            self.assertEqual(rc, 0, err)

    def test_a_result_longer_than_a_client_takes_names_files_for_the_rest(self):
        # claude hands its model at most 50,000 characters of a result's structuredContent
        # (tests/e2e/test_mcp.py): a longer one keeps what fits, and the rest is written to
        # files under the server's directory that the calling model can read.
        with Sandbox() as sb:
            answer = "".join("line %06d of a long answer\n" % i for i in range(12000))
            sb.answers("codex", [answer, answer, "short"])
            s = self.server(sb)
            s.initialize("2025-11-25")
            m = s.call("run", {"prompt": "long"})
            r = m["result"]
            self.assertFalse(r["isError"], r["content"])
            sc = r["structuredContent"]
            self.assertLessEqual(len(json.dumps(sc, separators=(",", ":"), ensure_ascii=False)),
                                 48 * 1024)
            self.assertTrue(sc["ok"])  # the small members stay
            self.assertEqual(sc["schema"], "agentrun.run/1")
            cut = sc["truncated_result"]
            self.assertGreater(cut["bytes"], len(answer))
            self.assertEqual(cut["limit"], 48 * 1024)
            out = cut["left_out"]["output"]
            self.assertEqual(out["bytes"], len(answer))
            self.assertTrue(out["file"].startswith(os.path.realpath(sb.work) + "/.agentrun/mcp/"))
            with open(out["file"]) as f:
                self.assertEqual(f.read(), answer)  # the whole answer, as text
            self.assertIn(out["file"], r["content"][0]["text"])
            self.assertEqual(sb.git("status", "--porcelain"), "")  # kept out of git
            # A task's result is the same, with its _meta.
            tid = s.request("tools/call", {"name": "run", "arguments": {"prompt": "long"},
                                           "task": {}})["result"]["task"]["taskId"]
            t = s.request("tasks/result", {"taskId": tid}, timeout=30)["result"]
            self.assertEqual(t["structuredContent"]["truncated_result"]["left_out"]["output"]
                             ["bytes"], len(answer))
            files = [out["file"], t["structuredContent"]["truncated_result"]["left_out"]
                     ["output"]["file"]]
            self.assertNotEqual(files[0], files[1])
            # A result within the limit is whole.
            self.assertNotIn("truncated_result", s.call("run", {"prompt": "x"})["result"]
                             ["structuredContent"])
            rc, _, err = s.close()
            self.assertEqual(rc, 0, err)
            self.assertFalse([f for f in files if os.path.exists(f)])  # gone with the server

    def test_a_flood_of_calls_is_refused_past_the_queue(self):
        with Sandbox() as sb:
            s = self.server(sb, "-j", "1", env={"FAKE_CLI_HANG": "1"})
            s.initialize()
            for i in range(258):
                s.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "run", "arguments": {"prompt": "p"}}})
            m = s.recv()
            self.assertEqual(m["id"], 257)  # 1 running, 256 waiting, the next refused
            self.assertTrue(m["result"]["isError"])
            self.assertIn("256 calls are waiting", m["result"]["content"][0]["text"])
            self.assertTrue(wait_for(lambda: sb.calls()))
            pid = sb.calls()[0]["pid"]
            rc, out, err = s.close()  # EOF: the running call ends, the waiting ones too
            self.assertEqual(rc, 0, err)
            self.assertFalse(alive(pid))
            answered = [json.loads(l)["id"] for l in out.splitlines()]
            self.assertEqual(sorted(answered), list(range(257)))

    def test_invalid_arguments_are_a_tool_error_under_2025_11_25(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize("2025-11-25")
            r = s.call("extract", {"txt": "x"})["result"]
            self.assertTrue(r["isError"])
            self.assertIn("/text: required property missing", r["content"][0]["text"])
            self.assertIn("/txt: property not allowed", r["content"][0]["text"])

    def test_a_file_as_stdin_is_read_to_its_end(self):
        with Sandbox(git=False) as sb:
            path = os.path.join(sb.root, "in.jsonl")
            with open(path, "w") as f:
                f.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": {"protocolVersion": "2025-06-18"}}) + "\n")
                f.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "extract",
                                               "arguments": {"text": '{"k": true}'}}}))
            with open(path, "rb") as f:
                p = subprocess.run([AGENTRUN, "mcp"], stdin=f, capture_output=True,
                                   cwd=sb.work, env=sb.env, timeout=20)
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = [json.loads(l) for l in p.stdout.splitlines()]
            self.assertEqual([m["id"] for m in lines], [1, 2])
            self.assertEqual(lines[1]["result"]["structuredContent"]["json"], '{"k":true}')


if __name__ == "__main__":
    unittest.main()
