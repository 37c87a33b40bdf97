/*
 * Finding a template: the --prompts-dir directory, then the user's config
 * directory, then the copy embedded in the binary. An override replaces the
 * embedded template whole; there is no merging, so what `agentrun prompts
 * show` prints is exactly what is sent.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prompt/internal.h"
#include "prompt/prompt.h"
#include "util/array.h"
#include "util/file.h"
#include "util/suggest.h"

const struct ar_prompt_embedded *ar_prompt_embedded_find(const char *name)
{
    size_t lo = 0, hi = ar_prompt_embedded_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, ar_prompt_embedded[mid].name);
        if (c == 0)
            return &ar_prompt_embedded[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Names become file names, so nothing that could leave the directory. */
static int valid_name(const char *name)
{
    if (!name[0] || name[0] == '.' || name[0] == '-')
        return 0;
    for (const char *s = name; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

int ar_prompt_config_dir(struct ar_buf *out)
{
    /* The XDG spec says a relative XDG_CONFIG_HOME is invalid and ignored. */
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/')
        return ar_buf_printf(out, "%s/agentrun/prompts", xdg);
    const char *home = getenv("HOME");
    if (home && home[0])
        return ar_buf_printf(out, "%s/.config/agentrun/prompts", home);
    return AR_ENOTFOUND;
}

static int load_file(const char *dir, const char *file, const char *path,
                     enum ar_prompt_source source, struct ar_prompt **out, struct ar_error *err)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_PROMPT_MAX_BYTES);
    int rc = ar_file_read_at(dir, file, &b, err);
    if (rc == 0)
        rc = ar_prompt_parse(path, ar_buf_cstr(&b), b.len, out, err);
    if (rc == 0)
        ar_prompt_set_source(*out, source);
    ar_buf_finish(&b);
    return rc;
}

/* Tries DIR/NAME.md: 1 when loaded, 0 when there is no such file, or an error. */
static int try_dir(const char *dir, const char *name, enum ar_prompt_source source,
                   struct ar_prompt **out, struct ar_error *err)
{
    struct ar_buf path;
    ar_buf_init(&path, AR_BUF_UNLIMITED);
    if (ar_buf_printf(&path, "%s/%s.md", dir, name)) {
        ar_buf_finish(&path);
        return ar_error_set(err, AR_ENOMEM, dir, "out of memory");
    }
    struct stat st;
    int rc = 0;
    /* lstat: a dangling link is a template that is there, and unreadable. */
    if (lstat(path.data, &st) == 0) {
        rc = load_file(dir, path.data + strlen(dir) + 1, path.data, source, out, err);
        if (rc == 0)
            rc = 1;
    } else if (errno != ENOENT && errno != ENOTDIR) {
        rc = ar_error_set_sys(err, AR_EIO, errno, path.data, "cannot read '%s': %s", path.data,
                              strerror(errno));
    }
    ar_buf_finish(&path);
    return rc;
}

/* The templates there are, into dst ("prioritize, repair, review, route"), and the one
 * name most likely meant (util/suggest.h) into near ("" when none). */
static void known_names(const char *prompts_dir, const char *name, char *dst, size_t n, char *near,
                        size_t near_size)
{
    struct ar_strv names = AR_STRV_INIT;
    size_t used = 0;
    dst[0] = '\0';
    near[0] = '\0';
    ar_prompt_list(prompts_dir, &names);
    for (size_t i = 0; i < names.n && used < n; i++) {
        int w = snprintf(dst + used, n - used, "%s%s", i ? ", " : "", names.v[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    const char *best = ar_suggest(name, ar_strv_get(&names), names.n);
    if (best)
        snprintf(near, near_size, "%s", best);
    ar_strv_finish(&names);
}

int ar_prompt_load(const char *name, const char *prompts_dir, struct ar_prompt **out,
                   struct ar_error *err)
{
    *out = NULL;
    if (!valid_name(name))
        return ar_error_set(err, AR_EUSAGE, name, "invalid template name '%s'", name);
    if (prompts_dir && !ar_is_dir(prompts_dir))
        return ar_error_set(err, AR_EUSAGE, prompts_dir, "prompts directory '%s' does not exist",
                            prompts_dir);
    int rc = 0;
    if (prompts_dir)
        rc = try_dir(prompts_dir, name, AR_PROMPT_DIR, out, err);
    if (rc == 0) {
        struct ar_buf dir;
        ar_buf_init(&dir, AR_BUF_UNLIMITED);
        if (ar_prompt_config_dir(&dir) == 0)
            rc = try_dir(dir.data, name, AR_PROMPT_CONFIG, out, err);
        ar_buf_finish(&dir);
    }
    if (rc)
        return rc < 0 ? rc : 0;
    const struct ar_prompt_embedded *e = ar_prompt_embedded_find(name);
    if (!e) {
        char known[160], near[64];
        known_names(prompts_dir, name, known, sizeof(known), near, sizeof(near));
        if (near[0])
            return ar_error_set(err, AR_EUSAGE, name,
                                "unknown template '%s'; did you mean '%s'? (known templates: %s)",
                                name, near, known);
        return ar_error_set(err, AR_EUSAGE, name, "unknown template '%s'; known templates: %s",
                            name, known);
    }
    char origin[256];
    snprintf(origin, sizeof(origin), "prompts/%s.md", e->name);
    rc = ar_prompt_parse(origin, e->text, e->len, out, err);
    if (rc == 0)
        ar_prompt_set_source(*out, AR_PROMPT_EMBEDDED);
    return rc;
}

static int add_dir_names(const char *dir, struct ar_strv *names)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n <= 3 || strcmp(de->d_name + n - 3, ".md") != 0)
            continue;
        char *name = strndup(de->d_name, n - 3);
        if (!name) {
            rc = AR_ENOMEM;
            break;
        }
        if (valid_name(name))
            rc = ar_strv_push_take(names, name);
        else
            free(name);
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ar_prompt_list(const char *prompts_dir, struct ar_strv *names)
{
    struct ar_strv all = AR_STRV_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ar_prompt_embedded_count; i++)
        rc = ar_strv_push(&all, ar_prompt_embedded[i].name);
    if (rc == 0 && prompts_dir)
        rc = add_dir_names(prompts_dir, &all);
    struct ar_buf dir;
    ar_buf_init(&dir, AR_BUF_UNLIMITED);
    if (rc == 0 && ar_prompt_config_dir(&dir) == 0)
        rc = add_dir_names(dir.data, &all);
    ar_buf_finish(&dir);
    if (all.n)
        ar_sort(all.v, all.n, sizeof(all.v[0]), cmp_str);
    for (size_t i = 0; rc == 0 && i < all.n; i++)
        if (i == 0 || strcmp(all.v[i], all.v[i - 1]) != 0)
            rc = ar_strv_push(names, all.v[i]);
    ar_strv_finish(&all);
    return rc;
}
