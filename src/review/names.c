/*
 * The changed paths of a diff git made are git's own (DESIGN §7b; docs/review.md,
 * "The paths are git's"). A path read back from the patch text is a guess: a name
 * with a trailing space, a tab, a newline, " b/" or "->" in it reads as another
 * name, and an exclude rule or the coverage would then be about a file that is not
 * the one changed. So every git diff a review makes runs with --patch-with-raw -z:
 * the raw part lists each changed path as git names it, NUL-terminated, with its
 * status; the patch part is what the model reads. ar_diff_names_apply() gives each
 * file section of the patch its names from that list, after checking that the
 * section's "diff --git" line is exactly the one git writes for those names, and
 * lists a changed path with no section as a gap (never reviewed, so never passed).
 */
#include <stdlib.h>
#include <string.h>

#include "review/diff.h"

void ar_diff_names_finish(struct ar_diff_names *names)
{
    if (!names)
        return;
    for (size_t i = 0; i < names->n; i++) {
        free(names->v[i].path);
        free(names->v[i].old_path);
    }
    free(names->v);
    free(names->new_rev);
    free(names->cwd);
    memset(names, 0, sizeof(*names));
}

int ar_diff_names_add(struct ar_diff_names *names, char status, const char *path,
                      const char *old_path)
{
    void *nv = realloc(names->v, (names->n + 1) * sizeof(*names->v));
    if (!nv)
        return AR_ENOMEM;
    names->v = nv;
    struct ar_diff_name *e = &names->v[names->n];
    e->status = status;
    e->old_oid[0] = '\0';
    e->path = strdup(path);
    e->old_path = old_path ? strdup(old_path) : NULL;
    if (!e->path || (old_path && !e->old_path)) {
        free(e->path);
        free(e->old_path);
        return AR_ENOMEM;
    }
    names->n++;
    names->given = 1;
    return 0;
}

/*
 * The raw records of `git diff --patch-with-raw -z`: ":M1 M2 OID1 OID2 X\0path\0",
 * with a second path for a rename or copy (X = R… or C…), "::…" for a combined
 * diff; then a NUL, then the patch. A diff with no change is empty.
 */
int ar_diff_names_parse_raw(const char *data, size_t len, struct ar_diff_names *names,
                            size_t *patch_at, struct ar_error *err)
{
    size_t pos = 0;
    names->given = 1;
    while (pos < len && data[pos] == ':') {
        const char *meta = data + pos;
        const char *nul = memchr(meta, '\0', len - pos);
        if (!nul)
            goto malformed;
        const char *sp = nul;
        while (sp > meta && sp[-1] != ' ')
            sp--;
        char status = *sp;
        if (sp == meta || sp == nul || status < 'A' || status > 'Z')
            goto malformed;
        pos = (size_t)(nul - data) + 1;
        const char *p[2] = { NULL, NULL };
        int n_paths = status == 'R' || status == 'C' ? 2 : 1;
        for (int k = 0; k < n_paths; k++) {
            const char *end = pos < len ? memchr(data + pos, '\0', len - pos) : NULL;
            if (!end || end == data + pos)
                goto malformed;
            p[k] = data + pos;
            pos = (size_t)(end - data) + 1;
        }
        int rc = n_paths == 2 ? ar_diff_names_add(names, status, p[1], p[0])
                              : ar_diff_names_add(names, status, p[0], NULL);
        if (rc)
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        /* ":MODE1 MODE2 OID1 OID2 X": the old side's blob is the third field (all
         * zeros for an addition, which has none). */
        const char *f = meta + 1;
        for (int k = 0; k < 2 && f < sp; k++) {
            const char *next = memchr(f, ' ', (size_t)(sp - f));
            f = next ? next + 1 : sp;
        }
        const char *f_end = f < sp ? memchr(f, ' ', (size_t)(sp - f)) : NULL;
        size_t olen = f_end ? (size_t)(f_end - f) : 0;
        struct ar_diff_name *e = &names->v[names->n - 1];
        if (olen && olen < sizeof(e->old_oid) && strspn(f, "0123456789abcdef") >= olen &&
            strspn(f, "0") < olen) {
            memcpy(e->old_oid, f, olen);
            e->old_oid[olen] = '\0';
        }
    }
    /* The NUL between the raw records and the patch. */
    if (pos < len && data[pos] == '\0')
        pos++;
    else if (pos < len && names->n)
        goto malformed;
    *patch_at = pos;
    return 0;

malformed:
    return ar_error_set(err, AR_EIO, "git", "git diff --raw -z output is malformed at byte %zu",
                        pos);
}

