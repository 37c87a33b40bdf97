/*
 * Unified diffs: the file sections and hunks of a diff, and what of each file
 * is text. split.c cuts a parsed diff into chunks.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "review/diff.h"
#include "util/macros.h"
#include "util/utf8.h"

/* The parser's view of one line: [start, end) with end after the '\n'. */
struct line {
    const char *p;
    size_t start, end;
    size_t len; /* without the '\n' (and a '\r' before it) */
};

static int starts_with(const struct line *l, const char *prefix)
{
    size_t n = strlen(prefix);
    return l->len >= n && memcmp(l->p, prefix, n) == 0;
}

static void line_at(const char *text, size_t len, size_t pos, struct line *l)
{
    const char *nl = memchr(text + pos, '\n', len - pos);
    l->p = text + pos;
    l->start = pos;
    l->end = nl ? (size_t)(nl - text) + 1 : len;
    l->len = (nl ? (size_t)(nl - text) : len) - pos;
    if (l->len && l->p[l->len - 1] == '\r')
        l->len--;
}

/*
 * Git quotes a name holding a control byte, '"' or '\\' as a C string: octal
 * escapes for bytes, \a \b \t \n \v \f \r \" \\. p[0..n) starts with '"';
 * returns the unquoted name and, in *used, the bytes its quoted form took
 * (closing quote included), or NULL with *used 0 when the quote is not closed
 * (or out of memory).
 */
static char *unquote_c(const char *p, size_t n, size_t *used)
{
    static const char esc_in[] = "abtnvfr\"\\";
    static const char esc_out[] = "\a\b\t\n\v\f\r\"\\";
    *used = 0;
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 1;
    while (i < n && p[i] != '"') {
        if (p[i] != '\\' || i + 1 >= n) {
            out[o++] = p[i++];
            continue;
        }
        char c = p[++i];
        const char *e = c ? strchr(esc_in, c) : NULL;
        if (c >= '0' && c <= '7') {
            int v = 0;
            for (int k = 0; k < 3 && i < n && p[i] >= '0' && p[i] <= '7'; k++, i++)
                v = v * 8 + (p[i] - '0');
            out[o++] = (char)v;
            continue;
        }
        out[o++] = e ? esc_out[e - esc_in] : c;
        i++;
    }
    if (i >= n) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    *used = i + 1;
    return out;
}

/* [p, p + n) unquoted when it is one whole C-quoted name, else copied as it is. */
static char *unquote(const char *p, size_t n)
{
    if (n >= 2 && p[0] == '"') {
        size_t used;
        char *q = unquote_c(p, n, &used);
        if (q && used == n)
            return q;
        free(q);
    }
    return strndup(p, n);
}

/*
 * The path of a "--- X" / "+++ X" line exactly as git writes it: a C-quoted
 * name, or the bytes up to a tab (git appends one to a name that holds a space,
 * and plain diff -u a tab and a timestamp), else the whole rest of the line.
 * Nothing else is trimmed: "Cargo.lock " is not "Cargo.lock". The diff's prefix
 * is still on it (see strip_prefixes()). NULL for /dev/null.
 */
static char *header_path(const char *p, size_t n)
{
    if (n >= 2 && p[0] == '"') {
        size_t used;
        char *q = unquote_c(p, n, &used);
        if (q && (used == n || p[used] == '\t'))
            return q;
        free(q);
    }
    const char *tab = memchr(p, '\t', n);
    if (tab)
        n = (size_t)(tab - p);
    if (n == 9 && memcmp(p, "/dev/null", 9) == 0)
        return NULL;
    return strndup(p, n);
}

/*
 * Where the common trailing path components of a[0..an) and b[0..bn) begin:
 * *ia and *ib index a and b there, so a[0..*ia) and b[0..*ib) are what differs
 * in front (each empty or ending with '/'). Returns the length of the common
 * part, 0 when the last components differ.
 */
