"""agentrun batch with the fake CLI (issue 9)."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (AGENTRUN, Sandbox, alive, claude_rejected_stream, claude_stream,  # noqa: E402
                     codex_stream)

FIXTURES = os.path.join(os.environ.get("AGENTRUN_SOURCE_ROOT", "."), "tests", "fixtures")


def records(text):
    out = []
    for line in text.splitlines():
        out.append(json.loads(line))  # every line must be whole, valid JSON
    return out


def jobs(n, **extra):
    return "".join(json.dumps(dict({"id": f"job{i}", "prompt": f"prompt {i}"}, **extra)) + "\n"
                   for i in range(n))


class Batch(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def batch(self, text, *args, **kw):
        return self.sb.run("batch", *args, "-", input=text, **kw)

    def test_200_jobs_16_at_once_every_id_exactly_once(self):
        self.sb.answers("codex", ["done"])
        p = self.batch(jobs(200), "-j", "16", "--no-files", timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        recs = records(p.stdout)
        self.assertEqual(sorted(r["id"] for r in recs), sorted(f"job{i}" for i in range(200)))
        self.assertTrue(all(r["ok"] and r["schema"] == "agentrun.run/1" for r in recs))
        self.assertEqual(len(self.sb.calls()), 200)
        self.assertIn("200 ok, 0 failed", p.stderr)

    def test_records_come_in_order_of_completion(self):
        self.sb.answers("codex", ["x"])
        # Whichever job makes the first call is slow: its record must come last.
        self.sb.env["FAKE_CLI_SLEEP_MS_0"] = "600"
        p = self.batch(jobs(2), "-j", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        slow = next(c for c in self.sb.calls() if c["call"] == 0)["stdin"].split()[-1]
        self.assertEqual(records(p.stdout)[-1]["id"], f"job{slow}")

    def test_bad_lines_become_error_records_and_the_batch_goes_on(self):
        self.sb.answers("codex", ["fine"])
        text = (json.dumps({"id": "good", "prompt": "x"}) + "\n"
                + json.dumps({"id": "typo", "promt": "x"}) + "\n"
                + "this is not json\n"
                + json.dumps({"prompt": "no id"}) + "\n"
                + "\n"
                + json.dumps({"id": "good", "prompt": "again"}) + "\n"
                + json.dumps({"id": "both", "prompt": "x", "template": "review"}) + "\n")
        p = self.batch(text)
        self.assertEqual(p.returncode, 2, p.stderr)
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertTrue(recs["good"]["ok"])
        self.assertIn("line 2: unknown key 'promt'", recs["typo"]["error"]["message"])
        self.assertIn("line 3: invalid JSON", recs["line 3"]["error"]["message"])
        self.assertIn("missing 'id'", recs["line 4"]["error"]["message"])
        self.assertIn("exactly one of 'prompt' and 'template'", recs["both"]["error"]["message"])
        self.assertEqual(recs["typo"]["error"]["code"], "usage")
        self.assertEqual(len(self.sb.calls()), 1)
        dup = [r for r in records(p.stdout) if "used twice" in (r["error"] or {}).get("message", "")]
        self.assertEqual(len(dup), 1)
        # Each bad line is said on stderr too, not only in its record (issue 31).
        for words in ("line 2: unknown key 'promt'", "line 3: invalid JSON", "missing 'id'",
                      "used twice", "exactly one of 'prompt' and 'template'"):
            self.assertIn("agentrun: error: line ", p.stderr)
            self.assertIn(words, p.stderr)
        self.assertIn("5 failed (5 bad lines)", p.stderr)

    def test_a_mistyped_key_or_provider_gets_a_did_you_mean(self):
        # Issue 59: `provder` in a job line had no did-you-mean.
        text = (json.dumps({"id": "a", "prompt": "x", "provder": "codex"}) + "\n"
                + json.dumps({"id": "b", "prompt": "x", "provider": "gemni"}) + "\n"
                + json.dumps({"id": "c", "prompt": "x", "frobnicate": 1}) + "\n")
        p = self.batch(text)
        self.assertEqual(p.returncode, 2, p.stderr)
        recs = {r["id"]: r["error"]["message"] for r in records(p.stdout)}
        self.assertEqual(recs["a"], "line 1: unknown key 'provder'; did you mean 'provider'?")
        self.assertEqual(recs["b"], "line 2: unknown provider 'gemni' (claude, codex, gemini, "
                         "auto); did you mean 'gemini'?")
        self.assertEqual(recs["c"], "line 3: unknown key 'frobnicate'")
        for m in recs.values():
            self.assertIn("agentrun: error: " + m + "\n", p.stderr)

    def test_failed_jobs_say_each_cause_once_first_then_count(self):
        # Issue 59: a batch whose jobs all failed said only "30 failed"; now the cause, once,
        # with its fix, and the count of the others.
        self.sb.env["FAKE_CLI_FIXTURE"] = os.path.join(
            os.path.abspath(os.environ.get("AGENTRUN_SOURCE_ROOT", ".")), "tests", "fixtures",
            "claude", "stream-not-logged-in.jsonl")
        self.sb.env["FAKE_CLI_EXIT"] = "1"
        bad = "".join(json.dumps({"id": "bad%d" % i, "promt": "x"}) + "\n" for i in range(25))
        p = self.batch(jobs(30) + bad, "-j", "4", provider="claude")
        self.assertEqual(p.returncode, 4, p.stderr)
        lines = p.stderr.splitlines()
        cause = [l for l in lines if "is not logged in" in l]
        self.assertEqual(len(cause), 1, p.stderr)
        self.assertRegex(cause[0], r"^agentrun: error: job job\d+: auth: claude is not logged in")
        self.assertIn("; or use another CLI: -p codex or -p gemini", cause[0])
        self.assertIn("agentrun: error: … and 29 more jobs failed with a cause said above", p.stderr)
        # Bad lines: one line each, a screenful, then a count; the cause is said whether it
        # comes before them or after.
        said = [l for l in lines if "unknown key 'promt'" in l]
        self.assertEqual(len(said), 20, p.stderr)
        self.assertIn("agentrun: error: … and 5 more failed jobs and bad lines", p.stderr)
        self.assertIn("55 failed (25 bad lines)", p.stderr)
        # Every record still says why.
        self.assertEqual(len(records(p.stdout)), 55)

    def test_integer_ids_stay_integers_and_resume_by_them(self):
        self.sb.answers("codex", ["ok"])
        text = json.dumps({"id": 7, "prompt": "x"}) + "\n" + json.dumps({"id": "b", "prompt": "y"}) + "\n"
        p = self.batch(text)
        self.assertEqual(p.returncode, 0, p.stderr)
        ids = sorted((r["id"] for r in records(p.stdout)), key=str)
        self.assertEqual(ids, [7, "b"])
        prev = self.sb.write("prev.jsonl", p.stdout, base=self.sb.root)
        p = self.batch(text, "--resume-from", prev)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertIn("2 skipped", p.stderr)

    def test_resume_from_skips_finished_ids_and_reruns_failed_ones(self):
        self.sb.answers("codex", ["ok"])
        self.sb.env["FAKE_CLI_EXIT_1"] = "1"
        self.sb.env["FAKE_CLI_STDOUT_TEXT_1"] = ""
        self.sb.env["FAKE_CLI_FIXTURE_1"] = "/dev/null"
        p = self.batch(jobs(3), "-j", "1")
        self.assertEqual(p.returncode, 4, p.stderr)
        first = records(p.stdout)
        failed = [r["id"] for r in first if not r["ok"]]
        self.assertEqual(failed, ["job1"])
        prev = self.sb.write("prev.jsonl", p.stdout, base=self.sb.root)
        for k in ("FAKE_CLI_EXIT_1", "FAKE_CLI_STDOUT_TEXT_1", "FAKE_CLI_FIXTURE_1"):
            del self.sb.env[k]
        p = self.batch(jobs(3), "--resume-from", prev)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([r["id"] for r in records(p.stdout)], ["job1"])
        self.assertIn("2 skipped", p.stderr)

    def test_output_file_cut_off_by_a_crash_gets_its_next_record_on_a_new_line(self):
        # A batch killed mid-record leaves a line without its newline; appending
        # to it must not glue the next record onto that garbage.
        self.sb.answers("codex", ["ok"])
        out = self.sb.write("out.jsonl", '{"id":"job0","ok":true}\n{"id":"job1","sch',
                            base=self.sb.root)
        p = self.batch(jobs(1, id="job2"), "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as f:
            lines = f.read().split("\n")
        self.assertEqual(lines[1], '{"id":"job1","sch')
        self.assertEqual(json.loads(lines[2])["id"], "job2")
        p = self.batch(jobs(1, id="job2"), "--resume-from", out)
        self.assertEqual(p.stdout, "")
        self.assertIn("1 skipped", p.stderr)

    def test_sigint_keeps_finished_records_and_leaves_no_process(self):
        self.sb.answers("codex", ["quick"])
        # Calls 0 and 1 answer at once; every later call hangs.
        self.sb.env["FAKE_CLI_HANG"] = "0,0,1"
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        path = self.sb.write("jobs.jsonl", jobs(6), base=self.sb.root)
        proc = subprocess.Popen([AGENTRUN, "batch", "-j", "2", path], cwd=self.sb.work, env=e,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 20
        while len(self.sb.calls()) < 4 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130, err)
        recs = records(out)
        ok = [r for r in recs if r["ok"]]
        self.assertEqual(len(ok), 2)
        interrupted = [r for r in recs if not r["ok"]]
        self.assertTrue(all(r["error"]["code"] == "interrupted" for r in interrupted))
        for call in self.sb.calls():
            self.assertFalse(alive(call["pid"]), f"job process {call['pid']} survived")

    def popen_batch(self, *args):
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        return subprocess.Popen([AGENTRUN, "batch", *args, "-"], cwd=self.sb.work, env=e,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def test_a_slow_producer_gets_each_record_before_it_ends(self):
        # Issue 51: jobs stream in, records stream out; the summary comes at EOF.
        self.sb.answers("codex", ["streamed"])
        proc = self.popen_batch("-j", "2", "--no-files")
        wrote = []

        def produce():
            for i in range(6):
                proc.stdin.write((json.dumps({"id": f"s{i}", "prompt": "p"}) + "\n").encode())
                proc.stdin.flush()
                wrote.append(time.monotonic())
                time.sleep(0.5)
            proc.stdin.write(b"not json\n")
            proc.stdin.close()
            wrote.append(time.monotonic())

        producer = threading.Thread(target=produce)
        producer.start()
        first = proc.stdout.readline()
        got_first = time.monotonic()
        rest = proc.stdout.read()
        producer.join()
        err = proc.stderr.read().decode()
        proc.wait(timeout=30)
        self.assertEqual(proc.returncode, 2, err)  # the bad line is a usage error
        # The first record is out long before the producer is done (3 s of jobs).
        self.assertLess(got_first, wrote[-1] - 1.5, "the first record waited for the input's end")
        self.assertEqual(json.loads(first)["id"], "s0")
        recs = records((first + rest).decode())
        self.assertEqual([r["id"] for r in recs], [f"s{i}" for i in range(6)] + ["line 7"])
        self.assertIn("6 ok, 1 failed", err)

    def test_input_waiting_for_a_slot_is_bounded(self):
        # -j 1 and a job that hangs: agentrun reads at most 2 waiting jobs (and a chunk),
        # so a producer of 2 MiB of jobs blocks on the full pipe instead of being read whole.
        self.sb.answers("codex", ["x"])
        self.sb.env["FAKE_CLI_HANG"] = "1"
        proc = self.popen_batch("-j", "1", "--no-files")
        written = [0]
        pad = "x" * 1000

        def produce():
            try:
                for i in range(2000):
                    proc.stdin.write((json.dumps({"id": i, "prompt": pad}) + "\n").encode())
                    written[0] = i + 1
                proc.stdin.close()
            except BrokenPipeError:
                pass

        producer = threading.Thread(target=produce, daemon=True)
        producer.start()
        deadline = time.time() + 20
        while not self.sb.calls() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        self.assertLess(written[0], 400, "the whole input was read while no slot was free")
        self.assertEqual(len(self.sb.calls()), 1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        producer.join(timeout=10)
        self.assertEqual(proc.returncode, 130, err)
        recs = records(out.decode())
        self.assertEqual([r["id"] for r in recs], [0])
        self.assertEqual(recs[0]["error"]["code"], "interrupted")

    def test_fallback_on_eligible_failures(self):
        cases = {"auth": "json-error-401.jsonl", "rate_limit": "json-error-429.jsonl",
                 "api_error": "json-error-500.jsonl"}
        for code, fixture in cases.items():
            with self.subTest(code=code), Sandbox() as sb:
                sb.env["FAKE_CLI_FIXTURE"] = os.path.join(FIXTURES, "codex", fixture) + "," + \
                    sb.fixture(claude_stream("from claude"))
                sb.env["FAKE_CLI_EXIT"] = "1,0"
                line = json.dumps({"id": "a", "prompt": "x", "provider": "codex",
                                   "fallback": ["claude"]}) + "\n"
                # --max-wait 0: no retry of codex first, straight to the fallback.
                p = sb.run("batch", "--max-wait", "0", "-", input=line)
                self.assertEqual(p.returncode, 0, p.stderr)
                r = records(p.stdout)[0]
                self.assertEqual(r["provider"], "claude")
                self.assertEqual([c["provider"] for c in r["calls"]], ["codex", "claude"])
                self.assertEqual(r["calls"][0]["error"], code)

    def test_no_fallback_on_contract_failure_or_timeout(self):
        self.sb.answers("codex", ["prose", "prose"])
        line = json.dumps({"id": "c", "prompt": "x", "json": True, "fallback": "claude"}) + "\n"
        p = self.batch(line)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual({c["provider"] for c in records(p.stdout)[0]["calls"]}, {"codex"})
        # Hanging before its final event: a CLI that already answered and then
        # lingers is ended by the final grace and counts as done.
        self.sb.env["FAKE_CLI_FIXTURE"] = ""
        self.sb.env["FAKE_CLI_HANG"] = "1"
        line = json.dumps({"id": "t", "prompt": "x", "timeout": 0.3, "fallback": "claude"}) + "\n"
        p = self.batch(line)
        self.assertEqual(p.returncode, 5, p.stderr)
        r = records(p.stdout)[0]
        self.assertEqual(r["error"]["code"], "timeout")
        self.assertEqual([c["provider"] for c in r["calls"]], ["codex"])

    # issue 46: a quota refused past --max-wait refuses the provider's later jobs without a call
    def test_a_quota_refused_past_max_wait_fails_the_providers_later_jobs_without_a_call(self):
        # -j 1: claude's first call is refused until a reset 2 h away; the other three claude
        # jobs fail rate_limit without calling it, and the codex job between them still runs.
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join((
            self.sb.fixture(claude_rejected_stream(7200)), self.sb.fixture(codex_stream("from codex"))))
        self.sb.env["FAKE_CLI_EXIT"] = "1,0"
        lines = [{"id": f"c{i}", "prompt": f"p{i}", "provider": "claude"} for i in range(4)]
        lines.insert(2, {"id": "x", "prompt": "px", "provider": "codex"})
        t0 = time.monotonic()
        p = self.batch("".join(json.dumps(l) + "\n" for l in lines), "-j", "1", "--max-wait", "1s")
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(p.returncode, 4, p.stderr)
        rs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(rs["x"]["output"], "from codex")
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude", "codex"])
        first = rs["c0"]
        self.assertEqual(first["error"]["code"], "rate_limit")
        self.assertEqual(len(first["calls"]), 1)
        resets_at = first["rate_limit"]["resets_at"]
        for i in (1, 2, 3):
            r = rs[f"c{i}"]
            self.assertEqual(r["error"]["code"], "rate_limit")
            self.assertEqual(r["calls"], [])
            self.assertIn("no call was made", r["error"]["message"])
            self.assertIn(resets_at, r["error"]["message"])
            self.assertGreater(r["error"]["retry_after_s"], 7000)
        # --resume-from runs them again (they are failures), and no longer refused.
        prev = self.sb.write("prev.jsonl", p.stdout, base=self.sb.root)
        self.sb.env["FAKE_CLI_FIXTURE"] = self.sb.fixture(claude_stream("after the reset"))
        self.sb.env["FAKE_CLI_EXIT"] = "0"
        text = "".join(json.dumps(l) + "\n" for l in lines)
        p = self.batch(text, "-j", "1", "--resume-from", prev)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(r["id"] for r in records(p.stdout)), ["c0", "c1", "c2", "c3"])

    def test_a_quota_refused_past_max_wait_sends_later_jobs_to_their_fallback(self):
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join((
            self.sb.fixture(claude_rejected_stream(7200)), self.sb.fixture(codex_stream("from codex"))))
        self.sb.env["FAKE_CLI_EXIT"] = "1,0"
        text = jobs(4, provider="claude", fallback="codex")
        p = self.batch(text, "-j", "1", "--max-wait", "1s")
        self.assertEqual(p.returncode, 0, p.stderr)
        rs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude"] + ["codex"] * 4)
        self.assertEqual([c["provider"] for c in rs["job0"]["calls"]], ["claude", "codex"])
        for i in range(4):
            self.assertEqual(rs[f"job{i}"]["provider"], "codex")
            self.assertEqual(rs[f"job{i}"]["output"], "from codex")
        for i in (1, 2, 3):
            self.assertEqual([c["provider"] for c in rs[f"job{i}"]["calls"]], ["codex"])

    def test_a_quota_that_only_warned_holds_no_later_job(self):
        # issue 60 #24: the first call fails rate_limit while claude's quota event says
        # allowed_warning (near the limit, not past it) with a reset 2 h away. Only a
        # rejected quota holds the provider: the later jobs still call claude, and run.
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join((
            self.sb.fixture(claude_rejected_stream(7200, status="allowed_warning")),
            self.sb.fixture(claude_stream("after the warning"))))
        self.sb.env["FAKE_CLI_EXIT"] = "1,0"
        p = self.batch(jobs(3, provider="claude"), "-j", "1", "--max-wait", "0")
        self.assertEqual(p.returncode, 4, p.stderr)
        rs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(rs["job0"]["error"]["code"], "rate_limit")
        self.assertEqual(rs["job0"]["rate_limit"]["status"], "allowed_warning")
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude"] * 3)
        for i in (1, 2):
            self.assertTrue(rs[f"job{i}"]["ok"], rs[f"job{i}"]["error"])
            self.assertEqual(rs[f"job{i}"]["output"], "after the warning")

    def test_a_cli_ended_by_a_signal_after_its_quota_refused_is_interrupted(self):
        # issue 60 #22: claude said its quota refused the call, and was ended by SIGTERM
        # before its final event (not by agentrun: the call did not end by its own answer).
        # The call reports interrupted, not rate_limit: the quota never answered it, and the
        # batch does not take it for a refusal that holds claude's later jobs.
        cut = claude_rejected_stream(7200).splitlines(keepends=True)[:-1]  # no result event
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join((
            self.sb.fixture("".join(cut)), self.sb.fixture(claude_stream("next job"))))
        self.sb.env["FAKE_CLI_SIGNAL_0"] = str(int(signal.SIGTERM))
        p = self.batch(jobs(3, provider="claude"), "-j", "1", "--max-wait", "0")
        self.assertEqual(p.returncode, 130, p.stderr)  # interrupted's, not rate_limit's 4
        rs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(rs["job0"]["error"]["code"], "interrupted", rs["job0"]["error"])
        self.assertEqual(rs["job0"]["rate_limit"]["status"], "rejected")
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude"] * 3)
        for i in (1, 2):
            self.assertTrue(rs[f"job{i}"]["ok"], rs[f"job{i}"]["error"])
        # One run alone: the same error, and its exit status.
        for f in (self.sb.state, self.sb.log):
            os.unlink(f)
        p = self.sb.run("run", "--format", "json", "--max-wait", "0", "x", provider="claude")
        r = json.loads(p.stdout)
        self.assertEqual(r["error"]["code"], "interrupted", r["error"])
        self.assertEqual(p.returncode, 130, p.stderr)

    def test_a_quota_refusal_after_an_edit_hands_nothing_to_the_fallback(self):
        # issue 60 #23: job0's claude call writes a file (and says nothing of it), then its
        # quota refuses it until a reset 2 h away. Its fallback (codex) would run the
        # prompt again over the half-made edit: it is not called; job0 fails rate_limit
        # with the file in its record. job1, which edited nothing, is refused claude
        # without a call and goes to codex.
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join((
            self.sb.fixture(claude_rejected_stream(7200)), self.sb.fixture(codex_stream("from codex"))))
        self.sb.env["FAKE_CLI_EXIT"] = "1,0"
        self.sb.env["FAKE_CLI_WRITE_FILES_0"] = "made.txt=half done"
        p = self.batch(jobs(2, provider="claude", fallback="codex", allow_edits=True), "-j", "1",
                       "--max-wait", "1s")
        self.assertEqual(p.returncode, 4, p.stderr)
        rs = {r["id"]: r for r in records(p.stdout)}
        r = rs["job0"]
        self.assertEqual(r["error"]["code"], "rate_limit", r["error"])
        self.assertIn("not retried or handed to a fallback provider", r["error"]["message"])
        self.assertEqual([c["provider"] for c in r["calls"]], ["claude"])
        self.assertEqual([f["path"] for f in r["files"]], ["made.txt"])
        self.assertTrue(rs["job1"]["ok"], rs["job1"]["error"])
        self.assertEqual([c["provider"] for c in rs["job1"]["calls"]], ["codex"])
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude", "codex"])

    def test_budget_stops_starting_jobs_and_marks_the_rest(self):
        self.sb.answers("claude", ["paid"], cost=0.4)
        p = self.batch(jobs(5, provider="claude"), "-j", "1", "--max-cost", "1.0")
        self.assertEqual(p.returncode, 6, p.stderr)
        recs = records(p.stdout)
        self.assertEqual(len(recs), 5)
        self.assertEqual(sum(1 for r in recs if r["ok"]), 2)
        budget = [r for r in recs if not r["ok"]]
        self.assertEqual({r["error"]["code"] for r in budget}, {"budget"})
        self.assertEqual(len(self.sb.calls()), 2)
        argv = self.sb.calls()[0]["argv"]
        self.assertIn("--max-budget-usd", argv)

    def test_concurrent_jobs_stay_within_the_budget(self):
        # $0.40 jobs, 3 at once. The first job runs alone (no cost known yet: it reserves
        # the whole budget, never $0); then each running job and the next one reserve
        # $0.40. Issue 21: the old rule started 3 jobs on $0 reservations and spent $1.60
        # of 1.3. Under the cap: 1.3 -> 3 jobs ($1.20); 1.0 -> 2 jobs ($0.80).
        self.sb.answers("claude", ["paid"], cost=0.4)
        self.sb.env["FAKE_CLI_SLEEP_MS"] = "150"
        for cap, ran in (("1.3", 3), ("1.0", 2)):
            with self.subTest(cap=cap):
                if os.path.exists(self.sb.log):
                    os.unlink(self.sb.log)
                p = self.batch(jobs(6, provider="claude"), "-j", "3", "--max-cost", cap)
                self.assertEqual(p.returncode, 6, p.stderr)
                recs = records(p.stdout)
                self.assertEqual(len(recs), 6)
                spent = sum(r["cost_usd"] or 0 for r in recs)
                self.assertLessEqual(spent, float(cap) + 1e-9)
                self.assertEqual(sum(1 for r in recs if r["ok"]), ran)
                self.assertEqual(len(self.sb.calls()), ran)
                self.assertEqual([r["error"]["code"] for r in recs if not r["ok"]],
                                 ["budget"] * (6 - ran))
                self.assertIn("$%.4f" % (0.4 * ran), p.stderr)

    def test_an_unknown_cost_under_a_budget_stops_starting_jobs(self):
        self.sb.answers("codex", ["x"])  # the fake codex names no model: cost unknown
        p = self.batch(jobs(4), "-j", "1", "--max-cost", "5")
        self.assertEqual(p.returncode, 6, p.stderr)
        recs = records(p.stdout)
        self.assertEqual(len(recs), 4)
        self.assertTrue(recs[0]["ok"])
        self.assertEqual({r["error"]["code"] for r in recs[1:]}, {"budget"})
        self.assertEqual(len(self.sb.calls()), 1)
        self.assertIn("--max-cost can no longer be kept", p.stderr)

    def codex_with_repairs(self, n):
        """n codex jobs whose first answer is prose and whose repair call answers JSON.
        The main calls' thread has a rollout naming gpt-5.5 (as codex writes it); the
        repair calls are ephemeral, so nothing names their model."""
        home = os.path.join(self.sb.root, "codex-home")
        day = os.path.join(home, "sessions", "2026", "11", "25")
        os.makedirs(day)
        main_thread = "01a201a4-e6d7-7c03-9d63-00000000000a"
        with open(os.path.join(day, "rollout-2026-11-25T00-00-00-%s.jsonl" % main_thread),
                  "w") as f:
            f.write(json.dumps({"type": "turn_context", "payload": {"model": "gpt-5.5"}}) + "\n")
        prose = self.sb.fixture(codex_stream("no JSON here", thread=main_thread))
        good = self.sb.fixture(codex_stream('{"a": 1}', input_tokens=1000, cached=200,
                                            output=50,
                                            thread="01a201a4-e6d7-7c03-9d63-00000000000b"))
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join([prose, good] * n)
        self.sb.env["CODEX_HOME"] = home
        return jobs(n, json=True)

    def test_a_repair_call_is_priced_by_its_main_calls_model(self):
        text = self.codex_with_repairs(1)
        p = self.batch(text, "-j", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = records(p.stdout)[0]
        self.assertEqual(r["repair"], "model")
        self.assertEqual(r["model"], "gpt-5.5")
        self.assertEqual([c["kind"] for c in r["calls"]], ["main", "repair"])
        self.assertEqual([c["cost_source"] for c in r["calls"]], ["price_table"] * 2)
        # gpt-5.5: $5 input, $0.50 cached, $30 output per MTok; 800 + 200 cached + 50 out.
        self.assertAlmostEqual(r["calls"][1]["cost_usd"], (800 * 5 + 200 * 0.5 + 50 * 30) / 1e6)
        self.assertEqual(r["cost_source"], "price_table")

    def test_a_budget_does_not_stop_at_the_first_repair_call(self):
        p = self.batch(self.codex_with_repairs(3), "-j", "1", "--max-cost", "5")
        self.assertEqual(p.returncode, 0, p.stderr)
        recs = records(p.stdout)
        self.assertEqual([r["ok"] for r in recs], [True] * 3)
        self.assertEqual(len(self.sb.calls()), 6)
        self.assertNotIn("can no longer be kept", p.stderr)

    def test_unknown_costs_are_reported_not_counted_as_zero(self):
        self.sb.answers("codex", ["x"])
        p = self.batch(jobs(2))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(all(r["cost_usd"] is None for r in records(p.stdout)))
        self.assertIn("2 jobs of unknown cost", p.stderr)

    def test_edit_jobs_in_one_work_tree_run_one_at_a_time(self):
        self.sb.answers("codex", ["edited"])
        for i in range(3):
            self.sb.env[f"FAKE_CLI_WRITE_FILES_{i}"] = f"file{i}.txt=x"
        self.sb.env["FAKE_CLI_SLEEP_MS"] = "300"
        p = self.batch(jobs(3, allow_edits=True), "-j", "3")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("one at a time", p.stderr)
        self.assertIn("edit jobs in one work tree ran one at a time (2 waited for theirs)",
                      p.stderr)
        for r in records(p.stdout):
            self.assertEqual(len(r["files"]), 1, r["files"])
        q = self.batch(jobs(3, allow_edits=True), "-j", "3", "--log-format", "json")
        last = json.loads(q.stderr.strip().splitlines()[-1])
        self.assertEqual((last["event"], last["edit_jobs_waited"]), ("batch_finished", 2))

    def test_track_files_key_and_flag(self):
        self.sb.answers("codex", ["done"])
        text = (json.dumps({"id": "read", "prompt": "x"}) + "\n" +
                json.dumps({"id": "forced", "prompt": "x", "track_files": True}) + "\n" +
                json.dumps({"id": "off", "prompt": "x", "track_files": False}) + "\n" +
                json.dumps({"id": "bad", "prompt": "x", "track_files": "yes"}) + "\n")
        p = self.batch(text, "-j", "1")
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertEqual(recs["read"]["files_untracked_reason"], "read_only")
        self.assertTrue(recs["forced"]["files_tracked"])
        self.assertIsNone(recs["forced"]["files_untracked_reason"])
        self.assertEqual(recs["off"]["files_untracked_reason"], "disabled")
        self.assertIn("track_files", recs["bad"]["error"]["message"])
        p = self.batch(text, "-j", "1", "--track-files")
        recs = {r["id"]: r for r in records(p.stdout)}
        self.assertTrue(recs["read"]["files_tracked"])
        self.assertEqual(recs["off"]["files_untracked_reason"], "disabled")

    def test_a_huge_untracked_file_being_hashed_does_not_hold_up_other_jobs(self):
        # Hashing a 1 TiB sparse file takes many minutes: on the loop thread it would hold
        # up every other job's result until it ended. The read job in the same tree must
        # be reported while the edit job is still hashing.
        self.sb.answers("codex", ["done"])
        with open(os.path.join(self.sb.work, "huge.bin"), "wb") as f:
            f.truncate(1 << 40)
        text = (json.dumps({"id": "edit", "prompt": "x", "allow_edits": True}) + "\n" +
                json.dumps({"id": "read", "prompt": "y"}) + "\n")
        env = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        proc = subprocess.Popen([AGENTRUN, "batch", "-j", "2", "-"], cwd=self.sb.work, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        try:
            proc.stdin.write(text)
            proc.stdin.close()
            import select
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            self.assertTrue(ready, "no record while the huge file was being hashed")
            first = json.loads(proc.stdout.readline())
            self.assertEqual(first["id"], "read")
            self.assertTrue(first["ok"], first)
            self.assertIsNone(proc.poll(), "the edit job cannot have finished hashing 1 TiB")
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()

    def test_usage_errors(self):
        for args in (["batch", "-j", "0"], ["batch", "--max-cost", "free"],
                     ["batch", "--max-cost", "inf"], ["batch", "--max-cost", "1e999"],
                     ["batch", "/nonexistent.jsonl"]):
            p = self.sb.run(*args, input="")
            self.assertEqual(p.returncode, 2, args)


if __name__ == "__main__":
    unittest.main()
