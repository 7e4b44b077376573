/* gen.c -- the deterministic request stream (gen.h).
 *
 * The order of PRNG draws is part of the output format: changing it changes
 * every stream and every digest recorded in tests and docs. Draws happen in
 * this order: shuffling a block; then per ADD: name (repeated while taken),
 * age, SSN; per DELETE or FIND: the victim's index in the live array.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen.h"

#define GEN_NAME_TRIES  64      /* random picks before scanning for a free name */

uint64_t gen_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Modulo bias is below n/2^64: irrelevant here, and it keeps the draw to
 * exactly one PRNG step, which keeps streams easy to reason about. */
uint64_t gen_below(uint64_t *state, uint64_t n)
{
    return n ? gen_rand(state) % n : 0;
}

static int used_get(const struct gen *g, size_t bit)
{
    return g->used[bit >> 3] >> (bit & 7) & 1;
}

static void used_set(struct gen *g, size_t bit, int on)
{
    if (on)
        g->used[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    else
        g->used[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
}

int gen_init(struct gen *g, const struct namelist *names,
             const struct gen_opts *o)
{
    memset(g, 0, sizeof(*g));
    unsigned wsum = 0;
    for (int i = 0; i < 4; i++) {
        if (o->mix.w[i] > GEN_MIX_MAX)
            return -EINVAL;
        wsum += o->mix.w[i];
    }
    if (wsum == 0 || o->shard_n == 0 || o->shard_n > GEN_SHARD_MAX ||
        o->shard_k >= o->shard_n || o->nevents > UINT64_MAX / 2)
        return -EINVAL;

    g->names = names;
    g->opt = *o;
    g->rng = o->seed;
    for (size_t i = o->shard_k; i < names->n; i += o->shard_n)
        g->nshard++;
    if (g->nshard == 0 || g->nshard > UINT32_MAX / NAMES_NFIRST)
        return -EINVAL;

    size_t space = g->nshard * NAMES_NFIRST;
    g->shard = malloc(g->nshard * sizeof(*g->shard));
    g->used = calloc((space + 7) / 8, 1);
    g->cap = 64;
    g->live = malloc(g->cap * sizeof(*g->live));
    g->block = malloc(wsum);
    if (!g->shard || !g->used || !g->live || !g->block) {
        gen_destroy(g);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = o->shard_k; i < names->n; i += o->shard_n)
        g->shard[k++] = (uint32_t)i;
    g->block_len = wsum;
    g->block_pos = wsum;        /* empty: the first block is drawn on demand */
    return 0;
}

void gen_destroy(struct gen *g)
{
    free(g->shard);
    free(g->used);
    free(g->live);
    free(g->block);
    memset(g, 0, sizeof(*g));
}

static void new_block(struct gen *g)
{
    unsigned n = 0;
    for (int op = 0; op < 4; op++)
        for (unsigned i = 0; i < g->opt.mix.w[op]; i++)
            g->block[n++] = (uint8_t)op;
    for (unsigned i = n - 1; i > 0; i--) {          /* Fisher-Yates */
        unsigned j = (unsigned)gen_below(&g->rng, i + 1);
        uint8_t t = g->block[i];
        g->block[i] = g->block[j];
        g->block[j] = t;
    }
    g->block_pos = 0;
}

/* The op the schedule asks for, adjusted to what is possible now. */
static enum gen_op next_op(struct gen *g)
{
    enum gen_op op = GEN_ADD;
    if (g->emitted >= GEN_WARMUP) {
        if (g->block_pos == g->block_len)
            new_block(g);
        op = g->block[g->block_pos++];
    }
    size_t space = g->nshard * NAMES_NFIRST;
    if ((op == GEN_DELETE || op == GEN_FIND) && g->nlive == 0)
        op = GEN_ADD;
    if (op == GEN_ADD && g->nlive == space)
        op = GEN_DELETE;                /* every name is live: make room */
    return op;
}

/* A name not live now: random picks first, then a scan (tiny shards). */
static size_t free_name(struct gen *g)
{
    size_t space = g->nshard * NAMES_NFIRST;
    size_t bit = 0;
    for (int i = 0; i < GEN_NAME_TRIES; i++) {
        bit = (size_t)gen_below(&g->rng, space);
        if (!used_get(g, bit))
            return bit;
    }
    while (used_get(g, bit))
        bit = (bit + 1) % space;
    return bit;
}

static const char *last_name(const struct gen *g, uint32_t last)
{
    return g->names->name[g->shard[last]];
}

/* ssn (below 10^9) as DDD-DD-DDDD. */
static void ssn_format(uint32_t ssn, char out[ENTRY_SSN_LEN + 1])
{
    for (int i = ENTRY_SSN_LEN - 1; i >= 0; i--) {
        if (i == 3 || i == 6) {
            out[i] = '-';
        } else {
            out[i] = (char)('0' + ssn % 10);
            ssn /= 10;
        }
    }
    out[ENTRY_SSN_LEN] = '\0';
}

size_t gen_next(struct gen *g, char *buf, enum gen_op *op)
{
    int n;
    char ssn[ENTRY_SSN_LEN + 1];

    if (g->emitted == g->opt.nevents) {
        if (g->tail == 2) {
            *op = GEN_DONE;
            return 0;
        }
        *op = g->tail++ == 0 ? GEN_PRINT : GEN_DONE;
        g->count[*op]++;
        return (size_t)snprintf(buf, GEN_LINE_MAX, *op == GEN_PRINT ?
                                "PRINT\n" : "DONE\n");
    }

    *op = next_op(g);
    if (*op == GEN_ADD) {
        if (g->nlive == g->cap) {
            struct gen_person *p = realloc(g->live, 2 * g->cap * sizeof(*p));
            if (!p) {
                *op = GEN_NOPS;
                return 0;
            }
            g->live = p;
            g->cap *= 2;
        }
        size_t bit = free_name(g);
        struct gen_person *p = &g->live[g->nlive++];
        p->last = (uint32_t)(bit / NAMES_NFIRST);
        p->first = (uint8_t)(bit % NAMES_NFIRST);
        p->age = (uint8_t)gen_below(&g->rng, 100);
        p->ssn = (uint32_t)gen_below(&g->rng, 1000000000u);
        used_set(g, bit, 1);
        ssn_format(p->ssn, ssn);
        n = snprintf(buf, GEN_LINE_MAX, "ADD %s %s %u %s\n",
                     names_first[p->first], last_name(g, p->last),
                     p->age, ssn);
    } else if (*op == GEN_DELETE || *op == GEN_FIND) {
        size_t i = (size_t)gen_below(&g->rng, g->nlive);
        struct gen_person p = g->live[i];
        if (*op == GEN_DELETE) {
            g->live[i] = g->live[--g->nlive];       /* swap-remove */
            used_set(g, (size_t)p.last * NAMES_NFIRST + p.first, 0);
        }
        n = snprintf(buf, GEN_LINE_MAX, "%s %s %s\n",
                     *op == GEN_DELETE ? "DELETE" : "FIND",
                     names_first[p.first], last_name(g, p.last));
    } else {
        n = snprintf(buf, GEN_LINE_MAX, "PRINT\n");
    }
    g->emitted++;
    g->count[*op]++;
    return (size_t)n;
}

size_t gen_live_count(const struct gen *g)
{
    return g->nlive;
}

void gen_live_entry(const struct gen *g, size_t i, struct person *e)
{
    const struct gen_person *p = &g->live[i];
    memset(e, 0, sizeof(*e));
    snprintf(e->last, sizeof(e->last), "%s", last_name(g, p->last));
    snprintf(e->first, sizeof(e->first), "%s", names_first[p->first]);
    ssn_format(p->ssn, e->ssn);
    e->age = p->age;
}

void gen_run_to_end(struct gen *g)
{
    char buf[GEN_LINE_MAX];
    enum gen_op op;
    while (gen_next(g, buf, &op) > 0)
        ;
}
