#!/usr/bin/env python3
"""What agentrun promises about a hostile checkout, a hostile model answer and secrets
(docs/security.md), end to end with the fake CLI: the files it reads on the user's behalf,
the secrets it stores, the output file it writes, the waits it accepts, the temporary
files it leaves and the bytes it prints."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, SOURCE_ROOT, Sandbox, alive, codex_stream, gemini_stream  # noqa: E402,E501

SECRET = "SECRET-7c1f-NEVER-SENT"


class ReadsTest(unittest.TestCase):
    """A file agentrun reads on the user's behalf: regular, capped, and reached without a
    link out of its folder (util/file.h). A checkout can put a link or a FIFO at any name
    a command line or a job names."""

    def setUp(self):
        self.sb = Sandbox(git=False)
        self.outside = self.sb.write("outside/secret.txt", SECRET + "\n", base=self.sb.root)
        self.sb.write("prds/auth.md", "# Auth\nLog in.\n")

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def link(self, target, rel):
        path = os.path.join(self.sb.work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)
        return path

    def assert_refused(self, p, name, why="a link out of its folder"):
        self.assertEqual(p.returncode, 2, p.stdout[-500:] + p.stderr[-1500:])
        self.assertIn(name, p.stderr)
        self.assertIn(why, p.stderr)
        for call in self.sb.calls():
            self.assertNotIn(SECRET, call.get("stdin", ""))
        self.assertNotIn(SECRET, p.stdout)

    def test_prioritize_refuses_links_out_of_the_prd_folder(self):
        for target, rel in ((self.outside, "prds/key.md"), ("../../outside/secret.txt",
                                                             "prds/notes.md"),
                            ("/proc/self/environ", "prds/env.txt")):
            with self.subTest(rel=rel):
                self.link(target, rel)
                self.sb.answers("codex", ['{"recommendations": []}'])
                p = self.sb.run("prioritize", "prds", "--format", "json",
                                env={"AGENTRUN_TEST_KEY": SECRET})
                self.assert_refused(p, rel)
                self.assertEqual(self.sb.calls(), [])
                os.unlink(os.path.join(self.sb.work, rel))

    def test_prioritize_reads_a_link_that_stays_in_the_folder(self):
        self.sb.write("prds/v2/billing.md", "# Billing\nInvoices.\n")
        self.link("v2/billing.md", "prds/billing.md")
        self.sb.answers("codex", [json.dumps({"recommendations": [
            {"prd_id": "auth", "priority": 1, "rationale": "r"},
            {"prd_id": "billing", "priority": 2, "rationale": "r"}]})])
        p = self.sb.run("prioritize", "prds", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Invoices.", self.sb.calls()[0]["stdin"])

    def test_prioritize_refuses_a_fifo_or_a_device_at_once(self):
        os.mkfifo(os.path.join(self.sb.work, "prds", "pipe.md"))
        self.link("/dev/zero", "prds/zero.txt")
        self.sb.answers("codex", ['{"recommendations": []}'])
        t0 = time.monotonic()
        p = self.sb.run("prioritize", "prds", "--format", "json", timeout=30)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("prds/pipe.md", p.stderr)
        self.assertIn("a FIFO", p.stderr)
        os.unlink(os.path.join(self.sb.work, "prds", "pipe.md"))
        p = self.sb.run("prioritize", "prds", "--format", "json", timeout=30)
        self.assert_refused(p, "prds/zero.txt")

    def test_a_process_substitution_is_named_a_fifo(self):
        # "--schema <(…)" is /dev/fd/N, a link to a pipe: refused as one, at once, with a
        # message that says so (not "No such file or directory").
        self.sb.answers("codex", ["{}"])
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        p = subprocess.run(["bash", "-c", '"$0" run --schema <(echo "{}") hi', AGENTRUN],
                           cwd=self.sb.work, env=e, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("/dev/fd/", p.stderr)
        self.assertIn("a FIFO", p.stderr)
        self.assertEqual(self.sb.calls(), [])

    def test_every_file_named_on_a_command_line_follows_the_rule(self):
        """Each reader of a user-named file: a link out of its folder is refused with a
        message naming it, before any call."""
        self.sb.write("templates/ok.md", "Say {{x}}.\n")
        self.sb.write("jobs.jsonl", json.dumps({"id": 1, "prompt": "hi",
                                                "schema": "cfg/schema.json"}) + "\n")
        cases = [
            ("run -f", "cfg/prompt.md", ["run", "-f", "cfg/prompt.md"]),
            ("run --schema", "cfg/schema.json", ["run", "--schema", "cfg/schema.json", "hi"]),
            ("run --var @", "cfg/var.txt", ["run", "-t", "ok", "--prompts-dir", "templates",
                                            "--var", "x=@cfg/var.txt"]),
            ("run --prompts-dir", "tpl/evil.md", ["run", "-t", "evil", "--prompts-dir", "tpl"]),
            ("prioritize --context", "cfg/context.md",
             ["prioritize", "prds", "--context", "cfg/context.md"]),
            ("route --manifest", "cfg/manifest.json",
             ["route", "--manifest", "cfg/manifest.json", "where"]),
            ("review --instructions", "cfg/rules.md",
             ["review", "--instructions", "cfg/rules.md", "change.diff"]),
            ("extract --schema", "cfg/schema.json", ["extract", "--schema", "cfg/schema.json",
                                                     "change.diff"]),
            ("extract FILE", "cfg/reply.md", ["extract", "cfg/reply.md"]),
            ("batch schema", "cfg/schema.json", ["batch", "jobs.jsonl"]),
            ("--prices", "cfg/prices.json", ["run", "--prices", "cfg/prices.json", "hi"]),
        ]
        self.sb.write("change.diff", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
        for name, rel, args in cases:
            with self.subTest(reader=name):
                path = os.path.join(self.sb.work, rel)
                if os.path.lexists(path):
                    os.unlink(path)
                self.link(self.outside, rel)
                self.sb.answers("codex", ["{}"])
                p = self.sb.run(*args)
                said = p.stdout if name == "batch schema" else p.stderr  # the job's record
                self.assertIn(rel, said)
                self.assertIn("a link out of its folder", said)
                self.assertNotEqual(p.returncode, 0)
                for call in self.sb.calls():
                    self.assertNotIn(SECRET, call.get("stdin", ""))
                os.unlink(path)


def codex_failed(message):
    lines = [{"type": "thread.started", "thread_id": "01a201a4-e6d7-7c03-9d63-00000000000f"},
             {"type": "turn.started"},
             {"type": "error", "message": message},
             {"type": "turn.failed", "error": {"message": message}}]
    return "".join(json.dumps(line) + "\n" for line in lines)


class WaitsTest(unittest.TestCase):
    """A wait a CLI asks for is read with overflow in mind (provider/common.c
    ar_pv_retry_after()): one no clock holds is past --max-wait, never an instant retry."""

    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def test_an_impossible_wait_is_no_retry(self):
        for msg in ("Rate limit reached. Please retry after 1e30 seconds.",
                    "Resource exhausted.\n  retryDelayMs: 1e400,\n  status: 429",
                    "Claude AI usage limit reached|99999999999999999999",
                    "Rate limit reached. Please try again in 99999999999999999999 hours."):
            with self.subTest(msg=msg):
                if os.path.exists(self.sb.state):
                    os.unlink(self.sb.state)
                if os.path.exists(self.sb.log):
                    os.unlink(self.sb.log)
                self.sb.env["FAKE_CLI_FIXTURE"] = ",".join(
                    self.sb.fixture(x) for x in (codex_failed(msg), codex_stream("again")))
                self.sb.env["FAKE_CLI_EXIT"] = "1,0"
                t0 = time.monotonic()
                p = self.sb.run("run", "--format", "json", "--max-wait", "60s", "x")
                self.assertLess(time.monotonic() - t0, 20)
                self.assertEqual(p.returncode, 4, p.stdout[-800:] + p.stderr[-800:])
                r = json.loads(p.stdout)
                self.assertEqual(r["error"]["code"], "rate_limit")
                self.assertEqual(len(r["calls"]), 1)
                self.assertEqual(len(self.sb.calls()), 1)
                self.assertNotIn("calling again", p.stderr)

    def test_a_wait_equal_to_max_wait_is_waited(self):
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join(self.sb.fixture(x) for x in (
            codex_failed("Rate limit reached. Please try again in 1s."), codex_stream("again")))
        self.sb.env["FAKE_CLI_EXIT"] = "1,0"
        p = self.sb.run("run", "--format", "json", "--max-wait", "1s", "x")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["calls"][1]["waited_ms"], 1000)


def gemini_deltas(*pieces):
    """gemini's stream-json with the answer streamed in `pieces`."""
    lines = [{"type": "init", "timestamp": "t", "session_id": "c0ffee00-0000-4000-8000-0000000000"
              "01", "model": "auto"}]
    lines += [{"type": "message", "timestamp": "t", "role": "assistant", "content": piece,
               "delta": True} for piece in pieces]
    lines.append({"type": "result", "timestamp": "t", "status": "success",
                  "stats": {"total_tokens": 15, "input_tokens": 10, "output_tokens": 5,
                            "cached": 0, "input": 10, "duration_ms": 1, "tool_calls": 0}})
    return "".join(json.dumps(line) + "\n" for line in lines)


