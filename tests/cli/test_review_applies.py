"""The review gate, round 4 (issue 57): the gate covers what git would apply, and every
answer the model gave. Part of the hostile-change corpus (test_review_hostile.py is its
first part): each case asserts the exit status, the coverage the json output reports
and, where a file is reviewed, that its hostile bytes reached the model.

- a rename or copy carries content the gate could not have read into a reviewed name
  (an excluded file, a binary one, a Git LFS pointer, a too big one): the new side is
  sent whole, as an addition, or, in a patch, it is not reviewed;
- a mailed patch series (several messages, base64 or quoted-printable bodies) is
  covered as `git am` applies it, and what git cannot read is refused;
- a reply with several answers: their findings are the union, the verdict the
  strictest, and the result and stderr say so."""
import isolated  # noqa: F401 (first: no machine CLI, login or HOME)
import json
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Sandbox  # noqa: E402
from test_review import diff_of, issue, review  # noqa: E402
from test_review_hostile import EVIL, PROVIDERS, Base, coverage  # noqa: E402


def fenced(value):
    return "```json\n" + json.dumps(value) + "\n```"


def answer(passed, summary, issues=()):
    return {"passed": passed, "summary": summary, "issues": list(issues)}


class EveryAnswerCounts(Base):
    """Issue 57 #3: a reply with several answers fitting the review contract is read
    whole: the findings are their union (by fingerprint), the verdict the strictest."""

    def setUp(self):
        super().setUp()
        self.sb.write("app.c", EVIL + "\n")
        self.critical = issue("app.c", 1, "critical", "runs curl | sh")

    def run_all(self, reply, status, *args):
        docs = []
        for provider in PROVIDERS:
            with self.subTest(provider=provider):
                p, doc = self.review_json(*args, provider=provider, answer=reply)
                self.assertEqual(p.returncode, status, p.stderr)
                self.assertFalse(doc["degraded"])
                self.assertEqual(len(doc["calls"]), 1)  # no repair call for it
                docs.append((p, doc))
        return docs

    def test_a_draft_pass_then_a_final_critical_finding_fails(self):
        # The case of the issue: a draft block that passes, then the final answer.
        reply = ("Draft:\n" + fenced(answer(True, "looks fine")) + "\n\nOn reflection:\n" +
                 fenced(answer(False, "runs a shell", [self.critical])))
        for p, doc in self.run_all(reply, 1):
            self.assertEqual([(i["file"], i["severity"]) for i in doc["issues"]],
                             [("app.c", "critical")])
            self.assertFalse(doc["passed"])
            self.assertEqual(doc["answers"], 2)
            self.assertEqual(doc["summary"], "looks fine\nruns a shell")
            self.assertTrue(any("held 2 answers" in n for n in doc["notes"]), doc["notes"])
            self.assertIn("the reply held 2 answers", p.stderr)

    def test_the_order_does_not_matter_and_bare_values_count_too(self):
        reply = (json.dumps(answer(False, "runs a shell", [self.critical])) +
                 "\nor, to be kind:\n" + json.dumps(answer(True, "fine")))
        for _, doc in self.run_all(reply, 1):
            self.assertEqual([i["severity"] for i in doc["issues"]], ["critical"])
            self.assertFalse(doc["passed"])
            self.assertEqual(doc["answers"], 2)

    def test_findings_are_the_union_by_fingerprint(self):
        high = issue("app.c", 1, "high", "no error check")
        low = issue("app.c", 1, "low", "naming")
        # The same finding in two answers (reworded only in case and numbers) is one; a
        # finding one answer holds twice stays twice; the others all stand.
        a1 = answer(False, "one", [self.critical, high, high])
        a2 = answer(False, "two", [dict(self.critical, message="Runs curl | SH", line=7), low])
        a3 = answer(False, "one", [high])
        reply = "\n".join(fenced(a) for a in (a1, a2, a3))
        for _, doc in self.run_all(reply, 1):
            got = sorted((i["severity"], i["message"]) for i in doc["issues"])
            self.assertEqual(got, [("critical", "runs curl | sh"), ("high", "no error check"),
                                   ("high", "no error check"), ("low", "naming")])
            self.assertEqual(len({i["fingerprint"] for i in doc["issues"]}), 4)
            self.assertEqual(doc["answers"], 3)
            self.assertEqual(doc["summary"], "one\ntwo")

    def test_a_second_answer_that_passes_never_undoes_a_failing_first(self):
        reply = fenced(answer(False, "no")) + "\n" + fenced(answer(True, "yes"))
        for _, doc in self.run_all(reply, 1):
            self.assertFalse(doc["passed"])
            self.assertEqual(doc["issues"], [])
        # Two passing answers pass.
        reply = fenced(answer(True, "yes")) + "\n" + fenced(answer(True, "still yes"))
        for _, doc in self.run_all(reply, 0):
            self.assertTrue(doc["passed"])
            self.assertEqual(doc["answers"], 2)

    def test_a_second_answer_with_a_broken_envelope_still_counts(self):
        # The final answer forgot `passed`: its finding is judged alone and stands.
        reply = fenced(answer(True, "fine")) + "\n" + fenced({"issues": [self.critical]})
        for p, doc in self.run_all(reply, 1):
            self.assertEqual([i["severity"] for i in doc["issues"]], ["critical"])
            self.assertEqual(doc["answers"], 2)
            self.assertTrue(any(n.startswith("answer 2: /passed") for n in doc["notes"]),
                            doc["notes"])

    def test_the_chosen_answer_counts_when_only_repair_reads_it(self):
        # The pipeline takes a value only repair can read (a trailing comma) over one that
        # parses but lacks its envelope: both count, and the critical finding stands.
        reply = ('{"passed": true, "summary": "ok", "issues": [],}\n' +
                 json.dumps({"issues": [self.critical]}))
        for _, doc in self.run_all(reply, 1):
            self.assertEqual([i["severity"] for i in doc["issues"]], ["critical"])
            self.assertEqual(doc["answers"], 2)
            self.assertEqual(doc["summary"], "ok")

    def test_a_value_that_is_no_answer_is_named_not_dropped_silently(self):
        reply = fenced(answer(True, "fine")) + "\nFor reference: " + json.dumps({"k": 1})
        for p, doc in self.run_all(reply, 0):
            self.assertEqual(doc["answers"], 1)
            self.assertTrue(any("1 JSON value that is no review answer" in n
                                for n in doc["notes"]), doc["notes"])
            self.assertIn("no review answer", p.stderr)

    def test_one_answer_is_read_as_before(self):
        for p, doc in self.run_all(review(False, "x", [self.critical]), 1):
            self.assertEqual(doc["answers"], 1)
            self.assertEqual(doc["notes"], [])
            self.assertNotIn("answers", p.stderr)

    def test_every_chunk_counts_its_answers(self):
        self.sb.write("b.c", EVIL.replace("f(", "g(") + "\n" * 3)
        reply = fenced(answer(True, "draft")) + "\n" + fenced(answer(False, "x", [self.critical]))
        for provider in PROVIDERS:
            with self.subTest(provider=provider):
                self.sb.answers(provider, [reply, reply])
                if os.path.exists(self.sb.state):
                    os.unlink(self.sb.state)
                p = self.sb.run("review", "--format", "json", "--max-chunk-bytes", "200",
                                provider=provider)
                doc = json.loads(p.stdout)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertEqual(doc["chunks"], 2)
                self.assertEqual(doc["answers"], 4)
                self.assertEqual(len(doc["issues"]), 2)


