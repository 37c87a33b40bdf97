/* Finding the JSON value in model text (see extract.h for the rules). */
#include "json/extract.h"
#include "util/array.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/markdown.h"
#include "json/repair.h"
#include "json/scan.h"
#include "util/buf.h"

#define NO_MATCH SIZE_MAX
#define NOT_OPEN (SIZE_MAX - 1) /* inside a string by the lenient pairing */

/* Lenient bracket pairing for repair mode: where each '{' or '[' would close if
 * the text were sloppy JSON (single quotes, comments). Computed once per range
 * so that finding a repair region costs nothing per candidate. */
struct pair {
    size_t open, close;
};

struct ctx {
    const char *text;
    size_t len;
    int want; /* AR_KIND_* bits */
    unsigned flags;
    ar_extract_accept_fn *accept;
    void *accept_arg;
    ar_extract_each_fn *each; /* all mode */
    void *each_arg;
    size_t count; /* values found in all mode */
    struct ar_json_scanner sc;
    struct ar_extract_result *res;
    int done;                          /* a winner was found (or all mode was told to stop) */
    int nomem;                         /* out of memory somewhere: give up */
    int fenced;                        /* scanning a fenced block now */
    struct ar_extract_result fallback; /* first parseable candidate accept rejected */
    struct ar_extract_result deferred; /* first inline array (a citation?) */
    size_t trunc_start;                /* NO_MATCH until a value is cut off by the end */
    char first_error[200];             /* the first candidate's parse error */
    struct pair *pairs;                /* repair mode: lenient pairs of the current range */
    size_t npairs, paircap, pair_cursor;
    size_t repair_horizon; /* no repair starts before this offset (keeps repair linear) */
    int sloppy_cut;        /* the last repair failed on sloppy JSON cut off by the end */
    struct ar_buf rbuf;
};

static int kind_of(char c)
{
    return c == '{' ? AR_KIND_OBJECT : AR_KIND_ARRAY;
}

static int kind_of_value(const json_t *v)
{
    return json_is_object(v) ? AR_KIND_OBJECT : json_is_array(v) ? AR_KIND_ARRAY : 0;
}

/* 1 when the candidate at `start` shares its line with text before it: an
 * inline array there is a citation ("as in [1]") more likely than the answer. */
static int is_inline(const struct ctx *c, size_t start)
{
    for (size_t i = start; i > 0; i--) {
        char ch = c->text[i - 1];
        if (ch == '\n')
            return 0;
        if (ch != ' ' && ch != '\t' && ch != '\r')
            return 1;
    }
    return 0;
}

static void set_result(struct ctx *c, struct ar_extract_result *r, struct ar_json_doc *doc,
                       size_t start, size_t end, unsigned fixes, int ok)
{
    r->doc = *doc;
    memset(doc, 0, sizeof(*doc));
    r->value = r->doc.value;
    r->start = start;
    r->end = end;
    r->fixes = fixes;
    r->accepted = ok;
    r->fenced = c->fenced;
}

/* Offers one candidate. `src` holds its JSON text (the original bytes or a
 * repaired copy); [start, end) are its bytes in the original text. Returns 1
 * when it parsed. */
static int offer(struct ctx *c, const char *src, size_t n, size_t start, size_t end, unsigned fixes)
{
    struct ar_json_doc doc;
    struct ar_error jerr = AR_ERROR_INIT;
    int prc = ar_json_doc_parse(&doc, src, n, &jerr);
    if (prc == AR_ENOMEM) {
        c->nomem = 1;
        return 0;
    }
    if (prc < 0) {
        if (!c->first_error[0])
            snprintf(c->first_error, sizeof(c->first_error),
                     "JSON at byte %zu does not parse: %.150s", start, jerr.msg);
        return 0;
    }
    if (!(kind_of_value(doc.value) & c->want)) {
        ar_json_doc_finish(&doc);
        return 0;
    }
    if (c->each) {
        c->count++;
        if (c->each(&doc, start, end, fixes, c->each_arg))
            c->done = 1;
        ar_json_doc_finish(&doc);
        return 1;
    }
    int ok = !c->accept || c->accept(&doc, c->accept_arg);
    /* An inline array waits: a later candidate on a line of its own wins. */
    int deferred = ok && json_is_array(doc.value) && !c->fenced && is_inline(c, start);
    if (deferred) {
        if (!c->deferred.value)
            set_result(c, &c->deferred, &doc, start, end, fixes, 1);
        ar_json_doc_finish(&doc);
        return 1;
    }
    if (!ok) {
        if (!c->fallback.value)
            set_result(c, &c->fallback, &doc, start, end, fixes, 0);
        ar_json_doc_finish(&doc);
        return 1;
    }
    set_result(c, c->res, &doc, start, end, fixes, 1);
    c->done = 1;
    return 1;
}

