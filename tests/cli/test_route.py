#!/usr/bin/env python3
"""agentrun route end to end with the fake CLI: the local tiers never call the model, the
model's answer is parsed strictly and checked against the manifest, malformed answers fall
back to the first task."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, SOURCE_ROOT, Sandbox  # noqa: E402

MANIFEST = os.path.join(os.path.abspath(SOURCE_ROOT), "tests", "fixtures", "route",
                        "manifest.json")
# Shares no word with any item of the manifest: only the model can route it.
VAGUE = "where do our clients look at past purchases"


def match(type_, name, confidence=0.9, reasoning="fits"):
    return {"type": type_, "name": name, "confidence": confidence, "reasoning": reasoning}


class RouteTest(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox(git=False)

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def route(self, query, *args, answers=None, provider="codex", manifest=MANIFEST, **kw):
        if answers is not None:
            self.sb.answers(provider, answers)
        p = self.sb.run("route", "--manifest", manifest, "--format", "json", *args, query,
                        provider=provider, **kw)
        doc = json.loads(p.stdout) if p.stdout.strip() else None
        return p, doc

    def names(self, doc):
        return [(m["type"], m["name"]) for m in doc["matches"]]

    # --- tiers 1 and 2: no model ---------------------------------------------------------

    def test_exact_tier_never_calls_the_model(self):
        for query, name in (("customer-portal", "customer-portal"),
                            ("  Customer App ", "customer-portal"),
                            ("COGNITO", "auth-cognito")):
            with self.subTest(query=query):
                p, doc = self.route(query, answers=["[]"])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(doc["route"], "exact")
                self.assertEqual(doc["matches"][0]["name"], name)
                self.assertEqual(doc["matches"][0]["confidence"], 1.0)
                self.assertFalse(doc["fallback"])
                self.assertIsNone(doc["error"])
                self.assertEqual(doc["calls"], [])
                self.assertEqual(doc["cost_source"], "none")
                self.assertEqual(doc["tokens"]["input"], 0)
        self.assertEqual(self.sb.calls(), [])

    def test_keyword_tier_never_calls_the_model(self):
        p, doc = self.route("set up user login", answers=["[]"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["route"], "keyword")
        self.assertEqual(self.names(doc)[0], ("skill", "auth-cognito"))
        self.assertAlmostEqual(doc["matches"][0]["confidence"], 0.6)
        self.assertEqual(doc["matches"][0]["reasoning"],
                         "keyword score 0.60: matched login (keyword); user (description)")
        self.assertIn('"confidence":0.6,', p.stdout)
        self.assertEqual(doc["query"], "set up user login")
        self.assertEqual(self.sb.calls(), [])

    def test_keyword_matches_are_sorted_by_score(self):
        p, doc = self.route("deploy the customer portal", "--min-score", "0.3")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.names(doc), [("task", "customer-portal"), ("skill", "deploy-ecs")])
        scores = [m["confidence"] for m in doc["matches"]]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertEqual(self.sb.calls(), [])

    def test_min_score_sends_the_query_to_the_model(self):
        answer = json.dumps(match("skill", "auth-cognito", 0.95))
        p, doc = self.route("set up user login", "--min-score", "0.9", answers=[answer])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["route"], "discovery")
        self.assertEqual(len(self.sb.calls()), 1)

    def test_no_llm_without_a_match_is_route_none(self):
        p, doc = self.route(VAGUE, "--no-llm", answers=["[]"])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(doc["route"], "none")
        self.assertEqual(doc["matches"], [])
        self.assertIn("no task or skill matches", p.stderr)
        self.assertEqual(self.sb.calls(), [])

    # --- tier 3: the model -----------------------------------------------------------------

    def test_valid_task_response(self):
        answer = "```json\n" + json.dumps([match("task", "customer-portal", 0.88,
                                                 "Customers see their orders there.")]) + "\n```"
        p, doc = self.route(VAGUE, answers=[answer])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["route"], "discovery")
        self.assertEqual(self.names(doc), [("task", "customer-portal")])
        self.assertEqual(doc["matches"][0]["confidence"], 0.88)
        self.assertEqual(doc["matches"][0]["reasoning"], "Customers see their orders there.")
        self.assertFalse(doc["fallback"])
        self.assertEqual(doc["provider"], "codex")
        self.assertEqual(len(doc["calls"]), 1)
        self.assertEqual(doc["tokens"]["output"], 50)
        # The model saw the query and the whole manifest.
        stdin = self.sb.calls()[0]["stdin"]
        self.assertIn(VAGUE, stdin)
        self.assertIn("- customer-portal: The web app where customers log in", stdin)
        self.assertIn("Skills:\n- auth-cognito:", stdin)

    def test_valid_skill_response_single_object(self):
        answer = "Sure.\n" + json.dumps(match("skill", "auth-cognito", 0.93, "Sign-in."))
        p, doc = self.route("let people sign in with their google accounts", answers=[answer])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["route"], "discovery")
        self.assertEqual(self.names(doc), [("skill", "auth-cognito")])

    def test_every_provider(self):
        for provider in ("claude", "codex", "gemini"):
            with self.subTest(provider=provider):
                os.path.exists(self.sb.state) and os.unlink(self.sb.state)
                answer = json.dumps([match("task", "customer-portal")])
                p, doc = self.route(VAGUE, answers=[answer], provider=provider)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(doc["provider"], provider)
                self.assertEqual(self.names(doc), [("task", "customer-portal")])

    def test_malformed_twice_falls_back_to_the_first_task(self):
        p, doc = self.route(VAGUE, answers=["I would pick the portal.", "The portal, surely."])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["route"], "discovery")
        self.assertTrue(doc["fallback"])
        self.assertEqual(self.names(doc), [("task", "customer-portal")])
        self.assertIsNone(doc["error"])
        self.assertTrue(any("fallback to the first task" in n for n in doc["notes"]))
        self.assertEqual([c["kind"] for c in doc["calls"]], ["main", "repair"])
        self.assertEqual(len(self.sb.calls()), 2)

    def test_missing_fields_go_to_the_repair_call(self):
        bad = json.dumps([{"type": "task", "name": "customer-portal", "confidence": 0.8}])
        good = json.dumps([match("task", "customer-portal", 0.8)])
        p, doc = self.route(VAGUE, answers=[bad, good])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["route"], "discovery")
        self.assertFalse(doc["fallback"])
        calls = self.sb.calls()
        self.assertEqual(len(calls), 2)
        self.assertIn("reasoning", calls[1]["stdin"])
        self.assertIn("/0", calls[1]["stdin"])

    def test_missing_fields_twice_fall_back(self):
        bad = json.dumps({"type": "task", "name": "customer-portal"})
        p, doc = self.route(VAGUE, answers=[bad, bad])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(doc["fallback"])
        self.assertEqual(self.names(doc), [("task", "customer-portal")])

    def test_unknown_task_is_a_route_error_without_repair(self):
        answer = json.dumps([match("task", "mobile-app", 0.9)])
        p, doc = self.route(VAGUE, answers=[answer, json.dumps([match("task", "admin-dashboard")])])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(doc["route"], "error")
        self.assertIn('unknown task "mobile-app"', doc["error"])
        self.assertIn("known tasks: customer-portal, admin-dashboard", doc["error"])
        self.assertIn('unknown task "mobile-app"', p.stderr)
        self.assertFalse(doc["fallback"])
        self.assertEqual(len(self.sb.calls()), 1)

    def test_unknown_skill_is_a_route_error(self):
        answer = json.dumps([match("skill", "customer-portal", 0.7)])
        p, doc = self.route(VAGUE, answers=[answer])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(doc["route"], "error")
        self.assertIn('unknown skill "customer-portal" (a task has that name)', doc["error"])
        self.assertEqual(len(self.sb.calls()), 1)

    def test_array_sorted_by_confidence_with_clamping(self):
        answer = json.dumps([match("task", "admin-dashboard", 0.4, "a"),
                             match("skill", "pdf-reports", 1.5, "b"),
                             match("task", "customer-portal", 0.4, "c"),
                             match("task", "data-pipeline", -0.3, "d")])
        p, doc = self.route(VAGUE, answers=[answer])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.names(doc), [("skill", "pdf-reports"), ("task", "admin-dashboard"),
                                           ("task", "customer-portal"), ("task", "data-pipeline")])
        self.assertEqual([m["confidence"] for m in doc["matches"]], [1.0, 0.4, 0.4, 0.0])
        self.assertEqual(doc["notes"], [
            'match 1 ("pdf-reports") confidence 1.5 clamped to 1',
            'match 3 ("data-pipeline") confidence -0.3 clamped to 0'])
        self.assertIn("clamped to 1", p.stderr)
        self.assertEqual(len(self.sb.calls()), 1)

    def test_empty_response_is_an_empty_match_list(self):
        p, doc = self.route(VAGUE, answers=["```json\n[]\n```"])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(doc["route"], "none")
        self.assertEqual(doc["matches"], [])
        self.assertFalse(doc["fallback"])
        self.assertEqual(len(self.sb.calls()), 1)

    def test_provider_failure_keeps_its_exit_status(self):
        self.sb.answers("codex", ["[]"])
        p, doc = self.route(VAGUE, env={"FAKE_CLI_EXIT": "1", "FAKE_CLI_FIXTURE": "",
                                        "FAKE_CLI_STDERR_TEXT": "boom"})
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(doc["route"], "error")
        self.assertIsNotNone(doc["error"])
        self.assertFalse(doc["fallback"])

    def test_sigterm_during_discovery_exits_143(self):
        self.sb.answers("codex", ["[]"])
        env = dict(self.sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1")
        proc = subprocess.Popen([AGENTRUN, "route", "--manifest", MANIFEST, "--format", "json",
                                 VAGUE], cwd=self.sb.work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 20
        while not self.sb.calls() and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(len(self.sb.calls()), 1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 143, err)
        doc = json.loads(out)
        self.assertEqual(doc["route"], "error")
        self.assertFalse(doc["fallback"])

    # --- text format, usage errors -----------------------------------------------------------

    def test_every_answer_counts(self):
        # Issue 57 #3: a draft answer, then the final one: neither is dropped; each
        # task or skill once, at the highest confidence any answer gave it.
        draft = json.dumps(match("task", "customer-portal", 0.6))
        final = json.dumps([match("skill", "auth-cognito", 0.8),
                            match("task", "customer-portal", 0.7)])
        p, doc = self.route(VAGUE, answers=["Draft:\n" + draft + "\nFinal:\n" + final])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.names(doc), [("skill", "auth-cognito"),
                                           ("task", "customer-portal")])
        self.assertEqual([m["confidence"] for m in doc["matches"]], [0.8, 0.7])
        self.assertTrue(any("held 2 answers" in n for n in doc["notes"]), doc["notes"])
        self.assertIn("the reply held 2 answers", p.stderr)
        # One answer and a value that is none: the answer alone, as before.
        p, doc = self.route(VAGUE, answers=[draft + '\n{"note": "x"}'])
        self.assertEqual(self.names(doc), [("task", "customer-portal")])
        self.assertFalse(any("answers" in n for n in doc["notes"]), doc["notes"])

    def test_text_format_one_line_per_match(self):
        answer = json.dumps([match("task", "customer-portal", 0.8, "orders\tlive there"),
                             match("skill", "pdf-reports", 0.3, "receipts")])
        self.sb.answers("codex", [answer])
        p = self.sb.run("route", "--manifest", MANIFEST, VAGUE)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), [
            "discovery\ttask\tcustomer-portal\t0.80\torders live there",
            "discovery\tskill\tpdf-reports\t0.30\treceipts"])

    def test_a_models_reasoning_never_writes_a_workflow_command(self):
        import re
        answer = json.dumps([match("task", "customer-portal", 0.9,
                                   "x\n::error::forged ##[group]g\r::warning::w")])
        self.sb.answers("codex", [answer])
        p = self.sb.run("route", "--manifest", MANIFEST, VAGUE)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("# #[group]g", p.stdout)
        lines = re.split(r"[\r\n]", p.stdout + p.stderr)
        self.assertEqual([l for l in lines if l.lstrip().startswith("::") or "##[" in l], [])

    def test_query_words_are_joined(self):
        p = self.sb.run("route", "--manifest", MANIFEST, "customer", "app")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("exact\ttask\tcustomer-portal\t1.00\t"))

    def test_malformed_manifest_is_a_usage_error(self):
        bad = self.sb.write("bad.json", '{"tasks": [\n  {"name": "a",}\n]}')
        missing = self.sb.write("missing.json", json.dumps(
            {"tasks": [{"name": "a", "description": "d"}, {"name": "b", "description": "d"},
                       {"description": "no name"}]}))
        cases = [
            (["--manifest", bad, "q"], bad + ":2:16: invalid JSON"),
            (["--manifest", missing, "q"], "/tasks/2: missing 'name'"),
            (["--manifest", "nope.json", "q"], "cannot read 'nope.json'"),
            (["q"], "--manifest FILE is required"),
            (["--manifest", MANIFEST], "no query given"),
            (["--manifest", MANIFEST, "--min-score", "2", "q"], "invalid --min-score '2'"),
            (["--manifest", MANIFEST, "--format", "csv", "q"], "invalid --format 'csv'"),
        ]
        self.sb.answers("codex", ["[]"])
        for args, msg in cases:
            with self.subTest(args=args):
                p = self.sb.run("route", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(msg, p.stderr)
                self.assertEqual(p.stdout, "")
        self.assertEqual(self.sb.calls(), [])

    def test_live_status_line_names_the_provider(self):
        # As for run: on a terminal the status line shows which CLI is working.
        import pty
        self.sb.answers("codex", [json.dumps(match("skill", "auth-cognito", 0.95))])
        master, slave = pty.openpty()
        env = dict(self.sb.env, AGENTRUN_PROVIDER="codex", TERM="xterm", FAKE_CLI_SLEEP_MS="900")
        proc = subprocess.Popen([AGENTRUN, "route", "--manifest", MANIFEST, VAGUE],
                                cwd=self.sb.work, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        data = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO once the last writer is gone
                break
            if not chunk:
                break
            data += chunk
        os.close(master)
        proc.stdout.read()
        proc.stdout.close()
        self.assertEqual(proc.wait(timeout=30), 0)
        self.assertIn(b"\rcodex 0:0", data)


if __name__ == "__main__":
    unittest.main(verbosity=2)
