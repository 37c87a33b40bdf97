/* Option parsing over the per-command option tables, and --help from the same tables. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_config.h"
#include "agentrun/request.h"
#include "cli/cli.h"
#include "util/file.h"
#include "util/suggest.h"

struct parser_priv {
    struct option *longopts;
    char *shortopts;
};

enum { KEY_HELP = 'h' };

static size_t count_opts(const struct ar_cli_opt *o)
{
    size_t n = 0;
    while (o && o[n].name)
        n++;
    return n;
}

void ar_cli_parser_init(struct ar_cli_parser *p, const struct ar_cli_command *cmd, int argc,
                        char **argv)
{
    size_t n = count_opts(cmd->opts);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->ind = 1;
    p->status = 0;
    p->priv = NULL;
    struct parser_priv *pp = calloc(1, sizeof(*pp));
    if (pp) {
        pp->longopts = calloc(n + 2, sizeof(struct option));
        pp->shortopts = calloc(n * 2 + 4, 1);
    }
    if (!pp || !pp->longopts || !pp->shortopts) {
        /* ar_cli_next() reports it: the commands need no second error path. */
        if (pp) {
            free(pp->longopts);
            free(pp->shortopts);
        }
        free(pp);
        return;
    }
    /* ':' first: a missing value is reported as ':' rather than '?'. */
    char *s = pp->shortopts;
    *s++ = ':';
    for (size_t i = 0; i < n; i++) {
        const struct ar_cli_opt *o = &cmd->opts[i];
        pp->longopts[i].name = o->name;
        pp->longopts[i].has_arg = o->arg ? required_argument : no_argument;
        pp->longopts[i].val = o->key;
        if (o->key > 0 && o->key < 128) {
            *s++ = (char)o->key;
            if (o->arg)
                *s++ = ':';
        }
    }
    pp->longopts[n].name = "help";
    pp->longopts[n].val = KEY_HELP;
    *s++ = 'h';
    p->priv = pp;
    optind = 1;
    opterr = 0;
}

void ar_cli_parser_finish(struct ar_cli_parser *p)
{
    struct parser_priv *pp = p->priv;
    if (pp) {
        free(pp->longopts);
        free(pp->shortopts);
        free(pp);
    }
    p->priv = NULL;
}

static const char *opt_name_of(const struct ar_cli_command *cmd, int key, char *buf, size_t n)
{
    for (const struct ar_cli_opt *o = cmd->opts; o && o->name; o++)
        if (o->key == key) {
            snprintf(buf, n, "--%s", o->name);
            return buf;
        }
    snprintf(buf, n, "-%c", isprint(key) ? key : '?');
    return buf;
}

/* "unknown option '--promts-dir'; did you mean '--prompts-dir'?" */
static void unknown_long_option(const struct ar_cli_command *cmd, const char *bad)
{
    char word[80];
    size_t len = strcspn(bad, "=");
    if (len >= sizeof(word))
        len = sizeof(word) - 1;
    memcpy(word, bad, len);
    word[len] = '\0';
    /* "--json" where an option takes json as its value: "did you mean '--format json'?" */
    for (const struct ar_cli_opt *o = cmd->opts; o && o->name && len > 2; o++) {
        const char *v = o->values;
        if (!o->arg || !v || *v == '@')
            continue;
        for (const char *t = v; *t;) {
            size_t k = strcspn(t, "|");
            if (k == len - 2 && strncmp(t, word + 2, k) == 0) {
                ar_cli_usage_error(cmd, "unknown option '%s'; did you mean '--%s %s'?", word,
                                   o->name, word + 2);
                return;
            }
            t += k + (t[k] == '|');
        }
    }
    char names[64][40];
    const char *words[64];
    size_t n = 0;
    for (const struct ar_cli_opt *o = cmd->opts; o && o->name && n < 63; o++) {
        snprintf(names[n], sizeof(names[n]), "--%s", o->name);
        words[n] = names[n];
        n++;
    }
    words[n++] = "--help";
    const char *near = ar_suggest(word, words, n);
    if (near)
        ar_cli_usage_error(cmd, "unknown option '%s'; did you mean '%s'?", word, near);
    else
        ar_cli_usage_error(cmd, "unknown option '%s'", word);
}

