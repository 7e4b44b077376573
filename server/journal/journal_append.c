/* journal_append.c -- appending to the journal, under the store lock
 * (journal.h): room and disk space checked before a mutation is applied,
 * then its record copied into the active buffer. An appender takes
 * journal->alock alone while no compaction runs, never journal->lock,
 * whose holders make system calls (journal_int.h); the rounds that write
 * the records are journal.c's.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include "journal.h"
#include "journal_int.h"
#include "journal_rec.h"

/* Room in the active buffer and reserved space for one more record, as an
 * appender sees it: j->lock held, or the store lock alone while no
 * compaction runs (journal_reserve_locked's first look). Without j->lock
 * it may be out of date only the safe way: appenders are serialized by
 * the store lock, which the caller holds until its append, and while no
 * compaction runs the others only make room (a round swaps in an emptied
 * buffer, the flusher reserves more space); a buffer a swap has just
 * taken away shows less room, not more. A compaction's switch moves both
 * ends under j->lock: while one runs, only under it. */
static int room_for_one(const struct journal *j)
{
    int a = atomic_load_explicit(&j->active, memory_order_acquire);

    return !j->broken && j->accepted_end + JREC_MAX <= j->reserved_end &&
           j->buf[a].len + JREC_MAX <= JOURNAL_BUF;
}

int journal_reserve_locked(struct journal *j)
{
    int rc = 0;

    /* The common case with no lock of the journal's: alock's pair cost
     * 64 cycles of the store lock's hold a mutation (rdtsc, 2026-11-26).
     * compact_busy cannot be set meanwhile: a compaction starts under the
     * store lock, which the caller holds. */
    if (!atomic_load_explicit(&j->compact_busy, memory_order_acquire) &&
        room_for_one(j))
        return 0;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        if (j->broken) {
            rc = -EROFS;
            break;
        }
        if (j->accepted_end + JREC_MAX > j->reserved_end) {
            /* Ask the flusher for one more try, and take its answer. */
            uint64_t tries = j->reserve_tries;
            j->want_reserve = 1;
            pthread_cond_signal(&j->work);
            while (j->reserve_tries == tries && !j->broken)
                pthread_cond_wait(&j->progress, &j->lock);
            if (j->accepted_end + JREC_MAX > j->reserved_end &&
                j->reserve_error) {
                rc = -j->reserve_error;
                break;
            }
            continue;
        }
        if (j->buf[j->active].len + JREC_MAX > JOURNAL_BUF) {
            pthread_cond_signal(&j->work);      /* full: wait for a swap */
            pthread_cond_wait(&j->progress, &j->lock);
            continue;
        }
        break;
    }
    pthread_mutex_unlock(&j->lock);
    return rc;
}

/* One record into the active buffer; alock held (and j->lock too while a
 * compaction runs). */
static uint64_t append_alocked(struct journal *j,
                               const struct store_mutation *m,
                               int *compact_due)
{
    const struct entry *e = m->op == STORE_ADD ? m->entry : m->removed;
    size_t live = m->op == STORE_ADD ? 0 :
                  jrec_add_len(strlen(entry_first(e)), strlen(entry_last(e)));
    char ssn[ENTRY_SSN_LEN + 1];
    struct jbuf *b = &j->buf[j->active];
    unsigned char *rec = b->data + b->len, copy[JREC_MAX];
    /* The record claims what was durable when it was appended: no more
     * than what will be once it is written (replay's rule needs claims
     * that are true, journal_rec.h). A subtraction, no byte more. */
    size_t n = jrec_encode(rec, j->version,
                           jrec_back(j->accepted_end, j->synced_end), m->op,
                           entry_first(e), entry_last(e), entry_age(e),
                           entry_ssn_text(e, ssn));
    if (j->compact_state == JCOMPACT_RUNNING ||
        j->compact_state == JCOMPACT_READY) {
        /* Bound for the new file too, which is of this format and synced
         * whole before it is renamed in: there it claims all before it. */
        memcpy(copy, rec, n);
        jrec_reframe(copy, 0);
        journal_compact_note_locked(j, copy, n, m->op, live);
        explicit_bzero(copy, n);
    } else {
        journal_compact_note_locked(j, rec, n, m->op, live);
    }
    b->len += n;
    j->accepted_end += n;
    j->records++;
    j->bytes += n;
    /* The journal passed twice the live size: the automatic rewrite is
     * due. Only said here: the caller starts it once it has left the
     * store (journal.h), so that nothing but the snapshot's walk is done
     * under the store lock. */
    *compact_due = j->compact_due;
    j->compact_due = 0;
    return ++j->appended_seq;
}

uint64_t journal_append_locked(struct journal *j,
                               const struct store_mutation *m,
                               int *compact_due)
{
    uint64_t seq;

    /* No signal to the flusher: the session that appended writes (and
     * syncs) its record itself in journal_wait, or waits for the round
     * under way; an event loop's journal_wait_async signals it; the
     * flusher's 100 ms tick is the backstop. No compaction can start
     * meanwhile: that needs the store lock, which the caller holds. */
    if (!atomic_load_explicit(&j->compact_busy, memory_order_acquire)) {
        pthread_mutex_lock(&j->alock);
        seq = append_alocked(j, m, compact_due);
        pthread_mutex_unlock(&j->alock);
        return seq;
    }
    pthread_mutex_lock(&j->lock);       /* a compaction's state too */
    pthread_mutex_lock(&j->alock);
    seq = append_alocked(j, m, compact_due);
    pthread_mutex_unlock(&j->alock);
    pthread_mutex_unlock(&j->lock);
    return seq;
}
