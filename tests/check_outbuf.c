/* check_outbuf.c -- unit tests for common/outbuf.c, a reply buffer that
 * does no I/O (the writes themselves are tested in check_fdio.c).
 *
 *   core:   appends and printf growing past the initial capacity, bytes held
 *           exactly as appended, consume (part, all, more than held) and
 *           truncate to a mark, reuse without reallocating;
 *   limits: one big append, printf exactly filling or overflowing the
 *           capacity, and the growth limit: ob_reserve refuses with -ENOBUFS
 *           past it, and a refused append, puts or printf leaves the
 *           contents, length and capacity as they were.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "outbuf.h"

static struct outbuf ob;

static void teardown(void)
{
    ob_destroy(&ob);
}

/* The buffer holds exactly the len bytes of want. */
static void expect_held(const void *want, size_t len)
{
    ck_assert_uint_eq(ob.len, len);
    ck_assert_int_eq(memcmp(ob.buf, want, len), 0);
}

static void expect_str(const char *want)
{
    expect_held(want, strlen(want));
}

/* ---- core ------------------------------------------------------------- */

START_TEST(test_ob_init_empty)
{
    ck_assert_int_eq(ob_init(&ob, 16), 0);
    ck_assert_ptr_nonnull(ob.buf);
    ck_assert_uint_eq(ob.len, 0);
    ck_assert_uint_ge(ob.cap, 16);
    ck_assert_uint_eq(ob.limit, 0);             /* no limit */
    ck_assert_int_eq(ob_reserve(&ob, 0), 0);
    ck_assert_int_eq(ob_append(&ob, "", 0), 0);
    ck_assert_uint_eq(ob.len, 0);
}
END_TEST

START_TEST(test_ob_append_grows)
{
    char want[1000];

    ck_assert_int_eq(ob_init(&ob, 4), 0);
    for (size_t i = 0; i < sizeof(want); i++) {
        want[i] = (char)('a' + i % 26);
        ck_assert_int_eq(ob_append(&ob, &want[i], 1), 0);
    }
    ck_assert_uint_eq(ob.len, sizeof(want));
    ck_assert_uint_ge(ob.cap, sizeof(want));
    ck_assert_int_eq(memcmp(ob.buf, want, sizeof(want)), 0);
}
END_TEST

START_TEST(test_ob_append_keeps_nul_bytes)
{
    ck_assert_int_eq(ob_init(&ob, 2), 0);
    ck_assert_int_eq(ob_append(&ob, "a\0b\0", 4), 0);
    ck_assert_uint_eq(ob.len, 4);
    ck_assert_int_eq(memcmp(ob.buf, "a\0b\0", 4), 0);
}
END_TEST

START_TEST(test_ob_printf_grows)
{
    char arg[500], want[600];

    memset(arg, 'z', sizeof(arg) - 1);
    arg[sizeof(arg) - 1] = '\0';
    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ck_assert_int_eq(ob_printf(&ob, "%d,", 12), 0);     /* fits */
    ck_assert_int_eq(ob_printf(&ob, "[%s]-%d\n", arg, 42), 0);  /* does not */
    snprintf(want, sizeof(want), "12,[%s]-42\n", arg);
    ck_assert_uint_eq(ob.len, strlen(want));
    ck_assert_int_eq(memcmp(ob.buf, want, ob.len), 0);
}
END_TEST

START_TEST(test_ob_printf_mixed_with_append)
{
    char want[64 * 20 + 1] = "";
    size_t wlen = 0;

    ck_assert_int_eq(ob_init(&ob, 1), 0);
    for (int i = 0; i < 64; i++) {
        if (i % 2) {
            ck_assert_int_eq(ob_printf(&ob, "%05d|", i), 0);
            wlen += (size_t)snprintf(want + wlen, sizeof(want) - wlen,
                                     "%05d|", i);
        } else {
            ck_assert_int_eq(ob_puts(&ob, "even|"), 0);
            wlen += (size_t)snprintf(want + wlen, sizeof(want) - wlen,
                                     "even|");
        }
    }
    ck_assert_uint_eq(ob.len, wlen);
    ck_assert_int_eq(memcmp(ob.buf, want, wlen), 0);
}
END_TEST

/* A caller's own variadic function, passing its arguments on. */
__attribute__((format(printf, 2, 3)))
static int forward(struct outbuf *o, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = ob_vprintf(o, fmt, ap);
    va_end(ap);
    return rc;
}

