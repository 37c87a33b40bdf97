/*
 * A review panel (issue 61): the members' findings matched into one list, each
 * carrying who found it. The rule, in one place (docs/review.md, "A panel"):
 *
 * Two findings of different members are the same finding when
 *   - they name the same file (byte for byte, after ar_review_locate());
 *   - their lines are at most AR_PANEL_NEAR_LINES apart (a finding about the whole
 *     file, line 0, matches only another about the whole file);
 *   - their severities are at most AR_PANEL_SEVERITY_GAP levels apart;
 *   - their messages are similar: the Jaccard index of their word sets is at least
 *     AR_PANEL_MIN_SIMILARITY (ar_panel_similarity(): words are runs of letters and
 *     digits, lowercased, cut to their first 6 bytes; numbers, words under 3 bytes and
 *     a few stop words left out).
 * The findings are then joined greedily, the most similar pair first (ties: the
 * nearer lines, then the findings' canonical order: file, line, severity, message,
 * suggestion), never two findings of one member into one: each panel finding holds
 * at most one finding of each member. Its file, line, message and suggestion are
 * those of the most severe of them (ties: the lowest line, then the message), its
 * severity the highest reported, found_by its members in panel order.
 *
 * Nothing depends on the order of the members' findings or of the members themselves
 * (but found_by's order, which is the panel's): tests/unit/test_panel.c holds it to
 * that with random findings.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/provider.h"
#include "review/review.h"
#include "util/array.h"

/* ---- the spec ------------------------------------------------------------ */

void ar_panel_spec_finish(struct ar_panel_spec *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->models[i]);
    memset(s, 0, sizeof(*s));
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

int ar_panel_parse(const char *spec, unsigned allowed, struct ar_panel_spec *out,
                   struct ar_error *err)
{
    memset(out, 0, sizeof(*out));
    if (!spec)
        return ar_error_set(err, AR_EUSAGE, "panel", "the panel names no provider");
    const char *p = spec;
    for (;;) {
        while (is_blank(*p))
            p++;
        size_t len = strcspn(p, ",");
        size_t end = len;
        while (end && is_blank(p[end - 1]))
            end--;
        if (!end) {
            ar_panel_spec_finish(out);
            return ar_error_set(err, AR_EUSAGE, "panel",
                                "the panel '%.200s' has an empty member: give providers "
                                "separated by commas (claude,codex=MODEL,gemini)",
                                spec);
        }
        const char *eq = memchr(p, '=', end);
        size_t name_len = eq ? (size_t)(eq - p) : end;
        while (name_len && is_blank(p[name_len - 1]))
            name_len--;
        char name[64];
        if (name_len >= sizeof(name) || !name_len) {
            ar_panel_spec_finish(out);
            return ar_error_set(err, AR_EUSAGE, "panel",
                                "the panel '%.200s' has a member with no provider name", spec);
        }
        memcpy(name, p, name_len);
        name[name_len] = '\0';
        if (strcmp(name, "auto") == 0) {
            ar_panel_spec_finish(out);
            return ar_error_set(err, AR_EUSAGE, "panel",
                                "a panel names its providers: 'auto' is not a member");
        }
        const struct ar_provider *prov = ar_provider_resolve_within(name, allowed, NULL, 0, err);
        if (!prov) {
            ar_panel_spec_finish(out);
            if (strcmp(err->where, "providers") != 0)
                snprintf(err->where, sizeof(err->where), "panel");
            return AR_EUSAGE;
        }
        for (size_t i = 0; i < out->n; i++)
            if (out->providers[i] == prov) {
                ar_panel_spec_finish(out);
                return ar_error_set(err, AR_EUSAGE, "panel",
                                    "the panel names '%s' twice: each provider is one member",
                                    prov->name);
            }
        if (out->n == AR_REVIEW_MAX_PANEL) {
            ar_panel_spec_finish(out);
            return ar_error_set(err, AR_EUSAGE, "panel", "a panel has at most %d members",
                                AR_REVIEW_MAX_PANEL);
        }
        char *model = NULL;
        if (eq) {
            const char *m = eq + 1;
            size_t mlen = (size_t)(p + end - m);
            while (mlen && is_blank(*m))
                m++, mlen--;
            if (!mlen || memchr(m, '=', mlen)) {
                ar_panel_spec_finish(out);
                return ar_error_set(err, AR_EUSAGE, "panel",
                                    "the panel member '%s' gives no usable model after '='",
                                    prov->name);
            }
            if (!(model = strndup(m, mlen))) {
                ar_panel_spec_finish(out);
                return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
            }
        }
        out->providers[out->n] = prov;
        out->names[out->n] = prov->name;
        out->models[out->n++] = model;
        if (!p[len])
            break;
        p += len + 1;
    }
    return 0;
}

