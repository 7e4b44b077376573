/* check_journal_recovery.c -- the recovery rule of the journal's format 2
 * (server/journal/journal_rec.c): each record claims how far the file was
 * durable when it was appended, and a bad record is damage only when a
 * record after it claims its bytes durable (jrec_witness); otherwise it
 * is the last, unsynced writes a crash left unfinished or out of order,
 * and is cut. On images built round by round: a torn last round (zeros
 * or garbage where its first block should be) is cut; damage before a
 * later round's claim is refused, with the record that proves it; rounds
 * written but never synced (everysec) are cut together; records found by
 * chance in garbage, or whose claim is impossible, prove nothing; a MARK;
 * version 1 keeps its rule; a header cut short starts empty. Then on a
 * real file through journal_open: a header cut at 8 bytes, a version 1
 * journal that takes version 1 records until a compaction (with appends
 * during it) rewrites it as version 2, a torn round written by the
 * journal's own rounds, and under group commit the first record of a
 * round claiming the round before.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "../server/journal/journal.h"
#include "../server/journal/journal_rec.h"
#include "../server/lockmode.h"
#include "../server/store.h"
#include "journaltest.h"

/* ---- images built round by round ------------------------------------- */

struct img {
    unsigned char b[16384];
    size_t len;
    uint32_t v;                 /* the format */
    size_t durable;             /* what a record appended now claims */
};

static void img_init(struct img *im, uint32_t v)
{
    memset(im, 0, sizeof(*im));
    jrec_header_write_version(im->b, v);
    im->len = im->durable = JREC_HEADER_LEN;
    im->v = v;
}

/* Appends the ADD of person k ("Pk Recovery"); returns its offset. */
static size_t img_add(struct img *im, int k)
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
static size_t img_round(struct img *im, int k, int n)
{
    size_t at = im->len;

    for (int i = 0; i < n; i++)
        img_add(im, k + i);
    return at;
}

static void img_sync(struct img *im)
{
    im->durable = im->len;
}

static size_t img_mark(struct img *im)
{
    size_t at = im->len;

    im->len += jrec_encode_mark(im->b + at, jrec_back(at, im->durable));
    return at;
}

/* The 512-byte block boundary after offset at. */
static size_t block_after(size_t at)
{
    return (at / 512 + 1) * 512;
}

static int count_cb(enum store_op op, const struct person *p, void *arg)
{
    (void)op;
    (void)p;
    ++*(int *)arg;
    return 0;
}

static enum jscan_status scan(const struct img *im, struct jscan *r)
{
    int n = 0;
    enum jscan_status st = jrec_scan(im->b, im->len, count_cb, &n, r);
    ck_assert_uint_eq((size_t)n, r->records);
    return st;
}

/* Three rounds of 3, 3 and 30 ADDs, the first two synced before the next
 * was appended (--fsync always); starts[i] is round i's offset. */
static void three_rounds(struct img *im, uint32_t v, size_t starts[3])
{
    img_init(im, v);
    starts[0] = img_round(im, 1, 3);
    img_sync(im);
    starts[1] = img_round(im, 4, 3);
    img_sync(im);
    starts[2] = img_round(im, 7, 30);
    ck_assert_uint_gt(im->len, block_after(starts[2]));
}

/* ---- the rule, on images ----------------------------------------------- */

/* The last round reached the disk with its later blocks and not its
 * first: zeros (the space reserved ahead) or garbage there, whole records
 * after. No record claims it durable: cut where it begins, said how. */