/* Needs C quoting in git's output with core.quotepath=false: a control byte, '"', '\\'. */
static int needs_quote(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\' || c == 0x7f;
}

int ar_diff_quote_name(struct ar_buf *out, const char *prefix, const char *name)
{
    int quote = 0;
    for (const char *s = name; *s && !quote; s++)
        quote = needs_quote((unsigned char)*s);
    for (const char *s = prefix; *s && !quote; s++)
        quote = needs_quote((unsigned char)*s);
    if (!quote)
        return ar_buf_printf(out, "%s%s", prefix, name);
    int rc = ar_buf_putc(out, '"');
    for (int part = 0; part < 2 && !rc; part++)
        for (const unsigned char *s = (const unsigned char *)(part ? name : prefix); *s && !rc;
             s++) {
            static const char letters[] = "abtnvfr";
            if (*s >= '\a' && *s <= '\r')
                rc = ar_buf_printf(out, "\\%c", letters[*s - '\a']);
            else if (*s == '"' || *s == '\\')
                rc = ar_buf_printf(out, "\\%c", *s);
            else if (needs_quote(*s))
                rc = ar_buf_printf(out, "\\%03o", *s);
            else
                rc = ar_buf_putc(out, (char)*s);
        }
    return rc ? rc : ar_buf_putc(out, '"');
}

/* The "diff --git" line git writes for old and new (pinned prefixes a/ and b/). */
static int git_header(struct ar_buf *b, const char *old, const char *new)
{
    b->len = 0;
    int rc = ar_buf_puts(b, "diff --git ");
    if (!rc)
        rc = ar_diff_quote_name(b, "a/", old);
    if (!rc)
        rc = ar_buf_putc(b, ' ');
    if (!rc)
        rc = ar_diff_quote_name(b, "b/", new);
    return rc;
}

/* 1 when file f's first line is exactly hdr. */
static int section_is(const struct ar_diff *d, const struct ar_diff_file *f,
                      const struct ar_buf *hdr)
{
    const char *p = d->text + f->start;
    size_t n = f->end - f->start;
    const char *nl = memchr(p, '\n', n);
    size_t len = nl ? (size_t)(nl - p) : n;
    return len == hdr->len && memcmp(p, hdr->data, len) == 0;
}

static int set_names(struct ar_diff_file *f, const struct ar_diff_name *e)
{
    char *path = strdup(e->path);
    char *old = e->old_path ? strdup(e->old_path) : NULL;
    if (!path || (e->old_path && !old)) {
        free(path);
        free(old);
        return AR_ENOMEM;
    }
    free(f->path);
    free(f->old_path);
    f->path = path;
    f->old_path = old;
    f->status = e->status;
    memcpy(f->old_oid, e->old_oid, sizeof(f->old_oid));
    return 0;
}

int ar_diff_names_apply(struct ar_diff *d, const struct ar_diff_names *names,
                        struct ar_diff_gaps *gaps, struct ar_error *err)
{
    if (!names || !names->given)
        return 0;
    struct ar_buf hdr;
    ar_buf_init(&hdr, AR_BUF_UNLIMITED);
    size_t i = 0;
    int rc = 0;
    for (size_t j = 0; j < names->n && !rc; j++) {
        const struct ar_diff_name *e = &names->v[j];
        /* A type change (a file that became a symlink) is two sections: the old
         * kind deleted, the new one added, both under its name. */
        int sections = e->status == 'T' ? 2 : 1, matched = 0;
        rc = git_header(&hdr, e->old_path ? e->old_path : e->path, e->path);
        for (int k = 0; k < sections && !rc; k++) {
            if (i >= d->n_files || !section_is(d, &d->files[i], &hdr))
                break;
            rc = set_names(&d->files[i++], e);
            matched++;
        }
        if (rc || matched == sections)
            continue;
        if (matched || e->status != 'U') {
            rc =
                ar_error_set(err, AR_EIO, "git",
                             "git's list of changed paths and its patch disagree at '%s'", e->path);
            break;
        }
        /* An unmerged path: git lists it, and its patch says only "* Unmerged path". */
        rc = ar_diff_gap_add(gaps, e->path,
                             "an unmerged path: git shows no diff of it until the conflict is "
                             "resolved",
                             err);
    }
    if (!rc && i < d->n_files)
        rc = ar_error_set(err, AR_EIO, "git",
                          "git's patch has a file section its list of changed paths lacks");
    if (rc == AR_ENOMEM)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    ar_buf_finish(&hdr);
    return rc;
}
