/*
 * --with-content and the RunResult `files` array.
 *
 * JSON strings must be Unicode, and files need not be: a file that is valid
 * UTF-8 without NUL bytes goes out as a string, anything else as base64, so
 * no byte is lost or altered. A file cut at the cap may end in the middle of
 * a UTF-8 sequence; that partial sequence is dropped so text stays text.
 */
#include <stdlib.h>
#include <string.h>

#include "git/git.h"
#include "git/internal.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/utf8.h"

/* Length of the UTF-8 sequence starting with byte c, or 0 when c cannot start one. */
static size_t seq_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return 2;
    if (c >= 0xE0 && c <= 0xEF)
        return 3;
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    return 0;
}

/* Text content: valid UTF-8 and no NUL (a NUL byte is the mark of a binary file). */
static int is_text(const char *s, size_t len)
{
    return memchr(s, '\0', len) == NULL && ar_utf8_valid(s, len);
}

/* How many trailing bytes are the start of a sequence the cap cut off (0 when none). */
static size_t cut_tail(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t back = 1; back <= 3 && back <= len; back++) {
        unsigned char c = p[len - back];
        if ((c & 0xC0) == 0x80)
            continue;
        size_t k = seq_len(c);
        return k > back ? back : 0;
    }
    return 0;
}

static int load_one(struct ar_git_change *ch, const char *root, size_t max)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int truncated = 0;
    int rc = ar_git_path_read(root, ch->path, max, &b, &truncated, NULL);
    if (rc == AR_ENOMEM) {
        ar_buf_finish(&b);
        return AR_ENOMEM;
    }
    if (rc != 1) {
        ar_buf_finish(&b);
        return 0;
    }
    size_t len = b.len;
    ch->utf8 = (unsigned)is_text(ar_buf_cstr(&b), len);
    if (!ch->utf8 && truncated) {
        size_t cut = cut_tail(ar_buf_cstr(&b), len);
        if (cut && is_text(ar_buf_cstr(&b), len - cut)) {
            len -= cut;
            ch->utf8 = 1;
        }
    }
    ch->content = ar_buf_detach(&b, NULL);
    if (!ch->content)
        return AR_ENOMEM;
    ch->content[len] = '\0';
    ch->content_len = len;
    ch->truncated = (unsigned)truncated;
    ch->has_content = 1;
    return 0;
}

int ar_git_changes_load_content(struct ar_git_changes *ch, const char *root, size_t max,
                                struct ar_error *err)
{
    if (max == 0)
        max = AR_GIT_CONTENT_MAX;
    for (size_t i = 0; i < ch->n; i++) {
        struct ar_git_change *c = &ch->v[i];
        if (c->op == AR_GIT_DELETE || c->has_content)
            continue;
        if (load_one(c, root, max))
            return ar_error_set(err, AR_ENOMEM, c->path, "out of memory");
    }
    return 0;
}

/* A JSON string of a path: its bytes as they are when UTF-8, else with U+FFFD for bad bytes. */
static json_t *path_string(const char *s)
{
    size_t len = strlen(s);
    if (ar_utf8_valid(s, len))
        return json_stringn(s, len);
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    json_t *j =
        ar_utf8_append_lossy(&b, s, len, NULL) ? NULL : json_stringn(ar_buf_cstr(&b), b.len);
    ar_buf_finish(&b);
    return j;
}

static json_t *change_json(const struct ar_git_change *c)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "path", path_string(c->path));
    bad |= json_object_set_new(o, "op", json_string(ar_git_op_name(c->op)));
    bad |= json_object_set_new(o, "from", c->from ? path_string(c->from) : json_null());
    if (c->has_content) {
        json_t *content;
        if (c->utf8) {
            content = json_stringn(c->content, c->content_len);
        } else {
            size_t n;
            char *b64 = ar_base64_encode(c->content, c->content_len, &n);
            content = b64 ? json_stringn(b64, n) : NULL;
            free(b64);
        }
        bad |= json_object_set_new(o, "content", content);
        bad |= json_object_set_new(o, "encoding", json_string(c->utf8 ? "utf-8" : "base64"));
        bad |= json_object_set_new(o, "truncated", json_boolean(c->truncated));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *ar_git_changes_to_json(const struct ar_git_changes *ch)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    for (size_t i = 0; i < ch->n; i++) {
        if (json_array_append_new(a, change_json(&ch->v[i]))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
