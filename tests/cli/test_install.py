"""`meson install` into a DESTDIR puts everything in place, and the C API
example builds against the installed library through pkg-config and runs.

Runs `meson install --no-rebuild` on the build tree under test, so it checks
what this build (normal or sanitized) would install.
"""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import filecmp
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox  # noqa: E402

BUILD_ROOT = os.environ.get("AGENTRUN_BUILD_ROOT", ".")
SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT", ".")
DOCGEN = os.environ.get("AGENTRUN_DOCGEN", "agentrun-docgen")
MESON = shutil.which("meson")


def introspect(what):
    p = subprocess.run([MESON, "introspect", what, BUILD_ROOT], capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout)


def c_compiler():
    """The C compiler of this build, as an argv prefix."""
    for t in introspect("--targets"):
        for s in t.get("target_sources", []):
            if s.get("language") == "c" and s.get("compiler"):
                return s["compiler"]
    return ["cc"]


@unittest.skipUnless(MESON, "meson is not on PATH")
class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.opts = {o["name"]: o["value"] for o in introspect("--buildoptions")}
        cls.tmp = tempfile.mkdtemp(prefix="agentrun-install-")
        cls.destdir = os.path.join(cls.tmp, "dest")
        p = subprocess.run([MESON, "install", "-C", BUILD_ROOT, "--no-rebuild", "--destdir",
                            cls.destdir], capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            raise AssertionError("meson install failed:\n" + p.stdout + p.stderr)
        cls.prefix = cls.destdir + cls.opts["prefix"]
        with subprocess.Popen([DOCGEN, "json"], stdout=subprocess.PIPE, text=True) as d:
            cls.tables = json.load(d.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, option, *rel):
        return os.path.join(self.prefix, self.opts[option], *rel)

    def assertFile(self, path):
        self.assertTrue(os.path.isfile(path), f"{path} not installed")

    def test_binary_installed_and_runs(self):
        exe = self.path("bindir", "agentrun")
        self.assertTrue(os.access(exe, os.X_OK), exe)
        p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("agentrun %s (" % self.tables["version"]))

    def test_libraries_headers_and_pkgconfig(self):
        libdir = self.path("libdir")
        self.assertFile(os.path.join(libdir, "libagentrun.a"))
        self.assertFile(os.path.join(libdir, "libagentrun.so.1"))
        self.assertTrue(os.path.islink(os.path.join(libdir, "libagentrun.so")))
        self.assertFile(os.path.join(libdir, "pkgconfig", "agentrun.pc"))
        # Every header of include/agentrun, and version.h generated from version.h.in.
        public = sorted(f for f in os.listdir(os.path.join(SOURCE_ROOT, "include", "agentrun"))
                        if f.endswith(".h")) + ["version.h"]
        installed = sorted(os.listdir(self.path("includedir", "agentrun")))
        self.assertEqual(installed, sorted(public))
        with open(self.path("includedir", "agentrun", "version.h")) as f:
            self.assertIn('#define AR_VERSION_STRING "%s"' % self.tables["version"], f.read())

    def test_a_man_page_for_agentrun_and_each_command(self):
        man1 = self.path("mandir", "man1")
        want = {"agentrun.1"} | {"agentrun-%s.1" % c["name"] for c in self.tables["commands"]}
        self.assertEqual(set(os.listdir(man1)), want)
        if shutil.which("man"):
            env = dict(os.environ, MANPATH=self.path("mandir"), MANWIDTH="80", MANPAGER="cat",
                       PAGER="cat")
            for page in ("agentrun", "agentrun-review"):
                p = subprocess.run(["man", page], capture_output=True, text=True, env=env,
                                   timeout=30)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("EXIT STATUS", p.stdout)

    def test_completions_for_bash_zsh_and_fish(self):
        self.assertFile(self.path("datadir", "bash-completion", "completions", "agentrun"))
        self.assertFile(self.path("datadir", "zsh", "site-functions", "_agentrun"))
        self.assertFile(self.path("datadir", "fish", "vendor_completions.d", "agentrun.fish"))

    def test_the_default_prompts_for_reading(self):
        src = os.path.join(SOURCE_ROOT, "prompts")
        dst = self.path("datadir", "agentrun", "prompts")
        names = sorted(f for f in os.listdir(src) if f.endswith(".md"))
        self.assertIn("review.md", names)
        self.assertEqual(sorted(os.listdir(dst)), names)
        for n in names:
            self.assertTrue(filecmp.cmp(os.path.join(src, n), os.path.join(dst, n),
                                        shallow=False), n)

    def test_the_docs_where_help_points(self):
        docdir = self.path("datadir", "doc", "agentrun")
        for page in ("README.md", "CHANGELOG.md", "LICENSE", "review.md", "run.md",
                     "run-result.md", os.path.join("examples", "run.c")):
            self.assertFile(os.path.join(docdir, page))
        self.assertFalse(os.path.exists(os.path.join(docdir, "man")))
        # Every docs page --help names is there after an install.
        exe = self.path("bindir", "agentrun")
        installed = os.path.join(self.opts["prefix"], self.opts["datadir"], "doc", "agentrun")
        for cmd in self.tables["commands"]:
            p = subprocess.run([exe, cmd["name"], "--help"], capture_output=True, text=True,
                               timeout=30)
            for ref in re.findall(re.escape(installed) + r"/([\w.-]+\.md)", p.stdout):
                self.assertFile(os.path.join(docdir, ref))

    def pkg_config(self, *args):
        env = dict(os.environ,
                   PKG_CONFIG_PATH=self.path("libdir", "pkgconfig"),
                   PKG_CONFIG_SYSROOT_DIR=self.destdir)
        p = subprocess.run(["pkg-config", *args, "agentrun"], capture_output=True, text=True,
                           env=env, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return shlex.split(p.stdout)

    def build_example(self, out, static=False, name="run.c", extra=()):
        """Compiles docs/examples/NAME against the installed library."""
        cflags = self.pkg_config("--cflags")
        libs = self.pkg_config("--static", "--libs") if static else self.pkg_config("--libs")
        if static:
            libs = [self.path("libdir", "libagentrun.a") if a == "-lagentrun" else a
                    for a in libs]
        san = []
        if self.opts.get("b_sanitize", "none") not in ("none", ""):
            # A sanitized library needs the sanitizer runtime in the program.
            san = ["-fsanitize=" + self.opts["b_sanitize"]]
        argv = [*c_compiler(), *san, os.path.join(SOURCE_ROOT, "docs", "examples", name),
                *cflags, "-o", out, *libs, *extra]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, " ".join(argv) + "\n" + p.stderr)

    def run_example(self, exe, extra_env):
        with Sandbox() as sb:
            sb.answers("codex", ['Here:\n```json\n{"colours": ["red", "blue"]}\n```'])
            env = dict(sb.env, AGENTRUN_PROVIDER="codex", **extra_env)
            p = subprocess.run([exe, "two colours"], cwd=sb.work, env=env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout), {"colours": ["red", "blue"]})

    def test_pkg_config_points_into_the_destdir(self):
        self.assertEqual(self.pkg_config("--modversion"), [self.tables["version"]])
        self.assertIn("-I" + os.path.join(self.prefix, self.opts["includedir"]),
                      self.pkg_config("--cflags"))
        libs = self.pkg_config("--libs")
        self.assertIn("-L" + self.path("libdir"), libs)
        self.assertIn("-lagentrun", libs)

    def test_the_c_api_example_builds_against_the_shared_library_and_runs(self):
        exe = os.path.join(self.tmp, "run-shared")
        self.build_example(exe)
        self.run_example(exe, {"LD_LIBRARY_PATH": self.path("libdir")})
        if shutil.which("ldd"):
            p = subprocess.run(["ldd", exe], capture_output=True, text=True,
                               env=dict(os.environ, LD_LIBRARY_PATH=self.path("libdir")))
            self.assertIn(os.path.join(self.path("libdir"), "libagentrun.so.1"), p.stdout)

    def test_the_c_api_example_builds_against_the_static_library_and_runs(self):
        exe = os.path.join(self.tmp, "run-static")
        self.build_example(exe, static=True)
        self.run_example(exe, {})


    def test_pkg_config_static_links_a_static_program(self):
        # Issue 59: `pkg-config --static` named -luv, which Debian ships as libuv_a.a (with
        # libuv's own libuv-static.pc): a static link failed. It names what links now.
        if self.opts.get("b_sanitize", "none") not in ("none", ""):
            self.skipTest("a sanitized library links no static program")
        have_static_pc = subprocess.run(["pkg-config", "--exists", "libuv-static"]).returncode == 0
        libs = self.pkg_config("--static", "--libs")
        if have_static_pc:
            self.assertIn("-luv_a", libs)
            self.assertNotIn("-luv", libs)
        exe = os.path.join(self.tmp, "run-all-static")
        self.build_example(exe, static=True, extra=["-static"])
        p = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True)
        self.assertNotIn("NEEDED", p.stdout)
        self.run_example(exe, {})

    def test_the_library_example_builds_on_the_installed_library_and_libuv_and_runs(self):
        # What docs/library.md tells a user: agentrun's and libuv's pkg-config flags.
        p = subprocess.run(["pkg-config", "--cflags", "--libs", "libuv"], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        exe = os.path.join(self.tmp, "library")
        self.build_example(exe, name="library.c", extra=shlex.split(p.stdout))
        with Sandbox() as sb:
            sb.answers("codex", ['{"colours": ["red", "blue"]}'])
            env = dict(sb.env, AGENTRUN_PROVIDER="codex", LD_LIBRARY_PATH=self.path("libdir"))
            p = subprocess.run([exe, "run", "two colours"], cwd=sb.work, env=env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout), {"colours": ["red", "blue"]})
            self.assertIn("main call to codex finished: exit 0", p.stderr)
            p = subprocess.run([exe, "cancel", "two colours", "200"], cwd=sb.work,
                               env=dict(env, FAKE_CLI_HANG="1"), capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(p.returncode, 130, p.stderr)

    @unittest.skipUnless(shutil.which("c++"), "no C++ compiler")
    def test_a_cpp_program_compiles_and_links_against_the_installed_library(self):
        # Every public header must be usable from C++: extern "C" around each, so
        # ar_strerror(int) is not looked for under a mangled name.
        src = os.path.join(self.tmp, "app.cpp")
        headers = sorted(os.listdir(os.path.join(self.path("includedir"), "agentrun")))
        self.assertIn("route.h", headers)
        self.assertIn("prioritize.h", headers)
        with open(src, "w") as f:
            f.write("".join(f"#include <agentrun/{h}>\n" for h in headers) +
                    '#include <cstdio>\n#include <cstring>\n'
                    'int main() {\n'
                    '    struct ar_run_options o;\n'
                    '    ar_run_options_init(&o);\n'
                    '    if (o.kill_grace_ms != 5000)\n'
                    '        return 1;\n'
                    '    struct ar_review_options ro;\n'
                    '    ar_review_options_init(&ro);\n'
                    '    if (ro.jobs != 4 || std::strcmp(ar_severity_name(AR_SEV_HIGH), "high"))\n'
                    '        return 1;\n'
                    '    struct ar_batch_options bo;\n'
                    '    ar_batch_options_init(&bo);\n'
                    '    struct ar_route_options rto;\n'
                    '    ar_route_options_init(&rto);\n'
                    '    struct ar_prioritize_options po;\n'
                    '    ar_prioritize_options_init(&po);\n'
                    '    if (rto.min_score != 0.5 || po.max_prd_bytes != 32768)\n'
                    '        return 1;\n'
                    '    if (bo.jobs != 4)\n'
                    '        return 1;\n'
                    '#define M AR_VERSION_MAJOR\n'
                    '#define N AR_VERSION_MINOR\n'
                    '#if !AR_VERSION_CHECK(M, N, AR_VERSION_PATCH) || !AR_VERSION_CHECK(0, 1, 99) \\\n'
                    '    || AR_VERSION_CHECK(M, N, AR_VERSION_PATCH + 1) \\\n'
                    '    || AR_VERSION_CHECK(AR_VERSION_MAJOR, AR_VERSION_MINOR + 1, 0) \\\n'
                    '    || AR_VERSION_CHECK(AR_VERSION_MAJOR + 1, 0, 0)\n'
                    '#error "AR_VERSION_CHECK"\n'
                    '#endif\n'
                    '    if (std::strcmp(AR_VERSION_STRING, ar_version()))\n'
                    '        return 1;\n'
                    '    std::printf("%s %s\\n", ar_version(), ar_strerror_name(AR_ECONTRACT));\n'
                    '    return 0;\n}\n')
        exe = os.path.join(self.tmp, "app-cpp")
        san = []
        if self.opts.get("b_sanitize", "none") not in ("none", ""):
            san = ["-fsanitize=" + self.opts["b_sanitize"]]
        argv = ["c++", *san, src, *self.pkg_config("--cflags"), "-o", exe,
                *self.pkg_config("--libs")]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, " ".join(argv) + "\n" + p.stderr)
        p = subprocess.run([exe], capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, LD_LIBRARY_PATH=self.path("libdir")))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.tables["version"] + " contract\n")


