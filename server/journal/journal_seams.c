/* journal_seams.c -- the journal's test seams (journal_seams.h), compiled
 * only into the test build of the servers ($(BUILD)/seams/, with
 * -DSSN_TEST_SEAMS), never into bin/ or make install.
 *
 * The state is set once by journal_seams_init, before the journal's
 * threads start, then only read, but for fail_seen, which the one round
 * under way counts with no lock held, like its I/O itself (rounds run one
 * at a time under j->flushing, so each sees the count the last one left),
 * and the allocation counts, atomic: sessions (the snapshot, the rewrite
 * buffer), the compactor and the flusher allocate, each under its own
 * locks.
 */
#ifndef SSN_TEST_SEAMS
#error "journal_seams.c is the test build's only (-DSSN_TEST_SEAMS)"
#endif

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "journal_int.h"
#include "journal_seams.h"
#include "log.h"
#include "timeutil.h"

#define SEAM_TORN_BLOCK  512    /* torn:N skips the round's part of this
                                   much of the file: a disk's sector */
#define SEAM_SLOW_MAX_MS 60000  /* slow:N's largest N */

static struct {
    int crash_armed;
    enum jcrash crash_at;
    enum { FAIL_NONE, FAIL_WRITE, FAIL_SYNC, FAIL_SLOW, FAIL_TORN,
           FAIL_ALLOC, FAIL_REWRITE, FAIL_SWITCH,
           FAIL_DELIVER } fail_op;  /* the first four only */
    uint64_t fail_at;           /* from this call on (or slow's delay) */
    uint64_t fail_seen;         /* fail_op's calls so far */
    uint64_t alloc_at;          /* this allocation fails (0: none) */
    uint64_t rewrite_at;        /* this one of the rewrite buffer's */
    uint64_t switch_ms;         /* the switch this late (0: not late) */
    uint64_t deliver_ms;        /* each delivered reply let go this late */
    _Atomic uint64_t allocs;    /* allocations so far */
    _Atomic uint64_t rewrites;  /* the rewrite buffer's so far */
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

/* SSN_TEST_JOURNAL_FAIL's operations, by the names its items use. */
static const char *const fail_ops[] = {
    [FAIL_WRITE] = "write", [FAIL_SYNC] = "sync", [FAIL_SLOW] = "slow",
    [FAIL_TORN] = "torn", [FAIL_ALLOC] = "alloc", [FAIL_REWRITE] = "rewrite",
    [FAIL_SWITCH] = "switch", [FAIL_DELIVER] = "deliver",
};

/* One item of SSN_TEST_JOURNAL_FAIL, "OP:N" (the n bytes at v; N decimal,
 * from 1, no sign or leading zero), into *op and *at. 0, or -1 when it is
 * not one. */
static int fail_item(const char *v, size_t n, int *op, uint64_t *at)
{
    char item[48], *end;

    if (n >= sizeof(item))
        return -1;
    memcpy(item, v, n);
    item[n] = '\0';
    for (*op = FAIL_WRITE; *op <= FAIL_DELIVER; (*op)++) {
        size_t k = strlen(fail_ops[*op]);
        if (strncmp(item, fail_ops[*op], k) != 0 || item[k] != ':')
            continue;
        const char *d = item + k + 1;
        if (*d < '1' || *d > '9')
            return -1;
        errno = 0;
        unsigned long long u = strtoull(d, &end, 10);
        if (errno || *end || ((*op == FAIL_SLOW || *op >= FAIL_SWITCH) &&
                              u > SEAM_SLOW_MAX_MS))
            return -1;
        *at = u;
        return 0;
    }
    return -1;
}

/* SSN_TEST_JOURNAL_FAIL, for tests/test-journal-faults.sh,
 * test-journal-compact.sh and tools/soak-journal: items "OP:N" separated
 * by commas. "sync:N" or "write:N" makes the N-th sync (or write) of a
 * round's records fail with EIO, as a failing disk would, and every one
 * after it (the journal, read-only by then, does no more). A sync that
 * fails this way follows a real write, so its records still reach the
 * file; a write that fails writes nothing. "slow:N" makes every sync of
 * records, and a compaction's sync of its snapshot, take N ms longer, and
 * succeed: replies held that long, COMPACT answered that late
 * (test-journal-events.sh). "torn:N" writes the N-th round of records
 * out of order, as a power loss can leave the last, unsynced write: its
 * part of the file's first 512-byte block is skipped (the zeros reserved
 * there stay), the rest written, and the server killed (SIGKILL) before
 * that round is synced or acknowledged (test-journal-torn.sh). One of
 * these four at most. "alloc:N" makes
 * the N-th allocation the journal makes (journal_malloc, counted from the
 * start of journal_open) fail with ENOMEM, that one only; "rewrite:N" the
 * N-th of the rewrite buffer's (where a compaction keeps the records
 * appended after its snapshot). "switch:N" makes the flusher wait N ms
 * between a compaction's new file being ready and its switch, so that
 * appends meet that window (tests/test-journal-nomem.sh). "deliver:N"
 * makes the thread that sent a round's held replies wait N ms, lock held,
 * before it lets each one's owner go (journal_reply.c), so that a session
 * that ends meanwhile meets that window (tests/test-journal.sh). Anything else,
 * and the whole value is logged and ignored, so that a typo is not taken
 * for a test that passed. */
static void fail_from_env(const char *path)
{
    const char *v = getenv("SSN_TEST_JOURNAL_FAIL");
    uint64_t at[FAIL_DELIVER + 1] = { 0 };
    int slot = FAIL_NONE, op;

    if (!v)
        return;
    for (const char *p = v;; p++) {
        size_t n = strcspn(p, ",");
        uint64_t a;
        if (fail_item(p, n, &op, &a) < 0 || at[op] ||
            (op <= FAIL_TORN && slot != FAIL_NONE)) {
            log_msg(LOG_LEVEL_WARN, "journal %s: SSN_TEST_JOURNAL_FAIL="
                    "\"%.60s\" ignored: the test seam takes sync:N, write:N, "
                    "slow:N or torn:N, alloc:N, rewrite:N, switch:N, deliver:N, "
                    "N from 1, "
                    "separated by commas", path, v);
            return;
        }
        at[op] = a;
        if (op <= FAIL_TORN)
            slot = op;
        p += n;
        if (!*p)
            break;
    }
    for (op = FAIL_WRITE; op <= FAIL_DELIVER; op++) {
        unsigned long long a = at[op];
        if (!a)
            continue;
        if (op == FAIL_SLOW)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=%s:%llu: every sync takes %llu ms longer",
                    path, fail_ops[op], a, a);
        else if (op == FAIL_TORN)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=torn:%llu: round of records number %llu is written "
                    "torn (its first block skipped), then the server is "
                    "killed", path, a, a);
        else if (op == FAIL_ALLOC)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=alloc:%llu: the journal's allocation number %llu "
                    "fails with ENOMEM", path, a, a);
        else if (op == FAIL_REWRITE)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=rewrite:%llu: the rewrite buffer's allocation "
                    "number %llu fails with ENOMEM", path, a, a);
        else if (op == FAIL_SWITCH)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=switch:%llu: a compaction's switch waits %llu ms "
                    "once its new file is ready", path, a, a);
        else if (op == FAIL_DELIVER)
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=deliver:%llu: each held reply sent is let go "
                    "%llu ms late", path, a, a);
        else
            log_msg(LOG_LEVEL_WARN, "journal %s: test seam SSN_TEST_JOURNAL_"
                    "FAIL=%s:%llu: the %ss of records fail with EIO from "
                    "number %llu on", path, fail_ops[op], a, fail_ops[op], a);
    }
    if (slot != FAIL_NONE) {
        seams.fail_op = slot;
        seams.fail_at = at[slot];
    }
    seams.alloc_at = at[FAIL_ALLOC];
    seams.rewrite_at = at[FAIL_REWRITE];
    seams.switch_ms = at[FAIL_SWITCH];
    seams.deliver_ms = at[FAIL_DELIVER];
}

void journal_seams_init(const char *path)
{
    seams.crash_armed = 0;
    seams.fail_op = FAIL_NONE;
    seams.fail_at = seams.fail_seen = 0;
    seams.alloc_at = seams.rewrite_at = seams.switch_ms = 0;
    seams.deliver_ms = 0;
    atomic_store(&seams.allocs, 0);
    atomic_store(&seams.rewrites, 0);
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

int journal_seam_alloc_fails(enum jalloc site)
{
    uint64_t n = atomic_fetch_add(&seams.allocs, 1) + 1;

    if (n == seams.alloc_at)
        return 1;
    if (site != JALLOC_REWRITE)
        return 0;
    return atomic_fetch_add(&seams.rewrites, 1) + 1 == seams.rewrite_at;
}

void journal_seam_switch_delay(void)
{
    if (seams.switch_ms)
        time_sleep_ns(seams.switch_ms * TIME_NS_PER_MS);
}

void journal_seam_deliver_delay(void)
{
    if (seams.deliver_ms)
        time_sleep_ns(seams.deliver_ms * TIME_NS_PER_MS);
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
