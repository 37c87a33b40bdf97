"""Daily use (issue 20): did-you-mean, JSON results for every failure, piped prompts,
rounded costs, resumable batches in one command, job ids in messages."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, Sandbox, claude_stream  # noqa: E402


def jobs(n, **extra):
    return "".join(json.dumps(dict({"id": f"job{i}", "prompt": f"prompt {i}"}, **extra)) + "\n"
                   for i in range(n))


def records(text):
    return [json.loads(l) for l in text.splitlines()]


class Typos(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox(git=False)

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def test_mistyped_command_is_named_with_the_nearest_one(self):
        p = self.sb.run("--verison")
        self.assertEqual(p.returncode, 2)
        self.assertIn("did you mean '--version'?", p.stderr)
        p = self.sb.run("reveiw")
        self.assertEqual(p.returncode, 2)
        self.assertIn("did you mean 'review'?", p.stderr)

    def test_unrelated_word_gets_no_guess(self):
        p = self.sb.run("frobnicate")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", p.stderr)
        self.assertNotIn("did you mean", p.stderr)

    def test_mistyped_flag_is_named_with_the_nearest_one(self):
        p = self.sb.run("run", "--promts-dir", "x", "hi")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown option '--promts-dir'; did you mean '--prompts-dir'?", p.stderr)
        p = self.sb.run("batch", "--resme-from=x")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown option '--resme-from'; did you mean '--resume-from'?", p.stderr)


def json_commands(sb):
    """The commands whose --format takes json, read from their own --help."""
    p = sb.run("--help")
    names = re.findall(r"^  ([a-z]+) ", p.stdout.split("commands:", 1)[1], re.M)
    return [n for n in names
            if re.search(r"--format FORMAT[^\n]*\n?[^\n]*\bjson\b", sb.run(n, "--help").stdout)]


class FormatJsonOnEveryFailure(unittest.TestCase):
    """The rule (issue 31): a command asked for --format json prints exactly one JSON
    object on stdout whenever it fails, whatever failed and however --format was spelled."""

    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def assert_one_failure_object(self, cmd, args, code=None):
        p = self.sb.run(cmd, *args, input="")
        self.assertNotEqual(p.returncode, 0, (cmd, args, p.stderr))
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 1, (cmd, args, p.stdout, p.stderr))
        doc = json.loads(lines[0])
        self.assertIsInstance(doc, dict, (cmd, args))
        err = doc.get("error")
        self.assertTrue(err, (cmd, args, doc))
        if doc.get("schema"):
            self.assertTrue(doc["schema"].startswith("agentrun."), doc)
        if code and isinstance(err, dict):
            self.assertEqual(err["code"], code, (cmd, args, doc))
        if isinstance(err, dict):
            self.assertTrue(err["message"], (cmd, args, doc))
            self.assertIs(doc.get("ok", doc.get("passed")), False, doc)
        return doc

    def test_every_json_command_prints_one_object_on_a_usage_error(self):
        cmds = json_commands(self.sb)
        self.assertEqual(sorted(cmds), ["cache", "doctor", "prioritize", "prompts", "review",
                                        "route", "run", "worktrees"])
        spellings = (["--format", "json", "--no-such-option"],
                     ["--format=json", "--no-such-option"],
                     ["--form", "json", "--no-such-option"],
                     ["--no-such-option", "--format", "json"],
                     ["--format", "json", "--no-such-option", "--", "x"])
        for cmd in cmds:
            for args in spellings:
                self.assert_one_failure_object(cmd, args, "usage")
        # Without json, nothing on stdout.
        for cmd in cmds:
            p = self.sb.run(cmd, "--no-such-option", "--format", "text")
            self.assertEqual(p.stdout, "", cmd)

    def test_each_command_prints_one_object_when_its_input_is_wrong(self):
        self.sb.write("prds/a.md", "# A\n")
        cases = [
            ("prioritize", ["nosuchdir"], "usage"),
            ("prioritize", ["--prices", "nosuch.json", "prds"], "io"),
            ("review", ["nope"], "usage"),
            ("review", ["--fail-on", "bad"], "usage"),
            ("review", ["--prices", "nosuch.json"], "io"),
            ("route", ["--manifest", "nosuch.json", "q"], "usage"),
            ("route", [], "usage"),
            ("run", ["-C", "nosuchdir", "hi"], "usage"),
            ("run", ["--prices", "nosuch.json", "hi"], "io"),
            ("prompts", ["show", "nosuch"], None),
            ("cache", ["bogus"], "usage"),
            ("doctor", ["extra-argument"], "usage"),
            ("worktrees", ["bogus"], "usage"),
        ]
        self.sb.answers("codex", ["hi"])
        self.sb.write("file.txt", "x\n")
        for cmd, args, code in cases:
            self.assert_one_failure_object(cmd, ["--format", "json", *args], code)
        self.assertEqual(self.sb.calls(), [])

    def test_review_outside_git_prints_one_object(self):
        sb = Sandbox(git=False)
        try:
            p = sb.run("review", "--format", "json", "HEAD~1")
            self.assertEqual(p.returncode, 2, p.stderr)
            doc = json.loads(p.stdout)
            self.assertEqual(doc["verdict"], "error")
            self.assertEqual(doc["error"]["code"], "usage")
        finally:
            sb.__exit__(None, None, None)


class FullDisk(unittest.TestCase):
    def test_help_and_version_to_a_full_disk_fail(self):
        """What never reached stdout is not an answer: exit 2 and say why."""
        sb = Sandbox(git=False)
        try:
            for args in (["--help"], ["-h"], ["--version"], ["version"], ["help"],
                         ["help", "run"], ["run", "--help"], ["doctor", "--help"],
                         ["prompts", "list"]):
                with open("/dev/full", "w") as full:
                    p = subprocess.run([AGENTRUN, *args], stdout=full, stderr=subprocess.PIPE,
                                       text=True, env=sb.env, cwd=sb.work, timeout=30)
                self.assertEqual(p.returncode, 2, (args, p.stderr))
                self.assertIn("cannot write", p.stderr, args)
        finally:
            sb.__exit__(None, None, None)

    def test_a_large_value_to_a_full_disk_fails(self):
        """A value written in large pieces fails the same way: exit 2, said once."""
        sb = Sandbox(git=False)
        try:
            path = os.path.join(sb.work, "big.json")
            with open(path, "w") as f:
                f.write('{"a": "' + "x" * 300000 + '"}')
            with open("/dev/full", "w") as full:
                p = subprocess.run([AGENTRUN, "extract", path], stdout=full,
                                   stderr=subprocess.PIPE, text=True, env=sb.env, cwd=sb.work,
                                   timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.count("cannot write the result to stdout"), 1, p.stderr)
        finally:
            sb.__exit__(None, None, None)


class RunMessages(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def result(self, p):
        self.assertEqual(len(p.stdout.splitlines()), 1, p.stdout)
        return json.loads(p.stdout)

    def test_format_json_prints_a_runresult_for_usage_errors(self):
        for args in (["--bogus", "hi"], ["-C", os.path.join(self.sb.work, "README"), "hi"],
                     ["--schema", "/nonexistent.json", "hi"], ["--timeout", "soon", "hi"],
                     ["-t", "review"]):
            p = self.sb.run("run", "--format", "json", *args, input="")
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            r = self.result(p)
            self.assertIs(r["ok"], False, args)
            self.assertEqual(r["error"]["code"], "usage", args)
            self.assertTrue(r["error"]["message"], args)
            self.assertEqual(r["calls"], [], args)

    def test_format_json_prints_a_runresult_for_io_errors(self):
        self.sb.answers("codex", ["hi"])
        d = os.path.join(self.sb.root, "dir")
        os.mkdir(d)
        p = self.sb.run("run", "--format=json", "--transcript", d, "hi")
        self.assertEqual(p.returncode, 2, p.stderr)
        r = self.result(p)
        self.assertEqual(r["error"]["code"], "io")
        self.assertIn("transcript", r["error"]["message"])
        self.assertEqual(self.sb.calls(), [])

    def test_file_given_as_directory_is_called_a_file(self):
        p = self.sb.run("run", "-C", os.path.join(self.sb.work, "README"), "hi")
        self.assertEqual(p.returncode, 2)
        self.assertIn("is not a directory", p.stderr)
        self.assertNotIn("no such directory", p.stderr)

    def test_missing_prompts_dir_is_an_error_even_without_a_template(self):
        self.sb.answers("codex", ["hi"])
        p = self.sb.run("run", "--prompts-dir", os.path.join(self.sb.root, "nope"), "hi")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--prompts-dir: no such directory", p.stderr)
        self.assertEqual(self.sb.calls(), [])

    def test_unset_template_variable_says_how_to_set_it(self):
        d = os.path.join(self.sb.root, "prompts")
        self.sb.write("greet.md", "Say hello to {{who}}.\n", base=d)
        p = self.sb.run("run", "--prompts-dir", d, "-t", "greet")
        self.assertEqual(p.returncode, 2)
        self.assertIn("variable 'who' is not set (--var who=VALUE", p.stderr)
        # In a batch: the line, the template file and line, and the key to use.
        p = self.sb.run("batch", "--prompts-dir", d, "-",
                        input=json.dumps({"id": "a", "template": "greet"}) + "\n")
        self.assertEqual(p.returncode, 2, p.stderr)
        msg = json.loads(p.stdout)["error"]["message"]
        self.assertRegex(msg, r"^line 1: .*greet\.md:1: variable 'who' is not set")
        self.assertIn('"vars"', msg)

    def test_piped_stdin_is_the_prompt(self):
        self.sb.answers("codex", ["answer"])
        p = self.sb.run("run", input="what is two plus two\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "answer\n")
        self.assertEqual(self.sb.calls()[0]["stdin"], "what is two plus two\n")

    def test_empty_stdin_and_no_prompt_is_a_usage_error(self):
        p = self.sb.run("run", input="")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no prompt", p.stderr)
        self.assertIn("standard input was empty", p.stderr)

    def test_cost_of_several_calls_has_no_float_noise(self):
        # 0.01 + 0.05 is 0.060000000000000005 in binary floating point.
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join([
            self.sb.fixture(claude_stream("no json here", cost=0.01)),
            self.sb.fixture(claude_stream('{"a": 1}', cost=0.05))])
        p = self.sb.run("run", "--json", "--format", "json", "hi", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('"cost_usd":0.06,', p.stdout)
        self.assertEqual(json.loads(p.stdout)["cost_usd"], 0.06)

    def test_log_format_json_ends_with_a_json_summary(self):
        self.sb.answers("codex", ["answer"])
        p = self.sb.run("run", "--log-format", "json", "hi")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertTrue(lines, p.stderr)
        for l in lines:
            json.loads(l)  # every stderr line is JSON
        last = json.loads(lines[-1])
        self.assertEqual(last["event"], "run_summary")
        self.assertEqual(last["provider"], "codex")

    def test_codex_resume_without_its_rollout_says_tokens_are_cumulative(self):
        self.sb.answers("codex", ["again"])
        home = os.path.join(self.sb.root, "codex-home")
        os.mkdir(home)
        p = self.sb.run("run", "--format", "json", "--resume",
                        "01a201a4-e6d7-7c03-9d63-000000000001", "more",
                        env={"CODEX_HOME": home})
        self.assertEqual(p.returncode, 0, p.stderr)
        call = json.loads(p.stdout)["calls"][0]
        self.assertIs(call["usage_cumulative"], True)
        self.assertIn("running token total", p.stderr)
        p = self.sb.run("run", "--format", "json", "fresh")
        self.assertIs(json.loads(p.stdout)["calls"][0]["usage_cumulative"], False)

    def test_no_json_is_said_once(self):
        self.sb.answers("codex", ["prose", "still prose"])
        p = self.sb.run("run", "--json", "hi")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(p.stderr.count("no JSON object found"), 1, p.stderr)

    def test_max_cost_says_when_the_cli_cannot_enforce_it(self):
        self.sb.answers("codex", ["answer"])
        p = self.sb.run("run", "--max-cost", "0.5", "hi")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--max-cost", p.stderr)
        self.assertIn("codex", p.stderr)
        self.sb.env["FAKE_CLI_FIXTURE"] = self.sb.fixture(claude_stream("answer"))
        p = self.sb.run("run", "--max-cost", "0.5", "hi", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("--max-cost", p.stderr)

    def test_extract_hints_at_repair(self):
        p = self.sb.run("extract", input="{'a': 1}\n")
        self.assertEqual(p.returncode, 3)
        self.assertIn("--repair finds one (single_quotes)", p.stderr)
        p = self.sb.run("extract", input="no json at all\n")
        self.assertEqual(p.returncode, 3)
        self.assertNotIn("--repair", p.stderr)


SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT", ".")
SUMMARY = re.compile(r"^agentrun (review|prioritize|route): codex: \d+ input \+ \d+ cached \+ "
                     r"\d+ output tokens, (\$[0-9.]+|cost unknown), [0-9.]+ s, 1 call"
                     r"(, \d+% of the input from the cache)?$", re.M)


class Summaries(unittest.TestCase):
    """review, prioritize and route end with the same one-line summary as run."""

    def setUp(self):
        self.sb = Sandbox()

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def commands(self):
        self.sb.write("prds/auth.md", "# Auth\nLog in.\n")
        self.sb.write("change.patch", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
        manifest = os.path.join(os.path.abspath(SOURCE_ROOT), "tests", "fixtures", "route",
                                "manifest.json")
        review = "```json\n" + json.dumps({"passed": True, "summary": "ok", "issues": []}) + "\n```"
        rank = json.dumps({"recommendations": [{"prd_id": "auth", "priority": 1,
                                                "rationale": "first"}]})
        route = json.dumps([{"type": "task", "name": "customer-portal", "confidence": 0.9,
                             "reasoning": "fits"}])
        return [(["review", "change.patch"], review), (["prioritize", "prds"], rank),
                (["route", "--manifest", manifest, "where do our clients look at past purchases"],
                 route)]

    def test_each_command_ends_with_a_summary_line_and_q_drops_it(self):
        for args, answer in self.commands():
            with self.subTest(cmd=args[0]):
                self.sb.answers("codex", [answer])
                p = self.sb.run(*args)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertRegex(p.stderr, SUMMARY)
                p = self.sb.run(*args, "-q")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "")

    def test_json_outputs_are_one_line_unless_pretty(self):
        args, answer = self.commands()[0]
        for fmt in ("json", "sarif", "gitlab"):
            with self.subTest(fmt=fmt):
                self.sb.answers("codex", [answer])
                p = self.sb.run(*args, "--format", fmt, "-q")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(len(p.stdout.splitlines()), 1, p.stdout[:200])
                one = json.loads(p.stdout)
                p = self.sb.run(*args, "--format", fmt, "-q", "--pretty")
                pretty = json.loads(p.stdout)
                if fmt == "json":
                    self.assertGreater(len(p.stdout.splitlines()), 3)
                    self.assertEqual(pretty["verdict"], one["verdict"])
                    self.assertEqual(pretty["issues"], one["issues"])
                elif fmt == "sarif":
                    self.assertGreater(len(p.stdout.splitlines()), 3)
                    self.assertEqual(pretty["runs"][0]["results"], one["runs"][0]["results"])
                else:
                    self.assertEqual(pretty, one)
        p = self.sb.run("doctor", "--format", "json")
        self.assertEqual(len(p.stdout.splitlines()), 1, p.stdout[:200])

    def test_log_format_json_summary_is_a_json_event(self):
        for args, answer in self.commands():
            with self.subTest(cmd=args[0]):
                self.sb.answers("codex", [answer])
                p = self.sb.run(*args, "--log-format", "json")
                self.assertEqual(p.returncode, 0, p.stderr)
                last = json.loads(p.stderr.splitlines()[-1])
                self.assertEqual(last["event"], args[0] + "_summary")
                self.assertEqual(last["calls"], 1)


class InputsAreNeverOutputs(unittest.TestCase):
    """issue 45: a file agentrun writes is never one it reads, through any name."""

    def setUp(self):
        self.sb = Sandbox()
        self.jobs = os.path.join(self.sb.root, "jobs.jsonl")
        with open(self.jobs, "w") as f:
            f.write(jobs(2))
        with open(self.jobs) as f:
            self.text = f.read()
        self.sb.answers("codex", ["ok"])

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def refused(self, p, words):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(words, p.stderr)
        self.assertIn("the same file", p.stderr)
        with open(self.jobs) as f:
            self.assertEqual(f.read(), self.text)
        self.assertEqual(self.sb.calls(), [])

    def test_output_that_is_the_job_file_is_refused_before_anything_runs(self):
        link = os.path.join(self.sb.root, "link.jsonl")
        os.symlink(self.jobs, link)
        for args in (("-o", self.jobs, self.jobs),
                     ("--resume", "-o", self.jobs, self.jobs),
                     ("-o", link, self.jobs),
                     ("--resume", "-o", os.path.join(self.sb.root, ".", "jobs.jsonl"), link)):
            with self.subTest(args=args):
                self.refused(self.sb.run("batch", "--no-files", *args), "-o '")

    def test_job_file_on_standard_input_or_output_is_refused(self):
        with open(self.jobs) as f:
            p = subprocess.run([AGENTRUN, "batch", "--no-files", "-o", self.jobs, "-"], stdin=f,
                               capture_output=True, text=True, env=self.sb.env, cwd=self.sb.work)
        self.refused(p, "is the input 'standard input'")
        with open(self.jobs, "a") as f:
            p = subprocess.run([AGENTRUN, "batch", "--no-files", self.jobs], stdout=f,
                               stderr=subprocess.PIPE, text=True, env=self.sb.env,
                               cwd=self.sb.work)
        self.refused(p, "standard output '/dev/stdout' is the input")

    def test_transcript_that_is_an_input_is_refused(self):
        p = self.sb.run("batch", "--no-files", "--transcript", self.jobs, self.jobs)
        self.refused(p, "--transcript '")
        prompt = os.path.join(self.sb.root, "prompt.txt")
        with open(prompt, "w") as f:
            f.write("hello")
        p = self.sb.run("run", "--transcript", prompt, "-f", prompt)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--transcript '", p.stderr)
        with open(prompt) as f:
            self.assertEqual(f.read(), "hello")

    def test_transcript_is_no_file_any_option_names(self):
        base = os.path.join(self.sb.root, "base.json")
        with open(base, "w") as f:
            f.write("[]")
        for args in (("review", "--baseline", base), ("route", "--manifest", base, "x")):
            with self.subTest(args=args):
                p = self.sb.run(args[0], "--transcript", base, *args[1:])
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(f"--transcript '{base}' is the input '{base}'", p.stderr)
                with open(base) as f:
                    self.assertEqual(f.read(), "[]")
        self.assertEqual(self.sb.calls(), [])

    def test_cassettes_are_not_recorded_into_the_cache(self):
        d = os.path.join(self.sb.root, "tapes")
        os.mkdir(d)
        p = self.sb.run("run", "--no-tools", "--cache", "--cache-dir", d, "--record", d, "hi")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--record '", p.stderr)
        self.assertEqual(os.listdir(d), [])


class ResumableBatch(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()
        self.out = os.path.join(self.sb.root, "out.jsonl")

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def batch(self, text, *args):
        return self.sb.run("batch", "--no-files", *args, "-", input=text)

    def test_one_command_resumes_until_done_with_one_record_per_id(self):
        self.sb.answers("codex", ["ok"])
        # First run: the file does not exist yet; job1 fails.
        self.sb.env["FAKE_CLI_EXIT_1"] = "1"
        self.sb.env["FAKE_CLI_FIXTURE_1"] = "/dev/null"
        p = self.batch(jobs(3), "-j", "1", "--resume", "-o", self.out)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(len(records(open(self.out).read())), 3)
        for k in ("FAKE_CLI_EXIT_1", "FAKE_CLI_FIXTURE_1"):
            del self.sb.env[k]
        # The same command again: only job1 runs, and its failed record is replaced.
        p = self.batch(jobs(3), "-j", "1", "--resume", "-o", self.out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("2 skipped", p.stderr)
        recs = records(open(self.out).read())
        self.assertEqual(sorted(r["id"] for r in recs), ["job0", "job1", "job2"])
        self.assertTrue(all(r["ok"] for r in recs))
        # And once more: nothing to do, nothing changes.
        before = open(self.out).read()
        p = self.batch(jobs(3), "--resume", "-o", self.out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("3 skipped", p.stderr)
        self.assertEqual(open(self.out).read(), before)

    def test_bad_lines_keep_one_record_across_resumes(self):
        # issue 45: every bad-line record was written once more by each --resume.
        self.sb.answers("codex", ["ok"])
        text = (jobs(1) + json.dumps({"id": "typo", "promt": "x"}) + "\n"
                + "not json\n" + json.dumps({"id": "job0", "prompt": "twice"}) + "\n")
        for _ in range(3):
            p = self.batch(text, "--resume", "-o", self.out)
            self.assertEqual(p.returncode, 2, p.stderr)
            with open(self.out) as f:
                ids = [r["id"] for r in records(f.read())]
            self.assertEqual(sorted(ids), ["job0", "line 3", "line 4", "typo"])

    def test_resume_drops_a_cut_line(self):
        self.sb.answers("codex", ["ok"])
        with open(self.out, "w") as f:
            f.write('{"id":"job0","ok":true}\n{"id":"job1","sch')
        p = self.batch(jobs(2), "--resume", "-o", self.out)
        self.assertEqual(p.returncode, 0, p.stderr)
        recs = records(open(self.out).read())
        self.assertEqual([r["id"] for r in recs], ["job0", "job1"])

    def test_resume_needs_an_output_file(self):
        p = self.batch(jobs(1), "--resume")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--resume needs -o FILE", p.stderr)

    def test_resume_from_a_file_not_written_yet_runs_everything(self):
        self.sb.answers("codex", ["ok"])
        p = self.batch(jobs(2), "--resume-from", self.out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(records(p.stdout)), 2)

    def test_duplicate_id_never_gives_a_second_record_of_that_id(self):
        self.sb.answers("codex", ["ok"])
        text = jobs(1) + json.dumps({"id": "job0", "prompt": "again"}) + "\n"
        p = self.batch(text)
        self.assertEqual(p.returncode, 2, p.stderr)
        recs = records(p.stdout)
        self.assertEqual(sorted(r["id"] for r in recs), ["job0", "line 2"])
        dup = [r for r in recs if r["id"] == "line 2"][0]
        self.assertIn("id 'job0' is used twice (first on line 1)", dup["error"]["message"])

    def test_interrupted_summary_counts_jobs_never_started(self):
        self.sb.answers("codex", ["quick"])
        self.sb.env["FAKE_CLI_HANG"] = "0,1"  # call 0 answers, call 1 hangs
        e = dict(self.sb.env, AGENTRUN_PROVIDER="codex")
        path = self.sb.write("jobs.jsonl", jobs(5), base=self.sb.root)
        proc = subprocess.Popen([AGENTRUN, "batch", "--no-files", "-j", "1", path],
                                cwd=self.sb.work, env=e, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 20
        while len(self.sb.calls()) < 2 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130, err)
        self.assertEqual(len(records(out)), 2)  # one ok, one interrupted
        self.assertIn("1 ok, 1 failed, 0 skipped, 3 not started;", err)

    def test_messages_about_a_job_name_it(self):
        self.sb.answers("codex", ["prose, not json"])
        p = self.batch(jobs(1, json=True), "-v")
        self.assertEqual(p.returncode, 3, p.stderr)
        lines = [l for l in p.stderr.splitlines()
                 if l.startswith("agentrun:") and "batch:" not in l]
        self.assertTrue(lines, p.stderr)
        self.assertTrue(all("job0" in l for l in lines), p.stderr)

    def test_log_format_json_summary_is_json(self):
        self.sb.answers("codex", ["ok"])
        p = self.batch(jobs(2), "--log-format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        last = json.loads(p.stderr.splitlines()[-1])
        self.assertEqual(last["event"], "batch_finished")
        self.assertEqual(last["ok"], 2)


if __name__ == "__main__":
    unittest.main()
