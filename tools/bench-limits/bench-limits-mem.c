/* bench-limits-mem.c -- bench-limits' memory part (docs/LIMITS.md): C
 * clients each pipeline P PRINTs and never read; the server's VmRSS
 * (/proc/PID/status) every 50 ms for S seconds against its RSS with the
 * store alone, and another client's COUNT latency meanwhile, then one lone
 * PRINT read whole. The COUNT client runs in a thread of its own; it
 * shares with main only struct counter's stop flag, and its figures once
 * joined.
 */
#include "bench-limits.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "jsonw.h"
#include "net.h"
#include "pipeline.h"

/* The COUNT client, in its own thread. */
struct counter {
    const struct opts *o;
    struct ctl c;
    uint64_t end_ns;            /* the window's end */
    struct hist *lat;
    uint64_t pending_ns;
    atomic_int stop;
};

static void *counter_main(void *arg)
{
    struct counter *k = arg;
    char reply[64];

    while (!atomic_load(&k->stop)) {
        uint64_t now = time_now_ns(), s;
        /* the wait for one COUNT ends with the window (and 1 s more) */
        k->c.timeout_ms = (int)((k->end_ns > now ? k->end_ns - now : 0) /
                                TIME_NS_PER_MS) + 1000;
        s = time_now_ns();
        if (ctl_query(&k->c, "COUNT", reply, sizeof reply) < 0) {
            k->pending_ns = time_now_ns() - s;
            break;              /* the connection is out of step now */
        }
        hist_record(k->lat, time_now_ns() - s);
        time_sleep_ns(COUNT_PAUSE_NS);
    }
    return NULL;
}

static long long stats_delta(const struct stats *a, const struct stats *b,
                             const char *name)
{
    long long x = stats_num(a, name), y = stats_num(b, name);
    return x < 0 || y < 0 ? -1 : y - x;
}

/* One PRINT of a store changed just before, read whole: the listing's
 * size, its round trip and (STATS, after a STATS RESET) its lock hold:
 * building the listing in buffered mode, streaming it in fine mode. */
static int lone_print(const struct opts *o, struct mem_result *mr,
                      char *err, size_t errlen)
{
    struct req_source g = { .line = line_word, .n = 1, .word = "PRINT" };
    struct pl_source src;
    struct pl_opts po;
    struct pl_result r;
    struct stats st;
    struct ctl c;
    char tag[48], reply[CTL_REPLY_MAX];
    bool have_lock = stats_fetch(o, &st, err, errlen) == 0 &&
                     stats_num(&st, "lock_hold_max_us") >= 0;

    mr->build_hold_us = -1;
    snprintf(tag, sizeof tag, "Blmem%d", (int)getpid());
    if (ctl_open(&c, o->host, o->port, CTL_MS) < 0 ||
        digest_cache_cold(&c, tag) < 0 ||
        (have_lock && ctl_query(&c, "STATS RESET", reply, sizeof reply) < 0)) {
        snprintf(err, errlen, "lone PRINT: %s", c.err);
        if (c.fd >= 0)
            ctl_abandon(&c);
        return -1;
    }
    ctl_close(&c);
    req_source_init(&src, &g);
    session_opts(&po, o, SESSION_S, NULL, NULL);
    if (pl_run(&po, &src, &r, NULL) < 0 || r.bytes_in <= 4) {
        snprintf(err, errlen, "lone PRINT: %s", r.what);
        return -1;
    }
    mr->listing_bytes = r.bytes_in - 4;         /* "Bye\n" */
    mr->print_rtt_ns = r.lat_max;
    if (have_lock && stats_fetch(o, &st, err, errlen) == 0)
        mr->build_hold_us = stats_num(&st, "lock_hold_max_us");
    return 0;
}

/* prints PRINTs in one buffer of prints * 6 bytes, the caller's to free;
 * NULL when out of memory. */
static char *mem_prints(unsigned long prints)
{
    char *req = malloc(prints * 6);

    if (req != NULL)
        for (unsigned long i = 0; i < prints; i++)
            memcpy(req + i * 6, "PRINT\n", 6);
    return req;
}

/* Connects up to o->clients clients, each sending its o->prints PRINTs
 * (req, len bytes) and never reading; their sockets in fds, how many in
 * mr->opened, why it stopped early in mr->note. */
