/* journal_open.c -- opening the journal, replaying it into the store and
 * recovering from a torn or damaged tail, then starting the flusher
 * (journal.c) and the compactor (journal_compact.c); and closing it. The
 * test build's seams (journal_seams.h) are armed here, once, at open. The
 * file is opened and locked by journal_owner.c before a byte is read. The
 * state is journal_int.h's struct journal; nothing here runs while the
 * flusher does but journal_close, which stops the compactor, then the
 * flusher, under j->lock before touching the file.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "hist.h"
#include "journal.h"
#include "journal_int.h"
#include "journal_rec.h"
#include "journal_seams.h"
#include "log.h"

/* jrec_scan's callback: applies one record, not journaled again (the
 * journal is attached only after the replay). A record that contradicts
 * the store (an ADD of a present name, a DELETE of an absent one) means
 * the file is not the history of this store: damage. */
static int replay_one(enum store_op op, const struct person *rec, void *arg)
{
    struct store *st = arg;
    struct store_mutation m = { .op = op };

    if (op == STORE_ADD) {
        if (!(m.entry = entry_from_person(rec)))    /* jrec_decode checked */
            return -ENOMEM;
    } else {
        m.key.first = rec->first;
        m.key.last = rec->last;
    }
    int rc = store_apply_locked(st, &m);
    if (op == STORE_ADD && rc)
        entry_free(m.entry);
    if (op == STORE_DELETE && rc == 0)
        entry_free(m.removed);
    return rc;
}

static int read_all(int fd, unsigned char **out, size_t *len)
{
    struct stat sb;

    if (fstat(fd, &sb))
        return errno;
    unsigned char *p = journal_malloc(JALLOC_OPEN, (size_t)sb.st_size + 1);
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

/* A header cut short by a crash (JSCAN_HEADER_CUT): written again whole,
 * and synced. Returns 0, or -1 after writing why into err. */
static int header_again(struct journal *j, char *err, size_t errlen)
{
    unsigned char h[JREC_HEADER_LEN];
    int rc;

    jrec_header_write(h);
    if ((rc = journal_pwrite_all(j->fd, h, sizeof(h), 0)) ||
        (fdatasync(j->fd) && (rc = errno))) {
        snprintf(err, errlen, "cannot write %s: %s", j->path, strerror(rc));
        return -1;
    }
    return 0;
}

/* Replays the image into st, and decides what a bad record means (the
 * rule of the file's version, journal_rec.c). Sets the file's version and
 * whether its last records wait for a MARK. Returns the offset where
 * appending resumes, or -1 after writing why into err; -ENOMEM when memory
 * ran out, the file untouched. */
static long long replay(struct journal *j, const unsigned char *img,
                        size_t len, int truncate, char *err, size_t errlen)
{
    struct jscan r;

    store_lock(j->store);       /* the _locked functions assert it */
    store_reserve_locked(j->store, len / JREC_ADD_TYPICAL);
    jrec_scan(img, len, replay_one, j->store, &r);
    size_t people = store_count_locked(j->store);
    j->live_bytes = journal_live_bytes_locked(j->store);
    store_unlock(j->store);

    switch (r.status) {
    case JSCAN_FOREIGN:
        snprintf(err, errlen, "%s is not an ssnserver journal (no journal "
                 "header); refusing to use or overwrite it", j->path);
        return -1;
    case JSCAN_VERSION:
        snprintf(err, errlen, "%s is a journal of another version; this "
                 "server reads versions %d and %d", j->path,
                 JREC_VERSION_V1, JREC_VERSION);
        return -1;
    case JSCAN_HEADER_CUT:
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: %zu bytes, a header cut "
                    "short (the file was being created when the server "
                    "stopped): it cannot have held a record; starting empty, "
                    "the header written again", j->path, len);
        if (header_again(j, err, errlen) < 0)
            return -1;
        j->version = JREC_VERSION;
        return JREC_HEADER_LEN;
    case JSCAN_DAMAGED:
        /* A record that could not be applied for want of memory is no
         * damage: the file is whole, only this process is too small for
         * it. Never cut it, --journal-truncate or not. */
        if (r.cb_error == -ENOMEM) {
            snprintf(err, errlen, "%s: out of memory after replaying %zu "
                     "records (byte %zu of %zu, %zu people); the journal is "
                     "untouched: start again with more memory "
                     "(--journal-truncate would not help)", j->path,
                     r.records, r.bad_offset, len, people);
            return -ENOMEM;
        }
        if (!truncate && r.witness) {
            snprintf(err, errlen, "%s: damaged record at byte %zu (bad "
                     "length, checksum or contents), in bytes that had been "
                     "durable: the record at byte %zu was appended when the "
                     "file was synced up to byte %zu, so this is not a "
                     "crash's unfinished write; %zu records before it are "
                     "good. Start with --journal-truncate to keep those and "
                     "drop everything from byte %zu on", j->path,
                     r.bad_offset, r.witness, r.witness_upto, r.records,
                     r.bad_offset);
            return -1;
        }
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
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: damaged record at byte "
                    "%zu; --journal-truncate: %zu bytes from there on "
                    "dropped", j->path, r.bad_offset, len - r.bad_offset);
        break;
    case JSCAN_TORN:
        if (r.zero_tail) {      /* the space reserved ahead: nothing lost */
            JOURNAL_LOG(j, LOG_LEVEL_DEBUG, "journal %s: %zu bytes of "
                        "space reserved ahead (zeros) after the last record "
                        "cut", j->path, len - r.good_end);
            break;
        }
        if (r.version == JREC_VERSION_V1) {
            JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: torn tail at byte "
                        "%zu (%zu bytes of an unfinished last record) cut",
                        j->path, r.bad_offset, len - r.bad_offset);
            break;
        }
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: torn tail at byte %zu "
                    "cut: %zu bytes of records (%zu whole among them) "
                    "written after the last sync and left unfinished or out "
                    "of order by a crash, which no later record says were "
                    "durable; then %zu bytes of zeros (space reserved ahead)",
                    j->path, r.bad_offset, r.tail_data, r.tail_whole,
                    len - r.bad_offset - r.tail_data);
        break;
    case JSCAN_CLEAN:
        break;
    }
    j->version = r.version;
    j->mark_due = r.version == JREC_VERSION && r.data_end > r.attested;
    JOURNAL_LOG(j, LOG_LEVEL_INFO, "journal %s: recovered %zu records (%zu "
                "ADD, %zu DELETE), %zu people, %zu bytes; fsync %s%s", j->path,
                r.records, r.adds, r.deletes, people, r.good_end,
                journal_fsync_name(j->fsync), r.version == JREC_VERSION_V1 ?
                "; format 1 until the next compaction" : "");
    return (long long)r.good_end;
}

