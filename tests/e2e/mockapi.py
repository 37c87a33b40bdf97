#!/usr/bin/env python3
"""Loopback mock of the Anthropic, OpenAI Responses and Gemini APIs, for e2e tests.

Python 3 standard library only. Binds 127.0.0.1 on a free port and prints one JSON
line {"port": N, "pid": P} on stdout (and into --port-file when given) once it is
listening. Stop it with SIGTERM (or SIGINT) to its PID.

    python3 mockapi.py [--script FILE] [--log-dir DIR] [--port-file FILE] [--exit-with-parent]

Endpoints
  claude  HEAD /                      -> 200 (claude probes the base URL)
          POST /v1/messages           -> Anthropic Messages SSE
  codex   POST /v1/responses          -> Responses API SSE
  gemini  POST /v1beta/models/M:streamGenerateContent?alt=sse -> Gemini SSE
          POST /v1beta/models/M:generateContent -> model router / session title
          POST /v1beta/models/M:countTokens
  control POST /_mock/script  (body: a script, replaces the current one, resets queues)
          GET  /_mock/requests (the request log as a JSON array)
          GET  /_mock/health

Script (JSON): {"claude": [STEP...], "codex": [STEP...], "gemini": [STEP...],
                "gemini_router": {"usage": {...}, "score": 1}}
Each API consumes its own list in order, one step per model request (claude
/v1/messages, codex /v1/responses, gemini streamGenerateContent). A request with no
step left gets HTTP 500 with a body explaining that the script is exhausted. STEP:

  {"kind": "text", "text": "hello"}                  plain answer
  {"kind": "json", "value": {...}}                   the value as a ```json fenced block
  {"kind": "tool_write", "path": "f.txt", "content": "..."}
        a tool call that writes the file (claude Write, codex apply_patch, gemini
        write_file); a relative path is made absolute against the request's cwd when the
        CLI tells it (claude, gemini). Put the final text as the next step.
  {"kind": "structured", "value": {...}}             claude: a StructuredOutput tool call
  {"kind": "tool", "name": N, "input": {...}}        claude, codex: a call of tool N (an MCP
        tool); for codex "namespace" (e.g. "mcp__agentrun") names the namespace
        tool_search put N in. The final text as a later step
  {"kind": "tool_search", "query": "...", "limit": 8} codex: a tool_search_call (codex
        defers MCP tools behind its tool_search tool; its next request carries a
        tool_search_output listing the matching tools). The tool call as the next step
  {"kind": "shell", "command": "echo hi > f.txt"}    a shell tool call (claude Bash, codex
        exec_command, gemini run_shell_command); the final text as the next step
  {"kind": "error", "status": 401|429|500|..., "message": "...", "retry_after": 2}
        HTTP error with the API's own error body; "retry_after" (seconds) adds a
        Retry-After header (and, for gemini, a google.rpc.RetryInfo retryDelay in the
        body, the way the Gemini API says when to come back); "resets_in_seconds" (codex)
        makes the body a ChatGPT usage-limit error (type usage_limit_reached) that says
        when the limit resets
  {"kind": "stream_error", "text": "partial", "message": "..."}
        partial text then an in-stream failure (claude error event, codex
        response.failed, gemini: the stream is cut)
  {"kind": "hang", "text": "partial"}   send the start and the partial text, then stall
        until the client goes away (or the mock stops)
  {"kind": "big", "bytes": 2097152, "seed": 1}       non-repetitive text of that size
  {"kind": "repetitive", "bytes": 65536}             the same line over and over
Common keys:
  "match": "text"  the step only serves a request whose body holds this text (e.g. a
            marker in one job's prompt): parallel jobs each get their own steps, in order
  "usage": {"input": uncached, "cached": N, "cache_write": N, "output": N,
            "reasoning": N}   (agentrun's normalized tokens; mapped to each API's own
            convention: Anthropic input excludes cache, OpenAI and Gemini include it)
  "delay": seconds to wait before answering
  "chunk": bytes per streamed text delta (default 4096)
  "times": serve this step N times (an integer) or "*" (for every further request)
  "model": model name reported back (default: the requested one)

Every request is logged to DIR/requests.jsonl (method, path, headers with secrets
redacted, body size, the step served) and its body to DIR/body-NNNN.bin.
"""

