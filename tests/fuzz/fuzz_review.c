/*
 * libFuzzer target for src/review: the input (after two selector bytes) is a
 * unified diff, parsed, planned (coverage.c: the filter, the binary rule) and
 * split into chunks of a small maximum size the selector picks; the same bytes
 * are also read as a model's review object, which is merged with itself
 * against the diff, located (paths, lines, fingerprints) and given a verdict.
 *
 * The gate's invariant (DESIGN §7b), whatever the diff: when every chunk comes
 * back with a passing review and the verdict is exit 0, every line of the
 * input reached the model (is in a chunk) unless it lies in a section a rule
 * of the user's left out, and that rule really matches (the filter skips the
 * path, or the file is binary and binary files were allowed). Also: file
 * sections and hunks lie inside the text, chunks are NUL-terminated and hold
 * no NUL, each chunk reads back as a diff, and each chunk in the review prompt
 * sits inside a fence it cannot close (<diff-TAG> … </diff-TAG>, TAG not in it), and
 * every hunk of a reviewed file is in a chunk that holds that file.
 *
 * Issue 44's rules, as properties: a file whose new content is a Git LFS pointer is
 * never reviewed; the paths are git's: names cut from the input (any bytes but NUL:
 * spaces at either end, tabs, newlines, quotes, backslashes, invalid UTF-8, " b/")
 * written as git writes them in a patch read back exactly, and git's list of them
 * names the parsed sections; untrusted text shown (util/shown.h) never holds a line
 * break, a "##[", or a line a continuation did not start.
 *
 * Issue 57's union rule (every answer counts): the input read as a model's reply, its
 * values that make a review are its answers, and their union (ar_review_union()) holds
 * each fingerprint exactly as often as the answer that holds it most, loses no finding
 * of any answer, passes only when each passed, and fails wherever any answer alone
 * fails; laid-out text (ar_shown_layout()) keeps its lines and starts none with "::".
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/prompt.h"
#include "json/extract.h"
#include "prompt/prompt.h"
#include "review/diff.h"
#include "review/review.h"
#include "util/buf.h"
#include "util/shown.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when path has a ".." component. */
static int climbs(const char *path)
{
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

static void check_diff(const struct ar_diff *d, size_t len)
{
    if (d->preamble > len)
        abort();
    for (size_t i = 0; i < d->n_files; i++) {
        const struct ar_diff_file *f = &d->files[i];
        if (f->start > f->body || f->body > f->end || f->end > len)
            abort();
        if (f->binary && (f->binary_at < f->start || f->binary_at >= f->end))
            abort();
        for (size_t h = 0; h < f->n_hunks; h++)
            if (f->hunks[h] < f->body || f->hunks[h] >= f->end)
                abort();
        /* A "diff --git" line whose paths cannot be told apart leaves path NULL,
         * "+++ " with nothing after it makes it "", which has_file never matches. */
        if (f->path && *f->path && !ar_diff_has_file(d, f->path))
            abort();
    }
}

/* 1 when the n bytes at p are somewhere in the chunks. */
static int sent(const struct ar_diff_chunk *chunks, size_t n_chunks, const char *p, size_t n)
{
    for (size_t c = 0; c < n_chunks; c++)
        if (memmem(chunks[c].text, chunks[c].len, p, n))
            return 1;
    return n == 0;
}

/* The section of d that holds byte `at`, or NULL (the preamble). */
static const struct ar_diff_file *section_at(const struct ar_diff *d, size_t at)
{
    for (size_t i = 0; i < d->n_files; i++)
        if (at >= d->files[i].start && at < d->files[i].end)
            return &d->files[i];
    return NULL;
}

/*
 * The fence (issue 44): the chunk rendered into the review template sits between
 * one <diff-TAG> line and one </diff-TAG> line, TAG 32 hex digits the chunk does
 * not hold, and nothing of the chunk comes after the closing line.
 */
static void check_fence(const char *chunk, size_t len)
{
    static struct ar_prompt *tpl;
    if (!tpl && ar_prompt_load("review", NULL, &tpl, NULL) != 0)
        abort();
    struct ar_prompt_var vars[] = { { "diff", chunk } };
    struct ar_buf out;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    if (ar_prompt_render(tpl, vars, 1, &out, NULL) != 0)
        abort();
    const char *p = ar_buf_cstr(&out);
    const char *open = strstr(p, "\n<diff-");
    if (!open)
        abort();
    char close[64];
    snprintf(close, sizeof(close), "\n</diff-%.*s>\n", AR_FENCE_LEN, open + 7);
    const char *shut = strstr(open, close);
    if (open[7 + AR_FENCE_LEN] != '>' || strspn(open + 7, "0123456789abcdef") < AR_FENCE_LEN ||
        memmem(chunk, len, close + 1, strlen(close) - 2) || !shut || strstr(shut + 1, close) ||
        shut[strlen(close)] != '\0' || shut - (open + 7 + AR_FENCE_LEN + 2) < (ptrdiff_t)len)
        abort();
    ar_buf_finish(&out);
}

/*
 * The gate, checked against the text itself: plans d as the review does, lets
 * every chunk pass, and when the verdict is 0 requires every line of the text
 * in a chunk unless a rule of the user's really left its section out.
 */
static void check_gate(const char *text, size_t len, const struct ar_diff *d, size_t max,
                       unsigned sel)
{
    static const char *const globs[] = { "*.lock", "vendor/", "*" };
    const char *ex[1] = { globs[sel % 3] };
    struct ar_path_filter pf = { NULL, 0, ex, (sel & 4) ? 1 : 0, (sel & 8) != 0 };
    int allow_binary = (sel & 16) != 0;
    struct ar_review_coverage cov;
    unsigned char *send = NULL;
    if (ar_coverage_plan(d, &pf, allow_binary, max, NULL, &cov, &send, NULL) != 0)
        abort();
    struct ar_diff_chunk *chunks = NULL;
    size_t n = 0;
    if (ar_diff_split(d, max, send, &chunks, &n, NULL) != 0 ||
        ar_coverage_chunks(&cov, send, chunks, n) != 0)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (!chunks[i].text || chunks[i].text[chunks[i].len] != '\0' ||
            strlen(chunks[i].text) != chunks[i].len)
            abort();
        if (chunks[i].first_file > chunks[i].last_file || chunks[i].last_file >= d->n_files)
            abort();
        check_fence(chunks[i].text, chunks[i].len);
        /* A chunk reads back as a diff. */
        struct ar_diff cd = AR_DIFF_INIT;
        if (ar_diff_parse(chunks[i].text, chunks[i].len, &cd, NULL) != 0)
            abort();
        check_diff(&cd, chunks[i].len);
        ar_diff_finish(&cd);
    }
    struct ar_review *parts = calloc(n + 1, sizeof(*parts));
    for (size_t i = 0; i < n; i++) {
        ar_review_init(&parts[i]);
        parts[i].passed = 1;
        parts[i].chunks = 1;
    }
    if (ar_coverage_finish(&cov, parts, n, NULL) != 0)
        abort();
    /* A file reviewed has every hunk in a chunk that says it holds the file: a piece of a
     * file cut at hunks holds all of its hunks, never only its first (issue 50). Each hunk
     * in exactly one chunk is tests/unit/test_review.c's property, on hunks told apart. */
    for (size_t i = 0; i < d->n_files; i++) {
        const struct ar_diff_file *f = &d->files[i];
        if (cov.files[i].status != AR_COVER_REVIEWED)
            continue;
        for (size_t h = 0; h < f->n_hunks; h++) {
            size_t end = h + 1 < f->n_hunks ? f->hunks[h + 1] : f->end;
            int held = 0;
            for (size_t c = 0; c < n && !held; c++)
                held = chunks[c].first_file <= i && i <= chunks[c].last_file &&
                       memmem(chunks[c].text, chunks[c].len, text + f->hunks[h],
                              end - f->hunks[h]) != NULL;
            if (!held)
                abort();
        }
    }
    struct ar_review rv;
    ar_review_init(&rv);
    rv.passed = 1;
    struct ar_review_verdict vd;
    ar_review_verdict(&rv, &cov, AR_SEV_LOW, 0, &vd);
    if (vd.exit_status == 0) {
        for (size_t pos = 0; pos < len;) {
            const char *nl = memchr(text + pos, '\n', len - pos);
            size_t end = nl ? (size_t)(nl - text) + 1 : len;
            const struct ar_diff_file *f = section_at(d, pos);
            int left_out = 0;
            if (f) {
                size_t i = (size_t)(f - d->files);
                if (cov.files[i].status == AR_COVER_EXCLUDED)
                    left_out = ar_path_filter_skips(&pf, f->path);
                else if (cov.files[i].status == AR_COVER_BINARY)
                    left_out = allow_binary && f->binary;
                /* Content the model cannot see is never reviewed. */
                if (cov.files[i].status == AR_COVER_REVIEWED &&
                    ar_diff_new_is_lfs_pointer(text + f->body, f->end - f->body))
                    abort();
                /* A rule that does not hold is no rule: the line had to be sent. */
                if (cov.files[i].status != AR_COVER_REVIEWED && !left_out)
                    abort();
            }
            /* Text before the first file (a commit message) rides with the first chunk;
             * with nothing sent whole there is no chunk, and it is no changed file. */
            if (!left_out && (f || n) && !sent(chunks, n, text + pos, end - pos))
                abort();
            pos = end;
        }
    }
    ar_coverage_free(&cov);
    free(parts);
    free(send);
    ar_diff_chunks_free(chunks, n);
}

