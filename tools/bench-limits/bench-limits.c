/* bench-limits.c -- the figures behind docs/LIMITS.md (the "Limits and
 * fairness" issue), measured against a running server on 127.0.0.1 that the
 * caller started (tools/bench-limits.sh starts one). Three parts, each
 * bounded in time:
 *
 *   fairness  client A pipelines K DIGESTs (with --changing an ADD before
 *             each, so every DIGEST must hash the store again) and never
 *             waits; meanwhile client B asks FIND, request by request, until
 *             A's batch is answered or D seconds pass. B's latencies against
 *             one DIGEST's lock hold (STATS lock_hold_max_us around a lone
 *             DIGEST, read after STATS RESET; a lone DIGEST's round trip on
 *             a server without lock figures).
 *   memory    C clients each pipeline P PRINTs and never read; the server's
 *             VmRSS (/proc/PID/status) every 50 ms for S seconds against
 *             its RSS with the store alone, and another client's COUNT
 *             latency meanwhile.
 *   sigterm   N idle connections, then SIGTERM to the server; the time
 *             until /proc says it has exited.
 *
 * The store is preloaded first by pipelining ADDs (client/lib/preload.c). The
 * sockets, the pipelined sessions, the control conversations and the
 * histograms are the clients' own (client/lib/net.c, client/lib/pipeline.c,
 * client/lib/ctl.c, common/hist.h). This file parses the options, checks the
 * server, preloads it and prints the header; each part is a file of its
 * own (bench-limits-fair.c, -mem.c, -term.c), their shared helpers are
 * bench-limits-common.c, and bench-limits.h is what they share. No state
 * is shared between threads but the atomics named where they are declared.
 * This program signals nothing but --server-pid, and only in the sigterm
 * part, after checking that it is the process listening on --port.
 */
#include "bench-limits.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "jsonw.h"
#include "findpid.h"
#include "pipeline.h"
#include "preload.h"

static const char *const part_names[NPART] = { "fairness", "memory",
                                               "sigterm" };

static void usage(FILE *f)
{
    fprintf(f,
        "usage: " PROG " [options]\n"
        "  Measures a running ssnserver's limits (docs/LIMITS.md) on\n"
        "  127.0.0.1, after preloading its store by pipelining ADDs.\n"
        "  -H, --host ADDR          the server's address; only 127.0.0.1\n"
        "  -p, --port PORT          the server's port (required)\n"
        "  -s, --server-pid PID     the server's process, for its RSS and for\n"
        "                           SIGTERM; must listen on PORT (memory and\n"
        "                           sigterm need it)\n"
        "  -n, --people N           people in the store (default %lu)\n"
        "  -w, --part LIST          a comma list of: fairness,memory,sigterm\n"
        "                           (default: all three; sigterm stops the\n"
        "                           server, so it runs last)\n"
        "fairness:\n"
        "  -k, --digests K          DIGESTs client A pipelines (default %lu)\n"
        "  -c, --changing           an ADD before each DIGEST: each must rehash\n"
        "  -d, --find-seconds D     client B's FINDs last at most D s\n"
        "                           (default %lu; fewer when A is done first)\n"
        "memory:\n"
        "  -C, --clients C          clients that send PRINTs and never read\n"
        "                           (default %lu)\n"
        "  -P, --prints P           PRINTs each of them pipelines (default %lu)\n"
        "  -S, --memory-seconds S   how long RSS is sampled (default %lu)\n"
        "  -M, --max-rss MIB        stop early (close the clients) when the\n"
        "                           server's RSS passes MIB (default: 60%% of\n"
        "                           MemAvailable at start)\n"
        "sigterm:\n"
        "  -i, --idle N             idle connections held (default %lu); the\n"
        "                           open-file limit is raised to fit\n"
        "output:\n"
        "  -j, --json               print JSON instead of the tables\n"
        "  -h, --help               this text\n"
        "  -V, --version            the version\n"
        "Exit status: 0 when every part ran, 1 when one could not, 2 for bad\n"
        "arguments. Latency percentiles keep %d significant digits, what the\n"
        "histogram holds; maxima are exact.\n",
        DEF_PEOPLE, DEF_DIGESTS, DEF_FIND_S, DEF_CLIENTS, DEF_PRINTS,
        DEF_MEMORY_S, DEF_IDLE, SIG_DIGITS);
}

/* ---- preload ------------------------------------------------------------ */

struct preload_result {
    long long before, after;    /* COUNT */
    uint64_t sent, errors;
    double seconds;
    bool skipped;
};

