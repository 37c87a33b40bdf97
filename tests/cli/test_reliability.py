"""Hostile inputs and process faults, end to end with the fake CLI (issue 18):
NUL bytes, closed standard descriptors, concurrent appends, option injection,
floods, agentrun's own files, FIFOs, and the numbers a CLI reports."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, Sandbox, claude_stream  # noqa: E402

PASS = '{"passed": true, "summary": "looks fine", "issues": []}'


def result(p):
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"stdout is not one JSON object: {p.stdout!r}\nstderr: {p.stderr}")


class Base(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)


class NulBytes(Base):
    def test_review_sends_the_files_after_a_nul_the_model_would_not_see(self):
        # git calls a file text when its first 8,000 bytes hold no NUL: a NUL at
        # line 5001 reaches the diff, and must not hide the next file.
        self.sb.write("notes.md", "line\n" * 5000)
        self.sb.write("evil.c", "int x;\n")
        self.sb.git("add", ".")
        self.sb.git("commit", "-q", "-m", "base")
        self.sb.write("notes.md", "line\n" * 5000 + "bad\0byte\nmore\n")
        self.sb.write("evil.c", "int x; /* EVIL_MARKER */\n")
        self.sb.answers("codex", [PASS])
        p = self.sb.run("review", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        calls = self.sb.calls()
        self.assertEqual(len(calls), 1)
        self.assertIn("EVIL_MARKER", calls[0]["stdin"])
        self.assertIn("bad\ufffdbyte", calls[0]["stdin"])
        self.assertIn("U+FFFD", p.stderr)

    def test_review_of_a_patch_on_stdin_with_a_nul_sends_all_of_it(self):
        patch = ("diff --git a/a.md b/a.md\n--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-x\n+y\0z\n"
                 "diff --git a/b.c b/b.c\n--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-x\n+EVIL_MARKER\n")
        self.sb.answers("codex", [PASS])
        p = self.sb.run("review", "-", input=patch)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("EVIL_MARKER", self.sb.calls()[0]["stdin"])
        self.assertIn("stdin: 1 NUL byte", p.stderr)

    def test_run_prompt_on_stdin_keeps_what_follows_a_nul(self):
        self.sb.answers("codex", ["done"])
        p = self.sb.run("run", "-", input="abc\0def")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.sb.calls()[0]["stdin"], "abc\ufffddef")
        self.assertIn("1 NUL byte replaced with U+FFFD", p.stderr)

    def test_answer_with_a_nul_character_is_not_cut_there(self):
        # The model's text holds \u0000 before its JSON: cut there, the JSON is
        # lost and a repair call is paid for.
        self.sb.answers("codex", ['note\0 {"ok": true}', '{"ok": false}'])
        p = self.sb.run("run", "--json", "--format", "json", "hi")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["json"], {"ok": True})
        self.assertEqual(len(r["calls"]), 1)
        self.assertEqual(r["output"], 'note\ufffd {"ok": true}')
        self.assertIn("NUL character", p.stderr)


class OptionInjection(Base):
    def test_a_session_id_or_model_that_looks_like_a_flag_never_reaches_the_cli(self):
        self.sb.answers("codex", ["done"])
        cases = [
            ("--resume", "--dangerously-bypass-approvals-and-sandbox"),
            ("-m", "-c"),
            ("-m", "--yolo"),
            ("--resume", "abc\ndef"),
        ]
        for provider in ("claude", "codex", "gemini"):
            for flag, value in cases:
                with self.subTest(provider=provider, flag=flag, value=value):
                    p = self.sb.run("run", flag, value, "hi", provider=provider)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertEqual(self.sb.calls(), [])
                    self.assertIn("invalid", p.stderr)

    def test_a_model_from_the_environment_is_checked_too(self):
        self.sb.answers("codex", ["done"])
        p = self.sb.run("run", "hi", env={"AGENTRUN_MODEL": "--dangerously-bypass-approvals"})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(self.sb.calls(), [])

    def test_an_ordinary_model_and_session_pass(self):
        self.sb.answers("codex", ["done"])
        p = self.sb.run("run", "-m", "gpt-5.1-codex", "--resume",
                        "01a201a4-e6d7-7c03-9d63-000000000001", "hi")
        self.assertEqual(p.returncode, 0, p.stderr)
        argv = self.sb.calls()[0]["argv"]
        self.assertIn("gpt-5.1-codex", argv)


class ClosedStdFds(Base):
    def sh(self, script, *args):
        e = dict(self.sb.env)
        e["AGENTRUN_PROVIDER"] = "codex"
        return subprocess.run(["sh", "-c", script, "sh", AGENTRUN, *args], cwd=self.sb.work,
                              env=e, capture_output=True, text=True, timeout=60)

    def test_closed_stdout_is_a_write_error_not_an_abort(self):
        self.sb.answers("codex", ["the answer"])
        p = self.sh('"$1" run hi >&-; echo "rc=$?" >&2')
        self.assertIn("rc=2", p.stderr)
        self.assertIn("cannot write the result to stdout", p.stderr)

    def test_closed_stderr_or_stdin_still_gives_the_answer(self):
        self.sb.answers("codex", ["the answer"])
        for redir in ("2>&-", "<&-"):
            with self.subTest(redir=redir):
                p = self.sh('"$1" run hi ' + redir + '; echo "rc=$?"')
                self.assertIn("the answer\nrc=0", p.stdout, p.stderr)

    def test_doctor_with_stderr_closed_does_not_abort(self):
        p = self.sh('"$1" doctor 2>&-; echo "rc=$?"')
        self.assertNotIn("rc=134", p.stdout)
        self.assertRegex(p.stdout, r"rc=[0-9]+")


def jobs(n, prefix="job"):
    return "".join(json.dumps({"id": f"{prefix}{i}", "prompt": f"prompt {i}"}) + "\n"
                   for i in range(n))


class AtomicRecords(Base):
    def test_two_batches_appending_to_one_file_never_interleave(self):
        # 100 KB records: stdio cut each into several write()s, and two writers
        # appending at once glued pieces of their records together. (-o FILE has one
        # writer, test_security.py; through the shell, >> shared.jsonl, several append.)
        self.sb.answers("codex", ["x" * 400000])
        out = os.path.join(self.sb.root, "shared.jsonl")
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        procs = []
        for name in ("a", "b", "c"):
            path = self.sb.write(f"{name}.jsonl", jobs(100, name), base=self.sb.root)
            with open(out, "ab") as shared:
                procs.append(subprocess.Popen([AGENTRUN, "batch", "-j", "8", "--no-files", path],
                                              cwd=self.sb.work, env=e, stdout=shared,
                                              stderr=subprocess.PIPE))
        for p in procs:
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err[-2000:])
        with open(out, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 300)
        ids = sorted(json.loads(line)["id"] for line in lines)  # every line whole
        self.assertEqual(len(set(ids)), 300)


class Transcript(Base):
    def test_a_failing_transcript_write_warns_once_not_per_line(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        self.sb.answers("codex", ["the answer"])
        p = self.sb.run("run", "--transcript", "/dev/full", "hi")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("cannot write the transcript"), 1, p.stderr)

    def test_a_fifo_nobody_reads_does_not_block(self):
        fifo = os.path.join(self.sb.root, "fifo")
        os.mkfifo(fifo)
        self.sb.answers("codex", ["the answer"])
        p = self.sb.run("run", "--transcript", fifo, "--timeout", "5", "hi", timeout=15)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no process is reading", p.stderr)
        self.assertEqual(self.sb.calls(), [])


class ReportedNumbers(Base):
    def test_a_negative_cli_cost_is_not_believed(self):
        self.sb.answers("claude", ["the answer"], cost=-100)
        p = self.sb.run("run", "--format", "json", "hi", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertNotEqual(r["cost_source"], "cli")
        self.assertGreaterEqual(r["cost_usd"], 0)
        self.assertIn("cannot be right", p.stderr)

    def test_a_negative_cli_cost_never_lets_a_budget_pass(self):
        # -100 USD a job used to pay for 64 jobs under --max-cost 0.05.
        self.sb.answers("claude", ["the answer"], cost=-100, input_tokens=200000)
        p = self.sb.run("batch", "-j", "1", "--no-files", "--max-cost", "0.05", "-",
                        input=jobs(10), provider="claude")
        recs = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertLess(sum(1 for r in recs if r["ok"]), 10, p.stderr)
        self.assertLess(len(self.sb.calls()), 10)
        self.assertNotIn("$-", p.stderr)


class OwnFiles(Base):
    def test_batch_output_redirected_into_the_tree_is_not_a_change(self):
        # The first call's record is written while the other two jobs run.
        self.sb.answers("codex", ["done"])
        self.sb.env["FAKE_CLI_SLEEP_MS"] = "0,700"
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        inp = self.sb.write("jobs.jsonl", jobs(3), base=self.sb.root)
        with open(os.path.join(self.sb.work, "out.jsonl"), "w") as out:
            p = subprocess.run([AGENTRUN, "batch", "-j", "3", inp], cwd=self.sb.work, env=e,
                               stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.sb.work, "out.jsonl")) as f:
            recs = [json.loads(line) for line in f]
        self.assertEqual(len(recs), 3)
        for r in recs:
            self.assertEqual(r["files"], [], r["files"])

    def test_batch_o_file_and_transcript_in_the_tree_are_not_changes(self):
        self.sb.answers("codex", ["done"])
        self.sb.env["FAKE_CLI_SLEEP_MS"] = "0,700"
        p = self.sb.run("batch", "-j", "3", "-o", "res.jsonl", "--transcript", "t.log", "-",
                        input=jobs(3))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.sb.work, "res.jsonl")) as f:
            recs = [json.loads(line) for line in f]
        for r in recs:
            self.assertEqual(r["files"], [], r["files"])

    def test_run_stdout_and_transcript_in_the_tree_are_not_changes(self):
        self.sb.answers("codex", ["done"])
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        with open(os.path.join(self.sb.work, "r.json"), "w") as out:
            p = subprocess.run([AGENTRUN, "run", "--format", "json", "--transcript", "t2.log",
                                "hi"], cwd=self.sb.work, env=e, stdout=out,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.sb.work, "r.json")) as f:
            self.assertEqual(json.load(f)["files"], [])


class ReviewCost(Base):
    def big_change(self, files):
        for i in range(files):
            self.sb.write(f"f{i}.c", "".join(f"int v{i}_{k} = {k};\n" for k in range(40)))

    def test_a_diff_needing_more_chunks_than_agreed_costs_nothing(self):
        self.big_change(5)
        self.sb.answers("codex", [PASS])
        p = self.sb.run("review", "--max-chunk-bytes", "700", "--max-chunks", "4")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("needs 5 chunks", p.stderr)
        self.assertEqual(self.sb.calls(), [])
        p = self.sb.run("review", "--max-chunk-bytes", "700", "--max-chunks", "5")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(self.sb.calls()), 5)

    def test_the_default_is_20_chunks(self):
        self.big_change(21)
        self.sb.answers("codex", [PASS])
        p = self.sb.run("review", "--max-chunk-bytes", "700")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("needs 21 chunks", p.stderr)
        self.assertEqual(self.sb.calls(), [])


class BrokenOutput(Base):
    def test_epipe_exits_2_in_batch_as_in_run(self):
        self.sb.answers("codex", ["done"])
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_SLEEP_MS="300")
        for args in (["run", "hi"], ["batch", "-j", "2", "--no-files",
                                     self.sb.write("j.jsonl", jobs(6), base=self.sb.root)]):
            with self.subTest(cmd=args[0]):
                r, w = os.pipe()
                os.close(r)  # the reader is gone before the first record
                p = subprocess.run([AGENTRUN, *args], cwd=self.sb.work, env=e, stdout=w,
                                   stderr=subprocess.PIPE, text=True, timeout=60)
                os.close(w)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("cannot write", p.stderr)


class Directories(Base):
    def test_an_unenterable_directory_is_named_as_such(self):
        prefix = []
        if os.geteuid() == 0:
            # root enters any directory: drop to nobody where we can.
            import shutil
            if not shutil.which("setpriv"):
                self.skipTest("root, and no setpriv to drop privileges")
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            os.chmod(self.sb.root, 0o755)
        d = os.path.join(self.sb.root, "locked")
        os.mkdir(d, 0o000)
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        try:
            for cmd in (["run", "-C", d, "hi"], ["review", "-C", d]):
                with self.subTest(cmd=cmd[0]):
                    p = subprocess.run([*prefix, AGENTRUN, *cmd], cwd="/", env=e,
                                       capture_output=True, text=True, timeout=60)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn("cannot enter directory", p.stderr)
                    self.assertNotIn("cannot run", p.stderr)
        finally:
            os.chmod(d, 0o700)

class GitPrograms(Base):
    def test_the_repositorys_fsmonitor_never_runs(self):
        marker = os.path.join(self.sb.root, "fsmonitor-ran")
        hook = self.sb.write("fsmon.sh", f"#!/bin/sh\necho x >> {marker}\nexit 1\n",
                             base=self.sb.root)
        os.chmod(hook, 0o755)
        self.sb.git("config", "core.fsmonitor", hook)
        self.sb.write("README", "changed\n")
        self.sb.answers("codex", [PASS])
        for cmd in (["run", "--format", "json", "hi"], ["review"]):
            with self.subTest(cmd=cmd[0]):
                p = self.sb.run(*cmd)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertFalse(os.path.exists(marker), cmd)


class BatchLimits(Base):
    def test_a_line_over_16_mib_is_an_error_record_and_the_batch_goes_on(self):
        self.sb.answers("codex", ["done"])
        big = json.dumps({"id": "big", "prompt": "x" * (17 << 20)})
        text = big + "\n" + json.dumps({"id": "small", "prompt": "hi"}) + "\n"
        p = self.sb.run("batch", "--no-files", "-", input=text)
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])
        recs = {r["id"]: r for r in (json.loads(line) for line in p.stdout.splitlines())}
        self.assertTrue(recs["small"]["ok"])
        self.assertIn("line 1: the line is too long", recs["line 1"]["error"]["message"])
        self.assertEqual(len(self.sb.calls()), 1)


class Scale(Base):
    def test_a_manifest_of_100000_tasks_loads_in_linear_time(self):
        # The duplicate check scanned every earlier item: 34.5 s for 100k tasks.
        import time
        tasks = [{"name": f"task-{i}", "description": f"does thing {i}"} for i in range(100000)]
        path = self.sb.write("m.json", json.dumps({"tasks": tasks}), base=self.sb.root)
        start = time.monotonic()
        p = self.sb.run("route", "--manifest", path, "--no-llm", "--format", "json", "task-99999")
        elapsed = time.monotonic() - start
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("task-99999", p.stdout)
        self.assertLess(elapsed, 10, "a quadratic load takes tens of seconds")
        dup = self.sb.write("d.json", json.dumps({"tasks": tasks + [{"name": "TASK-7",
                                                                     "description": "x"}]}),
                            base=self.sb.root)
        p = self.sb.run("route", "--manifest", dup, "--no-llm", "task-1")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("/tasks/100000/name: 'TASK-7' is also /tasks/7", p.stderr)


class Prds(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox(git=False)
        os.makedirs(os.path.join(self.sb.work, "prds"))

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def prd(self, name, text="A product need.\n"):
        with open(os.path.join(self.sb.work.encode(), b"prds", name), "wb") as f:
            f.write(text.encode())

    def answer(self, *ids):
        return json.dumps({"recommendations": [
            {"prd_id": i, "priority": k + 1, "rationale": "because"} for k, i in enumerate(ids)]})

    def test_a_prd_whose_file_name_is_not_utf8_can_be_ranked(self):
        self.prd(b"caf\xe9.md")
        self.prd(b"other.md")
        self.sb.answers("codex", [self.answer("caf\ufffd", "other")])
        # The warning names the file as it is, bytes and all.
        p = subprocess.run([AGENTRUN, "prioritize", "prds", "--format", "json"],
                           cwd=self.sb.work, env=dict(self.sb.env, AGENTRUN_PROVIDER="codex"),
                           capture_output=True, text=True, errors="replace", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual([r["prd_id"] for r in doc["recommendations"]], ["caf\ufffd", "other"])
        self.assertEqual(doc["unranked"], [])
        self.assertIn("not valid UTF-8", p.stderr)
        self.assertIn('<prd id="caf\ufffd">', self.sb.calls()[0]["stdin"])

    def test_context_after_a_nul_reaches_the_model(self):
        self.prd(b"a.md")
        ctx = self.sb.write("ctx.txt", "first\0CONTEXT_MARKER\n", base=self.sb.root)
        self.sb.answers("codex", [self.answer("a")])
        p = self.sb.run("prioritize", "prds", "--context", ctx)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("CONTEXT_MARKER", self.sb.calls()[0]["stdin"])
        self.assertIn("1 NUL byte replaced with U+FFFD", p.stderr)

    def test_the_unranked_warning_names_a_few_not_all(self):
        for i in range(40):
            self.prd(f"p{i:02d}.md".encode())
        self.sb.answers("codex", [self.answer("p00")])
        p = self.sb.run("prioritize", "prds", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("39 PRDs left unranked", p.stderr)
        self.assertIn("and 29 more", p.stderr)
        self.assertNotIn("p39", p.stderr)
        self.assertEqual(len(json.loads(p.stdout)["unranked"]), 39)


class FdLimit(Base):
    def test_many_jobs_under_a_low_fd_limit_are_throttled_not_failed(self):
        import resource

        def low_limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

        self.sb.answers("codex", ["done"])
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_SLEEP_MS="200")
        inp = self.sb.write("j.jsonl", jobs(60), base=self.sb.root)
        p = subprocess.run([AGENTRUN, "batch", "-j", "60", inp], cwd=self.sb.work, env=e,
                           capture_output=True, text=True, timeout=120, preexec_fn=low_limit)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        recs = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual(len(recs), 60)
        self.assertTrue(all(r["ok"] for r in recs))
        self.assertIn("open file limit", p.stderr)


class PartialUsage(Base):
    def test_a_call_ended_before_its_final_event_keeps_the_tokens_seen(self):
        # claude's assistant message carries usage before the result event; the
        # call is cut off (timeout) before the result arrives.
        lines = claude_stream("partial", input_tokens=1234, output=56).splitlines()[:2]
        self.sb.env["FAKE_CLI_FIXTURE"] = self.sb.fixture("\n".join(lines) + "\n")
        self.sb.env["FAKE_CLI_HANG"] = "1"
        p = self.sb.run("run", "--format", "json", "--timeout", "1", "hi", provider="claude")
        self.assertEqual(p.returncode, 5, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "timeout")
        self.assertEqual(r["tokens"]["input"], 1234)
        self.assertEqual(r["tokens"]["output"], 56)


if __name__ == "__main__":
    unittest.main()
