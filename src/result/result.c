/* The RunResult: its words, freeing it, building it call by call, and its JSON form
 * (docs/run-result.md). */
#include <assert.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ar_config.h"
#include "cost/cost.h"
#include "git/git.h"
#include "json/doc.h"
#include "util/json_dump.h"
#include "json/extract.h"
#include "json/repair.h"
#include "result/result.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/strv.h"

const char *ar_repair_kind_name(enum ar_repair_kind k)
{
    static const char *const names[] = { "none", "local", "model" };
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "none";
}

const char *ar_cost_source_name(enum ar_cost_source s)
{
    switch (s) {
    case AR_COST_CLI:
        return "cli";
    case AR_COST_TABLE:
        return "price_table";
    case AR_COST_CACHE:
        return "cache";
    case AR_COST_UNKNOWN:
        break;
    }
    return "unknown";
}

static const char *const op_names[] = { "create", "modify", "delete", "rename" };
/* In enum ar_files_untracked's order. */
static const char *const untracked_names[] = { "not_run", "read_only", "disabled",
                                               "not_a_work_tree", "git_failed" };

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void worktree_free(struct ar_result_worktree *w)
{
    if (!w)
        return;
    free(w->path);
    free(w->branch);
    free(w->base);
    free(w->commit);
    free(w);
}

void ar_call_records_free(struct ar_call_record *calls, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct ar_call_record *c = &calls[i];
        free(c->kind);
        free(c->provider);
        free_strv(c->argv);
        free(c->stderr_tail);
        free(c->error);
        free(c->cli_version);
    }
    free(calls);
}

static char **strv_take_array(struct ar_strv *sv);

static char *dup_opt(const char *s)
{
    return s ? strdup(s) : NULL;
}

int ar_call_records_append(struct ar_call_record **calls, size_t *n,
                           const struct ar_call_record *from, size_t m)
{
    if (m == 0)
        return 0;
    struct ar_call_record *v = realloc(*calls, (*n + m) * sizeof(*v));
    if (!v)
        return AR_ENOMEM;
    *calls = v;
    for (size_t i = 0; i < m; i++) {
        const struct ar_call_record *f = &from[i];
        struct ar_call_record *c = &v[*n];
        *c = *f;
        c->kind = dup_opt(f->kind);
        c->provider = dup_opt(f->provider);
        c->stderr_tail = dup_opt(f->stderr_tail);
        c->error = dup_opt(f->error);
        c->cli_version = dup_opt(f->cli_version);
        struct ar_strv copy = AR_STRV_INIT;
        c->argv = f->argv && ar_strv_pushv(&copy, (const char *const *)f->argv) == 0
                      ? strv_take_array(&copy)
                      : NULL;
        ar_strv_finish(&copy);
        /* Counted even when a copy failed, so ar_call_records_free() frees the others. */
        (*n)++;
        if ((f->kind && !c->kind) || (f->provider && !c->provider) ||
            (f->stderr_tail && !c->stderr_tail) || (f->error && !c->error) ||
            (f->argv && !c->argv) || (f->cli_version && !c->cli_version))
            return AR_ENOMEM;
    }
    return 0;
}

static json_t *str_or_null(const char *s);

static void rate_limit_free(struct ar_rate_limit *rl)
{
    if (!rl)
        return;
    free(rl->status);
    free(rl->window);
    free(rl->source);
    free(rl);
}

/* A copy of rl, or NULL when out of memory. */
static struct ar_rate_limit *rate_limit_dup(const struct ar_rate_limit *rl)
{
    struct ar_rate_limit *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    *c = *rl;
    c->status = dup_opt(rl->status);
    c->window = dup_opt(rl->window);
    c->source = dup_opt(rl->source);
    if ((rl->status && !c->status) || (rl->window && !c->window) || (rl->source && !c->source)) {
        rate_limit_free(c);
        return NULL;
    }
    return c;
}

/* A Unix time as the RunResult writes times: "2026-11-29T09:00:00Z". New reference. */
static json_t *iso_time_value(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    char buf[32];
    if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
        return json_null();
    return json_string(buf);
}

