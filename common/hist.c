/* hist.c -- log-linear latency histogram (hist.h). */
#include <string.h>
#include <stdio.h>
#include "hist.h"

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

unsigned hist_bucket_of(uint64_t v)
{
    return hist_bucket_index(v);
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

#define LOAD(p)     HIST_LOAD(p)
#define STORE(p, v) HIST_STORE(p, v)

void hist_merge_relaxed(struct hist *dst, const struct hist *src)
{
    uint64_t min = LOAD(&src->min), max = LOAD(&src->max);

    if (min > max)
        return;                         /* empty (min is UINT64_MAX) */
    /* Only the buckets between min's and max's can hold anything: a
     * latency histogram uses a few hundred of its HIST_BUCKETS. */
    unsigned hi = hist_bucket_of(max);
    for (unsigned i = hist_bucket_of(min); i <= hi; i++) {
        uint64_t n = LOAD(&src->bucket[i]);
        dst->bucket[i] += n;
        dst->count += n;
    }
    dst->sum += LOAD(&src->sum);
    if (min < dst->min)
        dst->min = min;
    if (max > dst->max)
        dst->max = max;
}

void hist_clear(struct hist *h)
{
    uint64_t min = LOAD(&h->min), max = LOAD(&h->max);

    unsigned hi = hist_bucket_of(max);
    for (unsigned i = min <= max ? hist_bucket_of(min) : 0; i <= hi; i++)
        STORE(&h->bucket[i], 0);
    STORE(&h->count, 0);
    STORE(&h->sum, 0);
    STORE(&h->max, 0);
    STORE(&h->min, UINT64_MAX);
}

void hist_summarize(const struct hist *h, struct hist_summary *s)
{
    s->count = h->count;
    s->sum = h->sum;
    s->p50 = hist_percentile(h, 50);
    s->p90 = hist_percentile(h, 90);
    s->p99 = hist_percentile(h, 99);
    s->p999 = hist_percentile(h, 99.9);
    s->max = h->count ? h->max : 0;
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

/* ---- printing with the digits the histogram has --------------------- */

static double pow10i(int n)
{
    double p = 1;
    if (n < 0)
        return 1 / pow10i(-n);      /* exact powers, one rounding */
    for (; n > 0; n--)
        p *= 10;
    return p;
}

/* The decimal exponent of x > 0 after rounding to 3 significant digits
 * (999.7 rounds to 1000, exponent 3), and x so rounded. */
static int round3_exp(double x, double *rounded)
{
    int e = 0;
    while (e < 300 && x >= pow10i(e + 1))
        e++;
    while (e > -300 && x < pow10i(e))
        e--;
    double scale = pow10i(2 - e);
    double r = (double)(uint64_t)(x * scale + 0.5) / scale;
    if (r >= pow10i(e + 1))
        e++;
    *rounded = r;
    return e;
}

double hist_round3(double x)
{
    double r;
    if (!(x > 0))
        return 0;
    round3_exp(x, &r);
    return r;
}

const char *hist_fmt3(double x, char *buf, size_t cap)
{
    double r;
    if (!(x > 0)) {
        snprintf(buf, cap, "0");
        return buf;
    }
    int e = round3_exp(x, &r);
    snprintf(buf, cap, "%.*f", e >= 2 ? 0 : 2 - e, r);
    return buf;
}

