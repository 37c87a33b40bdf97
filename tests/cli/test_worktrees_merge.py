"""Merging a batch's branches back (issue 48, docs/worktrees.md): `agentrun worktrees
merge` and `batch --merge`, with the fake CLI writing the files its prompt names. Jobs
write a.txt, b.txt and c.txt, another writes a.txt differently, another a file the check
refuses: the integration branch holds one version of each of a, b and c, no conflict
marker and not the refused file; the conflicting and the refused branch are named with
why; the user's checkout, index and branch and the job branches never move; and an
interrupted merge leaves no scratch worktree and no half-made branch."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN  # noqa: E402
from test_worktrees import Base, job, records  # noqa: E402

CHECK = 'if test -e refused.txt; then echo "refused.txt is not allowed here"; exit 3; fi'

JOBS = (job("a", "WRITE a.txt=A from a") + job("b", "WRITE b.txt=B from b") +
        job("c", "WRITE c.txt=C from c") + job("d", "WRITE a.txt=A from d, differently") +
        job("r", "WRITE refused.txt=nobody wants this"))


class MergeBase(Base):
    def setUp(self):
        super().setUp()
        self.head_ref = self.sb.git("symbolic-ref", "HEAD").strip()

    def run_batch(self, *extra):
        p = self.batch(JOBS, "-j", "5", "--worktrees", "--commit", *extra)
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(sorted(recs), ["a", "b", "c", "d", "r"], p.stderr)
        for r in recs.values():
            self.assertTrue(r["ok"], r["error"])
        self.branch = {i: r["worktree"]["branch"] for i, r in recs.items()}
        self.session = self.branch["a"].split("/")[1]
        self.tips = {i: self.sb.git("rev-parse", b).strip() for i, b in self.branch.items()}
        return p

    def merge(self, *args, timeout=60):
        return self.sb.run("worktrees", "merge", *args, provider=None, timeout=timeout)

    def tree(self, rev):
        names = self.sb.git("ls-tree", "-r", "--name-only", rev).split()
        return {n: self.sb.git("show", f"{rev}:{n}") for n in names}

    def assert_nothing_else_moved(self):
        self.assert_main_untouched()
        self.assertEqual(self.sb.git("symbolic-ref", "HEAD").strip(), self.head_ref)
        self.assertEqual(self.sb.git("rev-parse", "HEAD").strip(), self.base)
        for i, b in self.branch.items():
            self.assertEqual(self.sb.git("rev-parse", b).strip(), self.tips[i], b)
        # No scratch worktree left, registered or as a folder.
        self.assertEqual(self.worktree_list().count("worktree "), 1, self.worktree_list())
        left = [d for d in os.listdir(self.trees) if d.startswith("merge-check")] \
            if os.path.isdir(self.trees) else []
        self.assertEqual(left, [])

    def assert_integration(self, into):
        files = self.tree(into)
        self.assertEqual(files["a.txt"], "A from a")
        self.assertEqual(files["b.txt"], "B from b")
        self.assertEqual(files["c.txt"], "C from c")
        self.assertNotIn("refused.txt", files)
        for name, text in files.items():
            self.assertNotIn("<<<<<<<", text, name)
            self.assertNotIn(">>>>>>>", text, name)
        # The base's files as they were committed, none of the checkout's uncommitted edits.
        self.assertEqual(files["tracked.txt"], "one\n")
        # Built on the base: each job's branch is in it.
        for i in "abc":
            subprocess.run(["git", "merge-base", "--is-ancestor", self.tips[i], into],
                           cwd=self.sb.work, check=True)


class TestWorktreesMerge(MergeBase):
    def test_one_version_of_each_file_and_the_left_out_named_with_why(self):
        self.run_batch()
        p = self.merge("--check", CHECK)
        self.assertEqual(p.returncode, 1, p.stderr)
        into = f"agentrun/{self.session}/merged"
        lines = p.stdout.splitlines()
        rows = {l.split()[1]: l for l in lines[:-1] if not l.startswith("    |")}
        for i in "abc":
            self.assertTrue(rows[self.branch[i]].startswith("merged "), rows)
        self.assertRegex(rows[self.branch["d"]],
                         r"^conflict +%s +with %s: a\.txt$" % (self.branch["d"], self.branch["a"]))
        self.assertRegex(rows[self.branch["r"]], r"^check_failed +\S+ +the check exited 3$")
        self.assertIn("    | refused.txt is not allowed here", lines)
        head = self.sb.git("rev-parse", into).strip()
        self.assertEqual(lines[-1].split()[:2], [into, head])
        self.assertIn("3 of 5 merged, 2 left out", lines[-1])
        self.assert_integration(into)
        self.assert_nothing_else_moved()

    def test_json_holds_the_same_and_the_order_is_deterministic(self):
        self.run_batch()
        p = self.merge("--check", CHECK, "--format", "json", "--into", "review/one")
        self.assertEqual(p.returncode, 1, p.stderr)
        o = json.loads(p.stdout)
        self.assertEqual(o["into"], "review/one")
        self.assertTrue(o["created"])
        self.assertEqual(o["session"], self.session)
        self.assertEqual(o["base"], self.base)
        self.assertEqual(o["head"], self.sb.git("rev-parse", "review/one").strip())
        self.assertEqual((o["merged"], o["left_out"]), (3, 2))
        by = {b["branch"]: b for b in o["branches"]}
        d, r = by[self.branch["d"]], by[self.branch["r"]]
        self.assertEqual(d["outcome"], "conflict")
        self.assertEqual(d["conflicts_with"], [self.branch["a"]])
        self.assertEqual(d["paths"], ["a.txt"])
        self.assertEqual(r["outcome"], "check_failed")
        self.assertEqual(r["check_status"], 3)
        self.assertIn("refused.txt is not allowed here", r["check_output"])
        for i in "abc":
            self.assertEqual(by[self.branch[i]]["outcome"], "merged")
            self.assertEqual(by[self.branch[i]]["tip"], self.tips[i])
        # Branches with no conflict first, by name; then the rest.
        order = [b["branch"].rsplit("/", 1)[1] for b in o["branches"]]
        self.assertEqual(order, ["b", "c", "r", "a", "d"])
        self.assert_integration("review/one")
        # The same input, the same result: a second integration branch gets the same trees.
        p2 = self.merge("--check", CHECK, "--format", "json", "--into", "review/two")
        o2 = json.loads(p2.stdout)
        self.assertEqual([(b["branch"], b["outcome"]) for b in o2["branches"]],
                         [(b["branch"], b["outcome"]) for b in o["branches"]])
        self.assertEqual(self.sb.git("rev-parse", "review/one^{tree}"),
                         self.sb.git("rev-parse", "review/two^{tree}"))
        self.assert_nothing_else_moved()

    def test_an_existing_branch_is_extended_never_reset(self):
        self.run_batch()
        into = f"agentrun/{self.session}/merged"
        p = self.merge(self.branch["b"])
        self.assertEqual(p.returncode, 0, p.stderr)
        first = self.sb.git("rev-parse", into).strip()
        p = self.merge("--check", CHECK)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"empty         {self.branch['b']}  nothing to merge", p.stdout)
        subprocess.run(["git", "merge-base", "--is-ancestor", first, into], cwd=self.sb.work,
                       check=True)
        self.assertIn("(extended from", p.stdout)
        self.assert_integration(into)
        # Everything merged already: each branch is empty, exit 0, the branch stays.
        head = self.sb.git("rev-parse", into).strip()
        p = self.merge(self.branch["a"], self.branch["c"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.sb.git("rev-parse", into).strip(), head)
        self.assert_nothing_else_moved()

    def test_a_branch_moved_during_the_merge_is_never_overwritten(self):
        # issue 60 #14: the integration branch moves once, at the end, from the value read
        # at the start. Someone commits to it (or makes it) while the merge runs its check:
        # the merge fails, saying so, and their commit stays where they put it.
        self.run_batch()
        into = f"agentrun/{self.session}/merged"
        marker = os.path.join(self.sb.root, "moved")
        # The check, once per merge: a commit of the base's tree on the branch's tip (or on
        # the base when there is no branch yet), made in the user's checkout.
        script = self.sb.write("move.sh", (
            "test -e {m} && exit 0\n"
            "g() {{ git -C {w} -c user.name=u -c user.email=u@example.com \"$@\"; }}\n"
            "p=$(g rev-parse -q --verify refs/heads/{into} || echo $1)\n"
            "c=$(g commit-tree -m meanwhile -p $p $1^{{tree}})\n"
            "g update-ref refs/heads/{into} $c\n"
            "echo $c > {m}\n").format(m=marker, w=self.sb.work, into=into), base=self.sb.root)
        for existing in (False, True):
            with self.subTest(existing=existing):
                if existing:
                    p = self.merge(self.branch["b"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    before = self.sb.git("rev-parse", into).strip()
                if os.path.exists(marker):
                    os.unlink(marker)
                p = self.merge(self.branch["a"], self.branch["c"], "--check",
                               f"sh {script} {self.base}")
                with open(marker) as f:
                    theirs = f.read().strip()
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(f"cannot move '{into}' (it {'moved' if existing else 'was made'} "
                              "meanwhile)", p.stderr)
                self.assertEqual(self.sb.git("rev-parse", into).strip(), theirs)
                if existing:
                    self.assertEqual(self.sb.git("rev-parse", into + "^").strip(), before)
                self.assert_nothing_else_moved()

    def test_usage_errors(self):
        self.run_batch()
        p = self.merge("--into", "main")  # the checked-out branch: its checkout would change
        self.assertEqual(p.returncode, 2)
        self.assertIn("checked out", p.stderr)
        p = self.merge("--into", self.branch["a"])
        self.assertEqual(p.returncode, 2)
        p = self.merge("no-such-branch")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no branch 'no-such-branch'", p.stderr)
        p = self.merge("20990101-000000-abcd")
        self.assertEqual(p.returncode, 2)
        p = self.sb.run("worktrees", "list", "--check", "true", provider=None)
        self.assertEqual(p.returncode, 2)
        self.assert_nothing_else_moved()

    def test_hostile_paths_are_shown_not_obeyed(self):
        self.run_batch()
        # Two branches that conflict on a path with a newline and an escape in it.
        evil = "x\n\x1b[2Jy.txt"
        for n, text in (("e1", "one"), ("e2", "two")):
            b = f"agentrun/{self.session}/{n}"
            self.sb.git("branch", b, self.base)
            wt = os.path.join(self.sb.root, n)
            self.sb.git("worktree", "add", "-q", wt, b)
            with open(os.path.join(wt, evil), "w") as f:
                f.write(text)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"],
                           cwd=wt, check=True)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit",
                            "-qm", n], cwd=wt, check=True)
            self.sb.git("worktree", "remove", wt)
            self.branch[n] = b
            self.tips[n] = self.sb.git("rev-parse", b).strip()
        p = self.merge(self.branch["e1"], self.branch["e2"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("\x1b", p.stdout)
        self.assertIn('"x\\n\\033[2Jy.txt"', p.stdout)
        self.assertEqual(len(p.stdout.splitlines()), 3)
        self.assert_nothing_else_moved()

    def test_sigint_during_a_slow_check_leaves_no_scratch_worktree_and_no_branch(self):
        self.run_batch()
        into = f"agentrun/{self.session}/merged"
        marker = os.path.join(self.sb.root, "check-started")
        env = dict(self.sb.env)
        proc = subprocess.Popen([AGENTRUN, "worktrees", "merge", "--check",
                                 f"touch {marker}; sleep 60"], cwd=self.sb.work, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while not os.path.exists(marker) and time.time() < deadline:
            time.sleep(0.05)
        self.assertTrue(os.path.exists(marker))
        self.assertIn("locked", self.worktree_list())
        t0 = time.time()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertLess(time.time() - t0, 10)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("interrupted", err)
        self.assertEqual(out, "")
        self.assertEqual(subprocess.run(["git", "rev-parse", "--verify", "--quiet", into],
                                        cwd=self.sb.work, capture_output=True).returncode, 1)
        self.assertNotIn(into, self.sb.git("for-each-ref", "--format=%(refname)"))
        self.assert_nothing_else_moved()


    def test_a_check_that_runs_too_long_is_ended_with_its_group(self):
        self.run_batch()
        marker = os.path.join(self.sb.root, "grandchild.pid")
        # The check leaves a grandchild in its group: it goes with the check.
        p = self.merge(self.branch["b"], "--format", "json", "--check-timeout", "1",
                       "--check", f"sleep 60 & echo $! > {marker}; echo started; wait")
        self.assertEqual(p.returncode, 1, p.stderr)
        row = json.loads(p.stdout)["branches"][0]
        self.assertEqual(row["outcome"], "check_failed")
        self.assertIsNone(row["check_status"])
        self.assertTrue(row["check_timed_out"])
        self.assertIn("started", row["check_output"])
        with open(marker) as f:
            pid = int(f.read())
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            self.fail("the check's sleep survived it")
        p = self.merge(self.branch["c"], "--check-timeout", "1", "--check", "sleep 60")
        self.assertIn("the check timed out", p.stdout)
        self.assert_nothing_else_moved()

    def test_a_git_older_than_2_38_gets_a_clear_error(self):
        self.run_batch()
        real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True,
                              text=True).stdout.strip()
        bindir = os.path.join(self.sb.root, "oldgit")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "git"), "w") as f:
            f.write('#!/bin/sh\n'
                    'for a; do [ "$a" = version ] && { echo "git version 2.37.1"; exit 0; }; done\n'
                    f'exec {real} "$@"\n')
        os.chmod(os.path.join(bindir, "git"), 0o755)
        env = {"PATH": bindir + os.pathsep + self.sb.env.get("PATH", "")}
        p = self.sb.run("worktrees", "merge", provider=None, env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("needs git 2.38 or later", p.stderr)
        self.assertIn("2.37.1", p.stderr)
        self.assertNotIn("merged", self.sb.git("for-each-ref", "--format=%(refname)"))
        self.assert_nothing_else_moved()


def workflow_lines(text):
    """The lines of text a GitHub runner would read as workflow commands: split at LF and
    CR, '::' after leading blanks, or '##[' anywhere."""
    import re
    return [l for l in re.split(r"[\r\n]", text) if l.lstrip().startswith("::") or "##[" in l]


class TestMergeSafety(MergeBase):
    """Issue 57 #4-#6: merge safety by what refs are, not what they are named; every line
    shown is data; the integration branch's name is never a job's."""

    def refs(self):
        return self.sb.git("for-each-ref", "--format=%(refname) %(objectname)")

    def test_57_4_into_a_symbolic_ref_to_the_checked_out_branch_is_refused(self):
        self.run_batch()
        # refs/heads/master points to the checked-out branch: update-ref would follow it
        # and move the user's branch under the checkout (the merged files then show as
        # staged deletions).
        self.sb.git("symbolic-ref", "refs/heads/master", self.head_ref)
        before = self.refs()
        for into in ("master", "refs/heads/master"):
            with self.subTest(into=into):
                p = self.merge("--into", into)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("'master' is a symbolic ref to '%s'" % self.head_ref, p.stderr)
                self.assertEqual(self.refs(), before)
        self.assert_nothing_else_moved()
        # A symbolic ref to a branch nobody has checked out is refused just the same: the
        # name must be the branch that moves.
        self.sb.git("branch", "spare", self.base)
        self.sb.git("symbolic-ref", "refs/heads/alias", "refs/heads/spare")
        p = self.merge("--into", "alias")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("symbolic ref", p.stderr)
        self.assertEqual(self.sb.git("rev-parse", "spare").strip(), self.base)
        self.assert_nothing_else_moved()

    def test_57_4_names_that_shadow_other_refs_are_refused(self):
        self.run_batch()
        self.sb.git("tag", "v1", self.base)
        self.sb.git("update-ref", "refs/remotes/upstream/fix", self.base)
        self.sb.git("symbolic-ref", "refs/remotes/upstream/HEAD", "refs/remotes/upstream/fix")
        self.sb.git("remote", "add", "origin", os.path.join(self.sb.root, "nowhere.git"))
        self.sb.git("update-ref", "refs/notes/x", self.base)
        before = self.refs()
        cases = {
            "v1": "would shadow 'refs/tags/v1'",
            "upstream/fix": "would shadow 'refs/remotes/upstream/fix'",
            "upstream": "would shadow 'refs/remotes/upstream/HEAD'",
            "origin/new-fix": "would shadow the remote-tracking branches of 'origin'",
            "notes/x": "would shadow 'refs/notes/x'",
            "@": "git reads it as HEAD",
            "refs/tags/v2": "a full ref name",
            "0123456789abcdef0123456789abcdef01234567": "an object id",
            "FETCH_HEAD": "a pseudo-ref",
        }
        for into, said in cases.items():
            with self.subTest(into=into):
                p = self.merge("--into", into)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(said, p.stderr)
                self.assertEqual(self.refs(), before)
        # A name of its own still works.
        p = self.merge("--into", "integration/ok", "--check", CHECK)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assert_integration("integration/ok")
        self.assert_nothing_else_moved()

    def test_57_5_check_output_and_conflict_paths_are_data_on_stdout_and_stderr(self):
        # A check that prints workflow commands, as a model-written test can, and two
        # branches that conflict on a path that holds one.
        check = ('printf "##[error]forged\\n::error::forged too\\nok\\r::warning::cr\\n"; '
                 + CHECK)
        self.run_batch("--merge", "--check", check)
        evil = "##[group]x.txt"
        for n, text in (("e1", "one"), ("e2", "two")):
            b = f"agentrun/{self.session}/{n}"
            self.sb.git("branch", b, self.base)
            wt = os.path.join(self.sb.root, n)
            self.sb.git("worktree", "add", "-q", wt, b)
            with open(os.path.join(wt, evil), "w") as f:
                f.write(text)
            for args in (["add", "-A"], ["commit", "-qm", n]):
                subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t"] + args,
                               cwd=wt, check=True)
            self.sb.git("worktree", "remove", wt)
            self.branch[n] = b
            self.tips[n] = self.sb.git("rev-parse", b).strip()
        p = self.merge("--into", "checked", "--check", check)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("# #[error]forged", p.stdout)
        self.assertIn("# #[group]x.txt", p.stdout)
        self.assertIn("ok^M::warning::cr", p.stdout)
        self.assertEqual(workflow_lines(p.stdout), [])
        self.assertEqual(workflow_lines(p.stderr), [])
        # batch --merge says the same on stderr.
        p = self.batch(JOBS, "-j", "5", "--worktrees", "--commit", "--merge", "--check", check)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("agentrun batch: check_failed", p.stderr)
        self.assertIn("# #[error]forged", p.stderr)
        self.assertEqual(workflow_lines(p.stderr), [])
        self.assert_nothing_else_moved()

    def test_57_6_a_job_named_merged_never_takes_the_integration_branch(self):
        jobs = (job("merged", "WRITE m.txt=from the job named merged") +
                job("MERGED", "WRITE n.txt=from the job named MERGED") +
                job("b", "WRITE b.txt=B from b"))
        p = self.batch(jobs, "-j", "3", "--worktrees", "--commit", "--merge")
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(p.returncode, 0, p.stderr)
        branches = {i: r["worktree"]["branch"] for i, r in recs.items()}
        session = branches["b"].split("/")[1]
        into = f"agentrun/{session}/merged"
        for i in ("merged", "MERGED"):
            self.assertNotEqual(branches[i].lower(), into.lower())
            self.assertRegex(branches[i], r"/(merged|MERGED)-[0-9a-f]{8}$")
        self.assertIn("agentrun batch: 3 of 3 branches merged", p.stderr)
        files = self.tree(into)
        self.assertEqual(files["m.txt"], "from the job named merged")
        self.assertEqual(files["n.txt"], "from the job named MERGED")
        self.assertEqual(files["b.txt"], "B from b")
        # A later merge of the session finds the three job branches, not its own result.
        p = self.merge(session, "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        o = json.loads(p.stdout)
        self.assertEqual(sorted(b["branch"] for b in o["branches"]), sorted(branches.values()))
        self.assertEqual(o["into"], into)
        self.assert_main_untouched()


class TestCommitIdentity(MergeBase):
    """Issue 56: who agentrun's commits are by has one owner (src/git/run.c,
    AR_GIT_FALLBACK_IDENTITY), for a job's commit and a merge commit alike: the user, where
    git knows who that is; agentrun <agentrun@localhost> where git knows no one (a fresh CI
    machine; here user.useConfigOnly, so git cannot guess one), decided by asking git
    (`git var GIT_COMMITTER_IDENT`), not by reading its prose."""

    AGENTRUN = "agentrun <agentrun@localhost>"

    def by(self, *revs):
        return set(self.sb.git("log", "--format=%an <%ae>|%cn <%ce>", *revs).splitlines())

    def test_commits_are_by_the_user_or_else_by_agentrun(self):
        self.sb.git("config", "user.useConfigOnly", "true")
        self.run_batch()
        into = f"agentrun/{self.session}/merged"
        p = self.merge(self.branch["a"], self.branch["c"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.by(f"{self.base}..{into}"), {self.AGENTRUN + "|" + self.AGENTRUN})
        # Once git knows the user, the next merge commit is theirs, not agentrun's.
        self.sb.git("config", "user.name", "Ada Lovelace")
        self.sb.git("config", "user.email", "ada@example.com")
        p = self.merge(self.branch["b"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.by("-1", into),
                         {"Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>"})
        self.assert_nothing_else_moved()


class TestBatchMerge(MergeBase):
    def test_batch_merge_merges_at_the_end_and_counts(self):
        p = self.run_batch("--merge", "--check", CHECK)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("agentrun batch: 3 of 5 branches merged", p.stderr)
        self.assertIn("agentrun batch: conflict", p.stderr)
        self.assertIn("agentrun batch: check_failed", p.stderr)
        self.assert_integration(f"agentrun/{self.session}/merged")
        self.assert_nothing_else_moved()

    def test_batch_merge_event_in_json_logs(self):
        p = self.run_batch("--merge", "--log-format", "json")
        self.assertEqual(p.returncode, 1, p.stderr)
        events = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
        e = [e for e in events if e.get("event") == "batch_merged"]
        self.assertEqual(len(e), 1, p.stderr)
        into = f"agentrun/{self.session}/merged"
        self.assertEqual((e[0]["into"], e[0]["branches"], e[0]["merged"], e[0]["left_out"]),
                         (into, 5, 4, 1))
        self.assertEqual(e[0]["head"], self.sb.git("rev-parse", into).strip())
        self.assertEqual(self.tree(into)["refused.txt"], "nobody wants this")
        self.assert_nothing_else_moved()

    def test_batch_merge_needs_commit(self):
        p = self.batch(JOBS, "--worktrees", "--merge")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--merge needs --commit", p.stderr)
        p = self.batch(JOBS, "--worktrees", "--commit", "--check", "true")
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
