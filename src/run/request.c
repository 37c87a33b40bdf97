/*
 * A run request as JSON (include/agentrun/request.h): one table of keys for every
 * door that takes one, and the rules between a run's options (ar_run_options_check()).
 *
 * A key's row says its type (how its value is read and what the generated schema
 * says), which doors take it, and its one-line meaning; the reading of a type is
 * written once (a non-empty string, a boolean, seconds, dollars), and a key that
 * means more than setting one option has a function of its own.
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/request.h"
#include "provider/provider.h"
#include "run/request.h"
#include "run/run.h"
#include "run/share.h"
#include "util/buf.h"
#include "util/suggest.h"
#include "util/strv.h"

#define B AR_REQUEST_BATCH
#define R AR_REQUEST_RUN
#define T AR_REQUEST_TOOL

enum type {
    STR,     /* a non-empty string: a const char * option */
    BOOL,    /* true or false: an int option (1 or 0) */
    SECONDS, /* seconds (>= 0): a uint64_t option in milliseconds */
    USD,     /* dollars (>= 0): a double option */
    SPECIAL, /* its own reader */
};

struct reader; /* what a key's own function reads into */
typedef int special_fn(struct reader *r, const char *key, json_t *v);

struct key {
    const char *name;
    enum type type;
    unsigned doors;
    size_t offset;       /* into struct ar_run_options, for STR, BOOL, SECONDS, USD */
    special_fn *read;    /* SPECIAL */
    const char *schema;  /* the JSON Schema of its value, less the description */
    const char *meaning; /* its description */
};

struct reader {
    struct ar_run_options *o;
    struct ar_strv *storage;
    struct ar_var **vars;
    struct ar_error *err;
    int files_set; /* track_files or no_files was given */
};

/* A copy of s kept with the request, or NULL when out of memory. */
static const char *keep(struct reader *r, const char *s, size_t n)
{
    char *c = strndup(s, n);
    if (!c || ar_strv_push_take(r->storage, c) < 0)
        return NULL;
    return c;
}

static int nomem(struct reader *r)
{
    return ar_error_set(r->err, AR_ENOMEM, NULL, "out of memory");
}

/* ---- the keys with a reader of their own ---- */

/* A scalar as the text of a template variable: a string as it is, a number or a
 * boolean as JSON writes it. */
static int read_vars(struct reader *r, const char *key, json_t *v)
{
    if (!json_is_object(v))
        return ar_error_set(r->err, AR_EUSAGE, key, "'vars' must be an object of strings");
    size_t n = json_object_size(v);
    struct ar_var *vars = calloc(n ? n : 1, sizeof(*vars));
    if (!vars)
        return nomem(r);
    free(*r->vars);
    *r->vars = vars;
    const char *k;
    json_t *x;
    size_t i = 0;
    json_object_foreach(v, k, x)
    {
        char *text = json_is_string(x) ? strndup(json_string_value(x), json_string_length(x))
                     : json_is_number(x) || json_is_boolean(x)
                         ? json_dumps(x, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15))
                         : NULL;
        if (!text && (json_is_string(x) || json_is_number(x) || json_is_boolean(x)))
            return nomem(r);
        if (!text)
            return ar_error_set(r->err, AR_EUSAGE, key,
                                "variable '%s' must be a string, number or boolean", k);
        if (ar_strv_push_take(r->storage, text) < 0)
            return nomem(r);
        vars[i].value = text;
        if (!(vars[i].name = keep(r, k, strlen(k))))
            return nomem(r);
        i++;
    }
    r->o->vars = vars;
    r->o->n_vars = n;
    return 0;
}

/* An object (the schema itself), a boolean schema, or the path of a schema file, read
 * within the share's directories. */
static int read_schema(struct reader *r, const char *key, json_t *v)
{
    if (json_is_object(v) || json_is_boolean(v)) {
        char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        if (!text || ar_strv_push_take(r->storage, text) < 0)
            return nomem(r);
        r->o->schema = text;
        return 0;
    }
    if (!json_is_string(v) || !json_string_length(v))
        return ar_error_set(r->err, AR_EUSAGE, key,
                            "'schema' must be an object or the path of a schema file");
    struct ar_buf b;
    ar_buf_init(&b, (size_t)1 << 20);
    int rc = ar_share_read_file(r->o->share, r->o->cwd, json_string_value(v), &b, r->err);
    if (rc) {
        ar_buf_finish(&b);
        snprintf(r->err->where, sizeof(r->err->where), "%s", key);
        return rc;
    }
    char *text = ar_buf_detach(&b, NULL);
    if (!text || ar_strv_push_take(r->storage, text) < 0)
        return nomem(r);
    r->o->schema = text;
    return 0;
}

