/* Diagnostics on stderr with a fixed prefix (curl's tool_msgs.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agentrun/error.h"
#include "cli/cli.h"
#include "cli/terminal.h"

int ar_cli_verbosity = 0;

/* The last error message, for a command that must still print a JSON result. */
static char last_error[512];
static int last_error_code;
/* Whether anything was written to stdout (ar_cli_write_stdout()), and whether a write
 * failed (said once). */
static int stdout_used, stdout_failed;

/* A diagnostic can quote what a change, a model or a CLI said: one line, whatever it
 * quotes (cli/terminal.h). */
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    fflush(stdout);
    fputs(prefix, stderr);
    if (ar_buf_vprintf(&b, fmt, ap) == 0 && ar_cli_line_neutralize(&b, 0) == 0)
        fputs(ar_buf_cstr(&b), stderr);
    else
        fputs("(message lost: out of memory)", stderr);
    fputc('\n', stderr);
    fflush(stderr);
    ar_buf_finish(&b);
}

/* An error on stderr, kept as the last one with its code (0: none said). */
static void verror(int code, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    vmsg("agentrun: error: ", fmt, ap);
    vsnprintf(last_error, sizeof(last_error), fmt, again);
    va_end(again);
    last_error_code = code;
}

void ar_cli_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(0, fmt, ap);
    va_end(ap);
}

int ar_cli_error_code(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(code, fmt, ap);
    va_end(ap);
    return ar_error_exit_status(code);
}

int ar_cli_out_of_memory(void)
{
    ar_cli_errorf("%s", ar_strerror(AR_ENOMEM));
    last_error_code = AR_ENOMEM;
    return ar_error_exit_status(AR_ENOMEM);
}

const char *ar_cli_last_error(void)
{
    return last_error;
}

int ar_cli_last_error_code(void)
{
    return last_error_code;
}

void ar_cli_warnf(const char *fmt, ...)
{
    if (ar_cli_verbosity < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("agentrun: warning: ", fmt, ap);
    va_end(ap);
}

void ar_cli_notef(const char *fmt, ...)
{
    if (ar_cli_verbosity < 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("agentrun: ", fmt, ap);
    va_end(ap);
}

int ar_cli_usage_error(const struct ar_cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    /* A file name of a checkout may be quoted: rendered by cli/terminal.h. */
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int ok = ar_buf_vprintf(&b, fmt, ap) == 0 && ar_cli_line_neutralize(&b, 0) == 0;
    fprintf(stderr, "agentrun %s: %s", cmd ? cmd->name : "", ok ? ar_buf_cstr(&b) : "usage error");
    ar_buf_finish(&b);
    fprintf(stderr, "\nTry 'agentrun %s --help' for more information.\n", cmd ? cmd->name : "");
    va_end(ap);
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    last_error_code = AR_EUSAGE;
    return AR_EXIT_USAGE;
}

int ar_cli_write_text(const char *s, size_t n)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    int rc =
        ar_cli_text_append(&b, s, n) == 0 ? ar_cli_write_stdout(b.data ? b.data : "", b.len) : -1;
    ar_buf_finish(&b);
    return rc;
}

/* A result that did not reach stdout is said once, however many writes fail. */
static int stdout_error(int e)
{
    if (!stdout_failed)
        ar_cli_errorf("cannot write the result to stdout: %s", strerror(e ? e : EIO));
    stdout_failed = 1;
    return -1;
}

int ar_cli_write_stdout(const void *data, size_t len)
{
    stdout_used |= len > 0;
    if (len < 4096) {
        if (len && fwrite(data, 1, len, stdout) != len)
            return stdout_error(errno);
        return ar_cli_flush_stdout();
    }
    /* A large piece goes to the descriptor as it is: through stdio it would
     * be copied into its buffer in part first. */
    int rc = ar_cli_flush_stdout();
    for (const char *p = data; rc == 0 && len > 0;) {
        ssize_t n = write(STDOUT_FILENO, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return stdout_error(n < 0 ? errno : EIO);
        p += n;
        len -= (size_t)n;
    }
    return rc;
}

int ar_cli_flush_stdout(void)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        return stdout_error(errno);
    return 0;
}

int ar_cli_stdout_used(void)
{
    return stdout_used;
}
