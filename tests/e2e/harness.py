"""Helpers for the e2e tests: the loopback mock, isolated run roots, per-CLI environments.

See tests/e2e/README.md. Standard library only.

    from harness import Mock, RunRoot, require_clis, cli_path, run_cli, leftover_processes

    require_clis()                       # exit 77 (skip) if node/CLIs are missing; fail under CI
    mock = Mock({"claude": [{"kind": "text", "text": "hi"}]}); mock.start()
    root = RunRoot(mock.port)            # temp dir: home/, home/.codex/config.toml, tmp/, work/ (git)
    env = root.env("claude")             # env for running the claude CLI directly
    env = root.agentrun_env()            # env for running agentrun (all three CLIs configured)
    r = run_cli("claude", ["-p", "--output-format", "stream-json", "--verbose"], root, stdin="hi")
    mock.requests("claude")              # logged requests (dicts), mock.body(req) -> bytes
    leftover_processes(root)             # PIDs still alive that belong to the run root
    root.cleanup(); mock.stop()
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MOCKAPI = os.environ.get("AGENTRUN_E2E_MOCKAPI") or os.path.join(HERE, "mockapi.py")
SKIP = 77
CLIS = ("claude", "codex", "gemini")

CODEX_MODEL = "gpt-5.5"


def bin_dir():
    """Where the pinned CLIs live: $AGENTRUN_E2E_BIN_DIR, else the .ci/run cache."""
    d = os.environ.get("AGENTRUN_E2E_BIN_DIR")
    if d:
        return d
    # The user's home from the password database: the suites' HOME is a scratch folder
    # of the build (tests/meson.build).
    import pwd
    home = pwd.getpwuid(os.getuid()).pw_dir
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return os.path.join(cache, "agentrun-e2e", "node_modules", ".bin")


def cli_path(name):
    return os.path.join(bin_dir(), name)


def node_dir():
    """Directory holding `node` (codex and gemini are node scripts)."""
    p = shutil.which("node")
    return os.path.dirname(p) if p else None


def missing_clis(names=CLIS):
    miss = []
    if not node_dir():
        miss.append("node")
    for n in names:
        if not os.access(cli_path(n), os.X_OK):
            miss.append(cli_path(n))
    return miss


def require_clis(names=CLIS):
    """Exit 77 (meson: skipped) when node or a CLI is missing; exit 1 instead when $CI is set."""
    miss = missing_clis(names)
    if not miss:
        return
    msg = "e2e: missing %s (set AGENTRUN_E2E_BIN_DIR; .ci/run installs them)" % ", ".join(miss)
    if os.environ.get("CI"):
        sys.stderr.write(msg + " -- CI is set, so this is a failure\n")
        sys.exit(1)
    sys.stderr.write(msg + " -- skipping\n")
    sys.exit(SKIP)


# --------------------------------------------------------------------------- mock

class Mock:
    """The loopback mock API server (mockapi.py) in its own process.

    Mock(script=None, log_dir=None).start() -> self; .port, .pid, .base_url
    .set_script(script)   replace the script (queues restart)
    .requests(api=None, side=None) the logged requests; .body(entry) their bytes
    .stop()               SIGTERM, then SIGKILL after 3 s; idempotent
    """

    def __init__(self, script=None, log_dir=None):
        self.script = script or {}
        self._own_dir = log_dir is None
        self.log_dir = log_dir or tempfile.mkdtemp(prefix="agentrun-mock-")
        self.proc = None
        self.port = None
        self.pid = None

    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        os.makedirs(self.log_dir, exist_ok=True)
        script_file = os.path.join(self.log_dir, "script.json")
        with open(script_file, "w") as f:
            json.dump(self.script, f)
        port_file = os.path.join(self.log_dir, "port.json")
        with open(os.path.join(self.log_dir, "mock.stderr"), "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, MOCKAPI, "--script", script_file, "--log-dir", self.log_dir,
                 "--port-file", port_file, "--exit-with-parent"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + 10
        while time.time() < deadline:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    info = json.load(f)
                self.port, self.pid = info["port"], info["pid"]
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        with open(os.path.join(self.log_dir, "mock.stderr")) as f:
            raise RuntimeError("mockapi did not start: " + f.read())

    def _call(self, method, path, body=None):
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request(method, path, body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def set_script(self, script):
        self.script = script
        st, data = self._call("POST", "/_mock/script", json.dumps(script).encode())
        if st != 200:
            raise RuntimeError("set_script: %s %r" % (st, data))

    def requests(self, api=None, side=None):
        """Logged requests, oldest first. api: claude|codex|gemini|other; side: True/False
        filters the helper calls (claude HEAD probe is method HEAD; gemini router/title/
        countTokens are side=True)."""
        out = []
        path = os.path.join(self.log_dir, "requests.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    if line.strip():
                        out.append(json.loads(line))
        if api:
            out = [e for e in out if e["api"] == api]
        if side is not None:
            out = [e for e in out if bool(e.get("side")) == side and e["method"] == "POST"]
        return out

    def model_requests(self, api):
        """The scripted requests of api (the ones that consumed a step or found none)."""
        return [e for e in self.requests(api) if e["method"] == "POST" and not e.get("side")]

    def body(self, entry):
        with open(os.path.join(self.log_dir, entry["body_file"]), "rb") as f:
            return f.read()

    def body_json(self, entry):
        return json.loads(self.body(entry))

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(3)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None

    def cleanup(self):
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.log_dir, ignore_errors=True)


# --------------------------------------------------------------------------- run root

GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                "maxAttempts": 1},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


def codex_config(port, model=CODEX_MODEL):
    return """model_provider = "mock"
