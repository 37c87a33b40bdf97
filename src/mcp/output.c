/*
 * The MCP server's output (output.h): uv_write on a descriptor of the output's
 * own, a bound on what waits, and a watchdog for a client that reads nothing.
 * The server used to write synchronously and wait in poll() for a client that
 * read slowly, which held the loop, and with it every call's clocks and kills,
 * for up to a minute.
 */
#include "mcp/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/jsonrpc.h"

static void logf_(const struct ar_mcp_out *o, enum ar_log_level level, const char *fmt, ...)
    AR_PRINTF(3, 4);

static void logf_(const struct ar_mcp_out *o, enum ar_log_level level, const char *fmt, ...)
{
    if (!o->log || !o->log->fn || level > o->log->level)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    o->log->fn(o->log->arg, level, NULL, NULL, msg);
}

static size_t waiting(const struct ar_mcp_out *o)
{
    return o->stream ? uv_stream_get_write_queue_size(&o->h.stream) : 0;
}

static void on_timer(uv_timer_t *t);

/* Nothing more is written; the server hears it from the loop, never from inside a send
 * (which may come from anywhere, a call's progress included). */
static void out_break(struct ar_mcp_out *o, const char *why, int sys)
{
    if (o->is_broken)
        return;
    logf_(o, AR_LOG_WARN, "%s%s%s; stopping", why, sys ? ": " : "", sys ? uv_strerror(sys) : "");
    o->is_broken = 1;
    if (!o->closing)
        uv_timer_start(&o->timer, on_timer, 0, 0);
}

static void on_timer(uv_timer_t *t)
{
    struct ar_mcp_out *o = t->data;
    size_t left = waiting(o), written = o->queued - left;
    if (!o->is_broken && left && written == o->seen)
        out_break(o, "the client read nothing for a while", 0);
    o->seen = written;
    if (!o->is_broken && left)
        return; /* the watchdog looks again in a minute */
    uv_timer_stop(t);
    if (o->is_broken && o->broken)
        o->broken(o->arg);
}

struct out_req {
    uv_write_t req;
    struct ar_mcp_out *out;
    char text[];
};

static void lagging(struct ar_mcp_out *o, int lag)
{
    if (o->is_lagging == lag)
        return;
    o->is_lagging = lag;
    if (o->lagging)
        o->lagging(o->arg, lag);
}

static void on_written(uv_write_t *req, int status)
{
    struct out_req *w = (struct out_req *)req;
    struct ar_mcp_out *o = w->out;
    free(w);
    o->writes--;
    if (status < 0 && status != UV_ECANCELED)
        out_break(o, "cannot write to the client", status);
    if (!waiting(o) && !o->is_broken) {
        uv_timer_stop(&o->timer);
        lagging(o, 0);
    }
    if (o->drained && !o->closing)
        o->drained(o->arg);
}

/* A file: written whole now. */
static void write_file(struct ar_mcp_out *o, const char *text, size_t len)
{
    size_t at = 0;
    while (!o->is_broken && at < len) {
        ssize_t w = write(o->fd, text + at, len - at);
        if (w > 0)
            at += (size_t)w;
        else if (w < 0 && errno != EINTR)
            out_break(o, "cannot write to the client", uv_translate_sys_error(errno));
        else if (w == 0)
            out_break(o, "cannot write to the client: nothing written", 0);
    }
}

void ar_mcp_out_send(struct ar_mcp_out *o, json_t *msg, int optional)
{
    size_t len = 0;
    if (o->is_broken || o->closing) {
        json_decref(msg);
        return;
    }
    if (optional && waiting(o) > AR_MCP_OUT_HIGH) {
        if (!o->left_out++)
            logf_(o, AR_LOG_WARN, "the client is not reading: progress notifications left out");
        json_decref(msg);
        return;
    }
    char *text = msg ? ar_rpc_encode(msg, &len) : NULL;
    json_decref(msg);
    struct out_req *w = text && o->stream ? malloc(sizeof(*w) + len) : NULL;
    if (!text || (o->stream && !w)) {
        free(text);
        logf_(o, AR_LOG_ERROR, "out of memory: a message was not sent");
        return;
    }
    if (!o->stream) {
        write_file(o, text, len);
        free(text);
        return;
    }
    w->out = o;
    memcpy(w->text, text, len);
    free(text);
    uv_buf_t b = uv_buf_init(w->text, (unsigned)len);
    int rc = uv_write(&w->req, &o->h.stream, &b, 1, on_written);
    if (rc < 0) {
        free(w);
        out_break(o, "cannot write to the client", rc);
        return;
    }
    o->writes++;
    o->queued += len;
    size_t left = waiting(o);
    if (left && !uv_is_active((uv_handle_t *)&o->timer)) {
        o->seen = o->queued - left;
        uint64_t ms = o->wait_ms ? o->wait_ms : AR_MCP_OUT_WAIT_MS;
        uv_update_time(o->timer.loop); /* a whole period from now, not from the turn's start */
        uv_timer_start(&o->timer, on_timer, ms, ms);
    }
    if (left > AR_MCP_OUT_HIGH)
        lagging(o, 1);
}

int ar_mcp_out_busy(const struct ar_mcp_out *o)
{
    return o->writes && !o->is_broken;
}

static void on_closed(uv_handle_t *h)
{
    struct ar_mcp_out *o = h->data;
    if (--o->open_handles == 0 && o->closed)
        o->closed(o->arg);
}

void ar_mcp_out_close(struct ar_mcp_out *o)
{
    if (o->closing)
        return;
    o->closing = 1;
    if (o->open_handles && !uv_is_closing((uv_handle_t *)&o->timer))
        uv_close((uv_handle_t *)&o->timer, on_closed);
    if (o->stream)
        uv_close(&o->h.handle, on_closed);
}

int ar_mcp_out_open(struct ar_mcp_out *o, uv_loop_t *loop, int fd, struct ar_error *err)
{
    int rc;
    o->fd = fd;
    if ((rc = uv_timer_init(loop, &o->timer)) < 0)
        return ar_error_set_sys(err, AR_EIO, rc, "", "cannot start a timer: %s", uv_strerror(rc));
    o->timer.data = o;
    o->open_handles = 1;
    uv_handle_type type = uv_guess_handle(fd);
    if (type != UV_TTY && type != UV_NAMED_PIPE && type != UV_TCP)
        return 0;
    /* A descriptor of our own, so non-blocking mode stays off the caller's (which stderr
     * may share): a pipe opened anew is a description of its own; a socket cannot be, and
     * is dup()ed; the terminal handle reopens a terminal itself. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int own = type == UV_NAMED_PIPE ? open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    if (own < 0)
        own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (own < 0)
        return ar_error_set_sys(err, AR_EIO, errno, "stdout", "cannot write the output: %s",
                                strerror(errno));
    rc = type == UV_TTY ? uv_tty_init(loop, &o->h.tty, own, 0) : uv_pipe_init(loop, &o->h.pipe, 0);
    if (rc < 0) {
        close(own);
        return ar_error_set_sys(err, AR_EIO, rc, "stdout", "cannot write the output: %s",
                                uv_strerror(rc));
    }
    o->h.handle.data = o;
    o->stream = 1;
    o->open_handles++;
    if (type != UV_TTY && (rc = uv_pipe_open(&o->h.pipe, own)) < 0) {
        close(own);
        return ar_error_set_sys(err, AR_EIO, rc, "stdout", "cannot write the output: %s",
                                uv_strerror(rc));
    }
    return 0;
}
