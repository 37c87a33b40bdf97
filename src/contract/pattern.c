/*
 * ECMA-262 patterns through PCRE2 (pattern.h says what and why). The pattern is
 * read by ECMA-262's grammar (unicode mode) and written out again piece by piece
 * in PCRE2 syntax: every literal as \x{hex} (or itself when it is an ASCII letter
 * or digit), every class as code point ranges, so nothing in the output means
 * something PCRE2 reads differently from ECMA-262.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "contract/pattern.h"

#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/buf.h"
#include "util/macros.h"

struct ar_pattern {
    pcre2_code *code;
    int backref; /* it holds a back-reference */
    char *text;  /* the PCRE2 pattern, for tests */
};

/* ---- code point sets ------------------------------------------------------------------- */

struct range {
    uint32_t lo, hi;
};

#define MAX_CP 0x10FFFFu

/* ECMA-262's WhiteSpace and LineTerminator: what \s takes. */
static const struct range ws_ranges[] = {
    { 0x09, 0x0D },     { 0x20, 0x20 },     { 0xA0, 0xA0 },     { 0x1680, 0x1680 },
    { 0x2000, 0x200A }, { 0x2028, 0x2029 }, { 0x202F, 0x202F }, { 0x205F, 0x205F },
    { 0x3000, 0x3000 }, { 0xFEFF, 0xFEFF },
};
static const struct range digit_ranges[] = { { '0', '9' } };
static const struct range word_ranges[] = {
    { '0', '9' }, { 'A', 'Z' }, { '_', '_' }, { 'a', 'z' }
};

/* General categories by every name ECMA-262 accepts, to PCRE2's short names
 * (PCRE2 10.42 knows only those). "digit" is not ECMA-262's, but the official
 * JSON Schema suite writes \p{digit} for Nd, as Perl and Java read it. */
static const struct {
    const char *name, *pcre;
} gc_names[] = {
    { "C", "C" },
    { "Other", "C" },
    { "Cc", "Cc" },
    { "Control", "Cc" },
    { "cntrl", "Cc" },
    { "Cf", "Cf" },
    { "Format", "Cf" },
    { "Cn", "Cn" },
    { "Unassigned", "Cn" },
    { "Co", "Co" },
    { "Private_Use", "Co" },
    { "Cs", "Cs" },
    { "Surrogate", "Cs" },
    { "L", "L" },
    { "Letter", "L" },
    { "LC", "L&" },
    { "Cased_Letter", "L&" },
    { "Ll", "Ll" },
    { "Lowercase_Letter", "Ll" },
    { "Lm", "Lm" },
    { "Modifier_Letter", "Lm" },
    { "Lo", "Lo" },
    { "Other_Letter", "Lo" },
    { "Lt", "Lt" },
    { "Titlecase_Letter", "Lt" },
    { "Lu", "Lu" },
    { "Uppercase_Letter", "Lu" },
    { "M", "M" },
    { "Mark", "M" },
    { "Combining_Mark", "M" },
    { "Mc", "Mc" },
    { "Spacing_Mark", "Mc" },
    { "Me", "Me" },
    { "Enclosing_Mark", "Me" },
    { "Mn", "Mn" },
    { "Nonspacing_Mark", "Mn" },
    { "N", "N" },
    { "Number", "N" },
    { "Nd", "Nd" },
    { "Decimal_Number", "Nd" },
    { "digit", "Nd" },
    { "Nl", "Nl" },
    { "Letter_Number", "Nl" },
    { "No", "No" },
    { "Other_Number", "No" },
    { "P", "P" },
    { "Punctuation", "P" },
    { "punct", "P" },
    { "Pc", "Pc" },
    { "Connector_Punctuation", "Pc" },
    { "Pd", "Pd" },
    { "Dash_Punctuation", "Pd" },
    { "Pe", "Pe" },
    { "Close_Punctuation", "Pe" },
    { "Pf", "Pf" },
    { "Final_Punctuation", "Pf" },
    { "Pi", "Pi" },
    { "Initial_Punctuation", "Pi" },
    { "Po", "Po" },
    { "Other_Punctuation", "Po" },
    { "Ps", "Ps" },
    { "Open_Punctuation", "Ps" },
    { "S", "S" },
    { "Symbol", "S" },
    { "Sc", "Sc" },
    { "Currency_Symbol", "Sc" },
    { "Sk", "Sk" },
    { "Modifier_Symbol", "Sk" },
    { "Sm", "Sm" },
    { "Math_Symbol", "Sm" },
    { "So", "So" },
    { "Other_Symbol", "So" },
    { "Z", "Z" },
    { "Separator", "Z" },
    { "Zl", "Zl" },
    { "Line_Separator", "Zl" },
    { "Zp", "Zp" },
    { "Paragraph_Separator", "Zp" },
    { "Zs", "Zs" },
    { "Space_Separator", "Zs" },
};