/*
 * An answer that broke the contract as a whole is read finding by finding: when
 * its `issues` is an array holding an object, every element that is an object is
 * kept (placed or unplaced), so a critical one always fails the gate, whatever
 * the envelope around it says.
 */
static void check_salvage(json_t *v)
{
    json_t *issues = json_object_get(v, "issues");
    size_t objects = 0, crit = 0;
    for (size_t i = 0; i < json_array_size(issues); i++) {
        json_t *is = json_array_get(issues, i);
        objects += json_is_object(is);
        const char *sev = json_string_value(json_object_get(is, "severity"));
        crit += json_is_object(is) && sev && strcmp(sev, "critical") == 0;
    }
    struct ar_review rv;
    ar_review_init(&rv);
    struct ar_error err = AR_ERROR_INIT;
    int rc = ar_review_salvage_value(v, &rv, &err);
    if (rc == 0) {
        if (!objects || rv.n_issues + rv.n_unplaced != objects || !rv.summary)
            abort();
        struct ar_review_verdict vd;
        ar_review_verdict(&rv, NULL, AR_SEV_CRITICAL, 0, &vd);
        if (crit && vd.exit_status != 1)
            abort();
    } else if (rc != AR_ECONTRACT || (json_is_object(v) && objects)) {
        abort();
    }
    ar_review_finish(&rv);
}