/* "codex,gemini" or ["codex", "gemini"]: every name a provider. */
static int read_fallback(struct reader *r, const char *key, json_t *v)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (json_is_string(v)) {
        ar_buf_puts(&b, json_string_value(v));
    } else if (json_is_array(v)) {
        size_t i;
        json_t *p;
        json_array_foreach(v, i, p)
        {
            if (!json_is_string(p)) {
                ar_buf_finish(&b);
                return ar_error_set(r->err, AR_EUSAGE, key,
                                    "'fallback' must be a list of provider names");
            }
            ar_buf_printf(&b, "%s%s", i ? "," : "", json_string_value(p));
        }
    } else {
        return ar_error_set(r->err, AR_EUSAGE, key, "'fallback' must be a list of providers");
    }
    const char *list = keep(r, ar_buf_cstr(&b), b.len);
    ar_buf_finish(&b);
    if (!list)
        return nomem(r);
    if (ar_provider_check_list(list, r->err) < 0) {
        snprintf(r->err->where, sizeof(r->err->where), "%s", key);
        return AR_EUSAGE;
    }
    r->o->fallback = list;
    return 0;
}

static int read_provider(struct reader *r, const char *key, json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || !*s)
        return ar_error_set(r->err, AR_EUSAGE, key, "'%s' must be a non-empty string", key);
    if (strcmp(s, "auto") != 0 && !ar_provider_find(s)) {
        char msg[256];
        ar_provider_unknown_text(s, strlen(s), 1, msg, sizeof(msg));
        return ar_error_set(r->err, AR_EUSAGE, key, "%s", msg);
    }
    return (r->o->provider = keep(r, s, strlen(s))) ? 0 : nomem(r);
}

/* "object", "array" or "any": the kind of JSON value wanted, which asks for extraction. */
static int read_expect(struct reader *r, const char *key, json_t *v)
{
    static const char *const kinds[] = { "object", "array", "any" };
    const char *s = json_string_value(v);
    for (size_t i = 0; s && i < 3; i++)
        if (strcmp(s, kinds[i]) == 0) {
            r->o->expect = (enum ar_expect)i;
            r->o->want_json = 1;
            return 0;
        }
    return ar_error_set(r->err, AR_EUSAGE, key, "'expect' must be object, array or any%s%s%s",
                        s ? ", not '" : "", s ? s : "", s ? "'" : "");
}

