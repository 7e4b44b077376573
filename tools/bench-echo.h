/* bench-echo.h -- what bench-echo.c's epoll model shares with its
 * batched variant, bench-echo-uring.c (-u): the connections, their
 * answers and their sends. Each connection belongs to the one worker
 * whose epoll set holds its descriptor; nothing here locks. */
#ifndef BENCH_ECHO_H
#define BENCH_ECHO_H

#include <signal.h>
#include <stddef.h>

#define ECHO_BUF      65536   /* bytes read per connection at a time */
#define ECHO_MAX_CONN 65536   /* descriptors served (one buffer each) */
#define ECHO_EVENTS   256     /* events taken per epoll_wait */

/* A partial line kept between reads, and answers the socket has not taken
 * yet. */
struct echo_conn {
    char in[ECHO_BUF];
    size_t in_len;
    char *out;
    size_t out_len, out_cap;
    int fd;                     /* -m threads: the connection's own */
    int watching_out;           /* epoll: EPOLLOUT asked for */
};

extern struct echo_conn *conns[ECHO_MAX_CONN];  /* by descriptor */
extern volatile sig_atomic_t stopping;          /* SIGINT or SIGTERM came */

/* Answers every whole line in c->in, keeps the partial one. -1 when out
 * of memory or when a line is longer than the buffer. */
int answer_lines(struct echo_conn *c);

/* Sends what is pending; watches EPOLLOUT only while something is left.
 * -1 when the connection is gone. */
int flush_out(int ep, int fd, struct echo_conn *c);

/* Accepts every connection waiting on lfd into ep. */
void accept_all(int ep, int lfd);

/* Closes fd and frees its connection. */
void drop(int ep, int fd);

/* -m threads (bench-echo-threads.c): accepts on lfd, blocking, and
 * starts a thread for each connection until a signal stops it. Threads
 * are SCHED_BATCH unless echo_sched_batch is 0 (-s normal). */
extern int echo_sched_batch;
int serve_threads(int lfd, int port);

/* -u: serves ep (lfd in it) until stopping, a poll's reads in one
 * io_uring_enter(2) and their answers in another; 0 then. -1 at once,
 * said on stderr, when the kernel gives no ring. */
int worker_uring(int ep, int lfd);

#endif
