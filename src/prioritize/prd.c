/* Reading a folder of PRDs: ids, order, the per-PRD cap and UTF-8 repair. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prioritize/prioritize.h"
#include "util/array.h"
#include "util/utf8.h"
#include "util/file.h"

static const char *const prd_extensions[] = { ".md", ".markdown", ".txt" };

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

void ar_prd_set_init(struct ar_prd_set *set)
{
    set->v = NULL;
    set->n = 0;
    set->cap = 0;
    ar_strv_init(&set->warnings);
}

void ar_prd_finish(struct ar_prd *prd)
{
    free(prd->id);
    free(prd->path);
    free(prd->text);
    memset(prd, 0, sizeof(*prd));
}

void ar_prd_set_finish(struct ar_prd_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        ar_prd_finish(&set->v[i]);
    free(set->v);
    ar_strv_finish(&set->warnings);
    ar_prd_set_init(set);
}

int ar_prd_init(struct ar_prd *prd, const char *id, const char *path, const char *data, size_t len,
                size_t size, size_t max_bytes)
{
    memset(prd, 0, sizeof(*prd));
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    const unsigned char *p = (const unsigned char *)data;
    size_t limit = len;
    if (max_bytes && size > max_bytes) {
        prd->truncated = 1;
        if (limit > max_bytes)
            limit = max_bytes;
    }
    size_t i = 0;
    int rc = 0;
    while (i < limit && rc == 0) {
        size_t n = ar_utf8_seq_len(data + i, len - i);
        if (n == 0 || p[i] == 0) {
            /* One replacement per bad byte: simple, and the count in the
             * warning then says how many bytes were lost. */
            rc = ar_buf_append(&b, replacement, sizeof(replacement) - 1);
            prd->invalid++;
            i++;
            continue;
        }
        if (i + n > limit)
            break; /* a character that straddles the cap is left out whole */
        rc = ar_buf_append(&b, p + i, n);
        i += n;
    }
    prd->size = size;
    prd->shown = prd->truncated ? i : size;
    if (rc == 0 && prd->truncated)
        rc = ar_buf_printf(&b, "\n[\xe2\x80\xa6 truncated: %zu of %zu bytes shown]", prd->shown,
                           size);
    prd->id = strdup(id);
    prd->path = strdup(path);
    prd->text = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    if (rc || !prd->id || !prd->path || !prd->text) {
        ar_prd_finish(prd);
        return AR_ENOMEM;
    }
    return 0;
}

static int has_prd_extension(const char *name, size_t *stem_len)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(prd_extensions) / sizeof(prd_extensions[0]); i++) {
        size_t e = strlen(prd_extensions[i]);
        /* "x.md" counts, ".md" alone is a hidden file and never gets here. */
        if (n > e && strcasecmp(name + n - e, prd_extensions[i]) == 0) {
            *stem_len = n - e;
            return 1;
        }
    }
    return 0;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int slash = la > 0 && a[la - 1] != '/';
    char *s = malloc(la + (size_t)slash + lb + 1);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    if (slash)
        s[la] = '/';
    memcpy(s + la + (size_t)slash, b, lb + 1);
    return s;
}

static int push_prd(struct ar_prd_set *set, struct ar_prd *prd)
{
    if (ar_array_reserve(&set->v, &set->cap, set->n + 1, sizeof(*set->v), 16) < 0)
        return AR_ENOMEM;
    set->v[set->n++] = *prd;
    return 0;
}

static int read_prd(struct ar_prd_set *set, const char *root, const char *path, const char *rel,
                    size_t stem_len, size_t max_bytes, struct ar_error *err)
{
    /* Opened beneath the PRD folder: a link out of it, a FIFO or a device is an error
     * that names the file (util/file.h), never a read of what it leads to. */
    int fd;
    struct stat st;
    int rc = ar_file_open_at(root, rel, &fd, &st, err);
    if (rc)
        return rc;
    /* Only the capped part is read (plus a few bytes to see whether the last
     * character is whole); the marker reports the full size from fstat. */
    struct ar_buf b;
    ar_buf_init(&b, max_bytes ? max_bytes + 4 : AR_BUF_UNLIMITED);
    rc = ar_file_read_fd(fd, path, &b, NULL);
    close(fd);
    if (rc && rc != AR_ETOOBIG) {
        ar_buf_finish(&b);
        return ar_error_set(err, rc == AR_ENOMEM ? AR_ENOMEM : AR_EIO, path, "cannot read '%s'",
                            path);
    }
    size_t size = (size_t)st.st_size > b.len ? (size_t)st.st_size : b.len;
    /* The id goes to the model inside a JSON string and comes back in its answer:
     * a name that is not UTF-8 could never be matched as its raw bytes. Its id is
     * the lossy form, the one the model sees (two files that become the same id
     * are refused below like any duplicate). */
    struct ar_buf idb;
    ar_buf_init(&idb, AR_BUF_UNLIMITED);
    size_t bad_name = 0;
    char *id = ar_utf8_append_lossy(&idb, rel, stem_len, &bad_name) == 0 ? ar_buf_detach(&idb, NULL)
                                                                         : NULL;
    ar_buf_finish(&idb);
    if (id && bad_name &&
        ar_strv_pushf(&set->warnings,
                      "the file name of '%s' is not valid UTF-8: its id is '%s' (U+FFFD for each "
                      "bad byte)",
                      path, id) < 0) {
        free(id);
        id = NULL;
    }
    struct ar_prd prd;
    if (!id || ar_prd_init(&prd, id, path, ar_buf_cstr(&b), b.len, size, max_bytes) < 0) {
        free(id);
        ar_buf_finish(&b);
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    }
    free(id);
    ar_buf_finish(&b);
    if (prd.invalid &&
        ar_strv_pushf(&set->warnings, "'%s' is not valid UTF-8: %zu byte%s replaced with U+FFFD",
                      path, prd.invalid, prd.invalid == 1 ? "" : "s") < 0) {
        ar_prd_finish(&prd);
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    }
    if (push_prd(set, &prd) < 0) {
        ar_prd_finish(&prd);
        return ar_error_set(err, AR_ENOMEM, path, "out of memory");
    }
    return 0;
}