/* Appends a "--- "/"+++ " name as git writes it: quoted, or with a tab after a name
 * that holds a space. */
static void put_header_name(struct ar_buf *b, const char *lead, const char *prefix,
                            const char *name)
{
    if (ar_buf_puts(b, lead) || ar_diff_quote_name(b, prefix, name) ||
        ar_buf_puts(b, strchr(name, ' ') ? "\t\n" : "\n"))
        abort();
}

/*
 * The paths are git's: up to 4 names cut at NUL bytes from the input, each written
 * as git writes a modified file (its "diff --git", "---" and "+++" lines), read back
 * by the patch parser exactly, and accepted by ar_diff_names_apply() from git's list.
 */
static void check_names(const uint8_t *data, size_t size)
{
    struct ar_diff_names names = { 0 };
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    for (size_t pos = 0; pos < size && names.n < 4;) {
        const uint8_t *nul = memchr(data + pos, 0, size - pos);
        size_t n = nul ? (size_t)(nul - data) - pos : size - pos;
        char *name = strndup((const char *)data + pos, n);
        pos += n + 1;
        /* A path of git's: no empty, "." or ".." component, no leading or trailing '/'. */
        int ok = n && name[0] != '/' && name[n - 1] != '/' && !strstr(name, "//") &&
                 strcmp(name, ".") && strcmp(name, "..") && strncmp(name, "./", 2) &&
                 strncmp(name, "../", 3) && !strstr(name, "/./") && !strstr(name, "/../") &&
                 !(n >= 2 && !strcmp(name + n - 2, "/.")) &&
                 !(n >= 3 && !strcmp(name + n - 3, "/.."));
        for (size_t i = 0; ok && i < names.n; i++)
            ok = strcmp(names.v[i].path, name) != 0;
        if (ok) {
            if (ar_diff_names_add(&names, 'M', name, NULL) || ar_buf_puts(&b, "diff --git ") ||
                ar_diff_quote_name(&b, "a/", name) || ar_buf_putc(&b, ' ') ||
                ar_diff_quote_name(&b, "b/", name) || ar_buf_puts(&b, "\nindex 1..2 100644\n"))
                abort();
            put_header_name(&b, "--- ", "a/", name);
            put_header_name(&b, "+++ ", "b/", name);
            if (ar_buf_puts(&b, "@@ -1 +1 @@\n-old\n+new\n"))
                abort();
        }
        free(name);
    }
    struct ar_diff d = AR_DIFF_INIT;
    if (ar_diff_parse(ar_buf_cstr(&b), b.len, &d, NULL) != 0 || d.n_files != names.n)
        abort();
    for (size_t i = 0; i < names.n; i++)
        if (!d.files[i].path || strcmp(d.files[i].path, names.v[i].path) != 0 ||
            d.files[i].old_path)
            abort();
    struct ar_diff_gaps gaps = { 0 };
    if (ar_diff_names_apply(&d, &names, &gaps, NULL) != 0 || gaps.n)
        abort();
    ar_diff_finish(&d);
    ar_diff_gaps_finish(&gaps);
    ar_diff_names_finish(&names);
    ar_buf_finish(&b);
}

