/* SHA-256 (FIPS 180-4): the content hashes of cassettes and cache keys. */
#ifndef AR_UTIL_SHA256_H
#define AR_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define AR_SHA256_HEX 65 /* 64 hex digits and a NUL */
#define AR_SHA256_LEN 32 /* the digest's bytes */

struct ar_sha256 {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    unsigned char block[64];
    size_t used;
};

void ar_sha256_init(struct ar_sha256 *s);
void ar_sha256_update(struct ar_sha256 *s, const void *data, size_t n);
/* The digest as 64 lowercase hex digits; s must be initialized again before reuse. */
void ar_sha256_hex(struct ar_sha256 *s, char out[AR_SHA256_HEX]);

/* The digest's bytes; s must be initialized again before reuse. */
void ar_sha256_final(struct ar_sha256 *s, unsigned char out[AR_SHA256_LEN]);

/* The hex digest of data[0..n) in one call. */
void ar_sha256_hex_of(const void *data, size_t n, char out[AR_SHA256_HEX]);

/* The digest of data[0..n) in one call. */
void ar_sha256_digest(const void *data, size_t n, unsigned char out[AR_SHA256_LEN]);

/* HMAC-SHA256 (RFC 2104): init with the key, update with the message, then the hex
 * tag; init again before reuse. */
struct ar_hmac_sha256 {
    struct ar_sha256 inner, outer;
};
void ar_hmac_sha256_init(struct ar_hmac_sha256 *m, const void *key, size_t n);
void ar_hmac_sha256_update(struct ar_hmac_sha256 *m, const void *data, size_t n);
void ar_hmac_sha256_hex(struct ar_hmac_sha256 *m, char out[AR_SHA256_HEX]);

#endif
