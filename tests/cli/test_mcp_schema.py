"""The MCP tools' `schema` argument is a contract like any other (issue 56, issue 58): the
server loads it through the contract code, so draft 2020-12 and draft-07 load, and a
schema declaring any other dialect is refused with a message that names it."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox  # noqa: E402
from test_mcp import McpCase  # noqa: E402

DRAFT4 = "http://json-schema.org/draft-04/schema#"


class SchemaDialects(McpCase):
    def test_extract_takes_2020_12_and_draft_07_and_names_any_other_dialect(self):
        with Sandbox(git=False) as sb:
            s = self.server(sb)
            s.initialize()
            body = {"type": "object", "required": ["n"],
                    "properties": {"n": {"type": "number", "minimum": 1.1}}}
            for dialect in ("https://json-schema.org/draft/2020-12/schema",
                            "http://json-schema.org/draft-07/schema#", None):
                schema = dict(body, **({"$schema": dialect} if dialect else {}))
                r = s.call("extract", {"text": '{"n": 1} {"n": 1.1}', "schema": schema})
                self.assertEqual(r["result"]["structuredContent"]["json"], '{"n":1.1}', dialect)
            for dialect in (DRAFT4, "https://json-schema.org/draft/2019-09/schema"):
                r = s.call("extract", {"text": '{"n": 2}',
                                       "schema": dict(body, **{"$schema": dialect})})["result"]
                self.assertTrue(r["isError"], r)
                text = r["content"][0]["text"]
                self.assertIn("'%s', a dialect agentrun does not implement" % dialect, text)

    def test_run_refuses_another_dialect_before_any_call(self):
        with Sandbox() as sb:
            sb.answers("codex", ['{"n": 2}'])
            s = self.server(sb)
            s.initialize()
            r = s.call("run", {"prompt": "n?", "schema": {"$schema": DRAFT4, "type": "object"}})
            r = r.get("result", r)
            text = r["content"][0]["text"] if "content" in r else str(r)
            self.assertTrue(r.get("isError", True), r)
            self.assertIn("a dialect agentrun does not implement", text)
            self.assertEqual(sb.calls(), [])


if __name__ == "__main__":
    unittest.main()
