/* bench-limits.h -- what the parts of bench-limits share (docs/LIMITS.md):
 * its constants, the parsed command line, the server as STATS described
 * it, the request sources handed to pl_run, each part's result, and the
 * helpers of bench-limits-common.c. bench-limits.c parses the options and
 * runs the parts; bench-limits-fair.c, bench-limits-mem.c and
 * bench-limits-term.c are the three parts, each with its run_, print_ and
 * json_ functions. Nothing here is shared between threads.
 */
#ifndef SSN_BENCH_LIMITS_H
#define SSN_BENCH_LIMITS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "hist.h"
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

/* ---- request sources for pl_run ----------------------------------------- */

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

/* ---- the parts' results ------------------------------------------------- */

/* Fairness (bench-limits-fair.c). */
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

/* Memory (bench-limits-mem.c). */
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

/* Sigterm (bench-limits-term.c). */
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

struct ctl;                     /* client/lib/ctl.h */
struct pl_opts;                 /* client/lib/pipeline.h */
struct pl_source;

/* ---- bench-limits-common.c ---------------------------------------------- */

/* v rounded to sig significant digits. */
double round_sig(double v, int sig);
/* A percentile in ns as ms with SIG_DIGITS significant digits. */
void fmt_pct(char *buf, size_t len, uint64_t ns);
/* Prints "NAME": V, -- or null when v < 0. */
void json_ll(const char *name, long long v);

/* The start time of pid (/proc/PID/stat), its state in *state; 0 when
 * there is no such process. */
unsigned long long proc_stat(pid_t pid, char *state);
/* 1 once the server has exited (or its PID was taken over). */
int proc_gone(const struct server_info *si);
/* VmRSS of pid in kB, or -1. */
long proc_rss_kb(pid_t pid);
/* MemAvailable in kB, or 0. */
long mem_available_kb(void);
/* Raises the open-file limit toward want; returns the soft limit now. */
rlim_t raise_nofile(rlim_t want);

/* Makes s hand out g's requests (then DONE) to pl_run. */
void req_source_init(struct pl_source *s, struct req_source *g);
/* A line maker for req_source: the one word g->word (STATS or PRINT). */
int line_word(const struct req_source *g, uint64_t i, char *buf, size_t cap,
              int *cmd);
/* pl_run's options for a session to the server of o. */
void session_opts(struct pl_opts *po, const struct opts *o, double timeout_s,
                  FILE *echo, atomic_int *stop);

/* STATS over a connection of its own; 0, or -1 with the reason in err. */
int stats_fetch(const struct opts *o, struct stats *st, char *err,
                size_t errlen);
/* A STATS value as text, or NULL when absent. */
const char *stats_str(const struct stats *st, const char *name);
/* A numeric STATS value; -1 when the server does not report it. */
long long stats_num(const struct stats *st, const char *name);
/* One request with a one-line reply on its own connection; 0, or -1 with
 * the reason in err. */
int ask(const struct opts *o, const char *req, char *out, size_t len,
        char *err, size_t errlen);
/* An ADD and a DELETE on c, so the next DIGEST hashes the store again. */
int digest_cache_cold(struct ctl *c, const char *tag);

/* ---- the three parts: 0, or -1 with the reason in err ------------------- */

int run_fairness(const struct opts *o, struct fair_result *fr, char *err,
                 size_t errlen);
void print_fairness(const struct opts *o, const struct fair_result *fr);
void json_fairness(const struct opts *o, const struct fair_result *fr);

int run_memory(const struct opts *o, const struct server_info *si,
               struct mem_result *mr, char *err, size_t errlen);
void print_memory(const struct opts *o, const struct mem_result *mr);
void json_memory(const struct opts *o, const struct mem_result *mr);

int run_sigterm(const struct opts *o, const struct server_info *si,
                struct term_result *tr, char *err, size_t errlen);
void print_sigterm(const struct opts *o, const struct term_result *tr);
void json_sigterm(const struct opts *o, const struct term_result *tr);

#endif
