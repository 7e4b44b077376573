/* check_session.c -- unit tests for the session core (server/session.c,
 * commands.c, print.c) with no socket at all: request text in, the exact
 * bytes a client would receive out. Every command, pipelined batches, blank
 * lines, over-long lines split across receives, QUIT with bytes after it,
 * quiet mode, a client that cannot be written to, and exactly one reply per
 * request when memory runs out. Each mode's PRINT is in check_lockmode.c;
 * AUTH, telnet's bytes and names a terminal could act on in
 * check_session_auth.c. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/resource.h>
#include "suites.h"
#include "sessiontest.h"
#include "proto.h"
#include "../server/server.h"

#define HEAD ENTRY_PRINT_HEAD
#define TAIL ENTRY_PRINT_TAIL
#define SMITH "Smith, John                    -- 123-45-6789   30\n"
#define DOE   "Doe, Jane                      -- 000-00-0000  150\n"

static void setup_fine(void)
{
    session_start_mode(LOCK_MODE_FINE, 0);
}

static void teardown(void)
{
    session_stop();
}

/* ---- every command, in every mode -------------------------------------- */

START_TEST(test_session_every_command)
{
    session_start_mode((enum lock_mode)_i, 0);
    ck_assert_str_eq(talk("ADD John Smith 30 123-45-6789\n"), "OK\n");
    ck_assert_str_eq(talk("ADD Jane Doe 150 000-00-0000\n"), "OK\n");
    ck_assert_str_eq(talk("ADD John Smith 31 111-11-1111\n"),
                     "Error: John Smith already exists\n");
    ck_assert_str_eq(talk("FIND John Smith\n"), SMITH);
    ck_assert_str_eq(talk("FIND No Body\n"), "Error: No Body not found\n");
    ck_assert_str_eq(talk("COUNT\n"), "2\n");
    ck_assert_str_eq(talk("CHECK\n"), "OK 2 entries, all invariants hold\n");
    ck_assert_str_eq(talk("PRINT\n"), HEAD DOE SMITH TAIL);
    /* sha256 of "Doe Jane 150 000-00-0000\nSmith John 30 123-45-6789\n" */
    ck_assert_str_eq(talk("DIGEST\n"), "ffd591d4bfd47f2efa863c41588fb217"
                     "530184a91091a7bd66380199b5a7e3d2\n");
    ck_assert_str_eq(talk("DELETE John Smith\n"), "OK\n");
    ck_assert_str_eq(talk("DELETE John Smith\n"), "Error: John Smith not found\n");
    ck_assert_str_eq(talk("CHECK\n"), "OK 1 entry, all invariants hold\n");
    ck_assert_str_eq(talk("HELP\n"), proto_help_text);
    ck_assert_str_eq(talk("bogus\n"), "Error: Bad command: bogus\n");
    ck_assert_str_eq(talk("FIND John\n"), "Error: usage: FIND first last\n");

    const char *stats = talk("STATS\n");
    char mode[32];
    snprintf(mode, sizeof(mode), "mode %s\n", lock_policies[_i].name);
    ck_assert_ptr_eq(strstr(stats, mode), stats);
    ck_assert_ptr_nonnull(strstr(stats, "\nentries 1\n"));
    ck_assert_str_eq(stats + strlen(stats) - 4, PROTO_END_LINE);

    ck_assert_str_eq(talk("QUIT\n"), "Bye\n");
    ck_assert_int_eq(sess->ending, 1);
    session_stop();
}
END_TEST

/* ---- batches and framing ----------------------------------------------- */

START_TEST(test_session_pipelined_batch_one_send)
{
    const char *out = talk("ADD John Smith 30 123-45-6789\nCOUNT\n"
                           "FIND John Smith\nDELETE John Smith\nCOUNT\n");

    ck_assert_str_eq(out, "OK\n1\n" SMITH "OK\n0\n");
    ck_assert_int_eq(cap.sends, 1);             /* the batch in one write */
}
END_TEST

