/*
 * The `format` keyword as an assertion, for the formats users check most. In draft
 * 2020-12 `format` is an annotation: agentrun checks it only when the contract is
 * loaded with AR_CONTRACT_FORMAT_ASSERT (`extract --format-assert`). A format not
 * in this table stays an annotation even then (docs/prompts.md lists them).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contract/internal.h"
#include "util/macros.h"

static int digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static int num(const char *s, size_t n)
{
    int v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* RFC 3339 full-date. */
static int is_date(const char *s, size_t n)
{
    static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (n != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4) || !digits(s + 5, 2) ||
        !digits(s + 8, 2))
        return 0;
    int y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
    if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return !(m == 2 && d == 29 && !leap);
}

/* RFC 3339 full-time, a leap second only at 23:59:60 UTC. */
static int is_time(const char *s, size_t n)
{
    if (n < 9 || s[2] != ':' || s[5] != ':' || !digits(s, 2) || !digits(s + 3, 2) ||
        !digits(s + 6, 2))
        return 0;
    int h = num(s, 2), m = num(s + 3, 2), sec = num(s + 6, 2);
    size_t i = 8;
    if (i < n && s[i] == '.') {
        size_t k = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == k)
            return 0;
    }
    if (i >= n)
        return 0;
    int off = 0;
    if (s[i] == 'Z' || s[i] == 'z') {
        i++;
    } else if (s[i] == '+' || s[i] == '-') {
        if (n - i != 6 || s[i + 3] != ':' || !digits(s + i + 1, 2) || !digits(s + i + 4, 2))
            return 0;
        int oh = num(s + i + 1, 2), om = num(s + i + 4, 2);
        if (oh > 23 || om > 59)
            return 0;
        off = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
        i += 6;
    } else {
        return 0;
    }
    if (i != n || h > 23 || m > 59 || sec > 60)
        return 0;
    if (sec == 60) {
        int utc = ((h * 60 + m - off) % 1440 + 1440) % 1440;
        return utc == 23 * 60 + 59;
    }
    return 1;
}

static int is_date_time(const char *s, size_t n)
{
    return n > 11 && (s[10] == 'T' || s[10] == 't') && is_date(s, 10) && is_time(s + 11, n - 11);
}

/* ISO 8601 duration as RFC 3339 appendix A has it: P1Y2M3DT4H5M6S, P1W. */
static int is_duration(const char *s, size_t n)
{
    if (n < 2 || s[0] != 'P')
        return 0;
    size_t i = 1;
    const char *date_units = "YMD", *time_units = "HMS";
    int any = 0, in_time = 0, weeks = 0;
    size_t unit_pos = 0;
    while (i < n) {
        if (s[i] == 'T') {
            if (in_time)
                return 0;
            in_time = 1;
            unit_pos = 0;
            i++;
            if (i == n)
                return 0;
            continue;
        }
        size_t k = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == k || i == n)
            return 0;
        if (s[i] == 'W' && !in_time && !any) {
            weeks = 1;
            i++;
            any = 1;
            continue;
        }
        if (weeks)
            return 0;
        const char *units = in_time ? time_units : date_units;
        const char *u = strchr(units + unit_pos, s[i]);
        if (!u || !*u)
            return 0;
        unit_pos = (size_t)(u - units) + 1;
        any = 1;
        i++;
    }
    return any && !(in_time && unit_pos == 0) && !(weeks && i != n);
}

static int is_ipv4(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    while (parts < 4) {
        size_t k = i;
        while (i < n && s[i] >= '0' && s[i] <= '9' && i - k < 4)
            i++;
        if (i == k || i - k > 3 || (i - k > 1 && s[k] == '0') || num(s + k, i - k) > 255)
            return 0;
        parts++;
        if (parts < 4) {
            if (i >= n || s[i] != '.')
                return 0;
            i++;
        }
    }
    return i == n;
}

static int hexdig(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_ipv6(const char *s, size_t n)
{
    size_t groups = 0, i = 0;
    int gap = 0;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 1;
        i = 2;
    } else if (n && s[0] == ':') {
        return 0;
    }
    while (i < n) {
        size_t k = i;
        while (i < n && hexdig(s[i]) && i - k < 5)
            i++;
        if (i < n && s[i] == '.') {
            /* an IPv4 tail */
            if (!is_ipv4(s + k, n - k))
                return 0;
            groups += 2;
            i = n;
            break;
        }
        if (i == k || i - k > 4)
            return 0;
        groups++;
        if (i == n)
            break;
        if (s[i] != ':')
            return 0;
        i++;
        if (i < n && s[i] == ':') {
            if (gap)
                return 0;
            gap = 1;
            i++;
        } else if (i == n) {
            return 0;
        }
    }
    return gap ? groups < 8 : groups == 8;
}

static int hostname_label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* RFC 1123 hostname: labels of 1-63 letters, digits and '-', not starting or ending with
 * '-', 253 bytes in all; an A-label ("xn--") is taken as written. */
static int is_hostname(const char *s, size_t n)
{
    if (n == 0 || n > 253)
        return 0;
    size_t i = 0;
    while (i < n) {
        size_t k = i;
        while (i < n && s[i] != '.') {
            if (!hostname_label_char(s[i]))
                return 0;
            i++;
        }
        size_t len = i - k;
        if (len == 0 || len > 63 || s[k] == '-' || s[i - 1] == '-')
            return 0;
        if (len >= 4 && s[k + 2] == '-' && s[k + 3] == '-' &&
            !((s[k] | 0x20) == 'x' && (s[k + 1] | 0x20) == 'n'))
            return 0;
        if (i < n) {
            i++;
            if (i == n)
                return 0;
        }
    }
    return 1;
}

