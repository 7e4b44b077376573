/* check_outbuf.c -- unit tests for common/outbuf.c: appends and printf
 * growing past the initial capacity, flushes that write exactly the bytes
 * buffered (through a pipe, with a reader thread for writes larger than the
 * pipe), and a write to a socket whose peer is gone returning -EPIPE instead
 * of killing the process with SIGPIPE. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "suites.h"
#include "outbuf.h"

static struct outbuf ob;
static int p[2];                /* a pipe: ob writes p[1], tests read p[0] */

static void setup(void)
{
    ck_assert_int_eq(pipe(p), 0);
}

static void teardown(void)
{
    ob_destroy(&ob);
    close(p[0]);
    close(p[1]);
}

/* Reads exactly len bytes from fd (the writer has finished). */
static void read_exactly(int fd, char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = read(fd, buf, len);
        ck_assert_msg(n > 0, "read: %zd", n);
        buf += n;
        len -= (size_t)n;
    }
}

/* ---- core ------------------------------------------------------------- */

START_TEST(test_ob_init_empty)
{
    ck_assert_int_eq(ob_init(&ob, p[1], 16), 0);
    ck_assert_uint_eq(ob.len, 0);
    ck_assert_uint_ge(ob.cap, 16);
    ck_assert_int_eq(ob.fd, p[1]);
    ck_assert_int_eq(ob.is_socket, 0);
    ck_assert_int_eq(ob_flush(&ob), 0);         /* nothing to write */
}
END_TEST

START_TEST(test_ob_append_grows)
{
    char want[1000];

    ck_assert_int_eq(ob_init(&ob, p[1], 4), 0);
    for (size_t i = 0; i < sizeof(want); i++) {
        want[i] = (char)('a' + i % 26);
        ck_assert_int_eq(ob_append(&ob, &want[i], 1), 0);
    }
    ck_assert_uint_eq(ob.len, sizeof(want));
    ck_assert_uint_ge(ob.cap, sizeof(want));
    ck_assert_int_eq(memcmp(ob.buf, want, sizeof(want)), 0);
}
END_TEST

START_TEST(test_ob_append_one_big_piece)
{
    enum { BIG = 100000 };
    char *big = malloc(BIG);

    ck_assert_ptr_nonnull(big);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (char)(i * 7);
    ck_assert_int_eq(ob_init(&ob, p[1], 8), 0);
    ck_assert_int_eq(ob_puts(&ob, "head:"), 0);
    ck_assert_int_eq(ob_append(&ob, big, BIG), 0);
    ck_assert_uint_eq(ob.len, 5 + BIG);
    ck_assert_int_eq(memcmp(ob.buf, "head:", 5), 0);
    ck_assert_int_eq(memcmp(ob.buf + 5, big, BIG), 0);
    free(big);
}
END_TEST

START_TEST(test_ob_append_keeps_nul_bytes)
{
    ck_assert_int_eq(ob_init(&ob, p[1], 2), 0);
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
    ck_assert_int_eq(ob_init(&ob, p[1], 8), 0);
    ck_assert_int_eq(ob_printf(&ob, "%d,", 12), 0);     /* fits */
    ck_assert_int_eq(ob_printf(&ob, "[%s]-%d\n", arg, 42), 0);  /* does not */
    snprintf(want, sizeof(want), "12,[%s]-42\n", arg);
    ck_assert_uint_eq(ob.len, strlen(want));
    ck_assert_int_eq(memcmp(ob.buf, want, ob.len), 0);
}
END_TEST

START_TEST(test_ob_printf_exactly_fills)
{
    /* 7 characters and the NUL vsnprintf needs: exactly the capacity. */
    ck_assert_int_eq(ob_init(&ob, p[1], 8), 0);
    ck_assert_int_eq(ob_printf(&ob, "%s", "1234567"), 0);
    ck_assert_int_eq(ob_printf(&ob, "%s", "89"), 0);
    ck_assert_uint_eq(ob.len, 9);
    ck_assert_int_eq(memcmp(ob.buf, "123456789", 9), 0);
}
END_TEST