class SecretsTest(unittest.TestCase):
    """Redaction works on what is stored (record/redact.c): cassettes never hold a secret,
    whole, split across a streamed answer's pieces, JSON-escaped or URL-encoded; the cache
    answers with exactly what the call returned, and keeps an answer holding a secret off
    the disk by not caching it."""

    QUOTED = 'pa"ss\\word-271828'  # a secret a CLI's JSON output escapes

    def setUp(self):
        self.sb = Sandbox()
        self.rec = os.path.join(self.sb.root, "cassettes")
        self.cache = os.path.join(self.sb.root, "cache")

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def stored(self, d):
        out = b""
        for root, _, files in os.walk(d):
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    out += fh.read()
        return out

    def test_a_cassette_never_holds_a_secret(self):
        env = {"DB_PASSWORD": self.QUOTED}
        self.sb.env["FAKE_CLI_FIXTURE"] = self.sb.fixture(gemini_deltas(
            "Your token is ghp_0123456", "789abcdefghijABCD and the password ",
            json.loads(json.dumps(self.QUOTED))[:5], self.QUOTED[5:] + ", and AIzaSyA-12345",
            "67890abcdefghijklmnopqrstu."))
        self.sb.env["FAKE_CLI_STDERR_TEXT"] = "GET /?p=pa%22ss%5Cword-271828 denied"
        live = self.sb.run("run", "--no-tools", "--format", "json", "--record", self.rec, "x",
                           provider="gemini", env=env)
        self.assertEqual(live.returncode, 0, live.stderr)
        self.assertIn("ghp_0123456789abcdefghijABCD", json.loads(live.stdout)["output"])
        data = self.stored(self.rec)
        self.assertTrue(data)
        for piece in (b"ghp_0123456", b"789abcdefghijABCD", b"pa\\\"ss", b"ss\\\\word",
                      b"AIzaSyA-12345", b"67890abcdefghijklmnopqrstu", b"pa%22ss%5Cword"):
            self.assertNotIn(piece, data)
        replay = self.sb.run("run", "--no-tools", "--format", "json", "--replay", self.rec, "x",
                             provider="gemini", env=env)
        self.assertEqual(replay.returncode, 0, replay.stderr)
        out = json.loads(replay.stdout)["output"]
        self.assertEqual(out, "Your token is [REDACTED] and the password [REDACTED], and "
                              "[REDACTED].")

    def cached_run(self, env):
        p = self.sb.run("run", "--no-tools", "--format", "json", "--cache", "--cache-dir",
                        self.cache, "explain the query", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_the_cache_answers_with_exactly_what_the_call_returned(self):
        env = {"POSTGRES_PASSWORD": "postgres"}
        self.sb.answers("codex", ["Run the postgres query."])
        first, second = self.cached_run(env), self.cached_run(env)
        self.assertEqual(first["output"], "Run the postgres query.")
        self.assertEqual(second["output"], "Run the postgres query.")
        # Holding a secret, it was not cached: the secret never reached the disk.
        self.assertFalse(second["cached"])
        self.assertEqual(len(self.sb.calls()), 2)
        self.assertNotIn(b"postgres", self.stored(self.cache))
        # An answer without one is cached, and served byte for byte.
        self.sb.answers("codex", ['Run the "mysql" query.\n\tDone.'])
        os.unlink(self.sb.state)
        first = self.cached_run(env)
        second = self.cached_run(env)
        self.assertTrue(second["cached"])
        self.assertEqual(second["output"], first["output"])
        self.assertEqual(second["output"], 'Run the "mysql" query.\n\tDone.')

    def test_cache_files_are_readable_by_the_user_only(self):
        self.sb.answers("codex", ["fine"])
        self.cached_run({})
        calls = os.path.join(self.cache, "calls")
        for d in (self.cache, calls):
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700, d)
        entries = os.listdir(calls)
        self.assertEqual(len(entries), 1)
        for e in entries:
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(calls, e)).st_mode), 0o600)


