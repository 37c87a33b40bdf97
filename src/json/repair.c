/* Local repair of almost-JSON (see repair.h). */
#include "json/repair.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/scan.h"

static const char *const fix_names[AR_FIX_COUNT] = {
    "trailing_comma",
    "comments",
    "single_quotes",
    "curly_quotes",
    "unquoted_keys",
    "python_literals",
    "nan_infinity",
    "raw_newlines",
    "missing_comma",
    "truncation",
    "missing_quote",
    "inner_quotes",
    "unquoted_values",
    "number_format",
    "ellipsis",
    "js_syntax",
    "missing_colon",
    "brackets",
    "unicode_space",
    "escaped_json",
    "missing_value",
    "extra_values",
    "members_after_close",
};

const char *ar_json_fix_name(unsigned fix)
{
    for (unsigned i = 0; i < AR_FIX_COUNT; i++)
        if (fix == 1u << i)
            return fix_names[i];
    return NULL;
}

int ar_json_fixes_format(unsigned fixes, const char *sep, struct ar_buf *out)
{
    int first = 1;
    for (unsigned i = 0; i < AR_FIX_COUNT; i++) {
        if (!(fixes & (1u << i)))
            continue;
        int rc = first ? 0 : ar_buf_puts(out, sep);
        if (rc == 0)
            rc = ar_buf_puts(out, fix_names[i]);
        if (rc < 0)
            return rc;
        first = 0;
    }
    return 0;
}

enum { EXPECT_VALUE, EXPECT_KEY, EXPECT_COLON, AFTER_VALUE, DONE };

#define NONE SIZE_MAX

struct repairer {
    const unsigned char *in;
    size_t len;
    struct ar_buf *out;
    unsigned fixes;
    char *stack; /* '{' or '[' per open container */
    size_t depth, cap;
    int state;
    size_t pending_comma; /* output offset of a ',' not yet followed by a value */
    int rc;
    int give_up;                      /* repairing would mean guessing: AR_ENOJSON */
    int key_quoted;                   /* the key awaiting its colon was quoted */
    int last_string;                  /* the last value was a string (for "a" + "b") */
    size_t string_end;                /* output length just after that string's closing quote */
    int in_call;                      /* reading the argument of Name("x") */
    int last_unquoted;                /* the last value was an unquoted word made a string */
    size_t open_objects, open_arrays; /* in the stack */
    char last_closer;                 /* the last bracket closed */
    int reopened;                     /* members after the top object's close were merged */
    size_t members, members_at;       /* how many, and the input offset of the first */
};

static void put(struct repairer *r, const void *p, size_t n)
{
    struct ar_buf *b = r->out;
    /* Most writes are a byte or two into room already there: skip the call. */
    if (b->data && b->cap - b->len > n && b->max - b->len >= n) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    if (r->rc == 0)
        r->rc = ar_buf_append(b, p, n);
}

static void putc_(struct repairer *r, char c)
{
    put(r, &c, 1);
}

static void unput(struct repairer *r, size_t n)
{
    if (r->rc == 0 && r->out->len >= n) {
        r->out->len -= n;
        r->out->data[r->out->len] = '\0';
    }
}

