/* Batch records: writing one job's line, reading earlier ones back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/job.h"
#include "batch/record.h"
#include "util/json_dump.h"
#include "result/result.h"

int ar_batch_record_line(const char *id, int id_is_integer, const struct ar_result *r,
                         struct ar_buf *out)
{
    json_t *rec = json_object();
    json_t *v = ar_result_to_value(r);
    json_t *idv = id_is_integer ? json_integer(strtoll(id, NULL, 10)) : json_string(id);
    int rc = AR_ENOMEM;
    if (rec && v && idv && json_object_set_new(rec, "id", idv) == 0) {
        idv = NULL;
        /* "json" as the model wrote it: r->json, not the jansson value (json/doc.h). */
        if (json_object_update(rec, v) == 0 &&
            ar_json_dump_compact_raw(rec, r->value, r->json, out) == 0 &&
            ar_buf_putc(out, '\n') == 0)
            rc = 0;
    }
    json_decref(idv);
    json_decref(v);
    json_decref(rec);
    return rc;
}

/* The id of a record as the job list keys it ("7" for 7), or NULL when the line is
 * not a record. Borrowed from rec or num. */
static const char *record_key(const json_t *rec, char num[32])
{
    const json_t *id = json_object_get(rec, "id");
    if (json_is_integer(id)) {
        snprintf(num, 32, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        return num;
    }
    return json_string_value(id);
}

int ar_batch_record_each(const char *text, size_t len, ar_batch_record_each_fn *fn, void *arg)
{
    for (const char *p = text, *end = text + len; p && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!ar_batch_line_blank(p, n)) {
            json_t *rec = json_loadb(p, n, 0, NULL);
            char num[32];
            const char *key = record_key(rec, num);
            int rc =
                key ? fn(arg, key, json_is_true(json_object_get(rec, "ok")), (size_t)(p - text), n)
                    : 0;
            json_decref(rec);
            if (rc)
                return rc;
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}
