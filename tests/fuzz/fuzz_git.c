/*
 * libFuzzer target for src/git's pure parsers: `git status --porcelain=v2
 * -z` output and `git diff --name-status -z` output. The input is split at
 * the first "\n\n\n" (status, then name-status); without it, both parsers
 * read all of it. Files come back sorted, each path once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/git.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *sep = memmem(text, size, "\n\n\n", 3);
    size_t slen = sep ? (size_t)(sep - text) : size;
    const char *ctext = sep ? sep + 3 : text;
    size_t clen = sep ? size - slen - 3 : size;

    struct ar_git_snapshot *s = NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_git_snapshot_parse("/r", text, slen, &s, &err) != 0) {
        if (s || err.code == 0)
            abort();
        s = NULL;
        if (ar_git_snapshot_parse("/r", "", 0, &s, NULL) != 0)
            abort();
    }
    for (size_t i = 0; i < s->n; i++) {
        if (!s->files[i].path)
            abort();
        if (i && strcmp(s->files[i - 1].path, s->files[i].path) >= 0)
            abort();
        if (ar_git_snapshot_find(s, s->files[i].path) != &s->files[i])
            abort();
    }
    struct ar_error cerr = AR_ERROR_INIT;
    if (ar_git_snapshot_parse_commits(s, ctext, clen, &cerr) != 0 && cerr.code == 0)
        abort();
    /* Parsing again replaces what was there. */
    (void)ar_git_snapshot_parse_commits(s, ctext, clen, NULL);
    ar_git_snapshot_destroy(s);
    return 0;
}
