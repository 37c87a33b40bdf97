"""Untrusted text stays data (issue 56), with the real claude, codex and gemini against the
loopback mock: words of a prompt that a CLI would act on before its model sees them -- a file
mention (`@path`), a slash command, a skill mention (`$name`) -- reach the model as text, and
nothing they name is read; and agentrun's own secrets never reach a CLI's environment.

The repro of the issue: a staged line `// config: @/abs/path/secret.txt` reviewed with
`review -p claude` made claude 2.1.337 read the file and send it to the model. Here no request
the mock sees may hold the content of any file a mention names.
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
CLEAN = {"passed": True, "summary": "Nothing to say.", "issues": []}
OUTSIDE = "TOPSECRET-OUTSIDE-1f3a"   # a file outside the checkout
INSIDE = "TOPSECRET-INSIDE-77c2"     # an untracked file of the checkout, not under review
SKILL = "TOPSECRET-USER-SKILL-5d0e"  # the body of a skill of the user's (codex)


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
        self.outside = os.path.join(self.root.root, "secret.txt")
        with open(self.outside, "w") as f:
            f.write(OUTSIDE + "\n")
        with open(os.path.join(self.root.work, "notes.txt"), "w") as f:
            f.write(INSIDE + "\n")
        self.n0 = len(self.mock.requests())

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()

    def bodies(self):
        return [self.mock.body(e) for e in self.mock.requests()[self.n0:]
                if e["api"] == self.cli and e["method"] == "POST"]

    def agentrun(self, *args, steps, env=None, stdin=None):
        self.mock.set_script({self.cli: steps})
        e = self.root.agentrun_env()
        e.update(env or {})
        return subprocess.run([AGENTRUN, *args], cwd=self.root.work, env=e, input=stdin,
                              capture_output=True, text=True, timeout=240)

    def stage(self, name, text):
        with open(os.path.join(self.root.work, name), "w") as f:
            f.write(text)
        subprocess.run(["git", "add", name], cwd=self.root.work, env=self.root.base_env(),
                       check=True)

    def assert_nothing_read(self, marker_texts=(OUTSIDE, INSIDE)):
        bodies = self.bodies()
        self.assertTrue(bodies, "no model request")
        for b in bodies:
            for m in marker_texts:
                self.assertNotIn(m.encode(), b, "a file a mention names reached the model")

    def answer(self):
        return [{"kind": "json", "value": CLEAN}]

    def test_the_reviewed_file_mention_of_the_issue_reads_nothing(self):
        # The exact repro: the line is in the staged diff, the file outside the checkout.
        self.stage("app.c", "int x;\n// config: @%s\n" % self.outside)
        p = self.agentrun("review", "--staged", "-p", self.cli, "--format", "json",
                          steps=self.answer())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_nothing_read()
        # The model got the line itself, as text.
        self.assertTrue(any(("@" + self.outside).encode() in b for b in self.bodies()))

    def test_mentions_of_the_checkouts_own_files_read_nothing_in_a_review(self):
        # gemini reads what @path names inside its workspace, a folder (@./) whole: the
        # untracked notes.txt is no part of the change under review.
        self.stage("app.c", "int x; /* see @notes.txt and @./ and a@notes.txt */\n")
        p = self.agentrun("review", "--staged", "-p", self.cli, "--format", "json",
                          steps=self.answer())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_nothing_read()

    def test_a_run_prompt_is_data_in_every_posture(self):
        prompt = "/help see @%s and @notes.txt\n" % self.outside
        for args in (["--no-tools"], [], ["--allow-edits"]):
            with self.subTest(args=args):
                self.n0 = len(self.mock.requests())
                p = self.agentrun("run", "-p", self.cli, "--format", "json", *args, "-f", "-",
                                  steps=[{"kind": "text", "text": "ok"}], stdin=prompt)
                self.assertEqual(p.returncode, 0, p.stderr)
                # A slash command would have been answered without the model, or replaced.
                self.assertTrue(any(b"/help see @" in b for b in self.bodies()))
                # gemini's read and edit calls run in the checkout, where @notes.txt names a
                # file its own read tools may read anyway (docs/security.md): there only the
                # file outside is held to never being read.
                gemini_tools = self.cli == "gemini" and args != ["--no-tools"]
                self.assert_nothing_read((OUTSIDE,) if gemini_tools else (OUTSIDE, INSIDE))


class TestClaude(Base, unittest.TestCase):
    cli = "claude"

    def answer(self):
        return [{"kind": "structured", "value": CLEAN}]


class TestCodex(Base, unittest.TestCase):
    cli = "codex"

    def test_a_skill_a_reviewed_line_names_is_not_pasted_in(self):
        # codex pastes the body of a skill that "$name" names; a text call has the user's
        # skills off, as the checkout's.
        d = os.path.join(self.root.codex_home, "skills", "deploy-helper")
        os.makedirs(d)
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write("---\nname: deploy-helper\ndescription: deploys\n---\n%s\n" % SKILL)
        self.stage("app.c", "int x; /* run $deploy-helper and [$deploy-helper](%s) */\n" %
                   os.path.join(d, "SKILL.md"))
        p = self.agentrun("review", "--staged", "-p", "codex", "--format", "json",
                          steps=self.answer())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_nothing_read((SKILL,))

    def test_agentruns_own_secrets_never_reach_an_edit_runs_shell(self):
        # The cache's MAC key in agentrun's environment; codex's shell prints its own.
        key = "cachekey-" + "9" * 32
        p = self.agentrun("run", "-p", "codex", "--allow-edits", "--format", "json",
                          "print the environment",
                          steps=[{"kind": "shell", "command": "env | sort"},
                                 {"kind": "text", "text": "done"}],
                          env={"AGENTRUN_CACHE_KEY": key, "AGENTRUN_TRUST_PROJECT": "0",
                               "AGENTRUN_FUTURE_SECRET": "future-" + "7" * 20})
        self.assertEqual(p.returncode, 0, p.stderr)
        bodies = self.bodies()
        self.assertEqual(len(bodies), 2, p.stderr)
        # The shell ran, and its output reached the model: with agentrun's passed variables,
        # without the withheld ones.
        self.assertIn(b"AGENTRUN_CODEX_BIN=", bodies[1])
        for b in bodies:
            self.assertNotIn(key.encode(), b)
            self.assertNotIn(b"AGENTRUN_CACHE_KEY", b)
            self.assertNotIn(b"AGENTRUN_TRUST_PROJECT", b)
            self.assertNotIn(b"future-" + b"7" * 20, b)


class TestGemini(Base, unittest.TestCase):
    cli = "gemini"


if __name__ == "__main__":
    harness.require_clis()
    unittest.main()
