/*
 * The run-request table inside the library (include/agentrun/request.h is its public
 * face): the batch reads its lines with it into the job's own storage.
 */
#ifndef AR_RUN_REQUEST_H
#define AR_RUN_REQUEST_H

#include <jansson.h>

#include "agentrun/request.h"
#include "util/strv.h"

/*
 * Reads the keys of req (a JSON object) that door takes into o (already holding the
 * defaults), keeping their strings in storage and the template's variables in *vars
 * (free()d by the caller; replaced when set again). Returns 0, or AR_EUSAGE with err.where
 * the key, or AR_ENOMEM.
 */
int ar_request_apply(const json_t *req, unsigned door, struct ar_run_options *o,
                     struct ar_strv *storage, struct ar_var **vars, struct ar_error *err);

/* The i-th key of the table (sorted by name), or NULL past the last: for its test. */
const char *ar_run_request_key_name(size_t i);

#endif