/* ob_vprintf formats twice when it must grow: the second pass must see
 * the same arguments (a copy of the va_list), not what the first left. */
START_TEST(test_ob_vprintf_grows)
{
    char arg[300], want[400];

    memset(arg, 'v', sizeof(arg) - 1);
    arg[sizeof(arg) - 1] = '\0';
    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ck_assert_int_eq(forward(&ob, "[%d]", 1), 0);
    ck_assert_int_eq(forward(&ob, "%s|%d|%s", arg, 22, "end"), 0);
    snprintf(want, sizeof(want), "[1]%s|22|end", arg);
    expect_str(want);
    ob.limit = ob.cap;
    ck_assert_int_eq(forward(&ob, "%s", arg), -ENOBUFS);
    expect_str(want);
}
END_TEST

/* What a driver sends is exactly what was put in, in order. */
START_TEST(test_ob_holds_exact_bytes)
{
    ck_assert_int_eq(ob_init(&ob, 4), 0);
    ck_assert_int_eq(ob_puts(&ob, "OK\n"), 0);
    ck_assert_int_eq(ob_printf(&ob, "%zu\n", (size_t)12345), 0);
    ck_assert_int_eq(ob_append(&ob, "Bye\n", 4), 0);
    expect_held("OK\n12345\nBye\n", 13);
    ob_consume(&ob, ob.len);                    /* all sent */
    ck_assert_uint_eq(ob.len, 0);
}
END_TEST

/* Consumed and refilled, the buffer keeps its allocation. */
START_TEST(test_ob_reuse_after_consume)
{
    char *buf;
    size_t cap;

    ck_assert_int_eq(ob_init(&ob, 4), 0);
    ck_assert_int_eq(ob_puts(&ob, "first\n"), 0);
    buf = ob.buf;
    cap = ob.cap;
    ob_consume(&ob, ob.len);
    ck_assert_int_eq(ob_puts(&ob, "second\n"), 0);
    expect_str("second\n");
    ck_assert_ptr_eq(ob.buf, buf);
    ck_assert_uint_eq(ob.cap, cap);
}
END_TEST

START_TEST(test_ob_consume_part)
{
    ck_assert_int_eq(ob_init(&ob, 4), 0);
    ck_assert_int_eq(ob_puts(&ob, "abcdefgh"), 0);
    ob_consume(&ob, 0);
    expect_str("abcdefgh");
    ob_consume(&ob, 3);                         /* a partial write */
    expect_str("defgh");
    ck_assert_int_eq(ob_puts(&ob, "ij"), 0);    /* appends go after */
    expect_str("defghij");
    ob_consume(&ob, 6);
    expect_str("j");
    ob_consume(&ob, 1);
    ck_assert_uint_eq(ob.len, 0);
}
END_TEST

START_TEST(test_ob_consume_more_than_held)
{
    ck_assert_int_eq(ob_init(&ob, 4), 0);
    ck_assert_int_eq(ob_puts(&ob, "abc"), 0);
    ob_consume(&ob, 100);
    ck_assert_uint_eq(ob.len, 0);
    ob_consume(&ob, 1);                         /* already empty */
    ck_assert_uint_eq(ob.len, 0);
    ck_assert_int_eq(ob_puts(&ob, "xyz"), 0);
    expect_str("xyz");
}
END_TEST

/* A reply half written when something fails is cut back to the mark
 * taken before it. */
START_TEST(test_ob_truncate_to_mark)
{
    size_t mark;

    ck_assert_int_eq(ob_init(&ob, 4), 0);
    ck_assert_int_eq(ob_puts(&ob, "kept\n"), 0);
    mark = ob.len;
    ck_assert_int_eq(ob_printf(&ob, "half a reply %d", 7), 0);
    ob_truncate(&ob, mark);
    expect_str("kept\n");
    ob_truncate(&ob, mark + 10);                /* past the end: nothing */
    expect_str("kept\n");
    ck_assert_int_eq(ob_puts(&ob, "next\n"), 0);
    expect_str("kept\nnext\n");
    ob_truncate(&ob, 0);
    ck_assert_uint_eq(ob.len, 0);
}
END_TEST

/* ---- limits ----------------------------------------------------------- */

