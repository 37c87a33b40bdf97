/* The route manifest: loading with errors that point at the problem, lookup, rendering. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "route/route.h"
#include "util/file.h"

/* A manifest is a small hand-written file; anything this big is a mistake. */
#define MANIFEST_MAX_BYTES ((size_t)16 << 20)

static const char *const type_names[] = { "task", "skill" };
static const char *const list_keys[] = { "tasks", "skills" };

const char *ar_route_type_name(enum ar_route_type t)
{
    return (unsigned)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "unknown";
}

void ar_manifest_init(struct ar_manifest *m)
{
    m->items = NULL;
    m->n = 0;
    m->n_tasks = 0;
}

static void item_finish(struct ar_route_item *it)
{
    free(it->name);
    free(it->description);
    ar_strv_finish(&it->aliases);
    ar_strv_finish(&it->keywords);
}

void ar_manifest_finish(struct ar_manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        item_finish(&m->items[i]);
    free(m->items);
    ar_manifest_init(m);
}

/* Reads an optional array of strings (aliases, keywords) into sv. */
static int load_strings(json_t *obj, const char *key, const char *where, struct ar_strv *sv,
                        const char *name, struct ar_error *err)
{
    json_t *a = json_object_get(obj, key);
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return ar_error_set(err, AR_EUSAGE, name, "%s: %s/%s: expected an array of strings", name,
                            where, key);
    size_t i;
    json_t *s;
    json_array_foreach(a, i, s)
    {
        if (!json_is_string(s) || !*json_string_value(s))
            return ar_error_set(err, AR_EUSAGE, name, "%s: %s/%s/%zu: expected a non-empty string",
                                name, where, key, i);
        if (ar_strv_push(sv, json_string_value(s)) < 0)
            return ar_error_set(err, AR_ENOMEM, name, "out of memory");
    }
    return 0;
}

/* The key of a name in the duplicate check: its type and the name in ASCII lower case,
 * as ar_manifest_find() compares. Caller free()s; NULL when out of memory. */
static char *seen_key(enum ar_route_type type, const char *iname)
{
    size_t n = strlen(iname);
    char *k = malloc(n + 3);
    if (!k)
        return NULL;
    k[0] = (char)('0' + type);
    k[1] = ':';
    for (size_t i = 0; i <= n; i++)
        k[i + 2] = (char)tolower((unsigned char)iname[i]);
    return k;
}

static int load_item(struct ar_manifest *m, enum ar_route_type type, size_t index, json_t *obj,
                     json_t *seen, const char *name, struct ar_error *err)
{
    char where[64];
    snprintf(where, sizeof(where), "/%s/%zu", list_keys[type], index);
    if (!json_is_object(obj))
        return ar_error_set(err, AR_EUSAGE, name, "%s: %s: expected an object", name, where);
    static const char *const required[] = { "name", "description" };
    for (size_t k = 0; k < 2; k++) {
        json_t *v = json_object_get(obj, required[k]);
        if (!v)
            return ar_error_set(err, AR_EUSAGE, name, "%s: %s: missing '%s'", name, where,
                                required[k]);
        if (!json_is_string(v) || (k == 0 && !*json_string_value(v)))
            return ar_error_set(err, AR_EUSAGE, name, "%s: %s/%s: expected a%s string", name, where,
                                required[k], k == 0 ? " non-empty" : "");
    }
    const char *iname = json_string_value(json_object_get(obj, "name"));
    /* A hash set, not a scan of the items so far: 100,000 tasks load in linear time. */
    char *key = seen_key(type, iname);
    if (!key)
        return ar_error_set(err, AR_ENOMEM, name, "out of memory");
    json_t *dup = json_object_get(seen, key);
    if (dup) {
        free(key);
        return ar_error_set(err, AR_EUSAGE, name,
                            "%s: %s/name: '%s' is also /%s/%" JSON_INTEGER_FORMAT, name, where,
                            iname, list_keys[type], json_integer_value(dup));
    }
    int set = json_object_set_new(seen, key, json_integer((json_int_t)index));
    free(key);
    if (set != 0)
        return ar_error_set(err, AR_ENOMEM, name, "out of memory");
    struct ar_route_item *it = &m->items[m->n];
    memset(it, 0, sizeof(*it));
    it->type = type;
    it->index = index;
    it->name = strdup(iname);
    it->description = strdup(json_string_value(json_object_get(obj, "description")));
    m->n++; /* counted now so ar_manifest_finish() frees a half-loaded item too */
    if (!it->name || !it->description)
        return ar_error_set(err, AR_ENOMEM, name, "out of memory");
    int rc = load_strings(obj, "aliases", where, &it->aliases, name, err);
    if (rc == 0)
        rc = load_strings(obj, "keywords", where, &it->keywords, name, err);
    return rc;
}

