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

#endif
