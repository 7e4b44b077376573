/* check_journal.c -- the journal's records and its recovery rules
 * (server/journal/journal_rec.c), and the journal itself on a real file
 * (server/journal/journal.c): a round trip of every field, every truncation point
 * of a record, a bad checksum at the tail and in the middle, a zero-filled
 * tail (the space reserved ahead) and a torn record inside it, a foreign
 * file, a record that contradicts the store; then append, close, reopen and
 * replay; refusal of a damaged journal, and --journal-truncate. A failing
 * sync is check_journal_faults.c's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "suites.h"
#include "crc32c.h"
#include "../server/journal/journal.h"
#include "../server/journal/journal_rec.h"
#include "../server/lockmode.h"
#include "../server/store.h"
#include "sessiontest.h"
#include "journaltest.h"

/* ---- records ------------------------------------------------------------ */

/* An image of the given version: header and three records (ADD, ADD,
 * DELETE), each a round of its own, synced before the next was appended
 * (so in version 2 each claims all before it); ends[i] is the offset
 * after record i. */
struct image {
    unsigned char buf[JREC_HEADER_LEN + 3 * JREC_MAX];
    size_t len, ends[3];
};

static void make_image_version(struct image *im, uint32_t v)
{
    jrec_header_write_version(im->buf, v);
    im->len = JREC_HEADER_LEN;
    im->len += jrec_encode(im->buf + im->len, v, 0, STORE_ADD, "John",
                           "Smith", 30, "123-45-6789");
    im->ends[0] = im->len;
    im->len += jrec_encode(im->buf + im->len, v, 0, STORE_ADD, "Jane", "Doe",
                           150, "111-22-3333");
    im->ends[1] = im->len;
    im->len += jrec_encode(im->buf + im->len, v, 0, STORE_DELETE, "John",
                           "Smith", 0, NULL);
    im->ends[2] = im->len;
}

static void make_image(struct image *im)
{
    make_image_version(im, JREC_VERSION);
}

struct seen {
    int n;
    enum store_op op[8];
    struct person e[8];
    int refuse_at;              /* the callback refuses this record (1-based) */
};

static int collect(enum store_op op, const struct person *e, void *arg)
{
    struct seen *s = arg;

    if (s->refuse_at && s->n + 1 == s->refuse_at)
        return -EEXIST;
    s->op[s->n] = op;
    s->e[s->n] = *e;
    s->n++;
    return 0;
}

START_TEST(test_journal_record_round_trip)
{
    struct image im;
    struct seen s = { .n = 0 };
    struct jscan r;

    make_image(&im);
    ck_assert_int_eq(jrec_scan(im.buf, im.len, collect, &s, &r), JSCAN_CLEAN);
    ck_assert_int_eq(s.n, 3);
    ck_assert_uint_eq(r.records, 3);
    ck_assert_uint_eq(r.adds, 2);
    ck_assert_uint_eq(r.deletes, 1);
    ck_assert_uint_eq(r.good_end, im.len);
    ck_assert_int_eq(s.op[0], STORE_ADD);
    ck_assert_str_eq(s.e[0].first, "John");
    ck_assert_str_eq(s.e[0].last, "Smith");
    ck_assert_int_eq(s.e[0].age, 30);
    ck_assert_str_eq(s.e[0].ssn, "123-45-6789");
    ck_assert_int_eq(s.e[1].age, 150);
    ck_assert_int_eq(s.op[2], STORE_DELETE);
    ck_assert_str_eq(s.e[2].last, "Smith");
}
END_TEST

START_TEST(test_journal_record_longest)
{
    char name[ENTRY_NAME_MAX + 1];
    unsigned char buf[JREC_MAX];
    struct jrec e;
    size_t claimed;

    memset(name, 'x', ENTRY_NAME_MAX);
    name[ENTRY_NAME_MAX] = '\0';
    for (uint32_t v = JREC_VERSION_V1; v <= JREC_VERSION; v++) {
        size_t n = jrec_encode(buf, v, JREC_BACK_MAX, STORE_ADD, name, name,
                               7, "999-99-9999");
        ck_assert_uint_eq(n, JREC_MAX);
        ck_assert_int_eq(jrec_decode(buf, n, v, &e, &claimed), (ssize_t)n);
        ck_assert_str_eq(e.p.first, name);
        ck_assert_uint_eq(e.back, v == JREC_VERSION ? JREC_BACK_MAX
                                                    : JREC_BACK_NONE);
        for (size_t cut = 0; cut < n; cut++)
            ck_assert_int_eq(jrec_decode(buf, cut, v, &e, &claimed), 0);
    }
}
END_TEST

