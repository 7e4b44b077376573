/* check_trace.c -- the trace's rings and windows (server/trace.c,
 * trace_json.c): a full ring keeps its latest events and counts the
 * overwritten as dropped; START and STOP refuse what they must; each
 * window rewrites the file (0600, never through a symbolic link); the
 * outcomes of the last 256 windows are kept, an older one's are stale;
 * threads that record while windows start and stop lose nothing they
 * should keep (run by make tsan's runner too); past TRACE_RINGS_MAX
 * threads at once, the others' events are dropped, and the room comes
 * back once the window is written. Each test runs in its own
 * process (the module's state is global). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "suites.h"
#include "../server/trace.h"

static char path[64];

static void setup(void)
{
    snprintf(path, sizeof(path), "/tmp/check_trace.%d.json", (int)getpid());
    unlink(path);
}

/* trace_close joins the last writer thread, as the server's shutdown. */
static void teardown(void)
{
    trace_close();
    unlink(path);
}

/* The file's text (NUL-terminated, the caller frees). */
static char *slurp(const char *p)
{
    FILE *f = fopen(p, "r");
    char *buf;
    long n;

    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), n);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* A reply write of arg bytes, one per microsecond from now. */
static void sends(unsigned from, unsigned to)
{
    uint64_t t = time_now_ns();

    for (unsigned i = from; i < to; i++)
        trace_record(TRACE_SEND, t + i * 1000ULL, t + i * 1000ULL + 500, i);
}

static void stop_and_wait(struct trace_status *st)
{
    unsigned w = 0;

    ck_assert_int_eq(trace_stop(&w), 0);
    ck_assert_uint_gt(w, 0);
    ck_assert_int_eq(trace_stop_wait(w, st), 0);
    ck_assert_int_eq(st->state, TRACE_OFF);
}

START_TEST(test_trace_ring_keeps_latest)
{
    const unsigned n = TRACE_RING_EVENTS + 1000;
    struct trace_status st;
    char want[48];

    ck_assert_int_eq(trace_init(path), 0);
    ck_assert_int_eq(trace_start(), 0);
    sends(0, n);
    trace_status(&st);
    ck_assert_int_eq(st.state, TRACE_ON);
    ck_assert_uint_eq(st.events, TRACE_RING_EVENTS);
    ck_assert_uint_eq(st.dropped, 1000);
    stop_and_wait(&st);
    ck_assert_uint_eq(st.events, TRACE_RING_EVENTS);
    ck_assert_uint_eq(st.dropped, 1000);
    ck_assert_uint_eq(trace_dropped(), 1000);

    char *text = slurp(path);
    ck_assert_int_eq(count(text, "\"ph\":\"X\""), TRACE_RING_EVENTS);
    snprintf(want, sizeof(want), "\"bytes\":%u}", n - 1);
    ck_assert_msg(strstr(text, want), "the last event is kept");
    ck_assert_msg(strstr(text, "\"bytes\":1000}"), "the oldest kept is kept");
    ck_assert_msg(!strstr(text, "\"bytes\":999}"), "the 1000 oldest are not");
    ck_assert_msg(text[0] == '[' && strstr(text, "\n]\n"), "an array");
    free(text);
}
END_TEST

START_TEST(test_trace_states)
{
    struct trace_status st;
    unsigned w = 0;

    ck_assert_int_eq(trace_start(), TRACE_NO_FILE); /* no file named */
    ck_assert_int_eq(trace_stop(&w), TRACE_NO_FILE);
    ck_assert_int_eq(trace_init(path), 0);
    ck_assert_int_eq(trace_stop(&w), -ESRCH);       /* off */
    ck_assert_int_eq(trace_start(), 0);
    ck_assert_int_eq(trace_start(), -EALREADY);
    stop_and_wait(&st);
    ck_assert_uint_eq(st.events, 0);
    ck_assert_int_eq(trace_stop(&w), -ESRCH);
    trace_status(&st);
    ck_assert_int_eq(st.state, TRACE_OFF);
    ck_assert_int_eq(trace_enabled(), 0);
}
END_TEST

