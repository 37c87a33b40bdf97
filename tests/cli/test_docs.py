"""Every agentrun command line in the docs and in the option tables' examples uses
options that exist, with values they accept.

The commands and options come from agentrun-docgen's JSON dump of the option
tables, so a renamed or removed flag fails here until the docs follow.
"""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import re
import shlex
import subprocess
import sys
import unittest

DOCGEN = os.environ.get("AGENTRUN_DOCGEN", "agentrun-docgen")
SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT", ".")
# The docs whose recipes are meant to be copied as they are.
DOCS = ["README.md", "CHANGELOG.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(SOURCE_ROOT, "docs"))
    if f.endswith(".md"))
SHELL_END = re.compile(r"\s(?:>>?|<|\||\|\||&&|;|2>|2>&1)(?:\s|$)|\)\s*$|\)\"")


def tables():
    p = subprocess.run([DOCGEN, "json"], capture_output=True, text=True, check=True)
    return {c["name"]: c for c in json.loads(p.stdout)["commands"]}


def code_lines(text):
    """The lines of fenced code blocks, with backslash continuations joined."""
    out, in_block, cont = [], False, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            continue
        if line.rstrip().endswith("\\"):
            cont += line.rstrip()[:-1] + " "
            continue
        out.append(cont + line)
        cont = ""
    return out


def command_lines(text, commands):
    """Each `agentrun COMMAND …` found in code, cut at the first shell operator
    (or at the quote that opened it: 'agentrun batch … {}' in a parallel command)."""
    for line in code_lines(text):
        for m in re.finditer(r"(^|[\s\"'(:])agentrun ([a-z]+)((?:\s.*)?)$", line):
            if m.group(2) not in commands:
                continue  # prose: "Install agentrun and claude"
            rest = m.group(3)
            if m.group(1) in ("'", '"'):
                rest = rest.split(m.group(1), 1)[0]
            end = SHELL_END.search(rest)
            yield m.group(2), rest[:end.start()] if end else rest, line


def words(rest):
    # GitHub expressions and shell variables become plain words.
    rest = re.sub(r"\$\{\{[^}]*\}\}", "X", rest)
    return shlex.split(rest, comments=True)


class DocsUseRealOptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cmds = tables()

    def check(self, cmd, argv, where):
        c = self.cmds.get(cmd)
        self.assertIsNotNone(c, f"{where}: no command '{cmd}'")
        by_long = {o["long"]: o for o in c["options"]}
        by_short = {o["short"]: o for o in c["options"] if o.get("short")}
        i = 0
        while i < len(argv):
            w = argv[i]
            i += 1
            if w == "--":
                break
            if w.startswith("--"):
                name, eq, value = w[2:].partition("=")
                o = by_long.get(name)
                self.assertIsNotNone(o, f"{where}: agentrun {cmd} has no option --{name}")
            elif w.startswith("-") and len(w) > 1:
                o = by_short.get(w[1])
                self.assertIsNotNone(o, f"{where}: agentrun {cmd} has no option -{w[1]}")
                eq, value = ("=", w[2:]) if len(w) > 2 else ("", "")
            else:
                continue
            if not o.get("arg"):
                self.assertFalse(eq, f"{where}: {w} takes no value")
                continue
            if not eq:
                self.assertLess(i, len(argv), f"{where}: {w} needs a value")
                value = argv[i]
                i += 1
            values = o.get("values") or ""
            if values and not values.startswith("@") and "$" not in value:
                self.assertIn(value, values.split("|"), f"{where}: {w} {value}")

    def test_every_command_line_in_the_docs(self):
        n = 0
        for rel in DOCS:
            with open(os.path.join(SOURCE_ROOT, rel), encoding="utf-8") as f:
                text = f.read()
            for cmd, rest, line in command_lines(text, self.cmds):
                with self.subTest(doc=rel, line=line.strip()):
                    self.check(cmd, words(rest), f"{rel}: {line.strip()}")
                    n += 1
        self.assertGreater(n, 20)

    def test_every_command_line_in_the_man_page_prose(self):
        n = 0
        man = os.path.join(SOURCE_ROOT, "docs", "man")
        for rel in sorted(f for f in os.listdir(man) if f.endswith(".roff")):
            with open(os.path.join(man, rel), encoding="utf-8") as f:
                text = [l.replace("\\-", "-").replace("\\(ha", "^").replace("\\(aq", "'")
                        for l in f.read().splitlines() if not l.startswith(".")]
            for cmd, rest, line in command_lines("```\n" + "\n".join(text) + "\n```",
                                                 self.cmds):
                with self.subTest(doc=rel, line=line.strip()):
                    self.check(cmd, words(rest), f"{rel}: {line.strip()}")
                    n += 1
        self.assertGreater(n, 5)

    def test_every_example_in_the_option_tables(self):
        for name, c in self.cmds.items():
            with self.subTest(command=name):
                found = [(cmd, rest) for cmd, rest, _ in
                         command_lines("```\n" + c["example"] + "\n```", self.cmds)]
                self.assertTrue(found, c["example"])
                for cmd, rest in found:
                    self.assertEqual(cmd, name)
                    self.check(cmd, words(rest), f"example of {name}: {c['example']}")

    def test_the_checker_rejects_what_does_not_exist(self):
        text = "```sh\nagentrun review --no-such-flag HEAD\nagentrun review --format xml\n```"
        found = list(command_lines(text, self.cmds))
        self.assertEqual(len(found), 2)
        for cmd, rest, line in found:
            with self.assertRaises(AssertionError, msg=line):
                self.check(cmd, words(rest), line)


class PagesListEveryOption(unittest.TestCase):
    """Each command's docs page lists exactly the options the parser accepts: the
    block between its options markers equals what scripts/doc-options renders from
    the option tables (so a flag is never undocumented, nor documented after it
    is gone). Fix with: scripts/doc-options build/src/cli/agentrun-docgen"""

    def test_option_blocks_match_the_parser(self):
        p = subprocess.run([sys.executable, os.path.join(SOURCE_ROOT, "scripts", "doc-options"),
                            "--check", DOCGEN], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr + "Run: scripts/doc-options "
                         "build/src/cli/agentrun-docgen (it rewrites the options blocks of "
                         "docs/*.md from the option tables), then describe the new options in "
                         "the page's prose where they need more than one line.")


def load_yaml_module():
    try:
        import yaml  # noqa: F401
    except ImportError:
        # Debian's python3-yaml, for a python3 that is not Debian's own.
        sys.path.append("/usr/lib/python3/dist-packages")
        try:
            import yaml  # noqa: F401
        except ImportError:
            return None
    return sys.modules["yaml"]


def yaml_blocks(text):
    """The ```yaml fenced blocks of a page, with the line each starts on."""
    out, block, start = [], None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if block is None and line.strip() == "```yaml":
            block, start = [], n + 1
        elif block is not None and line.strip() == "```":
            out.append((start, "\n".join(block) + "\n"))
            block = None
        elif block is not None:
            block.append(line)
    return out


class RecipesParse(unittest.TestCase):
    """Every YAML recipe in the docs (GitHub Actions, GitLab CI, pre-commit) parses, and
    a GitHub workflow has its trigger and jobs, so a copied recipe runs as it stands."""

    def test_yaml_blocks_parse(self):
        yaml = load_yaml_module()
        if yaml is None:
            self.skipTest("no yaml module")
        seen = 0
        for page in DOCS:
            with open(os.path.join(SOURCE_ROOT, page), encoding="utf-8") as f:
                text = f.read()
            for line, block in yaml_blocks(text):
                seen += 1
                where = "%s:%d" % (page, line)
                try:
                    doc = yaml.safe_load(block)
                except yaml.YAMLError as e:
                    self.fail("%s: %s" % (where, e))
                if isinstance(doc, dict) and "jobs" in doc and "runs-on" in block:
                    # PyYAML reads the key `on` as True (YAML 1.1).
                    self.assertTrue("on" in doc or True in doc, where + ": no 'on:' trigger")
                    for name, job in doc["jobs"].items():
                        self.assertIn("steps", job, "%s: job %s has no steps" % (where, name))
        self.assertGreater(seen, 5)


