/* stress_client.c -- the misbehaving clients of
 * tests/test-server-events-stress.sh, which bash cannot be: clients that
 * vanish mid-request or mid-PRINT (a close, or an abortive close that sends
 * a reset), one that sends PRINTs and never reads, and thousands of
 * connections held open at once. A test helper only: never installed.
 *
 *   stress-client PORT vanish N       N clients in batches, each sends part
 *                                     of a request and goes (see vanish_one)
 *   stress-client PORT print-vanish N N clients in batches, each sends PRINT,
 *                                     reads nothing or a little, and goes
 *   stress-client PORT stall K SECS   one client with a small receive buffer
 *                                     sends K PRINTs, says "sent" and never
 *                                     reads; ends (with a reset) on SIGTERM
 *                                     or after SECS
 *   stress-client PORT hold N P       N connections open at once; each sends
 *                                     "FIND fI LI" (I = its number mod P)
 *                                     and must get that person's line (the
 *                                     script's people: age 30, SSN_TEST);
 *                                     STATS from one more while all are
 *                                     open; then half close, half reset
 *
 * Each prints one summary line of "name value" pairs on stdout for the
 * script to check, and exits 0 unless it could not run at all (2). Every
 * wait is bounded (BATCH_DEADLINE_MS, HOLD_DEADLINE_MS). The hold job is
 * stress_hold.c's; what both use, stress_client.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "stress_client.h"

#define BATCH               50      /* connections open at once (vanish) */
#define BATCH_DEADLINE_MS   5000    /* one batch's clients all gone by then */
#define STALL_RCVBUF        4096    /* stall: the smallest window we can ask */
#define PV_RCVBUF           16384   /* print-vanish: a small window */
#define PV_PRINTS           4       /* print-vanish: PRINTs each client sends */

int port;

long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

void die(const char *what)
{
    fprintf(stderr, "stress-client: %s: %s\n", what, strerror(errno));
    exit(2);
}

/* A connected socket, or -1. rcvbuf > 0 is set before connecting, so the
 * window the client offers is small from the start. */
