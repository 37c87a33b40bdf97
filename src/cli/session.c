/* Shared run options, the stderr logger, the live status line and signals. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/failure.h"
#include "cli/session.h"
#include "cli/terminal.h"
#include "util/buf.h"
#include "util/json_dump.h"
#include "util/file.h"
#include "util/suggest.h"
#include <uv.h>

uint64_t ar_cli_now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

void ar_cli_session_init(struct ar_cli_session *s, const struct ar_cli_command *cmd)
{
    memset(s, 0, sizeof(*s));
    s->cmd = cmd;
    ar_run_options_init(&s->run);
    s->run.logger.fn = ar_cli_log;
    s->run.logger.arg = s;
    s->run.logger.level = AR_LOG_WARN;
    /* Only "1": a checkout is trusted on an explicit word, never on a stray value. */
    const char *trust = getenv("AGENTRUN_TRUST_PROJECT");
    s->run.trust_project = trust && strcmp(trust, "1") == 0;
}

static int parse_duration(struct ar_cli_session *s, const char *name, const char *arg,
                          uint64_t *out)
{
    unsigned long long ms;
    if (ar_cli_parse_duration_ms(arg, &ms) < 0) {
        ar_cli_usage_error(s->cmd, "invalid --%s '%s': want seconds (90, 90s), 15m or 250ms", name,
                           arg);
        return -1;
    }
    *out = ms;
    return 1;
}

static int parse_ttl(struct ar_cli_session *s, const char *arg, uint64_t *out)
{
    /* Seconds, or the duration units, and days: a cache is kept for days. */
    unsigned long long ms = 0;
    size_t n = strlen(arg);
    char *end = NULL;
    if (n > 1 && arg[n - 1] == 'd') {
        unsigned long long days = strtoull(arg, &end, 10);
        if (end != arg + n - 1 || arg[0] == '-' || days > 100000)
            end = NULL;
        else
            ms = days * 86400000ULL;
    } else if (ar_cli_parse_duration_ms(arg, &ms) == 0) {
        end = (char *)arg;
    }
    if (!end || ms == 0) {
        ar_cli_usage_error(s->cmd, "invalid --cache-ttl '%s': want seconds (3600), 90m, 12h or 7d",
                           arg);
        return -1;
    }
    *out = (ms + 999) / 1000;
    return 1;
}

static int parse_fallback(struct ar_cli_session *s, const char *arg)
{
    struct ar_error err = AR_ERROR_INIT;
    if (ar_provider_check_list(arg, &err) < 0) {
        ar_cli_usage_error(s->cmd, "--fallback: %s", err.msg);
        return -1;
    }
    s->run.fallback = arg;
    return 1;
}

