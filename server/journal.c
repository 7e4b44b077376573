/* journal.c -- the journal's file, its flusher thread and group commit
 * (journal.h; the format is journal_rec.c's, the design docs/DURABILITY.md).
 *
 * Appending (under the store lock) only copies bytes into the active
 * buffer. The flusher swaps buffers under j->lock, then writes, syncs and
 * reserves space with no lock held, then publishes what is now durable and
 * broadcasts j->progress. Space is reserved ahead with fallocate (the file
 * size kept), a chunk at a time: a record is accepted only into space the
 * file system has already given, so a full disk refuses a mutation before
 * it is applied rather than after it was acknowledged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "hist.h"
#include "journal.h"
#include "journal_rec.h"
#include "log.h"
#include "timeutil.h"

#define JOURNAL_BUF     (256 * 1024)    /* each of the two buffers */
#define JOURNAL_CHUNK   (64 * 1024)     /* space reserved at a time */
#define JOURNAL_SYNC_NS (1000 * TIME_NS_PER_MS) /* everysec's period */
#define JOURNAL_NO_LIMIT UINT64_MAX     /* reserved_end when the file
                                           system cannot reserve */

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

    uint64_t records, bytes, fsyncs, writes, written_records;
    struct hist fsync_ns;
};

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

/* ---- the flusher ---------------------------------------------------- */

static int pwrite_all(int fd, const unsigned char *p, size_t n, off_t off)
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

/* 0, or the errno; EOPNOTSUPP means this file system cannot reserve. */
static int reserve(int fd, uint64_t from)
{
    int rc;
    do
        rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, JOURNAL_CHUNK);
    while (rc && errno == EINTR);
    return rc ? errno : 0;
}

int (*journal_sync_fn)(int fd) = fdatasync;

static int sync_fd(struct journal *j, uint64_t *took)
{
    uint64_t t0 = time_now_ns();
    int rc = journal_sync_fn(j->fd) ? errno : 0;
    *took = time_now_ns() - t0;
    return rc;
}

/* Why the flusher should run now; j->lock held. */
static int work_due(const struct journal *j, uint64_t last_sync)
{
    if (j->buf[j->active].len || j->want_reserve || j->stopping)
        return 1;
    if (j->reserved_end != JOURNAL_NO_LIMIT && !j->reserve_error &&
        j->accepted_end + JOURNAL_CHUNK / 2 > j->reserved_end)
        return 1;
    return j->fsync == JOURNAL_FSYNC_EVERYSEC &&
           j->synced_seq < j->written_seq &&
           time_now_ns() - last_sync >= JOURNAL_SYNC_NS;
}

static void set_broken(struct journal *j, const char *what, int err)
{
    if (j->broken)
        return;
    j->broken = err;
    snprintf(j->broken_why, sizeof(j->broken_why), "%s: %s", what,
             strerror(err));
}

