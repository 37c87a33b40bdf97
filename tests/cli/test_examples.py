"""The workflow scripts in docs/examples/ run as users would run them (bash/sh + jq),
against the fake CLI: branching on a RunResult, a pre-commit review hook, a resumable
batch, a fan-out in worktrees merged where it passes a check."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, SOURCE_ROOT, Sandbox  # noqa: E402

EXAMPLES = os.path.join(os.path.abspath(SOURCE_ROOT), "docs", "examples")


@unittest.skipUnless(shutil.which("jq"), "the examples need jq")
class Examples(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()
        # agentrun on PATH, as after an install.
        bindir = os.path.join(self.sb.root, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.abspath(AGENTRUN), os.path.join(bindir, "agentrun"))
        self.sb.env["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
        self.sb.env["AGENTRUN_PROVIDER"] = "codex"

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def script(self, name, *args, cwd=None):
        import subprocess
        return subprocess.run([os.path.join(EXAMPLES, name), *args], cwd=cwd or self.sb.work,
                              env=self.sb.env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)

    def test_branch_on_result(self):
        self.sb.answers("codex", ['{"risk": "high", "reason": "ABI break"}'])
        p = self.script("branch-on-result.sh", "Risky?")
        self.assertEqual(p.returncode, 10, p.stderr)
        self.assertIn("risk: high", p.stdout)
        os.unlink(self.sb.state)
        self.sb.answers("codex", ['{"risk": "low", "reason": "patch release"}'])
        p = self.script("branch-on-result.sh", "Risky?")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("risk: low", p.stdout)
        os.unlink(self.sb.state)
        self.sb.answers("codex", ["I would rather not say.", "Still no."])
        p = self.script("branch-on-result.sh", "Risky?")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("the answer was unusable (no_json)", p.stderr)
        # No CLI at all: the RunResult still says why.
        self.sb.env["AGENTRUN_CODEX_BIN"] = os.path.join(self.sb.root, "no-such-codex")
        p = self.script("branch-on-result.sh", "Risky?")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("agentrun failed: not_found", p.stderr)

    def test_pre_commit_hook_blocks_a_high_finding_and_lets_a_clean_change_through(self):
        hook = os.path.join(self.sb.work, ".git", "hooks", "pre-commit")
        shutil.copy(os.path.join(EXAMPLES, "pre-commit-review.sh"), hook)
        self.sb.write("app.c", "int main(void) { char *p = 0; return *p; }\n")
        self.sb.git("add", "app.c")
        finding = {"passed": False, "summary": "crash", "issues": [
            {"file": "app.c", "line": 1, "severity": "high", "message": "NULL dereference"}]}
        self.sb.answers("codex", ["```json\n" + json.dumps(finding) + "\n```"])
        import subprocess
        commit = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit",
                  "-q", "-m", "app"]
        p = subprocess.run(commit, cwd=self.sb.work, env=self.sb.env, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("app.c:1: [high] NULL dereference", p.stderr)
        self.assertEqual(self.sb.git("rev-list", "--count", "HEAD").strip(), "1")
        os.unlink(self.sb.state)
        ok = {"passed": True, "summary": "fine", "issues": []}
        self.sb.answers("codex", ["```json\n" + json.dumps(ok) + "\n```"])
        p = subprocess.run(commit, cwd=self.sb.work, env=self.sb.env, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.sb.git("rev-list", "--count", "HEAD").strip(), "2")

    def test_pre_commit_hook_blocks_when_the_review_cannot_run(self):
        self.sb.write("app.c", "int x;\n")
        self.sb.git("add", "app.c")
        self.sb.env["AGENTRUN_CODEX_BIN"] = os.path.join(self.sb.root, "no-such-codex")
        p = self.script("pre-commit-review.sh")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("could not run (exit 4)", p.stderr)

    def test_resumable_batch_of_20_finishes_on_the_second_run(self):
        questions = self.sb.write("questions.txt",
                                  "".join(f"Question {i}?\n" for i in range(1, 21)),
                                  base=self.sb.root)
        results = os.path.join(self.sb.root, "results.jsonl")
        self.sb.answers("codex", ["an answer"])
        for n in (3, 11):  # two calls fail on the first run
            self.sb.env[f"FAKE_CLI_EXIT_{n}"] = "1"
            self.sb.env[f"FAKE_CLI_FIXTURE_{n}"] = "/dev/null"
        p = self.script("resumable-batch.sh", questions, results)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("18 of 20 answered", p.stderr)
        p = self.script("resumable-batch.sh", questions, results)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("20 of 20 answered", p.stderr)
        with open(results, encoding="utf-8") as f:
            recs = [json.loads(l) for l in f]
        self.assertEqual(sorted(r["id"] for r in recs), sorted(f"q{i}" for i in range(1, 21)))
        self.assertTrue(all(r["ok"] for r in recs))
        self.assertEqual(len(self.sb.calls()), 22)  # 20 jobs + the 2 retried ones

    def test_resumable_batch_ids_are_line_numbers_blank_lines_counted(self):
        questions = self.sb.write("questions.txt", "first?\n\nthird?\n\n\nsixth?",
                                  base=self.sb.root)
        results = os.path.join(self.sb.root, "results.jsonl")
        self.sb.answers("codex", ["an answer"])
        p = self.script("resumable-batch.sh", questions, results)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(results, encoding="utf-8") as f:
            ids = {json.loads(l)["id"]: json.loads(l) for l in f}
        self.assertEqual(sorted(ids), ["q1", "q3", "q6"])
        by_prompt = {c["stdin"].strip(): c for c in self.sb.calls()}
        self.assertEqual(sorted(by_prompt), ["first?", "sixth?", "third?"])


    def test_fan_out_in_worktrees_merges_what_passes_the_check(self):
        # The fake CLI writes what each task names: t2's change fails the check, t4's
        # conflicts with t1's, t5 changes nothing.
        tasks = self.sb.write("tasks.txt", "WRITE a.txt=good a\nWRITE b.txt=bad b\n"
                              "WRITE c.txt=good c\nWRITE a.txt=good, but other\nnothing\n",
                              base=self.sb.root)
        self.sb.answers("claude", ["done"])
        self.sb.env.update(AGENTRUN_PROVIDER="claude", FAKE_CLI_WRITE_FROM_STDIN="1",
                           AGENTRUN_WORKTREE_DIR=os.path.join(self.sb.root, "trees"),
                           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                           GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
        self.sb.write("untracked.txt", "mine\n")
        p = self.script("fan-out-and-merge.sh", tasks, "! grep -q bad ./*.txt")
        self.assertEqual(p.returncode, 1, p.stderr)
        out = p.stdout.splitlines()
        self.assertEqual(sorted(l.split()[0] for l in out), ["check", "conflict:", "merged",
                                                             "merged"], p.stdout)
        self.assertTrue(any(l.startswith("merged ") and l.endswith("/t1") for l in out), out)
        self.assertTrue(any(l.startswith("merged ") and l.endswith("/t3") for l in out), out)
        self.assertTrue(any(l.startswith("check failed") and "/t2 " in l for l in out), out)
        self.assertIn("2 merged, 2 left, 0 jobs failed", p.stderr)
        # The current branch holds t1's and t3's changes, nothing else; the user's own
        # untracked file is still there; no worktree is left but the main one.
        with open(os.path.join(self.sb.work, "a.txt")) as f:
            self.assertEqual(f.read(), "good a")
        with open(os.path.join(self.sb.work, "c.txt")) as f:
            self.assertEqual(f.read(), "good c")
        self.assertFalse(os.path.exists(os.path.join(self.sb.work, "b.txt")))
        self.assertTrue(os.path.exists(os.path.join(self.sb.work, "untracked.txt")))
        self.assertEqual(self.sb.git("status", "--porcelain"), "?? untracked.txt\n")
        self.assertEqual(self.sb.git("worktree", "list").count("\n"), 1)


if __name__ == "__main__":
    unittest.main()
