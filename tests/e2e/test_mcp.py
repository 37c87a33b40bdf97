"""agentrun mcp (issue 47) with a client written with the official MCP TypeScript SDK
(@modelcontextprotocol/sdk, pinned in package.json) over stdio: it lists the tools,
calls extract, calls run against the real gemini at the loopback mock and gets the
RunResult, and cancels a hanging run with no CLI process left (mcp_client.cjs); and the
real claude (with `agentrun mcp` in its --mcp-config) and the real codex (with it in
its config.toml's mcp_servers) each call the run tool, and their next model request
carries gemini's answer; and a result longer than claude hands its model whole reaches
claude's model inline, cut, with the rest in a file claude's model then reads."""
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_client.cjs")
TOOLS = ["run", "review", "extract", "prioritize", "route"]


def node_modules():
    """Where the SDK is: $AGENTRUN_E2E_NODE_MODULES, else beside the pinned CLIs."""
    return os.environ.get("AGENTRUN_E2E_NODE_MODULES") or os.path.dirname(harness.bin_dir())


def require_sdk():
    sdk = os.path.join(node_modules(), "@modelcontextprotocol", "sdk", "package.json")
    if os.path.exists(sdk):
        return
    msg = "e2e: missing %s (npm ci in tests/e2e installs it)" % sdk
    if os.environ.get("CI"):
        sys.stderr.write(msg + " -- CI is set, so this is a failure\n")
        sys.exit(1)
    sys.stderr.write(msg + " -- skipping\n")
    sys.exit(harness.SKIP)


