/* bench.h -- ssn-bench, a load generator in the spirit of redis-benchmark
 * and memtier_benchmark that speaks three dialects: ssnserver's line
 * protocol, Redis's inline commands with RESP replies, and memcached's text
 * protocol. This header holds what needs no socket, so the unit tests
 * (tests/check_bench.c) reach all of it:
 *
 *   the dialects (bench_dialect.c, bench_resp.c, bench_memcache.c): one
 *     table of functions each, building a request for (op, key) and parsing
 *     the reply to it out of bytes received so far ("sans-I/O": no socket,
 *     no state between calls, so a reply split at any byte parses the same);
 *   the report (bench_report.c): latency rounded to the digits the
 *     histogram has, the text, JSON and CSV reports, /proc/PID/stat.
 *
 * The event loops that drive connections are in bench_conn.h; options and
 * the order of phases in bench_main.c.
 *
 * Key k is the person "f<k> L<k>" in every dialect: ssn ADDs first f<k>,
 * last L<k>; Redis and memcached store key "L<k>:f<k>" with a 30-byte value
 * that names k (bench_value), so a reply to the wrong request is caught.
 * With --new-keys every ADD of the timed run names a key no request of the
 * run has named before (bench_new_key): a real insert in every dialect.
 */
#ifndef SSN_CLIENT_BENCH_H
#define SSN_CLIENT_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "hist.h"

#define BENCH_VALUE_LEN   30        /* bytes of a Redis/memcached value */
#define BENCH_KEY_MAX     32        /* "L<k>:f<k>" and its NUL, k < 10^10 */
#define BENCH_REQ_MAX     1100      /* longest request (AUTH pw: 1024 + 6) */
#define BENCH_REPLY_MAX   4096      /* longest reply accepted, line or bulk */
#define BENCH_ERR_MAX     256       /* a failure's message */

/* What a request does. AUTH is only ever sent first, untimed. */
enum bench_op { BOP_ADD, BOP_FIND, BOP_DELETE, BOP_AUTH };
#define BENCH_OPS 3                 /* ops in a --mix: ADD, FIND, DELETE */

/* What a reply said, the same in every dialect. */
enum bench_kind {
    BK_STORED,      /* ADD done: OK, +OK, STORED (and AUTH accepted) */
    BK_EXISTS,      /* ADD refused, the key exists: ssn's Error, NOT_STORED */
    BK_FOUND,       /* FIND answered the key's record or value */
    BK_DELETED,     /* DELETE done: OK, :1, DELETED */
    BK_MISSING,     /* FIND or DELETE of a missing key: Error: No, $-1, :0,
                     * END, NOT_FOUND */
    BK_ERROR,       /* any other error reply */
    BK_KINDS
};

/* One parsed reply. text points into the caller's bytes. */
struct bench_reply {
    enum bench_kind kind;
    int is_error;           /* phrased as an error: "Error: ", "-", "ERROR",
                             * "CLIENT_ERROR", "SERVER_ERROR" */
    const char *text;       /* its first line, without the line end */
    size_t text_len;
};

/* A dialect: a table of functions, like the server's lock policies. */
struct bench_dialect {
    const char *name;           /* "ssn", "redis", "memcache" */
    int has_auth;               /* BOP_AUTH can be built */
    const char *verb[4];        /* each op's command, for messages */
    /* Writes the request for (op, key) into buf, which has room for
     * BENCH_REQ_MAX bytes; password is for BOP_AUTH only. Returns its
     * length. */
    size_t (*build)(enum bench_op op, uint64_t key, const char *password,
                    char *buf);
    /* Parses the reply to (op, key) at the start of buf[0..len). Returns
     * the bytes it takes (> 0) and fills *r; 0 when buf holds only part of
     * it; -1 when these bytes cannot be that reply, with a one-line reason
     * in err (a protocol error, or a reply to another request: the counts
     * are out of step). */
    long (*parse)(enum bench_op op, uint64_t key, const char *buf,
                  size_t len, struct bench_reply *r, char *err,
                  size_t errlen);
};

extern const struct bench_dialect bench_dialect_ssn;
extern const struct bench_dialect bench_dialect_redis;
extern const struct bench_dialect bench_dialect_memcache;

/* The dialect called name, or NULL. */
const struct bench_dialect *bench_dialect_find(const char *name);

const char *bench_op_name(enum bench_op op);        /* "ADD", ... */
const char *bench_kind_name(enum bench_kind k);     /* "stored", ... */

/* "L<k>:f<k>" into buf (BENCH_KEY_MAX bytes); returns its length. */
size_t bench_key(uint64_t k, char *buf);

/* Key k's value, BENCH_VALUE_LEN bytes, no NUL: "v<k>" padded with '-'. */
void bench_value(uint64_t k, char *buf);

