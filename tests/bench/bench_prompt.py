"""Benchmark: what a large prompt costs in memory (issue 17).

`agentrun run -f -` with a 50 MiB prompt on standard input, through the fake claude CLI,
once free-form and once as a template variable (`--var text=@FILE`). The prompt is read
once by the CLI and rendered once by the pipeline; the child's stdin borrows the rendered
copy. agentrun's peak RSS is printed per MiB of prompt; the target is under 2.5 (the two
copies and a little), where each extra copy of the prompt would add one. Before issue 17
the free-form prompt was copied five times on its way to the child (about 5 per MiB).
"""
import os
import subprocess
import sys
import tempfile

AGENTRUN = os.environ["AGENTRUN"]
FAKE = os.path.join(os.environ["FAKE_BIN_DIR"], "claude")
FIXTURE = os.path.join(os.environ["AGENTRUN_SOURCE_ROOT"], "tests", "fixtures", "claude",
                       "stream-text.jsonl")
TIME = "/usr/bin/time"  # GNU time: agentrun's own peak RSS, not Python's
MIB = 1 << 20
SIZE = 50 * MIB
TARGET = 2.5


def peak_rss_kib(cmd, env, cwd, stdin_path):
    """agentrun's peak RSS in KiB (a child forked from Python inherits Python's peak RSS
    in ru_maxrss, so GNU time, a small process, starts agentrun and reports its own)."""
    rss_file = os.path.join(cwd, "rss")
    timed = os.access(TIME, os.X_OK)
    if timed:
        cmd = [TIME, "-f", "%M", "-o", rss_file] + cmd
    with open(stdin_path, "rb") as stdin:
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err}")
    if timed:
        with open(rss_file) as f:
            return int(f.read().split()[-1])
    return ru.ru_maxrss


def main():
    with tempfile.TemporaryDirectory() as d:
        prompt = os.path.join(d, "prompt.txt")
        with open(prompt, "wb") as f:
            f.write((b"x" * 99 + b"\n") * (SIZE // 100))
        tpl_dir = os.path.join(d, "prompts")
        os.mkdir(tpl_dir)
        with open(os.path.join(tpl_dir, "big.md"), "w") as f:
            f.write("Summarize:\n\n{{text}}\n")
        env = dict(os.environ, AGENTRUN_CLAUDE_BIN=FAKE, FAKE_CLI_FIXTURE=FIXTURE,
                   FAKE_CLI_LOG=os.path.join(d, "log"), FAKE_CLI_LOG_STDIN_MAX="16",
                   XDG_CONFIG_HOME=os.path.join(d, "config"), NO_COLOR="1")
        cases = [
            ("free-form prompt on stdin", [AGENTRUN, "run", "-q", "-p", "claude", "-f", "-"]),
            ("template variable from a file",
             [AGENTRUN, "run", "-q", "-p", "claude", "--prompts-dir", tpl_dir, "-t", "big",
              "--var", "text=@" + prompt]),
        ]
        failed = False
        for name, cmd in cases:
            kib = min(peak_rss_kib(cmd, env, d, prompt) for _ in range(2))
            per_mib = kib * 1024 / SIZE
            print(f"prompt: {name}: {SIZE // MIB} MiB, peak RSS {kib / 1024:.1f} MiB "
                  f"({per_mib:.2f} per MiB of prompt, target < {TARGET})")
            failed |= per_mib >= TARGET
        print("prompt: targets " + ("missed" if failed else "met"))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
