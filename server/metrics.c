/* metrics.c -- request latencies by command and the journal's rounds
 * (metrics.h says how the sets are shared and why).
 *
 * A set belongs to whoever took it: only that thread writes its
 * histograms, with relaxed stores, until it gives the set back. The
 * exchange that takes a set from a slot (acquire) and the store that puts
 * it back (release) order one holder's writes before the next one's.
 * epoch counts STATS RESETs: a set whose epoch is behind holds figures from
 * before the last reset, so readers skip it and its next holder clears it
 * first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "metrics.h"
#include "trace.h"

#define METRICS_SLOTS 64        /* free sets kept in lock-free slots; more
                                   than this many slices at once park the
                                   rest in spare, under sets_lock */
#define CACHE_LINE 64

const char *const metrics_cmd_names[METRICS_CMDS] = {
    [METRICS_ADD] = "add", [METRICS_DELETE] = "delete",
    [METRICS_FIND] = "find", [METRICS_PRINT] = "print",
    [METRICS_COUNT] = "count", [METRICS_CHECK] = "check",
    [METRICS_DIGEST] = "digest", [METRICS_STATS] = "stats",
    [METRICS_TREE] = "tree",
};

struct metrics_set {
    struct hist cmd[METRICS_CMDS];  /* written by the holder only */
    atomic_uint epoch;          /* the reset its figures are from; written
                                   by the holder, read by readers */
    struct metrics_set *all;    /* every set; under sets_lock, set once */
    struct metrics_set *spare;  /* in the spare list; under sets_lock */
};
_Static_assert(sizeof(struct metrics_set) < 136 * 1024,
               "docs/LIMITS.md counts a set as 135 KiB");

/* Free sets. Each slot on a cache line of its own, so that two threads
 * taking and giving back in different slots do not share one. */
static struct {
    _Atomic(struct metrics_set *) set;
    char pad[CACHE_LINE - sizeof(void *)];
} slots[METRICS_SLOTS] __attribute__((aligned(CACHE_LINE)));

/* Where this thread looks first: the slot it last took from, so a thread
 * finds its own set again, warm in its cache. 0 until it takes one. */
static _Thread_local unsigned slot_hint;
static atomic_uint next_hint;

/* Alone on its line: every record reads it, a reset alone writes it. */
static struct {
    atomic_uint epoch;
    char pad[CACHE_LINE - sizeof(atomic_uint)];
} reset __attribute__((aligned(CACHE_LINE)));

static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;
static struct metrics_set *all_sets;    /* every set made; sets_lock */
static struct metrics_set *spare_sets;  /* free, beyond the slots; sets_lock */

/* The journal's rounds: rare (at most a few thousand a second), so a
 * mutex is cheap enough. */
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hist round_records, round_ns;     /* under round_lock */
static int round_inited;                        /* under round_lock */

static struct metrics_set *set_new(void)
{
    struct metrics_set *m = malloc(sizeof(*m));

    if (!m)
        return NULL;
    for (int i = 0; i < METRICS_CMDS; i++)
        hist_init(&m->cmd[i]);         /* min stays UINT64_MAX: lean */
    atomic_init(&m->epoch, atomic_load(&reset.epoch));
    m->spare = NULL;
    pthread_mutex_lock(&sets_lock);
    m->all = all_sets;
    all_sets = m;
    pthread_mutex_unlock(&sets_lock);
    return m;
}

static unsigned first_slot(void)
{
    if (!slot_hint)
        slot_hint = 1 + atomic_fetch_add_explicit(&next_hint, 1,
                            memory_order_relaxed) % METRICS_SLOTS;
    return slot_hint - 1;
}

struct metrics_set *metrics_take(void)
{
    unsigned first = first_slot();
    struct metrics_set *m;

    for (unsigned i = 0; i < METRICS_SLOTS; i++) {
        unsigned k = (first + i) % METRICS_SLOTS;
        if (!atomic_load_explicit(&slots[k].set, memory_order_relaxed))
            continue;
        m = atomic_exchange_explicit(&slots[k].set, NULL,
                                     memory_order_acquire);
        if (m) {
            slot_hint = k + 1;
            return m;
        }
    }
    pthread_mutex_lock(&sets_lock);
    m = spare_sets;
    if (m)
        spare_sets = m->spare;
    pthread_mutex_unlock(&sets_lock);
    return m ? m : set_new();
}