/* ---- the translator -------------------------------------------------------------------- */

#define MAX_NESTING 200

struct tr {
    const unsigned char *s;
    size_t n, i;
    struct ar_buf out;
    unsigned ngroups;    /* capturing groups in the whole pattern */
    struct ar_buf names; /* the group names, each followed by '\0' */
    int failed;
    int backref;
    char *why;
    size_t whylen;
};

static int fail(struct tr *t, const char *fmt, ...) AR_PRINTF(2, 3);

static int fail(struct tr *t, const char *fmt, ...)
{
    if (t->failed)
        return -1;
    t->failed = 1;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(t->why, t->whylen, "%s (at byte %zu)", msg, t->i);
    return -1;
}

static int at_end(const struct tr *t)
{
    return t->i >= t->n;
}

static int peek(const struct tr *t, size_t k)
{
    return t->i + k < t->n ? t->s[t->i + k] : -1;
}

/* The code point at t->i (the text is UTF-8: jansson and the JSON reader check it). */
static uint32_t next_cp(struct tr *t)
{
    const unsigned char *s = t->s + t->i;
    size_t left = t->n - t->i;
    uint32_t c = s[0];
    size_t len = 1;
    if (c >= 0xF0 && left >= 4) {
        c = ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
        len = 4;
    } else if (c >= 0xE0 && left >= 3) {
        c = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
        len = 3;
    } else if (c >= 0xC0 && left >= 2) {
        c = ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu);
        len = 2;
    }
    t->i += len;
    return c;
}

static int is_surrogate(uint32_t c)
{
    return c >= 0xD800 && c <= 0xDFFF;
}

static void put(struct tr *t, const char *s)
{
    ar_buf_puts(&t->out, s);
}