static size_t common_tail(const char *a, size_t an, const char *b, size_t bn, size_t *ia,
                          size_t *ib)
{
    size_t i = an, j = bn;
    while (i && j && a[i - 1] == b[j - 1])
        i--, j--;
    while (i < an && !((i == 0 || a[i - 1] == '/') && (j == 0 || b[j - 1] == '/')))
        i++, j++;
    *ia = i;
    *ib = j;
    return an - i;
}

static void replace(char **slot, char *value)
{
    free(*slot);
    *slot = value;
}

/* "diff --git X Y" as written, prefixes included. Unquoted names may hold
 * spaces: git wrote the split where both names share the longest tail (the
 * same path on both sides, but for a rename). */
static void git_header_paths(struct ar_diff_file *f, const struct line *l, size_t skip)
{
    const char *r = l->p + skip;
    size_t n = l->len - skip;
    size_t an = 0;
    if (n && r[0] == '"') {
        const char *q = r + 1;
        while (q < r + n && *q != '"')
            q += (*q == '\\') ? 2 : 1;
        if (q >= r + n)
            return;
        an = (size_t)(q - r) + 1;
        if (an + 1 >= n || r[an] != ' ')
            return;
    } else {
        /* Equal prefixes (a/ b/, i/ w/, none) put the split in the middle;
         * else the candidates are tried from the end, a bounded number of
         * them, so a hostile line full of spaces costs linear time. */
        if (n < 3)
            return;
        size_t mid = (n - 1) / 2, ia, ib, best = 0;
        if (n % 2 == 1 && r[mid] == ' ' && common_tail(r, mid, r + mid + 1, n - mid - 1, &ia, &ib))
            an = mid;
        size_t cand = 0;
        for (size_t i = n - 1, tries = 0; !an && i > 0 && tries < 64; i--) {
            if (r[i] != ' ' || i + 1 >= n)
                continue;
            tries++;
            size_t c = common_tail(r, i, r + i + 1, n - i - 1, &ia, &ib);
            if (c > best) {
                best = c;
                cand = i;
            }
        }
        if (!an)
            an = cand;
        for (size_t i = n - 1; !an && i > 0; i--)
            if (r[i] == ' ' && i + 1 < n)
                an = i; /* nothing in common (a rename): the last space */
        if (!an)
            return;
    }
    replace(&f->git_old, header_path(r, an));
    replace(&f->git_new, header_path(r + an + 1, n - an - 1));
}

struct parse_state {
    struct ar_diff *d;
    size_t cap;
    struct ar_diff_file *cur;
    size_t hunks_cap;
    int git;      /* the current section began with "diff --git" */
    int seen_hdr; /* it has had its "--- " / "+++ " lines */
    long old_left, new_left;
    int counted; /* inside a hunk whose lengths are known */
};

static int file_begin(struct parse_state *st, size_t at, int git)
{
    struct ar_diff *d = st->d;
    if (st->cur)
        st->cur->end = at;
    else
        d->preamble = at;
    if (d->n_files == st->cap) {
        size_t ncap = st->cap ? st->cap * 2 : 16;
        void *nv = realloc(d->files, ncap * sizeof(*d->files));
        if (!nv)
            return AR_ENOMEM;
        d->files = nv;
        st->cap = ncap;
    }
    st->cur = &d->files[d->n_files++];
    memset(st->cur, 0, sizeof(*st->cur));
    st->cur->start = at;
    st->hunks_cap = 0;
    st->git = git;
    st->seen_hdr = 0;
    st->counted = 0;
    return 0;
}

/*
 * The decimal number at p, read no further than end: strtol() would run past
 * the line (skipping a newline as space) and past the end of a text that is
 * not NUL-terminated. Saturates instead of overflowing. Returns the first byte
 * after the digits, or NULL when there is none.
 */
static const char *parse_number(const char *p, const char *end, long *out)
{
    const char *start = p;
    long v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++)
        v = v > (LONG_MAX - 9) / 10 ? LONG_MAX : v * 10 + (*p - '0');
    *out = v;
    return p > start ? p : NULL;
}