int dial(int rcvbuf)
{
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int send_str(int fd, const char *s)
{
    size_t len = strlen(s);

    while (len > 0) {
        ssize_t n = send(fd, s, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        s += n;
        len -= (size_t)n;
    }
    return 0;
}

/* An abortive close: SO_LINGER with a zero timeout makes close() send a
 * reset and drop whatever is queued either way. */
void close_rst(int fd)
{
    struct linger l = { .l_onoff = 1, .l_linger = 0 };

    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd);
}

/* ---- vanish and print-vanish: a batch of clients at once ---------------- */

/* What one client of a batch still waits for before it goes. */
struct vclient {
    int fd;                     /* -1 once gone */
    int how;                    /* its variant (vanish_one, pvanish_one) */
    size_t want;                /* bytes to read before going; 0: only wait
                                   until something arrives, reading none */
    size_t got;
};

static struct {
    long clients, connect_failed, resets, closes, half_closes;
    long got_bytes, server_closed, timed_out, unexpected;
} tally;

static void go(struct vclient *v, int rst)
{
    if (rst) {
        close_rst(v->fd);
        tally.resets++;
    } else {
        close(v->fd);
        tally.closes++;
    }
    v->fd = -1;
}

/* What a client does with r > 0 bytes just read (or, with want 0,
 * peeked at and left unread). */
typedef void (*step_fn)(struct vclient *v, ssize_t r);

/* Runs a batch: each client already sent its bytes; polls for what each is
 * to read and lets its step decide when it goes. End of file or an error
 * before it went counts as server_closed; clients still there at the
 * deadline count as timed_out and go with a reset. */
static void run_batch(struct vclient *vs, int n, step_fn step)
{
    struct pollfd pf[BATCH];
    long deadline = now_ms() + BATCH_DEADLINE_MS;
    char buf[65536];

    for (;;) {
        int live = 0;
        for (int i = 0; i < n; i++) {
            pf[i].fd = vs[i].fd;        /* poll ignores negative fds */
            pf[i].events = POLLIN;
            pf[i].revents = 0;
            live += vs[i].fd >= 0;
        }
        long left = deadline - now_ms();
        if (live == 0)
            return;
        if (left <= 0)
            break;
        if (poll(pf, (nfds_t)n, (int)left) < 0 && errno != EINTR)
            die("poll");
        for (int i = 0; i < n; i++) {
            struct vclient *v = &vs[i];
            if (v->fd < 0 || !pf[i].revents)
                continue;
            size_t room = v->want ? v->want - v->got : 1;
            if (room > sizeof(buf))
                room = sizeof(buf);
            ssize_t r = recv(v->fd, buf, room,
                             MSG_DONTWAIT | (v->want ? 0 : MSG_PEEK));
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (r <= 0) {
                tally.server_closed++;
                go(v, 0);
                continue;
            }
            if (v->want) {
                v->got += (size_t)r;
                tally.got_bytes += r;
            }
            step(v, r);
        }
    }
    for (int i = 0; i < n; i++)
        if (vs[i].fd >= 0) {
            tally.timed_out++;
            go(&vs[i], 1);
        }
}

/* vanish, by variant (i mod 6):
 *   0  "ADD f1 L" with no newline, then close
 *   1  the same, then a reset
 *   2  "COUNT\nFIND f1 L1\nADD pa": two whole requests and a part, then a
 *      reset without reading the replies
 *   3  a part, then shutdown(SHUT_WR): the server must close its side
 *      (the client waits for that end of file, then closes)
 *   4  1000 bytes of a request with no newline (within PROTO_MAX_LINE),
 *      then a reset
 *   5  12 KB of pipelined COUNTs and a part, then a reset at once: the
 *      server is still answering the batch when the reset arrives */
static void vanish_step(struct vclient *v, ssize_t r)
{
    tally.unexpected += r;              /* a reply to no whole request */
    v->got = 0;                         /* and go on waiting for the end */
}

static void vanish_one(struct vclient *v)
{
    static char longline[1001], counts[2000 * 6 + sizeof("ADD pa")];

    if (!longline[0]) {
        memset(longline, 'x', sizeof(longline) - 1);
        memcpy(longline, "ADD ", 4);
        for (int i = 0; i < 2000; i++)
            memcpy(counts + 6 * i, "COUNT\n", 6);
        memcpy(counts + 6 * 2000, "ADD pa", sizeof("ADD pa"));
    }
    switch (v->how) {
    case 0:
        send_str(v->fd, "ADD f1 L");
        go(v, 0);
        break;
    case 1:
        send_str(v->fd, "ADD f1 L");
        go(v, 1);
        break;
    case 2:
        send_str(v->fd, "COUNT\nFIND f1 L1\nADD pa");
        go(v, 1);
        break;
    case 3:
        send_str(v->fd, "FIND f2 ");
        shutdown(v->fd, SHUT_WR);
        tally.half_closes++;
        v->want = 4096;                 /* anything but EOF is wrong: the
                                           request was never complete */
        break;
    case 4:
        send_str(v->fd, longline);
        go(v, 1);
        break;
    case 5:
        send_str(v->fd, counts);
        go(v, 1);
        break;
    }
}

/* print-vanish: each client offers a small window (PV_RCVBUF) and sends
 * PV_PRINTS PRINTs at once, more than the server's socket buffer takes
 * (it grows to a few MB on loopback), so the server is still sending, or
 * has PRINT queued (outq.c), when the client goes. By variant (i mod 6):
 *   0  PRINTs, then close at once
 *   1  PRINTs, then a reset at once
 *   2  PRINTs, wait for the first byte, close without reading (unread
 *      data: the kernel resets)
 *   3  PRINTs, read 100 bytes, close (a reset too)
 *   4  PRINTs, read 64 KiB, reset
 *   5  PRINTs, read 1 byte, shutdown(SHUT_WR), read 32 KiB more, close */
static void print_step(struct vclient *v, ssize_t r)
{
    (void)r;
    switch (v->how) {
    case 2:
        go(v, 0);                       /* the byte peeked at stays unread */
        break;
    case 3:
        if (v->got >= v->want)
            go(v, 0);
        break;
    case 4:
        if (v->got >= v->want)
            go(v, 1);
        break;
    case 5:
        if (v->want == 1 && v->got >= 1) {
            shutdown(v->fd, SHUT_WR);
            tally.half_closes++;
            v->want = 1 + 32768;
        } else if (v->got >= v->want) {
            go(v, 0);
        }
        break;
    }
}

static void pvanish_one(struct vclient *v)
{
    static const size_t want[] = { 0, 0, 0, 100, 65536, 1 };

    for (int i = 0; i < PV_PRINTS; i++)
        send_str(v->fd, "PRINT\n");
    v->want = want[v->how];
    if (v->how == 0)
        go(v, 0);
    else if (v->how == 1)
        go(v, 1);
}

static void run_vanish(long n, int print)
{
    struct vclient vs[BATCH];

    for (long done = 0; done < n;) {
        int k = n - done < BATCH ? (int)(n - done) : BATCH;
        int m = 0;
        for (int i = 0; i < k; i++) {
            struct vclient *v = &vs[m];
            v->how = (int)((done + i) % 6);
            v->want = v->got = 0;
            v->fd = dial(print ? PV_RCVBUF : 0);
            tally.clients++;
            if (v->fd < 0) {
                tally.connect_failed++;
                continue;
            }
            if (print)
                pvanish_one(v);
            else
                vanish_one(v);
            m++;
        }
        run_batch(vs, m, print ? print_step : vanish_step);
        done += k;
    }
    printf("clients %ld connect_failed %ld closes %ld resets %ld "
           "half_closes %ld got_bytes %ld server_closed %ld timed_out %ld "
           "unexpected %ld\n",
           tally.clients, tally.connect_failed, tally.closes, tally.resets,
           tally.half_closes, tally.got_bytes, tally.server_closed,
           tally.timed_out, tally.unexpected);
}

/* ---- stall: PRINTs never read --------------------------------------------- */

static void run_stall(int k, int secs)
{
    int fd = dial(STALL_RCVBUF);

    if (fd < 0)
        die("connect");
    for (int i = 0; i < k; i++)
        if (send_str(fd, "PRINT\n"))
            die("send");
    printf("sent %d\n", k);
    fflush(stdout);
    /* SIGTERM's default action ends us; the kernel then closes fd with
     * unread data, which is a reset. Otherwise: SECS, then the same. */
    sleep((unsigned)secs);
    close_rst(fd);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: stress-client PORT vanish|print-vanish N\n"
                        "       stress-client PORT stall K SECONDS\n"
                        "       stress-client PORT hold N PEOPLE\n");
        return 2;
    }
    port = atoi(argv[1]);
    const char *what = argv[2];
    long n = atol(argv[3]);

    if (strcmp(what, "vanish") == 0)
        run_vanish(n, 0);
    else if (strcmp(what, "print-vanish") == 0)
        run_vanish(n, 1);
    else if (strcmp(what, "stall") == 0 && argc == 5)
        run_stall((int)n, atoi(argv[4]));
    else if (strcmp(what, "hold") == 0 && argc == 5 && atol(argv[4]) > 0)
        run_hold(n, atol(argv[4]));
    else {
        fprintf(stderr, "stress-client: what is '%s'?\n", what);
        return 2;
    }
    return 0;
}
