"""The review example of docs/examples/review.c (docs/library.md) links
against libagentrun, reviews on its own libuv loop, and cancels on Ctrl-C; with
--format it writes every format of `agentrun review` through ar_review_write(),
byte for byte what the command prints for the same review."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox  # noqa: E402

EXAMPLE = os.environ.get("REVIEW_EXAMPLE", "")

FINDING = json.dumps({"passed": False, "summary": "one bug", "issues": [
    {"file": "app.c", "line": 2, "severity": "high", "message": "off by one"}]})

# A review that shows every part of every format: findings of several severities, one
# with a code suggestion, one about the whole file, one with no place in the
# repository, model text with a terminal escape, a binary file not reviewed (it fails
# the review) and a lockfile left out by the default excludes.
RICH = json.dumps({"passed": False, "summary": "two bugs\n\x1b[2Jand a remark", "issues": [
    {"file": "app.c", "line": 2, "severity": "high", "message": "off by one",
     "suggestion": "Use <=:\n```c\nint c = n;\n```"},
    {"file": "app.c", "severity": "info", "message": "a remark, with: a colon"},
    {"file": "../../etc/passwd", "line": 1, "severity": "critical",
     "message": "outside the repository"},
    {"file": "app.c", "line": 1, "severity": "medium", "message": "100% \"quoted\" & <tagged>"}]})

FORMATS = ["text", "json", "sarif", "github", "rdjsonl", "gitlab", "checkstyle"]


def same_run(v):
    """The document without what two runs never share: the wall-clock times and the
    names of the temporary files in the calls' argv."""
    if isinstance(v, dict):
        return {k: same_run(x) for k, x in v.items() if k != "duration_ms"}
    if isinstance(v, list):
        return [same_run(x) for x in v]
    if isinstance(v, str):
        return re.sub(r"(/agentrun-[a-z]+-)[0-9]+-[A-Za-z0-9]+", r"\1TEMP", v)
    return v


class ReviewExample(unittest.TestCase):
    def change(self, sb):
        sb.write("app.c", "int a;\nint b;\n")
        sb.git("add", "app.c")
        sb.git("commit", "-q", "-m", "app")
        sb.write("app.c", "int a;\nint c;\n")

    def test_the_working_tree_review_prints_the_finding_and_fails(self):
        with Sandbox() as sb:
            self.change(sb)
            sb.answers("codex", [FINDING])
            p = subprocess.run([EXAMPLE], cwd=sb.work, env=dict(sb.env, AGENTRUN_PROVIDER="codex"),
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("app.c:2: high: off by one\n", p.stdout)
            self.assertIn("reviewing the working tree: 1 file(s) in 1 chunk(s)", p.stderr)
            self.assertIn("@@", sb.calls()[0]["stdin"])

    def test_every_format_is_what_the_command_prints(self):
        for fmt in FORMATS:
            with self.subTest(format=fmt), Sandbox() as sb:
                self.change(sb)
                with open(os.path.join(sb.work, "logo.bin"), "wb") as f:
                    f.write(b"\x00\x01\x02binary\x00")
                sb.write("package-lock.json", "{}\n")
                sb.answers("codex", [RICH, RICH])
                env = dict(sb.env, AGENTRUN_PROVIDER="codex")
                lib = subprocess.run([EXAMPLE, "--format", fmt], cwd=sb.work, env=env,
                                     capture_output=True, timeout=60)
                cli = sb.run("review", "--format", fmt, "--fail-on", "medium")
                self.assertEqual(len(sb.calls()), 2, "each made its call")
                self.assertEqual(lib.returncode, 1, lib.stderr)
                self.assertEqual(cli.returncode, 1, cli.stderr)
                out = cli.stdout.encode()
                self.assertIn(b"logo.bin", out)
                if fmt in ("json", "sarif", "gitlab"):
                    self.assertEqual(same_run(json.loads(lib.stdout)),
                                     same_run(json.loads(out)))
                else:
                    self.assertEqual(lib.stdout, out)
                if fmt in ("text", "github"):
                    self.assertNotIn(b"\x1b", lib.stdout)
                    self.assertIn(b"^[[2J", lib.stdout)

    def test_an_unknown_format_is_refused(self):
        p = subprocess.run([EXAMPLE, "--format", "xml"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no format 'xml'", p.stderr)

    def test_a_diff_on_stdin_with_nothing_in_it_passes_without_a_call(self):
        with Sandbox() as sb:
            p = subprocess.run([EXAMPLE, "-"], cwd=sb.work, env=sb.env, input="",
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, "nothing to review: the diff is empty\nnothing to review\n")
            self.assertEqual(sb.calls(), [])

    def test_an_unknown_revision_fails_to_start(self):
        with Sandbox() as sb:
            p = subprocess.run([EXAMPLE, "nosuchrev"], cwd=sb.work, env=sb.env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("unknown revision 'nosuchrev'", p.stderr)

    def test_a_file_named_like_a_revision_is_never_read_as_the_diff(self):
        # A change can plant a file named like the revision a CI job names. The library's
        # `rev` is a revision, never a file of the process's directory (issue 50).
        planted = ("diff --git a/evil.c b/evil.c\n--- a/evil.c\n+++ b/evil.c\n"
                   "@@ -1 +1 @@\n-x\n+planted\n")
        with Sandbox() as sb:
            sb.write("release-1.0", planted)
            sb.write("main", planted)
            sb.git("add", "release-1.0", "main")
            sb.git("commit", "-q", "-m", "planted")
            self.change(sb)
            sb.answers("codex", [FINDING])
            env = dict(sb.env, AGENTRUN_PROVIDER="codex")
            # A file and no revision: an unknown revision, no call.
            p = subprocess.run([EXAMPLE, "release-1.0"], cwd=sb.work, env=env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("unknown revision 'release-1.0'", p.stderr)
            self.assertEqual(sb.calls(), [])
            # A file and a revision: refused as ambiguous, or the revision; never the file.
            p = subprocess.run([EXAMPLE, "main"], cwd=sb.work, env=env,
                               capture_output=True, text=True, timeout=60)
            if p.returncode == 2:
                self.assertIn("ambiguous", p.stderr)
                self.assertEqual(sb.calls(), [])
            else:
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("reviewing main: 1 file(s)", p.stderr)
                self.assertEqual(len(sb.calls()), 1)
                self.assertIn("+++ b/app.c", sb.calls()[0]["stdin"])
                self.assertNotIn("evil.c", sb.calls()[0]["stdin"])

    def test_ctrl_c_cancels_the_calls(self):
        with Sandbox() as sb:
            self.change(sb)
            sb.answers("codex", [FINDING])
            env = dict(sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1")
            p = subprocess.Popen([EXAMPLE], cwd=sb.work, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            deadline = time.time() + 30
            while not sb.calls() and time.time() < deadline:
                time.sleep(0.05)
            self.assertTrue(sb.calls(), "the call never started")
            pid = sb.calls()[0]["pid"]
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 130, err)
            self.assertIn("review failed: interrupted", err)
            with self.assertRaises(ProcessLookupError):
                os.kill(pid, 0)


if __name__ == "__main__":
    unittest.main()
