/*
 * libFuzzer target for src/json: extraction (every kind, with and without
 * repair, first and all, with and without a jansson value), repair on its
 * own, compaction, markdown blocks and sections. Besides the sanitizers it
 * checks invariants: spans lie inside the input, repair leaves valid JSON
 * untouched, and, for every kind and with or without repair:
 *   - exit 0 => the printed text parses (strictly, with agentrun's own parser
 *     and with jansson where jansson can hold the value);
 *   - exit 0 with no fix named but notes (extra_values) => the output is the
 *     text's own bytes minus the whitespace between tokens;
 *   - a value that parses as it is beats a repaired one: when the strict
 *     search finds an object, --repair finds the same answer, with the same
 *     fixes (none but the notes);
 *   - never silent: a strict object answer with no extra_values named is the
 *     only object the text holds, and no members follow its close;
 *   - nothing after the answer is dropped unnamed (issue 45): any answer, of any
 *     kind, strict or repaired, with no extra_values named has no value after it
 *     that belongs with it: no string, object or array that starts like JSON
 *     first on the rest of its line (past spaces and code fences), and after a
 *     comma no such value, number or literal either (tail_holds_value());
 *   - the span printed piece by piece (text-only) is the same as the text
 *     of the full document;
 *   - when the whole input is one valid JSON object or array, extraction finds
 *     it and prints exactly its bytes minus the whitespace between tokens, with
 *     no fix; the compact text of valid JSON is what a byte-at-a-time loop
 *     gives, in any pieces, with the AVX2 compactor and without.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json/doc.h"
#include "util/json_dump.h"
#include "json/extract.h"
#include "json/markdown.h"
#include "json/repair.h"
#include "json/scan.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_each(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                      void *arg)
{
    size_t *len = arg;
    if (start >= end || end > *len)
        abort();
    return 0;
}

static int reject_all(const struct ar_json_doc *doc, void *arg)
{
    return 0;
}

static int walk_block(const struct ar_md_block *b, const char *text, void *arg)
{
    size_t len = *(size_t *)arg;
    if (b->start > b->end || b->end > len || b->info_start + b->info_len > len)
        abort();
    (void)ar_md_block_is_json(b, text);
    return 0;
}

/* The input minus the whitespace between tokens, when it is one valid JSON
 * value (any kind) with optional surrounding whitespace; else NULL. */
static char *valid_compact(const char *text, size_t size, int *kind)
{
    struct ar_json_doc d;
    if (ar_json_doc_parse(&d, text, size, NULL) != 0)
        return NULL;
    *kind = json_is_object(d.value) ? AR_JSON_OBJECT : json_is_array(d.value) ? AR_JSON_ARRAY : 0;
    char *t = d.text;
    d.text = NULL;
    ar_json_doc_finish(&d);
    return t;
}

/* The compact text of valid JSON s[0..n), fed in pieces cut where `cuts` says. */
static char *compact_in_pieces(const char *s, size_t n, const uint8_t *cuts, size_t ncuts,
                               size_t most)
{
    struct ar_json_compactor st = AR_JSON_COMPACTOR_INIT;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t at = 0;
    for (size_t k = 0; at < n; k++) {
        size_t piece = ncuts ? (size_t)cuts[k % ncuts] * 7 % most + 1 : n;
        if (piece > n - at)
            piece = n - at;
        if (ar_json_compact(&st, s + at, piece, &b) != 0)
            abort();
        at += piece;
    }
    return ar_buf_detach(&b, NULL);
}

/* Valid JSON s[0..n) minus the whitespace between tokens, a byte at a time. */
static char *byte_compact(const char *s, size_t n)
{
    char *o = malloc(n + 1), *w = o;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        if (in) {
            *w++ = s[i];
            if (s[i] == '\\' && i + 1 < n)
                *w++ = s[++i];
            else if (s[i] == '"')
                in = 0;
        } else if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') {
            *w++ = s[i];
            in = s[i] == '"';
        }
    }
    *w = '\0';
    return o;
}

/* The invariant's own reading of the text after an answer that ends at `end`, written
 * apart from the library's rule: 1 when a value that belongs with it follows. */