START_TEST(test_trace_window_rewrites)
{
    struct trace_status st;
    struct stat sb;

    ck_assert_int_eq(trace_init(path), 0);
    ck_assert_int_eq(trace_start(), 0);
    sends(0, 5);
    stop_and_wait(&st);
    ck_assert_uint_eq(st.events, 5);
    sends(5, 9);                        /* off: not recorded */
    ck_assert_int_eq(trace_start(), 0);
    sends(100, 102);
    stop_and_wait(&st);
    ck_assert_uint_eq(st.events, 2);
    ck_assert_uint_eq(trace_events(), 7);

    char *text = slurp(path);
    ck_assert_int_eq(count(text, "\"ph\":\"X\""), 2);
    ck_assert_msg(strstr(text, "\"bytes\":101}"), "the second window's");
    free(text);
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0600);
}
END_TEST

START_TEST(test_trace_no_symlink)
{
    char target[80];

    snprintf(target, sizeof(target), "%s.target", path);
    unlink(target);
    ck_assert_int_eq(symlink(target, path), 0);
    ck_assert_int_eq(trace_init(path), 0);
    ck_assert_int_eq(trace_start(), -ELOOP);
    ck_assert_int_eq(access(target, F_OK), -1);     /* not created */
    ck_assert_int_eq(trace_enabled(), 0);
}
END_TEST

/* Window i of the next test records this many events: no two windows 256
 * apart record the same number (256 % 13 is 9). */
static unsigned events_of(unsigned i)
{
    return i % 13 + 1;
}

/* The outcomes of the last 256 windows are kept, in a ring by window
 * number: a STOP whose answer is asked for late (an event connection asks
 * again) gets its own window's figures while 255 more windows have been
 * written since, and after 256 more -ESTALE (TRACE STOP's "OK trace
 * written"), never the figures of the window that took its place. */
START_TEST(test_trace_results_ring)
{
    enum { N = 257 };                   /* one window more than are kept */
    unsigned w[N];
    struct trace_status st;

    ck_assert_int_eq(trace_init(path), 0);
    for (unsigned i = 0; i < N; i++) {
        ck_assert_int_eq(trace_start(), 0);
        sends(0, events_of(i));
        ck_assert_int_eq(trace_stop(&w[i]), 0);
        ck_assert_int_eq(trace_stop_wait(w[i], &st), 0);
        ck_assert_uint_eq(st.events, events_of(i));
        if (i)
            ck_assert_uint_eq(w[i], w[i - 1] + 1);
    }
    ck_assert_int_eq(trace_stop_result(w[0], &st), -ESTALE);
    ck_assert_int_eq(trace_stop_wait(w[0], &st), -ESTALE);  /* no wait */
    for (unsigned i = 1; i < N; i++) {
        memset(&st, 0xff, sizeof(st));
        ck_assert_int_eq(trace_stop_result(w[i], &st), 0);
        ck_assert_msg(st.events == events_of(i) && st.dropped == 0,
                      "window %u of %u: %llu events, %llu dropped, want %u",
                      i, N, (unsigned long long)st.events,
                      (unsigned long long)st.dropped, events_of(i));
        ck_assert_int_eq(st.state, TRACE_OFF);
    }
}
END_TEST

static atomic_int running;

/* Records until told to stop, then ends (its ring retires). */
static void *recorder(void *arg)
{
    (void)arg;
    trace_thread_name("recorder");
    while (atomic_load(&running))
        trace_span(TRACE_LOCK_HOLD, time_now_ns(), time_now_ns(), 0);
    return NULL;
}