struct walk {
    const char *root; /* the PRD folder: every file is read beneath it */
    struct ar_prd_set *set;
    const struct ar_prd_read_opts *o;
    size_t max_bytes;
    size_t entries; /* visible entries seen in DIR itself */
    size_t subdirs; /* visible subdirectories skipped without -r */
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(struct walk *w, const char *path, const char *rel, int depth,
                    struct ar_error *err)
{
    DIR *d = opendir(path);
    if (!d)
        return ar_error_set_sys(err, depth == 0 ? AR_EUSAGE : AR_EIO, errno, path,
                                "cannot read directory '%s': %s", path, strerror(errno));
    struct ar_strv names = AR_STRV_INIT;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ".", ".." and hidden files alike */
        if (ar_strv_push(&names, de->d_name) < 0) {
            rc = ar_error_set(err, AR_ENOMEM, path, "out of memory");
            break;
        }
    }
    closedir(d);
    if (depth == 0)
        w->entries = names.n;
    /* Sorted here as well as at the end, so warnings come in a stable order. */
    if (names.n)
        ar_sort(names.v, names.n, sizeof(char *), cmp_str);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        const char *name = names.v[i];
        char *full = join(path, name);
        char *r = rel[0] ? join(rel, name) : strdup(name);
        if (!full || !r) {
            free(full);
            free(r);
            rc = ar_error_set(err, AR_ENOMEM, path, "out of memory");
            break;
        }
        struct stat st;
        size_t stem;
        if (lstat(full, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                if (w->o->recursive && depth + 1 < AR_PRD_MAX_DEPTH)
                    rc = walk_dir(w, full, r, depth + 1, err);
                else if (depth == 0)
                    w->subdirs++;
            } else if (has_prd_extension(name, &stem)) {
                rc = read_prd(w->set, w->root, full, r, strlen(r) - (strlen(name) - stem),
                              w->max_bytes, err);
            }
        }
        free(full);
        free(r);
    }
    ar_strv_finish(&names);
    return rc;
}

static int cmp_prd(const void *a, const void *b)
{
    return strcmp(((const struct ar_prd *)a)->id, ((const struct ar_prd *)b)->id);
}

int ar_prd_set_read(struct ar_prd_set *set, const char *dir, const struct ar_prd_read_opts *o,
                    struct ar_error *err)
{
    struct stat st;
    if (stat(dir, &st) < 0)
        return ar_error_set_sys(err, AR_EUSAGE, errno, dir, "cannot read directory '%s': %s", dir,
                                strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return ar_error_set(err, AR_EUSAGE, dir, "'%s' is not a directory", dir);
    struct walk w = { dir, set, o, o->max_bytes ? o->max_bytes : AR_PRD_DEFAULT_MAX_BYTES, 0, 0 };
    int rc = walk_dir(&w, dir, "", 0, err);
    if (rc < 0)
        return rc;
    if (w.entries == 0)
        return ar_error_set(err, AR_EUSAGE, dir, "directory '%s' is empty", dir);
    if (set->n == 0) {
        if (w.subdirs)
            return ar_error_set(err, AR_EUSAGE, dir,
                                "no PRD in '%s': no *.md, *.markdown or *.txt file "
                                "(use -r to read subdirectories)",
                                dir);
        return ar_error_set(err, AR_EUSAGE, dir,
                            "no PRD in '%s': no *.md, *.markdown or *.txt file", dir);
    }
    ar_sort(set->v, set->n, sizeof(set->v[0]), cmp_prd);
    for (size_t i = 1; i < set->n; i++)
        if (strcmp(set->v[i - 1].id, set->v[i].id) == 0)
            return ar_error_set(err, AR_EUSAGE, dir,
                                "two PRDs have the id '%s': '%s' and '%s'; rename one",
                                set->v[i].id, set->v[i - 1].path, set->v[i].path);
    return 0;
}

const struct ar_prd *ar_prd_set_find(const struct ar_prd_set *set, const char *id)
{
    struct ar_prd key = { 0 };
    key.id = (char *)id;
    if (!set->n)
        return NULL;
    return bsearch(&key, set->v, set->n, sizeof(set->v[0]), cmp_prd);
}

int ar_prd_set_render(const struct ar_prd_set *set, struct ar_buf *out)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < set->n; i++) {
        const struct ar_prd *p = &set->v[i];
        size_t tl = strlen(p->text);
        /* Ids come from file names: a quote in one would end the attribute early. */
        rc = ar_buf_puts(out, "<prd id=\"");
        for (const char *c = p->id; rc == 0 && *c; c++)
            rc = *c == '"' ? ar_buf_puts(out, "&quot;") : ar_buf_putc(out, *c);
        if (rc == 0)
            rc = ar_buf_printf(out, "\">\n%s%s</prd>\n%s", p->text,
                               tl && p->text[tl - 1] == '\n' ? "" : "\n",
                               i + 1 < set->n ? "\n" : "");
    }
    return rc;
}
