/* agentrun: entry point, global options and dispatch to the command table. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "agentrun/agentrun.h"
#include "ar_config.h"
#include "cli/ar_describe.h" /* generated in the build's src/cli, with or without .git */
#include "cli/cli.h"
#include "cli/manual.h"

/*
 * "agentrun 0.2.0 (libuv 1.44.2, jansson 2.14)": a release. A build from any
 * other commit of a checkout says which on a second line, so two builds that
 * carry the same version number are told apart.
 */
static void print_version(void)
{
    printf("agentrun %s (libuv %s, jansson %s)\n", AR_VERSION, uv_version_string(),
           jansson_version_str());
    if (AR_GIT_DESCRIBE[0] && strcmp(AR_GIT_DESCRIBE, "v" AR_VERSION) != 0)
        printf("development build: git %s\n", AR_GIT_DESCRIBE);
}

static void print_usage(FILE *f)
{
    fprintf(f,
            "usage: agentrun <command> [options] [args]\n\n"
            "Run Claude Code, Codex or Gemini headlessly and get back a result you can trust.\n\n"
            "commands:\n");
    for (size_t i = 0; ar_cli_commands[i]; i++)
        fprintf(f, "  %-12s %s\n", ar_cli_commands[i]->name, ar_cli_commands[i]->summary);
    fprintf(f, "\n'agentrun help COMMAND' or 'agentrun COMMAND --help' shows a command's options.\n"
               "'agentrun --version' prints the version. 'man agentrun' has more.\n\n");
    ar_cli_print_exit_statuses(f);
}

/* "unknown command 'reveiw'; did you mean 'review'?" */
static void unknown_command(const char *name)
{
    const char *words[32];
    size_t n = 0;
    for (size_t i = 0; ar_cli_commands[i] && n < 28; i++)
        words[n++] = ar_cli_commands[i]->name;
    words[n++] = "help";
    words[n++] = "version";
    words[n++] = "--help";
    words[n++] = "--version";
    const char *near = ar_cli_suggest(name, words, n);
    if (near)
        ar_cli_errorf("unknown command '%s'; did you mean '%s'? (see 'agentrun --help')", name,
                      near);
    else
        ar_cli_errorf("unknown command '%s'; see 'agentrun --help'", name);
}

/*
 * A standard descriptor the caller closed (`>&-`, `2>&-`, `<&-`) would be the
 * next descriptor anything opens, and libuv refuses its own pipes there (an
 * assertion, exit 134). Each one is held by /dev/null opened read-only: stdin
 * reads as empty, and a write to stdout or stderr still fails (EBADF) as it
 * would have, so a result that cannot be written is reported, not lost.
 */
static void hold_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int n = open("/dev/null", O_RDONLY);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

int main(int argc, char **argv)
{
    hold_std_fds();
    /* A result or a log redirected into the work tree is ours, not a run's change. */
    ar_ignore_own_file(1);
    ar_ignore_own_file(2);
    /* A reader that goes away must give EPIPE on write, not kill us mid-result. */
    signal(SIGPIPE, SIG_IGN);

    if (argc < 2) {
        print_usage(stderr);
        return AR_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        print_version();
        return AR_EXIT_OK;
    }
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        print_usage(stdout);
        return AR_EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return AR_EXIT_OK;
        }
        const struct ar_cli_command *cmd = ar_cli_command_find(argv[2]);
        if (!cmd) {
            unknown_command(argv[2]);
            return AR_EXIT_USAGE;
        }
        ar_cli_print_help(cmd, stdout);
        return AR_EXIT_OK;
    }
    const struct ar_cli_command *cmd = ar_cli_command_find(name);
    if (!cmd) {
        unknown_command(name);
        return AR_EXIT_USAGE;
    }
    int rc = cmd->run(cmd, argc - 1, argv + 1);
    if (fflush(stdout) != 0 && rc == AR_EXIT_OK)
        rc = AR_EXIT_USAGE;
    return rc;
}
