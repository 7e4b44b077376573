/* journal.c -- the journal's flusher thread, its rounds (group commit),
 * disk space reserved ahead, and figures (journal.h; the format is
 * journal_rec.c's, the design docs/DURABILITY.md; appending is
 * journal_append.c's, waiting journal_wait.c's, opening, replay and
 * closing journal_open.c's, what they share journal_int.h).
 *
 * Appending (under the store lock) only copies bytes into the active
 * buffer. A round swaps buffers under j->lock, then writes and syncs with
 * no lock held, then publishes what is now durable and wakes the waiters;
 * a session in journal_wait leads it, an event worker whose pass ends
 * (everysec, no: a write only), or the flusher thread. After a round of
 * its own, with none under way, the flusher reserves space; it runs
 * everysec's sync after one too, while others' rounds may go on writing.
 * Space is reserved ahead past the last record, a chunk at a time: a
 * record is accepted only into space the file system has already given,
 * so a full disk refuses a mutation before it is applied rather than
 * after it was acknowledged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hist.h"
#include "metrics.h"
#include "journal.h"
#include "journal_int.h"
#include "journal_rec.h"
#include "journal_seams.h"
#include "log.h"
#include "timeutil.h"

const char *journal_fsync_name(enum journal_fsync p)
{
    static const char *const names[] = { "always", "everysec", "no" };
    return names[p];
}

int journal_fsync_parse(const char *name)
{
    for (int p = JOURNAL_FSYNC_ALWAYS; p <= JOURNAL_FSYNC_NO; p++)
        if (strcmp(name, journal_fsync_name(p)) == 0)
            return p;
    return -1;
}

const char *journal_wake_name(enum journal_wake w)
{
    static const char *const names[] = { "broadcast", "signal" };
    return names[w];
}

int journal_wake_parse(const char *name)
{
    for (int w = JOURNAL_WAKE_BROADCAST; w <= JOURNAL_WAKE_SIGNAL; w++)
        if (strcmp(name, journal_wake_name(w)) == 0)
            return w;
    return -1;
}

/* ---- the flusher ---------------------------------------------------- */

