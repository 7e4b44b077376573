/* fuzz_session_drive.c -- the session fuzz target's client and its two
 * drivers (fuzz_session.c has the input layout and the oracle's list).
 * The client stands in for the socket: it takes every byte a session
 * sends, queues a listing the event driver holds by reference, and
 * refuses sends once the input says the client has gone. fs_run_thread
 * feeds one session as server/net/threads.c does, fs_run_events as
 * server/net/econn.c does; both check the lock rule on every send and the
 * session's promises to its driver as they go. Nothing here locks: the
 * session takes the store lock through the policy, and the checks ask
 * whether this thread holds it.
 */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "fuzz_session.h"
#include "listing.h"
#include "lockmode.h"
#include "net/econn.h"
#include "print.h"
#include "server.h"
#include "session.h"

#define FUZZ_PEER       "192.0.2.1:4242"    /* the client's address */
#define THREAD_IDLE_READ 2048       /* threads.c's THREADS_IDLE_READ */
#define SETTLE_MAX      100000      /* slices one read may take: a request
                                       waiting for ever is a bug */

/* ---- the client: what the session sends --------------------------------- */

/* Keeps bytes the client received, after those before them. */
static void take(struct client *c, const void *data, size_t len)
{
    fuzz_append(&c->buf, &c->len, &c->cap, data, len,
                "memory for the replies");
}

/* Puts a held listing (l), or a copy of bytes (l NULL), at the end of the
 * event driver's queue. */
static void enqueue(struct client *c, struct listing *l, const void *data,
                    size_t len)
{
    if (c->nq == c->qcap) {
        c->qcap = c->qcap ? 2 * c->qcap : 8;
        c->q = realloc(c->q, c->qcap * sizeof(*c->q));
        FUZZ_CHECK(c->q != NULL, "memory for the queue");
    }
    struct queued *e = &c->q[c->nq++];
    e->l = l;
    e->len = len;
    e->bytes = NULL;
    if (!l) {
        e->bytes = malloc(len ? len : 1);
        FUZZ_CHECK(e->bytes != NULL, "memory for the queue");
        memcpy(e->bytes, data, len);
    }
}

/* The socket takes everything queued: a held listing is read only now, so
 * a listing freed while the driver held its reference is a use after
 * free that ASan reports. */
static void drain(struct client *c)
{
    for (size_t i = 0; i < c->nq; i++) {
        struct queued *e = &c->q[i];
        if (e->l) {
            take(c, e->l->data, e->l->len);
            listing_put(e->l);
        } else {
            take(c, e->bytes, e->len);
            free(e->bytes);
        }
    }
    c->nq = 0;
}

/* Every send: the lock rule, the journal (there is none), the client
 * going away. 0 when the bytes may go. */
static int send_allowed(struct client *c, uint64_t durable)
{
    FUZZ_CHECK(!store_op_held(&srv.store),
               "no reply byte is sent under the store lock");
    FUZZ_CHECK(durable == 0, "without a journal no reply waits for a record");
    if (c->failed || (c->fail_from && ++c->sends >= c->fail_from)) {
        c->failed = 1;
        return -EPIPE;
    }
    return 0;
}

/* The thread driver's way out: written at once, blocking. */
static int thread_send(void *arg, const void *data, size_t len,
                       uint64_t durable)
{
    struct client *c = arg;
    int rc = send_allowed(c, durable);

    if (rc == 0)
        take(c, data, len);
    return rc;
}

/* fine's streamed PRINT: the one send made holding the lock. */
static int send_locked(void *arg, const void *data, size_t len)
{
    struct client *c = arg;

    FUZZ_CHECK(store_op_held(&srv.store) &&
               srv.store.policy->print == print_while_walking,
               "only a streamed PRINT sends through send_locked, lock held");
    FUZZ_CHECK(c->nq == 0, "a streamed PRINT begins with nothing queued");
    if (c->failed || (c->fail_from && ++c->sends >= c->fail_from)) {
        c->failed = 1;
        return -EPIPE;
    }
    take(c, data, len);
    return 0;
}

/* The event driver's way out (econn_send): straight to the client while
 * nothing is queued, else behind what is. */
static int event_send(void *arg, const void *data, size_t len,
                      uint64_t durable)
{
    struct client *c = arg;
    int rc = send_allowed(c, durable);

    if (rc)
        return rc;
    if (c->nq)
        enqueue(c, NULL, data, len);
    else
        take(c, data, len);
    return 0;
}

/* A shared listing: held by reference until the driver settles, as a
 * socket that takes none of it at once makes econn_send_listing do. */
static int event_send_listing(void *arg, struct listing *l, uint64_t durable)
{
    struct client *c = arg;
    int rc = send_allowed(c, durable);

    if (rc) {
        listing_put(l);
        return rc;
    }
    enqueue(c, l, NULL, 0);
    return 0;
}

/* econn's drained: the socket has taken everything queued. */
static int event_drained(void *arg)
{
    return ((struct client *)arg)->nq == 0;
}

/* No admit hook: session_admit then begins the session through the
 * policy, which never waits here (one session, no other lock holder). */
static const struct session_io thread_io = {
    .send = thread_send, .send_locked = send_locked,
};

static const struct session_io event_io = {
    .send = event_send, .send_listing = event_send_listing,
    .send_locked = send_locked, .drained = event_drained,
    .never_waits = 1,
};

/* ---- the drivers -------------------------------------------------------- */

/* The next read's size: all that is left (seed 0), or a size drawn from
 * the seed, never past the input's end. */
static size_t next_chunk(struct run *r)
{
    static const size_t most[4] = { 2, 8, 64, 1200 };

    if (!r->seed)
        return r->n - r->fed;
    r->x = r->x * 1103515245u + 12345u;
    size_t k = 1 + (r->x >> 16) % most[r->seed & 3];
    return k < r->n - r->fed ? k : r->n - r->fed;
}

