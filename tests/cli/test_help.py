"""--help, `help COMMAND` and the man pages against the option tables.

The list of options comes from agentrun-docgen's JSON dump of the same tables the
parser is built from, never from a list written here, so these tests cannot
drift from what agentrun accepts.
"""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import re
import shutil
import subprocess
import unittest

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
DOCGEN = os.environ.get("AGENTRUN_DOCGEN", "agentrun-docgen")
BUILD_ROOT = os.environ.get("AGENTRUN_BUILD_ROOT", ".")
MAN_DIR = os.path.join(BUILD_ROOT, "docs", "man")


def tables():
    p = subprocess.run([DOCGEN, "json"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def agentrun(*args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRUN_")}
    return subprocess.run([AGENTRUN, *args], capture_output=True, text=True, env=env,
                          timeout=30)


def mentions(text, word):
    """True when word (an option such as --format or -p) appears as a whole token."""
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def option_words(opt):
    words = ["--" + opt["long"]]
    if opt.get("short"):
        words.append("-" + opt["short"])
    return words


class Help(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tables = tables()
        cls.commands = cls.tables["commands"]

    def test_the_table_has_every_command_and_each_has_options_and_an_example(self):
        self.assertGreaterEqual(len(self.commands), 8)
        for c in self.commands:
            with self.subTest(command=c["name"]):
                self.assertTrue(c["example"], "no example")
                self.assertTrue(c["example"].startswith("agentrun " + c["name"]) or
                                " agentrun " + c["name"] in c["example"], c["example"])
                self.assertIn("help", [o["long"] for o in c["options"]])

    def test_command_help_exits_0_and_mentions_every_option_and_the_example(self):
        for c in self.commands:
            with self.subTest(command=c["name"]):
                p = agentrun(c["name"], "--help")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "")
                self.assertTrue(p.stdout.startswith("usage: agentrun " + c["name"]), p.stdout)
                for o in c["options"]:
                    for w in option_words(o):
                        self.assertTrue(mentions(p.stdout, w), f"{w} missing")
                    if o.get("arg"):
                        self.assertTrue(mentions(p.stdout, "--%s %s" % (o["long"], o["arg"])),
                                        f"--{o['long']} {o['arg']} missing")
                self.assertIn(c["example"], p.stdout)

    def test_help_lists_exactly_the_options_of_the_table(self):
        for c in self.commands:
            with self.subTest(command=c["name"]):
                out = agentrun(c["name"], "--help").stdout
                section = out.split("\noptions:\n", 1)[1].split("\nexample:\n", 1)[0]
                listed = set(re.findall(r"^  (?:-\w, )?(?:    )?(--[\w-]+)", section, re.M))
                self.assertEqual(listed, {"--" + o["long"] for o in c["options"]})

    def test_short_h_and_help_command_print_the_same_help(self):
        for c in self.commands:
            with self.subTest(command=c["name"]):
                long_help = agentrun(c["name"], "--help").stdout
                self.assertEqual(agentrun(c["name"], "-h").stdout, long_help)
                p = agentrun("help", c["name"])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, long_help)

    def test_description_and_options_fit_80_columns(self):
        for c in self.commands:
            with self.subTest(command=c["name"]):
                out = agentrun(c["name"], "--help").stdout
                # The usage line and the example are printed as they are.
                body = out.split("\n", 1)[1].split("\nexample:\n", 1)[0]
                for line in body.splitlines():
                    if len(line) > 80:
                        # Only a single unbreakable word may be longer.
                        self.assertEqual(len(line.split()), 1, line)

    def test_docs_help_names_are_there_or_help_says_where(self):
        """A page --help names is installed, or (agentrun run from its build tree) the help
        says the documents are not installed and where they are (issue 31)."""
        source = os.environ.get("AGENTRUN_SOURCE_ROOT", ".")
        named = 0
        for cmd in self.commands:
            out = agentrun(cmd["name"], "--help").stdout
            flat = " ".join(out.split())
            for docdir, page in re.findall(r"(/\S+?/doc/agentrun)/([\w.-]+\.md)", flat):
                named += 1
                self.assertTrue(os.path.isfile(os.path.join(source, "docs", page)), page)
                if not os.path.isdir(docdir):
                    self.assertIn("is not there yet", flat, cmd["name"])
                    self.assertIn("in its source tree they are in docs/", flat, cmd["name"])
                else:
                    self.assertNotIn("is not there yet", flat, cmd["name"])
        self.assertGreater(named, 3)

    def test_help_beside_the_documents_names_them_not_the_build_prefix(self):
        """An unpacked release tarball (bin/agentrun beside share/doc/agentrun) or npm
        package (vendor/<os>-<arch>/agentrun, two levels down) finds its documents: --help
        names them instead of saying they are "not there yet" (issue 49)."""
        static = os.path.join(BUILD_ROOT, "agentrun-static")
        if not os.path.isfile(static):
            self.skipTest("no agentrun-static in this build (-Dstatic_cli)")
        import tempfile
        source = os.environ.get("AGENTRUN_SOURCE_ROOT", ".")
        with tempfile.TemporaryDirectory() as root:
            root = os.path.realpath(root)
            docs = os.path.join(root, "share", "doc", "agentrun")
            shutil.copytree(os.path.join(source, "docs"), docs)
            for where in (("bin",), ("vendor", "linux-x64")):
                exe = os.path.join(root, *where, "agentrun")
                os.makedirs(os.path.dirname(exe))
                shutil.copy2(static, exe)
                p = subprocess.run([exe, "review", "--help"], capture_output=True, text=True,
                                   timeout=30)
                flat = " ".join(p.stdout.split())
                self.assertIn(docs + "/review.md", flat, where)
                self.assertNotIn("not there yet", flat, where)

    def test_help_for_help(self):
        for args in (["help", "help"], ["help", "--help"]):
            p = agentrun(*args)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("usage: agentrun help [COMMAND]", p.stdout)
            self.assertEqual(p.stderr, "")

    def test_an_option_named_like_a_format_points_at_format(self):
        for cmd in ("review", "doctor", "run"):
            p = agentrun(cmd, "--json" if cmd != "run" else "--sarif")
            self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("unknown option '--json'; did you mean '--format json'?",
                      agentrun("review", "--json").stderr)
        self.assertIn("unknown option '--json'; did you mean '--format json'?",
                      agentrun("doctor", "--json").stderr)
        self.assertIn("did you mean '--provider codex'?", agentrun("run", "--codex").stderr)

    def test_main_help_lists_every_command_and_the_exit_statuses(self):
        for args in (["--help"], ["-h"], ["help"]):
            p = agentrun(*args)
            self.assertEqual(p.returncode, 0, p.stderr)
            for c in self.commands:
                self.assertRegex(p.stdout, r"\n  %s +%s\n" % (re.escape(c["name"]),
                                                             re.escape(c["summary"])))
            for status in ("0", "1", "2", "3", "4", "5", "6", "130", "143"):
                self.assertRegex(p.stdout, r"\n  %s +\S" % status)
            for line in p.stdout.split("\nexit status:\n", 1)[1].splitlines():
                self.assertLessEqual(len(line), 80, line)

    def test_no_arguments_prints_usage_on_stderr_and_exits_2(self):
        p = agentrun()
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage: agentrun", p.stderr)

    def test_an_amount_in_usd_that_is_none_exits_2_naming_the_option(self):
        # One reader (ar_cli_parse_usd) for every --max-cost: run, batch and mcp.
        for args in (["run", "--max-cost", "free", "x"], ["run", "--max-cost", "-1", "x"],
                     ["batch", "--max-cost", "nan", "-"], ["mcp", "--max-cost", "0"],
                     ["mcp", "--max-cost-total", "1e999"]):
            p = agentrun(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn("invalid %s '%s': want a positive amount in USD" % (args[1], args[2]),
                          p.stderr, args)
            self.assertEqual(p.stdout, "", args)

    def test_unknown_command_exits_2(self):
        p = agentrun("nosuch")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown command 'nosuch'", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_help_of_an_unknown_command_exits_2(self):
        p = agentrun("help", "nosuch")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown command 'nosuch'", p.stderr)

    def test_an_option_no_table_has_is_a_usage_error_in_every_command(self):
        for c in self.commands:
            with self.subTest(command=c["name"]):
                p = agentrun(c["name"], "--no-such-option")
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("--no-such-option", p.stderr)

    def test_version_names_agentrun_libuv_and_jansson(self):
        p = agentrun("--version")
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"^agentrun %s \(libuv \d+\.\d+\.\d+, jansson \d+\.\d+"
                         % re.escape(self.tables["version"]))

    def test_v_alone_is_the_version_and_the_version_takes_no_argument(self):
        # Issue 59: `agentrun -v` was "unknown command" and `--version extra` was accepted.
        version = agentrun("--version").stdout
        for flag in ("-v", "-V", "version"):
            p = agentrun(flag)
            self.assertEqual((p.returncode, p.stdout, p.stderr), (0, version, ""), flag)
        for args in (["--version", "extra"], ["version", "extra"]):
            p = agentrun(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn("'%s' takes no arguments, got 'extra'" % args[0], p.stderr)
            self.assertEqual(p.stdout, "")

    def test_an_option_before_the_command_says_where_it_goes(self):
        p = agentrun("-v", "review", "HEAD")
        self.assertEqual(p.returncode, 2)
        self.assertIn("options go after the command: 'agentrun review -v …'", p.stderr)
        self.assertEqual(p.stdout, "")
        p = agentrun("--verison")
        self.assertEqual(p.returncode, 2)
        self.assertIn("did you mean '--version'?", p.stderr)

    def test_help_of_a_command_by_every_spelling(self):
        want = agentrun("help", "review").stdout
        self.assertIn("usage: agentrun review", want)
        for args in (["--help", "review"], ["-h", "review"], ["review", "--help"]):
            p = agentrun(*args)
            self.assertEqual((p.returncode, p.stdout), (0, want), args)
        p = agentrun("help", "review", "extra")
        self.assertEqual(p.returncode, 2)
        self.assertIn("help takes one COMMAND", p.stderr)

    def test_a_mistyped_name_gets_a_did_you_mean_wherever_it_is_looked_up(self):
        # Issue 59: one suggest function (src/util/suggest.c) for every name looked up:
        # commands, subcommands, option values (formats, providers), templates.
        cases = [
            (["reveiw"], "unknown command 'reveiw'; did you mean 'review'?"),
            (["help", "bacth"], "did you mean 'batch'?"),
            (["review", "--format", "jsno"], "invalid --format 'jsno' (text, json, sarif, "
             "github, rdjsonl, gitlab, checkstyle); did you mean 'json'?"),
            (["review", "--fail-on", "hgih"], "did you mean 'high'?"),
            (["prioritize", "--format", "markdwon", "."], "did you mean 'markdown'?"),
            (["doctor", "--format", "josn"], "did you mean 'json'?"),
            (["run", "--expect", "arary", "x"], "did you mean 'array'?"),
            (["run", "--log-format", "jsn", "x"], "did you mean 'json'?"),
            (["run", "-p", "clade", "x"], "unknown provider 'clade' (claude, codex, gemini, "
             "auto); did you mean 'claude'?"),
            (["run", "--fallback", "gemni", "x"], "did you mean 'gemini'?"),
            (["run", "-t", "reveiw"], "unknown template 'reveiw'; did you mean 'review'?"),
            (["prompts", "show", "prioritise"], "did you mean 'prioritize'?"),
            (["prompts", "shwo"], "did you mean 'show'?"),
            (["worktrees", "lsit"], "did you mean 'list'?"),
            (["cache", "clera"], "did you mean 'clear'?"),
        ]
        for args, words in cases:
            with self.subTest(args=args):
                p = agentrun(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(words, p.stderr)
        # Nothing near enough: no guess.
        p = agentrun("review", "--format", "xml")
        self.assertNotIn("did you mean", p.stderr)


ROFF_ESCAPES = [("\\-", "-"), ("\\&", ""), ("\\e", "\\"), ("\\(aq", "'"), ("\\(ha", "^"),
                ("\\(em", "--"), ("\\(en", "-"), ("\\(lq", '"'), ("\\(rq", '"'),
                ("\\(oq", "'"), ("\\(cq", "'"), ("\\fB", ""), ("\\fI", ""), ("\\fR", "")]


def plain_roff(source):
    """A rough rendering of the man(7) macros agentrun-docgen emits, for machines
    without groff: each paragraph or tagged item on one line, sections alone."""
    out, line, tagged = [], "", False

    def flush():
        nonlocal line
        if line:
            out.append(line)
        line = ""

    for raw in source.splitlines():
        text = raw
        for esc, plain in ROFF_ESCAPES:
            text = text.replace(esc, plain)
        if raw.startswith(".\\\"") or raw.startswith(".TH") or raw in (".ad l", ".nh"):
            continue
        if raw.startswith("."):
            macro, _, arg = text[1:].partition(" ")
            if macro == "SH":
                flush()
                out.append(arg)
                continue
            if macro == "TP":
                flush()
                tagged = True
                continue
            if macro in ("PP", "br", "RS", "RE", "nf", "fi"):
                flush()
                continue
            if macro in ("B", "I"):
                text = arg
            elif macro in ("BR", "IR"):
                text = arg.replace(" ", "")
            else:
                raise AssertionError(f"unexpected macro: {raw}")
        if tagged:
            line = "       " + text + "  "
            tagged = False
            continue
        line = (line + " " + text) if line.strip() else ("       " + text)
    flush()
    return "\n".join(out) + "\n"


class ManPages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.commands = tables()["commands"]

    def render(self, page):
        """The page as plain text, lines long enough that nothing is broken or hyphenated
        (groff when it is installed, else plain_roff)."""
        path = os.path.join(MAN_DIR, page)
        if not shutil.which("groff"):
            with open(path, encoding="ascii") as f:  # docgen escapes everything else
                return plain_roff(f.read())
        p = subprocess.run(["groff", "-man", "-Tascii", "-P-cbou", "-rLL=2000n", "-ww", path],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "", f"groff warns about {page}")
        return p.stdout

    def test_there_is_a_page_for_agentrun_and_for_each_command_and_no_other(self):
        pages = {f for f in os.listdir(MAN_DIR) if f.endswith(".1")}
        self.assertEqual(pages, {"agentrun.1"} | {"agentrun-%s.1" % c["name"]
                                                  for c in self.commands})

    def test_each_command_page_has_every_option_the_example_and_the_exit_statuses(self):
        for c in self.commands:
            with self.subTest(command=c["name"]):
                text = self.render("agentrun-%s.1" % c["name"])
                self.assertIn("agentrun-%s - %s" % (c["name"], c["summary"]), text)
                for section in ("SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLE", "EXIT STATUS",
                                "ENVIRONMENT", "SEE ALSO"):
                    self.assertRegex(text, r"(?m)^%s$" % section)
                options = text.split("\nOPTIONS\n", 1)[1].split("\nEXAMPLE\n", 1)[0]
                for o in c["options"]:
                    for w in option_words(o):
                        self.assertTrue(mentions(options, w), f"{w} missing")
                    self.assertIn(o["help"].replace("\u2026", "...").replace("\u2014", "--"),
                                  " ".join(options.split()))
                self.assertIn(c["example"].replace("\u2026", "..."), text)
                for status in ("2", "3", "4", "5", "130", "143"):
                    self.assertRegex(text, r"(?m)^ +%s +\S" % status)

    def test_the_main_page_lists_every_command_and_its_page(self):
        text = self.render("agentrun.1")
        for c in self.commands:
            self.assertIn("agentrun-%s(1)" % c["name"], text)
            self.assertRegex(text, r"(?m)^ +%s " % re.escape(c["name"]))
        self.assertIn("THE LIFE OF A RUN", text)  # the prose of docs/man/agentrun.roff
        self.assertIn("AGENTRUN_PROVIDER", text)

    @unittest.skipUnless(shutil.which("man"), "man is not installed")
    def test_man_renders_every_page_without_a_warning(self):
        for page in sorted(os.listdir(MAN_DIR)):
            if not page.endswith(".1"):
                continue
            with self.subTest(page=page):
                p = subprocess.run(["man", "--warnings", "-l", os.path.join(MAN_DIR, page)],
                                   capture_output=True, text=True,
                                   env=dict(os.environ, MANWIDTH="80", MANPAGER="cat",
                                            PAGER="cat"))
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "")
                self.assertIn("EXIT STATUS", p.stdout)


if __name__ == "__main__":
    unittest.main()
