/* Fenced code blocks and ATX sections of markdown (see markdown.h). */
#include "json/markdown.h"

#include <stdint.h>
#include <string.h>

#include "json/bytes.h"
#include "util/cpu.h"
#include <strings.h>

struct line {
    size_t start; /* first byte */
    size_t end;   /* end of content, before "\r\n" or "\n" */
    size_t next;  /* start of the next line */
};

static void line_at(const char *t, size_t len, size_t at, struct line *l)
{
    const char *nl = memchr(t + at, '\n', len - at);
    l->start = at;
    l->next = nl ? (size_t)(nl - t) + 1 : len;
    l->end = nl ? (size_t)(nl - t) : len;
    if (l->end > at && t[l->end - 1] == '\r')
        l->end--;
}

/* Up to three spaces of indentation are allowed before a fence or heading. */
static size_t skip_indent(const char *t, const struct line *l)
{
    size_t i = l->start;
    while (i < l->end && i - l->start < 3 && t[i] == ' ')
        i++;
    return i;
}

static size_t run_of(const char *t, size_t i, size_t end, char c)
{
    size_t n = 0;
    while (i + n < end && t[i + n] == c)
        n++;
    return n;
}

static int is_blank(const char *t, size_t i, size_t end)
{
    for (; i < end; i++)
        if (t[i] != ' ' && t[i] != '\t')
            return 0;
    return 1;
}

/* When the line opens a fence, sets *fc, *flen and the info string of b. */
static int fence_open(const char *t, const struct line *l, char *fc, size_t *flen,
                      struct ar_md_block *b)
{
    size_t i = skip_indent(t, l);
    if (i >= l->end || (t[i] != '`' && t[i] != '~'))
        return 0;
    size_t n = run_of(t, i, l->end, t[i]);
    if (n < 3)
        return 0;
    size_t s = i + n, e = l->end;
    /* A backtick fence's info string cannot hold a backtick (inline code). */
    if (t[i] == '`' && memchr(t + s, '`', e - s))
        return 0;
    while (s < e && (t[s] == ' ' || t[s] == '\t'))
        s++;
    while (e > s && (t[e - 1] == ' ' || t[e - 1] == '\t'))
        e--;
    *fc = t[i];
    *flen = n;
    b->info_start = s;
    b->info_len = e - s;
    size_t w = 0;
    while (w < b->info_len && t[s + w] != ' ' && t[s + w] != '\t')
        w++;
    b->lang_len = w;
    return 1;
}

static int fence_close(const char *t, const struct line *l, char fc, size_t flen)
{
    size_t i = skip_indent(t, l);
    size_t n = run_of(t, i, l->end, fc);
    return n >= flen && is_blank(t, i + n, l->end);
}

#ifdef AR_AVX2
/* The first '`' or '~' of s[i..n), or where fewer than 128 bytes are left
 * before the first: 128 bytes a test, with AVX2. */
AR_AVX2 static size_t skip_to_fence_char_avx2(const unsigned char *s, size_t i, size_t n)
{
    const __m256i tick = _mm256_set1_epi8('`'), tilde = _mm256_set1_epi8('~');
#define FENCE_CHARS(k)                                                                           \
    _mm256_or_si256(                                                                             \
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32 * (k))), \
                          tick),                                                                 \
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32 * (k))), \
                          tilde))
    for (; i + 128 <= n; i += 128) {
        __m256i m = _mm256_or_si256(_mm256_or_si256(FENCE_CHARS(0), FENCE_CHARS(1)),
                                    _mm256_or_si256(FENCE_CHARS(2), FENCE_CHARS(3)));
        if (!_mm256_testz_si256(m, m))
            break;
    }
#undef FENCE_CHARS
    return i;
}
#endif

/* The first '`' or '~' of s[i..n), or n: long prose or JSON holds none. */
static size_t find_fence_char(const unsigned char *s, size_t i, size_t n, unsigned char only)
{
    if (only) {
        const unsigned char *p = memchr(s + i, only, n - i);
        return p ? (size_t)(p - s) : n;
    }
#ifdef AR_AVX2
    if (ar_cpu_avx2())
        i = skip_to_fence_char_avx2(s, i, n);
#endif
    return ar_bytes_find2(s, i, n, '`', '~');
}

/*
 * The start of the first line at or after `from` (a line start) whose first
 * byte after at most three spaces is '`' or '~' (only '`' or only '~' when
 * `only` is one of them), or len. Only such a line can open or close a fence,
 * so the walk jumps from one fence character to the next instead of reading
 * every line.
 */
