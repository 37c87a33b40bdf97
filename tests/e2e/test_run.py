"""agentrun run with the real claude, codex and gemini CLIs against the loopback mock
(issues 4 and 5): the text, tokens, session and cost agentrun reports equal what the
mock scripted and the CLI computed (or the price table, where the CLI has none); fenced
JSON; a template's contract with one repair call; a file written by a tool call; every
API failure classified; an idle stream and an interrupted one ended with nothing of the
run left behind, a slow ~/.bashrc included; a 2 MiB answer and a 1 MiB prompt whole."""
import datetime
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
import mockapi  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")

# Prices per MTok from /work/shared/PRICES.md (input, output, cache read).
PRICES = {"gpt-5.5": (5.00, 30.00, 0.50), "gemini-2.5-pro": (1.25, 10.00, 0.125),
          "gemini-3-pro-preview": (2.00, 12.00, 0.20), "gemini-3.1-pro-preview": (2.00, 12.00, 0.20)}

# claude's own prices per MTok (input, output, cache read, cache write; None: not known), from
# /work/shared/PRICES.md, for the models claude says it used.
CLAUDE_PRICES = {"claude-opus-4-8": (5.00, 25.00, 0.50, 6.25),
                 "claude-opus-5": (5.00, 25.00, 0.50, None),
                 "claude-opus-5-5": (4.00, 20.00, 0.20, None)}

# A template with a contract, given through --prompts-dir.
TEMPLATE = """# Measure a distance

How far is {{place}}? Answer with JSON in a ```json block that satisfies:

```json-schema
{"type": "object", "required": ["answer", "unit"], "additionalProperties": false,
 "properties": {"answer": {"type": "integer", "minimum": 1},
                "unit": {"type": "string", "enum": ["m", "km"]}}}
```
"""
# A contract as users write it in draft 2020-12 (issue 58): $defs and $ref, an Optional
# field's anyOf with null, exact decimal bounds, a tuple, contains, dependentRequired and
# unevaluatedProperties. Each CLI's native structured output gets what it accepts of it;
# agentrun's own check judges the answer against all of it.
RICH_TEMPLATE = r"""# Plan a route

Plan a route to {{place}}. Answer with JSON in a ```json block that satisfies:

```json-schema
{"$schema": "https://json-schema.org/draft/2020-12/schema",
 "$defs": {"city": {"type": "object", "additionalProperties": false, "required": ["name", "zip"],
                    "properties": {"name": {"type": "string", "pattern": "^[A-Z]\\w*$"},
                                   "zip": {"type": "string", "pattern": "^\\d{5}$"}}}},
 "type": "object",
 "required": ["answer", "unit", "via", "ratio", "pair", "tags"],
 "properties": {"answer": {"type": "integer", "minimum": 1},
                "unit": {"enum": ["m", "km"]},
                "via": {"anyOf": [{"$ref": "#/$defs/city"}, {"type": "null"}]},
                "ratio": {"type": "number", "minimum": 0.1, "maximum": 0.3},
                "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}],
                         "items": false},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true,
                         "contains": {"const": "road"}},
                "note": {"type": "string"}},
 "dependentRequired": {"note": ["via"]},
 "unevaluatedProperties": false}
```
"""
RICH_GOOD = {"answer": 3, "unit": "km", "via": {"name": "Rome", "zip": "00100"}, "ratio": 0.3,
             "pair": ["a", 1.5], "tags": ["road", "fast"]}
RICH_BAD = {"answer": 3, "unit": "km", "via": {"name": "rome", "zip": "0010"}, "ratio": 0.30001,
            "pair": ["a", 1.5, 2], "tags": ["fast", "fast"], "extra": 1}
BAD = {"answer": 0, "unit": "miles"}
GOOD = {"answer": 3, "unit": "km"}
VIOLATIONS = ['/answer: expected a number >= 1, got 0',
              '/unit: expected one of ["m","km"], got "miles"']


def strings_of(v):
    """Every string inside a JSON value, joined: the prompt text of a request body
    whatever the API's shape and JSON escaping."""
    out = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
    walk(v)
    return "\n".join(out)


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


