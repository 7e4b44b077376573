/* trace.c -- the timeline's rings and windows (trace.h); trace_json.c
 * writes the file, trace_figures.c keeps the windows' counts.
 *
 * Rings. A ring belongs to its thread: only that thread records into it,
 * and it lives as long as the thread (freed by the key's destructor,
 * ring_retire), across windows: gen says which window its events are
 * from, and its first event of a new window empties it. Its events' room
 * (ev, 384 KiB) is made then too, while fewer than TRACE_RINGS_MAX exist
 * (rings_held), and freed by whoever writes the window, after writing it:
 * nothing records between a stop and the next START, so no thread holds
 * any between windows, and a thread that goes past the bound records
 * nothing until the next window (its n still counts what it dropped).
 *
 * Recording against stopping, the one subtle part. A recorder marks its
 * ring busy, then loads trace_on; a stopper stores trace_on = 0, then
 * loads each ring's busy. All four are sequentially consistent (Dekker's
 * pattern): either the recorder sees tracing off and touches nothing, or
 * the stopper sees the ring busy and waits for it to be idle, whose
 * release store orders the event before the stopper's reads. After that,
 * nothing writes a ring of the window until the next START, which cannot
 * come before its writing ended.
 *
 * Locks.
 *   file_lock guards the file (trace_json.c) and t0, and lets its holder
 *   read the rings of a stopped window: a listed ring is unlinked only
 *   with it held. Held across the file's I/O, so it is never taken under
 *   another lock of the server; order: file_lock -> trace_lock.
 *   trace_lock, a leaf held for a few stores (a thread's first span takes
 *   it to make its ring, maybe under the store lock), guards the state,
 *   the window's number, the list of live rings, the names, the totals,
 *   the outcomes and the writer thread's handle.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "server.h"
#include "trace_int.h"

atomic_int trace_on;

static const char *path;        /* set once by trace_init */
static pthread_key_t ring_key;  /* the thread's ring, for ring_retire */
static _Thread_local struct trace_ring *mine;
static _Thread_local char my_name[32];

static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t t0;             /* the window's start; set with both locks
                                   held, read with either */

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t written = PTHREAD_COND_INITIALIZER;  /* a window
                                   was written; with trace_lock */
static enum trace_state state;  /* trace_lock */
static atomic_uint window;      /* the current or last window, from 1;
                                   stored under trace_lock */
static struct trace_ring *rings;        /* live; trace_lock */
static unsigned next_id = 1;            /* trace_lock */
static pthread_t writer;        /* trace_lock */
static int writer_joinable;     /* trace_lock */
static atomic_int rings_held;   /* rings with room for events (ev): at
                                   most TRACE_RINGS_MAX */

/* ---- figures --------------------------------------------------------- */

/* The current or last window's figures; trace_lock held. */
static void window_figures_locked(struct trace_status *st)
{
    unsigned w = atomic_load_explicit(&window, memory_order_relaxed);
    uint64_t k, d;

    st->state = state;
    trace_totals_locked(&st->events, &st->dropped, 0);
    if (state != TRACE_ON && state != TRACE_WRITING)
        return;
    for (struct trace_ring *r = rings; r; r = r->next) {
        if (r->counted == w ||
            atomic_load_explicit(&r->gen, memory_order_acquire) != w)
            continue;
        trace_ring_figures(r, &k, &d);
        st->events += k;
        st->dropped += d;
    }
}

void trace_status(struct trace_status *st)
{
    pthread_mutex_lock(&trace_lock);
    window_figures_locked(st);
    pthread_mutex_unlock(&trace_lock);
}

/* This window's figures and the earlier ones'. */
static void all_figures(struct trace_status *st)
{
    uint64_t events, dropped;

    pthread_mutex_lock(&trace_lock);
    window_figures_locked(st);
    trace_totals_locked(&events, &dropped, 1);
    pthread_mutex_unlock(&trace_lock);
    st->events += events;
    st->dropped += dropped;
}