/* One code point as PCRE2 reads it literally, in or out of a class. */
static void put_cp(struct tr *t, uint32_t c)
{
    if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
        ar_buf_putc(&t->out, (char)c);
    else
        ar_buf_printf(&t->out, "\\x{%x}", (unsigned)c);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* \uXXXX after the 'u' at t->i - 1: four hex digits, or -1. */
static long hex4(struct tr *t)
{
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(peek(t, (size_t)k));
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    t->i += 4;
    return v;
}

/*
 * A CharacterEscape after its backslash (t->i at the letter). Returns the code
 * point, or -1 after fail(). `in_class`: '-' is an escape there, and \b is U+0008.
 */
static long char_escape(struct tr *t, int in_class)
{
    int c = peek(t, 0);
    t->i++;
    switch (c) {
    case 'f':
        return 0x0C;
    case 'n':
        return 0x0A;
    case 'r':
        return 0x0D;
    case 't':
        return 0x09;
    case 'v':
        return 0x0B;
    case 'c': {
        int l = peek(t, 0);
        if ((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z')) {
            t->i++;
            return l % 32;
        }
        return fail(t, "\\c must be followed by an ASCII letter in ECMA-262's unicode mode");
    }
    case 'x': {
        int h1 = hexval(peek(t, 0)), h2 = hexval(peek(t, 1));
        if (h1 < 0 || h2 < 0)
            return fail(t, "\\x must be followed by two hex digits");
        t->i += 2;
        return h1 * 16 + h2;
    }
    case 'u': {
        if (peek(t, 0) == '{') {
            long v = 0;
            size_t k = 1;
            int h;
            while ((h = hexval(peek(t, k))) >= 0) {
                v = v * 16 + h;
                if (v > (long)MAX_CP)
                    return fail(t, "\\u{...} above U+10FFFF");
                k++;
            }
            if (k == 1 || peek(t, k) != '}')
                return fail(t, "\\u{ must be followed by hex digits and '}'");
            t->i += k + 1;
            return v;
        }
        long v = hex4(t);
        if (v < 0)
            return fail(t, "\\u must be followed by four hex digits or {hex}");
        /* A surrogate pair written as two escapes is one code point. */
        if (v >= 0xD800 && v <= 0xDBFF && peek(t, 0) == '\\' && peek(t, 1) == 'u') {
            size_t saved = t->i;
            t->i += 2;
            long lo = hex4(t);
            if (lo >= 0xDC00 && lo <= 0xDFFF)
                return 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
            t->i = saved;
        }
        return v;
    }
    case '0':
        if (peek(t, 0) >= '0' && peek(t, 0) <= '9')
            return fail(t, "\\0 followed by a digit is not allowed in ECMA-262's unicode mode");
        return 0;
    case '^':
    case '$':
    case '\\':
    case '.':
    case '*':
    case '+':
    case '?':
    case '(':
    case ')':
    case '[':
    case ']':
    case '{':
    case '}':
    case '|':
    case '/':
        return c;
    case '-':
        if (in_class)
            return c;
        break;
    case -1:
        t->i--;
        return fail(t, "the pattern ends with a lone backslash");
    default:
        break;
    }
    t->i--;
    if (c >= 0x20 && c < 0x7F)
        return fail(t, "\\%c is not an escape in ECMA-262's unicode mode", c);
    return fail(t, "a backslash before this character is not an escape in ECMA-262's unicode mode");
}

/* \p{...} or \P{...} after the letter (t->i at '{'): writes PCRE2's form. */
static int property(struct tr *t, int negate)
{
    if (peek(t, 0) != '{')
        return fail(t, "\\%c must be followed by {Name} or {Name=Value}", negate ? 'P' : 'p');
    size_t start = t->i + 1, eq = 0, k = start;
    for (; k < t->n && t->s[k] != '}'; k++) {
        unsigned char c = t->s[k];
        if (c == '=' && !eq)
            eq = k;
        else if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                   c == '_'))
            return fail(t, "\\%c{...} holds a character no property name has", negate ? 'P' : 'p');
    }
    if (k >= t->n || k == start)
        return fail(t, "\\%c{ is not closed", negate ? 'P' : 'p');
    char name[64], value[64];
    size_t nlen = (eq ? eq : k) - start;
    size_t vlen = eq ? k - eq - 1 : 0;
    if (nlen >= sizeof(name) || vlen >= sizeof(value))
        return fail(t, "unknown Unicode property");
    memcpy(name, t->s + start, nlen);
    name[nlen] = '\0';
    memcpy(value, eq ? (const char *)t->s + eq + 1 : "", vlen);
    value[vlen] = '\0';
    t->i = k + 1;
    const char *gc =
        eq ? (strcmp(name, "General_Category") == 0 || strcmp(name, "gc") == 0 ? value : NULL)
           : name;
    char pcre[80];
    pcre[0] = '\0';
    if (gc)
        for (size_t g = 0; g < AR_ARRAY_SIZE(gc_names); g++)
            if (strcmp(gc_names[g].name, gc) == 0)
                snprintf(pcre, sizeof(pcre), "%s", gc_names[g].pcre);
    if (!pcre[0] && eq) {
        if (strcmp(name, "Script") == 0 || strcmp(name, "sc") == 0)
            snprintf(pcre, sizeof(pcre), "sc:%s", value);
        else if (strcmp(name, "Script_Extensions") == 0 || strcmp(name, "scx") == 0)
            snprintf(pcre, sizeof(pcre), "scx:%s", value);
        else if (!gc)
            return fail(t, "unknown Unicode property '%s'", name);
    } else if (!pcre[0]) {
        snprintf(pcre, sizeof(pcre), "%s", name); /* a binary property: PCRE2 knows them */
    }
    if (!pcre[0] || !vlen) {
        if (eq && !vlen)
            return fail(t, "\\%c{%s=} names no value", negate ? 'P' : 'p', name);
    }
    if (!pcre[0])
        return fail(t, "unknown Unicode property value '%s'", value);
    ar_buf_printf(&t->out, "\\%c{%s}", negate ? 'P' : 'p', pcre);
    return 0;
}