/* The RunResult's "rate_limit" (docs/run-result.md). New reference. */
static json_t *rate_limit_value(const struct ar_rate_limit *rl)
{
    if (!rl)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "status", str_or_null(rl->status));
    json_object_set_new(o, "window", str_or_null(rl->window));
    json_object_set_new(o, "used_percent",
                        rl->used_percent >= 0 && isfinite(rl->used_percent)
                            ? json_real(rl->used_percent)
                            : json_null());
    json_object_set_new(o, "resets_at",
                        rl->resets_at > 0 ? iso_time_value(rl->resets_at) : json_null());
    json_object_set_new(o, "source", str_or_null(rl->source));
    return o;
}

void ar_result_destroy(struct ar_result *r)
{
    if (!r)
        return;
    worktree_free(r->worktree);
    free(r->provider);
    free(r->model);
    free(r->output);
    free(r->json);
    json_decref(r->value);
    free_strv(r->local_fixes);
    free(r->fix_details);
    free(r->session_id);
    for (size_t i = 0; i < r->n_files; i++) {
        free(r->files[i].path);
        free(r->files[i].from);
        free(r->files[i].content);
    }
    free(r->files);
    ar_call_records_free(r->calls, r->n_calls);
    free_strv(r->error_details);
    for (size_t i = 0; i < r->n_denied; i++) {
        free(r->denied[i].tool);
        free(r->denied[i].target);
    }
    free(r->denied);
    rate_limit_free(r->rate_limit);
    if (r->budget)
        free(r->budget->refused);
    free(r->budget);
    free(r);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *text_value(const char *s)
{
    return s ? ar_json_text(s, strlen(s)) : json_null();
}

static json_t *usage_value(const struct ar_usage *u)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I}", "input", (json_int_t)u->input, "cache_read",
                     (json_int_t)u->cache_read, "cache_write", (json_int_t)u->cache_write, "output",
                     (json_int_t)u->output, "reasoning", (json_int_t)u->reasoning);
}

json_t *ar_cost_value(double usd, enum ar_cost_source src)
{
    return src == AR_COST_UNKNOWN ? json_null() : json_real(ar_cost_round(usd));
}

static json_t *strv_value(char *const *v)
{
    json_t *a = json_array();
    for (size_t i = 0; v && v[i]; i++)
        json_array_append_new(a, text_value(v[i]));
    return a;
}

