/* session.h -- one client's conversation, with no I/O of its own: bytes in,
 * replies out (the "sans-I/O" shape of h11 or picohttpparser).
 *
 * A driver owns the connection. It receives bytes straight into the
 * session's input buffer (session_recv_space, then session_received, which
 * answers every complete request already there, in order), then has the
 * batch's replies sent with one call (session_flush).
 *
 * Every byte a client gets leaves through one function, session.c's emit,
 * and so through the driver's io.send, which asserts that the calling
 * thread holds the store lock for no store operation (lockmode.h,
 * STORE_ASSERT_NOT_HELD). fine's streamed PRINT is the one exception, by
 * its own path (reply_send_locked, io.send_locked): writing under the lock
 * is what that mode is there to show.
 *
 * Durability is a mark on the output, not a wait: each send carries the
 * journal record its bytes acknowledge, and the driver releases them only
 * once that record is durable. The thread driver waits for it (blocking is
 * its model); the event driver queues them and is woken by the journal.
 *
 * A session is used by one thread at a time. It touches the shared store
 * only through the lock policy's hooks (lockmode.h).
 *
 * Its input and reply buffers are borrowed only while a request is in
 * progress (memcached's rbuf): session_recv_space takes them, and the
 * driver gives them back with session_release once the input is empty and
 * every reply sent, so an idle connection holds neither. They come from
 * the driver's session_pool (an event worker's, its thread's alone), or
 * from malloc without one, and go back wiped (they held SSNs and
 * passwords). A driver with a pool may give the idle session itself
 * back too (session_park), keeping three facts of it (session_keep).
 */
#ifndef SSN_SESSION_H
#define SSN_SESSION_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "bufpool.h"
#include "digest.h"
#include "entry.h"
#include "linereader.h"
#include "proto.h"
#include "outbuf.h"
#include "telnet.h"
#include "store.h"

#define SESSION_OUT_INITIAL     4096    /* reply buffer to start with */
#define SESSION_OUT_HIGH_WATER  65536   /* send mid-batch beyond this */
#define SESSION_OUT_SHRINK      (4 * SESSION_OUT_HIGH_WATER)
                                        /* give back a buffer grown past
                                           this once it is sent */
#define SESSION_POOL_SPARE      64      /* spare buffer pairs a pool keeps */

struct listing;
struct metrics_set;

/* The buffers sessions borrow while a request is in progress: one event
 * worker's, used by its thread alone (no lock), or shared by the session
 * threads of the thread driver (session_pool_init_shared): then its lists
 * of buffers are taken under lock, held for a pop or a push (never for
 * a wipe, malloc or free), and it has no digest or session structs to lend. */
struct session_pool {
    struct bufpool line;        /* input: LR_BUF_SIZE bytes each */
    struct bufpool reply;       /* replies: SESSION_OUT_INITIAL bytes each */
    struct bufpool sessions;    /* parked sessions' structs (session_park);
                                   not shared */
    struct digest *digest;      /* the SHA-256 context its sessions share
                                   (session_digest); NULL until one needs
                                   it; not shared */
    int shared;                 /* line and reply under lock */
    pthread_mutex_t lock;
};

/* The driver's side.
 * send takes all of data for the client (written, or queued by a driver
 * that never blocks) before it returns, and returns 0 or -errno; the bytes
 * reach the client only once journal record `durable` is durable (0: no
 * record). When it never will be, the driver drops them and the session
 * ends: -EIO from a blocking driver, a closed connection from a queueing
 * one.
 * send_listing, when set, takes a shared PRINT listing and one reference
 * to it (the driver drops it with listing_put once sent), with the same
 * mark, so a queueing driver holds the listing instead of a copy; when
 * NULL, the listing goes through send.
 * send_locked writes at once, blocking, while the calling thread holds the
 * store lock: fine's streamed PRINT only. Nothing it sends waits for the
 * journal (the session sent everything marked before it took the lock).
 * drained, when set (a queueing driver), says whether everything sent so
 * far has reached the socket; a blocking driver's sends always have.
 * admit, when set, begins the session after AUTH succeeded (with a
 * password, admission waits for it: session_begin): 0 when begun, -EAGAIN
 * when a driver that never waits will run the session again once it has
 * (the AUTH's answer waits: SESSION_WAITS_ADMISSION), or -errno. It also
 * tells the driver the connection is authenticated. When NULL, the
 * policy's session_begin runs, blocking.
 * never_waits: an event loop's driver. A request that would wait for
 * something else than the client (COMPACT's outcome) waits without
 * blocking instead (session_waiting), and the driver runs it again.
 * Every hook is given the session's io_arg (the connection). A driver's
 * hooks are one struct for all its sessions, kept, not copied. */
