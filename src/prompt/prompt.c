/*
 * Prompt templates: parsing into segments, rendering, and the inline form
 * for free-form prompts. Loading from the override directories is in load.c.
 *
 * A template is cut once, at load time, into text, variable and section
 * segments, so every template error (a bad section, a bad contract) is found
 * before any model is called and rendering cannot fail on the template
 * itself, only on a missing value.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prompt/internal.h"
#include "util/array.h"
#include "util/sha256.h"
#include "prompt/prompt.h"

/* Sections nested deeper than this are a template error; real templates use one level. */
#define MAX_SECTION_DEPTH 16

enum seg_kind { SEG_TEXT, SEG_VAR, SEG_OPEN, SEG_CLOSE };

struct seg {
    enum seg_kind kind;
    size_t off, len; /* SEG_TEXT: the text; others: the variable name */
    unsigned line;   /* 1-based line of the tag */
    size_t match;    /* SEG_OPEN: index of its SEG_CLOSE */
};

struct ar_prompt {
    char *name;
    char *origin;
    enum ar_prompt_source source;
    char *text;
    size_t len;
    struct seg *segs;
    size_t nsegs, cap;
    struct ar_contract *contract;
    size_t contract_off, contract_len; /* the JSON between the fences */
    size_t lead; /* every rendering starts with text[0, lead): the contract's own part */
    char *description;
};

/* ------------------------------------------------------------- accessors */

const char *ar_prompt_name(const struct ar_prompt *p)
{
    return p->name;
}

const char *ar_prompt_origin(const struct ar_prompt *p)
{
    return p->origin;
}

enum ar_prompt_source ar_prompt_source(const struct ar_prompt *p)
{
    return p->source;
}

const char *ar_prompt_source_name(enum ar_prompt_source s)
{
    switch (s) {
    case AR_PROMPT_EMBEDDED:
        return "embedded";
    case AR_PROMPT_DIR:
        return "prompts-dir";
    case AR_PROMPT_CONFIG:
        return "user-config";
    case AR_PROMPT_TEXT:
        return "text";
    case AR_PROMPT_INLINE:
        return "inline";
    }
    return "unknown";
}

const char *ar_prompt_text(const struct ar_prompt *p, size_t *len)
{
    if (len)
        *len = p->len;
    return p->text;
}

const char *ar_prompt_description(const struct ar_prompt *p)
{
    return p->description;
}

const struct ar_contract *ar_prompt_contract(const struct ar_prompt *p)
{
    return p->contract;
}

const char *ar_prompt_contract_text(const struct ar_prompt *p, size_t *len)
{
    *len = p->contract ? p->contract_len : 0;
    return p->contract ? p->text + p->contract_off : NULL;
}

size_t ar_prompt_contract_lead(const struct ar_prompt *p)
{
    return p->lead;
}

void ar_prompt_destroy(struct ar_prompt *p)
{
    if (!p)
        return;
    ar_contract_destroy(p->contract);
    free(p->segs);
    free(p->text);
    free(p->origin);
    free(p->name);
    free(p->description);
    free(p);
}

void ar_prompt_set_source(struct ar_prompt *p, enum ar_prompt_source s)
{
    p->source = s;
}

/* --------------------------------------------------------------- parsing */

static int push_seg(struct ar_prompt *p, enum seg_kind kind, size_t off, size_t len, unsigned line)
{
    if (kind == SEG_TEXT && len == 0)
        return 0;
    if (ar_array_reserve(&p->segs, &p->cap, p->nsegs + 1, sizeof(*p->segs), 16) < 0)
        return AR_ENOMEM;
    p->segs[p->nsegs++] = (struct seg){ kind, off, len, line, 0 };
    return 0;
}

static int tpl_error(struct ar_error *err, const struct ar_prompt *p, unsigned line,
                     const char *fmt, ...) AR_PRINTF(4, 5);