START_TEST(test_recovery_torn_round_cut)
{
    struct img im;
    size_t st[3];
    struct jscan r;

    for (int garbage = 0; garbage <= 1; garbage++) {
        three_rounds(&im, JREC_VERSION, st);
        uint32_t x = 12345;
        for (size_t k = st[2]; k < block_after(st[2]); k++) {
            x = x * 1103515245 + 12345;
            im.b[k] = garbage ? (unsigned char)(x >> 16) : 0;
        }
        ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);
        ck_assert_uint_eq(r.records, 6);
        ck_assert_uint_eq(r.good_end, st[2]);
        ck_assert_uint_eq(r.bad_offset, st[2]);
        ck_assert_uint_eq(r.tail_data, im.len - st[2]);
        ck_assert_uint_gt(r.tail_whole, 10);    /* the round's later ones */
        ck_assert_uint_eq(r.witness, 0);
        ck_assert_int_eq(r.zero_tail, 0);
    }
    /* A block lost in the middle of the round: cut at the first record it
     * damaged, the whole ones before it kept. */
    three_rounds(&im, JREC_VERSION, st);
    size_t hole = block_after(st[2]);
    memset(im.b + hole, 0, im.len - hole < 512 ? im.len - hole - 1 : 512);
    ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);
    ck_assert_uint_gt(r.records, 6);
    ck_assert_uint_le(r.good_end, hole);
    ck_assert_uint_gt(r.good_end + JREC_MAX, hole);
}
END_TEST

/* A byte flipped in a round that was synced: a record of a later round,
 * appended after that sync, claims it durable: damage, with that record
 * named. In the last round (never synced, nothing after it) the same flip
 * is a torn tail; followed by a MARK that claims it, damage again. */
START_TEST(test_recovery_damage_durable_refused)
{
    struct img im;
    size_t st[3];
    struct jscan r;

    three_rounds(&im, JREC_VERSION, st);
    size_t second = st[0] + jrec_add_len(2, 8);     /* "P1", "Recovery" */
    im.b[second + JREC_FRAME_LEN + 3] ^= 0x20;
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.bad_offset, second);
    ck_assert_uint_eq(r.records, 1);
    ck_assert_uint_eq(r.witness, st[1]);            /* round 2's first */
    ck_assert_uint_eq(r.witness_upto, st[1]);       /* round 1 synced */

    three_rounds(&im, JREC_VERSION, st);
    im.b[st[2] - 3] ^= 0x01;                        /* round 2's last */
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.witness, st[2]);

    three_rounds(&im, JREC_VERSION, st);
    im.b[st[2] + 12] ^= 0x20;                       /* round 3's first */
    ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);
    ck_assert_uint_eq(r.good_end, st[2]);

    three_rounds(&im, JREC_VERSION, st);
    img_sync(&im);
    size_t mark = img_mark(&im);
    im.b[st[2] + 12] ^= 0x20;
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.witness, mark);
    ck_assert_uint_eq(r.witness_upto, mark);
}
END_TEST

/* --fsync everysec: several rounds written after the last sync, all
 * claiming only it. The first of them torn: it and every round after it
 * are cut, their whole records counted. */
START_TEST(test_recovery_unsynced_rounds_cut)
{
    struct img im;
    struct jscan r;

    img_init(&im, JREC_VERSION);
    img_round(&im, 1, 5);
    img_sync(&im);
    size_t r2 = img_round(&im, 10, 20);
    img_round(&im, 40, 20);
    img_round(&im, 70, 20);
    memset(im.b + r2, 0, block_after(r2) - r2);
    ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);
    ck_assert_uint_eq(r.records, 5);
    ck_assert_uint_eq(r.good_end, r2);
    ck_assert_uint_ge(r.tail_whole, 40);            /* rounds 3 and 4 */
    /* Once a sync covers round 2, a round after it claims it: the same
     * hole is damage. */
    img_sync(&im);
    size_t r5 = img_round(&im, 100, 1);
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.witness, r5);
}
END_TEST

/* What a tear leaves may hold what looks like a record: it proves
 * nothing unless it checks whole (CRC-32C over its length word and
 * payload, every field) and its claim is possible. */
