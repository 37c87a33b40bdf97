"""Parallel edits in worktrees (issue 30) through each real CLI against the loopback mock:
eight edit jobs at -j 4 with --worktrees --commit, each writing its own file with the
CLI's own write tool (claude Write, codex apply_patch, gemini write_file), end as eight
branches each holding exactly its job's change, with the main checkout — dirty, with a
staged and an untracked file — byte-identical to before; two jobs that edit one file each
get their own version; SIGINT mid-batch leaves no worktree git lists as missing, and the
same command with --resume finishes the rest; `batch --merge --check` merges the branches
into one integration branch, leaving out (and naming) one that conflicts and one the check
refuses (issue 48). The mock serves each job its own steps
("match" on a marker in its prompt), so jobs can run in any order."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
MODEL = {"claude": [], "codex": [], "gemini": ["-m", "gemini-2.5-pro"]}


def mark(id):
    return "[job %s]" % id


def write_steps(id, path, content, then=None):
    """The job's CLI writes path with its write tool, then answers (or `then`)."""
    return [{"kind": "tool_write", "path": path, "content": content, "match": mark(id)},
            then or {"kind": "text", "text": "Wrote %s." % path, "match": mark(id)}]


def line(id, path):
    return json.dumps({"id": id, "allow_edits": True,
                       "prompt": "%s Write the file %s." % (mark(id), path)}) + "\n"


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
        self.trees = os.path.join(self.root.root, "trees")
        w = self.root.work
        genv = dict(self.root.base_env(), GIT_AUTHOR_NAME="e2e", GIT_COMMITTER_NAME="e2e",
                    GIT_AUTHOR_EMAIL="e2e@example.invalid",
                    GIT_COMMITTER_EMAIL="e2e@example.invalid")
        self.genv = genv
        with open(os.path.join(w, "shared.txt"), "w") as f:
            f.write("base\n")
        self.git("add", "shared.txt")
        self.git("commit", "-q", "-m", "shared")
        # A dirty main checkout: a modified, a staged and an untracked file.
        with open(os.path.join(w, "shared.txt"), "a") as f:
            f.write("mine, uncommitted\n")
        with open(os.path.join(w, "staged.txt"), "w") as f:
            f.write("staged\n")
        self.git("add", "staged.txt")
        with open(os.path.join(w, "untracked.txt"), "w") as f:
            f.write("untracked\n")
        self.base = self.git("rev-parse", "HEAD").strip()
        self.before = self.main_state()

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()

    def git(self, *args):
        return subprocess.run(["git", *args], cwd=self.root.work, env=self.genv, check=True,
                              capture_output=True, text=True).stdout

    def main_state(self):
        h = hashlib.sha256()
        for d, dirs, files in os.walk(self.root.work):
            dirs[:] = sorted(x for x in dirs if x != ".git")
            for f in sorted(files):
                p = os.path.join(d, f)
                h.update(p.encode() + b"\0")
                with open(p, "rb") as fh:
                    h.update(fh.read())
        for f in ("index", "HEAD"):
            with open(os.path.join(self.root.work, ".git", f), "rb") as fh:
                h.update(fh.read())
        return h.hexdigest(), self.git("status", "--porcelain")

    def changes(self, branch):
        names = self.git("diff", "--name-only", self.base, branch).split()
        return {n: self.git("show", "%s:%s" % (branch, n)) for n in names}

    def env(self):
        e = self.root.agentrun_env()
        e["AGENTRUN_WORKTREE_DIR"] = self.trees
        return e

    def batch_args(self, jobs_file, *extra):
        return [AGENTRUN, "batch", "-p", self.cli, *MODEL[self.cli], "-j", "4", "--worktrees",
                "--commit", "--timeout", "120s", *extra, jobs_file]

    def batch(self, text, *extra):
        path = os.path.join(self.root.root, "jobs.jsonl")
        with open(path, "w") as f:
            f.write(text)
        return subprocess.run(self.batch_args(path, *extra), cwd=self.root.work, env=self.env(),
                              capture_output=True, text=True, timeout=600)

    def records(self, text):
        return {r["id"]: r for r in (json.loads(l) for l in text.splitlines() if l.strip())}

    def test_eight_edit_jobs_four_at_a_time_each_on_its_branch(self):
        ids = ["e%d" % i for i in range(8)]
        self.mock.set_script({self.cli: [s for i, id in enumerate(ids)
                                         for s in write_steps(id, "f%d.txt" % i, "job %d\n" % i)]})
        p = self.batch("".join(line(id, "f%d.txt" % i) for i, id in enumerate(ids)))
        recs = self.records(p.stdout)
        self.assertEqual(p.returncode, 0, [r["error"] for r in recs.values()])
        self.assertEqual(sorted(recs), ids)
        for i, id in enumerate(ids):
            r = recs[id]
            with self.subTest(id=id):
                self.assertTrue(r["ok"], r["error"])
                self.assertEqual(r["files"], [{"path": "f%d.txt" % i, "op": "create",
                                               "from": None}])
                w = r["worktree"]
                self.assertEqual(w["base"], self.base)
                self.assertFalse(w["kept"])
                self.assertEqual(self.git("rev-parse", w["branch"]).strip(), w["commit"])
                self.assertEqual(self.changes(w["branch"]), {"f%d.txt" % i: "job %d\n" % i})
        self.assertEqual(len({r["worktree"]["branch"] for r in recs.values()}), 8)
        self.assertEqual(self.main_state(), self.before)
        self.assertNotIn("one at a time", p.stderr)
        self.assertNotIn("prunable", self.git("worktree", "list", "--porcelain"))
        self.assertEqual(self.git("worktree", "list", "--porcelain").count("worktree "), 1)
        self.assertEqual(harness.leftover_processes(self.root), [])

    def test_two_jobs_edit_one_file_each_branch_has_its_version(self):
        # Both write notes.txt (a new file: claude's Write replaces a file only after its
        # Read, which the mock does not script; tests/cli/test_worktrees.py changes a
        # tracked one). Each branch holds its own version; merging both conflicts.
        self.mock.set_script({self.cli: write_steps("s1", "notes.txt", "from s1\n")
                              + write_steps("s2", "notes.txt", "from s2\n")})
        p = self.batch(line("s1", "notes.txt") + line("s2", "notes.txt"))
        recs = self.records(p.stdout)
        self.assertEqual(p.returncode, 0, [r["error"] for r in recs.values()])
        for id in ("s1", "s2"):
            r = recs[id]
            self.assertTrue(r["ok"], r["error"])
            self.assertEqual(r["files"], [{"path": "notes.txt", "op": "create", "from": None}])
            self.assertEqual(self.changes(r["worktree"]["branch"]),
                             {"notes.txt": "from %s\n" % id})
        self.assertEqual(self.main_state(), self.before)

    def test_sigint_mid_batch_then_resume(self):
        hang = lambda id: {"kind": "hang", "text": "still writing", "match": mark(id)}  # noqa
        self.mock.set_script({self.cli: write_steps("q0", "q0.txt", "q0\n")
                              + write_steps("q1", "q1.txt", "q1\n")
                              + write_steps("h0", "h0.txt", "h0\n", hang("h0"))
                              + write_steps("h1", "h1.txt", "h1\n", hang("h1"))})
        jobs = os.path.join(self.root.root, "jobs.jsonl")
        out = os.path.join(self.root.root, "out.jsonl")
        with open(jobs, "w") as f:
            f.write(line("q0", "q0.txt") + line("q1", "q1.txt") + line("h0", "h0.txt")
                    + line("h1", "h1.txt"))
        args = self.batch_args(jobs, "--resume", "-o", out)
        proc = subprocess.Popen(args, cwd=self.root.work, env=self.env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

        def hanging():
            body = [self.mock.body(r) for r in self.mock.model_requests(self.cli)]
            return sum(mark(id).encode() in b for b in body for id in ("h0", "h1"))

        def finished():
            return os.path.exists(out) and len(open(out).read().splitlines()) >= 2

        deadline = time.time() + 240
        while (hanging() < 4 or not finished()) and time.time() < deadline \
                and proc.poll() is None:
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 130, err[-4000:])
        with open(out) as f:
            recs = self.records(f.read())
        self.assertTrue(recs["q0"]["ok"] and recs["q1"]["ok"], [r["error"] for r in recs.values()])
        for id in ("h0", "h1"):
            r = recs[id]
            self.assertEqual(r["error"]["code"], "interrupted", r["error"])
            # It had written its file: the worktree stays, with the file in it.
            self.assertTrue(r["worktree"]["kept"])
            self.assertTrue(os.path.isfile(os.path.join(r["worktree"]["path"], id + ".txt")))
        listing = self.git("worktree", "list", "--porcelain")
        self.assertNotIn("prunable", listing)
        for l in listing.splitlines():
            if l.startswith("worktree "):
                self.assertTrue(os.path.isdir(l[9:]), l)
        self.assertEqual(harness.leftover_processes(self.root), [])
        self.assertEqual(self.main_state(), self.before)

        # The same command again: the interrupted jobs run anew, on new branches.
        self.mock.set_script({self.cli: write_steps("h0", "h0.txt", "h0\n")
                              + write_steps("h1", "h1.txt", "h1\n")})
        p = subprocess.run(args, cwd=self.root.work, env=self.env(), capture_output=True,
                           text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-4000:])
        self.assertIn("2 skipped", p.stderr)
        with open(out) as f:
            final = self.records(f.read())
        self.assertEqual(sorted(final), ["h0", "h1", "q0", "q1"])
        for id, r in final.items():
            self.assertTrue(r["ok"], (id, r["error"]))
            self.assertEqual(self.changes(r["worktree"]["branch"]), {id + ".txt": id + "\n"})
        self.assertEqual(self.main_state(), self.before)


    def test_batch_merge_one_branch_one_version_each_left_out_named(self):
        # Issue 48: jobs write a.txt, b.txt, c.txt; another writes a.txt differently; another
        # writes a file the check refuses. `batch --merge --check` ends with one integration
        # branch holding one version of each of a, b and c, no conflict marker and not the
        # refused file; the other two are named with why; the checkout is untouched.
        jobs = [("ma", "a.txt", "A from ma\n"), ("mb", "b.txt", "B from mb\n"),
                ("mc", "c.txt", "C from mc\n"), ("md", "a.txt", "A from md\n"),
                ("mr", "refused.txt", "refused\n")]
        self.mock.set_script({self.cli: [s for id, path, text in jobs
                                         for s in write_steps(id, path, text)]})
        check = 'if test -e refused.txt; then echo "refused.txt is refused"; exit 3; fi'
        p = self.batch("".join(line(id, path) for id, path, _ in jobs), "--merge", "--check",
                       check)
        recs = self.records(p.stdout)
        self.assertEqual(sorted(recs), sorted(id for id, _, _ in jobs), p.stderr[-4000:])
        for r in recs.values():
            self.assertTrue(r["ok"], r["error"])
        self.assertEqual(p.returncode, 1, p.stderr[-4000:])
        branch = {id: r["worktree"]["branch"] for id, r in recs.items()}
        into = "agentrun/%s/merged" % branch["ma"].split("/")[1]
        self.assertIn("agentrun batch: 3 of 5 branches merged", p.stderr)
        err = p.stderr.splitlines()
        self.assertTrue(any(l.startswith("agentrun batch: conflict") and branch["md"] in l
                            and ("with " + branch["ma"]) in l and l.endswith(": a.txt")
                            for l in err), p.stderr)
        self.assertTrue(any(l.startswith("agentrun batch: check_failed") and branch["mr"] in l
                            and "exited 3" in l for l in err), p.stderr)
        self.assertIn("refused.txt is refused", p.stderr)
        names = self.git("ls-tree", "-r", "--name-only", into).split()
        self.assertNotIn("refused.txt", names)
        for path, text in (("a.txt", "A from ma\n"), ("b.txt", "B from mb\n"),
                           ("c.txt", "C from mc\n"), ("shared.txt", "base\n")):
            self.assertEqual(self.git("show", "%s:%s" % (into, path)), text)
        for n in names:
            self.assertNotIn("<<<<<<<", self.git("show", "%s:%s" % (into, n)))
        self.assertEqual(self.main_state(), self.before)
        self.assertEqual(self.git("rev-parse", "HEAD").strip(), self.base)
        for id, r in recs.items():
            self.assertEqual(self.git("rev-parse", branch[id]).strip(), r["worktree"]["commit"])
        self.assertEqual(self.git("worktree", "list", "--porcelain").count("worktree "), 1)
        self.assertEqual(harness.leftover_processes(self.root), [])


class TestClaude(Base, unittest.TestCase):
    cli = "claude"


class TestCodex(Base, unittest.TestCase):
    cli = "codex"


class TestGemini(Base, unittest.TestCase):
    cli = "gemini"


if __name__ == "__main__":
    harness.require_clis()
    unittest.main()
