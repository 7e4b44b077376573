/* journal_seams.h -- the journal's test seams, SQLite's SQLITE_TEST model:
 * a compaction killed at a chosen step (SSN_TEST_COMPACT_CRASH), a write
 * or sync of a round's records that fails with EIO or is slow, a round
 * written torn, out of order, before the server is killed, and the N-th
 * allocation the journal makes failing with ENOMEM
 * (SSN_TEST_JOURNAL_FAIL), for tests/test-journal-*.sh and
 * tools/soak-journal.
 *
 * They exist only in the test build of the servers, which the Makefile
 * makes with -DSSN_TEST_SEAMS into $(BUILD)/seams/ssnserver-MODE (never
 * bin/, never make install): there journal_seams.c reads the variables
 * at open and the hooks below act. Without the macro, in every installed
 * server and in the unit tests, each hook is an inline function that does
 * nothing, journal_seams.c is not compiled, and no SSN_TEST_ string is in
 * the binary (tests/test-seams.sh checks it). Only the .c files that
 * include this header are compiled twice, so no other file may use it
 * (nor include it from a header).
 *
 * The seams' state is process-wide, as the environment it comes from; a
 * server opens one journal.
 */
#ifndef SSN_JOURNAL_SEAMS_H
#define SSN_JOURNAL_SEAMS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The steps of a compaction where SSN_TEST_COMPACT_CRASH=NAME kills the
 * server (SIGKILL). */
enum jcrash {
    JCRASH_SNAPSHOT,            /* "snapshot": half the snapshot written */
    JCRASH_WRITTEN,             /* "written": the new file whole, synced */
    JCRASH_RENAMED,             /* "renamed": the directory not synced */
    JCRASH_SWITCHED,            /* "switched": the new file is the journal */
};

/* The I/O that SSN_TEST_JOURNAL_FAIL may fail or slow down. */
enum jfail {
    JFAIL_WRITE,                /* the pwrite of a round's records */
    JFAIL_SYNC,                 /* their sync */
    JFAIL_COMPACT_SYNC,         /* a compaction's sync of its snapshot:
                                   only slowed (slow:N), never failed */
};

/* What the journal allocates (journal_malloc below), for the seams that
 * count allocations: "alloc:N" counts them all, "rewrite:N" only the
 * rewrite buffer's. */
enum jalloc {
    JALLOC_OPEN,                /* journal_open's: the journal, its paths,
                                   the file's image, the two buffers */
    JALLOC_SNAPSHOT,            /* a compaction's snapshot */
    JALLOC_REWRITE,             /* the rewrite buffer (compact_buf) */
    JALLOC_SWITCH,              /* the switch: the directory's path */
};

#ifdef SSN_TEST_SEAMS

/* Reads the variables (journal_open, before any thread starts); logs,
 * naming the journal at path, what it armed or why it ignored a value. */
void journal_seams_init(const char *path);

/* SIGKILL when at is the step SSN_TEST_COMPACT_CRASH chose. */
void journal_seam_crash(enum jcrash at);

/* Before a write or sync of a round's records (by the one round under
 * way, no lock held): 1 when it is to fail with EIO instead of being
 * done; a slow:N sync sleeps N ms here first, then is done. */
int journal_seam_fail(enum jfail op);

/* Before the write of a round's n bytes at p, for file offset off (by the
 * one round under way, no lock held): when this is the round torn:N
 * chose, writes its later bytes but not its first block's, and kills the
 * server (SIGKILL) before anything is synced or acknowledged. Returns
 * otherwise. */
void journal_seam_torn(int fd, const unsigned char *p, size_t n,
                       uint64_t off);
/* Before each allocation the journal makes (journal_malloc), from any
 * thread, with or without j->lock: 1 when it is the one to fail. */
int journal_seam_alloc_fails(enum jalloc site);

/* The flusher, once per compaction, when the new file is ready and before
 * it takes the switch, with no lock held: "switch:N" sleeps N ms here, so
 * that a test's appends meet the window before the switch. */
void journal_seam_switch_delay(void);

/* The thread that sent a round's held replies, with j->lock held, as it
 * marks each one sent and before it lets its owner go (held 0): with
 * "deliver:N" it sleeps N ms there, so that a session ending meanwhile
 * meets the window in which it must not free the reply
 * (test-journal.sh's case_settle_delivering). */
void journal_seam_deliver_delay(void);

#else   /* the installed servers: no seam at all */

static inline void journal_seams_init(const char *path) { (void)path; }
static inline void journal_seam_crash(enum jcrash at) { (void)at; }
static inline int journal_seam_fail(enum jfail op) { (void)op; return 0; }
static inline void journal_seam_torn(int fd, const unsigned char *p,
                                     size_t n, uint64_t off)
{
    (void)fd; (void)p; (void)n; (void)off;
}
static inline int journal_seam_alloc_fails(enum jalloc site)
{
    (void)site;
    return 0;
}
static inline void journal_seam_switch_delay(void) { }
static inline void journal_seam_deliver_delay(void) { }

#endif

/* The journal's malloc, calloc and realloc: every allocation of
 * server/journal/ goes through them, so that the test build can fail the
 * N-th one. Without SSN_TEST_SEAMS the test is a constant 0 and each is
 * the plain call. On failure: NULL, errno ENOMEM, p (realloc) untouched. */
static inline void *journal_malloc(enum jalloc site, size_t n)
{
    if (journal_seam_alloc_fails(site)) {
        errno = ENOMEM;
        return NULL;
    }
    return malloc(n);
}

static inline void *journal_calloc(enum jalloc site, size_t n, size_t size)
{
    if (journal_seam_alloc_fails(site)) {
        errno = ENOMEM;
        return NULL;
    }
    return calloc(n, size);
}

static inline void *journal_realloc(enum jalloc site, void *p, size_t n)
{
    if (journal_seam_alloc_fails(site)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

#endif
