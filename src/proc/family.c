/*
 * A call's family: every process its leader started, directly or not, wherever
 * it went since. A process group is not enough: codex's shell snapshot is a
 * `bash -lc` in a session of its own (setsid), and a daemon's parent exits at
 * once. The rule, checked on one snapshot of /proc:
 *
 *   a process belongs to the call when it is the leader, is in the leader's
 *   group or session, was found in the family before (by pid and start time,
 *   so a reused pid is never taken for it), or its parent, group or session
 *   leader belongs to the call;
 *
 * and, when the process adopts orphans (ar_adopt_orphans(): a child
 * subreaper, so an orphan below us is reparented to us and not to init), an
 * adopted orphan nothing links to a call belongs to the last call still
 * running that may have started it (one already running when it started).
 * Two calls running at once can make an orphan neither can prove theirs: it
 * outlives the first to end and ends with the other.
 *
 * Without adoption a process whose parent exited is found only if an earlier
 * walk saw it (the census below, each kill, each check after the leader exit);
 * with adoption nothing below the process escapes: an orphan comes to us.
 *
 * Signals go to one process at a time through a pidfd opened before its start
 * time is checked, so a pid that was reused meanwhile is never signalled; the
 * group gets kill(-pgid) only while its id cannot have been reused.
 *
 * The list of live families is process-wide (the subreaper is), under one mutex.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "agentrun/agentrun.h"
#include "proc/internal.h"
#include "util/macros.h"

/* How often the families learn their members while nothing ends (one scan for all):
 * CENSUS_MIN_MS after a spawn (a CLI starts its helpers first), then at doubling
 * intervals up to CENSUS_MAX_MS; never more often than every CENSUS_MIN_MS. */
#define CENSUS_MIN_MS 50
#define CENSUS_MAX_MS 1000

struct pinfo {
    pid_t pid, ppid, pgid, sid;
    char state;
    int threads;
    unsigned long long start; /* clock ticks since boot */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ar_family *families; /* every live family, under lock */
static int adopting;               /* under lock */
static uint64_t census_at;         /* under lock: when the next census is due */
static uint64_t census_step;       /* under lock: the interval after it */
/* The last snapshot of /proc, under lock: reused, so a walk does not allocate. */
static struct pinfo *table;
static size_t ntable, captable;
static unsigned char *mark;
static size_t *members; /* indices of the marked entries, in the order found */

/* ---- /proc ----------------------------------------------------------------- */

/* pid (comm) state ppid pgrp session … starttime (field 22); comm may hold ") ". */
static int parse_stat(const char *buf, struct pinfo *p)
{
    const char *rp = strrchr(buf, ')');
    int pid, ppid, pgid, sid;
    if (sscanf(buf, "%d", &pid) != 1 || !rp ||
        sscanf(rp + 1,
               " %c %d %d %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %d %*s %llu",
               &p->state, &ppid, &pgid, &sid, &p->threads, &p->start) != 6)
        return -1;
    p->pid = pid;
    p->ppid = ppid;
    p->pgid = pgid;
    p->sid = sid;
    return 0;
}

static int read_stat(pid_t pid, struct pinfo *p)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return parse_stat(buf, p);
}

/* The start time of pid, or 0 when it is gone. */
static unsigned long long start_of(pid_t pid)
{
    struct pinfo p;
    return read_stat(pid, &p) == 0 ? p.start : 0;
}

/*
 * Reading a process's stat costs ~10-30 µs, and a machine runs hundreds that
 * were there before any call. The kernel hands out pids in increasing order,
 * wrapping at pid_max: a process younger than a leader has a pid after the
 * leader's, up to the last pid handed out, unless the numbers went round since
 * (then the range wraps once, and after a whole round anything goes). The
 * census notes the last pid at least once a second, so a wrap is never missed
 * (a round is 32768 forks at the least). Only these pids are read.
 */
static pid_t pid_last;          /* under lock: the last pid handed out, as last seen */
static unsigned long pid_round; /* under lock: how often the pids wrapped since we looked */

static void saw_pid(pid_t last)
{
    if (last < pid_last)
        pid_round++;
    pid_last = last;
}

