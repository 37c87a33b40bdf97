"""Request bytes and wall time per call, before and after the posture (issue 13), for the
real claude, codex and gemini CLIs against the loopback mock (tests/e2e/mockapi.py).

For each CLI and command (review of a small diff, prioritize, route, run) agentrun runs the
call with its posture; a wrapper saves the prompt it sent. "before" is the same CLI with the
same prompt and the argv agentrun used before issue 13 (the CLI's whole agent, a trusted
workspace for gemini). Printed: the bytes of the first model request, of every request of
the call (gemini's router call included), the number of requests, and the wall time.
Exits 77 (skipped) without node or the CLIs."""
import os
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The same mock answers, commands and agentrun as the request-bytes benchmark.
import bench_requests  # noqa: E402
from bench_requests import AGENTRUN  # noqa: E402
import harness  # noqa: E402  (bench_requests put tests/e2e on the path)
from harness import Mock, RunRoot  # noqa: E402

# The argv of agentrun before issue 13 (after the binary; the prompt goes on stdin).
BEFORE = {
    "claude": ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode",
               "default"],
    "codex": ["exec", "--json", "--sandbox", "read-only"],
    "gemini": ["-o", "stream-json", "--approval-mode", "default"],
}

WRAPPER = """#!/bin/sh
# Saves the prompt agentrun sends, then runs the real CLI with it.
cat > "$BENCH_PROMPT"
printf '%s\\n' "$@" > "$BENCH_ARGV"
exec "$BENCH_REAL" "$@" < "$BENCH_PROMPT"
"""


def commands(cli):
    """review of a small diff, prioritize, route and a read run, as bench_requests runs
    them (its review has four chunks and it adds an edit run)."""
    by_name = {name: (steps, args) for name, steps, args in bench_requests.commands(cli)}
    return [
        ("review", [dict(by_name["review"][0][0], times=1)], ["review", "--format", "json"]),
        ("prioritize",) + by_name["prioritize"],
        ("route",) + by_name["route"],
        ("run",) + by_name["run (read)"],
    ]


def measure(mock, since, cli):
    reqs = [r for r in mock.requests()[since:] if r.get("body_file") and r["method"] == "POST"]
    main = [r for r in reqs if r["api"] == cli and not r.get("side")]
    sizes = [len(mock.body(r)) for r in reqs]
    return (len(mock.body(main[0])) if main else 0), sum(sizes), len(reqs)


def main():
    harness.require_clis()
    mock = Mock().start()
    root = RunRoot(mock.port)
    work = root.work
    bench_requests.setup(root)
    # The review's small diff: one line of app.c.
    with open(os.path.join(work, "app.c"), "w") as f:
        f.write("int main(void) { return 1; }\n")
    wrapper = os.path.join(root.root, "wrapper")
    with open(wrapper, "w") as f:
        f.write(WRAPPER)
    os.chmod(wrapper, stat.S_IRWXU)
    prompt_file = os.path.join(root.root, "prompt")
    rows = []
    try:
        for cli in harness.CLIS:
            for name, steps, args in commands(cli):
                e = root.agentrun_env()
                e.update({"AGENTRUN_%s_BIN" % cli.upper(): wrapper, "BENCH_REAL":
                          harness.cli_path(cli), "BENCH_PROMPT": prompt_file,
                          "BENCH_ARGV": os.path.join(root.root, "argv")})
                mock.set_script({cli: steps})
                since = len(mock.requests())
                t0 = time.time()
                p = subprocess.run([AGENTRUN, *args, "-p", cli, "--timeout", "120s"], cwd=work,
                                   env=e, capture_output=True, text=True, timeout=300)
                after_t = time.time() - t0
                if p.returncode not in (0, 1):
                    sys.stderr.write("%s %s: exit %d\n%s\n" % (cli, name, p.returncode,
                                                              p.stderr[-2000:]))
                after = measure(mock, since, cli)
                with open(os.path.join(root.root, "argv")) as f:
                    after_argv = f.read().split("\n")
                # The same call the way agentrun made it before: the whole agent.
                before_argv = list(BEFORE[cli])
                if "--json-schema" in after_argv:
                    i = after_argv.index("--json-schema")
                    before_argv += ["--json-schema", after_argv[i + 1]]
                if cli == "codex":
                    before_argv.append("-")
                with open(prompt_file, "rb") as f:
                    prompt = f.read()
                mock.set_script({cli: steps})
                since = len(mock.requests())
                r = harness.run_cli(cli, before_argv, root, stdin=prompt, timeout=300,
                                    env=root.env(cli))
                before = measure(mock, since, cli)
                rows.append((cli, name, before, r.duration, after, after_t))
                harness.kill_leftovers(root)
    finally:
        harness.kill_leftovers(root)
        mock.cleanup()
        root.cleanup()
    print("request bytes per call at the mock (first model request / all requests, "
          "number of requests) and wall time, before and after issue 13")
    print("%-7s %-10s %28s %28s %7s %9s %9s" % ("cli", "command", "before", "after",
                                               "ratio", "before_s", "after_s"))
    for cli, name, b, bt, a, at in rows:
        print("%-7s %-10s %10d / %8d (%d req) %10d / %8d (%d req) %6.1fx %8.2fs %8.2fs" % (
            cli, name, b[0], b[1], b[2], a[0], a[1], a[2], b[0] / a[0] if a[0] else 0, bt, at))
    return 0


if __name__ == "__main__":
    sys.exit(main())