/* ---- classes ---- */

struct class_set {
    struct range *r;
    size_t n, cap;
    struct ar_buf props; /* \p{..} items, written as PCRE2 reads them */
};

static int set_add(struct class_set *cs, uint32_t lo, uint32_t hi)
{
    if (ar_array_reserve(&cs->r, &cs->cap, cs->n + 1, sizeof(*cs->r), 16) < 0)
        return -1;
    cs->r[cs->n++] = (struct range){ lo, hi };
    return 0;
}

static int set_add_table(struct class_set *cs, const struct range *tab, size_t n, int negate)
{
    if (!negate) {
        for (size_t k = 0; k < n; k++)
            if (set_add(cs, tab[k].lo, tab[k].hi) < 0)
                return -1;
        return 0;
    }
    uint32_t from = 0;
    for (size_t k = 0; k < n; k++) {
        if (tab[k].lo > from && set_add(cs, from, tab[k].lo - 1) < 0)
            return -1;
        from = tab[k].hi + 1;
    }
    return from <= MAX_CP ? set_add(cs, from, MAX_CP) : 0;
}

/* A class escape letter (d D s S w W) as ranges. */
static int set_add_escape(struct class_set *cs, int c)
{
    int neg = c >= 'A' && c <= 'Z';
    switch (c | 0x20) {
    case 'd':
        return set_add_table(cs, digit_ranges, AR_ARRAY_SIZE(digit_ranges), neg);
    case 'w':
        return set_add_table(cs, word_ranges, AR_ARRAY_SIZE(word_ranges), neg);
    default:
        return set_add_table(cs, ws_ranges, AR_ARRAY_SIZE(ws_ranges), neg);
    }
}

static int is_class_escape(int c)
{
    return c == 'd' || c == 'D' || c == 's' || c == 'S' || c == 'w' || c == 'W';
}

/* Writes one range, without the surrogates (a UTF-8 string holds none). */
static void put_range(struct tr *t, uint32_t lo, uint32_t hi)
{
    if (lo <= 0xD7FF && hi >= 0xE000) {
        put_range(t, lo, 0xD7FF);
        put_range(t, 0xE000, hi);
        return;
    }
    if (is_surrogate(lo))
        lo = 0xE000;
    if (is_surrogate(hi))
        hi = 0xD7FF;
    if (lo > hi)
        return;
    put_cp(t, lo);
    if (hi != lo) {
        ar_buf_putc(&t->out, '-');
        put_cp(t, hi);
    }
}

/* Writes a set as a PCRE2 class; an empty one matches nothing, its negation anything. */
static void put_set(struct tr *t, struct class_set *cs, int negate)
{
    size_t mark = t->out.len;
    ar_buf_puts(&t->out, negate ? "[^" : "[");
    size_t body = t->out.len;
    for (size_t k = 0; k < cs->n; k++)
        put_range(t, cs->r[k].lo, cs->r[k].hi);
    if (cs->props.len)
        ar_buf_append(&t->out, cs->props.data, cs->props.len);
    if (t->out.len == body) {
        t->out.len = mark;
        t->out.data[mark] = '\0';
        put(t, negate ? "[\\x{0}-\\x{d7ff}\\x{e000}-\\x{10ffff}]" : "(?:(?!))");
        return;
    }
    ar_buf_putc(&t->out, ']');
}

/* One ClassAtom: a code point (*cp) or a set escape (*esc = the letter, or a property
 * written to cs->props: *esc = 'p'). Returns 0 or -1. */
