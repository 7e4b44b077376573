/* bench_report.c -- what ssn-bench prints (bench.h): the text report, one
 * JSON object, or a CSV header and row, and the progress line; and the
 * server's CPU time from /proc/PID/stat.
 *
 * Latencies come from common/hist.h, whose buckets are about 3% wide: a
 * percentile is known to two or three significant digits, so three are
 * printed (0.213 ms, 1.07 ms, 12.6 ms) and never a bucket's edge to the
 * nanosecond. The server's CPU time is in clock ticks (10 ms at 100 Hz),
 * so its per-request figure is printed with three digits too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "jsonw.h"
#include "timeutil.h"

void bench_counts_add(struct bench_counts *dst, const struct bench_counts *src)
{
    dst->sent += src->sent;
    dst->replies += src->replies;
    for (int k = 0; k < BK_KINDS; k++)
        dst->kind[k] += src->kind[k];
    dst->error_replies += src->error_replies;
}

/* 10^n, for small n of either sign. (No libm: the clients link without
 * it, and the unit-test runner with them.) */
const char *bench_fmt_latency(uint64_t ns, char *buf, size_t cap)
{
    char num[20];                   /* "0.00100", "18400000000" */
    double ms = time_ns_to_ms(ns);
    if (hist_round3(ms) >= 1000)
        snprintf(buf, cap, "%s s", hist_fmt3(ms / 1000, num,
                                                  sizeof(num)));
    else
        snprintf(buf, cap, "%s ms", hist_fmt3(ms, num, sizeof(num)));
    return buf;
}

/* The percentiles reported, and their names in each format. */
static const struct {
    double p;
    const char *text, *key;
} pcts[] = {
    { 50, "p50", "p50" }, { 90, "p90", "p90" }, { 99, "p99", "p99" },
    { 99.9, "p99.9", "p99_9" }, { 100, "max", "max" },
};
#define NPCTS (sizeof(pcts) / sizeof(pcts[0]))

static double per_s(const struct bench_result *r)
{
    double s = time_ns_to_s(r->elapsed_ns);
    return s > 0 ? (double)r->c.replies / s : 0;
}

/* Server CPU microseconds per reply; -1 without --server-pid. */
static double cpu_per_req(const struct bench_result *r)
{
    if (!r->have_cpu)
        return -1;
    return r->c.replies ? (double)r->server_cpu_us / (double)r->c.replies : 0;
}

/* The server's CPU time per request with the digits it has: the kernel
 * counts whole clock ticks, so one tick over the replies is the step, and
 * no digit finer than that (nor more than 3) is printed. */
static const char *fmt_cpu(const struct bench_result *r, char *buf,
                           size_t cap)
{
    long hz = sysconf(_SC_CLK_TCK);
    double v = cpu_per_req(r), step = 1e6 / (double)(hz > 0 ? hz : 100);
    int dec = 0;

    if (r->c.replies)
        step /= (double)r->c.replies;
    for (double unit = 0.1; unit >= step && dec < 6; unit /= 10)
        dec++;
    hist_fmt3(v, buf, cap);
    const char *dot = strchr(buf, '.');
    if (dot && (int)strlen(dot + 1) > dec)
        snprintf(buf, cap, "%.*f", dec, hist_round3(v));
    return buf;
}

static void text_workload(FILE *f, const struct bench_config *cf)
{
    fprintf(f, "ssn-bench: %s dialect, %s:%s, %u connection%s on %u "
            "thread%s, pipeline %u\n", cf->dialect, cf->host, cf->port,
            cf->connections, cf->connections == 1 ? "" : "s", cf->threads,
            cf->threads == 1 ? "" : "s", cf->pipeline);
    if (cf->requests)
        fprintf(f, "workload:  %llu requests",
                (unsigned long long)cf->requests);
    else
        fprintf(f, "workload:  %g s of requests", cf->duration_s);
    fprintf(f, ", add:find:delete %u:%u:%u over %llu keys\n", cf->mix[0],
            cf->mix[1], cf->mix[2], (unsigned long long)cf->keys);
    if (cf->preload)
        fprintf(f, "           keys 0 to %llu added first, untimed\n",
                (unsigned long long)cf->preload - 1);
    if (cf->new_keys)
        fprintf(f, "           every ADD names a new key (from %llu up, "
                "each once)\n", (unsigned long long)(cf->keys > cf->preload
                ? cf->keys : cf->preload));
}

/* The server's store lock during the run, beside the latencies: how
 * often it was taken and waited for, how long in all and per time, and
 * the share of the run it was held. */
