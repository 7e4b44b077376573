/* trace.h -- the timeline of --trace, --trace-file and TRACE START/STOP:
 * what each thread did, in the Chrome Trace Event format (a JSON array of
 * complete events, "ph":"X", with "ts" and "dur" in microseconds, "pid"
 * and "tid"), which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 * Spans: waiting for the store lock and holding it (store_lock.c),
 * writing replies (session.c's one way out), and the journal's rounds
 * (their write and sync, on the thread that led them: the flusher, or a
 * session with --io threads). Each thread is a lane, named after its role
 * where the driver names it.
 *
 * Windows. The operator names the file at start-up (trace_init): no
 * request ever chooses a path. A window runs from trace_start (--trace at
 * start-up, or TRACE START) to trace_stop (TRACE STOP, or shutdown), and
 * each window rewrites the file whole: created 0600, never through a
 * symbolic link.
 *
 * Bounded: each thread records into a ring of its own, TRACE_RING_EVENTS
 * long, allocated at its first event of a window and freed once the
 * window is written (or its thread ends). A full ring overwrites its
 * oldest event, counted as dropped (STATS trace_events_dropped, /metrics,
 * TRACE, the log line at the end), so a window shows its end. At most
 * TRACE_RINGS_MAX rings exist at once: a thread that comes past them
 * records nothing in that window, its events all counted as dropped (a
 * ring a thread, with a thread per connection, took a server with 200
 * busy clients to 87 MB, and could take 384 MiB at -m 1024). A ring goes
 * to the file when its thread ends during the window, or when the window
 * stops. A window's file holds at most TRACE_WINDOW_EVENTS events,
 * however many threads come and go: the rings that would pass it are
 * dropped whole.
 *
 * Off (the default), every hook is one load of trace_on and a branch that
 * is never taken. No event carries a name or an SSN: only kinds, times,
 * byte and record counts.
 */
#ifndef SSN_TRACE_H
#define SSN_TRACE_H

#include <errno.h>

#include <stdatomic.h>
#include <stdint.h>
#include "timeutil.h"

#define TRACE_RING_EVENTS 16384     /* per thread: 384 KiB, touched as
                                       used; a power of two */
#define TRACE_RINGS_MAX 32          /* rings at once, every thread's: 12 MiB
                                       at most, and only while a window
                                       records or is written */
#define TRACE_WINDOW_EVENTS (16 * TRACE_RING_EVENTS)
                                    /* written in one window at most (about
                                       30 MB of file): the rings past it, of
                                       threads that end or live at the
                                       stop, are counted as dropped */

enum trace_kind {
    TRACE_LOCK_WAIT,            /* asked for the store lock -> got it */
    TRACE_LOCK_HOLD,            /* got it -> released it */
    TRACE_SEND,                 /* replies handed to the driver (arg: bytes);
                                   --io threads: written, after the journal;
                                   --io events: sent, queued, or copied into
                                   the worker's batch, whose one
                                   io_uring_enter after the hold is no
                                   session's span */
    TRACE_JOURNAL_ROUND,        /* a round's write and sync (arg: records) */
    /* The event driver's connection-long waits and holds (coarse: its
     * whole session): the worker serves other connections meanwhile, so
     * they are not its thread's spans but async events ("ph":"b" and "e",
     * an "id" each, written together), on a track of their own: */
    TRACE_CONN_LOCK_WAIT,
    TRACE_CONN_LOCK_HOLD,
    TRACE_KINDS
};

enum trace_state {
    TRACE_OFF,                  /* no window (or none yet) */
    TRACE_STARTING,             /* trace_start is opening the file */
    TRACE_ON,                   /* recording */
    TRACE_WRITING,              /* stopped; the file is being written */
};

/* A window's figures: events kept (written or to be written) and events
 * dropped (overwritten in a full ring). */
struct trace_status {
    enum trace_state state;
    uint64_t events, dropped;
};

/* 1 while a window records; relaxed loads only. */
extern atomic_int trace_on;

/* Names the file every window writes (path is kept, not copied) and
 * names the calling thread "main". Returns 0 or -errno. At start-up,
 * before any other thread. */
int trace_init(const char *path);

/* 1 once trace_init named a file. */
int trace_configured(void);
const char *trace_path(void);

/* Starts a window: the file is opened (truncated, created 0600, not
 * through a symbolic link, a regular file only) and recording begins.
 * Returns 0; TRACE_NO_FILE with no file configured; -EALREADY while a
 * window records or starts; -EBUSY while the last one is being written;
 * -EEXIST when the file is a journal, -ENOTEMPTY when it holds something
 * else that is no trace (neither is overwritten); or the -errno of
 * opening the file, -ENOENT for a directory gone (nothing started).
 * Never blocks for long: an open and one byte written. */
#define TRACE_NO_FILE (-EDESTADDRREQ)    /* not -ENOENT: open's own */
int trace_start(void);

/* Stops the window: recording ends now, and a thread of its own writes
 * the file (it may block; the caller never does). *window is the ticket
 * for trace_stop_result and trace_stop_wait. Returns 0; TRACE_NO_FILE
 * with no file configured; -ESRCH when no window records; -EBUSY while one is
 * starting or being written; or -errno when the writer thread cannot be
 * started (the window then records on). */
int trace_stop(unsigned *window);

/* The outcome of writing window: -EINPROGRESS while it is written; 0 when
 * written, with its figures in *st; -errno when writing the file failed
 * (the figures still say what was lost). Never blocks. */
int trace_stop_result(unsigned window, struct trace_status *st);

/* The same, waiting for the outcome (not on an event loop). */
int trace_stop_wait(unsigned window, struct trace_status *st);

/* The state and the current (or last) window's figures. */
void trace_status(struct trace_status *st);

/* At shutdown, once the threads that traced have ended (sessions,
 * workers, the journal's): waits for a writer, writes a window that still
 * records (logging how many events were written and dropped), frees the
 * calling thread's ring. */
void trace_close(void);

/* Events dropped, and kept, since start-up (every window). */
uint64_t trace_dropped(void);
uint64_t trace_events(void);

/* Names the calling thread's lane ("worker 2"): at most 31 bytes kept.
 * Called by the drivers when trace_configured(). */
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