uint64_t trace_dropped(void)
{
    struct trace_status st;

    all_figures(&st);
    return st.dropped;
}

uint64_t trace_events(void)
{
    struct trace_status st;

    all_figures(&st);
    return st.events;
}

/* ---- rings ------------------------------------------------------------- */

static void unlink_locked(struct trace_ring *r)
{
    for (struct trace_ring **p = &rings; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            return;
        }
}

/* Room for a ring's events, while fewer than TRACE_RINGS_MAX have it;
 * else (or with no memory) NULL. */
static struct trace_event *ev_new(void)
{
    struct trace_event *ev = NULL;

    if (atomic_fetch_add(&rings_held, 1) < TRACE_RINGS_MAX)
        ev = malloc(TRACE_RING_EVENTS * sizeof(*ev));
    if (!ev)
        atomic_fetch_sub(&rings_held, 1);
    return ev;
}

/* r's events go: its window is written, or its thread ends. Nothing may
 * record into r meanwhile (see the top). */
static void ev_free(struct trace_ring *r)
{
    struct trace_event *ev = atomic_exchange(&r->ev, NULL);

    if (ev) {
        free(ev);
        atomic_fetch_sub(&rings_held, 1);
    }
}

/* The thread of ring arg ends: a ring of the window that records (or
 * stopped and is not written yet) goes to the file, then away. */
static void ring_retire(void *arg)
{
    struct trace_ring *r = arg;
    char name[32];
    int keep;

    pthread_mutex_lock(&file_lock);
    pthread_mutex_lock(&trace_lock);
    unsigned w = atomic_load_explicit(&window, memory_order_relaxed);
    unlink_locked(r);
    keep = (state == TRACE_ON || state == TRACE_WRITING) &&
           atomic_load_explicit(&r->gen, memory_order_relaxed) == w &&
           r->counted != w && trace_count_locked(r, w);
    memcpy(name, r->name, sizeof(name));
    pthread_mutex_unlock(&trace_lock);
    if (keep)
        trace_json_ring(r, name, t0);
    pthread_mutex_unlock(&file_lock);
    ev_free(r);
    free(r);
}

/* The calling thread's ring, made at its first event; NULL when memory
 * cannot be had (its events are then lost, and not counted). A thread
 * the drivers did not name whose first event is a journal round is the
 * journal's flusher (sessions that lead rounds are named). */
static struct trace_ring *ring_new(enum trace_kind first_kind)
{
    struct trace_ring *r = malloc(sizeof(*r));

    if (!r)
        return NULL;
    atomic_init(&r->busy, 0);
    atomic_init(&r->gen, 0);
    atomic_init(&r->n, 0);
    atomic_init(&r->ev, NULL);
    r->counted = 0;
    pthread_mutex_lock(&trace_lock);
    r->id = next_id++;
    if (my_name[0])
        snprintf(r->name, sizeof(r->name), "%s", my_name);
    else if (first_kind == TRACE_JOURNAL_ROUND)
        snprintf(r->name, sizeof(r->name), "journal");
    else
        snprintf(r->name, sizeof(r->name), "thread %u", r->id);
    r->next = rings;
    rings = r;
    pthread_mutex_unlock(&trace_lock);
    pthread_setspecific(ring_key, r);
    mine = r;
    return r;
}

/* One event into the calling thread's ring; a full ring overwrites its
 * oldest (n - TRACE_RING_EVENTS events are then dropped), and one with no
 * room for events (past TRACE_RINGS_MAX) drops them all. */