class Bootstrap(unittest.TestCase):
    """scripts/bootstrap installs what is missing when anything it lists is missing."""

    def have_deps(self, missing, musl=False):
        bindir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, bindir)
        for name in ("meson", "ninja", "pkg-config", "cc", "python3", "jq", "git", "abidiff",
                     "uname", "musl-gcc", "dpkg-source", "cmake"):
            if name in missing:
                continue
            with open(os.path.join(bindir, name), "w") as f:
                f.write("#!/bin/sh\n" + ("echo Linux\n" if name == "uname" else "") + "exit 0\n")
            os.chmod(os.path.join(bindir, name), 0o755)
        with open(os.path.join(SOURCE_ROOT, "scripts", "bootstrap")) as f:
            fn = re.search(r"^have_deps\(\) \{.*?^\}", f.read(), re.S | re.M).group(0)
        bash = shutil.which("bash")
        return subprocess.run([bash, "-c", "musl=%s\n" % ("true" if musl else "false") +
                               fn + "\nhave_deps"], env={"PATH": bindir},
                              capture_output=True, text=True).returncode == 0

    def test_abigail_tools_count_among_what_it_needs(self):
        # Without abidiff, `meson test abi` skips on a fresh machine (issue 49).
        self.assertTrue(self.have_deps(()))
        self.assertFalse(self.have_deps(("abidiff",)))
        self.assertFalse(self.have_deps(("git",)))

    def test_on_debian_x86_64_the_musl_tools_count_too(self):
        # What scripts/musl-deps needs to build the release binary's libuv and jansson.
        self.assertTrue(self.have_deps((), musl=True))
        for tool in ("musl-gcc", "dpkg-source", "cmake"):
            self.assertFalse(self.have_deps((tool,), musl=True), tool)
            self.assertTrue(self.have_deps((tool,), musl=False), tool)


