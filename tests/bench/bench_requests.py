"""Request bytes per call, per CLI and command, and how much of a multi-chunk review a prompt
cache can serve (issue 33), for the real claude, codex and gemini CLIs against the loopback
mock (tests/e2e/mockapi.py).

For each CLI agentrun runs a 4-chunk review, prioritize, route, a read run and an edit run
(a file written through the CLI's own tool). Printed per call: the bytes of every model
request, side requests (gemini's model router) marked. For the review, the requests of
chunks 2-4 are compared with chunk 1's, each read as the provider's cache reads a prompt
(claude: tools, system, messages; codex: instructions, tools, input; gemini: system
instruction, tools, contents): of the text a chunk's request shares with the first one's,
the share that is their common start, up to the chunk's diff, is what a prefix cache can
serve (common text: runs of 64 bytes or more, so that a few characters two diffs happen to
share do not count).

The targets are checked, and a miss fails the benchmark: one model request per turn for
gemini (no routing request), a read or edit run's first request at most 16,000 bytes for codex
and gemini and a read run's at most 10,000 for claude, and a cacheable share of at least 80%.
Exits 77 (skipped) without node or the CLIs."""
import difflib
import json
import os
import random
import subprocess
import sys

SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT",
                             os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "e2e"))
import harness  # noqa: E402
from harness import Mock, RunRoot  # noqa: E402

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
MANIFEST = os.path.join(os.path.abspath(SOURCE_ROOT), "tests", "fixtures", "route",
                        "manifest.json")
REVIEW = {"passed": True, "summary": "Fine.", "issues": []}
RANKING = {"recommendations": [{"prd_id": "auth", "priority": 1, "rationale": "r"}],
           "summary": "Auth."}
MATCH = {"type": "task", "name": "customer-portal", "confidence": 0.8, "reasoning": "r"}
CHUNKS = 4

# The targets (bytes of the first model request; the share of a review's common text).
READ_MAX = {"claude": 10000, "codex": 16000, "gemini": 16000}
EDIT_MAX = {"codex": 16000, "gemini": 16000}
SHARE_MIN = 0.80


def commands(cli):
    def answer(v):
        return {"kind": "structured" if cli == "claude" else "json", "value": v}
    route = [answer(MATCH), {"kind": "json", "value": [MATCH]}] if cli == "claude" \
        else [answer([MATCH])]
    return [
        ("review", [dict(answer(REVIEW), times="*")],
         ["review", "--format", "json", "--max-chunk-bytes", "2K", "-j", "1"]),
        ("prioritize", [answer(RANKING)], ["prioritize", "prds", "--format", "json"]),
        ("route", route, ["route", "--manifest", MANIFEST, "--format", "json",
                          "where do clients see past orders"]),
        ("run (read)", [{"kind": "text", "text": "It returns 1."}],
         ["run", "--format", "json", "Explain app.c in one line."]),
        ("run (edit)", [{"kind": "tool_write", "path": "hello.txt", "content": "hi\n"},
                        {"kind": "text", "text": "Wrote hello.txt."}],
         ["run", "--allow-edits", "--format", "json", "Write hello.txt saying hi."]),
    ]


def pieces(cli, body):
    """The prompt text of a request, in the order the provider's prompt cache reads it."""
    def dump(v):
        return v if isinstance(v, str) else json.dumps(v, sort_keys=True)

    def content(c):
        if isinstance(c, str):
            return [c]
        return [b.get("text") if isinstance(b, dict) and b.get("type") in
                ("text", "input_text", None) and "text" in b else dump(b) for b in c or []]

    out = []
    if cli == "claude":
        out += [dump(t) for t in body.get("tools", [])]
        system = body.get("system", [])
        out += [system] if isinstance(system, str) else [s.get("text", "") for s in system]
        for m in body.get("messages", []):
            out += content(m.get("content"))
    elif cli == "codex":
        out.append(body.get("instructions") or "")
        out += [dump(t) for t in body.get("tools", [])]
        for item in body.get("input", []):
            out += content(item.get("content")) if "content" in item else [dump(item)]
    else:
        out += [p.get("text", dump(p)) for p in
                (body.get("systemInstruction") or {}).get("parts", [])]
        out += [dump(t) for t in body.get("tools", [])]
        for c in body.get("contents", []):
            out += [p["text"] if "text" in p else dump(p) for p in c.get("parts", [])]
    return "\n".join(out)


# Shorter runs the two texts happen to share (a few characters of two different diffs) are
# not text they have in common.
MIN_RUN = 64


def cacheable_share(first, other):
    """Of the text `other` shares with `first` (runs of MIN_RUN bytes or more), the share
    that is their common start up to other's diff — what a prefix cache can serve; and
    that common text's size."""
    at = other.find("diff --git")
    if at < 0:
        return None, 0
    blocks = difflib.SequenceMatcher(None, first, other, autojunk=False).get_matching_blocks()
    common = sum(b.size for b in blocks if b.size >= MIN_RUN)
    start = min(len(os.path.commonprefix([first, other])), at)
    return (min(start, common) / common if common else None), common


