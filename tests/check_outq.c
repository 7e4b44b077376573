/* check_outq.c -- unit tests for server/net/outq.c, an event-driven
 * connection's pending output.
 *
 *   order:  byte runs, small and large, leave in the order queued, whole,
 *           over a socketpair;
 *   reuse:  with a pool (outq_use_pool), a small segment sent is kept for
 *           the next small push, wiped first (replies hold SSNs); a large
 *           one is not kept; the pool keeps at most 64 (its max);
 *   head:   outq_head and outq_advance, a send made elsewhere (the
 *           batched replies of econn_batch.c): the head's unsent bytes,
 *           part of a segment gone, then a segment and the next's start,
 *           then all (the segments back in the pool, wiped).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "suites.h"
#include "bufpool.h"
#include "../server/net/outq.h"

static int sv[2];
static struct bufpool pool;     /* as an event worker's outq_pool */

static void pair_setup(void)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    bufpool_init(&pool, OUTQ_SEG_SMALL, 64);
    outq_use_pool(&pool);
}

static void pair_teardown(void)
{
    outq_use_pool(NULL);
    bufpool_destroy(&pool);
    close(sv[0]);
    close(sv[1]);
}

/* Sends q whole and reads it back from the other end into buf. */
static size_t drain(struct outq *q, char *buf, size_t cap)
{
    size_t got = 0;

    while (q->bytes) {
        ssize_t n = outq_send(q, sv[0]);
        ck_assert_int_gt(n, 0);
    }
    while (got < cap) {
        ssize_t n = recv(sv[1], buf + got, cap - got, MSG_DONTWAIT);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

START_TEST(test_outq_order)
{
    static char big[5000], out[6000];
    struct outq q;

    memset(big, 'b', sizeof(big));
    outq_init(&q, NULL);
    ck_assert_int_eq(outq_push_bytes(&q, "OK\n", 3), 0);
    ck_assert_int_eq(outq_push_bytes(&q, big, sizeof(big)), 0);
    ck_assert_int_eq(outq_push_bytes(&q, "1\n", 2), 0);
    ck_assert_uint_eq(q.bytes, 3 + sizeof(big) + 2);
    ck_assert_uint_eq(drain(&q, out, sizeof(out)), 3 + sizeof(big) + 2);
    ck_assert_int_eq(memcmp(out, "OK\n", 3), 0);
    ck_assert_int_eq(memcmp(out + 3, big, sizeof(big)), 0);
    ck_assert_int_eq(memcmp(out + 3 + sizeof(big), "1\n", 2), 0);
    ck_assert_ptr_null(q.head);
    ck_assert_ptr_null(q.tail);
}
END_TEST

START_TEST(test_outq_reuse_wiped)
{
    static const char reply[] = "Doe John 33 123-45-6789\n";
    char out[64];
    struct outq q;

    outq_init(&q, NULL);
    ck_assert_int_eq(outq_push_bytes(&q, reply, sizeof(reply) - 1), 0);
    struct outq_seg *g = q.head;
    ck_assert_uint_eq(drain(&q, out, sizeof(out)), sizeof(reply) - 1);
    /* Kept, not freed: its bytes are already zero. */
    for (size_t i = 0; i < sizeof(reply) - 1; i++)
        ck_assert_int_eq(g->data[i], 0);
    ck_assert_int_eq(outq_push_bytes(&q, "OK\n", 3), 0);
    ck_assert_ptr_eq(q.head, g);                /* the same segment again */
    ck_assert_int_eq(memcmp(q.head->data, "OK\n", 3), 0);
    outq_clear(&q);
}
END_TEST

START_TEST(test_outq_large_not_kept)
{
    static char big[4096], out[5000];
    struct outq q;

    outq_init(&q, NULL);
    ck_assert_int_eq(outq_push_bytes(&q, big, sizeof(big)), 0);
    bufpool_destroy(&pool);
    ck_assert_uint_eq(drain(&q, out, sizeof(out)), sizeof(big));
    ck_assert_int_eq(pool.nspare, 0);
    /* Nothing kept: a small push gets a segment of its own (not big's,
     * which was freed; ASan would flag a reuse of freed memory). */
    ck_assert_int_eq(outq_push_bytes(&q, "OK\n", 3), 0);
    ck_assert_int_eq(memcmp(q.head->data, "OK\n", 3), 0);
    outq_clear(&q);
}
END_TEST

/* More small segments freed at once than the pool keeps: 64 (its max) are
 * kept, the rest freed; the kept ones are handed out again, last freed
 * first, before any new one; bufpool_destroy frees them all. */
START_TEST(test_outq_spare_bounded)
{
    enum { N = 100 };
    struct outq q;
    struct outq_seg *made[N];

    bufpool_destroy(&pool);
    outq_init(&q, NULL);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(outq_push_bytes(&q, "x", 1), 0);
        made[i] = q.tail;
    }
    ck_assert_int_eq(pool.nspare, 0);
    outq_clear(&q);
    ck_assert_int_eq(pool.nspare, 64);
    for (int i = 63; i >= 0; i--) {
        ck_assert_int_eq(outq_push_bytes(&q, "y", 1), 0);
        ck_assert_ptr_eq(q.tail, made[i]);
    }
    ck_assert_int_eq(pool.nspare, 0);
    outq_clear(&q);
    ck_assert_int_eq(pool.nspare, 64);
    bufpool_destroy(&pool);
    ck_assert_int_eq(pool.nspare, 0);
}
END_TEST

START_TEST(test_outq_head_advance)
{
    struct outq q;
    const char *p;
    size_t len;

    outq_init(&q, NULL);
    ck_assert_ptr_null(outq_head(&q, &len));
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(outq_push_bytes(&q, "hello", 5), 0);
    ck_assert_int_eq(outq_push_bytes(&q, "world\n", 6), 0);
    struct outq_seg *first = q.head;
    p = outq_head(&q, &len);
    ck_assert_uint_eq(len, 5);
    ck_assert_int_eq(memcmp(p, "hello", 5), 0);
    outq_advance(&q, 3);
    p = outq_head(&q, &len);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(memcmp(p, "lo", 2), 0);
    ck_assert_uint_eq(q.bytes, 8);
    outq_advance(&q, 4);                        /* "lo" and "wo" */
    p = outq_head(&q, &len);
    ck_assert_uint_eq(len, 4);
    ck_assert_int_eq(memcmp(p, "rld\n", 4), 0);
    ck_assert_int_eq(pool.nspare, 1);           /* the first, kept */
    ck_assert_int_eq(first->data[0], 0);        /* and wiped */
    outq_advance(&q, 4);
    ck_assert_ptr_null(outq_head(&q, &len));
    ck_assert_uint_eq(q.bytes, 0);
    ck_assert_ptr_null(q.tail);
    ck_assert_int_eq(pool.nspare, 2);
}
END_TEST

static Suite *outq_suite(void)
{
    Suite *s = suite_create("outq");
    TCase *t = tcase_create("outq");

    tcase_add_checked_fixture(t, pair_setup, pair_teardown);
    tcase_add_test(t, test_outq_order);
    tcase_add_test(t, test_outq_reuse_wiped);
    tcase_add_test(t, test_outq_large_not_kept);
    tcase_add_test(t, test_outq_spare_bounded);
    tcase_add_test(t, test_outq_head_advance);
    suite_add_tcase(s, t);
    return s;
}
SUITE_REGISTER(outq_suite)
