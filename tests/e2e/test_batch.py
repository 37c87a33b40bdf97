"""agentrun batch with the real claude, codex and gemini CLIs against the loopback mock
(issue 9): a small batch spread across the three CLIs, one provider per job, runs them
side by side and writes exactly one valid record per id, each with the tokens and cost
of its own CLI, a summary on stderr, and nothing left running."""
import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")

# Normalized usage per CLI (distinct, so a record with another CLI's numbers shows).
USAGE = {"claude": {"input": 110, "cached": 20, "output": 11},
         "codex": {"input": 220, "cached": 40, "output": 22},
         "gemini": {"input": 330, "cached": 60, "output": 33}}
SCHEMA = {"type": "object", "required": ["from"], "additionalProperties": False,
          "properties": {"from": {"type": "string", "enum": ["codex"]}}}
JOBS = [
    {"id": "c1", "provider": "claude", "prompt": "job c1: say hello"},
    {"id": "c2", "provider": "claude", "prompt": "job c2: answer in JSON", "json": True},
    {"id": "x1", "provider": "codex", "model": "gpt-5.5", "prompt": "job x1: say hello"},
    {"id": "x2", "provider": "codex", "prompt": "job x2: answer in JSON", "schema": SCHEMA},
    {"id": 7, "provider": "gemini", "model": "gemini-2.5-pro", "prompt": "job 7: say hello"},
    # A model the price table does not know.
    {"id": "g2", "provider": "gemini", "model": "gemini-9-mock", "prompt": "job g2: answer in JSON",
     "json": True},
]


class TestBatchAcrossClis(unittest.TestCase):
    def setUp(self):
        # Each CLI answers both of its jobs the same way, whichever comes first.
        script = {cli: [{"kind": "json", "value": {"from": cli}, "usage": USAGE[cli], "times": 2}]
                  for cli in harness.CLIS}
        self.mock = Mock(script).start()
        self.root = RunRoot(self.mock.port)

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()
        self.mock.cleanup()

    def test_small_batch_across_the_three_clis(self):
        jobs = os.path.join(self.root.root, "jobs.jsonl")
        with open(jobs, "w") as f:
            for j in JOBS:
                f.write(json.dumps(j) + "\n")
        out = os.path.join(self.root.root, "out.jsonl")
        t0 = time.time()
        p = subprocess.run([AGENTRUN, "batch", "-j", "4", "--timeout", "120s", "-o", out, jobs],
                           cwd=self.root.work, env=self.root.agentrun_env(),
                           capture_output=True, text=True, timeout=300)
        took = time.time() - t0
        self.assertEqual(p.returncode, 0, p.stderr[-4000:])
        with open(out) as f:
            lines = [l for l in f.read().split("\n") if l]
        recs = [json.loads(l) for l in lines]        # every line is one JSON record
        self.assertEqual(sorted(str(r["id"]) for r in recs), sorted(str(j["id"]) for j in JOBS))
        for line in lines:
            self.assertTrue(line.startswith('{"id":'), line[:80])
        # An integer id comes back as a string today ("7"): keyed by its text here.
        by_id = {str(r["id"]): r for r in recs}
        for j in JOBS:
            r = by_id[str(j["id"])]
            cli = j["provider"]
            with self.subTest(id=j["id"]):
                self.assertTrue(r["ok"], r["error"])
                self.assertEqual(r["provider"], cli)
                self.assertEqual(len(r["calls"]), 1)
                self.assertEqual(r["repair"], "none")
                u = USAGE[cli]
                self.assertEqual(r["tokens"], {"input": u["input"], "cache_read": u["cached"],
                                               "cache_write": 0, "output": u["output"],
                                               "reasoning": 0})
                self.assertEqual(r["output"], "```json\n" + json.dumps({"from": cli}, indent=2)
                                 + "\n```")
                if j.get("json") or j.get("schema"):
                    self.assertEqual(r["json"], {"from": cli})
                else:
                    self.assertIsNone(r["json"])
                self.assertTrue(r["session_id"])
        self.assertEqual(len({r["session_id"] for r in recs}), len(JOBS))
        # Cost: claude's own, codex and gemini-2.5-pro from the table, an unknown gemini
        # model unknown (null, never 0).
        self.assertEqual(by_id["c1"]["cost_source"], "cli")
        self.assertGreater(by_id["c1"]["cost_usd"], 0)
        self.assertEqual(by_id["x1"]["cost_source"], "price_table")
        self.assertAlmostEqual(by_id["x1"]["cost_usd"], (220 * 5 + 40 * 0.5 + 22 * 30) / 1e6,
                               places=12)
        self.assertEqual(by_id["7"]["cost_source"], "price_table")
        self.assertAlmostEqual(by_id["7"]["cost_usd"], (330 * 1.25 + 60 * 0.125 + 33 * 10) / 1e6,
                               places=12)
        self.assertEqual(by_id["g2"]["cost_source"], "unknown")
        self.assertIsNone(by_id["g2"]["cost_usd"])
        # Each job's prompt went to its own CLI, once.
        for cli in harness.CLIS:
            reqs = self.mock.model_requests(cli)
            self.assertEqual(len(reqs), 2, cli)
            blob = b"".join(self.mock.body(r) for r in reqs)
            for j in JOBS:
                mark = ("job %s:" % j["id"]).encode()
                self.assertEqual(mark in blob, j["provider"] == cli, (cli, j["id"]))
        # The summary: counts, summed tokens, and the job of unknown cost.
        summary = [l for l in p.stderr.splitlines() if l.startswith("agentrun batch:")]
        self.assertEqual(len(summary), 1, p.stderr[-2000:])
        s = summary[0]
        self.assertRegex(s, r"\b6 ok, 0 failed\b")
        tin = sum(2 * USAGE[c]["input"] for c in harness.CLIS)
        tcached = sum(2 * USAGE[c]["cached"] for c in harness.CLIS)
        tout = sum(2 * USAGE[c]["output"] for c in harness.CLIS)
        self.assertIn("%d input + %d cached + %d output tokens" % (tin, tcached, tout), s)
        self.assertRegex(s, r"\+ 1 jobs? of unknown cost")
        self.assertLess(took, 240)
        self.assertEqual(harness.leftover_processes(self.root), [])


