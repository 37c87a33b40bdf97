/*
 * agentrun: AI code review of a diff, on the caller's libuv loop (what
 * `agentrun review` does; docs/review.md describes the review itself).
 *
 * A review reads a diff (text the caller supplies, or git: a revision, a
 * range, the index, the working tree), leaves out the files a filter skips,
 * cuts the rest into chunks, reviews up to `jobs` chunks at once (each chunk
 * one run of the review template: a text call), merges the chunk reviews,
 * resolves the model's paths against the diff and the repository, leaves out
 * what a baseline already knows, and judges the findings against fail_on.
 *
 * The gate (docs/review.md, "What a pass means"): a review passes only when
 * every changed path was sent whole to the model, or was left out by a rule
 * the caller controls (include, exclude, the default excludes,
 * allow_binary). The result's coverage says, for every changed path, what
 * happened to it, and the verdict is derived from it: a path neither
 * reviewed nor left out by a rule fails the review whatever the model said.
 *
 * Protocol:
 *   1. struct ar_review_options o; ar_review_options_init(&o); fill it in;
 *   2. ar_review_start(loop, &o, done, arg, &review, &err): the diff is read
 *      and cut before it returns (git runs to completion, blocking while it
 *      does), so a bad revision or a diff past max_chunks fails here and costs
 *      nothing; ar_review_plan(review) then says what will be reviewed;
 *   3. the caller runs its loop (uv_run()); on_event reports each chunk as it
 *      starts and finishes; ar_review_cancel() ends the review early;
 *   4. done(review, result, arg) runs exactly once, from the loop, also when
 *      there was nothing to review (no model call) or the review failed;
 *   5. ar_review_result_destroy(result).
 * Nothing here prints: diagnostics go to options.run.logger.
 */
#ifndef AGENTRUN_REVIEW_H
#define AGENTRUN_REVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "agentrun.h"
#include "common.h"
#include "error.h"
#include "usage.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uv_loop_s; /* libuv's uv_loop_t: the caller's, borrowed */

/* Most severe first: a lower value is more severe. */
enum ar_severity {
    AR_SEV_CRITICAL = 0,
    AR_SEV_HIGH,
    AR_SEV_MEDIUM,
    AR_SEV_LOW,
    AR_SEV_INFO,
    AR_SEV_COUNT,
};

/* fail_on none: findings never fail the review (errors still do). */
#define AR_FAIL_ON_NONE AR_SEV_COUNT

/* "critical", …, "info"; "none" for AR_FAIL_ON_NONE; "unknown" otherwise. Static storage. */
AR_API const char *ar_severity_name(int sev);

/* The severity named s, AR_FAIL_ON_NONE for "none" when allow_none, or -1. */
AR_API int ar_severity_parse(const char *s, int allow_none);

/* A fingerprint: 32 lowercase hex digits, the same for a finding that moved lines. */
#define AR_FINGERPRINT_LEN 32

/* The most chunks a review reviews at once (ar_review_options.jobs). */
#define AR_REVIEW_MAX_JOBS 64

/* The largest line number reported: SARIF and GitHub read 32-bit lines. */
#define AR_REVIEW_MAX_LINE INT32_MAX

/*
 * The longest message and suggestion kept, in bytes: longer ones are cut at a
 * UTF-8 boundary and end with AR_REVIEW_CUT_MARK, so that every output format
 * fits its consumer (one rdjsonl line stays well under reviewdog's 64 KiB).
 */
#define AR_REVIEW_MAX_TEXT ((size_t)8 << 10)
#define AR_REVIEW_CUT_MARK " [… cut by agentrun]"