struct session_io {
    int (*send)(void *arg, const void *data, size_t len, uint64_t durable);
    int (*send_listing)(void *arg, struct listing *l, uint64_t durable);
    int (*send_locked)(void *arg, const void *data, size_t len);
    int (*drained)(void *arg);
    int (*admit)(void *arg);
    /* Sleeps until the CLOCK_MONOTONIC time until (ns): 0, or -1 when the
     * connection was hung up meanwhile (the server dropped it). NULL: a
     * plain sleep. */
    int (*sleep_until)(void *arg, uint64_t until);
    int never_waits;
};

struct session {
    struct store *store;        /* shared: held only as its policy says */
    const struct session_io *io;    /* its driver's hooks */
    void *io_arg;               /* ... and what they are given */
    int quiet;                  /* --quiet: no OK or Bye */
    int ending;                 /* QUIT was answered, or sending failed:
                                   no further request is read */
    int authed;                 /* AUTH succeeded, or no password is set */
    int begun;                  /* the policy's session_begin ran */
    int auth_failures;          /* wrong AUTHs on this connection */
    int auth_right;             /* the AUTH waiting to be answered was */
    const char *peer;           /* the client's address, for the log: its
                                   connection's, which outlives it */
    struct telnet tn;           /* telnet commands taken out of the input */
    struct linereader in;       /* bytes received, split into requests;
                                   its buffer borrowed (session_pool) */
    struct outbuf out;          /* replies not yet sent; borrowed too */
    struct session_pool *pool;  /* where in's and out's buffers come from
                                   and go back to; NULL: malloc and free */
    size_t reply_mark;          /* out.len where the current reply began */
    int reply_failed;           /* -ENOMEM or -ENOBUFS when a part of the
                                   current reply was lost, else 0 */
    int output_limited;         /* a reply went over out.limit: the session
                                   ended (the driver logs and counts it) */
    int send_error;             /* the -errno of the send that failed (the
                                   session ended), else 0 */
    struct digest *digest;      /* its own SHA-256 context, made when first
                                   needed, when it has no pool (session_digest) */
    struct person *req;         /* the running request's fields: its
                                   thread's (session.c, req_space), set
                                   as each request is parsed; a request
                                   that waits runs again without them */
    uint64_t req_hash;          /* the running request's names' hash in
                                   the store's index, when the look-ahead
                                   made it (cmd_kept_take), else 0 */
    int req_depth;              /* the current TREE request's depth */
    long commands;              /* requests answered, not yet counted in
                                   srv.commands_total */
    struct metrics_set *ms;     /* the running slice's latency histograms
                                   (metrics.h), taken at its first request
                                   measured; given back at its end and
                                   before what may wait long (session.c,
                                   ms_give) */
    uint64_t journal_seq;       /* the last journal record the replies in
                                   out acknowledge: the mark their send
                                   carries; 0: none */
    int compact_due;            /* a mutation said the automatic
                                   compaction is due (cmd_compact_due) */
    int waiting;                /* the request in s->req waits to run again
                                   (session_waiting) */
    enum proto_cmd waiting_cmd; /* ... and which request it is */
    int wait_kind;              /* ... and what for: enum session_wait */
    uint64_t wait_until;        /* SESSION_WAITS_TIMER: time_now_ns() */
    uint64_t compact_gen;       /* the compaction COMPACT waits for */
    unsigned trace_window;      /* the trace window TRACE STOP waits for
                                   the writing of; 0: none */
    uint64_t waited_from;       /* time_now_ns() when the waiting request
                                   was parsed, for its latency */
    /* One store-lock hold for a run of requests (session_set_batch): */
    int batch_max;              /* requests one hold may cover after the
                                   first; 0 (the default): one each */
    int batch_left;             /* what this hold may still cover */
    int batch_ok;               /* the current request may keep the lock */
    int batch_kept;             /* the lock is kept for the next request */
    enum store_access batch_how;    /* the strongest access the kept hold
                                       has covered (one lock serves both
                                       today), for op_leave */
};

/* A session whose driver's hooks are io (which must outlive it), given
 * arg. NULL when memory cannot be had. */
struct session *session_new(struct store *st, const struct session_io *io,
                            void *arg, int quiet);
void session_free(struct session *s);

/* session_new for a driver with a pool: the struct comes from p's spares
 * when it has one, and goes back to them (session_free). */
