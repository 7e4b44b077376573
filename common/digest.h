/* digest.h -- SHA-256 of the canonical dump, through libcrypto's EVP API.
 *
 * The digest is fetched once per process (EVP_MD_fetch) by digest_global_init
 * and each thread keeps its own reusable context (struct digest): no shared
 * context, no lock. See docs/LESSONS.md for the measurements behind this.
 */
#ifndef SSN_DIGEST_H
#define SSN_DIGEST_H

#include <stddef.h>

#define DIGEST_LEN      32                  /* SHA-256 bytes */
#define DIGEST_HEX_LEN  (2 * DIGEST_LEN)    /* lowercase hex, without NUL */

struct digest;

/* Fetches SHA-256 once. Returns 0, or -1 when libcrypto cannot provide it.
 * Call before any thread uses digest_new. */
int digest_global_init(void);
void digest_global_cleanup(void);

/* A reusable context for one thread. NULL on allocation failure. */
struct digest *digest_new(void);
void digest_free(struct digest *d);

/* begin, any number of updates, then end: writes DIGEST_HEX_LEN hex digits
 * and a NUL into hex. Each returns 0, or -1 on a libcrypto failure. */
int digest_begin(struct digest *d);
int digest_update(struct digest *d, const void *data, size_t len);
int digest_end(struct digest *d, char hex[DIGEST_HEX_LEN + 1]);

/* One-shot SHA-256 of a buffer into hex, with a context of the caller's. */
int digest_hex(struct digest *d, const void *data, size_t len,
               char hex[DIGEST_HEX_LEN + 1]);

#endif
