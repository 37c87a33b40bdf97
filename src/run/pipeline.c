/*
 * The run pipeline: the one place the stages are sequenced (DESIGN §1).
 *
 * A run is a small state machine driven by the loop: every stage that waits
 * (a git snapshot, a CLI call) continues in its completion callback. Each
 * stage records what happened in the run's draft RunResult (src/result) and
 * decides what comes next:
 *
 *   ar_pipeline_start  options, providers, the rendered prompt, the draft result
 *   snapshot_before    git status before the first call (runs that can edit)
 *   make_call          a new call: the main one, or the one repair call
 *     schedule_call      after the provider's shared rate-limit pause, if any
 *     start_call         the adapter's argv; the call source starts it
 *   on_call_end        recorded; a failure goes to after_failed_call (the same
 *                      call once more after a wait, or the next provider, or
 *                      the end), an answer to check_answer
 *   check_answer       extract, repair locally, check; a bad main answer gets
 *                      make_call(repair), a good one or a bad repair the end
 *   end_run            snapshot_after (when snapshot_before was taken), then
 *   report             the result to the done callback, then run_free()
 *
 * A run with a worktree of its own (options.worktree) has it made first
 * (make_tree, before snapshot_before: the run's cwd is then in the worktree)
 * and finished last (finish_tree, in report: the commit, the removal, the
 * branch), so whatever ended the run, the worktree is finished once.
 *
 * A run that ends before its first call reports at once (no snapshot after).
 * run_free() is the one teardown, also for a run whose setup failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract.h"
#include "cost/cost.h"
#include "git/git.h"
#include "util/json_dump.h"
#include "json/extract.h"
#include "json/repair.h"
#include "proc/proc.h"
#include "agentrun/request.h"
#include "prompt/prompt.h"
#include "provider/provider.h"
#include "record/record.h"
#include "result/result.h"
#include "run/answer.h"
#include "run/call.h"
#include "run/own_files.h"
#include "run/run.h"
#include "run/share.h"
#include "run/tree.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/strv.h"

/* llm_output debug events carry at most this much of the text (DESIGN §8). */
#define LOG_TEXT_BYTES 8000

enum call_kind { CALL_MAIN, CALL_REPAIR };
static const char *const call_kind_names[] = { "main", "repair" };

struct ar_run {
    struct ar_loop *loop;
    struct ar_loop *own_loop; /* the public ar_run_start()'s: detached after done */
    struct ar_run_options o;  /* strings point into `own` */
    struct ar_strv own;
    ar_run_done_fn *done;
    void *arg;

    struct ar_strv providers; /* the provider and its fallbacks, in order */
    size_t provider_index;
    const struct ar_provider *prov;

    struct ar_prompt *tpl;
    struct ar_prompt *repair_tpl;
    const struct ar_contract *contract; /* borrowed from tpl */
    char *contract_compact;             /* for the CLIs' structured-output flags */
    struct ar_prices *prices;
    struct ar_buf prompt;
    struct ar_buf repair_prompt;
    int in_git_repo;
    int transcript_fd;

    struct ar_git_snapshot *before;
    struct ar_error missing;  /* no provider installed at all: the run's error */
    struct ar_git_tree *tree; /* the run's own worktree, from made to freed */
    int tree_finished;        /* finish_tree ran (or cannot): report goes on */

    /* The call in flight. */
    enum call_kind kind;
    const char *call_model; /* the model asked for (borrowed: options or environment), or NULL */
    char *main_model;       /* the model the last main call was priced by, or NULL */
    struct ar_call_setup setup;
    struct ar_unwrap *unwrap;
    struct ar_call *call;
    int cancelled;
    struct ar_call_tapes tapes; /* --record, --replay, --cache */

    /* The rules it lives under (share.h): the share, and its own budget node below the
     * share's (or the batch's, the review's: ar_pipeline_extra.budget). */
    struct ar_share *share;             /* options.share, or own_share */
    struct ar_share *own_share;         /* made for a run given none */
    struct ar_budget budget;            /* this run's cap, over every call it makes */
    struct ar_budget_hold hold;         /* what the call in flight holds */
    struct ar_share_waiter admit;       /* queued at the share while a call waits for room */
    char *refused;                      /* why the share refused a call, or NULL */
    enum call_kind admit_kind;          /* the call the share is asked for */
    enum ar_budget_answer admit_answer; /* its answer after a wait */
    struct ar_error admit_why;          /* ... why it refused */

    /* Retries and waits. */
    struct ar_backoff *backoff; /* the share's */
    struct ar_wait *wait;       /* the wait in progress, or NULL */
    enum call_kind wait_kind;   /* the call to make when it ends */
    uint64_t waited_ms;         /* waited before the next call (for its record) */
    int retried;                /* the current call was already retried once */
    int side_effects;           /* a call changed files or ran a tool that can */
    int failed_code;            /* a failed call waiting for git's word: its error, */
    int failed_retry;           /* whether retry_wait() would make it again, */
    uint64_t failed_wait_ms;    /* and after how long */

    uint64_t t0;
    struct ar_result_draft draft;  /* the RunResult as the stages record it (src/result) */
    struct ar_strv details;        /* the last check's violations */
    const char *independent_items; /* ar_pipeline_extra's, kept in `own`, or NULL */
    struct ar_call_held *held;     /* the main call's cache entry, while its repair runs */
};

static void make_call(struct ar_run *run, enum call_kind kind);
static void schedule_call(struct ar_run *run, enum call_kind kind);
static void admit_call(struct ar_run *run, enum call_kind kind);
static void start_call(struct ar_run *run, enum call_kind kind);
static void end_run(struct ar_run *run);
static void report(struct ar_run *run);

/* ---- small helpers ------------------------------------------------------------ */

/* *dst becomes the run's own copy of s (NULL stays NULL). Returns 0 or AR_ENOMEM. */
static int keep(struct ar_run *run, const char **dst, const char *s)
{
    *dst = NULL;
    if (!s)
        return 0;
    if (ar_strv_push(&run->own, s) < 0)
        return AR_ENOMEM;
    *dst = run->own.v[run->own.n - 1];
    return 0;
}

static void set_error(struct ar_run *run, int code, const char *fmt, const char *msg)
{
    ar_result_draft_fail(&run->draft, code, fmt, msg);
}

/* The caller's event (options.on_call) about the call begun last. */
static void call_event(struct ar_run *run, enum ar_call_event ev)
{
    const struct ar_result *r = run->draft.res;
    if (run->o.on_call)
        run->o.on_call(run->o.call_arg, run->o.job_id, ev, &r->calls[r->n_calls - 1]);
}

/* The run cannot go on for want of memory: its error says so, and it ends. */
static void end_out_of_memory(struct ar_run *run)
{
    ar_result_draft_fail(&run->draft, AR_ENOMEM, "%s", "out of memory");
    end_run(run);
}

static json_t *event_fields(const struct ar_run *run, uint64_t duration_ms)
{
    return json_pack("{s:s?,s:s?,s:s,s:I}", "provider", run->prov ? run->prov->name : NULL, "job",
                     run->o.job_id, "call", call_kind_names[run->kind], "duration_ms",
                     (json_int_t)duration_ms);
}

/* Is dir inside a git work tree? Looked up without running git: codex needs
 * to know before the first call. */
static int inside_git_repo(const char *dir)
{
    char *root = ar_git_find_root(dir);
    free(root);
    return root != NULL;
}

/*
 * The tools of a call (DESIGN §4b), from the options alone, never from the
 * CLI's configuration. The repair call only rewrites an answer that is in its
 * prompt: it is a text call whatever the main call was.
 */
static enum ar_tools call_tools(const struct ar_run_options *o, enum call_kind kind)
{
    if (kind == CALL_REPAIR)
        return AR_TOOLS_NONE;
    if (o->tools != AR_TOOLS_AUTO)
        return o->tools;
    return o->allow_edits ? AR_TOOLS_EDIT : AR_TOOLS_READ;
}

