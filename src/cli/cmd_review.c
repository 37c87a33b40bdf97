/*
 * agentrun review: AI code review of a diff for CI and git hooks. The command
 * reads its options and inputs (DIFF as a file or stdin, --instructions,
 * --baseline), hands the review to the library (agentrun/review.h: the
 * chunks, their calls, the merge and the verdict) on the session's loop, and
 * prints the result in the chosen format; the verdict becomes the exit status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/review.h"
#include "agentrun/usage.h"
#include "ar_config.h"
#include "cli/commands.h"
#include "cli/failure.h"
#include "cli/session.h"
#include "util/file.h"
#include "util/utf8.h"

enum {
    KEY_STAGED = AR_CLI_KEY_COMMAND,
    KEY_INSTRUCTIONS,
    KEY_FAIL_ON,
    KEY_STRICT,
    KEY_FORMAT,
    KEY_MAX_CHUNK,
    KEY_MAX_CHUNKS,
    /* issue 15: paths, baselines, SARIF category */
    KEY_SARIF_CATEGORY,
    KEY_BASELINE,
    KEY_EXCLUDE,
    KEY_INCLUDE,
    KEY_NO_DEFAULT_EXCLUDES,
    KEY_PRETTY,
    KEY_CONTEXT_TOOLS,
    /* issue 26: what a change cannot choose */
    KEY_DIFF_FILE,
    KEY_ALLOW_BINARY,
    /* issue 61: a panel */
    KEY_PANEL,
    KEY_QUORUM,
    KEY_ESCALATE,
    KEY_ESCALATE_FILES,
};

/* The defaults are the library's (ar_review_options_init()), and so is -j's limit. */
#define MAX_MAX_CHUNKS 100000

/* The words of --fail-on (ar_severity_parse()). */
#define SEVERITIES "critical|high|medium|low|info|none"

/* The formats ar_review_format_from_name() takes, for help, completion and did-you-mean. */
#define REVIEW_FORMATS "text|json|sarif|github|rdjsonl|gitlab|checkstyle"

/* The longest --sarif-category: GitHub keeps it in a short field. */
#define MAX_CATEGORY 200

