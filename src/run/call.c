/*
 * The call source (call.h): spawn, replay or cache hit behind one interface.
 *
 * Recording needs the whole stdout, so a call that is recorded or may be
 * cached keeps its lines (bounded by the output cap, like the supervisor).
 * A replayed or cached call is delivered from the loop, never from inside
 * ar_call_start(), as a spawned one is.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/record.h"
#include "run/call.h"
#include "util/file.h"
#include "util/log.h"
#include "util/temp.h"

static char *dup_dir(const char *opt, const char *env)
{
    const char *v = opt ? opt : getenv(env);
    return v && *v ? strdup(v) : NULL;
}

int ar_call_tapes_init(struct ar_call_tapes *t, const struct ar_run_options *o,
                       struct ar_error *err)
{
    memset(t, 0, sizeof(*t));
    t->record_dir = dup_dir(o->record_dir, "AGENTRUN_RECORD");
    t->replay_dir = dup_dir(o->replay_dir, "AGENTRUN_REPLAY");
    t->cache_ttl_s = o->cache_ttl_s;
    if (t->record_dir && t->replay_dir)
        return ar_error_set(err, AR_EUSAGE, "--replay",
                            "give --record or --replay, not both (AGENTRUN_RECORD, "
                            "AGENTRUN_REPLAY)");
    if (t->replay_dir && !ar_is_dir(t->replay_dir))
        return ar_error_set(err, AR_EUSAGE, t->replay_dir, "no such replay directory '%s'",
                            t->replay_dir);
    /* Inputs are never outputs: cassettes recorded into the cache's folder would be
     * read back as entries of it (and the cache's taken for cassettes). */
    const char *ins[] = { o->cache ? o->cache_dir : NULL };
    int rc = ar_file_check_output("--record", t->record_dir, ins, 1, err);
    if (rc < 0)
        return rc;
    /* Replay never calls a CLI, so there is nothing to cache. */
    if (o->cache && !t->replay_dir) {
        t->cache_dir =
            o->cache_dir && *o->cache_dir ? strdup(o->cache_dir) : ar_cache_default_dir();
        if (!t->cache_dir)
            return ar_error_set(err, AR_EUSAGE, "--cache-dir",
                                "no cache directory: set XDG_CACHE_HOME or HOME, or give "
                                "--cache-dir");
        /* A directory others can write, or no key to check its entries with, is
         * refused before any call: an answer it served could be anyone's. */
        return ar_cache_prepare(t->cache_dir, t->cache_secret, err);
    }
    return 0;
}

void ar_call_tapes_finish(struct ar_call_tapes *t)
{
    free(t->record_dir);
    free(t->replay_dir);
    free(t->cache_dir);
    memset(t, 0, sizeof(*t));
}

struct ar_call {
    struct ar_loop *loop;
    enum ar_call_origin origin;
    struct ar_child *child;
    ar_call_line_fn *on_line;
    ar_call_done_fn *on_done;
    void *arg;
    struct ar_logger logger; /* a copy: the run that owns the original may end in on_done */
    const char *provider;
    int cancelled;
    int keep;     /* the pipeline says the call succeeded */
    int ended_ok; /* the CLI exited by itself (not a timeout, a signal or a cancel) */

    /* Recording: the request, and the answer as it arrives. */
    int capture;
    struct ar_cassette tape;
    char *record_dir;
    char *cache_dir;
    unsigned char cache_secret[AR_CACHE_SECRET_LEN];
    char cache_key[AR_SHA256_HEX];
    struct ar_redactor redactor;
    int have_redactor;
    int secret; /* the answer holds a secret: recorded redacted, never cached */
};

static void call_free(struct ar_call *c)
{
    ar_cassette_finish(&c->tape);
    if (c->have_redactor)
        ar_redactor_finish(&c->redactor);
    free(c->record_dir);
    free(c->cache_dir);
    free(c);
}

static void on_child_line(struct ar_child *child, const char *line, size_t len, void *arg)
{
    (void)child;
    struct ar_call *c = arg;
    if (c->capture &&
        (ar_buf_append(&c->tape.out, line, len) < 0 || ar_buf_putc(&c->tape.out, '\n') < 0))
        c->capture = 0; /* past the cassette cap: the call is still used, never recorded */
    if (c->on_line)
        c->on_line(c, line, len, c->arg);
}