/* Reads j's file (opened and locked, journal_owner_open) whole into *img
 * (the caller's to free), a new file given its header first. Returns 0,
 * or -1 after writing why into err (-ENOMEM when memory ran out). */
/* fsync of the directory that holds path: 0 or the errno. */
static int sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    int fd, rc = 0;

    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    if (fsync(fd))
        rc = errno;
    close(fd);
    return rc;
}

static int open_image(struct journal *j, const char *path,
                      unsigned char **img, size_t *len,
                      char *err, size_t errlen)
{
    int rc, fd = j->fd;

    if ((rc = read_all(fd, img, len)) == ENOMEM) {
        struct stat sb;
        snprintf(err, errlen, "%s: out of memory reading it (%lld bytes) "
                 "before replaying any record; the journal is untouched: "
                 "start again with more memory", path,
                 fstat(fd, &sb) ? -1LL : (long long)sb.st_size);
        return -ENOMEM;
    }
    if (rc) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(rc));
        return -1;
    }
    if (*len == 0) {            /* a new journal */
        unsigned char h[JREC_HEADER_LEN];
        jrec_header_write(h);
        if ((rc = journal_pwrite_all(fd, h, sizeof(h), 0)) ||
            (fdatasync(fd) && (rc = errno))) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(rc));
            return -1;
        }
        /* The new file's name must be durable too, before any record in
         * it is acknowledged: a power loss could otherwise take the whole
         * file with it, synced records and all. */
        if ((rc = sync_parent_dir(j->real_path))) {
            snprintf(err, errlen, "cannot sync the directory of %s: %s",
                     path, strerror(rc));
            return -1;
        }
        free(*img);
        if (!(*img = journal_malloc(JALLOC_OPEN, sizeof(h)))) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        memcpy(*img, h, sizeof(h));
        *len = sizeof(h);
        JOURNAL_LOG(j, LOG_LEVEL_INFO, "journal %s: new", path);
    }
    return 0;
}

