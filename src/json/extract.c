/* Finding the JSON value in model text (see extract.h for the rules). */
#include "json/extract.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/bytes.h"
#include "json/markdown.h"
#include "json/repair.h"
#include "json/scan.h"
#include "util/buf.h"

#define NO_MATCH SIZE_MAX

/* Value-like regions the search met: how many, and the two first starts. */
struct tally {
    size_t n, first, second;
};

#define TALLY_INIT            \
    {                         \
        0, NO_MATCH, NO_MATCH \
    }

struct ctx {
    const char *text;
    size_t len;
    int want; /* AR_KIND_* bits */
    unsigned flags;
    int repairing; /* the repair pass: what did not parse is repaired */
    ar_extract_accept_fn *accept;
    void *accept_arg;
    ar_extract_each_fn *each; /* all mode */
    void *each_arg;
    size_t count; /* values given in all mode */
    struct ar_json_scanner sc;
    struct ar_extract_result *res;
    int done;      /* a winner was found: what follows is only counted */
    int stop;      /* all mode was told to stop, or the answer was found unusable */
    int nomem;     /* out of memory somewhere: give up */
    int fenced;    /* scanning a fenced block now */
    int compact;   /* the candidate weighed now is its own compact text */
    int cut_block; /* a JSON block ran to the end of the text cut off */
    struct ar_extract_result fallback; /* first candidate accept rejected */
    struct ar_extract_result deferred; /* first inline array (a citation?) */
    struct tally others, inlines;      /* every value-like region met, inline arrays apart */
    struct tally broken;               /* those that were no candidate (all mode's leftovers) */
    /* The search ended at the answer, unusable: cut off by the end of the text
     * (AR_ETRUNCATED) or closed before its members (AR_ENOJSON). */
    int final_code;
    size_t final_at;
    char final_msg[200];
    char first_error[200]; /* why the first failed candidate failed */
    size_t horizon;        /* repair pass: no repair starts before this offset */
    int sloppy_cut;        /* the last repair failed on sloppy JSON cut off by the end */
    struct ar_buf rbuf;
};

static void tally_add(struct tally *t, size_t at)
{
    t->n++;
    if (at < t->first) {
        t->second = t->first;
        t->first = at;
    } else if (at < t->second) {
        t->second = at;
    }
}

static int kind_of(char c)
{
    return c == '{' ? AR_KIND_OBJECT : AR_KIND_ARRAY;
}

static int text_only(const struct ctx *c)
{
    return (c->flags & AR_EXTRACT_TEXT_ONLY) != 0;
}

static void first_error(struct ctx *c, const char *fmt, ...) AR_PRINTF(2, 3);

static void first_error(struct ctx *c, const char *fmt, ...)
{
    if (c->first_error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->first_error, sizeof(c->first_error), fmt, ap);
    va_end(ap);
}

/* 1 when the array at `start` shares its line with prose before it: inline,
 * there it is a citation ("as in [1]") more likely than the answer. After a
 * value's closing bracket ("{...}[1, 2]") it is a value like any other. */
static int inline_array(const struct ctx *c, size_t start, int fenced)
{
    if (c->text[start] != '[' || fenced)
        return 0;
    for (size_t i = start; i > 0; i--) {
        char ch = c->text[i - 1];
        if (ch == '\n')
            return 0;
        if (ch != ' ' && ch != '\t' && ch != '\r')
            return ch != '}' && ch != ']';
    }
    return 0;
}

/* Counts a value-like region met at `start`. */
static void met(struct ctx *c, size_t start)
{
    tally_add(inline_array(c, start, c->fenced) ? &c->inlines : &c->others, start);
}

/* Counts a value of a kind not wanted met in a JSON block: what such a block holds is
 * declared JSON, and leaving it out unsaid would hide an answer (one that needed
 * repair, say). Between fences such a value is prose (a citation) and is not counted. */
static void met_in_block(struct ctx *c, size_t start);

