"""The release artifacts are what docs/install.md promises (issue 28).

scripts/package packs this build's agentrun-static (what scripts/release packs from
a release build) into the tarball and the npm package. The tarball is unpacked into
an empty prefix and the npm package installed offline into an empty npm prefix; each
then runs `agentrun --version`, `doctor` and `review` against the fake CLI under
`env -i` with a PATH that holds nothing of the build. The binary links no libuv or
jansson, and where meson.build linked it -static-pie, nothing at all (no loader, no
C library); the versions agree everywhere; the npm launcher refuses a machine it
has no binary for with what it supports and how to build from source, and runs a
static binary whatever C library the machine has.
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import releasetest as rt  # noqa: E402


from releasetest import setUpModule, tearDownModule  # noqa: E402,F401  (package once)


class ReleaseArtifacts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = rt.ROOT
        cls.art = rt.ART
        cls.fake = rt.fake_clis(cls.root)
        cls.work = rt.work_tree_with_a_change(cls.root)
        cls.fixtures = os.path.join(cls.root, "fixtures")
        os.makedirs(cls.fixtures)
        cls.home = os.path.join(cls.root, "home")
        os.makedirs(cls.home)
        cls.npm_prefix = None

    def unpack_tarball(self, name):
        """The tarball unpacked the way docs/install.md says: into a prefix, its
        top directory stripped."""
        prefix = os.path.join(self.root, name)
        os.makedirs(prefix)
        self.assertEqual(os.listdir(prefix), [])
        with tarfile.open(self.art.tarball) as tar:
            for m in tar.getmembers():
                top, _, rest = m.name.partition("/")
                self.assertEqual(top, "agentrun-%s-linux-x86_64" % self.art.version, m.name)
                self.assertTrue(m.isfile() or m.isdir(), m.name + ": not a file or directory")
                if rest:
                    m.name = rest
                    tar.extract(m, prefix, set_attrs=True)
        return prefix

    def npm_install(self, name):
        """A copy, to change, of the npm package installed once into an empty prefix."""
        if not ReleaseArtifacts.npm_prefix:
            ReleaseArtifacts.npm_prefix = self.npm_install_fresh("npm-installed")
        prefix = os.path.join(self.root, name)
        shutil.copytree(ReleaseArtifacts.npm_prefix, prefix, symlinks=True)
        return prefix

    def npm_install_fresh(self, name):
        """npm install -g of the package into an empty prefix, offline: a cache of its
        own, and a registry nothing listens on, so any fetch would fail the install."""
        prefix = os.path.join(self.root, name)
        os.makedirs(prefix)
        env = dict(os.environ, npm_config_cache=os.path.join(self.root, "npm-cache-" + name),
                   npm_config_registry="http://127.0.0.1:9/", npm_config_update_notifier="false",
                   npm_config_audit="false", npm_config_fund="false")
        p = subprocess.run(["npm", "install", "-g", "--offline", "--prefix", prefix,
                            self.art.npm], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return prefix

    def run_agentrun(self, bindir, *args, env=(), cwd=None):
        return rt.clean_run(["agentrun", *args], [bindir, self.fake] + rt.SYSTEM_PATH,
                            cwd or self.work, env=[("HOME", self.home), *env])

    def check_runs(self, bindir):
        """--version, --help, doctor and review, with nothing of the build on PATH."""
        p = self.run_agentrun(bindir, "--version")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^agentrun %s \(libuv \d+\.\d+\.\d+, jansson \d+\.\d+"
                         % re.escape(self.art.version))
        # --help names the documents installed beside the binary, not the build's prefix.
        h = self.run_agentrun(bindir, "review", "--help")
        self.assertEqual(h.returncode, 0, h.stderr)
        self.assertNotIn("not there yet", h.stdout)
        docs = re.search(r"(\S+/share/doc/agentrun)/review\.md", h.stdout.replace("\n", " "))
        self.assertIsNotNone(docs, h.stdout)
        self.assertTrue(docs.group(1).startswith(os.path.realpath(self.root)), docs.group(1))
        self.assertTrue(os.path.isfile(docs.group(1) + "/review.md"), docs.group(1))

        # A version within claude's tested range, as the fake CLI answers --version.
        version_env = [("FAKE_CLI_VERSION", "2.1.300 (Claude Code)")]
        p = self.run_agentrun(bindir, "doctor", env=version_env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"claude\s+%s\s+2\.1\.300 \(Claude Code\)"
                         % re.escape(os.path.join(self.fake, "claude")))

        fixture = rt.review_answer(self.fixtures, [rt.NULL_DEREF])
        p = self.run_agentrun(bindir, "review", "HEAD~1...HEAD", "-p", "claude", "--fail-on",
                              "high", "--format", "json",
                              env=[("FAKE_CLI_FIXTURE", fixture)])
        self.assertEqual(p.returncode, 1, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["verdict"], "fail")
        self.assertEqual([(i["file"], i["line"], i["severity"]) for i in doc["issues"]],
                         [("app.c", 4, "high")])

        fixture = rt.review_answer(self.fixtures, [])
        p = self.run_agentrun(bindir, "review", "HEAD~1...HEAD", "-p", "claude",
                              env=[("FAKE_CLI_FIXTURE", fixture)])
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_the_tarball_runs_from_an_empty_prefix(self):
        prefix = self.unpack_tarball("prefix")
        self.check_runs(os.path.join(prefix, "bin"))

    def test_the_tarball_holds_the_binary_man_pages_completions_docs_and_licenses(self):
        prefix = self.unpack_tarball("layout")
        exe = os.path.join(prefix, "bin", "agentrun")
        self.assertTrue(os.stat(exe).st_mode & stat.S_IXUSR)
        self.assertEqual(os.listdir(os.path.join(prefix, "bin")), ["agentrun"])
        docgen = subprocess.run([os.environ.get("AGENTRUN_DOCGEN", "agentrun-docgen"), "json"],
                                capture_output=True, text=True, check=True)
        commands = [c["name"] for c in json.loads(docgen.stdout)["commands"]]
        self.assertEqual(sorted(os.listdir(os.path.join(prefix, "share", "man", "man1"))),
                         sorted(["agentrun.1"] + ["agentrun-%s.1" % c for c in commands]))
        for rel in ("share/bash-completion/completions/agentrun",
                    "share/zsh/site-functions/_agentrun",
                    "share/fish/vendor_completions.d/agentrun.fish",
                    "share/doc/agentrun/README.md", "share/doc/agentrun/CHANGELOG.md",
                    "share/doc/agentrun/LICENSE",
                    "share/doc/agentrun/install.md", "share/doc/agentrun/review.md",
                    "share/agentrun/prompts/review.md",
                    "share/doc/agentrun/licenses/libuv.copyright",
                    "share/doc/agentrun/licenses/jansson.copyright",
                    "share/doc/agentrun/licenses/pcre2.copyright"):
            self.assertTrue(os.path.isfile(os.path.join(prefix, rel)), rel)
        with open(os.path.join(prefix, "share/doc/agentrun/licenses/libuv.copyright")) as f:
            self.assertIn("libuv", f.read())
        with open(os.path.join(prefix, "share/doc/agentrun/LICENSE")) as f:
            self.assertIn("MIT License", f.read())
        if os.environ.get("AGENTRUN_RELEASE_LIBC") == "musl":  # linked in: its notice too
            with open(os.path.join(prefix, "share/doc/agentrun/licenses/musl.copyright")) as f:
                self.assertIn("musl", f.read())
            with open(os.path.join(prefix, "share/doc/agentrun/licenses/README")) as f:
                self.assertRegex(f.read(), r"musl: the C library, from the Debian package "
                                           r"musl-dev \S+")
        # The library is not part of the tool's release.
        self.assertEqual(sorted(os.listdir(prefix)), ["bin", "share"])

    def test_the_sizes_docs_ci_md_gives_are_the_artifacts(self):
        # Measured, not retyped (issue 49): within 5 %, as tests/cli/test_docs.py does for
        # the binary.
        with open(os.path.join(os.environ.get("AGENTRUN_SOURCE_ROOT", "."), "docs",
                               "ci.md")) as f:
            text = " ".join(f.read().split())
        m = re.search(r"the (\d+) KiB tarball or (\d+) KiB package", text)
        self.assertIsNotNone(m, "docs/ci.md no longer states the sizes this test checks")
        for said, path in ((m.group(1), self.art.tarball), (m.group(2), self.art.npm)):
            kib = os.path.getsize(path) / 1024
            self.assertLess(abs(int(said) - kib) / kib, 0.05,
                            "%s: docs/ci.md says %s KiB, it is %.0f KiB" % (path, said, kib))

    @staticmethod
    def static():
        """Whether meson.build linked agentrun-static -static-pie (tests/meson.build)."""
        return os.environ.get("AGENTRUN_STATIC_PIE") == "1"

    def test_the_packaged_binary_is_static_when_the_build_made_it_so(self):
        if not self.static():
            self.skipTest("agentrun-static is linked dynamically here (no -static-pie)")
        prefix = self.unpack_tarball("static")
        exe = os.path.join(prefix, "bin", "agentrun")
        program = subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True,
                                 check=True).stdout
        self.assertNotIn("INTERP", program)
        self.assertIn("DYN (Position-Independent Executable file)",
                      subprocess.run(["readelf", "-h", exe], capture_output=True, text=True,
                                     check=True).stdout)  # -static-pie, not -static: ASLR
        dynamic = subprocess.run(["readelf", "-dW", exe], capture_output=True, text=True,
                                 check=True).stdout
        self.assertNotIn("(NEEDED)", dynamic)
        self.assertIn("static: needs no loader and no C library", self.art.output)
        # The npm package says it needs nothing: the launcher checks no glibc.
        with tarfile.open(self.art.npm) as tar:
            f = tar.extractfile("package/vendor/linux-x64/requires")
            self.assertEqual(f.read().decode(), "glibc=\nloader=\n")
        symbols = subprocess.run(["nm", rt.static_binary()], capture_output=True, text=True,
                                 check=True).stdout.split()
        if os.environ.get("AGENTRUN_RELEASE_LIBC") == "musl":
            # musl, and nothing in it probes the CPU before main: not glibc's start (its
            # cache probe, a hundred CPUID instructions a virtual machine traps), not
            # libgcc's __builtin_cpu_supports constructor.
            self.assertIn("__init_libc", symbols)  # musl's start
            for probe in ("_dl_relocate_static_pie", "__libc_early_init", "init_cacheinfo",
                          "__cpu_indicator_init", "__cpu_model", "_dl_x86_cpu_features"):
                self.assertNotIn(probe, symbols)
        else:
            # Static glibc loads the system's NSS modules for user, group and host look-ups,
            # and those need the glibc it was linked with: the binary makes none. libuv's
            # uv_os_get_passwd (getpwuid_r, the link's one warning) is linked in, uncalled.
            # (musl has no NSS: it reads /etc/passwd itself.)
            for nss in ("getaddrinfo", "gethostbyname", "gethostbyname_r", "getpwnam",
                        "getpwnam_r", "getpwuid", "getgrnam", "getgrgid", "getgrouplist"):
                self.assertNotIn(nss, symbols)
        # The check above can tell the two apart: the dynamic build has both.
        self.assertIn("INTERP", subprocess.run(["readelf", "-lW", os.environ["AGENTRUN"]],
                                               capture_output=True, text=True).stdout)

    def test_the_binary_needs_only_the_c_library(self):
        prefix = self.unpack_tarball("ldd")
        exe = os.path.join(prefix, "bin", "agentrun")
        p = subprocess.run(["ldd", exe], capture_output=True, text=True)
        if self.static():  # not even those
            self.assertEqual(p.stdout.strip(), "statically linked", p.stdout + p.stderr)
        else:
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotRegex(p.stdout, r"libuv|jansson")
            libs = {l.split()[0] for l in p.stdout.splitlines() if l.strip()}
            self.assertLessEqual(libs, {"linux-vdso.so.1", "libc.so.6", "libm.so.6",
                                        "/lib64/ld-linux-x86-64.so.2"}, p.stdout)
        # The dynamic build links them: the check above can tell the two apart.
        p = subprocess.run(["ldd", os.environ["AGENTRUN"]], capture_output=True, text=True)
        self.assertRegex(p.stdout, r"libuv\.so")

    def test_the_npm_package_installs_offline_into_an_empty_prefix_and_runs(self):
        prefix = self.npm_install_fresh("npm")
        bindir = os.path.join(prefix, "bin")
        self.assertEqual(os.listdir(bindir), ["agentrun"])
        self.check_runs(bindir)
        # The package carries agentrun's own licence where npm shows it.
        with open(os.path.join(prefix, "lib", "node_modules", "agentrun", "LICENSE")) as f:
            self.assertIn("Copyright (c) 2026 the agentrun authors", f.read())
        # npm links the man pages where man looks for them beside bin/.
        self.assertTrue(os.path.isfile(os.path.join(prefix, "share", "man", "man1",
                                                    "agentrun-review.1")))

    def test_the_npm_launcher_passes_exit_status_and_arguments_through(self):
        prefix = self.npm_install("npm-args")
        bindir = os.path.join(prefix, "bin")
        p = self.run_agentrun(bindir, "review", "--fail-on", "nonsense")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("nonsense", p.stderr)
        p = rt.clean_run(["agentrun", "extract"], [bindir] + rt.SYSTEM_PATH,
                         self.work, input='say {"a b": [1, "two words"]} ok')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), {"a b": [1, "two words"]})

    def launcher_refuses(self, prefix, fakes, requires=None):
        """Runs the installed launcher with fake uname/getconf first on PATH."""
        pkg = os.path.join(prefix, "lib", "node_modules", "agentrun")
        if requires is not None:
            with open(os.path.join(pkg, "vendor", "linux-x64", "requires"), "w") as f:
                f.write(requires)
        tools = os.path.join(prefix, "fake-tools")
        os.makedirs(tools, exist_ok=True)
        for name, script in fakes.items():
            path = os.path.join(tools, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + script + "\n")
            os.chmod(path, 0o755)
        return rt.clean_run(["agentrun", "--version"],
                            [tools, os.path.join(prefix, "bin")] + rt.SYSTEM_PATH, self.root)

    def assertRefused(self, p, why, glibc):
        """Refused, naming the binary it has: for linux-x64, with the glibc it needs,
        or none (a static binary)."""
        self.assertEqual(p.returncode, 126, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertIn(why, p.stderr)
        self.assertIn("this npm package has a binary for: linux-x64%s.\n"
                      % (" with glibc %s or later" % glibc if glibc else ""), p.stderr)
        self.assertIn("build agentrun from source", p.stderr)
        self.assertIn("install.md", p.stderr)

    def glibc(self):
        """The glibc the packaged binary needs, as scripts/package says it; None for
        a static binary."""
        if self.static():
            self.assertNotRegex(self.art.output, r"glibc \d+\.\d+ or later")
            return None
        m = re.search(r"glibc (\d+\.\d+) or later", self.art.output)
        self.assertIsNotNone(m, self.art.output)
        return m.group(1)

    # The launcher's checks of a dynamically linked binary are tested whatever this
    # build made: on a static binary's package, with the requires file of a dynamic one.
    DYNAMIC_REQUIRES = "glibc=2.34\nloader=/lib64/ld-linux-x86-64.so.2\n"

    def dynamic(self):
        """The glibc a dynamic binary needs, and the requires file to give it (None:
        the package's own)."""
        glibc = self.glibc()
        return (glibc, None) if glibc else ("2.34", self.DYNAMIC_REQUIRES)

    def test_the_npm_launcher_names_what_is_supported_on_another_machine(self):
        prefix = self.npm_install("npm-darwin")
        p = self.launcher_refuses(prefix, {"uname": "echo Darwin arm64"})
        self.assertRefused(p, "there is no binary for darwin-arm64 (Darwin arm64)",
                           self.glibc())

    def test_the_npm_launcher_refuses_an_older_glibc(self):
        prefix = self.npm_install("npm-old-glibc")
        glibc, requires = self.dynamic()
        p = self.launcher_refuses(prefix, {"getconf": "echo glibc 2.17"}, requires)
        self.assertRefused(p, "needs glibc %s or later, and this system has glibc 2.17"
                           % glibc, glibc)
        # The same glibc as required, or a newer minor with fewer digits, runs.
        for have in (glibc, "3.0"):
            p = self.launcher_refuses(prefix, {"getconf": "echo glibc " + have})
            self.assertEqual(p.returncode, 0, have + ": " + p.stderr)

    def test_the_npm_launcher_refuses_a_system_without_glibc(self):
        prefix = self.npm_install("npm-musl")
        glibc, _ = self.dynamic()
        p = self.launcher_refuses(prefix, {"getconf": "exit 1"},
                                  requires="glibc=%s\nloader=/lib/ld-nonexistent.so.2\n"
                                  % glibc)
        self.assertRefused(p, "and this system has none (no /lib/ld-nonexistent.so.2", glibc)

    def test_the_npm_launcher_runs_a_static_binary_whatever_the_c_library(self):
        if not self.static():
            self.skipTest("agentrun-static is linked dynamically here (no -static-pie)")
        prefix = self.npm_install("npm-static")
        asked = os.path.join(prefix, "getconf-ran")
        # An old glibc, none (musl: no getconf answer), a new one: the launcher does
        # not even ask (one process fewer per call).
        for answer in ("echo glibc 2.17", "exit 1", "echo glibc 9.99"):
            p = self.launcher_refuses(prefix, {"getconf": "touch %s; %s" % (asked, answer)})
            self.assertEqual(p.returncode, 0, answer + ": " + p.stderr)
            self.assertTrue(p.stdout.startswith("agentrun %s " % self.art.version), p.stdout)
            self.assertFalse(os.path.exists(asked), answer)

    def test_what_the_binary_needs_is_what_the_docs_say(self):
        glibc = self.glibc()
        for rel in ("docs/install.md", "scripts/npm/README.md"):
            with open(os.path.join(rt.SOURCE_ROOT, rel)) as f:
                text = " ".join(f.read().split())
            if glibc:  # the docs describe the static release binary
                self.assertIn("glibc %s or later" % glibc, text,
                              "%s: this build's agentrun-static is linked dynamically" % rel)
                text = text.replace("glibc %s or later" % glibc, "")
            else:
                self.assertIn("Linux x86-64 with any C library (glibc or musl)", text, rel)
            self.assertNotRegex(text, r"glibc \d+\.\d+ or later", rel)


class Versions(unittest.TestCase):
    """One version, from meson.build, everywhere it is written."""

    @classmethod
    def setUpClass(cls):
        cls.root = rt.ROOT
        cls.art = rt.ART

    def test_artifacts_binary_header_and_pkg_config_agree(self):
        v = self.art.version
        self.assertRegex(v, r"^\d+\.\d+\.\d+$")
        self.assertTrue(os.path.isfile(self.art.tarball), os.listdir(self.art.dist))
        with tarfile.open(self.art.npm) as tar:
            manifest = json.load(tar.extractfile("package/package.json"))
        self.assertEqual(manifest["version"], v)
        p = subprocess.run([rt.static_binary(), "--version"], capture_output=True, text=True)
        self.assertTrue(p.stdout.startswith("agentrun %s (" % v), p.stdout)
        with open(os.path.join(rt.BUILD_ROOT, "include", "agentrun", "version.h")) as f:
            header = f.read()
        self.assertIn('#define AR_VERSION_STRING "%s"' % v, header)
        major, minor, patch = v.split(".")
        self.assertIn("#define AR_VERSION_MAJOR %s\n" % major, header)
        self.assertIn("#define AR_VERSION_MINOR %s\n" % minor, header)
        self.assertIn("#define AR_VERSION_PATCH %s\n" % patch, header)
        with open(os.path.join(rt.BUILD_ROOT, "meson-private", "agentrun.pc")) as f:
            self.assertIn("\nVersion: %s\n" % v, f.read())
        with open(os.path.join(self.art.dist, "SHA256SUMS")) as f:
            self.assertEqual(sorted(l.split()[1] for l in f),
                             sorted(map(os.path.basename, (self.art.tarball, self.art.npm))))

    def test_a_build_from_git_names_its_commit_unless_it_is_the_release_tag(self):
        p = subprocess.run(["git", "--git-dir", os.path.join(rt.SOURCE_ROOT, ".git"),
                            "--work-tree", rt.SOURCE_ROOT, "describe", "--tags", "--always",
                            "--dirty", "--match", "v[0-9]*"], capture_output=True, text=True)
        if p.returncode != 0:
            self.skipTest("the source tree is not a git checkout")
        first = "agentrun %s (" % self.art.version
        for exe in (os.environ["AGENTRUN"], rt.static_binary()):
            lines = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                   check=True).stdout.splitlines()
            self.assertTrue(lines[0].startswith(first), lines)
            if p.stdout.strip() == "v" + self.art.version:
                self.assertEqual(len(lines), 1, lines)
            else:
                self.assertEqual(lines[1:], ["development build: git " + p.stdout.strip()])

    def test_the_changelog_has_a_section_for_this_version_or_it_is_the_next(self):
        with open(os.path.join(rt.SOURCE_ROOT, "CHANGELOG.md")) as f:
            text = f.read()
        released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", text, re.M)
        self.assertTrue(released)
        key = lambda s: tuple(map(int, s.split(".")))
        v = self.art.version
        if v not in released:
            # Not released yet: the unreleased section is v, above every release.
            self.assertIn("\n## [Unreleased]\n", text)
            self.assertGreater(key(v), max(map(key, released)))
        self.assertEqual(released, sorted(released, key=key, reverse=True))

    def test_packaging_twice_gives_the_same_bytes(self):
        again = rt.Artifacts(os.path.join(self.root, "again"))
        with open(os.path.join(self.art.dist, "SHA256SUMS")) as a, \
                open(os.path.join(again.dist, "SHA256SUMS")) as b:
            self.assertEqual(a.read(), b.read())


if __name__ == "__main__":
    rt.skip_unless_releasable()
    unittest.main()