/* One finding. Owned by the review that holds it. */
struct ar_review_issue {
    char *file;   /* the repository path (as the model wrote it before the paths are located) */
    int64_t line; /* >= 1, at most AR_REVIEW_MAX_LINE; 0: about the file as a whole (the model
                     gave no usable line) */
    enum ar_severity severity;
    char *message;
    char *suggestion;                         /* or NULL */
    int outside_diff;                         /* the file is not one of the diff's files */
    char fingerprint[AR_FINGERPRINT_LEN + 1]; /* "" until the paths are located */
    int cut; /* the message or the suggestion was longer than AR_REVIEW_MAX_TEXT */
    union {
        struct {
            /*
             * Added in 0.2.0 (issue 61). A panel's review (ar_review_options.panel): the
             * members that reported this finding, by provider name, in panel order (its
             * agreement is n_found_by of the panel's n members); NULL and 0 otherwise.
             */
            char **found_by;
            size_t n_found_by;
            /* Added in 0.2.0. Fewer members than the quorum reported it: it does not count
             * toward the verdict, unless it is critical (docs/review.md, "A panel"). */
            int below_quorum;
            /* Added in 0.2.0. How many members the panel has (the n of "k of n"), or 0. */
            unsigned panel_size;
        };
        void *reserved[4]; /* members added later come out of it (docs/library.md#abi) */
    };
};

/*
 * A review: one chunk's, or the merge of all of them. Everything is owned by
 * the review; read it, don't change it.
 */
struct ar_review {
    int passed;    /* as the model said (merged: every chunk said so); degraded: 1 */
    char *summary; /* never NULL in a result */
    struct ar_review_issue *issues;
    size_t n_issues;
    int degraded;          /* no usable review output: error.code (no_json, contract) says why */
    char *raw_output;      /* degraded: the model's text, or NULL when there was none */
    struct ar_error error; /* degraded: AR_ENOJSON/AR_ECONTRACT; failed: the run's error */
    int failed;            /* a chunk's run failed (provider, timeout, interrupted…) */
    char *provider;        /* or NULL */
    char *model;           /* or NULL */
    struct ar_usage usage; /* summed over every call */
    double cost_usd;       /* meaningful unless cost_source is AR_COST_UNKNOWN */
    enum ar_cost_source cost_source;
    uint64_t duration_ms;
    int cached; /* every call came from the cache */
    /* What the cached calls spent when they were made. */
    size_t n_cached;
    struct ar_usage cached_usage;
    double cached_cost_usd;
    enum ar_cost_source cached_cost_source;
    struct ar_call_record *calls; /* every call of every chunk, in chunk order (as in
                                     ar_result.calls); owned by the review */
    size_t n_calls;
    size_t chunks;     /* how many chunk reviews this is made of */
    size_t dropped;    /* findings with no place in the repository (n_unplaced) */
    size_t suppressed; /* findings left out: the baseline knew them */
    /*
     * What agentrun did to findings that broke the contract, each alone (the
     * others stand): "/issues/2/line: 0 is not a line; reported for the whole
     * file". A finding whose line is unusable is kept at file level (line 0);
     * one whose severity is unreadable is kept as high; one with no usable
     * path goes to `unplaced`.
     */
    char **notes;
    size_t n_notes;
    /* Findings with no place to report them (no file, or a path outside the
     * repository): file is what the model wrote, or NULL. They still count in
     * the verdict: a critical finding is never lost to a bad path. */
    struct ar_review_issue *unplaced;
    size_t n_unplaced;
    union {
        struct {
            /* Added in 0.2.0. The caps the review lived under (run.max_cost_usd over every
             * chunk, its share's), or NULL when none applied (the merged review only). */
            struct ar_run_budget *budget;
            /*
             * Added in 0.2.0 (issue 57). How many answers fitting the review contract
             * the model's replies held, over every chunk read: one per reply, more
             * when a reply held several (every answer counts: the findings are their
             * union by fingerprint, the verdict the strictest, and a note says so;
             * docs/review.md). 0 when no reply was read (nothing to review, a failed
             * or degraded chunk).
             */
            size_t answers;
        };
        void *reserved[8]; /* members added later come out of it (docs/library.md#abi) */
    };
};