/* Every length the file could have been cut to: whole records are kept,
 * a partial last one is a torn tail cut at the last whole record. */
START_TEST(test_journal_every_truncation_point)
{
    struct image im;

    make_image(&im);
    for (size_t len = JREC_HEADER_LEN; len <= im.len; len++) {
        struct seen s = { .n = 0 };
        struct jscan r;
        size_t whole = 0, end = JREC_HEADER_LEN;
        for (int i = 0; i < 3; i++)
            if (im.ends[i] <= len) {
                whole = (size_t)i + 1;
                end = im.ends[i];
            }
        enum jscan_status st = jrec_scan(im.buf, len, collect, &s, &r);
        ck_assert_int_eq(st, end == len ? JSCAN_CLEAN : JSCAN_TORN);
        ck_assert_uint_eq(r.records, whole);
        ck_assert_int_eq(s.n, (int)whole);
        ck_assert_uint_eq(r.good_end, end);
        if (st == JSCAN_TORN)
            ck_assert_uint_eq(r.bad_offset, end);
    }
}
END_TEST

/* A file shorter than a header that holds a header's beginning was cut
 * while it was created: no record was ever in it (the full set of cases
 * is check_journal_recovery.c's). */
START_TEST(test_journal_short_header_is_cut)
{
    struct image im;
    struct jscan r;
    struct seen s = { .n = 0 };

    make_image(&im);
    for (size_t len = 0; len < JREC_HEADER_LEN; len++)
        ck_assert_int_eq(jrec_scan(im.buf, len, collect, &s, &r),
                         JSCAN_HEADER_CUT);
    im.buf[3] = 'X';
    ck_assert_int_eq(jrec_scan(im.buf, 8, collect, &s, &r), JSCAN_FOREIGN);
    ck_assert_int_eq(s.n, 0);
}
END_TEST

START_TEST(test_journal_bad_crc_last_is_torn)
{
    struct image im;
    struct seen s = { .n = 0 };
    struct jscan r;

    make_image(&im);
    im.buf[im.len - 1] ^= 0x01;             /* in the DELETE's payload */
    ck_assert_int_eq(jrec_scan(im.buf, im.len, collect, &s, &r), JSCAN_TORN);
    ck_assert_uint_eq(r.records, 2);
    ck_assert_uint_eq(r.good_end, im.ends[1]);
    ck_assert_uint_eq(r.bad_offset, im.ends[1]);
}
END_TEST

/* A bad record in the middle, with a good one after it: damage, in both
 * versions (in version 2 because the record after it, appended once it
 * was synced, says so). */
START_TEST(test_journal_bad_crc_middle_is_damage)
{
    struct image im;
    struct seen s = { .n = 0 };
    struct jscan r;

    for (uint32_t v = JREC_VERSION_V1; v <= JREC_VERSION; v++) {
        make_image_version(&im, v);
        im.buf[im.ends[0] + JREC_FRAME_LEN + 3] ^= 0x20;    /* Jane -> jane */
        s.n = 0;
        ck_assert_int_eq(jrec_scan(im.buf, im.len, collect, &s, &r),
                         JSCAN_DAMAGED);
        ck_assert_uint_eq(r.records, 1);
        ck_assert_uint_eq(r.good_end, im.ends[0]);
        ck_assert_uint_eq(r.bad_offset, im.ends[0]);
        ck_assert_uint_eq(r.witness, v == JREC_VERSION ? im.ends[1] : 0);
        /* A broken length in the middle is damage too. */
        make_image_version(&im, v);
        im.buf[im.ends[0]] = 0xff;
        ck_assert_int_eq(jrec_scan(im.buf, im.len, collect, &s, &r),
                         JSCAN_DAMAGED);
    }
}
END_TEST

START_TEST(test_journal_zero_tail_is_torn)
{
    struct image im;
    unsigned char big[sizeof(im.buf) + 100];
    struct seen s = { .n = 0 };
    struct jscan r;

    make_image(&im);
    memset(big, 0, sizeof(big));
    memcpy(big, im.buf, im.len);
    ck_assert_int_eq(jrec_scan(big, im.len + 100, collect, &s, &r),
                     JSCAN_TORN);
    ck_assert_uint_eq(r.records, 3);
    ck_assert_uint_eq(r.good_end, im.len);
    ck_assert_int_eq(r.zero_tail, 1);       /* space reserved ahead */
}
END_TEST