class OutputFileTest(unittest.TestCase):
    """An output file has one writer (util/file.c ar_file_open_writer()): a second
    agentrun on it fails at once; a record is written whole or not at all."""

    def setUp(self):
        self.sb = Sandbox()
        self.out = os.path.join(self.sb.root, "results.jsonl")
        self.jobs = "".join(json.dumps({"id": f"j{i}", "prompt": f"job {i}"}) + "\n"
                            for i in range(3))
        self.sb.answers("codex", ["done"])

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def start(self, *args):
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_SLEEP_MS="700")
        jobs = self.sb.write("jobs.jsonl", self.jobs, base=self.sb.root)
        return subprocess.Popen([AGENTRUN, "batch", "-j", "1", *args, jobs], cwd=self.sb.work,
                                env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def records(self):
        with open(self.out) as f:
            return [json.loads(line) for line in f if line.strip()]

    def test_a_second_writer_fails_at_once(self):
        for args in (["--resume", "-o", self.out], ["-o", self.out]):
            with self.subTest(args=args):
                if os.path.exists(self.out):
                    os.unlink(self.out)
                first = self.start(*args)
                deadline = time.monotonic() + 20
                while not self.sb.calls() and time.monotonic() < deadline:
                    time.sleep(0.05)
                t0 = time.monotonic()
                second = self.sb.run("batch", *args, "-", input=self.jobs, timeout=60)
                self.assertLess(time.monotonic() - t0, 5)
                self.assertEqual(second.returncode, 2, second.stderr)
                self.assertIn("being written by another agentrun", second.stderr)
                first.communicate(timeout=60)
                self.assertEqual(first.returncode, 0)
                self.assertEqual(sorted(r["id"] for r in self.records()), ["j0", "j1", "j2"])
                os.unlink(self.sb.state)
                os.unlink(self.sb.log)

    def test_a_resume_rewrite_uses_its_own_temporary_name(self):
        with open(self.out, "w") as f:
            f.write(json.dumps({"id": "j0", "ok": True}) + "\n")
        # A leftover of the old fixed name is not the rewrite's: never followed, never reused.
        decoy = self.out + ".agentrun-tmp"
        os.symlink(os.path.join(self.sb.root, "elsewhere"), decoy)
        p = self.sb.run("batch", "--resume", "-o", self.out, "-", input=self.jobs)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.sb.root, "elsewhere")))
        self.assertEqual(sorted(r["id"] for r in self.records()), ["j0", "j1", "j2"])
        leftovers = [n for n in os.listdir(self.sb.root) if n.startswith("results.jsonl.")]
        self.assertEqual(leftovers, ["results.jsonl.agentrun-tmp"])

    def test_a_failed_record_write_leaves_the_file_as_it_was(self):
        before = json.dumps({"id": "old", "ok": True}) + "\n"
        with open(self.out, "w") as f:
            f.write(before)
        limit = len(before) + 200  # a full disk: far less than one RunResult

        def small_disk():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        p = subprocess.run([AGENTRUN, "batch", "-o", self.out, "-"], cwd=self.sb.work, env=e,
                           input=self.jobs, capture_output=True, text=True, timeout=60,
                           preexec_fn=small_disk)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("cannot write a record", p.stderr)
        with open(self.out) as f:
            self.assertEqual(f.read(), before)


    def test_a_failed_resume_rewrite_leaves_the_file_as_it_was(self):
        # The rewrite drops a record --resume runs again; a full disk stops it whole.
        before = "".join(json.dumps({"id": i, "ok": ok, "pad": "x" * 800}) + "\n"
                         for i, ok in (("j0", True), ("j1", False)))
        with open(self.out, "w") as f:
            f.write(before)
        limit = 600  # less than the rewrite's one record of 830 bytes

        def small_disk():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        p = subprocess.run([AGENTRUN, "batch", "--resume", "-o", self.out, "-"], cwd=self.sb.work,
                           env=e, input=self.jobs, capture_output=True, text=True, timeout=60,
                           preexec_fn=small_disk)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.count("cannot rewrite"), 1, p.stderr)
        self.assertIn("--resume", p.stderr)
        self.assertEqual(self.sb.calls(), [])
        with open(self.out) as f:
            self.assertEqual(f.read(), before)
        self.assertEqual([n for n in os.listdir(self.sb.root) if n.startswith("results.jsonl.")],
                         [])


