/*
 * agentrun's temporary files and directories: the instruction, schema and system prompt
 * files a CLI reads by path. They are made 0600 / 0700 under $TMPDIR (else /tmp) as
 * agentrun-<tag>-<pid>-XXXXXX, and removed when the call ends. A process that was
 * killed (SIGKILL, a crash) cannot remove its own: any later agentrun process sweeps
 * what such dead processes left — the entries of this user whose <pid> names no living
 * process — from its first temporary file or its first CLI call, whichever is first, on a
 * thread of its own that the process waits for when it exits.
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

/* Starts ar_temp_sweep(NULL) on a thread the first time a process calls it (thread-safe;
 * where no thread can be made, sweeps before it returns); an atexit handler waits for
 * it. Later calls do nothing. */
void ar_temp_sweep_once(void);

/* Removes the entries of `root` (ar_temp_root() when NULL) that a dead agentrun process
 * of this user left: how many. Links are removed, never followed. */
unsigned ar_temp_sweep(const char *root);

/* Removes path and everything under it; symbolic links are removed, never followed. */
void ar_remove_tree(const char *path);

#endif