/* The last write cut by a crash inside the zeros reserved ahead: a partial
 * record (its frame whole, its payload's end still zeros) followed by
 * zeros is a torn tail, not damage and not a mere zero tail. Non-zero
 * bytes after it make it damage in version 1; in version 2 only a record
 * that says it had been durable does (check_journal_recovery.c). */
START_TEST(test_journal_torn_record_in_zeros)
{
    struct image im;
    unsigned char big[sizeof(im.buf) + 200];
    struct seen s = { .n = 0 };
    struct jscan r;

    for (uint32_t v = JREC_VERSION_V1; v <= JREC_VERSION; v++) {
        make_image_version(&im, v);
        for (size_t keep = im.ends[1] + 1; keep < im.len; keep++) {
            memset(big, 0, sizeof(big));
            memcpy(big, im.buf, keep);
            s.n = 0;
            ck_assert_int_eq(jrec_scan(big, im.len + 200, collect, &s, &r),
                             JSCAN_TORN);
            ck_assert_uint_eq(r.records, 2);
            ck_assert_uint_eq(r.good_end, im.ends[1]);
            ck_assert_uint_eq(r.bad_offset, im.ends[1]);
            ck_assert_int_eq(r.zero_tail, 0);
        }
        memset(big, 0, sizeof(big));
        memcpy(big, im.buf, im.len - 2);
        big[im.len + 50] = 0x01;            /* data after it */
        s.n = 0;
        ck_assert_int_eq(jrec_scan(big, im.len + 200, collect, &s, &r),
                         v == JREC_VERSION_V1 ? JSCAN_DAMAGED : JSCAN_TORN);
        ck_assert_uint_eq(r.good_end, im.ends[1]);
    }
}
END_TEST

START_TEST(test_journal_wake_names)
{
    ck_assert_int_eq(journal_wake_parse("broadcast"), JOURNAL_WAKE_BROADCAST);
    ck_assert_int_eq(journal_wake_parse("signal"), JOURNAL_WAKE_SIGNAL);
    ck_assert_int_eq(journal_wake_parse("Signal"), -1);
    ck_assert_int_eq(journal_wake_parse(""), -1);
    ck_assert_str_eq(journal_wake_name(JOURNAL_WAKE_BROADCAST), "broadcast");
    ck_assert_str_eq(journal_wake_name(JOURNAL_WAKE_SIGNAL), "signal");
}
END_TEST

START_TEST(test_journal_foreign_and_version)
{
    struct image im;
    struct seen s = { .n = 0 };
    struct jscan r;

    make_image(&im);
    im.buf[0] = 'X';
    ck_assert_int_eq(jrec_scan(im.buf, im.len, collect, &s, &r),
                     JSCAN_FOREIGN);
    ck_assert_int_eq(s.n, 0);
    make_image(&im);
    im.buf[8] = 3;                          /* version 3, CRC still good */
    unsigned char h[JREC_HEADER_LEN];
    memcpy(h, im.buf, sizeof(h));
    uint32_t c = crc32c(h, 12);
    im.buf[12] = (unsigned char)c;
    im.buf[13] = (unsigned char)(c >> 8);
    im.buf[14] = (unsigned char)(c >> 16);
    im.buf[15] = (unsigned char)(c >> 24);
    ck_assert_int_eq(jrec_scan(im.buf, im.len, collect, &s, &r),
                     JSCAN_VERSION);
}
END_TEST

START_TEST(test_journal_callback_refusal_is_damage)
{
    struct image im;
    struct seen s = { .n = 0, .refuse_at = 2 };
    struct jscan r;

    make_image(&im);
    ck_assert_int_eq(jrec_scan(im.buf, im.len, collect, &s, &r),
                     JSCAN_DAMAGED);
    ck_assert_int_eq(r.cb_error, -EEXIST);
    ck_assert_uint_eq(r.bad_offset, im.ends[0]);
    ck_assert_uint_eq(r.records, 1);
}
END_TEST

/* ---- the journal on a file ----------------------------------------------- */