class RefusalsTest(unittest.TestCase):
    """A tool call the CLI refused is `denied` (exit 4) in every form each CLI has, from
    the recordings of the real CLIs (tests/fixtures/*/…-write-outside, …-policy-deny)."""

    CASES = [("claude", "stream-tool-write-outside.jsonl", None),
             ("codex", "json-tool-write-outside.jsonl", "json-tool-write-outside.stderr"),
             ("gemini", "stream-tool-write-outside.jsonl", None),
             ("gemini", "stream-tool-policy-deny.jsonl", None),
             ("gemini", "stream-tool-default.jsonl", None)]

    def test_a_refused_write_is_denied(self):
        fixtures = os.path.join(SOURCE_ROOT, "tests", "fixtures")
        for cli, out, err in self.CASES:
            with self.subTest(cli=cli, fixture=out):
                with Sandbox() as sb:
                    sb.env["FAKE_CLI_FIXTURE"] = os.path.join(fixtures, cli, out)
                    if err:
                        sb.env["FAKE_CLI_STDERR_FIXTURE"] = os.path.join(fixtures, cli, err)
                    p = sb.run("run", "--allow-edits", "--format", "json", "write it",
                               provider=cli)
                    self.assertEqual(p.returncode, 4, p.stdout[-1500:])
                    r = json.loads(p.stdout)
                    self.assertEqual(r["error"]["code"], "denied")
                    self.assertTrue(r["denied"])


