/* The public listing calls of agentrun/prompt.h: C arrays of strings over the module's strv. */
#include <stdlib.h>

#include "prompt/prompt.h"
#include "util/strv.h"

/* The strv's array, handed over: NULL-terminated (an empty one too), or NULL on failure. */
static char **take(struct ar_strv *sv, int rc)
{
    char **v = rc == 0 ? sv->v : NULL;
    if (rc == 0 && !v)
        v = calloc(1, sizeof(*v));
    if (!v)
        ar_strv_finish(sv);
    return v;
}

char **ar_prompt_names(const char *prompts_dir)
{
    struct ar_strv names = AR_STRV_INIT;
    return take(&names, ar_prompt_list(prompts_dir, &names));
}

char **ar_prompt_variable_names(const struct ar_prompt *p)
{
    struct ar_strv names = AR_STRV_INIT;
    return take(&names, ar_prompt_variables(p, &names));
}

int ar_prompt_has_contract(const struct ar_prompt *p)
{
    return ar_prompt_contract(p) != NULL;
}

void ar_strings_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}