/* What happened to one changed path (struct ar_review_file.status). */
enum ar_review_cover {
    AR_COVER_QUEUED = 0, /* in a chunk whose review has not come back (only before done) */
    AR_COVER_REVIEWED,   /* sent whole to the model, and its chunks' reviews came back */
    AR_COVER_EXCLUDED,   /* left out by a rule: include, exclude, the default excludes */
    AR_COVER_BINARY,     /* binary content (agentrun's judgement, docs/review.md): not sent */
    AR_COVER_TOO_BIG,    /* a hunk larger than one call can hold (AR_REVIEW_MAX_HUNK) */
    AR_COVER_NOT_SENT,   /* not reviewed for another reason: `why` says */
};

/* "queued", "reviewed", "excluded", "binary", "too_big", "not_sent"; "unknown". Static. */
AR_API const char *ar_review_cover_name(int status);

/* A hunk larger than this (or than max_chunk_bytes, if that is larger) cannot be cut
 * and is not sent: its file is AR_COVER_TOO_BIG. */
#define AR_REVIEW_MAX_HUNK ((size_t)4 << 20)

/* One changed path of the diff and what the review did with it. Owned by the result. */
struct ar_review_file {
    char *path;     /* the new path; the old one for a deletion; "" when the diff named none */
    char *old_path; /* a rename's or copy's old path, else NULL */
    enum ar_review_cover status;
    /* The caller's rule that left the path out, as the CLI spells it ("--exclude vendor/",
     * "default exclude package-lock.json", "--allow-binary"), or NULL. A path that is
     * not AR_COVER_REVIEWED and has no rule blocks a pass. */
    char *rule;
    char *why;         /* not reviewed: why, for people ("binary content"), else NULL */
    size_t chunk;      /* QUEUED, REVIEWED: its first chunk, from 0 */
    size_t n_chunks;   /* how many chunks hold it (pieces of a large file); 0: none */
    void *reserved[4]; /* members added later come out of it (docs/library.md#abi) */
};

/* The coverage of a review: every changed path, in diff order. */
struct ar_review_coverage {
    struct ar_review_file *files;
    size_t n_files;
    size_t n_reviewed;   /* AR_COVER_REVIEWED */
    size_t n_excluded;   /* left out by a rule (rule != NULL) */
    size_t n_unreviewed; /* neither: each one fails the review */
    void *reserved[4];   /* members added later come out of it (docs/library.md#abi) */
};

/* How a review is judged. */
struct ar_review_verdict {
    int exit_status;  /* 0, 1 (findings, or a changed path not reviewed), 3 (degraded and
                         strict), or the failure's (4, 5, 130…) */
    size_t n_failing; /* findings at or above fail_on (unplaced ones included) */
    size_t by_severity[AR_SEV_COUNT];
    int fails;           /* exit_status == 1 */
    size_t n_unreviewed; /* changed paths neither reviewed nor left out by a rule */
    void *reserved[4];   /* members added later come out of it (docs/library.md#abi) */
};

/*
 * The fingerprints of a previous review, to leave out the findings it
 * already had: agentrun's json output (issues[].fingerprint), its SARIF
 * output (partialFingerprints) or its gitlab output ([].fingerprint).
 * path is read as ar_review_read_instructions() reads its spec: REV:PATH
 * (origin/main:.agentrun/accepted.json) from git's objects in a git work tree
 * (cwd; NULL: the current directory), never from a file of the checkout
 * (./REV:PATH names the file); else the file. A baseline read from a file of
 * the checkout is remembered as such: a review whose change adds, modifies or
 * deletes that file fails to start (ar_review_start(), err.where "baseline").
 * On success *out is a new baseline the caller frees with
 * ar_review_baseline_destroy(). Returns 0, AR_EUSAGE (unreadable, not JSON,
 * none of those documents, or a REV or PATH git does not know: err says which)
 * or AR_ENOMEM.
 */
struct ar_review_baseline;
AR_API int ar_review_baseline_read(const char *cwd, const char *path,
                                   struct ar_review_baseline **out, struct ar_error *err);
