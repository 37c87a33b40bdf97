"""Benchmark: what change detection costs per call in a 50,000-file repository (issue 22).

A repository of 50,000 committed files (500 directories of 100) is generated in a
temporary directory with `git fast-import` and checked out, plus a few untracked
files. With a fake CLI that answers at once, it prints side by side:

- `git status` alone (the scan a snapshot is made of) and the CLI alone;
- `agentrun run` (a read call: no snapshots by default), target: at most 5 ms over the CLI;
- `agentrun run --allow-edits` (two snapshots), target: at most about two `git status`;
- `agentrun batch` of 1,000 read jobs at -j 32 in that tree against the same jobs spawned
  by a minimal C loop, target: at most 1 ms per job and a peak RSS under 32 MiB.

Medians over several rounds, to damp a noisy shared machine. Exits 1 when a target is
missed ("about two" is taken as 2.2 times).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

AGENTRUN = os.environ["AGENTRUN"]
FAKE = os.path.join(os.environ["FAKE_BIN_DIR"], "codex")
LOOP = os.environ["SPAWN_LOOP"]
FIXTURE = os.path.join(os.environ["AGENTRUN_SOURCE_ROOT"],
                       "tests/fixtures/codex/json-fenced-json.jsonl")
DIRS, PER_DIR = 500, 100
ROUNDS = 15
JOBS, PAR = 1000, 32


def git(repo, *args, **kw):
    return subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=repo, check=True,
                          capture_output=True, **kw)


def generate(repo):
    """50,000 small files in one commit, without 50,000 git processes or index updates."""
    git(repo, "init", "-q", ".")
    stream = bytearray()
    mark = 0
    for d in range(DIRS):
        for f in range(PER_DIR):
            mark += 1
            data = f"file {d}/{f}\n".encode()
            stream += b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data)
    stream += (b"commit refs/heads/main\ncommitter bench <b@example.com> 0 +0000\n"
               b"data 5\nbench\n")
    mark = 0
    for d in range(DIRS):
        for f in range(PER_DIR):
            mark += 1
            stream += b"M 100644 :%d d%03d/f%03d.txt\n" % (mark, d, f)
    stream += b"\n"
    git(repo, "fast-import", "--quiet", input=bytes(stream))
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    git(repo, "reset", "-q", "--hard")
    for i in range(5):
        with open(os.path.join(repo, f"untracked{i}.txt"), "w") as f:
            f.write(f"untracked {i}\n" * 100)
    # Files written in the same second as the index are "racily clean" and git rereads them
    # on every status; refresh the index once they are older, so that every measured status
    # sees the steady state a user's repository is in.
    time.sleep(1.1)
    git(repo, "update-index", "-q", "--refresh")


def median_time(cmd, rounds=ROUNDS, **kw):
    times = []
    for _ in range(rounds):
        t = time.monotonic()
        subprocess.run(cmd, check=True, **kw)
        times.append(time.monotonic() - t)
    return statistics.median(times)


def peak_rss_kib(pid, stop, out):
    """The last VmHWM (peak resident set) of pid seen before it exits: agentrun alone,
    not its children (getrusage(RUSAGE_CHILDREN) would count git and the CLIs too)."""
    path = f"/proc/{pid}/status"
    while not stop.is_set():
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        out[0] = max(out[0], int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.005)


def timed_batch(cmd, **kw):
    rss = [0]
    stop = threading.Event()
    t = time.monotonic()
    p = subprocess.Popen(cmd, **kw)
    watcher = threading.Thread(target=peak_rss_kib, args=(p.pid, stop, rss))
    watcher.start()
    p.wait()
    elapsed = time.monotonic() - t
    stop.set()
    watcher.join()
    if p.returncode != 0:
        raise SystemExit(f"{cmd[:3]} exited {p.returncode}")
    return elapsed, rss[0]


def main():
    with tempfile.TemporaryDirectory() as d:
        repo = os.path.join(d, "repo")
        os.mkdir(repo)
        t = time.monotonic()
        generate(repo)
        gen_s = time.monotonic() - t
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("FAKE_CLI_", "AGENTRUN_", "GIT_"))}
        env.update(FAKE_CLI_FIXTURE=FIXTURE, AGENTRUN_CODEX_BIN=FAKE, AGENTRUN_PROVIDER="codex")
        null = subprocess.DEVNULL
        kw = dict(env=env, cwd=repo, stdout=null, stderr=null)

        status = median_time(["git", "status", "--porcelain=v2", "-z", "--untracked-files=all"],
                             **kw)
        cli = median_time([LOOP, FAKE, "1", "1"], **kw)
        read = median_time([AGENTRUN, "run", "-q", "--format", "json", "--json", "prompt"],
                           **kw)
        edit = median_time([AGENTRUN, "run", "-q", "--format", "json", "--json", "--allow-edits",
                            "prompt"], **kw)
        jobs = os.path.join(d, "jobs.jsonl")
        with open(jobs, "w") as f:
            for i in range(JOBS):
                f.write(json.dumps({"id": str(i), "prompt": "prompt", "json": True}) + "\n")
        base = min(median_time([LOOP, FAKE, str(JOBS), str(PAR)], rounds=1, **kw)
                   for _ in range(3))
        runs = [timed_batch([AGENTRUN, "batch", "-q", "-j", str(PAR), jobs], **kw)
                for _ in range(3)]
        ours = min(r[0] for r in runs)
        rss_kib = max(r[1] for r in runs)

    read_over = (read - cli) * 1000
    edit_over = (edit - cli) * 1000
    per_job = (ours - base) / JOBS * 1000
    ms = lambda s: f"{s * 1000:8.1f} ms"  # noqa: E731
    print(f"changes: {DIRS * PER_DIR} committed files + 5 untracked, generated in {gen_s:.1f} s;"
          f" medians of {ROUNDS}")
    print(f"changes: git status alone            {ms(status)}")
    print(f"changes: fake CLI alone              {ms(cli)}")
    print(f"changes: run (read)                  {ms(read)}   overhead {read_over:6.1f} ms"
          f"   (target <= 5 ms)")
    print(f"changes: run --allow-edits           {ms(edit)}   overhead {edit_over:6.1f} ms"
          f" = {edit_over / (status * 1000):.2f} x git status   (target <= about 2 x)")
    print(f"changes: batch {JOBS} read jobs -j {PAR}: agentrun {ours:.3f} s, spawn loop "
          f"{base:.3f} s: overhead {per_job:.3f} ms per job (target <= 1 ms), "
          f"peak RSS {rss_kib / 1024:.1f} MiB (target < 32 MiB)")
    missed = []
    if read_over > 5:
        missed.append("read run")
    if edit_over > 2.2 * status * 1000:
        missed.append("edit run")
    if per_job > 1:
        missed.append("batch time")
    if rss_kib >= 32 * 1024:
        missed.append("batch RSS")
    print("changes: targets " + ("met" if not missed else "MISSED: " + ", ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
