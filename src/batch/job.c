/* Batch jobs: one JSON Lines input line to one run's options. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/job.h"
#include "git/git.h"
#include "run/request.h"
#include "run/run.h"
#include "util/buf.h"

int ar_batch_line_blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return 0;
    return 1;
}

static const char *keep(struct ar_batch_job *job, const char *s)
{
    if (ar_strv_push(&job->storage, s) < 0)
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
    if (!rc && !job->error) {
        /* Every key and every rule between them: the library's one table of run requests
         * (run/request.c), as the MCP server reads its calls. */
        struct ar_error err = AR_ERROR_INIT;
        int bad =
            ar_request_apply(line, AR_REQUEST_BATCH, &job->opts, &job->storage, &job->vars, &err);
        if (!bad)
            bad = ar_run_options_check(&job->opts, &err);
        if (bad == AR_ENOMEM)
            rc = AR_ENOMEM;
        else if (bad)
            rc = fail(job, "%s", err.msg, NULL);
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
