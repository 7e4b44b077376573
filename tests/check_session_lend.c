/* check_session_lend.c -- unit tests for a session's borrowed buffers
 * (server/session_bufs.c): taken from its pool when bytes come, given back
 * by session_release only when nothing needs them (no input buffered, no
 * reply unsent, no request waiting), reused by the next request without
 * allocating, and wiped on the way back, session_free included. The
 * SHA-256 context is the pool's, made by the first DIGEST or AUTH; a
 * session without a pool makes its own then. A request's fields are its
 * thread's, pointed at only while it runs.
 */
#include <string.h>
#include "suites.h"
#include "sessiontest.h"
#include "../server/server.h"

static struct session_pool pool;

static void setup(void)
{
    session_start_mode(LOCK_MODE_BUFFERED, 0);
    session_pool_init(&pool, SESSION_POOL_SPARE);
    session_set_pool(sess, &pool);
}

static void teardown(void)
{
    session_stop();
    session_pool_destroy(&pool);
    srv.auth_required = 0;
}

/* A new session holds no buffer; after a request it gives both back, and
 * the next request takes the same two again. */
START_TEST(test_session_lend_round_trip)
{
    ck_assert_ptr_null(sess->in.buf);
    ck_assert_ptr_null(sess->out.buf);
    ck_assert_str_eq(talk("COUNT\n"), "0\n");
    ck_assert_ptr_nonnull(sess->in.buf);
    ck_assert_int_eq(session_release(sess), 1);
    ck_assert_ptr_null(sess->in.buf);
    ck_assert_ptr_null(sess->out.buf);
    ck_assert_int_eq(pool.line.nspare, 1);
    ck_assert_int_eq(pool.reply.nspare, 1);
    ck_assert_int_eq(session_release(sess), 1);     /* none: still fine */
    for (int i = 0; i < 10; i++) {
        ck_assert_str_eq(talk("ADD a b 1 123-45-6789\nFIND a b\nDELETE a b\n"),
                         "OK\nb, a                           -- "
                         "123-45-6789    1\nOK\n");
        ck_assert_int_eq(session_release(sess), 1);
    }
    ck_assert_uint_eq(pool.line.allocs, 1);         /* reused, never more */
    ck_assert_uint_eq(pool.reply.allocs, 1);
}
END_TEST

/* A partial request keeps the input buffer (and so both). */
START_TEST(test_session_lend_keeps_partial_input)
{
    ck_assert_str_eq(talk("COU"), "");
    ck_assert_int_eq(session_release(sess), 0);
    ck_assert_ptr_nonnull(sess->in.buf);
    ck_assert_str_eq(talk("NT\n"), "0\n");
    ck_assert_int_eq(session_release(sess), 1);
}
END_TEST

/* Replies not sent yet keep the reply buffer. */
START_TEST(test_session_lend_keeps_unsent_replies)
{
    capture_reset();
    session_input(sess, "COUNT\n", 6);
    ck_assert_int_eq(session_release(sess), 0);
    ck_assert_int_eq(session_flush(sess), 0);
    ck_assert_str_eq(cap.buf, "0\n");
    ck_assert_int_eq(session_release(sess), 1);
}
END_TEST

/* A request that waits (a wrong AUTH's delay, for a driver that never
 * blocks) keeps its buffers until it has run. */
START_TEST(test_session_lend_keeps_while_waiting)
{
    require_password("pw");
    sess->authed = 0;
    static const struct session_io loop_io = {     /* an event loop's */
        .send = capture_send, .send_locked = capture_send_locked,
        .never_waits = 1,
    };
    sess->io = &loop_io;
    talk("AUTH wrong\n");
    ck_assert_int_eq(session_waiting(sess), SESSION_WAITS_TIMER);
    ck_assert_int_eq(session_release(sess), 0);
    ck_assert_ptr_nonnull(sess->in.buf);
}
END_TEST

/* What goes back is wiped: after session_free with a request half-read
 * (an SSN in it), the spare buffers hold none of the bytes written into
 * them (the rest is as malloc left it). */
START_TEST(test_session_lend_free_wipes)
{
    static const char req[] = "ADD a b 1 123-45-6789";
    char *line, *reply;
    size_t in_dirty, out_dirty;

    talk("ADD c d 2 987-65-4321\n");
    talk(req);                          /* no newline: buffered */
    line = sess->in.buf;
    reply = sess->out.buf;
    in_dirty = sess->in.dirty;
    out_dirty = sess->out.dirty;
    ck_assert_uint_ge(in_dirty, 22);    /* the first request; the second
                                           went over it */
    ck_assert_uint_ge(out_dirty, 3);    /* "OK\n" */
    session_end(sess);
    session_free(sess);
    sess = NULL;
    store_destroy(&test_store);
    ck_assert_int_eq(pool.line.nspare, 1);
    ck_assert_ptr_eq(pool.line.spare[0], line);
    ck_assert_ptr_eq(pool.reply.spare[0], reply);
    for (size_t i = 0; i < in_dirty; i++)
        ck_assert_int_eq(line[i], 0);
    for (size_t i = 0; i < out_dirty; i++)
        ck_assert_int_eq(reply[i], 0);
    session_start_mode(LOCK_MODE_BUFFERED, 0);  /* for the teardown */
}
END_TEST

