/* agentrun's own output files: never a run's change (see own_files.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agentrun/agentrun.h"
#include "git/git.h"
#include "run/own_files.h"
#include "util/macros.h"

struct own_file {
    dev_t dev;
    ino_t ino;
};

/* Registered from the thread that runs the loops, before the runs start. */
static struct own_file own_files[16];
static size_t n_own_files;

static int stat_own(int fd, struct own_file *f)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    return 1;
}

void ar_ignore_own_file(int fd)
{
    struct own_file f;
    if (n_own_files < AR_ARRAY_SIZE(own_files) && stat_own(fd, &f))
        own_files[n_own_files++] = f;
}

/* 1 when root/rel is one of agentrun's own files, 0 when not, AR_ENOMEM. */
static int is_own_file(const struct own_file *transcript, const char *root, const char *rel)
{
    char *path = malloc(strlen(root) + strlen(rel) + 2);
    if (!path)
        return AR_ENOMEM;
    sprintf(path, "%s/%s", root, rel);
    struct stat st;
    int own = 0;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        own = transcript && st.st_dev == transcript->dev && st.st_ino == transcript->ino;
        for (size_t i = 0; !own && i < n_own_files; i++)
            own = st.st_dev == own_files[i].dev && st.st_ino == own_files[i].ino;
    }
    free(path);
    return own;
}

int ar_own_files_drop(struct ar_git_changes *ch, const char *root, int transcript_fd)
{
    struct own_file t;
    const struct own_file *transcript = stat_own(transcript_fd, &t) ? &t : NULL;
    if (!root || (!n_own_files && !transcript))
        return 0;
    /* Decide first, drop after: out of memory half-way leaves ch as it was. */
    unsigned char *own = calloc(ch->n ? ch->n : 1, 1);
    if (!own)
        return AR_ENOMEM;
    for (size_t i = 0; i < ch->n; i++) {
        if (ch->v[i].op == AR_GIT_DELETE)
            continue;
        int rc = is_own_file(transcript, root, ch->v[i].path);
        if (rc < 0) {
            free(own);
            return rc;
        }
        own[i] = (unsigned char)rc;
    }
    size_t k = 0;
    for (size_t i = 0; i < ch->n; i++) {
        struct ar_git_change *g = &ch->v[i];
        if (own[i]) {
            free(g->path);
            free(g->from);
            free(g->content);
            continue;
        }
        ch->v[k++] = *g;
    }
    ch->n = k;
    free(own);
    return 0;
}
