/* check_uring.c -- unit tests for server/net/uring.c, an event worker's
 * batched recv and send calls, over socketpairs.
 *
 *   batch:    sends on 8 sockets and then recvs on their peers, each in one
 *             io_uring_enter: every result is the plain call's (bytes, 0
 *             at the end, -EAGAIN on an empty socket, -EPIPE to a closed
 *             peer, a partial send to a full one);
 *   lone:     a single call is made the plain way (no io_uring_enter);
 *   broken:   a ring that fails (its descriptor no longer one) makes the
 *             batch's calls one by one, and every later batch too.
 *
 * The kernel must offer io_uring unless /proc/sys/kernel/io_uring_disabled
 * says it is off: a server that silently fell back would pass otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "suites.h"
#include "../server/net/uring.h"

#define PAIRS 8

static int sv[PAIRS][2];
static struct uring *ring;

/* Whether this kernel should give a ring: io_uring_disabled absent or 0. */
static int kernel_offers(void)
{
    FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
    int v = 0;

    if (!f)
        return 1;
    if (fscanf(f, "%d", &v) != 1)
        v = 0;
    fclose(f);
    return v == 0;
}

static void pairs_setup(void)
{
    int err = 0;

    for (int i = 0; i < PAIRS; i++)
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
    ring = uring_new(&err);
    if (!ring && kernel_offers())
        ck_abort_msg("uring_new failed: %s", strerror(-err));
}

static void pairs_teardown(void)
{
    uring_free(ring);
    ring = NULL;
    for (int i = 0; i < PAIRS; i++) {
        close(sv[i][0]);
        close(sv[i][1]);
    }
}

START_TEST(test_uring_batch)
{
    char msg[PAIRS][16], got[PAIRS][16];
    int32_t res[URING_BATCH];
    static char big[1 << 20];
    int sndbuf = 4096;

    if (!ring)
        return;
    for (int i = 0; i < PAIRS; i++) {
        snprintf(msg[i], sizeof(msg[i]), "reply %d\n", i);
        uring_send(ring, sv[i][0], msg[i], strlen(msg[i]));
    }
    ck_assert_int_eq(uring_run(ring, res), 1);
    for (int i = 0; i < PAIRS; i++)
        ck_assert_int_eq(res[i], (int32_t)strlen(msg[i]));

    close(sv[6][0]);                    /* 6: the peer is gone: 0 */
    sv[6][0] = socket(AF_UNIX, SOCK_STREAM, 0);
    for (int i = 0; i < PAIRS; i++)
        uring_recv(ring, sv[i][1], got[i], sizeof(got[i]));
    uring_recv(ring, sv[0][1], got[0], sizeof(got[0]));   /* drained */
    ck_assert_int_eq(uring_run(ring, res), 1);
    for (int i = 0; i < PAIRS; i++) {
        ck_assert_int_eq(res[i], (int32_t)strlen(msg[i]));
        ck_assert(memcmp(got[i], msg[i], strlen(msg[i])) == 0);
    }
    ck_assert_int_eq(res[PAIRS], -EAGAIN);

    /* A send to a closed peer, and a send bigger than a small buffer. */
    close(sv[1][1]);
    sv[1][1] = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq(setsockopt(sv[2][0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
                                sizeof(sndbuf)), 0);
    uring_send(ring, sv[1][0], "x", 1);
    uring_send(ring, sv[2][0], big, sizeof(big));
    uring_recv(ring, sv[6][1], got[6], sizeof(got[6]));
    ck_assert_int_eq(uring_run(ring, res), 1);
    ck_assert_int_eq(res[0], -EPIPE);
    ck_assert_int_gt(res[1], 0);
    ck_assert_int_lt(res[1], (int32_t)sizeof(big));
    ck_assert_int_eq(res[2], 0);
    uring_send(ring, sv[2][0], big, sizeof(big));   /* full now */
    uring_send(ring, sv[3][0], "y", 1);
    ck_assert_int_eq(uring_run(ring, res), 1);
    ck_assert_int_eq(res[0], -EAGAIN);
    ck_assert_int_eq(res[1], 1);
}
END_TEST

START_TEST(test_uring_lone)
{
    int32_t res;
    char got[8];

    if (!ring)
        return;
    uring_send(ring, sv[0][0], "one\n", 4);
    ck_assert_int_eq(uring_run(ring, &res), 0);     /* no io_uring_enter */
    ck_assert_int_eq(res, 4);
    uring_recv(ring, sv[0][1], got, sizeof(got));
    ck_assert_int_eq(uring_run(ring, &res), 0);
    ck_assert_int_eq(res, 4);
    ck_assert(memcmp(got, "one\n", 4) == 0);
    ck_assert_int_eq(uring_run(ring, &res), 0);     /* nothing queued */
}
END_TEST

/* The ring's descriptor: the one /proc/self/fd names anon_inode:[io_uring]. */
static int ring_fd(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[300], link[64];
    int fd = -1;

    ck_assert_ptr_nonnull(d);
    while (fd < 0 && (e = readdir(d))) {
        ssize_t n;
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        n = readlink(path, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            if (strcmp(link, "anon_inode:[io_uring]") == 0)
                fd = atoi(e->d_name);
        }
    }
    closedir(d);
    return fd;
}

START_TEST(test_uring_broken)
{
    int32_t res[URING_BATCH];
    char got[PAIRS][8];
    int fd, null;

    if (!ring)
        return;
    fd = ring_fd();
    ck_assert_int_ge(fd, 0);
    null = open("/dev/null", O_RDWR);
    ck_assert_int_ge(null, 0);
    ck_assert_int_eq(dup2(null, fd), fd);   /* io_uring_enter fails on it */
    close(null);
    for (int i = 0; i < PAIRS; i++)
        uring_send(ring, sv[i][0], "ab", 2);
    ck_assert_int_eq(uring_run(ring, res), 1);  /* the one that failed */
    for (int i = 0; i < PAIRS; i++)
        ck_assert_int_eq(res[i], 2);            /* made one by one */
    for (int i = 0; i < PAIRS; i++)
        uring_recv(ring, sv[i][1], got[i], sizeof(got[i]));
    ck_assert_int_eq(uring_run(ring, res), 0);  /* never the ring again */
    for (int i = 0; i < PAIRS; i++) {
        ck_assert_int_eq(res[i], 2);
        ck_assert(memcmp(got[i], "ab", 2) == 0);
    }
}
END_TEST

static Suite *uring_suite(void)
{
    Suite *s = suite_create("uring");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, pairs_setup, pairs_teardown);
    tcase_add_test(tc, test_uring_batch);
    tcase_add_test(tc, test_uring_lone);
    tcase_add_test(tc, test_uring_broken);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(uring_suite)