/* Counts a value-like region that is no candidate (broken, cut off). */
static void met_broken(struct ctx *c, size_t start)
{
    if (!c->repairing)
        met(c, start);
    tally_add(&c->broken, start);
}

static void met_in_block(struct ctx *c, size_t start)
{
    if (c->fenced && !c->repairing)
        met_broken(c, start);
}

static void set_result(struct ctx *c, struct ar_extract_result *r, struct ar_json_doc *doc,
                       size_t start, size_t end, unsigned fixes, int ok,
                       struct ar_extract_note members)
{
    memset(r, 0, sizeof(*r));
    r->doc = *doc;
    memset(doc, 0, sizeof(*doc));
    r->value = r->doc.value;
    r->start = start;
    r->end = end;
    r->fixes = fixes;
    r->accepted = ok;
    r->fenced = c->fenced;
    r->compact = c->compact;
    r->members = members;
}

/*
 * Weighs a candidate of the wanted kind at [start, end): `doc` (taken) holds
 * its text and value, or is empty in text-only mode for the text's own bytes.
 */
static void consider(struct ctx *c, struct ar_json_doc *doc, size_t start, size_t end,
                     unsigned fixes, struct ar_extract_note members)
{
    if (c->done || c->stop) { /* counted, and that is all */
        ar_json_doc_finish(doc);
        return;
    }
    if (c->each) {
        c->count++;
        if (c->each(doc, start, end, fixes, c->each_arg))
            c->stop = 1;
        ar_json_doc_finish(doc);
        return;
    }
    int ok = !c->accept || c->accept(doc, c->accept_arg);
    struct ar_extract_result *slot = c->res;
    if (ok && inline_array(c, start, c->fenced)) /* waits: a later candidate of its own wins */
        slot = c->deferred.end ? NULL : &c->deferred;
    else if (!ok)
        slot = c->fallback.end ? NULL : &c->fallback;
    else
        c->done = 1;
    if (slot)
        set_result(c, slot, doc, start, end, fixes, ok, members);
    else
        ar_json_doc_finish(doc);
}

/* A value that parses as it is, of the wanted kind, at [p, stop). */
static void offer_valid(struct ctx *c, size_t p, size_t stop)
{
    static const struct ar_extract_note none = { 0, 0 };
    met(c, p);
    if (c->done || c->stop)
        return;
    struct ar_json_doc doc = AR_JSON_DOC_INIT;
    if (!text_only(c) && ar_json_doc_from_valid(&doc, c->text + p, stop - p, 1) < 0) {
        c->nomem = 1;
        return;
    }
    c->compact = !c->sc.spaced;
    consider(c, &doc, p, stop, 0, none);
    c->compact = 0;
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

/* The first byte of text[from, to) that is not whitespace or a closing
 * bracket, or NO_MATCH: what a repair that stopped at `from` would leave out
 * of a value that reaches `to`. */
static size_t left_out(const struct ctx *c, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (!is_sp((unsigned char)c->text[i]) && c->text[i] != '}' && c->text[i] != ']')
            return i;
    return NO_MATCH;
}

enum repaired { GAVE_NOTHING, GAVE_OTHER_KIND, GAVE_VALUE };

/*
 * Repairs the value at p (its bytes run at most to hi) and, when it is of the
 * wanted kind, weighs it. `extent`: where the strict reading says the value
 * ends (NO_MATCH: unknown); a repair that stops short of it leaving more than
 * closers out would drop data, and is refused. A value is closed (the
 * truncation fix) only when the text is a prefix of JSON with some content:
 * prose such as "use { carefully." is not cut-off JSON. `count`: the region
 * was not met before. *endp is where the repair stopped.
 */
/* 1 when an object reopened at `key` to take the members after its close is
 * a prefix of JSON up to hi: `{` and the members, scanned strictly. */
static int reopened_prefix(struct ctx *c, size_t key, size_t hi)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t stop;
    int ok = ar_buf_putc(&b, '{') == 0 && ar_buf_append(&b, c->text + key, hi - key) == 0;
    int rc = ok ? ar_json_scan(&c->sc, b.data, 0, b.len, &stop) : AR_SCAN_NOMEM;
    ar_buf_finish(&b);
    if (rc == AR_SCAN_NOMEM)
        c->nomem = 1;
    return rc == AR_SCAN_EOF;
}

