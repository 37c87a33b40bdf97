/* agentrun extract: the JSON (or a code block, or a section) out of model text. */
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentrun/agentrun.h"
#include "agentrun/extract.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/buf.h"
#include "util/file.h"

/* Both gcc and clang read this; clang ignores a comment. */
#define FALLTHROUGH __attribute__((fallthrough))

enum {
    OPT_ARRAY = 256,
    OPT_ANY,
    OPT_ALL,
    OPT_REPAIR,
    OPT_SCHEMA,
    OPT_CODE,
    OPT_LANG,
    OPT_SECTION,
    OPT_UNWRAP,
    OPT_VALUE,
    OPT_SCHEMA_REF,
    OPT_FORMAT_ASSERT,
};

static const struct ar_cli_opt extract_opts[] = {
    { "array", OPT_ARRAY, NULL, "want a JSON array instead of an object", NULL },
    { "any", OPT_ANY, NULL, "want the first object or array", NULL },
    { "all", OPT_ALL, NULL, "print every top-level value of the wanted kind, one per line", NULL },
    { "repair", OPT_REPAIR, NULL, "repair a candidate that does not parse (fixes shown with -v)",
      NULL },
    { "schema", OPT_SCHEMA, "FILE", "pick the first value valid against this JSON Schema",
      "@file" },
    { "value", OPT_VALUE, NULL,
      "the whole input is one JSON value of any kind, scalars included: check it as it is", NULL },
    { "schema-ref", OPT_SCHEMA_REF, "[URI=]FILE",
      "a document the schema's $ref may name: FILE by its $id, or at URI (PREFIX/=DIR: a "
      "folder); repeatable",
      NULL },
    { "format-assert", OPT_FORMAT_ASSERT, NULL,
      "with --schema: check 'format' (date-time, email, uri, ...) instead of ignoring it", NULL },
    { "code", OPT_CODE, NULL, "print the fenced code blocks instead (see --lang)", NULL },
    { "lang", OPT_LANG, "LANG", "with --code: only blocks of this language (implies --code)",
      NULL },
    { "section", OPT_SECTION, "HEADING", "print the text under this markdown heading instead",
      NULL },
    { "unwrap", OPT_UNWRAP, "CLI",
      "the input is a CLI's captured output (json or stream-json): take its final text first",
      AR_PROVIDER_CHOICES "|auto" },
    { "verbose", 'v', NULL, "say more on stderr (the repairs made)", NULL },
    { "quiet", 'q', NULL, "say less on stderr", NULL },
    { NULL, 0, NULL, NULL, NULL },
};

struct extract_args {
    struct ar_extraction_options xo;
    int all;
    int code;
    const char *lang;
    const char *section;
    const char *schema;
    const char **refs;
    size_t nrefs;
    unsigned contract_flags;
    const char *file;
    const char *unwrap;
};

static int write_out(void *arg, const char *data, size_t len)
{
    (void)arg;
    return ar_cli_write_stdout(data, len);
}

