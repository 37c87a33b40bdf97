/*
 * Prompt templates: loading (override directories, then the copies embedded
 * at build time from prompts/NAME.md), parsing ({{name}} variables, optional
 * {{#name}}…{{/name}} sections, the ```json-schema contract block) and
 * rendering. docs/prompts.md is the user-facing reference.
 *
 * Protocol for the pipeline:
 *   1. ar_prompt_load("review", opts->prompts_dir, &p, &err) — or
 *      ar_prompt_create_inline() for a free-form prompt (+ optional schema),
 *      or ar_prompt_render_inline(), which renders it at once (step 3);
 *      a bad template (unsupported contract keyword, unclosed section…) fails
 *      here with AR_EUSAGE and err->where = "prompts/review.md:14";
 *   2. ar_prompt_contract(p) gives the contract (NULL when the template has
 *      none) and ar_prompt_contract_text() its source for the repair prompt;
 *   3. ar_prompt_render(p, vars, nvars, &buf, &err) renders the text sent to
 *      the model (the contract block included; ar_prompt_contract_lead() says
 *      how much of its start a CLI with native structured output can do without);
 *   4. ar_prompt_destroy(p).
 */
#ifndef AR_PROMPT_PROMPT_H
#define AR_PROMPT_PROMPT_H

#include <stddef.h>

#include "agentrun/error.h"
#include "agentrun/prompt.h"
#include "contract/contract.h"
#include "util/buf.h"
#include "util/strv.h"

/* Override files larger than this are refused. */
#define AR_PROMPT_MAX_BYTES (1024 * 1024)

/* A variable for ar_prompt_render(). Both strings are borrowed for the call. */
struct ar_prompt_var {
    const char *name;
    const char *value; /* NULL means unset, the same as not passing the variable */
};

/* One template compiled into the binary (generated from prompts/ by scripts/embed-prompts.py). */
struct ar_prompt_embedded {
    const char *name; /* file name without ".md" */
    const char *text; /* NUL-terminated */
    size_t len;
};

/* The embedded templates, sorted by name. */
extern const struct ar_prompt_embedded ar_prompt_embedded[];
extern const size_t ar_prompt_embedded_count;

/* The embedded template called `name`, or NULL. Static storage. */
const struct ar_prompt_embedded *ar_prompt_embedded_find(const char *name);

/* ar_prompt_load(), ar_prompt_destroy() and the accessors are public: agentrun/prompt.h. */

/*
 * Parses a template from text (len bytes, copied). `origin` names it in errors
 * ("prompts/review.md", a path); its base name without ".md" becomes the
 * template's name. Template errors, AR_EUSAGE with err->where = "origin:line":
 * an unclosed, mismatched or stray section tag; more than one json-schema
 * block; an unclosed json-schema block; a contract that is not valid JSON or
 * uses an unsupported keyword ("unsupported keyword 'oneOf' at /properties/x",
 * the line being that of the keyword).
 */
int ar_prompt_parse(const char *origin, const char *text, size_t len, struct ar_prompt **out,
                    struct ar_error *err);

/*
 * A template from a free-form prompt (for `agentrun run` without -t): the
 * prompt is taken literally ("{{" in it is not a variable). When `schema` is
 * not NULL (schema_len bytes of JSON, e.g. the file of --schema, named
 * `schema_origin` in errors), it becomes the contract and the rendered prompt
 * starts with an instruction to answer with matching JSON and the schema in a
 * json-schema block (its contract lead). Errors as ar_prompt_parse(),
 * err->where = "schema_origin" or "schema_origin:line".
 */
int ar_prompt_create_inline(const char *prompt, size_t len, const char *schema, size_t schema_len,
                            const char *schema_origin, struct ar_prompt **out,
                            struct ar_error *err);

