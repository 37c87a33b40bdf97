/* Batch jobs: one JSON Lines input line to one run's options. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/job.h"
#include "git/git.h"
#include "provider/provider.h"
#include "run/run.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/suggest.h"

enum field {
    F_ID,
    F_PROMPT,
    F_TEMPLATE,
    F_VARS,
    F_PROVIDER,
    F_MODEL,
    F_SCHEMA,
    F_CWD,
    F_ALLOW_EDITS,
    F_TIMEOUT,
    F_IDLE_TIMEOUT,
    F_FALLBACK,
    F_JSON,
    F_EXPECT,
    F_TRACK_FILES,
    F_TRUST_PROJECT,
    F_EXPECT_CHANGES,
    F_ALLOW_DENIED,
    F_WORKTREE,
    F_BASE,
    F_COMMIT,
};

/* The keys a line may have, sorted (a unit test checks). */
static const struct {
    const char *key;
    enum field f;
} fields[] = {
    { "allow_denied", F_ALLOW_DENIED },
    { "allow_edits", F_ALLOW_EDITS },
    { "base", F_BASE },
    { "commit", F_COMMIT },
    { "cwd", F_CWD },
    { "expect", F_EXPECT },
    { "expect_changes", F_EXPECT_CHANGES },
    { "fallback", F_FALLBACK },
    { "id", F_ID },
    { "idle_timeout", F_IDLE_TIMEOUT },
    { "json", F_JSON },
    { "model", F_MODEL },
    { "prompt", F_PROMPT },
    { "provider", F_PROVIDER },
    { "schema", F_SCHEMA },
    { "template", F_TEMPLATE },
    { "timeout", F_TIMEOUT },
    { "track_files", F_TRACK_FILES },
    { "trust_project", F_TRUST_PROJECT },
    { "vars", F_VARS },
    { "worktree", F_WORKTREE },
};

int ar_batch_line_blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return 0;
    return 1;
}

static int find_field(const char *key)
{
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (strcmp(fields[i].key, key) == 0)
            return (int)fields[i].f;
    return -1;
}

/* The key a mistyped one most likely meant ("promt": "prompt"), or NULL. */
static const char *near_field(const char *key)
{
    const char *keys[sizeof(fields) / sizeof(fields[0])];
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        keys[i] = fields[i].key;
    return ar_suggest(key, keys, sizeof(keys) / sizeof(keys[0]));
}

static const char *keep(struct ar_batch_job *job, const char *s)
{
    if (ar_strv_push(&job->storage, s) < 0)
        return NULL;
    return job->storage.v[job->storage.n - 1];
}

static const char *keep_take(struct ar_batch_job *job, char *s)
{
    if (ar_strv_push_take(&job->storage, s) < 0)
        return NULL;
    return job->storage.v[job->storage.n - 1];
}

int ar_batch_job_copy_options(struct ar_batch_job *job, const struct ar_run_options *o)
{
    job->opts = *o;
    const char **strings[] = {
        &job->opts.provider,        &job->opts.fallback,
        &job->opts.model,           &job->opts.prompt,
        &job->opts.template_name,   &job->opts.prompts_dir,
        &job->opts.schema,          &job->opts.cwd,
        &job->opts.resume,          &job->opts.prices_file,
        &job->opts.transcript_path, &job->opts.job_id,
        &job->opts.record_dir,      &job->opts.replay_dir,
        &job->opts.cache_dir,
    };
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        if (*strings[i] && !(*strings[i] = keep(job, *strings[i])))
            return AR_ENOMEM;
    job->opts.vars = NULL;
    if (o->n_vars) {
        job->vars = calloc(o->n_vars, sizeof(*job->vars));
        if (!job->vars)
            return AR_ENOMEM;
        for (size_t i = 0; i < o->n_vars; i++) {
            const struct ar_var *v = &o->vars[i];
            job->vars[i].name = v->name ? keep(job, v->name) : NULL;
            job->vars[i].value = v->value ? keep(job, v->value) : NULL;
            if (!job->vars[i].name != !v->name || !job->vars[i].value != !v->value)
                return AR_ENOMEM;
        }
        job->opts.vars = job->vars;
    }
    return 0;
}

