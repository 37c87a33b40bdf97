/*
 * agentrun review: AI code review of a diff for CI and git hooks. The diff is
 * cut into chunks that are reviewed in parallel on one loop through the job
 * pool, the chunk reviews are merged, and the verdict becomes the exit status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/commands.h"
#include "cli/review_format.h"
#include "cli/session.h"
#include "proc/proc.h"
#include "review/diff.h"
#include "review/review.h"
#include "run/run.h"
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
};

#define DEFAULT_JOBS       4
#define MAX_JOBS           64
#define DEFAULT_MAX_CHUNKS 20
#define MAX_MAX_CHUNKS     100000

/* The longest --sarif-category: GitHub keeps it in a short field. */
#define MAX_CATEGORY 200

static const struct ar_cli_opt opts[] = {
    { "staged", KEY_STAGED, NULL, "review the staged changes (the index against HEAD)", NULL },
    { "instructions", KEY_INSTRUCTIONS, "FILE",
      "the project's review guidelines, added to the prompt; REV:PATH reads them from git "
      "(origin/main:REVIEW.md: a pull request cannot change them)",
      "@file" },
    { "context-tools", KEY_CONTEXT_TOOLS, NULL,
      "let the model read files beyond the diff (read, grep, glob; default: no tools)", NULL },
    { "fail-on", KEY_FAIL_ON, "SEVERITY",
      "exit 1 on an issue at or above SEVERITY; none: never (default: low)",
      "critical|high|medium|low|info|none" },
    { "strict", KEY_STRICT, NULL,
      "exit 3 when the model's output is unusable (default: pass, degraded)", NULL },
    { "format", KEY_FORMAT, "FORMAT",
      "text, json, sarif, github, rdjsonl, gitlab or checkstyle (default: text)",
      "text|json|sarif|github|rdjsonl|gitlab|checkstyle" },
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
    { "baseline", KEY_BASELINE, "FILE",
      "leave out findings already in FILE, a previous review's json, sarif or gitlab output",
      "@file" },
    { "pretty", KEY_PRETTY, NULL, "indent json, sarif and gitlab output (default: one line)",
      NULL },
    { "sarif-category", KEY_SARIF_CATEGORY, "NAME",
      "SARIF automationDetails category, one per review job (default: agentrun-review)", NULL },
    AR_CLI_SESSION_OPTS{ NULL, 0, NULL, NULL, NULL },
};

/* One chunk's review job. */
struct chunk_job {
    struct review_ctx *ctx;
    size_t index;
    char job_id[64];
    struct ar_run *run; /* while running */
    int done;
    struct ar_review rv;
};

struct review_ctx {
    struct ar_cli_session *s;
    struct ar_pool *pool;
    const struct ar_diff_chunk *chunks;
    size_t n_chunks;
    struct chunk_job *jobs;
    const char *instructions;
    size_t running;
    size_t finished;
    int nomem;
};

static void job_finish(struct chunk_job *job, struct ar_result *res)
{
    json_t *whole = res ? ar_result_to_value(res) : NULL;
    ar_review_init(&job->rv);
    if (!res ||
        ar_review_from_result(res, whole ? json_object_get(whole, "calls") : NULL, &job->rv) != 0)
        job->ctx->nomem = 1;
    json_decref(whole);
    ar_result_destroy(res);
    job->done = 1;
    job->ctx->finished++;
}

static void update_status(struct review_ctx *ctx)
{
    struct ar_cli_session *s = ctx->s;
    s->running = (unsigned)ctx->running;
    snprintf(s->status_extra, sizeof(s->status_extra), "%zu/%zu chunks reviewed", ctx->finished,
             ctx->n_chunks);
}

static void on_chunk_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    struct chunk_job *job = arg;
    struct review_ctx *ctx = job->ctx;
    job->run = NULL;
    ctx->running--;
    job_finish(job, res);
    /* A provider failure fails the whole review: do not spend more calls on it. */
    if (job->rv.failed)
        ar_pool_cancel_queued(ctx->pool);
    update_status(ctx);
    ar_pool_release(ctx->pool);
}