START_TEST(test_session_replies_wait_for_the_driver)
{
    capture_reset();
    ck_assert_int_eq(session_input(sess, "COUNT\nCOUNT\n", 12), 0);
    ck_assert_int_eq(cap.sends, 0);             /* nothing sent by itself */
    size_t len;
    const char *out = session_output(sess, &len);
    ck_assert_uint_eq(len, 4);
    ck_assert_int_eq(memcmp(out, "0\n0\n", 4), 0);
    session_output_sent(sess, 2);               /* a partial write */
    out = session_output(sess, &len);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(memcmp(out, "0\n", 2), 0);
    session_output_sent(sess, 2);
    session_output(sess, &len);
    ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(test_session_blank_lines_get_no_reply)
{
    ck_assert_str_eq(talk("\n  \n\t\n\r\nCOUNT\n\n"), "0\n");
}
END_TEST

START_TEST(test_session_request_split_across_receives)
{
    const char *parts[] = { "AD", "D John Sm", "ith 30 123-4", "5-6789", "\r",
                            "\nCOU", "NT", "\n" };

    capture_reset();
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        session_input(sess, parts[i], strlen(parts[i]));
    session_flush(sess);
    ck_assert_str_eq(cap.buf, "OK\n1\n");
}
END_TEST

START_TEST(test_session_overlong_line_split_across_receives)
{
    char chunk[700];

    memset(chunk, 'x', sizeof(chunk));
    capture_reset();
    for (int i = 0; i < 5; i++)                 /* 3500 bytes, no newline */
        session_input(sess, chunk, sizeof(chunk));
    session_input(sess, "tail\nCOUNT\n", 11);
    session_flush(sess);
    ck_assert_str_eq(cap.buf, "Error: line too long\n0\n");

    /* Exactly the limit is fine; one more byte is not. */
    char line[PROTO_MAX_LINE + 3];
    memset(line, ' ', PROTO_MAX_LINE);
    memcpy(line + PROTO_MAX_LINE - 5, "COUNT", 5);
    line[PROTO_MAX_LINE] = '\n';
    line[PROTO_MAX_LINE + 1] = '\0';
    ck_assert_str_eq(talk(line), "0\n");
    memmove(line + 1, line, PROTO_MAX_LINE + 2);
    ck_assert_str_eq(talk(line), "Error: line too long\n");
}
END_TEST

START_TEST(test_session_quit_ignores_what_follows)
{
    ck_assert_str_eq(talk("COUNT\nQUIT\nADD John Smith 30 123-45-6789\n"),
                     "0\nBye\n");
    ck_assert_int_eq(sess->ending, 1);
    ck_assert_int_eq(session_input(sess, "COUNT\n", 6), 1);
    session_flush(sess);
    ck_assert_str_eq(cap.buf, "0\nBye\n");      /* nothing more answered */
    ck_assert_int_eq(test_store.tree.count, 0); /* the ADD never ran */
}
END_TEST

START_TEST(test_session_done_is_quit)
{
    ck_assert_str_eq(talk("done\n"), "Bye\n");
    ck_assert_int_eq(sess->ending, 1);
}
END_TEST

START_TEST(test_session_quiet_drops_ok_and_bye)
{
    session_stop();
    session_start_mode(LOCK_MODE_BUFFERED, 1);
    ck_assert_str_eq(talk("ADD John Smith 30 123-45-6789\nDELETE No One\n"
                          "COUNT\nQUIT\n"), "Error: No One not found\n1\n");
    ck_assert_int_eq(sess->ending, 1);
}
END_TEST

/* ---- failures ----------------------------------------------------------- */

START_TEST(test_session_send_failure_ends_session)
{
    cap.fail = -EPIPE;
    ck_assert_int_eq(session_input(sess, "COUNT\n", 6), 0);
    ck_assert_int_eq(session_flush(sess), -EPIPE);
    ck_assert_int_eq(sess->ending, 1);
    ck_assert_int_eq(session_input(sess, "ADD a b 1 123-45-6789\n", 22), 1);
    ck_assert_int_eq(test_store.tree.count, 0);
}
END_TEST

/* Past the high-water mark a batch's replies leave before it ends. */
START_TEST(test_session_high_water_sends_mid_batch)
{
    enum { N = SESSION_OUT_HIGH_WATER * 3 / 4 }; /* 2N bytes of "0\n" */
    static char batch[N * 6 + 1];

    for (int i = 0; i < N; i++)
        memcpy(batch + 6 * i, "COUNT\n", 6);
    capture_reset();
    session_input(sess, batch, 6 * N);
    ck_assert_int_ge(cap.sends, 1);             /* before the batch ended */
    ck_assert_uint_lt(cap.len, 2 * N);
    session_flush(sess);
    ck_assert_uint_eq(cap.len, 2 * N);
}
END_TEST

/* Store-lock acquisitions so far (this read's own among them). */
static uint64_t acquisitions(void)
{
    struct store_lock_figures f;

    ck_assert_int_eq(store_lock(&test_store), 0);
    store_lock_figures_locked(&test_store, &f);
    ck_assert_int_eq(store_unlock(&test_store), 0);
    return f.acquisitions;
}

/* session_set_batch: one hold covers a run of ADD, DELETE, FIND and COUNT
 * already buffered; any other request ends the run; the lock is never
 * held across a send, nor after the slice; the replies are unchanged. */
START_TEST(test_session_batch_one_hold)
{
    const char *run = "ADD A One 1 111-11-1111\nFIND A One\nFIND B Two\n"
                      "COUNT\nDELETE A One\n";
    const char *replies = "OK\n" "One, A                         --"
                          " 111-11-1111    1\n" "Error: B Two not found\n1\nOK\n";
    uint64_t a0 = acquisitions();

    ck_assert_str_eq(talk(run), replies);
    ck_assert_uint_eq(acquisitions() - a0, 5 + 1);     /* one per request */

    session_set_batch(sess, 31);
    a0 = acquisitions();
    ck_assert_str_eq(talk(run), replies);
    ck_assert_uint_eq(acquisitions() - a0, 1 + 1);     /* one for all */
    ck_assert_int_eq(sess->batch_kept, 0);

    a0 = acquisitions();                /* CHECK splits the run in two */
    talk("COUNT\nCOUNT\nCHECK\nCOUNT\nCOUNT\n");
    ck_assert_uint_eq(acquisitions() - a0, 3 + 1);

    session_set_batch(sess, 1);         /* at most 2 requests a hold */
    a0 = acquisitions();
    talk("COUNT\nCOUNT\nCOUNT\nCOUNT\nCOUNT\n");
    ck_assert_uint_eq(acquisitions() - a0, 3 + 1);
    ck_assert_int_eq(cap.sends_locked, 0);
}
END_TEST

/* A batch whose replies reach the high-water mark mid-batch: the lock is
 * let go before each send. */
START_TEST(test_session_batch_never_sends_locked)
{
    enum { N = SESSION_OUT_HIGH_WATER * 3 / 4 };
    static char batch[N * 6 + 1];

    session_set_batch(sess, 31);
    for (int i = 0; i < N; i++)
        memcpy(batch + 6 * i, "COUNT\n", 6);
    capture_reset();
    session_input(sess, batch, 6 * N);
    ck_assert_int_ge(cap.sends, 1);
    session_flush(sess);
    ck_assert_uint_eq(cap.len, 2 * N);
    ck_assert_int_eq(cap.sends_locked, 0);
    ck_assert_int_eq(sess->batch_kept, 0);
}
END_TEST

/* Fills the store with n people named p0..p(n-1) Smith. */
static void fill(int n)
{
    char line[64];

    for (int i = 0; i < n; i++) {
        snprintf(line, sizeof(line), "ADD p%d Smith 1 123-45-6789\n", i);
        ck_assert_str_eq(talk(line), "OK\n");
    }
}

#ifndef SSN_SANITIZED
/* PRINT when memory runs out while formatting the listing: one error
 * line, never a cut listing, and the requests after it still get their own
 * replies. The address-space limit makes the listing's growing buffer
 * (mmap-sized after a few doublings) fail for real; this test runs in its
 * own process (check's fork mode). Not in the sanitizer builds:
 * AddressSanitizer's shadow memory needs far more address space than the
 * limit set here. */
START_TEST(test_session_out_of_memory_is_one_reply)
{
    struct rlimit rl;
    long pages;
    FILE *f;

    session_stop();
    session_start_mode(LOCK_MODE_BUFFERED, 0);
    fill(4000);                         /* a listing of about 200 KB */
    f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%ld", &pages), 1);
    fclose(f);
    rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE)
                                + 64 * 1024;
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
    ck_assert_str_eq(talk("COUNT\nPRINT\nCOUNT\n"),
                     "4000\nError: out of memory\n4000\n");
    ck_assert_int_eq(sess->ending, 0);
}
END_TEST
#endif

