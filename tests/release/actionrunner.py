"""A small stand-in for the GitHub Actions runner, enough to run a composite
action's steps the way the runner does (docs.github.com, "Metadata syntax for
GitHub Actions" and "Workflow commands"):

- inputs: the `with:` values over action.yml's defaults (defaults may be
  expressions: `${{ github.token }}`); an input action.yml does not declare is an
  error, as the runner warns of it;
- `if:` conditions and `${{ }}` expressions over the contexts inputs, steps
  (outputs, outcome), github, runner and env, with the status functions
  success() (implied when none is named), always() and failure(); an expression
  this module does not understand is an error, never a guess;
- a `run:` step: its text written to a file and run with `bash --noprofile
  --norc -eo pipefail FILE` (the runner's template for shell: bash), in its
  working-directory under GITHUB_WORKSPACE, with GITHUB_ACTION_PATH, a fresh
  GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH and GITHUB_STEP_SUMMARY file per step,
  what earlier steps added to PATH and env, and its env: map;
- a `uses:` step: handed to a Python stand-in the test supplies for that action
  (actions/cache, upload-sarif, ...), which gets the evaluated `with:`;
- the action's outputs, evaluated after the steps.
"""
import os
import re
import subprocess
import tempfile

import yaml

TOKEN = re.compile(r"\s+|('(?:[^']|'')*')|(&&|\|\||==|!=|[!()])|"
                   r"([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)(\(\))?|(\S)")
STATUS_FUNCTIONS = ("success", "always", "failure", "cancelled")


class ExpressionError(Exception):
    pass


def tokens(text):
    out = []
    for m in TOKEN.finditer(text):
        string, op, name, call, other = m.groups()
        if other:
            raise ExpressionError("cannot read %r in %r" % (other, text))
        if string is not None:
            out.append(("str", string[1:-1].replace("''", "'")))
        elif op:
            out.append(("op", op))
        elif name and call:
            out.append(("call", name))
        elif name:
            out.append(("name", name))
    return out


class Expression:
    """expr := or; or := and ('||' and)*; and := unary ('&&' unary)*;
    unary := '!' unary | cmp; cmp := atom (('=='|'!=') atom)?;
    atom := string | true | false | null | context.path | function() | '(' expr ')'"""

    def __init__(self, text, contexts, status):
        self.toks = tokens(text)
        self.text = text
        self.ctx = contexts
        self.status = status
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self):
        t = self.peek()
        self.i += 1
        return t

    def evaluate(self):
        v = self.or_()
        if self.i != len(self.toks):
            raise ExpressionError("trailing %r in %r" % (self.peek()[1], self.text))
        return v

    def or_(self):
        v = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            r = self.and_()
            v = v if truthy(v) else r
        return v

    def and_(self):
        v = self.unary()
        while self.peek() == ("op", "&&"):
            self.take()
            r = self.unary()
            v = r if truthy(v) else v
        return v

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.cmp()

    def cmp(self):
        v = self.atom()
        if self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            r = self.atom()
            equal = text(v).lower() == text(r).lower()  # GitHub compares strings ignoring case
            return equal if op == "==" else not equal
        return v

    def atom(self):
        kind, value = self.take()
        if kind == "str":
            return value
        if kind == "op" and value == "(":
            v = self.or_()
            if self.take() != ("op", ")"):
                raise ExpressionError("no ) in %r" % self.text)
            return v
        if kind == "call":
            if value not in STATUS_FUNCTIONS:
                raise ExpressionError("function %s() is not known here" % value)
            return {"always": True, "success": self.status == "success",
                    "failure": self.status == "failure", "cancelled": False}[value]
        if kind == "name":
            if value in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[value]
            head, *path = value.split(".")
            if head not in self.ctx:
                raise ExpressionError("context %s is not known here (%r)" % (head, self.text))
            v = self.ctx[head]
            for p in path:
                v = v.get(p) if isinstance(v, dict) else None
            return v
        raise ExpressionError("unexpected %r in %r" % (value, self.text))


def truthy(v):
    return v not in (None, False, "", 0)


def text(v):
    if v is None:
        return ""
    if v is True or v is False:
        return "true" if v else "false"
    return str(v)


def interpolate(s, contexts, status="success"):
    """A string with its ${{ }} expressions replaced by their values."""
    if not isinstance(s, str):
        return text(s)
    return re.sub(r"\$\{\{(.*?)\}\}",
                  lambda m: text(Expression(m.group(1), contexts, status).evaluate()), s)


def condition(cond, contexts, status):
    """An if: condition; without a status function, success() && (cond)."""
    if cond is None:
        return status == "success"
    cond = str(cond).strip()
    if cond.startswith("${{") and cond.endswith("}}"):
        cond = cond[3:-2]
    value = truthy(Expression(cond, contexts, status).evaluate())
    if not any(t == ("call", f) for t in tokens(cond) for f in STATUS_FUNCTIONS):
        value = value and status == "success"
    return value


