/*
 * The public extraction calls (agentrun/extract.h): src/json's extraction,
 * markdown and repair, src/contract's check and the providers' unwrappers,
 * with C structs for what they found. The rules are theirs; this file only
 * hands their answers over.
 */
#include <stdlib.h>
#include <string.h>

#include "agentrun/extract.h"
#include "contract/contract.h"
#include "json/extract.h"
#include "json/markdown.h"
#include "json/repair.h"
#include "provider/provider.h"
#include "util/buf.h"

/* A value is written in pieces of this size: a large one is never held twice. */
#define PIECE ((size_t)64 << 10)

/* An extraction and what it was read from: pub first, so a pointer to it is one to this. */
struct extraction {
    struct ar_extraction pub;
    struct ar_extract_result res;  /* ar_extract_json()'s; unused by ar_extract_json_all() */
    const struct ar_json_doc *doc; /* the value's document: &res.doc, or the walk's */
    char *violations;              /* pub.violations, owned */
};

char *ar_extract_fix_names(unsigned fixes, const char *sep)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    char *s = ar_json_fixes_format(fixes, sep, &b) == 0 ? ar_buf_detach(&b, NULL) : NULL;
    ar_buf_finish(&b);
    return s;
}

void ar_extraction_options_init(struct ar_extraction_options *o)
{
    memset(o, 0, sizeof(*o));
    o->want = AR_WANT_OBJECT;
}

/* The module's options for the public ones; NULL means the defaults. */
static struct ar_extract_options module_options(const struct ar_extraction_options *o)
{
    struct ar_extract_options xo = AR_EXTRACT_OPTIONS_INIT;
    if (!o)
        return xo;
    xo.want = o->want;
    if (o->repair)
        xo.flags |= AR_EXTRACT_REPAIR;
    if (o->contract) {
        xo.accept = ar_contract_accept_fn;
        xo.accept_arg = (void *)o->contract;
    } else {
        xo.flags |= AR_EXTRACT_TEXT_ONLY; /* written, never read: no jansson tree */
    }
    return xo;
}

static int check_want(const struct ar_extraction_options *o, struct ar_error *err)
{
    if (o && (o->want < AR_WANT_OBJECT || o->want > AR_WANT_VALUE))
        return ar_error_set(err, AR_EUSAGE, "want",
                            "invalid want %d (1 object, 2 array, 3 any, 4 the whole text)",
                            o->want);
    return 0;
}

/* AR_WANT_VALUE: the whole text is the value, whatever its kind. */
static int whole_value(const char *text, size_t len, struct extraction *x, struct ar_error *err)
{
    int rc = ar_json_doc_parse(&x->res.doc, text, len, err);
    if (rc < 0)
        return rc;
    size_t start = 0, end = len;
    while (start < len && strchr(" \t\r\n", text[start]))
        start++;
    while (end > start && strchr(" \t\r\n", text[end - 1]))
        end--;
    x->res.value = x->res.doc.value;
    x->res.start = start;
    x->res.end = end;
    x->res.accepted = 1;
    return 0;
}

/* The violations of a value the contract did not accept, as lines. */
static int violations_text(const struct ar_contract *c, const struct ar_json_doc *doc, char **out)
{
    struct ar_violations vs = AR_VIOLATIONS_INIT;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    ar_contract_check_doc(c, doc, &vs);
    int rc = ar_violations_format(&vs, &b);
    if (rc == 0 && !(*out = ar_buf_detach(&b, NULL)))
        rc = AR_ENOMEM;
    ar_buf_finish(&b);
    ar_violations_finish(&vs);
    return rc;
}

static void fill(struct ar_extraction *p, size_t start, size_t end, unsigned fixes)
{
    p->start = start;
    p->end = end;
    p->fixes = fixes;
    p->valid = 1;
}

int ar_extract_json(const char *text, size_t len, const struct ar_extraction_options *o,
                    struct ar_extraction **out, struct ar_error *err)
{
    *out = NULL;
    int rc = check_want(o, err);
    if (rc < 0)
        return rc;
    struct extraction *x = calloc(1, sizeof(*x));
    if (!x)
        return ar_error_set(err, AR_ENOMEM, "extract", "out of memory");
    struct ar_extract_options xo = module_options(o);
    struct ar_extract_result init = AR_EXTRACT_RESULT_INIT;
    x->res = init;
    if (o && o->want == AR_WANT_VALUE) {
        rc = whole_value(text, len, x, err);
        if (rc == 0 && o->contract)
            x->res.accepted = ar_contract_accepts_doc(o->contract, &x->res.doc);
    } else {
        rc = ar_json_extract(text, len, &xo, &x->res, err);
    }
    if (rc == 0) {
        const struct ar_extract_result *r = &x->res;
        x->doc = &x->res.doc;
        fill(&x->pub, r->start, r->end, r->fixes);
        x->pub.extra_count = r->extra.count;
        x->pub.extra_at = r->extra.at;
        x->pub.members_count = r->members.count;
        x->pub.members_at = r->members.at;
        x->pub.fenced = r->fenced;
        if (!r->accepted) {
            x->pub.valid = 0;
            rc = violations_text(o->contract, x->doc, &x->violations);
            if (rc < 0)
                ar_error_set(err, rc, "extract", "out of memory");
            x->pub.violations = x->violations;
        }
    }
    if (rc < 0) {
        ar_extraction_destroy(&x->pub);
        return rc;
    }
    *out = &x->pub;
    return 0;
}