static void chunk_skip(void *arg)
{
    struct chunk_job *job = arg;
    const char *why = job->ctx->s->signal ? "interrupted" : "not reviewed: another chunk failed";
    job_finish(job, ar_result_new_failed(job->ctx->s->run.provider, AR_EINTERRUPTED, why));
}

static void chunk_start(void *arg)
{
    struct chunk_job *job = arg;
    struct review_ctx *ctx = job->ctx;
    /* A signal ends the running calls (the loop kills their groups); the
     * queued ones must not start. */
    if (ctx->s->signal) {
        chunk_skip(job);
        ar_pool_release(ctx->pool);
        return;
    }
    const struct ar_diff_chunk *c = &ctx->chunks[job->index];
    /* The chunk goes into the prompt as a C string: one that would not arrive
     * whole is never reviewed (and so never passes). */
    if (strlen(c->text) != c->len) {
        job_finish(job,
                   ar_result_new_failed(ctx->s->run.provider, AR_EUSAGE,
                                        "the chunk holds a NUL byte and cannot be sent whole"));
        ar_pool_cancel_queued(ctx->pool);
        ar_pool_release(ctx->pool);
        return;
    }
    struct ar_var vars[2] = {
        { "diff", c->text },
        { "instructions", ctx->instructions ? ctx->instructions : "" },
    };
    struct ar_run_options o = ctx->s->run;
    o.template_name = "review";
    o.vars = vars;
    o.n_vars = 2;
    o.allow_edits = 0;
    /* A text call: the diff is in the prompt (DESIGN §4b). */
    o.tools = o.tools == AR_TOOLS_READ ? AR_TOOLS_READ : AR_TOOLS_NONE;
    o.no_session = 1;
    /* A review changes nothing: the git snapshots would only cost time. */
    o.track_files = 0;
    o.job_id = ctx->n_chunks > 1 ? job->job_id : NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_pipeline_start(ctx->s->loop, &o, NULL, on_chunk_done, job, &job->run, &err) < 0) {
        job_finish(job, ar_result_new_failed(o.provider, err.code ? err.code : AR_EUSAGE, err.msg));
        ar_pool_cancel_queued(ctx->pool);
        ar_pool_release(ctx->pool);
        return;
    }
    ctx->running++;
    update_status(ctx);
}

/* Reviews every chunk on the session's loop; fills merged. Returns 0 or an exit status. */
static int review_chunks(struct ar_cli_session *s, const struct ar_diff *diff,
                         const struct ar_diff_chunk *chunks, size_t n, unsigned jobs,
                         const char *instructions, struct ar_review *merged)
{
    struct review_ctx ctx = {
        .s = s, .chunks = chunks, .n_chunks = n, .instructions = instructions
    };
    ctx.jobs = calloc(n, sizeof(*ctx.jobs));
    ctx.pool = ar_pool_create(s->loop, jobs);
    if (!ctx.jobs || !ctx.pool) {
        free(ctx.jobs);
        ar_pool_destroy(ctx.pool);
        ar_cli_errorf("out of memory");
        return AR_EXIT_PROVIDER;
    }
    for (size_t i = 0; i < n; i++) {
        struct chunk_job *job = &ctx.jobs[i];
        job->ctx = &ctx;
        job->index = i;
        snprintf(job->job_id, sizeof(job->job_id), "chunk %zu/%zu", i + 1, n);
        ar_review_init(&job->rv);
        if (ar_pool_submit(ctx.pool, chunk_start, chunk_skip, job) != 0)
            chunk_skip(job);
    }
    ar_cli_session_status_start(s);
    ar_loop_run(s->loop);
    ar_cli_session_status_clear(s);
    ar_pool_destroy(ctx.pool);

    struct ar_review *parts = calloc(n, sizeof(*parts));
    int rc = 0;
    if (!parts || ctx.nomem) {
        ar_cli_errorf("out of memory");
        rc = AR_EXIT_PROVIDER;
    } else {
        for (size_t i = 0; i < n; i++) {
            if (!ctx.jobs[i].done) /* cannot happen: every job ends in done or skip */
                job_finish(&ctx.jobs[i], NULL);
            parts[i] = ctx.jobs[i].rv;
        }
        struct ar_error err = AR_ERROR_INIT;
        if (ar_review_merge(parts, n, diff, merged, &err) != 0) {
            ar_cli_errorf("%s", err.msg);
            rc = AR_EXIT_PROVIDER;
        }
    }
    for (size_t i = 0; i < n; i++)
        ar_review_finish(&ctx.jobs[i].rv);
    free(parts);
    free(ctx.jobs);
    return rc;
}

