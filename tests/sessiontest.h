/* sessiontest.h -- a session core with no socket, for check_session.c and
 * check_lockmode.c: a store under a chosen policy, a session whose driver
 * is a capture buffer, and talk(), which feeds request text in and returns
 * every byte the "client" received. The capture also notes whether the
 * store lock was held by the sending thread at each send. static inline so
 * each test file takes only what it uses.
 */
#ifndef SSN_TESTS_SESSIONTEST_H
#define SSN_TESTS_SESSIONTEST_H

#include <string.h>
#include <check.h>
#include "../server/journal/journal.h"
#include "../server/lockmode.h"
#include "../server/server.h"
#include "../server/session.h"
#include "../server/store.h"

#define CAPTURE_MAX (4 << 20)   /* bytes a test's client can receive */

struct capture {
    struct store *st;
    size_t len;
    int sends;                  /* calls of the send hook */
    int sends_locked;           /* ... made while this thread held the lock */
    int fail;                   /* -errno to fail every send with, or 0 */
    char buf[CAPTURE_MAX + 1];
};

static struct store test_store;
static struct capture cap;
static struct session *sess;

static inline int capture_take(struct capture *c, const void *data,
                               size_t len)
{
    c->sends++;
    if (store_lock_owned(c->st))
        c->sends_locked++;
    if (c->fail)
        return c->fail;
    ck_assert_uint_le(c->len + len, CAPTURE_MAX);
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    c->buf[c->len] = '\0';
    return 0;
}

/* The ordinary way out: as the thread driver does, bytes that acknowledge
 * a journal record are taken only once it is durable. */
static inline int capture_send(void *arg, const void *data, size_t len,
                               uint64_t durable)
{
    struct capture *c = arg;

    if (durable) {
        int rc = journal_wait(c->st->journal, durable);
        if (rc)
            return rc;
    }
    return capture_take(c, data, len);
}

/* fine's streamed PRINT's way out. */
static inline int capture_send_locked(void *arg, const void *data,
                                      size_t len)
{
    return capture_take(arg, data, len);
}

/* The capture's hooks, given &cap. */
static const struct session_io capture_io = {
    .send = capture_send, .send_locked = capture_send_locked,
};

/* A store under mode's policy and a begun session on it. */
static inline void session_start_mode(enum lock_mode mode, int quiet)
{
    memset(&cap, 0, sizeof(cap));
    ck_assert_int_eq(digest_global_init(), 0);  /* once per process */
    ck_assert_int_eq(store_init(&test_store, &lock_policies[mode]), 0);
    cap.st = &test_store;
    sess = session_new(&test_store, &capture_io, &cap, quiet);
    ck_assert_ptr_nonnull(sess);
    ck_assert_int_eq(session_begin(sess), 0);
}

static inline void session_stop(void)
{
    session_end(sess);
    session_free(sess);
    sess = NULL;
    store_destroy(&test_store);
}

/* From now on sessions begin unauthenticated, pw their password. */
static inline void require_password(const char *pw)
{
    struct digest *d = digest_new();

    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(digest_hex(d, pw, strlen(pw), srv.password_hex), 0);
    digest_free(d);
    srv.auth_required = 1;
}

/* Clears what the client has received so far. */
static inline void capture_reset(void)
{
    cap.len = 0;
    cap.buf[0] = '\0';
    cap.sends = cap.sends_locked = 0;
}

/* Feeds text in one piece, sends the batch's replies as a driver would and
 * returns everything the client received for it. */
static inline const char *talk(const char *text)
{
    capture_reset();
    session_input(sess, text, strlen(text));
    session_flush(sess);
    return cap.buf;
}

#endif