static int in_object(const struct repairer *r)
{
    return r->depth && r->stack[r->depth - 1] == '{';
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* A value or key is starting: settle the comma (or colon) before it. */
static void value_starts(struct repairer *r)
{
    if (r->state == AFTER_VALUE && r->depth) {
        if (r->last_unquoted)
            r->give_up = 1; /* "[see below]": words, not values */
        putc_(r, ',');
        r->fixes |= AR_FIX_MISSING_COMMA;
        r->state = in_object(r) ? EXPECT_KEY : EXPECT_VALUE;
    } else if (r->state == EXPECT_COLON) {
        if (!r->key_quoted)
            r->give_up = 1; /* "{I cannot}" is prose */
        putc_(r, ':');
        r->fixes |= AR_FIX_MISSING_COLON;
        r->state = EXPECT_VALUE;
    }
    r->pending_comma = NONE;
    r->last_string = 0;
    r->last_unquoted = 0;
}

static void value_ends(struct repairer *r, int was_key)
{
    if (was_key)
        r->state = EXPECT_COLON;
    else
        r->state = r->depth ? AFTER_VALUE : DONE;
}

static void drop_pending_comma(struct repairer *r, unsigned fix)
{
    if (r->pending_comma == NONE || r->rc)
        return;
    struct ar_buf *b = r->out;
    memmove(b->data + r->pending_comma, b->data + r->pending_comma + 1,
            b->len - r->pending_comma - 1);
    b->len--;
    b->data[b->len] = '\0';
    r->pending_comma = NONE;
    r->fixes |= fix;
}

/* The length of the UTF-8 curly quote at in[i] and its kind: 1 for “ ”, 2 for ‘ ’. */
static int curly_at(const struct repairer *r, size_t i, int *kind)
{
    if (i + 2 >= r->len || r->in[i] != 0xE2 || r->in[i + 1] != 0x80)
        return 0;
    unsigned char c = r->in[i + 2];
    if (c == 0x9C || c == 0x9D)
        *kind = 1;
    else if (c == 0x98 || c == 0x99)
        *kind = 2;
    else
        return 0;
    return 3;
}

/* The length of the non-ASCII space at in[i] (NBSP, U+2000-U+200B, U+2028,
 * U+2029, U+202F, U+205F, U+3000, U+FEFF), else 0. */
static int unicode_space_at(const struct repairer *r, size_t i)
{
    const unsigned char *s = r->in + i;
    size_t n = r->len - i;
    if (n >= 2 && s[0] == 0xC2 && s[1] == 0xA0)
        return 2;
    if (n < 3)
        return 0;
    if (s[0] == 0xE2 && s[1] == 0x80 &&
        ((s[2] >= 0x80 && s[2] <= 0x8B) || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF))
        return 3;
    if ((s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) ||
        (s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) ||
        (s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF))
        return 3;
    return 0;
}

static int is_ident(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '-';
}

/*
 * At the '"' in[i] inside a double-quoted value string: 1 when it closes the
 * string, 0 when it is an inner quote. A quote closes when what follows could
 * follow a value (a comma, a closing bracket, a colon, another string after
 * a space, a comment, the end).
 */
static int quote_closes(const struct repairer *r, size_t i)
{
    size_t j = i + 1;
    int newline = 0;
    while (j < r->len && is_space(r->in[j])) {
        newline |= r->in[j] == '\n';
        j++;
    }
    if (j >= r->len || newline)
        return 1;
    unsigned char c = r->in[j];
    return strchr(",}]:/+", c) != NULL || (c == '"' && j > i + 1) || (c == ')' && r->in_call);
}

/*
 * At an inner-looking '"' in[i]: when the string's text so far ends in a
 * comma (and spaces) and a key follows ("b, "c": 1), the string lost its
 * closing quote before that comma. Returns the offset of the comma, or NONE.
 */
static size_t lost_quote_before_comma(const struct repairer *r, size_t open, size_t i)
{
    size_t k = i;
    while (k > open + 1 && r->in[k - 1] == ' ')
        k--;
    if (k <= open + 1 || r->in[k - 1] != ',')
        return NONE;
    size_t j = i + 1;
    while (j < r->len && is_ident(r->in[j]))
        j++;
    if (j == i + 1 || j >= r->len || r->in[j] != '"')
        return NONE;
    j++;
    while (j < r->len && is_space(r->in[j]))
        j++;
    return j < r->len && r->in[j] == ':' ? k - 1 : NONE;
}

/*
 * When a double-quoted string runs to the end of the input and its text ends
 * in the closing brackets of the open containers ({"a": "b}), the closing
 * quote was lost before them: the offset of the first bracket, else NONE.
 */
static size_t lost_quote_before_closers(const struct repairer *r, size_t open)
{
    size_t q = r->len;
    while (q > open + 1 && r->in[q - 1] == ' ')
        q--;
    size_t end = q;
    while (q > open + 1 && (r->in[q - 1] == '}' || r->in[q - 1] == ']'))
        q--;
    size_t n = end - q;
    if (!n || n > r->depth || r->in[q - 1] == '\\')
        return NONE;
    for (size_t m = 0; m < n; m++) {
        char want = r->stack[r->depth - 1 - m] == '{' ? '}' : ']';
        if (r->in[q + m] != (unsigned char)want)
            return NONE;
    }
    return q;
}

/* Copies the string whose opening delimiter starts at in[i] as a JSON string.
 * `opened`: the opening '"' is already in the output (concatenation). */
static size_t repair_string(struct repairer *r, size_t i, char delim, int curly, int is_key,
                            int opened)
{
    size_t open = i;
    size_t olen = delim ? 1 : 3;
    i += olen;
    if (!opened)
        putc_(r, '"');
    while (i < r->len) {
        unsigned char c = r->in[i];
        int kind;
        if (delim && c == (unsigned char)delim) {
            if (delim != '"' || is_key || quote_closes(r, i)) {
                putc_(r, '"');
                return i + 1;
            }
            size_t comma = lost_quote_before_comma(r, open, i);
            if (comma != NONE) {
                unput(r, i - comma);
                putc_(r, '"');
                r->fixes |= AR_FIX_MISSING_QUOTE;
                return comma;
            }
            put(r, "\\\"", 2);
            r->fixes |= AR_FIX_INNER_QUOTES;
            i++;
            continue;
        }
        if (!delim && curly_at(r, i, &kind) && kind == curly) {
            putc_(r, '"');
            return i + 3;
        }
        if (c == '\\') {
            if (i + 1 >= r->len) {
                i++; /* a lone backslash cut off at the end is dropped */
                break;
            }
            if (r->in[i + 1] == 'u' && i + 6 > r->len) {
                size_t k = i + 2;
                while (k < r->len && strchr("0123456789abcdefABCDEF", r->in[k]) && r->in[k])
                    k++;
                if (k == r->len) {
                    i = r->len; /* cut inside \uXXXX: the partial escape is dropped */
                    break;
                }
            }
            if (delim == '\'' && r->in[i + 1] == '\'')
                putc_(r, '\'');
            else
                put(r, r->in + i, 2);
            i += 2;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0xE2) {
            /* Plain bytes go out in one run: strings are most of the text. */
            size_t j = i + 1;
            while (j < r->len && r->in[j] >= 0x20 && r->in[j] != '"' && r->in[j] != '\\' &&
                   r->in[j] != 0xE2 && r->in[j] != (unsigned char)delim)
                j++;
            put(r, r->in + i, j - i);
            i = j;
            continue;
        }
        if (c == '"' && delim != '"') {
            put(r, "\\\"", 2);
        } else if (c < 0x20) {
            char esc[8];
            if (c == '\n')
                memcpy(esc, "\\n", 3);
            else if (c == '\r')
                memcpy(esc, "\\r", 3);
            else if (c == '\t')
                memcpy(esc, "\\t", 3);
            else
                snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(r, esc, strlen(esc));
            r->fixes |= AR_FIX_RAW_NEWLINES;
        } else {
            putc_(r, (char)c);
        }
        i++;
    }
    if (delim == '"') {
        size_t q = lost_quote_before_closers(r, open);
        if (q != NONE) {
            unput(r, r->len - q);
            putc_(r, '"');
            r->fixes |= AR_FIX_MISSING_QUOTE;
            return q;
        }
    }
    const char *o = r->out->data;
    size_t ol = r->out->len;
    if (r->rc == 0 && ol >= 8 && o[ol - 6] == '\\' && o[ol - 5] == 'u' &&
        (o[ol - 4] | 0x20) == 'd' && o[ol - 3] && strchr("89abAB", o[ol - 3]) && o[ol - 7] != '\\')
        unput(r, 6); /* a high surrogate whose pair was cut off */
    putc_(r, '"');
    r->fixes |= AR_FIX_TRUNCATION;
    return i;
}

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '.' || c == '+' || c == '-';
}

