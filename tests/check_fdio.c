/* check_fdio.c -- unit tests for common/fdio.c, the one place that writes
 * whole buffers to descriptors.
 *
 *   write:  several MB over a socketpair and 1 MB over a pipe, each read by
 *           a thread; a pipe and a file, where send fails with ENOTSOCK and
 *           write(2) takes over; EINTR and partial writes (caused by
 *           signals) retried from the right place;
 *   errors: a vanished peer gives -EPIPE and no SIGPIPE (the default
 *           action stays in place, so a SIGPIPE would kill the test), a bad
 *           fd gives -EBADF, a zero length makes no system call at all;
 *   socket: fd_is_socket on sockets, pipes, files and bad descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "suites.h"
#include "fdio.h"
#include "timeutil.h"

/* Reads fd to end of file into buf (room for len + 1 bytes, so that one
 * byte too many shows), counting the bytes in got. With signals set, it
 * first sends that many SIGUSR1s to target, 20 ms apart, and then reads
 * slowly, a page at a time, sending one more after every fourth read. */
struct reader {
    int fd;
    size_t len;
    char *buf;
    size_t got;
    int signals;
    int sent;                   /* SIGUSR1s sent in all */
    pthread_t target;
};

static void *reader_main(void *arg)
{
    struct reader *r = arg;

    for (int i = 0; i < r->signals; i++) {
        time_sleep_ns(20 * TIME_NS_PER_MS);
        pthread_kill(r->target, SIGUSR1);
        r->sent++;
    }
    for (int reads = 1; ; reads++) {
        size_t want = r->len + 1 - r->got;
        ssize_t n;

        if (r->signals && want > 4096)
            want = 4096;
        n = read(r->fd, r->buf + r->got, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        r->got += (size_t)n;
        if (r->got == r->len + 1)
            break;
        if (r->signals && reads % 4 == 0) {
            pthread_kill(r->target, SIGUSR1);
            r->sent++;
            time_sleep_ns(50000);
        }
    }
    return NULL;
}

static char *pattern(size_t len, unsigned mod)
{
    char *p = malloc(len);

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (char)(i % mod);
    return p;
}

/* Writes len bytes to wfd with fd_write_all while a thread reads rfd,
 * closes wfd and checks the reader got exactly those bytes. */
static void write_and_compare(int wfd, int rfd, size_t len)
{
    struct reader r = { .fd = rfd, .len = len };
    char *want = pattern(len, 251);
    pthread_t tid;

    r.buf = malloc(len + 1);
    ck_assert_ptr_nonnull(r.buf);
    ck_assert_int_eq(pthread_create(&tid, NULL, reader_main, &r), 0);
    ck_assert_int_eq(fd_write_all(wfd, want, len), 0);
    close(wfd);
    ck_assert_int_eq(pthread_join(tid, NULL), 0);
    ck_assert_uint_eq(r.got, len);
    ck_assert_int_eq(memcmp(r.buf, want, len), 0);
    free(want);
    free(r.buf);
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

/* ---- write ------------------------------------------------------------ */

START_TEST(test_fd_write_all_socketpair_large)
{
    enum { BIG = 8 << 20 };     /* far more than a socket buffer: blocks */
    int sv[2];

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    write_and_compare(sv[0], sv[1], BIG);
    close(sv[1]);
}
END_TEST

START_TEST(test_fd_write_all_pipe_large)
{
    enum { BIG = 1 << 20 };             /* 16 times a default pipe */
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    write_and_compare(p[1], p[0], BIG);
    close(p[0]);
}
END_TEST

START_TEST(test_fd_write_all_socket_small)
{
    int sv[2];
    char got[32];

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(fd_write_all(sv[0], "over a socket\n", 14), 0);
    read_exactly(sv[1], got, 14);
    ck_assert_int_eq(memcmp(got, "over a socket\n", 14), 0);
    close(sv[0]);
    ck_assert_int_eq(read(sv[1], got, sizeof(got)), 0);  /* nothing more */
    close(sv[1]);
}
END_TEST

/* send(2) on a pipe fails with ENOTSOCK; fd_write_all then writes. */
START_TEST(test_fd_write_all_pipe_falls_back_to_write)
{
    int p[2];
    char got[16];

    ck_assert_int_eq(pipe(p), 0);
    errno = 0;
    ck_assert_int_eq(send(p[1], "x", 1, MSG_NOSIGNAL), -1);
    ck_assert_int_eq(errno, ENOTSOCK);
    ck_assert_int_eq(fd_write_all(p[1], "OK\n12345\nBye\n", 13), 0);
    close(p[1]);
    ck_assert_int_eq(read(p[0], got, sizeof(got)), 13);
    ck_assert_int_eq(memcmp(got, "OK\n12345\nBye\n", 13), 0);
    ck_assert_int_eq(read(p[0], got, sizeof(got)), 0);   /* nothing more */
    close(p[0]);
}
END_TEST

START_TEST(test_fd_write_all_regular_file)
{
    FILE *f = tmpfile();
    char got[16];

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fd_write_all(fileno(f), "first\n", 6), 0);
    ck_assert_int_eq(fd_write_all(fileno(f), "second\n", 7), 0);
    ck_assert_int_eq(pread(fileno(f), got, sizeof(got), 0), 13);
    ck_assert_int_eq(memcmp(got, "first\nsecond\n", 13), 0);
    fclose(f);
}
END_TEST

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
    (void)sig;
    usr1_seen++;
}