START_TEST(test_journal_append_close_replay)
{
    const struct lock_policy *p = &lock_policies[LOCK_MODE_BUFFERED];
    struct store st;
    char err[512];

    for (int pol = JOURNAL_FSYNC_ALWAYS; pol <= JOURNAL_FSYNC_NO; pol++) {
        unlink(path);
        ck_assert_int_eq(store_init(&st, p), 0);
        struct journal *j = journal_open(path, pol, 0, &st, err, sizeof(err));
        ck_assert_msg(j != NULL, "%s", err);
        ck_assert_int_eq(apply(&st, STORE_ADD, "John", "Smith"), 0);
        ck_assert_int_eq(apply(&st, STORE_ADD, "Jane", "Doe"), 0);
        ck_assert_int_eq(apply(&st, STORE_ADD, "Jane", "Doe"), -EEXIST);
        ck_assert_int_eq(apply(&st, STORE_DELETE, "John", "Smith"), 0);
        ck_assert_int_eq(apply(&st, STORE_DELETE, "John", "Smith"), -ENOENT);
        struct journal_figures f;
        journal_figures(j, &f);
        ck_assert_uint_eq(f.records, 3);
        ck_assert_int_eq(f.readonly, 0);
        if (pol == JOURNAL_FSYNC_ALWAYS)
            ck_assert_uint_ge(f.fsyncs, 1);
        journal_close(j);
        ck_assert_ptr_null(st.journal);
        store_destroy(&st);

        ck_assert_int_eq(store_init(&st, p), 0);
        j = journal_open(path, pol, 0, &st, err, sizeof(err));
        ck_assert_msg(j != NULL, "%s", err);
        ck_assert_uint_eq(count(&st), 1);
        ck_assert_int_eq(apply(&st, STORE_ADD, "Jane", "Doe"), -EEXIST);
        journal_figures(j, &f);
        ck_assert_uint_eq(f.records, 0);        /* replay is not journaled */
        journal_close(j);
        store_destroy(&st);
    }
}
END_TEST

/* Reads the whole file at path. */
START_TEST(test_journal_refuses_foreign_file)
{
    struct store st;
    char err[512];
    const char junk[] = "this is somebody's thesis\n";

    write_file(junk, sizeof(junk) - 1);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    ck_assert_ptr_null(journal_open(path, JOURNAL_FSYNC_NO, 1, &st, err,
                                    sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "not an ssnserver journal"));
    ck_assert_int_eq(file_size(), (off_t)sizeof(junk) - 1);   /* untouched */
    store_destroy(&st);
}
END_TEST

START_TEST(test_journal_torn_tail_cut)
{
    struct image im;
    struct store st;
    char err[512];

    make_image(&im);
    write_file(im.buf, im.len - 3);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st), 2);
    journal_close(j);
    /* cut there, then the MARK of the close */
    ck_assert_int_eq(file_size(), (off_t)(im.ends[1] + JREC_MARK_LEN));
    store_destroy(&st);
}
END_TEST

START_TEST(test_journal_damage_refused_then_truncated)
{
    struct image im;
    struct store st;
    char err[512], want[64];

    make_image(&im);
    im.buf[im.ends[0] + 5] ^= 0x40;         /* the second record's CRC */
    write_file(im.buf, im.len);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    ck_assert_ptr_null(journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err,
                                    sizeof(err)));
    snprintf(want, sizeof(want), "at byte %zu", im.ends[0]);
    ck_assert_msg(strstr(err, want) && strstr(err, "--journal-truncate") &&
                  strstr(err, path), "%s", err);
    ck_assert_int_eq(file_size(), (off_t)im.len);   /* untouched */
    store_destroy(&st);

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_NO, 1, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st), 1);
    journal_close(j);
    ck_assert_int_eq(file_size(), (off_t)(im.ends[0] + JREC_MARK_LEN));
    store_destroy(&st);
}
END_TEST

static Suite *journal_suite(void)
{
    Suite *s = suite_create("journal");
    TCase *rec = tcase_create("records");
    TCase *file = tcase_create("file");

    tcase_add_test(rec, test_journal_record_round_trip);
    tcase_add_test(rec, test_journal_record_longest);
    tcase_add_test(rec, test_journal_every_truncation_point);
    tcase_add_test(rec, test_journal_short_header_is_cut);
    tcase_add_test(rec, test_journal_bad_crc_last_is_torn);
    tcase_add_test(rec, test_journal_bad_crc_middle_is_damage);
    tcase_add_test(rec, test_journal_zero_tail_is_torn);
    tcase_add_test(rec, test_journal_torn_record_in_zeros);
    tcase_add_test(rec, test_journal_wake_names);
    tcase_add_test(rec, test_journal_foreign_and_version);
    tcase_add_test(rec, test_journal_callback_refusal_is_damage);
    suite_add_tcase(s, rec);
    tcase_add_checked_fixture(file, file_setup, file_teardown);
    tcase_add_test(file, test_journal_append_close_replay);
    tcase_add_test(file, test_journal_refuses_foreign_file);
    tcase_add_test(file, test_journal_torn_tail_cut);
    tcase_add_test(file, test_journal_damage_refused_then_truncated);
    suite_add_tcase(s, file);
    return s;
}
SUITE_REGISTER(journal_suite)
