/*
 * The public route (agentrun/route.h): the manifest and the local tiers before
 * ar_route_start() returns, the model's call (when they found nothing) through
 * ar_run_start() on the caller's loop, its answer checked against the manifest,
 * and the result as C structs; ar_route() on a private loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/share.h"
#include "proc/proc.h"
#include "result/result.h"
#include "json/extract.h"
#include "route/route.h"
#include "run/start.h"
#include "util/buf.h"

#define ROUTE_SCHEMA "agentrun.route/1"

struct ar_route_run {
    struct ar_manifest m;
    struct ar_route r;
    struct ar_buf rendered;      /* the manifest as the model sees it */
    struct ar_route_result *res; /* being built; handed to done */
    struct ar_loop *loop;        /* attached only to answer from the local tiers */
    struct ar_run *run;          /* the model's call, until its done */
    ar_route_done_fn *done;
    void *arg;
    uint64_t t0;
};

void ar_route_options_init(struct ar_route_options *o)
{
    memset(o, 0, sizeof(*o));
    ar_run_options_init(&o->run);
    o->min_score = AR_ROUTE_DEFAULT_MIN_SCORE;
}

void ar_route_result_destroy(struct ar_route_result *res)
{
    if (!res)
        return;
    free(res->query);
    for (size_t i = 0; i < res->n_matches; i++) {
        free(res->matches[i].name);
        free(res->matches[i].reasoning);
    }
    free(res->matches);
    free(res->error);
    for (size_t i = 0; i < res->n_notes; i++)
        free(res->notes[i]);
    free(res->notes);
    ar_result_destroy(res->run);
    free(res);
}

static void rt_free(struct ar_route_run *rt)
{
    ar_route_result_destroy(rt->res);
    ar_route_finish(&rt->r);
    ar_manifest_finish(&rt->m);
    ar_buf_finish(&rt->rendered);
    free(rt);
}

/* Moves the tiers' outcome into the result and hands it over. */
static void deliver(struct ar_route_run *rt)
{
    struct ar_route_result *res = rt->res;
    struct ar_route *r = &rt->r;
    if (!res->failed) {
        res->kind = r->kind;
        res->matches = r->matches;
        res->n_matches = r->n;
        res->fallback = r->fallback;
        res->error = r->error;
        r->matches = NULL;
        r->n = r->cap = 0;
        r->error = NULL;
    }
    res->notes = r->notes.v;
    res->n_notes = r->notes.n;
    ar_strv_init(&r->notes);
    if (!res->failed)
        res->exit_status = res->kind == AR_ROUTE_EXACT || res->kind == AR_ROUTE_KEYWORD ||
                                   res->kind == AR_ROUTE_DISCOVERY
                               ? AR_EXIT_OK
                               : AR_EXIT_OUTPUT;
    res->duration_ms = ar_now_ms() - rt->t0;
    rt->res = NULL;
    rt->done(rt, res, rt->arg);
    rt_free(rt);
}

/* The call failed for good (not a format problem): the route is an error. */
static int fail(struct ar_route_run *rt, int code, const char *msg, int exit_status)
{
    struct ar_route_result *res = rt->res;
    res->failed = 1;
    res->kind = AR_ROUTE_ERROR;
    res->exit_status = exit_status;
    res->error = strdup(msg && *msg ? msg : ar_strerror(code));
    return res->error ? 0 : AR_ENOMEM;
}

/*
 * Every answer counts (issue 57 #3): a reply can hold more than one route answer (a
 * draft, then the final one). Each value of the reply that passes the answer's checks
 * (ar_route_validate()) counts: their matches are one list, each task or skill once at
 * the highest confidence any answer gave it, so no answer's match is dropped, and a
 * note says the reply held several.
 */
struct route_answers {
    json_t *matches; /* every answer's matches, in order */
    size_t n;        /* the answers */
    int nomem;
};

