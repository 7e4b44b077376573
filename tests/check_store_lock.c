/* check_store_lock.c -- unit tests for the store lock itself (store_lock.c):
 * mutual exclusion in each order; the FIFO lock's hand-over in arrival
 * order, to the waiters before a holder that asks again at once; the
 * bounded lock's budget (threads take it ahead of a waiter only while
 * their holds since it queued add up to less than STORE_PASS_BUDGET_NS,
 * not counting those that end while it is woken and not yet running); the unfair lock's waiter that is always
 * woken in the end (no lost wake-up), and its event-loop waiters, still
 * handed the lock in turn. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include "suites.h"
#include "../common/timeutil.h"
#include "../server/lockmode.h"
#include "../server/store.h"

static struct store st;

static void setup(void)
{
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_FINE]), 0);
}

static void teardown(void)
{
    store_destroy(&st);
}

/* Threads queued for the lock now (a test's look inside store_lock.c). */
static int queued(void)
{
    int n = 0;

    pthread_mutex_lock(&st.handoff);
    for (struct store_waiter *w = st.first; w; w = w->next)
        n++;
    pthread_mutex_unlock(&st.handoff);
    return n;
}

static void wait_queued(int n)
{
    for (int i = 0; i < 5000 && queued() < n; i++)
        time_sleep_ns(TIME_NS_PER_MS);
    ck_assert_int_eq(queued(), n);
}

/* ---- mutual exclusion -------------------------------------------------- */

#define RACERS 4
#define ROUNDS 20000

static long counter;                    /* protected by the store lock */

static void *race(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        store_lock(&st);
        long v = counter;               /* a torn update shows as a loss */
        if (i % 64 == 0)
            sched_yield();
        counter = v + 1;
        store_unlock(&st);
    }
    return NULL;
}

START_TEST(test_store_lock_excludes)
{
    pthread_t t[RACERS];

    store_set_lock_order(&st, (enum store_lock_order)_i);
    counter = 0;
    for (int i = 0; i < RACERS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, race, NULL), 0);
    for (int i = 0; i < RACERS; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(counter, (long)RACERS * ROUNDS);
    ck_assert_int_eq(st.held, 0);
    ck_assert_ptr_null(st.first);
    ck_assert_uint_eq(st.queued, 0);
}
END_TEST

/* ---- a woken waiter kept from running ---------------------------------- */

/* A waiter is kept from running, once woken, by a signal whose handler
 * waits for thaw: the woken-but-not-running window, made as long as the
 * test needs. */
static atomic_int frozen, thaw;

static void freeze(int sig)
{
    struct timespec ms = { 0, 1000000 };

    (void)sig;
    atomic_store(&frozen, 1);
    while (!atomic_load(&thaw))
        nanosleep(&ms, NULL);
}

/* Freezes thread t in freeze, once it is running or wakes up. */
static void freeze_thread(pthread_t t)
{
    atomic_store(&frozen, 0);
    atomic_store(&thaw, 0);
    pthread_kill(t, SIGUSR2);
    while (!atomic_load(&frozen))
        sched_yield();
}

/* ---- the FIFO lock's order --------------------------------------------- */

static atomic_int turn;                 /* the order acquisitions happened */

struct taker {
    pthread_t tid;
    int got;                            /* its place in that order */
    atomic_int *hold;                   /* keeps the lock while *hold */
};

static void *take_once(void *arg)
{
    struct taker *t = arg;

    store_lock(&st);
    __atomic_store_n(&t->got, atomic_fetch_add(&turn, 1), __ATOMIC_RELEASE);
    while (t->hold && atomic_load(t->hold))
        sched_yield();
    store_unlock(&st);
    return NULL;
}

