/*
 * The review command's entry in the command table, for the cli-public-link
 * build only (src/cli/meson.build): that link holds every other CLI file to
 * libagentrun's exported API while cmd_review.c still calls the review
 * module's internals (issue 29a). It is never run.
 */
#include "cli/commands.h"

const struct ar_cli_command ar_cmd_review = {
    .name = "review",
    .synopsis = "",
    .summary = "(not in this link check)",
};