START_TEST(test_ob_printf_mixed_with_append)
{
    char want[64 * 20 + 1] = "";
    size_t wlen = 0;

    ck_assert_int_eq(ob_init(&ob, p[1], 1), 0);
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

START_TEST(test_ob_flush_writes_exact_bytes)
{
    char got[64];

    ck_assert_int_eq(ob_init(&ob, p[1], 4), 0);
    ck_assert_int_eq(ob_puts(&ob, "OK\n"), 0);
    ck_assert_int_eq(ob_printf(&ob, "%zu\n", (size_t)12345), 0);
    ck_assert_int_eq(ob_append(&ob, "Bye\n", 4), 0);
    ck_assert_int_eq(ob_flush(&ob), 0);
    ck_assert_uint_eq(ob.len, 0);
    close(p[1]);
    p[1] = -1;
    ssize_t n = read(p[0], got, sizeof(got));
    ck_assert_int_eq(n, 13);
    ck_assert_int_eq(memcmp(got, "OK\n12345\nBye\n", 13), 0);
    ck_assert_int_eq(read(p[0], got, sizeof(got)), 0);   /* nothing more */
}
END_TEST

START_TEST(test_ob_reuse_after_flush)
{
    char got[16];

    ck_assert_int_eq(ob_init(&ob, p[1], 4), 0);
    ck_assert_int_eq(ob_puts(&ob, "first\n"), 0);
    ck_assert_int_eq(ob_flush(&ob), 0);
    ck_assert_int_eq(ob_puts(&ob, "second\n"), 0);
    ck_assert_int_eq(ob_flush(&ob), 0);
    read_exactly(p[0], got, 13);
    ck_assert_int_eq(memcmp(got, "first\nsecond\n", 13), 0);
}
END_TEST

struct reader {
    int fd;
    size_t len;
    char *buf;
};

static void *reader_main(void *arg)
{
    struct reader *r = arg;
    size_t got = 0;

    for (;;) {
        ssize_t n = read(r->fd, r->buf + got, r->len + 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    r->len = got;
    return NULL;
}

START_TEST(test_ob_flush_larger_than_pipe)
{
    enum { BIG = 1 << 20 };             /* 16 times a default pipe */
    struct reader r = { .fd = p[0], .len = BIG };
    pthread_t tid;
    char *want = malloc(BIG);

    r.buf = malloc(BIG + 1);
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(r.buf);
    for (size_t i = 0; i < BIG; i++)
        want[i] = (char)(i % 251);
    ck_assert_int_eq(ob_init(&ob, p[1], 64), 0);
    ck_assert_int_eq(ob_append(&ob, want, BIG), 0);
    ck_assert_int_eq(pthread_create(&tid, NULL, reader_main, &r), 0);
    ck_assert_int_eq(ob_flush(&ob), 0);         /* many partial writes */
    close(p[1]);
    p[1] = -1;
    pthread_join(tid, NULL);
    ck_assert_uint_eq(r.len, BIG);
    ck_assert_int_eq(memcmp(r.buf, want, BIG), 0);
    free(want);
    free(r.buf);
}
END_TEST

START_TEST(test_ob_socket_detected)
{
    int sv[2];

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(fd_is_socket(sv[0]), 1);
    ck_assert_int_eq(fd_is_socket(p[0]), 0);
    ck_assert_int_eq(fd_is_socket(-1), 0);
    ck_assert_int_eq(ob_init(&ob, sv[0], 16), 0);
    ck_assert_int_eq(ob.is_socket, 1);
    ck_assert_int_eq(ob_puts(&ob, "over a socket\n"), 0);
    ck_assert_int_eq(ob_flush(&ob), 0);
    char got[32];
    read_exactly(sv[1], got, 14);
    ck_assert_int_eq(memcmp(got, "over a socket\n", 14), 0);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

START_TEST(test_ob_flush_closed_socket_epipe)
{
    int sv[2];

    /* The default action, so a SIGPIPE would kill this test. */
    signal(SIGPIPE, SIG_DFL);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    ck_assert_int_eq(ob_init(&ob, sv[0], 16), 0);
    ck_assert_int_eq(ob_puts(&ob, "nobody listens\n"), 0);
    ck_assert_int_eq(ob_flush(&ob), -EPIPE);
    ck_assert_uint_eq(ob.len, 0);               /* emptied either way */
    ck_assert_int_eq(write_all(sv[0], 1, "x", 1), -EPIPE);
    close(sv[0]);
}
END_TEST

START_TEST(test_ob_flush_bad_fd)
{
    ck_assert_int_eq(ob_init(&ob, -1, 16), 0);
    ck_assert_int_eq(ob.is_socket, 0);
    ck_assert_int_eq(ob_puts(&ob, "x"), 0);
    ck_assert_int_eq(ob_flush(&ob), -EBADF);
    ck_assert_uint_eq(ob.len, 0);
}
END_TEST

START_TEST(test_ob_write_all_zero_length)
{
    ck_assert_int_eq(write_all(-1, 0, "", 0), 0);   /* no system call */
}
END_TEST

static Suite *outbuf_suite(void)
{
    Suite *s = suite_create("outbuf");
    TCase *core = tcase_create("core");
    TCase *errors = tcase_create("errors");
    TCase *limits = tcase_create("limits");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);

    tcase_add_test(core, test_ob_init_empty);
    tcase_add_test(core, test_ob_append_grows);
    tcase_add_test(core, test_ob_append_keeps_nul_bytes);
    tcase_add_test(core, test_ob_printf_grows);
    tcase_add_test(core, test_ob_printf_mixed_with_append);
    tcase_add_test(core, test_ob_flush_writes_exact_bytes);
    tcase_add_test(core, test_ob_reuse_after_flush);
    tcase_add_test(core, test_ob_socket_detected);

    tcase_add_test(limits, test_ob_append_one_big_piece);
    tcase_add_test(limits, test_ob_printf_exactly_fills);
    tcase_add_test(limits, test_ob_flush_larger_than_pipe);

    tcase_add_test(errors, test_ob_flush_closed_socket_epipe);
    tcase_add_test(errors, test_ob_flush_bad_fd);
    tcase_add_test(errors, test_ob_write_all_zero_length);

    suite_add_tcase(s, core);
    suite_add_tcase(s, errors);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(outbuf_suite)
