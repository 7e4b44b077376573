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
 * The store is preloaded first by pipelining ADDs (client/preload.c). The
 * sockets, the pipelined sessions, the control conversations and the
 * histograms are the clients' own (client/net.c, client/pipeline.c,
 * client/ctl.c, common/hist.h); only the three scenarios live here, which
 * is why this one file is longer than the other benchmarks. No state is
 * shared between threads but the atomics named where they are declared.
 * This program signals nothing but --server-pid, and only in the sigterm
 * part, after checking that it is the process listening on --port.
 */
#include "bench-util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl.h"
#include "hist.h"
#include "jsonw.h"
#include "killit.h"             /* ki_find_listener (client/findpid.c) */
#include "net.h"
#include "pipeline.h"
#include "preload.h"
#include "proto.h"
#include "timeutil.h"

#define PROG            "bench-limits"
#define DEF_PEOPLE      1000000ul   /* --people */
#define DEF_DIGESTS     20ul        /* --digests: K */
#define DEF_FIND_S      30ul        /* --find-seconds: D, a bound */
#define DEF_CLIENTS     200ul       /* --clients: C */
#define DEF_PRINTS      3ul         /* --prints: P */
#define DEF_MEMORY_S    10ul        /* --memory-seconds: S */
#define DEF_IDLE        1000ul      /* --idle: N */
#define CALIBRATE_RUNS  3           /* lone DIGESTs timed before a run */
#define SAMPLE_NS       (50 * TIME_NS_PER_MS)   /* RSS sampling period */
#define COUNT_PAUSE_NS  (50 * TIME_NS_PER_MS)   /* between two COUNTs */
#define CTL_MS          30000       /* limit on one control request */
#define SESSION_S       120.0       /* limit on one pipelined session */
#define CONNECT_MS      2000        /* limit on one connect */
#define SETTLE_S        30.0        /* most we wait for the server to take
                                       every idle connection */
#define EXIT_WAIT_S     30.0        /* most we wait for it to exit */
#define STATS_ROWS      64          /* STATS lines kept */
#define SIG_DIGITS      2           /* what a hist.h percentile really has:
                                       32 buckets an octave, ~3 % */

enum { PART_FAIRNESS, PART_MEMORY, PART_SIGTERM, NPART };

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

/* The command line, parsed. */
struct opts {
    const char *host, *port;
    unsigned long pid, people, digests, find_s, clients, prints, memory_s,
                  idle, max_rss_mb;
    int part[NPART];
    bool changing, json;
};

/* The server, as STATS first described it. */
struct server_info {
    char mode[32], version[32], io[16];
    long long entries, max_clients;
    pid_t pid;
    unsigned long long start;   /* /proc start time of pid, for identity */
};

/* One STATS reply: name and raw value per line. */
struct stats {
    int n;
    char name[STATS_ROWS][48];
    char val[STATS_ROWS][64];
};

/* ---- numbers shown -------------------------------------------------------- */

/* v rounded to sig significant digits (HdrHistogram's convention: show
 * only what the buckets hold). */
static double round_sig(double v, int sig)
{
    if (v <= 0)
        return 0;
    double scale = pow(10, sig - 1 - (int)floor(log10(v)));
    return round(v * scale) / scale;
}

/* "0.047", "1.5", "150" (ms) for a percentile in ns. */
static void fmt_pct(char *buf, size_t len, uint64_t ns)
{
    double ms = round_sig(time_ns_to_ms(ns), SIG_DIGITS);
    int e = ms > 0 ? (int)floor(log10(ms)) : 0;
    int dec = SIG_DIGITS - 1 - e;

    snprintf(buf, len, "%.*f", dec > 0 ? dec : 0, ms);
}

/* "NAME": V, -- or null for a figure the server does not report (-1). */
static void json_ll(const char *name, long long v)
{
    if (v < 0)
        printf("\"%s\": null, ", name);
    else
        printf("\"%s\": %lld, ", name, v);
}

/* ---- the server's process ------------------------------------------------ */

/* Fields of /proc/PID/stat after the command: state in *state, start time
 * (field 22) returned; 0 when there is no such process. */
