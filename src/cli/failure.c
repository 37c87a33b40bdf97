/* What a failure says on stderr (failure.h): the cause once, first, then a screenful. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentrun/agentrun.h"
#include "cli/cli.h"
#include "cli/failure.h"

void ar_cli_failure_hint(int code, const char *provider, int called, int named, char *buf,
                         size_t size)
{
    buf[0] = '\0';
    /* auth before any call under --provider auto is auto finding no CLI that can log in:
     * its message names each already. A CLI not found that auto picked means none is
     * installed. */
    if (!provider || !((code == AR_EAUTH && (called || named)) || (code == AR_ENOTFOUND && named)))
        return;
    char others[128] = "";
    size_t n = 0, off = 0;
    const char *names = ar_provider_names();
    for (const char *t = names; *t;) {
        t += strspn(t, ", ");
        size_t k = strcspn(t, ", ");
        if (k && !(strlen(provider) == k && strncmp(provider, t, k) == 0)) {
            int w = snprintf(others + off, sizeof(others) - off, "%s-p %.*s", n ? " or " : "",
                             (int)k, t);
            off += w > 0 && (size_t)w < sizeof(others) - off ? (size_t)w : 0;
            n++;
        }
        t += k;
    }
    if (n)
        snprintf(buf, size, "; or use another CLI: %s", others);
}

int ar_cli_lines_take(struct ar_cli_lines *l)
{
    if (ar_cli_verbosity > 0 || l->said < AR_CLI_SCREENFUL) {
        l->said++;
        return 1;
    }
    l->counted++;
    return 0;
}

void ar_cli_lines_end(const struct ar_cli_lines *l, const char *what, const char *where)
{
    if (l->counted)
        ar_cli_errorf("… and %zu more %s (%s)", l->counted, what, where);
}

int ar_cli_stdout_shares_terminal(void)
{
    struct stat out, err;
    return isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) && fstat(STDOUT_FILENO, &out) == 0 &&
           fstat(STDERR_FILENO, &err) == 0 && out.st_rdev == err.st_rdev;
}