START_TEST(test_recovery_no_false_witness)
{
    struct img im;
    size_t st[3];
    struct jscan r;
    unsigned char rec[JREC_MAX];

    three_rounds(&im, JREC_VERSION, st);
    size_t end = block_after(st[2]);
    memset(im.b + st[2], 0, end - st[2]);
    size_t at = st[2] + 101;                /* an odd offset in the hole */
    size_t n = jrec_encode(rec, JREC_VERSION, 0, STORE_ADD, "Forged",
                           "Claim", 20, "999-88-7777");
    ck_assert_uint_lt(at + n, end);

    memcpy(im.b + at, rec, n);              /* claims all before it ... */
    im.b[at + 5] ^= 0x10;                   /* ... but its CRC is wrong */
    ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);

    memcpy(im.b + at, rec, n);
    im.b[at + n - 12] = 200;                /* age 200, the CRC made good */
    jrec_reframe(im.b + at, 0);
    ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);

    memcpy(im.b + at, rec, n);
    jrec_reframe(im.b + at, (uint32_t)(at - 10));   /* into the header */
    ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);

    memcpy(im.b + at, rec, n);              /* a real one: it is found */
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.witness, at);
    ck_assert_uint_eq(r.witness_upto, at);

    /* Among the records themselves, an impossible claim (into the header:
     * every file is durable up to its end) makes a bad record. */
    three_rounds(&im, JREC_VERSION, st);
    jrec_reframe(im.b + st[1], (uint32_t)(st[1] - 10));
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.bad_offset, st[1]);
}
END_TEST

/* jrec_witness itself: the first record after bad whose claim covers it,
 * found through garbage at any offset; the whole records met counted. */
START_TEST(test_recovery_witness_search)
{
    struct img im;
    size_t upto, whole;

    img_init(&im, JREC_VERSION);
    img_round(&im, 1, 3);
    img_sync(&im);
    size_t bad = img_round(&im, 4, 2);      /* claims up to bad */
    size_t after = img_round(&im, 6, 4);    /* so do these */
    ck_assert_uint_eq(jrec_witness(im.b, im.len, bad, &upto, &whole), 0);
    ck_assert_uint_eq(whole, 5);            /* bad's second, then four */
    ck_assert_uint_eq(upto, 0);
    img_sync(&im);
    memset(im.b + im.len, 0xa5, 7);         /* garbage, then a claim */
    im.len += 7;
    size_t w = img_add(&im, 50);
    ck_assert_uint_eq(jrec_witness(im.b, im.len, bad, &upto, &whole), w);
    ck_assert_uint_eq(upto, w - 7);
    ck_assert_uint_eq(jrec_witness(im.b, im.len, after, &upto, &whole), w);
    ck_assert_uint_eq(jrec_witness(im.b, w, bad, &upto, &whole), 0);
}
END_TEST

/* A MARK is a claim alone: never passed to the callback, not a record of
 * a version 1 file. The scan reports how far claims reach and where the
 * last mutation ends (whether a MARK is due at close). */
START_TEST(test_recovery_mark)
{
    struct img im;
    struct jscan r;

    img_init(&im, JREC_VERSION);
    img_round(&im, 1, 3);
    ck_assert_int_eq(scan(&im, &r), JSCAN_CLEAN);
    ck_assert_uint_eq(r.data_end, im.len);
    ck_assert_uint_eq(r.attested, JREC_HEADER_LEN); /* nothing synced */
    img_sync(&im);
    size_t mark = img_mark(&im);
    ck_assert_int_eq(scan(&im, &r), JSCAN_CLEAN);
    ck_assert_uint_eq(r.records, 3);
    ck_assert_uint_eq(r.good_end, im.len);
    ck_assert_uint_eq(r.data_end, mark);
    ck_assert_uint_eq(r.attested, mark);    /* no MARK due */

    img_init(&im, JREC_VERSION_V1);
    img_round(&im, 1, 2);
    size_t at = img_mark(&im);          /* its claim: an impossible length */
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.bad_offset, at);
}
END_TEST

/* Version 1 is read as before: records claim nothing, so a bad record
 * with anything but zeros after it is damage, a bad last one a torn tail;
 * a version 2 record is not one of its records. */