/* The value as the model wrote it (compacted piece by piece, or repaired), then a newline. */
static int print_value(const struct ar_extraction *x, const char *text)
{
    int rc = ar_extraction_write(x, text, write_out, NULL);
    return rc < 0 ? rc : ar_cli_write_stdout("\n", 1);
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* Says what the answer left out (unless -q) and, with -v, what repair did. */
static void note_fixes(const struct ar_extraction *x)
{
    if (x->fixes & AR_FIX_EXTRA_VALUES)
        ar_cli_warnf("left out %zu more JSON value%s of the text (%s at byte %zu)", x->extra_count,
                     plural(x->extra_count), x->extra_count == 1 ? "it starts" : "the first",
                     x->extra_at);
    unsigned repairs = x->fixes & ~(unsigned)AR_FIX_NOTES;
    if (!repairs)
        return;
    char *names = ar_extract_fix_names(repairs, ", ");
    if (!names)
        return;
    if (repairs & AR_FIX_MEMBERS_AFTER_CLOSE)
        ar_cli_notef("repaired: %s (%zu member%s from byte %zu)", names, x->members_count,
                     plural(x->members_count), x->members_at);
    else
        ar_cli_notef("repaired: %s", names);
    free(names);
}

/* One block, ended by a newline when it has none. */
static int print_block(void *arg, const char *data, size_t len)
{
    (void)arg;
    if (ar_cli_write_stdout(data, len) < 0 ||
        (len && data[len - 1] != '\n' && ar_cli_write_stdout("\n", 1) < 0))
        return -1;
    return 0;
}

static int run_code(const struct extract_args *a, const char *text, size_t len)
{
    int n = ar_markdown_blocks(text, len, a->lang, print_block, NULL);
    if (n < 0)
        return AR_EXIT_USAGE;
    if (!n) {
        if (a->lang)
            ar_cli_errorf("no '%s' code block found", a->lang);
        else
            ar_cli_errorf("no code block found");
        return AR_EXIT_OUTPUT;
    }
    return AR_EXIT_OK;
}

static int run_section(const struct extract_args *a, const char *text, size_t len)
{
    struct ar_error err = AR_ERROR_INIT;
    size_t s, e;
    if (ar_markdown_section(text, len, a->section, &s, &e, &err) < 0) {
        ar_cli_errorf("%s", err.msg);
        return AR_EXIT_OUTPUT;
    }
    if (ar_cli_write_stdout(text + s, e - s) < 0 ||
        (e > s && text[e - 1] != '\n' && ar_cli_write_stdout("\n", 1) < 0))
        return AR_EXIT_USAGE;
    return AR_EXIT_OK;
}

static int print_each(const struct ar_extraction *x, const char *text, void *arg)
{
    int *failed = arg;
    note_fixes(x);
    if (print_value(x, text) < 0) {
        *failed = 1;
        return 1;
    }
    return 0;
}

static int load_contract(const struct extract_args *a, struct ar_contract **out)
{
    const char *path = a->schema;
    struct ar_buf b;
    struct ar_error err = AR_ERROR_INIT;
    struct ar_contract_options co;
    ar_contract_options_init(&co);
    co.path = path;
    co.refs = a->refs;
    co.nrefs = a->nrefs;
    co.flags = a->contract_flags;
    ar_buf_init(&b, 16u << 20);
    int rc = ar_file_read(path, &b, &err);
    if (rc == 0)
        rc = ar_contract_load(ar_buf_cstr(&b), b.len, &co, out, &err);
    ar_buf_finish(&b);
    if (rc == AR_ENOMEM)
        return ar_cli_out_of_memory();
    if (rc < 0) {
        if (err.where[0] && strcmp(err.where, path) != 0)
            ar_cli_errorf("schema '%s': %s: %s", path, err.where, err.msg);
        else if (rc == AR_EUSAGE)
            ar_cli_errorf("schema '%s': %s", path, err.msg);
        else
            ar_cli_errorf("%s", err.msg);
        return AR_EXIT_USAGE;
    }
    return 0;
}

/* No value found: say so, and whether --repair would have found one (single quotes,
 * trailing commas…). */
static void report_none(const struct extract_args *a, const char *text, size_t len,
                        const struct ar_error *err)
{
    struct ar_extraction_options ro = a->xo;
    struct ar_extraction *rx = NULL;
    char *fixes = NULL;
    ro.repair = 1;
    if (!a->xo.repair && ar_extract_json(text, len, &ro, &rx, NULL) == 0 &&
        (fixes = ar_extract_fix_names(rx->fixes & ~(unsigned)AR_FIX_NOTES, ", ")))
        ar_cli_errorf("%s; --repair finds one (%s)", err->msg, fixes);
    else
        ar_cli_errorf("%s", err->msg);
    free(fixes);
    ar_extraction_destroy(rx);
}

static int run_json(struct extract_args *a, const char *text, size_t len)
{
    struct ar_error err = AR_ERROR_INIT;
    struct ar_contract *contract = NULL;
    int rc;

    if (a->all) {
        int failed = 0;
        size_t left = 0, left_at = 0;
        rc = ar_extract_json_all(text, len, &a->xo, print_each, &failed, &left, &left_at, &err);
        if (failed)
            return AR_EXIT_USAGE;
        if (rc == AR_ENOMEM)
            return ar_cli_out_of_memory();
        if (rc < 0) {
            ar_cli_errorf("%s", err.msg);
            return AR_EXIT_OUTPUT;
        }
        if (left)
            ar_cli_warnf("left out %zu JSON value%s that did not parse, the first at byte %zu",
                         left, plural(left), left_at);
        return AR_EXIT_OK;
    }
    if (a->schema) {
        rc = load_contract(a, &contract);
        if (rc)
            return rc;
        a->xo.contract = contract;
    }
    struct ar_extraction *x = NULL;
    rc = ar_extract_json(text, len, &a->xo, &x, &err);
    if (rc == AR_ENOJSON) {
        report_none(a, text, len, &err);
        rc = AR_EXIT_OUTPUT;
    } else if (rc == AR_ENOMEM) {
        rc = ar_cli_out_of_memory();
    } else if (rc < 0) {
        ar_cli_errorf("%s", err.msg);
        rc = AR_EXIT_OUTPUT;
    } else {
        note_fixes(x);
        if (!x->valid) {
            fflush(stdout);
            fputs(x->violations, stderr);
            rc = AR_EXIT_OUTPUT;
        } else {
            rc = print_value(x, text) < 0 ? AR_EXIT_USAGE : AR_EXIT_OK;
        }
    }
    ar_extraction_destroy(x);
    ar_contract_destroy(contract);
    return rc;
}

/*
 * Replaces the captured CLI output in `in` by the final text it holds. The
 * CLI's own failure (an API error in the wrapper) is reported with the exit
 * status of a provider failure.
 */
static int unwrap(const char *name, struct ar_buf *in)
{
    struct ar_captured *c;
    struct ar_error err = AR_ERROR_INIT;
    int rc = ar_captured_unwrap(name, ar_buf_cstr(in), in->len, &c, &err);
    if (rc == AR_ENOMEM)
        return ar_cli_out_of_memory();
    if (rc < 0) {
        ar_cli_errorf("%s", err.msg);
        return AR_EXIT_OUTPUT;
    }
    if (c->error) {
        ar_cli_errorf("%s reported %s: %s", c->provider, ar_strerror_name(c->error),
                      c->error_msg ? c->error_msg : ar_strerror(c->error));
        rc = ar_error_exit_status(c->error);
    } else if (!c->text || !*c->text) {
        ar_cli_errorf("%s's output holds no final text", c->provider);
        rc = AR_EXIT_OUTPUT;
    } else {
        ar_cli_notef(
            "unwrapped %s output: session %s, %llu input + %llu cached + %llu output tokens",
            c->provider, c->session_id ? c->session_id : "unknown",
            (unsigned long long)c->usage.input,
            (unsigned long long)(c->usage.cache_read + c->usage.cache_write),
            (unsigned long long)c->usage.output);
        ar_buf_reset(in);
        if (ar_buf_puts(in, c->text) < 0) {
            rc = ar_cli_out_of_memory();
        }
    }
    ar_captured_destroy(c);
    return rc;
}

/* A mapped file that shrinks while it is read raises SIGBUS: say so and exit
 * as for an unreadable input (write() and _exit() only: a signal handler). */
static const char *mapped_name;

static void on_sigbus(int sig)
{
    static const char head[] = "agentrun: error: '", tail[] = "' changed while it was read\n";
    (void)sig;
    ssize_t ignored = write(STDERR_FILENO, head, sizeof(head) - 1);
    ignored = write(STDERR_FILENO, mapped_name, strlen(mapped_name));
    ignored = write(STDERR_FILENO, tail, sizeof(tail) - 1);
    (void)ignored;
    _exit(AR_EXIT_USAGE);
}

static void on_truncation(const char *file)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    mapped_name = strcmp(file, "-") == 0 ? "<stdin>" : file;
    sa.sa_handler = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

static int extract_main(const struct ar_cli_command *cmd, struct extract_args *ap, int argc,
                        char **argv, int want_flags);

static int extract_run(const struct ar_cli_command *cmd, int argc, char **argv)
{
    struct extract_args a;
    memset(&a, 0, sizeof(a));
    ar_extraction_options_init(&a.xo);
    struct ar_cli_parser p;
    const char *arg;
    int key, want_flags = 0;

    ar_cli_parser_init(&p, cmd, argc, argv);
    while ((key = ar_cli_next(&p, &arg)) >= 0) {
        switch (key) {
        case OPT_ARRAY:
            a.xo.want = AR_WANT_ARRAY;
            want_flags++;
            break;
        case OPT_ANY:
            a.xo.want = AR_WANT_ANY;
            want_flags++;
            break;
        case OPT_ALL:
            a.all = 1;
            break;
        case OPT_REPAIR:
            a.xo.repair = 1;
            break;
        case OPT_SCHEMA:
            a.schema = arg;
            break;
        case OPT_VALUE:
            a.xo.want = AR_WANT_VALUE;
            want_flags++;
            break;
        case OPT_SCHEMA_REF: {
            const char **more = realloc(a.refs, (a.nrefs + 1) * sizeof(*a.refs));
            if (!more) {
                free(a.refs);
                ar_cli_parser_finish(&p);
                return ar_cli_out_of_memory();
            }
            a.refs = more;
            a.refs[a.nrefs++] = arg;
            break;
        }
        case OPT_FORMAT_ASSERT:
            a.contract_flags |= AR_CONTRACT_FORMAT_ASSERT;
            break;
        case OPT_LANG:
            a.lang = arg;
            FALLTHROUGH;
        case OPT_CODE:
            a.code = 1;
            break;
        case OPT_SECTION:
            a.section = arg;
            break;
        case OPT_UNWRAP:
            if (strcmp(arg, "auto") != 0 && !ar_provider_known(arg)) {
                ar_cli_parser_finish(&p);
                return ar_cli_usage_error(cmd, "invalid --unwrap '%s' (%s, auto)", arg,
                                          ar_provider_names());
            }
            a.unwrap = arg;
            break;
        case 'v':
            ar_cli_verbosity++;
            break;
        case 'q':
            ar_cli_verbosity = -1;
            break;
        }
    }
    int ind = p.ind;
    int status = p.status, rc;
    ar_cli_parser_finish(&p);
    if (key == -2) {
        free(a.refs);
        return status;
    }
    rc = extract_main(cmd, &a, argc - ind, argv + ind, want_flags);
    free(a.refs);
    return rc;
}

static int extract_main(const struct ar_cli_command *cmd, struct extract_args *ap, int argc,
                        char **argv, int want_flags)
{
    struct extract_args a = *ap;
    int ind = 0;
    if (argc - ind > 1)
        return ar_cli_usage_error(cmd, "too many arguments");
    if (want_flags > 1)
        return ar_cli_usage_error(cmd, "--array, --any and --value cannot be combined");
    if ((a.nrefs || a.contract_flags) && !a.schema)
        return ar_cli_usage_error(cmd, "--%s needs --schema",
                                  a.nrefs ? "schema-ref" : "format-assert");
    if (a.all && a.xo.want == AR_WANT_VALUE)
        return ar_cli_usage_error(cmd, "--all and --value cannot be combined");
    if (a.code && a.section)
        return ar_cli_usage_error(cmd, "--code and --section cannot be combined");
    if ((a.code || a.section) && (want_flags || a.all || a.schema || a.xo.repair))
        return ar_cli_usage_error(cmd, "--%s does not take JSON options",
                                  a.code ? "code" : "section");
    if (a.all && a.schema)
        return ar_cli_usage_error(cmd, "--all and --schema cannot be combined");
    a.file = argc - ind == 1 ? argv[ind] : "-";

    /* The input is mapped when it is a file (stdin too when redirected from
     * one); --unwrap rewrites it, so it reads a copy. */
    struct ar_file_view in;
    struct ar_error err = AR_ERROR_INIT;
    int rc;
    (void)ap;
    if (a.unwrap) {
        memset(&in, 0, sizeof(in));
        ar_buf_init(&in.buf, AR_BUF_UNLIMITED);
        rc = ar_file_read(a.file, &in.buf, &err);
    } else {
        rc = ar_file_view_open(a.file, &in, &err);
    }
    if (rc < 0) {
        ar_file_view_close(&in);
        if (rc == AR_ENOMEM)
            return ar_cli_out_of_memory();
        ar_cli_errorf("%s", err.msg);
        return AR_EXIT_USAGE;
    }
    if (a.unwrap && (rc = unwrap(a.unwrap, &in.buf)) != 0) {
        ar_file_view_close(&in);
        return rc;
    }
    if (!in.map) {
        in.data = ar_buf_cstr(&in.buf);
        in.len = in.buf.len;
    } else {
        on_truncation(a.file);
    }
    if (a.code)
        rc = run_code(&a, in.data, in.len);
    else if (a.section)
        rc = run_section(&a, in.data, in.len);
    else
        rc = run_json(&a, in.data, in.len);
    ar_file_view_close(&in);
    return rc;
}

const struct ar_cli_command ar_cmd_extract = {
    .name = "extract",
    .synopsis = "[options] [FILE]",
    .summary = "print the JSON value, a code block or a section found in model text",
    .description =
        "Reads model text from FILE or standard input and prints the first JSON object in it\n"
        "as one line of compact JSON: fenced ```json (or unlabelled) blocks first, then bare\n"
        "values in document order. Other values the text holds are named on stderr (with\n"
        "their count and byte). Exit 0 when found; 3 with the reason on stderr when not\n"
        "(no JSON, truncated, an object closed before its members, or --schema\n"
        "violations); 2 on a usage or read error.\n"
        "--value takes the whole input as one JSON value of any kind (a string, a number,\n"
        "null too) and checks it as it is against --schema, a JSON Schema (draft 2020-12 or\n"
        "draft-07): `agentrun extract --value --schema s.json value.json` exits 0 when it is\n"
        "valid, 3 with the violations when not. A $ref may name files beside the schema and\n"
        "documents given with --schema-ref; nothing is fetched.\n"
        "--unwrap reads a CLI's captured json or stream-json output and extracts from its\n"
        "final text; an error the CLI reported there exits 4.",
    .example = "claude -p --output-format json 'list the bugs as JSON' > out.json; "
               "agentrun extract --unwrap auto --repair out.json",
    .opts = extract_opts,
    .run = extract_run,
};
