/* The command table. Keep it sorted by name (a unit test checks). */
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

const struct ar_cli_command *const ar_cli_commands[] = {
    &ar_cmd_batch, &ar_cmd_cache,      &ar_cmd_doctor,    &ar_cmd_extract,
    &ar_cmd_mcp,   &ar_cmd_prioritize, &ar_cmd_prompts,   &ar_cmd_review,
    &ar_cmd_route, &ar_cmd_run,        &ar_cmd_worktrees, NULL,
};

const struct ar_cli_command *ar_cli_command_find(const char *name)
{
    for (size_t i = 0; ar_cli_commands[i]; i++)
        if (strcmp(ar_cli_commands[i]->name, name) == 0)
            return ar_cli_commands[i];
    return NULL;
}
