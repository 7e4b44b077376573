/* journal_int.h -- the journal's insides, shared by journal.c (the
 * rounds, the flusher thread, appending and figures), journal_wait.c
 * (waiting: leading a round, sleeping, the event loops' waits),
 * journal_open.c (opening, replay and recovery, closing) and
 * journal_compact.c (COMPACT); nothing else includes it. Sizes, struct
 * journal with what j->lock guards (journal.h tells the locking order),
 * and the helpers they share.
 */
#ifndef SSN_JOURNAL_INT_H
#define SSN_JOURNAL_INT_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include "hist.h"
#include "journal.h"
#include "log.h"
#include "timeutil.h"

#define JOURNAL_BUF     (256 * 1024)    /* each of the two buffers */
#define JOURNAL_CHUNK   (1024 * 1024)   /* space reserved at a time */
#define JOURNAL_CHUNK_MIN (64 * 1024)   /* ... when the disk has no more:
                                           halved down to this */
#define JOURNAL_SYNC_NS (1000 * TIME_NS_PER_MS) /* everysec's period */
#define JOURNAL_COMPACT_MIN (64ULL << 20) /* the automatic compaction's
                                           default least size */
#define JOURNAL_HELP_ROUNDS 4   /* journal_help's rounds at most */
#define JOURNAL_COMPACT_SUFFIX ".compact" /* the new file while it is built */

/* A thread asleep in journal_wait with JOURNAL_WAKE_SIGNAL (a session's
 * blocking wait; not journal.h's struct journal_waiter, an event loop's
 * queued connection): on its stack, on j->sleepers (guarded by j->lock)
 * until the end of a round unlinks and signals it. */
struct journal_sleeper {
    uint64_t seq;               /* the record it waits for */
    pthread_cond_t cond;        /* its own; the mutex is j->lock */
    int linked;                 /* still on j->sleepers */
    struct journal_sleeper *next;
};

struct jbuf {
    unsigned char *data;
    _Atomic size_t len;         /* the active one's grows under alock;
                                   read without it as a hint */
};

/* The rewrite buffer of a compaction: every record appended after the
 * snapshot, until it is in the new file. Grows as it must. */
struct jgrow {
    unsigned char *data;
    size_t len, cap;
};

/* A compaction's steps (journal_compact.c). RUNNING: the snapshot is
 * being written to the new file, appends are copied into compact_buf
 * too. READY: the new file is whole up to compact_end; the flusher takes
 * compact_buf for the last time, writes it, syncs, renames (SWITCHING),
 * and sets IDLE again, on success with the new file as the journal. */
enum jcompact_state {
    JCOMPACT_IDLE,
    JCOMPACT_RUNNING,
    JCOMPACT_READY,
    JCOMPACT_SWITCHING,
};

struct journal {
    int fd;                     /* locked: this server owns the journal
                                   (journal_owner.c) */
    char *path;                 /* as given: what messages name */
    char *real_path;            /* path with every symbolic link resolved,
                                   once, at open: the file compaction
                                   replaces, beside which it writes */
    enum journal_fsync fsync;
    struct store *store;
    pthread_t flusher;
    pthread_t compactor;        /* journal_compact.c's thread: from
                                   journal_open to journal_close */

