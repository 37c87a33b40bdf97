/* Reading a model's answer: extraction, checks, and the one repair prompt. */
#include <stdlib.h>
#include <string.h>

#include "json/extract.h"
#include "run/answer.h"
#include "util/json_dump.h"

struct sink {
    struct ar_strv *lines;
};

static void add_violation(void *arg, const char *msg)
{
    struct sink *s = arg;
    ar_strv_push(s->lines, msg);
}

/* 1 when the JSON Pointer `path` lies inside an element of the array at `items`:
 * items + "/" + an index, then the end or "/". */
static int inside_item(const char *path, const char *items)
{
    size_t n = strlen(items);
    if (strncmp(path, items, n) != 0 || path[n] != '/')
        return 0;
    const char *p = path + n + 1;
    size_t digits = strspn(p, "0123456789");
    return digits && (p[digits] == '\0' || p[digits] == '/');
}

/*
 * The contract's violations of doc that make it unusable, appended to vs
 * (cleared first): every one, or with items all but those inside an element
 * of that array. Past AR_CONTRACT_MAX_VIOLATIONS some are only counted; then
 * the answer without the array's elements must satisfy the contract too, so
 * that no violation outside them hides among the uncounted. Returns how many
 * count (stored or omitted).
 */
static size_t counting_violations(const struct ar_contract *c, const struct ar_json_doc *doc,
                                  const char *items, struct ar_violations *vs)
{
    ar_contract_check_doc(c, doc, vs);
    if (!items)
        return vs->n + vs->omitted;
    size_t kept = 0;
    for (size_t i = 0; i < vs->n; i++) {
        if (inside_item(vs->v[i].path, items)) {
            free(vs->v[i].path);
            free(vs->v[i].message);
            json_decref(vs->v[i].value);
        } else {
            vs->v[kept++] = vs->v[i];
        }
    }
    vs->n = kept;
    if (vs->omitted) {
        json_t *bare = json_deep_copy(doc->value);
        json_t *arr = bare ? json_object_get(bare, items + 1) : NULL;
        int ok = arr && !strchr(items + 1, '/') && json_is_array(arr) && !json_array_clear(arr) &&
                 ar_contract_accepts(c, bare);
        json_decref(bare);
        if (ok)
            vs->omitted = 0;
    }
    return vs->n + vs->omitted;
}

struct accept_arg {
    const struct ar_contract *contract;
    const char *items;
};

static int accept_candidate(const struct ar_json_doc *doc, void *arg)
{
    const struct accept_arg *a = arg;
    if (ar_contract_accepts_doc(a->contract, doc))
        return 1;
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    size_t n = counting_violations(a->contract, doc, a->items, &vs);
    ar_violations_finish(&vs);
    return n == 0;
}

int ar_answer_check(const struct ar_answer_rules *rules, const char *text, struct ar_json_doc *doc,
                    struct ar_extract_fixes *fixes, struct ar_strv *details)
{
    static const int want[] = { AR_JSON_OBJECT, AR_JSON_ARRAY, AR_JSON_ANY };
    struct ar_extract_options xo = AR_EXTRACT_OPTIONS_INIT;
    struct ar_extract_result xr = AR_EXTRACT_RESULT_INIT;
    struct ar_error err = AR_ERROR_INIT;
    size_t before = details->n;
    xo.want = want[rules->expect];
    xo.flags = rules->local_repair ? AR_EXTRACT_REPAIR : 0;
    struct accept_arg aa = { rules->contract, rules->independent_items };
    if (rules->contract) {
        /* With a contract, the first candidate that satisfies it wins. */
        xo.accept = accept_candidate;
        xo.accept_arg = &aa;
    }
    memset(doc, 0, sizeof(*doc));
    memset(fixes, 0, sizeof(*fixes));
    if (ar_json_extract(text, strlen(text), &xo, &xr, &err) < 0) {
        ar_strv_push(details, err.msg);
        return 0;
    }
    *doc = xr.doc;
    fixes->bits = xr.fixes;
    fixes->extra = xr.extra;
    fixes->members = xr.members;
    memset(&xr, 0, sizeof(xr));
    json_t *value = doc->value;

    if (rules->contract) {
        struct ar_violations vs = AR_VIOLATIONS_INIT;
        counting_violations(rules->contract, doc, rules->independent_items, &vs);
        for (size_t i = 0; i < vs.n; i++) {
            struct ar_buf line;
            ar_buf_init(&line, AR_BUF_UNLIMITED);
            ar_violation_format(&vs.v[i], &line);
            ar_strv_push_take(details, ar_buf_detach(&line, NULL));
        }
        if (vs.omitted)
            ar_strv_pushf(details, "(%zu more violations not shown)", vs.omitted);
        ar_violations_finish(&vs);
    }
    /* The caller's own rules run on any value found, even one the contract
     * rejects, so that the one repair call hears about every problem at once;
     * a validate hook must therefore cope with any shape. */
    if (value && rules->validate) {
        struct sink s = { details };
        rules->validate(rules->validate_arg, value, add_violation, &s);
    }
    return details->n == before;
}

/* n moved back to the start of the UTF-8 sequence it falls in. */
static size_t utf8_floor(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static void append_cut(struct ar_buf *out, const char *text)
{
    size_t n = strlen(text);
    if (n <= AR_ANSWER_REPAIR_HEAD + AR_ANSWER_REPAIR_TAIL) {
        ar_buf_append(out, text, n);
        return;
    }
    size_t head = utf8_floor(text, AR_ANSWER_REPAIR_HEAD);
    size_t tail = utf8_floor(text, n - AR_ANSWER_REPAIR_TAIL);
    ar_buf_append(out, text, head);
    ar_buf_printf(out, "\n[… %zu bytes omitted …]\n", tail - head);
    ar_buf_append(out, text + tail, n - tail);
}

int ar_answer_repair_prompt(const struct ar_prompt *tpl, const struct ar_contract *contract,
                            enum ar_expect expect, const struct ar_strv *details,
                            const char *previous, struct ar_buf *out, struct ar_error *err)
{
    struct ar_buf violations, schema, prev;
    ar_buf_init(&violations, AR_BUF_UNLIMITED);
    ar_buf_init(&schema, AR_BUF_UNLIMITED);
    ar_buf_init(&prev, AR_BUF_UNLIMITED);
    for (size_t i = 0; i < details->n; i++)
        ar_buf_printf(&violations, "- %s\n", details->v[i]);
    if (contract) {
        size_t n;
        const char *text = ar_contract_schema_text(contract, &n);
        ar_json_text_indent(text, n, 2, &schema);
    } else {
        static const char *const kinds[] = { "a JSON object", "a JSON array",
                                             "a JSON object or array" };
        ar_buf_printf(&schema, "(no schema: answer with %s)", kinds[expect]);
    }
    append_cut(&prev, previous);
    struct ar_prompt_var vars[] = {
        { "violations", ar_buf_cstr(&violations) },
        { "contract", ar_buf_cstr(&schema) },
        { "previous_output", ar_buf_cstr(&prev) },
    };
    int rc = ar_prompt_render(tpl, vars, 3, out, err);
    ar_buf_finish(&violations);
    ar_buf_finish(&schema);
    ar_buf_finish(&prev);
    return rc;
}