static json_t *files_value(const struct ar_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_files; i++) {
        const struct ar_file_change *f = &r->files[i];
        json_t *o = json_object();
        json_object_set_new(o, "path", text_value(f->path));
        json_object_set_new(o, "op", json_string(op_names[f->op]));
        json_object_set_new(o, "from", text_value(f->from));
        if (f->content) {
            json_object_set_new(o, "content",
                                f->base64 ? json_string(f->content)
                                          : json_stringn(f->content, f->content_len));
            json_object_set_new(o, "encoding", json_string(f->base64 ? "base64" : "utf-8"));
            json_object_set_new(o, "truncated", json_boolean(f->truncated));
        }
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *posture_value(const struct ar_posture *p)
{
    static const char *const tools[] = { "read", "none", "read", "edit" };
    json_t *o = json_object();
    json_object_set_new(o, "tools", json_string(tools[p->tools]));
    json_object_set_new(o, "project_config", json_boolean(p->project_config));
    json_object_set_new(o, "context_files", json_boolean(p->context_files));
    return o;
}

json_t *ar_call_records_value(const struct ar_call_record *calls, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct ar_call_record *c = &calls[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(c->kind ? c->kind : "main"));
        json_object_set_new(o, "provider", str_or_null(c->provider));
        json_object_set_new(o, "argv", strv_value(c->argv));
        json_object_set_new(o, "posture", posture_value(&c->posture));
        json_object_set_new(o, "exit_code", json_integer(c->exit_code));
        json_object_set_new(o, "signal", c->signal ? json_integer(c->signal) : json_null());
        json_object_set_new(o, "duration_ms", json_integer((json_int_t)c->duration_ms));
        json_object_set_new(o, "tokens", usage_value(&c->usage));
        json_object_set_new(o, "cost_usd", ar_cost_value(c->cost_usd, c->cost_source));
        json_object_set_new(o, "cost_source", json_string(ar_cost_source_name(c->cost_source)));
        json_object_set_new(o, "cached", json_boolean(c->cached));
        json_object_set_new(o, "timed_out", json_boolean(c->timed_out));
        json_object_set_new(o, "usage_cumulative", json_boolean(c->usage_cumulative));
        json_object_set_new(o, "stderr_tail", text_value(c->stderr_tail ? c->stderr_tail : ""));
        json_object_set_new(o, "error", str_or_null(c->error));
        json_object_set_new(o, "waited_ms", json_integer((json_int_t)c->waited_ms));
        json_object_set_new(o, "cli_version", str_or_null(c->cli_version));
        json_object_set_new(o, "unknown_events", json_integer((json_int_t)c->unknown_events));
        json_object_set_new(o, "budget_usd",
                            c->budget_usd > 0 ? json_real(c->budget_usd) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

json_t *ar_result_cached_from(const struct ar_result *r)
{
    return json_pack("{s:o,s:o,s:s,s:I}", "tokens", usage_value(&r->cached_usage), "cost_usd",
                     ar_cost_value(r->cached_cost_usd, r->cached_cost_source), "cost_source",
                     ar_cost_source_name(r->cached_cost_source), "calls", (json_int_t)r->n_cached);
}

json_t *ar_result_to_value(const struct ar_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("agentrun.run/1"));
    json_object_set_new(o, "ok", json_boolean(r->ok));
    json_object_set_new(o, "provider", str_or_null(r->provider));
    json_object_set_new(o, "model", text_value(r->model));
    json_object_set_new(o, "output", text_value(r->output));
    json_object_set_new(o, "json", r->value ? json_incref(r->value) : json_null());
    json_object_set_new(o, "repair", json_string(ar_repair_kind_name(r->repair)));
    json_object_set_new(o, "local_fixes", strv_value(r->local_fixes));
    json_t *details = json_array();
    for (size_t i = 0; i < r->n_fix_details; i++)
        json_array_append_new(details, json_pack("{s:s,s:I,s:I}", "fix", r->fix_details[i].fix,
                                                 "count", (json_int_t)r->fix_details[i].count,
                                                 "byte", (json_int_t)r->fix_details[i].byte));
    json_object_set_new(o, "fix_details", details);
    json_object_set_new(o, "tokens", usage_value(&r->usage));
    json_object_set_new(o, "cost_usd", ar_cost_value(r->cost_usd, r->cost_source));
    json_object_set_new(o, "cost_source", json_string(ar_cost_source_name(r->cost_source)));
    json_object_set_new(o, "cached", json_boolean(r->cached));
    json_object_set_new(o, "cached_from", r->n_cached ? ar_result_cached_from(r) : json_null());
    json_object_set_new(o, "session_id", text_value(r->session_id));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)r->duration_ms));
    json_object_set_new(o, "exit_code", json_integer(r->exit_code));
    json_object_set_new(o, "posture", posture_value(&r->posture));
    json_object_set_new(o, "files_tracked", json_boolean(r->files_tracked));
    json_object_set_new(o, "files_untracked_reason",
                        r->files_tracked ? json_null()
                                         : json_string(untracked_names[r->files_untracked]));
    json_object_set_new(o, "files", files_value(r));
    const struct ar_result_worktree *w = r->worktree;
    json_object_set_new(o, "worktree",
                        w ? json_pack("{s:o,s:b,s:o,s:o,s:o}", "path", text_value(w->path), "kept",
                                      w->kept, "branch", text_value(w->branch), "base",
                                      text_value(w->base), "commit", text_value(w->commit))
                          : json_null());
    json_object_set_new(o, "calls", ar_call_records_value(r->calls, r->n_calls));
    json_t *denied = json_array();
    for (size_t i = 0; i < r->n_denied; i++)
        json_array_append_new(denied, json_pack("{s:o,s:o}", "tool", text_value(r->denied[i].tool),
                                                "target", text_value(r->denied[i].target)));
    json_object_set_new(o, "denied", denied);
    json_object_set_new(o, "rate_limit", rate_limit_value(r->rate_limit));
    const struct ar_run_budget *b = r->budget;
    json_object_set_new(o, "budget",
                        b ? json_pack("{s:o,s:o,s:o}", "cap_usd",
                                      b->cap_usd > 0 ? json_real(b->cap_usd) : json_null(),
                                      "spent_usd", json_real(ar_cost_round(b->spent_usd)),
                                      "refused", text_value(b->refused))
                          : json_null());
    if (r->error.code) {
        json_t *e = json_object();
        json_object_set_new(e, "code", json_string(ar_strerror_name(r->error.code)));
        json_object_set_new(e, "message", text_value(r->error.msg));
        json_object_set_new(e, "details", strv_value(r->error_details));
        /* A wait past any clock (HUGE_VAL) has no JSON number: left out, as unsaid. */
        if (r->retry_after_s >= 0 && isfinite(r->retry_after_s))
            json_object_set_new(e, "retry_after_s", json_real(r->retry_after_s));
        json_object_set_new(o, "error", e);
    } else {
        json_object_set_new(o, "error", json_null());
    }
    return o;
}