/* ---- the words of a message ---------------------------------------------- */

#define STEM_LEN 6

struct words {
    char (*w)[STEM_LEN + 1];
    size_t n;
};

static int is_stop(const char *w)
{
    static const char *const stop[] = {
        "the",  "and",   "for",    "with",  "this",  "that", "from", "into", "are",  "was",
        "were", "not",   "can",    "may",   "which", "when", "its",  "has",  "have", "been",
        "will", "could", "should", "there", "their", "than", "then", "also", "but",  "any",
    };
    for (size_t i = 0; i < sizeof(stop) / sizeof(stop[0]); i++)
        if (strncmp(w, stop[i], STEM_LEN) == 0 && strlen(stop[i]) == strlen(w))
            return 1;
    return 0;
}

static int cmp_word(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The sorted, distinct words of s. Returns 0 or AR_ENOMEM. */
static int words_of(const char *s, struct words *out)
{
    out->w = NULL;
    out->n = 0;
    size_t len = s ? strlen(s) : 0, cap = len / 2 + 1;
    out->w = malloc(cap * sizeof(*out->w));
    if (!out->w)
        return AR_ENOMEM;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        /* A word: ASCII letters and digits, and every byte of a non-ASCII character. */
        while (*p && !(isalnum(*p) || *p >= 0x80))
            p++;
        const unsigned char *start = p;
        int digits_only = 1;
        while (*p && (isalnum(*p) || *p >= 0x80)) {
            digits_only &= isdigit(*p) != 0;
            p++;
        }
        size_t wl = (size_t)(p - start);
        if (wl < 3 || digits_only)
            continue;
        char word[64];
        size_t keep = wl < sizeof(word) - 1 ? wl : sizeof(word) - 1;
        for (size_t i = 0; i < keep; i++)
            word[i] = (char)tolower(start[i]);
        word[keep] = '\0';
        if (is_stop(word))
            continue;
        word[keep < STEM_LEN ? keep : STEM_LEN] = '\0';
        memcpy(out->w[out->n++], word, STEM_LEN + 1);
    }
    if (out->n)
        ar_sort(out->w, out->n, sizeof(*out->w), cmp_word);
    size_t k = 0;
    for (size_t i = 0; i < out->n; i++)
        if (!k || strcmp(out->w[k - 1], out->w[i]) != 0)
            memmove(out->w[k++], out->w[i], STEM_LEN + 1);
    out->n = k;
    return 0;
}

static double jaccard(const struct words *a, const struct words *b)
{
    if (!a->n && !b->n)
        return 1.0;
    size_t i = 0, j = 0, both = 0;
    while (i < a->n && j < b->n) {
        int c = strcmp(a->w[i], b->w[j]);
        both += c == 0;
        i += c <= 0;
        j += c >= 0;
    }
    return (double)both / (double)(a->n + b->n - both);
}

double ar_panel_similarity(const char *a, const char *b)
{
    struct words wa, wb;
    if (words_of(a, &wa) != 0)
        return 0;
    if (words_of(b, &wb) != 0) {
        free(wa.w);
        return 0;
    }
    double j = jaccard(&wa, &wb);
    free(wa.w);
    free(wb.w);
    return j;
}

/* 1 when a and b may be one finding by place and severity (the message aside). */
static int near(const struct ar_review_issue *a, const struct ar_review_issue *b)
{
    if (strcmp(a->file ? a->file : "", b->file ? b->file : "") != 0)
        return 0;
    if ((a->line == 0) != (b->line == 0))
        return 0;
    int64_t d = a->line > b->line ? a->line - b->line : b->line - a->line;
    int s = (int)a->severity - (int)b->severity;
    return d <= AR_PANEL_NEAR_LINES && (s < 0 ? -s : s) <= AR_PANEL_SEVERITY_GAP;
}

