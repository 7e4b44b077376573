/* check_journal_reply.c -- a thread session's replies held by the journal
 * (journal.h, struct journal_reply; server/journal/journal_reply.c): sent
 * by the round that makes their record durable and never before, in order
 * with what follows them, again later when the socket took only part,
 * taken back whole by their owner, and never sent when the round fails
 * (the socket is shut down instead); and journal_lead, a round led by the
 * session itself when none is under way; and an append, under the store
 * lock, that never waits for journal->lock while no compaction runs. A
 * real journal on a real file, and a
 * socket pair standing for the client's connection.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include "suites.h"
#include "../server/journal/journal_int.h"
#include "../server/lockmode.h"
#include "journaltest.h"

static struct store st;
static struct journal *jr;
static int sv[2];               /* sv[0] the server's end, sv[1] the client's */
static struct journal_reply rep;

static void setup_with(enum journal_fsync pol)
{
    char err[512];

    file_setup();
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_BUFFERED]), 0);
    jr = journal_open(path, pol, 0, &st, err, sizeof(err));
    ck_assert_msg(jr != NULL, "%s", err);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    journal_reply_init(&rep, sv[0]);
}

static void teardown(void)
{
    journal_reply_take(jr, &rep);
    journal_reply_destroy(&rep);
    journal_close(jr);
    store_destroy(&st);
    close(sv[0]);
    close(sv[1]);
    journal_sync_fn = fdatasync;
    file_teardown();
}

/* What the client's end receives within ms milliseconds, up to cap - 1
 * bytes, as a string; *eof set when the server's end was shut down. */
static const char *receive(int ms, size_t cap, int *eof)
{
    static char buf[4096];
    size_t got = 0;
    struct pollfd p = { .fd = sv[1], .events = POLLIN };

    *eof = 0;
    assert(cap <= sizeof(buf));
    while (got < cap - 1 && poll(&p, 1, ms) == 1) {
        ssize_t n = read(sv[1], buf + got, cap - 1 - got);
        if (n <= 0) {
            *eof = n == 0;
            break;
        }
        got += (size_t)n;
        ms = 50;                /* the rest follows at once, if at all */
    }
    buf[got] = '\0';
    return buf;
}

/* A sync that takes 300 ms, so that a reply is surely held meanwhile. */
static int sync_slow(int fd)
{
    struct timespec ts = { 0, 300 * 1000 * 1000 };

    nanosleep(&ts, NULL);
    return fdatasync(fd);
}

static void setup_always(void) { setup_with(JOURNAL_FSYNC_ALWAYS); }

START_TEST(test_reply_sent_by_the_round)
{
    int eof;

    journal_sync_fn = sync_slow;
    uint64_t seq = add_nowait(&st, "John");
    ck_assert_int_eq(journal_reply_push(jr, &rep, "OK\n", 3, seq), 0);
    /* What follows a held reply is held behind it, in order. */
    ck_assert_int_eq(journal_reply_push(jr, &rep, "2\n", 2, 0), 0);
    ck_assert_int_eq(journal_reply_held(&rep), 1);
    ck_assert_str_eq(receive(100, 64, &eof), "");   /* not durable yet */
    ck_assert_int_eq(journal_durable(jr, seq), 0);
    ck_assert_str_eq(receive(2000, 6, &eof), "OK\n2\n");
    ck_assert_int_eq(journal_durable(jr, seq), 1);
    /* Sent: the owner sees it without the lock, and leads rounds again
     * (a session that kept holding every reply made the flusher lead
     * every round: one connection's ADDs fell to 60 % of the rate). */
    for (int t = 0; t < 100 && journal_reply_held(&rep); t++)
        usleep(1000);
    ck_assert_int_eq(journal_reply_held(&rep), 0);
    ck_assert_int_eq(journal_reply_take(jr, &rep), 0);
    ck_assert_uint_eq(rep.len - rep.off, 0);        /* nothing left */
}
END_TEST

START_TEST(test_reply_durable_already_is_the_callers)
{
    int eof;
    uint64_t seq = add_nowait(&st, "John");

    ck_assert_int_eq(journal_wait(jr, seq), 0);
    ck_assert_int_eq(journal_reply_push(jr, &rep, "OK\n", 3, seq), 1);
    ck_assert_int_eq(journal_reply_push(jr, &rep, "1\n", 2, 0), 1);
    ck_assert_str_eq(receive(100, 64, &eof), "");   /* the caller sends */
}
END_TEST

