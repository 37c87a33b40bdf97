/* The defaults of a review: the one place they are written. */
#include <string.h>

#include "review/diff.h"
#include "review/review.h"

void ar_review_options_init(struct ar_review_options *o)
{
    memset(o, 0, sizeof(*o));
    ar_run_options_init(&o->run);
    o->max_chunk_bytes = AR_DIFF_DEFAULT_MAX_CHUNK;
    o->max_chunks = AR_REVIEW_DEFAULT_MAX_CHUNKS;
    o->jobs = AR_REVIEW_DEFAULT_JOBS;
    o->fail_on = AR_SEV_LOW;
}
