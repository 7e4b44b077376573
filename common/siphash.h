/* siphash.h -- SipHash (Aumasson and Bernstein, 2012): a keyed 64-bit hash
 * of short inputs, for hash tables whose keys a client chooses. Without the
 * key nobody can tell which inputs share a slot, so a client cannot fill
 * one probe run on purpose (hash flooding); Redis, Python and Rust key
 * their tables the same way. Knows nothing of tables: the store's name
 * index (server/store_index.c) draws its key at random.
 *
 * siphash(k, in, len, 2, 4) is SipHash-2-4, the paper's: with the key
 * 00 01 .. 0f and the message 00 01 .. 0e it is 0xa129ca6149be45e5.
 * siphash13 is SipHash-1-3 (one round a word, three at the end), the
 * variant Python and Rust hash with.
 */
#ifndef SSN_SIPHASH_H
#define SSN_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

struct siphash_key {
    uint64_t k0, k1;            /* the key's bytes 0-7 and 8-15, read
                                   little-endian */
};

/* The hash of len bytes at in, with c rounds a word and d at the end. */
uint64_t siphash(const struct siphash_key *k, const void *in, size_t len,
                 int c, int d);

uint64_t siphash13(const struct siphash_key *k, const void *in, size_t len);

/* A key of 16 random bytes from the kernel (getrandom). 0, or -errno. */
int siphash_key_random(struct siphash_key *k);

#endif