    pthread_mutex_t lock;       /* guards everything below, but what
                                   alock guards */
    /* An appender's own lock (it holds the store lock, and must not wait
     * for j->lock, whose holders make system calls and may be preempted:
     * a convoy of every session on the store lock). It guards the active
     * buffer's bytes, which buffer is active, appended_seq, records,
     * bytes, live_bytes and compact_due; it is taken alone by an appender
     * while no compaction runs (compact_busy clear), else after j->lock,
     * and by the others after j->lock. The fields an appender reads that
     * others write under j->lock alone are atomic; so are those its first
     * look for room reads under no lock of the journal's
     * (journal_reserve_locked). */
    pthread_mutex_t alock;
    atomic_int compact_busy;    /* a compaction from its start (under the
                                   store lock) until its state is IDLE
                                   again and the switch has reframed the
                                   active buffer */
    pthread_cond_t work;        /* wakes the flusher */
    pthread_cond_t compact_work;    /* wakes the compactor */
    pthread_cond_t progress;    /* broadcast: durable, room or space moved */
    struct jbuf buf[2];
    atomic_int active;          /* the buffer appends go into: changed
                                   under both locks, read by an appender
                                   looking for room under neither */
    uint64_t appended_seq;      /* the last record appended */
    uint64_t written_seq;       /* the last record written */
    uint64_t synced_seq;        /* the last record synced */
    _Atomic uint64_t durable_seq;   /* what waiters wait for; written under
                                       lock, read without it first */
    _Atomic uint64_t accepted_end;  /* file offset after the last appended */
    uint64_t written_end;       /* file offset after the last written */
    _Atomic uint64_t reserved_end;  /* space reserved up to here */
    uint32_t version;           /* the file's format, which appended
                                   records take (JREC_VERSION_V1 until a
                                   compaction rewrites such a file) */
    _Atomic uint64_t synced_end;    /* the file is durable (synced) up to here:
                                   what a record appended now claims
                                   (journal_rec.h's back) */
    int mark_due;               /* the last records are claimed durable by
                                   none after them: journal_close writes a
                                   MARK that does */
    int reserve_error;          /* errno of the last failed reservation */
    uint64_t reserve_tries;     /* reservations attempted */
    int want_reserve;           /* an appender waits for space */
    atomic_int broken;          /* errno of a failed write or sync */
    char broken_why[128];
    int broken_logged;          /* the flusher has logged it (whoever
                                   failed may hold the store lock) */
    int stopping;
    int flushing;               /* a round (take, write, sync, publish) is
                                   under way, by the flusher or a session
                                   leading it in journal_wait */
    enum journal_wake wake;     /* how journal_wait sleeps */
    struct journal_sleeper *sleepers;   /* JOURNAL_WAKE_SIGNAL's sleepers */
    uint64_t published_ns;      /* when the last round ended */
    struct journal_waiter *waiters; /* journal_wait_async's, unordered */
    struct journal_waiter *compact_waiters; /* journal_compact_wait_async's,
                                               unordered */
    struct journal_reply *replies;  /* journal_reply_push's, queued;
                                       unordered */
    unsigned stragglers;        /* of them, due but not taken whole by
                                   their socket: tried again each 100 ms */
    atomic_uint replies_queued; /* how many are on j->replies: written
                                   under lock, read without it first
                                   (journal_help) */

    uint64_t records, bytes, fsyncs, writes, written_records, wakes;
    uint64_t async_waits;       /* journal_wait_async calls that queued */
    struct hist fsync_ns;
    struct hist wake_ns;        /* published_ns -> a waiter running */

    /* Compaction (journal_compact.c), also guarded by j->lock. */
    enum jcompact_state compact_state;
    struct jgrow compact_buf;   /* the rewrite buffer: appended since the
                                   snapshot */
    int compact_nomem;          /* compact_buf could not grow: give up */
    int compact_abort;          /* journal_close: stop, keep the old file */
    unsigned char *compact_snap;    /* the snapshot's records, handed to
                                       the compactor */
    size_t compact_snap_len;
    size_t compact_snap_people; /* how many people it holds */
    uint64_t compact_snap_ns;   /* how long it held the store lock */
    char *compact_path;         /* real_path + ".compact" */
    int compact_fd;             /* the new file while it is built */
    uint64_t compact_end;       /* its length so far */
    uint64_t compact_started;   /* compactions begun ... */
    uint64_t compact_done;      /* ... and ended, either way */
    int compact_error;          /* the last ended one's errno, or 0 */
    char compact_why[128];
    int compactor_stop;         /* journal_close: the compactor returns */
    uint64_t live_bytes;        /* what the live set's ADD records take */
    uint64_t compact_min;       /* auto: never below this size (0 never) */
    uint64_t compact_next;      /* auto: not before the file reaches it */
    int compact_due;            /* auto: an append found it is time; the
                                   next append tells its caller */
    uint64_t compactions;       /* finished with the new file in place */
};

