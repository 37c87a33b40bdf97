/*
 * libFuzzer target for src/json: extraction (every kind, with and without
 * repair, first and all), repair on its own, markdown blocks and sections.
 * Besides the sanitizers it checks invariants: spans lie inside the input,
 * repair leaves valid JSON untouched, and extraction never reports nothing
 * for an input that is itself one valid object.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json/dump.h"
#include "json/extract.h"
#include "json/markdown.h"
#include "json/repair.h"
#include "json/scan.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_each(json_t *v, size_t start, size_t end, unsigned fixes, void *arg)
{
    size_t *len = arg;
    if (start >= end || end > *len)
        abort();
    return 0;
}

static int reject_all(json_t *v, void *arg)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    static const int wants[] = { AR_JSON_OBJECT, AR_JSON_ARRAY, AR_JSON_ANY };

    for (size_t w = 0; w < 3; w++) {
        for (unsigned flags = 0; flags <= AR_EXTRACT_REPAIR; flags += AR_EXTRACT_REPAIR) {
            struct ar_extract_options o = { wants[w], flags, NULL, NULL };
            struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
            struct ar_error err = AR_ERROR_INIT;
            if (ar_json_extract(text, size, &o, &r, &err) == 0) {
                if (r.start >= r.end || r.end > size || !r.value)
                    abort();
                struct ar_buf b;
                ar_buf_init(&b, AR_BUF_UNLIMITED);
                if (ar_json_dump_compact(r.value, &b) != 0)
                    abort();
                /* What we print must read back as JSON. */
                json_t *back = json_loadb(b.data, b.len, JSON_ALLOW_NUL, NULL);
                if (!back)
                    abort();
                json_decref(back);
                ar_buf_finish(&b);
            } else if (err.code == 0) {
                abort();
            }
            ar_extract_result_finish(&r);
            size_t len = size;
            ar_json_extract_all(text, size, &o, count_each, &len, NULL);
        }
    }
    struct ar_extract_options ro = { AR_JSON_OBJECT, AR_EXTRACT_REPAIR, reject_all, NULL };
    struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
    if (ar_json_extract(text, size, &ro, &r, NULL) == 0 && r.accepted)
        abort();
    ar_extract_result_finish(&r);

    struct ar_buf out;
    unsigned fixes = 0;
    ar_buf_init(&out, AR_BUF_UNLIMITED);
    if (ar_json_repair(text, size, &out, &fixes, NULL) != 0)
        abort();
    if (ar_json_is_valid(text, size) && (fixes || out.len != size || memcmp(out.data, text, size)))
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
