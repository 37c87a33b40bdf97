"""Importing this module cuts the test process off from the machine's model CLIs and
their logins, so a suite passes (or skips) the same whatever claude, codex or gemini,
credentials and HOME the machine has (issue 49). Every tests/cli/test_*.py imports it
first (test_docs.py checks that); what the test starts inherits the result:

- PATH keeps its order but loses every directory holding a `claude`, `codex` or `gemini`;
  the other programs of such a directory (git, node, python3 in /usr/local/bin) stay
  reachable through one private directory of links put where the first of them was;
- HOME is a fresh empty directory (no ~/.claude, ~/.codex, ~/.gemini, no git config);
- the variables that carry the CLIs' credentials or move their homes are removed, except
  the fake codex login tests/meson.build sets (CODEX_API_KEY) on purpose.

A test that wants a CLI on PATH or a login puts the fake one there itself.
"""
import atexit
import os
import shutil
import tempfile

CLI_NAMES = ("claude", "codex", "gemini")

# What the adapters read for a login, or to find their homes (src/provider/*.c).
MACHINE_VARS = (
    "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
    "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME",
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_HOME", "GEMINI_CLI_USE_COMPUTE_ADC", "CLOUD_SHELL",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
)


def holds_a_cli(directory):
    return any(os.path.isfile(os.path.join(directory, n)) and
               os.access(os.path.join(directory, n), os.X_OK) for n in CLI_NAMES)


def machine_free_path(path, links):
    """path without the directories that hold a CLI; their other programs are linked
    into `links`, which takes the place of the first such directory."""
    out, placed = [], False
    for d in path.split(os.pathsep):
        if not d:
            continue
        if not holds_a_cli(d):
            out.append(d)
            continue
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            target, link = os.path.join(d, n), os.path.join(links, n)
            if n in CLI_NAMES or os.path.lexists(link) or not os.access(target, os.X_OK):
                continue
            os.symlink(os.path.realpath(target), link)
        if not placed:
            out.append(links)
            placed = True
    return os.pathsep.join(out)


def _isolate():
    root = tempfile.mkdtemp(prefix="agentrun-test-machine-")
    atexit.register(shutil.rmtree, root, True)
    links, home = os.path.join(root, "bin"), os.path.join(root, "home")
    os.mkdir(links)
    os.mkdir(home)
    os.environ["PATH"] = machine_free_path(os.environ.get("PATH", "/usr/bin:/bin"), links)
    os.environ["HOME"] = home
    for v in MACHINE_VARS:
        os.environ.pop(v, None)


_isolate()
