/*
 * The public prioritize (agentrun/prioritize.h): the PRDs read before
 * ar_prioritize_start() returns, the model's call through ar_run_start() on
 * the caller's loop with the ranking's checks as its validate hook, and the
 * ranking as C structs; ar_prioritize() on a private loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/share.h"
#include "json/extract.h"
#include "prioritize/prioritize.h"
#include "proc/proc.h"
#include "result/result.h"
#include "run/start.h"
#include "util/buf.h"

#define PRIORITIZE_SCHEMA "agentrun.prioritize/1"

/* The result and what its JSON document needs besides: the ranked value. */
struct result {
    struct ar_prioritize_result pub;
    json_t *value; /* the ranking's value, in the model's key order, or NULL */
};

struct ar_prioritize_run {
    struct ar_prd_set set;
    struct ar_prd_info *infos;
    struct ar_prioritize_input input;
    struct ar_buf prds; /* the PRDs as the model sees them */
    char *context;
    size_t top;
    struct result *res; /* being built; handed to done */
    struct ar_run *run; /* the model's call, until its done */
    ar_prioritize_done_fn *done;
    void *arg;
};

void ar_prioritize_options_init(struct ar_prioritize_options *o)
{
    memset(o, 0, sizeof(*o));
    ar_run_options_init(&o->run);
    o->max_prd_bytes = AR_PRD_DEFAULT_MAX_BYTES;
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void ar_prioritize_result_destroy(struct ar_prioritize_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->n_recommendations; i++) {
        struct ar_recommendation *r = &res->recommendations[i];
        free(r->prd_id);
        free(r->rationale);
        free(r->effort);
        free_strs(r->depends_on, r->n_depends_on);
    }
    free(res->recommendations);
    free(res->summary);
    free_strs(res->unranked, res->n_unranked);
    ar_result_destroy(res->run);
    free(res->error);
    struct result *full = (struct result *)res;
    json_decref(full->value);
    free(full);
}

static void pr_free(struct ar_prioritize_run *pr)
{
    ar_prioritize_result_destroy(pr->res ? &pr->res->pub : NULL);
    free(pr->infos);
    free(pr->context);
    ar_buf_finish(&pr->prds);
    ar_prd_set_finish(&pr->set);
    free(pr);
}

static char *dup_str(json_t *v)
{
    const char *s = json_string_value(v);
    return s ? strdup(s) : NULL;
}

/* The ranking's recommendations as C structs. Returns 0 or AR_ENOMEM. */
static int take_ranking(struct result *res, struct ar_ranking *rk)
{
    struct ar_prioritize_result *p = &res->pub;
    json_t *recs = json_object_get(rk->value, "recommendations");
    size_t n = json_array_size(recs);
    p->total = rk->total;
    p->recommendations = calloc(n ? n : 1, sizeof(*p->recommendations));
    if (!p->recommendations)
        return AR_ENOMEM;
    for (size_t i = 0; i < n; i++, p->n_recommendations++) {
        json_t *rec = json_array_get(recs, i);
        struct ar_recommendation *r = &p->recommendations[i];
        json_t *pri = json_object_get(rec, "priority");
        /* JSON has one number type: the contract accepts 2.0 as the integer 2. */
        r->priority =
            json_is_real(pri) ? (int64_t)json_real_value(pri) : (int64_t)json_integer_value(pri);
        json_t *deps = json_object_get(rec, "depends_on");
        size_t nd = json_array_size(deps);
        if (!(r->prd_id = dup_str(json_object_get(rec, "prd_id"))) ||
            !(r->rationale = dup_str(json_object_get(rec, "rationale"))) ||
            (json_is_string(json_object_get(rec, "effort")) &&
             !(r->effort = dup_str(json_object_get(rec, "effort")))) ||
            !(r->depends_on = calloc(nd ? nd : 1, sizeof(char *)))) {
            p->n_recommendations++;
            return AR_ENOMEM;
        }
        for (size_t k = 0; k < nd; k++) {
            json_t *d = json_array_get(deps, k);
            if (!json_is_string(d))
                continue;
            if (!(r->depends_on[r->n_depends_on] = dup_str(d))) {
                p->n_recommendations++;
                return AR_ENOMEM;
            }
            r->n_depends_on++;
        }
    }
    json_t *summary = json_object_get(rk->value, "summary");
    if (json_is_string(summary) && !(p->summary = dup_str(summary)))
        return AR_ENOMEM;
    p->unranked = rk->unranked.v;
    p->n_unranked = rk->unranked.n;
    ar_strv_init(&rk->unranked);
    res->value = json_incref(rk->value);
    return 0;
}

