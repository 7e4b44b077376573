/* check_linereader.c -- unit tests for common/linereader.c, which does no
 * I/O of its own: most tests put plain strings in with lr_feed (or
 * lr_space + lr_commit) and take lines out; the "read" and "errors" cases
 * go through a real pipe (and one socketpair) with lr_read, writing first
 * and reading in the same thread, so every byte is in the kernel before
 * lr_read runs.
 *
 *   core:   lines split across feeds and reads, many lines per read, "\r\n",
 *           receiving in place, no room while complete lines wait;
 *   limits: the 1024-byte protocol limit, max_line - 1, max_line and
 *           max_line + 1 with and without '\r' for a small limit and at
 *           the cap (LR_BUF_SIZE - 1), a full buffer with no newline
 *           reported once, and what follows an over-long line;
 *   errors: end of file with a partial line, a bad fd, EAGAIN, ENOBUFS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "suites.h"
#include "linereader.h"
#include "proto.h"

static struct linereader *lr;
static int fds[2] = { -1, -1 }; /* lr reads fds[0]; the test writes fds[1] */

static void setup(void)
{
    lr = malloc(sizeof(*lr));
    ck_assert_ptr_nonnull(lr);
    lr_init(lr, PROTO_MAX_LINE);
}

static void teardown(void)
{
    free(lr);
}

static void pipe_setup(void)
{
    setup();
    ck_assert_int_eq(pipe(fds), 0);
}

static void pipe_teardown(void)
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    fds[0] = fds[1] = -1;
    teardown();
}

/* ---- helpers ---------------------------------------------------------- */

/* Writes all of data to the pipe. */
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

/* Reads once and expects at least one byte. */
static void rd(void)
{
    ssize_t n = lr_read(lr, fds[0]);
    ck_assert_msg(n > 0, "lr_read returned %zd", n);
}

/* Feeds len bytes and expects all of them taken. */
static void feed_n(const void *data, size_t len)
{
    ck_assert_uint_eq(lr_feed(lr, data, len), len);
}