/*
 * A free-form prompt rendered with one copy: appends, when schema is not NULL,
 * the instruction and the json-schema block to out, then prompt[0..len) —
 * the same bytes as ar_prompt_create_inline() and ar_prompt_render(), without
 * the template's own copy of the prompt. *tpl (ar_prompt_destroy()) holds
 * only the contract (ar_prompt_contract(), NULL without a schema). Errors as
 * ar_prompt_create_inline(), and AR_ETOOBIG / AR_ENOMEM from out; *tpl is
 * NULL then.
 */
int ar_prompt_render_inline(const char *prompt, size_t len, const char *schema, size_t schema_len,
                            const char *schema_origin, struct ar_buf *out, struct ar_prompt **tpl,
                            struct ar_error *err);

/*
 * Appends the rendered prompt to `out`. `vars` (nvars entries, may be NULL
 * when nvars is 0) gives the values; when a name appears twice the last one
 * wins. Values are inserted verbatim: "{{" inside a value is never expanded.
 * {{name}} with name unset fails with AR_EUSAGE, err->where = "origin:line",
 * msg "variable 'name' is not set"; {{#name}}…{{/name}} is kept when name is
 * set and non-empty and dropped otherwise (never an error). Variables the
 * template does not use are ignored (see ar_prompt_uses() to warn about them).
 * Returns 0, that error, or AR_ETOOBIG / AR_ENOMEM from the buffer.
 */
int ar_prompt_render(const struct ar_prompt *p, const struct ar_prompt_var *vars, size_t nvars,
                     struct ar_buf *out, struct ar_error *err);

/*
 * {{fence}}: a tag the renderer sets, never a value of vars, for the fences around
 * text the prompt's subject wrote (<diff-{{fence}}> … </diff-{{fence}}>): 32 hex
 * digits that no value of the rendering holds and that its author cannot choose
 * (a hash over the values). The same values give the same tag.
 */
#define AR_FENCE_VAR "fence"
#define AR_FENCE_LEN 32

/* 1 when the template mentions variable `name` ({{name}} or a section), else 0. */
int ar_prompt_uses(const struct ar_prompt *p, const char *name);

/*
 * Appends the names of the variables the template uses, each once, in order
 * of first use ({{fence}}, which the renderer sets, is not one). Returns 0 or AR_ENOMEM.
 */
int ar_prompt_variables(const struct ar_prompt *p, struct ar_strv *names);

/* The contract, borrowed, or NULL when the template has no json-schema block. */
const struct ar_contract *ar_prompt_contract(const struct ar_prompt *p);

/* The contract's JSON as written in the block (not NUL-terminated; *len set), or NULL. */
const char *ar_prompt_contract_text(const struct ar_prompt *p, size_t *len);

/*
 * The contract lead: how many bytes every rendering of p starts with that are the
 * template's own statement of its contract — its text up to the end of the json-schema
 * block and the blank lines after it, when nothing but text comes before the block (no
 * variable, no section); else 0, and always 0 without a contract. A CLI that is given the
 * contract natively (claude --json-schema, codex --output-schema) may be sent a rendering
 * without them: the rest of the prompt reads the same either way. The inline prompt of
 * ar_prompt_create_inline() leads with its contract.
 */
size_t ar_prompt_contract_lead(const struct ar_prompt *p);

/*
 * Appends the names of every template, sorted and unique: the embedded ones
 * and each NAME.md in prompts_dir (may be NULL) and in the user config
 * directory. Returns 0 or AR_ENOMEM.
 */
int ar_prompt_list(const char *prompts_dir, struct ar_strv *names);

/*
 * Appends the user's prompt override directory to out: $XDG_CONFIG_HOME/agentrun/prompts,
 * or ~/.config/agentrun/prompts when XDG_CONFIG_HOME is unset or relative. Returns 0,
 * AR_ENOTFOUND when HOME is unset too (there is none), AR_ENOMEM or AR_ETOOBIG.
 */
int ar_prompt_config_dir(struct ar_buf *out);

#endif
