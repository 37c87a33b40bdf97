/* Finding the work tree a directory belongs to, without a git process. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "git/git.h"
#include "util/buf.h"

char *ar_git_find_root(const char *dir)
{
    char *path = realpath(dir ? dir : ".", NULL);
    if (!path)
        return NULL;
    for (;;) {
        struct ar_buf b;
        struct stat st;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        int found = ar_buf_printf(&b, "%s/.git", path) == 0 && stat(ar_buf_cstr(&b), &st) == 0;
        ar_buf_finish(&b);
        if (found)
            return path;
        char *slash = strrchr(path, '/');
        if (!slash || slash == path) {
            /* "/" itself is checked last. */
            if (slash == path && path[1]) {
                path[1] = '\0';
                continue;
            }
            free(path);
            return NULL;
        }
        *slash = '\0';
    }
}
