/*
 * Extraction throughput: an 8 MiB model reply (prose, code with braces,
 * citations, the JSON answer at the end) and adversarial inputs that a
 * quadratic scanner would choke on. Prints MB/s per input; the adversarial
 * rows at 1x and 4x size show whether time grows linearly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json/extract.h"
#include "util/buf.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill_reply(struct ar_buf *b, size_t size)
{
    static const char *const parts[] = {
        "The function below walks the tree; see [1] and [2] for the background. ",
        "We keep a map {key -> value} for each node and call it with {placeholder}.\n",
        "```c\nstatic int walk(struct node *n) {\n    if (!n) { return 0; }\n"
        "    for (int i = 0; i < n->len; i++) { sum += walk(n->kids[i]); }\n    return sum;\n}\n"
        "```\n",
        "In Python: `d = {'a': [1, 2], 'b': {'c': None}}` which is close to JSON but not quite. ",
        "Arrays like [x, y] and sets {1, 2, 3} appear in prose all the time.\n\n",
    };
    size_t k = 0;
    while (b->len < size - 200)
        ar_buf_puts(b, parts[k++ % (sizeof(parts) / sizeof(parts[0]))]);
    ar_buf_puts(
        b, "\nHere is the result:\n{\"issues\": [{\"file\": \"src/a.c\", \"line\": 3, "
           "\"severity\": \"high\", \"msg\": \"uses } and { in a string\"}], \"ok\": false}\n");
}

static void repeat(struct ar_buf *b, const char *unit, size_t size)
{
    size_t n = strlen(unit);
    while (b->len + n <= size)
        ar_buf_append(b, unit, n);
}

static void deep(struct ar_buf *b, size_t size)
{
    size_t d = size / 2;
    for (size_t i = 0; i < d; i++)
        ar_buf_putc(b, '[');
    for (size_t i = 0; i < d; i++)
        ar_buf_putc(b, ']');
}

static void measure(const char *name, const struct ar_buf *b, unsigned flags, int iters)
{
    struct ar_extract_options o = AR_EXTRACT_OPTIONS_INIT;
    o.flags = flags;
    int rc = 0;
    double best = 1e9;
    for (int i = 0; i < iters; i++) {
        struct ar_extract_result r = AR_EXTRACT_RESULT_INIT;
        double t0 = now();
        rc = ar_json_extract(b->data, b->len, &o, &r, NULL);
        double dt = now() - t0;
        ar_extract_result_finish(&r);
        if (dt < best)
            best = dt;
    }
    printf("%-44s %8.2f MiB %9.3f ms %9.0f MB/s  rc=%d\n", name, (double)b->len / (1 << 20),
           best * 1e3, (double)b->len / best / 1e6, rc);
}

int main(void)
{
    const size_t mib = 1 << 20;
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);

    fill_reply(&b, 8 * mib);
    measure("8 MiB reply, JSON at the end", &b, 0, 20);
    measure("8 MiB reply, JSON at the end, --repair", &b, AR_EXTRACT_REPAIR, 20);

    for (size_t scale = 1; scale <= 4; scale *= 4) {
        char name[64];
        ar_buf_reset(&b);
        repeat(&b, "{\"a\":", 100000 * 5 * scale);
        snprintf(name, sizeof(name), "%zux100,000 unclosed {\"a\":", scale);
        measure(name, &b, 0, 5);
        snprintf(name, sizeof(name), "%zux100,000 unclosed {\"a\": --repair", scale);
        measure(name, &b, AR_EXTRACT_REPAIR, 5);

        ar_buf_reset(&b);
        repeat(&b, "{\"k\": [1, 2, \"}\", 3], \"v\": 1 oops ", 2 * mib * scale);
        snprintf(name, sizeof(name), "%zux2 MiB of { failing late", scale);
        measure(name, &b, 0, 5);
        snprintf(name, sizeof(name), "%zux2 MiB of { failing late --repair", scale);
        measure(name, &b, AR_EXTRACT_REPAIR, 5);

        ar_buf_reset(&b);
        repeat(&b, "{", 2 * mib * scale);
        snprintf(name, sizeof(name), "%zux2 MiB of {", scale);
        measure(name, &b, AR_EXTRACT_REPAIR, 5);

        ar_buf_reset(&b);
        deep(&b, 2 * mib * scale);
        snprintf(name, sizeof(name), "%zux2 MiB nesting [[[...]]]", scale);
        measure(name, &b, 0, 5);
    }
    ar_buf_finish(&b);
    return 0;
}