def c_lines(n, evil_at=None, prefix="f"):
    """n lines of C, the evil one at index evil_at."""
    lines = [f"int {prefix}{i}(void) {{ return {i}; }}" for i in range(n)]
    if evil_at is not None:
        lines[evil_at] = EVIL
    return "\n".join(lines) + "\n"


class RenamesCarryNothingUnread(Base):
    """Issue 57 #1: a file counts as reviewed only if the model saw all of its new
    content, or its old content was itself reviewable and the diff shows the rest. A
    rename, copy or modification whose old side the gate could not have read is sent
    whole, as an addition, when git made the diff; in a patch it is not reviewed."""

    def pr1(self, name, content, *args):
        """Pull request 1: content the gate leaves out (its rule) lands on the base."""
        self.write_bytes(name, content if isinstance(content, bytes) else content.encode())
        self.commit("pr1")
        self.sb.git("update-ref", "refs/remotes/origin/main", "HEAD")

    def pr2_rename(self, old, new, edit=("return 3;", "return 33;")):
        """Pull request 2: the rename, and one line changed (a 99% rename)."""
        os.makedirs(os.path.dirname(os.path.join(self.sb.work, new)), exist_ok=True)
        self.sb.git("mv", old, new)
        path = os.path.join(self.sb.work, new)
        with open(path, "rb") as f:
            data = f.read()
        if edit:
            data = data.replace(edit[0].encode(), edit[1].encode(), 1)
        with open(path, "wb") as f:
            f.write(data)
        self.commit("pr2")

    def why(self, doc, path):
        return [f for f in doc["files"] if f["path"] == path][0]["why"]

    def test_the_issues_case_a_lockfile_renamed_to_c_code(self):
        self.pr1("Cargo.lock", c_lines(40, evil_at=20))
        self.pr2_rename("Cargo.lock", "helper.c")
        # git shows a 99% rename and one hunk: the system() line is not in it.
        diff = self.sb.git("diff", "origin/main", "HEAD")
        self.assertIn("rename from Cargo.lock", diff)
        self.assertNotIn("system(", diff)
        doc = self.assert_gate(["origin/main...HEAD", "--"], 0, {"helper.c": ("reviewed", None)},
                               seen=["+" + EVIL, "+int f39(void)"])
        self.assertEqual(doc["files"][0]["old_path"], "Cargo.lock")
        self.assertEqual(self.why(doc, "helper.c"),
                         "sent whole, as an addition: its old side 'Cargo.lock' could not have "
                         "been reviewed (default exclude Cargo.lock)")
        sent = diff_of(self.prompts()[-1])
        self.assertIn("new file mode 100644", sent)
        self.assertNotIn("rename from", sent)
        # With the lockfile rule off, the old side was reviewable: the rename's diff is
        # what git shows, and it is enough.
        doc = self.assert_gate(["--no-default-excludes", "origin/main...HEAD", "--"], 0,
                               {"helper.c": ("reviewed", None)}, providers=("codex",))
        self.assertIsNone(self.why(doc, "helper.c"))
        self.assertIn("rename from Cargo.lock", diff_of(self.prompts()[-1]))
        self.assertNotIn(EVIL, diff_of(self.prompts()[-1]))

    def test_every_diff_git_makes_sends_it_whole(self):
        self.pr1("Cargo.lock", c_lines(40, evil_at=20))
        self.sb.git("mv", "Cargo.lock", "helper.c")
        # Staged: the index; then an edit in the working tree on top.
        cover = {"helper.c": ("reviewed", None)}
        self.assert_gate(["--staged"], 0, cover, seen=["+" + EVIL], providers=("codex",))
        self.sb.write("helper.c", c_lines(40, evil_at=20).replace("return 3;", "return 9;"))
        for args in ([], ["HEAD"], ["HEAD", "--"]):
            with self.subTest(args=args):
                doc = self.assert_gate(args, 0, cover, seen=["+" + EVIL, "return 9;"],
                                       providers=("codex",))
                self.assertIn("Cargo.lock", self.why(doc, "helper.c"))
        self.commit("pr2")
        for args in (["HEAD^!"], ["origin/main..HEAD"], ["origin/main...HEAD"]):
            with self.subTest(args=args):
                self.assert_gate(args, 0, cover, seen=["+" + EVIL], providers=("codex",))

    def test_an_old_side_left_out_by_any_rule_of_yours(self):
        self.pr1("vendor/lib.c", c_lines(40, evil_at=5))
        self.pr2_rename("vendor/lib.c", "src/lib.c")
        doc = self.assert_gate(["--exclude", "vendor/", "origin/main...HEAD", "--"], 0,
                               {"src/lib.c": ("reviewed", None)}, seen=["+" + EVIL],
                               providers=("codex",))
        self.assertIn("(--exclude vendor/)", self.why(doc, "src/lib.c"))
        doc = self.assert_gate(["--include", "src/*", "origin/main...HEAD", "--"], 0,
                               {"src/lib.c": ("reviewed", None)}, seen=["+" + EVIL],
                               providers=("codex",))
        self.assertIn("(--include: no GLOB matches)", self.why(doc, "src/lib.c"))
        # Renamed to a name your rules leave out too: excluded, nothing to fetch.
        self.assert_gate(["--exclude", "vendor/", "--exclude", "src/", "origin/main...HEAD",
                          "--"], 0, {"src/lib.c": ("excluded", "--exclude src/")},
                         providers=("codex",))

    def test_a_binary_old_side(self):
        # Binary by agentrun's rule (control bytes in a comment: a compiler reads it), let
        # through by --allow-binary; then renamed, the binary line dropped.
        blob = c_lines(40, evil_at=20) + "/* " + "\x01\x02\x03\x04" * 40 + " */\n"
        self.pr1("data.bin", blob)
        self.sb.git("mv", "data.bin", "helper.c")
        self.sb.write("helper.c", c_lines(40, evil_at=20))
        self.commit("pr2")
        doc = self.assert_gate(["--allow-binary", "origin/main...HEAD", "--"], 0,
                               {"helper.c": ("reviewed", None)}, seen=["+" + EVIL],
                               providers=("codex",))
        self.assertIn("'data.bin' could not have been reviewed (binary content)",
                      self.why(doc, "helper.c"))

    def test_a_git_lfs_pointer_renamed_into_a_name_lfs_smudges(self):
        pointer = ("version https://git-lfs.github.com/spec/v1\noid sha256:" + "cd" * 32 +
                   "\nsize 4096\n")
        self.pr1("weights.bin", pointer)
        # A pure rename (100%: no hunk) under a name .gitattributes sends through LFS.
        self.sb.write(".gitattributes", "*.c filter=lfs diff=lfs merge=lfs -text\n")
        self.sb.git("mv", "weights.bin", "helper.c")
        self.commit("pr2")
        cover = {".gitattributes": ("reviewed", None), "helper.c": ("binary", None)}
        # Left out by its old name, or judged by its old content (a pointer is binary to
        # the gate): either way the new side is sent whole, and it is a pointer.
        for args in (["--exclude", "*.bin"], []):
            with self.subTest(args=args):
                doc = self.assert_gate(args + ["origin/main...HEAD", "--"], 1, cover,
                                       providers=("codex",))
                self.assertIn("Git LFS pointer", self.why(doc, "helper.c"))
                self.assertIn("sent whole, as an addition", self.why(doc, "helper.c"))
        self.assertIn("'weights.bin' could not have been reviewed (a Git LFS pointer)",
                      self.why(doc, "helper.c"))

    def test_a_too_big_old_side(self):
        big = c_lines(3, evil_at=1) + "int pad;\n" * (500 << 10)  # 4.9 MB: too big to send
        self.pr1("gen/table.txt", big)
        self.pr2_rename("gen/table.txt", "table.c", edit=("return 2;", "return 22;"))
        doc = self.assert_gate(["--max-chunks", "100", "origin/main...HEAD", "--"], 1,
                               {"table.c": ("too_big", None)}, providers=("codex",))
        why = self.why(doc, "table.c")
        self.assertIn("larger than one call can hold", why)
        self.assertIn("'gen/table.txt' could not have been reviewed (too big to send)", why)

    def test_a_copy_of_a_file_the_gate_never_read(self):
        self.sb.git("config", "diff.renames", "copies")
        self.pr1("Cargo.lock", c_lines(40, evil_at=20))
        self.sb.write("helper.c", c_lines(40, evil_at=20).replace("return 3;", "return 33;"))
        self.sb.write("Cargo.lock", c_lines(40, evil_at=20).replace("return 5;", "return 55;"))
        self.commit("pr2")
        doc = self.assert_gate(["origin/main...HEAD", "--"], 0,
                               {"helper.c": ("reviewed", None),
                                "Cargo.lock": ("excluded", "default exclude Cargo.lock")},
                               seen=["+" + EVIL], providers=("codex",))
        [helper] = [f for f in doc["files"] if f["path"] == "helper.c"]
        self.assertEqual(helper["old_path"], "Cargo.lock")
        self.assertIn("Cargo.lock", helper["why"])

    def test_a_modification_of_an_unreadable_file_is_judged_whole(self):
        # A file the gate let through as binary (--allow-binary), then one text line
        # changed: its diff is text, but the model never read the rest.
        blob = c_lines(40, evil_at=20) + "/* " + "\x01\x02\x03\x04" * 40 + " */\n"
        self.pr1("helper.c", blob)
        self.write_bytes("helper.c", blob.replace("return 3;", "return 33;").encode())
        self.commit("pr2")
        doc = self.assert_gate(["--allow-binary", "origin/main...HEAD", "--"], 0,
                               {"helper.c": ("binary", "--allow-binary")}, providers=("codex",))
        self.assertIn("sent whole, as an addition", self.why(doc, "helper.c"))
        # Without --allow-binary it is no pass.
        self.assert_gate(["origin/main...HEAD", "--"], 1, {"helper.c": ("binary", None)},
                         providers=("codex",))

    def test_a_reviewable_old_side_keeps_the_diff(self):
        self.pr1("old.c", c_lines(40, evil_at=20))
        self.pr2_rename("old.c", "new.c")
        doc = self.assert_gate(["origin/main...HEAD", "--"], 0, {"new.c": ("reviewed", None)},
                               seen=["rename from old.c", "+int f3(void) { return 33; }"],
                               providers=("codex",))
        self.assertIsNone(self.why(doc, "new.c"))
        self.assertNotIn(EVIL, diff_of(self.prompts()[-1]))

    def test_in_a_patch_the_renamed_file_is_not_reviewed(self):
        self.pr1("Cargo.lock", c_lines(40, evil_at=20))
        self.pr2_rename("Cargo.lock", "helper.c")
        mail = self.sb.git("format-patch", "-1", "--stdout")
        for args, kw in ((["-"], {"input": mail}),
                         (["--diff-file", self.write_bytes("../pr2.patch", mail.encode())], {})):
            with self.subTest(args=args[0]):
                p, doc = self.review_json(*args, **kw)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertEqual(coverage(doc), {"helper.c": ("not_sent", None)})
                why = self.why(doc, "helper.c")
                self.assertIn("its old side 'Cargo.lock' could not have been reviewed", why)
                self.assertIn("the patch does not hold its new content whole", why)
                self.assertIn("not reviewed: helper.c", p.stderr)