/* The pipe is full, so the write blocks; SIGUSR1, caught without
 * SA_RESTART, interrupts it (EINTR, nothing written) several times before
 * a thread starts reading. Then the thread reads slowly and goes on
 * signalling, so writes also return having written only part. Either
 * way fd_write_all must carry on from where the last write stopped. */
START_TEST(test_fd_write_all_retries_eintr)
{
    enum { BIG = 256 << 10, SIGNALS = 5 };
    struct sigaction sa, old;
    struct reader r = { .signals = SIGNALS, .target = pthread_self() };
    char *want = pattern(BIG, 253), *fill = pattern(4096, 7);
    size_t prefill = 0;
    pthread_t tid;
    int p[2], fl;
    ssize_t n;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;            /* sa_flags 0: no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);
    usr1_seen = 0;

    ck_assert_int_eq(pipe(p), 0);
    fl = fcntl(p[1], F_GETFL);
    ck_assert_int_eq(fcntl(p[1], F_SETFL, fl | O_NONBLOCK), 0);
    while ((n = write(p[1], fill, 4096)) > 0)
        prefill += (size_t)n;
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert_int_eq(fcntl(p[1], F_SETFL, fl), 0);

    r.fd = p[0];
    r.len = prefill + BIG;
    r.buf = malloc(r.len + 1);
    ck_assert_ptr_nonnull(r.buf);
    ck_assert_int_eq(pthread_create(&tid, NULL, reader_main, &r), 0);
    ck_assert_int_eq(fd_write_all(p[1], want, BIG), 0);
    close(p[1]);
    ck_assert_int_eq(pthread_join(tid, NULL), 0);
    ck_assert_int_ge(usr1_seen, SIGNALS);     /* pending ones may merge */
    ck_assert_int_le(usr1_seen, r.sent);
    ck_assert_uint_eq(r.got, prefill + BIG);
    ck_assert_int_eq(memcmp(r.buf + prefill, want, BIG), 0);

    ck_assert_int_eq(sigaction(SIGUSR1, &old, NULL), 0);
    close(p[0]);
    free(r.buf);
    free(want);
    free(fill);
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

START_TEST(test_fd_write_all_closed_peer_epipe)
{
    int sv[2];

    /* The default action, so a SIGPIPE would kill this test. */
    signal(SIGPIPE, SIG_DFL);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    ck_assert_int_eq(fd_write_all(sv[0], "nobody listens\n", 15), -EPIPE);
    ck_assert_int_eq(fd_write_all(sv[0], "x", 1), -EPIPE);
    close(sv[0]);
}
END_TEST

/* The peer reads a little and goes away while a large write is under way:
 * the next send fails, still without SIGPIPE. */
static void *read_some_and_close(void *arg)
{
    int fd = *(int *)arg;
    char buf[4096];

    for (size_t got = 0; got < 65536; ) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    return NULL;
}

START_TEST(test_fd_write_all_peer_leaves_midway)
{
    enum { BIG = 8 << 20 };
    char *data = pattern(BIG, 13);
    pthread_t tid;
    int sv[2], rc;

    signal(SIGPIPE, SIG_DFL);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(pthread_create(&tid, NULL, read_some_and_close, &sv[1]),
                     0);
    rc = fd_write_all(sv[0], data, BIG);
    ck_assert_int_eq(pthread_join(tid, NULL), 0);
    ck_assert_msg(rc == -EPIPE || rc == -ECONNRESET,
                  "fd_write_all returned %d (%s)", rc, strerror(-rc));
    close(sv[0]);
    free(data);
}
END_TEST

/* On a pipe fd_write_all uses write(2), which raises SIGPIPE when the
 * reader is gone: processes that write to pipes ignore SIGPIPE, and then
 * they get -EPIPE like a socket's writer. */
START_TEST(test_fd_write_all_pipe_reader_gone)
{
    struct sigaction sa, old;
    int p[2];

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGPIPE, &sa, &old), 0);
    ck_assert_int_eq(pipe(p), 0);
    close(p[0]);
    ck_assert_int_eq(fd_write_all(p[1], "x", 1), -EPIPE);
    close(p[1]);
    ck_assert_int_eq(sigaction(SIGPIPE, &old, NULL), 0);
}
END_TEST