static void count_message(void *sink, const char *msg)
{
    (void)msg;
    ++*(size_t *)sink;
}

static int each_answer(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                       void *arg)
{
    struct route_answers *a = arg;
    (void)start, (void)end, (void)fixes;
    size_t bad = 0;
    ar_route_validate(NULL, doc->value, count_message, &bad);
    if (bad)
        return 0;
    a->n++;
    if (json_is_object(doc->value))
        return json_array_append(a->matches, doc->value) ? (a->nomem = 1) : 0;
    return json_array_extend(a->matches, doc->value) ? (a->nomem = 1) : 0;
}

/* The matches of every answer, each (type, name) once at its highest confidence: a new
 * array, or NULL when out of memory. */
static json_t *merged_matches(json_t *all)
{
    json_t *out = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(all, i, m)
    {
        const char *t = json_string_value(json_object_get(m, "type"));
        const char *name = json_string_value(json_object_get(m, "name"));
        double c = json_number_value(json_object_get(m, "confidence"));
        size_t k;
        json_t *seen = NULL, *o;
        json_array_foreach(out, k, o)
        {
            if (t && name && strcmp(t, json_string_value(json_object_get(o, "type"))) == 0 &&
                strcmp(name, json_string_value(json_object_get(o, "name"))) == 0) {
                seen = o;
                break;
            }
        }
        if (!seen) {
            if (!out || json_array_append(out, m))
                return json_decref(out), NULL;
        } else if (c > json_number_value(json_object_get(seen, "confidence"))) {
            if (json_array_set(out, k, m))
                return json_decref(out), NULL;
        }
    }
    return out;
}

/* 1 when the run's answer left other values of its text out (extra_values). */
static int left_values_out(const struct ar_result *out)
{
    for (size_t i = 0; i < out->n_fix_details; i++)
        if (out->fix_details[i].fix && strcmp(out->fix_details[i].fix, "extra_values") == 0)
            return 1;
    return 0;
}

/* The route from every answer of the reply (at least the run's own). */
static int from_every_answer(struct ar_route_run *rt, const struct ar_result *out)
{
    if (!out->output || !left_values_out(out))
        return ar_route_from_answer(&rt->m, out->value, NULL, &rt->r);
    struct route_answers a = { json_array(), 0, 0 };
    struct ar_extract_options xo = AR_EXTRACT_OPTIONS_INIT;
    xo.want = AR_JSON_ANY;
    xo.flags = AR_EXTRACT_REPAIR;
    int rc = a.matches ? ar_json_extract_all(out->output, strlen(out->output), &xo, each_answer, &a,
                                             NULL, NULL)
                       : AR_ENOMEM;
    if (a.nomem || rc == AR_ENOMEM) {
        json_decref(a.matches);
        return AR_ENOMEM;
    }
    if (a.n < 2) {
        json_decref(a.matches);
        return ar_route_from_answer(&rt->m, out->value, NULL, &rt->r);
    }
    json_t *merged = merged_matches(a.matches);
    json_decref(a.matches);
    if (!merged)
        return AR_ENOMEM;
    rc = ar_route_from_answer(&rt->m, merged, NULL, &rt->r);
    json_decref(merged);
    if (rc == 0 && ar_strv_pushf(&rt->r.notes,
                                 "the reply held %zu answers: every answer counts (their matches "
                                 "are merged, each task or skill once at its highest confidence)",
                                 a.n) < 0)
        rc = AR_ENOMEM;
    return rc;
}

static void on_run_done(struct ar_run *run, struct ar_result *out, void *arg)
{
    (void)run;
    struct ar_route_run *rt = arg;
    rt->run = NULL;
    rt->res->run = out;
    int malformed = out->error.code == AR_ENOJSON || out->error.code == AR_ECONTRACT;
    int rc;
    if (out->ok)
        rc = from_every_answer(rt, out);
    else if (malformed)
        /* A format problem that outlived the repair call is not worth failing a
         * workflow over: the first task is a usable default, flagged as a fallback. */
        rc = ar_route_from_answer(&rt->m, NULL, out->error.msg, &rt->r);
    else
        rc = fail(rt, out->error.code, out->error.msg, ar_result_exit_status(out));
    if (rc < 0)
        fail(rt, AR_ENOMEM, "out of memory", ar_error_exit_status(AR_ENOMEM));
    deliver(rt);
}