int ar_cli_session_option(struct ar_cli_session *s, int key, const char *arg)
{
    struct ar_run_options *o = &s->run;
    switch (key) {
    case 'p':
        if (strcmp(arg, "auto") != 0 && !ar_provider_known(arg)) {
            char names[128], near[32];
            snprintf(names, sizeof(names), "%s, auto", ar_provider_names());
            if (ar_suggest_in_list(arg, names, near, sizeof(near)))
                ar_cli_usage_error(s->cmd, "unknown provider '%s' (%s); did you mean '%s'?", arg,
                                   names, near);
            else
                ar_cli_usage_error(s->cmd, "unknown provider '%s' (%s)", arg, names);
            return -1;
        }
        o->provider = arg;
        return 1;
    case 'm':
        o->model = arg;
        return 1;
    case AR_CLI_KEY_FALLBACK:
        return parse_fallback(s, arg);
    case AR_CLI_KEY_TRUST_PROJECT:
        o->trust_project = 1;
        return 1;
    case 'C':
        o->cwd = arg;
        return 1;
    case AR_CLI_KEY_MAX_COST:
        if (ar_cli_parse_usd(arg, &o->max_cost_usd) < 0) {
            ar_cli_usage_error(s->cmd, "invalid --max-cost '%s': want a positive amount in USD",
                               arg);
            return -1;
        }
        return 1;
    case AR_CLI_KEY_ALLOW_DIR:
        if (s->n_dirs == sizeof(s->dirs) / sizeof(s->dirs[0])) {
            ar_cli_usage_error(s->cmd, "--allow-dir: at most %zu directories",
                               sizeof(s->dirs) / sizeof(s->dirs[0]));
            return -1;
        }
        s->dirs[s->n_dirs++] = arg;
        return 1;
    case AR_CLI_KEY_TIMEOUT:
        return parse_duration(s, "timeout", arg, &o->timeout_ms);
    case AR_CLI_KEY_IDLE_TIMEOUT:
        return parse_duration(s, "idle-timeout", arg, &o->idle_timeout_ms);
    case AR_CLI_KEY_MAX_WAIT:
        return parse_duration(s, "max-wait", arg, &o->max_wait_ms);
    case AR_CLI_KEY_NO_REPAIR:
        o->model_repair = 0;
        return 1;
    case AR_CLI_KEY_TRANSCRIPT:
        o->transcript_path = arg;
        return 1;
    case AR_CLI_KEY_PROMPTS_DIR: {
        /* A mistyped directory would otherwise be ignored until a template is loaded. */
        struct ar_error err = AR_ERROR_INIT;
        if (ar_dir_check(arg, &err) < 0) {
            ar_cli_usage_error(s->cmd, "--prompts-dir: %s", err.msg);
            return -1;
        }
        o->prompts_dir = arg;
        return 1;
    }
    case AR_CLI_KEY_PRICES:
        o->prices_file = arg;
        return 1;
    case AR_CLI_KEY_RECORD:
        o->record_dir = arg;
        return 1;
    case AR_CLI_KEY_REPLAY:
        o->replay_dir = arg;
        return 1;
    case AR_CLI_KEY_CACHE:
        o->cache = 1;
        return 1;
    case AR_CLI_KEY_CACHE_DIR:
        o->cache_dir = arg;
        return 1;
    case AR_CLI_KEY_CACHE_TTL:
        return parse_ttl(s, arg, &o->cache_ttl_s);
    case 'v':
        ar_cli_verbosity = ar_cli_verbosity < 0 ? 1 : ar_cli_verbosity + 1;
        o->logger.level = ar_cli_verbosity >= 2 ? AR_LOG_DEBUG : AR_LOG_INFO;
        return 1;
    case 'q':
        ar_cli_verbosity = -1;
        o->logger.level = AR_LOG_ERROR;
        return 1;
    case AR_CLI_KEY_LOG_FORMAT:
        if ((s->log_json = ar_cli_choice(s->cmd, AR_CLI_KEY_LOG_FORMAT, arg)) < 0)
            return -1;
        return 1;
    default:
        return 0;
    }
}

/* Notes the file an option names, for the check at the end of the options. */
static void note_file(struct ar_cli_session *s, int key, const char *arg)
{
    for (const struct ar_cli_opt *o = s->cmd->opts; o && o->name; o++)
        if (o->key == key && o->values && strcmp(o->values, "@file") == 0 && arg && *arg &&
            key != AR_CLI_KEY_TRANSCRIPT && s->n_files < sizeof(s->files) / sizeof(*s->files))
            s->files[s->n_files++] = arg;
}

int ar_cli_session_next(struct ar_cli_session *s, struct ar_cli_parser *p, const char **arg)
{
    for (;;) {
        int key = ar_cli_next(p, arg);
        if (key == -1) {
            /* Inputs are never outputs: the transcript is appended to, so it must be none of
             * the files the options name (-f, --schema, --prices, --patch, -o…). Said before
             * anything is read or written. */
            struct ar_error err = AR_ERROR_INIT;
            if (ar_file_check_output("--transcript", s->run.transcript_path, s->files, s->n_files,
                                     &err) < 0) {
                ar_cli_usage_error(s->cmd, "%s", err.msg);
                p->status = AR_EXIT_USAGE;
                return -2;
            }
        }
        if (key < 0)
            return key;
        note_file(s, key, *arg);
        int shared = ar_cli_session_option(s, key, *arg);
        if (shared < 0) {
            p->status = AR_EXIT_USAGE;
            return -2;
        }
        if (!shared)
            return key;
    }
}