static const char *why_nothing(const struct ar_diff *d)
{
    for (size_t i = 0; i < d->n_files; i++)
        if (d->files[i].binary)
            return "binary files only";
    return d->n_files ? "no content changes" : "the diff is empty";
}

static int print_report(const struct ar_review_report *rep, int fmt)
{
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    int rc = ar_review_render(rep, (enum ar_review_format)fmt, &out);
    if (rc == 0 && ar_cli_write_stdout(out.data ? out.data : "", out.len) != 0)
        rc = -1;
    ar_buf_finish(&out);
    if (rc)
        ar_cli_errorf("cannot write the review to stdout");
    return rc;
}

static void warn_outcome(const struct ar_review *rv, int strict)
{
    char why[400];
    const char *what =
        rv->error.code == AR_ENOJSON ? AR_REVIEW_NO_JSON_SUMMARY : AR_REVIEW_CONTRACT_SUMMARY;
    if (rv->failed)
        ar_cli_errorf("review failed: %s", ar_review_error_text(rv, why, sizeof(why)));
    else if (rv->degraded && strict)
        ar_cli_errorf("%s (%s); failing because of --strict", what,
                      ar_review_error_text(rv, why, sizeof(why)));
    else if (rv->degraded)
        ar_cli_warnf("%s (%s); reported as passed with degraded: true (--strict fails instead)",
                     what, ar_review_error_text(rv, why, sizeof(why)));
}

/* Replaces NULs with U+FFFD and says so. Returns 0, or -1 (reported). */
static int replace_nul(struct ar_buf *b, const char *what)
{
    size_t n = 0;
    if (ar_buf_replace_nul(b, &n) != 0) {
        ar_cli_errorf("out of memory");
        return -1;
    }
    if (n)
        ar_cli_warnf("%s: %zu NUL byte%s sent to the model as U+FFFD", what, n, n == 1 ? "" : "s");
    return 0;
}

/*
 * The model's paths are hostile text: resolves them against the reviewed diff
 * and the repository (dropping those outside it) before any format shows
 * them, then leaves out what the baseline (may be NULL) knows. Returns 0, or
 * -1 after printing why.
 */
static int locate_findings(struct ar_cli_session *s, struct ar_review *rv,
                           const struct ar_diff *reviewed, const struct ar_baseline *baseline,
                           const char *baseline_path)
{
    struct ar_error err = AR_ERROR_INIT;
    char *root = NULL;
    if (rv->n_issues && ar_diff_toplevel(s->run.cwd, &root, &err) != 0) {
        ar_cli_errorf("%s", err.msg);
        return -1;
    }
    int rc = ar_review_locate(rv, reviewed, root ? root : (s->run.cwd ? s->run.cwd : "."), &err);
    free(root);
    if (rc) {
        ar_cli_errorf("%s", err.msg);
        return -1;
    }
    if (rv->dropped)
        ar_cli_warnf("%zu finding%s dropped: the path is outside the repository", rv->dropped,
                     rv->dropped == 1 ? "" : "s");
    if (baseline && ar_review_apply_baseline(rv, baseline))
        ar_cli_notef("%zu finding%s already in the baseline '%s'", rv->suppressed,
                     rv->suppressed == 1 ? "" : "s", baseline_path);
    return 0;
}

