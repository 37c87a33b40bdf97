"""agentrun prioritize and agentrun route with the real claude, codex and gemini CLIs
against the loopback mock (issues 7 and 8): the PRDs and the manifest reach the model, a
valid answer is accepted, a wrong one gets the repair call with the exact messages, and
route's discovery answer is checked against the manifest."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT",
                             os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MANIFEST = os.path.join(os.path.abspath(SOURCE_ROOT), "tests", "fixtures", "route",
                        "manifest.json")
VAGUE = "where do our clients look at past purchases"

RANKING = {"recommendations": [
    {"prd_id": "auth", "priority": 1, "rationale": "Everything needs login.", "effort": "M"},
    {"prd_id": "billing", "priority": 2, "rationale": "Revenue.", "depends_on": ["auth"]}],
    "summary": "Auth first."}
UNKNOWN = {"recommendations": [
    {"prd_id": "auth", "priority": 1, "rationale": "r"},
    {"prd_id": "auth2", "priority": 2, "rationale": "r"}]}


class Base:
    cli = None

    @classmethod
    def setUpClass(cls):
        cls.mock = Mock().start()

    @classmethod
    def tearDownClass(cls):
        cls.mock.cleanup()

    def setUp(self):
        self.root = RunRoot(self.mock.port)
        prds = os.path.join(self.root.work, "prds")
        os.makedirs(prds)
        for name, text in (("auth.md", "# Auth\nSingle sign-on for every app.\n"),
                           ("billing.md", "# Billing\nMonthly invoices.\n")):
            with open(os.path.join(prds, name), "w") as f:
                f.write(text)

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()

    def agentrun(self, steps, *args):
        self.mock.set_script({self.cli: steps})
        return subprocess.run([AGENTRUN, *args, "-p", self.cli, "--format", "json",
                               "--timeout", "90s"],
                              cwd=self.root.work, env=self.root.agentrun_env(),
                              capture_output=True, text=True, timeout=180)

    def doc(self, p):
        try:
            return json.loads(p.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"not JSON: {p.stdout!r}\nstderr: {p.stderr}")

    def bodies(self):
        return [self.mock.body(r) for r in self.mock.model_requests(self.cli)]

    def answer_step(self, value):
        return {"kind": "json", "value": value}

    def route_steps(self, match):
        # The route contract's root is "array or object": codex and gemini answer in text.
        return [{"kind": "json", "value": [match]}]

    def test_prioritize_valid_ranking(self):
        p = self.agentrun([self.answer_step(RANKING)], "prioritize", "prds")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.doc(p)
        self.assertEqual(doc["provider"], self.cli)
        self.assertEqual([r["prd_id"] for r in doc["recommendations"]], ["auth", "billing"])
        self.assertEqual(doc["unranked"], [])
        self.assertGreater(doc["tokens"]["output"], 0)
        self.assertTrue(any(b'<prd id=\\"billing\\">' in b or b'<prd id="billing">' in b
                            for b in self.bodies()))

    def test_prioritize_repair_call_fixes_an_unknown_id(self):
        p = self.agentrun([self.answer_step(UNKNOWN), self.answer_step(RANKING)],
                          "prioritize", "prds")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.doc(p)
        self.assertEqual(doc["repair"], "model")
        self.assertEqual([c["kind"] for c in doc["calls"]], ["main", "repair"])
        self.assertTrue(any(b'names unknown prd_id \\"auth2\\"' in b for b in self.bodies()))

    def test_route_discovery_and_unknown_name(self):
        match = {"type": "task", "name": "customer-portal", "confidence": 0.8,
                 "reasoning": "Orders live there."}
        p = self.agentrun(self.route_steps(match), "route", "--manifest",
                          MANIFEST, VAGUE)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.doc(p)
        self.assertEqual(doc["route"], "discovery")
        self.assertEqual(doc["matches"][0]["name"], "customer-portal")
        self.assertEqual(doc["provider"], self.cli)
        self.assertTrue(any(b"- customer-portal: The web app" in b for b in self.bodies()))
        match["name"] = "mobile-app"
        p = self.agentrun(self.route_steps(match), "route", "--manifest",
                          MANIFEST, VAGUE)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(self.doc(p)["route"], "error")


class TestClaude(Base, unittest.TestCase):
    cli = "claude"

    def answer_step(self, value):
        # agentrun passes the contract to --json-schema: claude answers through its
        # StructuredOutput tool.
        return {"kind": "structured", "value": value}

    def route_steps(self, match):
        # Whether claude gets the route contract as --json-schema depends on how the
        # adapter treats a union root type (a StructuredOutput tool input is an object,
        # so it could only carry one match). Either way works: with the tool, the
        # first step answers; without it, claude reports the unknown tool back and the
        # text answer comes next.
        return [{"kind": "structured", "value": match}, {"kind": "json", "value": [match]}]


class TestCodex(Base, unittest.TestCase):
    cli = "codex"


class TestGemini(Base, unittest.TestCase):
    cli = "gemini"


def main():
    harness.require_clis()
    unittest.main()


if __name__ == "__main__":
    main()
