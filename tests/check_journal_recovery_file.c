/* check_journal_recovery_file.c -- the journal's recovery rule (see
 * check_journal_recovery.c) on a real file through journal_open: a header
 * cut at 8 bytes, a version 1 journal that takes version 1 records until a
 * compaction (with appends during it) rewrites it as version 2, a torn
 * round written by the journal's own rounds, and under group commit the
 * first record of a round claiming the round before. Images are built
 * with jrectest.h, the directory and file helpers are journaltest.h's.
 */
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
#include "jrectest.h"

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

static Suite *journal_recovery_file_suite(void)
{
    Suite *s = suite_create("journal_recovery_file");
    TCase *file = tcase_create("file");

    tcase_add_checked_fixture(file, file_setup, file_teardown);
    tcase_add_test(file, test_recovery_file_header_cut);
    tcase_add_test(file, test_recovery_file_v1_compacts_to_v2);
    tcase_add_test(file, test_recovery_file_torn_round);
    tcase_add_test(file, test_recovery_file_round_claims_round_before);
    suite_add_tcase(s, file);
    return s;
}
SUITE_REGISTER(journal_recovery_file_suite)
