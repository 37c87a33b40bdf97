/*
 * The command-line front end: the command table, per-command option tables and
 * message helpers. Only src/cli/ prints to stdout or calls exit().
 *
 * A command declares its options once, in a table; parsing (getopt_long),
 * `--help`, the man pages and the completion test all derive from it, so
 * help can never drift from what is accepted.
 */
#ifndef AR_CLI_CLI_H
#define AR_CLI_CLI_H

#include <stdio.h>

#include "agentrun/common.h"
#include "agentrun/error.h"

/* The exit statuses (AR_EXIT_…) are the public API's: agentrun/error.h. */

struct ar_cli_opt {
    const char *name;   /* long name without dashes: "provider" */
    int key;            /* short letter, or a unique value >= 256 for long-only options */
    const char *arg;    /* placeholder of the argument ("NAME"), NULL for a flag */
    const char *help;   /* one line; says the default */
    const char *values; /* completion values separated by '|' ("claude|codex|gemini|auto"),
                           "@file", "@dir", "@prompt" or NULL */
};

struct ar_cli_command {
    const char *name;
    const char *synopsis;          /* "[options] [FILE]" */
    const char *summary;           /* one line */
    const char *description;       /* a paragraph or NULL */
    const char *example;           /* one example command line */
    const struct ar_cli_opt *opts; /* terminated by an entry with name NULL */
    int (*run)(const struct ar_cli_command *cmd, int argc, char **argv);
    /* For a command with --format json, the rule main() enforces: a command asked for
     * JSON prints one object on every failure. When it fails having printed nothing on
     * stdout, main() prints failure_value()'s object (a new reference), else
     * {"schema":json_schema,"ok":false,"error":{"code","message","details":[]}} from
     * the last error message (ar_cli_last_error()) and its code. */
    const char *json_schema;
    struct json_t *(*failure_value)(int code, const char *message, int exit_status);
};

/* The command table, sorted by name, NULL-terminated (src/cli/commands.c). */
extern const struct ar_cli_command *const ar_cli_commands[];
const struct ar_cli_command *ar_cli_command_find(const char *name);

/*
 * getopt_long over cmd->opts plus -h/--help. Returns the key of the next
 * option (its argument in *arg), -1 when the options end (argv[*ind] is then
 * the first operand), or -2 after printing help (the caller returns 0) or a
 * usage error (the caller returns AR_EXIT_USAGE; the message is printed) —
 * use ar_cli_parse_status() to tell which.
 */
struct ar_cli_parser {
    const struct ar_cli_command *cmd;
    int argc;
    char **argv;
    int ind;
    int status; /* after -2: AR_EXIT_OK for help, AR_EXIT_USAGE for an error,
                   ar_cli_out_of_memory()'s status when the parser could not be set up */
    void *priv;
};
void ar_cli_parser_init(struct ar_cli_parser *p, const struct ar_cli_command *cmd, int argc,
                        char **argv);
int ar_cli_next(struct ar_cli_parser *p, const char **arg);

/*
 * Where the operands stand against a "--" in argv (argv[0] the command), read
 * with cmd's option table before ar_cli_next() reorders argv: how many
 * operands come before the first "--", or -1 when there is none. A "--" that
 * is an option's value does not count.
 */
int ar_cli_operands_before_dashdash(const struct ar_cli_command *cmd, int argc, char **argv);
void ar_cli_parser_finish(struct ar_cli_parser *p);

/* Prints the command's help (usage, summary, every option, example) to f. */
void ar_cli_print_help(const struct ar_cli_command *cmd, FILE *f);

/* Where the documents are: AR_DOCDIR when it exists, else share/doc/agentrun beside the
 * running binary (an unpacked release tarball or npm package), else NULL. Static
 * storage. */
const char *ar_cli_docdir(void);

/* Messages to stderr with a fixed prefix. note prints only with -v, warn not with -q. */
extern int ar_cli_verbosity; /* 0 normal, -1 quiet, 1+ verbose */
void ar_cli_errorf(const char *fmt, ...) AR_PRINTF(1, 2);
void ar_cli_warnf(const char *fmt, ...) AR_PRINTF(1, 2);
void ar_cli_notef(const char *fmt, ...) AR_PRINTF(1, 2);

