#!/usr/bin/env python3
"""The loopback mock itself, without any CLI: routes, script queues, error bodies, big and
hung streams, client disconnects, the request log. Needs only Python (never skipped)."""

import http.client
import json
import os
import socket
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import Mock  # noqa: E402
import mockapi  # noqa: E402

CLAUDE = ("POST", "/v1/messages?beta=true", {"model": "claude-x", "stream": True, "messages": []})
CODEX = ("POST", "/v1/responses", {"model": "gpt-5.5", "stream": True, "input": [], "tools": [
    {"type": "custom", "name": "apply_patch"}]})
GEMINI = ("POST", "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", {"contents": []})


def sse_events(data):
    out = []
    for block in data.decode().split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                out.append(json.loads(line[6:]))
    return out


class TestMock(unittest.TestCase):
    def setUp(self):
        self.mock = Mock().start()
        self.addCleanup(self.mock.cleanup)
        self.addCleanup(self.no_traceback)

    def no_traceback(self):
        with open(os.path.join(self.mock.log_dir, "mock.stderr")) as f:
            err = f.read()
        self.assertNotIn("Traceback", err)

    def call(self, req, timeout=30):
        method, path, body = req
        c = http.client.HTTPConnection("127.0.0.1", self.mock.port, timeout=timeout)
        c.request(method, path, body=json.dumps(body), headers={
            "Content-Type": "application/json", "x-api-key": "secret-key"})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def test_prints_port_and_pid(self):
        self.assertGreater(self.mock.port, 0)
        self.assertEqual(self.mock.pid, self.mock.proc.pid)

    def test_text_usage_per_api(self):
        u = {"input": 100, "cached": 20, "cache_write": 3, "output": 7}
        self.mock.set_script({a: [{"text": "hi", "usage": u}] for a in ("claude", "codex", "gemini")})
        st, data = self.call(CLAUDE)
        ev = sse_events(data)
        self.assertEqual(st, 200)
        self.assertEqual([e["type"] for e in ev], [
            "message_start", "content_block_start", "content_block_delta", "content_block_stop",
            "message_delta", "message_stop"])
        self.assertEqual(ev[0]["message"]["usage"]["input_tokens"], 100)
        self.assertEqual(ev[4]["usage"]["cache_read_input_tokens"], 20)
        self.assertEqual(ev[4]["usage"]["output_tokens"], 7)
        st, data = self.call(CODEX)
        ev = sse_events(data)
        self.assertEqual(ev[-1]["type"], "response.completed")
        usage = ev[-1]["response"]["usage"]
        self.assertEqual((usage["input_tokens"], usage["input_tokens_details"]["cached_tokens"],
                          usage["output_tokens"]), (120, 20, 7))
        st, data = self.call(GEMINI)
        ev = sse_events(data)
        self.assertEqual(ev[-1]["candidates"][0]["finishReason"], "STOP")
        um = ev[-1]["usageMetadata"]
        self.assertEqual((um["promptTokenCount"], um["cachedContentTokenCount"],
                          um["candidatesTokenCount"]), (120, 20, 7))

    def test_exhausted_script_is_a_clear_500(self):
        self.mock.set_script({"claude": [{"text": "once"}]})
        self.assertEqual(self.call(CLAUDE)[0], 200)
        st, data = self.call(CLAUDE)
        self.assertEqual(st, 500)
        self.assertIn(b"script exhausted", data)
        st, data = self.call(("POST", "/nope", {}))
        self.assertEqual(st, 500)
        self.assertIn(b"no route", data)

    def test_times_and_errors(self):
        self.mock.set_script({"codex": [{"kind": "error", "status": 429, "times": 2},
                                        {"kind": "error", "status": 401, "times": "*"}]})
        self.assertEqual([self.call(CODEX)[0] for _ in range(4)], [429, 429, 401, 401])
        st, data = self.call(CODEX)
        self.assertEqual(json.loads(data)["error"]["code"], "invalid_api_key")

    def test_match_serves_each_job_its_own_steps(self):
        # Steps with "match" go to the requests whose body holds the text, in order;
        # a request that matches none gets the first step without one.
        self.mock.set_script({"codex": [{"kind": "error", "status": 401, "match": "[job a]"},
                                        {"kind": "error", "status": 429, "match": "[job b]"},
                                        {"kind": "error", "status": 403, "match": "[job a]"},
                                        {"kind": "error", "status": 500}]})
        method, path, body = CODEX
        def job(name):
            return (method, path, dict(body, input=[{"role": "user", "content": name}]))
        self.assertEqual(self.call(job("[job b]"))[0], 429)
        self.assertEqual(self.call(job("[job a]"))[0], 401)
        self.assertEqual(self.call(job("[job c]"))[0], 500)
        self.assertEqual(self.call(job("[job a]"))[0], 403)
        self.assertEqual(self.call(job("[job a]"))[0], 500)  # none of its own left

    def call_headers(self, req):
        method, path, body = req
        c = http.client.HTTPConnection("127.0.0.1", self.mock.port, timeout=30)
        c.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, r.getheader("Retry-After"), json.loads(data)

    def test_retry_after_and_usage_limit(self):
        err = {"kind": "error", "status": 429, "retry_after": 7}
        self.mock.set_script({"claude": [err], "gemini": [err], "codex": [
            dict(err, resets_in_seconds=5400), {"kind": "error", "status": 429}]})
        st, ra, body = self.call_headers(CLAUDE)
        self.assertEqual((st, ra, body["error"]["type"]), (429, "7", "rate_limit_error"))
        st, ra, body = self.call_headers(GEMINI)
        self.assertEqual((st, ra), (429, "7"))
        self.assertEqual(body["error"]["details"][0]["retryDelay"], "7s")
        st, ra, body = self.call_headers(CODEX)
        self.assertEqual((st, ra, body["error"]["type"]), (429, "7", "usage_limit_reached"))
        self.assertEqual(body["error"]["resets_in_seconds"], 5400)
        self.assertAlmostEqual(body["error"]["resets_at"], time.time() + 5400, delta=60)
        # Without the keys: no header, the plain rate-limit body.
        st, ra, body = self.call_headers(CODEX)
        self.assertEqual((st, ra, body["error"]["code"]), (429, None, "rate_limit_exceeded"))

    def test_tool_write_shapes(self):
        self.mock.set_script({a: [{"kind": "tool_write", "path": "/w/f.txt", "content": "x\n"}]
                              for a in ("claude", "codex", "gemini")})
        ev = sse_events(self.call(CLAUDE)[1])
        self.assertEqual(ev[1]["content_block"]["name"], "Write")
        self.assertEqual(json.loads(ev[2]["delta"]["partial_json"]),
                         {"file_path": "/w/f.txt", "content": "x\n"})
        ev = sse_events(self.call(CODEX)[1])
        item = [e for e in ev if e["type"] == "response.output_item.done"][0]["item"]
        self.assertEqual(item["type"], "custom_tool_call")
        self.assertIn("*** Add File: /w/f.txt\n+x\n", item["input"])
        ev = sse_events(self.call(GEMINI)[1])
        self.assertEqual(ev[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
                         "write_file")

    def test_codex_tool_search_and_namespaced_tool_shapes(self):
        self.mock.set_script({"codex": [
            {"kind": "tool_search", "query": "agentrun run"},
            {"kind": "tool", "namespace": "mcp__agentrun", "name": "run", "input": {"prompt": "p"}}]})
        ev = sse_events(self.call(CODEX)[1])
        item = [e for e in ev if e["type"] == "response.output_item.done"][0]["item"]
        self.assertEqual((item["type"], item["execution"], item["arguments"]),
                         ("tool_search_call", "client", {"query": "agentrun run", "limit": 8}))
        ev = sse_events(self.call(CODEX)[1])
        item = [e for e in ev if e["type"] == "response.output_item.done"][0]["item"]
        self.assertEqual((item["type"], item["namespace"], item["name"]),
                         ("function_call", "mcp__agentrun", "run"))
        self.assertEqual(json.loads(item["arguments"]), {"prompt": "p"})

    def test_big_answer_exact(self):
        self.mock.set_script({"gemini": [{"kind": "big", "bytes": 2 << 20, "seed": 5}]})
        ev = sse_events(self.call(GEMINI)[1])
        text = "".join(e["candidates"][0]["content"]["parts"][0]["text"] for e in ev)
        self.assertEqual(text, mockapi.big_text(2 << 20, 5))
        lines = text.splitlines()
        self.assertEqual(len(lines), len(set(lines)), "big text repeats a line")

    def test_hang_and_disconnect_do_not_kill_the_mock(self):
        self.mock.set_script({"claude": [{"kind": "hang", "text": "part"},
                                          {"kind": "big", "bytes": 4 << 20}, {"text": "alive"}]})
        s = socket.create_connection(("127.0.0.1", self.mock.port))
        body = json.dumps(CLAUDE[2]).encode()
        s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        s.settimeout(5)
        got = b""
        while b"part" not in got:
            got += s.recv(65536)
        s.settimeout(0.5)
        with self.assertRaises(socket.timeout):  # stalled
            s.recv(65536)
        s.close()
        # a client that goes away in the middle of a big answer
        s = socket.create_connection(("127.0.0.1", self.mock.port))
        s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        s.recv(1000)
        s.close()
        time.sleep(0.3)
        st, data = self.call(CLAUDE)
        self.assertEqual(st, 200)
        self.assertIn(b"alive", data)
        self.assertIsNone(self.mock.proc.poll())

    def test_delay(self):
        self.mock.set_script({"codex": [{"text": "late", "delay": 0.8}]})
        t0 = time.time()
        self.call(CODEX)
        self.assertGreaterEqual(time.time() - t0, 0.8)

    def test_gemini_side_calls(self):
        st, data = self.call(("POST", "/v1beta/models/flash-lite:generateContent", {
            "contents": [], "generationConfig": {"responseJsonSchema": {
                "properties": {"complexity_score": {"type": "integer"}}}}}))
        text = json.loads(data)["candidates"][0]["content"]["parts"][0]["text"]
        self.assertIn("complexity_score", json.loads(text))
        st, data = self.call(("POST", "/v1beta/models/m:countTokens", {"contents": []}))
        self.assertIn("totalTokens", json.loads(data))

    def test_request_log(self):
        self.mock.set_script({"claude": [{"text": "x"}]})
        self.call(CLAUDE)
        e = self.mock.requests("claude")[-1]
        self.assertEqual((e["method"], e["path"], e["query"], e["step"]),
                         ("POST", "/v1/messages", "beta=true", 0))
        self.assertEqual(e["headers"]["x-api-key"], "<redacted>")
        self.assertEqual(self.mock.body_json(e), CLAUDE[2])
        self.assertEqual(e["body_size"], len(json.dumps(CLAUDE[2])))

    def test_stop_is_prompt_with_a_hung_client(self):
        self.mock.set_script({"codex": [{"kind": "hang"}]})
        s = socket.create_connection(("127.0.0.1", self.mock.port))
        body = json.dumps(CODEX[2]).encode()
        s.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                  % len(body) + body)
        s.recv(1000)
        t0 = time.time()
        self.mock.stop()
        self.assertLess(time.time() - t0, 2.5)
        s.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
