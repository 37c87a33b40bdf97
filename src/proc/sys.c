/*
 * The POSIX side of a spawn: finding the program, building the environment,
 * the stdout file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/internal.h"
#include "util/file.h"

extern char **environ;

/* 0 when path is an executable regular file, else an errno explaining why not. */
static int check_exec(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (access(path, X_OK) != 0)
        return errno;
    return 0;
}

static char *join_path(const char *dir, size_t dlen, const char *name)
{
    size_t nlen = strlen(name);
    char *p = malloc(dlen + 1 + nlen + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, dlen);
    p[dlen] = '/';
    memcpy(p + dlen + 1, name, nlen + 1);
    return p;
}

static int found_path(const char *argv0, const char *cwd, char **out, struct ar_error *err)
{
    /* A relative path is relative to the child's cwd, where the child will exec it. */
    char *check = NULL;
    if (argv0[0] != '/' && cwd)
        check = join_path(cwd, strlen(cwd), argv0);
    int e = check_exec(check ? check : argv0);
    free(check);
    if (e == ENOENT || e == ENOTDIR)
        return ar_error_set_sys(err, AR_ENOTFOUND, e, argv0, "cannot run '%s': %s", argv0,
                                strerror(e));
    if (e)
        return ar_error_set_sys(err, AR_ESPAWN, e, argv0, "cannot run '%s': %s", argv0,
                                strerror(e));
    *out = strdup(argv0);
    return *out ? 0 : ar_error_set(err, AR_ENOMEM, argv0, "cannot run '%s': out of memory", argv0);
}

int ar_proc_find_program(const char *argv0, const char *cwd, const char *path_env, char **out,
                         struct ar_error *err)
{
    *out = NULL;
    if (!argv0 || !*argv0)
        return ar_error_set(err, AR_ESPAWN, NULL, "cannot run a program with an empty name");
    if (strchr(argv0, '/'))
        return found_path(argv0, cwd, out, err);

    if (!path_env)
        path_env = "/usr/local/bin:/usr/bin:/bin";
    int denied = 0;
    const char *p = path_env;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        char *cand = NULL;
        if (dlen == 0) {
            /* An empty PATH entry means the current directory (execvp's rule). */
            char here[PATH_MAX];
            if (getcwd(here, sizeof(here)))
                cand = join_path(here, strlen(here), argv0);
        } else {
            cand = join_path(p, dlen, argv0);
        }
        if (!cand)
            return ar_error_set(err, AR_ENOMEM, argv0, "cannot run '%s': out of memory", argv0);
        int e = check_exec(cand);
        if (e == 0) {
            *out = cand;
            return 0;
        }
        free(cand);
        /* Like execvp: a match we may not execute is remembered, the search goes on. */
        if (e == EACCES || e == EISDIR)
            denied = e;
        if (!end)
            break;
        p = end + 1;
    }
    if (denied)
        return ar_error_set_sys(err, AR_ESPAWN, denied, argv0, "cannot run '%s': %s", argv0,
                                strerror(denied));
    return ar_error_set_sys(err, AR_ENOTFOUND, ENOENT, argv0, "cannot run '%s': not found on PATH",
                            argv0);
}

static size_t name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* Non-zero when the environ entry e ("NAME=…") is named by an entry of changes. */
static int changed(const char *e, const char *const *changes)
{
    size_t n = name_len(e);
    for (size_t i = 0; changes[i]; i++)
        if (name_len(changes[i]) == n && strncmp(changes[i], e, n) == 0)
            return 1;
    return 0;
}

void ar_proc_free_env(char **env)
{
    if (!env)
        return;
    for (size_t i = 0; env[i]; i++)
        free(env[i]);
    free(env);
}

int ar_proc_build_env(const char *const *changes, char ***out, const char **path_out,
                      struct ar_error *err)
{
    size_t n = 0, m = 0;
    while (environ && environ[n])
        n++;
    while (changes[m])
        m++;
    char **env = calloc(n + m + 1, sizeof(*env));
    if (!env)
        return ar_error_set(err, AR_ENOMEM, NULL, "cannot build the environment: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (changed(environ[i], changes))
            continue;
        if (!(env[k++] = strdup(environ[i])))
            goto nomem;
    }
    for (size_t i = 0; i < m; i++) {
        if (!strchr(changes[i], '='))
            continue;
        /* A name given twice: the later value wins, as with setenv. */
        int dup = 0;
        for (size_t j = i + 1; j < m; j++)
            if (name_len(changes[j]) == name_len(changes[i]) &&
                strncmp(changes[j], changes[i], name_len(changes[i])) == 0)
                dup = 1;
        if (dup)
            continue;
        if (!(env[k++] = strdup(changes[i])))
            goto nomem;
    }
    *path_out = NULL;
    for (size_t i = 0; i < k; i++)
        if (strncmp(env[i], "PATH=", 5) == 0)
            *path_out = env[i] + 5;
    *out = env;
    return 0;
nomem:
    ar_proc_free_env(env);
    return ar_error_set(err, AR_ENOMEM, NULL, "cannot build the environment: out of memory");
}