static unsigned long long proc_stat(pid_t pid, char *state)
{
    char path[64], line[1024];
    unsigned long long start = 0;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    if (fgets(line, sizeof line, f) != NULL) {
        char *p = strrchr(line, ')');
        /* ") S ppid pgrp ... starttime": starttime is the 20th after ')' */
        if (p && sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                        "%*s %*s %*s %*s %*s %*s %*s %*s %llu", state,
                        &start) != 2)
            start = 0;
    }
    fclose(f);
    return start;
}

/* 1 once the server has exited: no process, a zombie (its parent has not
 * reaped it yet), or another process that took the PID over. */
static int proc_gone(const struct server_info *si)
{
    char state = '?';
    unsigned long long start = proc_stat(si->pid, &state);

    return start == 0 || start != si->start || state == 'Z' || state == 'X';
}

/* VmRSS in kB, or -1. */
static long proc_rss_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* MemAvailable in kB, or 0. */
static long mem_available_kb(void)
{
    char line[256];
    long kb = 0;
    FILE *f = fopen("/proc/meminfo", "r");

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* Raises this process's open-file limit to want (the hard one too when
 * allowed: root). Returns the soft limit now in force. */
static rlim_t raise_nofile(rlim_t want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur >= want)
        return rl.rlim_cur;
    if (rl.rlim_max < want) {
        struct rlimit up = { want, want };
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            return want;
    }
    rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur;
}

/* ---- request sources for pl_run --------------------------------------------- */

/* n requests made by line(i), then DONE. */
struct req_source {
    int (*line)(const struct req_source *g, uint64_t i, char *buf,
                size_t cap, int *cmd);
    uint64_t i, n;
    int done;
    const char *word;           /* STATS, PRINT: the one-word requests */
    const char *tag;            /* the fairness ADDs' last name */
    bool changing;
};

static ssize_t req_next(void *arg, char *buf, size_t cap, int *cmd)
{
    struct req_source *g = arg;

    if (g->i == g->n) {
        if (g->done)
            return 0;
        g->done = 1;
        *cmd = PROTO_QUIT;
        return snprintf(buf, cap, "DONE\n");
    }
    int len = g->line(g, g->i++, buf, cap, cmd);
    return len > 0 && (size_t)len < cap ? len : -EINVAL;
}

static void req_source_init(struct pl_source *s, struct req_source *g)
{
    g->i = 0;
    g->done = 0;
    s->next = req_next;
    s->arg = g;
    s->fd = -1;
}

static int line_word(const struct req_source *g, uint64_t i, char *buf,
                     size_t cap, int *cmd)
{
    (void)i;
    *cmd = strcmp(g->word, "PRINT") == 0 ? PROTO_PRINT : PROTO_STATS;
    return snprintf(buf, cap, "%s\n", g->word);
}

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

static void session_opts(struct pl_opts *po, const struct opts *o,
                         double timeout_s, FILE *echo, atomic_int *stop)
{
    memset(po, 0, sizeof *po);
    po->host = o->host;
    po->port = o->port;
    po->echo = echo;
    po->timeout_s = timeout_s;
    po->stop = stop;
}

/* ---- STATS ------------------------------------------------------------------- */

/* STATS over a connection of its own (its reply has many lines, which
 * ctl.h does not read). Returns 0, or -1 with the reason in err. */
static int stats_fetch(const struct opts *o, struct stats *st, char *err,
                       size_t errlen)
{
    struct req_source g = { .line = line_word, .n = 1, .word = "STATS" };
    struct pl_source src;
    struct pl_opts po;
    struct pl_result r;
    char *text = NULL, *save, *line;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);

    if (mem == NULL) {
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
        return -1;
    }
    req_source_init(&src, &g);
    session_opts(&po, o, CTL_MS / 1000.0, mem, NULL);
    int rc = pl_run(&po, &src, &r, NULL);
    fclose(mem);
    st->n = 0;
    for (line = strtok_r(text, "\n", &save); line && st->n < STATS_ROWS;
         line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (sp == NULL)
            continue;               /* END, Bye */
        *sp = '\0';
        snprintf(st->name[st->n], sizeof st->name[0], "%s", line);
        snprintf(st->val[st->n], sizeof st->val[0], "%s", sp + 1);
        st->n++;
    }
    free(text);
    if (rc < 0 || st->n == 0) {
        snprintf(err, errlen, "STATS: %s", rc < 0 ? r.what : "no reply");
        return -1;
    }
    return 0;
}