def source(i, version):
    """Lines of file i that share no text with another file's (so the chunks' diffs differ
    the way real ones do), deterministic."""
    rng = random.Random(i * 1000 + version)
    words = ["w%x" % rng.getrandbits(40) for _ in range(60)]
    return "".join("/* %s */\n" % " ".join(words[k * 5:k * 5 + 5]) for k in range(12))


def setup(root):
    work = root.work
    os.makedirs(os.path.join(work, "prds"))
    with open(os.path.join(work, "prds", "auth.md"), "w") as f:
        f.write("# Auth\nSingle sign-on for every app.\n")
    with open(os.path.join(work, "app.c"), "w") as f:
        f.write("int main(void) { return 0; }\n")
    for i in range(CHUNKS):
        with open(os.path.join(work, "f%d.c" % i), "w") as f:
            f.write(source(i, 0))
    env = dict(root.base_env(), GIT_AUTHOR_NAME="b", GIT_COMMITTER_NAME="b",
               GIT_AUTHOR_EMAIL="b@example.invalid", GIT_COMMITTER_EMAIL="b@example.invalid")
    for cmd in (["git", "add", "-A"], ["git", "commit", "-q", "-m", "bench"]):
        subprocess.run(cmd, cwd=work, env=env, check=True)
    return env


def change(root):
    """The working tree the review sees: every f*.c rewritten, one chunk each."""
    for i in range(CHUNKS):
        with open(os.path.join(root.work, "f%d.c" % i), "w") as f:
            f.write(source(i, 1))


def main():
    harness.require_clis()
    mock = Mock().start()
    root = RunRoot(mock.port)
    git_env = setup(root)
    rows, shares, failures = [], {}, []
    try:
        for cli in harness.CLIS:
            for name, steps, args in commands(cli):
                change(root)
                mock.set_script({cli: steps})
                since = len(mock.requests())
                p = subprocess.run([AGENTRUN, *args, "-p", cli, "--timeout", "120s"],
                                   cwd=root.work, env=root.agentrun_env(), capture_output=True,
                                   text=True, timeout=600)
                if p.returncode not in (0, 1):
                    failures.append("%s %s: exit %d: %s" % (cli, name, p.returncode,
                                                            p.stderr[-800:]))
                reqs = [r for r in mock.requests()[since:]
                        if r.get("body_file") and r["method"] == "POST"]
                sizes = [(len(mock.body(r)), bool(r.get("side"))) for r in reqs]
                rows.append((cli, name, sizes))
                main_reqs = [r for r in reqs if not r.get("side")]
                if cli == "gemini" and len(main_reqs) != len(reqs):
                    failures.append("gemini %s: %d side request(s)" % (
                        name, len(reqs) - len(main_reqs)))
                first = len(mock.body(main_reqs[0])) if main_reqs else 0
                limit = (READ_MAX if name == "run (read)" else
                         EDIT_MAX if name == "run (edit)" else {}).get(cli)
                if limit and first > limit:
                    failures.append("%s %s: %d bytes, more than %d" % (cli, name, first, limit))
                if name == "review":
                    texts = [pieces(cli, mock.body_json(r)) for r in main_reqs]
                    if len(texts) != CHUNKS:
                        failures.append("%s review: %d requests, not %d" % (cli, len(texts),
                                                                            CHUNKS))
                    shares[cli] = [cacheable_share(texts[0], t) for t in texts[1:]]
                harness.kill_leftovers(root)
                subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root.work, env=git_env)
                subprocess.run(["git", "clean", "-qfd"], cwd=root.work, env=git_env)
    finally:
        harness.kill_leftovers(root)
        mock.cleanup()
        root.cleanup()

    print("request bytes per call at the mock (every request of the call in order; "
          "r = gemini's routing request)")
    print("%-7s %-11s %9s  %s" % ("cli", "command", "first", "requests"))
    for cli, name, sizes in rows:
        first = next((n for n, side in sizes if not side), 0)
        print("%-7s %-11s %9d  %s" % (cli, name, first, " ".join(
            "%d%s" % (n, "r" if side else "") for n, side in sizes)))
    print()
    print("%d-chunk review: of the text each chunk's request shares with the first chunk's, "
          "the share that is their common start before the diff (what a prefix cache can "
          "serve)" % CHUNKS)
    for cli in harness.CLIS:
        got = shares.get(cli, [])
        cells = ["%.1f%% of %d" % (100 * s, n) if s is not None else "no diff"
                 for s, n in got]
        print("%-7s %s" % (cli, ", ".join(cells)))
        low = [s for s, _ in got if s is None or s < SHARE_MIN]
        if low or not got:
            failures.append("%s review: cacheable share below %.0f%%" % (cli, 100 * SHARE_MIN))
    for f in failures:
        sys.stderr.write("target missed: %s\n" % f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
