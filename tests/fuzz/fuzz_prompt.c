/*
 * libFuzzer target for src/prompt: parses the input as a template, renders it
 * with a few variables (some unset, one empty, one holding "{{"), lists its
 * variables, and builds an inline prompt from the input split at the first
 * NUL byte (prompt, then schema).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prompt/prompt.h"
#include "util/buf.h"
#include "util/strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    static const struct ar_prompt_var vars[] = {
        { "diff", "--- a/x\n+++ b/x\n" },
        { "query", "{{diff}}" },
        { "empty", "" },
        { "unset", NULL },
        { "prds", "<prd id=\"a\">\n</prd>" },
        { "manifest", "Tasks:\n" },
        { "context", "" },
        { "x", "1" },
        { "x", "2" },
    };

    struct ar_prompt *p = NULL;
    struct ar_error err = AR_ERROR_INIT;
    if (ar_prompt_parse("fuzz/t.md", text, size, &p, &err) == 0) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        struct ar_error rerr = AR_ERROR_INIT;
        int rc = ar_prompt_render(p, vars, sizeof(vars) / sizeof(vars[0]), &b, &rerr);
        if (rc != 0 && rerr.code == 0)
            abort();
        /* The contract lead is the template's own text, the whole contract in it, and opens
         * every rendering: leaving it out never drops a value or half a section. */
        size_t lead = ar_prompt_contract_lead(p), block_len = 0;
        const char *block = ar_prompt_contract_text(p, &block_len);
        const char *own = ar_prompt_text(p, NULL);
        if (lead && (!block || (size_t)(block - own) + block_len > lead || lead > size ||
                     memcmp(own, text, lead) != 0 ||
                     (rc == 0 && (b.len < lead || memcmp(b.data, text, lead) != 0))))
            abort();
        ar_buf_finish(&b);
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        (void)ar_prompt_render(p, NULL, 0, &b, NULL);
        ar_buf_finish(&b);

        struct ar_strv names;
        ar_strv_init(&names);
        if (ar_prompt_variables(p, &names) != 0)
            abort();
        for (size_t i = 0; i < names.n; i++)
            if (!ar_prompt_uses(p, names.v[i]))
                abort();
        ar_strv_finish(&names);

        (void)strlen(ar_prompt_name(p));
        const char *d = ar_prompt_description(p);
        if (d)
            (void)strlen(d);
        size_t clen = 0;
        const char *ct = ar_prompt_contract_text(p, &clen);
        if (ct && (ct < ar_prompt_text(p, NULL) || !ar_prompt_contract(p)))
            abort();
        ar_prompt_destroy(p);
    } else if (p || err.code == 0) {
        abort();
    }

    const char *sep = memchr(text, '\0', size);
    if (sep) {
        size_t plen = (size_t)(sep - text);
        p = NULL;
        if (ar_prompt_create_inline(text, plen, sep + 1, size - plen - 1, "schema.json", &p,
                                    NULL) == 0) {
            struct ar_buf b;
            ar_buf_init(&b, AR_BUF_UNLIMITED);
            if (ar_prompt_render(p, NULL, 0, &b, NULL) != 0)
                abort();
            /* The prompt ends the text; the contract, when there is one, leads it. */
            size_t lead = ar_prompt_contract_lead(p);
            if (b.len != lead + plen || (plen && memcmp(b.data + lead, text, plen) != 0) ||
                (lead == 0) != (ar_prompt_contract(p) == NULL))
                abort();
            ar_buf_finish(&b);
            ar_prompt_destroy(p);
        }
    }
    return 0;
}