/* Whether this run can change files, and so needs snapshots by default: its
 * main call's posture is edit. */
static int can_edit(const struct ar_run_options *o)
{
    return call_tools(o, CALL_MAIN) == AR_TOOLS_EDIT;
}

int ar_run_uses_worktree(const struct ar_run_options *o)
{
    return o->worktree == AR_WORKTREE_ALWAYS || (o->worktree == AR_WORKTREE_EDITS && can_edit(o));
}

/*
 * Whether the run takes git snapshots; when not, *why says why for the
 * RunResult. Only a run that can edit files needs them by default: a read or
 * text call cannot write, and two snapshots of a large tree cost more than
 * the call (docs/git-changes.md). --track-files asks for the proof anyway.
 */
static int needs_snapshots(const struct ar_run_options *o, enum ar_files_untracked *why)
{
    switch (o->track_files) {
    case AR_TRACK_FILES_NEVER:
        *why = AR_UNTRACKED_DISABLED;
        return 0;
    case AR_TRACK_FILES_ALWAYS:
        return 1;
    default:
        *why = AR_UNTRACKED_READ_ONLY;
        /* --expect-changes needs the snapshots to say "no file changed". */
        return can_edit(o) || o->expect_changes;
    }
}

static void transcript_write(struct ar_run *run, const char *line, size_t len)
{
    if (run->transcript_fd < 0)
        return;
    /* The line and its newline in one writev() on an O_APPEND file, so runs that
     * share a transcript (batch jobs) never interleave inside a line. */
    struct iovec iov[2] = { { (void *)line, len }, { "\n", 1 } };
    size_t left = len + 1;
    while (left) {
        ssize_t n = writev(run->transcript_fd, iov, 2);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* A transcript is a debugging aid: a failed write must not fail the
             * run, and one warning says it all (not one per line). */
            ar_warn(&run->o.logger, "cannot write the transcript '%s': %s; not writing it any more",
                    run->o.transcript_path, strerror(n < 0 ? errno : EIO));
            close(run->transcript_fd);
            run->transcript_fd = -1;
            return;
        }
        left -= (size_t)n;
        for (int i = 0; i < 2 && n > 0; i++) {
            size_t k = (size_t)n < iov[i].iov_len ? (size_t)n : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + k;
            iov[i].iov_len -= k;
            n -= (ssize_t)k;
        }
    }
}

/* ---- the calls -------------------------------------------------------------------- */

static void on_line(struct ar_call *call, const char *line, size_t len, void *arg)
{
    struct ar_run *run = arg;
    transcript_write(run, line, len);
    struct ar_progress ev = { NULL, NULL };
    if (run->prov->unwrap_line(run->unwrap, line, len, &ev))
        ar_call_final_seen(call);
    if (ev.tool && run->o.progress) {
        struct ar_run_progress p = { run->prov->name,
                                     run->o.job_id,
                                     call_kind_names[run->kind],
                                     ar_now_ms() - run->t0,
                                     ev.tool,
                                     ev.path,
                                     0,
                                     NULL };
        run->o.progress(run->o.progress_arg, &p);
    }
}

/* ---- the share's word before every call (share.h) -------------------------------------- */

/* The call in flight is over (cost known or not; 0 for one that never ran): what it held
 * goes back to the share, which wakes the calls that fit now. */
static void release_hold(struct ar_run *run, double cost, int known, const char *model)
{
    if (run->hold.n)
        ar_share_release(run->share, &run->hold, cost, known, model);
}

/* The share will not have call `kind` made: the run ends with "budget", saying why. */
static void budget_refused(struct ar_run *run, enum call_kind kind, const struct ar_error *why)
{
    free(run->refused);
    run->refused = strdup(why->msg);
    if (kind == CALL_REPAIR) {
        ar_result_draft_fail(&run->draft, AR_EBUDGET,
                             "the answer violates the contract (%zu %s) and the repair call was "
                             "not made: %s",
                             run->details.n, run->details.n == 1 ? "violation" : "violations",
                             why->msg);
        if (ar_result_draft_take_details(&run->draft, &run->details) < 0) {
            end_out_of_memory(run);
            return;
        }
    } else if (!run->draft.res->n_calls) {
        ar_result_draft_fail(&run->draft, AR_EBUDGET, "no call was made: %s", why->msg);
    } else {
        ar_result_draft_fail(&run->draft, AR_EBUDGET,
                             "the call was not made again (a retry or the next provider): %s",
                             why->msg);
    }
    ar_log_event(&run->o.logger, AR_LOG_WARN, "budget_refused", event_fields(run, 0), "%s: %s",
                 call_kind_names[kind], why->msg);
    end_run(run);
}

static void on_admitted(void *arg);

/* From ar_share_release(), after a wait: defer, so the run goes on from the loop. */
static void admit_wake(void *arg, enum ar_budget_answer answer, const struct ar_error *why)
{
    struct ar_run *run = arg;
    run->admit_answer = answer;
    if (answer == AR_BUDGET_OVER)
        run->admit_why = *why;
    if (ar_loop_defer(run->loop, on_admitted, run) < 0) {
        release_hold(run, 0, 1, NULL);
        end_out_of_memory(run);
    }
}

static void on_admitted(void *arg)
{
    struct ar_run *run = arg;
    if (run->cancelled) {
        release_hold(run, 0, 1, NULL);
        set_error(run, AR_EINTERRUPTED, "%s", "interrupted while waiting for room to call");
        end_run(run);
    } else if (run->admit_answer == AR_BUDGET_OVER) {
        budget_refused(run, run->admit_kind, &run->admit_why);
    } else {
        start_call(run, run->admit_kind);
    }
}

/* Asks the share for call `kind`: started now, after a wait for room, or refused. */
static void admit_call(struct ar_run *run, enum call_kind kind)
{
    struct ar_error why = AR_ERROR_INIT;
    run->admit_kind = kind;
    run->admit.leaf = &run->budget;
    run->admit.hold = &run->hold;
    run->admit.wake = admit_wake;
    run->admit.arg = run;
    switch (ar_share_admit(run->share, &run->admit, &why)) {
    case AR_BUDGET_START:
        start_call(run, kind);
        return;
    case AR_BUDGET_WAIT:
        ar_debug(&run->o.logger, "%s call waits for room under the share's caps",
                 call_kind_names[kind]);
        return;
    case AR_BUDGET_OVER:
        budget_refused(run, kind, &why);
        return;
    }
}

/* What the call that ended cost, for the share: its record's cost; a call refused before
 * a model answered (not found, auth, a rate limit) with no usage said cost nothing. */
static int call_cost(const struct ar_run *run, int code, const struct ar_reply *reply, double *cost)
{
    const struct ar_result *r = run->draft.res;
    const struct ar_call_record *c = r->n_calls ? &r->calls[r->n_calls - 1] : NULL;
    *cost = 0;
    if (!c || c->cost_source == AR_COST_CACHE)
        return 1;
    if (c->cost_source != AR_COST_UNKNOWN) {
        *cost = c->cost_usd;
        return 1;
    }
    return !reply->has_usage &&
           (code == AR_ENOTFOUND || code == AR_ESPAWN || code == AR_EAUTH || code == AR_ERATELIMIT);
}

/* Which provider failures move on to the next provider of a fallback list. */
static int falls_back(int code)
{
    return code == AR_ENOTFOUND || code == AR_EAUTH || code == AR_ERATELIMIT || code == AR_EAPI;
}

/* Moves on to the next installed provider of the fallback list: 1, or 0 when none is left. */
static int next_provider(struct ar_run *run)
{
    while (run->provider_index + 1 < run->providers.n) {
        run->provider_index++;
        const char *name = run->providers.v[run->provider_index];
        const struct ar_provider *p = ar_provider_find(name);
        if (p) {
            ar_log_event(&run->o.logger, AR_LOG_WARN, "fallback", event_fields(run, 0),
                         "%s failed (%s); trying %s", run->prov->name,
                         ar_strerror_name(run->draft.res->error.code), p->name);
            run->prov = p;
            if (ar_result_draft_switch_provider(&run->draft, p->name) < 0) {
                set_error(run, AR_ENOMEM, "%s", "out of memory");
                return 0;
            }
            ar_result_draft_clear_error(&run->draft);
            return 1;
        }
    }
    return 0;
}

