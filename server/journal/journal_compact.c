/* journal_compact.c -- COMPACT and the automatic rewrite: the journal
 * rewritten as the live set, the Redis model (docs/DURABILITY.md).
 *
 * 1. Snapshot, under the store lock (journal_compact_start_locked): the
 *    tree is encoded as one ADD record per person, and from then on every
 *    append is also copied into the rewrite buffer (j->compact_buf).
 *    Only that walk and its one allocation are done under the store
 *    lock: nothing is logged, no thread created or joined there.
 * 2. The compactor, a thread of the journal's from journal_open to
 *    journal_close, asleep on j->compact_work until handed a snapshot,
 *    writes it to PATH.compact, syncs it, then copies what the rewrite
 *    buffer gathered meanwhile; no lock held while it writes. Sessions go
 *    on; the old journal stays the journal. PATH.compact is locked as the
 *    journal is (journal_owner.c) from its creation.
 * 3. The switch (journal_switch.c), a round only the flusher runs (rounds, one at a time under
 *    j->flushing, are the only writers of j->fd): it takes the
 *    rewrite buffer's last records and holds new appends back, writes
 *    them, syncs the new file, renames it over PATH and syncs the
 *    directory. A few milliseconds, whatever the store's size.
 *    PATH here is j->real_path: through a symbolic link, the link's
 *    target is replaced, in its own directory, and the link stays.
 * A crash before the rename leaves the old journal (PATH.compact is
 * removed at the next start); after it, the new one, which holds every
 * record any reply has waited for. A failure before the rename keeps the
 * old journal and its records; after it, the server turns read-only.
 * Running out of memory is such a failure, never a lost record: the
 * snapshot is sized from live_bytes; a rewrite buffer that cannot grow
 * fails the compaction (compact_nomem, checked by the compactor and again
 * by the switch, which then abandons it instead of renaming a file that
 * lacks a record); the room for the window between READY and the switch
 * is reserved before READY; and the directory is opened before the
 * rename. Whatever is abandoned, the rounds have written every record to
 * the old journal all along.
 * The state lives in struct journal under j->lock (journal_int.h).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "journal.h"
#include "journal_int.h"
#include "server.h"
#include "journal_rec.h"
#include "journal_seams.h"
#include "log.h"
#include "timeutil.h"

#define CATCHUP_ENOUGH  (64 * 1024)     /* left for the switch at most */
#define CATCHUP_ROUNDS  64              /* then switch anyway */

/* ---- 1. the snapshot, under the store lock ---------------------------- */

struct snap_walk {
    unsigned char *p;
    size_t len, cap;
};

/* -EOVERFLOW, and the walk stops, if the record would not fit: the
 * buffer is sized from live_bytes, which is exact, so this only guards
 * against a mistake in keeping it. */
static int snap_one(const struct entry *e, void *arg)
{
    struct snap_walk *w = arg;
    char ssn[ENTRY_SSN_LEN + 1];
    const char *first = entry_first(e), *last = entry_last(e);

    if (jrec_add_len(strlen(first), strlen(last)) > w->cap - w->len)
        return -EOVERFLOW;
    /* Each claims all before it: the new file is synced whole before it
     * is renamed in, the first moment it can be read as the journal. */
    w->len += jrec_encode(w->p + w->len, JREC_VERSION, 0, STORE_ADD, first,
                          last, entry_age(e), entry_ssn_text(e, ssn));
    return 0;
}

static int live_one(const struct entry *e, void *arg)
{
    *(uint64_t *)arg += jrec_add_len(strlen(entry_first(e)),
                                     strlen(entry_last(e)));
    return 0;
}

uint64_t journal_live_bytes_locked(struct store *st)
{
    uint64_t n = 0;
    store_foreach_locked(st, live_one, &n);
    return n;
}

void journal_compact_finish_locked(struct journal *j, int err,
                                   const char *what)
{
    j->compact_state = JCOMPACT_IDLE;
    j->compact_done = j->compact_started;
    j->compact_error = err;
    j->compact_why[0] = '\0';
    if (err)
        snprintf(j->compact_why, sizeof(j->compact_why), "%s: %s", what,
                 strerror(err));
    free(j->compact_buf.data);
    memset(&j->compact_buf, 0, sizeof(j->compact_buf));
    /* After a failure, the automatic rewrite waits for more growth. */
    j->compact_next = err ? j->accepted_end + j->compact_min
                          : j->compact_min;
    pthread_cond_broadcast(&j->progress);
    journal_waiters_notify_locked(&j->compact_waiters, j->compact_done, 0);
}