/* ---- the logger ---------------------------------------------------------- */

static const char *const level_names[] = { "error", "warning", "info", "debug" };

void ar_cli_log(void *arg, enum ar_log_level level, const char *event, const char *fields,
                const char *msg)
{
    struct ar_cli_session *s = arg;
    ar_cli_session_status_clear(s);
    if (s && s->log_json) {
        json_t *o = fields ? json_loads(fields, 0, NULL) : NULL;
        if (!json_is_object(o)) {
            json_decref(o);
            o = json_object();
        }
        json_t *line = json_object();
        json_object_set_new(line, "level", json_string(level_names[level]));
        if (event)
            json_object_set_new(line, "event", json_string(event));
        json_object_set_new(line, "msg", json_string(msg ? msg : ""));
        json_object_update(line, o);
        json_decref(o);
        char *text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(line);
        if (text) {
            fprintf(stderr, "%s\n", text);
            free(text);
        }
        fflush(stderr);
        return;
    }
    if (!msg || !*msg)
        return;
    /* Many jobs share stderr in a batch: say which one a line is about. */
    json_t *o = fields && strstr(fields, "\"job\"") ? json_loads(fields, 0, NULL) : NULL;
    const char *job = json_string_value(json_object_get(o, "job"));
    char head[160] = "";
    if (job && *job)
        snprintf(head, sizeof(head), "job '%.100s': ", job);
    /* A log line can quote a model, a CLI, a job id: rendered by cli/terminal.h. */
    fputs(level == AR_LOG_ERROR  ? "agentrun: error: "
          : level == AR_LOG_WARN ? "agentrun: warning: "
                                 : "agentrun: ",
          stderr);
    ar_cli_line_fputs(head, stderr);
    ar_cli_line_fputs(msg, stderr);
    fputc('\n', stderr);
    json_decref(o);
    fflush(stderr);
}

/* ---- the live status line --------------------------------------------------- */

static int status_wanted(void)
{
    const char *term = getenv("TERM");
    return isatty(STDERR_FILENO) && ar_cli_verbosity >= 0 && !(term && strcmp(term, "dumb") == 0);
}

static void status_draw(struct ar_cli_session *s)
{
    if (!s->status_enabled)
        return;
    if (s->status_refresh)
        s->status_refresh(s->status_refresh_arg);
    uint64_t now = ar_cli_now_ms();
    uint64_t secs = (now - s->status_start_ms) / 1000;
    /* A run waiting out a rate limit shows how long is left instead of a tool. */
    char waiting[96] = "";
    if (s->wait_until_ms > now) {
        uint64_t left = (s->wait_until_ms - now + 999) / 1000;
        /* A batch line is long already: there the pause goes first, in short. */
        snprintf(waiting, sizeof(waiting),
                 s->status_extra[0] ? "%s %lu:%02lu" : "%s: calling again in %lu:%02lu",
                 s->wait_reason, (unsigned long)(left / 60), (unsigned long)(left % 60));
    }
    int batch_wait = waiting[0] && s->status_extra[0];
    const char *tool = waiting[0] && !batch_wait ? waiting : s->status_tool;
    char line[400];
    char raw[400];
    int n = snprintf(raw, sizeof(raw), "%s %s%s%lu:%02lu%s%s%s%s%s%s",
                     s->status_provider[0] ? s->status_provider : "agentrun",
                     s->status_job[0] ? s->status_job : "", s->status_job[0] ? " " : "",
                     (unsigned long)(secs / 60), (unsigned long)(secs % 60), batch_wait ? "  " : "",
                     batch_wait ? waiting : "", s->status_extra[0] ? "  " : "", s->status_extra,
                     tool[0] ? "  " : "", tool);
    if (n < 0)
        return;
    /* The tool's path is the model's: rendered by cli/terminal.h before it is cut. */
    struct ar_buf safe;
    ar_buf_init(&safe, AR_BUF_UNLIMITED);
    int bad = ar_cli_line_append(&safe, raw, strlen(raw)) < 0;
    snprintf(line, sizeof(line), "%s", bad ? raw : ar_buf_cstr(&safe));
    ar_buf_finish(&safe);
    n = (int)strlen(line);
    /* Keep it on one line of an 80-column terminal; \033[K clears what was longer. */
    if (n > 78) {
        size_t cut = 78;
        while (cut > 0 && ((unsigned char)line[cut] & 0xC0) == 0x80)
            cut--; /* never half a UTF-8 character (a file name, a tool) */
        line[cut] = '\0';
    }
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    s->status_shown = 1;
}

