/*
 * Redaction: secrets never reach a cassette. Two sources: the values of
 * credential-looking environment variables (the API keys the CLIs are given),
 * each in the forms a CLI may print it (raw, JSON-escaped, URL-encoded), and
 * the shapes of well-known tokens, wherever they appear.
 *
 * It works on what is stored, not on pieces: a CLI that streams its answer
 * splits a token across events (gemini's `{"content":"ghp_0123"}` then
 * `{"content":"4567…"}`), and replay joins them again. So a stored stdout is read
 * as JSON lines, each string decoded, and the strings at one place of the events
 * (the same key path) are joined in order before secrets are looked for; a secret
 * found across pieces is cut out of each of them. Lines that are not JSON are
 * text, joined likewise. A last pass over the bytes catches what no string holds.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/utf8.h"

#include "record/record.h"

extern char **environ;

static const char *const secret_words[] = {
    "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "COOKIE",
};

int ar_redact_secret_name(const char *name, size_t len)
{
    for (size_t w = 0; w < sizeof(secret_words) / sizeof(secret_words[0]); w++) {
        size_t wl = strlen(secret_words[w]);
        for (size_t i = 0; i + wl <= len; i++)
            if (strncasecmp(name + i, secret_words[w], wl) == 0)
                return 1;
    }
    return 0;
}

static int add_value(struct ar_strv *v, const char *val)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], val) == 0)
            return 0;
    return ar_strv_push(v, val);
}

/* val as it stands inside a JSON string. */
static int json_form(const char *val, struct ar_buf *b)
{
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)val; *p && !rc; p++) {
        if (*p == '"' || *p == '\\')
            rc = ar_buf_printf(b, "\\%c", *p);
        else if (*p == '\n')
            rc = ar_buf_puts(b, "\\n");
        else if (*p == '\t')
            rc = ar_buf_puts(b, "\\t");
        else if (*p == '\r')
            rc = ar_buf_puts(b, "\\r");
        else if (*p == '\b')
            rc = ar_buf_puts(b, "\\b");
        else if (*p == '\f')
            rc = ar_buf_puts(b, "\\f");
        else if (*p < 0x20)
            rc = ar_buf_printf(b, "\\u%04x", *p);
        else
            rc = ar_buf_putc(b, (char)*p);
    }
    return rc;
}

/* val percent-encoded as in a URL (RFC 3986: all but the unreserved characters). */
static int url_form(const char *val, struct ar_buf *b)
{
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)val; *p && !rc; p++)
        rc = isalnum(*p) || strchr("-._~", *p) ? ar_buf_putc(b, (char)*p)
                                               : ar_buf_printf(b, "%%%02X", *p);
    return rc;
}

static int add_entry(struct ar_strv *v, const char *entry)
{
    const char *eq = strchr(entry, '=');
    if (!eq || !ar_redact_secret_name(entry, (size_t)(eq - entry)))
        return 0;
    const char *val = eq + 1;
    if (strlen(val) < AR_REDACT_MIN_LEN)
        return 0;
    int rc = add_value(v, val);
    /* The forms a CLI prints it in: its JSON output escapes " and \, an error
     * quoting a URL percent-encodes. Each longer or equal, so still >= the minimum. */
    int (*const forms[])(const char *, struct ar_buf *) = { json_form, url_form };
    for (size_t f = 0; f < 2 && !rc; f++) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        rc = forms[f](val, &b);
        if (!rc && strcmp(ar_buf_cstr(&b), val) != 0)
            rc = add_value(v, ar_buf_cstr(&b));
        ar_buf_finish(&b);
    }
    return rc;
}

static int longer_first(const void *a, const void *b)
{
    size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
    return la < lb ? 1 : la > lb ? -1 : 0;
}

