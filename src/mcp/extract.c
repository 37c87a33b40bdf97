/*
 * The extract tool: what `agentrun extract` does, on the text argument, with no
 * model: the JSON value as the model wrote it (and parsed), every value, the
 * fenced code blocks, or a markdown section. It answers before its start
 * returns, and is never queued behind the model calls.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrun/agentrun.h"
#include "agentrun/extract.h"
#include "mcp/call.h"
#include "util/buf.h"

#define OBJECT_OR_BOOL "{\"type\":[\"object\",\"boolean\"]"

static const char extract_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"text\"],"
    "\"properties\":{"
    "\"text\":{\"type\":\"string\",\"description\":\"model text (or a CLI's captured "
    "output with unwrap)\"},"
    "\"array\":{\"type\":\"boolean\",\"description\":\"want a JSON array\"},"
    "\"any\":{\"type\":\"boolean\",\"description\":\"want the first object or array\"},"
    "\"all\":{\"type\":\"boolean\",\"description\":\"every top-level value of the wanted "
    "kind\"},"
    "\"repair\":{\"type\":\"boolean\",\"description\":\"repair a candidate that does not "
    "parse\"},"
    "\"schema\":" OBJECT_OR_BOOL ",\"description\":\"the first value valid against this "
    "JSON Schema\"},"
    "\"code\":{\"type\":\"boolean\",\"description\":\"the fenced code blocks instead\"},"
    "\"lang\":{\"type\":\"string\",\"minLength\":1,\"description\":\"only code blocks of this "
    "language (implies code)\"},"
    "\"section\":{\"type\":\"string\",\"description\":\"the text under this markdown "
    "heading\"},"
    "\"unwrap\":{\"type\":\"string\",\"enum\":[\"claude\",\"codex\",\"gemini\",\"auto\"],"
    "\"description\":\"text is a CLI's json or stream-json output: take its final text "
    "first\"}}}";

static const char extract_output[] =
    "{\"type\":\"object\",\"required\":[\"found\"],\"properties\":{"
    "\"found\":{\"type\":\"boolean\"},\"json\":{\"type\":\"string\"},"
    "\"values\":{\"type\":\"array\"},\"blocks\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"}},\"section\":{\"type\":\"string\"},\"fixes\":{\"type\":\"array\"},"
    "\"error\":{\"type\":\"string\"}}}";

static int collect(void *arg, const char *data, size_t len)
{
    return ar_buf_append(arg, data, len) < 0 ? -1 : 0;
}

static json_t *fix_names(unsigned fixes)
{
    json_t *a = json_array();
    char *names = ar_extract_fix_names(fixes, ",");
    for (char *p = names, *tok; p && (tok = strsep(&p, ","));)
        if (*tok)
            json_array_append_new(a, json_string(tok));
    free(names);
    return a;
}

/* {json: the value as written, value: parsed, fixes, fenced, start, end}. */
static json_t *extraction_doc(const struct ar_extraction *x, const char *text)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (ar_extraction_write(x, text, collect, &b) != 0) {
        ar_buf_finish(&b);
        return NULL;
    }
    json_t *value = ar_mcp_parse_doc(ar_buf_cstr(&b));
    json_t *o =
        json_pack("{s:s%, s:o, s:o, s:b, s:I, s:I}", "json", ar_buf_cstr(&b), b.len, "value",
                  value ? value : json_null(), "fixes", fix_names(x->fixes), "fenced", x->fenced,
                  "start", (json_int_t)x->start, "end", (json_int_t)x->end);
    if (o && (x->fixes & AR_FIX_EXTRA_VALUES))
        json_object_set_new(o, "left_out",
                            json_pack("{s:I, s:I}", "count", (json_int_t)x->extra_count, "byte",
                                      (json_int_t)x->extra_at));
    ar_buf_finish(&b);
    return o;
}

struct all_state {
    json_t *values;
};

static int each_value(const struct ar_extraction *x, const char *text, void *arg)
{
    struct all_state *st = arg;
    json_t *d = extraction_doc(x, text);
    return d ? json_array_append_new(st->values, d) : -1;
}

static int each_block(void *arg, const char *data, size_t len)
{
    return json_array_append_new(arg, json_stringn(data, len)) < 0 ? -1 : 0;
}

static void extract_done(struct ar_mcp_call *c, json_t *doc, const char *error)
{
    if (!doc) {
        json_t *e = json_pack("{s:b, s:s}", "found", 0, "error", error ? error : "out of memory");
        ar_mcp_call_done(c, e, error ? error : "out of memory", 1, 0, 1);
        return;
    }
    json_object_set_new(doc, "found", json_true());
    /* The text is what `agentrun extract` would print: the value, each value of all
     * on its own line, the blocks, or the section. */
    struct ar_buf t;
    ar_buf_init(&t, AR_BUF_UNLIMITED);
    json_t *one = json_object_get(doc, "json"), *many = json_object_get(doc, "values"),
           *blocks = json_object_get(doc, "blocks"), *v;
    size_t i;
    if (one)
        ar_buf_puts(&t, json_string_value(one));
    json_array_foreach(many, i, v)
        ar_buf_printf(&t, "%s\n", json_string_value(json_object_get(v, "json")));
    json_array_foreach(blocks, i, v) ar_buf_printf(&t, "%s%s", i ? "\n" : "", json_string_value(v));
    if (json_object_get(doc, "section"))
        ar_buf_puts(&t, json_string_value(json_object_get(doc, "section")));
    char *text = ar_buf_detach(&t, NULL);
    ar_buf_finish(&t);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_mcp_put_cut(&b, text ? text : "");
    free(text);
    ar_mcp_call_done(c, doc, ar_buf_cstr(&b), 0, 0, 1);
    ar_buf_finish(&b);
}