class GitSeenChangesTest(unittest.TestCase):
    """A call whose files changed in git's eyes is never made again nor handed to a
    fallback provider, whether the CLI reported the change or not (run/pipeline.c)."""

    def setUp(self):
        self.sb = Sandbox()
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join(self.sb.fixture(x) for x in (
            codex_failed("Rate limit reached. Please try again in 0.2s."), codex_stream("again")))
        self.sb.env["FAKE_CLI_EXIT"] = "1,0"

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def test_an_unreported_change_stops_the_retry(self):
        for extra in ([], ["--max-wait", "0", "--fallback", "gemini"]):
            with self.subTest(extra=extra):
                for f in (self.sb.state, self.sb.log, os.path.join(self.sb.work, "made.txt")):
                    if os.path.exists(f):
                        os.unlink(f)
                # The CLI writes a file and says nothing of it in its stream.
                p = self.sb.run("run", "--allow-edits", "--format", "json", *extra, "fix it",
                                env={"FAKE_CLI_WRITE_FILES_0": "made.txt=half done"})
                self.assertEqual(p.returncode, 4, p.stderr)
                r = json.loads(p.stdout)
                self.assertEqual(r["error"]["code"], "rate_limit")
                self.assertIn("not retried or handed to a fallback provider", r["error"]["message"])
                self.assertEqual([f["path"] for f in r["files"]], ["made.txt"])
                self.assertEqual(len(self.sb.calls()), 1)

    def test_without_a_change_the_call_is_made_again(self):
        p = self.sb.run("run", "--allow-edits", "--format", "json", "fix it")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(self.sb.calls()), 2)