/* The last pid the kernel handed out, from /proc/loadavg's last field, or 0. */
static pid_t read_last_pid(void)
{
    char buf[256];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *sp = strrchr(buf, ' ');
    return sp ? (pid_t)atol(sp + 1) : 0;
}

/* pid may be f's leader or younger than it. */
static int may_belong(const struct ar_family *f, pid_t pid)
{
    if (!pid_last || pid == f->leader)
        return 1;
    if (pid_round == f->round)
        return pid_last < f->leader || (pid > f->leader && pid <= pid_last);
    if (pid_round == f->round + 1 && pid_last < f->leader)
        return pid > f->leader || pid <= pid_last;
    return 1;
}

static int wanted(const struct ar_family *only, pid_t pid)
{
    if (only)
        return may_belong(only, pid);
    if (!families)
        return 1;
    for (const struct ar_family *f = families; f; f = f->next)
        if (may_belong(f, pid))
            return 1;
    return 0;
}

static int grow_table(void)
{
    size_t cap = captable ? captable * 2 : 512;
    struct pinfo *t = realloc(table, cap * sizeof(*t));
    if (t)
        table = t;
    unsigned char *m = realloc(mark, cap);
    if (m)
        mark = m;
    size_t *x = realloc(members, cap * sizeof(*x));
    if (x)
        members = x;
    if (!t || !m || !x)
        return -1;
    captable = cap;
    return 0;
}

/*
 * While we adopt orphans, every process that may belong to a call is below us:
 * a call's processes are its leader's descendants (a group or session is only
 * entered by fork, or by a process of the same session that is ours too), and
 * one whose parent exits comes to us (or to a subreaper below us), never to
 * init. So the walk need not read the whole machine: it goes down from our own
 * children through the kernel's list of each task's children
 * (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN), and costs what our own
 * tree holds, however many other processes run. Without that file, or without
 * adoption, read_table() scans all of /proc as before.
 */
static int is_dead(const struct pinfo *p)
{
    return p->state == 'Z' || p->state == 'X';
}

static int tree_ok = -1; /* under lock: /proc/self/task/TID/children exists (-1: not yet known) */
static pid_t me;         /* under lock: our pid, as of the last read_table() */
/* Under lock, during a walk for one family (read_table(only)): the other live families,
 * whose leaders and what hangs below them are not read (see add_pid()). */
static const struct ar_family *walk_for;

/* pid leads a live family other than walk_for, and has not been reaped. Under lock. */
static int other_leader(pid_t pid)
{
    for (const struct ar_family *g = families; walk_for && g; g = g->next)
        if (g != walk_for && g->leader == pid && !g->reaped)
            return 1;
    return 0;
}

/* Adds pid to the table (its stat read now) unless it is there already. Under lock. The
 * keeper is no call's and starts nothing: neither it nor what it has is read. In a walk
 * for one family, neither is another family's leader that still runs, nor its tree: no
 * process of one call can be below another call's leader (each leader is our child in a
 * session of its own, a process enters a group or session only of its own session, and an
 * orphan goes up to us, never across), so a call's end reads what it owns and our
 * children's list, not every call running beside it (issue 59: at -j 32 each end read the
 * other 31 trees, 60 files of /proc a job). */
static int add_pid(pid_t pid)
{
    if (ar_keeper_is(pid) || other_leader(pid))
        return 0;
    for (size_t i = 0; i < ntable; i++)
        if (table[i].pid == pid)
            return 0;
    if (ntable == captable && grow_table() != 0)
        return -1;
    if (read_stat(pid, &table[ntable]) == 0)
        ntable++;
    return 0;
}

/* Adds the children listed in one children file. Returns -1 when it cannot be opened. */
static int add_children_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    long pid = 0;
    int in_num = 0, rc = 0;
    ssize_t n;
    /* "PID PID … ": a number may straddle two reads. */
    while (rc == 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
                in_num = 1;
            } else if (in_num) {
                if (add_pid((pid_t)pid) != 0)
                    rc = -1;
                pid = 0;
                in_num = 0;
            }
        }
    }
    if (rc == 0 && in_num && add_pid((pid_t)pid) != 0)
        rc = -1;
    close(fd);
    return rc;
}