/* A request's fields are its thread's while it runs, and no session points
 * at them once it has run: an idle session holds none, and a request that
 * waits runs again without them. */
START_TEST(test_session_lend_request_fields_are_the_threads)
{
    ck_assert_ptr_null(sess->req);
    ck_assert_str_eq(talk("ADD a b 1 123-45-6789\nFIND a b\n"),
                     "OK\nb, a                           -- "
                     "123-45-6789    1\n");
    ck_assert_ptr_null(sess->req);
    ck_assert_str_eq(talk("\n"), "");                  /* a blank line */
    ck_assert_ptr_null(sess->req);
    ck_assert_str_eq(talk("FIND x y\n"), "Error: x y not found\n");
    ck_assert_ptr_null(sess->req);
}
END_TEST

/* No digest context until one is needed, then the pool's, shared: none of
 * the session's own. */
START_TEST(test_session_lend_digest_is_the_pools)
{
    ck_assert_ptr_null(pool.digest);
    ck_assert_str_eq(talk("ADD a b 1 123-45-6789\nCOUNT\n"), "OK\n1\n");
    ck_assert_ptr_null(pool.digest);
    ck_assert_ptr_null(sess->digest);
    const char *r = talk("DIGEST\n");
    ck_assert_uint_eq(strlen(r), DIGEST_HEX_LEN + 1);
    ck_assert_ptr_nonnull(pool.digest);
    ck_assert_ptr_null(sess->digest);
    struct digest *d = pool.digest;
    ck_assert_int_eq(digest_hex(d, "pw", 2, srv.password_hex), 0);
    srv.auth_required = 1;              /* AUTH takes the same one */
    ck_assert_str_eq(talk("AUTH pw\n"), "OK\n");
    ck_assert_ptr_eq(pool.digest, d);
    ck_assert_ptr_null(sess->digest);
}
END_TEST

/* Without a pool (a thread per connection) the session makes its own on
 * first use, and keeps it. */
START_TEST(test_session_lend_digest_without_pool)
{
    session_set_pool(sess, NULL);
    ck_assert_ptr_null(sess->digest);
    talk("COUNT\n");
    ck_assert_ptr_null(sess->digest);
    talk("DIGEST\n");
    struct digest *d = sess->digest;
    ck_assert_ptr_nonnull(d);
    talk("DIGEST\n");
    ck_assert_ptr_eq(sess->digest, d);
    ck_assert_ptr_null(pool.digest);
}
END_TEST

/* The thread driver's pool, shared by its session threads: buffers come
 * from it and go back to it wiped; the digest context is the session's
 * own and the session is never parked into it. */
START_TEST(test_session_lend_shared_pool)
{
    struct session_pool shared;

    ck_assert_int_eq(session_pool_init_shared(&shared, SESSION_POOL_SPARE), 0);
    session_set_pool(sess, &shared);
    ck_assert_str_eq(talk("ADD a b 1 123-45-6789\n"), "OK\n");
    char *line = sess->in.buf;
    size_t dirty = sess->in.dirty;
    ck_assert_int_eq(session_release(sess), 1);
    ck_assert_int_eq(shared.line.nspare, 1);
    ck_assert_ptr_eq(shared.line.spare[0], line);
    for (size_t i = 0; i < dirty; i++)
        ck_assert_int_eq(line[i], 0);
    ck_assert_str_eq(talk("COUNT\n"), "1\n");
    ck_assert_ptr_eq(sess->in.buf, line);          /* the same, again */
    talk("DIGEST\n");
    ck_assert_ptr_nonnull(sess->digest);
    ck_assert_ptr_null(shared.digest);
    struct session_keep k;
    ck_assert_int_eq(session_park(sess, &k), 0);
    ck_assert_int_eq(shared.line.nspare, 1);       /* buffers went back */
    session_stop();                     /* freed, not kept by the pool */
    ck_assert_int_eq(shared.sessions.nspare, 0);
    session_pool_destroy(&shared);
    session_start_mode(LOCK_MODE_BUFFERED, 0);  /* for the teardown */
}
END_TEST

static Suite *session_lend_suite(void)
{
    Suite *s = suite_create("session_lend");
    TCase *core = tcase_create("core");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_session_lend_round_trip);
    tcase_add_test(core, test_session_lend_keeps_partial_input);
    tcase_add_test(core, test_session_lend_keeps_unsent_replies);
    tcase_add_test(core, test_session_lend_keeps_while_waiting);
    tcase_add_test(core, test_session_lend_free_wipes);
    tcase_add_test(core, test_session_lend_request_fields_are_the_threads);
    tcase_add_test(core, test_session_lend_digest_is_the_pools);
    tcase_add_test(core, test_session_lend_digest_without_pool);
    tcase_add_test(core, test_session_lend_shared_pool);
    suite_add_tcase(s, core);
    return s;
}

SUITE_REGISTER(session_lend_suite)
