/*
 * URI references resolved against a base (RFC 3986 §5.2), enough for $id and $ref:
 * http(s), file and urn URIs, fragments kept. No URI is ever fetched: this only
 * names documents (load.c decides where a name may be read from).
 */
#include <stdlib.h>
#include <string.h>

#include "contract/internal.h"
#include "util/buf.h"

struct uri {
    const char *scheme, *auth, *path, *query, *frag;
    size_t scheme_len, auth_len, path_len, query_len, frag_len;
    int has_scheme, has_auth, has_query, has_frag;
};

static void parse(const char *s, struct uri *u)
{
    memset(u, 0, sizeof(*u));
    const char *p = s;
    const char *colon = strpbrk(p, ":/?#");
    if (colon && *colon == ':' && colon > p) {
        u->has_scheme = 1;
        u->scheme = p;
        u->scheme_len = (size_t)(colon - p);
        p = colon + 1;
    }
    if (p[0] == '/' && p[1] == '/') {
        p += 2;
        size_t n = strcspn(p, "/?#");
        u->has_auth = 1;
        u->auth = p;
        u->auth_len = n;
        p += n;
    }
    size_t n = strcspn(p, "?#");
    u->path = p;
    u->path_len = n;
    p += n;
    if (*p == '?') {
        p++;
        n = strcspn(p, "#");
        u->has_query = 1;
        u->query = p;
        u->query_len = n;
        p += n;
    }
    if (*p == '#') {
        u->has_frag = 1;
        u->frag = p + 1;
        u->frag_len = strlen(p + 1);
    }
}

/* remove_dot_segments of RFC 3986 §5.2.4 on path[0..n), appended to out. */
static void remove_dots(const char *path, size_t n, struct ar_buf *out)
{
    struct ar_buf in;
    ar_buf_init(&in, AR_BUF_UNLIMITED);
    ar_buf_append(&in, path, n);
    const char *s = ar_buf_cstr(&in);
    size_t base = out->len;
    while (*s) {
        if (strncmp(s, "../", 3) == 0) {
            s += 3;
        } else if (strncmp(s, "./", 2) == 0) {
            s += 2;
        } else if (strncmp(s, "/./", 3) == 0) {
            s += 2;
        } else if (strcmp(s, "/.") == 0) {
            s = "/";
        } else if (strncmp(s, "/../", 4) == 0 || strcmp(s, "/..") == 0) {
            s = s[3] ? s + 3 : "/";
            while (out->len > base && out->data[out->len - 1] != '/')
                out->len--;
            if (out->len > base)
                out->len--;
            out->data[out->len] = '\0';
        } else if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) {
            break;
        } else {
            size_t k = strcspn(s + 1, "/") + 1;
            ar_buf_append(out, s, k);
            s += k;
        }
    }
    ar_buf_finish(&in);
}

char *ar_uri_resolve(const char *base, const char *ref)
{
    struct uri b, r;
    parse(base ? base : "", &b);
    parse(ref, &r);
    struct ar_buf o;
    ar_buf_init(&o, AR_BUF_UNLIMITED);
    const struct uri *s = r.has_scheme ? &r : &b;
    if (s->has_scheme) {
        ar_buf_append(&o, s->scheme, s->scheme_len);
        ar_buf_putc(&o, ':');
    }
    if (r.has_scheme || r.has_auth) {
        const struct uri *a = &r;
        if (a->has_auth) {
            ar_buf_puts(&o, "//");
            ar_buf_append(&o, a->auth, a->auth_len);
        }
        remove_dots(r.path, r.path_len, &o);
        if (r.has_query) {
            ar_buf_putc(&o, '?');
            ar_buf_append(&o, r.query, r.query_len);
        }
    } else {
        if (b.has_auth) {
            ar_buf_puts(&o, "//");
            ar_buf_append(&o, b.auth, b.auth_len);
        }
        if (r.path_len == 0) {
            ar_buf_append(&o, b.path, b.path_len);
            if (r.has_query) {
                ar_buf_putc(&o, '?');
                ar_buf_append(&o, r.query, r.query_len);
            } else if (b.has_query) {
                ar_buf_putc(&o, '?');
                ar_buf_append(&o, b.query, b.query_len);
            }
        } else {
            struct ar_buf merged;
            ar_buf_init(&merged, AR_BUF_UNLIMITED);
            if (r.path[0] == '/') {
                ar_buf_append(&merged, r.path, r.path_len);
            } else {
                if (b.has_auth && b.path_len == 0) {
                    ar_buf_putc(&merged, '/');
                } else {
                    size_t keep = b.path_len;
                    while (keep > 0 && b.path[keep - 1] != '/')
                        keep--;
                    ar_buf_append(&merged, b.path, keep);
                }
                ar_buf_append(&merged, r.path, r.path_len);
            }
            remove_dots(ar_buf_cstr(&merged), merged.len, &o);
            ar_buf_finish(&merged);
            if (r.has_query) {
                ar_buf_putc(&o, '?');
                ar_buf_append(&o, r.query, r.query_len);
            }
        }
    }
    if (r.has_frag) {
        ar_buf_putc(&o, '#');
        ar_buf_append(&o, r.frag, r.frag_len);
    }
    char *out = ar_buf_detach(&o, NULL);
    ar_buf_finish(&o);
    if (!out)
        out = strdup("");
    return out;
}

char *ar_uri_split(const char *uri, const char **frag)
{
    const char *hash = strchr(uri, '#');
    size_t n = hash ? (size_t)(hash - uri) : strlen(uri);
    if (frag)
        *frag = hash ? hash + 1 : NULL;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, uri, n);
        s[n] = '\0';
    }
    return s;
}
