/* journal.h -- the durable journal with group commit (docs/DURABILITY.md).
 *
 * Every applied mutation is appended, as a record (journal_rec.h), to an
 * in-memory buffer by store_apply_locked, under the store lock and in the
 * order the tree changes. A session that produced records waits, before
 * its replies leave, until its last record is durable: written (everysec,
 * no) or synced (always). A thread-driver session that waits with no round
 * under way leads one: swaps that buffer for the empty one, writes it
 * outside every lock, and (--fsync always) fdatasyncs it; the others sleep
 * until it ends. One write and one sync thus cover every session waiting:
 * group commit. An event worker never waits for a sync: it asks the
 * flusher thread for the round (journal_commit) and is woken when it
 * ends; with everysec and no it writes the round itself. The flusher
 * also reserves disk space ahead, runs everysec's sync, and writes what no
 * one has led a round for within 100 ms.
 *
 * Locking: j->lock guards the buffers, the sequence numbers, the space
 * reservation, the error state, the figures, the event loops' waiters and
 * the compaction's state; no I/O is done while holding it. Where it sits
 * in the lock order, and what may be taken under it: the one lock table,
 * docs/ARCHITECTURE.md ("Locks").
 * A session waiting for durability sleeps on a condition of its own (with
 * j->lock), signalled at the end of the round that made its record
 * durable (JOURNAL_WAKE_SIGNAL, the default); with JOURNAL_WAKE_BROADCAST
 * all sleep on j->progress, broadcast at the end of every round, each
 * checking its own predicate (docs/LESSONS.md, section 3). Appenders
 * waiting for room or space sleep on j->progress either way.
 * docs/DURABILITY.md measures the two.
 */
#ifndef SSN_JOURNAL_H
#define SSN_JOURNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "store.h"

enum journal_fsync {
    JOURNAL_FSYNC_ALWAYS,       /* sync before acknowledging */
    JOURNAL_FSYNC_EVERYSEC,     /* write before acknowledging, sync each s */
    JOURNAL_FSYNC_NO,           /* write before acknowledging, never sync */
};

/* The policy's name, and the policy of a name (-1 when unknown). */
const char *journal_fsync_name(enum journal_fsync p);
int journal_fsync_parse(const char *name);

/* How the end of a round wakes the sessions waiting for durability. */
enum journal_wake {
    JOURNAL_WAKE_BROADCAST,     /* one broadcast on one shared condition */
    JOURNAL_WAKE_SIGNAL,        /* one signal per waiter, each on its own */
};

/* The wake-up's name, and the wake-up of a name (-1 when unknown). */
const char *journal_wake_name(enum journal_wake w);
int journal_wake_parse(const char *name);

struct journal;
struct journal_waiter;

/* What STATS reports. */
struct journal_figures {
    enum journal_fsync fsync;
    uint64_t records, bytes;    /* appended since start-up (or RESET) */
    uint64_t fsyncs;
    double group_size_avg;      /* records per write */
    uint64_t fsync_p50_us, fsync_p99_us;
    enum journal_wake wake;
    uint64_t wakes;             /* waits that slept, then were woken */
    uint64_t wake_p50_us, wake_p99_us;  /* from the end of a round to
                                           the waiter running again */
    uint64_t async_waits;       /* event-driven connections queued to
                                   wait for a round (journal_wait_async) */
    int readonly;               /* a write or sync failed: no more writes */
    uint64_t size;              /* the file's length, what is written */
    uint64_t live_bytes;        /* what a compaction would leave */
    uint64_t compactions;       /* finished since start-up */
    int compacting;             /* one is under way */
};

/* Opens (or creates) path, replays it into st (which must be empty, with
 * no journal attached), then starts the flusher and attaches the journal
 * to st. With truncate, a damaged record and everything after it are cut
 * off instead of refusing. Returns the journal, or NULL after writing one
 * line saying why (naming the file, the byte offset and what to do) into
 * err, with errno ENOMEM when memory ran out (the file is then left as
 * it was, truncate or not: a record that cannot be applied for want of
 * memory is not damage; the line says how far the replay got) and EINVAL
 * for every other reason. Logs what was recovered. */
struct journal *journal_open(const char *path, enum journal_fsync fsync,
                             int truncate, struct store *st,
                             char *err, size_t errlen);

/* Writes and syncs what is buffered, stops the flusher, detaches from the
 * store and closes. Only when no session can append. */
void journal_close(struct journal *j);

/* For store_apply_locked, under the store lock. reserve: 0 when a record
 * of JREC_MAX bytes is sure to be accepted (buffer room and disk space
 * reserved ahead), else -EROFS (read-only after a failed write or sync)
 * or the -errno of the space reservation (-ENOSPC); may wait for the
 * flusher to make room. append: copies the mutation's record into the
 * buffer and returns its sequence number; sets *compact_due to 1 when
 * the automatic compaction is due (below), else 0. Neither starts
 * anything, nor logs. */