int journal_compact_start_locked(struct journal *j, uint64_t *gen)
{
    pthread_mutex_lock(&j->lock);
    if (j->broken) {
        pthread_mutex_unlock(&j->lock);
        return -EROFS;
    }
    if (j->compact_state != JCOMPACT_IDLE) {    /* wait for the running one */
        *gen = j->compact_started;
        pthread_mutex_unlock(&j->lock);
        return 0;
    }
    /* The snapshot's exact size: live_bytes is kept record by record, and
     * no append can change it now (they need the store lock). Sizing it
     * by the longest record instead took four times the memory for
     * names of everyday length. */
    struct snap_walk w = { .cap = j->live_bytes };
    pthread_mutex_unlock(&j->lock);

    /* What needs the store lock, and nothing else: the walk, O(n), and
     * its one allocation. No append can come between the walk and
     * RUNNING: appends need the store lock, which the caller holds. */
    uint64_t t0 = time_now_ns();
    size_t people = store_count_locked(j->store);
    int rc = -ENOMEM;
    w.p = journal_malloc(JALLOC_SNAPSHOT, w.cap + 1);
    if (w.p && (rc = store_foreach_locked(j->store, snap_one, &w))) {
        free(w.p);
        w.p = NULL;
    }

    pthread_mutex_lock(&j->lock);
    if (!w.p) {
        /* Like a failure: the automatic rewrite waits for more growth. */
        j->compact_next = j->accepted_end + j->compact_min;
        pthread_mutex_unlock(&j->lock);
        return rc;
    }
    assert(j->compact_state == JCOMPACT_IDLE);  /* starts need the store */
    j->compact_snap = w.p;                   /* the compactor's from now on */
    j->compact_snap_len = w.len;
    j->compact_snap_ns = time_now_ns() - t0;
    j->compact_snap_people = people;
    j->compact_state = JCOMPACT_RUNNING;
    atomic_store_explicit(&j->compact_busy, 1, memory_order_relaxed);
    j->compact_nomem = j->compact_abort = 0;
    j->live_bytes = w.len;
    *gen = ++j->compact_started;
    pthread_cond_signal(&j->compact_work);
    pthread_mutex_unlock(&j->lock);
    return 0;
}

int journal_compact_wait(struct journal *j, uint64_t gen, char *why,
                         size_t len)
{
    SRV_ASSERT_MAY_BLOCK();
    pthread_mutex_lock(&j->lock);
    while (j->compact_done < gen)
        pthread_cond_wait(&j->progress, &j->lock);
    int rc = -j->compact_error;
    snprintf(why, len, "%s", j->compact_why);
    pthread_mutex_unlock(&j->lock);
    return rc;
}

int journal_compact_result(struct journal *j, uint64_t gen, char *why,
                           size_t len)
{
    int rc = -EINPROGRESS;

    pthread_mutex_lock(&j->lock);
    if (j->compact_done >= gen) {
        rc = -j->compact_error;
        snprintf(why, len, "%s", j->compact_why);
    }
    pthread_mutex_unlock(&j->lock);
    return rc;
}

int journal_compact_wait_async(struct journal *j, struct journal_waiter *w,
                               uint64_t gen)
{
    int rc = 0;

    pthread_mutex_lock(&j->lock);
    if (j->compact_done < gen) {
        journal_waiter_queue_locked(&j->compact_waiters, w, gen);
        rc = -EAGAIN;
    }
    pthread_mutex_unlock(&j->lock);
    return rc;
}

void journal_compact_note_locked(struct journal *j, const void *rec,
                                 size_t n, enum store_op op, size_t live)
{
    if (op == STORE_ADD)
        j->live_bytes += n;
    else
        j->live_bytes -= live < j->live_bytes ? live : j->live_bytes;

    if (j->compact_state == JCOMPACT_RUNNING ||
        j->compact_state == JCOMPACT_READY) {
        /* Growing fails the compaction, not the append: the record is in
         * buf[active] for the old journal either way. READY never grows
         * (compact_one reserved the room), and the switch checks
         * compact_nomem all the same. */
        struct jgrow *g = &j->compact_buf;
        if (g->len + n > g->cap && !j->compact_nomem) {
            size_t cap = g->cap ? g->cap * 2 : JOURNAL_BUF;
            while (cap < g->len + n)
                cap *= 2;
            unsigned char *p = journal_realloc(JALLOC_REWRITE, g->data, cap);
            if (p) {
                g->data = p;
                g->cap = cap;
            } else {
                j->compact_nomem = 1;   /* the compaction fails, cleanly */
            }
        }
        if (!j->compact_nomem) {
            memcpy(g->data + g->len, rec, n);
            g->len += n;
        }
    } else if (j->compact_state == JCOMPACT_IDLE && j->compact_min &&
               !j->broken &&
               j->accepted_end >= j->compact_next &&
               j->accepted_end > 2 * (j->live_bytes + JREC_HEADER_LEN)) {
        j->compact_due = 1;
    }
}