static const struct ar_cli_opt opts[] = {
    { "staged", KEY_STAGED, NULL, "review the staged changes (the index against HEAD)", NULL },
    { "diff-file", KEY_DIFF_FILE, "FILE",
      "review the patch in FILE, never a revision of that name ('-': standard input)", "@file" },
    { "instructions", KEY_INSTRUCTIONS, "FILE",
      "the project's review guidelines, added to the prompt; REV:PATH reads them from git, "
      "never from a file (origin/main:REVIEW.md: a pull request cannot change them)",
      "@file" },
    { "context-tools", KEY_CONTEXT_TOOLS, NULL,
      "let the model read files beyond the diff (read, grep, glob; default: no tools)", NULL },
    { "fail-on", KEY_FAIL_ON, "SEVERITY",
      "exit 1 on an issue at or above SEVERITY; none: never (default: low)", SEVERITIES },
    { "strict", KEY_STRICT, NULL,
      "exit 3 when the model's output is unusable (default: pass, degraded)", NULL },
    { "format", KEY_FORMAT, "FORMAT",
      "text, json, sarif, github, rdjsonl, gitlab or checkstyle (default: text)", REVIEW_FORMATS },
    { "max-chunk-bytes", KEY_MAX_CHUNK, "SIZE",
      "review larger diffs in chunks of this size: 200K, 1M (default: 200K)", NULL },
    { "max-chunks", KEY_MAX_CHUNKS, "N",
      "refuse a diff that needs more than N chunks, one paid call each (default: 20)", NULL },
    { "jobs", 'j', "N", "review up to N chunks at once (default: 4)", NULL },
    { "exclude", KEY_EXCLUDE, "GLOB",
      "skip the diff's files matching GLOB (repeatable; lockfiles are skipped by default)", NULL },
    { "include", KEY_INCLUDE, "GLOB", "review only the diff's files matching GLOB (repeatable)",
      NULL },
    { "no-default-excludes", KEY_NO_DEFAULT_EXCLUDES, NULL,
      "review lockfiles too (package-lock.json, Cargo.lock…)", NULL },
    { "allow-binary", KEY_ALLOW_BINARY, NULL,
      "let binary files pass unreviewed, as if excluded (default: a binary file fails the "
      "review)",
      NULL },
    { "baseline", KEY_BASELINE, "FILE",
      "leave out findings already in FILE, a previous review's json, sarif or gitlab output; "
      "REV:PATH reads it from git (origin/main:.agentrun/accepted.json: a pull request cannot "
      "change it)",
      "@file" },
    { "panel", KEY_PANEL, "LIST",
      "review with several providers at once and match their findings: claude,codex,gemini "
      "(a model each: codex=gpt-5.1-codex); not with -p, -m or --fallback",
      NULL },
    { "quorum", KEY_QUORUM, "K",
      "with --panel: count only findings at least K members reported (a critical one always "
      "counts), and a file as reviewed only when K members reviewed it (default: 1)",
      NULL },
    { "escalate", KEY_ESCALATE, "SEVERITY",
      "with --panel: the first member reviews every chunk, the others only the chunks where it "
      "found something at or above SEVERITY (or failed); not with --quorum above 1",
      "critical|high|medium|low|info" },
    { "escalate-files", KEY_ESCALATE_FILES, "GLOB",
      "with --panel: the other members also review the chunks holding a file matching GLOB "
      "(the forms of --include; repeatable); alone, only those",
      NULL },
    { "pretty", KEY_PRETTY, NULL, "indent json, sarif and gitlab output (default: one line)",
      NULL },
    { "sarif-category", KEY_SARIF_CATEGORY, "NAME",
      "SARIF automationDetails category, one per review job (default: agentrun-review)", NULL },
    AR_CLI_MAX_COST_OPT AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

/* The library's writer: stdout, whole or reported (msg.c). */
static int write_stdout(void *arg, const char *data, size_t n)
{
    (void)arg;
    return ar_cli_write_stdout(data, n);
}

/* Writes the review in format fmt to stdout. Returns 0, or -1 after saying why. */
static int print_review(const struct ar_review_result *res, enum ar_review_format fmt,
                        const struct ar_review_write_options *wo)
{
    struct ar_error err = AR_ERROR_INIT;
    int rc = ar_review_write(res, fmt, wo, write_stdout, NULL, &err);
    /* A refused write was reported by ar_cli_write_stdout(). */
    if (rc && rc != AR_EIO)
        ar_cli_errorf("cannot write the review to stdout");
    return rc ? -1 : 0;
}

/* Whether a call of the review ran (a CLI started, or an answer came from the cache). */
static int review_called(const struct ar_review *rv)
{
    for (size_t i = 0; i < rv->n_calls; i++)
        if (rv->calls[i].exit_code >= 0)
            return 1;
    return rv->n_cached > 0;
}

/*
 * A failed review's cause, before anything else it says, with the fix where -p is one
 * (cli/failure.h). The text review's verdict line says the cause whole (how to log in,
 * say): said once, so here it is named and pointed at; a machine format has no line a
 * person reads, so here it is whole.
 */
static void say_cause(const struct ar_cli_session *s, const struct ar_review *rv, int text)
{
    char why[400], hint[160];
    ar_cli_failure_hint(rv->error.code, rv->provider, review_called(rv),
                        ar_cli_session_provider_named(s), hint, sizeof(hint));
    if (text)
        ar_cli_errorf("review failed: %s (the verdict says why and how to fix it)%s",
                      ar_strerror_name(rv->error.code), hint);
    else
        ar_cli_errorf("review failed: %s%s", ar_review_error_text(rv, why, sizeof(why)), hint);
}

static void warn_outcome(const struct ar_review *rv, int strict)
{
    char why[400];
    const char *what =
        rv->error.code == AR_ENOJSON ? AR_REVIEW_NO_JSON_SUMMARY : AR_REVIEW_CONTRACT_SUMMARY;
    if (rv->failed)
        return; /* said first (say_cause()) */
    if (rv->degraded && strict)
        ar_cli_errorf("%s (%s); failing because of --strict", what,
                      ar_review_error_text(rv, why, sizeof(why)));
    else if (rv->degraded)
        ar_cli_warnf("%s (%s); reported as passed with degraded: true (--strict fails instead)",
                     what, ar_review_error_text(rv, why, sizeof(why)));
}

/* The chunk counts for the status line; with -v, what each chunk's calls read from the
 * providers' prompt caches. */
static void on_review_event(void *arg, const struct ar_review_event *ev)
{
    struct ar_cli_session *s = arg;
    s->running = (unsigned)ev->running;
    snprintf(s->status_extra, sizeof(s->status_extra), "%zu/%zu %s reviewed", ev->finished,
             ev->n_chunks, ev->member ? "panel calls" : "chunks");
    if (ev->kind == AR_REVIEW_CHUNK_FINISHED && ev->review && !ev->review->cached) {
        const struct ar_usage *u = &ev->review->usage;
        ar_cli_notef("%s%s%s %zu/%zu: %llu input + %llu cache read + %llu cache write tokens",
                     ev->member ? ev->member : "", ev->member ? ": " : "",
                     ev->member ? "call" : "chunk", ev->chunk + 1, ev->n_chunks,
                     (unsigned long long)u->input, (unsigned long long)u->cache_read,
                     (unsigned long long)u->cache_write);
    }
}

static void on_review_done(struct ar_review_run *review, struct ar_review_result *res, void *arg)
{
    (void)review;
    *(struct ar_review_result **)arg = res;
}

static void cancel_review(void *arg)
{
    ar_review_cancel(arg);
}

/* Says what the review will look at (with -v) before the calls start. */
static void note_plan(const struct ar_review_plan *plan, long jobs)
{
    const char *label = plan->source ? plan->source : "the diff";
    if (plan->nul_bytes)
        ar_cli_warnf("%s: %zu NUL byte%s in the diff, sent to the model as U+FFFD where their "
                     "file is sent",
                     label, plan->nul_bytes, plan->nul_bytes == 1 ? "" : "s");
    if (plan->n_excluded)
        ar_cli_notef("skipping %zu file%s (--exclude, --include, default excludes)",
                     plan->n_excluded, plan->n_excluded == 1 ? "" : "s");
    if (!plan->reviewed) {
        ar_cli_notef("nothing to review in %s: %s", label, plan->why_not);
        return;
    }
    ar_cli_notef("reviewing %s: %zu file%s, %zu bytes, %zu chunk%s", label, plan->n_files,
                 plan->n_files == 1 ? "" : "s", plan->bytes, plan->n_chunks,
                 plan->n_chunks == 1 ? "" : "s");
    if (plan->jobs < (unsigned long)jobs)
        ar_cli_warnf("-j %ld lowered to %u: the open file limit (ulimit -n) allows no more", jobs,
                     plan->jobs);
}

/* Says what agentrun did to the model's findings, and what the baseline left out. */
static void note_left_out(const struct ar_review *rv, const char *baseline_path)
{
    /* A note on a finding starts with its JSON Pointer; the others say what was read
     * of the reply (several answers, other values), in words of their own. */
    for (size_t i = 0; i < rv->n_notes; i++)
        if (rv->notes[i][0] == '/')
            ar_cli_warnf("finding salvaged: %s", rv->notes[i]);
        else
            ar_cli_warnf("%s", rv->notes[i]);
    if (baseline_path && rv->suppressed)
        ar_cli_notef("%zu finding%s already in the baseline '%s'", rv->suppressed,
                     rv->suppressed == 1 ? "" : "s", baseline_path);
}

/*
 * Says on stderr which changed paths were not reviewed (each fails the review): one line
 * each, a screenful of them, then how many more (cli/failure.h). Not at all where the
 * text review goes to the same terminal: it lists each already.
 */
static void note_unreviewed(const struct ar_review_coverage *cov, enum ar_review_format fmt)
{
    if (fmt == AR_REVIEW_FORMAT_TEXT && ar_cli_stdout_shares_terminal())
        return;
    struct ar_cli_lines lines = { 0, 0 };
    for (size_t i = 0; i < cov->n_files; i++) {
        const struct ar_review_file *f = &cov->files[i];
        if (f->status == AR_COVER_REVIEWED || f->rule || !ar_cli_lines_take(&lines))
            continue;
        ar_cli_errorf("not reviewed: %s: %s", f->path[0] ? f->path : "(unnamed file)",
                      f->why ? f->why : ar_review_cover_name(f->status));
    }
    ar_cli_lines_end(&lines, "changed files not reviewed",
                     "the review on stdout lists each; -v lists them here");
}

/* Reads the patch in path ('-': stdin) into text and points the options at it. */
static int read_patch(struct ar_cli_session *s, const char *path, struct ar_buf *text,
                      struct ar_review_options *o)
{
    const struct ar_cli_command *cmd = s->cmd;
    struct ar_error err = AR_ERROR_INIT;
    /* A file the command line names, where --allow-dir allows it. */
    int rc = strcmp(path, "-") != 0 ? ar_cli_session_share(s) : 0;
    if (rc)
        return rc;
    if (strcmp(path, "-") != 0 && ar_share_path(s->share, NULL, path, NULL, &err) < 0)
        return ar_cli_usage_error(cmd, "%s", err.msg);
    rc = ar_file_read(path, text, &err);
    /* Unreadable input is a usage error (DESIGN §7). */
    if (rc == AR_EIO)
        return ar_cli_usage_error(cmd, "%s", err.msg);
    if (rc) {
        ar_cli_errorf("%s", err.msg);
        return ar_error_exit_status(rc);
    }
    o->diff = ar_buf_cstr(text);
    o->diff_len = text->len;
    o->label = strcmp(path, "-") == 0 ? "stdin" : path;
    return 0;
}

/*
 * Where the diff comes from: --diff-file FILE or '-' read a patch; DIFF
 * followed by "--" is a revision; any other DIFF is a revision unless it
 * names a file, and a name that is both is ambiguous (exit 2): a file the
 * checkout holds must never stand in for the revision a CI job names.
 * Returns 0, or an exit status after printing why.
 */
static int read_input(struct ar_cli_session *s, const char *arg, int rev_only,
                      const char *diff_file, int staged, const char *cwd, struct ar_buf *text,
                      struct ar_review_options *o)
{
    const struct ar_cli_command *cmd = s->cmd;
    if (diff_file && (arg || staged))
        return ar_cli_usage_error(cmd, "--diff-file takes the place of DIFF and --staged");
    if (diff_file)
        return read_patch(s, diff_file, text, o);
    o->staged = staged;
    if (!arg || staged || rev_only) {
        o->rev = arg;
        return 0;
    }
    if (strcmp(arg, "-") == 0)
        return read_patch(s, arg, text, o);
    if (arg[0] == '-' || !ar_is_file(arg)) {
        o->rev = arg;
        return 0;
    }
    struct ar_error err = AR_ERROR_INIT;
    int rev = ar_review_is_revision(cwd, arg, &err);
    if (rev < 0) {
        ar_cli_errorf("%s", err.msg);
        return ar_error_exit_status(rev);
    }
    if (rev == 1)
        return ar_cli_usage_error(cmd,
                                  "ambiguous argument '%s': both a file and a revision; use "
                                  "--diff-file '%s' (or '-' and standard input) for the file, "
                                  "'%s --' for the revision",
                                  arg, arg, arg);
    /* A range whose base the clone lacks must not fall back to a file the change may
     * have planted under the range's name. */
    if (rev == 2)
        return ar_cli_usage_error(cmd,
                                  "'%s' is a range of unknown revisions here (fetch them) and "
                                  "also a file; use --diff-file '%s' to review the file",
                                  arg, arg);
    return read_patch(s, arg, text, o);
}

/* The option behind a control the change under review writes (ar_review_start()'s
 * err.where), or NULL. */
static const char *control_option(const char *where)
{
    static const char *const map[][2] = {
        { "baseline", "--baseline" },
        { "instructions", "--instructions" },
        { "prompts_dir", "--prompts-dir" },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(where, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

/* The library's json document, as a value for main.c. */
static int collect(void *arg, const char *data, size_t n)
{
    return ar_buf_append(arg, data, n);
}

/* The review document of a review that never ran (a bad flag, an unreadable DIFF). */
static json_t *failure_value(int code, const char *message, int exit_status)
{
    struct ar_error e = AR_ERROR_INIT;
    ar_error_set(&e, code, NULL, "%s", message);
    struct ar_review_result *res = NULL;
    if (ar_review_result_from_error(&e, &res) != 0)
        return NULL;
    res->verdict.exit_status = exit_status;
    struct ar_buf doc;
    ar_buf_init(&doc, AR_BUF_UNLIMITED);
    json_t *v = NULL;
    if (ar_review_write(res, AR_REVIEW_FORMAT_JSON, NULL, collect, &doc, NULL) == 0)
        v = json_loadb(doc.data, doc.len, JSON_ALLOW_NUL, NULL);
    ar_buf_finish(&doc);
    ar_review_result_destroy(res);
    return v;
}

static int run_review(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    int rc = AR_EXIT_USAGE;
    int staged = 0, fmt = AR_REVIEW_FORMAT_TEXT;
    struct ar_review_write_options wo;
    ar_review_write_options_init(&wo);
    struct ar_review_options o;
    ar_review_options_init(&o);
    const char *instructions_path = NULL, *diff_file = NULL;
    unsigned long long max_chunk = o.max_chunk_bytes;
    long jobs = (long)o.jobs, max_chunks = (long)o.max_chunks;
    struct ar_buf diff_text;
    ar_buf_init(&diff_text, AR_REVIEW_MAX_DIFF);
    /* --include/--exclude values point into argv; argc bounds their number. */
    const char **includes = calloc((size_t)argc + 1, sizeof(*includes));
    const char **excludes = calloc((size_t)argc + 1, sizeof(*excludes));
    const char **escalate_files = calloc((size_t)argc + 1, sizeof(*escalate_files));
    size_t n_escalate_files = 0;
    const char *baseline_path = NULL;
    struct ar_review_result *res = NULL;
    if (!includes || !excludes || !escalate_files) {
        ar_cli_errorf("out of memory");
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    o.include = includes;
    o.exclude = excludes;
    /* Read before the parser reorders argv: a DIFF before "--" is a revision. */
    int dashdash = ar_cli_operands_before_dashdash(cmd, argc, argv);

    const char *arg;
    int key;
    while ((key = ar_cli_session_next(&s, &p, &arg)) != -1) {
        if (key == -2) {
            rc = p.status;
            goto out;
        }
        switch (key) {
        case KEY_STAGED:
            staged = 1;
            break;
        case KEY_DIFF_FILE:
            diff_file = arg;
            break;
        case KEY_ALLOW_BINARY:
            o.allow_binary = 1;
            break;
        case KEY_INSTRUCTIONS:
            instructions_path = arg;
            break;
        case KEY_FAIL_ON:
            if ((o.fail_on = ar_severity_parse(arg, 1)) < 0) {
                ar_cli_invalid_value(cmd, "fail-on", arg, SEVERITIES);
                goto out;
            }
            break;
        case KEY_STRICT:
            o.strict = 1;
            break;
        case KEY_CONTEXT_TOOLS:
            s.run.tools = AR_TOOLS_READ;
            break;
        case KEY_FORMAT:
            if ((fmt = ar_review_format_from_name(arg)) < 0) {
                ar_cli_invalid_value(cmd, "format", arg, REVIEW_FORMATS);
                goto out;
            }
            break;
        case KEY_MAX_CHUNK:
            if (ar_cli_parse_size(arg, &max_chunk) < 0 || max_chunk == 0) {
                ar_cli_usage_error(cmd, "invalid --max-chunk-bytes '%s': want a size (200K, 1M)",
                                   arg);
                goto out;
            }
            break;
        case KEY_MAX_CHUNKS:
            if (ar_cli_parse_int(arg, 1, MAX_MAX_CHUNKS, &max_chunks) < 0) {
                ar_cli_usage_error(cmd, "invalid --max-chunks '%s': want 1 to %d", arg,
                                   MAX_MAX_CHUNKS);
                goto out;
            }
            break;
        case 'j':
            if (ar_cli_parse_int(arg, 1, AR_REVIEW_MAX_JOBS, &jobs) < 0) {
                ar_cli_usage_error(cmd, "invalid -j '%s': want 1 to %d", arg, AR_REVIEW_MAX_JOBS);
                goto out;
            }
            break;
        case KEY_EXCLUDE:
        case KEY_INCLUDE:
            if (!*arg) {
                ar_cli_usage_error(cmd, "--%s needs a non-empty GLOB",
                                   key == KEY_EXCLUDE ? "exclude" : "include");
                goto out;
            }
            if (key == KEY_EXCLUDE)
                excludes[o.n_exclude++] = arg;
            else
                includes[o.n_include++] = arg;
            break;
        case KEY_NO_DEFAULT_EXCLUDES:
            o.no_default_excludes = 1;
            break;
        case KEY_PRETTY:
            wo.pretty = 1;
            break;
        case KEY_PANEL:
            o.panel = arg;
            break;
        case KEY_ESCALATE:
            if (ar_severity_parse(arg, 0) < 0) {
                ar_cli_invalid_value(cmd, "escalate", arg, "critical|high|medium|low|info");
                goto out;
            }
            o.escalate = arg;
            break;
        case KEY_ESCALATE_FILES:
            if (!*arg) {
                ar_cli_usage_error(cmd, "--escalate-files needs a non-empty GLOB");
                goto out;
            }
            escalate_files[n_escalate_files++] = arg;
            o.escalate_files = escalate_files;
            break;
        case KEY_QUORUM: {
            long q = 0;
            if (ar_cli_parse_int(arg, 1, AR_REVIEW_MAX_PANEL, &q) < 0) {
                ar_cli_usage_error(cmd, "invalid --quorum '%s': want 1 to %d", arg,
                                   AR_REVIEW_MAX_PANEL);
                goto out;
            }
            o.quorum = (unsigned)q;
            break;
        }
        case KEY_BASELINE:
            baseline_path = arg;
            break;
        case KEY_SARIF_CATEGORY:
            if (!*arg || strlen(arg) > MAX_CATEGORY) {
                ar_cli_usage_error(cmd, "invalid --sarif-category: want 1 to %d characters",
                                   MAX_CATEGORY);
                goto out;
            }
            wo.sarif_category = arg;
            break;
        }
    }
    int nargs = argc - p.ind;
    if (nargs > 1) {
        ar_cli_usage_error(cmd, "one DIFF expected, got %d arguments", nargs);
        goto out;
    }
    const char *diff_arg = nargs == 1 ? argv[p.ind] : NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (s.run.cwd && ar_dir_check(s.run.cwd, &err) < 0) {
        ar_cli_usage_error(cmd, "-C: %s", err.msg);
        goto out;
    }
    if ((rc = read_input(&s, diff_arg, dashdash >= 1, diff_file, staged, s.run.cwd, &diff_text,
                         &o)) != 0)
        goto out;

    if ((rc = ar_cli_session_begin(&s)) != 0)
        goto out;
    o.run = s.run;
    o.max_chunk_bytes = (size_t)max_chunk;
    o.max_chunks = (size_t)max_chunks;
    o.jobs = (unsigned)jobs;
    /* The library reads them (REV:PATH or a file under -C), before any model call, and holds
     * them against the change: the rule is the same at every door. */
    o.instructions_file = instructions_path;
    o.baseline_file = baseline_path;
    o.on_event = on_review_event;
    o.event_arg = &s;
    struct ar_review_run *review = NULL;
    if (ar_review_start(ar_cli_session_uv(&s), &o, on_review_done, &res, &review, &err) < 0) {
        if (err.code == AR_EUSAGE && strcmp(err.where, "max_chunks") == 0)
            rc = ar_cli_usage_error(cmd,
                                    "%s; raise --max-chunks or --max-chunk-bytes, or review "
                                    "less",
                                    err.msg);
        else if (err.code == AR_EUSAGE && control_option(err.where))
            rc = ar_cli_usage_error(cmd, "%s: %s", control_option(err.where), err.msg);
        else if (err.code == AR_EUSAGE)
            rc = ar_cli_usage_error(cmd, "%s", err.msg);
        else {
            ar_cli_errorf("%s", err.msg);
            rc = ar_error_exit_status(err.code);
        }
        goto out;
    }
    note_plan(ar_review_plan(review), jobs);
    ar_cli_session_set_cancel(&s, cancel_review, review);
    if (ar_review_plan(review)->reviewed)
        ar_cli_session_status_start(&s);
    uv_run(ar_cli_session_uv(&s), UV_RUN_DEFAULT);
    ar_cli_session_set_cancel(&s, NULL, NULL);
    ar_cli_session_end(&s);
    if (!res) {
        ar_cli_errorf("the review ended without a result");
        rc = AR_EXIT_PROVIDER;
        goto out;
    }

    const struct ar_review_plan *plan = &res->plan;
    const struct ar_review *rv = &res->review;
    struct ar_review_verdict *verdict = &res->verdict;
    /* An option the runs found wrong (--prices, --transcript, --replay without the
     * provider) before any call is a usage error like the ones above: said alone, no
     * verdict, no summary, no file (none was sent). */
    if (plan->reviewed && rv->failed && rv->n_calls == 0 &&
        (rv->error.code == AR_EUSAGE || rv->error.code == AR_EIO)) {
        rc = ar_cli_error_code(rv->error.code, "%s", rv->error.msg);
        goto out;
    }
    /* The cause first, then what it left (issue 59: not the files, then the cause). */
    if (plan->reviewed && rv->failed)
        say_cause(&s, rv, fmt == AR_REVIEW_FORMAT_TEXT);
    note_left_out(rv, baseline_path);
    note_unreviewed(&res->coverage, (enum ar_review_format)fmt);
    if (!plan->reviewed) {
        rc = verdict->exit_status;
        if (print_review(res, (enum ar_review_format)fmt, &wo) != 0 && rc == AR_EXIT_OK)
            rc = AR_EXIT_USAGE;
        goto out;
    }
    /* The session's exit status (a signal, a timeout) is the one every format shows. */
    verdict->exit_status = ar_cli_session_exit_status(&s, verdict->exit_status);
    warn_outcome(rv, o.strict);
    rc = verdict->exit_status;
    if (print_review(res, (enum ar_review_format)fmt, &wo) != 0 && rc == AR_EXIT_OK)
        rc = AR_EXIT_USAGE;
    /* How much of the input the providers' prompt caches served (what the cache-friendly
     * layout of the chunks' prompts is for), and what the baseline left out: said in every
     * format, not only the json one. */
    char extra[600];
    size_t calls = rv->n_calls;
    double share = ar_usage_cache_read_share(&rv->usage);
    snprintf(extra, sizeof(extra), "%zu call%s", calls, calls == 1 ? "" : "s");
    if (share >= 0)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
                 ", %.0f%% of the input from the cache", share * 100);
    if (baseline_path)
        snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
                 ", %zu finding%s left out by the baseline", rv->suppressed,
                 rv->suppressed == 1 ? "" : "s");
    /* A panel's summary is the panel's total, with what each member spent. */
    char members[128] = "";
    const struct ar_review_panel *panel = &res->panel;
    for (size_t m = 0; m < panel->n_members; m++) {
        const struct ar_review_member *mb = &panel->members[m];
        size_t at = strlen(members);
        snprintf(members + at, sizeof(members) - at, "%s%s", m ? "+" : "", mb->provider);
        at = strlen(extra);
        snprintf(extra + at, sizeof(extra) - at, "%s%s ", m ? ", " : "; ", mb->provider);
        at = strlen(extra);
        if (!mb->calls)
            snprintf(extra + at, sizeof(extra) - at, "%s",
                     ar_review_member_status_name(mb->status));
        else if (mb->cost_source == AR_COST_UNKNOWN)
            snprintf(extra + at, sizeof(extra) - at, "%llu tokens, cost unknown",
                     (unsigned long long)(mb->usage.input + mb->usage.cache_read +
                                          mb->usage.cache_write + mb->usage.output));
        else
            snprintf(extra + at, sizeof(extra) - at, "%llu tokens, $%.4f",
                     (unsigned long long)(mb->usage.input + mb->usage.cache_read +
                                          mb->usage.cache_write + mb->usage.output),
                     mb->cost_usd);
    }
    struct ar_cli_summary sum = { panel->n_members ? members : rv->provider,
                                  panel->n_members ? NULL : rv->model,
                                  rv->usage,
                                  rv->cost_usd,
                                  rv->cost_source,
                                  rv->duration_ms,
                                  calls,
                                  extra,
                                  rv->n_cached,
                                  rv->cached_cost_usd,
                                  rv->cached_cost_source };
    /* No call ran (no CLI installed, none logged in): there is nothing to sum, and
     * naming the provider that stood in for the error would say it ran. */
    if (review_called(rv))
        ar_cli_session_summary(&s, &sum);

out:
    ar_cli_session_finish(&s);
    ar_cli_parser_finish(&p);
    ar_review_result_destroy(res);
    free(includes);
    free(excludes);
    free(escalate_files);
    ar_buf_finish(&diff_text);
    return rc;
}

const struct ar_cli_command ar_cmd_review = {
    .name = "review",
    .synopsis = "[options] [DIFF]",
    .summary = "review a diff with a model: findings, a verdict and an exit status for CI",
    .description =
        "DIFF is a patch file, '-' for standard input, a git revision R (the working tree "
        "against R: 'git diff R'), R^! (the change commit R introduced) or a range A..B / "
        "A...B; a name that is both a file and a revision is an error (--diff-file FILE for "
        "the file, 'DIFF --' for the revision). Without DIFF: the working tree against HEAD, "
        "untracked files included; --staged: the index against HEAD. A pass means every "
        "changed file was sent whole to the model or left out by your rule (--exclude, "
        "--include, the default excludes, --allow-binary): agentrun judges binary files by "
        "content, and a changed file not reviewed fails the review. Large diffs are reviewed "
        "in chunks in parallel and merged. Exit status: 0 pass, 1 an issue at or above "
        "--fail-on, a changed file not reviewed, or the model failed the change without an "
        "issue, 2 usage error (also input that is not a diff), 3 unusable output with "
        "--strict, 4 provider failure, 5 timeout. See " AR_DOCDIR "/review.md.",
    .example = "agentrun review --format github origin/main...HEAD --",
    .opts = opts,
    .run = run_review,
    .json_schema = AR_REVIEW_SCHEMA,
    .failure_value = failure_value,
};
