/* trace_int.h -- what trace.c (rings, recording, windows) and
 * trace_json.c (the file) share; private to them.
 */
#ifndef SSN_TRACE_INT_H
#define SSN_TRACE_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include "trace.h"

#define TRACE_RING_MASK (TRACE_RING_EVENTS - 1)

_Static_assert((TRACE_RING_EVENTS & TRACE_RING_MASK) == 0,
               "TRACE_RING_EVENTS is a power of two");

struct trace_event {
    uint64_t from, to;          /* time_now_ns() */
    uint32_t kind;              /* enum trace_kind */
    uint32_t arg;
};

/* One thread's ring (trace.c says who may touch what). */
struct trace_ring {
    struct trace_ring *next;    /* live rings; under trace_lock, and
                                   unlinked with file_lock held too */
    unsigned id;                /* its "tid" in the file */
    unsigned counted;           /* the window whose figures it added to
                                   the totals; under trace_lock */
    char name[32];              /* its lane's name; under trace_lock */
    atomic_int busy;            /* its thread is recording (trace.c) */
    atomic_uint gen;            /* the window its events are from */
    atomic_ulong n;             /* events recorded in that window; the
                                   latest TRACE_RING_EVENTS are kept, event
                                   i at ev[i & TRACE_RING_MASK] */
    /* TRACE_RING_EVENTS events, made at the thread's first event of a
     * window (NULL past TRACE_RINGS_MAX: that window's events are all
     * dropped), freed once the window is written or the thread ends
     * (trace.c). Its thread stores it before gen; readers load it after. */
    _Atomic(struct trace_event *) ev;
};

/* trace_figures.c: what windows counted, and the outcomes of the last
 * TRACE_RESULTS, for the sessions whose STOP waits for theirs. Its state
 * is under trace.c's trace_lock: the _locked calls hold it.
 * ring_figures: a ring of the window that records (gen read with
 * acquire), or of one stopped: its events kept, and those dropped
 * (overwritten, or recorded with no room: past TRACE_RINGS_MAX).
 * count_locked: adds ring r's figures of window w to the window's; 1 when
 * its events go to the file, 0 when they would take the window past
 * TRACE_WINDOW_EVENTS (all of them are then counted as dropped).
 * window_open_locked: a new window; the last one's count goes to the
 * earlier windows'. totals_locked: the rings counted in this window
 * (past: in the earlier ones). result_put_locked / result_get_locked:
 * window w's outcome kept, and looked up (1 with *rc and st's figures, 0
 * when TRACE_RESULTS windows have ended since, or it has not). */
#define TRACE_RESULTS 256
void trace_ring_figures(const struct trace_ring *r, uint64_t *kept,
                        uint64_t *dropped);
int trace_count_locked(struct trace_ring *r, unsigned w);
void trace_window_open_locked(void);
void trace_totals_locked(uint64_t *events, uint64_t *dropped, int past);
void trace_result_put_locked(unsigned w, int rc,
                             const struct trace_status *st);
int trace_result_get_locked(unsigned w, struct trace_status *st, int *rc);

/* trace_json.c: the window's file. The caller holds trace.c's file_lock
 * around every call. */

/* Opens path for a new window (truncated, 0600, no symbolic link, a
 * regular file) and writes the array's "[". 0 or -errno, nothing open. */
int trace_json_open(const char *path);

/* Writes ring r's lane (named name) and its kept events, times from t0
 * (spans that began before it start at it); nothing for a ring with no
 * room for events. The ring must not change meanwhile. Returns the events
 * written. */
uint64_t trace_json_ring(const struct trace_ring *r, const char *name,
                         uint64_t t0);

/* Ends the array and closes the file: 0, or -errno when any write failed. */
int trace_json_close(void);

#endif