START_TEST(test_ob_append_one_big_piece)
{
    enum { BIG = 100000 };
    char *big = malloc(BIG);

    ck_assert_ptr_nonnull(big);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (char)(i * 7);
    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ck_assert_int_eq(ob_puts(&ob, "head:"), 0);
    ck_assert_int_eq(ob_append(&ob, big, BIG), 0);
    ck_assert_uint_eq(ob.len, 5 + BIG);
    ck_assert_int_eq(memcmp(ob.buf, "head:", 5), 0);
    ck_assert_int_eq(memcmp(ob.buf + 5, big, BIG), 0);
    free(big);
}
END_TEST

START_TEST(test_ob_printf_exactly_fills)
{
    /* 7 characters and the NUL vsnprintf needs: exactly the capacity. */
    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ck_assert_int_eq(ob_printf(&ob, "%s", "1234567"), 0);
    ck_assert_uint_eq(ob.cap, 8);               /* no growth for it */
    ck_assert_int_eq(ob_printf(&ob, "%s", "89"), 0);
    ck_assert_uint_eq(ob.len, 9);
    ck_assert_int_eq(memcmp(ob.buf, "123456789", 9), 0);
}
END_TEST

/* 8 characters into 8 bytes: the text fits but its NUL does not, so the
 * buffer grows; one more than the room, likewise. */
START_TEST(test_ob_printf_overflows_capacity)
{
    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ck_assert_int_eq(ob_printf(&ob, "%s", "12345678"), 0);
    ck_assert_uint_gt(ob.cap, 8);
    expect_str("12345678");

    ob_destroy(&ob);
    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ck_assert_int_eq(ob_puts(&ob, "ab"), 0);
    ck_assert_int_eq(ob_printf(&ob, "%d", 1234567), 0);   /* 2 + 7 > 8 */
    expect_str("ab1234567");
}
END_TEST

/* Growth doubles, but never past the limit; the limit itself is reached. */
START_TEST(test_ob_limit_caps_growth)
{
    char want[40];

    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ob.limit = 40;
    for (size_t i = 0; i < sizeof(want); i++) {
        want[i] = (char)('A' + i % 26);
        ck_assert_int_eq(ob_append(&ob, &want[i], 1), 0);
        ck_assert_uint_le(ob.cap, 40);
    }
    expect_held(want, sizeof(want));
    ck_assert_uint_eq(ob.cap, 40);
    ck_assert_int_eq(ob_reserve(&ob, 0), 0);
    ck_assert_int_eq(ob_reserve(&ob, 1), -ENOBUFS);
    ck_assert_int_eq(ob_append(&ob, "x", 1), -ENOBUFS);
    ck_assert_int_eq(ob_puts(&ob, "x"), -ENOBUFS);
    ck_assert_int_eq(ob_printf(&ob, "x"), -ENOBUFS);
    expect_held(want, sizeof(want));
    ck_assert_uint_eq(ob.cap, 40);

    /* Sent bytes make room again, within the same allocation. */
    ob_consume(&ob, 10);
    ck_assert_int_eq(ob_append(&ob, "0123456789", 10), 0);
    ck_assert_uint_eq(ob.len, 40);
    ck_assert_uint_eq(ob.cap, 40);
    ck_assert_int_eq(memcmp(ob.buf, want + 10, 30), 0);
    ck_assert_int_eq(memcmp(ob.buf + 30, "0123456789", 10), 0);
}
END_TEST

/* ob_reserve past the limit is refused outright: contents, length and
 * capacity unchanged; within it, the room is there afterwards. */
START_TEST(test_ob_reserve_past_limit)
{
    char *buf;

    ck_assert_int_eq(ob_init(&ob, 16), 0);
    ob.limit = 100;
    ck_assert_int_eq(ob_puts(&ob, "0123456789"), 0);
    buf = ob.buf;
    ck_assert_int_eq(ob_reserve(&ob, 91), -ENOBUFS);
    ck_assert_ptr_eq(ob.buf, buf);
    ck_assert_uint_eq(ob.cap, 16);
    expect_str("0123456789");
    ck_assert_int_eq(ob_reserve(&ob, 90), 0);
    ck_assert_uint_ge(ob.cap, 100);
    ck_assert_uint_le(ob.cap, 100);
    expect_str("0123456789");
}
END_TEST