START_TEST(test_reply_taken_back_is_not_sent)
{
    int eof;

    journal_sync_fn = sync_slow;
    uint64_t seq = add_nowait(&st, "John");
    ck_assert_int_eq(journal_reply_push(jr, &rep, "OK\n", 3, seq), 0);
    ck_assert_int_eq(journal_reply_take(jr, &rep), 0);
    ck_assert_int_eq(journal_reply_held(&rep), 0);
    ck_assert_uint_eq(rep.len - rep.off, 3);        /* the owner's again */
    ck_assert_uint_eq(rep.seq, seq);
    ck_assert_int_eq(journal_wait(jr, seq), 0);
    ck_assert_str_eq(receive(200, 64, &eof), "");
    /* Held bytes that were taken back go first: the owner sends them. */
    ck_assert_int_eq(journal_reply_push(jr, &rep, "1\n", 2, 0), -E2BIG);
}
END_TEST

START_TEST(test_reply_too_big_is_refused)
{
    static char big[JOURNAL_REPLY_MAX + 1];
    uint64_t seq = add_nowait(&st, "John");

    journal_sync_fn = sync_slow;
    memset(big, 'x', sizeof(big));
    ck_assert_int_eq(journal_reply_push(jr, &rep, big, sizeof(big), seq),
                     -E2BIG);
    ck_assert_int_eq(journal_reply_push(jr, &rep, big, sizeof(big) - 1,
                                        seq), 0);
    ck_assert_int_eq(journal_reply_push(jr, &rep, "OK\n", 3, 0), -E2BIG);
}
END_TEST

/* Whether the journal holds a reply its socket did not take whole. */
static int straggling(void)
{
    pthread_mutex_lock(&jr->lock);
    int n = (int)jr->stragglers;
    pthread_mutex_unlock(&jr->lock);
    return n;
}

START_TEST(test_reply_rest_sent_when_the_socket_has_room)
{
    static char fill[1 << 16], want[200];
    int eof, sndbuf = 4096;
    size_t filled = 0;

    ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
                                sizeof(sndbuf)), 0);
    for (;;) {                  /* a client that does not read */
        ssize_t n = send(sv[0], fill, sizeof(fill), MSG_DONTWAIT);
        if (n <= 0)
            break;
        filled += (size_t)n;
    }
    memset(want, 'r', sizeof(want) - 1);
    want[sizeof(want) - 2] = '\n';
    uint64_t seq = add_nowait(&st, "John");
    ck_assert_int_eq(journal_reply_push(jr, &rep, want, sizeof(want) - 1,
                                        seq), 0);
    ck_assert_int_eq(journal_wait(jr, seq), 0);
    for (int t = 0; t < 200 && !straggling(); t++)
        usleep(10 * 1000);
    ck_assert_int_eq(straggling(), 1);
    /* The client reads now: what it was owed follows within the flusher's
     * 100 ms retry, with nobody else sending. */
    while (filled) {
        size_t chunk = filled < sizeof(fill) ? filled : sizeof(fill);
        ssize_t n = read(sv[1], fill, chunk);
        ck_assert_int_gt(n, 0);
        filled -= (size_t)n;
    }
    ck_assert_str_eq(receive(2000, sizeof(want), &eof), want);
    ck_assert_int_eq(straggling(), 0);
}
END_TEST

START_TEST(test_reply_of_a_failed_round_is_never_sent)
{
    int eof;

    journal_sync_fn = sync_fails;
    uint64_t seq = add_nowait(&st, "John");
    int rc = journal_reply_push(jr, &rep, "OK\n", 3, seq);
    if (rc == 0) {
        /* The socket is shut down: the client sees the end, no reply,
         * and the owner taking the reply back learns why. */
        ck_assert_str_eq(receive(2000, 64, &eof), "");
        ck_assert_int_eq(eof, 1);
        ck_assert_int_eq(journal_reply_take(jr, &rep), -EIO);
    } else {
        /* The flusher's 100 ms tick ran the failing round first
         * (test_reply_after_a_failed_round makes it so): the reply is
         * refused, nothing was sent, nothing is held to take back. */
        ck_assert_int_eq(rc, -EIO);
        ck_assert_str_eq(receive(200, 64, &eof), "");
        ck_assert_int_eq(journal_reply_take(jr, &rep), 0);
    }
    ck_assert_int_eq(journal_reply_push(jr, &rep, "OK\n", 3, 0), -EIO);
}
END_TEST

/* The same, the failing round run by the flusher's tick before the reply
 * is handed over: refused, and nothing held. */
