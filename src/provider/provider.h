/*
 * Provider adapters: everything agentrun knows about one CLI (claude, codex,
 * gemini) lives behind this table. Code outside src/provider/ never tests
 * which provider it has; it calls through struct ar_provider.
 *
 * Life of one call:
 *   1. ar_provider_prepare_call(p, spec, prompt, len, &setup, err), the one
 *      place every call of every CLI gets what it is given: p->prepare()'s argv
 *      (never the prompt: it goes on stdin), environment additions and temporary
 *      files (codex's schema file); agentrun's own variables the CLI must not
 *      inherit (ar_provider_env_rules[]); and p->deliver()'s stdin, the prompt
 *      made data for this CLI (claude: one stream-json message marked
 *      client_composed, never expanded);
 *   2. u = p->unwrap_new(spec), BEFORE the CLI is spawned (codex reads a
 *      resumed thread's running token total then); the supervisor feeds every stdout line to
 *      p->unwrap_line(u, …), which reports progress and says when the final
 *      event was seen (the caller then arms the final-event grace);
 *   3. p->unwrap_finish(u, &exit, &reply): the final text, usage, session,
 *      model, cost and the error class;
 *   4. p->unwrap_free(u); ar_call_setup_finish(&setup) unlinks the temp files.
 *
 * The unwrap state belongs to the adapter that made it: u must go back to the
 * same provider's functions. Each adapter keeps its own fields in a struct
 * private to its file (src/provider/common.h says how), so adding a provider
 * adds a file and a row in registry.c and changes no shared struct.
 */
#ifndef AR_PROVIDER_PROVIDER_H
#define AR_PROVIDER_PROVIDER_H

#include <stddef.h>

#include "agentrun/agentrun.h"
#include "agentrun/doctor.h"
#include "agentrun/error.h"
#include "agentrun/usage.h"
#include "util/buf.h"
#include "util/strv.h"

/* What the caller asks of one call. */
struct ar_call_spec {
    const char *model;     /* NULL: the CLI's default */
    const char *schema;    /* the contract as JSON text, or NULL (native structured output) */
    const char *resume;    /* a session/thread id to continue, or NULL */
    const char *cwd;       /* the working directory of the call */
    int allow_edits;       /* edit permissions instead of read-only (tools == AR_TOOLS_EDIT) */
    enum ar_tools tools;   /* NONE, READ or EDIT (never AUTO): DESIGN §4b */
    int trust_project;     /* load what the checkout supplies: settings, hooks, MCP, context */
    int no_session;        /* no later --resume: the CLI need not persist the session */
    int in_git_repo;       /* cwd is inside a git work tree */
    double max_budget_usd; /* > 0: a budget the CLI should enforce itself, where it can */
};

/* What prepare() builds; the caller owns it and calls ar_call_setup_finish(). */
struct ar_call_setup {
    struct ar_strv argv;     /* argv[0] is the binary (AGENTRUN_<NAME>_BIN, else the name) */
    struct ar_strv env;      /* "NAME=VALUE" additions for the child */
    struct ar_strv tmpfiles; /* unlinked by ar_call_setup_finish() */
    struct ar_strv tmpdirs;  /* removed with their content by ar_call_setup_finish() */
    /* Paths of this machine that argv elements contain (codex's absolute cwd): a recorded
     * call matches on another machine with them replaced. */
    struct ar_strv local_paths;
    /* What the call loads of the checkout, as the adapter could arrange it (both 0 after
     * init; an adapter sets them when the CLI offers no way to refuse, or trust_project). */
    int project_config;
    int context_files;
    /* Where the CLI runs when not in spec->cwd (NULL: there): gemini's untrusted text
     * calls run in an empty directory, so that nothing a prompt names can be read. */
    char *cwd;
    /* What the CLI reads on stdin (ar_provider_prepare_call()): the prompt itself, borrowed
     * from the caller, or stdin_buf when the adapter wraps it. Valid until finish. */
    const char *stdin_data;
    size_t stdin_len;
    struct ar_buf stdin_buf;
};

void ar_call_setup_init(struct ar_call_setup *s);
void ar_call_setup_finish(struct ar_call_setup *s);

/* A progress event from the stream (borrowed strings, valid during the call). */
struct ar_progress {
    const char *tool; /* "Write", "apply_patch", "write_file", … or NULL */
    const char *path; /* the file it touches, or NULL */
};

