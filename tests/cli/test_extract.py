"""CLI tests of `agentrun extract`: stdout, stderr and exit status for each flag."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import random
import re
import subprocess
import tempfile
import unittest

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")


def run(*args, stdin=b""):
    if isinstance(stdin, str):
        stdin = stdin.encode()
    p = subprocess.run([AGENTRUN, "extract", *args], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class TempFiles:
    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()

    def write(self, name, data):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return path


class ExtractJson(unittest.TestCase):
    def setUp(self):
        self.tmp = TempFiles()

    def tearDown(self):
        self.tmp.dir.cleanup()

    def test_empty_input_says_it_was_empty(self):
        # An empty pipe upstream is not the same mistake as text without JSON (issue 49).
        code, out, err = run(stdin=b"")
        self.assertEqual((code, out), (3, ""))
        self.assertIn("no JSON object found: the input is empty", err)
        code, out, err = run(stdin=b" \n\t\n")
        self.assertIn("the input is blank (only white space)", err)
        code, out, err = run(stdin=b"just prose")
        self.assertNotIn("the input is", err)

    def test_first_object_compact_in_model_order_utf8_kept(self):
        rc, out, err = run(stdin='Sure:\n```json\n{"z": 1, "a": "é", "r": 0.85}\n```\nBye')
        self.assertEqual((rc, out, err), (0, '{"z":1,"a":"é","r":0.85}\n', ""))

    def test_numbers_and_nul_keys_as_written(self):
        cases = ['{"id": 12345678901234567890}', '[-0]', '[20e1]', '[1.50, 0.85, 1E+2, -0.0e-0]',
                 '{"foo\\u0000bar": 42, "z": 1, "a": 2}', '{"big": -1e400, "tiny": 1e-400}',
                 '{"s": "\\u00e9\\/"}']
        for text in cases:
            want = text.replace(" ", "") + "\n"
            self.assertEqual(run("--any", stdin=text), (0, want, ""), text)
            self.assertEqual(run("--any", "--repair", stdin=text), (0, want, ""), text)
            self.assertEqual(run("--any", "--all", stdin=text), (0, want, ""), text)

    def test_random_valid_json_comes_back_as_written(self):
        rnd = random.Random(16)
        numbers = ["0", "-0", "1.50", "20e1", "1E+2", "-0.0e-0", "12345678901234567890",
                   "-98765432109876543210.5e-3", "1e400", "3"]
        strings = ['"a"', '"\\u00e9"', '"\\u0000"', '"\\ud83d\\ude00"', '"x\\"y"', '"é"',
                   '"[1]{"', '"\\/"']

        def value(depth):
            k = rnd.randrange(6 if depth < 4 else 4)
            if k == 0:
                return rnd.choice(numbers)
            if k == 1:
                return rnd.choice(strings)
            if k == 2:
                return rnd.choice(["true", "false", "null"])
            if k == 3:
                return rnd.choice(numbers)
            items = [value(depth + 1) for _ in range(rnd.randrange(4))]
            if k == 4:
                return "[" + rnd.choice([",", " , ", ",\n "]).join(items) + "]"
            keys = [rnd.choice(strings + ['"foo\\u0000bar"']) for _ in items]
            return "{" + ", ".join(f"{a} : {b}" for a, b in zip(keys, items)) + "}"

        for _ in range(60):
            doc = value(0)
            while doc[0] not in "[{":
                doc = value(0)
            # The document minus the whitespace between tokens.
            want = re.sub(r'("(?:[^"\\]|\\.)*")|\s+', lambda m: m.group(1) or "", doc) + "\n"
            for flags in ([], ["--repair"]):
                self.assertEqual(run("--any", *flags, stdin=doc), (0, want, ""), doc)

    def test_big_integers_meet_schema_bounds_exactly(self):
        schema = self.tmp.write("s.json", '{"properties": {"id": {"type": "integer", '
                                          '"maximum": 9223372036854775807}}}')
        self.assertEqual(run("--schema", schema, stdin='{"id": 9223372036854775807}'),
                         (0, '{"id":9223372036854775807}\n', ""))
        rc, out, err = run("--schema", schema, stdin='{"id": 9223372036854775808}')
        self.assertEqual((rc, out), (3, ""))
        self.assertEqual(err, "/id: expected a number <= 9223372036854775807, "
                              "got 9223372036854775808\n")

    def test_reads_a_file_operand(self):
        path = self.tmp.write("out.txt", 'text {"a": [1, 2]} text')
        self.assertEqual(run(path), (0, '{"a":[1,2]}\n', ""))

    def test_what_follows_the_answer_is_merged_or_named(self):
        # issue 45: each of these came back as the first object, exit 0, nothing on stderr.
        for text in ('{"key": "value"}, "key2" "value2"}', '{"a":1}, "b" 2}'):
            rc, out, err = run(stdin=text)
            self.assertEqual((rc, out), (3, ""), err)
            self.assertIn("before its members", err)
            rc, out, err = run("--repair", "-v", stdin=text)
            self.assertEqual(rc, 0, err)
            self.assertEqual(len(json.loads(out)), 2)
            self.assertIn("repaired: missing_colon, members_after_close", err)
        for text, at in (('{"key": "value"}, ["abc"]', 18),
                         ('```json {"a":1}``` ```json {"b":2}```', 27),
                         ('```json {"a":1}``` ```json ["b"]```', 27)):
            for flags in ((), ("--repair",), ("--any",)):
                rc, out, err = run(*flags, stdin=text)
                self.assertEqual(rc, 0, err)
                self.assertIn(f"left out 1 more JSON value of the text (it starts at byte {at})",
                              err, (text, flags))

    def test_no_json_exits_3_with_reason(self):
        rc, out, err = run(stdin="no json here [1]")
        self.assertEqual((rc, out), (3, ""))
        self.assertEqual(err, "agentrun: error: no JSON object found\n")

    def test_truncated_json_names_the_byte(self):
        rc, out, err = run(stdin='x {"a": [1, 2')
        self.assertEqual((rc, out), (3, ""))
        self.assertEqual(err, "agentrun: error: JSON truncated at byte 13\n")

    def test_array_and_any(self):
        text = 'see {"a": 1} and [1, 2]'
        self.assertEqual(run("--array", stdin=text), (0, "[1,2]\n", ""))
        # The object after it is left out, and named; the inline "[1, 2]" is prose.
        self.assertEqual(run("--any", stdin="[3] " + text),
                         (0, "[3]\n", "agentrun: warning: left out 1 more JSON value of the "
                                      "text (it starts at byte 8)\n"))
        rc, out, err = run("--array", stdin='{"a": [1]}')
        self.assertEqual((rc, out, err), (3, "", "agentrun: error: no JSON array found\n"))

    def test_all_prints_one_value_per_line(self):
        text = '{"a": 1} prose [9] {"b": {"c": 2}}'
        self.assertEqual(run("--all", stdin=text), (0, '{"a":1}\n{"b":{"c":2}}\n', ""))
        self.assertEqual(run("--all", "--any", stdin=text),
                         (0, '{"a":1}\n[9]\n{"b":{"c":2}}\n', ""))
        self.assertEqual(run("--all", stdin="none")[0], 3)

    def test_repair_fixes_and_reports_them_with_v(self):
        text = "Result: {'a': True, b: [1, 2,], // note\n}"
        rc, out, err = run(stdin=text)
        self.assertEqual((rc, out), (3, ""))
        self.assertEqual(run("--repair", stdin=text), (0, '{"a":true,"b":[1,2]}\n', ""))
        rc, out, err = run("--repair", "-v", stdin=text)
        self.assertEqual(rc, 0)
        self.assertEqual(err, "agentrun: repaired: trailing_comma, comments, single_quotes, "
                              "unquoted_keys, python_literals\n")

    def test_repair_prefers_exit_3_to_invented_structure(self):
        for text in ["Sorry, I cannot help. Use { carefully.", "{{", '[{"i":1{"i":2}]',
                     "{I cannot}", "see [see below]", '{"a": Foo(bar)}']:
            rc, out, err = run("--repair", "--any", stdin=text)
            self.assertEqual((rc, out), (3, ""), text)
            self.assertTrue(err.startswith("agentrun: error: "), err)

    def test_repair_names_every_fix(self):
        text = '{"a":"b,"c": [1, 2, ...], "d": ObjectId("7"), "e": .5, "f" TRUE}'
        rc, out, err = run("--repair", "-v", stdin=text)
        self.assertEqual((rc, out), (0, '{"a":"b","c":[1,2],"d":"7","e":0.5,"f":true}\n'))
        self.assertEqual(err, "agentrun: repaired: missing_quote, number_format, ellipsis, "
                              "js_syntax, missing_colon\n")

    def test_repair_closes_truncated_output(self):
        self.assertEqual(run("--repair", stdin='{"a": [1, 2'), (0, '{"a":[1,2]}\n', ""))

    def test_schema_picks_the_valid_candidate(self):
        schema = self.tmp.write("s.json", '{"type": "object", "required": ["n"],'
                                          ' "properties": {"n": {"type": "integer"}}}')
        self.assertEqual(run("--schema", schema, stdin='{"n": "3"} {"n": 3}'),
                         (0, '{"n":3}\n', "agentrun: warning: left out 1 more JSON value of "
                                          "the text (it starts at byte 0)\n"))

    def test_schema_violations_exit_3(self):
        schema = self.tmp.write("s.json", '{"type": "object", "properties": {"issues": '
                                          '{"type": "array", "items": {"type": "object", '
                                          '"properties": {"line": {"type": "integer"}}}}}}')
        rc, out, err = run("--schema", schema, stdin='{"issues": [{}, {}, {"line": "3"}]}')
        self.assertEqual((rc, out), (3, ""))
        self.assertEqual(err, '/issues/2/line: expected integer, got string "3"\n')

    def test_bad_schema_is_a_usage_error(self):
        schema = self.tmp.write("s.json", '{"oneOf": []}')
        rc, out, err = run("--schema", schema, stdin='{}')
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("oneOf", err)

    def test_binary_garbage_nul_bytes_and_bom(self):
        data = b"\xef\xbb\xbf\xff\x00\xfe prose \x00 {\"a\": 1}\x00"
        self.assertEqual(run(stdin=data), (0, '{"a":1}\n', ""))

    def test_empty_input(self):
        self.assertEqual(run(stdin=b"")[0], 3)


class ExtractValue(unittest.TestCase):
    """extract --value --schema: one JSON document, of any kind, checked against a contract
    (issue 58): the command line reaches every case the contract checker has."""

    def setUp(self):
        self.tmp = TempFiles()

    def tearDown(self):
        self.tmp.dir.cleanup()

    def test_scalars_are_values_and_numbers_are_exact(self):
        cases = [('{"minimum": 1.1}', "1.1", 0), ('{"maximum": 0.3}', "0.3", 0),
                 ('{"exclusiveMaximum": 0.3}', "0.3", 3), ('{"exclusiveMinimum": 0}', "1e-400", 0),
                 ('{"const": 0}', "1e-400", 3), ('{"multipleOf": 0.01}', "19.99", 0),
                 ('{"multipleOf": 0.01}', "1.005", 3), ('{"type": "integer"}', "1.0", 0),
                 ('{"type": "string", "pattern": "^\\\\d{5}(-\\\\d{4})?$"}', '"12345-6789"', 0),
                 ('{"type": "string", "pattern": "^\\\\d{5}$"}', '"ddddd"', 3),
                 ('{"type": "null"}', " null\n", 0), ('{"enum": [true]}', "false", 3)]
        for schema, value, want in cases:
            path = self.tmp.write("s.json", schema)
            rc, out, err = run("--value", "--schema", path, stdin=value)
            self.assertEqual(rc, want, (schema, value, out, err))
            if want == 0:
                self.assertEqual(out, value.strip() + "\n")
        rc, out, err = run("--value", stdin='{"a": 1} {"b": 2}')
        self.assertEqual(rc, 3)
        self.assertIn("text after the value", err)
        rc, out, err = run("--value", "--all", stdin="1")
        self.assertEqual(rc, 2)

    def test_dialects_and_references(self):
        d4 = self.tmp.write("d4.json", '{"$schema": "http://json-schema.org/draft-04/schema#"}')
        rc, out, err = run("--value", "--schema", d4, stdin="1")
        self.assertEqual(rc, 2)
        self.assertIn("'http://json-schema.org/draft-04/schema#', a dialect agentrun does "
                      "not implement", err)
        # Beside the schema, by relative reference; elsewhere only when registered.
        self.tmp.write("defs.json", '{"$defs": {"n": {"type": "integer", "minimum": 3}}}')
        main = self.tmp.write("main.json", '{"$ref": "defs.json#/$defs/n"}')
        self.assertEqual(run("--value", "--schema", main, stdin="4")[0], 0)
        self.assertEqual(run("--value", "--schema", main, stdin="2")[0], 3)
        other = tempfile.TemporaryDirectory()
        self.addCleanup(other.cleanup)
        with open(os.path.join(other.name, "ext.json"), "w") as f:
            f.write('{"$id": "https://example.com/ext.json", "type": "string"}')
        ref = self.tmp.write("ref.json", '{"$ref": "https://example.com/ext.json"}')
        rc, out, err = run("--value", "--schema", ref, stdin='"x"')
        self.assertEqual(rc, 2)
        self.assertIn("a document agentrun does not have: it never fetches schemas", err)
        ext = os.path.join(other.name, "ext.json")
        self.assertEqual(run("--value", "--schema", ref, "--schema-ref", ext, stdin='"x"')[0], 0)
        self.assertEqual(run("--value", "--schema", ref, "--schema-ref",
                             "https://example.com/=" + other.name + "/", stdin="1")[0], 3)
        # A file outside the schema's folder is not read through a relative reference.
        up = self.tmp.write("up.json", '{"$ref": "../%s/ext.json"}' %
                            os.path.relpath(other.name, os.path.dirname(self.tmp.dir.name)))
        self.assertEqual(run("--value", "--schema", up, stdin='"x"')[0], 2)

    def test_format_is_an_annotation_unless_asserted(self):
        path = self.tmp.write("f.json", '{"format": "date"}')
        self.assertEqual(run("--value", "--schema", path, stdin='"2023-02-29"')[0], 0)
        rc, out, err = run("--value", "--format-assert", "--schema", path, stdin='"2023-02-29"')
        self.assertEqual(rc, 3)
        self.assertIn("expected a string in format date", err)
        self.assertEqual(run("--format-assert", stdin="{}")[0], 2)


class ExtractNeverSilent(unittest.TestCase):
    """docs/extract.md, "More than one value": what the answer leaves out is named."""

    def setUp(self):
        self.tmp = TempFiles()

    def tearDown(self):
        self.tmp.dir.cleanup()

    def test_other_values_are_named_with_count_and_byte(self):
        text = '{"id": 1}, {"id": 2}, {"id": 3}'
        for flags in ([], ["--repair"]):
            self.assertEqual(run(*flags, stdin=text),
                             (0, '{"id":1}\n', "agentrun: warning: left out 2 more JSON values "
                                               "of the text (the first at byte 11)\n"))
        self.assertEqual(run("-q", stdin=text), (0, '{"id":1}\n', ""))
        self.assertEqual(run("--all", stdin=text), (0, '{"id":1}\n{"id":2}\n{"id":3}\n', ""))

    def test_all_names_the_values_it_could_not_print(self):
        rc, out, err = run("--all", stdin='{"a": 1} {"b": 2 oops} {"c": 3}')
        self.assertEqual((rc, out), (0, '{"a":1}\n{"c":3}\n'))
        self.assertEqual(err, "agentrun: warning: left out 1 JSON value that did not parse, "
                              "the first at byte 9\n")

    def test_members_after_the_close_exit_3_or_merge_with_repair(self):
        text = '{"name": "x"}, "size": 3}'
        rc, out, err = run(stdin=text)
        self.assertEqual((rc, out), (3, ""))
        self.assertEqual(err, "agentrun: error: the JSON object at byte 0 closes at byte 12, "
                              "before its members at byte 15; --repair finds one "
                              "(members_after_close)\n")
        self.assertEqual(run("--repair", stdin=text), (0, '{"name":"x","size":3}\n', ""))
        self.assertEqual(run("--repair", "-v", stdin=text)[2],
                         "agentrun: repaired: members_after_close (1 member from byte 15)\n")

    def test_a_bracket_repair_that_would_drop_data_exits_3_with_the_byte(self):
        rc, out, err = run("--repair", "--array", stdin="[1, 2}, 3]")
        self.assertEqual((rc, out), (3, ""))
        self.assertIn("repairing its brackets would drop what follows at byte 6", err)
        # Where nothing is lost, the same fix is made and named.
        self.assertEqual(run("--repair", "--array", "-v", stdin='[{"id": 1}}, {"id": 2}]'),
                         (0, '[{"id":1},{"id":2}]\n', "agentrun: repaired: brackets\n"))
        self.assertEqual(run("--repair", stdin='{"xs": [1, 2}, "ys": [3]}'),
                         (0, '{"xs":[1,2],"ys":[3]}\n', ""))

    def test_prose_braces_never_beat_a_valid_5_mb_document(self):
        items = ", ".join('{"id": %d, "score": 0.%03d}' % (k, k % 1000) for k in range(200000))
        doc = '{"items": [' + items + ']}'
        self.assertGreater(len(doc), 5 << 20)
        text = "The reply uses braces { like } these.\n\n" + doc + "\n"
        want = doc.replace(" ", "") + "\n"
        path = self.tmp.write("reply.txt", text)
        for flags in ([], ["--repair"]):
            self.assertEqual(run(*flags, path), (0, want, ""), flags)
            self.assertEqual(run(*flags, stdin=text), (0, want, ""), flags)

    def test_stdin_from_a_file_starts_where_the_shell_left_it(self):
        path = self.tmp.write("two.txt", 'skip {"a": 1}\nread {"b": 2}\n')
        with open(path, "rb", buffering=0) as f:
            os.lseek(f.fileno(), len('skip {"a": 1}\n'), os.SEEK_SET)
            p = subprocess.run([AGENTRUN, "extract"], stdin=f, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, b'{"b":2}\n', b""))


class ExtractMarkdown(unittest.TestCase):
    TEXT = ("# Plan\nDo it.\n## Steps\n1. a\n# Code\n"
            "```python\nprint(1)\n```\n~~~sh\nls\n~~~\n")

    def test_code_prints_every_block(self):
        self.assertEqual(run("--code", stdin=self.TEXT), (0, "print(1)\nls\n", ""))

    def test_lang_selects_blocks(self):
        self.assertEqual(run("--lang", "SH", stdin=self.TEXT), (0, "ls\n", ""))
        rc, out, err = run("--lang", "rust", stdin=self.TEXT)
        self.assertEqual((rc, out, err), (3, "", "agentrun: error: no 'rust' code block found\n"))

    def test_section_up_to_same_level(self):
        self.assertEqual(run("--section", "plan", stdin=self.TEXT),
                         (0, "Do it.\n## Steps\n1. a\n", ""))
        rc, out, err = run("--section", "Nope", stdin=self.TEXT)
        self.assertEqual((rc, out, err), (3, "", "agentrun: error: no section 'Nope' found\n"))


class ExtractUsage(unittest.TestCase):
    def test_help(self):
        rc, out, err = run("-h")
        self.assertEqual(rc, 0)
        self.assertIn("usage: agentrun extract", out)
        for flag in ("--array", "--any", "--all", "--repair", "--schema", "--code", "--lang",
                     "--section"):
            self.assertIn(flag, out)

    def test_unknown_option_and_conflicts(self):
        self.assertEqual(run("--nope")[0], 2)
        self.assertEqual(run("--array", "--any")[0], 2)
        self.assertEqual(run("--code", "--section", "x")[0], 2)
        self.assertEqual(run("a", "b")[0], 2)

    def test_unreadable_file(self):
        rc, out, err = run("/nonexistent/file")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("/nonexistent/file", err)


FIXTURES = os.path.join(os.environ.get("AGENTRUN_SOURCE_ROOT", "."), "tests", "fixtures")


class ExtractUnwrap(unittest.TestCase):
    """--unwrap: a CLI's captured output, recorded from the real CLIs."""

    def fixture(self, rel):
        return os.path.join(FIXTURES, rel)

    def test_each_cli_wrapper_unwraps_to_the_json_of_its_final_text(self):
        for rel, cli in (("claude/stream-fenced-json.jsonl", "claude"),
                         ("codex/json-fenced-json.jsonl", "codex"),
                         ("gemini/stream-fenced-json.jsonl", "gemini")):
            for name in (cli, "auto"):
                with self.subTest(rel=rel, unwrap=name):
                    code, out, err = run("--unwrap", name, self.fixture(rel))
                    self.assertEqual(code, 0, err)
                    self.assertEqual(out, '{"verdict":"ok","issues":[],"score":7}\n')

    def test_non_streaming_wrappers_unwrap_too(self):
        for rel in ("claude/json-text.json", "gemini/json-text.json"):
            with self.subTest(rel=rel):
                code, out, err = run("--unwrap", "auto", "--code", self.fixture(rel))
                # The final text is prose: no code block, but it was unwrapped.
                self.assertEqual(code, 3, err)
                self.assertIn("no code block", err)

    def test_an_error_the_cli_reported_exits_4_with_its_class(self):
        code, out, err = run("--unwrap", "auto", self.fixture("claude/stream-error-401.jsonl"))
        self.assertEqual(code, 4)
        self.assertEqual(out, "")
        self.assertIn("auth", err)

    def test_input_that_is_no_wrapper_exits_3(self):
        code, out, err = run("--unwrap", "auto", stdin='{"answer": 1}')
        self.assertEqual(code, 3)
        self.assertIn("not the json or stream-json output", err)
        code, out, err = run("--unwrap", "codex", self.fixture("claude/stream-text.jsonl"))
        self.assertEqual(code, 3)
        self.assertIn("not codex", err)

    def test_unknown_unwrap_value_is_a_usage_error(self):
        code, out, err = run("--unwrap", "gpt", stdin="{}")
        self.assertEqual(code, 2)
        self.assertIn("--unwrap", err)


if __name__ == "__main__":
    unittest.main()