START_TEST(test_reply_after_a_failed_round)
{
    int eof;
    struct timespec ts = { 0, 300 * 1000 * 1000 };

    journal_sync_fn = sync_fails;
    uint64_t seq = add_nowait(&st, "John");
    nanosleep(&ts, NULL);               /* three ticks: the round failed */
    ck_assert_int_eq(journal_reply_push(jr, &rep, "OK\n", 3, seq), -EIO);
    ck_assert_str_eq(receive(200, 64, &eof), "");
    ck_assert_int_eq(eof, 0);           /* nobody shut the socket down */
    ck_assert_int_eq(journal_reply_take(jr, &rep), 0);
}
END_TEST

/* ---- journal_lead: a round led by the caller, or -EBUSY ------------- */

struct waiter_arg {
    uint64_t seq;
    int rc;
};

static void *wait_thread(void *arg)
{
    struct waiter_arg *w = arg;

    w->rc = journal_wait(jr, w->seq);
    return NULL;
}

static int flushing(void)
{
    pthread_mutex_lock(&jr->lock);
    int f = jr->flushing;
    pthread_mutex_unlock(&jr->lock);
    return f;
}

/* journal_lead, again while a round is under way: the flusher's 100 ms
 * tick may have started one for the record just appended. */
static int lead_when_idle(uint64_t seq)
{
    int rc;

    for (int i = 0; (rc = journal_lead(jr, seq)) == -EBUSY && i < 2000; i++)
        usleep(1000);
    return rc;
}

START_TEST(test_lead_leads_when_no_round_is_under_way)
{
    struct journal_figures before, after;

    journal_figures(jr, &before);
    uint64_t seq = add_nowait(&st, "John");
    ck_assert_int_eq(lead_when_idle(seq), 0);
    ck_assert_int_eq(journal_durable(jr, seq), 1);
    journal_figures(jr, &after);
    ck_assert_uint_eq(after.fsyncs, before.fsyncs + 1);
    ck_assert_int_eq(journal_lead(jr, seq), 0);     /* durable already */
    ck_assert_uint_eq(after.fsyncs, before.fsyncs + 1);
    journal_help(jr);                   /* nothing held: nothing led */
    journal_figures(jr, &after);
    ck_assert_uint_eq(after.fsyncs, before.fsyncs + 1);
}
END_TEST