static void mem_open_clients(const struct opts *o, int *fds, const char *req,
                             size_t len, struct mem_result *mr)
{
    for (; mr->opened < o->clients; mr->opened++) {
        char e[200];
        int fd = net_connect(o->host, o->port, 0, 0, CONNECT_MS, e, sizeof e);
        if (fd < 0) {
            snprintf(mr->note, sizeof mr->note, "%.150s", e);
            break;
        }
        fds[mr->opened] = fd;
        if (net_send_all(fd, req, len, time_now_ns() +
                         CONNECT_MS * TIME_NS_PER_MS, NULL, NULL) < 0) {
            mr->opened++;       /* kept, to be closed with the others */
            snprintf(mr->note, sizeof mr->note, "a client could not send "
                     "its PRINTs");
            break;
        }
    }
}

/* RSS every 50 ms until the window (t0 to end) ends or the cap is
 * passed: the peak and when, in mr. */
static void mem_sample(const struct server_info *si, uint64_t t0,
                       uint64_t end, struct mem_result *mr)
{
    for (uint64_t now = time_now_ns(); now < end; now = time_now_ns()) {
        long kb = proc_rss_kb(si->pid);
        if (kb > mr->peak_kb) {
            mr->peak_kb = kb;
            mr->peak_at_s = time_ns_to_s(now - t0);
        }
        if (kb > mr->cap_kb) {
            mr->capped = true;
            break;
        }
        time_sleep_ns(SAMPLE_NS);
    }
    mr->seconds = time_ns_to_s(time_now_ns() - t0);
}

/* Stops and joins the COUNT client kt; its connection is closed, or
 * abandoned when a COUNT is still unanswered (it is out of step then). */
static void mem_counter_stop(struct counter *k, pthread_t kt,
                             struct mem_result *mr)
{
    atomic_store(&k->stop, 1);
    pthread_join(kt, NULL);
    mr->count_pending_ns = k->pending_ns;
    if (k->pending_ns)
        ctl_abandon(&k->c);
    else
        ctl_close(&k->c);
}

/* Closes our clients; the server's RSS 1 s later in mr->after_kb. */
static void mem_close_clients(const struct server_info *si, const int *fds,
                              struct mem_result *mr)
{
    for (unsigned long i = 0; i < mr->opened; i++)
        close(fds[i]);
    time_sleep_ns(TIME_NS_PER_SEC);
    mr->after_kb = proc_rss_kb(si->pid);
}

int run_memory(const struct opts *o, const struct server_info *si,
               struct mem_result *mr, char *err, size_t errlen)
{
    struct stats before, after;
    struct counter k = { .o = o };
    pthread_t kt;
    int *fds, rc;
    char *req;