def b64_message(message, encoding="base64"):
    """A git format-patch message re-sent as mailers send it: its body in a transfer
    encoding (Content-Transfer-Encoding: base64 or quoted-printable)."""
    import base64
    import quopri
    head, body = message.split("\n\n", 1)
    head = "\n".join(l for l in head.split("\n")
                     if not l.lower().startswith(("mime-version:", "content-type:",
                                                  "content-transfer-encoding:")))
    raw = body.encode()
    if encoding == "base64":
        payload = base64.encodebytes(raw).decode()
    elif encoding == "quoted-printable":
        payload = quopri.encodestring(raw).decode()
    else:
        payload = base64.encodebytes(raw).decode()
    return (head + "\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
            f"Content-Transfer-Encoding: {encoding}\n\n" + payload)


def split_mbox(mbox):
    """The messages of git format-patch --stdout output."""
    import re
    starts = [m.start() for m in re.finditer(r"^From [0-9a-f]{40} ", mbox, re.M)]
    return [mbox[a:b] for a, b in zip(starts, starts[1:] + [len(mbox)])]


class PatchesAsGitAppliesThem(Base):
    """Issue 57 #2: a patch on stdin or in a file is covered as git applies it: a
    mailbox is split and decoded as git am does (git mailsplit, git mailinfo), each
    patch's files are git apply's list, and what git cannot read is refused."""

    def setUp(self):
        super().setUp()
        self.sb.write("a.c", "int a = 1;\n")
        self.commit("one")
        self.sb.write("b.c", EVIL + "\n")
        self.commit("two")
        self.mbox = self.sb.git("format-patch", "-2", "--stdout")
        self.first, self.second = split_mbox(self.mbox)

    def gate_stdin(self, mail, status, cover, seen=(), providers=("codex",)):
        for provider in providers:
            with self.subTest(provider=provider):
                before = len(self.sb.calls())
                p, doc = self.review_json("-", provider=provider, input=mail)
                self.assertEqual(p.returncode, status, p.stderr)
                self.assertEqual(coverage(doc), cover)
                sent = "".join(diff_of(c["stdin"]) for c in self.sb.calls()[before:])
                for marker in seen:
                    self.assertIn(marker, sent)
        return p, doc

    def test_the_issues_case_a_base64_second_message(self):
        mail = self.first + b64_message(self.second)
        self.assertNotIn("system(", mail)  # nothing of b.c in clear text
        cover = {"a.c": ("reviewed", None), "b.c": ("reviewed", None)}
        p, doc = self.gate_stdin(mail, 0, cover, seen=["+int a = 1;", "+" + EVIL],
                                 providers=PROVIDERS)
        # A critical finding on the decoded file fails it, as on any other.
        answer = review(False, "shell", [issue("b.c", 1, "critical", "curl | sh")])
        p, doc = self.review_json("-", answer=answer, input=mail)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual([i["file"] for i in doc["issues"]], ["b.c"])

    def test_quoted_printable_and_a_file_on_disk(self):
        mail = b64_message(self.first, "quoted-printable") + b64_message(self.second)
        path = self.write_bytes("../series.mbox", mail.encode())
        cover = {"a.c": ("reviewed", None), "b.c": ("reviewed", None)}
        for args in (["--diff-file", path], [path]):
            with self.subTest(args=args):
                p, doc = self.review_json(*args)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(coverage(doc), cover)
                self.assertIn("+" + EVIL, diff_of(self.sb.calls()[-1]["stdin"]))

    def test_what_git_cannot_read_is_refused_never_skipped(self):
        cases = {
            "an unknown transfer encoding": (
                self.first + b64_message(self.second, "x-uuencode"),
                "Content-Transfer-Encoding 'x-uuencode', which git cannot decode"),
            "a MIME multipart message": (
                self.first + self.second.split("\n\n", 1)[0] +
                '\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n'
                "Content-Type: text/plain\n\nsee attached\n--B\nContent-Type: text/x-patch\n"
                "\n" + self.second.split("\n\n", 1)[1] + "\n--B--\n",
                "message 2 of the mailbox is a MIME multipart message"),
            "a part that is no text": (
                self.first + b64_message(self.second).replace(
                    "text/plain; charset=UTF-8", "application/octet-stream"),
                "Content-Type 'application/octet-stream', which is no text"),
            "a patch git cannot read": (
                self.first + self.second.replace("@@ -0,0 +1 @@", "@@ -0,0 +1,5 @@"),
                "git apply cannot read patch 2 of the input"),
        }
        for what, (mail, said) in cases.items():
            with self.subTest(what=what):
                before = len(self.sb.calls())
                p, doc = self.review_json("-", input=mail)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(said, p.stderr)
                self.assertEqual(len(self.sb.calls()), before)  # no call

    def test_a_plain_patch_is_read_by_git_apply(self):
        diff = self.sb.git("diff", "HEAD~2", "HEAD")
        cover = {"a.c": ("reviewed", None), "b.c": ("reviewed", None)}
        self.gate_stdin(diff, 0, cover, seen=["+" + EVIL])
        # A single mail without an mbox "From " line (a saved message) is still mail.
        mail = b64_message(self.second).split("\n", 1)[1]
        self.gate_stdin(mail, 0, {"b.c": ("reviewed", None)}, seen=["+" + EVIL])
        # Not a diff at all is still said so.
        p, doc = self.review_json("-", input="just a log line\n")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("is not a diff", p.stderr)

    def test_a_patch_read_from_a_subdirectory_names_the_files_it_changes(self):
        # git apply in a subdirectory of a work tree prefixes every path of a patch with
        # that subdirectory: the patch is read at the top, where git am applies it.
        diff = self.sb.git("diff", "HEAD~2", "HEAD")
        os.makedirs(os.path.join(self.sb.work, "sub", "deeper"))
        cover = {"a.c": ("reviewed", None), "b.c": ("reviewed", None)}
        for where in ("sub", "sub/deeper"):
            with self.subTest(where=where):
                p, doc = self.review_json("-C", where, "-", input=diff)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(coverage(doc), cover)

    def test_variants_of_a_mailbox(self):
        cover = {"a.c": ("reviewed", None), "b.c": ("reviewed", None)}
        # The encoding's name in any case; CRLF line ends, as a Windows mailer sends them.
        upper = b64_message(self.second).replace("base64", "BASE64")
        self.gate_stdin(self.first + upper, 0, cover, seen=["+" + EVIL])
        crlf = (self.first + b64_message(self.second, "quoted-printable")).replace("\n", "\r\n")
        self.gate_stdin(crlf, 0, cover, seen=["+" + EVIL])
        # A cover letter between the patches: its text is read, it changes no file.
        letter = ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
                  "From: t <t@example.com>\nSubject: [PATCH 0/2] cover\n\nTwo patches.\n\n"
                  "t (2):\n  one\n  two\n\n a.c | 1 +\n b.c | 1 +\n 2 files changed\n\n")
        self.gate_stdin(self.first + letter + b64_message(self.second), 0, cover,
                        seen=["Two patches.", "+" + EVIL])
        # The same file in two messages: covered twice, once per patch that changes it.
        self.sb.write("b.c", EVIL + "\nint more;\n")
        self.commit("three")
        mail = self.sb.git("format-patch", "-2", "--stdout")
        m2, m3 = split_mbox(mail)
        p, doc = self.review_json("-", input=m2 + b64_message(m3))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([f["path"] for f in doc["files"]], ["b.c", "b.c"])

    def test_a_section_git_does_not_apply_names_no_file(self):
        # File headers with no hunk (a commit message quoting a diff's header lines) are
        # a file section to a diff parser and nothing to git apply: no file of that name
        # is covered, and the text still reaches the model with its neighbour.
        quoted = "--- a/never.c\n+++ b/never.c\nas the old header said\n"
        diff = "intro\n" + quoted + self.sb.git("diff", "HEAD~1", "HEAD")
        self.gate_stdin(diff, 0, {"b.c": ("reviewed", None)}, seen=["+++ b/never.c", EVIL])
        fake = self.second.replace("Subject: [PATCH 2/2] two\n",
                                   "Subject: [PATCH 2/2] two\n\nsee:\n" + quoted)
        self.gate_stdin(self.first + fake, 0,
                        {"a.c": ("reviewed", None), "b.c": ("reviewed", None)},
                        seen=["+++ b/never.c", EVIL])

