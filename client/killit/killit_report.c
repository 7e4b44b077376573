/* killit_report.c -- kill_it's output: the per-client table, and every
 * figure as JSON and CSV for the demo and for scripts (killit.h).
 */
#include <stdio.h>
#include <string.h>
#include "jsonw.h"
#include "killit.h"
#include "timeutil.h"

const char *ki_verdict_name(enum ki_verdict v)
{
    return v == KI_VERIFIED ? "verified" : v == KI_FAILED ? "FAILED"
                                                          : "not verified";
}

static int finished(const struct killit *k, unsigned i)
{
    return atomic_load(&k->slot[i].done) && k->slot[i].res.fail == PL_OK;
}

void ki_service_summary(const struct killit *k, double *mean, double *min,
                        double *max)
{
    double sum = 0;
    unsigned n = 0;
    *min = *max = 0;
    for (unsigned i = 0; i < k->nclients; i++) {
        if (!finished(k, i))
            continue;
        double s = time_ns_to_s(k->slot[i].res.service_ns);
        if (n == 0 || s < *min)
            *min = s;
        if (n == 0 || s > *max)
            *max = s;
        sum += s;
        n++;
    }
    *mean = n ? sum / n : 0;
}

static const char *client_state(const struct killit *k, unsigned i)
{
    if (!atomic_load(&k->slot[i].done))
        return "killed";
    return pl_fail_name(k->slot[i].res.fail);
}

static double rps(const struct pl_result *r)
{
    double s = time_ns_to_s(r->service_ns);
    return s > 0 ? (double)r->replies / s : 0;
}


/* A duration in microseconds as "123 us", "4.56 ms" or "7.89 s". */
static const char *dur_us(uint64_t us, char *buf, size_t len)
{
    char n[32];
    if (us < 1000)
        snprintf(buf, len, "%llu us", (unsigned long long)us);
    else if (us < 1000000)
        snprintf(buf, len, "%s ms", hist_fmt3(us / 1e3, n, sizeof(n)));
    else
        snprintf(buf, len, "%s s", hist_fmt3(us / 1e6, n, sizeof(n)));
    return buf;
}

void ki_print_lock(const struct killit *k, FILE *f)
{
    char a[32], b[32], c[32], d[32], e[32], g[32];

    if (!k->lock_known) {
        if (k->lock_note[0])
            fprintf(f, "lock: no figures (%s)\n", k->lock_note);
        return;
    }
    if (k->lock_acq == 0) {
        fprintf(f, "lock: none taken (%s mode has no store lock)\n",
                k->lock_mode[0] ? k->lock_mode : "this");
        return;
    }
    double share = k->wall_s > 0 ? k->lock_hold_us / 1e6 / k->wall_s : 0;
    fprintf(f, "lock: %llu acquisitions, %llu contended (%.0f%%); "
            "wait total %s, hold total %s = %.0f%% of the %.2f s run\n",
            (unsigned long long)k->lock_acq,
            (unsigned long long)k->lock_contended,
            100.0 * (double)k->lock_contended / (double)k->lock_acq,
            dur_us(k->lock_wait_us, a, sizeof(a)),
            dur_us(k->lock_hold_us, b, sizeof(b)), 100 * share, k->wall_s);
    fprintf(f, "      wait max %s, p99 %s; hold max %s, p99 %s\n"
            "      (from STATS RESET before the clients to STATS after "
            "them, which counts)\n",
            dur_us(k->lock_wait_max_us, c, sizeof(c)),
            dur_us(k->lock_wait_p99_us, d, sizeof(d)),
            dur_us(k->lock_hold_max_us, e, sizeof(e)),
            dur_us(k->lock_hold_p99_us, g, sizeof(g)));
}

void ki_print_table(const struct killit *k, FILE *f)
{
    fprintf(f, "kill_it: %u clients x %llu events -> %s:%s", k->nclients,
            (unsigned long long)k->nevents, k->host, k->port);
    if (k->preload)
        fprintf(f, ", %llu people preloaded", (unsigned long long)k->preload);
    if (k->rate && k->nslow < k->nclients)
        fprintf(f, ", clients 0-%u reading at most %llu bytes/s",
                k->nslow - 1, (unsigned long long)k->rate);
    else if (k->rate)
        fprintf(f, ", each reading at most %llu bytes/s",
                (unsigned long long)k->rate);
    fprintf(f, "\n%6s %9s %10s %9s %9s %9s %7s  %s\n", "client", "requests",
            "service_s", "req/s", "p50_ms", "p99_ms", "errors", "result");
    for (unsigned i = 0; i < k->nclients; i++) {
        const struct pl_result *r = &k->slot[i].res;
        uint64_t requests = atomic_load(&k->slot[i].done) ? r->requests :
                            atomic_load(&k->slot[i].prog.sent);
        char p50[32], p99[32];
        fprintf(f, "%6u %9llu %10.3f %9.0f %9s %9s %7llu  %s\n", i,
                (unsigned long long)requests, time_ns_to_s(r->service_ns),
                rps(r), hist_fmt3(time_ns_to_ms(r->lat_p50), p50, sizeof(p50)),
                hist_fmt3(time_ns_to_ms(r->lat_p99), p99, sizeof(p99)),
                (unsigned long long)r->errors, client_state(k, i));
    }
    double mean, min, max;
    ki_service_summary(k, &mean, &min, &max);
    if (min > 0)
        fprintf(f, "mean service time %.3f s, max/min %.2f\n", mean,
                max / min);
    else
        fprintf(f, "mean service time: no client finished its session\n");
}

