"""--record and --replay with the real claude, codex and gemini CLIs against the loopback
mock (issue 19): runs recorded against the real CLIs replay with the CLIs removed from
PATH (and no AGENTRUN_*_BIN) to the same RunResult, apart from durations; an API failure
replays as the same failure; no cassette holds the mock's API keys."""
import glob
import json
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")

REVIEW = {"passed": False, "summary": "Dereferences NULL.",
          "issues": [{"file": "app.c", "line": 3, "severity": "high",
                      "message": "p is NULL here", "suggestion": "check p"}]}


def comparable(doc, secrets=()):
    """What a replay must reproduce: everything but durations (and the random names of
    codex's schema and instructions files and claude's system prompt file). A secret the CLI
    printed (codex repeats a rejected API key) was
    redacted from the cassette, so the replay shows [REDACTED] where the live run had it."""
    text = json.dumps(doc)
    for s in secrets:
        text = text.replace(s, "[REDACTED]")
    doc = json.loads(text)
    doc.pop("duration_ms", None)
    for c in doc.get("calls", []):
        c.pop("duration_ms", None)
        c["argv"] = [re.sub(r"agentrun-(schema|instructions|system)-[\w-]+", r"agentrun-\1-X", a)
                     for a in c["argv"]]
    return doc


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
        with open(os.path.join(self.root.work, "app.c"), "w") as f:
            f.write("int main(void)\n{\n    char *p = 0;\n    return *p;\n}\n")
        self.cassettes = os.path.join(self.root.root, "cassettes")

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.check_no_secret()
        self.root.cleanup()

    def env(self, with_clis):
        """agentrun's environment with the CLIs found on PATH (recording) or nowhere."""
        e = self.root.agentrun_env()
        for cli in harness.CLIS:
            e.pop("AGENTRUN_%s_BIN" % cli.upper(), None)
        if not with_clis:
            e["PATH"] = ":".join(p for p in e["PATH"].split(":") if p != harness.bin_dir())
        return e

    def agentrun(self, args, with_clis):
        return subprocess.run([AGENTRUN, *args, "-p", self.cli, "--timeout", "90s"],
                              cwd=self.root.work, env=self.env(with_clis),
                              capture_output=True, text=True, timeout=180)

    def doc(self, p):
        try:
            return json.loads(p.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"not JSON: {p.stdout!r}\nstderr: {p.stderr}")

    def record_then_replay(self, steps, *args):
        self.mock.set_script({self.cli: steps})
        live = self.agentrun([*args, "--record", self.cassettes], True)
        n = len(self.mock.model_requests(self.cli))
        self.assertGreater(n, 0, live.stderr)
        self.mock.set_script({self.cli: []})
        replay = self.agentrun([*args, "--replay", self.cassettes], False)
        self.assertEqual(len(self.mock.model_requests(self.cli)), n, "replay reached the API")
        self.assertEqual(replay.returncode, live.returncode, replay.stderr)
        a, b = self.doc(live), self.doc(replay)
        self.assertEqual(comparable(a, self.secrets()), comparable(b))
        # Without --replay, the same command finds no CLI: the replay really served it.
        p = self.agentrun(list(args), False)
        self.assertEqual(p.returncode, 4, p.stderr)
        return a

    def secrets(self):
        """The API keys the harness gives the CLIs."""
        secrets = set()
        for cli in harness.CLIS:
            for k, v in self.root.env(cli).items():
                if "KEY" in k or "TOKEN" in k:
                    secrets.add(v)
        return sorted(secrets, key=len, reverse=True)

    def check_no_secret(self):
        secrets = self.secrets()
        self.assertTrue(secrets)
        for f in glob.glob(os.path.join(self.cassettes, "*.json")):
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            for s in secrets:
                self.assertNotIn(s, text, f"{f} holds a secret")

    def test_a_run_replays_to_the_same_run_result(self):
        doc = self.record_then_replay([{"kind": "text", "text": "Hello from the mock."}],
                                      "run", "--format", "json", "Say hello")
        self.assertTrue(doc["ok"])
        self.assertIn("Hello from the mock.", doc["output"])
        self.assertGreater(doc["tokens"]["output"], 0)
        self.assertEqual(len(glob.glob(os.path.join(self.cassettes, "*.json"))), 1)

    def test_a_review_replays_to_the_same_verdict(self):
        doc = self.record_then_replay([self.answer_step(REVIEW)], "review", "--format", "json")
        self.assertEqual([(i["file"], i["line"]) for i in doc["issues"]], [("app.c", 3)])

    def test_an_auth_failure_replays_as_the_same_failure(self):
        doc = self.record_then_replay([{"kind": "error", "status": 401}] * 4,
                                      "run", "--format", "json", "Say hello")
        self.assertEqual(doc["error"]["code"], "auth")

    def answer_step(self, value):
        return {"kind": "json", "value": value}


class TestClaude(Base, unittest.TestCase):
    cli = "claude"

    def answer_step(self, value):
        return {"kind": "structured", "value": value}


class TestCodex(Base, unittest.TestCase):
    cli = "codex"


class TestGemini(Base, unittest.TestCase):
    cli = "gemini"


def main():
    harness.require_clis()
    unittest.main()


if __name__ == "__main__":
    main()