NAMES = ["a.c", "src/b.c", "sp ace.c", "\u00fcn\u00efc\u00f6de.c", "-dash.c", "dir/x y/z.c",
         "Cargo.lock", "tab\there.c", "quo\"te.c", "back\\slash.c", "lead.c ", "deep/er/f.h"]


class GitsListIsTheCoverage(unittest.TestCase):
    """The property (issue 57 #2): for generated patches and mailboxes, the files a
    review covers (every coverage entry's path and old path, whatever its status) are
    exactly the files `git am` (a mailbox) or `git apply` (a plain patch) changes."""

    ROUNDS = 16

    def git(self, sb, *args, cwd=None, binary=False):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                               *args], cwd=cwd or sb.work, check=True, capture_output=True,
                              text=not binary).stdout

    def write(self, sb, rel, data):
        path = os.path.join(sb.work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def content(self, rng, binary=False):
        if binary:
            return bytes(rng.randrange(256) for _ in range(rng.randrange(64, 400)))
        n = rng.randrange(1, 30)
        return "".join(f"int v{rng.randrange(1000)} = {i};\n" for i in range(n)).encode()

    def change(self, sb, rng, files):
        """One commit of random operations; returns nothing (git knows what it did)."""
        for _ in range(rng.randrange(1, 4)):
            op = rng.choice(["add", "add", "modify", "modify", "delete", "rename", "mode",
                             "binary", "empty"])
            present = sorted(files)
            free = [n for n in NAMES if n not in files]
            if op in ("modify", "delete", "rename", "mode") and not present:
                op = "add"
            if op in ("add", "binary", "empty", "rename") and not free:
                op = "modify"
            if op in ("add", "binary", "empty"):
                name = rng.choice(free)
                data = b"" if op == "empty" else self.content(rng, op == "binary")
                self.write(sb, name, data)
                files[name] = data
            elif op == "modify":
                name = rng.choice(present)
                lines = files[name].split(b"\n")
                lines.insert(rng.randrange(len(lines) + 1), b"int changed%d;" % rng.randrange(99))
                files[name] = b"\n".join(lines)
                self.write(sb, name, files[name])
            elif op == "delete":
                name = rng.choice(present)
                self.git(sb, "rm", "-q", "--", name)
                del files[name]
            elif op == "rename":
                old, new = rng.choice(present), rng.choice(free)
                os.makedirs(os.path.dirname(os.path.join(sb.work, new)), exist_ok=True)
                self.git(sb, "mv", "--", old, new)
                files[new] = files.pop(old)
                if rng.random() < 0.5 and files[new]:
                    files[new] += b"int moved;\n"
                    self.write(sb, new, files[new])
            elif op == "mode":
                name = rng.choice(present)
                path = os.path.join(sb.work, name)
                os.chmod(path, os.stat(path).st_mode ^ 0o111)
            self.git(sb, "add", "-A")
        self.git(sb, "commit", "-q", "--allow-empty", "-m", "change")

    def changed(self, sb, clone, base):
        """The paths the commits after base in clone change, both names of a rename."""
        out = self.git(sb, "rev-list", "--reverse", f"{base}..HEAD", cwd=clone)
        paths = set()
        for c in out.split():
            names = self.git(sb, "diff-tree", "-r", "--no-renames", "--name-only", "-z",
                             "--root", f"{c}^", c, cwd=clone)
            paths |= {n for n in names.split("\0") if n}
        return paths

    def covered(self, sb, data):
        if os.path.exists(sb.state):
            os.unlink(sb.state)
        sb.answers("codex", [review()] * 8)
        p = subprocess.run([os.environ.get("AGENTRUN", "agentrun"), "review", "--format", "json", "--no-default-excludes",
                            "--allow-binary", "--max-chunks", "100", "-"], cwd=sb.work,
                           env=dict(sb.env, AGENTRUN_PROVIDER="codex"), input=data,
                           capture_output=True, timeout=120)
        self.assertIn(p.returncode, (0, 1), p.stderr.decode(errors="replace"))
        doc = json.loads(p.stdout)
        paths = set()
        for f in doc["files"]:
            paths.add(f["path"])
            if f["old_path"]:
                paths.add(f["old_path"])
        return paths, doc

    def test_property_the_covered_files_are_exactly_the_files_git_changes(self):
        rng = random.Random(57)
        for r in range(self.ROUNDS):
            with Sandbox() as sb, self.subTest(round=r):
                files = {}
                for _ in range(rng.randrange(2, 6)):
                    name = rng.choice(NAMES)
                    files[name] = self.content(rng, rng.random() < 0.15)
                    self.write(sb, name, files[name])
                self.git(sb, "add", "-A")
                self.git(sb, "commit", "-q", "-m", "base")
                base = self.git(sb, "rev-parse", "HEAD").strip()
                for _ in range(rng.randrange(1, 4)):
                    self.change(sb, rng, files)
                renames = rng.choice([["-M"], ["--no-renames"], ["-C", "-M"]])
                clone = os.path.join(sb.root, "clone")

                # A mailbox, some of its messages in a transfer encoding.
                mbox = self.git(sb, "format-patch", *renames, "--stdout", f"{base}..HEAD",
                                binary=True).decode("utf-8", "surrogateescape")
                msgs = split_mbox(mbox)
                msgs = [b64_message(m, rng.choice(["base64", "quoted-printable"]))
                        if rng.random() < 0.4 else m for m in msgs]
                mail = "".join(msgs).encode("utf-8", "surrogateescape")
                subprocess.run(["git", "clone", "-q", sb.work, clone], check=True)
                self.git(sb, "checkout", "-q", base, cwd=clone)
                subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "am", "-q"],
                               cwd=clone, input=mail, check=True, capture_output=True)
                want = self.changed(sb, clone, base)
                got, doc = self.covered(sb, mail)
                self.assertEqual(got, want, (renames, doc["files"]))

                # The same change as one plain patch, as git apply takes it.
                diff = self.git(sb, "diff", "--binary", *renames, base, "HEAD", binary=True)
                subprocess.run(["git", "reset", "-q", "--hard", base], cwd=clone, check=True)
                subprocess.run(["git", "apply", "--index"], cwd=clone, input=diff, check=True)
                out = self.git(sb, "diff", "--cached", "--no-renames", "--name-only", "-z",
                               cwd=clone)
                want = {n for n in out.split("\0") if n}
                got, doc = self.covered(sb, diff)
                self.assertEqual(got, want, (renames, doc["files"]))


if __name__ == "__main__":
    unittest.main()
