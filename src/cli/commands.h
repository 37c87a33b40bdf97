/* One struct ar_cli_command per src/cli/cmd_<name>.c. */
#ifndef AR_CLI_COMMANDS_H
#define AR_CLI_COMMANDS_H

#include "cli/cli.h"

#endif