static int is_number(const unsigned char *w, size_t n)
{
    size_t i = 0;
    if (i < n && w[i] == '-')
        i++;
    if (i >= n || w[i] < '0' || w[i] > '9')
        return 0;
    if (w[i] == '0')
        i++;
    else
        while (i < n && w[i] >= '0' && w[i] <= '9')
            i++;
    if (i < n && w[i] == '.') {
        i++;
        if (i >= n || w[i] < '0' || w[i] > '9')
            return 0;
        while (i < n && w[i] >= '0' && w[i] <= '9')
            i++;
    }
    if (i < n && (w[i] == 'e' || w[i] == 'E')) {
        i++;
        if (i < n && (w[i] == '+' || w[i] == '-'))
            i++;
        if (i >= n || w[i] < '0' || w[i] > '9')
            return 0;
        while (i < n && w[i] >= '0' && w[i] <= '9')
            i++;
    }
    return i == n;
}

static int word_is(const unsigned char *w, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(w, s, n) == 0;
}

static int word_is_nocase(const unsigned char *w, size_t n, const char *s)
{
    if (strlen(s) != n)
        return 0;
    for (size_t k = 0; k < n; k++)
        if ((w[k] | 0x20) != (unsigned char)s[k])
            return 0;
    return 1;
}

/*
 * A number JSON forbids, rewritten when its meaning is plain: a leading '+'
 * or '.', a trailing '.', '_' digit separators (".25" -> "0.25", "+1" -> "1",
 * "82_461_110" -> "82461110"). Leading zeros ("0789": a code, not a number)
 * make a string. Returns 1 when it wrote something.
 */
