/* session.h -- one client's conversation, with no I/O of its own: bytes in,
 * replies out (the "sans-I/O" shape of h11 or picohttpparser).
 *
 * A driver owns the connection. It receives bytes straight into the
 * session's input buffer (session_recv_space, then session_received, which
 * answers every complete request already there, in order), then sends the
 * replies of that whole batch with one write (session_output and
 * session_output_sent, or session_flush). The session calls the driver back
 * through struct session_io only when it must send before the batch ends:
 * past OUT_HIGH_WATER bytes of replies, and when the lock policy writes
 * PRINT while walking the tree. Every request gets exactly one reply.
 *
 * A session is used by one thread at a time. It touches the shared store
 * only through the lock policy's hooks (lockmode.h).
 */
#ifndef SSN_SESSION_H
#define SSN_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include "digest.h"
#include "entry.h"
#include "linereader.h"
#include "outbuf.h"
#include "telnet.h"
#include "store.h"

struct journal_waiter;

#define SESSION_OUT_INITIAL     4096    /* reply buffer to start with */
#define SESSION_OUT_HIGH_WATER  65536   /* send mid-batch beyond this */
#define SESSION_OUT_SHRINK      (4 * SESSION_OUT_HIGH_WATER)
                                        /* give back a buffer grown past
                                           this once it is sent */

struct listing;

/* The driver's side. send takes all of data for the client (written, or
 * queued by a driver that never blocks) before it returns, and returns 0
 * or -errno. send_listing, when set, takes a shared PRINT listing and one
 * reference to it (the driver drops it with listing_put once sent), so a
 * queueing driver holds the listing instead of a copy; when NULL, the
 * listing goes through send. */
struct session_io {
    int (*send)(void *arg, const void *data, size_t len);
    int (*send_listing)(void *arg, struct listing *l);
    void *arg;
};

struct session {
    struct store *store;        /* shared: held only as its policy says */
    struct session_io io;
    int quiet;                  /* --quiet: no OK or Bye */
    int ending;                 /* QUIT was answered, or sending failed:
                                   no further request is read */
    int authed;                 /* AUTH succeeded, or no password is set */
    char peer[64];              /* the client's address, for the log */
    struct telnet tn;           /* telnet commands taken out of the input */
    struct linereader in;       /* bytes received, split into requests */
    struct outbuf out;          /* replies not yet sent */
    size_t reply_mark;          /* out.len where the current reply began */
    int reply_failed;           /* -ENOMEM or -ENOBUFS when a part of the
                                   current reply was lost, else 0 */
    int output_limited;         /* a reply went over out.limit: the session
                                   ended (the driver logs and counts it) */
    int send_error;             /* the -errno of the send that failed (the
                                   session ended), else 0 */
    struct digest *digest;      /* this session's own SHA-256 context */
    struct person req;          /* the current request's fields */
    int req_depth;              /* the current TREE request's depth */
    long commands;              /* requests answered, not yet counted in
                                   srv.commands_total */
    uint64_t journal_seq;       /* the last journal record this session's
                                   replies acknowledge and that is not yet
                                   known durable; 0: none */
    /* One store-lock hold for a run of requests (session_set_batch): */
    int batch_max;              /* requests one hold may cover after the
                                   first; 0 (the default): one each */
    int batch_left;             /* what this hold may still cover */
    int batch_ok;               /* the current request may keep the lock */
    int batch_held;             /* the lock is kept for the next request */
    enum store_access batch_how;    /* the strongest access the kept hold
                                       has covered (one lock serves both
                                       today), for op_leave */
};

/* NULL when memory or a digest context cannot be had. */
struct session *session_new(struct store *st, const struct session_io *io,
                            int quiet);
void session_free(struct session *s);

/* The policy's session hooks (coarse takes the store lock here for the
 * session's whole life). session_begin returns 0 or -errno; when it fails
 * the session must not be used. */
int session_begin(struct session *s);
void session_end(struct session *s);

/* session_begin for an event loop: 0 when begun, or -EAGAIN when w is
 * queued (coarse: the store lock is taken) and w->notify will be called;
 * then session_begin_adopt(s, w) on the loop's thread. */
int session_begin_nowait(struct session *s, struct store_waiter *w);
void session_begin_adopt(struct session *s, struct store_waiter *w);

/* Where the driver receives: *room free bytes (never 0 while the session
 * is not ending). Then session_received(s, n) with the count received. */
char *session_recv_space(struct session *s, size_t *room);

/* n bytes arrived: answers every complete request buffered. Returns 1 when
 * the session is over (QUIT, or the client could not be written to): the
 * driver sends what output is left and closes. Else 0. */
int session_received(struct session *s, size_t n);

/* The event driver's form: answers complete requests for at most about
 * budget_ns nanoseconds (at least one), so one pipelining client cannot
 * hold its worker's other clients for a whole batch (memcached's -R, by
 * time). *more says that complete requests still wait: call it again with
 * n = 0 before receiving more. Returns as session_received. */
int session_received_slice(struct session *s, size_t n, uint64_t budget_ns,
                           int *more);

/* Copies data in and answers as session_received does, as often as the
 * input buffer needs (for tests and drivers without a buffer of their own).
 * Stops at the end of the session. Returns as session_received. */
int session_input(struct session *s, const void *data, size_t len);

/* The replies not yet sent, and how many bytes of them the driver sent. */
const char *session_output(const struct session *s, size_t *len);
void session_output_sent(struct session *s, size_t n);

/* Sends every reply not yet sent through io.send. Returns 0 or -errno; on
 * error the session is ending and the output is dropped. A buffer that grew
 * past SESSION_OUT_SHRINK is given back down to SESSION_OUT_INITIAL.
 * With a journal, it first waits until every record the replies
 * acknowledge is durable (session_durable): group commit happens here. */
int session_flush(struct session *s);

/* Waits until the session's journal records are durable. Returns 0 (also
 * without a journal, at the cost of one branch), or -EIO when they never
 * will be: then the replies must not leave, and the session ends. */
int session_durable(struct session *s);

/* session_durable for an event loop: 0 when the replies may leave now
 * (session_flush will not block), or -EAGAIN when w is queued with the
 * journal and w->notify will tell when (journal_wait_async). */
int session_durable_async(struct session *s, struct journal_waiter *w);

/* Lets one hold of the store lock cover up to 1 + n consecutive simple
 * requests (ADD, DELETE, FIND, COUNT) of a slice when more are already
 * buffered; the event driver's choice (docs/ARCHITECTURE.md). 0: one hold
 * per request, as the thread-per-connection lessons measure. */
void session_set_batch(struct session *s, int n);

/* Names the client in the log ("[addr]:port"; "stdin" by default). */
void session_set_peer(struct session *s, const char *peer);

/* The most bytes of replies the session may hold unsent (0: no limit). A
 * reply that would go over it is replaced by "Error: output limit
 * exceeded" and the session ends. */
void session_set_output_limit(struct session *s, size_t limit);

#endif
