"""The first hour with the real claude, codex and gemini CLIs against the loopback mock
(issue 31): doctor tells installed, logged in and usable apart by each CLI's own status
command (never a model call) and exits 4 when nothing is usable; a CLI with nothing to log
in with is `auth` with what to do (codex refused before it starts: it would retry the
network for a minute); a call without -m is priced by the model the CLI reports.

No request leaves 127.0.0.1: claude's `auth status` looks its API host up unless
ANTHROPIC_BASE_URL is set, so it stays set (to the mock) in every environment here;
codex's `login status` makes no request; a codex with no login is never started."""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
# gpt-5.5 per MTok (PRICES.md): input, cached input, output.
GPT55 = (5.00, 0.50, 30.00)
KEYS = ("ANTHROPIC_API_KEY", "MOCK_API_KEY", "GEMINI_API_KEY")


class FirstHour(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_clis()
        cls.mock = Mock().start()

    @classmethod
    def tearDownClass(cls):
        cls.mock.cleanup()

    def setUp(self):
        self.root = RunRoot(self.mock.port)

    def tearDown(self):
        harness.kill_leftovers(self.root)
        self.root.cleanup()

    def fresh_env(self):
        """A user who installed the three CLIs and logged in nowhere: no keys, no codex
        model provider of its own, no gemini settings."""
        env = {k: v for k, v in self.root.agentrun_env().items() if k not in KEYS}
        os.remove(os.path.join(self.root.codex_home, "config.toml"))
        os.remove(os.path.join(self.root.home, ".gemini", "settings.json"))
        env.pop("GOOGLE_GEMINI_BASE_URL")
        return env

    def doctor(self, env):
        p = subprocess.run([AGENTRUN, "doctor", "--format", "json"], cwd=self.root.work,
                           env=env, capture_output=True, text=True, timeout=120)
        doc = json.loads(p.stdout)
        return p, doc, {x["name"]: x for x in doc["providers"]}

    def run_agentrun(self, env, *args, timeout=120):
        p = subprocess.run([AGENTRUN, *args, "--format", "json", "--timeout", "90s"],
                           cwd=self.root.work, env=env, capture_output=True, text=True,
                           timeout=timeout)
        try:
            return p, json.loads(p.stdout)
        except json.JSONDecodeError:
            raise AssertionError("not JSON (exit %d): %r\nstderr: %s"
                                 % (p.returncode, p.stdout[:2000], p.stderr[-3000:]))

    def test_doctor_in_a_fresh_home_is_not_ok_and_says_what_to_do(self):
        seen = len(self.mock.requests())
        p, doc, prov = self.doctor(self.fresh_env())
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertFalse(doc["ok"])
        for name in ("claude", "codex", "gemini"):
            self.assertTrue(prov[name]["installed"], prov[name])
            self.assertIs(prov[name]["logged_in"], False, prov[name])
            self.assertFalse(prov[name]["usable"], name)
        self.assertIn("ANTHROPIC_API_KEY", prov["claude"]["login"])
        self.assertIn("codex login", prov["codex"]["login"])
        self.assertIn("GEMINI_API_KEY", prov["gemini"]["login"])
        # Status commands only: not one model request (claude's auth status does not even
        # probe the base URL).
        self.assertEqual([r for r in self.mock.requests()[seen:] if r["method"] == "POST"], [])

    def test_doctor_with_the_mocks_keys_sees_each_login(self):
        p, doc, prov = self.doctor(self.root.agentrun_env())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(doc["ok"])
        self.assertEqual(prov["claude"]["login"], "logged in (ANTHROPIC_API_KEY)")
        self.assertEqual(prov["codex"]["login"], "$MOCK_API_KEY is set (model provider 'mock')")
        self.assertEqual(prov["gemini"]["login"], "$GEMINI_API_KEY is set")
        for name in ("claude", "codex", "gemini"):
            self.assertIs(prov[name]["logged_in"], True, name)
            self.assertTrue(prov[name]["usable"], name)

    def test_doctor_check_auth_tries_each_key_with_one_call(self):
        # A key is "key set, not verified" until --check-auth makes one call (issue 49).
        self.mock.set_script({cli: [{"kind": "text", "text": "OK"}]
                              for cli in ("claude", "codex", "gemini")})
        seen = len(self.mock.requests())
        p = subprocess.run([AGENTRUN, "doctor", "--format", "json", "--check-auth",
                            "--timeout", "90s"], cwd=self.root.work, env=self.root.agentrun_env(),
                           capture_output=True, text=True, timeout=200)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        prov = {x["name"]: x for x in json.loads(p.stdout)["providers"]}
        for name in ("claude", "codex", "gemini"):
            self.assertEqual(prov[name]["auth_check"]["result"], "verified",
                             (name, prov[name]["auth_check"]))
        self.assertIs(prov["gemini"]["key_not_verified"], True)
        self.assertGreaterEqual(
            len([r for r in self.mock.requests()[seen:] if r["method"] == "POST"]), 3)

    def test_claude_and_gemini_without_credentials_are_auth(self):
        # In agentrun's words, headless: claude's own words name its interactive /login,
        # gemini's name the settings directory agentrun gave it (issue 49).
        env = self.fresh_env()
        for cli, words in (("claude", "claude is not logged in: set ANTHROPIC_API_KEY, or "
                                      "CLAUDE_CODE_OAUTH_TOKEN"),
                           ("gemini", "gemini is not logged in: set GEMINI_API_KEY")):
            self.mock.set_script({cli: [{"kind": "text", "text": "never"}]})
            seen = len(self.mock.requests())
            p, doc = self.run_agentrun(env, "run", "-p", cli, "hi")
            self.assertEqual(p.returncode, 4, (cli, p.stderr[-2000:]))
            self.assertEqual(doc["error"]["code"], "auth", (cli, doc["error"]))
            self.assertIn(words, doc["error"]["message"])
            self.assertIn("docs/providers.md#logging-in-auth", doc["error"]["message"])
            self.assertNotIn("/login", doc["error"]["message"])
            self.assertNotIn("settings.json", doc["error"]["message"])
            self.assertEqual([r for r in self.mock.requests()[seen:] if r["method"] == "POST"],
                             [], cli)

    def test_codex_without_a_login_is_auth_at_once_and_never_started(self):
        env = self.fresh_env()
        # Were codex started after all, it would look for OpenAI: a proxy that is closed keeps
        # it on this machine, and the short timeout keeps the test short.
        env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
                   ALL_PROXY="http://127.0.0.1:9", NO_PROXY="", no_proxy="")
        transcript = os.path.join(self.root.root, "transcript.jsonl")
        t0 = time.monotonic()
        p, doc = self.run_agentrun(env, "run", "-p", "codex", "--idle-timeout", "20s",
                                   "--transcript", transcript, "hi", timeout=60)
        self.assertLess(time.monotonic() - t0, 15)
        self.assertEqual(p.returncode, 4, p.stderr[-2000:])
        self.assertEqual(doc["error"]["code"], "auth", doc["error"])
        self.assertIn("codex login", doc["error"]["message"])
        self.assertEqual(doc["calls"][0]["exit_code"], -1)
        self.assertFalse(os.path.exists(transcript) and os.path.getsize(transcript))

    def test_codex_without_a_model_is_priced_by_the_model_it_reports(self):
        # review and prioritize make text calls, which codex keeps no session of: its
        # telemetry names the model (config.toml's gpt-5.5 here).
        usage = {"input": 1200, "cached": 300, "output": 42}
        u_in, u_cached, u_out = 1200, 300, 42
        want = (u_in * GPT55[0] + u_cached * GPT55[1] + u_out * GPT55[2]) / 1e6
        with open(os.path.join(self.root.work, "README"), "a") as f:
            f.write("one more line\n")
        review = {"passed": True, "summary": "fine", "issues": []}
        self.mock.set_script({"codex": [{"kind": "json", "value": review, "usage": usage}]})
        p, doc = self.run_agentrun(self.root.agentrun_env(), "review", "-p", "codex")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(doc["model"], "gpt-5.5")
        self.assertEqual(doc["cost_source"], "price_table")
        self.assertAlmostEqual(doc["cost_usd"], want, places=12)
        # A repair call (no session either) is priced too, whatever the main call was.
        prds = os.path.join(self.root.work, "prds")
        os.makedirs(prds)
        with open(os.path.join(prds, "auth.md"), "w") as f:
            f.write("# Auth\nSign in.\n")
        ranking = {"recommendations": [{"prd_id": "auth", "priority": 1, "rationale": "r"}]}
        self.mock.set_script({"codex": [{"kind": "text", "text": "no JSON", "usage": usage},
                                        {"kind": "json", "value": ranking, "usage": usage}]})
        p, doc = self.run_agentrun(self.root.agentrun_env(), "prioritize", "-p", "codex", prds)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(doc["repair"], "model")
        self.assertEqual([c["cost_source"] for c in doc["calls"]], ["price_table"] * 2)
        self.assertAlmostEqual(doc["cost_usd"], 2 * want, places=12)


if __name__ == "__main__":
    unittest.main()