model = "%s"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:%d/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
""" % (model, port)


class RunRoot:
    """An isolated directory tree for one run of a CLI (or of agentrun):

      ROOT/home              HOME (claude's ~/.claude*, gemini's ~/.gemini/settings.json)
      ROOT/home/.codex       CODEX_HOME with config.toml (provider "mock" -> the mock)
      ROOT/tmp               TMPDIR
      ROOT/work              cwd: a git repository with one commit (README)

    ROOT lives under $AGENTRUN_E2E_TMP, else /var/tmp (not /tmp: codex refuses to put its
    helper binaries under a CODEX_HOME inside the temp dir and warns).
    """

    def __init__(self, port, base=None, retries=False, gemini_settings=None):
        base = base or os.environ.get("AGENTRUN_E2E_TMP") or (
            "/var/tmp" if os.access("/var/tmp", os.W_OK) else None)
        self.root = tempfile.mkdtemp(prefix="agentrun-e2e-", dir=base)
        self.port = port
        self.home = os.path.join(self.root, "home")
        self.codex_home = os.path.join(self.home, ".codex")
        self.tmp = os.path.join(self.root, "tmp")
        self.work = os.path.join(self.root, "work")
        for d in (self.home, self.codex_home, self.tmp, self.work,
                  os.path.join(self.home, ".gemini")):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(self.codex_home, "config.toml"), "w") as f:
            f.write(codex_config(port))
        settings = json.loads(json.dumps(GEMINI_SETTINGS))
        if gemini_settings:
            settings.update(gemini_settings)
        with open(os.path.join(self.home, ".gemini", "settings.json"), "w") as f:
            json.dump(settings, f, indent=2)
        self._git_init()

    def _git_init(self):
        genv = dict(self.base_env(), GIT_AUTHOR_NAME="e2e", GIT_AUTHOR_EMAIL="e2e@example.invalid",
                    GIT_COMMITTER_NAME="e2e", GIT_COMMITTER_EMAIL="e2e@example.invalid")
        with open(os.path.join(self.work, "README"), "w") as f:
            f.write("e2e work tree\n")
        for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "README"],
                    ["git", "commit", "-q", "-m", "init"]):
            subprocess.run(cmd, cwd=self.work, env=genv, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def base_env(self):
        """The environment every CLI gets (env -i style: nothing of the caller's but PATH)."""
        path = [bin_dir()]
        nd = node_dir()
        if nd:
            path.append(nd)
        path += ["/usr/local/bin", "/usr/bin", "/bin"]
        seen, parts = set(), []
        for p in path:
            if p not in seen:
                seen.add(p)
                parts.append(p)
        return {
            "PATH": ":".join(parts),
            "HOME": self.home,
            "TMPDIR": self.tmp,
            "LANG": "C.UTF-8",
            "USER": os.environ.get("USER", "root"),
            "SHELL": "/bin/bash",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }

    def env(self, cli):
        """The full environment for running the real `cli` directly against the mock."""
        e = self.base_env()
        url = "http://127.0.0.1:%d" % self.port
        if cli == "claude":
            e.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-mock",
                     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                     DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                     CLAUDE_CODE_MAX_RETRIES="0")
        elif cli == "codex":
            e.update(CODEX_HOME=self.codex_home, MOCK_API_KEY="sk-mock")
        elif cli == "gemini":
            e.update(GOOGLE_GEMINI_BASE_URL=url, GEMINI_API_KEY="mock-key",
                     GEMINI_CLI_TRUST_WORKSPACE="true")
        else:
            raise ValueError(cli)
        return e

    def agentrun_env(self):
        """The environment for running agentrun itself: all three CLIs configured against
        the mock, AGENTRUN_{CLAUDE,CODEX,GEMINI}_BIN set to the pinned CLIs. agentrun passes
        its environment through to the child CLI."""
        e = {}
        for cli in CLIS:
            e.update(self.env(cli))
        for cli in CLIS:
            e["AGENTRUN_%s_BIN" % cli.upper()] = cli_path(cli)
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if k in os.environ:
                e[k] = os.environ[k]
        return e

    def git_status(self):
        return subprocess.run(["git", "status", "--porcelain"], cwd=self.work,
                              env=self.base_env(), capture_output=True, text=True).stdout

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


