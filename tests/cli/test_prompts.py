"""CLI tests of `agentrun prompts list` and `agentrun prompts show NAME`."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import subprocess
import tempfile
import unittest

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT", ".")
BUILTIN = ["prioritize", "repair", "review", "route"]


class PromptsCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        # An empty config home so a developer's own overrides cannot leak in.
        self.xdg = os.path.join(self.tmp.name, "xdg")
        self.user_dir = os.path.join(self.xdg, "agentrun", "prompts")
        os.makedirs(self.user_dir)
        self.dir = os.path.join(self.tmp.name, "dir")
        os.makedirs(self.dir)

    def tearDown(self):
        self.tmp.cleanup()

    def run_prompts(self, *args):
        env = dict(os.environ, XDG_CONFIG_HOME=self.xdg)
        p = subprocess.run([AGENTRUN, "prompts", *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=60)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def write(self, directory, name, text):
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_list_shows_every_builtin_with_source_and_heading(self):
        rc, out, err = self.run_prompts("list")
        self.assertEqual((rc, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual([l.split()[0] for l in lines], BUILTIN)
        for line in lines:
            self.assertEqual(line.split()[1], "embedded")
        review = lines[BUILTIN.index("review")]
        self.assertTrue(review.endswith("Review a code change"), review)

    def test_show_prints_the_embedded_file_verbatim(self):
        for name in BUILTIN:
            rc, out, err = self.run_prompts("show", name)
            self.assertEqual((rc, err), (0, ""))
            with open(os.path.join(SOURCE_ROOT, "prompts", name + ".md")) as f:
                self.assertEqual(out, f.read())

    def test_unknown_name_exits_2_naming_it_and_the_known_ones(self):
        rc, out, err = self.run_prompts("show", "reveiw")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("unknown template 'reveiw'", err)
        self.assertIn("prioritize, repair, review, route", err)

    def test_prompts_dir_overrides_config_which_overrides_builtin(self):
        self.write(self.user_dir, "review.md", "# Config review\n{{diff}}\n")
        rc, out, _ = self.run_prompts("show", "review")
        self.assertEqual((rc, out), (0, "# Config review\n{{diff}}\n"))
        dir_file = self.write(self.dir, "review.md", "# Dir review\n{{diff}}\n")
        rc, out, _ = self.run_prompts("--prompts-dir", self.dir, "show", "review")
        self.assertEqual((rc, out), (0, "# Dir review\n{{diff}}\n"))
        rc, out, _ = self.run_prompts("list", "--prompts-dir", self.dir)
        self.assertEqual(rc, 0)
        review = [l for l in out.splitlines() if l.startswith("review ")][0]
        self.assertEqual(review.split()[1], dir_file)
        self.assertTrue(review.endswith("Dir review"))

    def test_custom_template_is_listed_and_shown(self):
        self.write(self.dir, "security.md", "Check for secrets.\n{{diff}}\n")
        rc, out, _ = self.run_prompts("--prompts-dir", self.dir, "list", "--format", "json")
        self.assertEqual(rc, 0)
        entries = {e["name"]: e for e in json.loads(out)}
        self.assertEqual(sorted(entries), sorted(BUILTIN + ["security"]))
        sec = entries["security"]
        self.assertEqual(sec["source"], "prompts-dir")
        self.assertEqual(sec["description"], "Check for secrets.")
        self.assertEqual(sec["variables"], ["diff"])
        self.assertFalse(sec["contract"])
        self.assertTrue(entries["review"]["contract"])
        self.assertEqual(entries["review"]["variables"], ["instructions", "diff"])
        self.assertIsNone(entries["review"]["path"])

    def test_bad_override_is_a_template_error_with_file_and_line(self):
        path = self.write(self.dir, "review.md",
                          "# R\n\n```json-schema\n{\n  \"oneOf\": []\n}\n```\n")
        rc, out, err = self.run_prompts("--prompts-dir", self.dir, "show", "review")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("%s:5: 'oneOf' at (root) must be a non-empty array of schemas" % path, err)
        rc, out, err = self.run_prompts("--prompts-dir", self.dir, "list")
        self.assertEqual(rc, 2)
        self.assertIn("'oneOf' at (root) must be a non-empty array", err)
        self.assertIn("prioritize", out)

    def test_usage_errors_exit_2(self):
        for args, want in [((), "missing subcommand"),
                           (("frob",), "unknown subcommand 'frob'"),
                           (("show",), "show needs a template name"),
                           (("list", "x"), "unexpected argument 'x'"),
                           (("--format", "xml", "list"), "invalid --format 'xml' (text, json)"),
                           (("--prompts-dir", "/nonexistent", "list"),
                            "prompts directory '/nonexistent' does not exist"),
                           (("--prompts-dir", "/nonexistent", "show", "review"),
                            "prompts directory '/nonexistent' does not exist")]:
            rc, out, err = self.run_prompts(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn(want, err, args)

    def test_help_lists_options(self):
        rc, out, _ = self.run_prompts("--help")
        self.assertEqual(rc, 0)
        self.assertIn("--prompts-dir DIR", out)


if __name__ == "__main__":
    unittest.main()
