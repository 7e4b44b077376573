/* trace.c -- the --trace timeline (trace.h).
 *
 * A ring belongs to its thread: only that thread writes its events and its
 * count of drops. The count of events written is stored with release
 * after each event, so whoever writes the ring out (the thread itself as
 * it ends, or trace_close) reads complete events only. trace_lock (a leaf)
 * guards the file, the list of live rings and the totals of the rings
 * already written out.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "trace.h"

struct trace_event {
    uint64_t from, to;          /* time_now_ns() */
    uint32_t kind;              /* enum trace_kind */
    uint32_t arg;
};

struct trace_ring {
    struct trace_ring *next;    /* live rings; under trace_lock */
    unsigned id;                /* its "tid" in the file */
    char name[32];              /* its lane's name; its thread's */
    atomic_uint n;              /* events recorded (release) */
    atomic_ulong dropped;       /* events that found it full */
    struct trace_event ev[TRACE_RING_EVENTS];
};

static const struct {
    const char *name, *cat, *arg;
} kinds[TRACE_KINDS] = {
    [TRACE_LOCK_WAIT] = { "wait for the store lock", "lock", NULL },
    [TRACE_LOCK_HOLD] = { "hold the store lock", "lock", NULL },
    [TRACE_SEND] = { "write replies", "io", "bytes" },
    [TRACE_JOURNAL_ROUND] = { "journal round", "journal", "records" },
    [TRACE_CONN_LOCK_WAIT] = { "a connection waits for the store lock",
                               "lock", NULL },
    [TRACE_CONN_LOCK_HOLD] = { "a connection holds the store lock",
                               "lock", NULL },
};

static int is_async(uint32_t kind)
{
    return kind == TRACE_CONN_LOCK_WAIT || kind == TRACE_CONN_LOCK_HOLD;
}

atomic_int trace_on;

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;               /* under trace_lock; NULL once closed */
static const char *out_path;
static struct trace_ring *rings;        /* live; under trace_lock */
static unsigned next_id = 1;            /* under trace_lock */
static uint64_t written, dropped_done;  /* rings written out; trace_lock */
static uint64_t t0;             /* time_now_ns() at trace_open: ts 0 */
static int pid;
static int first = 1;           /* no event written yet; trace_lock */
static pthread_key_t ring_key;  /* the calling thread's ring, for the
                                   destructor that writes it out */
static _Thread_local struct trace_ring *mine;
static _Thread_local char my_name[32];

/* ---- writing the file ---------------------------------------------------- */

static void sep_locked(void)
{
    fputs(first ? "\n" : ",\n", out);
    first = 0;
}

/* A name for JSON: the names here are ours ("worker 2"), but a quote or a
 * backslash would still break the file, so they become '_'. */
static void json_name(char *dst, size_t cap, const char *src)
{
    size_t i;

    for (i = 0; i + 1 < cap && src[i]; i++)
        dst[i] = (src[i] == '"' || src[i] == '\\' ||
                  (unsigned char)src[i] < ' ') ? '_' : src[i];
    dst[i] = 0;
}

/* One ring's lane name and events into the file; trace_lock held. */
static void write_ring_locked(struct trace_ring *r)
{
    unsigned n = atomic_load_explicit(&r->n, memory_order_acquire);
    char name[32];

    json_name(name, sizeof(name), r->name);
    sep_locked();
    fprintf(out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
            "\"tid\":%u,\"args\":{\"name\":\"%s\"}}", pid, r->id, name);
    for (unsigned i = 0; i < n; i++) {
        const struct trace_event *e = &r->ev[i];
        uint64_t from = e->from > t0 ? e->from - t0 : 0;
        uint64_t dur = e->to > e->from ? e->to - e->from : 0;

        sep_locked();
        if (is_async(e->kind)) {
            uint64_t to = from + dur;
            fprintf(out, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"b\","
                    "\"id\":\"%u.%u\",\"ts\":%" PRIu64 ".%03u,\"pid\":%d,"
                    "\"tid\":%u},\n", kinds[e->kind].name, kinds[e->kind].cat,
                    r->id, i, from / 1000, (unsigned)(from % 1000), pid,
                    r->id);
            fprintf(out, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"e\","
                    "\"id\":\"%u.%u\",\"ts\":%" PRIu64 ".%03u,\"pid\":%d,"
                    "\"tid\":%u}", kinds[e->kind].name, kinds[e->kind].cat,
                    r->id, i, to / 1000, (unsigned)(to % 1000), pid, r->id);
            continue;
        }
        fprintf(out, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\","
                "\"ts\":%" PRIu64 ".%03u,\"dur\":%" PRIu64 ".%03u,"
                "\"pid\":%d,\"tid\":%u", kinds[e->kind].name,
                kinds[e->kind].cat, from / 1000, (unsigned)(from % 1000),
                dur / 1000, (unsigned)(dur % 1000), pid, r->id);
        if (kinds[e->kind].arg)
            fprintf(out, ",\"args\":{\"%s\":%u}", kinds[e->kind].arg,
                    e->arg);
        fputc('}', out);
    }
    written += n;
    dropped_done += atomic_load_explicit(&r->dropped, memory_order_relaxed);
}

