/*
 * agentrun: what `agentrun doctor` checks, as plain data (docs/doctor.md):
 * for each provider whether it is installed (its binary found as a run would
 * find it, and answering --version), whether it is logged in (its own status
 * command where it has one, never a model call), which credentials are present
 * (names only, never values) and how each posture would run it; git; the
 * prompt override directories. The library probes, the caller formats.
 *
 *     struct ar_doctor_report r;
 *     if (ar_doctor_check(NULL, &r, &err) == 0)
 *         for (size_t i = 0; i < r.n_providers; i++)
 *             printf("%s: %s\n", r.providers[i].name, r.providers[i].usable ? "ok" : "no");
 *     ar_doctor_report_finish(&r);
 */
#ifndef AGENTRUN_DOCTOR_H
#define AGENTRUN_DOCTOR_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a CLI can authenticate, as far as can be told without calling a model. */
enum ar_login {
    AR_LOGIN_UNKNOWN = 0, /* nothing says either way (a keychain, a helper agentrun cannot see) */
    AR_LOGIN_YES,
    AR_LOGIN_NO,
};

/* The postures doctor shows, in this order (DESIGN §4b). */
/* What ar_doctor_check_auth() found of one CLI's credentials (added in 0.3.0). */
enum ar_auth_check {
    AR_AUTH_NOT_CHECKED = 0, /* not asked, or the CLI is not usable */
    AR_AUTH_VERIFIED,        /* a one-word call was answered */
    AR_AUTH_REJECTED,        /* the call failed with `auth`: the credentials do not work */
    AR_AUTH_UNREACHABLE,     /* no answer for another reason: network, timeout, API error */
};

/* "not checked", "verified", "rejected", "unreachable"; "?" out of range. */
AR_API const char *ar_auth_check_name(enum ar_auth_check c);

enum ar_doctor_posture {
    AR_DOCTOR_TEXT = 0,
    AR_DOCTOR_READ,
    AR_DOCTOR_EDIT,
    AR_DOCTOR_N_POSTURES,
};

/* "text", "read", "edit". Static storage. */
AR_API const char *ar_doctor_posture_name(enum ar_doctor_posture p);

/* How the adapter would run one posture (a text call with no session, read, edit),
 * in a git work tree. */
struct ar_doctor_call {
    char *error;         /* owned: why the adapter refused to build it; else NULL */
    struct ar_strv argv; /* the argv without the binary (argv[0]), whole */
    struct ar_strv env;  /* the NAMES of the variables it adds (never their values) */
    int project_config;  /* what the call would load of the checkout */
    int context_files;
    void *reserved[4]; /* zero: members added later come out of it (docs/library.md#abi) */
};

/* One provider. Strings are owned by the report unless said otherwise. */
struct ar_doctor_provider {
    /* The adapter's own words, static storage: */
    const char *name;         /* "claude" */
    const char *bin_env;      /* "AGENTRUN_CLAUDE_BIN" */
    const char *install_hint; /* "npm install -g …" */
    const char *posture_note; /* how the postures are reached (one sentence) */

    char *bin_override;        /* the value of $bin_env when set and not empty, else NULL */
    char *path;                /* the binary the spawn would run; NULL: not found */
    char *version;             /* the first non-empty line --version printed (stdout, else
                                  stderr; at most 200 bytes); NULL when none */
    const char *version_error; /* static; set when path && !version: why there is none */
    struct ar_strv auth_env;   /* the credential variables that are set (names only) */
    struct ar_strv auth_files; /* the login files that exist (full paths) */
    int installed;             /* found, and --version answered */
    enum ar_login login;       /* whether it can log in (AR_LOGIN_UNKNOWN when not found) */
    char *login_how;           /* how it logs in, what is missing, or why it is unknown;
                                  NULL when not found */
    int usable;                /* installed, and nothing says it cannot log in: it will likely
                                  answer a prompt */
    int trust_project;         /* AGENTRUN_TRUST_PROJECT=1: the postures load the checkout */
    /* Only when path != NULL, indexed by enum ar_doctor_posture: */
    struct ar_doctor_call postures[AR_DOCTOR_N_POSTURES];
    union {
        struct {
            /* Added in 0.3.0. login is AR_LOGIN_YES on the strength of a key found (a
             * variable), which nothing tried: "key set, not verified". */
            int key_only;
            /* ar_doctor_check_auth()'s finding, its words (owned; NULL when not checked)
             * and what the call cost (cost_source as in the RunResult). */
            enum ar_auth_check auth_check;
            char *auth_check_how;
            double auth_check_cost_usd;
            /* The versions agentrun was tested with (static): the oldest and the newest. */
            const char *tested_min;
            const char *tested_max;
            /* How version compares with them (static): "tested" (within the range), "newer"
             * (a warning: newer than tested, not an error), "older", "unsupported" (older
             * than the oldest version agentrun starts: not usable), or NULL when the
             * version is unknown. */
            const char *version_fit;
        };
        void *reserved[8]; /* zero: members added later come out of it (docs/library.md#abi) */
    };
};

struct ar_doctor_report {
    struct ar_doctor_provider *providers; /* owned, in registry (`--provider auto`) order */
    size_t n_providers;
    int ok; /* at least one provider is usable */

    char *git_path;    /* owned; NULL: git not found (file changes cannot be tracked) */
    char *git_version; /* owned; NULL when `git --version` gave none */

    char *config_dir;        /* owned: $XDG_CONFIG_HOME/agentrun/prompts (or ~/.config/…);
                                NULL without HOME */
    int config_dir_exists;   /* it is a directory */
    const char *prompts_dir; /* borrowed from the caller of ar_doctor_check(), may be NULL */
    int prompts_dir_exists;
    void *reserved[8]; /* zero: members added later come out of it (docs/library.md#abi) */
};

/*
 * Fills *out (uninitialised before; ar_doctor_report_finish() it in every
 * case). Blocking: every --version (the providers' and git's) and every status
 * command runs at once, so a CLI that hangs costs one 30 s timeout.
 * prompts_dir (may be NULL) is borrowed and must outlive *out. A CLI that is
 * missing, hangs or fails is a finding, not an error. Returns 0, or AR_ENOMEM
 * with err set.
 */
AR_API int ar_doctor_check(const char *prompts_dir, struct ar_doctor_report *out,
                           struct ar_error *err);

/*
 * Tries the credentials of every usable CLI of r (filled by ar_doctor_check()) with one
 * minimal call each, all at once: a prompt of a few words asking for one word, no tools,
 * from an empty temporary directory, no retry, no fallback, each ended after timeout_ms
 * (0: 30 s), so a wrong key with no network cannot hang it. The cost is the CLI's own
 * request (its system prompt: a few thousand input tokens at most) and a one-word answer.
 * Sets auth_check, auth_check_how and auth_check_cost_usd of each; a CLI whose
 * credentials were rejected is no longer usable, and r->ok is counted again. Returns 0,
 * or AR_ENOMEM / AR_ESPAWN with err set.
 */
AR_API int ar_doctor_check_auth(struct ar_doctor_report *r, uint64_t timeout_ms,
                                struct ar_error *err);

/* Frees what *r owns; afterwards *r is empty (n_providers 0). */
AR_API void ar_doctor_report_finish(struct ar_doctor_report *r);

#ifdef __cplusplus
}
#endif

#endif