/* "@@ -l[,s] +l[,s] @@": a missing count means 1. */
static int parse_hunk_counts(const struct line *l, long *old_n, long *new_n)
{
    const char *p = l->p + 3, *end = l->p + l->len;
    long v[2] = { 1, 1 };
    for (int k = 0; k < 2; k++) {
        long first;
        if (p >= end || *p != (k == 0 ? '-' : '+'))
            return -1;
        p = parse_number(p + 1, end, &first);
        if (!p)
            return -1;
        if (p < end && *p == ',') {
            p = parse_number(p + 1, end, &v[k]);
            if (!p)
                return -1;
        }
        if (p < end && *p == ' ')
            p++;
    }
    *old_n = v[0];
    *new_n = v[1];
    return 0;
}

static int hunk_begin(struct parse_state *st, const struct line *l)
{
    struct ar_diff_file *f = st->cur;
    if (f->n_hunks == st->hunks_cap) {
        size_t ncap = st->hunks_cap ? st->hunks_cap * 2 : 8;
        void *nv = realloc(f->hunks, ncap * sizeof(*f->hunks));
        if (!nv)
            return AR_ENOMEM;
        f->hunks = nv;
        st->hunks_cap = ncap;
    }
    if (f->n_hunks == 0)
        f->body = l->start;
    f->hunks[f->n_hunks++] = l->start;
    st->counted = starts_with(l, "@@ -") && parse_hunk_counts(l, &st->old_left, &st->new_left) == 0;
    return 0;
}

/* Inside a counted hunk: 1 when the line belongs to it. */
static int hunk_consume(struct parse_state *st, const struct line *l)
{
    if (!st->counted || (st->old_left <= 0 && st->new_left <= 0))
        return 0;
    char c = l->len ? l->p[0] : ' ';
    switch (c) {
    case ' ':
        st->old_left--;
        st->new_left--;
        return 1;
    case '-':
        st->old_left--;
        return 1;
    case '+':
        st->new_left--;
        return 1;
    case '\\':
        return 1;
    default:
        return 0; /* the hunk was shorter than announced: parse the line normally */
    }
}

static int parse_line(struct parse_state *st, const struct line *l, const struct line *next)
{
    struct ar_diff_file *f = st->cur;
    if (f && hunk_consume(st, l))
        return 0;
    if (f && f->n_hunks && starts_with(l, "\\"))
        return 0; /* "\ No newline at end of file" after the last line of a hunk */

    static const char *const git_starts[] = { "diff --git ", "diff --cc ", "diff --combined " };
    for (size_t i = 0; i < AR_ARRAY_SIZE(git_starts); i++)
        if (starts_with(l, git_starts[i])) {
            int rc = file_begin(st, l->start, 1);
            if (rc == 0)
                git_header_paths(st->cur, l, strlen(git_starts[i]));
            return rc;
        }
    if (starts_with(l, "--- ") && next && next->len >= 4 && memcmp(next->p, "+++ ", 4) == 0) {
        if (!f || !st->git || st->seen_hdr || f->n_hunks) {
            int rc = file_begin(st, l->start, 0);
            if (rc)
                return rc;
            f = st->cur;
        }
        st->seen_hdr = 1;
        f->has_hdr = 1;
        replace(&f->hdr_old, header_path(l->p + 4, l->len - 4));
        replace(&f->hdr_new, header_path(next->p + 4, next->len - 4));
        return 0;
    }
    if (!f)
        return 0;
    if (starts_with(l, "@@"))
        return hunk_begin(st, l);
    if (f->n_hunks == 0) {
        int kind = starts_with(l, "GIT binary patch") ? AR_DIFF_BINARY_PATCH
                   : starts_with(l, "Binary files ") && l->len >= 7 &&
                           memcmp(l->p + l->len - 7, " differ", 7) == 0
                       ? AR_DIFF_BINARY_SAID
                       : 0;
        if (kind) {
            if (!f->binary) {
                f->binary_at = l->start;
                f->binary = kind;
            }
            return 0;
        }
    }
    if (st->git && f->n_hunks == 0) {
        /* These name the files without any prefix. */
        if (starts_with(l, "rename to ") || starts_with(l, "copy to ")) {
            size_t k = l->p[0] == 'r' ? 10 : 8;
            replace(&f->path, unquote(l->p + k, l->len - k));
            f->named = 1;
        } else if (starts_with(l, "rename from ") || starts_with(l, "copy from ")) {
            size_t k = l->p[0] == 'r' ? 12 : 10;
            replace(&f->old_path, unquote(l->p + k, l->len - k));
            f->named = 1;
        }
    }
    return 0;
}