/*
 * Adds the children of every thread of pid (a child is listed under the thread
 * that forked it). One thread: its file alone; more: the list of tasks first.
 * Returns -1 when a list cannot be read (for ourselves: the walk cannot be trusted).
 */
static int add_children(pid_t pid, int threads)
{
    char path[96];
    if (threads == 1) {
        snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
        return add_children_file(path);
    }
    snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)pid, atol(de->d_name));
        /* A thread that just ended has no file: its children went to another thread. */
        if (add_children_file(path) != 0 && errno != ENOENT)
            rc = -1;
    }
    closedir(d);
    return rc;
}

/* Reads into table every process below us, from the kernel's child lists. Under lock. */
static int read_tree(void)
{
    pid_t self = me;
    ntable = 0;
    size_t top;
    do {
        /* Our own children last of all, again: one whose parent exited during the walk
         * came to us after we read our list, and is read now (until no new one comes). */
        top = ntable;
        if (add_children(self, 0) != 0)
            return -1;
        for (size_t i = top; i < ntable; i++)
            if (!is_dead(&table[i]) && add_children(table[i].pid, table[i].threads) != 0 &&
                errno != ENOENT && errno != ESRCH)
                return -1; /* gone meanwhile is fine: its children come to us */
    } while (ntable != top);
    return 0;
}

/*
 * Reads into table the processes that may belong to `only` (NULL: to any
 * family; with none, all). Returns 0, or -1 when /proc cannot tell. Under lock.
 */
static int read_table(const struct ar_family *only)
{
    me = getpid();
    if (adopting && tree_ok) {
        /* The last pid, noted as the scan does: a later scan (adoption off) relies on it. */
        saw_pid(read_last_pid());
        if (tree_ok < 0) {
            char path[64];
            snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)me);
            tree_ok = access(path, R_OK) == 0;
        }
        walk_for = only;
        int rc = tree_ok ? read_tree() : -1;
        walk_for = NULL;
        if (rc == 0)
            return 0;
    }
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    ntable = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        if (ntable == captable && grow_table() != 0) {
            closedir(d);
            return -1;
        }
        table[ntable++].pid = (pid_t)atol(de->d_name);
    }
    closedir(d);
    /* After the listing: every pid listed was handed out by then. */
    saw_pid(read_last_pid());
    size_t k = 0;
    for (size_t i = 0; i < ntable; i++)
        if (wanted(only, table[i].pid) && read_stat(table[i].pid, &table[k]) == 0)
            k++;
    ntable = k;
    return 0;
}

/* ---- Who belongs ------------------------------------------------------------- */

static int known(const struct ar_family *f, const struct pinfo *p)
{
    for (size_t i = 0; i < f->nknown; i++)
        if (f->known[i].pid == p->pid && f->known[i].start == p->start)
            return 1;
    return 0;
}

/* The leader of a live family, not yet reaped: never an orphan, and never ours to reap. */
static int is_leader(pid_t pid)
{
    for (struct ar_family *g = families; g; g = g->next)
        if (g->leader == pid && !g->reaped)
            return 1;
    return 0;
}

/* An orphan reparented to us (only while adopting): our child, but no leader of ours. */
static int is_adopted(const struct pinfo *p)
{
    return adopting && p->ppid == me && !is_leader(p->pid) && !ar_keeper_is(p->pid);
}

/* f is the last live family that may have started a process that started at `start`. */
static int last_candidate(const struct ar_family *f, unsigned long long start)
{
    if (f->start > start)
        return 0;
    for (struct ar_family *g = families; g; g = g->next)
        if (g != f && g->start <= start)
            return 0;
    return 1;
}

static int seed(struct ar_family *f, const struct pinfo *p)
{
    pid_t l = f->leader;
    if (p->pid == l && !f->reaped)
        return 1;
    /* Once reaped, the leader's id is ours only while its group or session lives on. */
    if ((p->pgid == l || p->sid == l) && !f->ids_gone)
        return 1;
    if (known(f, p))
        return 1;
    return is_adopted(p) && last_candidate(f, p->start);
}

