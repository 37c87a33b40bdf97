/* Shared between the files of src/prompt only. */
#ifndef AR_PROMPT_INTERNAL_H
#define AR_PROMPT_INTERNAL_H

#include "prompt/prompt.h"

/* Records where a parsed template came from (ar_prompt_parse() says AR_PROMPT_TEXT). */
void ar_prompt_set_source(struct ar_prompt *p, enum ar_prompt_source s);

#endif
