/* The RunResult: its words, freeing it, and its JSON form (docs/run-result.md). */
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cost/cost.h"
#include "json/dump.h"
#include "result/result.h"
#include "util/buf.h"

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

void ar_result_destroy(struct ar_result *r)
{
    if (!r)
        return;
    free(r->provider);
    free(r->model);
    free(r->output);
    free(r->json);
    json_decref(r->value);
    free_strv(r->local_fixes);
    free(r->session_id);
    for (size_t i = 0; i < r->n_files; i++) {
        free(r->files[i].path);
        free(r->files[i].from);
        free(r->files[i].content);
    }
    free(r->files);
    for (size_t i = 0; i < r->n_calls; i++) {
        struct ar_call_record *c = &r->calls[i];
        free(c->kind);
        free(c->provider);
        free_strv(c->argv);
        free(c->stderr_tail);
        free(c->error);
    }
    free(r->calls);
    free_strv(r->error_details);
    for (size_t i = 0; i < r->n_denied; i++) {
        free(r->denied[i].tool);
        free(r->denied[i].target);
    }
    free(r->denied);
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

static json_t *cost_value(double usd, enum ar_cost_source src)
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

static json_t *calls_value(const struct ar_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_calls; i++) {
        const struct ar_call_record *c = &r->calls[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(c->kind ? c->kind : "main"));
        json_object_set_new(o, "provider", str_or_null(c->provider));
        json_object_set_new(o, "argv", strv_value(c->argv));
        json_object_set_new(o, "posture", posture_value(&c->posture));
        json_object_set_new(o, "exit_code", json_integer(c->exit_code));
        json_object_set_new(o, "signal", c->signal ? json_integer(c->signal) : json_null());
        json_object_set_new(o, "duration_ms", json_integer((json_int_t)c->duration_ms));
        json_object_set_new(o, "tokens", usage_value(&c->usage));
        json_object_set_new(o, "cost_usd", cost_value(c->cost_usd, c->cost_source));
        json_object_set_new(o, "cost_source", json_string(ar_cost_source_name(c->cost_source)));
        json_object_set_new(o, "cached", json_boolean(c->cached));
        json_object_set_new(o, "timed_out", json_boolean(c->timed_out));
        json_object_set_new(o, "usage_cumulative", json_boolean(c->usage_cumulative));
        json_object_set_new(o, "stderr_tail", text_value(c->stderr_tail ? c->stderr_tail : ""));
        json_object_set_new(o, "error", str_or_null(c->error));
        json_object_set_new(o, "waited_ms", json_integer((json_int_t)c->waited_ms));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *ar_result_cached_from(const struct ar_result *r)
{
    return json_pack("{s:o,s:o,s:s,s:I}", "tokens", usage_value(&r->cached_usage), "cost_usd",
                     cost_value(r->cached_cost_usd, r->cached_cost_source), "cost_source",
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
    json_object_set_new(o, "tokens", usage_value(&r->usage));
    json_object_set_new(o, "cost_usd", cost_value(r->cost_usd, r->cost_source));
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
    json_object_set_new(o, "calls", calls_value(r));
    json_t *denied = json_array();
    for (size_t i = 0; i < r->n_denied; i++)
        json_array_append_new(denied, json_pack("{s:o,s:o}", "tool", text_value(r->denied[i].tool),
                                                "target", text_value(r->denied[i].target)));
    json_object_set_new(o, "denied", denied);
    if (r->error.code) {
        json_t *e = json_object();
        json_object_set_new(e, "code", json_string(ar_strerror_name(r->error.code)));
        json_object_set_new(e, "message", text_value(r->error.msg));
        json_object_set_new(e, "details", strv_value(r->error_details));
        if (r->retry_after_s >= 0)
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

struct ar_result *ar_result_new_failed(const char *provider, int code, const char *msg)
{
    struct ar_result *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->provider = provider ? strdup(provider) : NULL;
    r->local_fixes = calloc(1, sizeof(char *));
    r->error_details = calloc(1, sizeof(char *));
    r->exit_code = -1;
    r->retry_after_s = -1;
    ar_error_set(&r->error, code, NULL, "%s", msg ? msg : ar_strerror(code));
    if (!r->local_fixes || !r->error_details) {
        ar_result_destroy(r);
        return NULL;
    }
    return r;
}

const char *ar_version(void)
{
    return AR_VERSION;
}
