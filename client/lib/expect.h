/* expect.h -- the state a server should hold after some generated streams
 * ran against it from empty: the union of their final live sets, in tree
 * order, as the canonical dump that DIGEST hashes (entry_format_dump).
 */
#ifndef SSN_CLIENT_EXPECT_H
#define SSN_CLIENT_EXPECT_H

#include <stdio.h>
#include "digest.h"
#include "entry.h"
#include "gen.h"

struct expect {
    struct person *e;            /* owned array, n used of cap */
    size_t n, cap;
    size_t dups;                /* equal (last, first) pairs seen by sort */
};

void expect_init(struct expect *x);
void expect_free(struct expect *x);

/* Appends g's live set. Returns 0 or -ENOMEM (x unchanged then). */
int expect_add(struct expect *x, const struct gen *g);

/* Appends one entry. Returns 0 or -ENOMEM. */
int expect_add_entry(struct expect *x, const struct person *e);

/* Sorts into tree order (person_cmp) and counts duplicate names in dups:
 * streams on disjoint shards never produce any. */
void expect_sort(struct expect *x);

/* Writes the canonical dump. Returns 0, or -EIO when f failed. */
int expect_write(const struct expect *x, FILE *f);

/* SHA-256 hex of the canonical dump, as DIGEST reports it. Needs
 * digest_global_init. Returns 0 or -1 on a libcrypto failure. */
int expect_digest(const struct expect *x, char hex[DIGEST_HEX_LEN + 1]);

#endif