/* A reply larger than the output limit is replaced by the limit's error,
 * and the session ends there. */
START_TEST(test_session_output_limit_ends_session)
{
    session_stop();
    session_start_mode(LOCK_MODE_BUFFERED, 0);
    session_set_output_limit(sess, 512);        /* HELP is larger */
    ck_assert_str_eq(talk("COUNT\nHELP\nCOUNT\n"),
                     "0\nError: output limit exceeded\n");
    ck_assert_int_eq(sess->ending, 1);  /* and the COUNT was not answered */
    ck_assert_int_eq(sess->output_limited, 1);
}
END_TEST

/* Replies the server batched are no client's fault: a pipelined batch
 * larger than the limit goes out in parts, all of it answered. */
START_TEST(test_session_output_limit_spares_batches)
{
    enum { N = 3000 };                  /* 6000 bytes of "0\n" */
    static char batch[N * 6 + 8];

    session_set_output_limit(sess, SESSION_OUT_INITIAL);
    for (int i = 0; i < N; i++)
        memcpy(batch + 6 * i, "COUNT\n", 6);
    strcpy(batch + 6 * N, "HELP\n");
    talk(batch);
    ck_assert_uint_eq(cap.len, 2 * N + strlen(proto_help_text));
    ck_assert_int_eq(sess->ending, 0);
    ck_assert_int_eq(sess->output_limited, 0);
}
END_TEST