static int preload(const struct opts *o, struct preload_result *pr,
                   char *err, size_t errlen)
{
    char reply[64];
    struct preload_source ps;
    struct pl_source src;
    struct pl_opts po;
    struct pl_result r;

    memset(pr, 0, sizeof *pr);
    if (ask(o, "COUNT", reply, sizeof reply, err, errlen) < 0)
        return -1;
    pr->before = pr->after = atoll(reply);
    if (pr->before >= (long long)o->people) {
        pr->skipped = true;
        return 0;
    }
    if (!o->json)
        fprintf(stderr, PROG ": preloading %lu people...\n", o->people);
    preload_source_init(&src, &ps, o->people);
    session_opts(&po, o, 600.0, NULL, NULL);
    double t0 = bench_now();
    int rc = pl_run(&po, &src, &r, NULL);
    pr->seconds = bench_now() - t0;
    pr->sent = r.requests;      /* the DONE included */
    pr->errors = r.errors;
    if (rc < 0) {
        snprintf(err, errlen, "preload: %s", r.what);
        return -1;
    }
    if (ask(o, "COUNT", reply, sizeof reply, err, errlen) < 0)
        return -1;
    pr->after = atoll(reply);
    return 0;
}

/* ---- main --------------------------------------------------------------- */

static int bad_value(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, PROG ": %s: '%s' is not %s\n", opt, val, want);
    fprintf(stderr, "Try '" PROG " --help'.\n");
    return BENCH_EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    const struct bench_opt opts[] = {
        { "host", 'H', BENCH_OPT_STRING, &o->host, 0, 0 },
        { "port", 'p', BENCH_OPT_STRING, &o->port, 0, 0 },
        { "server-pid", 's', BENCH_OPT_COUNT, &o->pid, 2, INT_MAX },
        { "people", 'n', BENCH_OPT_COUNT, &o->people, 1, PRELOAD_MAX },
        { "part", 'w', BENCH_OPT_VARIANTS, o->part, 0, 0 },
        { "digests", 'k', BENCH_OPT_COUNT, &o->digests, 1, 100000 },
        { "changing", 'c', BENCH_OPT_FLAG, &o->changing, 0, 0 },
        { "find-seconds", 'd', BENCH_OPT_COUNT, &o->find_s, 1, 3600 },
        { "clients", 'C', BENCH_OPT_COUNT, &o->clients, 1, 100000 },
        { "prints", 'P', BENCH_OPT_COUNT, &o->prints, 1, 10000 },
        { "memory-seconds", 'S', BENCH_OPT_COUNT, &o->memory_s, 1, 3600 },
        { "max-rss", 'M', BENCH_OPT_COUNT, &o->max_rss_mb, 1, 1u << 30 },
        { "idle", 'i', BENCH_OPT_COUNT, &o->idle, 1, 1000000 },
        { "json", 'j', BENCH_OPT_FLAG, &o->json, 0, 0 },
        { NULL, 0, 0, NULL, 0, 0 },
    };
    const struct bench_variants variants = { part_names, NPART };
    const struct bench_prog prog = { PROG, usage };
    int rc = bench_getopt(&prog, argc, argv, opts, &variants);
    char *end;

    if (rc != 0)
        return rc;
    if (strcmp(o->host, "127.0.0.1") != 0)
        return bad_value("--host", o->host, "127.0.0.1 (this benchmark "
                         "loads only the machine it runs on)");
    if (o->port == NULL) {
        fprintf(stderr, PROG ": --port is required\nTry '" PROG
                " --help'.\n");
        return BENCH_EXIT_USAGE;
    }
    long port = strtol(o->port, &end, 10);
    if (*o->port < '0' || *o->port > '9' || *end || port < 1 || port > 65535)
        return bad_value("--port", o->port, "a port number from 1 to 65535");
    if ((o->part[PART_MEMORY] || o->part[PART_SIGTERM]) && o->pid == 0) {
        fprintf(stderr, PROG ": --part %s needs --server-pid\nTry '" PROG
                " --help'.\n", o->part[PART_MEMORY] ? "memory" : "sigterm");
        return BENCH_EXIT_USAGE;
    }
    return 0;
}

/* What the server is, and that --server-pid is the one listening on
 * --port (so SIGTERM can only reach the server under test). */
static int server_identify(const struct opts *o, struct server_info *si,
                           char *err, size_t errlen)
{
    struct stats st;
    const char *v;

    memset(si, 0, sizeof *si);
    if (stats_fetch(o, &st, err, errlen) < 0)
        return -1;
    snprintf(si->mode, sizeof si->mode, "%s",
             (v = stats_str(&st, "mode")) ? v : "?");
    snprintf(si->version, sizeof si->version, "%s",
             (v = stats_str(&st, "version")) ? v : "?");
    snprintf(si->io, sizeof si->io, "%s",
             (v = stats_str(&st, "io")) ? v : "threads");
    si->entries = stats_num(&st, "entries");
    si->max_clients = stats_num(&st, "max_clients");
    if (strcmp(si->mode, "fine") != 0 && strcmp(si->mode, "buffered") != 0) {
        snprintf(err, errlen, "the server is in %s mode; these parts need "
                 "fine or buffered (concurrent sessions, a lock per "
                 "operation)", si->mode);
        return -1;
    }
    if (o->pid == 0)
        return 0;
    char state;
    si->pid = (pid_t)o->pid;
    pid_t listener = find_listener_pid((unsigned)atoi(o->port));
    if (listener != si->pid) {
        snprintf(err, errlen, "--server-pid %d is not the process listening "
                 "on %s:%s (%s%d)", (int)si->pid, o->host, o->port,
                 listener ? "that is " : "found: ", (int)listener);
        return -1;
    }
    si->start = proc_stat(si->pid, &state);
    return 0;
}