/* Untrusted text shown: one line (or lines each a continuation starts), no "##[". */
static void check_shown(const char *s, size_t n)
{
    static const char *const conts[] = { NULL, "    | " };
    for (int k = 0; k < 2; k++) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        if (ar_shown_data(&b, s, n, conts[k]) != 0)
            abort();
        const char *t = ar_buf_cstr(&b);
        if (memchr(t, '\r', b.len) || strstr(t, "##[") || strlen(t) != b.len)
            abort();
        for (const char *nl = memchr(t, '\n', b.len); nl; nl = strchr(nl + 1, '\n'))
            if (!conts[k] || strncmp(nl + 1, conts[k], strlen(conts[k])) != 0)
                abort();
        ar_buf_finish(&b);
    }
}

/* Laid-out text: its lines kept, none reads as a workflow command. */
static void check_layout(const char *s, size_t n)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (ar_shown_layout(&b, s, n) != 0)
        abort();
    const char *t = ar_buf_cstr(&b);
    if (strstr(t, "##[") || strlen(t) != b.len)
        abort();
    size_t lf_in = 0, lf_out = 0;
    for (size_t i = 0; i < n; i++)
        lf_in += s[i] == '\n';
    for (const char *p = t; *p; p++) {
        lf_out += *p == '\n';
        int start = p == t || p[-1] == '\n' || p[-1] == '\r';
        if (start) {
            const char *q = p + strspn(p, " \t");
            if (q[0] == ':' && q[1] == ':')
                abort();
        }
        if (*p == '\r' && p[1] != '\n')
            abort();
    }
    if (lf_in != lf_out)
        abort();
    ar_buf_finish(&b);
}

struct answers {
    struct ar_review v[8];
    size_t n;
};

static int each_answer(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                       void *arg)
{
    struct answers *a = arg;
    (void)start, (void)end, (void)fixes;
    if (a->n == 8)
        return 1;
    ar_review_init(&a->v[a->n]);
    if (ar_review_from_value(doc->value, &a->v[a->n], NULL) == 0)
        a->n++;
    else
        ar_review_finish(&a->v[a->n]);
    return 0;
}

/* How many findings of list v[0..n) have fingerprint fp (at occurrence 0). */
static size_t count_fp(const struct ar_review_issue *v, size_t n, const char *fp)
{
    size_t k = 0;
    char f[AR_FINGERPRINT_LEN + 1];
    for (size_t i = 0; i < n; i++) {
        ar_review_fingerprint(&v[i], 0, f);
        k += strcmp(f, fp) == 0;
    }
    return k;
}

static void check_one_list(const struct answers *a, const struct ar_review *u, int unplaced)
{
    const struct ar_review_issue *uv = unplaced ? u->unplaced : u->issues;
    size_t un = unplaced ? u->n_unplaced : u->n_issues;
    char fp[AR_FINGERPRINT_LEN + 1];
    /* Each finding of the union: as often as the answer that holds it most. */
    for (size_t i = 0; i < un; i++) {
        ar_review_fingerprint(&uv[i], 0, fp);
        size_t most = 0;
        for (size_t p = 0; p < a->n; p++) {
            size_t k = count_fp(unplaced ? a->v[p].unplaced : a->v[p].issues,
                                unplaced ? a->v[p].n_unplaced : a->v[p].n_issues, fp);
            most = k > most ? k : most;
        }
        if (!most || count_fp(uv, un, fp) != most)
            abort();
    }
    /* No finding of any answer is lost. */
    for (size_t p = 0; p < a->n; p++) {
        const struct ar_review_issue *v = unplaced ? a->v[p].unplaced : a->v[p].issues;
        size_t m = unplaced ? a->v[p].n_unplaced : a->v[p].n_issues;
        for (size_t i = 0; i < m; i++) {
            ar_review_fingerprint(&v[i], 0, fp);
            if (count_fp(uv, un, fp) < count_fp(v, m, fp))
                abort();
        }
    }
}