static int repair_number(struct repairer *r, const unsigned char *w, size_t n)
{
    char buf[128];
    size_t m = 0, i = 0;
    if (n >= sizeof(buf) - 2 || !n)
        return 0;
    if (w[i] == '-' || w[i] == '+') {
        if (w[i] == '-')
            buf[m++] = '-';
        i++;
    }
    if (i < n && w[i] == '.')
        buf[m++] = '0';
    int digits = 0;
    for (; i < n; i++) {
        if (w[i] == '_' && digits && i + 1 < n && w[i + 1] >= '0' && w[i + 1] <= '9')
            continue;
        if (w[i] >= '0' && w[i] <= '9')
            digits++;
        buf[m++] = (char)w[i];
    }
    if (m && buf[m - 1] == '.')
        m--;
    if (!digits)
        return 0;
    size_t lead = buf[0] == '-';
    if (m > lead + 1 && buf[lead] == '0' && buf[lead + 1] >= '0' && buf[lead + 1] <= '9') {
        /* 0789: leading zeros keep their meaning only as text */
        for (size_t k = 0; k < n; k++)
            if (!(w[k] >= '0' && w[k] <= '9') && !(k == 0 && w[k] == '-'))
                return 0;
        putc_(r, '"');
        put(r, w, n);
        putc_(r, '"');
        r->fixes |= AR_FIX_NUMBER_FORMAT;
        return 1;
    }
    if (!is_number((const unsigned char *)buf, m))
        return 0;
    put(r, buf, m);
    r->fixes |= AR_FIX_NUMBER_FORMAT;
    return 1;
}

/* A value word: a JSON literal or number is kept, the rest mapped where a rule
 * says. Returns 0 when no rule knows the word. */
static int repair_value_word(struct repairer *r, const unsigned char *w, size_t n, int at_end)
{
    static const char *const py[][2] = { { "True", "true" },
                                         { "False", "false" },
                                         { "None", "null" } };
    static const char *const nan[] = {
        "NaN", "-NaN", "+NaN", "Infinity", "-Infinity", "+Infinity"
    };
    static const char *const lits[] = { "true", "false", "null" };
    for (size_t k = 0; k < 3; k++)
        if (word_is(w, n, py[k][0])) {
            put(r, py[k][1], strlen(py[k][1]));
            r->fixes |= AR_FIX_PYTHON_LITERALS;
            return 1;
        }
    for (size_t k = 0; k < sizeof(nan) / sizeof(nan[0]); k++)
        if (word_is(w, n, nan[k])) {
            put(r, "null", 4);
            r->fixes |= AR_FIX_NAN_INFINITY;
            return 1;
        }
    for (size_t k = 0; k < 3; k++)
        if (word_is(w, n, lits[k]))
            goto copy;
    if (is_number(w, n))
        goto copy;
    if (at_end) {
        /* Cut off inside a literal or a number: complete or trim it. */
        for (size_t k = 0; k < 3; k++)
            if (n < strlen(lits[k]) && memcmp(w, lits[k], n) == 0) {
                put(r, lits[k], strlen(lits[k]));
                r->fixes |= AR_FIX_TRUNCATION;
                return 1;
            }
        size_t m = n;
        while (m && !is_number(w, m))
            m--;
        if (m && m + 3 > n) {
            put(r, w, m);
            r->fixes |= AR_FIX_TRUNCATION;
            return 1;
        }
    }
    /* JavaScript: TRUE, Null, undefined. */
    for (size_t k = 0; k < 3; k++)
        if (word_is_nocase(w, n, lits[k])) {
            put(r, lits[k], strlen(lits[k]));
            r->fixes |= AR_FIX_JS_SYNTAX;
            return 1;
        }
    if (word_is(w, n, "undefined")) {
        put(r, "null", 4);
        r->fixes |= AR_FIX_JS_SYNTAX;
        return 1;
    }
    if ((w[0] >= '0' && w[0] <= '9') || w[0] == '.' || w[0] == '+' || w[0] == '-')
        return repair_number(r, w, n);
    return 0;
copy:
    put(r, w, n);
    return 1;
}

