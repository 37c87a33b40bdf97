"""--record, --replay, --cache and `agentrun cache` with the fake CLI (issue 19): a cached
review spawns nothing, one changed byte misses, a corrupt entry is replaced, a replay
without any CLI reproduces the RunResult, a missing cassette is replay_miss, cassettes
hold no secret."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import glob
import hashlib
import hmac
import json
import os
import re
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import FAKE_BIN_DIR, Sandbox, claude_stream  # noqa: E402

REVIEW = {"passed": False, "summary": "Dereferences NULL.",
          "issues": [{"file": "app.c", "line": 3, "severity": "high", "message": "p is NULL"}]}
SCHEMA = json.dumps({"type": "object", "required": ["answer"],
                     "properties": {"answer": {"type": "integer"}}})
SECRETS = {"OPENAI_API_KEY": "sk-proj-TestSecretValue0123456789",
           "MY_SERVICE_TOKEN": "tok-9f8e7d6c5b4a",
           "DB_PASSWORD": "correct-horse-battery"}


def as_json(p):
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"stdout is not JSON: {p.stdout!r}\nstderr: {p.stderr}")


def without_durations(doc):
    """The RunResult minus what no two runs share: the run's own duration, and the random
    names of codex's schema and instructions files and claude's system prompt file in its
    argv."""
    doc = json.loads(json.dumps(doc))
    doc.pop("duration_ms")
    for c in doc["calls"]:
        c["argv"] = [re.sub(r"agentrun-(schema|instructions|system)-[\w-]+", r"agentrun-\1-X", a)
                     for a in c["argv"]]
    return doc


class Case(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()
        self.sb.write("app.c", "int main(void)\n{\n    char *p = 0;\n    return *p;\n}\n")
        self.cache = os.path.join(self.sb.root, "cache")

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def review(self, *args, provider="claude", env=None):
        return self.sb.run("review", "--format", "json", "--cache", "--cache-dir", self.cache,
                           *args, provider=provider, env=env)

    def entries(self):
        return sorted(glob.glob(os.path.join(self.cache, "calls", "*.json")))

    def key_file(self):
        return os.path.join(self.sb.env["XDG_CONFIG_HOME"], "agentrun", "cache.key")

    def sign(self, entry, doc, secret=None):
        """Writes doc to entry with the MAC agentrun gives it (src/record/cache.c): what
        only a holder of the key can do."""
        if secret is None:
            with open(self.key_file(), "rb") as f:
                secret = f.read()
        key = hashlib.sha256(secret).digest()
        doc = {k: v for k, v in doc.items() if k != "mac"}
        canon = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        name = os.path.basename(entry)[:-len(".json")]
        msg = b"agentrun.cache/1\0" + name.encode() + b"\0" + canon.encode()
        doc["mac"] = hmac.new(key, msg, hashlib.sha256).hexdigest()
        with open(entry, "w") as f:
            json.dump(doc, f)


class Cache(Case):
    def test_a_second_review_spawns_nothing_and_says_cached(self):
        self.sb.answers("claude", [json.dumps(REVIEW)], input_tokens=1200, output=70, cost=0.02)
        first = self.review()
        self.assertEqual(first.returncode, 1, first.stderr)
        d1 = as_json(first)
        self.assertFalse(d1["cached"])
        self.assertIsNone(d1["cached_from"])
        self.assertEqual(len(self.sb.calls()), 1)
        self.assertEqual(len(self.entries()), 1)

        second = self.review()
        self.assertEqual(second.returncode, 1, second.stderr)
        d2 = as_json(second)
        self.assertEqual(len(self.sb.calls()), 1, "the second review started the CLI")
        self.assertTrue(d2["cached"])
        self.assertEqual(d2["issues"], d1["issues"])
        # What this run spent: nothing; what the answer cost when it was made: reported apart.
        self.assertEqual(d2["tokens"], {"input": 0, "cache_read": 0, "cache_write": 0,
                                        "output": 0, "reasoning": 0})
        self.assertEqual(d2["cost_usd"], 0)
        self.assertEqual(d2["cost_source"], "cache")
        self.assertEqual(d2["cached_from"]["tokens"], d1["tokens"])
        self.assertEqual(d2["cached_from"]["cost_usd"], 0.02)
        self.assertEqual(d2["cached_from"]["cost_source"], "cli")
        self.assertEqual(d2["cached_from"]["calls"], 1)
        self.assertEqual([c["cached"] for c in d2["calls"]], [True])
        # The text output says so too: "cached" tokens are the prompt cache's (issue 31).
        third = self.sb.run("review", "--cache", "--cache-dir", self.cache, provider="claude")
        self.assertIn("1 from the result cache ($0.0200 when made)", third.stderr)
        self.assertNotIn("result cache", first.stderr)

    def test_what_cached_calls_cost_is_rounded_like_every_cost(self):
        # 0.01 + 0.05 is 0.060000000000000005 in binary floating point (issue 31: review's
        # cached_from printed it unrounded).
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join([
            self.sb.fixture(claude_stream("no json here", cost=0.01)),
            self.sb.fixture(claude_stream(json.dumps(REVIEW), cost=0.05))])
        self.assertEqual(self.review().returncode, 1)
        second = self.review()
        self.assertEqual(len(self.sb.calls()), 2)
        self.assertIn('"cost_usd":0.06,', second.stdout)
        self.assertEqual(as_json(second)["cached_from"]["cost_usd"], 0.06)

    def test_run_cache_without_no_tools_says_it_caches_nothing(self):
        self.sb.answers("codex", ["hi"])
        args = ("run", "--cache", "--cache-dir", self.cache, "hello")
        p = self.sb.run(*args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--cache: this run's call is not cached", p.stderr)
        self.assertIn("add --no-tools", p.stderr)
        self.assertEqual(self.entries(), [])
        p = self.sb.run(*args[:-1], "--no-tools", "hello")
        self.assertNotIn("--cache", p.stderr)
        self.assertEqual(len(self.entries()), 1)
        p = self.sb.run(*args[:-1], "--no-tools", "hello")
        self.assertIn("1 from the result cache", p.stderr)
        # --help says which calls --cache can serve.
        self.assertIn("run --no-tools", self.sb.run("run", "--help").stdout)

    def test_one_changed_byte_of_the_diff_misses(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.assertEqual(self.review().returncode, 1)
        self.sb.write("app.c", "int main(void)\n{\n    char *p = 0;\n    return *q;\n}\n")
        p = self.review()
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertFalse(as_json(p)["cached"])
        self.assertEqual(len(self.sb.calls()), 2)
        self.assertEqual(len(self.entries()), 2)

    def test_the_model_and_the_provider_are_part_of_the_key(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.review()
        self.review("-m", "claude-sonnet-4-6")
        self.assertEqual(len(self.sb.calls()), 2)
        self.sb.answers("codex", [json.dumps(REVIEW)])
        self.review(provider="codex")
        self.assertEqual(len(self.sb.calls()), 3)

    def test_a_corrupt_entry_is_a_miss_and_is_replaced(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.review()
        [entry] = self.entries()
        for garbage in ('{"schema":"agentrun.cassette/1","provider":"claude","argv":[', "\0\1\2"):
            with open(entry, "w") as f:
                f.write(garbage)
            n = len(self.sb.calls())
            p = self.review()
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertFalse(as_json(p)["cached"])
            self.assertEqual(len(self.sb.calls()), n + 1)
            with open(entry) as f:
                self.assertEqual(json.load(f)["schema"], "agentrun.cassette/1")
        p = self.review()
        self.assertTrue(as_json(p)["cached"])

    def test_an_entry_past_the_ttl_is_not_used(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.review()
        [entry] = self.entries()
        with open(entry) as f:
            doc = json.load(f)
        doc["recorded_at"] = int(time.time()) - 7200
        self.sign(entry, doc)
        self.assertTrue(as_json(self.review("--cache-ttl", "3h"))["cached"])
        self.assertFalse(as_json(self.review("--cache-ttl", "3600"))["cached"])
        self.assertEqual(len(self.sb.calls()), 2)
        p = self.review("--cache-ttl", "soon")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--cache-ttl", p.stderr)

    # ---- issue 44: the cache cannot be forged

    def test_an_edited_answer_is_a_miss_and_is_replaced(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.assertEqual(self.review().returncode, 1)
        [entry] = self.entries()
        with open(entry) as f:
            doc = json.load(f)
        self.assertRegex(doc["mac"], "^[0-9a-f]{64}$")
        # A fail turned into a pass (high to info), as a pull request's CI job could
        # plant it.
        self.assertIn("high", doc["stdout"])
        doc["stdout"] = doc["stdout"].replace("high", "info")
        with open(entry, "w") as f:
            json.dump(doc, f)
        p = self.review()
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertFalse(as_json(p)["cached"])
        self.assertEqual(len(self.sb.calls()), 2)
        # Replaced by the call it missed: the next review is served again.
        self.assertTrue(as_json(self.review())["cached"])
        self.assertEqual(len(self.sb.calls()), 2)

    def test_an_entry_planted_without_the_key_is_never_served(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.review()
        [entry] = self.entries()
        with open(entry) as f:
            doc = json.load(f)
        doc["stdout"] = doc["stdout"].replace("high", "info")
        # Another run's key (a fork's CI job, another machine): valid, and not ours.
        self.sign(entry, doc, secret=b"not the key of this user, 64 bytes of it at least")
        p = self.review()
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(self.sb.calls()), 2)
        # Without any MAC, the same.
        doc.pop("mac")
        with open(entry, "w") as f:
            json.dump(doc, f)
        self.assertEqual(self.review().returncode, 1)
        self.assertEqual(len(self.sb.calls()), 3)
        # Signed with this user's key, it is served: the test's signer is the real one.
        self.sign(entry, doc)
        p = self.review()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(as_json(p)["cached"])

    def test_the_key_file_is_made_once_0600_and_another_key_invalidates(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.review()
        st = os.stat(self.key_file())
        self.assertEqual(st.st_mode & 0o777, 0o600)
        with open(self.key_file()) as f:
            first = f.read()
        self.assertRegex(first, "^[0-9a-f]{64}\n$")
        self.assertTrue(as_json(self.review())["cached"])
        with open(self.key_file()) as f:
            self.assertEqual(f.read(), first)
        # CI's key, from a repository secret: the entries made with the file's key miss.
        ci = {"AGENTRUN_CACHE_KEY": "ci-secret-0123456789abcdef"}
        self.assertFalse(as_json(self.review(env=ci))["cached"])
        self.assertTrue(as_json(self.review(env=ci))["cached"])
        self.assertFalse(as_json(self.review(env={"AGENTRUN_CACHE_KEY":
                                                  "another-0123456789abcdef"}))["cached"])
        p = self.review(env={"AGENTRUN_CACHE_KEY": "short"})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("AGENTRUN_CACHE_KEY is too short", p.stderr)
        # A key file others can read is refused, as ssh refuses a key file: anyone, or
        # only the group (a shared CI runner's group, a home folder's default group), or
        # only others (issue 60 #21).
        for mode in (0o644, 0o640, 0o604, 0o620):
            with self.subTest(mode=oct(mode)):
                os.chmod(self.key_file(), mode)
                p = self.review()
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("readable by others", p.stderr)
                self.assertIn("(mode %03o)" % mode, p.stderr)

    def test_a_cache_directory_others_can_write_is_refused(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.review()
        n = len(self.sb.calls())
        for target, mode in ((self.cache, 0o777), (self.cache, 0o770),
                             (os.path.join(self.cache, "calls"), 0o757)):
            with self.subTest(target=target, mode=oct(mode)):
                os.chmod(target, mode)
                p = self.review()
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("is writable by others", p.stderr)
                self.assertIn("chmod go-w", p.stderr)
                self.assertEqual(len(self.sb.calls()), n)
                os.chmod(target, 0o700)
        self.assertTrue(as_json(self.review())["cached"])

    def test_a_cache_directory_of_another_user_is_refused(self):
        # /tmp's sticky folder is root's (or another user's): never a cache.
        if os.stat("/").st_uid == os.geteuid():
            self.skipTest("running as root: every folder is ours")
        p = self.sb.run("review", "--format", "json", "--cache", "--cache-dir", "/",
                        provider="claude")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("is owned by another user", p.stderr)

    def test_failed_calls_are_never_cached(self):
        self.sb.env["FAKE_CLI_STDOUT_TEXT"] = ""
        self.sb.env["FAKE_CLI_STDERR_TEXT"] = "API Error: 429 rate limited\n"
        self.sb.env["FAKE_CLI_EXIT"] = "1"
        p = self.review()
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(self.entries(), [])

    def test_edit_and_read_runs_are_never_cached_but_their_repair_call_is(self):
        for extra in (["--allow-edits"], []):
            self.sb.answers("codex", ['{"answer": 1}'])
            for _ in range(2):
                p = self.sb.run("run", "--cache", "--cache-dir", self.cache, "--json",
                                "--format", "json", *extra, "answer", provider="codex")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertFalse(as_json(p)["cached"])
        self.assertEqual(len(self.sb.calls()), 4)
        self.assertEqual(self.entries(), [])
        # A repair call's input is its prompt alone: the second run's repair comes from the cache.
        schema = self.sb.write("schema.json", SCHEMA, base=self.sb.root)
        self.sb.answers("codex", ["no json here", '{"answer": 2}'])
        for i in range(2):
            os.path.exists(self.sb.state) and os.unlink(self.sb.state)
            p = self.sb.run("run", "--cache", "--cache-dir", self.cache, "--schema", schema,
                            "--format", "json", "answer", provider="codex")
            self.assertEqual(p.returncode, 0, p.stderr)
            d = as_json(p)
            self.assertEqual(d["json"], {"answer": 2})
            self.assertEqual([c["cached"] for c in d["calls"]], [False, i == 1])
        self.assertEqual(len(self.sb.calls()), 4 + 3)
        self.assertEqual(len(self.entries()), 1)

    def test_text_runs_are_cached_unless_the_checkout_is_trusted(self):
        # run --no-tools is a text call: its prompt is its whole input.
        self.sb.answers("codex", ['{"answer": 1}'])
        for i in range(2):
            p = self.sb.run("run", "--cache", "--cache-dir", self.cache, "--json", "--no-tools",
                            "--format", "json", "answer", provider="codex")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIs(as_json(p)["cached"], i == 1)
        self.assertEqual(len(self.sb.calls()), 1)
        # Trusted, the checkout's context files join the input: never from the cache.
        for _ in range(2):
            p = self.sb.run("run", "--cache", "--cache-dir", self.cache, "--json", "--no-tools",
                            "--trust-project", "--format", "json", "answer", provider="codex")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertFalse(as_json(p)["cached"])
        self.assertEqual(len(self.sb.calls()), 3)

    def test_concurrent_reviews_share_the_cache(self):
        import subprocess
        from clitest import AGENTRUN
        self.sb.answers("claude", [json.dumps(REVIEW)])
        env = dict(self.sb.env, AGENTRUN_PROVIDER="claude")
        procs = [subprocess.Popen([AGENTRUN, "review", "--format", "json", "--cache",
                                   "--cache-dir", self.cache], cwd=self.sb.work, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(6)]
        for p in procs:
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 1, err)
            json.loads(out)
        self.assertEqual(len(self.entries()), 1)
        self.assertEqual(os.listdir(os.path.join(self.cache, "calls")),
                         [os.path.basename(self.entries()[0])], "a temp file was left behind")
        self.assertTrue(as_json(self.review())["cached"])

    def test_prioritize_is_cached_too(self):
        for name, text in {"auth.md": "# Auth\nLog in first.\n",
                           "billing.md": "# Billing\nCharge monthly.\n"}.items():
            self.sb.write(os.path.join("prds", name), text)
        answer = json.dumps({"recommendations": [
            {"prd_id": "auth", "priority": 1, "rationale": "first"},
            {"prd_id": "billing", "priority": 2, "rationale": "then"}]})
        self.sb.answers("codex", [answer])
        docs = []
        for _ in range(2):
            p = self.sb.run("prioritize", "--cache", "--cache-dir", self.cache, "--format",
                            "json", "prds", provider="codex")
            self.assertEqual(p.returncode, 0, p.stderr)
            docs.append(json.loads(p.stdout))
        self.assertEqual(len(self.sb.calls()), 1)
        self.assertEqual(docs[0]["recommendations"], docs[1]["recommendations"])

    def test_cache_stats_and_clear(self):
        self.sb.answers("claude", [json.dumps(REVIEW)])
        self.review()
        self.sb.write("app.c", "int main(void) { return 0; }\n")
        self.review()
        p = self.sb.run("cache", "stats", "--format", "json", "--cache-dir", self.cache)
        self.assertEqual(p.returncode, 0, p.stderr)
        st = json.loads(p.stdout)
        self.assertEqual(st["entries"], 2)
        self.assertGreater(st["bytes"], 0)
        p = self.sb.run("cache", "clear", "--cache-dir", self.cache)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("removed 2 cache entries", p.stderr)
        self.assertEqual(self.entries(), [])
        p = self.sb.run("cache", "stats", "--cache-dir", self.cache)
        self.assertIn("entries    0", p.stdout)
        # The default directory follows XDG_CACHE_HOME.
        xdg = os.path.join(self.sb.root, "xdg")
        self.sb.run("review", "--cache", provider="claude", env={"XDG_CACHE_HOME": xdg})
        self.assertEqual(len(glob.glob(os.path.join(xdg, "agentrun", "calls", "*.json"))), 1)
        p = self.sb.run("cache", "frobnicate")
        self.assertEqual(p.returncode, 2)


class RecordReplay(Case):
    def path_env(self, with_fake):
        """No AGENTRUN_*_BIN: the CLIs are found on PATH, which holds the fake ones or none."""
        path = os.environ.get("PATH", "/usr/bin:/bin")
        if with_fake:
            path = FAKE_BIN_DIR + ":" + path
        env = {"PATH": path}
        for n in ("CLAUDE", "CODEX", "GEMINI"):
            self.sb.env.pop(f"AGENTRUN_{n}_BIN", None)
        return env

    def record_and_replay(self, provider, answers, *args):
        rec = os.path.join(self.sb.root, "cassettes-" + provider)
        self.sb.answers(provider, answers)
        live = self.sb.run(*args, "--record", rec, provider=provider, env=self.path_env(True))
        calls = len(self.sb.calls())
        replay = self.sb.run(*args, "--replay", rec, provider=provider,
                             env=self.path_env(False))
        self.assertEqual(len(self.sb.calls()), calls, "replay started a CLI")
        self.assertEqual(replay.returncode, live.returncode, replay.stderr)
        return rec, live, replay

    def test_replay_without_any_cli_reproduces_the_run_result(self):
        schema = self.sb.write("schema.json", SCHEMA, base=self.sb.root)
        for provider in ("claude", "codex", "gemini"):
            with self.subTest(provider=provider):
                os.path.exists(self.sb.state) and os.unlink(self.sb.state)
                rec, live, replay = self.record_and_replay(
                    provider, ["Sure:\n{\"answer\": \"4\"}", '{"answer": 4}'],
                    "run", "--schema", schema, "--format", "json", "what is 2+2")
                a, b = as_json(live), as_json(replay)
                self.assertEqual(a["repair"], "model")
                self.assertEqual(len(a["calls"]), 2)
                self.assertEqual(without_durations(a), without_durations(b))
                self.assertEqual(len(os.listdir(rec)), 2)
                # With no CLI anywhere, the same run without --replay fails: replay really served it.
                p = self.sb.run("run", "--schema", schema, "--format", "json", "what is 2+2",
                                provider=provider, env=self.path_env(False))
                self.assertEqual(as_json(p)["error"]["code"], "not_found")

    def test_replay_without_a_provider_asks_for_the_recorded_one(self):
        rec, _, _ = self.record_and_replay("codex", ["hello"], "run", "say hello")
        env = self.path_env(False)
        env["AGENTRUN_PROVIDER"] = ""
        p = self.sb.run("run", "--replay", rec, "--format", "json", "say hello", provider=None,
                        env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(as_json(p)["error"]["code"], "usage")
        # Issue 59: the message names the provider the cassettes hold, and the -p to give.
        self.assertIn("the calls in '%s' were recorded with codex: pass -p codex" % rec,
                      p.stderr)
        self.assertNotIn("npm install", p.stderr)
        # A directory holding several providers' calls names each; an empty one says so.
        shutil.copy(os.path.join(rec, os.listdir(rec)[0]),
                    os.path.join(rec, "claude-0123456789abcdef.json"))
        p = self.sb.run("run", "--replay", rec, "say hello", provider=None, env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("recorded with claude and codex: pass -p with the one to replay", p.stderr)
        empty = os.path.join(self.sb.root, "no-cassettes")
        os.mkdir(empty)
        p = self.sb.run("run", "--replay", empty, "say hello", provider=None, env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("holds no cassette", p.stderr)

    def test_a_replayed_review_gives_the_same_verdict(self):
        rec, live, replay = self.record_and_replay("gemini", [json.dumps(REVIEW)], "review",
                                                   "--format", "json")
        a, b = as_json(live), as_json(replay)
        a.pop("duration_ms")
        b.pop("duration_ms")
        self.assertEqual(a, b)

    def test_a_missing_cassette_is_replay_miss_naming_what_differs(self):
        rec, _, _ = self.record_and_replay("claude", ["hello"], "run", "--format", "json",
                                           "say hello")
        p = self.sb.run("run", "--format", "json", "--replay", rec, "say hullo",
                        provider="claude", env=self.path_env(False))
        self.assertEqual(p.returncode, 4, p.stderr)
        d = as_json(p)
        self.assertEqual(d["error"]["code"], "replay_miss")
        self.assertIn("another prompt", d["error"]["message"])
        self.assertIn("claude-", d["error"]["message"])
        p = self.sb.run("run", "--format", "json", "--replay", rec, "-m", "claude-haiku-4-5",
                        "say hello", provider="claude", env=self.path_env(False))
        msg = as_json(p)["error"]["message"]
        self.assertIn("argv[", msg)
        self.assertIn("claude-haiku-4-5", msg)
        empty = os.path.join(self.sb.root, "empty")
        os.mkdir(empty)
        p = self.sb.run("run", "--format", "json", "say hello", provider="claude",
                        env=dict(self.path_env(False), AGENTRUN_REPLAY=empty))
        self.assertEqual(as_json(p)["error"]["code"], "replay_miss")
        self.assertIn("holds no cassette", as_json(p)["error"]["message"])

    def test_the_environment_variables_work_like_the_options(self):
        rec = os.path.join(self.sb.root, "rec")
        self.sb.answers("codex", ["hi"])
        p = self.sb.run("run", "--format", "json", "hello", provider="codex",
                        env=dict(self.path_env(True), AGENTRUN_RECORD=rec))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(os.listdir(rec)), 1)
        q = self.sb.run("run", "--format", "json", "hello", provider="codex",
                        env=dict(self.path_env(False), AGENTRUN_REPLAY=rec))
        self.assertEqual(without_durations(as_json(p)), without_durations(as_json(q)))

    def test_record_and_replay_together_is_a_usage_error(self):
        d = os.path.join(self.sb.root, "d")
        os.mkdir(d)
        p = self.sb.run("run", "--record", d, "--replay", d, "hi", provider="codex")
        self.assertEqual(p.returncode, 2)
        self.assertIn("not both", p.stderr)
        p = self.sb.run("run", "--replay", os.path.join(self.sb.root, "nope"), "hi",
                        provider="codex")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such replay directory", p.stderr)

    def test_cassettes_hold_no_secret(self):
        secrets = list(SECRETS.values())
        env = dict(SECRETS)
        env["FAKE_CLI_STDERR_TEXT"] = ("auth: Bearer abcdefghijklmnop1234 key " +
                                       SECRETS["OPENAI_API_KEY"] + "\n")
        rec = os.path.join(self.sb.root, "rec")
        # The model echoes secrets it was shown; the CLI prints one on stderr.
        echo = "the key is %s, the token %s, the password %s, and sk-ant-api03-%s" % (
            SECRETS["OPENAI_API_KEY"], SECRETS["MY_SERVICE_TOKEN"], SECRETS["DB_PASSWORD"],
            "Z" * 30)
        for provider in ("claude", "codex", "gemini"):
            self.sb.answers(provider, [echo])
            p = self.sb.run("run", "--format", "json", "--record", rec, "--cache", "--cache-dir",
                            self.cache, "tell me " + provider, provider=provider, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
        files = glob.glob(os.path.join(rec, "*.json"))
        self.assertEqual(len(files), 3)
        files += glob.glob(os.path.join(self.cache, "calls", "*.json"))
        for f in files:
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            for s in secrets + ["abcdefghijklmnop1234", "Z" * 30]:
                self.assertNotIn(s, text, f)
            self.assertIn("[REDACTED]", text)
        # The replayed answer carries the redaction, never the secret.
        p = self.sb.run("run", "--format", "json", "--replay", rec, "tell me codex",
                        provider="codex")
        self.assertIn("[REDACTED]", as_json(p)["output"])


class NoMachineCli(unittest.TestCase):
    """The suites see none of the machine's CLIs, logins or HOME (tests/cli/isolated.py):
    with a real claude, codex or gemini on PATH, "no CLI anywhere" above would find it,
    log in or not, and a real codex would be left retrying the network."""

    def test_no_cli_on_path_and_an_empty_home(self):
        import shutil
        for name in isolated.CLI_NAMES:
            self.assertIsNone(shutil.which(name), name)
        self.assertEqual(os.listdir(os.environ["HOME"]), [])
        for v in isolated.MACHINE_VARS:
            self.assertNotIn(v, os.environ)

    def test_a_directory_holding_a_cli_leaves_path_but_its_other_programs_stay(self):
        import shutil
        import tempfile
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        machine, other, links = (os.path.join(root, d) for d in ("machine", "other", "links"))
        for d in (machine, other, links):
            os.mkdir(d)
        for d, n in ((machine, "codex"), (machine, "tool"), (other, "git")):
            with open(os.path.join(d, n), "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(os.path.join(d, n), 0o755)
        path = isolated.machine_free_path(os.pathsep.join([other, machine]), links)
        self.assertEqual(path, os.pathsep.join([other, links]))
        self.assertIsNone(shutil.which("codex", path=path))
        self.assertEqual(os.path.realpath(shutil.which("tool", path=path)),
                         os.path.realpath(os.path.join(machine, "tool")))


if __name__ == "__main__":
    unittest.main()