static void on_wait_done(void *arg, int cancelled)
{
    struct ar_run *run = arg;
    run->wait = NULL;
    if (cancelled || run->cancelled) {
        set_error(run, AR_EINTERRUPTED, "%s", "interrupted while waiting to call again");
        end_run(run);
        return;
    }
    admit_call(run, run->wait_kind);
}

/* Waits ms (a libuv timer: a Ctrl-C ends it at once), then makes call `kind`. */
static void wait_then_call(struct ar_run *run, enum call_kind kind, uint64_t ms, const char *reason)
{
    run->wait_kind = kind;
    run->waited_ms += ms;
    if (ar_wait_start(run->loop, ms, on_wait_done, run, &run->wait) < 0) {
        end_out_of_memory(run);
        return;
    }
    if (run->o.progress) {
        struct ar_run_progress p = { run->prov->name,
                                     run->o.job_id,
                                     call_kind_names[kind],
                                     ar_now_ms() - run->t0,
                                     NULL,
                                     NULL,
                                     ms,
                                     reason };
        run->o.progress(run->o.progress_arg, &p);
    }
}

/*
 * Whether a failed call is made once more, and after how long: the policy is
 * ar_retry_wait()'s (retry.c); never a second time, and never when the call
 * changed something.
 */
static int retry_wait(const struct ar_run *run, int code, const struct ar_reply *reply,
                      uint64_t *ms)
{
    /* The call's own effects decide: a repair call after an editing main call only
     * rewrites text, and may be made again. */
    if (run->retried || run->cancelled || reply->files.n || reply->acted)
        return 0;
    return ar_retry_wait(code, reply->transient, reply->retry_after_s, run->o.max_wait_ms, ms);
}

/*
 * What ended the call, as the run's error: a clock, the cap or a cancel, else
 * what the adapter found, else a tool call the CLI refused. Returns the code
 * (0: the call succeeded) and sets *msg (into buf, or the reply's message).
 */
static int call_error(const struct ar_run *run, const struct ar_child_result *cr,
                      const struct ar_reply *reply, const char **msg, char *buf, size_t size)
{
    int code = 0;
    *msg = buf;
    switch (cr->end) {
    case AR_CHILD_TIMEOUT:
        code = AR_ETIMEOUT;
        snprintf(buf, size, "%s did not finish within %.0f s", run->prov->name,
                 (double)run->o.timeout_ms / 1000.0);
        break;
    case AR_CHILD_IDLE:
        code = AR_EIDLE;
        snprintf(buf, size, "%s printed nothing for %.0f s", run->prov->name,
                 (double)run->o.idle_timeout_ms / 1000.0);
        break;
    case AR_CHILD_TOOBIG:
        code = AR_ETOOBIG;
        snprintf(buf, size, "%s printed more than %zu bytes", run->prov->name, run->o.output_cap);
        break;
    case AR_CHILD_CANCELLED:
        code = AR_EINTERRUPTED;
        snprintf(buf, size, "%s was stopped before it finished", run->prov->name);
        break;
    default:
        code = reply->error;
        *msg = reply->error_msg;
        break;
    }
    /* A tool call the CLI refused: the answer is not what was asked, whatever it says. */
    if (!code && reply->denied.n && !run->o.allow_denied) {
        code = AR_EDENIED;
        size_t n = reply->denied.n / 2;
        const char *target = reply->denied.v[1];
        snprintf(buf, size, "%s refused %zu tool call%s (%s%s%s); --allow-denied accepts it",
                 run->prov->name, n, n == 1 ? "" : "s", reply->denied.v[0], *target ? " " : "",
                 target);
        *msg = buf;
    }
    return code;
}

/* Records the call that ended in the draft: its exit, tokens, cost, text and denials. */
static int record_call_end(struct ar_run *run, struct ar_call *call,
                           const struct ar_child_result *cr, const struct ar_reply *reply)
{
    if (reply->has_cost && !ar_cost_cli_valid(reply->cost_usd))
        ar_warn(&run->o.logger, "%s reported a cost of %g USD, which cannot be right; ignored",
                run->prov->name, reply->cost_usd);
    if (reply->nul_replaced)
        ar_warn(&run->o.logger,
                "%s's output held %zu NUL character%s (\\u0000), each replaced with U+FFFD",
                run->prov->name, reply->nul_replaced, reply->nul_replaced == 1 ? "" : "s");
    if (reply->usage_cumulative)
        ar_warn(&run->o.logger,
                "%s reported the resumed session's running token total; this call's own share "
                "could not be told apart, so tokens and cost include earlier calls",
                run->prov->name);
    const char *model = reply->model ? reply->model : run->call_model;
    /* A repair call is the main call's CLI and model once more: when it does not say which
     * model answered, the main call's prices it (an unknown one would stop a batch's
     * budget at the first repair call). */
    if (!model && run->kind == CALL_REPAIR)
        model = run->main_model;
    if (run->kind == CALL_MAIN && model != run->main_model) {
        free(run->main_model);
        run->main_model = model ? strdup(model) : NULL;
    }
    struct ar_call_end e = {
        .exit_code = cr->status,
        .signal = cr->term_signal,
        .duration_ms = cr->duration_ms,
        .timed_out = cr->end == AR_CHILD_TIMEOUT || cr->end == AR_CHILD_IDLE,
        .stderr_tail = cr->stderr_tail,
        .stderr_tail_len = cr->stderr_tail_len,
        .usage = reply->usage,
        .usage_cumulative = reply->usage_cumulative,
        .cost = ar_cost_compute(run->prices, model, reply->has_usage ? &reply->usage : NULL,
                                reply->has_cost, reply->cost_usd),
        .cached = ar_call_origin(call) == AR_CALL_CACHED,
        .model = model,
        .session_id = reply->session_id,
        .main_call = run->kind == CALL_MAIN,
        .text = reply->text,
        .denied = &reply->denied,
        .cli_version = reply->cli_version,
        .unknown_events = reply->unknown_events,
        .rate_limit = reply->has_rate_limit ? &reply->rate_limit : NULL,
    };
    return ar_result_draft_end_call(&run->draft, &e);
}

/*
 * After a failed call, with the work tree's word taken (go_on_after_failure is the
 * rest of after_failed_call): the same call once more after the wait, or the next
 * provider, or the end. A main call that changed files (side_effects) gets neither.
 */
static void go_on_after_failure(struct ar_run *run, int code, int retry, uint64_t wait_ms)
{
    struct ar_result *r = run->draft.res;
    int could_move_on = run->kind == CALL_MAIN && !run->cancelled && falls_back(code);
    int changed = run->kind == CALL_MAIN && run->side_effects;
    if (retry && !changed) {
        if (code == AR_ERATELIMIT)
            ar_backoff_extend(run->backoff, run->prov->name, ar_loop_now_ms(run->loop) + wait_ms);
        ar_warn(&run->o.logger, "%s: %s; calling again in %.1f s", run->prov->name, r->error.msg,
                (double)wait_ms / 1000.0);
        ar_result_draft_clear_error(&run->draft);
        run->retried = 1;
        wait_then_call(run, run->kind, wait_ms,
                       code == AR_ERATELIMIT ? "rate limit" : ar_strerror_name(code));
        return;
    }
    if ((retry || could_move_on) && changed) {
        /* The work tree is no longer what the task was given: running it again
         * (here or with another provider) could apply its edits twice. */
        char why[sizeof(r->error.msg)];
        snprintf(why, sizeof(why), "%s", r->error.msg);
        ar_result_draft_fail(&run->draft, code,
                             "%s; not retried or handed to a fallback provider: the call had "
                             "already changed files or run tools (see files)",
                             why);
    } else if (could_move_on && next_provider(run)) {
        make_call(run, CALL_MAIN);
        return;
    }
    end_run(run);
}