# --------------------------------------------------------------------------- running

class Result:
    def __init__(self, argv, status, stdout, stderr, duration):
        self.argv, self.status, self.stdout, self.stderr = argv, status, stdout, stderr
        self.duration = duration
        self.survivors = []

    def jsonl(self):
        return [json.loads(l) for l in self.stdout.decode().splitlines() if l.strip()]

    def __repr__(self):
        return "Result(status=%r, stdout=%r..., stderr=%r...)" % (
            self.status, self.stdout[:300], self.stderr[-600:])


def run_cli(cli, args, root, stdin=b"", timeout=120, env=None, cwd=None, signal_after=None,
            sig=signal.SIGTERM, wait_for=None, signal_group=False, wait_after_signal=None):
    """Run the real `cli` with args in root.work, prompt bytes on stdin (a file, never a
    pipe left open), stdout and stderr to regular files (the CLIs lose piped output).
    The CLI runs in its own session (process group); on timeout or at the end the whole
    group is SIGKILLed so nothing is left behind.

    signal_after: seconds after start to send `sig` to the CLI's PID (to its process group
    with signal_group=True); wait_for: a callable polled until true before the signal
    timer starts (e.g. lambda: mock.model_requests("claude")); wait_after_signal: give
    up (status "timeout") that many seconds after the signal instead of at `timeout`.
    Returns Result(argv, status, stdout bytes, stderr bytes, duration, survivors); status
    is the exit status, -N when killed by signal N, or "timeout"; survivors lists the
    (pid, cmdline) of the CLI's process group still alive when the CLI itself had exited
    (they are SIGKILLed afterwards).
    """
    if isinstance(stdin, str):
        stdin = stdin.encode()
    argv = [cli_path(cli)] + list(args)
    fd_dir = tempfile.mkdtemp(prefix="io-", dir=root.root)
    paths = {n: os.path.join(fd_dir, n) for n in ("stdin", "stdout", "stderr")}
    with open(paths["stdin"], "wb") as f:
        f.write(stdin)
    with open(paths["stdin"], "rb") as fi, open(paths["stdout"], "wb") as fo, \
            open(paths["stderr"], "wb") as fe:
        t0 = time.time()
        p = subprocess.Popen(argv, cwd=cwd or root.work, env=env or root.env(cli), stdin=fi,
                             stdout=fo, stderr=fe, start_new_session=True)
        # The CLI is reaped only after its group was killed: its zombie keeps its pid, and so
        # its group id, taken until then, so the group kill can never reach a process that
        # got the number afterwards (pid_max is 32768 here and pids wrap in minutes when the
        # machine is busy: a kill after the reap could end another test's process).
        done = False
        try:
            if signal_after is not None or wait_for is not None:
                end = time.time() + timeout
                if wait_for is not None:
                    while not wait_for() and time.time() < end and not exited(p):
                        time.sleep(0.05)
                if signal_after:
                    time.sleep(signal_after)
                if not exited(p):
                    if signal_group:
                        os.killpg(p.pid, sig)
                    else:
                        p.send_signal(sig)
                limit = max(1, end - time.time())
                if wait_after_signal is not None:
                    limit = min(limit, wait_after_signal)
                done = wait_exited(p, limit)
            else:
                done = wait_exited(p, timeout)
        finally:
            survivors = group_members(p.pid) if exited(p) else []
            kill_group(p.pid)
            status = p.wait()
            end = time.time() + 5
            while group_members(p.pid) and time.time() < end:  # let SIGKILLed ones die
                time.sleep(0.02)
        if not done:
            status = "timeout"
        dur = time.time() - t0
    with open(paths["stdout"], "rb") as f:
        out = f.read()
    with open(paths["stderr"], "rb") as f:
        err = f.read()
    shutil.rmtree(fd_dir, ignore_errors=True)
    r = Result(argv, status, out, err, dur)
    r.survivors = survivors
    return r


