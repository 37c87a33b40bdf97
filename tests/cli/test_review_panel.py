"""agentrun review --panel with the fake CLI (issue 61): each provider answers its own
scripted review, the findings are matched across members (found_by, agreement), the quorum
decides what counts and what was reviewed, a member that fails is named, and every format
shows the agreement and stays valid for its consumer."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import re
import sys
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import FAKE_BIN_DIR, STREAMS, Sandbox  # noqa: E402
from test_review import (GITLAB_SCHEMA, as_json, assert_valid, assert_valid_sarif,  # noqa: E402
                         issue, review)

import jsonschema  # noqa: E402 (test_review made it importable)

PANEL = "claude,codex,gemini"


class PanelCase(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()
        self.sb.write("app.c", "int main(void)\n{\n    return 0;\n}\n")
        self.sb.write("util.c", "int one(void)\n{\n    return 1;\n}\n")
        self.sb.git("add", "app.c", "util.c")
        self.sb.git("commit", "-q", "-m", "app")
        self.sb.write("app.c", "int main(void)\n{\n    char *p = 0;\n    return *p;\n}\n")
        self.sb.write("util.c", "int one(void)\n{\n    return 2;\n}\n")

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def member(self, provider, texts=None, exit=None, stderr=None, sleep_ms=None, cost=None):
        """provider's CLI answers texts (call N: texts[N]) through a wrapper that gives the
        fake its own fixtures and counter, so each member's answers are its own whatever
        order the calls run in."""
        d = os.path.join(self.sb.root, "bin-" + provider)
        os.makedirs(d, exist_ok=True)
        link = os.path.join(d, provider)
        if not os.path.exists(link):
            os.symlink(os.path.join(FAKE_BIN_DIR, provider), link)
        env = {"FAKE_CLI_STATE": os.path.join(self.sb.root, "state-" + provider)}
        if texts is not None:
            kw = {"cost": cost} if cost is not None else {}
            env["FAKE_CLI_FIXTURE"] = ",".join(
                self.sb.fixture(STREAMS[provider](t, **kw)) for t in texts)
        if sleep_ms is not None:
            env["FAKE_CLI_SLEEP_MS"] = str(sleep_ms)
        if exit is not None:
            env["FAKE_CLI_EXIT"] = str(exit)
        if stderr is not None:
            env["FAKE_CLI_STDERR_TEXT"] = stderr
        script = os.path.join(d, "run.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n" + "".join(f"export {k}='{v}'\n" for k, v in env.items())
                    + f"exec '{link}' \"$@\"\n")
        os.chmod(script, 0o755)
        self.sb.env["AGENTRUN_%s_BIN" % provider.upper()] = script

    def review(self, *args):
        p = self.sb.run("review", *args, provider=None)
        if "sarif" in args and p.stdout:
            assert_valid_sarif(p.stdout)
        return p

    def three_members(self):
        """The scripted panel: claude and codex agree on the null dereference (different
        words, lines 3 and 4, high and critical); gemini alone reports a medium in util.c;
        codex alone reports a low in util.c."""
        self.member("claude", [review(False, "null deref", [
            issue("app.c", 3, "high", "Null pointer p is dereferenced: crash")])])
        self.member("codex", [review(False, "bad", [
            issue("app.c", 4, "critical", "Dereferencing the null pointer p crashes the program"),
            issue("util.c", 3, "low", "Return value changed from 1 to 2 without a test")])])
        self.member("gemini", [review(True, "ok", [
            issue("util.c", 3, "medium", "The function name one no longer matches its result")])])


class TestAgreement(PanelCase):
    def test_findings_carry_who_found_them(self):
        self.three_members()
        p = self.review("--panel", PANEL, "--format", "json")
        self.assertEqual(p.returncode, 1, p.stderr)
        doc = as_json(p)
        app = [i for i in doc["issues"] if i["file"] == "app.c"]
        self.assertEqual(len(app), 1, doc["issues"])
        # One finding: the highest severity reported, both members named in panel order.
        self.assertEqual(app[0]["severity"], "critical")
        self.assertEqual(app[0]["found_by"], ["claude", "codex"])
        self.assertEqual(app[0]["agreement"], {"k": 2, "n": 3})
        util = sorted((i for i in doc["issues"] if i["file"] == "util.c"),
                      key=lambda i: i["severity"])
        # Different messages on one line: two findings, each of one member.
        self.assertEqual([(i["severity"], i["found_by"]) for i in util],
                         [("low", ["codex"]), ("medium", ["gemini"])])
        panel = doc["panel"]
        self.assertEqual([m["provider"] for m in panel["members"]], ["claude", "codex", "gemini"])
        self.assertEqual([m["status"] for m in panel["members"]], ["answered"] * 3)
        self.assertEqual((panel["answered"], panel["of"], panel["quorum"]), (3, 3, 1))
        self.assertEqual([m["findings"] for m in panel["members"]], [1, 2, 1])
        for m in panel["members"]:
            self.assertGreater(m["tokens"]["input"], 0)
        # Every member reviewed every chunk: three calls, one per provider.
        self.assertEqual(sorted(c["argv0"] for c in self.sb.calls()),
                         ["claude", "codex", "gemini"])
        self.assertEqual(len(doc["calls"]), 3)

    def test_text_names_members_and_spend(self):
        self.three_members()
        p = self.review("--panel", PANEL)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("Found by claude, codex (2 of 3 panel members)", p.stdout)
        self.assertIn("panel: 3 of 3 members answered (quorum 1)", p.stdout)
        for name in ("claude", "codex", "gemini"):
            self.assertRegex(p.stdout, rf"\n  {name}.*: answered, \d+ findings?, \d+ input \+ "
                                       rf"\d+ output tokens")
        self.assertRegex(p.stdout, r"\n  total: \d+ input \+ \d+ output tokens")
        self.assertRegex(p.stdout, r"\nverdict: fail \(.*; 3 of 3 members answered[;)]")
        # The summary on stderr: the panel's total, and what each member spent.
        self.assertRegex(p.stderr, r"claude\+codex\+gemini.*, 3 calls.*; claude \d+ tokens, "
                                   r"\$0\.0100, codex \d+ tokens, cost unknown, gemini \d+ "
                                   r"tokens, \$0\.\d+")


class TestQuorum(PanelCase):
    def test_quorum_counts_only_shared_findings(self):
        self.three_members()
        # A medium only gemini reported does not fail --fail-on medium under quorum 2;
        # the critical both reported does.
        p = self.review("--panel", PANEL, "--quorum", "2", "--fail-on", "medium",
                        "--format", "json")
        doc = as_json(p)
        self.assertEqual(p.returncode, 1, p.stderr)
        counted = {(i["file"], i["severity"]): i["counted"] for i in doc["issues"]}
        self.assertEqual(counted, {("app.c", "critical"): True, ("util.c", "medium"): False,
                                   ("util.c", "low"): False})
        self.assertEqual(doc["panel"]["not_counted"], 2)

    def test_quorum_passes_when_only_single_reports_remain(self):
        self.member("claude", [review(True, "ok", [])])
        self.member("codex", [review(True, "ok", [])])
        self.member("gemini", [review(False, "hmm", [issue("util.c", 3, "medium", "Odd value")])])
        p = self.review("--panel", PANEL, "--quorum", "2", "--fail-on", "medium",
                        "--format", "json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        doc = as_json(p)
        self.assertEqual(doc["verdict"], "pass")
        self.assertEqual(doc["issues"][0]["counted"], False)
        # Without the quorum the same answers fail the gate: any member's finding counts.
        p = self.review("--panel", PANEL, "--fail-on", "medium", "--format", "json")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)

    def test_a_critical_below_the_quorum_still_counts(self):
        self.member("claude", [review(True, "ok", [])])
        self.member("codex", [review(False, "bad", [issue("app.c", 4, "critical",
                                                          "Null dereference crashes")])])
        self.member("gemini", [review(True, "ok", [])])
        p = self.review("--panel", PANEL, "--quorum", "2", "--format", "json")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        doc = as_json(p)
        self.assertEqual(doc["issues"][0]["found_by"], ["codex"])
        self.assertEqual(doc["issues"][0]["counted"], True)
        p = self.review("--panel", PANEL, "--quorum", "2")
        self.assertIn("below the quorum: counted all the same, as critical", p.stdout)

    def test_nothing_to_review_asks_no_member(self):
        self.sb.git("add", "-A")
        self.sb.git("commit", "-q", "-m", "all")
        p = self.review("--panel", PANEL, "--quorum", "3", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        doc = as_json(p)
        self.assertEqual([m["status"] for m in doc["panel"]["members"]], ["not_asked"] * 3)
        self.assertEqual([m["cost_source"] for m in doc["panel"]["members"]], ["none"] * 3)
        self.assertEqual(self.sb.calls(), [])

    def test_quorum_larger_than_panel_is_usage(self):
        p = self.review("--panel", "claude,codex", "--quorum", "3")
        self.assertEqual(p.returncode, 2)
        self.assertIn("quorum of 3 is more than the panel's 2 members", p.stderr)
        self.assertEqual(self.sb.calls(), [])


class TestFailedMember(PanelCase):
    def test_failed_member_is_named_and_coverage_follows_quorum(self):
        self.member("claude", [review(True, "ok", [])])
        self.member("codex", [review(True, "ok", [])])
        self.member("gemini", [""], exit=41,
                    stderr="Error: GEMINI_API_KEY environment variable not found\\n")
        # Quorum 1: the others reviewed every file; the review stands, and names gemini.
        p = self.review("--panel", PANEL, "--format", "json")
        doc = as_json(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        members = {m["provider"]: m for m in doc["panel"]["members"]}
        self.assertEqual(members["gemini"]["status"], "failed")
        self.assertIsNotNone(members["gemini"]["error"])
        self.assertEqual(doc["panel"]["answered"], 2)
        self.assertTrue(any(n.startswith("panel: gemini did not answer") for n in doc["notes"]),
                        doc["notes"])
        # Quorum 3: no file was reviewed by three members: each fails the gate.
        p = self.review("--panel", PANEL, "--quorum", "3", "--format", "json")
        doc = as_json(p)
        # Fewer members answered than the quorum: the review failed, with gemini's cause.
        self.assertGreaterEqual(p.returncode, 4, p.stderr)
        self.assertIn("2 of 3 panel members answered, fewer than the quorum of 3; gemini:",
                      doc["error"]["message"])
        self.assertEqual(doc["provider"], "gemini")  # the provider to fix
        self.assertTrue(doc["files"])
        for f in doc["files"]:
            self.assertEqual(f["status"], "not_sent")
            self.assertIn("reviewed by 2 of 3 panel members, fewer than the quorum of 3",
                          f["why"])
            self.assertIn("gemini:", f["why"])

    def test_every_member_failed_fails_the_review(self):
        for name in ("claude", "codex", "gemini"):
            self.member(name, [""], exit=1, stderr="boom\\n")
        p = self.review("--panel", PANEL, "--format", "json")
        doc = as_json(p)
        self.assertGreaterEqual(p.returncode, 4, p.stderr)
        self.assertEqual(doc["panel"]["answered"], 0)
        self.assertIn("0 of 3 panel members answered", doc["error"]["message"])


class TestFormats(PanelCase):
    def test_every_format_shows_agreement_and_stays_valid(self):
        self.three_members()
        sarif = json.loads(self.review("--panel", PANEL, "--format", "sarif").stdout)
        results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] != "review/not-reviewed"]
        shared = [r for r in results if r["properties"].get("foundBy") == ["claude", "codex"]]
        self.assertEqual(len(shared), 1)
        self.assertAlmostEqual(shared[0]["rank"], 66.7)
        self.assertEqual(shared[0]["properties"]["agreement"], {"k": 2, "n": 3})
        self.assertIn("Found by claude, codex (2 of 3", shared[0]["message"]["text"])
        self.assertEqual(sarif["runs"][0]["properties"]["panel"]["answered"], 3)

        lines = self.review("--panel", PANEL, "--format", "rdjsonl").stdout.splitlines()
        self.assertTrue(lines)
        for line in lines:
            d = json.loads(line)
            assert_valid("reviewdog-Diagnostic.json", d)
        self.assertTrue(any("Found by claude, codex (2 of 3" in json.loads(l)["message"]
                            for l in lines))

        gitlab = json.loads(self.review("--panel", PANEL, "--format", "gitlab").stdout)
        jsonschema.validate(gitlab, GITLAB_SCHEMA)
        for entry in gitlab:
            assert_valid("gitlab-codeclimate.json", entry)
        self.assertTrue(any("Found by claude, codex" in e["description"] for e in gitlab))

        root = ET.fromstring(self.review("--panel", PANEL, "--format", "checkstyle").stdout)
        msgs = [e.get("message") for e in root.iter("error")]
        self.assertTrue(any("Found by claude, codex (2 of 3" in m for m in msgs), msgs)

        gh = self.review("--panel", PANEL, "--format", "github").stdout
        line = next(l for l in gh.splitlines() if l.startswith("::error file=app.c"))
        self.assertIn("title=agentrun review%3A critical (2 of 3)", line)
        # The message is workflow-command data: its commas stay (only properties escape them).
        self.assertIn("%0A%0AFound by claude, codex (2 of 3 panel members)", line)


class TestUsage(PanelCase):
    def test_bad_panels_are_usage_errors_before_any_call(self):
        cases = [
            ("claude,claude", "names 'claude' twice"),
            ("claude,,codex", "empty member"),
            ("claude,nosuch", "nosuch"),
            ("auto,codex", "'auto' is not a member"),
            ("codex=", "no usable model"),
        ]
        for panel, want in cases:
            p = self.review("--panel", panel)
            self.assertEqual(p.returncode, 2, (panel, p.stderr))
            self.assertIn(want, p.stderr)
        p = self.sb.run("review", "--panel", PANEL, "-m", "x", provider=None)
        self.assertEqual(p.returncode, 2)
        self.assertIn("each member's model", p.stderr)
        p = self.sb.run("review", "--panel", PANEL, "-p", "codex", provider=None)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not both", p.stderr)
        self.assertEqual(self.sb.calls(), [])

    def test_member_model_reaches_its_cli(self):
        self.three_members()
        p = self.review("--panel", "claude,codex=gpt-test-model", "--format", "json")
        self.assertEqual(p.returncode, 1, p.stderr)
        codex = [c for c in self.sb.calls() if c["argv0"] == "codex"]
        self.assertTrue(codex)
        self.assertIn("gpt-test-model", " ".join(codex[0]["argv"]))
        claude = [c for c in self.sb.calls() if c["argv0"] == "claude"]
        self.assertNotIn("gpt-test-model", " ".join(claude[0]["argv"]))


class TestCallsAndBudget(PanelCase):
    def test_jobs_bound_the_calls_of_the_whole_panel(self):
        # -j 1: one CLI at a time over every member, in the panel's order; claude's slow
        # call still ends before codex's starts.
        self.member("claude", [review(True, "ok", [])], sleep_ms=800)
        self.member("codex", [review(True, "ok", [])])
        self.member("gemini", [review(True, "ok", [])])
        p = self.review("--panel", PANEL, "-j", "1", "-v")
        self.assertEqual(p.returncode, 0, p.stderr)
        done = re.findall(r"(claude|codex|gemini): call \d/3: ", p.stderr)
        self.assertEqual(done, ["claude", "codex", "gemini"], p.stderr)

    def test_one_budget_caps_the_panel(self):
        # claude's call costs $0.01 of the $0.015 cap: what is left cannot cover a call as
        # dear as the dearest so far, so gemini's is refused and gemini is named.
        self.member("claude", [review(True, "ok", [])], cost=0.01)
        self.member("gemini", [review(True, "ok", [])])
        p = self.review("--panel", "claude,gemini", "-j", "1", "--max-cost", "0.015",
                        "--format", "json")
        doc = as_json(p)
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude"])
        members = {m["provider"]: m for m in doc["panel"]["members"]}
        self.assertEqual(members["claude"]["status"], "answered")
        self.assertEqual(members["gemini"]["status"], "failed")
        self.assertEqual(members["gemini"]["error"]["code"], "budget")
        self.assertAlmostEqual(doc["budget"]["cap_usd"], 0.015)
        self.assertLessEqual(doc["budget"]["spent_usd"], 0.015)
        self.assertAlmostEqual(doc["cost_usd"], 0.01)
        # One member answered (quorum 1): the review stands on claude's word.
        self.assertEqual(p.returncode, 0, p.stderr)


class TestEscalate(PanelCase):
    def test_others_review_only_where_the_first_found_something(self):
        # Two chunks (app.c, util.c); -j 1 keeps claude's calls in chunk order.
        self.member("claude", [review(False, "bug", [issue("app.c", 4, "high", "Null deref")]),
                               review(True, "ok", [])])
        self.member("codex", [review(False, "bug", [issue("app.c", 4, "critical",
                                                          "Null pointer deref")])])
        self.member("gemini", [review(True, "ok", [])])
        p = self.review("--panel", PANEL, "--escalate", "high", "-j", "1",
                        "--max-chunk-bytes", "150", "--format", "json")
        doc = as_json(p)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(doc["chunks"], 4, doc["calls"])
        calls = self.sb.calls()
        self.assertEqual(sorted(c["argv0"] for c in calls),
                         ["claude", "claude", "codex", "gemini"])
        for c in calls:
            if c["argv0"] != "claude":
                self.assertIn("app.c", c["stdin"])
                self.assertNotIn("util.c", c["stdin"])
        self.assertEqual(doc["issues"][0]["found_by"], ["claude", "codex"])
        self.assertEqual(doc["issues"][0]["severity"], "critical")
        members = {m["provider"]: m for m in doc["panel"]["members"]}
        self.assertEqual((members["claude"]["chunks"], members["codex"]["chunks"]), (2, 1))
        # Every file was reviewed (by the first member at least): the gate holds.
        self.assertTrue(all(f["status"] == "reviewed" for f in doc["files"]), doc["files"])

    def test_nothing_found_asks_no_one_else(self):
        self.member("claude", [review(True, "ok", [issue("app.c", 4, "low", "Style")])])
        self.member("codex", [review(False, "x", [issue("app.c", 4, "critical", "x")])])
        self.member("gemini", [review(False, "x", [issue("app.c", 4, "critical", "x")])])
        p = self.review("--panel", PANEL, "--escalate", "high", "--fail-on", "high",
                        "--format", "json")
        doc = as_json(p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude"])
        self.assertEqual([m["status"] for m in doc["panel"]["members"]],
                         ["answered", "not_asked", "not_asked"])
        self.assertEqual(doc["panel"]["answered"], 1)

    def escalate_files_case(self, *args):
        """Two chunks (app.c, util.c); claude finds nothing in either; the others answer
        what they find. Returns (process, json, the chunks each other member was sent)."""
        self.member("claude", [review(True, "ok", []), review(True, "ok", [])])
        self.member("codex", [review(False, "x", [issue("util.c", 3, "high", "Wrong value")])])
        self.member("gemini", [review(False, "x", [issue("util.c", 3, "high", "Bad value")])])
        p = self.review("--panel", PANEL, "-j", "1", "--max-chunk-bytes", "150",
                        "--format", "json", *args)
        doc = as_json(p)
        sent = {c["argv0"]: [] for c in self.sb.calls()}
        for c in self.sb.calls():  # each file's added line, in the diff sent
            sent[c["argv0"]].append(("+    char *p = 0;" in c["stdin"],
                                     "+    return 2;" in c["stdin"]))
        return p, doc, sent

    def test_escalate_files_alone_asks_the_others_for_those_files_only(self):
        # issue 61: "or files that match given globs". Matched from the start, whatever the
        # first member finds there (it found nothing).
        p, doc, sent = self.escalate_files_case("--escalate-files", "util*")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(sent["claude"], [(True, False), (False, True)])
        self.assertEqual(sent["codex"], [(False, True)])
        self.assertEqual(sent["gemini"], [(False, True)])
        self.assertEqual(doc["issues"][0]["found_by"], ["codex", "gemini"])
        members = {m["provider"]: m for m in doc["panel"]["members"]}
        self.assertEqual((members["codex"]["chunks"], members["gemini"]["chunks"]), (1, 1))

    def test_escalate_files_beside_a_severity(self):
        # Nothing at or above high from claude, and no file matches: no one else is asked.
        p, doc, sent = self.escalate_files_case("--escalate", "high",
                                                "--escalate-files", "src/**")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(sent), ["claude"])
        self.assertEqual([m["status"] for m in doc["panel"]["members"]],
                         ["answered", "not_asked", "not_asked"])

    def test_escalate_files_beside_a_severity_that_found_nothing(self):
        p, doc, sent = self.escalate_files_case("--escalate", "high",
                                                "--escalate-files", "util.c")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(sent["codex"], [(False, True)])
        self.assertEqual(sent["gemini"], [(False, True)])

    def test_escalate_files_usage(self):
        for args, want in [(("--escalate-files", "x.c"), "escalate_files needs a panel"),
                           (("--panel", PANEL, "--escalate-files", "x.c", "--quorum", "2"),
                            "not with a quorum above 1"),
                           (("--panel", PANEL, "--escalate-files", ""), "non-empty GLOB")]:
            p = self.sb.run("review", *args, provider=None)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(want, p.stderr)
        self.assertEqual(self.sb.calls(), [])

    def test_escalate_usage(self):
        for args, want in [(("--escalate", "high"), "escalate needs a panel"),
                           (("--panel", PANEL, "--escalate", "high", "--quorum", "2"),
                            "not with a quorum above 1"),
                           (("--panel", PANEL, "--escalate", "none"), "escalate")]:
            p = self.sb.run("review", *args, provider=None)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(want, p.stderr)
        self.assertEqual(self.sb.calls(), [])


class TestMcp(PanelCase):
    """The MCP review tool takes a panel, within the operator's --providers."""

    def server(self, *args):
        from test_mcp import Server
        s = Server(self.sb, *args, provider=None)
        self.addCleanup(s.kill)
        s.initialize()
        return s

    def test_panel_argument_and_the_operators_providers(self):
        self.three_members()
        s = self.server("--providers", "codex,gemini")
        r = s.call("review", {"panel": PANEL})["result"]
        self.assertTrue(r["isError"], r)
        text = r["content"][0]["text"]
        self.assertIn("provider 'claude' is not allowed here", text)
        self.assertIn("--providers", text)
        self.assertEqual(self.sb.calls(), [])
        r = s.call("review", {"panel": "codex,gemini", "quorum": 2,
                              "fail_on": "medium"})["result"]
        self.assertFalse(r["isError"], r)
        sc = r["structuredContent"]
        self.assertEqual([m["provider"] for m in sc["panel"]["members"]], ["codex", "gemini"])
        self.assertEqual(sc["panel"]["quorum"], 2)
        # Each reported its own util.c finding: neither counts under quorum 2.
        self.assertTrue(sc["issues"])
        self.assertTrue(all(i["counted"] is False for i in sc["issues"]
                            if i["severity"] != "critical"), sc["issues"])
        self.assertIn("Found by", r["content"][0]["text"])
        r = s.call("review", {"panel": "codex,gemini", "model": "x"})["result"]
        self.assertTrue(r["isError"], r)
        self.assertIn("each member's model", r["content"][0]["text"])


if __name__ == "__main__":
    unittest.main()
