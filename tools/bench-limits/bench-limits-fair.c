/* bench-limits-fair.c -- bench-limits' fairness part (docs/LIMITS.md):
 * client A pipelines K DIGESTs (with --changing an ADD before each, so
 * every DIGEST must hash the store again) and never waits; meanwhile
 * client B asks FIND, request by request, until A's batch is answered or D
 * seconds pass. B's latencies against one DIGEST's lock hold (STATS
 * lock_hold_max_us around a lone DIGEST, read after STATS RESET; a lone
 * DIGEST's round trip on a server without lock figures). A runs in a
 * thread of its own; it shares with main only the atomics of struct
 * fair_a, and its result once joined.
 */
#include "bench-limits.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"
#include "ctl.h"
#include "entry.h"
#include "jsonw.h"
#include "pipeline.h"
#include "preload.h"
#include "proto.h"

/* Fairness: DIGEST, or ADD then DIGEST with --changing. */
static int line_fair(const struct req_source *g, uint64_t i, char *buf,
                     size_t cap, int *cmd)
{
    if (g->changing && i % 2 == 0) {
        *cmd = PROTO_ADD;
        return snprintf(buf, cap, "ADD f%llu %s 40 000-00-0000\n",
                        (unsigned long long)(i / 2), g->tag);
    }
    *cmd = PROTO_DIGEST;
    return snprintf(buf, cap, "DIGEST\n");
}

/* Removes what line_fair added. */
static int line_unfair(const struct req_source *g, uint64_t i, char *buf,
                       size_t cap, int *cmd)
{
    *cmd = PROTO_DELETE;
    return snprintf(buf, cap, "DELETE f%llu %s\n", (unsigned long long)i,
                    g->tag);
}


/* After A gave up: the server answers a whole pipelined batch before it
 * writes or reads again, so A's session goes on with the requests it had
 * read. Waits (at most SESSION_S) until the server's connection count is
 * back to base, so nothing later competes with it; the wait in *secs.
 * Returns 0, or -1 when it never came back. */
static int settle(const struct opts *o, long long base, double *secs)
{
    struct stats st;
    char e[200];
    double t0 = bench_now();

    while (bench_now() - t0 < SESSION_S) {
        if (stats_fetch(o, &st, e, sizeof e) == 0 &&
            stats_num(&st, "connections_current") <= base) {
            *secs = bench_now() - t0;
            return 0;
        }
        time_sleep_ns(100 * TIME_NS_PER_MS);
    }
    *secs = bench_now() - t0;
    return -1;
}

/* Client A, in its own thread. */
struct fair_a {
    const struct opts *o;
    struct req_source g;
    struct pl_result r;
    atomic_int stop;            /* set by main after D seconds */
    atomic_int done;            /* set here when pl_run returned */
};

static void *fair_a_main(void *arg)
{
    struct fair_a *a = arg;
    struct pl_source src;
    struct pl_opts po;

    req_source_init(&src, &a->g);
    session_opts(&po, a->o, SESSION_S + (double)a->o->find_s, NULL,
                 &a->stop);
    pl_run(&po, &src, &a->r, NULL);
    atomic_store(&a->done, 1);
    return NULL;
}

/* Lone DIGESTs on a quiet server: the lock hold of one (STATS, between
 * STATS RESETs) and its round trip. */
static int fair_calibrate(const struct opts *o, struct ctl *c,
                          const char *tag, struct fair_result *fr,
                          char *err, size_t errlen)
{
    char reply[CTL_REPLY_MAX];
    struct stats st;

    for (int k = 0; k < CALIBRATE_RUNS; k++) {
        fr->alone_hold_us[k] = -1;
        if (digest_cache_cold(c, tag) < 0)
            goto fail;
        if (fr->have_lock && ctl_query(c, "STATS RESET", reply,
                                       sizeof reply) < 0)
            goto fail;
        uint64_t t0 = time_now_ns();
        if (ctl_query(c, "DIGEST", reply, sizeof reply) < 0)
            goto fail;
        fr->alone_rtt_ns[k] = time_now_ns() - t0;
        if (fr->have_lock) {
            if (stats_fetch(o, &st, err, errlen) < 0)
                return -1;
            fr->alone_hold_us[k] = stats_num(&st, "lock_hold_max_us");
        }
    }
    return 0;
fail:
    snprintf(err, errlen, "calibration: %s", c->err);
    return -1;
}

