#!/usr/bin/env python3
"""e2e: the REAL claude, codex and gemini CLIs (pinned versions) against the loopback mock.

Proves the mock and the harness work, and pins the facts agentrun relies on
(FORMATS.md): streaming JSON output, prompt on stdin, scripted usage, error behaviour
with retries off, tool calls writing files, a 1 MiB prompt and a 2 MiB answer arriving
whole, a hung stream, and no process outliving a run.

Skips (exit 77) when node or the CLIs are missing, unless $CI is set (then fails).
"""

import json
import os
import signal
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import Mock, RunRoot, run_cli  # noqa: E402

sys.path.insert(0, os.path.dirname(harness.MOCKAPI))
import mockapi  # noqa: E402  (big_text: the same text the mock streams)

PROMPT = "Say hello in one short sentence.\n"
USAGE = {"input": 1200, "cached": 300, "output": 42}


def strings(obj):
    """Every string inside a decoded JSON value."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


class Outcome:
    """What a caller needs from one run, read from the CLI's own streaming output."""

    def __init__(self, text=None, input=None, cached=None, output=None, error=None,
                 final=False, session=None):
        self.text, self.input, self.cached, self.output = text, input, cached, output
        self.error, self.final, self.session = error, final, session

    def __repr__(self):
        return "Outcome(%r)" % {k: (v[:200] if isinstance(v, str) else v)
                                for k, v in self.__dict__.items()}


def parse_claude(r):
    o = Outcome()
    for ev in r.jsonl():
        if ev.get("type") == "result":
            u = ev.get("usage") or {}
            o = Outcome(ev.get("result"), u.get("input_tokens"), u.get("cache_read_input_tokens"),
                        u.get("output_tokens"), ev.get("api_error_status") if ev.get("is_error")
                        else None, True, ev.get("session_id"))
            if ev.get("is_error") and o.error is None:
                o.error = ev.get("subtype")
    return o


def parse_codex(r):
    o = Outcome()
    for ev in r.jsonl():
        t = ev.get("type")
        if t == "thread.started":
            o.session = ev["thread_id"]
        elif t == "item.completed" and ev["item"].get("type") == "agent_message":
            o.text = ev["item"]["text"]
        elif t == "turn.completed":
            u = ev["usage"]
            o.input = u["input_tokens"] - u["cached_input_tokens"]
            o.cached, o.output, o.final = u["cached_input_tokens"], u["output_tokens"], True
        elif t == "turn.failed":
            o.error, o.final = ev["error"]["message"], True
    return o


def parse_gemini(r):
    o = Outcome(text="")
    for ev in r.jsonl():
        t = ev.get("type")
        if t == "init":
            o.session = ev["session_id"]
        elif t == "message" and ev.get("role") == "assistant":
            o.text += ev["content"]
        elif t == "result":
            s = ev.get("stats") or {}
            o.input, o.cached, o.output = s.get("input"), s.get("cached"), s.get("output_tokens")
            o.final = True
            if ev.get("status") != "success":
                o.error = (ev.get("error") or {}).get("message") or ev.get("status")
    return o


