/*
 * Reviews: the review object a model returns (prompts/review.md's contract),
 * what a chunk's run result means for it (a review, a degraded review, or a
 * failure), the merge of chunk reviews, and the verdict.
 *
 * Protocol for one review (src/review/fanout.c follows it for ar_review_start()):
 *   0. ar_coverage_plan() and ar_coverage_chunks() (coverage.c): what is sent
 *      of every changed path, and in which chunks;
 *   1. per chunk: ar_review_from_result() on the chunk's run result (each
 *      finding that breaks the contract salvaged alone: salvage.c);
 *   2. ar_review_merge() of the chunk reviews, in chunk order, which also
 *      flags issues outside the diff; ar_coverage_finish() with the chunk
 *      reviews: what was reviewed;
 *   3. ar_review_locate(): repository paths, clamped lines, fingerprints;
 *   4. with a baseline: ar_baseline_load(), ar_review_apply_baseline();
 *   5. ar_review_verdict() for the exit status, from the review and the coverage;
 *   6. ar_review_finish() on every review, ar_coverage_free().
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

/* The JSON Pointer of the findings in the review object: its elements are judged one
 * by one (the pipeline's independent items, salvage.c). */
#define AR_REVIEW_ITEMS "/issues"

/*
 * Fills rv (initialized) from a review object `value` (borrowed). The
 * envelope must hold: an object with passed (boolean), summary (string) and
 * issues (array), else AR_ECONTRACT with err saying where. Each finding is
 * then judged alone (ar_review_salvage_issue()): kept, kept with a fix, or
 * unplaced, each fix noted in rv->notes; one bad finding never drops another.
 * Returns 0, AR_ECONTRACT or AR_ENOMEM.
 */
int ar_review_from_value(json_t *value, struct ar_review *rv, struct ar_error *err);

/*
 * ar_review_from_value() for an answer that broke the contract as a whole: the
 * findings stand alone, so a `passed` that is no boolean is read as false (the
 * findings decide the verdict) and a `summary` that is no string as empty, each
 * with a note. Still AR_ECONTRACT when value is no object or `issues` is no
 * array holding an object (no finding to keep).
 */
int ar_review_salvage_value(json_t *value, struct ar_review *rv, struct ar_error *err);

/*
 * Judges finding i (`v`, borrowed; any JSON) of a review object against the
 * review contract and appends it to rv: to rv->issues as it is, or fixed (a
 * line that is not one: line 0, the whole file; a severity that is not one:
 * high; no message: "(no message)"; a suggestion that is not a string: none),
 * or to rv->unplaced when it names no file; with a note for every fix. Text
 * past AR_REVIEW_MAX_TEXT is cut (issue.cut). A value that is not an object
 * is left out with a note. Returns 0 or AR_ENOMEM.
 */
int ar_review_salvage_issue(json_t *v, size_t i, struct ar_review *rv);

/*
 * The union of n reviews of one change (borrowed; the answers of one reply, the
 * members of a panel): the findings of each, deduplicated by fingerprint as
 * multisets (a finding k reviews share is kept once, where it first came; one a
 * review holds twice is kept twice), issues and unplaced alike, in order of first
 * appearance; passed only when each passed (the strictest verdict); the distinct
 * summaries joined by newlines; every note appended to out's. Sets only those
 * members of out (initialized; what it held of them is replaced) and dropped (the
 * unplaced); the accounting (usage, calls…) is the caller's. Returns 0 or AR_ENOMEM
 * (out then as it was).
 */
int ar_review_union(const struct ar_review *parts, size_t n, struct ar_review *out);

/* Appends a copy of note to rv->notes. Returns 0 or AR_ENOMEM. */
int ar_review_add_note(struct ar_review *rv, const char *note);

/* Copies s (may be NULL) cut to at most AR_REVIEW_MAX_TEXT bytes at a UTF-8 boundary,
 * ending with AR_REVIEW_CUT_MARK when cut; *cut is set then. NULL when out of memory
 * (or s is NULL). */
char *ar_review_text_cut(const char *s, int *cut);

/* Frees what one issue holds. */
void ar_review_issue_free(struct ar_review_issue *is);

/* *dst becomes a deep copy of src (its strings and found_by). Returns 0 or AR_ENOMEM (dst
 * then holds nothing). */
int ar_review_issue_copy(struct ar_review_issue *dst, const struct ar_review_issue *src);

/* A review's findings list `which` (0: issues, 1: unplaced) and its length in *n: the
 * walk of ar_review_union() and of the panel's matching over both lists. */
static inline const struct ar_review_issue *ar_review_list(const struct ar_review *rv, int which,
                                                           size_t *n)
{
    *n = which ? rv->n_unplaced : rv->n_issues;
    return which ? rv->unplaced : rv->issues;
}

/* ---- the controls come from the base (control.c) ---- */

/* A file or folder of the checkout the review reads something that steers its verdict
 * from: a baseline, instructions, prompt templates. */