/* Marks f's members in table: the seeds, then whatever hangs below them. Under lock. */
static void find_members(struct ar_family *f)
{
    pid_t self = me;
    int ids_seen = 0;
    size_t n = 0;
    for (size_t i = 0; i < ntable; i++) {
        const struct pinfo *p = &table[i];
        if (p->pgid == f->leader || p->sid == f->leader)
            ids_seen = 1;
        mark[i] = p->pid != self && p->pid > 1 && seed(f, p);
        if (mark[i])
            members[n++] = i;
    }
    if (f->reaped && !ids_seen)
        f->ids_gone = 1;
    /* Down the tree until nothing more hangs below a member (never up: not agentrun). */
    for (size_t before = 0; before != n;) {
        before = n;
        for (size_t i = 0; i < ntable; i++) {
            const struct pinfo *p = &table[i];
            if (mark[i] || p->pid == self || p->pid <= 1)
                continue;
            for (size_t k = 0; k < n; k++) {
                pid_t m = table[members[k]].pid;
                if (p->ppid == m || p->pgid == m || p->sid == m) {
                    mark[i] = 1;
                    members[n++] = i;
                    break;
                }
            }
        }
    }
}

/* Remembers the members just found, and forgets the known ones that are gone. Under lock. */
static void learn(struct ar_family *f)
{
    size_t k = 0;
    for (size_t i = 0; i < f->nknown; i++) {
        for (size_t j = 0; j < ntable; j++) {
            if (mark[j] && table[j].pid == f->known[i].pid && table[j].start == f->known[i].start) {
                f->known[k++] = f->known[i];
                break;
            }
        }
    }
    f->nknown = k;
    for (size_t j = 0; j < ntable; j++) {
        if (!mark[j] || known(f, &table[j]))
            continue;
        if (f->nknown == f->capknown) {
            size_t cap = f->capknown ? f->capknown * 2 : 8;
            struct ar_member *m = realloc(f->known, cap * sizeof(*m));
            if (!m)
                return; /* it is still signalled now; only a later walk may miss it */
            f->known = m;
            f->capknown = cap;
        }
        f->known[f->nknown++] = (struct ar_member){ table[j].pid, table[j].start, 0 };
    }
}

/* ---- Signals ----------------------------------------------------------------- */

/* Sends sig to pid if it is still the process that started at `start`. */
static void send_to(pid_t pid, unsigned long long start, int sig)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        /* The fd holds this very process: checked now, the check cannot go stale. */
        if (start_of(pid) == start)
            syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
        close(fd);
        return;
    }
    if (errno != ENOSYS)
        return; /* ESRCH: gone */
#endif
    if (start_of(pid) == start)
        kill(pid, sig);
}

/* Reaps the adopted orphans that died: nobody else will. Under lock, after read_table. */
static void reap_adopted(void)
{
    for (size_t i = 0; i < ntable; i++)
        if (is_dead(&table[i]) && is_adopted(&table[i]))
            waitpid(table[i].pid, NULL, WNOHANG);
}

static void unlist(struct ar_family *f)
{
    if (!f->listed)
        return;
    if (f->prev)
        f->prev->next = f->next;
    else
        families = f->next;
    if (f->next)
        f->next->prev = f->prev;
    f->listed = 0;
}

int ar_family_end(struct ar_family *f, int sig)
{
    pthread_mutex_lock(&lock);
    /* The walk first: a signal to a parent could orphan its children before we saw them. */
    int walked = read_table(f) == 0;
    if (walked) {
        reap_adopted();
        find_members(f);
        learn(f);
    }
    /* The group in one call (SIGTERM once), while its id is surely still the leader's. */
    int group_now = sig && !f->ids_gone && (sig != f->group_sig || sig == SIGKILL);
    if (group_now) {
        f->group_sig = sig;
        kill(-f->leader, sig);
    }
    int alive = 0;
    if (!walked) {
        /* No /proc: the group is all we know of. */
        alive = !f->ids_gone && kill(-f->leader, 0) == 0;
    }
    for (size_t i = 0; walked && i < ntable; i++) {
        const struct pinfo *p = &table[i];
        if (!mark[i] || is_dead(p))
            continue;
        alive++;
        for (size_t k = 0; sig && k < f->nknown; k++) {
            struct ar_member *m = &f->known[k];
            /* SIGTERM once per member; SIGKILL as often as it takes. */
            if (m->pid != p->pid || m->start != p->start || (m->sig == sig && sig != SIGKILL))
                continue;
            m->sig = sig;
            /* The group's members just had it (a second SIGTERM is not the same as one). */
            if (!(group_now && p->pgid == f->leader))
                send_to(m->pid, m->start, sig);
        }
    }
    /* Gone: from now on it may own no orphan, so the calls still running take them. */
    if (!alive && f->reaped)
        unlist(f);
    pthread_mutex_unlock(&lock);
    return alive;
}

