/*
 * The keeper: every CLI ends with the process that started it, even when that
 * process dies by SIGKILL, which no handler of ours ever sees (a CI step's hard
 * timeout, the OOM killer, `timeout -s KILL`).
 *
 * Once ar_end_children_on_exit(1) is on, the first spawn forks a small watcher
 * (the keeper) that holds one end of a socket pair; this process holds the
 * other, close-on-exec, so no CLI inherits it. Each spawn tells the keeper the
 * leader's pid, which is also its process group and session id (children are
 * spawned with setsid); each finished child takes it back. When our end closes,
 * because we exited or were killed, the keeper reads EOF, stops every group still
 * listed and, on Linux, every process below them found in /proc by its group,
 * session or parent (a shell that made a session of its own), then SIGKILLs them
 * all and exits. So a CLI's node children
 * (grandchildren of ours) end with it, which PR_SET_PDEATHSIG cannot give: that
 * reaches only the process that set it, and posix_spawn (sys.c) has no hook to
 * set it before exec anyway.
 *
 * The keeper is forked, not exec'd, from a process that may have threads: it
 * calls only async-signal-safe functions, keeps its list in static memory and
 * never returns. It leaves our session (a Ctrl-C on the terminal is ours to
 * handle; the keeper must outlive it) and holds none of our descriptors, so a
 * reader of our stdout or stderr sees EOF when we exit, not when it does.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "agentrun/agentrun.h"
#include "proc/internal.h"

enum { KEEP_ADD = 1, KEEP_DROP = 2 };

/* More groups than this at once are not listed (a -j is at most 1024). */
#define KEEPER_MAX 8192

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int enabled;
static int sock = -1; /* our end; -1 before the keeper starts */
static pid_t keeper;  /* its pid, 0 when none */
static pid_t owner;   /* the process that started it: a fork of ours has none */
static size_t listed; /* how many leaders we told it of and did not take back */

/* The keeper's list: written only in the keeper, after the fork. */
static int32_t kept[KEEPER_MAX];
static size_t nkept;

static int is_kept(long id)
{
    for (size_t i = 0; i < nkept; i++)
        if (kept[i] == id)
            return 1;
    return 0;
}

#ifdef __linux__
/* Parses a decimal number of [p, end); -1 if there is none. */
static long number(const char **p, const char *end)
{
    long v = -1;
    while (*p < end && **p == ' ')
        (*p)++;
    for (; *p < end && **p >= '0' && **p <= '9'; (*p)++)
        v = (v < 0 ? 0 : v * 10) + (**p - '0');
    return v;
}

/*
 * One look at /proc: each process not listed whose group, session or parent is
 * listed is stopped (it can then neither fork nor exit, so nothing below it leaves
 * the tree while we look) and listed. Returns how many it added. Raw getdents64,
 * open and read: nothing here may allocate.
 */
static int stop_members(void)
{
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return 0;
    char ents[8192];
    int added = 0;
    long n;
    while ((n = syscall(SYS_getdents64, dir, ents, sizeof(ents))) > 0) {
        for (long off = 0; off < n;) {
            const char *name = ents + off + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
            unsigned short reclen;
            memcpy(&reclen, ents + off + 16, sizeof(reclen));
            off += reclen;
            size_t len = strlen(name);
            const char *q = name;
            long pid = number(&q, name + len);
            if (pid <= 1 || q != name + len || len > 20 || is_kept(pid))
                continue;
            char path[64] = "/proc/";
            memcpy(path + 6, name, len);
            memcpy(path + 6 + len, "/stat", 6);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            char buf[1024];
            ssize_t r = read(fd, buf, sizeof(buf));
            close(fd);
            if (r <= 0)
                continue;
            /* "pid (comm) state ppid pgrp session ...": comm may hold ") ", so the last ')'. */
            const char *rp = NULL;
            for (ssize_t i = 0; i < r; i++)
                if (buf[i] == ')')
                    rp = buf + i;
            if (!rp || rp + 4 > buf + r)
                continue;
            const char *p = rp + 4, *end = buf + r; /* past ") S " */
            long ppid = number(&p, end), pgrp = number(&p, end), sid = number(&p, end);
            if ((is_kept(ppid) || is_kept(pgrp) || is_kept(sid)) && nkept < KEEPER_MAX) {
                kill((pid_t)pid, SIGSTOP);
                kept[nkept++] = (int32_t)pid;
                added++;
            }
        }
    }
    close(dir);
    return added;
}
#endif

