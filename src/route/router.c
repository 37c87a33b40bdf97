/*
 * The router: exact and keyword tiers, the check of the model's answer and
 * its interpretation against the manifest.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "route/route.h"
#include "util/array.h"

/* Where a query word was found in an item, and what that is worth. */
enum place { PLACE_NONE = 0, PLACE_DESCRIPTION, PLACE_KEYWORD, PLACE_NAME, N_PLACES };

static const double place_weight[N_PLACES] = { 0.0, 0.4, 0.8, 1.0 };
static const char *const place_label[N_PLACES] = { "", "description", "keyword", "name" };

/*
 * Words that say nothing about which task is meant. Kept short on purpose:
 * a word dropped here can never help a match. Sorted for bsearch.
 */
static const char *const stopwords[] = {
    "a",   "about", "am",   "an",    "and",   "any",  "are",  "as",     "at",    "be",
    "but", "by",    "can",  "could", "do",    "does", "for",  "from",   "get",   "help",
    "how", "i",     "in",   "into",  "is",    "it",   "its",  "let",    "like",  "make",
    "me",  "my",    "need", "of",    "on",    "or",   "our",  "please", "set",   "should",
    "so",  "some",  "that", "the",   "their", "them", "then", "there",  "this",  "to",
    "up",  "us",    "use",  "using", "want",  "we",   "what", "when",   "where", "which",
    "who", "why",   "will", "with",  "would", "you",  "your",
};

static const char *const kind_names[] = { "none", "exact", "keyword", "discovery", "error" };

const char *ar_route_kind_name(enum ar_route_kind k)
{
    return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "unknown";
}

void ar_route_init(struct ar_route *r)
{
    memset(r, 0, sizeof(*r));
    ar_strv_init(&r->notes);
}

static void clear_matches(struct ar_route *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->matches[i].name);
        free(r->matches[i].reasoning);
    }
    r->n = 0;
}

void ar_route_finish(struct ar_route *r)
{
    clear_matches(r);
    free(r->matches);
    free(r->error);
    ar_strv_finish(&r->notes);
    ar_route_init(r);
}

static int add_match(struct ar_route *r, enum ar_route_type type, const char *name,
                     double confidence, const char *reasoning)
{
    if (ar_array_reserve(&r->matches, &r->cap, r->n + 1, sizeof(*r->matches), 8) < 0)
        return AR_ENOMEM;
    struct ar_route_match *mt = &r->matches[r->n];
    memset(mt, 0, sizeof(*mt));
    mt->type = type;
    mt->confidence = confidence;
    mt->name = strdup(name);
    mt->reasoning = strdup(reasoning);
    if (!mt->name || !mt->reasoning) {
        free(mt->name);
        free(mt->reasoning);
        return AR_ENOMEM;
    }
    r->n++;
    return 0;
}

/* ---- tier 1 ---- */

/* Equal after trimming, collapsing inner whitespace and ignoring ASCII case. */
static int same_phrase(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r')
            a++;
        while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        /* Compare one word. */
        while (*a && *b && !strchr(" \t\n\r", *a) && !strchr(" \t\n\r", *b)) {
            unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
            if (x >= 'A' && x <= 'Z')
                x = (unsigned char)(x - 'A' + 'a');
            if (y >= 'A' && y <= 'Z')
                y = (unsigned char)(y - 'A' + 'a');
            if (x != y)
                return 0;
            a++;
            b++;
        }
        int end_a = !*a || strchr(" \t\n\r", *a), end_b = !*b || strchr(" \t\n\r", *b);
        if (!end_a || !end_b)
            return 0;
    }
}

static int route_exact(const struct ar_manifest *m, const char *query, struct ar_route *r)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct ar_route_item *it = &m->items[i];
        char why[320];
        int hit = same_phrase(query, it->name);
        if (hit)
            snprintf(why, sizeof(why), "query equals the %s name", ar_route_type_name(it->type));
        for (size_t a = 0; !hit && a < it->aliases.n; a++)
            if (same_phrase(query, it->aliases.v[a])) {
                hit = 1;
                snprintf(why, sizeof(why), "query equals the alias \"%.200s\"", it->aliases.v[a]);
            }
        if (hit && add_match(r, it->type, it->name, 1.0, why) < 0)
            return AR_ENOMEM;
    }
    return r->n > 0;
}