static void on_snapshot_failed(struct ar_git_snapshot *now, int rc, const struct ar_error *err,
                               void *arg)
{
    struct ar_run *run = arg;
    struct ar_git_changes ch;
    ar_git_changes_init(&ch);
    struct ar_error e = AR_ERROR_INIT;
    /* Changed, unless git says plainly that nothing did: a retry that cannot be told
     * safe is not made. */
    int changed = 1;
    if (now && now->tracked && ar_git_changes_compute(run->before, now, &ch, &e) == 0 &&
        ar_own_files_drop(&ch, now->root, run->transcript_fd) == 0)
        changed = ch.n > 0;
    else if (rc < 0 && err)
        ar_warn(&run->o.logger, "git snapshot failed: %s", err->msg);
    ar_git_changes_finish(&ch);
    ar_git_snapshot_destroy(now);
    if (changed)
        run->side_effects = 1;
    go_on_after_failure(run, run->failed_code, run->failed_retry, run->failed_wait_ms);
}

/*
 * The provider's quota refused the call, and resets past what the run may wait: the
 * runs sharing this run's backoff (a batch's jobs) make no call of the provider until
 * then (refused_call()) instead of each running into the refusal again.
 */
static void note_refusal(struct ar_run *run, const struct ar_reply *reply)
{
    const struct ar_rate_limit *rl = &reply->rate_limit;
    if (!reply->has_rate_limit || !rl->status || strcmp(rl->status, "rejected") != 0)
        return;
    int64_t now = (int64_t)time(NULL);
    if (rl->resets_at <= now)
        return;
    /* A reset no clock reaches (a CLI's garbage) holds the provider for a century, no more:
     * the sum below stays far from overflowing. */
    int64_t left_s = rl->resets_at - now;
    uint64_t left_ms =
        (uint64_t)(left_s < INT64_C(3155760000) ? left_s : INT64_C(3155760000)) * 1000;
    if (run->o.max_wait_ms && left_ms <= run->o.max_wait_ms)
        return; /* within --max-wait: the shared pause (ar_backoff_extend()) holds them */
    ar_backoff_refuse(run->backoff, run->prov->name, ar_loop_now_ms(run->loop) + left_ms,
                      rl->resets_at);
}

/*
 * Whether call `kind` of the run's provider is refused without being made: an earlier
 * call of the same backoff (another job of the batch) was refused by the provider's
 * quota until a reset past --max-wait. Then the run fails rate_limit, saying when the
 * quota resets and that no call was made, or its main call moves on to the next
 * provider of its fallback list. Returns 1 when it took the run over.
 */
static int refused_call(struct ar_run *run, enum call_kind kind)
{
    int64_t resets_at =
        ar_backoff_refused(run->backoff, run->prov->name, ar_loop_now_ms(run->loop));
    if (!resets_at)
        return 0;
    char when[32] = "?";
    time_t t = (time_t)resets_at;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    ar_result_draft_fail(&run->draft, AR_ERATELIMIT,
                         "%s's usage limit was reached (an earlier call was refused until it "
                         "resets at %s); no call was made",
                         run->prov->name, when);
    int64_t now = (int64_t)time(NULL);
    ar_result_draft_retry_after(&run->draft, resets_at > now ? (double)(resets_at - now) : 0);
    ar_warn(&run->o.logger, "%s: its usage limit resets at %s; no call made", run->prov->name,
            when);
    if (kind == CALL_MAIN && !run->cancelled && !run->side_effects && next_provider(run))
        make_call(run, CALL_MAIN);
    else
        end_run(run);
    return 1;
}

/*
 * A call failed with `code`: made once more after a wait (retry_wait()), or
 * by the next provider of the fallback list, or the run ends with the error.
 * A main call is never made again once it changed files: what the CLI reported
 * (files, a tool that acted) decides at once; otherwise git is asked first, so a
 * change the CLI never reported (a shell command, a hook) counts too.
 */
static void after_failed_call(struct ar_run *run, int code, const char *msg,
                              const struct ar_reply *reply)
{
    set_error(run, code, "%s", msg ? msg : ar_strerror(code));
    ar_result_draft_retry_after(&run->draft, reply->retry_after_s);
    uint64_t wait_ms = 0;
    int retry = retry_wait(run, code, reply, &wait_ms);
    if (code == AR_ERATELIMIT && !retry && !run->cancelled)
        note_refusal(run, reply);
    int could_move_on = run->kind == CALL_MAIN && !run->cancelled && falls_back(code);
    if ((retry || could_move_on) && run->kind == CALL_MAIN && !run->side_effects && run->before &&
        run->before->tracked) {
        struct ar_error err = AR_ERROR_INIT;
        run->failed_code = code;
        run->failed_retry = retry;
        run->failed_wait_ms = wait_ms;
        if (ar_git_snapshot_start(run->loop, run->o.cwd, run->before, on_snapshot_failed, run,
                                  &err) == 0)
            return;
        ar_warn(&run->o.logger, "git snapshot failed: %s", err.msg);
        run->side_effects = 1;
    }
    go_on_after_failure(run, code, retry, wait_ms);
}

static int check_answer(struct ar_run *run, struct ar_call *call, const char *text);

static void on_call_end(struct ar_call *call, const struct ar_child_result *cr, void *arg)
{
    struct ar_run *run = arg;
    run->call = NULL;

    struct ar_exit_info exit = { cr->status, cr->term_signal,
                                 cr->end != AR_CHILD_EXITED && cr->end != AR_CHILD_FINAL_GRACE,
                                 cr->stderr_tail, cr->stderr_tail_len };
    struct ar_reply reply;
    ar_reply_init(&reply);
    run->prov->unwrap_finish(run->unwrap, &exit, &reply);
    run->prov->unwrap_free(run->unwrap);
    run->unwrap = NULL;
    ar_call_setup_finish(&run->setup);

    int nomem = record_call_end(run, call, cr, &reply) < 0;
    char buf[256];
    const char *msg = NULL;
    int code = call_error(run, cr, &reply, &msg, buf, sizeof(buf));
    double cost;
    int known = call_cost(run, code, &reply, &cost);
    release_hold(run, cost, known, run->main_model);
    if (reply.files.n || reply.acted)
        run->side_effects = 1;
    if (code && ar_result_draft_fail_call(&run->draft, code) < 0)
        nomem = 1;
    call_event(run, AR_CALL_FINISHED);

    if (ar_log_enabled(&run->o.logger, AR_LOG_DEBUG) && reply.text) {
        json_t *f = event_fields(run, cr->duration_ms);
        json_object_set_new(f, "text",
                            ar_json_text(reply.text, strnlen(reply.text, LOG_TEXT_BYTES)));
        ar_log_event(&run->o.logger, AR_LOG_DEBUG, "llm_output", f, "%s answered (%zu bytes)",
                     run->prov->name, strlen(reply.text));
    }

    if (nomem) {
        ar_reply_finish(&reply);
        end_out_of_memory(run);
    } else if (code) {
        after_failed_call(run, code, msg, &reply);
        ar_reply_finish(&reply);
    } else {
        ar_reply_finish(&reply);
        /* Only a good answer is worth keeping in the cache: a call whose answer
         * needs the repair call, or fails, is made again next time. */
        if (!run->contract && !run->o.want_json) {
            ar_call_keep(call);
            end_run(run);
        } else if (check_answer(run, call, run->draft.res->output ? run->draft.res->output : "")) {
            ar_call_keep(call);
        }
    }
}

/*
 * The model to ask for. -m and $AGENTRUN_MODEL name a model of the first
 * provider: a fallback provider gets only its CLI's own variable, else its
 * default, and is reported and priced as that, never as the first one's model.
 */
static const char *call_model(const struct ar_run *run)
{
    if (run->provider_index == 0)
        return ar_provider_model(run->prov, run->o.model);
    const char *v = run->prov->model_env ? getenv(run->prov->model_env) : NULL;
    return v && *v ? v : NULL;
}

