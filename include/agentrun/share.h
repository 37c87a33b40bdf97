/*
 * agentrun: a share, the rules a set of runs lives under together (after
 * curl's share handle).
 *
 * Every rule that decides what a call may spend, read, or call is kept by the
 * library, in one place every CLI call passes: the pipeline asks the run's
 * share before each call starts (main, repair, retry, fallback), whatever
 * started the run (ar_run_start(), a batch job, a review chunk, a ranking, a
 * route, a call of `agentrun mcp`). A front end only maps its flags onto a
 * share's options (docs/security.md, "One rulebook"):
 *
 *   - the budget: max_cost_usd for every call of the share together, and
 *     max_cost_each for each command (a run with its repair and fallback
 *     calls, a review with all its chunks, …); each command's own cap
 *     (ar_run_options.max_cost_usd) lies within it. Calls reserve before they
 *     start (the rule: docs/security.md, "What a call may spend");
 *   - max_calls: how many CLIs run at once over all of them;
 *   - the rate-limit pause: a provider that asked one run to wait pauses the
 *     share's other runs of it too;
 *   - providers: the only CLIs a run may call (auto picks among them);
 *   - dirs: where runs may work, and the only places the library reads a file
 *     a request names (a schema, review instructions and baseline, PRDs, a
 *     manifest, a diff file, REV:PATH resolved as git resolves it);
 *   - what a run may write: no_edits, edits_in_worktree.
 *
 * A run with no share (options.share NULL) gets one of its own with the
 * defaults, as does a batch's or a review's set of runs: nothing is shared
 * beyond it, and nothing is refused but what the nesting rule below refuses.
 *
 * Nesting: a CLI that agentrun starts gets AGENTRUN_DEPTH (one more than the
 * agentrun that started it) and, when its call has a cap, AGENTRUN_BUDGET_USD
 * (what that call may spend). ar_share_create() reads both: a share nested
 * more than AR_SHARE_MAX_DEPTH deep is refused, and its budget is at most what
 * the parent call had left.
 *
 * A share is used from one thread (every run under it runs on that thread's
 * loops) and must outlive every run, batch, review and MCP server using it.
 */
#ifndef AGENTRUN_SHARE_H
#define AGENTRUN_SHARE_H

#include <stddef.h>

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How many agentruns may run nested under the first one (through a CLI's shell or
 * an MCP server a CLI started): AGENTRUN_DEPTH past it is refused. */
#define AR_SHARE_MAX_DEPTH 2

struct ar_share;

struct ar_share_options {
    double max_cost_usd;     /* > 0: what every call of the share may spend together */
    double max_cost_each;    /* > 0: the most one command may spend: one asking for more is
                                refused (err.where "max_cost"), one naming none gets this */
    unsigned max_calls;      /* > 0: CLI calls running at once over every run of the share */
    const char *providers;   /* "codex,gemini": the only providers a run may call; NULL: all */
    const char *const *dirs; /* the directories runs may work in and files may be read from */
    size_t n_dirs;           /* (each resolved when the share is made); 0: anywhere */
    int no_edits;          /* no run may edit files: one asking to is refused ("allow_edits") */
    int edits_in_worktree; /* a run that can edit files gets a git worktree of its own
                              (docs/worktrees.md), never the checkout itself */
    void *reserved[8];       /* zero: members added later come out of it */
};

/* Sets *o to the defaults: no cap, no limit on calls, every provider, anywhere. */
AR_API void ar_share_options_init(struct ar_share_options *o);

/*
 * Makes a share from o (copied). Returns 0 with *out set (free it with
 * ar_share_destroy()), or AR_EUSAGE with err.where naming the option
 * ("providers": an unknown name; "dirs": a directory that cannot be resolved;
 * "max_cost_usd"; "depth": nested past AR_SHARE_MAX_DEPTH), or AR_ENOMEM.
 */
AR_API int ar_share_create(const struct ar_share_options *o, struct ar_share **out,
                           struct ar_error *err);

/* Frees s; only once nothing uses it. NULL is fine. */
AR_API void ar_share_destroy(struct ar_share *s);

/* What a share's calls spent, hold and were refused, so far. */
struct ar_share_stats {
    double spent_usd;    /* the known costs of the calls that ended */
    double reserved_usd; /* held by the calls running now */
    double cap_usd;      /* the share's cap (the lower of max_cost_usd and what a parent
                            agentrun had left), or 0: none */
    int cost_unknown;    /* a call's cost was unknown: a cap can no longer be kept */
    unsigned calls;      /* calls that ended */
    unsigned running;    /* calls running now */
    unsigned refused;    /* calls refused for want of budget */
    unsigned depth;      /* 0, or how deep this agentrun is nested (AGENTRUN_DEPTH) */
    void *reserved[8];
};

/* Fills *st. */
AR_API void ar_share_get_stats(const struct ar_share *s, struct ar_share_stats *st);

/*
 * Checks a path a request names against the share's directories as the library
 * does before reading it: resolved from base (NULL: the current directory) when
 * relative, symlinks and ".." resolved, contained component by component.
 * Returns 0 with *real (may be NULL) a new string (free()), or AR_EUSAGE with
 * err.where "dirs" and a message naming the directories.
 */
AR_API int ar_share_path(const struct ar_share *s, const char *base, const char *path, char **real,
                         struct ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
