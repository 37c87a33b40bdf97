/*
 * agentrun: the prompt templates (docs/prompts.md): which there are, where
 * each comes from (the copy built into the library, or a NAME.md that
 * overrides it), and their text. What `agentrun prompts list|show` does.
 *
 *     char **names = ar_prompt_names(NULL);
 *     for (size_t i = 0; names && names[i]; i++) {
 *         struct ar_prompt *p;
 *         if (ar_prompt_load(names[i], NULL, &p, &err) == 0) {
 *             printf("%s  %s\n", names[i], ar_prompt_description(p));
 *             ar_prompt_destroy(p);
 *         }
 *     }
 *     ar_strings_free(names);
 */
#ifndef AGENTRUN_PROMPT_H
#define AGENTRUN_PROMPT_H

#include <stddef.h>

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ar_prompt;

/* Where a template was loaded from. */
enum ar_prompt_source {
    AR_PROMPT_EMBEDDED, /* built in, from prompts/NAME.md */
    AR_PROMPT_DIR,      /* NAME.md in the prompts_dir given */
    AR_PROMPT_CONFIG,   /* $XDG_CONFIG_HOME/agentrun/prompts/NAME.md (~/.config when unset) */
    AR_PROMPT_TEXT,     /* text the caller supplied */
    AR_PROMPT_INLINE,   /* a free-form prompt (ar_run_options.prompt), no variables */
};

/*
 * The names of every template, sorted and unique: the built-in ones and each
 * NAME.md in prompts_dir (may be NULL) and in the user's config directory.
 * NULL-terminated; free it with ar_strings_free(). NULL when out of memory.
 */
AR_API char **ar_prompt_names(const char *prompts_dir);

/*
 * Loads template `name`: prompts_dir/NAME.md (prompts_dir may be NULL), else
 * the config directory's NAME.md, else the built-in one. Returns 0 with *out
 * set (ar_prompt_destroy()), or a negative code with err set: AR_EUSAGE for a
 * bad name, a prompts_dir that is no directory, a template found nowhere (the
 * message lists the known names) or one that does not parse (err->where says
 * "FILE:LINE"); AR_EIO, AR_ETOOBIG (an override over 1 MiB), AR_ENOMEM.
 */
AR_API int ar_prompt_load(const char *name, const char *prompts_dir, struct ar_prompt **out,
                          struct ar_error *err);

/* Frees p; NULL is fine. */
AR_API void ar_prompt_destroy(struct ar_prompt *p);

/* Accessors; strings are borrowed until ar_prompt_destroy(). */
AR_API const char *ar_prompt_name(const struct ar_prompt *p); /* "review" */
/* "prompts/review.md" (built in) or the path of the file loaded */
AR_API const char *ar_prompt_origin(const struct ar_prompt *p);
AR_API enum ar_prompt_source ar_prompt_source(const struct ar_prompt *p);
/* "embedded", "prompts-dir", "user-config", "text", "inline" */
AR_API const char *ar_prompt_source_name(enum ar_prompt_source s);

/* The template text as loaded (NUL-terminated); *len may be NULL. */
AR_API const char *ar_prompt_text(const struct ar_prompt *p, size_t *len);

/* The first heading of the template (without the #s), else its first non-empty line. */
AR_API const char *ar_prompt_description(const struct ar_prompt *p);

/* 1 when the template holds a json-schema contract block, else 0. */
AR_API int ar_prompt_has_contract(const struct ar_prompt *p);

/* The variables the template uses, each once, in order of first use. NULL-terminated;
 * free it with ar_strings_free(). NULL when out of memory. */
AR_API char **ar_prompt_variable_names(const struct ar_prompt *p);

/* Frees a NULL-terminated array of strings the library handed out, and each string. NULL is
 * fine. */
AR_API void ar_strings_free(char **v);

#ifdef __cplusplus
}
#endif

#endif
