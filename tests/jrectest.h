/* jrectest.h -- journal images built round by round, shared by the
 * recovery tests (check_journal_recovery.c on images,
 * check_journal_recovery_file.c on real files): a format 2 or version 1
 * header, ADDs of "Pk Recovery" that each claim how far the image was
 * synced when they were appended, syncs and MARKs, the 512-byte block
 * boundary, and a scan that counts the records passed to its callback.
 * static inline so each test file takes only what it uses.
 */
#ifndef SSN_TESTS_JRECTEST_H
#define SSN_TESTS_JRECTEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <check.h>
#include "../server/journal/journal_rec.h"
#include "../server/store.h"

struct img {
    unsigned char b[16384];
    size_t len;
    uint32_t v;                 /* the format */
    size_t durable;             /* what a record appended now claims */
};

static inline void img_init(struct img *im, uint32_t v)
{
    memset(im, 0, sizeof(*im));
    jrec_header_write_version(im->b, v);
    im->len = im->durable = JREC_HEADER_LEN;
    im->v = v;
}

/* Appends the ADD of person k ("Pk Recovery"); returns its offset. */
static inline size_t img_add(struct img *im, int k)
{
    char first[16];
    size_t at = im->len;

    snprintf(first, sizeof(first), "P%d", k);
    im->len += jrec_encode(im->b + at, im->v, jrec_back(at, im->durable),
                           STORE_ADD, first, "Recovery", k % 150,
                           "123-45-6789");
    return at;
}

/* A round of n ADDs from person k on; returns its first record's offset. */
static inline size_t img_round(struct img *im, int k, int n)
{
    size_t at = im->len;

    for (int i = 0; i < n; i++)
        img_add(im, k + i);
    return at;
}

static inline void img_sync(struct img *im)
{
    im->durable = im->len;
}

static inline size_t img_mark(struct img *im)
{
    size_t at = im->len;

    im->len += jrec_encode_mark(im->b + at, jrec_back(at, im->durable));
    return at;
}

/* The 512-byte block boundary after offset at. */
static inline size_t block_after(size_t at)
{
    return (at / 512 + 1) * 512;
}

static inline int count_cb(enum store_op op, const struct person *p,
                           void *arg)
{
    (void)op;
    (void)p;
    ++*(int *)arg;
    return 0;
}

static inline enum jscan_status scan(const struct img *im, struct jscan *r)
{
    int n = 0;
    enum jscan_status st = jrec_scan(im->b, im->len, count_cb, &n, r);
    ck_assert_uint_eq((size_t)n, r->records);
    return st;
}

/* Three rounds of 3, 3 and 30 ADDs, the first two synced before the next
 * was appended (--fsync always); starts[i] is round i's offset. */
static inline void three_rounds(struct img *im, uint32_t v,
                                size_t starts[3])
{
    img_init(im, v);
    starts[0] = img_round(im, 1, 3);
    img_sync(im);
    starts[1] = img_round(im, 4, 3);
    img_sync(im);
    starts[2] = img_round(im, 7, 30);
    ck_assert_uint_gt(im->len, block_after(starts[2]));
}

#endif