static void on_tick(uv_timer_t *t)
{
    status_draw(t->data);
}

static void on_progress(void *arg, const struct ar_run_progress *p)
{
    struct ar_cli_session *s = arg;
    if (p->provider)
        snprintf(s->status_provider, sizeof(s->status_provider), "%s", p->provider);
    if (p->tool)
        snprintf(s->status_tool, sizeof(s->status_tool), "%s%s%s", p->tool, p->path ? " " : "",
                 p->path ? p->path : "");
    if (p->job)
        snprintf(s->status_job, sizeof(s->status_job), "%s", p->job);
    s->wait_until_ms = p->wait_ms ? ar_cli_now_ms() + p->wait_ms : 0;
    snprintf(s->wait_reason, sizeof(s->wait_reason), "%s", p->wait_reason ? p->wait_reason : "");
    status_draw(s);
}

ar_progress_fn *ar_cli_session_progress_fn(void)
{
    return on_progress;
}

void ar_cli_session_status_start(struct ar_cli_session *s)
{
    if (s->ticker_on || !status_wanted())
        return;
    s->status_enabled = 1;
    s->status_start_ms = ar_cli_now_ms();
    if (uv_timer_init(&s->uv, &s->ticker) != 0)
        return;
    s->ticker.data = s;
    s->ticker_on = 1;
    uv_timer_start(&s->ticker, on_tick, 250, 250);
    /* A status line must not keep the loop running after the last child. */
    uv_unref((uv_handle_t *)&s->ticker);
}

void ar_cli_session_status_clear(struct ar_cli_session *s)
{
    if (s && s->status_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        s->status_shown = 0;
    }
}

static void status_stop(struct ar_cli_session *s)
{
    if (s->ticker_on)
        uv_close((uv_handle_t *)&s->ticker, NULL);
    s->ticker_on = 0;
    ar_cli_session_status_clear(s);
    s->status_enabled = 0;
}

/* ---- loop and signals ------------------------------------------------------- */

static const int watched_signals[AR_CLI_NSIGNALS] = { SIGINT, SIGTERM, SIGHUP };

/*
 * The first SIGINT, SIGTERM or SIGHUP cancels what the command runs (its
 * children get SIGTERM, then SIGKILL after the grace); a second one cancels
 * again, which SIGKILLs them at once.
 */
static void on_signal(uv_signal_t *h, int signum)
{
    struct ar_cli_session *s = h->data;
    if (!s->signal)
        s->signal = signum;
    if (s->cancel)
        s->cancel(s->cancel_arg);
}

uv_loop_t *ar_cli_session_uv(struct ar_cli_session *s)
{
    return &s->uv;
}

void ar_cli_session_set_cancel(struct ar_cli_session *s, void (*fn)(void *arg), void *arg)
{
    s->cancel = fn;
    s->cancel_arg = arg;
}

/* The option behind a share the library refused (err.where), for the message. */
static const char *share_option(const char *where)
{
    static const char *const map[][2] = {
        { "dirs", "--allow-dir" },
        { "providers", "--providers" },
        { "max_cost_usd", "--max-cost" },
        { "depth", "AGENTRUN_DEPTH" },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(where, map[i][0]) == 0)
            return map[i][1];
    return where;
}

