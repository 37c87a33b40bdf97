/* Model text on a terminal: control characters shown in caret notation (util/shown.h). */
#include <string.h>

#include "agentrun/error.h"
#include "cli/terminal.h"
#include "util/shown.h"

int ar_cli_text_append(struct ar_buf *out, const char *s, size_t n)
{
    return ar_shown_append(out, s, n);
}

int ar_cli_text_neutralize(struct ar_buf *b, size_t from)
{
    return ar_shown_in_place(b, from);
}

int ar_cli_layout_neutralize(struct ar_buf *b, size_t from)
{
    return ar_shown_layout_in_place(b, from);
}

int ar_cli_line_append(struct ar_buf *out, const char *s, size_t n)
{
    return ar_shown_data(out, s, n, NULL);
}

int ar_cli_line_neutralize(struct ar_buf *b, size_t from)
{
    struct ar_buf r;
    ar_buf_init(&r, AR_BUF_UNLIMITED);
    int rc = ar_cli_line_append(&r, b->data ? b->data + from : "", b->len - from);
    size_t keep = b->len;
    if (!rc) {
        b->len = from;
        rc = ar_buf_append(b, r.data ? r.data : "", r.len);
        if (rc)
            b->len = keep;
    }
    ar_buf_finish(&r);
    return rc ? AR_ENOMEM : 0;
}

int ar_cli_line_fputs(const char *s, FILE *f)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int rc = ar_cli_line_append(&b, s, strlen(s)) == 0 ? fputs(ar_buf_cstr(&b), f) : EOF;
    ar_buf_finish(&b);
    return rc == EOF ? EOF : 0;
}
