#!/usr/bin/env python3
"""Schemas as users bring them, through `agentrun extract --value --schema`: what pydantic 2
(model_json_schema()), pydantic 1 (.schema()), zod 4 (z.toJSONSchema()), OpenAI's strict
structured outputs, SchemaStore and package.json's schema, TypeBox, typescript-json-schema
and Go's invopop/jsonschema emit, written here after the generators' documented output
(tests/schema/corpus/*.json, in the official suite's shape: a description, a schema and
cases with the verdict each must get). A schema counts when it loads and every case gets
its verdict. Fails unless every one does; prints the count per generator."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_suite import AGENTRUN, dumps, raw_loads, verdict  # noqa: E402

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def main():
    total = good = 0
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        schema_path = os.path.join(tmp, "schema.json")
        data_path = os.path.join(tmp, "data.json")
        for name in sorted(os.listdir(CORPUS)):
            with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
                groups = raw_loads(f.read())
            ok_here = 0
            for g in groups:
                total += 1
                with open(schema_path, "w", encoding="utf-8") as f:
                    f.write(dumps(g["schema"]))
                ok = True
                for t in g["tests"]:
                    with open(data_path, "w", encoding="utf-8") as f:
                        f.write(dumps(t["data"]))
                    got, why = verdict(AGENTRUN, schema_path, data_path, tmp, False)
                    want = "valid" if t["valid"] else "invalid"
                    if got != want:
                        ok = False
                        failed.append("%s: %s: %s: got %s, want %s\n      %s" % (
                            name, g["description"], t["description"], got, want,
                            why.strip().replace("\n", "\n      ")))
                ok_here += ok
            good += ok_here
            print("%-24s %2d of %2d load and judge right" % (name, ok_here, len(groups)))
    for f in failed:
        print("WRONG " + f)
    print("%d of %d schemas load and judge right" % (good, total))
    print("%d passed, %d failed" % (good, total - good))
    return 0 if good == total else 1


if __name__ == "__main__":
    sys.exit(main())
