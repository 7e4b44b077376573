/* check_linereader_limits.c -- unit tests for the limits of
 * common/linereader.c (the rest is in check_linereader.c; the fixture and
 * helpers are in lrtest.h). Bytes go in with lr_feed, or with lr_space +
 * lr_commit as a driver does, except one 100 KB line that goes through a
 * pipe with lr_read.
 *
 *   limits: the 1024-byte protocol limit, max_line - 1, max_line and
 *           max_line + 1 with and without '\r' for a small limit and at
 *           the cap (LR_MAX_LINE), a full buffer with no newline
 *           reported once, and what follows an over-long line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "linereader.h"
#include "proto.h"
#include "lrtest.h"

/* What a driver sees: input goes in chunk bytes at a time (less when the
 * buffer has less room) through lr_space + lr_commit, and every line is
 * taken after each chunk. Returns the outcome as words separated by
 * spaces: a line as its text, or "#<len>" when longer than 16 bytes, and
 * "!" for each LR_TOOLONG. The result is static. */
static const char *transcript(const char *in, size_t len, size_t chunk)
{
    static char out[1024];
    size_t olen = 0, off = 0;
    char *line;
    size_t llen;
    int st;

    out[0] = '\0';
    while (off < len) {
        size_t room, n;
        char *p = lr_space(lr, &room);

        n = len - off < chunk ? len - off : chunk;
        if (n > room)
            n = room;
        ck_assert_msg(n > 0, "no room after every line was taken");
        memcpy(p, in + off, n);
        lr_commit(lr, n);
        off += n;
        while ((st = lr_next(lr, &line, &llen)) != LR_AGAIN) {
            ck_assert_uint_lt(olen, sizeof(out) - 32);
            if (st == LR_TOOLONG)
                olen += (size_t)snprintf(out + olen, sizeof(out) - olen,
                                         "%s!", olen ? " " : "");
            else if (llen > 16)
                olen += (size_t)snprintf(out + olen, sizeof(out) - olen,
                                         "%s#%zu", olen ? " " : "", llen);
            else
                olen += (size_t)snprintf(out + olen, sizeof(out) - olen,
                                         "%s%s", olen ? " " : "", line);
        }
    }
    return out;
}

START_TEST(test_lr_exactly_max_line_accepted)
{
    char *s = line_of(PROTO_MAX_LINE, 'a');

    ck_assert_int_eq(PROTO_MAX_LINE, 1024);
    feed_n(s, PROTO_MAX_LINE);
    feed("\n");
    feed_n(s, PROTO_MAX_LINE);
    feed("\r\n");
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
    feed_n(s, PROTO_MAX_LINE);
    feed("\r");
    expect_status(LR_AGAIN);
    feed("\n");
    expect_line(s);
    free(s);
}
END_TEST