int ar_cli_session_share(struct ar_cli_session *s)
{
    if (s->share)
        return 0;
    struct ar_error err = AR_ERROR_INIT;
    s->share_opts.dirs = s->dirs;
    s->share_opts.n_dirs = s->n_dirs;
    if (ar_share_create(&s->share_opts, &s->share, &err) < 0) {
        if (err.code == AR_EUSAGE)
            return ar_cli_usage_error(s->cmd, "%s: %s", share_option(err.where), err.msg);
        return ar_cli_error_code(err.code, "%s", err.msg);
    }
    s->run.share = s->share;
    return 0;
}

int ar_cli_session_read(struct ar_cli_session *s, const char *what, const char *path,
                        struct ar_buf *out)
{
    int rc = ar_cli_session_share(s);
    if (rc)
        return rc;
    struct ar_error err = AR_ERROR_INIT;
    if (strcmp(path, "-") != 0 && ar_share_path(s->share, NULL, path, NULL, &err) < 0)
        return ar_cli_usage_error(s->cmd, "%s: %s", what, err.msg);
    if (ar_file_read(path, out, &err) < 0) {
        if (err.code == AR_ENOMEM)
            return ar_cli_out_of_memory();
        return ar_cli_usage_error(s->cmd, "%s: %s", what, err.msg);
    }
    return 0;
}

void ar_cli_session_finish(struct ar_cli_session *s)
{
    if (s->uv_on)
        ar_cli_session_end(s);
    ar_share_destroy(s->share);
    s->share = NULL;
    s->run.share = NULL;
}

int ar_cli_session_begin(struct ar_cli_session *s)
{
    int rc = ar_cli_session_share(s);
    if (rc)
        return rc;
    rc = uv_loop_init(&s->uv);
    if (rc < 0) {
        ar_cli_errorf("cannot create the event loop: %s", uv_strerror(rc));
        return AR_EXIT_PROVIDER;
    }
    s->uv_on = 1;
    for (int i = 0; i < AR_CLI_NSIGNALS; i++) {
        if ((rc = uv_signal_init(&s->uv, &s->sig[i])) < 0)
            goto fail;
        s->sig[i].data = s;
        s->n_sig = i + 1;
        if ((rc = uv_signal_start(&s->sig[i], on_signal, watched_signals[i])) < 0)
            goto fail;
        /* Watching must not keep the loop alive on its own. */
        uv_unref((uv_handle_t *)&s->sig[i]);
    }
    if (!s->run.progress) {
        s->run.progress = on_progress;
        s->run.progress_arg = s;
    }
    return 0;
fail:
    ar_cli_errorf("cannot watch signal %d: %s", watched_signals[s->n_sig ? s->n_sig - 1 : 0],
                  uv_strerror(rc));
    ar_cli_session_end(s);
    return AR_EXIT_PROVIDER;
}

static void on_run_done(struct ar_run *run, struct ar_result *res, void *arg)
{
    (void)run;
    *(struct ar_result **)arg = res;
    /* The session's one run has its result: no CLI is started after it, so the keeper may
     * end as soon as the last one is taken back, while the result is written, instead of
     * at exit with us waiting for it. */
    ar_end_children_on_exit(0);
}

static void cancel_run(void *arg)
{
    ar_run_cancel(arg);
}

int ar_cli_session_start_failed(const struct ar_error *err)
{
    /* Name what failed (a template's file and line) unless the message does. */
    if (err->where[0] && !strstr(err->msg, err->where))
        return ar_cli_error_code(err->code, "%s: %s", err->where, err->msg);
    return ar_cli_error_code(err->code, "%s", err->msg);
}

