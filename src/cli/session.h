/*
 * The CLI side of running models: the options every model-calling command
 * shares (provider, model, timeouts, …), the logger that writes diagnostics to
 * stderr (text or JSON lines), the live status line, and signal handling.
 *
 * A command that calls a model:
 *   1. ar_cli_session_init(&s);
 *   2. in its option loop, offers every option to ar_cli_session_option()
 *      first (returns 1 when it was a shared option);
 *   3. ar_cli_session_begin(&s) creates the loop and watches SIGINT/TERM/HUP;
 *   4. ar_cli_session_run() runs one job to completion (live status shown),
 *      or the command starts the library's batch or review on
 *      ar_cli_session_uv(), hands its cancel to ar_cli_session_set_cancel()
 *      and runs the loop (ar_cli_session_progress_fn gives it the status line);
 *   5. ar_cli_session_end(); ar_cli_session_exit_status() maps a received
 *      signal to 130/143/129 and wins over any other status.
 */
#ifndef AR_CLI_SESSION_H
#define AR_CLI_SESSION_H

#include <jansson.h>
#include <uv.h>

#include "agentrun/agentrun.h"
#include "agentrun/share.h"
#include "cli/cli.h"
#include "util/strv.h"

#define AR_CLI_NSIGNALS 3 /* SIGINT, SIGTERM, SIGHUP */

/* Keys of the shared long-only options; commands use keys from AR_CLI_KEY_COMMAND up. */
enum {
    AR_CLI_KEY_TIMEOUT = 256,
    AR_CLI_KEY_IDLE_TIMEOUT,
    AR_CLI_KEY_NO_REPAIR,
    AR_CLI_KEY_TRANSCRIPT,
    AR_CLI_KEY_PROMPTS_DIR,
    AR_CLI_KEY_PRICES,
    AR_CLI_KEY_LOG_FORMAT,
    AR_CLI_KEY_FALLBACK,
    AR_CLI_KEY_RECORD,
    AR_CLI_KEY_REPLAY,
    AR_CLI_KEY_CACHE,
    AR_CLI_KEY_CACHE_DIR,
    AR_CLI_KEY_CACHE_TTL,
    AR_CLI_KEY_TRUST_PROJECT,
    AR_CLI_KEY_MAX_WAIT,
    AR_CLI_KEY_ALLOW_DIR,
    AR_CLI_KEY_MAX_COST,
    AR_CLI_KEY_COMMAND = 512,
};

/* The shared options, for a command's option table (ends with a comma). */
// clang-format off
#define AR_CLI_SESSION_OPTS \
    {"provider", 'p', "NAME", \
     "claude, codex, gemini or auto (default: $AGENTRUN_PROVIDER, else auto)", \
     "claude|codex|gemini|auto"}, \
    {"fallback", AR_CLI_KEY_FALLBACK, "LIST", \
     "providers tried in turn after not_found, auth, rate_limit or api_error, while no file " \
     "changed (default: none)", NULL}, \
    {"max-wait", AR_CLI_KEY_MAX_WAIT, "DURATION", \
     "wait up to this long for a rate limit, then call once more; 0: never wait or retry " \
     "(default: 60s)", NULL}, \
    {"model", 'm', "MODEL", "the model to ask for (default: $AGENTRUN_MODEL, else the CLI's)", \
     NULL}, \
    {"directory", 'C', "DIR", "run the CLI in DIR (default: the current directory)", "@dir"}, \
    {"allow-dir", AR_CLI_KEY_ALLOW_DIR, "DIR", \
     "work, and read the files a request names, only in DIR and below; repeatable (default: " \
     "anywhere)", "@dir"}, \
    {"trust-project", AR_CLI_KEY_TRUST_PROJECT, NULL, \
     "let the CLI load the checkout's settings, hooks, MCP servers and CLAUDE.md/AGENTS.md/" \
     "GEMINI.md (default: $AGENTRUN_TRUST_PROJECT=1, else never)", NULL}, \
    {"timeout", AR_CLI_KEY_TIMEOUT, "DURATION", \
     "wall-clock limit per call: 90, 90s, 15m; 0: none (default: 900s)", NULL}, \
    {"idle-timeout", AR_CLI_KEY_IDLE_TIMEOUT, "DURATION", \
     "end a call silent this long on stdout and stderr; 0: never (default: 300s)", NULL}, \
    {"no-repair", AR_CLI_KEY_NO_REPAIR, NULL, \
     "never make the repair call (default: one repair call when the output fails)", NULL}, \
    {"transcript", AR_CLI_KEY_TRANSCRIPT, "FILE", \
     "append the CLIs' raw stdout to FILE (default: none)", "@file"}, \
    {"prompts-dir", AR_CLI_KEY_PROMPTS_DIR, "DIR", \
     "look for prompt overrides in DIR first (default: $XDG_CONFIG_HOME/agentrun/prompts)", \
     "@dir"}, \
    {"prices", AR_CLI_KEY_PRICES, "FILE", \
     "price table override, JSON (default: $AGENTRUN_PRICES, else built in)", "@file"}, \
    {"record", AR_CLI_KEY_RECORD, "DIR", \
     "write a cassette of every CLI call into DIR (default: $AGENTRUN_RECORD)", "@dir"}, \
    {"replay", AR_CLI_KEY_REPLAY, "DIR", \
     "answer every call from the cassettes in DIR, starting no CLI (default: $AGENTRUN_REPLAY)", \
     "@dir"}, \
    {"cache", AR_CLI_KEY_CACHE, NULL, \
     "reuse the answers of text-only calls: review, prioritize, route, run --no-tools, repair " \
     "calls (default: off)", NULL}, \
    {"cache-dir", AR_CLI_KEY_CACHE_DIR, "DIR", \
     "the cache directory (default: $XDG_CACHE_HOME/agentrun, else ~/.cache/agentrun)", "@dir"}, \
    {"cache-ttl", AR_CLI_KEY_CACHE_TTL, "SECONDS", \
     "ignore cache entries older than this: 3600, 90m, 7d (default: no limit)", NULL}, \
    {"verbose", 'v', NULL, "more diagnostics on stderr (twice: debug)", NULL}, \
    {"quiet", 'q', NULL, "errors only on stderr: no status line, no summary", NULL}, \
    {"log-format", AR_CLI_KEY_LOG_FORMAT, "FORMAT", \
     "diagnostics as text or as JSON lines (default: text)", "text|json"},

