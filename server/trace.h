/* trace.h -- --trace FILE: a timeline of what each thread did, in the
 * Chrome Trace Event format (a JSON array of complete events, "ph":"X",
 * with "ts" and "dur" in microseconds, "pid" and "tid"), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open. Spans: waiting for the
 * store lock and holding it (store_lock.c), writing replies (session.c's
 * one way out), and the journal's rounds (their write and sync, on the
 * thread that led them: the flusher, or a session with --io threads).
 * Each thread is a lane, named after its role where the driver names it.
 *
 * Bounded: each thread records into a ring of its own, TRACE_RING_EVENTS
 * long, allocated at its first event; once full, its later events are
 * dropped and counted (STATS trace_events_dropped, /metrics, and the log
 * line at the end). A ring is written to the file when its thread ends,
 * or at shutdown (trace_close), so a thread per connection costs memory
 * only while it lives.
 *
 * Off (the default), every hook is one load of trace_on and a branch that
 * is never taken. No event carries a name or an SSN: only kinds, times,
 * byte and record counts.
 */
#ifndef SSN_TRACE_H
#define SSN_TRACE_H

#include <stdatomic.h>
#include <stdint.h>
#include "timeutil.h"

#define TRACE_RING_EVENTS 16384     /* per thread: 384 KB, touched as used */

enum trace_kind {
    TRACE_LOCK_WAIT,            /* asked for the store lock -> got it */
    TRACE_LOCK_HOLD,            /* got it -> released it */
    TRACE_SEND,                 /* replies handed to the driver (arg: bytes);
                                   --io threads: written, after the journal */
    TRACE_JOURNAL_ROUND,        /* a round's write and sync (arg: records) */
    /* The event driver's connection-long waits and holds (coarse: its
     * whole session): the worker serves other connections meanwhile, so
     * they are not its thread's spans but async events ("ph":"b" and "e",
     * an "id" each), on a track of their own: */
    TRACE_CONN_LOCK_WAIT,
    TRACE_CONN_LOCK_HOLD,
    TRACE_KINDS
};

/* 1 between trace_open and trace_close; relaxed loads only. */
extern atomic_int trace_on;

/* Opens path for writing (truncated) and starts tracing. Returns 0, or
 * -errno with nothing started. At start-up, before any other thread. */
int trace_open(const char *path);

/* Writes what the rings still hold, ends the array, closes the file and
 * logs how many events were written and dropped. At shutdown, once the
 * threads that traced have ended (sessions, workers, the journal's). */
void trace_close(void);

/* Events dropped so far for full rings, and written or held in all. */
uint64_t trace_dropped(void);
uint64_t trace_events(void);

/* Names the calling thread's lane ("worker 2"): at most 31 bytes kept. */
void trace_thread_name(const char *name);

void trace_record(enum trace_kind kind, uint64_t from_ns, uint64_t to_ns,
                  uint32_t arg);

static inline int trace_enabled(void)
{
    return __builtin_expect(atomic_load_explicit(&trace_on,
                                                 memory_order_relaxed), 0);
}

/* A span of kind from from_ns to to_ns (time_now_ns()) on this thread. */
static inline void trace_span(enum trace_kind kind, uint64_t from_ns,
                              uint64_t to_ns, uint32_t arg)
{
    if (trace_enabled())
        trace_record(kind, from_ns, to_ns, arg);
}

/* For a span around a call: the start, or 0 when tracing is off (then
 * trace_end does nothing). */
static inline uint64_t trace_begin(void)
{
    return trace_enabled() ? time_now_ns() : 0;
}

static inline void trace_end(enum trace_kind kind, uint64_t from_ns,
                             uint32_t arg)
{
    if (__builtin_expect(from_ns != 0, 0))
        trace_record(kind, from_ns, time_now_ns(), arg);
}

#endif