void trace_record(enum trace_kind kind, uint64_t from_ns, uint64_t to_ns,
                  uint32_t arg)
{
    struct trace_ring *r = mine ? mine : ring_new(kind);

    if (!r)
        return;
    atomic_store(&r->busy, 1);                  /* seq_cst: see the top */
    if (atomic_load(&trace_on)) {
        unsigned w = atomic_load_explicit(&window, memory_order_relaxed);
        uint64_t n = 0;

        if (atomic_load_explicit(&r->gen, memory_order_relaxed) == w) {
            n = atomic_load_explicit(&r->n, memory_order_relaxed);
        } else {                                /* a new window */
            if (!atomic_load_explicit(&r->ev, memory_order_relaxed))
                atomic_store_explicit(&r->ev, ev_new(),
                                      memory_order_relaxed);
            atomic_store_explicit(&r->n, 0, memory_order_relaxed);
            atomic_store_explicit(&r->gen, w, memory_order_release);
        }
        struct trace_event *ev = atomic_load_explicit(&r->ev,
                                                      memory_order_relaxed);
        if (ev)
            ev[n & TRACE_RING_MASK] = (struct trace_event){
                from_ns, to_ns, (uint32_t)kind, arg };
        atomic_store_explicit(&r->n, n + 1, memory_order_release);
    }
    atomic_store_explicit(&r->busy, 0, memory_order_release);
}

void trace_thread_name(const char *name)
{
    snprintf(my_name, sizeof(my_name), "%s", name);
    if (mine) {
        pthread_mutex_lock(&trace_lock);
        snprintf(mine->name, sizeof(mine->name), "%s", name);
        pthread_mutex_unlock(&trace_lock);
    }
}

/* ---- windows ----------------------------------------------------------- */

int trace_init(const char *p)
{
    int rc = pthread_key_create(&ring_key, ring_retire);

    if (rc)
        return -rc;
    path = p;
    trace_thread_name("main");
    return 0;
}

int trace_configured(void)
{
    return path != NULL;
}

const char *trace_path(void)
{
    return path;
}

int trace_start(void)
{
    pthread_t old;
    int join, rc;

    if (!path)
        return TRACE_NO_FILE;
    pthread_mutex_lock(&trace_lock);
    if (state != TRACE_OFF) {
        rc = state == TRACE_WRITING ? -EBUSY : -EALREADY;
        pthread_mutex_unlock(&trace_lock);
        return rc;
    }
    state = TRACE_STARTING;
    join = writer_joinable;
    old = writer;
    writer_joinable = 0;
    pthread_mutex_unlock(&trace_lock);
    if (join)
        pthread_join(old, NULL);        /* ended: OFF was its last store */

    pthread_mutex_lock(&file_lock);     /* free: no window to write */
    rc = trace_json_open(path);
    pthread_mutex_lock(&trace_lock);
    if (rc == 0) {
        trace_window_open_locked();
        t0 = time_now_ns();
        atomic_store_explicit(&window, atomic_load_explicit(&window,
                              memory_order_relaxed) + 1, memory_order_relaxed);
        state = TRACE_ON;
        atomic_store(&trace_on, 1);     /* publishes window (seq_cst) */
    } else {
        state = TRACE_OFF;
    }
    pthread_mutex_unlock(&trace_lock);
    pthread_mutex_unlock(&file_lock);
    return rc;
}

/* Writes the stopped window (state WRITING, trace_on 0), then ends it:
 * on the writer thread, or at shutdown. */
static void write_window(void)
{
    struct trace_ring *r;
    struct trace_status st;
    char name[32];
    unsigned w;
    int rc;

    pthread_mutex_lock(&file_lock);
    pthread_mutex_lock(&trace_lock);
    r = rings;                  /* later rings go in front: none of ours */
    w = atomic_load_explicit(&window, memory_order_relaxed);
    pthread_mutex_unlock(&trace_lock);
    for (; r; r = r->next) {    /* linked as they are: file_lock is held */
        while (atomic_load(&r->busy))   /* seq_cst: see the top */
            sched_yield();
        if (atomic_load_explicit(&r->gen, memory_order_acquire) != w)
            continue;
        pthread_mutex_lock(&trace_lock);
        int keep = trace_count_locked(r, w);
        memcpy(name, r->name, sizeof(name));
        pthread_mutex_unlock(&trace_lock);
        if (keep)
            trace_json_ring(r, name, t0);
        ev_free(r);                 /* its thread records no more here */
    }
    rc = trace_json_close();
    pthread_mutex_lock(&trace_lock);
    state = TRACE_OFF;
    window_figures_locked(&st);
    trace_result_put_locked(w, rc, &st);
    pthread_cond_broadcast(&written);
    pthread_mutex_unlock(&trace_lock);
    pthread_mutex_unlock(&file_lock);
    if (rc)
        log_msg(LOG_LEVEL_ERROR, "trace: writing %s failed: %s", path,
                strerror(-rc));
    log_msg(st.dropped ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, "trace: %llu "
            "events written to %s, %llu dropped (rings of %d events per "
            "thread keep the latest; a window writes at most %d)",
            (unsigned long long)st.events, path,
            (unsigned long long)st.dropped, TRACE_RING_EVENTS,
            TRACE_WINDOW_EVENTS);
}