class TempFilesTest(unittest.TestCase):
    """A call's private home and files (util/temp.h) are never readable by others, and
    what an agentrun killed with SIGKILL left is removed by the next one."""

    def setUp(self):
        self.sb = Sandbox()
        self.tmp = os.path.join(self.sb.root, "tmp")
        os.mkdir(self.tmp)
        self.sb.env["TMPDIR"] = self.tmp
        # The user's gemini settings, which the private home copies.
        self.sb.env["HOME"] = os.path.join(self.sb.root, "home")
        self.sb.write(".gemini/settings.json", '{"ui": {"theme": "x"}}', base=self.sb.env["HOME"])

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def age_the_stamp(self, seconds):
        stamp = os.path.join(self.tmp, "agentrun-swept-%d" % os.getuid())
        self.assertTrue(os.path.isfile(stamp))  # the killed call's own start swept
        t = time.time() - seconds
        os.utime(stamp, (t, t))

    def ours(self):
        return sorted(n for n in os.listdir(self.tmp) if n.startswith("agentrun-")
                      and not n.startswith("agentrun-swept-"))

    def test_what_a_killed_agentrun_left_is_swept_at_the_next_start(self):
        # codex: its instructions file is a temporary file of every call (gemini's private
        # home is kept, not temporary: the test below). The next agentrun sweeps at its
        # first call, also when that call makes no temporary file of its own (gemini's),
        # once no sweep began in the last minute (the stamp agentrun-swept-<uid>).
        for then in ("gemini", "codex"):
            with self.subTest(next_call=then):
                left = self.kill_a_codex_call()
                self.sb.answers(then, ["fine", "fine"])
                self.age_the_stamp(30)  # a sweep began 30 s ago: this start leaves them
                q = self.sb.run("run", "--no-tools", "--format", "json", "hi", provider=then)
                self.assertEqual(q.returncode, 0, q.stderr)
                self.assertEqual(self.ours(), left)
                self.age_the_stamp(61)
                q = self.sb.run("run", "--no-tools", "--format", "json", "hi", provider=then)
                self.assertEqual(q.returncode, 0, q.stderr)
                self.assertEqual(self.ours(), [])
                self.assertTrue(os.path.exists(os.path.join(self.sb.env["HOME"], ".gemini",
                                                            "settings.json")))

    def kill_a_codex_call(self):
        for f in (self.sb.state, self.sb.log):
            if os.path.exists(f):
                os.unlink(f)
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1")
        p = subprocess.Popen([AGENTRUN, "run", "--no-tools", "--format", "json", "hi"],
                             cwd=self.sb.work, env=e, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not self.sb.calls() and time.monotonic() < deadline:
            time.sleep(0.05)
        call = self.sb.calls()[0]
        left = self.ours()
        self.assertTrue(left)
        for name in left:
            path = os.path.join(self.tmp, name)
            st = os.lstat(path)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o700 if stat.S_ISDIR(st.st_mode)
                             else 0o600, name)
        self.assertTrue([n for n in left if n.startswith("agentrun-instructions-")], left)
        p.send_signal(signal.SIGKILL)
        p.wait()
        os.killpg(call["pgid"], signal.SIGKILL)
        deadline = time.monotonic() + 10
        while alive(call["pid"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.ours(), left)  # a kill leaves them: nobody ran the cleanup
        os.unlink(self.sb.state)
        os.unlink(self.sb.log)
        return left

    def test_geminis_kept_home_is_the_users_alone(self):
        # The private home holds a copy of the user's settings; it is kept for the next
        # call (its path opens every request), under the user's cache directory, 0700/0600.
        self.sb.answers("gemini", ["fine"])
        p = self.sb.run("run", "--no-tools", "--format", "json", "hi", provider="gemini")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.ours(), [])
        root = os.path.join(self.sb.env["XDG_CACHE_HOME"], "agentrun", "gemini-home")
        # Beside the home, the empty directory untrusted text calls run in (issue 56).
        homes = sorted(os.listdir(root))
        self.assertEqual(len(homes), 2, homes)
        self.assertEqual(homes[0], "empty")
        self.assertEqual(os.listdir(os.path.join(root, "empty")), [])
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(root, "empty")).st_mode), 0o700)
        homes = homes[1:]
        for d in (root, os.path.join(root, homes[0]), os.path.join(root, homes[0], ".gemini")):
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700, d)
        for f in (".gemini/settings.json", "system.md"):
            st = os.stat(os.path.join(root, homes[0], f))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o600, f)