int ar_redactor_init(struct ar_redactor *r, const char *const *extra)
{
    ar_strv_init(&r->values);
    int rc = 0;
    for (char **e = environ; e && *e; e++)
        rc |= add_entry(&r->values, *e);
    for (size_t i = 0; extra && extra[i]; i++)
        rc |= add_entry(&r->values, extra[i]);
    if (r->values.n > 1)
        ar_sort(r->values.v, r->values.n, sizeof(char *), longer_first);
    return rc ? AR_ENOMEM : 0;
}

void ar_redactor_finish(struct ar_redactor *r)
{
    ar_strv_finish(&r->values);
}

static int token_char(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '_';
}

/* The length of the token run at s[0..n). */
static size_t token_run(const char *s, size_t n, int (*ok)(unsigned char))
{
    size_t i = 0;
    while (i < n && ok((unsigned char)s[i]))
        i++;
    return i;
}

static int bearer_char(unsigned char c)
{
    return isalnum(c) || strchr("-_.~+/=", c) != NULL;
}

/* Known token shapes: prefix, and how many token characters must follow. */
static const struct {
    const char *prefix;
    size_t min_tail;
} shapes[] = {
    { "sk-", 16 },   { "sk_", 16 },   { "pk_", 16 },  { "rk_", 16 },
    { "AIza", 30 },  { "ghp_", 20 },  { "gho_", 20 }, { "github_pat_", 20 },
    { "xoxb-", 10 }, { "xoxp-", 10 }, { "AKIA", 16 },
};

/* The length of a secret starting at s[i] (known shape or value), or 0. */
static size_t secret_at(const struct ar_redactor *r, const char *s, size_t n, size_t i,
                        size_t *keep)
{
    *keep = 0;
    for (size_t k = 0; k < r->values.n; k++) {
        size_t vl = strlen(r->values.v[k]);
        if (vl <= n - i && memcmp(s + i, r->values.v[k], vl) == 0)
            return vl;
    }
    /* A token starts at a word boundary. */
    if (i > 0 && token_char((unsigned char)s[i - 1]))
        return 0;
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        size_t pl = strlen(shapes[k].prefix);
        if (pl <= n - i && memcmp(s + i, shapes[k].prefix, pl) == 0) {
            size_t tail = token_run(s + i + pl, n - i - pl, token_char);
            if (tail >= shapes[k].min_tail)
                return pl + tail;
        }
    }
    static const char *const schemes[] = { "Bearer ", "bearer ", "Basic ", "basic " };
    for (size_t k = 0; k < 4; k++) {
        size_t pl = strlen(schemes[k]);
        if (pl <= n - i && memcmp(s + i, schemes[k], pl) == 0) {
            size_t tail = token_run(s + i + pl, n - i - pl, bearer_char);
            if (tail >= 8) {
                *keep = pl; /* "Bearer [REDACTED]" says what was there */
                return pl + tail;
            }
        }
    }
    return 0;
}

/* A secret found in a text: [at + keep, end) is cut out and "[REDACTED]" put in its place. */
struct cut {
    size_t at, keep, end;
};

struct cuts {
    struct cut *v;
    size_t n, cap;
};

/* Appends the secrets of s[0..n) to cuts, in order. Returns 0 or AR_ENOMEM. */
static int find_secrets(const struct ar_redactor *r, const char *s, size_t n, struct cuts *cuts)
{
    for (size_t i = 0; i < n;) {
        size_t keep;
        size_t len = secret_at(r, s, n, i, &keep);
        if (!len) {
            i++;
            continue;
        }
        if (ar_array_reserve(&cuts->v, &cuts->cap, cuts->n + 1, sizeof(*cuts->v), 8) < 0)
            return AR_ENOMEM;
        cuts->v[cuts->n++] = (struct cut){ i, keep, i + len };
        i += len;
    }
    return 0;
}

/*
 * Appends the part [from, to) of a text to out, with the cuts made: a cut that begins in
 * this part puts "[REDACTED]" where it begins; its bytes, here or in the parts after, are
 * left out. *k is the first cut not yet passed (the caller keeps it between the parts of
 * one text, in order).
 */