static enum repaired offer_repaired(struct ctx *c, size_t p, size_t hi, size_t extent, int count,
                                    size_t *endp)
{
    unsigned fixes = 0;
    struct ar_json_repair_info info;
    ar_buf_reset(&c->rbuf);
    int rc = ar_json_repair_value(c->text + p, hi - p, &c->rbuf, &fixes, &info, NULL);
    *endp = p + (info.consumed ? info.consumed : 1);
    if (rc == AR_ENOMEM)
        c->nomem = 1;
    if (rc < 0 || !fixes)
        return GAVE_NOTHING;
    if (fixes & AR_FIX_TRUNCATION) {
        size_t stop;
        int src = ar_json_scan(&c->sc, c->text, p, hi, &stop);
        if (src == AR_SCAN_NOMEM)
            c->nomem = 1;
        /* Members after an early close that run to the end: the object with
         * them is what must be a prefix. */
        if (src == AR_SCAN_COMPLETE && (fixes & AR_FIX_MEMBERS_AFTER_CLOSE) && info.members &&
            reopened_prefix(c, p + info.members_at, hi))
            src = AR_SCAN_EOF;
        if (src != AR_SCAN_EOF || !has_content(c->text + p, hi - p)) {
            /* Sloppy JSON cut off ({'a': 1, 'b': [1, 2) is truncated, not prose:
             * nothing inside it may stand in for it. */
            c->sloppy_cut = src == AR_SCAN_FAIL && hi == c->len && has_key(c->text + p, hi - p);
            return GAVE_NOTHING;
        }
    }
    size_t drop = extent != NO_MATCH && *endp < extent ? left_out(c, *endp, extent) : NO_MATCH;
    if (drop != NO_MATCH) {
        first_error(c,
                    "JSON at byte %zu: repairing its brackets would drop what follows at byte %zu",
                    p, drop);
        return GAVE_NOTHING;
    }
    /* The repair must give one whole value that parses. */
    const char *r = ar_buf_cstr(&c->rbuf);
    size_t s0 = ar_json_skip_ws(r, 0, c->rbuf.len), stop = s0;
    int src = s0 < c->rbuf.len ? ar_json_scan(&c->sc, r, s0, c->rbuf.len, &stop) : AR_SCAN_EOF;
    if (src == AR_SCAN_NOMEM)
        c->nomem = 1;
    if (src != AR_SCAN_COMPLETE || ar_json_skip_ws(r, stop, c->rbuf.len) != c->rbuf.len) {
        if (src == AR_SCAN_FAIL || src == AR_SCAN_INVALID)
            first_error(c, "JSON at byte %zu does not parse after repair: %s", p, c->sc.why);
        return GAVE_NOTHING;
    }
    if (extent != NO_MATCH && *endp < extent)
        *endp = extent;
    if (!(kind_of(r[s0]) & c->want))
        return GAVE_OTHER_KIND;
    if (count)
        met(c, p);
    if (c->done || c->stop)
        return GAVE_VALUE; /* counted, and that is all */
    struct ar_json_doc doc;
    if (ar_json_doc_from_valid(&doc, r + s0, stop - s0, !text_only(c)) < 0) {
        c->nomem = 1;
        return GAVE_NOTHING;
    }
    struct ar_extract_note members = { info.members, p + info.members_at };
    consider(c, &doc, p, *endp, fixes, members);
    return GAVE_VALUE;
}

/*
 * An object at [p, stop) that parses as it is, followed by members at `key`:
 * it closed early. Merged with repair; without, the answer is an error when
 * it would have been the answer. Returns where scanning goes on.
 */
