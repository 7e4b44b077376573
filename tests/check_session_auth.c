/* check_session_auth.c -- unit tests for what the session core
 * (server/session.c, commands.c, auth.c) does with what a client may not
 * be trusted with: AUTH before anything else, QUIT before it, telnet's
 * Ctrl-C, names with bytes a terminal would act on (C1 controls, bytes
 * outside UTF-8, bidirectional overrides), and error replies that never
 * echo a raw byte. Request text in, the exact bytes out, no socket. */
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "sessiontest.h"
#include "proto.h"
#include "../server/server.h"

static void setup_fine(void)
{
    session_start_mode(LOCK_MODE_FINE, 0);
}

static void teardown(void)
{
    session_stop();
}

/* ---- authentication and telnet --------------------------------------- */

START_TEST(test_session_auth_required_first)
{
    session_stop();
    require_password("s3cret");
    session_start_mode(LOCK_MODE_BUFFERED, 0);
    ck_assert_str_eq(talk("COUNT\nPRINT\nDIGEST\nSTATS\nTREE\n"
                          "ADD a b 1 123-45-6789\n"),
                     "Error: authentication required\n"
                     "Error: authentication required\n"
                     "Error: authentication required\n"
                     "Error: authentication required\n"
                     "Error: authentication required\n"
                     "Error: authentication required\n");
    ck_assert_str_eq(talk("HELP\n"), proto_help_text);
    ck_assert_str_eq(talk("AUTH s3cre\nAUTH s3cret!\nAUTH\n"),
                     "Error: invalid password\nError: invalid password\n"
                     "Error: usage: AUTH password\n");
    ck_assert_str_eq(talk("COUNT\n"), "Error: authentication required\n");
    ck_assert_str_eq(talk("AUTH s3cret\nCOUNT\n"), "OK\n0\n");
    ck_assert_str_eq(talk("QUIT\n"), "Bye\n");
}
END_TEST

START_TEST(test_session_auth_without_password_set)
{
    ck_assert_str_eq(talk("AUTH x\nCOUNT\n"),
                     "Error: no password is set\n0\n");
}
END_TEST

START_TEST(test_session_quit_before_auth)
{
    session_stop();
    require_password("pw");
    session_start_mode(LOCK_MODE_FINE, 0);
    ck_assert_str_eq(talk("QUIT\n"), "Bye\n");
    ck_assert_int_eq(sess->ending, 1);
}
END_TEST

/* A C1 control in UTF-8 (0xC2 0x9B: CSI) or a lone 0x9B (the 8-bit CSI)
 * would reach every client that PRINTs: ADD refuses them and any byte
 * outside UTF-8; FIND and DELETE take them (an older journal may hold
 * one) and their "not found" shows them as '?', as does "Bad command". */
START_TEST(test_session_c1_names)
{
    ck_assert_str_eq(talk("ADD a\xc2\x9b" "2J b 3 123-45-6789\n"),
                     "Error: bad first name: UTF-8 text only, no control "
                     "characters\n");
    ck_assert_str_eq(talk("ADD a b\xc2\x85 3 123-45-6789\n"),
                     "Error: bad last name: UTF-8 text only, no control "
                     "characters\n");
    ck_assert_str_eq(talk("ADD a\x9b" "2J b 3 123-45-6789\n"),
                     "Error: bad first name: UTF-8 text only, no control "
                     "characters\n");
    ck_assert_str_eq(talk("ADD a Zo\xeb 3 123-45-6789\n"),
                     "Error: bad last name: UTF-8 text only, no control "
                     "characters\n");
    ck_assert_str_eq(talk("ADD Smith\xe2\x80\xae" "nhoJ b 3 123-45-6789\n"),
                     "Error: bad first name: UTF-8 text only, no control "
                     "characters\n");                  /* RLO: shows "John" */
    ck_assert_str_eq(talk("ADD a b\xe2\x81\xa6 3 123-45-6789\n"),
                     "Error: bad last name: UTF-8 text only, no control "
                     "characters\n");                  /* LRI */
    ck_assert_str_eq(talk("ADD Zo\xc3\xab b 3 123-45-6789\n"), "OK\n");
    ck_assert_str_eq(talk("FIND a\xe2\x80\xae" "b c\n"),
                     "Error: a???b c not found\n");
    ck_assert_str_eq(talk("FIND a\xc2\x9b" "2J b\n"),
                     "Error: a??2J b not found\n");
    ck_assert_str_eq(talk("DELETE a\x9b" "2J Zo\xeb\n"),
                     "Error: a?2J Zo? not found\n");
    ck_assert_str_eq(talk("X\xc2\x9b\n"), "Error: Bad command: X??\n");
    ck_assert_str_eq(talk("X\x9b" "1m\n"), "Error: Bad command: X?1m\n");
    ck_assert_str_eq(talk("COUNT\n"), "1\n");
}
END_TEST

/* What telnet sends at Ctrl-C comes out of the request and is answered
 * (IAC WONT TIMING-MARK), and the next request is served. */
START_TEST(test_session_telnet_ctrl_c)
{
    ck_assert_int_eq(memcmp(talk("\xff\xf4\xff\xfd\x06" "COUNT\r\n"),
                            "\xff\xfc\x06" "0\n", 5), 0);
    ck_assert_uint_eq(cap.len, 5);
    ck_assert_str_eq(talk("CO\xff\xfb\x01UNT\r\n"), "\xff\xfe\x01" "0\n");
}
END_TEST

/* No 0xFF (or control byte) typed by a client is echoed in an error. */
START_TEST(test_session_errors_never_echo_raw_bytes)
{
    const char *out = talk("\xff\xff\xfe\x01x\n");
    ck_assert_str_eq(out, "Error: Bad command: ???x\n");
    out = talk("ADD a\xff\xff b 1 123-45-6789\n");
    ck_assert_str_eq(out, "Error: bad first name: 1 to 63 bytes, "
                          "no spaces or control characters\n");
}
END_TEST

static Suite *session_auth_suite(void)
{
    Suite *s = suite_create("session_auth");
    TCase *tc = tcase_create("auth");

    tcase_add_checked_fixture(tc, setup_fine, teardown);
    tcase_add_test(tc, test_session_c1_names);
    tcase_add_test(tc, test_session_auth_required_first);
    tcase_add_test(tc, test_session_auth_without_password_set);
    tcase_add_test(tc, test_session_quit_before_auth);
    tcase_add_test(tc, test_session_telnet_ctrl_c);
    tcase_add_test(tc, test_session_errors_never_echo_raw_bytes);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(session_auth_suite)
