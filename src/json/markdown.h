/*
 * Markdown structure in model text: fenced code blocks and ATX sections.
 *
 * Fences follow CommonMark closely enough for model output: a line indented at
 * most three spaces opening with three or more '`' or '~'; the block ends at a
 * line of the same character at least as long with nothing but spaces after
 * it, or at the end of the text (an unclosed block). CRLF line ends work.
 * Nothing inside a fenced block is a fence or a heading.
 */
#ifndef AR_JSON_MARKDOWN_H
#define AR_JSON_MARKDOWN_H

#include <stddef.h>

#include "agentrun/error.h"

struct ar_md_block {
    size_t start;      /* first byte of the content (the line after the opening fence) */
    size_t end;        /* one past the content: the start of the closing fence line */
    size_t info_start; /* the info string, trimmed, within the text */
    size_t info_len;
    size_t lang_len; /* length of the info string's first word, the language */
    int closed;      /* 0 when the text ended inside the block */
};

/* Called per block in document order; a non-zero return stops the walk and is
 * returned by ar_md_blocks_each(). `text` is the text being walked. */
typedef int ar_md_block_fn(const struct ar_md_block *b, const char *text, void *arg);

/* Calls fn for each fenced code block of text[0..len). Returns 0 or fn's non-zero value. */
int ar_md_blocks_each(const char *text, size_t len, ar_md_block_fn *fn, void *arg);

/* The same walk as an iterator: the next block after the last one `w` found.
 * Returns 1 with *b filled, or 0 when there is none. */
struct ar_md_walk {
    size_t at; /* where the next search starts */
};

#define AR_MD_WALK_INIT \
    {                   \
        0               \
    }

int ar_md_block_next(const char *text, size_t len, struct ar_md_walk *w, struct ar_md_block *b);

/* 1 when the block's language is `lang` (case-insensitive); lang NULL matches every block. */
int ar_md_block_is_lang(const struct ar_md_block *b, const char *text, const char *lang);

/* 1 when the block may hold JSON: no language, or json, jsonc or json5 in any case. */
int ar_md_block_is_json(const struct ar_md_block *b, const char *text);

/*
 * Finds the first ATX heading ("#" to "######") whose text equals `heading`
 * (case-insensitive, surrounding spaces and closing '#'s ignored) and sets
 * [*start, *end) to the text under it: from the line after the heading to the
 * next heading of the same or a higher level (fewer '#'), or the end. Returns
 * 0, or AR_ENOJSON with err set when there is no such heading.
 */
int ar_md_section_find(const char *text, size_t len, const char *heading, size_t *start,
                       size_t *end, struct ar_error *err);

#endif
