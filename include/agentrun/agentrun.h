/*
 * agentrun: run Claude Code, Codex or Gemini headlessly and get back a
 * result you can trust.
 *
 * The public C API. ar_run() runs one job to completion; ar_run_start() runs
 * it on the caller's libuv loop, with events, a result callback and cancel
 * (batch.h and review.h do the same for batches and reviews):
 *
 *     struct ar_run_options o;
 *     ar_run_options_init(&o);
 *     o.prompt = "Say hello as JSON";
 *     o.schema = "{\"type\":\"object\",\"required\":[\"hello\"]}";
 *     struct ar_result *r = NULL;
 *     struct ar_error err = AR_ERROR_INIT;
 *     if (ar_run(&o, &r, &err) < 0) { ... err.msg ... }   // could not even start
 *     if (r->ok) puts(r->json);                            // the checked JSON
 *     char *text = ar_result_to_json(r, 0);                // the RunResult (DESIGN §6)
 *     free(text);
 *     ar_result_destroy(r);
 *
 * Nothing here prints; diagnostics go to options.logger. libuv and jansson
 * are implementation details: no header of theirs is included, and no public
 * struct holds a type of theirs by value (ar_result.value is the one jansson
 * pointer, for reading).
 *
 * The ABI can grow (docs/library.md, "ABI"). Structs you allocate (the
 * options, ar_batch_stats) and structs held by value in another or in an
 * array keep their size: members added later come out of their reserved
 * tail, which is zero. Structs the library allocates and hands you by pointer
 * only (ar_result, ar_result_worktree, ar_run_progress, ar_review_result,
 * ar_review_event, ar_batch_record, ar_route_result, ar_prioritize_result)
 * grow at their end: never copy one by
 * value or take its sizeof. Options start from ar_*_options_init(), which
 * own the defaults. A break bumps the soname (AR_ABI_VERSION);
 * scripts/abi-check compares the library with the reference of its soname.
 *
 * Signals: the library watches no signal of yours (SIGINT, SIGTERM: cancel
 * from your own watcher) and changes two dispositions, process-wide:
 *   SIGPIPE: the first run, review or batch started sets it to ignored when it
 *     is at its default (SIG_DFL), and leaves it so, because a CLI that closes
 *     its stdin early must make the write fail with EPIPE, not kill the host.
 *     A handler or SIG_IGN you installed is left as it is (a handler must
 *     return for the write to fail with EPIPE).
 *   SIGCHLD: while a loop has started a CLI, libuv's handler watches SIGCHLD
 *     (uv_signal_start() on your loop) in place of yours, and when the last
 *     watcher of the process stops, libuv sets SIGCHLD back to SIG_DFL, not
 *     to what it was. A host with a SIGCHLD handler of its own must install
 *     it again after its runs, or watch SIGCHLD with uv_signal_t itself.
 */
#ifndef AGENTRUN_AGENTRUN_H
#define AGENTRUN_AGENTRUN_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "error.h"
#include "log.h"
#include "usage.h"
#include <agentrun/version.h>