static int class_atom(struct tr *t, struct class_set *cs, long *cp, int *esc)
{
    *esc = 0;
    if (peek(t, 0) != '\\') {
        *cp = next_cp(t);
        return 0;
    }
    t->i++;
    int c = peek(t, 0);
    if (is_class_escape(c)) {
        t->i++;
        *esc = c;
        return set_add_escape(cs, c);
    }
    if (c == 'p' || c == 'P') {
        t->i++;
        struct ar_buf saved = t->out;
        t->out = cs->props;
        int rc = property(t, c == 'P');
        cs->props = t->out;
        t->out = saved;
        *esc = 'p';
        return rc;
    }
    if (c == 'b') {
        t->i++;
        *cp = 0x08;
        return 0;
    }
    if (c == 'B')
        return fail(t, "\\B is not allowed in a class");
    if (c >= '1' && c <= '9')
        return fail(t, "a back-reference is not allowed in a class");
    *cp = char_escape(t, 1);
    return *cp < 0 ? -1 : 0;
}

static int character_class(struct tr *t)
{
    struct class_set cs;
    memset(&cs, 0, sizeof(cs));
    ar_buf_init(&cs.props, AR_BUF_UNLIMITED);
    size_t open = t->i;
    t->i++; /* '[' */
    int negate = peek(t, 0) == '^';
    if (negate)
        t->i++;
    int rc = 0;
    while (rc == 0) {
        if (at_end(t)) {
            t->i = open;
            rc = fail(t, "'[' is not closed");
            break;
        }
        if (peek(t, 0) == ']') {
            t->i++;
            break;
        }
        long a, b;
        int ea, eb;
        if ((rc = class_atom(t, &cs, &a, &ea)) < 0)
            break;
        if (peek(t, 0) == '-' && peek(t, 1) != ']' && peek(t, 1) != -1) {
            t->i++;
            if ((rc = class_atom(t, &cs, &b, &eb)) < 0)
                break;
            if (ea || eb) {
                rc = fail(t, "a range cannot start or end with a class escape like \\d in "
                             "ECMA-262's unicode mode");
                break;
            }
            if (a > b) {
                rc = fail(t, "a range out of order in a class");
                break;
            }
            rc = set_add(&cs, (uint32_t)a, (uint32_t)b);
        } else if (!ea) {
            rc = set_add(&cs, (uint32_t)a, (uint32_t)a);
        }
    }
    if (rc == 0)
        put_set(t, &cs, negate);
    free(cs.r);
    ar_buf_finish(&cs.props);
    return rc;
}

/* ---- atoms, terms, alternatives ---- */

static int group_name(struct tr *t, char *name, size_t n)
{
    /* t->i after '<' */
    size_t k = 0;
    while (!at_end(t) && peek(t, 0) != '>') {
        int c = peek(t, 0);
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$' ||
                 (k > 0 && c >= '0' && c <= '9');
        if (!ok)
            return fail(t, "a group name of letters, digits, '_' and '$' only is supported");
        if (k + 1 >= n)
            return fail(t, "a group name longer than %zu characters", n - 1);
        name[k++] = (char)c;
        t->i++;
    }
    if (at_end(t) || k == 0)
        return fail(t, "a group name must be written <name>");
    if (name[0] == '$')
        return fail(t, "a group name starting with '$' is not supported");
    name[k] = '\0';
    t->i++; /* '>' */
    return 0;
}

static int name_known(const struct tr *t, const char *name)
{
    for (size_t k = 0; k < t->names.len; k += strlen(t->names.data + k) + 1)
        if (strcmp(t->names.data + k, name) == 0)
            return 1;
    return 0;
}

static int disjunction(struct tr *t, int depth);

/* {n}, {n,}, {n,m} at t->i: 1 and the bounds, 0 when it is not one. */
static int braces(struct tr *t, unsigned long *lo, unsigned long *hi, int *open_ended)
{
    size_t k = 1;
    unsigned long a = 0, b = 0;
    int da = 0, db = 0, comma = 0;
    while (peek(t, k) >= '0' && peek(t, k) <= '9') {
        a = a > 1000000 ? a : a * 10 + (unsigned long)(peek(t, k) - '0');
        k++, da++;
    }
    if (!da)
        return 0;
    if (peek(t, k) == ',') {
        comma = 1;
        k++;
        while (peek(t, k) >= '0' && peek(t, k) <= '9') {
            b = b > 1000000 ? b : b * 10 + (unsigned long)(peek(t, k) - '0');
            k++, db++;
        }
    }
    if (peek(t, k) != '}')
        return 0;
    t->i += k + 1;
    *lo = a;
    *hi = comma ? (db ? b : a) : a;
    *open_ended = comma && !db;
    return 1;
}