static int tpl_error(struct ar_error *err, const struct ar_prompt *p, unsigned line,
                     const char *fmt, ...)
{
    char where[sizeof(err->where)], msg[sizeof(err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line)
        snprintf(where, sizeof(where), "%s:%u", p->origin, line);
    else
        snprintf(where, sizeof(where), "%s", p->origin);
    return ar_error_set(err, AR_EUSAGE, where, "%s", msg);
}

struct line_cursor {
    const char *text;
    size_t pos;
    unsigned line;
};

/* The 1-based line of offset `off`; offsets must not decrease between calls. */
static unsigned line_at(struct line_cursor *lc, size_t off)
{
    for (; lc->pos < off; lc->pos++)
        if (lc->text[lc->pos] == '\n')
            lc->line++;
    return lc->line;
}

struct fence {
    size_t open_line_start; /* offset of the opening fence line */
    size_t content;         /* offset of the first byte after the opening line */
    size_t content_end;     /* offset of the closing fence line */
    size_t end;             /* offset after the closing fence line */
    unsigned line;          /* line of the opening fence */
};

/* Length of a fence run (>= 3 '`' or '~' after at most 3 spaces) at line start s, else 0. */
static size_t fence_run(const char *s, const char *end, char *ch, const char **after)
{
    const char *q = s;
    while (q < end && q - s < 3 && *q == ' ')
        q++;
    if (q >= end || (*q != '`' && *q != '~'))
        return 0;
    const char *r = q;
    while (r < end && *r == *q)
        r++;
    if (r - q < 3)
        return 0;
    *ch = *q;
    *after = r;
    return (size_t)(r - q);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/*
 * Finds the json-schema block. Fences are tracked as CommonMark does, so a
 * json-schema block shown inside another code block is not the contract.
 * Returns 1 when found (*f set), 0 when absent, or a template error.
 */
static int find_contract(struct ar_prompt *p, struct fence *f, struct ar_error *err)
{
    const char *t = p->text, *end = t + p->len;
    int found = 0;
    int in_fence = 0, is_contract = 0;
    char fch = 0;
    size_t flen = 0;
    struct fence cur = { 0 };
    unsigned line = 1;
    for (const char *s = t; s < end; line++) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        const char *next = eol ? eol + 1 : end;
        if (!eol)
            eol = end;
        char ch;
        const char *after;
        size_t run = fence_run(s, eol, &ch, &after);
        if (!in_fence && run) {
            const char *info = after;
            while (info < eol && is_blank(*info))
                info++;
            const char *info_end = info;
            while (info_end < eol && !isspace((unsigned char)*info_end))
                info_end++;
            if (ch == '`' && memchr(after, '`', (size_t)(eol - after))) {
                s = next; /* an inline code span, not a fence */
                continue;
            }
            in_fence = 1;
            fch = ch;
            flen = run;
            is_contract = info_end - info == 11 && strncasecmp(info, "json-schema", 11) == 0;
            cur = (struct fence){ (size_t)(s - t), (size_t)(next - t), 0, 0, line };
        } else if (in_fence && run && ch == fch && run >= flen) {
            const char *rest = after;
            while (rest < eol && is_blank(*rest))
                rest++;
            if (rest == eol) {
                in_fence = 0;
                if (is_contract) {
                    if (found)
                        return tpl_error(err, p, cur.line,
                                         "a second json-schema block (the first is at line %u); "
                                         "a template has one contract",
                                         f->line);
                    cur.content_end = (size_t)(s - t);
                    cur.end = (size_t)(next - t);
                    *f = cur;
                    found = 1;
                }
            }
        }
        s = next;
    }
    if (in_fence && is_contract)
        return tpl_error(err, p, cur.line, "the json-schema block is never closed");
    return found;
}

/* The line of the first `"kw"` followed by ':' in the block, or the fence line. */
static unsigned keyword_line(const struct ar_prompt *p, const struct fence *f, const char *kw)
{
    size_t kwlen = strlen(kw);
    const char *s = p->text + f->content, *end = p->text + f->content_end;
    unsigned line = f->line + 1;
    for (; s + kwlen + 2 <= end; s++) {
        if (*s == '\n')
            line++;
        if (*s != '"' || memcmp(s + 1, kw, kwlen) != 0 || s[kwlen + 1] != '"')
            continue;
        const char *q = s + kwlen + 2;
        while (q < end && isspace((unsigned char)*q))
            q++;
        if (q < end && *q == ':')
            return line;
    }
    return f->line;
}

/* The last reference token of a JSON Pointer, unescaped, into dst. */
static void pointer_last(const char *ptr, char *dst, size_t n)
{
    const char *slash = strrchr(ptr, '/');
    const char *s = slash ? slash + 1 : ptr;
    size_t o = 0;
    for (; *s && o + 1 < n; s++) {
        if (s[0] == '~' && (s[1] == '0' || s[1] == '1')) {
            dst[o++] = s[1] == '0' ? '~' : '/';
            s++;
        } else {
            dst[o++] = *s;
        }
    }
    dst[o] = '\0';
}

static int load_contract(struct ar_prompt *p, const struct fence *f, struct ar_error *err)
{
    json_error_t jerr;
    p->contract_off = f->content;
    p->contract_len = f->content_end - f->content;
    json_t *schema = json_loadb(p->text + p->contract_off, p->contract_len,
                                JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!schema)
        return tpl_error(err, p, f->line + (unsigned)(jerr.line > 0 ? jerr.line : 1),
                         "invalid JSON in the json-schema block (column %d): %s", jerr.column,
                         jerr.text);
    struct ar_error cerr = AR_ERROR_INIT;
    json_decref(schema);
    /* From the text: the contract keeps every number as the template spells it. */
    int rc = ar_contract_parse(p->text + p->contract_off, p->contract_len, &p->contract, &cerr);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, p->origin, "out of memory");
    if (rc) {
        char kw[64];
        pointer_last(cerr.where, kw, sizeof(kw));
        return tpl_error(err, p, kw[0] ? keyword_line(p, f, kw) : f->line, "%s", cerr.msg);
    }
    return 0;
}