/* Appending resumes at end: the first chunk of space reserved there. A
 * failure (a full disk) is logged, not fatal: writes are refused until a
 * later reservation succeeds. The reservation's sync makes the records
 * replayed durable (after kill -9 they may have been in the page cache
 * only), so the records appended next claim all of them. */
static void reserve_first(struct journal *j, const char *path, long long end)
{
    int rc;

    j->accepted_end = j->written_end = j->reserved_end = (uint64_t)end;
    j->synced_end = JREC_HEADER_LEN;
    rc = journal_reserve_chunk(j->fd, j->reserved_end);
    if (rc) {
        j->reserve_error = rc;
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: cannot reserve space: "
                    "%s; writes are refused until there is room", path,
                    strerror(rc));
        if (fdatasync(j->fd) == 0)
            j->synced_end = (uint64_t)end;
    } else {
        j->reserved_end += JOURNAL_CHUNK;
        j->synced_end = (uint64_t)end;
    }
}

/* Tells the compactor to return, and waits until it has; no compaction
 * may be under way (stop_compaction). */
static void stop_compactor(struct journal *j)
{
    pthread_mutex_lock(&j->lock);
    j->compactor_stop = 1;
    pthread_cond_signal(&j->compact_work);
    pthread_mutex_unlock(&j->lock);
    pthread_join(j->compactor, NULL);
}

/* The two buffers, j->lock and its conditions, the compactor thread
 * (asleep until a compaction) and the flusher thread. Returns 0, or -1
 * after writing why into err, -ENOMEM when memory ran out (the buffers,
 * if any, are left for the caller to free). */
static int start_threads(struct journal *j, char *err, size_t errlen)
{
    int rc;

    for (int i = 0; i < 2; i++)
        if (!(j->buf[i].data = journal_malloc(JALLOC_OPEN, JOURNAL_BUF))) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->work, &ca);
    pthread_cond_init(&j->progress, NULL);
    pthread_cond_init(&j->compact_work, NULL);
    pthread_condattr_destroy(&ca);
    rc = pthread_create(&j->compactor, NULL, journal_compactor_main, j);
    if (rc) {
        snprintf(err, errlen, "cannot start the journal's compaction "
                 "thread: %s", strerror(rc));
        goto err;
    }
    rc = pthread_create(&j->flusher, NULL, journal_flusher_main, j);
    if (rc) {
        snprintf(err, errlen, "cannot start the journal thread: %s",
                 strerror(rc));
        stop_compactor(j);
        goto err;
    }
    return 0;
err:
    pthread_cond_destroy(&j->work);
    pthread_cond_destroy(&j->progress);
    pthread_cond_destroy(&j->compact_work);
    pthread_mutex_destroy(&j->lock);
    return -1;
}

struct journal *journal_open(const char *path, enum journal_fsync fsync,
                             int truncate, struct store *st,
                             char *err, size_t errlen)
{
    struct journal *j;
    unsigned char *img = NULL;
    size_t len = 0;
    int rc = -ENOMEM;

    journal_seams_init(path);   /* the test build's only */
    j = journal_calloc(JALLOC_OPEN, 1, sizeof(*j));
    if (!j || !(j->path = journal_malloc(JALLOC_OPEN, strlen(path) + 1))) {
        snprintf(err, errlen, "out of memory");
        goto err;
    }
    strcpy(j->path, path);
    j->fd = -1;
    j->fsync = fsync;
    j->wake = JOURNAL_WAKE_SIGNAL;
    j->store = st;
    j->compact_min = j->compact_next = JOURNAL_COMPACT_MIN;
    hist_init(&j->fsync_ns);
    hist_init(&j->wake_ns);
    /* The lock first: a second server must neither read nor touch
     * PATH.compact, which the owner may be writing. */
    rc = -1;                    /* what refuses here is no want of memory */
    if ((j->fd = journal_owner_open(path, &j->real_path, err, errlen)) < 0)
        goto err;
    rc = -ENOMEM;
    j->compact_path = journal_malloc(JALLOC_OPEN, strlen(j->real_path) +
                                     sizeof(JOURNAL_COMPACT_SUFFIX));
    if (!j->compact_path) {
        snprintf(err, errlen, "out of memory");
        goto err;
    }
    strcpy(stpcpy(j->compact_path, j->real_path), JOURNAL_COMPACT_SUFFIX);
    struct stat lsb;
    if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
        JOURNAL_LOG(j, LOG_LEVEL_INFO, "journal %s: a symbolic link to %s, "
                    "the file a compaction replaces (the link stays)", path,
                    j->real_path);
    if ((rc = open_image(j, path, &img, &len, err, errlen)) < 0)
        goto err;
    long long end = replay(j, img, len, truncate, err, errlen);
    free(img);
    img = NULL;
    if (end < 0) {
        rc = (int)end;
        goto err;
    }
    rc = -1;
    if ((size_t)end < len && (ftruncate(j->fd, end) || fdatasync(j->fd))) {
        snprintf(err, errlen, "cannot cut %s at byte %lld: %s", path, end,
                 strerror(errno));
        goto err;
    }
    if (unlink(j->compact_path) == 0)
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: removed %s, left by a "
                    "compaction that did not finish; the journal itself is "
                    "whole", path, j->compact_path);
    reserve_first(j, path, end);
    if ((rc = start_threads(j, err, errlen)) < 0)
        goto err;
    st->journal = j;
    return j;