static int copy_cut(const char *text, size_t from, size_t to, const struct cuts *cuts, size_t *k,
                    struct ar_buf *out)
{
    size_t i = from;
    int rc = 0;
    while (i < to && !rc) {
        while (*k < cuts->n && cuts->v[*k].end <= i)
            (*k)++;
        const struct cut *c = *k < cuts->n ? &cuts->v[*k] : NULL;
        size_t gone = c ? c->at + c->keep : to;
        if (gone > i) {
            size_t upto = gone < to ? gone : to;
            rc = ar_buf_append(out, text + i - from, upto - i);
            i = upto;
            continue;
        }
        /* Inside the cut: its mark where it begins, then nothing up to its end. */
        if (i == gone)
            rc = ar_buf_puts(out, AR_REDACTED);
        i = c->end < to ? c->end : to;
    }
    return rc;
}

int ar_redact(const struct ar_redactor *r, const char *s, size_t n, struct ar_buf *out)
{
    struct cuts cuts = { NULL, 0, 0 };
    size_t k = 0;
    int rc = find_secrets(r, s, n, &cuts);
    if (!rc)
        rc = copy_cut(s, 0, n, &cuts, &k, out);
    free(cuts.v);
    return rc ? AR_ENOMEM : 0;
}

/* ---- a stored stdout: JSON lines, strings joined by where they stand ---------------- */

/* One string of a line (its bytes quotes included, decoded) or one line of text. */
struct piece {
    size_t line_at; /* where its line starts in the stdout */
    size_t raw_at;  /* where its bytes start (the opening quote), from line_at */
    size_t raw_len; /* its bytes */
    char *text;     /* decoded (a text line: its bytes) */
    size_t text_len;
    size_t text_at;    /* where it starts in its group's joined text */
    char *path;        /* the key path it stands at: the group */
    size_t order;      /* its place in the stdout */
    int json;          /* a JSON string (re-encoded when cut) or a line of text */
    struct ar_buf out; /* the piece with its cuts made, when it has any */
    int cut;
};

struct pieces {
    struct piece *v;
    size_t n, cap;
};

static struct piece *piece_new(struct pieces *ps)
{
    if (ar_array_reserve(&ps->v, &ps->cap, ps->n + 1, sizeof(*ps->v), 64) < 0)
        return NULL;
    struct piece *p = &ps->v[ps->n++];
    memset(p, 0, sizeof(*p));
    p->order = ps->n - 1;
    ar_buf_init(&p->out, AR_BUF_UNLIMITED);
    return p;
}

/* A line's strings: a small recursive reader, depth-capped (a deeper line is text). */
struct scan {
    const char *s;
    size_t n, i;
    struct ar_buf path;
    struct pieces *ps;
    size_t line_at, first;
    int depth, nomem;
};

#define SCAN_MAX_DEPTH 200

static void scan_ws(struct scan *sc)
{
    while (sc->i < sc->n && strchr(" \t\r\n", sc->s[sc->i]) && sc->s[sc->i])
        sc->i++;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'                     ? c - '0'
           : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                    : -1;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p[k]);
        if (h < 0)
            return -1;
        *v = *v << 4 | (unsigned)h;
    }
    return 0;
}

