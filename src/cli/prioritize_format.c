/* The text, markdown and json renderings of a prioritization. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/prioritize_format.h"
#include "cli/terminal.h"

/* Below this the rationale column would hold a word or two per line. */
#define MIN_RATIONALE_WIDTH 20

static const char *const format_names[] = { "text", "markdown", "json" };

int ar_prioritize_format_parse(const char *s)
{
    for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
        if (strcmp(s, format_names[i]) == 0)
            return (int)i;
    return -1;
}

int ar_prioritize_term_width(void)
{
    const char *c = getenv("COLUMNS");
    if (c && *c) {
        char *end;
        long v = strtol(c, &end, 10);
        if (!*end && v > 0 && v < 10000)
            return (int)v;
    }
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/* Columns a UTF-8 string takes: one per code point (wide characters are rare in PRD ids). */
static size_t display_width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            w++;
    return w;
}

static int pad(struct ar_buf *out, size_t n)
{
    int rc = 0;
    while (rc == 0 && n--)
        rc = ar_buf_putc(out, ' ');
    return rc;
}

/*
 * Appends text word-wrapped into a column `width` wide that starts at column
 * `indent`; the first line continues where the cursor is. A word longer
 * than the column gets a line of its own rather than being cut.
 */
static int wrap(struct ar_buf *out, const char *text, size_t indent, size_t width)
{
    size_t col = 0;
    int rc = 0;
    const char *p = text;
    while (rc == 0 && *p) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " \t\n\r");
        size_t w = display_width(p, n);
        if (col > 0 && col + 1 + w > width) {
            rc = ar_buf_putc(out, '\n');
            if (rc == 0)
                rc = pad(out, indent);
            col = 0;
        } else if (col > 0) {
            rc = ar_buf_putc(out, ' ');
            col++;
        }
        if (rc == 0)
            rc = ar_buf_append(out, p, n);
        col += w;
        p += n;
    }
    return rc;
}

/* "a, b, c" of v[0..n). */
static int join_strs(struct ar_buf *out, char *const *v, size_t n)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = ar_buf_printf(out, "%s%s", i ? ", " : "", v[i]);
    return rc;
}

static int render_text(const struct ar_prioritize_result *pr, int width, struct ar_buf *out)
{
    static const char *const heads[] = { "PRI", "ID", "EFFORT", "RATIONALE" };
    size_t w_pri = strlen(heads[0]), w_id = strlen(heads[1]), w_eff = strlen(heads[2]);
    for (size_t i = 0; i < pr->n_recommendations; i++) {
        const struct ar_recommendation *rec = &pr->recommendations[i];
        char num[32];
        size_t n = (size_t)snprintf(num, sizeof(num), "%lld", (long long)rec->priority);
        size_t w = display_width(rec->prd_id, strlen(rec->prd_id));
        w_pri = n > w_pri ? n : w_pri;
        w_id = w > w_id ? w : w_id;
    }
    size_t indent = w_pri + 2 + w_id + 2 + w_eff + 2;
    size_t w_text = width > 0 && (size_t)width > indent + MIN_RATIONALE_WIDTH
                        ? (size_t)width - indent
                        : MIN_RATIONALE_WIDTH;
    int rc = ar_buf_printf(out, "%*s  %-*s  %-*s  %s\n", (int)w_pri, heads[0], (int)w_id, heads[1],
                           (int)w_eff, heads[2], heads[3]);
    for (size_t i = 0; rc == 0 && i < pr->n_recommendations; i++) {
        const struct ar_recommendation *rec = &pr->recommendations[i];
        rc = ar_buf_printf(out, "%*lld  %s", (int)w_pri, (long long)rec->priority, rec->prd_id);
        if (rc == 0)
            rc = pad(out, w_id - display_width(rec->prd_id, strlen(rec->prd_id)));
        if (rc == 0)
            rc = ar_buf_printf(out, "  %-*s  ", (int)w_eff, rec->effort ? rec->effort : "-");
        if (rc == 0)
            rc = wrap(out, rec->rationale, indent, w_text);
        struct ar_buf deps;
        ar_buf_init(&deps, AR_BUF_UNLIMITED);
        if (rc == 0)
            rc = join_strs(&deps, rec->depends_on, rec->n_depends_on);
        if (rc == 0 && deps.len) {
            rc = ar_buf_putc(out, '\n');
            if (rc == 0)
                rc = pad(out, indent);
            if (rc == 0)
                rc = ar_buf_puts(out, "depends on: ");
            if (rc == 0)
                rc = wrap(out, ar_buf_cstr(&deps), indent, w_text);
        }
        ar_buf_finish(&deps);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
    }
    if (rc == 0 && pr->total > pr->n_recommendations)
        rc = ar_buf_printf(out, "(%zu more not shown)\n", pr->total - pr->n_recommendations);
    size_t w_all = width > 0 && width > 30 ? (size_t)width : 80;
    if (rc == 0 && pr->summary && *pr->summary) {
        rc = ar_buf_puts(out, "\nSummary: ");
        if (rc == 0)
            rc = wrap(out, pr->summary, 0, w_all);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
    }
    if (rc == 0 && pr->n_unranked) {
        rc = ar_buf_puts(out, "\nUnranked (left out by the model): ");
        if (rc == 0)
            rc = join_strs(out, pr->unranked, pr->n_unranked);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
    }
    return rc;
}