/* How the CLI process ended, for unwrap_finish(). */
struct ar_exit_info {
    int status; /* exit status or 128 + signal */
    int term_signal;
    int killed;              /* agentrun ended it (timeout, cap, cancel) */
    const char *stderr_tail; /* borrowed */
    size_t stderr_len;
};

/* What one call yielded. Strings are owned; ar_reply_finish() frees them. */
struct ar_reply {
    char *text;       /* final text, verbatim; NULL when none */
    char *session_id; /* session/thread id, or NULL */
    char *model;      /* the model actually used, or NULL */
    struct ar_usage usage;
    int has_usage;
    int usage_from_stderr; /* tokens were read from stderr text (codex plain mode) */
    int usage_cumulative;  /* usage is a resumed thread's running total: the per-call
                              numbers could not be known (codex without its rollout file) */
    double cost_usd;       /* the CLI's own cost, when has_cost */
    int has_cost;
    int final_seen;       /* the final event (result / turn.completed / …) arrived */
    int error;            /* 0 or AR_EAUTH, AR_ERATELIMIT, AR_EAPI, AR_ECLIFAILED,
                             AR_ETRUNCATED, AR_EEMPTY, AR_EINTERRUPTED */
    char *error_msg;      /* the CLI's own words, or NULL */
    struct ar_strv files; /* paths the CLI itself reported changing */
    size_t nul_replaced;  /* NUL characters in the CLI's strings, replaced with U+FFFD */
    /* Tool calls the CLI refused, or tools the call was never offered, as pairs:
     * denied.v[2i] is the tool, denied.v[2i+1] its target ("" when unknown). */
    struct ar_strv denied;
    int acted;             /* a tool that can change files (an edit, a shell command) ran */
    int http_status;       /* the failing API request's HTTP status, when the CLI said; else 0 */
    int transient;         /* error is an API failure worth one retry (5xx, overloaded) */
    double retry_after_s;  /* when the provider said to come back, in seconds; < 0: it did not */
    char *cli_version;     /* the CLI's version as its stream states it (claude's init), or NULL */
    size_t unknown_events; /* stream lines of a kind the adapter does not know (a newer CLI's) */
    /* The CLI's last word on its quota (claude's rate_limit_event, codex's rollout):
     * has_rate_limit says whether rate_limit holds one; its strings are owned. */
    int has_rate_limit;
    struct ar_rate_limit rate_limit;
};

void ar_reply_init(struct ar_reply *r);
void ar_reply_finish(struct ar_reply *r);

struct ar_unwrap; /* per-call stream state, opaque: owned by the adapter that made it */

/* enum ar_login (AR_LOGIN_UNKNOWN, _YES, _NO) is public: agentrun/doctor.h. */

/* What the CLI's status command (ar_provider.login_argv) answered. */
struct ar_login_probe {
    int status;      /* its exit status; -1 when it could not run, was killed or hung */
    const char *out; /* stdout, borrowed, never NULL */
    size_t out_len;
    const char *err; /* stderr's tail, borrowed, never NULL */
    size_t err_len;
};

struct ar_login_state {
    enum ar_login state;
    /* YES: how ("API key in $ANTHROPIC_API_KEY"); NO: what is missing and what to do
     * ("not logged in: set ANTHROPIC_API_KEY, or …"); UNKNOWN: why. */
    char how[320];
    int key_only; /* YES on the strength of a key agentrun found, which nothing checked */
};

struct ar_provider {
    const char *name;              /* "claude" */
    const char *bin_env;           /* "AGENTRUN_CLAUDE_BIN" */
    const char *install_hint;      /* "npm install -g @anthropic-ai/claude-code" */
    const char *model_env;         /* the CLI's own model variable ("CODEX_MODEL") or NULL */
    const char *const *auth_env;   /* variables that carry credentials (names only) */
    const char *const *auth_files; /* login files relative to $HOME */
    const char *home_env; /* the variable that moves the CLI's config dir ("CODEX_HOME") or NULL */
    const char *home_dir; /* that dir's default, relative to $HOME (".codex") or NULL */
    int enforces_budget;  /* the CLI stops itself at spec->max_budget_usd (claude) */
    const char *posture_note; /* how the posture is reached, for doctor (one sentence) */
    /* What to do, headless, when the CLI cannot log in: the variables and the command
     * (no interactive login), for ar_provider_auth_message(). */
    const char *auth_help;
    /* The oldest and newest versions of the CLI agentrun was tested with (the e2e suite's pin
     * and the newest published one it passed with; docs/providers.md#supported-versions). */
    const char *tested_min;
    const char *tested_max;
    /* The oldest version agentrun starts at all (NULL: any), because an older one would
     * act on a prompt's words (claude < 2.1.248 expands @file mentions whatever it is told):
     * a call of an older one is refused before it starts (ar_provider_check_version()). */
    const char *min_version;