int ar_manifest_parse(struct ar_manifest *m, const char *text, size_t len, const char *name,
                      struct ar_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!root)
        return ar_error_set(err, AR_EUSAGE, name, "%s:%d:%d: invalid JSON: %s", name, jerr.line,
                            jerr.column, jerr.text);
    int rc = 0;
    json_t *lists[2] = { NULL, NULL };
    if (!json_is_object(root)) {
        rc = ar_error_set(err, AR_EUSAGE, name,
                          "%s: expected an object with \"tasks\" and \"skills\" arrays", name);
        goto out;
    }
    size_t total = 0;
    for (int t = 0; t < 2; t++) {
        lists[t] = json_object_get(root, list_keys[t]);
        if (lists[t] && !json_is_array(lists[t])) {
            rc = ar_error_set(err, AR_EUSAGE, name, "%s: /%s: expected an array", name,
                              list_keys[t]);
            goto out;
        }
        total += json_array_size(lists[t]);
    }
    if (total == 0) {
        rc = ar_error_set(err, AR_EUSAGE, name, "%s: no tasks and no skills", name);
        goto out;
    }
    m->items = calloc(total, sizeof(*m->items));
    if (!m->items) {
        rc = ar_error_set(err, AR_ENOMEM, name, "out of memory");
        goto out;
    }
    json_t *seen = json_object();
    if (!seen)
        rc = ar_error_set(err, AR_ENOMEM, name, "out of memory");
    for (int t = 0; t < 2 && rc == 0; t++) {
        size_t i;
        json_t *obj;
        json_array_foreach(lists[t], i, obj)
        {
            rc = load_item(m, (enum ar_route_type)t, i, obj, seen, name, err);
            if (rc)
                break;
        }
        if (t == 0)
            m->n_tasks = m->n;
    }
    json_decref(seen);
    if (rc)
        ar_manifest_finish(m);
out:
    json_decref(root);
    return rc;
}

int ar_manifest_load(struct ar_manifest *m, const char *path, struct ar_error *err)
{
    struct ar_buf b;
    ar_buf_init(&b, MANIFEST_MAX_BYTES);
    int rc = ar_file_read(path, &b, err);
    if (rc == 0)
        rc = ar_manifest_parse(m, ar_buf_cstr(&b), b.len, path, err);
    else {
        /* An unreadable manifest is bad input, like a malformed one (exit 2). */
        rc = rc == AR_ENOMEM ? AR_ENOMEM : AR_EUSAGE;
        if (err)
            err->code = rc;
    }
    ar_buf_finish(&b);
    return rc;
}

const struct ar_route_item *ar_manifest_find(const struct ar_manifest *m, enum ar_route_type type,
                                             const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->items[i].type == type && strcasecmp(m->items[i].name, name) == 0)
            return &m->items[i];
    return NULL;
}

static int render_list(struct ar_buf *out, const char *label, const struct ar_strv *sv)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sv->n; i++)
        rc = ar_buf_printf(out, "%s%s", i ? ", " : label, sv->v[i]);
    return rc;
}

int ar_manifest_render(const struct ar_manifest *m, struct ar_buf *out)
{
    int rc = 0;
    for (int t = 0; t < 2 && rc == 0; t++) {
        rc = ar_buf_printf(out, "%s%s:\n", t ? "\n" : "", t ? "Skills" : "Tasks");
        size_t shown = 0;
        for (size_t i = 0; rc == 0 && i < m->n; i++) {
            const struct ar_route_item *it = &m->items[i];
            if (it->type != (enum ar_route_type)t)
                continue;
            shown++;
            rc = ar_buf_printf(out, "- %s: %s", it->name, it->description);
            if (rc == 0 && (it->aliases.n || it->keywords.n)) {
                rc = ar_buf_puts(out, " (");
                if (rc == 0)
                    rc = render_list(out, "aliases: ", &it->aliases);
                if (rc == 0 && it->aliases.n && it->keywords.n)
                    rc = ar_buf_puts(out, "; ");
                if (rc == 0)
                    rc = render_list(out, "keywords: ", &it->keywords);
                if (rc == 0)
                    rc = ar_buf_putc(out, ')');
            }
            if (rc == 0)
                rc = ar_buf_putc(out, '\n');
        }
        if (rc == 0 && shown == 0)
            rc = ar_buf_puts(out, "(none)\n");
    }
    return rc;
}