class TerminalOutputTest(unittest.TestCase):
    """Text output shows a model's terminal control sequences and never sends them
    (cli/terminal.h: caret notation, ESC as ^[); JSON output keeps the bytes."""

    EVIL = "\x1b[2J\x1b]0;pwned\x07ok\rfake \x1b[32mPASS\x1b[0m \u009b1A"
    SHOWN = "^[[2J^[]0;pwned^Gok^Mfake ^[[32mPASS^[[0m M-^[1A"

    def setUp(self):
        self.sb = Sandbox()
        self.sb.write("app.c", "int main(void) { return 0; }\n")
        self.sb.write("prds/auth.md", "# Auth\n")

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def assert_shown(self, out):
        self.assertNotIn("\x1b", out)
        self.assertNotIn("\x07", out)
        self.assertNotIn("\r", out)
        self.assertNotIn("\u009b", out)

    def test_run_text_shows_json_keeps(self):
        self.sb.answers("codex", [self.EVIL])
        p = self.sb.run("run", "hi")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.SHOWN + "\n")
        self.sb.answers("codex", [self.EVIL])
        p = self.sb.run("run", "--format", "json", "hi")
        self.assertEqual(json.loads(p.stdout)["output"], self.EVIL)

    def test_every_text_format_shows_them(self):
        review = json.dumps({"passed": False, "summary": "S " + self.EVIL, "issues": [
            {"file": "app.c", "line": 1, "severity": "high", "message": "M " + self.EVIL}]})
        ranking = json.dumps({"recommendations": [{"prd_id": "auth", "priority": 1,
                                                   "rationale": "R " + self.EVIL}],
                              "summary": "S " + self.EVIL})
        route = json.dumps([{"type": "task", "name": "customer-portal", "confidence": 0.9,
                             "reasoning": "R " + self.EVIL}])
        manifest = os.path.join(SOURCE_ROOT, "tests", "fixtures", "route", "manifest.json")
        cases = [("review text", review, ["review", "--format", "text"]),
                 ("review github", review, ["review", "--format", "github"]),
                 ("prioritize text", ranking, ["prioritize", "prds", "--format", "text"]),
                 ("prioritize markdown", ranking, ["prioritize", "prds", "--format",
                                                   "markdown"]),
                 ("route", route, ["route", "--manifest", manifest, "--format", "text",
                                   "where are old orders"])]
        for name, answer, args in cases:
            with self.subTest(format=name):
                if os.path.exists(self.sb.state):
                    os.unlink(self.sb.state)
                self.sb.answers("codex", [answer])
                p = self.sb.run(*args)
                self.assertIn("^[[32mPASS", p.stdout, p.stderr[-1000:])
                self.assert_shown(p.stdout)

    def test_diagnostics_show_them(self):
        self.sb.env["FAKE_CLI_FIXTURE"] = self.sb.fixture(codex_failed("boom " + self.EVIL))
        self.sb.env["FAKE_CLI_EXIT"] = "1"
        p = self.sb.run("run", "--max-wait", "0", "hi")
        self.assertEqual(p.returncode, 4)
        self.assertIn("^[[32mPASS", p.stderr)
        self.assert_shown(p.stderr)


class TemplateTest(unittest.TestCase):
    def test_a_nul_in_a_template_is_a_template_error(self):
        with Sandbox() as sb:
            path = os.path.join(sb.work, "tpl", "t.md")
            os.makedirs(os.path.dirname(path))
            with open(path, "wb") as f:
                f.write(b"Line one.\nSay {{x}}\x00 now.\n")
            sb.answers("codex", ["fine"])
            p = sb.run("run", "--prompts-dir", "tpl", "-t", "t", "--var", "x=hi")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("t.md:2", p.stderr)
            self.assertIn("NUL", p.stderr)
            self.assertEqual(sb.calls(), [])


