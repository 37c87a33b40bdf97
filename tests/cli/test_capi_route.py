"""The route and prioritize examples of docs/examples (docs/library.md, "Route and
prioritize") link against libagentrun alone and do what the commands do: the local
tiers answer without a call, the model's route is checked against the manifest, a
ranking comes back as C structs, and Ctrl-C cancels the call on the caller's loop."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import SOURCE_ROOT, Sandbox  # noqa: E402

ROUTE = os.environ.get("ROUTE_EXAMPLE", "")
PRIORITIZE = os.environ.get("PRIORITIZE_EXAMPLE", "")
MANIFEST = os.path.join(os.path.abspath(SOURCE_ROOT), "tests", "fixtures", "route",
                        "manifest.json")
VAGUE = "where do our clients look at past purchases"


def names_in(manifest):
    with open(manifest) as f:
        m = json.load(f)
    return [t["name"] for t in m.get("tasks", [])]


class RouteExample(unittest.TestCase):
    def run_route(self, sb, *query, env=None):
        return subprocess.run([ROUTE, MANIFEST, *query], cwd=sb.work,
                              env=dict(sb.env, AGENTRUN_PROVIDER="codex", **(env or {})),
                              capture_output=True, text=True, timeout=60)

    def test_an_exact_name_is_routed_without_a_call(self):
        task = names_in(MANIFEST)[0]
        with Sandbox(git=False) as sb:
            p = self.run_route(sb, task)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(p.stdout)
            self.assertEqual(doc["schema"], "agentrun.route/1")
            self.assertEqual(doc["route"], "exact")
            self.assertEqual(doc["matches"][0]["name"], task)
            self.assertEqual(doc["calls"], [])
            self.assertEqual(sb.calls(), [])

    def test_the_model_routes_what_the_tiers_cannot_and_is_checked(self):
        task = names_in(MANIFEST)[1]
        with Sandbox(git=False) as sb:
            sb.answers("codex", [json.dumps({"type": "task", "name": task, "confidence": 0.8,
                                             "reasoning": "fits"})])
            p = self.run_route(sb, VAGUE)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(p.stdout)
            self.assertEqual((doc["route"], doc["matches"][0]["name"]), ("discovery", task))
            self.assertEqual(len(doc["calls"]), 1)
            self.assertEqual(doc["provider"], "codex")
            self.assertIn(f"discovery task {task} 0.80\n", p.stderr)

    def test_a_name_the_manifest_lacks_is_a_route_error(self):
        with Sandbox(git=False) as sb:
            sb.answers("codex", [json.dumps({"type": "task", "name": "nosuch", "confidence": 1,
                                             "reasoning": "x"})])
            p = self.run_route(sb, VAGUE)
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertEqual(json.loads(p.stdout)["route"], "error")
            self.assertIn("nosuch", p.stderr)

    def test_a_bad_manifest_fails_to_start(self):
        with Sandbox(git=False) as sb:
            sb.write("m.json", "{\"tasks\": [")
            p = subprocess.run([ROUTE, "m.json", "x"], cwd=sb.work, env=sb.env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("m.json", p.stderr)

    def test_ctrl_c_cancels_the_call(self):
        with Sandbox(git=False) as sb:
            sb.answers("codex", ["{}"])
            env = dict(sb.env, AGENTRUN_PROVIDER="codex", FAKE_CLI_HANG="1")
            p = subprocess.Popen([ROUTE, MANIFEST, VAGUE], cwd=sb.work, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.time() + 30
            while not sb.calls() and time.time() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 130, err)
            doc = json.loads(out)
            self.assertEqual(doc["route"], "error")
            self.assertIn("stopped", doc["error"])
            self.assertEqual(doc["calls"][0]["error"], "interrupted")


PRDS = {"auth.md": "# Auth\nLog in first.\n", "billing.md": "# Billing\nCharge monthly.\n",
        "search.txt": "Search\nFind orders.\n"}


class PrioritizeExample(unittest.TestCase):
    def sandbox(self):
        sb = Sandbox(git=False)
        for name, text in PRDS.items():
            sb.write(os.path.join("prds", name), text)
        return sb

    def test_the_ranking_comes_back_sorted_and_cut_as_c_structs(self):
        answer = {"recommendations": [
            {"prd_id": "billing", "priority": 2, "rationale": "money", "effort": "M",
             "depends_on": ["auth"]},
            {"prd_id": "auth", "priority": 1, "rationale": "first"}], "summary": "s"}
        with self.sandbox() as sb:
            sb.answers("codex", [json.dumps(answer)])
            p = subprocess.run([PRIORITIZE, "prds", "1"], cwd=sb.work,
                               env=dict(sb.env, AGENTRUN_PROVIDER="codex"),
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.splitlines()[:3],
                             ["1 auth -", "(1 more)", "unranked search"])
            self.assertIn("cost codex", p.stdout)
            self.assertIn('<prd id="search">', sb.calls()[0]["stdin"])

    def test_depends_on_and_an_answer_that_stays_wrong(self):
        bad = json.dumps({"recommendations": [{"prd_id": "nosuch", "priority": 1,
                                               "rationale": "x"}]})
        with self.sandbox() as sb:
            sb.answers("codex", [bad, bad])
            p = subprocess.run([PRIORITIZE, "prds"], cwd=sb.work,
                               env=dict(sb.env, AGENTRUN_PROVIDER="codex"),
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertEqual(len(sb.calls()), 2)  # the one repair call

    def test_a_missing_folder_fails_to_start(self):
        with Sandbox(git=False) as sb:
            p = subprocess.run([PRIORITIZE, "nope"], cwd=sb.work, env=sb.env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("nope", p.stderr)


if __name__ == "__main__":
    unittest.main()