/* --max-cost for a command whose cap covers everything it spends (run, review, prioritize,
 * route): the run's (or the review's) max_cost_usd. batch and mcp have caps of their own. */
#define AR_CLI_MAX_COST_OPT \
    {"max-cost", AR_CLI_KEY_MAX_COST, "USD", \
     "the most the command may spend, every CLI call included (main, repair, retries, " \
     "fallback, every chunk); a call that would not fit is not made: exit 6 (default: no cap)", \
     NULL},
// clang-format on

struct ar_cli_session {
    const struct ar_cli_command *cmd;
    struct ar_run_options run; /* shared fields filled from the options */
    /* The rules every run of the command lives under (agentrun/share.h): --allow-dir here,
     * a command's own flags (mcp's caps and providers) set before ar_cli_session_begin(),
     * which makes the share and puts it in run.share. */
    struct ar_share_options share_opts;
    const char *dirs[32]; /* --allow-dir, in order (argv's strings) */
    size_t n_dirs;
    struct ar_share *share;
    int log_json;
    uv_loop_t uv; /* the loop every run of the command runs on */
    int uv_on;
    uv_signal_t sig[AR_CLI_NSIGNALS];
    int n_sig;
    void (*cancel)(void *arg); /* what a signal cancels (ar_cli_session_set_cancel) */
    void *cancel_arg;
    int signal; /* the signal that interrupted us, or 0 */
    /* live status line */
    int status_enabled;
    int status_shown;
    uv_timer_t ticker;
    int ticker_on;
    uint64_t status_start_ms;
    char status_provider[32];
    char status_job[64];
    char status_tool[160];
    unsigned running;       /* jobs in flight (batch/review chunks) */
    char status_extra[160]; /* a command's own summary ("12/200 done") */
    /* When set, called before each draw of the status line (every tick too) to bring
     * status_extra up to date: what is running changes between the events. */
    void (*status_refresh)(void *arg);
    void *status_refresh_arg;
    uint64_t wait_until_ms; /* a run waits (rate limit) until then: a countdown */
    char wait_reason[32];
    /* The files the options name (completion "@file"), which --transcript may not be: an
     * output is never one of the inputs (ar_file_check_output()). */
    const char *files[16];
    size_t n_files;
};

void ar_cli_session_init(struct ar_cli_session *s, const struct ar_cli_command *cmd);

/*
 * Makes the share from share_opts and --allow-dir, once the options are read (a command
 * that reads a file a request names first calls it through ar_cli_session_read()).
 * Returns 0, or the exit status after printing why.
 */
int ar_cli_session_share(struct ar_cli_session *s);

/*
 * Reads the file at path ("-": standard input) a command line names, as the share allows
 * (--allow-dir), into out; what names it in messages ("--schema"). Returns 0, or the
 * exit status after printing why.
 */
struct ar_buf;
int ar_cli_session_read(struct ar_cli_session *s, const char *what, const char *path,
                        struct ar_buf *out);

/* Frees what the session holds whether or not it began (the share); call it on every way
 * out of a command that may have read a file through the session. */
void ar_cli_session_finish(struct ar_cli_session *s);

/*
 * Makes the share (from share_opts and --allow-dir) and the loop, and watches the
 * signals. Returns 0, or the exit status after printing why (a share the library
 * refuses: an --allow-dir that does not exist, agentrun nested too deep).
 */
