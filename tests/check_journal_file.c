/* check_journal_file.c -- the journal's file over its life: the zeros
 * reserved ahead (server/journal/journal.c), cut at a clean close and after a
 * crash, with both wake-ups in every policy; and COMPACT's core
 * (server/journal/journal_compact.c): the journal becomes one ADD per live person,
 * exactly the live size, and appends go on into the new file; a new file
 * that cannot be synced leaves the old journal in place, writable, and no
 * file behind; the automatic compaction is only said due by an append,
 * and started by its caller out of the store. The crash points are tests/test-journal-compact.sh's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "../server/journal/journal.h"
#include "../server/journal/journal_rec.h"
#include "../server/lockmode.h"
#include "../server/store.h"
#include "journaltest.h"

/* Space is reserved ahead past the last record, reading as zeros (the
 * file grows while open, by up to a chunk); a clean close cuts it off; the image a crash would
 * leave (records, then zeros) replays whole, and the zeros are cut. Both
 * wake-ups, in every policy. */
START_TEST(test_journal_reserved_zeros)
{
    const struct lock_policy *p = &lock_policies[LOCK_MODE_BUFFERED];
    static unsigned char img[2 << 20];  /* the header, records, a chunk */
    struct store st;
    char err[512];

    for (int pol = JOURNAL_FSYNC_ALWAYS; pol <= JOURNAL_FSYNC_NO; pol++) {
        unlink(path);
        ck_assert_int_eq(store_init(&st, p), 0);
        struct journal *j = journal_open(path, pol, 0, &st, err, sizeof(err));
        ck_assert_msg(j != NULL, "%s", err);
        journal_set_wake(j, (enum journal_wake)_i);
        ck_assert_int_eq(apply(&st, STORE_ADD, "John", "Smith"), 0);
        ck_assert_int_eq(apply(&st, STORE_ADD, "Jane", "Doe"), 0);
        struct journal_figures f;
        journal_figures(j, &f);
        ck_assert_int_eq(f.wake, _i);
        size_t end = JREC_HEADER_LEN + f.bytes;
        size_t len = read_file(img, sizeof(img));
        ck_assert_uint_gt(len, end + 4096);     /* reserved ahead */
        ck_assert_uint_lt(len, sizeof(img));    /* all of it read */
        size_t k = end;
        while (k < len && img[k] == 0)
            k++;
        ck_assert_uint_eq(k, len);              /* zeros to the end */
        journal_close(j);
        /* cut at close, after the MARK that claims the records durable */
        ck_assert_int_eq(file_size(), (off_t)(end + JREC_MARK_LEN));
        store_destroy(&st);

        write_file(img, len);                   /* as kill -9 leaves it */
        ck_assert_int_eq(store_init(&st, p), 0);
        j = journal_open(path, pol, 0, &st, err, sizeof(err));
        ck_assert_msg(j != NULL, "%s", err);
        ck_assert_uint_eq(count(&st), 2);
        ck_assert_int_eq(apply(&st, STORE_DELETE, "John", "Smith"), 0);
        journal_close(j);
        ck_assert_uint_gt(file_size(), (off_t)end);
        store_destroy(&st);

        ck_assert_int_eq(store_init(&st, p), 0);
        j = journal_open(path, pol, 0, &st, err, sizeof(err));
        ck_assert_msg(j != NULL, "%s", err);
        ck_assert_uint_eq(count(&st), 1);
        journal_close(j);
        store_destroy(&st);
    }
}
END_TEST

/* COMPACT as commands.c runs it: the snapshot under the store lock, the
 * wait outside it. */
static int compact(struct store *st, char *why, size_t len)
{
    uint64_t gen = 0;

    store_lock(st);
    int rc = journal_compact_start_locked(st->journal, &gen);
    store_unlock(st);
    return rc ? rc : journal_compact_wait(st->journal, gen, why, len);
}

static void add_and_delete(struct store *st, int adds, int deletes)
{
    char first[16];

    for (int i = 0; i < adds; i++) {
        snprintf(first, sizeof(first), "p%d", i);
        ck_assert_int_eq(apply(st, STORE_ADD, first, "Compact"), 0);
    }
    for (int i = 0; i < deletes; i++) {
        snprintf(first, sizeof(first), "p%d", i);
        ck_assert_int_eq(apply(st, STORE_DELETE, first, "Compact"), 0);
    }
}