int journal_pwrite_all(int fd, const unsigned char *p, size_t n, off_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return EIO;
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* n bytes of space from offset from, allocated and inside the file's
 * size: zeros written (written), or fallocate (allocated: the file system
 * marks the blocks unwritten, and the first sync after a record lands in
 * one converts it), or zeros where the file system has no fallocate. 0 or
 * the errno. */
static int reserve_range(int fd, uint64_t from, uint64_t n, int written)
{
    static const unsigned char zeros[JOURNAL_CHUNK_MIN];

    if (!written && fallocate(fd, 0, (off_t)from, (off_t)n) == 0)
        return 0;
    if (!written && errno != EOPNOTSUPP && errno != ENOSYS)
        return errno;
    for (uint64_t done = 0; done < n; done += sizeof(zeros)) {
        int rc = journal_pwrite_all(fd, zeros, sizeof(zeros),
                                    (off_t)(from + done));
        if (rc)
            return rc;
    }
    return 0;
}

/* Space reserved ahead of the records, then synced once: the blocks are
 * allocated and the file's size already covers them, so a record written
 * there later is an overwrite and its fdatasync commits the data alone.
 * Space reserved with fallocate(FALLOC_FL_KEEP_SIZE) instead, past the
 * size, made every sync also commit the new size: 205 against 139 us per
 * small write+sync on this disk (tools/fsync-rate, docs/DURABILITY.md).
 * Replay reads zeros after the last record as unused space (jrec_scan's
 * zero_tail), and space allocated by fallocate reads as zeros.
 * JOURNAL_CHUNK at a time, far enough ahead that appenders, which wait
 * for space under the store lock, do not catch up with it; on a disk with
 * less room (or under a file-size limit) halved down to JOURNAL_CHUNK_MIN,
 * each failed attempt cut off again (nothing past from is in use: records
 * are accepted only below it). The sync is fdatasync itself, not
 * journal_sync_fn: a test's failing syncs are for records. 0 with *len
 * reserved, or the errno (ENOSPC: the disk is full). */
int journal_reserve_chunk(int fd, uint64_t from, int written, uint64_t *len)
{
    for (uint64_t n = JOURNAL_CHUNK; ; n /= 2) {
        int rc = reserve_range(fd, from, n, written);

        if (rc == 0 && fdatasync(fd))
            rc = errno;
        if (rc == 0) {
            *len = n;
            return 0;
        }
        /* What the attempt took goes back: the disk's last room is
         * for the next, smaller one, or for a compaction's new file. */
        if (ftruncate(fd, (off_t)from) != 0 && (rc == ENOSPC || rc == EFBIG))
            rc = errno;
        if ((rc != ENOSPC && rc != EFBIG) || n <= JOURNAL_CHUNK_MIN)
            return rc;
    }
}

int (*journal_sync_fn)(int fd) = fdatasync;

/* The seam (journal_seams.h) fails or delays a sync in the test build
 * only; in the installed servers it is nothing. */
static int sync_fd(struct journal *j, uint64_t *took)
{
    uint64_t t0 = time_now_ns();
    int rc = journal_seam_fail(JFAIL_SYNC) ? EIO :
             journal_sync_fn(j->fd) ? errno : 0;
    *took = time_now_ns() - t0;
    return rc;
}

/* everysec's sync is due: records written but not synced, the last sync
 * a second ago or more; j->lock held. */
static int everysec_due(const struct journal *j, uint64_t last_sync)
{
    return j->fsync == JOURNAL_FSYNC_EVERYSEC && !j->broken &&
           j->synced_seq < j->written_seq &&
           time_now_ns() - last_sync >= JOURNAL_SYNC_NS;
}

/* everysec's sync, the flusher's, outside any round: rounds (a session's,
 * a worker's) go on writing meanwhile, so a slow disk holds no reply, as
 * Redis's everysec fsyncs in a thread of its own while its event loop
 * goes on writing. It makes durable what was written when it began, and
 * the next round's first record claims that. j->lock held, let go while
 * syncing. */
static void everysec_sync_locked(struct journal *j, uint64_t *last_sync)
{
    uint64_t seq = j->written_seq, end = j->written_end, took;
    uint64_t reserved = j->reserved_end;
    const char *what = "journal sync failed";

    pthread_mutex_unlock(&j->lock);
    int rc = sync_fd(j, &took);
    if (!rc)
        rc = journal_owner_still(j->fd, j->real_path, reserved, &what);
    pthread_mutex_lock(&j->lock);
    *last_sync = time_now_ns();
    if (rc) {
        journal_set_broken_locked(j, what, rc);
        return;
    }
    if (j->broken)
        return;                 /* a later sync proves nothing then */
    if (seq > j->synced_seq)
        j->synced_seq = seq;
    if (end > j->synced_end)
        j->synced_end = end;
    j->fsyncs++;
    hist_record(&j->fsync_ns, took);
}

/* Why the flusher should run now; j->lock held. */
static int work_due(const struct journal *j, uint64_t last_sync)
{
    if (j->flushing)            /* a session leads a round: signals work
                                   after it if there is more to do */
        return 0;
    if (j->buf[j->active].len || j->want_reserve || j->stopping ||
        j->compact_state == JCOMPACT_READY || (j->broken && !j->broken_logged))
        return 1;
    if (!j->reserve_error &&
        j->accepted_end + JOURNAL_CHUNK / 2 > j->reserved_end)
        return 1;
    return everysec_due(j, last_sync);
}

void journal_set_broken_locked(struct journal *j, const char *what, int err)
{
    if (j->broken)
        return;
    j->broken = err;
    snprintf(j->broken_why, sizeof(j->broken_why), "%s: %s", what,
             strerror(err));
    pthread_cond_signal(&j->work);      /* the flusher logs it */
}

/* Logs, once, that the journal turned read-only: the flusher's job, as it
 * never holds the store lock (a session whose round failed may: coarse).
 * j->lock held, let go while logging. */
static void log_broken_locked(struct journal *j)
{
    if (!j->broken || j->broken_logged)
        return;
    j->broken_logged = 1;
    char why[sizeof(j->broken_why)];
    snprintf(why, sizeof(why), "%s", j->broken_why);
    pthread_mutex_unlock(&j->lock);
    JOURNAL_LOG(j, LOG_LEVEL_ERROR, "journal %s: %s; the server is now "
                "read-only (no retry: the kernel may have dropped the pages, "
                "docs/DURABILITY.md)", j->path, why);
    pthread_mutex_lock(&j->lock);
}

/* Sleeps until work_due, or for 100 ms when a thread session's reply
 * waits for its socket to take the rest (journal_reply.c); j->lock
 * held. */
static void flush_wait_locked(struct journal *j, uint64_t last_sync)
{
    while (!work_due(j, last_sync)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;        /* re-check everysec */
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&j->work, &j->lock, &ts) == ETIMEDOUT &&
            j->stragglers && !j->flushing)
            break;
    }
}

