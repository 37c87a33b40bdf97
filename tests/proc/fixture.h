/*
 * What the process tests share: a scratch folder for each test under
 * $TMPDIR, removed after it, and an environment that no setting of the
 * user's steers (agentrun's provider, model, prices, record and replay, and
 * every switch of the fake CLI).
 */
#ifndef AR_TESTS_PROC_FIXTURE_H
#define AR_TESTS_PROC_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

/* Makes NAME-XXXXXX under $TMPDIR (or /tmp) and puts its path in dir. */
static inline int ar_test_tmpdir_make(char *dir, size_t size, const char *name)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, size, "%s/%s-XXXXXX", base && *base ? base : "/tmp", name);
    return mkdtemp(dir) ? 0 : -1;
}

static inline int ar_test_tmpdir_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Call it first in a setup, then set what the test needs. */
static inline void ar_test_env_scrub(void)
{
    static const char *const names[] = {
        "AGENTRUN_PROVIDER",   "AGENTRUN_MODEL",         "CODEX_MODEL",
        "AGENTRUN_PRICES",     "AGENTRUN_RECORD",        "AGENTRUN_REPLAY",
        "FAKE_CLI_EXIT",       "FAKE_CLI_LOG",           "FAKE_CLI_HANG",
        "FAKE_CLI_SLEEP_MS",   "FAKE_CLI_IGNORE_TERM",   "FAKE_CLI_WRITE_FILES",
        "FAKE_CLI_STATE",      "FAKE_CLI_SIGNAL",        "FAKE_CLI_WAIT_FOR",
        "FAKE_CLI_GRANDCHILD", "FAKE_CLI_GRANDCHILDREN", "FAKE_CLI_GRANDCHILD_THREAD",
        "FAKE_CLI_PIDFILE",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        unsetenv(names[i]);
}

#endif