static int read_bool(struct reader *r, const char *key, json_t *v, int *out)
{
    if (!json_is_boolean(v))
        return ar_error_set(r->err, AR_EUSAGE, key, "'%s' must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

/* The booleans that set more than one option, or an option's opposite. */
static int read_flag(struct reader *r, const char *key, json_t *v)
{
    int on = 0;
    int rc = read_bool(r, key, v, &on);
    if (rc)
        return rc;
    struct ar_run_options *o = r->o;
    if (!strcmp(key, "no_tools")) {
        if (on)
            o->tools = AR_TOOLS_NONE;
    } else if (!strcmp(key, "no_repair")) {
        o->model_repair = !on;
    } else if (!strcmp(key, "no_local_repair")) {
        o->local_repair = !on;
    } else if (!strcmp(key, "worktree")) {
        o->worktree = on ? AR_WORKTREE_ALWAYS : AR_WORKTREE_NEVER;
    } else {
        /* track_files (true: always, false: never) and no_files (true: never). */
        int always = !strcmp(key, "track_files") && on;
        if (r->files_set && (always ? o->track_files == AR_TRACK_FILES_NEVER
                                    : o->track_files == AR_TRACK_FILES_ALWAYS))
            return ar_error_set(r->err, AR_EUSAGE, key, "give one of 'track_files' and 'no_files'");
        r->files_set = 1;
        if (always)
            o->track_files = AR_TRACK_FILES_ALWAYS;
        else if (on || !strcmp(key, "track_files"))
            o->track_files = AR_TRACK_FILES_NEVER;
    }
    return 0;
}

/* The batch's job id: read by the batch itself (batch/job.c). */
static int read_nothing(struct reader *r, const char *key, json_t *v)
{
    (void)r;
    (void)key;
    (void)v;
    return 0;
}

#define OPT(field) offsetof(struct ar_run_options, field)
#define NESTR      "{\"type\":\"string\",\"minLength\":1"
#define BOOLEAN    "{\"type\":\"boolean\""
#define SECS       "{\"type\":\"number\",\"minimum\":0"

/* Sorted by name (a unit test checks): the one list of what a request may say. */
static const struct key keys[] = {
    { "allow_denied", BOOL, B | R, OPT(allow_denied), NULL, BOOLEAN,
      "a tool call the CLI refused does not fail the run" },
    { "allow_edits", BOOL, B | R, OPT(allow_edits), NULL, BOOLEAN,
      "let the agent edit files (only where edits are allowed)" },
    { "base", STR, B | R, OPT(worktree_base), NULL, NESTR,
      "the revision a worktree of its own starts from (with worktree)" },
    { "commit", BOOL, B | R, OPT(worktree_commit), NULL, BOOLEAN,
      "commit the run's changes on its worktree's branch (with worktree)" },
    { "cwd", STR, B | R | T, OPT(cwd), NULL, NESTR,
      "the directory to work in (within the allowed directories)" },
    { "expect", SPECIAL, B | R, 0, read_expect,
      "{\"type\":\"string\",\"enum\":[\"object\",\"array\",\"any\"]",
      "the kind of JSON value wanted (extracts JSON)" },
    { "expect_changes", BOOL, B | R, OPT(expect_changes), NULL, BOOLEAN,
      "no changed file fails the run (no_effect)" },
    { "fallback", SPECIAL, B | R | T, 0, read_fallback,
      "{\"type\":[\"string\",\"array\"],\"items\":{\"type\":\"string\"}",
      "providers tried in turn after not_found, auth, rate_limit or api_error "
      "(\"codex,gemini\")" },
    { "id", SPECIAL, B, 0, read_nothing, "{\"type\":[\"string\",\"integer\"]",
      "the job's id: its record carries it" },
    { "idle_timeout", SECONDS, B | R | T, OPT(idle_timeout_ms), NULL, SECS,
      "end a call silent this many seconds; 0: never" },
    { "json", BOOL, B | R, OPT(want_json), NULL, BOOLEAN,
      "extract a JSON value even without a schema" },
    { "keep_worktree", BOOL, B | R, OPT(keep_worktree), NULL, BOOLEAN,
      "leave the worktree in place (with worktree)" },
    { "max_cost", USD, B | R | T, OPT(max_cost_usd), NULL,
      "{\"type\":\"number\",\"exclusiveMinimum\":0",
      "USD the whole call may spend, every CLI call included (within the allowed cap)" },
    { "max_wait", SECONDS, B | R | T, OPT(max_wait_ms), NULL, SECS,
      "seconds to wait for a rate limit before the one retry; 0: never" },
    { "model", STR, B | R | T, OPT(model), NULL, NESTR, "the model to ask for" },
    { "no_files", SPECIAL, B | R, 0, read_flag, BOOLEAN, "take no git snapshots" },
    { "no_local_repair", SPECIAL, B | R, 0, read_flag, BOOLEAN, "no local repair of the answer" },
    { "no_repair", SPECIAL, B | R | T, 0, read_flag, BOOLEAN, "never make the repair call" },
    { "no_tools", SPECIAL, B | R, 0, read_flag, BOOLEAN, "a text call: no tools at all" },
    { "prompt", STR, B | R, OPT(prompt), NULL, NESTR, "the task for the agent" },
    { "provider", SPECIAL, B | R | T, 0, read_provider,
      "{\"type\":\"string\",\"enum\":[\"claude\",\"codex\",\"gemini\",\"auto\"]",
      "the CLI to run (default: the door's)" },
    { "resume", STR, B | R, OPT(resume), NULL, NESTR, "a session_id to continue" },
    { "schema", SPECIAL, B | R, 0, read_schema, "{\"type\":[\"object\",\"boolean\",\"string\"]",
      "a JSON Schema the answer must satisfy (or the path of a schema file)" },
    { "template", STR, B | R, OPT(template_name), NULL, NESTR,
      "a prompt template instead of prompt (agentrun prompts list)" },
    { "timeout", SECONDS, B | R | T, OPT(timeout_ms), NULL, SECS, "seconds per CLI call; 0: none" },
    { "track_files", SPECIAL, B | R, 0, read_flag, BOOLEAN,
      "git snapshots even without allow_edits (false: none)" },
    { "trust_project", BOOL, B, OPT(trust_project), NULL, BOOLEAN,
      "load the checkout's settings, hooks, MCP servers and context files" },
    { "vars", SPECIAL, B | R, 0, read_vars,
      "{\"type\":\"object\",\"additionalProperties\":{\"type\":[\"string\",\"number\","
      "\"boolean\"]}",
      "the template's variables" },
    { "with_content", BOOL, B | R, OPT(with_content), NULL, BOOLEAN,
      "the changed files' content in the result" },
    { "worktree", SPECIAL, B | R, 0, read_flag, BOOLEAN,
      "run in a git worktree of its own (edits only)" },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

const char *ar_run_request_key_name(size_t i)
{
    return i < N_KEYS ? keys[i].name : NULL;
}

static const struct key *find(const char *name, unsigned door)
{
    size_t lo = 0, hi = N_KEYS;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, keys[mid].name);
        if (!c)
            return keys[mid].doors & door ? &keys[mid] : NULL;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* The door's key closest to name, when it is a plausible slip (did you mean): the one
 * suggestion function of every lookup (util/suggest.c). */
static const char *closest(const char *name, unsigned door)
{
    const char *names[N_KEYS];
    size_t n = 0;
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].doors & door)
            names[n++] = keys[i].name;
    return ar_suggest(name, names, n);
}

static int read_key(struct reader *r, const struct key *k, json_t *v)
{
    char *base = (char *)r->o;
    switch (k->type) {
    case STR: {
        if (!json_is_string(v) || json_string_length(v) == 0)
            return ar_error_set(r->err, AR_EUSAGE, k->name, "'%s' must be a non-empty string",
                                k->name);
        const char *s = keep(r, json_string_value(v), json_string_length(v));
        if (!s)
            return nomem(r);
        *(const char **)(base + k->offset) = s;
        return 0;
    }
    case BOOL:
        return read_bool(r, k->name, v, (int *)(base + k->offset));
    case SECONDS: {
        if (!json_is_number(v))
            return ar_error_set(r->err, AR_EUSAGE, k->name, "'%s' must be a number of seconds",
                                k->name);
        int rc = ar_seconds_to_ms(json_number_value(v), (uint64_t *)(base + k->offset), r->err);
        if (rc)
            snprintf(r->err->where, sizeof(r->err->where), "%s", k->name);
        return rc;
    }
    case USD: {
        double d = json_number_value(v);
        if (!json_is_number(v) || !(d > 0) || !isfinite(d))
            return ar_error_set(r->err, AR_EUSAGE, k->name,
                                "'%s' must be a positive number of dollars", k->name);
        *(double *)(base + k->offset) = d;
        return 0;
    }
    case SPECIAL:
        return k->read(r, k->name, v);
    }
    return 0;
}

int ar_request_apply(const json_t *req, unsigned door, struct ar_run_options *o,
                     struct ar_strv *storage, struct ar_var **vars, struct ar_error *err)
{
    if (!json_is_object(req))
        return ar_error_set(err, AR_EUSAGE, NULL, "a request must be a JSON object");
    struct reader r = { o, storage, vars, err, 0 };
    unsigned which = door & (B | R | T);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)req, key, v)
    {
        const struct key *k = find(key, which);
        if (!k) {
            if (door & AR_REQUEST_OTHER_KEYS)
                continue;
            const char *near = closest(key, which);
            return ar_error_set(err, AR_EUSAGE, key, "unknown key '%s'%s%s%s", key,
                                near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        }
        int rc = read_key(&r, k, v);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the public face ---- */

struct ar_run_request {
    struct ar_run_options o;
    struct ar_strv storage;
    struct ar_var *vars;
};

int ar_run_request_parse(const struct json_t *req, unsigned door,
                         const struct ar_run_options *defaults, struct ar_run_request **out,
                         struct ar_error *err)
{
    *out = NULL;
    struct ar_run_request *rq = calloc(1, sizeof(*rq));
    if (!rq)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (defaults)
        rq->o = *defaults;
    else
        ar_run_options_init(&rq->o);
    ar_strv_init(&rq->storage);
    int rc = ar_request_apply(req, door, &rq->o, &rq->storage, &rq->vars, err);
    if (rc) {
        ar_run_request_destroy(rq);
        return rc;
    }
    *out = rq;
    return 0;
}

struct ar_run_options *ar_run_request_options(struct ar_run_request *rq)
{
    return &rq->o;
}

void ar_run_request_destroy(struct ar_run_request *rq)
{
    if (!rq)
        return;
    ar_strv_finish(&rq->storage);
    free(rq->vars);
    free(rq);
}

char *ar_run_request_schema(unsigned door)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int rc = ar_buf_putc(&b, '{');
    int first = 1;
    for (size_t i = 0; !rc && i < N_KEYS; i++) {
        if (!(keys[i].doors & door))
            continue;
        json_t *desc = json_string(keys[i].meaning);
        char *d = desc ? json_dumps(desc, JSON_ENCODE_ANY) : NULL;
        json_decref(desc);
        const char *schema = keys[i].type == STR       ? NESTR
                             : keys[i].type == BOOL    ? BOOLEAN
                             : keys[i].type == SECONDS ? SECS
                                                       : keys[i].schema;
        rc = d ? ar_buf_printf(&b, "%s\"%s\":%s,\"description\":%s}", first ? "" : ",",
                               keys[i].name, schema, d)
               : AR_ENOMEM;
        free(d);
        first = 0;
    }
    if (!rc)
        rc = ar_buf_putc(&b, '}');
    char *s = rc ? NULL : ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    return s;
}

/* ---- the rules between options ---- */

int ar_run_options_check(const struct ar_run_options *o, struct ar_error *err)
{
    if (!o->prompt == !o->template_name)
        return ar_error_set(err, AR_EUSAGE, "prompt",
                            "give exactly one of 'prompt' and 'template'");
    if (o->n_vars && !o->template_name)
        return ar_error_set(err, AR_EUSAGE, "vars", "'vars' go with a 'template'");
    if (o->schema && o->template_name)
        return ar_error_set(err, AR_EUSAGE, "schema",
                            "a template carries its own contract; a schema goes with a prompt");
    int edits = o->allow_edits || o->tools == AR_TOOLS_EDIT;
    if (edits && o->tools == AR_TOOLS_NONE)
        return ar_error_set(err, AR_EUSAGE, "allow_edits", "a run with no tools cannot edit files");
    if (edits && ar_share_no_edits(o->share))
        return ar_error_set(err, AR_EUSAGE, "allow_edits", "no run may edit files here");
    if ((o->worktree == AR_WORKTREE_ALWAYS || o->worktree_commit || o->keep_worktree ||
         o->worktree_base) &&
        ar_share_no_edits(o->share))
        return ar_error_set(err, AR_EUSAGE, "worktree",
                            "a worktree is for a run that edits files, and none may here");
    struct ar_run_options with = *o;
    if (edits && ar_share_edits_in_worktree(o->share))
        with.worktree = AR_WORKTREE_ALWAYS;
    if (!ar_run_uses_worktree(&with)) {
        const char *key = o->worktree_base     ? "base"
                          : o->worktree_commit ? "commit"
                          : o->keep_worktree   ? "keep_worktree"
                                               : NULL;
        if (key)
            return ar_error_set(err, AR_EUSAGE, key,
                                "'%s' goes with a worktree of its own: worktree, or a run that "
                                "edits files under a worktree rule",
                                key);
    }
    return 0;
}

int ar_seconds_to_ms(double seconds, uint64_t *ms, struct ar_error *err)
{
    if (!isfinite(seconds) || seconds < 0 || seconds > 1e9)
        return ar_error_set(err, AR_EUSAGE, NULL,
                            "a duration must be a number of seconds from 0 to 1e9");
    /* Whole milliseconds as written (0.007 s is 7 ms, whatever its binary spelling), the
     * rest rounded up: 0.0004 s is a millisecond, never 0 (none). */
    double m = seconds * 1000.0, whole = round(m);
    m = fabs(m - whole) < 1e-6 ? whole : ceil(m);
    *ms = seconds > 0 && m < 1 ? 1 : (uint64_t)m;
    return 0;
}