class Base:
    """The cases shared by the three CLIs; each subclass sets the CLI specifics."""
    CLI = None
    STREAM = []       # streaming JSON argv
    EDIT = []         # extra argv allowing file edits
    parse = None

    @classmethod
    def setUpClass(cls):
        cls.mock = Mock().start()

    @classmethod
    def tearDownClass(cls):
        cls.mock.cleanup()

    def setUp(self):
        self.root = RunRoot(self.mock.port)
        self.addCleanup(self.root.cleanup)
        self.addCleanup(harness.kill_leftovers, self.root)

    def run_script(self, steps, stdin=PROMPT, extra=(), timeout=120, **kw):
        self.mock.set_script({self.CLI: steps})
        self.n0 = len(self.mock.requests())
        r = run_cli(self.CLI, list(self.STREAM) + list(extra), self.root, stdin=stdin,
                    timeout=timeout, **kw)
        self.assertEqual(r.survivors, [], "processes outlived the CLI")
        self.assertEqual(harness.leftover_processes(self.root), [])
        return r, type(self).parse(r)

    def model_requests(self):
        return [e for e in self.mock.requests()[self.n0:]
                if e["api"] == self.CLI and e["method"] == "POST" and not e.get("side")]

    def other_requests(self):
        return [e for e in self.mock.requests()[self.n0:] if e["api"] not in (self.CLI,)]

    # ------------------------------------------------------------------ cases
    def test_text_answer_with_scripted_usage(self):
        r, o = self.run_script([{"kind": "text", "text": "Hello from the mock.", "usage": USAGE}])
        self.assertEqual(r.status, 0, r)
        self.assertTrue(o.final, r)
        self.assertIsNone(o.error, r)
        self.assertEqual(o.text, "Hello from the mock.")
        self.assertEqual((o.input, o.cached, o.output), (1200, 300, 42), r)
        self.assertTrue(o.session)
        reqs = self.model_requests()
        self.assertEqual(len(reqs), 1)
        body = self.mock.body_json(reqs[0])
        self.assertTrue(any(PROMPT.strip() in s for s in strings(body)), "prompt not in request")
        self.assertEqual(self.other_requests(), [], "requests to unknown routes")

    def test_fenced_json_verbatim(self):
        value = {"verdict": "ok", "issues": [{"line": 3, "msg": "x"}]}
        r, o = self.run_script([{"kind": "json", "value": value}])
        self.assertEqual(r.status, 0, r)
        self.assertEqual(o.text, "```json\n" + json.dumps(value, indent=2) + "\n```")

    def check_error(self, status):
        r, o = self.run_script([{"kind": "error", "status": status}])
        self.assertEqual(len(self.model_requests()), 1, "retries are off: one request")
        self.assertTrue(o.final, r)
        self.assertTrue(o.error, r)
        return r, o

    def test_tool_call_writes_file(self):
        content = "written by the %s tool\nsecond line\n" % self.CLI
        r, o = self.run_script([
            {"kind": "tool_write", "path": "hello.txt", "content": content,
             "usage": {"input": 100, "output": 10}},
            {"kind": "text", "text": "Wrote hello.txt.", "usage": {"input": 200, "cached": 50,
                                                                   "output": 5}}],
            extra=self.EDIT)
        self.assertEqual(r.status, 0, r)
        self.assertEqual(o.text, "Wrote hello.txt.")
        self.assertEqual((o.input, o.cached, o.output), (300, 50, 15), r)
        with open(os.path.join(self.root.work, "hello.txt")) as f:
            self.assertEqual(f.read(), content)
        self.assertEqual(self.root.git_status(), "?? hello.txt\n")
        self.assertEqual(len(self.model_requests()), 2)

    def test_prompt_1mib_arrives_whole(self):
        prompt = mockapi.big_text(1 << 20, seed=7).rstrip("\n")
        r, o = self.run_script([{"kind": "text", "text": "big prompt received"}], stdin=prompt)
        self.assertEqual(r.status, 0, r)
        self.assertEqual(o.text, "big prompt received")
        reqs = self.model_requests()
        self.assertEqual(len(reqs), 1)
        self.assertGreater(reqs[0]["body_size"], 1 << 20)
        body = self.mock.body_json(reqs[0])
        self.assertTrue(any(prompt in s for s in strings(body)), "the 1 MiB prompt was cut")

    def test_answer_2mib_arrives_whole(self):
        r, o = self.run_script([{"kind": "big", "bytes": 2 << 20, "seed": 3, "chunk": 16384}])
        self.assertEqual(r.status, 0, r)
        self.assertIsNone(o.error, r)
        self.assertEqual(len(o.text), 2 << 20)
        self.assertEqual(o.text, mockapi.big_text(2 << 20, 3))

    def test_delay_before_answer(self):
        r, o = self.run_script([{"kind": "text", "text": "late", "delay": 1.5}])
        self.assertEqual(r.status, 0, r)
        self.assertEqual(o.text, "late")
        self.assertGreaterEqual(r.duration, 1.5)

    def test_hang_mid_stream_keeps_cli_waiting(self):
        self.mock.set_script({self.CLI: [{"kind": "hang", "text": "partial"}]})
        self.n0 = len(self.mock.requests())
        # once the request is in, the CLI must still be waiting 1.5 s later (SIGKILL then)
        r = run_cli(self.CLI, self.STREAM, self.root, stdin=PROMPT, timeout=60,
                    wait_for=self.model_requests, signal_after=1.5, sig=signal.SIGKILL,
                    signal_group=True)
        self.assertEqual(r.status, -signal.SIGKILL, r)
        self.assertFalse(type(self).parse(r).final, r)
        self.assertEqual(len(self.model_requests()), 1)
        self.assertEqual(harness.leftover_processes(self.root), [])


    def sigterm_mid_stream(self):
        """SIGTERM to the CLI's PID (not its group) while the stream hangs."""
        self.mock.set_script({self.CLI: [{"kind": "hang", "text": "partial"}]})
        self.n0 = len(self.mock.requests())
        r = run_cli(self.CLI, self.STREAM, self.root, stdin=PROMPT, timeout=60,
                    wait_for=self.model_requests, signal_after=0.3, wait_after_signal=5)
        self.assertFalse(type(self).parse(r).final, r)
        self.assertEqual(harness.leftover_processes(self.root), [])
        return r