class TestBatchFallbackAndFailure(unittest.TestCase):
    """A job whose provider rejects the key falls back to the next real CLI; a job
    without a fallback fails alone with the API's error class (after its one retry) and the
    batch exits 4."""

    def setUp(self):
        self.mock = Mock({"claude": [{"kind": "error", "status": 401}],
                          "gemini": [{"kind": "text", "text": "gemini took over",
                                      "usage": USAGE["gemini"]}],
                          "codex": [{"kind": "error", "status": 500, "times": 2}]}).start()
        self.root = RunRoot(self.mock.port)

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()
        self.mock.cleanup()

    def test_fallback_and_a_failed_job(self):
        jobs = [{"id": "f1", "provider": "claude", "fallback": ["gemini"],
                 "prompt": "job f1: fall back"},
                {"id": "f2", "provider": "codex", "model": "gpt-5.5", "prompt": "job f2: fail"}]
        stdin = "".join(json.dumps(j) + "\n" for j in jobs)
        p = subprocess.run([AGENTRUN, "batch", "-j", "2", "--timeout", "120s", "-"], input=stdin,
                           cwd=self.root.work, env=self.root.agentrun_env(),
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 4, p.stderr[-4000:])
        recs = {r["id"]: r for r in (json.loads(l) for l in p.stdout.splitlines() if l)}
        self.assertEqual(sorted(recs), ["f1", "f2"])
        f1, f2 = recs["f1"], recs["f2"]
        self.assertTrue(f1["ok"], f1["error"])
        self.assertEqual(f1["provider"], "gemini")
        self.assertEqual(f1["output"], "gemini took over")
        self.assertEqual([(c["provider"], c["error"]) for c in f1["calls"]],
                         [("claude", "auth"), ("gemini", None)])
        self.assertEqual(f1["tokens"]["input"], USAGE["gemini"]["input"])
        self.assertFalse(f2["ok"])
        self.assertEqual(f2["error"]["code"], "api_error")
        # A 500 is transient: called once more after 2 s, never a third time.
        self.assertEqual([(c["provider"], c["error"]) for c in f2["calls"]],
                         [("codex", "api_error"), ("codex", "api_error")])
        self.assertGreaterEqual(f2["calls"][1]["waited_ms"], 2000)
        for cli in harness.CLIS:
            self.assertEqual(len(self.mock.model_requests(cli)), 2 if cli == "codex" else 1, cli)
        self.assertRegex(p.stderr, r"agentrun batch: 1 ok, 1 failed\b")
        self.assertEqual(harness.leftover_processes(self.root), [])


def main():
    harness.require_clis()
    unittest.main()


if __name__ == "__main__":
    main()