/* A quantifier after an atom, if any; written out. */
static int quantifier(struct tr *t)
{
    int c = peek(t, 0);
    if (c == '*' || c == '+' || c == '?') {
        t->i++;
        ar_buf_putc(&t->out, (char)c);
    } else if (c == '{') {
        unsigned long lo, hi;
        int open_ended;
        if (!braces(t, &lo, &hi, &open_ended))
            return fail(t, "a lone '{' (write \\{ for the character)");
        if (!open_ended && lo > hi)
            return fail(t, "a quantifier {%lu,%lu} out of order", lo, hi);
        if (lo > 65535 || (!open_ended && hi > 65535))
            return fail(t, "a bound above 65535 is not supported (PCRE2's limit; use minLength "
                           "and maxLength for lengths)");
        if (open_ended)
            ar_buf_printf(&t->out, "{%lu,}", lo);
        else
            ar_buf_printf(&t->out, "{%lu,%lu}", lo, hi);
    } else {
        return 0;
    }
    if (peek(t, 0) == '?') {
        t->i++;
        ar_buf_putc(&t->out, '?');
    }
    c = peek(t, 0);
    if (c == '*' || c == '+' || c == '?' || c == '{')
        return fail(t, "nothing to repeat: a quantifier after a quantifier");
    return 0;
}

/* One term; *quantifiable says whether a quantifier may follow. */
static int atom(struct tr *t, int depth, int *quantifiable)
{
    int c = peek(t, 0);
    *quantifiable = 1;
    switch (c) {
    case '^':
    case '$':
        t->i++;
        ar_buf_putc(&t->out, (char)c);
        *quantifiable = 0;
        return 0;
    case '.':
        t->i++;
        put(t, "[^\\x{a}\\x{d}\\x{2028}\\x{2029}]");
        return 0;
    case '[':
        return character_class(t);
    case '*':
    case '+':
    case '?':
        return fail(t, "nothing to repeat before '%c'", c);
    case '{':
        return fail(t, "a lone '{' (write \\{ for the character)");
    case '}':
        return fail(t, "a lone '}' (write \\} for the character)");
    case ']':
        return fail(t, "a lone ']' (write \\] for the character)");
    case ')':
        return fail(t, "')' closes no group");
    case '(': {
        if (depth >= MAX_NESTING)
            return fail(t, "groups nest deeper than %d", MAX_NESTING);
        t->i++;
        if (peek(t, 0) == '?') {
            int k = peek(t, 1), k2 = peek(t, 2);
            if (k == ':' || k == '=' || k == '!') {
                t->i += 2;
                ar_buf_printf(&t->out, "(?%c", k);
                *quantifiable = k == ':';
            } else if (k == '<' && (k2 == '=' || k2 == '!')) {
                t->i += 3;
                ar_buf_printf(&t->out, "(?<%c", k2);
                *quantifiable = 0;
            } else if (k == '<') {
                char name[64];
                t->i += 2;
                if (group_name(t, name, sizeof(name)) < 0)
                    return -1;
                ar_buf_printf(&t->out, "(?<%s>", name);
            } else {
                return fail(t, "'(?' must be followed by ':', '=', '!', '<=', '<!' or '<name>'");
            }
        } else {
            ar_buf_putc(&t->out, '(');
        }
        if (disjunction(t, depth + 1) < 0)
            return -1;
        if (peek(t, 0) != ')')
            return fail(t, "'(' is not closed");
        t->i++;
        ar_buf_putc(&t->out, ')');
        return 0;
    }
    case '\\': {
        int e = peek(t, 1);
        if (e == 'b' || e == 'B') {
            t->i += 2;
            ar_buf_printf(&t->out, "\\%c", e);
            *quantifiable = 0;
            return 0;
        }
        if (e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S') {
            t->i += 2;
            struct class_set cs;
            memset(&cs, 0, sizeof(cs));
            ar_buf_init(&cs.props, AR_BUF_UNLIMITED);
            int rc = set_add_escape(&cs, e);
            if (rc == 0)
                put_set(t, &cs, 0);
            free(cs.r);
            ar_buf_finish(&cs.props);
            return rc;
        }
        if (e == 'p' || e == 'P') {
            t->i += 2;
            return property(t, e == 'P');
        }
        if (e >= '1' && e <= '9') {
            t->i++;
            unsigned long g = 0;
            while (peek(t, 0) >= '0' && peek(t, 0) <= '9') {
                g = g > 100000 ? g : g * 10 + (unsigned long)(peek(t, 0) - '0');
                t->i++;
            }
            if (g > t->ngroups)
                return fail(t, "\\%lu refers to a group the pattern does not have", g);
            ar_buf_printf(&t->out, "(?:\\g{%lu})", g);
            t->backref = 1;
            return 0;
        }
        if (e == 'k') {
            char name[64];
            t->i += 2;
            if (peek(t, 0) != '<')
                return fail(t, "\\k must be followed by <name>");
            t->i++;
            if (group_name(t, name, sizeof(name)) < 0)
                return -1;
            if (!name_known(t, name))
                return fail(t, "\\k<%s> names no group", name);
            ar_buf_printf(&t->out, "(?:\\k<%s>)", name);
            t->backref = 1;
            return 0;
        }
        t->i++;
        long cp = char_escape(t, 0);
        if (cp < 0)
            return -1;
        if (is_surrogate((uint32_t)cp))
            put(t, "(?:(?!))"); /* a lone surrogate: no UTF-8 string holds one */
        else
            put_cp(t, (uint32_t)cp);
        return 0;
    }
    default:
        put_cp(t, next_cp(t));
        return 0;
    }
}