static void feed(const char *s)
{
    feed_n(s, strlen(s));
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

/* n copies of c, NUL-terminated; the caller frees it. */
static char *line_of(size_t n, char c)
{
    char *s = malloc(n + 1);

    ck_assert_ptr_nonnull(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

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
    lr_init(lr, LR_BUF_SIZE - 1);
    tail = line_of(LR_BUF_SIZE - 1, 'z');
    feed("a\n");
    feed_n(tail, LR_BUF_SIZE - 2);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 0);
    expect_line("a");
    expect_status(LR_AGAIN);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 2);
    feed("z\n");
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

/* ---- limits ----------------------------------------------------------- */

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

START_TEST(test_lr_small_limit)
{
    lr_init(lr, 4);
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

        lr_init(lr, max);
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

    lr_init(lr, M);
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

/* At the cap the line and its '\n' fill the buffer exactly, so a '\r'
 * before the '\n' costs the last byte: a line of max_line bytes ending in
 * "\r\n" is too long there (lr_init: "the line and its '\n' must fit"). */
START_TEST(test_lr_limits_at_cap)
{
    static const size_t chunks[] = { 1000, 4096, LR_BUF_SIZE };
    enum { M = LR_BUF_SIZE - 1, NC = sizeof chunks / sizeof chunks[0] };

    lr_init(lr, M);
    ck_assert_uint_eq(lr->max_line, M);
    check_limit_case(M - 1, "\n", "go #16382 ok", chunks, NC);
    check_limit_case(M, "\n", "go #16383 ok", chunks, NC);
    check_limit_case(M + 1, "\n", "go ! ok", chunks, NC);
    check_limit_case(M - 1, "\r\n", "go #16382 ok", chunks, NC);
    check_limit_case(M, "\r\n", "go ! ok", chunks, NC);
    check_limit_case(M + 1, "\r\n", "go ! ok", chunks, NC);
    check_limit_case(3 * LR_BUF_SIZE + 5, "\n", "go ! ok", chunks, NC);
}
END_TEST

START_TEST(test_lr_max_line_capped)
{
    static const size_t chunks[] = { LR_BUF_SIZE };

    lr_init(lr, LR_BUF_SIZE - 2);
    ck_assert_uint_eq(lr->max_line, LR_BUF_SIZE - 2);
    lr_init(lr, LR_BUF_SIZE);
    ck_assert_uint_eq(lr->max_line, LR_BUF_SIZE - 1);
    lr_init(lr, SIZE_MAX);
    ck_assert_uint_eq(lr->max_line, LR_BUF_SIZE - 1);
    check_limit_case(LR_BUF_SIZE - 1, "\n", "go #16383 ok", chunks, 1);
    check_limit_case(LR_BUF_SIZE, "\n", "go ! ok", chunks, 1);
}
END_TEST

/* max_line = LR_BUF_SIZE - 1: LR_BUF_SIZE - 1 bytes and '\n' fill the
 * buffer exactly and make a line. */
START_TEST(test_lr_cap_full_buffer_line_accepted)
{
    char *s = line_of(LR_BUF_SIZE - 1, 'a');
    char *line;
    size_t len, room;

    lr_init(lr, LR_BUF_SIZE - 1);
    feed_n(s, LR_BUF_SIZE - 1);
    expect_status(LR_AGAIN);
    feed("\n");
    lr_space(lr, &room);
    ck_assert_uint_eq(room, 0);         /* the line waits: keep it */
    ck_assert_int_eq(lr_next(lr, &line, &len), LR_LINE);
    ck_assert_uint_eq(len, LR_BUF_SIZE - 1);
    ck_assert_int_eq(memcmp(line, s, len), 0);
    ck_assert_int_eq(line[len], '\0');
    expect_status(LR_AGAIN);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE);
    free(s);
}
END_TEST

/* max_line = LR_BUF_SIZE - 1: LR_BUF_SIZE bytes with no newline cannot be
 * a line. lr_next cannot know until the next lr_space drops them; then it
 * says LR_TOOLONG once, the rest of the line goes, the next line comes. */
START_TEST(test_lr_cap_full_buffer_no_newline_toolong_once)
{
    char *s = line_of(LR_BUF_SIZE, 'b');
    size_t room;

    lr_init(lr, LR_BUF_SIZE - 1);
    feed_n(s, LR_BUF_SIZE);
    expect_status(LR_AGAIN);
    ck_assert_uint_eq(lr_pending(lr), LR_BUF_SIZE);
    lr_space(lr, &room);
    ck_assert_uint_eq(room, LR_BUF_SIZE);
    ck_assert_uint_eq(lr_pending(lr), 0);
    expect_status(LR_TOOLONG);
    expect_status(LR_AGAIN);
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

    lr_init(lr, LR_BUF_SIZE - 1);
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
    TCase *limits = tcase_create("limits");
    TCase *errors = tcase_create("errors");

    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_checked_fixture(io, pipe_setup, pipe_teardown);
    tcase_add_checked_fixture(limits, pipe_setup, pipe_teardown);
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

    tcase_add_test(limits, test_lr_exactly_max_line_accepted);
    tcase_add_test(limits, test_lr_exactly_max_line_in_pieces);
    tcase_add_test(limits, test_lr_one_over_max_line_rejected_once);
    tcase_add_test(limits, test_lr_one_over_max_line_in_pieces);
    tcase_add_test(limits, test_lr_1025_with_cr_is_too_long);
    tcase_add_test(limits, test_lr_huge_line_then_good_line);
    tcase_add_test(limits, test_lr_huge_line_in_one_buffer);
    tcase_add_test(limits, test_lr_small_limit);
    tcase_add_test(limits, test_lr_limits_small);
    tcase_add_test(limits, test_lr_limits_at_cap);
    tcase_add_test(limits, test_lr_max_line_capped);
    tcase_add_test(limits, test_lr_cap_full_buffer_line_accepted);
    tcase_add_test(limits, test_lr_cap_full_buffer_no_newline_toolong_once);
    tcase_add_test(limits, test_lr_cap_toolong_once_without_draining);

    tcase_add_test(errors, test_lr_eof_with_partial_line);
    tcase_add_test(errors, test_lr_eof_empty);
    tcase_add_test(errors, test_lr_read_bad_fd);
    tcase_add_test(errors, test_lr_read_would_block);
    tcase_add_test(errors, test_lr_read_enobufs_while_lines_wait);

    suite_add_tcase(s, core);
    suite_add_tcase(s, io);
    suite_add_tcase(s, limits);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(linereader_suite)