/* The journal becomes one ADD per live person, the file exactly the live
 * size; appends go on into the new file, and a reopen finds them all. */
START_TEST(test_journal_compact_live_set)
{
    struct store st;
    char err[512], why[128];
    struct journal_figures f;

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_ALWAYS, 0, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    add_and_delete(&st, 50, 40);
    journal_figures(j, &f);
    uint64_t before = f.size;           /* as written, zeros ahead not */
    ck_assert_int_eq(compact(&st, why, sizeof(why)), 0);
    journal_figures(j, &f);
    ck_assert_uint_eq(f.compactions, 1);
    ck_assert_int_eq(f.compacting, 0);
    ck_assert_uint_eq(f.size, f.live_bytes);
    /* 10 records of "p4x Compact": 23 + 3 + 7 bytes each, and the header */
    ck_assert_uint_eq(f.size, JREC_HEADER_LEN + 10 * (23 + 3 + 7));
    /* the new file too holds zeros reserved ahead past its records */
    ck_assert_int_gt(file_size(), (off_t)f.size);
    ck_assert_uint_lt(f.size, before);
    ck_assert_int_eq(apply(&st, STORE_ADD, "After", "Compact"), 0);
    ck_assert_int_eq(apply(&st, STORE_DELETE, "p45", "Compact"), 0);
    journal_close(j);
    store_destroy(&st);

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    j = journal_open(path, JOURNAL_FSYNC_ALWAYS, 0, &st, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st), 10);
    ck_assert_int_eq(apply(&st, STORE_ADD, "p45", "Compact"), 0);
    ck_assert_int_eq(apply(&st, STORE_ADD, "After", "Compact"), -EEXIST);
    journal_close(j);
    store_destroy(&st);
}
END_TEST

/* A compaction whose new file cannot be synced: it fails with the reason,
 * leaves no file behind, and the old journal stays the journal, writable
 * (--fsync no: only the compaction syncs). */
START_TEST(test_journal_compact_failure_keeps_old)
{
    struct store st;
    char err[512], why[128], leftover[80];
    struct journal_figures f;

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_BUFFERED]), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    add_and_delete(&st, 30, 20);
    journal_sync_fn = sync_fails;
    ck_assert_int_eq(compact(&st, why, sizeof(why)), -EIO);
    journal_sync_fn = fdatasync;
    ck_assert_str_eq(why, "cannot sync the new file: Input/output error");
    snprintf(leftover, sizeof(leftover), "%s.compact", path);
    ck_assert_int_ne(access(leftover, F_OK), 0);
    journal_figures(j, &f);
    ck_assert_uint_eq(f.compactions, 0);
    ck_assert_int_eq(f.readonly, 0);
    ck_assert_int_eq(apply(&st, STORE_ADD, "After", "Failure"), 0);
    journal_close(j);
    store_destroy(&st);

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_BUFFERED]), 0);
    j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st), 11);
    journal_close(j);
    store_destroy(&st);
}
END_TEST

/* One ADD and one DELETE of the same person, under the store lock as
 * commands.c applies them; 1 when either said the automatic compaction
 * is due (store_mutation.compact_due). */
static int churn_one(struct store *st, int i)
{
    char first[16];

    snprintf(first, sizeof(first), "a%d", i);
    struct store_mutation add = {
        .op = STORE_ADD,
        .entry = entry_new("Auto", 4, first, strlen(first),
                           entry_ssn_pack("123-45-6789"), 33),
    };
    struct store_mutation del = {
        .op = STORE_DELETE, .key = { .first = first, .last = "Auto" },
    };
    ck_assert_ptr_nonnull(add.entry);
    store_lock(st);
    ck_assert_int_eq(store_apply_locked(st, &add), 0);
    ck_assert_int_eq(store_apply_locked(st, &del), 0);
    store_unlock(st);
    entry_free(del.removed);
    return add.compact_due || del.compact_due;
}

/* Churns until an append says the compaction is due; returns how many
 * rounds that took. */
static int churn_until_due(struct store *st, int *next)
{
    for (int n = 1; n <= 1000; n++)
        if (churn_one(st, (*next)++))
            return n;
    ck_abort_msg("the automatic compaction never came due");
    return 0;
}