static int alternative(struct tr *t, int depth)
{
    while (!at_end(t) && peek(t, 0) != '|' && peek(t, 0) != ')') {
        int quantifiable;
        if (atom(t, depth, &quantifiable) < 0)
            return -1;
        int c = peek(t, 0);
        if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (!quantifiable)
                return fail(t, "nothing to repeat: an assertion cannot take a quantifier in "
                               "ECMA-262's unicode mode");
            if (quantifier(t) < 0)
                return -1;
        }
    }
    return 0;
}

static int disjunction(struct tr *t, int depth)
{
    if (alternative(t, depth) < 0)
        return -1;
    while (peek(t, 0) == '|') {
        t->i++;
        ar_buf_putc(&t->out, '|');
        if (alternative(t, depth) < 0)
            return -1;
    }
    return 0;
}

/* Counts the capturing groups and collects the group names, so that back-references
 * (which may come before their group) can be checked. */
static int collect_groups(struct tr *t)
{
    int in_class = 0;
    for (size_t k = 0; k < t->n; k++) {
        unsigned char c = t->s[k];
        if (c == '\\') {
            k++;
        } else if (in_class) {
            in_class = c != ']';
        } else if (c == '[') {
            in_class = 1;
        } else if (c == '(') {
            if (k + 1 < t->n && t->s[k + 1] == '?') {
                if (k + 3 < t->n && t->s[k + 2] == '<' && t->s[k + 3] != '=' &&
                    t->s[k + 3] != '!') {
                    size_t e = k + 3;
                    while (e < t->n && t->s[e] != '>')
                        e++;
                    char name[64];
                    size_t len = e - (k + 3);
                    if (len >= sizeof(name))
                        len = sizeof(name) - 1;
                    memcpy(name, t->s + k + 3, len);
                    name[len] = '\0';
                    if (name_known(t, name)) {
                        t->i = k;
                        return fail(t, "two groups are named '%s'", name);
                    }
                    if (ar_buf_append(&t->names, name, len + 1) < 0)
                        return -1;
                    t->ngroups++;
                }
            } else {
                t->ngroups++;
            }
        }
    }
    return 0;
}

/* The PCRE2 pattern for s: every start tried inside one match, so the step limit
 * covers the whole search (pattern.h). PCRE2 counts a step where it may backtrack; a
 * repeat it makes possessive on its own ("[a-z]+[0-9]" as "[a-z]++[0-9]") scans without
 * one, so from each start of a long string it would run to the end uncounted:
 * PCRE2_NO_AUTO_POSSESS keeps every character a repeat takes a step it may give back,
 * and ECMA-262 has no possessive syntax of its own. */