static int fail(struct ar_batch_job *job, const char *fmt, const char *a, const char *b)
{
    char msg[512];
    char head[48];
    snprintf(head, sizeof(head), "line %zu: ", job->line);
    snprintf(msg, sizeof(msg), fmt, a ? a : "", b ? b : "");
    free(job->error);
    size_t n = strlen(head) + strlen(msg) + 1;
    job->error = malloc(n);
    if (!job->error)
        return AR_ENOMEM;
    snprintf(job->error, n, "%s%s", head, msg);
    return 0;
}

/* A scalar as text for a template variable: strings as they are, numbers and
 * booleans as JSON writes them. */
static char *scalar_text(json_t *v)
{
    if (json_is_string(v))
        return strndup(json_string_value(v), json_string_length(v));
    if (json_is_number(v) || json_is_boolean(v))
        return json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    return NULL;
}

static int parse_vars(struct ar_batch_job *job, json_t *vars)
{
    if (!json_is_object(vars))
        return fail(job, "'vars' must be an object of strings", NULL, NULL);
    size_t n = json_object_size(vars);
    job->vars = calloc(n ? n : 1, sizeof(*job->vars));
    if (!job->vars)
        return AR_ENOMEM;
    const char *k;
    json_t *v;
    size_t i = 0;
    json_object_foreach(vars, k, v)
    {
        char *text = scalar_text(v);
        if (!text)
            return fail(job, "variable '%s' must be a string, number or boolean", k, NULL);
        job->vars[i].name = keep(job, k);
        job->vars[i].value = keep_take(job, text);
        i++;
    }
    job->opts.vars = job->vars;
    job->opts.n_vars = n;
    return 0;
}

static int parse_seconds(struct ar_batch_job *job, const char *key, json_t *v, uint64_t *ms)
{
    if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1e9)
        return fail(job, "'%s' must be a positive number of seconds", key, NULL);
    *ms = (uint64_t)(json_number_value(v) * 1000.0 + 0.5);
    return 0;
}

static int parse_schema(struct ar_batch_job *job, json_t *v)
{
    if (json_is_object(v)) {
        char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        job->opts.schema = text ? keep_take(job, text) : NULL;
        return job->opts.schema ? 0 : AR_ENOMEM;
    }
    if (!json_is_string(v))
        return fail(job, "'schema' must be an object or the path of a schema file", NULL, NULL);
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    ar_buf_init(&b, (size_t)1 << 20);
    if (ar_file_read(json_string_value(v), &b, &err) < 0) {
        ar_buf_finish(&b);
        return fail(job, "schema: %s", err.msg, NULL);
    }
    job->opts.schema = keep_take(job, ar_buf_detach(&b, NULL));
    return job->opts.schema ? 0 : AR_ENOMEM;
}

static int parse_fallback(struct ar_batch_job *job, json_t *v)
{
    if (json_is_string(v)) {
        job->opts.fallback = keep(job, json_string_value(v));
        return 0;
    }
    if (!json_is_array(v))
        return fail(job, "'fallback' must be a list of providers", NULL, NULL);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t i;
    json_t *p;
    json_array_foreach(v, i, p)
    {
        if (!json_is_string(p)) {
            ar_buf_finish(&b);
            return fail(job, "'fallback' must be a list of provider names", NULL, NULL);
        }
        ar_buf_printf(&b, "%s%s", i ? "," : "", json_string_value(p));
    }
    job->opts.fallback = keep_take(job, ar_buf_detach(&b, NULL));
    return 0;
}

static int check_fallback(struct ar_batch_job *job)
{
    struct ar_error err = AR_ERROR_INIT;
    if (job->opts.fallback && ar_provider_check_list(job->opts.fallback, &err) < 0)
        return fail(job, "'fallback': %s", err.msg, NULL);
    return 0;
}

