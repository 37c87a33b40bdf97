"""Benchmark: edit jobs in worktrees of their own run side by side (issue 30).

Eight edit jobs of one repository at -j 4, each writing its own file, through `agentrun
batch --worktrees --commit`, against one such job alone: the wall time of the eight should
be close to two rounds of one job, not eight. Without --worktrees the same eight jobs run
one at a time in the checkout (shown for contrast).

With the real claude, codex and gemini CLIs against the loopback mock (each model
request held DELAY seconds, so the model's time dominates as it does in real use), when
they are installed; and with the fake CLI sleeping the same time, which leaves only
agentrun's own cost: the git work of a worktree per job. Prints the times, the ratio
eight/one and agentrun's worktree overhead per job. Targets: with the fake CLI (agentrun's
part alone) under 2.5, close to two rounds; with a real CLI under 4, and under half the
in-place ratio (the CLIs' own start costs CPU seconds: four node processes at once on a
shared 2-core machine are slower than one). Exits 1 when a target is missed.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT",
                             os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "e2e"))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ["AGENTRUN"]
FAKE_BIN_DIR = os.environ.get("FAKE_BIN_DIR", "")
FIXTURE = os.path.join(SOURCE_ROOT, "tests", "fixtures", "claude", "json-text.json")
JOBS, PAR, DELAY = 8, 4, 3.0
TARGET_FAKE, TARGET_REAL = 2.5, 4.0


def mark(i):
    return "[job %s]" % i


def jobs_file(d, n, tag):
    path = os.path.join(d, "jobs-%s-%d.jsonl" % (tag, n))
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": "%s%d" % (tag, i), "allow_edits": True,
                                "prompt": "%s Write f%d.txt.\nWRITE f%d.txt=job %d"
                                % (mark("%s%d" % (tag, i)), i, i, i)}) + "\n")
    return path


def timed(args, cwd, env):
    t = time.monotonic()
    p = subprocess.run([AGENTRUN, *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=900)
    took = time.monotonic() - t
    bad = [json.loads(l)["error"] for l in p.stdout.splitlines()
           if l.strip() and not json.loads(l)["ok"]]
    if p.returncode != 0 or bad:
        raise RuntimeError("agentrun %s: exit %d, %s\n%s" % (" ".join(args[:6]), p.returncode,
                                                             bad[:2], p.stderr[-1500:]))
    return took


def measure(name, work, env, tmp, provider_args, script=None):
    """(one job, eight jobs side by side, eight jobs in place) in seconds."""
    def run(n, tag, worktrees):
        if script:
            script(n, tag)
        args = ["batch", *provider_args, "-j", str(PAR), "--timeout", "300s"]
        if worktrees:
            args += ["--worktrees", "--commit"]
        return timed(args + [jobs_file(tmp, n, tag)], work, env)
    one = run(1, "a", True)
    eight = run(JOBS, "b", True)
    in_place = run(JOBS, "c", False)
    ratio = eight / one
    measure.in_place[name] = in_place / one
    print("worktrees %s: 1 job %.2f s; %d jobs -j %d with --worktrees %.2f s (%.2f x one job); "
          "in place, one at a time %.2f s (%.2f x)" % (name, one, JOBS, PAR, eight, ratio,
                                                        in_place, in_place / one))
    return one, eight, ratio


measure.in_place = {}


def fake():
    with tempfile.TemporaryDirectory() as d:
        work = os.path.join(d, "work")
        os.mkdir(work)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CLI_", "AGENTRUN_"))}
        env.update(AGENTRUN_CLAUDE_BIN=os.path.join(FAKE_BIN_DIR, "claude"),
                   FAKE_CLI_FIXTURE=FIXTURE, FAKE_CLI_WRITE_FROM_STDIN="1",
                   FAKE_CLI_SLEEP_MS=str(int(DELAY * 1000)),
                   AGENTRUN_WORKTREE_DIR=os.path.join(d, "trees"),
                   GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")
        for cmd in (["git", "init", "-q", "-b", "main"], ["git", "commit", "-q", "--allow-empty",
                                                          "-m", "init"]):
            subprocess.run(cmd, cwd=work, env=env, check=True)
        one, eight, ratio = measure("(fake CLI)", work, env, d, ["-p", "claude"])
        # What a worktree costs agentrun per job: the rounds minus the CLIs' own time.
        overhead = (eight - 2 * DELAY) / JOBS * PAR
        print("worktrees (fake CLI): git work per job about %.0f ms (make, commit, remove)"
              % (overhead * 1000 / PAR))
        return ratio


def real(cli):
    mock = Mock().start()
    root = RunRoot(mock.port)
    try:
        env = root.agentrun_env()
        env["AGENTRUN_WORKTREE_DIR"] = os.path.join(root.root, "trees")

        def script(n, tag):
            steps = []
            for i in range(n):
                m = mark("%s%d" % (tag, i))
                steps += [{"kind": "tool_write", "path": "f%d.txt" % i, "content": "job %d\n" % i,
                           "match": m, "delay": DELAY},
                          {"kind": "text", "text": "Done.", "match": m}]
            mock.set_script({cli: steps})
        model = ["-m", "gemini-2.5-pro"] if cli == "gemini" else []
        return measure(cli, root.work, env, root.root, ["-p", cli, *model], script)[2]
    finally:
        harness.kill_leftovers(root)
        root.cleanup()
        mock.cleanup()


def main():
    ratios = {"fake": fake()}
    missing = harness.missing_clis()
    if missing:
        print("worktrees: the real CLIs are missing (%s): only the fake CLI measured"
              % ", ".join(missing))
    else:
        for cli in harness.CLIS:
            ratios[cli] = real(cli)
    ok = ratios["fake"] < TARGET_FAKE and all(
        r < TARGET_REAL and r < measure.in_place[cli] / 2 for cli, r in ratios.items()
        if cli != "fake")
    print("worktrees: %d jobs at -j %d take %s one job's time (targets: fake CLI < %.1f, "
          "real CLIs < %.1f and < half the in-place time): %s"
          % (JOBS, PAR, ", ".join("%s %.2fx" % kv for kv in ratios.items()), TARGET_FAKE,
             TARGET_REAL, "met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
