/* econn.h -- one connection of the event-driven driver (events.h): its
 * session, its events and what it still has to send. Used only by its
 * worker's thread, except conn (the registry's, under conns_lock), the
 * waiter (the store's queue, under the store's handoff mutex), jwaiter and
 * cwaiter (the journal's lists, under the journal's lock).
 */
#ifndef SSN_ECONN_H
#define SSN_ECONN_H

#include <event2/event.h>
#include "journal/journal.h"
#include "outq.h"
#include "server.h"
#include "session.h"
#include "store.h"

struct worker;

/* How long one connection may answer buffered requests before its
 * worker's other connections get their turn (memcached's -R, by time). */
#define ECONN_SLICE_NS  (200 * 1000)

enum econn_state {
    ECONN_NEW,                  /* made, its session not begun yet */
    ECONN_PARKED,               /* coarse: waiting for the store lock */
    ECONN_OPEN,                 /* serving requests */
    ECONN_CLOSING,              /* ended: sending what is left */
    ECONN_LINGER,               /* sent all, shut down: draining input */
};

/* What a connection needs only once it may park for its turn (coarse's
 * session-long lock, serial's turn): the store's waiter and the event the
 * hand-over activates, on another thread. */
struct econn_park {
    struct store_waiter waiter;
    struct event *granted;
};

/* What it needs only once it waits for the journal. */
struct econn_jwait {
    struct event *ev;           /* activated by the journal: hold_seq is
                                   durable (or never will be), or the
                                   compaction COMPACT waits for ended */
    struct journal_waiter jwaiter;  /* for hold_seq */
    struct journal_waiter cwaiter;  /* for COMPACT's compaction */
};

struct econn {
    struct conn conn;           /* fd, peer, session (NULL while parked:
                                   an idle connection holds none); in the
                                   registry */
    struct worker *w;
    enum econn_state state;
    struct session_keep keep;   /* conn.session's facts while it is NULL:
                                   parked between requests (session_park) */
    struct event *ev;           /* the socket's: readable (--timeout) or
                                   writable (--write-timeout), never both
                                   (reading, writing say which is added) */
    /* NULL until first needed (econn.c), so that an idle connection holds
     * one event and no waiter: */
    struct event *more;         /* a timer: go on with buffered requests
                                   after the worker's other clients */
    struct econn_park *park;    /* econn_need_park */
    struct econn_jwait *jw;     /* econn_need_jwait */
    int reading, writing;       /* ev added for the one or the other */
    struct outq q;              /* what the socket has not taken yet */
    uint64_t hold_seq;          /* the journal record the replies in q
                                   acknowledge: none of q leaves before it
                                   is durable; 0: none */
    uint64_t linger_until;      /* time_now_ns() deadline of ECONN_LINGER */
    int idle;                   /* closed by --timeout */
    int begin_error;            /* -errno when the session could not begin */
    struct econn *prev, *next;  /* the worker's list; its thread only */
    struct econn *round_next;   /* the worker's round (events_round_add) */
    struct econn *held_next;    /* the worker's held list (events_hold) */
    struct econn **held_pp;     /* ... the pointer to c in it, NULL when c
                                   is in none */
    struct econn **round_pp;    /* ... the pointer to c in it, NULL when c
                                   is in none: its bytes unanswered */
    int unread;                 /* in the round, its recv still to be made
                                   with the pass's others (econn_batch.c) */
    int batched;                /* its reply run in the worker's batch is
                                   entry batched - 1; 0: none */
};

/* Open, or ended and still sending what is left: its replies may leave. */
static inline int econn_sending(const struct econn *c)
{
    return c->state == ECONN_OPEN || c->state == ECONN_CLOSING;
}

struct session_io;

/* econn_send.c: the hooks every connection's session sends through,
 * given the connection. */
extern const struct session_io econn_io;

/* Makes a connection for fd on worker w; NULL on failure (fd untouched). */
struct econn *econn_new(struct worker *w, int fd, const char *peer);

/* On w's thread: sets up the events and begins the session (or parks). */
void econn_begin(struct econn *c, struct event_base *base);

/* econn_wake.c, on c's worker's thread: makes c->more, c->park (before
 * c may park) or c->jw (before c waits for the journal) if c has none
 * yet (an idle connection has none): 0 or -ENOMEM. drop_park frees
 * c->park; drop_wakes all three, c's waits on journal j cancelled. */
