/* bench-echo-uring.c -- bench-echo -u: the epoll model's floor with the
 * socket calls batched as ssnserver --io events --uring on batches them
 * (server/net/econn_batch.c): the reads of the connections one
 * epoll_wait found readable go in one io_uring_enter(2) (64 at most),
 * then the sends of the answers those reads made in one more. A send the
 * socket does not take whole goes on the plain way (flush_out, EPOLLOUT).
 * Uses server/net/uring.c, the server's own ring, and nothing else of it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include "bench-echo.h"
#include "../server/net/uring.h"

/* Reads the n connections of fds in one enter, answers what came and
 * queues each one's answers; then sends them in one more. */
static void batch(struct uring *u, int ep, const int *fds, int n)
{
    int32_t res[URING_BATCH];
    int sent[URING_BATCH], m = 0;

    for (int i = 0; i < n; i++) {
        struct echo_conn *c = conns[fds[i]];
        uring_recv(u, fds[i], c->in + c->in_len, sizeof(c->in) - c->in_len);
    }
    uring_run(u, res);
    for (int i = 0; i < n; i++) {
        struct echo_conn *c = conns[fds[i]];

        if (res[i] == -EAGAIN || res[i] == -EINTR)
            continue;
        if (res[i] <= 0) {
            drop(ep, fds[i]);
            continue;
        }
        c->in_len += (size_t)res[i];
        if (answer_lines(c) < 0) {
            drop(ep, fds[i]);
            continue;
        }
        if (c->out_len && !c->watching_out) {
            uring_send(u, fds[i], c->out, c->out_len);
            sent[m++] = fds[i];
        }
    }
    if (!m)
        return;
    uring_run(u, res);
    for (int i = 0; i < m; i++) {
        struct echo_conn *c = conns[sent[i]];

        if (res[i] < 0 && res[i] != -EAGAIN && res[i] != -EINTR) {
            drop(ep, sent[i]);
            continue;
        }
        size_t took = res[i] > 0 ? (size_t)res[i] : 0;
        memmove(c->out, c->out + took, c->out_len - took);
        c->out_len -= took;
        if (c->out_len && flush_out(ep, sent[i], c) < 0)
            drop(ep, sent[i]);
    }
}

int worker_uring(int ep, int lfd)
{
    struct epoll_event evs[ECHO_EVENTS];
    int fds[URING_BATCH], err = 0;
    struct uring *u = uring_new(&err);

    if (!u) {
        fprintf(stderr, "bench-echo: --uring: the kernel gives no io_uring "
                "(%s): a recv and a send a connection instead\n",
                strerror(-err));
        return -1;
    }
    while (!stopping) {
        int n = epoll_wait(ep, evs, ECHO_EVENTS, 200), k = 0;

        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            struct echo_conn *c = conns[fd];

            if (fd == lfd) {
                accept_all(ep, lfd);
                continue;
            }
            if ((evs[i].events & EPOLLOUT) && c->out_len &&
                flush_out(ep, fd, c) < 0) {
                drop(ep, fd);
                continue;
            }
            if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                continue;
            if (c->in_len == sizeof(c->in)) {   /* a line too long */
                drop(ep, fd);
                continue;
            }
            fds[k++] = fd;
            if (k == URING_BATCH) {
                batch(u, ep, fds, k);
                k = 0;
            }
        }
        if (k)
            batch(u, ep, fds, k);
    }
    uring_free(u);
    return 0;
}