int ar_panel_same(const struct ar_review_issue *a, const struct ar_review_issue *b)
{
    return near(a, b) && ar_panel_similarity(a->message, b->message) >= AR_PANEL_MIN_SIMILARITY;
}

/* ---- the matching --------------------------------------------------------- */

struct entry {
    const struct ar_review_issue *is;
    size_t member;
    const char *name; /* the member's: ties are broken by name, never by panel order */
    struct words words;
    size_t root;   /* union-find */
    unsigned mask; /* the root's members */
};

struct edge {
    double score;
    int64_t dist;
    size_t a, b; /* a < b, places in the canonical order */
};

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* The canonical order of findings: by what they say, never by who said it first. */
static int cmp_content(const struct ar_review_issue *a, const struct ar_review_issue *b)
{
    int c = cmp_str(a->file, b->file);
    if (c)
        return c;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->severity != b->severity)
        return a->severity < b->severity ? -1 : 1;
    c = cmp_str(a->message, b->message);
    if (c)
        return c;
    if (!a->suggestion != !b->suggestion)
        return a->suggestion ? 1 : -1;
    return cmp_str(a->suggestion, b->suggestion);
}

static int cmp_entry(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    int c = cmp_content(a->is, b->is);
    return c ? c : strcmp(a->name, b->name);
}

static int cmp_edge(const void *pa, const void *pb)
{
    const struct edge *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->dist != b->dist)
        return a->dist < b->dist ? -1 : 1;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static size_t find_root(struct entry *e, size_t i)
{
    while (e[i].root != i) {
        e[i].root = e[e[i].root].root;
        i = e[i].root;
    }
    return i;
}

/* The most severe finding first, then the lowest line, then the message. */
static int better_rep(const struct ar_review_issue *a, const struct ar_review_issue *b)
{
    if (a->severity != b->severity)
        return a->severity < b->severity;
    if (a->line != b->line)
        return a->line < b->line;
    return cmp_content(a, b) < 0;
}

/* The panel's findings in order: canonical, then by who found them. */
static int cmp_found(const void *pa, const void *pb)
{
    const struct ar_review_issue *a = pa, *b = pb;
    int c = cmp_content(a, b);
    for (size_t i = 0; !c && i < a->n_found_by && i < b->n_found_by; i++)
        c = strcmp(a->found_by[i], b->found_by[i]);
    if (!c && a->n_found_by != b->n_found_by)
        c = a->n_found_by < b->n_found_by ? -1 : 1;
    return c;
}

/*
 * Matches the findings list `which` (0: issues, 1: unplaced) of the n members into
 * *out (new copies, with found_by). Returns 0 or AR_ENOMEM.
 */