START_TEST(test_trace_concurrent_windows)
{
    pthread_t t[3];
    struct trace_status st;
    uint64_t kept = 0;

    ck_assert_int_eq(trace_init(path), 0);
    atomic_store(&running, 1);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, recorder, NULL), 0);
    for (int round = 0; round < 20; round++) {
        ck_assert_int_eq(trace_start(), 0);
        usleep(2000);
        if (round == 19)                /* rings retire during the window */
            atomic_store(&running, 0);
        stop_and_wait(&st);
        ck_assert_uint_le(st.events, 3 * TRACE_RING_EVENTS);
        kept += st.events;
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    ck_assert_uint_eq(trace_events(), kept);
    char *text = slurp(path);
    ck_assert_msg(text[0] == '[' && strstr(text, "\n]\n"), "an array");
    free(text);
}
END_TEST

/* More threads than TRACE_RINGS_MAX record at once: the first
 * TRACE_RINGS_MAX keep their events, the others' are all counted as
 * dropped; once the window is written the rings' room is free again, and
 * the next window's threads have it, refused ones included. Before the
 * bound every thread kept a ring of 384 KiB for its life. */
enum { RINGS_EXTRA = 8, RINGS_K = 100,
       RINGS_THREADS = TRACE_RINGS_MAX + RINGS_EXTRA };
static pthread_barrier_t phase;

static void *ringer(void *arg)
{
    long i = (long)arg;

    sends(0, RINGS_K);                  /* window 1 */
    pthread_barrier_wait(&phase);       /* all recorded, all rings alive */
    pthread_barrier_wait(&phase);       /* window 1 written, 2 on */
    if (i >= TRACE_RINGS_MAX - 1)       /* the last EXTRA + 1 only */
        sends(0, RINGS_K);
    pthread_barrier_wait(&phase);
    return NULL;
}

START_TEST(test_trace_rings_bounded)
{
    pthread_t t[RINGS_THREADS];
    struct trace_status st;

    ck_assert_int_eq(trace_init(path), 0);
    ck_assert_int_eq(trace_start(), 0);
    ck_assert_int_eq(pthread_barrier_init(&phase, NULL, RINGS_THREADS + 1),
                     0);
    for (long i = 0; i < RINGS_THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, ringer, (void *)i), 0);
    pthread_barrier_wait(&phase);
    trace_status(&st);
    ck_assert_uint_eq(st.events, TRACE_RINGS_MAX * RINGS_K);
    ck_assert_uint_eq(st.dropped, RINGS_EXTRA * RINGS_K);
    stop_and_wait(&st);
    ck_assert_uint_eq(st.events, TRACE_RINGS_MAX * RINGS_K);
    ck_assert_uint_eq(st.dropped, RINGS_EXTRA * RINGS_K);
    char *text = slurp(path);
    ck_assert_int_eq(count(text, "\"ph\":\"X\""), TRACE_RINGS_MAX * RINGS_K);
    ck_assert_int_eq(count(text, "\"thread_name\""), TRACE_RINGS_MAX);
    free(text);

    ck_assert_int_eq(trace_start(), 0);
    pthread_barrier_wait(&phase);
    pthread_barrier_wait(&phase);
    trace_status(&st);
    ck_assert_uint_eq(st.events, (RINGS_EXTRA + 1) * RINGS_K);
    ck_assert_uint_eq(st.dropped, 0);
    stop_and_wait(&st);
    for (int i = 0; i < RINGS_THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&phase);
    ck_assert_uint_eq(trace_dropped(), RINGS_EXTRA * RINGS_K);
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("windows");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_trace_ring_keeps_latest);
    tcase_add_test(tc, test_trace_states);
    tcase_add_test(tc, test_trace_window_rewrites);
    tcase_add_test(tc, test_trace_no_symlink);
    tcase_add_test(tc, test_trace_results_ring);
    tcase_add_test(tc, test_trace_concurrent_windows);
    tcase_add_test(tc, test_trace_rings_bounded);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(trace_suite)
