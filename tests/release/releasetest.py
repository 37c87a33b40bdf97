"""What the release tests share: the artifacts scripts/package makes of the build
under test, the fake CLI copied out of the build, a git work tree with a change to
review, and commands run under `env -i` with a PATH that holds nothing of the build
or the source tree, as on a machine that only downloaded agentrun.
"""
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from clitest import claude_stream  # noqa: E402

BUILD_ROOT = os.path.realpath(os.environ.get("AGENTRUN_BUILD_ROOT", "build"))
SOURCE_ROOT = os.path.realpath(os.environ.get("AGENTRUN_SOURCE_ROOT", "."))
FAKE_CLI = os.environ.get("FAKE_CLI", "")
SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"]


def static_binary():
    """The build's agentrun-static, or None when this build has none."""
    with open(os.path.join(BUILD_ROOT, "meson-info", "intro-targets.json")) as f:
        targets = json.load(f)
    for t in targets:
        if t["name"] == "agentrun-static" and os.path.isfile(t["filename"][0]):
            return t["filename"][0]
    return None


def skip_unless_releasable():
    """Exit 77 (meson: skipped) when this build or machine cannot make the release
    artifacts: no agentrun-static, or no npm, binutils or dpkg. Under CI, where the
    release is what users get, that is a failure instead; a sanitized build has no
    release binary by design and is always skipped."""
    with open(os.path.join(BUILD_ROOT, "meson-info", "intro-buildoptions.json")) as f:
        opts = {o["name"]: o["value"] for o in json.load(f)}
    if opts.get("b_sanitize", "none") != "none":
        print("SKIP: a sanitized build makes no release binary; the plain build tests it")
        sys.exit(77)
    missing = [t for t in ("npm", "readelf", "objdump", "nm", "dpkg-query")
               if not shutil.which(t)]
    if not static_binary():
        missing.insert(0, "agentrun-static (no libuv_a.a/libuv.a or libjansson.a, or "
                          "-Dstatic_cli=disabled)")
    if (not missing and os.environ.get("CI") and platform.machine() == "x86_64" and
            os.path.exists("/etc/debian_version") and
            os.environ.get("AGENTRUN_RELEASE_LIBC") != "musl"):
        sys.exit("release tests: under CI on Debian x86-64 the release binary is built against "
                 "musl, and this build's is not (scripts/bootstrap runs scripts/musl-deps and "
                 "sets -Dmusl_deps)")
    if not missing:
        return
    why = "cannot make the release artifacts here: no " + ", no ".join(missing)
    if os.environ.get("CI"):
        sys.exit("release tests: " + why)
    print("SKIP: " + why)
    sys.exit(77)


class Artifacts:
    """scripts/package run on the build under test, into root/dist."""

    def __init__(self, root):
        self.dist = os.path.join(root, "dist")
        p = subprocess.run([sys.executable, os.path.join(SOURCE_ROOT, "scripts", "package"),
                            BUILD_ROOT, self.dist], capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            raise AssertionError("scripts/package failed:\n" + p.stdout + p.stderr)
        self.output = p.stdout
        with open(os.path.join(BUILD_ROOT, "meson-info", "intro-projectinfo.json")) as f:
            self.version = json.load(f)["version"]
        self.tarball = os.path.join(self.dist, "agentrun-%s-linux-x86_64.tar.gz" % self.version)
        self.npm = os.path.join(self.dist, "agentrun-%s.tgz" % self.version)


ART = None      # the Artifacts of this test module (setUpModule), made once
ROOT = None     # the temporary directory they and the tests' files live in


def setUpModule():
    """Imported by each test module: package once, before its first test."""
    global ART, ROOT
    ROOT = tempdir("release")
    ART = Artifacts(ROOT)


def tearDownModule():
    shutil.rmtree(ROOT, ignore_errors=True)


def fake_clis(root):
    """claude, codex and gemini: copies of the fake CLI outside the build."""
    d = os.path.join(root, "fake-bin")
    os.makedirs(d)
    for name in ("claude", "codex", "gemini"):
        shutil.copy2(FAKE_CLI, os.path.join(d, name))
    return d


def outside_the_build(path):
    """Whether path is none of the build's or the source tree's: the suite's own scratch
    folder (tests/meson.build: TMPDIR and HOME of every test) holds only what a test put
    there, so it counts as outside."""
    real = os.path.realpath(path)
    scratch = os.path.realpath(os.path.join(BUILD_ROOT, "tests", "scratch"))
    if real.startswith(scratch + os.sep):
        return True
    return not any(real == r or real.startswith(r + os.sep) for r in (BUILD_ROOT, SOURCE_ROOT))


def clean_run(argv, path, cwd, env=(), timeout=60, input=None):
    """argv under `env -i` with PATH=path (a list of directories) and env (pairs)."""
    for d in path:
        assert outside_the_build(d), d + " is inside the build or the source tree"
    cmd = ["env", "-i", "PATH=" + ":".join(path)] + ["%s=%s" % kv for kv in env] + argv
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          input=input)


def git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def work_tree_with_a_change(root):
    """A repository whose last commit dereferences a null pointer in app.c."""
    work = os.path.join(root, "work")
    os.makedirs(work)
    git(work, "init", "-q", ".")
    with open(os.path.join(work, "app.c"), "w") as f:
        f.write("int main(void)\n{\n    return 0;\n}\n")
    git(work, "add", "app.c")
    git(work, "commit", "-q", "-m", "app")
    with open(os.path.join(work, "app.c"), "w") as f:
        f.write("int main(void)\n{\n    char *p = 0;\n    return *p;\n}\n")
    git(work, "commit", "-q", "-am", "deref")
    return work


def review_answer(root, issues):
    """A fixture file: claude's stream with a review answer holding issues."""
    text = "```json\n" + json.dumps({"passed": not issues, "summary": "read it",
                                     "issues": issues}) + "\n```"
    path = os.path.join(root, "answer-%d.jsonl" % len(os.listdir(root)))
    with open(path, "w") as f:
        f.write(claude_stream(text))
    return path


NULL_DEREF = {"file": "app.c", "line": 4, "severity": "high",
              "message": "dereferences a null pointer"}


def tempdir(name):
    return tempfile.mkdtemp(prefix="agentrun-%s-" % name)
