"""The library example of docs/library.md (docs/examples/library.c) on its own uv loop."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox, alive  # noqa: E402

EXAMPLE = os.environ.get("LIBRARY_EXAMPLE", "")


def example(sb, *args, env=None, timeout=60):
    e = dict(sb.env, AGENTRUN_PROVIDER="codex")
    e.update(env or {})
    return subprocess.run([EXAMPLE, *args], cwd=sb.work, env=e, capture_output=True,
                          text=True, timeout=timeout)


class AsyncRun(unittest.TestCase):
    def test_a_run_reports_its_calls_and_its_json(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"colours": ["red"]}'])
            p = example(sb, "run", "colours please")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout), {"colours": ["red"]})
            lines = p.stderr.splitlines()
            self.assertEqual(lines[0], "main call to codex started")
            self.assertEqual(lines[1], "main call to codex finished: exit 0, 50 output tokens")
            self.assertEqual(len(lines), 2, p.stderr)
            self.assertNotIn("open handles", p.stderr)

    def test_a_repair_call_is_its_own_pair_of_events(self):
        with Sandbox() as sb:
            sb.answers("codex", ['no json here', '{"colours": ["red", "blue"]}'])
            p = example(sb, "run", "colours please")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout), {"colours": ["red", "blue"]})
            self.assertEqual([l.split(":")[0] for l in p.stderr.splitlines()],
                             ["main call to codex started", "main call to codex finished",
                              "repair call to codex started", "repair call to codex finished"])

    def test_a_missing_cli_is_one_finished_event_with_its_error(self):
        with Sandbox() as sb:
            p = example(sb, "run", "x", env={"AGENTRUN_CODEX_BIN": "/nonexistent/codex"})
            self.assertEqual(p.returncode, 4, p.stderr)
            self.assertIn("main call to codex finished: exit -1, 0 output tokens, error not_found",
                          p.stderr)
            self.assertNotIn("started", p.stderr)

    def test_cancel_ends_a_hanging_cli_and_reports_interrupted(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"colours": []}'])
            t0 = time.monotonic()
            p = example(sb, "cancel", "colours please", "300", env={"FAKE_CLI_HANG": "1"})
            took = time.monotonic() - t0
            self.assertEqual(p.returncode, 130, p.stderr)
            self.assertIn("cancelling", p.stderr)
            self.assertIn("run: interrupted", p.stderr)
            self.assertIn("error interrupted", p.stderr)
            self.assertEqual(p.stdout, "")
            self.assertLess(took, 30)
            pid = sb.calls()[0]["pid"]
            self.assertFalse(alive(pid), "the cancelled CLI is still running")
            self.assertNotIn("open handles", p.stderr)

    def test_cancel_after_the_end_changes_nothing(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"colours": ["red"]}'])
            p = example(sb, "cancel", "colours please", "20000")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("cancelling", p.stderr)


if __name__ == "__main__":
    unittest.main()