static size_t closed_early(struct ctx *c, size_t p, size_t stop, size_t key, size_t hi)
{
    c->sc.depth = 0;
    if (ar_json_scanner_open(&c->sc, AR_KIND_OBJECT) < 0) {
        c->nomem = 1;
        return hi;
    }
    size_t extent = ar_json_broken_end(&c->sc, c->text, key, hi), end = extent;
    if (extent == NO_MATCH) {
        c->nomem = 1;
        return hi;
    }
    if (c->repairing)
        return extent; /* weighed in the strict pass */
    if (!c->done && !c->stop && (c->flags & AR_EXTRACT_REPAIR) &&
        offer_repaired(c, p, hi, extent, 1, &end) == GAVE_VALUE)
        return end > extent ? end : extent;
    met_broken(c, p);
    if (c->done || c->stop || c->each || c->nomem)
        return extent;
    c->final_code = AR_ENOJSON;
    c->final_at = p;
    snprintf(c->final_msg, sizeof(c->final_msg),
             "the JSON object at byte %zu closes at byte %zu, before its members at byte %zu%s", p,
             stop - 1, key, c->flags & AR_EXTRACT_REPAIR ? " (they could not be merged)" : "");
    c->stop = 1;
    return extent;
}

/* The next '{' or '[' at or after i, or hi: one pass over long prose, the
 * hit remembered while i has not passed it. */
static size_t find_next(const struct ctx *c, size_t *next, size_t i, size_t hi)
{
    if (*next == NO_MATCH || *next < i)
        *next = ar_bytes_find2((const unsigned char *)c->text, i, hi, '{', '[');
    return *next;
}

/*
 * The one reading of the text (extract.h): the contents of the JSON blocks,
 * and the text between them. A value lies in one of these regions, never
 * across a fence, so the answer, the count of the others and the all mode
 * all see the same values. The fenced pass reads the blocks, the bare scan
 * the gaps; the first few blocks are kept so that the text is walked once,
 * past those the bare scan walks on by itself.
 */
#define KEPT_BLOCKS 16

struct blocks {
    struct ar_md_walk walk;
    struct ar_md_block b;
    int have;
    struct ar_md_block kept[KEPT_BLOCKS];
    size_t nkept, next; /* kept, and the next kept one the bare scan uses */
    size_t resume;      /* where the walk goes on after the last kept block */
    int replay;         /* the bare scan: the kept blocks first */
};

static void next_json_block(const struct ctx *c, struct blocks *k)
{
    if (k->replay && k->next < k->nkept) {
        k->b = k->kept[k->next++];
        k->have = 1;
        return;
    }
    while ((k->have = ar_md_block_next(c->text, c->len, &k->walk, &k->b)) &&
           !ar_md_block_is_json(&k->b, c->text))
        ;
    if (k->have && !k->replay && k->nkept < KEPT_BLOCKS) {
        k->kept[k->nkept++] = k->b;
        k->resume = k->walk.at;
    }
}

/* Where the gap before block b ends: the start of its opening fence line. */
static size_t gap_end(const struct ctx *c, const struct ar_md_block *b, size_t from)
{
    size_t i = b->info_start;
    while (i > from && c->text[i - 1] != '\n')
        i--;
    return i;
}
/* Cut off by the end of the text (or of its block) at p, in the strict pass. */
static void cut_off(struct ctx *c, size_t p, size_t hi, int at_end, int counts)
{
    if (counts && has_content(c->text + p, hi - p))
        met_broken(c, p);
    if (c->done || c->final_code)
        return;
    if (at_end) {
        c->final_code = AR_ETRUNCATED;
        c->final_at = p;
        c->cut_block = c->fenced;
    } else {
        first_error(c, "JSON at byte %zu is cut off by %s at byte %zu", p,
                    c->fenced ? "the end of its code block" : "a code fence", hi);
    }
}