/* ---- The list of families ---------------------------------------------------------- */

void ar_family_lock(void)
{
    pthread_mutex_lock(&lock);
}

void ar_family_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

unsigned long long ar_family_clock(void)
{
#ifdef CLOCK_BOOTTIME
    /* /proc's start time is CLOCK_BOOTTIME at the fork, in ticks of USER_HZ. */
    struct timespec ts;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz > 0 && hz <= 1000000000L && clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
        return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
               (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long long)hz);
#endif
    return 0;
}

void ar_family_join(struct ar_family *f, pid_t leader, unsigned long long born, uint64_t now_ms)
{
    memset(f, 0, sizeof(*f));
    f->leader = leader;
    /* Just handed out: the last pid as of now. */
    saw_pid(leader);
    f->round = pid_round;
    /* The clock just before the spawn, not the leader's stat: reading that waits until
     * the child's exec is done (0.3-0.8 ms in which the loop stands still). It may be a
     * tick early, which changes only the claim on an orphan started in that same tick, and
     * ticks cannot order those anyway. Where there is no clock, /proc still has the
     * unreaped leader. */
    f->start = born ? born : start_of(leader);
    f->prev = NULL;
    f->next = families;
    if (families)
        families->prev = f;
    families = f;
    f->listed = 1;
    /* A new CLI starts its helpers now: look soon, then less and less often. */
    if (!census_at || census_at > now_ms + CENSUS_MIN_MS)
        census_at = now_ms + CENSUS_MIN_MS;
    census_step = CENSUS_MIN_MS;
}

void ar_family_reaped(struct ar_family *f)
{
    pthread_mutex_lock(&lock);
    f->reaped = 1;
    pthread_mutex_unlock(&lock);
}

void ar_family_leave(struct ar_family *f)
{
    pthread_mutex_lock(&lock);
    unlist(f);
    pthread_mutex_unlock(&lock);
    free(f->known);
    f->known = NULL;
    f->nknown = f->capknown = 0;
}

void ar_family_census(uint64_t now_ms)
{
    pthread_mutex_lock(&lock);
    if (families && now_ms >= census_at && read_table(NULL) == 0) {
        census_step = AR_MIN(census_step * 2, CENSUS_MAX_MS);
        census_at = now_ms + census_step;
        for (struct ar_family *f = families; f; f = f->next) {
            find_members(f);
            learn(f);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* A child of ours has ended and waits to be reaped (looked at, not reaped). */
static int zombie_child(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != 0;
}

void ar_family_reap_orphans(void)
{
    pthread_mutex_lock(&lock);
    /* The walk only when some child is a zombie: after a call's leader was reaped there is
     * usually none, and the walk is the most of what a SIGCHLD costs. */
    if (adopting && zombie_child() && read_table(NULL) == 0)
        reap_adopted();
    pthread_mutex_unlock(&lock);
}

unsigned long long ar_proc_start_time(long pid)
{
    return pid > 0 ? start_of((pid_t)pid) : 0;
}

int ar_adopt_orphans(int on)
{
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
    pthread_mutex_lock(&lock);
    int rc = prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0, 0, 0, 0) == 0 ? 0 : -1;
    if (rc == 0)
        adopting = on != 0;
    pthread_mutex_unlock(&lock);
    return rc;
#else
    return on ? -1 : 0;
#endif
}
