/*
 * Chunks: the part of a parsed diff a review sends, cut into pieces small
 * enough for one model call each (review/diff.h, ar_diff_split()).
 *
 * What a chunk holds is exact: every byte of each section sent whole (its
 * header and every hunk, in order), a stub for a section sent as one, and
 * nothing of a section left out. The review's coverage (coverage.c) reads
 * which files each chunk holds from first_file..last_file and the send modes.
 */
#include <stdlib.h>
#include <string.h>

#include "review/diff.h"

struct splitter {
    const struct ar_diff *d;
    const unsigned char *send;
    size_t max;
    struct ar_diff_chunk *v;
    size_t n, cap;
    struct ar_buf cur;
    size_t cur_first, cur_last; /* the files in cur (diff indices), when cur_files */
    size_t cur_files;           /* sections in cur */
    int cur_whole;              /* cur holds a section sent whole */
    int preamble_done;
};

static enum ar_diff_send send_of(const struct splitter *sp, size_t i)
{
    if (sp->send)
        return (enum ar_diff_send)sp->send[i];
    return sp->d->files[i].binary ? AR_DIFF_SEND_STUB : AR_DIFF_SEND_WHOLE;
}

static int put_preamble(struct splitter *sp)
{
    if (sp->preamble_done)
        return 0;
    sp->preamble_done = 1;
    return ar_buf_append(&sp->cur, sp->d->text, sp->d->preamble);
}

static void note_file(struct splitter *sp, size_t i)
{
    if (!sp->cur_files)
        sp->cur_first = i;
    sp->cur_last = i;
    sp->cur_files++;
}

static int push_chunk(struct splitter *sp, int piece, int n_pieces)
{
    if (sp->n == sp->cap) {
        size_t ncap = sp->cap ? sp->cap * 2 : 8;
        void *nv = realloc(sp->v, ncap * sizeof(*sp->v));
        if (!nv)
            return AR_ENOMEM;
        sp->v = nv;
        sp->cap = ncap;
    }
    struct ar_diff_chunk *c = &sp->v[sp->n];
    c->text = ar_buf_detach(&sp->cur, &c->len);
    if (!c->text)
        return AR_ENOMEM;
    c->first_file = sp->cur_first;
    c->last_file = sp->cur_last;
    c->piece = piece;
    c->n_pieces = n_pieces;
    sp->n++;
    sp->cur_files = 0;
    sp->cur_whole = 0;
    return 0;
}

/*
 * A stub is the section's header and one line saying what was left out. A
 * section's own "Binary files … differ" line names the files and stays;
 * binary content (a binary patch's base85 data, binary hunks) becomes
 * "Binary files differ", text too large to send a line saying so.
 */
static const char *stub_line(const struct ar_diff_file *f)
{
    return f->binary ? "Binary files differ\n"
                     : "(agentrun: this file's change is too large to send)\n";
}

static int keeps_own_line(const struct ar_diff_file *f)
{
    return f->binary == AR_DIFF_BINARY_SAID;
}

static size_t stub_header(const struct ar_diff_file *f)
{
    return (f->binary ? f->binary_at : f->body) - f->start;
}

static int append_section(struct splitter *sp, const struct ar_diff_file *f, enum ar_diff_send how)
{
    const struct ar_diff *d = sp->d;
    if (how == AR_DIFF_SEND_WHOLE || keeps_own_line(f))
        return ar_buf_append(&sp->cur, d->text + f->start, f->end - f->start);
    int rc = ar_buf_append(&sp->cur, d->text + f->start, stub_header(f));
    return rc ? rc : ar_buf_puts(&sp->cur, stub_line(f));
}

static size_t section_size(const struct ar_diff_file *f, enum ar_diff_send how)
{
    if (how == AR_DIFF_SEND_WHOLE || keeps_own_line(f))
        return f->end - f->start;
    return stub_header(f) + strlen(stub_line(f));
}

static size_t hunk_end(const struct ar_diff_file *f, size_t k)
{
    return k + 1 < f->n_hunks ? f->hunks[k + 1] : f->end;
}

