/*
 * Prioritize: rank a folder of product requirement documents (PRDs) with a
 * model, and check the ranking hard so the one repair call gets precise
 * messages. Nothing here prints; warnings are returned to the caller.
 *
 * Protocol:
 *   1. ar_prd_set_read() reads DIR (sorted, optionally recursive) into a set;
 *   2. ar_prd_set_render() gives the text of the template's PRD variable;
 *   3. the caller runs prompts/prioritize.md with ar_prioritize_validate as
 *      the run's validate hook (validate_arg: the set);
 *   4. ar_ranking_build() turns the accepted value into a ranked, optionally
 *      cut list plus the PRDs the model left out (unranked);
 *   5. ar_ranking_finish(), ar_prd_set_finish().
 */
#ifndef AR_PRIORITIZE_PRIORITIZE_H
#define AR_PRIORITIZE_PRIORITIZE_H

#include <jansson.h>
#include <stddef.h>

#include "agentrun/error.h"
#include "agentrun/prioritize.h"
#include "util/buf.h"
#include "util/strv.h"

/* The default of --max-prd-bytes. */
#define AR_PRD_DEFAULT_MAX_BYTES ((size_t)32 << 10)

/* Directories nested deeper than this are not entered (a guard against loops). */
#define AR_PRD_MAX_DEPTH 32

/* The template variable that receives ar_prd_set_render()'s text. */
#define AR_PRIORITIZE_VAR_PRDS "prds"
/* The template variable that receives --context FILE ("" when none). */
#define AR_PRIORITIZE_VAR_CONTEXT "context"
#define AR_PRIORITIZE_TEMPLATE    "prioritize"

struct ar_prd {
    char *id;       /* the path relative to DIR without its extension, '/'-separated */
    char *path;     /* the path as opened (DIR joined with the relative path) */
    char *text;     /* valid UTF-8, capped, with the truncation marker when cut */
    size_t size;    /* the file's size in bytes */
    size_t shown;   /* bytes of the file that text shows (== size unless truncated) */
    int truncated;  /* text was cut to max_bytes */
    size_t invalid; /* invalid UTF-8 sequences (and NUL bytes) replaced with U+FFFD */
};

struct ar_prd_set {
    struct ar_prd *v; /* sorted by id (byte order) */
    size_t n;
    size_t cap;
    /* Things the user should hear about ("'x.md' is not valid UTF-8: …"), in
     * file order. Owned by the set. */
    struct ar_strv warnings;
};

struct ar_prd_read_opts {
    int recursive;    /* descend into subdirectories (never hidden ones) */
    size_t max_bytes; /* the cap per PRD text; 0: AR_PRD_DEFAULT_MAX_BYTES */
};

void ar_prd_set_init(struct ar_prd_set *set);

/* Frees everything; ar_prd_set_init() works again afterwards. */
void ar_prd_set_finish(struct ar_prd_set *set);

/*
 * Reads every *.md, *.markdown and *.txt (extension in any case) in `dir`
 * into `set` (which must be empty). Hidden files and directories (a name
 * starting with '.') are skipped; symbolic links to files are followed, to
 * directories not (no loops). Returns 0, or AR_EUSAGE with err saying which
 * of these it is: the directory is missing or not a directory, it is empty,
 * it holds no PRD, two files give the same id ("a.md" and "a.txt").
 * AR_EIO when a file cannot be read, AR_ENOMEM.
 */
int ar_prd_set_read(struct ar_prd_set *set, const char *dir, const struct ar_prd_read_opts *o,
                    struct ar_error *err);

/*
 * Makes a PRD from bytes (for ar_prd_set_read() and tests): replaces invalid
 * UTF-8 and NUL bytes with U+FFFD, cuts at max_bytes of the input (0: no
 * cap) on a character boundary and appends the marker
 * "\n[… truncated: N of M bytes shown]". The strings are copied. Returns 0
 * or AR_ENOMEM.
 */
int ar_prd_init(struct ar_prd *prd, const char *id, const char *path, const char *data, size_t len,
                size_t size, size_t max_bytes);
void ar_prd_finish(struct ar_prd *prd);

/* The PRD with this id, or NULL. Borrowed from the set. */
const struct ar_prd *ar_prd_set_find(const struct ar_prd_set *set, const char *id);

/*
 * Appends every PRD to out, each delimited so the model cannot confuse one
 * with the next:
 *     <prd id="auth">
 *     …text…
 *     </prd>
 * Returns 0 or AR_ENOMEM / AR_ETOOBIG.
 */
int ar_prd_set_render(const struct ar_prd_set *set, struct ar_buf *out);

/*
 * The run's validate hook (ar_validate_fn): arg is the const struct
 * ar_prd_set *. Reports, in order of the recommendations:
 *   "no recommendations in response"
 *   "recommendation 2 missing prd_id"
 *   "recommendation 1 names unknown prd_id \"auth2\"; known ids: auth, billing, search"
 *   "recommendation 0 (\"billing\") has invalid priority: 0, want an integer >= 1"
 *   "recommendation 3 repeats prd_id \"auth\" of recommendation 0"
 *   "recommendation 1 (\"billing\") depends_on unknown prd_id \"x\"; known ids: …"
 * The messages are exact: docs/prioritize.md lists them.
 */
void ar_prioritize_validate(void *arg, json_t *value, void (*add)(void *sink, const char *msg),
                            void *sink);

/* The same checks collected into a vector of messages (for tests and callers without a run). */
int ar_prioritize_check(const struct ar_prd_set *set, json_t *value, struct ar_strv *out);

struct ar_ranking {
    /* A deep copy of the accepted value whose "recommendations" are sorted by
     * priority (stable: the model's order among equals) and cut to `top`.
     * New reference owned by the ranking. */
    json_t *value;
    size_t total;            /* recommendations before the cut */
    struct ar_strv unranked; /* ids of PRDs no recommendation names, in id order */
};

/*
 * Builds the ranking from the accepted value (borrowed). top == 0 keeps
 * every recommendation. Returns 0, AR_ECONTRACT when value has no
 * recommendations array, or AR_ENOMEM.
 */
int ar_ranking_build(struct ar_ranking *rk, const struct ar_prd_set *set, json_t *value, size_t top,
                     struct ar_error *err);
void ar_ranking_finish(struct ar_ranking *rk);

#endif