/* A prefix pair: what the diff puts in front of the old and the new names. */
struct prefixes {
    const char *src, *dst;
    size_t src_n, dst_n;
};

/* When raw is name with a whole-component prefix in front: 1 and its length in *n. */
static int prefix_of(const char *raw, const char *name, size_t *n)
{
    if (!raw || !name)
        return 0;
    size_t rn = strlen(raw), nn = strlen(name);
    if (rn < nn || strcmp(raw + rn - nn, name) != 0 || (rn > nn && raw[rn - nn - 1] != '/'))
        return 0;
    *n = rn - nn;
    return 1;
}

/*
 * The prefixes a file's own names show: for a rename or copy, its names as
 * written against the bare ones of "rename from/to"; else the part in front
 * of the common tail of its two names ("--- a/x" "+++ b/x": a/ and b/;
 * --no-prefix: none). 0 when its names show nothing (a new file of a plain
 * patch, a rename without a common tail).
 */
static int file_prefixes(const struct ar_diff_file *f, struct prefixes *p)
{
    int hdr = f->hdr_old && f->hdr_new;
    const char *o = hdr ? f->hdr_old : f->git_old;
    const char *n = hdr ? f->hdr_new : f->git_new;
    if (!o || !n)
        return 0;
    size_t a, b;
    if (f->named) {
        if (!prefix_of(o, f->old_path, &a) || !prefix_of(n, f->path, &b))
            return 0;
    } else if (!common_tail(o, strlen(o), n, strlen(n), &a, &b)) {
        return 0;
    }
    *p = (struct prefixes){ o, n, a, b };
    return 1;
}

static char *strip_prefix(const char *raw, const char *pfx, size_t n)
{
    if (n && strncmp(raw, pfx, n) == 0 && raw[n])
        raw += n;
    return strdup(raw);
}

/*
 * Names every file: its names as written minus the diff's own prefixes, which
 * the headers tell (a/ and b/ by default, none with --no-prefix, anything with
 * --src-prefix/--dst-prefix). A path is never stripped of a prefix the diff
 * does not use, so a real top-level folder a/ or b/ keeps its name.
 */
static int name_files(struct ar_diff *d)
{
    struct prefixes wide = { "a/", "b/", 2, 2 }; /* git's default, when nothing shows */
    for (size_t i = 0; i < d->n_files; i++)
        if (file_prefixes(&d->files[i], &wide)) {
            d->src_prefix = strndup(wide.src, wide.src_n);
            d->dst_prefix = strndup(wide.dst, wide.dst_n);
            if (!d->src_prefix || !d->dst_prefix)
                return AR_ENOMEM;
            wide = (struct prefixes){ d->src_prefix, d->dst_prefix, wide.src_n, wide.dst_n };
            break;
        }
    int rc = 0;
    for (size_t i = 0; i < d->n_files; i++) {
        struct ar_diff_file *f = &d->files[i];
        struct prefixes own;
        if (!f->named && !rc) {
            if (!file_prefixes(f, &own))
                own = wide;
            const char *o = f->has_hdr ? f->hdr_old : f->git_old;
            const char *n = f->has_hdr ? f->hdr_new : f->git_new;
            char *op = o ? strip_prefix(o, own.src, own.src_n) : NULL;
            char *np = n ? strip_prefix(n, own.dst, own.dst_n) : NULL;
            if ((o && !op) || (n && !np))
                rc = AR_ENOMEM;
            if (np) {
                replace(&f->path, np);
                replace(&f->old_path, op);
            } else {
                /* A deletion: the old name is the file's name. */
                replace(&f->path, op);
                replace(&f->old_path, NULL);
            }
        }
        replace(&f->hdr_old, NULL);
        replace(&f->hdr_new, NULL);
        replace(&f->git_old, NULL);
        replace(&f->git_new, NULL);
    }
    return rc;
}