START_TEST(test_lr_one_over_max_line_rejected_once)
{
    char *s = line_of(PROTO_MAX_LINE + 1, 'c');

    feed_n(s, PROTO_MAX_LINE + 1);
    feed("\nCOUNT\n");
    expect_status(LR_TOOLONG);
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

START_TEST(test_lr_one_over_max_line_in_pieces)
{
    char *s = line_of(PROTO_MAX_LINE + 1, 'd');

    feed_n(s, PROTO_MAX_LINE + 1);
    /* 1025 bytes could still be 1024 and a '\r': not decided yet. */
    expect_status(LR_AGAIN);
    feed("\nCOUNT\n");
    expect_status(LR_TOOLONG);
    expect_line("COUNT");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

START_TEST(test_lr_1025_with_cr_is_too_long)
{
    char *s = line_of(PROTO_MAX_LINE + 1, 'e');

    feed_n(s, PROTO_MAX_LINE + 1);
    feed("\r\nok\n");
    expect_status(LR_TOOLONG);
    expect_line("ok");
    free(s);
}
END_TEST

/* 100 KB without a newline through a pipe, read and drained after every
 * chunk as a session does: exactly one LR_TOOLONG may come out of it all. */
START_TEST(test_lr_huge_line_then_good_line)
{
    enum { HUGE = 100 * 1024, CHUNK = 10000 };
    char *s = line_of(CHUNK, 'h');
    int toolong = 0, lines = 0;
    size_t sent = 0;
    char *line;
    size_t len;
    int st;

    while (sent < HUGE) {
        size_t n = HUGE - sent < CHUNK ? HUGE - sent : CHUNK;
        put(s, n);
        sent += n;
        for (size_t got = 0; got < n; ) {
            ssize_t r = lr_read(lr, fds[0]);
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
    rd();
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

    feed_n(s, LR_BUF_SIZE - 20);
    feed("\nnext\n");
    expect_status(LR_TOOLONG);
    expect_line("next");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

/* Between lines only with nothing buffered and no over-long line being
 * discarded: then a fresh reader would read the rest the same way. */
START_TEST(test_lr_between_lines)
{
    char *s = line_of(LR_BUF_SIZE, 'q');
    size_t room;

    ck_assert_int_eq(lr_between_lines(lr), 1);
    feed("ab");
    ck_assert_int_eq(lr_between_lines(lr), 0);
    feed("\n");
    expect_line("ab");
    ck_assert_int_eq(lr_between_lines(lr), 1);
    feed_n(s, LR_BUF_SIZE);             /* a full buffer, no newline */
    expect_status(LR_TOOLONG);
    lr_space(lr, &room);                /* dropped to make room */
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), 0);
    ck_assert_int_eq(lr_between_lines(lr), 0);  /* its tail is to come */
    feed("qq\nnext\n");
    expect_line("next");
    ck_assert_int_eq(lr_between_lines(lr), 1);
    free(s);
}
END_TEST

START_TEST(test_lr_small_limit)
{
    reinit(4);
    feed("abcd\nabcde\nabc\r\nabcd\r\n");
    expect_line("abcd");
    expect_status(LR_TOOLONG);
    expect_line("abc");
    expect_line("abcd");
    expect_status(LR_AGAIN);
}
END_TEST

/* Runs "go\n", n bytes of 'a', eol and "ok\n" through transcript() at each
 * chunk size from a fresh reader with the current max_line, expecting the
 * same outcome from every one. */
static void check_limit_case(size_t n, const char *eol, const char *want,
                             const size_t *chunks, int nchunks)
{
    size_t len = 3 + n + strlen(eol) + 3;
    char *in = malloc(len + 1);
    char desc[64];

    ck_assert_ptr_nonnull(in);
    memcpy(in, "go\n", 3);
    memset(in + 3, 'a', n);
    snprintf(in + 3 + n, len + 1 - 3 - n, "%sok\n", eol);
    snprintf(desc, sizeof(desc), "%zu%s", n, eol[0] == '\r' ? "+CR" : "");
    for (int i = 0; i < nchunks; i++) {
        size_t max = lr->max_line;
        const char *got;

        reinit(max);
        got = transcript(in, len, chunks[i]);
        ck_assert_msg(strcmp(got, want) == 0,
                      "max_line %zu, line %s, chunk %zu: got \"%s\", "
                      "wanted \"%s\"", max, desc, chunks[i], got, want);
    }
    free(in);
}

START_TEST(test_lr_limits_small)
{
    static const size_t chunks[] = { 1, 2, 7, LR_BUF_SIZE };
    enum { M = 4, NC = sizeof chunks / sizeof chunks[0] };

    reinit(M);
    check_limit_case(M - 1, "\n", "go aaa ok", chunks, NC);
    check_limit_case(M, "\n", "go aaaa ok", chunks, NC);
    check_limit_case(M + 1, "\n", "go ! ok", chunks, NC);
    check_limit_case(M - 1, "\r\n", "go aaa ok", chunks, NC);
    check_limit_case(M, "\r\n", "go aaaa ok", chunks, NC);
    check_limit_case(M + 1, "\r\n", "go ! ok", chunks, NC);
    check_limit_case(0, "\n", "go  ok", chunks, NC);        /* empty line */
    check_limit_case(3 * LR_BUF_SIZE, "\n", "go ! ok", chunks + 2, NC - 2);
}
END_TEST

/* At the cap a line and its "\r\n" fill the buffer exactly, so every
 * line within the limit is a line, with or without its '\r'. */
START_TEST(test_lr_limits_at_cap)
{
    static const size_t chunks[] = { 1000, 4096, LR_BUF_SIZE };
    enum { M = LR_MAX_LINE, NC = sizeof chunks / sizeof chunks[0] };

    reinit(M);
    ck_assert_uint_eq(lr->max_line, M);
    check_limit_case(M - 1, "\n", "go #16381 ok", chunks, NC);
    check_limit_case(M, "\n", "go #16382 ok", chunks, NC);
    check_limit_case(M + 1, "\n", "go ! ok", chunks, NC);
    check_limit_case(M - 1, "\r\n", "go #16381 ok", chunks, NC);
    check_limit_case(M, "\r\n", "go #16382 ok", chunks, NC);
    check_limit_case(M + 1, "\r\n", "go ! ok", chunks, NC);
    check_limit_case(3 * LR_BUF_SIZE + 5, "\n", "go ! ok", chunks, NC);
}
END_TEST

START_TEST(test_lr_max_line_capped)
{
    static const size_t chunks[] = { LR_BUF_SIZE };

    ck_assert_uint_eq(LR_MAX_LINE, LR_BUF_SIZE - 2);
    reinit(LR_MAX_LINE - 1);
    ck_assert_uint_eq(lr->max_line, LR_MAX_LINE - 1);
    reinit(LR_BUF_SIZE);
    ck_assert_uint_eq(lr->max_line, LR_MAX_LINE);
    reinit(SIZE_MAX);
    ck_assert_uint_eq(lr->max_line, LR_MAX_LINE);
    check_limit_case(LR_MAX_LINE, "\r\n", "go #16382 ok", chunks, 1);
    check_limit_case(LR_MAX_LINE + 1, "\n", "go ! ok", chunks, 1);
}
END_TEST

/* At the cap, LR_MAX_LINE bytes and "\r\n" fill the buffer exactly and
 * make a line. */
START_TEST(test_lr_cap_full_buffer_line_accepted)
{
    char *s = line_of(LR_MAX_LINE, 'a');
    char *line;
    size_t len, room;

    reinit(LR_BUF_SIZE);
    feed_n(s, LR_MAX_LINE);
    expect_status(LR_AGAIN);
    feed("\r");
    expect_status(LR_AGAIN);
    feed("\n");
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 0);         /* the line waits: keep it */
    ck_assert_int_eq(lr_next(lr, &line, &len), LR_LINE);
    ck_assert_uint_eq(len, LR_MAX_LINE);
    ck_assert_int_eq(memcmp(line, s, len), 0);
    ck_assert_int_eq(line[len], '\0');
    expect_status(LR_AGAIN);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE);
    free(s);
}
END_TEST

/* At the cap, a full buffer with no newline is over the limit: lr_next
 * says LR_TOOLONG once, the rest of the line goes, the next line comes. */
START_TEST(test_lr_cap_full_buffer_no_newline_toolong_once)
{
    char *s = line_of(LR_BUF_SIZE, 'b');
    size_t room;

    reinit(LR_BUF_SIZE);
    feed_n(s, LR_BUF_SIZE);
    ck_assert_uint_eq(lr_pending(lr), LR_BUF_SIZE);
    expect_status(LR_TOOLONG);
    expect_status(LR_AGAIN);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE);
    ck_assert_uint_eq(lr_pending(lr), 0);
    expect_status(LR_AGAIN);

    feed_n(s, LR_BUF_SIZE);             /* more of the same line */
    expect_status(LR_AGAIN);
    feed_n(s, LR_BUF_SIZE);
    expect_status(LR_AGAIN);
    feed("bbb\nnext\n");
    expect_line("next");
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

/* LR_TOOLONG is said once per line even when the caller takes one status
 * and then puts more bytes in, refilling the buffer without a newline. */
START_TEST(test_lr_cap_toolong_once_without_draining)
{
    char *s = line_of(LR_BUF_SIZE, 'c');
    int toolong = 0, st;
    char *line;
    size_t len;

    reinit(LR_BUF_SIZE);
    feed_n(s, LR_BUF_SIZE);
    feed_n(s, LR_BUF_SIZE);             /* drops the first, refills */
    ck_assert_int_eq(lr_next(lr, &line, &len), LR_TOOLONG);
    toolong++;
    feed_n(s, LR_BUF_SIZE);             /* the same line goes on */
    feed_n(s, LR_BUF_SIZE);
    feed("c\nnext\n");
    while ((st = lr_next(lr, &line, &len)) == LR_TOOLONG)
        toolong++;
    ck_assert_int_eq(st, LR_LINE);
    ck_assert_str_eq(line, "next");
    ck_assert_int_eq(toolong, 1);
    expect_status(LR_AGAIN);
    free(s);
}
END_TEST

static Suite *linereader_limits_suite(void)
{
    Suite *s = suite_create("linereader_limits");
    TCase *limits = tcase_create("limits");

    tcase_add_checked_fixture(limits, pipe_setup, pipe_teardown);

    tcase_add_test(limits, test_lr_exactly_max_line_accepted);
    tcase_add_test(limits, test_lr_exactly_max_line_in_pieces);
    tcase_add_test(limits, test_lr_one_over_max_line_rejected_once);
    tcase_add_test(limits, test_lr_one_over_max_line_in_pieces);
    tcase_add_test(limits, test_lr_1025_with_cr_is_too_long);
    tcase_add_test(limits, test_lr_huge_line_then_good_line);
    tcase_add_test(limits, test_lr_huge_line_in_one_buffer);
    tcase_add_test(limits, test_lr_between_lines);
    tcase_add_test(limits, test_lr_small_limit);
    tcase_add_test(limits, test_lr_limits_small);
    tcase_add_test(limits, test_lr_limits_at_cap);
    tcase_add_test(limits, test_lr_max_line_capped);
    tcase_add_test(limits, test_lr_cap_full_buffer_line_accepted);
    tcase_add_test(limits, test_lr_cap_full_buffer_no_newline_toolong_once);
    tcase_add_test(limits, test_lr_cap_toolong_once_without_draining);

    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(linereader_limits_suite)
