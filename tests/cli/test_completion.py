"""The bash, zsh and fish completions generated from the option tables.

Expected words come from agentrun-docgen's JSON dump of the same tables, so the
tests follow the tables; they check that the scripts offer them.
"""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import shutil
import subprocess
import tempfile
import unittest

AGENTRUN = os.environ.get("AGENTRUN", "agentrun")
DOCGEN = os.environ.get("AGENTRUN_DOCGEN", "agentrun-docgen")
BUILD_ROOT = os.environ.get("AGENTRUN_BUILD_ROOT", ".")
COMPLETIONS = os.path.join(BUILD_ROOT, "completions")
BASH = os.path.join(COMPLETIONS, "agentrun")
ZSH = os.path.join(COMPLETIONS, "_agentrun")
FISH = os.path.join(COMPLETIONS, "agentrun.fish")


def tables():
    p = subprocess.run([DOCGEN, "json"], capture_output=True, text=True, check=True)
    return {c["name"]: c for c in json.loads(p.stdout)["commands"]}


def prompt_names():
    p = subprocess.run([AGENTRUN, "prompts", "list"], capture_output=True, text=True, check=True)
    return sorted(line.split()[0] for line in p.stdout.splitlines() if line.strip())


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRUN_")}
    e["PATH"] = os.path.dirname(os.path.abspath(AGENTRUN)) + os.pathsep + e.get("PATH", "")
    return e


def all_option_words(cmd):
    words = set()
    for o in cmd["options"]:
        words.add("--" + o["long"])
        if o.get("short"):
            words.add("-" + o["short"])
    return words