    /* Logging in. login_argv: the arguments (after the binary) of the CLI's own status
     * command, which answers without calling a model; NULL when it has none. login():
     * whether the CLI can authenticate, from probe (that command's answer; NULL when not
     * asked) and what the environment and the CLI's own files say, into *out; it never
     * spawns, and says NO only when the CLI would refuse too. doctor asks with the
     * command's answer. login_before_call: the CLI does not fail by itself when it cannot
     * log in (codex retries the network for a minute), so a call that would spawn it asks
     * login(NULL) first, and a NO fails the call with `auth` (src/run/call.c). */
    const char *const *login_argv;
    void (*login)(const struct ar_login_probe *probe, struct ar_login_state *out);
    int login_before_call;

    int (*prepare)(const struct ar_call_spec *spec, struct ar_call_setup *out,
                   struct ar_error *err);
    /*
     * The rule "a prompt reaches the CLI as data", for this CLI: what it is to read on
     * stdin so that no word of the prompt (a file mention, a slash command, …) is acted on
     * before the model sees it. Appends to out (empty) the bytes to send, or leaves it
     * empty when the prompt goes as it is. prompt (len bytes, borrowed) is any bytes.
     * Returns 0 or an AR_E… code with err set. NULL: the prompt goes as it is.
     */
    int (*deliver)(const struct ar_call_spec *spec, const char *prompt, size_t len,
                   struct ar_buf *out, struct ar_error *err);
    /* Non-zero when prepare() hands the contract `schema` (JSON text, borrowed) to the CLI
     * natively (claude --json-schema, codex --output-schema): the prompt then need not state
     * it (ar_prompt_contract_lead()). NULL: the CLI has no structured output. */
    int (*native_contract)(const char *schema);
    /* A new stream state for one call of spec (borrowed; NULL for captured output), or
     * NULL when out of memory. The caller owns it and gives it to unwrap_free(). */
    struct ar_unwrap *(*unwrap_new)(const struct ar_call_spec *spec);
    /* Feeds one stdout line. Returns 1 when it was the final event, else 0.
     * *ev is filled when the line is a tool use worth showing (else zeroed). */
    int (*unwrap_line)(struct ar_unwrap *u, const char *line, size_t len, struct ar_progress *ev);
    void (*unwrap_finish)(struct ar_unwrap *u, const struct ar_exit_info *exit,
                          struct ar_reply *out);
    /* Frees u and all it holds; NULL does nothing. */
    void (*unwrap_free)(struct ar_unwrap *u);

    /* Parses output a script already captured, streaming or not (claude
     * json/stream-json, codex --json/plain, gemini json/stream-json). Returns
     * 0 with *out filled, or AR_ENOJSON when it is not this CLI's wrapper. */
    int (*unwrap_captured)(const char *data, size_t len, struct ar_reply *out);

    /* Reads what the CLI printed on stderr when its stdout held no wrapper
     * (codex plain mode: `tokens used` and `session id:`, marking
     * usage_from_stderr; gemini -o json: the error object at the end). Fills
     * only what it finds in *out (which must be initialized). Returns 0 when
     * it found something, else AR_ENOJSON. */
    int (*unwrap_stderr)(const char *data, size_t len, struct ar_reply *out);
};

/*
 * Builds everything one call of p is given (init'ed setup; the caller finishes it after the
 * call): p->prepare(), the withheld variables of ar_provider_env_rules[], and p->deliver()'s
 * stdin for prompt (len bytes, borrowed until finish: setup->stdin_data may point into it).
 * Returns 0 or an AR_E… code with err set.
 */
int ar_provider_prepare_call(const struct ar_provider *p, const struct ar_call_spec *spec,
                             const char *prompt, size_t len, struct ar_call_setup *setup,
                             struct ar_error *err);