/* A new call (not a retry): it gets its one retry. */
static void make_call(struct ar_run *run, enum call_kind kind)
{
    run->retried = 0;
    schedule_call(run, kind);
}

/* Makes call `kind` now, or after the provider's shared rate-limit pause. */
static void schedule_call(struct ar_run *run, enum call_kind kind)
{
    if (refused_call(run, kind))
        return;
    uint64_t pause = ar_backoff_left(run->backoff, run->prov->name, ar_loop_now_ms(run->loop));
    if (pause && run->o.max_wait_ms) {
        wait_then_call(run, kind, pause, "rate limit");
        return;
    }
    admit_call(run, kind);
}

/*
 * What the CLI passes down to an agentrun it starts (share.h, "Nesting"): how deep that
 * one is, and what this call may spend, which is all that one may spend.
 */
static int nest_env(struct ar_run *run, struct ar_error *err)
{
    char v[64];
    snprintf(v, sizeof(v), "AGENTRUN_DEPTH=%u", ar_share_depth(run->share) + 1);
    int rc = ar_strv_push(&run->setup.env, v);
    if (!rc && run->hold.allow > 0) {
        snprintf(v, sizeof(v), "AGENTRUN_BUDGET_USD=%.10f", run->hold.allow);
        rc = ar_strv_push(&run->setup.env, v);
    }
    return rc ? ar_error_set(err, AR_ENOMEM, NULL, "out of memory") : 0;
}

/* The adapter builds the call (argv, environment, temporary files), the draft
 * records it, and the call source starts it with the prompt on stdin. The share has
 * admitted it: whatever ends the call gives its hold back. */
static void start_call(struct ar_run *run, enum call_kind kind)
{
    struct ar_error err = AR_ERROR_INIT;
    run->kind = kind;
    run->call_model = call_model(run);
    enum ar_tools tools = call_tools(&run->o, kind);
    struct ar_call_spec spec = {
        .model = run->call_model,
        .schema = run->contract_compact,
        /* A session belongs to one CLI: a fallback provider starts afresh. */
        .resume = kind == CALL_MAIN && run->provider_index == 0 ? run->o.resume : NULL,
        .cwd = run->o.cwd,
        .allow_edits = tools == AR_TOOLS_EDIT,
        .tools = tools,
        .trust_project = run->o.trust_project,
        /* Nobody resumes a repair call's session. */
        .no_session = kind == CALL_REPAIR || run->o.no_session,
        .in_git_repo = run->in_git_repo,
        .max_budget_usd = run->hold.allow,
    };
    const struct ar_buf *in = kind == CALL_MAIN ? &run->prompt : &run->repair_prompt;
    /* The contract once: a CLI that takes it natively is sent the prompt without the
     * template's own statement of it, which opens the rendering (the same buffer, later). */
    size_t skip = kind == CALL_MAIN && spec.schema && run->prov->native_contract &&
                          run->prov->native_contract(spec.schema)
                      ? ar_prompt_contract_lead(run->tpl)
                      : 0;
    ar_call_setup_init(&run->setup);
    /* Every value placed in the CLI's argv is checked here, once for all adapters; the
     * provider layer builds the rest of what the CLI gets, the prompt as data included. */
    if (ar_provider_check_arg("model", spec.model, &err) < 0 ||
        ar_provider_check_arg("session id", spec.resume, &err) < 0 ||
        ar_provider_prepare_call(run->prov, &spec, in->data ? in->data + skip : "", in->len - skip,
                                 &run->setup, &err) < 0 ||
        nest_env(run, &err) < 0) {
        ar_call_setup_finish(&run->setup);
        release_hold(run, 0, 1, NULL);
        ar_result_draft_fail_with(&run->draft, &err);
        end_run(run);
        return;
    }
    struct ar_posture posture = { tools, run->setup.project_config, run->setup.context_files };
    struct ar_call_record *c = ar_result_draft_begin_call(
        &run->draft, call_kind_names[kind], run->prov->name, ar_strv_get(&run->setup.argv),
        run->waited_ms, &posture, kind == CALL_MAIN);
    run->waited_ms = 0;
    if (!c) {
        ar_call_setup_finish(&run->setup);
        release_hold(run, 0, 1, NULL);
        end_out_of_memory(run);
        return;
    }
    c->budget_usd = run->hold.allow;
    struct ar_call_opts call;
    memset(&call, 0, sizeof(call));
    struct ar_child_opts co = AR_CHILD_OPTS_INIT;
    co.argv = ar_strv_get(&run->setup.argv);
    co.cwd = run->setup.cwd ? run->setup.cwd : run->o.cwd;
    co.env = ar_strv_get(&run->setup.env);
    co.stdin_data = run->setup.stdin_data;
    co.stdin_len = run->setup.stdin_len;
    co.timeout_ms = run->o.timeout_ms;
    co.idle_timeout_ms = run->o.idle_timeout_ms;
    co.kill_grace_ms = run->o.kill_grace_ms;
    co.final_grace_ms = run->o.final_grace_ms;
    co.output_cap = run->o.output_cap;
    call.child = co;
    call.provider = run->prov->name;
    call.setup = &run->setup;
    call.spec = &spec;
    call.tapes = &run->tapes;
    call.logger = &run->o.logger;
    call.on_line = on_line;
    call.on_done = on_call_end;
    call.arg = run;
    run->unwrap = run->prov->unwrap_new(&spec);
    if (!run->unwrap) {
        ar_call_setup_finish(&run->setup);
        release_hold(run, 0, 1, NULL);
        end_out_of_memory(run);
        return;
    }
    if (ar_call_start(run->loop, &call, &run->call, &err) < 0) {
        run->prov->unwrap_free(run->unwrap);
        run->unwrap = NULL;
        ar_call_setup_finish(&run->setup);
        release_hold(run, 0, 1, NULL);
        if (ar_result_draft_fail_call(&run->draft, err.code) < 0) {
            end_out_of_memory(run);
            return;
        }
        call_event(run, AR_CALL_FINISHED);
        if (err.code == AR_ENOTFOUND)
            ar_result_draft_fail(&run->draft, err.code,
                                 "%s; install it with '%s' or set %s to its path", err.msg,
                                 run->prov->install_hint, run->prov->bin_env);
        else
            ar_result_draft_fail_with(&run->draft, &err);
        if (kind == CALL_MAIN && falls_back(err.code) && next_provider(run)) {
            make_call(run, CALL_MAIN);
            return;
        }
        end_run(run);
        return;
    }
    call_event(run, AR_CALL_STARTED);
    if (kind == CALL_REPAIR)
        ar_log_event(&run->o.logger, AR_LOG_INFO, "repair_attempt",
                     event_fields(run, ar_now_ms() - run->t0), "asking %s to repair its answer",
                     run->prov->name);
    if (run->o.progress) {
        struct ar_run_progress p = { run->prov->name,
                                     run->o.job_id,
                                     call_kind_names[kind],
                                     ar_now_ms() - run->t0,
                                     NULL,
                                     NULL,
                                     0,
                                     NULL };
        run->o.progress(run->o.progress_arg, &p);
    }
}

/* ---- extraction, checks and the repair prompt --------------------------------------- */

static int check_rules(struct ar_run *run, const char *text, struct ar_json_doc *doc,
                       struct ar_extract_fixes *fixes)
{
    struct ar_answer_rules rules = { run->contract,   run->o.expect,       run->o.local_repair,
                                     run->o.validate, run->o.validate_arg, run->independent_items };
    ar_strv_finish(&run->details);
    return ar_answer_check(&rules, text, doc, fixes, &run->details);
}

static int render_repair(struct ar_run *run, const char *text, struct ar_error *err)
{
    ar_buf_reset(&run->repair_prompt);
    return ar_answer_repair_prompt(run->repair_tpl, run->contract, run->o.expect, &run->details,
                                   text, &run->repair_prompt, err);
}

