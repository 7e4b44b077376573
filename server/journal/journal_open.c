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

/* Reads j's file (opened and locked, journal_owner_open) whole into *img
 * (the caller's to free), a new file given its header first. Returns 0,
 * or -1 after writing why into err (-ENOMEM when memory ran out). */
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
    uint64_t len = 0;

    j->accepted_end = (uint64_t)end;    /* one at a time: clang refuses */
    j->written_end = (uint64_t)end;     /* a chain through _Atomic ones */
    j->reserved_end = (uint64_t)end;
    j->synced_end = JREC_HEADER_LEN;
    int rc = journal_reserve_chunk(j->fd, j->reserved_end,
                                   RESERVE_WRITTEN(j), &len);
    if (rc) {
        j->reserve_error = rc;
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: cannot reserve space: "
                    "%s; writes are refused until there is room", path,
                    strerror(rc));
        if (fdatasync(j->fd) == 0)
            j->synced_end = (uint64_t)end;
    } else {
        j->reserved_end += len;
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
    pthread_mutex_init(&j->alock, NULL);
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
    pthread_mutex_destroy(&j->alock);
    pthread_mutex_destroy(&j->lock);
    return -1;
}

/* A compaction's leftover removed, then the file of j (opened and locked)
 * read, replayed into the store and cut where replay stopped. Returns the
 * offset where appending resumes, or -1 after writing why into err
 * (-ENOMEM when memory ran out). */
static long long recover(struct journal *j, const char *path, int truncate,
                         char *err, size_t errlen)
{
    unsigned char *img = NULL;
    size_t len = 0;
    struct stat lsb;
    int rc;

    if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
        JOURNAL_LOG(j, LOG_LEVEL_INFO, "journal %s: a symbolic link to %s, "
                    "the file a compaction replaces (the link stays)", path,
                    j->real_path);
    if ((rc = journal_owner_clear(j->compact_path)) == 0)
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: removed %s, left by a "
                    "compaction that did not finish; the journal itself is "
                    "whole", path, j->compact_path);
    else if (rc == EBUSY) {
        snprintf(err, errlen, "%s is another server's journal, and this "
                 "one's compactions need that name: give one of them "
                 "another", j->compact_path);
        return -1;
    }
    if ((rc = open_image(j, path, &img, &len, err, errlen)) < 0) {
        free(img);
        return rc;
    }
    long long end = journal_replay(j, img, len, truncate, err, errlen);
    free(img);
    if (end < 0)
        return end;
    if ((size_t)end < len && (ftruncate(j->fd, end) || fdatasync(j->fd))) {
        snprintf(err, errlen, "cannot cut %s at byte %lld: %s", path, end,
                 strerror(errno));
        return -1;
    }
    return end;
}

/* 1, with why in err, when path's name cannot be a journal's: it ends
 * in ".compact" (the owner of the journal it would be the compaction file
 * of removes such a file at its start and makes one at each compaction),
 * or it is too long to take that suffix, so never compacted. */
static int compact_named(const char *path, char *err, size_t errlen)
{
    size_t n = strlen(path), k = strlen(JOURNAL_COMPACT_SUFFIX);
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    if (strlen(base) + k > NAME_MAX) {
        snprintf(err, errlen, "%s: a journal's file name may be at most %zu "
                 "bytes, to leave room for its compaction file's %s", path,
                 NAME_MAX - k, JOURNAL_COMPACT_SUFFIX);
        return 1;
    }
    if (n < k || strcmp(path + n - k, JOURNAL_COMPACT_SUFFIX))
        return 0;
    snprintf(err, errlen, "%s: a journal's name may not end in %s, the "
             "name a compaction gives its new file", path,
             JOURNAL_COMPACT_SUFFIX);
    return 1;
}

struct journal *journal_open(const char *path, enum journal_fsync fsync,
                             int truncate, struct store *st,
                             char *err, size_t errlen)
{
    struct journal *j;
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
    if (compact_named(path, err, errlen) ||
        (j->fd = journal_owner_open(path, &j->real_path, err, errlen)) < 0 ||
        compact_named(j->real_path, err, errlen))
        goto err;
    rc = -ENOMEM;
    j->compact_path = journal_malloc(JALLOC_OPEN, strlen(j->real_path) +
                                     sizeof(JOURNAL_COMPACT_SUFFIX));
    if (!j->compact_path) {
        snprintf(err, errlen, "out of memory");
        goto err;
    }
    strcpy(stpcpy(j->compact_path, j->real_path), JOURNAL_COMPACT_SUFFIX);
    long long end = recover(j, path, truncate, err, errlen);
    if (end < 0) {
        rc = (int)end;
        goto err;
    }
    reserve_first(j, path, end);
    if ((rc = start_threads(j, err, errlen)) < 0)
        goto err;
    st->journal = j;
    return j;
err:
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
    pthread_mutex_destroy(&j->alock);
    pthread_mutex_destroy(&j->lock);
    free(j->buf[0].data);
    free(j->buf[1].data);
    free(j->compact_buf.data);
    free(j->compact_path);
    free(j->real_path);
    free(j->path);
    free(j);
}