static void *writer_main(void *arg)
{
    (void)arg;
    write_window();
    return NULL;
}

int trace_stop(unsigned *w)
{
    int rc;

    if (!path)
        return TRACE_NO_FILE;
    pthread_mutex_lock(&trace_lock);
    if (state != TRACE_ON) {
        rc = state == TRACE_OFF ? -ESRCH : -EBUSY;
        pthread_mutex_unlock(&trace_lock);
        return rc;
    }
    state = TRACE_WRITING;
    atomic_store(&trace_on, 0);                 /* seq_cst: see the top */
    /* Started under trace_lock, so that the handle is stored before the
     * thread can end the window and another START look for it. No ring
     * is made meanwhile: tracing is off. */
    rc = pthread_create(&writer, NULL, writer_main, NULL);
    if (rc) {
        state = TRACE_ON;
        atomic_store(&trace_on, 1);
    } else {
        writer_joinable = 1;
        *w = atomic_load_explicit(&window, memory_order_relaxed);
    }
    pthread_mutex_unlock(&trace_lock);
    return -rc;
}

/* Window w's outcome (trace_stop_result); trace_lock held. */
static int result_locked(unsigned w, struct trace_status *st)
{
    int rc;

    if (trace_result_get_locked(w, st, &rc)) {
        st->state = state;
        return rc;
    }
    return state == TRACE_WRITING &&
           atomic_load_explicit(&window, memory_order_relaxed) == w
           ? -EINPROGRESS : -ESTALE;            /* TRACE_RESULTS since */
}

int trace_stop_result(unsigned w, struct trace_status *st)
{
    pthread_mutex_lock(&trace_lock);
    int rc = result_locked(w, st);
    pthread_mutex_unlock(&trace_lock);
    return rc;
}

int trace_stop_wait(unsigned w, struct trace_status *st)
{
    int rc;

    SRV_ASSERT_MAY_BLOCK();
    pthread_mutex_lock(&trace_lock);
    while ((rc = result_locked(w, st)) == -EINPROGRESS)
        pthread_cond_wait(&written, &trace_lock);
    pthread_mutex_unlock(&trace_lock);
    return rc;
}

void trace_close(void)
{
    pthread_t old;
    int join, on;

    if (!path)
        return;
    pthread_mutex_lock(&trace_lock);
    join = writer_joinable;
    old = writer;
    writer_joinable = 0;
    on = state == TRACE_ON;
    if (on) {
        state = TRACE_WRITING;
        atomic_store(&trace_on, 0);             /* seq_cst: see the top */
    }
    pthread_mutex_unlock(&trace_lock);
    if (join)
        pthread_join(old, NULL);
    if (on)
        write_window();
    if (mine) {
        pthread_mutex_lock(&file_lock);
        pthread_mutex_lock(&trace_lock);
        unlink_locked(mine);
        pthread_mutex_unlock(&trace_lock);
        pthread_mutex_unlock(&file_lock);
        ev_free(mine);
        free(mine);
        mine = NULL;
        pthread_setspecific(ring_key, NULL);
    }
}