class McpSdk(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mock = Mock().start()

    @classmethod
    def tearDownClass(cls):
        cls.mock.cleanup()

    def setUp(self):
        self.root = RunRoot(self.mock.port)

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()

    def client(self, scenario, *extra):
        env = self.root.agentrun_env()
        env["NODE_PATH"] = node_modules()
        env["PATH"] = harness.node_dir() + os.pathsep + env.get("PATH", "")
        return subprocess.Popen(["node", CLIENT, AGENTRUN, self.root.work, scenario, *extra],
                                cwd=self.root.work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def steps(self, p, timeout=180):
        out, err = p.communicate(timeout=timeout)
        steps = {}
        for line in out.splitlines():
            s = json.loads(line)
            steps[s["step"]] = s
        self.assertNotIn("error", steps, err)
        self.assertEqual(p.returncode, 0, err)
        return steps

    def test_list_extract_and_run_with_gemini(self):
        self.mock.set_script({"gemini": [{"kind": "json", "value": {"answer": 42},
                                          "usage": {"input": 100, "output": 7}}]})
        before = len(self.mock.model_requests("gemini"))
        s = self.steps(self.client("tools"))
        self.assertEqual(s["tools"]["names"], TOOLS)
        self.assertTrue(s["tools"]["output"])
        ex = s["extract"]["result"]
        self.assertFalse(ex["isError"])
        self.assertEqual(ex["structuredContent"]["json"], '{"n":1.50}')
        run = s["run"]["result"]
        self.assertFalse(run["isError"], run)
        rr = run["structuredContent"]
        self.assertEqual(rr["schema"], "agentrun.run/1")
        self.assertTrue(rr["ok"])
        self.assertEqual(rr["provider"], "gemini")
        self.assertEqual(rr["json"], {"answer": 42})
        self.assertEqual(rr["tokens"]["output"], 7)
        self.assertEqual(rr["posture"]["tools"], "read")
        self.assertTrue(run["content"][0]["text"].startswith("ok: gemini"))
        self.assertTrue(any("call started" in p.get("message", "") for p in s["run"]["progress"]),
                        s["run"]["progress"])
        self.assertEqual(len(self.mock.model_requests("gemini")) - before, 1)

    def test_cancel_of_a_hanging_run_leaves_no_cli(self):
        self.mock.set_script({"gemini": [{"kind": "hang", "text": "thinking"}]})
        gone = os.path.join(self.root.root, "gone")
        p = self.client("cancel", self.mock.base_url, gone)
        line = p.stdout.readline()  # connected
        self.assertIn("connected", line)
        line = p.stdout.readline()
        aborted = json.loads(line)
        self.assertEqual(aborted["step"], "aborted", line)
        self.assertIn("rejected", aborted["outcome"])
        t0 = time.monotonic()

        def clis():
            # The server and the client themselves stay until the client closes.
            return [c for pid, c in harness.leftover_processes(self.root)
                    if "mcp_client.cjs" not in c and " mcp " not in c + " "]
        while clis() and time.monotonic() - t0 < 15:
            time.sleep(0.1)
        self.assertEqual(clis(), [])
        took = time.monotonic() - t0
        open(gone, "w").close()
        s = self.steps(p)
        self.assertIn("pinged", s)  # the server kept serving after the cancel
        self.assertLess(took, 10)
        self.assertEqual(harness.leftover_processes(self.root), [])

    @unittest.skipIf(harness.missing_clis(["claude"]), "no claude")
    def test_claude_calls_the_run_tool_and_its_next_request_carries_the_answer(self):
        marker = "GEMINI-SAYS-4217"
        self.mock.set_script({
            "claude": [{"kind": "tool", "name": "mcp__agentrun__run",
                        "input": {"prompt": "Ask gemini for the number.", "provider": "gemini"}},
                       {"kind": "text", "text": "Gemini answered."}],
            "gemini": [{"kind": "text", "text": marker}]})
        before = len(self.mock.model_requests("claude"))
        before_gemini = len(self.mock.model_requests("gemini"))
        config = os.path.join(self.root.root, "mcp.json")
        env = self.root.agentrun_env()
        with open(config, "w") as f:
            json.dump({"mcpServers": {"agentrun": {
                "command": AGENTRUN, "args": ["mcp", "--providers", "gemini", "-p", "gemini"],
                "env": env}}}, f)
        r = harness.run_cli("claude", ["-p", "--output-format", "stream-json", "--verbose",
                                       "--strict-mcp-config", "--mcp-config", config,
                                       "--allowedTools", "mcp__agentrun__run"],
                            self.root, stdin=b"Use agentrun to ask gemini.", timeout=180,
                            # claude 2.1.3xx defers MCP tools behind its ToolSearch tool,
                            # which the mock cannot script; off, the tools are offered at once.
                            env=dict(self.root.env("claude"), ENABLE_TOOL_SEARCH="false"))
        self.assertEqual(r.status, 0, r.stderr[-2000:])
        reqs = self.mock.model_requests("claude")[before:]
        self.assertEqual(len(reqs), 2, reqs)
        # claude offered agentrun's tools to the model, and its second request carries
        # the tool result: gemini's answer in agentrun's text content.
        first = self.mock.body_json(reqs[0])
        self.assertIn("mcp__agentrun__run", [t.get("name") for t in first.get("tools", [])])
        second = json.dumps(self.mock.body_json(reqs[1]))
        self.assertIn(marker, second)
        self.assertIn("tool_result", second)
        self.assertEqual(len(self.mock.model_requests("gemini")) - before_gemini, 1)
        self.assertTrue(r.jsonl()[-1].get("result", "").startswith("Gemini answered"))

    @unittest.skipIf(harness.missing_clis(["claude"]), "no claude")
    def test_claude_gets_a_long_result_cut_to_fit_and_reads_the_rest_from_its_file(self):
        # claude hands its model a result's structuredContent whole up to 50,000
        # characters; past that it saves it to a file of its own with a 2 KB preview
        # ("<persisted-output>", measured with 2.1.332 at 49,997 and 50,017 characters),
        # which a calling model may not be allowed to read. agentrun keeps it within 48 KiB
        # and puts the rest in files under its directory: claude's model sees the result
        # and reads the whole answer from the file it names.
        tail = "TAIL-OF-THE-ANSWER-7731"
        answer = "".join("line %05d of gemini's long answer\n" % i for i in range(9000)) + tail
        self.mock.set_script({
            "claude": [{"kind": "tool", "name": "mcp__agentrun__run",
                        "input": {"prompt": "Ask gemini for the long answer.",
                                  "provider": "gemini"}},
                       {"kind": "shell", "command": "tail -c 200 .agentrun/mcp/*/1-output.txt"},
                       {"kind": "text", "text": "Read it."}],
            "gemini": [{"kind": "text", "text": answer}]})
        before = len(self.mock.model_requests("claude"))
        config = os.path.join(self.root.root, "mcp.json")
        with open(config, "w") as f:
            json.dump({"mcpServers": {"agentrun": {
                "command": AGENTRUN, "args": ["mcp", "--providers", "gemini", "-p", "gemini"],
                "env": self.root.agentrun_env()}}}, f)
        r = harness.run_cli("claude", ["-p", "--output-format", "stream-json", "--verbose",
                                       "--strict-mcp-config", "--mcp-config", config,
                                       "--allowedTools", "mcp__agentrun__run,Bash"],
                            self.root, stdin=b"Use agentrun to ask gemini.", timeout=180,
                            env=dict(self.root.env("claude"), ENABLE_TOOL_SEARCH="false"))
        self.assertEqual(r.status, 0, r.stderr[-2000:])
        reqs = [self.mock.body_json(q) for q in self.mock.model_requests("claude")[before:]]
        self.assertEqual(len(reqs), 3, [json.dumps(q)[-500:] for q in reqs])

        def tool_result(req):
            blocks = [b for m in req["messages"] if isinstance(m.get("content"), list)
                      for b in m["content"] if b.get("type") == "tool_result"]
            c = blocks[-1]["content"]
            return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)
        result = tool_result(reqs[1])
        self.assertNotIn("persisted-output", result)
        self.assertLessEqual(len(result), 50000)
        doc = json.loads(result)  # claude's model sees structuredContent, whole
        self.assertTrue(doc["ok"])
        out = doc["truncated_result"]["left_out"]["output"]
        self.assertEqual(out["bytes"], len(answer))
        self.assertTrue(out["file"].endswith("/1-output.txt"), out)
        # The model read the rest: the file's tail reached its next request.
        self.assertIn(tail, tool_result(reqs[2]))
        # And the file went with the server.
        self.assertFalse(os.path.exists(out["file"]))

    @unittest.skipIf(harness.missing_clis(["codex"]), "no codex")
    def test_codex_calls_the_run_tool_and_its_next_request_carries_the_answer(self):
        # codex 0.17x always defers MCP tools behind its tool_search tool (the feature
        # flags tool_search and tool_search_always_defer_mcp_tools are no-ops now), so
        # the mock first searches, then calls run in the namespace codex gives agentrun.
        marker = "GEMINI-SAYS-5813"
        self.mock.set_script({
            "codex": [{"kind": "tool_search", "query": "agentrun run"},
                      {"kind": "tool", "namespace": "mcp__agentrun", "name": "run",
                       "input": {"prompt": "Ask gemini for the number.", "provider": "gemini"}},
                      {"kind": "text", "text": "Gemini answered."}],
            "gemini": [{"kind": "text", "text": marker}]})
        before = len(self.mock.model_requests("codex"))
        before_gemini = len(self.mock.model_requests("gemini"))
        # codex starts MCP servers with a few environment variables of its own only,
        # so agentrun gets the mock's through the server's env table.
        env = self.root.agentrun_env()
        with open(os.path.join(self.root.codex_home, "config.toml"), "a") as f:
            f.write("\n[mcp_servers.agentrun]\ncommand = %s\nargs = %s\n"
                    "tool_timeout_sec = 300\n\n[mcp_servers.agentrun.env]\n" % (
                        json.dumps(AGENTRUN),
                        json.dumps(["mcp", "--providers", "gemini", "-p", "gemini"])))
            for k, v in env.items():
                f.write("%s = %s\n" % (json.dumps(k), json.dumps(v)))
        r = harness.run_cli("codex", ["exec", "--json", "-"], self.root,
                            stdin=b"Use agentrun to ask gemini.", timeout=180)
        self.assertEqual(r.status, 0, r.stderr[-2000:])
        reqs = [self.mock.body_json(q) for q in self.mock.model_requests("codex")[before:]]
        self.assertEqual(len(reqs), 3, reqs)
        # The first request offers tool_search, not agentrun's tools; the search's output
        # (in the second) holds them in the namespace mcp__agentrun; the third request
        # carries the run tool's result: gemini's answer in agentrun's text content.
        self.assertIn("tool_search", [t.get("type") for t in reqs[0].get("tools", [])])
        self.assertNotIn("mcp__agentrun", json.dumps(reqs[0].get("tools", [])))
        found = [t for i in reqs[1].get("input", []) if i.get("type") == "tool_search_output"
                 for t in i.get("tools", [])]
        self.assertIn(("namespace", "mcp__agentrun"), [(t.get("type"), t.get("name")) for t in found])
        ns = [t for t in found if t.get("name") == "mcp__agentrun"][0]
        self.assertIn("run", [t.get("name") for t in ns.get("tools", [])])
        outputs = [i for i in reqs[2].get("input", []) if i.get("type") == "function_call_output"]
        self.assertEqual(len(outputs), 1, reqs[2].get("input", [])[-3:])
        self.assertIn(marker, json.dumps(outputs[0]))
        self.assertEqual(len(self.mock.model_requests("gemini")) - before_gemini, 1)
        self.assertIn("Gemini answered.", r.stdout.decode())


def main():
    harness.require_clis(["gemini"])
    require_sdk()
    unittest.main()


if __name__ == "__main__":
    main()