/* An append that would pass the limit takes nothing, not a part. */
START_TEST(test_ob_append_past_limit_unchanged)
{
    static const char big[64] = "big";

    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ob.limit = 32;
    ck_assert_int_eq(ob_puts(&ob, "keep"), 0);
    ck_assert_int_eq(ob_append(&ob, big, 29), -ENOBUFS);
    expect_str("keep");
    ck_assert_uint_eq(ob.cap, 8);
    ck_assert_int_eq(ob_append(&ob, big, 28), 0);   /* exactly the limit */
    ck_assert_uint_eq(ob.len, 32);
    ck_assert_uint_eq(ob.cap, 32);
}
END_TEST

/* printf past the limit: -ENOBUFS, and the bytes held, their number and
 * the capacity are as before, whether or not the first try fitted part. */
START_TEST(test_ob_printf_past_limit_unchanged)
{
    char *buf;

    ck_assert_int_eq(ob_init(&ob, 16), 0);
    ob.limit = 16;
    ck_assert_int_eq(ob_puts(&ob, "keep"), 0);
    buf = ob.buf;
    ck_assert_int_eq(ob_printf(&ob, "%s-%d", "a long reply", 12345), -ENOBUFS);
    expect_str("keep");
    ck_assert_ptr_eq(ob.buf, buf);
    ck_assert_uint_eq(ob.cap, 16);
    ck_assert_int_eq(ob_puts(&ob, "!"), 0);     /* still usable */
    expect_str("keep!");

    ob_destroy(&ob);
    ck_assert_int_eq(ob_init(&ob, 4), 0);       /* must grow, may not */
    ob.limit = 8;
    ck_assert_int_eq(ob_puts(&ob, "ab"), 0);
    ck_assert_int_eq(ob_printf(&ob, "%07d", 42), -ENOBUFS);  /* 2 + 7 > 8 */
    expect_str("ab");
    ck_assert_uint_le(ob.cap, 8);
}
END_TEST

/* printf's text reaching the limit exactly is accepted, as the same bytes
 * through ob_append are: vsnprintf's NUL is not part of the contents. */
START_TEST(test_ob_printf_exactly_at_limit)
{
    ck_assert_int_eq(ob_init(&ob, 8), 0);
    ob.limit = 8;
    ck_assert_int_eq(ob_printf(&ob, "%s", "12345678"), 0);
    expect_str("12345678");
    ck_assert_uint_eq(ob.cap, 8);
    ck_assert_int_eq(ob_printf(&ob, "%s", ""), 0);
    ck_assert_int_eq(ob_printf(&ob, "x"), -ENOBUFS);
    expect_str("12345678");

    ob_destroy(&ob);
    ck_assert_int_eq(ob_init(&ob, 4), 0);       /* grows to the limit */
    ob.limit = 12;
    ck_assert_int_eq(ob_puts(&ob, "ab"), 0);
    ck_assert_int_eq(ob_printf(&ob, "%010d", 42), 0);
    expect_str("ab0000000042");
    ck_assert_uint_eq(ob.cap, 12);
}
END_TEST

static Suite *outbuf_suite(void)
{
    Suite *s = suite_create("outbuf");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");

    tcase_add_checked_fixture(core, NULL, teardown);
    tcase_add_checked_fixture(limits, NULL, teardown);

    tcase_add_test(core, test_ob_init_empty);
    tcase_add_test(core, test_ob_append_grows);
    tcase_add_test(core, test_ob_append_keeps_nul_bytes);
    tcase_add_test(core, test_ob_printf_grows);
    tcase_add_test(core, test_ob_printf_mixed_with_append);
    tcase_add_test(core, test_ob_vprintf_grows);
    tcase_add_test(core, test_ob_holds_exact_bytes);
    tcase_add_test(core, test_ob_reuse_after_consume);
    tcase_add_test(core, test_ob_consume_part);
    tcase_add_test(core, test_ob_consume_more_than_held);
    tcase_add_test(core, test_ob_truncate_to_mark);

    tcase_add_test(limits, test_ob_append_one_big_piece);
    tcase_add_test(limits, test_ob_printf_exactly_fills);
    tcase_add_test(limits, test_ob_printf_overflows_capacity);
    tcase_add_test(limits, test_ob_limit_caps_growth);
    tcase_add_test(limits, test_ob_reserve_past_limit);
    tcase_add_test(limits, test_ob_append_past_limit_unchanged);
    tcase_add_test(limits, test_ob_printf_past_limit_unchanged);
    tcase_add_test(limits, test_ob_printf_exactly_at_limit);

    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(outbuf_suite)