/*
 * Writes the call down: the cassette (under --record) with its secrets redacted; and
 * whether the cache may keep it. The cache answers with exactly what the call returned,
 * so it never stores a rewritten answer: an answer holding a secret (any text redaction
 * would change) is not cached at all, and the secret stays off the disk.
 */
static void write_down(struct ar_call *c, const struct ar_child_result *res)
{
    struct ar_cassette *t = &c->tape;
    t->exit_code = res->status;
    t->term_signal = res->term_signal;
    t->end = (int)res->end;
    t->duration_ms = res->duration_ms;
    t->recorded_at = (int64_t)time(NULL);
    ar_buf_reset(&t->err);
    if (res->stderr_tail)
        ar_buf_append(&t->err, res->stderr_tail, res->stderr_tail_len);
    struct ar_cassette red = *t; /* the request half is shared: it was redacted when set */
    ar_buf_init(&red.out, AR_BUF_UNLIMITED);
    ar_buf_init(&red.err, AR_BUF_UNLIMITED);
    if (ar_redact_stdout(&c->redactor, ar_buf_cstr(&t->out), t->out.len, &red.out) < 0 ||
        ar_redact(&c->redactor, ar_buf_cstr(&t->err), t->err.len, &red.err) < 0) {
        ar_warn(&c->logger, "cannot record the %s call: out of memory", c->provider);
        c->secret = 1;
    } else {
        c->secret = red.out.len != t->out.len || red.err.len != t->err.len ||
                    memcmp(ar_buf_cstr(&red.out), ar_buf_cstr(&t->out), t->out.len) != 0 ||
                    memcmp(ar_buf_cstr(&red.err), ar_buf_cstr(&t->err), t->err.len) != 0;
        if (c->secret && c->cache_dir)
            ar_debug(&c->logger, "%s: the answer holds a secret: it is not cached", c->provider);
        struct ar_error err = AR_ERROR_INIT;
        if (c->record_dir && ar_cassette_record(&red, c->record_dir, &err) < 0)
            ar_warn(&c->logger, "cannot record the %s call: %s", c->provider, err.msg);
    }
    ar_buf_finish(&red.out);
    ar_buf_finish(&red.err);
}

static void on_child_done(struct ar_child *child, const struct ar_child_result *res, void *arg)
{
    (void)child;
    struct ar_call *c = arg;
    c->child = NULL;
    if (c->capture)
        write_down(c, res); /* before the pipeline: a repair call started from on_done records
                               after this one */
    c->ended_ok = res->end == AR_CHILD_EXITED || res->end == AR_CHILD_FINAL_GRACE;
    c->on_done(c, res, c->arg);
    /* Only an answer the provider accepted is worth keeping: never a timeout, a
     * rate limit or an interrupted call; and never one that holds a secret. */
    if (c->capture && c->cache_dir && c->keep && !c->secret && c->ended_ok) {
        struct ar_error err = AR_ERROR_INIT;
        if (ar_cache_put(c->cache_dir, c->cache_secret, c->cache_key, &c->tape, &err) < 0)
            ar_warn(&c->logger, "cannot write the cache entry: %s", err.msg);
    }
    call_free(c);
}

