/*
 * Reviews: the review object a model returns (prompts/review.md's contract),
 * what a chunk's run result means for it (a review, a degraded review, or a
 * failure), the merge of chunk reviews, and the verdict.
 *
 * Protocol for one review (src/review/fanout.c follows it for ar_review_start()):
 *   1. per chunk: ar_review_from_result() on the chunk's run result;
 *   2. ar_review_merge() of the chunk reviews, in chunk order, which also
 *      flags issues outside the diff;
 *   3. ar_review_locate(): repository paths, clamped lines, fingerprints;
 *   4. with a baseline: ar_baseline_load(), ar_review_apply_baseline();
 *   5. ar_review_verdict() for the exit status;
 *   6. ar_review_finish() on every review.
 * No function here prints.
 */
#ifndef AR_REVIEW_REVIEW_H
#define AR_REVIEW_REVIEW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "agentrun/agentrun.h"
#include "agentrun/review.h"
#include "review/diff.h"

/* The severities, the finding, the review object and the verdict are public
 * (agentrun/review.h): a review run's result hands them to the caller. */

/* A review's defaults (ar_review_options_init(), and the CLI through it); the chunk
 * size is AR_DIFF_DEFAULT_MAX_CHUNK, the limit of jobs AR_REVIEW_MAX_JOBS (public). */
#define AR_REVIEW_DEFAULT_JOBS       4
#define AR_REVIEW_DEFAULT_MAX_CHUNKS 20

/* The SARIF partialFingerprints key the fingerprint goes under. */
#define AR_FINGERPRINT_KEY "agentrunFinding/v1"

void ar_review_init(struct ar_review *rv);

/* Frees everything rv holds; init works again afterwards. */
void ar_review_finish(struct ar_review *rv);

/*
 * Fills rv (initialized) from a review object `value` (borrowed) that should
 * satisfy the contract. Returns 0, AR_ECONTRACT with err saying where ("/issues/1/
 * severity: unknown severity 'urgent'") when it does not, or AR_ENOMEM.
 */
int ar_review_from_value(json_t *value, struct ar_review *rv, struct ar_error *err);

/*
 * Fills rv (initialized) from one chunk's run result (borrowed) and its
 * RunResult `calls` array (borrowed, may be NULL; a reference is taken):
 *   - ok with a conforming value: the model's review;
 *   - error no_json, or contract, or an accepted value that does not make a
 *     review: degraded (passed 1, no issues, summary "No structured review
 *     output" or "Failed to parse review output", raw_output kept);
 *   - any other error (provider, timeout, interrupted…): failed, error copied.
 * Usage, cost, duration, provider, model and the calls are copied in every case.
 * Returns 0 or AR_ENOMEM.
 */
int ar_review_from_result(const struct ar_result *r, struct ar_review *rv);

/* The degraded summaries (DESIGN: docs/review.md "Degraded reviews"). */
#define AR_REVIEW_NO_JSON_SUMMARY  "No structured review output"
#define AR_REVIEW_CONTRACT_SUMMARY "Failed to parse review output"

/*
 * Merges n chunk reviews (borrowed, in chunk order) into out (initialized):
 * passed when all passed; issues concatenated and stably sorted by file then
 * line, each flagged outside_diff unless ar_diff_has_file(diff, file) (diff
 * may be NULL: nothing is flagged); non-empty summaries joined by newlines;
 * degraded when any is (raw outputs joined, the first degraded error kept);
 * failed when any failed (the first failure's error kept); tokens and cost
 * summed, cost unknown when any is unknown; calls concatenated; duration the
 * longest; cached when every part was, the cached tokens and cost summed. Returns 0 or AR_ENOMEM.
 */
int ar_review_merge(const struct ar_review *parts, size_t n, const struct ar_diff *diff,
                    struct ar_review *out, struct ar_error *err);

/*
 * Makes rv's issues (merged) fit to report: each path resolved with
 * ar_diff_locate() against diff and root (may be NULL), an issue whose path
 * is outside the repository dropped (rv->dropped counts them), lines clamped
 * to AR_REVIEW_MAX_LINE, outside_diff set, issues sorted by path then line
 * (stable), and fingerprints computed. Returns 0 or AR_ENOMEM.
 */
int ar_review_locate(struct ar_review *rv, const struct ar_diff *diff, const char *root,
                     struct ar_error *err);

/*
 * The fingerprint of a finding: a hash of the rule (its severity), the path
 * and the message with case, whitespace and numbers normalized, so it stays
 * the same when the finding moves to another line or the model renumbers
 * it; the n-th repeat (occurrence n > 0) of the same finding in one review
 * hashes n in too, so fingerprints are unique within a review. out gets
 * AR_FINGERPRINT_LEN hex digits and a NUL. The one function behind every
 * format's fingerprint (json, sarif, gitlab) and the baseline.
 */
void ar_review_fingerprint(const struct ar_review_issue *is, unsigned occurrence,
                           char out[AR_FINGERPRINT_LEN + 1]);

/* The fingerprints of a previous review (--baseline), sorted. The public
 * struct ar_review_baseline wraps one. */
struct ar_baseline {
    char (*fp)[AR_FINGERPRINT_LEN + 1];
    size_t n;
};

/*
 * Reads the fingerprints of a previous review from path: agentrun's json
 * output (issues[].fingerprint), its SARIF output
 * (results[].partialFingerprints["agentrunFinding/v1"]) or its gitlab output
 * ([].fingerprint). b is filled (ar_baseline_finish()). Returns 0, AR_EUSAGE
 * (unreadable, not JSON, or none of those documents; err says which) or
 * AR_ENOMEM.
 */
int ar_baseline_load(const char *path, struct ar_baseline *b, struct ar_error *err);

void ar_baseline_finish(struct ar_baseline *b);

/* The fingerprints behind a public baseline (borrowed from it), or NULL for NULL. */
const struct ar_baseline *ar_review_baseline_get(const struct ar_review_baseline *rb);

/* Removes from rv (located) every issue whose fingerprint is in b; adds how
 * many to rv->suppressed and returns that. */
size_t ar_review_apply_baseline(struct ar_review *rv, const struct ar_baseline *b);

/*
 * The verdict of rv with --fail-on fail_on (a severity or AR_FAIL_ON_NONE)
 * and --strict:
 *   - failed: the failure's exit status (ar_error_exit_status: 4, 5, 130…);
 *   - degraded and strict: 3;
 *   - any issue at or above fail_on, outside_diff ones included: 1;
 *   - passed false with no issue at all, none suppressed by a baseline (and
 *     fail_on not none): 1;
 *   - else 0.
 */
void ar_review_verdict(const struct ar_review *rv, int fail_on, int strict,
                       struct ar_review_verdict *out);

#endif