class MuslDeps(unittest.TestCase):
    """scripts/musl-deps refuses what it cannot do with a clear message and exit 1, and
    leaves no half-made directory (bootstrap then links glibc in instead)."""

    def musl_deps(self, without=(), uname="Linux x86_64"):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        for name in ("dirname", "basename", "mktemp", "cat", "grep", "sed", "rm", "mkdir"):
            os.symlink(shutil.which(name), os.path.join(bindir, name))
        for name in ("gcc", "cmake", "dpkg-source", "dpkg-query", "apt-get", "uname"):
            if name in without:
                continue
            with open(os.path.join(bindir, name), "w") as f:
                f.write("#!/bin/sh\n" + ("echo '%s'\n" % uname if name == "uname" else "") +
                        "exit 0\n")
            os.chmod(os.path.join(bindir, name), 0o755)
        out = os.path.join(tmp, "deps")
        p = subprocess.run([shutil.which("bash"), os.path.join(SOURCE_ROOT, "scripts", "musl-deps"),
                            out], env={"PATH": bindir}, capture_output=True, text=True,
                           timeout=60)
        self.assertFalse(os.path.exists(out), "a refused run made " + out)
        return p

    def test_a_missing_tool_is_named(self):
        for tool in ("cmake", "dpkg-source", "gcc"):
            p = self.musl_deps(without=(tool,))
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("musl-deps: %s is missing" % tool, p.stderr)

    def test_meson_refuses_a_directory_it_did_not_make(self):
        if not shutil.which("meson"):
            self.skipTest("no meson")
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        os.mkdir(os.path.join(tmp, "empty"))
        p = subprocess.run(["meson", "setup", os.path.join(tmp, "build"), SOURCE_ROOT,
                            "-Dtests=false", "-Dmusl_deps=" + os.path.join(tmp, "empty")],
                           capture_output=True, text=True, timeout=120)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("holds no libuv, jansson and PCRE2 built against musl: run scripts/musl-deps",
                      p.stdout + p.stderr)

    def test_only_x86_64_linux(self):
        p = self.musl_deps(uname="Linux aarch64")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("only for x86-64 Linux (this is Linux aarch64)", p.stderr)


if __name__ == "__main__":
    unittest.main()