static int tail_holds_value(const char *s, size_t end, size_t n)
{
    size_t i = end;
    for (;;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i >= n || (s[i] != '`' && s[i] != '~'))
            break;
        while (i < n && (s[i] == '`' || s[i] == '~'))
            i++;
        while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                         (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '+'))
            i++;
    }
    int comma = i < n && s[i] == ',';
    if (comma)
        while (++i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
            ;
    if (i >= n)
        return 0;
    if (s[i] == '"')
        return 1;
    if (s[i] == '{' || s[i] == '[') {
        size_t k = i + 1;
        while (k < n && strchr(" \t\r\n", s[k]) && s[k])
            k++;
        /* Starts like JSON: an object's key or its closer; an array's string, number or
         * closer. (Brackets alone, "[[" cut off, are no value: extract.h.) */
        if (s[i] == '{')
            return k < n && (s[k] == '"' || s[k] == '}');
        return k < n && (s[k] == '"' || (s[k] >= '0' && s[k] <= '9') || s[k] == ']');
    }
    if (!comma)
        return 0;
    if ((s[i] == '-' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') ||
        (s[i] >= '0' && s[i] <= '9'))
        return 1;
    static const char *const words[] = { "true", "false", "null" };
    for (size_t w = 0; w < 3; w++) {
        size_t len = strlen(words[w]);
        if (n - i >= len && memcmp(s + i, words[w], len) == 0 &&
            (n - i == len || !((s[i + len] | 0x20) >= 'a' && (s[i + len] | 0x20) <= 'z')))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    static const int wants[] = { AR_JSON_OBJECT, AR_JSON_ARRAY, AR_JSON_ANY };
    int kind = 0;
    size_t len_all = size;
    char *whole = valid_compact(text, size, &kind);

    for (size_t w = 0; w < 3; w++) {
        struct ar_extract_result strict = AR_EXTRACT_RESULT_INIT;
        int strict_rc = -1;
        for (unsigned flags = 0; flags <= AR_EXTRACT_REPAIR; flags += AR_EXTRACT_REPAIR) {
            struct ar_extract_options o = { wants[w], flags, NULL, NULL };
            struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
            struct ar_error err = AR_ERROR_INIT;
            int rc = ar_json_extract(text, size, &o, &r, &err);
            if (rc == 0) {
                if (r.start >= r.end || r.end > size || !r.value || !r.doc.text)
                    abort();
                /* What we print must read back as JSON, the same value. */
                struct ar_json_doc back;
                if (ar_json_doc_parse(&back, r.doc.text, r.doc.len, NULL) != 0 ||
                    strcmp(back.text, r.doc.text) != 0)
                    abort();
                size_t inexact = back.nnums;
                ar_json_doc_finish(&back);
                if (!inexact) {
                    json_t *j = json_loadb(r.doc.text, r.doc.len, JSON_ALLOW_NUL, NULL);
                    if (j && !json_equal(j, r.value))
                        abort();
                    json_decref(j);
                }
                /* No fix named but notes: the answer is the text's own bytes. */
                if (!(r.fixes & ~(unsigned)AR_FIX_NOTES)) {
                    if (ar_json_doc_parse(&back, text + r.start, r.end - r.start, NULL) != 0 ||
                        strcmp(back.text, r.doc.text) != 0)
                        abort();
                    ar_json_doc_finish(&back);
                }
                /* The jansson value prints as JSON too. */
                struct ar_buf b;
                ar_buf_init(&b, AR_BUF_UNLIMITED);
                if (ar_json_dump_compact(r.value, &b) != 0 ||
                    ar_json_doc_parse(&back, b.data, b.len, NULL) != 0)
                    abort();
                ar_json_doc_finish(&back);
                ar_buf_finish(&b);
                /* Text only: the same answer, printed from its span when it is the
                 * text's own bytes, piece by piece. */
                struct ar_extract_options to = o;
                struct ar_extract_result t = AR_EXTRACT_RESULT_INIT;
                to.flags |= AR_EXTRACT_TEXT_ONLY;
                if (ar_json_extract(text, size, &to, &t, NULL) != 0 || t.start != r.start ||
                    t.end != r.end || t.fixes != r.fixes || t.value)
                    abort();
                char *printed = t.doc.text ? strdup(t.doc.text)
                                           : compact_in_pieces(text + t.start, t.end - t.start,
                                                               data, size < 8 ? size : 8, 17);
                if (strcmp(printed, r.doc.text) != 0)
                    abort();
                if (t.compact && (t.doc.text || t.end - t.start != r.doc.len ||
                                  memcmp(text + t.start, r.doc.text, r.doc.len) != 0))
                    abort();
                free(printed);
                ar_extract_result_finish(&t);
                /* Nothing after the answer dropped unnamed, whatever was wanted. */
                if (!(r.fixes & AR_FIX_EXTRA_VALUES) && tail_holds_value(text, r.end, size))
                    abort();
                if (!flags && wants[w] == AR_JSON_OBJECT) {
                    /* Never silent: nothing else the text holds goes unnamed. */
                    if (ar_json_members_follow(text, r.end, size) != SIZE_MAX)
                        abort();
                    if (!(r.fixes & AR_FIX_EXTRA_VALUES) &&
                        ar_json_extract_all(text, size, &o, count_each, &len_all, NULL, NULL) > 1)
                        abort();
                }
            } else if (err.code == 0) {
                abort();
            }
            /* Valid JSON input of the wanted kind is the answer, byte for byte. */
            if (whole && (kind & wants[w]) &&
                (rc != 0 || r.fixes || strcmp(r.doc.text, whole) != 0))
                abort();
            /* A value that parses as it is beats a repaired one. */
            if (!flags) {
                strict_rc = rc;
                if (rc == 0) {
                    strict = r;
                    memset(&r, 0, sizeof(r));
                }
            } else if (strict_rc == 0 && text[strict.start] == '{' &&
                       (rc != 0 || r.start != strict.start || r.end != strict.end ||
                        r.fixes != strict.fixes || strcmp(r.doc.text, strict.doc.text) != 0)) {
                abort();
            }
            ar_extract_result_finish(&r);
            size_t len = size;
            ar_json_extract_all(text, size, &o, count_each, &len, NULL, NULL);
        }
        ar_extract_result_finish(&strict);
    }
    struct ar_extract_options ro = { AR_JSON_OBJECT, AR_EXTRACT_REPAIR, reject_all, NULL };
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    if (ar_json_extract(text, size, &ro, &r, NULL) == 0 && r.accepted)
        abort();
    ar_extract_result_finish(&r);

    struct ar_buf out;
    unsigned fixes = 0;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    int rrc = ar_json_repair(text, size, &out, &fixes, NULL);
    if (rrc != 0 && rrc != AR_ENOJSON)
        abort();
    if (ar_json_is_valid(text, size) &&
        (rrc || fixes || out.len != size || memcmp(out.data, text, size)))
        abort();
    ar_buf_finish(&out);
    /* Compaction in pieces is compaction whole. */
    if (whole) {
        size_t at = 0;
        while (at < size && strchr(" \t\r\n", text[at]) && text[at])
            at++;
        size_t end = size;
        while (end > at && strchr(" \t\r\n", text[end - 1]) && text[end - 1])
            end--;
        char *pieces = compact_in_pieces(text + at, end - at, data, size < 8 ? size : 8, 17);
        if (strcmp(pieces, whole) != 0)
            abort();
        free(pieces);
        /* In pieces around the AVX2 path's 64-byte blocks, with it (where the
         * machine runs it) and without: the same text. */
        for (int avx2 = 0; avx2 <= 1; avx2++) {
            ar_json_compact_use_avx2(avx2);
            pieces = compact_in_pieces(text + at, end - at, data, size < 8 ? size : 8, 200);
            if (strcmp(pieces, whole) != 0)
                abort();
            free(pieces);
        }
        /* And it is what a byte at a time gives (the block-wise paths are checked). */
        char *slow = byte_compact(text + at, end - at);
        if (strcmp(slow, whole) != 0)
            abort();
        free(slow);
    }
    free(whole);

    size_t len = size;
    ar_md_blocks_each(text, size, walk_block, &len);
    char heading[16] = "";
    if (size) {
        size_t n = data[0] % sizeof(heading);
        if (n > size - 1)
            n = size - 1;
        memcpy(heading, data + 1, n);
        heading[n] = '\0';
    }
    size_t s, e;
    if (ar_md_section_find(text, size, heading, &s, &e, NULL) == 0 && (s > e || e > size))
        abort();
    return 0;
}