/*
 * agentrun's own environment variables, and whether a CLI it starts inherits each: the one
 * table of them. Any AGENTRUN_* variable not named here with AR_ENV_PASS is withheld, so a
 * variable a later version adds is a secret until someone decides otherwise. A test holds
 * every AGENTRUN_* name the sources use to a row (tests/unit/test_provider_env.c).
 */
enum ar_env_rule {
    AR_ENV_PASS,     /* the CLI (and an agentrun it starts) sees it as it is */
    AR_ENV_WITHHOLD, /* removed from the CLI's environment */
};
struct ar_env_var {
    const char *name;
    enum ar_env_rule rule;
    const char *why; /* one line, for the docs and the reader */
};
extern const struct ar_env_var ar_provider_env_rules[]; /* alphabetical, NULL-terminated */

/* The rule for variable name (any name; withheld when it starts with AGENTRUN_ and has no
 * AR_ENV_PASS row; passed otherwise). */
enum ar_env_rule ar_provider_env_rule(const char *name);

/*
 * Appends to env ("NAME=VALUE" sets, a bare "NAME" removes: struct ar_call_setup.env) the
 * removal of every variable of agentrun's environment that ar_provider_env_rule() withholds.
 * Returns 0 or AR_ENOMEM.
 */
int ar_provider_env_withhold(struct ar_strv *env);

/*
 * Whether the installed p at bin (argv[0] of a call) may be started: 0 when p has no
 * min_version, or its `--version` (asked once per binary and kept for the process, by
 * path, size and modification time) is at least that; else AR_ECLIFAILED with err naming
 * the version found, the one needed and how to update. A binary that cannot be run is let
 * through: the spawn reports that.
 */
int ar_provider_check_version(const struct ar_provider *p, const char *bin, struct ar_error *err);

/*
 * Checks a value that goes into a CLI's argv as an option's argument (a model
 * name, a session id). The CLIs parse their argv themselves, so a value that
 * starts with '-' would be taken as a flag of theirs (--resume
 * --dangerously-bypass-approvals-and-sandbox); control characters and empty
 * values are refused too. `what` names the value in the message ("model").
 * Returns 0, or AR_EUSAGE with err set.
 */
int ar_provider_check_arg(const char *what, const char *value, struct ar_error *err);

/* Sets out (state and printf-style how). Returns nothing; for the adapters' login(). */
void ar_login_set(struct ar_login_state *out, enum ar_login state, const char *fmt, ...)
    AR_PRINTF(3, 4);

/* ar_login_set(out, AR_LOGIN_YES, …) for a key found (a variable), which nothing checked:
 * doctor says "key set, not verified" (--check-auth tries it). */
void ar_login_set_key(struct ar_login_state *out, const char *fmt, ...) AR_PRINTF(2, 3);

/*
 * agentrun's own message for p's failure to log in, the one place that turns each CLI's
 * auth failure into words (the CLI's own words stay in the call's stderr): that it is not
 * logged in, or that its key was rejected (http_status 401/403), what to do (p->auth_help)
 * and where the docs say more. Into buf (size > 0), always terminated.
 */
void ar_provider_auth_message(const struct ar_provider *p, int http_status, char *buf, size_t size);

/* The docs section ar_provider_auth_message() points at. */
#define AR_PROVIDER_AUTH_DOCS "docs/providers.md#logging-in-auth"

/* The docs section ar_provider_check_version() points at. */
#define AR_PROVIDER_VERSION_DOCS "docs/providers.md#supported-versions"

/* The first credential variable of p->auth_env that is set and not empty, or NULL. */
const char *ar_provider_auth_env_set(const struct ar_provider *p);

/*
 * How the version a CLI printed (`--version`'s first line: "2.1.332 (Claude Code)",
 * "codex-cli 0.171.0", "0.61.0") compares with p's tested range: "tested", "newer", "older",
 * or "unsupported" when it is older than p->min_version (agentrun refuses to start it)
 * (static strings), or NULL when no dotted version is found in it.
 */
const char *ar_provider_version_fit(const struct ar_provider *p, const char *version);

/* The registry, in `--provider auto` order (claude, codex, gemini), NULL-terminated. */
const struct ar_provider *const *ar_providers(void);

/* The provider named `name`, or NULL. */
const struct ar_provider *ar_provider_find(const char *name);