START_TEST(test_recovery_v1_rule)
{
    struct img im;
    size_t st[3];
    struct jscan r;

    three_rounds(&im, JREC_VERSION_V1, st);
    ck_assert_int_eq(scan(&im, &r), JSCAN_CLEAN);
    ck_assert_uint_eq(r.version, JREC_VERSION_V1);
    ck_assert_uint_eq(r.records, 36);
    memset(im.b + st[2], 0, block_after(st[2]) - st[2]);
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);     /* cannot tell */
    ck_assert_uint_eq(r.bad_offset, st[2]);
    ck_assert_uint_eq(r.witness, 0);

    three_rounds(&im, JREC_VERSION_V1, st);
    im.len -= 3;
    ck_assert_int_eq(scan(&im, &r), JSCAN_TORN);

    img_init(&im, JREC_VERSION_V1);
    img_round(&im, 1, 2);
    im.v = JREC_VERSION;
    img_sync(&im);
    size_t at = img_add(&im, 3);    /* back 0: v1's length word, v2's CRC */
    img_add(&im, 4);                /* a claim: the high bits set */
    ck_assert_int_eq(scan(&im, &r), JSCAN_DAMAGED);
    ck_assert_uint_eq(r.bad_offset, at);
}
END_TEST

/* A file no longer than a header holding a header's beginning (of either
 * version), or zeros, was cut while it was created: start empty. Any
 * other short file is foreign. */
START_TEST(test_recovery_header_cut)
{
    unsigned char h[JREC_HEADER_LEN], z[JREC_HEADER_LEN] = { 0 };
    struct jscan r;
    int n = 0;

    for (uint32_t v = JREC_VERSION_V1; v <= JREC_VERSION; v++) {
        jrec_header_write_version(h, v);
        for (size_t len = 0; len < JREC_HEADER_LEN; len++) {
            ck_assert_int_eq(jrec_header_check(h, len), -ENODATA);
            ck_assert_int_eq(jrec_scan(h, len, count_cb, &n, &r),
                             JSCAN_HEADER_CUT);
        }
        ck_assert_int_eq(jrec_header_check(h, sizeof(h)), (int)v);
        ck_assert_int_eq(jrec_scan(h, sizeof(h), count_cb, &n, &r),
                         JSCAN_CLEAN);
        ck_assert_uint_eq(r.version, v);
        h[13] ^= 1;                         /* a bad CRC byte */
        ck_assert_int_eq(jrec_header_check(h, 14), -EPROTO);
        ck_assert_int_eq(jrec_header_check(h, sizeof(h)), -EPROTO);
    }
    for (size_t len = 1; len <= JREC_HEADER_LEN; len++)
        ck_assert_int_eq(jrec_scan(z, len, count_cb, &n, &r),
                         JSCAN_HEADER_CUT);
    ck_assert_int_eq(jrec_header_check("SSNJOURX", 8), -EPROTO);
    ck_assert_int_eq(jrec_header_check("chapter\n", 8), -EPROTO);
    jrec_header_write_version(h, 3);
    ck_assert_int_eq(jrec_header_check(h, 12), -EPROTO);
    ck_assert_int_eq(jrec_header_check(h, sizeof(h)), -ENOTSUP);
    ck_assert_int_eq(n, 0);
}
END_TEST

/* The claim: a distance that fits 24 bits, else none; carried by the
 * record, checked by its CRC; jrec_reframe turns a version 1 record into
 * a version 2 one, jrec_reframe_all a buffer of them. */
