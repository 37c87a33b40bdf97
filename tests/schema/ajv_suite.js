// The official JSON Schema Test Suite (draft 2020-12) through ajv 8's Ajv2020, with its
// strict mode off (as the measurement in issue 58 ran it): the anchor tests/schema/run_suite.py compares agentrun against, in
// the same run. Usage: node ajv_suite.js AJV_DIR SUITE_DIR. Prints one JSON object:
// {"core": {"pass": N, "wrong": N, "refused": N}, ...}. ajv comes from AJV_DIR (npm
// install ajv into a folder of your own; it is not part of agentrun).
"use strict";
const fs = require("fs");
const path = require("path");
const ajvDir = process.argv[2], suite = process.argv[3];
const Ajv2020 = require(path.join(ajvDir, "node_modules", "ajv", "dist", "2020")).default;
const remotes = path.join(suite, "remotes");

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith(".json")) out.push(p);
  }
  return out;
}

function newAjv() {
  const ajv = new Ajv2020({ strict: false, logger: false });
  for (const f of walk(remotes, [])) {
    const uri = "http://localhost:1234/" + path.relative(remotes, f).split(path.sep).join("/");
    try { ajv.addSchema(JSON.parse(fs.readFileSync(f, "utf8")), uri); } catch (e) { /* other drafts */ }
  }
  return ajv;
}

const base = path.join(suite, "tests", "draft2020-12");
const result = {};
function count(kind, what) {
  result[kind] = result[kind] || { pass: 0, wrong: 0, refused: 0 };
  result[kind][what]++;
}
for (const f of walk(base, []).sort()) {
  const rel = path.relative(base, f);
  const kind = rel.startsWith("optional") ? rel : "core";
  for (const group of JSON.parse(fs.readFileSync(f, "utf8"))) {
    let validate = null;
    try { validate = newAjv().compile(group.schema); } catch (e) { validate = null; }
    for (const t of group.tests) {
      if (!validate) { count(kind, "refused"); continue; }
      let ok;
      try { ok = validate(t.data); } catch (e) { count(kind, "refused"); continue; }
      count(kind, ok === t.valid ? "pass" : "wrong");
    }
  }
}
process.stdout.write(JSON.stringify(result) + "\n");