/* 1 when s[0..n) holds a byte besides brackets and whitespace: "{{" or "[[["
 * cut off is no value worth closing. */
static int has_content(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("{}[] \t\r\n", s[i]) || !s[i])
            return 1;
    return 0;
}

static int is_sp(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* 1 when s[0..n) has a quoted key: a quote, then a colon. */
static int has_key(const char *s, size_t n)
{
    char last = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ':' && (last == '"' || last == '\''))
            return 1;
        if (!is_sp((unsigned char)s[i]))
            last = s[i];
    }
    return 0;
}

/* Repairs text[start, end) and offers the result. Returns 1 when it parsed. A
 * value is closed (the truncation fix) only when the region is a prefix of
 * JSON with some content: prose such as "use { carefully." is not cut-off JSON. */
static int offer_repaired(struct ctx *c, size_t start, size_t *endp)
{
    unsigned fixes = 0;
    size_t end = *endp, used = 0;
    ar_buf_reset(&c->rbuf);
    int rc = ar_json_repair_value(c->text + start, end - start, &c->rbuf, &fixes, &used, NULL);
    if (rc == AR_ENOMEM) {
        c->nomem = 1;
        return 0;
    }
    if (rc < 0 || !fixes)
        return 0;
    if (fixes & AR_FIX_TRUNCATION) {
        size_t stop;
        int src = ar_json_scan(&c->sc, c->text, start, end, &stop);
        if (src == AR_SCAN_NOMEM)
            c->nomem = 1;
        if (src != AR_SCAN_EOF || !has_content(c->text + start, end - start)) {
            /* Sloppy JSON cut off ({'a': 1, 'b': [1, 2) is truncated, not prose:
             * nothing inside it may stand in for it. */
            c->sloppy_cut =
                src == AR_SCAN_FAIL && end == c->len && has_key(c->text + start, end - start);
            return 0;
        }
    }
    if (used && used < end - start)
        end = start + used;
    if (!offer(c, c->rbuf.data, c->rbuf.len, start, end, fixes))
        return 0;
    *endp = end;
    return 1;
}

/* One pass over [lo, hi) pairing brackets the way sloppy JSON would: strings in
 * double quotes, in single quotes where a value or key may start, and comments
 * are skipped. Pairs come out sorted by their opening offset. */
static int lenient_pairs(struct ctx *c, size_t lo, size_t hi)
{
    const char *t = c->text;
    size_t *stack = NULL, depth = 0, cap = 0;
    char prev = 0; /* last significant byte outside strings */
    c->npairs = 0;
    c->pair_cursor = 0;
    for (size_t i = lo; i < hi; i++) {
        char ch = t[i];
        if (ch == '{' || ch == '[') {
            if (ar_array_reserve(&c->pairs, &c->paircap, c->npairs + 1, sizeof(*c->pairs), 64) <
                    0 ||
                ar_array_reserve(&stack, &cap, depth + 1, sizeof(*stack), 64) < 0)
                goto nomem;
            c->pairs[c->npairs].open = i;
            c->pairs[c->npairs].close = NO_MATCH;
            stack[depth++] = c->npairs++;
        } else if (ch == '}' || ch == ']') {
            if (depth)
                c->pairs[stack[--depth]].close = i;
        } else if (depth && ((ch == '"' && t[i - 1] != '\\') ||
                             (ch == '\'' && prev && strchr("{[,:", prev)))) {
            size_t j = i + 1;
            while (j < hi && t[j] != ch) {
                if (t[j] == '\\')
                    j++;
                j++;
            }
            i = j < hi ? j : hi;
        } else if (depth && ch == '/' && i + 1 < hi && (t[i + 1] == '/' || t[i + 1] == '*')) {
            const char *e = t[i + 1] == '/' ? memchr(t + i, '\n', hi - i)
                                            : memmem(t + i + 2, hi - i - 2, "*/", 2);
            i = e ? (size_t)(e - t) + (t[i + 1] == '*') : hi;
            continue;
        }
        if (!is_sp((unsigned char)ch))
            prev = ch;
    }
    free(stack);
    return 0;
nomem:
    free(stack);
    c->nomem = 1;
    return -1;
}

/* The lenient close of the bracket at `open` (NO_MATCH when it never closes,
 * NOT_OPEN when the lenient pass saw it inside a string); calls come in
 * increasing order. */
