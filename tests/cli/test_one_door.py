"""src/cli is a client of the public library: it includes only include/agentrun, its own
headers, the utility library (src/util) and the build's configuration.

The link is the real rule (src/cli/meson.build: the CLI's objects link libagentrun's
exported API and the utility library alone, so a call into a module's internals does not
link); this test names the header that broke it, before anything is linked."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import os
import re
import shutil
import subprocess
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CLI = os.path.join(ROOT, "src", "cli")

# What a CLI file may include with quotes: the public API, the CLI's own headers, the
# utility library, and the build's configuration (ar_config.h).
ALLOWED = re.compile(r'^(agentrun/[a-z_]+\.h|cli/[a-z_]+\.h|mcp/[a-z_]+\.h|util/[a-z_0-9]+\.h|ar_config\.h)$')

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def quoted_includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def offenders(files):
    bad = []
    for path in files:
        for inc in quoted_includes(path):
            if not ALLOWED.match(inc):
                bad.append(f"{os.path.relpath(path, ROOT)}: #include \"{inc}\"")
    return bad


class OneDoor(unittest.TestCase):
    def cli_files(self):
        names = sorted(n for n in os.listdir(CLI) if n.endswith((".c", ".h")))
        self.assertIn("main.c", names)
        return [os.path.join(CLI, n) for n in names]

    def test_cli_includes_only_public_headers_and_the_utility_library(self):
        self.assertEqual(offenders(self.cli_files()), [])

    def test_an_internal_header_is_named(self):
        # The rule catches what it is for: a module header, in any spelling of the line.
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "cmd_x.c")
            with open(p, "w", encoding="utf-8") as f:
                f.write('#include "agentrun/extract.h"\n  #  include "json/extract.h"\n'
                        '#include "util/buf.h"\n#include "result/result.h"\n')
            self.assertEqual([o.split(": ", 1)[1] for o in offenders([p])],
                             ['#include "json/extract.h"', '#include "result/result.h"'])


BUILD = os.path.dirname(os.environ.get("AGENTRUN", ""))


def defined_globals(argv):
    p = subprocess.run(argv, capture_output=True, text=True, check=True)
    return sorted({line.split()[2] for line in p.stdout.splitlines()
                   if len(line.split()) == 3 and line.split()[1] in "TDBRV"})


@unittest.skipUnless(BUILD and shutil.which("nm") and shutil.which("readelf"),
                     "needs the build (meson test) and binutils")
class TheLink(unittest.TestCase):
    def test_agentrun_links_the_shared_library(self):
        p = subprocess.run(["readelf", "-d", os.path.join(BUILD, "agentrun")],
                           capture_output=True, text=True, check=True)
        self.assertRegex(p.stdout, r"NEEDED.*\[libagentrun\.so\.\d+\]")

    def test_the_static_binary_sees_what_the_shared_library_exports(self):
        obj = os.path.join(BUILD, "agentrun-public.o")
        if not os.path.exists(obj):
            self.skipTest("no agentrun-static in this build")
        exported = defined_globals(["nm", "-D", "--defined-only",
                                    os.path.join(BUILD, "libagentrun.so")])
        self.assertIn("ar_run_start", exported)
        self.assertEqual(defined_globals(["nm", "-g", "--defined-only", obj]), exported)


if __name__ == "__main__":
    unittest.main()
