/* preload.h -- people kill_it can add before its clients start, so every
 * PRINT is big (see docs/DEMO.md: with only the clients' ~50 people each,
 * a PRINT is ~10 KB, which the kernel's socket buffers swallow whole, and a
 * PRINT under the lock never blocks). Their last names start with
 * PRELOAD_PREFIX, which no bundled last name does, so no client ever
 * touches them; they are deterministic, so kill_it can still verify.
 */
#ifndef SSN_CLIENT_PRELOAD_H
#define SSN_CLIENT_PRELOAD_H

#include <stdint.h>
#include "entry.h"
#include "names.h"
#include "pipeline.h"

#define PRELOAD_PREFIX  "Zqx"       /* last names of preloaded people */
#define PRELOAD_MAX     1000000u    /* most people --preload adds */

/* The i-th preloaded person. */
void preload_entry(uint64_t i, struct person *e);

/* 1 when some name in nl starts with PRELOAD_PREFIX (then preloading could
 * collide with a client's names), else 0. */
int preload_clashes(const struct namelist *nl);

/* A source of n ADD requests for people 0..n-1, then DONE. */
struct preload_source {
    uint64_t next, n;
    int done;
};
void preload_source_init(struct pl_source *s, struct preload_source *ps,
                         uint64_t n);

#endif
