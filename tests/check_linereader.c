/* check_linereader.c -- unit tests for common/linereader.c, which does no
 * I/O of its own: most tests put plain strings in with lr_feed (or
 * lr_space + lr_commit) and take lines out; the "read" and "errors" cases
 * go through a real pipe (and one socketpair) with lr_read, writing first
 * and reading in the same thread, so every byte is in the kernel before
 * lr_read runs.
 *
 *   core:   lines split across feeds and reads, many lines per read, "\r\n",
 *           receiving in place, no room while complete lines wait;
 *   errors: end of file with a partial line, a bad fd, EAGAIN, ENOBUFS.
 * The limits (max_line and the buffer's cap) are tested in
 * check_linereader_limits.c; the fixture and helpers are in lrtest.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "suites.h"
#include "linereader.h"
#include "lrtest.h"

/* ---- core ------------------------------------------------------------- */

START_TEST(test_lr_line_split_across_reads)
{
    puts_("COU");
    rd();
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 3);
    puts_("NT");
    rd();
    expect_status(LR_AGAIN);
    puts_("\nFIND a");
    rd();
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 6);
    puts_(" b\n");
    rd();
    expect_line("FIND a b");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 0);
}
END_TEST

/* One byte per feed, then a stream of lines cut into 7-byte pieces that
 * fall anywhere in a line, its '\r' or its '\n'. */
START_TEST(test_lr_line_split_across_many_feeds)
{
    static const char one[] = "FIND alpha beta\r\n";
    static char all[8192];
    char want[32];
    size_t total = 0, off = 0;
    int next = 0;

    for (size_t i = 0; i + 1 < sizeof(one) - 1; i++) {
        feed_n(&one[i], 1);
        expect_status(LR_AGAIN);
        ck_assert_uint_eq(lr_pending(lr), i + 1);
    }
    feed("\n");
    expect_line("FIND alpha beta");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 0);

    for (int i = 0; i < 300; i++)
        total += (size_t)snprintf(all + total, sizeof(all) - total, "%.*s%d%s",
                                  i % 11, "xxxxxxxxxxx", i,
                                  i % 3 ? "\n" : "\r\n");
    ck_assert_uint_lt(total, sizeof(all) - 1);
    while (off < total) {
        size_t n = total - off < 7 ? total - off : 7;
        char *line;
        size_t len;

        feed_n(all + off, n);
        off += n;
        while (lr_next(lr, &line, &len) == LR_LINE) {
            snprintf(want, sizeof(want), "%.*s%d", next % 11, "xxxxxxxxxxx",
                     next);
            ck_assert_str_eq(line, want);
            ck_assert_uint_eq(len, strlen(want));
            next++;
        }
    }
    ck_assert_int_eq(next, 300);
    ck_assert_uint_eq(lr_pending(lr), 0);
}
END_TEST

START_TEST(test_lr_many_lines_one_read)
{
    puts_("a\nbb\n\nccc\n   \nlast\n");
    ssize_t n = lr_read(lr, fds[0]);
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
    ck_assert_int_eq(lr_read(lr, fds[0]), (ssize_t)total);
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof(buf), "L%d", i);
        expect_line(buf);
    }
    expect_status(LR_AGAIN);
}
END_TEST

START_TEST(test_lr_crlf)
{
    feed("x\r\n\r\ny\n\rz\r\n");
    expect_line("x");
    expect_line("");
    expect_line("y");
    expect_line("\rz");         /* only a '\r' right before '\n' goes */
    expect_status(LR_AGAIN);
}
END_TEST

START_TEST(test_lr_crlf_only_one_cr_removed)
{
    feed("a\r\r\nb\rc\n");
    expect_line("a\r");
    expect_line("b\rc");
    expect_status(LR_AGAIN);
}
END_TEST

START_TEST(test_lr_crlf_split_between_reads)
{
    feed("COUNT\r");
    expect_status(LR_AGAIN);
    feed("\n");
    expect_line("COUNT");
}
END_TEST

/* lr_space + lr_commit receive straight into the buffer; taken lines are
 * compacted away by the next lr_space, so the room grows back. */
START_TEST(test_lr_space_commit_in_place)
{
    size_t room;
    char *p = lr_space(lr, &room);

    ck_assert_uint_eq(room, LR_BUF_SIZE);
    memcpy(p, "ab\ncd", 5);
    lr_commit(lr, 5);
    ck_assert_uint_eq(lr_pending(lr), 5);
    expect_line("ab");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 2);

    p = lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE - 2);
    lr_commit(lr, 0);                   /* nothing arrived */
    expect_status(LR_AGAIN);
    p = lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE - 2);
    memcpy(p, "e\n", 2);
    lr_commit(lr, 2);
    expect_line("cde");
    expect_status(LR_AGAIN);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE);
}
END_TEST

/* A buffer full of complete lines has no room until they are taken:
 * lr_feed takes nothing, and room comes back as lines are taken. */
START_TEST(test_lr_no_room_while_lines_wait)
{
    static char all[LR_BUF_SIZE];
    size_t room;
    char *tail;

    for (size_t i = 0; i < LR_BUF_SIZE; i += 4)
        memcpy(all + i, "abc\n", 4);
    feed_n(all, LR_BUF_SIZE);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 0);
    ck_assert_uint_eq(lr_feed(lr, "x\n", 2), 0);
    expect_line("abc");
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 4);
    for (size_t i = 4; i < LR_BUF_SIZE; i += 4)
        expect_line("abc");
    expect_status(LR_AGAIN);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE);

    /* One short line and a partial one fill the buffer (possible at the
     * cap only): no room until the short line is taken. */
    reinit(LR_MAX_LINE);
    tail = line_of(LR_MAX_LINE, 'z');
    feed("a\n");
    feed_n(tail, LR_MAX_LINE);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 0);
    expect_line("a");
    expect_status(LR_AGAIN);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 2);
    feed("\r\n");
    expect_line(tail);
    expect_status(LR_AGAIN);
    free(tail);
}
END_TEST