struct session *session_new_pooled(struct session_pool *p, struct store *st,
                                   const struct session_io *io, void *arg);

/* What an idle session is, besides what its driver sets up again
 * (session_park): all a parked connection keeps of it. */
struct session_keep {
    unsigned char authed;       /* session's authed, begun, auth_failures */
    unsigned char begun;
    unsigned short auth_failures;
};

/* session_park.c: an idle session (between requests: no input, no reply
 * unsent, nothing waiting, no lock kept, nothing to count) with a pool
 * goes back to it whole: returns 1 (s is freed, k says what it was) or
 * 0 (s is kept, its buffers given back as session_release does).
 * session_unpark makes it again from k, on a session_new_pooled the
 * driver has set up; session_end_parked is session_end for a parked one.
 * So an idle event connection holds no session at all (session_unpark
 * costs a spare from the pool, not malloc, while requests come). */
int session_park(struct session *s, struct session_keep *k);
void session_unpark(struct session *s, const struct session_keep *k);
void session_end_parked(struct store *st, struct session_keep *k);

/* The policy's session hooks (coarse takes the store lock here for the
 * session's whole life, serial with a password its turn). session_begin
 * returns 0 or -errno; when it fails the session must not be used. With a
 * password it begins nothing yet: admission waits for AUTH (session_admit,
 * through io.admit), so an unauthenticated client holds up nobody.
 * session_end ends what began, if anything did. */
int session_begin(struct session *s);
void session_end(struct session *s);

/* AUTH succeeded: begins the session through io.admit (or the policy,
 * blocking). Returns as io.admit. */
int session_admit(struct session *s);

/* session_begin for an event loop: 0 when begun, or -EAGAIN when w is
 * queued (coarse: the store lock is taken) and w->notify will be called;
 * then session_begin_adopt(s, w) on the loop's thread. */
int session_begin_nowait(struct session *s, struct store_waiter *w);
void session_begin_adopt(struct session *s, struct store_waiter *w);

/* Where the driver receives: *room free bytes (never 0 while the session
 * is not ending). Then session_received(s, n) with the count received.
 * Borrows the session's buffers if it has given them back; NULL (and
 * *room 0) when they cannot be had: the driver ends the connection. */
char *session_recv_space(struct session *s, size_t *room);

/* Takes the input and reply buffers the session does not hold (from its
 * pool, or malloc). Returns 0 or -ENOMEM (what was had is kept). */
int session_borrow(struct session *s);

/* How many buffers session_borrow has had to take from malloc since the
 * process started, every session's, pool or none (STATS
 * session_buffers_malloced): with a pool, a few per connection served at
 * once, never one per request. Atomic; counted on the malloc path only.
 * reset: back to 0 (STATS RESET). */
unsigned long session_buffers_malloced(void);
void session_buffers_malloced_reset(void);

/* Gives both buffers back, wiped, when nothing needs them: no input
 * buffered, no reply unsent, no request waiting (session_waiting). Returns
 * 1 when the session holds no buffer now, 0 when it keeps them. Drivers
 * call it when they go back to waiting for the client. */
int session_release(struct session *s);

/* Sessions given p borrow from it (on p's thread only, unless p is
 * shared); NULL: malloc. */
void session_set_pool(struct session *s, struct session_pool *p);

/* s's pool when s's thread alone uses it (an event worker's), else NULL:
 * only such a pool lends more than buffers (the digest context) and takes
 * sessions back (session_free, session_park). */
static inline struct session_pool *session_own_pool(const struct session *s)
{
    return s->pool && !s->pool->shared ? s->pool : NULL;
}

/* The SHA-256 context s may use now (its pool's, else its own), made on
 * first use; NULL when memory cannot be had. Not under the store lock:
 * it may allocate. */
struct digest *session_digest(struct session *s);

/* An empty pool: keeps up to spare buffers of each kind (<=
 * BUFPOOL_MAX_SPARE). session_pool_destroy frees the spares; every session
 * using p must have been freed first. */
void session_pool_init(struct session_pool *p, int spare);
/* The same for many threads: line and reply buffers only (0, or -errno). */
int session_pool_init_shared(struct session_pool *p, int spare);
void session_pool_destroy(struct session_pool *p);

/* n bytes arrived: answers every complete request buffered. Returns 1 when
 * the session is over (QUIT, or the client could not be written to): the
 * driver sends what output is left and closes. Else 0. A blocking driver
 * never sees a request wait (session_waiting). */
int session_received(struct session *s, size_t n);

