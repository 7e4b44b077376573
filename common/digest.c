/* digest.c -- SHA-256 with the digest fetched once and a context per thread
 * (digest.h). The fetched EVP_MD is read-only after digest_global_init, so
 * threads share it without a lock; contexts are never shared. */
#include <stdlib.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include "digest.h"

struct digest {
    EVP_MD_CTX *ctx;
};

static EVP_MD *sha256;          /* set once before threads start */

int digest_global_init(void)
{
    if (sha256)
        return 0;
    sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    return sha256 ? 0 : -1;
}

void digest_global_cleanup(void)
{
    EVP_MD_free(sha256);
    sha256 = NULL;
}

struct digest *digest_new(void)
{
    struct digest *d = malloc(sizeof(*d));
    if (!d)
        return NULL;
    d->ctx = EVP_MD_CTX_new();
    if (!d->ctx) {
        free(d);
        return NULL;
    }
    return d;
}

void digest_free(struct digest *d)
{
    if (!d)
        return;
    EVP_MD_CTX_free(d->ctx);
    free(d);
}

int digest_begin(struct digest *d)
{
    return EVP_DigestInit_ex(d->ctx, sha256, NULL) == 1 ? 0 : -1;
}

int digest_update(struct digest *d, const void *data, size_t len)
{
    return EVP_DigestUpdate(d->ctx, data, len) == 1 ? 0 : -1;
}

int digest_end(struct digest *d, char hex[DIGEST_HEX_LEN + 1])
{
    static const char xd[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (EVP_DigestFinal_ex(d->ctx, md, &n) != 1 || n != DIGEST_LEN)
        return -1;
    for (unsigned int i = 0; i < n; i++) {
        hex[2 * i] = xd[md[i] >> 4];
        hex[2 * i + 1] = xd[md[i] & 15];
    }
    hex[DIGEST_HEX_LEN] = '\0';
    return 0;
}

int digest_hex(struct digest *d, const void *data, size_t len,
               char hex[DIGEST_HEX_LEN + 1])
{
    if (digest_begin(d) || digest_update(d, data, len))
        return -1;
    return digest_end(d, hex);
}
