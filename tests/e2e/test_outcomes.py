"""Honest outcomes (issue 14) with the real claude, codex and gemini CLIs against the
loopback mock: a write the CLI refused is `denied` (and --allow-edits still gives ok with
the file listed); --expect-changes with a text answer is `no_effect`; a 429 once and then
an answer is ok with two calls, after the wait the CLI passed on (gemini: the API's
retry delay) or agentrun's default backoff (claude and codex do not pass a plain 429's
Retry-After on); a write followed by a 500 with --fallback is an error, with no call to
the fallback provider and the written file in `files`."""
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
# agentrun's wait after a rate limit when the CLI did not say how long (run-result.md).
DEFAULT_RATE_LIMIT_WAIT_MS = 5000


class Base:
    cli = None
    model_args = ()
    fallback = None          # another provider, for the fallback case
    retry_after = None       # the Retry-After the CLI passes on, or None (default backoff)

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

    def run_agentrun(self, script, *args, timeout=180):
        self.mock.set_script(script)
        self.seen = len(self.mock.requests())
        t0 = time.monotonic()
        p = subprocess.run([AGENTRUN, "run", "-p", self.cli, "--format", "json",
                            "--timeout", "90s", *self.model_args, *args, "-"],
                           input=b"Create greeting.txt saying hello.", cwd=self.root.work,
                           env=self.root.agentrun_env(), capture_output=True, timeout=timeout)
        self.took = time.monotonic() - t0
        try:
            doc = json.loads(p.stdout)
        except json.JSONDecodeError:
            raise AssertionError("not JSON (exit %d): %r\nstderr: %s"
                                 % (p.returncode, p.stdout[:2000], p.stderr.decode()[-3000:]))
        return p, doc

    def model_requests(self, api):
        return [e for e in self.mock.requests()[self.seen:]
                if e["api"] == api and e["method"] == "POST" and not e.get("side")]

    def write_steps(self, then):
        return [{"kind": "tool_write", "path": "greeting.txt", "content": "hello\n"}, then]

    # ------------------------------------------------------------------ tests
    def test_refused_write_is_denied(self):
        p, doc = self.run_agentrun({self.cli: self.write_steps(
            {"kind": "text", "text": "Wrote greeting.txt."})})
        self.assertEqual(p.returncode, 4, p.stderr.decode()[-2000:])
        self.assertFalse(doc["ok"])
        self.assertEqual(doc["error"]["code"], "denied", doc["error"])
        self.assertEqual(len(doc["denied"]), 1, doc["denied"])
        self.assertEqual(doc["files"], [])
        self.assertFalse(os.path.exists(os.path.join(self.root.work, "greeting.txt")))
        self.assertEqual(doc["output"], "Wrote greeting.txt.")
        self.check_denial(doc["denied"][0])

    def check_denial(self, d):
        raise NotImplementedError

    def test_allowed_write_is_ok_with_the_file(self):
        p, doc = self.run_agentrun({self.cli: self.write_steps(
            {"kind": "text", "text": "Wrote greeting.txt."})}, "--allow-edits",
            "--expect-changes")
        self.assertEqual(p.returncode, 0, "%s\n%s" % (doc["error"], p.stderr.decode()[-2000:]))
        self.assertTrue(doc["ok"])
        self.assertEqual(doc["denied"], [])
        self.assertEqual(doc["files"], [{"path": "greeting.txt", "op": "create", "from": None}])

    def test_expect_changes_with_a_text_answer_is_no_effect(self):
        p, doc = self.run_agentrun({self.cli: [{"kind": "text", "text": "Done."}]},
                                   "--allow-edits", "--expect-changes")
        self.assertEqual(p.returncode, 4, p.stderr.decode()[-2000:])
        self.assertEqual(doc["error"]["code"], "no_effect", doc["error"])
        self.assertEqual(doc["files"], [])
        self.assertEqual(doc["output"], "Done.")

    def test_429_once_then_an_answer_waits_and_calls_again(self):
        err = {"kind": "error", "status": 429, "retry_after": 3}
        p, doc = self.run_agentrun({self.cli: [err, {"kind": "text", "text": "Hello.",
                                                     "usage": {"input": 100, "output": 7}}]})
        self.assertEqual(p.returncode, 0, "%s\n%s" % (doc["error"], p.stderr.decode()[-2000:]))
        self.assertTrue(doc["ok"])
        self.assertEqual(doc["output"], "Hello.")
        self.assertEqual([c["error"] for c in doc["calls"]], ["rate_limit", None])
        self.assertEqual(len(self.model_requests(self.cli)), 2)
        want_ms = self.retry_after * 1000 if self.retry_after else DEFAULT_RATE_LIMIT_WAIT_MS
        self.assertGreaterEqual(doc["calls"][1]["waited_ms"], want_ms)
        self.assertGreaterEqual(self.took, want_ms / 1000)
        self.assertEqual(doc["calls"][1]["tokens"]["input"], 100)
        self.assertEqual(doc["tokens"], doc["calls"][1]["tokens"])

    def test_write_then_500_is_not_handed_to_the_fallback(self):
        p, doc = self.run_agentrun(
            {self.cli: self.write_steps({"kind": "error", "status": 500}),
             self.fallback: [{"kind": "text", "text": "I would do it again."}]},
            "--allow-edits", "--fallback", self.fallback)
        self.assertEqual(p.returncode, 4, p.stderr.decode()[-2000:])
        self.assertFalse(doc["ok"])
        self.assertEqual(doc["error"]["code"], "api_error", doc["error"])
        self.assertIn("not retried or handed to a fallback provider", doc["error"]["message"])
        self.assertEqual([c["provider"] for c in doc["calls"]], [self.cli])
        self.assertEqual(self.model_requests(self.fallback), [])
        self.assertEqual(len(self.model_requests(self.cli)), 2)
        self.assertEqual(doc["files"], [{"path": "greeting.txt", "op": "create", "from": None}])


class TestClaude(Base, unittest.TestCase):
    cli = "claude"
    fallback = "codex"

    def check_denial(self, d):
        self.assertEqual(d["tool"], "Write")
        self.assertTrue(d["target"].endswith("/greeting.txt"), d)


class TestCodex(Base, unittest.TestCase):
    cli = "codex"
    model_args = ("-m", "gpt-5.5")
    fallback = "gemini"

    def check_denial(self, d):
        # codex names no file for a rejected patch.
        self.assertEqual(d, {"tool": "apply_patch", "target": None})


class TestGemini(Base, unittest.TestCase):
    cli = "gemini"
    model_args = ("-m", "gemini-2.5-pro")
    fallback = "claude"
    retry_after = 3          # "Suggested retry after 3s." from the API's RetryInfo

    def check_denial(self, d):
        self.assertEqual(d["tool"], "write_file")
        self.assertTrue(d["target"].endswith("/greeting.txt"), d)


def main():
    harness.require_clis()
    unittest.main()


if __name__ == "__main__":
    main()