/* ar_review_baseline_read(NULL, path, out, err). */
AR_API int ar_review_baseline_load(const char *path, struct ar_review_baseline **out,
                                   struct ar_error *err);
AR_API void ar_review_baseline_destroy(struct ar_review_baseline *b); /* NULL is fine */

struct ar_review_run; /* a review in progress */

/* What ar_review_event reports. */
enum ar_review_event_kind {
    AR_REVIEW_CHUNK_STARTED = 0, /* the chunk's run started */
    AR_REVIEW_CHUNK_FINISHED,    /* the chunk is over: reviewed, failed, or never started
                                    (another chunk failed, or the review was cancelled) */
};

struct ar_review_event {
    enum ar_review_event_kind kind;
    size_t chunk;    /* which chunk, from 0 */
    size_t n_chunks; /* how many there are */
    size_t running;  /* chunks under review now */
    size_t finished; /* chunks over so far, this one included */
    /* FINISHED: the chunk's review (borrowed for the call; its paths not yet located) */
    const struct ar_review *review;
    /* Added in 0.2.0. A panel's review: the member (provider name) whose call this is; chunk
     * and n_chunks then count the calls of every member (chunks × members); else NULL. */
    const char *member;
};

/* A chunk started or finished. ev is borrowed for the call. */
typedef void ar_review_event_fn(void *arg, const struct ar_review_event *ev);

struct ar_review_options {
    /*
     * Every chunk's run: provider, fallback, model, cwd (also where git runs
     * and where the model's paths are resolved), timeouts, logger, progress,
     * cache, record and replay. The review sets the rest: the review template
     * with the chunk and the instructions, no edits, no session, no git
     * snapshots, and a text call (no tools) unless run.tools is
     * AR_TOOLS_READ (the model may read files beyond the diff).
     * run.prompt, run.template_name, run.vars and run.job_id are ignored.
     */
    struct ar_run_options run;

    /* The diff: the caller's text, else git (rev, staged, or the working tree). */
    const char *diff; /* a unified diff of diff_len bytes (NUL bytes are sent as U+FFFD) */
    size_t diff_len;
    const char *label; /* with diff: what to call it ("stdin", a file name); NULL: none */
    const char *rev;   /* "R": the working tree against R, untracked files included;
                          "R^!": the change commit R introduced; "A..B", "A...B": the range */
    int staged;        /* the index against HEAD */
    /* none of those: the working tree against HEAD, untracked files included */

    /*
     * Which files are reviewed. A glob without '/' matches the file name
     * ("*.lock"); one with '/' the whole path from the repository root, '*'
     * crossing '/' too ("vendor/x*"); a trailing '/' everything under a
     * folder ("vendor/"). With includes only files matching one are
     * reviewed; then excludes, and unless no_default_excludes the lockfiles
     * (package-lock.json, Cargo.lock…), are skipped.
     */
    const char *const *include;
    size_t n_include;
    const char *const *exclude;
    size_t n_exclude;
    int no_default_excludes;
    /* Binary files (docs/review.md: agentrun judges content, not .gitattributes) are
     * left out as if by a rule ("--allow-binary") instead of failing the review. */
    int allow_binary;

    size_t max_chunk_bytes; /* chunks of at most this many bytes (default 200 KiB; > 0) */
    size_t max_chunks; /* a diff needing more chunks fails to start (default 20; each chunk is a
                          paid call) */
    unsigned jobs;     /* chunks reviewed at once (default 4; 1 to 64), lowered to fit the open
                          file limit */

    const char *instructions; /* the project's review guidelines, added to the prompt, or NULL */
    const struct ar_review_baseline *baseline; /* findings to leave out, or NULL */
    int fail_on; /* a severity or AR_FAIL_ON_NONE: findings at or above it fail (default low) */
    int strict;  /* a degraded review (unusable model output) fails with exit status 3 */

    ar_review_event_fn *on_event; /* may be NULL */
    void *event_arg;

