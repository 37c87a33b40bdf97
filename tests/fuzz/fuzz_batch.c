/*
 * libFuzzer target for src/batch: every line of the input is parsed as a
 * job with the default options. A job always has an id; a job without an
 * error has exactly one of prompt and template.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch/job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct ar_run_options defaults;
    ar_run_options_init(&defaults);
    size_t start = 0, lineno = 1;
    while (start <= size) {
        const char *nl = memchr(text + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - text) : size;
        if (!ar_batch_line_blank(text + start, end - start)) {
            struct ar_batch_job job;
            if (ar_batch_job_parse(text + start, end - start, lineno, &defaults, &job) != 0)
                abort();
            if (!job.id)
                abort();
            if (!job.error && !job.opts.prompt == !job.opts.template_name)
                abort();
            for (size_t i = 0; !job.error && i < job.opts.n_vars; i++)
                if (!job.opts.vars[i].name || !job.opts.vars[i].value)
                    abort();
            ar_batch_job_finish(&job);
        }
        lineno++;
        start = end + 1;
    }
    return 0;
}