int econn_need_more(struct econn *c);
int econn_need_park(struct econn *c);
int econn_need_jwait(struct econn *c);
void econn_drop_park(struct econn *c);
void econn_drop_wakes(struct econn *c, struct journal *j);

/* What each of those wake-ups does: econn.c's more and granted,
 * econn_wake.c's journal (both go on with econn_settle). */
void econn_on_more(evutil_socket_t fd, short what, void *arg);
void econn_on_granted(evutil_socket_t fd, short what, void *arg);
void econn_on_journal(evutil_socket_t fd, short what, void *arg);

/* econn.c: whether c's session has complete requests buffered. */
int econn_input_left(const struct econn *c);

/* econn_end.c, on w's thread. close: ends the session, drops the
 * connection, frees c. begin_closing: QUIT answered, its replies still
 * due. begin_linger: they have gone; drains input (on_linger: a read or
 * its time-out) or closes at once when srv.linger_max linger already. */
void econn_close(struct econn *c);
void econn_begin_closing(struct econn *c);
void econn_begin_linger(struct econn *c);
void econn_on_linger(struct econn *c, short what);

/* econn.c: the one socket event set for reading or writing (watch; never
 * both), and taken off. */
void econn_watch(struct econn *c, short what, const struct timeval *tv);
void econn_read_off(struct econn *c);
void econn_write_off(struct econn *c);

/* events.c: c's replies wait for journal record c->hold_seq: c's worker
 * asks for it once its pass over the ready connections ends, then runs
 * econn_on_committed(c) (c->jw made first). events_hold_forget takes c
 * off that list (econn_close). */
void events_hold(struct econn *c);
void events_hold_forget(struct econn *c);

/* econn_wake.c: the worker's round for c's record has been asked for: c's
 * replies go if it is durable (or c closes if it never will be), else c
 * waits with the journal (econn_on_journal comes back). */
void econn_on_committed(struct econn *c);

/* events.c: the pool w's sessions borrow from (w's thread only). */
struct session_pool *events_pool(struct worker *w);

/* events.c: takes c off its worker's list (econn_close calls it). */
void events_forget(struct econn *c);

/* After a slice of c's requests (more: complete ones may be buffered):
 * sends what may leave and decides what c waits for next. */
void econn_settle(struct econn *c, int more);

/* events.c: c's bytes, received and buffered (session_received_bytes),
 * are answered in its worker's round once the pass's reads are done;
 * events_round_forget takes c out of it (econn_close). */
void events_round_add(struct econn *c);
void events_round_forget(struct econn *c);

/* econn_batch.c: a worker's batched socket calls (its thread only).
 * new: NULL when the kernel offers no io_uring (told once in the log).
 * recv: makes the recv of every connection of the round that is unread,
 * all together, and hands each result to econn_received. collect: while
 * on, take copies a reply that may leave at once (1) instead of sending
 * it, at most one run a connection; send sends those copied, together
 * (what a socket does not take is queued, econn_queue_rest). out: c's
 * copied run leaves now (before anything else of c's). forget: c closes,
 * its copied run never leaves. held: of the connections on a held list
 * (by held_next), those whose record is durable send the head of their
 * queue together; each settles as before (econn_on_committed), finding
 * that much gone (an error is met again by its own send there). */
struct econn_batch;
struct econn_batch *econn_batch_new(void);
void econn_batch_free(struct econn_batch *b);
void econn_batch_recv(struct econn_batch *b, struct econn *const *round);
void econn_batch_collect(struct econn_batch *b, int on);
int econn_batch_take(struct econn *c, const void *data, size_t len);
void econn_batch_send(struct econn_batch *b);
void econn_batch_out(struct econn *c);
void econn_batch_forget(struct econn *c);
void econn_batch_held(struct econn_batch *b, struct econn *list);

/* events.c: w's batch, NULL when it has none (no io_uring, --uring off). */
struct econn_batch *events_batch(struct worker *w);

/* econn.c: c's batched recv returned n (bytes, 0 at the end, -errno):
 * the bytes are buffered for the round, or c rests (-EAGAIN) or closes
 * (taken out of the round either way). */
void econn_received(struct econn *c, ssize_t n);

/* econn_send.c: len bytes of a reply that were to leave at once and did
 * not all go: queued, within --max-output. 0 or -errno. */
int econn_queue_rest(struct econn *c, const void *data, size_t len);

/* econn_round.c: answers a round's connections (linked by round_next)
 * under shared holds of the store lock, then sends their replies. */
void econn_round_run(struct econn *list);

#endif