void metrics_give(struct metrics_set *m)
{
    if (!m)
        return;
    unsigned first = first_slot();
    for (unsigned i = 0; i < METRICS_SLOTS; i++) {
        unsigned k = (first + i) % METRICS_SLOTS;
        struct metrics_set *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&slots[k].set, &none, m,
                memory_order_release, memory_order_relaxed))
            return;
    }
    pthread_mutex_lock(&sets_lock);
    m->spare = spare_sets;
    spare_sets = m;
    pthread_mutex_unlock(&sets_lock);
}

/* The request path's share, kept to the least: a set's histograms keep
 * their buckets, sum and max only; count and min, which every record
 * would have to write, are found from the buckets when merged
 * (merge_lean). A record is a clz and three plain load-store pairs. */
/* Out of line and cold, so that the record itself saves no registers. */
static __attribute__((noinline, cold)) void set_clear(struct metrics_set *m,
                                                      unsigned now)
{
    for (int i = 0; i < METRICS_CMDS; i++)
        hist_clear(&m->cmd[i]);
    atomic_store_explicit(&m->epoch, now, memory_order_release);
}

void metrics_record(struct metrics_set *m, int cmd, uint64_t ns)
{
    unsigned now = atomic_load_explicit(&reset.epoch, memory_order_relaxed);
    struct hist *h = &m->cmd[cmd];

    if (atomic_load_explicit(&m->epoch, memory_order_relaxed) != now)
        set_clear(m, now);
    uint64_t *b = &h->bucket[hist_bucket_index(ns)];
    HIST_STORE(b, HIST_LOAD(b) + 1);
    HIST_STORE(&h->sum, HIST_LOAD(&h->sum) + ns);
    if (ns > HIST_LOAD(&h->max))
        HIST_STORE(&h->max, ns);
}

/* Adds a lean histogram (buckets, sum and max) into dst, a full one. */
static void merge_lean(struct hist *dst, const struct hist *src)
{
    uint64_t max = HIST_LOAD(&src->max), n, count = 0;
    unsigned hi = hist_bucket_of(max);

    for (unsigned i = 0; i <= hi; i++) {
        if (!(n = HIST_LOAD(&src->bucket[i])))
            continue;
        if (!count && hist_bucket_low(i) < dst->min)
            dst->min = hist_bucket_low(i);     /* its bucket's low edge */
        dst->bucket[i] += n;
        count += n;
    }
    if (!count)
        return;
    dst->count += count;
    dst->sum += HIST_LOAD(&src->sum);
    if (max > dst->max)
        dst->max = max;
}

static void rounds_init_locked(void)
{
    if (round_inited)
        return;
    hist_init(&round_records);
    hist_init(&round_ns);
    round_inited = 1;
}

void metrics_journal_round(uint64_t records, uint64_t from_ns,
                           uint64_t to_ns)
{
    trace_span(TRACE_JOURNAL_ROUND, from_ns, to_ns,
               records > UINT32_MAX ? UINT32_MAX : (uint32_t)records);
    pthread_mutex_lock(&round_lock);
    rounds_init_locked();
    hist_record(&round_records, records);
    hist_record(&round_ns, to_ns - from_ns);
    pthread_mutex_unlock(&round_lock);
}

int metrics_snapshot(struct metrics_snapshot *s)
{
    struct hist *h = malloc(sizeof(*h));    /* 15 KB: not on a session
                                               thread's small stack */
    if (!h)
        return -ENOMEM;
    pthread_mutex_lock(&sets_lock);
    unsigned now = atomic_load(&reset.epoch);
    for (int i = 0; i < METRICS_CMDS; i++) {
        hist_init(h);
        for (struct metrics_set *m = all_sets; m; m = m->all)
            if (atomic_load_explicit(&m->epoch, memory_order_acquire) == now)
                merge_lean(h, &m->cmd[i]);
        hist_summarize(h, &s->cmd[i]);
    }
    pthread_mutex_unlock(&sets_lock);
    pthread_mutex_lock(&round_lock);
    rounds_init_locked();
    hist_summarize(&round_records, &s->round_records);
    hist_summarize(&round_ns, &s->round_ns);
    pthread_mutex_unlock(&round_lock);
    free(h);
    return 0;
}

void metrics_reset(void)
{
    atomic_fetch_add(&reset.epoch, 1);
    pthread_mutex_lock(&round_lock);
    round_inited = 0;
    rounds_init_locked();
    pthread_mutex_unlock(&round_lock);
}

void metrics_shutdown(void)
{
    for (unsigned k = 0; k < METRICS_SLOTS; k++)
        atomic_store(&slots[k].set, NULL);
    pthread_mutex_lock(&sets_lock);
    while (all_sets) {
        struct metrics_set *m = all_sets;
        all_sets = m->all;
        free(m);
    }
    spare_sets = NULL;
    pthread_mutex_unlock(&sets_lock);
}