int ar_proc_open_stdout_file(struct ar_error *err)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir || !ar_is_dir(dir))
        dir = "/tmp";
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    /* No O_TMPFILE (old kernel, some file systems): create, then unlink at once. */
    size_t len = strlen(dir) + sizeof("/agentrun-stdout-XXXXXX");
    char *path = malloc(len);
    if (!path) {
        ar_error_set(err, AR_ENOMEM, NULL, "cannot create the stdout file: out of memory");
        return -1;
    }
    snprintf(path, len, "%s/agentrun-stdout-XXXXXX", dir);
    int mfd = mkostemp(path, O_CLOEXEC);
    if (mfd < 0) {
        int e = errno;
        ar_error_set_sys(err, AR_ESPAWN, e, dir, "cannot create a file in '%s': %s", dir,
                         strerror(e));
        free(path);
        return -1;
    }
    unlink(path);
    free(path);
    return mfd;
}

/*
 * The signals a child gets back at their default: each one our process ignores (an
 * ignored signal stays ignored across exec; a caught one does not, and the C library
 * resets those before exec itself), and the ones a host commonly ignores later (SIGPIPE,
 * SIGXFSZ, and a shell's for a background job). Asked once: a full set had musl's
 * posix_spawn reset all 64 signals in every child, 64 syscalls while we wait for its exec
 * (issue 59: a tenth of a batch's time).
 */
static sigset_t reset_set;
static pthread_once_t reset_once = PTHREAD_ONCE_INIT;

static void find_reset_set(void)
{
    static const int usual[] = { SIGPIPE, SIGXFSZ, SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGCHLD,
                                 SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM };
    sigemptyset(&reset_set);
    for (size_t i = 0; i < sizeof(usual) / sizeof(usual[0]); i++)
        sigaddset(&reset_set, usual[i]);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            sigaddset(&reset_set, sig);
    }
}

int ar_proc_launch(const char *file, const char *name, const char *const *argv, char **env,
                   const char *cwd, int out_fd, int *in_w, int *err_r, pid_t *pid,
                   struct ar_error *err)
{
    int in[2], er[2], rc;
    if (pipe2(in, O_CLOEXEC) != 0)
        goto sys_fail;
    if (pipe2(er, O_CLOEXEC) != 0) {
        int e = errno;
        close(in[0]);
        close(in[1]);
        errno = e;
        goto sys_fail;
    }

    /*
     * posix_spawn, not fork: glibc uses clone(CLONE_VM|CLONE_VFORK), which does
     * not copy our page tables, so a spawn costs the same whether agentrun
     * holds 2 MiB or 200 (uv_spawn forks). dup2 clears FD_CLOEXEC on the
     * child's 0, 1 and 2; every other descriptor of ours is O_CLOEXEC.
     */
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, er[1], 2);
    if (cwd)
        posix_spawn_file_actions_addchdir_np(&fa, cwd);
    /* Its own session and process group, so one kill reaches everything it starts. Our
     * ignored SIGPIPE and our signal mask are not the child's business. */
    sigset_t none;
    sigemptyset(&none);
    pthread_once(&reset_once, find_reset_set);
    posix_spawnattr_setsigdefault(&at, &reset_set);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    rc = posix_spawn(pid, file, &fa, &at, (char *const *)argv, env ? env : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(in[0]);
    close(er[1]);
    if (rc != 0) {
        close(in[1]);
        close(er[0]);
        if (cwd && (rc == ENOENT || rc == ENOTDIR) && !ar_is_dir(cwd))
            return ar_error_set_sys(err, AR_ESPAWN, rc, name, "cannot run '%s' in '%s': %s", name,
                                    cwd, strerror(rc));
        return ar_error_set_sys(err, rc == ENOENT ? AR_ENOTFOUND : AR_ESPAWN, rc, name,
                                "cannot run '%s': %s", name, strerror(rc));
    }
    *in_w = in[1];
    *err_r = er[0];
    return 0;

sys_fail:
    rc = errno;
    return ar_error_set_sys(err, AR_ESPAWN, rc, name, "cannot run '%s': %s", name, strerror(rc));
}

unsigned ar_proc_jobs_within_fd_limit(unsigned want)
{
    struct rlimit rl;
    if (want == 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return want;
    rlim_t need = (rlim_t)AR_PROC_FDS_RESERVED + (rlim_t)want * AR_PROC_FDS_PER_JOB;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        /* The soft limit may be raised up to the hard one without privileges. */
        struct rlimit up = rl;
        up.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl.rlim_cur = up.rlim_cur;
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return want;
    rlim_t room = rl.rlim_cur > AR_PROC_FDS_RESERVED
                      ? (rl.rlim_cur - AR_PROC_FDS_RESERVED) / AR_PROC_FDS_PER_JOB
                      : 0;
    return room ? (unsigned)room : 1;
}
