/*
 * Reading a model's answer: find the JSON in it, check it against the
 * contract and the caller's own rules, and, when it fails, write the one
 * repair prompt. Pure functions of their inputs; the pipeline sequences them.
 */
#ifndef AR_RUN_ANSWER_H
#define AR_RUN_ANSWER_H

#include <jansson.h>

#include "agentrun/agentrun.h"
#include "contract/contract.h"
#include "json/doc.h"
#include "json/extract.h"
#include "prompt/prompt.h"
#include "util/buf.h"
#include "util/strv.h"

/* The previous output quoted in the repair prompt: at most its head and its tail. */
#define AR_ANSWER_REPAIR_HEAD ((size_t)24 << 10)
#define AR_ANSWER_REPAIR_TAIL ((size_t)8 << 10)

/* What makes an answer usable. All borrowed. */
struct ar_answer_rules {
    const struct ar_contract *contract; /* NULL: any JSON value of the wanted kind */
    enum ar_expect expect;
    int local_repair;
    ar_validate_fn *validate; /* checks beyond the contract, or NULL */
    void *validate_arg;
    /* A JSON Pointer to an array whose elements the caller judges alone: contract
     * violations inside them do not make the answer unusable (run.h,
     * ar_pipeline_extra), or NULL. */
    const char *independent_items;
};

/*
 * Finds the answer in text (NUL-terminated) and checks it. With
 * independent_items, a candidate whose only contract violations lie inside
 * elements of that array is usable (and such violations are not listed).
 * Returns 1 when it is usable: *doc holds it (the value, and its text as the model wrote it;
 * finish it), *fixes the local repairs applied and what was left out. Returns 0 when it is not,
 * with every reason appended to `details` (one line each: "/issues/2/line:
 * expected integer, got string \"3\"", or the extraction error) and *doc the
 * JSON that violates the rules, or empty (doc->value NULL) when there was no
 * JSON at all.
 */
int ar_answer_check(const struct ar_answer_rules *rules, const char *text, struct ar_json_doc *doc,
                    struct ar_extract_fixes *fixes, struct ar_strv *details);

/*
 * Appends the repair prompt to `out`: `tpl` (prompts/repair.md) rendered
 * with the violations (`details`), the contract (pretty JSON, or what kind of
 * value to give when there is none) and the previous output, cut to its
 * head and tail at UTF-8 boundaries. Returns 0 or a template error.
 */
int ar_answer_repair_prompt(const struct ar_prompt *tpl, const struct ar_contract *contract,
                            enum ar_expect expect, const struct ar_strv *details,
                            const char *previous, struct ar_buf *out, struct ar_error *err);

#endif
