#!/usr/bin/env python3
"""agentrun prioritize end to end with the fake CLI: extraction shapes, every check the
repair call is told about, unranked PRDs, reading (recursion, cap, UTF-8), each format."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, Sandbox  # noqa: E402

PRDS = {
    "auth.md": "# Auth\nEveryone needs to log in before anything else works.\n",
    "billing.md": "# Billing\nCharge customers monthly.\n",
    "search.txt": "Search\nFind orders by number.\n",
}


def ranking(*recs, summary=None):
    """A prioritize answer: recs are (prd_id, priority) or dicts."""
    out = []
    for r in recs:
        if isinstance(r, dict):
            out.append(r)
        else:
            out.append({"prd_id": r[0], "priority": r[1], "rationale": f"because {r[0]}"})
    doc = {"recommendations": out}
    if summary:
        doc["summary"] = summary
    return json.dumps(doc)


GOOD = ranking(("auth", 1), ("billing", 2), ("search", 3), summary="Auth first.")


class PrioritizeTest(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox(git=False)
        for name, text in PRDS.items():
            self.sb.write(os.path.join("prds", name), text)

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def run_json(self, *args, answers=None, provider="codex", **kw):
        if answers is not None:
            self.sb.answers(provider, answers)
        p = self.sb.run("prioritize", *args, "--format", "json", provider=provider, **kw)
        doc = json.loads(p.stdout) if p.stdout.strip() else None
        return p, doc

    def ids(self, doc):
        return [r["prd_id"] for r in doc["recommendations"]]

    # --- where the JSON is in the answer -------------------------------------------------

    def test_raw_json(self):
        p, doc = self.run_json("prds", answers=[GOOD])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(doc["ok"])
        self.assertEqual(self.ids(doc), ["auth", "billing", "search"])
        self.assertEqual(doc["summary"], "Auth first.")
        self.assertEqual(doc["unranked"], [])
        self.assertEqual(doc["repair"], "none")
        self.assertEqual(len(doc["calls"]), 1)
        self.assertIsNone(doc["error"])
        self.assertEqual(doc["tokens"]["output"], 50)
        self.assertIn("duration_ms", doc)
        self.assertIn("cost_source", doc)

    def test_every_answer_counts(self):
        # Issue 57 #3: the same ranking twice is one answer said twice (a warning);
        # rankings that disagree have no strictest one: no ranking, exit 3, named.
        p, doc = self.run_json("prds", answers=[GOOD + "\nonce more:\n" + GOOD])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.ids(doc), ["auth", "billing", "search"])
        self.assertEqual(doc["answers"], 2)
        self.assertIn("the reply held 2 answers, all the same ranking", p.stderr)
        other = ranking(("search", 1), ("auth", 2), ("billing", 3))
        p, doc = self.run_json("prds", answers=["Draft: " + GOOD + "\nFinal: " + other])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertFalse(doc["ok"])
        self.assertIn("the reply held 2 rankings that disagree (answer 1 ranks auth, billing, "
                      "search; answer 2 ranks search, auth, billing)", p.stderr)

    def test_a_models_words_never_write_a_workflow_command(self):
        # Issue 57 #5: the text and markdown formats are laid out by agentrun, with the
        # model's words in them; no line of them reads as a GitHub workflow command.
        import re
        evil = ranking({"prd_id": "auth", "priority": 1,
                        "rationale": "ok\n::error::forged ##[group]g " + "word " * 30 +
                                     "::warning::wrapped"},
                       ("billing", 2), ("search", 3), summary="s\n::stop-commands::t")
        for fmt in ("text", "markdown"):
            with self.subTest(fmt=fmt):
                self.sb.answers("codex", [evil])
                p = self.sb.run("prioritize", "prds", "--format", fmt, provider="codex",
                                env={"COLUMNS": "60"})
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("# #[group]", p.stdout)
                lines = re.split(r"[\r\n]", p.stdout + p.stderr)
                self.assertEqual([l for l in lines if l.lstrip().startswith("::") or "##[" in l],
                                 [])

    def test_json_fence(self):
        p, doc = self.run_json("prds", answers=["```json\n" + GOOD + "\n```\n"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.ids(doc), ["auth", "billing", "search"])
        self.assertEqual(len(self.sb.calls()), 1)

    def test_plain_fence(self):
        p, doc = self.run_json("prds", answers=["```\n" + GOOD + "\n```"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.ids(doc), ["auth", "billing", "search"])

    def test_text_before_json(self):
        p, doc = self.run_json("prds", answers=["Here is my ranking {as asked}:\n\n" + GOOD])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.ids(doc), ["auth", "billing", "search"])

    def test_every_provider(self):
        for provider in ("claude", "codex", "gemini"):
            with self.subTest(provider=provider):
                os.path.exists(self.sb.state) and os.unlink(self.sb.state)
                p, doc = self.run_json("prds", answers=["```json\n" + GOOD + "\n```"],
                                       provider=provider)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(doc["provider"], provider)
                self.assertEqual(self.ids(doc), ["auth", "billing", "search"])

    # --- answers that stay wrong: exit 3 with every problem ------------------------------

    def test_empty_recommendations_is_an_error(self):
        empty = json.dumps({"recommendations": []})
        p, doc = self.run_json("prds", answers=[empty, empty])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertFalse(doc["ok"])
        self.assertEqual(doc["error"]["code"], "contract")
        self.assertIn("no recommendations in response", doc["error"]["details"])
        self.assertIn("no recommendations in response", p.stderr)
        calls = self.sb.calls()
        self.assertEqual(len(calls), 2)
        self.assertIn("no recommendations in response", calls[1]["stdin"])

    def test_missing_prd_id_is_an_error_with_context(self):
        bad = ranking({"priority": 1, "rationale": "r"}, ("auth", 2))
        p, _ = self.run_json("prds", answers=[bad, bad])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("/recommendations/0/prd_id", p.stderr)
        self.assertIn("/recommendations/0/prd_id", self.sb.calls()[1]["stdin"])

    def test_empty_prd_id_is_reported_by_index(self):
        bad = ranking(("auth", 1), ("", 2))
        p, _ = self.run_json("prds", answers=[bad, bad])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("recommendation 1 missing prd_id", p.stderr)
        self.assertIn("recommendation 1 missing prd_id", self.sb.calls()[1]["stdin"])

    def test_priority_below_one_is_an_error(self):
        for prio in (0, -1):
            with self.subTest(priority=prio):
                os.path.exists(self.sb.state) and os.unlink(self.sb.state)
                bad = ranking(("billing", prio), ("auth", 1))
                p, doc = self.run_json("prds", answers=[bad, bad])
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertIn("/recommendations/0/priority", p.stderr)
                self.assertTrue(any("/recommendations/0/priority" in d
                                    for d in doc["error"]["details"]))

    def test_no_json_is_an_error(self):
        p, doc = self.run_json("prds", answers=["I think auth matters most.", "Still prose."])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(doc["error"]["code"], "no_json")
        self.assertEqual(len(doc["calls"]), 2)
        self.assertIn("no_json", p.stderr)

    def test_unknown_and_duplicate_ids_stay_wrong(self):
        bad = ranking(("auth", 1), ("auth2", 2), ("auth", 3),
                      {"prd_id": "billing", "priority": 4, "rationale": "r",
                       "depends_on": ["payments"]})
        p, doc = self.run_json("prds", answers=[bad, bad])
        self.assertEqual(p.returncode, 3, p.stderr)
        want = [
            'recommendation 1 names unknown prd_id "auth2"; known ids: auth, billing, search',
            'recommendation 2 repeats prd_id "auth" of recommendation 0',
            'recommendation 3 ("billing") depends_on unknown prd_id "payments"; '
            'known ids: auth, billing, search',
        ]
        self.assertEqual(doc["error"]["details"], want)
        for w in want:
            self.assertIn(w, p.stderr)

    def test_every_violation_is_printed(self):
        bad = ranking(*[(f"ghost{i}", i + 1) for i in range(25)])
        p, doc = self.run_json("prds", answers=[bad, bad])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(doc["error"]["details"]), 25)
        for i in (0, 24):
            self.assertIn(f'recommendation {i} names unknown prd_id "ghost{i}"', p.stderr)
        self.assertNotIn("more; -v shows all", p.stderr)

    def test_repair_call_gets_the_messages_and_a_fixed_answer_succeeds(self):
        bad = ranking(("auth", 1), ("auth2", 2), ("auth", 3))
        p, doc = self.run_json("prds", answers=[bad, "```json\n" + GOOD + "\n```"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["repair"], "model")
        self.assertEqual(self.ids(doc), ["auth", "billing", "search"])
        self.assertEqual([c["kind"] for c in doc["calls"]], ["main", "repair"])
        calls = self.sb.calls()
        self.assertEqual(len(calls), 2)
        repair = calls[1]["stdin"]
        self.assertIn('recommendation 1 names unknown prd_id "auth2"; known ids: auth, billing, '
                      'search', repair)
        self.assertIn('recommendation 2 repeats prd_id "auth" of recommendation 0', repair)
        # The main call saw the PRDs, the repair call the previous answer.
        self.assertIn('<prd id="auth">', calls[0]["stdin"])
        self.assertIn("auth2", repair)

    def test_no_repair_flag_fails_at_once(self):
        bad = ranking(("nope", 1))
        p, _ = self.run_json("prds", "--no-repair", answers=[bad, GOOD])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(self.sb.calls()), 1)

    def test_sigint_ends_the_cli_and_exits_130(self):
        self.sb.answers("codex", [GOOD])
        env = dict(self.sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1")
        proc = subprocess.Popen([AGENTRUN, "prioritize", "prds", "--format", "json"],
                                cwd=self.sb.work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 20
        while not self.sb.calls() and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(len(self.sb.calls()), 1)
        pid = self.sb.calls()[0]["pid"]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130, err)
        self.assertEqual(json.loads(out)["error"]["code"], "interrupted")
        # The fake CLI's process group is gone.
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    # --- unranked PRDs ---------------------------------------------------------------------

    def test_a_cli_not_logged_in_is_said_once_with_the_fix(self):
        # Issue 59: the cause once, first, with the fix (log in, or another CLI with -p).
        self.sb.env["FAKE_CLI_FIXTURE"] = os.path.join(
            os.path.abspath(os.environ.get("AGENTRUN_SOURCE_ROOT", ".")), "tests", "fixtures",
            "claude", "stream-not-logged-in.jsonl")
        self.sb.env["FAKE_CLI_EXIT"] = "1"
        p = self.sb.run("prioritize", "prds", provider="claude")
        self.assertEqual(p.returncode, 4, p.stderr)
        lines = p.stderr.splitlines()
        self.assertTrue(lines[0].startswith("agentrun: error: auth: claude is not logged in"),
                        p.stderr)
        self.assertIn("ANTHROPIC_API_KEY", lines[0])
        self.assertTrue(lines[0].endswith("; or use another CLI: -p codex or -p gemini"),
                        lines[0])
        self.assertEqual(sum("not logged in" in l for l in lines), 1)

    def test_unranked_prds_are_listed_with_a_warning(self):
        p, doc = self.run_json("prds", answers=[ranking(("search", 1))])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["unranked"], ["auth", "billing"])
        self.assertIn("warning: 2 PRDs left unranked by the model: auth, billing", p.stderr)
        t = self.sb.run("prioritize", "prds")
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertIn("Unranked (left out by the model): auth, billing", t.stdout)

    # --- reading ---------------------------------------------------------------------------

    def test_recursion(self):
        self.sb.write("prds/team/payments/refunds.md", "Refunds\n")
        self.sb.write("prds/.drafts/secret.md", "hidden\n")
        answer = ranking(("auth", 1), ("team/payments/refunds", 2))
        p, doc = self.run_json("-r", "prds", answers=[answer])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.ids(doc), ["auth", "team/payments/refunds"])
        stdin = self.sb.calls()[0]["stdin"]
        self.assertIn('<prd id="team/payments/refunds">\nRefunds\n</prd>', stdin)
        self.assertNotIn("hidden", stdin)
        # Without -r the nested PRD is not read, so naming it is an error.
        os.unlink(self.sb.state)
        p, doc = self.run_json("prds", answers=[answer, answer])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn('recommendation 1 names unknown prd_id "team/payments/refunds"', p.stderr)

    def test_truncation_marker(self):
        self.sb.write("prds/big.md", "x" * 5000)
        p, _ = self.run_json("--max-prd-bytes", "1K", "prds",
                             answers=[ranking(("big", 1), ("auth", 2))], env={})
        self.assertEqual(p.returncode, 0, p.stderr)
        stdin = self.sb.calls()[0]["stdin"]
        self.assertIn("x" * 1024 + "\n[\u2026 truncated: 1024 of 5000 bytes shown]\n</prd>", stdin)
        self.assertNotIn("x" * 1025, stdin)

    def test_invalid_utf8_is_replaced_and_warned(self):
        with open(os.path.join(self.sb.work, "prds", "latin1.md"), "wb") as f:
            f.write(b"Caf\xe9 menu\n")
        p, _ = self.run_json("prds", answers=[GOOD])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("latin1.md' is not valid UTF-8: 1 byte replaced with U+FFFD", p.stderr)
        self.assertIn("Caf\ufffd menu", self.sb.calls()[0]["stdin"])

    def test_context_file_reaches_the_prompt(self):
        self.sb.write("strategy.md", "Q3 goal: revenue above all.\n")
        p, _ = self.run_json("prds", "--context", "strategy.md", answers=[GOOD])
        self.assertEqual(p.returncode, 0, p.stderr)
        stdin = self.sb.calls()[0]["stdin"]
        self.assertIn("Q3 goal: revenue above all.", stdin)
        os.unlink(self.sb.state)
        p, _ = self.run_json("prds", answers=[GOOD])
        self.assertNotIn("<context>", self.sb.calls()[-1]["stdin"])

    def test_usage_errors_never_call_the_model(self):
        self.sb.write("empty/.keep", "")
        os.unlink(os.path.join(self.sb.work, "empty", ".keep"))
        self.sb.write("other/notes.json", "{}")
        cases = [
            (["missing"], "cannot read directory 'missing'"),
            (["empty"], "directory 'empty' is empty"),
            (["other"], "no PRD in 'other'"),
            ([], "no PRD directory given"),
            (["prds", "--format", "yaml"], "invalid --format 'yaml'"),
            (["prds", "--top", "0"], "invalid --top '0'"),
            (["prds", "--max-prd-bytes", "lots"], "invalid --max-prd-bytes 'lots'"),
            (["prds", "--context", "nope.md"], "--context: cannot read 'nope.md'"),
        ]
        self.sb.answers("codex", [GOOD])
        for args, msg in cases:
            with self.subTest(args=args):
                p = self.sb.run("prioritize", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(msg, p.stderr)
                self.assertEqual(p.stdout, "")
        self.assertEqual(self.sb.calls(), [])

    # --- output formats --------------------------------------------------------------------

    def test_text_format_wraps_to_columns(self):
        long = ("Billing unlocks revenue and the finance team has asked for it every week "
                "since the spring planning round.")
        answer = ranking({"prd_id": "billing", "priority": 2, "rationale": long, "effort": "L",
                          "depends_on": ["auth"]},
                         {"prd_id": "auth", "priority": 1, "rationale": "Login first.",
                          "effort": "M"},
                         summary="Auth, then billing.")
        self.sb.answers("codex", [answer])
        p = self.sb.run("prioritize", "prds", env={"COLUMNS": "60"})
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["PRI", "ID", "EFFORT", "RATIONALE"])
        self.assertEqual(lines[1].split()[:4], ["1", "auth", "M", "Login"])
        self.assertEqual(lines[2].split()[:3], ["2", "billing", "L"])
        for line in lines:
            self.assertLessEqual(len(line), 60, line)
        col = lines[0].index("RATIONALE")
        # Continuation lines start in the rationale column.
        self.assertTrue(lines[3].startswith(" " * col) and lines[3][col] != " ")
        self.assertIn(" " * col + "depends on: auth", p.stdout)
        self.assertIn("Summary: Auth, then billing.", p.stdout)
        self.assertIn("Unranked (left out by the model): search", p.stdout)
        # The whole rationale is there, split only between words.
        rationale = " ".join(l[col:].strip() for l in lines[2:5])
        self.assertEqual(rationale, long)

    def test_markdown_format_escapes_pipes(self):
        answer = ranking({"prd_id": "billing", "priority": 1, "rationale": "a | b\nc",
                          "depends_on": ["auth", "search"]}, ("auth", 2))
        self.sb.answers("codex", [answer])
        p = self.sb.run("prioritize", "prds", "--format", "markdown")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "| Priority | PRD | Effort | Rationale | Depends on |")
        self.assertEqual(lines[1], "|---:|---|---|---|---|")
        self.assertEqual(lines[2], "| 1 | billing | - | a \\| b c | auth, search |")
        self.assertEqual(lines[3], "| 2 | auth | - | because auth | - |")
        self.assertIn("**Unranked** (left out by the model): search", p.stdout)

    def test_json_format_sorts_and_top_cuts(self):
        answer = ranking(("search", 3), ("billing", 2), ("auth", 1))
        p, doc = self.run_json("prds", "--top", "2", answers=[answer])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["schema"], "agentrun.prioritize/1")
        self.assertEqual(self.ids(doc), ["auth", "billing"])
        self.assertEqual(doc["total"], 3)
        self.assertEqual(doc["unranked"], [])
        self.assertEqual(doc["calls"][0]["kind"], "main")

    def test_help_lists_the_options(self):
        p = self.sb.run("prioritize", "--help")
        self.assertEqual(p.returncode, 0)
        for opt in ("--recursive", "--max-prd-bytes", "--context", "--top", "--format",
                    "--provider", "--no-repair", "--transcript", "--prompts-dir"):
            self.assertIn(opt, p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