static const char *stats_str(const struct stats *st, const char *name)
{
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->name[i], name) == 0)
            return st->val[i];
    return NULL;
}

/* A numeric STATS value; -1 when the server does not report it. */
static long long stats_num(const struct stats *st, const char *name)
{
    const char *v = stats_str(st, name);
    return v ? atoll(v) : -1;
}

/* One request with a one-line reply on its own short connection. */
static int ask(const struct opts *o, const char *req, char *out, size_t len,
               char *err, size_t errlen)
{
    struct ctl c;
    int rc = ctl_open(&c, o->host, o->port, CTL_MS);

    if (rc == 0)
        rc = ctl_query(&c, req, out, len);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", req, c.err);
        if (c.fd >= 0)
            ctl_abandon(&c);
        return -1;
    }
    ctl_close(&c);
    return 0;
}

/* ---- preload --------------------------------------------------------------------- */

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

/* ---- fairness ---------------------------------------------------------------------- */

struct fair_result {
    bool have_lock;             /* STATS has lock figures */
    long long alone_hold_us[CALIBRATE_RUNS];    /* -1: unknown */
    uint64_t alone_rtt_ns[CALIBRATE_RUNS];
    long long hold_max_us, hold_p99_us, wait_max_us, wait_p99_us,
              acquisitions, contended;
    struct hist find;           /* B's latencies, ns */
    uint64_t find_errors;
    uint64_t a_requests, a_replies, a_errors;
    double a_seconds, b_seconds;
    bool a_cut;                 /* A was still going after D seconds */
    double a_settle_s;          /* then, until the server let its session go */
    char note[120];
    long long alone_med_us;     /* median lone hold (or round trip) */
    long long one_hold_us;      /* the figure compared against: the run's
                                   longest hold, or alone_med_us */
};

/* Makes the next DIGEST hash the store again: an ADD and a DELETE change
 * the store's version and leave its content as it was. */
