/* check_linereader.c -- unit tests for common/linereader.c over a real
 * socketpair (and a pipe): lines split across reads, many lines per read,
 * "\r\n", the 1024-byte limit and what follows an over-long line, and end of
 * file with a partial line buffered. The test writes, then fills and drains
 * in the same thread, so every byte is in the kernel before lr_fill runs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "suites.h"
#include "linereader.h"
#include "proto.h"

static struct linereader *lr;
static int fds[2];              /* lr reads fds[0]; the test writes fds[1] */

static void setup(void)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    lr = malloc(sizeof(*lr));
    ck_assert_ptr_nonnull(lr);
    lr_init(lr, fds[0], PROTO_MAX_LINE);
}

static void teardown(void)
{
    close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(lr);
}

static void put(const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = write(fds[1], p, len);
        ck_assert_msg(n > 0, "write: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

static void puts_(const char *s)
{
    put(s, strlen(s));
}

/* Fills once and expects at least one byte. */
static void fill(void)
{
    ssize_t n = lr_fill(lr);
    ck_assert_msg(n > 0, "lr_fill returned %zd", n);
}

static void expect_line(const char *want)
{
    char *line = NULL;
    size_t len = 0;
    int st = lr_next(lr, &line, &len);

    ck_assert_msg(st == LR_LINE, "wanted line '%.40s', got status %d", want, st);
    ck_assert_uint_eq(len, strlen(want));
    ck_assert_int_eq(line[len], '\0');
    ck_assert_int_eq(memcmp(line, want, len), 0);
}

static void expect_status(int want)
{
    char *line = NULL;
    size_t len = 0;
    int st = lr_next(lr, &line, &len);

    ck_assert_msg(st == want, "wanted status %d, got %d (line '%.40s')",
                  want, st, st == LR_LINE ? line : "");
}

/* ---- core ------------------------------------------------------------- */

START_TEST(test_lr_line_split_across_reads)
{
    puts_("COU");
    fill();
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 3);
    puts_("NT");
    fill();
    expect_status(LR_AGAIN);
    puts_("\nFIND a");
    fill();
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 6);
    puts_(" b\n");
    fill();
    expect_line("FIND a b");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 0);
}
END_TEST

START_TEST(test_lr_many_lines_one_read)
{
    puts_("a\nbb\n\nccc\n   \nlast\n");
    ssize_t n = lr_fill(lr);
    ck_assert_int_eq(n, 19);
    expect_line("a");
    expect_line("bb");
    expect_line("");
    expect_line("ccc");
    expect_line("   ");
    expect_line("last");
    expect_status(LR_AGAIN);
}
END_TEST

START_TEST(test_lr_thousand_lines_without_refill)
{
    static char all[LR_BUF_SIZE];
    char buf[16];
    size_t total = 0;

    for (int i = 0; i < 1000; i++)
        total += (size_t)snprintf(all + total, sizeof(all) - total, "L%d\n", i);
    put(all, total);
    /* Everything written fits one LR_BUF_SIZE read. */
    ck_assert_uint_le(total, LR_BUF_SIZE);
    ck_assert_int_eq(lr_fill(lr), (ssize_t)total);
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof(buf), "L%d", i);
        expect_line(buf);
    }
    expect_status(LR_AGAIN);
}
END_TEST

START_TEST(test_lr_crlf)
{
    puts_("x\r\n\r\ny\n\rz\r\n");
    fill();
    expect_line("x");
    expect_line("");
    expect_line("y");
    expect_line("\rz");         /* only a '\r' right before '\n' goes */
    expect_status(LR_AGAIN);
}
END_TEST

START_TEST(test_lr_crlf_only_one_cr_removed)
{
    puts_("a\r\r\nb\rc\n");
    fill();
    expect_line("a\r");
    expect_line("b\rc");
    expect_status(LR_AGAIN);
}
END_TEST

START_TEST(test_lr_crlf_split_between_reads)
{
    puts_("COUNT\r");
    fill();
    expect_status(LR_AGAIN);
    puts_("\n");
    fill();
    expect_line("COUNT");
}
END_TEST

START_TEST(test_lr_over_pipe)
{
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    lr_init(lr, p[0], PROTO_MAX_LINE);
    ck_assert_int_eq(write(p[1], "one\ntwo\n", 8), 8);
    close(p[1]);
    ck_assert_int_eq(lr_fill(lr), 8);
    expect_line("one");
    expect_line("two");
    expect_status(LR_AGAIN);
    ck_assert_int_eq(lr_fill(lr), 0);
    close(p[0]);
}
END_TEST

/* ---- limits ----------------------------------------------------------- */

