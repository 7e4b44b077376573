/* bench-echo-threads.c -- bench-echo -m threads: the floor of ssnserver's
 * --io threads, a thread per connection, blocking read(2) and send(2),
 * the same answers as the epoll model (bench-echo.c). With -j each read's
 * bytes go to the file first, and with -S the answers wait for an
 * fdatasync that covers them (bench-echo-journal.c). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "bench-echo.h"
#include "bench-echo-journal.h"

int echo_sched_batch = 1;               /* -s batch (the default) */

/* One connection's thread. Blocking reads; every request a read returned
 * is answered, and the answers go in one send, as the epoll model does
 * with a batch. */
static void *conn_thread(void *arg)
{
    struct echo_conn *c = arg;
    int fd = c->fd;
    struct ej_reply *held = NULL;

    if (echo_sched_batch) {
        struct sched_param sp = { .sched_priority = 0 };
        pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    }
    if (echo_journal_synced() && !(held = ej_reply_new(fd)))
        goto out;
    for (;;) {
        ssize_t r = read(fd, c->in + c->in_len, sizeof(c->in) - c->in_len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        c->in_len += (size_t)r;
        if (echo_journal_on() &&
            echo_journal_write(c->in + c->in_len - r, (size_t)r) < 0) {
            perror("bench-echo: --journal: pwrite");
            exit(1);
        }
        if (answer_lines(c) < 0)
            break;
        int rc = held ? ej_reply_answer(held, c->out, c->out_len)
                      : echo_send_all(fd, c->out, c->out_len);
        if (rc < 0)
            break;
        c->out_len = 0;
    }
out:
    ej_reply_free(held);
    close(fd);
    free(c->out);
    free(c);
    return NULL;
}

int serve_threads(int lfd, int port)
{
    pthread_attr_t attr;
    int fl = fcntl(lfd, F_GETFL);

    fcntl(lfd, F_SETFL, fl & ~O_NONBLOCK);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    printf("listening on 127.0.0.1:%d\n", port);
    fflush(stdout);
    while (!stopping) {
        int one = 1, fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;           /* EINTR from the stopping signal, or a
                                   connection gone before it was taken */
        struct echo_conn *c = calloc(1, sizeof(*c));
        pthread_t th;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (c)
            c->fd = fd;
        if (!c || pthread_create(&th, &attr, conn_thread, c)) {
            free(c);
            close(fd);
        }
    }
    return 0;
}
