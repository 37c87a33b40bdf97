/*
 * Recorded calls: cassettes (--record / --replay) and the result cache
 * (--cache). docs/record-replay.md is the user's reference.
 *
 * A cassette is one CLI call as it happened: who was called and with what
 * (provider, the CLI's identity, argv, a hash of stdin), and what came back
 * (stdout, the stderr tail, exit status, signal, how it ended, its duration),
 * with secrets redacted. Replaying one feeds the recorded stdout through the
 * same provider unwrapper a live call uses. A cache entry is a cassette under
 * a stricter key (the CLI's identity and the model included).
 *
 *   redact.c    what counts as a secret, and taking it out of text
 *   cassette.c  the file format, the match key, atomic writes, replay lookup
 *   cache.c     the cache key, directory, entries, TTL, stats and clear
 *
 * No libuv here: the call source that spawns or replays is src/run/call.c.
 */
#ifndef AR_RECORD_RECORD_H
#define AR_RECORD_RECORD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "agentrun/cache.h"
#include "agentrun/error.h"
#include "provider/provider.h"
#include "util/buf.h"
#include "util/sha256.h"
#include "util/strv.h"

/* ---- redaction (redact.c) ----------------------------------------------------------- */

#define AR_REDACTED "[REDACTED]"

/* The secret values to take out of recorded text. */
struct ar_redactor {
    struct ar_strv values; /* longest first */
};

/*
 * Collects the values of environment variables whose names look like
 * credentials (KEY, TOKEN, SECRET, PASSWORD, PASSWD, AUTH, CREDENTIAL, COOKIE,
 * case ignored), from agentrun's own environment and from `extra` ("NAME=VALUE"
 * entries given to the child; may be NULL), each also as it stands in a JSON
 * string and percent-encoded in a URL. Values shorter than AR_REDACT_MIN_LEN
 * bytes are left alone (they would blank out ordinary words). Returns 0 or AR_ENOMEM.
 */
#define AR_REDACT_MIN_LEN 6
int ar_redactor_init(struct ar_redactor *r, const char *const *extra);
void ar_redactor_finish(struct ar_redactor *r);

/* Non-zero when the variable name looks like it holds a credential. */
int ar_redact_secret_name(const char *name, size_t len);

/*
 * Appends s[0..n) to out with every collected value and every known token
 * shape replaced by "[REDACTED]": "sk-…", "sk-ant-…" and other "sk_"/"pk_"
 * keys, Google "AIza…" keys, GitHub "ghp_…"/"github_pat_…", Slack "xox?-…",
 * AWS "AKIA…", and whatever follows "Bearer " or "Basic ". Returns 0 or AR_ENOMEM.
 */
int ar_redact(const struct ar_redactor *r, const char *s, size_t n, struct ar_buf *out);

/*
 * ar_redact() for a CLI's stdout as it is stored (lines of JSON events, or text):
 * each line's strings are decoded, the strings at one key path are joined in order
 * (a streamed answer's pieces), and a secret found in the joined text is cut out of
 * every piece it spans, which is re-encoded in place; the bytes no string holds get
 * ar_redact() too. So replaying the result can never join a secret together again.
 * Returns 0 or AR_ENOMEM.
 */
int ar_redact_stdout(const struct ar_redactor *r, const char *s, size_t n, struct ar_buf *out);

/* ---- cassettes (cassette.c) ------------------------------------------------------------- */

/* How a recorded call ended (the names of enum ar_child_end). */
const char *ar_cassette_end_name(int end);
int ar_cassette_end_from_name(const char *name); /* -1 when unknown */

/* The identity of an installed CLI without running it: its resolved path, size and mtime. */
struct ar_cli_identity {
    char *path; /* NULL when the binary was not found */
    uint64_t size;
    int64_t mtime_ns;
};
void ar_cli_identity_of(const char *bin, struct ar_cli_identity *out);
void ar_cli_identity_finish(struct ar_cli_identity *id);

struct ar_cassette {
    /* What was asked. */
    char *provider;
    struct ar_strv argv; /* without argv[0]; a temporary file is "@tmpfile"; redacted */
    char stdin_sha256[AR_SHA256_HEX];
    uint64_t stdin_bytes;
    char contract_sha256[AR_SHA256_HEX]; /* "" without a contract */
    char *model;                         /* the model asked for, or NULL */
    struct ar_cli_identity cli;
    /* What came back. */
    struct ar_buf out; /* stdout, one '\n' after every line (redacted) */
    struct ar_buf err; /* the stderr tail (redacted) */
    int exit_code;
    int term_signal;
    int end; /* enum ar_child_end */
    uint64_t duration_ms;
    int64_t recorded_at; /* Unix seconds */
};

void ar_cassette_init(struct ar_cassette *c);
void ar_cassette_finish(struct ar_cassette *c);

/*
 * Fills the request half of c from one prepared call: argv[0] is dropped,
 * an argument naming one of the setup's temporary files becomes "@tmpfile"
 * (its name is random), the rest is redacted with rd; stdin and the contract
 * (may be NULL) are hashed. Returns 0 or AR_ENOMEM.
 */