/*
 * Extract, repair locally and check the answer `text`: a good one is the
 * run's JSON; a bad answer of the main call gets the one repair call (when
 * allowed), else the run ends with no_json or contract and the violations.
 * Returns 1 when the answer was good. A main call the repair call fixes is kept in the
 * cache with it (the same request replays the same bad answer and its fix); a run that
 * ends with no good answer keeps no call of it.
 */
static int check_answer(struct ar_run *run, struct ar_call *call, const char *text)
{
    struct ar_json_doc doc;
    struct ar_extract_fixes fixes;
    if (check_rules(run, text, &doc, &fixes)) {
        /* Left-out values are named, but the answer is still the model's own bytes. */
        int repaired = (fixes.bits & ~(unsigned)AR_FIX_NOTES) != 0;
        enum ar_repair_kind repair = run->kind == CALL_REPAIR ? AR_REPAIR_MODEL
                                     : repaired               ? AR_REPAIR_LOCAL
                                                              : run->draft.res->repair;
        if (ar_result_draft_accept(&run->draft, &doc, &fixes, repair) < 0) {
            end_out_of_memory(run);
            return 0;
        }
        if (run->kind == CALL_REPAIR) {
            ar_log_event(&run->o.logger, AR_LOG_INFO, "repair_succeeded",
                         event_fields(run, ar_now_ms() - run->t0), "the repair call fixed it");
            struct ar_error err = AR_ERROR_INIT;
            if (ar_call_held_put(run->held, &err) < 0)
                ar_warn(&run->o.logger, "cannot write the cache entry: %s", err.msg);
            run->held = NULL;
        }
        end_run(run);
        return 1;
    }
    int code = doc.value ? AR_ECONTRACT : AR_ENOJSON;
    ar_json_doc_finish(&doc);
    if (run->kind == CALL_MAIN && run->o.model_repair) {
        struct ar_error err = AR_ERROR_INIT;
        if (render_repair(run, text, &err) < 0) {
            ar_result_draft_fail_with(&run->draft, &err);
            end_run(run);
            return 0;
        }
        ar_log_event(&run->o.logger, AR_LOG_INFO, "repair_needed", event_fields(run, 0),
                     "%s: %s; one repair call", run->prov->name,
                     run->details.n ? run->details.v[0] : ar_strerror(code));
        ar_result_draft_repairing(&run->draft);
        ar_call_held_free(run->held);
        run->held = ar_call_hold(call);
        make_call(run, CALL_REPAIR);
        return 0;
    }
    if (run->kind == CALL_REPAIR)
        ar_log_event(&run->o.logger, AR_LOG_WARN, "repair_failed",
                     event_fields(run, ar_now_ms() - run->t0), "the repair call did not fix it");
    if (code == AR_ENOJSON)
        set_error(run, code, "%s",
                  run->details.n ? run->details.v[0] : "no JSON found in the model output");
    else
        ar_result_draft_fail(&run->draft, code, "the answer violates the contract (%zu %s)",
                             run->details.n, run->details.n == 1 ? "violation" : "violations");
    if (ar_result_draft_take_details(&run->draft, &run->details) < 0) {
        end_out_of_memory(run);
        return 0;
    }
    end_run(run);
    return 0;
}

/* ---- the end of a run ------------------------------------------------------------------- */

/* The one teardown: everything the run owns, whether it ran or its setup failed. */
static void run_free(struct ar_run *run)
{
    ar_result_draft_finish(&run->draft);
    ar_call_held_free(run->held);
    ar_git_snapshot_destroy(run->before);
    ar_prompt_destroy(run->tpl);
    ar_prompt_destroy(run->repair_tpl);
    ar_prices_destroy(run->prices);
    free(run->main_model);
    free(run->contract_compact);
    ar_buf_finish(&run->prompt);
    ar_buf_finish(&run->repair_prompt);
    if (run->transcript_fd >= 0)
        close(run->transcript_fd);
    ar_git_tree_destroy(run->tree);
    ar_strv_finish(&run->providers);
    ar_strv_finish(&run->details);
    ar_strv_finish(&run->own);
    ar_call_tapes_finish(&run->tapes);
    free(run->refused);
    /* Nothing is held past the run: a hold left here would shrink the share for good. */
    release_hold(run, 0, 1, NULL);
    if (run->share)
        ar_share_leave(run->share, &run->admit);
    ar_share_destroy(run->own_share);
    struct ar_loop *own_loop = run->own_loop;
    free(run);
    ar_loop_detach(own_loop);
}

static int finish_tree(struct ar_run *run);

/* Whether b or a node above it has a cap. */
static int under_cap(const struct ar_budget *b)
{
    for (; b; b = b->parent)
        if (b->cap > 0)
            return 1;
    return 0;
}

/* The run is over: the finished result goes to the done callback, and the run is freed. */
static void report(struct ar_run *run)
{
    const struct ar_result *r = run->draft.res;
    /* --expect-changes: an answer that changed nothing did not do the task. */
    if (!r->error.code && run->o.expect_changes && r->n_calls) {
        if (!r->files_tracked)
            set_error(run, AR_ENOEFFECT, "%s",
                      "a change was expected, but files are not tracked (see "
                      "files_untracked_reason): none can be confirmed");
        else if (r->n_files == 0)
            set_error(run, AR_ENOEFFECT, "%s", "a change was expected, but no file changed");
    }
    if (run->tree && !run->tree_finished && finish_tree(run) == 0)
        return;
    if (under_cap(&run->budget) &&
        ar_result_draft_budget(&run->draft, run->budget.cap, run->budget.spent, run->refused) < 0)
        set_error(run, AR_ENOMEM, "%s", "out of memory");
    struct ar_result *res = ar_result_draft_detach(&run->draft, ar_now_ms() - run->t0);
    if (res->ok)
        ar_log_event(&run->o.logger, AR_LOG_INFO, "run_finished",
                     event_fields(run, res->duration_ms), "%s finished in %.1f s", res->provider,
                     (double)res->duration_ms / 1000.0);
    else
        ar_log_event(&run->o.logger, AR_LOG_INFO, "run_failed", event_fields(run, res->duration_ms),
                     "%s failed: %s", res->provider ? res->provider : "run",
                     ar_strerror_name(res->error.code));
    run->done(run, res, run->arg);
    run_free(run);
}

/* The files the run changed, from the two snapshots, into the draft. */
static void record_changes(struct ar_run *run, const struct ar_git_snapshot *after)
{
    struct ar_git_changes ch;
    struct ar_error e = AR_ERROR_INIT;
    ar_git_changes_init(&ch);
    if (ar_git_changes_compute(run->before, after, &ch, &e) == 0) {
        int rc = ar_own_files_drop(&ch, after->root, run->transcript_fd);
        if (rc == 0 && run->o.with_content)
            rc = ar_git_changes_load_content(&ch, after->root, 0, &e);
        if (rc == 0)
            rc = ar_result_draft_take_files(&run->draft, &ch, run->o.with_content);
        if (rc < 0)
            ar_result_draft_fail(&run->draft, AR_ENOMEM, "%s", "out of memory");
    }
    ar_git_changes_finish(&ch);
}

static void on_snapshot_after(struct ar_git_snapshot *after, int rc, const struct ar_error *err,
                              void *arg)
{
    struct ar_run *run = arg;
    if (after && after->tracked && run->before && run->before->tracked) {
        record_changes(run, after);
    } else if (after && !after->tracked) {
        ar_result_draft_untracked(&run->draft, AR_UNTRACKED_GIT_FAILED);
        ar_debug(&run->o.logger, "files not tracked: %s", after->reason);
    } else if (rc < 0 && err) {
        ar_result_draft_untracked(&run->draft, AR_UNTRACKED_GIT_FAILED);
        ar_warn(&run->o.logger, "git snapshot failed: %s", err->msg);
    }
    ar_git_snapshot_destroy(after);
    report(run);
}

