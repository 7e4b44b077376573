/* check_cmd_round.c -- unit tests for a worker's round (server/cmd_hold.c,
 * session_round): the simple requests of many sessions, one in flight
 * each, answered under one hold of the store lock per batch_max + 1 of
 * them; any other request runs with the round's hold released; nothing is
 * sent while a round holds the lock; and with --batch 1 (batch_max 0)
 * every request still takes the lock alone.
 */
#include <stdio.h>
#include <string.h>
#include <check.h>
#include "suites.h"
#include "../server/commands.h"
#include "../server/lockmode.h"
#include "../server/session.h"
#include "../server/store.h"

#define NSESS 40

struct sink {
    char buf[4096];
    size_t len;
    int sends, sends_locked;
};

static struct store st;
static struct session *ss[NSESS];
static struct sink sinks[NSESS];

static int sink_send(void *arg, const void *data, size_t len,
                     uint64_t durable)
{
    struct sink *k = arg;
    (void)durable;

    k->sends++;
    if (store_lock_owned(&st))
        k->sends_locked++;
    ck_assert_uint_le(k->len + len, sizeof(k->buf) - 1);
    memcpy(k->buf + k->len, data, len);
    k->len += len;
    k->buf[k->len] = '\0';
    return 0;
}

static int sink_send_locked(void *arg, const void *data, size_t len)
{
    return sink_send(arg, data, len, 0);
}

static void start(int batch_max)
{
    ck_assert_int_eq(digest_global_init(), 0);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_BUFFERED]), 0);
    memset(sinks, 0, sizeof(sinks));
    for (int i = 0; i < NSESS; i++) {
        static const struct session_io io = {
            .send = sink_send, .send_locked = sink_send_locked,
        };
        ss[i] = session_new(&st, &io, &sinks[i], 0);
        ck_assert_ptr_nonnull(ss[i]);
        ck_assert_int_eq(session_begin(ss[i]), 0);
        session_set_batch(ss[i], batch_max);
    }
}

static void stop(void)
{
    for (int i = 0; i < NSESS; i++) {
        session_end(ss[i]);
        session_free(ss[i]);
    }
    store_destroy(&st);
}

/* text arrives on session i, unanswered (as econn.c's on_read leaves it). */
static void arrive(int i, const char *text)
{
    size_t room, n = strlen(text);
    char *p = session_recv_space(ss[i], &room);

    ck_assert_ptr_nonnull(p);
    ck_assert_uint_le(n, room);
    memcpy(p, text, n);
    session_received_bytes(ss[i], n);
}

/* What a round's done callback saw. */
static struct {
    size_t had[NSESS];          /* each sink's bytes before the round */
    int sends;                  /* PRINT may send during the round */
    int order[NSESS], ndone;    /* the sessions, in the order released */
    size_t last_pending;        /* the last session's unanswered bytes when
                                   the first was released */
} rd;

/* As econn_round.c's send_out: the driver sends session i's replies. No
 * store lock may be held then, and with only batchable requests nothing
 * of session i's may have left before. */
static void round_done(int i, int more, void *arg)
{
    (void)more; (void)arg;
    ck_assert(!store_lock_owned(&st));
    ck_assert(!cmd_round_holding());
    if (!rd.sends)
        ck_assert_uint_eq(sinks[i].len, rd.had[i]);
    if (rd.ndone == 0)
        rd.last_pending = lr_pending(&ss[NSESS - 1]->in);
    rd.order[rd.ndone++] = i;
    session_flush(ss[i]);
}

/* One round over sessions [0, n), by session_round as econn_round_run
 * runs it; returns the store lock's acquisitions it made. */
static uint64_t run_round_sending(int n, int sends)
{
    uint64_t before = st.stats.acquisitions;

    memset(&rd, 0, sizeof(rd));
    rd.sends = sends;
    for (int i = 0; i < n; i++)
        rd.had[i] = sinks[i].len;
    session_round(ss, n, 0, round_done, NULL, NULL);
    ck_assert(!store_lock_owned(&st));
    ck_assert_int_eq(rd.ndone, n);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(rd.order[i], i);
    return st.stats.acquisitions - before;
}

static uint64_t run_round(int n)
{
    return run_round_sending(n, 0);
}