int journal_reserve_locked(struct journal *j);
uint64_t journal_append_locked(struct journal *j,
                               const struct store_mutation *m,
                               int *compact_due);

/* Compaction (journal_compact.c, docs/DURABILITY.md): the journal
 * rewritten as one ADD per live person, the sessions stopped only for the
 * snapshot. start: takes the snapshot of j's store, whose lock the caller
 * holds, and hands it to the journal's compaction thread (started by
 * journal_open); when one runs already, that one is the one to wait for.
 * Under the store lock it only walks the store and makes one allocation:
 * no thread is created or joined, nothing is logged. Sets *gen; returns
 * 0, -EROFS, -ENOMEM, or -EOVERFLOW when the store outgrew the live size
 * the journal keeps (a bug), the state unchanged (the caller reports it).
 * wait: blocks, no lock held, until compaction gen has ended; 0 when the new
 * journal is in place, else -errno with why it failed in why. */
int journal_compact_start_locked(struct journal *j, uint64_t *gen);
int journal_compact_wait(struct journal *j, uint64_t gen, char *why,
                         size_t len);

/* The same for an event loop, which must not block: result returns
 * -EINPROGRESS while compaction gen runs, else what journal_compact_wait
 * would; wait_async returns 0 when it has ended, else queues w and returns
 * -EAGAIN, and the compaction's end calls w->notify(w->arg) with the
 * journal's lock held (it must only wake the loop). journal_wait_cancel
 * unqueues w. */
int journal_compact_result(struct journal *j, uint64_t gen, char *why,
                           size_t len);
int journal_compact_wait_async(struct journal *j, struct journal_waiter *w,
                               uint64_t gen);

/* The automatic compaction is due when the journal passes bytes and twice
 * its live size; 0 turns it off. Before the server listens.
 *
 * The contract: the journal only says it is due, through the
 * store_mutation's compact_due (store_apply_locked). The caller, having
 * left the store, enters it again, calls journal_compact_start_locked,
 * leaves, and only then logs a failure; it need not wait. Appends go on
 * saying "due" until one is started (a second start finds the first
 * running and does nothing), and after a failure the journal waits for
 * more growth before saying it again. */
void journal_set_compact_min(struct journal *j, uint64_t bytes);

/* Blocks until record seq is durable under the policy. Returns 0, or -EIO
 * when it never will be (a write or sync failed: the server is read-only
 * and the caller must not acknowledge it). Never on an event loop's
 * thread, nor under the store lock for a store operation (asserted). */
int journal_wait(struct journal *j, uint64_t seq);

/* journal_wait's first step alone: when record seq is not durable and
 * no round is under way, leads one (and another while seq is not covered
 * and none is under way). Returns 0 when seq is durable, -EBUSY when a
 * round under way (or a compaction's switch) is to make it so: the caller
 * holds its reply (journal_reply_push) instead of sleeping; -EIO when it
 * never will be. Blocks only for its own round's write and sync. Never on
 * an event loop's thread, nor under the store lock (asserted). */
int journal_lead(struct journal *j, uint64_t seq);

/* After a session that led a round has sent its own reply: while other
 * sessions' replies are held for records no round has taken yet, and
 * none is under way, leads the next, at most JOURNAL_HELP_ROUNDS of them
 * (journal_int.h), so that the flusher's thread need not be woken for
 * them. Returns at once when no reply is held. Blocks as journal_lead. */
void journal_help(struct journal *j);

/* Whether record seq is durable now, without waiting: 1 when it is, 0 when
 * not yet, -EIO when it never will be (the journal is read-only). */
int journal_durable(struct journal *j, uint64_t seq);

/* Chooses how waiters sleep from now on (JOURNAL_WAKE_SIGNAL after
 * journal_open: it measured best, docs/DURABILITY.md); safe at any time,
 * a sleeping waiter is woken either way. */
void journal_set_wake(struct journal *j, enum journal_wake w);
/* A wait that does not block, for an event loop: journal_wait_async
 * returns 0 when record seq is durable already (or never will be: the
 * session's blocking wait then returns at once), else queues w and returns
 * -EAGAIN; when seq becomes durable, or the journal fails, the flusher
 * unqueues w and calls w->notify(w->arg) with j->lock held, so notify
 * must only wake the loop. journal_wait_cancel unqueues w if it still is
 * (a connection that closes while it waits). */