START_TEST(test_lead_is_busy_during_a_round)
{
    struct waiter_arg w = { .seq = 0 };
    pthread_t t;
    int eof;

    journal_sync_fn = sync_slow;
    w.seq = add_nowait(&st, "John");
    ck_assert_int_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
    for (int i = 0; i < 200 && !flushing(); i++)
        usleep(1000);
    ck_assert_int_eq(flushing(), 1);
    uint64_t seq = add_nowait(&st, "Jane");      /* after the round took its */
    ck_assert_int_eq(journal_lead(jr, seq), -EBUSY);
    ck_assert_int_eq(journal_reply_push(jr, &rep, "OK\n", 3, seq), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(w.rc, 0);
    /* The round after it, the flusher's or a helper's, sends the reply. */
    journal_help(jr);
    ck_assert_str_eq(receive(2000, 4, &eof), "OK\n");
    ck_assert_int_eq(journal_durable(jr, seq), 1);
}
END_TEST

START_TEST(test_lead_of_a_failed_round)
{
    journal_sync_fn = sync_fails;
    uint64_t seq = add_nowait(&st, "John");

    ck_assert_int_eq(lead_when_idle(seq), -EIO);
}
END_TEST

/* An appender holds the store lock: it must not wait for journal->lock,
 * whose holders make system calls and may be preempted (every session
 * then queues on the store lock behind it). It takes journal->alock
 * alone, unless a compaction runs (journal_int.h). */
struct appender {
    pthread_t t;
    atomic_int started;         /* holds the store lock, about to append */
    atomic_int done;
    uint64_t seq;
};

static void *append_one(void *arg)
{
    struct appender *a = arg;
    struct store_mutation m = { .op = STORE_ADD };

    m.entry = entry_new("Lock", 4, "Free", 4, entry_ssn_pack("123-45-6789"),
                        33);
    store_lock(&st);
    atomic_store(&a->started, 1);
    if (store_apply_locked(&st, &m) == 0)
        a->seq = m.seq;
    else
        entry_free(m.entry);
    store_unlock(&st);
    atomic_store(&a->done, 1);
    return NULL;
}

/* Whether a's append ends within ms milliseconds of its start (of its
 * thread holding the store lock: a thread slow to start proves nothing). */
static int ends_within(struct appender *a, int ms)
{
    while (!atomic_load(&a->started))
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    for (int i = 0; i < ms && !atomic_load(&a->done); i++)
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    return atomic_load(&a->done);
}

START_TEST(test_append_needs_no_journal_lock)
{
    struct appender a = { .started = 0, .done = 0 };

    pthread_mutex_lock(&jr->lock);
    ck_assert_int_eq(pthread_create(&a.t, NULL, append_one, &a), 0);
    int ended = ends_within(&a, 5000);
    pthread_mutex_unlock(&jr->lock);
    pthread_join(a.t, NULL);
    ck_assert_msg(ended, "the append waited for journal->lock");
    ck_assert_uint_gt(a.seq, 0);
    ck_assert_int_eq(journal_wait(jr, a.seq), 0);
    ck_assert_uint_eq(count(&st), 1);
}
END_TEST

/* Whether fn, run on a thread of its own as a compaction runs (the flag
 * stands for one) and journal->lock is held, ends within 200 ms; the
 * thread is joined. */
static int ends_while_compacting(void *(*fn)(void *), struct appender *a)
{
    pthread_mutex_lock(&jr->lock);
    atomic_store(&jr->compact_busy, 1);
    ck_assert_int_eq(pthread_create(&a->t, NULL, fn, a), 0);
    int ended = ends_within(a, 200);
    atomic_store(&jr->compact_busy, 0);
    pthread_mutex_unlock(&jr->lock);
    pthread_join(a->t, NULL);
    return ended;
}

/* While a compaction runs its state is journal->lock's: the append waits
 * for it. */
START_TEST(test_append_during_a_compaction_takes_the_journal_lock)
{
    struct appender a = { .started = 0, .done = 0 };

    ck_assert_msg(!ends_while_compacting(append_one, &a),
                  "the append did not wait for journal->lock");
    ck_assert_uint_gt(a.seq, 0);
    ck_assert_int_eq(journal_wait(jr, a.seq), 0);
}
END_TEST

/* An appender's first look for room (journal_reserve_locked), before the
 * mutation: under the store lock alone, with no lock of the journal's
 * while no compaction runs. */
static void *reserve_one(void *arg)
{
    struct appender *a = arg;

    store_lock(&st);
    atomic_store(&a->started, 1);
    a->seq = (uint64_t)journal_reserve_locked(jr);  /* 0: room */
    store_unlock(&st);
    atomic_store(&a->done, 1);
    return NULL;
}

START_TEST(test_reserve_needs_no_journal_lock)
{
    struct appender a = { .started = 0, .done = 0 };

    pthread_mutex_lock(&jr->lock);
    pthread_mutex_lock(&jr->alock);
    ck_assert_int_eq(pthread_create(&a.t, NULL, reserve_one, &a), 0);
    int ended = ends_within(&a, 5000);
    pthread_mutex_unlock(&jr->alock);
    pthread_mutex_unlock(&jr->lock);
    pthread_join(a.t, NULL);
    ck_assert_msg(ended, "the look for room waited for a journal lock");
    ck_assert_uint_eq(a.seq, 0);
}
END_TEST

/* While a compaction runs its switch moves the ends under journal->lock:
 * the look for room waits for it. */
START_TEST(test_reserve_during_a_compaction_takes_the_journal_lock)
{
    struct appender a = { .started = 0, .done = 0 };

    ck_assert_msg(!ends_while_compacting(reserve_one, &a),
                  "the look for room did not wait for journal->lock");
    ck_assert_uint_eq(a.seq, 0);
}
END_TEST

static Suite *journal_reply_suite(void)
{
    Suite *s = suite_create("journal_reply");
    TCase *tc = tcase_create("held");

    tcase_add_checked_fixture(tc, setup_always, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_reply_sent_by_the_round);
    tcase_add_test(tc, test_reply_durable_already_is_the_callers);
    tcase_add_test(tc, test_reply_taken_back_is_not_sent);
    tcase_add_test(tc, test_reply_too_big_is_refused);
    tcase_add_test(tc, test_reply_rest_sent_when_the_socket_has_room);
    tcase_add_test(tc, test_reply_of_a_failed_round_is_never_sent);
    tcase_add_test(tc, test_reply_after_a_failed_round);
    tcase_add_test(tc, test_lead_leads_when_no_round_is_under_way);
    tcase_add_test(tc, test_lead_is_busy_during_a_round);
    tcase_add_test(tc, test_lead_of_a_failed_round);
    tcase_add_test(tc, test_append_needs_no_journal_lock);
    tcase_add_test(tc, test_append_during_a_compaction_takes_the_journal_lock);
    tcase_add_test(tc, test_reserve_needs_no_journal_lock);
    tcase_add_test(tc, test_reserve_during_a_compaction_takes_the_journal_lock);
    suite_add_tcase(s, tc);
    return s;
}
SUITE_REGISTER(journal_reply_suite)
