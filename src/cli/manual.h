/*
 * What every page of agentrun's help shares: the exit statuses and the
 * environment variables. `agentrun --help` prints them, and the man pages
 * (src/cli/docgen*.c) render them, from these tables.
 */
#ifndef AR_CLI_MANUAL_H
#define AR_CLI_MANUAL_H

#include <stdio.h>

struct ar_cli_exit_status {
    int status;
    const char *meaning; /* one line */
};

struct ar_cli_env_var {
    const char *name;
    const char *meaning; /* one line */
};

/* Both end with an entry whose meaning is NULL. */
extern const struct ar_cli_exit_status ar_cli_exit_statuses[];
extern const struct ar_cli_env_var ar_cli_env_vars[];

/* Prints "exit status:" and one line per status, for `agentrun --help`. */
void ar_cli_print_exit_statuses(FILE *f);

#endif
