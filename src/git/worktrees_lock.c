/*
 * A worktree in use is locked: git's own lock (`git worktree lock`), with a
 * reason that names the agentrun process using it, so `git worktree prune`,
 * `git worktree remove` without a double --force, and `agentrun worktrees
 * prune` leave it alone while that process runs. The reason carries the pid
 * and the process's start time, so a lock whose process died (agentrun killed
 * by SIGKILL leaves its locks behind) is told from a live one even after the
 * pid was reused: such a lock no longer protects anything, and prune takes it
 * off (docs/worktrees.md).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "git/run.h"
#include "git/worktrees.h"
#include "proc/proc.h"

#define GIT_TIMEOUT_MS 120000
#define PREFIX         "agentrun pid "

void ar_git_tree_lock_reason(char out[AR_GIT_LOCK_REASON_SIZE])
{
    long pid = (long)getpid();
    snprintf(out, AR_GIT_LOCK_REASON_SIZE, PREFIX "%ld start %llu: a run is using it", pid,
             ar_proc_start_time(pid));
}

int ar_git_tree_lock_live(const char *reason)
{
    long pid = 0;
    unsigned long long start = 0;
    int n = 0;
    if (!reason || strncmp(reason, PREFIX, strlen(PREFIX)) != 0 ||
        sscanf(reason + strlen(PREFIX), "%ld start %llu%n", &pid, &start, &n) != 2 || pid <= 0 ||
        (reason[strlen(PREFIX) + (size_t)n] != ':' && reason[strlen(PREFIX) + (size_t)n] != '\0'))
        return -1;
    if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
        return 0;
    /* The pid runs: the process that locked it only if it started when that one did. */
    unsigned long long now = ar_proc_start_time(pid);
    return !start || !now || now == start;
}

static int run(const char *top, const char *const *args, const char *path, struct ar_error *err)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    struct ar_child_sync out;
    cmd.args = args;
    cmd.cwd = top;
    cmd.timeout_ms = GIT_TIMEOUT_MS;
    cmd.flags = AR_GIT_NO_HOOKS;
    int rc = ar_git_run(&cmd, &out, err);
    if (rc < 0)
        return rc;
    if (out.res.end != AR_CHILD_EXITED || out.res.status != 0) {
        char why[200];
        if (!*ar_git_stderr_line(out.res.stderr_tail, out.res.stderr_tail_len, why, sizeof(why)))
            snprintf(why, sizeof(why), "git exited with status %d", out.res.status);
        rc =
            ar_error_set(err, AR_EIO, "git", "cannot %s the worktree '%s': %s", args[1], path, why);
    }
    ar_child_sync_finish(&out);
    return rc;
}

int ar_git_tree_lock(const char *top, const char *path, struct ar_error *err)
{
    char reason[AR_GIT_LOCK_REASON_SIZE];
    ar_git_tree_lock_reason(reason);
    const char *args[] = { "worktree", "lock", "--reason", reason, "--", path, NULL };
    return run(top, args, path, err);
}

int ar_git_tree_unlock(const char *top, const char *path, struct ar_error *err)
{
    const char *args[] = { "worktree", "unlock", "--", path, NULL };
    return run(top, args, path, err);
}
