/* hist.h -- a fixed-size latency histogram with bounded relative error
 * (log-linear buckets, as HdrHistogram does): recording is O(1) and never
 * allocates, so it can sit in a hot loop, and two histograms merge by
 * adding buckets. No locking: each thread keeps its own and merges later.
 *
 * Values below HIST_SUB are exact; above, each power of two is split into
 * HIST_SUB buckets, so a reported percentile is at most 1/HIST_SUB (about
 * 3%) above the true value, and is always clamped into [min, max].
 */
#ifndef SSN_HIST_H
#define SSN_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS   5                       /* 32 buckets per octave */
#define HIST_SUB        (1u << HIST_SUB_BITS)
#define HIST_BUCKETS    ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
    uint64_t count;             /* values recorded */
    uint64_t sum;               /* their sum (wraps after 584 years of ns) */
    uint64_t min, max;          /* exact; min is UINT64_MAX while empty */
    uint64_t bucket[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t v);

/* Adds every value of src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);

/* The value at percentile p (0..100): the upper edge of the bucket holding
 * the ceil(p% * count)-th smallest value, clamped into [min, max]. It is
 * monotonic in p, so p50 <= p90 <= p99 <= max always holds. 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double p);

/* The figures STATS and /metrics report of one histogram, in its unit. */
struct hist_summary {
    uint64_t count, sum;
    uint64_t p50, p90, p99, p999;   /* hist_percentile's, so monotonic */
    uint64_t max;                   /* exact; 0 when empty */
};

/* Fills s from h; every figure 0 when h is empty. */
void hist_summarize(const struct hist *h, struct hist_summary *s);

/* One writer, readers on other threads at the same time (a live figure
 * read without the writer's lock): hist_record_relaxed stores each field
 * with a relaxed atomic store of its new value (a plain load, add and
 * store on x86, no locked instruction: there is only one writer), and
 * hist_merge_relaxed reads src with relaxed atomic loads. The reader may
 * see a record half done (a bucket counted, not yet the sum), so dst's
 * count is recounted from its buckets; a figure read so is off by the
 * records in flight, never torn. The writer must be the only one at any
 * time: a lock it holds, or its thread's own histogram. */
static inline void hist_record_relaxed(struct hist *h, uint64_t v);
void hist_merge_relaxed(struct hist *dst, const struct hist *src);

/* hist_init again for a histogram in use, by its one writer, with relaxed
 * stores (readers may be merging it). Only the buckets between min's and
 * max's are written (from bucket 0 when min is not kept, as in
 * metrics.c's lean sets): the others are zero already, and their pages
 * stay untouched. */
void hist_clear(struct hist *h);

/* Mean of the recorded values, 0 when empty. */
double hist_mean(const struct hist *h);

/* A value rounded to 3 significant digits (0 for x <= 0): a percentile is
 * known to about 3 % (1/HIST_SUB), so more digits would print a bucket edge,
 * not a measurement. hist_fmt3 prints it without an exponent into buf
 * ("12600", "3.14", "0.00100") and returns buf. */
double hist_round3(double x);
const char *hist_fmt3(double x, char *buf, size_t cap);

/* Bucket helpers, exposed for tests: the bucket of v, and the smallest and
 * largest value that bucket holds. */
unsigned hist_bucket_of(uint64_t v);
uint64_t hist_bucket_low(unsigned b);
uint64_t hist_bucket_high(unsigned b);

/* ---- inline: the request path records here ---------------------------- */

static inline unsigned hist_bucket_index(uint64_t v)
{
    if (v < HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);    /* e >= SUB_BITS */
    unsigned shift = e - HIST_SUB_BITS;
    return (e - HIST_SUB_BITS + 1) * HIST_SUB
           + (unsigned)((v >> shift) - HIST_SUB);
}

/* Relaxed atomic access to a plain uint64_t: GCC's builtins, which
 * ThreadSanitizer knows, on fields that are not _Atomic so that the
 * single-threaded functions stay plain. */
#define HIST_LOAD(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define HIST_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

static inline void hist_record_relaxed(struct hist *h, uint64_t v)
{
    uint64_t *b = &h->bucket[hist_bucket_index(v)];

    HIST_STORE(b, HIST_LOAD(b) + 1);
    HIST_STORE(&h->count, HIST_LOAD(&h->count) + 1);
    HIST_STORE(&h->sum, HIST_LOAD(&h->sum) + v);
    if (v < HIST_LOAD(&h->min))
        HIST_STORE(&h->min, v);
    if (v > HIST_LOAD(&h->max))
        HIST_STORE(&h->max, v);
}

#endif