static void add_line(char *buf, size_t len, int k)
{
    snprintf(buf, len, "ADD f%d l%d %d 123-45-%04d\n", k, k, 20 + k % 50, k);
}

/* Sessions [0, n) each get an ADD of their own person. */
static void arrive_adds(int n)
{
    char line[64];

    for (int i = 0; i < n; i++) {
        add_line(line, sizeof(line), i);
        arrive(i, line);
    }
}

/* Ten sessions, an ADD each: one hold for all ten, each its own OK. */
START_TEST(test_round_one_hold_for_many_sessions)
{
    start(31);
    arrive_adds(10);
    ck_assert_uint_eq(run_round(10), 1);
    for (int i = 0; i < 10; i++) {
        ck_assert_str_eq(sinks[i].buf, "OK\n");
        ck_assert_int_eq(sinks[i].sends_locked, 0);
    }
    arrive(0, "COUNT\n");
    ck_assert_uint_eq(run_round(1), 1);
    ck_assert_str_eq(sinks[0].buf, "OK\n10\n");
    stop();
}
END_TEST

/* A hold covers batch_max + 1 requests: 40 of them under batch_max 15
 * are three holds, and every one is answered in its session's order. */
START_TEST(test_round_hold_is_bounded)
{
    char line[64];

    start(15);
    arrive_adds(NSESS);
    ck_assert_uint_eq(run_round(NSESS), 3);
    ck_assert_uint_gt(rd.last_pending, 0);  /* session 0's replies left
                                               before session 39 ran */
    for (int i = 0; i < NSESS; i++)
        ck_assert_str_eq(sinks[i].buf, "OK\n");
    for (int i = 0; i < NSESS; i++) {
        snprintf(line, sizeof(line), "FIND f%d l%d\nDELETE f%d l%d\n", i, i,
                 i, i);
        arrive(i, line);
    }
    ck_assert_uint_eq(run_round(NSESS), 5);     /* 80 requests */
    for (int i = 0; i < NSESS; i++) {
        ck_assert_ptr_nonnull(strstr(sinks[i].buf, "123-45-"));
        ck_assert_str_eq(sinks[i].buf + sinks[i].len - 4, "\nOK\n");
    }
    stop();
}
END_TEST

/* A request that is not a batch's (PRINT sends, STATS is long) runs with
 * the round's hold released: the round's lock is taken again after it,
 * and nothing is ever sent with the lock held. */
START_TEST(test_round_releases_for_other_requests)
{
    char line[64];

    start(31);
    add_line(line, sizeof(line), 1);
    arrive(0, line);
    arrive(1, "PRINT\n");
    add_line(line, sizeof(line), 2);
    arrive(2, line);
    arrive(3, "COUNT\nSTATS\nCOUNT\n");
    /* ADD; PRINT's own; ADD and COUNT; STATS's; COUNT */
    ck_assert_uint_eq(run_round_sending(4, 1), 5);
    ck_assert_str_eq(sinks[0].buf, "OK\n");
    ck_assert_ptr_nonnull(strstr(sinks[1].buf, "123-45-0001"));
    ck_assert_str_eq(sinks[2].buf, "OK\n");
    ck_assert(strncmp(sinks[3].buf, "2\n", 2) == 0);
    ck_assert_str_eq(sinks[3].buf + sinks[3].len - 2, "2\n");
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(sinks[i].sends_locked, 0);
    stop();
}
END_TEST

/* --batch 1: no round holds the lock for anyone, one hold a request. */
START_TEST(test_round_off_with_batch_one)
{
    start(0);
    arrive_adds(10);
    ck_assert_uint_eq(run_round(10), 10);
    for (int i = 0; i < 10; i++)
        ck_assert_str_eq(sinks[i].buf, "OK\n");
    stop();
}
END_TEST

/* Twenty sessions FIND people whose lines are alike but for the digits:
 * each gets its own person's SSN, the one its own line names, whether
 * the round's look-ahead parsed the line or the session did. */