    union {
        struct {
            /*
             * Added in 0.2.0. The name instructions were read from, as given to
             * ar_review_read_instructions(), or NULL. Every input that steers the
             * verdict must come from a place the change cannot write: when it
             * names a file of the checkout (not REV:PATH), a change that adds,
             * modifies, deletes or renames that file (or a folder on its way)
             * fails to start (ar_review_start(): AR_EUSAGE, err.where
             * "instructions"). The baseline (ar_review_baseline_read()) and the
             * prompt folders (run.prompts_dir, the user's) are checked the same
             * way, without being named here.
             */
            const char *instructions_from;
            /*
             * Added in 0.2.0. Where the library reads the guidelines itself (the way every
             * door should take them): REV:PATH from git's objects (PATH as git resolves it:
             * from the top of the work tree, or from cwd with ./ or ../), else a file
             * relative to run.cwd; within run.share's directories (share.h). A file of the
             * checkout is a control the change must not write (as instructions_from
             * above); NUL bytes become U+FFFD, said in the log. Not with instructions.
             */
            const char *instructions_file;
            /* Added in 0.2.0. The baseline, read by the library the same way (as
             * ar_review_baseline_read() reads it). Not with baseline. */
            const char *baseline_file;
            /*
             * Added in 0.2.0 (issue 61). A review panel: several providers review every
             * chunk, and the findings they share are matched (docs/review.md, "A panel").
             * "claude,codex=gpt-5.1-codex,gemini": providers by name, each once, each with
             * an optional model after '='; within
             * run.share's providers. Not with run.provider, run.model or run.fallback (a
             * member is its provider; AGENTRUN_PROVIDER is not read). NULL: one provider,
             * run.provider, reviews.
             */
            const char *panel;
            /* Added in 0.2.0. With panel: only findings at least this many members reported
             * count toward the verdict (a critical one always counts), and a file is
             * reviewed only when at least this many members reviewed it. 0: 1. */
            unsigned quorum;
            /*
             * Added in 0.2.0. With panel, a severity name ("high"): the first member
             * reviews every chunk; the others review only the chunks where it found
             * something at or above that severity (or failed). Not with a quorum above 1
             * (the other members do not review every file). NULL: every member reviews
             * every chunk.
             */
            const char *escalate;
            /*
             * Added in 0.2.0. With panel, globs of the diff's paths (the forms of include):
             * the other members also review, from the start, every chunk holding a file that
             * matches one, whatever the first member finds. Alone (escalate NULL), the
             * others review only those chunks (and those the first failed). Not with a
             * quorum above 1. NULL-terminated; NULL or empty: none. Borrowed for the call.
             */
            const char *const *escalate_files;
        };
        void *reserved[8]; /* zero: members added later come out of it (docs/library.md#abi) */
    };
};

/*
 * Sets *o to the defaults: ar_run_options_init(&o->run), chunks of at most
 * 200 KiB, at most 20 chunks, 4 chunks at once, fail_on low, the rest zero.
 * The defaults are the library's (see ar_run_options_init()).
 */
AR_API void ar_review_options_init(struct ar_review_options *o);

/* What a review looks at, known once ar_review_start() returns. */
struct ar_review_plan {
    const char *source;          /* what is reviewed ("HEAD~1", "the staged changes", "the working
                                    tree", the caller's label), or NULL */
    size_t n_files;              /* files to review (the filter applied) */
    size_t bytes;                /* their diff's size */
    size_t n_chunks;             /* model calls to make; 0 when nothing is reviewed */
    const char *const *excluded; /* the diff's files the filter skipped */
    size_t n_excluded;
    size_t nul_bytes;    /* NUL bytes in the diff, sent to the model as U+FFFD */
    unsigned jobs;       /* chunks at once: options.jobs, lowered to fit the open file limit */
    int reviewed;        /* 0: nothing to send (empty, every file excluded, binary files
                            only…): no call is made; the review passes only when every
                            changed path was left out by a rule */
    const char *why_not; /* with !reviewed: "the diff is empty", "every changed file is
                            excluded", "binary files only", "no changed file can be sent" */
    /* Every changed path and what happens to it: the files sent whole are QUEUED until
     * their chunks come back. The same as the result's coverage (borrowed from it). */
    const struct ar_review_coverage *coverage;
    void *reserved[4]; /* members added later come out of it (docs/library.md#abi) */
};

