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
#include "util/json_dump.h"
#include "util/suggest.h"

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
    const char *near = ar_suggest(name, words, n);
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

/* The exit status of a failure the command reported by message only, as an AR_E… code. */
static int code_of_status(int status)
{
    switch (status) {
    case AR_EXIT_USAGE:
        return AR_EUSAGE;
    case AR_EXIT_OUTPUT:
        return AR_ENOJSON;
    case AR_EXIT_TIMEOUT:
        return AR_ETIMEOUT;
    case AR_EXIT_BUDGET:
        return AR_EBUDGET;
    case AR_EXIT_SIGINT:
    case AR_EXIT_SIGTERM:
    case 129:
        return AR_EINTERRUPTED;
    default:
        return AR_ECLIFAILED;
    }
}

/*
 * The rule of --format json: a command asked for JSON prints one object on every
 * failure, so a `| jq` pipeline always has a line to read. A command prints its own
 * document when it gets that far (a RunResult, a review, a ranking…); for every
 * failure before that (a bad flag, an unreadable input, a run that could not start)
 * this prints the failure object, from the message the command reported.
 */
static void print_failure(const struct ar_cli_command *cmd, int argc, char **argv, int status)
{
    if (status == AR_EXIT_OK || ar_cli_stdout_used() || !ar_cli_wants_json(cmd, argc, argv))
        return;
    int code = ar_cli_last_error_code() ? ar_cli_last_error_code() : code_of_status(status);
    const char *msg = *ar_cli_last_error() ? ar_cli_last_error() : ar_strerror(code);
    json_t *doc = cmd->failure_value ? cmd->failure_value(code, msg, status) : NULL;
    if (!doc) {
        doc = json_object();
        if (cmd->json_schema)
            json_object_set_new(doc, "schema", json_string(cmd->json_schema));
        json_object_set_new(doc, "ok", json_false());
        json_object_set_new(doc, "error",
                            json_pack("{s:s,s:o,s:[]}", "code", ar_strerror_name(code), "message",
                                      ar_json_text(msg, strlen(msg)), "details"));
    }
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (text && ar_cli_write_stdout(text, strlen(text)) == 0)
        ar_cli_write_stdout("\n", 1);
    free(text);
    json_decref(doc);
}

/* Help, a version or a result that did not reach stdout (a full disk, a closed pipe)
 * is a failure: the caller must not take the missing text for the answer. */
static int check_stdout(int status)
{
    return ar_cli_flush_stdout() < 0 && status == AR_EXIT_OK ? AR_EXIT_USAGE : status;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return AR_EXIT_USAGE;
    }
    const char *name = argv[1];
    /* `-v` and `-V` alone are the version, as with node, npm and the CLIs agentrun runs;
     * before a command, -v is verbose and goes after it. */
    int version_word = !strcmp(name, "--version") || !strcmp(name, "version") ||
                       ((!strcmp(name, "-v") || !strcmp(name, "-V")) && argc == 2);
    if (version_word && argc > 2) {
        ar_cli_error_code(AR_EUSAGE, "'%s' takes no arguments, got '%s'", name, argv[2]);
        return AR_EXIT_USAGE;
    }
    if (version_word) {
        print_version();
        return AR_EXIT_OK;
    }
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0)
        name = "help"; /* `agentrun --help review` is `agentrun help review` */
    const struct ar_cli_command *next = argc > 2 ? ar_cli_command_find(argv[2]) : NULL;
    if (name[0] == '-' && next) {
        ar_cli_error_code(AR_EUSAGE,
                          "options go after the command: 'agentrun %s %s …' (see 'agentrun help "
                          "%s')",
                          next->name, name, next->name);
        return AR_EXIT_USAGE;
    }
    if (strcmp(name, "help") == 0) {
        if (argc > 3) {
            ar_cli_error_code(AR_EUSAGE, "help takes one COMMAND, got '%s' too", argv[3]);
            return AR_EXIT_USAGE;
        }
        if (argc < 3) {
            print_usage(stdout);
            return AR_EXIT_OK;
        }
        /* Help for help itself: `help` is a word of the dispatcher, not a command. */
        if (!strcmp(argv[2], "help") || !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")) {
            printf("usage: agentrun help [COMMAND]\n\n"
                   "Without COMMAND, the commands and the exit statuses (as 'agentrun --help');\n"
                   "with one, its options (as 'agentrun COMMAND --help'; 'man agentrun-COMMAND'\n"
                   "has more).\n");
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
    print_failure(cmd, argc - 1, argv + 1, rc);
    return rc;
}

int main(int argc, char **argv)
{
    hold_std_fds();
    /* A result or a log redirected into the work tree is ours, not a run's change. */
    ar_ignore_own_file(1);
    ar_ignore_own_file(2);
    /* Every child of ours is a run's: an orphan below us comes back to us and ends with
     * its run, whatever session it made (docs/security.md). Where there are no subreapers,
     * the runs still end every process they can find. */
    ar_adopt_orphans(1);
    /* And no CLI outlives us, even when we are killed by SIGKILL (docs/supervisor.md). */
    ar_end_children_on_exit(1);
    /* A reader that goes away must give EPIPE on write, not kill us mid-result. */
    signal(SIGPIPE, SIG_IGN);
    /* Past a file size limit (ulimit -f) a write fails with EFBIG, which we handle
     * (a batch record is then taken back whole), instead of a kill mid-record. */
    signal(SIGXFSZ, SIG_IGN);
    return check_stdout(dispatch(argc, argv));
}
