/*
 * A patch on stdin or in a file: what git would apply (issue 57 #2; DESIGN §7b).
 *
 * When git made the diff, its own -z list names the changed paths (names.c). A
 * patch the user hands in has no such list, and reading it is exactly where a
 * review and `git am` can part ways: a mailbox of two messages, the second
 * `Content-Transfer-Encoding: base64` as mailers send it, is one patch to a parser of
 * diffs and two to git am, which decodes the second and applies its system() line.
 * So git's own parsers decide what a patch changes, and the review holds its coverage
 * to that:
 *
 *   1. a mailbox (a first line "From ", or mail headers then a blank line) is split
 *      and decoded as git am does it: `git mailsplit -b`, then per message `git
 *      mailinfo -u`, which undoes the transfer encoding and separates the message
 *      from its patch; what the model reads is what mailinfo gave (each message's
 *      headers and text, "---", its patch), so it reads what git am applies. A
 *      message git cannot be trusted to read as am does — a transfer encoding other
 *      than 7bit, 8bit, binary, base64 and quoted-printable, a multipart MIME message,
 *      a Content-Type that is no text — is refused, never skipped;
 *   2. each patch (each message's, or the input as a whole) is read by `git apply
 *      --numstat -z`, forward for the new names and with -R for the old ones: those are
 *      the files git would change. Input git apply cannot read is refused with git's
 *      words;
 *   3. ar_patch_apply(): every file section agentrun parsed in a patch is named by
 *      git's list (a section git does not list is no change of a file: its bytes go
 *      with the section before it), and a file git lists that no section is becomes a
 *      gap, so it fails the gate.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "git/run.h"
#include "review/diff.h"
#include "util/file.h"
#include "util/temp.h"
#include "util/utf8.h"

void ar_patch_series_finish(struct ar_patch_series *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        ar_diff_names_finish(&ps->v[i].names);
    free(ps->v);
    memset(ps, 0, sizeof(*ps));
}

/* Runs git (args, stdin data[0..len)) in cwd; *out to finish. A non-zero exit is the
 * caller's to judge. */
static int git(const char *cwd, const char *const *args, const char *data, size_t len,
               struct ar_child_sync *out, struct ar_error *err)
{
    struct ar_git_cmd cmd = AR_GIT_CMD_INIT;
    cmd.args = args;
    cmd.cwd = cwd;
    cmd.stdin_data = data ? data : "";
    cmd.stdin_len = data ? len : 0;
    cmd.output_cap = AR_DIFF_MAX_BYTES;
    int rc = ar_git_run(&cmd, out, err);
    if (rc)
        return rc;
    if (out->res.end == AR_CHILD_TOOBIG) {
        ar_child_sync_finish(out);
        return ar_error_set(err, AR_ETOOBIG, "git", "git's output is larger than %zu bytes",
                            AR_DIFF_MAX_BYTES);
    }
    return 0;
}

static const char *why_failed(const struct ar_child_sync *s, char *buf, size_t n)
{
    ar_git_stderr_line(s->res.stderr_tail, s->res.stderr_tail_len, buf, n);
    if (!buf[0])
        snprintf(buf, n, "git exited with status %d", s->res.status);
    return buf;
}

/* ---- 2. git apply --numstat ---------------------------------------------------------- */

/* The names of `git apply [-R] --numstat -z` output: "ADDED\tDELETED\tNAME\0" each. */
static int numstat_names(const char *out, size_t len, struct ar_strv *v)
{
    for (size_t pos = 0; pos < len;) {
        const char *nul = memchr(out + pos, '\0', len - pos);
        size_t end = nul ? (size_t)(nul - out) : len;
        const char *t1 = memchr(out + pos, '\t', end - pos);
        const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(out + end - t1 - 1)) : NULL;
        if (!t2 || t2 + 1 == out + end)
            return AR_EIO;
        char *name = strndup(t2 + 1, (size_t)(out + end - t2 - 1));
        if (!name || ar_strv_push_take(v, name) != 0)
            return AR_ENOMEM;
        pos = end + 1;
    }
    return 0;
}

