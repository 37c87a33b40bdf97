/*
 * extract: what `agentrun extract [--repair] [--schema FILE] [--code [--lang L]]` does,
 * through agentrun/extract.h alone. Reads model text from standard input and prints the
 * JSON value in it as one line of compact JSON (or the code blocks); the repairs made and
 * the values left out go to stderr. Exit 0 found, 3 not found (or against the schema), 2
 * on a usage or read error: as agentrun's.
 *
 *     cc extract.c $(pkg-config --cflags --libs agentrun) -o extract
 *     ./extract --repair < answer.md
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <agentrun/extract.h>

static int write_fn(void *arg, const char *data, size_t len)
{
    return fwrite(data, 1, len, arg) == len ? 0 : -1;
}

static int block_fn(void *arg, const char *data, size_t len)
{
    if (write_fn(arg, data, len) < 0)
        return -1;
    return len && data[len - 1] != '\n' ? write_fn(arg, "\n", 1) : 0;
}

/* The whole of f into *buf (NUL-terminated); its length, or -1. */
static long slurp(FILE *f, char **buf)
{
    size_t n = 0, cap = 1 << 16;
    char *b = malloc(cap);
    for (size_t got; b && (got = fread(b + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n - 1 == 0) {
            char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    if (!b || ferror(f)) {
        free(b);
        return -1;
    }
    b[n] = '\0';
    *buf = b;
    return (long)n;
}

int main(int argc, char **argv)
{
    struct ar_extraction_options o;
    struct ar_contract *contract = NULL;
    struct ar_error err = AR_ERROR_INIT;
    const char *lang = NULL;
    int code = 0;
    ar_extraction_options_init(&o);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repair") == 0) {
            o.repair = 1;
        } else if (strcmp(argv[i], "--array") == 0) {
            o.want = AR_WANT_ARRAY;
        } else if (strcmp(argv[i], "--code") == 0) {
            code = 1;
        } else if (strcmp(argv[i], "--lang") == 0 && i + 1 < argc) {
            code = 1;
            lang = argv[++i];
        } else if (strcmp(argv[i], "--schema") == 0 && i + 1 < argc) {
            FILE *f = fopen(argv[++i], "rb");
            char *schema = NULL;
            long n = f ? slurp(f, &schema) : -1;
            if (f)
                fclose(f);
            if (n < 0 || ar_contract_parse(schema, (size_t)n, &contract, &err) < 0) {
                fprintf(stderr, "extract: schema '%s': %s\n", argv[i],
                        n < 0 ? "cannot read it" : err.msg);
                free(schema);
                return 2;
            }
            free(schema);
            o.contract = contract;
        } else {
            fprintf(stderr, "usage: extract [--repair] [--array] [--schema FILE] "
                            "[--code [--lang LANG]] < TEXT\n");
            return 2;
        }
    }
    char *text;
    long len = slurp(stdin, &text);
    if (len < 0) {
        fprintf(stderr, "extract: cannot read standard input\n");
        return 2;
    }
    int status = 0;
    if (code) {
        int n = ar_markdown_blocks(text, (size_t)len, lang, block_fn, stdout);
        if (n == 0)
            fprintf(stderr, "extract: no code block found\n");
        status = n > 0 ? 0 : n == 0 ? 3 : 2;
    } else {
        struct ar_extraction *x;
        if (ar_extract_json(text, (size_t)len, &o, &x, &err) < 0) {
            fprintf(stderr, "extract: %s\n", err.msg);
            status = err.code == AR_ENOMEM ? 2 : 3;
        } else {
            char *fixes = ar_extract_fix_names(x->fixes & ~(unsigned)AR_FIX_NOTES, ", ");
            if (fixes && *fixes)
                fprintf(stderr, "extract: repaired: %s\n", fixes);
            free(fixes);
            if (x->extra_count)
                fprintf(stderr, "extract: left out %zu more JSON value(s), the first at byte %zu\n",
                        x->extra_count, x->extra_at);
            if (!x->valid) {
                fputs(x->violations, stderr);
                status = 3;
            } else if (ar_extraction_write(x, text, write_fn, stdout) != 0 ||
                       fputc('\n', stdout) == EOF) {
                status = 2;
            }
            ar_extraction_destroy(x);
        }
    }
    ar_contract_destroy(contract);
    free(text);
    return fflush(stdout) == 0 ? status : 2;
}