/* ---- 2. the compactor: the new file, the old journal untouched -------- */

/* A snapshot handed to the compactor (journal_compact_start_locked). */
struct snapshot {
    unsigned char *p;           /* its records, the compactor's to free */
    size_t len;
    size_t people;
    uint64_t ns;                /* how long it held the store lock */
    uint64_t gen;               /* the compaction it is for */
};

static int write_snapshot(const struct snapshot *sn, int fd, uint64_t *end)
{
    unsigned char h[JREC_HEADER_LEN];
    size_t half = sn->len / 2;
    int err;

    jrec_header_write(h);
    if ((err = journal_pwrite_all(fd, h, sizeof(h), 0)))
        return err;
    if ((err = journal_pwrite_all(fd, sn->p, half, sizeof(h))))
        return err;
    journal_seam_crash(JCRASH_SNAPSHOT);
    if ((err = journal_pwrite_all(fd, sn->p + half, sn->len - half,
                                  sizeof(h) + half)))
        return err;
    journal_seam_fail(JFAIL_COMPACT_SYNC);  /* slow:N makes it slow */
    if (fdatasync(fd))
        return errno;
    *end = sizeof(h) + sn->len;
    return 0;
}

/* Copies the rewrite buffer into the new file until little is left. */
static int catch_up(struct journal *j, int fd, uint64_t *end)
{
    for (int round = 0; round < CATCHUP_ROUNDS; round++) {
        pthread_mutex_lock(&j->lock);
        if (j->compact_buf.len < CATCHUP_ENOUGH || j->compact_abort ||
            j->compact_nomem) {
            pthread_mutex_unlock(&j->lock);
            return 0;
        }
        struct jgrow g = j->compact_buf;
        memset(&j->compact_buf, 0, sizeof(j->compact_buf));
        pthread_mutex_unlock(&j->lock);
        int err = journal_pwrite_all(fd, g.data, g.len, (off_t)*end);
        free(g.data);
        if (err)
            return err;
        *end += g.len;
    }
    return 0;
}

/* Makes room in the rewrite buffer for every record that can be appended
 * between READY and the switch, so that none of them has to allocate:
 * they all go into the active buffer as well, which holds JOURNAL_BUF
 * bytes at most (journal_reserve_locked waits when it is full), and no
 * round swaps it until the switch takes it. On failure compact_nomem is
 * set: the compaction fails before READY. j->lock held. */
static void reserve_ready_room_locked(struct journal *j)
{
    struct jgrow *g = &j->compact_buf;
    size_t need = g->len + JOURNAL_BUF;

    if (g->cap >= need)
        return;
    unsigned char *p = journal_realloc(JALLOC_REWRITE, g->data, need);
    if (!p) {
        j->compact_nomem = 1;
        return;
    }
    g->data = p;
    g->cap = need;
}

/* The compactor's failure: the old journal stays, the new file goes. */
static void compact_failed(struct journal *j, int fd, int err,
                           const char *what)
{
    if (fd >= 0) {              /* only a file this compaction made goes */
        close(fd);
        unlink(j->compact_path);
    }
    pthread_mutex_lock(&j->lock);
    journal_compact_finish_locked(j, err, what);
    /* Appenders may go without j->lock again (journal_int.h, alock). */
    atomic_store_explicit(&j->compact_busy, 0, memory_order_release);
    pthread_mutex_unlock(&j->lock);
    JOURNAL_LOG(j, err == ECANCELED ? LOG_LEVEL_INFO : LOG_LEVEL_WARN,
                "journal %s: compaction abandoned (%s: %s); the journal is "
                "unchanged", j->path, what, strerror(err));
}

/* Steps 1 and 2 of a compaction, no lock held: the new file created and
 * locked, the snapshot written into it (and freed), then the records
 * appended since. 0 with *fd open and *end its length, or the errno and
 * *what saying which step failed (*fd: -1 or still open). */