static void unlink_locked(struct trace_ring *r)
{
    for (struct trace_ring **p = &rings; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            return;
        }
}

/* The thread of ring arg ends: its ring goes to the file, then away.
 * After trace_close it was written and freed already: not touched. */
static void ring_retire(void *arg)
{
    struct trace_ring *r = arg;

    pthread_mutex_lock(&trace_lock);
    if (out) {
        unlink_locked(r);
        write_ring_locked(r);
        free(r);
    }
    pthread_mutex_unlock(&trace_lock);
}

/* ---- recording ----------------------------------------------------------- */

/* The calling thread's ring, made at its first event; NULL when memory
 * cannot be had (its events are then lost, and not counted). A thread
 * the drivers did not name whose first event is a journal round is the
 * journal's flusher (sessions that lead rounds are named). */
static struct trace_ring *ring(enum trace_kind first_kind)
{
    struct trace_ring *r = mine;

    if (r)
        return r;
    r = malloc(sizeof(*r));
    if (!r)
        return NULL;
    atomic_init(&r->n, 0);
    atomic_init(&r->dropped, 0);
    pthread_mutex_lock(&trace_lock);
    if (!out) {                         /* closed meanwhile */
        pthread_mutex_unlock(&trace_lock);
        free(r);
        return NULL;
    }
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

void trace_record(enum trace_kind kind, uint64_t from_ns, uint64_t to_ns,
                  uint32_t arg)
{
    struct trace_ring *r = ring(kind);

    if (!r)
        return;
    unsigned n = atomic_load_explicit(&r->n, memory_order_relaxed);
    if (n == TRACE_RING_EVENTS) {
        atomic_store_explicit(&r->dropped, atomic_load_explicit(&r->dropped,
                              memory_order_relaxed) + 1, memory_order_relaxed);
        return;
    }
    r->ev[n] = (struct trace_event){ from_ns, to_ns, (uint32_t)kind, arg };
    atomic_store_explicit(&r->n, n + 1, memory_order_release);
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

/* ---- start and end ------------------------------------------------------- */

int trace_open(const char *path)
{
    int rc = pthread_key_create(&ring_key, ring_retire);

    if (rc)
        return -rc;
    out = fopen(path, "w");
    if (!out)
        return -errno;
    out_path = path;
    pid = (int)getpid();
    t0 = time_now_ns();
    fputc('[', out);
    trace_thread_name("main");
    atomic_store(&trace_on, 1);
    return 0;
}

void trace_close(void)
{
    atomic_store(&trace_on, 0);
    pthread_mutex_lock(&trace_lock);
    if (!out) {
        pthread_mutex_unlock(&trace_lock);
        return;
    }
    while (rings) {
        struct trace_ring *r = rings;
        rings = r->next;
        write_ring_locked(r);
        if (r == mine)
            mine = NULL;
        free(r);
    }
    fputs("\n]\n", out);
    int err = ferror(out);
    if (fclose(out))
        err = 1;
    out = NULL;
    uint64_t w = written, d = dropped_done;
    pthread_mutex_unlock(&trace_lock);
    pthread_setspecific(ring_key, NULL);
    if (err)
        log_msg(LOG_LEVEL_ERROR, "--trace: writing %s failed", out_path);
    log_msg(d ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, "trace: %llu events written "
            "to %s, %llu dropped (rings of %d events per thread)",
            (unsigned long long)w, out_path, (unsigned long long)d,
            TRACE_RING_EVENTS);
}

uint64_t trace_dropped(void)
{
    pthread_mutex_lock(&trace_lock);
    uint64_t d = dropped_done;
    for (struct trace_ring *r = rings; r; r = r->next)
        d += atomic_load_explicit(&r->dropped, memory_order_relaxed);
    pthread_mutex_unlock(&trace_lock);
    return d;
}

uint64_t trace_events(void)
{
    pthread_mutex_lock(&trace_lock);
    uint64_t n = written;
    for (struct trace_ring *r = rings; r; r = r->next)
        n += atomic_load_explicit(&r->n, memory_order_relaxed);
    pthread_mutex_unlock(&trace_lock);
    return n;
}