/*
 * Every answer counts (issue 57 #3): a reply can hold more than one ranking (a draft,
 * then the final one). Each value of the reply that passes the ranking's checks is an
 * answer; rankings that order the PRDs alike are one answer said twice, but rankings
 * that disagree have no strictest one to keep: agentrun cannot tell which the model
 * meant, and says so rather than take the first.
 */
struct rankings {
    const struct ar_prd_set *set;
    struct ar_strv orders; /* per answer: its prd_ids by priority, joined by ", " */
    int nomem;
};

/* The prd_ids of value's ranking by priority (ar_ranking_build()'s order), joined. */
static int ranking_order(const struct ar_prd_set *set, json_t *value, char **out)
{
    struct ar_ranking rk;
    struct ar_error err = AR_ERROR_INIT;
    *out = NULL;
    int rc = ar_ranking_build(&rk, set, value, 0, &err);
    if (rc)
        return rc;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    json_t *recs = json_object_get(rk.value, "recommendations");
    for (size_t i = 0; !rc && i < json_array_size(recs); i++) {
        const char *id = json_string_value(json_object_get(json_array_get(recs, i), "prd_id"));
        rc = ar_buf_printf(&b, "%s%s", i ? ", " : "", id ? id : "?");
    }
    ar_ranking_finish(&rk);
    if (!rc && !(*out = ar_buf_detach(&b, NULL)))
        rc = AR_ENOMEM;
    ar_buf_finish(&b);
    return rc;
}

static int each_ranking(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                        void *arg)
{
    struct rankings *r = arg;
    (void)start, (void)end, (void)fixes;
    struct ar_strv msgs = AR_STRV_INIT;
    int rc = ar_prioritize_check(r->set, doc->value, &msgs);
    int fits = rc == 0 && msgs.n == 0;
    ar_strv_finish(&msgs);
    char *order = NULL;
    if (fits && (ranking_order(r->set, doc->value, &order) == AR_ENOMEM ||
                 (order && ar_strv_push_take(&r->orders, order) != 0)))
        return r->nomem = 1;
    return 0;
}

/* 1 when the run's answer left other values of its text out (extra_values). */
static int left_values_out(const struct ar_result *out)
{
    for (size_t i = 0; i < out->n_fix_details; i++)
        if (out->fix_details[i].fix && strcmp(out->fix_details[i].fix, "extra_values") == 0)
            return 1;
    return 0;
}

/* Reads every ranking of the reply: 0 (res->answers set), AR_ECONTRACT when they disagree
 * (err says how), or AR_ENOMEM. */
static int every_ranking(const struct ar_prd_set *set, const struct ar_result *out,
                         struct result *res, struct ar_error *err)
{
    res->pub.answers = 1;
    if (!out->output || !left_values_out(out))
        return 0;
    struct rankings r = { set, AR_STRV_INIT, 0 };
    struct ar_extract_options xo = AR_EXTRACT_OPTIONS_INIT;
    xo.flags = AR_EXTRACT_REPAIR;
    int rc =
        ar_json_extract_all(out->output, strlen(out->output), &xo, each_ranking, &r, NULL, NULL);
    rc = r.nomem || rc == AR_ENOMEM ? AR_ENOMEM : 0;
    if (!rc && r.orders.n > 1) {
        res->pub.answers = r.orders.n;
        size_t k = 1;
        while (k < r.orders.n && strcmp(r.orders.v[k], r.orders.v[0]) == 0)
            k++;
        if (k < r.orders.n)
            rc = ar_error_set(err, AR_ECONTRACT, "answers",
                              "the reply held %zu rankings that disagree (answer 1 ranks %.300s; "
                              "answer %zu ranks %.300s): agentrun cannot tell which one the "
                              "model meant",
                              r.orders.n, r.orders.v[0], k + 1, r.orders.v[k]);
    }
    ar_strv_finish(&r.orders);
    if (rc == AR_ENOMEM)
        ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    return rc;
}