import argparse
import hashlib
import json
import os
import random
import select
import signal
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "api-key",
                  "cookie", "proxy-authorization"}
DEFAULT_CHUNK = 4096
STOPPING = threading.Event()

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray "
         "yankee zulu amber basalt cobalt dune ember fjord granite harbor island jade "
         "kelp lagoon meadow nectar orchid pepper quartz river saffron timber umber "
         "velvet willow yarrow zephyr").split()


def big_text(nbytes, seed=1):
    """Deterministic text of exactly nbytes that never repeats a line."""
    rng = random.Random(seed)
    out, size, n = [], 0, 0
    while size < nbytes:
        n += 1
        line = "%07d %s %s\n" % (n, " ".join(rng.choice(WORDS) for _ in range(10)),
                                 hashlib.sha1(("%d:%d" % (seed, n)).encode()).hexdigest()[:12])
        out.append(line)
        size += len(line)
    return "".join(out)[:nbytes]


def repetitive_text(nbytes):
    line = "abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz\n"
    return (line * (nbytes // len(line) + 1))[:nbytes]


def chunks(text, size):
    size = max(1, int(size))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class ClientGone(Exception):
    pass


class State:
    def __init__(self, script, log_dir):
        self.lock = threading.Lock()
        self.log_dir = log_dir
        self.seq = 0
        self.log = []
        self.set_script(script)
        if log_dir:
            os.makedirs(log_dir, exist_ok=True)

    def set_script(self, script):
        with self.lock:
            self.script = script or {}
            self.queues = {api: [dict(s) for s in self.script.get(api, [])]
                           for api in ("claude", "codex", "gemini")}
            self.served = {"claude": 0, "codex": 0, "gemini": 0}

    def next_step(self, api, body=b""):
        """The next step for api whose "match" (if any) the request body holds, or None
        when there is none."""
        with self.lock:
            q = self.queues.get(api, [])
            i = 0
            while i < len(q):
                step = q[i]
                match = step.get("match")
                if match is not None and match.encode() not in body:
                    i += 1
                    continue
                times = step.get("times", 1)
                if times == "*":
                    break
                if int(times) <= 0:
                    q.pop(i)
                    continue
                step["times"] = int(times) - 1
                if step["times"] <= 0:
                    q.pop(i)
                break
            else:
                return None, None
            idx = self.served[api]
            self.served[api] += 1
            return dict(step), idx

    def record(self, entry, body):
        with self.lock:
            self.seq += 1
            entry["seq"] = self.seq
            if self.log_dir:
                name = "body-%04d.bin" % self.seq
                with open(os.path.join(self.log_dir, name), "wb") as f:
                    f.write(body)
                entry["body_file"] = name
                with open(os.path.join(self.log_dir, "requests.jsonl"), "a") as f:
                    f.write(json.dumps(entry) + "\n")
            self.log.append(entry)
            return entry


STATE = None


def usage_of(step):
    u = step.get("usage") or {}
    return {k: int(u.get(k, d)) for k, d in
            (("input", 10), ("cached", 0), ("cache_write", 0), ("output", 5), ("reasoning", 0))}


def retry_after_header(step):
    """The Retry-After header of an error step with "retry_after", else none."""
    if "retry_after" not in step:
        return {}
    return {"retry-after": str(step["retry_after"])}


def unified_headers(step):
    """Anthropic's subscription rate-limit headers for a step with "unified":
    {"status": allowed|allowed_warning|rejected, "resets_in": seconds, "claim": five_hour|
    seven_day, "utilization": 0..1} (claude reads them into its rate_limit_event)."""
    u = step.get("unified")
    if not u:
        return {}
    pre = "anthropic-ratelimit-unified-"
    h = {pre + "status": u.get("status", "allowed")}
    if "resets_in" in u:
        reset = str(int(time.time()) + int(u["resets_in"]))
        h[pre + "reset"] = reset
        h[pre + ("7d" if u.get("claim") == "seven_day" else "5h") + "-reset"] = reset
    if "claim" in u:
        h[pre + "representative-claim"] = u["claim"]
    if "utilization" in u:
        h[pre + ("7d" if u.get("claim") == "seven_day" else "5h") + "-utilization"] = \
            str(u["utilization"])
    return h


def codex_limit_headers(step):
    """OpenAI's x-codex-* rate-limit headers for a step with "codex_limits":
    {"primary": {"used_percent", "window_minutes", "resets_in"}, "secondary": {...}} (codex
    writes them into its rollout's rate_limits)."""
    lim = step.get("codex_limits")
    h = {}
    for name in ("primary", "secondary"):
        w = (lim or {}).get(name)
        if not w:
            continue
        pre = "x-codex-%s-" % name
        if "used_percent" in w:
            h[pre + "used-percent"] = str(w["used_percent"])
        if "window_minutes" in w:
            h[pre + "window-minutes"] = str(w["window_minutes"])
        if "resets_in" in w:
            h[pre + "reset-at"] = str(int(time.time()) + int(w["resets_in"]))
    return h


def step_text(step):
    kind = step.get("kind", "text")
    if kind == "json":
        return "```json\n" + json.dumps(step.get("value"), indent=2) + "\n```"
    if kind == "big":
        return big_text(int(step.get("bytes", 2 * 1024 * 1024)), int(step.get("seed", 1)))
    if kind == "repetitive":
        return repetitive_text(int(step.get("bytes", 65536)))
    return step.get("text", "")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mockapi/1"

    def log_message(self, fmt, *args):  # quiet: the request log is the record
        pass

    # ---------------------------------------------------------------- plumbing
    def handle(self):
        try:
            super().handle()
        except (ConnectionError, BrokenPipeError, ClientGone, socket.timeout, OSError):
            self.close_connection = True
        except Exception:  # a bug in the mock: say so on stderr, keep serving
            import traceback
            traceback.print_exc()
            self.close_connection = True

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                line = self.rfile.readline()
                size = int(line.strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            return data
        return b""

    def send_json(self, status, obj, extra_headers=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def start_sse(self, extra_headers=None):
        self.send_response(200)
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data, event=None):
        if STOPPING.is_set():
            raise ClientGone()
        out = ""
        if event:
            out += "event: %s\n" % event
        out += "data: %s\n\n" % json.dumps(data)
        self.wfile.write(out.encode())
        self.wfile.flush()

    def stall(self):
        """Hold the connection open, sending nothing, until the client goes away."""
        sock = self.connection
        while not STOPPING.is_set():
            try:
                r, _, _ = select.select([sock], [], [], 0.5)
                if r and not sock.recv(1, socket.MSG_PEEK):
                    break
            except (OSError, ValueError):
                break
        raise ClientGone()

    def wait_delay(self, step):
        end = time.time() + float(step.get("delay", 0))
        while time.time() < end and not STOPPING.is_set():
            time.sleep(min(0.05, max(0, end - time.time())))

    def record_request(self, api, body, extra=None):
        headers = {}
        for k, v in self.headers.items():
            headers[k] = "<redacted>" if k.lower() in SECRET_HEADERS else v
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qsl(u.query)
        query = "&".join("%s=%s" % (k, "<redacted>" if k.lower() == "key" else v) for k, v in q)
        entry = {"time": time.time(), "api": api, "method": self.command, "path": u.path,
                 "query": query, "headers": headers, "body_size": len(body)}
        entry.update(extra or {})
        return STATE.record(entry, body)

    # ---------------------------------------------------------------- routing
    def do_HEAD(self):
        self.record_request("claude" if self.path == "/" else "other", b"")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_mock/requests":
            with STATE.lock:
                self.send_json(200, STATE.log)
            return
        if u.path == "/_mock/health":
            self.send_json(200, {"ok": True})
            return
        body = b""
        self.record_request("other", body)
        self.send_json(404, {"error": {"message": "mockapi: no GET route for %s" % u.path}})

    def do_POST(self):
        body = self.read_body()
        u = urllib.parse.urlsplit(self.path)
        path = u.path
        if path == "/_mock/script":
            try:
                STATE.set_script(json.loads(body or b"{}"))
            except ValueError as e:
                self.send_json(400, {"error": "bad script: %s" % e})
                return
            self.send_json(200, {"ok": True})
            return
        try:
            req = json.loads(body) if body else {}
        except ValueError:
            req = None
        if path == "/v1/messages":
            if isinstance(req, dict) and self.is_claude_side_request(req):
                self.record_request("claude", body, {"side": True})
                return self.claude_side(req)
            return self.scripted("claude", body, req, self.claude)
        if path == "/v1/messages/count_tokens":
            self.record_request("claude", body, {"side": True})
            return self.send_json(200, {"input_tokens": 10})
        if path == "/v1/responses":
            return self.scripted("codex", body, req, self.codex)
        if path.startswith("/v1beta/models/"):
            model, _, method = path[len("/v1beta/models/"):].partition(":")
            if method == "streamGenerateContent":
                return self.scripted("gemini", body, req,
                                     lambda step, req: self.gemini(step, req, model))
            if method == "generateContent":
                self.record_request("gemini", body, {"side": True})
                return self.gemini_side(req or {}, model)
            if method == "countTokens":
                self.record_request("gemini", body, {"side": True})
                return self.send_json(200, {"totalTokens": max(1, len(body) // 4)})
        self.record_request("other", body)
        self.send_json(500, {"error": {"type": "mock_error", "message":
                                       "mockapi: no route for POST %s" % path}})

    def scripted(self, api, body, req, fn):
        step, idx = STATE.next_step(api, body)
        self.record_request(api, body, {"step": idx, "kind": step and step.get("kind", "text")})
        if step is None:
            msg = ("mockapi: script exhausted: no step left for %s request #%d (%s %s)"
                   % (api, STATE.served[api] + 1, self.command, self.path))
            return self.send_json(500, {"error": {"type": "api_error", "code": 500,
                                                  "status": "INTERNAL", "message": msg}})
        if req is None:
            return self.send_json(400, {"error": {"message": "mockapi: body is not JSON"}})
        self.wait_delay(step)
        if step.get("kind") == "error":
            return self.api_error(api, step)
        fn(step, req)

    def api_error(self, api, step):
        status = int(step.get("status", 500))
        msg = step.get("message")
        if api == "claude":
            etype = {400: "invalid_request_error", 401: "authentication_error",
                     403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                     429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
            body = {"type": "error", "error": {"type": etype, "message": msg or {
                401: "invalid x-api-key", 429: "rate limited",
                403: "Your API key does not have permission to use the specified resource."}.get(
                status, "Internal server error")}}
            hdr = {"request-id": "req_mock"}
            if status == 429:
                hdr["retry-after"] = "0"
            hdr.update(retry_after_header(step))
            hdr.update(unified_headers(step))
            return self.send_json(status, body, hdr)
        if api == "codex":
            code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status, "server_error")
            etype = {401: "invalid_request_error", 429: "requests"}.get(status, "server_error")
            body = {"error": {"message": msg or {401: "Incorrect API key provided: sk-mock.",
                                                 403: "Project `proj_mock` does not have access "
                                                      "to model `gpt-5.5`",
                                                 429: "Rate limit reached"}.get(
                status, "The server had an error while processing your request."),
                "type": etype, "param": None, "code": code}}
            if "resets_in_seconds" in step:
                body["error"].update(type="usage_limit_reached", code=None,
                                     message=msg or "The usage limit has been reached",
                                     resets_in_seconds=int(step["resets_in_seconds"]),
                                     resets_at=int(time.time()) + int(step["resets_in_seconds"]))
            return self.send_json(status, body, retry_after_header(step))
        gstatus = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                   404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
        body = {"error": {"code": status, "status": gstatus, "message": msg or {
            401: "API key not valid. Please pass a valid API key.",
            403: "The caller does not have permission",
            429: "Resource has been exhausted (e.g. check quota)."}.get(
            status, "An internal error has occurred.")}}
        if "retry_after" in step:
            body["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                         "retryDelay": "%ss" % step["retry_after"]}]
        return self.send_json(status, body, retry_after_header(step))

    # ---------------------------------------------------------------- claude
    @staticmethod
    def is_claude_side_request(req):
        # Nothing known yet besides the main loop; kept as a hook.
        return False

    def claude_side(self, req):
        return self.send_json(200, {"id": "msg_side", "type": "message", "role": "assistant",
                                    "model": req.get("model", "claude"), "content": [
                                        {"type": "text", "text": "ok"}],
                                    "stop_reason": "end_turn", "stop_sequence": None,
                                    "usage": {"input_tokens": 0, "output_tokens": 0}})

    def claude(self, step, req):
        kind = step.get("kind", "text")
        u = usage_of(step)
        model = step.get("model") or req.get("model", "claude-opus-4-8")
        mid = "msg_mock_%d" % STATE.seq
        if req.get("stream") is not True:
            return self.claude_nonstream(step, req, model, mid, u)
        self.start_sse(unified_headers(step))
        self.sse({"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": u["input"], "cache_creation_input_tokens": u["cache_write"],
                      "cache_read_input_tokens": u["cached"], "output_tokens": 1}}},
            "message_start")
        stop_reason = "end_turn"
        if kind in ("tool_write", "structured", "shell", "tool"):
            name, args = claude_tool(step, req)
            if step.get("text"):
                self.claude_text_block(0, step["text"], step)
            idx = 1 if step.get("text") else 0
            self.sse({"type": "content_block_start", "index": idx, "content_block": {
                "type": "tool_use", "id": "toolu_mock_%d" % STATE.seq, "name": name, "input": {}}},
                "content_block_start")
            self.sse({"type": "content_block_delta", "index": idx, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(args)}}, "content_block_delta")
            self.sse({"type": "content_block_stop", "index": idx}, "content_block_stop")
            stop_reason = "tool_use"
        elif kind == "hang":
            self.sse({"type": "content_block_start", "index": 0,
                      "content_block": {"type": "text", "text": ""}}, "content_block_start")
            self.sse({"type": "content_block_delta", "index": 0, "delta": {
                "type": "text_delta", "text": step.get("text", "partial")}}, "content_block_delta")
            self.stall()
        elif kind == "stream_error":
            self.sse({"type": "content_block_start", "index": 0,
                      "content_block": {"type": "text", "text": ""}}, "content_block_start")
            self.sse({"type": "content_block_delta", "index": 0, "delta": {
                "type": "text_delta", "text": step.get("text", "partial")}}, "content_block_delta")
            self.sse({"type": "error", "error": {"type": "overloaded_error",
                                                 "message": step.get("message", "Overloaded")}}, "error")
            return
        else:
            self.claude_text_block(0, step_text(step), step)
        self.sse({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                  "usage": {"input_tokens": u["input"], "cache_creation_input_tokens": u["cache_write"],
                            "cache_read_input_tokens": u["cached"], "output_tokens": u["output"]}},
                 "message_delta")
        self.sse({"type": "message_stop"}, "message_stop")

    def claude_nonstream(self, step, req, model, mid, u):
        """The non-streaming fallback claude sends (no "stream" key) after a failed stream."""
        kind = step.get("kind", "text")
        if kind == "hang":
            self.stall()
        if kind == "stream_error":
            return self.api_error("claude", {"status": 529, "message": step.get("message", "Overloaded")})
        content, stop = [], "end_turn"
        if kind in ("tool_write", "structured", "shell", "tool"):
            name, args = claude_tool(step, req)
            if step.get("text"):
                content.append({"type": "text", "text": step["text"]})
            content.append({"type": "tool_use", "id": "toolu_mock_%d" % STATE.seq, "name": name,
                            "input": args})
            stop = "tool_use"
        else:
            content.append({"type": "text", "text": step_text(step)})
        self.send_json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                             "content": content, "stop_reason": stop, "stop_sequence": None,
                             "usage": {"input_tokens": u["input"],
                                       "cache_creation_input_tokens": u["cache_write"],
                                       "cache_read_input_tokens": u["cached"],
                                       "output_tokens": u["output"]}})

    def claude_text_block(self, idx, text, step):
        self.sse({"type": "content_block_start", "index": idx,
                  "content_block": {"type": "text", "text": ""}}, "content_block_start")
        for c in chunks(text, step.get("chunk", DEFAULT_CHUNK)):
            self.sse({"type": "content_block_delta", "index": idx,
                      "delta": {"type": "text_delta", "text": c}}, "content_block_delta")
        self.sse({"type": "content_block_stop", "index": idx}, "content_block_stop")

    # ---------------------------------------------------------------- codex
    def codex(self, step, req):
        kind = step.get("kind", "text")
        u = usage_of(step)
        model = step.get("model") or req.get("model", "gpt-5.5")
        rid = "resp_mock_%d" % STATE.seq
        resp = {"id": rid, "object": "response", "created_at": int(time.time()),
                "status": "in_progress", "model": model, "output": []}
        self.start_sse(codex_limit_headers(step))
        self.sse(dict(type="response.created", response=resp), "response.created")
        self.sse(dict(type="response.in_progress", response=resp), "response.in_progress")
        if kind in ("tool_write", "shell", "tool", "tool_search"):
            cid = "call_mock_%d" % STATE.seq
            if kind == "tool_search":
                item = {"type": "tool_search_call", "id": "ts_" + cid, "call_id": cid,
                        "execution": "client", "status": "completed",
                        "arguments": {"query": step.get("query", ""),
                                      "limit": step.get("limit", 8)}}
            elif kind == "tool":
                item = {"type": "function_call", "id": "fc_" + cid, "call_id": cid,
                        "name": step["name"], "arguments": json.dumps(step.get("input", {})),
                        "status": "completed"}
                if step.get("namespace"):
                    item["namespace"] = step["namespace"]
            elif kind == "shell":
                item = codex_shell_item(req, step.get("command", "true"), "call_mock_%d" % STATE.seq)
            else:
                item = codex_write_item(req, step.get("path", "out.txt"), step.get("content", ""),
                                        "call_mock_%d" % STATE.seq)
            added = dict(item, status="in_progress")
            if isinstance(added.get("arguments"), str):
                added["arguments"] = ""
            if "input" in added:
                added["input"] = ""
            self.sse({"type": "response.output_item.added", "output_index": 0, "item": added},
                     "response.output_item.added")
            self.sse({"type": "response.output_item.done", "output_index": 0, "item": item},
                     "response.output_item.done")
        else:
            text = step_text(step) if kind not in ("hang", "stream_error") else step.get("text", "partial")
            iid = "msg_mock_%d" % STATE.seq
            self.sse({"type": "response.output_item.added", "output_index": 0, "item": {
                "type": "message", "id": iid, "role": "assistant", "status": "in_progress",
                "content": []}}, "response.output_item.added")
            self.sse({"type": "response.content_part.added", "item_id": iid, "output_index": 0,
                      "content_index": 0, "part": {"type": "output_text", "text": "",
                                                   "annotations": []}},
                     "response.content_part.added")
            for c in chunks(text, step.get("chunk", DEFAULT_CHUNK)):
                self.sse({"type": "response.output_text.delta", "item_id": iid, "output_index": 0,
                          "content_index": 0, "delta": c}, "response.output_text.delta")
            if kind == "hang":
                self.stall()
            if kind == "stream_error":
                self.sse({"type": "response.failed", "response": dict(
                    resp, status="failed", error={"code": "server_error", "message": step.get(
                        "message", "mock stream failure")})}, "response.failed")
                return
            self.sse({"type": "response.output_text.done", "item_id": iid, "output_index": 0,
                      "content_index": 0, "text": text}, "response.output_text.done")
            self.sse({"type": "response.output_item.done", "output_index": 0, "item": {
                "type": "message", "id": iid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}},
                "response.output_item.done")
        done = dict(resp, status="completed", usage={
            "input_tokens": u["input"] + u["cached"],
            "input_tokens_details": {"cached_tokens": u["cached"]},
            "output_tokens": u["output"],
            "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
            "total_tokens": u["input"] + u["cached"] + u["output"]})
        self.sse({"type": "response.completed", "response": done}, "response.completed")

    # ---------------------------------------------------------------- gemini
    def gemini(self, step, req, model):
        kind = step.get("kind", "text")
        u = usage_of(step)
        model = step.get("model") or model
        usage = {"promptTokenCount": u["input"] + u["cached"],
                 "candidatesTokenCount": u["output"] - u["reasoning"],
                 "totalTokenCount": u["input"] + u["cached"] + u["output"]}
        if u["cached"]:
            usage["cachedContentTokenCount"] = u["cached"]
        if u["reasoning"]:
            usage["thoughtsTokenCount"] = u["reasoning"]
        self.start_sse()

        def chunk(parts, finish=None, with_usage=False):
            cand = {"content": {"parts": parts, "role": "model"}, "index": 0}
            if finish:
                cand["finishReason"] = finish
            ev = {"candidates": [cand], "modelVersion": model, "responseId": "mock-%d" % STATE.seq}
            if with_usage:
                ev["usageMetadata"] = usage
            self.sse(ev)

        if kind == "shell":
            chunk([{"functionCall": {"name": "run_shell_command", "args": {
                "command": step.get("command", "true"), "description": "mock command"}}}],
                "STOP", True)
            return
        if kind == "tool_write":
            path = step.get("path", "out.txt")
            if not os.path.isabs(path):
                path = os.path.join(gemini_cwd(req) or "", path)
            chunk([{"functionCall": {"name": "write_file", "args": {
                "file_path": path, "content": step.get("content", "")}}}], "STOP", True)
            return
        if kind in ("hang", "stream_error"):
            chunk([{"text": step.get("text", "partial")}])
            if kind == "hang":
                self.stall()
            return  # stream_error: cut the stream without a finishReason
        parts = chunks(step_text(step), step.get("chunk", DEFAULT_CHUNK))
        for i, c in enumerate(parts):
            last = i == len(parts) - 1
            chunk([{"text": c}], "STOP" if last else None, last)

    def gemini_side(self, req, model):
        """generateContent: the model router (JSON schema with complexity_score) or a title."""
        router = (STATE.script.get("gemini_router") or {})
        u = usage_of({"usage": router.get("usage", {"input": 0, "output": 0})})
        blob = json.dumps(req)
        if "complexity_score" in blob:
            text = json.dumps({"complexity_reasoning": "mock", "complexity_score":
                               int(router.get("score", 1))})
        elif "reasoning" in blob and "model_choice" in blob:
            text = json.dumps({"reasoning": "mock", "model_choice": "flash"})
        else:
            text = router.get("title", "Mock session")
        self.send_json(200, {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                                             "finishReason": "STOP", "index": 0}],
                             "usageMetadata": {"promptTokenCount": u["input"] + u["cached"],
                                               "candidatesTokenCount": u["output"],
                                               "totalTokenCount": u["input"] + u["cached"] + u["output"]},
                             "modelVersion": model})


