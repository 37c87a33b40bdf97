/*
 * src/doctor: the report is plain data the caller prints. Fake CLIs (shell
 * scripts named like the registry's first two providers, and git) in a
 * temporary PATH; the third provider is missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/doctor.h"
#include "provider/provider.h"

static char tmp[256];

static void script(const char *name, const char *body)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/bin/%s", tmp, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    assert_int_equal(chmod(p, 0755), 0);
}

static int setup(void **state)
{
    snprintf(tmp, sizeof(tmp), "%s/agentrun-test-doctor-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp))
        return -1;
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/bin' '%s/home' '%s/config/agentrun/prompts'", tmp, tmp,
             tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static int has(const struct ar_strv *v, const char *s)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], s) == 0)
            return 1;
    return 0;
}

static void test_report_of_found_broken_and_missing_clis(void **state)
{
    const struct ar_provider *const *reg = ar_providers();
    assert_non_null(reg[0]);
    assert_non_null(reg[1]);
    assert_non_null(reg[2]);
    char dir[512];
    for (size_t i = 0; reg[i]; i++)
        unsetenv(reg[i]->bin_env);
    for (size_t i = 0; reg[i]; i++)
        for (size_t k = 0; reg[i]->auth_env && reg[i]->auth_env[k]; k++)
            unsetenv(reg[i]->auth_env[k]);
    unsetenv("AGENTRUN_TRUST_PROJECT");
    snprintf(dir, sizeof(dir), "%s/home", tmp);
    setenv("HOME", dir, 1);
    snprintf(dir, sizeof(dir), "%s/config", tmp);
    setenv("XDG_CONFIG_HOME", dir, 1);
    script(reg[0]->name, "printf '\\n   9.1.2 (Fake)  \\nmore\\n'");
    script(reg[1]->name, "echo broken >&2; exit 1");
    script("git", "echo 'git version 9' >&2");
    /* The second provider's credentials: a variable and a login file. */
    assert_non_null(reg[1]->auth_env);
    setenv(reg[1]->auth_env[0], "sk-secret-value", 1);
    char *login = ar_provider_auth_file(reg[1], 0);
    assert_non_null(login);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && : > '%s'", login, login);
    assert_int_equal(system(cmd), 0);

    /* Only now: system() above needs the real PATH, and teardown after it is restored. */
    char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    assert_non_null(path);
    snprintf(dir, sizeof(dir), "%s/bin", tmp);
    setenv("PATH", dir, 1);

    struct ar_doctor_report r;
    struct ar_error err = AR_ERROR_INIT;
    int rc = ar_doctor_check(tmp, &r, &err);
    setenv("PATH", path, 1);
    free(path);
    assert_int_equal(rc, 0);
    assert_true(r.n_providers >= 3);
    assert_true(r.ok);

    const struct ar_doctor_provider *found = &r.providers[0];
    assert_string_equal(found->name, reg[0]->name);
    assert_non_null(found->path);
    assert_non_null(strstr(found->path, "/bin/"));
    assert_string_equal(found->version, "9.1.2 (Fake)");
    assert_null(found->bin_override);
    assert_true(found->usable);
    for (int k = 0; k < AR_DOCTOR_N_POSTURES; k++) {
        const struct ar_doctor_call *c = &found->postures[k];
        assert_null(c->error);
        assert_true(c->argv.n > 0);
        for (size_t i = 0; i < c->env.n; i++)
            assert_null(strchr(c->env.v[i], '=')); /* names, never values */
    }

    const struct ar_doctor_provider *broken = &r.providers[1];
    assert_non_null(broken->path);
    assert_null(broken->version);
    assert_string_equal(broken->version_error, "--version failed");
    assert_false(broken->usable);
    assert_true(has(&broken->auth_env, reg[1]->auth_env[0]));
    assert_true(has(&broken->auth_files, login));

    const struct ar_doctor_provider *missing = &r.providers[2];
    assert_null(missing->path);
    assert_false(missing->usable);
    assert_int_equal(missing->postures[AR_DOCTOR_TEXT].argv.n, 0);

    assert_non_null(r.git_path);
    assert_string_equal(r.git_version, "git version 9");
    snprintf(dir, sizeof(dir), "%s/config/agentrun/prompts", tmp);
    assert_string_equal(r.config_dir, dir);
    assert_true(r.config_dir_exists);
    assert_ptr_equal(r.prompts_dir, tmp);
    assert_true(r.prompts_dir_exists);

    ar_doctor_report_finish(&r);
    assert_int_equal(r.n_providers, 0);
    ar_doctor_report_finish(&r); /* finishing twice is harmless */
    free(login);
}

static void test_posture_names(void **state)
{
    assert_string_equal(ar_doctor_posture_name(AR_DOCTOR_TEXT), "text");
    assert_string_equal(ar_doctor_posture_name(AR_DOCTOR_READ), "read");
    assert_string_equal(ar_doctor_posture_name(AR_DOCTOR_EDIT), "edit");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_of_found_broken_and_missing_clis, setup,
                                        teardown),
        cmocka_unit_test(test_posture_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
