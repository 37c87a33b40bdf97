"""The review example of docs/examples/review.c (docs/library.md) links
against libagentrun, reviews on its own libuv loop, and cancels on Ctrl-C."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox  # noqa: E402

EXAMPLE = os.environ.get("REVIEW_EXAMPLE", "")

FINDING = json.dumps({"passed": False, "summary": "one bug", "issues": [
    {"file": "app.c", "line": 2, "severity": "high", "message": "off by one"}]})


class ReviewExample(unittest.TestCase):
    def change(self, sb):
        sb.write("app.c", "int a;\nint b;\n")
        sb.git("add", "app.c")
        sb.git("commit", "-q", "-m", "app")
        sb.write("app.c", "int a;\nint c;\n")

    def test_the_working_tree_review_prints_the_finding_and_fails(self):
        with Sandbox() as sb:
            self.change(sb)
            sb.answers("codex", [FINDING])
            p = subprocess.run([EXAMPLE], cwd=sb.work, env=dict(sb.env, AGENTRUN_PROVIDER="codex"),
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("app.c:2: high: off by one\n", p.stdout)
            self.assertIn("reviewing the working tree: 1 file(s) in 1 chunk(s)", p.stderr)
            self.assertIn("@@", sb.calls()[0]["stdin"])

    def test_a_diff_on_stdin_with_nothing_in_it_passes_without_a_call(self):
        with Sandbox() as sb:
            p = subprocess.run([EXAMPLE, "-"], cwd=sb.work, env=sb.env, input="",
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, "nothing to review: the diff is empty\nnothing to review\n")
            self.assertEqual(sb.calls(), [])

    def test_an_unknown_revision_fails_to_start(self):
        with Sandbox() as sb:
            p = subprocess.run([EXAMPLE, "nosuchrev"], cwd=sb.work, env=sb.env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("unknown revision 'nosuchrev'", p.stderr)

    def test_ctrl_c_cancels_the_calls(self):
        with Sandbox() as sb:
            self.change(sb)
            sb.answers("codex", [FINDING])
            env = dict(sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1")
            p = subprocess.Popen([EXAMPLE], cwd=sb.work, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            deadline = time.time() + 30
            while not sb.calls() and time.time() < deadline:
                time.sleep(0.05)
            self.assertTrue(sb.calls(), "the call never started")
            pid = sb.calls()[0]["pid"]
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 130, err)
            self.assertIn("review failed: interrupted", err)
            with self.assertRaises(ProcessLookupError):
                os.kill(pid, 0)


if __name__ == "__main__":
    unittest.main()
