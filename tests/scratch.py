"""The folders every test's TMPDIR and HOME point into (tests/meson.build), and the check
that a run of the suites leaves nothing in them (issue 59: 31 MiB of runner-* folders in
/tmp after each run, from tests/release).

  scratch.py start DIR   before the first test of a run: notes what DIR/tmp and DIR/home
                         hold (and removes what a run killed hours ago left there)
  scratch.py check DIR   after the last test: fails naming what the run left in either,
                         with its size, and removes it

What a run finds there already is not the run's: a test still running in another
`meson test` of the same build keeps its folders. A test that needs a folder makes it with
tempfile (which reads TMPDIR) and removes it, or puts it under a folder of its own that it
removes; a test that sets HOME for a program points it into such a folder too.
"""
import json
import os
import re
import shutil
import sys
import time

PARTS = ("tmp", "home")
# Older than any test's time limit: a run killed this long ago is not coming back.
STALE_S = 6 * 3600


def size(path):
    if os.path.islink(path) or not os.path.isdir(path):
        return os.lstat(path).st_size
    total = 0
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        # A test may leave a folder it made read-only: make it writable to remove it.
        for root, dirs, _ in os.walk(path):
            for d in dirs:
                try:
                    os.chmod(os.path.join(root, d), 0o700)
                except OSError:
                    pass
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def entries(scratch):
    out = []
    for part in PARTS:
        d = os.path.join(scratch, part)
        os.makedirs(d, exist_ok=True)
        out += [os.path.join(d, name) for name in sorted(os.listdir(d))]
    return out


def main(argv):
    if len(argv) != 3 or argv[1] not in ("start", "check"):
        print("usage: scratch.py start|check DIR", file=sys.stderr)
        return 2
    scratch = argv[2]
    noted = os.path.join(scratch, "at-start.json")
    if argv[1] == "start":
        now = time.time()
        kept = []
        for path in entries(scratch):
            if now - os.lstat(path).st_mtime > STALE_S:
                remove(path)
            else:
                kept.append(path)
        with open(noted, "w") as f:
            json.dump(kept, f)
        return 0
    try:
        with open(noted) as f:
            before = set(json.load(f))
    except (OSError, ValueError):
        before = set()
    left = []
    for p in entries(scratch):
        if p in before:
            continue
        # agentrun's own stamp of its once-a-minute sweep of what killed runs left
        # (src/util/temp.c), one empty file per user: agentrun's state, not a test's leftover.
        if re.fullmatch(r"agentrun-swept-\d+", os.path.basename(p)) and \
                os.path.dirname(p) == os.path.join(scratch, "tmp") and os.path.isfile(p):
            remove(p)
            continue
        left.append(p)
    if left:
        print("the tests left %d thing%s behind (a test must remove what it makes; "
              "tests/scratch.py says how):" % (len(left), "" if len(left) == 1 else "s"))
        for path in left:
            print("  %s (%d bytes)" % (path, size(path)))
            remove(path)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