static int is_name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/*
 * Recognizes a tag at t[i] ("{{"): {{ name }}, {{#name}}, {{/name}}, spaces
 * and tabs allowed inside the braces. Anything else is literal text, so a
 * "{{" in prose or code needs no escaping.
 */
static int parse_tag(const char *t, size_t i, size_t lim, enum seg_kind *kind, size_t *name_off,
                     size_t *name_len, size_t *tag_end)
{
    size_t j = i + 2;
    while (j < lim && (t[j] == ' ' || t[j] == '\t'))
        j++;
    *kind = SEG_VAR;
    if (j < lim && (t[j] == '#' || t[j] == '/')) {
        *kind = t[j] == '#' ? SEG_OPEN : SEG_CLOSE;
        j++;
        while (j < lim && (t[j] == ' ' || t[j] == '\t'))
            j++;
    }
    if (j >= lim || !is_name_start(t[j]))
        return 0;
    *name_off = j;
    while (j < lim && is_name_char(t[j]))
        j++;
    *name_len = j - *name_off;
    while (j < lim && (t[j] == ' ' || t[j] == '\t'))
        j++;
    if (j + 1 >= lim || t[j] != '}' || t[j + 1] != '}')
        return 0;
    *tag_end = j + 2;
    return 1;
}

/*
 * A section tag alone on its line takes the whole line with it, so an
 * optional block leaves no blank lines behind whether it renders or not.
 * Sets *from / *to to the line's bounds when the tag is standalone.
 */
static int standalone(const char *t, size_t lim, size_t tag, size_t tag_end, size_t *from,
                      size_t *to)
{
    size_t a = tag;
    while (a > 0 && (t[a - 1] == ' ' || t[a - 1] == '\t'))
        a--;
    if (a > 0 && t[a - 1] != '\n')
        return 0;
    size_t b = tag_end;
    while (b < lim && is_blank(t[b]))
        b++;
    if (b < lim && t[b] != '\n')
        return 0;
    *from = a;
    *to = b < lim ? b + 1 : b;
    return 1;
}