/* What git apply would change of the patch data[0..len) (the n-th of the input, from 1):
 * its files' names into names. An empty patch changes nothing. With mail, git am's
 * -p1; else the -p its own headers show (git's -p1 for a/ and b/, -p0 for a patch made
 * with --no-prefix): the files it changes applied as it was written. */
static int patch_files(const char *cwd, const char *data, size_t len, size_t nth, int mail,
                       struct ar_diff_names *names, struct ar_error *err)
{
    if (!len)
        return 0;
    /* Text with no file section at all (a cover letter, a log file) that git cannot read
     * either is no patch: the review says it is not a diff, or reads it as a message. */
    struct ar_diff mine = AR_DIFF_INIT;
    if (ar_diff_parse(data, len, &mine, err) != 0)
        return AR_ENOMEM;
    size_t sections = mine.n_files;
    int strip = 1;
    if (!mail && mine.dst_prefix) {
        strip = 0;
        for (const char *c = mine.dst_prefix; *c; c++)
            strip += *c == '/';
    }
    ar_diff_finish(&mine);
    char p_opt[16];
    snprintf(p_opt, sizeof(p_opt), "-p%d", strip);
    struct ar_strv fw = AR_STRV_INIT, rv = AR_STRV_INIT;
    int rc = 0;
    for (int reverse = 0; reverse < 2 && !rc; reverse++) {
        const char *fwd[] = { "apply", p_opt, "--numstat", "-z", NULL };
        const char *rev[] = { "apply", p_opt, "-R", "--numstat", "-z", NULL };
        struct ar_child_sync out;
        rc = git(cwd, reverse ? rev : fwd, data, len, &out, err);
        if (rc)
            break;
        if (out.res.status != 0 && !sections) {
            ar_child_sync_finish(&out);
            break; /* nothing either can read: no files */
        } else if (out.res.status != 0) {
            char why[200];
            rc = ar_error_set(err, AR_EUSAGE, "diff",
                              "git apply cannot read patch %zu of the input: %s (refused: a "
                              "patch git cannot read is not reviewed)",
                              nth, why_failed(&out, why, sizeof(why)));
        } else {
            rc = numstat_names(out.stdout_data ? out.stdout_data : "", out.res.stdout_len,
                               reverse ? &rv : &fw);
            if (rc == AR_EIO)
                rc = ar_error_set(err, AR_EIO, "git", "git apply --numstat -z output is malformed");
            else if (rc)
                rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
        ar_child_sync_finish(&out);
    }
    if (!rc && fw.n != rv.n)
        rc = ar_error_set(err, AR_EIO, "git", "git apply and git apply -R disagree on patch %zu",
                          nth);
    for (size_t i = 0; !rc && i < fw.n; i++) {
        const char *newn = fw.v[i], *oldn = rv.v[i];
        int renamed = strcmp(newn, oldn) != 0;
        if (ar_diff_names_add(names, renamed ? 'R' : 'M', newn, renamed ? oldn : NULL) != 0)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    names->given = 0; /* these name a patch's files; git did not make its text */
    ar_strv_finish(&fw);
    ar_strv_finish(&rv);
    return rc;
}

/* ---- 1. a mailbox ------------------------------------------------------------------------ */

/* 1 when text is mail: an mbox ("From " first), or header fields up to a blank line,
 * one of them From: or Subject:. */
static int is_mail(const char *t, size_t n)
{
    if (n >= 5 && memcmp(t, "From ", 5) == 0)
        return 1;
    int mailish = 0;
    for (size_t pos = 0; pos < n;) {
        const char *nl = memchr(t + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - t) : n, len = end - pos;
        const char *l = t + pos;
        if (len && l[len - 1] == '\r')
            len--;
        if (!len)
            return pos > 0 && mailish;
        if (l[0] == ' ' || l[0] == '\t') {
            if (!pos)
                return 0;
        } else {
            size_t k = 0;
            while (k < len && (unsigned char)l[k] > ' ' && l[k] != ':' && l[k] != 0x7f)
                k++;
            if (!k || k >= len || l[k] != ':')
                return 0;
            mailish |= (k == 4 && strncasecmp(l, "from", 4) == 0) ||
                       (k == 7 && strncasecmp(l, "subject", 7) == 0);
        }
        if (!nl)
            return 0;
        pos = end + 1;
    }
    return 0;
}

/* The value of header `name` in the header block h[0..n) (unfolded, trimmed, comments
 * in parentheses dropped) into out (size bytes); 0 when absent. */
static int header(const char *h, size_t n, const char *name, char *out, size_t size)
{
    size_t nl_len = strlen(name);
    for (size_t pos = 0; pos < n;) {
        const char *nl = memchr(h + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - h) : n;
        if (end - pos > nl_len && strncasecmp(h + pos, name, nl_len) == 0 &&
            h[pos + nl_len] == ':') {
            size_t o = 0;
            int depth = 0;
            for (size_t i = pos + nl_len + 1; i < n && o + 1 < size; i++) {
                char c = h[i];
                if (c == '\n' && !(i + 1 < n && (h[i + 1] == ' ' || h[i + 1] == '\t')))
                    break;
                if (c == '(')
                    depth++;
                else if (c == ')' && depth)
                    depth--;
                else if (!depth && c != '\r' && c != '\n')
                    out[o++] = c == '\t' ? ' ' : c;
            }
            while (o && out[o - 1] == ' ')
                o--;
            out[o] = '\0';
            size_t lead = strspn(out, " ");
            memmove(out, out + lead, o - lead + 1);
            return 1;
        }
        if (!nl)
            break;
        pos = end + 1;
    }
    return 0;
}

/* Refuses what git am cannot be trusted to read as agentrun does: AR_EUSAGE or 0. */
static int check_mail_headers(const char *m, size_t n, size_t nth, struct ar_error *err)
{
    size_t hn = n;
    for (size_t i = 0; i + 1 < n; i++)
        if (m[i] == '\n' &&
            (m[i + 1] == '\n' || (m[i + 1] == '\r' && i + 2 < n && m[i + 2] == '\n'))) {
            hn = i + 1;
            break;
        }
    char v[256];
    if (header(m, hn, "Content-Transfer-Encoding", v, sizeof(v))) {
        static const char *const known[] = { "7bit", "8bit", "binary", "base64",
                                             "quoted-printable" };
        int ok = 0;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            ok |= strcasecmp(v, known[i]) == 0;
        if (!ok)
            return ar_error_set(err, AR_EUSAGE, "diff",
                                "message %zu of the mailbox has Content-Transfer-Encoding '%s', "
                                "which git cannot decode: refused (what it hides would not be "
                                "reviewed; send it as 7bit, 8bit, base64 or quoted-printable)",
                                nth, v);
    }
    if (header(m, hn, "Content-Type", v, sizeof(v))) {
        if (strncasecmp(v, "multipart/", 10) == 0)
            return ar_error_set(err, AR_EUSAGE, "diff",
                                "message %zu of the mailbox is a MIME multipart message: refused "
                                "(agentrun reviews a patch sent inline, as git format-patch "
                                "writes it without --attach)",
                                nth);
        if (strncasecmp(v, "text/", 5) != 0)
            return ar_error_set(err, AR_EUSAGE, "diff",
                                "message %zu of the mailbox has Content-Type '%s', which is no "
                                "text: refused",
                                nth, v);
    }
    return 0;
}

/* Reads one file the helpers wrote into out (appended). */
static int read_own(const char *dir, const char *name, struct ar_buf *out, struct ar_error *err)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, name) < 0)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    int rc = ar_file_read_own(path, out, err);
    free(path);
    return rc;
}

