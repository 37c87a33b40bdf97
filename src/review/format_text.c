/*
 * The review's text formats: text (for people, on a terminal) and github
 * (GitHub Actions workflow commands, read from a CI log). Both are shown, never
 * obeyed: format.c renders their control characters as text (util/shown.h).
 */
#include <stdlib.h>
#include <string.h>

#include "review/format.h"
#include "util/shown.h"

/* The workflow command of each severity's annotation. */
static const struct {
    const char *github_command;
} severity_out[AR_SEV_COUNT] = {
    [AR_SEV_CRITICAL] = { "error" }, [AR_SEV_HIGH] = { "error" },  [AR_SEV_MEDIUM] = { "warning" },
    [AR_SEV_LOW] = { "warning" },    [AR_SEV_INFO] = { "notice" },
};

/* ---- GitHub workflow commands ---- */

static int github_escape(const char *s, struct ar_buf *out, int property)
{
    for (; s && *s; s++) {
        int rc;
        switch (*s) {
        case '%':
            rc = ar_buf_puts(out, "%25");
            break;
        case '\r':
            rc = ar_buf_puts(out, "%0D");
            break;
        case '\n':
            rc = ar_buf_puts(out, "%0A");
            break;
        case ':':
            rc = property ? ar_buf_puts(out, "%3A") : ar_buf_putc(out, *s);
            break;
        case ',':
            rc = property ? ar_buf_puts(out, "%2C") : ar_buf_putc(out, *s);
            break;
        default:
            rc = ar_buf_putc(out, *s);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int ar_github_escape_data(const char *s, struct ar_buf *out)
{
    return github_escape(s, out, 0);
}

int ar_github_escape_property(const char *s, struct ar_buf *out)
{
    return github_escape(s, out, 1);
}

static int github_command(struct ar_buf *out, const char *cmd, const char *title, const char *data)
{
    int fail = 0;
    fail |= ar_buf_printf(out, "::%s title=", cmd);
    fail |= ar_github_escape_property(title, out);
    fail |= ar_buf_puts(out, "::");
    fail |= ar_github_escape_data(data, out);
    fail |= ar_buf_putc(out, '\n');
    return fail;
}

/* One finding; one with no place in the repository (placed 0) has no file=. */
static int github_finding(struct ar_buf *out, const struct ar_review_issue *is, int placed)
{
    int fail = 0;
    char title[128], agree[300], found[48] = "";
    if (is->n_found_by)
        snprintf(found, sizeof(found), " (%zu of %u)", is->n_found_by, is->panel_size);
    snprintf(title, sizeof(title), "agentrun review: %s%s%s%s", ar_severity_name(is->severity),
             found, is->outside_diff ? " (outside the diff)" : "",
             !placed     ? " (no location)"
             : !is->line ? " (whole file)"
                         : "");
    fail |= ar_buf_printf(out, "::%s ", severity_out[is->severity].github_command);
    if (placed) {
        fail |= ar_buf_puts(out, "file=");
        fail |= ar_github_escape_property(is->file, out);
        if (is->line)
            fail |= ar_buf_printf(out, ",line=%lld", (long long)is->line);
        fail |= ar_buf_putc(out, ',');
    }
    fail |= ar_buf_puts(out, "title=");
    fail |= ar_github_escape_property(title, out);
    fail |= ar_buf_puts(out, "::");
    fail |= ar_github_escape_data(is->message, out);
    if (is->suggestion) {
        fail |= ar_github_escape_data("\n\nSuggestion: ", out);
        fail |= ar_github_escape_data(is->suggestion, out);
    }
    if (ar_rf_agreement(is, agree, sizeof(agree))[0]) {
        fail |= ar_github_escape_data("\n\n", out);
        fail |= ar_github_escape_data(agree, out);
    }
    fail |= ar_buf_putc(out, '\n');
    return fail;
}

/*
 * GitHub shows at most AR_GITHUB_MAX_ANNOTATIONS annotations of each level per
 * step, and drops the rest without a word. So what decides the gate comes
 * first: the verdict, a failure, each changed file not reviewed, the findings
 * with no location; then the findings, most severe first.
 */
int ar_rf_render_github(const struct ar_review_report *rep, struct ar_buf *out)
{
    int fail = 0;
    const struct ar_review *rv = rep->rv;
    const struct ar_review_verdict *v = rep->verdict;
    char line[800];
    size_t errors = rv->n_unplaced + v->by_severity[AR_SEV_CRITICAL] + v->by_severity[AR_SEV_HIGH];
    for (size_t i = 0; i < ar_rf_n_cover(rep); i++)
        errors += ar_rf_blocks(ar_rf_cover_at(rep, i));
    snprintf(line, sizeof(line), "agentrun review: %s", ar_rf_verdict_name(v));
    if (!rep->reviewed && v->exit_status == 0) {
        fail |= github_command(out, "notice", "agentrun review", "nothing to review");
    } else {
        const char *summary = rv->summary && *rv->summary ? rv->summary : ar_rf_verdict_name(v);
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        fail |= ar_buf_puts(&b, summary);
        if (v->n_unreviewed)
            fail |= ar_buf_printf(&b, "\n%zu changed file%s not reviewed: the review cannot pass.",
                                  v->n_unreviewed, v->n_unreviewed == 1 ? "" : "s");
        if (errors + 1 > AR_GITHUB_MAX_ANNOTATIONS)
            fail |= ar_buf_printf(&b,
                                  "\n%zu error annotations: GitHub shows %d per step; the json or "
                                  "sarif output has them all.",
                                  errors, AR_GITHUB_MAX_ANNOTATIONS);
        fail |=
            github_command(out, v->exit_status == 0 ? "notice" : "error", line, ar_buf_cstr(&b));
        ar_buf_finish(&b);
    }
    if (rv->failed || rv->degraded) {
        ar_review_error_text(rv, line, sizeof(line));
        fail |= github_command(out, rv->failed ? "error" : "warning",
                               rv->failed ? "agentrun review failed" : "agentrun review degraded",
                               line);
    }
    for (size_t i = 0; i < ar_rf_n_cover(rep); i++) {
        const struct ar_review_file *f = ar_rf_cover_at(rep, i);
        if (!ar_rf_blocks(f))
            continue;
        ar_rf_cover_message(f, line, sizeof(line));
        fail |= ar_buf_puts(out, "::error file=");
        fail |= ar_github_escape_property(ar_rf_cover_path(f), out);
        fail |= ar_buf_puts(out, ",title=agentrun review%3A not reviewed::");
        fail |= ar_github_escape_data(line, out);
        fail |= ar_buf_putc(out, '\n');
    }
    if (rep->coverage && rep->coverage->n_excluded) {
        struct ar_buf b;
        ar_buf_init(&b, AR_BUF_UNLIMITED);
        const char *sep = "";
        for (size_t i = 0; i < ar_rf_n_cover(rep); i++) {
            const struct ar_review_file *f = ar_rf_cover_at(rep, i);
            if (f->status != AR_COVER_REVIEWED && f->rule) {
                fail |= ar_buf_printf(&b, "%s%s (%s)", sep, ar_rf_cover_path(f), f->rule);
                sep = ", ";
            }
        }
        fail |= github_command(out, "notice", "agentrun review: left out by your rules",
                               ar_buf_cstr(&b));
        ar_buf_finish(&b);
    }
    for (size_t i = 0; i < rv->n_unplaced; i++)
        fail |= github_finding(out, &rv->unplaced[i], 0);
    for (int sev = 0; sev < AR_SEV_COUNT; sev++)
        for (size_t i = 0; i < rv->n_issues; i++)
            if ((int)rv->issues[i].severity == sev)
                fail |= github_finding(out, &rv->issues[i], 1);
    return fail ? AR_ENOMEM : 0;
}

/* ---- text ---- */

/* Continuation lines of a multi-line message, under it: a line the model wrote never
 * starts one of ours (nor a CI workflow command, util/shown.h). */
#define TEXT_CONT "    | "

/* A string of the change's or the model's: data, never a line of its own (shown.h). */
static int put_data(struct ar_buf *out, const char *s)
{
    return ar_shown_data(out, s, strlen(s), NULL);
}

/* The same, its line breaks kept as continuation lines. */
static int put_indented(struct ar_buf *out, const char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '\n')
        n--;
    return ar_shown_data(out, s, n, TEXT_CONT);
}

static int text_finding(struct ar_buf *out, const struct ar_review_issue *is, int placed)
{
    int fail = 0;
    if (!placed) {
        fail |= ar_buf_puts(out, "(no location: ");
        fail |= put_data(out, is->file ? is->file : "no file");
        fail |= ar_buf_puts(out, "): ");
    } else {
        fail |= put_data(out, is->file);
        if (is->line)
            fail |= ar_buf_printf(out, ":%lld", (long long)is->line);
        fail |= ar_buf_puts(out, ": ");
    }
    fail |= ar_buf_printf(out, "%s: ", ar_severity_name(is->severity));
    fail |= put_indented(out, is->message);
    if (is->outside_diff)
        fail |= ar_buf_puts(out, " (outside the diff)");
    fail |= ar_buf_putc(out, '\n');
    if (is->suggestion) {
        fail |= ar_buf_puts(out, "    suggestion: ");
        fail |= put_indented(out, is->suggestion);
        fail |= ar_buf_putc(out, '\n');
    }
    char agree[300];
    if (ar_rf_agreement(is, agree, sizeof(agree))[0]) {
        fail |= ar_buf_puts(out, "    ");
        fail |= put_data(out, agree);
        fail |= ar_buf_putc(out, '\n');
    }
    return fail;
}

/* Tokens and cost, as the summary says them: "1200 input + 80 output tokens, $0.0123". */
static int text_spend(struct ar_buf *out, const struct ar_usage *u, double cost,
                      enum ar_cost_source src)
{
    int fail = ar_buf_printf(out, "%llu input + %llu output tokens, ",
                             (unsigned long long)(u->input + u->cache_read + u->cache_write),
                             (unsigned long long)u->output);
    if (src == AR_COST_UNKNOWN)
        fail |= ar_buf_puts(out, "cost unknown");
    else
        fail |= ar_buf_printf(out, "$%.4f%s", cost, src == AR_COST_TABLE ? " (estimated)" : "");
    return fail;
}

/* A panel's members: who answered, what each spent, and the panel's total. */
static int text_panel(const struct ar_review_report *rep, struct ar_buf *out)
{
    const struct ar_review_panel *p = rep->panel;
    const struct ar_review *rv = rep->rv;
    int fail = ar_buf_printf(out, "panel: %zu of %zu members answered (quorum %u)\n", p->answered,
                             p->n_members, p->quorum);
    for (size_t m = 0; m < p->n_members; m++) {
        const struct ar_review_member *mb = &p->members[m];
        fail |= ar_buf_printf(out, "  %s", mb->provider);
        if (mb->model) {
            fail |= ar_buf_puts(out, " (");
            fail |= put_data(out, mb->model);
            fail |= ar_buf_putc(out, ')');
        }
        fail |= ar_buf_printf(out, ": %s", ar_review_member_status_name(mb->status));
        if (mb->status == AR_MEMBER_FAILED) {
            fail |= ar_buf_printf(out, " (%s: ", ar_strerror_name(mb->error.code));
            fail |= put_data(out, mb->error.msg[0] ? mb->error.msg : ar_strerror(mb->error.code));
            fail |= ar_buf_putc(out, ')');
        }
        fail |= ar_buf_printf(out, ", %zu finding%s, ", mb->findings, mb->findings == 1 ? "" : "s");
        if (!mb->calls)
            fail |= ar_buf_puts(out, "no call");
        else
            fail |= text_spend(out, &mb->usage, mb->cost_usd, mb->cost_source);
        fail |= ar_buf_putc(out, '\n');
    }
    fail |= ar_buf_puts(out, "  total: ");
    fail |= text_spend(out, &rv->usage, rv->cost_usd, rv->cost_source);
    fail |= ar_buf_puts(out, "\n\n");
    return fail;
}

/* The changed paths not reviewed: those that fail the review, then those a rule left
 * out. Returns how many lines it wrote; *fail is set when out of memory. */
static size_t text_coverage(const struct ar_review_report *rep, struct ar_buf *out, int *fail)
{
    size_t shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < ar_rf_n_cover(rep); i++) {
            const struct ar_review_file *f = ar_rf_cover_at(rep, i);
            if (f->status == AR_COVER_REVIEWED || ar_rf_blocks(f) != !pass)
                continue;
            *fail |= ar_buf_puts(out, pass == 0 ? "not reviewed: " : "left out: ");
            *fail |= put_data(out, ar_rf_cover_path(f));
            *fail |= ar_buf_puts(out, pass == 0 ? ": " : " (");
            *fail |= put_data(out, pass == 0 ? (f->why ? f->why : ar_review_cover_name(f->status))
                                             : f->rule);
            *fail |= ar_buf_puts(out, pass == 0 ? "\n" : ")\n");
            shown++;
        }
    return shown;
}

int ar_rf_render_text(const struct ar_review_report *rep, struct ar_buf *out)
{
    int fail = 0;
    const struct ar_review *rv = rep->rv;
    const struct ar_review_verdict *v = rep->verdict;
    if (!rep->reviewed && !rv->failed) { /* failed: it never ran (ar_review_result_from_error()) */
        fail |= ar_buf_printf(out, "nothing to review%s", rep->why_not ? ": " : "");
        fail |= put_data(out, rep->why_not ? rep->why_not : "");
        fail |= ar_buf_putc(out, '\n');
        if (ar_rf_n_cover(rep))
            fail |= ar_buf_putc(out, '\n');
        text_coverage(rep, out, &fail);
        if (v->n_unreviewed)
            fail |= ar_buf_printf(out, "\nverdict: %s (%zu changed file%s not reviewed)\n",
                                  ar_rf_verdict_name(v), v->n_unreviewed,
                                  v->n_unreviewed == 1 ? "" : "s");
        return fail ? AR_ENOMEM : 0;
    }
    for (size_t i = 0; i < rv->n_issues; i++)
        fail |= text_finding(out, &rv->issues[i], 1);
    for (size_t i = 0; i < rv->n_unplaced; i++)
        fail |= text_finding(out, &rv->unplaced[i], 0);
    if (rv->n_issues || rv->n_unplaced)
        fail |= ar_buf_putc(out, '\n');
    if (text_coverage(rep, out, &fail))
        fail |= ar_buf_putc(out, '\n');
    if (rv->summary && *rv->summary) {
        fail |= put_indented(out, rv->summary);
        fail |= ar_buf_puts(out, "\n\n");
    }
    if (rep->panel && rep->panel->n_members)
        fail |= text_panel(rep, out);
    fail |= ar_buf_printf(out, "verdict: %s", ar_rf_verdict_name(v));
    if (rv->failed) {
        char why[400];
        fail |= ar_buf_puts(out, " (");
        fail |= put_data(out, ar_review_error_text(rv, why, sizeof(why)));
        fail |= ar_buf_puts(out, ")\n");
        return fail ? AR_ENOMEM : 0;
    }
    size_t n = rv->n_issues + rv->n_unplaced;
    fail |= ar_buf_printf(out, " (%zu issue%s", n, n == 1 ? "" : "s");
    const char *sep = ": ";
    for (int s = 0; s < AR_SEV_COUNT; s++)
        if (v->by_severity[s]) {
            fail |= ar_buf_printf(out, "%s%zu %s", sep, v->by_severity[s], ar_severity_name(s));
            sep = ", ";
        }
    if (rep->fail_on == AR_FAIL_ON_NONE)
        fail |= ar_buf_puts(out, "; --fail-on none");
    else
        fail |= ar_buf_printf(out, "; %zu at or above %s", v->n_failing,
                              ar_severity_name(rep->fail_on));
    if (v->n_unreviewed)
        fail |= ar_buf_printf(out, "; %zu changed file%s not reviewed", v->n_unreviewed,
                              v->n_unreviewed == 1 ? "" : "s");
    if (rep->panel && rep->panel->n_members) {
        size_t below = 0;
        for (size_t i = 0; i < rv->n_issues + rv->n_unplaced; i++) {
            const struct ar_review_issue *is =
                i < rv->n_issues ? &rv->issues[i] : &rv->unplaced[i - rv->n_issues];
            below += !ar_review_counts(is);
        }
        if (below)
            fail |= ar_buf_printf(out, "; %zu below the quorum of %u, not counted", below,
                                  rep->panel->quorum);
        fail |= ar_buf_printf(out, "; %zu of %zu members answered", rep->panel->answered,
                              rep->panel->n_members);
    }
    if (!rv->passed)
        fail |= ar_buf_puts(out, "; the model did not pass it");
    if (rv->degraded)
        fail |= ar_buf_printf(out, "; degraded: %s",
                              rv->error.code == AR_ENOJSON ? AR_REVIEW_NO_JSON_SUMMARY
                                                           : AR_REVIEW_CONTRACT_SUMMARY);
    fail |= ar_buf_puts(out, ")\n");
    return fail ? AR_ENOMEM : 0;
}