void ar_cli_session_wait(struct ar_cli_session *s, void (*cancel)(void *arg), void *arg)
{
    ar_cli_session_set_cancel(s, cancel, arg);
    ar_cli_session_status_start(s);
    uv_run(&s->uv, UV_RUN_DEFAULT);
    ar_cli_session_set_cancel(s, NULL, NULL);
    status_stop(s);
}

int ar_cli_session_run(struct ar_cli_session *s, const struct ar_run_options *o,
                       struct ar_result **out)
{
    struct ar_result *res = NULL;
    struct ar_run *run = NULL;
    struct ar_error err = AR_ERROR_INIT;
    *out = NULL;
    if (ar_run_start(&s->uv, o, on_run_done, &res, &run, &err) < 0)
        return ar_cli_session_start_failed(&err);
    ar_cli_session_wait(s, cancel_run, run);
    if (!res) {
        ar_cli_errorf("the run ended without a result");
        return AR_EXIT_PROVIDER;
    }
    *out = res;
    return 0;
}

void ar_cli_session_end(struct ar_cli_session *s)
{
    status_stop(s);
    if (!s->uv_on)
        return;
    for (int i = 0; i < s->n_sig; i++)
        uv_close((uv_handle_t *)&s->sig[i], NULL);
    s->n_sig = 0;
    /* The close callbacks (and the detach) run here; nothing else is left. */
    uv_run(&s->uv, UV_RUN_DEFAULT);
    if (uv_loop_close(&s->uv) != 0)
        ar_cli_warnf("internal: event loop closed with open handles");
    s->uv_on = 0;
    /* Every run is over: the share can go. */
    ar_share_destroy(s->share);
    s->share = NULL;
    s->run.share = NULL;
}

int ar_cli_session_exit_status(const struct ar_cli_session *s, int status)
{
    switch (s->signal) {
    case SIGINT:
        return AR_EXIT_SIGINT;
    case SIGTERM:
        return AR_EXIT_SIGTERM;
    case SIGHUP:
        return 129;
    default:
        return status;
    }
}

void ar_cli_print_json_event(json_t *o)
{
    struct ar_buf line;
    ar_buf_init(&line, AR_BUF_UNLIMITED);
    if (o && ar_json_dump_compact(o, &line) == 0) {
        fprintf(stderr, "%s\n", ar_buf_cstr(&line));
        fflush(stderr);
    }
    ar_buf_finish(&line);
    json_decref(o);
}