static void *flusher_main(void *arg)
{
    struct journal *j = arg;
    uint64_t last_sync = time_now_ns();

    pthread_mutex_lock(&j->lock);
    for (;;) {
        while (!work_due(j, last_sync)) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += 100 * 1000 * 1000;    /* re-check everysec */
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&j->work, &j->lock, &ts);
        }
        struct jbuf *b = &j->buf[j->active];
        j->active ^= 1;
        uint64_t hi = j->appended_seq, off = j->written_end;
        size_t n = b->len;
        int do_reserve = j->reserved_end != JOURNAL_NO_LIMIT &&
            (j->want_reserve || (!j->reserve_error &&
             j->accepted_end + JOURNAL_CHUNK / 2 > j->reserved_end));
        uint64_t res_from = j->reserved_end;
        int want_sync = !j->broken && (n || j->synced_seq < j->written_seq) &&
            (j->fsync == JOURNAL_FSYNC_ALWAYS || j->stopping ||
             (j->fsync == JOURNAL_FSYNC_EVERYSEC &&
              time_now_ns() - last_sync >= JOURNAL_SYNC_NS));
        int stop = j->stopping && n == 0;
        int broken = j->broken;
        j->want_reserve = 0;
        pthread_mutex_unlock(&j->lock);

        /* No lock held: appenders fill the other buffer meanwhile. */
        int werr = 0, serr = 0, rerr = 0;
        uint64_t took = 0;
        if (n && !broken)
            werr = pwrite_all(j->fd, b->data, n, (off_t)off);
        if (want_sync && !werr) {
            serr = sync_fd(j, &took);
            last_sync = time_now_ns();
        }
        if (do_reserve)
            rerr = reserve(j->fd, res_from);

        pthread_mutex_lock(&j->lock);
        b->len = 0;
        if (n && !broken && !werr) {
            j->written_records += hi - j->written_seq;
            j->writes++;
            j->written_seq = hi;
            j->written_end = off + n;
        }
        if (werr) {
            set_broken(j, "journal write failed", werr);
        } else if (want_sync && serr) {
            set_broken(j, "journal sync failed", serr);
        } else if (want_sync) {
            j->synced_seq = j->written_seq;
            j->fsyncs++;
            hist_record(&j->fsync_ns, took);
        }
        if (do_reserve) {
            j->reserve_tries++;
            if (rerr == EOPNOTSUPP || rerr == ENOSYS) {
                j->reserved_end = JOURNAL_NO_LIMIT;
                j->reserve_error = 0;
            } else if (rerr) {
                j->reserve_error = rerr;
            } else {
                j->reserved_end = res_from + JOURNAL_CHUNK;
                j->reserve_error = 0;
            }
        }
        atomic_store(&j->durable_seq, j->fsync == JOURNAL_FSYNC_ALWAYS
                     ? j->synced_seq : j->written_seq);
        pthread_cond_broadcast(&j->progress);
        if (werr || (want_sync && serr)) {
            pthread_mutex_unlock(&j->lock);
            log_msg(LOG_LEVEL_ERROR, "journal %s: %s; the server is now "
                    "read-only (no retry: the kernel may have dropped the "
                    "pages, docs/DURABILITY.md)", j->path, j->broken_why);
            pthread_mutex_lock(&j->lock);
        }
        if (stop)
            break;
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

/* ---- appending, under the store lock --------------------------------- */

