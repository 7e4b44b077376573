/* check_session_park.c -- unit tests for an idle session given back whole
 * (server/session_park.c): parked only between requests, with a pool; the
 * struct goes to the pool's spares and the next session_new_pooled takes
 * the same one again without malloc; what it keeps (authenticated, begun,
 * wrong AUTHs) comes back with session_unpark; anything else in progress
 * (a partial line, an over-long line being discarded, a telnet command
 * split across reads) refuses the park, so that nothing is lost.
 */
#include <string.h>
#include "suites.h"
#include "sessiontest.h"
#include "../server/server.h"

static struct session_pool pool;
static struct session_keep keep;

static void start(enum lock_mode mode)
{
    session_start_mode(mode, 0);
    session_pool_init(&pool, SESSION_POOL_SPARE);
    session_set_pool(sess, &pool);
    memset(&keep, 0, sizeof(keep));
}

static void setup(void)
{
    start(LOCK_MODE_BUFFERED);
}

static void teardown(void)
{
    if (sess)
        session_stop();
    else
        store_destroy(&test_store);
    session_pool_destroy(&pool);
    srv.auth_required = 0;
}

/* sess parked, then made again from the pool as a driver does. */
static struct session *park_and_unpark(void)
{
    ck_assert_int_eq(session_park(sess, &keep), 1);
    sess = session_new_pooled(&pool, &test_store, &capture_io, &cap);
    ck_assert_ptr_nonnull(sess);
    session_unpark(sess, &keep);
    return sess;
}

/* After a request the whole session goes back, and the next one is the
 * same struct, from the spares: no malloc while requests come. */
START_TEST(test_session_park_round_trip)
{
    ck_assert_str_eq(talk("ADD a b 1 123-45-6789\n"), "OK\n");
    struct session *old = sess;
    ck_assert_int_eq(session_park(sess, &keep), 1);
    ck_assert_int_eq(pool.sessions.nspare, 1);
    ck_assert_ptr_eq(pool.sessions.spare[0], old);
    ck_assert_int_eq(pool.line.nspare, 1);         /* its buffers too */
    ck_assert_int_eq(pool.reply.nspare, 1);
    unsigned long allocs = pool.sessions.allocs;
    for (int i = 0; i < 10; i++) {
        sess = session_new_pooled(&pool, &test_store, &capture_io, &cap);
        ck_assert_ptr_eq(sess, old);
        session_unpark(sess, &keep);
        ck_assert_str_eq(talk("FIND a b\n"),
                         "b, a                           -- "
                         "123-45-6789    1\n");
        ck_assert_int_eq(session_park(sess, &keep), 1);
    }
    ck_assert_uint_eq(pool.sessions.allocs, allocs);
    sess = NULL;
}
END_TEST

/* What the connection keeps comes back: still unauthenticated after a
 * park, authenticated after AUTH and another, the wrong guesses counted
 * across them. */
START_TEST(test_session_park_keeps_its_facts)
{
    require_password("pw");
    sess->authed = 0;
    sess->auth_failures = 2;
    park_and_unpark();
    ck_assert_int_eq(sess->authed, 0);
    ck_assert_int_eq(sess->begun, 1);
    ck_assert_int_eq(sess->auth_failures, 2);
    ck_assert_str_eq(talk("COUNT\n"), "Error: authentication required\n");
    ck_assert_str_eq(talk("AUTH pw\n"), "OK\n");
    park_and_unpark();
    ck_assert_int_eq(sess->authed, 1);
    ck_assert_str_eq(talk("COUNT\n"), "0\n");
}
END_TEST

/* coarse's session holds the store lock all its life: parked, it still
 * does (begun is kept), and session_end_parked lets it go. */
START_TEST(test_session_park_coarse_keeps_the_lock)
{
    session_stop();
    session_pool_destroy(&pool);
    start(LOCK_MODE_COARSE);
    ck_assert_int_eq(store_lock_owned(&test_store), 1);
    ck_assert_int_eq(session_park(sess, &keep), 1);
    sess = NULL;
    ck_assert_int_eq(keep.begun, 1);
    ck_assert_int_eq(store_lock_owned(&test_store), 1);
    session_end_parked(&test_store, &keep);
    ck_assert_int_eq(keep.begun, 0);
    ck_assert_int_eq(store_lock_owned(&test_store), 0);
}
END_TEST

/* A partial request stays: nothing parks. */
START_TEST(test_session_park_refuses_partial_line)
{
    ck_assert_str_eq(talk("COU"), "");
    ck_assert_int_eq(session_park(sess, &keep), 0);
    ck_assert_str_eq(talk("NT\n"), "0\n");
    ck_assert_int_eq(session_park(sess, &keep), 1);
    sess = NULL;
}
END_TEST

/* An over-long line being discarded has no byte buffered, but a fresh
 * reader would take its tail for a request: nothing parks. */
START_TEST(test_session_park_refuses_overlong_line)
{
    static char big[LR_BUF_SIZE + 100];

    memset(big, 'x', sizeof(big) - 1);
    ck_assert_str_eq(talk(big), "Error: line too long\n");
    ck_assert_int_eq(lr_pending(&sess->in), 0);
    ck_assert_int_eq(session_park(sess, &keep), 0);
    /* The first COUNT ends the long line; only the second is one. */
    ck_assert_str_eq(talk("COUNT\nCOUNT\n"), "0\n");
    ck_assert_int_eq(session_park(sess, &keep), 1);
    sess = NULL;
}
END_TEST

/* A telnet command split across reads (IAC, then its verb): nothing
 * parks, and the second half is still taken for a command. */
START_TEST(test_session_park_refuses_split_telnet_command)
{
    ck_assert_str_eq(talk("\xff"), "");
    ck_assert_int_eq(session_park(sess, &keep), 0);
    ck_assert_str_eq(talk("\xf1" "COUNT\n"), "0\n");   /* IAC NOP */
    ck_assert_int_eq(session_park(sess, &keep), 1);
    sess = NULL;
}
END_TEST

/* Without a pool (a thread per connection) a session is never parked. */
START_TEST(test_session_park_needs_a_pool)
{
    talk("COUNT\n");
    session_set_pool(sess, NULL);
    ck_assert_int_eq(session_park(sess, &keep), 0);
    ck_assert_ptr_null(sess->in.buf);               /* buffers went back */
}
END_TEST

/* A quiet session would come back loud (session_new_pooled's are): it
 * stays whole instead. */
START_TEST(test_session_park_refuses_quiet)
{
    talk("COUNT\n");
    sess->quiet = 1;
    ck_assert_int_eq(session_park(sess, &keep), 0);
    ck_assert_int_eq(pool.sessions.nspare, 0);
}
END_TEST

static Suite *session_park_suite(void)
{
    Suite *s = suite_create("session_park");
    TCase *core = tcase_create("core");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_session_park_round_trip);
    tcase_add_test(core, test_session_park_keeps_its_facts);
    tcase_add_test(core, test_session_park_coarse_keeps_the_lock);
    tcase_add_test(core, test_session_park_refuses_partial_line);
    tcase_add_test(core, test_session_park_refuses_overlong_line);
    tcase_add_test(core, test_session_park_refuses_split_telnet_command);
    tcase_add_test(core, test_session_park_needs_a_pool);
    tcase_add_test(core, test_session_park_refuses_quiet);
    suite_add_tcase(s, core);
    return s;
}

SUITE_REGISTER(session_park_suite)