static int match_list(const struct ar_review *members, size_t n, const char *const *names,
                      int which, struct ar_review_issue **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t total = 0;
    for (size_t m = 0; m < n; m++) {
        size_t cnt;
        ar_review_list(&members[m], which, &cnt);
        total += cnt;
    }
    if (!total)
        return 0;
    struct entry *e = calloc(total, sizeof(*e));
    if (!e)
        return AR_ENOMEM;
    int rc = 0;
    size_t k = 0;
    for (size_t m = 0; m < n; m++) {
        size_t cnt;
        const struct ar_review_issue *v = ar_review_list(&members[m], which, &cnt);
        for (size_t i = 0; i < cnt; i++, k++) {
            e[k].is = &v[i];
            e[k].member = m;
            e[k].name = names[m];
        }
    }
    ar_sort(e, total, sizeof(*e), cmp_entry);
    for (size_t i = 0; i < total && !rc; i++) {
        e[i].root = i;
        e[i].mask = 1u << e[i].member;
        rc = words_of(e[i].is->message, &e[i].words);
    }
    /* The candidate pairs: in one file (the canonical order keeps a file together). */
    struct edge *edges = NULL;
    size_t n_edges = 0, cap = 0;
    for (size_t i = 0; i < total && !rc; i++)
        for (size_t j = i + 1; j < total && !rc; j++) {
            if (cmp_str(e[i].is->file, e[j].is->file) != 0)
                break;
            if (e[i].member == e[j].member || !near(e[i].is, e[j].is))
                continue;
            double score = jaccard(&e[i].words, &e[j].words);
            if (score < AR_PANEL_MIN_SIMILARITY)
                continue;
            if (n_edges == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                struct edge *ne = realloc(edges, ncap * sizeof(*ne));
                if (!ne) {
                    rc = AR_ENOMEM;
                    break;
                }
                edges = ne;
                cap = ncap;
            }
            int64_t d = e[i].is->line - e[j].is->line;
            edges[n_edges++] = (struct edge){ score, d < 0 ? -d : d, i, j };
        }
    if (!rc && n_edges)
        ar_sort(edges, n_edges, sizeof(*edges), cmp_edge);
    for (size_t x = 0; x < n_edges && !rc; x++) {
        size_t ra = find_root(e, edges[x].a), rb = find_root(e, edges[x].b);
        if (ra == rb || (e[ra].mask & e[rb].mask))
            continue;
        size_t lo = ra < rb ? ra : rb, hi = ra < rb ? rb : ra;
        e[hi].root = lo;
        e[lo].mask |= e[hi].mask;
    }
    free(edges);
    /* One panel finding per root, its representative the best of its entries; in
     * canonical order of the roots (the smallest place of each cluster). */
    size_t *rep = rc ? NULL : malloc(total * sizeof(*rep));
    if (!rc && !rep)
        rc = AR_ENOMEM;
    for (size_t i = 0; i < total && !rc; i++)
        rep[i] = i;
    for (size_t i = 0; i < total && !rc; i++) {
        size_t r = find_root(e, i);
        if (better_rep(e[i].is, e[rep[r]].is))
            rep[r] = i;
    }
    struct ar_review_issue *v = rc ? NULL : calloc(total, sizeof(*v));
    if (!rc && !v)
        rc = AR_ENOMEM;
    size_t o = 0;
    for (size_t i = 0; i < total && !rc; i++) {
        if (find_root(e, i) != i)
            continue;
        struct ar_review_issue *is = &v[o];
        rc = ar_review_issue_copy(is, e[rep[i]].is);
        if (rc)
            break;
        o++;
        is->fingerprint[0] = '\0';
        is->panel_size = (unsigned)n;
        unsigned mask = e[i].mask;
        size_t cnt = 0;
        for (size_t m = 0; m < n; m++)
            cnt += (mask >> m) & 1u;
        is->found_by = calloc(cnt, sizeof(*is->found_by));
        if (!is->found_by) {
            rc = AR_ENOMEM;
            break;
        }
        for (size_t m = 0; m < n && !rc; m++)
            if ((mask >> m) & 1u) {
                if (!(is->found_by[is->n_found_by] = strdup(names[m])))
                    rc = AR_ENOMEM;
                else
                    is->n_found_by++;
            }
    }
    for (size_t i = 0; i < total; i++)
        free(e[i].words.w);
    free(e);
    free(rep);
    if (rc) {
        for (size_t i = 0; i < o; i++)
            ar_review_issue_free(&v[i]);
        free(v);
        return rc;
    }
    /* In the order of the review: by file, then line (a representative may sit on
     * another line than its cluster's first finding). */
    ar_sort(v, o, sizeof(*v), cmp_found);
    *out = v;
    *n_out = o;
    return 0;
}

int ar_panel_match(const struct ar_review *members, size_t n, const char *const *names,
                   struct ar_review *out)
{
    struct ar_review_issue *issues = NULL, *unplaced = NULL;
    size_t n_issues = 0, n_unplaced = 0;
    int rc = match_list(members, n, names, 0, &issues, &n_issues);
    if (!rc)
        rc = match_list(members, n, names, 1, &unplaced, &n_unplaced);
    if (rc) {
        for (size_t i = 0; i < n_issues; i++)
            ar_review_issue_free(&issues[i]);
        free(issues);
        return rc;
    }
    for (size_t i = 0; i < out->n_issues; i++)
        ar_review_issue_free(&out->issues[i]);
    free(out->issues);
    for (size_t i = 0; i < out->n_unplaced; i++)
        ar_review_issue_free(&out->unplaced[i]);
    free(out->unplaced);
    out->issues = issues;
    out->n_issues = n_issues;
    out->unplaced = unplaced;
    out->n_unplaced = n_unplaced;
    out->dropped = n_unplaced;
    return ar_review_fingerprint_all(out);
}

