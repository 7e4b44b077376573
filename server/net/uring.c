/* uring.c -- an event worker's batched recv and send calls (uring.h):
 * the raw io_uring_setup(2) and io_uring_enter(2) system calls over the
 * kernel's shared rings. Each call is made MSG_DONTWAIT, which io_uring
 * honours by completing it with -EAGAIN rather than waiting for the
 * socket: all of a batch complete inside the one io_uring_enter.
 *
 * Should the ring ever fail, the batch's calls it did not make are made
 * one by one with recv(2) and send(2), and so is every later batch: the
 * caller always gets every result.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "uring.h"

/* memcheck cannot see the kernel write a recv's bytes through the ring:
 * told, when its header is there, so that it checks them as received. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_DEFINED
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

struct call {
    int op;                     /* IORING_OP_RECV or IORING_OP_SEND */
    int fd;
    void *buf;
    size_t len;
};

struct uring {
    int fd;                     /* -1: broken, the plain calls only */
    unsigned *sq_head, *sq_tail, *sq_array, sq_mask;
    unsigned *cq_head, *cq_tail, cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    void *sq_map, *cq_map;
    size_t sq_len, cq_len, sqes_len;
    int n;                      /* calls queued */
    struct call calls[URING_BATCH];
};

static int sys_setup(unsigned entries, struct io_uring_params *p)
{
    return (int)syscall(__NR_io_uring_setup, entries, p);
}

static int sys_enter(int fd, unsigned submit, unsigned wait)
{
    return (int)syscall(__NR_io_uring_enter, fd, submit, wait,
                        IORING_ENTER_GETEVENTS, NULL, 0);
}

/* Whether the kernel knows both calls (IORING_OP_SEND and _RECV: 5.6). */
static int knows_calls(int fd)
{
    size_t len = sizeof(struct io_uring_probe) +
                 256 * sizeof(struct io_uring_probe_op);
    struct io_uring_probe *p = calloc(1, len);
    int ok = 0;

    if (!p)
        return 0;
    if (syscall(__NR_io_uring_register, fd, IORING_REGISTER_PROBE, p, 256)
        == 0 && p->last_op >= IORING_OP_RECV)
        ok = (p->ops[IORING_OP_SEND].flags & IO_URING_OP_SUPPORTED) &&
             (p->ops[IORING_OP_RECV].flags & IO_URING_OP_SUPPORTED);
    free(p);
    return ok;
}

static void unmap(struct uring *u)
{
    if (u->sqes && u->sqes != MAP_FAILED)
        munmap(u->sqes, u->sqes_len);
    if (u->cq_map && u->cq_map != MAP_FAILED && u->cq_map != u->sq_map)
        munmap(u->cq_map, u->cq_len);
    if (u->sq_map && u->sq_map != MAP_FAILED)
        munmap(u->sq_map, u->sq_len);
}