static size_t lenient_close(struct ctx *c, size_t open)
{
    while (c->pair_cursor < c->npairs && c->pairs[c->pair_cursor].open < open)
        c->pair_cursor++;
    if (c->pair_cursor < c->npairs && c->pairs[c->pair_cursor].open == open)
        return c->pairs[c->pair_cursor].close;
    return NOT_OPEN;
}

/* The next '{' or '[' at or after i, or hi. memchr is much faster than a byte
 * loop on long prose; remembering both next hits keeps it linear. */
struct finder {
    size_t brace, bracket;
};

static size_t find_next(const struct ctx *c, struct finder *f, size_t i, size_t hi)
{
    if (f->brace == NO_MATCH || f->brace < i) {
        const char *p = memchr(c->text + i, '{', hi - i);
        f->brace = p ? (size_t)(p - c->text) : hi;
    }
    if (f->bracket == NO_MATCH || f->bracket < i) {
        const char *p = memchr(c->text + i, '[', hi - i);
        f->bracket = p ? (size_t)(p - c->text) : hi;
    }
    return f->brace < f->bracket ? f->brace : f->bracket;
}

/* The first significant byte after the bracket at p. */
static size_t first_inside(const struct ctx *c, size_t p, size_t hi)
{
    size_t q = p + 1;
    while (q < hi && is_sp((unsigned char)c->text[q]))
        q++;
    return q;
}

/* Where a value that broke at `from` with `depth` containers open ends, by
 * counting brackets outside double-quoted strings; hi when it never closes. */
static size_t broken_end(const struct ctx *c, size_t from, size_t hi, size_t depth)
{
    const char *t = c->text;
    for (size_t i = from; i < hi; i++) {
        char ch = t[i];
        if (ch == '"') {
            for (i++; i < hi && t[i] != '"'; i++)
                if (t[i] == '\\')
                    i++;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && --depth == 0) {
            return i + 1;
        }
    }
    return hi;
}

/* Scans text[lo, hi) for candidates. `at_end`: hi is the end of the text, so a
 * value open at hi was truncated (rather than cut by a closing fence). */
static void scan_range(struct ctx *c, size_t lo, size_t hi, int at_end)
{
    struct finder f = { NO_MATCH, NO_MATCH };
    int repair = (c->flags & AR_EXTRACT_REPAIR) != 0;
    c->repair_horizon = lo;
    if (repair && lenient_pairs(c, lo, hi) < 0)
        return;
    size_t i = lo;
    while (i < hi && !c->done && !c->nomem) {
        size_t p = find_next(c, &f, i, hi);
        if (p >= hi)
            break;
        size_t stop;
        int rc = ar_json_scan(&c->sc, c->text, p, hi, &stop);
        int kind = kind_of(c->text[p]);
        size_t depth = c->sc.depth; /* where it stopped; a repair attempt rescans */
        if (rc == AR_SCAN_NOMEM) {
            c->nomem = 1;
            return;
        }
        if (rc == AR_SCAN_COMPLETE) {
            if (kind & c->want) {
                size_t end = stop;
                if (!offer(c, c->text + p, stop - p, p, stop, 0) && repair)
                    offer_repaired(c, p, &end); /* e.g. a string that is not UTF-8 */
            }
            i = stop;
            continue;
        }
        if (rc == AR_SCAN_EOF) {
            if (!(kind & c->want) && !c->sc.saw_want)
                return;
            size_t end = hi;
            if (repair && offer_repaired(c, p, &end))
                return;
            if (at_end) {
                if (c->trunc_start == NO_MATCH)
                    c->trunc_start = p;
            } else if (!c->first_error[0]) {
                snprintf(c->first_error, sizeof(c->first_error),
                         "JSON at byte %zu is cut off by the end of its code block", p);
            }
            return; /* everything after p is part of the cut-off value */
        }
        /* AR_SCAN_FAIL: not JSON from p. Sloppy JSON gets one repair attempt per
         * region. */
        size_t close = repair && p >= c->repair_horizon ? lenient_close(c, p) : NOT_OPEN;
        if (close != NOT_OPEN) {
            size_t end = close == NO_MATCH ? hi : close + 1;
            c->repair_horizon = end;
            c->sloppy_cut = 0;
            if (offer_repaired(c, p, &end)) {
                i = end;
                continue;
            }
            if (c->sloppy_cut) {
                if (c->trunc_start == NO_MATCH)
                    c->trunc_start = p;
                return;
            }
        }
        if (stop == first_inside(c, p, hi)) {
            i = stop; /* prose in brackets: "{placeholder}", "[see below]" */
            continue;
        }
        /* A value that began as JSON and broke: nothing inside it is the answer
         * (a fragment of a broken value would be a plausible wrong one). */
        if (!c->first_error[0])
            snprintf(c->first_error, sizeof(c->first_error),
                     "JSON at byte %zu is broken at byte %zu", p, stop);
        i = broken_end(c, stop, hi, depth);
    }
}