/* A PRINT listing larger than the limit is refused the same way. */
START_TEST(test_session_print_over_output_limit)
{
    session_stop();
    session_start_mode(LOCK_MODE_BUFFERED, 0);
    fill(200);                          /* about 10 KB */
    session_set_output_limit(sess, SESSION_OUT_INITIAL);
    ck_assert_str_eq(talk("COUNT\nPRINT\nCOUNT\n"),
                     "200\nError: output limit exceeded\n");
    ck_assert_int_eq(sess->output_limited, 1);
}
END_TEST

/* A buffer that grew is given back once sent. (Large replies do not grow
 * it in this driver: PRINT streams or shares one listing, and a batch is
 * sent every SESSION_OUT_HIGH_WATER bytes; this is the safety net.) */
START_TEST(test_session_buffer_shrinks_after_large_reply)
{
    ck_assert_int_eq(ob_reserve(&sess->out, 4 * SESSION_OUT_SHRINK), 0);
    ck_assert_uint_gt(sess->out.cap, SESSION_OUT_SHRINK);
    ck_assert_str_eq(talk("COUNT\n"), "0\n");
    ck_assert_uint_eq(sess->out.cap, SESSION_OUT_INITIAL);
}
END_TEST

static Suite *session_suite(void)
{
    Suite *s = suite_create("session");
    TCase *modes = tcase_create("modes");
    TCase *core = tcase_create("core");
    TCase *errors = tcase_create("errors");

    tcase_add_loop_test(modes, test_session_every_command, 0, LOCK_MODES);

    tcase_add_checked_fixture(core, setup_fine, teardown);
    tcase_add_test(core, test_session_pipelined_batch_one_send);
    tcase_add_test(core, test_session_replies_wait_for_the_driver);
    tcase_add_test(core, test_session_blank_lines_get_no_reply);
    tcase_add_test(core, test_session_request_split_across_receives);
    tcase_add_test(core, test_session_overlong_line_split_across_receives);
    tcase_add_test(core, test_session_quit_ignores_what_follows);
    tcase_add_test(core, test_session_done_is_quit);
    tcase_add_test(core, test_session_quiet_drops_ok_and_bye);
    tcase_add_test(core, test_session_high_water_sends_mid_batch);
    tcase_add_test(core, test_session_buffer_shrinks_after_large_reply);

    tcase_add_checked_fixture(errors, setup_fine, teardown);
    tcase_add_test(errors, test_session_send_failure_ends_session);
#ifndef SSN_SANITIZED         /* the test's own comment says why */
    tcase_add_test(errors, test_session_out_of_memory_is_one_reply);
#endif
    tcase_add_test(errors, test_session_output_limit_ends_session);
    tcase_add_test(errors, test_session_output_limit_spares_batches);
    tcase_add_test(errors, test_session_print_over_output_limit);
    tcase_add_test(core, test_session_batch_one_hold);
    tcase_add_test(core, test_session_batch_never_sends_locked);

    suite_add_tcase(s, modes);
    suite_add_tcase(s, core);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(session_suite)
