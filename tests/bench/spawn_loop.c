/*
 * The baseline for the batch benchmark: the same jobs as `agentrun batch`
 * runs, spawned directly, N at a time, by the smallest C loop that does the
 * work: posix_spawn with the prompt on a pipe, stdout to /dev/null, waitpid.
 * Each child in a session of its own, as agentrun starts every CLI: with the
 * scheduler's autogroups (one per session) a loop whose children shared its
 * session got one session's share of a busy machine where agentrun's got one
 * each, and the floor measured the neighbours, not the loop.
 *
 *   spawn_loop PROGRAM JOBS PARALLEL
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* POSIX_SPAWN_SETSID with glibc */
#endif
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static pid_t start(const char *prog, int devnull)
{
    int in[2];
    if (pipe(in) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, devnull, 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    char *argv[] = { (char *)prog, "exec", "--json", NULL };
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID);
    pid_t pid;
    int rc = posix_spawn(&pid, prog, &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    static const char prompt[] = "prompt";
    if (rc == 0 && write(in[1], prompt, sizeof(prompt) - 1) < 0)
        rc = -1;
    close(in[1]);
    return rc == 0 ? pid : -1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: spawn_loop PROGRAM JOBS PARALLEL\n");
        return 2;
    }
    int jobs = atoi(argv[2]), par = atoi(argv[3]), running = 0, started = 0;
    int devnull = open("/dev/null", O_WRONLY);
    while (started < jobs || running > 0) {
        while (running < par && started < jobs) {
            if (start(argv[1], devnull) < 0) {
                perror("spawn");
                return 1;
            }
            started++;
            running++;
        }
        int status;
        if (wait(&status) > 0)
            running--;
    }
    return 0;
}