static void print_header(const struct opts *o, const struct server_info *si,
                         const struct preload_result *pr)
{
    char utc[32];
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(utc, sizeof utc, "%Y-%m-%d %H:%M UTC", &tm);
    bench_print_machine(stdout, PROG);
    printf("# %s; server %s:%s, %s mode, --io %s, version %s", utc, o->host,
           o->port, si->mode, si->io, si->version);
    if (si->pid)
        printf(", pid %d", (int)si->pid);
    printf("\n# store: %lld people", pr->after);
    if (pr->skipped)
        printf(" (already held >= %lu: no preload)\n", o->people);
    else
        printf(" (%llu ADDs pipelined in %.1f s, %llu refused)\n",
               (unsigned long long)(pr->sent ? pr->sent - 1 : 0),
               pr->seconds, (unsigned long long)pr->errors);
}

static void json_header(const struct opts *o, const struct server_info *si,
                        const struct preload_result *pr)
{
    printf("{\"tool\": \"" PROG "\", ");
    bench_json_machine(stdout);
    char utc[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("\"utc\": \"%s\", \"server\": {\"port\": %s, \"mode\": ",
           utc, o->port);
    json_write_str(stdout, si->mode);
    printf(", \"io\": ");
    json_write_str(stdout, si->io);
    printf(", \"version\": ");
    json_write_str(stdout, si->version);
    printf(", ");
    json_ll("max_clients", si->max_clients);
    printf("\"pid\": %d}, \"people\": %lld, \"preload\": "
           "{\"skipped\": %s, \"adds\": %llu, \"refused\": %llu, "
           "\"seconds\": %.3f}", (int)si->pid, pr->after,
           pr->skipped ? "true" : "false",
           (unsigned long long)(pr->sent ? pr->sent - 1 : 0),
           (unsigned long long)pr->errors, pr->seconds);
}

/* Part p's result, as JSON (after a comma) or as a table. */
static void report_part(const struct opts *o, int p,
                        const struct fair_result *fr,
                        const struct mem_result *mr,
                        const struct term_result *tr)
{
    if (o->json) {
        printf(", ");
        if (p == PART_FAIRNESS)
            json_fairness(o, fr);
        else if (p == PART_MEMORY)
            json_memory(o, mr);
        else
            json_sigterm(o, tr);
    } else if (p == PART_FAIRNESS) {
        print_fairness(o, fr);
    } else if (p == PART_MEMORY) {
        print_memory(o, mr);
    } else {
        print_sigterm(o, tr);
    }
}

int main(int argc, char **argv)
{
    struct opts o = {
        .host = "127.0.0.1", .people = DEF_PEOPLE, .digests = DEF_DIGESTS,
        .find_s = DEF_FIND_S, .clients = DEF_CLIENTS, .prints = DEF_PRINTS,
        .memory_s = DEF_MEMORY_S, .idle = DEF_IDLE,
        .part = { 1, 1, 1 },
    };
    struct server_info si;
    struct preload_result pr;
    struct fair_result *fr = calloc(1, sizeof *fr);
    struct mem_result *mr = calloc(1, sizeof *mr);
    struct term_result tr;
    char err[300] = "";
    int rc, failed = 0;

    if ((rc = parse_args(argc, argv, &o)) != 0)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    if (fr == NULL || mr == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    if (server_identify(&o, &si, err, sizeof err) < 0 ||
        preload(&o, &pr, err, sizeof err) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    if (o.json)
        json_header(&o, &si, &pr);
    else
        print_header(&o, &si, &pr);
    fflush(stdout);
    for (int p = 0; p < NPART; p++) {
        if (!o.part[p])
            continue;
        err[0] = '\0';
        if (!o.json)
            fprintf(stderr, PROG ": %s...\n", part_names[p]);
        rc = p == PART_FAIRNESS ? run_fairness(&o, fr, err, sizeof err)
           : p == PART_MEMORY ? run_memory(&o, &si, mr, err, sizeof err)
           : run_sigterm(&o, &si, &tr, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, PROG ": %s: %s\n", part_names[p], err);
            failed = 1;
            continue;
        }
        report_part(&o, p, fr, mr, &tr);
        fflush(stdout);
    }
    if (o.json)
        printf("}\n");
    free(fr);
    free(mr);
    return failed;
}
