/* source.c -- source_hash (source.h), under a key drawn once a process. */
#include <pthread.h>
#include <string.h>
#include "siphash.h"
#include "source.h"

static struct siphash_key key;          /* written once, by draw */
static pthread_once_t drawn = PTHREAD_ONCE_INIT;

/* Without the kernel's random bytes the key stays zero: the tables still
 * work, as with any hash; only their slots can be aimed at again. */
static void draw(void)
{
    if (siphash_key_random(&key) != 0)
        memset(&key, 0, sizeof(key));
}

uint32_t source_hash(const char *peer)
{
    const char *colon = strrchr(peer, ':');
    size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

    pthread_once(&drawn, draw);
    return (uint32_t)siphash13(&key, peer, n);
}
