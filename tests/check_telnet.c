/* check_telnet.c -- unit tests for common/telnet.c: commands taken out of
 * the stream, IAC IAC kept as one data byte, a stray IAC kept with its
 * next byte, every option refused once,
 * refusals not answered, subnegotiations dropped, and commands split
 * across calls. */
#include <string.h>
#include "suites.h"
#include "telnet.h"

static struct telnet tn;
static unsigned char answers[64];
static size_t nanswers;

static void collect(void *arg, const unsigned char *seq, size_t len)
{
    (void)arg;
    ck_assert_uint_le(nanswers + len, sizeof(answers));
    memcpy(answers + nanswers, seq, len);
    nanswers += len;
}

static void setup(void)
{
    telnet_init(&tn);
    nanswers = 0;
}

/* Filters in (given with its length) and checks what is left. */
static void expect_filtered(const char *in, size_t len, const char *want)
{
    char buf[128];

    memcpy(buf, in, len);
    size_t n = telnet_filter(&tn, buf, len, len, collect, NULL);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_int_eq(memcmp(buf, want, n), 0);
}

START_TEST(test_telnet_plain_bytes_pass)
{
    expect_filtered("COUNT\r\n", 7, "COUNT\r\n");
    ck_assert_uint_eq(nanswers, 0);
}
END_TEST

/* What telnet sends at Ctrl-C: IAC IP, IAC DO TIMING-MARK. */
START_TEST(test_telnet_ctrl_c_answered_wont_timing_mark)
{
    static const unsigned char want[] = { 255, 252, 6 };

    expect_filtered("\xff\xf4\xff\xfd\x06" "COUNT\n", 11, "COUNT\n");
    ck_assert_uint_eq(nanswers, 3);
    ck_assert_int_eq(memcmp(answers, want, 3), 0);
}
END_TEST

START_TEST(test_telnet_options_refused)
{
    static const unsigned char want[] = { 255, 254, 1, 255, 252, 3 };

    /* WILL ECHO -> DONT ECHO; DO SGA -> WONT SGA; WONT/DONT: no answer */
    expect_filtered("a\xff\xfb\x01" "b\xff\xfd\x03" "c\xff\xfc\x01\xff\xfe\x03"
                    "d", 16, "abcd");
    ck_assert_uint_eq(nanswers, 6);
    ck_assert_int_eq(memcmp(answers, want, 6), 0);
}
END_TEST

START_TEST(test_telnet_iac_iac_is_data)
{
    expect_filtered("x\xff\xffy", 4, "x\xffy");
    ck_assert_uint_eq(nanswers, 0);
}
END_TEST

START_TEST(test_telnet_subnegotiation_dropped)
{
    /* IAC SB TERMINAL-TYPE IS "xterm" IAC SE, with an IAC IAC inside */
    expect_filtered("a\xff\xfa\x18\x00xt\xff\xffrm\xff\xf0" "b", 14, "ab");
    ck_assert_uint_eq(nanswers, 0);
}
END_TEST

/* Every split point of a command sequence gives the same result. */
START_TEST(test_telnet_split_anywhere)
{
    static const char in[] = "ab\xff\xfd\x06" "c\xff\xff" "d\xff\xfa\x01\xff\xf0" "e";
    size_t len = sizeof(in) - 1;

    for (size_t cut = 0; cut <= len; cut++) {
        char buf[32];
        size_t n;

        setup();
        memcpy(buf, in, len);
        n = telnet_filter(&tn, buf, cut, cut, collect, NULL);
        n += telnet_filter(&tn, buf + n, 0, 0, collect, NULL);
        memmove(buf + n, in + cut, len - cut);
        n += telnet_filter(&tn, buf + n, len - cut, len - cut, collect, NULL);
        ck_assert_msg(n == 6 && memcmp(buf, "abc\xff" "de", 6) == 0,
                      "cut at %zu: %zu bytes", cut, n);
        ck_assert_uint_eq(nanswers, 3);
    }
}
END_TEST

/* IAC and a byte that is no command (below SE) are both data: a stray
 * 0xFF swallows no newline or space, so every line keeps its reply. */
START_TEST(test_telnet_stray_iac_keeps_next_byte)
{
    expect_filtered("FIND Jo\xff\nCOUNT\n", 15, "FIND Jo\xff\nCOUNT\n");
    expect_filtered("A\xff B\xff\x01", 6, "A\xff B\xff\x01");
    ck_assert_uint_eq(nanswers, 0);
}
END_TEST

/* Split after the stray IAC: the byte of room after the second call's
 * input takes the one it is behind; with no room the IAC alone goes. */
START_TEST(test_telnet_stray_iac_split)
{
    char buf[8];

    memcpy(buf, "Jo\xff", 3);
    ck_assert_uint_eq(telnet_filter(&tn, buf, 3, 3, collect, NULL), 2);
    memcpy(buf, "\nab", 3);
    ck_assert_uint_eq(telnet_filter(&tn, buf, 3, 4, collect, NULL), 4);
    ck_assert_int_eq(memcmp(buf, "\xff\nab", 4), 0);

    setup();
    memcpy(buf, "\xff", 1);
    ck_assert_uint_eq(telnet_filter(&tn, buf, 1, 1, collect, NULL), 0);
    memcpy(buf, "\nx", 2);
    ck_assert_uint_eq(telnet_filter(&tn, buf, 2, 2, collect, NULL), 2);
    ck_assert_int_eq(memcmp(buf, "\nx", 2), 0);
    ck_assert_int_eq(telnet_between(&tn), 1);
}
END_TEST

/* Between commands only outside one: a fresh filter would go on alike. */
START_TEST(test_telnet_between_commands)
{
    char buf[8];

    ck_assert_int_eq(telnet_between(&tn), 1);
    memcpy(buf, "a\xff", 2);
    ck_assert_uint_eq(telnet_filter(&tn, buf, 2, 2, collect, NULL), 1);
    ck_assert_int_eq(telnet_between(&tn), 0);       /* after IAC */
    memcpy(buf, "\xfa\x01", 2);
    telnet_filter(&tn, buf, 2, 2, collect, NULL);
    ck_assert_int_eq(telnet_between(&tn), 0);       /* subnegotiation */
    memcpy(buf, "\xff\xf0", 2);
    telnet_filter(&tn, buf, 2, 2, collect, NULL);
    ck_assert_int_eq(telnet_between(&tn), 1);
}
END_TEST

static Suite *telnet_suite(void)
{
    Suite *s = suite_create("telnet");
    TCase *core = tcase_create("core");

    tcase_add_checked_fixture(core, setup, NULL);
    tcase_add_test(core, test_telnet_plain_bytes_pass);
    tcase_add_test(core, test_telnet_ctrl_c_answered_wont_timing_mark);
    tcase_add_test(core, test_telnet_options_refused);
    tcase_add_test(core, test_telnet_iac_iac_is_data);
    tcase_add_test(core, test_telnet_subnegotiation_dropped);
    tcase_add_test(core, test_telnet_split_anywhere);
    tcase_add_test(core, test_telnet_stray_iac_keeps_next_byte);
    tcase_add_test(core, test_telnet_stray_iac_split);
    tcase_add_test(core, test_telnet_between_commands);
    suite_add_tcase(s, core);
    return s;
}

SUITE_REGISTER(telnet_suite)
