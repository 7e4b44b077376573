/* uring.h -- an event worker's batched socket calls: the recv(2)s of the
 * connections one poll found readable, and the send(2)s of a round's
 * replies, each batch in one io_uring_enter(2) instead of a system call
 * a connection (server/net/uring.c, no liburing). Every call is
 * non-blocking (MSG_DONTWAIT): it completes, with bytes or -EAGAIN,
 * before uring_run returns, so the buffers are the caller's again then.
 *
 * One ring a worker, used by that worker's thread only: no lock.
 */
#ifndef SSN_URING_H
#define SSN_URING_H

#include <stddef.h>
#include <stdint.h>

#define URING_BATCH 64          /* calls in one io_uring_enter at most */

struct uring;

/* A ring for one thread; NULL when the kernel has none to give (too old,
 * io_uring disabled, a seccomp filter), *err then -errno. */
struct uring *uring_new(int *err);
void uring_free(struct uring *u);

/* Queues a call (at most URING_BATCH before uring_run): a recv into or
 * a send from [buf, buf + len) on fd. */
void uring_recv(struct uring *u, int fd, void *buf, size_t len);
void uring_send(struct uring *u, int fd, const void *buf, size_t len);

/* Makes the queued calls and waits for all of them. res[i] is the i-th
 * call's result, as recv(2) or send(2) returns it but -errno for an
 * error (-EAGAIN: nothing to read, no room). Returns the number of
 * io_uring_enter(2)s that took (1 but after an interruption), or 0 when
 * the calls were made one by one: a lone call, or any once the ring has
 * failed. */
int uring_run(struct uring *u, int32_t *res);

#endif