char *ar_result_to_json(const struct ar_result *r, int pretty)
{
    json_t *v = ar_result_to_value(r);
    if (!v)
        return NULL;
    /* The "json" member is written from r->json, the model's value as it wrote
     * it (numbers of any size, -0, 1.50; NUL-bearing keys), not from the
     * jansson value, which cannot hold all of that. */
    struct ar_buf b, p;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_buf_init(&p, AR_BUF_UNLIMITED);
    char *s = NULL;
    if (ar_json_dump_compact_raw(v, r->value, r->json, &b) == 0) {
        if (!pretty)
            s = ar_buf_detach(&b, NULL);
        else if (ar_json_text_indent(b.data, b.len, 2, &p) == 0)
            s = ar_buf_detach(&p, NULL);
    }
    ar_buf_finish(&b);
    ar_buf_finish(&p);
    json_decref(v);
    return s;
}

int ar_result_exit_status(const struct ar_result *r)
{
    if (!r)
        return 4;
    return r->error.code ? ar_error_exit_status(r->error.code) : 0;
}

/* An empty result: no error, no call yet. NULL when out of memory. */
static struct ar_result *result_new(const char *provider)
{
    struct ar_result *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->provider = provider ? strdup(provider) : NULL;
    r->local_fixes = calloc(1, sizeof(char *));
    r->error_details = calloc(1, sizeof(char *));
    r->exit_code = -1;
    r->retry_after_s = -1;
    if ((provider && !r->provider) || !r->local_fixes || !r->error_details) {
        ar_result_destroy(r);
        return NULL;
    }
    return r;
}

struct ar_result *ar_result_new_failed(const char *provider, int code, const char *msg)
{
    struct ar_result *r = result_new(provider);
    if (r)
        ar_error_set(&r->error, code, NULL, "%s", msg ? msg : ar_strerror(code));
    return r;
}

const struct ar_result *ar_result_nomem(void)
{
    static char *none[] = { NULL };
    static const struct ar_result r = {
        .local_fixes = none,
        .exit_code = -1,
        .error = { AR_ENOMEM, 0, "", "out of memory" },
        .error_details = none,
        .retry_after_s = -1,
    };
    return &r;
}

/* ---- the draft -------------------------------------------------------------------- */

/* The result's file operations are git's, one for one (ar_result_draft_take_files() casts). */
_Static_assert((int)AR_FILE_CREATE == (int)AR_GIT_CREATE &&
                   (int)AR_FILE_MODIFY == (int)AR_GIT_MODIFY &&
                   (int)AR_FILE_DELETE == (int)AR_GIT_DELETE &&
                   (int)AR_FILE_RENAME == (int)AR_GIT_RENAME,
               "enum ar_file_op and enum ar_git_op must stay in step");

/* *dst becomes a copy of s; s NULL leaves it as it is. Returns 0 or AR_ENOMEM. */
static int replace_str(char **dst, const char *s)
{
    if (!s)
        return 0;
    char *copy = strdup(s);
    if (!copy)
        return AR_ENOMEM;
    free(*dst);
    *dst = copy;
    return 0;
}

