/*
 * agentrun-docgen: prints a man page, a completion script or the option
 * tables as JSON (for the help test). See docgen.h.
 *
 *   agentrun-docgen man [COMMAND] [--extra FILE]
 *   agentrun-docgen completion bash|zsh|fish
 *   agentrun-docgen json
 *   agentrun-docgen commands
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_config.h"
#include "cli/docgen.h"

/* Every command of the table, in its order: a command missing here fails the build. */
static const struct ar_docgen_operands operands[] = {
    { "batch", "@file", NULL, NULL },
    { "cache", "stats|clear", NULL, NULL },
    { "doctor", "", NULL, NULL },
    { "extract", "@file", NULL, NULL },
    { "mcp", "", NULL, NULL },
    { "prioritize", "@dir", NULL, NULL },
    { "prompts", "list|show", "show", "@prompt" },
    { "review", "@rev", NULL, NULL },
    { "route", "", NULL, NULL },
    { "run", "", NULL, NULL },
    { "worktrees", "list|prune|merge", "merge", "@rev" },
};

const struct ar_docgen_operands *ar_docgen_operands_of(const struct ar_cli_command *cmd)
{
    for (size_t i = 0; i < sizeof(operands) / sizeof(operands[0]); i++)
        if (strcmp(operands[i].command, cmd->name) == 0)
            return &operands[i];
    return NULL;
}

int ar_docgen_check_operands(void)
{
    int rc = 0;
    for (size_t i = 0; ar_cli_commands[i]; i++)
        if (!ar_docgen_operands_of(ar_cli_commands[i])) {
            fprintf(stderr,
                    "agentrun-docgen: command '%s' has no entry in the operands table "
                    "(src/cli/docgen.c): say what its operands complete to\n",
                    ar_cli_commands[i]->name);
            rc = -1;
        }
    return rc;
}

static json_t *opt_json(const char *name, int key, const char *arg, const char *help,
                        const char *values)
{
    char shortname[2] = { 0, 0 };
    if (key > 0 && key < 128)
        shortname[0] = (char)key;
    return json_pack("{s:s, s:s?, s:s?, s:s, s:s?}", "long", name, "short",
                     shortname[0] ? shortname : NULL, "arg", arg, "help", help, "values", values);
}

/* Every command with every option the parser accepts (the table plus -h/--help). */
static int print_json(void)
{
    json_t *cmds = json_array();
    for (size_t i = 0; ar_cli_commands[i]; i++) {
        const struct ar_cli_command *c = ar_cli_commands[i];
        json_t *opts = json_array();
        for (const struct ar_cli_opt *o = c->opts; o && o->name; o++)
            json_array_append_new(opts, opt_json(o->name, o->key, o->arg, o->help, o->values));
        json_array_append_new(opts, opt_json("help", 'h', NULL, "show this help and exit", NULL));
        json_array_append_new(cmds, json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:o}", "name", c->name,
                                              "synopsis", c->synopsis, "summary", c->summary,
                                              "description", c->description, "example", c->example,
                                              "options", opts));
    }
    json_t *root = json_pack("{s:s, s:o}", "version", AR_VERSION, "commands", cmds);
    int rc = json_dumpf(root, stdout, JSON_INDENT(1)) == 0 ? 0 : -1;
    json_decref(root);
    putchar('\n');
    return rc;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    size_t n;
    while (s && (n = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *t = realloc(s, cap * 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
            cap *= 2;
        }
    }
    if (s)
        s[len] = '\0';
    fclose(f);
    return s;
}

static int usage(void)
{
    fprintf(stderr, "usage: agentrun-docgen man [COMMAND] [--extra FILE]\n"
                    "       agentrun-docgen completion bash|zsh|fish\n"
                    "       agentrun-docgen json | commands\n");
    return 2;
}

static int man_main(int argc, char **argv)
{
    const char *name = NULL, *extra_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--extra") == 0 && i + 1 < argc)
            extra_path = argv[++i];
        else if (!name && argv[i][0] != '-')
            name = argv[i];
        else
            return usage();
    }
    const struct ar_cli_command *cmd = NULL;
    if (name && !(cmd = ar_cli_command_find(name))) {
        fprintf(stderr, "agentrun-docgen: unknown command '%s'\n", name);
        return 2;
    }
    char *extra = NULL;
    if (extra_path && !(extra = read_file(extra_path))) {
        fprintf(stderr, "agentrun-docgen: cannot read '%s'\n", extra_path);
        return 1;
    }
    int rc = ar_docgen_man(stdout, cmd, extra);
    free(extra);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int rc;
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "man") == 0) {
        rc = man_main(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "completion") == 0 && argc == 3) {
        if (ar_docgen_check_operands() < 0)
            return 1;
        if (ar_docgen_completion(stdout, argv[2]) < 0) {
            fprintf(stderr, "agentrun-docgen: no completion for shell '%s'\n", argv[2]);
            return 2;
        }
        rc = 0;
    } else if (strcmp(argv[1], "json") == 0 && argc == 2) {
        rc = print_json() == 0 ? 0 : 1;
    } else if (strcmp(argv[1], "commands") == 0 && argc == 2) {
        for (size_t i = 0; ar_cli_commands[i]; i++)
            printf("%s\n", ar_cli_commands[i]->name);
        rc = 0;
    } else {
        return usage();
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "agentrun-docgen: cannot write the output\n");
        return 1;
    }
    return rc;
}
