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


if __name__ == "__main__":
    unittest.main()
