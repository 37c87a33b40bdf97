"""Benchmark: what a result-cache hit costs (issue 19).

`agentrun review --cache` of a patch file of N new files, cut into N chunks (one call
each), against the fake claude CLI (a patch file: no git process, so what is measured is
agentrun's own work): once to fill the cache (every call a miss: the CLI
is spawned and the entry written), then again (every call a hit: no CLI). Prints the
wall time per call of each, and agentrun's peak RSS for 1 and for N hits, whose
difference over N-1 is the memory a hit adds; likewise the wall time of the N-call run
over the 1-call run, divided by N-1, is what one hit (or miss) adds. Best of three
runs, to damp a noisy machine. Targets: a hit under 2 ms and 64 KiB.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

AGENTRUN = os.environ["AGENTRUN"]
FAKE = os.path.join(os.environ["FAKE_BIN_DIR"], "claude")
sys.path.insert(0, os.path.join(os.environ["AGENTRUN_SOURCE_ROOT"], "tests", "cli"))
from clitest import claude_stream  # noqa: E402

FILES, ROUNDS = 200, 3
REVIEW = json.dumps({"passed": True, "summary": "fine", "issues": []})


TIME = "/usr/bin/time"  # GNU time: its child's peak RSS, without Python's (see below)


def run(cmd, env, cwd):
    """Wall seconds and peak RSS (KiB) of one agentrun process. A child forked from
    Python inherits Python's peak RSS in ru_maxrss, so GNU time, a small process, starts
    agentrun when it is there and reports agentrun's own."""
    rss_file = os.path.join(cwd, "rss")
    timed = os.access(TIME, os.X_OK)
    if timed:
        cmd = [TIME, "-f", "%M", "-o", rss_file] + cmd
    t = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err}")
    if timed:
        with open(rss_file) as f:
            return wall, int(f.read().split()[-1])
    return wall, ru.ru_maxrss


def patch(d, n):
    path = os.path.join(d, f"change{n}.diff")
    with open(path, "w") as f:
        for i in range(n):
            f.write(f"diff --git a/f{i}.c b/f{i}.c\nnew file mode 100644\n--- /dev/null\n"
                    f"+++ b/f{i}.c\n@@ -0,0 +1,40 @@\n")
            f.write("".join(f"+int v{i}_{k} = {k};\n" for k in range(40)))
    return path


def measure(d, env, n):
    w = d
    cmd = [AGENTRUN, "review", "-q", "--format", "json", "--cache", "--cache-dir",
           os.path.join(d, f"cache{n}"), "--max-chunk-bytes", "1K", "-j", "4", patch(d, n)]
    cache = os.path.join(d, f"cache{n}")
    misses = [run(cmd, env, w)[0]]
    entries = len(os.listdir(os.path.join(cache, "calls")))
    if entries != n:
        raise SystemExit(f"expected {n} cache entries, found {entries}")
    # Misses again, for a fair best-of-three (the cache emptied each time).
    for _ in range(ROUNDS - 1):
        shutil.rmtree(cache)
        misses.append(run(cmd, env, w)[0])
    hits = [run(cmd, env, w) for _ in range(ROUNDS)]
    return min(misses), min(h[0] for h in hits), min(h[1] for h in hits)


def main():
    with tempfile.TemporaryDirectory() as d:
        fixture = os.path.join(d, "answer.jsonl")
        with open(fixture, "w") as f:
            f.write(claude_stream("```json\n" + REVIEW + "\n```"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CLI_", "AGENTRUN_"))}
        env.update(FAKE_CLI_FIXTURE=fixture, AGENTRUN_CLAUDE_BIN=FAKE, AGENTRUN_PROVIDER="claude")
        miss1, hit1, rss1 = measure(d, env, 1)
        missn, hitn, rssn = measure(d, env, FILES)
    # The marginal cost of one more call: what the N-call run adds over the 1-call run
    # (process start, git and the diff are paid once by both).
    per_miss = (missn - miss1) / (FILES - 1) * 1000
    per_hit = (hitn - hit1) / (FILES - 1) * 1000
    per_hit_kib = max(0, rssn - rss1) / (FILES - 1)
    print(f"cache: review of a 1-file patch: miss {miss1 * 1000:.1f} ms, hit {hit1 * 1000:.1f} ms "
          f"(the whole agentrun process; peak RSS {rss1 / 1024:.1f} MiB)")
    print(f"cache: review of a {FILES}-file patch in {FILES} chunks (-j 4): miss {missn * 1000:.0f} ms, "
          f"hit {hitn * 1000:.0f} ms")
    print(f"cache: per call: miss {per_miss:.2f} ms (the fake CLI spawned, the entry written), "
          f"hit {per_hit:.2f} ms (entry read, unwrapped, checked)")
    print(f"cache: peak RSS {rss1 / 1024:.1f} MiB with 1 hit, {rssn / 1024:.1f} MiB with "
          f"{FILES} hits: {per_hit_kib:.1f} KiB per hit")
    ok = per_hit < 2.0 and per_hit_kib < 64
    print("cache: targets (a hit under 2 ms and 64 KiB) " + ("met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