class Base:
    cli = None
    model_args = ()          # -m for the runs whose cost comes from the price table
    # Mock requests one agentrun call makes when the model answers a contract in text.
    text_requests_per_contract_call = 1
    # --idle-timeout for the hang case: longer than the CLI's silent start-up (the first
    # line comes just before the model request; gemini's node start-up took up to 7 s on
    # a loaded 2-core machine), so the timeout fires mid-stream.
    idle_timeout = 5

    @classmethod
    def setUpClass(cls):
        cls.mock = Mock().start()

    @classmethod
    def tearDownClass(cls):
        cls.mock.cleanup()

    def setUp(self):
        self.root = RunRoot(self.mock.port)
        self.transcript = os.path.join(self.root.root, "transcript.jsonl")

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()

    # ------------------------------------------------------------------ helpers
    def run_agentrun(self, script, *args, stdin=b"Say something.", timeout=180, env=None):
        """agentrun run with the prompt on stdin ('-') unless args give -f or -t. script
        None keeps the mock's current script (and where its queues stand). env: variables
        to set on top of the usual ones (None as a value removes one)."""
        if "-f" not in args and "-t" not in args:
            args = args + ("-",)
        if script is not None:
            self.mock.set_script(script)
        self.seen = len(self.mock.requests())
        run_env = self.root.agentrun_env()
        for k, v in (env or {}).items():
            if v is None:
                run_env.pop(k, None)
            else:
                run_env[k] = v
        p = subprocess.run([AGENTRUN, "run", "-p", self.cli, "--format", "json",
                            "--timeout", "90s", "--transcript", self.transcript, *args],
                           input=stdin, cwd=self.root.work, env=run_env,
                           capture_output=True, timeout=timeout)
        try:
            doc = json.loads(p.stdout)
        except json.JSONDecodeError:
            raise AssertionError("not JSON (exit %d): %r\nstderr: %s"
                                 % (p.returncode, p.stdout[:2000], p.stderr.decode()[-3000:]))
        self.last_doc = doc
        return p, doc

    def new_model_requests(self):
        """The scripted model requests of this test's run (the log spans the class)."""
        return [e for e in self.mock.requests()[self.seen:]
                if e["api"] == self.cli and e["method"] == "POST" and not e.get("side")]

    def transcript_lines(self):
        with open(self.transcript, "rb") as f:
            return [json.loads(l) for l in f.read().decode().splitlines()
                    if l.strip().startswith("{")]

    def what_happened(self, p, doc):
        """A failed call's story: its error, the mock's requests since it began, each CLI
        call's stderr tail and the transcript's end."""
        reqs = ["  %s %s %s step=%s kind=%s%s" % (e.get("seq"), e["method"], e.get("path"),
                                                 e.get("step"), e.get("kind"),
                                                 " side" if e.get("side") else "")
                for e in self.mock.requests()[self.seen:]]
        calls = ["  call %d exit=%s signal=%s timed_out=%s ms=%s stderr: %s"
                 % (i, c.get("exit_code"), c.get("signal"), c.get("timed_out"),
                    c.get("duration_ms"), (c.get("stderr_tail") or "")[-1500:])
                 for i, c in enumerate(doc.get("calls") or [])]
        tail = ""
        if os.path.exists(self.transcript):
            with open(self.transcript, "rb") as f:
                tail = f.read()[-1500:].decode(errors="replace")
        return "%s\nagentrun stderr: %s\nmock requests:\n%s\n%s\ntranscript end: %s" % (
            doc.get("error"), p.stderr.decode()[-3000:], "\n".join(reqs) or "  none",
            "\n".join(calls), tail)

    def assert_ok(self, p, doc):
        if p.returncode != 0:
            self.fail(self.what_happened(p, doc))
        self.assertTrue(doc["ok"])
        self.assertIsNone(doc["error"])
        self.assertEqual(doc["provider"], self.cli)

    def usage(self):
        """The scripted usage of the text case (agentrun's normalized form)."""
        return {"input": 1000, "cached": 300, "cache_write": 0, "output": 40, "reasoning": 8}

    def expected_tokens(self, u):
        return {"input": u["input"], "cache_read": u["cached"], "cache_write": u["cache_write"],
                "output": u["output"], "reasoning": u["reasoning"]}

    def table_cost(self, model, u):
        inp, out, cr = PRICES[model]
        return (u["input"] * inp + u["cached"] * cr + u["output"] * out) / 1e6

    def session_of_transcript(self):
        raise NotImplementedError

    def check_cost(self, doc, u):
        raise NotImplementedError

    # ------------------------------------------------------------------ tests
    def test_text_answer_tokens_session_cost(self):
        u = self.usage()
        p, doc = self.run_agentrun({self.cli: [{"kind": "text", "text": "Hello from the mock.",
                                                "usage": u}]}, *self.model_args)
        self.assert_ok(p, doc)
        self.assertEqual(doc["output"], "Hello from the mock.")
        self.assertIsNone(doc["json"])
        self.assertEqual(doc["repair"], "none")
        self.assertEqual(doc["tokens"], self.expected_tokens(u))
        self.assertEqual(len(doc["calls"]), 1)
        self.assertEqual(doc["calls"][0]["tokens"], doc["tokens"])
        self.assertEqual(doc["exit_code"], 0)
        # A read call cannot write: no snapshots unless --track-files asks (issue 22).
        self.assertFalse(doc["files_tracked"])
        self.assertEqual(doc["files_untracked_reason"], "read_only")
        self.assertEqual(doc["files"], [])
        sid = self.session_of_transcript()
        self.assertTrue(sid)
        self.assertEqual(doc["session_id"], sid)
        self.assertEqual(len(self.new_model_requests()), 1)
        # The prompt went on stdin, never into argv.
        self.assertNotIn("Say something.", " ".join(doc["calls"][0]["argv"]))
        self.check_cost(doc, u)

    def test_resume_continues_the_session_with_per_call_tokens(self):
        u1 = {"input": 1000, "cached": 0, "cache_write": 0, "output": 10, "reasoning": 0}
        u2 = {"input": 2000, "cached": 300, "cache_write": 0, "output": 20, "reasoning": 0}
        script = {self.cli: [{"kind": "text", "text": "First answer 4711.", "usage": u1},
                             {"kind": "text", "text": "Second answer.", "usage": u2}]}
        p, d1 = self.run_agentrun(script, *self.model_args)
        self.assert_ok(p, d1)
        self.assertEqual(d1["tokens"], self.expected_tokens(u1))
        p, d2 = self.run_agentrun(None, "--resume", d1["session_id"], *self.model_args,
                                  stdin=b"And now?")
        self.assert_ok(p, d2)
        self.assertEqual(d2["output"], "Second answer.")
        self.assertEqual(d2["session_id"], d1["session_id"])
        # This call's tokens only (codex reports them cumulative over the thread).
        self.assertEqual(d2["tokens"], self.expected_tokens(u2))
        reqs = self.new_model_requests()
        self.assertEqual(len(reqs), 1)
        self.assertIn("First answer 4711.", strings_of(self.mock.body_json(reqs[0])))

    def test_fenced_json(self):
        value = {"name": "agentrun", "tags": ["a", "b"], "n": 3, "nested": {"ok": True}}
        p, doc = self.run_agentrun({self.cli: [{"kind": "json", "value": value}]},
                                   "--json", *self.model_args)
        self.assert_ok(p, doc)
        self.assertEqual(doc["json"], value)
        self.assertEqual(doc["output"], "```json\n" + json.dumps(value, indent=2) + "\n```")
        self.assertEqual(doc["repair"], "none")

    def contract_steps(self):
        return [{"kind": "json", "value": BAD, "usage": {"input": 100, "output": 20}},
                {"kind": "json", "value": GOOD, "usage": {"input": 200, "output": 30}}]

    def rich_steps(self):
        return [{"kind": "json", "value": RICH_BAD}, {"kind": "json", "value": RICH_GOOD}]

    def test_rich_2020_12_contract_is_judged_whole_and_the_cli_takes_its_part(self):
        pdir = os.path.join(self.root.root, "prompts")
        os.makedirs(pdir)
        with open(os.path.join(pdir, "route.md"), "w") as f:
            f.write(RICH_TEMPLATE)
        p, doc = self.run_agentrun(
            {self.cli: self.rich_steps()},
            "--prompts-dir", pdir, "-t", "route", "--var", "place=Rome", *self.model_args)
        self.assert_ok(p, doc)
        self.assertEqual(doc["json"], RICH_GOOD)
        self.assertEqual(doc["repair"], "model")
        # The repair prompt names what the first answer broke, keyword by keyword.
        repair = strings_of(self.mock.body_json(self.new_model_requests()[-1]))
        for want in ('/via/name: anyOf/0: expected a match for pattern "^[A-Z]\\w*$"',
                     "/via/zip: anyOf/0: expected a match for pattern",
                     "/ratio: expected a number <= 0.3, got 0.30001",
                     "/pair: expected at most 2 items, got 3",
                     "/tags: expected unique items", "/tags: expected at least 1 item matching 'contains'",
                     "/extra: property not allowed (unevaluatedProperties"):
            self.assertIn(want, repair)
        self.check_native_schema(doc["calls"][0]["argv"])

    def check_native_schema(self, argv):
        """What the CLI was handed of the contract, where it has native structured output."""

    def test_template_contract_with_repair(self):
        pdir = os.path.join(self.root.root, "prompts")
        os.makedirs(pdir)
        with open(os.path.join(pdir, "distance.md"), "w") as f:
            f.write(TEMPLATE)
        p, doc = self.run_agentrun({self.cli: self.contract_steps()}, "--prompts-dir", pdir,
                                   "-t", "distance", "--var", "place=the moon",
                                   *self.model_args)
        self.last_doc = doc
        self.assert_ok(p, doc)
        self.assertEqual(doc["json"], GOOD)
        self.assertEqual(doc["repair"], "model")
        self.assertEqual([c["kind"] for c in doc["calls"]], ["main", "repair"])
        n = self.text_requests_per_contract_call
        self.assertEqual(doc["tokens"]["input"], 100 * n + 200)
        self.assertEqual(doc["tokens"]["output"], 20 * n + 30)
        self.assertEqual(sum(c["tokens"]["input"] for c in doc["calls"]), doc["tokens"]["input"])
        if doc["cost_usd"] is not None:
            self.assertAlmostEqual(doc["cost_usd"], sum(c["cost_usd"] for c in doc["calls"]),
                                   places=9)
        reqs = self.new_model_requests()
        self.assertEqual(len(reqs), n + 1)
        first = strings_of(self.mock.body_json(reqs[0]))
        self.assertIn("How far is the moon?", first)
        self.assertIn('"enum": ["m", "km"]', first)      # the contract stays in the prompt
        repair = strings_of(self.mock.body_json(reqs[-1]))
        self.assertIn("Correct a JSON answer", repair)
        for v in VIOLATIONS:
            self.assertIn(v, repair)
        self.assertIn('"minimum": 1', repair)            # the contract
        self.assertIn('"miles"', repair)                 # the previous answer

    def test_tool_call_writes_a_file(self):
        steps = [{"kind": "tool_write", "path": "hello.txt", "content": "written by the mock\n"},
                 {"kind": "text", "text": "Created hello.txt."}]
        p, doc = self.run_agentrun({self.cli: steps}, "--allow-edits", *self.model_args)
        self.assert_ok(p, doc)
        self.assertEqual(doc["output"], "Created hello.txt.")
        self.assertEqual(doc["files"], [{"path": "hello.txt", "op": "create", "from": None}])
        with open(os.path.join(self.root.work, "hello.txt")) as f:
            self.assertEqual(f.read(), "written by the mock\n")

    def test_http_errors_are_classified(self):
        for status, code in ((401, "auth"), (429, "rate_limit"), (500, "api_error")):
            with self.subTest(status=status):
                # --max-wait 0: no retry (test_outcomes.py covers the retry).
                p, doc = self.run_agentrun({self.cli: [{"kind": "error", "status": status}]},
                                           "--max-wait", "0", *self.model_args)
                self.assertEqual(p.returncode, 4, p.stderr.decode()[-2000:])
                self.assertFalse(doc["ok"])
                self.assertEqual(doc["error"]["code"], code, doc["error"])
                self.assertEqual(doc["calls"][0]["error"], code)
                self.assertEqual(len(doc["calls"]), 1)       # a provider failure is never repaired
                self.assertEqual(len(self.new_model_requests()), 1)   # retries are off

    def test_hang_mid_stream_idle_timeout_leaves_nothing(self):
        for idle in (self.idle_timeout, 3 * self.idle_timeout):
            t0 = time.time()
            p, doc = self.run_agentrun({self.cli: [{"kind": "hang", "text": "partial answer"}]},
                                       "--idle-timeout", "%ds" % idle, *self.model_args)
            took = time.time() - t0
            reqs = self.new_model_requests()
            if reqs:
                break
            # The CLI was still starting when the idle timeout fired (a loaded machine):
            # once more with a longer one, so the timeout really comes mid-stream.
        self.assertEqual(p.returncode, 5, p.stderr.decode()[-2000:])
        self.assertEqual(doc["error"]["code"], "idle_timeout", doc["error"])
        self.assertFalse(doc["ok"])
        self.assertTrue(doc["calls"][0]["timed_out"])
        self.assertLess(took, idle + 60)
        # The stream really hung mid-answer (the request was served the hang step).
        self.assertEqual([r["kind"] for r in reqs], ["hang"])
        # agentrun has exited: nothing of the run may remain (gemini's relaunched child
        # included). Allow a moment for SIGKILLed processes to be reaped.
        end = time.time() + 2
        left = harness.leftover_processes(self.root)
        while left and time.time() < end:
            time.sleep(0.1)
            left = harness.leftover_processes(self.root)
        self.assertEqual(left, [])

    def test_sigint_mid_stream_is_interrupted_and_leaves_nothing(self):
        self.interrupt_mid_stream()

    def test_a_slow_bashrc_leaves_nothing_behind(self):
        # codex sources ~/.bashrc when it starts, in a `bash -lc` of a session of its own
        # (its shell snapshot): a slow one is still running when the answer is complete or
        # the run is interrupted. Neither may leave it, nor what it started, behind.
        ran = os.path.join(self.root.home, "bashrc-ran")
        with open(os.path.join(self.root.home, ".bashrc"), "w") as f:
            f.write('echo $$ >> "$HOME/bashrc-ran"\nsleep 120\n')
        p, doc = self.run_agentrun({self.cli: [{"kind": "text", "text": "Done."}]},
                                   *self.model_args)
        self.assert_ok(p, doc)
        if self.cli == "codex":
            # The case this pins: the snapshot's shell ran (and was still sleeping).
            self.assertTrue(os.path.exists(ran), "codex no longer sources ~/.bashrc")
        self.assertEqual(harness.leftover_processes(self.root), [])
        self.interrupt_mid_stream()

    def interrupt_mid_stream(self):
        """SIGINT to agentrun while the model's answer hangs mid-stream: exit 130, a
        RunResult that says interrupted, and nothing of the run left."""
        self.mock.set_script({self.cli: [{"kind": "hang", "text": "partial answer"}]})
        self.seen = len(self.mock.requests())
        out_path = os.path.join(self.root.root, "out.json")
        with open(out_path, "wb") as out, open(os.devnull, "rb") as devnull:
            p = subprocess.Popen([AGENTRUN, "run", "-p", self.cli, "--format", "json",
                                  "--timeout", "90s", *self.model_args, "Say something."],
                                 stdin=devnull, stdout=out, stderr=subprocess.PIPE,
                                 cwd=self.root.work, env=self.root.agentrun_env())
            try:
                end = time.time() + 60
                while not self.new_model_requests() and p.poll() is None and time.time() < end:
                    time.sleep(0.05)
                self.assertEqual([r["kind"] for r in self.new_model_requests()], ["hang"])
                p.send_signal(signal.SIGINT)
                _, err = p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        self.assertEqual(p.returncode, 130, err.decode()[-2000:])
        with open(out_path) as f:
            doc = json.load(f)
        self.assertFalse(doc["ok"])
        self.assertEqual(doc["error"]["code"], "interrupted", doc["error"])
        self.assertEqual(harness.leftover_processes(self.root), [])

    def test_2mib_answer_arrives_whole(self):
        n = 2 * 1024 * 1024
        want = mockapi.big_text(n, 5)
        p, doc = self.run_agentrun({self.cli: [{"kind": "big", "bytes": n, "seed": 5}]},
                                   *self.model_args)
        self.assert_ok(p, doc)
        self.assertEqual(len(doc["output"]), len(want))
        self.assertEqual(sha(doc["output"]), sha(want))

    def test_1mib_prompt_reaches_the_api_whole(self):
        prompt = mockapi.big_text(1024 * 1024, 9)
        path = os.path.join(self.root.root, "prompt.txt")
        with open(path, "w") as f:
            f.write(prompt)
        p, doc = self.run_agentrun({self.cli: [{"kind": "text", "text": "Read it."}]},
                                   "-f", path, *self.model_args, stdin=b"")
        self.assert_ok(p, doc)
        self.assertEqual(doc["output"], "Read it.")
        reqs = self.new_model_requests()
        self.assertEqual(len(reqs), 1)
        self.assertGreater(reqs[0]["body_size"], len(prompt))
        self.assertIn(prompt.rstrip("\n"), strings_of(self.mock.body_json(reqs[0])))