static void on_run_done(struct ar_run *run, struct ar_result *out, void *arg)
{
    (void)run;
    struct ar_prioritize_run *pr = arg;
    struct result *res = pr->res;
    res->pub.run = out;
    res->pub.exit_status = ar_result_exit_status(out);
    if (out->ok && out->value) {
        struct ar_error aerr = AR_ERROR_INIT;
        int arc = every_ranking(&pr->set, out, res, &aerr);
        if (arc) {
            res->pub.error = strdup(aerr.msg);
            res->pub.exit_status = arc == AR_ENOMEM ? ar_error_exit_status(arc) : AR_EXIT_OUTPUT;
            pr->run = NULL;
            pr->res = NULL;
            pr->done(pr, &res->pub, pr->arg);
            pr_free(pr);
            return;
        }
        struct ar_ranking rk;
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_ranking_build(&rk, &pr->set, out->value, pr->top, &err);
        if (rc == 0) {
            rc = take_ranking(res, &rk);
            ar_ranking_finish(&rk);
            if (rc < 0)
                ar_error_set(&err, AR_ENOMEM, NULL, "out of memory");
        }
        if (rc == 0) {
            res->pub.ranked = 1;
        } else {
            /* A contract failure past the check is a usable-output failure (3). */
            res->pub.error = strdup(err.msg);
            res->pub.exit_status = rc == AR_ENOMEM ? ar_error_exit_status(rc) : AR_EXIT_OUTPUT;
        }
    }
    pr->run = NULL;
    pr->res = NULL;
    pr->done(pr, &res->pub, pr->arg);
    pr_free(pr);
}

int ar_prioritize_start(struct uv_loop_s *uv, const struct ar_prioritize_options *o,
                        ar_prioritize_done_fn *done, void *arg, struct ar_prioritize_run **out,
                        struct ar_error *err)
{
    AR_START_ARGS(ar_prioritize_start, err, out, uv && o && done,
                  "a loop, options and a done callback");
    if (!o->dir)
        return ar_error_set(err, AR_EUSAGE, "dir", "no PRD directory given");
    struct ar_prioritize_run *pr = calloc(1, sizeof(*pr));
    if (!pr)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    ar_prd_set_init(&pr->set);
    ar_buf_init(&pr->prds, AR_BUF_UNLIMITED);
    pr->done = done;
    pr->arg = arg;
    pr->top = o->top;
    const struct ar_prd_read_opts ro = { o->recursive, o->max_prd_bytes };
    int rc = (pr->res = calloc(1, sizeof(*pr->res))) ? 0 : AR_ENOMEM;
    char *dir = NULL;
    if (rc)
        ar_error_set(err, rc, NULL, "out of memory");
    else
        /* The folder as the share allows it (relative to run.cwd; its files are opened
         * beneath it, never through a link out of it). */
        rc = ar_share_path(o->run.share, o->run.cwd, o->dir, &dir, err);
    if (!rc)
        rc = ar_prd_set_read(&pr->set, dir, &ro, err);
    free(dir);
    /* The message names the file; where says it is the input (or the share's dirs). */
    if (rc && rc != AR_ENOMEM && strcmp(err->where, "dirs") != 0)
        snprintf(err->where, sizeof(err->where), "dir");
    if (!rc && o->context && !(pr->context = strdup(o->context)))
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (!rc && !(pr->infos = calloc(pr->set.n ? pr->set.n : 1, sizeof(*pr->infos))))
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (!rc && ar_prd_set_render(&pr->set, &pr->prds) < 0)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (rc) {
        pr_free(pr);
        return rc;
    }
    for (size_t i = 0; i < pr->set.n; i++) {
        const struct ar_prd *d = &pr->set.v[i];
        pr->infos[i] = (struct ar_prd_info){ .id = d->id,
                                             .path = d->path,
                                             .size = d->size,
                                             .shown = d->shown,
                                             .truncated = d->truncated,
                                             .invalid = d->invalid };
    }
    pr->input =
        (struct ar_prioritize_input){ pr->infos, pr->set.n, (const char *const *)pr->set.warnings.v,
                                      pr->set.warnings.n };