#ifdef __cplusplus
extern "C" {
#endif

struct json_t;   /* jansson's value type, for the optional validate hook */
struct ar_share; /* share.h: the rules a set of runs lives under together */

/* The kind of JSON value a run wants from the model. */
enum ar_expect {
    AR_EXPECT_OBJECT = 0, /* default: prose citations like [1] never count */
    AR_EXPECT_ARRAY,
    AR_EXPECT_ANY,
};

/* When a run takes git snapshots (ar_run_options.track_files). */
enum ar_track_files {
    AR_TRACK_FILES_NEVER = 0,  /* no snapshots (--no-files) */
    AR_TRACK_FILES_ALWAYS = 1, /* every run, also one that cannot edit (--track-files) */
    AR_TRACK_FILES_EDITS = 2,  /* default: only runs that can edit files (allow_edits) */
};

/* When a run gets a git worktree of its own (ar_run_options.worktree). */
enum ar_worktree {
    AR_WORKTREE_NEVER = 0,  /* default: the run works in cwd itself */
    AR_WORKTREE_ALWAYS = 1, /* every run (run --worktree, a batch job's "worktree": true) */
    AR_WORKTREE_EDITS = 2,  /* only a run that can edit files (batch --worktrees) */
};

/* Why a RunResult has files_tracked false (its files_untracked_reason). */
enum ar_files_untracked {
    AR_UNTRACKED_NOT_RUN = 0,     /* "not_run": the run ended before its first snapshot */
    AR_UNTRACKED_READ_ONLY,       /* "read_only": the run could not edit files */
    AR_UNTRACKED_DISABLED,        /* "disabled": track_files NEVER (--no-files) */
    AR_UNTRACKED_NOT_A_WORK_TREE, /* "not_a_work_tree": cwd is outside a git work tree */
    AR_UNTRACKED_GIT_FAILED,      /* "git_failed": git is missing or failed (the log says why) */
};

/*
 * The tools a call may use (DESIGN §4b). A call never loads what the checkout
 * supplies (project settings, hooks, MCP servers, CLAUDE.md / AGENTS.md /
 * GEMINI.md) unless trust_project is set.
 */
enum ar_tools {
    AR_TOOLS_AUTO = 0, /* read-only tools, or the editing tools with allow_edits */
    AR_TOOLS_NONE,     /* a text call: the whole input is in the prompt */
    AR_TOOLS_READ,     /* read-only tools: read, grep, glob */
    AR_TOOLS_EDIT,     /* the CLI's editing tools */
};

/* What one call was allowed to load and use, as the adapter set it up. */
struct ar_posture {
    enum ar_tools tools; /* never AR_TOOLS_AUTO here */
    int project_config;  /* the checkout's settings, hooks and MCP servers were loaded */
    int context_files;   /* the checkout's CLAUDE.md / AGENTS.md / GEMINI.md were loaded */
};

/* A template variable: {{name}} is replaced by value (inserted verbatim). */
struct ar_var {
    const char *name;
    const char *value;
};

/* Live progress of a run, for a status line. Borrowed for the call. */
struct ar_run_progress {
    const char *provider;
    const char *job;         /* options.job_id or NULL */
    const char *call;        /* "main" or "repair" */
    uint64_t elapsed_ms;     /* since the run started */
    const char *tool;        /* the tool the CLI is using now, or NULL */
    const char *path;        /* the file it touches, or NULL */
    uint64_t wait_ms;        /* > 0: the run now waits this long before its next call */
    const char *wait_reason; /* why it waits ("rate limit", "api_error"), or NULL */
};
typedef void ar_progress_fn(void *arg, const struct ar_run_progress *p);

/* The two events of a call's life (options.on_call). */
enum ar_call_event {
    AR_CALL_STARTED = 0, /* the CLI was started (or a cassette or the cache answers): the
                            record has kind, provider, argv, posture and waited_ms; a call
                            that could not start gets only FINISHED, exit_code -1) */
    AR_CALL_FINISHED,    /* it ended: the record is complete (exit code, usage, cost, error) */
};
struct ar_call_record;
/* A call started or finished. job is options.job_id (a batch job's id), or NULL;
 * job and call are borrowed for the callback; the same record ends up in
 * ar_result.calls. */
typedef void ar_call_fn(void *arg, const char *job, enum ar_call_event ev,
                        const struct ar_call_record *call);

/*
 * Extra checks beyond the contract (prioritize: every prd_id must be known).
 * Called with every extracted value (borrowed), also one that violates the
 * contract, so it must cope with any JSON shape; report each violation with
 * add(sink, "message"). Violations are treated like contract violations:
 * they are listed together and sent to the one repair call.
 */
typedef void ar_validate_fn(void *arg, struct json_t *value,
                            void (*add)(void *sink, const char *msg), void *sink);

struct ar_run_options {
    /* "claude", "codex", "gemini", "auto"; NULL: $AGENTRUN_PROVIDER, else auto */
    const char *provider;
    /* "codex,gemini": providers tried in turn when the main call fails with not_found,
     * auth, rate_limit or api_error (never on a contract failure or a timeout, never once
     * a call changed files or ran tools); NULL: none */
    const char *fallback;
    /* NULL: $AGENTRUN_MODEL, the CLI's own variable, the CLI's default */
    const char *model;

    /* The prompt: exactly one of prompt and template_name. */
    const char *prompt;        /* free-form text */
    const char *template_name; /* a template from prompts/ (or an override directory) */
    const struct ar_var *vars; /* the template's variables */
    size_t n_vars;
    const char *prompts_dir; /* an override directory searched first, or NULL */
    const char *schema;      /* a contract (JSON Schema subset text) for a free-form prompt */
    int want_json;           /* extract JSON even without a contract */
    enum ar_expect expect;

    const char *cwd;     /* where the CLI runs; NULL: the current directory */
    const char *resume;  /* a session id to continue, or NULL */
    int allow_edits;     /* let the CLI edit files (default read-only) */
    enum ar_tools tools; /* default AR_TOOLS_AUTO: read-only, or editing with allow_edits */
    int trust_project;   /* load the checkout's settings, hooks, MCP servers, context files */
    int no_session;      /* nothing to --resume later: the CLI need not keep the session */
    int model_repair;    /* one repair call when the output fails (default 1) */
    int local_repair;    /* deterministic local repair (default 1) */
    int track_files;     /* enum ar_track_files: git snapshots before and after
                            (default AR_TRACK_FILES_EDITS; 0 never, 1 always) */
    int with_content;    /* add created/modified files' content to the result */
    int allow_denied;    /* a tool call the CLI refused does not fail the run (default 0:
                            error "denied") */
    int expect_changes;  /* no changed file fails the run with error "no_effect" */
    /* The longest wait for a rate limit before the one retry of a call (default 60 s);
     * 0: never wait, never retry (rate limits and transient API errors fail at once). */
    uint64_t max_wait_ms;

    /* A git worktree of its own (docs/worktrees.md): the run
     * goes to a new checkout of worktree_base, on a new branch, and never touches
     * cwd's checkout; the result's `worktree` says where its work is. */
    int worktree;                /* enum ar_worktree (default AR_WORKTREE_NEVER) */
    const char *worktree_base;   /* the revision it starts from; NULL: HEAD of cwd's repository */
    const char *worktree_branch; /* the new branch (git's rules for a branch name); NULL:
                                    agentrun/<UTC time>-<random>/<job_id, or "run"> */
    int worktree_commit;         /* a run that succeeded commits its changes on the branch */
    int keep_worktree;           /* leave the worktree in place (default: it is removed unless
                                    it holds uncommitted changes) */

    uint64_t timeout_ms;      /* wall clock per call (default 900 s); 0: none */
    uint64_t idle_timeout_ms; /* no byte on stdout or stderr (default 300 s); 0: none */
    uint64_t final_grace_ms;  /* a CLI lingering after its final event (default 3 s) */
    uint64_t kill_grace_ms;   /* SIGTERM to SIGKILL (default 5 s) */
    size_t output_cap;        /* stdout bytes per call (default 64 MiB) */

    /* > 0: the most this run may spend, every call included (main, repair, retry,
     * fallback): a call is made only when what is left covers the dearest call so far
     * (share.h, docs/security.md); within the share's max_cost_each. Passed to a CLI that
     * can stop itself at a budget (claude). A call refused fails the run with "budget". */
    double max_cost_usd;
    const char *prices_file;     /* a price table override (JSON), or NULL: $AGENTRUN_PRICES */
    const char *transcript_path; /* the raw CLI stdout of every call is appended here */
    const char *job_id;          /* a name for log events and progress */

    ar_validate_fn *validate;
    void *validate_arg;
    struct ar_logger logger;
    ar_progress_fn *progress; /* live progress for a status line (tool in use, waits) */
    void *progress_arg;
    ar_call_fn *on_call; /* every call's start and end, with its record */
    void *call_arg;

    /* Reproducible runs (docs/record-replay.md). */
    const char *record_dir; /* write a cassette of every call here; NULL: $AGENTRUN_RECORD */
    const char *replay_dir; /* serve every call from the cassettes here, never starting a CLI;
                               NULL: $AGENTRUN_REPLAY */
    int cache;              /* reuse the answers of text calls (tools NONE, not trusted) */
    const char *cache_dir;  /* NULL: $XDG_CACHE_HOME/agentrun, else ~/.cache/agentrun */
    uint64_t cache_ttl_s;   /* older cache entries are not used; 0: no limit */

    union {
        struct {
            /*
             * Added in 0.2.0. The rules this run lives under with others (share.h): the
             * budget every call reserves from, the cap on CLIs at once, the shared
             * rate-limit pause, the providers it may call, the directories it may work in
             * and read from. Borrowed: it must outlive the run. NULL: a share of its own
             * with the defaults (only what a parent agentrun passed down applies).
             */
            struct ar_share *share;
        };
        void *reserved[16]; /* zero: members added later come out of it (docs/library.md#abi) */
    };
};

/*
 * Sets *o to the defaults: zero everything, then the library's defaults
 * (expect object, model and local repair on, git snapshots of runs that can
 * edit, 60 s max wait, 900 s timeout, 300 s idle timeout, 3 s final grace,
 * 5 s kill grace, 64 MiB output cap, warnings to no logger). The defaults are
 * the library's, not your compiler's: a program built against older headers
 * gets the defaults of the library it runs with, also for the members its
 * headers do not know (they live in the reserved tail). Start every
 * ar_run_options with it.
 */
AR_API void ar_run_options_init(struct ar_run_options *o);

enum ar_repair_kind {
    AR_REPAIR_NONE = 0, /* the first answer was usable as it came */
    AR_REPAIR_LOCAL,    /* local repair made it usable */
    AR_REPAIR_MODEL,    /* the repair call was made (whether or not it helped) */
};

enum ar_cost_source {
    AR_COST_UNKNOWN = 0, /* cost_usd is meaningless: report null, never 0 */
    AR_COST_CLI,         /* the CLI computed it (claude) */
    AR_COST_TABLE,       /* agentrun's price table */
    AR_COST_CACHE,       /* served from the cache: nothing was spent (cost_usd is 0) */
};

enum ar_file_op {
    AR_FILE_CREATE = 0,
    AR_FILE_MODIFY,
    AR_FILE_DELETE,
    AR_FILE_RENAME,
};

struct ar_file_change {
    char *path; /* relative to the repository root */
    char *from; /* renames: the old path; else NULL */
    enum ar_file_op op;
    char *content; /* with_content: the content (base64 when `base64`), else NULL */
    size_t content_len;
    int base64;
    int truncated;     /* content cut at 1 MiB */
    void *reserved[4]; /* members added later come out of it (docs/library.md#abi) */
};

struct ar_call_record {
    char *kind; /* "main" or "repair" */
    char *provider;
    char **argv;   /* NULL-terminated; never contains the prompt */
    int exit_code; /* exit status or 128 + signal; -1 when it never ran */
    int signal;    /* 0 or the terminating signal */
    uint64_t duration_ms;
    struct ar_usage usage;
    double cost_usd;
    enum ar_cost_source cost_source;
    int timed_out;
    int usage_cumulative; /* tokens are a resumed thread's running total (codex), not this call's */
    char *stderr_tail;
    char *error; /* this call's error code name, or NULL */
    int cached;  /* served from the cache: usage and cost are 0, the original is in the result's
                    cached_* fields */
    struct ar_posture posture;
    uint64_t waited_ms; /* how long the run waited before this call (a retry's backoff) */
    union {
        struct {
            char *cli_version;     /* the CLI's version as its own output said, or NULL */
            size_t unknown_events; /* stream lines of a kind the adapter does not know */
            /* Added in 0.2.0. The most this call was allowed to spend (the least left
             * under any cap above it when it started; passed to a CLI that stops itself
             * at a budget), or 0: no cap applied. */
            double budget_usd;
        };
        void *reserved[4]; /* members added later come out of it (docs/library.md#abi) */
    };
};

/* What a provider last said about its usage quota (claude's rate_limit_event, codex's
 * rollout `rate_limits`). Allocated by the library, read through ar_result.rate_limit. */
struct ar_rate_limit {
    char *status;        /* "allowed", "allowed_warning" or "rejected" */
    char *window;        /* "five_hour", "seven_day", "300m", … or NULL when not said */
    double used_percent; /* 0-100; < 0 when not said */
    int64_t resets_at;   /* Unix seconds; 0 when not said */
    char *source;        /* "claude:rate_limit_event", "codex:rollout" */
};

/* What a run under a cap spent, and whether a call was refused (ar_result.budget). */
struct ar_run_budget {
    double cap_usd;    /* the run's own cap (options.max_cost_usd, or the share's
                          max_cost_each), or 0: it had none, only a cap above it */
    double spent_usd;  /* the known cost of its calls */
    char *refused;     /* why a call was not made for want of budget (error "budget"), or NULL */
    void *reserved[4]; /* members added later come out of it (docs/library.md#abi) */
};

/* Where a run with a worktree of its own left its work (ar_result.worktree). */
struct ar_result_worktree {
    char *path;   /* the worktree the run ran in */
    int kept;     /* it is still there: it holds uncommitted changes, or keep_worktree */
    char *branch; /* its branch, or NULL: deleted, the run left nothing on it */
    char *base;   /* the commit it started from, in hex */
    char *commit; /* the branch's tip once it moved past base (the commit of the run's
                     changes), or NULL */
};

/* What extraction left out of the answer, or merged into it: a local fix with a count and a place.
 */
struct ar_fix_detail {
    const char *fix;   /* "extra_values" or "members_after_close" (static) */
    size_t count;      /* how many values left out, or members merged */
    size_t byte;       /* where the first one starts in `output` */
    void *reserved[2]; /* members added later come out of it (docs/library.md#abi) */
};

/* A tool call the CLI refused (or a write or shell tool the call was never offered). */
struct ar_denial {
    char *tool;        /* the CLI's tool name ("Write", "apply_patch", "write_file") */
    char *target;      /* the file, command or URL it was for, or NULL when the CLI did not say */
    void *reserved[2]; /* members added later come out of it (docs/library.md#abi) */
};

/*
 * The result of a run. Everything is owned by the result and freed by
 * ar_result_destroy(); read it, don't change it.
 */
struct ar_result {
    int ok; /* the run produced what was asked (and error.code is 0) */
    char *provider;
    char *model;          /* the model actually used, or NULL */
    char *output;         /* the final model text of the last call, or NULL */
    char *json;           /* the accepted JSON value as compact text, its strings and
                             numbers byte for byte as the model wrote them, or NULL */
    struct json_t *value; /* the same value parsed (numbers past what jansson holds are
                             the nearest double), borrowed from the result, or NULL */
    enum ar_repair_kind repair;
    char **local_fixes;    /* NULL-terminated names of local repairs made, never NULL */
    struct ar_usage usage; /* summed over calls */
    double cost_usd;       /* summed; meaningful unless cost_source is AR_COST_UNKNOWN */
    enum ar_cost_source cost_source;
    char *session_id;
    uint64_t duration_ms;                    /* the whole run */
    int exit_code;                           /* the CLI's exit status of the last call */
    int files_tracked;                       /* 1: `files` is what the run changed */
    enum ar_files_untracked files_untracked; /* why files_tracked is 0; meaningless when 1 */
    struct ar_posture posture; /* the main call's (the last main call with a fallback) */
    struct ar_file_change *files;
    size_t n_files;
    struct ar_call_record *calls;
    size_t n_calls;
    struct ar_error error; /* code 0 when ok */
    char **error_details;  /* NULL-terminated violations ("/issues/0/line: …"), never NULL */
    int cached;            /* every call was served from the cache */
    /* What the cached calls spent when they were made (zero when none was cached);
     * usage and cost_usd above are what this run spent. */
    struct ar_usage cached_usage;
    double cached_cost_usd;
    enum ar_cost_source cached_cost_source;
    size_t n_cached;          /* how many calls came from the cache */
    struct ar_denial *denied; /* the tool calls the CLIs refused, over every call */
    size_t n_denied;
    double retry_after_s; /* rate_limit/api_error: when the provider said to come back
                             (seconds from the end of the run); < 0 when unknown */
    struct ar_result_worktree *worktree; /* NULL unless options.worktree gave the run one */
    /* The local_fixes that come with a count and a place: the values the answer
     * left out (extra_values), the members merged into it (members_after_close). */
    struct ar_fix_detail *fix_details;
    size_t n_fix_details;
    /* The provider's last word on its quota over the run's calls, or NULL when none said. */
    struct ar_rate_limit *rate_limit;
    /* Added in 0.2.0. The caps the run lived under (options.max_cost_usd, its share's), or
     * NULL when none applied. */
    struct ar_run_budget *budget;
};

/* ---- runs on the caller's libuv loop ---------------------------------------------------- */

struct uv_loop_s; /* libuv's uv_loop_t: the caller's, borrowed */
struct ar_run;    /* a run in progress */

/*
 * The run is over: res is the result, owned by the callee from here on
 * (ar_result_destroy()); it may have failed (res->ok, res->error), also with
 * "interrupted" after ar_run_cancel(). Called exactly once, from the loop; the
 * run handle is freed after this returns.
 */
typedef void ar_run_done_fn(struct ar_run *run, struct ar_result *res, void *arg);

/*
 * Starts one job on the caller's libuv loop and returns at once; the caller
 * runs the loop (uv_run()). Events come by callback from the loop: live
 * progress through opts->progress, each call's start and end through
 * opts->on_call, and the result through done(run, res, arg).
 *
 * opts is copied, strings included: the caller's may go away once this
 * returns (the callbacks and their args must stay valid until done). *out
 * (out may be NULL) is the run, valid until done returns: the handle for
 * ar_run_cancel(). Returns 0 (done will be called), or a negative AR_E… code
 * with err set when the run cannot be set up (bad options, unknown template
 * or provider): done is then never called, and nothing was left on the loop
 * (it may be closed at once). Like ar_run(), it watches no signal for you
 * (SIGPIPE and SIGCHLD: see the top of this header).
 */
AR_API int ar_run_start(struct uv_loop_s *loop, const struct ar_run_options *opts,
                        ar_run_done_fn *done, void *arg, struct ar_run **out, struct ar_error *err);

/*
 * Ends the run: its CLI's process group gets SIGTERM, then SIGKILL after
 * kill_grace_ms; a rate-limit wait ends at once, and no further call (repair,
 * retry, fallback) starts. done still comes, from the loop, with error
 * "interrupted". A second call SIGKILLs at once (a second Ctrl-C). Only
 * between ar_run_start() and the return of done.
 */
AR_API void ar_run_cancel(struct ar_run *run);

/*
 * Runs one job to completion on a private event loop: ar_run_start() on a
 * loop of its own, run until done.
 *
 * It watches no signal for you (SIGPIPE and SIGCHLD: see the top of this
 * header). The CLI runs in its own process group, so
 * a host program that is killed does not take it along: a host that wants
 * Ctrl-C to end the run must handle the signal itself (agentrun's own CLI
 * does), or run agentrun as a child process.
 * Returns 0 with *out set (the run may still have failed: see (*out)->ok and
 * (*out)->error), or a negative AR_E… code with err set when the run could
 * not be set up (bad options, unknown template, unknown provider); *out is
 * then NULL. The caller owns *out and frees it with ar_result_destroy().
 */
AR_API int ar_run(const struct ar_run_options *opts, struct ar_result **out, struct ar_error *err);

/* Frees r and everything it holds. NULL is fine. */
AR_API void ar_result_destroy(struct ar_result *r);

/*
 * The RunResult JSON (schema "agentrun.run/1", docs/run-result.md) of r.
 * Compact on one line unless pretty. Returns a string the caller free()s,
 * or NULL when out of memory.
 */
AR_API char *ar_result_to_json(const struct ar_result *r, int pretty);

/* The process exit status for r per DESIGN §7 (0, 3, 4, 5, …). */
AR_API int ar_result_exit_status(const struct ar_result *r);

/*
 * The result of a run that never started (bad options, an unreadable input):
 * ok false, error {code, message} (message NULL: ar_strerror(code)), no call;
 * `provider` may be NULL. What
 * `agentrun run --format json` prints then. Free it with ar_result_destroy();
 * NULL when out of memory.
 */
AR_API struct ar_result *ar_result_new_failed(const char *provider, int code, const char *message);

/* The RunResult's words for these enums: "none", "local", "model"; "unknown", "cli",
 * "price_table", "cache". Static storage. */
AR_API const char *ar_repair_kind_name(enum ar_repair_kind k);
AR_API const char *ar_cost_source_name(enum ar_cost_source s);

/*
 * A cost in dollars as the RunResult writes it: rounded to 1e-10, so a sum of
 * prices prints 0.06, not 0.060000000000000005, while every real price survives.
 */
AR_API double ar_cost_round(double usd);

/* ---- the providers ---------------------------------------------------------------------- */

/* "claude, codex, gemini": every provider's name, in `--provider auto` order. Static storage. */
AR_API const char *ar_provider_names(void);

/*
 * The same names for text built into a program (help, man pages, completions),
 * where ar_provider_names() cannot be called: the registry's names in its order
 * (a unit test holds these to it).
 */
#define AR_PROVIDERS_OR     "claude, codex or gemini"
#define AR_PROVIDERS_AND    "claude, codex and gemini"
#define AR_PROVIDER_CHOICES "claude|codex|gemini"

/* 1 when `name` names a provider ("claude"), else 0 ("auto" is no provider). */
AR_API int ar_provider_known(const char *name);

/*
 * Checks a provider list ("codex,gemini", commas or spaces between names), as
 * ar_run_options.fallback takes it. Returns 0, or AR_EUSAGE with err naming
 * the first name that is not a provider.
 */
AR_API int ar_provider_check_list(const char *list, struct ar_error *err);

/*
 * Marks the file open on fd as one the host program itself writes (its stdout
 * redirected into the work tree, a batch's output file): no run reports it
 * among the files it changed. Only regular files count (by device and inode,
 * so any path to them matches); at most 16. Call it before starting runs,
 * from the thread that runs them.
 */
AR_API void ar_ignore_own_file(int fd);

/*
 * Makes the process adopt the orphans of its runs (on) or stop (0): a child
 * subreaper on Linux (PR_SET_CHILD_SUBREAPER), so a process a CLI started
 * cannot leave its run by a parent that exits (a daemon, codex's shell
 * snapshot once codex has exited): it is reparented to this process, and the
 * run ends it, and reaps it, before the run is done. Without it a run still
 * ends what it can find below the CLI it started (its group, the sessions its
 * processes made, what an earlier look saw), but not a process whose every
 * link to the run is gone. Process-wide: while on, the library reaps each
 * child of the process that it did not start itself and ends the ones no run
 * claims when the runs that may own them are over, so turn it on only in a
 * program whose children are all started by agentrun (the agentrun command
 * does so). Call it before starting runs. Returns 0, or -1 where the system
 * has no subreapers (then nothing changed). See docs/security.md.
 */
AR_API int ar_adopt_orphans(int on);

/*
 * Makes every CLI a run starts end when this process ends (on), even when it is
 * killed by SIGKILL, or stops doing so for the runs started later (0). At the first
 * spawn a small watcher process is forked that outlives nothing: when this process
 * is gone it SIGKILLs the process group and (on Linux) the session of every CLI
 * still running, grandchildren included, and exits; runs that ended are forgotten.
 * Process-wide, and a forked helper process of the library's, so it is the
 * program's choice (the agentrun command turns it on). Call it before starting
 * runs. Turned off (0) once the runs still running have ended, the watcher exits
 * then, so a program that is done calling CLIs can say so and not wait for it when it
 * exits. Returns 0. See docs/supervisor.md.
 */
AR_API int ar_end_children_on_exit(int on);

/*
 * The version of the library the program runs with ("0.2.0"), which can be
 * newer than the headers it was compiled with (AR_VERSION_STRING). Static storage.
 */
AR_API const char *ar_version(void);

/* The same as one number, as AR_VERSION_NUMBER encodes it. */
AR_API unsigned ar_version_number(void);

#ifdef __cplusplus
}
#endif

#endif
