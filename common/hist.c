/* hist.c -- log-linear latency histogram (hist.h). */
#include <string.h>
#include "hist.h"

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

unsigned hist_bucket_of(uint64_t v)
{
    if (v < HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);    /* e >= SUB_BITS */
    unsigned shift = e - HIST_SUB_BITS;
    return (e - HIST_SUB_BITS + 1) * HIST_SUB
           + (unsigned)((v >> shift) - HIST_SUB);
}

uint64_t hist_bucket_low(unsigned b)
{
    if (b < HIST_SUB)
        return b;
    unsigned group = b / HIST_SUB, sub = b % HIST_SUB;
    return (uint64_t)(HIST_SUB + sub) << (group - 1);
}

uint64_t hist_bucket_high(unsigned b)
{
    if (b < HIST_SUB)
        return b;
    unsigned group = b / HIST_SUB;
    return hist_bucket_low(b) + ((uint64_t)1 << (group - 1)) - 1;
}

void hist_record(struct hist *h, uint64_t v)
{
    h->bucket[hist_bucket_of(v)]++;
    h->count++;
    h->sum += v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        dst->bucket[i] += src->bucket[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
    if (h->count == 0)
        return 0;
    if (p < 0)
        p = 0;
    if (p > 100)
        p = 100;
    /* Rank in 1..count; the small epsilon keeps 50% of 10 at rank 5
     * despite floating-point noise. */
    double want = p / 100.0 * (double)h->count - 1e-9;
    uint64_t rank = want <= 1 ? 1 : (uint64_t)want + (want > (uint64_t)want);
    if (rank > h->count)
        rank = h->count;

    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t v = hist_bucket_high(i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

double hist_mean(const struct hist *h)
{
    return h->count ? (double)h->sum / (double)h->count : 0.0;
}