static int name_is(const struct ar_prompt *p, const struct seg *s, const char *name, size_t len)
{
    return s->len == len && memcmp(p->text + s->off, name, len) == 0;
}

/* Cuts [from, to) of the text into segments; `lc` tracks line numbers. */
static int scan_tags(struct ar_prompt *p, size_t from, size_t to, struct line_cursor *lc,
                     size_t *stack, size_t *depth, struct ar_error *err)
{
    const char *t = p->text;
    size_t text_start = from;
    for (size_t i = from; i + 1 < to; i++) {
        if (t[i] != '{' || t[i + 1] != '{')
            continue;
        enum seg_kind kind;
        size_t noff, nlen, tag_end;
        if (!parse_tag(t, i, to, &kind, &noff, &nlen, &tag_end))
            continue;
        unsigned line = line_at(lc, i);
        size_t text_end = i, next = tag_end, a, b;
        if (kind != SEG_VAR && standalone(t, to, i, tag_end, &a, &b) && a >= text_start) {
            text_end = a;
            next = b;
        }
        if (push_seg(p, SEG_TEXT, text_start, text_end - text_start, 0) ||
            push_seg(p, kind, noff, nlen, line))
            return ar_error_set(err, AR_ENOMEM, p->origin, "out of memory");
        if (kind == SEG_OPEN) {
            if (*depth == MAX_SECTION_DEPTH)
                return tpl_error(err, p, line, "sections nest deeper than %d levels",
                                 MAX_SECTION_DEPTH);
            stack[(*depth)++] = p->nsegs - 1;
        } else if (kind == SEG_CLOSE) {
            if (*depth == 0)
                return tpl_error(err, p, line, "'{{/%.*s}}' has no matching '{{#%.*s}}'", (int)nlen,
                                 t + noff, (int)nlen, t + noff);
            struct seg *open = &p->segs[stack[*depth - 1]];
            if (!name_is(p, open, t + noff, nlen))
                return tpl_error(err, p, line,
                                 "'{{/%.*s}}' closes section '%.*s' opened at line %u", (int)nlen,
                                 t + noff, (int)open->len, t + open->off, open->line);
            open->match = p->nsegs - 1;
            (*depth)--;
        }
        text_start = next;
        i = next - 1;
    }
    if (push_seg(p, SEG_TEXT, text_start, to - text_start, 0))
        return ar_error_set(err, AR_ENOMEM, p->origin, "out of memory");
    return 0;
}

static char *describe(const char *text, size_t len)
{
    const char *s = text, *end = text + len, *first = NULL, *first_end = NULL;
    while (s < end) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol)
            eol = end;
        const char *a = s, *b = eol;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        if (a < b && *a == '#') {
            while (a < b && *a == '#')
                a++;
            while (a < b && isspace((unsigned char)*a))
                a++;
            return strndup(a, (size_t)(b - a));
        }
        if (a < b && !first) {
            first = a;
            first_end = b;
        }
        s = eol + 1;
    }
    return first ? strndup(first, (size_t)(first_end - first)) : strdup("");
}

static char *base_name(const char *origin)
{
    const char *slash = strrchr(origin, '/');
    const char *b = slash ? slash + 1 : origin;
    size_t n = strlen(b);
    if (n > 3 && strcmp(b + n - 3, ".md") == 0)
        n -= 3;
    return strndup(b, n);
}

static struct ar_prompt *prompt_new(const char *origin, const char *text, size_t len)
{
    struct ar_prompt *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->origin = strdup(origin);
    p->name = base_name(origin);
    p->text = malloc(len + 1);
    p->description = describe(text, len);
    if (!p->origin || !p->name || !p->text || !p->description) {
        ar_prompt_destroy(p);
        return NULL;
    }
    memcpy(p->text, text, len);
    p->text[len] = '\0';
    p->len = len;
    return p;
}

