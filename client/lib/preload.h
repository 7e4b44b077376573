/* preload.h -- people kill_it can add before its clients start, so every
 * PRINT is big (see docs/DEMO.md: with only the clients' ~50 people each,
 * a PRINT is ~10 KB, which the kernel's socket buffers swallow whole, and a
 * PRINT under the lock never blocks). Their last names are double-barrelled
 * surnames ("Baker-Adams"): PRELOAD_MARK, the hyphen, is in no bundled
 * last name, so no client ever touches them; they are deterministic, so
 * kill_it can still verify, and they read as names in a TREE picture.
 */
#ifndef SSN_CLIENT_PRELOAD_H
#define SSN_CLIENT_PRELOAD_H

#include <stdint.h>
#include "entry.h"
#include "names.h"
#include "pipeline.h"

#define PRELOAD_MARK    '-'         /* in every preloaded last name, and
                                       in no name a client may use */
#define PRELOAD_MAX     1000000u    /* most people --preload adds */

/* The i-th preloaded person. */
void preload_entry(uint64_t i, struct person *e);

/* 1 when some name in nl holds PRELOAD_MARK (then preloading could collide
 * with a client's names), else 0. */
int preload_clashes(const struct namelist *nl);

/* A source of n ADD requests for people 0..n-1, then DONE. */
struct preload_source {
    uint64_t next, n;
    int done;
};
void preload_source_init(struct pl_source *s, struct preload_source *ps,
                         uint64_t n);

#endif
