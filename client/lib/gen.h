/* gen.h -- the request stream of the classic inputgen tool, shared by
 * inputgen, inclient and kill_it so all three produce the same bytes.
 *
 * A stream of NEVENTS events from a seed: the first GEN_WARMUP events are
 * ADDs; after them the events come in shuffled blocks holding exactly the
 * mix's counts (5 ADD, 5 DELETE, 1 PRINT by default), so the ratio is exact
 * and the live set stays near GEN_WARMUP. A DELETE (or FIND) always names a
 * person this stream added and has not deleted; an ADD never names a live
 * one. After the events come "PRINT" and "DONE". Everything is drawn from
 * our own PRNG (splitmix64), so the bytes are the same on every machine.
 */
#ifndef SSN_CLIENT_GEN_H
#define SSN_CLIENT_GEN_H

#include <stddef.h>
#include <stdint.h>
#include "entry.h"
#include "names.h"

#define GEN_WARMUP      50      /* leading events that are always ADDs */
#define GEN_LINE_MAX    192     /* longest generated request, with '\n' */
#define GEN_MIX_MAX     1000    /* largest weight --mix accepts */
#define GEN_SHARD_MAX   65536   /* largest N in --shard K/N */

enum gen_op { GEN_ADD, GEN_DELETE, GEN_PRINT, GEN_FIND, GEN_DONE, GEN_NOPS };

struct gen_mix {
    unsigned w[4];              /* weights of ADD, DELETE, PRINT, FIND */
};

#define GEN_MIX_DEFAULT { { 5, 5, 1, 0 } }

struct gen_opts {
    uint64_t nevents;           /* events before the closing PRINT, DONE */
    uint64_t seed;
    unsigned shard_k, shard_n;  /* last names with index % n == k; n >= 1 */
    struct gen_mix mix;
};

struct gen_person {
    uint32_t last;              /* index into the shard's last names */
    uint32_t ssn;               /* 0..999999999, printed DDD-DD-DDDD */
    uint8_t first;              /* index into names_first */
    uint8_t age;                /* 0..99 */
};

struct gen {
    const struct namelist *names;
    struct gen_opts opt;
    uint64_t rng;               /* splitmix64 state */
    uint64_t emitted;           /* events produced so far */
    int tail;                   /* 0: events, 1: PRINT sent, 2: DONE sent */

    uint32_t *shard;            /* list indices of this shard's last names */
    size_t nshard;
    uint8_t *used;              /* bit per (last, first): live now */
    struct gen_person *live;    /* the live set, unordered */
    size_t nlive, cap;

    uint8_t *block;             /* one shuffled block of ops */
    unsigned block_len, block_pos;
    uint64_t count[GEN_NOPS];   /* lines produced, by op */
};

/* Sets g up. Returns 0; -EINVAL when the options are bad (all weights 0,
 * shard out of range or without names); -ENOMEM. names must outlive g. */
int gen_init(struct gen *g, const struct namelist *names,
             const struct gen_opts *o);
void gen_destroy(struct gen *g);

/* Writes the next request, '\n' included and NUL-terminated, into buf
 * (GEN_LINE_MAX bytes) and returns its length; 0 when the stream has ended.
 * *op says what it is. Never allocates unless the live set outgrows its
 * array (amortised doubling); returns 0 with *op = GEN_NOPS then. */
size_t gen_next(struct gen *g, char *buf, enum gen_op *op);

/* The live set now, as entries (tree order is the caller's business). */
size_t gen_live_count(const struct gen *g);
void gen_live_entry(const struct gen *g, size_t i, struct person *e);

/* Runs the rest of the stream, discarding its lines: g is left at its end
 * with the final live set. */
void gen_run_to_end(struct gen *g);

/* The splitmix64 step and a bounded draw, exposed for tests. */
uint64_t gen_rand(uint64_t *state);
uint64_t gen_below(uint64_t *state, uint64_t n);

#endif