err:
    free(img);
    if (j) {
        if (j->fd >= 0)
            close(j->fd);
        free(j->buf[0].data);
        free(j->buf[1].data);
        free(j->compact_path);
        free(j->real_path);
        free(j->path);
        free(j);
    }
    errno = rc == -ENOMEM ? ENOMEM : EINVAL;    /* journal.h */
    return NULL;
}

void journal_set_compact_min(struct journal *j, uint64_t bytes)
{
    pthread_mutex_lock(&j->lock);
    j->compact_min = j->compact_next = bytes;
    pthread_mutex_unlock(&j->lock);
}

/* A compaction under way is abandoned (before its switch) or finished
 * (after); either way the journal is whole. The flusher still runs: the
 * switch is its. Then the compactor returns. No session may start
 * another meanwhile (journal_close's rule). */
static void stop_compaction(struct journal *j)
{
    pthread_mutex_lock(&j->lock);
    j->compact_abort = 1;
    while (j->compact_state != JCOMPACT_IDLE)
        pthread_cond_wait(&j->progress, &j->lock);
    pthread_mutex_unlock(&j->lock);
    stop_compactor(j);
}

/* After the flusher's last round, which synced every record: a MARK that
 * claims all of them durable, so that replay refuses damage to the last
 * ones too (without it, a bad record among them that no later record
 * claims is taken for a torn write and cut). Version 2 only, when records
 * came after the last claim; not after a failure. No lock: the flusher
 * and the compactor have returned. A failed write only loses the claim. */
static void close_mark(struct journal *j)
{
    unsigned char m[JREC_MARK_LEN];

    if (j->version != JREC_VERSION || !j->mark_due)
        return;
    jrec_encode_mark(m, jrec_back(j->written_end, j->synced_end));
    if (journal_pwrite_all(j->fd, m, sizeof(m), (off_t)j->written_end) == 0) {
        j->written_end += sizeof(m);
        j->mark_due = 0;
    }
}

void journal_close(struct journal *j)
{
    if (!j)
        return;
    stop_compaction(j);
    pthread_mutex_lock(&j->lock);
    j->stopping = 1;
    pthread_cond_signal(&j->work);
    pthread_mutex_unlock(&j->lock);
    pthread_join(j->flusher, NULL);
    /* A MARK after the last records, then the space reserved beyond the
     * end given back, and both synced. */
    if (!j->broken) {
        close_mark(j);
        if (ftruncate(j->fd, (off_t)j->written_end) == 0)
            fdatasync(j->fd);
    }
    close(j->fd);
    j->store->journal = NULL;
    JOURNAL_LOG(j, LOG_LEVEL_INFO, "journal %s: closed at %llu bytes%s",
                j->path, (unsigned long long)j->written_end,
                j->broken ? " (read-only after a failure)" : "");
    pthread_cond_destroy(&j->work);
    pthread_cond_destroy(&j->progress);
    pthread_cond_destroy(&j->compact_work);
    pthread_mutex_destroy(&j->lock);
    free(j->buf[0].data);
    free(j->buf[1].data);
    free(j->compact_buf.data);
    free(j->compact_path);
    free(j->real_path);
    free(j->path);
    free(j);
}