void ar_panel_quorum(struct ar_review *rv, unsigned quorum)
{
    for (size_t i = 0; i < rv->n_issues; i++)
        rv->issues[i].below_quorum = rv->issues[i].n_found_by < quorum;
    for (size_t i = 0; i < rv->n_unplaced; i++)
        rv->unplaced[i].below_quorum = rv->unplaced[i].n_found_by < quorum;
}

int ar_review_counts(const struct ar_review_issue *is)
{
    return !is->below_quorum || is->severity == AR_SEV_CRITICAL;
}

const char *ar_review_member_status_name(int status)
{
    switch (status) {
    case AR_MEMBER_ANSWERED:
        return "answered";
    case AR_MEMBER_FAILED:
        return "failed";
    case AR_MEMBER_NOT_ASKED:
        return "not_asked";
    default:
        return "unknown";
    }
}

int ar_panel_members(struct ar_review_panel *p, const struct ar_review *mv,
                     const struct ar_review_coverage *mc, size_t n)
{
    p->answered = 0;
    for (size_t m = 0; m < n && m < p->n_members; m++) {
        struct ar_review_member *mb = &p->members[m];
        const struct ar_review *rv = &mv[m];
        mb->status = rv->failed   ? AR_MEMBER_FAILED
                     : rv->chunks ? AR_MEMBER_ANSWERED
                                  : AR_MEMBER_NOT_ASKED;
        mb->error = rv->failed ? rv->error : (struct ar_error)AR_ERROR_INIT;
        mb->findings = rv->n_issues + rv->n_unplaced;
        mb->files_reviewed = mc[m].n_reviewed;
        mb->usage = rv->usage;
        mb->cost_usd = rv->cost_usd;
        mb->cost_source = rv->cost_source;
        mb->duration_ms = rv->duration_ms;
        if (rv->model && (!mb->model || strcmp(mb->model, rv->model) != 0)) {
            char *model = strdup(rv->model);
            if (!model)
                return AR_ENOMEM;
            free(mb->model);
            mb->model = model;
        }
        p->answered += mb->status == AR_MEMBER_ANSWERED;
    }
    return 0;
}

int ar_panel_verdict_inputs(struct ar_review *merged, const struct ar_review_panel *p,
                            const struct ar_review *mv)
{
    int passed = 1;
    const struct ar_review *first_failed = NULL, *first_degraded = NULL;
    const char *failed_name = NULL;
    int rc = 0;
    for (size_t m = 0; m < p->n_members && !rc; m++) {
        const struct ar_review *rv = &mv[m];
        if (rv->failed) {
            if (!first_failed) {
                first_failed = rv;
                failed_name = p->members[m].provider;
            }
            char note[640], text[320];
            snprintf(note, sizeof(note), "panel: %s did not answer: %s", p->members[m].provider,
                     ar_review_error_text(rv, text, sizeof(text)));
            rc = ar_review_add_note(merged, note);
            continue;
        }
        passed &= rv->passed != 0;
        if (rv->degraded && !first_degraded)
            first_degraded = rv;
    }
    if (rc)
        return rc;
    if (p->answered < p->quorum && first_failed) {
        merged->failed = 1;
        merged->passed = 0;
        merged->error = first_failed->error;
        snprintf(merged->error.msg, sizeof(merged->error.msg),
                 "%zu of %zu panel members answered, fewer than the quorum of %u; %s: %.170s",
                 p->answered, p->n_members, p->quorum, failed_name, first_failed->error.msg);
        /* The failure is that member's: its provider is the one to fix (a login…). */
        char *prov = strdup(failed_name);
        if (!prov)
            return AR_ENOMEM;
        free(merged->provider);
        merged->provider = prov;
        free(merged->model);
        merged->model = first_failed->model ? strdup(first_failed->model) : NULL;
        return 0;
    }
    merged->failed = 0;
    merged->passed = passed;
    merged->error = first_degraded ? first_degraded->error : (struct ar_error)AR_ERROR_INIT;
    return 0;
}