static int write_new_file(struct journal *j, struct snapshot *sn, int *fd,
                          uint64_t *end, const char **what)
{
    int err = 0;

    pthread_mutex_lock(&j->lock);
    int stopping = j->compact_abort;         /* journal_close came first */
    pthread_mutex_unlock(&j->lock);

    *what = "cannot write the new file";
    if (stopping) {
        err = ECANCELED;
        *what = "the server is stopping";
    } else if ((*fd = journal_owner_create(j->compact_path)) < 0) {
        err = errno;
        *what = err == EBUSY ? "the new file's name is another server's "
                               "journal" : "cannot create the new file";
    } else if ((err = journal_owner_lock(*fd))) {
        /* Locked before it can become the journal: whatever file the
         * journal's name leads to, this server holds its lock, or a
         * second server could start on it after the switch
         * (journal_owner.c). */
        *what = "cannot lock the new file";
    } else {
        err = write_snapshot(sn, *fd, end);
    }
    free(sn->p);
    sn->p = NULL;
    return err ? err : catch_up(j, *fd, end);
}

/* Whether the new file may go to the flusher for the switch, room for it
 * reserved first: 0, or the errno and *what; j->lock held. */
static int ready_locked(struct journal *j, const char **what)
{
    if (!j->compact_nomem)
        reserve_ready_room_locked(j);
    if (j->compact_nomem) {
        *what = "the rewrite buffer cannot grow";
        return ENOMEM;
    }
    if (j->broken) {
        *what = "the journal is read-only";
        return EROFS;
    }
    if (j->compact_abort) {
        *what = "the server is stopping";
        return ECANCELED;
    }
    return 0;
}

/* One compaction, from the snapshot to the flusher's switch; no lock held
 * on entry or return. Frees the snapshot. */
static void compact_one(struct journal *j, struct snapshot *sn)
{
    uint64_t t0 = time_now_ns(), end = 0;
    const char *what;
    int fd = -1;
    size_t snap = sn->len + JREC_HEADER_LEN;

    pthread_mutex_lock(&j->lock);
    uint64_t before = j->written_end;   /* what the old one had reached */
    pthread_mutex_unlock(&j->lock);

    int err = write_new_file(j, sn, &fd, &end, &what);
    pthread_mutex_lock(&j->lock);
    if (!err)
        err = ready_locked(j, &what);
    if (err) {
        pthread_mutex_unlock(&j->lock);
        compact_failed(j, fd, err, what);
        return;
    }
    j->compact_fd = fd;
    j->compact_end = end;
    j->compact_state = JCOMPACT_READY;            /* 3. the flusher's turn */
    pthread_cond_signal(&j->work);
    /* Its end, by generation: once IDLE, the next compaction may start
     * (RUNNING again) before this thread sees the IDLE. */
    while (j->compact_done < sn->gen)
        pthread_cond_wait(&j->progress, &j->lock);
    err = j->compact_error;                  /* the next cannot end before
                                           this thread runs it */
    uint64_t after = j->written_end;
    char why[sizeof(j->compact_why)];
    snprintf(why, sizeof(why), "%s", j->compact_why);
    pthread_mutex_unlock(&j->lock);

    if (err) {
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: compaction failed: %s",
                    j->path, why);
        return;
    }
    journal_seam_crash(JCRASH_SWITCHED);
    JOURNAL_LOG(j, LOG_LEVEL_INFO, "journal %s: compacted: the snapshot of "
                "%zu people took %llu ms under the store lock, the rewrite "
                "%llu ms more; %llu bytes when it began, %llu now (a snapshot "
                "of %zu, then the records since)", j->path, sn->people,
                (unsigned long long)(sn->ns / TIME_NS_PER_MS),
                (unsigned long long)((time_now_ns() - t0) / TIME_NS_PER_MS),
                (unsigned long long)before, (unsigned long long)after, snap);
}

/* The compactor thread, from journal_open to journal_close: no thread is
 * created or joined per compaction, so that starting one under the store
 * lock costs only the snapshot. */
void *journal_compactor_main(void *arg)
{
    struct journal *j = arg;
    uint64_t ran = 0;                   /* the last compaction it ran */

    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (j->compact_started == ran && !j->compactor_stop)
            pthread_cond_wait(&j->compact_work, &j->lock);
        if (j->compact_started == ran)
            break;                      /* stopping, and nothing handed */
        struct snapshot sn = {
            .p = j->compact_snap, .len = j->compact_snap_len,
            .people = j->compact_snap_people, .ns = j->compact_snap_ns,
            .gen = j->compact_started,
        };
        ran = sn.gen;
        j->compact_snap = NULL;
        pthread_mutex_unlock(&j->lock);
        compact_one(j, &sn);
        pthread_mutex_lock(&j->lock);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}
