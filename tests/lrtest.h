/* lrtest.h -- the fixture and helpers shared by the line reader's unit
 * tests (check_linereader.c, check_linereader_limits.c): a heap reader
 * with the protocol's limit, a heap buffer of exactly LR_BUF_SIZE bytes
 * lent to it (so a sanitizer sees a byte past it), and, for the cases that go through lr_read, a
 * pipe the test writes and the reader reads; helpers that feed or write
 * bytes and expect a line or a status. static inline so each test file
 * takes only what it uses; each file gets its own copy of the fixture.
 */
#ifndef SSN_TESTS_LRTEST_H
#define SSN_TESTS_LRTEST_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <check.h>
#include "linereader.h"
#include "proto.h"

static struct linereader *lr;
static int fds[2] = { -1, -1 }; /* lr reads fds[0]; the test writes fds[1] */

static inline void setup(void)
{
    lr = malloc(sizeof(*lr));
    ck_assert_ptr_nonnull(lr);
    lr_init(lr, PROTO_MAX_LINE);
    char *buf = malloc(LR_BUF_SIZE);
    ck_assert_ptr_nonnull(buf);
    lr_attach(lr, buf);
}

static inline void teardown(void)
{
    free(lr->buf);
    free(lr);
}

/* lr_init again with another limit, keeping the buffer lent. */
static inline void reinit(size_t max_line)
{
    char *buf = lr->buf;

    lr_init(lr, max_line);
    lr_attach(lr, buf);
}

static inline void pipe_setup(void)
{
    setup();
    ck_assert_int_eq(pipe(fds), 0);
}

static inline void pipe_teardown(void)
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    fds[0] = fds[1] = -1;
    teardown();
}

/* ---- helpers ---------------------------------------------------------- */

/* Writes all of data to the pipe. */
static inline void put(const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = write(fds[1], p, len);
        ck_assert_msg(n > 0, "write: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

static inline void puts_(const char *s)
{
    put(s, strlen(s));
}

/* Reads once and expects at least one byte. */
static inline void rd(void)
{
    ssize_t n = lr_read(lr, fds[0]);
    ck_assert_msg(n > 0, "lr_read returned %zd", n);
}

/* Feeds len bytes and expects all of them taken. */
static inline void feed_n(const void *data, size_t len)
{
    ck_assert_uint_eq(lr_feed(lr, data, len), len);
}

static inline void feed(const char *s)
{
    feed_n(s, strlen(s));
}

static inline void expect_line(const char *want)
{
    char *line = NULL;
    size_t len = 0;
    int st = lr_next(lr, &line, &len);

    ck_assert_msg(st == LR_LINE, "wanted line '%.40s', got status %d", want, st);
    ck_assert_uint_eq(len, strlen(want));
    ck_assert_int_eq(line[len], '\0');
    ck_assert_int_eq(memcmp(line, want, len), 0);
}

static inline void expect_status(int want)
{
    char *line = NULL;
    size_t len = 0;
    int st = lr_next(lr, &line, &len);

    ck_assert_msg(st == want, "wanted status %d, got %d (line '%.40s')",
                  want, st, st == LR_LINE ? line : "");
}

/* n copies of c, NUL-terminated; the caller frees it. */
static inline char *line_of(size_t n, char c)
{
    char *s = malloc(n + 1);

    ck_assert_ptr_nonnull(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

#endif