int ar_cli_next(struct ar_cli_parser *p, const char **arg)
{
    struct parser_priv *pp = p->priv;
    if (!pp) {
        p->status = ar_cli_out_of_memory();
        return -2;
    }
    int longind = -1;
    int c = getopt_long(p->argc, p->argv, pp->shortopts, pp->longopts, &longind);
    p->ind = optind;
    *arg = optarg;
    if (c == -1)
        return -1;
    if (c == KEY_HELP) {
        ar_cli_print_help(p->cmd, stdout);
        p->status = AR_EXIT_OK;
        return -2;
    }
    if (c == '?' || c == ':') {
        char buf[64];
        const char *bad = p->argv[optind - 1];
        if (c == ':')
            ar_cli_usage_error(p->cmd, "option '%s' needs a value",
                               optopt ? opt_name_of(p->cmd, optopt, buf, sizeof(buf)) : bad);
        else if (optopt && optopt < 128 && isprint(optopt))
            ar_cli_usage_error(p->cmd, "unknown option '-%c'", optopt);
        else
            unknown_long_option(p->cmd, bad);
        p->status = AR_EXIT_USAGE;
        return -2;
    }
    return c;
}

static const struct ar_cli_opt *find_long(const struct ar_cli_command *cmd, const char *name,
                                          size_t len)
{
    for (const struct ar_cli_opt *o = cmd->opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static const struct ar_cli_opt *find_short(const struct ar_cli_command *cmd, char c)
{
    for (const struct ar_cli_opt *o = cmd->opts; o && o->name; o++)
        if (o->key == (unsigned char)c)
            return o;
    return NULL;
}

int ar_cli_operands_before_dashdash(const struct ar_cli_command *cmd, int argc, char **argv)
{
    int operands = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return operands;
        if (a[0] != '-' || !a[1]) {
            operands++;
        } else if (a[1] == '-') {
            /* --name VALUE takes the next argument; --name=VALUE does not. */
            const char *name = a + 2;
            const struct ar_cli_opt *o = find_long(cmd, name, strcspn(name, "="));
            if (o && o->arg && !strchr(name, '='))
                i++;
        } else {
            /* -abc: flags, until one that takes a value (the rest, or the next argument). */
            for (const char *c = a + 1; *c; c++) {
                const struct ar_cli_opt *o = find_short(cmd, *c);
                if (o && o->arg) {
                    if (!c[1])
                        i++;
                    break;
                }
            }
        }
    }
    return -1;
}

/* The width help is wrapped to; a word longer than a line stays whole. */
enum { HELP_WIDTH = 79, HELP_COLUMN = 29 };

/* Prints text from column col (the cursor is there), reflowing its spaces and line
 * breaks so no line passes HELP_WIDTH; continuation lines start at column indent. */
static void print_wrapped(FILE *f, const char *text, int col, int indent)
{
    int start = col;
    while (*text) {
        while (*text == ' ' || *text == '\n')
            text++;
        size_t n = strcspn(text, " \n");
        if (n == 0)
            break;
        if (col > start && col + 1 + (int)n > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = start = indent;
        } else if (col > start) {
            fputc(' ', f);
            col++;
        }
        fwrite(text, 1, n, f);
        col += (int)n;
        text += n;
    }
    fputc('\n', f);
}

const char *ar_cli_docdir(void)
{
    static char found[PATH_MAX];
    if (ar_is_dir(AR_DOCDIR))
        return AR_DOCDIR;
    /* Unpacked somewhere else: the release tarball is a prefix (bin/agentrun beside
     * share/doc/agentrun), the npm package keeps the binary in vendor/<os>-<arch>/
     * (scripts/package), so the documents are one or two levels above the binary. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    static const char *const up[] = { "/../share/doc/agentrun", "/../../share/doc/agentrun" };
    for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s%s", exe, up[i]) < (int)sizeof(path) &&
            ar_is_dir(path) && realpath(path, found))
            return found;
    }
    return NULL;
}

/* text with every AR_DOCDIR replaced by dir. Caller free()s; NULL when out of memory. */
static char *with_docdir(const char *text, const char *dir)
{
    size_t n = 0, dl = strlen(dir), ol = strlen(AR_DOCDIR);
    for (const char *t = text; (t = strstr(t, AR_DOCDIR)); t += ol)
        n++;
    char *out = malloc(strlen(text) + n * dl + 1), *o = out;
    for (const char *t = text, *at; out && t; t = at ? at + ol : NULL) {
        at = strstr(t, AR_DOCDIR);
        size_t k = at ? (size_t)(at - t) : strlen(t);
        memcpy(o, t, k);
        o += k;
        if (at) {
            memcpy(o, dir, dl);
            o += dl;
        }
    }
    if (out)
        *o = '\0';
    return out;
}

void ar_cli_print_help(const struct ar_cli_command *cmd, FILE *f)
{
    fprintf(f, "usage: agentrun %s %s\n\n", cmd->name, cmd->synopsis);
    print_wrapped(f, cmd->summary, 0, 0);
    if (cmd->description) {
        fputc('\n', f);
        const char *docs = strstr(cmd->description, AR_DOCDIR) ? ar_cli_docdir() : AR_DOCDIR;
        char *text = docs && strcmp(docs, AR_DOCDIR) ? with_docdir(cmd->description, docs) : NULL;
        print_wrapped(f, text ? text : cmd->description, 0, 0);
        free(text);
        /* An agentrun run from its build tree names documents that are not installed yet:
         * say where they are instead of sending the reader to a path that is not there. */
        if (!docs)
            print_wrapped(f,
                          "(" AR_DOCDIR " is not there yet: the documents are installed with "
                          "agentrun; in its source tree they are in docs/.)",
                          0, 0);
    }
    fprintf(f, "\noptions:\n");
    for (const struct ar_cli_opt *o = cmd->opts; o && o->name; o++) {
        char left[64];
        int n;
        if (o->key > 0 && o->key < 128)
            n = snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        else
            n = snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        if (n < 26)
            fprintf(f, "  %-26s ", left);
        else
            fprintf(f, "  %s\n  %-26s ", left, "");
        print_wrapped(f, o->help, HELP_COLUMN, HELP_COLUMN);
    }
    fprintf(f, "  %-26s %s\n", "-h, --help", "show this help and exit");
    if (cmd->example)
        fprintf(f, "\nexample:\n  %s\n", cmd->example);
}

int ar_cli_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int ar_cli_parse_usd(const char *s, double *usd)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || !isfinite(v))
        return -1;
    *usd = v;
    return 0;
}