/* Swaps the buffers and decides what this round does; j->lock held. */
void journal_round_take_locked(struct journal *j, struct flush_round *f)
{
    memset(f, 0, sizeof(*f));
    pthread_mutex_lock(&j->alock);      /* no appender in the buffer */
    f->b = &j->buf[j->active];
    j->active ^= 1;
    f->hi = j->appended_seq;
    f->n = f->b->len;
    pthread_mutex_unlock(&j->alock);
    f->off = j->written_end;
    f->reserved = j->reserved_end;
    if (f->n)
        j->mark_due = 1;
    /* Its records claimed what was synced when each was appended; with
     * group commit most were appended while the round before was being
     * written, so none would claim that round. The first is made to:
     * one CRC per round, and each round says the one before is durable. */
    if (f->n && j->version == JREC_VERSION)
        jrec_reframe(f->b->data, jrec_back(f->off, j->synced_end));
    f->do_reserve = j->want_reserve || (!j->reserve_error &&
        j->accepted_end + JOURNAL_CHUNK / 2 > j->reserved_end);
    /* everysec's sync is not a round's: the flusher runs it after one
     * (everysec_sync_locked), while rounds go on being written. */
    f->want_sync = !j->broken && (f->n || j->synced_seq < j->written_seq) &&
        (j->fsync == JOURNAL_FSYNC_ALWAYS || j->stopping);
    f->stop = j->stopping && f->n == 0;
    f->broken = j->broken;
    if (j->compact_state == JCOMPACT_READY) {
        f->sw = 1;              /* the buffer's records go to the new file */
        journal_switch_take_locked(j, &f->swc);
        if (!f->swc.err)        /* else abandoned: the old file takes them */
            f->do_reserve = 0;  /* the switch reserves there */
    }
}

/* The write and sync of a round; no lock held. */
void journal_round_io(struct journal *j, struct flush_round *f)
{
    f->io_from = time_now_ns();
    if (f->sw) {
        journal_switch_io(j, &f->swc);
        if (f->swc.renamed)
            return;             /* the records are in the new journal */
    }
    if (f->n && !f->broken) {
        journal_seam_torn(j->fd, f->b->data, f->n, f->off);
        f->werr = journal_seam_fail(JFAIL_WRITE) ? EIO :
                  journal_pwrite_all(j->fd, f->b->data, f->n, (off_t)f->off);
    }
    if (f->want_sync && !f->werr)
        f->serr = sync_fd(j, &f->took);
    /* Synced, but into a file a restart would still read? (removed,
     * replaced or cut short under the server: nothing is acknowledged
     * then). Not the sessions' rounds of everysec: the flusher's sync
     * looks, once a second. */
    if (f->want_sync && !f->werr && !f->serr)
        f->lerr = journal_owner_still(j->fd, j->real_path, f->reserved,
                                      &f->lwhat);
    f->io_to = time_now_ns();
}

/* What a round achieved, made known: j->lock held. */
void journal_round_publish_locked(struct journal *j, struct flush_round *f)
{
    f->b->len = 0;
    if (f->sw && f->swc.renamed) {
        journal_switch_publish_locked(j, &f->swc);
        /* The new file is of this format, and was synced whole before it
         * got its name; its last record is claimed durable by none.
         * Records appended while the switch ran (their room was checked
         * before it began) wait in the active buffer, encoded for the old
         * file: made records of the new one, claiming what it is synced
         * up to. */
        jrec_reframe_all(j->buf[j->active].data, j->buf[j->active].len,
                         j->written_end, j->written_end);
        j->version = JREC_VERSION;
        j->synced_end = j->written_end;
        j->mark_due = j->accepted_end > JREC_HEADER_LEN;
        goto published;
    }
    if (f->sw)                  /* failed: the old journal took the buffer */
        journal_switch_publish_locked(j, &f->swc);
    if (f->n && !f->broken && !f->werr) {
        metrics_journal_round(f->hi - j->written_seq, f->io_from, f->io_to);
        j->written_records += f->hi - j->written_seq;
        j->writes++;
        j->written_seq = f->hi;
        j->written_end = f->off + f->n;
    }
    if (f->werr) {
        journal_set_broken_locked(j, "journal write failed", f->werr);
    } else if (f->want_sync && f->serr) {
        journal_set_broken_locked(j, "journal sync failed", f->serr);
    } else if (f->want_sync && f->lerr) {
        journal_set_broken_locked(j, f->lwhat, f->lerr);
    } else if (f->want_sync) {
        j->synced_seq = j->written_seq;
        j->synced_end = j->written_end;
        j->fsyncs++;
        hist_record(&j->fsync_ns, f->took);
    }
published:
    /* A switch, renamed or not, ended the compaction; the active buffer
     * is reframed: appenders may go without j->lock again (alock). */
    if (f->sw && j->compact_state == JCOMPACT_IDLE)
        atomic_store_explicit(&j->compact_busy, 0, memory_order_release);
    atomic_store(&j->durable_seq, j->fsync == JOURNAL_FSYNC_ALWAYS
                 ? j->synced_seq : j->written_seq);
    journal_wake_locked(j);
    journal_notify_waiters_locked(j);
    journal_replies_due_locked(j, &f->replies);
}