void ar_cli_session_summary(const struct ar_cli_session *s, const struct ar_cli_summary *sum)
{
    if (ar_cli_verbosity < 0)
        return;
    const struct ar_usage *u = &sum->usage;
    if (s->log_json) {
        char event[64];
        snprintf(event, sizeof(event), "%s_summary", s->cmd->name);
        json_t *o = json_pack(
            "{s:s,s:s,s:s?,s:s?,s:{s:I,s:I,s:I,s:I,s:I},s:o,s:s,s:I,s:I}", "level", "info", "event",
            event, "provider", sum->provider, "model", sum->model, "tokens", "input",
            (json_int_t)u->input, "cache_read", (json_int_t)u->cache_read, "cache_write",
            (json_int_t)u->cache_write, "output", (json_int_t)u->output, "reasoning",
            (json_int_t)u->reasoning, "cost_usd",
            sum->cost_source == AR_COST_UNKNOWN ? json_null()
                                                : json_real(ar_cost_round(sum->cost_usd)),
            "cost_source", ar_cost_source_name(sum->cost_source), "duration_ms",
            (json_int_t)sum->duration_ms, "calls", (json_int_t)sum->calls);
        json_object_set_new(o, "from_cache", json_integer((json_int_t)sum->from_cache));
        ar_cli_print_json_event(o);
        return;
    }
    char cost[48];
    if (sum->cost_source == AR_COST_UNKNOWN)
        snprintf(cost, sizeof(cost), "cost unknown");
    else
        snprintf(cost, sizeof(cost), "$%.4f", sum->cost_usd);
    char tail[300] = "";
    if (sum->extra)
        snprintf(tail, sizeof(tail), ", %s", sum->extra);
    else
        snprintf(tail, sizeof(tail), ", %zu call%s", sum->calls, sum->calls == 1 ? "" : "s");
    /* A result-cache hit spent nothing now; "cached" tokens above are the prompt cache's. */
    if (sum->from_cache) {
        char was[48] = "cost unknown";
        if (sum->cached_cost_source != AR_COST_UNKNOWN)
            snprintf(was, sizeof(was), "$%.4f", sum->cached_cost_usd);
        snprintf(tail + strlen(tail), sizeof(tail) - strlen(tail),
                 "; %zu from the result cache (%s when made)", sum->from_cache, was);
    }
    /* run keeps its historical "agentrun: codex …" head; the others name themselves. */
    int named = strcmp(s->cmd->name, "run") != 0;
    /* The model's name is what the CLI reported: one line, whatever it holds. */
    struct ar_buf line;
    ar_buf_init(&line, AR_BUF_UNLIMITED);
    if (ar_buf_printf(
            &line,
            "agentrun%s%s: %s%s%s%s: %llu input + %llu cached + %llu output tokens, %s, %.1f s%s",
            named ? " " : "", named ? s->cmd->name : "", sum->provider ? sum->provider : "?",
            sum->model ? " (" : "", sum->model ? sum->model : "", sum->model ? ")" : "",
            (unsigned long long)u->input, (unsigned long long)(u->cache_read + u->cache_write),
            (unsigned long long)u->output, cost, (double)sum->duration_ms / 1000.0, tail) == 0 &&
        ar_cli_line_neutralize(&line, 0) == 0)
        fprintf(stderr, "%s\n", ar_buf_cstr(&line));
    ar_buf_finish(&line);
}

void ar_cli_session_summary_of(const struct ar_cli_session *s, const struct ar_result *r,
                               const char *extra)
{
    size_t ran = 0;
    for (size_t i = 0; r && i < r->n_calls; i++)
        ran += r->calls[i].exit_code >= 0;
    if (ran == 0)
        return;
    struct ar_cli_summary sum = {
        r->provider,          r->model,   r->usage, r->cost_usd, r->cost_source,
        r->duration_ms,       r->n_calls, extra,    r->n_cached, r->cached_cost_usd,
        r->cached_cost_source
    };
    ar_cli_session_summary(s, &sum);
}

int ar_cli_session_provider_named(const struct ar_cli_session *s)
{
    const char *p = s->run.provider;
    if (!p || !*p)
        p = getenv("AGENTRUN_PROVIDER");
    return p && *p && strcmp(p, "auto") != 0;
}

/* Whether a call of r ran (its CLI started, or the cache answered it). */
static int result_called(const struct ar_result *r)
{
    for (size_t i = 0; i < r->n_calls; i++)
        if (r->calls[i].exit_code >= 0)
            return 1;
    return r->n_cached > 0;
}

void ar_cli_print_result_error(const struct ar_cli_session *s, const struct ar_result *r)
{
    if (!r || !r->error.code)
        return;
    char hint[160];
    ar_cli_failure_hint(r->error.code, r->provider, result_called(r),
                        ar_cli_session_provider_named(s), hint, sizeof(hint));
    ar_cli_errorf("%s: %s%s", ar_strerror_name(r->error.code), r->error.msg, hint);
    size_t n = 0;
    while (r->error_details[n])
        n++;
    /* A single detail that repeats the message says nothing new. */
    if (n == 1 && strcmp(r->error_details[0], r->error.msg) == 0)
        n = 0;
    size_t show = ar_cli_verbosity > 0 ? n : (n > 20 ? 20 : n);
    for (size_t i = 0; i < show; i++) {
        fputs("  ", stderr);
        ar_cli_line_fputs(r->error_details[i], stderr); /* the model's values, quoted */
        fputc('\n', stderr);
    }
    if (show < n)
        fprintf(stderr, "  (%zu more; -v shows all)\n", n - show);
}