static int push(struct repairer *r, char c)
{
    if (r->depth == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 64;
        char *n = realloc(r->stack, ncap);
        if (!n)
            return -1;
        r->stack = n;
        r->cap = ncap;
    }
    r->stack[r->depth++] = c;
    if (c == '{')
        r->open_objects++;
    else
        r->open_arrays++;
    return 0;
}

static size_t skip_comment(struct repairer *r, size_t i)
{
    const unsigned char *in = r->in;
    r->fixes |= AR_FIX_COMMENTS;
    if (in[i + 1] == '/') {
        while (i < r->len && in[i] != '\n')
            i++;
        return i; /* the newline is kept as whitespace */
    }
    for (i += 2; i + 1 < r->len; i++)
        if (in[i] == '*' && in[i + 1] == '/')
            return i + 2;
    return r->len;
}

/* Settles a member left without its value ({"a"}, {"a":}) before a close. A
 * key that was never quoted and has no colon ({like}) is prose, not a member. */
static void settle_member(struct repairer *r)
{
    if (r->state == EXPECT_COLON) {
        if (!r->key_quoted)
            r->give_up = 1;
        put(r, ":null", 5);
    } else if (r->state == EXPECT_VALUE && in_object(r)) {
        put(r, "null", 4);
    } else {
        return;
    }
    r->fixes |= AR_FIX_MISSING_VALUE;
}

/* Closes the innermost container, settling a dangling member first. */
static void close_top(struct repairer *r)
{
    drop_pending_comma(r, AR_FIX_TRAILING_COMMA);
    settle_member(r);
    char open = r->stack[--r->depth];
    if (open == '{')
        r->open_objects--;
    else
        r->open_arrays--;
    r->last_closer = open == '{' ? '}' : ']';
    putc_(r, r->last_closer);
    value_ends(r, 0);
    r->last_string = 0;
    r->last_unquoted = 0;
}

/* 1 when the text after in[i] goes on with more of the value: a ',' and then a
 * key, a string or a container; with `bare`, also a container at once (the
 * comma missing too). */
static int value_goes_on(const struct repairer *r, size_t i, int bare)
{
    while (i < r->len && is_space(r->in[i]))
        i++;
    if (bare && i < r->len && (r->in[i] == '{' || r->in[i] == '['))
        return 1;
    if (i >= r->len || r->in[i] != ',')
        return 0;
    for (i++; i < r->len && is_space(r->in[i]); i++)
        ;
    return i < r->len && strchr("\"'{[", r->in[i]) && r->in[i];
}

/*
 * The closing bracket at in[i]. One that does not match the innermost
 * container is read so that no part of the value is lost: when it matches the
 * container around, it closes both, unless that would end the whole value
 * while more of it follows ({"k":[1}, "l":2}: then it stood for the
 * innermost's closer); when it matches no open container, repeats the closer
 * just written and more of the value follows ([{"a":1}},{"b":2}]), it is one
 * too many and dropped; otherwise it stands for the innermost's closer.
 */
static void close_bracket(struct repairer *r, size_t i)
{
    char want = r->in[i] == '}' ? '{' : '[';
    if (r->stack[r->depth - 1] == want) {
        close_top(r);
        return;
    }
    r->fixes |= AR_FIX_BRACKETS;
    if (r->depth >= 2 && r->stack[r->depth - 2] == want) {
        if (r->depth > 2 || !value_goes_on(r, i + 1, 0))
            close_top(r);
    } else if (!(want == '{' ? r->open_objects : r->open_arrays) && r->out->len &&
               r->out->data[r->out->len - 1] == (char)r->in[i] && value_goes_on(r, i + 1, 1)) {
        return;
    }
    close_top(r);
}

/* After the top object closed at in[i]: the input offset of the first key of
 * members that follow it (it closed too early), else NONE. */
static size_t members_follow(const struct repairer *r, size_t i)
{
    return r->last_closer == '}' ? ar_json_members_follow((const char *)r->in, i, r->len) : NONE;
}