/* The most members a panel has (each provider once). */
#define AR_REVIEW_MAX_PANEL 8

/* What became of a panel member (struct ar_review_member.status). */
enum ar_review_member_status {
    AR_MEMBER_ANSWERED = 0, /* every chunk came back with a review (degraded included) */
    AR_MEMBER_FAILED,       /* a call failed (auth, quota, timeout, budget…): error says */
    AR_MEMBER_NOT_ASKED,    /* escalate: the first member's review never called for it */
};

/* "answered", "failed", "not_asked"; "unknown". Static storage. */
AR_API const char *ar_review_member_status_name(int status);

/* One member of a panel and what it did. Owned by the result. */
struct ar_review_member {
    char *provider; /* "claude", "codex", "gemini" */
    char *model;    /* the model its calls reported, else as the panel named it, or NULL */
    enum ar_review_member_status status;
    struct ar_error error; /* FAILED: the first failed call's error */
    size_t chunks;         /* chunks whose review came back (escalate: of those it was asked
                              to review) */
    size_t findings;       /* findings it reported (located, before matching) */
    size_t files_reviewed; /* changed paths it reviewed */
    struct ar_usage usage; /* summed over its calls */
    double cost_usd;       /* meaningful unless cost_source is AR_COST_UNKNOWN */
    enum ar_cost_source cost_source;
    uint64_t duration_ms; /* its longest call */
    size_t calls;         /* its CLI calls that ran or came from the cache (0: it spent
                             nothing) */
    void *reserved[8];    /* members added later come out of it (docs/library.md#abi) */
};

/* A panel's members and how many answered. */
struct ar_review_panel {
    struct ar_review_member *members; /* in panel order; NULL and 0: no panel */
    size_t n_members;
    size_t answered;   /* members whose status is ANSWERED */
    unsigned quorum;   /* options.quorum (1 when it was 0) */
    void *reserved[8]; /* members added later come out of it (docs/library.md#abi) */
};

/* The outcome of a review. Everything is owned by the result. Handed out by
 * pointer only: it grows at its end (docs/library.md#abi). */
struct ar_review_result {
    struct ar_review_plan plan;         /* what was reviewed */
    struct ar_review review;            /* the merged review: located, the baseline applied */
    struct ar_review_verdict verdict;   /* with options.fail_on and options.strict, and the
                                           coverage: exit 0 only when n_unreviewed is 0 */
    int fail_on;                        /* options.fail_on */
    struct ar_review_coverage coverage; /* every changed path: reviewed, or why not */
    /* Added in 0.2.0 (issue 61): options.panel's members, or none. */
    struct ar_review_panel panel;
};

/*
 * The review is over: res (never NULL) is owned by the callee from here on
 * (ar_review_result_destroy()). A failed chunk fails the review
 * (res->review.failed, res->review.error; the chunks not started by then are
 * not reviewed); after ar_review_cancel() the error is "interrupted". Called
 * exactly once, from the loop; the review handle is freed after this
 * returns.
 */
typedef void ar_review_done_fn(struct ar_review_run *review, struct ar_review_result *res,
                               void *arg);

