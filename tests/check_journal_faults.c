/* check_journal_faults.c -- the journal when a write cannot be made
 * durable (server/journal/journal.c, journal_wait.c): a failing sync with
 * both wake-ups (--journal-wake) leaves the waiting session without a
 * reply and the journal read-only; journal_durable's three answers for a
 * record held back without a wait (the event driver's way), given without
 * journal->lock. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "../server/journal/journal.h"
#include "../server/journal/journal_int.h"
#include "../server/lockmode.h"
#include "../server/store.h"
#include "sessiontest.h"
#include "journaltest.h"

/* --fsync always and a sync that fails: the session waiting for it gets no
 * reply at all and ends (its client must not be told OK); the journal is
 * read-only from then on, and says why to the next writer. */
START_TEST(test_journal_sync_failure_read_only)
{
    char err[512];
    session_start_mode(LOCK_MODE_FINE, 0);
    journal_sync_fn = sync_fails;
    struct journal *j = journal_open(path, JOURNAL_FSYNC_ALWAYS, 0,
                                     &test_store, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    journal_set_wake(j, (enum journal_wake)_i);     /* both wake-ups */
    ck_assert_str_eq(talk("ADD John Smith 30 123-45-6789\n"), "");
    ck_assert_int_eq(sess->ending, 1);
    ck_assert_int_eq(sess->send_error, -EIO);

    struct session *s2 = session_new(&test_store, &capture_io, &cap, 0);
    ck_assert_ptr_nonnull(s2);
    capture_reset();
    session_input(s2, "ADD Jane Doe 40 111-22-3333\nCOUNT\n", 35);
    ck_assert_int_eq(session_flush(s2), 0);
    ck_assert_str_eq(cap.buf, "Error: read-only: journal sync failed: "
                     "Input/output error\n1\n");
    struct journal_figures f;
    journal_figures(j, &f);
    ck_assert_int_eq(f.readonly, 1);
    session_free(s2);
    journal_close(j);
    journal_sync_fn = fdatasync;
    session_stop();
}
END_TEST

/* An appended record held back without a wait (the event driver's way):
 * not durable until a round writes it; with everysec the caller of
 * journal_commit writes it itself; a failed sync (always) makes it never
 * durable: journal_durable's three answers. */
START_TEST(test_journal_durable_answers)
{
    char err[512];
    session_start_mode(LOCK_MODE_FINE, 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_EVERYSEC, 0,
                                     &test_store, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    uint64_t seq = add_nowait(&test_store, "Ann");
    ck_assert_int_eq(journal_durable(j, seq), 0);
    /* Written now, or by the flusher's round under way and the one after
     * it (the flusher looks every 100 ms): seen once in make check. */
    journal_commit(j, seq);
    for (int i = 0; i < 2000 && journal_durable(j, seq) == 0; i++)
        usleep(1000);
    ck_assert_int_eq(journal_durable(j, seq), 1);
    journal_close(j);
    session_stop();

    session_start_mode(LOCK_MODE_FINE, 0);
    journal_sync_fn = sync_fails;
    j = journal_open(path, JOURNAL_FSYNC_ALWAYS, 0, &test_store, err,
                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    seq = add_nowait(&test_store, "Bob");
    ck_assert_int_eq(journal_durable(j, seq), 0);
    journal_commit(j, seq);                 /* the flusher's round fails */
    int rc = 0;
    for (int i = 0; i < 500 && (rc = journal_durable(j, seq)) == 0; i++)
        usleep(10 * 1000);
    ck_assert_int_eq(rc, -EIO);
    journal_close(j);
    journal_sync_fn = fdatasync;
    session_stop();
}
END_TEST

/* journal_durable is asked by an event worker for every held reply: it
 * takes no lock (two atomics), so a holder of journal->lock, which makes
 * system calls, never stalls a worker's pass. */
struct durable_ask {
    struct journal *j;
    uint64_t seq;
    atomic_int done;
    int rc;
};

static void *ask_durable(void *arg)
{
    struct durable_ask *a = arg;

    a->rc = journal_durable(a->j, a->seq);
    atomic_store(&a->done, 1);
    return NULL;
}

START_TEST(test_journal_durable_takes_no_lock)
{
    char err[512];
    pthread_t t;

    session_start_mode(LOCK_MODE_FINE, 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_EVERYSEC, 0,
                                     &test_store, err, sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    struct durable_ask a = { .j = j, .seq = add_nowait(&test_store, "Ann") };
    atomic_init(&a.done, 0);
    pthread_mutex_lock(&j->lock);
    ck_assert_int_eq(pthread_create(&t, NULL, ask_durable, &a), 0);
    for (int i = 0; i < 2000 && !atomic_load(&a.done); i++)
        usleep(1000);
    int answered = atomic_load(&a.done);
    pthread_mutex_unlock(&j->lock);
    pthread_join(t, NULL);
    ck_assert_msg(answered, "journal_durable waited for journal->lock");
    ck_assert_int_eq(a.rc, 0);
    /* A round under way (the flusher's 100 ms tick may have started one
     * for Ann's record) makes commit return at once: its end makes it
     * durable. */
    journal_commit(j, a.seq);
    for (int i = 0; i < 2000 && journal_durable(j, a.seq) != 1; i++)
        usleep(1000);
    ck_assert_int_eq(journal_durable(j, a.seq), 1);
    journal_close(j);
    session_stop();
}
END_TEST

static Suite *journal_faults_suite(void)
{
    Suite *s = suite_create("journal_faults");
    TCase *faults = tcase_create("faults");

    tcase_add_checked_fixture(faults, file_setup, file_teardown);
    tcase_add_loop_test(faults, test_journal_sync_failure_read_only,
                        JOURNAL_WAKE_BROADCAST, JOURNAL_WAKE_SIGNAL + 1);
    tcase_add_test(faults, test_journal_durable_answers);
    tcase_add_test(faults, test_journal_durable_takes_no_lock);
    suite_add_tcase(s, faults);
    return s;
}
SUITE_REGISTER(journal_faults_suite)