/* RFC 5321 mailbox, the common part: local@domain, a dot-atom or quoted local part,
 * a hostname or an address literal. */
static int is_email(const char *s, size_t n)
{
    const char *at = NULL;
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == '@') {
            at = s + i - 1;
            break;
        }
    if (!at || at == s || (size_t)(at - s) + 1 >= n)
        return 0;
    size_t ln = (size_t)(at - s);
    if (s[0] == '"') {
        if (ln < 2 || s[ln - 1] != '"')
            return 0;
    } else {
        static const char atext[] = "!#$%&'*+-/=?^_`{|}~";
        if (s[0] == '.' || s[ln - 1] == '.')
            return 0;
        for (size_t i = 0; i < ln; i++) {
            char c = s[i];
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     strchr(atext, c) || (unsigned char)c >= 0x80;
            if (c == '.' && i + 1 < ln && s[i + 1] == '.')
                return 0;
            if (!ok && c != '.')
                return 0;
        }
    }
    const char *d = at + 1;
    size_t dn = n - ln - 1;
    if (d[0] == '[') {
        if (d[dn - 1] != ']')
            return 0;
        if (dn > 6 && strncmp(d + 1, "IPv6:", 5) == 0)
            return is_ipv6(d + 6, dn - 7);
        return is_ipv4(d + 1, dn - 2);
    }
    return is_hostname(d, dn);
}

static int is_uuid(const char *s, size_t n)
{
    if (n != 36)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!hexdig(s[i])) {
            return 0;
        }
    }
    return 1;
}

static int is_json_pointer(const char *s, size_t n)
{
    if (n && s[0] != '/')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '~' && (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1')))
            return 0;
    return 1;
}

static int is_relative_json_pointer(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == 0 || (i > 1 && s[0] == '0'))
        return 0;
    if (i < n && s[i] == '#')
        return i + 1 == n;
    return is_json_pointer(s + i, n - i);
}

static int uri_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("-._~:/?#[]@!$&'()*+,;=%", c) != NULL;
}

/* RFC 3986 URI reference: allowed characters, well-formed %XX; `absolute` wants a
 * scheme. IRIs (iri, iri-reference) also take non-ASCII. */
static int is_uri(const char *s, size_t n, int absolute, int iri)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n || !hexdig(s[i + 1]) || !hexdig(s[i + 2]))
                return 0;
        } else if (!(uri_char(c) || (iri && c >= 0x80))) {
            return 0;
        }
    }
    size_t k = 0;
    while (k < n &&
           ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
            (k && ((s[k] >= '0' && s[k] <= '9') || s[k] == '+' || s[k] == '-' || s[k] == '.'))))
        k++;
    int has_scheme = k > 0 && k < n && s[k] == ':';
    if (absolute && !has_scheme)
        return 0;
    /* a '[' only in an IP literal authority, '#' once */
    const char *hash = memchr(s, '#', n);
    if (hash && memchr(hash + 1, '#', n - (size_t)(hash + 1 - s)))
        return 0;
    if (has_scheme && k + 2 < n && s[k + 1] == '/' && s[k + 2] == '/') {
        const char *auth = s + k + 3;
        size_t an = strcspn(auth, "/?#");
        if (an > (size_t)(s + n - auth))
            an = (size_t)(s + n - auth);
        const char *lb = memchr(auth, '[', an);
        if (lb && !memchr(lb, ']', an - (size_t)(lb - auth)))
            return 0;
        for (size_t i = 0; i < an; i++)
            if (auth[i] == '[' && i && auth[i - 1] != '@')
                return 0;
    } else if (memchr(s, '[', n)) {
        return 0;
    }
    return 1;
}

static int is_uri_template(const char *s, size_t n)
{
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '{') {
            if (open)
                return 0;
            open = 1;
        } else if (s[i] == '}') {
            if (!open)
                return 0;
            open = 0;
        }
    }
    return !open;
}

int ar_format_check(const char *format, const char *s, size_t n)
{
    if (strcmp(format, "date-time") == 0)
        return is_date_time(s, n);
    if (strcmp(format, "date") == 0)
        return is_date(s, n);
    if (strcmp(format, "time") == 0)
        return is_time(s, n);
    if (strcmp(format, "duration") == 0)
        return is_duration(s, n);
    if (strcmp(format, "email") == 0)
        return is_email(s, n);
    if (strcmp(format, "hostname") == 0)
        return is_hostname(s, n);
    if (strcmp(format, "ipv4") == 0)
        return is_ipv4(s, n);
    if (strcmp(format, "ipv6") == 0)
        return is_ipv6(s, n);
    if (strcmp(format, "uri") == 0)
        return is_uri(s, n, 1, 0);
    if (strcmp(format, "uri-reference") == 0)
        return is_uri(s, n, 0, 0);
    if (strcmp(format, "iri") == 0)
        return is_uri(s, n, 1, 1);
    if (strcmp(format, "iri-reference") == 0)
        return is_uri(s, n, 0, 1);
    if (strcmp(format, "uri-template") == 0)
        return is_uri_template(s, n);
    if (strcmp(format, "uuid") == 0)
        return is_uuid(s, n);
    if (strcmp(format, "json-pointer") == 0)
        return is_json_pointer(s, n);
    if (strcmp(format, "relative-json-pointer") == 0)
        return is_relative_json_pointer(s, n);
    if (strcmp(format, "regex") == 0)
        return ar_pattern_valid(s, n);
    return -1;
}