class Bash(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cmds = tables()

    def complete(self, *words, cwd=None):
        """COMPREPLY for the command line `words`, the cursor in the last word."""
        script = ('source "$1" || exit 1; shift; COMP_WORDS=("$@"); '
                  'COMP_CWORD=$(($# - 1)); _agentrun; printf "%s\\n" "${COMPREPLY[@]}"')
        p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", BASH,
                            AGENTRUN, *words], capture_output=True, text=True, env=env(),
                           cwd=cwd, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return sorted(w for w in p.stdout.split("\n") if w)

    def test_loads_without_error_and_registers_agentrun(self):
        p = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                            'source "$1" && complete -p agentrun', "bash", BASH],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertEqual(p.stdout.strip(), "complete -F _agentrun agentrun")

    def test_first_word_completes_commands(self):
        self.assertEqual(self.complete(""),
                         sorted(list(self.cmds) + ["help", "--help", "--version"]))
        self.assertEqual(self.complete("re"), ["review"])

    def test_review_dash_dash_f_gives_the_review_flags_starting_with_f(self):
        want = sorted(w for w in all_option_words(self.cmds["review"]) if w.startswith("--f"))
        self.assertIn("--format", want)
        self.assertIn("--fail-on", want)
        self.assertEqual(self.complete("review", "--f"), want)

    def test_a_dash_gives_every_flag_of_every_command(self):
        for name, cmd in self.cmds.items():
            with self.subTest(command=name):
                self.assertEqual(self.complete(name, "-"), sorted(all_option_words(cmd)))

    def test_every_listed_value_completes_after_its_option(self):
        n = 0
        for name, cmd in self.cmds.items():
            for o in cmd["options"]:
                v = o.get("values")
                if not v or v.startswith("@"):
                    continue
                with self.subTest(command=name, option=o["long"]):
                    want = sorted(v.split("|"))
                    self.assertEqual(self.complete(name, "--" + o["long"], ""), want)
                    self.assertEqual(self.complete(name, "--" + o["long"], "=", ""), want)
                    if o.get("short"):
                        self.assertEqual(self.complete(name, "-" + o["short"], ""), want)
                    n += 1
        self.assertGreater(n, 5)

    def test_format_of_review_offers_its_formats(self):
        self.assertEqual(self.complete("review", "--format", ""),
                         ["checkstyle", "github", "gitlab", "json", "rdjsonl", "sarif", "text"])
        self.assertEqual(self.complete("review", "--fail-on", "h"), ["high"])

    def test_prompt_names_come_from_prompts_list(self):
        names = prompt_names()
        self.assertIn("review", names)
        self.assertEqual(self.complete("run", "--template", ""), names)
        self.assertEqual(self.complete("prompts", ""), ["list", "show"])
        self.assertEqual(self.complete("prompts", "show", ""), names)
        self.assertEqual(self.complete("prompts", "list", ""), [])

    def test_subcommands_complete_to_their_words_not_files(self):
        # issue 31: `agentrun cache <TAB>` completed file names.
        self.assertEqual(self.complete("cache", ""), ["clear", "stats"])
        self.assertEqual(self.complete("cache", "s"), ["stats"])
        self.assertEqual(self.complete("cache", "stats", ""), [])

    def test_every_command_says_what_its_operands_are(self):
        # The completions are not generated for a command the operands table lacks.
        p = subprocess.run([os.environ["AGENTRUN_DOCGEN"], "completion", "bash"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_dir_options_complete_directories_and_file_options_files(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "subdir"))
            open(os.path.join(d, "somefile"), "w").close()
            self.assertEqual(self.complete("review", "-C", "s", cwd=d), ["subdir"])
            self.assertEqual(self.complete("review", "--instructions", "s", cwd=d),
                             ["somefile", "subdir"])
            self.assertEqual(self.complete("prioritize", "s", cwd=d), ["subdir"])
            self.assertEqual(self.complete("batch", "-j", "4", "s", cwd=d),
                             ["somefile", "subdir"])

    def test_review_operand_completes_revisions_and_files(self):
        with tempfile.TemporaryDirectory() as d:
            git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
            subprocess.run([*git, "init", "-q", "-b", "main", d], check=True)
            open(os.path.join(d, "main.c"), "w").close()
            subprocess.run([*git, "-C", d, "add", "main.c"], check=True)
            subprocess.run([*git, "-C", d, "commit", "-q", "-m", "x"], check=True)
            subprocess.run([*git, "-C", d, "branch", "mainline"], check=True)
            self.assertEqual(self.complete("review", "mai", cwd=d),
                             ["main", "main.c", "mainline"])
            self.assertEqual(self.complete("review", "--staged", "H", cwd=d), ["HEAD"])

    def test_options_with_free_values_complete_nothing(self):
        self.assertEqual(self.complete("review", "--timeout", ""), [])
        self.assertEqual(self.complete("run", "-m", ""), [])

    def test_help_completes_command_names(self):
        self.assertEqual(self.complete("help", ""), sorted(self.cmds))


@unittest.skipUnless(shutil.which("zsh"), "zsh is not installed")
class Zsh(unittest.TestCase):
    def test_syntax(self):
        p = subprocess.run(["zsh", "-n", ZSH], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")

    def test_every_command_and_option_is_in_the_script(self):
        with open(ZSH, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("#compdef agentrun\n"))
        for name, cmd in tables().items():
            self.assertRegex(text, r"\n +%s\)\n +_arguments " % name)
            for o in cmd["options"]:
                self.assertIn("--" + o["long"], text)

    # Types a line and TAB into an interactive zsh on a pseudo-terminal and prints
    # what the terminal showed, once $4 appears in it (or after 10 s).
    ZPTY = r"""
zmodload zsh/zpty || exit 77
zpty z zsh -f -i
zpty -w z "PS1='> '; fpath=($1 \$fpath); path=($2 \$path); autoload -Uz compinit; compinit -u -D; print READY"
while zpty -r z line; do [[ $line == *READY* && $line != *print* ]] && break; done
zpty -w -n z "$3"$'\t'
out=
for i in {1..50}; do
    while zpty -r -t z chunk; do out+=$chunk; done
    [[ $out == *$4* ]] && break
    sleep 0.2
done
zpty -w -n z $'\C-c'
zpty -d z
print -r -- "$out"
"""

    def complete(self, line, sentinel):
        p = subprocess.run(["zsh", "-f", "-c", self.ZPTY, "zsh", COMPLETIONS,
                            os.path.dirname(os.path.abspath(AGENTRUN)), line, sentinel],
                           capture_output=True, text=True, timeout=60, env=env())
        if p.returncode == 77:
            self.skipTest("zsh has no zpty module")
        return p.stdout

    def test_completes_flags_with_their_help_and_values(self):
        review = tables()["review"]
        out = self.complete("agentrun review --f", "--format")
        for o in review["options"]:
            if o["long"].startswith("f"):
                self.assertIn("--" + o["long"], out)
        self.assertIn("text, json, sarif or github", out)  # the help as the description
        out = self.complete("agentrun review --format ", "sarif")
        for v in ("text", "json", "sarif", "github"):
            self.assertIn(v, out)
        names = prompt_names()
        out = self.complete("agentrun prompts show ", names[-1])
        for n in names:
            self.assertIn(n, out)
        out = self.complete("agentrun cache ", "stats")
        self.assertIn("clear", out)

    def test_autoloads_with_compinit(self):
        with tempfile.TemporaryDirectory() as d:
            script = ('fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2/dump"; '
                      'print -r -- ${_comps[agentrun]}')
            p = subprocess.run(["zsh", "-f", "-c", script, "zsh", COMPLETIONS, d],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.strip(), "_agentrun")


@unittest.skipUnless(shutil.which("fish"), "fish is not installed")
class Fish(unittest.TestCase):
    def complete(self, line):
        p = subprocess.run(["fish", "--no-config", "-c", 'source $argv[1]; complete -C $argv[2]',
                            FISH, line], capture_output=True, text=True, env=env(), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return sorted(l.split("\t")[0] for l in p.stdout.splitlines() if l)

    def test_syntax(self):
        p = subprocess.run(["fish", "--no-config", "-n", FISH], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")

    def test_commands_flags_and_values(self):
        cmds = tables()
        self.assertEqual(self.complete("agentrun re"), ["review"])
        want = sorted(w for w in all_option_words(cmds["review"]) if w.startswith("--f"))
        self.assertEqual(self.complete("agentrun review --f"), want)
        self.assertEqual(self.complete("agentrun review --format "),
                         ["checkstyle", "github", "gitlab", "json", "rdjsonl", "sarif", "text"])
        self.assertEqual(self.complete("agentrun prompts "), ["list", "show"])
        self.assertEqual(self.complete("agentrun prompts show "), prompt_names())
        self.assertEqual(self.complete("agentrun cache "), ["clear", "stats"])


if __name__ == "__main__":
    unittest.main()