class TestClaude(Base, unittest.TestCase):
    CLI = "claude"
    STREAM = ["-p", "--output-format", "stream-json", "--verbose"]
    EDIT = ["--permission-mode", "acceptEdits"]
    parse = staticmethod(parse_claude)

    def test_error_401(self):
        r, o = self.check_error(401)
        self.assertEqual(r.status, 1)
        self.assertEqual(o.error, 401)
        self.assertEqual(o.text, "Invalid API key · Fix external API key")
        self.assertEqual(r.stderr, b"")

    def test_error_429(self):
        r, o = self.check_error(429)
        self.assertEqual((r.status, o.error), (1, 429))
        self.assertIn("(429)", o.text)

    def test_error_500(self):
        r, o = self.check_error(500)
        self.assertEqual((r.status, o.error), (1, 500))
        self.assertTrue(o.text.startswith("API Error: 500"), o.text)

    def test_stream_without_verbose_refused(self):
        self.mock.set_script({})
        r = run_cli("claude", ["-p", "--output-format", "stream-json"], self.root, stdin=PROMPT)
        self.assertEqual(r.status, 1)
        self.assertIn(b"requires --verbose", r.stderr)

    def test_cost_from_cli(self):
        r, o = self.run_script([{"kind": "text", "text": "x", "usage": USAGE}])
        res = [e for e in r.jsonl() if e["type"] == "result"][0]
        # The price of the model claude says it used (its default moves between versions;
        # /work/shared/PRICES.md): opus 4.8 and 5 $5 in, $25 out, $0.50 cache read per MTok;
        # opus 5.5 $4, $20, $0.20.
        prices = {"claude-opus-4-8": (5, 25, 0.5), "claude-opus-5": (5, 25, 0.5),
                  "claude-opus-5-5": (4, 20, 0.2)}
        model = [e for e in r.jsonl() if e.get("subtype") == "init"][0]["model"].split("[")[0]
        self.assertIn(model, prices, "a default model of claude's with no known price")
        inp, out, cr = prices[model]
        self.assertAlmostEqual(res["total_cost_usd"], (1200 * inp + 300 * cr + 42 * out) / 1e6,
                               places=9)


    def test_sigterm_exit_143(self):
        self.assertEqual(self.sigterm_mid_stream().status, 143)

    # How agentrun gives claude its prompt (issue 56): one stream-json message, client_composed.
    STREAM_IN = ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
                 "--verbose"]

    @staticmethod
    def composed(text):
        return json.dumps({"type": "user", "message": {"role": "user", "content": text},
                           "client_composed": True}) + "\n"

    def test_sigint_ends_in_one_of_the_outcomes_agentrun_reads_as_interrupted(self):
        """SIGINT to claude mid-answer races claude's own shutdown, so which outcome comes is
        a matter of timing (measured 2.1.332 and 2.1.337, recorded in tests/fixtures/claude/
        stream-sigint-*): the interrupt turn "[Request interrupted by user]" and a result
        error_during_execution / aborted_streaming; the interrupt turn and no result at all;
        or, before claude has set up, death by the signal with nothing written. Each exit 0
        but the last. The rule held here is that it is one of them, and that agentrun reads
        what claude wrote as interrupted (exit 130), whichever it is."""
        agentrun = os.environ.get("AGENTRUN", "agentrun")
        for delay in (0.3, 1.5):
            self.mock.set_script({"claude": [{"kind": "hang", "text": "partial"}]})
            self.n0 = len(self.mock.requests())
            r = run_cli("claude", self.STREAM_IN, self.root, stdin=self.composed("Say hello."),
                        timeout=60, signal_after=delay, sig=signal.SIGINT,
                        wait_for=self.model_requests)
            events = r.jsonl()
            kinds = [e["type"] for e in events]
            results = [e for e in events if e["type"] == "result"]
            marker = any(e["type"] == "user" and "[Request interrupted by user" in
                         json.dumps(e["message"]["content"]) for e in events)
            with self.subTest(delay=delay, kinds=kinds, status=r.status):
                if not events:
                    self.assertEqual(r.status, -signal.SIGINT, r)
                    continue
                self.assertEqual(r.status, 0, r)
                self.assertTrue(marker, r)
                if results:
                    res = results[-1]
                    self.assertEqual((res["subtype"], res["is_error"], res["terminal_reason"]),
                                     ("error_during_execution", True, "aborted_streaming"))
                    self.assertNotIn("result", res)
                p = subprocess.run([agentrun, "extract", "--unwrap", "claude"], input=r.stdout,
                                   capture_output=True, timeout=30)
                self.assertEqual(p.returncode, 130, p.stderr)
                self.assertIn(b"interrupted", p.stderr)


