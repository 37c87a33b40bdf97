"""src/cli is a client of the public library: it includes only include/agentrun, its own
headers, the utility library (src/util) and the build's configuration.

The link is the real rule (src/cli/meson.build: the CLI's objects link libagentrun's
exported API and the utility library alone, so a call into a module's internals does not
link); this test names the header that broke it, before anything is linked."""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CLI = os.path.join(ROOT, "src", "cli")

# What a CLI file may include with quotes: the public API, the CLI's own headers, the
# utility library, and the build's configuration (ar_config.h).
ALLOWED = re.compile(r'^(agentrun/[a-z_]+\.h|cli/[a-z_]+\.h|util/[a-z_0-9]+\.h|ar_config\.h)$')

# Issue 29a makes these clients of agentrun/review.h (review formats in src/review);
# until then they call the review module's internals, and the executables link the
# static core for them. Nothing else is excused.
NOT_YET = {"cmd_review.c", "review_format.c", "review_format.h"}

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
        return [os.path.join(CLI, n) for n in names if n not in NOT_YET]

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

    def test_excused_files_exist(self):
        # An excuse for a file that is gone (or already clean) is an excuse to drop.
        for name in NOT_YET:
            path = os.path.join(CLI, name)
            if os.path.exists(path):
                self.assertTrue(offenders([path]), f"{name} is clean: drop it from NOT_YET")


if __name__ == "__main__":
    unittest.main()