/* ---- tier 2 ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_word_byte(unsigned char c)
{
    /* Bytes of non-ASCII characters count as letters, so words in any
     * language tokenize (compared bytewise, without case folding). */
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/*
 * Splits text into normalized words appended to out: lowercase, stopwords
 * dropped, a plural folded ("portals" -> "portal", "policies" -> "policy";
 * not "ss", not words of three letters or fewer). Duplicates are kept out.
 */
static int tokenize(const char *text, struct ar_strv *out)
{
    const unsigned char *p = (const unsigned char *)text;
    char word[128];
    while (*p) {
        while (*p && !is_word_byte(*p))
            p++;
        size_t n = 0;
        while (*p && is_word_byte(*p)) {
            if (n < sizeof(word) - 1)
                word[n++] = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
            p++;
        }
        if (n == 0)
            continue;
        word[n] = '\0';
        const char *key = word;
        if (bsearch(&key, stopwords, sizeof(stopwords) / sizeof(stopwords[0]), sizeof(char *),
                    cmp_str))
            continue;
        if (n > 4 && strcmp(word + n - 3, "ies") == 0)
            strcpy(word + n - 3, "y");
        else if (n > 3 && word[n - 1] == 's' && word[n - 2] != 's')
            word[n - 1] = '\0';
        int seen = 0;
        for (size_t i = 0; i < out->n && !seen; i++)
            seen = strcmp(out->v[i], word) == 0;
        if (!seen && ar_strv_push(out, word) < 0)
            return AR_ENOMEM;
    }
    return 0;
}

static int has_word(const struct ar_strv *sv, const char *w)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], w) == 0)
            return 1;
    return 0;
}

double ar_route_score(const struct ar_route_item *item, const char *query, struct ar_buf *why)
{
    struct ar_strv q = AR_STRV_INIT, words[N_PLACES];
    for (int p = 0; p < N_PLACES; p++)
        ar_strv_init(&words[p]);
    double sum = 0;
    int rc = tokenize(query, &q);
    if (rc == 0)
        rc = tokenize(item->name, &words[PLACE_NAME]);
    for (size_t i = 0; rc == 0 && i < item->aliases.n; i++)
        rc = tokenize(item->aliases.v[i], &words[PLACE_NAME]);
    for (size_t i = 0; rc == 0 && i < item->keywords.n; i++)
        rc = tokenize(item->keywords.v[i], &words[PLACE_KEYWORD]);
    if (rc == 0)
        rc = tokenize(item->description, &words[PLACE_DESCRIPTION]);
    enum place *best = calloc(q.n ? q.n : 1, sizeof(*best));
    if (rc == 0 && best && q.n) {
        for (size_t i = 0; i < q.n; i++) {
            for (int p = N_PLACES - 1; p > PLACE_NONE && !best[i]; p--)
                if (has_word(&words[p], q.v[i]))
                    best[i] = (enum place)p;
            sum += place_weight[best[i]];
        }
        /* Rounded so that sums like 0.4 + 0.8 + 0.3 compare with the
         * threshold the way a person reading the docs expects. */
        sum = round(sum / (double)q.n * 1000.0) / 1000.0;
        /* why may already hold the caller's prefix: count groups ourselves. */
        int groups = 0;
        for (int p = N_PLACES - 1; why && p > PLACE_NONE; p--) {
            int first = 1;
            for (size_t i = 0; i < q.n; i++)
                if (best[i] == (enum place)p) {
                    ar_buf_printf(why, "%s%s", first ? (groups ? "; " : "matched ") : ", ", q.v[i]);
                    first = 0;
                }
            if (!first) {
                ar_buf_printf(why, " (%s)", place_label[p]);
                groups++;
            }
        }
    }
    free(best);
    ar_strv_finish(&q);
    for (int p = 0; p < N_PLACES; p++)
        ar_strv_finish(&words[p]);
    return sum;
}

struct scored {
    size_t item;
    double score;
};

static int cmp_scored(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    /* Items are stored tasks first, each list in manifest order. */
    return x->item < y->item ? -1 : x->item > y->item;
}