/* A markdown table cell: '|' escaped, line breaks as spaces, never empty. */
static int md_cell(struct ar_buf *out, const char *s)
{
    int rc = ar_buf_putc(out, ' ');
    if (!s || !*s)
        s = "-";
    for (; rc == 0 && *s; s++) {
        if (*s == '|')
            rc = ar_buf_puts(out, "\\|");
        else if (*s == '\n' || *s == '\r' || *s == '\t')
            rc = ar_buf_putc(out, ' ');
        else
            rc = ar_buf_putc(out, *s);
    }
    if (rc == 0)
        rc = ar_buf_puts(out, " |");
    return rc;
}

static int render_markdown(const struct ar_prioritize_result *pr, struct ar_buf *out)
{
    int rc = ar_buf_puts(out, "| Priority | PRD | Effort | Rationale | Depends on |\n"
                              "|---:|---|---|---|---|\n");
    for (size_t i = 0; rc == 0 && i < pr->n_recommendations; i++) {
        const struct ar_recommendation *rec = &pr->recommendations[i];
        struct ar_buf deps;
        ar_buf_init(&deps, AR_BUF_UNLIMITED);
        rc = ar_buf_printf(out, "| %lld |", (long long)rec->priority);
        if (rc == 0)
            rc = join_strs(&deps, rec->depends_on, rec->n_depends_on);
        if (rc == 0)
            rc = md_cell(out, rec->prd_id);
        if (rc == 0)
            rc = md_cell(out, rec->effort);
        if (rc == 0)
            rc = md_cell(out, rec->rationale);
        if (rc == 0)
            rc = md_cell(out, ar_buf_cstr(&deps));
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
        ar_buf_finish(&deps);
    }
    if (rc == 0 && pr->total > pr->n_recommendations)
        rc = ar_buf_printf(out, "\n_%zu more not shown._\n", pr->total - pr->n_recommendations);
    if (rc == 0 && pr->summary && *pr->summary)
        rc = ar_buf_printf(out, "\n**Summary:** %s\n", pr->summary);
    if (rc == 0 && pr->n_unranked) {
        rc = ar_buf_puts(out, "\n**Unranked** (left out by the model): ");
        if (rc == 0)
            rc = join_strs(out, pr->unranked, pr->n_unranked);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
    }
    return rc;
}

int ar_prioritize_render(const struct ar_prioritize_result *pr, enum ar_prioritize_format fmt,
                         int width, struct ar_buf *out)
{
    size_t from = out->len;
    int rc;
    switch (fmt) {
    case AR_PRIORITIZE_FORMAT_TEXT:
        rc = pr->ranked ? render_text(pr, width, out) : 0;
        return rc ? rc : ar_cli_layout_neutralize(out, from); /* cli/terminal.h */
    case AR_PRIORITIZE_FORMAT_MARKDOWN:
        rc = pr->ranked ? render_markdown(pr, out) : 0;
        return rc ? rc : ar_cli_layout_neutralize(out, from);
    case AR_PRIORITIZE_FORMAT_JSON: {
        char *text = ar_prioritize_result_to_json(pr, 0);
        rc = text ? ar_buf_puts(out, text) : AR_ENOMEM;
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
        free(text);
        return rc;
    }
    }
    return 0;
}