int journal_reserve_locked(struct journal *j)
{
    int rc = 0;

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

uint64_t journal_append_locked(struct journal *j,
                               const struct store_mutation *m)
{
    const struct entry *e = m->op == STORE_ADD ? m->entry : m->removed;
    uint64_t seq;

    pthread_mutex_lock(&j->lock);
    struct jbuf *b = &j->buf[j->active];
    int was_empty = b->len == 0;
    size_t n = jrec_encode(b->data + b->len, m->op, e->first, e->last,
                           e->age, e->ssn);
    b->len += n;
    j->accepted_end += n;
    seq = ++j->appended_seq;
    j->records++;
    j->bytes += n;
    if (was_empty)
        pthread_cond_signal(&j->work);  /* the flusher sleeps only when
                                           the active buffer is empty */
    pthread_mutex_unlock(&j->lock);
    return seq;
}

/* ---- waiting ---------------------------------------------------------- */

int journal_wait(struct journal *j, uint64_t seq)
{
    int rc;

    if (atomic_load(&j->durable_seq) >= seq)
        return 0;
    pthread_mutex_lock(&j->lock);
    while (atomic_load(&j->durable_seq) < seq && !j->broken)
        pthread_cond_wait(&j->progress, &j->lock);
    rc = atomic_load(&j->durable_seq) >= seq ? 0 : -EIO;
    pthread_mutex_unlock(&j->lock);
    return rc;
}

/* ---- figures ------------------------------------------------------------ */

void journal_figures(struct journal *j, struct journal_figures *f)
{
    pthread_mutex_lock(&j->lock);
    f->fsync = j->fsync;
    f->records = j->records;
    f->bytes = j->bytes;
    f->fsyncs = j->fsyncs;
    f->group_size_avg = j->writes ? (double)j->written_records /
                                    (double)j->writes : 0.0;
    f->fsync_p99_us = hist_percentile(&j->fsync_ns, 99) / 1000;
    f->readonly = j->broken != 0;
    pthread_mutex_unlock(&j->lock);
}

void journal_reset_figures(struct journal *j)
{
    pthread_mutex_lock(&j->lock);
    j->records = j->bytes = j->fsyncs = j->writes = j->written_records = 0;
    hist_init(&j->fsync_ns);
    pthread_mutex_unlock(&j->lock);
}

void journal_error(struct journal *j, char *why, size_t len)
{
    pthread_mutex_lock(&j->lock);
    snprintf(why, len, "%s", j->broken ? j->broken_why : "");
    pthread_mutex_unlock(&j->lock);
}

/* ---- opening, replaying, closing ----------------------------------------- */

/* jrec_scan's callback: applies one record, not journaled again (the
 * journal is attached only after the replay). A record that contradicts
 * the store (an ADD of a present name, a DELETE of an absent one) means
 * the file is not the history of this store: damage. */
static int replay_one(enum store_op op, struct entry *rec, void *arg)
{
    struct store *st = arg;
    struct store_mutation m = { .op = op };

    if (op == STORE_ADD) {
        if (!(m.entry = store_entry_new()))
            return -ENOMEM;
        memcpy(m.entry->first, rec->first, sizeof(rec->first));
        memcpy(m.entry->last, rec->last, sizeof(rec->last));
        memcpy(m.entry->ssn, rec->ssn, sizeof(rec->ssn));
        m.entry->age = rec->age;
    } else {
        m.key.first = rec->first;
        m.key.last = rec->last;
    }
    int rc = store_apply_locked(st, &m);
    if (op == STORE_ADD && rc)
        store_entry_free(m.entry);
    if (op == STORE_DELETE && rc == 0)
        store_entry_free(m.removed);
    return rc;
}

static int read_all(int fd, unsigned char **out, size_t *len)
{
    struct stat sb;

    if (fstat(fd, &sb))
        return errno;
    unsigned char *p = malloc((size_t)sb.st_size + 1);
    if (!p)
        return ENOMEM;
    size_t got = 0;
    while (got < (size_t)sb.st_size) {
        ssize_t r = pread(fd, p + got, (size_t)sb.st_size - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(p);
            return e;
        }
        got += (size_t)r;
    }
    *out = p;
    *len = got;
    return 0;
}

/* Replays the image into st. Returns the offset where appending resumes,
 * or -1 after writing why into err. */
static long long replay(struct journal *j, const unsigned char *img,
                        size_t len, int truncate, char *err, size_t errlen)
{
    struct jscan r;

    store_lock(j->store);       /* the _locked functions assert it */
    jrec_scan(img, len, replay_one, j->store, &r);
    size_t people = store_count_locked(j->store);
    store_unlock(j->store);

    switch (r.status) {
    case JSCAN_FOREIGN:
        snprintf(err, errlen, "%s is not an ssnserver journal (no journal "
                 "header); refusing to use or overwrite it", j->path);
        return -1;
    case JSCAN_VERSION:
        snprintf(err, errlen, "%s is a journal of another version; this "
                 "server reads version %d only", j->path, JREC_VERSION);
        return -1;
    case JSCAN_DAMAGED:
        if (!truncate) {
            snprintf(err, errlen, "%s: damaged record at byte %zu (%s) "
                     "with records after it; %zu records before it are "
                     "good. Start with --journal-truncate to keep those "
                     "and drop everything from byte %zu on", j->path,
                     r.bad_offset, r.cb_error ? "it contradicts the "
                     "records before it" : "bad length, checksum or "
                     "contents", r.records, r.bad_offset);
            return -1;
        }
        log_msg(LOG_LEVEL_WARN, "journal %s: damaged record at byte %zu; "
                "--journal-truncate: %zu bytes from there on dropped",
                j->path, r.bad_offset, len - r.bad_offset);
        break;
    case JSCAN_TORN:
        log_msg(LOG_LEVEL_WARN, "journal %s: torn tail at byte %zu (%zu "
                "bytes of an unfinished last record) cut", j->path,
                r.bad_offset, len - r.bad_offset);
        break;
    case JSCAN_CLEAN:
        break;
    }
    log_msg(LOG_LEVEL_INFO, "journal %s: recovered %zu records (%zu ADD, "
            "%zu DELETE), %zu people, %zu bytes; fsync %s", j->path,
            r.records, r.adds, r.deletes, people, r.good_end,
            journal_fsync_name(j->fsync));
    return (long long)r.good_end;
}

struct journal *journal_open(const char *path, enum journal_fsync fsync,
                             int truncate, struct store *st,
                             char *err, size_t errlen)
{
    struct journal *j = calloc(1, sizeof(*j));
    unsigned char *img = NULL;
    size_t len = 0;
    int rc, fd;

    if (!j || !(j->path = strdup(path))) {
        snprintf(err, errlen, "out of memory");
        goto err;
    }
    j->fd = -1;
    j->fsync = fsync;
    j->store = st;
    hist_init(&j->fsync_ns);
    fd = j->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || (rc = read_all(fd, &img, &len))) {
        snprintf(err, errlen, "cannot open %s: %s", path,
                 strerror(fd < 0 ? errno : rc));
        goto err;
    }
    if (len == 0) {             /* a new journal */
        unsigned char h[JREC_HEADER_LEN];
        jrec_header_write(h);
        if ((rc = pwrite_all(fd, h, sizeof(h), 0)) ||
            (fdatasync(fd) && (rc = errno))) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(rc));
            goto err;
        }
        free(img);
        if (!(img = malloc(sizeof(h)))) {
            snprintf(err, errlen, "out of memory");
            goto err;
        }
        memcpy(img, h, sizeof(h));
        len = sizeof(h);
        log_msg(LOG_LEVEL_INFO, "journal %s: new", path);
    }
    long long end = replay(j, img, len, truncate, err, errlen);
    free(img);
    img = NULL;
    if (end < 0)
        goto err;
    if ((size_t)end < len && (ftruncate(fd, end) || fdatasync(fd))) {
        snprintf(err, errlen, "cannot cut %s at byte %lld: %s", path, end,
                 strerror(errno));
        goto err;
    }
    j->accepted_end = j->written_end = j->reserved_end = (uint64_t)end;
    rc = reserve(fd, j->reserved_end);
    if (rc == EOPNOTSUPP || rc == ENOSYS) {
        j->reserved_end = JOURNAL_NO_LIMIT;
        log_msg(LOG_LEVEL_WARN, "journal %s: this file system cannot "
                "reserve space ahead; a full disk will make the server "
                "read-only instead of refusing writes", path);
    } else if (rc) {
        j->reserve_error = rc;
        log_msg(LOG_LEVEL_WARN, "journal %s: cannot reserve space: %s; "
                "writes are refused until there is room", path, strerror(rc));
    } else {
        j->reserved_end += JOURNAL_CHUNK;
    }
    for (int i = 0; i < 2; i++)
        if (!(j->buf[i].data = malloc(JOURNAL_BUF))) {
            snprintf(err, errlen, "out of memory");
            goto err;
        }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->work, &ca);
    pthread_cond_init(&j->progress, NULL);
    pthread_condattr_destroy(&ca);
    rc = pthread_create(&j->flusher, NULL, flusher_main, j);
    if (rc) {
        snprintf(err, errlen, "cannot start the journal thread: %s",
                 strerror(rc));
        pthread_cond_destroy(&j->work);
        pthread_cond_destroy(&j->progress);
        pthread_mutex_destroy(&j->lock);
        goto err;
    }
    st->journal = j;
    return j;
err:
    free(img);
    if (j) {
        if (j->fd >= 0)
            close(j->fd);
        free(j->buf[0].data);
        free(j->buf[1].data);
        free(j->path);
        free(j);
    }
    return NULL;
}

void journal_close(struct journal *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->lock);
    j->stopping = 1;
    pthread_cond_signal(&j->work);
    pthread_mutex_unlock(&j->lock);
    pthread_join(j->flusher, NULL);
    /* Give back the space reserved beyond the end. */
    if (!j->broken && ftruncate(j->fd, (off_t)j->written_end) == 0)
        fdatasync(j->fd);
    close(j->fd);
    j->store->journal = NULL;
    log_msg(LOG_LEVEL_INFO, "journal %s: closed at %llu bytes%s", j->path,
            (unsigned long long)j->written_end,
            j->broken ? " (read-only after a failure)" : "");
    pthread_cond_destroy(&j->work);
    pthread_cond_destroy(&j->progress);
    pthread_mutex_destroy(&j->lock);
    free(j->buf[0].data);
    free(j->buf[1].data);
    free(j->path);
    free(j);
}
