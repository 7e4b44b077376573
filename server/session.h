/* session.h -- one client's conversation: read requests, answer them in
 * order, batching the replies to everything already received into one
 * write. The same loop serves a socket or stdin/stdout (--stdin).
 */
#ifndef SSN_SESSION_H
#define SSN_SESSION_H

#include "digest.h"
#include "linereader.h"
#include "outbuf.h"

struct session {
    int rfd, wfd;
    int quiet;                  /* --quiet: no OK or Bye */
    struct linereader lr;
    struct outbuf out;
    struct digest *digest;      /* this thread's own SHA-256 context */
    struct entry *spare;        /* made outside the lock, for the next ADD */
    struct entry probe;         /* the current request's fields */
    long commands;              /* requests answered, not yet counted in srv */
    struct session *prev, *next;    /* srv.conns; protected by conns_lock */
};

/* NULL when memory or a digest context cannot be had. Does not own fds. */
struct session *session_new(int rfd, int wfd, int quiet);
void session_free(struct session *s);

/* Serves until the client says DONE/QUIT, closes, or fails. */
void session_run(struct session *s);

#endif
