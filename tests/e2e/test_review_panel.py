"""agentrun review --panel claude,codex,gemini with the three real CLIs against the loopback
mock (issue 61): each CLI answers its own scripted, partly overlapping review; agreement is
counted across members, the quorum policy applied, a member its provider refuses is named
and the coverage rule applied, and every format carries the agreement."""
import glob
import json
import os
import subprocess
import sys
import time
import unittest
import xml.etree.ElementTree as ET

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema, for a python3 that is not Debian's
    sys.path.extend(glob.glob("/usr/lib/python3/dist-packages"))
    import jsonschema

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
PANEL = "claude,codex,gemini"


def answer(passed, summary, *issues):
    return {"passed": passed, "summary": summary, "issues": list(issues)}


def finding(file, line, severity, message):
    return {"file": file, "line": line, "severity": severity, "message": message}


# claude and codex agree on the NULL dereference (other words, a line apart, high and
# critical); codex alone reports a low and gemini alone a medium in util.c.
CLAUDE = answer(False, "null deref", finding("app.c", 3, "high",
                                             "Null pointer p is dereferenced: crash"))
CODEX = answer(False, "bad", finding("app.c", 4, "critical",
                                     "Dereferencing the null pointer p crashes the program"),
               finding("util.c", 3, "low", "Return value changed from 1 to 2 without a test"))
GEMINI = answer(True, "ok", finding("util.c", 3, "medium",
                                    "The function name one no longer matches its result"))


def schema(name):
    with open(os.path.join(SCHEMAS, name), encoding="utf-8") as f:
        return json.load(f)