START_TEST(test_store_lock_fifo_hands_over_in_arrival_order)
{
    struct taker t[3] = { { .hold = NULL } };
    struct sigaction sa = { .sa_handler = freeze }, old;
    atomic_int hold = 1;

    store_set_lock_order(&st, STORE_LOCK_FIFO);
    ck_assert_int_eq(sigaction(SIGUSR2, &sa, &old), 0);
    t[0].hold = &hold;                  /* the first keeps it until told */
    atomic_store(&turn, 0);
    ck_assert_int_eq(store_lock(&st), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pthread_create(&t[i].tid, NULL, take_once, &t[i]), 0);
        wait_queued(i + 1);             /* queued before the next starts */
    }
    /* The first taker cannot run until thawed: what held says after the
     * unlock is the unlock's doing alone. */
    freeze_thread(t[0].tid);
    store_unlock(&st);
    /* Handed over, not freed: held, with the two others still queued. */
    ck_assert_int_eq(st.held, 1);
    ck_assert_int_eq(queued(), 2);
    atomic_store(&thaw, 1);
    atomic_store(&hold, 0);
    /* Asking again at once: the holder queues behind all three. */
    ck_assert_int_eq(store_lock(&st), 0);
    int mine = atomic_fetch_add(&turn, 1);
    store_unlock(&st);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i].tid, NULL);
        ck_assert_int_eq(t[i].got, i);
    }
    ck_assert_int_eq(mine, 3);
    sigaction(SIGUSR2, &old, NULL);
}
END_TEST

/* ---- the bounded lock -------------------------------------------------- */

#define PASS_MAX 64

static struct {
    atomic_int go;
    uint64_t hold_ns;                   /* each of its holds */
    int max;                            /* at most this many (<= PASS_MAX) */
    int n;                              /* its acquisitions */
    int w_done[PASS_MAX];               /* had W had the lock by then? */
    uint64_t spent[PASS_MAX];           /* st.passed_ns after each hold */
} passer;

/* Told to go, takes the lock again and again, holding it hold_ns each
 * time, until it gets it after W (the only other taker) did, or max
 * times. */
static void *pass_while_allowed(void *arg)
{
    (void)arg;
    while (!atomic_load(&passer.go))
        sched_yield();
    for (int i = 0; i < passer.max; i++) {
        store_lock(&st);
        int done = passer.w_done[i] = atomic_load(&turn) > 0;
        passer.n = i + 1;
        if (!done)
            time_sleep_ns(passer.hold_ns);
        store_unlock(&st);
        pthread_mutex_lock(&st.handoff);
        passer.spent[i] = st.passed_ns;
        pthread_mutex_unlock(&st.handoff);
        if (done)
            break;
    }
    return NULL;
}

/* The holder lets go of the lock while W waits, which wakes W, but W
 * cannot run yet (frozen); then a passer asks.
 * 0: a 100 ms budget, the holder's hold short: the passer takes the free
 *    lock 4 times ahead of W, 30 ms each, 120 ms in all, and none of those
 *    holds counts (W could not have taken
 *    it: counting them left the lock idle until the scheduler ran W, the
 *    convoy store_lock.c's note_released tells of). Thawed, W takes it.
 * 1: a 2 ms budget: the holder's own hold (5 ms), which ended while W
 *    slept in the queue, spends it: no pass at all, W takes it first. */