/* Client B: one FIND at a time, of a preloaded person, while A's batch
 * runs, for at most D seconds; its latencies in fr. Returns 0, or -1 with
 * the reason in err. */
static int fair_b_finds(const struct opts *o, struct ctl *b,
                        struct fair_a *a, struct fair_result *fr,
                        char *err, size_t errlen)
{
    char reply[CTL_REPLY_MAX], req[200];
    uint64_t t0 = time_now_ns(), end = t0 + o->find_s * TIME_NS_PER_SEC;
    uint64_t seed = 88172645463325252ull;

    while (!atomic_load(&a->done) && time_now_ns() < end) {
        struct person e;
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        preload_entry(seed % o->people, &e);
        snprintf(req, sizeof req, "FIND %s %s", e.first, e.last);
        uint64_t s = time_now_ns();
        if (ctl_query(b, req, reply, sizeof reply) < 0) {
            snprintf(err, errlen, "FIND: %s", b->err);
            return -1;
        }
        hist_record(&fr->find, time_now_ns() - s);
        fr->find_errors += strncmp(reply, "Error:", 6) == 0;
    }
    fr->b_seconds = time_ns_to_s(time_now_ns() - t0);
    return 0;
}

/* A's batch, in a thread of its own, against B's FINDs on b; A is stopped
 * and joined before this returns, its figures in fr. Returns 0, or -1 with
 * the reason in err. */
static int fair_race(const struct opts *o, const char *tag, struct ctl *b,
                     struct fair_result *fr, char *err, size_t errlen)
{
    pthread_t at;
    struct fair_a *a;
    int rc;