def claude_tool(step, req):
    kind = step.get("kind")
    if kind == "tool_write":
        path = step.get("path", "out.txt")
        if not os.path.isabs(path):
            path = os.path.join(claude_cwd(req) or "", path)
        return "Write", {"file_path": path, "content": step.get("content", "")}
    if kind == "shell":
        return "Bash", {"command": step.get("command", "true"), "description": "mock command"}
    if kind == "tool":
        return step["name"], step.get("input", {})
    return "StructuredOutput", step.get("value", {})


def claude_cwd(req):
    """The working directory claude states in its system prompt ("Primary working directory: X")."""
    blob = json.dumps(req.get("system", "")) + json.dumps(req.get("messages", [])[:1])
    for marker in ("Primary working directory: ", "Working directory: "):
        i = blob.find(marker)
        if i >= 0:
            rest = blob[i + len(marker):]
            end = min([j for j in (rest.find("\\n"), rest.find('"')) if j >= 0] or [len(rest)])
            return rest[:end]
    return None


def gemini_cwd(req):
    blob = json.dumps(req)
    for marker in ("Workspace Directories:**\\n  - ", "I'm currently working in the directory: "):
        i = blob.find(marker)
        if i >= 0:
            rest = blob[i + len(marker):]
            end = min([j for j in (rest.find("\\n"), rest.find('"')) if j >= 0] or [len(rest)])
            return rest[:end].strip()
    return None