static void finish_local(void *arg)
{
    struct ar_route_run *rt = arg;
    ar_loop_detach(rt->loop);
    rt->loop = NULL;
    deliver(rt);
}

static int start_call(struct uv_loop_s *uv, struct ar_route_run *rt,
                      const struct ar_route_options *o, struct ar_error *err)
{
    if (ar_manifest_render(&rt->m, &rt->rendered) < 0)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    const struct ar_var vars[] = {
        { AR_ROUTE_VAR_QUERY, rt->res->query },
        { AR_ROUTE_VAR_MANIFEST, ar_buf_cstr(&rt->rendered) },
    };
    struct ar_run_options ro = o->run;
    ro.prompt = NULL;
    ro.schema = NULL;
    ro.template_name = AR_ROUTE_TEMPLATE;
    ro.vars = vars;
    ro.n_vars = 2;
    ro.expect = AR_EXPECT_ANY;
    ro.want_json = 0;
    ro.validate = ar_route_validate;
    ro.validate_arg = NULL;
    ro.allow_edits = 0;
    ro.tools = AR_TOOLS_NONE; /* a text call: the manifest is in the prompt (DESIGN §4b) */
    ro.no_session = 1;
    ro.resume = NULL;
    ro.track_files = AR_TRACK_FILES_NEVER; /* routing reads; nothing to attribute */
    ro.worktree = AR_WORKTREE_NEVER;
    ro.expect_changes = 0;
    return ar_run_start(uv, &ro, on_run_done, rt, &rt->run, err);
}