static int translate(const char *s, size_t len, struct ar_buf *out, int *backref, char *why,
                     size_t whylen)
{
    struct tr t;
    memset(&t, 0, sizeof(t));
    t.s = (const unsigned char *)s;
    t.n = len;
    t.why = why;
    t.whylen = whylen;
    t.out = *out;
    ar_buf_init(&t.names, AR_BUF_UNLIMITED);
    int rc = collect_groups(&t);
    if (rc == 0) {
        put(&t, "^(?s:.*?)(?:");
        rc = disjunction(&t, 0);
        if (rc == 0 && !at_end(&t))
            rc = fail(&t, "')' closes no group");
        put(&t, ")");
    }
    ar_buf_finish(&t.names);
    *out = t.out;
    *backref = t.backref;
    if (rc == 0 && !out->data)
        rc = fail(&t, "out of memory");
    return rc;
}

int ar_pattern_compile(const char *s, size_t len, struct ar_pattern **out, char *why, size_t whylen)
{
    *out = NULL;
    if (len > AR_PATTERN_MAX_LEN) {
        snprintf(why, whylen, "longer than %d bytes", AR_PATTERN_MAX_LEN);
        return -1;
    }
    struct ar_buf b;
    int backref = 0;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    if (translate(s, len, &b, &backref, why, whylen) < 0) {
        ar_buf_finish(&b);
        return -1;
    }
    int errcode;
    PCRE2_SIZE erroff;
    pcre2_code *code =
        pcre2_compile((PCRE2_SPTR)b.data, b.len,
                      PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_MATCH_UNSET_BACKREF |
                          PCRE2_NEVER_BACKSLASH_C | PCRE2_NO_UTF_CHECK | PCRE2_NO_AUTO_POSSESS,
                      &errcode, &erroff, NULL);
    if (!code) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(errcode, msg, sizeof(msg));
        snprintf(why, whylen, "PCRE2 cannot match it as ECMA-262 does: %s", (const char *)msg);
        ar_buf_finish(&b);
        return -1;
    }
    struct ar_pattern *p = calloc(1, sizeof(*p));
    if (!p) {
        pcre2_code_free(code);
        ar_buf_finish(&b);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    p->code = code;
    p->backref = backref;
    p->text = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    *out = p;
    return 0;
}

int ar_pattern_match(const struct ar_pattern *p, const char *s, size_t len)
{
    if (p->backref && len > AR_PATTERN_BACKREF_MAX_BYTES)
        return AR_PATTERN_LIMIT;
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    int result = -1;
    if (mc && md) {
        uint64_t steps = AR_PATTERN_STEPS_BASE + (uint64_t)AR_PATTERN_STEPS_PER_BYTE * len;
        pcre2_set_match_limit(mc, steps > UINT32_MAX ? UINT32_MAX : (uint32_t)steps);
        pcre2_set_depth_limit(mc, steps > UINT32_MAX ? UINT32_MAX : (uint32_t)steps);
        pcre2_set_heap_limit(mc, AR_PATTERN_HEAP_KIB);
        int rc = pcre2_match(p->code, (PCRE2_SPTR)s, len, 0, 0, md, mc);
        if (rc >= 0)
            result = 1;
        else if (rc == PCRE2_ERROR_NOMATCH)
            result = 0;
        else if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
                 rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_NOMEMORY)
            result = AR_PATTERN_LIMIT;
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    return result;
}

void ar_pattern_destroy(struct ar_pattern *p)
{
    if (!p)
        return;
    pcre2_code_free(p->code);
    free(p->text);
    free(p);
}

int ar_pattern_valid(const char *s, size_t len)
{
    struct ar_pattern *p;
    char why[8];
    if (ar_pattern_compile(s, len, &p, why, sizeof(why)) < 0)
        return 0;
    ar_pattern_destroy(p);
    return 1;
}

const char *ar_pattern_pcre2_text(const struct ar_pattern *p)
{
    return p->text;
}