static size_t fence_line(const char *t, size_t len, size_t from, char only)
{
    const unsigned char *u = (const unsigned char *)t;
    while (from < len) {
        size_t h = find_fence_char(u, from, len, (unsigned char)only);
        if (h >= len)
            return len;
        size_t j = h;
        while (j > from && h - j < 3 && t[j - 1] == ' ')
            j--;
        if (j == from || t[j - 1] == '\n')
            return j;
        const char *nl = memchr(t + h, '\n', len - h);
        from = nl ? (size_t)(nl - t) + 1 : len;
    }
    return len;
}

int ar_md_block_next(const char *text, size_t len, struct ar_md_walk *w, struct ar_md_block *b)
{
    struct line l;
    char fc;
    size_t flen;
    size_t pos = w->at;
    for (;;) {
        pos = fence_line(text, len, pos, 0);
        if (pos >= len) {
            w->at = len;
            return 0;
        }
        line_at(text, len, pos, &l);
        pos = l.next;
        if (fence_open(text, &l, &fc, &flen, b))
            break;
    }
    b->start = pos;
    b->end = len;
    b->closed = 0;
    while ((pos = fence_line(text, len, pos, fc)) < len) {
        line_at(text, len, pos, &l);
        pos = l.next;
        if (fence_close(text, &l, fc, flen)) {
            b->end = l.start;
            b->closed = 1;
            break;
        }
    }
    w->at = b->closed ? pos : len;
    return 1;
}

int ar_md_blocks_each(const char *text, size_t len, ar_md_block_fn *fn, void *arg)
{
    struct ar_md_walk w = AR_MD_WALK_INIT;
    struct ar_md_block b;
    while (ar_md_block_next(text, len, &w, &b)) {
        int rc = fn(&b, text, arg);
        if (rc)
            return rc;
    }
    return 0;
}

int ar_md_block_is_lang(const struct ar_md_block *b, const char *text, const char *lang)
{
    if (!lang)
        return 1;
    size_t n = strlen(lang);
    return n == b->lang_len && strncasecmp(text + b->info_start, lang, n) == 0;
}

int ar_md_block_is_json(const struct ar_md_block *b, const char *text)
{
    return b->lang_len == 0 || ar_md_block_is_lang(b, text, "json") ||
           ar_md_block_is_lang(b, text, "jsonc") || ar_md_block_is_lang(b, text, "json5");
}

/* The heading level (1-6) of the line, or 0; sets its trimmed text span. */
static int heading_of(const char *t, const struct line *l, size_t *hs, size_t *he)
{
    size_t i = skip_indent(t, l);
    size_t n = run_of(t, i, l->end, '#');
    if (n < 1 || n > 6)
        return 0;
    size_t s = i + n, e = l->end;
    if (s < e && t[s] != ' ' && t[s] != '\t')
        return 0;
    while (s < e && (t[s] == ' ' || t[s] == '\t'))
        s++;
    while (e > s && (t[e - 1] == ' ' || t[e - 1] == '\t'))
        e--;
    /* A closing sequence of '#' counts only after a space ("# C#" keeps its '#'). */
    size_t c = e;
    while (c > s && t[c - 1] == '#')
        c--;
    if (c == s || t[c - 1] == ' ' || t[c - 1] == '\t') {
        e = c;
        while (e > s && (t[e - 1] == ' ' || t[e - 1] == '\t'))
            e--;
    }
    *hs = s;
    *he = e;
    return (int)n;
}

int ar_md_section_find(const char *text, size_t len, const char *heading, size_t *start,
                       size_t *end, struct ar_error *err)
{
    size_t want_len = strlen(heading);
    while (want_len && (heading[want_len - 1] == ' ' || heading[want_len - 1] == '\t'))
        want_len--;
    while (want_len && (*heading == ' ' || *heading == '\t' || *heading == '#')) {
        heading++;
        want_len--;
    }
    size_t at = 0;
    int level = 0; /* of the section being collected, 0 before it is found */
    char fc = 0;
    size_t flen = 0;
    struct line l;
    while (at < len) {
        line_at(text, len, at, &l);
        at = l.next;
        if (fc) {
            if (fence_close(text, &l, fc, flen))
                fc = 0;
            continue;
        }
        struct ar_md_block b;
        if (fence_open(text, &l, &fc, &flen, &b))
            continue;
        size_t hs, he;
        int lv = heading_of(text, &l, &hs, &he);
        if (!lv)
            continue;
        if (level) {
            if (lv <= level) {
                *end = l.start;
                return 0;
            }
        } else if (he - hs == want_len && strncasecmp(text + hs, heading, want_len) == 0) {
            level = lv;
            *start = l.next;
        }
    }
    if (level) {
        *end = len;
        return 0;
    }
    return ar_error_set(err, AR_ENOJSON, NULL, "no section '%.*s' found", (int)want_len, heading);
}