class TestCodex(Base, unittest.TestCase):
    CLI = "codex"
    STREAM = ["exec", "--json"]
    EDIT = ["--sandbox", "workspace-write"]
    parse = staticmethod(parse_codex)

    def test_error_401(self):
        r, o = self.check_error(401)
        self.assertEqual(r.status, 1)
        self.assertTrue(o.error.startswith("unexpected status 401 Unauthorized: "), o.error)

    def test_error_429(self):
        r, o = self.check_error(429)
        self.assertEqual(r.status, 1)
        self.assertEqual(o.error, "exceeded retry limit, last status: 429 Too Many Requests")

    def test_error_500(self):
        r, o = self.check_error(500)
        self.assertEqual(r.status, 1)
        self.assertIn("high demand", o.error)

    def test_resume_usage_is_cumulative(self):
        r1, o1 = self.run_script([{"kind": "text", "text": "one", "usage": USAGE}])
        self.assertEqual(r1.status, 0, r1)
        self.mock.set_script({"codex": [{"kind": "text", "text": "two", "usage": USAGE}]})
        r2 = run_cli("codex", ["exec", "resume", "--json", o1.session, "-"], self.root,
                     stdin="again\n")
        o2 = parse_codex(r2)
        self.assertEqual((r2.status, o2.text, o2.session), (0, "two", o1.session), r2)
        self.assertEqual((o2.input, o2.cached, o2.output), (2400, 600, 84))


    def test_sigterm_kills_it(self):
        self.assertEqual(self.sigterm_mid_stream().status, -signal.SIGTERM)


class TestGemini(Base, unittest.TestCase):
    CLI = "gemini"
    STREAM = ["-o", "stream-json"]
    EDIT = ["--approval-mode", "auto_edit"]
    parse = staticmethod(parse_gemini)

    def test_error_401(self):
        r, o = self.check_error(401)
        self.assertEqual(r.status, 401 & 255)

    def test_error_429(self):
        r, o = self.check_error(429)
        self.assertEqual(r.status, 429 & 255)

    def test_error_500(self):
        r, o = self.check_error(500)
        self.assertEqual(r.status, 500 & 255)

    def test_json_error_on_stderr(self):
        self.mock.set_script({"gemini": [{"kind": "error", "status": 401}]})
        r = run_cli("gemini", ["-o", "json"], self.root, stdin=PROMPT)
        self.assertEqual((r.status, r.stdout), (145, b""))
        err = r.stderr.decode()
        obj = json.loads(err[err.rindex("\n{") + 1:])
        self.assertEqual(obj["error"]["code"], 401)

    def test_sigterm_to_pid_is_ignored(self):
        # the relaunching parent ignores SIGTERM; the harness SIGKILLs the group 5 s later
        self.assertEqual(self.sigterm_mid_stream().status, "timeout")

    def test_sigterm_to_group_exits_0_without_result(self):
        self.mock.set_script({"gemini": [{"kind": "hang", "text": "partial"}]})
        self.n0 = len(self.mock.requests())
        r = run_cli("gemini", self.STREAM, self.root, stdin=PROMPT, timeout=60,
                    wait_for=self.model_requests, signal_after=0.3, signal_group=True)
        self.assertEqual(r.status, 0, r)
        self.assertFalse(parse_gemini(r).final, r)
        self.assertEqual(r.survivors, [])

    def test_loop_detection_ends_with_no_text(self):
        r, o = self.run_script([{"kind": "repetitive", "bytes": 65536, "times": 2}])
        self.assertEqual(r.status, 0, r)
        self.assertIsNone(o.error)
        self.assertEqual(o.text, "")
        self.assertTrue(any(e.get("type") == "error" and "Loop detected" in e.get("message", "")
                            for e in r.jsonl()))


def main():
    harness.require_clis()
    prog = unittest.main(exit=False, verbosity=2)
    sys.exit(0 if prog.result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
