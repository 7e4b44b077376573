/* fuzz.h -- what the fuzz targets in tests/fuzz/ share (docs/FUZZING.md).
 * Each target is one LLVMFuzzerTestOneInput, built two ways by
 * tests/fuzz/fuzz.mk: with clang and libFuzzer (make fuzz), and with gcc,
 * ASan and UBSan around replay.c's main(), which runs every file of the
 * seed corpus once (make fuzz-replay, tests/test-fuzz-corpus.sh).
 *
 * A target's oracle says what must hold for every input; FUZZ_CHECK names
 * the broken rule on stderr and aborts, which libFuzzer reports as a crash
 * (and keeps the input) and the replay driver as a failed run.
 */
#ifndef SSN_FUZZ_H
#define SSN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, what)                                            \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "fuzz oracle: %s (%s) at %s:%d\n", (what),    \
                    #cond, __FILE__, __LINE__);                           \
            abort();                                                      \
        }                                                                 \
    } while (0)

/* Appends n bytes at p to the growing buffer *buf (*len used of *cap),
 * doubling it from 4096 as needed; what names it if memory runs out. */
static inline void fuzz_append(void *buf, size_t *len, size_t *cap,
                               const void *p, size_t n, const char *what)
{
    unsigned char **b = buf;

    if (n == 0)
        return;
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n)
            c *= 2;
        *b = realloc(*b, c);
        FUZZ_CHECK(*b != NULL, what);
        *cap = c;
    }
    memcpy(*b + *len, p, n);
    *len += n;
}

#endif
