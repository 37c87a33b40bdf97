/*
 * agentrun's own output files: its stdout or stderr redirected into the work
 * tree, batch -o FILE, a run's transcript. They change while a run runs, but
 * the run did not change them, so they never appear among its files.
 * ar_ignore_own_file() (include/agentrun/agentrun.h) registers one; the
 * pipeline drops them from what the git snapshots saw.
 */
#ifndef AR_RUN_OWN_FILES_H
#define AR_RUN_OWN_FILES_H

struct ar_git_changes;

/*
 * Drops from ch every change (but a deletion) of a file under root (borrowed)
 * that is one of agentrun's own: a registered file, or the one open on
 * transcript_fd (-1: none), matched by device and inode. Returns 0 or AR_ENOMEM
 * (ch is then unchanged).
 */
int ar_own_files_drop(struct ar_git_changes *ch, const char *root, int transcript_fd);

#endif