static int fenced_block(const struct ar_md_block *b, const char *text, void *arg)
{
    struct ctx *c = arg;
    if (!ar_md_block_is_json(b, text))
        return 0;
    c->fenced = 1;
    scan_range(c, b->start, b->end, !b->closed);
    c->fenced = 0;
    return c->done || c->nomem;
}

static const char *want_name(int want)
{
    return want == AR_JSON_ARRAY ? "array" : want == AR_JSON_ANY ? "value" : "object";
}

static void ctx_init(struct ctx *c, const char *text, size_t len,
                     const struct ar_extract_options *opt)
{
    static const struct ar_extract_options defaults = AR_EXTRACT_OPTIONS_INIT;
    if (!opt)
        opt = &defaults;
    memset(c, 0, sizeof(*c));
    c->text = text;
    c->len = len;
    c->want = opt->want & (AR_KIND_OBJECT | AR_KIND_ARRAY);
    if (!c->want)
        c->want = AR_KIND_OBJECT;
    c->flags = opt->flags;
    c->accept = opt->accept;
    c->accept_arg = opt->accept_arg;
    c->trunc_start = NO_MATCH;
    ar_json_scanner_init(&c->sc, c->want);
    ar_buf_init(&c->rbuf, AR_BUF_UNLIMITED);
}

static void ctx_finish(struct ctx *c)
{
    ar_json_scanner_finish(&c->sc);
    ar_buf_finish(&c->rbuf);
    free(c->pairs);
    ar_extract_result_finish(&c->fallback);
    ar_extract_result_finish(&c->deferred);
}

static size_t bom_len(const char *t, size_t len)
{
    return len >= 3 && memcmp(t, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

/* The error when nothing was found. */
static int not_found(struct ctx *c, int want, struct ar_error *err)
{
    if (c->nomem)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    if (c->trunc_start != NO_MATCH) {
        char where[32];
        snprintf(where, sizeof(where), "byte %zu", c->trunc_start);
        return ar_error_set(err, AR_ETRUNCATED, where, "JSON truncated at byte %zu", c->len);
    }
    if (c->first_error[0])
        return ar_error_set(err, AR_ENOJSON, NULL, "no JSON %s found (%s)", want_name(want),
                            c->first_error);
    return ar_error_set(err, AR_ENOJSON, NULL, "no JSON %s found", want_name(want));
}

void ar_extract_result_finish(struct ar_extract_result *res)
{
    ar_json_doc_finish(&res->doc);
    memset(res, 0, sizeof(*res));
}

int ar_json_extract(const char *text, size_t len, const struct ar_extract_options *opt,
                    struct ar_extract_result *res, struct ar_error *err)
{
    struct ctx c;
    ctx_init(&c, text, len, opt);
    memset(res, 0, sizeof(*res));
    c.res = res;
    size_t lo = bom_len(text, len);
    ar_md_blocks_each(text, len, fenced_block, &c);
    /* A JSON block cut off by the end of the text was the answer: an earlier
     * bare value (a draft, an example) must not stand in for it. */
    if (!c.done && !c.nomem && c.trunc_start == NO_MATCH)
        scan_range(&c, lo, len, 1);
    int rc = 0;
    if (c.done) {
        rc = 0;
    } else if (c.deferred.value && !c.nomem) {
        *res = c.deferred;
        memset(&c.deferred, 0, sizeof(c.deferred));
    } else if (c.fallback.value && !c.nomem) {
        *res = c.fallback;
        memset(&c.fallback, 0, sizeof(c.fallback));
    } else {
        rc = not_found(&c, c.want, err);
    }
    ctx_finish(&c);
    return rc;
}

int ar_json_extract_all(const char *text, size_t len, const struct ar_extract_options *opt,
                        ar_extract_each_fn *fn, void *arg, struct ar_error *err)
{
    struct ctx c;
    ctx_init(&c, text, len, opt);
    c.accept = NULL;
    c.each = fn;
    c.each_arg = arg;
    scan_range(&c, bom_len(text, len), len, 1);
    int rc = c.count && !c.nomem ? (c.count > INT_MAX ? INT_MAX : (int)c.count)
                                 : not_found(&c, c.want, err);
    ctx_finish(&c);
    return rc;
}
