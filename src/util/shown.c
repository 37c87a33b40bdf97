/* Model text shown, never obeyed: control characters in caret notation (shown.h). */
#include <assert.h>
#include <string.h>

#include "agentrun/error.h"
#include "util/shown.h"
#include "util/utf8.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

int ar_shown_append(struct ar_buf *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, from = 0;
    int rc = 0;
    while (i < n && !rc) {
        unsigned char c = p[i];
        size_t len = c < 0x80 ? 1 : ar_utf8_seq_len(s + i, n - i);
        int plain = len > 1 ? !(c == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
                            : len == 1 && ((c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' ||
                                           (c == '\r' && i + 1 < n && p[i + 1] == '\n'));
        if (plain) {
            i += len;
            continue;
        }
        rc = ar_buf_append(out, s + from, i - from);
        if (rc)
            break;
        char pic[5];
        if (len == 0) {
            rc = ar_buf_append(out, replacement, sizeof(replacement) - 1);
            i++;
        } else if (len == 2) { /* a C1 control, U+0080..U+009F */
            unsigned char x = p[i + 1] & 0x7f;
            memcpy(pic, "M-^", 3);
            pic[3] = (char)(x ^ 0x40);
            rc = ar_buf_append(out, pic, 4);
            i += 2;
        } else {
            pic[0] = '^';
            pic[1] = c == 0x7f ? '?' : (char)(c ^ 0x40);
            rc = ar_buf_append(out, pic, 2);
            i++;
        }
        from = i;
    }
    if (!rc)
        rc = ar_buf_append(out, s + from, n - from);
    return rc ? AR_ENOMEM : 0;
}

/* b's bytes from `from` on, replaced by render's rendering of them (b kept on failure). */
static int in_place(struct ar_buf *b, size_t from,
                    int (*render)(struct ar_buf *, const char *, size_t))
{
    struct ar_buf r;
    ar_buf_init(&r, AR_BUF_UNLIMITED);
    if (render(&r, b->data ? b->data + from : "", b->len - from) < 0) {
        ar_buf_finish(&r);
        return AR_ENOMEM;
    }
    size_t keep = b->len;
    b->len = from;
    int rc = ar_buf_append(b, r.data ? r.data : "", r.len);
    if (rc)
        b->len = keep;
    ar_buf_finish(&r);
    return rc ? AR_ENOMEM : 0;
}

int ar_shown_in_place(struct ar_buf *b, size_t from)
{
    return in_place(b, from, ar_shown_append);
}

/*
 * The one neutraliser of untrusted text (shown.h): ar_shown_append()'s rendering, "##["
 * shown "# #[", and line breaks by `layout`: 0, each LF is "^J" or, with cont, LF and
 * cont, and CR is "^M"; 1 (text agentrun laid out in lines), LF and CR LF stay and a line
 * that starts, after blanks, with "::" shows it ": :".
 */
static int neutralise(struct ar_buf *out, const char *s, size_t n, const char *cont, int layout)
{
    size_t from = 0;
    int rc = 0, line_start = 1;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *mark = NULL;
        if (s[i] == '\n')
            mark = layout ? NULL : cont ? "\n" : "^J";
        else if (s[i] == '\r' && !(layout && i + 1 < n && s[i + 1] == '\n'))
            mark = "^M";
        else if (s[i] == '#' && i + 2 < n && s[i + 1] == '#' && s[i + 2] == '[')
            mark = "# ";
        else if (layout && line_start && s[i] == ':' && i + 1 < n && s[i + 1] == ':')
            mark = ": ";
        if (layout)
            line_start =
                s[i] == '\n' || (line_start && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'));
        if (!mark)
            continue;
        rc = ar_shown_append(out, s + from, i - from);
        if (!rc)
            rc = ar_buf_puts(out, mark);
        if (!rc && s[i] == '\n' && cont)
            rc = ar_buf_puts(out, cont);
        from = i + 1;
    }
    if (!rc)
        rc = ar_shown_append(out, s + from, n - from);
    return rc ? AR_ENOMEM : 0;
}

int ar_shown_data(struct ar_buf *out, const char *s, size_t n, const char *cont)
{
    assert(!cont || cont[strspn(cont, " \t")] != '\0');
    return neutralise(out, s, n, cont, 0);
}

int ar_shown_layout(struct ar_buf *out, const char *s, size_t n)
{
    return neutralise(out, s, n, NULL, 1);
}

int ar_shown_layout_in_place(struct ar_buf *b, size_t from)
{
    return in_place(b, from, ar_shown_layout);
}