START_TEST(test_lr_over_pipe)
{
    ck_assert_int_eq(write(fds[1], "one\ntwo\n", 8), 8);
    close(fds[1]);
    fds[1] = -1;
    ck_assert_int_eq(lr_read(lr, fds[0]), 8);
    expect_line("one");
    expect_line("two");
    expect_status(LR_AGAIN);
    ck_assert_int_eq(lr_read(lr, fds[0]), 0);
}
END_TEST

START_TEST(test_lr_read_socketpair)
{
    int sv[2];

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(write(sv[1], "COUNT\r\nFI", 9), 9);
    ck_assert_int_eq(lr_read(lr, sv[0]), 9);
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    ck_assert_int_eq(write(sv[1], "ND x\n", 5), 5);
    ck_assert_int_eq(lr_read(lr, sv[0]), 5);
    expect_line("FIND x");
    close(sv[1]);
    ck_assert_int_eq(lr_read(lr, sv[0]), 0);
    expect_status(LR_AGAIN);
    close(sv[0]);
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

START_TEST(test_lr_eof_with_partial_line)
{
    puts_("COUNT\nPART");
    close(fds[1]);
    fds[1] = -1;
    ck_assert_int_eq(lr_read(lr, fds[0]), 10);
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 4);
    ck_assert_int_eq(lr_read(lr, fds[0]), 0);  /* end of file */
    expect_status(LR_AGAIN);                    /* never a line */
    ck_assert_uint_eq(lr_pending(lr), 4);
}
END_TEST

START_TEST(test_lr_eof_empty)
{
    close(fds[1]);
    fds[1] = -1;
    ck_assert_int_eq(lr_read(lr, fds[0]), 0);
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 0);
}
END_TEST

START_TEST(test_lr_read_bad_fd)
{
    ck_assert_int_eq(lr_read(lr, -1), -EBADF);
    ck_assert_uint_eq(lr_pending(lr), 0);
}
END_TEST

START_TEST(test_lr_read_would_block)
{
    int fl = fcntl(fds[0], F_GETFL);

    ck_assert_int_eq(fcntl(fds[0], F_SETFL, fl | O_NONBLOCK), 0);
    ck_assert_int_eq(lr_read(lr, fds[0]), -EAGAIN);
    puts_("x\n");
    rd();
    expect_line("x");
}
END_TEST

/* A buffer full of complete lines: lr_read reads nothing and says
 * -ENOBUFS; the bytes stay in the pipe until the lines are taken. */
START_TEST(test_lr_read_enobufs_while_lines_wait)
{
    static char all[LR_BUF_SIZE];

    for (size_t i = 0; i < LR_BUF_SIZE; i += 4)
        memcpy(all + i, "abc\n", 4);
    put(all, LR_BUF_SIZE);
    puts_("tail\n");
    ck_assert_int_eq(lr_read(lr, fds[0]), LR_BUF_SIZE);
    ck_assert_int_eq(lr_read(lr, fds[0]), -ENOBUFS);
    ck_assert_int_eq(lr_read(lr, fds[0]), -ENOBUFS);
    ck_assert_uint_eq(lr_pending(lr), LR_BUF_SIZE);
    for (size_t i = 0; i < LR_BUF_SIZE; i += 4)
        expect_line("abc");
    expect_status(LR_AGAIN);
    ck_assert_int_eq(lr_read(lr, fds[0]), 5);
    expect_line("tail");
    expect_status(LR_AGAIN);
}
END_TEST

static Suite *linereader_suite(void)
{
    Suite *s = suite_create("linereader");
    TCase *core = tcase_create("core");
    TCase *io = tcase_create("read");
    TCase *errors = tcase_create("errors");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(io, pipe_setup, pipe_teardown);
    tcase_add_checked_fixture(errors, pipe_setup, pipe_teardown);

    tcase_add_test(core, test_lr_line_split_across_many_feeds);
    tcase_add_test(core, test_lr_crlf);
    tcase_add_test(core, test_lr_crlf_only_one_cr_removed);
    tcase_add_test(core, test_lr_crlf_split_between_reads);
    tcase_add_test(core, test_lr_space_commit_in_place);
    tcase_add_test(core, test_lr_no_room_while_lines_wait);

    tcase_add_test(io, test_lr_line_split_across_reads);
    tcase_add_test(io, test_lr_many_lines_one_read);
    tcase_add_test(io, test_lr_thousand_lines_without_refill);
    tcase_add_test(io, test_lr_over_pipe);
    tcase_add_test(io, test_lr_read_socketpair);

    tcase_add_test(errors, test_lr_eof_with_partial_line);
    tcase_add_test(errors, test_lr_eof_empty);
    tcase_add_test(errors, test_lr_read_bad_fd);
    tcase_add_test(errors, test_lr_read_would_block);
    tcase_add_test(errors, test_lr_read_enobufs_while_lines_wait);

    suite_add_tcase(s, core);
    suite_add_tcase(s, io);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(linereader_suite)
