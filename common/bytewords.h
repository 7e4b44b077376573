/* bytewords.h -- looking at 8 bytes of text at once (the "has a byte less
 * than n" test of the bit-twiddling literature), for the checks every
 * request line goes through: proto.c's split, entry.c's name checks. */
#ifndef SSN_BYTEWORDS_H
#define SSN_BYTEWORDS_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#define BYTES_ONES  UINT64_C(0x0101010101010101)
#define BYTES_HIGHS UINT64_C(0x8080808080808080)

/* A high bit in each byte of w below n (n <= 128), exact for the lowest
 * such byte and for whether there is one: a borrow may flag bytes above
 * the lowest, never below it, never one where there is none. */
static inline uint64_t bytes_below(uint64_t w, unsigned n)
{
    return (w - BYTES_ONES * n) & ~w & BYTES_HIGHS;
}

/* The 8 bytes at s, s[0] in the lowest byte whatever the CPU's order. */
static inline uint64_t bytes_load(const char *s)
{
    uint64_t w;

    memcpy(&w, s, 8);
    return le64toh(w);
}

#endif