static int route_keyword(const struct ar_manifest *m, const char *query, double min_score,
                         struct ar_route *r)
{
    struct scored *s = calloc(m->n ? m->n : 1, sizeof(*s));
    if (!s)
        return AR_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        double score = ar_route_score(&m->items[i], query, NULL);
        if (score > 0 && score >= min_score)
            s[n++] = (struct scored){ i, score };
    }
    ar_sort(s, n, sizeof(*s), cmp_scored);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct ar_route_item *it = &m->items[s[i].item];
        struct ar_buf why;
        ar_buf_init(&why, 4096);
        ar_buf_printf(&why, "keyword score %.2f: ", s[i].score);
        ar_route_score(it, query, &why);
        rc = add_match(r, it->type, it->name, s[i].score, ar_buf_cstr(&why));
        ar_buf_finish(&why);
    }
    free(s);
    return rc < 0 ? rc : n > 0;
}

int ar_route_local(const struct ar_manifest *m, const char *query, double min_score,
                   struct ar_route *r)
{
    int rc = route_exact(m, query, r);
    if (rc != 0) {
        if (rc > 0)
            r->kind = AR_ROUTE_EXACT;
        return rc;
    }
    rc = route_keyword(m, query, min_score, r);
    if (rc > 0)
        r->kind = AR_ROUTE_KEYWORD;
    return rc;
}

/* ---- tier 3: the model's answer ---- */

struct sink {
    void (*add)(void *sink, const char *msg);
    void *arg;
};

static void say(struct sink *s, const char *fmt, ...) AR_PRINTF(2, 3);

static void say(struct sink *s, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    s->add(s->arg, msg);
}

static char *preview(json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s && strlen(s) > 60)
        strcpy(s + 57, "...");
    return s;
}

static void check_match(struct sink *s, size_t i, json_t *mt)
{
    if (!json_is_object(mt)) {
        char *got = preview(mt);
        say(s, "match %zu is not an object: %s", i, got ? got : "?");
        free(got);
        return;
    }
    json_t *type = json_object_get(mt, "type");
    json_t *name = json_object_get(mt, "name");
    json_t *conf = json_object_get(mt, "confidence");
    json_t *why = json_object_get(mt, "reasoning");
    const char *t = json_string_value(type);
    /* The four fields: each checked the same way, so a table. */
    struct {
        const char *key;
        json_t *v;
        int ok;
        const char *want;
    } f[] = {
        { "type", type, t && (strcmp(t, "task") == 0 || strcmp(t, "skill") == 0),
          "\"task\" or \"skill\"" },
        { "name", name, json_is_string(name) && *json_string_value(name), "a non-empty string" },
        { "confidence", conf, json_is_number(conf), "a number from 0 to 1" },
        { "reasoning", why, json_is_string(why), "a string" },
    };
    for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
        if (!f[k].v)
            say(s, "match %zu missing %s", i, f[k].key);
        else if (!f[k].ok) {
            char *got = preview(f[k].v);
            say(s, "match %zu has invalid %s: %s, want %s", i, f[k].key, got ? got : "?",
                f[k].want);
            free(got);
        }
    }
}

void ar_route_validate(void *arg, json_t *value, void (*add)(void *sink, const char *msg),
                       void *sink)
{
    struct sink s = { add, sink };
    if (json_is_object(value)) {
        check_match(&s, 0, value);
    } else if (json_is_array(value)) {
        size_t i;
        json_t *mt;
        json_array_foreach(value, i, mt)
        {
            check_match(&s, i, mt);
        }
    } else
        say(&s, "response is neither a match object nor an array of matches");
}

struct ranked {
    size_t index;
    double confidence;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->confidence != y->confidence)
        return x->confidence > y->confidence ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Records an unknown name in `msg` ("unknown task \"x\" (a skill has that name)"). */
static int note_unknown(const struct ar_manifest *m, struct ar_buf *msg,
                        const struct ar_route_match *mt)
{
    enum ar_route_type other = mt->type == AR_ROUTE_TASK ? AR_ROUTE_SKILL : AR_ROUTE_TASK;
    int rc = ar_buf_printf(msg, "%sunknown %s \"%s\"", msg->len ? "; " : "the model named ",
                           ar_route_type_name(mt->type), mt->name);
    if (rc == 0 && ar_manifest_find(m, other, mt->name))
        rc = ar_buf_printf(msg, " (a %s has that name)", ar_route_type_name(other));
    return rc;
}