/* The text of the last ar_cli_errorf() or ar_cli_usage_error() message ("" before
 * any). Static storage, overwritten by the next one. */
const char *ar_cli_last_error(void);

/* What the last message reported: AR_ENOMEM after ar_cli_out_of_memory(), AR_EUSAGE
 * after ar_cli_usage_error(), `code` after ar_cli_error_code(), else 0. */
int ar_cli_last_error_code(void);

/* ar_cli_errorf() that also records the AR_E… code the failure stands for (the
 * `error.code` of the --format json failure object). Returns its exit status,
 * ar_error_exit_status(code). */
int ar_cli_error_code(int code, const char *fmt, ...) AR_PRINTF(2, 3);

/*
 * Out of memory, the one way every command reports it (docs/architecture.md,
 * "Out of memory"): prints "agentrun: error: out of memory" and returns the exit
 * status of error nomem, ar_error_exit_status(AR_ENOMEM): 4. Never an abort(),
 * never a usage error.
 */
int ar_cli_out_of_memory(void);

/* A usage error: prints "agentrun <cmd>: <msg>" and a hint, returns AR_EXIT_USAGE. */
int ar_cli_usage_error(const struct ar_cli_command *cmd, const char *fmt, ...) AR_PRINTF(2, 3);

/* Writes all of data to stdout and flushes; returns 0, or -1 when stdout is gone (said
 * once on stderr). Every result a command prints goes through here. */
int ar_cli_write_stdout(const void *data, size_t len);

/* Flushes stdout; returns 0, or -1 when what was printed did not all get there (said
 * once on stderr: "cannot write the result to stdout: …", as ar_cli_write_stdout()). */
int ar_cli_flush_stdout(void);

/* Whether ar_cli_write_stdout() was asked to write anything yet. */
int ar_cli_stdout_used(void);

/*
 * Whether argv (a command's own, argv[0] its name) asks for --format json, spelled
 * as getopt_long takes it: --format json, --format=json, or an unambiguous prefix
 * (--form json). Scans up to "--". 0 for a command without a json format.
 */
int ar_cli_wants_json(const struct ar_cli_command *cmd, int argc, char **argv);

/* Parses a non-negative number with an optional unit suffix for durations
 * ("90", "90s", "5m", "1h", "250ms") into milliseconds. Returns 0 or -1. */
int ar_cli_parse_duration_ms(const char *s, unsigned long long *ms);

/* An amount in USD for --max-cost and the like: a plain positive finite number. Returns
 * 0, or -1 when s is not one. */
int ar_cli_parse_usd(const char *s, double *usd);

/* Parses a size ("200000", "200K", "200KB", "64M", "1MiB") into bytes. Returns 0 or -1. */
int ar_cli_parse_size(const char *s, unsigned long long *bytes);

/*
 * The index of arg among the values of the option `key` in cmd's table (its
 * `values`, "text|json": 0 for text, 1 for json), so the accepted words are
 * the ones help and completion show. Returns -1 after printing a usage error
 * naming the option and its values.
 */
int ar_cli_choice(const struct ar_cli_command *cmd, int key, const char *arg);

/*
 * The subcommand of a command taking one word and nothing after it ("stats |
 * clear"): the index of argv[ind] among words ("stats|clear"). Returns -1
 * after printing a usage error when it is missing, unknown, or followed by
 * another argument.
 */
int ar_cli_subcommand(const struct ar_cli_command *cmd, int argc, char **argv, int ind,
                      const char *words);

/*
 * Reports arg as an invalid value of --option, whose words are values
 * ("text|json"), with the one it most likely meant (util/suggest.h):
 * "invalid --format 'jsno' (text, json); did you mean 'json'?".
 * Returns AR_EXIT_USAGE.
 */
int ar_cli_invalid_value(const struct ar_cli_command *cmd, const char *option, const char *arg,
                         const char *values);

/* Parses an integer in [min, max]. Returns 0 or -1. */
int ar_cli_parse_int(const char *s, long min, long max, long *out);

#endif