START_TEST(test_store_lock_bounded_budget)
{
    struct taker w = { .got = -1 };
    struct sigaction sa = { .sa_handler = freeze }, old;
    pthread_t p;
    uint64_t budget = (_i ? 2 : 100) * TIME_NS_PER_MS;

    ck_assert_int_eq(st.order, STORE_LOCK_BOUNDED);     /* the default */
    ck_assert_uint_eq(st.pass_budget_ns, STORE_PASS_BUDGET_NS);
    st.pass_budget_ns = budget;
    memset(&passer, 0, sizeof(passer));
    passer.hold_ns = (_i ? 5 : 30) * TIME_NS_PER_MS;
    passer.max = _i ? PASS_MAX : 4;
    atomic_store(&turn, 0);
    ck_assert_int_eq(sigaction(SIGUSR2, &sa, &old), 0);
    ck_assert_int_eq(pthread_create(&p, NULL, pass_while_allowed, NULL), 0);
    ck_assert_int_eq(store_lock(&st), 0);
    ck_assert_int_eq(pthread_create(&w.tid, NULL, take_once, &w), 0);
    wait_queued(1);
    freeze_thread(w.tid);
    if (_i)
        time_sleep_ns(5 * TIME_NS_PER_MS);
    store_unlock(&st);                  /* W is woken, and frozen */
    ck_assert_int_eq(st.held, 0);
    ck_assert_uint_ne(st.woken, 0);
    pthread_mutex_lock(&st.handoff);
    uint64_t before = st.passed_ns;     /* the holder's hold */
    pthread_mutex_unlock(&st.handoff);
    ck_assert(_i ? before >= budget : before < budget);
    atomic_store(&passer.go, 1);
    if (_i) {
        wait_queued(1);                 /* it may not pass at all */
        ck_assert_int_eq(passer.n, 0);
    } else {
        pthread_join(p, NULL);          /* all 4 passes, never queued */
        ck_assert_int_eq(passer.n, 4);
        for (int i = 0; i < 4; i++) {
            ck_assert_int_eq(passer.w_done[i], 0);
            ck_assert_uint_eq(passer.spent[i], before);
        }
    }
    ck_assert_int_eq(w.got, -1);
    atomic_store(&thaw, 1);
    pthread_join(w.tid, NULL);
    ck_assert_int_eq(w.got, 0);
    if (_i) {
        pthread_join(p, NULL);
        ck_assert_int_eq(passer.n, 1);
        ck_assert_int_eq(passer.w_done[0], 1);  /* W before the passer */
    }
    ck_assert_int_eq(st.held, 0);
    ck_assert_uint_eq(st.woken, 0);
    ck_assert_ptr_null(st.first);
    sigaction(SIGUSR2, &old, NULL);
}
END_TEST

/* The bound still holds for a waiter the scheduler is slow to run: W,
 * woken while frozen, loses the lock to P; run while P holds it, W goes
 * back to the head of the queue, and P's hold (150 ms, past the 100 ms
 * budget) then counts. Woken again (and frozen again), W is the one the
 * lock waits for: M, asking after P let go, queues, and W takes it
 * first. */
START_TEST(test_store_lock_bounded_requeued_waiter_first)
{
    struct taker w = { .got = -1 }, pt = { .got = -1 }, m = { .got = -1 };
    struct sigaction sa = { .sa_handler = freeze }, old;
    atomic_int hold = 1;

    st.pass_budget_ns = 100 * TIME_NS_PER_MS;
    atomic_store(&turn, 0);
    ck_assert_int_eq(sigaction(SIGUSR2, &sa, &old), 0);
    ck_assert_int_eq(store_lock(&st), 0);
    ck_assert_int_eq(pthread_create(&w.tid, NULL, take_once, &w), 0);
    wait_queued(1);
    freeze_thread(w.tid);
    store_unlock(&st);                  /* W is woken, and frozen */
    pthread_mutex_lock(&st.handoff);    /* the holder's hold: P may pass */
    ck_assert_uint_lt(st.passed_ns, st.pass_budget_ns);
    pthread_mutex_unlock(&st.handoff);
    pt.hold = &hold;                    /* P passes, and keeps it */
    ck_assert_int_eq(pthread_create(&pt.tid, NULL, take_once, &pt), 0);
    /* take_once counts its turn before it stores it: wait for the store. */
    while (__atomic_load_n(&pt.got, __ATOMIC_ACQUIRE) < 0)
        sched_yield();
    ck_assert_int_eq(pt.got, 0);
    time_sleep_ns(150 * TIME_NS_PER_MS);
    atomic_store(&thaw, 1);             /* W runs, finds it held, queues */
    wait_queued(1);
    ck_assert_uint_eq(st.woken, 0);
    freeze_thread(w.tid);               /* and is frozen where it sleeps */
    atomic_store(&hold, 0);             /* P lets go: its hold counts */
    pthread_join(pt.tid, NULL);
    ck_assert_uint_ne(st.woken, 0);
    pthread_mutex_lock(&st.handoff);
    ck_assert_uint_ge(st.passed_ns, st.pass_budget_ns);
    pthread_mutex_unlock(&st.handoff);
    ck_assert_int_eq(pthread_create(&m.tid, NULL, take_once, &m), 0);
    wait_queued(1);                     /* M may not pass */
    ck_assert_int_eq(m.got, -1);
    atomic_store(&thaw, 1);
    pthread_join(w.tid, NULL);
    pthread_join(m.tid, NULL);
    ck_assert_int_eq(w.got, 1);
    ck_assert_int_eq(m.got, 2);
    ck_assert_int_eq(st.held, 0);
    ck_assert_ptr_null(st.first);
    sigaction(SIGUSR2, &old, NULL);
}
END_TEST