/* Appends data (NULs as U+FFFD, counted in *nuls) to text. */
static int put_text(struct ar_buf *text, const char *data, size_t len, size_t *nuls,
                    struct ar_error *err)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t k = 0;
    int rc = ar_buf_append(&b, data ? data : "", len);
    if (!rc)
        rc = ar_buf_replace_nul(&b, &k);
    if (!rc)
        rc = ar_buf_append(text, b.data ? b.data : "", b.len);
    ar_buf_finish(&b);
    if (rc == AR_ETOOBIG)
        return ar_error_set(err, rc, "diff", "the diff is larger than %zu bytes", text->max);
    if (rc)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    *nuls += k;
    return 0;
}

static int add_part(struct ar_patch_series *ps, size_t start, size_t end)
{
    void *nv = realloc(ps->v, (ps->n + 1) * sizeof(*ps->v));
    if (!nv)
        return AR_ENOMEM;
    ps->v = nv;
    memset(&ps->v[ps->n], 0, sizeof(ps->v[ps->n]));
    ps->v[ps->n].start = start;
    ps->v[ps->n].end = end;
    ps->n++;
    return 0;
}

/* One message of the mailbox (file dir/name): its headers checked, decoded by git
 * mailinfo, appended to text, and its patch's files read. */
static int one_message(const char *cwd, const char *dir, const char *name, size_t nth,
                       struct ar_buf *text, struct ar_patch_series *ps, size_t *nuls,
                       struct ar_error *err)
{
    struct ar_buf mail, msg, patch;
    ar_buf_init(&mail, AR_DIFF_MAX_BYTES);
    ar_buf_init(&msg, AR_DIFF_MAX_BYTES);
    ar_buf_init(&patch, AR_DIFF_MAX_BYTES);
    char *msg_path = NULL, *patch_path = NULL;
    int rc = read_own(dir, name, &mail, err);
    if (!rc)
        rc = check_mail_headers(ar_buf_cstr(&mail), mail.len, nth, err);
    if (!rc &&
        (asprintf(&msg_path, "%s/msg", dir) < 0 || asprintf(&patch_path, "%s/patch", dir) < 0))
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    struct ar_child_sync out = { 0 };
    int ran = 0;
    if (!rc) {
        const char *args[] = { "mailinfo", "-u", msg_path, patch_path, NULL };
        rc = git(cwd, args, ar_buf_cstr(&mail), mail.len, &out, err);
        ran = !rc;
        if (!rc && out.res.status != 0) {
            char why[200];
            rc = ar_error_set(err, AR_EUSAGE, "diff",
                              "git mailinfo cannot read message %zu of the mailbox: %s "
                              "(refused)",
                              nth, why_failed(&out, why, sizeof(why)));
        }
    }
    if (!rc)
        rc = read_own(dir, "msg", &msg, err);
    if (!rc)
        rc = read_own(dir, "patch", &patch, err);
    /* What the model reads: mailinfo's header lines, the message, "---", the patch. */
    if (!rc && ran)
        rc = put_text(text, out.stdout_data, out.res.stdout_len, nuls, err);
    if (!rc)
        rc = put_text(text, msg.data, msg.len, nuls, err);
    if (!rc)
        rc = put_text(text, "---\n", 4, nuls, err);
    size_t start = text->len;
    if (!rc)
        rc = put_text(text, patch.data, patch.len, nuls, err);
    if (!rc && add_part(ps, start, text->len) != 0)
        rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (!rc)
        rc = patch_files(cwd, patch.data, patch.len, nth, 1, &ps->v[ps->n - 1].names, err);
    if (ran)
        ar_child_sync_finish(&out);
    free(msg_path);
    free(patch_path);
    ar_buf_finish(&mail);
    ar_buf_finish(&msg);
    ar_buf_finish(&patch);
    return rc;
}