int ar_cassette_set_request(struct ar_cassette *c, const char *provider,
                            const struct ar_call_setup *setup, const void *in, size_t in_len,
                            const char *contract, const char *model, const struct ar_redactor *rd);

/* The replay match key: provider, argv, stdin and contract hashes (hex SHA-256). */
void ar_cassette_key(const struct ar_cassette *c, char out[AR_SHA256_HEX]);

/* The file name of c in a cassette directory: "<provider>-<first 16 of the key>.json". */
void ar_cassette_file_name(const struct ar_cassette *c, char *out, size_t size);

/* The JSON form (schema "agentrun.cassette/1"). New reference, NULL when out of memory. */
json_t *ar_cassette_to_json(const struct ar_cassette *c);

/* Reads the JSON form into c (initialized). Returns 0 or AR_EIO with err saying what is wrong. */
int ar_cassette_from_json(const json_t *v, struct ar_cassette *c, struct ar_error *err);

/* Reads one cassette file. Returns 0, or AR_EIO (unreadable or not a cassette). */
int ar_cassette_load(const char *path, struct ar_cassette *c, struct ar_error *err);

/* Writes c atomically (temp file + rename) to path. Returns 0 or AR_EIO. */
int ar_cassette_save(const struct ar_cassette *c, const char *path, struct ar_error *err);

/* mkdir -p dir (mode 0700 for what it creates). Returns 0 or AR_EIO. */
int ar_record_make_dirs(const char *dir, struct ar_error *err);

/* Writes c into dir (created when missing) under ar_cassette_file_name(). Returns 0 or AR_EIO. */
int ar_cassette_record(const struct ar_cassette *c, const char *dir, struct ar_error *err);

/*
 * The usage error of a replay whose provider is not named (--provider auto has no CLI
 * to pick: --replay starts none), set in err: which providers the cassettes in dir were
 * recorded with, read off their file names (<provider>-<key>.json), and the -p that
 * replays them. Returns AR_EUSAGE.
 */
int ar_replay_needs_provider(const char *dir, struct ar_error *err);

/*
 * Finds the cassette recorded for the request `want` in dir and loads it into
 * *found (initialized). Returns 0, or AR_EREPLAYMISS with err naming the
 * nearest cassette of the directory and the first field that differs (or
 * that the directory holds none).
 */
int ar_cassette_find(const char *dir, const struct ar_cassette *want, struct ar_cassette *found,
                     struct ar_error *err);

/* ---- the cache (cache.c) -------------------------------------------------------------------- */

/*
 * Whether a call may be served from the cache: only a call whose whole input
 * is its prompt. Today: the command is text-only (review, prioritize, route,
 * a repair call) and the call cannot edit. When calls carry a posture, this
 * becomes `spec->posture == text`.
 */
int ar_cache_call_cacheable(const struct ar_call_spec *spec);

/* ar_cache_default_dir(), ar_cache_stats() and ar_cache_clear() are public: agentrun/cache.h. */

/* The cache key of a request: provider, model, CLI identity, the whole argv
 * (argv[0] included), stdin and contract. */
void ar_cache_key(const struct ar_cassette *req, const char *bin, char out[AR_SHA256_HEX]);

/* The secret an entry's MAC is made with: never in the cache directory. */
#define AR_CACHE_SECRET_LEN AR_SHA256_LEN

/*
 * Gets the cache in dir ready to trust: the directory (and its calls/), when
 * they exist, must be this user's and writable by no one else (as ssh holds
 * its key files), else AR_EUSAGE naming the fix; and secret gets the MAC key:
 * AGENTRUN_CACHE_KEY when set (16 bytes or more; CI sets it from a repository
 * secret), else the per-user key file $XDG_CONFIG_HOME/agentrun/cache.key
 * (~/.config/…), made on first use (0600, 32 random bytes, created
 * atomically) and refused when another user owns it or others may read it.
 * Returns 0, AR_EUSAGE or AR_EIO with err set.
 */
int ar_cache_prepare(const char *dir, unsigned char secret[AR_CACHE_SECRET_LEN],
                     struct ar_error *err);

/*
 * Looks the key up in dir. Returns 1 with *hit filled (initialized by the
 * caller) when a usable entry exists: its MAC (HMAC-SHA256 with secret over the
 * key and the whole entry) holds, its own request (provider, model, CLI
 * identity, argv, stdin and contract hashes) with bin hashes to key, and it
 * is younger than ttl_s unless ttl_s is 0. Else 0: missing, expired, corrupt,
 * forged (an answer edited, an entry written without the secret) or
 * mismatched entries are misses (a later put replaces them), never errors.
 */
int ar_cache_get(const char *dir, const unsigned char secret[AR_CACHE_SECRET_LEN], const char *key,
                 const char *bin, uint64_t ttl_s, struct ar_cassette *hit);

/* Stores c under key with its MAC, atomically, creating dir as needed. Returns 0 or
 * AR_EIO. */
int ar_cache_put(const char *dir, const unsigned char secret[AR_CACHE_SECRET_LEN], const char *key,
                 const struct ar_cassette *c, struct ar_error *err);

#endif