START_TEST(test_fd_write_all_bad_fd)
{
    int p[2];

    ck_assert_int_eq(fd_write_all(-1, "x", 1), -EBADF);
    ck_assert_int_eq(pipe(p), 0);
    close(p[0]);
    close(p[1]);
    ck_assert_int_eq(fd_write_all(p[1], "x", 1), -EBADF);   /* closed */
}
END_TEST

/* With nothing to write there is no system call: a bad fd (on which any
 * send or write fails, as test_fd_write_all_bad_fd shows) gives 0, and a
 * closed peer raises nothing. */
START_TEST(test_fd_write_all_zero_length)
{
    int sv[2];

    ck_assert_int_eq(fd_write_all(-1, "", 0), 0);
    ck_assert_int_eq(fd_write_all(-1, NULL, 0), 0);
    signal(SIGPIPE, SIG_DFL);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    ck_assert_int_eq(fd_write_all(sv[0], "x", 0), 0);
    close(sv[0]);
}
END_TEST

/* ---- socket ----------------------------------------------------------- */

START_TEST(test_fd_is_socket)
{
    int sv[2], p[2], in;
    FILE *f = tmpfile();

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(fd_is_socket(sv[0]), 1);
    ck_assert_int_eq(fd_is_socket(sv[1]), 1);
    in = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(in, 0);
    ck_assert_int_eq(fd_is_socket(in), 1);      /* not connected yet */

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(fd_is_socket(p[0]), 0);
    ck_assert_int_eq(fd_is_socket(p[1]), 0);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fd_is_socket(fileno(f)), 0);
    ck_assert_int_eq(fd_is_socket(-1), 0);

    close(in);
    ck_assert_int_eq(fd_is_socket(in), 0);      /* closed: a bad fd */
    close(sv[0]);
    close(sv[1]);
    close(p[0]);
    close(p[1]);
    fclose(f);
}
END_TEST

static Suite *fdio_suite(void)
{
    Suite *s = suite_create("fdio");
    TCase *tc;

    tc = tcase_create("write");
    tcase_add_test(tc, test_fd_write_all_socketpair_large);
    tcase_add_test(tc, test_fd_write_all_pipe_large);
    tcase_add_test(tc, test_fd_write_all_socket_small);
    tcase_add_test(tc, test_fd_write_all_pipe_falls_back_to_write);
    tcase_add_test(tc, test_fd_write_all_regular_file);
    tcase_add_test(tc, test_fd_write_all_retries_eintr);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_test(tc, test_fd_write_all_closed_peer_epipe);
    tcase_add_test(tc, test_fd_write_all_peer_leaves_midway);
    tcase_add_test(tc, test_fd_write_all_pipe_reader_gone);
    tcase_add_test(tc, test_fd_write_all_bad_fd);
    tcase_add_test(tc, test_fd_write_all_zero_length);
    suite_add_tcase(s, tc);

    tc = tcase_create("socket");
    tcase_add_test(tc, test_fd_is_socket);
    suite_add_tcase(s, tc);

    return s;
}

SUITE_REGISTER(fdio_suite)