START_TEST(test_recovery_claims)
{
    unsigned char rec[JREC_MAX];
    struct jrec e;
    size_t claimed;

    ck_assert_uint_eq(jrec_back(100, 100), 0);
    ck_assert_uint_eq(jrec_back(100, 16), 84);
    ck_assert_uint_eq(jrec_back(16 + JREC_BACK_MAX, 16), JREC_BACK_MAX);
    ck_assert_uint_eq(jrec_back(17 + JREC_BACK_MAX, 16), JREC_BACK_NONE);
    ck_assert_uint_eq(jrec_back(16, 100), JREC_BACK_NONE);

    size_t n = jrec_encode(rec, JREC_VERSION, 4242, STORE_DELETE, "A", "B",
                           0, NULL);
    ck_assert_int_eq(jrec_decode(rec, n, JREC_VERSION, &e, &claimed),
                     (ssize_t)n);
    ck_assert_uint_eq(e.back, 4242);
    ck_assert_int_eq(e.kind, JREC_OP_DELETE);
    rec[1] ^= 1;                            /* the claim is under the CRC */
    ck_assert_int_eq(jrec_decode(rec, n, JREC_VERSION, &e, &claimed),
                     -EBADMSG);

    n = jrec_encode(rec, JREC_VERSION_V1, 4242, STORE_DELETE, "A", "B", 0,
                    NULL);
    ck_assert_int_eq(jrec_decode(rec, n, JREC_VERSION_V1, &e, &claimed),
                     (ssize_t)n);
    ck_assert_uint_eq(e.back, JREC_BACK_NONE);
    ck_assert_int_eq(jrec_decode(rec, n, JREC_VERSION, &e, &claimed),
                     -EBADMSG);
    jrec_reframe(rec, 7);
    ck_assert_int_eq(jrec_decode(rec, n, JREC_VERSION, &e, &claimed),
                     (ssize_t)n);
    ck_assert_uint_eq(e.back, 7);
    ck_assert_str_eq(e.p.first, "A");

    /* Records of an old file's buffer, made a new file's: each claims
     * what that file is durable up to, from where it will lie. */
    struct img im;
    img_init(&im, JREC_VERSION_V1);
    size_t first = img_round(&im, 1, 3), second = first + jrec_add_len(2, 8);
    jrec_reframe_all(im.b + first, im.len - first, 1000, 900);
    ck_assert_int_eq(jrec_decode(im.b + second, im.len - second,
                                 JREC_VERSION, &e, &claimed),
                     (ssize_t)jrec_add_len(2, 8));
    ck_assert_uint_eq(e.back, 1000 + (second - first) - 900);
    ck_assert_str_eq(e.p.first, "P2");

    ck_assert_uint_eq(jrec_encode_mark(rec, 0), JREC_MARK_LEN);
    ck_assert_int_eq(jrec_decode(rec, JREC_MARK_LEN, JREC_VERSION, &e,
                                 &claimed), JREC_MARK_LEN);
    ck_assert_int_eq(e.kind, JREC_OP_MARK);
}
END_TEST

/* ---- on a real file ------------------------------------------------------ */

static struct store st;

