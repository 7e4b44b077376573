/* threads_reap.h -- the session threads' connections, and the main
 * thread's joins of the threads that have ended (threads_reap.c). The
 * threads are joinable: one whose session is over puts itself on the
 * ended list before it leaves the registry, and the main thread joins it
 * and frees its tconn (threads_reap: before each accept, each second,
 * and at stop). So no session thread outlives the server's stop, and an
 * ended one keeps its stack at most until the next reap.
 */
#ifndef SSN_THREADS_REAP_H
#define SSN_THREADS_REAP_H

#include <pthread.h>
#include "server.h"

struct tconn {
    struct conn conn;
    pthread_t tid;              /* the main thread's: written there by
                                   pthread_create, read by the reaps */
    struct tconn *ended_next;   /* on the ended list; under ended_lock */
};

/* t's thread is about to return: puts t on the ended list. On t's own
 * thread, before conns_unregister (an empty registry then means every
 * session thread is on the list or joined). */
void threads_note_ended(struct tconn *t);

/* Joins every ended thread, waiting for those still returning, and frees
 * their tconns: at stop, once the registry is empty. Main thread only. */
void threads_reap_all(void);

#endif