/* The calls are over: the second snapshot (when the first one was taken), then the report. */
static void end_run(struct ar_run *run)
{
    if (run->before && run->before->tracked) {
        struct ar_error err = AR_ERROR_INIT;
        if (ar_git_snapshot_start(run->loop, run->o.cwd, run->before, on_snapshot_after, run,
                                  &err) == 0)
            return;
        ar_result_draft_untracked(&run->draft, AR_UNTRACKED_GIT_FAILED);
        ar_warn(&run->o.logger, "git snapshot failed: %s", err.msg);
    }
    report(run);
}

/* ---- the first call ---------------------------------------------------------------------- */

static void on_snapshot_before(struct ar_git_snapshot *snap, int rc, const struct ar_error *err,
                               void *arg)
{
    struct ar_run *run = arg;
    run->before = snap;
    if (!snap && err)
        ar_warn(&run->o.logger, "git snapshot failed: %s", err->msg);
    if (!snap || !snap->tracked) {
        ar_result_draft_untracked(&run->draft, run->in_git_repo ? AR_UNTRACKED_GIT_FAILED
                                                                : AR_UNTRACKED_NOT_A_WORK_TREE);
        if (snap)
            ar_debug(&run->o.logger, "files not tracked: %s", snap->reason);
    }
    if (run->cancelled) {
        set_error(run, AR_EINTERRUPTED, "%s", "interrupted");
        report(run);
        return;
    }
    make_call(run, CALL_MAIN);
}

/* A run that ends before its first call still reports from the loop, never from
 * inside ar_pipeline_start(). */
static void on_deferred(void *arg)
{
    struct ar_run *run = arg;
    if (run->cancelled && !run->draft.res->error.code)
        set_error(run, AR_EINTERRUPTED, "%s", "the run was cancelled before its first call");
    if (run->draft.res->error.code)
        report(run);
    else
        make_call(run, CALL_MAIN);
}

/* ---- the run's own worktree ------------------------------------------------------------ */

static void on_tree_finished(void *arg)
{
    report(arg);
}

/* The last stage of a run with a worktree (run/tree.h): commit, remove, drop an empty
 * branch. Returns 0 when on_tree_finished will come, -1 when it cannot start. */
static int finish_tree(struct ar_run *run)
{
    run->tree_finished = 1;
    return ar_run_tree_finish(run->loop, run->tree, &run->o, &run->draft, on_tree_finished, run);
}

static int begin(struct ar_run *run);

static void on_tree_made(struct ar_git_tree *tree, const struct ar_error *err, void *arg)
{
    struct ar_run *run = arg;
    run->tree = tree;
    if (err)
        ar_result_draft_fail_with(&run->draft, err);
    else if (run->cancelled || ar_loop_cancelled(run->loop))
        set_error(run, AR_EINTERRUPTED, "%s", "the run was cancelled before its first call");
    else if (keep(run, &run->o.cwd, tree->cwd) < 0 || begin(run) < 0)
        set_error(run, AR_ENOMEM, "%s", "out of memory");
    else
        return;
    report(run);
}

/* ---- setup ---------------------------------------------------------------------------- */

/*
 * The run's own copy of the options it reads after ar_pipeline_start() returns (the
 * caller's strings may go away then). The prompt, the template, its variables
 * and --schema are read only while starting (render_prompt(), from the
 * caller's options): the rendered prompt is the run's one copy of them, so they
 * are not kept. Returns 0 or AR_ENOMEM.
 */
static int copy_options(struct ar_run *run, const struct ar_run_options *o)
{
    run->o = *o;
    run->o.prompt = run->o.template_name = run->o.schema = NULL;
    run->o.vars = NULL;
    run->o.n_vars = 0;
    int rc = 0;
    rc |= keep(run, &run->o.provider, o->provider);
    rc |= keep(run, &run->o.fallback, o->fallback);
    rc |= keep(run, &run->o.model, o->model);
    rc |= keep(run, &run->o.prompts_dir, o->prompts_dir);
    rc |= keep(run, &run->o.cwd, o->cwd);
    rc |= keep(run, &run->o.resume, o->resume);
    rc |= keep(run, &run->o.prices_file, o->prices_file);
    rc |= keep(run, &run->o.transcript_path, o->transcript_path);
    rc |= keep(run, &run->o.job_id, o->job_id);
    rc |= keep(run, &run->o.worktree_base, o->worktree_base);
    rc |= keep(run, &run->o.worktree_branch, o->worktree_branch);
    if (rc)
        return AR_ENOMEM;
    if (run->o.expect > AR_EXPECT_ANY)
        run->o.expect = AR_EXPECT_OBJECT;
    /* An out-of-range value would index the adapters' tables: the default instead. */
    if ((unsigned)run->o.tools > AR_TOOLS_EDIT)
        run->o.tools = AR_TOOLS_AUTO;
    return 0;
}

/* Whether the note of a provider auto skipped was said: once a process, not once a run of
 * a batch. */
static atomic_int auto_note_said;