START_TEST(test_round_each_gets_its_own_answer)
{
    char line[64];

    start(31);
    arrive_adds(20);
    ck_assert_uint_eq(run_round(20), 1);
    for (int i = 0; i < 20; i++) {
        snprintf(line, sizeof(line), "FIND f%d l%d\r\n", 19 - i, 19 - i);
        arrive(i, line);
    }
    ck_assert_uint_eq(run_round(20), 1);
    for (int i = 0; i < 20; i++) {
        snprintf(line, sizeof(line), "123-45-%04d", 19 - i);
        ck_assert_msg(strstr(sinks[i].buf, line), "session %d: %s", i,
                      sinks[i].buf);
    }
    stop();
}
END_TEST

static int zeros(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i])
            return 0;
    return 1;
}

/* A line the look-ahead parsed is taken by its bytes, not by where they
 * were: a line of the same length that differs is parsed anew. What was
 * kept (an ADD's SSN among it) is wiped once taken, passed over or given
 * up. */
START_TEST(test_kept_taken_by_bytes_and_wiped)
{
    static const char in[] =
        "ADD Ann Lee 30 123-45-6789\nTOOLONG\nFIND Bob Day\n"
        "FIND Cid Fox\n";
    struct store_kept kept;
    struct store_prefetch pf;
    struct proto_req req;
    struct person p;
    uint64_t h = 0;

    memset(&kept, 0, sizeof(kept));
    start(31);
    cmd_round_begin(ss, 1, &kept);
    store_prefetch_clear(&pf);
    pf.kept = &kept;
    ck_assert_int_eq(store_prefetch_parse_more(&st, &pf, in, sizeof(in) - 1,
                                               0), 3);
    ck_assert_int_eq(kept.n, 3);        /* TOOLONG is not a lookup */
    ck_assert(!cmd_kept_take("FIND Bob Dax", 12, &req, &p, &h));
    ck_assert(cmd_kept_take("ADD Ann Lee 30 123-45-6789", 26, &req, &p, &h));
    ck_assert_int_eq(req.cmd, PROTO_ADD);
    ck_assert_str_eq(p.first, "Ann");
    ck_assert_str_eq(p.last, "Lee");
    ck_assert_int_eq(p.age, 30);
    ck_assert_str_eq(p.ssn, "123-45-6789");
    ck_assert(zeros(kept.l[0].line, sizeof(kept.l[0].line)));
    ck_assert(zeros(kept.l[0].who.ssn, sizeof(kept.l[0].who.ssn)));
    ck_assert(!cmd_kept_take("ADD Ann Lee 30 123-45-6789", 26, &req, &p, &h));
    /* Bob's line is passed over (as one too long would be): wiped. */
    ck_assert(cmd_kept_take("FIND Cid Fox", 12, &req, &p, &h));
    ck_assert_int_eq(req.cmd, PROTO_FIND);
    ck_assert_str_eq(p.first, "Cid");
    /* With its names' hash in the index: FIND's lookup needs no other. */
    ck_assert_uint_eq(h, sindex_hash(&st.index, "Fox", "Cid"));
    ck_assert(zeros(kept.l[1].line, sizeof(kept.l[1].line)));
    ck_assert_int_eq(kept.next, 3);
    /* Given up: what no session took is wiped when the round ends. */
    store_prefetch_clear(&pf);
    pf.kept = &kept;
    ck_assert_int_eq(store_prefetch_parse_more(&st, &pf, in, 27, 0), 1);
    store_kept_wipe(&kept);
    ck_assert_int_eq(kept.n, 0);
    ck_assert(zeros(kept.l[0].line, sizeof(kept.l[0].line)));
    ck_assert(zeros(kept.l[0].who.ssn, sizeof(kept.l[0].who.ssn)));
    cmd_round_end();
    ck_assert(!cmd_kept_take("FIND Cid Fox", 12, &req, &p, &h));   /* no round */
    stop();
}
END_TEST

static Suite *cmd_round_suite(void)
{
    Suite *s = suite_create("cmd_round");
    TCase *core = tcase_create("core");

    tcase_add_test(core, test_round_one_hold_for_many_sessions);
    tcase_add_test(core, test_round_hold_is_bounded);
    tcase_add_test(core, test_round_releases_for_other_requests);
    tcase_add_test(core, test_round_off_with_batch_one);
    tcase_add_test(core, test_round_each_gets_its_own_answer);
    tcase_add_test(core, test_kept_taken_by_bytes_and_wiped);
    suite_add_tcase(s, core);
    return s;
}

SUITE_REGISTER(cmd_round_suite)