/* One server per journal (journal_owner.c, whose opening comment tells
 * why the lock holds across a compaction). open: opens path, creating it
 * 0600, takes the exclusive lock before a byte is read, makes sure the
 * name still leads to the locked file, resolves it (*real, the caller's
 * to free) and refuses a file group or others have access to. Returns the
 * descriptor, or -1 after writing why into err (naming path, and the
 * owner's PID when it can be found; nothing left open or allocated).
 * lock: the same lock on fd (the compaction's new file, before it is
 * renamed into place); returns 0 or the errno. */
int journal_owner_open(const char *path, char **real,
                       char *err, size_t errlen);
int journal_owner_lock(int fd);
/* still: whether fd is still the journal: the name real leads to it and
 * it holds at least end bytes (its reserved end: a write past a cut would
 * grow it again, but not to there). 0, or ESTALE (another errno when fd cannot
 * be looked at) and *what saying what happened: removed, replaced or cut
 * short under the server, whose later records no restart would see.
 * clear: PATH.compact, a compaction's leftover, removed: 0, ENOENT when
 * there is none, EBUSY when another server holds its lock (it is that
 * server's journal), or unlink's errno. create: clear, then PATH.compact
 * created 0600 with O_EXCL and O_NOFOLLOW (never a file or a symbolic
 * link someone put there); the descriptor, or -1 with errno set. */
int journal_owner_still(int fd, const char *real, uint64_t end,
                        const char **what);
int journal_owner_clear(const char *cpath);
int journal_owner_create(const char *cpath);

/* Writes all n bytes of p at off, again after EINTR and short writes.
 * Returns 0, or the errno (EIO for a write of nothing). */
int journal_pwrite_all(int fd, const unsigned char *p, size_t n, off_t off);

/* Reserves up to JOURNAL_CHUNK bytes from offset from, *len of them:
 * zeros written when written, else allocated, then synced (the file
 * grows; journal_close cuts it back). Returns 0, or the errno (ENOSPC
 * when the disk is full). */
int journal_reserve_chunk(int fd, uint64_t from, int written,
                          uint64_t *len);
/* Whether j's space is reserved written (zeros) or only allocated: a sync
 * per round (always) pays for each unwritten extent converted. */
#define RESERVE_WRITTEN(j) ((j)->fsync == JOURNAL_FSYNC_ALWAYS)

/* Publishes a round's progress: broadcasts j->progress and signals each
 * sleeper (JOURNAL_WAKE_SIGNAL) whose record is now durable (every one
 * when the journal is broken), and one more that is not, to lead the next
 * round; j->lock held. */
void journal_wake_locked(struct journal *j);

/* The flusher's part of a compaction (journal_compact.c). take: j->lock
 * held, compact_state READY: takes compact_buf and blocks appends
 * (SWITCHING).
 * io: no lock held: completes the new file and puts it in place, or on
 * failure leaves the old one as the journal. publish: j->lock held. */
struct jswitch {
    struct jgrow rem;           /* the last records, for the new file */
    uint64_t hi;                /* the last of them */
    uint64_t reserved_end;      /* the old file's, back on failure */
    int fd;                     /* the new file */
    uint64_t off;               /* where rem goes in it */
    int err;                    /* errno of the failed step, or 0 */
    const char *what;           /* that step */
    int renamed;                /* the new file has the journal's name */
    int rerr;                   /* errno of reserving space in it */
    uint64_t rlen;              /* how much it reserved */
};
void journal_switch_take_locked(struct journal *j, struct jswitch *sw);
void journal_switch_io(struct journal *j, struct jswitch *sw);
void journal_switch_publish_locked(struct journal *j, struct jswitch *sw);

/* One round, the flusher's or one a waiting session leads (journal_wait.c):
 * what it took under j->lock, then what its I/O, done with no lock held,
 * gave. take and publish: j->lock held, j->flushing set by the caller. */