/* The rings of fd, as p describes them: 0 or -errno. */
static int map_rings(struct uring *u, const struct io_uring_params *p)
{
    int single = p->features & IORING_FEAT_SINGLE_MMAP;
    char *sq, *cq;

    u->sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned);
    u->cq_len = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
    if (single && u->cq_len > u->sq_len)
        u->sq_len = u->cq_len;
    u->sq_map = mmap(NULL, u->sq_len, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
    if (u->sq_map == MAP_FAILED)
        return -errno;
    u->cq_map = single ? u->sq_map
                : mmap(NULL, u->cq_len, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
    if (u->cq_map == MAP_FAILED)
        return -errno;
    u->sqes_len = p->sq_entries * sizeof(struct io_uring_sqe);
    u->sqes = mmap(NULL, u->sqes_len, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
    if (u->sqes == MAP_FAILED)
        return -errno;
    sq = u->sq_map;
    cq = u->cq_map;
    u->sq_head = (unsigned *)(sq + p->sq_off.head);
    u->sq_tail = (unsigned *)(sq + p->sq_off.tail);
    u->sq_mask = *(unsigned *)(sq + p->sq_off.ring_mask);
    u->sq_array = (unsigned *)(sq + p->sq_off.array);
    u->cq_head = (unsigned *)(cq + p->cq_off.head);
    u->cq_tail = (unsigned *)(cq + p->cq_off.tail);
    u->cq_mask = *(unsigned *)(cq + p->cq_off.ring_mask);
    u->cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
    return 0;
}

struct uring *uring_new(int *err)
{
    struct uring *u = calloc(1, sizeof(*u));
    struct io_uring_params p;
    int rc;

    if (!u) {
        *err = -ENOMEM;
        return NULL;
    }
    memset(&p, 0, sizeof(p));
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_SUBMIT_ALL;
    u->fd = sys_setup(URING_BATCH, &p);
    if (u->fd < 0 && errno == EINVAL) {         /* before 6.0 */
        memset(&p, 0, sizeof(p));
        u->fd = sys_setup(URING_BATCH, &p);
    }
    if (u->fd < 0) {
        *err = -errno;
        free(u);
        return NULL;
    }
    rc = map_rings(u, &p);
    if (rc == 0 && !knows_calls(u->fd))
        rc = -EOPNOTSUPP;
    if (rc) {
        *err = rc;
        unmap(u);
        close(u->fd);
        free(u);
        return NULL;
    }
    return u;
}

void uring_free(struct uring *u)
{
    if (!u)
        return;
    unmap(u);
    if (u->fd >= 0)
        close(u->fd);
    free(u);
}

static void queue(struct uring *u, int op, int fd, void *buf, size_t len)
{
    struct call *c = &u->calls[u->n++];

    c->op = op;
    c->fd = fd;
    c->buf = buf;
    c->len = len;
}

void uring_recv(struct uring *u, int fd, void *buf, size_t len)
{
    queue(u, IORING_OP_RECV, fd, buf, len);
}

void uring_send(struct uring *u, int fd, const void *buf, size_t len)
{
    queue(u, IORING_OP_SEND, fd, (void *)buf, len);
}

/* One call the plain way. */
static int32_t plain(const struct call *c)
{
    ssize_t n = c->op == IORING_OP_RECV
                ? recv(c->fd, c->buf, c->len, MSG_DONTWAIT)
                : send(c->fd, c->buf, c->len, MSG_DONTWAIT | MSG_NOSIGNAL);

    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

/* The entries for calls [0, n) behind the ring's tail, published. */
static void fill(struct uring *u, unsigned tail)
{
    for (int i = 0; i < u->n; i++) {
        const struct call *c = &u->calls[i];
        unsigned at = (tail + (unsigned)i) & u->sq_mask;
        struct io_uring_sqe *e = &u->sqes[at];

        memset(e, 0, sizeof(*e));
        e->opcode = (uint8_t)c->op;
        e->fd = c->fd;
        e->addr = (uint64_t)(uintptr_t)c->buf;
        e->len = c->len > UINT32_MAX ? UINT32_MAX : (uint32_t)c->len;
        e->msg_flags = MSG_DONTWAIT |
                       (c->op == IORING_OP_SEND ? MSG_NOSIGNAL : 0);
        e->user_data = (uint64_t)i;
        u->sq_array[at] = at;
    }
    atomic_store_explicit((_Atomic unsigned *)u->sq_tail, tail + (unsigned)u->n,
                          memory_order_release);
}

/* The completions there are: into res, marking done. Returns how many. */
static int reap(struct uring *u, int32_t *res, char *done)
{
    unsigned head = *u->cq_head;
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)u->cq_tail,
                                         memory_order_acquire);
    int got = 0;

    for (; head != tail; head++) {
        const struct io_uring_cqe *e = &u->cqes[head & u->cq_mask];
        if (e->user_data < (uint64_t)u->n && !done[e->user_data]) {
            res[e->user_data] = e->res;
            done[e->user_data] = 1;
            got++;
        }
    }
    atomic_store_explicit((_Atomic unsigned *)u->cq_head, head,
                          memory_order_release);
    return got;
}

/* The ring failed: the calls it had not taken are withdrawn, those it
 * took are waited for, and the ring is not used again. */
static void give_up(struct uring *u, unsigned tail, int32_t *res, char *done,
                    int *left)
{
    unsigned head = atomic_load_explicit((_Atomic unsigned *)u->sq_head,
                                         memory_order_acquire);
    int taken = (int)(head - tail), waiting;

    atomic_store_explicit((_Atomic unsigned *)u->sq_tail, head,
                          memory_order_release);
    *left -= reap(u, res, done);
    waiting = taken - (u->n - *left);
    while (waiting > 0) {               /* made, not yet answered */
        int r = sys_enter(u->fd, 0, (unsigned)waiting);
        if (r < 0 && errno != EINTR)
            abort();                    /* the kernel keeps our buffers */
        int got = reap(u, res, done);
        *left -= got;
        waiting -= got;
    }
    close(u->fd);
    u->fd = -1;
}

int uring_run(struct uring *u, int32_t *res)
{
    char done[URING_BATCH] = { 0 };
    int n = u->n, left = n, enters = 0;
    unsigned tail, submit;

    if (n == 0)
        return 0;
    if (u->fd >= 0 && n > 1) {          /* one call: the plain one is
                                           cheaper than the ring's */
        tail = *u->sq_tail;
        fill(u, tail);
        submit = (unsigned)n;
        while (left > 0) {
            int r = sys_enter(u->fd, submit, (unsigned)left);
            enters++;
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0 || (r == 0 && submit > 0)) {
                give_up(u, tail, res, done, &left);
                break;
            }
            submit -= (unsigned)r;
            left -= reap(u, res, done);
        }
    }
    for (int i = 0; i < n; i++)
        if (!done[i])
            res[i] = plain(&u->calls[i]);
        else if (u->calls[i].op == IORING_OP_RECV && res[i] > 0)
            VALGRIND_MAKE_MEM_DEFINED(u->calls[i].buf, (size_t)res[i]);
    u->n = 0;
    return enters;
}
