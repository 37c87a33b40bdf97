"""agentrun doctor: binaries found or not, versions, credential names (never
values), git, the prompt override directory, and the exit status.

Every CLI here is a tiny shell script in a temporary directory, and PATH holds
only that directory, so no real CLI on the machine is found.
"""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
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
        self.assertIn("read: -p --input-format stream-json --output-format stream-json",
                      t.stdout)
        p, d, prov = self.doc(env={"AGENTRUN_TRUST_PROJECT": "1"})
        self.assertTrue(prov["claude"]["posture"]["trust_project"])
        self.assertTrue(prov["claude"]["posture"]["read"]["project_config"])
        self.assertNotIn("--setting-sources", prov["claude"]["posture"]["read"]["argv"])
        # Runs trust a checkout on "1" only: doctor says what a run would do with any other.
        for value in ("0", "", "yes", "true", "11"):
            p, d, prov = self.doc(env={"AGENTRUN_TRUST_PROJECT": value})
            self.assertEqual(p.returncode, 0, p.stderr)
            for name in ("claude", "codex", "gemini"):
                self.assertFalse(prov[name]["posture"]["trust_project"], (value, name))
            self.assertFalse(prov["claude"]["posture"]["read"]["project_config"], value)
            self.assertIn("--setting-sources", prov["claude"]["posture"]["read"]["argv"])

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

    def test_a_failing_version_is_reported(self):
        self.script("gemini", "echo boom >&2; exit 3")
        p, d, prov = self.doc(env={"GEMINI_API_KEY": SECRET})
        self.assertEqual(p.returncode, 4, p.stderr)
        g = prov["gemini"]
        self.assertFalse(g["installed"])
        self.assertFalse(g["usable"])
        self.assertIsNone(g["version"])
        self.assertEqual(g["version_error"], "--version failed")
        t = self.run_doctor(env={"GEMINI_API_KEY": SECRET})
        self.assertIn("gemini does not answer --version", t.stdout)

    # Scripts that answer as the real CLIs do (measured: claude 2.1.197 and 2.1.337 `auth
    # status`, codex 0.169.0 `login status`; tests/e2e/test_doctor.py runs the real ones).
    CLAUDE = """case "$1 $2" in
--version*) echo "2.1.337 (Claude Code)" ;;
"auth status")
  if [ -n "$ANTHROPIC_API_KEY" ]; then
    printf '{\\n  "loggedIn": true,\\n  "authMethod": "api_key",\\n  "apiProvider": "firstParty",\\n  "apiKeySource": "ANTHROPIC_API_KEY"\\n}\\n'
  elif [ -f "$HOME/helper" ]; then
    printf '{"loggedIn": true, "authMethod": "api_key_helper", "apiProvider": "firstParty", "apiKeySource": "apiKeyHelper"}\\n'
  else
    printf '{\\n  "loggedIn": false,\\n  "authMethod": "none",\\n  "apiProvider": "firstParty"\\n}\\n'; exit 1
  fi ;;
*) echo "unexpected: $*" >> "$HOME/model-calls"; exit 9 ;;
esac"""
    CODEX = """case "$1 $2" in
--version*) echo "codex-cli 0.169.0" ;;
"login status")
  echo 'WARNING: proceeding, even though we could not create PATH aliases' >&2
  if [ -f "${CODEX_HOME:-$HOME/.codex}/auth.json" ]; then echo 'Logged in using ChatGPT' >&2
  else echo 'Not logged in' >&2; exit 1; fi ;;
*) echo "unexpected: $*" >> "$HOME/model-calls"; exit 9 ;;
esac"""
    GEMINI = """case "$1" in
--version) echo "0.61.0" ;;
*) echo "unexpected: $*" >> "$HOME/model-calls"; exit 9 ;;
esac"""

    def real_like_clis(self):
        self.script("claude", self.CLAUDE)
        self.script("codex", self.CODEX)
        self.script("gemini", self.GEMINI)

    def test_a_key_is_set_not_verified_and_check_auth_tries_it_once(self):
        """A key doctor finds is "key set, not verified"; --check-auth makes one tiny call
        and says verified, rejected or unreachable, bounded by --timeout (issue 49)."""
        fixtures = os.path.join(os.environ.get("AGENTRUN_SOURCE_ROOT", "."), "tests", "fixtures",
                                "claude")
        self.script("claude", self.CLAUDE.replace(
            '*) echo "unexpected',
            '"-p "*) echo "$*" >> "$HOME/model-calls"; /bin/cat > /dev/null\n'
            '  case "$ANTHROPIC_API_KEY" in\n'
            '  good) /bin/cat "%s/stream-text.jsonl" ;;\n'
            '  bad) /bin/cat "%s/stream-error-401.jsonl"; exit 1 ;;\n'
            '  *) exec /bin/sleep 60 ;;\n'
            '  esac ;;\n'
            '*) echo "unexpected' % (fixtures, fixtures)))
        p, d, prov = self.doc(env={"ANTHROPIC_API_KEY": "good"})
        self.assertIs(prov["claude"]["key_not_verified"], True)
        self.assertNotIn("auth_check", prov["claude"])
        t = self.run_doctor(env={"ANTHROPIC_API_KEY": "good"})
        self.assertIn("login: key set, not verified", t.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.home, "model-calls")))
        for key, result, code in (("good", "verified", 0), ("bad", "rejected", 4),
                                  ("offline", "unreachable", 0)):
            with self.subTest(key=key):
                t0 = time.monotonic()
                p, d, prov = self.doc("--check-auth", "--timeout", "2s",
                                      env={"ANTHROPIC_API_KEY": key})
                self.assertLess(time.monotonic() - t0, 20)
                self.assertEqual(p.returncode, code, p.stdout + p.stderr)
                check = prov["claude"]["auth_check"]
                self.assertEqual(check["result"], result, check)
                self.assertIs(prov["claude"]["usable"], result != "rejected")
        with open(os.path.join(self.home, "model-calls")) as f:
            self.assertEqual(len(f.read().splitlines()), 3)  # one call per check
        t = self.run_doctor("--check-auth", "--timeout", "2s", env={"ANTHROPIC_API_KEY": "bad"})
        self.assertIn("auth check: rejected (auth: claude rejected the credentials (HTTP 401)",
                      t.stdout)
        self.assertIn("claude credentials rejected", t.stdout)

    def test_fresh_home_nothing_logged_in_is_not_ok(self):
        """Installed is not usable: with no credentials anywhere doctor says each CLI is
        not logged in, what to do, and exits 4 (issue 31)."""
        self.real_like_clis()
        p, d, prov = self.doc()
        self.assertEqual(p.returncode, 4, p.stdout)
        self.assertFalse(d["ok"])
        for name in ("claude", "codex", "gemini"):
            self.assertTrue(prov[name]["installed"], name)
            self.assertIs(prov[name]["logged_in"], False, name)
            self.assertFalse(prov[name]["usable"], name)
        self.assertIn("ANTHROPIC_API_KEY", prov["claude"]["login"])
        self.assertIn("codex login", prov["codex"]["login"])
        self.assertIn("CODEX_API_KEY", prov["codex"]["login"])
        self.assertIn("GEMINI_API_KEY", prov["gemini"]["login"])
        t = self.run_doctor()
        self.assertEqual(t.returncode, 4)
        self.assertIn("not ok: no usable CLI: claude not logged in, codex not logged in, "
                      "gemini not logged in", t.stdout)
        self.assertIn("login: no (not logged in: set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN", t.stdout)
        # Only --version and the status commands ran: never a model call.
        self.assertFalse(os.path.exists(os.path.join(self.home, "model-calls")))

    def test_each_way_of_logging_in_is_seen(self):
        self.real_like_clis()
        cases = [
            ("claude", {"ANTHROPIC_API_KEY": SECRET}, "ANTHROPIC_API_KEY"),
            ("codex", {"CODEX_API_KEY": SECRET}, "CODEX_API_KEY"),
            ("gemini", {"GEMINI_API_KEY": SECRET}, "GEMINI_API_KEY"),
        ]
        for name, env, word in cases:
            p, d, prov = self.doc(env=env)
            self.assertEqual(p.returncode, 0, (name, p.stdout))
            self.assertIs(prov[name]["logged_in"], True, name)
            self.assertTrue(prov[name]["usable"], name)
            self.assertIn(word, prov[name]["login"])
            self.assertNotIn(SECRET, p.stdout)
        # What only the CLI's own status command can see: claude's apiKeyHelper, codex's
        # stored login.
        open(os.path.join(self.home, "helper"), "w").close()
        os.makedirs(os.path.join(self.home, ".codex"))
        with open(os.path.join(self.home, ".codex", "auth.json"), "w") as f:
            f.write("{}")
        p, d, prov = self.doc()
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(prov["claude"]["login"], "logged in (apiKeyHelper)")
        self.assertEqual(prov["codex"]["login"], "logged in (codex login status: "
                                                 "Logged in using ChatGPT)")

    def test_codex_without_openai_login_follows_its_model_provider(self):
        self.real_like_clis()
        home = os.path.join(self.home, ".codex")
        os.makedirs(home)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write('model = "gpt-5.5"\nprofile = "work"\n\n[profiles.work]\n'
                    'model_provider = "mock"  # a comment\n\n'
                    '[model_providers.mock]\nname = "mock"\nbase_url = "http://127.0.0.1:9/v1"\n'
                    'env_key = "MOCK_API_KEY"\n')
        p, d, prov = self.doc()
        self.assertIs(prov["codex"]["logged_in"], False)
        self.assertEqual(prov["codex"]["login"],
                         "model provider 'mock' reads its key from $MOCK_API_KEY, which is not "
                         "set")
        p, d, prov = self.doc(env={"MOCK_API_KEY": SECRET})
        self.assertIs(prov["codex"]["logged_in"], True)
        self.assertTrue(prov["codex"]["usable"])
        # OpenAI's own: OPENAI_API_KEY alone does not log codex exec in.
        os.remove(os.path.join(home, "config.toml"))
        p, d, prov = self.doc(env={"OPENAI_API_KEY": SECRET})
        self.assertIs(prov["codex"]["logged_in"], False)
        self.assertIn("does not read OPENAI_API_KEY", prov["codex"]["login"])

    def test_gemini_key_that_may_be_stored_is_unknown_not_no(self):
        self.script("gemini", self.GEMINI)
        os.makedirs(os.path.join(self.home, ".gemini"))
        with open(os.path.join(self.home, ".gemini", "settings.json"), "w") as f:
            f.write('{"security": {"auth": {"selectedType": "gemini-api-key"}}}')
        p, d, prov = self.doc()
        self.assertIsNone(prov["gemini"]["logged_in"])
        self.assertTrue(prov["gemini"]["usable"])
        self.assertEqual(p.returncode, 0)
        t = self.run_doctor()
        self.assertIn("gemini usable (login not confirmed)", t.stdout)
        # No method at all, but a .env file gemini would load: unknown too.
        os.remove(os.path.join(self.home, ".gemini", "settings.json"))
        with open(os.path.join(self.home, ".env"), "w") as f:
            f.write("GEMINI_API_KEY=x\n")
        p, d, prov = self.doc()
        self.assertIsNone(prov["gemini"]["logged_in"])
        self.assertIn(".env", prov["gemini"]["login"])

    def test_status_commands_that_hang_are_asked_at_once(self):
        hang = ('case "$1" in --version) echo 9.9.9 ;; *) exec %s 60 ;; esac'
                % shutil.which("sleep"))
        self.script("claude", hang)
        self.script("codex", hang)
        start = time.monotonic()
        p, d, prov = self.doc()
        self.assertLess(time.monotonic() - start, 55)
        self.assertIsNone(prov["claude"]["logged_in"])
        self.assertIsNone(prov["codex"]["logged_in"])
        self.assertTrue(prov["claude"]["usable"])

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
        # One 30 s limit for all three, not 30 s (or 60 s) one after another.
        self.assertLess(elapsed, 55)

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

    # issue 46: each version against the tested range; newer is a warning, never a failure.
    def test_versions_against_the_tested_range(self):
        self.script("claude", 'echo "2.1.999 (Claude Code)"')
        self.script("codex", "echo codex-cli 0.171.0")
        self.script("gemini", "echo 0.60.0")
        p, d, prov = self.doc(env={"GEMINI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(prov["claude"]["version_fit"], "newer")
        self.assertEqual(prov["claude"]["tested"], {"min": "2.1.248", "max": "2.1.337"})
        self.assertTrue(prov["claude"]["usable"])
        self.assertEqual(prov["codex"]["version_fit"], "tested")
        self.assertEqual(prov["gemini"]["version_fit"], "older")
        t = self.run_doctor(env={"ANTHROPIC_API_KEY": SECRET})
        self.assertIn("version: warning: newer than the tested range, 2.1.248 to 2.1.337",
                      t.stdout)
        self.assertIn("version: within the tested range, 0.169.0 to 0.171.0", t.stdout)

    # issue 56: a claude older than 2.1.248 expands @file mentions whatever it is told, so
    # agentrun does not start it: doctor says so and does not count it as usable.
    def test_a_claude_too_old_to_take_a_prompt_as_data_is_not_usable(self):
        self.script("claude", 'echo "2.1.247 (Claude Code)"')
        p, d, prov = self.doc(env={"ANTHROPIC_API_KEY": SECRET})
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(prov["claude"]["version_fit"], "unsupported")
        self.assertFalse(prov["claude"]["usable"])
        t = self.run_doctor(env={"ANTHROPIC_API_KEY": SECRET})
        self.assertIn("version: error: too old, agentrun does not start it", t.stdout)
        self.assertIn("claude too old", t.stdout)

    # Since 2026-06 gemini serves a Google login only with a Code Assist licence.
    def test_gemini_personal_google_login_is_not_confirmed(self):
        self.script("gemini", self.GEMINI)
        os.makedirs(os.path.join(self.home, ".gemini"))
        with open(os.path.join(self.home, ".gemini", "settings.json"), "w") as f:
            f.write('{"security": {"auth": {"selectedType": "oauth-personal"}}}')
        with open(os.path.join(self.home, ".gemini", "oauth_creds.json"), "w") as f:
            f.write("{}")
        p, d, prov = self.doc()
        self.assertIsNone(prov["gemini"]["logged_in"])
        self.assertIn("IneligibleTierError", prov["gemini"]["login"])
        self.assertIn("Code Assist", prov["gemini"]["login"])
        p, d, prov = self.doc(env={"GOOGLE_CLOUD_PROJECT": "my-project"})
        self.assertIs(prov["gemini"]["logged_in"], True)


if __name__ == "__main__":
    unittest.main()