/* The NULL-terminated array of sv's strings, which is left empty; NULL when out of memory. */
static char **strv_take_array(struct ar_strv *sv)
{
    char **v = sv->v;
    if (!v)
        v = calloc(1, sizeof(char *));
    else
        ar_strv_init(sv);
    return v;
}

int ar_result_draft_init(struct ar_result_draft *d, const char *provider,
                         const struct ar_posture *posture)
{
    memset(d, 0, sizeof(*d));
    d->res = result_new(provider);
    if (!d->res)
        return AR_ENOMEM;
    d->res->posture = *posture;
    return 0;
}

void ar_result_draft_finish(struct ar_result_draft *d)
{
    ar_result_destroy(d->res);
    memset(d, 0, sizeof(*d));
}

int ar_result_draft_switch_provider(struct ar_result_draft *d, const char *provider)
{
    struct ar_result *r = d->res;
    int rc = replace_str(&r->provider, provider);
    free(r->session_id);
    free(r->model);
    free(r->output);
    r->session_id = r->model = r->output = NULL;
    r->exit_code = -1;
    return rc;
}

struct ar_call_record *ar_result_draft_begin_call(struct ar_result_draft *d, const char *kind,
                                                  const char *provider, const char *const *argv,
                                                  uint64_t waited_ms,
                                                  const struct ar_posture *posture, int main_call)
{
    struct ar_result *r = d->res;
    struct ar_call_record *v = realloc(r->calls, (r->n_calls + 1) * sizeof(*v));
    if (!v)
        return NULL;
    r->calls = v;
    struct ar_call_record *c = &v[r->n_calls];
    memset(c, 0, sizeof(*c));
    struct ar_strv copy = AR_STRV_INIT;
    c->kind = strdup(kind);
    c->provider = strdup(provider);
    c->argv = ar_strv_pushv(&copy, argv) == 0 ? strv_take_array(&copy) : NULL;
    ar_strv_finish(&copy);
    c->exit_code = -1;
    c->waited_ms = waited_ms;
    c->posture = *posture;
    /* Counted even when a copy failed, so ar_result_destroy() frees the others. */
    r->n_calls++;
    if (!c->kind || !c->provider || !c->argv)
        return NULL;
    if (main_call)
        r->posture = *posture;
    return c;
}

/* Records a refused tool call of each (tool, target) pair. */
static int add_denials(struct ar_result *r, const struct ar_strv *pairs)
{
    size_t n = pairs ? pairs->n / 2 : 0;
    if (!n)
        return 0;
    struct ar_denial *v = realloc(r->denied, (r->n_denied + n) * sizeof(*v));
    if (!v)
        return AR_ENOMEM;
    r->denied = v;
    for (size_t i = 0; i < n; i++) {
        const char *target = pairs->v[2 * i + 1];
        struct ar_denial *dn = &v[r->n_denied++];
        dn->tool = strdup(pairs->v[2 * i]);
        dn->target = *target ? strdup(target) : NULL;
        if (!dn->tool || (*target && !dn->target))
            return AR_ENOMEM;
    }
    return 0;
}