/* The event driver's form: answers complete requests for at most about
 * budget_ns nanoseconds (at least one), so one pipelining client cannot
 * hold its worker's other clients for a whole batch (memcached's -R, by
 * time). *more says that complete requests still wait: call it again with
 * n = 0 before receiving more. It also stops at a request that must wait
 * (session_waiting): call it again with n = 0 when the wait is over; the
 * request runs first. Returns as session_received. */
int session_received_slice(struct session *s, size_t n, uint64_t budget_ns,
                           int *more);

/* n bytes arrived at session_recv_space's pointer: buffered, nothing
 * answered yet (a worker's round answers them: session_round); then
 * session_received_slice with n = 0. */
void session_received_bytes(struct session *s, size_t n);

/* An event worker's round (econn_round.c): answers what the n sessions
 * have buffered (session_received_bytes), one after the other, each for
 * about budget_ns at most, their batchable requests under shared holds of
 * the store lock (commands.h, cmd_round_begin). done(i, more, arg) is
 * called for each session in order once the hold that answered it has
 * ended, with no store lock held: the driver sends its replies there
 * (session_flush) and may end session i's connection, never another's.
 * more is session_received_slice's. group(arg), when not NULL, follows
 * each run of done calls, before the next hold: what the driver gathered
 * from them may leave together there. */
#define SESSION_ROUND_MAX 64
void session_round(struct session *const *s, int n, uint64_t budget_ns,
                   void (*done)(int i, int more, void *arg),
                   void (*group)(void *arg), void *arg);

/* The driver could not send what the session gave it (rc: -errno): the
 * session ends, as when its send hook fails at once. */
void session_send_failed(struct session *s, int rc);

/* Copies data in and answers as session_received does, as often as the
 * input buffer needs (for tests and drivers without a buffer of their own).
 * Stops at the end of the session, or when its buffers cannot be had (the
 * session ends). Returns as session_received. */
int session_input(struct session *s, const void *data, size_t len);

/* What a request stopped by session_received_slice waits for. */
enum session_wait {
    SESSION_RUNS,               /* nothing: no request waits */
    SESSION_WAITS_DRAINED,      /* everything sent so far to reach the
                                   socket (io.drained): a streamed PRINT,
                                   which must not find replies queued
                                   ahead of it once it holds the lock, or
                                   a TREE, whose drawing is made only for
                                   a client that takes its replies */
    SESSION_WAITS_COMPACT,      /* the compaction s->compact_gen to end
                                   (journal_compact_wait_async) */
    SESSION_WAITS_TIMER,        /* the clock to reach s->wait_until (a
                                   wrong AUTH's delay) */
    SESSION_WAITS_ADMISSION,    /* io.admit's -EAGAIN: the driver runs the
                                   session again once it has begun */
    SESSION_WAITS_TRACE,        /* the trace file of s->trace_window to be
                                   written (trace_stop_result): rare, an
                                   operator's, so the driver asks again
                                   every few milliseconds */
};
enum session_wait session_waiting(const struct session *s);

/* The replies not yet sent, and how many bytes of them the driver sent
 * (for tests: they take no mark). */
const char *session_output(const struct session *s, size_t *len);
void session_output_sent(struct session *s, size_t n);

/* Sends every reply not yet sent through io.send, marked with the journal
 * record they acknowledge. Returns 0 or -errno; on error the session is
 * ending and the output is dropped. A buffer that grew past
 * SESSION_OUT_SHRINK is given back down to SESSION_OUT_INITIAL. Never
 * waits itself: waiting for the journal, if anyone must, is the
 * driver's. */
int session_flush(struct session *s);

/* Lets one hold of the store lock cover up to 1 + n consecutive simple
 * requests (ADD, DELETE, FIND, COUNT) of a slice when more are already
 * buffered; the event driver's choice (docs/ARCHITECTURE.md). 0: one hold
 * per request, as the thread-per-connection lessons measure. */
void session_set_batch(struct session *s, int n);

/* Wipes this thread's copy of the last request's fields (a name and an
 * SSN): a session thread calls it as it ends. */
void session_wipe_thread(void);

/* Names the client in the log ("[addr]:port"; "stdin" by default): peer
 * is kept, not copied, and must outlive s (its struct conn's). */
void session_set_peer(struct session *s, const char *peer);

/* The most bytes of replies the session may hold unsent (0: no limit). A
 * reply that would go over it is replaced by "Error: output limit
 * exceeded" and the session ends. */
void session_set_output_limit(struct session *s, size_t limit);

#endif