class TestClaude(Base, unittest.TestCase):
    cli = "claude"
    # With a contract agentrun passes --json-schema; a model answering in text instead
    # of calling StructuredOutput is re-prompted once by claude itself, so each call
    # whose answer is text takes two requests.
    text_requests_per_contract_call = 2

    def usage(self):
        # Anthropic's input excludes the cache: the mock sends it as it is.
        return {"input": 1000, "cached": 300, "cache_write": 50, "output": 40, "reasoning": 0}

    def result_line(self):
        res = [o for o in self.transcript_lines() if o.get("type") == "result"]
        self.assertEqual(len(res), 1)
        return res[0]

    def session_of_transcript(self):
        return self.result_line()["session_id"]

    def cli_call_cost(self, res):
        """What claude itself says this call cost: the since-last-result figures of a
        resumed call (2.1.280+), else total_cost_usd."""
        since = res.get("model_usage_since_last_result")
        if since:
            return sum(m["costUSD"] for m in since.values())
        return res["total_cost_usd"]

    def check_cost(self, doc, u):
        # Facts that hold across claude versions: the cost is claude's own report, and it
        # is the price of the model claude says it used (its default changes between
        # versions: claude-opus-4-8[1m], claude-opus-5, claude-opus-5-5).
        self.assertEqual(doc["cost_source"], "cli")
        self.assertAlmostEqual(doc["cost_usd"], self.cli_call_cost(self.result_line()), places=12)
        self.assertTrue(doc["model"].startswith("claude-"), doc["model"])
        # The call names the claude that answered, and nothing in its stream was unknown.
        init = [o for o in self.transcript_lines() if o.get("subtype") == "init"]
        self.assertEqual(doc["calls"][-1]["cli_version"], init[-1]["claude_code_version"])
        self.assertEqual(doc["calls"][-1]["unknown_events"], 0)
        self.assertIsNone(doc["rate_limit"])  # an API key's responses carry no quota
        model = doc["model"].split("[")[0]
        if model in CLAUDE_PRICES:
            inp, out, cr, cw = CLAUDE_PRICES[model]
            if not u["cache_write"] or cw is not None:
                want = (u["input"] * inp + u["cached"] * cr + u["cache_write"] * (cw or 0)
                        + u["output"] * out) / 1e6
                self.assertAlmostEqual(doc["cost_usd"], want, places=9)

    def test_a_rejected_quota_reaches_the_rate_limit(self):
        # claude reports its subscription quota (a rate_limit_event from the API's
        # anthropic-ratelimit-unified-* headers) only for a subscription login: with
        # CLAUDE_CODE_OAUTH_TOKEN instead of an API key, a 429 whose quota is rejected and
        # comes back in two hours, past --max-wait, fails rate_limit with the reset time.
        step = {"kind": "error", "status": 429, "message": "usage limit reached",
                "unified": {"status": "rejected", "resets_in": 7200, "claim": "five_hour",
                            "utilization": 1.0}}
        t0 = time.time()
        p, doc = self.run_agentrun({self.cli: [step]}, "--max-wait", "1s", env={
            "ANTHROPIC_API_KEY": None, "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-mock"})
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(doc["error"]["code"], "rate_limit", doc["error"])
        rl = doc["rate_limit"]
        self.assertEqual((rl["status"], rl["window"], rl["source"]),
                         ("rejected", "five_hour", "claude:rate_limit_event"), rl)
        resets = datetime.datetime.strptime(rl["resets_at"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        self.assertLess(abs(resets - (t0 + 7200)), 120)
        self.assertIn(rl["resets_at"], doc["error"]["message"])
        self.assertGreater(doc["error"]["retry_after_s"], 7000)
        self.assertEqual(len(self.new_model_requests()), 1)  # no wait, no second call

    def test_resume_continues_the_session_with_per_call_tokens(self):
        super().test_resume_continues_the_session_with_per_call_tokens()
        # The resumed call's cost is its own, whether claude states the session's totals
        # beside it (2.1.280+) or not.
        res = [o for o in self.transcript_lines() if o.get("type") == "result"][-1]
        doc = self.last_doc
        self.assertEqual(doc["cost_source"], "cli")
        self.assertAlmostEqual(doc["cost_usd"], self.cli_call_cost(res), places=12)
        model = doc["model"].split("[")[0]
        if model in CLAUDE_PRICES:
            inp, out, cr, _ = CLAUDE_PRICES[model]
            self.assertAlmostEqual(doc["cost_usd"], (2000 * inp + 300 * cr + 20 * out) / 1e6,
                                   places=9)

    def test_2020_12_contract_works(self):
        # claude 2.1.205+ refuses a --json-schema declaring draft 2020-12; agentrun hands it
        # a copy without "$schema" and checks the answer against the contract as written.
        pdir = os.path.join(self.root.root, "prompts")
        os.makedirs(pdir)
        with open(os.path.join(pdir, "distance.md"), "w") as f:
            f.write(TEMPLATE.replace('{"type": "object",',
                                     '{"$schema": "https://json-schema.org/draft/2020-12/schema",'
                                     ' "type": "object",'))
        p, doc = self.run_agentrun({self.cli: [{"kind": "structured", "value": GOOD}]},
                                   "--prompts-dir", pdir, "-t", "distance", "--var", "place=Rome")
        self.assert_ok(p, doc)
        self.assertEqual(doc["json"], GOOD)
        self.assertEqual(doc["repair"], "none")
        argv = doc["calls"][0]["argv"]
        native = json.loads(argv[argv.index("--json-schema") + 1])
        self.assertNotIn("$schema", native)
        self.assertEqual(native["required"], ["answer", "unit"])

    def rich_steps(self):
        # The answer in text (claude asks once more for the tool, then gives up on it),
        # then through StructuredOutput after the repair prompt.
        return [{"kind": "json", "value": RICH_BAD, "times": 2},
                {"kind": "structured", "value": RICH_GOOD}]

    def check_native_schema(self, argv):
        # claude validates StructuredOutput itself: it gets the contract without "$schema"
        # (2.1.205+ refuses 2020-12's), in a dialect its validator takes.
        native = json.loads(argv[argv.index("--json-schema") + 1])
        self.assertNotIn("$schema", native)
        self.assertEqual(native["required"], ["answer", "unit", "via", "ratio", "pair", "tags"])
        self.assertEqual(native["dependencies"], {"note": ["via"]})
        self.assertEqual(native["properties"]["via"]["anyOf"][0]["$ref"], "#/definitions/city")
        self.assertEqual(native["properties"]["pair"]["items"], [{"type": "string"},
                                                                 {"type": "number"}])
        self.assertNotIn("unevaluatedProperties", native)

    def contract_steps(self):
        bad = {"kind": "json", "value": BAD, "usage": {"input": 100, "output": 20}, "times": 2}
        return [bad, {"kind": "structured", "value": GOOD, "usage": {"input": 200, "output": 30}}]

    def test_template_contract_with_repair(self):
        super().test_template_contract_with_repair()
        # Both calls' costs are claude's own, summed.
        costs = [o["total_cost_usd"] for o in self.transcript_lines() if o.get("type") == "result"]
        self.assertEqual(len(costs), 2)
        self.assertEqual(self.last_doc["cost_source"], "cli")
        self.assertAlmostEqual(self.last_doc["cost_usd"], sum(costs), places=12)


    def test_structured_output_refused_by_claude_itself(self):
        # claude checks each StructuredOutput call against --json-schema itself and asks
        # the model again; after five refused calls it gives up: the model failed the
        # contract (exit 3), no API failure.
        pdir = os.path.join(self.root.root, "prompts")
        os.makedirs(pdir)
        with open(os.path.join(pdir, "distance.md"), "w") as f:
            f.write(TEMPLATE)
        p, doc = self.run_agentrun({self.cli: [{"kind": "structured", "value": BAD, "times": 5}]},
                                   "--prompts-dir", pdir, "-t", "distance", "--var", "place=Rome")
        self.assertEqual(p.returncode, 3, p.stderr.decode()[-2000:])
        self.assertEqual(doc["error"]["code"], "contract", doc["error"])
        # The stable part: claude 2.1.280+ appends the last validation error.
        self.assertTrue(doc["error"]["message"].startswith(
            "Failed to provide valid structured output after 5 attempts"), doc["error"])
        self.assertEqual(len(doc["calls"]), 1)
        self.assertEqual(len(self.new_model_requests()), 5)


    def test_a_session_to_resume_that_is_not_there_is_no_interrupt(self):
        # claude says why it could not start (startup_failure_reason) in a zeroed
        # error_during_execution result, which agentrun once read as an interrupt (exit 130).
        sid = "00000000-0000-4000-8000-000000000000"
        p, doc = self.run_agentrun({self.cli: []}, "--resume", sid, "--max-wait", "0")
        self.assertEqual(p.returncode, 4, p.stderr.decode()[-2000:])
        self.assertEqual(doc["error"]["code"], "cli_failed", doc["error"])
        self.assertIn("No conversation found with session ID: " + sid, doc["error"]["message"])
        self.assertEqual(self.new_model_requests(), [])

    def test_a_model_claude_has_no_price_for_is_not_priced_by_its_guess(self):
        # claude prices a model it does not know at its default model's rate and says so
        # (costBasis "unknown", 2.1.3xx); agentrun's table has no price for it either.
        p, doc = self.run_agentrun({self.cli: [{"kind": "text", "text": "hi"}]},
                                   "-m", "claude-unknown-9")
        self.assert_ok(p, doc)
        res = self.result_line()
        basis = [m.get("costBasis") for m in res["modelUsage"].values()]
        if "unknown" in basis:
            self.assertEqual((doc["cost_source"], doc["cost_usd"]), ("unknown", None))
        else:  # a claude older than costBasis: its own figure, as before
            self.assertEqual(doc["cost_source"], "cli")


class TestCodex(Base, unittest.TestCase):
    cli = "codex"
    model_args = ("-m", "gpt-5.5")

    def session_of_transcript(self):
        ids = [o["thread_id"] for o in self.transcript_lines() if o.get("type") == "thread.started"]
        self.assertEqual(len(ids), 1)
        return ids[0]

    def test_resume_continues_the_session_with_per_call_tokens(self):
        super().test_resume_continues_the_session_with_per_call_tokens()
        # What codex itself said: the resumed turn's usage covers the whole thread, so
        # agentrun had something to subtract.
        usage = [o["usage"] for o in self.transcript_lines() if o.get("type") == "turn.completed"]
        self.assertEqual(len(usage), 2)
        self.assertEqual(usage[1]["input_tokens"], 1000 + 2300)
        self.assertEqual(usage[1]["output_tokens"], 10 + 20)

    def test_rollout_rate_limits_and_cli_version(self):
        # codex writes the API's x-codex-* rate-limit headers into its rollout's rate_limits;
        # the RunResult's rate_limit is the window most used, the call names codex's version.
        step = {"kind": "text", "text": "hi", "codex_limits": {
            "primary": {"used_percent": 42.5, "window_minutes": 300, "resets_in": 3600},
            "secondary": {"used_percent": 7, "window_minutes": 10080, "resets_in": 86400}}}
        t0 = time.time()
        p, doc = self.run_agentrun({self.cli: [step]}, *self.model_args)
        self.assert_ok(p, doc)
        rl = doc["rate_limit"]
        self.assertEqual((rl["status"], rl["window"], rl["source"]),
                         ("allowed", "five_hour", "codex:rollout"), rl)
        self.assertAlmostEqual(rl["used_percent"], 42.5, places=6)
        resets = datetime.datetime.strptime(rl["resets_at"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        self.assertLess(abs(resets - (t0 + 3600)), 120)
        call = doc["calls"][0]
        self.assertRegex(call["cli_version"] or "", r"^\d+\.\d+\.\d+$")
        self.assertEqual(call["unknown_events"], 0)

    def check_cost(self, doc, u):
        self.assertEqual(doc["model"], "gpt-5.5")
        self.assertEqual(doc["cost_source"], "price_table")
        self.assertAlmostEqual(doc["cost_usd"], self.table_cost("gpt-5.5", u), places=12)


class TestGemini(Base, unittest.TestCase):
    cli = "gemini"
    # -m skips gemini's model router: a model the price table knows.
    model_args = ("-m", "gemini-2.5-pro")
    idle_timeout = 12

    def session_of_transcript(self):
        ids = [o["session_id"] for o in self.transcript_lines() if o.get("type") == "init"]
        self.assertEqual(len(ids), 1)
        return ids[0]

    def check_cost(self, doc, u):
        self.assertEqual(doc["model"], "gemini-2.5-pro")
        self.assertEqual(doc["cost_source"], "price_table")
        self.assertAlmostEqual(doc["cost_usd"], self.table_cost("gemini-2.5-pro", u), places=12)

    def test_loop_detection_is_empty_not_success(self):
        # gemini stops a repetitive answer (after one nudge request) with status success
        # and no text: agentrun must call that a failure.
        p, doc = self.run_agentrun({self.cli: [{"kind": "repetitive", "bytes": 65536,
                                                "times": 2}]}, *self.model_args)
        self.assertEqual(p.returncode, 4, p.stderr.decode()[-2000:])
        self.assertFalse(doc["ok"])
        self.assertEqual(doc["error"]["code"], "empty", doc["error"])
        self.assertEqual(doc["calls"][0]["error"], "empty")

    def test_default_model_makes_one_request_and_is_recorded(self):
        # Without -m gemini would route: a classifier request to a lite model first.
        # agentrun names gemini's own default ("pro") instead: one request, and the
        # result records the model gemini resolved it to, priced from the table.
        u = self.usage()
        p, doc = self.run_agentrun({self.cli: [{"kind": "text", "text": "Direct.", "usage": u}]})
        self.assert_ok(p, doc)
        self.assertEqual(doc["output"], "Direct.")
        reqs = [e for e in self.mock.requests()[self.seen:] if e["method"] == "POST"]
        self.assertEqual([(e["api"], bool(e.get("side"))) for e in reqs], [("gemini", False)])
        self.assertIn("-m", doc["calls"][0]["argv"])
        self.assertTrue(doc["model"].startswith("gemini-") and "pro" in doc["model"],
                        doc["model"])
        self.assertIn(doc["model"], reqs[0]["path"])
        self.assertEqual(doc["tokens"], self.expected_tokens(u))
        self.assertEqual(doc["cost_source"], "price_table")
        self.assertAlmostEqual(doc["cost_usd"], self.table_cost(doc["model"], u), places=12)

    def test_unknown_model_has_unknown_cost(self):
        # A model the price table does not know: null and "unknown", never 0.
        u = self.usage()
        p, doc = self.run_agentrun({self.cli: [{"kind": "text", "text": "Hi.", "usage": u}]},
                                   "-m", "gemini-9-mock")
        self.assert_ok(p, doc)
        self.assertEqual(doc["model"], "gemini-9-mock")
        self.assertIsNone(doc["cost_usd"])
        self.assertEqual(doc["cost_source"], "unknown")
        self.assertIsNone(doc["calls"][0]["cost_usd"])

def main():
    harness.require_clis()
    unittest.main()


if __name__ == "__main__":
    main()