int ar_result_draft_end_call(struct ar_result_draft *d, const struct ar_call_end *e)
{
    struct ar_result *r = d->res;
    assert(r->n_calls > 0);
    struct ar_call_record *c = &r->calls[r->n_calls - 1];
    struct ar_usage usage = e->usage;
    struct ar_cost cost = e->cost;
    if (e->cached) {
        /* A call served from the cache spent nothing now: its original usage and
         * cost are reported apart (cached_*), and it counts as zero. */
        c->cached = 1;
        ar_usage_add(&r->cached_usage, &usage);
        if (!r->n_cached++)
            d->cached_cost = cost;
        else
            ar_cost_add(&d->cached_cost, &cost);
        memset(&usage, 0, sizeof(usage));
        cost = (struct ar_cost){ 0, AR_COST_CACHE };
    }
    c->exit_code = e->exit_code;
    c->signal = e->signal;
    c->duration_ms = e->duration_ms;
    c->usage = usage;
    c->cost_usd = cost.usd;
    c->cost_source = cost.source;
    c->timed_out = e->timed_out;
    c->usage_cumulative = e->usage_cumulative;
    c->stderr_tail = strndup(e->stderr_tail ? e->stderr_tail : "", e->stderr_tail_len);
    ar_usage_add(&r->usage, &usage);
    if (!d->cost_started)
        d->cost = cost;
    else
        ar_cost_add(&d->cost, &cost);
    d->cost_started = 1;
    r->exit_code = e->exit_code;
    int rc = c->stderr_tail ? 0 : AR_ENOMEM;
    if (replace_str(&r->model, e->model))
        rc = AR_ENOMEM;
    if ((e->main_call || !r->session_id) && replace_str(&r->session_id, e->session_id))
        rc = AR_ENOMEM;
    free(r->output);
    r->output = e->text ? strdup(e->text) : NULL;
    if (e->text && !r->output)
        rc = AR_ENOMEM;
    if (add_denials(r, e->denied))
        rc = AR_ENOMEM;
    c->unknown_events = e->unknown_events;
    if (e->cli_version && !(c->cli_version = strdup(e->cli_version)))
        rc = AR_ENOMEM;
    /* The latest reading stands: a later call's quota replaces an earlier one's. */
    if (e->rate_limit) {
        struct ar_rate_limit *rl = rate_limit_dup(e->rate_limit);
        if (rl) {
            rate_limit_free(r->rate_limit);
            r->rate_limit = rl;
        } else {
            rc = AR_ENOMEM;
        }
    }
    return rc;
}

int ar_result_draft_fail_call(struct ar_result_draft *d, int code)
{
    struct ar_result *r = d->res;
    assert(r->n_calls > 0);
    struct ar_call_record *c = &r->calls[r->n_calls - 1];
    free(c->error);
    c->error = strdup(ar_strerror_name(code));
    return c->error ? 0 : AR_ENOMEM;
}

int ar_result_draft_fail(struct ar_result_draft *d, int code, const char *fmt, ...)
{
    struct ar_error *e = &d->res->error;
    *e = (struct ar_error)AR_ERROR_INIT;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return code;
}

void ar_result_draft_fail_with(struct ar_result_draft *d, const struct ar_error *err)
{
    d->res->error = *err;
}

void ar_result_draft_retry_after(struct ar_result_draft *d, double s)
{
    d->res->retry_after_s = s;
}

void ar_result_draft_clear_error(struct ar_result_draft *d)
{
    d->res->error = (struct ar_error)AR_ERROR_INIT;
    d->res->retry_after_s = -1;
}

void ar_result_draft_repairing(struct ar_result_draft *d)
{
    d->res->repair = AR_REPAIR_MODEL;
}

int ar_result_draft_accept(struct ar_result_draft *d, struct ar_json_doc *doc,
                           const struct ar_extract_fixes *fx, enum ar_repair_kind repair)
{
    unsigned fixes = fx->bits;
    struct ar_result *r = d->res;
    /* The model's bytes are the answer: the text as written, and its value. */
    json_decref(r->value);
    free(r->json);
    r->value = json_incref(doc->value);
    r->json = doc->text;
    doc->text = NULL;
    ar_json_doc_finish(doc);
    r->repair = repair;
    struct ar_strv names = AR_STRV_INIT;
    int rc = 0;
    for (unsigned bit = 1; rc == 0 && bit && bit <= fixes; bit <<= 1)
        if ((fixes & bit) && ar_json_fix_name(bit))
            rc = ar_strv_push(&names, ar_json_fix_name(bit));
    char **v = rc ? NULL : strv_take_array(&names);
    ar_strv_finish(&names);
    if (!v)
        return AR_ENOMEM;
    free_strv(r->local_fixes);
    r->local_fixes = v;
    free(r->fix_details);
    r->fix_details = NULL;
    r->n_fix_details = 0;
    const struct {
        unsigned bit;
        const struct ar_extract_note *note;
    } notes[] = { { AR_FIX_EXTRA_VALUES, &fx->extra },
                  { AR_FIX_MEMBERS_AFTER_CLOSE, &fx->members } };
    for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
        if (!(fixes & notes[i].bit))
            continue;
        struct ar_fix_detail *n =
            realloc(r->fix_details, (r->n_fix_details + 1) * sizeof(*r->fix_details));
        if (!n)
            return AR_ENOMEM;
        r->fix_details = n;
        n[r->n_fix_details++] = (struct ar_fix_detail){ .fix = ar_json_fix_name(notes[i].bit),
                                                        .count = notes[i].note->count,
                                                        .byte = notes[i].note->at };
    }
    return 0;
}

