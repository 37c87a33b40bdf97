/* agentrun cache: what the result cache (--cache) holds, and emptying it. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/cache.h"
#include "ar_config.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/buf.h"

enum {
    OPT_CACHE_DIR = 256,
    OPT_FORMAT,
};

static const struct ar_cli_opt cache_opts[] = {
    { "cache-dir", OPT_CACHE_DIR, "DIR",
      "the cache directory (default: $XDG_CACHE_HOME/agentrun, else ~/.cache/agentrun)", "@dir" },
    { "format", OPT_FORMAT, "FORMAT", "stats output: text or json (default: text)", "text|json" },
    { "quiet", 'q', NULL, "say less on stderr", NULL },
    { NULL, 0, NULL, NULL, NULL },
};

static int stats(const char *dir, int json_format)
{
    struct ar_cache_stats st;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_cache_stats(dir, &st, &err) < 0) {
        ar_cli_errorf("%s", err.msg);
        return AR_EXIT_USAGE;
    }
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    if (json_format) {
        json_t *o =
            json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "dir", dir, "entries", (json_int_t)st.entries,
                      "bytes", (json_int_t)st.bytes, "corrupt", (json_int_t)st.corrupt, "oldest",
                      (json_int_t)st.oldest, "newest", (json_int_t)st.newest);
        char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
        if (s)
            ar_buf_printf(&out, "%s\n", s);
        free(s);
        json_decref(o);
    } else {
        ar_buf_printf(&out, "directory  %s\nentries    %llu\nbytes      %llu\n", dir,
                      (unsigned long long)st.entries, (unsigned long long)st.bytes);
        if (st.corrupt)
            ar_buf_printf(&out, "corrupt    %llu (ignored; replaced when written again)\n",
                          (unsigned long long)st.corrupt);
    }
    int status = ar_cli_write_stdout(out.data, out.len) == 0 ? AR_EXIT_OK : AR_EXIT_USAGE;
    ar_buf_finish(&out);
    return status;
}

static int clear(const char *dir)
{
    uint64_t removed = 0;
    struct ar_error err = AR_ERROR_INIT;
    int rc = ar_cache_clear(dir, &removed, &err);
    if (rc < 0)
        ar_cli_errorf("%s", err.msg);
    if (ar_cli_verbosity >= 0)
        fprintf(stderr, "agentrun: removed %llu cache %s from '%s'\n", (unsigned long long)removed,
                removed == 1 ? "entry" : "entries", dir);
    return rc < 0 ? AR_EXIT_USAGE : AR_EXIT_OK;
}

static int run_cache(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_parser ps;
    const char *dir_opt = NULL, *arg;
    int json_format = 0, key;
    ar_cli_parser_init(&ps, cmd, argc, argv);
    while ((key = ar_cli_next(&ps, &arg)) >= 0) {
        switch (key) {
        case OPT_CACHE_DIR:
            dir_opt = arg;
            break;
        case OPT_FORMAT:
            if ((json_format = ar_cli_choice(cmd, OPT_FORMAT, arg)) < 0) {
                ar_cli_parser_finish(&ps);
                return AR_EXIT_USAGE;
            }
            break;
        case 'q':
            ar_cli_verbosity = -1;
            break;
        }
    }
    int ind = ps.ind;
    ar_cli_parser_finish(&ps);
    if (key == -2)
        return ps.status;
    int sub = ar_cli_subcommand(cmd, argc, argv, ind, "stats|clear");
    if (sub < 0)
        return AR_EXIT_USAGE;
    char *dir = dir_opt ? strdup(dir_opt) : ar_cache_default_dir();
    if (!dir && dir_opt)
        return ar_cli_out_of_memory();
    if (!dir) {
        ar_cli_errorf("no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir");
        return AR_EXIT_USAGE;
    }
    int status = sub == 0 ? stats(dir, json_format) : clear(dir);
    free(dir);
    return status;
}

const struct ar_cli_command ar_cmd_cache = {
    .name = "cache",
    .synopsis = "[options] stats | clear",
    .summary = "show what the result cache holds, or empty it",
    .description =
        "The result cache keeps the answers of text-only calls (review, prioritize, route and "
        "repair calls) made with --cache, under DIR/calls/. 'stats' counts the entries and their "
        "size; 'clear' removes them. Entries are keyed by provider, model, the CLI's identity, "
        "argv, the exact prompt and the contract; see " AR_DOCDIR "/record-replay.md.",
    .example = "agentrun cache stats --format json",
    .opts = cache_opts,
    .run = run_cache,
};
