/* One struct ar_cli_command per src/cli/cmd_<name>.c. */
#ifndef AR_CLI_COMMANDS_H
#define AR_CLI_COMMANDS_H

#include "cli/cli.h"

extern const struct ar_cli_command ar_cmd_batch;
extern const struct ar_cli_command ar_cmd_cache;
extern const struct ar_cli_command ar_cmd_doctor;
extern const struct ar_cli_command ar_cmd_extract;
extern const struct ar_cli_command ar_cmd_mcp;
extern const struct ar_cli_command ar_cmd_prioritize;
extern const struct ar_cli_command ar_cmd_prompts;
extern const struct ar_cli_command ar_cmd_review;
extern const struct ar_cli_command ar_cmd_route;
extern const struct ar_cli_command ar_cmd_run;
extern const struct ar_cli_command ar_cmd_worktrees;

#endif