int ar_diff_parse(const char *text, size_t len, struct ar_diff *out, struct ar_error *err)
{
    struct ar_diff d = AR_DIFF_INIT;
    d.text = text;
    d.len = len;
    d.preamble = len;
    struct parse_state st = { .d = &d };
    struct line cur, next;
    int have_next = 0;
    if (len)
        line_at(text, len, 0, &cur);
    for (size_t pos = 0; pos < len; pos = cur.end, cur = next) {
        have_next = cur.end < len;
        if (have_next)
            line_at(text, len, cur.end, &next);
        int rc = parse_line(&st, &cur, have_next ? &next : NULL);
        if (rc) {
            ar_diff_finish(&d);
            return ar_error_set(err, rc, NULL, "out of memory parsing the diff");
        }
        if (!have_next)
            break;
    }
    if (st.cur)
        st.cur->end = len;
    if (name_files(&d) != 0) {
        ar_diff_finish(&d);
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory parsing the diff");
    }
    for (size_t i = 0; i < d.n_files; i++) {
        struct ar_diff_file *f = &d.files[i];
        if (f->n_hunks == 0)
            f->body = f->end;
        if (f->old_path && f->path && strcmp(f->old_path, f->path) == 0) {
            free(f->old_path);
            f->old_path = NULL;
        }
        for (size_t k = 0; k < f->n_hunks; k++) {
            size_t end = k + 1 < f->n_hunks ? f->hunks[k + 1] : f->end;
            if (end - f->hunks[k] > f->largest_hunk)
                f->largest_hunk = end - f->hunks[k];
        }
        if (!f->binary && f->n_hunks && ar_diff_text_is_binary(text + f->body, f->end - f->body))
            f->binary = AR_DIFF_BINARY_CONTENT;
        else if (!f->binary && f->n_hunks &&
                 ar_diff_new_is_lfs_pointer(text + f->body, f->end - f->body))
            f->binary = AR_DIFF_BINARY_LFS;
        if (f->binary == AR_DIFF_BINARY_CONTENT || f->binary == AR_DIFF_BINARY_LFS)
            f->binary_at = f->body;
    }
    *out = d;
    return 0;
}

void ar_diff_finish(struct ar_diff *d)
{
    for (size_t i = 0; i < d->n_files; i++) {
        free(d->files[i].path);
        free(d->files[i].old_path);
        free(d->files[i].hunks);
        free(d->files[i].hdr_old);
        free(d->files[i].hdr_new);
        free(d->files[i].git_old);
        free(d->files[i].git_new);
        free(d->files[i].whole_why);
    }
    free(d->files);
    free(d->src_prefix);
    free(d->dst_prefix);
    *d = (struct ar_diff)AR_DIFF_INIT;
}

/* The bytes that say "not text": C0 controls other than tab, line feed, vertical
 * tab, form feed, carriage return and escape, and DEL. NUL is not one: a file
 * that is text apart from NULs is text (the NULs reach the model as U+FFFD). */
static int control_byte(unsigned char c)
{
    return (c < 0x20 && c != 0 && !(c >= '\t' && c <= '\r') && c != 0x1b) || c == 0x7f;
}

/* The bytes of content that count for the binary judgement, and of them the invalid
 * UTF-8 and the control ones. */
struct byte_count {
    size_t counted, controls, invalid;
};