/* Opens the top object again to take the members that follow its close. */
static void reopen(struct repairer *r, size_t key)
{
    unput(r, 1); /* its '}' */
    size_t o = r->out->len;
    while (o && is_space((unsigned char)r->out->data[o - 1]))
        o--;
    if (o && r->out->data[o - 1] != '{')
        putc_(r, ',');
    r->stack[r->depth++] = '{';
    r->open_objects++;
    r->state = EXPECT_KEY;
    r->fixes |= AR_FIX_MEMBERS_AFTER_CLOSE;
    if (!r->reopened)
        r->members_at = key;
    r->reopened = 1;
}

/* Name("x"), Name(1) (ObjectId, ISODate, NumberLong, Date…) at in[i] == '(':
 * the argument stands for the value. Returns the offset after ')'. */
static size_t repair_call(struct repairer *r, size_t i)
{
    size_t j = i + 1;
    while (j < r->len && is_space(r->in[j]))
        j++;
    if (j < r->len && (r->in[j] == '"' || r->in[j] == '\'')) {
        if (r->in[j] == '\'')
            r->fixes |= AR_FIX_SINGLE_QUOTES;
        r->in_call = 1;
        j = repair_string(r, j, (char)r->in[j], 0, 0, 0);
        r->in_call = 0;
    } else {
        size_t s = j;
        while (j < r->len && is_word(r->in[j]))
            j++;
        if (j == s || !is_number(r->in + s, j - s)) {
            r->give_up = 1;
            return j;
        }
        put(r, r->in + s, j - s);
    }
    while (j < r->len && is_space(r->in[j]))
        j++;
    if (j >= r->len || r->in[j] != ')') {
        r->give_up = 1;
        return j;
    }
    r->fixes |= AR_FIX_JS_SYNTAX;
    return j + 1;
}

/* An unquoted value from in[s]: up to a comma, a closing bracket or a line
 * end (in an array, also a space), written as a JSON string. */
static size_t repair_unquoted_value(struct repairer *r, size_t s)
{
    size_t j = s;
    int array = !in_object(r);
    while (j < r->len && !strchr(",}]\n\r", r->in[j]) && !(array && is_space(r->in[j])))
        j++;
    size_t e = j;
    while (e > s && is_space(r->in[e - 1]))
        e--;
    putc_(r, '"');
    for (size_t k = s; k < e; k++) {
        unsigned char c = r->in[k];
        if (c == '"' || c == '\\')
            putc_(r, '\\');
        if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(r, esc, 6);
        } else {
            putc_(r, (char)c);
        }
    }
    putc_(r, '"');
    r->fixes |= AR_FIX_UNQUOTED_VALUES;
    return e;
}

/* "a" + "b" at in[i] == '+' after a string value: one string. Returns the
 * offset after the second string, or 0 when this is no concatenation. */
static size_t repair_concat(struct repairer *r, size_t i)
{
    size_t j = i + 1;
    while (j < r->len && is_space(r->in[j]))
        j++;
    if (j >= r->len || (r->in[j] != '"' && r->in[j] != '\''))
        return 0;
    unput(r, r->out->len - (r->string_end - 1)); /* from the first string's closing quote */
    r->fixes |= AR_FIX_JS_SYNTAX | (r->in[j] == '\'' ? AR_FIX_SINGLE_QUOTES : 0);
    return repair_string(r, j, (char)r->in[j], 0, 0, 1);
}

/* An ellipsis standing for more items ("..." or U+2026) at in[i], n bytes. */
static int ellipsis_at(const struct repairer *r, size_t i)
{
    if (i + 2 < r->len && r->in[i] == 0xE2 && r->in[i + 1] == 0x80 && r->in[i + 2] == 0xA6)
        return 3;
    size_t j = i;
    while (j < r->len && r->in[j] == '.')
        j++;
    return j - i >= 3 && (j >= r->len || !is_word(r->in[j])) ? (int)(j - i) : 0;
}

static int repair_core(const unsigned char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                       struct ar_json_repair_info *info, int stop_at_done);

/* {\"k\": 1}: JSON escaped as the text of a string. One level of escapes is
 * removed and the result repaired. Returns 1 when the text is not that. */
