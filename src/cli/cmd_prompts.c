/* agentrun prompts: list the templates and where each comes from, or print one. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/prompt.h"
#include "ar_config.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/macros.h"
#include "util/suggest.h"

enum {
    OPT_PROMPTS_DIR = 256,
    OPT_FORMAT,
    OPT_PRETTY,
};

static const struct ar_cli_opt prompts_opts[] = {
    { "prompts-dir", OPT_PROMPTS_DIR, "DIR",
      "look for NAME.md here first (then ~/.config/agentrun/prompts, then the built-in ones)",
      "@dir" },
    { "format", OPT_FORMAT, "FORMAT", "list output: text (default) or json", "text|json" },
    { "pretty", OPT_PRETTY, NULL, "indent the JSON (default: one line)", NULL },
    { "verbose", 'v', NULL, "say which file a template was loaded from", NULL },
    { "quiet", 'q', NULL, "say less on stderr", NULL },
    { NULL, 0, NULL, NULL, NULL },
};

/* Prints a load error; the loader's `where` is worth showing only when it is a place. */
static void report(const char *name, const struct ar_error *err)
{
    if (err->where[0] && strcmp(err->where, name) != 0)
        ar_cli_errorf("%s: %s", err->where, err->msg);
    else
        ar_cli_errorf("%s", err->msg);
}

struct entry {
    const char *name;
    struct ar_prompt *p; /* NULL when the template does not load */
    struct ar_error err;
};

static const char *source_text(const struct entry *e)
{
    if (!e->p)
        return "invalid";
    return ar_prompt_source(e->p) == AR_PROMPT_EMBEDDED ? "embedded" : ar_prompt_origin(e->p);
}

static json_t *entry_json(const struct entry *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(e->name));
    if (!e->p) {
        char msg[sizeof(e->err.where) + sizeof(e->err.msg) + 2];
        snprintf(msg, sizeof(msg), "%s: %s", e->err.where, e->err.msg);
        json_object_set_new(o, "source", json_null());
        json_object_set_new(o, "error", json_string(msg));
        return o;
    }
    json_object_set_new(o, "source", json_string(ar_prompt_source_name(ar_prompt_source(e->p))));
    json_object_set_new(o, "path",
                        ar_prompt_source(e->p) == AR_PROMPT_EMBEDDED
                            ? json_null()
                            : json_string(ar_prompt_origin(e->p)));
    json_object_set_new(o, "description", json_string(ar_prompt_description(e->p)));
    char **vars = ar_prompt_variable_names(e->p);
    json_t *arr = json_array();
    for (size_t i = 0; vars && vars[i]; i++)
        json_array_append_new(arr, json_string(vars[i]));
    ar_strings_free(vars);
    json_object_set_new(o, "variables", arr);
    json_object_set_new(o, "contract", json_boolean(ar_prompt_has_contract(e->p)));
    return o;
}

static int list(const char *prompts_dir, int json_format, int pretty)
{
    if (prompts_dir && !ar_is_dir(prompts_dir)) {
        ar_cli_errorf("prompts directory '%s' does not exist", prompts_dir);
        return AR_EXIT_USAGE;
    }
    char **names = ar_prompt_names(prompts_dir);
    if (!names)
        return ar_cli_out_of_memory();
    size_t n = 0;
    while (names[n])
        n++;
    struct entry *entries = calloc(n ? n : 1, sizeof(*entries));
    if (!entries) {
        ar_strings_free(names);
        return ar_cli_out_of_memory();
    }
    int status = AR_EXIT_OK;
    size_t wname = 0, wsource = 0;
    for (size_t i = 0; i < n; i++) {
        struct entry *e = &entries[i];
        e->name = names[i];
        if (ar_prompt_load(e->name, prompts_dir, &e->p, &e->err) != 0) {
            report(e->name, &e->err);
            status = AR_EXIT_USAGE;
        }
        wname = AR_MAX(wname, strlen(e->name));
        wsource = AR_MAX(wsource, strlen(source_text(e)));
    }
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    if (json_format) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(arr, entry_json(&entries[i]));
        char *s = json_dumps(arr, pretty ? JSON_INDENT(2) : JSON_COMPACT);
        if (s) {
            ar_buf_puts(&out, s);
            ar_buf_putc(&out, '\n');
        }
        free(s);
        json_decref(arr);
    } else {
        for (size_t i = 0; i < n; i++) {
            const struct entry *e = &entries[i];
            ar_buf_printf(&out, "%-*s  %-*s  %s\n", (int)wname, e->name, (int)wsource,
                          source_text(e), e->p ? ar_prompt_description(e->p) : e->err.msg);
        }
    }
    if (ar_cli_write_stdout(out.data, out.len) != 0)
        status = AR_EXIT_USAGE;
    ar_buf_finish(&out);
    for (size_t i = 0; i < n; i++)
        ar_prompt_destroy(entries[i].p);
    free(entries);
    ar_strings_free(names);
    return status;
}

