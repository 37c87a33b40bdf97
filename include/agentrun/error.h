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

/* The exit statuses of agentrun (DESIGN §7), which the results of the library
 * carry too (ar_result_exit_status(), ar_review_verdict.exit_status, …). */
enum ar_exit_status {
    AR_EXIT_OK = 0,
    AR_EXIT_FINDINGS = 1, /* a review's findings at or above fail_on */
    AR_EXIT_USAGE = 2,    /* bad options or input */
    AR_EXIT_OUTPUT = 3,   /* no usable answer: no JSON, the contract, no route */
    AR_EXIT_PROVIDER = 4, /* the CLI, its provider or agentrun failed */
    AR_EXIT_TIMEOUT = 5,
    AR_EXIT_BUDGET = 6,
    AR_EXIT_SIGINT = 130, /* 128 + the signal that ended it */
    AR_EXIT_SIGHUP = 129,
    AR_EXIT_SIGTERM = 143,
};

/*
 * X(NAME, "result code", exit status, "default message")
 *
 * The result code is the `error.code` string of a RunResult (DESIGN §6); the
 * exit status is what the CLI exits with when a run ends with this error
 * (DESIGN §7).
 */
#define AR_ERRNO_MAP(X)                                                               \
    X(USAGE, "usage", AR_EXIT_USAGE, "usage error")                                   \
    X(NOMEM, "nomem", AR_EXIT_PROVIDER, "out of memory")                              \
    X(IO, "io", AR_EXIT_USAGE, "input/output error")                                  \
    X(SPAWN, "spawn", AR_EXIT_PROVIDER, "cannot start process")                       \
    X(NOTFOUND, "not_found", AR_EXIT_PROVIDER, "program not found")                   \
    X(CLIFAILED, "cli_failed", AR_EXIT_PROVIDER, "CLI failed")                        \
    X(AUTH, "auth", AR_EXIT_PROVIDER, "authentication failed")                        \
    X(RATELIMIT, "rate_limit", AR_EXIT_PROVIDER, "rate limited")                      \
    X(API, "api_error", AR_EXIT_PROVIDER, "API error")                                \
    X(TIMEOUT, "timeout", AR_EXIT_TIMEOUT, "timed out")                               \
    X(IDLE, "idle_timeout", AR_EXIT_TIMEOUT, "no output before the idle timeout")     \
    X(TRUNCATED, "truncated", AR_EXIT_PROVIDER, "output ended without a final event") \
    X(EMPTY, "empty", AR_EXIT_PROVIDER, "empty final text")                           \
    X(TOOBIG, "too_big", AR_EXIT_PROVIDER, "output exceeds the cap")                  \
    X(NOJSON, "no_json", AR_EXIT_OUTPUT, "no JSON found in the model output")         \
    X(CONTRACT, "contract", AR_EXIT_OUTPUT, "output violates the contract")           \
    X(BUDGET, "budget", AR_EXIT_BUDGET, "budget exhausted")                           \
    X(INTERRUPTED, "interrupted", AR_EXIT_SIGINT, "interrupted")                      \
    X(REPLAYMISS, "replay_miss", AR_EXIT_PROVIDER, "no recorded call matches")        \
    X(DENIED, "denied", AR_EXIT_PROVIDER, "the CLI refused a tool call")              \
    X(NOEFFECT, "no_effect", AR_EXIT_PROVIDER, "no file changed where a change was expected")

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