static int repair_escaped(const unsigned char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                          struct ar_json_repair_info *info, int stop_at_done)
{
    size_t i = 0;
    while (i < len && is_space(in[i]))
        i++;
    if (i + 2 >= len || (in[i] != '{' && in[i] != '[') || in[i + 1] != '\\' || in[i + 2] != '"')
        return 1;
    struct ar_buf u;
    ar_buf_init(&u, AR_BUF_UNLIMITED);
    int rc = 0;
    size_t *map = malloc((len + 1) * sizeof(*map)); /* unescaped offset -> input offset */
    if (!map) {
        ar_buf_finish(&u);
        return AR_ENOMEM;
    }
    for (size_t k = 0; k < len && rc == 0; k++) {
        map[u.len] = k;
        if (in[k] == '\\' && k + 1 < len && strchr("\"\\/nrt", in[k + 1])) {
            char c = (char)in[k + 1];
            rc = ar_buf_putc(&u, c == 'n' || c == 'r' || c == 't' ? ' ' : c);
            k++;
        } else {
            rc = ar_buf_putc(&u, (char)in[k]);
        }
    }
    map[u.len] = len;
    unsigned f = 0;
    if (rc == 0)
        rc = repair_core((const unsigned char *)u.data, u.len, out, &f, info, stop_at_done);
    if (rc == 0) {
        *fixes |= f | AR_FIX_ESCAPED_JSON;
        info->consumed = map[info->consumed];
        info->members_at = map[info->members_at < u.len ? info->members_at : u.len];
    }
    free(map);
    ar_buf_finish(&u);
    return rc;
}

static int repair_core(const unsigned char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                       struct ar_json_repair_info *info, int stop_at_done)
{
    struct repairer r;
    memset(&r, 0, sizeof(r));
    r.in = in;
    r.len = len;
    r.out = out;
    r.state = EXPECT_VALUE;
    r.pending_comma = NONE;
    size_t i = 0;
    while (i < len && r.rc == 0 && !r.give_up) {
        unsigned char c = r.in[i];
        int kind, n;
        if (r.state == DONE) {
            size_t key = members_follow(&r, i);
            if (key != NONE) {
                reopen(&r, key);
                i = key;
                continue;
            }
            if (!stop_at_done)
                put(&r, in + i, len - i);
            break;
        }
        if (is_space(c)) {
            putc_(&r, (char)c);
            i++;
        } else if ((n = unicode_space_at(&r, i)) > 0) {
            putc_(&r, ' ');
            r.fixes |= AR_FIX_UNICODE_SPACE;
            i += (size_t)n;
        } else if (c == '/' && i + 1 < len && (in[i + 1] == '/' || in[i + 1] == '*')) {
            i = skip_comment(&r, i);
        } else if (c == '{' || c == '[') {
            value_starts(&r);
            if (push(&r, (char)c) < 0) {
                r.rc = AR_ENOMEM;
                break;
            }
            putc_(&r, (char)c);
            r.state = c == '{' ? EXPECT_KEY : EXPECT_VALUE;
            i++;
        } else if (c == '}' || c == ']') {
            if (!r.depth) {
                if (!stop_at_done)
                    put(&r, in + i, len - i);
                break;
            }
            close_bracket(&r, i);
            i++;
        } else if (c == ',') {
            if (r.state == EXPECT_VALUE && in_object(&r)) {
                put(&r, "null", 4); /* {"a":,"b":1} */
                r.fixes |= AR_FIX_MISSING_VALUE;
                r.state = AFTER_VALUE;
            }
            if (r.state == AFTER_VALUE) {
                r.pending_comma = out->len;
                putc_(&r, ',');
                r.state = in_object(&r) ? EXPECT_KEY : EXPECT_VALUE;
            } else {
                r.fixes |= AR_FIX_TRAILING_COMMA; /* a doubled or leading comma */
            }
            i++;
        } else if (c == ':') {
            putc_(&r, ':');
            if (r.state == EXPECT_COLON)
                r.state = EXPECT_VALUE;
            i++;
        } else if (c == '+' && r.state == AFTER_VALUE && r.last_string) {
            size_t e = repair_concat(&r, i);
            if (e) {
                i = e;
                r.string_end = out->len;
            } else {
                putc_(&r, '+');
                i++;
            }
        } else if (c == '"' || c == '\'' || curly_at(&r, i, &kind)) {
            int was_key = (r.state == EXPECT_KEY) || (r.state == AFTER_VALUE && in_object(&r));
            value_starts(&r);
            if (c == '"') {
                i = repair_string(&r, i, '"', 0, was_key, 0);
            } else if (c == '\'') {
                r.fixes |= AR_FIX_SINGLE_QUOTES;
                i = repair_string(&r, i, '\'', 0, was_key, 0);
            } else {
                r.fixes |= AR_FIX_CURLY_QUOTES;
                i = repair_string(&r, i, 0, kind, was_key, 0);
            }
            value_ends(&r, was_key);
            r.key_quoted = was_key;
            r.last_string = !was_key;
            r.members += was_key && r.reopened && r.depth == 1;
            r.string_end = out->len;
        } else if ((n = ellipsis_at(&r, i)) > 0 && !(r.state == EXPECT_VALUE && in_object(&r)) &&
                   r.state != EXPECT_COLON) {
            /* [1, 2, ...]: the items left out are not invented */
            if (r.pending_comma != NONE) {
                drop_pending_comma(&r, AR_FIX_ELLIPSIS);
                r.state = AFTER_VALUE;
            }
            r.fixes |= AR_FIX_ELLIPSIS;
            i += (size_t)n;
        } else if (is_word(c)) {
            size_t s = i;
            while (i < len && is_word(r.in[i]))
                i++;
            int was_key = (r.state == EXPECT_KEY) || (r.state == AFTER_VALUE && in_object(&r));
            if (!was_key && word_is(in + s, i - s, "new") && i < len && in[i] == ' ' &&
                i + 1 < len && in[i + 1] >= 'A' && in[i + 1] <= 'Z') {
                r.fixes |= AR_FIX_JS_SYNTAX; /* new Date("x") */
                continue;
            }
            value_starts(&r);
            if (was_key) {
                putc_(&r, '"');
                put(&r, in + s, i - s);
                putc_(&r, '"');
                r.fixes |= AR_FIX_UNQUOTED_KEYS;
                r.key_quoted = 0;
                r.members += r.reopened && r.depth == 1;
            } else if (i < len && in[i] == '(' && in[s] >= 'A' && in[s] <= 'z') {
                i = repair_call(&r, i);
            } else if (!repair_value_word(&r, r.in + s, i - s, i == len)) {
                i = repair_unquoted_value(&r, s);
                value_ends(&r, 0);
                r.last_unquoted = 1;
                continue;
            }
            value_ends(&r, was_key);
        } else {
            putc_(&r, (char)c);
            i++;
        }
    }
    if (r.rc == 0 && r.depth && !r.give_up) {
        /* The text ended inside the value: finish the member, then close. */
        drop_pending_comma(&r, AR_FIX_TRUNCATION);
        if (r.state == EXPECT_COLON && !r.key_quoted)
            r.give_up = 1; /* "{like" */
        else if (r.state == EXPECT_COLON)
            put(&r, ":null", 5);
        else if (r.state == EXPECT_VALUE && in_object(&r))
            put(&r, "null", 4);
        while (r.depth)
            putc_(&r, r.stack[--r.depth] == '{' ? '}' : ']');
        r.fixes |= AR_FIX_TRUNCATION;
    }
    free(r.stack);
    *fixes |= r.fixes;
    info->consumed = i < len ? i : len;
    info->members = r.members;
    info->members_at = r.members_at;
    if (r.rc < 0)
        return r.rc;
    return r.give_up ? AR_ENOJSON : 0;
}