/* The JSON string at sc->i, decoded into b; sc->i after its closing quote. -1 if malformed. */
static int scan_string(struct scan *sc, struct ar_buf *b)
{
    sc->i++; /* the opening quote */
    while (sc->i < sc->n) {
        unsigned char c = (unsigned char)sc->s[sc->i];
        if (c == '"') {
            sc->i++;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c != '\\') {
            size_t j = sc->i;
            while (j < sc->n && sc->s[j] != '"' && sc->s[j] != '\\' &&
                   (unsigned char)sc->s[j] >= 0x20)
                j++;
            if (ar_buf_append(b, sc->s + sc->i, j - sc->i) < 0)
                return sc->nomem = 1, -1;
            sc->i = j;
            continue;
        }
        if (sc->i + 1 >= sc->n)
            return -1;
        char e = sc->s[sc->i + 1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (simple && e) {
            static const char to[] = "\"\\/\b\f\n\r\t";
            if (ar_buf_putc(b, to[simple - "\"\\/bfnrt"]) < 0)
                return sc->nomem = 1, -1;
            sc->i += 2;
            continue;
        }
        unsigned u, lo;
        if (e != 'u' || sc->i + 6 > sc->n || hex4(sc->s + sc->i + 2, &u) < 0)
            return -1;
        sc->i += 6;
        if (u >= 0xd800 && u < 0xdc00 && sc->i + 6 <= sc->n && sc->s[sc->i] == '\\' &&
            sc->s[sc->i + 1] == 'u' && hex4(sc->s + sc->i + 2, &lo) == 0 && lo >= 0xdc00 &&
            lo < 0xe000) {
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            sc->i += 6;
        }
        char enc[4];
        size_t k =
            u < 0x80    ? (enc[0] = (char)u, 1)
            : u < 0x800 ? (enc[0] = (char)(0xc0 | u >> 6), enc[1] = (char)(0x80 | (u & 0x3f)), 2)
            : u < 0x10000
                ? (enc[0] = (char)(0xe0 | u >> 12), enc[1] = (char)(0x80 | (u >> 6 & 0x3f)),
                   enc[2] = (char)(0x80 | (u & 0x3f)), 3)
                : (enc[0] = (char)(0xf0 | u >> 18), enc[1] = (char)(0x80 | (u >> 12 & 0x3f)),
                   enc[2] = (char)(0x80 | (u >> 6 & 0x3f)), enc[3] = (char)(0x80 | (u & 0x3f)), 4);
        if (ar_buf_append(b, enc, k) < 0)
            return sc->nomem = 1, -1;
    }
    return -1;
}

/* Records the string at sc->i as a piece at the current path (suffix: "" or "#key"). */
static int scan_piece(struct scan *sc, const char *suffix)
{
    size_t at = sc->i;
    struct ar_buf text;
    ar_buf_init(&text, AR_BUF_UNLIMITED);
    if (scan_string(sc, &text) < 0) {
        ar_buf_finish(&text);
        return -1;
    }
    struct piece *p = piece_new(sc->ps);
    char *path = NULL;
    if (!p || asprintf(&path, "%s%s", ar_buf_cstr(&sc->path), suffix) < 0) {
        if (p)
            sc->ps->n--;
        ar_buf_finish(&text);
        return sc->nomem = 1, -1;
    }
    p->line_at = sc->line_at;
    p->raw_at = at;
    p->raw_len = sc->i - at;
    p->text_len = text.len;
    p->text = ar_buf_detach(&text, NULL);
    ar_buf_finish(&text);
    p->path = path;
    p->json = 1;
    return p->text ? 0 : (sc->nomem = 1, -1);
}

static int scan_value(struct scan *sc)
{
    scan_ws(sc);
    if (sc->i >= sc->n || ++sc->depth > SCAN_MAX_DEPTH)
        return -1;
    char c = sc->s[sc->i];
    size_t plen = sc->path.len;
    int rc = 0;
    if (c == '"') {
        rc = scan_piece(sc, "");
    } else if (c == '{' || c == '[') {
        sc->i++;
        scan_ws(sc);
        char close = c == '{' ? '}' : ']';
        if (sc->i < sc->n && sc->s[sc->i] == close) {
            sc->i++;
        } else {
            for (;;) {
                if (c == '{') {
                    scan_ws(sc);
                    if (sc->i >= sc->n || sc->s[sc->i] != '"')
                        return -1;
                    /* The key is a piece too, a group of its own (keys are never
                     * joined), and names the path. */
                    size_t key_piece = sc->ps->n;
                    char key_group[32];
                    snprintf(key_group, sizeof(key_group), "#key%zu", key_piece);
                    sc->path.len = plen;
                    if (sc->path.data)
                        sc->path.data[plen] = '\0';
                    if (scan_piece(sc, key_group) < 0)
                        return -1;
                    const struct piece *k = &sc->ps->v[key_piece];
                    sc->path.len = plen;
                    if (ar_buf_putc(&sc->path, '.') < 0 ||
                        ar_buf_append(&sc->path, k->text, k->text_len < 64 ? k->text_len : 64) < 0)
                        return sc->nomem = 1, -1;
                    scan_ws(sc);
                    if (sc->i >= sc->n || sc->s[sc->i] != ':')
                        return -1;
                    sc->i++;
                } else if (sc->path.len == plen && ar_buf_puts(&sc->path, "[]") < 0) {
                    return sc->nomem = 1, -1;
                }
                if (scan_value(sc) < 0)
                    return -1;
                scan_ws(sc);
                if (sc->i < sc->n && sc->s[sc->i] == ',') {
                    sc->i++;
                    continue;
                }
                if (sc->i < sc->n && sc->s[sc->i] == close) {
                    sc->i++;
                    break;
                }
                return -1;
            }
        }
    } else {
        /* A number, true, false, null: no string to read. */
        size_t j = sc->i;
        while (j < sc->n && !strchr(",}] \t\r\n", sc->s[j]))
            j++;
        if (j == sc->i)
            return -1;
        sc->i = j;
    }
    sc->path.len = plen;
    if (sc->path.data)
        sc->path.data[plen] = '\0';
    sc->depth--;
    return rc;
}

/* Adds the pieces of one line: its strings when it is JSON, else the line as text. */
static int add_line(struct pieces *ps, const char *s, size_t line_at, size_t len)
{
    struct scan sc = { s + line_at, len, 0, { NULL, 0, 0, 0 }, ps, line_at, ps->n, 0, 0 };
    ar_buf_init(&sc.path, AR_BUF_UNLIMITED);
    scan_ws(&sc);
    int json = sc.i < len && (s[line_at + sc.i] == '{' || s[line_at + sc.i] == '[') &&
               scan_value(&sc) == 0;
    if (json) {
        scan_ws(&sc);
        json = sc.i == len;
    }
    ar_buf_finish(&sc.path);
    if (sc.nomem)
        return AR_ENOMEM;
    if (json)
        return 0;
    /* Not JSON after all: forget its strings, keep the line as text. */
    while (ps->n > sc.first) {
        struct piece *p = &ps->v[--ps->n];
        free(p->text);
        free(p->path);
        ar_buf_finish(&p->out);
    }
    struct piece *p = piece_new(ps);
    if (!p || !(p->text = malloc(len + 2)) || !(p->path = strdup(""))) {
        if (p) {
            free(p->text);
            ps->n--;
        }
        return AR_ENOMEM;
    }
    /* The newline joins text lines as they were, and stops a secret from spanning them. */
    memcpy(p->text, s + line_at, len);
    p->text[len] = '\n';
    p->text_len = len + 1;
    p->line_at = line_at;
    p->raw_at = 0;
    p->raw_len = len;
    return 0;
}

static int by_path(const void *a, const void *b)
{
    const struct piece *x = *(const struct piece *const *)a, *y = *(const struct piece *const *)b;
    int c = strcmp(x->path, y->path);
    return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* Joins the pieces of one group [g, e) in order, finds its secrets, cuts each piece. */
static int cut_group(const struct ar_redactor *r, struct piece **g, size_t n)
{
    struct ar_buf joined;
    ar_buf_init(&joined, AR_BUF_UNLIMITED);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        g[i]->text_at = joined.len;
        rc = ar_buf_append(&joined, g[i]->text, g[i]->text_len);
    }
    struct cuts cuts = { NULL, 0, 0 };
    if (!rc)
        rc = find_secrets(r, ar_buf_cstr(&joined), joined.len, &cuts);
    size_t k = 0;
    for (size_t i = 0; i < n && !rc && cuts.n; i++) {
        struct piece *p = g[i];
        size_t from = p->text_at, to = from + p->text_len;
        int touched = 0;
        for (size_t c = k; c < cuts.n && cuts.v[c].at < to; c++)
            touched |= cuts.v[c].end > from && cuts.v[c].at + cuts.v[c].keep < to;
        if (!touched) {
            while (k < cuts.n && cuts.v[k].end <= to)
                k++;
            continue;
        }
        p->cut = 1;
        rc = copy_cut(p->text, from, to, &cuts, &k, &p->out);
    }
    free(cuts.v);
    ar_buf_finish(&joined);
    return rc;
}

/* s as a JSON string; bytes that are not UTF-8 (a cut inside a character) become U+FFFD. */
static int encode_string(const char *s, size_t n, struct ar_buf *out)
{
    struct ar_buf fixed;
    ar_buf_init(&fixed, AR_BUF_UNLIMITED);
    int rc = ar_utf8_append_lossy(&fixed, s, n, NULL);
    const char *t = ar_buf_cstr(&fixed);
    rc |= ar_buf_putc(out, '"');
    for (size_t i = 0; i < fixed.len && !rc; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '"' || c == '\\')
            rc = ar_buf_printf(out, "\\%c", c);
        else if (c == '\n')
            rc = ar_buf_puts(out, "\\n");
        else if (c < 0x20)
            rc = ar_buf_printf(out, "\\u%04x", c);
        else
            rc = ar_buf_putc(out, (char)c);
    }
    rc |= ar_buf_putc(out, '"');
    ar_buf_finish(&fixed);
    return rc ? AR_ENOMEM : 0;
}

