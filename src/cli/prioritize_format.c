/* The text, markdown and json renderings of a prioritization. */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/prioritize_format.h"
#include "cli/terminal.h"
#include "result/result.h"

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

/* JSON has one number type: the contract accepts 2.0 as the integer 2. */
static long long priority_of(json_t *rec)
{
    json_t *p = json_object_get(rec, "priority");
    return json_is_real(p) ? (long long)json_real_value(p) : (long long)json_integer_value(p);
}

static const char *str_or(json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : dflt;
}

/* "a, b, c" from a JSON array of strings; "" when absent. Caller frees. */
static char *join_array(json_t *a)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    size_t i;
    json_t *v;
    int rc = 0;
    json_array_foreach(a, i, v)
    {
        if (json_is_string(v) && rc == 0)
            rc = ar_buf_printf(&b, "%s%s", b.len ? ", " : "", json_string_value(v));
    }
    char *s = rc == 0 ? ar_buf_detach(&b, NULL) : NULL;
    ar_buf_finish(&b);
    return s;
}

static int join_strv(struct ar_buf *out, const struct ar_strv *sv)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sv->n; i++)
        rc = ar_buf_printf(out, "%s%s", i ? ", " : "", sv->v[i]);
    return rc;
}

static int render_text(const struct ar_ranking *rk, int width, struct ar_buf *out)
{
    json_t *recs = json_object_get(rk->value, "recommendations");
    static const char *const heads[] = { "PRI", "ID", "EFFORT", "RATIONALE" };
    size_t w_pri = strlen(heads[0]), w_id = strlen(heads[1]), w_eff = strlen(heads[2]);
    size_t i;
    json_t *rec;
    json_array_foreach(recs, i, rec)
    {
        char num[32];
        size_t n = (size_t)snprintf(num, sizeof(num), "%lld", priority_of(rec));
        const char *id = str_or(rec, "prd_id", "");
        w_pri = n > w_pri ? n : w_pri;
        w_id = display_width(id, strlen(id)) > w_id ? display_width(id, strlen(id)) : w_id;
    }
    size_t indent = w_pri + 2 + w_id + 2 + w_eff + 2;
    size_t w_text = width > 0 && (size_t)width > indent + MIN_RATIONALE_WIDTH
                        ? (size_t)width - indent
                        : MIN_RATIONALE_WIDTH;
    int rc = ar_buf_printf(out, "%*s  %-*s  %-*s  %s\n", (int)w_pri, heads[0], (int)w_id, heads[1],
                           (int)w_eff, heads[2], heads[3]);
    json_array_foreach(recs, i, rec)
    {
        if (rc)
            break;
        const char *id = str_or(rec, "prd_id", "");
        rc = ar_buf_printf(out, "%*lld  %s", (int)w_pri, priority_of(rec), id);
        if (rc == 0)
            rc = pad(out, w_id - display_width(id, strlen(id)));
        if (rc == 0)
            rc = ar_buf_printf(out, "  %-*s  ", (int)w_eff, str_or(rec, "effort", "-"));
        if (rc == 0)
            rc = wrap(out, str_or(rec, "rationale", ""), indent, w_text);
        char *deps = join_array(json_object_get(rec, "depends_on"));
        if (rc == 0 && deps && *deps) {
            rc = ar_buf_putc(out, '\n');
            if (rc == 0)
                rc = pad(out, indent);
            if (rc == 0)
                rc = ar_buf_puts(out, "depends on:");
            if (rc == 0)
                rc = ar_buf_putc(out, ' ');
            if (rc == 0)
                rc = wrap(out, deps, indent, w_text);
        }
        free(deps);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
    }
    if (rc == 0 && rk->total > json_array_size(recs))
        rc = ar_buf_printf(out, "(%zu more not shown)\n", rk->total - json_array_size(recs));
    const char *summary = str_or(rk->value, "summary", NULL);
    size_t w_all = width > 0 && width > 30 ? (size_t)width : 80;
    if (rc == 0 && summary && *summary) {
        rc = ar_buf_puts(out, "\nSummary: ");
        if (rc == 0)
            rc = wrap(out, summary, 0, w_all);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
    }
    if (rc == 0 && rk->unranked.n) {
        rc = ar_buf_puts(out, "\nUnranked (left out by the model): ");
        if (rc == 0)
            rc = join_strv(out, &rk->unranked);
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

static int render_markdown(const struct ar_ranking *rk, struct ar_buf *out)
{
    json_t *recs = json_object_get(rk->value, "recommendations");
    int rc = ar_buf_puts(out, "| Priority | PRD | Effort | Rationale | Depends on |\n"
                              "|---:|---|---|---|---|\n");
    size_t i;
    json_t *rec;
    json_array_foreach(recs, i, rec)
    {
        if (rc)
            break;
        rc = ar_buf_printf(out, "| %lld |", priority_of(rec));
        char *deps = join_array(json_object_get(rec, "depends_on"));
        if (rc == 0)
            rc = md_cell(out, str_or(rec, "prd_id", ""));
        if (rc == 0)
            rc = md_cell(out, str_or(rec, "effort", ""));
        if (rc == 0)
            rc = md_cell(out, str_or(rec, "rationale", ""));
        if (rc == 0)
            rc = md_cell(out, deps);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
        free(deps);
    }
    if (rc == 0 && rk->total > json_array_size(recs))
        rc = ar_buf_printf(out, "\n_%zu more not shown._\n", rk->total - json_array_size(recs));
    const char *summary = str_or(rk->value, "summary", NULL);
    if (rc == 0 && summary && *summary)
        rc = ar_buf_printf(out, "\n**Summary:** %s\n", summary);
    if (rc == 0 && rk->unranked.n) {
        rc = ar_buf_puts(out, "\n**Unranked** (left out by the model): ");
        if (rc == 0)
            rc = join_strv(out, &rk->unranked);
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
    }
    return rc;
}

static int render_json(const struct ar_ranking *rk, const struct ar_result *res, struct ar_buf *out)
{
    json_t *doc = json_object();
    json_t *rv = res ? ar_result_to_value(res) : NULL;
    int rc = doc && (!res || rv) ? 0 : AR_ENOMEM;
    if (rc == 0) {
        json_object_set_new(doc, "schema", json_string(AR_PRIORITIZE_SCHEMA));
        json_object_set_new(doc, "ok", json_boolean(rk != NULL));
    }
    if (rc == 0 && rk) {
        /* The validated object first, in the model's key order. */
        const char *key;
        json_t *v;
        json_object_foreach(rk->value, key, v)
        {
            json_object_set(doc, key, v);
        }
        json_t *un = json_array();
        for (size_t i = 0; un && i < rk->unranked.n; i++)
            json_array_append_new(un, json_string(rk->unranked.v[i]));
        json_object_set_new(doc, "unranked", un ? un : json_null());
        json_object_set_new(doc, "total", json_integer((json_int_t)rk->total));
    }
    static const char *const run_keys[] = { "provider",    "model",    "repair",
                                            "tokens",      "cost_usd", "cost_source",
                                            "duration_ms", "calls",    "error" };
    for (size_t i = 0; rc == 0 && rv && i < sizeof(run_keys) / sizeof(run_keys[0]); i++) {
        json_t *v = json_object_get(rv, run_keys[i]);
        json_object_set(doc, run_keys[i], v ? v : json_null());
    }
    if (rc == 0) {
        char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
        rc = text ? ar_buf_puts(out, text) : AR_ENOMEM;
        if (rc == 0)
            rc = ar_buf_putc(out, '\n');
        free(text);
    }
    json_decref(rv);
    json_decref(doc);
    return rc;
}

int ar_prioritize_render(const struct ar_ranking *rk, const struct ar_result *res,
                         enum ar_prioritize_format fmt, int width, struct ar_buf *out)
{
    size_t from = out->len;
    int rc;
    switch (fmt) {
    case AR_PRIORITIZE_FORMAT_TEXT:
        rc = rk ? render_text(rk, width, out) : 0;
        return rc ? rc : ar_cli_text_neutralize(out, from); /* cli/terminal.h */
    case AR_PRIORITIZE_FORMAT_MARKDOWN:
        rc = rk ? render_markdown(rk, out) : 0;
        return rc ? rc : ar_cli_text_neutralize(out, from);
    case AR_PRIORITIZE_FORMAT_JSON:
        return render_json(rk, res, out);
    }
    return 0;
}