class TestPanel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mock = Mock().start()

    @classmethod
    def tearDownClass(cls):
        cls.mock.cleanup()

    def setUp(self):
        self.root = RunRoot(self.mock.port)
        for name, text in (("app.c", "int main(void)\n{\n    return 0;\n}\n"),
                           ("util.c", "int one(void)\n{\n    return 1;\n}\n")):
            with open(os.path.join(self.root.work, name), "w") as f:
                f.write(text)
        self.git("add", ".")
        self.git("commit", "-q", "-m", "base")
        with open(os.path.join(self.root.work, "app.c"), "w") as f:
            f.write("int main(void)\n{\n    char *p = 0;\n    return *p;\n}\n")
        with open(os.path.join(self.root.work, "util.c"), "w") as f:
            f.write("int one(void)\n{\n    return 2;\n}\n")

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()

    def git(self, *args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       cwd=self.root.work, env=self.root.base_env(), check=True,
                       capture_output=True)

    def review(self, script, *args):
        self.mock.set_script(script)
        t0 = time.monotonic()
        p = subprocess.run([AGENTRUN, "review", "--panel", PANEL, "--timeout", "90s", *args],
                           cwd=self.root.work, env=self.root.agentrun_env(),
                           capture_output=True, text=True, timeout=300)
        p.wall_ms = (time.monotonic() - t0) * 1000
        return p

    @staticmethod
    def script(claude=CLAUDE, codex=CODEX, gemini=GEMINI):
        steps = {}
        # claude answers through its StructuredOutput tool (agentrun passes --json-schema).
        steps["claude"] = [claude if "kind" in claude else {"kind": "structured",
                                                             "value": claude}]
        steps["codex"] = [codex if "kind" in codex else {"kind": "json", "value": codex}]
        steps["gemini"] = [gemini if "kind" in gemini else {"kind": "json", "value": gemini}]
        return steps

    def doc(self, p):
        try:
            return json.loads(p.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"not JSON: {p.stdout!r}\nstderr: {p.stderr}")

    def test_agreement_counted_across_the_three_clis(self):
        p = self.review(self.script(), "--format", "json")
        self.assertEqual(p.returncode, 1, p.stderr)
        doc = self.doc(p)
        got = sorted((i["file"], i["severity"], tuple(i["found_by"]), i["agreement"]["k"])
                     for i in doc["issues"])
        self.assertEqual(got, [("app.c", "critical", ("claude", "codex"), 2),
                               ("util.c", "low", ("codex",), 1),
                               ("util.c", "medium", ("gemini",), 1)])
        members = doc["panel"]["members"]
        self.assertEqual([(m["provider"], m["status"]) for m in members],
                         [("claude", "answered"), ("codex", "answered"),
                          ("gemini", "answered")])
        for m in members:
            self.assertGreater(m["tokens"]["output"], 0, m)
            self.assertEqual(m["calls"], 1, m)
        self.assertEqual(sorted(c["provider"] for c in doc["calls"]),
                         ["claude", "codex", "gemini"])
        # The panel's wall time against its slowest member's (said, not timed: a
        # benchmark's number, printed for the record).
        slowest = max(m["duration_ms"] for m in members)
        sys.stderr.write("panel: wall %.0f ms, review %d ms, slowest member %d ms\n"
                         % (p.wall_ms, doc["duration_ms"], slowest))

    def test_quorum_two_counts_only_what_two_found(self):
        p = self.review(self.script(), "--quorum", "2", "--fail-on", "medium",
                        "--format", "json")
        doc = self.doc(p)
        self.assertEqual(p.returncode, 1, p.stderr)
        counted = {(i["file"], i["severity"]): i["counted"] for i in doc["issues"]}
        self.assertEqual(counted, {("app.c", "critical"): True, ("util.c", "low"): False,
                                   ("util.c", "medium"): False})
        # Without the shared critical, quorum 2 passes what single members reported.
        p = self.review(self.script(claude=answer(True, "ok"),
                                    codex=answer(True, "ok", finding("util.c", 3, "low", "x"))),
                        "--quorum", "2", "--fail-on", "medium", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_a_member_its_provider_refuses_is_named_and_coverage_follows(self):
        refused = {"kind": "error", "status": 401}
        p = self.review(self.script(gemini=refused), "--format", "json")
        doc = self.doc(p)
        self.assertEqual(p.returncode, 1, p.stderr)  # the findings, not the failure
        members = {m["provider"]: m for m in doc["panel"]["members"]}
        self.assertEqual(members["gemini"]["status"], "failed")
        self.assertEqual(members["gemini"]["error"]["code"], "auth")
        self.assertEqual(doc["panel"]["answered"], 2)
        self.assertTrue(all(f["status"] == "reviewed" for f in doc["files"]), doc["files"])
        p = self.review(self.script(gemini=refused), "--quorum", "3", "--format", "json")
        doc = self.doc(p)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("2 of 3 panel members answered", doc["error"]["message"])
        for f in doc["files"]:
            self.assertEqual(f["status"], "not_sent")
            self.assertIn("fewer than the quorum of 3", f["why"])

    def test_every_format_carries_the_agreement(self):
        p = self.review(self.script(), "--format", "sarif")
        log = json.loads(p.stdout)
        errors = list(jsonschema.Draft4Validator(schema("sarif-schema-2.1.0.json"))
                      .iter_errors(log))
        self.assertEqual([e.message for e in errors], [])
        ranks = sorted(r.get("rank") for r in log["runs"][0]["results"])
        self.assertEqual(ranks, [33.3, 33.3, 66.7])
        p = self.review(self.script(), "--format", "rdjsonl")
        lines = p.stdout.splitlines()
        v = jsonschema.Draft4Validator(schema("reviewdog-Diagnostic.json"))
        for line in lines:
            self.assertEqual(list(v.iter_errors(json.loads(line))), [])
        self.assertTrue(any("Found by claude, codex (2 of 3" in json.loads(l)["message"]
                            for l in lines))
        p = self.review(self.script(), "--format", "gitlab")
        v = jsonschema.Draft4Validator(schema("gitlab-codeclimate.json"))
        for entry in json.loads(p.stdout):
            self.assertEqual(list(v.iter_errors(entry)), [])
        p = self.review(self.script(), "--format", "checkstyle")
        msgs = [e.get("message") for e in ET.fromstring(p.stdout).iter("error")]
        self.assertTrue(any("(2 of 3 panel members)" in m for m in msgs), msgs)
        p = self.review(self.script(), "--format", "github")
        self.assertIn("critical (2 of 3)", p.stdout)
        p = self.review(self.script())
        self.assertIn("panel: 3 of 3 members answered (quorum 1)", p.stdout)
        self.assertIn("Found by claude, codex (2 of 3 panel members)", p.stdout)


def main():
    harness.require_clis()
    unittest.main()


if __name__ == "__main__":
    main()