static void text_lock(FILE *f, const struct bench_result *r)
{
    const struct bench_server_lock *l = &r->lock;
    char w[24], h[24], ew[24], eh[24];
    double run_us = (double)r->elapsed_ns / 1e3;

    if (!l->known) {
        if (l->note[0])
            fprintf(f, "lock:      not read: %s\n", l->note);
        return;
    }
    if (!l->acquisitions) {
        fprintf(f, "lock:      none taken (%s)\n", l->mode);
        return;
    }
    hist_fmt3((double)l->wait_us / 1e3, w, sizeof(w));
    hist_fmt3((double)l->hold_us / 1e3, h, sizeof(h));
    hist_fmt3((double)l->wait_us / (double)l->acquisitions, ew, sizeof(ew));
    hist_fmt3((double)l->hold_us / (double)l->acquisitions, eh, sizeof(eh));
    fprintf(f, "lock:      %s server's store lock%s: %llu acquisition%s, "
            "%.1f%% contended; waited %s ms in all (%s us each), held %s ms "
            "(%s us each)", l->mode,
            l->preload_included ? ", preload included" : "",
            (unsigned long long)l->acquisitions,
            l->acquisitions == 1 ? "" : "s",
            100.0 * (double)l->contended / (double)l->acquisitions, w, ew, h,
            eh);
    /* Against the run's time only when the figures are the run's alone. */
    if (!l->preload_included && run_us > 0)
        fprintf(f, " = %.0f%% of the run", 100.0 * (double)l->hold_us / run_us);
    fputc('\n', f);
}

void bench_report_text(FILE *f, const struct bench_config *cf,
                       const struct bench_result *r)
{
    char a[32];
    text_workload(f, cf);
    fprintf(f, "requests:  %llu sent, %llu answered in %.2f s: %.0f "
            "requests/s%s\n", (unsigned long long)r->c.sent,
            (unsigned long long)r->c.replies, time_ns_to_s(r->elapsed_ns),
            per_s(r), r->interrupted ? " (interrupted)" : "");
    /* Each kind on its own, "error" only for a real error: a miss and an
     * ADD of a key that exists are answers, not errors, even where the
     * dialect phrases them as error lines (ssn's "Error: ... not found"). */
    static const char *const text[BK_KINDS] = {
        [BK_STORED] = "stored", [BK_EXISTS] = "exists", [BK_FOUND] = "found",
        [BK_DELETED] = "deleted", [BK_MISSING] = "not found",
        [BK_ERROR] = "error",
    };
    fprintf(f, "replies:  ");
    for (int k = 0; k < BK_KINDS; k++)
        fprintf(f, " %s %llu%s", text[k], (unsigned long long)r->c.kind[k],
                k + 1 < BK_KINDS ? "," : "\n");
    if (r->first_error[0])
        fprintf(f, "first error reply: %s\n", r->first_error);
    fprintf(f, "latency:  ");
    for (size_t i = 0; i < NPCTS; i++)
        fprintf(f, " %s %s%s", pcts[i].text,
                bench_fmt_latency(hist_percentile(&r->lat, pcts[i].p), a,
                                  sizeof(a)), i + 1 < NPCTS ? "," : "\n");
    if (r->have_cpu)
        fprintf(f, "server:    %s us CPU per request (pid %ld: %.2f s user "
                "+ system)\n", fmt_cpu(r, a, sizeof(a)), r->server_pid,
                (double)r->server_cpu_us / 1e6);
    text_lock(f, r);
}

void bench_report_json(FILE *f, const struct bench_config *cf,
                       const struct bench_result *r)
{
    char a[32];
    fprintf(f, "{\"dialect\":");
    json_write_str(f, cf->dialect);
    fprintf(f, ",\"host\":");
    json_write_str(f, cf->host);
    fprintf(f, ",\"port\":%s,\"connections\":%u,\"threads\":%u,"
            "\"pipeline\":%u,\"mix\":\"%u:%u:%u\",\"keys\":%llu,"
            "\"preload\":%llu,\"new_keys\":%s,\"requests_asked\":%llu,"
            "\"duration_s\":%g,"
            "\"requests\":%llu,\"replies\":%llu,\"seconds\":%.3f,"
            "\"requests_per_s\":%.0f,\"interrupted\":%s,\"replies_by_kind\":{",
            cf->port, cf->connections, cf->threads, cf->pipeline,
            cf->mix[0], cf->mix[1], cf->mix[2], (unsigned long long)cf->keys,
            (unsigned long long)cf->preload, cf->new_keys ? "true" : "false",
            (unsigned long long)cf->requests, cf->duration_s,
            (unsigned long long)r->c.sent, (unsigned long long)r->c.replies,
            time_ns_to_s(r->elapsed_ns), per_s(r),
            r->interrupted ? "true" : "false");
    for (int k = 0; k < BK_KINDS; k++)
        fprintf(f, "%s\"%s\":%llu", k ? "," : "",
                bench_kind_name((enum bench_kind)k),
                (unsigned long long)r->c.kind[k]);
    fprintf(f, "},\"error_replies\":%llu,\"first_error\":",
            (unsigned long long)r->c.error_replies);
    json_write_str(f, r->first_error);
    fprintf(f, ",\"latency_ms\":{");
    for (size_t i = 0; i < NPCTS; i++)
        fprintf(f, "%s\"%s\":%s", i ? "," : "", pcts[i].key,
                hist_fmt3(time_ns_to_ms(hist_percentile(&r->lat,
                               pcts[i].p)), a, sizeof(a)));
    fprintf(f, "},\"server_lock\":");
    if (r->lock.known) {
        fprintf(f, "{\"mode\":");
        json_write_str(f, r->lock.mode);
        fprintf(f, ",\"preload_included\":%s,\"acquisitions\":%llu,"
                "\"contended\":%llu,\"wait_us\":%llu,\"hold_us\":%llu}",
                r->lock.preload_included ? "true" : "false",
                (unsigned long long)r->lock.acquisitions,
                (unsigned long long)r->lock.contended,
                (unsigned long long)r->lock.wait_us,
                (unsigned long long)r->lock.hold_us);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\"server_cpu_us_per_request\":%s}\n",
            r->have_cpu ? hist_fmt3(cpu_per_req(r), a, sizeof(a))
                        : "null");
}