    /* The template shows its context section only when the variable is set. */
    const struct ar_var vars[] = {
        { AR_PRIORITIZE_VAR_PRDS, ar_buf_cstr(&pr->prds) },
        { AR_PRIORITIZE_VAR_CONTEXT, pr->context },
    };
    struct ar_run_options c = o->run;
    c.prompt = NULL;
    c.schema = NULL;
    c.template_name = AR_PRIORITIZE_TEMPLATE;
    c.vars = vars;
    c.n_vars = pr->context ? 2 : 1;
    c.expect = AR_EXPECT_OBJECT;
    c.want_json = 0;
    c.validate = ar_prioritize_validate;
    c.validate_arg = &pr->set;
    c.allow_edits = 0;
    c.tools = AR_TOOLS_NONE; /* a text call: the documents are in the prompt (DESIGN §4b) */
    c.no_session = 1;
    c.resume = NULL;
    c.track_files = AR_TRACK_FILES_NEVER; /* ranking reads; the snapshots would only cost time */
    c.worktree = AR_WORKTREE_NEVER;
    c.expect_changes = 0;
    rc = ar_run_start(uv, &c, on_run_done, pr, &pr->run, err);
    if (rc < 0) {
        pr_free(pr);
        return rc;
    }
    if (out)
        *out = pr;
    return 0;
}

const struct ar_prioritize_input *ar_prioritize_input(const struct ar_prioritize_run *pr)
{
    return &pr->input;
}

void ar_prioritize_cancel(struct ar_prioritize_run *pr)
{
    if (pr && pr->run)
        ar_run_cancel(pr->run);
}

AR_DEFINE_BLOCKING(ar_prioritize, ar_prioritize_start, struct ar_prioritize_options,
                   struct ar_prioritize_run, struct ar_prioritize_result)

/* ---- the agentrun.prioritize/1 document ------------------------------------- */

char *ar_prioritize_result_to_json(const struct ar_prioritize_result *res, int pretty)
{
    if (!res)
        return NULL;
    const struct result *full = (const struct result *)res;
    json_t *doc = json_object();
    json_t *rv = res->run ? ar_result_to_value(res->run) : NULL;
    int rc = doc && (!res->run || rv) ? 0 : AR_ENOMEM;
    if (rc == 0) {
        json_object_set_new(doc, "schema", json_string(PRIORITIZE_SCHEMA));
        json_object_set_new(doc, "ok", json_boolean(res->ranked));
    }
    if (rc == 0 && res->ranked && full->value) {
        /* The validated object first, in the model's key order. */
        const char *key;
        json_t *v;
        json_object_foreach(full->value, key, v)
        {
            json_object_set(doc, key, v);
        }
        json_t *un = json_array();
        for (size_t i = 0; un && i < res->n_unranked; i++)
            json_array_append_new(un, json_string(res->unranked[i]));
        json_object_set_new(doc, "unranked", un ? un : json_null());
        json_object_set_new(doc, "total", json_integer((json_int_t)res->total));
        json_object_set_new(doc, "answers", json_integer((json_int_t)res->answers));
    }
    static const char *const run_keys[] = { "provider",    "model",    "repair",
                                            "tokens",      "cost_usd", "cost_source",
                                            "duration_ms", "calls",    "error" };
    for (size_t i = 0; rc == 0 && rv && i < sizeof(run_keys) / sizeof(run_keys[0]); i++) {
        json_t *v = json_object_get(rv, run_keys[i]);
        json_object_set(doc, run_keys[i], v ? v : json_null());
    }
    char *text = rc == 0 ? json_dumps(doc, (pretty ? JSON_INDENT(2) : JSON_COMPACT) |
                                               JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
                         : NULL;
    json_decref(rv);
    json_decref(doc);
    return text;
}
