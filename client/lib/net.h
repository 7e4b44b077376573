/* net.h -- client-side socket helpers: a connect with a time limit and a
 * send that never blocks forever. Sockets are non-blocking; every wait is a
 * poll in slices of NET_POLL_MS so callers can give up on a flag or a
 * deadline (kill_it must never hang on a stuck server).
 */
#ifndef SSN_CLIENT_NET_H
#define SSN_CLIENT_NET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define NET_POLL_MS 50          /* longest single poll before re-checking */

/* Resolves host:port and connects, trying each address, within timeout_ms.
 * rcvbuf > 0 sets SO_RCVBUF first (before the handshake, so the advertised
 * window is small too); mss > 0 sets TCP_MAXSEG, so the server's side sees
 * the segment size of a real link instead of loopback's 64 KiB (which makes
 * its kernel grow the send buffer to megabytes). Returns a non-blocking, close-on-exec socket with
 * TCP_NODELAY set, or -errno with a one-line reason in err. */
int net_connect(const char *host, const char *port, int rcvbuf, int mss,
                int timeout_ms, char *err, size_t errlen);

/* Sends all len bytes (MSG_NOSIGNAL: a closed peer is -EPIPE, never
 * SIGPIPE), waiting for room as needed. Returns 0; -ECANCELED once *stop is
 * non-zero (stop may be NULL); -ETIMEDOUT after deadline_ns (0: none) on
 * the monotonic clock; or the socket's -errno. *sent (may be NULL) gets
 * the bytes actually sent either way. */
int net_send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns,
                 atomic_int *stop, size_t *sent);

/* Polls fd for events for at most timeout_ms, retrying EINTR. Returns the
 * revents (> 0), 0 on time-out, or -errno. */
int net_wait(int fd, short events, int timeout_ms);

#endif
