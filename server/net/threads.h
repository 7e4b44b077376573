/* threads.h -- the thread-per-connection driver: each accepted connection
 * gets a thread of its own that blocks in read(2) and write(2) and drives
 * the connection's session core (session.h). --stdin uses the same loop on
 * standard input and output.
 */
#ifndef SSN_THREADS_H
#define SSN_THREADS_H

#include <stddef.h>

struct conn;
struct session;

/* Makes c's session (c->session, also returned; NULL when out of memory)
 * with this driver's blocking sends to c->fd. */
struct session *threads_session_new(struct conn *c, int quiet);

#define THREADS_ENDED     1     /* the session ended itself: QUIT, an
                                   output limit, a failed send */
#define THREADS_IDLE      2     /* nothing arrived for --timeout seconds */
#define THREADS_READ_FAILED 3   /* a read failed (a reset, or --stdin's
                                   error): its errno in *read_errno */

/* Serves s from rfd until the client leaves or the session ends, between
 * the policy's session_begin and session_end. Returns 0 when the client
 * closed, THREADS_ENDED, THREADS_IDLE, THREADS_READ_FAILED, or -errno when
 * session_begin failed (nothing was read then). */
int threads_serve(struct session *s, int rfd, int *read_errno);

/* Starts a thread serving the socket fd: counts and registers the
 * connection and, when the session ends, closes fd and tells the lock
 * policy (which may let the listener accept again). Returns 0, or -errno
 * with fd still the caller's to refuse and close. Main thread only. */
int threads_start(int fd, const char *peer);

/* Joins the session threads that have ended and returned, without
 * waiting for one still returning, and frees their connections. Main
 * thread only: the listener calls it before each accept and each
 * second. */
void threads_reap(void);

/* Sets up the threads' attributes and their buffer pool once, before
 * threads_start. threads_done, once the registry is empty, joins the
 * last session threads and frees the pool's spares. */
int threads_init(void);
void threads_done(void);

#endif