struct journal_waiter {
    uint64_t seq;
    void (*notify)(void *arg);
    void *arg;
    struct journal_waiter *prev, *next;
    struct journal_waiter **list;   /* the list it is queued on, or NULL */
};
int journal_wait_async(struct journal *j, struct journal_waiter *w,
                       uint64_t seq);

/* An event loop's group commit, once its pass is over: when record seq
 * is not durable and no round is under way, a round is led: by the
 * flusher with --fsync always (a write and a sync, on its thread), by the
 * caller with everysec and no (a write only, no sync). When one is under
 * way, returns at once, that round's end starting the next. Never waits
 * for a sync. The waiting connections learn the outcome through
 * journal_wait_async's notify. */
void journal_commit(struct journal *j, uint64_t seq);

/* Unqueues w from whichever wait it is queued for, if it still is (a
 * connection that closes while it waits). */
void journal_wait_cancel(struct journal *j, struct journal_waiter *w);

/* A thread session's replies held back until the record they acknowledge
 * is durable, and then sent on its socket by the thread that ended the
 * round that made it so (the flusher, or a session leading a round in
 * journal_wait), so that the session's thread, which has gone back to
 * read(2), is not woken for it: durability as a mark on the output, for a
 * driver that blocks. The event driver does not use it (its loop is woken
 * once for all its connections, journal_wait_async).
 *
 * The session's thread owns r while r->state is JREPLY_IDLE; the journal
 * while it is queued (JREPLY_QUEUED, on j->replies) or being sent
 * (JREPLY_SENDING, by a round's thread with no lock held). Both move
 * under j->lock. A send that the socket does not take whole (a client
 * that does not read) leaves the rest queued: the flusher tries again
 * every 100 ms, and the session takes it back (journal_reply_take) before
 * it sends anything more of its own. A round that fails shuts the socket
 * down instead of sending: the replies must not go, and the session, in
 * read(2), learns it at once. */
#define JOURNAL_REPLY_MAX 256   /* bytes held: a batch of about 80 OKs */

enum journal_reply_state {
    JREPLY_IDLE,
    JREPLY_QUEUED,
    JREPLY_SENDING,
};

struct journal_reply {
    int fd;                     /* the session's socket */
    enum journal_reply_state state;     /* under j->lock */
    int err;                    /* a send's -errno, or -EIO: the session
                                   ends; under j->lock */
    int owner_waits;            /* the owner sleeps on done; j->lock */
    int straggling;             /* queued again after a send its socket
                                   did not take whole; j->lock */
    _Atomic int held;           /* 1 from a push until what r holds is
                                   sent, failed or taken back: written
                                   under j->lock, read by the owner
                                   without it (journal_reply_held) */
    uint64_t seq;               /* the record data[off, len) waits for */
    size_t off, len;
    pthread_cond_t done;        /* a send under way ended */
    struct journal_reply *prev, *next;  /* j->replies */
    char data[JOURNAL_REPLY_MAX];
};

/* A reply holder for socket fd, and its end (not queued: taken back). */
void journal_reply_init(struct journal_reply *r, int fd);
void journal_reply_destroy(struct journal_reply *r);

/* Whether the journal may still hold bytes of r: 0 once they are all
 * sent (or failed, or taken back), read without j->lock. A session
 * whose replies are no longer held leads rounds itself again. */
static inline int journal_reply_held(const struct journal_reply *r)
{
    return atomic_load_explicit(&r->held, memory_order_acquire);
}

/* Hands data, which acknowledges record seq (0: none; it then waits for
 * what r holds already, as it follows it), to the journal. Returns 0 when
 * r took it, to be sent once seq is durable; 1 when r holds nothing and
 * seq is durable already: the caller sends data itself, now; -E2BIG when
 * it does not fit beside what r holds: the caller takes r back
 * (journal_reply_take), sends that, then data, itself; r->err (a send
 * that failed) or -EIO (the journal is read-only): data must not go.
 * Never blocks but for a send under way on r. Never under the store lock
 * for a store operation (asserted). */
int journal_reply_push(struct journal *j, struct journal_reply *r,
                       const void *data, size_t len, uint64_t seq);

/* Takes r back, waiting for a send under way: then data[off, len) is what
 * is left for the caller to send once record r->seq is durable
 * (journal_wait), maybe nothing. Returns 0, or r->err. */
int journal_reply_take(struct journal *j, struct journal_reply *r);

/* The call the flusher syncs with: fdatasync, or a test's fault (returns
 * -1 and sets errno). Set only before journal_open. */
extern int (*journal_sync_fn)(int fd);

void journal_figures(struct journal *j, struct journal_figures *f);
void journal_reset_figures(struct journal *j);

/* Why the journal is read-only ("journal sync failed: Input/output
 * error"), into why; "" when it is not. */
void journal_error(struct journal *j, char *why, size_t len);

#endif