/* One more chunk of space, reserved after a round, with none under way
 * (sessions may lead one meanwhile: the chunk lies past every record
 * accepted, which no round writes), so that its sync holds no reply.
 * That sync makes durable too what was written before it began, which
 * the records appended next may claim. j->lock held, let go while
 * reserving. */
static void reserve_ahead_locked(struct journal *j)
{
    uint64_t from = j->reserved_end, written = j->written_end, len = 0;

    j->want_reserve = 0;
    pthread_mutex_unlock(&j->lock);
    int rc = journal_reserve_chunk(j->fd, from, RESERVE_WRITTEN(j), &len);
    pthread_mutex_lock(&j->lock);
    j->reserve_tries++;
    if (rc) {
        j->reserve_error = rc;
    } else {
        j->reserved_end = from + len;
        j->reserve_error = 0;
        /* Not after a failed sync: then a later one proves nothing. */
        if (!j->broken && written > j->synced_end)
            j->synced_end = written;
    }
    pthread_cond_broadcast(&j->progress);   /* appenders waiting for space */
}

void *journal_flusher_main(void *arg)
{
    struct journal *j = arg;
    uint64_t last_sync = time_now_ns();
    uint64_t delayed = 0;               /* the last compaction the test
                                           seam delayed */
    struct flush_round f;

    pthread_mutex_lock(&j->lock);
    for (;;) {
        log_broken_locked(j);
        flush_wait_locked(j, last_sync);
        if (j->compact_state == JCOMPACT_READY &&
            delayed != j->compact_started) {
            delayed = j->compact_started;
            pthread_mutex_unlock(&j->lock);
            journal_seam_switch_delay();    /* the test build's only */
            pthread_mutex_lock(&j->lock);
            continue;
        }
        j->flushing = 1;
        journal_round_take_locked(j, &f);
        pthread_mutex_unlock(&j->lock);

        /* No lock held: appenders fill the other buffer meanwhile. */
        journal_round_io(j, &f);

        pthread_mutex_lock(&j->lock);
        journal_round_publish_locked(j, &f);
        j->flushing = 0;
        journal_replies_deliver_locked(j, f.replies);
        if (f.stop)
            break;
        if (f.do_reserve)
            reserve_ahead_locked(j);
        if (everysec_due(j, last_sync))
            everysec_sync_locked(j, &last_sync);
    }
    log_broken_locked(j);               /* a failure of the last round */
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

/* ---- figures ------------------------------------------------------------ */

void journal_figures(struct journal *j, struct journal_figures *f)
{
    pthread_mutex_lock(&j->lock);
    f->fsync = j->fsync;
    pthread_mutex_lock(&j->alock);
    f->records = j->records;
    f->bytes = j->bytes;
    f->live_bytes = j->live_bytes + JREC_HEADER_LEN;
    pthread_mutex_unlock(&j->alock);
    f->fsyncs = j->fsyncs;
    f->group_size_avg = j->writes ? (double)j->written_records /
                                    (double)j->writes : 0.0;
    f->fsync_p50_us = hist_percentile(&j->fsync_ns, 50) / 1000;
    f->fsync_p99_us = hist_percentile(&j->fsync_ns, 99) / 1000;
    f->wake = j->wake;
    f->wakes = j->wakes;
    f->async_waits = j->async_waits;
    f->wake_p50_us = hist_percentile(&j->wake_ns, 50) / 1000;
    f->wake_p99_us = hist_percentile(&j->wake_ns, 99) / 1000;
    f->readonly = j->broken != 0;
    f->size = j->written_end;
    f->compactions = j->compactions;
    f->compacting = j->compact_state != JCOMPACT_IDLE;
    pthread_mutex_unlock(&j->lock);
}

void journal_reset_figures(struct journal *j)
{
    pthread_mutex_lock(&j->lock);
    pthread_mutex_lock(&j->alock);
    j->records = j->bytes = 0;
    pthread_mutex_unlock(&j->alock);
    j->fsyncs = j->writes = j->written_records = 0;
    j->wakes = j->async_waits = 0;
    hist_init(&j->fsync_ns);
    hist_init(&j->wake_ns);
    pthread_mutex_unlock(&j->lock);
}

void journal_error(struct journal *j, char *why, size_t len)
{
    pthread_mutex_lock(&j->lock);
    snprintf(why, len, "%s", j->broken ? j->broken_why : "");
    pthread_mutex_unlock(&j->lock);
}
