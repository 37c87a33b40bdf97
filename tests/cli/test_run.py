"""agentrun run end to end with the fake CLI: the pipeline's promises (issue 5)."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN, Sandbox, alive, claude_stream  # noqa: E402

FIXTURES = os.path.join(os.environ.get("AGENTRUN_SOURCE_ROOT", "."), "tests", "fixtures")

SCHEMA = json.dumps({
    "type": "object",
    "required": ["passed", "issues"],
    "properties": {
        "passed": {"type": "boolean"},
        "issues": {"type": "array", "items": {
            "type": "object", "required": ["line"],
            "properties": {"line": {"type": "integer", "minimum": 1}}}},
    },
})


def result(p):
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"stdout is not one JSON object: {p.stdout!r}\nstderr: {p.stderr}")


class RunPipeline(unittest.TestCase):
    def setUp(self):
        self.sb = Sandbox()
        self.schema = self.sb.write("schema.json", SCHEMA, base=self.sb.root)

    def tearDown(self):
        self.sb.__exit__(None, None, None)

    def run_json(self, *extra, provider="codex"):
        return self.sb.run("run", "--schema", self.schema, "--format", "json", *extra,
                           "Review this", provider=provider)

    def test_valid_first_answer_is_one_call_without_repair(self):
        self.sb.answers("codex", ['{"passed": true, "issues": []}'])
        p = self.run_json()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertTrue(r["ok"])
        self.assertEqual(r["repair"], "none")
        self.assertEqual(r["json"], {"passed": True, "issues": []})
        self.assertEqual(len(r["calls"]), 1)
        self.assertEqual(len(self.sb.calls()), 1)
        self.assertIsNone(r["error"])

    def test_numbers_and_nul_keys_leave_as_the_model_wrote_them(self):
        answer = ('{"passed": true, "issues": [{"line": 12345678901234567890}], "r": 1.50, '
                  '"z": -0, "e": 20e1, "foo\\u0000bar": 42}')
        want = ('"json":{"passed":true,"issues":[{"line":12345678901234567890}],"r":1.50,'
                '"z":-0,"e":20e1,"foo\\u0000bar":42},')
        self.sb.answers("codex", [answer])
        p = self.run_json()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(want, p.stdout)
        r = result(p)
        self.assertEqual(r["json"]["issues"][0]["line"], 12345678901234567890)
        self.assertEqual(r["json"]["foo\0bar"], 42)
        self.assertEqual(r["repair"], "none")
        # The text format prints the same bytes.
        self.sb.answers("codex", [answer])
        p = self.sb.run("run", "--schema", self.schema, "Review this", provider="codex")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(want[len('"json":'):-1], p.stdout)

    def test_trailing_comma_is_repaired_locally_in_one_call(self):
        self.sb.answers("codex", ['{"passed": true, "issues": [],}'])
        p = self.run_json()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["repair"], "local")
        self.assertIn("trailing_comma", r["local_fixes"])
        self.assertEqual(len(self.sb.calls()), 1)

    def test_values_left_out_and_members_merged_are_named_with_count_and_byte(self):
        answer = ('{"passed": true, "issues": []}\n\nOr, stricter:\n'
                  '{"passed": false, "issues": []}')
        self.sb.answers("codex", [answer])
        p = self.run_json()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["json"], {"passed": True, "issues": []})
        self.assertEqual(r["repair"], "none")  # still the model's own bytes
        self.assertEqual(r["local_fixes"], ["extra_values"])
        self.assertEqual(r["fix_details"], [{"fix": "extra_values", "count": 1, "byte": 46}])
        self.sb.answers("codex", ['{"passed": true}, "issues": []}'])
        r = result(self.run_json())
        self.assertEqual(r["json"], {"passed": True, "issues": []})
        self.assertEqual(r["repair"], "local")
        self.assertEqual(r["local_fixes"], ["members_after_close"])
        self.assertEqual(r["fix_details"],
                         [{"fix": "members_after_close", "count": 1, "byte": 18}])
        self.assertEqual(len(self.sb.calls()), 2)

    def test_no_local_repair_sends_the_trailing_comma_to_the_repair_call(self):
        self.sb.answers("codex", ['{"passed": true, "issues": [],}', '{"passed": true, "issues": []}'])
        p = self.run_json("--no-local-repair")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(result(p)["repair"], "model")
        self.assertEqual(len(self.sb.calls()), 2)

    def test_prose_then_valid_json_makes_one_repair_call_and_sums_tokens(self):
        self.sb.answers("codex", ["I looked at it and it is fine.", '{"passed": false, "issues": [{"line": 3}]}'],
                        input_tokens=1000, cached=200, output=50)
        p = self.run_json()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertTrue(r["ok"])
        self.assertEqual(r["repair"], "model")
        self.assertEqual([c["kind"] for c in r["calls"]], ["main", "repair"])
        # codex counts cached tokens inside input: 1000 - 200 uncached per call.
        self.assertEqual(r["tokens"]["input"], 1600)
        self.assertEqual(r["tokens"]["cache_read"], 400)
        self.assertEqual(r["tokens"]["output"], 100)

    def test_a_runs_cost_is_the_sum_of_its_calls_not_the_last_one(self):
        # claude reports each call's own cost: main 0.01, repair 0.02 -> the run cost 0.03.
        self.sb.env["FAKE_CLI_FIXTURE"] = ",".join([
            self.sb.fixture(claude_stream("I looked at it and it is fine.", cost=0.01)),
            self.sb.fixture(claude_stream('{"passed": true, "issues": []}', cost=0.02))])
        p = self.run_json(provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["repair"], "model")
        self.assertEqual([c["cost_usd"] for c in r["calls"]], [0.01, 0.02])
        self.assertAlmostEqual(r["cost_usd"], 0.03, places=9)
        self.assertEqual(r["cost_source"], "cli")

    def test_gemini_thinking_tokens_are_output_and_priced_as_output(self):
        # Recorded from the real gemini CLI: candidates 42 + thoughts 300, uncached 1200,
        # cached 300, gemini-2.5-pro ($1.25 in, $0.125 cached, $10 out per MTok).
        self.sb.env["FAKE_CLI_FIXTURE"] = os.path.join(FIXTURES, "gemini", "stream-thoughts.jsonl")
        p = self.sb.run("run", "--format", "json", "-m", "gemini-2.5-pro", "hello",
                        provider="gemini")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["tokens"]["output"], 342)
        self.assertEqual(r["tokens"]["reasoning"], 300)
        self.assertEqual(r["cost_source"], "price_table")
        self.assertAlmostEqual(r["cost_usd"], (1200 * 1.25 + 300 * 0.125 + 342 * 10) / 1e6,
                               places=9)

    def test_prose_twice_fails_with_no_json_and_lists_both_calls(self):
        self.sb.answers("codex", ["Looks fine to me.", "Still fine, honestly."])
        p = self.run_json()
        self.assertEqual(p.returncode, 3, p.stderr)
        r = result(p)
        self.assertFalse(r["ok"])
        self.assertEqual(r["error"]["code"], "no_json")
        self.assertEqual(len(r["calls"]), 2)
        self.assertEqual(len(self.sb.calls()), 2)
        self.assertEqual(r["output"], "Still fine, honestly.")

    def test_contract_violation_twice_reports_every_pointer(self):
        bad = '{"passed": "yes", "issues": [{"line": "3"}, {"line": 0}]}'
        self.sb.answers("codex", [bad, bad])
        p = self.run_json()
        self.assertEqual(p.returncode, 3, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "contract")
        details = "\n".join(r["error"]["details"])
        self.assertIn("/passed", details)
        self.assertIn("/issues/0/line", details)
        self.assertIn("/issues/1/line", details)
        self.assertEqual(len(r["calls"]), 2)

    def test_repair_prompt_carries_violations_contract_and_previous_output(self):
        self.sb.answers("codex", ['{"passed": "yes", "issues": []}', '{"passed": true, "issues": []}'])
        p = self.run_json()
        self.assertEqual(p.returncode, 0, p.stderr)
        calls = self.sb.calls()
        self.assertEqual(len(calls), 2)
        repair = calls[1]["stdin"]
        self.assertIn("/passed", repair)
        self.assertIn('"required"', repair)          # the contract
        self.assertIn('"passed": "yes"', repair)     # the previous output
        self.assertNotIn("Review this", " ".join(calls[1]["argv"]))

    def test_never_a_third_call(self):
        self.sb.answers("codex", ["a", "b", '{"passed": true, "issues": []}'])
        p = self.run_json()
        self.assertEqual(p.returncode, 3)
        self.assertEqual(len(self.sb.calls()), 2)

    def test_no_repair_stops_after_the_first_call(self):
        self.sb.answers("codex", ["prose", '{"passed": true, "issues": []}'])
        p = self.run_json("--no-repair")
        self.assertEqual(p.returncode, 3)
        self.assertEqual(len(self.sb.calls()), 1)

    def test_prompt_goes_on_stdin_never_in_argv(self):
        self.sb.answers("codex", ["hello"])
        p = self.sb.run("run", "--format", "json", "SECRET-PROMPT-TEXT")
        self.assertEqual(p.returncode, 0, p.stderr)
        call = self.sb.calls()[0]
        self.assertEqual(call["stdin"], "SECRET-PROMPT-TEXT")
        self.assertNotIn("SECRET-PROMPT-TEXT", " ".join(call["argv"]))
        self.assertNotIn("SECRET-PROMPT-TEXT", " ".join(result(p)["calls"][0]["argv"]))

    def test_text_format_prints_the_answer_and_a_summary_on_stderr(self):
        self.sb.answers("claude", ["Hello there."], cost=0.0123)
        p = self.sb.run("run", "say hello", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "Hello there.\n")
        self.assertIn("$0.0123", p.stderr)
        self.assertIn("claude", p.stderr)

    def test_json_flag_prints_the_compact_json_in_text_format(self):
        self.sb.answers("gemini", ['Here:\n```json\n{"b": 1, "a": 0.85}\n```'])
        p = self.sb.run("run", "--json", "-q", "give json", provider="gemini")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, '{"b":1,"a":0.85}\n')

    def test_prompt_from_file_and_stdin(self):
        self.sb.answers("codex", ["ok"])
        f = self.sb.write("prompt.txt", "from a file", base=self.sb.root)
        p = self.sb.run("run", "-f", f, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.sb.run("run", "-", "-q", input="from stdin")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["stdin"] for c in self.sb.calls()], ["from a file", "from stdin"])

    def test_files_the_run_changed_are_reported(self):
        self.sb.write("dirty.txt", "before\n")  # untracked before the run, untouched
        self.sb.answers("codex", ["done"])
        self.sb.env["FAKE_CLI_WRITE_FILES"] = "new.txt=hello;README=changed"
        p = self.sb.run("run", "--format", "json", "--allow-edits", "edit")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertTrue(r["files_tracked"])
        self.assertEqual(sorted((f["path"], f["op"]) for f in r["files"]),
                         [("README", "modify"), ("new.txt", "create")])
        self.assertIn("--sandbox", result(p)["calls"][0]["argv"])

    def test_with_content_carries_text_as_is_and_other_bytes_as_base64(self):
        self.sb.answers("codex", ["done"])
        # "\udcff\udcfe" reaches the fake CLI as the bytes ff fe (surrogateescape): not UTF-8.
        self.sb.env["FAKE_CLI_WRITE_FILES"] = "new.txt=héllo\nworld;bin.dat=\udcff\udcfeab"
        p = self.sb.run("run", "--format", "json", "--allow-edits", "--with-content", "edit")
        self.assertEqual(p.returncode, 0, p.stderr)
        files = {f["path"]: f for f in result(p)["files"]}
        self.assertEqual(set(files), {"new.txt", "bin.dat"})
        self.assertEqual((files["new.txt"]["content"], files["new.txt"]["encoding"],
                          files["new.txt"]["truncated"]), ("héllo\nworld", "utf-8", False))
        self.assertEqual((files["bin.dat"]["content"], files["bin.dat"]["encoding"]),
                         ("//5hYg==", "base64"))
        self.sb.env["FAKE_CLI_WRITE_FILES"] = "new.txt=changed again"
        p = self.sb.run("run", "--format", "json", "--allow-edits", "edit")
        self.assertEqual([f["path"] for f in result(p)["files"]], ["new.txt"])
        self.assertNotIn("content", result(p)["files"][0])

    def test_out_of_memory_is_error_nomem_and_exit_4(self):
        """One policy (docs/architecture.md): out of memory is reported, never an abort
        and never a usage error, in the CLI (reading the prompt) and in the library
        (rendering it). The address-space limit makes the allocation fail."""
        import resource

        def limit(mib):
            return lambda: resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))

        probe = subprocess.run([AGENTRUN, "--version"], preexec_fn=limit(24),
                               capture_output=True)
        if probe.returncode != 0:
            self.skipTest("agentrun cannot start under a 24 MiB address space (a sanitizer build)")
        prompt = "x" * (40 << 20)
        # 24 MiB: the CLI's buffer for the prompt cannot grow; 100 MiB: that buffer (64 MiB)
        # fits, the pipeline's rendered copy does not.
        for mib in (24, 100):
            p = subprocess.run([AGENTRUN, "run", "--format", "json", "-f", "-"],
                               cwd=self.sb.work, env=dict(self.sb.env, AGENTRUN_PROVIDER="codex"),
                               input=prompt, capture_output=True, text=True, timeout=60,
                               preexec_fn=limit(mib))
            self.assertEqual(p.returncode, 4, (mib, p.stderr))
            self.assertIn("out of memory", p.stderr)
            self.assertEqual(result(p)["error"]["code"], "nomem", mib)
        self.assertEqual(self.sb.calls(), [])

    def test_outside_a_work_tree_files_are_not_tracked(self):
        with Sandbox(git=False) as sb:
            sb.answers("codex", ["done"])
            p = sb.run("run", "--format", "json", "x")
            self.assertEqual(p.returncode, 0, p.stderr)
            r = result(p)
            self.assertFalse(r["files_tracked"])
            self.assertIn("--skip-git-repo-check", r["calls"][0]["argv"])
            p = sb.run("run", "--format", "json", "--allow-edits", "x")
            self.assertEqual(result(p)["files_untracked_reason"], "not_a_work_tree")

    def logging_git(self):
        """A stand-in git that appends its arguments to a log, then runs the real one."""
        log = os.path.join(self.sb.root, "git.log")
        fake = os.path.join(self.sb.root, "gitbin")
        os.makedirs(fake, exist_ok=True)
        real = shutil.which("git", path=self.sb.env.get("PATH"))
        with open(os.path.join(fake, "git"), "w") as f:
            f.write(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
        os.chmod(os.path.join(fake, "git"), 0o755)
        return log, dict(self.sb.env, PATH=fake + os.pathsep + self.sb.env.get("PATH", ""))

    def test_an_edit_run_runs_one_cheap_git_status_per_snapshot(self):
        self.sb.answers("codex", ["done"])
        log, env = self.logging_git()
        env["FAKE_CLI_WRITE_FILES"] = "new.txt=x"
        p = self.sb.run("run", "--format", "json", "--allow-edits", "x", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([(f["path"], f["op"]) for f in result(p)["files"]],
                         [("new.txt", "create")])
        with open(log) as f:
            runs = f.read().splitlines()
        self.assertEqual(len(runs), 2, runs)
        for r in runs:
            self.assertTrue(r.startswith("-c core.fsmonitor=false status --porcelain=v2 -z"), r)
            self.assertIn("--no-renames", r)

    def test_a_read_run_takes_no_snapshot_and_says_why(self):
        self.sb.answers("codex", ["done"])
        # A read run must not run git at all.
        log, env = self.logging_git()
        env["FAKE_CLI_WRITE_FILES"] = "sneaky.txt=x"
        p = self.sb.run("run", "--format", "json", "x", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertFalse(r["files_tracked"])
        self.assertEqual(r["files_untracked_reason"], "read_only")
        self.assertEqual(r["files"], [])
        self.assertFalse(os.path.exists(log), "a read run ran git")

    def test_track_files_forces_the_snapshots_of_a_read_run(self):
        self.sb.answers("codex", ["done", "done"])
        self.sb.env["FAKE_CLI_WRITE_FILES"] = "sneaky.txt=x"
        p = self.sb.run("run", "--format", "json", "--track-files", "x")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertTrue(r["files_tracked"])
        self.assertIsNone(r["files_untracked_reason"])
        self.assertEqual([(f["path"], f["op"]) for f in r["files"]], [("sneaky.txt", "create")])
        p = self.sb.run("run", "--format", "json", "--allow-edits", "--no-files", "x")
        r = result(p)
        self.assertFalse(r["files_tracked"])
        self.assertEqual(r["files_untracked_reason"], "disabled")

    def test_template_with_vars_and_its_contract(self):
        d = os.path.join(self.sb.root, "prompts")
        self.sb.write("greet.md", "# Greet\nSay hi to {{who}}.\n\n```json-schema\n"
                      '{"type":"object","required":["greeting"]}\n```\n', base=d)
        self.sb.answers("codex", ['{"greeting": "hi Ada"}'])
        p = self.sb.run("run", "--prompts-dir", d, "-t", "greet", "--var", "who=Ada",
                        "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(result(p)["json"], {"greeting": "hi Ada"})
        self.assertIn("Say hi to Ada.", self.sb.calls()[0]["stdin"])

    def test_the_contract_once_for_clis_that_take_it_natively(self):
        # A template that leads with its contract: claude and codex get the contract as
        # their structured-output flag and the prompt without it; gemini has no such flag
        # and gets the whole prompt; the repair call always states the contract.
        d = os.path.join(self.sb.root, "prompts")
        self.sb.write("greet.md", "Answer with JSON:\n\n```json-schema\n"
                      '{"type":"object","required":["greeting"]}\n```\n\n'
                      "# Greet\nSay hi to {{who}}.\n", base=d)
        for cli, native in (("claude", True), ("codex", True), ("gemini", False)):
            with self.subTest(cli=cli):
                for f in (self.sb.log, self.sb.state):
                    os.path.exists(f) and os.unlink(f)
                self.sb.answers(cli, ['{"nope": 1}', '{"greeting": "hi Ada"}'])
                p = self.sb.run("run", "--prompts-dir", d, "-t", "greet", "--var", "who=Ada",
                                "--format", "json", provider=cli)
                self.assertEqual(p.returncode, 0, p.stderr)
                main, repair = self.sb.calls()
                if native:
                    self.assertEqual(main["stdin"], "# Greet\nSay hi to Ada.\n")
                    self.assertTrue({"--json-schema", "--output-schema"} & set(main["argv"]))
                else:
                    self.assertTrue(main["stdin"].startswith("Answer with JSON:\n\n```json-schema"))
                    self.assertTrue(main["stdin"].endswith("# Greet\nSay hi to Ada.\n"))
                self.assertIn('"required":["greeting"]', "".join(repair["stdin"].split()))
        # A contract after a variable is not the template's fixed start: always sent.
        self.sb.write("late.md", "Say hi to {{who}}.\n\n```json-schema\n"
                      '{"type":"object","required":["greeting"]}\n```\n', base=d)
        for f in (self.sb.log, self.sb.state):
            os.path.exists(f) and os.unlink(f)
        self.sb.answers("claude", ['{"greeting": "hi"}'])
        p = self.sb.run("run", "--prompts-dir", d, "-t", "late", "--var", "who=Ada",
                        "--format", "json", provider="claude")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("```json-schema", self.sb.calls()[0]["stdin"])

    def test_unset_template_variable_is_a_usage_error_naming_it(self):
        d = os.path.join(self.sb.root, "prompts")
        self.sb.write("greet.md", "Say hi to {{who}}.\n", base=d)
        p = self.sb.run("run", "--prompts-dir", d, "-t", "greet")
        self.assertEqual(p.returncode, 2)
        self.assertIn("who", p.stderr)
        self.assertEqual(self.sb.calls(), [])

    def test_a_mistyped_template_is_said_before_any_cli_is_asked(self):
        # Issue 59: `run -t reveiw` had no did-you-mean, and came only after --provider
        # auto had asked the CLIs for their logins (0.5 s of status commands).
        asked = os.path.join(self.sb.root, "asked")
        bin_dir = os.path.join(self.sb.root, "bin")
        os.mkdir(bin_dir)
        env = {"AGENTRUN_PROVIDER": "auto"}
        for name in ("claude", "codex", "gemini"):
            path = self.sb.write(name, "#!/bin/sh\necho \"%s $*\" >> '%s'\nexit 1\n"
                                 % (name, asked), base=bin_dir)
            os.chmod(path, 0o755)
            env["AGENTRUN_%s_BIN" % name.upper()] = path
        p = self.sb.run("run", "-t", "reveiw", provider=None, env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("unknown template 'reveiw'; did you mean 'review'?", p.stderr)
        self.assertFalse(os.path.exists(asked), "a CLI was asked before the template was read")
        # The same run with a template that exists does ask: the check above can fail.
        p = self.sb.run("run", "hello", provider=None, env=env)
        self.assertNotEqual(p.returncode, 0)
        self.assertTrue(os.path.exists(asked))

    def test_bad_template_is_reported_with_its_file_and_line(self):
        # docs/prompts.md: "a template that fails to load is reported with its
        # file and line, and the command exits 2".
        d = os.path.join(self.sb.root, "prompts")
        self.sb.write("bad.md", "# Bad\n\nHi.\n\n```json-schema\n"
                      '{"type":"object","maxlength":1}\n```\n', base=d)
        p = self.sb.run("run", "--prompts-dir", d, "-t", "bad")
        self.assertEqual(p.returncode, 2)
        self.assertIn("bad.md:6: unknown keyword 'maxlength' at (root): did you mean 'maxLength'?",
                      p.stderr)
        self.assertEqual(self.sb.calls(), [])

    def test_bad_provider_variable_is_named(self):
        p = self.sb.run("run", "x", provider="bogus")
        self.assertEqual(p.returncode, 2)
        self.assertIn("AGENTRUN_PROVIDER: unknown provider 'bogus'", p.stderr)

    def test_max_cost_must_be_a_finite_amount(self):
        # "inf" would reach claude as --max-budget-usd inf: no cap at all.
        for v in ("inf", "1e999", "nan", "0"):
            p = self.sb.run("run", "-p", "claude", "--max-cost", v, "x")
            self.assertEqual(p.returncode, 2, v)
            self.assertEqual(self.sb.calls(), [])

    def test_bad_schema_names_the_option(self):
        bad = self.sb.write("bad.json", "{", base=self.sb.root)
        p = self.sb.run("run", "--schema", bad, "x")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--schema:1: invalid JSON", p.stderr)

    def test_provider_errors_map_to_exit_4_and_timeouts_to_5(self):
        self.sb.env["FAKE_CLI_STDOUT_TEXT"] = ""
        self.sb.env["FAKE_CLI_EXIT"] = "1"
        self.sb.env["FAKE_CLI_STDERR_TEXT"] = "boom\\n"
        p = self.sb.run("run", "--format", "json", "x")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertFalse(result(p)["ok"])
        del self.sb.env["FAKE_CLI_EXIT"]
        self.sb.env["FAKE_CLI_HANG"] = "1"
        p = self.sb.run("run", "--format", "json", "--idle-timeout", "300ms", "x")
        self.assertEqual(p.returncode, 5, p.stderr)
        self.assertEqual(result(p)["error"]["code"], "idle_timeout")
        self.assertTrue(result(p)["calls"][0]["timed_out"])
        p = self.sb.run("run", "--format", "json", "--timeout", "300ms", "x")
        self.assertEqual(p.returncode, 5, p.stderr)
        self.assertEqual(result(p)["error"]["code"], "timeout")
        self.assertTrue(result(p)["calls"][0]["timed_out"])

    def test_missing_cli_is_not_found_naming_the_binary_and_the_override(self):
        p = self.sb.run("run", "--format", "json", "x",
                        env={"AGENTRUN_CODEX_BIN": "/nonexistent/codex"})
        self.assertEqual(p.returncode, 4)
        r = result(p)
        self.assertEqual(r["error"]["code"], "not_found")
        self.assertIn("codex", r["error"]["message"])
        self.assertIn("AGENTRUN_CODEX_BIN", r["error"]["message"])

    def test_no_cli_installed_at_all_names_all_three_and_makes_no_call(self):
        env = {k: v for k, v in self.sb.env.items() if not k.endswith("_BIN")}
        env["PATH"] = "/nonexistent"
        env["AGENTRUN_PROVIDER"] = "auto"
        p = subprocess.run([AGENTRUN, "run", "--format", "json", "x"], cwd=self.sb.work,
                           env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual(r["error"]["code"], "not_found")
        for name in ("claude", "codex", "gemini", "AGENTRUN_CODEX_BIN"):
            self.assertIn(name, r["error"]["message"])
        self.assertEqual(r["calls"], [])
        # Text format: the reason, and no token summary for a run that never ran.
        p = subprocess.run([AGENTRUN, "run", "x"], cwd=self.sb.work, env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 4)
        self.assertEqual(p.stdout, "")
        self.assertNotIn("tokens", p.stderr)

    def test_fallback_moves_on_after_a_provider_failure(self):
        self.sb.answers("gemini", ["from gemini"])
        p = self.sb.run("run", "--format", "json", "-p", "codex", "--fallback", "gemini", "x",
                        env={"AGENTRUN_CODEX_BIN": "/nonexistent/codex"})
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["provider"], "gemini")
        self.assertEqual([c["provider"] for c in r["calls"]], ["codex", "gemini"])

    def test_fallback_provider_is_not_reported_or_priced_as_the_first_ones_model(self):
        # -m and $AGENTRUN_MODEL name a model of the first provider; codex
        # taking over neither gets it nor is priced at claude's rates.
        self.sb.answers("codex", ["from codex"])
        for args, env in ((["-m", "claude-opus-4-8"], {}),
                          ([], {"AGENTRUN_MODEL": "claude-opus-4-8"})):
            p = self.sb.run("run", "--format", "json", "-p", "claude", "--fallback", "codex",
                            *args, "x", env=dict(env, AGENTRUN_CLAUDE_BIN="/nonexistent/claude"))
            self.assertEqual(p.returncode, 0, p.stderr)
            r = result(p)
            self.assertEqual(r["provider"], "codex")
            self.assertNotIn("--model", r["calls"][1]["argv"])
            self.assertNotEqual(r["model"], "claude-opus-4-8")
            self.assertEqual(r["calls"][1]["cost_source"], "unknown")

    def test_fallback_result_does_not_keep_the_failed_providers_session(self):
        # claude answers 401 (after its init gave a session), codex is missing:
        # the result is codex's, so no claude session, model or output in it.
        self.sb.answers("claude", ["Invalid API key"], is_error=True, status=401)
        p = self.sb.run("run", "--format", "json", "-p", "claude", "--fallback", "codex", "x",
                        env={"AGENTRUN_CODEX_BIN": "/nonexistent/codex"})
        self.assertEqual(p.returncode, 4, p.stderr)
        r = result(p)
        self.assertEqual([c["error"] for c in r["calls"]], ["auth", "not_found"])
        self.assertEqual(r["provider"], "codex")
        self.assertIsNone(r["session_id"])
        self.assertIsNone(r["model"])
        self.assertIsNone(r["output"])
        self.assertEqual(r["exit_code"], -1)

    def test_resume_id_is_not_handed_to_a_fallback_provider(self):
        # A session id belongs to one CLI: codex cannot resume claude's session.
        self.sb.answers("codex", ["fresh"])
        p = self.sb.run("run", "--format", "json", "-p", "claude", "--fallback", "codex",
                        "--resume", "a12149e5-57b9-4101-8896-0e79223f8ed2", "x",
                        env={"AGENTRUN_CLAUDE_BIN": "/nonexistent/claude"})
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["provider"], "codex")
        self.assertIn("--resume", r["calls"][0]["argv"])
        self.assertNotIn("resume", r["calls"][1]["argv"])

    def test_fallback_past_a_missing_cli_keeps_the_answering_calls_cost(self):
        # The missing CLI never ran, so it cost nothing: the run's cost is the
        # claude call's own figure, not null.
        self.sb.answers("claude", ["from claude"], cost=0.25)
        p = self.sb.run("run", "--format", "json", "-p", "codex", "--fallback", "claude", "x",
                        env={"AGENTRUN_CODEX_BIN": "/nonexistent/codex"})
        self.assertEqual(p.returncode, 0, p.stderr)
        r = result(p)
        self.assertEqual(r["calls"][1]["cost_usd"], 0.25)
        self.assertEqual(r["cost_usd"], 0.25)
        self.assertEqual(r["cost_source"], "cli")


    def test_log_format_json_emits_structured_events(self):
        self.sb.answers("codex", ["prose", '{"passed": true, "issues": []}'])
        p = self.sb.run("run", "--schema", self.schema, "-v", "--log-format", "json",
                        "--format", "json", "x")
        self.assertEqual(p.returncode, 0, p.stderr)
        events = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
        names = [e.get("event") for e in events]
        for name in ("run_started", "repair_attempt", "repair_succeeded", "run_finished"):
            self.assertIn(name, names, p.stderr)
        fin = events[names.index("run_finished")]
        self.assertEqual(fin["provider"], "codex")
        self.assertIsInstance(fin["duration_ms"], int)

    def test_debug_log_carries_the_model_output(self):
        self.sb.answers("codex", ["the answer text"])
        p = self.sb.run("run", "-vv", "--log-format", "json", "x")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = [json.loads(l) for l in p.stderr.splitlines() if '"llm_output"' in l]
        self.assertEqual(out[0]["text"], "the answer text")

    def interrupt(self, sig, expected):
        self.sb.answers("codex", ["never"])
        env = dict(self.sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1",
                   FAKE_CLI_WRITE_FILES="partial.txt=written before the signal",
                   FAKE_CLI_GRANDCHILD="ignore-term",
                   FAKE_CLI_PIDFILE=os.path.join(self.sb.root, "pids"))
        proc = subprocess.Popen([AGENTRUN, "run", "--format", "json", "--allow-edits", "x"],
                                cwd=self.sb.work,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True)
        deadline = time.time() + 10
        while not os.path.exists(env["FAKE_CLI_PIDFILE"]) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, expected, err)
        r = json.loads(out)
        self.assertEqual(r["error"]["code"], "interrupted")
        # What the CLI changed before the signal is still reported.
        self.assertTrue(r["files_tracked"], err)
        self.assertEqual([(f["path"], f["op"]) for f in r["files"]], [("partial.txt", "create")])
        with open(env["FAKE_CLI_PIDFILE"]) as f:
            pids = [int(x) for x in f.read().split()]
        pids.append(self.sb.calls()[0]["pid"])
        for pid in pids:
            self.assertFalse(alive(pid), f"process {pid} survived the run")

    def test_sigint_ends_the_group_reports_and_exits_130(self):
        self.interrupt(signal.SIGINT, 130)

    def test_sigterm_ends_the_group_reports_and_exits_143(self):
        self.interrupt(signal.SIGTERM, 143)

    def test_sighup_exits_129(self):
        self.interrupt(signal.SIGHUP, 129)

    def test_transcript_keeps_the_raw_stdout_of_every_call(self):
        self.sb.answers("codex", ["prose", '{"passed": true, "issues": []}'])
        t = os.path.join(self.sb.root, "t.jsonl")
        p = self.run_json("--transcript", t)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(t) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual(sum(1 for l in lines if l["type"] == "turn.completed"), 2)


    def stderr_on_a_terminal(self, *args, term="xterm"):
        import pty
        master, slave = pty.openpty()
        env = dict(self.sb.env, AGENTRUN_PROVIDER="codex", TERM=term, FAKE_CLI_SLEEP_MS="900")
        proc = subprocess.Popen([AGENTRUN, "run", *args, "x"], cwd=self.sb.work, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        data = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO once the last writer is gone
                break
            if not chunk:
                break
            data += chunk
        os.close(master)
        out = proc.stdout.read()
        proc.stdout.close()
        self.assertEqual(proc.wait(timeout=30), 0)
        self.assertEqual(out, b"done\n")
        return data

    def test_live_status_line_on_a_terminal_shows_the_provider_and_is_cleared(self):
        self.sb.answers("codex", ["done"])
        data = self.stderr_on_a_terminal()
        self.assertIn(b"\rcodex 0:0", data)
        # Cleared before the summary line is printed.
        self.assertIn(b"\r\x1b[Kagentrun: codex", data)

    def test_no_status_line_for_a_dumb_terminal_or_with_q(self):
        self.sb.answers("codex", ["done"])
        self.assertNotIn(b"\x1b[K", self.stderr_on_a_terminal(term="dumb"))
        self.assertEqual(self.stderr_on_a_terminal("-q"), b"")

    def test_bad_flags_are_usage_errors(self):
        for args in (["run"], ["run", "--timeout", "soon", "x"], ["run", "--bogus", "x"],
                     ["run", "-p", "nope", "x"], ["run", "--schema", "/nonexistent", "x"],
                     ["run", "a", "b"], ["run", "-t", "review", "prompt"]):
            p = self.sb.run(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertTrue(p.stderr.strip(), args)
        self.assertEqual(self.sb.calls(), [])


if __name__ == "__main__":
    unittest.main()