/* Issue 57's union rule over the answers the reply text[0..len) holds. */
static void check_union(const char *text, size_t len)
{
    struct answers a;
    a.n = 0;
    struct ar_extract_options xo = AR_EXTRACT_OPTIONS_INIT;
    (void)ar_json_extract_all(text, len, &xo, each_answer, &a, NULL, NULL);
    if (!a.n)
        return;
    struct ar_review u;
    ar_review_init(&u);
    if (ar_review_union(a.v, a.n, &u) != 0 || !u.summary)
        abort();
    int all_passed = 1;
    for (size_t p = 0; p < a.n; p++)
        all_passed &= a.v[p].passed != 0;
    if (u.passed != all_passed || u.dropped != u.n_unplaced)
        abort();
    check_one_list(&a, &u, 0);
    check_one_list(&a, &u, 1);
    /* The strictest verdict: wherever one answer alone fails, the union fails. */
    for (int f = 0; f <= AR_FAIL_ON_NONE; f++) {
        struct ar_review_verdict vu, vp;
        ar_review_verdict(&u, NULL, f, 0, &vu);
        for (size_t p = 0; p < a.n; p++) {
            ar_review_verdict(&a.v[p], NULL, f, 0, &vp);
            if (vp.exit_status == 1 && vu.exit_status != 1)
                abort();
        }
    }
    ar_review_finish(&u);
    for (size_t p = 0; p < a.n; p++)
        ar_review_finish(&a.v[p]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > (64 << 10))
        return 0;
    size_t max = 1 + data[0];
    unsigned sel = data[1];
    /* As the review does: NULs become U+FFFD before the diff is parsed. */
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (ar_buf_append(&b, data + 2, size - 2) != 0 || ar_buf_replace_nul(&b, NULL) != 0)
        abort();
    const char *text = ar_buf_cstr(&b);
    size_t len = b.len;
    check_names(data + 2, size - 2);
    check_shown(text, len);
    check_layout(text, len);
    check_union(text, len);

    struct ar_diff d = AR_DIFF_INIT;
    if (ar_diff_parse(text, len, &d, NULL) != 0)
        abort();
    check_diff(&d, len);
    check_gate(text, len, &d, max, sel);

    json_t *v = json_loadb(text, len, JSON_DECODE_ANY, NULL);
    if (v) {
        struct ar_review parts[2];
        ar_review_init(&parts[0]);
        ar_review_init(&parts[1]);
        struct ar_error err = AR_ERROR_INIT;
        int rc = ar_review_from_value(v, &parts[0], &err);
        if (rc == 0) {
            if (!parts[0].summary)
                abort();
            (void)ar_review_from_value(v, &parts[1], NULL);
            struct ar_review m;
            ar_review_init(&m);
            if (ar_review_merge(parts, 2, &d, &m, NULL) != 0)
                abort();

            /* Located: no path outside the repository survives (those findings
             * are unplaced, never lost), every line fits 32 bits, a path in the
             * diff is a file of the diff, and repeats of one finding get their
             * own fingerprints. */
            size_t before = m.n_issues + m.n_unplaced;
            if (before != 2 * (parts[0].n_issues + parts[0].n_unplaced))
                abort();
            if (ar_review_locate(&m, &d, NULL, NULL) != 0)
                abort();
            if (m.n_issues + m.n_unplaced != before || m.dropped != m.n_unplaced)
                abort();
            for (size_t i = 0; i < m.n_issues; i++) {
                const struct ar_review_issue *is = &m.issues[i];
                if (!is->file[0] || is->file[0] == '/' || climbs(is->file) || is->line < 0 ||
                    is->line > AR_REVIEW_MAX_LINE || strlen(is->fingerprint) != AR_FINGERPRINT_LEN)
                    abort();
                if (!is->outside_diff && !ar_diff_has_file(&d, is->file))
                    abort();
                for (size_t j = 0; j < i; j++)
                    if (strcmp(m.issues[j].fingerprint, is->fingerprint) == 0)
                        abort();
            }
            /* Every finding counts, placed or not: a critical one always fails. */
            struct ar_review_verdict vd;
            for (int f = 0; f <= AR_FAIL_ON_NONE; f++) {
                ar_review_verdict(&m, NULL, f, f & 1, &vd);
                size_t crit = 0;
                for (size_t i = 0; i < m.n_issues; i++)
                    crit += m.issues[i].severity == AR_SEV_CRITICAL;
                for (size_t i = 0; i < m.n_unplaced; i++)
                    crit += m.unplaced[i].severity == AR_SEV_CRITICAL;
                if (crit && f != AR_FAIL_ON_NONE && vd.exit_status == 0)
                    abort();
            }
            ar_review_finish(&m);
        } else if (err.code == 0) {
            abort();
        }
        ar_review_finish(&parts[0]);
        ar_review_finish(&parts[1]);
        check_salvage(v);
        json_decref(v);
    }
    ar_diff_finish(&d);
    ar_buf_finish(&b);
    return 0;
}