/* ---- the unfair lock --------------------------------------------------- */

static atomic_int stop_barging;

static void *barge(void *arg)
{
    atomic_long *rounds = arg;

    while (!atomic_load(&stop_barging)) {
        store_lock(&st);
        atomic_fetch_add(rounds, 1);
        store_unlock(&st);
    }
    return NULL;
}

/* A waiter that loses the lock to a barging thread again and again is
 * still woken at every release, and takes it once the barging stops. */
START_TEST(test_store_lock_unfair_waiter_gets_it)
{
    struct taker t = { .got = -1 };
    pthread_t b;
    atomic_long rounds = 0;

    store_set_lock_order(&st, STORE_LOCK_UNFAIR);
    atomic_store(&turn, 0);
    atomic_store(&stop_barging, 0);
    ck_assert_int_eq(store_lock(&st), 0);
    ck_assert_int_eq(pthread_create(&t.tid, NULL, take_once, &t), 0);
    wait_queued(1);
    ck_assert_int_eq(pthread_create(&b, NULL, barge, &rounds), 0);
    store_unlock(&st);
    while (atomic_load(&rounds) < 10000)
        sched_yield();
    atomic_store(&stop_barging, 1);
    pthread_join(b, NULL);
    pthread_join(t.tid, NULL);          /* hangs on a lost wake-up */
    ck_assert_int_eq(t.got, 0);
    ck_assert_int_eq(st.held, 0);
    ck_assert_ptr_null(st.first);
    ck_assert_uint_eq(st.queued, 0);
    struct store_lock_figures f;
    store_lock(&st);
    store_lock_figures_locked(&st, &f);
    store_unlock(&st);
    ck_assert_uint_ge(f.contended, 1);  /* the waiter's wait, counted */
}
END_TEST

static atomic_int notified;

static void note_handed(void *arg)
{
    (void)arg;
    atomic_store(&notified, 1);
}

/* An event loop's waiter cannot retry: unfair or not, it is handed the
 * lock when it is first in the queue. */
START_TEST(test_store_lock_unfair_hands_to_event_waiter)
{
    struct store_waiter w = { .notify = note_handed };

    store_set_lock_order(&st, STORE_LOCK_UNFAIR);
    atomic_store(&notified, 0);
    ck_assert_int_eq(store_lock(&st), 0);
    ck_assert_int_eq(store_lock_nowait(&st, &w), -EAGAIN);
    store_unlock(&st);
    ck_assert_int_eq(atomic_load(&notified), 1);
    ck_assert_int_eq(st.held, 1);       /* it is w's now */
    store_lock_adopt(&st, &w);
    ck_assert_int_eq(store_lock_owned(&st), 1);
    store_unlock(&st);
    ck_assert_int_eq(st.held, 0);
}
END_TEST

static Suite *store_lock_suite(void)
{
    Suite *s = suite_create("store_lock");
    TCase *tc = tcase_create("lock");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_store_lock_excludes, STORE_LOCK_BOUNDED,
                        STORE_LOCK_UNFAIR + 1);
    tcase_add_test(tc, test_store_lock_fifo_hands_over_in_arrival_order);
    tcase_add_loop_test(tc, test_store_lock_bounded_budget, 0, 2);
    tcase_add_test(tc, test_store_lock_bounded_requeued_waiter_first);
    tcase_add_test(tc, test_store_lock_unfair_waiter_gets_it);
    tcase_add_test(tc, test_store_lock_unfair_hands_to_event_waiter);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(store_lock_suite)
