/*
 * libFuzzer target for src/provider: the first byte picks the provider and
 * the exit info, the rest is fed line by line to unwrap_line() and then
 * given whole to unwrap_captured(), unwrap_stderr() and ar_provider_detect().
 * Every reply is finished, so a leak of any of its strings shows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "provider/codex_rollout.h"
#include "provider/codex_schema.h"
#include "provider/provider.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "claude", "codex", "gemini" };

/* With --output-schema, codex's final text is un-stricted against this. */
static const char schema[] =
    "{\"type\":\"object\",\"required\":[\"verdict\"],\"properties\":{"
    "\"verdict\":{\"type\":\"string\"},\"note\":{\"type\":\"string\"},"
    "\"opt\":{\"type\":[\"string\",\"null\"]},\"issues\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"properties\":{\"msg\":{\"type\":\"string\"},"
    "\"line\":{\"type\":\"integer\"}}}}}}";

static void check_reply(const struct ar_reply *r)
{
    for (size_t i = 0; i < r->files.n; i++)
        if (!r->files.v[i])
            abort();
    if (r->text)
        (void)strlen(r->text);
}

static void stream(const struct ar_provider *p, uint8_t sel, const char *text, size_t len)
{
    struct ar_call_spec spec = { 0 };
    if (sel & 128)
        spec.schema = schema;
    struct ar_unwrap *u = p->unwrap_new(&spec);
    if (!u)
        return;
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        struct ar_progress ev;
        int fin = p->unwrap_line(u, text + start, end - start, &ev);
        if (fin != 0 && fin != 1)
            abort();
        if (ev.tool)
            (void)strlen(ev.tool);
        if (ev.path)
            (void)strlen(ev.path);
        start = end + 1;
    }
    /* The stderr tail the supervisor would hand over: the last part of the input. */
    size_t tail = (sel >> 4) & 3 ? len / ((sel >> 4) & 3) : 0;
    struct ar_exit_info ex = {
        .status = (sel & 4) ? 1 : 0,
        .term_signal = (sel & 8) ? 9 : 0,
        .killed = (sel & 64) != 0,
        .stderr_tail = text + len - tail,
        .stderr_len = tail,
    };
    struct ar_reply r;
    ar_reply_init(&r);
    p->unwrap_finish(u, &ex, &r);
    check_reply(&r);
    ar_reply_finish(&r);
    p->unwrap_free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    const struct ar_provider *p = ar_provider_find(names[sel % 3]);
    if (!p)
        abort();

    stream(p, sel, text, len);

    struct ar_reply r;
    ar_reply_init(&r);
    if (p->unwrap_captured(text, len, &r) == 0)
        check_reply(&r);
    ar_reply_finish(&r);

    /* claude has no stderr reader. */
    if (p->unwrap_stderr) {
        ar_reply_init(&r);
        if (p->unwrap_stderr(text, len, &r) == 0)
            check_reply(&r);
        ar_reply_finish(&r);
    }

    /* codex's helpers on the text as a schema, as a final answer, as a rollout file. */
    char *z = strndup(text, len);
    if (!z)
        abort();
    free(ar_codex_strict_schema(z));
    free(ar_codex_unstrict(z, schema));
    free(ar_codex_unstrict(schema, z));
    free(ar_codex_rollout_model(text, len));
    struct ar_usage raw;
    memset(&raw, 0, sizeof(raw));
    (void)ar_codex_rollout_total(text, len, &raw);
    free(z);

    const struct ar_provider *d = ar_provider_detect(text, len);
    if (d) {
        /* Detection means that provider's parser accepts the text. */
        ar_reply_init(&r);
        if (d->unwrap_captured(text, len, &r) != 0)
            abort();
        ar_reply_finish(&r);
    }
    return 0;
}