int ar_prompt_parse(const char *origin, const char *text, size_t len, struct ar_prompt **out,
                    struct ar_error *err)
{
    *out = NULL;
    struct ar_prompt *p = prompt_new(origin, text, len);
    if (!p)
        return ar_error_set(err, AR_ENOMEM, origin, "out of memory");
    p->source = AR_PROMPT_TEXT;
    /* A template is text: a NUL (a binary file, a bad copy) would reach the CLI's stdin
     * raw, and every C string that quotes the prompt would end there. */
    const char *nul = memchr(p->text, '\0', len);
    if (nul) {
        unsigned line = 1;
        for (const char *c = p->text; c < nul; c++)
            line += *c == '\n';
        int rc = tpl_error(err, p, line, "a NUL byte: a template is text");
        ar_prompt_destroy(p);
        return rc;
    }
    struct fence f = { 0 };
    struct line_cursor lc = { p->text, 0, 1 };
    size_t stack[MAX_SECTION_DEPTH], depth = 0;
    int rc = find_contract(p, &f, err);
    if (rc < 0)
        goto fail;
    if (rc == 1) {
        /* The contract block is literal: it is shown to the model exactly as it was checked. */
        rc = load_contract(p, &f, err);
        if (rc == 0)
            rc = scan_tags(p, 0, f.open_line_start, &lc, stack, &depth, err);
        /* Only text before the block: every rendering opens with it, the blank lines after
         * the block included. */
        int only_text = 1;
        for (size_t i = 0; i < p->nsegs; i++)
            only_text &= p->segs[i].kind == SEG_TEXT;
        if (rc == 0 && only_text) {
            p->lead = f.end;
            while (p->lead < p->len &&
                   (p->text[p->lead] == '\n' || (p->text[p->lead] == '\r' && p->lead + 1 < p->len &&
                                                 p->text[p->lead + 1] == '\n')))
                p->lead++;
        }
        if (rc == 0)
            rc = push_seg(p, SEG_TEXT, f.open_line_start, f.end - f.open_line_start, 0);
        line_at(&lc, f.end);
        if (rc == 0)
            rc = scan_tags(p, f.end, p->len, &lc, stack, &depth, err);
    } else {
        rc = scan_tags(p, 0, p->len, &lc, stack, &depth, err);
    }
    if (rc)
        goto fail;
    if (depth) {
        const struct seg *open = &p->segs[stack[depth - 1]];
        rc = tpl_error(err, p, open->line, "section '%.*s' is never closed ('{{/%.*s}}' missing)",
                       (int)open->len, p->text + open->off, (int)open->len, p->text + open->off);
        goto fail;
    }
    *out = p;
    return 0;
fail:
    ar_prompt_destroy(p);
    return rc == AR_ENOMEM ? ar_error_set(err, rc, origin, "out of memory") : rc;
}

