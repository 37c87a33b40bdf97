"""docs/examples/extract.c, built against agentrun/extract.h alone, prints what
`agentrun extract` prints (stdout and exit status) for the same text: the public
extraction calls are the ones the command uses."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import AGENTRUN  # noqa: E402

EXAMPLE = os.environ.get("EXTRACT_EXAMPLE", "")

TEXTS = [
    'Here it is:\n```json\n{"a": 1,  "b": [1, 2.50, "x"]}\n```\n',
    'first {"a":1} then {"b":2} and [3]',
    "{'a': 'single', trailing: [1,2,],}",
    '{"cut": [1, 2, {"x": "open',
    "no json here at all",
    '{"a":1}, "b":2}',
    '```python\nprint(1)\n```\ntext\n```sh\nls\n```\n```\nplain\n```',
    '[1, 2] and {"k": "v"}',
    'caf\u00e9 {"k\u00e9y": "\u201cquoted\u201d", "n": 1e400, "s": "tab\\there"}',
    '```json\n{"a": \n  {"deep": [ {"x": 1} , {"y": [true, false, null]} ]}}\n```',
    "",
]
FLAGS = [[], ["--repair"], ["--array"], ["--code"], ["--lang", "sh"]]
SCHEMA = '{"type": "object", "required": ["b"], "properties": {"b": {"type": "integer"}}}'


def run(argv, text):
    return subprocess.run(argv, input=text.encode(), capture_output=True, timeout=30)


@unittest.skipUnless(EXAMPLE, "EXTRACT_EXAMPLE is not set (run through meson test)")
class ExtractExample(unittest.TestCase):
    def same(self, flags, text):
        ours = run([AGENTRUN, "extract", *flags], text)
        theirs = run([EXAMPLE, *flags], text)
        what = f"flags {flags} text {text!r}: {ours.stderr!r} / {theirs.stderr!r}"
        self.assertEqual(theirs.returncode, ours.returncode, what)
        self.assertEqual(theirs.stdout, ours.stdout, what)
        return ours

    def test_every_text_and_flag_prints_as_agentrun_does(self):
        found = 0
        for flags in FLAGS:
            for text in TEXTS:
                found += self.same(flags, text).returncode == 0
        self.assertGreater(found, 10)  # the cases do find values, not only failures

    def test_a_large_value_is_written_whole(self):
        body = ", ".join(f'"k{i}": [{i}, "v {i}"]' for i in range(40000))
        out = self.same([], "x {" + body + "} y")
        self.assertGreater(len(out.stdout), 64 << 10)  # more than one piece

    def test_schema_violations_and_the_valid_value(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(SCHEMA)
        try:
            self.assertEqual(self.same(["--schema", f.name], '{"a": 1} {"b": 2}').stdout,
                             b'{"b":2}\n')
            bad = self.same(["--schema", f.name], '{"b": "two"}')
            self.assertEqual(bad.returncode, 3)
            theirs = run([EXAMPLE, "--schema", f.name], '{"b": "two"}')
            self.assertIn(b"/b: ", theirs.stderr)  # the violation, as agentrun words it
            self.assertIn(theirs.stderr.split(b"\n")[0], bad.stderr)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
