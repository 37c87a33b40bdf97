/*
 * agentrun-docgen: the man pages, the shell completions and a JSON dump of
 * the option tables, all derived from the command table (src/cli/commands.c)
 * so none of them can drift from what the parser accepts. Run at build time;
 * not installed.
 */
#ifndef AR_CLI_DOCGEN_H
#define AR_CLI_DOCGEN_H

#include <stdio.h>

#include "cli/cli.h"

/*
 * What a command's operands complete to. The option tables do not describe
 * operands, so this small table does; every command has an entry (the
 * completions are not generated otherwise: ar_docgen_check_operands()).
 */
struct ar_docgen_operands {
    const char *command;
    const char *first;      /* "a|b", "@file", "@dir", "@rev" (a git revision or a file), "" none */
    const char *after_word; /* when the first operand is this word… */
    const char *second;     /* …the second completes to this (same forms), else NULL */
};

/* The operands of cmd, or NULL when the table has no entry for it. */
const struct ar_docgen_operands *ar_docgen_operands_of(const struct ar_cli_command *cmd);

/* 0 when every command has an operands entry; else says which have none (stderr), -1. */
int ar_docgen_check_operands(void);

/* The page agentrun(1) when cmd is NULL, else agentrun-<cmd>(1). extra, when
 * not NULL, is roff text inserted before EXIT STATUS. Returns 0 or -1. */
int ar_docgen_man(FILE *f, const struct ar_cli_command *cmd, const char *extra);

/* The completion script for shell "bash", "zsh" or "fish". Returns 0, or -1 for another shell. */
int ar_docgen_completion(FILE *f, const char *shell);

#endif
