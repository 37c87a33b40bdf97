/*
 * libFuzzer target for contract patterns (src/contract/pattern.c): the input up to the
 * first NUL byte is an ECMA-262 pattern, the rest a string. Whatever the pattern:
 * compiling never fails but with a reason, a search answers found, not found or "limit"
 * (never an error on a UTF-8 string), and these hold wherever they can be told apart:
 *   - a pattern with no syntax character is a literal: found exactly when memmem() is;
 *   - wrapping in a group changes nothing: (?:P) finds what P finds;
 *   - an anchored search is a narrower one: ^(?:P) found implies P found;
 *   - the contract {"pattern": P} accepts the string exactly when the search finds it
 *     (a limit hit never accepts).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "contract/pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int search(const char *pattern, size_t plen, const char *s, size_t slen, int *compiled)
{
    struct ar_pattern *p;
    char why[256];
    *compiled = ar_pattern_compile(pattern, plen, &p, why, sizeof(why)) == 0;
    if (!*compiled) {
        if (!why[0])
            abort(); /* a refusal always says why */
        return 0;
    }
    int m = ar_pattern_match(p, s, slen);
    ar_pattern_destroy(p);
    if (m != 0 && m != 1 && m != AR_PATTERN_LIMIT)
        abort();
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *sep = memchr(text, '\0', size);
    if (!sep || sep - text > 512)
        return 0;
    size_t plen = (size_t)(sep - text);
    const char *s = sep + 1;
    size_t slen = size - plen - 1;
    /* Contract strings are UTF-8 (jansson and the JSON reader check): so are these. */
    json_t *value = json_stringn(s, slen);
    json_t *pv = json_stringn(text, plen);
    if (!value || !pv)
        goto done;
    int ok;
    int m = search(text, plen, s, slen, &ok);
    if (!ok)
        goto done;
    if (!strpbrk(text, "^$\\.*+?()[]{}|/") && m != AR_PATTERN_LIMIT) {
        int want = plen == 0 || memmem(s, slen, text, plen) != NULL;
        if (m != want)
            abort();
    }
    char *wrapped = malloc(plen + 8);
    if (wrapped) {
        int ok2;
        memcpy(wrapped, "(?:", 3);
        memcpy(wrapped + 3, text, plen);
        wrapped[plen + 3] = ')';
        int g = search(wrapped, plen + 4, s, slen, &ok2);
        if (ok2 && g != AR_PATTERN_LIMIT && m != AR_PATTERN_LIMIT && g != m)
            abort();
        memmove(wrapped + 1, wrapped, plen + 4);
        wrapped[0] = '^';
        int a = search(wrapped, plen + 5, s, slen, &ok2);
        if (ok2 && a == 1 && m == 0)
            abort();
        free(wrapped);
    }
    json_t *schema = json_pack("{s:O}", "pattern", pv);
    struct ar_contract *c = NULL;
    if (schema && ar_contract_from_json(schema, &c, NULL) == 0) {
        if (ar_contract_accepts(c, value) != (m == 1))
            abort();
        ar_contract_destroy(c);
    }
    json_decref(schema);
done:
    json_decref(value);
    json_decref(pv);
    return 0;
}
