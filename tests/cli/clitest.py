"""Shared helpers for CLI tests: a temp git work tree, the fake CLI wired in as
claude/codex/gemini, answers written in each CLI's stream format, and the
fake's call log.

    with Sandbox() as sb:
        sb.answers("codex", ["prose", '{"a":1}'])   # call 0, call 1
        p = sb.run("run", "--json", "--format", "json", "hi", provider="codex")
        sb.calls()   # what the fake CLI received, one dict per call
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import weakref

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
FAKE_BIN_DIR = os.environ.get("FAKE_BIN_DIR", "")
SOURCE_ROOT = os.environ.get("AGENTRUN_SOURCE_ROOT", ".")


def codex_stream(text, input_tokens=1000, cached=200, output=50, reasoning=0,
                 thread="01a201a4-e6d7-7c03-9d63-000000000001"):
    lines = [
        {"type": "thread.started", "thread_id": thread},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": text}},
        {"type": "turn.completed", "usage": {
            "input_tokens": input_tokens, "cached_input_tokens": cached,
            "cache_write_input_tokens": 0, "output_tokens": output,
            "reasoning_output_tokens": reasoning}},
    ]
    return "".join(json.dumps(l) + "\n" for l in lines)


def claude_stream(text, input_tokens=1000, cache_read=0, output=50, cost=0.01,
                  session="a12149e5-57b9-4101-8896-0e79223f8ed2", model="claude-opus-4-8",
                  is_error=False, status=None):
    usage = {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": cache_read, "output_tokens": output}
    lines = [
        {"type": "system", "subtype": "init", "session_id": session, "model": model,
         "tools": [], "permissionMode": "default"},
        {"type": "assistant", "message": {"id": "m1", "type": "message", "role": "assistant",
                                          "model": model,
                                          "content": [{"type": "text", "text": text}],
                                          "usage": usage}, "session_id": session},
        {"type": "result", "subtype": "success", "is_error": is_error,
         "api_error_status": status, "result": text, "session_id": session,
         "total_cost_usd": cost, "usage": usage, "num_turns": 1,
         "modelUsage": {model: {"inputTokens": input_tokens, "outputTokens": output,
                                "cacheReadInputTokens": cache_read,
                                "cacheCreationInputTokens": 0, "costUSD": cost}}},
    ]
    return "".join(json.dumps(l) + "\n" for l in lines)


def gemini_stream(text, input_tokens=1000, cached=0, output=50,
                  session="c0ffee00-0000-4000-8000-000000000001", model="gemini-2.5-pro"):
    lines = [
        {"type": "init", "timestamp": "t", "session_id": session, "model": "auto"},
        {"type": "message", "timestamp": "t", "role": "user", "content": "(prompt)"},
        {"type": "message", "timestamp": "t", "role": "assistant", "content": text, "delta": True},
        {"type": "result", "timestamp": "t", "status": "success",
         "stats": {"total_tokens": input_tokens + output, "input_tokens": input_tokens,
                   "output_tokens": output, "cached": cached, "input": input_tokens - cached,
                   "duration_ms": 10, "tool_calls": 0,
                   "models": {model: {"total_tokens": input_tokens + output,
                                      "input_tokens": input_tokens, "output_tokens": output,
                                      "cached": cached, "input": input_tokens - cached}}}},
    ]
    return "".join(json.dumps(l) + "\n" for l in lines)


def alive(pid):
    """True while pid is a running process; a zombie (dead, not yet reaped by
    whoever inherited it) is not running."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def claude_rejected_stream(resets_in, session="5f0c9a51-0000-4000-8000-000000000001",
                           status="rejected"):
    """claude's stream of a call its quota refused: a rate_limit_event (the shape of
    claude 2.1.332's bundle) whose reset is resets_in seconds away, then the 429 result.
    status "allowed_warning": the quota only warned, and the 429 is another limit's."""
    return "\n".join(json.dumps(o) for o in (
        {"type": "system", "subtype": "init", "session_id": session, "model": "claude-opus-5-5",
         "claude_code_version": "2.1.332"},
        {"type": "rate_limit_event", "rate_limit_info": {
            "status": status, "resetsAt": int(time.time()) + resets_in,
            "rateLimitType": "five_hour", "utilization": 1.0}, "uuid": "u",
         "session_id": session},
        {"type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
         "result": "API Error: Request rejected (429) · rate limited", "session_id": session,
         "total_cost_usd": 0, "usage": {"input_tokens": 0, "output_tokens": 0}})) + "\n"


STREAMS = {"codex": codex_stream, "claude": claude_stream, "gemini": gemini_stream}


class Sandbox:
    """A temp dir holding a git work tree (`work`), fixtures and the fake's log."""

    def __init__(self, git=True):
        self.root = tempfile.mkdtemp(prefix="agentrun-cli-")
        # Removed when the sandbox goes, also one a test made without `with` (those
        # were left in /tmp, run after run).
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.root, True)
        self.work = os.path.join(self.root, "work")
        os.mkdir(self.work)
        self.log = os.path.join(self.root, "calls.jsonl")
        self.state = os.path.join(self.root, "state")
        self.n_fixtures = 0
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("FAKE_CLI_", "AGENTRUN_"))}
        self.env.update({
            "AGENTRUN_CLAUDE_BIN": os.path.join(FAKE_BIN_DIR, "claude"),
            "AGENTRUN_CODEX_BIN": os.path.join(FAKE_BIN_DIR, "codex"),
            "AGENTRUN_GEMINI_BIN": os.path.join(FAKE_BIN_DIR, "gemini"),
            "FAKE_CLI_LOG": self.log,
            "FAKE_CLI_STATE": self.state,
            "XDG_CONFIG_HOME": os.path.join(self.root, "config"),
            "XDG_CACHE_HOME": os.path.join(self.root, "xdg-cache"),  # gemini's private homes
            "NO_COLOR": "1",
            # A repository above the temp directory (a CI machine's) is not ours.
            "GIT_CEILING_DIRECTORIES": os.path.dirname(self.root),
        })
        if git:
            self.git("init", "-q", ".")
            self.write("README", "hello\n")
            self.git("add", "README")
            self.git("commit", "-q", "-m", "init")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._cleanup()

    def git(self, *args):
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
             "-c", "init.defaultBranch=main", *args],
            cwd=self.work, check=True, capture_output=True, text=True).stdout

    def write(self, rel, text, base=None):
        path = os.path.join(base or self.work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def fixture(self, content):
        self.n_fixtures += 1
        return self.write(f"fixture{self.n_fixtures}.jsonl", content, base=self.root)

    def answers(self, provider, texts, **usage):
        """Call N of the fake CLI answers texts[N] in `provider`'s stream format."""
        paths = [self.fixture(STREAMS[provider](t, **usage)) for t in texts]
        self.env["FAKE_CLI_FIXTURE"] = ",".join(paths)

    def run(self, *args, provider="codex", input=None, timeout=60, env=None):
        e = dict(self.env)
        if provider:
            e["AGENTRUN_PROVIDER"] = provider
        if env:
            e.update(env)
        return subprocess.run([AGENTRUN, *args], cwd=self.work, env=e, input=input,
                              capture_output=True, text=True, timeout=timeout)

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as f:
            return [json.loads(l) for l in f if l.strip()]