static int digest_cache_cold(struct ctl *c, const char *tag)
{
    char req[160], reply[CTL_REPLY_MAX];

    snprintf(req, sizeof req, "ADD Probe %s 1 000-00-0000", tag);
    if (ctl_query(c, req, reply, sizeof reply) < 0)
        return -1;
    snprintf(req, sizeof req, "DELETE Probe %s", tag);
    return ctl_query(c, req, reply, sizeof reply);
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

static int run_fairness(const struct opts *o, struct fair_result *fr,
                        char *err, size_t errlen)
{
    char tag[48], reply[CTL_REPLY_MAX], req[200];
    struct ctl c, b;
    struct stats st;
    pthread_t at;
    struct fair_a *a;
    int rc;

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
    if ((a = calloc(1, sizeof *a)) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail_b;
    }
    a->o = o;
    a->g = (struct req_source){ .line = line_fair, .tag = tag,
                                .changing = o->changing,
                                .n = o->digests * (o->changing ? 2 : 1) };
    if ((rc = pthread_create(&at, NULL, fair_a_main, a)) != 0) {
        snprintf(err, errlen, "pthread_create: %s", strerror(rc));
        free(a);
        goto fail_b;
    }
    /* B: one FIND at a time, of a preloaded person, while A's batch runs. */
    uint64_t t0 = time_now_ns(), end = t0 + o->find_s * TIME_NS_PER_SEC;
    uint64_t seed = 88172645463325252ull;
    while (!atomic_load(&a->done) && time_now_ns() < end) {
        struct entry e;
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        preload_entry(seed % o->people, &e);
        snprintf(req, sizeof req, "FIND %s %s", e.first, e.last);
        uint64_t s = time_now_ns();
        if (ctl_query(&b, req, reply, sizeof reply) < 0) {
            snprintf(err, errlen, "FIND: %s", b.err);
            atomic_store(&a->stop, 1);
            pthread_join(at, NULL);
            free(a);
            goto fail_b;
        }
        hist_record(&fr->find, time_now_ns() - s);
        fr->find_errors += strncmp(reply, "Error:", 6) == 0;
    }
    fr->b_seconds = time_ns_to_s(time_now_ns() - t0);
    fr->a_cut = !atomic_load(&a->done);
    atomic_store(&a->stop, 1);
    pthread_join(at, NULL);
    fr->a_requests = a->r.requests;
    fr->a_replies = a->r.replies;
    fr->a_errors = a->r.errors;
    fr->a_seconds = time_ns_to_s(a->r.service_ns);
    free(a);
    if (fr->a_cut && settle(o, base, &fr->a_settle_s) < 0)
        snprintf(fr->note, sizeof fr->note, "A's session was still running "
                 "%.0f s after A gave up", SESSION_S);
    if (stats_fetch(o, &st, err, errlen) < 0)
        goto fail_b;
    fr->hold_max_us = stats_num(&st, "lock_hold_max_us");
    fr->hold_p99_us = stats_num(&st, "lock_hold_p99_us");
    fr->wait_max_us = stats_num(&st, "lock_wait_max_us");
    fr->wait_p99_us = stats_num(&st, "lock_wait_p99_us");
    fr->acquisitions = stats_num(&st, "lock_acquisitions");
    fr->contended = stats_num(&st, "lock_contended");
    double med[CALIBRATE_RUNS];
    for (int k = 0; k < CALIBRATE_RUNS; k++)
        med[k] = fr->have_lock ? (double)fr->alone_hold_us[k]
                               : (double)fr->alone_rtt_ns[k] / 1e3;
    fr->alone_med_us = (long long)bench_median(med, CALIBRATE_RUNS);
    fr->one_hold_us = fr->have_lock ? fr->hold_max_us : fr->alone_med_us;
    ctl_close(&b);
    ctl_close(&c);
    if (o->changing) {          /* the store as we found it */
        struct req_source g = { .line = line_unfair, .tag = tag,
                                .n = o->digests };
        struct pl_source src;
        struct pl_opts po;
        struct pl_result r;

        req_source_init(&src, &g);
        session_opts(&po, o, SESSION_S, NULL, NULL);
        pl_run(&po, &src, &r, NULL);
    }
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

static void print_fairness(const struct opts *o, const struct fair_result *fr)
{
    char p50[32], p99[32], x[32], y[32];
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
    printf("%-44s %s / %s / %.3f (%llu FINDs in %.1f s)\n",
           "B's FIND p50 / p99 / max", p50, p99,
           time_ns_to_ms(fr->find.max), (unsigned long long)fr->find.count,
           fr->b_seconds);
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

static void json_fairness(const struct opts *o, const struct fair_result *fr)
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

/* ---- memory --------------------------------------------------------------------- */

struct mem_result {
    long store_kb, peak_kb, after_kb;   /* RSS */
    double peak_at_s, seconds;
    bool capped;
    long cap_kb;
    unsigned long opened;       /* PRINT clients connected */
    struct hist count;          /* COUNT latencies, ns */
    uint64_t count_pending_ns;  /* a COUNT unanswered at the end: its wait */
    long long output_limited, write_timeouts;   /* STATS deltas; -1 */
    uint64_t listing_bytes;
    uint64_t print_rtt_ns;      /* a lone PRINT, read whole */
    long long build_hold_us;    /* its lock hold: building the listing
                                   (buffered), or streaming it (fine) */
    char note[160];
};

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

static int run_memory(const struct opts *o, const struct server_info *si,
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
    req = malloc(o->prints * 6);
    if (fds == NULL || req == NULL) {
        free(fds);
        free(req);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (unsigned long i = 0; i < o->prints; i++)
        memcpy(req + i * 6, "PRINT\n", 6);
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
    for (; mr->opened < o->clients; mr->opened++) {
        char e[200];
        int fd = net_connect(o->host, o->port, 0, 0, CONNECT_MS, e, sizeof e);
        if (fd < 0) {
            snprintf(mr->note, sizeof mr->note, "%.150s", e);
            break;
        }
        fds[mr->opened] = fd;
        if (net_send_all(fd, req, o->prints * 6, time_now_ns() +
                         CONNECT_MS * TIME_NS_PER_MS, NULL, NULL) < 0) {
            mr->opened++;       /* kept, to be closed with the others */
            snprintf(mr->note, sizeof mr->note, "a client could not send "
                     "its PRINTs");
            break;
        }
    }
    /* RSS every 50 ms until the window ends or the cap is passed. */
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
    atomic_store(&k.stop, 1);
    pthread_join(kt, NULL);
    mr->count_pending_ns = k.pending_ns;
    if (k.pending_ns)
        ctl_abandon(&k.c);
    else
        ctl_close(&k.c);
    /* The counters before our clients leave (which may end sessions in
     * other ways). Whether the server closed a client cannot be seen from
     * the client: its FIN waits behind the bytes the client never read. */
    rc = stats_fetch(o, &after, err, errlen);
    for (unsigned long i = 0; i < mr->opened; i++)
        close(fds[i]);
    time_sleep_ns(TIME_NS_PER_SEC);
    mr->after_kb = proc_rss_kb(si->pid);
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

static void print_memory(const struct opts *o, const struct mem_result *mr)
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

static void json_memory(const struct opts *o, const struct mem_result *mr)
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

/* ---- sigterm ------------------------------------------------------------------------ */

struct term_result {
    unsigned long opened;       /* idle connections we made */
    unsigned long refused;      /* of those, closed by the server at once */
    long held;                  /* the server's descriptors grew by; -1 */
    long long current;          /* STATS connections_current (STATS' own
                                   connection not counted); -1: no answer */
    double open_s, settle_s;
    double exit_ms;             /* SIGTERM to gone; < 0: not within 30 s */
    rlim_t nofile;
    char note[200];
};

/* Entries of /proc/PID/fd, or -1. */
static long count_fds(pid_t pid)
{
    char path[64];
    long n = 0;

    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n - 2;               /* . and .. */
}

/* Our connections the server has closed (refused: --max-clients). */
static unsigned long count_closed(struct pollfd *p, unsigned long n)
{
    unsigned long closed = 0;

    if (poll(p, n, 0) <= 0)
        return 0;
    for (unsigned long i = 0; i < n; i++)
        closed += (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
    return closed;
}

/* Until the server has taken (or refused) every connection we made: its
 * descriptors grew by what it holds, and it closed what it refused. Gives
 * up when nothing changed for 2 s (a server out of descriptors leaves the
 * rest in the listen backlog), or after SETTLE_S. */
static void term_settle(const struct server_info *si, long base,
                        struct pollfd *p, struct term_result *tr)
{
    long last = -1;
    double t0 = bench_now(), still = t0;

    while (bench_now() - t0 < SETTLE_S) {
        long fds = count_fds(si->pid);
        tr->refused = count_closed(p, tr->opened);
        tr->held = fds < 0 ? -1 : fds - base;
        if (tr->held + (long)tr->refused >= (long)tr->opened)
            break;
        if (tr->held + (long)tr->refused != last)
            last = tr->held + (long)tr->refused, still = bench_now();
        else if (bench_now() - still > 2.0)
            break;
        time_sleep_ns(100 * TIME_NS_PER_MS);
    }
    tr->settle_s = bench_now() - t0;
}

static int run_sigterm(const struct opts *o, const struct server_info *si,
                       struct term_result *tr, char *err, size_t errlen)
{
    struct stats st;
    struct pollfd *p = calloc(o->idle, sizeof *p);
    char e[200];

    memset(tr, 0, sizeof *tr);
    tr->held = tr->current = -1;
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    tr->nofile = raise_nofile(o->idle + 16);
    unsigned long room = tr->nofile > 16 ? tr->nofile - 16 : 0;
    unsigned long want = o->idle < room ? o->idle : room;
    if (want < o->idle)
        snprintf(tr->note, sizeof tr->note, "open-file limit %llu: %lu "
                 "connections, not %lu", (unsigned long long)tr->nofile,
                 want, o->idle);
    long base = count_fds(si->pid);
    double t0 = bench_now();
    for (; tr->opened < want; tr->opened++) {
        int fd = net_connect(o->host, o->port, 0, 0, CONNECT_MS, e, sizeof e);
        if (fd < 0) {
            snprintf(tr->note, sizeof tr->note, "after %lu: %.150s",
                     tr->opened, e);
            break;
        }
        p[tr->opened] = (struct pollfd){ .fd = fd, .events = POLLRDHUP };
    }
    tr->open_s = bench_now() - t0;
    term_settle(si, base, p, tr);
    if (stats_fetch(o, &st, e, sizeof e) == 0)     /* refused when full */
        tr->current = stats_num(&st, "connections_current") - 1;
    tr->exit_ms = -1;
    if (proc_gone(si)) {
        snprintf(err, errlen, "the server (pid %d) is gone before SIGTERM",
                 (int)si->pid);
        goto out;
    }
    if (!o->json)
        fprintf(stderr, PROG ": SIGTERM to pid %d\n", (int)si->pid);
    uint64_t s = time_now_ns();
    if (kill(si->pid, SIGTERM) != 0) {
        snprintf(err, errlen, "kill %d: %s", (int)si->pid, strerror(errno));
        goto out;
    }
    while (!proc_gone(si) && time_now_ns() - s < time_s_to_ns(EXIT_WAIT_S))
        time_sleep_ns(TIME_NS_PER_MS);
    if (proc_gone(si))
        tr->exit_ms = time_ns_to_ms(time_now_ns() - s);
out:
    for (unsigned long i = 0; i < tr->opened; i++)
        close(p[i].fd);
    free(p);
    return err[0] ? -1 : 0;
}

static void print_sigterm(const struct opts *o, const struct term_result *tr)
{
    printf("\n## sigterm: %lu idle connections, then SIGTERM\n", o->idle);
    printf("%-44s %lu in %.2f s\n", "connections opened", tr->opened,
           tr->open_s);
    printf("%-44s %lu\n", "refused (closed by the server)", tr->refused);
    printf("%-44s %ld (after %.1f s)\n", "held: the server's descriptors "
           "grew by", tr->held, tr->settle_s);
    if (tr->current >= 0)
        printf("%-44s %lld\n", "STATS connections_current (less its own)",
               tr->current);
    if (tr->exit_ms >= 0)
        printf("%-44s %.1f ms\n", "SIGTERM to exit", tr->exit_ms);
    else
        printf("%-44s still running after %.0f s\n", "SIGTERM to exit",
               EXIT_WAIT_S);
    if (tr->note[0])
        printf("note: %s\n", tr->note);
}

static void json_sigterm(const struct opts *o, const struct term_result *tr)
{
    printf("\"sigterm\": {\"idle\": %lu, \"opened\": %lu, \"open_s\": %.3f, "
           "\"refused\": %lu, \"settle_s\": %.3f, \"nofile\": %llu, ",
           o->idle, tr->opened, tr->open_s, tr->refused, tr->settle_s,
           (unsigned long long)tr->nofile);
    json_ll("held", tr->held);
    json_ll("connections_current", tr->current);
    printf("\"exit_ms\": ");
    if (tr->exit_ms >= 0)
        printf("%.1f", tr->exit_ms);
    else
        printf("null");
    printf(", \"note\": ");
    json_write_str(stdout, tr->note);
    printf("}");
}

/* ---- main ------------------------------------------------------------------------- */

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
    pid_t listener = ki_find_listener((unsigned)atoi(o->port));
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
        if (o.json) {
            printf(", ");
            if (p == PART_FAIRNESS)
                json_fairness(&o, fr);
            else if (p == PART_MEMORY)
                json_memory(&o, mr);
            else
                json_sigterm(&o, &tr);
        } else if (p == PART_FAIRNESS) {
            print_fairness(&o, fr);
        } else if (p == PART_MEMORY) {
            print_memory(&o, mr);
        } else {
            print_sigterm(&o, &tr);
        }
        fflush(stdout);
    }
    if (o.json)
        printf("}\n");
    free(fr);
    free(mr);
    return failed;
}