struct ar_review_control {
    const char *what;  /* for people: "baseline", "instructions", "prompt templates" */
    const char *where; /* err.where when the change writes it: "baseline"… */
    const char *path;  /* as the caller named it (relative to the process's directory) */
    int folder;        /* a folder: any file under it counts */
};

/*
 * Fails when a change of cov (its paths are relative to root, the repository's
 * top, or the folder a patch applies to) adds, modifies, deletes or renames one
 * of the n controls, or a folder on its way: AR_EUSAGE with err.where the
 * control's and a message that says how to read it from the base revision
 * (derived from rev; from_text: the diff was given as text). Returns 0 or
 * AR_EUSAGE.
 */
int ar_review_check_controls(const struct ar_review_coverage *cov, const char *root,
                             const struct ar_review_control *controls, size_t n, const char *rev,
                             int from_text, struct ar_error *err);

/* ---- coverage (coverage.c) ---- */

/*
 * One entry of cov per file section of d, then one per gap (NOT_SENT), in
 * order: left out by pf (EXCLUDED, rule set; not sent), binary (BINARY, a
 * stub sent; rule "--allow-binary" when allow_binary), a hunk larger than
 * max(max_chunk_bytes, AR_REVIEW_MAX_HUNK) (TOO_BIG, a stub sent), else QUEUED
 * and sent whole. *send gets a new array (free()) of enum ar_diff_send per
 * section for ar_diff_split(). Returns 0 or AR_ENOMEM.
 */
int ar_coverage_plan(const struct ar_diff *d, const struct ar_path_filter *pf, int allow_binary,
                     size_t max_chunk_bytes, const struct ar_diff_gaps *gaps,
                     struct ar_review_coverage *cov, unsigned char **send, struct ar_error *err);

/* Which chunks hold each QUEUED file; one that none holds becomes NOT_SENT. Counts
 * again. Returns 0 or AR_ENOMEM. */
int ar_coverage_chunks(struct ar_review_coverage *cov, const unsigned char *send,
                       const struct ar_diff_chunk *chunks, size_t n_chunks);

/* With the n chunk reviews (borrowed, in chunk order): a QUEUED file whose every chunk
 * came back with a review (degraded included) is REVIEWED; else NOT_SENT, naming the
 * chunk and its error. When the review as a whole (merged, borrowed; may be NULL) failed
 * with that same error, only the error's name is given: the review's error says the rest
 * once (a login failure's advice, not once per file). Counts again. Returns 0 or
 * AR_ENOMEM. */
int ar_coverage_finish(struct ar_review_coverage *cov, const struct ar_review *parts, size_t n,
                       const struct ar_review *merged);

/* *dst becomes a deep copy of src. Returns 0 or AR_ENOMEM (dst then empty). */
int ar_coverage_copy(const struct ar_review_coverage *src, struct ar_review_coverage *dst);

/* A panel's coverage: a QUEUED file of cov is REVIEWED when at least quorum of the n
 * members' coverages (members[m], as ar_coverage_finish() left them; names[m] the
 * member's provider) say it was; else NOT_SENT, saying who did not review it and why.
 * Counts again. Returns 0 or AR_ENOMEM. */
int ar_coverage_quorum(struct ar_review_coverage *cov, const struct ar_review_coverage *members,
                       const char *const *names, size_t n, unsigned quorum);

/* n_reviewed, n_excluded and n_unreviewed from the entries. */
void ar_coverage_count(struct ar_review_coverage *cov);

/* Frees the entries; the coverage is empty afterwards. */
void ar_coverage_free(struct ar_review_coverage *cov);

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

/* The degraded summaries are public: AR_REVIEW_NO_JSON_SUMMARY, AR_REVIEW_CONTRACT_SUMMARY. */

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
 * is outside the repository (or longer than AR_REVIEW_MAX_PATH) moved to
 * rv->unplaced with a note (rv->dropped counts the unplaced), lines clamped
 * to AR_REVIEW_MAX_LINE, outside_diff set, issues sorted by path then line
 * (stable), and fingerprints computed. Returns 0 or AR_ENOMEM.
 */
#define AR_REVIEW_MAX_PATH 4096
int ar_review_locate(struct ar_review *rv, const struct ar_diff *diff, const char *root,
                     struct ar_error *err);

/* Sets the fingerprint of every finding of rv (issues in order, then unplaced), the k-th
 * repeat of one at occurrence k, as ar_review_locate() does. Returns 0 or AR_ENOMEM. */
int ar_review_fingerprint_all(struct ar_review *rv);

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
    char *file; /* the checkout file it was read from, or NULL (REV:PATH: git's objects) */
};

/*
 * Reads the fingerprints of a previous review from path (REV:PATH: from git's
 * objects in the work tree of cwd, as the instructions; ar_review_read_spec()): agentrun's json
 * output (issues[].fingerprint), its SARIF output
 * (results[].partialFingerprints["agentrunFinding/v1"]) or its gitlab output
 * ([].fingerprint). b is filled (ar_baseline_finish()). Returns 0, AR_EUSAGE
 * (unreadable, not JSON, or none of those documents; err says which) or
 * AR_ENOMEM.
 */
