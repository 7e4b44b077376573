/* fuzz_jrec.h -- what the two halves of the journal-format fuzz target
 * share (fj_: fuzz_jrec). fuzz_jrec.c turns the input into images and
 * runs the reader on them (the input layout and the oracle's list are at
 * its top); fuzz_jrec_check.c holds the oracle's checks. A check aborts
 * through FUZZ_CHECK (fuzz.h) on a broken rule, so none returns an error.
 */
#ifndef SSN_FUZZ_JREC_H
#define SSN_FUZZ_JREC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "journal_rec.h"

#define REFUSE_RC (-EEXIST)     /* what a refusing callback returns: the
                                   store's answer to an ADD of a present
                                   name */

/* One call of the scan's callback. */
struct call {
    enum store_op op;
    struct person p;
};

/* Every call of one scan, and when to refuse. */
struct calls {
    struct call *v;
    size_t n, cap;
    size_t refuse_at;           /* refuse the call of this index; SIZE_MAX:
                                   never */
};

/* One record of the walk with jrec_decode from the header on. */
struct wrec {
    size_t off, len;
    struct jrec rec;
};

/* fuzz_jrec.c: images, and the reader run on them. The walk and the calls
 * are the caller's, freed with fj_walk_free and fj_calls_free (which wipe
 * the SSNs). */
uint8_t *fj_copy_of(const uint8_t *p, size_t n, size_t room);
size_t fj_frame_claim(const uint8_t *p, size_t avail, uint32_t version);
void fj_scan(const uint8_t *img, size_t len, struct calls *c,
             struct jscan *res);
void fj_calls_free(struct calls *c);
size_t fj_walk(const uint8_t *img, size_t len, uint32_t version,
               struct wrec **w);
void fj_walk_free(struct wrec *w, size_t n);

/* fuzz_jrec_check.c: the oracle, each keeping a part of the list. */
void fj_check_call(enum store_op op, const struct person *p);
size_t fj_decode_at(const uint8_t *img, size_t len, size_t off,
                    uint32_t version, struct jrec *out);
int fj_has_records(enum jscan_status st);
void fj_check_scan(const uint8_t *img, size_t len, const struct jscan *r,
                   const struct calls *c, const struct wrec *w, size_t nw);
void fj_check_rescan(const uint8_t *img, size_t len, const struct jscan *r,
                     const struct calls *c);
void fj_check_prefix(const uint8_t *img, const struct jscan *r,
                     const struct calls *c);
void fj_check_zero_tail(const uint8_t *img, size_t len,
                        const struct jscan *r, const struct calls *c,
                        size_t zeros);
void fj_check_refusal(const uint8_t *img, size_t len, const struct jscan *r,
                      const struct calls *c, const struct wrec *w,
                      size_t nw, unsigned refuse);

#endif