/* Scans text[lo, hi) for candidates. `at_end`: hi is the end of the text, so a
 * value open at hi was truncated (rather than cut by a closing fence). */
static void scan_range(struct ctx *c, size_t lo, size_t hi, int at_end)
{
    size_t f = NO_MATCH, i = lo, end;
    c->horizon = lo;
    while (i < hi && !c->stop && !c->nomem) {
        size_t p = find_next(c, &f, i, hi);
        if (p >= hi)
            break;
        size_t stop;
        int rc = ar_json_scan(&c->sc, c->text, p, hi, &stop);
        int wanted = (kind_of(c->text[p]) & c->want) != 0;
        if (rc == AR_SCAN_NOMEM) {
            c->nomem = 1;
            return;
        }
        if (rc == AR_SCAN_COMPLETE) {
            size_t key = NO_MATCH;
            if (wanted && c->text[p] == '{')
                key = ar_json_members_follow(c->text, stop, hi);
            if (key != NO_MATCH) {
                i = closed_early(c, p, stop, key, hi);
                continue;
            }
            if (wanted && !c->repairing)
                offer_valid(c, p, stop);
            i = stop;
            continue;
        }
        if (rc == AR_SCAN_INVALID) { /* a string that is not UTF-8, too deep… */
            if (!wanted) {
                met_in_block(c, p);
            } else if (!c->repairing) {
                met_broken(c, p);
                first_error(c, "JSON at byte %zu does not parse: %s at byte %zu", p, c->sc.why,
                            c->sc.why_at);
            } else if (p >= c->horizon &&
                       offer_repaired(c, p, stop, NO_MATCH, 0, &end) != GAVE_VALUE) {
                met_broken(c, p);
            }
            i = stop;
            continue;
        }
        if (rc == AR_SCAN_EOF) {
            if (!wanted && !c->sc.saw_want) {
                met_in_block(c, p);
                return; /* everything after p is part of a value of another kind */
            }
            if (!c->repairing) {
                cut_off(c, p, hi, at_end, 1);
                return; /* everything after p is part of the cut-off value */
            }
            if (p < c->horizon || offer_repaired(c, p, hi, NO_MATCH, 0, &end) == GAVE_NOTHING)
                cut_off(c, p, hi, at_end, 1);
            return;
        }
        /* AR_SCAN_FAIL: not JSON from p. */
        size_t inside = ar_json_skip_ws(c->text, p + 1, hi);
        if (stop == inside) {
            /* A bracket whose first token is not JSON: prose ("{placeholder}",
             * "[see below]"), or sloppy JSON that repair can read ({'a': 1}). */
            if (c->repairing && p >= c->horizon) {
                c->sloppy_cut = 0;
                enum repaired got = offer_repaired(c, p, hi, NO_MATCH, 1, &end);
                c->horizon = end;
                if (got != GAVE_NOTHING) {
                    i = end;
                    continue;
                }
                if (c->sloppy_cut) {
                    cut_off(c, p, hi, 1, 0);
                    return;
                }
            }
            i = stop;
            continue;
        }
        /* A value that began as JSON and broke: nothing inside it is the answer
         * (a fragment of a broken value would be a plausible wrong one). */
        size_t extent = ar_json_broken_end(&c->sc, c->text, stop, hi);
        if (extent == NO_MATCH) {
            c->nomem = 1;
            return;
        }
        if (!wanted && !c->sc.saw_want) {
            met_in_block(c, p);
            i = extent;
            continue;
        }
        if (!c->repairing) {
            met_broken(c, p);
            first_error(c, "JSON at byte %zu is broken at byte %zu: %s", p, stop, c->sc.why);
        } else if (p >= c->horizon) {
            c->sloppy_cut = 0;
            enum repaired got = offer_repaired(c, p, hi, extent, 0, &end);
            c->horizon = end > extent ? end : extent;
            if (got == GAVE_NOTHING && c->sloppy_cut) {
                cut_off(c, p, hi, 1, 0);
                return;
            }
            if (got == GAVE_NOTHING)
                met_broken(c, p);
        }
        i = extent > stop ? extent : stop + 1;
    }
}