static int show(const char *name, const char *prompts_dir)
{
    struct ar_prompt *p;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_prompt_load(name, prompts_dir, &p, &err) != 0) {
        report(name, &err);
        return AR_EXIT_USAGE;
    }
    ar_cli_notef("%s: %s", name,
                 ar_prompt_source(p) == AR_PROMPT_EMBEDDED ? "built-in" : ar_prompt_origin(p));
    size_t len;
    const char *text = ar_prompt_text(p, &len);
    int status = ar_cli_write_stdout(text, len) == 0 ? AR_EXIT_OK : AR_EXIT_USAGE;
    ar_prompt_destroy(p);
    return status;
}

static int run_prompts(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct ar_cli_parser ps;
    const char *prompts_dir = NULL, *arg;
    int json_format = 0, pretty = 0, key;
    ar_cli_parser_init(&ps, cmd, argc, argv);
    while ((key = ar_cli_next(&ps, &arg)) >= 0) {
        switch (key) {
        case OPT_PROMPTS_DIR:
            prompts_dir = arg;
            break;
        case OPT_FORMAT:
            if ((json_format = ar_cli_choice(cmd, OPT_FORMAT, arg)) < 0) {
                ar_cli_parser_finish(&ps);
                return AR_EXIT_USAGE;
            }
            break;
        case OPT_PRETTY:
            pretty = 1;
            break;
        case 'v':
            ar_cli_verbosity++;
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
    if (ind >= argc)
        return ar_cli_usage_error(cmd, "missing subcommand: list or show NAME");
    const char *sub = argv[ind];
    if (strcmp(sub, "list") == 0) {
        if (ind + 1 < argc)
            return ar_cli_usage_error(cmd, "unexpected argument '%s'", argv[ind + 1]);
        return list(prompts_dir, json_format, pretty);
    }
    if (strcmp(sub, "show") == 0) {
        if (ind + 1 >= argc)
            return ar_cli_usage_error(cmd, "show needs a template name");
        if (ind + 2 < argc)
            return ar_cli_usage_error(cmd, "unexpected argument '%s'", argv[ind + 2]);
        return show(argv[ind + 1], prompts_dir);
    }
    char near[16];
    if (ar_suggest_in_list(sub, "list|show", near, sizeof(near)))
        return ar_cli_usage_error(cmd,
                                  "unknown subcommand '%s' (list or show NAME); did you mean "
                                  "'%s'?",
                                  sub, near);
    return ar_cli_usage_error(cmd, "unknown subcommand '%s' (list or show NAME)", sub);
}

const struct ar_cli_command ar_cmd_prompts = {
    .name = "prompts",
    .synopsis = "[options] list | show NAME",
    .summary = "list the prompt templates or print one",
    .description =
        "'list' prints each template's name, where it comes from ('embedded' or the path of the "
        "file that overrides it) and its first heading. 'show NAME' prints the template as it "
        "will be used. A file NAME.md in --prompts-dir or in $XDG_CONFIG_HOME/agentrun/prompts "
        "(~/.config/agentrun/prompts) overrides the built-in template of that name; see " AR_DOCDIR
        "/prompts.md for the template syntax.",
    .example = "agentrun prompts show review > ~/.config/agentrun/prompts/review.md",
    .opts = prompts_opts,
    .run = run_prompts,
};