static int apply(struct ar_batch_job *job, enum field f, const char *key, json_t *v)
{
    struct ar_run_options *o = &job->opts;
    switch (f) {
    case F_ID:
        return 0; /* taken first, in ar_batch_job_parse() */
    case F_PROMPT:
    case F_TEMPLATE:
    case F_PROVIDER:
    case F_MODEL:
    case F_CWD:
    case F_EXPECT:
    case F_BASE:
        if (!json_is_string(v) || json_string_length(v) == 0)
            return fail(job, "'%s' must be a non-empty string", key, NULL);
        break;
    case F_ALLOW_EDITS:
    case F_TRACK_FILES:
    case F_ALLOW_DENIED:
    case F_EXPECT_CHANGES:
    case F_JSON:
    case F_TRUST_PROJECT:
    case F_WORKTREE:
    case F_COMMIT:
        if (!json_is_boolean(v))
            return fail(job, "'%s' must be true or false", key, NULL);
        break;
    default:
        break;
    }
    const char *s = json_string_value(v);
    switch (f) {
    case F_PROMPT:
        o->prompt = keep(job, s);
        return 0;
    case F_TEMPLATE:
        o->template_name = keep(job, s);
        return 0;
    case F_VARS:
        return parse_vars(job, v);
    case F_PROVIDER:
        if (strcmp(s, "auto") != 0 && !ar_provider_find(s)) {
            char msg[256];
            ar_provider_unknown_text(s, strlen(s), 1, msg, sizeof(msg));
            return fail(job, "%s", msg, NULL);
        }
        o->provider = keep(job, s);
        return 0;
    case F_MODEL:
        o->model = keep(job, s);
        return 0;
    case F_SCHEMA:
        return parse_schema(job, v);
    case F_CWD: {
        struct ar_error derr = AR_ERROR_INIT;
        if (ar_dir_check(s, &derr) < 0)
            return fail(job, "%s", derr.msg, NULL);
        o->cwd = keep(job, s);
        return 0;
    }
    case F_ALLOW_EDITS:
        o->allow_edits = json_is_true(v);
        return 0;
    case F_TRACK_FILES:
        o->track_files = json_is_true(v) ? AR_TRACK_FILES_ALWAYS : AR_TRACK_FILES_NEVER;
        return 0;
    case F_ALLOW_DENIED:
        o->allow_denied = json_is_true(v);
        return 0;
    case F_EXPECT_CHANGES:
        o->expect_changes = json_is_true(v);
        return 0;
    case F_TIMEOUT:
        return parse_seconds(job, key, v, &o->timeout_ms);
    case F_IDLE_TIMEOUT:
        return parse_seconds(job, key, v, &o->idle_timeout_ms);
    case F_FALLBACK:
        return parse_fallback(job, v);
    case F_JSON:
        o->want_json = json_is_true(v);
        return 0;
    case F_TRUST_PROJECT:
        o->trust_project = json_is_true(v);
        return 0;
    case F_WORKTREE:
        o->worktree = json_is_true(v) ? AR_WORKTREE_ALWAYS : AR_WORKTREE_NEVER;
        return 0;
    case F_BASE:
        o->worktree_base = keep(job, s);
        return 0;
    case F_COMMIT:
        o->worktree_commit = json_is_true(v);
        return 0;
    case F_EXPECT:
        if (!strcmp(s, "object"))
            o->expect = AR_EXPECT_OBJECT;
        else if (!strcmp(s, "array"))
            o->expect = AR_EXPECT_ARRAY;
        else if (!strcmp(s, "any"))
            o->expect = AR_EXPECT_ANY;
        else
            return fail(job, "'expect' must be object, array or any, not '%s'", s, NULL);
        o->want_json = 1;
        return 0;
    case F_ID:
        break;
    }
    return 0;
}