/*
 * The binary to run for p: $AGENTRUN_<NAME>_BIN when set, else the name to be
 * looked up on PATH. Borrowed (environment or static storage).
 */
const char *ar_provider_bin(const struct ar_provider *p);

/* The full path of the executable `bin` (a path with '/', else searched on PATH), or NULL.
 * Caller free()s. */
char *ar_path_search(const char *bin);

/* The full path of p's binary (explicit path or PATH search), or NULL. Caller free()s. */
char *ar_provider_which(const struct ar_provider *p);

/*
 * The full path of p's i-th login file (auth_files[i]; a file under home_dir
 * moves with $home_env), or NULL when i is past the end or HOME is unset.
 * Caller free()s.
 */
char *ar_provider_auth_file(const struct ar_provider *p, size_t i);

/* Non-zero when the binary of p is found (an explicit path that is executable, or on PATH). */
int ar_provider_installed(const struct ar_provider *p);

/*
 * The model to ask for: `requested` when set, else $AGENTRUN_MODEL, else the
 * provider's own variable, else NULL (the CLI's default). Borrowed.
 */
const char *ar_provider_model(const struct ar_provider *p, const char *requested);

/*
 * Which CLI's wrapper `data` is (for `extract --unwrap auto`): the first
 * provider whose unwrap_captured() accepts it, or NULL. Static storage.
 */
const struct ar_provider *ar_provider_detect(const char *data, size_t len);

/* ar_provider_names(), ar_provider_known() and ar_provider_check_list() are public:
 * agentrun/agentrun.h. */

/* "claude, codex or gemini": the registry's names for a sentence. Static storage. */
const char *ar_provider_names_or(void);

/*
 * The message of a name that is no provider, with the one it most likely meant
 * (util/suggest.h), into buf: "unknown provider 'clade' (claude, codex, gemini,
 * auto); did you mean 'claude'?". `len` bytes of name are read; with_auto adds
 * "auto" to the names offered (where --provider takes it; a fallback list does not).
 */
void ar_provider_unknown_text(const char *name, size_t len, int with_auto, char *buf, size_t size);

/* How long ar_provider_login_check() waits for a CLI's status command. */
#define AR_PROVIDER_STATUS_TIMEOUT_MS 10000

/*
 * Whether the installed p can log in, by doctor's rule: p->login() from the environment
 * and the CLI's files, and when that cannot tell and p has a status command (claude auth
 * status), the command's answer (it calls no model; at most
 * AR_PROVIDER_STATUS_TIMEOUT_MS). Fills *out.
 */
void ar_provider_login_check(const struct ar_provider *p, struct ar_login_state *out);

/*
 * Resolves a provider name: "auto" (or NULL: $AGENTRUN_PROVIDER, else auto) is the first
 * provider, in registry order, that is installed and usable (not older than its
 * min_version, and ar_provider_login_check() does not say it cannot log in). When auto
 * skipped an installed one, note (size bytes, may be NULL) says which and why ("claude: not
 * logged in, using codex; pass -p to choose"), else it is "". NULL with err set: AR_EUSAGE
 * for an unknown name, AR_ENOTFOUND when no CLI is installed, AR_EAUTH when none installed
 * can log in (the message names each and what to do). When every one installed is too old,
 * the first is returned: its call fails, saying which version it needs.
 */
const struct ar_provider *ar_provider_resolve_noted(const char *name, char *note, size_t size,
                                                    struct ar_error *err);

/*
 * The one reader of a provider list ("codex,gemini", "codex gemini": commas, spaces or
 * tabs between names), as --fallback, a job's "fallback" and a share's providers take it.
 * Puts the first max providers in out (may be NULL) in the list's order. Returns how
 * many names the list holds, or AR_EUSAGE (err.where "fallback") at the first that
 * names no provider.
 */
int ar_provider_list_parse(const char *list, const struct ar_provider **out, size_t max,
                           struct ar_error *err);

/*
 * The same among the providers of allowed only (a bit per registry index; 0: all): auto
 * picks among them, and a name outside them is AR_EUSAGE with err.where "providers"
 * (share.h: the share decides which providers a run may call).
 */
const struct ar_provider *ar_provider_resolve_within(const char *name, unsigned allowed, char *note,
                                                     size_t size, struct ar_error *err);

/* ar_provider_resolve_noted() without the note. */
const struct ar_provider *ar_provider_resolve(const char *name, struct ar_error *err);

#endif
