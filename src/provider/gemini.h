/* gemini internals exposed for the unit tests. */
#ifndef AR_PROVIDER_GEMINI_H
#define AR_PROVIDER_GEMINI_H

#include <stddef.h>

/*
 * The last JSON object with an "error" member that starts a line of gemini's
 * stderr (-o json puts it there, among noise), or NULL. Borrowed from data;
 * *obj_len (may be NULL) is its length.
 */
const char *ar_gemini_find_error(const char *data, size_t len, size_t *obj_len);

#endif
