/* journal_int.h -- the journal's insides, shared by journal.c (the
 * flusher thread, group commit, appending, waiting and figures) and
 * journal_open.c (opening, replay and recovery, closing); nothing else
 * includes it. Sizes, struct journal with what j->lock guards (journal.h
 * tells the locking order), and the file helpers both sides use.
 */
#ifndef SSN_JOURNAL_INT_H
#define SSN_JOURNAL_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include "hist.h"
#include "journal.h"
#include "timeutil.h"

#define JOURNAL_BUF     (256 * 1024)    /* each of the two buffers */
#define JOURNAL_CHUNK   (64 * 1024)     /* space reserved at a time */
#define JOURNAL_SYNC_NS (1000 * TIME_NS_PER_MS) /* everysec's period */
#define JOURNAL_NO_LIMIT UINT64_MAX     /* reserved_end when the file
                                           system cannot reserve */

/* A session in journal_wait with JOURNAL_WAKE_SIGNAL: on its stack, on
 * j->waiters (guarded by j->lock) until the end of a round unlinks and
 * signals it. */
struct jwaiter {
    uint64_t seq;               /* the record it waits for */
    pthread_cond_t cond;        /* its own; the mutex is j->lock */
    int linked;                 /* still on j->waiters */
    struct jwaiter *next;
};

struct jbuf {
    unsigned char *data;
    size_t len;
};

struct journal {
    int fd;
    char *path;
    enum journal_fsync fsync;
    struct store *store;
    pthread_t flusher;

    pthread_mutex_t lock;       /* guards everything below */
    pthread_cond_t work;        /* wakes the flusher */
    pthread_cond_t progress;    /* broadcast: durable, room or space moved */
    struct jbuf buf[2];
    int active;                 /* the buffer appends go into */
    uint64_t appended_seq;      /* the last record appended */
    uint64_t written_seq;       /* the last record written */
    uint64_t synced_seq;        /* the last record synced */
    _Atomic uint64_t durable_seq;   /* what waiters wait for; written under
                                       lock, read without it first */
    uint64_t accepted_end;      /* file offset after the last appended */
    uint64_t written_end;       /* file offset after the last written */
    uint64_t reserved_end;      /* space reserved up to here */
    int reserve_error;          /* errno of the last failed reservation */
    uint64_t reserve_tries;     /* reservations attempted */
    int want_reserve;           /* an appender waits for space */
    int broken;                 /* errno of a failed write or sync */
    char broken_why[128];
    int stopping;
    int flushing;               /* a round (take, write, sync, publish) is
                                   under way, by the flusher or a session
                                   leading it in journal_wait */
    enum journal_wake wake;     /* how journal_wait sleeps */
    struct jwaiter *waiters;    /* JOURNAL_WAKE_SIGNAL's sleepers */
    uint64_t published_ns;      /* when the last round ended */

    uint64_t records, bytes, fsyncs, writes, written_records, wakes;
    struct hist fsync_ns;
    struct hist wake_ns;        /* published_ns -> a waiter running */
};

/* Writes all n bytes of p at off, again after EINTR and short writes.
 * Returns 0, or the errno (EIO for a write of nothing). */
int journal_pwrite_all(int fd, const unsigned char *p, size_t n, off_t off);

/* Reserves JOURNAL_CHUNK bytes from offset from: writes zeros there and
 * syncs them (the file grows; journal_close cuts it back). Returns 0, or
 * the errno (ENOSPC when the disk is full). */
int journal_reserve_chunk(int fd, uint64_t from);

/* Publishes a round's progress: broadcasts j->progress and signals each
 * JOURNAL_WAKE_SIGNAL waiter whose record is now durable (every one when
 * the journal is broken), and one more that is not, to lead the next
 * round; j->lock held. */
void journal_wake_locked(struct journal *j);

/* The flusher thread's body; arg is the struct journal, its lock and
 * conditions initialised. Returns when j->stopping is set and the active
 * buffer is empty. */
void *journal_flusher_main(void *arg);

#endif