int ar_route_start(struct uv_loop_s *uv, const struct ar_route_options *o, ar_route_done_fn *done,
                   void *arg, struct ar_route_run **out, struct ar_error *err)
{
    AR_START_ARGS(ar_route_start, err, out, uv && o && done, "a loop, options and a done callback");
    if (!o->query || !o->query[strspn(o->query, " \t\r\n")])
        return ar_error_set(err, AR_EUSAGE, "query", "no query given");
    if (!(o->min_score >= 0 && o->min_score <= 1))
        return ar_error_set(err, AR_EUSAGE, "min_score", "min_score must be from 0 to 1");
    if (!o->manifest_path && !o->manifest)
        return ar_error_set(err, AR_EUSAGE, "manifest", "no manifest given");

    struct ar_route_run *rt = calloc(1, sizeof(*rt));
    if (!rt)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    ar_manifest_init(&rt->m);
    ar_route_init(&rt->r);
    ar_buf_init(&rt->rendered, AR_BUF_UNLIMITED);
    rt->done = done;
    rt->arg = arg;
    rt->t0 = ar_now_ms();
    int rc = 0;
    if (!(rt->res = calloc(1, sizeof(*rt->res))) || !(rt->res->query = strdup(o->query)))
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (!rc) {
        /* A manifest file as the share allows it (relative to run.cwd). */
        char *path = NULL;
        if (o->manifest_path)
            rc = ar_share_path(o->run.share, o->run.cwd, o->manifest_path, &path, err);
        if (!rc)
            rc = path ? ar_manifest_load(&rt->m, path, err)
                      : ar_manifest_parse(&rt->m, o->manifest, o->manifest_len, "manifest", err);
        free(path);
        /* The message names the file; where says it is the manifest (or the share's dirs). */
        if (rc == AR_EUSAGE && strcmp(err->where, "dirs") != 0)
            snprintf(err->where, sizeof(err->where), "manifest");
    }
    int found = rc ? 0 : ar_route_local(&rt->m, o->query, o->min_score, &rt->r);
    if (found < 0)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (!rc && !found && !o->no_model) {
        rc = start_call(uv, rt, o, err);
    } else if (!rc) {
        /* The local tiers answered: done still comes from the loop. */
        if (!(rt->loop = ar_loop_attach(uv, err)))
            rc = err->code ? err->code : AR_ENOMEM;
        else if (ar_loop_defer(rt->loop, finish_local, rt) != 0) {
            ar_loop_detach(rt->loop);
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
    }
    if (rc) {
        rt_free(rt);
        return rc;
    }
    if (out)
        *out = rt;
    return 0;
}

void ar_route_cancel(struct ar_route_run *rt)
{
    if (rt && rt->run)
        ar_run_cancel(rt->run);
}

AR_DEFINE_BLOCKING(ar_route, ar_route_start, struct ar_route_options, struct ar_route_run,
                   struct ar_route_result)

/* ---- the agentrun.route/1 document ------------------------------------------ */

static json_t *document(const struct ar_route_result *res)
{
    json_t *doc = json_object();
    json_t *matches = json_array();
    json_t *notes = json_array();
    json_t *rv = res->run ? ar_result_to_value(res->run) : NULL;
    if (!doc || !matches || !notes || (res->run && !rv)) {
        json_decref(doc);
        json_decref(matches);
        json_decref(notes);
        json_decref(rv);
        return NULL;
    }
    for (size_t i = 0; i < res->n_matches; i++) {
        const struct ar_route_match *m = &res->matches[i];
        json_array_append_new(
            matches, json_pack("{s:s,s:s,s:f,s:s}", "type", ar_route_type_name(m->type), "name",
                               m->name, "confidence", m->confidence, "reasoning", m->reasoning));
    }
    for (size_t i = 0; i < res->n_notes; i++)
        json_array_append_new(notes, json_string(res->notes[i]));
    json_object_set_new(doc, "schema", json_string(ROUTE_SCHEMA));
    json_object_set_new(doc, "query", res->query ? json_string(res->query) : json_null());
    json_object_set_new(doc, "route", json_string(ar_route_kind_name(res->kind)));
    json_object_set_new(doc, "matches", matches);
    json_object_set_new(doc, "fallback", json_boolean(res->fallback));
    json_object_set_new(doc, "error", res->error ? json_string(res->error) : json_null());
    json_object_set_new(doc, "notes", notes);
    if (rv) {
        static const char *const run_keys[] = { "provider", "model",       "tokens",
                                                "cost_usd", "cost_source", "calls" };
        for (size_t i = 0; i < sizeof(run_keys) / sizeof(run_keys[0]); i++) {
            json_t *v = json_object_get(rv, run_keys[i]);
            json_object_set(doc, run_keys[i], v ? v : json_null());
        }
        json_decref(rv);
    } else {
        /* No call was made: nothing was spent, which is known, not unknown. */
        json_object_set_new(doc, "provider", json_null());
        json_object_set_new(doc, "model", json_null());
        json_object_set_new(doc, "tokens",
                            json_pack("{s:i,s:i,s:i,s:i,s:i}", "input", 0, "cache_read", 0,
                                      "cache_write", 0, "output", 0, "reasoning", 0));
        json_object_set_new(doc, "cost_usd", json_real(0));
        json_object_set_new(doc, "cost_source", json_string("none"));
        json_object_set_new(doc, "calls", json_array());
    }
    json_object_set_new(doc, "duration_ms", json_integer((json_int_t)res->duration_ms));
    return doc;
}

char *ar_route_result_to_json(const struct ar_route_result *res, int pretty)
{
    json_t *doc = res ? document(res) : NULL;
    char *text = doc ? json_dumps(doc, (pretty ? JSON_INDENT(2) : JSON_COMPACT) |
                                           JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
                     : NULL;
    json_decref(doc);
    return text;
}