/*
 * Starts a review on the caller's libuv loop (borrowed: it must outlive the
 * review). opts is copied (its strings and arrays too, the baseline's
 * fingerprints included): the caller's may go away once this returns; the
 * callbacks and their args must stay valid until done. *out (out may be
 * NULL) is the review, valid until done returns: the handle for
 * ar_review_plan() and ar_review_cancel(). Returns 0 (done will be called),
 * or a negative AR_E… code with err set, done never called: AR_EUSAGE for
 * bad options, an unknown revision, not a git repository (err.where names a
 * revision), text that is not a diff (err.where "diff": non-blank, without a
 * single file section), or a diff needing more than max_chunks chunks
 * (err.where "max_chunks"); AR_EIO and AR_ENOTFOUND when git fails or is
 * missing (a git that fails is never a shorter diff);
 * AR_ETOOBIG for a diff past 256 MiB; AR_ENOMEM. Installs no signal handler.
 */
AR_API int ar_review_start(struct uv_loop_s *loop, const struct ar_review_options *opts,
                           ar_review_done_fn *done, void *arg, struct ar_review_run **out,
                           struct ar_error *err);

/* What the review looks at. Borrowed from the review: valid until done returns. */
AR_API const struct ar_review_plan *ar_review_plan(const struct ar_review_run *review);

/*
 * Ends the review: every running chunk's CLI gets SIGTERM, then SIGKILL after
 * run.kill_grace_ms, and no queued chunk starts; done still comes, from the
 * loop, with error "interrupted". A second call SIGKILLs at once (a second
 * Ctrl-C). Only between ar_review_start() and the return of done.
 */
AR_API void ar_review_cancel(struct ar_review_run *review);

/* Frees res and everything it holds. NULL is fine. */
AR_API void ar_review_result_destroy(struct ar_review_result *res);

/*
 * The result of a review that never ran (a bad option, an unreadable diff):
 * failed with error (copied), nothing reviewed, verdict.exit_status
 * ar_error_exit_status(error->code), fail_on low. For a document that says so in
 * any format (ar_review_write()); the caller may set verdict.exit_status. Returns
 * 0 with *out set (free it with ar_review_result_destroy()), or AR_ENOMEM.
 */
AR_API int ar_review_result_from_error(const struct ar_error *error, struct ar_review_result **out);

/* The degraded reviews' summaries (docs/review.md, "Degraded reviews"). */
#define AR_REVIEW_NO_JSON_SUMMARY  "No structured review output"
#define AR_REVIEW_CONTRACT_SUMMARY "Failed to parse review output"

/*
 * "code: message" of a failed or degraded review's error ("provider: rate
 * limited"), or just the code when the message says no more ("interrupted").
 * Written to buf (n bytes, cut to fit); returns buf.
 */
AR_API const char *ar_review_error_text(const struct ar_review *rv, char *buf, size_t n);

/* ---- the output formats (docs/review.md, "Output formats") ---- */

/* The json format's schema: its "schema" member. */
#define AR_REVIEW_SCHEMA "agentrun.review/1"

enum ar_review_format {
    AR_REVIEW_FORMAT_TEXT = 0,   /* for people: findings, coverage, summary, verdict */
    AR_REVIEW_FORMAT_JSON,       /* agentrun.review/1, one line (pretty: indented) */
    AR_REVIEW_FORMAT_SARIF,      /* SARIF 2.1.0 (GitHub code scanning) */
    AR_REVIEW_FORMAT_GITHUB,     /* GitHub Actions workflow commands (annotations) */
    AR_REVIEW_FORMAT_RDJSONL,    /* reviewdog's rdjsonl, one diagnostic a line */
    AR_REVIEW_FORMAT_GITLAB,     /* GitLab Code Quality */
    AR_REVIEW_FORMAT_CHECKSTYLE, /* Checkstyle XML */
    /* No count: a format added later is a new enumerator, and no value changes
     * (ar_review_format_name() is NULL past the last). */
};

/* The format named name ("text", "json", "sarif", "github", "rdjsonl", "gitlab",
 * "checkstyle"), or -1 (NULL too). */
AR_API int ar_review_format_from_name(const char *name);

/* The name of format fmt, or NULL when fmt is none. Static storage. */
AR_API const char *ar_review_format_name(int fmt);

