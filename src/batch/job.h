/*
 * Batch jobs: one JSON Lines input line to one run's options.
 *
 *   {"id": "t1", "prompt": "…"} or {"id": "t2", "template": "review", "vars": {"diff": "…"}}
 *   optional: provider, model, schema (an object, or a path to a file), cwd,
 *   allow_edits, track_files (true: snapshots even without allow_edits; false:
 *   none), timeout and idle_timeout (seconds), fallback ("codex,gemini"
 *   or ["codex","gemini"]), json (extract JSON without a contract), expect
 *   ("object", "array", "any"), expect_changes (no changed file is error
 *   no_effect), allow_denied (a refused tool call does not fail the job),
 *   worktree (a git worktree of its own), base and commit (its start, and a
 *   commit of the job's changes; only with a worktree).
 *
 * A line that cannot be used still yields a job: it has `error` set and is
 * reported as a failed record under its id, so one bad line never stops a batch.
 */
#ifndef AR_BATCH_JOB_H
#define AR_BATCH_JOB_H

#include <stddef.h>

#include "agentrun/agentrun.h"
#include "util/strv.h"

struct ar_batch_job {
    char *id;                   /* owned; its text ("7" for 7), or "line N" when it has none */
    int id_is_integer;          /* the line's id was a JSON integer: records carry it as one */
    size_t line;                /* 1-based line number in the input */
    struct ar_run_options opts; /* the defaults with this line's fields; strings in storage */
    struct ar_var *vars;        /* owned array; strings in storage */
    char *error;                /* owned; why the line cannot run ("line 3: unknown key 'promt'") */
    char *worktree;             /* owned; the git work tree an allow_edits job writes (one at a
                                   time), NULL for one with a worktree of its own or no edits */
    struct ar_strv storage;
};

/* The longest input line parsed (16 MiB): a longer one is an error record, so a
 * runaway line costs its bytes, not five times that as a parsed JSON tree. */
#define AR_BATCH_MAX_LINE ((size_t)16 << 20)

/*
 * Parses one line (len bytes, not NUL-terminated) into *job, starting from a
 * copy of `defaults` (whose strings must outlive the job). Always fills
 * *job: problems go to job->error. Returns 0, or AR_ENOMEM.
 */
int ar_batch_job_parse(const char *line, size_t len, size_t lineno,
                       const struct ar_run_options *defaults, struct ar_batch_job *job);

/*
 * Fills job->opts with a copy of o whose strings and variables the job owns (in
 * storage and vars), so the caller's may go away. Callbacks and their arguments
 * are copied as pointers. Returns 0, or AR_ENOMEM (ar_batch_job_finish() still
 * frees what was copied).
 */
int ar_batch_job_copy_options(struct ar_batch_job *job, const struct ar_run_options *o);

/* The git work tree a job with options o writes in place, so that the batch runs the
 * others of that tree one at a time (caller free()s), or NULL: it cannot edit, or it
 * has a worktree of its own. */
char *ar_batch_job_work_tree(const struct ar_run_options *o);

/* Frees what the job owns. */
void ar_batch_job_finish(struct ar_batch_job *job);

/* Non-zero when the line is blank (only spaces): such lines are not jobs. */
int ar_batch_line_blank(const char *line, size_t len);

#endif
