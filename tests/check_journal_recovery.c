/* check_journal_recovery.c -- the recovery rule of the journal's format 2
 * (server/journal/journal_rec.c): each record claims how far the file was
 * durable when it was appended, and a bad record is damage only when a
 * record after it claims its bytes durable (jrec_witness); otherwise it
 * is the last, unsynced writes a crash left unfinished or out of order,
 * and is cut. On images built round by round (jrectest.h): a torn last
 * round (zeros or garbage where its first block should be) is cut; damage
 * before a later round's claim is refused, with the record that proves it;
 * rounds written but never synced (everysec) are cut together; records
 * found by chance in garbage, or whose claim is impossible, prove nothing;
 * a MARK; version 1 keeps its rule; a header cut short starts empty. The
 * same rule on real files through journal_open is
 * check_journal_recovery_file.c's.
 */
#include <errno.h>
#include <string.h>
#include "suites.h"
#include "../server/journal/journal_rec.h"
#include "../server/store.h"
#include "jrectest.h"

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

static Suite *journal_recovery_suite(void)
{
    Suite *s = suite_create("journal_recovery");
    TCase *rule = tcase_create("rule");

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
    return s;
}
SUITE_REGISTER(journal_recovery_suite)