def codex_write_item(req, path, content, call_id):
    """A tool call writing path, in the shape the request's tools offer."""
    tools = {t.get("name"): t for t in req.get("tools", []) if isinstance(t, dict)}
    lines = "".join("+" + ln + "\n" for ln in content.splitlines()) or "+\n"
    patch = "*** Begin Patch\n*** Add File: %s\n%s*** End Patch\n" % (path, lines)
    ap = tools.get("apply_patch")
    if ap is not None and ap.get("type") == "custom":
        return {"type": "custom_tool_call", "id": "ctc_" + call_id, "call_id": call_id,
                "name": "apply_patch", "input": patch, "status": "completed"}
    if ap is not None:
        return {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id,
                "name": "apply_patch", "arguments": json.dumps({"input": patch}),
                "status": "completed"}
    script = "cat > %s <<'MOCK_EOF'\n%s\nMOCK_EOF" % (path, content.rstrip("\n"))
    return codex_shell_item(req, script, call_id)


def codex_shell_item(req, script, call_id):
    """A shell tool call running script, with whichever shell tool the request offers."""
    tools = {t.get("name"): t for t in req.get("tools", []) if isinstance(t, dict)}
    for name in ("exec_command", "shell_command"):
        if name in tools:
            key = "command" if name == "shell_command" else "cmd"
            return {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id,
                    "name": name, "arguments": json.dumps({key: script}), "status": "completed"}
    return {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", script]}), "status": "completed"}


def main():
    global STATE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script", help="JSON script file")
    ap.add_argument("--log-dir", help="directory for requests.jsonl and bodies")
    ap.add_argument("--port-file", help="also write {port,pid} here")
    ap.add_argument("--exit-with-parent", action="store_true",
                    help="stop when the parent process goes away (a killed test run)")
    args = ap.parse_args()
    script = {}
    if args.script:
        with open(args.script) as f:
            script = json.load(f)
    STATE = State(script, args.log_dir)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

        def handle_error(self, request, client_address):
            pass  # a client going away is normal here

    srv = Server(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    line = json.dumps({"port": port, "pid": os.getpid()})
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(line + "\n")
        os.replace(tmp, args.port_file)
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

    def stop(signum, frame):
        STOPPING.set()
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.exit_with_parent:
        parent = os.getppid()

        def watch():
            while not STOPPING.is_set():
                if os.getppid() != parent:
                    stop(None, None)
                    return
                time.sleep(0.5)
        threading.Thread(target=watch, daemon=True).start()
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        STOPPING.set()
        srv.server_close()


if __name__ == "__main__":
    main()
