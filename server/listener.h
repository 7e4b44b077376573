/* listener.h -- the accept side: a libevent evconnlistener on the main
 * thread hands each connection to a session thread of its own. This is the
 * I/O model; it knows the lock policy only through one_at_a_time. */
#ifndef SSN_LISTENER_H
#define SSN_LISTENER_H

#include <event2/event.h>

/* Binds srv.opt.bind:port and prints "listening on ADDR:PORT" on stdout.
 * Returns 0, or -1 after printing why on stderr. */
int listener_start(struct event_base *base);

/* Stops accepting; connections already accepted go on. */
void listener_stop(void);

#endif