static struct journal *open_j(enum journal_fsync pol)
{
    char err[512];

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    struct journal *j = journal_open(path, pol, 0, &st, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    return j;
}

static void close_j(struct journal *j)
{
    journal_close(j);
    store_destroy(&st);
}

/* n ADDs from person k on under one hold of the store lock, then one wait:
 * one round. Returns the last one's sequence number. */
static uint64_t add_round(int k, int n)
{
    char first[16];
    uint64_t seq = 0;

    store_lock(&st);
    for (int i = 0; i < n; i++) {
        snprintf(first, sizeof(first), "Q%d", k + i);
        struct store_mutation m = {
            .op = STORE_ADD,
            .entry = entry_new("Round", 5, first, strlen(first),
                               entry_ssn_pack("123-45-6789"), 33),
        };
        ck_assert_ptr_nonnull(m.entry);
        ck_assert_int_eq(store_apply_locked(&st, &m), 0);
        seq = m.seq;
    }
    store_unlock(&st);
    return seq;
}

/* The file's header is this format's. */
static void assert_header_v2(void)
{
    unsigned char h[JREC_HEADER_LEN], want[JREC_HEADER_LEN];

    ck_assert_uint_ge(read_file(h, sizeof(h)), sizeof(h));
    jrec_header_write(want);
    ck_assert_int_eq(memcmp(h, want, sizeof(h)), 0);
}

/* A header cut at 8 bytes, or 16 zeros: the journal opens empty and the
 * header is written again; what is appended then replays. */
START_TEST(test_recovery_file_header_cut)
{
    unsigned char h[JREC_HEADER_LEN] = { 0 };

    for (int zeros = 0; zeros <= 1; zeros++) {
        if (!zeros)
            jrec_header_write(h);
        write_file(h, zeros ? sizeof(h) : 8);
        struct journal *j = open_j(JOURNAL_FSYNC_ALWAYS);
        ck_assert_uint_eq(count(&st), 0);
        assert_header_v2();
        ck_assert_int_eq(apply(&st, STORE_ADD, "After", "Cut"), 0);
        close_j(j);
        j = open_j(JOURNAL_FSYNC_ALWAYS);
        ck_assert_uint_eq(count(&st), 1);
        close_j(j);
    }
}
END_TEST

/* A version 1 journal: replayed, appended to in version 1 (no MARK at
 * close), until a compaction rewrites it as version 2, records appended
 * while the compaction runs included. */
START_TEST(test_recovery_file_v1_compacts_to_v2)
{
    static unsigned char buf[1 << 16];
    struct img im;
    struct jscan r;
    char why[128];
    int n;

    img_init(&im, JREC_VERSION_V1);
    img_round(&im, 1, 2);
    write_file(im.b, im.len);
    struct journal *j = open_j(JOURNAL_FSYNC_ALWAYS);
    ck_assert_uint_eq(count(&st), 2);
    ck_assert_int_eq(apply(&st, STORE_ADD, "Third", "One"), 0);
    close_j(j);
    size_t len = read_file(buf, sizeof(buf));
    ck_assert_uint_eq(len, im.len + jrec_add_len(5, 3));    /* no MARK */
    n = 0;
    ck_assert_int_eq(jrec_scan(buf, len, count_cb, &n, &r), JSCAN_CLEAN);
    ck_assert_uint_eq(r.version, JREC_VERSION_V1);
    ck_assert_int_eq(n, 3);

    j = open_j(JOURNAL_FSYNC_ALWAYS);
    uint64_t gen = 0;
    store_lock(&st);
    ck_assert_int_eq(journal_compact_start_locked(j, &gen), 0);
    store_unlock(&st);
    uint64_t seq = add_round(100, 20);      /* during the compaction */
    ck_assert_int_eq(journal_wait(j, seq), 0);
    ck_assert_int_eq(journal_compact_wait(j, gen, why, sizeof(why)), 0);
    ck_assert_int_eq(apply(&st, STORE_ADD, "After", "Compact"), 0);
    close_j(j);
    len = read_file(buf, sizeof(buf));
    n = 0;
    ck_assert_int_eq(jrec_scan(buf, len, count_cb, &n, &r), JSCAN_CLEAN);
    ck_assert_uint_eq(r.version, JREC_VERSION);
    ck_assert_int_eq(n, 24);
    ck_assert_uint_eq(r.attested, r.data_end);      /* the close's MARK */
    j = open_j(JOURNAL_FSYNC_ALWAYS);
    ck_assert_uint_eq(count(&st), 24);
    close_j(j);
}
END_TEST

/* The journal's own rounds (--fsync always): two synced, then one of 30
 * records; the file as kill -9 would leave it, read before the close.
 * The third round's first block lost: the journal opens with the first
 * two. A byte of the first round flipped instead: refused, the second
 * round's record named. */
START_TEST(test_recovery_file_torn_round)
{
    static unsigned char img[1 << 17], torn[1 << 17];
    char err[512];

    struct journal *j = open_j(JOURNAL_FSYNC_ALWAYS);
    ck_assert_int_eq(apply(&st, STORE_ADD, "One", "Round"), 0);
    ck_assert_int_eq(apply(&st, STORE_ADD, "Two", "Round"), 0);
    struct journal_figures f;
    journal_figures(j, &f);
    size_t r3 = f.size;
    ck_assert_int_eq(journal_wait(j, add_round(1, 30)), 0);
    size_t len = read_file(img, sizeof(img));
    close_j(j);

    memcpy(torn, img, len);
    memset(torn + r3, 0, block_after(r3) - r3);
    write_file(torn, len);
    j = open_j(JOURNAL_FSYNC_ALWAYS);
    ck_assert_uint_eq(count(&st), 2);
    close_j(j);

    /* The same file, round 3 whole, round 1's first record damaged. */
    img[JREC_HEADER_LEN + JREC_FRAME_LEN + 2] ^= 0x20;  /* "One" */
    write_file(img, len);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    ck_assert_ptr_null(journal_open(path, JOURNAL_FSYNC_ALWAYS, 0, &st, err,
                                    sizeof(err)));
    ck_assert_msg(strstr(err, "damaged record at byte 16 ") &&
                  strstr(err, "had been durable") &&
                  strstr(err, "--journal-truncate"), "%s", err);
    store_destroy(&st);
}
END_TEST

/* A sync that takes 200 ms: a round stays in flight that long. */
static int slow_sync(int fd)
{
    usleep(200 * 1000);
    return fdatasync(fd);
}

static void *apply_one(void *arg)
{
    (void)arg;
    ck_assert_int_eq(apply(&st, STORE_ADD, "Slow", "Round"), 0);
    return NULL;
}

/* Group commit: a record appended while the round before it is being
 * synced claims only what was synced before that round; the first record
 * of each round is made, when the round is taken, to claim the round
 * before it. */
START_TEST(test_recovery_file_round_claims_round_before)
{
    static unsigned char img[1 << 17];
    struct jrec e;
    size_t claimed;
    pthread_t t;

    struct journal *j = open_j(JOURNAL_FSYNC_ALWAYS);
    journal_sync_fn = slow_sync;
    ck_assert_int_eq(pthread_create(&t, NULL, apply_one, NULL), 0);
    usleep(50 * 1000);                  /* round 1 is being synced */
    uint64_t seq = add_round(1, 1);     /* claims only the header */
    pthread_join(t, NULL);
    ck_assert_int_eq(journal_wait(j, seq), 0);      /* round 2 */
    journal_sync_fn = fdatasync;
    size_t len = read_file(img, sizeof(img));
    close_j(j);

    size_t second = JREC_HEADER_LEN + jrec_add_len(4, 5);  /* Slow Round */
    ck_assert_uint_gt(len, second + JREC_FRAME_LEN);
    ck_assert_int_gt(jrec_decode(img + second, len - second, JREC_VERSION,
                                 &e, &claimed), 0);
    ck_assert_str_eq(e.p.first, "Q1");
    ck_assert_uint_eq(e.back, 0);       /* all of round 1 before it */
}
END_TEST

static Suite *journal_recovery_suite(void)
{
    Suite *s = suite_create("journal_recovery");
    TCase *rule = tcase_create("rule");
    TCase *file = tcase_create("file");

    tcase_add_test(rule, test_recovery_torn_round_cut);
    tcase_add_test(rule, test_recovery_damage_durable_refused);
    tcase_add_test(rule, test_recovery_unsynced_rounds_cut);
    tcase_add_test(rule, test_recovery_no_false_witness);
    tcase_add_test(rule, test_recovery_witness_search);
    tcase_add_test(rule, test_recovery_mark);
    tcase_add_test(rule, test_recovery_v1_rule);
    tcase_add_test(rule, test_recovery_header_cut);
    tcase_add_test(rule, test_recovery_claims);
    suite_add_tcase(s, rule);
    tcase_add_checked_fixture(file, file_setup, file_teardown);
    tcase_add_test(file, test_recovery_file_header_cut);
    tcase_add_test(file, test_recovery_file_v1_compacts_to_v2);
    tcase_add_test(file, test_recovery_file_torn_round);
    tcase_add_test(file, test_recovery_file_round_claims_round_before);
    suite_add_tcase(s, file);
    return s;
}
SUITE_REGISTER(journal_recovery_suite)
