#!/usr/bin/env python3
"""The official JSON Schema Test Suite (draft 2020-12) through `agentrun extract --value
--schema`: every case of its core and optional/ files, judged by the binary a user runs.

Where the suite is: $AGENTRUN_JSONSCHEMA_SUITE, else ../shared/jsonschema-test-suite beside
the source tree (AGENTRUN_SOURCE_ROOT). Without it the test is skipped (exit 77) with a
message saying where it looked. The suite's remote documents (http://localhost:1234/...)
are registered with --schema-ref http://localhost:1234/=REMOTES/, never fetched.

Each case is one of: pass (the verdict the suite wants), wrong (the other verdict, or a
crash), refused (the schema did not load: exit 2 with a message naming what). Fails when
any case of the core or of optional/ecmascript-regex.json has a wrong verdict, when fewer
core cases pass than AGENTRUN_SUITE_MIN_PASS, and, when AGENTRUN_AJV_DIR names a folder
with ajv 8 installed (npm install ajv@8; node on PATH), when agentrun passes no more core
cases than ajv's Ajv2020 does in the same run. With AGENTRUN_SUITE_COMPARE naming another
agentrun binary (the glibc build beside the musl release binary), every case is run through
both and any verdict they disagree on fails the test.

The optional/format/ files run with --format-assert (format is an annotation otherwise, as
the core's format.json expects). `--verbose` lists every wrong and refused case.
"""
import json
import os
import subprocess
import sys
import tempfile

SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT", os.path.join(os.path.dirname(__file__),
                                                                  "..", ".."))
AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
COMPARE = os.environ.get("AGENTRUN_SUITE_COMPARE", "")
MIN_PASS = int(os.environ.get("AGENTRUN_SUITE_MIN_PASS", "1238"))


class Raw(str):
    """A number as the suite spells it."""


def raw_loads(text):
    return json.loads(text, parse_float=Raw, parse_int=Raw)


def dumps(v):
    """JSON text with every number spelled as in the suite (1.0 stays 1.0)."""
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dumps(x) for x in v) + "]"
    return json.dumps(v)


def find_suite():
    env = os.environ.get("AGENTRUN_JSONSCHEMA_SUITE")
    places = [env] if env else []
    # Beside the source tree (CI: a clone with shared/ beside it), or beside one of its
    # parents (a git worktree of the integration checkout).
    up = os.path.abspath(SOURCE_ROOT)
    for _ in range(3):
        up = os.path.dirname(up)
        places.append(os.path.join(up, "shared", "jsonschema-test-suite"))
    for p in places:
        if os.path.isdir(os.path.join(p, "tests", "draft2020-12")):
            return os.path.abspath(p)
    print("skipped: the JSON Schema Test Suite is not at %s (set AGENTRUN_JSONSCHEMA_SUITE to "
          "a checkout of json-schema-org/JSON-Schema-Test-Suite)" % " or ".join(places))
    sys.exit(77)


def verdict(binary, schema_path, data_path, remotes, fmt):
    argv = [binary, "extract", "--value", "--schema", schema_path,
            "--schema-ref", "http://localhost:1234/=" + remotes + "/"]
    if fmt:
        argv.append("--format-assert")
    p = subprocess.run(argv + [data_path], capture_output=True, text=True, errors="replace")
    if p.returncode == 0:
        return "valid", ""
    if p.returncode == 3:
        return "invalid", p.stderr
    if p.returncode == 2 and "schema" in p.stderr:
        return "refused", p.stderr
    return "crash", "exit %d: %s" % (p.returncode, p.stderr[-300:])


def kind_of(rel):
    return "core" if not rel.startswith("optional") else rel