static char *line_of(size_t n, char c)
{
    char *s = malloc(n + 1);

    ck_assert_ptr_nonnull(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

START_TEST(test_lr_exactly_max_line_accepted)
{
    char *s = line_of(PROTO_MAX_LINE, 'a');

    ck_assert_int_eq(PROTO_MAX_LINE, 1024);
    put(s, PROTO_MAX_LINE);
    puts_("\n");
    put(s, PROTO_MAX_LINE);
    puts_("\r\n");
    fill();
    expect_line(s);
    expect_line(s);             /* the "\r" does not count */
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

START_TEST(test_lr_exactly_max_line_in_pieces)
{
    char *s = line_of(PROTO_MAX_LINE, 'b');

    /* 1024 bytes and a '\r' with no '\n' yet: still a possible line. */
    put(s, PROTO_MAX_LINE);
    puts_("\r");
    fill();
    expect_status(LR_AGAIN);
    puts_("\n");
    fill();
    expect_line(s);
    free(s);
}
END_TEST

START_TEST(test_lr_one_over_max_line_rejected_once)
{
    char *s = line_of(PROTO_MAX_LINE + 1, 'c');

    put(s, PROTO_MAX_LINE + 1);
    puts_("\nCOUNT\n");
    fill();
    expect_status(LR_TOOLONG);
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

START_TEST(test_lr_one_over_max_line_in_pieces)
{
    char *s = line_of(PROTO_MAX_LINE + 1, 'd');

    put(s, PROTO_MAX_LINE + 1);
    fill();
    /* 1025 bytes could still be 1024 and a '\r': not decided yet. */
    expect_status(LR_AGAIN);
    puts_("\nCOUNT\n");
    fill();
    expect_status(LR_TOOLONG);
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

START_TEST(test_lr_1025_with_cr_is_too_long)
{
    char *s = line_of(PROTO_MAX_LINE + 1, 'e');

    put(s, PROTO_MAX_LINE + 1);
    puts_("\r\nok\n");
    fill();
    expect_status(LR_TOOLONG);
    expect_line("ok");
    free(s);
}
END_TEST

START_TEST(test_lr_huge_line_then_good_line)
{
    enum { HUGE = 100 * 1024, CHUNK = 10000 };
    char *s = line_of(CHUNK, 'h');
    int toolong = 0, lines = 0;
    size_t sent = 0;
    char *line;
    size_t len;
    int st;

    /* Feed 100 KB without a newline, draining after every chunk as the
     * session does; exactly one LR_TOOLONG may come out of it all. */
    while (sent < HUGE) {
        size_t n = HUGE - sent < CHUNK ? HUGE - sent : CHUNK;
        put(s, n);
        sent += n;
        for (size_t got = 0; got < n; ) {
            ssize_t r = lr_fill(lr);
            ck_assert_int_gt(r, 0);
            got += (size_t)r;
            while ((st = lr_next(lr, &line, &len)) != LR_AGAIN) {
                if (st == LR_TOOLONG)
                    toolong++;
                else
                    lines++;
            }
        }
    }
    ck_assert_int_eq(toolong, 1);
    ck_assert_int_eq(lines, 0);
    puts_("hhhh\ngood line\n");
    fill();
    expect_line("good line");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

START_TEST(test_lr_huge_line_in_one_buffer)
{
    /* A whole buffer of one line, its newline and the next line arriving
     * together with it. */
    char *s = line_of(LR_BUF_SIZE - 20, 'q');

    put(s, LR_BUF_SIZE - 20);
    puts_("\nnext\n");
    fill();
    expect_status(LR_TOOLONG);
    expect_line("next");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

START_TEST(test_lr_small_limit)
{
    lr_init(lr, fds[0], 4);
    puts_("abcd\nabcde\nabc\r\nabcd\r\n");
    fill();
    expect_line("abcd");
    expect_status(LR_TOOLONG);
    expect_line("abc");
    expect_line("abcd");
    expect_status(LR_AGAIN);
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

START_TEST(test_lr_eof_with_partial_line)
{
    puts_("COUNT\nPART");
    close(fds[1]);
    fds[1] = -1;
    ck_assert_int_eq(lr_fill(lr), 10);
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 4);
    ck_assert_int_eq(lr_fill(lr), 0);          /* end of file */
    expect_status(LR_AGAIN);                    /* never a line */
    ck_assert_uint_eq(lr_pending(lr), 4);
}
END_TEST

START_TEST(test_lr_eof_empty)
{
    close(fds[1]);
    fds[1] = -1;
    ck_assert_int_eq(lr_fill(lr), 0);
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 0);
}
END_TEST

START_TEST(test_lr_fill_bad_fd)
{
    lr_init(lr, -1, PROTO_MAX_LINE);
    ck_assert_int_eq(lr_fill(lr), -EBADF);
}
END_TEST

START_TEST(test_lr_fill_would_block)
{
    int fl = fcntl(fds[0], F_GETFL);

    ck_assert_int_eq(fcntl(fds[0], F_SETFL, fl | O_NONBLOCK), 0);
    ck_assert_int_eq(lr_fill(lr), -EAGAIN);
    puts_("x\n");
    fill();
    expect_line("x");
}
END_TEST

static Suite *linereader_suite(void)
{
    Suite *s = suite_create("linereader");
    TCase *core = tcase_create("core");
    TCase *errors = tcase_create("errors");
    TCase *limits = tcase_create("limits");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_add_checked_fixture(limits, setup, teardown);

    tcase_add_test(core, test_lr_line_split_across_reads);
    tcase_add_test(core, test_lr_many_lines_one_read);
    tcase_add_test(core, test_lr_thousand_lines_without_refill);
    tcase_add_test(core, test_lr_crlf);
    tcase_add_test(core, test_lr_crlf_only_one_cr_removed);
    tcase_add_test(core, test_lr_crlf_split_between_reads);
    tcase_add_test(core, test_lr_over_pipe);

    tcase_add_test(limits, test_lr_exactly_max_line_accepted);
    tcase_add_test(limits, test_lr_exactly_max_line_in_pieces);
    tcase_add_test(limits, test_lr_one_over_max_line_rejected_once);
    tcase_add_test(limits, test_lr_one_over_max_line_in_pieces);
    tcase_add_test(limits, test_lr_1025_with_cr_is_too_long);
    tcase_add_test(limits, test_lr_huge_line_then_good_line);
    tcase_add_test(limits, test_lr_huge_line_in_one_buffer);
    tcase_add_test(limits, test_lr_small_limit);

    tcase_add_test(errors, test_lr_eof_with_partial_line);
    tcase_add_test(errors, test_lr_eof_empty);
    tcase_add_test(errors, test_lr_fill_bad_fd);
    tcase_add_test(errors, test_lr_fill_would_block);

    suite_add_tcase(s, core);
    suite_add_tcase(s, errors);
    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(linereader_suite)
