/* siphash.c -- SipHash (siphash.h), written from the paper's description:
 * four 64-bit words of state, each 8-byte word of input mixed in by c
 * rounds, the length in the last word's top byte, d rounds to finish. */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include "siphash.h"

static inline uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

struct sip {
    uint64_t v0, v1, v2, v3;
};

static inline void round1(struct sip *s)
{
    s->v0 += s->v1; s->v1 = rotl(s->v1, 13); s->v1 ^= s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3; s->v3 = rotl(s->v3, 16); s->v3 ^= s->v2;
    s->v0 += s->v3; s->v3 = rotl(s->v3, 21); s->v3 ^= s->v0;
    s->v2 += s->v1; s->v1 = rotl(s->v1, 17); s->v1 ^= s->v2;
    s->v2 = rotl(s->v2, 32);
}

static inline void compress(struct sip *s, uint64_t m, int c)
{
    s->v3 ^= m;
    for (int i = 0; i < c; i++)
        round1(s);
    s->v0 ^= m;
}

/* Always inlined, so that siphash13's rounds are constants the compiler
 * unrolls. */
static inline __attribute__((always_inline))
uint64_t sip(const struct siphash_key *k, const unsigned char *p, size_t len,
             int c, int d)
{
    struct sip s = {
        .v0 = k->k0 ^ UINT64_C(0x736f6d6570736575),
        .v1 = k->k1 ^ UINT64_C(0x646f72616e646f6d),
        .v2 = k->k0 ^ UINT64_C(0x6c7967656e657261),
        .v3 = k->k1 ^ UINT64_C(0x7465646279746573),
    };
    size_t words = len / 8, left = len % 8;
    uint64_t m, last = (uint64_t)len << 56;

    for (size_t i = 0; i < words; i++, p += 8) {
        memcpy(&m, p, 8);
        compress(&s, le64toh(m), c);
    }
    if (left && len >= 8) {
        /* The last 8 bytes, of which the first 8 - left were a word's
         * already: one load instead of a byte at a time. */
        memcpy(&m, p + left - 8, 8);
        last |= le64toh(m) >> (8 * (8 - left));
    } else {
        for (size_t i = 0; i < left; i++)
            last |= (uint64_t)p[i] << (8 * i);
    }
    compress(&s, last, c);
    s.v2 ^= 0xff;
    for (int i = 0; i < d; i++)
        round1(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t siphash(const struct siphash_key *k, const void *in, size_t len,
                 int c, int d)
{
    return sip(k, in, len, c, d);
}

uint64_t siphash13(const struct siphash_key *k, const void *in, size_t len)
{
    return sip(k, in, len, 1, 3);
}

int siphash_key_random(struct siphash_key *k)
{
    unsigned char b[16];
    size_t got = 0;

    while (got < sizeof(b)) {
        ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        got += (size_t)n;
    }
    memcpy(&k->k0, b, 8);
    memcpy(&k->k1, b + 8, 8);
    k->k0 = le64toh(k->k0);
    k->k1 = le64toh(k->k1);
    explicit_bzero(b, sizeof(b));
    return 0;
}