def run(suite, verbose):
    base = os.path.join(suite, "tests", "draft2020-12")
    remotes = os.path.join(suite, "remotes")
    files = []
    for root, _, names in os.walk(base):
        files += [os.path.join(root, n) for n in names if n.endswith(".json")]
    counts, problems, disagreements = {}, [], []
    with tempfile.TemporaryDirectory() as tmp:
        schema_path = os.path.join(tmp, "schema.json")
        data_path = os.path.join(tmp, "data.json")
        for f in sorted(files):
            rel = os.path.relpath(f, base)
            kind = kind_of(rel)
            fmt = rel.startswith(os.path.join("optional", "format"))
            c = counts.setdefault(kind, {"pass": 0, "wrong": 0, "refused": 0})
            with open(f, encoding="utf-8") as fh:
                groups = raw_loads(fh.read())
            for g in groups:
                with open(schema_path, "w", encoding="utf-8") as fh:
                    fh.write(dumps(g["schema"]))
                refused = None
                for t in g["tests"]:
                    name = "%s: %s: %s" % (rel, g["description"], t["description"])
                    if refused is not None:
                        c["refused"] += 1
                        continue
                    with open(data_path, "w", encoding="utf-8") as fh:
                        fh.write(dumps(t["data"]))
                    got, why = verdict(AGENTRUN, schema_path, data_path, remotes, fmt)
                    if COMPARE:
                        other, _ = verdict(COMPARE, schema_path, data_path, remotes, fmt)
                        if other != got:
                            disagreements.append("%s: %s says %s, %s says %s" %
                                                 (name, AGENTRUN, got, COMPARE, other))
                    if got == "refused":
                        refused = why
                        c["refused"] += 1
                        problems.append(("refused", kind, name, why.strip()))
                    elif got == ("valid" if t["valid"] else "invalid"):
                        c["pass"] += 1
                    else:
                        c["wrong"] += 1
                        problems.append(("wrong", kind, name, (why or got).strip()))
    return counts, problems, disagreements


def ajv_counts(suite):
    ajv_dir = os.environ.get("AGENTRUN_AJV_DIR")
    if not ajv_dir:
        return None
    p = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "ajv_suite.js"), ajv_dir, suite],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("ajv did not run: %s" % p.stderr[-500:])
        return {}
    return json.loads(p.stdout)


def main():
    verbose = "--verbose" in sys.argv
    suite = find_suite()
    counts, problems, disagreements = run(suite, verbose)
    failed = False
    total = {"pass": 0, "wrong": 0, "refused": 0}
    for kind in sorted(counts, key=lambda k: (k != "core", k)):
        c = counts[kind]
        print("%-48s pass %5d  wrong %3d  refused %4d" % (kind, c["pass"], c["wrong"],
                                                          c["refused"]))
        for k in total:
            total[k] += c[k]
    for what, kind, name, why in problems:
        if what == "wrong" and (kind == "core" or kind.endswith("ecmascript-regex.json")
                                and not kind.startswith(os.path.join("optional", "format"))):
            print("WRONG %s\n      %s" % (name, why.replace("\n", "\n      ")))
            failed = True
        elif verbose:
            print("%s %s\n      %s" % (what.upper(), name, why.replace("\n", "\n      ")))
    core = counts.get("core", {"pass": 0})
    if core["pass"] < MIN_PASS:
        print("FAIL: %d core cases pass, fewer than %d" % (core["pass"], MIN_PASS))
        failed = True
    ajv = ajv_counts(suite)
    if ajv is not None:
        a = ajv.get("core")
        if a:
            print("ajv 8 Ajv2020 (strict off), same run, core: pass %d  wrong %d  refused %d"
                  % (a["pass"], a["wrong"], a["refused"]))
            print("agentrun, core: pass %d  wrong %d  refused %d"
                  % (core["pass"], core.get("wrong", 0), core.get("refused", 0)))
            if core["pass"] <= a["pass"]:
                print("FAIL: agentrun passes %d core cases, ajv %d" % (core["pass"], a["pass"]))
                failed = True
        else:
            print("FAIL: AGENTRUN_AJV_DIR is set but ajv gave no numbers")
            failed = True
    for d in disagreements:
        print("DISAGREE " + d)
        failed = True
    if COMPARE:
        print("%d cases compared with %s: %d disagreements" %
              (sum(total.values()), COMPARE, len(disagreements)))
    print("%d passed, %d failed" % (0 if failed else 1, 1 if failed else 0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
