"""The posture of each call (issue 13, DESIGN §4b) with the fake CLI: agentrun decides from
the command and its flags which tools a call gets and whether the checkout's settings,
hooks, MCP servers and context files load; the RunResult records it."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import sys
import unittest

try:
    import tomllib  # Python 3.11+
except ImportError:  # pragma: no cover
    tomllib = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox  # noqa: E402

REVIEW = "```json\n" + json.dumps({"passed": True, "summary": "ok", "issues": []}) + "\n```"


def doc(p):
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"stdout is not JSON: {p.stdout!r}\nstderr: {p.stderr}")


def posture(tools, trusted=False):
    return {"tools": tools, "project_config": trusted, "context_files": trusted}


def pair(argv, a, b):
    return any(argv[i] == a and argv[i + 1] == b for i in range(len(argv) - 1))


class TestRun(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__()

    def run_json(self, *args, env=None):
        self.sb.answers("claude", ["hello"])
        p = self.sb.run("run", "--format", "json", *args, "say hi", provider="claude", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return doc(p)

    def test_run_is_a_read_call_that_never_loads_the_checkout(self):
        r = self.run_json()
        self.assertEqual(r["posture"], posture("read"))
        self.assertEqual(r["calls"][0]["posture"], posture("read"))
        argv = self.sb.calls()[0]["argv"]
        self.assertTrue(pair(argv, "--tools", "Read,Grep,Glob"), argv)
        self.assertTrue(pair(argv, "--setting-sources", "user"), argv)

    def test_allow_edits_is_an_edit_call(self):
        r = self.run_json("--allow-edits")
        self.assertEqual(r["posture"], posture("edit"))
        self.assertTrue(pair(self.sb.calls()[0]["argv"], "--setting-sources", "user"))

    def test_no_tools_is_a_text_call(self):
        r = self.run_json("--no-tools")
        self.assertEqual(r["posture"], posture("none"))
        argv = self.sb.calls()[0]["argv"]
        self.assertTrue(pair(argv, "--tools", ""), argv)
        self.assertIn("--strict-mcp-config", argv)
        # run keeps the session: the user may --resume it.
        self.assertNotIn("--no-session-persistence", argv)

    def test_no_tools_and_allow_edits_exclude_each_other(self):
        p = self.sb.run("run", "--no-tools", "--allow-edits", "hi", provider="claude")
        self.assertEqual(p.returncode, 2)
        # The library's rule, named by the flag that asks for edits.
        self.assertIn("--allow-edits: a run with no tools cannot edit files", p.stderr)

    def test_trust_project_flag_and_environment(self):
        for args, env in ((["--trust-project"], None), ([], {"AGENTRUN_TRUST_PROJECT": "1"})):
            with self.subTest(args=args, env=env):
                before = len(self.sb.calls())
                r = self.run_json(*args, env=env)
                self.assertEqual(r["posture"], posture("read", True))
                self.assertNotIn("--setting-sources", self.sb.calls()[before]["argv"])
        # Only "1" trusts: a stray value does not.
        r = self.run_json(env={"AGENTRUN_TRUST_PROJECT": "yes"})
        self.assertEqual(r["posture"], posture("read"))

    def test_repair_call_is_a_text_call(self):
        self.sb.answers("claude", ["no json here", '{"a": 1}'])
        p = self.sb.run("run", "--json", "--format", "json", "give json", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = doc(p)
        self.assertEqual([c["posture"]["tools"] for c in r["calls"]], ["read", "none"])
        self.assertEqual(r["posture"], posture("read"))
        self.assertTrue(pair(self.sb.calls()[1]["argv"], "--tools", ""))
        self.assertIn("--no-session-persistence", self.sb.calls()[1]["argv"])


class TestTextCommands(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()
        self.sb.write("app.c", "int x;\n")

    def tearDown(self):
        self.sb.__exit__()

    def test_review_is_a_text_call_and_context_tools_grant_reading(self):
        for args, tools in (([], ""), (["--context-tools"], "Read,Grep,Glob")):
            with self.subTest(args=args):
                before = len(self.sb.calls())
                self.sb.answers("claude", [REVIEW])
                p = self.sb.run("review", "--format", "json", *args, provider="claude")
                self.assertEqual(p.returncode, 0, p.stderr)
                r = doc(p)
                self.assertEqual(r["calls"][0]["posture"],
                                 posture("none" if not tools else "read"))
                argv = self.sb.calls()[before]["argv"]
                self.assertTrue(pair(argv, "--tools", tools), argv)
                self.assertIn("--no-session-persistence", argv)

    def test_batch_job_key_trust_project(self):
        jobs = "".join(json.dumps(j) + "\n" for j in (
            {"id": "a", "prompt": "p"},
            {"id": "b", "prompt": "p", "trust_project": True}))
        self.sb.answers("claude", ["x", "y"])
        p = self.sb.run("batch", "-j", "1", "-", input=jobs, provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = {r["id"]: r for r in map(json.loads, p.stdout.splitlines())}
        self.assertEqual(out["a"]["posture"], posture("read"))
        self.assertEqual(out["b"]["posture"], posture("read", True))
        p = self.sb.run("batch", "-", input='{"id": "c", "prompt": "p", "trust_project": 1}\n',
                        provider="claude")
        self.assertIn("'trust_project' must be true or false", p.stdout)


@unittest.skipUnless(tomllib, "needs Python 3.11's tomllib")
class TestCodexConfigStrings(unittest.TestCase):
    """codex reads each -c value as TOML: a path agentrun writes there is one string, whatever
    its bytes, so a folder's name can never end it early and add keys of its own."""

    def test_a_name_with_backslashes_and_quotes_stays_one_toml_string(self):
        with Sandbox() as sb:
            # Unescaped backslashes would make each \" of the name close the string.
            name = 'a\\"={trust_level=\\"trusted\\"},\\"b'
            sub = os.path.join(sb.work, name)
            sb.write(os.path.join(name, ".codex", "skills", "s", "SKILL.md"),
                     "---\nname: s\ndescription: d\n---\nbody\n")
            sb.answers("codex", ["hello"])
            p = sb.run("run", "-C", sub, "--format", "json", "say hi", provider="codex")
            self.assertEqual(p.returncode, 0, p.stderr)
            argv = sb.calls()[0]["argv"]
            values = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "-c"]
            projects = [v for v in values if v.startswith("projects=")]
            self.assertEqual(len(projects), 1, values)
            top, real_sub = os.path.realpath(sb.work), os.path.realpath(sub)
            self.assertEqual(tomllib.loads(projects[0])["projects"],
                             {real_sub: {"trust_level": "untrusted"},
                              top: {"trust_level": "untrusted"}})
            skills = [v for v in values if v.startswith("skills.config=")]
            self.assertEqual(len(skills), 1, values)
            self.assertEqual(tomllib.loads(skills[0])["skills"]["config"],
                             [{"path": os.path.join(real_sub, ".codex", "skills", "s", "SKILL.md"),
                               "enabled": False}])


if __name__ == "__main__":
    unittest.main()