static int mailbox(const char *cwd, const char *data, size_t len, struct ar_buf *text,
                   struct ar_patch_series *ps, size_t *nuls, struct ar_error *err)
{
    char *dir = ar_temp_dir_make("mail", err);
    if (!dir)
        return err && err->code ? err->code : AR_EIO;
    char *out_opt = NULL;
    int rc = asprintf(&out_opt, "-o%s", dir) < 0
                 ? ar_error_set(err, AR_ENOMEM, NULL, "out of memory")
                 : 0;
    struct ar_child_sync out;
    if (!rc) {
        /* As git am splits it: -b takes a single message without a "From " line. */
        const char *args[] = { "mailsplit", "-d6", out_opt, "-b", "--", NULL };
        rc = git(cwd, args, data, len, &out, err);
        if (!rc) {
            char why[200];
            if (out.res.status != 0)
                rc = ar_error_set(err, AR_EUSAGE, "diff",
                                  "git mailsplit cannot read the mailbox: %s (refused)",
                                  why_failed(&out, why, sizeof(why)));
            unsigned long n = 0;
            if (!rc && (!out.stdout_data || sscanf(out.stdout_data, "%lu", &n) != 1))
                rc = ar_error_set(err, AR_EIO, "git", "git mailsplit said nothing");
            for (unsigned long i = 1; !rc && i <= n; i++) {
                char name[32];
                snprintf(name, sizeof(name), "%06lu", i);
                rc = one_message(cwd, dir, name, (size_t)i, text, ps, nuls, err);
            }
            ar_child_sync_finish(&out);
        }
    }
    free(out_opt);
    ar_remove_tree(dir);
    free(dir);
    return rc;
}

