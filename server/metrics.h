/* metrics.h -- the server's latency figures beyond the store lock's own:
 * each request's, by command, and the journal's rounds. STATS and
 * /metrics (metrics_http.c) read them; the store lock's wait and hold are
 * in store_lock.c, under the lock they measure.
 *
 * Request latencies are recorded on the request path, by every session on
 * every thread at once, so they go into sets of histograms that one
 * thread at a time owns (a "set": a histogram per command). A session
 * takes a set for a slice of requests (metrics_take) and gives it back at
 * the end of the slice (metrics_give), or before anything that may wait
 * (session.c, ms_give): recording is then a few plain loads and stores
 * into memory no other thread writes, no locked instruction and no shared
 * cache line but the reset epoch, which is read only. Free sets wait in a
 * row of slots (one atomic exchange to take, one compare-and-swap to give
 * back), so there are as many sets as slices ever ran at once between
 * waits, not one per thread, per connection or per session waiting.
 * Readers merge every set under sets_lock with relaxed loads
 * (hist_merge_relaxed).
 *
 * Why not one shared histogram of atomics: two CPUs recording the same
 * command move the histogram's cache lines back and forth on every
 * request; why not one per thread: --io threads has a thread per
 * connection, and a set is 135 KiB.
 *
 * Locks: sets_lock (the list of every set, and the sets beyond the slots)
 * and round_lock (the journal's round histograms) are leaves; the journal
 * records a round with its own lock held (journal->lock -> round_lock).
 */
#ifndef SSN_METRICS_H
#define SSN_METRICS_H

#include <stdint.h>
#include "hist.h"
#include "proto.h"

/* The commands whose latency is measured, from the request's parse to the
 * end of its reply (session.c). */
enum metrics_cmd {
    METRICS_ADD, METRICS_DELETE, METRICS_FIND, METRICS_PRINT, METRICS_COUNT,
    METRICS_CHECK, METRICS_DIGEST, METRICS_STATS, METRICS_TREE,
    METRICS_CMDS
};

/* "add", "delete", ...: the names in STATS (cmd_add_p50_us) and /metrics
 * (command="add"). */
extern const char *const metrics_cmd_names[METRICS_CMDS];

/* The measured command a request is, or -1 (AUTH, HELP, QUIT, COMPACT,
 * STATS RESET, errors). */
static inline int metrics_cmd_of(enum proto_cmd c)
{
    switch (c) {
    case PROTO_ADD:    return METRICS_ADD;
    case PROTO_DELETE: return METRICS_DELETE;
    case PROTO_FIND:   return METRICS_FIND;
    case PROTO_PRINT:  return METRICS_PRINT;
    case PROTO_COUNT:  return METRICS_COUNT;
    case PROTO_CHECK:  return METRICS_CHECK;
    case PROTO_DIGEST: return METRICS_DIGEST;
    case PROTO_STATS:  return METRICS_STATS;
    case PROTO_TREE:   return METRICS_TREE;
    default:           return -1;
    }
}

struct metrics_set;

/* A set for the calling thread's slice of requests, or NULL when none can
 * be had (no memory: the slice's requests go unrecorded). Allocates only
 * when every set made so far is taken. */
struct metrics_set *metrics_take(void);

/* Gives m back (NULL: nothing). m must not be used afterwards. */
void metrics_give(struct metrics_set *m);

/* Records one request of command cmd (an enum metrics_cmd) that took ns
 * nanoseconds into m, which the caller has taken. */
void metrics_record(struct metrics_set *m, int cmd, uint64_t ns);

/* One journal round that wrote records records, its write and sync from
 * from_ns to to_ns (time_now_ns()): into the round histograms, and onto
 * the --trace timeline of the calling thread, the round's leader. */
void metrics_journal_round(uint64_t records, uint64_t from_ns,
                           uint64_t to_ns);

/* What STATS and /metrics report, read at once. */
struct metrics_snapshot {
    struct hist_summary cmd[METRICS_CMDS];  /* nanoseconds */
    struct hist_summary round_records;      /* records per round */
    struct hist_summary round_ns;           /* a round's write and sync */
};

/* Fills s. Returns 0, or -ENOMEM (s untouched). Takes sets_lock and
 * round_lock, one after the other; never the store lock. */
int metrics_snapshot(struct metrics_snapshot *s);

/* STATS RESET: every figure here starts again from nothing. A set held by
 * a session is cleared by its holder at its next record. */
void metrics_reset(void);

/* Frees every set; at exit, once no session runs. */
void metrics_shutdown(void);

#endif