int ar_result_draft_take_details(struct ar_result_draft *d, struct ar_strv *details)
{
    char **v = strv_take_array(details);
    if (!v)
        return AR_ENOMEM;
    free_strv(d->res->error_details);
    d->res->error_details = v;
    return 0;
}

void ar_result_draft_untracked(struct ar_result_draft *d, enum ar_files_untracked why)
{
    d->res->files_untracked = why;
}

int ar_result_draft_take_files(struct ar_result_draft *d, struct ar_git_changes *ch,
                               int with_content)
{
    struct ar_result *r = d->res;
    r->files_tracked = 1;
    r->files = calloc(ch->n ? ch->n : 1, sizeof(*r->files));
    if (!r->files)
        return AR_ENOMEM;
    for (size_t i = 0; i < ch->n; i++) {
        struct ar_git_change *g = &ch->v[i];
        struct ar_file_change *f = &r->files[i];
        r->n_files = i + 1;
        f->path = strdup(g->path);
        f->from = g->from ? strdup(g->from) : NULL;
        f->op = (enum ar_file_op)g->op;
        if (!f->path || (g->from && !f->from))
            return AR_ENOMEM;
        if (!with_content || !g->has_content)
            continue;
        /* The text as it is when it is UTF-8 (git checked: no NUL either), else base64. */
        if (g->utf8) {
            f->content = g->content;
            f->content_len = g->content_len;
            g->content = NULL;
        } else {
            f->content = ar_base64_encode(g->content, g->content_len, &f->content_len);
            f->base64 = 1;
        }
        if (!f->content)
            return AR_ENOMEM;
        f->truncated = g->truncated;
    }
    return 0;
}

int ar_result_draft_worktree(struct ar_result_draft *d, const char *path, int kept,
                             const char *branch, const char *base, const char *commit)
{
    struct ar_result_worktree *w = calloc(1, sizeof(*w));
    if (!w)
        return AR_ENOMEM;
    w->kept = kept;
    int bad = !(w->path = strdup(path)) || !(w->base = strdup(base)) ||
              (branch && !(w->branch = strdup(branch))) ||
              (commit && !(w->commit = strdup(commit)));
    if (bad) {
        worktree_free(w);
        return AR_ENOMEM;
    }
    worktree_free(d->res->worktree);
    d->res->worktree = w;
    return 0;
}

int ar_result_draft_budget(struct ar_result_draft *d, double cap_usd, double spent_usd,
                           const char *refused)
{
    struct ar_result *r = d->res;
    if (!r->budget && !(r->budget = calloc(1, sizeof(*r->budget))))
        return AR_ENOMEM;
    r->budget->cap_usd = cap_usd;
    r->budget->spent_usd = spent_usd;
    free(r->budget->refused);
    r->budget->refused = refused ? strdup(refused) : NULL;
    return refused && !r->budget->refused ? AR_ENOMEM : 0;
}

struct ar_result *ar_result_draft_detach(struct ar_result_draft *d, uint64_t duration_ms)
{
    struct ar_result *r = d->res;
    r->duration_ms = duration_ms;
    r->ok = r->error.code == 0;
    r->cost_usd = d->cost.usd;
    r->cost_source = r->n_calls ? d->cost.source : AR_COST_UNKNOWN;
    r->cached = r->n_calls && r->n_cached == r->n_calls;
    r->cached_cost_usd = d->cached_cost.usd;
    r->cached_cost_source = r->n_cached ? d->cached_cost.source : AR_COST_UNKNOWN;
    d->res = NULL;
    return r;
}

const char *ar_version(void)
{
    return AR_VERSION;
}

unsigned ar_version_number(void)
{
    return AR_VERSION_NUMBER;
}