/* The fenced pass reads the JSON blocks, the bare scan the gaps between
 * them (all mode: both, in document order). */
static void search(struct ctx *c)
{
    size_t at = c->len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    struct blocks k;
    memset(&k, 0, sizeof(k));
    if (!c->each) {
        for (next_json_block(c, &k); k.have && !c->stop && !c->nomem; next_json_block(c, &k)) {
            c->fenced = 1;
            scan_range(c, k.b.start, k.b.end, !k.b.closed);
            c->fenced = 0;
        }
        /* A JSON block cut off by the end of the text was the answer: an earlier
         * bare value (a draft, an example) must not stand in for it. */
        if (c->stop || c->nomem || (c->cut_block && !c->done))
            return;
        /* The gaps: the blocks kept first, then a walk from the first one not kept. */
        k.replay = 1;
        k.walk.at = k.nkept == KEPT_BLOCKS ? k.resume : c->len; /* beyond them, more? */
    }
    for (next_json_block(c, &k); k.have && !c->stop && !c->nomem; next_json_block(c, &k)) {
        size_t end = gap_end(c, &k.b, at);
        if (at < end)
            scan_range(c, at, end, 0);
        if (c->each && !c->stop && !c->nomem) {
            c->fenced = 1;
            scan_range(c, k.b.start, k.b.end, !k.b.closed);
            c->fenced = 0;
        }
        at = k.b.end;
    }
    if (!c->stop && !c->nomem)
        scan_range(c, at, c->len, 1);
}

static const char *want_name(int want)
{
    return want == AR_KIND_ARRAY                      ? "array"
           : want == (AR_KIND_OBJECT | AR_KIND_ARRAY) ? "value"
                                                      : "object";
}

static void ctx_init(struct ctx *c, const char *text, size_t len,
                     const struct ar_extract_options *opt)
{
    static const struct ar_extract_options defaults = AR_EXTRACT_OPTIONS_INIT;
    static const struct tally empty = TALLY_INIT;
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
    if (c->accept) /* it reads the value */
        c->flags &= ~(unsigned)AR_EXTRACT_TEXT_ONLY;
    c->others = c->inlines = c->broken = empty;
    ar_json_scanner_init(&c->sc, c->want, 0);
    ar_buf_init(&c->rbuf, AR_BUF_UNLIMITED);
}

/* Both passes: strictly, then (when nothing was found that way) with repair. */
static void run(struct ctx *c)
{
    search(c);
    if (!c->done && !c->stop && !c->nomem && (c->flags & AR_EXTRACT_REPAIR) &&
        !(c->each && c->count)) {
        /* Why repair failed says more than why the strict reading did. */
        char strict_error[sizeof(c->first_error)];
        memcpy(strict_error, c->first_error, sizeof(strict_error));
        c->first_error[0] = '\0';
        c->repairing = 1;
        c->broken.n = 0;
        c->broken.first = c->broken.second = NO_MATCH;
        search(c);
        if (!c->first_error[0])
            memcpy(c->first_error, strict_error, sizeof(strict_error));
    }
}

static void ctx_finish(struct ctx *c)
{
    ar_json_scanner_finish(&c->sc);
    ar_buf_finish(&c->rbuf);
    ar_extract_result_finish(&c->fallback);
    ar_extract_result_finish(&c->deferred);
}