static void merged_latency(const struct killit *k, struct hist *h)
{
    hist_init(h);
    for (unsigned i = 0; i < k->nclients; i++)
        if (atomic_load(&k->slot[i].done))
            hist_merge(h, &k->slot[i].lat);
}

/* Client i's member of "per_client", on a line of its own. */
static void json_client(const struct killit *k, unsigned i, FILE *f)
{
    const struct pl_result *r = &k->slot[i].res;
    fprintf(f, "    {\"client\": %u, \"seed\": %llu, \"result\": \"%s\", "
            "\"failure\": ", i, (unsigned long long)(k->seed + i),
            client_state(k, i));
    json_write_str(f, r->what);
    fprintf(f, ", \"requests\": %llu, \"replies\": %llu, "
            "\"errors\": %llu, \"bad_replies\": %llu, "
            "\"service_s\": %.6f, \"requests_per_s\": %.1f, "
            "\"p50_ms\": %.6f, \"p90_ms\": %.6f, \"p99_ms\": %.6f, "
            "\"max_ms\": %.6f, \"inflight_max\": %llu, "
            "\"bytes_sent\": %llu, \"bytes_received\": %llu}%s\n",
            (unsigned long long)r->requests,
            (unsigned long long)r->replies, (unsigned long long)r->errors,
            (unsigned long long)r->bad, time_ns_to_s(r->service_ns),
            rps(r), time_ns_to_ms(r->lat_p50), time_ns_to_ms(r->lat_p90),
            time_ns_to_ms(r->lat_p99), time_ns_to_ms(r->lat_max),
            (unsigned long long)r->inflight_max,
            (unsigned long long)r->bytes_out,
            (unsigned long long)r->bytes_in,
            i + 1 < k->nclients ? "," : "");
}

int ki_write_json(const struct killit *k, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    double mean, min, max;
    static struct hist h;       /* 15 KiB: not on the stack */
    ki_service_summary(k, &mean, &min, &max);
    merged_latency(k, &h);

    fprintf(f, "{\n  \"host\": ");
    json_write_str(f, k->host);
    fprintf(f, ", \"port\": %s, \"clients\": %u, \"events\": %llu,\n"
            "  \"seed\": %llu, \"preload\": %llu, \"slow_clients\": %u, "
            "\"rate_bytes_per_s\": %llu, "
            "\"mix\": [%u, %u, %u, %u],\n", k->port, k->nclients,
            (unsigned long long)k->nevents, (unsigned long long)k->seed,
            (unsigned long long)k->preload, k->nslow,
            (unsigned long long)k->rate, k->mix.w[0], k->mix.w[1],
            k->mix.w[2], k->mix.w[3]);
    fprintf(f, "  \"verdict\": \"%s\", \"reason\": ",
            ki_verdict_name(k->verdict));
    json_write_str(f, k->reasons);
    fprintf(f, ",\n  \"start_count\": %lld, \"expected_count\": %zu, "
            "\"expected_digest\": \"%s\",\n  \"server_count\": %lld, "
            "\"server_check\": ", k->start_count, k->expect_count,
            k->expect_digest, k->end_count);
    json_write_str(f, k->end_check);
    fprintf(f, ", \"server_digest\": ");
    json_write_str(f, k->end_digest);
    fprintf(f, ",\n  \"wall_s\": %.6f, \"service_s\": {\"mean\": %.6f, "
            "\"min\": %.6f, \"max\": %.6f, \"max_min_ratio\": %.4f},\n",
            k->wall_s, mean, min, max, min > 0 ? max / min : 0.0);
    fprintf(f, "  \"latency_ms\": {\"p50\": %.6f, \"p90\": %.6f, "
            "\"p99\": %.6f, \"max\": %.6f},\n  \"per_client\": [\n",
            time_ns_to_ms(hist_percentile(&h, 50)),
            time_ns_to_ms(hist_percentile(&h, 90)),
            time_ns_to_ms(hist_percentile(&h, 99)), time_ns_to_ms(h.max));
    for (unsigned i = 0; i < k->nclients; i++)
        json_client(k, i, f);
    fprintf(f, "  ]\n}\n");
    return fclose(f) ? -1 : 0;
}

int ki_write_csv(const struct killit *k, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "client,seed,requests,replies,errors,bad_replies,service_s,"
            "requests_per_s,p50_ms,p90_ms,p99_ms,max_ms,inflight_max,"
            "bytes_sent,bytes_received,result,verdict\n");
    for (unsigned i = 0; i < k->nclients; i++) {
        const struct pl_result *r = &k->slot[i].res;
        fprintf(f, "%u,%llu,%llu,%llu,%llu,%llu,%.6f,%.1f,%.6f,%.6f,%.6f,"
                "%.6f,%llu,%llu,%llu,%s,%s\n", i,
                (unsigned long long)(k->seed + i),
                (unsigned long long)r->requests,
                (unsigned long long)r->replies, (unsigned long long)r->errors,
                (unsigned long long)r->bad, time_ns_to_s(r->service_ns),
                rps(r), time_ns_to_ms(r->lat_p50), time_ns_to_ms(r->lat_p90),
                time_ns_to_ms(r->lat_p99), time_ns_to_ms(r->lat_max),
                (unsigned long long)r->inflight_max,
                (unsigned long long)r->bytes_out,
                (unsigned long long)r->bytes_in, client_state(k, i),
                ki_verdict_name(k->verdict));
    }
    return fclose(f) ? -1 : 0;
}
