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
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
        doc = self.assert_gate(["--exclude", "*.bin", "origin/main...HEAD", "--"], 1, cover,
                               providers=("codex",))
        self.assertIn("Git LFS pointer", self.why(doc, "helper.c"))
        self.assertIn("sent whole, as an addition", self.why(doc, "helper.c"))

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


if __name__ == "__main__":
    unittest.main()