/* Delivers a replayed or cached call: its stdout line by line, then its end. */
static void play(void *arg)
{
    struct ar_call *c = arg;
    const struct ar_cassette *t = &c->tape;
    struct ar_child_result res;
    memset(&res, 0, sizeof(res));
    if (c->cancelled) {
        res.status = 128 + 15;
        res.term_signal = 15;
        res.end = AR_CHILD_CANCELLED;
        ar_error_set(&res.err, AR_EINTERRUPTED, c->provider, "cancelled");
        c->on_done(c, &res, c->arg);
        call_free(c);
        return;
    }
    const char *s = t->out.data ? t->out.data : "";
    for (size_t pos = 0; pos < t->out.len && !c->cancelled;) {
        const char *nl = memchr(s + pos, '\n', t->out.len - pos);
        size_t end = nl ? (size_t)(nl - s) : t->out.len;
        /* The unwrapper is handed a NUL-terminated line, as the supervisor does. */
        char *line = strndup(s + pos, end - pos);
        if (line && c->on_line)
            c->on_line(c, line, end - pos, c->arg);
        free(line);
        pos = end + 1;
    }
    res.status = t->exit_code;
    res.term_signal = t->term_signal;
    res.duration_ms = t->duration_ms;
    res.end = (enum ar_child_end)t->end;
    res.stdout_bytes = t->out.len;
    res.stderr_bytes = t->err.len;
    res.stderr_tail = t->err.data ? t->err.data : "";
    res.stderr_tail_len = t->err.len;
    switch (res.end) {
    case AR_CHILD_TIMEOUT:
        ar_error_set(&res.err, AR_ETIMEOUT, c->provider, "timed out");
        break;
    case AR_CHILD_IDLE:
        ar_error_set(&res.err, AR_EIDLE, c->provider, "idle timeout");
        break;
    case AR_CHILD_TOOBIG:
        ar_error_set(&res.err, AR_ETOOBIG, c->provider, "output exceeds the cap");
        break;
    case AR_CHILD_CANCELLED:
        ar_error_set(&res.err, AR_EINTERRUPTED, c->provider, "cancelled");
        break;
    default:
        break;
    }
    if (c->record_dir) {
        struct ar_error err = AR_ERROR_INIT;
        if (ar_cassette_record(t, c->record_dir, &err) < 0)
            ar_warn(&c->logger, "cannot record the %s call: %s", c->provider, err.msg);
    }
    c->on_done(c, &res, c->arg);
    call_free(c);
}

