/* Finding the work tree a directory belongs to, without a git process. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "git/git.h"
#include "util/buf.h"

/*
 * The length of the longest GIT_CEILING_DIRECTORIES entry that is a proper
 * ancestor of path, or 0: git does not look for .git in such a directory or
 * above it (unless it is the directory git started in), so neither do we.
 * Entries that are not absolute are ignored, as git ignores them.
 */
static size_t ceiling_len(const char *path)
{
    const char *list = getenv("GIT_CEILING_DIRECTORIES");
    size_t best = 0;
    while (list && *list) {
        const char *colon = strchr(list, ':');
        size_t n = colon ? (size_t)(colon - list) : strlen(list);
        char entry[PATH_MAX], real[PATH_MAX];
        if (n > 0 && n < sizeof(entry) && list[0] == '/') {
            memcpy(entry, list, n);
            entry[n] = '\0';
            const char *e = realpath(entry, real) ? real : entry;
            size_t len = strlen(e);
            while (len > 1 && e[len - 1] == '/')
                len--;
            if (len > 1 && len > best && strncmp(path, e, len) == 0 && path[len] == '/')
                best = len;
        }
        list = colon ? colon + 1 : NULL;
    }
    return best;
}

char *ar_git_find_root(const char *dir)
{
    char *path = realpath(dir ? dir : ".", NULL);
    if (!path)
        return NULL;
    size_t ceiling = ceiling_len(path);
    for (;;) {
        struct ar_buf b;
        struct stat st;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        int found = ar_buf_printf(&b, "%s/.git", path) == 0 && stat(ar_buf_cstr(&b), &st) == 0;
        ar_buf_finish(&b);
        if (found)
            return path;
        /* Up one: "/a" goes to "/", and "/" is the last one checked. */
        char *slash = strrchr(path, '/');
        if (!slash || (slash == path && !path[1]) ||
            (ceiling && (size_t)(slash - path) <= ceiling)) {
            free(path);
            return NULL;
        }
        if (slash == path)
            slash++;
        *slash = '\0';
    }
}

const char *ar_git_rev_path_colon(const char *spec)
{
    int depth = 0;
    for (const char *p = spec; *p; p++) {
        if (*p == '{')
            depth++;
        else if (depth && *p == '}')
            depth--;
        else if (!depth && *p == ':')
            return p;
    }
    return NULL;
}