/* What every session of a connection is told (threads_start, econn's
 * set_up). */
static struct session *set_up(struct run *r, struct session *s)
{
    FUZZ_CHECK(s != NULL, "memory for a session");
    session_set_output_limit(s, r->limit);
    session_set_batch(s, r->batch_max);
    session_set_peer(s, FUZZ_PEER);
    return s;
}

/* Where the session says the next bytes go; it always has room while it
 * has not ended. */
static char *recv_space(struct session *s, size_t *room)
{
    char *p = session_recv_space(s, room);

    FUZZ_CHECK(p != NULL && *room > 0,
               "a session that has not ended has room to receive");
    return p;
}

/* How the session ended (s NULL: parked, so not ended), kept for the
 * checks made after it is freed. */
static void note_end(struct run *r, const struct session *s)
{
    r->ending = s ? s->ending : 0;
    r->send_error = s ? s->send_error : 0;
}

/* threads.c's threads_serve, reads replaced by the input's chunks. */
void fs_run_thread(struct run *r, struct session_pool *pool)
{
    struct session *s = set_up(r, session_new(&srv.store, &thread_io,
                                              &r->client, r->quiet));
    int bare = 1;                       /* the session holds no buffer */

    session_set_pool(s, pool);
    FUZZ_CHECK(session_begin(s) == 0, "a session begins");
    while (r->fed < r->n) {
        size_t room, k = next_chunk(r);
        if (bare && k > THREAD_IDLE_READ)
            k = THREAD_IDLE_READ;       /* read_idle's stack buffer */
        char *p = recv_space(s, &room);
        if (k > room)
            k = room;
        memcpy(p, r->in + r->fed, k);
        r->fed += k;
        bare = 0;
        int done = session_received(s, k);
        if (session_flush(s) || done)
            break;
        bare = session_release(s);
    }
    session_flush(s);
    note_end(r, s);
    session_end(s);
    session_wipe_thread();
    session_free(s);
}

/* An event connection (econn.c): its session, or what it keeps of it
 * while parked. */
struct econn_sim {
    struct run *r;
    struct session *s;          /* NULL: parked */
    struct session_keep keep;
    int more;                   /* the last slice left complete requests */
};

/* econn.c's rest: an idle session goes back to the pool whole. */
static void rest(struct econn_sim *c)
{
    if (session_park(c->s, &c->keep))
        c->s = NULL;
}

/* The round's done callback (econn_round.c's send_out), its settle left
 * to settle() below. */
static void round_done(int i, int more, void *arg)
{
    struct econn_sim *c = arg;

    FUZZ_CHECK(i == 0, "a round of one session calls back for it alone");
    FUZZ_CHECK(!store_op_held(&srv.store),
               "a round calls back with no store lock held");
    session_flush(c->s);
    c->more = more;
}

/* One slice of work on the n bytes just read (0: on what is left). */
static void serve(struct econn_sim *c, size_t n)
{
    session_received_slice(c->s, n, ECONN_SLICE_NS, &c->more);
    session_flush(c->s);
}

/* econn_settle, with every timer it would set run at once. Returns 1
 * when the connection is over. */
static int settle(struct econn_sim *c)
{
    for (int i = 0; i < SETTLE_MAX; i++) {
        drain(&c->r->client);           /* the socket took it all */
        enum session_wait w = session_waiting(c->s);
        if (c->s->send_error || c->s->ending)
            return 1;
        FUZZ_CHECK(w == SESSION_RUNS || w == SESSION_WAITS_TIMER ||
                   w == SESSION_WAITS_DRAINED,
                   "no request waits for a journal, a trace file or a "
                   "lock holder the server does not have");
        if (w == SESSION_RUNS && !c->more) {
            rest(c);
            return 0;
        }
        if (w == SESSION_WAITS_TIMER)
            c->s->wait_until = 0;       /* the clock skips AUTH's delay */
        serve(c, 0);
    }
    FUZZ_CHECK(0, "a waiting request is answered once its wait is over");
    return 1;
}

/* econn.c from econn_new to econn_close, one read per chunk. */
void fs_run_events(struct run *r, struct session_pool *pool)
{
    struct econn_sim c = { .r = r };
    struct store_waiter waiter;
    int over = 0;

    c.s = set_up(r, session_new(&srv.store, &event_io, &r->client, 0));
    session_set_pool(c.s, pool);        /* events_start */
    memset(&waiter, 0, sizeof(waiter));
    FUZZ_CHECK(session_begin_nowait(c.s, &waiter) == 0,
               "a session begins at once when nobody holds the lock");
    rest(&c);
    srv_on_event_loop = 1;              /* what may block asserts it is not */
    while (!over && r->fed < r->n) {
        size_t room, k = next_chunk(r);
        if (!c.s) {                     /* session_of */
            c.s = set_up(r, session_new_pooled(pool, &srv.store, &event_io,
                                               &r->client));
            session_unpark(c.s, &c.keep);
        }
        char *p = recv_space(c.s, &room);
        if (k > room)
            k = room;
        memcpy(p, r->in + r->fed, k);
        r->fed += k;
        if (c.s->batch_max > 0) {       /* on_read: with the pass's others */
            session_received_bytes(c.s, k);
            session_round(&c.s, 1, ECONN_SLICE_NS, round_done, NULL, &c);
        } else {
            serve(&c, k);
        }
        over = settle(&c);
    }
    srv_on_event_loop = 0;
    drain(&r->client);
    note_end(r, c.s);
    if (c.s)                            /* econn_close's end_session */
        session_end(c.s);
    else
        session_end_parked(&srv.store, &c.keep);
    session_free(c.s);
}
