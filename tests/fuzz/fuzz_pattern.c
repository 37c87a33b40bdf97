/*
 * Differential libFuzzer target for contract patterns: the input up to the
 * first NUL byte is a pattern, the rest a string. When the contract
 * {"pattern": P} loads, it must accept the string exactly when regexec()
 * finds P in it (unanchored, NUL bytes included), whatever form the
 * contract compiled P into.
 */
#include <jansson.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *sep = memchr(text, '\0', size);
    if (!sep || sep - text > 256)
        return 0;
    const char *s = sep + 1;
    size_t slen = size - (size_t)(s - text);
    /* jansson keeps only valid UTF-8 strings; the value must be one. */
    json_t *value = json_stringn(s, slen);
    json_t *schema = json_pack("{s:s}", "pattern", text);
    if (!value || !schema)
        goto done;
    struct ar_contract *c = NULL;
    if (ar_contract_from_json(schema, &c, NULL) == 0) {
        regex_t re;
        if (regcomp(&re, text, REG_EXTENDED | REG_NOSUB) != 0)
            abort();
        /* REG_STARTEND bounds the match, but the sanitizer's regexec() still
         * reads up to a NUL: use the value's own (terminated) copy. */
        regmatch_t m[1] = { { 0, (regoff_t)slen } };
        int want = regexec(&re, json_string_value(value), 0, m, REG_STARTEND) == 0;
        regfree(&re);
        if (ar_contract_accepts(c, value) != want)
            abort();
        ar_contract_destroy(c);
    }
done:
    json_decref(value);
    json_decref(schema);
    return 0;
}
