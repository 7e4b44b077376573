/* journal_seams.c -- the journal's test seams (journal_seams.h), compiled
 * only into the test build of the servers ($(BUILD)/seams/, with
 * -DSSN_TEST_SEAMS), never into bin/ or make install.
 *
 * The state is set once by journal_seams_init, before the journal's
 * threads start, then only read, but for fail_seen, which the one round
 * under way counts with no lock held, like its I/O itself (rounds run one
 * at a time under j->flushing, so each sees the count the last one left).
 */
#ifndef SSN_TEST_SEAMS
#error "journal_seams.c is the test build's only (-DSSN_TEST_SEAMS)"
#endif

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "journal_int.h"
#include "journal_seams.h"
#include "log.h"
#include "timeutil.h"

#define SEAM_SLOW_MAX_MS 60000  /* slow:N's largest N */
#define SEAM_TORN_BLOCK  512    /* torn:N skips the round's part of this
                                   much of the file: a disk's sector */

static struct {
    int crash_armed;
    enum jcrash crash_at;
    enum { FAIL_NONE, FAIL_WRITE, FAIL_SYNC, FAIL_SLOW, FAIL_TORN } fail_op;
    uint64_t fail_at;           /* from this call on (or slow's delay) */
    uint64_t fail_seen;         /* fail_op's calls so far */
} seams;

/* SSN_TEST_COMPACT_CRASH: where a test makes a compaction crash. */
static void crash_from_env(void)
{
    static const char *const names[] = {
        [JCRASH_SNAPSHOT] = "snapshot", [JCRASH_WRITTEN] = "written",
        [JCRASH_RENAMED] = "renamed", [JCRASH_SWITCHED] = "switched",
    };
    const char *v = getenv("SSN_TEST_COMPACT_CRASH");

    for (int i = JCRASH_SNAPSHOT; v && i <= JCRASH_SWITCHED; i++)
        if (strcmp(v, names[i]) == 0) {
            seams.crash_armed = 1;
            seams.crash_at = (enum jcrash)i;
        }
}

/* SSN_TEST_JOURNAL_FAIL, for tests/test-journal-faults.sh: "sync:N" or
 * "write:N" (N decimal, from 1, no sign or leading zero) makes the N-th
 * sync (or write) of a round's records fail with EIO, as a failing disk
 * would, and every one after it (the journal, read-only by then, does no
 * more). A sync that fails this way follows a real write, so its records
 * still reach the file; a write that fails writes nothing. "slow:N" makes
 * every sync of records, and a compaction's sync of its snapshot, take N
 * ms longer, and succeed: replies held that long, COMPACT answered that
 * late (test-journal-events.sh). "torn:N" writes the N-th round of
 * records out of order, as a power loss can leave the last, unsynced
 * write: its part of the file's first 512-byte block is skipped (the
 * zeros reserved there stay), the rest written, and the server killed
 * (SIGKILL) before that round is synced or acknowledged
 * (test-journal-torn.sh). Anything else is logged and ignored, so that a
 * typo is not taken for a test that passed. */
static void fail_from_env(const char *path)
{
    static const char *const ops[] = {
        [FAIL_WRITE] = "write", [FAIL_SYNC] = "sync", [FAIL_SLOW] = "slow",
        [FAIL_TORN] = "torn",
    };
    const char *v = getenv("SSN_TEST_JOURNAL_FAIL");

    if (!v)
        return;
    for (int op = FAIL_WRITE; op <= FAIL_TORN; op++) {
        size_t n = strlen(ops[op]);
        if (strncmp(v, ops[op], n) != 0 || v[n] != ':')
            continue;
        const char *d = v + n + 1;
        char *end;
        if (*d < '1' || *d > '9')
            break;
        errno = 0;
        unsigned long long at = strtoull(d, &end, 10);
        if (errno || *end || (op == FAIL_SLOW && at > SEAM_SLOW_MAX_MS))
            break;
        seams.fail_op = op;
        seams.fail_at = at;
        if (op == FAIL_SLOW)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=%s: every sync takes %llu ms longer",
                    path, v, at);
        else if (op == FAIL_TORN)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=%s: round of records number %llu is written torn "
                    "(its first block skipped), then the server is killed",
                    path, v, at);
        else
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=%s: the %ss of records fail with EIO from number "
                    "%llu on", path, v, ops[op], at);
        return;
    }
    log_msg(LOG_LEVEL_WARN, "journal %s: SSN_TEST_JOURNAL_FAIL=\"%.40s\" "
            "ignored: the test seam takes sync:N, write:N, slow:N or torn:N, "
            "N from 1", path, v);
}

void journal_seams_init(const char *path)
{
    memset(&seams, 0, sizeof(seams));
    crash_from_env();
    fail_from_env(path);
}

void journal_seam_crash(enum jcrash at)
{
    if (seams.crash_armed && seams.crash_at == at)
        raise(SIGKILL);
}

int journal_seam_fail(enum jfail op)
{
    if (seams.fail_op == FAIL_SLOW && op != JFAIL_WRITE) {
        time_sleep_ns(seams.fail_at * TIME_NS_PER_MS);
        return 0;
    }
    if (op == JFAIL_COMPACT_SYNC)
        return 0;
    if ((op == JFAIL_WRITE && seams.fail_op != FAIL_WRITE) ||
        (op == JFAIL_SYNC && seams.fail_op != FAIL_SYNC))
        return 0;
    return ++seams.fail_seen >= seams.fail_at;
}

void journal_seam_torn(int fd, const unsigned char *p, size_t n,
                       uint64_t off)
{
    if (seams.fail_op != FAIL_TORN || ++seams.fail_seen != seams.fail_at)
        return;
    /* The round's part of its first block is skipped, its later blocks
     * written: the disk got the later sectors of the last write and not
     * an earlier one. A round inside one block loses its first half. */
    size_t skip = SEAM_TORN_BLOCK - off % SEAM_TORN_BLOCK;
    if (skip >= n)
        skip = n / 2;
    int rc = journal_pwrite_all(fd, p + skip, n - skip, (off_t)(off + skip));
    /* Straight to stderr: the log's thread would not write before the
     * kill. */
    dprintf(STDERR_FILENO, "journal test seam torn:%llu: bytes %llu-%llu "
            "of the round at %llu-%llu written (%s), the rest left as it "
            "was; SIGKILL\n", (unsigned long long)seams.fail_at,
            (unsigned long long)(off + skip), (unsigned long long)(off + n),
            (unsigned long long)off, (unsigned long long)(off + n),
            rc ? strerror(rc) : "ok");
    raise(SIGKILL);
}
