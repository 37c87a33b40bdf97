/* agentrun's temporary files: their names, and the sweep of a killed process's (temp.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/temp.h"

#define PREFIX "agentrun-"

const char *ar_temp_root(void)
{
    const char *dir = getenv("TMPDIR");
    struct stat st;
    if (dir && *dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return dir;
    return "/tmp";
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    /* FTW_PHYS: a symbolic link is removed, never followed. */
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void ar_remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The pid in "agentrun-<tag>-<pid>-XXXXXX", or 0 when the name is not one of ours. */
static pid_t owner_of(const char *name)
{
    if (strncmp(name, PREFIX, sizeof(PREFIX) - 1) != 0)
        return 0;
    const char *last = strrchr(name, '-');
    if (!last || strlen(last + 1) != 6 || last == name)
        return 0;
    const char *p = last;
    while (p > name + sizeof(PREFIX) - 1 && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == last || p[-1] != '-' || p - 1 < name + sizeof(PREFIX))
        return 0; /* no tag, or no pid: an old name, or not ours */
    long pid = strtol(p, NULL, 10);
    return pid > 0 && pid < 1L << 30 ? (pid_t)pid : 0;
}

unsigned ar_temp_sweep(const char *root)
{
    if (!root)
        root = ar_temp_root();
    DIR *d = opendir(root);
    if (!d)
        return 0;
    unsigned removed = 0;
    uid_t me = getuid();
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        pid_t pid = owner_of(e->d_name);
        struct stat st;
        /* Ours (this user's), and its maker is gone: ESRCH, not EPERM (alive, another's). */
        if (!pid || pid == getpid() ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != me ||
            kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        char *path = NULL;
        if (asprintf(&path, "%s/%s", root, e->d_name) < 0)
            break;
        if (S_ISDIR(st.st_mode))
            ar_remove_tree(path);
        else
            unlink(path);
        removed++;
        free(path);
    }
    closedir(d);
    return removed;
}

/*
 * The sweep runs on a thread of its own, beside the process's first call: it reads the
 * whole temporary directory, which on a busy machine holds thousands of entries, and
 * what it removes is only ever a dead process's, never a name this process makes. The
 * process waits for it at exit, so what it found is gone by the time the process is.
 * And it runs at most once a minute for a user and a directory (a stamp file's mtime):
 * a batch of 1000 `agentrun run`s reads /tmp once a minute, not 1000 times, and the
 * thread does not take a core from every call.
 */
#define SWEEP_EVERY_S 60

static pthread_t sweeper;
static int sweeping;
static pid_t sweep_owner; /* a fork of ours exits without a thread to wait for */
static char *sweep_dir;

static char *stamp_path(const char *root)
{
    char *path = NULL;
    if (asprintf(&path, "%s/" PREFIX "swept-%ld", root, (long)getuid()) < 0)
        return NULL;
    return path;
}

int ar_temp_sweep_due(const char *root)
{
    char *stamp = stamp_path(root ? root : ar_temp_root());
    struct stat st;
    time_t now = time(NULL);
    /* Only a stamp of our own counts: another user's cannot stop our sweeps. */
    int fresh = stamp && lstat(stamp, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
                st.st_mtime <= now && now - st.st_mtime < SWEEP_EVERY_S;
    free(stamp);
    return !fresh;
}

void ar_temp_sweep_stamp(const char *root)
{
    char *stamp = stamp_path(root ? root : ar_temp_root());
    int fd = stamp ? open(stamp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    if (fd >= 0) {
        futimens(fd, NULL);
        close(fd);
    }
    free(stamp);
}

static void *sweep_thread(void *arg)
{
    /* The stamp first: processes that start meanwhile leave this sweep to us. */
    ar_temp_sweep_stamp(arg);
    ar_temp_sweep(arg);
    return NULL;
}

static void join_sweeper(void)
{
    if (sweeping && sweep_owner == getpid())
        pthread_join(sweeper, NULL);
    sweeping = 0;
    free(sweep_dir);
    sweep_dir = NULL;
}

static void start_sweep(void)
{
    /* The root is read here, on the caller's thread: $TMPDIR is not read beside a setenv. */
    sweep_dir = strdup(ar_temp_root());
    if (!sweep_dir || !ar_temp_sweep_due(sweep_dir)) {
        free(sweep_dir);
        sweep_dir = NULL;
        return;
    }
    pthread_attr_t attr;
    if (atexit(join_sweeper) == 0 && pthread_attr_init(&attr) == 0) {
        /* Signals stay the caller's: the thread starts with every one blocked. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_attr_setstacksize(&attr, (size_t)256 << 10);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        sweep_owner = getpid();
        sweeping = pthread_create(&sweeper, &attr, sweep_thread, sweep_dir) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (!sweeping)
        sweep_thread(sweep_dir);
}

void ar_temp_sweep_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, start_sweep);
}

char *ar_temp_template(const char *tag)
{
    ar_temp_sweep_once(); /* from its first temporary file on: what killed processes left */
    char *path = NULL;
    if (asprintf(&path, "%s/" PREFIX "%s-%ld-XXXXXX", ar_temp_root(), tag, (long)getpid()) < 0)
        return NULL;
    return path;
}

char *ar_temp_dir_make(const char *tag, struct ar_error *err)
{
    char *path = ar_temp_template(tag);
    if (!path) {
        ar_error_set(err, AR_ENOMEM, tag, "out of memory");
        return NULL;
    }
    if (!mkdtemp(path)) { /* 0700 */
        int e = errno;
        ar_error_set_sys(err, AR_EIO, e, path, "cannot create '%s': %s", path, strerror(e));
        free(path);
        return NULL;
    }
    return path;
}
