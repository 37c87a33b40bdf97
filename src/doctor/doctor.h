/*
 * What `agentrun doctor` checks, as plain data: for each provider whether it is
 * installed (its binary found by the spawn's own search, ar_proc_find_program(), and
 * answering --version), whether it is logged in (its own status command where it has
 * one, else what its adapter can see; never a model call), which credentials are
 * present (names only, never values) and how each posture would run it; git; the
 * prompt override directories.
 *
 * The library probes, the caller formats: nothing here prints. Provider
 * knowledge stays with the adapters (src/provider): this module only asks
 * them, through struct ar_provider, in registry order.
 *
 * Protocol:
 *   1. struct ar_doctor_report r; ar_doctor_check(prompts_dir, &r, &err);
 *      every --version (the providers' and git's) and every status command runs at
 *      once on a private loop, so a CLI that hangs costs AR_DOCTOR_VERSION_TIMEOUT_MS
 *      once;
 *   2. read r;
 *   3. ar_doctor_report_finish(&r).
 */
#ifndef AR_DOCTOR_DOCTOR_H
#define AR_DOCTOR_DOCTOR_H

#include <stddef.h>

#include "agentrun/doctor.h"
#include "agentrun/error.h"
#include "provider/provider.h"
#include "util/strv.h"

/* How long each --version or status command may take. gemini's --version (node started
 * twice: it relaunches itself) took 17 s on a 2-core machine under a load of 19. */
#define AR_DOCTOR_VERSION_TIMEOUT_MS 30000

/* How long ar_doctor_check_auth()'s call may take by default. */
#define AR_DOCTOR_AUTH_TIMEOUT_MS 30000

/* The report's structs, ar_doctor_check(), ar_doctor_report_finish() and
 * ar_doctor_posture_name() are public: agentrun/doctor.h. */

#endif