int ar_redact_stdout(const struct ar_redactor *r, const char *s, size_t n, struct ar_buf *out)
{
    struct pieces ps = { NULL, 0, 0 };
    struct piece **sorted = NULL;
    struct ar_buf joined;
    ar_buf_init(&joined, AR_BUF_UNLIMITED);
    int rc = 0;
    for (size_t pos = 0; pos < n && !rc;) {
        const char *nl = memchr(s + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - s) : n;
        rc = add_line(&ps, s, pos, end - pos);
        pos = end + 1;
    }
    if (!rc && ps.n && !(sorted = malloc(ps.n * sizeof(*sorted))))
        rc = AR_ENOMEM;
    for (size_t i = 0; i < ps.n && !rc; i++)
        sorted[i] = &ps.v[i];
    if (!rc && ps.n)
        ar_sort(sorted, ps.n, sizeof(*sorted), by_path);
    for (size_t g = 0; g < ps.n && !rc;) {
        size_t e = g + 1;
        while (e < ps.n && !strcmp(sorted[e]->path, sorted[g]->path))
            e++;
        rc = cut_group(r, sorted + g, e - g);
        g = e;
    }
    /* The stdout again, each cut piece in place of its bytes (pieces are in order). */
    size_t at = 0;
    for (size_t i = 0; i < ps.n && !rc; i++) {
        const struct piece *p = &ps.v[i];
        if (!p->cut)
            continue;
        size_t raw = p->line_at + p->raw_at;
        rc = ar_buf_append(&joined, s + at, raw - at);
        if (!rc && p->json)
            rc = encode_string(ar_buf_cstr(&p->out), p->out.len, &joined);
        else if (!rc) /* a text line: without the newline its piece carried */
            rc = ar_buf_append(&joined, p->out.data,
                               p->out.len && p->out.data[p->out.len - 1] == '\n' ? p->out.len - 1
                                                                                 : p->out.len);
        at = raw + p->raw_len;
    }
    if (!rc)
        rc = ar_buf_append(&joined, s + at, n - at);
    /* What no string held (a number, a key past a broken line): the bytes themselves. */
    if (!rc)
        rc = ar_redact(r, ar_buf_cstr(&joined), joined.len, out);
    for (size_t i = 0; i < ps.n; i++) {
        free(ps.v[i].text);
        free(ps.v[i].path);
        ar_buf_finish(&ps.v[i].out);
    }
    free(ps.v);
    free(sorted);
    ar_buf_finish(&joined);
    return rc ? AR_ENOMEM : 0;
}