struct flush_round {
    struct jbuf *b;             /* the buffer swapped out */
    uint64_t hi, off;           /* its last record, its file offset */
    size_t n;                   /* its length */
    int do_reserve;             /* space is due: the flusher reserves it
                                   once the round has ended */
    int want_sync, stop, broken;
    int werr, serr;             /* errnos of the write and the sync */
    uint64_t reserved;          /* j->reserved_end when taken */
    int lerr;                   /* the file no longer the journal after
                                   the sync (journal_owner_still) */
    const char *lwhat;          /* how */
    uint64_t took;              /* the sync's duration, ns */
    uint64_t io_from, io_to;    /* when its write and sync began and
                                   ended (metrics.h, trace.h) */
    int sw;                     /* a compaction's switch (journal_compact.c) */
    struct jswitch swc;
    struct journal_reply *replies;  /* due now: publish took them off
                                       j->replies, to be sent */
};
void journal_round_take_locked(struct journal *j, struct flush_round *f);
void journal_round_io(struct journal *j, struct flush_round *f);
void journal_round_publish_locked(struct journal *j, struct flush_round *f);

/* The thread sessions' replies (journal_reply.c). due: those whose
 * records are now durable (every one when the journal is broken), taken
 * off j->replies onto *out, JREPLY_SENDING; j->lock held. deliver: sends
 * them with j->lock let go (or, broken, shuts their sockets down), then
 * settles each: sent, failed, or queued again with what its socket did
 * not take; called and returns with j->lock held. */
void journal_replies_due_locked(struct journal *j, struct journal_reply **out);
void journal_replies_deliver_locked(struct journal *j,
                                    struct journal_reply *list);

/* Wakes the event loops' connections whose records are now durable, or
 * never will be; j->lock held (journal_wait.c). */
void journal_notify_waiters_locked(struct journal *j);

/* An event loop's waiter onto one of the journal's lists (journal_wait.c),
 * and the waiters of a list whose seq is at most upto (or all of them)
 * unqueued and notified; j->lock held. */
void journal_waiter_queue_locked(struct journal_waiter **list,
                                 struct journal_waiter *w, uint64_t seq);
void journal_waiters_notify_locked(struct journal_waiter **list,
                                   uint64_t upto, int all);

/* Appends one record's bytes to the rewrite buffer while a compaction
 * runs, and keeps live_bytes; alock held (j->lock too while a compaction
 * runs). */
void journal_compact_note_locked(struct journal *j, const void *rec,
                                 size_t n, enum store_op op, size_t live);

/* The live set's size from the store (after replay); store lock held. */
uint64_t journal_live_bytes_locked(struct store *st);

/* A compaction's end as the flusher or the thread sees it: compact_state back
 * to IDLE, the outcome recorded, waiters woken; j->lock held. */
void journal_compact_finish_locked(struct journal *j, int err,
                                   const char *what);

/* A write or sync failed: the journal is read-only for good, with why;
 * j->lock held. The flusher logs it (journal.c's log_broken_locked): the
 * round that failed may be a coarse session's, under the store lock. */
void journal_set_broken_locked(struct journal *j, const char *what, int err);

/* The compactor thread's body (journal_compact.c); arg is the struct
 * journal, its lock and conditions initialised. Sleeps on compact_work
 * until journal_compact_start_locked hands it a snapshot, writes the new
 * file, and sleeps again; returns once compactor_stop is set. */
void *journal_compactor_main(void *arg);

/* The journal's logging: never while the store lock is held (a line is
 * cheap, but the rule is kept where it can be checked). Every log_msg of
 * server/journal/ but the test seams' goes through it. */
#define JOURNAL_LOG(j, level, ...) do {                                 \
        assert(!store_lock_owned((j)->store));                          \
        log_msg((level), __VA_ARGS__);                                  \
    } while (0)

/* The flusher thread's body; arg is the struct journal, its lock and
 * conditions initialised. Returns when j->stopping is set and the active
 * buffer is empty. */
void *journal_flusher_main(void *arg);

/* journal_replay.c: replays the file's image img (len bytes) into
 * j->store, which must be empty; journal_open.c's. Returns the offset where
 * appending resumes, -1 after writing why into err, or -ENOMEM (the file
 * untouched). */
long long journal_replay(struct journal *j, const unsigned char *img,
                         size_t len, int truncate, char *err, size_t errlen);

#endif
