/* journal_replay.c -- the journal read back into the empty store at
 * start-up (journal_open.c calls it before anyone can connect): every
 * record applied, a torn tail cut by the claim rule, damage to durable
 * bytes refused (docs/DURABILITY.md, "Recovery at start-up"). */
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
        m.hint.after_last = 1;      /* compaction writes in tree order */
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

/* A damaged record (JSCAN_DAMAGED): 0 when --journal-truncate cuts it
 * (logged), else -1 after writing why into err; -ENOMEM when it was no
 * damage but this process running out of memory, which nothing cuts. */
static int on_damaged(struct journal *j, const struct jscan *r, size_t len,
                      size_t people, int truncate, char *err, size_t errlen)
{
    if (r->cb_error == -ENOMEM) {
        snprintf(err, errlen, "%s: out of memory after replaying %zu "
                 "records (byte %zu of %zu, %zu people); the journal is "
                 "untouched: start again with more memory "
                 "(--journal-truncate would not help)", j->path,
                 r->records, r->bad_offset, len, people);
        return -ENOMEM;
    }
    if (!truncate && r->witness) {
        snprintf(err, errlen, "%s: damaged record at byte %zu (bad "
                 "length, checksum or contents), in bytes that had been "
                 "durable: the record at byte %zu was appended when the "
                 "file was synced up to byte %zu, so this is not a "
                 "crash's unfinished write; %zu records before it are "
                 "good. Start with --journal-truncate to keep those and "
                 "drop everything from byte %zu on", j->path,
                 r->bad_offset, r->witness, r->witness_upto, r->records,
                 r->bad_offset);
        return -1;
    }
    if (!truncate) {
        snprintf(err, errlen, "%s: damaged record at byte %zu (%s) "
                 "with records after it; %zu records before it are "
                 "good. Start with --journal-truncate to keep those "
                 "and drop everything from byte %zu on", j->path,
                 r->bad_offset, r->cb_error ? "it contradicts the "
                 "records before it" : "bad length, checksum or "
                 "contents", r->records, r->bad_offset);
        return -1;
    }
    JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: damaged record at byte "
                "%zu; --journal-truncate: %zu bytes from there on "
                "dropped", j->path, r->bad_offset, len - r->bad_offset);
    return 0;
}

/* A torn tail (JSCAN_TORN), cut: what it was, logged. */
static void log_torn(struct journal *j, const struct jscan *r, size_t len)
{
    if (r->zero_tail) {         /* the space reserved ahead: nothing lost */
        JOURNAL_LOG(j, LOG_LEVEL_DEBUG, "journal %s: %zu bytes of "
                    "space reserved ahead (zeros) after the last record "
                    "cut", j->path, len - r->good_end);
    } else if (r->version == JREC_VERSION_V1) {
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: torn tail at byte "
                    "%zu (%zu bytes of an unfinished last record) cut",
                    j->path, r->bad_offset, len - r->bad_offset);
    } else {
        JOURNAL_LOG(j, LOG_LEVEL_WARN, "journal %s: torn tail at byte %zu "
                    "cut: %zu bytes of records (%zu whole among them) "
                    "written after the last sync and left unfinished or "
                    "out of order by a crash, which no later record says "
                    "were durable; then %zu bytes of zeros (space reserved "
                    "ahead)", j->path, r->bad_offset, r->tail_data,
                    r->tail_whole, len - r->bad_offset - r->tail_data);
    }
}

/* Replays the image into st, and decides what a bad record means (the
 * rule of the file's version, journal_rec.c). Sets the file's version and
 * whether its last records wait for a MARK. Returns the offset where
 * appending resumes, or -1 after writing why into err; -ENOMEM when memory
 * ran out, the file untouched. */
long long journal_replay(struct journal *j, const unsigned char *img,
                         size_t len, int truncate, char *err, size_t errlen)
{
    struct jscan r;
    int rc;

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
        if ((rc = on_damaged(j, &r, len, people, truncate, err, errlen)))
            return rc;
        break;
    case JSCAN_TORN:
        log_torn(j, &r, len);
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