/* The automatic compaction: an append past twice the live size only says
 * it is due; nothing starts under the store lock, and it goes on saying
 * so until the caller, out of the store, starts it (commands.c's
 * cmd_compact_auto). The journal's one compactor thread then runs one
 * compaction after another. */
START_TEST(test_journal_compact_auto_due)
{
    struct store st;
    char err[512], why[128];
    struct journal_figures f;
    int next = 0;

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    journal_set_compact_min(j, 1024);
    ck_assert_int_eq(apply(&st, STORE_ADD, "Keep", "Auto"), 0);
    for (int round = 1; round <= 3; round++) {
        churn_until_due(&st, &next);
        journal_figures(j, &f);
        ck_assert_int_eq(f.compacting, 0);      /* said, not started */
        ck_assert_int_eq(churn_until_due(&st, &next), 1);   /* still due */
        ck_assert_int_eq(compact(&st, why, sizeof(why)), 0);
        journal_figures(j, &f);
        ck_assert_uint_eq(f.compactions, (uint64_t)round);
        ck_assert_uint_eq(f.size, f.live_bytes);
        ck_assert_int_eq(churn_one(&st, next++), 0);    /* not due now */
    }
    journal_close(j);
    store_destroy(&st);

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st), 1);
    journal_close(j);
    store_destroy(&st);
}
END_TEST

/* One server per journal: a second open of a journal in use fails with
 * one line naming the file, and so after each of two compactions replaced
 * the file; once the first is closed it opens and finds everything. (The
 * owner is this process, whose PID is not looked for: "another server".)
 * A second open that fails leaves its store empty. */
START_TEST(test_journal_one_owner)
{
    struct store st, st2;
    char err[512], why[128], want[128];

    snprintf(want, sizeof(want), "%s is in use by another server (one "
             "journal, one server)", path);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    ck_assert_int_eq(store_init(&st2, &lock_policies[LOCK_MODE_FINE]), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_ALWAYS, 0, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    add_and_delete(&st, 20, 10);
    for (int round = 0; round < 3; round++) {
        ck_assert_ptr_null(journal_open(path, JOURNAL_FSYNC_ALWAYS, 0, &st2,
                                        err, sizeof(err)));
        ck_assert_str_eq(err, want);
        ck_assert_uint_eq(count(&st2), 0);
        if (round < 2)
            ck_assert_int_eq(compact(&st, why, sizeof(why)), 0);
    }
    journal_close(j);
    store_destroy(&st);

    j = journal_open(path, JOURNAL_FSYNC_ALWAYS, 0, &st2, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st2), 10);
    journal_close(j);
    store_destroy(&st2);
}
END_TEST

/* A journal that group or others have access to is refused, with the
 * chmod that fixes it, and left as it was; after the chmod it opens. */
START_TEST(test_journal_mode_refused)
{
    struct store st;
    char err[512], want[256];

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0600);      /* made private */
    ck_assert_int_eq(apply(&st, STORE_ADD, "Mode", "Check"), 0);
    journal_close(j);
    store_destroy(&st);

    off_t size = file_size();
    ck_assert_int_eq(chmod(path, 0640), 0);
    snprintf(want, sizeof(want), "permissions 0640 for %s are too open: "
             "group or others have access, and a journal holds SSNs; fix "
             "it with: chmod 600 %s", path, path);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
    ck_assert_ptr_null(journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err,
                                    sizeof(err)));
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(file_size(), size);
    ck_assert_int_eq(chmod(path, 0600), 0);
    j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st), 1);
    journal_close(j);
    store_destroy(&st);
}
END_TEST

static Suite *journal_file_suite(void)
{
    Suite *s = suite_create("journal_file");
    TCase *tc = tcase_create("file");

    tcase_add_checked_fixture(tc, file_setup, file_teardown);
    tcase_add_loop_test(tc, test_journal_reserved_zeros,
                        JOURNAL_WAKE_BROADCAST, JOURNAL_WAKE_SIGNAL + 1);
    tcase_add_test(tc, test_journal_compact_live_set);
    tcase_add_test(tc, test_journal_compact_failure_keeps_old);
    tcase_add_test(tc, test_journal_compact_auto_due);
    tcase_add_test(tc, test_journal_one_owner);
    tcase_add_test(tc, test_journal_mode_refused);
    suite_add_tcase(s, tc);
    return s;
}
SUITE_REGISTER(journal_file_suite)
