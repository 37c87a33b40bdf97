/* Helpers shared by the files of src/git; not part of its interface (git.h). */
#ifndef AR_GIT_INTERNAL_H
#define AR_GIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/*
 * SHA-1, only to compute git blob ids (git's object names are SHA-1 in every
 * repository we meet); not for anything that needs collision resistance.
 */
struct ar_sha1 {
    uint32_t h[5];
    uint64_t len; /* bytes hashed so far */
    unsigned char block[64];
    size_t used;
};

void ar_sha1_init(struct ar_sha1 *s);
void ar_sha1_update(struct ar_sha1 *s, const void *data, size_t n);
void ar_sha1_final(struct ar_sha1 *s, unsigned char out[20]);

/*
 * Reads what a work-tree path holds, without following symlinks: a regular
 * file's bytes, a symlink's target (as git stores it). At most max bytes go
 * to out (which must be empty and unlimited or larger); *truncated is set
 * when there was more. Returns 1 when read, 0 when the path does not exist,
 * -1 when it exists but is a directory or a special file or cannot be read.
 * *is_dir (may be NULL) tells a directory apart. AR_ENOMEM when out of memory.
 */
int ar_git_path_read(const char *root, const char *path, size_t max, struct ar_buf *out,
                     int *truncated, int *is_dir);

/* The worktrees' folders (worktrees.c): */

/* Is path (a real path) dir itself, or below it? */
int ar_git_path_within(const char *path, const char *dir);

/* mkdir -p, each folder made 0700. Returns 0, or -1 with errno set. */
int ar_git_make_dirs(const char *path);

/* Removes the emptied folders from path's parent up to stop (stop itself stays), and
 * stops at the first one that is not empty. */
void ar_git_remove_empty_parents(const char *path, const char *stop);

/* The next line of text[*off..len) without its '\n', advancing *off; NULL at the end
 * or when out of memory. Caller free()s. */
char *ar_git_next_line(const char *text, size_t len, size_t *off);

/* Whether s is a whole commit id in hex (SHA-1 or SHA-256). */
int ar_git_is_oid(const char *s);

#endif
