/* gemini internals exposed for the unit tests. */
#ifndef AR_PROVIDER_GEMINI_H
#define AR_PROVIDER_GEMINI_H

#include <stddef.h>

#include "provider/provider.h"

struct json_t;

/*
 * The last JSON object with an "error" member that starts a line of gemini's
 * stderr (-o json puts it there, among noise), or NULL. Borrowed from data;
 * *obj_len (may be NULL) is its length.
 */
const char *ar_gemini_find_error(const char *data, size_t len, size_t *obj_len);

/*
 * The settings.json of a call's private gemini home: a copy of the user's settings (a
 * borrowed object) with folder trust off and tools.core set to the tools of the posture;
 * a text call that does not trust the project also turns hooks off. New reference, or
 * NULL when out of memory.
 */
struct json_t *ar_gemini_settings(struct json_t *user, enum ar_tools tools, int trust_project);

/*
 * The model a call names with -m: `requested` (-m, $AGENTRUN_MODEL, $GEMINI_MODEL), else the
 * user's settings.json model.name (`user`, borrowed), else gemini's default "auto" — with an
 * auto alias replaced by the model gemini uses when it does not route, so that no call makes
 * gemini's routing request. Borrowed from requested, user or static storage.
 */
const char *ar_gemini_model(const char *requested, const struct json_t *user);

/* Appends the posture (DESIGN §4b) for spec to out: -m and the model, the private home of
 * the posture with those settings and agentrun's system prompt (kept for the next call under
 * $XDG_CACHE_HOME/agentrun/gemini-home), the workspace's trust. Returns 0 or an AR_E… code
 * with err set. */
int ar_gemini_posture(const struct ar_call_spec *spec, struct ar_call_setup *out,
                      struct ar_error *err);

/* The user's gemini directory: $GEMINI_CLI_HOME/.gemini, else ~/.gemini. Caller free()s;
 * NULL when out of memory. */
char *ar_gemini_user_dir(void);

/* The settings.json of user_dir (comments allowed, as gemini allows them), or an empty
 * object. New reference. */
struct json_t *ar_gemini_user_settings(const char *user_dir);

/* gemini's ar_provider.login (gemini_login.c). */
void ar_gemini_login(const struct ar_login_probe *probe, struct ar_login_state *out);

#endif