class PromptIsDataTest(unittest.TestCase):
    """A prompt reaches the CLI as data in every call, trusted or not (issue 56): what the
    checkout may load is --trust-project's, how the prompt's text is read is not."""

    def test_a_leading_slash_is_never_a_command(self):
        with Sandbox() as sb:
            for args in (["/evil-cmd do it"], ["--trust-project", "/evil-cmd do it"]):
                with self.subTest(args=args):
                    if os.path.exists(sb.log):
                        os.unlink(sb.log)
                    sb.answers("gemini", ["fine"])
                    p = sb.run("run", *args, provider="gemini")
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(sb.calls()[0]["stdin"], "\n/evil-cmd do it")

    def test_claude_gets_the_prompt_as_one_client_composed_message(self):
        # claude expands "@/path" and runs "/commands" in prompt text; a stream-json message
        # marked client_composed is delivered as written (the fake decodes it as claude does).
        with Sandbox() as sb:
            for args in (["/evil-cmd see @/etc/passwd"],
                         ["--trust-project", "/evil-cmd see @/etc/passwd"]):
                with self.subTest(args=args):
                    if os.path.exists(sb.log):
                        os.unlink(sb.log)
                    sb.answers("claude", ["fine"])
                    p = sb.run("run", *args, provider="claude")
                    self.assertEqual(p.returncode, 0, p.stderr)
                    call = sb.calls()[0]
                    self.assertEqual(call["stdin"], "/evil-cmd see @/etc/passwd")
                    self.assertEqual(call["stdin_format"], "stream-json")
                    self.assertTrue(call["client_composed"])
                    self.assertIn("--input-format", call["argv"])

    def test_a_claude_too_old_to_take_the_prompt_as_data_is_never_started(self):
        with Sandbox() as sb:
            sb.answers("claude", ["fine"])
            p = sb.run("run", "--format", "json", "hi", provider="claude",
                       env=dict(sb.env, FAKE_CLI_VERSION="2.1.247 (Claude Code)"))
            self.assertEqual(p.returncode, 4, p.stderr)
            self.assertEqual(sb.calls(), [])
            err = json.loads(p.stdout)["error"]
            self.assertEqual(err["code"], "cli_failed")
            self.assertIn("claude 2.1.247 (Claude Code) is too old", err["message"])
            self.assertIn("2.1.248 or later", err["message"])

    def test_auto_passes_over_a_claude_too_old_and_says_so(self):
        with Sandbox() as sb:
            sb.answers("codex", ["fine"])
            p = sb.run("run", "--format", "json", "hi", provider="auto",
                       env=dict(sb.env, FAKE_CLI_VERSION="2.1.247 (Claude Code)"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["provider"], "codex")
            self.assertIn("claude: too old, using codex", p.stderr)
            self.assertEqual([c["argv0"] for c in sb.calls()], ["codex"])

    def test_gemini_untrusted_text_calls_run_where_nothing_can_be_named(self):
        # gemini reads what "@path" names inside its workspace, whatever the tools: an
        # untrusted text call runs in an empty directory of its own; read calls and trusted
        # ones in the checkout.
        with Sandbox() as sb:
            cwds = {}
            for name, args in (("text", ["--no-tools"]), ("read", []),
                               ("trusted", ["--no-tools", "--trust-project"])):
                if os.path.exists(sb.log):
                    os.unlink(sb.log)
                sb.answers("gemini", ["fine"])
                p = sb.run("run", *args, "see @./", provider="gemini")
                self.assertEqual(p.returncode, 0, p.stderr)
                cwds[name] = sb.calls()[0]["cwd"]
            empty = os.path.join(sb.env["XDG_CACHE_HOME"], "agentrun", "gemini-home", "empty")
            self.assertEqual(cwds["text"], os.path.realpath(empty))
            self.assertEqual(os.listdir(empty), [])
            self.assertEqual(cwds["read"], os.path.realpath(sb.work))
            self.assertEqual(cwds["trusted"], os.path.realpath(sb.work))


if __name__ == "__main__":
    unittest.main()