static int resolve_providers(struct ar_run *run, struct ar_error *err)
{
    char note[256];
    unsigned allowed = ar_share_providers(run->share);
    const struct ar_provider *p =
        ar_provider_resolve_within(run->o.provider, allowed, note, sizeof(note), err);
    if (!p && err->code != AR_ENOTFOUND && err->code != AR_EAUTH)
        return err->code;
    if (p && note[0] && atomic_exchange(&auto_note_said, 1) == 0)
        ar_warn(&run->o.logger, "%s", note);
    /* No provider installed, or none that can log in: the run still ends with a
     * RunResult, whose error (kept in run->missing) names what to install or set;
     * claude stands in as the provider it reports. */
    int missing = !p;
    if (!p) {
        run->missing = *err;
        /* A replay starts no CLI: what is missing is which provider the calls were
         * recorded with, not an installation. */
        if (run->tapes.replay_dir)
            ar_replay_needs_provider(run->tapes.replay_dir, &run->missing);
        p = ar_providers()[0];
    }
    run->prov = p;
    if (ar_strv_push(&run->providers, p->name) < 0)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (run->o.fallback) {
        const struct ar_provider *fb[16];
        int n = ar_provider_list_parse(run->o.fallback, fb, 16, err);
        if (n < 0)
            return err->code;
        for (int i = 0; i < n && i < 16; i++) {
            if (ar_provider_resolve_within(fb[i]->name, allowed, NULL, 0, err) == NULL) {
                char msg[sizeof(err->msg)], where[sizeof(err->where)];
                snprintf(msg, sizeof(msg), "%s", err->msg);
                snprintf(where, sizeof(where), "%s", err->where);
                return ar_error_set(err, err->code, where, "fallback %s", msg);
            }
            if (ar_strv_push(&run->providers, fb[i]->name) < 0)
                return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
    }
    if (missing)
        ar_error_clear(err);
    return 0;
}

/*
 * Renders the prompt once, into run->prompt, straight from the caller's
 * options o (borrowed for the call): a free-form prompt and its --schema
 * instruction, or the template with its variables. This buffer is the only
 * copy the run makes; the child's stdin borrows it.
 */
static int render_prompt(struct ar_run *run, const struct ar_run_options *o, struct ar_error *err)
{
    int rc;
    if (o->template_name) {
        if (o->prompt)
            return ar_error_set(err, AR_EUSAGE, NULL, "give a prompt or a template, not both");
        rc = ar_prompt_load(o->template_name, run->o.prompts_dir, &run->tpl, err);
        if (rc == 0 && o->schema)
            return ar_error_set(
                err, AR_EUSAGE, NULL,
                "a template carries its own contract; --schema goes with a free-form prompt");
        if (rc < 0)
            return rc;
        struct ar_prompt_var *pv = calloc(o->n_vars ? o->n_vars : 1, sizeof(*pv));
        if (!pv)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        for (size_t i = 0; i < o->n_vars; i++) {
            pv[i].name = o->vars[i].name;
            pv[i].value = o->vars[i].value;
        }
        rc = ar_prompt_render(run->tpl, pv, o->n_vars, &run->prompt, err);
        free(pv);
    } else if (o->prompt) {
        rc = ar_prompt_render_inline(o->prompt, strlen(o->prompt), o->schema,
                                     o->schema ? strlen(o->schema) : 0, "--schema", &run->prompt,
                                     &run->tpl, err);
    } else {
        return ar_error_set(err, AR_EUSAGE, NULL, "no prompt and no template");
    }
    if (rc < 0)
        return rc;
    run->contract = ar_prompt_contract(run->tpl);
    if (run->contract) {
        run->contract_compact = strdup(ar_contract_schema_text(run->contract, NULL));
        if (!run->contract_compact)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    if ((run->contract || run->o.want_json) && run->o.model_repair)
        return ar_prompt_load("repair", run->o.prompts_dir, &run->repair_tpl, err);
    return 0;
}

/*
 * The first stage that waits: the git snapshot before the first call, or, for a run
 * that takes none (or ended already), the next turn of the loop. Returns 0 or AR_ENOMEM.
 */
static int begin(struct ar_run *run)
{
    enum ar_files_untracked why = AR_UNTRACKED_NOT_RUN;
    int snapshots = needs_snapshots(&run->o, &why);
    /* Looking for .git costs a few stat() calls: only where a snapshot may follow. */
    run->in_git_repo = snapshots && inside_git_repo(run->o.cwd);
    struct ar_error err = AR_ERROR_INIT;
    if (run->missing.code) {
        ar_result_draft_fail_with(&run->draft, &run->missing);
    } else if (!snapshots) {
        ar_result_draft_untracked(&run->draft, why);
    } else if (!run->in_git_repo && !getenv("GIT_DIR")) {
        /* Outside a work tree there is nothing to snapshot: no git process per job
         * (GIT_DIR can point anywhere, so then git itself decides). */
        ar_result_draft_untracked(&run->draft, AR_UNTRACKED_NOT_A_WORK_TREE);
    } else if (ar_git_snapshot_start(run->loop, run->o.cwd, NULL, on_snapshot_before, run, &err) ==
               0) {
        return 0;
    } else {
        ar_result_draft_untracked(&run->draft, AR_UNTRACKED_GIT_FAILED);
        ar_warn(&run->o.logger, "git snapshot failed: %s", err.msg);
    }
    return ar_loop_defer(run->loop, on_deferred, run) < 0 ? AR_ENOMEM : 0;
}

/*
 * The run's share (options.share, or one of its own), and its budget node: under the
 * caller's node when a command of the library runs it (a batch job, a review chunk:
 * extra->budget, which holds the command's cap), else under the share's root with the
 * run's own cap, within max_cost_each. A cwd outside the share's directories is refused.
 */
static int join_share(struct ar_run *run, const struct ar_run_options *o,
                      const struct ar_pipeline_extra *extra, struct ar_error *err)
{
    run->share = o->share;
    if (!run->share) {
        struct ar_share_options so;
        ar_share_options_init(&so);
        int rc = ar_share_create(&so, &run->own_share, err);
        if (rc)
            return rc;
        run->share = run->own_share;
    }
    run->backoff = ar_share_backoff(run->share);
    double cap = o->max_cost_usd;
    struct ar_budget *parent = extra && extra->budget ? extra->budget : NULL;
    if (!parent) {
        int rc = ar_share_command_cap(run->share, o->max_cost_usd, &cap, err);
        if (rc)
            return rc;
        parent = ar_share_budget(run->share);
    }
    ar_budget_init(&run->budget, parent, cap, "this run's cap");
    /* What a run may write: the share's rule, with the rules between options every door
     * shares (request.h). */
    struct ar_run_options with = *o;
    with.share = run->share;
    int rc = ar_run_options_check(&with, err);
    if (rc)
        return rc;
    if (can_edit(&run->o) && ar_share_edits_in_worktree(run->share))
        run->o.worktree = AR_WORKTREE_ALWAYS;
    return ar_share_confined(run->share)
               ? ar_share_path(run->share, NULL, o->cwd ? o->cwd : ".", NULL, err)
               : 0;
}

int ar_pipeline_start(struct ar_loop *loop, const struct ar_run_options *opts,
                      const struct ar_pipeline_extra *extra, ar_run_done_fn *done, void *arg,
                      struct ar_run **out, struct ar_error *err)
{
    struct ar_error local = AR_ERROR_INIT;
    if (!err)
        err = &local;
    struct ar_run *run = calloc(1, sizeof(*run));
    if (!run)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    run->loop = loop;
    run->done = done;
    run->arg = arg;
    run->transcript_fd = -1;
    run->t0 = ar_now_ms();
    ar_buf_init(&run->prompt, AR_BUF_UNLIMITED);
    ar_buf_init(&run->repair_prompt, AR_BUF_UNLIMITED);

    int rc = copy_options(run, opts);
    if (rc == 0 && extra)
        rc = keep(run, &run->independent_items, extra->independent_items);
    if (rc < 0)
        ar_error_set(err, rc, NULL, "out of memory");
    if (rc == 0)
        rc = join_share(run, opts, extra, err);
    if (rc == 0)
        rc = ar_call_tapes_init(&run->tapes, opts, err);
    /* The prompt first: a mistyped template costs no look for an installed CLI. */
    if (rc == 0)
        rc = render_prompt(run, opts, err);
    if (rc == 0)
        rc = resolve_providers(run, err);
    if (rc == 0)
        rc = ar_prices_open(run->o.prices_file, &run->prices, err);
    if (rc == 0 && run->o.transcript_path) {
        /* O_NONBLOCK: a FIFO nobody reads would block open() (and a full one each
         * write) where no timeout and no signal can reach us; it fails instead. */
        run->transcript_fd = open(run->o.transcript_path,
                                  O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
        if (run->transcript_fd < 0)
            rc = ar_error_set_sys(err, AR_EIO, errno, run->o.transcript_path,
                                  "cannot open transcript '%s': %s", run->o.transcript_path,
                                  errno == ENXIO ? "a FIFO that no process is reading"
                                                 : strerror(errno));
    }
    if (rc == 0 && run->o.cwd)
        rc = ar_dir_check(run->o.cwd, err);
    if (rc == 0) {
        /* What was asked, until a call says what its adapter could arrange. */
        struct ar_posture asked = { call_tools(&run->o, CALL_MAIN), run->o.trust_project,
                                    run->o.trust_project };
        if (ar_result_draft_init(&run->draft, run->prov->name, &asked) < 0)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    if (rc < 0) {
        run_free(run);
        return err->code ? err->code : rc;
    }
    ar_log_event(&run->o.logger, AR_LOG_INFO, "run_started", event_fields(run, 0), "%s: starting",
                 run->prov->name);
    /* A batch keeps its budget between jobs itself: one line per job would be noise. */
    if (run->o.max_cost_usd > 0 && !run->prov->enforces_budget)
        ar_log_event(&run->o.logger, run->o.job_id ? AR_LOG_INFO : AR_LOG_WARN,
                     "budget_not_enforced", event_fields(run, 0),
                     "%s cannot stop itself at a budget: --max-cost is not enforced during this "
                     "call (its cost is known only once it ends)",
                     run->prov->name);
    if (!run->missing.code && ar_run_uses_worktree(&run->o))
        rc = ar_run_tree_make(loop, &run->o, on_tree_made, run, err);
    else if (begin(run) < 0)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (rc < 0) {
        run_free(run);
        return rc;
    }
    if (out)
        *out = run;
    return 0;
}

void ar_pipeline_cancel(struct ar_run *run)
{
    run->cancelled = 1;
    /* Waiting for room: it leaves the queue and ends from the loop (out of memory, it
     * stays queued and ends once it is woken). */
    if (run->admit.queued && ar_loop_defer(run->loop, on_admitted, run) == 0) {
        ar_share_leave(run->share, &run->admit);
        run->admit_answer = AR_BUDGET_WAIT;
    }
    if (run->call)
        ar_call_kill(run->call);
    if (run->wait)
        ar_wait_cancel(run->wait);
    if (run->own_loop)
        ar_loop_cancel_all(run->own_loop);
}

void ar_pipeline_own_loop(struct ar_run *run, struct ar_loop *loop)
{
    run->own_loop = loop;
}