class SuitesSeeNoMachineCli(unittest.TestCase):
    def test_every_cli_test_imports_isolated_first(self):
        # tests/cli/isolated.py: no machine CLI, login or HOME (issue 49). A test file that
        # forgot it passes here and fails for whoever has the CLIs installed.
        here = os.path.dirname(os.path.abspath(__file__))
        for name in sorted(os.listdir(here)):
            if not (name.startswith("test_") and name.endswith(".py")):
                continue
            with open(os.path.join(here, name), encoding="utf-8") as f:
                first = next(l for l in f if l.startswith(("import ", "from ")))
            self.assertTrue(first.startswith("import isolated"), name)


BUILD_ROOT = os.environ.get("AGENTRUN_BUILD_ROOT", ".")


def stripped_kib(*paths):
    """The size of the files stripped as scripts/package strips them, in KiB."""
    import shutil
    import tempfile
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            out = os.path.join(tmp, os.path.basename(path))
            subprocess.run([shutil.which("strip") or "strip", "--strip-all", "-o", out, path],
                           check=True)
            total += os.path.getsize(out)
    return total / 1024


class NumbersTheBuildCanMeasure(unittest.TestCase):
    """Numbers in the docs that the build can measure are measured here, not retyped
    (issue 49: the soname and the sizes had gone stale). Sizes hold within 5 %: the
    debug-optimized build of the suite and the release build differ a little."""

    def read(self, rel):
        with open(os.path.join(SOURCE_ROOT, rel), encoding="utf-8") as f:
            return f.read()

    def test_the_soname_the_docs_name_is_the_one_built(self):
        import glob
        built = {os.path.basename(p) for p in glob.glob(os.path.join(BUILD_ROOT, "libagentrun.so.*"))
                 if re.fullmatch(r"libagentrun\.so\.\d+", os.path.basename(p))}
        if len(built) != 1:
            self.skipTest("no shared libagentrun in %s" % BUILD_ROOT)
        for rel in ("README.md", "docs/README.md", "docs/install.md", "docs/library.md"):
            for name in re.findall(r"libagentrun\.so\.\d+(?![\d.])", self.read(rel)):
                # abi/libagentrun.so.0.abi (an older soname's reference) is not a claim.
                self.assertIn(name, built, rel)

    def assertAbout(self, said, measured, what):
        self.assertLess(abs(said - measured) / measured, 0.05,
                        "%s: the docs say %s KiB, this build measures %.0f KiB" %
                        (what, said, measured))

    def test_the_binary_sizes_in_install_md(self):
        static = os.path.join(BUILD_ROOT, "agentrun-static")
        if not os.path.isfile(static):
            self.skipTest("no agentrun-static in this build (-Dstatic_cli)")
        # The docs give the size of what users install: a build at -O2 without
        # instrumentation (the sanitizer run of .ci/run is three times the size).
        with open(os.path.join(BUILD_ROOT, "meson-info", "intro-buildoptions.json")) as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
        if opts.get("b_sanitize", "none") != "none" or opts.get("b_coverage") or \
                opts.get("optimization") != "2":
            self.skipTest("not a build of the size users install (sanitized, coverage or not -O2)")
        text = " ".join(self.read("docs/install.md").split())
        m = re.search(r"It is (\d+) KiB stripped \((\d+) KiB where it links glibc instead\), "
                      r"where the dynamically linked build is (\d+) "
                      r"KiB \(`agentrun` and `libagentrun.so`, stripped\)", text)
        self.assertIsNotNone(m, "docs/install.md no longer states the sizes this test checks")
        musl = os.environ.get("AGENTRUN_RELEASE_LIBC") == "musl"
        self.assertAbout(int(m.group(1 if musl else 2)), stripped_kib(static),
                         "agentrun-static against " + ("musl" if musl else "glibc"))
        lib = os.path.join(BUILD_ROOT, "libagentrun.so")
        self.assertAbout(int(m.group(3)),
                         stripped_kib(os.path.join(BUILD_ROOT, "agentrun"), os.path.realpath(lib)),
                         "agentrun and libagentrun.so")


