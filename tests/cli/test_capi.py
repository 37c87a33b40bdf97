"""The C API example of docs/examples/run.c links against libagentrun and runs."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox  # noqa: E402

EXAMPLE = os.environ.get("CAPI_EXAMPLE", "")


class CApiExample(unittest.TestCase):
    def run_example(self, sb, *args):
        env = dict(sb.env, AGENTRUN_PROVIDER="codex")
        return subprocess.run([EXAMPLE, *args], cwd=sb.work, env=env, capture_output=True,
                              text=True, timeout=60)

    def test_example_prints_the_checked_json(self):
        with Sandbox() as sb:
            sb.answers("codex", ['Sure:\n```json\n{"colours": ["red", "blue"]}\n```'])
            p = self.run_example(sb, "colours please")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout), {"colours": ["red", "blue"]})
            self.assertEqual(sb.calls()[0]["stdin"].split("\n")[0], "colours please")

    def test_example_reports_a_contract_failure_with_exit_3(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"colours": ["red"]}', '{"colours": "red"}'])
            p = self.run_example(sb)
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertIn("contract", p.stderr)
            self.assertIn("/colours", p.stderr)
            self.assertEqual(len(sb.calls()), 2)


if __name__ == "__main__":
    unittest.main()
