/* events.h -- the event-driven driver (--io events), memcached's model: the
 * listener hands each accepted connection to one of N worker threads, round
 * robin; each worker runs its own libevent event_base over its connections,
 * answers every complete request buffered when a socket is readable, sends
 * the batch's replies with one write, keeps what the socket would not take
 * and watches for writability, and never blocks on one slow client, except
 * where the lock policy says so: a PRINT written under fine's lock (and
 * anything written during coarse's session-long lock) waits for the client,
 * which is the lesson those modes teach. A coarse session that cannot have
 * the store lock yet waits parked, its worker serving the others.
 */
#ifndef SSN_EVENTS_H
#define SSN_EVENTS_H

/* Starts n worker threads. Returns 0 or -errno. */
int events_init(int n);

/* Hands the accepted socket fd to a worker: counts and registers the
 * connection. Returns 0, or -errno with fd still the caller's. */
int events_start(int fd, const char *peer);

/* Closes every connection and stops and joins the workers, waiting at most
 * ms milliseconds. Returns 0, or -ETIMEDOUT when a worker is still busy
 * (blocked writing to a client under the store lock): then nothing is
 * freed and the caller exits without cleaning up. */
int events_stop(long ms);

#endif