def section(text, heading):
    """The text of a markdown section, from its heading to the next of its level or above."""
    level = heading.split(" ", 1)[0]
    start = text.index("\n" + heading + "\n") + 1
    m = re.compile(r"^#{1,%d} " % len(level), re.M).search(text, start + len(heading) + 1)
    return text[start:m.start() if m else len(text)]


def read(rel):
    with open(os.path.join(SOURCE_ROOT, rel), encoding="utf-8") as f:
        return f.read()


class TheFirstHour(unittest.TestCase):
    """What a new user copies first is true (issue 59): the README's quick start is two
    commands, the second of which CI runs; its command table, its suites, the exit
    statuses of docs/run.md, the meson setup lines and the version line the docs show
    are the program's and the build's."""

    def test_the_quick_start_is_two_lines_and_ci_runs_the_second(self):
        quick = [l.split("#", 1)[0].strip()
                 for l in code_lines(section(read("README.md"), "## Quick start"))]
        quick = [l for l in quick if l]
        self.assertEqual(len(quick), 2, quick)
        main, tests = (shlex.split(l) for l in quick)
        # One sets up and runs the main job, one sets up and runs the tests, with the
        # same setup, so the second reuses the first's build.
        self.assertEqual(main[:2], ["scripts/bootstrap", "&&"])
        self.assertEqual(main[2], "build/agentrun")
        self.assertEqual(tests, ["scripts/bootstrap", "&&", "meson", "test", "-C", "build"])
        ci = read(".ci/run").splitlines()
        at = ci.index("# The README's test command.")
        ran = shlex.split(ci[at + 1])
        # CI adds -Werror to the setup and its logs and status to the test, nothing else.
        self.assertEqual(ran[-2:], ["||", "status=1"])
        extra = {"-Dwerror=true", "--print-errorlogs"}
        self.assertEqual([w for w in ran[:-2] if w not in extra], tests, ci[at + 1])
        # And CI's first setup is the test command's: the test command rebuilds nothing.
        first = next(l for l in ci if l.startswith("if ! scripts/bootstrap"))
        self.assertIn("scripts/bootstrap -Dwerror=true;", first)

    def test_the_readme_lists_every_command(self):
        table = section(read("README.md"), "## Commands")
        listed = set(re.findall(r"^\| `agentrun ([a-z]+)", table, re.M))
        self.assertEqual(listed, set(tables()), "README.md's command table")

    def test_the_readme_names_every_suite(self):
        suites = set()
        for root, _, files in os.walk(os.path.join(SOURCE_ROOT, "tests")):
            if "meson.build" in files:
                text = read(os.path.relpath(os.path.join(root, "meson.build"), SOURCE_ROOT))
                for m in re.finditer(r"suite\s*:\s*(\[[^\]]*\]|'[^']*')", text):
                    suites.update(re.findall(r"'([\w-]+)'", m.group(1)))
        # `meson test --benchmark` and the fuzz targets (-Dfuzz=true) are named apart.
        suites -= {"bench", "fuzz"}
        self.assertIn("cli-musl", suites)
        text = " ".join(section(read("README.md"), "## Tests").split())
        named = set(re.findall(r"`([\w-]+)` \(", text))
        self.assertEqual(named & suites, suites, "README.md's Tests section names the suites")
        m = re.search(r"runs (\w+) suites", text)
        self.assertIsNotNone(m, "README.md no longer says how many suites there are")
        words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight"]
        self.assertEqual(words.index(m.group(1)), len(suites))

    def test_run_md_names_every_exit_status_a_run_has(self):
        codes = section(read("docs/run-result.md"), "## Error codes and exit statuses")
        statuses = {int(m) for m in re.findall(r"^\| `[a-z_]+` \|.*\| (\d) \|$", codes, re.M)}
        self.assertIn(6, statuses)
        said = section(read("docs/run.md"), "## Exit status")
        for status in sorted(statuses):
            self.assertRegex(said, r"\b%d\b" % status, "docs/run.md's exit statuses")

    def test_the_meson_setup_lines_give_no_warning(self):
        # The built-in options of each documented `meson setup` (project options need the
        # project): on a one-file project, meson says nothing of them.
        import shutil
        import tempfile
        builtin = re.compile(r"^(?:--|-D)(buildtype|optimization|debug|b_ndebug)=")
        seen = set()
        for rel in DOCS:
            for line in re.findall(r"meson setup [^`\n]*", read(rel)):
                opts = tuple(w for w in line.split() if builtin.match(w))
                if opts:
                    seen.add(opts)
        self.assertTrue(any("-Doptimization=2" in o for o in seen), seen)
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "meson.build"), "w") as f:
                f.write("project('x', 'c')\n")
            for n, opts in enumerate(sorted(seen)):
                p = subprocess.run(["meson", "setup", os.path.join(tmp, "b%d" % n), tmp, *opts],
                                   capture_output=True, text=True, timeout=120)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertNotIn("WARNING", p.stdout + p.stderr, " ".join(opts))
                shutil.rmtree(os.path.join(tmp, "b%d" % n))

    def test_the_version_lines_are_the_documented_forms(self):
        text = section(read("docs/install.md"), "## Versions")
        dev = re.compile(r"^development build: git (?:v\d+\.\d+\.\d+-\d+-g[0-9a-f]{7,}|[0-9a-f]{7,})"
                         r"(?:-dirty)?$")
        shown = [l for l in code_lines(text) if l.startswith("development build:")]
        # Both forms, from a clone with the release tags and from one without.
        self.assertEqual(len(shown), 2, shown)
        for l in shown:
            self.assertRegex(l, dev)
        self.assertTrue(any(re.search(r"git [0-9a-f]{7,}$", l) for l in shown), shown)
        exe = os.environ.get("AGENTRUN", "agentrun")
        out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        self.assertRegex(out[0], r"^agentrun \d+\.\d+\.\d+ \(libuv [\d.]+, jansson [\d.]+\)$")
        for l in out[1:]:
            self.assertRegex(l, dev)


class TheQuickStartReusesTheBuild(unittest.TestCase):
    """The quick start's second line reuses the first one's build (issue 59): after a
    build, ninja's log holds every command it ran, so the next build runs none of them
    again. It lost 160 of 428 when the musl build's `meson setup` ran inside this build
    directory and refreshed its ninja log under the running ninja (scripts/musl-build)."""

    def test_ninja_recorded_every_command_it_ran(self):
        import shutil
        ninja = shutil.which("ninja") or shutil.which("samu")
        if not ninja or not os.path.isfile(os.path.join(BUILD_ROOT, "build.ninja")):
            self.skipTest("no ninja, or no ninja build here")
        p = subprocess.run([ninja, "-C", BUILD_ROOT, "-n", "-d", "explain"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        lost = [l for l in (p.stdout + p.stderr).splitlines() if "not found in log" in l]
        self.assertEqual(lost, [], "ninja would build these again: its log lost them")


if __name__ == "__main__":
    unittest.main()