void bench_report_csv(FILE *f, const struct bench_config *cf,
                      const struct bench_result *r)
{
    char a[32];
    fprintf(f, "dialect,connections,threads,pipeline,mix,keys,preload,"
            "requests,replies,seconds,requests_per_s,interrupted");
    for (int k = 0; k < BK_KINDS; k++)
        fprintf(f, ",%s", bench_kind_name((enum bench_kind)k));
    fprintf(f, ",error_replies");
    for (size_t i = 0; i < NPCTS; i++)
        fprintf(f, ",%s_ms", pcts[i].key);
    fprintf(f, ",server_cpu_us_per_request,lock_acquisitions,lock_contended,"
            "lock_wait_us,lock_hold_us,new_keys\n");

    fprintf(f, "%s,%u,%u,%u,%u:%u:%u,%llu,%llu,%llu,%llu,%.3f,%.0f,%d",
            cf->dialect, cf->connections, cf->threads, cf->pipeline,
            cf->mix[0], cf->mix[1], cf->mix[2], (unsigned long long)cf->keys,
            (unsigned long long)cf->preload, (unsigned long long)r->c.sent,
            (unsigned long long)r->c.replies, time_ns_to_s(r->elapsed_ns),
            per_s(r), r->interrupted);
    for (int k = 0; k < BK_KINDS; k++)
        fprintf(f, ",%llu", (unsigned long long)r->c.kind[k]);
    fprintf(f, ",%llu", (unsigned long long)r->c.error_replies);
    for (size_t i = 0; i < NPCTS; i++)
        fprintf(f, ",%s", hist_fmt3(time_ns_to_ms(
                hist_percentile(&r->lat, pcts[i].p)), a, sizeof(a)));
    fprintf(f, ",%s", r->have_cpu ? hist_fmt3(cpu_per_req(r), a,
                                                   sizeof(a)) : "");
    if (r->lock.known)
        fprintf(f, ",%llu,%llu,%llu,%llu",
                (unsigned long long)r->lock.acquisitions,
                (unsigned long long)r->lock.contended,
                (unsigned long long)r->lock.wait_us,
                (unsigned long long)r->lock.hold_us);
    else
        fprintf(f, ",,,,");
    fprintf(f, ",%d\n", cf->new_keys);
}

void bench_progress(FILE *f, uint64_t done, uint64_t elapsed_ns)
{
    double s = time_ns_to_s(elapsed_ns);
    fprintf(f, "\r%llu requests, %.0f requests/s, %.1f s\033[K",
            (unsigned long long)done, s > 0 ? (double)done / s : 0.0, s);
    fflush(f);
}

int bench_stat_ticks(const char *line, uint64_t *ticks)
{
    /* The command name may hold spaces and ')': the fields after it
     * start at the last ')'. utime and stime are fields 14 and 15, the
     * 12th and 13th after it. */
    const char *p = strrchr(line, ')');
    unsigned long long ut, st;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                     "%llu %llu", &ut, &st) != 2)
        return -1;
    *ticks = ut + st;
    return 0;
}

int bench_proc_cpu_us(pid_t pid, uint64_t *us)
{
    char path[64], line[1024];
    uint64_t ticks;
    long hz = sysconf(_SC_CLK_TCK);

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    char *got = fgets(line, sizeof(line), f);
    fclose(f);
    if (!got || bench_stat_ticks(line, &ticks) || hz <= 0)
        return -EINVAL;
    *us = ticks * 1000000ull / (uint64_t)hz;
    return 0;
}
