"""agentrun doctor: binaries found or not, versions, credential names (never
values), git, the prompt override directory, and the exit status.

Every CLI here is a tiny shell script in a temporary directory, and PATH holds
only that directory, so no real CLI on the machine is found.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
SECRET = "sk-do-not-print-0123456789"


class Doctor(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ar-doctor-")
        self.bin = os.path.join(self.tmp, "bin")
        self.home = os.path.join(self.tmp, "home")
        os.makedirs(self.bin)
        os.makedirs(self.home)
        self.env = {"PATH": self.bin, "HOME": self.home, "LANG": "C"}

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def script(self, name, body, directory=None):
        path = os.path.join(directory or self.bin, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path

    def run_doctor(self, *args, env=None):
        e = dict(self.env)
        e.update(env or {})
        return subprocess.run([AGENTRUN, "doctor", *args], env=e, capture_output=True,
                              text=True, timeout=60)

    def doc(self, *args, env=None):
        p = self.run_doctor("--format", "json", *args, env=env)
        d = json.loads(p.stdout)
        self.assertEqual(d["schema"], "agentrun.doctor/1")
        return p, d, {x["name"]: x for x in d["providers"]}

    def test_found_means_what_the_spawn_would_run(self):
        # doctor and the spawn share one search (execvp's rules): a directory or a file
        # without the x bit named like the CLI is not a program.
        os.mkdir(os.path.join(self.bin, "claude"))
        with open(os.path.join(self.bin, "codex"), "w") as f:
            f.write("#!/bin/sh\n")  # not executable
        p, d, prov = self.doc()
        self.assertFalse(prov["claude"]["found"], prov["claude"])
        self.assertFalse(prov["codex"]["found"], prov["codex"])

    def test_nothing_installed_exits_4_with_install_hints(self):
        p, d, prov = self.doc()
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertFalse(d["ok"])
        self.assertEqual([x["name"] for x in d["providers"]], ["claude", "codex", "gemini"])
        for name, x in prov.items():
            self.assertFalse(x["found"])
            self.assertIsNone(x["path"])
            self.assertIn("npm install", x["install_hint"])
            self.assertEqual(x["bin_env"], "AGENTRUN_%s_BIN" % name.upper())
        self.assertFalse(d["git"]["found"])
        t = self.run_doctor()
        self.assertEqual(t.returncode, 4)
        self.assertIn("AGENTRUN_CODEX_BIN", t.stdout)
        self.assertIn("not ok", t.stdout)

    def test_override_binary_version_and_auth_names_only(self):
        other = os.path.join(self.tmp, "elsewhere")
        os.makedirs(other)
        fake = self.script("my-claude", 'echo "9.9.9 (Fake Claude)"', other)
        env = {"AGENTRUN_CLAUDE_BIN": fake, "ANTHROPIC_API_KEY": SECRET}
        p, d, prov = self.doc(env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(d["ok"])
        c = prov["claude"]
        self.assertTrue(c["found"])
        self.assertEqual(c["path"], fake)
        self.assertEqual(c["bin_override"], fake)
        self.assertEqual(c["version"], "9.9.9 (Fake Claude)")
        self.assertEqual(c["auth_env"], ["ANTHROPIC_API_KEY"])
        self.assertTrue(c["auth_found"])
        self.assertFalse(prov["codex"]["found"])
        self.assertNotIn(SECRET, p.stdout + p.stderr)
        t = self.run_doctor(env=env)
        self.assertEqual(t.returncode, 0)
        self.assertIn("9.9.9 (Fake Claude)", t.stdout)
        self.assertIn("ANTHROPIC_API_KEY", t.stdout)
        self.assertNotIn(SECRET, t.stdout + t.stderr)

    def test_posture_says_how_each_cli_is_run(self):
        for name in ("claude", "codex", "gemini"):
            self.script(name, "echo 1.0")
        p, d, prov = self.doc()
        self.assertEqual(p.returncode, 0, p.stderr)
        claude = prov["claude"]["posture"]
        self.assertIn("never --bare", claude["how"])
        self.assertFalse(claude["trust_project"])
        for t in ("text", "read", "edit"):
            self.assertNotIn("--bare", claude[t]["argv"])
            self.assertIn("--setting-sources", claude[t]["argv"])
            self.assertFalse(claude[t]["project_config"])
        self.assertEqual(claude["text"]["argv"][claude["text"]["argv"].index("--tools") + 1], "")
        self.assertIn("CLAUDE_CODE_DISABLE_CLAUDE_MDS", claude["text"]["env"])
        self.assertIn("--ephemeral", prov["codex"]["posture"]["text"]["argv"])
        self.assertIn("GEMINI_CLI_HOME", prov["gemini"]["posture"]["read"]["env"])
        t = self.run_doctor()
        self.assertIn("never --bare", t.stdout)
        self.assertIn("read: -p --output-format stream-json", t.stdout)
        p, d, prov = self.doc(env={"AGENTRUN_TRUST_PROJECT": "1"})
        self.assertTrue(prov["claude"]["posture"]["trust_project"])
        self.assertTrue(prov["claude"]["posture"]["read"]["project_config"])
        self.assertNotIn("--setting-sources", prov["claude"]["posture"]["read"]["argv"])

    def test_path_lookup_login_files_and_codex_home(self):
        self.script("codex", "echo codex-cli 0.169.0")
        self.script("gemini", "echo 0.61.0")
        codex_home = os.path.join(self.tmp, "codexhome")
        os.makedirs(codex_home)
        with open(os.path.join(codex_home, "auth.json"), "w") as f:
            f.write('{"OPENAI_API_KEY": "%s"}' % SECRET)
        os.makedirs(os.path.join(self.home, ".gemini"))
        with open(os.path.join(self.home, ".gemini", "oauth_creds.json"), "w") as f:
            f.write("{}")
        p, d, prov = self.doc(env={"CODEX_HOME": codex_home})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(prov["codex"]["path"], os.path.join(self.bin, "codex"))
        self.assertEqual(prov["codex"]["version"], "codex-cli 0.169.0")
        self.assertEqual(prov["codex"]["auth_files"], [os.path.join(codex_home, "auth.json")])
        self.assertEqual(prov["gemini"]["auth_files"],
                         [os.path.join(self.home, ".gemini", "oauth_creds.json")])
        self.assertEqual(prov["gemini"]["auth_env"], [])
        self.assertFalse(prov["claude"]["found"])
        self.assertNotIn(SECRET, p.stdout)

    def test_no_credentials_is_a_warning_and_a_failing_version_is_reported(self):
        self.script("gemini", "echo boom >&2; exit 3")
        self.script("codex", "echo 'codex-cli 0.1'")
        p, d, prov = self.doc()
        self.assertEqual(p.returncode, 0, p.stderr)
        g = prov["gemini"]
        self.assertFalse(g["usable"])
        self.assertIsNone(g["version"])
        self.assertEqual(g["version_error"], "--version failed")
        self.assertFalse(g["auth_found"])
        self.assertTrue(prov["codex"]["usable"])
        self.assertFalse(prov["codex"]["auth_found"])
        t = self.run_doctor()
        self.assertIn("no credential", t.stdout)

    def test_no_cli_answering_version_is_not_ok_and_they_are_asked_at_once(self):
        for name in ("claude", "codex", "gemini"):
            self.script(name, "exec " + shutil.which("sleep") + " 60")
        start = time.monotonic()
        p, d, prov = self.doc()
        elapsed = time.monotonic() - start
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertFalse(d["ok"])
        for name in ("claude", "codex", "gemini"):
            self.assertTrue(prov[name]["found"])
            self.assertFalse(prov[name]["usable"])
            self.assertEqual(prov[name]["version_error"], "--version timed out")
        # One 10 s limit for all three, not 10 s (or 20 s) one after another.
        self.assertLess(elapsed, 18)

    def test_non_executable_file_is_not_found(self):
        path = self.script("claude", "echo 1")
        os.chmod(path, 0o644)
        p, d, prov = self.doc()
        self.assertEqual(p.returncode, 4)
        self.assertFalse(prov["claude"]["found"])

    def test_git_and_prompts_dir(self):
        git = shutil.which("git", path=os.environ.get("PATH", ""))
        if git:
            os.symlink(git, os.path.join(self.bin, "git"))
        xdg = os.path.join(self.tmp, "xdg")
        os.makedirs(os.path.join(xdg, "agentrun", "prompts"))
        p, d, prov = self.doc("--prompts-dir", "/nonexistent-dir",
                              env={"XDG_CONFIG_HOME": xdg})
        self.assertEqual(d["prompts"]["config_dir"], os.path.join(xdg, "agentrun", "prompts"))
        self.assertTrue(d["prompts"]["config_dir_exists"])
        self.assertEqual(d["prompts"]["prompts_dir"], "/nonexistent-dir")
        self.assertFalse(d["prompts"]["prompts_dir_exists"])
        if git:
            self.assertTrue(d["git"]["found"])
            self.assertTrue(d["git"]["version"].startswith("git version"))
        p, d, prov = self.doc()
        self.assertEqual(d["prompts"]["config_dir"],
                         os.path.join(self.home, ".config", "agentrun", "prompts"))
        self.assertFalse(d["prompts"]["config_dir_exists"])

    def test_usage_errors(self):
        p = self.run_doctor("--format", "yaml")
        self.assertEqual(p.returncode, 2)
        p = self.run_doctor("extra-arg")
        self.assertEqual(p.returncode, 2)
        p = self.run_doctor("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--format", p.stdout)


if __name__ == "__main__":
    unittest.main()