/* Where the piece starting at hunk k ends: the hunk after the last one that fits. */
static size_t piece_end(const struct splitter *sp, const struct ar_diff_file *f, size_t k)
{
    size_t size = (f->body - f->start) + (hunk_end(f, k) - f->hunks[k]);
    size_t j = k + 1;
    while (j < f->n_hunks && size + (hunk_end(f, j) - f->hunks[j]) <= sp->max)
        size += hunk_end(f, j) - f->hunks[j], j++;
    return j;
}

/* One file too large for a chunk: pieces of whole hunks, each with the header.
 * Stub sections waiting in cur go into the first piece. */
static int split_file(struct splitter *sp, size_t idx)
{
    const struct ar_diff *d = sp->d;
    const struct ar_diff_file *f = &d->files[idx];
    size_t header = f->body - f->start;
    int n_pieces = 0;
    for (size_t k = 0; k < f->n_hunks; k = piece_end(sp, f, k))
        n_pieces++;
    int piece = 0;
    for (size_t k = 0; k < f->n_hunks;) {
        size_t j = piece_end(sp, f, k);
        int rc = put_preamble(sp);
        if (!rc)
            rc = ar_buf_append(&sp->cur, d->text + f->start, header);
        if (!rc)
            rc = ar_buf_append(&sp->cur, d->text + f->hunks[k], hunk_end(f, j - 1) - f->hunks[k]);
        if (rc)
            return rc;
        note_file(sp, idx);
        if ((rc = push_chunk(sp, ++piece, n_pieces)))
            return rc;
        k = j;
    }
    return 0;
}

int ar_diff_split(const struct ar_diff *d, size_t max_bytes, const unsigned char *send,
                  struct ar_diff_chunk **out, size_t *n_out, struct ar_error *err)
{
    struct splitter sp = { .d = d,
                           .send = send,
                           .max = max_bytes ? max_bytes : AR_DIFF_DEFAULT_MAX_CHUNK };
    ar_buf_init(&sp.cur, AR_BUF_UNLIMITED);
    int rc = 0;
    for (size_t i = 0; i < d->n_files && !rc; i++) {
        const struct ar_diff_file *f = &d->files[i];
        enum ar_diff_send how = send_of(&sp, i);
        if (how == AR_DIFF_SEND_NONE)
            continue;
        int whole = how == AR_DIFF_SEND_WHOLE;
        size_t size = section_size(f, how) + (sp.preamble_done ? 0 : d->preamble);
        if (whole && size > sp.max && f->n_hunks > 1) {
            /* What is pending must not ride along with a piece; stub sections wait
             * for the next chunk instead of making a chunk of their own. */
            if (sp.cur_files && sp.cur_whole)
                rc = push_chunk(&sp, 0, 0);
            if (!rc)
                rc = split_file(&sp, i);
            continue;
        }
        if (sp.cur_whole && whole && sp.cur.len + size > sp.max)
            rc = push_chunk(&sp, 0, 0);
        if (!rc)
            rc = put_preamble(&sp);
        if (!rc)
            rc = append_section(&sp, f, how);
        note_file(&sp, i);
        sp.cur_whole |= whole;
    }
    if (!rc && sp.cur_files) {
        if (sp.cur_whole) {
            rc = push_chunk(&sp, 0, 0);
        } else if (sp.n) {
            /* Trailing stub sections join the last chunk. */
            struct ar_diff_chunk *last = &sp.v[sp.n - 1];
            char *nt = realloc(last->text, last->len + sp.cur.len + 1);
            if (!nt) {
                rc = AR_ENOMEM;
            } else {
                memcpy(nt + last->len, ar_buf_cstr(&sp.cur), sp.cur.len + 1);
                last->text = nt;
                last->len += sp.cur.len;
                last->last_file = sp.cur_last;
            }
        }
        /* Stub sections alone: nothing needs a call. */
    }
    ar_buf_finish(&sp.cur);
    if (rc) {
        ar_diff_chunks_free(sp.v, sp.n);
        return ar_error_set(err, rc, NULL, "out of memory splitting the diff");
    }
    *out = sp.v;
    *n_out = sp.n;
    return 0;
}

void ar_diff_chunks_free(struct ar_diff_chunk *chunks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(chunks[i].text);
    free(chunks);
}