static int known_list(const struct ar_manifest *m, struct ar_buf *msg)
{
    int rc = 0;
    for (int t = 0; t < 2 && rc == 0; t++) {
        int first = 1;
        for (size_t i = 0; rc == 0 && i < m->n; i++) {
            if (m->items[i].type != (enum ar_route_type)t)
                continue;
            rc = ar_buf_printf(msg, "%s%s",
                               first ? (t ? "; known skills: " : "; known tasks: ") : ", ",
                               m->items[i].name);
            first = 0;
        }
    }
    return rc;
}

static int route_fallback(const struct ar_manifest *m, const char *why, struct ar_route *r)
{
    /* The manifest has at least one item (ar_manifest_parse() checks). */
    const struct ar_route_item *it = &m->items[0];
    r->kind = AR_ROUTE_DISCOVERY;
    r->fallback = 1;
    char reason[400];
    snprintf(reason, sizeof(reason),
             "fallback to the first %s: the model's answer stayed unusable after the repair "
             "call%s%.300s",
             ar_route_type_name(it->type), why ? ": " : "", why ? why : "");
    if (ar_strv_push(&r->notes, reason) < 0)
        return AR_ENOMEM;
    return add_match(r, it->type, it->name, 0.0, reason);
}

int ar_route_from_answer(const struct ar_manifest *m, json_t *value, const char *why,
                         struct ar_route *r)
{
    if (!value)
        return route_fallback(m, why, r);
    json_t *list = json_is_array(value) ? json_incref(value) : json_pack("[O]", value);
    if (!list)
        return AR_ENOMEM;
    size_t n = json_array_size(list);
    struct ranked *rk = calloc(n ? n : 1, sizeof(*rk));
    int rc = rk ? 0 : AR_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *mt = json_array_get(list, i);
        double c = json_number_value(json_object_get(mt, "confidence"));
        double clamped = c < 0 ? 0 : c > 1 ? 1 : c;
        const char *nm = json_string_value(json_object_get(mt, "name"));
        if (clamped != c)
            rc = ar_strv_pushf(&r->notes, "match %zu (\"%s\") confidence %g clamped to %g", i,
                               nm ? nm : "unnamed", c, clamped);
        rk[i] = (struct ranked){ i, clamped };
    }
    if (rc == 0)
        ar_sort(rk, n, sizeof(*rk), cmp_ranked);
    struct ar_buf unknown;
    ar_buf_init(&unknown, AR_BUF_UNLIMITED);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *mt = json_array_get(list, rk[i].index);
        const char *t = json_string_value(json_object_get(mt, "type"));
        const char *name = json_string_value(json_object_get(mt, "name"));
        const char *reasoning = json_string_value(json_object_get(mt, "reasoning"));
        if (!t || !name || !reasoning) {
            /* The validate hook guarantees these; a caller that skipped it
             * gets the answer treated as malformed rather than a crash. */
            ar_buf_finish(&unknown);
            free(rk);
            json_decref(list);
            clear_matches(r);
            ar_strv_finish(&r->notes);
            return route_fallback(m, "a match lacks type, name or reasoning", r);
        }
        enum ar_route_type type = strcmp(t, "skill") == 0 ? AR_ROUTE_SKILL : AR_ROUTE_TASK;
        const struct ar_route_item *it = ar_manifest_find(m, type, name);
        rc = add_match(r, type, it ? it->name : name, rk[i].confidence, reasoning);
        if (rc == 0 && !it)
            rc = note_unknown(m, &unknown, &r->matches[r->n - 1]);
    }
    if (rc == 0 && unknown.len) {
        rc = known_list(m, &unknown);
        r->kind = AR_ROUTE_ERROR;
        r->error = ar_buf_detach(&unknown, NULL);
        if (!r->error)
            rc = AR_ENOMEM;
    } else if (rc == 0)
        r->kind = n ? AR_ROUTE_DISCOVERY : AR_ROUTE_NONE;
    ar_buf_finish(&unknown);
    free(rk);
    json_decref(list);
    return rc;
}