static int take_id(struct ar_batch_job *job, json_t *line)
{
    json_t *id = json_object_get(line, "id");
    char buf[64];
    if (json_is_string(id) && json_string_length(id) > 0) {
        job->id = strndup(json_string_value(id), json_string_length(id));
    } else if (json_is_integer(id)) {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        job->id = strdup(buf);
        job->id_is_integer = 1;
    } else {
        snprintf(buf, sizeof(buf), "line %zu", job->line);
        job->id = strdup(buf);
        if (!job->id)
            return AR_ENOMEM;
        return id ? fail(job, "'id' must be a non-empty string or an integer", NULL, NULL)
                  : fail(job, "missing 'id'", NULL, NULL);
    }
    return job->id ? 0 : AR_ENOMEM;
}

int ar_batch_job_parse(const char *text, size_t len, size_t lineno,
                       const struct ar_run_options *defaults, struct ar_batch_job *job)
{
    memset(job, 0, sizeof(*job));
    job->line = lineno;
    job->opts = *defaults;
    ar_strv_init(&job->storage);

    if (len > AR_BATCH_MAX_LINE) {
        char buf[64];
        snprintf(buf, sizeof(buf), "line %zu", lineno);
        job->id = strdup(buf);
        char size[64];
        snprintf(size, sizeof(size), "%zu bytes, more than %zu", len, AR_BATCH_MAX_LINE);
        int rc = fail(job,
                      "the line is too long (%s); put a long prompt in a template variable "
                      "file or split the job",
                      size, NULL);
        return job->id ? rc : AR_ENOMEM;
    }
    json_error_t jerr;
    json_t *line = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(line)) {
        char buf[64];
        snprintf(buf, sizeof(buf), "line %zu", lineno);
        job->id = strdup(buf);
        int rc = line ? fail(job, "a job must be a JSON object", NULL, NULL)
                      : fail(job, "invalid JSON: %s", jerr.text, NULL);
        json_decref(line);
        return job->id ? rc : AR_ENOMEM;
    }
    int rc = take_id(job, line);
    const char *key;
    json_t *v;
    json_object_foreach(line, key, v)
    {
        if (rc || job->error)
            break;
        int f = find_field(key);
        const char *near = f < 0 ? near_field(key) : NULL;
        if (f < 0)
            rc = near ? fail(job, "unknown key '%s'; did you mean '%s'?", key, near)
                      : fail(job, "unknown key '%s'", key, NULL);
        else
            rc = apply(job, (enum field)f, key, v);
    }
    if (!rc && !job->error) {
        if (!job->opts.prompt == !job->opts.template_name)
            rc = fail(job, "give exactly one of 'prompt' and 'template'", NULL, NULL);
        else if (job->opts.n_vars && !job->opts.template_name)
            rc = fail(job, "'vars' go with a 'template'", NULL, NULL);
        else if (job->opts.schema && job->opts.template_name)
            rc = fail(job, "a template carries its own contract: drop 'schema'", NULL, NULL);
        else if ((json_object_get(line, "base") || json_is_true(json_object_get(line, "commit"))) &&
                 !ar_run_uses_worktree(&job->opts))
            rc = fail(job,
                      "'base' and 'commit' go with a worktree: \"worktree\": true, or "
                      "--worktrees for a job with \"allow_edits\"",
                      NULL, NULL);
        else
            rc = check_fallback(job);
    }
    if (!rc && !job->error)
        job->worktree = ar_batch_job_work_tree(&job->opts);
    json_decref(line);
    return rc;
}

char *ar_batch_job_work_tree(const struct ar_run_options *o)
{
    return o->allow_edits && !ar_run_uses_worktree(o) ? ar_git_find_root(o->cwd) : NULL;
}

void ar_batch_job_finish(struct ar_batch_job *job)
{
    free(job->id);
    free(job->error);
    free(job->worktree);
    free(job->vars);
    ar_strv_finish(&job->storage);
    memset(job, 0, sizeof(*job));
}
