"""Benchmark: a review panel's wall time against its slowest member's (issue 61).

`agentrun review --panel claude,codex,gemini` of a small patch against the fake CLIs, each
member answering after its own delay (claude 300 ms, codex 600 ms, gemini 900 ms), so the
members' calls run at once and the panel should take about as long as its slowest member,
not the sum. Prints, best of three: the panel's wall time, each member's duration as the
review reports it, the slowest member's, the ratio, and the same review by the slowest
member alone. The target: the panel within 15% (plus 100 ms) of the slowest member alone.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

AGENTRUN = os.environ["AGENTRUN"]
FAKE_BIN_DIR = os.environ["FAKE_BIN_DIR"]
sys.path.insert(0, os.path.join(os.environ["AGENTRUN_SOURCE_ROOT"], "tests", "cli"))
from clitest import STREAMS  # noqa: E402

DELAYS = {"claude": 300, "codex": 600, "gemini": 900}
ROUNDS = 3
REVIEW = "```json\n" + json.dumps({"passed": True, "summary": "fine", "issues": []}) + "\n```"


def member(root, provider):
    d = os.path.join(root, "bin-" + provider)
    os.makedirs(d)
    os.symlink(os.path.join(FAKE_BIN_DIR, provider), os.path.join(d, provider))
    fixture = os.path.join(d, "answer.jsonl")
    with open(fixture, "w") as f:
        f.write(STREAMS[provider](REVIEW))
    script = os.path.join(d, "run.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nexport FAKE_CLI_FIXTURE='%s' FAKE_CLI_SLEEP_MS=%d\n"
                "exec '%s' \"$@\"\n" % (fixture, DELAYS[provider],
                                       os.path.join(d, provider)))
    os.chmod(script, 0o755)
    return script


def run(args, env, cwd):
    t = time.monotonic()
    p = subprocess.run([AGENTRUN, "review", *args, "--format", "json"], env=env, cwd=cwd,
                       capture_output=True, text=True)
    wall = time.monotonic() - t
    if p.returncode != 0:
        raise SystemExit(f"agentrun review {' '.join(args)} failed ({p.returncode}): "
                         f"{p.stderr}")
    return wall, json.loads(p.stdout)


def main():
    root = tempfile.mkdtemp(prefix="agentrun-bench-panel-")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CLI_", "AGENTRUN_"))}
        env["XDG_CONFIG_HOME"] = os.path.join(root, "config")
        env["XDG_CACHE_HOME"] = os.path.join(root, "cache")
        for p in DELAYS:
            env["AGENTRUN_%s_BIN" % p.upper()] = member(root, p)
        diff = os.path.join(root, "change.diff")
        with open(diff, "w") as f:
            f.write("diff --git a/app.c b/app.c\nnew file mode 100644\n--- /dev/null\n"
                    "+++ b/app.c\n@@ -0,0 +1,2 @@\n+int main(void)\n+{ return 0; }\n")
        panel, alone = [], []
        for _ in range(ROUNDS):
            panel.append(run(["--panel", ",".join(DELAYS), "--diff-file", diff], env, root))
            alone.append(run(["--panel", "gemini", "--diff-file", diff], env, root))
        wall, doc = min(panel, key=lambda r: r[0])
        wall_alone, _ = min(alone, key=lambda r: r[0])
        members = {m["provider"]: m["duration_ms"] for m in doc["panel"]["members"]}
        slowest = max(members.values())
        print("panel of %d, best of %d:" % (len(DELAYS), ROUNDS))
        for name, ms in members.items():
            print("  %-7s answers after %4d ms; its call took %5d ms" % (name, DELAYS[name], ms))
        print("  panel wall %.0f ms; slowest member's call %d ms (ratio %.2f); the slowest "
              "member alone: wall %.0f ms (panel / alone %.2f)"
              % (wall * 1000, slowest, wall * 1000 / slowest, wall_alone * 1000,
                 wall / wall_alone))
        if wall > wall_alone * 1.15 + 0.1:
            print("  over the target: the panel took more than 15% + 100 ms over the slowest "
                  "member alone")
            return 1
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