/* The longest run of `c` in s, so a generated fence can be made longer than any inside. */
static size_t longest_run(const char *s, size_t len, char c)
{
    size_t best = 0, run = 0;
    for (size_t i = 0; i < len; i++) {
        run = s[i] == c ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best;
}

/* The instruction that opens a free-form prompt with a contract; the schema follows it. */
static const char inline_instruction[] =
    "Answer with a single JSON value in a ```json code block. It must satisfy this JSON Schema; "
    "the request follows it.\n\n";

int ar_prompt_create_inline(const char *prompt, size_t len, const char *schema, size_t schema_len,
                            const char *schema_origin, struct ar_prompt **out, struct ar_error *err)
{
    *out = NULL;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t fence = 3, content = 0;
    int rc = 0;
    /* The contract first: it is the same from call to call, the request is not (a prompt
     * cache serves a common start), and a CLI that takes the schema natively is sent the
     * prompt without it (ar_prompt_contract_lead()). */
    if (schema) {
        size_t run = longest_run(schema, schema_len, '`');
        fence = run >= 3 ? run + 1 : 3;
        rc = ar_buf_puts(&b, inline_instruction);
        for (size_t i = 0; rc == 0 && i < fence; i++)
            rc = ar_buf_putc(&b, '`');
        if (rc == 0)
            rc = ar_buf_puts(&b, "json-schema\n");
        content = b.len;
        if (rc == 0)
            rc = ar_buf_append(&b, schema, schema_len);
        if (rc == 0 && (schema_len == 0 || schema[schema_len - 1] != '\n'))
            rc = ar_buf_putc(&b, '\n');
        for (size_t i = 0; rc == 0 && i < fence; i++)
            rc = ar_buf_putc(&b, '`');
        if (rc == 0)
            rc = ar_buf_puts(&b, "\n\n");
    }
    size_t lead = b.len;
    if (rc == 0)
        rc = ar_buf_append(&b, prompt, len);
    if (rc) {
        ar_buf_finish(&b);
        return ar_error_set(err, AR_ENOMEM, schema_origin, "out of memory");
    }
    struct ar_prompt *p = prompt_new("prompt", b.data ? b.data : "", b.len);
    ar_buf_finish(&b);
    if (!p || push_seg(p, SEG_TEXT, 0, p->len, 0)) {
        ar_prompt_destroy(p);
        return ar_error_set(err, AR_ENOMEM, schema_origin, "out of memory");
    }
    p->source = AR_PROMPT_INLINE;
    p->lead = lead;
    if (schema) {
        json_error_t jerr;
        p->contract_off = content;
        p->contract_len = schema_len;
        json_t *j = json_loadb(schema, schema_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (!j) {
            char where[sizeof(err->where)];
            snprintf(where, sizeof(where), "%s:%d", schema_origin, jerr.line);
            ar_prompt_destroy(p);
            return ar_error_set(err, AR_EUSAGE, where, "invalid JSON (column %d): %s", jerr.column,
                                jerr.text);
        }
        struct ar_error cerr = AR_ERROR_INIT;
        json_decref(j);
        rc = ar_contract_parse(schema, schema_len, &p->contract, &cerr);
        if (rc) {
            ar_prompt_destroy(p);
            return ar_error_set(err, rc, schema_origin, "%s", cerr.msg);
        }
    }
    *out = p;
    return 0;
}

/* ------------------------------------------------------------- rendering */

/*
 * The fence tag of one rendering ({{fence}}): 32 hex digits of SHA-256 over every
 * value of the rendering (name, length and bytes each) and a counter, the counter
 * raised until no value holds the tag. The text a template fences
 * (<diff-{{fence}}> … </diff-{{fence}}>) is written by whoever the prompt reviews
 * or routes: to close the fence early it would have to hold the hash of itself, so
 * the tag is as unpredictable to its author as a random one, and, unlike a random
 * one, the same values render the same prompt: the result cache, replay and the
 * providers' prompt caches keep working.
 */
static void fence_tag(const struct ar_prompt_var *vars, size_t nvars, char out[AR_FENCE_LEN + 1])
{
    for (uint32_t round = 0;; round++) {
        struct ar_sha256 h;
        ar_sha256_init(&h);
        ar_sha256_update(&h, "agentrun fence", 15);
        for (size_t i = 0; i < nvars; i++) {
            if (!vars[i].name || !vars[i].value)
                continue;
            uint64_t n = strlen(vars[i].value);
            ar_sha256_update(&h, vars[i].name, strlen(vars[i].name) + 1);
            ar_sha256_update(&h, &n, sizeof(n));
            ar_sha256_update(&h, vars[i].value, (size_t)n);
        }
        ar_sha256_update(&h, &round, sizeof(round));
        char hex[AR_SHA256_HEX];
        ar_sha256_hex(&h, hex);
        memcpy(out, hex, AR_FENCE_LEN);
        out[AR_FENCE_LEN] = '\0';
        int held = 0;
        for (size_t i = 0; i < nvars && !held; i++)
            held = vars[i].value && strstr(vars[i].value, out);
        if (!held)
            return;
    }
}

static const char *lookup(const struct ar_prompt *p, const struct seg *s,
                          const struct ar_prompt_var *vars, size_t nvars, const char *fence)
{
    /* The fence is the renderer's: no value given for it can choose it. */
    if (name_is(p, s, AR_FENCE_VAR, strlen(AR_FENCE_VAR)))
        return fence;
    for (size_t i = nvars; i-- > 0;)
        if (vars[i].name && name_is(p, s, vars[i].name, strlen(vars[i].name)))
            return vars[i].value;
    return NULL;
}

int ar_prompt_render_inline(const char *prompt, size_t len, const char *schema, size_t schema_len,
                            const char *schema_origin, struct ar_buf *out, struct ar_prompt **tpl,
                            struct ar_error *err)
{
    /* The inline template of an empty prompt is exactly what precedes the prompt. */
    int rc = ar_prompt_create_inline("", 0, schema, schema_len, schema_origin, tpl, err);
    if (rc)
        return rc;
    size_t head_len = 0;
    ar_prompt_text(*tpl, &head_len);
    rc = ar_buf_reserve(out, head_len + len);
    if (rc == 0)
        rc = ar_prompt_render(*tpl, NULL, 0, out, err);
    else
        ar_error_set(err, rc, NULL, "rendered prompt: %s", ar_strerror(rc));
    if (rc == 0 && (rc = ar_buf_append(out, prompt, len)) != 0)
        ar_error_set(err, rc, NULL, "rendered prompt: %s", ar_strerror(rc));
    if (rc) {
        ar_prompt_destroy(*tpl);
        *tpl = NULL;
    }
    return rc;
}

int ar_prompt_render(const struct ar_prompt *p, const struct ar_prompt_var *vars, size_t nvars,
                     struct ar_buf *out, struct ar_error *err)
{
    char fence[AR_FENCE_LEN + 1] = "";
    if (ar_prompt_uses(p, AR_FENCE_VAR))
        fence_tag(vars, nvars, fence);
    for (size_t i = 0; i < p->nsegs; i++) {
        const struct seg *s = &p->segs[i];
        const char *value;
        int rc = 0;
        switch (s->kind) {
        case SEG_TEXT:
            rc = ar_buf_append(out, p->text + s->off, s->len);
            break;
        case SEG_VAR:
            value = lookup(p, s, vars, nvars, fence);
            if (!value)
                return tpl_error(err, p, s->line,
                                 "variable '%.*s' is not set (--var %.*s=VALUE; in a batch "
                                 "line, \"vars\": {\"%.*s\": ...})",
                                 (int)s->len, p->text + s->off, (int)s->len, p->text + s->off,
                                 (int)s->len, p->text + s->off);
            rc = ar_buf_puts(out, value);
            break;
        case SEG_OPEN:
            value = lookup(p, s, vars, nvars, fence);
            if (!value || !*value)
                i = s->match;
            break;
        case SEG_CLOSE:
            break;
        }
        if (rc)
            return ar_error_set(err, rc, p->origin, "rendered prompt: %s", ar_strerror(rc));
    }
    return 0;
}

int ar_prompt_uses(const struct ar_prompt *p, const char *name)
{
    for (size_t i = 0; i < p->nsegs; i++)
        if (p->segs[i].kind != SEG_TEXT && name_is(p, &p->segs[i], name, strlen(name)))
            return 1;
    return 0;
}

int ar_prompt_variables(const struct ar_prompt *p, struct ar_strv *names)
{
    for (size_t i = 0; i < p->nsegs; i++) {
        const struct seg *s = &p->segs[i];
        if (s->kind == SEG_TEXT || s->kind == SEG_CLOSE ||
            name_is(p, s, AR_FENCE_VAR, strlen(AR_FENCE_VAR)))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = p->segs[j].kind != SEG_TEXT && p->segs[j].len == s->len &&
                   memcmp(p->text + p->segs[j].off, p->text + s->off, s->len) == 0;
        if (!seen && ar_strv_pushf(names, "%.*s", (int)s->len, p->text + s->off))
            return AR_ENOMEM;
    }
    return 0;
}
