"""Honest outcomes (issue 14) with the fake CLI: a tool call the CLI refused fails the run
(`denied`) unless --allow-denied; --expect-changes turns "no file changed" into
`no_effect`; a rate limit or a transient API error is called once more after the wait
the provider named (within --max-wait), a Ctrl-C ends that wait at once, and batch jobs
of one provider pause together; a call that changed files is never retried nor handed to
a fallback provider."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, Sandbox, claude_rejected_stream, claude_stream, codex_stream  # noqa: E402

FIXTURES = os.path.join(os.environ.get("AGENTRUN_SOURCE_ROOT", "."), "tests", "fixtures")


def fx(cli, name):
    return os.path.join(FIXTURES, cli, name)


def result(p):
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"stdout is not one JSON object: {p.stdout!r}\nstderr: {p.stderr}")


def codex_failed(message):
    """A codex turn that failed with `message` (what codex prints for API errors)."""
    lines = [{"type": "thread.started", "thread_id": "01a201a4-e6d7-7c03-9d63-00000000000f"},
             {"type": "turn.started"},
             {"type": "error", "message": message},
             {"type": "turn.failed", "error": {"message": message}}]
    return "".join(json.dumps(l) + "\n" for l in lines)


def claude_write_then_500(path):
    """claude wrote `path` (Write tool_use, successful tool_result), then the API failed."""
    sid = "a12149e5-57b9-4101-8896-0e79223f8ed2"
    lines = [
        {"type": "system", "subtype": "init", "session_id": sid, "model": "claude-opus-4-8",
         "tools": ["Write"], "permissionMode": "acceptEdits"},
        {"type": "assistant", "session_id": sid, "message": {
            "id": "m1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write",
                         "input": {"file_path": path, "content": "hi\n"}}]}},
        {"type": "user", "session_id": sid, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "File created"}]}},
        {"type": "result", "subtype": "success", "is_error": True, "api_error_status": 500,
         "result": "API Error: 500 Internal server error", "session_id": sid,
         "total_cost_usd": 0.02, "num_turns": 2,
         "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                   "cache_read_input_tokens": 0, "output_tokens": 5},
         "permission_denials": []},
    ]
    return "".join(json.dumps(l) + "\n" for l in lines)


def on_a_terminal(sb, argv, stdin=b"", timeout=60):
    """agentrun (codex) with stderr on a pseudo-terminal, so the status line is drawn:
    (exit status, every byte it wrote to the terminal)."""
    import pty
    master, slave = pty.openpty()
    proc = subprocess.Popen([AGENTRUN, *argv], cwd=sb.work,
                            env=dict(sb.env, AGENTRUN_PROVIDER="codex", TERM="xterm"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    proc.stdin.write(stdin)
    proc.stdin.close()
    data = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    proc.stdout.close()
    return proc.wait(timeout=timeout), data


def batch_on_a_terminal(sb, lines, *args):
    """agentrun batch (codex) with its status line on a terminal."""
    return on_a_terminal(sb, ["batch", *args, "-"], lines.encode())


class Denied(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def run_fixture(self, cli, stdout, stderr=None, *args):
        self.sb.env["FAKE_CLI_FIXTURE"] = fx(cli, stdout)
        if stderr:
            self.sb.env["FAKE_CLI_STDERR_FIXTURE"] = fx(cli, stderr)
        return self.sb.run("run", "--format", "json", *args, "Create hello.txt", provider=cli)

    def test_each_clis_refused_write_is_denied_exit_4(self):
        cases = [("claude", "stream-tool-denied.jsonl", None, "Write", "/hello.txt"),
                 ("codex", "json-tool-rejected.jsonl", "json-tool-rejected.stderr",
                  "apply_patch", None),
                 ("gemini", "stream-tool-default.jsonl", None, "write_file", "/hello.txt")]
        for cli, out, err, tool, target in cases:
            with self.subTest(cli=cli):
                p = self.run_fixture(cli, out, err)
                self.assertEqual(p.returncode, 4, p.stderr)
                r = result(p)
                self.assertFalse(r["ok"])
                self.assertEqual(r["error"]["code"], "denied", r["error"])
                self.assertIn(tool, r["error"]["message"])
                self.assertEqual(len(r["denied"]), 1)
                self.assertEqual(r["denied"][0]["tool"], tool)
                if target:
                    self.assertTrue(r["denied"][0]["target"].endswith(target))
                else:
                    self.assertIsNone(r["denied"][0]["target"])
                self.assertEqual(r["calls"][0]["error"], "denied")
                self.assertEqual(r["files"], [])
                # The model's "I wrote hello.txt." is kept for the record, never printed as
                # a success in text format.
                self.assertEqual(r["output"], "I wrote hello.txt.")
                self.sb.env.pop("FAKE_CLI_STDERR_FIXTURE", None)

    def test_allow_denied_keeps_the_list_and_succeeds(self):
        p = self.run_fixture("claude", "stream-tool-denied.jsonl", None, "--allow-denied")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertTrue(r["ok"])
        self.assertEqual([d["tool"] for d in r["denied"]], ["Write"])

    def test_text_format_prints_no_answer_for_a_denied_run(self):
        self.sb.env["FAKE_CLI_FIXTURE"] = fx("claude", "stream-tool-denied.jsonl")
        p = self.sb.run("run", "Create hello.txt", provider="claude")
        self.assertEqual(p.returncode, 4)
        self.assertEqual(p.stdout, "")
        self.assertIn("denied", p.stderr)

    def test_an_allowed_write_is_ok_and_not_denied(self):
        p = self.run_fixture("claude", "stream-tool-write.jsonl", None, "--allow-edits")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(result(p)["denied"], [])

    def test_batch_job_keys_allow_denied(self):
        self.sb.env["FAKE_CLI_FIXTURE"] = fx("claude", "stream-tool-denied.jsonl")
        lines = "".join(json.dumps(j) + "\n" for j in (
            {"id": "strict", "prompt": "x", "provider": "claude"},
            {"id": "lenient", "prompt": "x", "provider": "claude", "allow_denied": True}))
        p = self.sb.run("batch", "-j", "1", "-", input=lines)
        self.assertEqual(p.returncode, 4, p.stderr)
        recs = {r["id"]: r for r in map(json.loads, p.stdout.splitlines())}
        self.assertEqual(recs["strict"]["error"]["code"], "denied")
        self.assertTrue(recs["lenient"]["ok"])


class ExpectChanges(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def test_text_answer_with_expect_changes_is_no_effect(self):
        self.sb.answers("codex", ["I would change main.c."])
        p = self.sb.run("run", "--format", "json", "--expect-changes", "fix it")
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "no_effect", r["error"])
        self.assertEqual(r["output"], "I would change main.c.")
        # A read run takes its snapshots when a change is expected: "no file changed".
        self.assertTrue(r["files_tracked"])
        self.assertIn("no file changed", r["error"]["message"])

    def test_a_changed_file_satisfies_expect_changes(self):
        self.sb.answers("codex", ["done"])
        self.sb.env["FAKE_CLI_WRITE_FILES"] = "new.txt=hi"
        p = self.sb.run("run", "--format", "json", "--allow-edits", "--expect-changes", "fix it")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([f["path"] for f in result(p)["files"]], ["new.txt"])

    def test_untracked_files_cannot_confirm_a_change(self):
        self.sb.answers("codex", ["done"])
        p = self.sb.run("run", "--format", "json", "--no-files", "--expect-changes", "fix it")
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "no_effect")
        self.assertIn("not tracked", r["error"]["message"])

    def test_batch_job_key_expect_changes(self):
        self.sb.answers("codex", ["nothing to do"])
        line = json.dumps({"id": 1, "prompt": "x", "expect_changes": True}) + "\n"
        p = self.sb.run("batch", "-", input=line)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(json.loads(p.stdout)["error"]["code"], "no_effect")
        p = self.sb.run("batch", "-", input=json.dumps({"id": 1, "expect_changes": "yes",
                                                        "prompt": "x"}) + "\n")
        self.assertEqual(json.loads(p.stdout)["error"]["code"], "usage")


class NotLoggedIn(unittest.TestCase):
    """A CLI with nothing to log in with is `auth` (exit 4) with what to do, and a
    --fallback provider takes over (issue 31)."""

    def setUp(self):
        self.sb = Sandbox()
        self.sb.env.pop("CODEX_API_KEY", None)
        self.codex_home = os.path.join(self.sb.root, "codex-home")
        os.mkdir(self.codex_home)
        self.sb.env["CODEX_HOME"] = self.codex_home

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def test_auto_takes_the_first_cli_that_can_log_in_and_says_once_what_it_passed(self):
        # claude is installed first but its status command says not logged in; codex has a
        # key: auto takes codex, says so once for a whole batch, and calls no claude.
        self.sb.env["FAKE_CLI_LOGIN"] = "no"
        self.sb.env["CODEX_API_KEY"] = "k"
        self.sb.answers("codex", ["from codex"])
        p = self.sb.run("run", "hi", provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "from codex\n")
        self.assertIn("claude: not logged in, using codex; pass -p to choose", p.stderr)
        self.assertEqual({c["argv0"].rsplit("/", 1)[-1] for c in self.sb.calls()}, {"codex"})
        jobs = "".join(json.dumps({"id": f"j{i}", "prompt": "hi"}) + "\n" for i in range(3))
        p = self.sb.run("batch", "-", input=jobs, provider=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("claude: not logged in, using codex"), 1, p.stderr)
        # Logged in (the status command says so): claude, the first, with nothing said.
        self.sb.env["FAKE_CLI_LOGIN"] = "yes"
        self.sb.answers("claude", ["from claude"])
        p = self.sb.run("run", "hi", provider=None)
        self.assertEqual((p.returncode, p.stdout), (0, "from claude\n"), p.stderr)
        self.assertNotIn("using", p.stderr)

    def test_auto_with_no_cli_that_can_log_in_names_each_and_what_to_set(self):
        self.sb.env["FAKE_CLI_LOGIN"] = "no"
        p = self.sb.run("run", "--format", "json", "hi", provider=None)
        self.assertEqual(p.returncode, 4, p.stderr)
        msg = result(p)["error"]["message"]
        self.assertEqual(result(p)["error"]["code"], "auth", msg)
        for words in ("claude not logged in (set ANTHROPIC_API_KEY)",
                      "codex not logged in (set CODEX_API_KEY)",
                      "gemini no auth method (set GEMINI_API_KEY)", "agentrun doctor",
                      "docs/providers.md#logging-in-auth"):
            self.assertIn(words, msg)
        self.assertEqual(self.sb.calls(), [])

    def test_codex_without_a_login_is_refused_before_it_starts(self):
        self.sb.answers("codex", ["never"])
        t0 = time.monotonic()
        p = self.sb.run("run", "--format", "json", "hi", provider="codex")
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "auth", r["error"])
        self.assertIn("codex login", r["error"]["message"])
        self.assertIn("CODEX_API_KEY", r["error"]["message"])
        self.assertEqual(r["calls"][0]["exit_code"], -1)
        self.assertEqual(self.sb.calls(), [])  # codex never ran

    def test_a_fallback_provider_takes_over(self):
        self.sb.answers("claude", ["from claude"])
        p = self.sb.run("run", "--format", "json", "--fallback", "claude", "hi",
                        provider="codex")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["provider"], "claude")
        self.assertEqual([c["error"] for c in r["calls"]], ["auth", None])
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude"])

    def test_codex_logged_in_any_way_runs(self):
        self.sb.answers("codex", ["ok"])
        with open(os.path.join(self.codex_home, "auth.json"), "w") as f:
            f.write("{}")
        self.assertEqual(self.sb.run("run", "hi", provider="codex").returncode, 0)
        os.remove(os.path.join(self.codex_home, "auth.json"))
        # A provider of its own with its key set needs no OpenAI login.
        with open(os.path.join(self.codex_home, "config.toml"), "w") as f:
            f.write('model_provider = "mock"\n[model_providers.mock]\nenv_key = "MOCK_KEY"\n')
        p = self.sb.run("run", "--format", "json", "hi", provider="codex")
        self.assertEqual(result(p)["error"]["message"],
                         "codex: model provider 'mock' reads its key from $MOCK_KEY, which is "
                         "not set (docs/providers.md#logging-in-auth)")
        p = self.sb.run("run", "hi", provider="codex", env={"MOCK_KEY": "k"})
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_a_replayed_call_needs_no_login(self):
        self.sb.answers("codex", ["recorded"])
        tapes = os.path.join(self.sb.root, "tapes")
        p = self.sb.run("run", "--record", tapes, "hi", provider="codex",
                        env={"CODEX_API_KEY": "k"})
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.sb.run("run", "--replay", tapes, "hi", provider="codex")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "recorded\n")

    def test_claude_and_gemini_not_logged_in_are_auth(self):
        for cli, fixture, status in (("claude", "stream-not-logged-in", 1),
                                     ("gemini", "stream-no-key", 41)):
            self.sb.env["FAKE_CLI_FIXTURE"] = fx(cli, fixture + ".jsonl")
            self.sb.env["FAKE_CLI_STDERR_FIXTURE"] = fx(cli, fixture + ".stderr")
            self.sb.env["FAKE_CLI_EXIT"] = str(status)
            p = self.sb.run("run", "--format", "json", "hi", provider=cli)
            self.assertEqual(p.returncode, 4, (cli, p.stderr))
            self.assertEqual(result(p)["error"]["code"], "auth", (cli, result(p)["error"]))

    def test_a_login_failure_says_what_to_do_headless_once(self):
        # Each CLI's own words (claude's interactive /login, gemini's message naming the
        # settings directory agentrun gave it) become agentrun's: the variable, the
        # command, the docs section, once in all a review prints, never cut mid-word.
        self.sb.write("app.py", "x = 1\n")
        self.sb.git("add", "app.py")
        advice = {"claude": ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "claude setup-token"),
                  "codex": ("CODEX_API_KEY", "codex login --with-api-key"),
                  "gemini": ("GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")}
        for cli, fixture, status, key in (("claude", "stream-not-logged-in.jsonl", 1, None),
                                          ("gemini", "stream-no-key.jsonl", 41, None),
                                          ("codex", "json-error-401.jsonl", 1, "rejected"),
                                          ("codex", "json-error-401.jsonl", 1, None)):
            with self.subTest(cli=cli, key=key):
                # codex with no key is refused before it starts; with one, the fake's 401.
                self.sb.env.pop("CODEX_API_KEY", None)
                if key:
                    self.sb.env["CODEX_API_KEY"] = key
                self.sb.env["FAKE_CLI_FIXTURE"] = fx(cli, fixture)
                self.sb.env["FAKE_CLI_STDERR_FIXTURE"] = fx(cli, fixture.rsplit(".", 1)[0]
                                                            + ".stderr")
                self.sb.env["FAKE_CLI_EXIT"] = str(status)
                p = self.sb.run("run", "hi", provider=cli)
                self.assertEqual(p.returncode, 4, p.stderr)
                for words in advice[cli] + ("docs/providers.md#logging-in-auth",):
                    self.assertIn(words, p.stderr)
                self.assertNotIn("/login", p.stderr)
                self.assertNotIn("settings.json", p.stderr)
                self.assertNotIn("gemini-home", p.stderr)
                p = self.sb.run("review", "--staged", provider=cli)
                self.assertEqual(p.returncode, 4, p.stderr)
                self.assertEqual((p.stdout + p.stderr).count(advice[cli][0]), 1,
                                 p.stdout + p.stderr)
                line = next(l for l in p.stdout.splitlines() if advice[cli][0] in l)
                self.assertTrue(line.endswith("(docs/providers.md#logging-in-auth))"), line)


class Retries(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def script(self, *stdouts, exits):
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join(self.sb.fixture(s) for s in stdouts)
        self.sb.env["FAKE_CLI_EXIT"] = exits

    def test_rate_limit_waits_the_named_time_then_one_more_call_succeeds(self):
        self.script(codex_failed("Rate limit reached for gpt-5.5. Please try again in 1.5s."),
                    codex_stream("second time lucky", input_tokens=300, cached=0, output=7),
                    exits="1,0")
        t0 = time.monotonic()
        p = self.sb.run("run", "--format", "json", "x")
        took = time.monotonic() - t0
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertTrue(r["ok"])
        self.assertIsNone(r["error"])
        self.assertEqual(r["output"], "second time lucky")
        self.assertEqual([c["error"] for c in r["calls"]], ["rate_limit", None])
        self.assertEqual([c["kind"] for c in r["calls"]], ["main", "main"])
        self.assertEqual(r["calls"][0]["waited_ms"], 0)
        self.assertGreaterEqual(r["calls"][1]["waited_ms"], 1500)
        self.assertGreaterEqual(took, 1.5)
        self.assertEqual(r["calls"][1]["tokens"]["input"], 300)
        self.assertEqual(r["tokens"]["input"], 300)
        self.assertEqual(len(self.sb.calls()), 2)
        self.assertIn("calling again in 1.5 s", p.stderr)

    def test_a_wait_past_max_wait_fails_at_once_with_retry_after(self):
        self.script(codex_failed("Rate limit reached. Please try again in 20s."),
                    codex_stream("never asked"), exits="1,0")
        t0 = time.monotonic()
        p = self.sb.run("run", "--format", "json", "--max-wait", "5s", "x")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "rate_limit")
        self.assertEqual(r["error"]["retry_after_s"], 20)
        self.assertEqual(len(r["calls"]), 1)
        self.assertEqual(len(self.sb.calls()), 1)

    # issue 46: a rejected quota is waited out until its reset when that is within --max-wait
    def test_claude_rejected_quota_waits_until_it_resets(self):
        self.script(claude_rejected_stream(2), claude_stream("after the reset"), exits="1,0")
        t0 = time.monotonic()
        p = self.sb.run("run", "--format", "json", "x", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreaterEqual(time.monotonic() - t0, 1.0)
        r = result(p)
        self.assertEqual(r["output"], "after the reset")
        self.assertEqual([c["error"] for c in r["calls"]], ["rate_limit", None])
        self.assertGreaterEqual(r["calls"][1]["waited_ms"], 1000)
        self.assertEqual(r["rate_limit"]["status"], "rejected")  # the last word said
        self.assertEqual(r["calls"][0]["cli_version"], "2.1.332")

    # ... and fails at once, with the reset time, when it is past --max-wait
    def test_claude_rejected_quota_past_max_wait_fails_with_the_reset_time(self):
        self.script(claude_rejected_stream(3600), claude_stream("never asked"), exits="1,0")
        t0 = time.monotonic()
        p = self.sb.run("run", "--format", "json", "--max-wait", "5s", "x", provider="claude")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "rate_limit")
        rl = r["rate_limit"]
        self.assertEqual((rl["status"], rl["window"], rl["source"]),
                         ("rejected", "five_hour", "claude:rate_limit_event"))
        self.assertEqual(rl["used_percent"], 100)
        self.assertRegex(rl["resets_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertIn("five_hour limit resets at " + rl["resets_at"], r["error"]["message"])
        self.assertGreater(r["error"]["retry_after_s"], 3500)
        self.assertEqual(len(self.sb.calls()), 1)

    def test_max_wait_0_never_retries(self):
        self.script(codex_failed("exceeded retry limit, last status: 429 Too Many Requests"),
                    codex_stream("never asked"), exits="1,0")
        p = self.sb.run("run", "--format", "json", "--max-wait", "0", "x")
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "rate_limit")
        self.assertNotIn("retry_after_s", r["error"])
        self.assertEqual(len(self.sb.calls()), 1)

    def test_transient_api_error_gets_one_retry_but_not_two(self):
        busy = "We\u2019re currently experiencing high demand, which may cause temporary errors."
        self.script(codex_failed(busy), codex_stream("fine now"), exits="1,0")
        p = self.sb.run("run", "--format", "json", "x")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual([c["error"] for c in r["calls"]], ["api_error", None])
        self.assertGreaterEqual(r["calls"][1]["waited_ms"], 2000)
        # Twice in a row: one retry only, then the error.
        self.script(codex_failed(busy), exits="1")
        os.unlink(self.sb.state)
        p = self.sb.run("run", "--format", "json", "x")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual([c["error"] for c in result(p)["calls"]], ["api_error", "api_error"])

    def test_a_bad_request_is_not_retried(self):
        self.script(codex_failed("unexpected status 400 Bad Request: bad input"), exits="1")
        p = self.sb.run("run", "--format", "json", "x")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(len(result(p)["calls"]), 1)

    def test_sigint_during_the_wait_ends_the_run_at_once(self):
        self.script(codex_failed("Rate limit reached. Please try again in 40s."),
                    codex_stream("never asked"), exits="1,0")
        env = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        proc = subprocess.Popen([AGENTRUN, "run", "--format", "json", "x"], cwd=self.sb.work,
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            end = time.monotonic() + 20
            while not self.sb.calls() and time.monotonic() < end:
                time.sleep(0.05)
            time.sleep(0.5)  # the failed call is in, the wait has begun
            t0 = time.monotonic()
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=10)
            took = time.monotonic() - t0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 130, err)
        self.assertLess(took, 3)
        r = json.loads(out)
        self.assertEqual(r["error"]["code"], "interrupted")
        self.assertEqual(len(self.sb.calls()), 1)

    def test_the_status_line_counts_down_the_wait(self):
        self.script(codex_failed("Rate limit reached. Please try again in 1.5s."),
                    codex_stream("done"), exits="1,0")
        status, data = on_a_terminal(self.sb, ["run", "x"], timeout=30)
        self.assertEqual(status, 0)
        self.assertIn(b"rate limit: calling again in 0:02", data)
        self.assertIn(b"rate limit: calling again in 0:01", data)

    def test_repair_call_may_be_retried_after_an_editing_main_call(self):
        # The main call wrote a file (so it would never be made again); the repair call
        # only rewrites text, so its rate limit is waited out like any other.
        schema = self.sb.write("s.json", json.dumps({"type": "object", "required": ["ok"]}),
                               base=self.sb.root)
        main = codex_stream("prose, no JSON").splitlines(keepends=True)
        main.insert(2, json.dumps({"type": "item.completed", "item": {
            "id": "item_9", "type": "file_change", "status": "completed",
            "changes": [{"path": os.path.join(self.sb.work, "made.txt"), "kind": "add"}]}}) + "\n")
        self.script("".join(main),
                    codex_failed("Rate limit reached. Please try again in 1s."),
                    codex_stream('{"ok": true}'), exits="0,1,0")
        self.sb.env["FAKE_CLI_WRITE_FILES_0"] = "made.txt=x"
        p = self.sb.run("run", "--format", "json", "--allow-edits", "--schema", schema, "x")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual([(c["kind"], c["error"]) for c in r["calls"]],
                         [("main", None), ("repair", "rate_limit"), ("repair", None)])
        self.assertEqual([f["path"] for f in r["files"]], ["made.txt"])

    def test_no_retry_and_no_fallback_after_a_write(self):
        self.sb.env["FAKE_CLI_FIXTURE"] = self.sb.fixture(
            claude_write_then_500(os.path.join(self.sb.work, "greeting.txt")))
        self.sb.env["FAKE_CLI_EXIT"] = "1"
        self.sb.env["FAKE_CLI_WRITE_FILES"] = "greeting.txt=hi"
        p = self.sb.run("run", "--format", "json", "--allow-edits", "--fallback", "codex",
                        "Create greeting.txt", provider="claude")
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "api_error")
        self.assertIn("not retried or handed to a fallback provider", r["error"]["message"])
        self.assertEqual([c["provider"] for c in r["calls"]], ["claude"])
        self.assertEqual([c["argv0"] for c in self.sb.calls()], ["claude"])
        self.assertEqual([(f["path"], f["op"]) for f in r["files"]], [("greeting.txt", "create")])

    def test_clean_failure_still_falls_back_after_its_retry(self):
        self.script(codex_failed("exceeded retry limit, last status: 429 Too Many Requests"),
                    exits="1,1,0")
        self.sb.env["FAKE_CLI_FIXTURE"] += "," + self.sb.fixture(codex_failed("x")) + "," + \
            self.sb.fixture(json.dumps({"type": "init", "timestamp": "t", "session_id": "s",
                                        "model": "auto"}) + "\n" +
                            json.dumps({"type": "message", "timestamp": "t", "role": "assistant",
                                        "content": "from gemini", "delta": True}) + "\n" +
                            json.dumps({"type": "result", "timestamp": "t", "status": "success",
                                        "stats": {}}) + "\n")
        p = self.sb.run("run", "--format", "json", "--max-wait", "10s", "--fallback", "gemini",
                        "x")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual([c["provider"] for c in r["calls"]], ["codex", "codex", "gemini"])
        self.assertEqual(r["output"], "from gemini")


class BatchBackoff(unittest.TestCase):
    def test_a_rate_limit_pauses_the_providers_next_job_too(self):
        with Sandbox() as sb:
            limited = sb.fixture(codex_failed("Rate limit reached. Please try again in 4s."))
            ok = sb.fixture(codex_stream("ok"))
            # Call 0 (job a or b) is rate limited for 4 s. The other of a and b either
            # started before that answer (then it is call 1, answers after 1.5 s and frees
            # the slot for job c, which must sit out the rest of the pause) or after it
            # (then it sits out the pause itself). Either way a job of that provider waited.
            sb.env["FAKE_CLI_FIXTURE"] = ",".join([limited, ok, ok, ok])
            sb.env["FAKE_CLI_EXIT"] = "1,0"
            sb.env["FAKE_CLI_SLEEP_MS"] = ",1500,0"
            lines = "".join(json.dumps({"id": i, "prompt": "x"}) + "\n" for i in "abc")
            p = sb.run("batch", "-j", "2", "-", input=lines)
            self.assertEqual(p.returncode, 0, p.stderr)
            recs = {r["id"]: r for r in map(json.loads, p.stdout.splitlines())}
            self.assertTrue(all(r["ok"] for r in recs.values()), recs)
            timeline = [(r["id"], [(c["error"], c["waited_ms"]) for c in r["calls"]])
                        for r in recs.values()]
            limited_jobs = [r for r in recs.values() if len(r["calls"]) == 2]
            self.assertEqual(len(limited_jobs), 1, timeline)
            self.assertEqual(limited_jobs[0]["calls"][0]["error"], "rate_limit")
            others = [r for r in recs.values() if len(r["calls"]) == 1]
            self.assertEqual(len(others), 2, timeline)
            self.assertGreaterEqual(max(r["calls"][0]["waited_ms"] for r in others), 1000,
                                    timeline)
            self.assertEqual(len(sb.calls()), 4)

    def test_a_rate_limit_pauses_the_other_chunks_of_a_review_too(self):
        # A review's chunks share one backoff as a batch's jobs do: the same timeline
        # as above, with three chunks of one diff at -j 2.
        with Sandbox() as sb:
            for name in ("a.c", "b.c", "c.c"):
                sb.write(name, "".join(f"int {name[0]}{i} = {i};\n" for i in range(40)))
            answer = json.dumps({"passed": True, "summary": "fine", "issues": []})
            limited = sb.fixture(codex_failed("Rate limit reached. Please try again in 4s."))
            ok = sb.fixture(codex_stream(answer))
            sb.env["FAKE_CLI_FIXTURE"] = ",".join([limited, ok, ok, ok])
            sb.env["FAKE_CLI_EXIT"] = "1,0"
            sb.env["FAKE_CLI_SLEEP_MS"] = ",1500,0"
            p = sb.run("review", "--format", "json", "--max-chunk-bytes", "700", "-j", "2",
                       provider="codex")
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(p.stdout)
            self.assertEqual(doc["chunks"], 3)
            timeline = [(c["error"], c["waited_ms"]) for c in doc["calls"]]
            self.assertEqual(len(doc["calls"]), 4, timeline)
            self.assertEqual([c["error"] for c in doc["calls"]].count("rate_limit"), 1, timeline)
            # The retry of the limited chunk waits in any case; one of the two other
            # chunks must have sat out the same pause, which it only does when the
            # pause is shared.
            waits = sorted(w for e, w in timeline if e is None)
            self.assertGreaterEqual(waits[-2], 1000, timeline)
            self.assertEqual(len(sb.calls()), 4)

    def test_the_batch_status_line_shows_the_pause(self):
        with Sandbox() as sb:
            sb.env["FAKE_CLI_FIXTURE"] = ",".join([
                sb.fixture(codex_failed("Rate limit reached. Please try again in 2s.")),
                sb.fixture(codex_stream("ok"))])
            sb.env["FAKE_CLI_EXIT"] = "1,0"
            lines = "".join(json.dumps({"id": i, "prompt": "x"}) + "\n" for i in "ab")
            rc, data = batch_on_a_terminal(sb, lines, "-j", "1")
            self.assertEqual(rc, 0)
            self.assertIn(b"codex paused 0:02  0/2 done", data)


class BatchStatusLine(unittest.TestCase):
    def test_the_status_line_tells_the_truth_as_it_goes(self):
        """What runs is counted while it runs, and the ETA counts down between two ends
        instead of standing still (issue 31: "0/3 done, 0 running" for 8 s)."""
        import re
        with Sandbox() as sb:
            sb.answers("codex", ["ok"])
            sb.env["FAKE_CLI_SLEEP_MS"] = "2500"
            lines = "".join(json.dumps({"id": i, "prompt": "x"}) + "\n" for i in "abcd")
            rc, data = batch_on_a_terminal(sb, lines, "-j", "2", "--no-files")
            self.assertEqual(rc, 0)
            frames = [f.decode(errors="replace") for f in data.split(b"\r")]
            states = [m.groups() for f in frames
                      for m in [re.search(r"(\d)/4 done, (\d) running", f)] if m]
            self.assertIn(("0", "2"), states, frames)
            self.assertTrue(all(int(r) <= 2 for _, r in states), states)
            etas = [m.group(1) for f in frames for m in [re.search(r"ETA (\d+:\d\d)", f)] if m]
            self.assertGreater(len(set(etas)), 1, etas)


if __name__ == "__main__":
    unittest.main()