def exited(p):
    """True once the Popen p has exited, which leaves it unreaped (a zombie): its pid and
    group id stay taken until p.wait() reaps it."""
    if p.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def wait_exited(p, timeout):
    """Waits up to timeout seconds for p to exit, without reaping it. True when it did."""
    end = time.time() + timeout
    while not exited(p):
        if time.time() >= end:
            return False
        time.sleep(0.02)
    return True


def group_members(pgid):
    """(pid, cmdline) of live, non-zombie processes in process group pgid."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z" or int(fields[2]) != pgid:
                continue
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                out.append((int(pid), f.read().replace(b"\0", b" ").decode(errors="replace").strip()))
        except (OSError, IndexError, ValueError):
            continue
    return out


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def leftover_processes(root):
    """PIDs (with cmdlines) of live processes that belong to the run root: their
    environment names root's HOME, or their cmdline or cwd mentions the root directory."""
    mark = root.root if isinstance(root, RunRoot) else str(root)
    home = ("HOME=" + os.path.join(mark, "home")).encode()
    out = []
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        base = "/proc/" + pid
        try:
            with open(base + "/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(base + "/cmdline", "rb") as f:
                cmd = f.read()
            hit = mark.encode() in cmd
            if not hit:
                try:
                    with open(base + "/environ", "rb") as f:
                        hit = home in f.read().split(b"\0")
                except OSError:
                    pass
            if not hit:
                try:
                    hit = os.readlink(base + "/cwd").startswith(mark)
                except OSError:
                    pass
            if hit:
                out.append((int(pid), cmd.replace(b"\0", b" ").decode(errors="replace").strip()))
        except (OSError, IndexError):
            continue
    return out


def kill_leftovers(root):
    """SIGKILL whatever leftover_processes(root) finds (cleanup after a failed test)."""
    for pid, _ in leftover_processes(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