int ar_cli_parse_duration_ms(const char *s, unsigned long long *ms)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return -1;
    double v = strtod(s, &end);
    /* strtod also reads "nan", "inf" and hex floats: only plain finite numbers are durations. */
    if (errno || end == s || !isfinite(v) || v < 0 || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
        return -1;
    double mult = 1000;
    if (*end == '\0' || strcmp(end, "s") == 0)
        mult = 1000;
    else if (strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "m") == 0)
        mult = 60000;
    else if (strcmp(end, "h") == 0)
        mult = 3600000;
    else
        return -1;
    /* The library's one reading of a duration (agentrun/request.h): 0 is 0, anything else
     * at least a millisecond, so "0.0004" is never "none". */
    uint64_t out;
    if (ar_seconds_to_ms(v * mult / 1000.0, &out, NULL) < 0)
        return -1;
    *ms = out;
    return 0;
}

int ar_cli_parse_size(const char *s, unsigned long long *bytes)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned long long mult = 1;
    if (*end == '\0' || strcasecmp(end, "b") == 0)
        mult = 1;
    else if (strcasecmp(end, "k") == 0 || strcasecmp(end, "kb") == 0 || strcasecmp(end, "kib") == 0)
        mult = 1024;
    else if (strcasecmp(end, "m") == 0 || strcasecmp(end, "mb") == 0 || strcasecmp(end, "mib") == 0)
        mult = 1024 * 1024;
    else if (strcasecmp(end, "g") == 0 || strcasecmp(end, "gb") == 0 || strcasecmp(end, "gib") == 0)
        mult = 1024ULL * 1024 * 1024;
    else
        return -1;
    if (v > (~0ULL) / mult)
        return -1;
    *bytes = v * mult;
    return 0;
}

