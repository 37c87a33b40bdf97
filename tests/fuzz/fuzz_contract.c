/*
 * libFuzzer target for src/contract: the input up to the first NUL byte is a
 * schema, the rest a value. A schema that loads is checked against the value
 * (or, when the rest is not JSON, against the schema itself), and the
 * violations are formatted both ways. ar_contract_accepts() must agree with
 * ar_contract_check(), on the jansson value and on the document that keeps the
 * numbers' spellings (ar_contract_check_doc(), exact numbers), and the schema's own text
 * (ar_contract_schema_text()) must load again to a contract that judges alike.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *sep = memchr(text, '\0', size);
    size_t slen = sep ? (size_t)(sep - text) : size;
    const char *vtext = sep ? sep + 1 : "";
    size_t vlen = sep ? size - slen - 1 : 0;

    struct ar_contract *c = NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_contract_parse(text, slen, &c, &err) != 0) {
        if (c || err.code == 0)
            abort();
        return 0;
    }
    json_t *value = json_loadb(vtext, vlen, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    json_t *subject = value ? value : ar_contract_schema_json(c);

    struct ar_violations vs = AR_VIOLATIONS_INIT;
    int n = ar_contract_check(c, subject, &vs);
    if (n < 0)
        abort();
    if ((n == 0) != (ar_contract_accepts(c, subject) == 1))
        abort();
    if ((size_t)n != vs.n + vs.omitted || vs.n > AR_CONTRACT_MAX_VIOLATIONS)
        abort();

    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (ar_violations_format(&vs, &b) != 0)
        abort();
    ar_buf_finish(&b);
    json_t *lines = ar_violations_to_json(&vs);
    if (!lines)
        abort();
    json_decref(lines);

    ar_violations_finish(&vs);

    struct ar_json_doc doc;
    if (ar_json_doc_parse(&doc, vtext, vlen, NULL) == 0) {
        struct ar_violations dv = AR_VIOLATIONS_INIT;
        int dn = ar_contract_check_doc(c, &doc, &dv);
        if (dn < 0 || (dn == 0) != (ar_contract_accepts_doc(c, &doc) == 1))
            abort();
        size_t tlen;
        const char *t = ar_contract_schema_text(c, &tlen);
        struct ar_contract *again = NULL;
        if (ar_contract_parse(t, tlen, &again, NULL) != 0)
            abort();
        if (ar_contract_accepts_doc(again, &doc) != (dn == 0))
            abort();
        ar_contract_destroy(again);
        ar_violations_finish(&dv);
        ar_json_doc_finish(&doc);
    }
    json_decref(value);
    ar_contract_destroy(c);
    return 0;
}