struct ar_share;
int ar_baseline_load(const struct ar_share *share, const char *cwd, const char *base,
                     const char *path, struct ar_baseline *b, struct ar_error *err);

void ar_baseline_finish(struct ar_baseline *b);

/* The fingerprints behind a public baseline (borrowed from it), or NULL for NULL. */
const struct ar_baseline *ar_review_baseline_get(const struct ar_review_baseline *rb);

/* Removes from rv (located) every issue whose fingerprint is in b; adds how
 * many to rv->suppressed and returns that. */
size_t ar_review_apply_baseline(struct ar_review *rv, const struct ar_baseline *b);

/*
 * The verdict of rv and its coverage (may be NULL: nothing to cover) with
 * --fail-on fail_on (a severity or AR_FAIL_ON_NONE) and --strict:
 *   - failed: the failure's exit status (ar_error_exit_status: 4, 5, 130…);
 *   - degraded and strict: 3;
 *   - any issue at or above fail_on, outside_diff and unplaced ones included: 1;
 *   - a changed path neither reviewed nor left out by a rule (whatever
 *     fail_on says): 1;
 *   - passed false with no issue at all, none suppressed by a baseline (and
 *     fail_on not none): 1;
 *   - else 0.
 */
void ar_review_verdict(const struct ar_review *rv, const struct ar_review_coverage *cov,
                       int fail_on, int strict, struct ar_review_verdict *out);

/* ---- a panel (panel.c; docs/review.md, "A panel") ---- */

struct ar_provider;

/* A panel as ar_panel_parse() read it: each provider once, in the panel's order. */
struct ar_panel_spec {
    size_t n;
    const struct ar_provider *providers[AR_REVIEW_MAX_PANEL];
    const char *names[AR_REVIEW_MAX_PANEL]; /* the providers' names (static) */
    char *models[AR_REVIEW_MAX_PANEL];      /* or NULL: the provider's default */
};

/*
 * Reads "claude,codex=MODEL,gemini" (blanks around members and names ignored): every
 * member a known provider (not auto) within allowed (a bit per registry index; 0: all),
 * named once, with an optional non-empty model after '='. Returns 0, or AR_EUSAGE with
 * err.where "panel" ("providers" for one outside allowed) naming the member, or
 * AR_ENOMEM. *out is freed with ar_panel_spec_finish().
 */
int ar_panel_parse(const char *spec, unsigned allowed, struct ar_panel_spec *out,
                   struct ar_error *err);
void ar_panel_spec_finish(struct ar_panel_spec *s);

/* The matching rule's constants (panel.c says how they are used). */
#define AR_PANEL_NEAR_LINES     3
#define AR_PANEL_SEVERITY_GAP   1
#define AR_PANEL_MIN_SIMILARITY 0.3

/* The Jaccard index of the two messages' word sets, 0 to 1 (both without words: 1). */
double ar_panel_similarity(const char *a, const char *b);

/* 1 when findings a and b (of different members) may be one finding. */
int ar_panel_same(const struct ar_review_issue *a, const struct ar_review_issue *b);

/*
 * Replaces out's issues and unplaced findings (and dropped) with the match of the n
 * members' located reviews (borrowed; names[m] is member m's provider name): one
 * finding per cluster, found_by set, sorted by file then line, fingerprinted
 * (ar_review_fingerprint_all()). Returns 0 or AR_ENOMEM (out then as it was).
 */
int ar_panel_match(const struct ar_review *members, size_t n, const char *const *names,
                   struct ar_review *out);

/* Fills each member record of p (provider and model already set) from its located
 * review mv[m] and coverage mc[m]: status, error, findings, files reviewed, usage,
 * cost, duration, the model its calls reported; and p->answered. Returns 0 or
 * AR_ENOMEM. */
int ar_panel_members(struct ar_review_panel *p, const struct ar_review *mv,
                     const struct ar_review_coverage *mc, size_t n);

/*
 * The panel's failure and passed (merged: the merge of every member's calls): passed
 * when each member that answered said so; failed only when fewer than p->quorum
 * members answered (the first failed member's error, its name in front); else not
 * failed (the first degraded member's error kept, if any), and a note names each
 * member that failed. Returns 0 or AR_ENOMEM.
 */
int ar_panel_verdict_inputs(struct ar_review *merged, const struct ar_review_panel *p,
                            const struct ar_review *mv);

/* Marks each finding of rv that fewer than quorum members reported (below_quorum). */
void ar_panel_quorum(struct ar_review *rv, unsigned quorum);

/* Whether a finding counts toward the verdict: every finding but one below the quorum
 * that is not critical (the one place the quorum policy is applied). */
int ar_review_counts(const struct ar_review_issue *is);

#endif
