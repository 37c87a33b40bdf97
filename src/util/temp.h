/*
 * agentrun's temporary files and directories: the instruction, schema and system prompt
 * files a CLI reads by path. They are made 0600 / 0700 under $TMPDIR (else /tmp) as
 * agentrun-<tag>-<pid>-XXXXXX, and removed when the call ends. A process that was
 * killed (SIGKILL, a crash) cannot remove its own: any later agentrun process sweeps
 * what such dead processes left — the entries of this user whose <pid> names no living
 * process — from its first temporary file or its first CLI call, whichever is first, on a
 * thread of its own that the process waits for when it exits; at most once a minute for
 * a user and a directory (the stamp agentrun-swept-<uid> says when the last one began).
 */
#ifndef AR_UTIL_TEMP_H
#define AR_UTIL_TEMP_H

#include "agentrun/error.h"

/* The directory temporary files go in: $TMPDIR when it is a directory, else /tmp. */
const char *ar_temp_root(void);

/*
 * A new name "<root>/agentrun-<tag>-<pid>-XXXXXX" for mkstemp()/mkdtemp() (caller
 * free()s), after the sweep of stale ones (once per process). NULL when out of memory.
 */
char *ar_temp_template(const char *tag);

/* Makes a new directory 0700 from ar_temp_template(tag). Returns its path (caller
 * removes it with ar_remove_tree() and free()s it), or NULL with err set. */
char *ar_temp_dir_make(const char *tag, struct ar_error *err);

/* The first time a process calls it (thread-safe), when ar_temp_sweep_due(): stamps and
 * starts ar_temp_sweep(NULL) on a thread (where no thread can be made, sweeps before it
 * returns), which an atexit handler waits for. Later calls do nothing. */
void ar_temp_sweep_once(void);

/* Non-zero when `root` (ar_temp_root() when NULL) is due a sweep: no stamp of this user's,
 * or one a minute old or older (or from the future). */
int ar_temp_sweep_due(const char *root);

/* Sets the stamp of `root` (ar_temp_root() when NULL) to now: a sweep begins. */
void ar_temp_sweep_stamp(const char *root);

/* Removes the entries of `root` (ar_temp_root() when NULL) that a dead agentrun process
 * of this user left: how many. Links are removed, never followed. */
unsigned ar_temp_sweep(const char *root);

/* Removes path and everything under it; symbolic links are removed, never followed. */
void ar_remove_tree(const char *path);

#endif
