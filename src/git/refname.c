/*
 * The names and folders of agentrun's worktrees: git's rules for a branch
 * name, a safe component for any job id, the session id of a batch, the branch
 * pattern, the worktree folder and the small file-system and parsing helpers
 * the worktree code shares (git/worktrees.h, git/internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "git/internal.h"
#include "git/worktrees.h"
#include "util/file.h"
#include "util/sha256.h"

/* The bytes git refuses anywhere in a ref name (git-check-ref-format(1), rules 4 and 5,
 * and the backslash). Control characters are checked apart. */
static int forbidden_byte(unsigned char c)
{
    return c < 0x20 || c == 0x7f || strchr(" ~^:?*[\\", c) != NULL;
}

/* Rule 1: a component may not begin with '.' nor end with ".lock"; rule 6: nor be empty. */
static int component_ok(const char *p, size_t n)
{
    static const char lock[] = ".lock";
    if (n == 0 || p[0] == '.')
        return 0;
    return !(n >= sizeof(lock) - 1 &&
             memcmp(p + n - (sizeof(lock) - 1), lock, sizeof(lock) - 1) == 0);
}

int ar_git_branch_name_ok(const char *name)
{
    size_t n = strlen(name);
    /* --branch: never an option, never HEAD. (Rule 9, not "@" alone, is about the whole
     * ref name, and refs/heads/@ is one.) */
    if (n == 0 || name[0] == '-' || strcmp(name, "HEAD") == 0)
        return 0;
    /* Rule 7: no '.' at the end; rules 3 and 8: no ".." and no "@{". */
    if (name[n - 1] == '.' || strstr(name, "..") || strstr(name, "@{"))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (forbidden_byte((unsigned char)name[i]))
            return 0;
    /* Rule 6 (no leading, trailing or doubled '/') is an empty component. */
    for (const char *p = name;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (!component_ok(p, len))
            return 0;
        if (!slash)
            return 1;
        p = slash + 1;
    }
}

static int plain_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* The longest text kept as it is, and the longest prefix kept before a hash. */
#define KEEP_MAX   48
#define PREFIX_MAX 40

/* The component of text, kept as it is only when as_is_ok allows. */
static void component(const char *text, int as_is_ok, char out[AR_GIT_COMPONENT_SIZE])
{
    size_t n = strlen(text);
    int as_is = as_is_ok && n > 0 && n <= KEEP_MAX && text[0] != '-' && component_ok(text, n) &&
                text[n - 1] != '.' && !strstr(text, "..");
    for (size_t i = 0; as_is && i < n; i++)
        as_is = plain_byte((unsigned char)text[i]) || text[i] == '.';
    if (as_is) {
        memcpy(out, text, n + 1);
        return;
    }
    /* Every other byte becomes '-', leading ones dropped; the hash of the whole text
     * tells apart the texts that map alike ("a b" and "a:b"), and from a plain "a-b". */
    size_t k = 0;
    for (size_t i = 0; i < n && k < PREFIX_MAX; i++) {
        char c = plain_byte((unsigned char)text[i]) ? text[i] : '-';
        if (k == 0 && c == '-')
            continue;
        out[k++] = c;
    }
    char hex[AR_SHA256_HEX];
    ar_sha256_hex_of(text, n, hex);
    snprintf(out + k, AR_GIT_COMPONENT_SIZE - k, "%s%.8s", k ? "-" : "job-", hex);
}

void ar_git_ref_component(const char *text, char out[AR_GIT_COMPONENT_SIZE])
{
    component(text, 1, out);
}

void ar_git_tree_session_id(char out[AR_GIT_SESSION_SIZE])
{
    unsigned short rnd = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, &rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rnd = (unsigned short)((unsigned long)ts.tv_nsec ^ (unsigned long)getpid());
    }
    if (fd >= 0)
        close(fd);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char when[24];
    strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
    snprintf(out, AR_GIT_SESSION_SIZE, "%s-%04x", when, (unsigned)rnd);
}

void ar_git_tree_branch(const char *session, const char *job, char *out, size_t size)
{
    char part[AR_GIT_COMPONENT_SIZE];
    const char *text = job ? job : "run";
    /* The integration branch's name is the merge's, never a job's (issue 57 #6). */
    component(text, strcasecmp(text, AR_GIT_MERGED_COMPONENT) != 0, part);
    snprintf(out, size, "agentrun/%s/%s", session, part);
}

/* 1 when p begins with shape: 'd' a decimal digit, 'x' a lowercase hex digit, else itself. */
static int shaped(const char *p, const char *shape)
{
    for (; *shape; p++, shape++) {
        int ok = *shape == 'd'   ? *p >= '0' && *p <= '9'
                 : *shape == 'x' ? (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')
                                 : *p == *shape;
        if (!ok)
            return 0;
    }
    return 1;
}

int ar_git_tree_branch_ours(const char *name)
{
    /* ar_git_tree_branch()'s shape: the prefix, a session id of ar_git_tree_session_id(),
     * one component. */
    static const char prefix[] = "agentrun/", session[] = "dddddddd-dddddd-xxxx/";
    if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    const char *p = name + sizeof(prefix) - 1;
    if (!shaped(p, session)) /* stops at the first byte that does not fit, a NUL too */
        return 0;
    p += sizeof(session) - 1;
    return *p && !strchr(p, '/') && strlen(p) < AR_GIT_COMPONENT_SIZE &&
           ar_git_branch_name_ok(name);
}

char *ar_git_tree_default_dir(void)
{
    const char *dir = getenv("AGENTRUN_WORKTREE_DIR");
    if (dir && *dir)
        return strdup(dir);
    char *out = NULL;
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    /* XDG: a relative path in the variable is to be ignored. */
    if (state && state[0] == '/')
        return asprintf(&out, "%s/agentrun/worktrees", state) < 0 ? NULL : out;
    if (home && *home)
        return asprintf(&out, "%s/.local/state/agentrun/worktrees", home) < 0 ? NULL : out;
    return NULL;
}

/* ---- helpers of the worktree code (git/internal.h) ------------------------------- */

char *ar_git_next_line(const char *text, size_t len, size_t *off)
{
    if (*off >= len)
        return NULL;
    const char *p = text + *off, *nl = memchr(p, '\n', len - *off);
    size_t n = nl ? (size_t)(nl - p) : len - *off;
    *off += n + (nl ? 1 : 0);
    return strndup(p, n);
}

int ar_git_is_oid(const char *s)
{
    size_t n = strspn(s, "0123456789abcdef");
    return s[n] == '\0' && (n == 40 || n == 64);
}

/* The folders agentrun makes are the user's alone: worktrees hold the repository's files. */
int ar_git_make_dirs(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    int rc = 0;
    for (char *s = p + 1; rc == 0; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            rc = -1;
        else if (!ar_is_dir(p))
            rc = -1, errno = ENOTDIR;
        *s = c;
        if (!c)
            break;
    }
    free(p);
    return rc;
}

void ar_git_remove_empty_parents(const char *path, const char *stop)
{
    char *p = strdup(path);
    size_t h = strlen(stop);
    for (char *slash; p && (slash = strrchr(p, '/')) && (size_t)(slash - p) > h;) {
        *slash = '\0';
        if (rmdir(p) != 0)
            break;
    }
    free(p);
}

int ar_git_path_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}