static void count_bytes(struct byte_count *bc, const char *p, size_t from, size_t to)
{
    for (size_t i = from; i < to;) {
        size_t k = ar_utf8_seq_len(p + i, to - i);
        size_t step = k ? k : 1;
        /* A NUL, or one already turned into U+FFFD, counts for nothing. */
        if (p[i] != 0 && !(k == 3 && memcmp(p + i, "\xEF\xBF\xBD", 3) == 0)) {
            bc->counted += step;
            bc->invalid += !k;
            bc->controls += k == 1 && control_byte((unsigned char)p[i]);
        }
        i += step;
    }
}

static int binary_by_count(const struct byte_count *bc)
{
    return bc->controls * 100 > bc->counted * AR_DIFF_BINARY_CONTROL_PERCENT ||
           bc->invalid * 100 > bc->counted * AR_DIFF_BINARY_INVALID_PERCENT;
}

int ar_diff_text_is_binary(const char *p, size_t n)
{
    struct byte_count bc = { 0, 0, 0 };
    struct line l;
    for (size_t pos = 0; pos < n; pos = l.end) {
        line_at(p, n, pos, &l);
        /* The content of a hunk line is what follows its ' ', '+' or '-'; hunk headers
         * and "\ No newline at end of file" are git's own. */
        if (starts_with(&l, "@@") || starts_with(&l, "\\"))
            continue;
        char c0 = l.len ? p[l.start] : 0;
        count_bytes(&bc, p, l.start + (c0 == ' ' || c0 == '+' || c0 == '-'), l.end);
    }
    return binary_by_count(&bc);
}

int ar_diff_content_is_binary(const char *p, size_t n)
{
    struct byte_count bc = { 0, 0, 0 };
    count_bytes(&bc, p, 0, n);
    return binary_by_count(&bc);
}

/* 1 when the n bytes at s are exactly "oid sha256:" and 64 hex digits. */
static int lfs_oid_line(const char *s, size_t n)
{
    static const char key[] = "oid sha256:";
    size_t k = sizeof(key) - 1;
    if (n != k + 64 || memcmp(s, key, k) != 0)
        return 0;
    for (size_t i = k; i < n; i++)
        if (!strchr("0123456789abcdef", s[i]) || !s[i])
            return 0;
    return 1;
}

/* Whether the lines of p (with hunk: '+' and ' ' lines only, their first byte off)
 * make a Git LFS pointer. */
static int lfs_pointer(const char *p, size_t n, int hunk)
{
    int version = 0, oid = 0, size = 0;
    struct line l;
    for (size_t pos = 0; pos < n; pos = l.end) {
        line_at(p, n, pos, &l);
        /* The new content: what follows each '+' or ' ' line of the hunks. A modified
         * pointer changes only its oid and size; its version line is context, or,
         * behind ext- lines, out of the hunk altogether. */
        if (hunk && (!l.len || (l.p[0] != '+' && l.p[0] != ' ')))
            continue;
        const char *c = l.p + (hunk ? 1 : 0);
        size_t cn = l.len - (hunk ? 1 : 0);
        /* The pointer's first line, in the spec's two historical spellings. */
        version |= (cn >= 41 && memcmp(c, "version https://git-lfs.github.com/spec/", 40) == 0) ||
                   (cn >= 40 && memcmp(c, "version https://hawser.github.com/spec/", 39) == 0);
        oid |= lfs_oid_line(c, cn);
        size |= cn > 5 && memcmp(c, "size ", 5) == 0 && strspn(c + 5, "0123456789") >= cn - 5;
    }
    return oid && (version || size);
}

int ar_diff_new_is_lfs_pointer(const char *p, size_t n)
{
    return lfs_pointer(p, n, 1);
}

int ar_diff_content_is_lfs_pointer(const char *p, size_t n)
{
    return lfs_pointer(p, n, 0);
}

int ar_diff_has_file(const struct ar_diff *d, const char *path)
{
    if (!path || !*path)
        return 0;
    for (size_t i = 0; i < d->n_files; i++) {
        const struct ar_diff_file *f = &d->files[i];
        if ((f->path && strcmp(f->path, path) == 0) ||
            (f->old_path && strcmp(f->old_path, path) == 0))
            return 1;
    }
    return 0;
}