    memset(mr, 0, sizeof *mr);
    hist_init(&mr->count);
    mr->cap_kb = o->max_rss_mb ? (long)o->max_rss_mb * 1024
                               : mem_available_kb() / 10 * 6;
    if (stats_fetch(o, &before, err, errlen) < 0)
        return -1;
    if (raise_nofile(o->clients + 64) < o->clients + 32) {
        snprintf(err, errlen, "cannot raise the open-file limit to %lu",
                 o->clients + 64);
        return -1;
    }
    fds = calloc(o->clients, sizeof *fds);
    req = mem_prints(o->prints);
    if (fds == NULL || req == NULL) {
        free(fds);
        free(req);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    mr->store_kb = proc_rss_kb(si->pid);
    if (ctl_open(&k.c, o->host, o->port, CTL_MS) < 0) {
        snprintf(err, errlen, "%s", k.c.err);
        goto fail;
    }
    k.lat = &mr->count;
    uint64_t t0 = time_now_ns(), end = t0 + o->memory_s * TIME_NS_PER_SEC;
    k.end_ns = end;
    if ((rc = pthread_create(&kt, NULL, counter_main, &k)) != 0) {
        snprintf(err, errlen, "pthread_create: %s", strerror(rc));
        ctl_abandon(&k.c);
        goto fail;
    }
    mem_open_clients(o, fds, req, o->prints * 6, mr);
    mem_sample(si, t0, end, mr);
    mem_counter_stop(&k, kt, mr);
    /* The counters before our clients leave (which may end sessions in
     * other ways). Whether the server closed a client cannot be seen from
     * the client: its FIN waits behind the bytes the client never read. */
    rc = stats_fetch(o, &after, err, errlen);
    mem_close_clients(si, fds, mr);
    free(fds);
    free(req);
    if (rc < 0 || lone_print(o, mr, err, errlen) < 0)
        return -1;
    mr->output_limited = stats_delta(&before, &after,
                                     "clients_output_limited");
    mr->write_timeouts = stats_delta(&before, &after,
                                     "clients_write_timeout");
    return 0;
fail:
    free(fds);
    free(req);
    return -1;
}

void print_memory(const struct opts *o, const struct mem_result *mr)
{
    char p50[32], p99[32];

    printf("\n## memory: %lu clients x %lu PRINTs, never reading; RSS every "
           "50 ms for %lu s\n", mr->opened, o->prints, o->memory_s);
    printf("%-44s %.1f MiB\n", "one PRINT listing",
           (double)mr->listing_bytes / 1048576.0);
    printf("%-44s %.3f ms\n", "a lone PRINT, read whole",
           time_ns_to_ms(mr->print_rtt_ns));
    if (mr->build_hold_us >= 0)
        printf("%-44s %.3f ms\n", "its lock hold (STATS)",
               mr->build_hold_us / 1000.0);
    printf("%-44s %.1f MiB\n", "server RSS with the store (before)",
           mr->store_kb / 1024.0);
    printf("%-44s %.1f MiB (at %.2f s)%s\n", "peak RSS while they wait",
           mr->peak_kb / 1024.0, mr->peak_at_s, mr->capped
           ? ", CAPPED: clients closed early" : "");
    printf("%-44s %.2f\n", "peak / before",
           mr->store_kb > 0 ? (double)mr->peak_kb / (double)mr->store_kb : 0);
    printf("%-44s %.1f MiB\n", "RSS 1 s after they closed",
           mr->after_kb / 1024.0);
    if (mr->output_limited >= 0)
        printf("%-44s %lld / %lld\n", "STATS output-limited / write-timeout",
               mr->output_limited, mr->write_timeouts);
    fmt_pct(p50, sizeof p50, hist_percentile(&mr->count, 50));
    fmt_pct(p99, sizeof p99, hist_percentile(&mr->count, 99));
    printf("%-44s %s / %s / %.3f ms (%llu answered)\n", "other client's "
           "COUNT p50 / p99 / max", p50, p99, time_ns_to_ms(mr->count.max),
           (unsigned long long)mr->count.count);
    if (mr->count_pending_ns)
        printf("%-44s %.3f s and counting\n", "a COUNT still unanswered at "
               "the end", time_ns_to_s(mr->count_pending_ns));
    printf("COUNT answered within 1 s throughout: %s\n",
           mr->count.count && !mr->count_pending_ns &&
           mr->count.max < TIME_NS_PER_SEC ? "yes" : "NO");
    if (mr->note[0])
        printf("note: %s\n", mr->note);
}

void json_memory(const struct opts *o, const struct mem_result *mr)
{
    printf("\"memory\": {\"clients\": %lu, \"opened\": %lu, \"prints\": %lu, "
           "\"seconds\": %.3f, \"listing_bytes\": %llu, \"store_rss_kb\": %ld, "
           "\"peak_rss_kb\": %ld, \"peak_at_s\": %.3f, \"ratio\": %.3f, "
           "\"after_rss_kb\": %ld, \"capped\": %s, \"cap_kb\": %ld, ",
           o->clients, mr->opened, o->prints,
           mr->seconds, (unsigned long long)mr->listing_bytes, mr->store_kb,
           mr->peak_kb, mr->peak_at_s, mr->store_kb > 0 ?
           (double)mr->peak_kb / (double)mr->store_kb : 0, mr->after_kb,
           mr->capped ? "true" : "false", mr->cap_kb);
    json_ll("output_limited", mr->output_limited);
    json_ll("write_timeouts", mr->write_timeouts);
    printf("\"print_rtt_us\": %.1f, ", mr->print_rtt_ns / 1e3);
    json_ll("print_hold_us", mr->build_hold_us);
    printf("\"counts\": %llu, \"count_p50_us\": %g, \"count_p99_us\": %g, "
           "\"count_max_us\": %.1f, \"count_pending_us\": %.1f, \"note\": ",
           (unsigned long long)mr->count.count,
           round_sig(hist_percentile(&mr->count, 50) / 1e3, SIG_DIGITS),
           round_sig(hist_percentile(&mr->count, 99) / 1e3, SIG_DIGITS),
           mr->count.count ? mr->count.max / 1e3 : 0.0,
           mr->count_pending_ns / 1e3);
    json_write_str(stdout, mr->note);
    printf("}");
}
