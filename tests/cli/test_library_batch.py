"""The batch example of docs/library.md (docs/examples/batch.c) on its own uv loop."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox, alive  # noqa: E402

EXAMPLE = os.environ.get("BATCH_EXAMPLE", "")


def jobs(n, **extra):
    return "".join(json.dumps(dict({"id": f"t{i}", "prompt": f"job {i}"}, **extra)) + "\n"
                   for i in range(n))


def records(text):
    return [json.loads(l) for l in text.splitlines() if l.strip()]


class LibraryBatch(unittest.TestCase):
    def example(self, sb, *args, input=None, env=None, timeout=60):
        e = dict(sb.env, AGENTRUN_PROVIDER="codex")
        e.update(env or {})
        return subprocess.run([EXAMPLE, *args], cwd=sb.work, env=e, input=input,
                              capture_output=True, text=True, timeout=timeout)

    def test_jobs_from_lines_give_one_record_each(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"n": 1}'])
            p = self.example(sb, "-", "2", input=jobs(3) + "\n" + '{"id": "bad"}\n')
            self.assertEqual(p.returncode, 1, p.stderr)
            recs = records(p.stdout)
            self.assertEqual(sorted(r["id"] for r in recs), ["bad", "t0", "t1", "t2"])
            for r in recs:
                self.assertEqual(r["schema"], "agentrun.run/1")
                if r["id"] != "bad":
                    self.assertTrue(r["ok"], r)
                    self.assertEqual(r["json"], {"n": 1})
            bad = next(r for r in recs if r["id"] == "bad")
            self.assertEqual(bad["error"]["code"], "usage")
            self.assertIn("3 ok, 1 failed (0 over budget), 0 skipped, 0 never started",
                          p.stderr)
            self.assertEqual(len(sb.calls()), 3)
            self.assertNotIn("open handles", p.stderr)

    def test_jobs_built_in_c(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"colour": "red"}'])
            p = self.example(sb, "--prompts", "Name a colour", "Name a fruit")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(sorted(r["id"] for r in records(p.stdout)), ["p1", "p2"])
            self.assertEqual(sorted(c["stdin"].split("\n")[0] for c in sb.calls()),
                             ["Name a colour", "Name a fruit"])

    def test_the_budget_stops_starting_jobs(self):
        with Sandbox() as sb:
            sb.answers("claude", ['{"n": 1}'], cost=0.4)
            p = self.example(sb, "-", "1", "1.0", input=jobs(4),
                             env={"AGENTRUN_PROVIDER": "claude"})
            self.assertEqual(p.returncode, 2, p.stderr)
            recs = records(p.stdout)
            self.assertEqual([r["ok"] for r in recs], [True, True, False, False])
            self.assertEqual({r["error"]["code"] for r in recs[2:]}, {"budget"})
            self.assertIn("(2 over budget)", p.stderr)
            self.assertEqual(len(sb.calls()), 2)

    def test_ctrl_c_ends_the_running_jobs_and_starts_no_more(self):
        with Sandbox() as sb:
            with open(os.path.join(sb.root, "jobs.jsonl"), "w") as f:
                f.write(jobs(4))
            e = dict(sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1")
            proc = subprocess.Popen([EXAMPLE, os.path.join(sb.root, "jobs.jsonl"), "2"],
                                    cwd=sb.work, env=e, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 20
            while len(sb.calls()) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(len(sb.calls()), 2)
            t0 = time.monotonic()
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
            self.assertLess(time.monotonic() - t0, 20)
            self.assertEqual(proc.returncode, 4, err)
            self.assertEqual({r["error"]["code"] for r in records(out)}, {"interrupted"})
            self.assertIn("0 ok, 2 failed (0 over budget), 0 skipped, 2 never started", err)
            for c in sb.calls():
                self.assertFalse(alive(c["pid"]), "a cancelled CLI is still running")
            self.assertNotIn("open handles", err)


if __name__ == "__main__":
    unittest.main()