/*
 * Lists the diff's files the filter skips in excluded (diff.n_files slots;
 * the names are borrowed from diff) and, when there are any, parses the rest
 * into kept (its text in kept_text): skipped files never reach the model.
 * *reviewed is the diff to review. Returns how many were skipped, or -1
 * after printing why.
 */
static long skip_files(const struct ar_diff *diff, const struct ar_path_filter *filter,
                       const char **excluded, struct ar_buf *kept_text, struct ar_diff *kept,
                       const struct ar_diff **reviewed)
{
    size_t n = 0;
    for (size_t i = 0; i < diff->n_files; i++)
        if (ar_path_filter_skips(filter, diff->files[i].path))
            excluded[n++] = diff->files[i].path;
    *reviewed = diff;
    if (!n)
        return 0;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_diff_filter(diff, filter, kept_text, NULL) != 0 ||
        ar_diff_parse(ar_buf_cstr(kept_text), kept_text->len, kept, &err) != 0) {
        ar_cli_errorf("out of memory");
        return -1;
    }
    *reviewed = kept;
    ar_cli_notef("skipping %zu file%s (--exclude, --include, default excludes)", n,
                 n == 1 ? "" : "s");
    return (long)n;
}

static int run_review(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_session s;
    struct ar_cli_parser p;
    ar_cli_session_init(&s, cmd);
    ar_cli_parser_init(&p, cmd, argc, argv);
    int rc = AR_EXIT_USAGE;
    int staged = 0, strict = 0, pretty = 0, fail_on = AR_SEV_LOW, fmt = AR_REVIEW_FORMAT_TEXT;
    const char *instructions_path = NULL;
    unsigned long long max_chunk = AR_DIFF_DEFAULT_MAX_CHUNK;
    long jobs = DEFAULT_JOBS, max_chunks = DEFAULT_MAX_CHUNKS;
    struct ar_buf diff_text, instructions;
    ar_buf_init(&diff_text, AR_DIFF_MAX_BYTES);
    ar_buf_init(&instructions, (size_t)1 << 20);
    struct ar_diff diff = AR_DIFF_INIT;
    struct ar_diff_chunk *chunks = NULL;
    size_t n_chunks = 0;
    char *label = NULL;
    struct ar_review merged;
    ar_review_init(&merged);
    /* --include/--exclude values point into argv; argc bounds their number. */
    const char **includes = calloc((size_t)argc + 1, sizeof(*includes));
    const char **excludes = calloc((size_t)argc + 1, sizeof(*excludes));
    const char **excluded = NULL;
    struct ar_path_filter filter = { includes, 0, excludes, 0, 0 };
    const char *baseline_path = NULL, *sarif_category = NULL;
    struct ar_baseline baseline = { NULL, 0 };
    struct ar_buf kept_text;
    ar_buf_init(&kept_text, AR_DIFF_MAX_BYTES);
    struct ar_diff kept = AR_DIFF_INIT;
    if (!includes || !excludes) {
        ar_cli_errorf("out of memory");
        rc = AR_EXIT_PROVIDER;
        goto out;
    }

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
        case KEY_INSTRUCTIONS:
            instructions_path = arg;
            break;
        case KEY_FAIL_ON:
            if ((fail_on = ar_severity_parse(arg, 1)) < 0) {
                ar_cli_usage_error(cmd,
                                   "invalid --fail-on '%s' (critical, high, medium, low, info, "
                                   "none)",
                                   arg);
                goto out;
            }
            break;
        case KEY_STRICT:
            strict = 1;
            break;
        case KEY_CONTEXT_TOOLS:
            s.run.tools = AR_TOOLS_READ;
            break;
        case KEY_FORMAT:
            if ((fmt = ar_review_format_parse(arg)) < 0) {
                ar_cli_usage_error(
                    cmd,
                    "invalid --format '%s' (text, json, sarif, github, rdjsonl, gitlab, "
                    "checkstyle)",
                    arg);
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
            if (ar_cli_parse_int(arg, 1, MAX_JOBS, &jobs) < 0) {
                ar_cli_usage_error(cmd, "invalid -j '%s': want 1 to %d", arg, MAX_JOBS);
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
                excludes[filter.n_exclude++] = arg;
            else
                includes[filter.n_include++] = arg;
            break;
        case KEY_NO_DEFAULT_EXCLUDES:
            filter.no_defaults = 1;
            break;
        case KEY_PRETTY:
            pretty = 1;
            break;
        case KEY_BASELINE:
            baseline_path = arg;
            break;
        case KEY_SARIF_CATEGORY:
            if (!*arg || strlen(arg) > MAX_CATEGORY) {
                ar_cli_usage_error(cmd, "invalid --sarif-category: want 1 to %d characters",
                                   MAX_CATEGORY);
                goto out;
            }
            sarif_category = arg;
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
    /* A file wins over a revision of the same name, as for DIFF. */
    if (instructions_path &&
        (ar_is_file(instructions_path) || !strchr(instructions_path, ':')
             ? ar_file_read(instructions_path, &instructions, &err)
             : ar_diff_read_blob(s.run.cwd, instructions_path, &instructions, &err)) < 0) {
        ar_cli_usage_error(cmd, "--instructions: %s", err.msg);
        goto out;
    }
    if (instructions_path && replace_nul(&instructions, instructions_path) < 0) {
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    /* Read before any model call: a bad baseline costs nothing. */
    if (baseline_path) {
        int brc = ar_baseline_load(baseline_path, &baseline, &err);
        if (brc == AR_EUSAGE) {
            ar_cli_usage_error(cmd, "--baseline: %s", err.msg);
            goto out;
        }
        if (brc) {
            ar_cli_errorf("%s", err.msg);
            rc = AR_EXIT_PROVIDER;
            goto out;
        }
    }

    struct ar_diff_source src = { diff_arg, staged, s.run.cwd };
    int code = ar_diff_acquire(&src, &diff_text, &label, &err);
    if (code == AR_EUSAGE) {
        ar_cli_usage_error(cmd, "%s", err.msg);
        goto out;
    }
    if (code) {
        ar_cli_errorf("%s", err.msg);
        rc = ar_error_exit_status(code);
        goto out;
    }
    /* git calls a file text when its first 8,000 bytes hold no NUL: a NUL further
     * down reaches the diff, and the prompt (a C string) would end there, hiding
     * every file after it from the model. */
    if (replace_nul(&diff_text, label ? label : "the diff") < 0) {
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    if (ar_diff_parse(ar_buf_cstr(&diff_text), diff_text.len, &diff, &err) != 0) {
        ar_cli_errorf("%s", err.msg);
        rc = AR_EXIT_PROVIDER;
        goto out;
    }

    excluded = calloc(diff.n_files + 1, sizeof(*excluded));
    const struct ar_diff *reviewed = &diff;
    long skipped =
        excluded ? skip_files(&diff, &filter, excluded, &kept_text, &kept, &reviewed) : -1;
    if (skipped < 0) {
        if (!excluded)
            ar_cli_errorf("out of memory");
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    size_t n_excluded = (size_t)skipped;

    struct ar_review_verdict verdict;
    struct ar_review_report rep = { &merged, &verdict,       fail_on,  label,      1,
                                    NULL,    sarif_category, excluded, n_excluded, pretty };
    if (!ar_diff_reviewable(reviewed)) {
        /* Nothing a model could review: no call, a pass, and a document a CI
         * step can still parse. */
        merged.passed = 1;
        merged.summary = strdup("nothing to review");
        merged.calls = json_array();
        rep.reviewed = 0;
        rep.why_not =
            ar_diff_reviewable(&diff) ? "every changed file is excluded" : why_nothing(&diff);
        ar_review_verdict(&merged, fail_on, strict, &verdict);
        ar_cli_notef("nothing to review in %s: %s", label ? label : "the diff", rep.why_not);
        rc = print_report(&rep, fmt) ? AR_EXIT_USAGE : AR_EXIT_OK;
        goto out;
    }
    if (ar_diff_split(reviewed, (size_t)max_chunk, &chunks, &n_chunks, &err) != 0) {
        ar_cli_errorf("%s", err.msg);
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    /* Each chunk is a paid call: a huge diff costs only what the user agreed to. */
    if (n_chunks > (size_t)max_chunks) {
        ar_cli_usage_error(cmd,
                           "%s needs %zu chunks of at most %llu bytes (%zu bytes), more than "
                           "--max-chunks %ld; raise --max-chunks or --max-chunk-bytes, or review "
                           "less",
                           label ? label : "the diff", n_chunks, max_chunk, diff_text.len,
                           max_chunks);
        goto out;
    }
    ar_cli_notef("reviewing %s: %zu file%s, %zu bytes, %zu chunk%s", label ? label : "the diff",
                 reviewed->n_files, reviewed->n_files == 1 ? "" : "s", reviewed->len, n_chunks,
                 n_chunks == 1 ? "" : "s");

    if (ar_cli_session_begin(&s) < 0) {
        rc = AR_EXIT_PROVIDER;
        goto out;
    }
    unsigned fit = ar_proc_jobs_within_fd_limit((unsigned)jobs);
    if (fit < (unsigned)jobs) {
        ar_cli_warnf("-j %ld lowered to %u: the open file limit (ulimit -n) allows no more", jobs,
                     fit);
        jobs = (long)fit;
    }
    uint64_t t0 = ar_now_ms();
    rc = review_chunks(&s, reviewed, chunks, n_chunks, (unsigned)jobs,
                       instructions_path ? ar_buf_cstr(&instructions) : NULL, &merged);
    ar_cli_session_end(&s);
    if (rc)
        goto out;
    merged.duration_ms = ar_now_ms() - t0;

    if (locate_findings(&s, &merged, reviewed, baseline_path ? &baseline : NULL, baseline_path)) {
        rc = AR_EXIT_PROVIDER;
        goto out;
    }

    ar_review_verdict(&merged, fail_on, strict, &verdict);
    verdict.exit_status = ar_cli_session_exit_status(&s, verdict.exit_status);
    warn_outcome(&merged, strict);
    rc = verdict.exit_status;
    if (print_report(&rep, fmt) != 0 && rc == AR_EXIT_OK)
        rc = AR_EXIT_USAGE;
    struct ar_cli_summary sum = { merged.provider,
                                  merged.model,
                                  merged.usage,
                                  merged.cost_usd,
                                  merged.cost_source,
                                  merged.duration_ms,
                                  json_array_size(merged.calls),
                                  NULL };
    ar_cli_session_summary(&s, &sum);

out:
    ar_cli_parser_finish(&p);
    ar_review_finish(&merged);
    ar_baseline_finish(&baseline);
    ar_diff_finish(&kept);
    ar_buf_finish(&kept_text);
    free(excluded);
    free(includes);
    free(excludes);
    ar_diff_chunks_free(chunks, n_chunks);
    ar_diff_finish(&diff);
    ar_buf_finish(&diff_text);
    ar_buf_finish(&instructions);
    free(label);
    return rc;
}

const struct ar_cli_command ar_cmd_review = {
    .name = "review",
    .synopsis = "[options] [DIFF]",
    .summary = "review a diff with a model: findings, a verdict and an exit status for CI",
    .description =
        "DIFF is a patch file, '-' for standard input, a git revision R (the working tree "
        "against R: 'git diff R'), R^! (the change commit R introduced) or a range A..B / "
        "A...B. Without DIFF: the working tree against HEAD, untracked files included; "
        "--staged: the index against HEAD. An empty or binary-only diff is not sent to a model. "
        "Large diffs are reviewed in chunks in parallel and merged. Exit status: 0 pass, 1 an "
        "issue at or above --fail-on (or the model failed the change without an issue), 2 usage "
        "error, 3 unusable output with --strict, 4 provider failure, 5 timeout. See " AR_DOCDIR
        "/review.md.",
    .example = "agentrun review origin/main...HEAD --format github",
    .opts = opts,
    .run = run_review,
};