int ar_call_start(struct ar_loop *loop, const struct ar_call_opts *o, struct ar_call **out,
                  struct ar_error *err)
{
    /* What a killed agentrun left in $TMPDIR is swept beside this process's first call
     * (on a thread of its own), whether or not the call made a temporary file. */
    ar_temp_sweep_once();
    struct ar_call *c = calloc(1, sizeof(*c));
    if (!c)
        return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
    c->loop = loop;
    c->on_line = o->on_line;
    c->on_done = o->on_done;
    c->arg = o->arg;
    if (o->logger)
        c->logger = *o->logger;
    else
        c->logger = (struct ar_logger)AR_LOGGER_INIT;
    c->provider = o->provider;
    ar_cassette_init(&c->tape);
    static const struct ar_call_tapes none = { .record_dir = NULL };
    const struct ar_call_tapes *tp = o->tapes ? o->tapes : &none;
    int cacheable = tp->cache_dir && ar_cache_call_cacheable(o->spec);
    int rc = 0;
    if (tp->replay_dir || tp->record_dir || cacheable) {
        rc = ar_redactor_init(&c->redactor, o->child.env);
        c->have_redactor = 1;
        const char *contract = o->spec ? o->spec->schema : NULL;
        const char *model = o->spec ? o->spec->model : NULL;
        if (rc == 0)
            rc = ar_cassette_set_request(&c->tape, o->provider, o->setup, o->child.stdin_data,
                                         o->child.stdin_len, contract, model, &c->redactor);
        if (rc == 0 && !tp->replay_dir)
            ar_cli_identity_of(o->child.argv[0], &c->tape.cli);
        if (rc == 0 && tp->record_dir && !(c->record_dir = strdup(tp->record_dir)))
            rc = AR_ENOMEM;
        if (rc < 0) {
            call_free(c);
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
    }
    /* After a Ctrl-C nothing new starts, spawned or not (as ar_child_spawn() does). */
    if ((tp->replay_dir || cacheable) && ar_loop_cancelled(loop)) {
        call_free(c);
        return ar_error_set(err, AR_EINTERRUPTED, o->provider, "interrupted");
    }
    if (tp->replay_dir) {
        struct ar_cassette found;
        ar_cassette_init(&found);
        rc = ar_cassette_find(tp->replay_dir, &c->tape, &found, err);
        if (rc < 0) {
            call_free(c);
            return rc;
        }
        /* The request as asked (never the file's), the answer as recorded. */
        ar_buf_reset(&c->tape.out);
        ar_buf_reset(&c->tape.err);
        ar_buf_append(&c->tape.out, found.out.data ? found.out.data : "", found.out.len);
        ar_buf_append(&c->tape.err, found.err.data ? found.err.data : "", found.err.len);
        c->tape.exit_code = found.exit_code;
        c->tape.term_signal = found.term_signal;
        c->tape.end = found.end;
        c->tape.duration_ms = found.duration_ms;
        c->tape.recorded_at = found.recorded_at;
        ar_cassette_finish(&found);
        c->origin = AR_CALL_REPLAYED;
        ar_debug(o->logger, "%s: replaying a recorded call from '%s'", o->provider, tp->replay_dir);
    } else if (cacheable) {
        ar_cache_key(&c->tape, o->child.argv[0], c->cache_key);
        memcpy(c->cache_secret, tp->cache_secret, sizeof(c->cache_secret));
        if (ar_cache_get(tp->cache_dir, c->cache_secret, c->cache_key, o->child.argv[0],
                         tp->cache_ttl_s, &c->tape)) {
            c->origin = AR_CALL_CACHED;
            ar_debug(o->logger, "%s: served from the cache (%.12s)", o->provider, c->cache_key);
        } else if (!(c->cache_dir = strdup(tp->cache_dir))) {
            call_free(c);
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
    }
    if (c->origin != AR_CALL_SPAWNED) {
        if (ar_loop_defer(loop, play, c) < 0) {
            call_free(c);
            return ar_error_set(err, AR_ENOMEM, NULL, "out of memory");
        }
        if (out)
            *out = c;
        return 0;
    }
    /* A CLI that would not fail by itself without a login (codex retries the network
     * for a minute, then says nothing) is asked first: a certain no is `auth` at once. */
    const struct ar_provider *p = ar_provider_find(o->provider);
    /* A CLI too old to take the prompt as data is never started (src/provider decides). */
    if (p && (rc = ar_provider_check_version(p, o->child.argv[0], err)) < 0) {
        call_free(c);
        return rc;
    }
    if (p && p->login_before_call && p->login) {
        struct ar_login_state login = { AR_LOGIN_UNKNOWN, "", 0 };
        p->login(NULL, &login);
        if (login.state == AR_LOGIN_NO) {
            call_free(c);
            return ar_error_set(err, AR_EAUTH, o->provider, "%s: %s (%s)", o->provider, login.how,
                                AR_PROVIDER_AUTH_DOCS);
        }
    }
    c->capture = c->record_dir || c->cache_dir;
    struct ar_child_opts co = o->child;
    co.on_line = on_child_line;
    co.on_done = on_child_done;
    co.arg = c;
    rc = ar_child_spawn(loop, &co, &c->child, err);
    if (rc < 0) {
        call_free(c);
        return rc;
    }
    if (out)
        *out = c;
    return 0;
}

void ar_call_final_seen(struct ar_call *call)
{
    if (call->child)
        ar_child_final_seen(call->child);
}

void ar_call_kill(struct ar_call *call)
{
    call->cancelled = 1;
    if (call->child)
        ar_child_kill(call->child);
}

enum ar_call_origin ar_call_origin(const struct ar_call *call)
{
    return call->origin;
}

void ar_call_keep(struct ar_call *call)
{
    call->keep = 1;
}

struct ar_call_held {
    char *cache_dir;
    unsigned char cache_secret[AR_CACHE_SECRET_LEN];
    char cache_key[AR_SHA256_HEX];
    struct ar_cassette tape;
};

struct ar_call_held *ar_call_hold(struct ar_call *call)
{
    if (!call->capture || !call->cache_dir || call->secret || !call->ended_ok)
        return NULL;
    struct ar_call_held *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL; /* the cache is an optimisation: nothing is kept */
    h->cache_dir = call->cache_dir;
    call->cache_dir = NULL;
    memcpy(h->cache_secret, call->cache_secret, sizeof(h->cache_secret));
    memcpy(h->cache_key, call->cache_key, sizeof(h->cache_key));
    h->tape = call->tape; /* moved: the call's own is made empty */
    ar_cassette_init(&call->tape);
    return h;
}

int ar_call_held_put(struct ar_call_held *h, struct ar_error *err)
{
    int rc = h ? ar_cache_put(h->cache_dir, h->cache_secret, h->cache_key, &h->tape, err) : 0;
    ar_call_held_free(h);
    return rc;
}

void ar_call_held_free(struct ar_call_held *h)
{
    if (!h)
        return;
    ar_cassette_finish(&h->tape);
    free(h->cache_dir);
    free(h);
}