    if ((a = calloc(1, sizeof *a)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->o = o;
    a->g = (struct req_source){ .line = line_fair, .tag = tag,
                                .changing = o->changing,
                                .n = o->digests * (o->changing ? 2 : 1) };
    if ((rc = pthread_create(&at, NULL, fair_a_main, a)) != 0) {
        snprintf(err, errlen, "pthread_create: %s", strerror(rc));
        free(a);
        return -1;
    }
    rc = fair_b_finds(o, b, a, fr, err, errlen);
    if (rc == 0)
        fr->a_cut = !atomic_load(&a->done);
    atomic_store(&a->stop, 1);
    pthread_join(at, NULL);
    if (rc == 0) {
        fr->a_requests = a->r.requests;
        fr->a_replies = a->r.replies;
        fr->a_errors = a->r.errors;
        fr->a_seconds = time_ns_to_s(a->r.service_ns);
    }
    free(a);
    return rc;
}

/* The lock figures of the run (STATS st, read after it) and the figure
 * B's latencies are compared against. */
static void fair_figures(struct fair_result *fr, const struct stats *st)
{
    double med[CALIBRATE_RUNS];

    fr->hold_max_us = stats_num(st, "lock_hold_max_us");
    fr->hold_p99_us = stats_num(st, "lock_hold_p99_us");
    fr->wait_max_us = stats_num(st, "lock_wait_max_us");
    fr->wait_p99_us = stats_num(st, "lock_wait_p99_us");
    fr->acquisitions = stats_num(st, "lock_acquisitions");
    fr->contended = stats_num(st, "lock_contended");
    for (int k = 0; k < CALIBRATE_RUNS; k++)
        med[k] = fr->have_lock ? (double)fr->alone_hold_us[k]
                               : (double)fr->alone_rtt_ns[k] / 1e3;
    fr->alone_med_us = (long long)bench_median(med, CALIBRATE_RUNS);
    fr->one_hold_us = fr->have_lock ? fr->hold_max_us : fr->alone_med_us;
}

/* With --changing: the store as we found it (A's ADDs deleted). */
static void fair_restore(const struct opts *o, const char *tag)
{
    struct req_source g = { .line = line_unfair, .tag = tag,
                            .n = o->digests };
    struct pl_source src;
    struct pl_opts po;
    struct pl_result r;

    req_source_init(&src, &g);
    session_opts(&po, o, SESSION_S, NULL, NULL);
    pl_run(&po, &src, &r, NULL);
}

int run_fairness(const struct opts *o, struct fair_result *fr,
                 char *err, size_t errlen)
{
    char tag[48], reply[CTL_REPLY_MAX];
    struct ctl c, b;
    struct stats st;

    memset(fr, 0, sizeof *fr);
    hist_init(&fr->find);
    snprintf(tag, sizeof tag, "Blfair%d", (int)getpid());
    if (stats_fetch(o, &st, err, errlen) < 0)
        return -1;
    fr->have_lock = stats_num(&st, "lock_hold_max_us") >= 0;
    if (ctl_open(&c, o->host, o->port, CTL_MS) < 0) {
        snprintf(err, errlen, "%s", c.err);
        return -1;
    }
    if (fair_calibrate(o, &c, tag, fr, err, errlen) < 0)
        goto fail_c;
    if (ctl_open(&b, o->host, o->port, CTL_MS) < 0) {
        snprintf(err, errlen, "%s", b.err);
        goto fail_c;
    }
    if (digest_cache_cold(&c, tag) < 0 ||
        (fr->have_lock && ctl_query(&c, "STATS RESET", reply,
                                    sizeof reply) < 0)) {
        snprintf(err, errlen, "%s", c.err);
        goto fail_b;
    }
    if (stats_fetch(o, &st, err, errlen) < 0)
        goto fail_b;
    long long base = stats_num(&st, "connections_current");
    if (fair_race(o, tag, &b, fr, err, errlen) < 0)
        goto fail_b;
    if (fr->a_cut && settle(o, base, &fr->a_settle_s) < 0)
        snprintf(fr->note, sizeof fr->note, "A's session was still running "
                 "%.0f s after A gave up", SESSION_S);
    if (stats_fetch(o, &st, err, errlen) < 0)
        goto fail_b;
    fair_figures(fr, &st);
    ctl_close(&b);
    ctl_close(&c);
    if (o->changing)
        fair_restore(o, tag);
    return 0;
fail_b:
    ctl_abandon(&b);
fail_c:
    ctl_abandon(&c);
    return -1;
}

static void fmt_us(char *buf, size_t len, long long us)
{
    if (us < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3f", (double)us / 1000.0);
}

/* "FIND p99 < 2 x WHAT (N ms): yes; max: no". The maximum too: when
 * few FINDs wait, p99 can hide them. */
static void verdict(const char *what, long long us, const struct hist *find)
{
    double lim = 2.0 * (double)us / 1000.0;

    if (us < 0)
        return;
    if (find->count == 0) {
        printf("FIND p99 < 2 x %s: no FIND answered\n", what);
        return;
    }
    printf("FIND p99 < 2 x %s (2 x %.3f ms): %s; max: %s\n", what,
           us / 1000.0,
           time_ns_to_ms(hist_percentile(find, 99)) < lim ? "yes" : "NO",
           time_ns_to_ms(find->max) < lim ? "yes" : "NO");
}

void print_fairness(const struct opts *o, const struct fair_result *fr)
{
    char p50[32], p99[32], pmax[32], x[32], y[32];
    uint64_t lo = UINT64_MAX, hi = 0;
    long long hlo = LLONG_MAX, hhi = -1;

    for (int k = 0; k < CALIBRATE_RUNS; k++) {
        lo = fr->alone_rtt_ns[k] < lo ? fr->alone_rtt_ns[k] : lo;
        hi = fr->alone_rtt_ns[k] > hi ? fr->alone_rtt_ns[k] : hi;
        hlo = fr->alone_hold_us[k] < hlo ? fr->alone_hold_us[k] : hlo;
        hhi = fr->alone_hold_us[k] > hhi ? fr->alone_hold_us[k] : hhi;
    }
    printf("\n## fairness: A pipelines %lu DIGESTs%s; B asks FIND, one at a "
           "time\n", o->digests, o->changing ? ", an ADD before each "
           "(every DIGEST rehashes)" : " of an unchanged store");
    printf("%-44s %s\n", "", "ms");
    if (fr->have_lock) {
        fmt_us(x, sizeof x, hlo);
        fmt_us(y, sizeof y, hhi);
        printf("%-44s %s .. %s\n", "one DIGEST's lock hold (STATS, 3 alone)",
               x, y);
    }
    printf("%-44s %.3f .. %.3f\n", "one DIGEST alone, round trip (3 runs)",
           time_ns_to_ms(lo), time_ns_to_ms(hi));
    printf("%-44s %.3f (%llu of %llu replies%s)\n", "A's batch",
           fr->a_seconds * 1e3, (unsigned long long)fr->a_replies,
           (unsigned long long)fr->a_requests,
           fr->a_cut ? ", cut at D" : "");
    if (fr->a_cut)
        printf("%-44s %.1f s\n", "then the server still ran A's batch for",
               fr->a_settle_s);
    fmt_pct(p50, sizeof p50, hist_percentile(&fr->find, 50));
    fmt_pct(p99, sizeof p99, hist_percentile(&fr->find, 99));
    /* The max rounded as the percentiles are: a p99 rounded up to three
     * digits once printed above a max given to the microsecond. */
    fmt_pct(pmax, sizeof pmax, fr->find.max);
    printf("%-44s %s / %s / %s (%llu FINDs in %.1f s)\n",
           "B's FIND p50 / p99 / max", p50, p99, pmax,
           (unsigned long long)fr->find.count, fr->b_seconds);
    if (fr->have_lock) {
        fmt_us(x, sizeof x, fr->hold_max_us);
        fmt_us(y, sizeof y, fr->wait_max_us);
        printf("%-44s %s / %s\n", "lock hold max / wait max during the run",
               x, y);
        printf("%-44s %lld of %lld\n", "lock acquisitions contended",
               fr->contended, fr->acquisitions);
    }
    verdict("the run's longest lock hold", fr->have_lock ? fr->hold_max_us
            : -1, &fr->find);
    verdict(fr->have_lock ? "a lone DIGEST's hold (median of 3)"
            : "a lone DIGEST's round trip (median of 3)", fr->alone_med_us,
            &fr->find);
    if (fr->note[0])
        printf("note: %s\n", fr->note);
}

void json_fairness(const struct opts *o, const struct fair_result *fr)
{
    printf("\"fairness\": {\"digests\": %lu, \"changing\": %s, "
           "\"have_lock_figures\": %s, \"digest_alone_hold_us\": [",
           o->digests, o->changing ? "true" : "false",
           fr->have_lock ? "true" : "false");
    for (int k = 0; k < CALIBRATE_RUNS; k++) {
        fputs(k ? ", " : "", stdout);
        if (fr->alone_hold_us[k] < 0)
            fputs("null", stdout);
        else
            printf("%lld", fr->alone_hold_us[k]);
    }
    printf("], \"digest_alone_rtt_us\": [");
    for (int k = 0; k < CALIBRATE_RUNS; k++)
        printf("%s%.1f", k ? ", " : "", fr->alone_rtt_ns[k] / 1e3);
    printf("], \"alone_median_us\": %lld, \"one_digest_us\": %lld, "
           "\"a_requests\": %llu, "
           "\"a_replies\": %llu, \"a_errors\": %llu, \"a_seconds\": %.3f, "
           "\"a_cut\": %s, \"a_settle_s\": %.3f, ", fr->alone_med_us,
           fr->one_hold_us,
           (unsigned long long)fr->a_requests,
           (unsigned long long)fr->a_replies,
           (unsigned long long)fr->a_errors, fr->a_seconds,
           fr->a_cut ? "true" : "false", fr->a_settle_s);
    printf("\"finds\": %llu, \"find_errors\": %llu, \"b_seconds\": %.3f, "
           "\"find_p50_us\": %g, \"find_p99_us\": %g, \"find_max_us\": %.1f, ",
           (unsigned long long)fr->find.count,
           (unsigned long long)fr->find_errors, fr->b_seconds,
           round_sig(hist_percentile(&fr->find, 50) / 1e3, SIG_DIGITS),
           round_sig(hist_percentile(&fr->find, 99) / 1e3, SIG_DIGITS),
           fr->find.count ? fr->find.max / 1e3 : 0.0);
    json_ll("lock_hold_max_us", fr->hold_max_us);
    json_ll("lock_hold_p99_us", fr->hold_p99_us);
    json_ll("lock_wait_max_us", fr->wait_max_us);
    json_ll("lock_wait_p99_us", fr->wait_p99_us);
    json_ll("lock_acquisitions", fr->acquisitions);
    json_ll("lock_contended", fr->contended);
    printf("\"find_p99_under_2x_digest\": %s, "
           "\"find_max_under_2x_digest\": %s, \"note\": ",
           fr->find.count && hist_percentile(&fr->find, 99) / 1e3 <
           2.0 * (double)fr->one_hold_us ? "true" : "false",
           fr->find.count && fr->find.max / 1e3 <
           2.0 * (double)fr->one_hold_us ? "true" : "false");
    json_write_str(stdout, fr->note);
    printf("}");
}