/* "text|json" as "text, json" (sep ", ") or "text or json" (sep " or "). */
static void list_words(const char *values, const char *sep, char *out, size_t size)
{
    size_t off = 0;
    out[0] = '\0';
    for (const char *v = values; *v && off + 1 < size; v++) {
        int w = *v == '|' ? snprintf(out + off, size - off, "%s", sep)
                          : snprintf(out + off, size - off, "%c", *v);
        off += w > 0 ? (size_t)w : 0;
    }
}

int ar_cli_invalid_value(const struct ar_cli_command *cmd, const char *option, const char *arg,
                         const char *values)
{
    char list[256], near[64];
    list_words(values, ", ", list, sizeof(list));
    if (ar_suggest_in_list(arg, values, near, sizeof(near)))
        return ar_cli_usage_error(cmd, "invalid --%s '%s' (%s); did you mean '%s'?", option, arg,
                                  list, near);
    return ar_cli_usage_error(cmd, "invalid --%s '%s' (%s)", option, arg, list);
}

int ar_cli_choice(const struct ar_cli_command *cmd, int key, const char *arg)
{
    const struct ar_cli_opt *o = cmd->opts;
    while (o->name && o->key != key)
        o++;
    assert(o->name && o->values && o->values[0] != '@');
    int i = 0;
    for (const char *v = o->values; *v; i++) {
        size_t n = strcspn(v, "|");
        if (strlen(arg) == n && strncmp(v, arg, n) == 0)
            return i;
        v += n;
        v += *v == '|';
    }
    ar_cli_invalid_value(cmd, o->name, arg, o->values);
    return -1;
}

int ar_cli_subcommand(const struct ar_cli_command *cmd, int argc, char **argv, int ind,
                      const char *words)
{
    char list[128], near[64];
    list_words(words, " or ", list, sizeof(list));
    if (ind >= argc) {
        ar_cli_usage_error(cmd, "missing subcommand: %s", list);
        return -1;
    }
    int i = 0;
    for (const char *v = words; *v; i++) {
        size_t n = strcspn(v, "|");
        if (strlen(argv[ind]) == n && strncmp(v, argv[ind], n) == 0) {
            if (ind + 1 < argc) {
                ar_cli_usage_error(cmd, "unexpected argument '%s'", argv[ind + 1]);
                return -1;
            }
            return i;
        }
        v += n;
        v += *v == '|';
    }
    if (ar_suggest_in_list(argv[ind], words, near, sizeof(near)))
        ar_cli_usage_error(cmd, "unknown subcommand '%s' (%s); did you mean '%s'?", argv[ind], list,
                           near);
    else
        ar_cli_usage_error(cmd, "unknown subcommand '%s' (%s)", argv[ind], list);
    return -1;
}

/* The option getopt_long takes for "--name" (len bytes of it): an exact match, else the
 * one option name starts with; NULL when none or ambiguous. */
static const struct ar_cli_opt *long_option(const struct ar_cli_command *cmd, const char *name,
                                            size_t len)
{
    const struct ar_cli_opt *found = NULL;
    for (const struct ar_cli_opt *o = cmd->opts; o && o->name; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        if (o->name[len] == '\0')
            return o;
        if (found)
            return NULL;
        found = o;
    }
    return found && strncmp("help", name, len) != 0 ? found : NULL;
}

int ar_cli_wants_json(const struct ar_cli_command *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || !a[2])
            continue;
        size_t len = strcspn(a + 2, "=");
        const struct ar_cli_opt *o = long_option(cmd, a + 2, len);
        if (!o || strcmp(o->name, "format") != 0)
            continue;
        const char *value = a[2 + len] == '=' ? a + 3 + len : i + 1 < argc ? argv[++i] : "";
        if (strcmp(value, "json") == 0)
            return 1;
    }
    return 0;
}
