/*
 * What the files of src/proc share: the loop structure and the hooks the loop
 * uses to reach its children. Nothing outside src/proc includes this.
 */
#ifndef AR_PROC_INTERNAL_H
#define AR_PROC_INTERNAL_H

#include <sys/types.h>
#include <uv.h>

#include "proc/proc.h"

/*
 * Reads are synchronous inside one callback and consume their buffer before
 * returning, so one scratch area per loop serves every child: 64 children do
 * not cost 64 read buffers.
 */
#define AR_PROC_CHUNK ((size_t)64 << 10)

#define AR_PROC_NSIGNALS 3

struct ar_loop {
    uv_loop_t *uv; /* own_uv, or the caller's loop (ar_loop_attach) */
    uv_loop_t own_uv;
    int attached;              /* uv is the caller's: never run or closed here */
    int detaching;             /* ar_loop_detach() ran: freed once its handles closed */
    int closing;               /* handles whose close callback is still to come */
    struct ar_child *children; /* live children (not yet finishing), a doubly linked list */
    size_t nchildren;
    int cancelled;         /* ar_loop_cancel_all() ran: later spawns fail with AR_EINTERRUPTED */
    int killed;            /* ar_loop_cancel_all() ran twice: every group got SIGKILL */
    struct ar_wait *waits; /* pending ar_wait_start() waits, a doubly linked list */
    int manual_clock;      /* ar_loop_clock_manual() ran: clock_ms is the loop's now */
    uint64_t clock_ms;

    uv_signal_t sigchld; /* reaps our children; unref'd */
    int sigchld_on;

    uv_signal_t sig[AR_PROC_NSIGNALS];
    int sig_watching;
    int sig_seen; /* how many watched signals arrived */
    ar_signal_fn *sig_fn;
    void *sig_arg;

    /* Last, and not zeroed at creation (loop.c): written before they are read. */
    char out_scratch[AR_PROC_CHUNK + 1]; /* stdout reads; +1 so a line can be NUL-terminated */
    char err_scratch[AR_PROC_CHUNK];     /* stderr reads */
};

/* Ends every pending wait of the loop early (defer.c keeps the list). */
void ar_wait_cancel_all(struct ar_loop *loop);

/* The live child after c in its loop's list, or NULL (child.c keeps the list). */
struct ar_child *ar_child_next_live(struct ar_child *c);

/* Reaps the leader if it exited (waitpid WNOHANG) and goes on from there. */
void ar_child_reap(struct ar_child *c);

/* Starts listening for SIGCHLD on the loop (once; later calls return 0). Returns 0 or AR_ESPAWN. */
int ar_loop_watch_children(struct ar_loop *loop, struct ar_error *err);

/*
 * Starts file with argv and env (NULL: environ) in a new session, in cwd, with
 * stdin a pipe (*in_w: our end), stdout out_fd, stderr a pipe (*err_r: our
 * end), every signal at its default and none blocked. name is for messages.
 * Returns 0 with *pid set, or AR_ENOTFOUND/AR_ESPAWN with nothing left open.
 */
int ar_proc_launch(const char *file, const char *name, const char *const *argv, char **env,
                   const char *cwd, int out_fd, int *in_w, int *err_r, pid_t *pid,
                   struct ar_error *err);

/* Non-zero when the first ar_loop_cancel_all() lets the child finish (finish_on_cancel). */
int ar_child_finishes_on_cancel(const struct ar_child *c);

/* Sends SIGKILL to the child's family now, without waiting for the grace (a second signal). */
void ar_child_kill_now(struct ar_child *c);

/*
 * A call's family (family.c): its leader and every process started below it,
 * wherever it went. Embedded in the child; listed process-wide from
 * ar_family_join() to ar_family_leave().
 */
struct ar_member {
    pid_t pid;
    unsigned long long start; /* with pid, the process's identity: pids are reused */
    int sig;                  /* the last signal it was sent */
};

struct ar_family {
    pid_t leader;             /* also the id of its group and session */
    unsigned long long start; /* the leader's start time */
    unsigned long round;      /* how often pids had wrapped when it started (family.c) */
    int reaped;               /* the leader was reaped: its pid may be reused */
    int ids_gone;             /* reaped, and no process was left in its group or session */
    int group_sig;            /* the last signal sent to the group */
    struct ar_member *known;  /* members seen by earlier walks */
    size_t nknown, capknown;
    struct ar_family *prev, *next;
    int listed;
};

/*
 * The keeper (keeper.c): while ar_end_children_on_exit() is on, each leader from its
 * spawn to its child's end, whose group and session are SIGKILLed when this process
 * ends, even by SIGKILL. ar_keeper_is(): pid is the keeper itself (no orphan to adopt).
 */
void ar_keeper_add(pid_t leader);
void ar_keeper_drop(pid_t leader);
int ar_keeper_is(pid_t pid);

/* Held around the spawn and ar_family_join(), so no walk sees a leader it does not know. */
void ar_family_lock(void);
void ar_family_unlock(void);
/* The clock of process start times, in /proc's ticks since boot, read just before a
 * spawn: the child's start time is no earlier. 0 where there is no such clock. */
unsigned long long ar_family_clock(void);
/* Lists f, with leader just spawned at now_ms; born is ar_family_clock() of just before
 * the spawn (0: read the leader's start time from /proc). Under ar_family_lock(). */
void ar_family_join(struct ar_family *f, pid_t leader, unsigned long long born, uint64_t now_ms);
/* The leader was reaped (its status is ours): from now on its pid is no member. */
void ar_family_reaped(struct ar_family *f);
/* Unlists f and frees what it holds. */
void ar_family_leave(struct ar_family *f);
/*
 * Walks the family: sends sig to each live member not sent sig yet (SIGKILL:
 * to each, every time; the group at once with kill(-pgid) while its id is
 * surely the leader's); sig 0 only counts. Returns how many members are
 * still running (zombies do not count).
 */
int ar_family_end(struct ar_family *f, int sig);
/* Every family learns its members, so a process whose parent exits later is still known:
 * one walk for all, 50 ms after a spawn, then at doubling intervals up to once a second;
 * a cheap no-op in between. Called from the children's poll ticks. */
void ar_family_census(uint64_t now_ms);
/* Reaps the adopted orphans that exited (while adopting; a no-op otherwise). */
void ar_family_reap_orphans(void);

/*
 * The child's environment: environ with opts->env applied ("NAME=VALUE" sets,
 * "NAME" removes). *out is a NULL-terminated array of owned strings
 * (ar_proc_free_env()). *path_out borrows the PATH value inside *out, or NULL.
 */
int ar_proc_build_env(const char *const *env, char ***out, const char **path_out,
                      struct ar_error *err);
void ar_proc_free_env(char **env);

/* An unlinked temporary file opened O_RDWR|O_CLOEXEC, created 0600. Returns the fd or -1. */
int ar_proc_open_stdout_file(struct ar_error *err);

#endif