int ar_patch_read(struct ar_buf *text, const char *cwd, struct ar_patch_series *ps,
                  size_t *nul_bytes, struct ar_error *err)
{
    memset(ps, 0, sizeof(*ps));
    *nul_bytes = 0;
    const char *t = ar_buf_cstr(text);
    size_t n = text->len;
    /* Blank input is nothing to review; git has nothing to say about it. */
    if (strspn(t, " \t\r\n") == n)
        return 0;
    /* git apply in a subdirectory of a work tree reads every path of a patch beneath that
     * subdirectory (it prefixes them): a patch is read at the top, where git am applies it. */
    char *top = NULL;
    int rc = ar_diff_toplevel(cwd, &top, err);
    if (rc)
        return rc;
    if (top)
        cwd = top;
    struct ar_buf out;
    ar_buf_init(&out, text->max);
    if (is_mail(t, n)) {
        ps->mailbox = 1;
        rc = mailbox(cwd, t, n, &out, ps, nul_bytes, err);
    } else {
        rc = put_text(&out, t, n, nul_bytes, err);
        if (!rc && add_part(ps, 0, out.len) != 0)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        if (!rc)
            rc = patch_files(cwd, t, n, 1, 0, &ps->v[0].names, err);
    }
    if (!rc) {
        text->len = 0;
        rc = ar_buf_append(text, out.data ? out.data : "", out.len);
        if (rc)
            rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    }
    ar_buf_finish(&out);
    free(top);
    if (rc)
        ar_patch_series_finish(ps);
    return rc;
}

/* ---- 3. the sections named by git's list --------------------------------------------- */

int ar_patch_apply(struct ar_diff *d, const struct ar_patch_series *ps, struct ar_diff_gaps *gaps,
                   struct ar_error *err)
{
    if (!ps->n)
        return 0;
    unsigned char *named = calloc(d->n_files + 1, 1);
    if (!named)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    int rc = 0;
    for (size_t p = 0; !rc && p < ps->n; p++) {
        const struct ar_patch_part *part = &ps->v[p];
        size_t at = 0; /* the next section of this part that may be named */
        while (at < d->n_files && d->files[at].start < part->start)
            at++;
        for (size_t j = 0; !rc && j < part->names.n; j++) {
            const struct ar_diff_name *e = &part->names.v[j];
            size_t k = at;
            while (k < d->n_files && d->files[k].start < part->end &&
                   !(d->files[k].path && strcmp(d->files[k].path, e->path) == 0))
                k++;
            if (k < d->n_files && d->files[k].start < part->end) {
                struct ar_diff_file *f = &d->files[k];
                char *old = e->old_path ? strdup(e->old_path) : NULL;
                if (e->old_path && !old) {
                    rc = ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
                    break;
                }
                free(f->old_path);
                f->old_path = old;
                named[k] = 1;
                at = k + 1;
                continue;
            }
            char why[200];
            snprintf(why, sizeof(why),
                     "git apply would change it (patch %zu of the input), and no file section "
                     "agentrun read is it",
                     p + 1);
            rc = ar_diff_gap_add(gaps, e->path, why, err);
        }
    }
    /* A section git does not list changes no file: its bytes go with the section before
     * it (or the preamble), so the model still reads them and no path is made up. */
    size_t kept = 0;
    for (size_t i = 0; !rc && i < d->n_files; i++) {
        struct ar_diff_file *f = &d->files[i];
        if (named[i]) {
            d->files[kept++] = *f;
            continue;
        }
        if (kept)
            d->files[kept - 1].end = f->end;
        else
            d->preamble = f->end;
        free(f->path);
        free(f->old_path);
        free(f->hunks);
        free(f->whole_why);
    }
    if (!rc)
        d->n_files = kept;
    free(named);
    return rc;
}