static void keeper_main(int fd)
{
    setsid();
    struct sigaction ign;
    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, NULL);
    sigaction(SIGHUP, &ign, NULL);
    sigaction(SIGQUIT, &ign, NULL);
    sigaction(SIGPIPE, &ign, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* None of our descriptors: the socket becomes 3, the standard ones /dev/null. */
    int null = open("/dev/null", O_RDWR);
    if (fd != 3)
        dup2(fd, 3);
    for (int i = 0; i < 3 && null >= 0; i++)
        dup2(null, i);
#if defined(__linux__) && defined(SYS_close_range)
    if (syscall(SYS_close_range, 4U, ~0U, 0U) != 0)
#endif
    {
        struct rlimit rl;
        long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                       ? (long)rl.rlim_cur
                       : 65536;
        for (long i = 4; i < max && i < 65536; i++)
            close((int)i);
    }
    if (chdir("/") != 0) {
        /* Staying where we were only keeps a directory busy. */
    }
    for (;;) {
        int32_t msg[2];
        ssize_t r = recv(3, msg, sizeof(msg), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)sizeof(msg))
            break; /* EOF: the process is gone (or closed its end) */
        if (msg[0] == KEEP_ADD && nkept < KEEPER_MAX) {
            kept[nkept++] = msg[1];
        } else if (msg[0] == KEEP_DROP) {
            for (size_t i = 0; i < nkept; i++)
                if (kept[i] == msg[1]) {
                    kept[i] = kept[--nkept];
                    break;
                }
        }
    }
    /* Stop the groups first, then everything below them that left the group (a shell in
     * a session of its own, a node child of the CLI): the walk repeats until a look finds
     * no one new. Then SIGKILL to every group and every process found. */
    size_t groups = nkept;
    for (size_t i = 0; i < groups; i++)
        kill(-(pid_t)kept[i], SIGSTOP);
#ifdef __linux__
    for (int round = 0; groups && round < 64 && stop_members() > 0; round++) {
    }
#endif
    for (size_t i = 0; i < nkept; i++) {
        kill(-(pid_t)kept[i], SIGKILL);
        if (i >= groups)
            kill((pid_t)kept[i], SIGKILL);
    }
    _exit(0);
}

/*
 * At a normal exit the keeper has nothing listed (each child took itself back) and
 * ends as soon as our end closes; waiting for it here means that when we have
 * exited, so has it: nothing of ours is left running for a moment after us (a
 * caller that checks for leftovers right after we exit would find it). What it
 * still holds, a child we leave running, it ends before we return.
 */
static void reap_keeper(void)
{
    pthread_mutex_lock(&lock);
    if (keeper > 0 && owner == getpid()) {
        if (sock >= 0)
            close(sock);
        sock = -1;
        while (waitpid(keeper, NULL, 0) < 0 && errno == EINTR) {
        }
        keeper = 0;
    }
    pthread_mutex_unlock(&lock);
}

/*
 * Under lock. Once the caller turned the guard off (ar_end_children_on_exit(0)) and
 * nothing is listed, nothing is left to guard: the keeper ends now, beside what the
 * caller still does, so the wait at exit finds it gone (it is reaped there, or by the
 * next start_keeper()).
 */
static void let_go_when_idle(void)
{
    if (!enabled && !listed && sock >= 0 && owner == getpid()) {
        close(sock);
        sock = -1;
    }
}

/* Under lock. Returns 0, or -1 when no keeper could be started. */
static int start_keeper(void)
{
    static int registered;
    if (!registered && atexit(reap_keeper) == 0)
        registered = 1;
    if (keeper > 0 && owner == getpid()) {
        /* One let go earlier (ar_end_children_on_exit(0)): it has ended, or ends now. */
        while (waitpid(keeper, NULL, 0) < 0 && errno == EINTR) {
        }
        keeper = 0;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        keeper_main(sv[1]);
    }
    close(sv[1]);
    sock = sv[0];
    keeper = pid;
    owner = getpid();
    listed = 0;
    return 0;
}

static void tell(int op, pid_t leader)
{
    int32_t msg[2] = { op, (int32_t)leader };
    while (send(sock, msg, sizeof(msg), MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
}

void ar_keeper_add(pid_t leader)
{
    pthread_mutex_lock(&lock);
    if (sock >= 0 && owner != getpid()) {
        /* A fork of ours: that keeper is our parent's, not ours to tell. */
        close(sock);
        sock = -1;
        keeper = 0;
    }
    if (enabled && (sock >= 0 || start_keeper() == 0)) {
        tell(KEEP_ADD, leader);
        listed++;
    }
    pthread_mutex_unlock(&lock);
}

void ar_keeper_drop(pid_t leader)
{
    pthread_mutex_lock(&lock);
    if (sock >= 0 && owner == getpid()) {
        tell(KEEP_DROP, leader);
        if (listed)
            listed--;
        let_go_when_idle();
    }
    pthread_mutex_unlock(&lock);
}

int ar_keeper_is(pid_t pid)
{
    pthread_mutex_lock(&lock);
    int is = keeper && pid == keeper && owner == getpid();
    pthread_mutex_unlock(&lock);
    return is;
}

int ar_end_children_on_exit(int on)
{
    pthread_mutex_lock(&lock);
    enabled = on != 0;
    let_go_when_idle();
    pthread_mutex_unlock(&lock);
    return 0;
}
