"""Runs and batch jobs in a git worktree of their own (issue 30, docs/worktrees.md), with
the fake CLI, which writes the files its prompt names ("WRITE f.txt=text"): each job's
change lands on its own branch, edit jobs of one repository run side by side, the main
checkout is never touched (dirty or not), no job id or revision escapes the worktree
folder or passes for an option, an interrupted or killed batch leaves nothing that a
rerun trips over, and `agentrun worktrees list|prune` sees and removes what agentrun
made and nothing else."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, SOURCE_ROOT, Sandbox, alive, claude_stream  # noqa: E402


def records(text):
    return [json.loads(l) for l in text.splitlines() if l.strip()]


def job(id, prompt, **kw):
    return json.dumps(dict({"id": id, "prompt": prompt, "allow_edits": True}, **kw)) + "\n"


class Base(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()
        self.sb.answers("claude", ["done"])
        self.trees = os.path.join(self.sb.root, "trees")
        self.sb.env.update(AGENTRUN_WORKTREE_DIR=self.trees, FAKE_CLI_WRITE_FROM_STDIN="1")
        # A dirty main checkout: a modified file, a staged one and an untracked one.
        self.sb.write("tracked.txt", "one\n")
        self.sb.write("staged.txt", "s\n")
        self.sb.git("add", "tracked.txt", "staged.txt")
        self.sb.git("commit", "-q", "-m", "two files")
        self.sb.write("tracked.txt", "one\nmine, uncommitted\n")
        self.sb.write("staged.txt", "s\nstaged\n")
        self.sb.git("add", "staged.txt")
        self.sb.write("untracked.txt", "mine\n")
        self.base = self.sb.git("rev-parse", "HEAD").strip()
        self.main_before = self.main_state()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def main_state(self):
        """Every byte of the main checkout (its files, index and HEAD), not .git's refs."""
        h = hashlib.sha256()
        for d, dirs, files in os.walk(self.sb.work):
            dirs[:] = sorted(x for x in dirs if x != ".git")
            for f in sorted(files):
                p = os.path.join(d, f)
                h.update(p.encode() + b"\0")
                with open(p, "rb") as fh:
                    h.update(fh.read())
        for f in ("index", "HEAD"):
            with open(os.path.join(self.sb.work, ".git", f), "rb") as fh:
                h.update(fh.read())
        return h.hexdigest(), self.sb.git("status", "--porcelain")

    def assert_main_untouched(self):
        self.assertEqual(self.main_state(), self.main_before)

    def batch(self, text, *args, timeout=60):
        path = self.sb.write("jobs.jsonl", text, base=self.sb.root)
        return self.sb.run("batch", *args, path, provider="claude", timeout=timeout)

    def changes(self, branch, base=None):
        """What branch holds beyond base (default: the setup's HEAD): {path: content}."""
        names = self.sb.git("diff", "--name-only", base or self.base, branch).split()
        return {n: self.sb.git("show", f"{branch}:{n}") for n in names}

    def worktree_list(self):
        return self.sb.git("worktree", "list", "--porcelain")