def read_commands_file(path):
    """NAME=value lines and NAME<<DELIM ... DELIM blocks (GITHUB_OUTPUT, GITHUB_ENV)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        m = re.match(r"^([^=<]+)<<(.+)$", line)
        if m:
            name, delim, value = m.group(1), m.group(2), []
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            if i == len(lines):
                raise AssertionError("%s: no closing %s for %s" % (path, delim, name))
            i += 1
            out[name] = "\n".join(value)
        else:
            name, eq, value = line.partition("=")
            if not eq:
                raise AssertionError("%s: not NAME=value: %r" % (path, line))
            out[name] = value
    return out


class Result:
    def __init__(self):
        self.steps = []        # one dict per step: id, ran, exit, stdout, stderr, with
        self.outputs = {}
        self.failed = False
        self.summary = ""

    def step(self, key):
        """The step whose id or uses is key."""
        for s in self.steps:
            if s["id"] == key or s.get("uses", "").split("@")[0] == key:
                return s
        raise KeyError(key)

    @property
    def log(self):
        return "".join(s.get("stdout", "") + s.get("stderr", "") for s in self.steps)


def run_action(action_dir, inputs, workspace, base_env, uses=None, github=None, runner=None,
               runner_root=None):
    """Runs action_dir/action.yml with the `with:` values inputs. base_env is the
    job's environment (PATH included); uses maps an action name (without @ref) to
    a function (with_values, env) -> (outputs dict, ok); github and runner add to
    or replace those contexts; runner_root holds RUNNER_TEMP and RUNNER_TOOL_CACHE
    (the same one keeps them from one run to the next)."""
    with open(os.path.join(action_dir, "action.yml"), encoding="utf-8") as f:
        action = yaml.safe_load(f)
    assert action["runs"]["using"] == "composite"
    declared = action.get("inputs", {})
    for name in inputs:
        if name not in declared:
            raise AssertionError("action.yml has no input %r" % name)
    # The caller owns the runner's folders and removes them; without one, a run of its
    # own would be left in $TMPDIR.
    if not runner_root:
        raise ValueError("run_action needs runner_root, a folder the caller removes")
    tmp = runner_root
    runner = dict({"os": "Linux", "arch": "X64", "temp": os.path.join(tmp, "temp"),
                   "tool_cache": os.path.join(tmp, "tool-cache")}, **(runner or {}))
    for d in (runner["temp"], runner["tool_cache"]):
        os.makedirs(d, exist_ok=True)
    github = dict({"token": "ghs_fake", "workspace": workspace, "action_path": action_dir},
                  **(github or {}))
    ctx = {"github": github, "runner": runner, "steps": {}, "env": dict(base_env),
           "inputs": {}}
    for name, spec in declared.items():
        value = inputs.get(name, spec.get("default", ""))
        ctx["inputs"][name] = interpolate(value, ctx)
    env_base = dict(base_env)
    env_base.update({"GITHUB_WORKSPACE": workspace, "GITHUB_ACTION_PATH": action_dir,
                     "RUNNER_TEMP": runner["temp"], "RUNNER_TOOL_CACHE": runner["tool_cache"],
                     "RUNNER_OS": runner["os"], "RUNNER_ARCH": runner["arch"], "CI": "true",
                     "GITHUB_ACTIONS": "true"})
    for k, v in github.items():
        if k not in ("token", "workspace", "action_path"):
            env_base["GITHUB_" + k.upper()] = str(v)
    extra_path, extra_env = [], {}
    result = Result()
    status = "success"
    for n, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", "__step%d" % n)
        rec = {"id": sid, "uses": step.get("uses", ""), "ran": False}
        result.steps.append(rec)
        ctx["env"] = dict(env_base, **extra_env)
        if not condition(step.get("if"), ctx, status):
            ctx["steps"][sid] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
            continue
        rec["ran"] = True
        files = {k: os.path.join(tmp, "%s-%d" % (k.lower(), n)) for k in
                 ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")}
        for p in files.values():
            open(p, "w").close()
        step_env = {k: interpolate(v, ctx, status) for k, v in (step.get("env") or {}).items()}
        env = dict(env_base, **extra_env, **files, **step_env)
        env["PATH"] = ":".join(list(reversed(extra_path)) + [base_env["PATH"]])
        if "run" in step:
            assert step.get("shell") == "bash", "%s: only shell: bash is run here" % sid
            script = os.path.join(tmp, "step-%d.sh" % n)
            with open(script, "w") as f:
                f.write(interpolate(step["run"], ctx, status))
            cwd = os.path.join(workspace, interpolate(step.get("working-directory", "."), ctx))
            p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                               cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
            rec.update(exit=p.returncode, stdout=p.stdout, stderr=p.stderr)
            ok = p.returncode == 0
            outputs = read_commands_file(files["GITHUB_OUTPUT"])
        else:
            name = step["uses"].split("@")[0]
            handler = (uses or {}).get(name)
            if handler is None:
                raise AssertionError("no stand-in for uses: " + step["uses"])
            rec["with"] = {k: interpolate(v, ctx, status) for k, v in
                           (step.get("with") or {}).items()}
            outputs, ok = handler(rec["with"], env)
        rec["outputs"] = outputs
        with open(files["GITHUB_STEP_SUMMARY"], encoding="utf-8") as f:
            result.summary += f.read()
        with open(files["GITHUB_PATH"], encoding="utf-8") as f:
            extra_path += [l for l in f.read().splitlines() if l]
        extra_env.update(read_commands_file(files["GITHUB_ENV"]))
        outcome = "success" if ok else "failure"
        ctx["steps"][sid] = {"outputs": outputs, "outcome": outcome, "conclusion": outcome}
        if not ok:
            status = "failure"
    result.failed = status == "failure"
    for name, spec in (action.get("outputs") or {}).items():
        result.outputs[name] = interpolate(spec["value"], ctx, status)
    result.path = extra_path
    return result
