/*
 * agentrun: error codes and the error detail struct.
 *
 * Functions that can fail return 0 or a negative AR_E… code. Detail travels in
 * a caller-owned struct ar_error (may be NULL), set once where the failure is
 * detected. It is fixed-size, so reporting never allocates.
 */
#ifndef AGENTRUN_ERROR_H
#define AGENTRUN_ERROR_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * X(NAME, "result code", exit status, "default message")
 *
 * The result code is the `error.code` string of a RunResult (DESIGN §6); the
 * exit status is what the CLI exits with when a run ends with this error
 * (DESIGN §7).
 */
#define AR_ERRNO_MAP(X)                                                \
    X(USAGE, "usage", 2, "usage error")                                \
    X(NOMEM, "nomem", 4, "out of memory")                              \
    X(IO, "io", 2, "input/output error")                               \
    X(SPAWN, "spawn", 4, "cannot start process")                       \
    X(NOTFOUND, "not_found", 4, "program not found")                   \
    X(CLIFAILED, "cli_failed", 4, "CLI failed")                        \
    X(AUTH, "auth", 4, "authentication failed")                        \
    X(RATELIMIT, "rate_limit", 4, "rate limited")                      \
    X(API, "api_error", 4, "API error")                                \
    X(TIMEOUT, "timeout", 5, "timed out")                              \
    X(IDLE, "idle_timeout", 5, "no output before the idle timeout")    \
    X(TRUNCATED, "truncated", 4, "output ended without a final event") \
    X(EMPTY, "empty", 4, "empty final text")                           \
    X(TOOBIG, "too_big", 4, "output exceeds the cap")                  \
    X(NOJSON, "no_json", 3, "no JSON found in the model output")       \
    X(CONTRACT, "contract", 3, "output violates the contract")         \
    X(BUDGET, "budget", 6, "budget exhausted")                         \
    X(INTERRUPTED, "interrupted", 130, "interrupted")                  \
    X(REPLAYMISS, "replay_miss", 4, "no recorded call matches")        \
    X(DENIED, "denied", 4, "the CLI refused a tool call")              \
    X(NOEFFECT, "no_effect", 4, "no file changed where a change was expected")

enum ar_errno {
    AR_OK = 0,
#define AR_X_(name, code, exit, msg) AR_E##name,
    AR_E_FIRST_ = -1000,
    AR_ERRNO_MAP(AR_X_)
#undef AR_X_
        AR_E_LAST_
};

struct ar_error {
    int code;        /* AR_E…, 0 if none */
    int sys;         /* errno or libuv code behind it, else 0 */
    char where[128]; /* "claude:stdout", "/issues/2/line", "prompts/review.md:14" */
    char msg[256];
};

#define AR_ERROR_INIT \
    {                 \
        0, 0, "", ""  \
    }

/* The RunResult code string of `code` ("contract"), or "unknown". Static storage. */
AR_API const char *ar_strerror_name(int code);

/* A short default message for `code`. Static storage. */
AR_API const char *ar_strerror(int code);

/* The process exit status the CLI uses for `code` (DESIGN §7); 0 for AR_OK. */
AR_API int ar_error_exit_status(int code);

/* The code whose RunResult string is `name`, or 0 when unknown. */
AR_API int ar_error_from_name(const char *name);

/*
 * Sets *err (when err is not NULL) and returns code, so a failure is one line:
 *     return ar_error_set(err, AR_EUSAGE, path, "cannot read '%s'", path);
 * `where` may be NULL. The message is truncated to fit; it never allocates.
 */
AR_API int ar_error_set(struct ar_error *err, int code, const char *where, const char *fmt, ...)
    AR_PRINTF(4, 5);

/* Like ar_error_set() and records `sys` (errno or a libuv code). */
AR_API int ar_error_set_sys(struct ar_error *err, int code, int sys, const char *where,
                            const char *fmt, ...) AR_PRINTF(5, 6);

/* Clears *err to AR_ERROR_INIT. */
AR_API void ar_error_clear(struct ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