/* Writes text[start, end) compacted, piece by piece. */
static int write_compacted(const char *text, size_t start, size_t end, ar_write_fn *fn, void *arg)
{
    struct ar_json_compactor st = AR_JSON_COMPACTOR_INIT;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int rc = 0;
    for (size_t at = start; at < end && rc == 0; at += PIECE) {
        size_t n = end - at < PIECE ? end - at : PIECE;
        ar_buf_reset(&b);
        rc = ar_json_compact(&st, text + at, n, &b);
        if (rc == 0 && b.len)
            rc = fn(arg, b.data, b.len);
    }
    ar_buf_finish(&b);
    return rc;
}

int ar_extraction_write(const struct ar_extraction *x, const char *text, ar_write_fn *fn, void *arg)
{
    const struct extraction *e = (const struct extraction *)x;
    const struct ar_json_doc *doc = e->doc;
    if (doc->text) /* the repaired text, or the compact one the document holds */
        return fn(arg, doc->text, doc->len);
    if (e->res.compact && doc == &e->res.doc) /* the model's own bytes, compact already */
        return fn(arg, text + x->start, x->end - x->start);
    return write_compacted(text, x->start, x->end, fn, arg);
}

void ar_extraction_destroy(struct ar_extraction *x)
{
    if (!x)
        return;
    struct extraction *e = (struct extraction *)x;
    ar_extract_result_finish(&e->res);
    free(e->violations);
    free(e);
}

struct each_walk {
    ar_extraction_fn *fn;
    void *arg;
    const char *text;
};

static int each_value(const struct ar_json_doc *doc, size_t start, size_t end, unsigned fixes,
                      void *arg)
{
    struct each_walk *w = arg;
    struct extraction x;
    memset(&x, 0, sizeof(x));
    x.doc = doc;
    fill(&x.pub, start, end, fixes);
    return w->fn(&x.pub, w->text, w->arg);
}

int ar_extract_json_all(const char *text, size_t len, const struct ar_extraction_options *o,
                        ar_extraction_fn *fn, void *arg, size_t *left_count, size_t *left_at,
                        struct ar_error *err)
{
    int rc = check_want(o, err);
    if (rc < 0)
        return rc;
    if (o && o->contract)
        return ar_error_set(err, AR_EUSAGE, "contract",
                            "a contract picks one value: not with ar_extract_json_all()");
    if (o && o->want == AR_WANT_VALUE)
        return ar_error_set(err, AR_EUSAGE, "want",
                            "the whole text is one value: not with ar_extract_json_all()");
    struct ar_extract_options xo = module_options(o);
    struct ar_extract_note left = { 0, 0 };
    struct each_walk w = { fn, arg, text };
    rc = ar_json_extract_all(text, len, &xo, each_value, &w, &left, err);
    if (left_count)
        *left_count = left.count;
    if (left_at)
        *left_at = left.at;
    return rc;
}

struct block_walk {
    const char *lang;
    ar_write_fn *fn;
    void *arg;
    int n;
    int stopped;
};

static int each_block(const struct ar_md_block *b, const char *text, void *arg)
{
    struct block_walk *w = arg;
    if (!ar_md_block_is_lang(b, text, w->lang))
        return 0;
    w->n++;
    w->stopped = w->fn(w->arg, text + b->start, b->end - b->start);
    return w->stopped != 0;
}

int ar_markdown_blocks(const char *text, size_t len, const char *lang, ar_write_fn *fn, void *arg)
{
    struct block_walk w = { lang, fn, arg, 0, 0 };
    ar_md_blocks_each(text, len, each_block, &w);
    return w.stopped ? w.stopped : w.n;
}

int ar_markdown_section(const char *text, size_t len, const char *heading, size_t *start,
                        size_t *end, struct ar_error *err)
{
    return ar_md_section_find(text, len, heading, start, end, err);
}

/* A captured output's reading: pub first, the reply owns the strings. */
struct captured {
    struct ar_captured pub;
    struct ar_reply reply;
};

int ar_captured_unwrap(const char *provider, const char *data, size_t len, struct ar_captured **out,
                       struct ar_error *err)
{
    *out = NULL;
    int any = provider && strcmp(provider, "auto") == 0;
    const struct ar_provider *p = any        ? ar_provider_detect(data, len)
                                  : provider ? ar_provider_find(provider)
                                             : NULL;
    if (!p && !any) {
        char msg[256];
        const char *name = provider ? provider : "(null)";
        ar_provider_unknown_text(name, strlen(name), 1, msg, sizeof(msg));
        return ar_error_set(err, AR_EUSAGE, "provider", "%s", msg);
    }
    struct captured *c = calloc(1, sizeof(*c));
    if (!c)
        return ar_error_set(err, AR_ENOMEM, "unwrap", "out of memory");
    ar_reply_init(&c->reply);
    if (!p || p->unwrap_captured(data, len, &c->reply) < 0) {
        ar_captured_destroy(&c->pub);
        if (p)
            return ar_error_set(err, AR_ENOJSON, p->name,
                                "the input is not %s's json or stream-json output", p->name);
        return ar_error_set(err, AR_ENOJSON, "unwrap",
                            "the input is not the json or stream-json output of %s",
                            ar_provider_names_or());
    }
    c->pub.provider = p->name;
    c->pub.text = c->reply.text;
    c->pub.session_id = c->reply.session_id;
    c->pub.usage = c->reply.usage;
    c->pub.error = c->reply.error;
    c->pub.error_msg = c->reply.error_msg;
    *out = &c->pub;
    return 0;
}

void ar_captured_destroy(struct ar_captured *c)
{
    if (!c)
        return;
    struct captured *cc = (struct captured *)c;
    ar_reply_finish(&cc->reply);
    free(cc);
}