int ar_cli_session_begin(struct ar_cli_session *s);

/*
 * Offers one parsed option. Returns 1 when it was a shared option (applied),
 * 0 when it is not one, or -1 after printing a usage error (exit 2).
 */
int ar_cli_session_option(struct ar_cli_session *s, int key, const char *arg);

/*
 * ar_cli_next() that applies the shared options itself: returns the next
 * option that is the command's own (its argument in *arg), -1 when the
 * options end, or -2 when the command must return p->status (help was
 * printed, or a usage error).
 */
int ar_cli_session_next(struct ar_cli_session *s, struct ar_cli_parser *p, const char **arg);

/* The session's libuv loop, for the library's async API (ar_batch_start(), …). */
uv_loop_t *ar_cli_session_uv(struct ar_cli_session *s);

/*
 * What a signal cancels: on the first SIGINT/SIGTERM/SIGHUP fn(arg) runs (the
 * command's ar_*_cancel()), on a second one it runs again, which SIGKILLs at
 * once. NULL: nothing (the exit status still reports the signal).
 */
void ar_cli_session_set_cancel(struct ar_cli_session *s, void (*fn)(void *arg), void *arg);

/* Prints why a library call could not start (err.where too, unless the message names
 * it) and returns its exit status. */
int ar_cli_session_start_failed(const struct ar_error *err);

/* Runs the session's loop with the live status line until the work started on it is
 * done; a signal runs cancel(arg) meanwhile. */
void ar_cli_session_wait(struct ar_cli_session *s, void (*cancel)(void *arg), void *arg);

/*
 * Runs one job on the session's loop with the live status line. o is usually
 * a copy of s->run with the command's own fields set. Returns 0 with *out set
 * (the caller owns it), or the exit status after printing why it could not start.
 * The job is the process's last: once it has its result the keeper's guard is turned
 * off (ar_end_children_on_exit(0)), so the keeper ends with the job's last CLI.
 */
int ar_cli_session_run(struct ar_cli_session *s, const struct ar_run_options *o,
                       struct ar_result **out);

/* For commands that start runs themselves: progress callback and argument for
 * ar_run_options.progress / progress_arg (keeps the status line). */
ar_progress_fn *ar_cli_session_progress_fn(void);
void ar_cli_session_status_start(struct ar_cli_session *s);
void ar_cli_session_status_clear(struct ar_cli_session *s);

/* Monotonic milliseconds (libuv's clock, the one the library's durations use). */
uint64_t ar_cli_now_ms(void);

/* Closes the loop. */
void ar_cli_session_end(struct ar_cli_session *s);

/* 130/143/129 when a signal interrupted us, else status. */
int ar_cli_session_exit_status(const struct ar_cli_session *s, int status);

/* What one command's model calls cost, for ar_cli_session_summary(). */
struct ar_cli_summary {
    const char *provider, *model; /* NULL when unknown */
    struct ar_usage usage;
    double cost_usd;
    enum ar_cost_source cost_source;
    uint64_t duration_ms;
    size_t calls;
    const char *extra; /* the command's own tail ("2 files changed, 1 call, repair none") or NULL */
    /* Calls the result cache answered (--cache), and what they cost when they were made. */
    size_t from_cache;
    double cached_cost_usd;
    enum ar_cost_source cached_cost_source;
};

/*
 * The one line a model-calling command ends with on stderr: "agentrun review:
 * claude (claude-opus-4-8): 1200 input + 300 cached + 40 output tokens, $0.0071,
 * 4.2 s, 2 calls" — or, with --log-format json, the same facts as a JSON line
 * {"level":"info","event":"<command>_summary",…}. Nothing under -q.
 */
void ar_cli_session_summary(const struct ar_cli_session *s, const struct ar_cli_summary *sum);

/* Writes o (taken; NULL: nothing) to stderr as one compact JSON line, numbers in their
 * shortest form: the --log-format json form of a command's own events. */
void ar_cli_print_json_event(json_t *o);

/* The summary of one run's result r (nothing when no CLI ever ran: not installed,
 * or interrupted first); extra as in struct ar_cli_summary. */
void ar_cli_session_summary_of(const struct ar_cli_session *s, const struct ar_result *r,
                               const char *extra);

/* Prints a failed result's error, with the fix where -p is one (cli/failure.h), and its
 * details under -v or when few, to stderr. */
void ar_cli_print_result_error(const struct ar_cli_session *s, const struct ar_result *r);

/* Whether the user chose the provider (-p, AGENTRUN_PROVIDER), rather than auto. */
int ar_cli_session_provider_named(const struct ar_cli_session *s);

/* The logger the session installs (stderr, text or JSON lines). */
void ar_cli_log(void *arg, enum ar_log_level level, const char *event, const char *fields,
                const char *msg);

#endif
