/* listener.h -- the accept side: a libevent evconnlistener on the main
 * thread applies --max-clients and the lock policy's admission, then hands
 * each connection to the thread-per-connection driver (threads.h). */
#ifndef SSN_LISTENER_H
#define SSN_LISTENER_H

#include <event2/event.h>

/* Binds srv.opt.bind:port and prints "listening on ADDR:PORT" on stdout.
 * Returns 0, or -1 after printing why on stderr. */
int listener_start(struct event_base *base);

/* Accepts again after the policy paused admission (any thread may call
 * it; a no-op when not paused or after listener_stop). */
void listener_resume(void);

/* Stops accepting; connections already accepted go on. */
void listener_stop(void);

#endif