/* The i-th new key of a run: base + a scrambled i, a bijection of
 * 0..BENCH_NEW_KEYS-1 (so no two i give the same key, and consecutive i
 * land far apart in the key order, as random inserts do). i must be below
 * BENCH_NEW_KEYS. */
#define BENCH_NEW_KEYS    (1ull << 32)  /* new keys a run can draw */
uint64_t bench_new_key(uint64_t base, uint64_t i);

/* Helpers the dialects share (bench_dialect.c). */

/* The line at buf[0..len): its length without "\r\n" or "\n" in *linelen,
 * and the bytes it takes with its end. 0 when no '\n' is there yet; -1
 * (with err) when none is within BENCH_REPLY_MAX bytes. */
long bench_line(const char *buf, size_t len, size_t *linelen, char *err,
                size_t errlen);

/* Says in err that line is no reply to (op, key): "redis: unexpected
 * reply to GET L1:f1: 'xyz'". Returns -1. */
long bench_unexpected(const struct bench_dialect *d, enum bench_op op,
                      uint64_t key, const char *line, size_t len, char *err,
                      size_t errlen);

/* Copies n bytes of s into out (cap bytes) as something safe to print:
 * control bytes and what is not UTF-8 become '?' (termsafe.h), and "..."
 * ends what does not fit. Returns out. */
const char *bench_show(const char *s, size_t n, char *out, size_t cap);

/* ---- the report (bench_report.c) ---------------------------------------- */

/* Counts of one phase, summed over connections. */
struct bench_counts {
    uint64_t sent;              /* requests written */
    uint64_t replies;           /* replies parsed */
    uint64_t kind[BK_KINDS];    /* replies by kind */
    uint64_t error_replies;     /* replies phrased as errors */
};

void bench_counts_add(struct bench_counts *dst, const struct bench_counts *src);

/* What the run was asked to do, as the report repeats it. */
struct bench_config {
    const char *dialect, *host, *port;
    unsigned connections, threads, pipeline;
    unsigned mix[BENCH_OPS];    /* ADD:FIND:DELETE weights */
    uint64_t keys, preload;
    int new_keys;               /* --new-keys: ADDs insert keys from
                                 * max(keys, preload) up */
    uint64_t requests;          /* -n; 0 under --duration */
    double duration_s;          /* --duration; 0 under -n */
};

/* ssnserver's own store-lock figures over the run (STATS read before and
 * after on a connection of its own: bench_stats.c), for the ssn dialect. */
struct bench_server_lock {
    int known;                  /* both STATS were read */
    char mode[16];              /* the server's lock mode */
    int preload_included;       /* coarse and serial: read before the
                                   connections (one would wait for theirs) */
    uint64_t acquisitions, contended;   /* STATS lock_* during the run */
    uint64_t wait_us, hold_us;
    char note[128];             /* why not known; "" when not asked */
};

/* The outcome of the timed phase. */
struct bench_result {
    struct bench_counts c;
    struct hist lat;            /* ns from write to reply, every request */
    uint64_t elapsed_ns;        /* first write to last reply */
    int interrupted;            /* stopped early by SIGINT */
    int have_cpu;               /* --server-pid was given */
    long server_pid;
    uint64_t server_cpu_us;     /* its utime + stime over the phase */
    char first_error[96];       /* the first BK_ERROR reply's line, or "" */
    struct bench_server_lock lock;
};


/* A latency of ns nanoseconds with 3 significant digits, as "0.213 ms",
 * "1.07 ms", "12.6 ms", "126 ms" or, from 1000 ms up, "1.26 s". Writes
 * into buf (cap >= 16) and returns buf. */
const char *bench_fmt_latency(uint64_t ns, char *buf, size_t cap);


/* The text report, the JSON object, and the CSV header and row. */
void bench_report_text(FILE *f, const struct bench_config *cf,
                       const struct bench_result *r);
void bench_report_json(FILE *f, const struct bench_config *cf,
                       const struct bench_result *r);
void bench_report_csv(FILE *f, const struct bench_config *cf,
                      const struct bench_result *r);

/* The progress line: "\r" + requests done, requests/s, elapsed seconds,
 * cleared to the end of the line. */
void bench_progress(FILE *f, uint64_t done, uint64_t elapsed_ns);

/* utime + stime in clock ticks from one /proc/PID/stat line. Returns 0, or
 * -1 when the line is not one. */
int bench_stat_ticks(const char *line, uint64_t *ticks);

/* The CPU time process pid has used, in microseconds (from
 * /proc/PID/stat, so in clock ticks: 10 ms steps at 100 Hz). Returns 0,
 * or -errno. */
int bench_proc_cpu_us(pid_t pid, uint64_t *us);

#endif
