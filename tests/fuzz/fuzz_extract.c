/*
 * libFuzzer target for src/json: extraction (every kind, with and without
 * repair, first and all), repair on its own, markdown blocks and sections.
 * Besides the sanitizers it checks invariants: spans lie inside the input,
 * repair leaves valid JSON untouched, and, for every kind and with or without
 * repair: exit 0 => the printed text parses (strictly, with agentrun's own
 * parser and with jansson where jansson can hold the value), and when the
 * whole input is one valid JSON object or array, extraction finds it and
 * prints exactly its bytes minus the whitespace between tokens, with no fix.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json/doc.h"
#include "json/dump.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    static const int wants[] = { AR_JSON_OBJECT, AR_JSON_ARRAY, AR_JSON_ANY };
    int kind = 0;
    char *whole = valid_compact(text, size, &kind);

    for (size_t w = 0; w < 3; w++) {
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
                /* No fix named: the answer is the text's own bytes. */
                if (!r.fixes) {
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
            } else if (err.code == 0) {
                abort();
            }
            /* Valid JSON input of the wanted kind is the answer, byte for byte. */
            if (whole && (kind & wants[w]) &&
                (rc != 0 || r.fixes || strcmp(r.doc.text, whole) != 0))
                abort();
            ar_extract_result_finish(&r);
            size_t len = size;
            ar_json_extract_all(text, size, &o, count_each, &len, NULL);
        }
    }
    free(whole);
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