class TestBatchWorktrees(Base):
    def test_edit_jobs_run_side_by_side_each_on_its_branch(self):
        self.sb.env["FAKE_CLI_SLEEP_MS"] = "400"
        text = "".join(job(f"j{i}", f"WRITE f{i}.txt=job {i}") for i in range(8))
        p = self.batch(text, "-j", "4", "--worktrees", "--commit")
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(p.returncode, 0, [r["error"] for r in recs.values()])
        self.assertEqual(sorted(recs), [f"j{i}" for i in range(8)])
        branches = set()
        for i in range(8):
            r = recs[f"j{i}"]
            w = r["worktree"]
            self.assertTrue(r["ok"], r["error"])
            self.assertEqual(r["files"], [{"path": f"f{i}.txt", "op": "create", "from": None}])
            self.assertEqual(w["base"], self.base)
            self.assertFalse(w["kept"])
            self.assertFalse(os.path.exists(w["path"]))
            self.assertTrue(w["path"].startswith(self.trees + "/"))
            self.assertRegex(w["branch"], r"^agentrun/\d{8}-\d{6}-[0-9a-f]{4}/j%d$" % i)
            self.assertEqual(self.sb.git("rev-parse", w["branch"]).strip(), w["commit"])
            # Exactly the job's change: nothing of the dirty main checkout, nothing of others.
            self.assertEqual(self.changes(w["branch"]), {f"f{i}.txt": f"job {i}"})
            self.assertEqual(self.sb.git("log", "-1", "--format=%s", w["branch"]).strip(),
                             f"agentrun: j{i}")
            branches.add(w["branch"])
        self.assertEqual(len(branches), 8)
        # One session for the batch.
        self.assertEqual(len({b.split("/")[1] for b in branches}), 1)
        self.assert_main_untouched()
        self.assertNotIn("one at a time", p.stderr)
        self.assertEqual(self.worktree_list().count("worktree "), 1)

    def test_many_jobs_at_once_all_get_their_worktree(self):
        # git worktree add/remove fail while another one is being made (git 2.39 reads
        # every worktree first): agentrun makes the command again, so none of 64 jobs at
        # -j 16 fails for it.
        text = "".join(job(f"m{i}", f"WRITE m{i}.txt={i}") for i in range(64))
        p = self.batch(text, "-j", "16", "--worktrees", "--commit", timeout=120)
        bad = [(r["id"], r["error"]) for r in records(p.stdout) if not r["ok"]]
        self.assertEqual(bad, [])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.worktree_list().count("worktree "), 1, p.stderr)

    def test_without_worktrees_edit_jobs_of_one_tree_still_wait(self):
        text = "".join(job(f"j{i}", f"WRITE g{i}.txt=x") for i in range(3))
        p = self.batch(text, "-j", "3")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("one at a time (2 waited", p.stderr)
        self.assertTrue(all(r["worktree"] is None for r in records(p.stdout)))

    def test_two_jobs_edit_one_file_each_branch_has_its_version(self):
        text = job("a", "WRITE tracked.txt=from a") + job("b", "WRITE tracked.txt=from b")
        p = self.batch(text, "-j", "2", "--worktrees", "--commit")
        self.assertEqual(p.returncode, 0, p.stderr)
        recs = {r["id"]: r for r in records(p.stdout)}
        for id in ("a", "b"):
            r = recs[id]
            self.assertTrue(r["ok"], r["error"])
            self.assertEqual(r["files"], [{"path": "tracked.txt", "op": "modify", "from": None}])
            self.assertEqual(self.changes(r["worktree"]["branch"]), {"tracked.txt": f"from {id}"})
        self.assert_main_untouched()

    def test_a_job_that_changed_nothing_leaves_no_branch(self):
        p = self.batch(job("idle", "nothing to write"), "--worktrees", "--commit")
        self.assertEqual(p.returncode, 0, p.stderr)
        w = records(p.stdout)[0]["worktree"]
        self.assertEqual((w["branch"], w["commit"], w["kept"]), (None, None, False))
        self.assertEqual(self.sb.git("branch", "--list", "agentrun/*"), "")
        self.assertEqual(self.worktree_list().count("worktree "), 1)
        # --keep-worktrees: the worktree stays, and the branch it has checked out with it.
        p = self.batch(job("idle", "nothing to write"), "--worktrees", "--keep-worktrees")
        w = records(p.stdout)[0]["worktree"]
        self.assertTrue(w["kept"] and os.path.isdir(w["path"]))
        self.assertTrue(w["branch"])
        self.assertIn("1 worktree left in place", p.stderr)

    def test_uncommitted_changes_stay_in_their_worktree(self):
        p = self.batch(job("u", "WRITE u.txt=kept"), "--worktrees")
        self.assertEqual(p.returncode, 0, p.stderr)
        w = records(p.stdout)[0]["worktree"]
        self.assertTrue(w["kept"])
        self.assertIsNone(w["commit"])
        with open(os.path.join(w["path"], "u.txt")) as f:
            self.assertEqual(f.read(), "kept")
        self.assertIn("1 worktree left in place", p.stderr)
        self.assert_main_untouched()

    def test_a_failed_job_commits_nothing(self):
        # JSON was asked for and "done" holds none: the job fails after writing its file.
        p = self.batch(job("bad", "WRITE bad.txt=half", json=True), "--worktrees", "--commit",
                       "--no-repair")
        self.assertEqual(p.returncode, 3, p.stderr)
        r = records(p.stdout)[0]
        self.assertFalse(r["ok"])
        self.assertIsNone(r["worktree"]["commit"])
        self.assertTrue(r["worktree"]["kept"])

    def test_fallback_never_after_changes_and_the_budget_as_for_any_job(self):
        codex_500 = os.path.join(SOURCE_ROOT, "tests", "fixtures", "codex", "json-error-500.jsonl")
        line = lambda id, prompt: json.dumps({"id": id, "prompt": prompt, "allow_edits": True,  # noqa
                                              "provider": "codex", "fallback": ["claude"]}) + "\n"
        for id, prompt, changed in (("w", "WRITE w.txt=w", True), ("n", "nothing", False)):
            with self.subTest(id=id):
                if os.path.exists(self.sb.state):
                    os.unlink(self.sb.state)  # the fixtures count calls from the first again
                self.sb.env["FAKE_CLI_FIXTURE"] = codex_500 + "," + \
                    self.sb.fixture(claude_stream("from claude"))
                self.sb.env["FAKE_CLI_EXIT"] = "1,0"
                p = self.batch(line(id, prompt), "--worktrees", "--commit", "--max-wait", "0")
                r = records(p.stdout)[0]
                if changed:
                    # The call wrote into the worktree before it failed: no fallback, the
                    # change stays uncommitted in the kept worktree.
                    self.assertEqual(p.returncode, 4, p.stderr)
                    self.assertEqual(r["error"]["code"], "api_error")
                    self.assertEqual([c["provider"] for c in r["calls"]], ["codex"])
                    self.assertTrue(r["worktree"]["kept"])
                    self.assertIsNone(r["worktree"]["commit"])
                    self.assertTrue(os.path.isfile(os.path.join(r["worktree"]["path"], "w.txt")))
                else:
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual([c["provider"] for c in r["calls"]], ["codex", "claude"])
                    self.assertIsNone(r["worktree"]["branch"])
        self.sb.env.pop("FAKE_CLI_EXIT")
        self.sb.answers("claude", ["done"])
        # --max-cost: jobs past the budget never start, so they make no worktree or branch.
        before = set(self.sb.git("branch", "--format=%(refname:short)").split())
        text = "".join(job("b%d" % i, "WRITE b%d.txt=b" % i) for i in range(4))
        p = self.batch(text, "-j", "1", "--worktrees", "--commit", "--max-cost", "0.025")
        self.assertEqual(p.returncode, 6, p.stderr)
        recs = {r["id"]: r for r in records(p.stdout)}
        made = {r["worktree"]["branch"] for r in recs.values() if r["ok"]}
        self.assertEqual(len(made), 2)
        for r in recs.values():
            if not r["ok"]:
                self.assertEqual(r["error"]["code"], "budget")
                self.assertIsNone(r["worktree"])
        after = set(self.sb.git("branch", "--format=%(refname:short)").split())
        self.assertEqual(after - before, made)
        self.assertNotIn("prunable", self.worktree_list())
        self.assert_main_untouched()

    def test_job_lines_say_worktree_base_and_commit(self):
        self.sb.git("tag", "v0", self.base)
        self.sb.write("later.txt", "later\n")
        self.sb.git("add", "later.txt")
        self.sb.git("commit", "-q", "-m", "later")
        head = self.sb.git("rev-parse", "HEAD").strip()
        self.main_before = self.main_state()
        text = (job("from-v0", "WRITE x.txt=0", worktree=True, base="v0", commit=True)
                + job("from-head", "WRITE y.txt=1", worktree=True, commit=True)
                + job("in-place", "WRITE z.txt=2", commit=True)
                + job("read", "WRITE r.txt=r", allow_edits=False, worktree=True))
        p = self.batch(text, "-j", "4")
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(recs["from-v0"]["worktree"]["base"], self.base)
        self.assertEqual(recs["from-head"]["worktree"]["base"], head)
        self.assertFalse(recs["in-place"]["ok"])
        self.assertEqual(recs["in-place"]["error"]["code"], "usage")
        self.assertIn("'commit' goes with a worktree", recs["in-place"]["error"]["message"])
        # "worktree": true gives a read job one too (a look at a base of its own).
        self.assertEqual(recs["read"]["posture"]["tools"], "read")
        self.assertIsNotNone(recs["read"]["worktree"])
        self.assert_main_untouched()
        # --worktrees gives every edit job one, never a read job.
        p = self.batch(job("e", "WRITE e.txt=e") + job("r", "hi", allow_edits=False),
                       "--worktrees")
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertIsNotNone(recs["e"]["worktree"])
        self.assertIsNone(recs["r"]["worktree"])

    def test_hostile_ids_and_bases_stay_in_the_folder(self):
        ids = ["../../escape", "-b", "--upload-pack=touch x", "a b", "x.lock", ".hidden",
               "HEAD", "@{-1}", "日本", "a/b/../../c", 7]
        text = "".join(job(i, f"WRITE h{n}.txt={n}") for n, i in enumerate(ids))
        text += job("badbase", "WRITE q.txt=q", worktree=True, base="--output=/tmp/x")
        p = self.batch(text, "-j", "4", "--worktrees", "--commit")
        recs = {str(r["id"]): r for r in records(p.stdout)}
        for n, i in enumerate(ids):
            r = recs[str(i)]
            self.assertTrue(r["ok"], (i, r["error"]))
            b = r["worktree"]["branch"]
            self.assertEqual(self.sb.git("check-ref-format", "--branch", b).strip(), b)
            self.assertTrue(b.startswith("agentrun/"))
            self.assertTrue(os.path.realpath(r["worktree"]["path"]).startswith(
                os.path.realpath(self.trees) + "/"), r["worktree"]["path"])
            self.assertEqual(self.changes(b), {f"h{n}.txt": str(n)})
        self.assertEqual(len({recs[str(i)]["worktree"]["branch"] for i in ids}), len(ids))
        self.assertEqual(recs["badbase"]["error"]["code"], "usage")
        self.assertIn("does not name a commit", recs["badbase"]["error"]["message"])
        self.assertFalse(os.path.exists("/tmp/x") and os.path.getmtime("/tmp/x") > time.time() - 60)
        self.assertFalse(os.path.exists(os.path.join(self.sb.work, "x")))
        self.assertFalse(os.path.exists(os.path.join(self.sb.root, "escape")))
        self.assert_main_untouched()

    def test_a_folder_inside_the_work_tree_is_refused(self):
        self.sb.env["AGENTRUN_WORKTREE_DIR"] = os.path.join(self.sb.work, ".trees")
        p = self.batch(job("a", "WRITE a.txt=a"), "--worktrees")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("inside the work tree", records(p.stdout)[0]["error"]["message"])
        self.assert_main_untouched()

    def sigint_batch(self, sig, hang_calls=2, extra=()):
        """Eight jobs at -j 4: the first four answer at once, the next ones write their
        file and hang until the signal."""
        self.sb.env["FAKE_CLI_HANG"] = ",".join(["0"] * 4 + ["1"] * 20)
        text = "".join(job(f"j{i}", f"WRITE f{i}.txt=job {i}") for i in range(8))
        path = self.sb.write("jobs.jsonl", text, base=self.sb.root)
        out = os.path.join(self.sb.root, "out.jsonl")
        e = dict(self.sb.env, AGENTRUN_PROVIDER="claude")
        proc = subprocess.Popen([AGENTRUN, "batch", "-j", "4", "--worktrees", "--commit",
                                 "--resume", "-o", out, *extra, path], cwd=self.sb.work, env=e,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while len(self.sb.calls()) < 8 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        return proc, err, out, path

    def test_sigint_leaves_no_missing_worktree_and_resume_finishes(self):
        proc, err, out, path = self.sigint_batch(signal.SIGINT)
        self.assertEqual(proc.returncode, 130, err)
        with open(out) as f:
            recs = records(f.read())
        ok = [r for r in recs if r["ok"]]
        cut = [r for r in recs if not r["ok"]]
        self.assertEqual(len(ok), 4)
        self.assertTrue(cut and all(r["error"]["code"] == "interrupted" for r in cut))
        listing = self.worktree_list()
        self.assertNotIn("prunable", listing)
        for line in listing.splitlines():
            if line.startswith("worktree "):
                self.assertTrue(os.path.isdir(line[9:]), line)
        # The interrupted jobs had written their file: their worktrees are kept, with it.
        for r in cut:
            w = r["worktree"]
            self.assertTrue(w["kept"], r)
            self.assertTrue(os.path.isfile(os.path.join(w["path"], r["files"][0]["path"])))
        for call in self.sb.calls():
            self.assertFalse(alive(call["pid"]), f"job process {call['pid']} survived")
        self.assert_main_untouched()
        # The same command again runs what was cut, on new branches, and ends with all 8.
        self.sb.env["FAKE_CLI_HANG"] = "0"
        os.unlink(self.sb.state)
        p = self.sb.run("batch", "-j", "4", "--worktrees", "--commit", "--resume", "-o", out,
                        path, provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            final = {r["id"]: r for r in records(f.read())}
        self.assertEqual(sorted(final), [f"j{i}" for i in range(8)])
        for i in range(8):
            r = final[f"j{i}"]
            self.assertTrue(r["ok"], r["error"])
            self.assertEqual(self.changes(r["worktree"]["branch"]), {f"f{i}.txt": f"job {i}"})
        self.assert_main_untouched()

    def test_prune_during_a_batch_leaves_its_running_jobs_alone(self):
        # issue 45: prune, with or without --force, removed the running jobs' worktrees and
        # branches; the jobs then failed, and their records named a branch that was gone.
        go = os.path.join(self.sb.root, "go")
        self.sb.env["FAKE_CLI_WAIT_FOR"] = go  # each CLI hangs until told
        out = os.path.join(self.sb.root, "out.jsonl")
        path = self.sb.write("jobs.jsonl", "".join(job(f"p{i}", f"WRITE p{i}.txt=job {i}")
                                                   for i in range(2)), base=self.sb.root)
        proc = subprocess.Popen([AGENTRUN, "batch", "-j", "2", "--worktrees", "-o", out, path],
                                cwd=self.sb.work, env=dict(self.sb.env, AGENTRUN_PROVIDER="claude"),
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 30
            while len(self.sb.calls()) < 2 and time.time() < deadline:
                time.sleep(0.05)
            self.assertEqual(len(self.sb.calls()), 2)
            for args in (("prune",), ("prune", "--force", "--branches")):
                p = self.sb.run("worktrees", *args, provider=None)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr.count("kept worktree "), 2, p.stderr)
                self.assertIn(f"in use: agentrun pid {proc.pid} ", p.stderr)
                self.assertIn("0 removed, 2 kept", p.stderr)
            p = self.sb.run("worktrees", "list", "--format", "json", provider=None)
            locks = [e["locked"] for e in json.loads(p.stdout)["entries"] if e["worktree"]]
            self.assertEqual(len(locks), 2, p.stdout)
            self.assertTrue(all(l.startswith(f"agentrun pid {proc.pid} ") for l in locks), locks)
        finally:
            with open(go, "w"):
                pass
        err = proc.communicate(timeout=60)[1]
        self.assertEqual(proc.returncode, 0, err)
        with open(out) as f:
            recs = records(f.read())
        self.assertEqual(len(recs), 2)
        for r in recs:
            self.assertTrue(r["ok"], r["error"])
            # What the record says is so: the worktree is there with the change, on its branch.
            w = r["worktree"]
            self.assertTrue(w["kept"], r)
            with open(os.path.join(w["path"], r["id"] + ".txt")) as f:
                self.assertEqual(f.read(), "job " + r["id"][1:])
            self.assertEqual(self.sb.git("rev-parse", "--verify", "refs/heads/" + w["branch"]).strip(),
                             self.base)
        # The batch is over and its locks with it: now prune --force takes them.
        self.assertNotIn("locked", self.worktree_list())
        p = self.sb.run("worktrees", "prune", "--force", "--branches", provider=None)
        self.assertIn("2 removed, 0 kept", p.stderr)
        self.assert_main_untouched()

    def test_the_record_says_what_is_there_when_it_is_written(self):
        # issue 45: a worktree and branch taken away behind the job's back (past its lock,
        # with git's double --force) were still named in its record as kept and as its branch.
        go = os.path.join(self.sb.root, "go")
        self.sb.env["FAKE_CLI_WAIT_FOR"] = go
        out = os.path.join(self.sb.root, "out.jsonl")
        path = self.sb.write("jobs.jsonl", job("gone", "nothing to write"), base=self.sb.root)
        proc = subprocess.Popen([AGENTRUN, "batch", "--worktrees", "-o", out, path],
                                cwd=self.sb.work, env=dict(self.sb.env, AGENTRUN_PROVIDER="claude"),
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 30
            while not self.sb.calls() and time.time() < deadline:
                time.sleep(0.05)
            p = self.sb.run("worktrees", "list", "--format", "json", provider=None)
            entry = [e for e in json.loads(p.stdout)["entries"] if e["worktree"]][0]
            self.sb.git("worktree", "remove", "--force", "--force", entry["worktree"])
            self.sb.git("branch", "-D", entry["branch"])
        finally:
            with open(go, "w"):
                pass
        proc.communicate(timeout=60)
        with open(out) as f:
            (rec,) = records(f.read())
        self.assertFalse(rec["worktree"]["kept"], rec)
        self.assertIsNone(rec["worktree"]["branch"], rec)

    def test_a_lock_of_a_gone_agentrun_is_taken_off_and_the_users_own_stays(self):
        self.assertEqual(self.batch(job("k", "WRITE k.txt=x"), "--worktrees").returncode, 0)
        tree = [l[9:] for l in self.worktree_list().splitlines()
                if l.startswith("worktree ") and l[9:] != self.sb.work]
        self.assertEqual(len(tree), 1)
        # A killed agentrun's lock (a pid that is no agentrun of now), then the user's own.
        dead = subprocess.Popen(["true"])
        dead.wait()
        self.sb.git("worktree", "lock", "--reason", f"agentrun pid {dead.pid} start 1: a run is using it",
                    tree[0])
        p = self.sb.run("worktrees", "prune", "--force", provider=None)
        self.assertIn("1 removed, 0 kept", p.stderr)
        self.assertEqual(self.batch(job("u", "WRITE u.txt=x"), "--worktrees").returncode, 0)
        tree = [l[9:] for l in self.worktree_list().splitlines()
                if l.startswith("worktree ") and l[9:] != self.sb.work]
        self.sb.git("worktree", "lock", "--reason", "mine, hands off", tree[0])
        p = self.sb.run("worktrees", "prune", "--force", "--branches", provider=None)
        self.assertIn("locked: mine, hands off", p.stderr)
        self.assertIn("0 removed, 1 kept", p.stderr)
        self.assertTrue(os.path.isdir(tree[0]))

    def test_a_lock_whose_pid_now_runs_another_process_is_taken_off(self):
        # issue 60 #15: agentrun killed, its pid handed to another process since. The pid
        # runs, but not the process that locked the worktree (its start time differs): the
        # lock protects nothing and prune takes it off. The same pid with its own start
        # time is a live run's lock, kept.
        other = subprocess.Popen(["sleep", "60"])
        try:
            with open(f"/proc/{other.pid}/stat") as f:
                start = int(f.read().rsplit(")", 1)[1].split()[19])
            for reason, kept in ((f"agentrun pid {other.pid} start {start}: a run is using it", 1),
                                 (f"agentrun pid {other.pid} start {start + 1}: a run is using it", 0)):
                with self.subTest(reason=reason):
                    self.assertEqual(self.batch(job("k", "WRITE k.txt=x"), "--worktrees").returncode, 0)
                    tree = [l[9:] for l in self.worktree_list().splitlines()
                            if l.startswith("worktree ") and l[9:] != self.sb.work]
                    self.assertEqual(len(tree), 1)
                    self.sb.git("worktree", "lock", "--reason", reason, tree[0])
                    p = self.sb.run("worktrees", "prune", "--force", "--branches", provider=None)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn(f"{1 - kept} removed, {kept} kept", p.stderr)
                    self.assertEqual(os.path.isdir(tree[0]), bool(kept))
                    if kept:
                        self.assertIn(f"in use: agentrun pid {other.pid} ", p.stderr)
                        self.sb.git("worktree", "unlock", tree[0])
                        p = self.sb.run("worktrees", "prune", "--force", "--branches",
                                        provider=None)
                        self.assertIn("1 removed, 0 kept", p.stderr)
        finally:
            other.kill()
            other.wait()

    def test_an_interrupted_batch_merges_nothing(self):
        # issue 60 #18: --merge merges a batch that ran to its end. Interrupted, the four
        # jobs that finished have committed branches, yet no integration branch is made:
        # what the batch left is for the user to look at (and merge once it is whole).
        for sig, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            with self.subTest(signal=sig):
                # Call 0 again (four answer at once), and no earlier output to resume from.
                for f in (self.sb.log, self.sb.state, os.path.join(self.sb.root, "out.jsonl")):
                    if os.path.exists(f):
                        os.unlink(f)
                proc, err, out, path = self.sigint_batch(sig, extra=("--merge",))
                self.assertEqual(proc.returncode, status, err)
                with open(out) as f:
                    recs = records(f.read())
                committed = [r for r in recs if r["ok"] and r["worktree"]["branch"]]
                self.assertEqual(len(committed), 4, recs)
                refs = self.sb.git("for-each-ref", "--format=%(refname)").split()
                self.assertEqual([r for r in refs if r.endswith("/merged")], [], refs)
                self.assertNotIn("merged", err)

    def test_a_killed_batch_leaves_nothing_a_rerun_trips_over(self):
        proc, err, out, path = self.sigint_batch(signal.SIGKILL)
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        for call in self.sb.calls():
            if alive(call["pid"]):
                os.killpg(call["pid"], signal.SIGKILL)
        # Its worktrees are still there, whole, and listed as agentrun's.
        p = self.sb.run("worktrees", "list", "--format", "json", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        left = [e for e in json.loads(p.stdout)["entries"] if e["worktree"]]
        self.assertTrue(left)
        self.assertNotIn("prunable", self.worktree_list())
        self.sb.env["FAKE_CLI_HANG"] = "0"
        os.unlink(self.sb.state)
        p = self.sb.run("batch", "-j", "4", "--worktrees", "--commit", "--resume", "-o", out,
                        path, provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            final = {r["id"]: r for r in records(f.read())}
        self.assertTrue(all(final[f"j{i}"]["ok"] for i in range(8)))
        # prune --force takes the killed batch's worktrees away too.
        p = self.sb.run("worktrees", "prune", "--force", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.worktree_list().count("worktree "), 1)
        self.assert_main_untouched()


class TestRunWorktree(Base):
    def test_run_commits_on_its_branch(self):
        p = self.sb.run("run", "--allow-edits", "--worktree", "--commit", "--format", "json",
                        "WRITE new.txt=hello", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        w = r["worktree"]
        self.assertRegex(w["branch"], r"^agentrun/\d{8}-\d{6}-[0-9a-f]{4}/run$")
        self.assertEqual(self.changes(w["branch"]), {"new.txt": "hello"})
        self.assertEqual(r["files"], [{"path": "new.txt", "op": "create", "from": None}])
        self.assert_main_untouched()
        # The CLI ran in the worktree, in the directory asked for.
        self.assertEqual(self.sb.calls()[-1]["cwd"], w["path"])

    def test_run_summary_says_where_the_work_is(self):
        p = self.sb.run("run", "--allow-edits", "--worktree", "WRITE new.txt=hello",
                        provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"branch agentrun/\S+/run, worktree " + self.trees)
        self.assert_main_untouched()

    def test_run_from_a_subdirectory_and_a_base(self):
        self.sb.write("sub/s.txt", "s\n")
        self.sb.git("add", "sub/s.txt")
        self.sb.git("commit", "-q", "-m", "sub")
        self.main_before = self.main_state()
        sub = os.path.join(self.sb.work, "sub")
        p = self.sb.run("run", "--allow-edits", "--worktree", "--commit", "-C", sub,
                        "--format", "json", "WRITE t.txt=t", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        w = json.loads(p.stdout)["worktree"]
        self.assertEqual(self.changes(w["branch"], w["base"]), {"sub/t.txt": "t"})
        # A base before sub/ existed: the run has nowhere to go.
        p = self.sb.run("run", "--allow-edits", "--worktree", "--base", self.base, "-C", sub,
                        "--format", "json", "WRITE t.txt=t", provider="claude")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("does not exist at", json.loads(p.stdout)["error"]["message"])
        self.assertEqual(self.worktree_list().count("worktree "), 1)
        self.assert_main_untouched()

    def test_a_folder_beside_the_repository_is_not_inside_it(self):
        # /src/app-wt for the repository /src/app: its name starts with the repository's,
        # but it lies beside it (issue 50).
        self.sb.env["AGENTRUN_WORKTREE_DIR"] = self.sb.work + "-wt"
        p = self.sb.run("run", "--allow-edits", "--worktree", "--commit", "--format", "json",
                        "WRITE new.txt=hello", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        w = json.loads(p.stdout)["worktree"]
        self.assertTrue(w["path"].startswith(os.path.realpath(self.sb.work + "-wt") + "/"), w)
        self.assertEqual(self.changes(w["branch"]), {"new.txt": "hello"})
        self.assert_main_untouched()

    def test_worktree_options_need_worktree(self):
        for flag in (["--commit"], ["--base", "HEAD"], ["--keep-worktree"]):
            p = self.sb.run("run", *flag, "hi", provider="claude")
            self.assertEqual(p.returncode, 2, flag)
            self.assertIn("goes with a worktree", p.stderr)
            self.assertIn(flag[0] + ":", p.stderr)  # named by its flag

    def test_outside_a_repository(self):
        with Sandbox(git=False) as sb:
            sb.answers("claude", ["done"])
            sb.env["AGENTRUN_WORKTREE_DIR"] = os.path.join(sb.root, "trees")
            p = sb.run("run", "--worktree", "--format", "json", "hi", provider="claude")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("not in a git work tree", json.loads(p.stdout)["error"]["message"])


class TestWorktreesCommand(Base):
    def test_list_and_prune_touch_only_what_agentrun_made(self):
        # The user's own: a worktree beside the repository, even on an agentrun/ branch,
        # and a branch of their own.
        mine = os.path.join(self.sb.root, "mine")
        self.sb.git("worktree", "add", "-q", "-b", "agentrun/users/own", mine)
        self.sb.git("branch", "feature")
        # Branches of the user's under agentrun/ that no worktree holds: one HEAD has
        # (prune's default would take it were it agentrun's), one with a commit of its own.
        self.sb.git("branch", "agentrun/mine")
        wip = self.sb.git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "wip").strip()
        self.sb.git("branch", "agentrun/users/wip", wip)
        self.sb.git("branch", "agentrun/20261125-143001-3fa2", wip)
        text = (job("c", "WRITE c.txt=c", worktree=True, commit=True)
                + job("k", "WRITE k.txt=k", worktree=True)
                + job("e", "nothing", worktree=True))
        p = self.batch(text, "-j", "3", "--keep-worktrees")
        self.assertEqual(p.returncode, 0, p.stderr)
        recs = {r["id"]: r for r in records(p.stdout)}
        p = self.sb.run("worktrees", "list", "--format", "json", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        listing = json.loads(p.stdout)
        self.assertEqual(listing["folder"], os.path.realpath(self.trees))
        by_branch = {e["branch"]: e for e in listing["entries"]}
        for theirs in ("agentrun/users/own", "feature", "agentrun/mine", "agentrun/users/wip",
                       "agentrun/20261125-143001-3fa2"):
            self.assertNotIn(theirs, by_branch)
        for id in "ckE".replace("E", "e"):
            self.assertEqual(by_branch[recs[id]["worktree"]["branch"]]["worktree"],
                             recs[id]["worktree"]["path"])
        self.assertTrue(by_branch[recs["e"]["worktree"]["branch"]]["merged"])
        text_list = self.sb.run("worktrees", "list", provider=None).stdout
        self.assertIn(recs["c"]["worktree"]["branch"], text_list)

        # prune: the clean worktrees go ("c" committed, "e" empty), "k" holds work;
        # "e"'s empty branch goes, "c"'s commit stays.
        p = self.sb.run("worktrees", "prune", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("uncommitted changes (--force removes it)", p.stderr)
        self.assertFalse(os.path.exists(recs["c"]["worktree"]["path"]))
        self.assertFalse(os.path.exists(recs["e"]["worktree"]["path"]))
        self.assertTrue(os.path.exists(recs["k"]["worktree"]["path"]))
        branches = self.sb.git("branch", "--list", "--format=%(refname:short)").split()
        self.assertIn(recs["c"]["worktree"]["branch"], branches)
        self.assertNotIn(recs["e"]["worktree"]["branch"], branches)
        # --force --branches: everything agentrun made goes, and nothing else.
        p = self.sb.run("worktrees", "prune", "--force", "--branches", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        branches = self.sb.git("branch", "--list", "--format=%(refname:short)").split()
        self.assertEqual(sorted(branches), ["agentrun/20261125-143001-3fa2", "agentrun/mine",
                                            "agentrun/users/own", "agentrun/users/wip",
                                            "feature", "main"])
        self.assertEqual(self.sb.git("rev-parse", "agentrun/users/wip").strip(), wip)
        self.assertTrue(os.path.isdir(mine))
        listing = self.worktree_list()
        self.assertEqual(listing.count("worktree "), 2)
        self.assertIn("worktree " + mine, listing)
        self.assertTrue(os.path.isdir(self.trees))
        self.assert_main_untouched()

    def test_an_empty_list_says_so_on_stderr(self):
        # Issue 59: `worktrees list` with none printed nothing at all.
        p = self.sb.run("worktrees", "list", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertIn("agentrun: no agentrun worktrees or branches in %s" % self.sb.work,
                      p.stderr)
        self.assertIn(self.trees, p.stderr)
        # -q and json say nothing more: an empty list is still a list there.
        p = self.sb.run("worktrees", "list", "--format", "json", provider=None)
        self.assertEqual(json.loads(p.stdout)["entries"], [])
        self.assertEqual(p.stderr, "")
        self.assertEqual(self.sb.run("worktrees", "list", "-q", provider=None).stderr, "")

    def test_a_branch_checked_out_in_the_users_own_worktree_is_theirs(self):
        # Named as agentrun names its branches, at a commit HEAD has, but checked out in a
        # worktree of the user's outside the folder: neither listed nor deleted (issue 50).
        mine = os.path.join(self.sb.root, "mine")
        branch = "agentrun/20261125-143001-3fa2/run"
        self.sb.git("worktree", "add", "-q", "-b", branch, mine)
        p = self.sb.run("worktrees", "list", "--format", "json", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["entries"], [])
        for args in ([], ["--force", "--branches"]):
            p = self.sb.run("worktrees", "prune", *args, provider=None)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(self.sb.git("branch", "--list", "--format=%(objectname)",
                                         branch).strip(), self.base)
        self.assertTrue(os.path.isdir(mine))
        self.assertIn("worktree " + mine, self.worktree_list())

    def test_a_folder_whose_name_only_starts_like_the_worktree_folder_is_not_it(self):
        # With the folder .../trees, a worktree under .../trees-old is the user's (issue 50).
        old = os.path.join(self.trees + "-old", "x")
        self.sb.git("worktree", "add", "-q", "-b", "mine/old", old)
        for made in (False, True):
            if made:
                os.makedirs(self.trees, exist_ok=True)
            p = self.sb.run("worktrees", "list", "--format", "json", provider=None)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["entries"], [])
            p = self.sb.run("worktrees", "prune", "--force", "--branches", provider=None)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.isdir(old))
            self.assertIn("worktree " + old, self.worktree_list())

    def test_usage(self):
        p = self.sb.run("worktrees", provider=None)
        self.assertEqual(p.returncode, 2)
        p = self.sb.run("worktrees", "list", "--force", provider=None)
        self.assertEqual(p.returncode, 2)
        with Sandbox(git=False) as sb:
            sb.env["AGENTRUN_WORKTREE_DIR"] = os.path.join(sb.root, "trees")
            p = sb.run("worktrees", "list", provider=None)
            self.assertEqual(p.returncode, 2)
            self.assertIn("not in a git work tree", p.stderr)


class TestBranchNameCorpus(unittest.TestCase):
    """The corpus tests/unit/test_git.c checks ar_git_branch_name_ok() against is what the
    installed git says: recorded from git, not written by us."""

    def test_corpus_agrees_with_git(self):
        path = os.path.join(SOURCE_ROOT, "tests", "fixtures", "git", "branch-names.jsonl")
        with open(path) as f:
            corpus = [json.loads(l) for l in f]
        # Outside any repository: in one, --branch expands @{-1} to the branch checked
        # out before, so the answer would depend on the checkout's reflog.
        wrong = []
        with tempfile.TemporaryDirectory() as outside:
            env = dict(os.environ, GIT_CEILING_DIRECTORIES=os.path.dirname(outside))
            for c in corpus:
                ok = subprocess.run(["git", "check-ref-format", "--branch", c["name"]],
                                    capture_output=True, cwd=outside,
                                    env=env).returncode == 0
                if ok != c["ok"]:
                    wrong.append(c)
        self.assertEqual(wrong, [])
        self.assertGreater(len(corpus), 400)


if __name__ == "__main__":
    unittest.main()