/* What ar_review_write() writes besides the result. */
struct ar_review_write_options {
    int pretty;                 /* json, sarif, gitlab: indented by 2 (default: one line) */
    const char *sarif_category; /* sarif: automationDetails.id is this + "/" (one per review
                                   job, as code scanning keeps one set of alerts per category);
                                   NULL: "agentrun-review" */
    void *reserved[8];          /* zero: members added later come out of it (docs/library.md#abi) */
};

/* Sets *o to the defaults: one-line documents, the default SARIF category. */
AR_API void ar_review_write_options_init(struct ar_review_write_options *o);

/*
 * Where ar_review_write() puts the document: called once or more with its
 * bytes in order (n > 0). Returns 0, or nonzero when the bytes could not all
 * be written (a closed pipe, a full disk): the write stops there.
 */
typedef int ar_review_write_fn(void *arg, const char *data, size_t n);

/*
 * Writes res (as handed out by done or ar_review(), or ar_review_result_from_error())
 * in format fmt to write(arg, …). opts may be NULL (the defaults). The document is
 * made whole before the first byte is written, so a document that cannot be made
 * writes nothing. The text and github formats show the model's control characters
 * (escape sequences…) as text, as `cat -v` does, never pass them to a terminal or a
 * CI log; the JSON formats escape them. Every format is complete and valid for a
 * review, a degraded or failed one, and one with nothing to review
 * (docs/review.md). Returns 0; AR_EUSAGE (an unknown format, res NULL);
 * AR_ENOMEM (nothing written); AR_EIO when write returned nonzero (err.where
 * "write": the sink's own error is the sink's to report).
 */
AR_API int ar_review_write(const struct ar_review_result *res, enum ar_review_format fmt,
                           const struct ar_review_write_options *opts, ar_review_write_fn *write,
                           void *arg, struct ar_error *err);

/*
 * The review's git helpers for a caller that reads its own DIFF and guidelines
 * (as the agentrun CLI does).
 */

/* The largest diff a review reads (options.diff, a file, git's output). */
#define AR_REVIEW_MAX_DIFF ((size_t)256 << 20)

/*
 * 1 when arg names a revision or a range of the repository cwd (NULL: the
 * current directory) is in (every side of a range known); 2 when arg has the
 * shape of a range (A..B, A...B, R^!, each side empty or revision syntax: never
 * "../change.diff") in a repository but names none (a side the clone lacks); 0
 * when not (or no repository, or no git); or a negative AR_E… code.
 */
AR_API int ar_review_is_revision(const char *cwd, const char *arg, struct ar_error *err);

/* The longest review guidelines ar_review_read_instructions() reads. */
#define AR_REVIEW_MAX_INSTRUCTIONS ((size_t)1 << 20)

/*
 * Reads the review guidelines at spec: REV:PATH in a git work tree (cwd) from
 * git's objects, never a file of the checkout that happens to have that name
 * (./REV:PATH names the file); else the file spec. *out gets a new string of
 * *len bytes (it may hold NUL bytes; free() it). Returns 0, or a negative AR_E…
 * code with err set: AR_EUSAGE (REV or PATH unknown to git), AR_EIO (unreadable;
 * git failed), AR_ENOTFOUND (git missing), AR_ETOOBIG (past
 * AR_REVIEW_MAX_INSTRUCTIONS), AR_ENOMEM.
 */
AR_API int ar_review_read_instructions(const char *cwd, const char *spec, char **out, size_t *len,
                                       struct ar_error *err);

/*
 * Reviews to completion on a private event loop: ar_review_start() on a loop
 * of its own, run until done. Installs no signal handler (see ar_run()).
 * Returns 0 with *out set (the review may still have failed: see
 * (*out)->review.failed and (*out)->verdict), or a negative AR_E… code with
 * err set when it could not start (as ar_review_start()); *out is then NULL.
 * The caller frees *out with ar_review_result_destroy().
 */
AR_API int ar_review(const struct ar_review_options *opts, struct ar_review_result **out,
                     struct ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