/* The error when nothing was found. */
static int not_found(struct ctx *c, struct ar_error *err)
{
    char where[32];
    if (c->nomem)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    snprintf(where, sizeof(where), "byte %zu", c->final_at);
    if (c->final_code == AR_ETRUNCATED)
        return ar_error_set(err, AR_ETRUNCATED, where, "JSON truncated at byte %zu", c->len);
    if (c->final_code)
        return ar_error_set(err, c->final_code, where, "%s", c->final_msg);
    if (c->first_error[0])
        return ar_error_set(err, AR_ENOJSON, NULL, "no JSON %s found (%s)", want_name(c->want),
                            c->first_error);
    /* Nothing at all is not the same mistake as text without JSON: an empty pipe upstream. */
    size_t blank = 0;
    while (blank < c->len && strchr(" \t\r\n", c->text[blank]) && c->text[blank])
        blank++;
    if (blank == c->len)
        return ar_error_set(err, AR_ENOJSON, NULL, "no JSON %s found: the input is %s",
                            want_name(c->want), c->len ? "blank (only white space)" : "empty");
    return ar_error_set(err, AR_ENOJSON, NULL, "no JSON %s found", want_name(c->want));
}

/* Names the other values met besides the answer (extract.h, "Never silent"). */
static void name_the_others(const struct ctx *c, struct ar_extract_result *r)
{
    int inl = inline_array(c, r->start, r->fenced);
    struct tally t = inl ? c->inlines : c->others;
    if (t.n) { /* the answer was counted where it was met */
        t.n--;
        if (t.first == r->start)
            t.first = t.second;
    }
    if (inl) { /* the answer is itself a citation-like array: everything else counts */
        t.n += c->others.n;
        if (c->others.first < t.first)
            t.first = c->others.first;
    }
    /* The one rule for the text right after the answer (ar_json_value_follows()): a value
     * that belongs with it is named, even one the search does not count (a string, a
     * number, a value of a kind not wanted, an array after a comma, which reads like a
     * citation). Only the answer's tail is read, once: the search's own loop is untouched. */
    size_t v = ar_json_value_follows(c->text, r->end, c->len);
    if (v != NO_MATCH) {
        /* Counted already: a value of the wanted kind the strict reading went on to right
         * after a strict answer (a citation-like one only where the answer is one too), or
         * one the tally holds. A repaired answer was read apart from the strict reading,
         * which may have seen v inside something else. */
        char ch = c->text[v];
        int wanted = (ch == '{' || ch == '[') && (kind_of(ch) & c->want);
        int strict = !(r->fixes & ~(unsigned)AR_FIX_NOTES);
        int counted = (wanted && strict && (inl || !inline_array(c, v, r->fenced))) ||
                      v == c->others.first || v == c->others.second ||
                      (inl && (v == c->inlines.first || v == c->inlines.second));
        if (!counted) {
            t.n++;
            if (v < t.first)
                t.first = v;
        }
    }
    if (t.n) {
        r->fixes |= AR_FIX_EXTRA_VALUES;
        r->extra.count = t.n;
        r->extra.at = t.first;
    }
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
    run(&c);
    int rc = 0;
    if (c.nomem) {
        ar_extract_result_finish(res);
        rc = not_found(&c, err);
    } else if (c.done) {
        name_the_others(&c, res);
    } else if (c.fallback.end) {
        *res = c.fallback;
        memset(&c.fallback, 0, sizeof(c.fallback));
        name_the_others(&c, res);
    } else if (!c.final_code && c.deferred.end) {
        *res = c.deferred;
        memset(&c.deferred, 0, sizeof(c.deferred));
        name_the_others(&c, res);
    } else {
        rc = not_found(&c, err);
    }
    ctx_finish(&c);
    return rc;
}

int ar_json_extract_all(const char *text, size_t len, const struct ar_extract_options *opt,
                        ar_extract_each_fn *fn, void *arg, struct ar_extract_note *left,
                        struct ar_error *err)
{
    struct ctx c;
    ctx_init(&c, text, len, opt);
    c.accept = NULL;
    c.each = fn;
    c.each_arg = arg;
    run(&c);
    if (left) {
        left->count = c.broken.n;
        left->at = c.broken.n ? c.broken.first : 0;
    }
    int rc =
        c.count && !c.nomem ? (c.count > INT_MAX ? INT_MAX : (int)c.count) : not_found(&c, err);
    ctx_finish(&c);
    return rc;
}