static int repair(const char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                  struct ar_json_repair_info *info, int stop_at_done, struct ar_error *err)
{
    unsigned f = 0;
    int rc;
    memset(info, 0, sizeof(*info));
    if (ar_json_is_valid(in, len)) {
        rc = ar_buf_append(out, in, len);
        info->consumed = len;
    } else {
        size_t mark = out->len;
        rc = repair_escaped((const unsigned char *)in, len, out, &f, info, stop_at_done);
        if (rc == 1)
            rc = repair_core((const unsigned char *)in, len, out, &f, info, stop_at_done);
        if (rc == AR_ENOJSON && out->data) {
            out->len = mark;
            out->data[mark] = '\0';
        }
    }
    if (fixes)
        *fixes |= f;
    if (rc == AR_ENOJSON)
        return ar_error_set(err, rc, NULL, "repairing this would mean guessing its structure");
    return rc < 0 ? ar_error_set(err, rc, NULL, "%s", ar_strerror(rc)) : 0;
}

int ar_json_repair(const char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                   struct ar_error *err)
{
    struct ar_json_repair_info info;
    return repair(in, len, out, fixes, &info, 0, err);
}

int ar_json_repair_value(const char *in, size_t len, struct ar_buf *out, unsigned *fixes,
                         struct ar_json_repair_info *info, struct ar_error *err)
{
    struct ar_json_repair_info mine;
    return repair(in, len, out, fixes, info ? info : &mine, 1, err);
}
