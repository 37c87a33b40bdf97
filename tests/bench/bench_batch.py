"""Benchmark: agentrun batch's own overhead per job and its peak RSS (issue 9).

1,000 jobs of a fake CLI that answers at once, -j 32, run twice: through
`agentrun batch`, and spawned directly by a minimal C loop (spawn_loop.c).
Prints the overhead per job (targets: under 2 ms) and agentrun's peak RSS
(target: under 32 MiB). Best of three runs each, to damp a noisy machine.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

AGENTRUN = os.environ["AGENTRUN"]
FAKE = os.path.join(os.environ["FAKE_BIN_DIR"], "codex")
LOOP = os.environ["SPAWN_LOOP"]
FIXTURE = os.path.join(os.environ["AGENTRUN_SOURCE_ROOT"], "tests/fixtures/codex/json-fenced-json.jsonl")
JOBS, PAR, ROUNDS = 1000, 32, 3


def timed(cmd, **kw):
    t = time.monotonic()
    subprocess.run(cmd, check=True, **kw)
    return time.monotonic() - t


def main():
    with tempfile.TemporaryDirectory() as d:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CLI_", "AGENTRUN_"))}
        env.update(FAKE_CLI_FIXTURE=FIXTURE, AGENTRUN_CODEX_BIN=FAKE, AGENTRUN_PROVIDER="codex")
        jobs = os.path.join(d, "jobs.jsonl")
        with open(jobs, "w") as f:
            for i in range(JOBS):
                f.write(json.dumps({"id": str(i), "prompt": "prompt", "json": True}) + "\n")
        base = min(timed([LOOP, FAKE, str(JOBS), str(PAR)], env=env, cwd=d) for _ in range(ROUNDS))
        with open(os.devnull, "w") as null:
            ours = min(timed([AGENTRUN, "batch", "-q", "-j", str(PAR), jobs], env=env, cwd=d,
                             stdout=null) for _ in range(ROUNDS))
        # ru_maxrss of waited-for children: the largest is agentrun itself (KiB on Linux).
        rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    per_job_ms = (ours - base) / JOBS * 1000
    print(f"batch: {JOBS} jobs, -j {PAR}: agentrun {ours:.3f} s, direct spawn loop {base:.3f} s")
    print(f"batch: overhead per job {per_job_ms:.3f} ms (target < 2 ms)")
    print(f"batch: peak RSS {rss_kib / 1024:.1f} MiB (target < 32 MiB)")
    ok = per_job_ms < 2.0 and rss_kib < 32 * 1024
    print("batch: targets " + ("met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
