/*
 * Redaction: secrets never reach a cassette or a cache entry. Two sources:
 * the values of credential-looking environment variables (the API keys the
 * CLIs are given), and the shapes of well-known tokens, wherever they appear.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "record/record.h"

extern char **environ;

#define MIN_SECRET_LEN 6

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

static int add_entry(struct ar_strv *v, const char *entry)
{
    const char *eq = strchr(entry, '=');
    if (!eq || !ar_redact_secret_name(entry, (size_t)(eq - entry)))
        return 0;
    const char *val = eq + 1;
    if (strlen(val) < MIN_SECRET_LEN)
        return 0;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], val) == 0)
            return 0;
    return ar_strv_push(v, val);
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
        qsort(r->values.v, r->values.n, sizeof(char *), longer_first);
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

int ar_redact(const struct ar_redactor *r, const char *s, size_t n, struct ar_buf *out)
{
    size_t from = 0;
    for (size_t i = 0; i < n;) {
        size_t keep;
        size_t len = secret_at(r, s, n, i, &keep);
        if (!len) {
            i++;
            continue;
        }
        if (ar_buf_append(out, s + from, i + keep - from) < 0 || ar_buf_puts(out, AR_REDACTED) < 0)
            return AR_ENOMEM;
        i += len;
        from = i;
    }
    return ar_buf_append(out, s + from, n - from) < 0 ? AR_ENOMEM : 0;
}
