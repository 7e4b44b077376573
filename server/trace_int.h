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