static void extract_start(struct ar_mcp_call *c)
{
    json_t *jt = json_object_get(c->args, "text");
    const char *text = json_string_value(jt);
    size_t len = json_string_length(jt);
    struct ar_captured *cap = NULL;
    struct ar_contract *contract = NULL;
    struct ar_extraction *x = NULL;
    struct ar_error err = AR_ERROR_INIT;
    char why[512];
    const char *lang = ar_mcp_arg_str(c, "lang"), *section = ar_mcp_arg_str(c, "section");
    int code = ar_mcp_arg_bool(c, "code") || lang;
    int want_flags = ar_mcp_arg_bool(c, "array") + ar_mcp_arg_bool(c, "any");

    if (want_flags > 1) {
        ar_mcp_call_fail(c, "array and any cannot be combined");
        return;
    }
    if (code && section) {
        ar_mcp_call_fail(c, "code and section cannot be combined");
        return;
    }
    if ((code || section) && (want_flags || ar_mcp_arg_bool(c, "all") ||
                              ar_mcp_arg_bool(c, "repair") || json_object_get(c->args, "schema"))) {
        ar_mcp_call_fail(c, "%s does not take JSON options", code ? "code" : "section");
        return;
    }
    if (ar_mcp_arg_bool(c, "all") && json_object_get(c->args, "schema")) {
        ar_mcp_call_fail(c, "all and schema cannot be combined");
        return;
    }
    const char *unwrap = ar_mcp_arg_str(c, "unwrap");
    if (unwrap) {
        if (ar_captured_unwrap(unwrap, text, len, &cap, &err) < 0) {
            extract_done(c, NULL, err.msg);
            return;
        }
        if (cap->error) {
            snprintf(why, sizeof(why), "%s reported %s: %s", cap->provider,
                     ar_strerror_name(cap->error),
                     cap->error_msg ? cap->error_msg : ar_strerror(cap->error));
            ar_captured_destroy(cap);
            extract_done(c, NULL, why);
            return;
        }
        if (!cap->text || !*cap->text) {
            snprintf(why, sizeof(why), "%s's output holds no final text", cap->provider);
            ar_captured_destroy(cap);
            extract_done(c, NULL, why);
            return;
        }
        text = cap->text;
        len = strlen(text);
    }
    json_t *doc = NULL;
    const char *error = NULL;
    if (code) {
        json_t *blocks = json_array();
        int n = ar_markdown_blocks(text, len, lang, each_block, blocks);
        if (n > 0) {
            doc = json_pack("{s:o}", "blocks", blocks);
        } else {
            json_decref(blocks);
            snprintf(why, sizeof(why), lang ? "no '%s' code block found" : "no code block found",
                     lang);
            error = why;
        }
    } else if (section) {
        size_t s, e;
        if (ar_markdown_section(text, len, section, &s, &e, &err) == 0)
            doc = json_pack("{s:s%}", "section", text + s, e - s);
        else
            error = err.msg;
    } else {
        struct ar_extraction_options xo;
        ar_extraction_options_init(&xo);
        xo.want = ar_mcp_arg_bool(c, "array") ? AR_WANT_ARRAY
                  : ar_mcp_arg_bool(c, "any") ? AR_WANT_ANY
                                              : AR_WANT_OBJECT;
        xo.repair = ar_mcp_arg_bool(c, "repair");
        char *st = ar_mcp_schema_text(c);
        if (st && ar_contract_parse(st, strlen(st), &contract, &err) < 0) {
            snprintf(why, sizeof(why), "schema%s%s: %s", err.where[0] ? " " : "", err.where,
                     err.msg);
            error = why;
        }
        free(st);
        xo.contract = contract;
        if (error) {
            /* said above */
        } else if (ar_mcp_arg_bool(c, "all")) {
            struct all_state as = { json_array() };
            size_t left = 0, left_at = 0;
            int n = ar_extract_json_all(text, len, &xo, each_value, &as, &left, &left_at, &err);
            if (n > 0) {
                doc = json_pack("{s:o}", "values", as.values);
                if (doc && left)
                    json_object_set_new(doc, "left_out",
                                        json_pack("{s:I, s:I}", "count", (json_int_t)left, "byte",
                                                  (json_int_t)left_at));
            } else {
                json_decref(as.values);
                error = err.msg;
            }
        } else if (ar_extract_json(text, len, &xo, &x, &err) < 0) {
            error = err.msg;
        } else if (!x->valid) {
            snprintf(why, sizeof(why), "no value satisfies the schema:\n%s", x->violations);
            error = why;
        } else {
            doc = extraction_doc(x, text);
        }
    }
    extract_done(c, doc, error);
    ar_extraction_destroy(x);
    ar_contract_destroy(contract);
    ar_captured_destroy(cap);
}

const struct ar_mcp_tool ar_mcp_tool_extract = {
    .name = "extract",
    .title = "Extract JSON, code or a section from model text",
    .description = "Finds the JSON value (fenced ```json blocks first, then bare values), the "
                   "fenced code blocks, or a markdown section in text, as `agentrun extract` "
                   "does. No model is called. structuredContent.json is the value as written; "
                   "value is it parsed.",
    .input_schema = extract_input,
    .output_schema = extract_output,
    .uses_model = 0,
    .start = extract_start,
};
